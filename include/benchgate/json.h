/*
 * json.h - JSON reading with precise errors, and Python-compatible text.
 *
 * Values are jansson json_t; the caller owns what bg_json_load_* returns
 * (json_decref). The dump and str functions append to a caller's strbuf and
 * reproduce CPython byte for byte:
 *   bg_json_dump_py  json.dumps(v, indent=N, sort_keys=S) (ensure_ascii)
 *   bg_py_str        str(v) of the value json.loads would have produced
 *   bg_py_repr       repr(v)
 *   bg_py_float_repr repr(float)
 */
#ifndef BENCHGATE_JSON_H
#define BENCHGATE_JSON_H

#include <jansson.h>
#include <stdbool.h>

#include "benchgate/status.h"
#include "benchgate/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Parses the file at path (shown in messages as display, or path when NULL).
 * Errors: BG_EIO when the file cannot be read ("PATH: cannot read: ..."),
 * BG_ECHECK when it is not JSON ("PATH:LINE:COL: what"). Any top-level
 * value is accepted; check its type with bg_json_expect_object.
 */
int bg_json_load_file(const char *path, const char *display, json_t **out,
		      struct bg_ctx *ctx);
int bg_json_load_buffer(const char *data, size_t len, const char *display,
			json_t **out, struct bg_ctx *ctx);
/* bg_json_load_buffer, but an object that repeats a key is refused
 * ("DISPLAY:L:C: invalid JSON: duplicate object key near '\"KEY\"'"): for a
 * file whose every key is read, where a repeat would drop a value unseen. */
/* jansson's text of a parse error as a person reads it: one that names
 * a jansson flag (a \u0000 in a string) says what is wrong instead.
 * A static string, or err->text. */
const char *bg_json_error_text(const json_error_t *err);
int bg_json_load_buffer_unique(const char *data, size_t len, const char *display, json_t **out,
			       struct bg_ctx *ctx);
/* BG_ECHECK with "DISPLAY: top level must be a JSON object" unless it is. */
int bg_json_expect_object(const json_t *v, const char *display, struct bg_ctx *ctx);

struct bg_value;
/*
 * A jansson copy of a registry value (a new reference the caller owns; NULL
 * for v NULL). JSON has no NaN or infinity, which Python's json reads (and
 * so the registry verbs do): a value holding one is refused with BG_EPRECOND
 * "WHAT: 'PATH' is nan, which JSON cannot hold; write a number or null",
 * PATH the member path within v ("measure.timeout", "outputs[1]"; v itself:
 * WHAT alone); so is an integer beyond 64 bits, which jansson cannot hold
 * ("... is 18446744073709551616, beyond the 64 bits benchgate's records
 * hold; write it as a string"), and a text or key holding a lone surrogate
 * (bg_value_surrogate_find), which UTF-8 cannot encode ("... is a text
 * holding the lone surrogate '\ud800' (a JSON escape without its pair),
 * which benchgate's records cannot hold ..."). Other strings are copied
 * unchecked: the parser leaves them valid UTF-8.
 */
int bg_value_to_json(const struct bg_value *v, const char *what, json_t **out, struct bg_ctx *ctx);
/*
 * A jansson copy of v (a new reference; NULL for v NULL) for reading only,
 * never written back: NaN and infinities become null, an integer beyond 64
 * bits the string of its digits, a lone surrogate U+FFFD.
 */
json_t *bg_value_to_json_lossy(const struct bg_value *v);
/*
 * The file at path read as Python's json reads it (bg_value_parse_file:
 * NaN, 2**70, a lone surrogate), as a jansson value: with lossy,
 * bg_value_to_json_lossy's (for reading only), else bg_value_to_json's
 * (BG_EPRECOND naming what benchgate's records cannot hold). Errors as
 * bg_value_parse_file's; *out NULL then.
 */
int bg_json_load_file_py(const char *path, const char *display, bool lossy, json_t **out, struct bg_ctx *ctx);

/* indent < 0: compact with ", " and ": " separators (json.dumps default). */
void bg_json_dump_py(struct bg_strbuf *out, const json_t *v, int indent, bool sort_keys);
void bg_py_str(struct bg_strbuf *out, const json_t *v);
void bg_py_repr(struct bg_strbuf *out, const json_t *v);
void bg_py_float_repr(struct bg_strbuf *out, double x);
/*
 * The text of a JSON string, or fallback when v is absent or not a string:
 * what printers use for values read back from stored documents, leases and
 * manifests, so that a damaged one shows the fallback, never "(null)".
 * The result is owned by v (or is fallback).
 */
static inline const char *bg_json_str_or(const json_t *v, const char *fallback)
{
	const char *s = json_string_value(v);

	return s ? s : fallback;
}
/*
 * A JSON string of outside text (arguments, paths, environment, messages
 * that quote them), never lost: valid UTF-8 is kept as it is, and every
 * byte that is not part of a valid UTF-8 sequence becomes the four
 * characters \xNN (NN its value in lower-case hexadecimal), where
 * jansson's json_string would give NULL and drop the member. A backslash
 * already in s is kept as it is. NULL s gives JSON null. New reference.
 */
json_t *bg_json_text(const char *s);
/* Python truthiness of a JSON value (NULL counts as None). */
bool bg_py_truthy(const json_t *v);
/* Python ==: integers and reals compare by value, containers deeply. */
bool bg_py_equal(const json_t *a, const json_t *b);

#ifdef __cplusplus
}
#endif

#endif
