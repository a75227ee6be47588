/*
 * experiment.c - experiment ids, manifests and the RUNS.md index
 * (see lifecycle.h).
 */
#include "benchgate/lifecycle.h"
#include "benchgate/profile.h"
#include "benchgate/format.h"
#include "benchgate/fsutil.h"
#include "benchgate/json.h"
#include "benchgate/sha256.h"
#include "benchgate/value.h"
#include "core/pyval.h"
#include "core/stops.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static bool row_of(const char *line, size_t len, const char *id);

/* The end of the RUNS.md line that starts at i, its line break included:
 * where check (Python's splitlines) ends it, so at a lone \r or a \v as at
 * a \n; a row check counts is one line here too. */
static size_t line_after(const char *text, size_t len, size_t i)
{
	for (; i < len; i++) {
		size_t n = bg_py_line_break(text + i, len - i);
		if (n)
			return i + n;
	}
	return len;
}

/* The row of experiment id in the RUNS.md text (its start, *len its length
 * with the line break), or NULL when none. */
static const char *find_row(const char *text, size_t text_len, const char *id, size_t *len)
{
	for (size_t i = 0; i < text_len;) {
		size_t end = line_after(text, text_len, i);

		if (row_of(text + i, end - i, id)) {
			*len = end - i;
			return text + i;
		}
		i = end;
	}
	return NULL;
}

/* The longest DATE-GATE part of an experiment id: with "-NNNN" after it
 * the folder name stays well below NAME_MAX (255). */
#define EXPERIMENT_BASE_MAX 200

int bg_experiment_reserve(const struct bg_config *cfg, const char *gate_id, struct bg_strbuf *id,
			  struct bg_ctx *ctx)
{
	struct bg_strbuf base = BG_STRBUF_INIT, dir = BG_STRBUF_INIT, runs = BG_STRBUF_INIT, runs_path = BG_STRBUF_INIT;
	size_t row_len;
	time_t now = time(NULL);
	struct tm tm;
	char date[16];
	int rc;

	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y%m%d", &tm);
	bg_strbuf_addf(&base, "%s-", date);
	for (const char *p = gate_id; *p; p++) {
		char c = *p;
		if (c == '.')
			c = '-';
		else if (!(c == '-' || c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
			   (c >= 'A' && c <= 'Z')))
			c = '_';
		bg_strbuf_addch(&base, c);
	}
	/* a folder name has at most 255 bytes: a long gate id is cut, and the
	 * start of its SHA-256 keeps two ids that share the start apart */
	if (base.len > EXPERIMENT_BASE_MAX) {
		char hex[65];

		if ((rc = bg_sha256_hex(gate_id, strlen(gate_id), hex, ctx)))
			goto out;
		bg_strbuf_setlen(&base, EXPERIMENT_BASE_MAX - 9);
		bg_strbuf_addf(&base, "-%.8s", hex);
	}
	bg_config_path(cfg, &dir, cfg->experiments);
	if ((rc = bg_mkdirs(dir.buf, ctx)))
		goto out;
	/* an id RUNS.md already names is taken even when its folder is gone
	 * (a git clean): its row, and a session stored with it, would be
	 * mistaken for the new experiment's */
	bg_config_path(cfg, &runs_path, cfg->runs_index);
	if (bg_is_file(runs_path.buf))
		bg_file_read(runs_path.buf, NULL, &runs, NULL);
	for (int n = 1; n < 10000; n++) {
		struct bg_strbuf path = BG_STRBUF_INIT;

		bg_strbuf_reset(id);
		bg_strbuf_addn(id, base.buf, base.len);
		if (n > 1)
			bg_strbuf_addf(id, "-%d", n);
		if (find_row(runs.buf, runs.len, id->buf, &row_len))
			continue;
		bg_strbuf_addf(&path, "%s/%s", dir.buf, id->buf);
		if (mkdir(path.buf, 0755) == 0) {
			bg_strbuf_release(&path);
			rc = BG_OK;
			goto out;
		}
		if (errno != EEXIST) {
			rc = bg_error(ctx, BG_EIO, "%s/%s: cannot create the experiment folder: %s",
				      cfg->experiments, id->buf, strerror(errno));
			bg_strbuf_release(&path);
			goto out;
		}
		bg_strbuf_release(&path);
	}
	rc = bg_error(ctx, BG_EIO,
		      "%s: no free experiment id for '%s' today: it and '%s-2' to '%s-9999' are all taken "
		      "(a folder or a RUNS.md row); move some of today's experiments of this gate elsewhere",
		      cfg->experiments, base.buf, base.buf, base.buf);
out:
	bg_strbuf_release(&runs);
	bg_strbuf_release(&runs_path);
	bg_strbuf_release(&base);
	bg_strbuf_release(&dir);
	return rc;
}

static void manifest_paths(const struct bg_config *cfg, const char *id, struct bg_strbuf *abs,
			   struct bg_strbuf *rel)
{
	bg_strbuf_addf(rel, "%s/%s/manifest.json", cfg->experiments, id);
	bg_config_path(cfg, abs, rel->buf);
}

int bg_experiment_write_manifest(const struct bg_config *cfg, const char *id, const json_t *manifest,
				 struct bg_ctx *ctx)
{
	struct bg_strbuf abs = BG_STRBUF_INIT, rel = BG_STRBUF_INIT, text = BG_STRBUF_INIT;
	int rc;

	manifest_paths(cfg, id, &abs, &rel);
	bg_json_dump_py(&text, manifest, 2, false);
	bg_strbuf_addch(&text, '\n');
	rc = bg_file_write_atomic(abs.buf, rel.buf, text.buf, text.len, ctx);
	bg_strbuf_release(&abs);
	bg_strbuf_release(&rel);
	bg_strbuf_release(&text);
	return rc;
}

