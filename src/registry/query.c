/*
 * query.c - the read-only registry verbs: list, next, show, command, and the
 * str.format_map substitution of runbook commands.
 */
#include "benchgate/registry.h"
#include "core/pyformat.h"
#include "core/pyval.h"
#include "registry/keysort.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int missing_field(const struct bg_value *gate, const char *field, struct bg_ctx *ctx)
{
	struct bg_strbuf id = BG_STRBUF_INIT;

	bg_value_py_str(&id, bg_value_get(gate, "id"));
	bg_error(ctx, BG_ECHECK, "gate '%s' has no '%s'; run 'benchgate validate' to see every problem",
		 id.buf, field);
	bg_strbuf_release(&id);
	return BG_ECHECK;
}

/*
 * rc, with the registry's file put in front of ctx's message when rc is an
 * error: the helpers below name the gate or runbook, this names the file.
 */
static int placed(const struct bg_registry *reg, int rc, struct bg_ctx *ctx)
{
	if (rc != BG_OK)
		bg_error(ctx, rc, "%s: %s", reg->display, bg_ctx_message(ctx));
	return rc;
}

/* bg_registry_field_matches with want already lower-cased (bg_py_lower). */
static bool field_matches_lowered(const struct bg_value *gate, const char *field, const char *lowered)
{
	struct bg_strbuf have = BG_STRBUF_INIT, a = BG_STRBUF_INIT;
	struct bg_value *v;
	bool ok;

	if (!lowered || !*lowered)
		return true;
	v = bg_value_get(gate, field);
	if (v)
		bg_value_py_str(&have, v);
	bg_py_lower(&a, have.buf);
	ok = strcmp(a.buf, lowered) == 0;
	bg_strbuf_release(&have);
	bg_strbuf_release(&a);
	return ok;
}

bool bg_registry_field_matches(const struct bg_value *gate, const char *field, const char *want)
{
	struct bg_strbuf b = BG_STRBUF_INIT;
	bool ok;

	if (!want || !*want)
		return true;
	bg_py_lower(&b, want);
	ok = field_matches_lowered(gate, field, b.buf);
	bg_strbuf_release(&b);
	return ok;
}

bool bg_registry_any_field_matches(const struct bg_registry *reg, const char *field, const char *want)
{
	struct bg_strbuf lowered = BG_STRBUF_INIT;
	struct bg_value *gate;
	size_t i;
	bool found = false;

	if (!want || !*want)
		return bg_value_size(reg->gates) > 0;
	bg_py_lower(&lowered, want);
	BG_VALUE_ARRAY_FOREACH(reg->gates, i, gate) {
		if ((found = field_matches_lowered(gate, field, lowered.buf)))
			break;
	}
	bg_strbuf_release(&lowered);
	return found;
}

/* A filter's wants, lower-cased once for every gate they are matched with. */
struct lowered_filter {
	struct bg_strbuf want[4]; /* state, platform, module, computer */
};

static const char *const filter_fields[4] = {"state", "platform", "module", "computer"};

static void lowered_filter_init(struct lowered_filter *lf, const struct bg_gate_filter *f)
{
	const char *wants[4] = {f->state, f->platform, f->module, f->computer};

	for (int k = 0; k < 4; k++) {
		bg_strbuf_init(&lf->want[k]);
		if (wants[k] && *wants[k])
			bg_py_lower(&lf->want[k], wants[k]);
	}
}

static void lowered_filter_release(struct lowered_filter *lf)
{
	for (int k = 0; k < 4; k++)
		bg_strbuf_release(&lf->want[k]);
}

/* A want lower-cased to "" (none does: lower() keeps a nonempty text
 * nonempty) is an empty want, which passes every gate. */
static bool filters_match(const struct bg_value *gate, const struct lowered_filter *lf)
{
	for (int k = 0; k < 4; k++)
		if (!field_matches_lowered(gate, filter_fields[k], lf->want[k].buf))
			return false;
	return true;
}

