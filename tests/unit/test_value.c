/*
 * test_value.c - the arena JSON DOM: strict parsing and its messages,
 * duplicate keys (kept, or refused on request) and insertion order, big objects, construction, and the
 * Python-compatible dump/str/repr/compare (expectations computed once with
 * CPython's json module and pasted here).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchgate/json.h"
#include "benchgate/value.h"
#include "core/fmath.h"
#include "core/value_internal.h" /* SMALL_OBJECT, obj_hdr: both sides of the index threshold */
#include "core/pyval.h"

static struct bg_value *parse_n(struct bg_arena *a, const char *text, size_t n)
{
	struct bg_value *v = NULL;
	struct bg_ctx ctx;

	bg_ctx_init(&ctx);
	if (bg_value_parse(a, text, n, "t.json", &v, &ctx) != BG_OK)
		fail_msg("unexpected parse error: %s", bg_ctx_message(&ctx));
	bg_ctx_release(&ctx);
	assert_non_null(v);
	return v;
}

static struct bg_value *parse(struct bg_arena *a, const char *text)
{
	return parse_n(a, text, strlen(text));
}

/* The parse fails with exactly this message (NULL: any message). */
static void expect_error_n(const char *text, size_t n, const char *want)
{
	struct bg_arena *a = bg_arena_new();
	struct bg_value *v = (struct bg_value *)1;
	struct bg_ctx ctx;

	bg_ctx_init(&ctx);
	assert_int_equal(bg_value_parse(a, text, n, "t.json", &v, &ctx), BG_ECHECK);
	assert_null(v);
	if (want)
		assert_string_equal(bg_ctx_message(&ctx), want);
	bg_ctx_release(&ctx);
	bg_arena_free(a);
}

#define EXPECT_ERROR(lit, want) expect_error_n(lit, sizeof(lit) - 1, want)

static char *dump(const char *text, int indent, bool sort)
{
	struct bg_arena *a = bg_arena_new();
	struct bg_strbuf sb = BG_STRBUF_INIT;

	bg_value_dump(&sb, parse(a, text), indent, sort);
	bg_arena_free(a);
	return bg_strbuf_detach(&sb, NULL);
}

static void expect_dump(const char *text, int indent, bool sort, const char *want)
{
	char *got = dump(text, indent, sort);
	assert_string_equal(got, want);
	free(got);
}

static void expect_repr(const char *text, bool str, const char *want)
{
	struct bg_arena *a = bg_arena_new();
	struct bg_strbuf sb = BG_STRBUF_INIT;
	struct bg_value *v = parse(a, text);

	if (str)
		bg_value_py_str(&sb, v);
	else
		bg_value_py_repr(&sb, v);
	assert_string_equal(sb.buf, want);
	bg_strbuf_release(&sb);
	bg_arena_free(a);
}

static void test_truncated(void **state)
{
	(void)state;
	EXPECT_ERROR("", "t.json: file is empty; expected a JSON object");
	EXPECT_ERROR("   ", "t.json: file holds only whitespace; expected a JSON object");
	EXPECT_ERROR("{", "t.json:1:2: invalid JSON: string or '}' expected near end of file");
	EXPECT_ERROR("{\"a\": [1, 2", "t.json:1:12: invalid JSON: ']' expected near end of file");
	EXPECT_ERROR("[1,", "t.json:1:4: invalid JSON: ']' expected near end of file");
	EXPECT_ERROR("{\"a\"", "t.json:1:5: invalid JSON: ':' expected near end of file");
	EXPECT_ERROR("{\"a\":", "t.json:1:6: invalid JSON: unexpected token near end of file");
	EXPECT_ERROR("{\"registry\": \n", "t.json:2:1: invalid JSON: unexpected token near end of file");
	EXPECT_ERROR("\"abc", "t.json:1:5: invalid JSON: premature end of input near end of file");
	EXPECT_ERROR("\"\\", "t.json:1:3: invalid JSON: premature end of input near end of file");
	EXPECT_ERROR("tru", "t.json:1:3: invalid JSON: invalid token near 'tru'");
	EXPECT_ERROR("nulll", "t.json:1:5: invalid JSON: invalid token near 'nulll'");
}

static void test_trailing_and_syntax(void **state)
{
	(void)state;
	EXPECT_ERROR("{} x", "t.json:1:4: invalid JSON: end of file expected near 'x'");
	EXPECT_ERROR("[1] [2]", "t.json:1:5: invalid JSON: end of file expected near '['");
	EXPECT_ERROR("1 2", "t.json:1:3: invalid JSON: end of file expected near '2'");
	EXPECT_ERROR("[1,]", "t.json:1:4: invalid JSON: unexpected token near ']'");
	EXPECT_ERROR("{\"a\":1,}", "t.json:1:8: invalid JSON: string or '}' expected near '}'");
	EXPECT_ERROR("// x\n{}", "t.json:1:1: invalid JSON: unexpected token near '/'");
	EXPECT_ERROR("/* */{}", "t.json:1:1: invalid JSON: unexpected token near '/'");
	EXPECT_ERROR("[1 2]", "t.json:1:4: invalid JSON: ']' expected near '2'");
	EXPECT_ERROR("[true false]", "t.json:1:11: invalid JSON: ']' expected near 'false'");
	EXPECT_ERROR("{\"a\" 1}", "t.json:1:6: invalid JSON: ':' expected near '1'");
	EXPECT_ERROR("{1:2}", "t.json:1:2: invalid JSON: string or '}' expected near '1'");
	EXPECT_ERROR("\n\n  [1,\n   }", "t.json:4:4: invalid JSON: unexpected token near '}'");
	/* columns count code points, not bytes */
	EXPECT_ERROR("[\"\xc3\xa9\xc3\xa9\", x]", "t.json:1:8: invalid JSON: invalid token near 'x'");
	/* Python's json reads NaN, Infinity and -Infinity, spelled so (test_nonfinite) */
	EXPECT_ERROR("nan", "t.json:1:3: invalid JSON: invalid token near 'nan'");
	EXPECT_ERROR("-NaN", NULL);
	EXPECT_ERROR("+Infinity", NULL);
	EXPECT_ERROR("Inf", NULL);
	EXPECT_ERROR("-Infinit", NULL);
	EXPECT_ERROR("[NaNa]", "t.json:1:5: invalid JSON: invalid token near 'NaNa'");
	EXPECT_ERROR("[Infinity1]", NULL);
	EXPECT_ERROR("[-infinity]", NULL);
	EXPECT_ERROR("'a'", NULL);
	EXPECT_ERROR("{'a': 1}", NULL);
}

static void test_bad_strings(void **state)
{
	(void)state;
	EXPECT_ERROR("\"\\x\"", "t.json:1:3: invalid JSON: invalid escape near '\"\\x'");
	EXPECT_ERROR("\"\\u12\"", "t.json:1:3: invalid JSON: invalid escape near '\"\\u'");
	EXPECT_ERROR("\"\\u12G4\"", NULL);
	/* a lone surrogate escape is kept (test_lone_surrogates); the escape after
	 * a high one must still be one */
	EXPECT_ERROR("\"\\ud800\\u12G4\"", "t.json:1:9: invalid JSON: invalid escape near '\"\\ud800\\u'");
	EXPECT_ERROR("\"\\u0000\"", "t.json:1:7: invalid JSON: \\u0000 is not allowed near '\"\\u0000'");
	EXPECT_ERROR("\"a\tb\"", "t.json:1:3: invalid JSON: control character 0x9 near '\"a\\x09'");
	EXPECT_ERROR("\"a\nb\"", NULL);
	/* invalid UTF-8: stray byte, overlong, encoded surrogate, beyond U+10FFFF, truncated */
	EXPECT_ERROR("\"\xff\"", "t.json:1:2: invalid JSON: unable to decode byte 0xff near '\"\\xff'");
	EXPECT_ERROR("\"\xc0\x80\"", NULL);
	EXPECT_ERROR("\"\xed\xa0\x80\"", NULL);
	EXPECT_ERROR("\"\xf4\x90\x80\x80\"", NULL);
	EXPECT_ERROR("\"\xe2\x82\"", NULL);
	EXPECT_ERROR("\"\x80\"", NULL);
	EXPECT_ERROR("\xef\xbb\xbf{}", NULL); /* a byte-order mark is not JSON */
}

static void test_nul_bytes(void **state)
{
	(void)state;
	EXPECT_ERROR("{}\0", "t.json:1:3: invalid JSON: end of file expected near '\\x00'");
	EXPECT_ERROR("\"a\0b\"", "t.json:1:3: invalid JSON: control character 0x0 near '\"a\\x00'");
	EXPECT_ERROR("\0", NULL);
	EXPECT_ERROR("[1,\0 2]", NULL);
}

/* Under the sanitizers an impossible allocation returns NULL, as malloc
 * does, instead of stopping the test: the handler below is what is tested. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

static jmp_buf oom_jump;
static size_t oom_size;

static void oom_catch(size_t n)
{
	oom_size = n;
	longjmp(oom_jump, 1);
}

/* bg_set_out_of_memory: an allocation that cannot be met reaches the
 * handler with its size (the program's handler exits 4). */
static void test_out_of_memory_handler(void **state)
{
	volatile size_t huge = (size_t)1 << 62;
	void *volatile p = NULL;

	(void)state;
	bg_set_out_of_memory(oom_catch);
	oom_size = 0;
	if (setjmp(oom_jump) == 0)
		p = bg_xmalloc(huge);
	assert_null(p);
	assert_true(oom_size == huge);
	oom_size = 0;
	if (setjmp(oom_jump) == 0)
		p = bg_xcalloc(huge, 4);
	assert_null(p);
	assert_true(oom_size == SIZE_MAX); /* 2^64 bytes: beyond a size_t */
	bg_set_out_of_memory(NULL);
	p = bg_xmalloc(16); /* an ordinary allocation still works */
	assert_non_null(p);
	free(p);
}

/* A number in a member the parse does not build fails or passes as it
 * does when built: near and beyond a double's range (the skipped path
 * leaves out the conversion only where no overflow is possible). */