/* bg_experiment_read_manifest, or with lossy bg_experiment_read_manifest_view */
static int read_manifest(const struct bg_config *cfg, const char *id, bool lossy, json_t **out, struct bg_ctx *ctx)
{
	struct bg_strbuf abs = BG_STRBUF_INIT, rel = BG_STRBUF_INIT;
	int rc;

	const char *why;

	*out = NULL;
	manifest_paths(cfg, id, &abs, &rel);
	/* a FIFO is never opened (the listing would wait on it for ever) */
	if ((why = bg_file_problem(abs.buf)) && *why) {
		rc = bg_error(ctx, BG_EIO, "%s: cannot read: %s", rel.buf, why);
	} else {
		/* read as check reads it, Python's json: NaN, a 2**70, a lone
		 * surrogate are a manifest there; what jansson cannot hold is
		 * then named (exit 3), not called invalid JSON */
		rc = bg_json_load_file_py(abs.buf, rel.buf, lossy, out, ctx);
	}
	if (!rc && (rc = bg_json_expect_object(*out, rel.buf, ctx))) {
		json_decref(*out);
		*out = NULL;
	}
	bg_strbuf_release(&abs);
	bg_strbuf_release(&rel);
	return rc;
}

int bg_experiment_read_manifest(const struct bg_config *cfg, const char *id, json_t **out, struct bg_ctx *ctx)
{
	return read_manifest(cfg, id, false, out, ctx);
}

int bg_experiment_read_manifest_view(const struct bg_config *cfg, const char *id, json_t **out, struct bg_ctx *ctx)
{
	return read_manifest(cfg, id, true, out, ctx);
}

/* Lexical components of the absolute path p (".", "" dropped, ".." taking
 * one back), at most max; how many. Each points into buf (a copy). */
static size_t path_parts(const char *p, char *buf, size_t size, const char **parts, size_t max)
{
	size_t n = 0;
	char *save = NULL, *tok;

	snprintf(buf, size, "%s", p);
	for (tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (strcmp(tok, ".") == 0)
			continue;
		if (strcmp(tok, "..") == 0) {
			n -= n > 0;
			continue;
		}
		if (n < max)
			parts[n++] = tok;
	}
	return n;
}

void bg_experiment_manifest_link(const struct bg_config *cfg, const char *id, struct bg_strbuf *out)
{
	struct bg_strbuf from = BG_STRBUF_INIT, to = BG_STRBUF_INIT, rel = BG_STRBUF_INIT;
	char fbuf[PATH_MAX], tbuf[PATH_MAX];
	const char *f[128], *t[128];
	size_t nf, nt, k = 0;

	/* from RUNS.md's folder to experiments/ID/manifest.json, both from the
	 * root: a RUNS.md kept elsewhere (docs/RUNS.md) links up and across */
	bg_config_path(cfg, &from, cfg->runs_index);
	bg_strbuf_addf(&rel, "%s/%s/manifest.json", cfg->experiments, id);
	bg_config_path(cfg, &to, rel.buf);
	nf = path_parts(from.buf, fbuf, sizeof(fbuf), f, 128);
	nt = path_parts(to.buf, tbuf, sizeof(tbuf), t, 128);
	nf -= nf > 0; /* RUNS.md's folder */
	while (k < nf && k < nt && strcmp(f[k], t[k]) == 0)
		k++;
	bg_strbuf_adds(out, "[manifest](");
	for (size_t i = k; i < nf; i++)
		bg_strbuf_adds(out, "../");
	for (size_t i = k; i < nt; i++)
		bg_strbuf_addf(out, "%s%s", i > k ? "/" : "", t[i]);
	bg_strbuf_adds(out, ")");
	bg_strbuf_release(&from);
	bg_strbuf_release(&to);
	bg_strbuf_release(&rel);
}

static const char runs_header[] =
	"# Profiling run registry\n\n"
	"This is the human index of profiling experiments. Each row points to a\n"
	"machine-readable manifest. Failed, refuted, superseded, and partial runs\n"
	"remain visible; only parity-qualified results with complete provenance are\n"
	"promoted.\n\n"
	"| id | hypothesis | setup | status | result | artifact |\n"
	"|---|---|---|---|---|---|\n";

/*
 * One cell of a row. A '|' in the text is written as the HTML entity
 * "&#124;" (Markdown shows '|'): `check`, like the reference, splits a row
 * at every '|', escaped or not, so a "\|" would shift the columns after it.
 * A '<' is "&lt;" (a renderer would take "<b>" or "<y>" for HTML and hide
 * it), and a '&' that starts a character reference is "&amp;", so a
 * question shows as it was typed.
 * Every line boundary check sees (Python's splitlines: \v, \f, U+2028 as
 * well as \n and \r) becomes a space, or the row would end there for check.
 */
/* Whether s (at a '&') reads as an HTML character reference ("&lt;",
 * "&#124;", "&#x7c;"), which Markdown would show as another character. */
static bool starts_entity(const char *s)
{
	size_t n = 1;

	if (s[n] == '#')
		n += s[n + 1] == 'x' || s[n + 1] == 'X' ? 2 : 1;
	while (isalnum((unsigned char)s[n]))
		n++;
	return n > 1 && s[n] == ';' && isalnum((unsigned char)s[n - 1]);
}

static void cell(struct bg_strbuf *out, const char *s)
{
	size_t len, n;

	bg_strbuf_adds(out, " ");
	if (!s || !*s)
		s = "n/a";
	len = strlen(s);
	for (size_t i = 0; i < len; i += n ? n : 1) {
		if ((n = bg_py_line_break(s + i, len - i)))
			bg_strbuf_addch(out, ' ');
		else if (s[i] == '|')
			bg_strbuf_adds(out, "&#124;");
		else if (s[i] == '<')
			bg_strbuf_adds(out, "&lt;");
		else if (s[i] == '&' && starts_entity(s + i))
			bg_strbuf_adds(out, "&amp;");
		else
			bg_strbuf_addch(out, s[i]);
	}
	bg_strbuf_adds(out, " |");
}

/* True when line is the table row of id ("| ID |"): its first cell, stripped
 * as check strips it (Python's str.strip: tabs and Unicode spaces too), is
 * id; a row check counts is never taken for another and added again. */
static bool row_of(const char *line, size_t len, const char *id)
{
	const char *bar;
	size_t start, n;

	if (len < 2 || line[0] != '|' || !(bar = memchr(line + 1, '|', len - 1)))
		return false;
	bg_py_strip(line + 1, (size_t)(bar - line) - 1, &start, &n);
	return n == strlen(id) && memcmp(line + 1 + start, id, n) == 0;
}

