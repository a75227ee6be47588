/*
 * stops.h - holding back the signals that end a program politely across
 * writes that must happen together (promote's three files, an experiment's
 * manifest and RUNS.md row). Internal to the library: sigset_t is POSIX,
 * and the public headers are plain C11.
 */
#ifndef BENCHGATE_CORE_STOPS_H
#define BENCHGATE_CORE_STOPS_H

#include <signal.h>

/*
 * Holds back SIGINT, SIGTERM, SIGHUP and SIGQUIT in the calling thread,
 * saving the previous mask in *old; bg_stops_release restores it, and what
 * arrived meanwhile is delivered then.
 */
void bg_stops_hold(sigset_t *old);
void bg_stops_release(const sigset_t *old);

#endif
