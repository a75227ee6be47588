/*
 * cli.c - option parsing, usage and error printing shared by every verb, and
 * stored text shown on a terminal without its control bytes.
 */
#include "cli/cli.h"
#include "cli/inputs.h"
#include "benchgate/format.h"
#include "benchgate/fsutil.h"
#include "benchgate/json.h"
#include "benchgate/lifecycle.h"
#include "benchgate/measure.h"
#include "core/bytes.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int bg_cli_print_help(const struct bg_cmd *cmd)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	int rc;

	bg_strbuf_addf(&sb, "usage: %s\n\n%s\n", cmd->usage, cmd->summary);
	if (cmd->options)
		bg_strbuf_addf(&sb, "\noptions:\n%s", cmd->options);
	rc = bg_cli_write(&sb, false);
	bg_strbuf_release(&sb);
	return rc;
}

int bg_cli_usage_error(const struct bg_cmd *cmd, const char *fmt, ...)
{
	struct bg_strbuf sb = BG_STRBUF_INIT, msg = BG_STRBUF_INIT;
	va_list ap;

	bg_strbuf_addf(&sb, "benchgate %s: ", cmd->name);
	va_start(ap, fmt);
	bg_strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	/* the message quotes what was typed, or a library's message */
	bg_cli_add_shown(&sb, msg.buf);
	bg_strbuf_release(&msg);
	bg_strbuf_addf(&sb, "\nusage: %s\n", cmd->usage);
	bg_cli_write(&sb, true);
	bg_strbuf_release(&sb);
	return BG_EUSAGE;
}

const char *bg_cli_no_options(int id, const char *value, void *data)
{
	(void)id;
	(void)value;
	(void)data;
	return "unknown option";
}

int bg_cli_fail(int status, const char *msg)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;

	/* a message quotes names and texts from files, stores and programs */
	bg_strbuf_adds(&sb, "benchgate: ");
	bg_cli_add_shown(&sb, msg && *msg ? msg : "failed");
	bg_strbuf_addch(&sb, '\n');
	fputs(sb.buf, stderr);
	bg_strbuf_release(&sb);
	return status;
}

/* Whether stdout (or stderr) is a terminal; asked once per stream. */
static bool is_terminal(bool to_stderr)
{
	static int known[2] = {-1, -1};
	int i = to_stderr ? 1 : 0;

	if (known[i] < 0)
		known[i] = isatty(to_stderr ? STDERR_FILENO : STDOUT_FILENO) == 1;
	return known[i] == 1;
}

/* The LEN bytes at s (s[len] is '\0') as bg_cli_add_shown shows them;
 * with keep_layout, newlines and tabs are kept as they are. */
static void add_shown_n(struct bg_strbuf *out, const char *s, size_t len, bool keep_layout)
{
	const char *end = s + len;
	size_t k;

	while (s < end) {
		if (keep_layout && (*s == '\n' || *s == '\t')) {
			bg_strbuf_addch(out, *s++);
			continue;
		}
		if ((k = bg_cli_control_at(s)) == 0) {
			k = bg_cli_char_at(s);
			bg_strbuf_addn(out, s, k);
			s += k;
			continue;
		}
		for (; k; k--)
			bg_strbuf_addf(out, "\\x%02x", (unsigned char)*s++);
	}
}

int bg_cli_write(const struct bg_strbuf *sb, bool to_stderr)
{
	FILE *f = to_stderr ? stderr : stdout;
	struct bg_strbuf shown = BG_STRBUF_INIT;
	const struct bg_strbuf *w = sb;
	int rc = BG_OK;

	/* a person reads a terminal: what the registry or a store holds must
	 * not move the cursor or change colours there; a pipe gets the bytes */
	if (sb->len && is_terminal(to_stderr)) {
		add_shown_n(&shown, sb->buf, sb->len, true);
		w = &shown;
	}
	if ((w->len && fwrite(w->buf, 1, w->len, f) != w->len) || fflush(f) != 0) {
		rc = BG_EIO;
		if (!to_stderr)
			bg_cli_stdout_failed(errno);
	}
	bg_strbuf_release(&shown);
	return rc;
}

/* Whether the reference's Python, started in this environment, writes a
 * lone surrogate from U+DC80 to U+DCFF as its byte (bg_value_py_stdio_escapes):
 * its locale is read as Python sets it up, then this process's is put back. */
