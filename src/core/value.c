/*
 * value.c - the arena JSON DOM: arena, strict recursive-descent parser,
 * construction, lookup, and CPython-compatible dump/str/repr/compare.
 * See benchgate/value.h for the contract.
 */
#include "benchgate/value.h"
#include "benchgate/fsutil.h"
#include "core/bytes.h"
#include "core/fmath.h"
#include "core/pyval.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

/* ------------------------------------------------------------------ arena */

#define ARENA_MIN_BLOCK ((size_t)1 << 20)
#define ARENA_MAX_BLOCK ((size_t)64 << 20)
#define MAP_MIN ((size_t)2 << 20) /* blocks this big are mapped */

struct arena_block {
	struct arena_block *next;
	size_t size;   /* usable bytes in data */
	size_t used;
	size_t mapped; /* bytes mapped with mmap (the whole block), or 0 when malloc'ed */
	_Alignas(16) unsigned char data[];
};

struct bg_arena {
	struct arena_block *head;
	size_t total;
};

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

/*
 * A block of at least size bytes. Big blocks are mapped directly, so that
 * freeing the arena returns them to the system at once. (They are not
 * marked for transparent huge pages: with the usual defrag=madvise setting
 * the page faults then stall on compaction, which cost more than it saved.)
 */
static struct arena_block *new_block(struct bg_arena *a, size_t size)
{
	struct arena_block *b = NULL;
	size_t whole = sizeof(*b) + size;

	if (whole >= MAP_MIN) {
		void *p;
		whole = (whole + MAP_MIN - 1) & ~(MAP_MIN - 1);
		p = mmap(NULL, whole, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED) {
			b = p;
			b->mapped = whole;
			b->size = whole - sizeof(*b);
		}
	}
	if (!b) {
		b = bg_xmalloc(sizeof(*b) + size);
		b->mapped = 0;
		b->size = size;
	}
	b->used = 0;
	a->total += b->size;
	return b;
}

void *bg_arena_alloc(struct bg_arena *a, size_t size)
{
	struct arena_block *b = a->head;
	void *p;

	size = (size + 7) & ~(size_t)7;
	if (size == 0)
		size = 8;
	if (!b || b->size - b->used < size) {
		/* blocks grow with the arena: half of what it holds, within bounds */
		size_t want = a->total / 2;
		if (want < ARENA_MIN_BLOCK)
			want = ARENA_MIN_BLOCK;
		if (want > ARENA_MAX_BLOCK)
			want = ARENA_MAX_BLOCK;
		if (size > want / 4) {
			/* a big request gets its own block, behind the current one */
			struct arena_block *big = new_block(a, size);
			if (b) {
				big->next = b->next;
				b->next = big;
			} else {
				big->next = NULL;
				a->head = big;
			}
			big->used = size;
			return big->data;
		}
		b = new_block(a, want);
		b->next = a->head;
		a->head = b;
	}
	p = b->data + b->used;
	b->used += size;
	return p;
}

char *bg_arena_strndup(struct bg_arena *a, const char *s, size_t n)
{
	char *p = bg_arena_alloc(a, n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

size_t bg_arena_bytes(const struct bg_arena *a)
{
	return a->total;
}

/* --------------------------------------------------------- values, lookup */

#define F_GROW 1u
#define F_IDX8 2u
#define SMALL_OBJECT 8 /* objects up to this size are searched linearly */

static struct bg_value v_null = {BG_VNULL, 0, 0, 0, {0}};
static struct bg_value v_true = {BG_VTRUE, 0, 0, 0, {0}};
static struct bg_value v_false = {BG_VFALSE, 0, 0, 0, {0}};

struct bg_value *bg_value_null(void) { return &v_null; }
struct bg_value *bg_value_true(void) { return &v_true; }
struct bg_value *bg_value_false(void) { return &v_false; }

static inline uint32_t hash_key(const char *s, size_t n)
{
	return bg_hash_bytes(s, n);
}

static struct bg_value *new_value(struct bg_arena *a, enum bg_vtype t)
{
	struct bg_value *v = bg_arena_alloc(a, sizeof(*v));

	memset(v, 0, sizeof(*v));
	v->type = (uint8_t)t;
	return v;
}

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
	uint64_t *p = bg_arena_alloc(a, 8 + (cap ? cap : 1) * elem);

	p[0] = cap;
	return p + 1;
}

/* Every object's members follow this header: scalars, the most common
 * values, need no room for an index. */
struct obj_hdr {
	void *index; /* the hash index (see idx_nslots), or NULL */
	uint64_t cap;
};

static inline struct obj_hdr *obj_hdr(const struct bg_value *o)
{
	return (struct obj_hdr *)(void *)o->u.members - 1;
}

static struct bg_member *alloc_members(struct bg_arena *a, size_t cap)
{
	struct obj_hdr *h = bg_arena_alloc(a, sizeof(*h) + (cap ? cap : 1) * sizeof(struct bg_member));

	h->index = NULL;
	h->cap = cap;
	return (struct bg_member *)(void *)(h + 1);
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
	return (o->flags & F_IDX8) ? (uint32_t)1 << ((const uint8_t *)obj_hdr(o)->index)[0]
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
		if (m->hash == hash && m->klen == klen && memcmp(m->key, key, klen) == 0) {
			*slot = i;
			return (long)e - 1;
		}
		i = (i + 1) & mask;
	}
}

/* Builds obj's index from scratch, folding duplicate keys (first position,
 * last value) as it goes. */
static void build_index(struct bg_arena *a, struct bg_value *obj, size_t room)
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
		uint8_t *idx = bg_arena_alloc(a, slots + 1);
		memset(idx, 0, slots + 1);
		idx[0] = (uint8_t)k;
		obj_hdr(obj)->index = idx;
		obj->flags |= F_IDX8;
	} else {
		uint32_t *idx = bg_arena_alloc(a, (slots + 1) * sizeof(*idx));
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
		if (m->hash == hash && m->klen == klen && memcmp(m->key, key, klen) == 0)
			return (long)i;
	}
	return -1;
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
			build_index(a, obj, 2 * (size_t)obj->n);
		else if (idx_probe(obj, key, klen, hash, &slot) < 0)
			idx_put(obj, slot, obj->n);
	} else if (index_now && obj->n > SMALL_OBJECT) {
		build_index(a, obj, capacity(obj));
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
		build_index(a, obj, 0);
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
		build_index(a, c, c->n + room);
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
			    (p->seen[i] == m->key || memcmp(p->names[i], m->key, m->klen) == 0)) {
				p->seen[i] = m->key; /* documents share key text: next time no memcmp */
				out[i] = m->value;
				break;
			}
		}
	}
}

/* ------------------------------------------------------------------ parser */

#define SHARED_INT_MAX 1024      /* integers 0..1023 are one value each per document */
#define SHARED_STR_LEN 24        /* strings this long or shorter are shared... */
#define SHARED_STR_MAX (1u << 16) /* ...the first this many distinct ones */

/* A shared string: its hash and length are kept beside it, so that a probe
 * reads only the table until they match (the strings are scattered over the
 * arena; at 100,000 gates most probes are for strings met once). */
struct shared_slot {
	uint32_t hash, len;
	const struct bg_value *v;
};

struct parser {
	struct bg_arena *a;
	const char *start, *p, *end; /* *end == '\0'; the text is never written */
	struct bg_strbuf scratch;    /* a string with escapes or non-ASCII text, decoded */
	const char *display;
	struct bg_ctx *ctx;
	struct bg_value **vstack;
	size_t vn, vcap;
	struct bg_member *mstack;
	size_t mn, mcap;
	struct intern *itab; /* interned keys, open addressing */
	uint32_t icap, icount;
	/* scalars shared within the document (values are never modified once
	 * built): short strings, open addressing, and small integers */
	struct shared_slot *stab;
	uint32_t scap, scount;
	struct bg_value *small_int[SHARED_INT_MAX];
	bool failed;
	bool skip; /* checking a value that is not kept: no values are built */
	bool reject_dups; /* BG_VALUE_REJECT_DUPLICATES */
};

#define INTERN_MAX 8192 /* distinct keys interned per document; later ones are not */

