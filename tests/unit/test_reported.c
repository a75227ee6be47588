/*
 * test_reported.c - the reported-timing file (bg_reported_check and
 * bg_reported_read): what is accepted, what each malformed file says, and
 * that nothing is returned on failure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchgate/json.h"
#include "benchgate/measure.h"
#include "benchgate/strbuf.h"

/* Checks text; returns the status and leaves the message in msg. */
static int check_text(const char *text, char *msg, size_t cap, json_t **samples, json_t **metrics)
{
	struct bg_ctx ctx;
	json_t *doc = NULL;
	int rc;

	bg_ctx_init(&ctx);
	*samples = *metrics = NULL;
	rc = bg_json_load_buffer(text, strlen(text), "r.json", &doc, &ctx);
	if (rc == BG_OK)
		rc = bg_reported_check(doc, "r.json", samples, metrics, &ctx);
	snprintf(msg, cap, "%s", bg_ctx_message(&ctx));
	json_decref(doc);
	bg_ctx_release(&ctx);
	return rc;
}

static void test_accepted(void **state)
{
	json_t *samples, *metrics;
	char msg[256];

	(void)state;
	assert_int_equal(check_text("{\"samples_seconds\": [0, 1, 2.5e-3]}", msg, sizeof(msg), &samples, &metrics), BG_OK);
	assert_int_equal(json_array_size(samples), 3);
	/* integers become reals: every sample is seconds */
	assert_true(json_is_real(json_array_get(samples, 1)));
	assert_float_equal(json_real_value(json_array_get(samples, 2)), 2.5e-3, 0);
	assert_true(json_is_object(metrics));
	json_decref(samples);
	json_decref(metrics);
	/* -0.0 is the sample 0: no statistic shows a negative zero */
	assert_int_equal(check_text("{\"samples_seconds\": [-0.0]}", msg, sizeof(msg), &samples, &metrics), BG_OK);
	assert_false(signbit(json_real_value(json_array_get(samples, 0))));
	assert_int_equal(json_object_size(metrics), 0);
	json_decref(samples);
	json_decref(metrics);
	assert_int_equal(check_text("{\"metrics\": {\"bytes\": 1024, \"rate\": -1.5}, \"samples_seconds\": [3]}", msg,
				    sizeof(msg), &samples, &metrics), BG_OK);
	assert_int_equal(json_integer_value(json_object_get(metrics, "bytes")), 1024);
	assert_float_equal(json_real_value(json_object_get(metrics, "rate")), -1.5, 0);
	json_decref(samples);
	json_decref(metrics);
}

static void test_refused(void **state)
{
	static const struct {
		const char *text, *message;
	} cases[] = {
		{"", "r.json: file is empty"},
		{"{\"samples_seconds\": [1,]}", "r.json:1:"},
		{"[1]", "r.json: top level must be a JSON object"},
		{"{}", "r.json: 'samples_seconds' must be a non-empty list of seconds"},
		{"{\"samples_seconds\": 1}", "r.json: 'samples_seconds' must be a non-empty list of seconds"},
		{"{\"samples_seconds\": []}", "r.json: 'samples_seconds' must be a non-empty list of seconds"},
		{"{\"samples_seconds\": [1, -1e-9]}", "r.json: samples_seconds[1] must be a number of seconds from 0 to 1e9"},
		{"{\"samples_seconds\": [null]}", "r.json: samples_seconds[0] must be a number of seconds from 0 to 1e9"},
		{"{\"samples_seconds\": [true]}", "r.json: samples_seconds[0] must be a number of seconds from 0 to 1e9"},
		{"{\"samples_seconds\": [1], \"extra\": 2}", "r.json: no field 'extra' (its fields: samples_seconds, metrics)"},
		{"{\"samples_seconds\": [1], \"metrics\": null}", "r.json: 'metrics' must be an object of names and numbers"},
		{"{\"samples_seconds\": [1], \"metrics\": {\"\": 1}}", "r.json: a metric needs a name"},
		{"{\"samples_seconds\": [1], \"metrics\": {\"m\": null}}", "r.json: metric 'm' must be a finite number from -1e150 to 1e150"},
		{"{\"samples_seconds\": [1], \"metrics\": {\"m\": [1]}}", "r.json: metric 'm' must be a finite number from -1e150 to 1e150"},
		/* finite, but its nanoseconds or its squares would not be */
		{"{\"samples_seconds\": [1e308]}", "r.json: samples_seconds[0] must be a number of seconds from 0 to 1e9"},
		{"{\"samples_seconds\": [1, 1.0000001e9]}", "r.json: samples_seconds[1] must be a number of seconds from 0 to 1e9"},
		{"{\"samples_seconds\": [1], \"metrics\": {\"m\": -1e200}}", "r.json: metric 'm' must be a finite number from -1e150 to 1e150"},
	};
	json_t *samples, *metrics;
	char msg[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = check_text(cases[i].text, msg, sizeof(msg), &samples, &metrics);

		if (rc != BG_ECHECK || strncmp(msg, cases[i].message, strlen(cases[i].message)) != 0)
			fail_msg("case %zu (%s): status %d, message '%s'", i, cases[i].text, rc, msg);
		assert_null(samples);
		assert_null(metrics);
	}
}

