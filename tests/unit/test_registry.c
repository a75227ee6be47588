/*
 * test_registry.c - command substitution, render number formats, ordering,
 * and the staleness comparison of the generated document.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchgate/fsutil.h"
#include "benchgate/registry.h"
#include "core/pyval.h"

static void expect_format(const char *tmpl, const char *values, const char *want)
{
	struct bg_arena *a = bg_arena_new();
	struct bg_value *v = NULL;
	struct bg_strbuf sb = BG_STRBUF_INIT;
	struct bg_ctx ctx;

	bg_ctx_init(&ctx);
	assert_int_equal(bg_value_parse(a, values, strlen(values), "values", &v, &ctx), BG_OK);
	assert_non_null(v);
	assert_int_equal(bg_registry_format(tmpl, v, &sb, &ctx), BG_OK);
	assert_string_equal(sb.buf, want);
	bg_strbuf_release(&sb);
	bg_ctx_release(&ctx);
	bg_arena_free(a);
}

static void test_format(void **state)
{
	(void)state;
	expect_format("run --bin {detector_bin} --dtype {source_dtype}",
		      "{\"detector_bin\": 2, \"source_dtype\": \"uint16\"}", "run --bin 2 --dtype uint16");
	expect_format("{{literal}} {unknown} }}{{", "{}", "{literal} {unknown} }{");
	expect_format("{x!r} {y!s} {z} {n}", "{\"x\": \"a\", \"y\": 1.5, \"z\": null, \"n\": true}",
		      "'a' 1.5 None True");
	expect_format("{missing!r}", "{}", "'{missing}'");
	expect_format("awk '{{print $1}}'", "{}", "awk '{print $1}'");
	/* values printed by python3: str.format_map with _SafeFormat */
	expect_format("{x[0]} {x[2]!r} {l[1]} {o[k]} {m[0]} {x:} {x!r:}",
		      "{\"x\": \"ab\\u00e9\", \"l\": [1, \"z\"], \"o\": {\"k\": 2}}",
		      "a '\xc3\xa9' z 2 { ab\xc3\xa9 'ab\xc3\xa9'");
	/* format specifications, as python3 prints them; a missing name is
	 * the text "{name}" formatted */
	expect_format("--bin {b:02d} --w {w:>6} {f:.3f} {f:08.2e} {n:,} {s:*^7.2} {t!r:>6} {u:>5} {b:#06x}",
		      "{\"b\": 4, \"w\": \"ab\", \"f\": 0.0125, \"n\": 1234567, \"s\": \"\u00e9tal\", \"t\": 1.5}",
		      "--bin 04 --w     ab 0.013 1.25e-02 1,234,567 **\xc3\xa9t***    1.5   {u} 0x0004");
	expect_format("{x:>{w}} {f:{w}.{p}f} {s:{c}^{w}} {x:{w}}}}", /* fields in a spec, as python3 prints them */
		      "{\"x\": 5, \"w\": 8, \"f\": 1.23456, \"p\": 3, \"s\": \"abc\", \"c\": \"<\"}",
		      "       5    1.235 <<abc<<<        5}");
	expect_format("{x!a} {l!a} {m!a}", "{\"x\": \"\\u00e9\\u2603\\ud834\\udd1e\", \"l\": [\"\\u00e9\"]}",
		      "'\\xe9\\u2603\\U0001d11e' ['\\xe9'] '{m}'");
}

/* As run substitutes: each field's text one shell word, a name the gate
 * lacks refused with its status and subject. */