/* An interned key: its text and its member hash (hash_key), computed once
 * per distinct key. */
struct intern {
	const char *key;
	uint32_t klen;
	uint32_t hash;
	const struct bg_value_keep *keep_list; /* the keep list last looked up for this key */
	const struct bg_value_keep *keep_hit;  /* its entry for the key, or NULL */
};

/*
 * The arena copy of a key, made the first time the document uses it, so
 * that every object's members point at one copy of each key: lookups then
 * compare against a few hot cache lines. *hash receives the key's member
 * hash (hash_key), computed once per occurrence.
 */
static const char *intern_key(struct parser *ps, const char *key, uint32_t klen, uint32_t *hash,
			      struct intern **entry)
{
	uint32_t mask, i, h;

	if (ps->icount >= INTERN_MAX) {
		*hash = hash_key(key, klen);
		*entry = NULL;
		return bg_arena_strndup(ps->a, key, klen);
	}
	if (2 * (ps->icount + 1) > ps->icap) {
		struct intern *old = ps->itab;
		uint32_t oldcap = ps->icap;
		ps->icap = oldcap ? 2 * oldcap : 256;
		ps->itab = bg_xcalloc(ps->icap, sizeof(*ps->itab));
		for (uint32_t j = 0; j < oldcap; j++) {
			if (!old[j].key)
				continue;
			i = old[j].hash & (ps->icap - 1);
			while (ps->itab[i].key)
				i = (i + 1) & (ps->icap - 1);
			ps->itab[i] = old[j];
		}
		free(old);
	}
	h = hash_key(key, klen);
	mask = ps->icap - 1;
	for (i = h & mask; ps->itab[i].key; i = (i + 1) & mask) {
		const struct intern *e = &ps->itab[i];
		if (e->hash == h && e->klen == klen && memcmp(e->key, key, klen) == 0) {
			*hash = e->hash;
			*entry = &ps->itab[i];
			return e->key;
		}
	}
	key = bg_arena_strndup(ps->a, key, klen);
	ps->itab[i].key = key;
	ps->itab[i].klen = klen;
	ps->itab[i].hash = *hash = h;
	ps->itab[i].keep_list = NULL;
	*entry = &ps->itab[i];
	ps->icount++;
	return key;
}

/* Appends p[0..n) quoted for a message: control bytes, DEL and bytes that
 * are not valid UTF-8 as \xNN. */
static void quote_token(char *buf, size_t size, const char *p, size_t n)
{
	size_t o = 0;

	buf[o++] = '\'';
	for (size_t i = 0; i < n && o + 8 < size;) {
		unsigned char c = (unsigned char)p[i];
		size_t k = c >= 0x80 ? bg_utf8_len((const unsigned char *)p + i) : 1;
		if (c >= 0x80 && k && i + k <= n) {
			memcpy(buf + o, p + i, k);
			o += k;
			i += k;
			continue;
		}
		if (c < 0x20 || c >= 0x7f)
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
		else
			buf[o++] = (char)c;
		i++;
	}
	buf[o++] = '\'';
	buf[o] = '\0';
}

/* The text of the token at p, for "near '...'" (jansson's wording); *last
 * receives its last byte (end for the end of the text). */
static void token_text(const char *p, const char *end, char *buf, size_t size, const char **last)
{
	size_t n = 0;

	if (p >= end) {
		snprintf(buf, size, "end of file");
		*last = end;
		return;
	}
	if (*p == '"') {
		n = 1;
		while (p + n < end && n < 40 && p[n] != '"' && p[n] != '\n') {
			if (p[n] == '\\' && p + n + 1 < end)
				n++;
			n++;
		}
		if (p + n < end && p[n] == '"')
			n++;
	} else if (isalnum((unsigned char)*p) || *p == '-' || *p == '+' || *p == '.') {
		while (p + n < end && n < 40 &&
		       (isalnum((unsigned char)p[n]) || p[n] == '-' || p[n] == '+' || p[n] == '.'))
			n++;
	} else {
		n = 1;
	}
	quote_token(buf, size, p, n);
	*last = p + n - 1;
}

/* Records "DISPLAY:LINE:COL: invalid JSON: WHAT near TOKEN"; at is the
 * token's first byte; the position is that of its last byte. When near is
 * not NULL it replaces the token text (from the token's start to at). */
static int perr(struct parser *ps, const char *at, const char *near_from, const char *fmt, ...)
	BG_PRINTF(4, 5);
/* The 1-based line and column (in code points) of the byte at in the text. */
static void text_pos(const struct parser *ps, const char *at, long *line, long *col)
{
	*line = 1;
	*col = 0;
	for (const char *q = ps->start; q < at; q++) {
		if (*q == '\n') {
			++*line;
			*col = 0;
		} else if (((unsigned char)*q & 0xc0) != 0x80) {
			++*col;
		}
	}
	++*col;
}

static int perr(struct parser *ps, const char *at, const char *near_from, const char *fmt, ...)
{
	char what[160], tok[200];
	const char *last;
	long line, col;
	va_list ap;

	if (ps->failed)
		return BG_ECHECK;
	ps->failed = true;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (near_from) {
		size_t n = (size_t)(at - near_from) + (at < ps->end ? 1 : 0);
		if (n > 40)
			n = 40;
		quote_token(tok, sizeof(tok), near_from, n);
		last = at;
	} else {
		token_text(at, ps->end, tok, sizeof(tok), &last);
	}
	text_pos(ps, last, &line, &col);
	return bg_error(ps->ctx, BG_ECHECK, "%s:%ld:%ld: invalid JSON: %s near %s", ps->display, line,
			col, what, tok);
}

