/*
 * config.c - benchgate.json loading and the vocabulary lookups (config.h).
 */
#include "benchgate/config.h"
#include "benchgate/fsutil.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONFIG_NAME "benchgate.json"

static char *absolute_dir(const char *dir, struct bg_ctx *ctx)
{
	char *abs = realpath(dir, NULL);

	if (!abs) {
		bg_error(ctx, BG_EIO, "%s: cannot open project directory: %s; give -C the project's folder", dir,
			 strerror(errno));
	} else if (!bg_is_dir(abs)) {
		bg_error(ctx, BG_EIO, "%s: cannot open project directory: not a directory; give -C the project's folder",
			 dir);
		free(abs);
		abs = NULL;
	}
	return abs;
}

/*
 * Whether path names anything at all (a file, a folder, a FIFO, a link to
 * nothing): a benchgate.json that is there but cannot be read is an error
 * when it is read, never taken for no benchgate.json, which would leave
 * every default in force unseen.
 */
static bool config_present(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* Walks up from start looking for benchgate.json; returns the folder or NULL. */
static char *find_root(const char *start)
{
	char *dir = bg_xstrdup(start);

	for (;;) {
		struct bg_strbuf p = BG_STRBUF_INIT;
		char *slash;

		bg_path_join(&p, dir, CONFIG_NAME);
		if (config_present(p.buf)) {
			bg_strbuf_release(&p);
			return dir;
		}
		bg_strbuf_release(&p);
		slash = strrchr(dir, '/');
		if (!slash || (slash == dir && dir[1] == '\0')) { /* (the root itself looked at) */
			free(dir);
			return NULL;
		}
		if (slash == dir) /* "/sub": the root "/" is looked at too */
			slash++;
		*slash = '\0';
	}
}

/* Said after "must be ..." of a field written null: a null is no default
 * (a typo never leaves a default in force unseen), leaving it out is. */
#define NULL_HINT(v) (bg_value_is_null(v) ? ", not null (leave the field out for its default)" : "")

static int get_string(const struct bg_value *obj, const char *section, const char *key, const char *def,
		      bool nullable, char **out, const char *display, struct bg_ctx *ctx)
{
	struct bg_value *v = obj ? bg_value_get(obj, key) : NULL;

	if (!v) {
		*out = def ? bg_xstrdup(def) : NULL;
		return BG_OK;
	}
	if (bg_value_is_null(v) && nullable) {
		*out = NULL;
		return BG_OK;
	}
	if (!bg_value_is_string(v) || bg_value_len(v) == 0)
		return bg_error(ctx, BG_ECHECK, "%s: '%s%s%s' must be a non-empty string%s%s", display,
				section ? section : "", section ? "." : "", key,
				nullable ? " or null" : "", NULL_HINT(v));
	*out = bg_xstrdup(bg_value_str(v));
	return BG_OK;
}

/*
 * A path of benchgate.json that names a file (not the experiments folder):
 * with a trailing '/' it can name only a folder, and render or the store
 * would make one where the file should be, then fail saying something else.
 * field is the field's name in the message, value its whole text.
 */
static int file_path_check(const char *path, const char *field, const char *value, const char *display,
			   struct bg_ctx *ctx)
{
	size_t n = strlen(path);
	const char *last = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	if (n && path[n - 1] == '/')
		return bg_error(ctx, BG_ECHECK,
				"%s: '%s' must name a file, not '%s' (a trailing '/' names a folder); remove the '/'",
				display, field, value);
	if (strcmp(last, ".") == 0 || strcmp(last, "..") == 0)
		return bg_error(ctx, BG_ECHECK, "%s: '%s' must name a file, not '%s' (a folder); name a file in it",
				display, field, value);
	return BG_OK;
}

static int get_file_path(const struct bg_value *obj, const char *section, const char *key, const char *def,
			 char **out, const char *display, struct bg_ctx *ctx)
{
	char field[64];
	int rc = get_string(obj, section, key, def, false, out, display, ctx);

	snprintf(field, sizeof(field), "%s.%s", section, key);
	return rc ? rc : file_path_check(*out, field, *out, display, ctx);
}

static int get_section(const struct bg_value *raw, const char *name, struct bg_value **out, const char *display,
		       struct bg_ctx *ctx)
{
	struct bg_value *v = bg_value_get(raw, name);

	*out = NULL;
	if (!v)
		return BG_OK;
	if (!bg_value_is_object(v))
		return bg_error(ctx, BG_ECHECK, "%s: '%s' must be an object%s", display, name, NULL_HINT(v));
	*out = v;
	return BG_OK;
}

static int load_labels(const struct bg_value *raw, const char *name, struct bg_value **out, const char *display,
		       struct bg_ctx *ctx)
{
	struct bg_value *v = bg_value_get(raw, name);
	const char *k;
	struct bg_value *x;

	if (!v) {
		*out = NULL; /* no labels */
		return BG_OK;
	}
	if (!bg_value_is_object(v))
		return bg_error(ctx, BG_ECHECK, "%s: '%s' must be an object of strings%s", display, name,
				NULL_HINT(v));
	BG_VALUE_OBJECT_FOREACH(v, k, x) {
		if (!bg_value_is_string(x))
			return bg_error(ctx, BG_ECHECK, "%s: '%s.%s' must be a string", display, name, k);
	}
	*out = v;
	return BG_OK;
}

/*
 * key_fields: an object whose every value names a context field or is a
 * list of them (docs/decisions.md), checked here so that a wrong type stops
 * every verb at once rather than a run after its measurement.
 */
static int check_key_fields(const struct bg_value *raw, const char *display, struct bg_ctx *ctx)
{
	struct bg_value *v = bg_value_get(raw, "key_fields"), *x, *s;
	const char *k;
	size_t i;

	if (!v)
		return BG_OK;
	if (!bg_value_is_object(v))
		return bg_error(ctx, BG_ECHECK, "%s: 'key_fields' must be an object%s", display, NULL_HINT(v));
	BG_VALUE_OBJECT_FOREACH(v, k, x) {
		/* an empty name names no context field: never present, it
		 * would leave the key field resolved as if it were not mapped */
		bool ok;

		if (!*k) /* no comparison key field is named "" */
			return bg_error(ctx, BG_ECHECK, "%s: 'key_fields' maps an empty name: each name is a field "
					"of the comparison key", display);
		ok = (bg_value_is_string(x) && bg_value_len(x)) || (bg_value_is_array(x) && bg_value_size(x) > 0);
		BG_VALUE_ARRAY_FOREACH(bg_value_is_array(x) ? x : NULL, i, s) {
			if (!bg_value_is_string(s) || !bg_value_len(s))
				ok = false;
		}
		if (!ok)
			return bg_error(ctx, BG_ECHECK,
					"%s: 'key_fields.%s' must name a context field or be a list of them", display, k);
	}
	return BG_OK;
}

/*
 * Every member of obj is one of names: a typo ("stor", "computer_rule")
 * would otherwise leave a default in force without a word. where names obj
 * in the message ("" for the top level).
 */
static int known_fields(const struct bg_value *obj, const char *where, const char *const *names,
			const char *display, struct bg_ctx *ctx)
{
	const char *k;
	struct bg_value *x;

	if (!bg_value_is_object(obj))
		return BG_OK;
	BG_VALUE_OBJECT_FOREACH(obj, k, x) {
		struct bg_strbuf list = BG_STRBUF_INIT;
		size_t i;
		int rc;

		(void)x;
		for (i = 0; names[i] && strcmp(names[i], k) != 0; i++)
			;
		if (names[i])
			continue;
		for (i = 0; names[i]; i++)
			bg_strbuf_addf(&list, "%s%s", i ? ", " : "", names[i]);
		rc = bg_error(ctx, BG_ECHECK, "%s: unknown field '%s%s%s' (the fields%s%s are: %s)", display, where,
			      *where ? "." : "", k, *where ? " of " : "", where, list.buf);
		bg_strbuf_release(&list);
		return rc;
	}
	return BG_OK;
}

static const char *const top_fields[] = {
	"schema_version", "registry", "profile", "store", "computers", "computer_rules",
	"platform_labels", "module_labels", "key_fields", NULL,
};
static const char *const registry_fields[] = {"path", "protocol_version", "generated", NULL};
static const char *const profile_fields[] = {
	"path", "protocol_version", "parity_matrix", "experiments", "runs_index", NULL,
};
static const char *const computer_fields[] = {"label", "slug", NULL};
static const char *const rule_fields[] = {
	"computer", "device_contains", "computer_equals_ignoring_case", "machine_in", NULL,
};

/* known_fields of list[i] when it is an object (its shape is checked after). */
static int known_item_fields(const struct bg_value *item, const char *list, size_t i, const char *const *fields,
			     const char *display, struct bg_ctx *ctx)
{
	char where[64];

	if (!bg_value_is_object(item))
		return BG_OK;
	snprintf(where, sizeof(where), "%s[%zu]", list, i);
	return known_fields(item, where, fields, display, ctx);
}

static int load_computers(struct bg_config *cfg, const char *display, struct bg_ctx *ctx)
{
	struct bg_value *v = bg_value_get(cfg->raw, "computers");
	size_t i;
	struct bg_value *item;

	if (!v)
		return BG_OK;
	if (!bg_value_is_array(v))
		return bg_error(ctx, BG_ECHECK, "%s: 'computers' must be a list%s", display, NULL_HINT(v));
	cfg->computers = bg_xcalloc(bg_value_size(v) + 1, sizeof(*cfg->computers));
	BG_VALUE_ARRAY_FOREACH(v, i, item) {
		struct bg_value *label = bg_value_get(item, "label"), *slug = bg_value_get(item, "slug");
		int rc;

		/* a misspelt field first: named, rather than the shape it leaves */
		if ((rc = known_item_fields(item, "computers", i, computer_fields, display, ctx)))
			return rc;
		if (!bg_value_is_object(item) || !bg_value_is_string(label) || !bg_value_is_string(slug) ||
		    !bg_value_len(label) || !bg_value_len(slug))
			return bg_error(ctx, BG_ECHECK,
					"%s: computers[%zu] must be an object with nonempty string 'label' and 'slug'",
					display, i);
		/* the slug names the device's lease files: refused here, not
		 * when a run first leases the device */
		if (!bg_config_slug_valid(bg_value_str(slug)))
			return bg_error(ctx, BG_ECHECK, "%s: computers[%zu].slug '%s' cannot name a device lease; use %s",
					display, i, bg_value_str(slug), BG_SLUG_RULE);
		/* a label or slug given twice: the first would silently win */
		for (size_t j = 0; j < i; j++) {
			if (strcmp(cfg->computers[j].label, bg_value_str(label)) == 0)
				return bg_error(ctx, BG_ECHECK, "%s: computers[%zu]: label '%s' is also computers[%zu]'s",
						display, i, bg_value_str(label), j);
			/* slugs name lease files: "M5" and "m5" are one file where
			 * file names ignore case (macOS, Windows) */
			if (strcmp(cfg->computers[j].slug, bg_value_str(slug)) == 0)
				return bg_error(ctx, BG_ECHECK, "%s: computers[%zu]: slug '%s' is also computers[%zu]'s",
						display, i, bg_value_str(slug), j);
			if (strcasecmp(cfg->computers[j].slug, bg_value_str(slug)) == 0)
				return bg_error(ctx, BG_ECHECK,
						"%s: computers[%zu]: slug '%s' differs from computers[%zu]'s '%s' only in case: "
						"both would name one lease file where file names ignore case (macOS); "
						"make them differ in more than case",
						display, i, bg_value_str(slug), j, cfg->computers[j].slug);
		}
		cfg->computers[i].label = bg_xstrdup(bg_value_str(label));
		cfg->computers[i].slug = bg_xstrdup(bg_value_str(slug));
		cfg->ncomputers = i + 1;
	}
	return BG_OK;
}

/* A machine name as uname -m prints it: 1 to 64 bytes, no space or control. */
static bool machine_name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 64)
		return false;
	for (const char *p = name; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return false;
	return true;
}

