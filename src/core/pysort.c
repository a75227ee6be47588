/*
 * pysort.c - CPython 3.11's list.sort (Objects/listobject.c: count_run,
 * binarysort, gallop_left/right, merge_lo/hi, merge_at, powersort's
 * found_new_run and merge_force_collapse), with the same comparisons in
 * the same order, on elements of any size. See pysort.h.
 */
#include "core/pysort.h"

#include "benchgate/status.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MIN_GALLOP 7
#define MAX_MERGE_PENDING 85

struct run {
	ptrdiff_t base, len;
	int power;
};

struct merge_state {
	char *base;
	size_t size;
	bg_py_lt lt;
	void *arg;
	ptrdiff_t listlen, min_gallop;
	char *tmp;        /* merge_lo/hi's copy of the smaller run */
	ptrdiff_t tmpcap; /* elements */
	char *pivot;      /* binarysort's element in hand */
	int n;
	struct run pending[MAX_MERGE_PENDING];
};

#define AT(ms, p, i) ((p) + (size_t)(i) * (ms)->size)
#define LT(ms, x, y) ((ms)->lt((x), (y), (ms)->arg))

static void getmem(struct merge_state *ms, ptrdiff_t need)
{
	if (need <= ms->tmpcap)
		return;
	free(ms->tmp);
	ms->tmp = bg_xmalloc((size_t)need * ms->size);
	ms->tmpcap = need;
}

static void reverse_slice(struct merge_state *ms, ptrdiff_t lo, ptrdiff_t hi)
{
	for (--hi; lo < hi; lo++, hi--) {
		memcpy(ms->pivot, AT(ms, ms->base, lo), ms->size);
		memcpy(AT(ms, ms->base, lo), AT(ms, ms->base, hi), ms->size);
		memcpy(AT(ms, ms->base, hi), ms->pivot, ms->size);
	}
}

/* The length of the run at lo (strictly descending, or not descending). */
static ptrdiff_t count_run(struct merge_state *ms, ptrdiff_t lo, ptrdiff_t hi, bool *descending)
{
	ptrdiff_t n;
	int k;

	*descending = false;
	if (++lo == hi)
		return 1;
	n = 2;
	if ((k = LT(ms, AT(ms, ms->base, lo), AT(ms, ms->base, lo - 1))) < 0)
		return -1;
	if (k) {
		*descending = true;
		for (lo = lo + 1; lo < hi; ++lo, ++n) {
			if ((k = LT(ms, AT(ms, ms->base, lo), AT(ms, ms->base, lo - 1))) < 0)
				return -1;
			if (!k)
				break;
		}
	} else {
		for (lo = lo + 1; lo < hi; ++lo, ++n) {
			if ((k = LT(ms, AT(ms, ms->base, lo), AT(ms, ms->base, lo - 1))) < 0)
				return -1;
			if (k)
				break;
		}
	}
	return n;
}

/* [lo, start) is sorted; inserts [start, hi) into it one at a time. */
static int binarysort(struct merge_state *ms, ptrdiff_t lo, ptrdiff_t hi, ptrdiff_t start)
{
	if (lo == start)
		++start;
	for (; start < hi; ++start) {
		ptrdiff_t l = lo, r = start, p;
		memcpy(ms->pivot, AT(ms, ms->base, r), ms->size);
		do {
			int k;
			p = l + ((r - l) >> 1);
			if ((k = LT(ms, ms->pivot, AT(ms, ms->base, p))) < 0)
				return -1;
			if (k)
				r = p;
			else
				l = p + 1;
		} while (l < r);
		memmove(AT(ms, ms->base, l + 1), AT(ms, ms->base, l), (size_t)(start - l) * ms->size);
		memcpy(AT(ms, ms->base, l), ms->pivot, ms->size);
	}
	return 0;
}

