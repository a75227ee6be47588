/*
 * value_internal.h - what the three parts of the JSON DOM share: value.c
 * (arena, values, objects and their index), value_parse.c (the parser)
 * and value_py.c (dump, str, repr and comparisons as CPython does them).
 * Library-internal; see benchgate/value.h for the contract.
 */
#ifndef BG_CORE_VALUE_INTERNAL_H
#define BG_CORE_VALUE_INTERNAL_H

#include "benchgate/value.h"
#include "core/bytes.h"

#include <stdint.h>
#include <string.h>

struct arena_block {
	struct arena_block *next;
	size_t size;   /* bytes of data ready for use: faulted in ahead (value.c) */
	size_t cap;    /* usable bytes in data */
	size_t used;
	size_t mapped; /* bytes mapped with mmap (the whole block), or 0 when malloc'ed */
	_Alignas(16) unsigned char data[];
};

struct bg_arena {
	struct arena_block *head;
	size_t total;
};

/* The free blocks of 2^order pages that text, the contents of
 * /proc/buddyinfo, lists over all its zones: a free block of a higher order
 * counts as the blocks of this order it holds. Lines it cannot read count
 * nothing; the sum saturates at SIZE_MAX. */
size_t bg_buddy_free_blocks(const char *text, unsigned order);

/* bg_arena_alloc when the current block has no room (or there is none). */
void *bg_arena_alloc_slow(struct bg_arena *a, size_t size);

/* bg_arena_alloc, its common case inline: the parser allocates per value. */
static inline void *arena_alloc(struct bg_arena *a, size_t size)
{
	struct arena_block *b = a->head;
	size_t n = size ? (size + 7) & ~(size_t)7 : 8;

	if (b && b->size - b->used >= n) {
		void *p = b->data + b->used;
		b->used += n;
		return p;
	}
	return bg_arena_alloc_slow(a, size);
}

/* Objects up to this size are searched linearly, bigger ones through a hash
 * index. A registry's gates have 12 to 14 members and an evidence row 35 to
 * 51; at 100,000 gates 32 (instead of 8) validates 4-5% faster in 5% less
 * memory (docs/performance.md). */
#define SMALL_OBJECT 32

/* bg_value.flags */
#define F_GROW 1u     /* container storage is growable (its capacity before it) */
#define F_IDX8 2u     /* an object's index has one byte a slot */
#define F_LEFT_OUT 4u /* an object a keep list built without some of its members */

/* The one null, true and false: parsed literals point at them. */
extern struct bg_value bg_value_null_v, bg_value_true_v, bg_value_false_v;

/* The member hash of a key. */
static inline uint32_t hash_key(const char *s, size_t n)
{
	return bg_hash_bytes(s, n);
}

/* A zeroed value of type t in the arena. */
static inline struct bg_value *new_value(struct bg_arena *a, enum bg_vtype t)
{
	struct bg_value *v = arena_alloc(a, sizeof(*v));

	memset(v, 0, sizeof(*v));
	v->type = (uint8_t)t;
	return v;
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

static inline struct bg_member *alloc_members(struct bg_arena *a, size_t cap)
{
	struct obj_hdr *h = arena_alloc(a, sizeof(*h) + (cap ? cap : 1) * sizeof(struct bg_member));

	h->index = NULL;
	h->cap = cap;
	return (struct bg_member *)(void *)(h + 1);
}

/* Builds obj's index from scratch (room: members it should hold without
 * a rebuild), folding duplicate keys: first position, last value. */
void bg_value_build_index(struct bg_arena *a, struct bg_value *obj, size_t room);

#endif