static void test_format_for_run(void **state)
{
	struct bg_arena *a = bg_arena_new();
	struct bg_value *v = NULL;
	struct bg_strbuf sb = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	struct bg_format_how run = {"template 'T'", BG_EPRECOND, true, true};
	const char *doc = "{\"id\": \"g.1\", \"s\": \"it's a b\", \"e\": \"\", \"l\": [\"x;y\", 2], \"n\": null}";

	(void)state;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_value_parse(a, doc, strlen(doc), "doc", &v, &ctx), BG_OK);
	assert_int_equal(bg_registry_format_with("run {id} {s} {e} {l[0]} {l[1]!r} {l} {n} {id!r} {{x}}", v, &run, &sb,
						 &ctx), BG_OK);
	assert_string_equal(sb.buf, "run g.1 'it'\\''s a b' '' 'x;y' 2 '['\\''x;y'\\'', 2]' None "
				    "''\\''g.1'\\''' {x}");
	bg_strbuf_reset(&sb);
	bg_strbuf_reset(&sb);
	/* the formatted text is the shell word */
	assert_int_equal(bg_registry_format_with("run {id:>6} {s:.4}", v, &run, &sb, &ctx), BG_OK);
	assert_string_equal(sb.buf, "run '   g.1' 'it'\\''s'");
	bg_strbuf_reset(&sb);
	assert_int_equal(bg_registry_format_with("run {n:>4}", v, &run, &sb, &ctx), BG_EPRECOND);
	assert_string_equal(bg_ctx_message(&ctx), "template 'T': '{n:>4}': null takes no format specification; "
						  "change the format specification after ':'");
	assert_int_equal(bg_registry_format_with("run {nope}", v, &run, &sb, &ctx), BG_EPRECOND);
	assert_string_equal(bg_ctx_message(&ctx), "template 'T': gate 'g.1' has no field 'nope'; name one of the "
						  "gate's fields, or write '{{' and '}}' for braces");
	assert_int_equal(bg_registry_format_with("run {id!x}", v, &run, &sb, &ctx), BG_EPRECOND);
	assert_string_equal(bg_ctx_message(&ctx), "template 'T': conversion in '{id!x}' must be !r, !s or !a");
	assert_int_equal(bg_registry_format_with("run }", v, &run, &sb, &ctx), BG_EPRECOND);
	assert_string_equal(bg_ctx_message(&ctx),
			    "template 'T': single '}' at character 5; write '}}' for a literal brace");
	bg_strbuf_release(&sb);
	bg_ctx_release(&ctx);
	bg_arena_free(a);
}

static void test_format_errors(void **state)
{
	struct bg_arena *a = bg_arena_new();
	struct bg_value *v = bg_value_new_object(a, 0);
	struct bg_strbuf sb = BG_STRBUF_INIT;
	struct bg_ctx ctx;

	(void)state;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_registry_format("a } b", v, &sb, &ctx), BG_ECHECK);
	assert_non_null(strstr(bg_ctx_message(&ctx), "single '}'"));
	assert_int_equal(bg_registry_format("a {b", v, &sb, &ctx), BG_ECHECK);
	assert_non_null(strstr(bg_ctx_message(&ctx), "never closed"));
	assert_int_equal(bg_registry_format("{b:d}", v, &sb, &ctx), BG_ECHECK); /* format('{b}', 'd') */
	assert_non_null(strstr(bg_ctx_message(&ctx), "'{b:d}': unknown format code 'd' for a string"));
	/* fields inside a spec: replaced first, one level deep (Python's
	 * recursion limit); missing, "{w}" is the spec, which Python refuses */
	assert_int_equal(bg_registry_format("{b:{w}}", v, &sb, &ctx), BG_ECHECK);
	assert_non_null(strstr(bg_ctx_message(&ctx), "'{b:{w}}': invalid format specifier '{w}'"));
	assert_int_equal(bg_registry_format("{b:{w:{p}}}", v, &sb, &ctx), BG_ECHECK);
	assert_non_null(strstr(bg_ctx_message(&ctx), "'{w:{p}}': a field inside a format specification may not "
						     "hold another"));
	assert_int_equal(bg_registry_format("x {0} y", v, &sb, &ctx), BG_ECHECK);
	assert_non_null(strstr(bg_ctx_message(&ctx), "positional"));
	assert_int_equal(bg_registry_format("{}", v, &sb, &ctx), BG_ECHECK);
	assert_int_equal(bg_registry_format("{b.upper}", v, &sb, &ctx), BG_ECHECK);
	assert_int_equal(bg_registry_format("{b[0]x}", v, &sb, &ctx), BG_ECHECK);
	assert_int_equal(bg_registry_format("{b!x}", v, &sb, &ctx), BG_ECHECK);
	assert_int_equal(bg_registry_format("{b[5]}", v, &sb, &ctx), BG_ECHECK); /* '{b}'[5]: IndexError */
	bg_ctx_release(&ctx);
	bg_strbuf_release(&sb);
	bg_arena_free(a);
}

static void expect_seconds(double s, const char *want)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	bg_registry_format_seconds(&sb, s);
	assert_string_equal(sb.buf, want);
	bg_strbuf_release(&sb);
}

static void expect_bytes(long long n, const char *want)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	bg_registry_format_bytes(&sb, n);
	assert_string_equal(sb.buf, want);
	bg_strbuf_release(&sb);
}