/* Where key goes in a[0..n), left of any equal ones; hint is where to start. */
static ptrdiff_t gallop_left(struct merge_state *ms, const char *key, const char *a, ptrdiff_t n, ptrdiff_t hint)
{
	ptrdiff_t ofs = 1, lastofs = 0, k;
	int c;

	if ((c = LT(ms, AT(ms, a, hint), key)) < 0)
		return -1;
	if (c) { /* a[hint] < key: gallop right */
		const ptrdiff_t maxofs = n - hint;
		while (ofs < maxofs) {
			if ((c = LT(ms, AT(ms, a, hint + ofs), key)) < 0)
				return -1;
			if (!c)
				break;
			lastofs = ofs;
			ofs = (ofs << 1) + 1;
		}
		if (ofs > maxofs)
			ofs = maxofs;
		lastofs += hint;
		ofs += hint;
	} else { /* key <= a[hint]: gallop left */
		const ptrdiff_t maxofs = hint + 1;
		while (ofs < maxofs) {
			if ((c = LT(ms, AT(ms, a, hint - ofs), key)) < 0)
				return -1;
			if (c)
				break;
			lastofs = ofs;
			ofs = (ofs << 1) + 1;
		}
		if (ofs > maxofs)
			ofs = maxofs;
		k = lastofs;
		lastofs = hint - ofs;
		ofs = hint - k;
	}
	++lastofs;
	while (lastofs < ofs) {
		ptrdiff_t m = lastofs + ((ofs - lastofs) >> 1);
		if ((c = LT(ms, AT(ms, a, m), key)) < 0)
			return -1;
		if (c)
			lastofs = m + 1;
		else
			ofs = m;
	}
	return ofs;
}

/* Where key goes in a[0..n), right of any equal ones. */
static ptrdiff_t gallop_right(struct merge_state *ms, const char *key, const char *a, ptrdiff_t n, ptrdiff_t hint)
{
	ptrdiff_t ofs = 1, lastofs = 0, k;
	int c;

	if ((c = LT(ms, key, AT(ms, a, hint))) < 0)
		return -1;
	if (c) { /* key < a[hint]: gallop left */
		const ptrdiff_t maxofs = hint + 1;
		while (ofs < maxofs) {
			if ((c = LT(ms, key, AT(ms, a, hint - ofs))) < 0)
				return -1;
			if (!c)
				break;
			lastofs = ofs;
			ofs = (ofs << 1) + 1;
		}
		if (ofs > maxofs)
			ofs = maxofs;
		k = lastofs;
		lastofs = hint - ofs;
		ofs = hint - k;
	} else { /* a[hint] <= key: gallop right */
		const ptrdiff_t maxofs = n - hint;
		while (ofs < maxofs) {
			if ((c = LT(ms, key, AT(ms, a, hint + ofs))) < 0)
				return -1;
			if (c)
				break;
			lastofs = ofs;
			ofs = (ofs << 1) + 1;
		}
		if (ofs > maxofs)
			ofs = maxofs;
		lastofs += hint;
		ofs += hint;
	}
	++lastofs;
	while (lastofs < ofs) {
		ptrdiff_t m = lastofs + ((ofs - lastofs) >> 1);
		if ((c = LT(ms, key, AT(ms, a, m))) < 0)
			return -1;
		if (c)
			ofs = m;
		else
			lastofs = m + 1;
	}
	return ofs;
}

/* Merges the runs at base[sa..sa+na) and base[sb..sb+nb) (sb = sa + na),
 * na <= nb, through a copy of the first. */
static int merge_lo(struct merge_state *ms, ptrdiff_t sa, ptrdiff_t na, ptrdiff_t sb, ptrdiff_t nb)
{
	const size_t sz = ms->size;
	ptrdiff_t dest = sa, ia = 0, k, min_gallop;
	char *a;
	int rc = -1;

	getmem(ms, na);
	a = ms->tmp;
	memcpy(a, AT(ms, ms->base, sa), (size_t)na * sz);
	memcpy(AT(ms, ms->base, dest++), AT(ms, ms->base, sb++), sz);
	if (--nb == 0)
		goto succeed;
	if (na == 1)
		goto copy_b;
	min_gallop = ms->min_gallop;
	for (;;) {
		ptrdiff_t acount = 0, bcount = 0;
		for (;;) {
			if ((k = LT(ms, AT(ms, ms->base, sb), AT(ms, a, ia))) < 0)
				goto fail;
			if (k) {
				memcpy(AT(ms, ms->base, dest++), AT(ms, ms->base, sb++), sz);
				++bcount;
				acount = 0;
				if (--nb == 0)
					goto succeed;
				if (bcount >= min_gallop)
					break;
			} else {
				memcpy(AT(ms, ms->base, dest++), AT(ms, a, ia++), sz);
				++acount;
				bcount = 0;
				if (--na == 1)
					goto copy_b;
				if (acount >= min_gallop)
					break;
			}
		}
		++min_gallop;
		do {
			min_gallop -= min_gallop > 1;
			ms->min_gallop = min_gallop;
			k = gallop_right(ms, AT(ms, ms->base, sb), AT(ms, a, ia), na, 0);
			acount = k;
			if (k) {
				if (k < 0)
					goto fail;
				memcpy(AT(ms, ms->base, dest), AT(ms, a, ia), (size_t)k * sz);
				dest += k;
				ia += k;
				na -= k;
				if (na == 1)
					goto copy_b;
				if (na == 0) /* only with an inconsistent order */
					goto succeed;
			}
			memcpy(AT(ms, ms->base, dest++), AT(ms, ms->base, sb++), sz);
			if (--nb == 0)
				goto succeed;
			k = gallop_left(ms, AT(ms, a, ia), AT(ms, ms->base, sb), nb, 0);
			bcount = k;
			if (k) {
				if (k < 0)
					goto fail;
				memmove(AT(ms, ms->base, dest), AT(ms, ms->base, sb), (size_t)k * sz);
				dest += k;
				sb += k;
				nb -= k;
				if (nb == 0)
					goto succeed;
			}
			memcpy(AT(ms, ms->base, dest++), AT(ms, a, ia++), sz);
			if (--na == 1)
				goto copy_b;
		} while (acount >= MIN_GALLOP || bcount >= MIN_GALLOP);
		++min_gallop; /* a penalty for leaving galloping */
		ms->min_gallop = min_gallop;
	}
succeed:
	rc = 0;
fail:
	if (na)
		memcpy(AT(ms, ms->base, dest), AT(ms, a, ia), (size_t)na * sz);
	return rc;
copy_b: /* na == 1: the last of a goes after the rest of b */
	memmove(AT(ms, ms->base, dest), AT(ms, ms->base, sb), (size_t)nb * sz);
	memcpy(AT(ms, ms->base, dest + nb), AT(ms, a, ia), sz);
	return 0;
}

