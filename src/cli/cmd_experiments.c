/*
 * cmd_experiments.c - `benchgate experiments [--json]` lists the experiments
 * with their state and, for running ones, whether the owner lives, and
 * flags an ended one whose RUNS.md row disagrees with its manifest;
 * `benchgate experiments abandon ID --why TEXT` marks a dead one failed;
 * `benchgate experiments repair ID` writes an ended one's RUNS.md row from
 * its manifest.
 */
#include "cli/cli.h"
#include "benchgate/format.h"
#include "benchgate/fsutil.h"
#include "benchgate/json.h"
#include "benchgate/lifecycle.h"
#include "benchgate/profile.h"
#include "benchgate/value.h"
#include "benchgate/store.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { OPT_JSON = 1, OPT_WHY, OPT_OWNER_GONE };
struct opts {
	bool json;
	const char *why;
	bool owner_gone; /* --owner-gone: the owner on another host has stopped */
};

static const char *on_opt(int id, const char *value, void *data)
{
	struct opts *o = data;

	if (id == OPT_JSON)
		o->json = true;
	else if (id == OPT_OWNER_GONE)
		o->owner_gone = true;
	else
		o->why = value;
	return NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether folder holds a temporary file of its manifest (manifest.json.tmp.PID). */
static bool has_manifest_temporary(const char *folder)
{
	DIR *d = opendir(folder);
	struct dirent *e;
	bool found = false;

	while (d && !found && (e = readdir(d)))
		found = strncmp(e->d_name, "manifest.json.tmp.", strlen("manifest.json.tmp.")) == 0;
	if (d)
		closedir(d);
	return found;
}

/*
 * What mends the RUNS.md row of experiment id (status, its row as rs says):
 * "rename" (no row can name a folder whose name is not one line of UTF-8),
 * "dedupe" (several rows: which to keep is a person's call), "repair" (an
 * ended one's, written from its manifest), "run-ends" (a running one's
 * owner writes it as the run ends) or "by-hand" (repair writes no other).
 */
static const char *row_fix(const char *id, const char *status, enum bg_row_state rs)
{
	if (bg_experiment_id_unnameable(id))
		return "rename";
	if (rs == BG_ROW_REPEATED)
		return "dedupe";
	if (!status) /* (not judged: an invalid status is check's to report) */
		return "by-hand";
	if (strcmp(status, "completed") == 0 || strcmp(status, "failed") == 0)
		return "repair";
	return strcmp(status, "running") == 0 ? "run-ends" : "by-hand";
}

/* Whether dir/name is a symbolic link that leads to a folder; *target
 * (reset) then holds what the link says. */
static bool link_to_folder(const char *dir, const char *name, struct bg_strbuf *target)
{
	struct bg_strbuf p = BG_STRBUF_INIT;
	struct stat st;
	bool link;
	char buf[4096];
	ssize_t n;

	bg_strbuf_addf(&p, "%s/%s", dir, name);
	link = lstat(p.buf, &st) == 0 && S_ISLNK(st.st_mode) && bg_is_dir(p.buf);
	bg_strbuf_reset(target);
	if (link && (n = readlink(p.buf, buf, sizeof(buf))) > 0)
		bg_strbuf_addn(target, buf, (size_t)n);
	bg_strbuf_release(&p);
	return link;
}

/* The experiments, sorted by id, into *out; BG_EIO when the folder is there
 * but cannot be listed (never taken for none). */
static int collect(const struct bg_config *cfg, json_t **out, struct bg_ctx *ctx_out)
{
	struct bg_strbuf dir = BG_STRBUF_INIT, runs_path = BG_STRBUF_INIT, runs = BG_STRBUF_INIT, row = BG_STRBUF_INIT;
	struct bg_strbuf target = BG_STRBUF_INIT; /* a link's, link_to_folder */
	json_t *list = json_array();
	bool have_runs, runs_unread;
	struct bg_arena *rows_arena = NULL;
	const struct bg_value *rows;
	struct stat st;
	char **names = NULL;
	size_t n = 0;
	DIR *d;
	struct dirent *e;

	bg_config_path(cfg, &dir, cfg->experiments);
	d = opendir(dir.buf);
	if (!d && errno != ENOENT) {
		int rc = bg_error(ctx_out, BG_EIO, "%s: cannot list the experiments: %s; make 'profile.experiments' of benchgate.json name a folder benchgate can read", cfg->experiments,
				  strerror(errno));
		bg_strbuf_release(&dir);
		json_decref(list);
		*out = NULL;
		return rc;
	}
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		names = bg_xrealloc(names, (n + 1) * sizeof(*names));
		names[n++] = bg_xstrdup(e->d_name);
	}
	if (d)
		closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	/* each ended experiment's row is compared with its manifest; a RUNS.md
	 * that is there but cannot be read (a FIFO, no permission) is check's
	 * to report, and no row is called missing for it */
	bg_config_path(cfg, &runs_path, cfg->runs_index);
	runs_unread = stat(runs_path.buf, &st) == 0;
	have_runs = runs_unread && S_ISREG(st.st_mode) &&
		    bg_file_read(runs_path.buf, cfg->runs_index, &runs, NULL) == BG_OK;
	runs_unread = runs_unread && !have_runs;
	/* read once, as check reads them: the listing stays linear in the rows */
	rows = have_runs ? bg_profile_runs_rows(rows_arena = bg_arena_new(), runs.buf, runs.len) : NULL;
	for (size_t i = 0; i < n; i++) {
		struct bg_ctx ctx;
		json_t *m = NULL, *item;
		const char *status, *owner = NULL;

		bg_ctx_init(&ctx);
		if (link_to_folder(dir.buf, names[i], &target)) {
			/* no experiment of its own: repair and abandon refuse it */
			struct bg_strbuf why = BG_STRBUF_INIT;

			bg_strbuf_addf(&why, "a link to the folder %s, not an experiment's own folder: nothing to repair "
					     "or abandon under this name; name the experiment it leads to, or remove the link "
					     "('rm %s/%s')", target.buf, cfg->experiments, names[i]);
			json_array_append_new(list, json_pack("{s:o, s:s, s:o}", "id", bg_json_text(names[i]), "status",
							      "link", "error", bg_json_text(why.buf)));
			bg_strbuf_release(&why);
		} else if (bg_experiment_read_manifest_view(cfg, names[i], &m, &ctx) == BG_OK) {
			status = json_string_value(json_object_get(m, "status"));
			if (status && strcmp(status, "running") == 0)
				bg_experiment_owner_state(m, &owner);
			/* a folder name that is not UTF-8 is kept, its odd bytes as \xNN */
			item = json_pack("{s:o, s:s, s:O, s:O, s:O, s:s?}", "id", bg_json_text(names[i]), "status",
					 status ? status : "invalid", "question",
					 json_object_get(m, "question") ? json_object_get(m, "question") : json_null(),
					 "started",
					 json_object_get(json_object_get(m, "timestamps"), "started")
						 ? json_object_get(json_object_get(m, "timestamps"), "started")
						 : json_null(),
					 "failure_reason",
					 json_object_get(m, "failure_reason") ? json_object_get(m, "failure_reason")
									    : json_null(),
					 "owner", owner);
			if (!runs_unread) {
				static const char *const said[] = {"agrees", "says", "repeated", "unread", "missing"};
				size_t nrows;
				enum bg_row_state rs = bg_experiment_row_state(have_runs ? runs.buf : NULL, runs.len,
									       rows, names[i], m, true, &row, &nrows);

				if (rs != BG_ROW_AGREES) {
					json_object_set_new(item, "stale_row", json_true());
					json_object_set_new(item, "row", json_string(said[rs]));
					json_object_set_new(item, "rows", json_integer((json_int_t)nrows));
					json_object_set_new(item, "row_status",
							    rs == BG_ROW_SAYS ? bg_json_text(row.buf) : json_null());
					json_object_set_new(item, "row_fix", json_string(row_fix(names[i], status, rs)));
				}
			}
			json_array_append_new(list, item);
		} else {
			/* a folder whose manifest cannot be read is listed as such;
			 * files beside the folders (RUNS.md, evidence) are not experiments */
			struct bg_strbuf p = BG_STRBUF_INIT, mp = BG_STRBUF_INIT;
			struct stat ms;
			bool no_manifest;

			bg_strbuf_addf(&p, "%s/%s", dir.buf, names[i]);
			bg_strbuf_addf(&mp, "%s/manifest.json", p.buf);
			no_manifest = lstat(mp.buf, &ms) != 0 && errno == ENOENT;
			bg_strbuf_release(&mp);
			if (strcmp(p.buf, runs_path.buf) == 0) {
				/* RUNS.md itself made a folder: check's to report, never an
				 * experiment to remove */
			} else if (bg_is_dir(p.buf) && bg_experiment_folder_bare(cfg, names[i])) {
				/* created, then killed before its manifest: no record of anything */
				struct bg_strbuf why = BG_STRBUF_INIT;

				bg_strbuf_addf(&why, "no manifest.json: a run killed as it created the experiment leaves its folder so; remove the folder ('rm -r %s/%s')",
					       cfg->experiments, names[i]);
				json_array_append_new(list, json_pack("{s:o, s:s, s:o}", "id", bg_json_text(names[i]),
								      "status", "empty", "error", bg_json_text(why.buf)));
				bg_strbuf_release(&why);
			} else if (bg_is_dir(p.buf) && no_manifest) {
				/* no manifest.json but other files: a run writing its
				 * manifest right now, or a folder of notes or shared
				 * assets, which check counts as no experiment */
				json_array_append_new(list, json_pack("{s:o, s:s, s:s}", "id", bg_json_text(names[i]),
								      "status", "no-manifest", "error",
								      has_manifest_temporary(p.buf)
									      ? "no manifest.json yet: a run is writing it"
									      : "no manifest.json: a folder of other files, which check counts as no experiment"));
			} else if (bg_is_dir(p.buf)) {
				json_array_append_new(list, json_pack("{s:o, s:s, s:o}", "id", bg_json_text(names[i]),
								      "status", "unreadable", "error",
								      bg_json_text(bg_ctx_message(&ctx))));
			}
			bg_strbuf_release(&p);
		}
		json_decref(m);
		bg_ctx_release(&ctx);
		free(names[i]);
	}
	free(names);
	bg_strbuf_release(&dir);
	bg_strbuf_release(&runs_path);
	bg_strbuf_release(&runs);
	bg_strbuf_release(&row);
	bg_strbuf_release(&target);
	bg_arena_free(rows_arena);
	*out = list;
	return BG_OK;
}