static int emit(struct bg_keysort_item *items, size_t n, struct bg_strbuf *out, struct bg_ctx *ctx)
{
	static const char *const need[] = {"id", "state", "platform", "computer", "runbook", NULL};

	for (size_t i = 0; i < n; i++) {
		struct bg_value *g = items[i].obj;
		struct bg_value *st = bg_value_get(g, "state");
		const char *label;

		for (const char *const *f = need; *f; f++)
			if (!bg_value_get(g, *f))
				return missing_field(g, *f, ctx);
		label = bg_value_is_string(st) ? bg_state_label(bg_value_str(st)) : NULL;
		if (!label) {
			struct bg_strbuf id = BG_STRBUF_INIT, s = BG_STRBUF_INIT;
			bg_value_py_str(&id, bg_value_get(g, "id"));
			bg_value_py_repr(&s, st);
			bg_error(ctx, BG_ECHECK, "gate '%s' has unknown state %s; run 'benchgate validate'",
				 id.buf, s.buf);
			bg_strbuf_release(&id);
			bg_strbuf_release(&s);
			return BG_ECHECK;
		}
		bg_value_py_str(out, bg_value_get(g, "id"));
		bg_strbuf_addf(out, "\t%s\t", label);
		bg_value_py_str(out, bg_value_get(g, "platform"));
		bg_strbuf_addch(out, '\t');
		bg_value_py_str(out, bg_value_get(g, "computer"));
		bg_strbuf_addch(out, '\t');
		bg_value_py_str(out, bg_value_get(g, "runbook"));
		bg_strbuf_addch(out, '\n');
	}
	return BG_OK;
}

/* Sorts items by their keys (named by keys[0..nk)) as Python's sorted does,
 * then emits at most limit of them (all when limit < 0). */
static int sorted_emit(struct bg_keysort_item *items, size_t n, const char *const *keys, int nk, long long limit,
		       struct bg_strbuf *out, struct bg_ctx *ctx)
{
	struct bg_keysort_clash clash;

	if (!bg_keysort(items, n, nk, &clash)) {
		struct bg_strbuf sb = BG_STRBUF_INIT;
		bg_keysort_clash_message(&sb, "gate", keys[clash.key], &clash);
		bg_error(ctx, BG_ECHECK, "%s", sb.buf);
		bg_strbuf_release(&sb);
		return BG_ECHECK;
	}
	if (limit >= 0 && (size_t)limit < n)
		n = (size_t)limit;
	return emit(items, n, out, ctx);
}

int bg_registry_list(struct bg_registry *reg, const struct bg_gate_filter *f,
		     struct bg_strbuf *out, struct bg_ctx *ctx)
{
	static const char *const keys[] = {"module", "platform", "id"};
	size_t n = 0, i;
	struct bg_value *gate;
	struct bg_keysort_item *items = bg_xcalloc(bg_value_size(reg->gates) + 1, sizeof(*items));
	struct lowered_filter lf;
	int rc = BG_OK;

	lowered_filter_init(&lf, f);
	BG_VALUE_ARRAY_FOREACH(reg->gates, i, gate) {
		if (!filters_match(gate, &lf))
			continue;
		for (int k = 0; k < 3; k++) {
			items[n].keys[k] = bg_value_get(gate, keys[k]);
			if (!items[n].keys[k] && !rc)
				rc = missing_field(gate, keys[k], ctx);
		}
		items[n].obj = gate;
		items[n].index = n;
		n++;
	}
	lowered_filter_release(&lf);
	if (!rc)
		rc = sorted_emit(items, n, keys, 3, -1, out, ctx);
	free(items);
	return placed(reg, rc, ctx);
}

