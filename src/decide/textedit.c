/*
 * textedit.c - byte-preserving edits of a JSON registry file for promotion:
 * set one gate's "state", add a measurement id to its "satisfied_by" (once:
 * an id it names already is not added again), and add an evidence import
 * once. Everything outside the edited spans is left
 * byte for byte as it was; insertions copy the indentation of their
 * neighbours and the file's line ending (CRLF where its first line ends so). The text must be valid JSON (validate it first). Keys and
 * strings are compared as JSON reads them (escapes decoded), and of
 * duplicate keys the last one is the one edited, as it is the one a JSON
 * reader keeps.
 */
#include "benchgate/promote.h"
#include "benchgate/value.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct scan {
	const char *s;
	size_t n;
	size_t depth;
	struct bg_arena *arena; /* decoded strings with escapes, made on demand */
	const char *eol;	/* the text's line ending: "\r\n" or "\n" */
};

static size_t ws(const struct scan *sc, size_t i)
{
	while (i < sc->n && (sc->s[i] == ' ' || sc->s[i] == '\t' || sc->s[i] == '\n' || sc->s[i] == '\r'))
		i++;
	return i;
}

/* Returns the index just past the value starting at i (after whitespace), or 0 on error. */
static size_t skip_value(struct scan *sc, size_t i);

static size_t skip_string(const struct scan *sc, size_t i)
{
	if (i >= sc->n || sc->s[i] != '"')
		return 0;
	for (i++; i < sc->n; i++) {
		if (sc->s[i] == '\\')
			i++;
		else if (sc->s[i] == '"')
			return i + 1;
	}
	return 0;
}

static size_t skip_container(struct scan *sc, size_t i, char open, char close)
{
	if (++sc->depth > 512)
		return 0;
	i = ws(sc, i + 1);
	if (i < sc->n && sc->s[i] == close) {
		sc->depth--;
		return i + 1;
	}
	for (;;) {
		if (open == '{') {
			i = skip_string(sc, ws(sc, i));
			if (!i)
				return 0;
			i = ws(sc, i);
			if (i >= sc->n || sc->s[i] != ':')
				return 0;
			i++;
		}
		i = skip_value(sc, i);
		if (!i)
			return 0;
		i = ws(sc, i);
		if (i < sc->n && sc->s[i] == ',') {
			i++;
			continue;
		}
		if (i < sc->n && sc->s[i] == close) {
			sc->depth--;
			return i + 1;
		}
		return 0;
	}
}

static size_t skip_value(struct scan *sc, size_t i)
{
	i = ws(sc, i);
	if (i >= sc->n)
		return 0;
	switch (sc->s[i]) {
	case '{': return skip_container(sc, i, '{', '}');
	case '[': return skip_container(sc, i, '[', ']');
	case '"': return skip_string(sc, i);
	default:
		while (i < sc->n && (isalnum((unsigned char)sc->s[i]) || strchr("+-.", sc->s[i])))
			i++;
		return i;
	}
}

/* Whether the string token at i equals want as JSON reads it (escapes decoded). */
static bool string_is(struct scan *sc, size_t i, const char *want)
{
	size_t e = skip_string(sc, i), len = strlen(want);
	struct bg_value *v;
	struct bg_ctx ctx;
	bool same;

	if (!e)
		return false;
	if (!memchr(sc->s + i + 1, '\\', e - i - 2))
		return e - i - 2 == len && memcmp(sc->s + i + 1, want, len) == 0;
	if (!sc->arena)
		sc->arena = bg_arena_new();
	bg_ctx_init(&ctx);
	same = bg_value_parse(sc->arena, sc->s + i, e - i, "registry", &v, &ctx) == BG_OK &&
	       bg_value_len(v) == len && memcmp(bg_value_str(v), want, len) == 0;
	bg_ctx_release(&ctx);
	return same;
}

struct member {
	size_t key;         /* index of the key's opening quote */
	size_t value, end;  /* value span [value, end) */
};

/*
 * Finds member key of the object at i (its last occurrence); returns 1 and
 * fills m, 0 when absent, -1 on error. *last_end receives the end of the
 * object's last member (0 when it has none).
 */
static int find_member(struct scan *sc, size_t i, const char *key, struct member *m, size_t *last_end)
{
	int found = 0;

	i = ws(sc, i);
	if (i >= sc->n || sc->s[i] != '{')
		return -1;
	i = ws(sc, i + 1);
	*last_end = 0;
	if (sc->s[i] == '}')
		return 0;
	for (;;) {
		size_t k = ws(sc, i), v, e;
		if (!(e = skip_string(sc, k)))
			return -1;
		v = ws(sc, e);
		if (sc->s[v] != ':')
			return -1;
		v = ws(sc, v + 1);
		if (!(e = skip_value(sc, v)))
			return -1;
		if (string_is(sc, k, key)) {
			m->key = k;
			m->value = v;
			m->end = e;
			found = 1;
		}
		*last_end = e;
		i = ws(sc, e);
		if (sc->s[i] == ',') {
			i++;
			continue;
		}
		return sc->s[i] == '}' ? found : -1;
	}
}