static bool python_escapes(void)
{
	static int known = -1;

	if (known < 0) {
		const char *now = setlocale(LC_CTYPE, NULL);
		char *was = bg_xstrdup(now ? now : "C");

		known = bg_value_py_stdio_escapes(setlocale(LC_CTYPE, ""), getenv("PYTHONUTF8"));
		setlocale(LC_CTYPE, was);
		free(was);
	}
	return known;
}

int bg_cli_write_text(const struct bg_strbuf *sb)
{
	size_t at = bg_value_surrogate_find(sb->buf, sb->len), from = 0;
	struct bg_strbuf msg = BG_STRBUF_INIT, bytes = BG_STRBUF_INIT;
	int rc;

	if (at == sb->len)
		return bg_cli_write(sb, false);
	for (; at < sb->len; at = from + bg_value_surrogate_find(sb->buf + from, sb->len - from)) {
		unsigned c = bg_surrogate_value((const unsigned char *)sb->buf + at);

		if (c < 0xdc80 || c > 0xdcff || !python_escapes())
			break;
		bg_strbuf_addn(&bytes, sb->buf + from, at - from);
		bg_strbuf_addch(&bytes, (char)(c - 0xdc00));
		from = at + 3;
	}
	if (at == sb->len) { /* each one the byte it stands for, as Python writes it */
		bg_strbuf_addn(&bytes, sb->buf + from, sb->len - from);
		rc = bg_cli_write(&bytes, false);
		bg_strbuf_release(&bytes);
		return rc;
	}
	bg_strbuf_release(&bytes);
	bg_strbuf_adds(&msg, "cannot print the output: its ");
	bg_value_surrogate_say(&msg, sb->buf, sb->len, at, 1);
	bg_strbuf_adds(&msg, " (Python's print fails on it too); replace the escape in the JSON it came from");
	bg_cli_fail(BG_ECHECK, msg.buf);
	bg_strbuf_release(&msg);
	return BG_ECHECK;
}

bool bg_cli_stdout_reader_gone(void)
{
	struct stat st;
	struct pollfd p = {.fd = STDOUT_FILENO, .events = POLLOUT, .revents = 0};

	/* the write end of a pipe without a reader polls as an error */
	return fstat(STDOUT_FILENO, &st) == 0 && S_ISFIFO(st.st_mode) && poll(&p, 1, 0) == 1 &&
	       (p.revents & POLLERR);
}

void bg_cli_stdout_failed(int err)
{
	static bool said;

	if (said)
		return;
	said = true;
	/* a reader that closed its end of a pipe chose to stop reading */
	if (err == EPIPE)
		return;
	fprintf(stderr, "benchgate: standard output: cannot write: %s\n", strerror(err ? err : EIO));
}

int bg_cli_rows_add(const json_t *r, void *data, struct bg_ctx *ctx)
{
	struct bg_cli_rows *rows = data;
	struct bg_strbuf one = BG_STRBUF_INIT;
	const char *p, *nl;

	(void)ctx;
	if (!rows->json) {
		const char *timing = json_string_value(json_object_get(r, "timing"));

		if (rows->n++ == 0)
			rows->header(rows->out);
		rows->row(rows->out, r);
		if (timing && strcmp(timing, "reported") == 0 && rows->reported++ < 10)
			rows->reported_id[rows->reported - 1] = (long long)json_integer_value(json_object_get(r, "id"));
		return BG_OK;
	}
	bg_strbuf_adds(rows->out, rows->n++ ? ",\n  " : "[\n  ");
	bg_json_dump_py(&one, r, 2, false);
	/* one level deeper: two more spaces after each line break (the text is
	 * ASCII with every control byte escaped, so a break is never in a string) */
	for (p = one.buf; (nl = strchr(p, '\n')); p = nl + 1) {
		bg_strbuf_addn(rows->out, p, (size_t)(nl - p) + 1);
		bg_strbuf_addn(rows->out, "  ", 2);
	}
	bg_strbuf_adds(rows->out, p);
	bg_strbuf_release(&one);
	return BG_OK;
}

void bg_cli_rows_end(struct bg_cli_rows *rows)
{
	size_t shown = rows->reported < 10 ? rows->reported : 10;

	if (rows->json) {
		bg_strbuf_adds(rows->out, rows->n ? "\n]\n" : "[]\n");
		return;
	}
	if (rows->reported == 0)
		return;
	if (rows->reported == rows->n) {
		bg_strbuf_adds(rows->out, "timing reported: p50, p95 and max are the program's own samples, not "
					  "process wall time\n");
		return;
	}
	bg_strbuf_addf(rows->out, "timing reported: p50, p95 and max of session%s", rows->reported == 1 ? "" : "s");
	for (size_t i = 0; i < shown; i++)
		bg_strbuf_addf(rows->out, "%s%lld", i ? ", " : " ", rows->reported_id[i]);
	if (rows->reported > shown)
		bg_strbuf_addf(rows->out, " and %zu more", rows->reported - shown);
	bg_strbuf_adds(rows->out, " are the program's own samples, not process wall time\n");
}