int bg_registry_next(struct bg_registry *reg, const struct bg_gate_filter *f, long long limit,
		     bool performance_only, struct bg_strbuf *out, struct bg_ctx *ctx)
{
	static const char *const next_keys[] = {"priority", "id"};
	size_t n = 0, i;
	struct bg_value *gate;
	struct bg_keysort_item *items = bg_xcalloc(bg_value_size(reg->gates) + 1, sizeof(*items));
	struct lowered_filter lf;
	int rc = BG_OK;

	lowered_filter_init(&lf, f);
	BG_VALUE_ARRAY_FOREACH(reg->gates, i, gate) {
		struct bg_value *st;

		if (!filters_match(gate, &lf))
			continue;
		st = bg_value_get(gate, "state");
		if (!st) {
			rc = missing_field(gate, "state", ctx);
			break;
		}
		if (bg_value_is_array(st) || bg_value_is_object(st)) { /* `in OPEN_STATES`: unhashable */
			struct bg_strbuf id = BG_STRBUF_INIT;
			bg_value_py_str(&id, bg_value_get(gate, "id"));
			rc = bg_error(ctx, BG_ECHECK, "gate '%s' has a state that is %s; run 'benchgate validate'",
				      id.buf, bg_value_is_array(st) ? "a list" : "an object");
			bg_strbuf_release(&id);
			break;
		}
		if (!bg_value_is_string(st) || !bg_state_is_open(bg_value_str(st)))
			continue;
		if (performance_only) {
			struct bg_value *rbid = bg_value_get(gate, "runbook"), *rb, *level;
			if (!rbid) {
				rc = missing_field(gate, "runbook", ctx);
				break;
			}
			if ((rc = bg_registry_runbooks_ok(reg, ctx)))
				break;
			rb = bg_value_is_string(rbid) ? bg_value_get(reg->runbooks, bg_value_str(rbid)) : NULL;
			if (!rb) {
				struct bg_strbuf id = BG_STRBUF_INIT, r = BG_STRBUF_INIT;
				bg_value_py_str(&id, bg_value_get(gate, "id"));
				bg_value_py_str(&r, rbid);
				rc = bg_error(ctx, BG_ECHECK, "gate '%s' names unknown runbook '%s'", id.buf, r.buf);
				bg_strbuf_release(&id);
				bg_strbuf_release(&r);
				break;
			}
			level = bg_value_get(rb, "evidence_level");
			if (!level) {
				rc = bg_error(ctx, BG_ECHECK, "runbook '%s' has no 'evidence_level'",
					      bg_value_str(rbid));
				break;
			}
			if (!bg_value_is_string(level) || strcmp(bg_value_str(level), "physical performance") != 0)
				continue;
		}
		items[n].keys[0] = bg_value_get(gate, next_keys[0]);
		items[n].keys[1] = bg_value_get(gate, next_keys[1]);
		if (!items[n].keys[0]) {
			rc = missing_field(gate, next_keys[0], ctx);
			break;
		}
		if (!items[n].keys[1]) {
			rc = missing_field(gate, next_keys[1], ctx);
			break;
		}
		items[n].obj = gate;
		items[n].index = n;
		n++;
	}
	lowered_filter_release(&lf);
	if (!rc)
		rc = sorted_emit(items, n, next_keys, 2, limit < 0 ? 0 : limit, out, ctx);
	free(items);
	return placed(reg, rc, ctx);
}

void bg_registry_show(const struct bg_value *gate, struct bg_strbuf *out)
{
	bg_value_dump(out, gate, 2, true);
	bg_strbuf_addch(out, '\n');
}

/* A template error: "WHAT: MESSAGE" (WHAT "command template" unless how says), how->status. */
static int ferr(struct bg_ctx *ctx, const struct bg_format_how *how, const char *fmt, ...) BG_PRINTF(3, 4);
static int ferr(struct bg_ctx *ctx, const struct bg_format_how *how, const char *fmt, ...)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	bg_strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	rc = bg_error(ctx, how->status, "%s: %s", how->what ? how->what : "command template", sb.buf);
	bg_strbuf_release(&sb);
	return rc;
}

/* s[0..n) as one word of a POSIX shell: as it is when it holds only
 * characters no shell reads specially, else in single quotes ('\'' for a
 * quote); the empty text is ''. */
static void shell_quote(struct bg_strbuf *out, const char *s, size_t n)
{
	bool plain = n > 0;

	for (size_t i = 0; i < n && plain; i++)
		plain = isalnum((unsigned char)s[i]) || (s[i] && strchr("-_./:=+,@%", s[i]));
	if (plain) {
		bg_strbuf_addn(out, s, n);
		return;
	}
	bg_strbuf_addch(out, '\'');
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\'')
			bg_strbuf_adds(out, "'\\''");
		else
			bg_strbuf_addch(out, s[i]);
	}
	bg_strbuf_addch(out, '\'');
}