static void test_keep_numbers(void **state)
{
	static const struct bg_value_keep keep[] = {{"k", NULL}, {NULL, NULL}};
	static const char *const nums[] = {
		"1e400", "-1e400", "1.7976931348623159e308", "1.7976931348623157e308",
		"99999e304", "9999e304", "0.00001e309", "10e307", "1e308", "1e309",
		"0.1e310", "0.1e309", "123456789012345678901234567890.5e280",
		"12345678901234567890123456789.5e280", "1.2345678901234567e-400", "0.12345678901234567",
		"-0.0e400", "0e400000",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		struct bg_arena *a = bg_arena_new();
		struct bg_strbuf text = BG_STRBUF_INIT, full = BG_STRBUF_INIT;
		struct bg_value *v;
		struct bg_ctx ctx;
		int rc_full, rc_keep;

		bg_strbuf_addf(&text, "{\"skip\": [%s], \"k\": %s}", nums[i], nums[i]);
		bg_ctx_init(&ctx);
		rc_full = bg_value_parse(a, text.buf, text.len, "t.json", &v, &ctx);
		if (rc_full)
			bg_strbuf_adds(&full, bg_ctx_message(&ctx));
		bg_ctx_release(&ctx);
		/* the skipped member alone decides: the kept one is the same number */
		bg_strbuf_reset(&text);
		bg_strbuf_addf(&text, "{\"skip\": [%s], \"k\": 1}", nums[i]);
		bg_ctx_init(&ctx);
		rc_keep = bg_value_parse_keep(a, text.buf, text.len, "t.json", keep, &v, &ctx);
		if (rc_keep != rc_full)
			fail_msg("%s: kept parse %d, full parse %d", nums[i], rc_keep, rc_full);
		if (rc_keep)
			assert_string_equal(bg_ctx_message(&ctx), full.buf);
		else
			assert_true(bg_value_int(bg_value_get(v, "k")) == 1);
		bg_ctx_release(&ctx);
		bg_strbuf_release(&text);
		bg_strbuf_release(&full);
		bg_arena_free(a);
	}
}

/* bg_value_kept_partly: an object a keep list built without some of its
 * members (empty or not) says so; one built whole, or not through a keep
 * list, does not; nor does anything but an object. */
static void test_keep_partly(void **state)
{
	static const struct bg_value_keep rows[] = {{"id", NULL}, {NULL, NULL}};
	static const struct bg_value_keep keep[] = {{"a", rows}, {"b", rows}, {"c", rows}, {"d", rows},
						    {NULL, NULL}};
	static const char text[] = "{\"a\": {}, \"b\": {\"x\": 1}, \"c\": {\"id\": 2, \"y\": 3}, "
				   "\"d\": [{\"id\": 4}, {\"z\": 5}], \"e\": 6}";
	struct bg_arena *a = bg_arena_new();
	struct bg_value *v, *d;
	struct bg_ctx ctx;

	(void)state;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_value_parse_keep(a, text, sizeof(text) - 1, "t.json", keep, &v, &ctx), BG_OK);
	assert_true(bg_value_kept_partly(v)); /* "e" left out */
	assert_false(bg_value_kept_partly(bg_value_get(v, "a")));
	assert_int_equal(bg_value_size(bg_value_get(v, "b")), 0);
	assert_true(bg_value_kept_partly(bg_value_get(v, "b")));
	assert_int_equal(bg_value_size(bg_value_get(v, "c")), 1);
	assert_true(bg_value_kept_partly(bg_value_get(v, "c")));
	d = bg_value_get(v, "d");
	assert_false(bg_value_kept_partly(d)); /* an array */
	assert_false(bg_value_kept_partly(bg_value_at(d, 0)));
	assert_true(bg_value_kept_partly(bg_value_at(d, 1)));
	assert_false(bg_value_kept_partly(NULL));
	assert_int_equal(bg_value_parse(a, text, sizeof(text) - 1, "t.json", &v, &ctx), BG_OK);
	assert_false(bg_value_kept_partly(v));
	assert_false(bg_value_kept_partly(bg_value_get(v, "b")));
	bg_ctx_release(&ctx);
	bg_arena_free(a);
}

static void test_numbers(void **state)
{
	struct bg_arena *a = bg_arena_new();
	struct bg_value *v;

	(void)state;
	v = parse(a, "[9223372036854775807, -9223372036854775808, -0, 0.5, -0.0, 1e-400, 1E+2, 12345678901234567890.0]");
	assert_int_equal(bg_value_size(v), 8);
	assert_true(bg_value_is_integer(bg_value_at(v, 0)));
	assert_true(bg_value_int(bg_value_at(v, 0)) == INT64_MAX);
	assert_true(bg_value_int(bg_value_at(v, 1)) == INT64_MIN);
	assert_true(bg_value_is_integer(bg_value_at(v, 2)));
	assert_true(bg_value_real(bg_value_at(v, 3)) == 0.5);
	assert_true(signbit(bg_value_real(bg_value_at(v, 4))));
	assert_true(bg_value_real(bg_value_at(v, 5)) == 0.0);
	assert_true(bg_value_is_real(bg_value_at(v, 6)));
	assert_true(bg_value_real(bg_value_at(v, 7)) == 12345678901234567890.0);
	EXPECT_ERROR("\xef\xbb\xbf{}", "t.json:1:1: invalid JSON: the file starts with a UTF-8 byte order mark (BOM); save it without one");
	EXPECT_ERROR("\xef\xbb", NULL);
	EXPECT_ERROR("01", NULL);
	EXPECT_ERROR("-", NULL);
	EXPECT_ERROR("1.", NULL);
	EXPECT_ERROR(".5", NULL);
	EXPECT_ERROR("1e", NULL);
	EXPECT_ERROR("1e+", NULL);
	EXPECT_ERROR("+1", NULL);
	EXPECT_ERROR("0x10", NULL);
	bg_arena_free(a);
}

/* Every real parses to what strtod gives (the fast path and the slow one). */
static void test_reals_match_strtod(void **state)
{
	struct bg_arena *a = bg_arena_new();
	uint64_t x = 88172645463325252ULL;

	(void)state;
	for (int i = 0; i < 20000; i++) {
		char text[64];
		double d, want;
		struct bg_value *v;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(&d, &x, sizeof(d));
		if (!isfinite(d))
			continue;
		switch (i % 4) {
		case 0: snprintf(text, sizeof(text), "%.17g", d); break;
		case 1: snprintf(text, sizeof(text), "%.15g", d); break;
		case 2: snprintf(text, sizeof(text), "%.6f", (double)(x % 100000000) / 1000.0); break;
		default: snprintf(text, sizeof(text), "%.3e", (double)(x % 1000000)); break;
		}
		if (!strpbrk(text, ".eE"))
			continue; /* an integer */
		want = strtod(text, NULL);
		if (isinf(want))
			continue;
		v = parse(a, text);
		assert_true(bg_value_is_real(v));
		if (memcmp(&want, &v->u.d, sizeof(want)) != 0)
			fail_msg("%s: got %.17g want %.17g", text, v->u.d, want);
	}
	bg_arena_free(a);
}

static void test_depth(void **state)
{
	enum { DEPTH = BG_VALUE_MAX_DEPTH };
	char *text = malloc(2 * (DEPTH + 1) + 1);
	struct bg_arena *a = bg_arena_new();

	(void)state;
	memset(text, '[', DEPTH);
	memset(text + DEPTH, ']', DEPTH);
	assert_int_equal(bg_value_size(parse_n(a, text, 2 * DEPTH)) , 1);
	memset(text, '[', DEPTH + 1);
	memset(text + DEPTH + 1, ']', DEPTH + 1);
	expect_error_n(text, 2 * (DEPTH + 1), NULL);
	memset(text, '[', 2 * (DEPTH + 1)); /* deep and truncated */
	expect_error_n(text, 2 * (DEPTH + 1), NULL);
	free(text);
	bg_arena_free(a);
}

/* The walks visit nothing of a value of the other kind (or of none). */
static void test_foreach_wrong_type(void **state)
{
	struct bg_arena *a = bg_arena_new();
	struct bg_value *arr, *obj, *v, *none = NULL;
	const char *k;
	size_t i, seen = 0;

	(void)state;
	arr = parse(a, "[\"x\", \"y\", 3]");
	obj = parse(a, "{\"a\": 1, \"b\": 2}");
	BG_VALUE_OBJECT_FOREACH(arr, k, v)
		seen++;
	BG_VALUE_ARRAY_FOREACH(obj, i, v)
		seen++;
	BG_VALUE_OBJECT_FOREACH(none, k, v)
		seen++;
	BG_VALUE_ARRAY_FOREACH(none, i, v)
		seen++;
	assert_int_equal(seen, 0);
	BG_VALUE_OBJECT_FOREACH(obj, k, v)
		seen++;
	BG_VALUE_ARRAY_FOREACH(arr, i, v)
		seen++;
	assert_int_equal(seen, 5);
	bg_arena_free(a);
}

static void test_duplicates_and_order(void **state)
{
	struct bg_arena *a = bg_arena_new();
	struct bg_strbuf big = BG_STRBUF_INIT, want = BG_STRBUF_INIT;
	struct bg_value *v;
	char *got;

	(void)state;
	/* Python's dict: first position, last value */
	expect_dump("{\"a\": 1, \"b\": 2, \"a\": 3}", -1, false, "{\"a\": 3, \"b\": 2}");
	expect_dump("{\"z\": 1, \"a\": 2, \"m\": 3}", -1, false, "{\"z\": 1, \"a\": 2, \"m\": 3}");
	expect_dump("{\"z\": 1, \"a\": 2, \"m\": 3}", 2, true, "{\n  \"a\": 2,\n  \"m\": 3,\n  \"z\": 1\n}");
	/* a big object (hash index) with duplicates spread through it */
	bg_strbuf_addch(&big, '{');
	for (int i = 0; i < 300; i++)
		bg_strbuf_addf(&big, "%s\"k%d\": %d", i ? ", " : "", i % 200, i);
	bg_strbuf_addch(&big, '}');
	bg_strbuf_addch(&want, '{');
	for (int i = 0; i < 200; i++)
		bg_strbuf_addf(&want, "%s\"k%d\": %d", i ? ", " : "", i, i < 100 ? i + 200 : i);
	bg_strbuf_addch(&want, '}');
	got = dump(big.buf, -1, false);
	assert_string_equal(got, want.buf);
	free(got);
	v = parse(a, big.buf);
	assert_int_equal(bg_value_size(v), 200);
	for (int i = 0; i < 200; i++) {
		char k[16];
		snprintf(k, sizeof(k), "k%d", i);
		assert_int_equal(bg_value_int(bg_value_get(v, k)), i < 100 ? i + 200 : i);
	}
	assert_null(bg_value_get(v, "k200"));
	assert_null(bg_value_get(v, "k"));
	bg_strbuf_release(&big);
	bg_strbuf_release(&want);
	bg_arena_free(a);
}

