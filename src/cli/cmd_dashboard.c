/*
 * cmd_dashboard.c - `benchgate dashboard [--output DIR]`: assembles the
 * report model (benchgate/report.h) from the registry (coverage by state and
 * platform, every gate with its state and next step) and the store (per
 * comparison key, the key with the newest session first: its most recent
 * 100 sessions and how many it has; each with p50/p95/max, tree and
 * accelerator peaks, parity, decision, curation, its gate, computer and
 * timing, and whether it counts toward the key's baseline
 * (bg_store_not_in_baseline) and why not; the key's distinct gates,
 * computers and timings, several where its fields leave one out; and the
 * p50 envelope of the latest shown decision that computed one), renders the
 * self-contained page and writes DIR/index.html atomically. The keys are
 * listed from the store's key index; a key's sessions are read only when
 * the page draws it, so a store of many keys is never held whole; all of
 * it in one read transaction, so the page is one state of the store. DIR (relative
 * to the project root; "//", "." folders and a trailing "/" are tidied
 * away) defaults to dashboard/ in the folder of the store and leases
 * (.benchgate/dashboard); a folder that cannot be made is named relative
 * to the root, with what to do. A project without a store gets the
 * coverage part alone. A registry that `render` refuses is refused
 * (render's message, exit 1) before anything is written; a stored session
 * the page cannot place is exit 4, naming it. Prints the path written.
 */
#include "cli/cli.h"
#include "cli/inputs.h"
#include "cli/verdict_print.h"
#include "benchgate/decide.h"
#include "benchgate/fsutil.h"
#include "benchgate/json.h"
#include "benchgate/lifecycle.h"
#include "benchgate/report.h"
#include "benchgate/store.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *on_opt(int id, const char *v, void *data)
{
	(void)id;
	*(const char **)data = v;
	return NULL;
}

/* A registry text for the page: bytes jansson cannot hold (a lone
 * surrogate a JSON escape left, bg_value_surrogate_find) as \xNN. */
static json_t *vstr(const struct bg_value *v)
{
	return bg_json_text(bg_value_str(v));
}

/* A gate's next step: its next_gate, or where it has none its reason (an
 * unsupported gate says why), as the generated document's "Next gate"
 * column shows it; null when it has neither. */
static json_t *next_step(const struct bg_value *g)
{
	const struct bg_value *next = bg_value_get(g, "next_gate"), *reason = bg_value_get(g, "reason");

	if (!bg_value_str_blank(next))
		return vstr(next);
	return bg_value_str_blank(reason) ? json_null() : vstr(reason);
}

/*
 * DIR as it is meant: "//" is one "/", "." folders are dropped, and so is a
 * trailing "/" ("/" stays "/"; nothing left is ".").
 */
static void tidy_dir(struct bg_strbuf *out, const char *in)
{
	const char *s = in;

	if (*s == '/')
		bg_strbuf_addch(out, '/');
	while (*s) {
		size_t n;

		while (*s == '/')
			s++;
		n = strcspn(s, "/");
		if (n && !(n == 1 && *s == '.')) {
			if (out->len && out->buf[out->len - 1] != '/')
				bg_strbuf_addch(out, '/');
			bg_strbuf_addn(out, s, n);
		}
		s += n;
	}
	if (!out->len)
		bg_strbuf_addch(out, '.');
}

/* BG_OK when `render` would render the registry; else render's error. */
static int registry_renders(struct bg_registry *reg, struct bg_ctx *ctx)
{
	struct bg_strbuf doc = BG_STRBUF_INIT;
	int rc = bg_registry_render(reg, &doc, ctx);

	bg_strbuf_release(&doc);
	return rc;
}