static int load_rules(struct bg_config *cfg, const char *display, struct bg_ctx *ctx)
{
	struct bg_value *v = bg_value_get(cfg->raw, "computer_rules");
	size_t i;
	struct bg_value *item;

	if (!v)
		return BG_OK;
	if (!bg_value_is_array(v))
		return bg_error(ctx, BG_ECHECK, "%s: 'computer_rules' must be a list%s", display, NULL_HINT(v));
	cfg->rules = bg_xcalloc(bg_value_size(v) + 1, sizeof(*cfg->rules));
	BG_VALUE_ARRAY_FOREACH(v, i, item) {
		struct bg_value *contains = bg_value_get(item, "device_contains");
		struct bg_value *equals = bg_value_get(item, "computer_equals_ignoring_case");
		struct bg_value *machines = bg_value_get(item, "machine_in");
		struct bg_value *computer = bg_value_get(item, "computer");
		struct bg_computer_rule *r = &cfg->rules[i];
		int kinds = !!contains + !!equals + !!machines, rc;

		/* a misspelt field first: named, rather than the shape it leaves */
		if ((rc = known_item_fields(item, "computer_rules", i, rule_fields, display, ctx)))
			return rc;
		if (!bg_value_is_object(item) || !bg_value_is_string(computer) || kinds != 1 ||
		    (contains && !bg_value_is_string(contains)) || (equals && !bg_value_is_string(equals)) ||
		    (machines && !bg_value_is_array(machines)))
			return bg_error(ctx, BG_ECHECK,
					"%s: computer_rules[%zu] needs a string 'computer' and exactly one "
					"of 'device_contains', 'computer_equals_ignoring_case' or 'machine_in' (a list)",
					display, i);
		/* an empty pattern would claim every device or name; an empty
		 * machine list, no machine at all */
		if ((contains && !bg_value_len(contains)) || (equals && !bg_value_len(equals)) ||
		    (machines && !bg_value_size(machines)))
			return bg_error(ctx, BG_ECHECK, "%s: computer_rules[%zu]: '%s' must not be empty", display, i,
					contains ? "device_contains"
					: equals ? "computer_equals_ignoring_case"
						 : "machine_in");
		/* nor may the label it gives: a computer label is never empty */
		if (!bg_value_len(computer))
			return bg_error(ctx, BG_ECHECK, "%s: computer_rules[%zu]: 'computer' must not be empty", display,
					i);
		if (machines) {
			struct bg_strbuf words = BG_STRBUF_INIT;
			size_t k;
			struct bg_value *m;

			bg_strbuf_addch(&words, ' ');
			BG_VALUE_ARRAY_FOREACH(machines, k, m) {
				if (!bg_value_is_string(m)) {
					bg_strbuf_release(&words);
					return bg_error(ctx, BG_ECHECK,
							"%s: computer_rules[%zu].machine_in must list machine names such as \"x86_64\"",
							display, i);
				}
				/* the names are kept as " a b ": one with a space
				 * inside ("x86_64 aarch64") would match each word */
				if (!machine_name_valid(bg_value_str(m))) {
					bg_strbuf_release(&words);
					return bg_error(ctx, BG_ECHECK,
							"%s: computer_rules[%zu].machine_in[%zu] '%s' is not a machine name; "
							"give one name as 'uname -m' prints it (such as \"x86_64\") per item",
							display, i, k, bg_value_str(m));
				}
				bg_strbuf_addf(&words, "%s ", bg_value_str(m));
			}
			r->kind = BG_RULE_MACHINE_IN;
			r->pattern = bg_strbuf_detach(&words, NULL);
			r->computer = bg_xstrdup(bg_value_str(computer));
			cfg->nrules = i + 1;
			continue;
		}
		r->kind = contains ? BG_RULE_DEVICE_CONTAINS : BG_RULE_COMPUTER_EQUALS_IGNORING_CASE;
		r->pattern = bg_xstrdup(bg_value_str(contains ? contains : equals));
		r->computer = bg_xstrdup(bg_value_str(computer));
		cfg->nrules = i + 1;
	}
	return BG_OK;
}

