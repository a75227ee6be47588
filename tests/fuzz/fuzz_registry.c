/*
 * fuzz_registry.c - fuzz target for the registry parser and every pure
 * registry verb (validate, render, list, next, show, command, format, and
 * format as run substitutes a command).
 *
 * With -fsanitize=fuzzer (make fuzz, clang) this is a libFuzzer target.
 * Without it, main() replays the files named on the command line, which is
 * how the test suite runs the saved corpus under the sanitizers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchgate/fsutil.h"
#include "benchgate/registry.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static struct bg_config cfg;
	static int ready;
	struct bg_registry reg;
	struct bg_problems problems = {0};
	struct bg_registry_counts counts;
	struct bg_gate_filter none = {0};
	struct bg_strbuf out = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	size_t i;
	struct bg_value *gate;

	if (!ready) {
		struct bg_ctx c;
		bg_ctx_init(&c);
		/* a project root with nothing in it: evidence imports fail cleanly */
		if (bg_config_load(&cfg, "/nonexistent-benchgate-fuzz-root", NULL, &c) != BG_OK) {
			bg_config_release(&cfg);
			memset(&cfg, 0, sizeof(cfg));
			cfg.root = bg_xstrdup("/nonexistent-benchgate-fuzz-root");
			cfg.registry_path = bg_xstrdup("registry.json");
			cfg.generated_path = bg_xstrdup("coverage.md");
			cfg.platform_labels = NULL; /* no labels */
			cfg.module_labels = NULL;
			cfg.raw = NULL;
		}
		bg_ctx_release(&c);
		ready = 1;
	}
	bg_ctx_init(&ctx);
	if (bg_registry_load_buffer(&reg, &cfg, (const char *)data, size, "fuzz.json", &ctx) == BG_OK) {
		bg_registry_list(&reg, &none, &out, &ctx);
		bg_registry_next(&reg, &none, 5, true, &out, &ctx);
		BG_VALUE_ARRAY_FOREACH(reg.gates, i, gate) {
			/* the gate's runbook command as run substitutes it too */
			static const struct bg_format_how run = {"template", BG_EPRECOND, true, true};
			const char *rbid = bg_value_str(bg_value_get(gate, "runbook"));
			const struct bg_value *rb = rbid && reg.runbooks ? bg_value_get(reg.runbooks, rbid) : NULL;
			const char *cmd = rb ? bg_value_str(bg_value_get(rb, "command")) : NULL;

			bg_registry_show(gate, &out);
			bg_registry_command(&reg, gate, &out, &ctx);
			if (cmd)
				bg_registry_format_with(cmd, gate, &run, &out, &ctx);
		}
		if (bg_registry_validate(&reg, true, &problems, &counts, &ctx) == BG_OK)
			bg_registry_render(&reg, &out, &ctx);
	}
	bg_problems_release(&problems);
	bg_registry_release(&reg);
	bg_strbuf_release(&out);
	bg_ctx_release(&ctx);
	return 0;
}

#define FUZZ_NAME "fuzz_registry"
#include "replay.h"
