/*
 * fuzz_scrub.c - fuzz target for what keeps home directories and secrets
 * out of a session document (bg_provenance_scrub_text): the first line of
 * the input is $HOME, the rest the text. It never crashes; scrubbing is
 * idempotent (a written string scrubbed again is unchanged); and the result
 * holds the home directory (when it is an absolute path other than "/") at
 * no path start, and no /home/ or /users/ (any case) in a path that starts
 * at '/' after a separator.
 *
 * With -fsanitize=fuzzer (make fuzz FUZZ_TARGET=fuzz_scrub) this is a
 * libFuzzer target; without, main() replays files (tests/fuzz/replay.h).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "benchgate/provenance.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* As the scrubber: a byte that continues a path. */
static int path_byte(unsigned char c)
{
	return c >= 0x80 || isalnum(c) || (c && strchr("/._-~+@%#", c) != NULL);
}

/* Whether out still holds, at the start of a path that begins with '/', a
 * path with a home marker in it. */
static int home_left(const char *out)
{
	for (size_t i = 0; out[i]; i++) {
		size_t j;

		if (out[i] != '/' || (i > 0 && path_byte((unsigned char)out[i - 1])))
			continue;
		for (j = i; out[j] && path_byte((unsigned char)out[j]); j++)
			if (strncasecmp(out + j, "/home/", 6) == 0 || strncasecmp(out + j, "/users/", 7) == 0)
				return 1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char *copy = malloc(size + 1), *home, *text, *nl;
	struct bg_strbuf once = BG_STRBUF_INIT, twice = BG_STRBUF_INIT;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	nl = strchr(copy, '\n');
	home = nl ? copy : NULL;
	text = nl ? nl + 1 : copy;
	if (nl)
		*nl = '\0';
	bg_provenance_scrub_text(text, home, NULL, &once);
	bg_provenance_scrub_text(once.len ? once.buf : "", home, NULL, &twice);
	if (strcmp(once.len ? once.buf : "", twice.len ? twice.buf : "") != 0)
		abort();
	if (home_left(once.len ? once.buf : ""))
		abort();
	bg_strbuf_release(&once);
	bg_strbuf_release(&twice);
	free(copy);
	return 0;
}

#define FUZZ_NAME "fuzz_scrub"
#include "replay.h"