/* Skips JSON whitespace (a value usually follows at once). */
static inline void skip_ws(struct parser *ps)
{
	const char *p = ps->p;

	if ((unsigned char)*p > ' ')
		return;
	ps->p = p + bg_span_json_space(p, (size_t)(ps->end - p));
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static long read_hex4(const char *p)
{
	long v = 0;

	for (int i = 0; i < 4; i++) {
		int h = hexval((unsigned char)p[i]);
		if (h < 0)
			return -1;
		v = (v << 4) | h;
	}
	return v;
}


static char *put_utf8(char *d, unsigned long c)
{
	if (c < 0x80) {
		*d++ = (char)c;
	} else if (c < 0x800) {
		*d++ = (char)(0xc0 | (c >> 6));
		*d++ = (char)(0x80 | (c & 0x3f));
	} else if (c < 0x10000) {
		*d++ = (char)(0xe0 | (c >> 12));
		*d++ = (char)(0x80 | ((c >> 6) & 0x3f));
		*d++ = (char)(0x80 | (c & 0x3f));
	} else {
		*d++ = (char)(0xf0 | (c >> 18));
		*d++ = (char)(0x80 | ((c >> 12) & 0x3f));
		*d++ = (char)(0x80 | ((c >> 6) & 0x3f));
		*d++ = (char)(0x80 | (c & 0x3f));
	}
	return d;
}

/*
 * Parses the string at ps->p (on its opening quote). *out receives its text
 * (*len bytes, not NUL-terminated): the input itself when the string is
 * plain ASCII without escapes, else the decoded copy in ps->scratch, valid
 * until the next string.
 */
static int parse_string(struct parser *ps, const char **out, uint32_t *len)
{
	const char *open = ps->p, *p = open + 1;
	struct bg_strbuf *sb = &ps->scratch;

	p += bg_span_json_plain(p, (size_t)(ps->end - p));
	if (*p == '"') {
		*out = open + 1;
		*len = (uint32_t)(p - (open + 1));
		ps->p = p + 1;
		return BG_OK;
	}
	bg_strbuf_reset(sb);
	bg_strbuf_addn(sb, open + 1, (size_t)(p - (open + 1)));
	for (;;) {
		unsigned char c = (unsigned char)*p;

		if (c == '"')
			break;
		if (c >= 0x20 && c < 0x80 && c != '\\') {
			size_t run = bg_span_json_plain(p, (size_t)(ps->end - p));
			bg_strbuf_addn(sb, p, run);
			p += run;
			continue;
		}
		if (c == '\\') {
			char e = p[1], ch;
			switch (e) {
			case '"': ch = '"'; break;
			case '\\': ch = '\\'; break;
			case '/': ch = '/'; break;
			case 'b': ch = '\b'; break;
			case 'f': ch = '\f'; break;
			case 'n': ch = '\n'; break;
			case 'r': ch = '\r'; break;
			case 't': ch = '\t'; break;
			case 'u': {
				char u8[4];
				long u = read_hex4(p + 2);
				if (u < 0)
					return perr(ps, p + 1, open, "invalid escape");
				if (u == 0)
					return perr(ps, p + 5, open, "\\u0000 is not allowed");
				if (u >= 0xdc00 && u <= 0xdfff)
					return perr(ps, p + 5, open, "invalid Unicode '\\u%04lX'", u);
				if (u >= 0xd800 && u <= 0xdbff) {
					long lo = p[6] == '\\' && p[7] == 'u' ? read_hex4(p + 8) : -1;
					if (lo < 0xdc00 || lo > 0xdfff)
						return perr(ps, p + 5, open, "invalid Unicode '\\u%04lX'", u);
					u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
					p += 6;
				}
				bg_strbuf_addn(sb, u8, (size_t)(put_utf8(u8, (unsigned long)u) - u8));
				p += 6;
				continue;
			}
			default:
				if (p + 1 >= ps->end)
					return perr(ps, ps->end, NULL, "premature end of input");
				return perr(ps, p + 1, open, "invalid escape");
			}
			bg_strbuf_addch(sb, ch);
			p += 2;
			continue;
		}
		if (c < 0x20) {
			if (p >= ps->end)
				return perr(ps, p, NULL, "premature end of input");
			return perr(ps, p, open, "control character 0x%x", c);
		}
		{
			size_t n = bg_utf8_len((const unsigned char *)p);
			if (!n)
				return perr(ps, p, open, "unable to decode byte 0x%x", c);
			bg_strbuf_addn(sb, p, n);
			p += n;
		}
	}
	*out = sb->buf;
	*len = (uint32_t)sb->len;
	ps->p = p + 1;
	return BG_OK;
}

static const double pow10_exact[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static int parse_number(struct parser *ps, struct bg_value **out)
{
	const char *s = ps->p, *p = s;
	bool neg = false, real = false;
	uint64_t mant = 0;
	int ndig = 0, frac = 0, overflow = 0;
	long exp10 = 0, ilen = 1; /* ilen: digits before the point */

	if (*p == '-') {
		neg = true;
		p++;
	}
	if (*p == '0') {
		p++;
	} else if (*p >= '1' && *p <= '9') {
		const char *first = p;
		while (*p >= '0' && *p <= '9') {
			if (mant > (UINT64_MAX - 9) / 10)
				overflow = 1;
			else
				mant = mant * 10 + (uint64_t)(*p - '0');
			if (mant || ndig)
				ndig++;
			p++;
		}
		ilen = p - first;
	} else {
		return perr(ps, s, NULL, "invalid token");
	}
	if (*p == '.') {
		real = true;
		p++;
		if (!(*p >= '0' && *p <= '9'))
			return perr(ps, s, NULL, "invalid token");
		while (*p >= '0' && *p <= '9') {
			if (ndig < 19) {
				mant = mant * 10 + (uint64_t)(*p - '0');
				frac++;
				if (mant)
					ndig++;
			} else {
				overflow = 1;
			}
			p++;
		}
	}
	if (*p == 'e' || *p == 'E') {
		bool eneg = false;
		long e = 0;
		real = true;
		p++;
		if (*p == '+' || *p == '-')
			eneg = *p++ == '-';
		if (!(*p >= '0' && *p <= '9'))
			return perr(ps, s, NULL, "invalid token");
		while (*p >= '0' && *p <= '9') {
			if (e < 100000)
				e = e * 10 + (*p - '0');
			p++;
		}
		exp10 = eneg ? -e : e;
	}
	ps->p = p;
	if (!real) {
		struct bg_value *v;
		if (overflow || (!neg && mant > (uint64_t)INT64_MAX) ||
		    (neg && mant > (uint64_t)INT64_MAX + 1))
			return perr(ps, s, NULL, neg ? "too big negative integer" : "too big integer");
		if (ps->skip) {
			*out = NULL;
			return BG_OK;
		}
		if (!neg && mant < SHARED_INT_MAX) {
			if (!ps->small_int[mant]) {
				ps->small_int[mant] = new_value(ps->a, BG_VINT);
				ps->small_int[mant]->u.i = (int64_t)mant;
			}
			*out = ps->small_int[mant];
			return BG_OK;
		}
		v = new_value(ps->a, BG_VINT);
		v->u.i = neg ? (int64_t)(0 - mant) : (int64_t)mant;
		*out = v;
		return BG_OK;
	}
	{
		double d;
		long e = exp10 - frac;
		if (!overflow && ndig <= 15 && e >= -22 && e <= 22) {
			d = (double)mant;
			d = e < 0 ? d / pow10_exact[-e] : d * pow10_exact[e];
			if (neg)
				d = -d;
		} else if (ps->skip && ilen + exp10 <= 308) {
			/* not built, and below 10^308 (< DBL_MAX): cannot overflow */
			*out = NULL;
			return BG_OK;
		} else {
			/* the token, NUL-terminated for strtod */
			char small[64], *copy = small;
			size_t n = (size_t)(p - s);
			if (n >= sizeof(small))
				copy = bg_xmalloc(n + 1);
			memcpy(copy, s, n);
			copy[n] = '\0';
			d = strtod(copy, NULL);
			if (copy != small)
				free(copy);
			if (isinf(d))
				return perr(ps, s, NULL, "real number overflow");
		}
		if (ps->skip) {
			*out = NULL;
			return BG_OK;
		}
		*out = new_value(ps->a, BG_VREAL);
		(*out)->u.d = d;
	}
	return BG_OK;
}

static int parse_value(struct parser *ps, struct bg_value **out, int depth,
		       const struct bg_value_keep *keep);

/*
 * After an element of an array or object: consumes ',' (another element
 * follows) or stops at the closing bracket (*done, not consumed); anything
 * else is the error "'CLOSE' expected".
 */
static int after_element(struct parser *ps, char close, bool *done)
{
	skip_ws(ps);
	if (*ps->p == ',') {
		ps->p++;
		skip_ws(ps);
		*done = false;
		return BG_OK;
	}
	if (*ps->p == close) {
		*done = true;
		return BG_OK;
	}
	return perr(ps, ps->p, NULL, "'%c' expected", close);
}

/* keep (or NULL) applies to the objects among the elements */
static int parse_array(struct parser *ps, struct bg_value **out, int depth,
		       const struct bg_value_keep *keep)
{
	size_t base = ps->vn, n;
	struct bg_value *arr;
	bool done;

	ps->p++;
	skip_ws(ps);
	if (*ps->p != ']') {
		for (;;) {
			struct bg_value *item;
			if (ps->p >= ps->end) /* jansson: an element missing at the end */
				return perr(ps, ps->p, NULL, "']' expected");
			if (parse_value(ps, &item, depth, keep))
				return BG_ECHECK;
			if (ps->skip)
				goto next_item;
			if (ps->vn == ps->vcap) {
				ps->vcap = ps->vcap ? 2 * ps->vcap : 256;
				ps->vstack = bg_xrealloc(ps->vstack, ps->vcap * sizeof(*ps->vstack));
			}
			ps->vstack[ps->vn++] = item;
		next_item:
			if (after_element(ps, ']', &done))
				return BG_ECHECK;
			if (done)
				break;
		}
	}
	ps->p++;
	if (ps->skip) {
		*out = NULL;
		return BG_OK;
	}
	n = ps->vn - base;
	arr = new_value(ps->a, BG_VARRAY);
	arr->n = (uint32_t)n;
	arr->u.items = bg_arena_alloc(ps->a, (n ? n : 1) * sizeof(*arr->u.items));
	if (n) /* (the stack is NULL until the first element anywhere) */
		memcpy(arr->u.items, ps->vstack + base, n * sizeof(*arr->u.items));
	ps->vn = base;
	*out = arr;
	return BG_OK;
}

/* The entry of keep (a list ended by a NULL key) for key[0..klen), or NULL. */
static const struct bg_value_keep *keep_entry(const struct bg_value_keep *keep, const char *key,
					      uint32_t klen)
{
	for (; keep->key; keep++)
		if (strncmp(keep->key, key, klen) == 0 && keep->key[klen] == '\0')
			return keep;
	return NULL;
}

/* The first repeated key of a document, as find_repeat finds it. */
struct repeat {
	const char *at, *first_at; /* the repeat's opening quote, and the first one's */
	char name[120];		   /* the key as messages quote it */
};

/*
 * Reads the value at ps->p again (ps->skip set: nothing is built), in the
 * order of the text, for the first key that an object repeats: true with
 * *r filled as soon as one is met, so a repeat nested in an earlier member
 * is found before a later repeat of the object around it. Only called on a
 * document known to repeat a key, whose text up to that repeat parsed.
 */
static bool find_repeat(struct parser *ps, int depth, struct repeat *r)
{
	struct seen {
		const char *key, *at;
		uint32_t klen;
	} *seen = NULL;
	size_t nseen = 0, cap = 0;
	struct bg_value *ignored;
	bool done = false, found = false;

	skip_ws(ps);
	if ((*ps->p != '{' && *ps->p != '[') || depth >= BG_VALUE_MAX_DEPTH) {
		(void)parse_value(ps, &ignored, depth, NULL);
		return false;
	}
	if (*ps->p++ == '[') {
		skip_ws(ps);
		if (*ps->p == ']')
			done = true;
		while (!done && !found && ps->p < ps->end)
			if (!(found = find_repeat(ps, depth + 1, r)) && after_element(ps, ']', &done))
				break;
		ps->p += done;
		return found;
	}
	skip_ws(ps);
	if (*ps->p == '}')
		done = true;
	while (!done && !found && *ps->p == '"') {
		const char *at = ps->p, *key;
		uint32_t klen;

		if (parse_string(ps, &key, &klen))
			break;
		for (size_t i = 0; i < nseen && !found; i++) {
			if (seen[i].klen != klen || memcmp(seen[i].key, key, klen) != 0)
				continue;
			quote_token(r->name, sizeof(r->name), key, klen);
			r->at = at;
			r->first_at = seen[i].at;
			found = true;
		}
		if (found)
			break;
		if (nseen == cap) {
			cap = cap ? 2 * cap : 16;
			seen = bg_xrealloc(seen, cap * sizeof(*seen));
		}
		seen[nseen].key = bg_arena_strndup(ps->a, key, klen); /* key may be the scratch */
		seen[nseen].klen = klen;
		seen[nseen++].at = at;
		skip_ws(ps);
		ps->p++; /* ':' */
		if ((found = find_repeat(ps, depth + 1, r)) || after_element(ps, '}', &done))
			break;
	}
	free(seen);
	ps->p += done && !found;
	return found;
}

/*
 * The error for a document found to repeat a key (BG_VALUE_REJECT_DUPLICATES;
 * an object parsed whole that folded one): "DISPLAY:LINE:COL: duplicate key
 * 'KEY' (first at LINE:COL); remove one of them" for the first repeat in the
 * text, at its opening quote, wherever it is nested. Only this error path
 * reads the document a second time (without building values).
 */
static int duplicate_error(struct parser *ps)
{
	struct repeat r;
	long line, col, line1, col1;

	ps->p = ps->start;
	ps->skip = true;
	if (!find_repeat(ps, 0, &r)) { /* not reached for a document that repeats a key */
		ps->failed = true;
		return bg_error(ps->ctx, BG_ECHECK, "%s: duplicate key; remove one of them", ps->display);
	}
	text_pos(ps, r.at, &line, &col);
	text_pos(ps, r.first_at, &line1, &col1);
	ps->failed = true;
	return bg_error(ps->ctx, BG_ECHECK, "%s:%ld:%ld: duplicate key %s (first at %ld:%ld); remove one of them",
			ps->display, line, col, r.name, line1, col1);
}

/* keep (or NULL: every member) names the members that are built; the others
 * are checked as strictly but leave nothing behind. */
static int parse_object(struct parser *ps, struct bg_value **out, int depth,
			const struct bg_value_keep *keep)
{
	size_t base = ps->mn, n;
	struct bg_value *obj;
	bool done;

	ps->p++;
	skip_ws(ps);
	if (*ps->p != '}') {
		for (;;) {
			struct bg_member m;
			if (*ps->p != '"')
				return perr(ps, ps->p, NULL, "string or '}' expected");
			const struct bg_value_keep *sub = NULL;
			bool dropped = false;
			m.hash = 0;
			if (parse_string(ps, &m.key, &m.klen))
				return BG_ECHECK;
			if (!ps->skip) {
				struct intern *ie;
				m.key = intern_key(ps, m.key, m.klen, &m.hash, &ie);
				if (keep) {
					const struct bg_value_keep *e;
					if (ie && ie->keep_list == keep) {
						e = ie->keep_hit;
					} else {
						e = keep_entry(keep, m.key, m.klen);
						if (ie) {
							ie->keep_list = keep;
							ie->keep_hit = e;
						}
					}
					if (e)
						sub = e->members;
					else
						dropped = true;
				}
			}
			skip_ws(ps);
			if (*ps->p != ':')
				return perr(ps, ps->p, NULL, "':' expected");
			ps->p++;
			if (dropped) {
				int rc;
				ps->skip = true;
				rc = parse_value(ps, &m.value, depth, NULL);
				ps->skip = false;
				if (rc)
					return rc;
				goto next_member;
			}
			if (parse_value(ps, &m.value, depth, sub))
				return BG_ECHECK;
			if (ps->skip)
				goto next_member;
			if (ps->mn == ps->mcap) {
				ps->mcap = ps->mcap ? 2 * ps->mcap : 256;
				ps->mstack = bg_xrealloc(ps->mstack, ps->mcap * sizeof(*ps->mstack));
			}
			ps->mstack[ps->mn++] = m;
		next_member:
			if (after_element(ps, '}', &done))
				return BG_ECHECK;
			if (done)
				break;
		}
	}
	ps->p++;
	if (ps->skip) {
		*out = NULL;
		return BG_OK;
	}
	n = ps->mn - base;
	obj = new_value(ps->a, BG_VOBJECT);
	obj->n = (uint32_t)n;
	obj->u.members = alloc_members(ps->a, n);
	if (n)
		memcpy(obj->u.members, ps->mstack + base, n * sizeof(*obj->u.members));
	ps->mn = base;
	if (n > SMALL_OBJECT) {
		build_index(ps->a, obj, 0); /* also folds duplicate keys */
	} else {
		/* duplicate keys: first position, last value (Python's dict) */
		struct bg_member *m = obj->u.members;
		uint64_t seen = 0;
		uint32_t w = 0;
		for (uint32_t r = 0; r < obj->n; r++) {
			uint64_t bit = (uint64_t)1 << (m[r].hash & 63);
			uint32_t j = w;
			if (seen & bit)
				for (j = 0; j < w; j++)
				if (m[j].hash == m[r].hash && m[j].klen == m[r].klen &&
				    memcmp(m[j].key, m[r].key, m[r].klen) == 0)
					break;
			seen |= bit;
			if (j < w)
				m[j].value = m[r].value;
			else
				m[w++] = m[r];
		}
		obj->n = w;
	}
	if (obj->n != n && ps->reject_dups)
		return duplicate_error(ps);
	*out = obj;
	return BG_OK;
}

/* The document's one value for the short string s[0..len): documents repeat
 * their vocabulary (dtypes, states, platforms, dates) thousands of times. */
static struct bg_value *shared_string(struct parser *ps, const char *s, uint32_t len)
{
	uint32_t h = hash_key(s, len), mask, i;
	struct bg_value *v;

	if (2 * (ps->scount + 1) > ps->scap && ps->scount < SHARED_STR_MAX) {
		struct shared_slot *old = ps->stab;
		uint32_t oldcap = ps->scap;
		ps->scap = oldcap ? 2 * oldcap : 1024;
		ps->stab = bg_xcalloc(ps->scap, sizeof(*ps->stab));
		for (uint32_t j = 0; j < oldcap; j++) {
			if (!old[j].v)
				continue;
			i = old[j].hash & (ps->scap - 1);
			while (ps->stab[i].v)
				i = (i + 1) & (ps->scap - 1);
			ps->stab[i] = old[j];
		}
		free(old);
	}
	mask = ps->scap - 1;
	for (i = h & mask; ps->stab[i].v; i = (i + 1) & mask) {
		const struct shared_slot *e = &ps->stab[i];
		if (e->hash == h && e->len == len && memcmp(e->v->u.s, s, len) == 0)
			return (struct bg_value *)e->v;
	}
	v = new_value(ps->a, BG_VSTRING);
	v->u.s = bg_arena_strndup(ps->a, s, len);
	v->n = len;
	if (ps->scount < SHARED_STR_MAX) {
		ps->stab[i].hash = h;
		ps->stab[i].len = len;
		ps->stab[i].v = v;
		ps->scount++;
	}
	return v;
}

static int parse_literal(struct parser *ps, const char *word, size_t n, struct bg_value *v,
			 struct bg_value **out)
{
	const char *p = ps->p;

	if (strncmp(p, word, n) == 0 && !isalnum((unsigned char)p[n])) {
		ps->p = p + n;
		*out = v;
		return BG_OK;
	}
	return perr(ps, p, NULL, "invalid token");
}

static int parse_value(struct parser *ps, struct bg_value **out, int depth,
		       const struct bg_value_keep *keep)
{
	skip_ws(ps);
	switch (*ps->p) {
	case '{':
	case '[':
		if (depth >= BG_VALUE_MAX_DEPTH)
			return perr(ps, ps->p, NULL, "maximum parsing depth reached");
		return *ps->p == '{' ? parse_object(ps, out, depth + 1, keep)
				     : parse_array(ps, out, depth + 1, keep);
	case '"': {
		struct bg_value *v;
		const char *s;
		uint32_t len;
		if (parse_string(ps, &s, &len))
			return BG_ECHECK;
		if (ps->skip) {
			*out = NULL;
			return BG_OK;
		}
		if (len <= SHARED_STR_LEN) {
			*out = shared_string(ps, s, len);
			return BG_OK;
		}
		v = new_value(ps->a, BG_VSTRING);
		v->u.s = bg_arena_strndup(ps->a, s, len);
		v->n = len;
		*out = v;
		return BG_OK;
	}
	case '-': case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9':
		return parse_number(ps, out);
	case 't':
		return parse_literal(ps, "true", 4, &v_true, out);
	case 'f':
		return parse_literal(ps, "false", 5, &v_false, out);
	case 'n':
		return parse_literal(ps, "null", 4, &v_null, out);
	default:
		if (ps->p < ps->end && isalpha((unsigned char)*ps->p))
			return perr(ps, ps->p, NULL, "invalid token");
		return perr(ps, ps->p, NULL, "unexpected token");
	}
}

/* Parses text[0..len); text[len] must be '\0'. The text is only read:
 * what the values keep of it is copied into the arena. */
static int parse_text(struct bg_arena *a, const char *text, size_t len, const char *display,
		      const struct bg_value_keep *keep, unsigned flags, struct bg_value **out,
		      struct bg_ctx *ctx)
{
	struct parser ps;
	int rc;

	*out = NULL;
	if (len == 0)
		return bg_error(ctx, BG_ECHECK, "%s: file is empty; expected a JSON object", display);
	if (len >= UINT32_MAX) /* lengths and counts are 32-bit */
		return bg_error(ctx, BG_ECHECK, "%s: too large to read (4 GiB or more)", display);
	memset(&ps, 0, sizeof(ps));
	ps.a = a;
	ps.start = ps.p = text;
	ps.end = text + len;
	ps.display = display;
	ps.ctx = ctx;
	ps.reject_dups = (flags & BG_VALUE_REJECT_DUPLICATES) != 0;
	bg_strbuf_init(&ps.scratch);
	rc = parse_value(&ps, out, 0, keep);
	if (!rc) {
		skip_ws(&ps);
		if (ps.p != ps.end)
			rc = perr(&ps, ps.p, NULL, "end of file expected");
	}
	free(ps.vstack);
	free(ps.mstack);
	free(ps.itab);
	free(ps.stab);
	bg_strbuf_release(&ps.scratch);
	if (rc)
		*out = NULL;
	return rc;
}

int bg_value_parse(struct bg_arena *a, const char *data, size_t len, const char *display,
		   struct bg_value **out, struct bg_ctx *ctx)
{
	return bg_value_parse_keep(a, data, len, display, NULL, out, ctx);
}

int bg_value_parse_keep(struct bg_arena *a, const char *data, size_t len, const char *display,
			const struct bg_value_keep *keep, struct bg_value **out, struct bg_ctx *ctx)
{
	char *text = bg_xmalloc(len + 1); /* the parser reads one byte past the end */
	int rc;

	memcpy(text, data, len);
	text[len] = '\0';
	rc = parse_text(a, text, len, display, keep, 0, out, ctx);
	free(text);
	return rc;
}

int bg_value_parse_file(struct bg_arena *a, const char *path, const char *display,
			struct bg_value **out, struct bg_ctx *ctx)
{
	return bg_value_parse_file_keep(a, path, display, NULL, out, ctx);
}

/* bg_value_parse_file_keep with parse flags (BG_VALUE_*). */
static int parse_file(struct bg_arena *a, const char *path, const char *display,
		      const struct bg_value_keep *keep, unsigned flags, struct bg_value **out,
		      struct bg_ctx *ctx)
{
	struct bg_file_view view;
	int rc;

	if (!display)
		display = path;
	*out = NULL;
	if ((rc = bg_file_view_open(&view, path, display, ctx)))
		return rc;
	rc = parse_text(a, view.text, view.len, display, keep, flags, out, ctx);
	bg_file_view_release(&view);
	return rc;
}

int bg_value_parse_file_keep(struct bg_arena *a, const char *path, const char *display,
			     const struct bg_value_keep *keep, struct bg_value **out, struct bg_ctx *ctx)
{
	return parse_file(a, path, display, keep, 0, out, ctx);
}

int bg_value_parse_file_flags(struct bg_arena *a, const char *path, const char *display,
			      unsigned flags, struct bg_value **out, struct bg_ctx *ctx)
{
	return parse_file(a, path, display, NULL, flags, out, ctx);
}

int bg_value_expect_object(const struct bg_value *v, const char *display, struct bg_ctx *ctx)
{
	if (bg_value_is_object(v))
		return BG_OK;
	return bg_error(ctx, BG_ECHECK, "%s: top level must be a JSON object", display);
}

/* ------------------------------------------------------------ serialising */

static unsigned long utf8_next(const unsigned char **p, const unsigned char *end)
{
	const unsigned char *s = *p;
	unsigned long c = s[0];
	int extra = 0;

	if (c >= 0xf0) {
		c &= 0x07;
		extra = 3;
	} else if (c >= 0xe0) {
		c &= 0x0f;
		extra = 2;
	} else if (c >= 0xc0) {
		c &= 0x1f;
		extra = 1;
	}
	s++;
	while (extra-- > 0 && s < end)
		c = (c << 6) | (*s++ & 0x3f);
	*p = s;
	return c;
}

static const char hexdig[] = "0123456789abcdef";

static void add_u4(struct bg_strbuf *out, unsigned long c)
{
	char b[6] = {'\\', 'u', hexdig[(c >> 12) & 15], hexdig[(c >> 8) & 15], hexdig[(c >> 4) & 15],
		     hexdig[c & 15]};
	bg_strbuf_addn(out, b, 6);
}

void bg_value_json_string(struct bg_strbuf *out, const char *str, size_t len)
{
	const unsigned char *p = (const unsigned char *)str, *end = p + len;

	bg_strbuf_addch(out, '"');
	while (p < end) {
		const unsigned char *run = p;
		unsigned long c;

		while (p < end && *p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
			p++;
		if (p > run)
			bg_strbuf_addn(out, (const char *)run, (size_t)(p - run));
		if (p >= end)
			break;
		c = *p;
		if (c < 0x80) {
			p++;
			switch (c) {
			case '"': bg_strbuf_addn(out, "\\\"", 2); break;
			case '\\': bg_strbuf_addn(out, "\\\\", 2); break;
			case '\n': bg_strbuf_addn(out, "\\n", 2); break;
			case '\r': bg_strbuf_addn(out, "\\r", 2); break;
			case '\t': bg_strbuf_addn(out, "\\t", 2); break;
			case '\b': bg_strbuf_addn(out, "\\b", 2); break;
			case '\f': bg_strbuf_addn(out, "\\f", 2); break;
			default: add_u4(out, c);
			}
			continue;
		}
		c = utf8_next(&p, end);
		if (c >= 0x10000) {
			unsigned long v = c - 0x10000;
			add_u4(out, 0xd800 | (v >> 10));
			add_u4(out, 0xdc00 | (v & 0x3ff));
		} else {
			add_u4(out, c);
		}
	}
	bg_strbuf_addch(out, '"');
}

size_t bg_value_missing_list(struct bg_strbuf *out, const struct bg_value *obj, const char *const *names)
{
	size_t n = 0;

	bg_strbuf_addch(out, '[');
	for (const char *const *k = names; *k; k++) {
		if (bg_value_get(obj, *k))
			continue;
		if (n++)
			bg_strbuf_adds(out, ", ");
		bg_value_repr_string(out, *k, strlen(*k));
	}
	bg_strbuf_addch(out, ']');
	return n;
}

int bg_value_strcmp_cp(const char *a, const char *b)
{
	return strcmp(a, b); /* C strcmp compares as unsigned char: code-point order for UTF-8 */
}

void bg_value_float_repr(struct bg_strbuf *out, double x)
{
	char buf[64], digits[32];
	int prec, exp10, nd = 0;
	char *e, *q;

	if (isnan(x)) {
		bg_strbuf_adds(out, "nan");
		return;
	}
	if (isinf(x)) {
		bg_strbuf_adds(out, x < 0 ? "-inf" : "inf");
		return;
	}
	/* the shortest %e text that reads back as x: Python's repr */
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*e", prec - 1, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	q = buf;
	if (*q == '-') {
		bg_strbuf_addch(out, '-');
		q++;
	}
	e = strchr(q, 'e');
	exp10 = atoi(e + 1);
	for (; q < e; q++)
		if (*q != '.')
			digits[nd++] = *q;
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
	if (exp10 < -4 || exp10 >= 16) {
		bg_strbuf_addch(out, digits[0]);
		if (nd > 1) {
			bg_strbuf_addch(out, '.');
			bg_strbuf_adds(out, digits + 1);
		}
		bg_strbuf_addf(out, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
	} else if (exp10 < 0) {
		bg_strbuf_adds(out, "0.");
		for (int i = -1; i > exp10; i--)
			bg_strbuf_addch(out, '0');
		bg_strbuf_adds(out, digits);
	} else {
		for (int i = 0; i <= exp10; i++)
			bg_strbuf_addch(out, i < nd ? digits[i] : '0');
		bg_strbuf_addch(out, '.');
		if (nd > exp10 + 1)
			bg_strbuf_adds(out, digits + exp10 + 1);
		else
			bg_strbuf_addch(out, '0');
	}
}

/*
 * Python's str.isprintable (what repr leaves as it is): false for the
 * control (Cc), format (Cf), space and line separator (Zs, Zl, Zp; ASCII
 * space aside), surrogate and private-use (Cs, Co) code points, as
 * Unicode 14.0 (Python 3.11) assigns them. Unassigned code points (Cn),
 * which Python escapes too, are taken as printable: that needs the whole
 * Unicode table.
 */
static bool py_printable(unsigned long c)
{
	static const unsigned long ranges[][2] = {
		{0x0, 0x1f},	     {0x7f, 0xa0},	 {0xad, 0xad},	     {0x600, 0x605},
		{0x61c, 0x61c},	     {0x6dd, 0x6dd},	 {0x70f, 0x70f},     {0x890, 0x891},
		{0x8e2, 0x8e2},	     {0x1680, 0x1680},	 {0x180e, 0x180e},   {0x2000, 0x200f},
		{0x2028, 0x202f},    {0x205f, 0x2064},	 {0x2066, 0x206f},   {0x3000, 0x3000},
		{0xd800, 0xf8ff},    {0xfeff, 0xfeff},	 {0xfff9, 0xfffb},   {0x110bd, 0x110bd},
		{0x110cd, 0x110cd},  {0x13430, 0x13438}, {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a},
		{0xe0001, 0xe0001},  {0xe0020, 0xe007f}, {0xf0000, 0xffffd}, {0x100000, 0x10fffd},
	};

	if (c >= 0x20 && c < 0x7f)
		return true;
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]) && c >= ranges[i][0]; i++)
		if (c <= ranges[i][1])
			return false;
	return true;
}

void bg_value_repr_string(struct bg_strbuf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	char quote = '\'';

	if (memchr(s, '\'', len) && !memchr(s, '"', len))
		quote = '"';
	bg_strbuf_addch(out, quote);
	while (p < end) {
		const unsigned char *start = p;
		unsigned long c = *p;

		if (c < 0x80)
			p++;
		else
			c = utf8_next(&p, end);
		if (c == (unsigned long)quote || c == '\\') {
			bg_strbuf_addch(out, '\\');
			bg_strbuf_addch(out, (char)c);
		} else if (c == '\n') {
			bg_strbuf_adds(out, "\\n");
		} else if (c == '\r') {
			bg_strbuf_adds(out, "\\r");
		} else if (c == '\t') {
			bg_strbuf_adds(out, "\\t");
		} else if (!py_printable(c)) {
			if (c < 0x100)
				bg_strbuf_addf(out, "\\x%02lx", c);
			else if (c < 0x10000)
				bg_strbuf_addf(out, "\\u%04lx", c);
			else
				bg_strbuf_addf(out, "\\U%08lx", c);
		} else {
			bg_strbuf_addn(out, (const char *)start, (size_t)(p - start));
		}
	}
	bg_strbuf_addch(out, quote);
}

static void add_int(struct bg_strbuf *out, int64_t i)
{
	char b[24], *p = b + sizeof(b);
	uint64_t u = i < 0 ? 0 - (uint64_t)i : (uint64_t)i;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (i < 0)
		*--p = '-';
	bg_strbuf_addn(out, p, (size_t)(b + sizeof(b) - p));
}

static void newline_indent(struct bg_strbuf *out, int indent, int level)
{
	size_t n = (size_t)indent * (size_t)level;

	bg_strbuf_grow(out, n + 1);
	out->buf[out->len] = '\n';
	memset(out->buf + out->len + 1, ' ', n);
	bg_strbuf_setlen(out, out->len + n + 1);
}

static int cmp_member_key(const void *a, const void *b)
{
	const struct bg_member *x = *(const struct bg_member *const *)a;
	const struct bg_member *y = *(const struct bg_member *const *)b;
	return bg_value_strcmp_cp(x->key, y->key);
}

static void dump_value(struct bg_strbuf *out, const struct bg_value *v, int indent, bool sort, int level)
{
	switch (v->type) {
	case BG_VOBJECT: {
		const struct bg_member **ms;
		uint32_t n = v->n;

		if (n == 0) {
			bg_strbuf_addn(out, "{}", 2);
			return;
		}
		ms = bg_xmalloc(n * sizeof(*ms));
		for (uint32_t i = 0; i < n; i++)
			ms[i] = &v->u.members[i];
		if (sort)
			qsort(ms, n, sizeof(*ms), cmp_member_key);
		bg_strbuf_addch(out, '{');
		for (uint32_t i = 0; i < n; i++) {
			if (i)
				bg_strbuf_addch(out, ',');
			if (indent >= 0)
				newline_indent(out, indent, level + 1);
			else if (i)
				bg_strbuf_addch(out, ' ');
			bg_value_json_string(out, ms[i]->key, ms[i]->klen);
			bg_strbuf_addn(out, ": ", 2);
			dump_value(out, ms[i]->value, indent, sort, level + 1);
		}
		if (indent >= 0)
			newline_indent(out, indent, level);
		bg_strbuf_addch(out, '}');
		free(ms);
		return;
	}
	case BG_VARRAY:
		if (v->n == 0) {
			bg_strbuf_addn(out, "[]", 2);
			return;
		}
		bg_strbuf_addch(out, '[');
		for (uint32_t i = 0; i < v->n; i++) {
			if (i)
				bg_strbuf_addch(out, ',');
			if (indent >= 0)
				newline_indent(out, indent, level + 1);
			else if (i)
				bg_strbuf_addch(out, ' ');
			dump_value(out, v->u.items[i], indent, sort, level + 1);
		}
		if (indent >= 0)
			newline_indent(out, indent, level);
		bg_strbuf_addch(out, ']');
		return;
	case BG_VSTRING:
		bg_value_json_string(out, v->u.s, v->n);
		return;
	case BG_VINT:
		add_int(out, v->u.i);
		return;
	case BG_VREAL:
		if (isnan(v->u.d))
			bg_strbuf_adds(out, "NaN");
		else if (isinf(v->u.d))
			bg_strbuf_adds(out, v->u.d < 0 ? "-Infinity" : "Infinity");
		else
			bg_value_float_repr(out, v->u.d);
		return;
	case BG_VTRUE:
		bg_strbuf_addn(out, "true", 4);
		return;
	case BG_VFALSE:
		bg_strbuf_addn(out, "false", 5);
		return;
	default:
		bg_strbuf_addn(out, "null", 4);
		return;
	}
}

void bg_value_dump(struct bg_strbuf *out, const struct bg_value *v, int indent, bool sort_keys)
{
	dump_value(out, v ? v : &v_null, indent, sort_keys, 0);
}

void bg_value_py_repr(struct bg_strbuf *out, const struct bg_value *v)
{
	if (!v) {
		bg_strbuf_adds(out, "None");
		return;
	}
	switch (v->type) {
	case BG_VSTRING:
		bg_value_repr_string(out, v->u.s, v->n);
		return;
	case BG_VOBJECT:
		bg_strbuf_addch(out, '{');
		for (uint32_t i = 0; i < v->n; i++) {
			if (i)
				bg_strbuf_adds(out, ", ");
			bg_value_repr_string(out, v->u.members[i].key, v->u.members[i].klen);
			bg_strbuf_adds(out, ": ");
			bg_value_py_repr(out, v->u.members[i].value);
		}
		bg_strbuf_addch(out, '}');
		return;
	case BG_VARRAY:
		bg_strbuf_addch(out, '[');
		for (uint32_t i = 0; i < v->n; i++) {
			if (i)
				bg_strbuf_adds(out, ", ");
			bg_value_py_repr(out, v->u.items[i]);
		}
		bg_strbuf_addch(out, ']');
		return;
	case BG_VINT:
		add_int(out, v->u.i);
		return;
	case BG_VREAL:
		bg_value_float_repr(out, v->u.d);
		return;
	case BG_VTRUE:
		bg_strbuf_adds(out, "True");
		return;
	case BG_VFALSE:
		bg_strbuf_adds(out, "False");
		return;
	default:
		bg_strbuf_adds(out, "None");
		return;
	}
}

void bg_value_py_str(struct bg_strbuf *out, const struct bg_value *v)
{
	if (v && v->type == BG_VSTRING)
		bg_strbuf_addn(out, v->u.s, v->n);
	else
		bg_value_py_repr(out, v);
}

bool bg_value_truthy(const struct bg_value *v)
{
	if (!v)
		return false;
	switch (v->type) {
	case BG_VOBJECT:
	case BG_VARRAY:
	case BG_VSTRING:
		return v->n > 0;
	case BG_VINT:
		return v->u.i != 0;
	case BG_VREAL:
		return v->u.d != 0.0;
	case BG_VTRUE:
		return true;
	default:
		return false;
	}
}

bool bg_value_is_pynumber(const struct bg_value *v)
{
	return v && (v->type == BG_VINT || v->type == BG_VREAL || v->type == BG_VTRUE ||
		     v->type == BG_VFALSE);
}

bool bg_value_is_pyint(const struct bg_value *v, long long *out)
{
	if (!v)
		return false;
	if (v->type == BG_VINT || v->type == BG_VTRUE || v->type == BG_VFALSE) {
		if (out)
			*out = v->type == BG_VINT ? (long long)v->u.i : v->type == BG_VTRUE;
		return true;
	}
	return false;
}

static double num(const struct bg_value *v)
{
	if (v->type == BG_VINT)
		return (double)v->u.i;
	if (v->type == BG_VREAL)
		return v->u.d;
	return v->type == BG_VTRUE ? 1.0 : 0.0;
}

/*
 * Python's int/float comparison, exact: -1, 0 or 1 as i is below, equal to
 * or above d; 2 when d is NaN (unordered). Converting i to a double instead
 * would make 2**53 + 1 equal 2**53 + 0.0.
 */
static int cmp_int_real(long long i, double d)
{
	long long t;
	double frac;

	if (d != d)
		return 2;
	if (d >= 9223372036854775808.0)
		return -1;
	if (d < -9223372036854775808.0)
		return 1;
	t = (long long)d; /* toward zero; in range */
	if (i != t)
		return i < t ? -1 : 1;
	frac = d - (double)t; /* exact */
	return frac > 0 ? -1 : frac < 0 ? 1 : 0;
}

/* Python's comparison of two numbers: -1, 0, 1, or 2 when unordered (NaN). */
static int cmp_numbers(const struct bg_value *a, const struct bg_value *b)
{
	long long x, y;
	bool ia = bg_value_is_pyint(a, &x), ib = bg_value_is_pyint(b, &y);

	if (ia && ib)
		return x < y ? -1 : x > y;
	if (ia)
		return cmp_int_real(x, b->u.d);
	if (ib) {
		int c = cmp_int_real(y, a->u.d);
		return c == 2 ? 2 : -c;
	}
	return a->u.d < b->u.d ? -1 : a->u.d > b->u.d ? 1 : a->u.d == b->u.d ? 0 : 2;
}

bool bg_value_equal(const struct bg_value *a, const struct bg_value *b)
{
	if (!a || !b)
		return (!a || a->type == BG_VNULL) && (!b || b->type == BG_VNULL);
	if (bg_value_is_pynumber(a) && bg_value_is_pynumber(b))
		return cmp_numbers(a, b) == 0;
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case BG_VSTRING:
		return a->n == b->n && memcmp(a->u.s, b->u.s, a->n) == 0;
	case BG_VARRAY:
		if (a->n != b->n)
			return false;
		for (uint32_t i = 0; i < a->n; i++)
			if (!bg_value_equal(a->u.items[i], b->u.items[i]))
				return false;
		return true;
	case BG_VOBJECT:
		if (a->n != b->n)
			return false;
		for (uint32_t i = 0; i < a->n; i++) {
			const struct bg_member *m = &a->u.members[i];
			const struct bg_value *o = bg_value_getn(b, m->key, m->klen);
			if (!o || !bg_value_equal(m->value, o))
				return false;
		}
		return true;
	default:
		return true; /* null */
	}
}