static void test_dump_matches_python(void **state)
{
	(void)state;
	expect_dump("{\"b\": 1, \"a\": [1, {\"d\": null, \"c\": true}], \"e\": {}, \"f\": []}", 2, true,
		    "{\n  \"a\": [\n    1,\n    {\n      \"c\": true,\n      \"d\": null\n    }\n  ],\n"
		    "  \"b\": 1,\n  \"e\": {},\n  \"f\": []\n}");
	expect_dump("{\"b\": 1, \"a\": [1, {\"d\": null, \"c\": true}], \"e\": {}, \"f\": []}", -1, false,
		    "{\"b\": 1, \"a\": [1, {\"d\": null, \"c\": true}], \"e\": {}, \"f\": []}");
	expect_dump("[\"\\u00e9\", \"\\ud83d\\ude00\", \"tab\\there\", \"q\\\"b\\\\s\", \"\\u007f\\u001f\", \"/\\/\"]",
		    -1, false,
		    "[\"\\u00e9\", \"\\ud83d\\ude00\", \"tab\\there\", \"q\\\"b\\\\s\", \"\\u007f\\u001f\", \"//\"]");
	expect_dump("[1e16, 1.5, 0.1, 1e-5, 123456789.123, -0.0, 5e-324, 1.7976931348623157e308, 2.5e-7, "
		    "100.0, 1E+2, 0.30000000000000004, 1e22, 1e21, 9007199254740993]",
		    -1, false,
		    "[1e+16, 1.5, 0.1, 1e-05, 123456789.123, -0.0, 5e-324, 1.7976931348623157e+308, "
		    "2.5e-07, 100.0, 100.0, 0.30000000000000004, 1e+22, 1e+21, 9007199254740993]");
	expect_dump("[-9223372036854775808, 9223372036854775807, 0, -0, 12345678901234567890.0]", 2, false,
		    "[\n  -9223372036854775808,\n  9223372036854775807,\n  0,\n  0,\n  1.2345678901234567e+19\n]");
	/* code-point order of keys */
	expect_dump("{\"\\u00e9\": 1, \"B\": 2, \"b\": 3}", -1, true, "{\"B\": 2, \"b\": 3, \"\\u00e9\": 1}");
	expect_dump("{\"\\u00e9\": 1, \"B\": 2, \"b\": 3}", -1, false, "{\"\\u00e9\": 1, \"B\": 2, \"b\": 3}");
	/* a dump parses back to itself */
	{
		const char *src = "{\"x\": [1, 2.5, \"\\u00e9\\ud83d\\ude00\", {\"y\": null}], \"z\": false}";
		char *once = dump(src, -1, false), *twice = dump(once, -1, false);
		assert_string_equal(once, twice);
		free(once);
		free(twice);
	}
}

/*
 * A document past every size threshold of the parser and the arena: more
 * distinct keys than are interned (8192), thousands of distinct short
 * strings (the shared-string table grows with entries in it), objects whose
 * members are indexed, and one string bigger than an arena block's quarter
 * and than the mapping threshold (its own mmap'd block). Every member is
 * found again, and the dump reproduces the text byte for byte.
 */
static void test_large_document(void **state)
{
	enum { NKEYS = 12000, BIG = 3 << 20 };
	struct bg_strbuf text = BG_STRBUF_INIT;
	struct bg_arena *a = bg_arena_new();
	struct bg_value *v, *x;
	char *big = malloc(BIG + 1), *out;
	char key[32], want[32];

	(void)state;
	assert_non_null(big);
	memset(big, 'x', BIG);
	big[BIG] = '\0';
	bg_strbuf_addch(&text, '{');
	for (int i = 0; i < NKEYS; i++)
		bg_strbuf_addf(&text, "\"k%05d\": [\"v%05d\", \"v%05d\", %d], ", i, i, i % 700, i);
	bg_strbuf_addf(&text, "\"big\": \"%s\"}", big);
	v = parse_n(a, text.buf, text.len);
	assert_int_equal(bg_value_size(v), NKEYS + 1);
	for (int i = 0; i < NKEYS; i += 7) {
		snprintf(key, sizeof(key), "k%05d", i);
		x = bg_value_get(v, key);
		assert_non_null(x);
		snprintf(want, sizeof(want), "v%05d", i);
		assert_string_equal(bg_value_str(x->u.items[0]), want);
		snprintf(want, sizeof(want), "v%05d", i % 700);
		assert_string_equal(bg_value_str(x->u.items[1]), want);
	}
	assert_null(bg_value_get(v, "k12000"));
	assert_int_equal(bg_value_len(bg_value_get(v, "big")), BIG);
	assert_string_equal(bg_value_str(bg_value_get(v, "big")), big);
	assert_true(bg_arena_bytes(a) >= (size_t)BIG + NKEYS * 24);
	bg_arena_free(a);
	out = dump(text.buf, -1, false);
	assert_int_equal(strlen(out), text.len);
	assert_true(strcmp(out, text.buf) == 0);
	free(out);
	free(big);
	bg_strbuf_release(&text);
}

static void test_str_and_repr(void **state)
{
	(void)state;
	expect_repr("{\"b\": 1, \"a\": [1, {\"d\": null, \"c\": true}], \"e\": {}, \"f\": []}", false,
		    "{'b': 1, 'a': [1, {'d': None, 'c': True}], 'e': {}, 'f': []}");
	expect_repr("[\"\\u00e9\", \"\\ud83d\\ude00\", \"tab\\there\", \"q\\\"b\\\\s\", \"\\u007f\\u001f\", \"/\\/\"]",
		    false, "['\xc3\xa9', '\xf0\x9f\x98\x80', 'tab\\there', 'q\"b\\\\s', '\\x7f\\x1f', '//']");
	/* spaces other than ' ', format characters and private use are escaped
	 * as CPython 3.11 (Unicode 14.0) escapes them */
	expect_repr("\"a\\u00a0b\\u3000c\\u2066d\\udb80\\udc00e\\u200af\\u0890g\\u00e9\"", false,
		    "'a\\xa0b\\u3000c\\u2066d\\U000f0000e\\u200af\\u0890g\xc3\xa9'");
	expect_repr("[1e16, -0.0, 2.5e-7, 100.0]", false, "[1e+16, -0.0, 2.5e-07, 100.0]");
	expect_repr("\"it's\"", false, "\"it's\"");
	expect_repr("\"plain\"", true, "plain");
	expect_repr("1.5", true, "1.5");
	expect_repr("null", true, "None");
	expect_repr("false", false, "False");
}

/* Python compares an int with a float exactly (2**53 + 1 != 2.0**53), and
 * so must equality and ordering here. */
static void test_int_float_exact(void **state)
{
	struct bg_arena *a = bg_arena_new();
	struct bg_value *v = parse(a, "[9007199254740993, 9007199254740992.0, 9223372036854775807,"
				      " 9223372036854775808.0, -9223372036854775808, -9223372036854775808.0,"
				      " 2, 2.5, -3, -3.5, 1, true]");
	bool err = false;

	(void)state;
	assert_false(bg_value_equal(bg_value_at(v, 0), bg_value_at(v, 1)));
	assert_true(bg_value_cmp(bg_value_at(v, 0), bg_value_at(v, 1), &err) > 0);
	assert_true(bg_value_cmp(bg_value_at(v, 1), bg_value_at(v, 0), &err) < 0);
	assert_false(bg_value_equal(bg_value_at(v, 2), bg_value_at(v, 3)));
	assert_true(bg_value_cmp(bg_value_at(v, 2), bg_value_at(v, 3), &err) < 0);
	assert_true(bg_value_equal(bg_value_at(v, 4), bg_value_at(v, 5)));
	assert_true(bg_value_cmp(bg_value_at(v, 6), bg_value_at(v, 7), &err) < 0);
	assert_true(bg_value_cmp(bg_value_at(v, 8), bg_value_at(v, 9), &err) > 0);
	assert_true(bg_value_cmp(bg_value_at(v, 9), bg_value_at(v, 8), &err) < 0);
	assert_true(bg_value_equal(bg_value_at(v, 10), bg_value_at(v, 11)));
	assert_false(err);
	bg_arena_free(a);
}

/* bg_value_py_key: one key where a Python set sees one value (9 and 9.0,
 * true and 1, false and 0, -0.0 and 0), apart where it sees two ("9" and 9,
 * 2**53 + 1 and 2.0**53, 9.5 and 9); none for a list or an object. */
static void test_py_key(void **state)
{
	static const size_t same[][2] = {{0, 1}, {2, 3}, {4, 5}, {6, 4}};
	static const size_t apart[][2] = {{0, 7}, {8, 9}, {10, 0}, {11, 2}, {4, 11}};
	struct bg_arena *a = bg_arena_new();
	struct bg_value *v = parse(a, "[9, 9.0, true, 1, false, 0, -0.0, \"9\", 9007199254740993,"
				      " 9007199254740992.0, 9.5, null, [1], {}]");
	struct bg_strbuf x = BG_STRBUF_INIT, y = BG_STRBUF_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]) + sizeof(apart) / sizeof(apart[0]); i++) {
		bool eq = i < sizeof(same) / sizeof(same[0]);
		const size_t *pair = eq ? same[i] : apart[i - sizeof(same) / sizeof(same[0])];

		bg_strbuf_reset(&x);
		bg_strbuf_reset(&y);
		assert_true(bg_value_py_key(&x, bg_value_at(v, pair[0])));
		assert_true(bg_value_py_key(&y, bg_value_at(v, pair[1])));
		assert_int_equal(strcmp(x.buf, y.buf) == 0, eq);
	}
	bg_strbuf_reset(&x);
	assert_false(bg_value_py_key(&x, bg_value_at(v, 12)));
	assert_false(bg_value_py_key(&x, bg_value_at(v, 13)));
	assert_int_equal(x.len, 0);
	bg_strbuf_release(&x);
	bg_strbuf_release(&y);
	bg_arena_free(a);
}

