/*
 * fuzz_reported.c - fuzz target for the reported-timing file
 * (bg_reported_check after the JSON parse): it never crashes, returns
 * both results or neither, and what it accepts holds only samples from 0
 * to 1e9 seconds and metrics from -1e150 to 1e150 (so that every statistic
 * of them stays finite).
 *
 * With -fsanitize=fuzzer (make fuzz FUZZ_TARGET=fuzz_reported) this is a
 * libFuzzer target; without, main() replays files (tests/fuzz/replay.h).
 */
#include <math.h>
#include <stdlib.h>

#include "benchgate/json.h"
#include "benchgate/measure.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	json_t *doc = NULL, *samples, *metrics, *x;
	struct bg_ctx ctx;
	const char *name;
	size_t i;
	int rc;

	bg_ctx_init(&ctx);
	if (bg_json_load_buffer((const char *)data, size, "fuzz.json", &doc, &ctx) != BG_OK) {
		bg_ctx_release(&ctx);
		return 0;
	}
	rc = bg_reported_check(doc, "fuzz.json", &samples, &metrics, &ctx);
	if (rc != BG_OK) {
		if (samples || metrics || !*bg_ctx_message(&ctx))
			abort();
	} else {
		if (!json_array_size(samples) || !json_is_object(metrics))
			abort();
		json_array_foreach(samples, i, x)
			if (!json_is_real(x) || !isfinite(json_real_value(x)) || json_real_value(x) < 0 ||
			    json_real_value(x) > 1e9)
				abort();
		json_object_foreach(metrics, name, x)
			if (!*name || !json_is_number(x) || !isfinite(json_number_value(x)) ||
			    fabs(json_number_value(x)) > 1e150)
				abort();
	}
	json_decref(samples);
	json_decref(metrics);
	json_decref(doc);
	bg_ctx_release(&ctx);
	return 0;
}

#define FUZZ_NAME "fuzz_reported"
#include "replay.h"
