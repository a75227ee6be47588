/*
 * keysort.c - registry objects sorted by a tuple of their fields as
 * Python's sorted(key=...) does, with a fast path for the usual registry
 * (every key column of one type, string or integer) and the names of two
 * objects that cannot be ordered when Python would raise. See keysort.h.
 */
#include "registry/keysort.h"
#include "core/pysort.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int g_nkeys; /* cmp_fast's */

/* The slow path's sort: the key count, and the pair whose comparison raised. */
struct slow_sort {
	int nkeys;
	struct bg_keysort_clash clash;
};

/* Python's < on two key tuples (unsafe_tuple_compare): at the first key
 * where the items are not the same, that key's <; -1 where it raises. */
static int lt_items(const void *a, const void *b, void *arg)
{
	const struct bg_keysort_item *x = a, *y = b;
	struct slow_sort *s = arg;

	for (int i = 0; i < s->nkeys; i++) {
		const struct bg_value *p = x->keys[i], *q = y->keys[i];
		int lt;
		if (p && q && p->type == BG_VSTRING && q->type == BG_VSTRING) { /* the common case, inline */
			int c = strcmp(p->u.s, q->u.s);
			if (c)
				return c < 0;
			continue;
		}
		if (bg_value_py_same(p, q))
			continue;
		if ((lt = bg_value_py_lt(p, q)) < 0) {
			s->clash.key = i;
			s->clash.obj[0] = x->obj;
			s->clash.obj[1] = y->obj;
		}
		return lt;
	}
	return 0;
}

/*
 * The fast path, for key columns of one type each (the usual registry): a
 * string column with few distinct values is replaced by the rank of each
 * value among them, an integer column by its value, and any other string
 * column is compared by strcmp on the text (code-point order, as Python).
 * The order is the one cmp_items gives; no comparison can raise.
 */
enum { K_RANK, K_INT, K_STR, K_SKIP };
struct fast_item {
	uint64_t key[BG_KEYSORT_MAX]; /* rank, or integer biased to sort unsigned */
	const char *str[BG_KEYSORT_MAX];
	size_t pos; /* position in the items array */
};
static int g_kind[BG_KEYSORT_MAX];

