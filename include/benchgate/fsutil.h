/*
 * fsutil.h - whole-file reads and views, atomic whole-file writes,
 * directories, paths.
 *
 * Writes that others read go through bg_file_write_atomic: a temporary file
 * beside the target, fsync, rename, fsync of the directory; a killed process
 * leaves either the old file or the new one, never half of either.
 * Messages name the path as given in display (or path when display is NULL).
 */
#ifndef BENCHGATE_FSUTIL_H
#define BENCHGATE_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "benchgate/status.h"
#include "benchgate/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Appends the file's bytes to out. BG_EIO "PATH: cannot read: REASON". */
int bg_file_read(const char *path, const char *display, struct bg_strbuf *out, struct bg_ctx *ctx);
/*
 * A file's bytes, for reading once: text[0..len), with text[len] == '\0'.
 * A big regular file is mapped read-only (the page cache's pages, not a
 * copy); others (small files, pipes, /proc) are read into view->sb. Errors
 * as bg_file_read. Release with bg_file_view_release. A mapped file that
 * another process truncates while it is read raises SIGBUS at the access
 * (the program reports that; see src/cli/main.c).
 */
struct bg_file_view {
	const char *text;
	size_t len;
	void *map;      /* internal: the mapping, or NULL */
	size_t map_len; /* internal */
	struct bg_strbuf sb; /* internal: the bytes when read */
};
int bg_file_view_open(struct bg_file_view *view, const char *path, const char *display,
		      struct bg_ctx *ctx);
void bg_file_view_release(struct bg_file_view *view);
/*
 * Lets bg_file_view_release leave mapped views, up to budget bytes of them
 * in all, for the system to take back at exit instead of unmapping each
 * (0, the default: every view is unmapped when released). For a short-lived
 * program: unmapping costs by the page, more than the exit does for the
 * same pages (docs/performance.md). Process-wide; views past the budget are
 * unmapped as before. A page still mapped is one no eviction can drop
 * (posix_fadvise POSIX_FADV_DONTNEED): a program that makes files cold
 * (measure's --evict) must leave the default.
 */
void bg_file_view_leave_mapped(size_t budget);
/* Writes path whole or not at all (below). On BG_EIO errno is the failed
 * call's (ENOSPC: the file system is full), for a caller's advice. */
int bg_file_write_atomic(const char *path, const char *display, const char *data, size_t len,
			 struct bg_ctx *ctx);
/*
 * bg_file_write_atomic in steps, for text produced piece by piece: open
 * creates the temporary file beside path, write appends (a failure is
 * remembered and reported by commit), commit fsyncs and renames it over
 * path (BG_EIO "DISPLAY: cannot write: ..." or "cannot replace: ..."; the
 * temporary file is removed), abort removes it. After open succeeds,
 * exactly one of commit and abort must follow. path and display are
 * borrowed until then. A path that is a symbolic link stays one: the file
 * it leads to is replaced, the temporary file made beside that file (a
 * link to nothing or one that cannot be followed, such as a loop, is
 * BG_EIO "DISPLAY: cannot write: it is a symbolic link ..."). The
 * temporary file is created new (never through a
 * link at its name) with the replaced file's permissions, and SIGINT,
 * SIGTERM, SIGHUP and SIGQUIT are held in the calling thread from open to
 * commit or abort, so that they cannot leave it behind. Where the file
 * system has unnamed files (O_TMPFILE: ext4, xfs, btrfs, tmpfs) and /proc
 * is mounted, the temporary file has no name until commit names it
 * (PATH.tmp.PID) just before the rename, so that even SIGKILL during the
 * writes leaves nothing beside path; elsewhere it is PATH.tmp.PID from
 * open, and SIGKILL leaves it (bg_atomic_temp_pid tells it apart).
 */
struct bg_atomic_file {
	int fd;
	int err;              /* the first write's errno, or 0 */
	bool unnamed;         /* fd has no name yet (O_TMPFILE): named tmp only at commit */
	const char *path, *display;
	struct bg_strbuf tmp;    /* the temporary file's path */
	struct bg_strbuf target; /* the file replaced: path, or where its link leads */
};
int bg_atomic_file_open(struct bg_atomic_file *f, const char *path, const char *display,
			struct bg_ctx *ctx);
void bg_atomic_file_write(struct bg_atomic_file *f, const char *data, size_t len);
int bg_atomic_file_commit(struct bg_atomic_file *f, struct bg_ctx *ctx);
void bg_atomic_file_abort(struct bg_atomic_file *f);
/*
 * The file the atomic writer replaces for path, appended to *target: path
 * itself, or, for a symbolic link, the file it leads to (links resolved),
 * so that a check made before long work looks where the write will be.
 * BG_EIO as bg_atomic_file_open gives it for a link to nothing or one that
 * cannot be followed.
 */
int bg_atomic_target(const char *path, const char *display, struct bg_strbuf *target, struct bg_ctx *ctx);
/* The writer's pid when name (a file name, no folder) is the temporary
 * file the atomic writer makes for the file named base (BASE.tmp.PID, the
 * PID in decimal as it writes it, without a leading zero, so that one left
 * by a killed writer can be told apart and removed); -1 for any other name. */
long bg_atomic_temp_pid(const char *name, const char *base);
/*
 * The fields of /proc/PID/stat from the third (the state) on, into buf of
 * size bytes, or NULL when /proc cannot tell. They follow the last ')':
 * the command name may hold spaces and parentheses.
 */
