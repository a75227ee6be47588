/*
 * value.c - the arena JSON DOM: the arena, construction, lookup and the
 * objects' hash index. The parser is value_parse.c; dump, str, repr and
 * comparisons as CPython does them are value_py.c. See benchgate/value.h
 * for the contract.
 */
#include "core/value_internal.h"
#include "benchgate/fsutil.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

/* ------------------------------------------------------------------ arena */

#define ARENA_MIN_BLOCK ((size_t)1 << 20)
#define ARENA_MAX_BLOCK ((size_t)64 << 20)
#define MAP_MIN ((size_t)2 << 20) /* blocks this big are mapped */


struct bg_arena *bg_arena_new(void)
{
	return bg_xcalloc(1, sizeof(struct bg_arena));
}

void bg_arena_free(struct bg_arena *a)
{
	struct arena_block *b, *next;

	if (!a)
		return;
	for (b = a->head; b; b = next) {
		next = b->next;
		if (b->mapped)
			munmap(b, b->mapped);
		else
			free(b);
	}
	free(a);
}

/* Extends b's ready bytes to hold at least need more, by half of what it
 * has used, within bounds: the pages are faulted in at once (bg_prefault), a
 * small arena's 64 KiB at a time, a big one's up to 8 MiB, so that at most a
 * third of what it prepares goes unused. */
#define READY_MIN ((size_t)64 << 10)
#define READY_MAX ((size_t)8 << 20)
static void ready_more(struct arena_block *b, size_t need)
{
	size_t step = b->used / 2, to;

	if (step < READY_MIN)
		step = READY_MIN;
	if (step > READY_MAX)
		step = READY_MAX;
	if (step < need)
		step = need;
	to = b->cap - b->size < step ? b->cap : b->size + step;
	bg_prefault(b->data + b->size, to - b->size);
	b->size = to;
}

size_t bg_buddy_free_blocks(const char *text, unsigned order)
{
	size_t total = 0;

	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n'), *zone, *p;

		if (!end)
			end = line + strlen(line);
		zone = memmem(line, (size_t)(end - line), " zone ", 6);
		if (zone) {
			p = zone + 6;
			while (p < end && *p == ' ')
				p++;
			while (p < end && *p != ' ') /* the zone's name */
				p++;
			for (unsigned k = 0; k < 64; k++) {
				size_t n = 0;

				while (p < end && *p == ' ')
					p++;
				if (p == end || !isdigit((unsigned char)*p))
					break;
				if (k < order) { /* a column of smaller blocks: not read */
					while (p < end && isdigit((unsigned char)*p))
						p++;
					continue;
				}
				for (; p < end && isdigit((unsigned char)*p); p++) {
					if (n > (SIZE_MAX - 9) / 10)
						return SIZE_MAX;
					n = n * 10 + (size_t)(*p - '0');
				}
				if (!n)
					continue;
				if (n > (SIZE_MAX - total) >> (k - order)) /* k < 64 */
					return SIZE_MAX;
				total += n << (k - order);
			}
		}
		line = *end ? end + 1 : end;
	}
	return total;
}

#ifdef MADV_HUGEPAGE
/*
 * Whether the kernel has count free blocks of MAP_MIN at hand, so that
 * faulting them in as huge pages waits on no compaction: with the usual
 * defrag=madvise an advised region's fault compacts memory when none is
 * free, which on a fragmented machine costs more than the huge pages save.
 */
static bool huge_blocks_free(size_t count)
{
	struct bg_strbuf text = BG_STRBUF_INIT;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned order = 0;
	bool enough;

	if (page == 0 || page >= MAP_MIN || MAP_MIN % page)
		return false;
	while (((size_t)1 << order) * page < MAP_MIN)
		order++;
	if (((size_t)1 << order) * page != MAP_MIN)
		return false;
	enough = bg_file_read("/proc/buddyinfo", NULL, &text, NULL) == BG_OK &&
		 bg_buddy_free_blocks(text.buf, order) >= count;
	bg_strbuf_release(&text);
	return enough;
}
#endif

/*
 * whole bytes (a multiple of MAP_MIN) of fresh memory on a MAP_MIN boundary,
 * or NULL; marked for transparent huge pages when the kernel has free blocks
 * for them (huge_blocks_free). A kernel from 6.7 places such a mapping on
 * the boundary itself; an older one gets MAP_MIN more and the ends cut off.
 * With 2 MiB pages, validate and render at 10,000 and 100,000 gates took
 * 5-58% less time (a third in the median) on a paravirtualised guest, where
 * 4 KiB page faults and TLB misses are dear (docs/performance.md).
 */