bool bg_value_py_key(struct bg_strbuf *sb, const struct bg_value *v)
{
	long long n;

	if (bg_value_is_array(v) || bg_value_is_object(v))
		return false;
	if (bg_value_is_string(v)) {
		bg_strbuf_addch(sb, 's');
		bg_strbuf_addn(sb, v->u.s, v->n);
	} else if (bg_value_is_pyint(v, &n)) {
		bg_strbuf_addf(sb, "n%lld", n);
	} else if (bg_value_is_real(v)) {
		double d = v->u.d;
		if (d == d && d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == (double)(long long)d)
			bg_strbuf_addf(sb, "n%lld", (long long)d);
		else
			bg_strbuf_addf(sb, "r%.17g", d);
	} else {
		bg_strbuf_addch(sb, 'z');
	}
	return true;
}

static int type_rank(const struct bg_value *v)
{
	if (!v || v->type == BG_VNULL)
		return 0;
	if (bg_value_is_pynumber(v))
		return 1;
	if (v->type == BG_VSTRING)
		return 2;
	if (v->type == BG_VARRAY)
		return 3;
	return 4;
}

int bg_value_cmp(const struct bg_value *a, const struct bg_value *b, bool *type_error)
{
	int ra = type_rank(a), rb = type_rank(b);

	if (ra == 2 && rb == 2) {
		int c = strcmp(a->u.s, b->u.s);
		return c < 0 ? -1 : c > 0;
	}
	if (bg_value_equal(a, b))
		return 0;
	if (ra != rb || ra == 0 || ra == 4) {
		*type_error = true;
		return ra < rb ? -1 : ra > rb ? 1 : 0;
	}
	if (ra == 1) {
		int c = cmp_numbers(a, b);
		return c == 2 ? 0 : c; /* NaN: neither below nor above, as Python's < says */
	}
	for (size_t i = 0;; i++) {
		const struct bg_value *x = bg_value_at(a, i), *y = bg_value_at(b, i);
		int c;
		if (!x || !y)
			return !x && y ? -1 : (x && !y ? 1 : 0);
		c = bg_value_cmp(x, y, type_error);
		if (c)
			return c;
	}
}

