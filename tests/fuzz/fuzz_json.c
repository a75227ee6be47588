/*
 * fuzz_json.c - differential fuzz target for the JSON parser's two ways of
 * reading a document: building every value, and building only the members
 * a keep list names (bg_value_parse_keep, as evidence imports read their
 * files). The contract (benchgate/value.h) makes them agree: the same
 * status and the same message for a bad document, and for a good one the
 * kept document equals the whole one filtered by the keep list. A third
 * reading, from a file and refusing repeated keys (as benchgate.json is
 * read), must agree with the first but for a repeated key it reports. Any
 * disagreement aborts.
 *
 * With -fsanitize=fuzzer (make fuzz FUZZ_TARGET=fuzz_json) this is a
 * libFuzzer target; without it, main() replays the files named on the
 * command line (tests/scripts/test_fuzz_replay.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchgate/fsutil.h"
#include "benchgate/value.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* Short names, so that mutations find them: "a" kept whole, "b" and "c"
 * filtered by sub-lists, everything else left out. */
static const struct bg_value_keep keep_yz[] = {{"y", NULL}, {"z", NULL}, {NULL, NULL}};
static const struct bg_value_keep keep_x[] = {{"x", NULL}, {"c", keep_yz}, {NULL, NULL}};
static const struct bg_value_keep keep_top[] = {
	{"a", NULL}, {"b", keep_x}, {"c", keep_yz}, {"measurements", keep_yz}, {NULL, NULL},
};

static const struct bg_value_keep *entry(const struct bg_value_keep *keep, const char *key)
{
	for (; keep->key; keep++)
		if (strcmp(keep->key, key) == 0)
			return keep;
	return NULL;
}

/* The documented meaning of a keep list, applied to a whole document. */
static struct bg_value *filter(struct bg_arena *a, struct bg_value *v, const struct bg_value_keep *keep)
{
	struct bg_value *out, *m;
	const char *k;
	size_t i;

	if (!keep)
		return v;
	if (bg_value_is_array(v)) {
		out = bg_value_new_array(a, bg_value_size(v));
		BG_VALUE_ARRAY_FOREACH(v, i, m)
			bg_value_append(a, out, filter(a, m, keep));
		return out;
	}
	if (!bg_value_is_object(v))
		return v;
	out = bg_value_new_object(a, bg_value_size(v));
	BG_VALUE_OBJECT_FOREACH(v, k, m) {
		const struct bg_value_keep *e = entry(keep, k);
		if (e)
			bg_value_set(a, out, k, filter(a, m, e->members));
	}
	return out;
}

static void fail(const char *what, const char *a, const char *b)
{
	fprintf(stderr, "fuzz_json: %s\n  whole: %s\n  kept:  %s\n", what, a, b);
	abort();
}

/*
 * The same text read from a file with BG_VALUE_REJECT_DUPLICATES (as
 * benchgate.json is read) answers as the plain parse does, except that a
 * repeated key may be reported first: then the message says so.
 */
static void check_reject_duplicates(struct bg_arena *a, const unsigned char *data, size_t size, int r1,
				    struct bg_ctx *c1, struct bg_value *whole)
{
	static char path[64];
	struct bg_value *strict = NULL;
	struct bg_ctx c3;
	FILE *f;
	int r3;

	if (!path[0]) {
		const char *dir = getenv("TMPDIR");
		snprintf(path, sizeof(path), "%s/fuzz_json.%ld", dir && strlen(dir) < 32 ? dir : "/tmp", (long)getpid());
	}
	if (!(f = fopen(path, "wb")) || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	bg_ctx_init(&c3);
	r3 = bg_value_parse_file_flags(a, path, "f.json", BG_VALUE_REJECT_DUPLICATES, &strict, &c3);
	remove(path);
	if (r3 && strstr(bg_ctx_message(&c3), ": duplicate key ")) {
		bg_ctx_release(&c3);
		return;
	}
	if (r3 != r1)
		fail("rejecting duplicates: different status", r1 ? bg_ctx_message(c1) : "ok",
		     r3 ? bg_ctx_message(&c3) : "ok");
	if (r1 && strcmp(bg_ctx_message(c1), bg_ctx_message(&c3)) != 0)
		fail("rejecting duplicates: different message", bg_ctx_message(c1), bg_ctx_message(&c3));
	if (!r1) {
		struct bg_strbuf x = BG_STRBUF_INIT, y = BG_STRBUF_INIT;
		bg_value_dump(&x, whole, -1, false);
		bg_value_dump(&y, strict, -1, false);
		if (strcmp(x.buf, y.buf) != 0)
			fail("rejecting duplicates: different values", x.buf, y.buf);
		bg_strbuf_release(&x);
		bg_strbuf_release(&y);
	}
	bg_ctx_release(&c3);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct bg_arena *a = bg_arena_new();
	struct bg_value *whole = NULL, *kept = NULL;
	struct bg_ctx c1, c2;
	int r1, r2;

	bg_ctx_init(&c1);
	bg_ctx_init(&c2);
	r1 = bg_value_parse(a, (const char *)data, size, "f.json", &whole, &c1);
	r2 = bg_value_parse_keep(a, (const char *)data, size, "f.json", keep_top, &kept, &c2);
	if (r1 != r2)
		fail("different status", r1 ? bg_ctx_message(&c1) : "ok", r2 ? bg_ctx_message(&c2) : "ok");
	if (r1 && strcmp(bg_ctx_message(&c1), bg_ctx_message(&c2)) != 0)
		fail("different message", bg_ctx_message(&c1), bg_ctx_message(&c2));
	if (!r1) {
		struct bg_strbuf x = BG_STRBUF_INIT, y = BG_STRBUF_INIT;
		bg_value_dump(&x, filter(a, whole, keep_top), -1, false);
		bg_value_dump(&y, kept, -1, false);
		if (strcmp(x.buf, y.buf) != 0)
			fail("different values", x.buf, y.buf);
		bg_strbuf_release(&x);
		bg_strbuf_release(&y);
	}
	check_reject_duplicates(a, data, size, r1, &c1, whole);
	bg_ctx_release(&c1);
	bg_ctx_release(&c2);
	bg_arena_free(a);
	return 0;
}

#define FUZZ_NAME "fuzz_json"
#include "replay.h"