static void test_number_formats(void **state)
{
	(void)state;
	expect_seconds(0.0007, "0.700 ms");
	expect_seconds(0.0999999, "100.000 ms");
	expect_seconds(0.1, "0.100000 s");
	expect_seconds(0.577793, "0.577793 s");
	expect_seconds(11.1684999, "11.168500 s");
	expect_seconds(0.0, "0.000 ms");
	expect_bytes(0, "0 B");
	expect_bytes(19327352832LL, "18.000 GiB");
	expect_bytes(938524672LL, "0.874 GiB");
	expect_bytes(1, "0.000 GiB");
}

static void test_ordering(void **state)
{
	struct bg_arena *ar = bg_arena_new();
	struct bg_value *a = bg_value_new_string(ar, "CUDA"), *b = bg_value_new_string(ar, "Native Swift/Metal");
	struct bg_value *c = bg_value_new_string(ar, "cuda");
	struct bg_value *i1 = bg_value_new_int(ar, 2), *r1 = bg_value_new_real(ar, 1.5), *n = bg_value_null();
	bool err = false;

	(void)state;
	assert_true(bg_value_cmp(a, b, &err) < 0);
	assert_true(bg_value_cmp(a, c, &err) < 0); /* code points: 'C' < 'c' */
	assert_true(bg_value_cmp(r1, i1, &err) < 0);
	assert_int_equal(bg_value_cmp(n, n, &err), 0);
	assert_false(err);
	bg_value_cmp(a, i1, &err);
	assert_true(err); /* str < int raises TypeError in Python */
	bg_arena_free(ar);
}

static void test_staleness(void **state)
{
	const char *ours = "<!-- Generated by benchgate; do not edit by hand. -->\n\n## Coverage\n| a |\n";
	const char *theirs = "<!-- Generated by scripts/benchmark_registry.py; do not edit by hand. -->\n\n## Coverage\n| a |\n";
	const char *crlf = "<!-- Generated by x; do not edit by hand. -->\r\n\r\n## Coverage\r\n| a |\r\n";
	const char *changed = "<!-- Generated by benchgate; do not edit by hand. -->\n\n## Coverage\n| b |\n";
	const char *other_header = "<!-- Hand written -->\n\n## Coverage\n| a |\n";

	(void)state;
	assert_true(bg_registry_document_matches(theirs, strlen(theirs), ours));
	assert_true(bg_registry_document_matches(crlf, strlen(crlf), ours));
	assert_false(bg_registry_document_matches(changed, strlen(changed), ours));
	assert_false(bg_registry_document_matches(other_header, strlen(other_header), ours));
	assert_false(bg_registry_document_matches("", 0, ours));
	/* only the file's line ends are normalised (Python's text mode): a
	 * rendered '\r' (a field's) matches no file, not even its own bytes */
	{
		const char *cr = "<!-- Generated by benchgate; do not edit by hand. -->\n\n| a\rb |\n";
		const char *cr_as_lf = "<!-- Generated by benchgate; do not edit by hand. -->\n\n| a\nb |\n";
		const char *bare_cr = "<!-- Generated by x; do not edit by hand. -->\r\r## Coverage\r| a |\r";
		const char *mixed = "<!-- Generated by x; do not edit by hand. -->\n\r\n## Coverage\r| a |\n";

		assert_false(bg_registry_document_matches(cr, strlen(cr), cr));
		assert_false(bg_registry_document_matches(cr_as_lf, strlen(cr_as_lf), cr));
		assert_true(bg_registry_document_matches(bare_cr, strlen(bare_cr), ours));
		assert_true(bg_registry_document_matches(mixed, strlen(mixed), ours));
		assert_true(bg_registry_document_matches(crlf, strlen(crlf) - 1, ours)); /* a last "\r" reads "\n" */
	}
}

static void write_file(const char *dir, const char *rel, const char *text)
{
	struct bg_strbuf p = BG_STRBUF_INIT;
	struct bg_ctx ctx;

	bg_ctx_init(&ctx);
	bg_path_join(&p, dir, rel);
	*strrchr(p.buf, '/') = '\0';
	assert_int_equal(bg_mkdirs(p.buf, &ctx), BG_OK);
	p.buf[strlen(p.buf)] = '/';
	assert_int_equal(bg_file_write_atomic(p.buf, NULL, text, strlen(text), &ctx), BG_OK);
	bg_strbuf_release(&p);
	bg_ctx_release(&ctx);
}