/* Where the shell would be at the end of s[0..n): outside quotes, inside
 * single quotes, or inside double quotes (a backslash escaping the next
 * character outside single quotes). */
enum shell_at { SH_OUTSIDE, SH_SINGLE, SH_DOUBLE };
static enum shell_at shell_state(const char *s, size_t n)
{
	enum shell_at at = SH_OUTSIDE;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (at == SH_SINGLE) {
			if (c == '\'')
				at = SH_OUTSIDE;
		} else if (c == '\\') {
			i++;
		} else if (at == SH_DOUBLE) {
			if (c == '"')
				at = SH_OUTSIDE;
		} else if (c == '\'') {
			at = SH_SINGLE;
		} else if (c == '"') {
			at = SH_DOUBLE;
		}
	}
	return at;
}

/* s[0..n) as the shell reads it where the command so far (out) leaves it:
 * one word of its own outside quotes (shell_quote); inside the template's
 * own double quotes ("{title}") with '\', '"', '$' and '`' escaped; inside
 * its single quotes ('{title}') with a quote written '\'' (close, quote,
 * open): the command gets the field's text, whatever the template wrote
 * around it. */
static void shell_field(struct bg_strbuf *out, const char *s, size_t n)
{
	enum shell_at at = shell_state(out->buf ? out->buf : "", out->len);

	if (at == SH_OUTSIDE) {
		shell_quote(out, s, n);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (at == SH_DOUBLE && strchr("\\\"$`", s[i]) && s[i])
			bg_strbuf_addch(out, '\\');
		if (at == SH_SINGLE && s[i] == '\'')
			bg_strbuf_adds(out, "'\\''");
		else
			bg_strbuf_addch(out, s[i]);
	}
}

/* Whether text[0..n) is all Unicode decimal digits (n > 0): Python's
 * get_integer, for a field's name (positional) or an index (an integer). */
static bool py_integer(const char *text, size_t n, size_t *value)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t i = 0, v = 0;

	if (!n)
		return false;
	while (i < n) {
		unsigned long c = p[i];
		size_t k = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
		int d;
		if (k > 1) {
			c &= 0x3fu >> (k - 1);
			for (size_t j = 1; j < k && i + j < n; j++)
				c = (c << 6) | (p[i + j] & 0x3fu);
		}
		if ((d = bg_py_decimal(c)) < 0)
			return false;
		v = v > (SIZE_MAX - 9) / 10 ? SIZE_MAX : v * 10 + (size_t)d;
		i += k;
	}
	if (value)
		*value = v;
	return true;
}

/* ascii(): repr with every non-ASCII character escaped. */
static void py_ascii(struct bg_strbuf *out, const char *r)
{
	const unsigned char *p = (const unsigned char *)r;

	for (size_t i = 0; p[i];) {
		unsigned long c = p[i];
		size_t k = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
		if (k == 1) {
			bg_strbuf_addch(out, (char)c);
			i++;
			continue;
		}
		c &= 0x3fu >> (k - 1);
		for (size_t j = 1; j < k && p[i + j]; j++)
			c = (c << 6) | (p[i + j] & 0x3fu);
		bg_strbuf_addf(out, c <= 0xff ? "\\x%02lx" : c <= 0xffff ? "\\u%04lx" : "\\U%08lx", c);
		i += k;
	}
}

/* value[index] for one "[...]" of a field, as Python's getitem: an index of
 * digits is an integer (a code point of a string, an element of a list),
 * any other a key (of an object). NULL where Python raises. */
