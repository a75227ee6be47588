/*
 * test_promote.c - the registry text edit of a promotion changes exactly the
 * intended bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "benchgate/promote.h"

static void expect_edit(const char *in, const char *gate, const char *want)
{
	struct bg_strbuf out = BG_STRBUF_INIT;
	struct bg_ctx ctx;

	bg_ctx_init(&ctx);
	assert_int_equal(bg_promote_edit_registry(in, strlen(in), gate, "measured", "box-s7",
						  "experiments/benchgate-evidence.json", &out, &ctx),
			 BG_OK);
	assert_string_equal(out.buf, want);
	bg_strbuf_release(&out);
	bg_ctx_release(&ctx);
}

static void test_multiline(void **state)
{
	(void)state;
	expect_edit("{\n"
		    "  \"schema_version\": 1,\n"
		    "  \"evidence_imports\": [\n"
		    "    {\"path\": \"experiments/old.json\"}\n"
		    "  ],\n"
		    "  \"gates\": [\n"
		    "    {\n"
		    "      \"id\": \"a\",\n"
		    "      \"state\": \"pending\",\n"
		    "      \"satisfied_by\": [\n"
		    "        \"m1\"\n"
		    "      ],\n"
		    "      \"priority\": 1\n"
		    "    },\n"
		    "    {\n"
		    "      \"id\": \"b\",\n"
		    "      \"state\": \"partial\",\n"
		    "      \"priority\": 2\n"
		    "    }\n"
		    "  ]\n"
		    "}\n",
		    "b",
		    "{\n"
		    "  \"schema_version\": 1,\n"
		    "  \"evidence_imports\": [\n"
		    "    {\"path\": \"experiments/old.json\"},\n"
		    "    {\"path\": \"experiments/benchgate-evidence.json\"}\n"
		    "  ],\n"
		    "  \"gates\": [\n"
		    "    {\n"
		    "      \"id\": \"a\",\n"
		    "      \"state\": \"pending\",\n"
		    "      \"satisfied_by\": [\n"
		    "        \"m1\"\n"
		    "      ],\n"
		    "      \"priority\": 1\n"
		    "    },\n"
		    "    {\n"
		    "      \"id\": \"b\",\n"
		    "      \"state\": \"measured\",\n"
		    "      \"priority\": 2,\n"
		    "      \"satisfied_by\": [\"box-s7\"]\n"
		    "    }\n"
		    "  ]\n"
		    "}\n");
}

/* a registry written with CRLF line endings: the inserted lines end so too */
static void test_crlf(void **state)
{
	(void)state;
	expect_edit("{\r\n"
		    "  \"evidence_imports\": [\r\n"
		    "    {\"path\": \"experiments/old.json\"}\r\n"
		    "  ],\r\n"
		    "  \"gates\": [\r\n"
		    "    {\r\n"
		    "      \"id\": \"b\",\r\n"
		    "      \"state\": \"partial\"\r\n"
		    "    }\r\n"
		    "  ]\r\n"
		    "}\r\n",
		    "b",
		    "{\r\n"
		    "  \"evidence_imports\": [\r\n"
		    "    {\"path\": \"experiments/old.json\"},\r\n"
		    "    {\"path\": \"experiments/benchgate-evidence.json\"}\r\n"
		    "  ],\r\n"
		    "  \"gates\": [\r\n"
		    "    {\r\n"
		    "      \"id\": \"b\",\r\n"
		    "      \"state\": \"measured\",\r\n"
		    "      \"satisfied_by\": [\"box-s7\"]\r\n"
		    "    }\r\n"
		    "  ]\r\n"
		    "}\r\n");
}

static void test_existing_list_and_import(void **state)
{
	(void)state;
	/* the import is present already: not added twice; the id joins the list */
	expect_edit("{\"evidence_imports\": [{\"path\": \"experiments/benchgate-evidence.json\"}],\n"
		    " \"gates\": [{\"id\": \"a\", \"state\": \"partial\", \"satisfied_by\": [\"m1\"]}]}",
		    "a",
		    "{\"evidence_imports\": [{\"path\": \"experiments/benchgate-evidence.json\"}],\n"
		    " \"gates\": [{\"id\": \"a\", \"state\": \"measured\", \"satisfied_by\": [\"m1\", \"box-s7\"]}]}");
	/* the id is named already (its evidence row removed, then promoted
	 * again), also written with an escape: not added twice */
	expect_edit("{\"evidence_imports\": [{\"path\": \"experiments/benchgate-evidence.json\"}],\n"
		    " \"gates\": [{\"id\": \"a\", \"state\": \"partial\", \"satisfied_by\": [\"m1\", \"box-\\u00737\"]}]}",
		    "a",
		    "{\"evidence_imports\": [{\"path\": \"experiments/benchgate-evidence.json\"}],\n"
		    " \"gates\": [{\"id\": \"a\", \"state\": \"measured\", \"satisfied_by\": [\"m1\", \"box-\\u00737\"]}]}");
	/* no imports at all: added as the last top-level member; empty list filled */
	expect_edit("{\"gates\": [{\"id\": \"a\", \"state\": \"pending\", \"satisfied_by\": []}]}", "a",
		    "{\"gates\": [{\"id\": \"a\", \"state\": \"measured\", \"satisfied_by\": [\"box-s7\"]}], "
		    "\"evidence_imports\": [{\"path\": \"experiments/benchgate-evidence.json\"}]}");
}