/* bg_floor and bg_ceil are C's (the program's libm is static, without them). */
static void test_floor(void **state)
{
	static const double xs[] = {0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5, 1e-300, -1e-300,
				    4503599627370495.5, -4503599627370495.5, 4503599627370496.0,
				    -4503599627370497.0, 1e300, -1e300, 9.2e18, -9.3e18, INFINITY,
				    -INFINITY, 0.9999999999999999, -0.9999999999999999};

	(void)state;
	for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++) {
		double want = floor(xs[i]), got = bg_floor(xs[i]);
		assert_true(got == want);
		assert_int_equal(signbit(got) != 0, signbit(want) != 0);
	}
	assert_true(isnan(bg_floor(NAN)));
	for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++) {
		double want = ceil(xs[i]), got = bg_ceil(xs[i]);
		assert_true(got == want);
		assert_int_equal(signbit(got) != 0, signbit(want) != 0);
	}
	/* and over a sweep of fractions either side of zero */
	for (int k = -4000; k <= 4000; k++) {
		double x = k / 7.0 + k * 1e-3;
		assert_true(bg_floor(x) == floor(x));
	}
}

/* Python's float // (values printed by python3 -c "print(p // q)"). */
static void test_py_floordiv(void **state)
{
	static const struct { double p, q, want; } cases[] = {
		{1, 0.1, 9.0}, {-1, 0.1, -10.0}, {128, 0.1, 1279.0}, {7.5, 2, 3.0}, {-7.5, 2, -4.0},
		{7.5, -2, -4.0}, {-7.5, -2, 3.0}, {1, INFINITY, 0.0}, {-1, INFINITY, -1.0},
		{128, 4, 32.0}, {1e308, 1e-308, INFINITY},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_true(bg_py_floordiv(cases[i].p, cases[i].q) == cases[i].want);
	assert_true(signbit(bg_py_floordiv(-0.0, 1.0)));  /* -0.0 // 1.0 is -0.0 */
	assert_true(signbit(bg_py_floordiv(0.0, -1.0)));  /* 0.0 // -1.0 is -0.0 */
	assert_false(signbit(bg_py_floordiv(0.0, 1.0)));
}

static void test_python_semantics(void **state)
{
	struct bg_arena *a = bg_arena_new();
	struct bg_value *v = parse(a, "[1, 1.0, true, [1], [1.0], {\"a\": 1}, {\"a\": 1.0}, \"1\", null, 0, \"\", [], {}, 0.0, false, \" \\t\"]");
	bool err = false;
	double d;
	long long i;

	(void)state;
	assert_true(bg_value_equal(bg_value_at(v, 0), bg_value_at(v, 1)));
	assert_true(bg_value_equal(bg_value_at(v, 0), bg_value_at(v, 2)));
	assert_true(bg_value_equal(bg_value_at(v, 3), bg_value_at(v, 4)));
	assert_true(bg_value_equal(bg_value_at(v, 5), bg_value_at(v, 6)));
	assert_false(bg_value_equal(bg_value_at(v, 0), bg_value_at(v, 7)));
	assert_true(bg_value_equal(bg_value_at(v, 8), NULL));
	for (size_t k = 9; k <= 14; k++)
		assert_false(bg_value_truthy(bg_value_at(v, k)));
	assert_true(bg_value_truthy(bg_value_at(v, 15)));
	assert_true(bg_value_str_blank(bg_value_at(v, 15)));
	assert_false(bg_value_truthy(NULL));
	assert_true(bg_value_cmp(bg_value_at(v, 9), bg_value_at(v, 0), &err) < 0);
	assert_int_equal(bg_value_cmp(bg_value_at(v, 0), bg_value_at(v, 1), &err), 0);
	assert_false(err);
	bg_value_cmp(bg_value_at(v, 7), bg_value_at(v, 0), &err);
	assert_true(err);
	assert_true(bg_value_to_float(bg_value_at(v, 7), &d) && d == 1.0);
	assert_true(bg_value_to_int(bg_value_at(v, 1), &i) && i == 1);
	assert_true(bg_value_is_pyint(bg_value_at(v, 2), &i) && i == 1);
	assert_false(bg_value_is_pyint(bg_value_at(v, 1), NULL));
	/* accessors are NULL-safe and type-safe */
	assert_null(bg_value_get(NULL, "a"));
	assert_null(bg_value_get(bg_value_at(v, 3), "a"));
	assert_null(bg_value_at(bg_value_at(v, 5), 0));
	assert_null(bg_value_str(bg_value_at(v, 0)));
	assert_int_equal(bg_value_size(bg_value_at(v, 7)), 0);
	bg_arena_free(a);
}

/* Allocations of every size class across the arena's ready boundaries
 * (64 KiB steps, faulted in ahead), a big request's own block and a second
 * block: each is 8-byte aligned, writable, and none overlaps another. */
static void test_arena_ready_steps(void **state)
{
	struct bg_arena *a = bg_arena_new();
	static unsigned char *p[6000];
	static size_t len[6000];
	size_t n = 0, total = 0;

	(void)state;
	for (size_t i = 0; n < 6000; i++, n++) {
		len[n] = i % 7 == 6 ? (size_t)300 << 10 : 1 + (i * 37) % 1500; /* some big ones */
		p[n] = bg_arena_alloc(a, len[n]);
		assert_int_equal((uintptr_t)p[n] % 8, 0);
		memset(p[n], (int)(n & 0xff), len[n]);
		total += len[n];
	}
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(p[i][0], (unsigned char)(i & 0xff));
		assert_int_equal(p[i][len[i] - 1], (unsigned char)(i & 0xff));
	}
	assert_true(bg_arena_bytes(a) >= total);
	bg_arena_free(a);
}

/* bg_prefault is a hint: whatever the range (empty, within one page, not
 * aligned), what the memory holds is unchanged. */
static void test_prefault_keeps_contents(void **state)
{
	size_t n = (size_t)200 << 10;
	unsigned char *b = bg_xmalloc(n);

	(void)state;
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(i * 7);
	bg_prefault(b, 0);
	bg_prefault(b + 1, 10);
	bg_prefault(b + 3, n - 5);
	bg_prefault(b, n);
	for (size_t i = 0; i < n; i++)
		if (b[i] != (unsigned char)(i * 7))
			fail_msg("byte %zu changed", i);
	free(b);
}

static void test_construction(void **state)
{
	struct bg_arena *a = bg_arena_new();
	struct bg_value *o = bg_value_new_object(a, 0), *arr = bg_value_new_array(a, 0), *c, *u;
	struct bg_strbuf sb = BG_STRBUF_INIT;
	char key[16];

	(void)state;
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "key%d", i);
		bg_value_set(a, o, key, bg_value_new_int(a, i));
		bg_value_append(a, arr, bg_value_new_int(a, i));
	}
	bg_value_set(a, o, "key5", bg_value_new_string(a, "five")); /* replaced in place */
	assert_int_equal(bg_value_size(o), 1000);
	assert_int_equal(bg_value_size(arr), 1000);
	assert_string_equal(bg_value_str(bg_value_get(o, "key5")), "five");
	assert_int_equal(bg_value_int(bg_value_get(o, "key999")), 999);
	assert_int_equal(bg_value_int(bg_value_at(arr, 999)), 999);
	assert_string_equal(o->u.members[5].key, "key5");
	/* copy with room, then dict.update */
	c = bg_value_copy(a, parse(a, "{\"x\": 1, \"y\": 2}"), 2);
	u = parse(a, "{\"y\": 3, \"z\": 4}");
	bg_value_update(a, c, u);
	bg_value_dump(&sb, c, -1, false);
	assert_string_equal(sb.buf, "{\"x\": 1, \"y\": 3, \"z\": 4}");
	/* dict(base).update(over) as a new object, small and indexed alike; an
	 * object built so keeps growing and finding its keys */
	{
		static const char *const cases[][3] = {
			{"{\"x\": 1, \"y\": 2}", "{\"y\": 3, \"z\": 4}", "{\"x\": 1, \"y\": 3, \"z\": 4}"},
			{"{}", "{\"a\": 1}", "{\"a\": 1}"},
			{"{\"a\": 1}", "{}", "{\"a\": 1}"},
			{"{\"a\": 1, \"b\": 2, \"c\": 3, \"d\": 4, \"e\": 5, \"f\": 6, \"g\": 7, \"h\": 8, \"i\": 9}",
			 "{\"z\": 0, \"e\": 50, \"a\": 10, \"y\": 1}",
			 "{\"a\": 10, \"b\": 2, \"c\": 3, \"d\": 4, \"e\": 50, \"f\": 6, \"g\": 7, \"h\": 8, \"i\": 9, "
			 "\"z\": 0, \"y\": 1}"},
		};
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			struct bg_value *base = parse(a, cases[i][0]), *over = parse(a, cases[i][1]);
			struct bg_value *m = bg_value_merged(a, base, over), *want = bg_value_copy(a, base, 0);
			bg_value_update(a, want, over);
			bg_strbuf_reset(&sb);
			bg_value_dump(&sb, m, -1, false);
			assert_string_equal(sb.buf, cases[i][2]);
			assert_true(bg_value_equal(m, want));
			for (uint32_t k = 0; k < m->n; k++)
				assert_ptr_equal(bg_value_get(m, m->u.members[k].key), m->u.members[k].value);
			bg_value_set(a, m, "new", bg_value_true());
			assert_true(bg_value_is_true(bg_value_get(m, "new")));
			/* base and over unchanged */
			assert_true(bg_value_equal(base, parse(a, cases[i][0])));
			assert_true(bg_value_equal(over, parse(a, cases[i][1])));
		}
		assert_int_equal(bg_value_size(bg_value_merged(a, NULL, bg_value_null())), 0);
	}
	/* set_new_key builds big objects; the index comes with bg_value_index */
	c = bg_value_new_object(a, 40);
	for (int i = 0; i < 40; i++) {
		char *k = bg_arena_alloc(a, 16);
		snprintf(k, 16, "f%d", i);
		bg_value_set_new_key(a, c, k, bg_value_new_int(a, i));
	}
	assert_int_equal(bg_value_int(bg_value_get(c, "f39")), 39);
	bg_value_index(a, c);
	assert_int_equal(bg_value_int(bg_value_get(c, "f17")), 17);
	assert_null(bg_value_get(c, "f40"));
	bg_value_set(a, c, "f40", bg_value_true());
	assert_true(bg_value_is_true(bg_value_get(c, "f40")));
	/* projection */
	{
		static const char *const names[] = {"f3", "nope", "f0", "f40"};
		struct bg_value_proj p;
		struct bg_value *out[4];
		bg_value_proj_init(&p, names, 4);
		bg_value_project(&p, c, out);
		assert_int_equal(bg_value_int(out[0]), 3);
		assert_null(out[1]);
		assert_int_equal(bg_value_int(out[2]), 0);
		assert_true(bg_value_is_true(out[3]));
		bg_value_project(&p, arr, out);
		assert_null(out[0]);
	}
	bg_strbuf_release(&sb);
	bg_arena_free(a);
}

