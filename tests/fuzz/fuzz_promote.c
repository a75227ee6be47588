/*
 * fuzz_promote.c - property target for the byte-preserving registry edit of
 * `benchgate promote` (src/decide/textedit.c). For an input that parses as
 * a JSON object, the edit promotes the first gate that has a plain string id;
 * when it succeeds, the edited text must parse, and as JSON (duplicate keys:
 * the last one counts, as in Python) that gate must have the new state and
 * the measurement in satisfied_by, evidence_imports must list the evidence
 * path, and every other gate and top-level member must be unchanged. A
 * violated property aborts.
 *
 * With -fsanitize=fuzzer (make fuzz FUZZ_TARGET=fuzz_promote) this is a
 * libFuzzer target; without, main() replays files (tests/fuzz/replay.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchgate/promote.h"
#include "benchgate/value.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#define NEW_STATE "measured"
#define MEASUREMENT "fuzz-measurement-1"
#define EVIDENCE "experiments/fuzz/evidence-index.json"

static void violated(const char *what, const char *text, size_t len)
{
	fprintf(stderr, "fuzz_promote: %s\n--- edited text ---\n%.*s\n", what, (int)len, text);
	abort();
}

/* A gate id the edit can name: printable ASCII without quote or backslash. */
static bool plain_id(const struct bg_value *id)
{
	const char *s;

	if (!bg_value_is_string(id) || bg_value_len(id) == 0)
		return false;
	for (s = bg_value_str(id); *s; s++)
		if (*s < 0x20 || *s > 0x7e || *s == '"' || *s == '\\')
			return false;
	return bg_value_len(id) == strlen(bg_value_str(id));
}

/* The position of the first gate whose id is id, or -1. */
static long gate_index(const struct bg_value *gates, const char *id)
{
	size_t i;
	struct bg_value *g;

	if (!bg_value_is_array(gates))
		return -1;
	BG_VALUE_ARRAY_FOREACH(gates, i, g) {
		const struct bg_value *gid = bg_value_get(g, "id");
		if (bg_value_is_string(gid) && strcmp(bg_value_str(gid), id) == 0)
			return (long)i;
	}
	return -1;
}

static bool array_has_string(const struct bg_value *arr, const char *s)
{
	size_t i;
	struct bg_value *v;

	if (!bg_value_is_array(arr))
		return false;
	BG_VALUE_ARRAY_FOREACH(arr, i, v) {
		if (bg_value_is_string(v) && strcmp(bg_value_str(v), s) == 0)
			return true;
	}
	return false;
}

static bool imports_evidence(const struct bg_value *imports)
{
	size_t i;
	struct bg_value *v;

	if (!bg_value_is_array(imports))
		return false;
	BG_VALUE_ARRAY_FOREACH(imports, i, v) {
		const struct bg_value *p = bg_value_get(v, "path");
		if (bg_value_is_string(p) && strcmp(bg_value_str(p), EVIDENCE) == 0)
			return true;
	}
	return false;
}

static void check_edit(const struct bg_value *before, const char *id, const char *text, size_t len)
{
	struct bg_arena *a = bg_arena_new();
	struct bg_value *after, *gates_before = bg_value_get(before, "gates"), *gates_after, *gate;
	struct bg_ctx ctx;
	const char *k;
	struct bg_value *v;
	long at;

	bg_ctx_init(&ctx);
	if (bg_value_parse(a, text, len, "edited.json", &after, &ctx) != BG_OK || !bg_value_is_object(after))
		violated("the edited registry is not a JSON object", text, len);
	gates_after = bg_value_get(after, "gates");
	if (!bg_value_is_array(gates_after) || bg_value_size(gates_after) != bg_value_size(gates_before))
		violated("the gates list changed length", text, len);
	at = gate_index(gates_before, id);
	if (at < 0 || gate_index(gates_after, id) != at)
		violated("the promoted gate moved", text, len);
	gate = bg_value_at(gates_after, (size_t)at);
	if (!bg_value_is_string(bg_value_get(gate, "state")) ||
	    strcmp(bg_value_str(bg_value_get(gate, "state")), NEW_STATE) != 0)
		violated("the promoted gate's state is not the new state", text, len);
	if (!array_has_string(bg_value_get(gate, "satisfied_by"), MEASUREMENT))
		violated("the promoted gate's satisfied_by lacks the measurement", text, len);
	if (!imports_evidence(bg_value_get(after, "evidence_imports")))
		violated("evidence_imports lacks the evidence path", text, len);
	for (size_t i = 0; i < bg_value_size(gates_before); i++)
		if ((long)i != at && !bg_value_py_same(bg_value_at(gates_before, i), bg_value_at(gates_after, i)))
			violated("a gate that was not promoted changed", text, len);
	BG_VALUE_OBJECT_FOREACH(before, k, v) {
		if (strcmp(k, "gates") != 0 && strcmp(k, "evidence_imports") != 0 &&
		    !bg_value_py_same(v, bg_value_get(after, k)))
			violated("a top-level member changed", text, len);
	}
	bg_ctx_release(&ctx);
	bg_arena_free(a);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct bg_arena *a = bg_arena_new();
	struct bg_value *root, *gates, *g;
	struct bg_strbuf out = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	const char *id = NULL;
	size_t i;

	bg_ctx_init(&ctx);
	if (bg_value_parse(a, (const char *)data, size, "fuzz.json", &root, &ctx) == BG_OK &&
	    bg_value_is_object(root)) {
		gates = bg_value_get(root, "gates");
		if (!bg_value_is_array(gates))
			gates = NULL;
		BG_VALUE_ARRAY_FOREACH(gates, i, g) {
			if (plain_id(bg_value_get(g, "id"))) {
				id = bg_value_str(bg_value_get(g, "id"));
				break;
			}
		}
		if (bg_promote_edit_registry((const char *)data, size, id ? id : "no-such-gate", NEW_STATE,
					     MEASUREMENT, EVIDENCE, &out, &ctx) == BG_OK) {
			if (!id)
				violated("a gate that is not listed was promoted", out.buf, out.len);
			check_edit(root, id, out.buf, out.len);
		}
	}
	bg_strbuf_release(&out);
	bg_ctx_release(&ctx);
	bg_arena_free(a);
	return 0;
}

#define FUZZ_NAME "fuzz_promote"
#include "replay.h"