static json_t *coverage(const struct bg_registry *reg, json_t *model)
{
	json_t *states = json_array(), *platforms = json_object(), *gates = json_array(), *plist = json_array();
	size_t i, counts[7] = {0};
	struct bg_value *g;
	BG_VALUE_ARRAY_FOREACH(reg->gates, i, g) {
		const char *st = bg_value_str(bg_value_get(g, "state"));
		const char *pf = bg_value_str(bg_value_get(g, "platform"));
		const char *label = st ? bg_state_label(st) : NULL;
		json_t *p, *c;

		for (int s = 0; s < 7; s++)
			if (st && strcmp(st, bg_state_order[s]) == 0)
				counts[s]++;
		if (!pf)
			pf = "n/a";
		p = json_object_get(platforms, pf);
		if (!p) {
			p = json_pack("{s:o, s:{}, s:i}", "platform", bg_json_text(pf), "counts", "total", 0);
			json_object_set_new_nocheck(platforms, pf, p); /* a lookup only: any bytes */
			json_array_append(plist, p);
		}
		c = json_object_get(p, "counts");
		if (st)
			json_object_set_new(c, st, json_integer(json_integer_value(json_object_get(c, st)) + 1));
		json_object_set_new(p, "total", json_integer(json_integer_value(json_object_get(p, "total")) + 1));
		json_array_append_new(gates, json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "id", vstr(bg_value_get(g, "id")),
						       "state", vstr(bg_value_get(g, "state")), "label",
						       label ? json_string(label) : json_null(), "platform",
						       vstr(bg_value_get(g, "platform")), "computer",
						       vstr(bg_value_get(g, "computer")), "next", next_step(g)));
	}
	for (int s = 0; s < 7; s++)
		json_array_append_new(states, json_pack("{s:s, s:s, s:I}", "state", bg_state_order[s], "label",
							bg_state_label(bg_state_order[s]), "count", (json_int_t)counts[s]));
	json_object_set_new(model, "states", states);
	json_object_set_new(model, "platforms", plist);
	json_object_set_new(model, "gates", gates);
	json_decref(platforms);
	return model;
}

/* A decision document's wall metric (seconds) in nanoseconds, as the store holds times. */
static json_t *nanoseconds(const json_t *s)
{
	double ns = json_number_value(s) * 1e9;

	/* beyond a double (a store changed outside benchgate): not drawn, never a failed page */
	return json_is_number(s) && isfinite(ns) ? json_real(ns) : json_null();
}

/* The Parity column: pass, fail, not declared (the runbook has none), not checked. */
static json_t *parity_text(const json_t *row)
{
	const char *result = json_string_value(json_object_get(row, "parity"));
	const char *kind = json_string_value(json_object_get(row, "parity_kind"));

	if (result)
		return json_string(result);
	return json_string(!kind || strcmp(kind, "none") == 0 ? "not declared" : "not checked");
}

/* Why a session does not count toward its key's baseline (null when it does), in words. */
static json_t *why_not(const json_t *row)
{
	const char *why = bg_store_not_in_baseline(row), *source;
	struct bg_strbuf sb = BG_STRBUF_INIT;
	json_t *v;

	if (!why)
		return json_null();
	if (strcmp(why, "status") == 0 || strcmp(why, "tier") == 0)
		bg_strbuf_addf(&sb, "%s %s", why, bg_json_str_or(json_object_get(row, why), "n/a"));
	else if (strcmp(why, "pending") != 0)
		bg_strbuf_adds(&sb, why);
	else if ((source = bg_vp_pending_source(row))) /* stored pending whatever it decided */
		bg_strbuf_addf(&sb, "pending review (%s)", source);
	else
		bg_strbuf_adds(&sb, "pending review");
	v = bg_json_text(sb.buf);
	bg_strbuf_release(&sb);
	return v;
}

/*
 * Appends v (a string, or null: n/a) to key's list once: key's "seen"
 * object remembers what each list holds. Nonzero when it cannot.
 */
static int note_once(json_t *key, const char *list, const json_t *v)
{
	json_t *seen = json_object_get(key, "seen");
	struct bg_strbuf name = BG_STRBUF_INIT;
	int rc = 0;

	/* "gates:s:ID", "computers:n" (null): names that cannot meet */
	if (json_is_string(v))
		bg_strbuf_addf(&name, "%s:s:%s", list, json_string_value(v));
	else
		bg_strbuf_addf(&name, "%s:n", list);
	if (!json_object_get(seen, name.buf))
		rc = json_object_set_new(seen, name.buf, json_true()) ||
		     json_array_append_new(json_object_get(key, list),
					   json_is_string(v) ? json_string(json_string_value(v)) : json_null());
	bg_strbuf_release(&name);
	return rc;
}

/* A stored session the page cannot hold: exit 4, naming it; never left out unsaid. */
static int unplaced(const json_t *row, const char *why, struct bg_ctx *ctx)
{
	return bg_error(ctx, BG_EIO, "session %lld: %s; the dashboard leaves no session out: see 'benchgate "
			"session %lld', and restore the store from a backup if it was damaged",
			(long long)json_integer_value(json_object_get(row, "id")), why,
			(long long)json_integer_value(json_object_get(row, "id")));
}