/* The cells of a table row, split at unescaped '|' and stripped as check
 * strips them (Python's str.strip); escapes kept. The first six into
 * cells; the count of them all is returned (more than six: a '|' written
 * into a cell by hand, and no cell after it is where it should be). */
static size_t split_row(const char *line, size_t len, struct bg_strbuf cells[6])
{
	size_t n = 0, i = 0;

	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (i < len && line[i] == '|')
		i++;
	while (i < len) {
		size_t start = i, skip, keep;
		while (i < len && !(line[i] == '|' && (i == 0 || line[i - 1] != '\\')))
			i++;
		bg_py_strip(line + start, i - start, &skip, &keep);
		if (n < 6)
			bg_strbuf_addn(&cells[n], line + start + skip, keep);
		n++;
		if (i < len)
			i++;
	}
	return n;
}

/* A cell kept from the row as it was (split_row), but a "\\|" in it written
 * as cell() writes a '|', "&#124;": check cuts a row at every '|'. */
static void raw_cell(struct bg_strbuf *out, const char *s)
{
	bg_strbuf_addch(out, ' ');
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] == '|') {
			bg_strbuf_adds(out, "&#124;");
			s++;
		} else {
			bg_strbuf_addch(out, *s);
		}
	}
	bg_strbuf_adds(out, " |");
}

/* Whether the line is the runs table's header: a row whose first cell,
 * stripped, is "id" in any case ("| id |", "|Id|", "| ID |"). */
static bool header_row(const char *line, size_t len)
{
	const char *bar;
	size_t start, n;

	/* (a byte order mark, as editors on Windows save one, before it) */
	if (len >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0) {
		line += 3;
		len -= 3;
	}
	if (len < 2 || line[0] != '|' || !(bar = memchr(line + 1, '|', len - 1)))
		return false;
	bg_py_strip(line + 1, (size_t)(bar - line) - 1, &start, &n);
	return n == 2 && (line[1 + start] | 0x20) == 'i' && (line[2 + start] | 0x20) == 'd';
}

/* The offset just after the last row of the table whose header starts
 * with an "id" cell (header_row; the rows: the lines starting with '|'
 * that follow it), or len when there is no such header. */
static size_t table_end(const char *text, size_t len)
{
	size_t i = 0, end_of_table = len;
	bool in_table = false;

	while (i < len) {
		size_t end = line_after(text, len, i);

		if (!in_table && header_row(text + i, end - i)) {
			in_table = true;
		} else if (in_table && text[i] != '|') {
			end_of_table = i;
			break;
		}
		i = end;
	}
	return in_table ? end_of_table : len;
}

/* Whether text[0..len) holds nothing but white space (none at all too). */
static bool blank(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isspace((unsigned char)text[i]))
			return false;
	return true;
}

size_t bg_runs_index_conflict(const char *text, size_t len)
{
	size_t line = 1;

	for (size_t i = 0; i < len; line++) {
		const char *l = text + i, *nl = memchr(l, '\n', len - i);
		size_t whole = nl ? (size_t)(nl - l) + 1 : len - i; /* with its line end */

		if (bg_format_conflict_marker(l, nl ? (size_t)(nl - l) : len - i))
			return line;
		i += whole;
	}
	return 0;
}

/* The lock that serialises RUNS.md's updates, into *fd (bg_unlock). It
 * lives in benchgate's state folder, not beside RUNS.md, where git would
 * show it to the user. */
static int runs_index_lock(const struct bg_config *cfg, int *fd, struct bg_ctx *ctx)
{
	return bg_lifecycle_lock(cfg, "runs-index.lock", cfg->runs_index, fd, ctx);
}

/* bg_runs_index_put, its lock held by the caller. */
static int runs_index_put_locked(const struct bg_config *cfg, const struct bg_runs_row *row, struct bg_ctx *ctx)
{
	struct bg_strbuf path = BG_STRBUF_INIT, old = BG_STRBUF_INIT;
	struct bg_strbuf text = BG_STRBUF_INIT, line = BG_STRBUF_INIT;
	size_t at, target = SIZE_MAX, first = SIZE_MAX;
	bool replaced = false;
	int rc;
	char *slash;

	bg_config_path(cfg, &path, cfg->runs_index);
	slash = strrchr(path.buf, '/');
	if (slash) {
		*slash = '\0';
		rc = bg_mkdirs(path.buf, ctx);
		*slash = '/';
		if (rc)
			goto out;
	}
	if (bg_is_file(path.buf)) {
		size_t marker;

		if ((rc = bg_file_read(path.buf, cfg->runs_index, &old, ctx)))
			goto out;
		/* an empty file (0 bytes, or only white space) is taken for an
		 * absent one: its rows get the table's header first */
		if (blank(old.buf, old.len)) {
			bg_strbuf_reset(&old);
			bg_strbuf_adds(&old, runs_header);
		}
		/* rewritten whole: never with a conflict left in it */
		if ((marker = bg_runs_index_conflict(old.buf, old.len))) {
			rc = bg_error(ctx, BG_EPRECOND,
				      "%s:%zu: a merge conflict marker: resolve the conflict (keep both sides' rows, one experiment a row) and commit it, then run again",
				      cfg->runs_index, marker);
			goto out;
		}
	} else {
		bg_strbuf_adds(&old, runs_header);
	}
	/* the row to replace: the one check reads for the id (a line that
	 * starts "| 20"), else the first benchgate finds by its first cell (a
	 * row check does not read, rewritten in its place) */
	for (size_t i = 0; i < old.len && target == SIZE_MAX;) {
		size_t end = line_after(old.buf, old.len, i);

		if (row_of(old.buf + i, end - i, row->id)) {
			if (end - i >= 4 && strncmp(old.buf + i, "| 20", 4) == 0)
				target = i;
			else if (first == SIZE_MAX)
				first = i;
		}
		i = end;
	}
	if (target == SIZE_MAX)
		target = first;
	for (size_t i = 0; i < old.len;) {
		size_t end = line_after(old.buf, old.len, i);

		if (!replaced && i == target) {
			struct bg_strbuf prev[6] = {BG_STRBUF_INIT, BG_STRBUF_INIT, BG_STRBUF_INIT,
						    BG_STRBUF_INIT, BG_STRBUF_INIT, BG_STRBUF_INIT};
			const char *const want[6] = {row->id, row->hypothesis, row->setup,
						     row->status, row->result, row->artifact};
			const char *const fresh[6] = {row->id, row->new_hypothesis, row->new_setup,
						      row->status, row->result, row->new_artifact};
			size_t n = split_row(old.buf + i, end - i, prev);

			/* a row of other than six cells cannot be kept cell by cell:
			 * it is written as an added row is */
			bg_strbuf_adds(&line, "|");
			for (size_t k = 0; k < 6; k++) {
				if (want[k])
					cell(&line, want[k]);
				else if (n != 6)
					cell(&line, fresh[k]);
				else
					raw_cell(&line, prev[k].buf);
				bg_strbuf_release(&prev[k]);
			}
			bg_strbuf_addch(&line, '\n');
			bg_strbuf_addn(&text, line.buf, line.len);
			replaced = true;
		} else {
			bg_strbuf_addn(&text, old.buf + i, end - i);
		}
		i = end;
	}
	if (!replaced) {
		bg_strbuf_adds(&line, "|");
		cell(&line, row->id);
		cell(&line, row->hypothesis ? row->hypothesis : row->new_hypothesis);
		cell(&line, row->setup ? row->setup : row->new_setup);
		cell(&line, row->status);
		cell(&line, row->result);
		cell(&line, row->artifact ? row->artifact : row->new_artifact);
		bg_strbuf_addch(&line, '\n');
		if (text.len && text.buf[text.len - 1] != '\n')
			bg_strbuf_addch(&text, '\n');
		at = table_end(text.buf, text.len);
		if (at == text.len) {
			bg_strbuf_addn(&text, line.buf, line.len);
		} else {
			/* inside the table, before whatever section follows it */
			struct bg_strbuf rest = BG_STRBUF_INIT;

			bg_strbuf_addn(&rest, text.buf + at, text.len - at);
			text.len = at;
			text.buf[at] = '\0';
			bg_strbuf_addn(&text, line.buf, line.len);
			bg_strbuf_addn(&text, rest.buf, rest.len);
			bg_strbuf_release(&rest);
		}
	}
	rc = bg_file_write_atomic(path.buf, cfg->runs_index, text.buf, text.len, ctx);
out:
	bg_strbuf_release(&path);
	bg_strbuf_release(&old);
	bg_strbuf_release(&text);
	bg_strbuf_release(&line);
	return rc;
}