/* The same from the right, through a copy of the second run (na >= nb). */
static int merge_hi(struct merge_state *ms, ptrdiff_t sa, ptrdiff_t na, ptrdiff_t sb, ptrdiff_t nb)
{
	const size_t sz = ms->size;
	ptrdiff_t dest = sb + nb - 1, ia = sa + na - 1, ib = nb - 1, k, min_gallop;
	char *b;
	int rc = -1;

	getmem(ms, nb);
	b = ms->tmp;
	memcpy(b, AT(ms, ms->base, sb), (size_t)nb * sz);
	memcpy(AT(ms, ms->base, dest--), AT(ms, ms->base, ia--), sz);
	if (--na == 0)
		goto succeed;
	if (nb == 1)
		goto copy_a;
	min_gallop = ms->min_gallop;
	for (;;) {
		ptrdiff_t acount = 0, bcount = 0;
		for (;;) {
			if ((k = LT(ms, AT(ms, b, ib), AT(ms, ms->base, ia))) < 0)
				goto fail;
			if (k) {
				memcpy(AT(ms, ms->base, dest--), AT(ms, ms->base, ia--), sz);
				++acount;
				bcount = 0;
				if (--na == 0)
					goto succeed;
				if (acount >= min_gallop)
					break;
			} else {
				memcpy(AT(ms, ms->base, dest--), AT(ms, b, ib--), sz);
				++bcount;
				acount = 0;
				if (--nb == 1)
					goto copy_a;
				if (bcount >= min_gallop)
					break;
			}
		}
		++min_gallop;
		do {
			min_gallop -= min_gallop > 1;
			ms->min_gallop = min_gallop;
			k = gallop_right(ms, AT(ms, b, ib), AT(ms, ms->base, sa), na, na - 1);
			if (k < 0)
				goto fail;
			k = na - k;
			acount = k;
			if (k) {
				dest -= k;
				ia -= k;
				memmove(AT(ms, ms->base, dest + 1), AT(ms, ms->base, ia + 1), (size_t)k * sz);
				na -= k;
				if (na == 0)
					goto succeed;
			}
			memcpy(AT(ms, ms->base, dest--), AT(ms, b, ib--), sz);
			if (--nb == 1)
				goto copy_a;
			k = gallop_left(ms, AT(ms, ms->base, ia), b, nb, nb - 1);
			if (k < 0)
				goto fail;
			k = nb - k;
			bcount = k;
			if (k) {
				dest -= k;
				ib -= k;
				memcpy(AT(ms, ms->base, dest + 1), AT(ms, b, ib + 1), (size_t)k * sz);
				nb -= k;
				if (nb == 1)
					goto copy_a;
				if (nb == 0) /* only with an inconsistent order */
					goto succeed;
			}
			memcpy(AT(ms, ms->base, dest--), AT(ms, ms->base, ia--), sz);
			if (--na == 0)
				goto succeed;
		} while (acount >= MIN_GALLOP || bcount >= MIN_GALLOP);
		++min_gallop;
		ms->min_gallop = min_gallop;
	}
succeed:
	rc = 0;
fail:
	if (nb)
		memcpy(AT(ms, ms->base, dest - (nb - 1)), b, (size_t)nb * sz);
	return rc;
copy_a: /* nb == 1: the first of b goes before the rest of a */
	memmove(AT(ms, ms->base, dest + 1 - na), AT(ms, ms->base, ia + 1 - na), (size_t)na * sz);
	dest -= na;
	memcpy(AT(ms, ms->base, dest), AT(ms, b, ib), sz);
	return 0;
}