static bool equals_ignoring_case(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return false;
	return *a == *b;
}

/* The first word of machine list a (" a b ") that list b also holds, or NULL
 * (into a: the word runs to the next space). */
static const char *machine_shared(const char *a, const char *b)
{
	for (const char *w = a + 1; *w; w = strchr(w, ' ') + 1) {
		size_t n = (size_t)(strchr(w, ' ') - w);
		char word[80];

		snprintf(word, sizeof(word), " %.*s ", (int)n, w);
		if (strstr(b, word))
			return w;
	}
	return NULL;
}

/*
 * Rules apply in order: a later rule that an earlier one of the same kind
 * always claims first, for another computer, can never apply (a
 * device_contains "Apple M5" before "Apple M5 Max"), so its computer is
 * never recognised; the order, not the rule, is what is wrong.
 */
static int rules_reachable(const struct bg_config *cfg, const char *display, struct bg_ctx *ctx)
{
	for (size_t j = 0; j < cfg->nrules; j++)
		for (size_t i = 0; i < j; i++) {
			const struct bg_computer_rule *a = &cfg->rules[i], *b = &cfg->rules[j];
			const char *m = NULL;
			bool shadowed;

			if (a->kind != b->kind || strcmp(a->computer, b->computer) == 0)
				continue;
			if (a->kind == BG_RULE_DEVICE_CONTAINS)
				shadowed = strstr(b->pattern, a->pattern) != NULL;
			else if (a->kind == BG_RULE_COMPUTER_EQUALS_IGNORING_CASE)
				shadowed = equals_ignoring_case(a->pattern, b->pattern);
			else
				shadowed = (m = machine_shared(b->pattern, a->pattern)) != NULL;
			if (!shadowed)
				continue;
			if (m)
				return bg_error(ctx, BG_ECHECK,
						"%s: computer_rules[%zu] lists machine '%.*s', which computer_rules[%zu] "
						"gives to computer '%s' first; list each machine once",
						display, j, (int)(strchr(m, ' ') - m), m, i, a->computer);
			return bg_error(ctx, BG_ECHECK,
					"%s: computer_rules[%zu] can never apply: computer_rules[%zu] ('%s' '%s', "
					"computer '%s') matches first whatever it matches; %s",
					display, j, i,
					a->kind == BG_RULE_DEVICE_CONTAINS ? "device_contains"
									   : "computer_equals_ignoring_case",
					a->pattern, a->computer,
					equals_ignoring_case(a->pattern, b->pattern) ? "keep one of the two"
										     : "put the longer pattern first");
		}
	return BG_OK;
}