int bg_runs_index_put(const struct bg_config *cfg, const struct bg_runs_row *row, struct bg_ctx *ctx)
{
	int fd, rc;

	if ((rc = runs_index_lock(cfg, &fd, ctx)))
		return rc;
	rc = runs_index_put_locked(cfg, row, ctx);
	bg_unlock(fd);
	return rc;
}

/* Whether the manifest records an owner pid a process can have: an integer
 * in 1..INT_MAX (a pid_t); a larger one would be truncated to another
 * process's (4294967297 to init, alive for ever, so never abandoned). */
static bool owner_pid(const json_t *manifest, pid_t *pid)
{
	json_t *v = json_object_get(json_object_get(manifest, "execution"), "pid");

	if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > INT_MAX)
		return false;
	*pid = (pid_t)json_integer_value(v);
	return true;
}

static bool owner_alive(const json_t *manifest)
{
	json_t *ex = json_object_get(manifest, "execution");
	const char *host = json_string_value(json_object_get(ex, "host"));
	struct bg_strbuf me = BG_STRBUF_INIT;
	bool elsewhere;
	pid_t pid;

	if (!owner_pid(manifest, &pid))
		return false;
	bg_lifecycle_hostname(&me);
	elsewhere = host && strcmp(host, me.buf) != 0;
	bg_strbuf_release(&me);
	if (elsewhere)
		return true; /* another host: cannot tell, so assume alive */
	/* the process that created the manifest, not one that got its pid later */
	return bg_pid_alive_since(pid, json_string_value(json_object_get(json_object_get(manifest, "timestamps"), "created")));
}

int bg_experiment_owner_state(const json_t *manifest, const char **state)
{
	json_t *ex = json_object_get(manifest, "execution");
	const char *host = json_string_value(json_object_get(ex, "host"));
	struct bg_strbuf me = BG_STRBUF_INIT;
	pid_t pid;

	bg_lifecycle_hostname(&me);
	if (!owner_pid(manifest, &pid))
		*state = "unknown";
	else if (host && strcmp(host, me.buf) != 0)
		*state = "other-host";
	else
		*state = owner_alive(manifest) ? "alive" : "dead";
	bg_strbuf_release(&me);
	return BG_OK;
}

static void new_row_cells(const struct bg_config *cfg, const char *id, const json_t *m, struct bg_runs_row *row,
			  struct bg_strbuf *setup, struct bg_strbuf *artifact);

int bg_experiment_write_pair(const struct bg_config *cfg, const char *id, const json_t *manifest,
			 const struct bg_runs_row *given, bool *manifest_written, struct bg_ctx *ctx)
{
	struct bg_strbuf setup = BG_STRBUF_INIT, artifact = BG_STRBUF_INIT;
	struct bg_runs_row filled = *given;
	const struct bg_runs_row *row = &filled;
	sigset_t old;
	int rc, fd = -1;

	/* the cells an added row (or one that cannot be kept cell by cell)
	 * takes from the manifest, where the caller gave none */
	if (!given->new_hypothesis && !given->new_setup && !given->new_artifact)
		new_row_cells(cfg, id, manifest, &filled, &setup, &artifact);

	if (manifest_written)
		*manifest_written = false;
	bg_stops_hold(&old);
	/* RUNS.md's lock first: a wait for it that ends (a holder stopped or
	 * hung, or a stop signal held back meanwhile) leaves neither written */
	rc = runs_index_lock(cfg, &fd, ctx);
	if (rc == BG_OK)
		rc = bg_experiment_write_manifest(cfg, id, manifest, ctx);
	if (rc == BG_OK && manifest_written)
		*manifest_written = true;
	if (rc == BG_OK)
		rc = runs_index_put_locked(cfg, row, ctx);
	bg_unlock(fd);
	bg_stops_release(&old);
	bg_strbuf_release(&setup);
	bg_strbuf_release(&artifact);
	return rc;
}