static struct bg_value *py_getitem(struct bg_arena *a, struct bg_value *v, const char *index, size_t n,
				   const char **why)
{
	size_t i;

	if (py_integer(index, n, &i)) {
		if (bg_value_is_array(v)) {
			*why = "list index out of range";
			return i < bg_value_size(v) ? bg_value_at(v, i) : NULL;
		}
		if (bg_value_is_string(v)) {
			const unsigned char *p = (const unsigned char *)bg_value_str(v);
			size_t at = 0, k;
			for (; p[at] && i; i--)
				at += p[at] < 0x80 ? 1 : p[at] >= 0xf0 ? 4 : p[at] >= 0xe0 ? 3 : 2;
			*why = "string index out of range";
			if (!p[at])
				return NULL;
			k = p[at] < 0x80 ? 1 : p[at] >= 0xf0 ? 4 : p[at] >= 0xe0 ? 3 : 2;
			return bg_value_new_stringn(a, (const char *)p + at, k);
		}
		*why = bg_value_is_object(v) ? "no such key (an integer never names a JSON member)"
					     : "the value cannot be indexed";
		return NULL;
	}
	if (bg_value_is_object(v)) {
		char *key = bg_xstrndup(index, n);
		struct bg_value *x = bg_value_get(v, key);
		free(key);
		*why = "no such key";
		return x;
	}
	*why = bg_value_is_array(v) || bg_value_is_string(v) ? "indices must be integers"
							      : "the value cannot be indexed";
	return NULL;
}

static int format_template(const char *tmpl, const struct bg_value *values, const struct bg_format_how *how,
			   int depth, struct bg_strbuf *out, struct bg_ctx *ctx);

/* One replacement field, name..end (the text between the braces), as
 * str.format_map with _SafeFormat does it (or as how says); appended to out.
 * depth is CPython's recursion_depth: 2 at the top, 1 inside a format
 * specification, where one more field is "Max string recursion exceeded". */
