/*
 * provenance.h - what a session was measured with, captured once per session.
 *
 * The document (a new JSON object owned by the caller) holds: git
 * {revision (full SHA or null), dirty (a tracked file changed, or a file
 * no .gitignore names is untracked), diff_sha256 (when dirty, else null:
 * of `git -c core.abbrev=40 diff HEAD --full-index --no-renames
 * --no-ext-diff --no-textconv --no-color --submodule=diff
 * --ignore-submodules=untracked`, followed, when there are untracked
 * files, by "\0untracked\0" and each one's path and identity, NUL-ended:
 * "sha256:HEX" of its content, or "size:N mtime:S.NS" for a file over
 * BG_UNTRACKED_READ_MAX bytes or once BG_UNTRACKED_READ_BUDGET bytes of
 * them were read, "link:TARGET", "directory", "other"),
 * untracked_files (their count), untracked (the first BG_UNTRACKED_LISTED
 * of their paths, from the repository's top), excluded (the paths left
 * out of all of it)},
 * benchgate_version, argv, cwd (relative
 * to the project root, or null outside it), environment {NAME: value or
 * null} (values only for the names asked for; names containing TOKEN,
 * SECRET, PASSWORD, KEY or CREDENTIAL always "<redacted>"), host {cpu_model,
 * logical_cores, cpus_allowed (the CPUs this process's affinity allows),
 * memory_total_bytes, kernel_release, os_release,
 * cpu_governor, load_average [1, 5, 15], and bg_host_conditions' fields}
 * and gpu (NVML facts with each device's settings, or null).
 * What cannot be read is null; capture itself does not fail.
 */
#ifndef BENCHGATE_PROVENANCE_H
#define BENCHGATE_PROVENANCE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "benchgate/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bg_provenance_opts {
	const char *root;             /* project root, absolute */
	char *const *argv;            /* benchgate's argv */
	int argc;
	const char *const *env_names; /* names whose values are recorded */
	size_t nenv;
	json_t *gpu;                  /* borrowed NVML description or NULL */
	/*
	 * Patterns (relative to root) left out of the dirty check and the
	 * diff: benchgate's own records and state, which sessions write, and
	 * what the runs write (declared outputs). Each is a glob as glob(3)
	 * reads it, '*' not crossing '/', given to git as ":(exclude,glob)P"
	 * (a plain path escaped with bg_provenance_glob_escape first), except
	 * BG_GIT_EXCLUDE_STATE_FOLDERS, a pathspec of its own. Recorded in
	 * git.excluded. NULL-terminated, or NULL.
	 */
	const char *const *git_exclude;
	/*
	 * When not NULL, receives every untracked path the capture covered
	 * (a new array, the caller's; NULL where git could not tell), which
	 * the provenance lists only the first BG_UNTRACKED_LISTED of: give it
	 * to bg_provenance_git as since_all at the session's end.
	 */
	json_t **untracked_all;
};

/* path as a glob that matches it alone (a '\\' before each of * ? [ \\),
 * for git_exclude; a new string, the caller's. */
char *bg_provenance_glob_escape(const char *path);

/* every folder named .benchgate in the repository, from its top */
#define BG_GIT_EXCLUDE_STATE_FOLDERS ":(top,glob)**/.benchgate/**"

json_t *bg_provenance_capture(const struct bg_provenance_opts *opts);
/*
 * The machine state that changes how fast the same code runs, read from
 * /sys and /proc under root ("" for this machine; a test passes a folder
 * laid out like one), set in host: power_source "ac" (a mains or USB
 * supply online) | "battery" (one discharging) | null; cpu_boost (cpufreq
 * boost, or not intel_pstate no_turbo) bool | null; cpu_energy_preference
 * (cpu0's energy_performance_preference) | null; smt (smt/control: "on",
 * "off", ...) | null; virtualized (the cpuinfo flag "hypervisor") bool |
 * null where the flags are not listed; cpu_quota_cores, the smallest CPU
 * limit of this process's cgroup and those above it (v2 cpu.max, v1 cfs
 * quota / period), null when none applies or none can be read.
 */