static int list(const struct bg_config *cfg, bool as_json)
{
	struct bg_strbuf out = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	json_t *items, *it;
	size_t i;
	int rc;

	bg_ctx_init(&ctx);
	if ((rc = collect(cfg, &items, &ctx))) {
		bg_cli_fail_ctx(rc, &ctx);
		bg_ctx_release(&ctx);
		return rc;
	}
	bg_ctx_release(&ctx);

	if (as_json) {
		bg_json_dump_py(&out, items, 2, true);
		bg_strbuf_addch(&out, '\n');
	} else if (json_array_size(items) == 0) {
		bg_strbuf_addf(&out, "no experiments under %s/\n", cfg->experiments);
	} else {
		struct bg_strbuf id = BG_STRBUF_INIT, status = BG_STRBUF_INIT;

		/* folder names and manifests' words, a failure's message: shown */
		json_array_foreach(items, i, it) {
			const char *owner = json_string_value(json_object_get(it, "owner"));
			const char *why = json_string_value(json_object_get(it, "failure_reason"));

			if (!why) /* an unreadable one: why */
				why = json_string_value(json_object_get(it, "error"));
			bg_strbuf_addf(&out, "%-48s %-10s", bg_cli_shown(&id, json_string_value(json_object_get(it, "id"))),
				       bg_cli_shown(&status, json_string_value(json_object_get(it, "status"))));
			if (owner && strcmp(owner, "dead") == 0) {
				bg_strbuf_adds(&out, " owner is gone: abandon it with 'benchgate experiments abandon ");
				bg_cli_add_shown(&out, json_string_value(json_object_get(it, "id")));
				bg_strbuf_adds(&out, " --why TEXT'");
			} else if (owner && strcmp(owner, "other-host") == 0) {
				bg_strbuf_adds(&out, " owner on another host: if it has stopped there, abandon it with 'benchgate experiments abandon ");
				bg_cli_add_shown(&out, json_string_value(json_object_get(it, "id")));
				bg_strbuf_adds(&out, " --why TEXT --owner-gone'");
			} else if (owner) {
				bg_strbuf_adds(&out, " owner ");
				bg_cli_add_shown(&out, owner);
			}
			if (why) {
				bg_strbuf_adds(&out, " (");
				bg_cli_add_shown(&out, why);
				bg_strbuf_addch(&out, ')');
			}
			if (json_is_true(json_object_get(it, "stale_row"))) {
				const char *row = json_string_value(json_object_get(it, "row_status"));
				const char *state = json_string_value(json_object_get(it, "row"));

				const char *st = json_string_value(json_object_get(it, "status"));
				const char *id_text = json_string_value(json_object_get(it, "id"));
				const char *fix = json_string_value(json_object_get(it, "row_fix"));

				bg_strbuf_addf(&out, " %s ", cfg->runs_index);
				if (strcmp(state, "repeated") == 0) {
					bg_strbuf_addf(&out, "has %lld rows for it, and check wants one: remove all but one",
						       (long long)json_integer_value(json_object_get(it, "rows")));
				} else if (row) {
					bg_strbuf_adds(&out, "row says '");
					bg_cli_add_shown(&out, row);
					bg_strbuf_adds(&out, "'");
				} else if (strcmp(state, "unread") == 0) {
					bg_strbuf_adds(&out, "has a row for it that check does not read (a row starts '| ' and the id)");
				} else {
					bg_strbuf_adds(&out, "has no row for it");
				}
				if (strcmp(fix, "rename") == 0) {
					const char *cannot = id_text ? bg_experiment_id_unnameable(id_text) : NULL;

					/* (the listing's id is the name as shown: one not UTF-8 is no longer so) */
					bg_strbuf_addf(&out, "; no row can name it (%s), so rename the folder",
						       cannot ? cannot : "its folder's name is not one line of UTF-8 text");
				} else if (strcmp(fix, "repair") == 0 || (strcmp(fix, "dedupe") == 0 &&
									(strcmp(st, "completed") == 0 || strcmp(st, "failed") == 0))) {
					bg_strbuf_adds(&out, strcmp(fix, "dedupe") == 0 ? ", then run 'benchgate experiments repair "
										      : ": write it from the manifest with 'benchgate experiments repair ");
					bg_cli_add_shown(&out, id_text);
					bg_strbuf_adds(&out, "'");
				} else if (strcmp(fix, "run-ends") == 0) {
					bg_strbuf_adds(&out, ", which check fails until the run ends and writes it (if its owner is gone, abandon it)");
				} else if (strcmp(fix, "by-hand") == 0) {
					bg_strbuf_addf(&out, ", which check fails: write its row, status '%s', by hand",
						       bg_profile_runs_status(st));
				}
			}
			bg_cli_end_line(&out);
		}
		bg_strbuf_release(&id);
		bg_strbuf_release(&status);
	}
	if (bg_cli_write(&out, false))
		rc = BG_EIO;
	bg_strbuf_release(&out);
	json_decref(items);
	return rc;
}