/* jansson could not allocate: exit 4. */
static int out_of_memory(struct bg_ctx *ctx)
{
	return bg_error(ctx, BG_EIO, "cannot assemble the dashboard: out of memory; free memory and run it again");
}

/*
 * How many of a key's sessions the page shows, the most recent: five times
 * the decision window, so that the window is there with what came before it
 * even when many sessions were blocked; the key's heading says how many
 * there are, and where the rest are (history --key).
 */
enum { SHOWN_PER_KEY = 100 };

/*
 * Keeps the most recent SHOWN_PER_KEY sessions of key, those left out
 * counted in its "dropped" (made when there is none). Called as the walk
 * over the store grows the key by SHOWN_PER_KEY more, so that a key of
 * many sessions never holds them all.
 */
static int keep_recent(json_t *key, struct bg_ctx *ctx)
{
	json_t *ss = json_object_get(key, "sessions"), *tail;
	size_t n = json_array_size(ss);
	json_int_t dropped = json_integer_value(json_object_get(key, "dropped"));

	if (n <= SHOWN_PER_KEY)
		return BG_OK;
	tail = json_array();
	for (size_t i = n - SHOWN_PER_KEY; i < n; i++)
		if (json_array_append(tail, json_array_get(ss, i))) {
			json_decref(tail);
			return out_of_memory(ctx);
		}
	if (json_object_set_new(key, "sessions", tail) ||
	    json_object_set_new(key, "dropped", json_integer(dropped + (json_int_t)(n - SHOWN_PER_KEY))))
		return out_of_memory(ctx);
	return BG_OK;
}

/* At the end of the walk: key's most recent SHOWN_PER_KEY sessions, and how many it has in "total". */
static int key_done(json_t *key, struct bg_ctx *ctx)
{
	json_int_t dropped;
	int rc;

	json_object_del(key, "seen");
	if ((rc = keep_recent(key, ctx)))
		return rc;
	dropped = json_integer_value(json_object_get(key, "dropped"));
	json_object_del(key, "dropped");
	if (json_object_set_new(key, "total",
				json_integer(dropped + (json_int_t)json_array_size(json_object_get(key, "sessions")))))
		return out_of_memory(ctx);
	return BG_OK;
}

/* One session of a key into the key's entry, *data (NULL until its first
 * session makes it): a bg_store_row_fn over bg_store_each_of_key. */
static int key_row(const json_t *r, void *data, struct bg_ctx *ctx)
{
	json_t **entry = data, *key = *entry, *row, *ss;
	const char *kid = json_string_value(json_object_get(r, "key_id"));

	if (!kid)
		return unplaced(r, "its stored key id is not text", ctx);
	if (!key) {
		/* the gates, computers and timings of the key's sessions, each once in order
		 * of first appearance: a key whose fields leave out gate, computer or measure
		 * holds sessions of several */
		key = *entry = json_pack("{s:s, s:[], s:[], s:[], s:[], s:{}}", "id", kid, "gates", "computers",
					 "timings", "sessions", "seen");
		if (!key)
			return unplaced(r, "its key could not be added to the page", ctx);
	}
	if (note_once(key, "gates", json_object_get(r, "gate_id")) ||
	    note_once(key, "computers", json_object_get(r, "computer")) ||
	    note_once(key, "timings", json_object_get(r, "timing")))
		return unplaced(r, "its gate, computer or timing could not be added to the page", ctx);
	/* every text as the store gives it (bytes that are not UTF-8 as \xNN, as history shows them) */
	row = json_pack("{s:O, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:o, s:b, s:o, s:O?}",
			"id", json_object_get(r, "id"), "gate", json_object_get(r, "gate_id"), "computer",
			json_object_get(r, "computer"), "timing", json_object_get(r, "timing"),
			"started", json_object_get(r, "started_at"), "tier",
			json_object_get(r, "tier"), "p50", json_object_get(r, "wall_p50_ns"), "p95",
			json_object_get(r, "wall_p95_ns"), "max", json_object_get(r, "wall_max_ns"),
			"tree_peak", json_object_get(r, "tree_peak_bytes"), "gpu_peak",
			json_object_get(r, "gpu_peak_bytes"), "decision", json_object_get(r, "decision"),
			"curation", json_object_get(r, "curation"), "parity", parity_text(r), "counts",
			!bg_store_not_in_baseline(r), "why_not", why_not(r), "notes", json_object_get(r, "conditions"));
	ss = json_object_get(key, "sessions");
	if (!row || json_array_append_new(ss, row))
		return unplaced(r, "its row could not be added to the page", ctx);
	return json_array_size(ss) >= 2 * SHOWN_PER_KEY ? keep_recent(key, ctx) : BG_OK;
}