/* With computers declared, a rule must name one of them: its label is what
 * gates and measurements are compared with. */
static int rules_name_computers(const struct bg_config *cfg, const char *display, struct bg_ctx *ctx)
{
	if (cfg->ncomputers == 0)
		return BG_OK;
	for (size_t i = 0; i < cfg->nrules; i++)
		if (!bg_config_computer_slug(cfg, cfg->rules[i].computer))
			return bg_error(ctx, BG_ECHECK,
					"%s: computer_rules[%zu] names computer '%s', which is not the label of any of 'computers'",
					display, i, cfg->rules[i].computer);
	return BG_OK;
}

/* rel from root as one text: "./" and "//" dropped and ".." applied by
 * name, so that two spellings of one path compare equal ("x/../RUNS.md"
 * is RUNS.md once benchgate makes x; links are left as they are). */
static void tidy_path(struct bg_strbuf *out, const char *root, const char *rel)
{
	struct bg_strbuf joined = BG_STRBUF_INIT;

	bg_path_join(&joined, root, rel);
	bg_strbuf_reset(out);
	bg_path_add_names(out, joined.buf);
	bg_strbuf_release(&joined);
}

/* (in the order a session's provenance lists them among git's excludes) */
const struct bg_state_file bg_state_files[BG_STATE_FILES] = {
	{"leases", "the device leases' folder", true},
	{"dashboard", "the dashboard's folder", true},
	{"runs-index.lock", "the lock of RUNS.md", false},
	{"promote.lock", "the lock of promotions", false},
	{"abandon.lock", "the lock of abandons", false},
	{"promote-journal", "a promotion's journal", true},
};