struct stored {
	const char *id;
	/* of this project's experiment: its manifest's creation time and
	 * revision (NULL when it has none), since experiment ids are unique
	 * within one project, not within a store that projects share */
	const char *created, *revision;
	json_t *sessions; /* the summaries of the experiment's sessions */
};

static int stored_of(const json_t *row, void *data, struct bg_ctx *ctx)
{
	struct stored *s = data;
	const char *exp = json_string_value(json_object_get(row, "experiment_id"));
	const char *started = json_string_value(json_object_get(row, "started_at"));
	const char *rev = json_string_value(json_object_get(row, "git_revision"));

	(void)ctx;
	/* (RFC 3339 texts of one form, UTC: they compare as their times do) */
	if (exp && strcmp(exp, s->id) == 0 && !(s->created && started && strcmp(started, s->created) < 0) &&
	    !(s->revision && rev && strcmp(rev, s->revision) != 0))
		json_array_append(s->sessions, (json_t *)row);
	return BG_OK;
}

/*
 * After abandon: the sessions of experiment id that were stored before its
 * run ended (benchgate killed between the store's write and the
 * manifest's) are named, with the way to keep one out of its key's
 * baseline; none is rejected here, the decision being a person's.
 */
static void abandoned_sessions(struct bg_strbuf *out, const struct bg_config *cfg, const char *id)
{
	struct stored s = {id, NULL, NULL, json_array()};
	struct bg_store *st = NULL;
	struct bg_ctx ctx;
	json_t *m = NULL, *row;
	const char *gate;
	size_t i;

	bg_ctx_init(&ctx);
	if (bg_experiment_read_manifest_view(cfg, id, &m, &ctx) ||
	    !(gate = json_string_value(json_object_get(json_object_get(json_object_get(m, "parameters"), "gate"), "id"))))
		goto out; /* no gate: no session of it can be stored */
	s.created = json_string_value(json_object_get(json_object_get(m, "timestamps"), "created"));
	s.revision = json_string_value(json_object_get(json_object_get(m, "code"), "revision"));
	if (bg_store_open(cfg->store, cfg->root, BG_STORE_READ, &st, &ctx) ||
	    (st && bg_store_each_history(st, gate, NULL, stored_of, &s, &ctx))) {
		bg_strbuf_adds(out, "the store could not be searched for a session of this experiment (");
		bg_cli_add_shown(out, bg_ctx_message(&ctx));
		bg_strbuf_adds(out, "): see 'benchgate history ");
		bg_cli_add_shown(out, gate);
		bg_strbuf_adds(out, "'\n");
		goto out;
	}
	json_array_foreach(s.sessions, i, row) {
		long long sid = (long long)json_integer_value(json_object_get(row, "id"));
		const char *not_in = bg_store_not_in_baseline(row);

		bg_strbuf_addf(out, "session %lld of this experiment was stored before benchgate stopped (decision ", sid);
		bg_cli_add_shown(out, bg_json_str_or(json_object_get(row, "decision"), "none"));
		bg_strbuf_adds(out, ", ");
		bg_cli_add_shown(out, bg_json_str_or(json_object_get(row, "curation"), "not curated"));
		if (!not_in)
			bg_strbuf_addf(out, ") and counts in its key's baseline; if it should not, reject it: 'benchgate reject %lld --why TEXT'\n",
				       sid);
		else
			bg_strbuf_adds(out, "); it does not count in its key's baseline\n");
	}
out:
	if (st)
		bg_store_close(st);
	json_decref(s.sessions);
	json_decref(m);
	bg_ctx_release(&ctx);
}

