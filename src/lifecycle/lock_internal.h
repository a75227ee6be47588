/*
 * lock_internal.h - the open-file-description lock that device leases and
 * the machine lease share, and how their messages name a file that is not
 * a regular one (lease.c defines them). Not installed.
 */
#ifndef BENCHGATE_LOCK_INTERNAL_H
#define BENCHGATE_LOCK_INTERNAL_H

#include <stdbool.h>
#include <sys/types.h>

/* A write lock on the whole file (fcntl F_OFD_SETLK), without waiting:
 * 1 taken, 0 held by another open file, -1 failed (errno). */
int bg_ofd_lock_take(int fd);
/* A shared (read) lock on the whole file, without waiting: 1 taken, 0 a
 * write lock is held by another open file, -1 failed (errno). */
int bg_ofd_lock_share(int fd);
/* Drops either. */
void bg_ofd_lock_drop(int fd);
/* Whether another open file holds a lock on it: 1 a write lock, 2 only
 * shared ones, 0 none, -1 cannot tell. Takes nothing (F_OFD_GETLK), so
 * asking never makes a bg_ofd_lock_take fail. */
int bg_ofd_lock_test(int fd);
/* What a file that is not a regular one is, for a message: "a directory",
 * "a link", "a FIFO", "a socket", "a device", else "not a regular file". */
const char *bg_file_kind(mode_t mode);
/* Whether fd and path name the same file: path was not removed or
 * replaced since fd was opened (a link at path is not followed). */
bool bg_same_file(int fd, const char *path);

#endif