/* ARRAY_FOREACH walks arrays only: an object's members (a key whose bytes
 * look like a value header) or a string give no element at all */
static void test_array_foreach_arrays_only(void **state)
{
	struct bg_arena *a = bg_arena_new();
	struct bg_value *doc = parse(a, "{\"o\": {\"\\u0007\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001\\u0001AAAAAAAA\": 1},"
				      " \"s\": \"abc\", \"n\": 5, \"a\": [1, 2]}");
	static const char *const keys[] = {"o", "s", "n", "a", "missing"};
	static const size_t want[] = {0, 0, 0, 2, 0};
	struct bg_value *item;
	size_t i;

	(void)state;
	for (size_t k = 0; k < 5; k++) {
		size_t seen = 0;
		BG_VALUE_ARRAY_FOREACH(bg_value_get(doc, keys[k]), i, item) {
			assert_int_equal(bg_value_int(item), (int64_t)i + 1);
			seen++;
		}
		assert_int_equal(seen, want[k]);
	}
	bg_arena_free(a);
}

static void test_parse_file(void **state)
{
	struct bg_arena *a = bg_arena_new();
	struct bg_value *v = NULL;
	struct bg_ctx ctx;
	char path[] = "/tmp/bg-test-value-XXXXXX";
	int fd = mkstemp(path);
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("{\"a\": [1, 2, {\"b\": \"c\"}]}\n", f);
	fclose(f);
	bg_ctx_init(&ctx);
	assert_int_equal(bg_value_parse_file(a, path, "shown.json", &v, &ctx), BG_OK);
	assert_string_equal(bg_value_str(bg_value_get(bg_value_at(bg_value_get(v, "a"), 2), "b")), "c");
	assert_int_equal(bg_value_expect_object(v, "shown.json", &ctx), BG_OK);
	assert_int_equal(bg_value_expect_object(bg_value_get(v, "a"), "shown.json", &ctx), BG_ECHECK);
	assert_string_equal(bg_ctx_message(&ctx), "shown.json: top level must be a JSON object");
	unlink(path);
	assert_int_equal(bg_value_parse_file(a, path, "shown.json", &v, &ctx), BG_EIO);
	assert_non_null(strstr(bg_ctx_message(&ctx), "shown.json: cannot read:"));
	bg_ctx_release(&ctx);
	bg_arena_free(a);
}

/* Parses text written to a file with flags; returns the status, the message
 * in msg (size bytes; "" on success). */
static int parse_file_flags(const char *text, unsigned flags, char *msg, size_t size)
{
	struct bg_arena *a = bg_arena_new();
	struct bg_value *v = NULL;
	struct bg_ctx ctx;
	char path[] = "/tmp/bg-test-value-XXXXXX";
	int fd = mkstemp(path), rc;
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	bg_ctx_init(&ctx);
	rc = bg_value_parse_file_flags(a, path, "c.json", flags, &v, &ctx);
	snprintf(msg, size, "%s", rc ? bg_ctx_message(&ctx) : "");
	if (rc)
		assert_null(v);
	else
		assert_non_null(v);
	unlink(path);
	bg_ctx_release(&ctx);
	bg_arena_free(a);
	return rc;
}

/* NaN, Infinity, -Infinity and reals beyond a double's range: Python's
 * json reads them (every parse but benchgate.json's); BG_VALUE_FINITE
 * refuses them as jansson does. */
static void test_nonfinite(void **state)
{
	struct bg_arena *a = bg_arena_new();
	const struct bg_value *v;
	struct bg_strbuf sb = BG_STRBUF_INIT;
	char msg[300];

	(void)state;
	v = parse(a, "[NaN, Infinity, -Infinity, 1e400, -1e400, 1.8e308, -0.1e310, 1e-400]");
	assert_int_equal(bg_value_size(v), 8);
	for (size_t i = 0; i < 8; i++)
		assert_true(bg_value_is_real(bg_value_at(v, i)));
	assert_true(isnan(bg_value_real(bg_value_at(v, 0))));
	assert_true(bg_value_real(bg_value_at(v, 1)) == INFINITY);
	assert_true(bg_value_real(bg_value_at(v, 2)) == -INFINITY);
	assert_true(bg_value_real(bg_value_at(v, 3)) == INFINITY);
	assert_true(bg_value_real(bg_value_at(v, 4)) == -INFINITY);
	assert_true(bg_value_real(bg_value_at(v, 5)) == INFINITY);
	assert_true(bg_value_real(bg_value_at(v, 6)) == -INFINITY);
	assert_true(bg_value_real(bg_value_at(v, 7)) == 0.0);
	/* json.dumps writes them back as it reads them */
	bg_value_dump(&sb, v, -1, false);
	assert_string_equal(sb.buf, "[NaN, Infinity, -Infinity, Infinity, -Infinity, Infinity, -Infinity, 0.0]");
	/* in an object, not built (a member a kept parse leaves out) */
	v = parse(a, "{\"a\": NaN, \"b\":-Infinity}");
	assert_true(isnan(bg_value_real(bg_value_get(v, "a"))));
	{
		static const struct bg_value_keep keep[] = {{"b", NULL}, {NULL, NULL}};
		struct bg_value *k;
		struct bg_ctx ctx;
		bg_ctx_init(&ctx);
		static const char text[] = "{\"a\": [NaN, Infinity, 1e999], \"b\": -Infinity}";
		assert_int_equal(bg_value_parse_keep(a, text, sizeof(text) - 1, "t.json", keep, &k, &ctx), BG_OK);
		assert_null(bg_value_get(k, "a"));
		assert_true(bg_value_real(bg_value_get(k, "b")) == -INFINITY);
		bg_ctx_release(&ctx);
	}
	/* Python's == and <: a NaN equals nothing, not even itself, except as
	 * the item of a container (json's one NaN object); it is below and
	 * above nothing */
	v = parse(a, "[NaN, NaN, 1, [NaN, 1], [NaN, 1], [NaN, 0], [2, 0]]");
	assert_false(bg_value_equal(bg_value_at(v, 0), bg_value_at(v, 1)));
	assert_true(bg_value_py_same(bg_value_at(v, 0), bg_value_at(v, 1)));
	assert_false(bg_value_py_same(bg_value_at(v, 0), bg_value_at(v, 2)));
	assert_true(bg_value_equal(bg_value_at(v, 3), bg_value_at(v, 4)));
	assert_int_equal(bg_value_py_lt(bg_value_at(v, 0), bg_value_at(v, 2)), 0);
	assert_int_equal(bg_value_py_lt(bg_value_at(v, 2), bg_value_at(v, 0)), 0);
	assert_int_equal(bg_value_py_lt(bg_value_at(v, 5), bg_value_at(v, 3)), 1);  /* [nan, 0] < [nan, 1] */
	assert_int_equal(bg_value_py_lt(bg_value_at(v, 5), bg_value_at(v, 6)), 0);  /* nan < 2: False */
	assert_int_equal(bg_value_py_lt(bg_value_at(v, 6), bg_value_at(v, 5)), 0);
	assert_int_equal(bg_value_py_lt(bg_value_at(v, 0), bg_value_at(v, 3)), -1); /* float < list: raises */
	bg_strbuf_release(&sb);
	bg_arena_free(a);

	/* benchgate.json's flag */
	assert_int_equal(parse_file_flags("{\"a\": NaN}", BG_VALUE_FINITE, msg, sizeof(msg)), BG_ECHECK);
	assert_string_equal(msg, "c.json:1:9: invalid JSON: NaN is not a number this file takes; write a finite number near 'NaN'");
	assert_int_equal(parse_file_flags("{\n \"a\": -Infinity}", BG_VALUE_FINITE, msg, sizeof(msg)), BG_ECHECK);
	assert_string_equal(msg, "c.json:2:15: invalid JSON: -Infinity is not a number this file takes; write a finite number near '-Infinity'");
	assert_int_equal(parse_file_flags("[1e400]", BG_VALUE_FINITE, msg, sizeof(msg)), BG_ECHECK);
	assert_string_equal(msg, "c.json:1:6: invalid JSON: real number overflow near '1e400'");
	assert_int_equal(parse_file_flags("[-1e400]", BG_VALUE_FINITE | BG_VALUE_REJECT_DUPLICATES, msg,
					  sizeof(msg)), BG_ECHECK);
	assert_int_equal(parse_file_flags("[1e308, 1e-400]", BG_VALUE_FINITE, msg, sizeof(msg)), BG_OK);
	assert_int_equal(parse_file_flags("[NaN]", 0, msg, sizeof(msg)), BG_OK);
}