void bg_host_conditions(const char *root, json_t *host);
/*
 * Where a session's conditions differ from those of most of its baseline
 * (more than half of the sessions that record a field ran otherwise):
 * the host's (those above, cpus_allowed and cpu_governor) and each GPU's settings
 * (provenance gpu.devices[N]: persistence_mode, power_limit_watts,
 * compute_mode, ecc, applications_sm_clock_mhz, max_sm_clock_mhz, compared
 * device by device). A new array of one line each, "power_source battery
 * here, ac in 5 of the 5 baseline sessions that record it", "gpu 0
 * power_limit_watts 250 here, 300 in 5 of the 5 ..." (booleans as on/off,
 * null as "not reported"), the commonest other value named; empty when
 * none differs. A field the session lacks (stored before it was recorded)
 * is not compared; baseline sessions that lack it are not counted. prov
 * and base are provenance documents.
 */
json_t *bg_conditions_differ(const json_t *prov, const json_t *const *base, size_t n);
/*
 * What else ran while a session's runs did (its "machine_load", measured
 * by the engine: other processes' CPU and a hypervisor's steal, in cores),
 * when enough to matter: at least BG_LOAD_NOTABLE_CORES of other processes,
 * or BG_STEAL_NOTABLE_CORES of steal. Appends to notes "other processes
 * kept 1.02 of the 2 cores busy during the runs", "a hypervisor took 0.15
 * cores (steal) during the runs"; nothing for a session without the field
 * or with runs too short to tell (null).
 */
#define BG_LOAD_NOTABLE_CORES 0.25
#define BG_STEAL_NOTABLE_CORES 0.10
void bg_load_notes(const json_t *session, json_t *notes);
/*
 * Intel's per-CPU thermal throttle counters (thermal_throttle/
 * core_throttle_count + package_throttle_count under
 * /sys/devices/system/cpu/cpuN, read under root as bg_host_conditions
 * does): bg_cpu_throttle_read fills t (release it with
 * bg_cpu_throttle_release) and is false where no CPU has them (other
 * vendors, most virtual machines); bg_cpu_throttle_rose counts the CPUs
 * whose counters rose from before to after.
 */
struct bg_cpu_throttle {
	size_t n;
	long *cpu;                 /* the N of cpuN */
	unsigned long long *count; /* its two counters' sum */
};
bool bg_cpu_throttle_read(const char *root, struct bg_cpu_throttle *t);
size_t bg_cpu_throttle_rose(const struct bg_cpu_throttle *before, const struct bg_cpu_throttle *after);
void bg_cpu_throttle_release(struct bg_cpu_throttle *t);
/*
 * Whether the CPU throttled for heat during a session's runs (its
 * "cpu_throttle" {cpus, throttled}): appends "the CPU throttled for heat
 * during the runs (its thermal throttle counters rose on 3 of the 8 CPUs):
 * their times are of a slowed processor"; nothing when none rose, or the
 * machine has no such counters (null).
 */
void bg_thermal_notes(const json_t *session, json_t *notes);
/*
 * Whether NVML saw the GPU's clocks held down during a session's timed
 * runs (each run's "gpu_slowdown": a power cap, thermal slowdown, a power
 * brake): appends to notes "the GPU's clocks were slowed
 * (hw_thermal_slowdown, sw_power_cap) during 3 of the 10 timed runs: their
 * times are of a device held below its clocks"; nothing when none was,
 * or NVML did not sample the runs.
 */
void bg_slowdown_notes(const json_t *session, json_t *notes);
/*
 * Whether NVML listed other processes (another user's job) on the GPU a
 * session's timed runs used (each run's "gpu_other_processes"): appends to
 * notes "other processes used the GPU the runs used during 2 of the 3
 * timed runs (4242 (python3)): their work competed with the runs'" (at
 * most three named); nothing when none did, or NVML could not tell.
 */
void bg_gpu_shared_notes(const json_t *session, json_t *notes);
/*
 * For each file a session evicted on a network, cluster or user-space file
 * system (its "cache.remote"), appends to notes "'data.h5' is on nfs:
 * evicting it dropped this machine's copy only, and a file server's cache
 * (or the file system's daemon) may still hold it, so the cold runs may
 * not have read it from disk"; nothing for local files.
 */
void bg_cache_notes(const json_t *session, json_t *notes);
/*
 * The "git" object of the document alone, for root and exclude as above
 * (a new object owned by the caller). since (or NULL) is the object taken
 * at a session's start, since_all (or NULL) every untracked path it found
 * (bg_provenance_opts.untracked_all): when either holds every one, only
 * those files are covered now, in that order, one gone since as "missing"
 * (a file the runs wrote is their output, not the source they ran); with
 * more untracked files than since lists and no since_all, every untracked
 * file now is. all (or NULL) receives the covered paths as untracked_all.
 */