/*
 * BG_ECHECK when the file tidy (as tidy_path gives it; field names it, as
 * given) is one SQLite or benchgate keeps beside the sqlite store: the
 * store's -wal, -shm or -journal, or in its folder (the state folder)
 * leases/, dashboard/, promote-journal/, runs-index.lock, promote.lock or
 * abandon.lock.
 */
static int not_state(const struct bg_config *cfg, const char *tidy, const char *field, const char *given,
		     const char *display, struct bg_ctx *ctx)
{
	static const char *const side[] = {"-wal", "-shm", "-journal"};
	const char *store = strncmp(cfg->store, "sqlite:", 7) == 0 ? cfg->store + 7 : NULL;
	struct bg_strbuf st = BG_STRBUF_INIT;
	const char *what = NULL, *slash;
	bool folder = false;
	size_t dir;
	int rc = BG_OK;

	if (store) {
		tidy_path(&st, cfg->root, store);
	} else { /* (the state folder without a sqlite store) */
		tidy_path(&st, cfg->root, ".benchgate/x");
	}
	for (size_t k = 0; store && k < 3 && !what; k++)
		if (strncmp(tidy, st.buf, st.len) == 0 && strcmp(tidy + st.len, side[k]) == 0)
			what = side[k];
	slash = strrchr(st.buf, '/');
	dir = slash ? (size_t)(slash - st.buf) + 1 : 0;
	for (size_t k = 0; !what && k < BG_STATE_FILES; k++) {
		const struct bg_state_file *f = &bg_state_files[k];
		size_t n = strlen(f->name);
		if (strncmp(tidy, st.buf, dir) == 0 && strncmp(tidy + dir, f->name, n) == 0 &&
		    tidy[dir + n] == (f->folder ? '/' : '\0')) {
			what = f->what;
			folder = f->folder;
		}
	}
	if (what && what[0] == '-')
		rc = bg_error(ctx, BG_ECHECK, "%s: '%s' names '%s', which is the store's %s file (SQLite makes and "
				"removes it beside the store); name another file",
				display, field, given, what);
	else if (what)
		rc = bg_error(ctx, BG_ECHECK, "%s: '%s' names '%s', which is %s%s, benchgate's own state beside the "
				"store; name another file",
				display, field, given, folder ? "in " : "", what);
	bg_strbuf_release(&st);
	return rc;
}

/*
 * A file benchgate writes (the generated document, RUNS.md, the sqlite
 * store) must not be one it reads or another it writes: run would append
 * a Markdown row to the registry, render overwrite the profile matrix.
 * Compared as written (tidy_path); render also compares the files.
 */
static int written_apart(const struct bg_config *cfg, const char *display, struct bg_ctx *ctx)
{
	const char *store = strncmp(cfg->store, "sqlite:", 7) == 0 ? cfg->store + 7 : NULL;
	const struct {
		const char *path, *field, *what;
		bool written;
	} f[] = {
		{cfg->registry_path, "registry.path", "the registry", false},
		{cfg->profile_path, "profile.path", "the profile matrix", false},
		{cfg->parity_matrix, "profile.parity_matrix", "the parity matrix", false},
		{cfg->config_path, NULL, "benchgate.json", false},
		{cfg->generated_path, "registry.generated", "the registry's generated document", true},
		{cfg->runs_index, "profile.runs_index", "the experiments' RUNS.md", true},
		{store, "store", "the store", true},
	};
	enum { N = sizeof(f) / sizeof(f[0]) };
	struct bg_strbuf tidy[N];
	int rc = BG_OK;

	for (size_t i = 0; i < N; i++) {
		bg_strbuf_init(&tidy[i]);
		if (f[i].path)
			tidy_path(&tidy[i], cfg->root, f[i].path);
	}
	for (size_t i = 0; i < N && !rc; i++) {
		if (!f[i].written || !f[i].path)
			continue;
		for (size_t j = 0; j < N && !rc; j++) {
			if (j == i || !f[j].path || (f[j].written && j > i))
				continue;
			if (strcmp(tidy[i].buf, tidy[j].buf) == 0)
				rc = bg_error(ctx, BG_ECHECK, "%s: '%s' names '%s', which is %s; name another file",
					      display, f[i].field, f[i].path, f[j].what);
		}
	}
	/* nor a file SQLite or benchgate keeps beside the store: the store's
	 * -wal, -shm or -journal (made and removed as the store is opened),
	 * a device lease, the dashboard, a lock or a promotion's journal */
	for (size_t i = 4; i < 6 && !rc; i++) {
		if (f[i].path)
			rc = not_state(cfg, tidy[i].buf, f[i].field, f[i].path, display, ctx);
	}
	/* nor the store one of them: a run locks RUNS.md (making the empty
	 * lock file) before it stores, so every session was lost */
	if (!rc && store) {
		const char *base = strrchr(tidy[N - 1].buf, '/') ? strrchr(tidy[N - 1].buf, '/') + 1 : tidy[N - 1].buf;

		for (size_t k = 0; k < BG_STATE_FILES && !rc; k++) {
			if (strcmp(base, bg_state_files[k].name) == 0)
				rc = bg_error(ctx, BG_ECHECK, "%s: 'store' names '%s', which is %s, benchgate's own "
						"state in the store's folder; name another file",
					      display, cfg->store, bg_state_files[k].what);
		}
	}
	/* the generated document among the experiments, where every new file
	 * is an experiment's, which render never writes */
	if (!rc && cfg->generated_path) {
		struct bg_strbuf exp = BG_STRBUF_INIT;

		tidy_path(&exp, cfg->root, cfg->experiments);
		if (strncmp(tidy[4].buf, exp.buf, exp.len) == 0 && tidy[4].buf[exp.len] == '/')
			rc = bg_error(ctx, BG_ECHECK, "%s: 'registry.generated' names '%s', which is in the experiments "
					"folder ('profile.experiments'), where render writes nothing; name a file outside it",
					display, cfg->generated_path);
		bg_strbuf_release(&exp);
	}
	for (size_t i = 0; i < N; i++)
		bg_strbuf_release(&tidy[i]);
	return rc;
}