/* The length of the well-formed UTF-8 character s starts with, else 0. */
static size_t utf8_char(const unsigned char *s)
{
	return s[0] < 0x80 ? 1 : bg_utf8_len(s);
}

size_t bg_cli_control_at(const char *s)
{
	return bg_format_control_at(s);
}

size_t bg_cli_char_at(const char *s)
{
	size_t n = utf8_char((const unsigned char *)s);

	return n ? n : 1;
}

bool bg_cli_needs_showing(const char *s)
{
	for (; s && *s; s += bg_cli_char_at(s))
		if (bg_cli_control_at(s))
			return true;
	return false;
}

void bg_cli_add_shown(struct bg_strbuf *out, const char *s)
{
	if (!s) {
		bg_strbuf_adds(out, "n/a");
		return;
	}
	add_shown_n(out, s, strlen(s), false);
}

void bg_cli_end_line(struct bg_strbuf *out)
{
	size_t n = out->len;

	while (n && out->buf[n - 1] == ' ')
		n--;
	bg_strbuf_setlen(out, n);
	bg_strbuf_addch(out, '\n');
}

const char *bg_cli_shown(struct bg_strbuf *tmp, const char *s)
{
	bg_strbuf_reset(tmp);
	bg_cli_add_shown(tmp, s);
	return tmp->buf;
}

/*
 * The name path's file has or will have as the last of its path, there or
 * not yet, or NULL when that takes resolving: the last name as written,
 * unless it is a link (there), "." or "..". The caller's lstat of path is
 * st (ok: whether it succeeded).
 */