static void *map_aligned(size_t whole)
{
	const int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE | MAP_ANONYMOUS;
	char *p = mmap(NULL, whole, prot, flags, -1, 0);
	uintptr_t at;

	if (p == MAP_FAILED)
		return NULL;
	at = (uintptr_t)p;
	if (at & (MAP_MIN - 1)) {
		size_t head;
		munmap(p, whole);
		p = mmap(NULL, whole + MAP_MIN, prot, flags, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		at = ((uintptr_t)p + MAP_MIN - 1) & ~(uintptr_t)(MAP_MIN - 1);
		head = (size_t)(at - (uintptr_t)p);
		if (head)
			munmap(p, head);
		if (MAP_MIN - head)
			munmap((char *)at + whole, MAP_MIN - head);
		p = (char *)at;
	}
#ifdef MADV_HUGEPAGE
	if (huge_blocks_free(whole / MAP_MIN))
		(void)madvise(p, whole, MADV_HUGEPAGE); /* advice: without it, 4 KiB pages */
#endif
	return p;
}

/*
 * A block of at least size bytes, none of them ready yet. Big blocks are
 * mapped directly (map_aligned), so that freeing the arena returns them to
 * the system at once.
 */
static struct arena_block *new_block(struct bg_arena *a, size_t size)
{
	struct arena_block *b = NULL;
	size_t whole = sizeof(*b) + size;

	if (whole >= MAP_MIN) {
		whole = (whole + MAP_MIN - 1) & ~(MAP_MIN - 1);
		b = map_aligned(whole);
		if (b) {
			b->mapped = whole;
			b->cap = whole - sizeof(*b);
		}
	}
	if (!b) {
		b = bg_xmalloc_lazy(sizeof(*b) + size);
		b->mapped = 0;
		b->cap = size;
	}
	b->size = 0;
	b->used = 0;
	a->total += b->cap;
	return b;
}

void *bg_arena_alloc(struct bg_arena *a, size_t size)
{
	return arena_alloc(a, size);
}

void *bg_arena_alloc_slow(struct bg_arena *a, size_t size)
{
	struct arena_block *b = a->head;
	void *p;

	size = (size + 7) & ~(size_t)7;
	if (size == 0)
		size = 8;
	if (!b || b->cap - b->used < size) {
		/* blocks grow with the arena: half of what it holds, within bounds */
		size_t want = a->total / 2;
		if (want < ARENA_MIN_BLOCK)
			want = ARENA_MIN_BLOCK;
		if (want > ARENA_MAX_BLOCK)
			want = ARENA_MAX_BLOCK;
		if (size > want / 4) {
			/* a big request gets its own block, behind the current one,
			 * all of it ready: it is filled at once */
			struct arena_block *big = new_block(a, size);
			if (b) {
				big->next = b->next;
				b->next = big;
			} else {
				big->next = NULL;
				a->head = big;
			}
			bg_prefault(big->data, size);
			big->size = big->used = size;
			return big->data;
		}
		b = new_block(a, want);
		b->next = a->head;
		a->head = b;
	}
	if (b->size - b->used < size)
		ready_more(b, b->used + size - b->size);
	p = b->data + b->used;
	b->used += size;
	return p;
}

char *bg_arena_strndup(struct bg_arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

size_t bg_arena_bytes(const struct bg_arena *a)
{
	return a->total;
}

/* --------------------------------------------------------- values, lookup */

struct bg_value bg_value_null_v = {BG_VNULL, 0, 0, 0, {0}};
struct bg_value bg_value_true_v = {BG_VTRUE, 0, 0, 0, {0}};
struct bg_value bg_value_false_v = {BG_VFALSE, 0, 0, 0, {0}};

struct bg_value *bg_value_null(void) { return &bg_value_null_v; }
struct bg_value *bg_value_true(void) { return &bg_value_true_v; }
struct bg_value *bg_value_false(void) { return &bg_value_false_v; }

struct bg_value *bg_value_new_int(struct bg_arena *a, int64_t i)
{
	struct bg_value *v = new_value(a, BG_VINT);
	v->u.i = i;
	return v;
}

struct bg_value *bg_value_new_real(struct bg_arena *a, double d)
{
	struct bg_value *v = new_value(a, BG_VREAL);
	v->u.d = d;
	return v;
}

struct bg_value *bg_value_new_int_text(struct bg_arena *a, const char *digits)
{
	struct bg_value *v;
	long long i;
	char *end;

	errno = 0;
	i = strtoll(digits, &end, 10);
	if (errno == 0 && !*end)
		return bg_value_new_int(a, i);
	v = new_value(a, BG_VBIGINT);
	v->n = (uint32_t)strlen(digits);
	v->u.s = bg_arena_strndup(a, digits, v->n);
	return v;
}

struct bg_value *bg_value_new_stringn(struct bg_arena *a, const char *s, size_t n)
{
	struct bg_value *v = new_value(a, BG_VSTRING);
	v->u.s = bg_arena_strndup(a, s, n);
	v->n = (uint32_t)n;
	return v;
}

struct bg_value *bg_value_new_string_shared(struct bg_arena *a, const char *s, size_t n)
{
	struct bg_value *v = new_value(a, BG_VSTRING);
	v->u.s = s;
	v->n = (uint32_t)n;
	return v;
}

struct bg_value *bg_value_new_string(struct bg_arena *a, const char *s)
{
	return bg_value_new_stringn(a, s, strlen(s));
}

/*
 * Growable arrays (built, not parsed) keep their capacity in the 8 bytes
 * just before their storage; parsed ones are exactly full (cap == n).
 */
static void *alloc_storage(struct bg_arena *a, size_t cap, size_t elem)
{
	uint64_t *p = arena_alloc(a, 8 + (cap ? cap : 1) * elem);

	p[0] = cap;
	return p + 1;
}

static size_t capacity(const struct bg_value *v)
{
	if (v->type == BG_VOBJECT)
		return (size_t)obj_hdr(v)->cap;
	return (v->flags & F_GROW) ? (size_t)((const uint64_t *)(const void *)v->u.items)[-1] : v->n;
}

struct bg_value *bg_value_new_array(struct bg_arena *a, size_t cap)
{
	struct bg_value *v = new_value(a, BG_VARRAY);

	v->flags = F_GROW;
	v->u.items = alloc_storage(a, cap, sizeof(*v->u.items));
	return v;
}

struct bg_value *bg_value_new_object(struct bg_arena *a, size_t cap)
{
	struct bg_value *v = new_value(a, BG_VOBJECT);

	v->u.members = alloc_members(a, cap);
	return v;
}

/* Makes room for one more element, moving the storage (to twice the size) when full. */
static void reserve_one(struct bg_arena *a, struct bg_value *v, size_t elem)
{
	void *old = v->type == BG_VARRAY ? (void *)v->u.items : (void *)v->u.members;
	size_t cap = capacity(v);
	void *fresh;

	if (v->n < cap)
		return;
	cap = cap < 4 ? 8 : 2 * cap;
	if (v->type == BG_VARRAY) {
		fresh = alloc_storage(a, cap, elem);
		v->flags |= F_GROW;
	} else {
		fresh = alloc_members(a, cap);
		((struct obj_hdr *)fresh - 1)->index = obj_hdr(v)->index; /* positions unchanged */
	}
	if (v->n)
		memcpy(fresh, old, v->n * elem);
	if (v->type == BG_VARRAY)
		v->u.items = fresh;
	else
		v->u.members = fresh;
}

void bg_value_append(struct bg_arena *a, struct bg_value *arr, struct bg_value *x)
{
	reserve_one(a, arr, sizeof(*arr->u.items));
	arr->u.items[arr->n++] = x;
}

/*
 * The hash index of an object with more than SMALL_OBJECT members: a table
 * of 2^k slots, each 0 (empty) or a member position + 1, probed linearly
 * from hash & (2^k - 1), at most half full. Objects below 255 members use
 * one byte a slot (F_IDX8: byte 0 holds k), bigger ones four (word 0 holds
 * the slot count).
 */
static inline uint32_t idx_nslots(const struct bg_value *o)
{
	return (o->flags & F_IDX8) ? (uint32_t)1 << (((const uint8_t *)obj_hdr(o)->index)[0] & 31)
				   : ((const uint32_t *)obj_hdr(o)->index)[0];
}

static inline uint32_t idx_get(const struct bg_value *o, uint32_t i)
{
	return (o->flags & F_IDX8) ? ((const uint8_t *)obj_hdr(o)->index)[1 + i] : ((const uint32_t *)obj_hdr(o)->index)[1 + i];
}

static inline void idx_put(struct bg_value *o, uint32_t i, uint32_t v)
{
	if (o->flags & F_IDX8)
		((uint8_t *)obj_hdr(o)->index)[1 + i] = (uint8_t)v;
	else
		((uint32_t *)obj_hdr(o)->index)[1 + i] = v;
}

/* Member position of key (or -1); *slot receives the slot that holds it or
 * the empty slot where it would go. */
static long idx_probe(const struct bg_value *o, const char *key, uint32_t klen, uint32_t hash,
		      uint32_t *slot)
{
	uint32_t mask = idx_nslots(o) - 1, i = hash & mask;

	for (;;) {
		uint32_t e = idx_get(o, i);
		if (e == 0) {
			*slot = i;
			return -1;
		}
		const struct bg_member *m = &o->u.members[e - 1];
		if (m->hash == hash && m->klen == klen && bg_same_bytes(m->key, key, klen)) {
			*slot = i;
			return (long)e - 1;
		}
		i = (i + 1) & mask;
	}
}

/* Builds obj's index from scratch, folding duplicate keys (first position,
 * last value) as it goes. */
void bg_value_build_index(struct bg_arena *a, struct bg_value *obj, size_t room)
{
	struct bg_member *m = obj->u.members;
	uint32_t slots = 16, w = 0, k = 4;

	if (room < obj->n)
		room = obj->n;
	while (slots < 2 * room + 2) {
		slots *= 2;
		k++;
	}
	if (room < 255 && slots <= 512) {
		uint8_t *idx = arena_alloc(a, slots + 1);
		memset(idx, 0, slots + 1);
		idx[0] = (uint8_t)k;
		obj_hdr(obj)->index = idx;
		obj->flags |= F_IDX8;
	} else {
		uint32_t *idx = arena_alloc(a, (slots + 1) * sizeof(*idx));
		memset(idx, 0, (slots + 1) * sizeof(*idx));
		idx[0] = slots;
		obj_hdr(obj)->index = idx;
		obj->flags &= (uint8_t)~F_IDX8;
	}
	for (uint32_t r = 0; r < obj->n; r++) {
		uint32_t slot;
		long j = idx_probe(obj, m[r].key, m[r].klen, m[r].hash, &slot);
		if (j >= 0) {
			m[j].value = m[r].value;
			continue;
		}
		m[w] = m[r];
		idx_put(obj, slot, ++w);
	}
	obj->n = w;
}

/* Position of key in obj, or -1. */
static long find_member(const struct bg_value *obj, const char *key, size_t klen, uint32_t hash)
{
	if (obj_hdr(obj)->index) {
		uint32_t slot;
		return idx_probe(obj, key, (uint32_t)klen, hash, &slot);
	}
	for (uint32_t i = 0; i < obj->n; i++) {
		const struct bg_member *m = &obj->u.members[i];
		if (m->hash == hash && m->klen == klen && bg_same_bytes(m->key, key, klen))
			return (long)i;
	}
	return -1;
}

bool bg_value_kept_partly(const struct bg_value *v)
{
	return v && v->type == BG_VOBJECT && (v->flags & F_LEFT_OUT);
}

struct bg_value *bg_value_getn(const struct bg_value *obj, const char *key, size_t klen)
{
	long i;

	if (!obj || obj->type != BG_VOBJECT)
		return NULL;
	i = find_member(obj, key, klen, hash_key(key, klen));
	return i < 0 ? NULL : obj->u.members[i].value;
}

struct bg_value *bg_value_get(const struct bg_value *obj, const char *key)
{
	if (!obj || obj->type != BG_VOBJECT)
		return NULL;
	return bg_value_getn(obj, key, strlen(key));
}

/* Appends a member; keeps the index up to date (builds it when index_now
 * and the object outgrew linear search). */
static void add_member(struct bg_arena *a, struct bg_value *obj, const char *key, uint32_t klen,
		       uint32_t hash, struct bg_value *v, bool index_now)
{
	struct bg_member *m;

	reserve_one(a, obj, sizeof(*obj->u.members));
	m = &obj->u.members[obj->n++];
	m->key = key;
	m->klen = klen;
	m->hash = hash;
	m->value = v;
	if (obj_hdr(obj)->index) {
		uint32_t slot;
		if ((size_t)obj->n * 2 + 2 > idx_nslots(obj) || ((obj->flags & F_IDX8) && obj->n >= 255))
			bg_value_build_index(a, obj, 2 * (size_t)obj->n);
		else if (idx_probe(obj, key, klen, hash, &slot) < 0)
			idx_put(obj, slot, obj->n);
	} else if (index_now && obj->n > SMALL_OBJECT) {
		bg_value_build_index(a, obj, capacity(obj));
	}
}

void bg_value_set(struct bg_arena *a, struct bg_value *obj, const char *key, struct bg_value *v)
{
	size_t klen = strlen(key);
	uint32_t h = hash_key(key, klen);
	long i = find_member(obj, key, klen, h);

	if (i >= 0) {
		obj->u.members[i].value = v;
		return;
	}
	add_member(a, obj, bg_arena_strndup(a, key, klen), (uint32_t)klen, h, v, true);
}

void bg_value_set_new_key(struct bg_arena *a, struct bg_value *obj, const char *key,
			  struct bg_value *v)
{
	size_t klen = strlen(key);

	add_member(a, obj, key, (uint32_t)klen, hash_key(key, klen), v, false);
}

void bg_value_index(struct bg_arena *a, struct bg_value *obj)
{
	if (bg_value_is_object(obj) && !obj_hdr(obj)->index && obj->n > SMALL_OBJECT)
		bg_value_build_index(a, obj, 0);
}

void bg_value_update(struct bg_arena *a, struct bg_value *dst, const struct bg_value *src)
{
	if (!bg_value_is_object(src))
		return;
	for (uint32_t j = 0; j < src->n; j++) {
		const struct bg_member *m = &src->u.members[j];
		long i = find_member(dst, m->key, m->klen, m->hash);
		if (i >= 0)
			dst->u.members[i].value = m->value;
		else
			add_member(a, dst, m->key, m->klen, m->hash, m->value, true); /* key shared */
	}
}

struct bg_value *bg_value_merged(struct bg_arena *a, const struct bg_value *base, const struct bg_value *over)
{
	uint32_t nb = bg_value_is_object(base) ? base->n : 0, no = bg_value_is_object(over) ? over->n : 0;
	struct bg_value *r = bg_value_new_object(a, (size_t)nb + no);
	struct bg_member *m = r->u.members;

	if (nb)
		memcpy(m, base->u.members, nb * sizeof(*m));
	r->n = nb;
	for (uint32_t j = 0; j < no; j++) {
		const struct bg_member *x = &over->u.members[j];
		/* base's positions are r's: a key of both keeps base's place */
		long i = nb ? find_member(base, x->key, x->klen, x->hash) : -1;
		if (i >= 0)
			m[i].value = x->value;
		else
			m[r->n++] = *x;
	}
	if (r->n > SMALL_OBJECT)
		bg_value_build_index(a, r, r->n);
	return r;
}

struct bg_value *bg_value_copy(struct bg_arena *a, const struct bg_value *v, size_t room)
{
	struct bg_value *c;

	if (!v || (v->type != BG_VOBJECT && v->type != BG_VARRAY))
		return (struct bg_value *)v;
	if (v->type == BG_VARRAY) {
		c = bg_value_new_array(a, v->n + room);
		memcpy(c->u.items, v->u.items, v->n * sizeof(*c->u.items));
	} else {
		c = bg_value_new_object(a, v->n + room);
		memcpy(c->u.members, v->u.members, v->n * sizeof(*c->u.members));
	}
	c->n = v->n;
	if (c->type == BG_VOBJECT && c->n + room > SMALL_OBJECT)
		bg_value_build_index(a, c, c->n + room);
	return c;
}

void bg_value_proj_init(struct bg_value_proj *p, const char *const *names, size_t count)
{
	memset(p, 0, sizeof(*p));
	p->names = names;
	p->count = count;
	for (size_t i = 0; i < count; i++) {
		size_t n = strlen(names[i]);
		uint32_t h = hash_key(names[i], n), s = h & 255;
		p->hash[i] = h;
		p->len[i] = (uint32_t)n;
		while (p->slot[s])
			s = (s + 1) & 255;
		p->slot[s] = (uint8_t)(i + 1);
	}
}

void bg_value_project(struct bg_value_proj *p, const struct bg_value *obj, struct bg_value **out)
{
	for (size_t i = 0; i < p->count; i++)
		out[i] = NULL;
	if (!bg_value_is_object(obj))
		return;
	for (uint32_t j = 0; j < obj->n; j++) {
		const struct bg_member *m = &obj->u.members[j];
		for (uint32_t s = m->hash & 255; p->slot[s]; s = (s + 1) & 255) {
			uint32_t i = p->slot[s] - 1u;
			if (p->hash[i] == m->hash && p->len[i] == m->klen &&
			    (p->seen[i] == m->key || bg_same_bytes(p->names[i], m->key, m->klen))) {
				p->seen[i] = m->key; /* documents share key text: next time no memcmp */
				out[i] = m->value;
				break;
			}
		}
	}
}