static int fill(struct bg_config *cfg, const char *display, struct bg_ctx *ctx)
{
	struct bg_value *reg, *prof, *sv;
	int rc;

	sv = bg_value_get(cfg->raw, "schema_version");
	if (sv && !(bg_value_is_integer(sv) && bg_value_int(sv) == 1))
		return bg_error(ctx, BG_ECHECK, "%s: 'schema_version' must be 1", display);
	if ((rc = known_fields(cfg->raw, "", top_fields, display, ctx)) ||
	    (rc = get_section(cfg->raw, "registry", &reg, display, ctx)) ||
	    (rc = get_section(cfg->raw, "profile", &prof, display, ctx)) ||
	    (rc = known_fields(reg, "registry", registry_fields, display, ctx)) ||
	    (rc = known_fields(prof, "profile", profile_fields, display, ctx)))
		return rc;
	if ((rc = get_file_path(reg, "registry", "path", "benchmarks/benchmark_registry.json",
				&cfg->registry_path, display, ctx)) ||
	    (rc = get_string(reg, "registry", "protocol_version", NULL, true, &cfg->registry_protocol,
			     display, ctx)) ||
	    (rc = get_file_path(reg, "registry", "generated", "docs/_generated/benchmark_coverage.md",
				&cfg->generated_path, display, ctx)) ||
	    (rc = get_file_path(prof, "profile", "path", "benchmarks/profile_matrix.json", &cfg->profile_path,
				display, ctx)) ||
	    (rc = get_string(prof, "profile", "protocol_version", NULL, true, &cfg->profile_protocol,
			     display, ctx)) ||
	    (rc = get_file_path(prof, "profile", "parity_matrix", "tests/parity/backend_matrix.json",
				&cfg->parity_matrix, display, ctx)) ||
	    (rc = get_string(prof, "profile", "experiments", "experiments", false, &cfg->experiments,
			     display, ctx)) ||
	    (rc = get_file_path(prof, "profile", "runs_index", "experiments/RUNS.md", &cfg->runs_index,
				display, ctx)) ||
	    (rc = get_string(cfg->raw, NULL, "store", "sqlite:.benchgate/store.sqlite3", false,
			     &cfg->store, display, ctx)))
		return rc;
	/* a store string no back end reads is caught by every verb, not first by one that stores */
	if (!(strncmp(cfg->store, "sqlite:", 7) == 0 && cfg->store[7]) && strncmp(cfg->store, "postgresql://", 13) != 0 &&
	    strncmp(cfg->store, "postgres://", 11) != 0) {
		/* a URL with user information ("user:password@host") is shown
		 * as its scheme only, as the store shows a postgresql:// one:
		 * a mistyped scheme must not print a password */
		const char *colon = strchr(cfg->store, ':');
		int shown = strchr(cfg->store, '@') && colon ? (int)(colon - cfg->store + 1) : (int)strlen(cfg->store);

		return bg_error(ctx, BG_ECHECK, "%s: 'store' must be 'sqlite:PATH' or 'postgresql://...', not '%.*s%s'",
				display, shown, cfg->store, cfg->store[shown] ? "..." : "");
	}
	if (strncmp(cfg->store, "sqlite:", 7) == 0 &&
	    (rc = file_path_check(cfg->store + 7, "store", cfg->store, display, ctx)))
		return rc;
	if ((rc = load_computers(cfg, display, ctx)) || (rc = load_rules(cfg, display, ctx)) ||
	    (rc = load_labels(cfg->raw, "platform_labels", &cfg->platform_labels, display, ctx)) ||
	    (rc = load_labels(cfg->raw, "module_labels", &cfg->module_labels, display, ctx)) ||
	    (rc = rules_name_computers(cfg, display, ctx)) || (rc = rules_reachable(cfg, display, ctx)) ||
	    (rc = check_key_fields(cfg->raw, display, ctx)) ||
	    (rc = written_apart(cfg, display, ctx)))
		return rc;
	return BG_OK;
}

/* Whether msg, a read error "DISPLAY: ...", already says what to do (after
 * a ';', which no strerror text holds). */
static bool advised(const char *msg, const char *display)
{
	size_t n = strlen(display);

	return strchr(strncmp(msg, display, n) == 0 ? msg + n : msg, ';') != NULL;
}