/* The indentation (spaces/tabs) of the line holding index i. */
static void line_indent(const struct scan *sc, size_t i, struct bg_strbuf *out)
{
	size_t start = i;

	while (start > 0 && sc->s[start - 1] != '\n')
		start--;
	while (start < i && (sc->s[start] == ' ' || sc->s[start] == '\t'))
		bg_strbuf_addch(out, sc->s[start++]);
}

static bool has_newline(const struct scan *sc, size_t a, size_t b)
{
	return memchr(sc->s + a, '\n', b - a) != NULL;
}

struct edit {
	size_t at, del;
	struct bg_strbuf text;
};

static void json_string_lit(struct bg_strbuf *out, const char *s)
{
	bg_value_json_string(out, s, strlen(s));
}

/* Whether the array at a holds the string want (as JSON reads it). */
static bool array_has(struct scan *sc, size_t a, const char *want)
{
	size_t i = ws(sc, a + 1), e;

	while (i < sc->n && sc->s[i] != ']' && (e = skip_value(sc, i))) {
		if (sc->s[i] == '"' && string_is(sc, i, want))
			return true;
		i = ws(sc, e);
		if (i < sc->n && sc->s[i] == ',')
			i = ws(sc, i + 1);
	}
	return false;
}

/* Appends value text to the array [a, e) (e past ']'), keeping its layout. */
static void append_to_array(struct scan *sc, size_t a, size_t e, const char *value, struct edit *ed)
{
	size_t close = e - 1, last = close;
	bool empty;

	while (last > a && (sc->s[last - 1] == ' ' || sc->s[last - 1] == '\n' || sc->s[last - 1] == '\t' ||
			    sc->s[last - 1] == '\r'))
		last--;
	empty = last == a + 1;
	ed->at = last;
	ed->del = 0;
	if (empty) {
		bg_strbuf_adds(&ed->text, value);
	} else if (has_newline(sc, a, close)) {
		struct bg_strbuf ind = BG_STRBUF_INIT;
		line_indent(sc, last - 1, &ind);
		bg_strbuf_addf(&ed->text, ",%s%s%s", sc->eol, ind.buf, value);
		bg_strbuf_release(&ind);
	} else {
		bg_strbuf_addf(&ed->text, ", %s", value);
	}
}

/* Adds "key": value as the last member of the object whose last member ends at last_end. */
static void append_member(struct scan *sc, size_t obj, size_t last_end, const char *key, const char *value,
			  struct edit *ed)
{
	struct bg_strbuf ind = BG_STRBUF_INIT;

	ed->at = last_end;
	ed->del = 0;
	if (last_end && has_newline(sc, obj, last_end)) {
		/* the indentation of the line where the previous member ends */
		line_indent(sc, last_end - 1, &ind);
		bg_strbuf_addf(&ed->text, ",%s%s\"%s\": %s", sc->eol, ind.buf, key, value);
	} else if (last_end) {
		bg_strbuf_addf(&ed->text, ", \"%s\": %s", key, value);
	} else {
		ed->at = obj + 1;
		bg_strbuf_addf(&ed->text, "\"%s\": %s", key, value);
	}
	bg_strbuf_release(&ind);
}

/* True when the value at i (ending before end) is an empty object or an
 * empty text: the reference's loops find nothing in it, as in an empty
 * list, so a promotion writes a list there. */
static bool empty_non_list(const struct scan *sc, size_t i, size_t end)
{
	const char *t = sc->s;

	return (t[i] == '{' && t[ws(sc, i + 1)] == '}') || (end - i == 2 && t[i] == '"' && t[i + 1] == '"');
}

/* The edit that replaces the value at [i, end) by a list of value alone. */
static void replace_with_list(size_t i, size_t end, const char *value, struct edit *ed)
{
	ed->at = i;
	ed->del = end - i;
	bg_strbuf_addf(&ed->text, "[%s]", value);
}

static int edit_registry(struct scan *sc, const char *gate_id, const char *state,
			 const char *measurement_id, const char *evidence_path, struct bg_strbuf *out,
			 struct bg_ctx *ctx)
{
	const char *text = sc->s;
	size_t len = sc->n;
	struct member gates, imports, m;
	struct edit edits[4];
	size_t nedit = 0, last_end, i, root = ws(sc, 0);
	size_t gate = 0;
	struct bg_strbuf lit = BG_STRBUF_INIT, entry = BG_STRBUF_INIT;
	int found;

