/*
 * fuzz_format.c - fuzz target for the format-specification mini-language
 * of command templates (src/core/pyformat.c) and its field in a template
 * (bg_registry_format). The input is a spec, a newline, then a JSON value
 * (a text when it is not JSON). Properties, abort() when violated: a
 * refusal leaves the output unchanged and says why; a spec and a text that
 * are valid UTF-8 (lone surrogates counted as characters, as a parsed
 * text keeps them) give such text; the template's field gives what the
 * call gives.
 */
#include <stdlib.h>
#include <string.h>

#include "benchgate/registry.h"
#include "benchgate/value.h"
#include "core/bytes.h"
#include "core/pyformat.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* UTF-8, where a lone surrogate (what a \ud800 escape leaves in a parsed
 * text, bg_surrogate_at) counts as a character */
static int valid_text(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char q[5] = {0};
		size_t k;
		if ((unsigned char)s[i] < 0x80) {
			i++;
			continue;
		}
		memcpy(q, s + i, n - i < 4 ? n - i : 4); /* bg_char_len reads up to 4 bytes */
		k = bg_char_len(q);
		if (!k || i + k > n)
			return 0;
		i += k;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	const char *text = (const char *)data, *nl = memchr(text, '\n', size);
	size_t slen = nl ? (size_t)(nl - text) : size;
	struct bg_arena *a;
	struct bg_value *v = NULL, *values;
	struct bg_strbuf out = BG_STRBUF_INIT, tmpl = BG_STRBUF_INIT, field = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	char why[160] = "";
	int rc, spec_text = valid_text(text, slen);

	if (slen > 256 || !spec_text || memchr(text, '\0', slen))
		return 0;
	a = bg_arena_new();
	bg_ctx_init(&ctx);
	if (nl && bg_value_parse(a, nl + 1, size - slen - 1, "value", &v, &ctx) != BG_OK)
		v = bg_value_new_stringn(a, nl + 1, strnlen(nl + 1, size - slen - 1));
	bg_strbuf_adds(&out, "x");
	rc = bg_py_format(&out, v, text, slen, why, sizeof(why));
	if (rc != BG_OK && (out.len != 1 || !why[0]))
		abort();
	if (rc == BG_OK && bg_value_is_string(v) && valid_text(bg_value_str(v), bg_value_len(v)) &&
	    !valid_text(out.buf, out.len))
		abort();
	/* the same through a template, where the spec holds no brace */
	if (slen && !memchr(text, '{', slen) && !memchr(text, '}', slen)) {
		values = bg_value_new_object(a, 1);
		bg_value_set(a, values, "x", v ? v : bg_value_null());
		bg_strbuf_adds(&tmpl, "{x:");
		bg_strbuf_addn(&tmpl, text, slen);
		bg_strbuf_adds(&tmpl, "}");
		if ((bg_registry_format(tmpl.buf, values, &field, &ctx) == BG_OK) != (rc == BG_OK))
			abort();
		if (rc == BG_OK && (field.len != out.len - 1 || memcmp(field.buf, out.buf + 1, field.len) != 0))
			abort();
	}
	bg_strbuf_release(&out);
	bg_strbuf_release(&tmpl);
	bg_strbuf_release(&field);
	bg_ctx_release(&ctx);
	bg_arena_free(a);
	return 0;
}

#define FUZZ_NAME "fuzz_format"
#include "replay.h"
