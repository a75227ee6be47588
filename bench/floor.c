/*
 * floor.c - the least any `benchgate validate` must do, as a program to time
 * against it (bench/startup.sh): read every input, check the syntax of each
 * JSON text strictly while building nothing (bg_value_parse_file_keep with
 * an empty keep list), and read the committed document that the render
 * check compares. No registry rule, no evidence row, no render.
 *   floor DOC JSON...    (exit 0 when every text is well formed)
 * Not part of benchgate; not a test.
 */
#include <malloc.h>
#include <stdio.h>

#include "benchgate/fsutil.h"
#include "benchgate/value.h"

static const struct bg_value_keep nothing[] = {{NULL, NULL}};

int main(int argc, char **argv)
{
	struct bg_strbuf doc = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	int rc = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: floor DOC JSON...\n");
		return 2;
	}
	mallopt(M_MMAP_THRESHOLD, 64 << 20); /* as the program does */
	bg_ctx_init(&ctx);
	for (int i = 2; i < argc && !rc; i++) {
		struct bg_arena *a = bg_arena_new();
		struct bg_value *v;
		rc = bg_value_parse_file_keep(a, argv[i], argv[i], nothing, &v, &ctx);
		bg_arena_free(a);
	}
	if (!rc)
		rc = bg_file_read(argv[1], NULL, &doc, &ctx);
	if (rc)
		fprintf(stderr, "floor: %s\n", bg_ctx_message(&ctx));
	bg_strbuf_release(&doc);
	bg_ctx_release(&ctx);
	return rc ? 1 : 0;
}