bool bg_value_str_blank(const struct bg_value *v)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	size_t start, n;

	if (v && v->type == BG_VSTRING) {
		unsigned char c = v->n ? (unsigned char)v->u.s[0] : 0;
		if (c > ' ' && c < 0x7f) /* printable ASCII other than space is never Python whitespace */
			return false;
		bg_py_strip(v->u.s, v->n, &start, &n);
		return n == 0;
	}
	bg_value_py_str(&sb, v);
	bg_py_strip(sb.buf, sb.len, &start, &n);
	bg_strbuf_release(&sb);
	return n == 0;
}

/* The text int() and float() parse: bg_py_number_ascii of s, then ASCII
 * whitespace (Py_ISSPACE) stripped; start and length in *start, *n. */
static void py_number_text(struct bg_strbuf *t, const char *s, size_t len, size_t *start, size_t *n)
{
	size_t a = 0, b;

	bg_py_number_ascii(t, s, len);
	b = t->len;
	while (a < b && isspace((unsigned char)t->buf[a]))
		a++;
	while (b > a && isspace((unsigned char)t->buf[b - 1]))
		b--;
	*start = a;
	*n = b - a;
}

/* Python float() of a string: strip, one underscore between digits, no hex. */
static bool parse_py_float_string(const char *text, size_t len, double *out)
{
	struct bg_strbuf sb = BG_STRBUF_INIT, t = BG_STRBUF_INIT;
	size_t start, n;
	const char *s;
	char *end;
	bool ok;

	py_number_text(&t, text, len, &start, &n);
	s = t.buf;
	for (size_t i = start; i < start + n; i++) {
		char c = s[i];
		if (c == '_') {
			if (i == start || i + 1 >= start + n || !isdigit((unsigned char)s[i - 1]) ||
			    !isdigit((unsigned char)s[i + 1])) {
				bg_strbuf_release(&sb);
				bg_strbuf_release(&t);
				return false;
			}
			continue;
		}
		if (c == 'x' || c == 'X' || c == 'p' || c == 'P') {
			bg_strbuf_release(&sb);
			bg_strbuf_release(&t);
			return false;
		}
		bg_strbuf_addch(&sb, c);
	}
	bg_strbuf_release(&t);
	if (sb.len == 0) {
		bg_strbuf_release(&sb);
		return false;
	}
	errno = 0;
	*out = strtod(sb.buf, &end);
	ok = *end == '\0';
	if (ok && isalpha((unsigned char)sb.buf[sb.buf[0] == '-' || sb.buf[0] == '+'])) {
		const char *w = sb.buf + (sb.buf[0] == '-' || sb.buf[0] == '+');
		ok = strcasecmp(w, "inf") == 0 || strcasecmp(w, "infinity") == 0 ||
		     strcasecmp(w, "nan") == 0;
	}
	bg_strbuf_release(&sb);
	return ok;
}