static const char *final_name(const char *path, bool ok, const struct stat *st)
{
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;

	if ((ok && S_ISLNK(st->st_mode)) || !*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return NULL;
	return name;
}

/*
 * Whether the paths a and b name one file, there or not yet: links
 * followed (a link to nothing too), folders not made yet as they will be
 * named, a second hard link found. Every verb reads the config, so the
 * common cases cost a few lstat and stat calls: two files there are one
 * when their inodes are; two that will end with different names are two.
 */
static bool same_file_named(const char *a, const char *b)
{
	struct stat la, lb, sa, sb;
	bool ok_a = lstat(a, &la) == 0, ok_b = lstat(b, &lb) == 0;
	bool there_a = ok_a && (!S_ISLNK(la.st_mode) ? (sa = la, true) : stat(a, &sa) == 0);
	bool there_b = ok_b && (!S_ISLNK(lb.st_mode) ? (sb = lb, true) : stat(b, &sb) == 0);
	const char *na = final_name(a, ok_a, &la), *nb = final_name(b, ok_b, &lb);
	char *fa, *fb;
	bool same;

	if (there_a && there_b)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	if (na && nb && strcmp(na, nb) != 0) /* one made later is never a second name of the other */
		return false;
	fa = bg_cli_named_later_followed(a);
	fb = bg_cli_named_later_followed(b);
	same = fa && fb && strcmp(fa, fb) == 0;
	free(fa);
	free(fb);
	return same;
}

/*
 * BG_ECHECK when the sqlite store is the machine lease's lock file (by name,
 * there or not yet, links followed, a link to nothing too): a run writes
 * its record into that file while it holds the machine, over the store's
 * pages. The lease lives outside the project, so the config cannot know
 * it; checked here, where every verb reads the config.
 */
static int store_not_machine_lease(const struct bg_config *cfg, struct bg_ctx *ctx)
{
	struct bg_strbuf store = BG_STRBUF_INIT, lease = BG_STRBUF_INIT;
	struct bg_ctx ignored;
	int rc = BG_OK;

	if (strncmp(cfg->store, "sqlite:", 7) != 0)
		return BG_OK;
	bg_ctx_init(&ignored); /* a bad BENCHGATE_MACHINE_LOCK is said by the verbs that take the lease */
	if (bg_machine_lease_path(&lease, &ignored) == BG_OK) {
		bg_config_path(cfg, &store, cfg->store + 7);
		if (same_file_named(store.buf, lease.buf))
			rc = bg_error(ctx, BG_ECHECK,
				      "%s: 'store' names '%s', which is the machine lease's lock file (%s); name another file, or point BENCHGATE_MACHINE_LOCK at another",
				      cfg->config_path ? cfg->config_path : "benchgate.json", cfg->store, lease.buf);
	}
	bg_ctx_release(&ignored);
	bg_strbuf_release(&store);
	bg_strbuf_release(&lease);
	return rc;
}

int bg_cli_load_config(struct bg_cli *cli, struct bg_config *cfg)
{
	struct bg_ctx ctx;
	int rc;

	bg_ctx_init(&ctx);
	rc = bg_config_load(cfg, cli->chdir_root, cli->config_file, &ctx);
	if (!rc)
		rc = store_not_machine_lease(cfg, &ctx);
	if (rc) {
		bg_cli_fail(rc, bg_ctx_message(&ctx));
		bg_config_release(cfg);
	}
	bg_ctx_release(&ctx);
	return rc;
}

/* Python's int() of an argument: whitespace around it, a sign, digits
 * with single underscores between them, at most 4300 digits (CPython's
 * limit), non-ASCII digits and spaces as bg_py_number_ascii reads them. A
 * value beyond 64 bits is false, or with clamp the nearest of LLONG_MIN and
 * LLONG_MAX. */
static bool parse_int(const char *text, bool clamp, long long *out)
{
	struct bg_strbuf t = BG_STRBUF_INIT;
	const char *s;
	unsigned long long v = 0;
	size_t ndigits = 0;
	bool neg = false, over = false, ok = false;

	bg_py_number_ascii(&t, text, strlen(text));
	s = t.buf;
	while (isspace((unsigned char)*s))
		s++;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	if (!isdigit((unsigned char)*s))
		goto out;
	while (*s) {
		if (isdigit((unsigned char)*s)) {
			unsigned d = (unsigned)(*s++ - '0');
			if (++ndigits > 4300)
				goto out;
			if (v > (ULLONG_MAX - d) / 10)
				over = true;
			else
				v = v * 10 + d;
		} else if (*s == '_' && isdigit((unsigned char)s[1]) && ndigits) {
			s++;
		} else {
			break;
		}
	}
	while (isspace((unsigned char)*s))
		s++;
	if (*s)
		goto out;
	if (over || v > (neg ? (unsigned long long)LLONG_MAX + 1 : (unsigned long long)LLONG_MAX)) {
		if (!clamp)
			goto out;
		*out = neg ? LLONG_MIN : LLONG_MAX;
	} else {
		*out = neg ? (long long)(0 - v) : (long long)v;
	}
	ok = true;
out:
	bg_strbuf_release(&t);
	return ok;
}

bool bg_cli_parse_double(const char *text, double *out)
{
	struct bg_strbuf t = BG_STRBUF_INIT, d = BG_STRBUF_INIT;
	char *end;
	bool ok = true;

	*out = 0;
	/* Python's digits and spaces as ASCII, then '_' between two digits dropped
	 * (float('1_0') is 10; any other '_' is no number) */
	bg_py_number_ascii(&t, text, strlen(text));
	for (size_t i = 0; i < t.len && ok; i++) {
		if (t.buf[i] != '_')
			bg_strbuf_addch(&d, t.buf[i]);
		else
			ok = i > 0 && isdigit((unsigned char)t.buf[i - 1]) && isdigit((unsigned char)t.buf[i + 1]);
	}
	/* C's hexadecimal floats and nan(...) are strtod's, not Python's */
	if (ok && !strpbrk(d.buf, "xX(")) {
		*out = strtod(d.buf, &end);
		while (isspace((unsigned char)*end))
			end++;
		ok = end != d.buf && *end == '\0';
	} else {
		ok = false;
	}
	bg_strbuf_release(&t);
	bg_strbuf_release(&d);
	return ok;
}

bool bg_cli_parse_seconds(const char *s, double *out)
{
	return bg_cli_parse_double(s, out) && *out > 0 && *out <= BG_TIMEOUT_MAX_SECONDS;
}

bool bg_cli_parse_int(const char *s, long long *out)
{
	return parse_int(s, false, out);
}

bool bg_cli_parse_int_clamped(const char *s, long long *out)
{
	return parse_int(s, true, out);
}

const char *bg_cli_last_arg(const char *v, long *last, char *msg, size_t size)
{
	long long n;

	if (!bg_cli_parse_int_clamped(v, &n) || n < 1) {
		snprintf(msg, size, "--last must be a positive integer, not '%s'", v);
		return msg;
	}
	*last = (long)n;
	return NULL;
}

static const struct bg_opt *find_long(const struct bg_opt *opts, const char *name, size_t len,
				      const char **err)
{
	const struct bg_opt *hit = NULL;
	int matches = 0;

	/* "--=X": the empty name begins every option, --help too (argparse:
	 * ambiguous), never the one option a verb has */
	if (len == 0) {
		*err = "ambiguous option";
		return NULL;
	}
	for (const struct bg_opt *o = opts; o && o->long_name; o++) {
		if (strlen(o->long_name) == len && strncmp(o->long_name, name, len) == 0)
			return o;
		if (strncmp(o->long_name, name, len) == 0) {
			hit = o;
			matches++;
		}
	}
	if (matches > 1) {
		*err = "ambiguous option";
		return NULL;
	}
	return hit;
}

/*
 * The usage error for --NAME (name[0..len)) that is no option of opts:
 * "unknown option '--NAME' (did you mean '--x'?)" with the options it is a
 * slip for, or, when ambiguous (a beginning of several), "ambiguous option
 * '--NAME': it could be '--a' or '--b'" with every option it begins.
 */
static int unknown_long(const struct bg_cmd *cmd, const struct bg_opt *opts, const char *name, size_t len,
			bool ambiguous)
{
	struct bg_strbuf near = BG_STRBUF_INIT;
	const char *names[64];
	size_t n = 0, k = 0;
	int rc;

	for (const struct bg_opt *o = opts; o && o->long_name && n < 64; o++)
		names[n++] = o->long_name;
	if (ambiguous) {
		const char *hit[65];

		if (len == 0) /* "--=X": the empty name begins --help too */
			hit[k++] = "help";
		for (size_t i = 0; i < n; i++)
			if (strncmp(names[i], name, len) == 0)
				hit[k++] = names[i];
		for (size_t i = 0; i < k; i++)
			bg_strbuf_addf(&near, "%s'--%s'", i == 0 ? "" : i + 1 == k ? " or " : ", ", hit[i]);
		rc = bg_cli_usage_error(cmd, "ambiguous option '--%.*s': it could be %s", (int)len, name, near.buf);
	} else {
		bg_cli_add_near(&near, name, len, names, n, 0, "--");
		rc = bg_cli_usage_error(cmd, "unknown option '--%.*s'%s", (int)len, name, near.buf);
	}
	bg_strbuf_release(&near);
	return rc;
}

/* Python's re.match(r'^-\d+$|^-\d*\.\d+$', a) for a that starts with '-':
 * argparse's negative number, a value or positional even so (\d takes any
 * decimal digit, which bg_py_number_ascii makes ASCII; $ matches before one
 * final newline). */
static bool negative_number(const char *a)
{
	struct bg_strbuf t = BG_STRBUF_INIT;
	const char *s;
	size_t digits = 0, frac = 0;
	bool dot = false, ok;

	bg_py_number_ascii(&t, a, strlen(a));
	for (s = t.buf + 1; *s; s++) {
		if (isdigit((unsigned char)*s))
			*(dot ? &frac : &digits) += 1;
		else if (*s == '.' && !dot)
			dot = true;
		else
			break;
	}
	if (*s == '\n' && s[1] == '\0')
		s++;
	ok = !*s && (dot ? frac > 0 : digits > 0);
	bg_strbuf_release(&t);
	return ok;
}

int bg_cli_check_reason(const char *why)
{
	const char *problem = bg_format_line_problem(why);
	char msg[256];

	if (!problem)
		return BG_OK;
	snprintf(msg, sizeof(msg), "the reason (--why TEXT) must be one line of text: %s", problem);
	bg_cli_fail(BG_EUSAGE, msg);
	return BG_EUSAGE;
}

/* argparse's _parse_optional, as cli.h says. */
bool bg_cli_option_like(const struct bg_opt *opts, const char *a)
{
	if (a[0] != '-' || a[1] == '\0' || negative_number(a))
		return false;
	if (!strchr(a, ' '))
		return true;
	if (a[1] == '-') {
		const char *eq = strchr(a + 2, '=');
		size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		const char *err = NULL;

		/* argparse matches the name before '=' first, then reads a word
		 * holding a space as a value: "--plat=a b" is the option, and an
		 * ambiguous "--p=a b" (or one --help begins) is refused as one */
		return eq && !memchr(a + 2, ' ', len) &&
		       (find_long(opts, a + 2, len, &err) != NULL || err != NULL ||
			(len && len <= 4 && strncmp(a + 2, "help", len) == 0));
	}
	if (a[1] == 'h') /* every verb's -h: "-h x" is -h with the value " x" */
		return true;
	for (const struct bg_opt *p = opts; p && p->long_name; p++)
		if (p->short_name && p->short_name == a[1])
			return true;
	return false;
}

/* -C and --config given after the verb: where they go, not just "unknown". */
static int global_after_verb(const struct bg_cmd *cmd, const char *option)
{
	return bg_cli_usage_error(cmd, "'%s' is a global option; give it before the verb: 'benchgate %s %s ...'",
				  option, option, cmd->name);
}

/* The option of opts whose short name is c, or NULL. */
static const struct bg_opt *short_option(const struct bg_opt *opts, char c)
{
	const struct bg_opt *hit = NULL;

	for (const struct bg_opt *p = opts; c && p && p->long_name; p++)
		if (p->short_name == c)
			hit = p;
	return hit;
}

/*
 * Whether a, where an option may stand, asks for help as argparse reads it:
 * "-h", or "--help" or a beginning of it ("--he"; no verb has another
 * option that starts with 'h').
 */
static bool is_help(const char *a)
{
	size_t n = strlen(a);

	return strcmp(a, "-h") == 0 || (n >= 3 && n <= 6 && strncmp(a, "--help", n) == 0);
}

/*
 * argparse reads every word for options before it acts on one, so an
 * ambiguous beginning of a long option is refused wherever it stands, also
 * after a --help. BG_OK when none is.
 */
static int refuse_ambiguous(const struct bg_cli *cli, const struct bg_cmd *cmd, const struct bg_opt *opts)
{
	for (int i = 1; i < cli->argc; i++) {
		const char *a = cli->argv[i], *eq, *err = NULL;
		size_t len;

		if (strcmp(a, "--") == 0)
			break;
		if (a[0] != '-' || a[1] != '-' || is_help(a) || !bg_cli_option_like(opts, a))
			continue;
		eq = strchr(a + 2, '=');
		len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		if (!find_long(opts, a + 2, len, &err) && err)
			return unknown_long(cmd, opts, a + 2, len, true);
	}
	return BG_OK;
}

/*
 * The usage error for a word that argparse refuses only once it has read
 * them all, so that a --help after it is still shown: an option the verb
 * does not have (-C and --config are global options, said so), or a
 * positional beyond those the verb takes.
 */
static int refuse_word(const struct bg_cmd *cmd, const struct bg_opt *opts, const char *a, bool positional)
{
	const char *eq, *err = NULL;
	size_t len;

	if (positional)
		return bg_cli_usage_error(cmd, "unexpected argument '%s'", a);
	if (a[1] != '-')
		return a[1] == 'C' ? global_after_verb(cmd, "-C DIR") : bg_cli_usage_error(cmd, "unknown option '%s'", a);
	eq = strchr(a + 2, '=');
	len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
	if (len == 6 && strncmp(a + 2, "config", 6) == 0)
		return global_after_verb(cmd, "--config FILE");
	(void)find_long(opts, a + 2, len, &err);
	return unknown_long(cmd, opts, a + 2, len, err != NULL);
}

int bg_cli_parse(struct bg_cli *cli, const struct bg_cmd *cmd, const struct bg_opt *opts,
		 int max_pos, bool stop_at_dashdash, bg_opt_fn on_opt, void *data,
		 struct bg_parsed *out)
{
	bool options_done = false, refused_positional = false;
	int refused = 0; /* the first word refused once all are read (refuse_word), or 0 */
	int rc;

	memset(out, 0, sizeof(*out));
	out->rest_index = -1;
	if ((rc = refuse_ambiguous(cli, cmd, opts)))
		return rc;
	for (int i = 1; i < cli->argc; i++) {
		char *a = cli->argv[i];
		const struct bg_opt *o = NULL;
		const char *value = NULL, *err = NULL, *msg;

		if (!options_done && strcmp(a, "--") == 0) {
			if (stop_at_dashdash) {
				out->rest_index = i + 1;
				break;
			}
			options_done = true;
			continue;
		}
		if (options_done || !bg_cli_option_like(opts, a)) {
			if (out->npos < max_pos && out->npos < 8) {
				if (cmd->check_pos && (rc = cmd->check_pos(cmd, out->npos, a)))
					return rc;
				out->pos[out->npos++] = a;
			} else if (!refused) {
				refused = i;
				refused_positional = true;
			}
			continue;
		}
		/* help as soon as argparse meets it: after an error in a word
		 * before it, which argparse meets first, and before the words
		 * it refuses only at the end (refuse_word) */
		if (is_help(a)) {
			rc = bg_cli_print_help(cmd);
			return rc ? rc : BG_CLI_HELP_SHOWN;
		}
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);

			o = find_long(opts, a + 2, len, &err);
			if (!o && eq && len && len <= 4 && strncmp(a + 2, "help", len) == 0)
				return bg_cli_usage_error(cmd, "option '--help' takes no value");
			if (!o) {
				refused = refused ? refused : i;
				continue;
			}
			if (eq) {
				if (o->kind == BG_OPT_FLAG)
					return bg_cli_usage_error(cmd, "option '--%s' takes no value", o->long_name);
				value = eq + 1;
			}
		} else {
			/* -x, -xVALUE, -x=VALUE, and flags joined before the last
			 * option (-qw0: -q -w 0), as argparse reads them */
			const char *c = a + 1;

			for (;;) {
				o = short_option(opts, *c);
				if (!o && *c == 'h' && c > a + 1) { /* -qh: help where argparse meets it */
					rc = bg_cli_print_help(cmd);
					return rc ? rc : BG_CLI_HELP_SHOWN;
				}
				if (!o && *c == 'h' && c == a + 1) /* -hx, -h=: argparse "ignored explicit argument" */
					return bg_cli_usage_error(cmd, "option '-h' takes no value");
				if (!o && c == a + 1)
					break;
				if (!o) /* argparse: the flag before it "ignored explicit argument" */
					return bg_cli_usage_error(cmd, "option '-%c' takes no value", c[-1]);
				if (o->kind == BG_OPT_VALUE || !c[1])
					break;
				if (c[1] == '=')
					return bg_cli_usage_error(cmd, "option '-%c' takes no value", *c);
				if ((msg = on_opt(o->id, NULL, data)))
					return bg_cli_usage_error(cmd, "%s", msg);
				c++;
			}
			if (!o) {
				refused = refused ? refused : i;
				continue;
			}
			if (c[1])
				value = c[1] == '=' ? c + 2 : c + 1;
		}
		if (o->kind == BG_OPT_VALUE && !value) {
			if (i + 1 >= cli->argc)
				return bg_cli_usage_error(cmd, "option '--%s' needs a value", o->long_name);
			value = cli->argv[++i];
			/* argparse: "expected one argument" */
			if (bg_cli_option_like(opts, value))
				return bg_cli_usage_error(cmd, "option '--%s' needs a value, but '%s' %s; a value "
							  "that starts with '-' is written '--%s=VALUE'",
							  o->long_name, value,
							  strcmp(value, "--") == 0 ? "ends the options" : "reads as an option",
							  o->long_name);
		}
		msg = on_opt(o->id, value, data);
		if (msg)
			return bg_cli_usage_error(cmd, "%s", msg);
	}
	if (refused)
		return refuse_word(cmd, opts, cli->argv[refused], refused_positional);
	return BG_OK;
}

