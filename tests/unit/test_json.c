/*
 * test_json.c - the Python-compatible JSON dump and str/repr; outside text
 * that is not UTF-8 made a JSON string (bg_json_text).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "benchgate/json.h"
#include "benchgate/value.h"

static char *dump(const char *json, int indent, bool sort)
{
	json_error_t err;
	json_t *v = json_loads(json, JSON_DECODE_ANY, &err);
	struct bg_strbuf sb = BG_STRBUF_INIT;

	assert_non_null(v);
	bg_json_dump_py(&sb, v, indent, sort);
	json_decref(v);
	return bg_strbuf_detach(&sb, NULL);
}

static void expect_dump(const char *json, int indent, bool sort, const char *want)
{
	char *got = dump(json, indent, sort);
	assert_string_equal(got, want);
	free(got);
}

static void test_sorted_keys_and_indent(void **state)
{
	(void)state;
	expect_dump("{\"b\": 1, \"a\": [1, {\"d\": null, \"c\": true}], \"e\": {}, \"f\": []}", 2, true,
		    "{\n  \"a\": [\n    1,\n    {\n      \"c\": true,\n      \"d\": null\n    }\n  ],\n"
		    "  \"b\": 1,\n  \"e\": {},\n  \"f\": []\n}");
	/* code-point order: upper case before lower case, ASCII before non-ASCII */
	expect_dump("{\"b\": 1, \"B\": 2, \"\\u00e9\": 3, \"z\": 4}", -1, true,
		    "{\"B\": 2, \"b\": 1, \"z\": 4, \"\\u00e9\": 3}");
	/* insertion order kept without sort_keys */
	expect_dump("{\"b\": 1, \"a\": 2}", -1, false, "{\"b\": 1, \"a\": 2}");
}

static void test_escapes(void **state)
{
	(void)state;
	expect_dump("\"tab\\t nl\\n quote\\\" back\\\\ ctl\\u0001 del\\u007f\"", -1, false,
		    "\"tab\\t nl\\n quote\\\" back\\\\ ctl\\u0001 del\\u007f\"");
	expect_dump("\"\\u00d7 \\u2713 caf\\u00e9\"", -1, false, "\"\\u00d7 \\u2713 caf\\u00e9\"");
	/* U+1F600 becomes a surrogate pair, lower-case hex */
	expect_dump("\"\\ud83d\\ude00\"", -1, false, "\"\\ud83d\\ude00\"");
	expect_dump("\"/slash\"", -1, false, "\"/slash\"");
}

static void expect_text(const char *s, const char *want)
{
	json_t *v = bg_json_text(s);

	assert_true(json_is_string(v));
	assert_string_equal(json_string_value(v), want);
	json_decref(v);
}

static void test_text(void **state)
{
	json_t *v = bg_json_text(NULL);

	(void)state;
	assert_true(json_is_null(v));
	json_decref(v);
	expect_text("", "");
	expect_text("plain \\x41 caf\xc3\xa9 \xf0\x9f\x98\x80", "plain \\x41 caf\xc3\xa9 \xf0\x9f\x98\x80");
	/* a lone byte, a cut sequence, an overlong form, a surrogate, beyond U+10FFFF */
	expect_text("a\xff" "b", "a\\xffb");
	expect_text("caf\xc3", "caf\\xc3");
	expect_text("\xc3(", "\\xc3(");
	expect_text("\xc0\xaf", "\\xc0\\xaf");
	expect_text("\xed\xa0\x80", "\\xed\\xa0\\x80");
	expect_text("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");
	/* valid sequences around a bad byte stay whole */
	expect_text("\xc3\xa9\x80\xc3\xa9", "\xc3\xa9\\x80\xc3\xa9");
}

static void test_numbers(void **state)
{
	(void)state;
	expect_dump("[0.5, 1e-05, 19327352832, 1.0, 100.0, 1e16, 1.5e+16, 123456789.125, -0.0, 0.1, 2.5e-7]",
		    -1, false,
		    "[0.5, 1e-05, 19327352832, 1.0, 100.0, 1e+16, 1.5e+16, 123456789.125, -0.0, 0.1, 2.5e-07]");
	expect_dump("[0.0001, 0.00001, 1234567890123456.0, 0.3333333333333333, 9007199254740993]", -1, false,
		    "[0.0001, 1e-05, 1234567890123456.0, 0.3333333333333333, 9007199254740993]");
	expect_dump("[true, false, null]", -1, false, "[true, false, null]");
}