/* `experiments repair ID`: the RUNS.md row written from the manifest. */
static int repair(const struct bg_config *cfg, const char *id)
{
	struct bg_strbuf out = BG_STRBUF_INIT, was = BG_STRBUF_INIT;
	enum bg_row_state before = BG_ROW_AGREES;
	struct bg_ctx ctx;
	bool repaired;
	int rc;

	bg_ctx_init(&ctx);
	rc = bg_experiment_repair_row(cfg, id, &was, &before, &repaired, &ctx);
	if (rc) {
		bg_cli_fail_ctx(rc, &ctx);
	} else if (!repaired) {
		bg_strbuf_addf(&out, "experiment %s: its %s row already agrees with its manifest; nothing to repair\n", id,
			       cfg->runs_index);
	} else {
		bg_strbuf_addf(&out, "experiment %s: its %s row ", id, cfg->runs_index);
		if (before == BG_ROW_SAYS) {
			bg_strbuf_adds(&out, "said '");
			bg_cli_add_shown(&out, was.buf ? was.buf : "");
			bg_strbuf_adds(&out, "'");
		} else if (before == BG_ROW_UNREAD) {
			bg_strbuf_adds(&out, "was not one check reads (a row starts '| ' and the id)");
		} else {
			bg_strbuf_adds(&out, "was missing");
		}
		bg_strbuf_adds(&out, "; it is written from the manifest now\n");
	}
	if (bg_cli_write(&out, false) && !rc)
		rc = BG_EIO;
	bg_strbuf_release(&out);
	bg_strbuf_release(&was);
	bg_ctx_release(&ctx);
	return rc;
}

