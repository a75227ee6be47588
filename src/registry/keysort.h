/*
 * keysort.h - sorting registry objects by a tuple of their fields as
 * Python's sorted(key=lambda x: (f1, f2, ...)) does (stable; strings by code
 * point; numbers of every kind together; a None, a dict, or two kinds that
 * do not compare raise there; with a NaN among the keys, which is neither
 * below nor above anything, the order CPython's own sort leaves). Registry-internal: render (the coverage
 * document's tables) and query (list, next) share it, so that they order
 * and refuse alike. Not thread-safe (qsort's comparator reads file state).
 */
#ifndef BG_REGISTRY_KEYSORT_H
#define BG_REGISTRY_KEYSORT_H

#include "benchgate/strbuf.h"
#include "benchgate/value.h"

#include <stdbool.h>
#include <stddef.h>

#define BG_KEYSORT_MAX 5

/* One object to sort: its keys (borrowed; NULL compares as None) and its
 * position before the sort, which breaks ties (stability). */
struct bg_keysort_item {
	struct bg_value *obj;
	struct bg_value *keys[BG_KEYSORT_MAX];
	size_t index;
};

/* Two objects whose key number key Python's sort cannot order. */
struct bg_keysort_clash {
	int key;
	const struct bg_value *obj[2];
};

/*
 * Sorts items[0..n) by keys[0..nkeys) (nkeys <= BG_KEYSORT_MAX). False
 * when Python's sorted would raise; then the order is unspecified and
 * *clash (when not NULL) names two objects that cannot be ordered: at the
 * first key where the items hold values of two kinds that never compare,
 * the first item (by index) and the first of another kind, so that the
 * pair does not depend on the order the sort compared in.
 */
bool bg_keysort(struct bg_keysort_item *items, size_t n, int nkeys, struct bg_keysort_clash *clash);

/*
 * Appends "KINDs cannot be ordered by 'FIELD': KIND 'A' has FIELD X and
 * KIND 'B' has FIELD Y, which do not compare; give 'FIELD' the same type in
 * every KIND" (for field "id": the two ids, and a string id asked for).
 */
void bg_keysort_clash_message(struct bg_strbuf *out, const char *kind, const char *field,
			      const struct bg_keysort_clash *clash);

#endif