int bg_cli_fail_ctx(int status, struct bg_ctx *ctx)
{
	bg_cli_fail(status, bg_ctx_message(ctx));
	bg_ctx_release(ctx);
	return status;
}

bool bg_cli_add_project_hint(struct bg_strbuf *msg, const struct bg_cli *cli, int status, const struct bg_config *cfg)
{
	struct bg_strbuf path = BG_STRBUF_INIT;
	bool missing = false;

	if (status == BG_EIO && !cfg->config_path) {
		/* the defaults named files that are not there: most likely not a project at all */
		const char *const rel[2] = {cfg->registry_path, cfg->profile_path};

		for (int i = 0; i < 2 && !missing; i++) {
			const char *why;

			if (!rel[i])
				continue;
			bg_strbuf_reset(&path);
			bg_config_path(cfg, &path, rel[i]);
			why = bg_file_problem(path.buf);
			missing = why && !*why; /* "": not there */
		}
	}
	if (status == BG_EIO && cfg->config_path) {
		/* a file benchgate.json names, not there: which key names it,
		 * and what it is relative to (run from a subfolder, or with a
		 * --config from elsewhere) */
		const struct {
			const char *path, *key;
		} named[] = {
			{cfg->registry_path, "registry.path"},   {cfg->profile_path, "profile.path"},
			{cfg->parity_matrix, "profile.parity_matrix"}, {cfg->generated_path, "registry.generated"},
			{cfg->runs_index, "profile.runs_index"},  {cfg->experiments, "profile.experiments"},
		};
		const char *m = msg->buf ? msg->buf : "";

		for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
			size_t n = named[i].path ? strlen(named[i].path) : 0;
			const char *why;

			if (!n || strncmp(m, named[i].path, n) != 0 || m[n] != ':')
				continue;
			bg_strbuf_reset(&path);
			bg_config_path(cfg, &path, named[i].path);
			why = bg_file_problem(path.buf);
			if (why && !*why) /* "": not there */
				bg_strbuf_addf(msg, " ('%s' of %s names it, relative to the project's folder '%s')",
					       named[i].key, cfg->config_path, cfg->root);
			break;
		}
	}
	if (missing && cli->chdir_root)
		bg_strbuf_addf(msg, " (there is no benchgate.json in '%s': is it the project's folder?)", cfg->root);
	else if (missing)
		bg_strbuf_addf(msg, " (there is no benchgate.json in '%s' or a folder above it: run benchgate "
			       "in a project, or name its folder with -C DIR)", cfg->root);
	bg_strbuf_release(&path);
	return missing;
}