int bg_config_load(struct bg_config *cfg, const char *chdir_root, const char *config_file,
		   struct bg_ctx *ctx)
{
	char cwd[PATH_MAX];
	char *file = NULL;
	const char *display = CONFIG_NAME;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	/* only an absolute -C DIR can do without the working directory (one
	 * that was removed, say): everything is then taken from DIR */
	if (!getcwd(cwd, sizeof(cwd)) && !(chdir_root && chdir_root[0] == '/'))
		return bg_error(ctx, BG_EIO,
				"cannot determine the working directory: %s; change to the project's folder, "
				"or name it with -C DIR",
				strerror(errno));
	/* the root: -C DIR, else the nearest folder upwards holding benchgate.json,
	 * else the working directory, whether or not --config names the file */
	if (chdir_root) {
		cfg->root = absolute_dir(chdir_root, ctx);
		if (!cfg->root)
			return BG_EIO;
	} else {
		cfg->root = find_root(cwd);
		if (!cfg->root)
			cfg->root = bg_xstrdup(cwd);
	}
	if (config_file) {
		/* a relative FILE is read from -C DIR when given (as if benchgate
		 * had changed there first, like git -C), else from the working
		 * directory; config_path names it from the root */
		struct bg_strbuf p = BG_STRBUF_INIT;

		bg_path_join(&p, chdir_root ? cfg->root : cwd, config_file);
		file = bg_strbuf_detach(&p, NULL);
		display = config_file;
		cfg->config_path = bg_xstrdup(bg_config_relative(cfg, file));
	} else {
		struct bg_strbuf p = BG_STRBUF_INIT;

		bg_path_join(&p, cfg->root, CONFIG_NAME);
		if (config_present(p.buf)) {
			file = bg_strbuf_detach(&p, NULL);
			cfg->config_path = bg_xstrdup(CONFIG_NAME);
		} else {
			bg_strbuf_release(&p);
		}
	}
	if (file) {
		struct bg_value *raw;

		cfg->arena = bg_arena_new();
		/* a key written twice is a mistake here (the last one would win
		 * unseen), and so is a NaN, unlike in the files the reference
		 * tools write */
		rc = bg_value_parse_file_flags(cfg->arena, file, display,
					       BG_VALUE_REJECT_DUPLICATES | BG_VALUE_FINITE, &raw, ctx);
		free(file);
		if (rc == BG_EIO && !advised(bg_ctx_message(ctx), display)) {
			if (config_file)
				return bg_error(ctx, rc, "%s; name a readable benchgate.json with --config",
						bg_ctx_message(ctx));
			return bg_error(ctx, rc,
					"%s; make the benchgate.json in '%s' a readable file, or move it away (benchgate "
					"then looks in the folders above, or uses the defaults)",
					bg_ctx_message(ctx), cfg->root);
		}
		if (rc)
			return rc;
		if (!bg_value_is_object(raw)) {
			return bg_error(ctx, BG_ECHECK, "%s: top level must be a JSON object", display);
		}
		cfg->raw = raw;
	} else {
		cfg->raw = NULL; /* no benchgate.json: every lookup misses */
	}
	return fill(cfg, display, ctx);
}

void bg_config_release(struct bg_config *cfg)
{
	for (size_t i = 0; i < cfg->ncomputers; i++) {
		free(cfg->computers[i].label);
		free(cfg->computers[i].slug);
	}
	free(cfg->computers);
	for (size_t i = 0; i < cfg->nrules; i++) {
		free(cfg->rules[i].pattern);
		free(cfg->rules[i].computer);
	}
	free(cfg->rules);
	free(cfg->root);
	free(cfg->config_path);
	free(cfg->registry_path);
	free(cfg->registry_protocol);
	free(cfg->generated_path);
	free(cfg->profile_path);
	free(cfg->profile_protocol);
	free(cfg->parity_matrix);
	free(cfg->experiments);
	free(cfg->runs_index);
	free(cfg->store);
	bg_arena_free(cfg->arena);
	memset(cfg, 0, sizeof(*cfg));
}

void bg_config_path(const struct bg_config *cfg, struct bg_strbuf *out, const char *rel)
{
	bg_path_join(out, cfg->root, rel);
}

/* Whether the file rel (from the root) is the file at, links followed. */
static bool same_file(const struct bg_config *cfg, const struct stat *at, const char *rel)
{
	struct bg_strbuf p = BG_STRBUF_INIT;
	struct stat b;
	bool same;

	if (!rel)
		return false;
	bg_config_path(cfg, &p, rel);
	same = stat(p.buf, &b) == 0 && at->st_dev == b.st_dev && at->st_ino == b.st_ino;
	bg_strbuf_release(&p);
	return same;
}

/* Whether the file rel (from the root) is named a, as bg_path_named_later names it (links resolved). */
static bool same_name(const struct bg_config *cfg, const void *a, const char *rel)
{
	struct bg_strbuf p = BG_STRBUF_INIT;
	char *b;
	bool same;

	if (!rel)
		return false;
	bg_config_path(cfg, &p, rel);
	b = bg_path_named_later(p.buf); /* (links resolved where they are there) */
	same = b && strcmp(a, b) == 0;
	free(b);
	bg_strbuf_release(&p);
	return same;
}

