/*
 * fuzz_project.c - fuzz target for a whole project as `benchgate check`
 * and `validate` read it: benchgate.json (configuration, computer rules,
 * labels), the profile and parity matrices, an experiment manifest,
 * RUNS.md, the registry with its evidence index, and the committed
 * coverage document.
 *
 * The input is the files' texts in the order of project_files, separated by
 * lines of "~~~~"; a part that is missing at the end, or that is exactly
 * "(absent)", removes its file. The files are
 * written into one temporary project (removed at exit) and read through the
 * library as the verbs read them. Inputs that could make the project name
 * a path outside it (an absolute path or "..") are skipped, so that a run
 * never reads devices or the host's files.
 *
 * With -fsanitize=fuzzer (make fuzz FUZZ_TARGET=fuzz_project) this is a
 * libFuzzer target; without, main() replays files (tests/fuzz/replay.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "benchgate/config.h"
#include "benchgate/fsutil.h"
#include "benchgate/profile.h"
#include "benchgate/registry.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static const char *const project_files[] = {
	"benchgate.json",
	"benchmarks/benchmark_registry.json",
	"benchmarks/profile_matrix.json",
	"tests/parity/backend_matrix.json",
	"experiments/20261101-mini-baseline/manifest.json",
	"experiments/RUNS.md",
	"experiments/20261101-mini-baseline/evidence-index.json",
	"docs/_generated/benchmark_coverage.md",
};
#define NFILES (sizeof(project_files) / sizeof(project_files[0]))
static const char *const project_dirs[] = {
	"benchmarks", "tests", "tests/parity", "experiments", "experiments/20261101-mini-baseline",
	"docs", "docs/_generated",
};
#define NDIRS (sizeof(project_dirs) / sizeof(project_dirs[0]))
#define SEPARATOR "\n~~~~\n"
#define ABSENT "(absent)"

static char root[64];

static void path_of(char *buf, size_t size, const char *rel)
{
	snprintf(buf, size, "%s/%s", root, rel);
}

static void remove_project(void)
{
	char path[256];

	for (size_t i = 0; i < NFILES; i++) {
		path_of(path, sizeof(path), project_files[i]);
		unlink(path);
	}
	for (size_t i = NDIRS; i-- > 0;) {
		path_of(path, sizeof(path), project_dirs[i]);
		rmdir(path);
	}
	rmdir(root);
}

static int make_project(void)
{
	char path[256];

	snprintf(root, sizeof(root), "/tmp/benchgate-fuzz-project.XXXXXX");
	if (!mkdtemp(root))
		return -1;
	atexit(remove_project);
	for (size_t i = 0; i < NDIRS; i++) {
		path_of(path, sizeof(path), project_dirs[i]);
		if (mkdir(path, 0755) != 0)
			return -1;
	}
	return 0;
}

/* True when text may name something outside the project. */
static bool leaves_project(const char *text, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (text[i] == '.' && text[i + 1] == '.')
			return true;
		if (text[i] == '"' && (text[i + 1] == '/' || text[i + 1] == '\\'))
			return true;
	}
	return false;
}

/* Writes part i (text[0..len)), or removes the file when text is NULL. */
static void put_file(size_t i, const char *text, size_t len)
{
	char path[256];
	FILE *f;

	path_of(path, sizeof(path), project_files[i]);
	if (!text) {
		unlink(path);
		return;
	}
	f = fopen(path, "wb");
	if (!f)
		abort();
	if (len && fwrite(text, 1, len, f) != len)
		abort();
	fclose(f);
}

static void read_project(void)
{
	struct bg_config cfg;
	struct bg_registry reg;
	struct bg_problems problems = {0};
	struct bg_profile_counts pcounts;
	struct bg_registry_counts rcounts;
	struct bg_strbuf out = BG_STRBUF_INIT;
	struct bg_ctx ctx;

	bg_ctx_init(&ctx);
	if (bg_config_load(&cfg, root, NULL, &ctx) == BG_OK) {
		bg_config_computer_label(&cfg, "Intel Xeon E-2276G", "ci");
		bg_config_computer_label(&cfg, "", "");
		bg_profile_check(&cfg, &problems, &pcounts, &ctx);
		bg_problems_release(&problems);
		if (bg_registry_load(&reg, &cfg, &ctx) == BG_OK &&
		    bg_registry_validate(&reg, true, &problems, &rcounts, &ctx) == BG_OK)
			bg_registry_render(&reg, &out, &ctx);
		bg_registry_release(&reg);
	}
	bg_config_release(&cfg);
	bg_problems_release(&problems);
	bg_strbuf_release(&out);
	bg_ctx_release(&ctx);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static int ready;
	const char *text = (const char *)data, *end = text + size;

	if (!ready) {
		if (make_project() != 0)
			abort();
		ready = 1;
	}
	if (leaves_project(text, size))
		return 0;
	for (size_t i = 0; i < NFILES; i++) {
		const char *sep;
		size_t len;

		if (!text) {
			put_file(i, NULL, 0);
			continue;
		}
		sep = memmem(text, (size_t)(end - text), SEPARATOR, sizeof(SEPARATOR) - 1);
		len = (size_t)((sep ? sep : end) - text);
		if (len == sizeof(ABSENT) - 1 && memcmp(text, ABSENT, len) == 0)
			put_file(i, NULL, 0);
		else
			put_file(i, text, len);
		text = sep ? sep + sizeof(SEPARATOR) - 1 : NULL;
	}
	read_project();
	return 0;
}

#define FUZZ_NAME "fuzz_project"
#include "replay.h"