int bg_cli_fail_project(const struct bg_cli *cli, int status, struct bg_ctx *ctx, const struct bg_config *cfg)
{
	struct bg_strbuf msg = BG_STRBUF_INIT;

	bg_strbuf_adds(&msg, bg_ctx_message(ctx));
	bg_cli_add_project_hint(&msg, cli, status, cfg);
	bg_cli_fail(status, msg.buf);
	bg_strbuf_release(&msg);
	bg_ctx_release(ctx);
	return status;
}

int bg_cli_load_registry(struct bg_cli *cli, struct bg_config *cfg, struct bg_registry *reg)
{
	struct bg_ctx ctx;
	int rc;

	memset(reg, 0, sizeof(*reg));
	if ((rc = bg_cli_load_config(cli, cfg)))
		return rc;
	bg_ctx_init(&ctx);
	rc = bg_registry_load(reg, cfg, &ctx);
	if (rc) {
		bg_cli_fail_project(cli, rc, &ctx, cfg);
		bg_registry_release(reg);
		bg_config_release(cfg);
		return rc;
	}
	bg_ctx_release(&ctx);
	return BG_OK;
}

static volatile sig_atomic_t *stop_flag;
static const int stop_signals[BG_CLI_STOP_SIGNALS] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

static void on_stop(int sig)
{
	(void)sig;
	if (stop_flag)
		*stop_flag = 1;
}