/* The action, checked as argparse checks a choice: where it stands. */
static int check_action(const struct bg_cmd *self, int index, const char *word)
{
	if (index == 0 && strcmp(word, "abandon") != 0 && strcmp(word, "repair") != 0)
		return bg_cli_usage_error(self, "unknown action '%s'", word);
	return BG_OK;
}

static int run(struct bg_cli *cli, const struct bg_cmd *self)
{
	static const struct bg_opt opts[] = {
		{"json", 0, BG_OPT_FLAG, OPT_JSON, false},
		{"why", 0, BG_OPT_VALUE, OPT_WHY, false},
		{"owner-gone", 0, BG_OPT_FLAG, OPT_OWNER_GONE, false},
		{0},
	};
	struct opts o = {false, NULL, false};
	struct bg_config cfg;
	struct bg_parsed parsed;
	struct bg_ctx ctx;
	int rc;

	if ((rc = bg_cli_parse(cli, self, opts, 2, false, on_opt, &o, &parsed)))
		return rc;
	if (o.owner_gone && (parsed.npos == 0 || strcmp(parsed.pos[0], "abandon") != 0))
		return bg_cli_usage_error(self, "--owner-gone goes with 'abandon ID'");
	if (parsed.npos == 0) {
		if (o.why)
			return bg_cli_usage_error(self, "--why goes with 'abandon ID'");
	} else if (parsed.npos != 2) {
		return bg_cli_usage_error(self, "'%s' needs an experiment id", parsed.pos[0]);
	} else if (strcmp(parsed.pos[0], "repair") == 0) {
		if (o.why)
			return bg_cli_usage_error(self, "--why goes with 'abandon ID', not with 'repair': a repair changes no manifest");
		if (o.json)
			return bg_cli_usage_error(self, "--json goes with the listing, not with 'repair'");
	} else if (!o.why || !*o.why) {
		return bg_cli_usage_error(self, "'abandon' needs --why TEXT: the reason is recorded");
	} else if (o.json) {
		return bg_cli_usage_error(self, "--json goes with the listing, not with 'abandon'");
	} else if ((rc = bg_cli_check_reason(o.why))) {
		return rc; /* before any experiment is looked at */
	}
	if ((rc = bg_cli_load_config(cli, &cfg)))
		return rc;
	if (parsed.npos == 0) {
		rc = list(&cfg, o.json);
	} else if (strcmp(parsed.pos[0], "repair") == 0) {
		rc = repair(&cfg, parsed.pos[1]);
	} else {
		struct bg_strbuf out = BG_STRBUF_INIT, was = BG_STRBUF_INIT;
		enum bg_row_state before = BG_ROW_AGREES;
		const char *ended;

		bg_ctx_init(&ctx);
		rc = bg_experiment_abandon(&cfg, parsed.pos[1], o.why, o.owner_gone, &was, &before, &ended, &ctx);
		if (rc)
			bg_cli_fail_ctx(rc, &ctx);
		else if (ended && before == BG_ROW_UNREAD)
			bg_strbuf_addf(&out, "experiment %s was already %s; its RUNS.md row, not one check reads (a row starts '| ' and the id), is written from the manifest now\n",
				       parsed.pos[1], ended);
		else if (ended && before == BG_ROW_SAYS)
			bg_strbuf_addf(&out, "experiment %s was already %s; its RUNS.md row, still '%s' (a write lost when benchgate was killed), now says %s\n",
				       parsed.pos[1], ended, was.buf, strcmp(ended, "completed") == 0 ? "ok" : "failed");
		else if (ended)
			bg_strbuf_addf(&out, "experiment %s was already %s; its RUNS.md row, missing (a write lost when benchgate was killed), is written now\n",
				       parsed.pos[1], ended);
		else {
			bg_strbuf_addf(&out, "experiment %s marked failed: abandoned: %s\n", parsed.pos[1], o.why);
			abandoned_sessions(&out, &cfg, parsed.pos[1]);
		}
		/* a confirmation that cannot be written is an I/O failure, as for
		 * every other verb, never a silent success */
		if (bg_cli_write(&out, false) && !rc)
			rc = BG_EIO;
		bg_strbuf_release(&out);
		bg_strbuf_release(&was);
		bg_ctx_release(&ctx);
	}
	bg_config_release(&cfg);
	return rc;
}

const struct bg_cmd bg_cmd_experiments = {
	"experiments",
	"list experiments and their state; abandon one whose owner died; repair an ended one's RUNS.md row",
	"benchgate experiments [--json]\n"
	"       benchgate experiments abandon ID --why TEXT [--owner-gone]\n"
	"       benchgate experiments repair ID",
	"  --json             print the experiments as JSON\n"
	"  --why TEXT         the reason recorded when abandoning\n"
	"  --owner-gone       abandon one started on another host, whose processes\n"
	"                     benchgate cannot see: you say it has stopped there\n",
	run,
	check_action,
	false,
};