static void test_json_reading(void **state)
{
	(void)state;
	/* duplicate keys: the last one is what a JSON reader keeps, so it is edited */
	expect_edit("{\"gates\": [{\"id\": \"a\", \"state\": \"pending\", \"state\": \"blocked\"}], "
		    "\"evidence_imports\": []}",
		    "a",
		    "{\"gates\": [{\"id\": \"a\", \"state\": \"pending\", \"state\": \"measured\", "
		    "\"satisfied_by\": [\"box-s7\"]}], "
		    "\"evidence_imports\": [{\"path\": \"experiments/benchgate-evidence.json\"}]}");
	expect_edit("{\"gates\": [{\"id\": \"old\"}], \"evidence_imports\": [], \"gates\": [{\"id\": \"a\"}]}", "a",
		    "{\"gates\": [{\"id\": \"old\"}], "
		    "\"evidence_imports\": [{\"path\": \"experiments/benchgate-evidence.json\"}], "
		    "\"gates\": [{\"id\": \"a\", \"state\": \"measured\", \"satisfied_by\": [\"box-s7\"]}]}");
	/* keys and ids with escapes are read decoded */
	expect_edit("{\"gates\": [{\"id\": \"\\u0061\", \"st\\u0061te\": \"pending\"}], \"evidence_imports\": []}",
		    "a",
		    "{\"gates\": [{\"id\": \"\\u0061\", \"st\\u0061te\": \"measured\", \"satisfied_by\": [\"box-s7\"]}], "
		    "\"evidence_imports\": [{\"path\": \"experiments/benchgate-evidence.json\"}]}");
}

static void test_written_strings(void **state)
{
	struct bg_strbuf out = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	const char *in = "{\"gates\": [{\"id\": \"a\"}]}";

	(void)state;
	bg_ctx_init(&ctx);
	/* what is written is JSON: quotes, backslashes and control bytes escaped */
	assert_int_equal(bg_promote_edit_registry(in, strlen(in), "a", "measured", "m\"1\\\t",
						  "experiments/e\n.json", &out, &ctx),
			 BG_OK);
	assert_string_equal(out.buf, "{\"gates\": [{\"id\": \"a\", \"state\": \"measured\", "
				     "\"satisfied_by\": [\"m\\\"1\\\\\\t\"]}], "
				     "\"evidence_imports\": [{\"path\": \"experiments/e\\n.json\"}]}");
	bg_strbuf_release(&out);
	bg_ctx_release(&ctx);
}

/* satisfied_by and evidence_imports written as an empty object or text
 * (which the reference reads as empty) become lists; a list is kept a list. */
static void test_empty_non_lists(void **state)
{
	(void)state;
	expect_edit("{\"evidence_imports\": {}, \"gates\": [{\"id\": \"a\", \"satisfied_by\": \"\"}]}", "a",
		    "{\"evidence_imports\": [{\"path\": \"experiments/benchgate-evidence.json\"}], "
		    "\"gates\": [{\"id\": \"a\", \"satisfied_by\": [\"box-s7\"], \"state\": \"measured\"}]}");
	expect_edit("{\"evidence_imports\": \"\", \"gates\": [{\"id\": \"a\", \"satisfied_by\": { }}]}", "a",
		    "{\"evidence_imports\": [{\"path\": \"experiments/benchgate-evidence.json\"}], "
		    "\"gates\": [{\"id\": \"a\", \"satisfied_by\": [\"box-s7\"], \"state\": \"measured\"}]}");
}

static void test_refusals(void **state)
{
	struct bg_strbuf out = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	const char *no_gate = "{\"gates\": [{\"id\": \"a\"}]}";
	const char *bad = "{\"gates\": [{\"id\": \"a\", \"satisfied_by\": \"m1\"}]}";
	const char *bad_imports = "{\"evidence_imports\": {\"path\": \"x.json\"}, \"gates\": [{\"id\": \"a\"}]}";

	(void)state;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_promote_edit_registry(no_gate, strlen(no_gate), "zz", "measured", "m", "e.json", &out, &ctx),
			 BG_ECHECK);
	assert_non_null(strstr(bg_ctx_message(&ctx), "'zz'"));
	assert_int_equal(bg_promote_edit_registry(bad, strlen(bad), "a", "measured", "m", "e.json", &out, &ctx),
			 BG_ECHECK);
	assert_string_equal(bg_ctx_message(&ctx),
			    "gate 'a': satisfied_by is not a list; write it as a list of measurement ids");
	assert_int_equal(bg_promote_edit_registry(bad_imports, strlen(bad_imports), "a", "measured", "m", "e.json",
						  &out, &ctx),
			 BG_ECHECK);
	assert_string_equal(bg_ctx_message(&ctx),
			    "evidence_imports is not a list; write it as a list of {\"path\": ...} objects");
	assert_int_equal(bg_promote_edit_registry("[]", 2, "a", "measured", "m", "e.json", &out, &ctx), BG_ECHECK);
	assert_string_equal(bg_ctx_message(&ctx), "there is no 'gates' list to promote into");
	bg_strbuf_release(&out);
	bg_ctx_release(&ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_multiline),
		cmocka_unit_test(test_crlf),
		cmocka_unit_test(test_existing_list_and_import),
		cmocka_unit_test(test_json_reading),
		cmocka_unit_test(test_written_strings),
		cmocka_unit_test(test_empty_non_lists),
		cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests_name("promote", tests, NULL, NULL);
}