/* Integers beyond 64 bits, as Python's int: kept as their text, shown as
 * it, compared exactly with ints and floats; up to 4300 digits. */
static void test_big_integers(void **state)
{
	struct bg_arena *a = bg_arena_new();
	const struct bg_value *v, *x;
	struct bg_strbuf sb = BG_STRBUF_INIT, big = BG_STRBUF_INIT;
	long long i;
	double d;
	char msg[300];

	(void)state;
	v = parse(a, "[9223372036854775808, -9223372036854775809, 18446744073709551616, 18446744073709551617, "
		     "1.8446744073709552e19, 100000000000000000000000000000, 9223372036854775807, "
		     "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792]");
	for (size_t k = 0; k < 8; k++)
		assert_true(bg_value_is_bigint(bg_value_at(v, k)) == (k != 4 && k != 6));
	assert_false(bg_value_is_integer(bg_value_at(v, 0)));
	assert_true(bg_value_is_integer(bg_value_at(v, 6)));
	bg_value_dump(&sb, v, -1, false);
	assert_string_equal(sb.buf, "[9223372036854775808, -9223372036854775809, 18446744073709551616, "
			    "18446744073709551617, 1.8446744073709552e+19, 100000000000000000000000000000, "
			    "9223372036854775807, 179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792]");
	bg_strbuf_reset(&sb);
	/* str, repr, truth */
	bg_value_py_str(&sb, bg_value_at(v, 1));
	assert_string_equal(sb.buf, "-9223372036854775809");
	assert_true(bg_value_truthy(bg_value_at(v, 1)));
	/* isinstance(x, int), its sign kept where it does not fit */
	assert_true(bg_value_is_pyint(bg_value_at(v, 0), &i) && i == LLONG_MAX);
	assert_true(bg_value_is_pyint(bg_value_at(v, 1), &i) && i == LLONG_MIN);
	assert_true(bg_value_is_pynumber(bg_value_at(v, 0)));
	assert_false(bg_value_to_int(bg_value_at(v, 0), &i));
	bg_strbuf_reset(&sb);
	assert_true(bg_value_int_text(bg_value_at(v, 5), &sb));
	assert_string_equal(sb.buf, "100000000000000000000000000000");
	/* float(): rounded to nearest; beyond a double, Python's OverflowError */
	assert_true(bg_value_to_float(bg_value_at(v, 2), &d) && d == 18446744073709551616.0);
	assert_true(bg_value_to_float(bg_value_at(v, 3), &d) && d == 18446744073709551616.0);
	assert_false(bg_value_to_float(bg_value_at(v, 7), &d)); /* 2**1024 - 2**970 rounds to inf */
	/* ==, < and set keys, exact against floats: 2**64 == 2.0**64 != 2**64 + 1 */
	x = bg_value_at(v, 4);
	assert_true(bg_value_equal(bg_value_at(v, 2), x));
	assert_false(bg_value_equal(bg_value_at(v, 3), x));
	assert_int_equal(bg_value_py_lt(x, bg_value_at(v, 3)), 1);
	assert_int_equal(bg_value_py_lt(bg_value_at(v, 2), x), 0);
	assert_int_equal(bg_value_py_lt(bg_value_at(v, 1), bg_value_at(v, 6)), 1);
	assert_int_equal(bg_value_py_lt(bg_value_at(v, 6), bg_value_at(v, 0)), 1);
	assert_int_equal(bg_value_py_lt(bg_value_at(v, 5), bg_value_at(v, 0)), 0);
	bg_strbuf_reset(&sb);
	bg_strbuf_reset(&big);
	bg_value_py_key(&sb, bg_value_at(v, 2));
	bg_value_py_key(&big, x);
	assert_string_equal(sb.buf, big.buf);
	bg_strbuf_reset(&big);
	bg_value_py_key(&big, bg_value_at(v, 3));
	assert_string_not_equal(sb.buf, big.buf);
	/* built from a text: 64 bits or more */
	assert_true(bg_value_is_integer(bg_value_new_int_text(a, "-9223372036854775808")));
	assert_true(bg_value_is_bigint(bg_value_new_int_text(a, "-9223372036854775809")));
	bg_arena_free(a);

	/* Python's json reads up to 4300 digits */
	bg_strbuf_reset(&big);
	bg_strbuf_addch(&big, '-');
	for (int k = 0; k < 4300; k++)
		bg_strbuf_addch(&big, k ? '7' : '1');
	assert_int_equal(parse_file_flags(big.buf, 0, msg, sizeof(msg)), BG_OK);
	bg_strbuf_addch(&big, '0');
	assert_int_equal(parse_file_flags(big.buf, 0, msg, sizeof(msg)), BG_ECHECK);
	assert_string_equal(msg, "c.json:1:40: invalid JSON: too big integer: more than 4300 digits, which "
				 "Python's json refuses near '-177777777777777777777777777777777777777'");
	/* benchgate.json's flag refuses them, as jansson */
	assert_int_equal(parse_file_flags("[9223372036854775808]", BG_VALUE_FINITE, msg, sizeof(msg)), BG_ECHECK);
	assert_string_equal(msg, "c.json:1:20: invalid JSON: too big integer near '9223372036854775808'");
	assert_int_equal(parse_file_flags("[-9223372036854775809]", BG_VALUE_FINITE, msg, sizeof(msg)), BG_ECHECK);
	assert_string_equal(msg, "c.json:1:21: invalid JSON: too big negative integer near '-9223372036854775809'");
	bg_strbuf_release(&sb);
	bg_strbuf_release(&big);
}

/* Python's json keeps a \\ud800 escape without its pair in the str; so does
 * the parser, as the three bytes UTF-8 would give it, which every dump and
 * repr writes back as the escape and which text output refuses. */
static void test_lone_surrogates(void **state)
{
	struct bg_arena *a = bg_arena_new();
	struct bg_strbuf sb = BG_STRBUF_INIT;
	const struct bg_value *v, *k;
	static const char *const want[] = {"\xed\xa0\x80", "a\xed\xb0\x80" "b", "\xed\xa0\x80" "A",
					   "\xf0\x9f\x98\x80", "\xed\xaf\xbf\xed\xaf\xbf", "\xed\xb8\x80\xed\xa0\xbd",
					   "\xed\x9e\xa3", "\xee\x80\x80"};
	json_t *j = NULL;
	struct bg_ctx ctx;
	const char *text = "ok\nx\xed\xa0\x80y\n";
	char msg[300];

	(void)state;
	v = parse(a, "[\"\\ud800\", \"a\\udc00b\", \"\\ud800\\u0041\", \"\\ud83d\\ude00\", \"\\udbff\\udbff\", "
		     "\"\\ude00\\ud83d\", \"\\ud7a3\", \"\\ue000\"]");
	for (size_t i = 0; i < 8; i++)
		assert_string_equal(bg_value_str(bg_value_at(v, i)), want[i]);
	bg_value_dump(&sb, v, -1, false);
	assert_string_equal(sb.buf, "[\"\\ud800\", \"a\\udc00b\", \"\\ud800A\", \"\\ud83d\\ude00\", \"\\udbff\\udbff\", "
				    "\"\\ude00\\ud83d\", \"\\ud7a3\", \"\\ue000\"]");
	bg_strbuf_reset(&sb);
	bg_value_py_repr(&sb, v);
	assert_string_equal(sb.buf, "['\\ud800', 'a\\udc00b', '\\ud800A', '\xf0\x9f\x98\x80', '\\udbff\\udbff', "
				    "'\\ude00\\ud83d', '\xed\x9e\xa3', '\\ue000']");
	/* ordered by code point, as Python orders str: U+D7A3 < U+D800 < U+E000 < U+1F600 */
	assert_int_equal(bg_value_py_lt(bg_value_at(v, 6), bg_value_at(v, 0)), 1);
	assert_int_equal(bg_value_py_lt(bg_value_at(v, 0), bg_value_at(v, 7)), 1);
	assert_int_equal(bg_value_py_lt(bg_value_at(v, 7), bg_value_at(v, 3)), 1);
	assert_int_equal(bg_value_py_lt(bg_value_at(v, 3), bg_value_at(v, 0)), 0);
	/* str.lower() leaves it */
	bg_strbuf_reset(&sb);
	bg_py_lower(&sb, "A\xed\xa0\x80" "B");
	assert_string_equal(sb.buf, "a\xed\xa0\x80" "b");
	/* a key */
	k = parse(a, "{\"\\udfff\": 1}");
	assert_non_null(bg_value_get(k, "\xed\xbf\xbf"));
	bg_strbuf_reset(&sb);
	bg_value_dump(&sb, k, -1, true);
	assert_string_equal(sb.buf, "{\"\\udfff\": 1}");
	/* benchgate's own files (BG_VALUE_FINITE) refuse one, as jansson */
	assert_int_equal(parse_file_flags("[\"a\\ud800\"]", 0, msg, sizeof(msg)), BG_OK);
	assert_int_equal(parse_file_flags("[\"a\\ud800\"]", BG_VALUE_FINITE, msg, sizeof(msg)), BG_ECHECK);
	assert_string_equal(msg, "c.json:1:9: invalid JSON: invalid Unicode '\\uD800' near '\"a\\ud800'");
	assert_int_equal(parse_file_flags("[\"\\ud83d\\ude00 \\ude00\"]", BG_VALUE_FINITE, msg, sizeof(msg)), BG_ECHECK);
	assert_string_equal(msg, "c.json:1:21: invalid JSON: invalid Unicode '\\uDE00' near '\"\\ud83d\\ude00 \\ude00'");
	/* where text is written: found and said with its line */
	assert_int_equal(bg_value_surrogate_find(text, strlen(text)), 4);
	assert_int_equal(bg_value_surrogate_find("\xed\xa0", 2), 2); /* cut short: none */
	assert_int_equal(bg_value_surrogate_find("\xed\x9f\xbf", 3), 3); /* U+D7FF, no surrogate */
	bg_strbuf_reset(&sb);
	bg_value_surrogate_say(&sb, text, strlen(text), 4, 1);
	assert_string_equal(sb.buf, "line 2, 'x\\ud800y', holds the lone surrogate '\\ud800' (a JSON escape \\ud800 "
				    "without its pair), which UTF-8 cannot encode");
	/* where Python's print() writes U+DC80..U+DCFF as bytes (surrogateescape) */
	assert_true(bg_value_py_stdio_escapes(NULL, NULL)); /* setlocale failed: C stays */
	assert_true(bg_value_py_stdio_escapes("C", NULL));
	assert_true(bg_value_py_stdio_escapes("POSIX", "0"));
	assert_true(bg_value_py_stdio_escapes("C.UTF-8", NULL));
	assert_true(bg_value_py_stdio_escapes("C.utf8", NULL));
	assert_true(bg_value_py_stdio_escapes("en_US.UTF-8", "1"));
	assert_false(bg_value_py_stdio_escapes("en_US.UTF-8", NULL));
	assert_false(bg_value_py_stdio_escapes("en_US.UTF-8", "0"));
	assert_false(bg_value_py_stdio_escapes("de_DE.utf8", ""));
	/* jansson's records cannot hold one: refused, naming the member */
	bg_ctx_init(&ctx);
	assert_int_equal(bg_value_to_json(parse(a, "{\"a\": [1, \"x\\udc80\"]}"), "gate 'g'", &j, &ctx), BG_EPRECOND);
	assert_null(j);
	assert_string_equal(bg_ctx_message(&ctx), "gate 'g': 'a[1]' is a text holding the lone surrogate '\\udc80' (a "
						  "JSON escape without its pair), which benchgate's records cannot "
						  "hold (UTF-8 cannot encode it); replace the escape");
	bg_ctx_release(&ctx);
	bg_ctx_init(&ctx);
	assert_int_equal(bg_value_to_json(parse(a, "{\"a\": {\"b\\ud800c\": 1}}"), "gate 'g'", &j, &ctx), BG_EPRECOND);
	assert_string_equal(bg_ctx_message(&ctx), "gate 'g': 'a.b\\ud800c' is a key holding a lone surrogate, which "
						  "benchgate's records cannot hold (UTF-8 cannot encode it); replace the "
						  "escape");
	bg_ctx_release(&ctx);
	bg_strbuf_release(&sb);
	bg_arena_free(a);
}