bool bg_value_to_float(const struct bg_value *v, double *out)
{
	if (!v)
		return false;
	if (bg_value_is_pynumber(v)) {
		*out = num(v);
		return true;
	}
	if (v->type == BG_VSTRING)
		return parse_py_float_string(v->u.s, v->n, out);
	return false;
}

bool bg_value_to_int(const struct bg_value *v, long long *out)
{
	if (!v)
		return false;
	if (bg_value_is_pyint(v, out))
		return true;
	if (v->type == BG_VREAL) {
		double d = v->u.d;
		if (!isfinite(d) || fabs(d) >= 9.2e18)
			return false;
		*out = (long long)d;
		return true;
	}
	if (v->type == BG_VSTRING) {
		struct bg_strbuf t = BG_STRBUF_INIT;
		const char *s;
		size_t start, n, k = 0;
		char buf[64];
		char *end;
		bool ok = false;

		py_number_text(&t, v->u.s, v->n, &start, &n);
		s = t.buf;
		if (n == 0)
			goto done;
		for (size_t i = start; i < start + n; i++) {
			if (s[i] == '_' && i > start && i + 1 < start + n && isdigit((unsigned char)s[i - 1]) &&
			    isdigit((unsigned char)s[i + 1]))
				continue;
			if (!isdigit((unsigned char)s[i]) && !(i == start && (s[i] == '+' || s[i] == '-')))
				goto done;
			/* a leading zero gives way to the next digit, so buf holds
			 * only significant ones: int('0' * 70 + '5') is 5 */
			if (k > 0 && buf[k - 1] == '0' && (k == 1 || !isdigit((unsigned char)buf[k - 2])))
				k--;
			if (k + 1 >= sizeof(buf))
				goto done; /* more than 62 significant digits: beyond 64 bits */
			buf[k++] = s[i];
		}
		buf[k] = '\0';
		errno = 0;
		*out = strtoll(buf, &end, 10);
		ok = errno == 0 && *end == '\0' && k > 0 && isdigit((unsigned char)buf[k - 1]);
done:
		bg_strbuf_release(&t);
		return ok;
	}
	return false;
}