static bool same_inode(const struct bg_config *cfg, const void *at, const char *rel)
{
	return same_file(cfg, at, rel);
}

/* Which of the files benchgate.json names (in roles) is(cfg, key, its path) says is key. */
static const char *file_role(const struct bg_config *cfg, unsigned roles,
			     bool (*is)(const struct bg_config *cfg, const void *key, const char *rel), const void *key)
{
	const struct {
		unsigned role;
		const char *path, *what;
	} files[] = {
		/* benchgate.json where there is none yet: read once it is there */
		{BG_FILE_CONFIG, cfg->config_path ? cfg->config_path : CONFIG_NAME, "benchgate.json"},
		{BG_FILE_REGISTRY, cfg->registry_path, "the registry"},
		{BG_FILE_PROFILE, cfg->profile_path, "the profile matrix"},
		{BG_FILE_PARITY, cfg->parity_matrix, "the parity matrix"},
		{BG_FILE_RUNS_INDEX, cfg->runs_index, "the experiments' RUNS.md"},
		{BG_FILE_GENERATED, cfg->generated_path, "the registry's generated document"},
	};
	static const char *const store_files[] = {"", "-wal", "-shm", "-journal"};
	struct bg_strbuf p = BG_STRBUF_INIT;
	const char *what = NULL;
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]) && !what; i++)
		if ((roles & files[i].role) && is(cfg, key, files[i].path))
			what = files[i].what;
	if (!what && (roles & BG_FILE_STORE) && cfg->store && strncmp(cfg->store, "sqlite:", 7) == 0 &&
	    cfg->store[7]) {
		/* SQLite keeps its files beside the store a link leads to */
		struct bg_strbuf store = BG_STRBUF_INIT;
		char *real;

		bg_config_path(cfg, &store, cfg->store + 7);
		real = realpath(store.buf, NULL);
		for (i = 0; i < sizeof(store_files) / sizeof(store_files[0]) && !what; i++) {
			bg_strbuf_reset(&p);
			bg_strbuf_addf(&p, "%s%s", real ? real : store.buf, store_files[i]);
			if (is(cfg, key, p.buf))
				what = "the store";
		}
		free(real);
		bg_strbuf_release(&store);
	}
	bg_strbuf_release(&p);
	return what;
}

const char *bg_config_file_role(const struct bg_config *cfg, const struct stat *at, unsigned roles)
{
	return file_role(cfg, roles, same_inode, at);
}

const char *bg_config_file_named(const struct bg_config *cfg, const char *name, unsigned roles)
{
	return file_role(cfg, roles, same_name, name);
}

const char *bg_config_relative(const struct bg_config *cfg, const char *path)
{
	size_t n = strlen(cfg->root);

	return strncmp(path, cfg->root, n) == 0 && path[n] == '/' ? path + n + 1 : path;
}

const char *bg_config_in_project(const struct bg_config *cfg, const char *path)
{
	if (path && path[0] == '/')
		path = bg_config_relative(cfg, path);
	return path && bg_path_stays_below(path) ? path : NULL;
}

bool bg_config_computer_known(const struct bg_config *cfg, const char *label)
{
	if (cfg->ncomputers == 0)
		return true;
	return bg_config_computer_slug(cfg, label) != NULL;
}

bool bg_config_slug_valid(const char *slug)
{
	size_t n = strlen(slug);

	if (n == 0 || n > BG_SLUG_MAX || slug[0] == '.')
		return false;
	for (const char *p = slug; *p; p++)
		if (!(*p == '-' || *p == '_' || *p == '.' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= 'A' && *p <= 'Z')))
			return false;
	return true;
}

const char *bg_config_computer_slug(const struct bg_config *cfg, const char *label)
{
	if (!label)
		return NULL;
	for (size_t i = 0; i < cfg->ncomputers; i++)
		if (strcmp(cfg->computers[i].label, label) == 0)
			return cfg->computers[i].slug;
	return NULL;
}

const char *bg_config_computer_label(const struct bg_config *cfg, const char *device,
				     const char *current)
{
	if (cfg->ncomputers && bg_config_computer_slug(cfg, current))
		return current;
	for (size_t i = 0; i < cfg->nrules; i++) {
		const struct bg_computer_rule *r = &cfg->rules[i];

		if (r->kind == BG_RULE_MACHINE_IN)
			continue; /* a recorded measurement carries no machine name */
		if (r->kind == BG_RULE_DEVICE_CONTAINS ? strstr(device, r->pattern) != NULL
						       : equals_ignoring_case(current, r->pattern))
			return r->computer;
	}
	return current;
}

static const char *label_of(const struct bg_value *map, const char *key)
{
	struct bg_value *v = bg_value_get(map, key);

	return v ? bg_value_str(v) : NULL;
}

const char *bg_config_platform_label(const struct bg_config *cfg, const char *key)
{
	return label_of(cfg->platform_labels, key);
}

const char *bg_config_module_label(const struct bg_config *cfg, const char *key)
{
	return label_of(cfg->module_labels, key);
}