int bg_experiment_mark_failed(const struct bg_config *cfg, const char *id, json_t *manifest,
			      const char *reason, const char *note_name, const json_t *note,
			      bool *manifest_written, struct bg_ctx *ctx)
{
	struct bg_strbuf rel = BG_STRBUF_INIT, abs = BG_STRBUF_INIT, text = BG_STRBUF_INIT;
	struct bg_strbuf when = BG_STRBUF_INIT, result = BG_STRBUF_INIT;
	struct bg_runs_row row = {id, NULL, NULL, "failed", NULL, NULL, NULL, NULL, NULL};
	json_t *outputs, *ts, *reason_text = NULL;
	char hex[65];
	int rc;

	if (manifest_written)
		*manifest_written = false;
	bg_lifecycle_now_rfc3339(&when);
	bg_strbuf_addf(&rel, "%s/%s/%s", cfg->experiments, id, note_name);
	bg_config_path(cfg, &abs, rel.buf);
	bg_json_dump_py(&text, note, 2, true);
	bg_strbuf_addch(&text, '\n');
	/* hashed first: nothing is written when libcrypto cannot be loaded */
	if ((rc = bg_sha256_hex(text.buf, text.len, hex, ctx)))
		goto out;
	{
		/* a folder the experiment's own command removed is made again: the
		 * record of the failure (and its RUNS.md row) must not be lost with it */
		struct bg_strbuf dir = BG_STRBUF_INIT;
		bg_strbuf_addn(&dir, abs.buf, (size_t)(strrchr(abs.buf, '/') - abs.buf));
		rc = bg_mkdirs(dir.buf, ctx);
		bg_strbuf_release(&dir);
		if (rc)
			goto out;
	}
	if ((rc = bg_file_write_atomic(abs.buf, rel.buf, text.buf, text.len, ctx)))
		goto out;
	/* a reason quotes what failed (a program's words, a file's name): bytes
	 * that are not UTF-8 as \xNN, so that the manifest can hold it */
	reason_text = bg_json_text(reason);
	reason = json_string_value(reason_text);
	bg_strbuf_addf(&result, "failed: %s", reason);
	json_object_set_new(manifest, "status", json_string("failed"));
	json_object_set_new(manifest, "failure_reason", json_string(reason));
	ts = json_object_get(manifest, "timestamps");
	if (!json_is_object(ts)) {
		ts = json_object();
		json_object_set_new(manifest, "timestamps", ts);
	}
	json_object_set_new(ts, "finished", json_string(when.buf));
	outputs = json_object_get(manifest, "outputs");
	if (!json_is_array(outputs)) {
		outputs = json_array();
		json_object_set_new(manifest, "outputs", outputs);
	}
	json_array_append_new(outputs, json_pack("{s:s, s:s, s:s}", "artifact", rel.buf, "sha256", hex,
						 "result", result.buf));
	row.result = result.buf;
	/* (a row lost before, killed between the first manifest and the first
	 * row, is added whole, as repair adds it: bg_experiment_write_pair) */
	rc = bg_experiment_write_pair(cfg, id, manifest, &row, manifest_written, ctx);
out:
	json_decref(reason_text);
	bg_strbuf_release(&rel);
	bg_strbuf_release(&abs);
	bg_strbuf_release(&text);
	bg_strbuf_release(&when);
	bg_strbuf_release(&result);
	return rc;
}

/* The files benchgate writes atomically in an experiment's folder. */
static const char *const folder_files[] = {"manifest.json", "runs.jsonl", "session.json", "error.json",
					   "interrupted.json", "abandoned.json", NULL};

long bg_experiment_leftover_pid(const char *name)
{
	long pid = -1;

	for (size_t k = 0; folder_files[k] && pid < 0; k++)
		pid = bg_atomic_temp_pid(name, folder_files[k]);
	return pid;
}

/* Removes from dir the temporaries of base (or, base NULL, of the files of
 * an experiment's folder) whose writer is no live process. */
static void remove_dead_in(const char *dir, const char *base)
{
	const char *one[2] = {base, NULL};

	bg_atomic_remove_dead(dir, base ? one : folder_files);
}

void bg_experiment_remove_leftovers(const struct bg_config *cfg, const char *id)
{
	struct bg_strbuf path = BG_STRBUF_INIT, target = BG_STRBUF_INIT, dir = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	char *slash;

	/* RUNS.md's: beside the file the writer replaces (a link's target) */
	bg_ctx_init(&ctx);
	bg_config_path(cfg, &path, cfg->runs_index);
	if (bg_atomic_target(path.buf, cfg->runs_index, &target, &ctx) == BG_OK && (slash = strrchr(target.buf, '/'))) {
		*slash = '\0';
		remove_dead_in(target.buf, slash + 1);
	}
	bg_ctx_release(&ctx);
	/* an experiment's, or every experiment's */
	bg_config_path(cfg, &dir, cfg->experiments);
	if (id) {
		bg_strbuf_addf(&dir, "/%s", id);
		remove_dead_in(dir.buf, NULL);
	} else {
		DIR *d = opendir(dir.buf);
		struct dirent *e;

		while (d && (e = readdir(d))) {
			struct bg_strbuf sub = BG_STRBUF_INIT;

			if (e->d_name[0] == '.')
				continue;
			bg_strbuf_addf(&sub, "%s/%s", dir.buf, e->d_name);
			if (bg_is_dir(sub.buf))
				remove_dead_in(sub.buf, NULL);
			bg_strbuf_release(&sub);
		}
		if (d)
			closedir(d);
	}
	bg_strbuf_release(&path);
	bg_strbuf_release(&target);
	bg_strbuf_release(&dir);
}

bool bg_experiment_folder_bare(const struct bg_config *cfg, const char *id)
{
	struct bg_strbuf dir = BG_STRBUF_INIT;
	struct dirent *e;
	bool bare = true;
	DIR *d;

	bg_config_path(cfg, &dir, cfg->experiments);
	bg_strbuf_addf(&dir, "/%s", id);
	if (!(d = opendir(dir.buf))) {
		bg_strbuf_release(&dir);
		return false;
	}
	/* a temporary file of a live writer: a run creating it right now */
	while (bare && (e = readdir(d))) {
		long pid = bg_experiment_leftover_pid(e->d_name);

		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
		    (pid < 0 || (pid != (long)getpid() && bg_pid_alive(pid))))
			bare = false;
	}
	closedir(d);
	bg_strbuf_release(&dir);
	return bare;
}