void bg_cli_catch_stop(volatile sig_atomic_t *flag, struct bg_cli_stop *saved)
{
	struct sigaction sa;

	stop_flag = flag;
	saved->suspend = false;
	saved->cont = false;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < BG_CLI_STOP_SIGNALS; i++) {
		sigaction(stop_signals[i], NULL, &saved->old[i]);
		/* under nohup a hang-up is meant to pass unnoticed */
		if (stop_signals[i] == SIGHUP && saved->old[i].sa_handler == SIG_IGN)
			continue;
		sigaction(stop_signals[i], &sa, NULL);
	}
}

void bg_cli_release_stop(const struct bg_cli_stop *saved)
{
	for (int i = 0; i < BG_CLI_STOP_SIGNALS; i++)
		sigaction(stop_signals[i], &saved->old[i], NULL);
	if (saved->suspend)
		sigaction(SIGTSTP, &saved->old_tstp, NULL);
	if (saved->cont)
		sigaction(SIGCONT, &saved->old_cont, NULL);
}

static void on_continue(int sig)
{
	(void)sig;
	bg_measure_continued();
}

static void on_suspend(int sig)
{
	(void)sig;
	bg_measure_suspend();
}

void bg_cli_catch_suspend(struct bg_cli_stop *saved)
{
	struct sigaction sa;

	/* a stop benchgate cannot catch (SIGSTOP) shows as the continue after it */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_continue;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCONT, NULL, &saved->old_cont);
	sigaction(SIGCONT, &sa, NULL);
	saved->cont = true;
	sigaction(SIGTSTP, NULL, &saved->old_tstp);
	/* ignored when benchgate started: its caller wants no stop */
	if (saved->old_tstp.sa_handler == SIG_IGN)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_suspend;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTSTP, &sa, NULL);
	saved->suspend = true;
}
