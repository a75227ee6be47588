/*
 * config.h - benchgate.json: the project root, paths, vocabulary and store.
 *
 * bg_config_load finds the project root (DIR from -C, else the nearest
 * folder upwards from the working directory holding benchgate.json, else
 * the working directory), reads benchgate.json when present and fills every
 * field, defaults included. All strings are owned by the config and freed
 * by bg_config_release. Paths are relative to root unless absolute.
 */
#ifndef BENCHGATE_CONFIG_H
#define BENCHGATE_CONFIG_H

#include "benchgate/value.h"
#include <stdbool.h>
#include <stddef.h>

#include "benchgate/status.h"
#include "benchgate/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bg_computer {
	char *label;
	char *slug;
};

/*
 * device_contains: a substring of the device (CPU model or GPU name);
 * computer_equals_ignoring_case: the recorded computer label or host name;
 * machine_in: a Linux host whose architecture (uname -m) is listed
 * (pattern holds the names as " a b "; used for the machine benchgate runs on).
 */
enum bg_rule_kind { BG_RULE_DEVICE_CONTAINS, BG_RULE_COMPUTER_EQUALS_IGNORING_CASE, BG_RULE_MACHINE_IN };
struct bg_computer_rule {
	enum bg_rule_kind kind;
	char *pattern;
	char *computer;
};

struct bg_config {
	char *root;        /* absolute project root */
	char *config_path; /* benchgate.json used, relative to root when inside; NULL when none */
	char *registry_path;
	char *registry_protocol; /* NULL: any accepted */
	char *generated_path;
	char *profile_path;
	char *profile_protocol; /* NULL: any accepted */
	char *parity_matrix;
	char *experiments;
	char *runs_index;
	struct bg_computer *computers;
	size_t ncomputers;
	struct bg_computer_rule *rules;
	size_t nrules;
	struct bg_value *platform_labels; /* object, or NULL when none (in arena) */
	struct bg_value *module_labels;   /* object, or NULL when none (in arena) */
	char *store;             /* "sqlite:PATH" or "postgresql://..." */
	struct bg_value *raw;             /* the whole file, or NULL without one (in arena) */
	struct bg_arena *arena;           /* owns raw and the label maps; NULL without a file */
};

/*
 * chdir_root: -C DIR or NULL. config_file: --config FILE or NULL.
 * Errors: BG_EIO (unreadable), BG_ECHECK (malformed: "benchgate.json:L:C: ..."
 * or "benchgate.json: 'registry.path' must be a string"). Whatever it
 * returns, the caller releases *cfg with bg_config_release.
 */
int bg_config_load(struct bg_config *cfg, const char *chdir_root, const char *config_file,
		   struct bg_ctx *ctx);
void bg_config_release(struct bg_config *cfg);

/* root/rel into out (rel kept when absolute). */
void bg_config_path(const struct bg_config *cfg, struct bg_strbuf *out, const char *rel);
/*
 * The files benchgate.json names, for bg_config_file_role: a mask of
 * these says which of them to compare with.
 */
enum {
	BG_FILE_CONFIG = 1,      /* benchgate.json */
	BG_FILE_REGISTRY = 2,    /* registry.path */
	BG_FILE_PROFILE = 4,     /* profile.path */
	BG_FILE_PARITY = 8,      /* profile.parity_matrix */
	BG_FILE_RUNS_INDEX = 16, /* profile.runs_index */
	BG_FILE_GENERATED = 32,  /* registry.generated */
	BG_FILE_STORE = 64,      /* a sqlite store, its -wal, -shm or -journal */
	BG_FILE_ALL = 127
};
/*
 * Which of the files benchgate.json names (those in the mask roles) is the
 * file at (as stat gives it: links followed, since the atomic writer writes
 * where a link leads), compared by device and inode: "benchgate.json",
 * "the registry", "the profile matrix", "the parity matrix", "the
 * experiments' RUNS.md", "the registry's generated document", "the store";
 * NULL when none (a file that is not there is none).
 */
struct stat;
const char *bg_config_file_role(const struct bg_config *cfg, const struct stat *at, unsigned roles);
/*
 * The same by name: which of those files (benchgate.json also where there
 * is none yet, since it is read once made) name is, there or not yet, as
 * bg_path_named_later names a file (its folder's links resolved; name
 * itself given so).
 */
const char *bg_config_file_named(const struct bg_config *cfg, const char *name, unsigned roles);
/*
 * What benchgate keeps in its state folder (the sqlite store's folder, else
 * .benchgate/) besides the store, in one table for every check of it: the
 * config (no file it writes may be one of them, nor the store), the dirty
 * check (git leaves them out) and the verbs that write a file of their own
 * (cli/inputs.c). name: the file's or folder's name; what: the phrase a
 * message names it by; folder: whether what lies in it counts.
 */
struct bg_state_file {
	const char *name;
	const char *what;
	bool folder;
};
#define BG_STATE_FILES 6
extern const struct bg_state_file bg_state_files[BG_STATE_FILES];
/* path as shown to a person: relative to the root when inside it (a pointer
 * into path), else path itself. */
const char *bg_config_relative(const struct bg_config *cfg, const char *path);
/*
 * path (as benchgate.json gives it) relative to the project's folder and
 * inside it, as a git pathspec from there may name it (an absolute one
 * inside the project as the relative path it names; a pointer into path),
 * or NULL for one that may lie outside (through "..", or elsewhere), where
 * git refuses a pathspec.
 */
const char *bg_config_in_project(const struct bg_config *cfg, const char *path);
/* True when computers is empty or label is one of them. */
bool bg_config_computer_known(const struct bg_config *cfg, const char *label);
/* The slug of a computer label, or NULL. */
const char *bg_config_computer_slug(const struct bg_config *cfg, const char *label);
/* The rule a computer's slug keeps, since it names the device's lease files
 * (STATE/leases/SLUG.lock): 1 to BG_SLUG_MAX letters, digits, '.', '-' and
 * '_', not starting with '.'. */
#define BG_SLUG_MAX 128
#define BG_SLUG_RULE "only letters, digits, '.', '-' and '_' (1 to 128 of them, not starting with '.')"
bool bg_config_slug_valid(const char *slug);
/*
 * The reference's _computer_label: current when it is a known label, else
 * the first rule that matches (device_contains against device,
 * computer_equals_ignoring_case against current), else current.
 * device and current are never NULL ("" for none, as the reference's str()).
 * Returns a pointer into cfg or to current.
 */
const char *bg_config_computer_label(const struct bg_config *cfg, const char *device,
				     const char *current);
/* Label of a platform/module key from the config maps, or NULL. */
const char *bg_config_platform_label(const struct bg_config *cfg, const char *key);
const char *bg_config_module_label(const struct bg_config *cfg, const char *key);

#ifdef __cplusplus
}
#endif

#endif