static void test_reject_duplicates(void **state)
{
	struct bg_strbuf big = BG_STRBUF_INIT;
	char msg[300];

	(void)state;
	/* without the flag: Python's semantics */
	assert_int_equal(parse_file_flags("{\"a\": 1, \"a\": 2}", 0, msg, sizeof(msg)), BG_OK);
	/* the same key in two objects is no repeat */
	assert_int_equal(parse_file_flags("{\"a\": {\"k\": 1}, \"b\": [{\"k\": 1}, {\"k\": 2}]}",
					  BG_VALUE_REJECT_DUPLICATES, msg, sizeof(msg)), BG_OK);
	/* the top level: placed at the repeat's opening quote */
	assert_int_equal(parse_file_flags("{\n  \"a\": 1,\n  \"b\": 2,\n  \"a\": 3\n}\n",
					  BG_VALUE_REJECT_DUPLICATES, msg, sizeof(msg)), BG_ECHECK);
	assert_string_equal(msg, "c.json:4:3: duplicate key 'a' (first at 2:3); remove one of them");
	/* nested, in an array, a key spelled with an escape, a control byte */
	assert_int_equal(parse_file_flags("{\"x\": [{\"pa\\u0074h\": 1, \"q\": {}, \"path\": 2}]}",
					  BG_VALUE_REJECT_DUPLICATES, msg, sizeof(msg)), BG_ECHECK);
	assert_string_equal(msg, "c.json:1:34: duplicate key 'path' (first at 1:9); remove one of them");
	assert_int_equal(parse_file_flags("{\"\\u0001\": 1, \"\\u0001\": 2}", BG_VALUE_REJECT_DUPLICATES, msg,
					  sizeof(msg)), BG_ECHECK);
	assert_string_equal(msg, "c.json:1:15: duplicate key '\\x01' (first at 1:2); remove one of them");
	/* the first repeat in the whole text, whichever object closes first: an
	 * earlier repeat of the outer object before a later nested one ... */
	assert_int_equal(parse_file_flags("{\"a\": 1,\n\"a\": 2,\n\"b\": {\"x\": 1, \"x\": 2}}",
					  BG_VALUE_REJECT_DUPLICATES, msg, sizeof(msg)), BG_ECHECK);
	assert_string_equal(msg, "c.json:2:1: duplicate key 'a' (first at 1:2); remove one of them");
	/* ... and a nested repeat, in an array, before a later one of the outer object */
	assert_int_equal(parse_file_flags("{\"a\": 1, \"b\": [0, {\"x\": 1, \"x\": 2}], \"a\": 2}",
					  BG_VALUE_REJECT_DUPLICATES, msg, sizeof(msg)), BG_ECHECK);
	assert_string_equal(msg, "c.json:1:28: duplicate key 'x' (first at 1:20); remove one of them");
	assert_int_equal(parse_file_flags("[[], {\"k\": {\"y\": [1, 2]}}, {\"z\": 1, \"q\": 0, \"z\": {\"w\": 1, \"w\": 2}}]",
					  BG_VALUE_REJECT_DUPLICATES, msg, sizeof(msg)), BG_ECHECK);
	assert_string_equal(msg, "c.json:1:45: duplicate key 'z' (first at 1:29); remove one of them");
	/* a big object (hash index): the first repeat in the text */
	bg_strbuf_addch(&big, '{');
	for (int i = 0; i < 300; i++)
		bg_strbuf_addf(&big, "%s\"k%d\": %d", i ? ",\n" : "", i < 250 ? i : i - 200, i);
	bg_strbuf_addch(&big, '}');
	assert_int_equal(parse_file_flags(big.buf, BG_VALUE_REJECT_DUPLICATES, msg, sizeof(msg)), BG_ECHECK);
	assert_string_equal(msg, "c.json:251:1: duplicate key 'k50' (first at 51:1); remove one of them");
	assert_int_equal(parse_file_flags(big.buf, 0, msg, sizeof(msg)), BG_OK);
	bg_strbuf_release(&big);
}

/*
 * Objects on both sides of SMALL_OBJECT (searched linearly, or through a
 * hash index): parsing folds a repeated key (first position, last value),
 * REJECT_DUPLICATES names it, merged, copied and set objects find every
 * member, and exactly the bigger ones carry an index.
 */
static void test_index_threshold(void **state)
{
	const int sizes[] = {SMALL_OBJECT - 1, SMALL_OBJECT, SMALL_OBJECT + 1, 2 * SMALL_OBJECT + 5};
	struct bg_arena *a = bg_arena_new();

	(void)state;
	for (size_t t = 0; t < sizeof(sizes) / sizeof(sizes[0]); t++) {
		int n = sizes[t]; /* members in the text; the last repeats "k1" */
		struct bg_strbuf text = BG_STRBUF_INIT, sb = BG_STRBUF_INIT;
		struct bg_value *v, *over, *m, *want, *c;
		char k[16], msg[300];

		bg_strbuf_addch(&text, '{');
		for (int i = 0; i < n - 1; i++)
			bg_strbuf_addf(&text, "%s\"k%d\": %d", i ? ", " : "", i, i);
		bg_strbuf_adds(&text, ", \"k1\": 100}");
		v = parse(a, text.buf);
		assert_int_equal(bg_value_size(v), n - 1);
		assert_string_equal(v->u.members[1].key, "k1");
		assert_int_equal(bg_value_int(bg_value_get(v, "k1")), 100);
		for (int i = 2; i < n - 1; i++) {
			snprintf(k, sizeof(k), "k%d", i);
			assert_int_equal(bg_value_int(bg_value_get(v, k)), i);
		}
		assert_null(bg_value_get(v, "k"));
		assert_int_equal(obj_hdr(v)->index != NULL, n > SMALL_OBJECT);
		assert_int_equal(parse_file_flags(text.buf, BG_VALUE_REJECT_DUPLICATES, msg, sizeof(msg)), BG_ECHECK);
		assert_non_null(strstr(msg, "duplicate key 'k1' (first at 1:"));

		/* dict(v).update(over) as a new object, and as copy + update */
		over = parse(a, "{\"z\": 0, \"k5\": 50, \"k0\": 10, \"y\": 1}");
		m = bg_value_merged(a, v, over);
		want = bg_value_copy(a, v, 0);
		bg_value_update(a, want, over);
		assert_true(bg_value_equal(m, want));
		assert_int_equal(bg_value_size(m), n - 1 + 2);
		assert_int_equal(obj_hdr(m)->index != NULL, bg_value_size(m) > SMALL_OBJECT);
		for (uint32_t j = 0; j < m->n; j++) {
			assert_ptr_equal(bg_value_get(m, m->u.members[j].key), m->u.members[j].value);
			assert_ptr_equal(bg_value_get(want, want->u.members[j].key), want->u.members[j].value);
		}
		assert_int_equal(bg_value_int(bg_value_get(m, "k0")), 10);
		assert_int_equal(bg_value_int(bg_value_get(m, "k5")), 50);
		bg_value_dump(&sb, m, -1, false);
		assert_non_null(strstr(sb.buf, "\"k0\": 10, \"k1\": 100, "));
		assert_non_null(strstr(sb.buf, "\"z\": 0, \"y\": 1}"));

		/* an object that grows past the threshold one set at a time */
		c = bg_value_copy(a, v, 0);
		for (int i = 0; i < SMALL_OBJECT + 2; i++) {
			snprintf(k, sizeof(k), "n%d", i);
			bg_value_set(a, c, k, bg_value_new_int(a, -i));
		}
		bg_value_set(a, c, "k1", bg_value_null());
		assert_int_equal(bg_value_size(c), n - 1 + SMALL_OBJECT + 2);
		assert_non_null(obj_hdr(c)->index);
		assert_true(bg_value_is_null(bg_value_get(c, "k1")));
		for (int i = 0; i < SMALL_OBJECT + 2; i++) {
			snprintf(k, sizeof(k), "n%d", i);
			assert_int_equal(bg_value_int(bg_value_get(c, k)), -i);
		}
		assert_int_equal(bg_value_int(bg_value_get(v, "k1")), 100); /* v unchanged */
		bg_strbuf_release(&text);
		bg_strbuf_release(&sb);
	}
	bg_arena_free(a);
}