/* A million samples pass; one more is refused with the bound. */
static void test_bounds(void **state)
{
	struct bg_strbuf text = BG_STRBUF_INIT;
	json_t *samples, *metrics;
	char msg[256];

	(void)state;
	bg_strbuf_adds(&text, "{\"samples_seconds\": [0");
	for (int i = 1; i < 1000000; i++)
		bg_strbuf_adds(&text, ",0");
	bg_strbuf_adds(&text, "]}");
	assert_int_equal(check_text(text.buf, msg, sizeof(msg), &samples, &metrics), BG_OK);
	assert_int_equal(json_array_size(samples), 1000000);
	json_decref(samples);
	json_decref(metrics);
	text.len -= 2;
	bg_strbuf_adds(&text, ",0]}");
	assert_int_equal(check_text(text.buf, msg, sizeof(msg), &samples, &metrics), BG_ECHECK);
	assert_string_equal(msg, "r.json: 1000001 samples; a run may report at most 1000000 (aggregate repetitions in the program)");
	assert_null(samples);
	bg_strbuf_release(&text);
}

static void test_read(void **state)
{
	char path[] = "/tmp/test-reported-XXXXXX";
	json_t *samples = NULL, *metrics = NULL;
	struct bg_ctx ctx;
	int fd = mkstemp(path);
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("{\"samples_seconds\": [0.5],\n \"metrics\": {\"m\": 1e400}}", f);
	fclose(f);
	bg_ctx_init(&ctx);
	/* jansson refuses a number it cannot hold: the place is named */
	assert_int_equal(bg_reported_read(path, "shown.json", &samples, &metrics, &ctx), BG_ECHECK);
	assert_non_null(strstr(bg_ctx_message(&ctx), "shown.json:2:"));
	assert_null(samples);
	unlink(path);
	bg_ctx_release(&ctx);
	/* a file over 64 MiB is refused before it is read (a sparse one here) */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, ((off_t)64 << 20) + 1), 0);
	close(fd);
	bg_ctx_init(&ctx);
	assert_int_equal(bg_reported_read(path, "shown.json", &samples, &metrics, &ctx), BG_ECHECK);
	assert_string_equal(bg_ctx_message(&ctx), "shown.json: 67108865 bytes; a result file may hold at most 64 MiB");
	bg_ctx_release(&ctx);
	unlink(path);
	bg_ctx_init(&ctx);
	assert_int_equal(bg_reported_read(path, "shown.json", &samples, &metrics, &ctx), BG_EIO);
	assert_non_null(strstr(bg_ctx_message(&ctx), "shown.json"));
	bg_ctx_release(&ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepted),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