static void test_py_str_repr(void **state)
{
	json_error_t err;
	json_t *v = json_loads("[\"it's\", \"a\\\"b\", 1, 2.5, true, null, {\"k\": [1]}]", 0, &err);
	struct bg_strbuf sb = BG_STRBUF_INIT;

	(void)state;
	bg_py_str(&sb, v);
	assert_string_equal(sb.buf, "[\"it's\", 'a\"b', 1, 2.5, True, None, {'k': [1]}]");
	bg_strbuf_reset(&sb);
	bg_py_str(&sb, json_array_get(v, 0));
	assert_string_equal(sb.buf, "it's");
	bg_strbuf_release(&sb);
	json_decref(v);
}

static void test_load_errors(void **state)
{
	struct bg_ctx ctx;
	json_t *v = NULL;

	(void)state;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_json_load_buffer("{\"a\": 1,\n  \"b\" 2}", 18, "x.json", &v, &ctx), BG_ECHECK);
	assert_non_null(strstr(bg_ctx_message(&ctx), "x.json:2:"));
	assert_int_equal(bg_json_load_buffer("", 0, "empty.json", &v, &ctx), BG_ECHECK);
	assert_non_null(strstr(bg_ctx_message(&ctx), "empty.json"));
	assert_int_equal(bg_json_load_file("/nonexistent/benchgate.json", NULL, &v, &ctx), BG_EIO);
	assert_non_null(strstr(bg_ctx_message(&ctx), "/nonexistent/benchgate.json: cannot read"));
	bg_ctx_release(&ctx);
}

static void test_truthy_equal(void **state)
{
	json_t *one = json_integer(1), *onef = json_real(1.0), *t = json_true(), *s = json_string("1");
	json_t *empty = json_string("");

	(void)state;
	assert_true(bg_py_equal(one, onef));
	assert_true(bg_py_equal(one, t));
	assert_false(bg_py_equal(one, s));
	assert_false(bg_py_truthy(empty));
	assert_true(bg_py_truthy(s));
	assert_false(bg_py_truthy(NULL));
	json_decref(one);
	json_decref(onef);
	json_decref(s);
	json_decref(empty);
}

/* A registry value copied into jansson: the same document, or the first
 * NaN or infinity refused by its member path. */
static void test_value_to_json(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"{\"b\": [1, 2.5, \"x\", null, true, false, {}], \"a\": {\"\u00e9\": -3}}", NULL},
		{"{\"measure\": {\"timeout\": NaN}}", "gate 'g': 'measure.timeout' is nan, which JSON cannot hold; write a number or null"},
		{"{\"outputs\": [\"a\", [1, -Infinity]]}", "gate 'g': 'outputs[1][1]' is -inf, which JSON cannot hold; write a number or null"},
		{"[1e400]", "gate 'g': '[0]' is inf, which JSON cannot hold; write a number or null"},
		{"NaN", "gate 'g' is nan, which JSON cannot hold; write a number or null"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bg_arena *a = bg_arena_new();
		struct bg_value *v;
		struct bg_ctx ctx;
		json_t *j = (json_t *)1;
		int rc;

		bg_ctx_init(&ctx);
		assert_int_equal(bg_value_parse(a, cases[i].text, strlen(cases[i].text), "t.json", &v, &ctx), BG_OK);
		rc = bg_value_to_json(v, "gate 'g'", &j, &ctx);
		if (cases[i].want) {
			assert_int_equal(rc, BG_EPRECOND);
			assert_null(j);
			assert_string_equal(bg_ctx_message(&ctx), cases[i].want);
		} else {
			struct bg_strbuf x = BG_STRBUF_INIT, y = BG_STRBUF_INIT;
			assert_int_equal(rc, BG_OK);
			bg_value_dump(&x, v, 2, false);
			bg_json_dump_py(&y, j, 2, false);
			assert_string_equal(x.buf, y.buf); /* member order, types and values kept */
			json_decref(j);
			bg_strbuf_release(&x);
			bg_strbuf_release(&y);
		}
		bg_ctx_release(&ctx);
		bg_arena_free(a);
	}
	{
		json_t *j = (json_t *)1;
		assert_int_equal(bg_value_to_json(NULL, "x", &j, NULL), BG_OK);
		assert_null(j);
	}
}

/* a parse error that names a jansson flag is said in words */
static void test_error_text(void **state)
{
	json_error_t err;
	json_t *v;

	(void)state;
	v = json_loads("{\"a\": \"x\\u0000y\"}", 0, &err);
	assert_null(v);
	assert_string_equal(bg_json_error_text(&err),
			    "a string holds \\u0000, a NUL character, which benchgate never writes nor reads");
	v = json_loads("{\"a\": ", 0, &err);
	assert_null(v);
	assert_ptr_equal(bg_json_error_text(&err), err.text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sorted_keys_and_indent),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_py_str_repr),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_truthy_equal),
		cmocka_unit_test(test_value_to_json),
		cmocka_unit_test(test_error_text),
	};
	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
