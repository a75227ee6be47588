/*
 * near.c - the names a mistyped word is likely a slip for: verbs, options,
 * gate ids ("did you mean 'validate'?"). Builds text only; the callers say
 * it in their messages.
 */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

/* Longest word and name compared: anything longer is no slip for another. */
enum { NEAR_MAX = 255 };

/* An ASCII letter in lower case; any other byte as it is. */
static char fold(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/*
 * The optimal string alignment distance between a[0..n) and b[0..m)
 * (insertions, deletions, substitutions and swaps of two neighbours, each
 * 1; ASCII letters compared without regard to case) when it is at most
 * limit, else limit + 1. n, m <= NEAR_MAX. Three rows of the table, and
 * only the cells within limit of its diagonal.
 */
static size_t distance_within(const char *a, size_t n, const char *b, size_t m, size_t limit)
{
	size_t rows[3][NEAR_MAX + 1], far = limit + 1;
	size_t *two = rows[0], *one = rows[1], *cur = rows[2];

	if ((n > m ? n - m : m - n) > limit)
		return far;
	for (size_t j = 0; j <= m; j++)
		one[j] = j <= limit ? j : far;
	for (size_t i = 1; i <= n; i++) {
		size_t lo = i > limit ? i - limit : 1, hi = i + limit < m ? i + limit : m, least = far;
		size_t *t;

		cur[0] = i <= limit ? i : far;
		if (lo > 1)
			cur[lo - 1] = far;
		for (size_t j = lo; j <= hi; j++) {
			size_t best = one[j - 1] + (fold(a[i - 1]) != fold(b[j - 1]));

			if (one[j] + 1 < best)
				best = one[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) && fold(a[i - 2]) == fold(b[j - 1]) &&
			    two[j - 2] + 1 < best)
				best = two[j - 2] + 1;
			cur[j] = best < far ? best : far;
			if (cur[j] < least)
				least = cur[j];
		}
		if (hi < m)
			cur[hi + 1] = far;
		if (least >= far && cur[0] >= far)
			return far; /* every path is already too long */
		t = two;
		two = one;
		one = cur;
		cur = t;
	}
	return one[m];
}

size_t bg_cli_add_near(struct bg_strbuf *out, const char *word, size_t len, const char *const *names, size_t n,
		       unsigned flags, const char *shown_prefix)
{
	bool beginnings = (flags & BG_CLI_NEAR_BEGINNINGS) != 0;
	size_t found = 0, limit = len <= 4 ? 1 : 2, score[3];
	const char *pick[3];

	if (len == 0 || len > NEAR_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		size_t m = strlen(names[i]), d, k;

		if (m > NEAR_MAX)
			continue;
		d = distance_within(word, len, names[i], m, limit);
		if (d > limit) {
			/* a beginning: the rest of the name is what is missing */
			if (!beginnings || len < 3 || len >= m || strncmp(names[i], word, len) != 0)
				continue;
			d = m - len;
		}
		/* among the three nearest so far, after those as near (the order of names) */
		for (k = found; k > 0 && score[k - 1] > d; k--)
			;
		if (k == 3)
			continue;
		if (found < 3)
			found++;
		memmove(pick + k + 1, pick + k, (found - 1 - k) * sizeof(*pick));
		memmove(score + k + 1, score + k, (found - 1 - k) * sizeof(*score));
		pick[k] = names[i];
		score[k] = d;
	}
	while ((flags & BG_CLI_NEAR_NEAREST) && found > 1 && score[found - 1] > score[0])
		found--;
	for (size_t k = 0; k < found; k++)
		bg_strbuf_addf(out, "%s'%s%s'", k == 0 ? " (did you mean " : k + 1 == found ? " or " : ", ", shown_prefix,
			       pick[k]);
	if (found)
		bg_strbuf_adds(out, "?)");
	return found;
}

size_t bg_cli_add_near_gate(struct bg_strbuf *out, const struct bg_registry *reg, const char *word)
{
	size_t i, n = 0, found;
	struct bg_value *gate;
	const char **ids = bg_xcalloc(bg_value_size(reg->gates) + 1, sizeof(*ids));

	BG_VALUE_ARRAY_FOREACH(reg->gates, i, gate) {
		struct bg_value *id = bg_value_get(gate, "id");
		if (bg_value_is_string(id))
			ids[n++] = bg_value_str(id);
	}
	found = bg_cli_add_near(out, word, strlen(word), ids, n, BG_CLI_NEAR_NEAREST, "");
	free(ids);
	return found;
}

void bg_cli_add_unknown_gate(struct bg_strbuf *out, const struct bg_registry *reg, const char *id)
{
	bg_strbuf_addf(out, "Unknown benchmark gate: %s", id);
	bg_cli_add_near_gate(out, reg, id);
	bg_strbuf_addch(out, '\n');
}

/*
 * For a gate id without stored sessions: BG_OK when the registry has it,
 * unknown when it has not, the registry's status when it cannot be read;
 * msg receives the message (cli.h). The registry is read only here: the
 * store's verbs read a gate that has sessions without one.
 */
int bg_cli_unknown_stored_gate(const struct bg_cli *cli, const struct bg_config *cfg, const char *id, int unknown,
			       struct bg_strbuf *msg)
{
	struct bg_registry reg;
	struct bg_ctx ctx;
	int rc;

	memset(&reg, 0, sizeof(reg));
	bg_ctx_init(&ctx);
	rc = bg_registry_load(&reg, cfg, &ctx);
	if (rc) {
		bg_strbuf_adds(msg, bg_ctx_message(&ctx));
		/* not a project at all: no registry to fix */
		if (!bg_cli_add_project_hint(msg, cli, rc, cfg))
			/* a gate never run and a mistyped id read the same without it */
			bg_strbuf_addf(msg, "; no session is stored for gate '%s', and without the registry it "
				       "cannot be told whether that is a gate never run or a mistyped id: fix the "
				       "registry ('benchgate validate' says what is wrong) and run this again", id);
	} else if (!bg_registry_find_gate(&reg, id)) {
		rc = unknown;
		bg_strbuf_addf(msg, "unknown gate '%s': no session is stored for it and the registry has no such gate",
			       id);
		bg_cli_add_near_gate(msg, &reg, id);
		bg_strbuf_adds(msg, "; see 'benchgate list'");
	}
	bg_registry_release(&reg);
	bg_ctx_release(&ctx);
	return rc;
}