/* BG_ECHECK for experiment id when its folder is bare: nothing to act on. */
static int bare_folder(const struct bg_config *cfg, const char *id, const char *what, struct bg_ctx *ctx)
{
	return bg_error(ctx, BG_ECHECK,
			"%s/%s: no manifest.json (a run killed as it created the experiment leaves its folder so): there is nothing to %s; remove the folder ('rm -r %s/%s')",
			cfg->experiments, id, what, cfg->experiments, id);
}

/* BG_OK when id names an experiment folder; BG_EUSAGE for an id that is
 * empty, not one line of UTF-8 text, holds a '/' or starts with '.';
 * BG_ECHECK for one with no folder. */
static int known_id(const struct bg_config *cfg, const char *id, struct bg_ctx *ctx)
{
	struct bg_strbuf dir = BG_STRBUF_INIT, rel = BG_STRBUF_INIT;
	const char *problem;
	struct stat st;
	bool known, link;

	if (!*id)
		return bg_error(ctx, BG_EUSAGE, "'' is not an experiment id; see 'benchgate experiments'");
	/* an id is a folder name the manifest and RUNS.md also hold as text:
	 * one line of UTF-8 (so the failure note can be written at all); the
	 * terminal shows its odd bytes as \xNN (bg_cli_fail) */
	if ((problem = bg_format_line_problem(id)))
		return bg_error(ctx, BG_EUSAGE, "'%s' is not an experiment id: %s", id, problem);
	for (const char *p = id; *p; p++)
		if (*p == '/' || (p == id && *p == '.'))
			return bg_error(ctx, BG_EUSAGE, "'%s' is not an experiment id", id);
	/* an id with no folder is unknown (exit 1), not an I/O failure */
	bg_strbuf_addf(&rel, "%s/%s", cfg->experiments, id);
	bg_config_path(cfg, &dir, rel.buf);
	known = bg_is_dir(dir.buf);
	link = lstat(dir.buf, &st) == 0 && S_ISLNK(st.st_mode);
	bg_strbuf_release(&dir);
	bg_strbuf_release(&rel);
	if (!known)
		return bg_error(ctx, BG_ECHECK, "no experiment '%s' under %s/; see 'benchgate experiments'", id,
				cfg->experiments);
	/* a link to another experiment's folder: its manifest names that one,
	 * and a row written for the link's name would be a second row */
	if (link)
		return bg_error(ctx, BG_ECHECK,
				"'%s' under %s/ is a link to a folder, not an experiment's own folder: name the experiment it leads to",
				id, cfg->experiments);
	if ((problem = bg_experiment_id_unnameable(id)))
		return bg_error(ctx, BG_ECHECK,
				"experiment '%s': no RUNS.md row can name it (%s): rename its folder and its manifest's experiment_id",
				id, problem);
	return BG_OK;
}

const char *bg_experiment_id_unnameable(const char *id)
{
	size_t start, len;
	const char *problem;

	if ((problem = bg_format_line_problem(id)))
		return problem;
	if (strchr(id, '|') || strchr(id, '<') || strchr(id, '&'))
		return "it holds '|', '<' or '&', which a row's cell writes otherwise";
	bg_py_strip(id, strlen(id), &start, &len);
	if (start || len != strlen(id))
		return "it begins or ends with a space, which check strips from a row's cell";
	return NULL;
}

enum bg_row_state bg_experiment_row_state(const char *runs, size_t len, const struct bg_value *rows, const char *id,
					  const json_t *manifest, bool any_status, struct bg_strbuf *have,
					  size_t *nrows)
{
	const char *status = json_string_value(json_object_get(manifest, "status")), *want, *row;
	struct bg_strbuf cells[6] = {BG_STRBUF_INIT, BG_STRBUF_INIT, BG_STRBUF_INIT,
				     BG_STRBUF_INIT, BG_STRBUF_INIT, BG_STRBUF_INIT};
	const struct bg_value *list;
	struct bg_arena *a = NULL;
	enum bg_row_state state;
	size_t row_len;

	bg_strbuf_reset(have);
	*nrows = 0;
	/* only an experiment that has ended, unless any_status: a running
	 * one's row is its owner's to write */
	if (!status || (!any_status && strcmp(status, "completed") != 0 && strcmp(status, "failed") != 0))
		return BG_ROW_AGREES;
	/* (an invalid status is check's to report as such) */
	if (!(want = bg_profile_runs_status(status)))
		return BG_ROW_AGREES;
	if (strncmp(id, "20", 2) != 0) {
		row = runs ? find_row(runs, len, id, &row_len) : NULL;
		/* check reads no row for an id that does not start "20" (the
		 * reference's rule): judged by the row as benchgate finds it */
		if (!row)
			return BG_ROW_MISSING;
		*nrows = 1;
		if (split_row(row, row_len, cells) > 3)
			bg_strbuf_adds(have, cells[3].buf);
		state = strncmp(have->buf ? have->buf : "", want, strlen(want)) ? BG_ROW_SAYS : BG_ROW_AGREES;
		for (int k = 0; k < 6; k++)
			bg_strbuf_release(&cells[k]);
		return state;
	}
	/* as check reads the rows (bg_profile_runs_rows), so that what the
	 * listing and repair call agreeing is what check passes */
	if (!rows && runs)
		rows = bg_profile_runs_rows(a = bg_arena_new(), runs, len);
	list = rows ? bg_value_get(rows, id) : NULL;
	*nrows = bg_value_size(list);
	if (*nrows > 1) {
		state = BG_ROW_REPEATED;
	} else if (*nrows == 1) {
		bg_strbuf_adds(have, bg_value_str(bg_value_at(list, 0)));
		state = strncmp(have->buf, want, strlen(want)) ? BG_ROW_SAYS : BG_ROW_AGREES;
	} else {
		/* looked for only here: a listing of many experiments, most
		 * with their row, stays linear */
		state = runs && find_row(runs, len, id, &row_len) ? BG_ROW_UNREAD : BG_ROW_MISSING;
	}
	bg_arena_free(a);
	return state;
}