static int format_field(struct bg_arena *a, const char *name, const char *end, const struct bg_value *values,
			const struct bg_format_how *how, int depth, struct bg_strbuf *out, struct bg_ctx *ctx)
{
	const char *q = name, *arg_end, *fname_end, *why = NULL, *brace = NULL, *spec = NULL;
	size_t flen = (size_t)(end - name), slen = 0;
	char conv = 0;
	char *key;
	struct bg_value *v;
	struct bg_strbuf tmp = BG_STRBUF_INIT;

	/* the field name ends at ':' or '!' outside "[...]"; a '{' within
	 * "[...]" is part of an index, one outside is refused (below) */
	while (q < end && *q != ':' && *q != '!') {
		if (*q == '[') {
			while (q < end && *q != ']')
				q++;
			if (q == end)
				break;
		} else if (*q == '{' && !brace) {
			brace = q;
		}
		q++;
	}
	fname_end = q;
	if (q < end && *q == '!') {
		if (q + 1 == end)
			return ferr(ctx, how, "'{%.*s}': '!' must be followed by r, s or a",
					(int)flen, name);
		conv = q[1];
		if (conv != 'r' && conv != 's' && conv != 'a')
			return ferr(ctx, how, "conversion in '{%.*s}' must be !r, !s or !a",
					(int)flen, name);
		if (q + 2 < end && q[2] != ':') /* Python: "expected ':' after conversion specifier" */
			return ferr(ctx, how,
					"'{%.*s}': only ':' may follow the conversion '!%c'; end the field after it",
					(int)flen, name, conv);
		if (q + 2 < end)
			q += 2; /* at ':' */
		else
			q = end;
	}
	if (q < end && *q == ':' && q + 1 < end) {
		spec = q + 1;
		slen = (size_t)(end - spec);
	}
	flen = (size_t)(fname_end - name);
	if (brace)
		return ferr(ctx, how, "field '%.*s' must be a plain name; write '{{' for a literal brace",
				(int)flen, name);
	for (arg_end = name; arg_end < name + flen && *arg_end != '.' && *arg_end != '['; arg_end++)
		;
	if (arg_end == name || py_integer(name, (size_t)(arg_end - name), NULL))
		return ferr(ctx, how,
				"'{%.*s}' is a positional field, which format_map refuses; name a gate field",
				(int)flen, name);
	key = bg_xstrndup(name, (size_t)(arg_end - name));
	v = bg_value_get(values, key);
	if (!v && how->refuse_unknown) {
		const char *id = bg_value_str(bg_value_get(values, "id"));
		int rc = ferr(ctx, how, "gate '%s' has no field '%s'; name one of the gate's fields, or write '{{' and "
			      "'}}' for braces", id ? id : "?", key);

		free(key);
		return rc;
	}
	if (!v) { /* _SafeFormat.__missing__ gives "{name}" */
		bg_strbuf_addf(&tmp, "{%s}", key);
		v = bg_value_new_stringn(a, tmp.buf, tmp.len);
	}
	free(key);
	for (q = arg_end; q < name + flen && v;) {
		const char *close;
		if (*q == '.') {
			bg_strbuf_release(&tmp);
			return ferr(ctx, how,
					"attribute access in '{%.*s}' is not supported; use a plain name",
					(int)flen, name);
		}
		close = memchr(q, ']', (size_t)(name + flen - q));
		if (!close || close == q + 1 ||
		    (close + 1 < name + flen && close[1] != '.' && close[1] != '[')) {
			bg_strbuf_release(&tmp);
			return ferr(ctx, how,
					"malformed index in '{%.*s}'; write '{%.*s[KEY]}' or '{%.*s[NUMBER]}'",
					(int)flen, name, (int)(arg_end - name), name, (int)(arg_end - name), name);
		}
		v = py_getitem(a, v, q + 1, (size_t)(close - q - 1), &why);
		q = close + 1;
	}
	if (!v) {
		bg_strbuf_release(&tmp);
		return ferr(ctx, how, "'{%.*s}': %s; change the index or write '{%.*s}'",
				(int)flen, name, why, (int)(arg_end - name), name);
	}
	bg_strbuf_reset(&tmp);
	{
		struct bg_strbuf text = BG_STRBUF_INIT, conv_text = BG_STRBUF_INIT, expanded = BG_STRBUF_INIT;
		char fwhy[160];
		int rc = BG_OK;

		if (conv == 'r') {
			bg_value_py_repr(&conv_text, v);
		} else if (conv == 'a') {
			bg_value_py_repr(&tmp, v);
			py_ascii(&conv_text, tmp.buf);
		} else if (conv == 's') {
			bg_value_py_str(&conv_text, v);
		}
		if (conv) /* the conversion's text is what is formatted: a string */
			v = bg_value_new_stringn(a, conv_text.buf ? conv_text.buf : "", conv_text.len);
		if (spec && memchr(spec, '{', slen)) {
			/* fields inside the spec ("{x:>{width}}") are replaced first,
			 * unquoted, as CPython's build_string does */
			char *inner = bg_xstrndup(spec, slen);
			struct bg_format_how plain = *how;

			plain.quote = false;
			if (depth <= 1)
				rc = ferr(ctx, how,
					  "'{%.*s}': a field inside a format specification may not hold another "
					  "(Python: max string recursion exceeded)",
					  (int)(end - name), name);
			else
				rc = format_template(inner, values, &plain, depth - 1, &expanded, ctx);
			free(inner);
			spec = expanded.buf ? expanded.buf : "";
			slen = expanded.len;
		}
		if (!rc && spec && slen && bg_py_format(&text, v, spec, slen, fwhy, sizeof(fwhy)) != BG_OK)
			rc = ferr(ctx, how, "'{%.*s}': %s; change the format specification after ':'",
				  (int)(end - name), name, fwhy);
		else if (!rc && !(spec && slen))
			bg_value_py_str(&text, v);
		if (!rc && how->quote)
			shell_field(out, text.buf ? text.buf : "", text.len);
		else if (!rc)
			bg_strbuf_addn(out, text.buf ? text.buf : "", text.len);
		bg_strbuf_release(&text);
		bg_strbuf_release(&conv_text);
		bg_strbuf_release(&expanded);
		bg_strbuf_release(&tmp);
		return rc;
	}
}

/* The '}' that closes the replacement field whose text starts at name (just
 * after its '{'), found as CPython's parse_field finds it: in the field name
 * a '[' reads on to the next ']' (so "{id[}]}" is one field), and after a
 * ':' or '!' braces nest; NULL when the field never closes. */