/*
 * The envelope (p50; a decision document holds wall metrics in seconds, the
 * model nanoseconds) of the latest decision among key's sessions shown that
 * computed one (block and no-baseline compute none), or NULL: a
 * bg_report_envelope_fn over the store (data), asked only for the keys the
 * page draws in full, so that a store of many keys is not read for all.
 */
static int key_envelope(const json_t *key, void *data, json_t **out, struct bg_ctx *ctx)
{
	struct bg_store *store = data;
	json_t *sessions = json_object_get(key, "sessions");
	int rc = BG_OK;

	*out = NULL;
	for (size_t k = json_array_size(sessions); store && !rc && !*out && k-- > 0;) {
		const char *d = json_string_value(json_object_get(json_array_get(sessions, k), "decision"));
		json_t *v = NULL, *m;
		size_t j;

		if (!d || strcmp(d, "block") == 0 || strcmp(d, "no-baseline") == 0)
			continue;
		if ((rc = bg_store_verdict(store, json_integer_value(json_object_get(json_array_get(sessions, k), "id")),
					   &v, ctx)))
			break;
		json_array_foreach(json_object_get(json_object_get(v, "decision_document"), "metrics"), j, m) {
			json_t *e;

			if (!json_string_value(json_object_get(m, "metric")) ||
			    strcmp(json_string_value(json_object_get(m, "metric")), "wall_p50") != 0 ||
			    !json_is_number(json_object_get(m, "centre")))
				continue;
			e = json_pack("{s:o, s:o, s:o}", "centre", nanoseconds(json_object_get(m, "centre")), "low",
				      nanoseconds(json_object_get(m, "low")), "high", nanoseconds(json_object_get(m, "high")));
			if (!e) {
				rc = unplaced(json_array_get(sessions, k), "its envelope could not be added to the page", ctx);
				break;
			}
			json_decref(*out);
			*out = e;
		}
		json_decref(v);
	}
	if (rc) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

/*
 * The store's keys, latest session newest first (the page's order), each
 * held as its latest session's id: the page asks for the entries of those
 * it draws (key_entry), so a store of many keys is never held whole.
 */
struct key_list {
	struct bg_store *store;
	long long *latest;
	size_t n, cap;
};

/* One key of the store into the list (a bg_store_row_fn over bg_store_each_key). */
static int key_listed(const json_t *r, void *data, struct bg_ctx *ctx)
{
	struct key_list *kl = data;

	if (!json_is_string(json_object_get(r, "key_id")))
		return unplaced(r, "its stored key id is not text", ctx);
	if (kl->n == kl->cap) {
		kl->cap = kl->cap ? 2 * kl->cap : 256;
		kl->latest = bg_xrealloc(kl->latest, kl->cap * sizeof(*kl->latest));
	}
	kl->latest[kl->n++] = (long long)json_integer_value(json_object_get(r, "latest"));
	return BG_OK;
}

/* Key i's model entry, from a walk over its sessions (the page's bg_report_keys.key). */
static int key_entry(size_t i, void *data, json_t **entry, struct bg_ctx *ctx)
{
	struct key_list *kl = data;
	json_t *key = NULL;
	int rc = bg_store_each_of_key(kl->store, kl->latest[i], key_row, &key, ctx);

	*entry = NULL;
	if (rc == BG_OK && !key) /* not within one read transaction */
		rc = bg_error(ctx, BG_EIO, "session %lld: its key's sessions could not be read; the "
			      "store changed while the dashboard read it: run it again",
			      kl->latest[i]);
	if (rc == BG_OK && (rc = key_done(key, ctx)) == BG_OK)
		*entry = json_incref(key);
	json_decref(key);
	return rc;
}


/*
 * BG_EUSAGE when the folder dir (an --output) is benchgate's own: its state
 * folder (.benchgate) or inside it, other than the default dashboard
 * folder there, where the store, the leases and the promotion journal live
 * (a page in the journal's folder kept a promotion from removing it, and
 * is no one's to read). A store kept elsewhere (sqlite:bench.sqlite3 at
 * the project root, or in benchmarks/) shares its folder with the
 * project's files: there only the leases and the journal are refused.
 */
static int in_state_folder(const struct bg_config *cfg, const char *dir, struct bg_ctx *ctx)
{
	static const char *const own_dirs[] = {"leases", "promote-journal"};
	struct bg_strbuf state = BG_STRBUF_INIT, own = BG_STRBUF_INIT, page = BG_STRBUF_INIT;
	const char *base;
	int rc = BG_OK;

	bg_lifecycle_state_dir(cfg, &state);
	base = strrchr(state.buf, '/') ? strrchr(state.buf, '/') + 1 : state.buf;
	bg_strbuf_addf(&own, "%s/dashboard", state.buf);
	/* the page, not the folder: one in the folder itself is in it too */
	bg_path_join(&page, dir, "index.html");
	if (strcmp(base, ".benchgate") == 0) {
		if (bg_cli_file_within(page.buf, state.buf) && !bg_cli_file_within(page.buf, own.buf))
			rc = bg_error(ctx, BG_EUSAGE,
				      "%s is benchgate's state folder or inside it (its store, leases and journals): "
				      "choose another --output (without one, the page is written in %s)",
				      bg_config_relative(cfg, dir), bg_config_relative(cfg, own.buf));
	} else {
		for (size_t i = 0; i < sizeof(own_dirs) / sizeof(own_dirs[0]) && rc == BG_OK; i++) {
			bg_strbuf_reset(&own);
			bg_strbuf_addf(&own, "%s/%s", state.buf, own_dirs[i]);
			if (bg_cli_file_within(page.buf, own.buf))
				rc = bg_error(ctx, BG_EUSAGE,
					      "%s is benchgate's %s folder or inside it (beside its store): choose "
					      "another --output",
					      bg_config_relative(cfg, dir), i ? "promotion journal" : "leases");
		}
	}
	bg_strbuf_release(&state);
	bg_strbuf_release(&own);
	bg_strbuf_release(&page);
	return rc;
}

/*
 * Whether the dashboard may replace the file at path: BG_OK when it is not
 * there, empty, or a page a dashboard wrote (its generator line, or the
 * sentence every page before that line had); code (BG_EUSAGE for an
 * --output, BG_ECHECK for the default folder) with the message for
 * another file (a project's own index.html, never replaced) and for one
 * that cannot be read (it cannot be told whose it is: a rename would
 * replace it all the same). A folder there is left to the write to report.
 */
static int page_replaceable(const char *path, const char *shown, int code, struct bg_ctx *ctx)
{
	enum { HEAD = 65536 };
	char *head;
	ssize_t n;
	bool ours;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), err;

	if (fd < 0 && errno == ENOENT)
		return BG_OK;
	if (fd < 0)
		err = errno;
	head = bg_xmalloc(HEAD + 1);
	n = fd < 0 ? -1 : read(fd, head, HEAD);
	if (fd >= 0) {
		err = errno;
		close(fd);
	}
	if (n < 0 && err == EISDIR) {
		free(head);
		return BG_OK;
	}
	if (n < 0) {
		free(head);
		return bg_error(ctx, code,
				"%s is there and cannot be read (%s), so it cannot be told whether benchgate "
				"wrote it; the dashboard never replaces another file: remove it, or choose another --output",
				shown, strerror(err));
	}
	head[n] = '\0';
	ours = n == 0 || strstr(head, "<meta name=\"generator\" content=\"benchgate\">") ||
	       strstr(head, " by benchgate. A timing is compared only with sessions of exactly the same ");
	free(head);
	if (ours)
		return BG_OK;
	return bg_error(ctx, code,
			"%s is there and is not a page benchgate wrote; the dashboard never replaces "
			"another file: remove it, or choose another --output",
			shown);
}