/* The result an output of the manifest records: the last whose artifact
 * ends with suffix ("": any), or (suffix NULL) whose result starts
 * "failed: ". */
static const char *output_result(const json_t *manifest, const char *suffix)
{
	const char *found = NULL;
	json_t *o;
	size_t i;

	json_array_foreach(json_object_get(manifest, "outputs"), i, o) {
		const char *art = json_string_value(json_object_get(o, "artifact"));
		const char *res = json_string_value(json_object_get(o, "result"));
		size_t n = art && suffix ? strlen(art) : 0;

		if (!res || (suffix && !art))
			continue;
		if (suffix ? n >= strlen(suffix) && strcmp(art + n - strlen(suffix), suffix) == 0
			   : strncmp(res, "failed: ", 8) == 0)
			found = res;
	}
	return found;
}

/* The cells of a row added for manifest m of experiment id, as run writes
 * them (less the counts): its question, "COMPUTER; gate G; tier T" (none
 * for a manifest that names no gate, one written by hand) into setup, the
 * manifest's link into artifact. */
static void new_row_cells(const struct bg_config *cfg, const char *id, const json_t *m, struct bg_runs_row *row,
			  struct bg_strbuf *setup, struct bg_strbuf *artifact)
{
	const json_t *params = json_object_get(m, "parameters");

	row->new_hypothesis = json_string_value(json_object_get(m, "question"));
	if (json_string_value(json_object_get(json_object_get(params, "gate"), "id"))) {
		bg_strbuf_addf(setup, "%s; gate %s; tier %s",
			       bg_json_str_or(json_object_get(json_object_get(m, "execution"), "computer"),
					      "undetected computer"),
			       json_string_value(json_object_get(json_object_get(params, "gate"), "id")),
			       bg_json_str_or(json_object_get(params, "tier"), "n/a"));
		row->new_setup = setup->buf;
	}
	bg_experiment_manifest_link(cfg, id, artifact);
	row->new_artifact = artifact->buf;
}

/* Rewrites id's RUNS.md row from its ended manifest m (see
 * bg_experiment_repair_row); the cells a row already has but the status and
 * result are kept, a missing row gets them from the manifest. */
static int put_row_from_manifest(const struct bg_config *cfg, const char *id, const json_t *m, struct bg_ctx *ctx)
{
	const char *status = json_string_value(json_object_get(m, "status"));
	const char *reason = json_string_value(json_object_get(m, "failure_reason"));
	struct bg_strbuf result = BG_STRBUF_INIT, setup = BG_STRBUF_INIT, artifact = BG_STRBUF_INIT;
	struct bg_runs_row row = {id, NULL, NULL, bg_profile_runs_status(status), NULL, NULL, NULL, NULL, NULL};
	int rc;

	/* what the writer of the row would have written: the note of a
	 * failure, else the session's one-line result (runs.jsonl's) */
	if (strcmp(status, "failed") == 0 && output_result(m, NULL))
		bg_strbuf_adds(&result, output_result(m, NULL));
	else if (output_result(m, "/runs.jsonl"))
		bg_strbuf_adds(&result, output_result(m, "/runs.jsonl"));
	else if (strcmp(status, "failed") == 0)
		bg_strbuf_addf(&result, "failed: %s", reason ? reason : "see the manifest");
	else if (output_result(m, "")) /* a manifest not of run's: its last output's */
		bg_strbuf_adds(&result, output_result(m, ""));
	row.result = result.len ? result.buf : "n/a";
	/* an added row gets the manifest's cells; a replaced one keeps its own */
	new_row_cells(cfg, id, m, &row, &setup, &artifact);
	rc = bg_runs_index_put(cfg, &row, ctx);
	bg_strbuf_release(&result);
	bg_strbuf_release(&setup);
	bg_strbuf_release(&artifact);
	return rc;
}

/* Whether id's row disagrees with its ended manifest m (have: the row's
 * status, "" when none; *state, when not NULL, how: bg_experiment_row_state);
 * BG_EIO when RUNS.md is there but cannot be read, BG_ECHECK when it has
 * several rows for id (which to keep is a person's call). */
static int row_disagrees(const struct bg_config *cfg, const char *id, const json_t *m, bool *stale,
			 struct bg_strbuf *have, enum bg_row_state *state, struct bg_ctx *ctx)
{
	struct bg_strbuf path = BG_STRBUF_INIT, text = BG_STRBUF_INIT;
	int rc = BG_OK;

	bg_config_path(cfg, &path, cfg->runs_index);
	if (bg_is_file(path.buf))
		rc = bg_file_read(path.buf, cfg->runs_index, &text, ctx);
	if (!rc) {
		size_t nrows;
		enum bg_row_state st = bg_experiment_row_state(text.len ? text.buf : NULL, text.len, NULL, id, m,
								   false, have, &nrows);

		if (state)
			*state = st;
		if (st == BG_ROW_REPEATED)
			rc = bg_error(ctx, BG_ECHECK,
				      "%s has %zu rows for experiment %s, and check wants one: remove all but one by hand, then run this again",
				      cfg->runs_index, nrows, id);
		*stale = st != BG_ROW_AGREES;
	}
	bg_strbuf_release(&path);
	bg_strbuf_release(&text);
	return rc;
}

/* The manifest of experiment id, for repair or abandon (what) to act on:
 * the id checked (known_id), the leftovers of a killed writer removed, a
 * folder without a manifest refused (bare_folder); *m the caller's. */
static int manifest_to_act_on(const struct bg_config *cfg, const char *id, const char *what, json_t **m,
			      struct bg_ctx *ctx)
{
	int rc;