static const char *field_end(const char *name)
{
	const char *q = name;
	int depth = 1;

	while (*q && *q != '}' && *q != ':' && *q != '!') {
		if (*q == '[') {
			while (*q && *q != ']')
				q++;
			if (!*q)
				return NULL;
		}
		q++;
	}
	if (*q != ':' && *q != '!')
		return *q ? q : NULL;
	for (q++; *q; q++) {
		if (*q == '{')
			depth++;
		else if (*q == '}' && --depth == 0)
			return q;
	}
	return NULL;
}

int bg_registry_format(const char *tmpl, const struct bg_value *values, struct bg_strbuf *out,
		       struct bg_ctx *ctx)
{
	static const struct bg_format_how command = {NULL, BG_ECHECK, false, false};

	return bg_registry_format_with(tmpl, values, &command, out, ctx);
}

int bg_registry_format_with(const char *tmpl, const struct bg_value *values, const struct bg_format_how *how,
			    struct bg_strbuf *out, struct bg_ctx *ctx)
{
	return format_template(tmpl, values, how, 2, out, ctx);
}

static int format_template(const char *tmpl, const struct bg_value *values, const struct bg_format_how *how,
			   int depth, struct bg_strbuf *out, struct bg_ctx *ctx)
{
	const char *p = tmpl;
	struct bg_arena *a = bg_arena_new(); /* values made for one field: an index, a missing name */
	int rc = BG_OK;

	while (*p && !rc) {
		if (*p == '{' && p[1] == '{') {
			bg_strbuf_addch(out, '{');
			p += 2;
		} else if (*p == '}' && p[1] == '}') {
			bg_strbuf_addch(out, '}');
			p += 2;
		} else if (*p == '}') {
			rc = ferr(ctx, how,
				      "single '}' at character %zu; write '}}' for a literal brace",
				      (size_t)(p - tmpl) + 1);
		} else if (*p == '{') {
			const char *end = field_end(p + 1);

			if (!end)
				rc = ferr(ctx, how,
					      "'{' at character %zu is never closed; write '{{' for a literal brace",
					      (size_t)(p - tmpl) + 1);
			else {
				rc = format_field(a, p + 1, end, values, how, depth, out, ctx);
				p = end + 1;
			}
		} else {
			bg_strbuf_addch(out, *p++);
		}
	}
	bg_arena_free(a);
	return rc;
}

static int runbook_list(struct bg_strbuf *out, const struct bg_value *rb, const char *field, const char *rbid,
			struct bg_ctx *ctx)
{
	struct bg_value *v = bg_value_get(rb, field), *x;
	size_t i;

	if (!v)
		return bg_error(ctx, BG_ECHECK, "runbook '%s' has no '%s'", rbid, field);
	if (bg_value_is_string(v)) { /* the reference iterates it: one line per character */
		const unsigned char *p = (const unsigned char *)bg_value_str(v);
		for (i = 0; p[i];) {
			size_t k = p[i] < 0x80 ? 1 : p[i] >= 0xf0 ? 4 : p[i] >= 0xe0 ? 3 : 2;
			bg_strbuf_adds(out, "  - ");
			bg_strbuf_addn(out, (const char *)p + i, k);
			bg_strbuf_addch(out, '\n');
			i += k;
		}
		return BG_OK;
	}
	if (bg_value_is_object(v)) { /* ... and an object by its keys */
		const char *key;
		BG_VALUE_OBJECT_FOREACH(v, key, x) {
			bg_strbuf_adds(out, "  - ");
			bg_strbuf_adds(out, key);
			bg_strbuf_addch(out, '\n');
		}
		return BG_OK;
	}
	if (!bg_value_is_array(v))
		return bg_error(ctx, BG_ECHECK, "runbook '%s': '%s' must be a list", rbid, field);
	BG_VALUE_ARRAY_FOREACH(v, i, x) {
		bg_strbuf_adds(out, "  - ");
		bg_value_py_str(out, x);
		bg_strbuf_addch(out, '\n');
	}
	return BG_OK;
}

static int command_text(const struct bg_registry *reg, const struct bg_value *gate, struct bg_strbuf *out,
			struct bg_ctx *ctx)
{
	struct bg_value *rbid = bg_value_get(gate, "runbook"), *rb, *st, *env, *cmd, *boundary;
	const char *label, *id;
	static const char *const need[] = {"title", "evidence_level", "command", NULL};
	int rc;