static void test_list_and_next_order(void **state)
{
	char dir[] = "/tmp/benchgate-unit-XXXXXX";
	struct bg_config cfg;
	struct bg_registry reg;
	struct bg_strbuf out = BG_STRBUF_INIT, cmd = BG_STRBUF_INIT;
	struct bg_gate_filter none = {0}, cuda = {NULL, "cuda", NULL, NULL};
	struct bg_ctx ctx;
	const char *gate = "\"operation\": \"o\", \"computer\": \"c\", \"runbook\": \"r\", \"next_gate\": \"n\"";
	char *json;

	(void)state;
	assert_non_null(mkdtemp(dir));
	json = malloc(4096);
	snprintf(json, 4096,
		 "{\"runbooks\": {\"r\": {\"evidence_level\": \"physical performance\"}},"
		 " \"gates\": ["
		 "{\"id\": \"b\", \"module\": \"M\", \"platform\": \"WebGPU\", \"state\": \"pending\", \"priority\": 2, %s},"
		 "{\"id\": \"a\", \"module\": \"M\", \"platform\": \"CUDA\", \"state\": \"measured\", \"priority\": 1, %s},"
		 "{\"id\": \"c\", \"module\": \"A\", \"platform\": \"WebGPU\", \"state\": \"blocked\", \"priority\": 2, %s},"
		 "{\"id\": \"d\", \"module\": \"M\", \"platform\": \"CUDA\", \"state\": \"partial\", \"priority\": 1, %s}]}",
		 gate, gate, gate, gate);
	write_file(dir, "benchmarks/benchmark_registry.json", json);
	free(json);
	bg_ctx_init(&ctx);
	assert_int_equal(bg_config_load(&cfg, dir, NULL, &ctx), BG_OK);
	assert_int_equal(bg_registry_load(&reg, &cfg, &ctx), BG_OK);
	assert_int_equal(bg_registry_list(&reg, &none, &out, &ctx), BG_OK);
	assert_string_equal(out.buf, "c\t! Blocked\tWebGPU\tc\tr\n"
				     "a\t\xe2\x9c\x93 Measured\tCUDA\tc\tr\n"
				     "d\t\xe2\x97\x90 Partial\tCUDA\tc\tr\n"
				     "b\t\xe2\x97\x8b Pending\tWebGPU\tc\tr\n");
	bg_strbuf_reset(&out);
	assert_int_equal(bg_registry_next(&reg, &none, 2, false, &out, &ctx), BG_OK);
	assert_string_equal(out.buf, "d\t\xe2\x97\x90 Partial\tCUDA\tc\tr\n"
				     "b\t\xe2\x97\x8b Pending\tWebGPU\tc\tr\n");
	bg_strbuf_reset(&out);
	assert_int_equal(bg_registry_next(&reg, &cuda, 10, true, &out, &ctx), BG_OK);
	assert_string_equal(out.buf, "d\t\xe2\x97\x90 Partial\tCUDA\tc\tr\n");
	bg_strbuf_reset(&out);
	assert_int_equal(bg_registry_next(&reg, &none, -3, false, &out, &ctx), BG_OK);
	assert_string_equal(out.buf, "");
	{ /* a gate a library caller gives, whose id is no string: named as str() names it */
		struct bg_arena *a = bg_arena_new();
		struct bg_value *g = NULL;
		const char *text = "{\"id\": 7, \"runbook\": \"missing\"}";

		assert_int_equal(bg_value_parse(a, text, strlen(text), "gate", &g, &ctx), BG_OK);
		assert_int_equal(bg_registry_command(&reg, g, &cmd, &ctx), BG_ECHECK);
		assert_non_null(strstr(bg_ctx_message(&ctx), "gate '7' names unknown runbook 'missing'"));
		text = "{\"id\": 8.5, \"runbook\": \"r\", \"state\": \"odd\"}";
		assert_int_equal(bg_value_parse(a, text, strlen(text), "gate", &g, &ctx), BG_OK);
		assert_int_equal(bg_registry_command(&reg, g, &cmd, &ctx), BG_ECHECK);
		assert_non_null(strstr(bg_ctx_message(&ctx), "gate '8.5' has unknown state 'odd'"));
		bg_arena_free(a);
	}
	bg_strbuf_release(&out);
	bg_strbuf_release(&cmd);
	bg_registry_release(&reg);
	bg_config_release(&cfg);
	bg_ctx_release(&ctx);
	snprintf(dir + strlen(dir), 1, "%s", "");
	{
		char rm[256];
		snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
		assert_int_equal(system(rm), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_format_errors),
		cmocka_unit_test(test_format_for_run),
		cmocka_unit_test(test_number_formats),
		cmocka_unit_test(test_ordering),
		cmocka_unit_test(test_staleness),
		cmocka_unit_test(test_list_and_next_order),
	};
	return cmocka_run_group_tests_name("registry", tests, NULL, NULL);
}