const char *bg_proc_stat_tail(long pid, char *buf, size_t size);
/* Whether a process with this pid exists (kill 0; one of another user
 * too) and has not exited: one that /proc says is a zombie (Z) or being
 * reaped (X), which runs nothing and holds no lock, is not alive. */
bool bg_pid_alive(long pid);
/* Removes from folder dir the temporary files (bg_atomic_temp_pid) of each
 * of bases (NULL-terminated) that writers no longer running left (a SIGKILL
 * between their write and rename): regular files only, never this
 * process's; the folder is read once. Best effort: nothing is said of a
 * folder that cannot be read. bg_atomic_file_open does it for the file it
 * replaces. */
void bg_atomic_remove_dead(const char *dir, const char *const *bases);
/* mkdir -p; BG_EIO on failure. */
int bg_mkdirs(const char *path, struct bg_ctx *ctx);
/* The same; *made receives the folders it created (a list only
 * bg_rmdirs_made reads; the caller frees it), or NULL when it created
 * none, so that bg_rmdirs_made can undo, also along a path with ".." in
 * it ("new/../keep" made new: keep, there before, is never removed); on
 * failure the folders it made are removed again and *made is NULL.
 * display (NULL: path) is path as messages name it, such as
 * bg_config_relative's: the folder that could not be made is named as
 * display names it ("site/x: cannot create directory: Not a directory"),
 * one above where display starts by its whole path. On failure errno is
 * the reason (ENOTDIR when something else than a folder holds a name,
 * EACCES or EROFS when this user may not make it there), so that a caller
 * can say what to do. */
int bg_mkdirs_made(const char *path, const char *display, char **made, struct bg_ctx *ctx);
/* Removes the folders bg_mkdirs_made made (made), the last made first,
 * each while it is empty; never another. NULL made removes nothing. */
void bg_rmdirs_made(const char *made);
/*
 * Waits for an exclusive lock (flock) on the file lock_path (created when
 * absent, and left there for the next holder), so that read-modify-write
 * updates by several processes are serialised. The kernel drops the lock
 * when its holder dies. *fd receives the lock, released with bg_unlock.
 * BG_EIO "DISPLAY: cannot lock: REASON" (display names what is protected),
 * also after BG_LOCK_WAIT_MS of another holder (one stopped or hung, named
 * with fuser), or at once when SIGINT, SIGTERM, SIGHUP or SIGQUIT waits
 * held back ("DISPLAY: interrupted while waiting for its lock ...").
 */
#define BG_LOCK_WAIT_MS 60000L
int bg_lock_file(const char *lock_path, const char *display, int *fd, struct bg_ctx *ctx);
void bg_unlock(int fd);
bool bg_is_file(const char *path);
bool bg_is_dir(const char *path);
/*
 * What keeps path from being read as a regular file: NULL when it is one
 * (through links), "" when nothing is there (no such name, or a parent that
 * is not a folder), else the phrase for "DISPLAY: cannot read: PHRASE"
 * ("is a directory", "a link to nothing", "not a regular file", or the
 * system's reason). For a file that must not be skipped as absent when it
 * is there but is no file, and never waited on (a FIFO is not opened).
 */
const char *bg_file_problem(const char *path);
/*
 * What to do when a file or pipe could not be opened for errno e, when the
 * reason is a limit and not the file: EMFILE ("benchgate has as many files
 * open as its limit allows; raise the limit (ulimit -n) and run it again")
 * and ENFILE (the system's limit); NULL for any other errno. A static text.
 */
const char *bg_open_files_advice(int e);
/*
 * Every regular file under the folder path (a link to a file counting as
 * that file), as paths relative to it sorted by their bytes: *rel a new
 * array of *n new strings, for bg_tree_files_free. BG_EIO "DISPLAY/REL:
 * cannot read: REASON" (display names path) for a folder that cannot be
 * listed, a link to a folder or to nothing, what is neither a file nor a
 * folder, a name with a line break, or folders nested more than 128 deep;
 * *rel is then NULL.
 */
int bg_tree_files(const char *path, const char *display, char ***rel, size_t *n, struct bg_ctx *ctx);
void bg_tree_files_free(char **rel, size_t n);
/* Whether path is relative, not empty, and has no ".." component: it
 * names a place inside the folder it is taken from. */
bool bg_path_stays_below(const char *path);
/* Joins dir and rel into out (rel returned as is when absolute). */
void bg_path_join(struct bg_strbuf *out, const char *dir, const char *rel);
/*
 * Appends the components of path to out, an absolute path without a
 * trailing '/' ("" for the root), as "/NAME" each, applying "." and ".."
 * by name (".." drops out's last component) and skipping empty ones, so
 * that "a//./b/../c" adds "/a/c". Touches no file: links are not followed.
 */
void bg_path_add_names(struct bg_strbuf *out, const char *path);
/*
 * The absolute path that path (relative: to the working directory) will
 * name once the folders it goes through are made, name by name as the
 * kernel will read it then: a name that is there is resolved (links
 * followed, and ".." after it is its real parent), one not there yet is a
 * folder benchgate makes, holding no link, so ".." after it goes back
 * ("new/../benchmarks/x.json" is benchmarks/x.json, and "new/../L/.." is
 * the folder link L leads into). A link to nothing is kept as its name.
 * NULL when the working directory cannot be resolved. The caller frees it.
 */
char *bg_path_named_later(const char *path);

#ifdef __cplusplus
}
#endif

#endif