/* Merges the pending runs i and i + 1. */
static int merge_at(struct merge_state *ms, int i)
{
	ptrdiff_t sa = ms->pending[i].base, na = ms->pending[i].len;
	ptrdiff_t sb = ms->pending[i + 1].base, nb = ms->pending[i + 1].len, k;

	ms->pending[i].len = na + nb;
	if (i == ms->n - 3)
		ms->pending[i + 1] = ms->pending[i + 2];
	--ms->n;
	/* where b's first goes in a: what precedes it is in place */
	if ((k = gallop_right(ms, AT(ms, ms->base, sb), AT(ms, ms->base, sa), na, 0)) < 0)
		return -1;
	sa += k;
	na -= k;
	if (na == 0)
		return 0;
	/* where a's last goes in b: what follows it is in place */
	nb = gallop_left(ms, AT(ms, ms->base, sa + na - 1), AT(ms, ms->base, sb), nb, nb - 1);
	if (nb <= 0)
		return (int)nb;
	return na <= nb ? merge_lo(ms, sa, na, sb, nb) : merge_hi(ms, sa, na, sb, nb);
}

/* powersort's node power of two adjacent runs in a list of n elements */
static int powerloop(ptrdiff_t s1, ptrdiff_t n1, ptrdiff_t n2, ptrdiff_t n)
{
	int result = 0;
	ptrdiff_t a = 2 * s1 + n1, b = a + n1 + n2;

	for (;;) {
		++result;
		if (a >= n) {
			a -= n;
			b -= n;
		} else if (b >= n) {
			break;
		}
		a <<= 1;
		b <<= 1;
	}
	return result;
}

/* Merges what the new run of n2 elements (not yet pushed) calls for. */
static int found_new_run(struct merge_state *ms, ptrdiff_t n2)
{
	if (ms->n) {
		struct run *p = ms->pending;
		int power = powerloop(p[ms->n - 1].base, p[ms->n - 1].len, n2, ms->listlen);
		while (ms->n > 1 && p[ms->n - 2].power > power)
			if (merge_at(ms, ms->n - 2) < 0)
				return -1;
		p[ms->n - 1].power = power;
	}
	return 0;
}

static int merge_force_collapse(struct merge_state *ms)
{
	while (ms->n > 1) {
		int n = ms->n - 2;
		if (n > 0 && ms->pending[n - 1].len < ms->pending[n + 1].len)
			--n;
		if (merge_at(ms, n) < 0)
			return -1;
	}
	return 0;
}

static ptrdiff_t compute_minrun(ptrdiff_t n)
{
	ptrdiff_t r = 0;

	while (n >= 64) {
		r |= n & 1;
		n >>= 1;
	}
	return n + r;
}

int bg_py_sort(void *base, size_t n, size_t size, bg_py_lt lt, void *arg)
{
	struct merge_state ms;
	ptrdiff_t lo = 0, nremaining = (ptrdiff_t)n, minrun;
	int rc = -1;

	if (n < 2)
		return 0;
	memset(&ms, 0, sizeof(ms));
	ms.base = base;
	ms.size = size;
	ms.lt = lt;
	ms.arg = arg;
	ms.listlen = (ptrdiff_t)n;
	ms.min_gallop = MIN_GALLOP;
	ms.pivot = bg_xmalloc(size);
	minrun = compute_minrun(nremaining);
	do {
		bool descending;
		ptrdiff_t r = count_run(&ms, lo, lo + nremaining, &descending);
		if (r < 0)
			goto done;
		if (descending)
			reverse_slice(&ms, lo, lo + r);
		if (r < minrun) {
			ptrdiff_t force = nremaining <= minrun ? nremaining : minrun;
			if (binarysort(&ms, lo, lo + force, lo + r) < 0)
				goto done;
			r = force;
		}
		if (found_new_run(&ms, r) < 0)
			goto done;
		ms.pending[ms.n].base = lo;
		ms.pending[ms.n].len = r;
		++ms.n;
		lo += r;
		nremaining -= r;
	} while (nremaining);
	rc = merge_force_collapse(&ms);
done:
	free(ms.pivot);
	free(ms.tmp);
	return rc;
}
