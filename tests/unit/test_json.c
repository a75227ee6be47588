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
	};
	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