#define BG_UNTRACKED_LISTED 100
#define BG_UNTRACKED_READ_MAX (1 << 20)
#define BG_UNTRACKED_READ_BUDGET (16LL << 20)
json_t *bg_provenance_git(const char *root, const char *const *exclude, const json_t *since,
			  const json_t *since_all, json_t **all);
/*
 * Why the source revision of root cannot be read (bg_provenance_git gave
 * none): appends to why what git says when asked for HEAD (its first line,
 * such as "fatal: detected dubious ownership in repository at '...'"), or
 * that git cannot be started and why (then false). Nothing when git now
 * answers.
 */
bool bg_provenance_git_why(const char *root, struct bg_strbuf *why);
/*
 * Why bg_provenance_git (root and exclude as there) gave no dirty flag, or
 * no diff hash for a dirty tree: appends to why the command that failed
 * and what git said ("git diff HEAD: fatal: data.bin: clean filter 'lfs'
 * failed": its last fatal line, else its last error line, else its first
 * line), or that git cannot be started. Nothing when both now succeed.
 */
void bg_provenance_git_state_why(const char *root, const char *const *exclude, struct bg_strbuf *why);
/*
 * Whether the source moved between two "git" objects: another (or no)
 * revision, another dirty flag or diff SHA-256, or an after that git could
 * not fill (a null dirty flag, or a dirty tree without its diff hash: it
 * cannot be told unchanged). False when before has no revision (nothing
 * was claimed). On true, appends why to why.
 */
bool bg_provenance_git_changed(const json_t *before, const json_t *after, struct bg_strbuf *why);
/*
 * Appends to out what a "git" object says of untracked files, for a
 * message: "2 untracked files: 'new.py', 'notes.txt'" (at most three
 * named, then ", ..."); nothing when it records none (or a session stored
 * before they were recorded).
 */
void bg_provenance_untracked_text(const json_t *git, struct bg_strbuf *out);
/* True when an environment variable (or option, header) name looks secret:
 * it holds TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE, KEY, CREDENTIAL,
 * AUTHORIZATION or COOKIE, or AUTH, PASS or PW as a whole part (between
 * bytes that are not letters or digits: "--auth", not "AUTHOR"), any case. */
bool bg_provenance_secret_name(const char *name);

/*
 * What benchgate writes holds no absolute path under a home directory and no
 * secret (DESIGN.md, Conventions). bg_provenance_scrub_text appends to out
 * (caller-owned) the text s with:
 *  - home (normally $HOME; NULL, "" or "/" for none) written "~" where it
 *    starts a path: "/home/ann/x" -> "~/x";
 *  - every other absolute path holding /home/NAME or /users/NAME (any
 *    case, as `benchgate check` looks for them) written "~NAME" from the
 *    path's start through NAME: "/net/home/bob/x" -> "~bob/x" (a relative
 *    "out/home/x" is left alone);
 *  - the value of an option or assignment whose name looks secret
 *    (bg_provenance_secret_name) written "<redacted>": "--token=abc",
 *    "API_KEY=abc", and the word after "--password" (unless it starts with
 *    '-'), a quoted value whole;
 *  - inside a word: a URL's password ("://user:<redacted>@host") or
 *    password-less user info ("://<redacted>@host"), a query parameter's
 *    value whose name looks secret ("?token=<redacted>"), the value of a
 *    header whose name looks secret ("Cookie: <redacted>", to the quote
 *    that closes it or the end of s), the word after "Bearer" or "Basic"
 *    ("Bearer <redacted>"); a quoted value after a quoted name that looks
 *    secret, as JSON or a Python dict writes it ("\"token\": \"<redacted>\"").
 * *pending (may be NULL) carries "the next word is a secret value" from one
 * string to the next, as between the words of an argv array: a string that
 * starts pending is redacted whole (unless it starts with '-').
 * The result scrubs to itself: a home holding '<', '>', '=', ':' or white
 * space (which a redaction could write, or write after) is not looked for.
 * bg_provenance_scrub applies this to every string of doc, in place (the
 * strings of one array share the pending state; home is looked for as
 * bg_json_text writes it, as the document's strings are). Neither fails.
 */
void bg_provenance_scrub_text(const char *s, const char *home, bool *pending, struct bg_strbuf *out);
void bg_provenance_scrub(json_t *doc, const char *home);

#ifdef __cplusplus
}
#endif

#endif