/* int() and float() of text, as Python 3.11 reads it (values from python3). */
static void test_number_text(void **state)
{
	struct bg_arena *a = bg_arena_new();
	double d;
	long long n;

	(void)state;
	assert_true(bg_value_to_int(bg_value_new_string(a, "\xd9\xa1\xd9\xa2"), &n)); /* ١٢ */
	assert_int_equal(n, 12);
	assert_true(bg_value_to_int(bg_value_new_string(a, "\xe3\x80\x80" "7\xc2\x85"), &n)); /* U+3000 7 U+0085 */
	assert_int_equal(n, 7);
	assert_false(bg_value_to_int(bg_value_new_string(a, "\x1c" "5"), &n)); /* \x1c is not stripped */
	/* leading zeros and underscores do not count against 64 bits: int('0' * 70 + '5') is 5 */
	assert_true(bg_value_to_int(bg_value_new_string(a, "-00000000000000000000000000000000000000000000000000000000000000000000005"), &n));
	assert_int_equal(n, -5);
	assert_true(bg_value_to_int(bg_value_new_string(a, "0000000000000000000000000000000000000000000000000000000000000000000000"), &n));
	assert_int_equal(n, 0);
	assert_true(bg_value_to_int(bg_value_new_string(a, "0_0_0_0_0_0_0_0_0_0_0_0_0_0_0_0_0_0_0_0_0_0_0_0_0_0_0_0_0_0_0_0_0_0_5"), &n));
	assert_int_equal(n, 5);
	assert_true(bg_value_to_int(bg_value_new_string(a, "-9223372036854775808"), &n));
	assert_true(n == LLONG_MIN);
	assert_false(bg_value_to_int(bg_value_new_string(a, "00000000000000000000000000000000000000000000000000000009223372036854775808"), &n));
	assert_false(bg_value_to_int(bg_value_new_string(a, "0_"), &n));
	assert_false(bg_value_to_int(bg_value_new_string(a, "_0"), &n));
	assert_false(bg_value_to_int(bg_value_new_string(a, "-"), &n));
	{ /* int() of any size as text: what selected scan bounds beyond 64 bits need */
		struct bg_strbuf t = BG_STRBUF_INIT;
		assert_true(bg_value_int_text(bg_value_new_string(a, " -0_0099999999999999999999 "), &t));
		assert_string_equal(t.buf, "-99999999999999999999");
		bg_strbuf_reset(&t);
		assert_true(bg_value_int_text(bg_value_new_string(a, "-000"), &t));
		assert_string_equal(t.buf, "0");
		bg_strbuf_reset(&t);
		assert_true(bg_value_int_text(bg_value_new_real(a, -1e20), &t));
		assert_string_equal(t.buf, "-100000000000000000000");
		bg_strbuf_reset(&t);
		assert_false(bg_value_int_text(bg_value_new_string(a, "99999999999999999999_"), &t));
		assert_false(bg_value_int_text(bg_value_new_string(a, "+"), &t));
		assert_int_equal(t.len, 0);
		bg_strbuf_release(&t);
	}
	assert_true(bg_value_to_float(bg_value_new_string(a, "\xd9\xa1.\xd9\xa5"), &d)); /* ١.٥ */
	assert_true(d == 1.5);
	assert_false(bg_value_to_float(bg_value_new_string(a, "\x1c" "1.5"), &d));
	assert_false(bg_value_to_float(bg_value_new_string(a, "1\xc2\xb2"), &d)); /* ² is no decimal */
	bg_arena_free(a);
}

/* str.lower() as Python 3.11 gives it (values printed by python3). */
static void expect_lower(const char *in, const char *want)
{
	struct bg_strbuf b = BG_STRBUF_INIT;
	size_t start;

	bg_py_lower(&b, in);
	assert_string_equal(b.buf, want);
	/* from the output's own buffer, as load.c and render.c call it */
	bg_strbuf_reset(&b);
	bg_strbuf_adds(&b, in);
	start = b.len + 1;
	bg_strbuf_addch(&b, '\0');
	bg_py_lower(&b, b.buf);
	assert_string_equal(b.buf + start, want);
	bg_strbuf_release(&b);
}

static void test_py_lower(void **state)
{
	(void)state;
	expect_lower("ABC xyz 09", "abc xyz 09");
	expect_lower("\xce\xa3\xce\x91\xce\xa3", "\xcf\x83\xce\xb1\xcf\x82");      /* ΣΑΣ -> σας */
	expect_lower("\xce\xa3", "\xcf\x83");                                   /* Σ alone -> σ */
	expect_lower("a'\xce\xa3'b", "a'\xcf\x83'b");                              /* ' is case-ignorable */
	expect_lower("a\xce\xa3.", "a\xcf\x82.");                                  /* final before . */
	expect_lower("\xc4\xb0STANBUL", "i\xcc\x87stanbul");                        /* İ -> i + U+0307 */
	expect_lower("\xe1\xba\x9e \xe2\x84\xaa \xc7\x85", "\xc3\x9f k \xc7\x86");     /* ẞ K ǅ */
	expect_lower("\xf0\x90\x90\x80", "\xf0\x90\x90\xa8");                       /* U+10400 */
	expect_lower("A\xff" "B\xce", "a\xff" "b\xce");                               /* no UTF-8: kept */
}

/* The free 2 MiB blocks the arena reads off /proc/buddyinfo before it asks
 * for huge pages: every zone, higher orders split, bad lines counting nothing. */
static void test_buddy_free_blocks(void **state)
{
	const char *info =
		"Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3 \n"
		"Node 0, zone    DMA32      0      4      2      2      1      2      0      3      3      1    753 \n"
		"Node 0, zone   Normal   2762   2008   1612   1162    681    389    228    133    235    172    187 \n";
	char big[200];

	(void)state;
	assert_int_equal(bg_buddy_free_blocks(info, 9), 1 + 1 + 172 + 2 * (3 + 753 + 187));
	assert_int_equal(bg_buddy_free_blocks(info, 10), 3 + 753 + 187);
	assert_int_equal(bg_buddy_free_blocks(info, 11), 0);
	assert_int_equal(bg_buddy_free_blocks("Node 0, zone Normal 1 2 3", 0), 1 + 2 * 2 + 3 * 4);
	assert_int_equal(bg_buddy_free_blocks("Node 0, zone Normal 1 2 3", 1), 2 + 3 * 2);
	/* lines it cannot read */
	assert_int_equal(bg_buddy_free_blocks(NULL, 0), 0);
	assert_int_equal(bg_buddy_free_blocks("", 0), 0);
	assert_int_equal(bg_buddy_free_blocks("\n\n", 0), 0);
	assert_int_equal(bg_buddy_free_blocks("garbage 1 2 3\n", 0), 0);
	assert_int_equal(bg_buddy_free_blocks("Node 0, zone Normal -5 7\n", 0), 0);
	assert_int_equal(bg_buddy_free_blocks("Node 0, zone Normal 1 x 7\n", 0), 1);
	assert_int_equal(bg_buddy_free_blocks("Node 0, zone Normal 1\n2 3\nNode 0, zone Movable 4", 0), 1 + 4);
	assert_int_equal(bg_buddy_free_blocks("Node 0, zone Normal\n", 0), 0);
	assert_int_equal(bg_buddy_free_blocks("Node 0, zone ", 0), 0);
	/* a column it does not read cannot saturate the sum */
	assert_int_equal(bg_buddy_free_blocks("Node 0, zone Normal 99999999999999999999999 0 0 0 0 0 0 0 0 0 5", 9),
			 10);
	/* sums that do not fit saturate */
	assert_true(bg_buddy_free_blocks("Node 0, zone Normal 99999999999999999999999999", 0) == SIZE_MAX);
	memset(big, 0, sizeof(big));
	strcpy(big, "Node 0, zone A");
	for (int k = 0; k < 64; k++)
		strcat(big, k == 63 ? " 1" : " 0");
#if SIZE_MAX > 0xffffffffu
	assert_true(bg_buddy_free_blocks(big, 0) == (size_t)1 << 63);
#endif
	big[strlen(big) - 1] = '2';
	assert_true(bg_buddy_free_blocks(big, 0) == SIZE_MAX);
	/* columns past the 64th are not read */
	big[strlen(big) - 1] = '0';
	strcat(big, " 1");
	assert_int_equal(bg_buddy_free_blocks(big, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_trailing_and_syntax),
		cmocka_unit_test(test_bad_strings),
		cmocka_unit_test(test_nul_bytes),
		cmocka_unit_test(test_keep_partly),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_nonfinite),
		cmocka_unit_test(test_big_integers),
		cmocka_unit_test(test_lone_surrogates),
		cmocka_unit_test(test_keep_numbers),
		cmocka_unit_test(test_out_of_memory_handler),
		cmocka_unit_test(test_reals_match_strtod),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_foreach_wrong_type),
		cmocka_unit_test(test_duplicates_and_order),
		cmocka_unit_test(test_index_threshold),
		cmocka_unit_test(test_large_document),
		cmocka_unit_test(test_dump_matches_python),
		cmocka_unit_test(test_str_and_repr),
		cmocka_unit_test(test_python_semantics),
		cmocka_unit_test(test_int_float_exact),
		cmocka_unit_test(test_py_key),
		cmocka_unit_test(test_floor),
		cmocka_unit_test(test_py_floordiv),
		cmocka_unit_test(test_arena_ready_steps),
		cmocka_unit_test(test_prefault_keeps_contents),
		cmocka_unit_test(test_construction),
		cmocka_unit_test(test_parse_file),
		cmocka_unit_test(test_reject_duplicates),
		cmocka_unit_test(test_array_foreach_arrays_only),
		cmocka_unit_test(test_py_lower),
		cmocka_unit_test(test_number_text),
		cmocka_unit_test(test_buddy_free_blocks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