	for (size_t k = 0; k < 4; k++)
		bg_strbuf_init(&edits[k].text);
	if (find_member(sc, root, "gates", &gates, &last_end) != 1 || text[gates.value] != '[')
		return bg_error(ctx, BG_ECHECK, "there is no 'gates' list to promote into");
	/* the gate object with this id */
	i = ws(sc, gates.value + 1);
	while (i < sc->n && text[i] != ']') {
		size_t e = skip_value(sc, i);
		if (!e)
			return bg_error(ctx, BG_ECHECK, "the 'gates' list is not valid JSON");
		if (text[i] == '{' && find_member(sc, i, "id", &m, &last_end) == 1 &&
		    string_is(sc, m.value, gate_id)) {
			gate = i;
			break;
		}
		i = ws(sc, e);
		if (text[i] == ',')
			i = ws(sc, i + 1);
	}
	if (!gate)
		return bg_error(ctx, BG_ECHECK, "gate '%s' is not written in the registry file (only gates listed by id can be promoted)",
				gate_id);
	/* state */
	json_string_lit(&lit, state);
	found = find_member(sc, gate, "state", &m, &last_end);
	if (found == 1) {
		edits[nedit].at = m.value;
		edits[nedit].del = m.end - m.value;
		bg_strbuf_addn(&edits[nedit].text, lit.buf, lit.len);
		nedit++;
	} else {
		append_member(sc, gate, last_end, "state", lit.buf, &edits[nedit++]);
	}
	/* satisfied_by */
	bg_strbuf_reset(&lit);
	json_string_lit(&lit, measurement_id);
	found = find_member(sc, gate, "satisfied_by", &m, &last_end);
	if (found == 1 && text[m.value] == '[') {
		/* named already (an evidence row removed and promoted again): once */
		if (!array_has(sc, m.value, measurement_id))
			append_to_array(sc, m.value, m.end, lit.buf, &edits[nedit++]);
	} else if (found == 1 && empty_non_list(sc, m.value, m.end)) {
		replace_with_list(m.value, m.end, lit.buf, &edits[nedit++]);
	} else if (found == 1) {
		bg_error(ctx, BG_ECHECK,
			 "gate '%s': satisfied_by is not a list; write it as a list of measurement ids", gate_id);
		goto fail;
	} else {
		struct bg_strbuf v = BG_STRBUF_INIT;
		bg_strbuf_addf(&v, "[%s]", lit.buf);
		append_member(sc, gate, last_end, "satisfied_by", v.buf, &edits[nedit++]);
		bg_strbuf_release(&v);
	}
	/* the evidence import, once */
	bg_strbuf_adds(&entry, "{\"path\": ");
	json_string_lit(&entry, evidence_path);
	bg_strbuf_adds(&entry, "}");
	found = find_member(sc, root, "evidence_imports", &imports, &last_end);
	if (found == 1 && text[imports.value] == '[') {
		bool present = false;
		i = ws(sc, imports.value + 1);
		while (i < sc->n && text[i] != ']') {
			size_t e = skip_value(sc, i);
			if (text[i] == '{' && find_member(sc, i, "path", &m, &last_end) == 1 &&
			    string_is(sc, m.value, evidence_path))
				present = true;
			i = ws(sc, e);
			if (text[i] == ',')
				i = ws(sc, i + 1);
		}
		if (!present)
			append_to_array(sc, imports.value, imports.end, entry.buf, &edits[nedit++]);
	} else if (found == 1 && empty_non_list(sc, imports.value, imports.end)) {
		replace_with_list(imports.value, imports.end, entry.buf, &edits[nedit++]);
	} else if (found == 1) {
		bg_error(ctx, BG_ECHECK,
			 "evidence_imports is not a list; write it as a list of {\"path\": ...} objects");
		goto fail;
	} else {
		struct bg_strbuf v = BG_STRBUF_INIT;
		find_member(sc, root, "\x01", &m, &last_end); /* no such key: last_end is the end of the last member */
		bg_strbuf_addf(&v, "[%s]", entry.buf);
		append_member(sc, root, last_end, "evidence_imports", v.buf, &edits[nedit++]);
		bg_strbuf_release(&v);
	}
	/* apply edits in order of position; insertions at one position keep
	 * the order they were made in (state before satisfied_by) */
	for (size_t a = 1; a < nedit; a++)
		for (size_t b = a; b > 0 && edits[b].at < edits[b - 1].at; b--) {
			struct edit t = edits[b];
			edits[b] = edits[b - 1];
			edits[b - 1] = t;
		}
	i = 0;
	for (size_t k = 0; k < nedit; k++) {
		bg_strbuf_addn(out, text + i, edits[k].at - i);
		bg_strbuf_addn(out, edits[k].text.buf, edits[k].text.len);
		i = edits[k].at + edits[k].del;
	}
	bg_strbuf_addn(out, text + i, len - i);
	for (size_t k = 0; k < 4; k++)
		bg_strbuf_release(&edits[k].text);
	bg_strbuf_release(&lit);
	bg_strbuf_release(&entry);
	return BG_OK;
fail:
	for (size_t k = 0; k < 4; k++)
		bg_strbuf_release(&edits[k].text);
	bg_strbuf_release(&lit);
	bg_strbuf_release(&entry);
	return BG_ECHECK;
}

int bg_promote_edit_registry(const char *text, size_t len, const char *gate_id, const char *state,
			     const char *measurement_id, const char *evidence_path, struct bg_strbuf *out,
			     struct bg_ctx *ctx)
{
	const char *nl = memchr(text, '\n', len);
	struct scan sc = {text, len, 0, NULL, nl && nl > text && nl[-1] == '\r' ? "\r\n" : "\n"};
	int rc = edit_registry(&sc, gate_id, state, measurement_id, evidence_path, out, ctx);

	bg_arena_free(sc.arena);
	return rc;
}