	if (!rbid)
		return missing_field(gate, "runbook", ctx);
	if ((rc = bg_registry_runbooks_ok(reg, ctx)))
		return rc;
	rb = bg_value_is_string(rbid) ? bg_value_get(reg->runbooks, bg_value_str(rbid)) : NULL;
	if (!rb) {
		struct bg_strbuf r = BG_STRBUF_INIT, g = BG_STRBUF_INIT;
		bg_value_py_str(&r, rbid);
		bg_value_py_str(&g, bg_value_get(gate, "id")); /* str(): a gate given whose id is no string */
		bg_error(ctx, BG_ECHECK, "gate '%s' names unknown runbook '%s'", g.buf, r.buf);
		bg_strbuf_release(&r);
		bg_strbuf_release(&g);
		return BG_ECHECK;
	}
	id = bg_value_str(rbid);
	if (!bg_value_is_object(rb))
		return bg_error(ctx, BG_ECHECK, "runbook '%s' must be an object", id);
	st = bg_value_get(gate, "state");
	label = bg_value_is_string(st) ? bg_state_label(bg_value_str(st)) : NULL;
	if (!label) {
		struct bg_strbuf s = BG_STRBUF_INIT, g = BG_STRBUF_INIT;
		bg_value_py_repr(&s, st);
		bg_value_py_str(&g, bg_value_get(gate, "id"));
		bg_error(ctx, BG_ECHECK, "gate '%s' has unknown state %s", g.buf, s.buf);
		bg_strbuf_release(&s);
		bg_strbuf_release(&g);
		return BG_ECHECK;
	}
	for (const char *const *f = need; *f; f++)
		if (!bg_value_get(rb, *f))
			return bg_error(ctx, BG_ECHECK, "runbook '%s' has no '%s'", id, *f);
	cmd = bg_value_get(rb, "command");
	if (!bg_value_is_string(cmd))
		return bg_error(ctx, BG_ECHECK, "runbook '%s': 'command' must be a string", id);
	bg_strbuf_adds(out, "Gate: ");
	bg_value_py_str(out, bg_value_get(gate, "id"));
	bg_strbuf_addf(out, "\nState: %s\nRunbook: %s -- ", label, id);
	bg_value_py_str(out, bg_value_get(rb, "title"));
	bg_strbuf_adds(out, "\nEvidence level: ");
	bg_value_py_str(out, bg_value_get(rb, "evidence_level"));
	bg_strbuf_adds(out, "\nPreflight:\n");
	if ((rc = runbook_list(out, rb, "preflight", id, ctx)))
		return rc;
	env = bg_value_get(rb, "required_environment");
	if (!env)
		return bg_error(ctx, BG_ECHECK, "runbook '%s' has no 'required_environment'", id);
	if (bg_value_truthy(env)) {
		bg_strbuf_adds(out, "Required environment:\n");
		if ((rc = runbook_list(out, rb, "required_environment", id, ctx)))
			return rc;
	}
	bg_strbuf_adds(out, "Command:\n");
	if ((rc = bg_registry_format(bg_value_str(cmd), gate, out, ctx)))
		return bg_error(ctx, rc, "runbook '%s': %s", id, bg_ctx_message(ctx));
	bg_strbuf_adds(out, "\nRequired artifacts:\n");
	if ((rc = runbook_list(out, rb, "required_artifacts", id, ctx)))
		return rc;
	bg_strbuf_adds(out, "Promotion boundary:\n  ");
	boundary = bg_value_get(rb, "promotion_boundary");
	if (boundary)
		bg_value_py_str(out, boundary);
	else
		bg_strbuf_adds(out, "Human evidence review required.");
	bg_strbuf_addch(out, '\n');
	return BG_OK;
}

int bg_registry_command(struct bg_registry *reg, const struct bg_value *gate, struct bg_strbuf *out,
			struct bg_ctx *ctx)
{
	return placed(reg, command_text(reg, gate, out, ctx), ctx);
}