	if ((rc = known_id(cfg, id, ctx)))
		return rc;
	bg_experiment_remove_leftovers(cfg, id);
	if (bg_experiment_folder_bare(cfg, id))
		return bare_folder(cfg, id, what, ctx);
	{
		/* a folder of other files (notes, shared assets) is no experiment */
		struct bg_strbuf abs = BG_STRBUF_INIT, rel = BG_STRBUF_INIT;
		struct stat st;
		bool none;

		manifest_paths(cfg, id, &abs, &rel);
		none = lstat(abs.buf, &st) != 0 && errno == ENOENT;
		if (none)
			rc = bg_error(ctx, BG_ECHECK, "no experiment '%s': %s/%s holds no manifest.json, so check counts no experiment there",
				      id, cfg->experiments, id);
		bg_strbuf_release(&abs);
		bg_strbuf_release(&rel);
		if (none)
			return rc;
	}
	/* repair only reads the manifest; abandon writes it back whole */
	return read_manifest(cfg, id, strcmp(what, "repair") == 0, m, ctx);
}

int bg_experiment_repair_row(const struct bg_config *cfg, const char *id, struct bg_strbuf *was,
			     enum bg_row_state *before, bool *repaired, struct bg_ctx *ctx)
{
	json_t *m = NULL;
	const char *status;
	bool stale = false;
	int rc;

	*repaired = false;
	if ((rc = manifest_to_act_on(cfg, id, "repair", &m, ctx)))
		return rc;
	status = json_string_value(json_object_get(m, "status"));
	if (status && strcmp(status, "running") == 0)
		rc = bg_error(ctx, BG_ECHECK,
			      "experiment '%s' is running: its RUNS.md row is written when it ends; if its owner is gone, abandon it ('benchgate experiments abandon %s --why TEXT')",
			      id, id);
	else if (!status || (strcmp(status, "completed") != 0 && strcmp(status, "failed") != 0))
		rc = bg_error(ctx, BG_ECHECK,
			      "experiment '%s' is %s: benchgate writes the RUNS.md row of a completed or failed experiment only; edit that row by hand",
			      id, status ? status : "without a status");
	else if (!(rc = row_disagrees(cfg, id, m, &stale, was, before, ctx)) && stale &&
		 !(rc = put_row_from_manifest(cfg, id, m, ctx)))
		*repaired = true;
	json_decref(m);
	return rc;
}

int bg_experiment_abandon(const struct bg_config *cfg, const char *id, const char *why, bool owner_gone,
			  struct bg_strbuf *was, enum bg_row_state *before, const char **ended, struct bg_ctx *ctx)
{
	json_t *m = NULL, *note;
	struct bg_strbuf reason = BG_STRBUF_INIT, when = BG_STRBUF_INIT;
	const char *status, *problem, *owner;
	bool stale = false;
	int rc, lock = -1;

	*ended = NULL;
	bg_strbuf_reset(was);
	/* recorded in the manifest, RUNS.md and the listing, and read back on
	 * a terminal: one line of UTF-8 text, as a curation reason (a usage
	 * error, said before the experiment is looked for) */
	if ((problem = bg_format_line_problem(why)))
		return bg_error(ctx, BG_EUSAGE, "the reason (--why TEXT) must be one line of text: %s", problem);
	if (bg_profile_private_path(why))
		return bg_error(ctx, BG_EUSAGE,
				"the reason holds an absolute private path ('%s'), which 'benchgate check' rejects in a manifest; say it without the path",
				why);
	/* one abandon at a time: the state is read and written under one lock,
	 * so that a second abandon finds the experiment failed (both said
	 * they recorded their reason, and the note, the manifest and its
	 * hash of the note disagreed) */
	if ((rc = bg_lifecycle_lock(cfg, "abandon.lock", cfg->experiments, &lock, ctx)))
		return rc;
	if ((rc = manifest_to_act_on(cfg, id, "abandon", &m, ctx)))
		goto out;
	status = json_string_value(json_object_get(m, "status"));
	/* ended (completed or failed), but its RUNS.md row disagrees: the write
	 * of the row was lost (benchgate killed between the two, RUNS.md
	 * unwritable then); bring it in line, the manifest unchanged */
	if ((rc = row_disagrees(cfg, id, m, &stale, was, before, ctx)))
		goto out;
	if (stale) {
		if ((rc = put_row_from_manifest(cfg, id, m, ctx)) == BG_OK)
			*ended = strcmp(status, "completed") == 0 ? "completed" : "failed";
		goto out;
	}
	bg_strbuf_reset(was);
	if (!status || strcmp(status, "running") != 0) {
		rc = bg_error(ctx, BG_ECHECK, "experiment '%s' is %s, not running: there is nothing to abandon",
			      id, status ? status : "without a status");
		goto out;
	}
	bg_experiment_owner_state(m, &owner);
	if (strcmp(owner, "other-host") == 0 && !owner_gone) {
		rc = bg_error(ctx, BG_EPRECOND,
			      "experiment '%s' was started on host %s (pid %lld), whose processes benchgate cannot see from here: stop it there, or, if it has stopped (the host rebooted, the container is gone), abandon it with --owner-gone",
			      id, bg_json_str_or(json_object_get(json_object_get(m, "execution"), "host"), "?"),
			      (long long)json_integer_value(json_object_get(json_object_get(m, "execution"), "pid")));
		goto out;
	}
	if (strcmp(owner, "other-host") != 0 && owner_alive(m)) {
		rc = bg_error(ctx, BG_EPRECOND,
			      "experiment '%s' is still running (pid %lld on %s); stop it first (SIGINT records it as interrupted)",
			      id, (long long)json_integer_value(json_object_get(json_object_get(m, "execution"), "pid")),
			      /* no host recorded is taken for this one */
			      bg_json_str_or(json_object_get(json_object_get(m, "execution"), "host"), "this host"));
		goto out;
	}
	bg_strbuf_addf(&reason, "abandoned: %s", why);
	bg_lifecycle_now_rfc3339(&when);
	note = json_pack("{s:s, s:s, s:s, s:O}", "experiment_id", id, "reason", why, "abandoned_at", when.buf,
			 "owner_pid", json_object_get(json_object_get(m, "execution"), "pid") ?
			 json_object_get(json_object_get(m, "execution"), "pid") : json_null());
	rc = bg_experiment_mark_failed(cfg, id, m, reason.buf, "abandoned.json", note, NULL, ctx);
	json_decref(note);
out:
	bg_unlock(lock);
	json_decref(m);
	bg_strbuf_release(&reason);
	bg_strbuf_release(&when);
	return rc;
}