static int cmp_fast(const void *a, const void *b)
{
	const struct fast_item *x = a, *y = b;

	for (int i = 0; i < g_nkeys; i++) {
		if (g_kind[i] == K_SKIP)
			continue;
		if (g_kind[i] == K_STR) {
			int c = strcmp(x->str[i], y->str[i]);
			if (c)
				return c;
		} else if (x->key[i] != y->key[i]) {
			return x->key[i] < y->key[i] ? -1 : 1;
		}
	}
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Ranks of the strings of column k when they are few; false when they are many. */
static bool rank_column(struct bg_keysort_item *items, struct fast_item *fast, size_t n, int k)
{
	size_t cap = 64, nu = 0, limit = n / 8 + 16;
	struct slot {
		const struct bg_value *v;
		uint32_t hash;
		uint32_t uid;
	} *tab;
	const char **uniq;
	uint32_t *rank_of, *uid_of;
	bool ok = true;

	while (cap < 4 * limit)
		cap *= 2;
	tab = bg_xcalloc(cap, sizeof(*tab));
	uniq = bg_xmalloc(limit * sizeof(*uniq));
	uid_of = bg_xmalloc((n + 1) * sizeof(*uid_of));
	for (size_t i = 0; i < n && ok; i++) {
		const struct bg_value *v = items[i].keys[k];
		const unsigned char *p = (const unsigned char *)bg_value_str(v);
		uint32_t h = 2166136261u, at;

		for (size_t j = 0; j < bg_value_len(v); j++)
			h = (h ^ p[j]) * 16777619u;
		for (at = h & (uint32_t)(cap - 1); tab[at].v; at = (at + 1) & (uint32_t)(cap - 1))
			if (tab[at].hash == h && tab[at].v->n == v->n && memcmp(tab[at].v->u.s, v->u.s, v->n) == 0)
				break;
		if (!tab[at].v) {
			if (nu == limit) {
				ok = false;
				break;
			}
			tab[at].v = v;
			tab[at].hash = h;
			tab[at].uid = (uint32_t)nu;
			uniq[nu++] = v->u.s;
		}
		uid_of[i] = tab[at].uid;
	}
	if (ok) {
		/* uid -> rank: sort the distinct strings, then find each one's place */
		const char **sorted = bg_xmalloc((nu + 1) * sizeof(*sorted));
		memcpy(sorted, uniq, nu * sizeof(*sorted));
		qsort(sorted, nu, sizeof(*sorted), cmp_cstr);
		rank_of = bg_xmalloc((nu + 1) * sizeof(*rank_of));
		for (size_t u = 0; u < nu; u++) {
			const char **hit = bsearch(&uniq[u], sorted, nu, sizeof(*sorted), cmp_cstr);
			rank_of[u] = (uint32_t)(hit - sorted);
		}
		for (size_t i = 0; i < n; i++)
			fast[i].key[k] = rank_of[uid_of[i]];
		free(rank_of);
		free(sorted);
	}
	free(uid_of);
	free(uniq);
	free(tab);
	return ok;
}

/* The fast path when every key column has one type (string or integer). */
static bool sort_fast(struct bg_keysort_item *items, size_t n, int nkeys)
{
	struct fast_item *fast;
	struct bg_keysort_item *sorted;

	for (int k = 0; k < nkeys; k++) {
		const struct bg_value *first = n ? items[0].keys[k] : NULL;
		int t = first ? first->type : BG_VSTRING;
		if (t != BG_VSTRING && t != BG_VINT)
			return false;
		for (size_t i = 0; i < n; i++)
			if (!items[i].keys[k] || items[i].keys[k]->type != t)
				return false;
		g_kind[k] = t == BG_VINT ? K_INT : K_RANK;
	}
	fast = bg_xcalloc(n + 1, sizeof(*fast));
	for (size_t i = 0; i < n; i++)
		fast[i].pos = i;
	for (int k = 0; k < nkeys; k++) {
		if (g_kind[k] == K_INT) {
			for (size_t i = 0; i < n; i++)
				fast[i].key[k] = (uint64_t)items[i].keys[k]->u.i ^ ((uint64_t)1 << 63);
		} else if (!rank_column(items, fast, n, k)) {
			size_t i = 1;
			/* a last column already in order adds nothing to the position tie-break
			 * (measurement rows come sorted by id; gates often are) */
			if (k == nkeys - 1)
				while (i < n && strcmp(items[i - 1].keys[k]->u.s, items[i].keys[k]->u.s) <= 0)
					i++;
			if (k == nkeys - 1 && i >= n) {
				g_kind[k] = K_SKIP;
				continue;
			}
			g_kind[k] = K_STR;
			for (i = 0; i < n; i++)
				fast[i].str[k] = items[i].keys[k]->u.s;
		}
	}
	g_nkeys = nkeys;
	qsort(fast, n, sizeof(*fast), cmp_fast);
	sorted = bg_xmalloc((n + 1) * sizeof(*sorted));
	for (size_t i = 0; i < n; i++)
		sorted[i] = items[fast[i].pos];
	memcpy(items, sorted, n * sizeof(*items));
	free(sorted);
	free(fast);
	return true;
}

/* The pair bg_keysort names (see keysort.h); false when every key column
 * holds one kind (lists that differ inside, two dicts, two Nones). */
static bool find_clash(const struct bg_keysort_item *items, size_t n, int nkeys,
		       struct bg_keysort_clash *clash)
{
	const struct bg_keysort_item *first = NULL;

	for (size_t i = 0; i < n; i++)
		if (!first || items[i].index < first->index)
			first = &items[i];
	for (int k = 0; first && k < nkeys; k++) {
		const struct bg_keysort_item *other = NULL;
		for (size_t i = 0; i < n; i++)
			if (bg_value_order_rank(items[i].keys[k]) != bg_value_order_rank(first->keys[k]) &&
			    (!other || items[i].index < other->index))
				other = &items[i];
		if (other) {
			clash->key = k;
			clash->obj[0] = first->obj;
			clash->obj[1] = other->obj;
			return true;
		}
	}
	return false;
}

bool bg_keysort(struct bg_keysort_item *items, size_t n, int nkeys, struct bg_keysort_clash *clash)
{
	struct slow_sort s = {nkeys, {0, {NULL, NULL}}};

	if (sort_fast(items, n, nkeys))
		return true;
	/* CPython's own sort: with a NaN among the keys the order is not
	 * consistent, and only the same comparisons leave the same order */
	if (bg_py_sort(items, n, sizeof(*items), lt_items, &s) == 0)
		return true;
	if (clash && !find_clash(items, n, nkeys, clash))
		*clash = s.clash; /* the pair whose comparison raised */
	return false;
}

void bg_keysort_clash_message(struct bg_strbuf *out, const char *kind, const char *field,
			      const struct bg_keysort_clash *clash)
{
	struct bg_strbuf id[2] = {BG_STRBUF_INIT, BG_STRBUF_INIT}, v[2] = {BG_STRBUF_INIT, BG_STRBUF_INIT};

	for (int i = 0; i < 2; i++) {
		bg_value_py_str(&id[i], bg_value_get(clash->obj[i], "id"));
		bg_value_py_repr(&v[i], bg_value_get(clash->obj[i], field));
	}
	if (strcmp(field, "id") == 0)
		bg_strbuf_addf(out, "%ss cannot be ordered by 'id': the ids %s and %s do not compare; "
				    "give every %s a string id",
			       kind, v[0].buf, v[1].buf, kind);
	else
		bg_strbuf_addf(out, "%ss cannot be ordered by '%s': %s '%s' has %s %s and %s '%s' has %s %s, "
				    "which do not compare; give '%s' the same type in every %s",
			       kind, field, kind, id[0].buf, field, v[0].buf, kind, id[1].buf, field, v[1].buf,
			       field, kind);
	for (int i = 0; i < 2; i++) {
		bg_strbuf_release(&id[i]);
		bg_strbuf_release(&v[i]);
	}
}
