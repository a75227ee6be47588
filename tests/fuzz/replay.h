/*
 * replay.h - the main() of a fuzz target built without libFuzzer: feeds
 * each file named on the command line to LLVMFuzzerTestOneInput, which is
 * how the test suite runs the saved corpora under the sanitizers
 * (tests/scripts/test_fuzz_replay.sh). Include it once, at the end of a
 * target, after defining FUZZ_NAME.
 */
#ifndef BENCHGATE_LIBFUZZER
#include <stdio.h>

#include "benchgate/fsutil.h"

int main(int argc, char **argv)
{
	int failures = 0;

	for (int i = 1; i < argc; i++) {
		struct bg_strbuf sb = BG_STRBUF_INIT;
		if (bg_file_read(argv[i], NULL, &sb, NULL) != BG_OK) {
			fprintf(stderr, "%s: cannot read %s\n", FUZZ_NAME, argv[i]);
			failures++;
			continue;
		}
		LLVMFuzzerTestOneInput((const unsigned char *)sb.buf, sb.len);
		bg_strbuf_release(&sb);
	}
	printf("%s: replayed %d inputs\n", FUZZ_NAME, argc - 1 - failures);
	return failures ? 1 : 0;
}
#endif