bool bg_value_int_text(const struct bg_value *v, struct bg_strbuf *out)
{
	struct bg_strbuf t = BG_STRBUF_INIT;
	size_t start, n, nd = 0, at = out->len;
	bool neg = false, ok = false;
	long long i;

	if (bg_value_to_int(v, &i)) {
		bg_strbuf_addf(out, "%lld", i);
		return true;
	}
	if (v && v->type == BG_VREAL) { /* a finite float is an integer exactly, printed so */
		if (!isfinite(v->u.d))
			return false;
		bg_strbuf_addf(out, "%.0f", bg_trunc(v->u.d));
		return true;
	}
	if (!v || v->type != BG_VSTRING)
		return false;
	py_number_text(&t, v->u.s, v->n, &start, &n);
	for (size_t k = start; k < start + n; k++) {
		char c = t.buf[k];
		if (k == start && (c == '+' || c == '-')) {
			neg = c == '-';
		} else if (c == '_' && nd && k + 1 < start + n && isdigit((unsigned char)t.buf[k + 1])) {
			continue;
		} else if (!isdigit((unsigned char)c) || ++nd > 4300) {
			goto done;
		} else if (c != '0' || out->len > at + neg) {
			if (neg && out->len == at)
				bg_strbuf_addch(out, '-');
			bg_strbuf_addch(out, c);
		}
	}
	ok = nd > 0;
	if (ok && out->len == at)
		bg_strbuf_addch(out, '0');
done:
	if (!ok)
		bg_strbuf_setlen(out, at);
	bg_strbuf_release(&t);
	return ok;
}

static int cmp_key(const void *a, const void *b)
{
	return bg_value_strcmp_cp(*(const char *const *)a, *(const char *const *)b);
}

const char **bg_value_sorted_keys(const struct bg_value *obj, size_t *count)
{
	size_t n = bg_value_size(obj);
	const char **keys = bg_xcalloc(n ? n : 1, sizeof(*keys));

	if (bg_value_is_object(obj))
		for (size_t i = 0; i < n; i++)
			keys[i] = obj->u.members[i].key;
	qsort(keys, n, sizeof(*keys), cmp_key);
	*count = n;
	return keys;
}