static int run_dashboard(struct bg_cli *cli, const struct bg_cmd *self)
{
	static const struct bg_opt opts[] = {{"output", 0, BG_OPT_VALUE, 1, false}, {0}};
	struct bg_parsed parsed;
	struct bg_config cfg;
	struct bg_registry reg;
	struct bg_store *store = NULL;
	struct bg_strbuf page = BG_STRBUF_INIT, dir = BG_STRBUF_INIT, path = BG_STRBUF_INIT, msg = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	const char *output = NULL, *shown = NULL, *what;
	char *made = NULL;
	json_t *model;
	char when[32];
	struct bg_decide_opts dopts;
	struct key_list list = {0};
	time_t now = time(NULL);
	int rc;

	if ((rc = bg_cli_parse(cli, self, opts, 0, false, on_opt, &output, &parsed)))
		return rc;
	if (output && !*output)
		return bg_cli_usage_error(self, "--output needs a folder");
	if ((rc = bg_cli_load_registry(cli, &cfg, &reg)))
		return rc;
	bg_ctx_init(&ctx);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	bg_decide_opts_init(&dopts);
	model = json_pack("{s:s, s:s, s:I}", "title", "benchgate dashboard", "generated_at", when, "window",
			  (json_int_t)dopts.window);
	/* a registry render refuses (an unknown state, a gate without one) is
	 * refused here too, with render's message: its gates could not all be
	 * counted, and the coverage table would not add up */
	rc = registry_renders(&reg, &ctx);
	if (rc == BG_OK) {
		coverage(&reg, model);
		rc = bg_store_open(cfg.store, cfg.root, BG_STORE_READ, &store, &ctx);
	}
	list.store = store;
	/* one state of the store for the whole page: the key list and every key read after it */
	if (rc == BG_OK && store && (rc = bg_store_read_begin(store, &ctx)) == BG_OK)
		rc = bg_store_each_key(store, key_listed, &list, &ctx);
	if (rc == BG_OK) {
		struct bg_report_keys keys = {list.n, key_entry, &list, key_envelope, store};

		rc = bg_report_dashboard_keys(model, &keys, &page, &ctx);
	}
	if (store)
		bg_store_read_end(store);
	if (rc == BG_OK) {
		if (output) {
			tidy_dir(&path, output);
			if (strcmp(path.buf, ".") == 0)
				bg_strbuf_adds(&dir, cfg.root);
			else
				bg_config_path(&cfg, &dir, path.buf);
			bg_strbuf_reset(&path);
		} else {
			bg_lifecycle_state_dir(&cfg, &dir);
			bg_strbuf_adds(&dir, "/dashboard");
		}
		rc = output ? in_state_folder(&cfg, dir.buf, &ctx) : BG_OK;
		if (rc == BG_OK)
			rc = bg_mkdirs_made(dir.buf, bg_config_relative(&cfg, dir.buf), &made, &ctx);
		/* something in the way can be removed; a folder this user may
		 * not write (a shared store's) is no one's to change */
		if (rc && rc != BG_EUSAGE) /* (the state folder refused: said) */
			bg_error(&ctx, rc, "%s; %s", bg_ctx_message(&ctx),
				 output ? "choose another --output"
				 : errno == ENOTDIR ? "remove what is in its way, or choose another folder with --output"
						    : "choose another folder with --output");
	}
	if (rc == BG_OK) {
		bg_path_join(&path, dir.buf, "index.html");
		shown = bg_config_relative(&cfg, path.buf);
		if ((what = bg_cli_input_at(path.buf, &reg, true)))
			rc = bg_error(&ctx, output ? BG_EUSAGE : BG_ECHECK,
				      "%s is %s; the dashboard never replaces a file the project is read from: "
				      "choose another --output", shown, what);
		else
			rc = page_replaceable(path.buf, shown, output ? BG_EUSAGE : BG_ECHECK, &ctx);
		/* a page refused leaves no folder made for it */
		if (rc)
			bg_rmdirs_made(made);
	}
	if (rc == BG_OK) {
		rc = bg_file_write_atomic(path.buf, shown, page.buf, page.len, &ctx);
		/* a page not written leaves no folder made for it */
		if (rc) {
			bg_rmdirs_made(made);
			bg_error(&ctx, rc, "%s; to write the page elsewhere, %s", bg_ctx_message(&ctx),
				 output ? "choose another --output" : "use --output DIR");
		}
	}
	if (rc) {
		bg_cli_fail(rc, bg_ctx_message(&ctx));
	} else {
		bg_strbuf_addf(&msg, "%s\n", shown);
		if (bg_cli_write(&msg, false))
			rc = BG_EIO;
	}
	free(made);
	free(list.latest);
	json_decref(model);
	bg_store_close(store);
	bg_strbuf_release(&page);
	bg_strbuf_release(&dir);
	bg_strbuf_release(&path);
	bg_strbuf_release(&msg);
	bg_ctx_release(&ctx);
	bg_registry_release(&reg);
	bg_config_release(&cfg);
	return rc;
}

const struct bg_cmd bg_cmd_dashboard = {
	"dashboard",
	"write the static HTML dashboard (coverage, gates, per-key plots)",
	"benchgate dashboard [--output DIR]",
	"  --output DIR   the folder for index.html (default .benchgate/dashboard, beside the store)\n",
	run_dashboard,
	NULL,
	false,
};
