/*
 * value.h - benchgate's own JSON DOM: an arena-allocated document with a fast
 * strict parser and the Python-compatible serialisers the registry verbs need.
 *
 * Ownership: every value lives in a struct bg_arena; nothing is freed node by
 * node, bg_arena_free releases a whole document (and every value built in the
 * same arena) at once. Values are borrowed pointers valid until then.
 *
 * Parsing (bg_value_parse*) is RFC 8259, as jansson and Python's json.loads
 * agree, with Python's numbers:
 *  - no trailing commas, comments or leading zeros;
 *  - NaN, Infinity and -Infinity are reals, and a real beyond a double's
 *    range is an infinity (Python reads 1e400 as inf), unless the caller
 *    asks for BG_VALUE_FINITE (then "NaN is not a number this file takes;
 *    write a finite number" and, as jansson, "real number overflow");
 *  - strings must be valid UTF-8 (no overlongs, no encoded surrogates, no
 *    code point above U+10FFFF) without raw control characters (< 0x20);
 *  - "\u0000" is rejected cleanly (Python would accept it; strings here
 *    are C strings, as with jansson, which rejects it too); a lone
 *    surrogate escape ("\ud800" without its pair) is kept as the three
 *    bytes UTF-8 would give its code point (bg_value_surrogate_find), as
 *    Python keeps it in a str, unless the caller asks for BG_VALUE_FINITE
 *    (then "invalid Unicode '\uD800'", as jansson);
 *  - integers (no fraction, no exponent) are int64 (BG_VINT); one beyond
 *    64 bits is kept as its decimal text (BG_VBIGINT), as Python's int
 *    keeps it, up to Python's 4,300 digits ("too big integer: more than
 *    4300 digits, which Python's json refuses"); BG_VALUE_FINITE refuses
 *    any beyond 64 bits ("too big integer", as jansson); reals are doubles
 *    rounded as strtod rounds;
 *  - objects keep insertion order; a duplicate key keeps the first position
 *    and the last value (Python's dict semantics), unless the caller asks
 *    for BG_VALUE_REJECT_DUPLICATES (bg_value_parse_file_flags);
 *  - nesting deeper than BG_VALUE_MAX_DEPTH is an error.
 * Errors read "DISPLAY:LINE:COL: invalid JSON: what near 'token'" in
 * jansson's words; LINE:COL is where the offending token ends (1-based,
 * columns counted in code points); bytes that are not printable UTF-8 are
 * shown as \xNN. Documents of 4 GiB or more are refused.
 *
 * Object lookup is linear for small objects (up to 32 members) and uses a
 * hash index, built with the object, for larger ones. Member keys of a
 * parsed document are interned (one copy of each distinct key text).
 * NULL stands for a missing key everywhere: every accessor accepts NULL and
 * values of the wrong type.
 *
 * Not thread-safe: an arena and its values belong to one thread at a time.
 */
#ifndef BENCHGATE_VALUE_H
#define BENCHGATE_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "benchgate/status.h"
#include "benchgate/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BG_VALUE_MAX_DEPTH 1000

/* An allocation arena: bump allocation in large blocks, freed at once. */
struct bg_arena;

/* A new empty arena (never NULL: allocation failure aborts as bg_xmalloc). */
struct bg_arena *bg_arena_new(void);
/* Frees the arena and everything allocated in it. NULL is ignored. */
void bg_arena_free(struct bg_arena *a);
/* size bytes, 8-byte aligned, uninitialised, valid until bg_arena_free. */
void *bg_arena_alloc(struct bg_arena *a, size_t size);
/* A NUL-terminated copy of s[0..n) in the arena. */
char *bg_arena_strndup(struct bg_arena *a, const char *s, size_t n);
/* Bytes currently reserved by the arena (for diagnostics). */
size_t bg_arena_bytes(const struct bg_arena *a);

enum bg_vtype {
	BG_VNULL,
	BG_VFALSE,
	BG_VTRUE,
	BG_VINT,
	BG_VREAL,
	BG_VSTRING,
	BG_VARRAY,
	BG_VOBJECT,
	BG_VBIGINT, /* an integer beyond 64 bits: u.s its decimal text, n its length */
};

struct bg_value;

/* One object member: key (NUL-terminated UTF-8), its length and hash. */
struct bg_member {
	const char *key;
	uint32_t klen;
	uint32_t hash;
	struct bg_value *value;
};

struct bg_value {
	uint8_t type;   /* enum bg_vtype */
	uint8_t flags;  /* internal: container storage is growable */
	uint16_t pad_;  /* internal */
	uint32_t n;     /* string length in bytes; array/object element count */
	union {
		int64_t i;
		double d;
		const char *s;              /* NUL-terminated (a string, or a big integer's digits) */
		struct bg_value **items;    /* array */
		struct bg_member *members;  /* object, insertion order (internal header before it) */
	} u;
};

/* ---- parsing ---- */

/*
 * Parses data[0..len) into a value allocated in arena (the strings the
 * values hold are copied into the arena; data is not kept). display names the text in
 * messages. Errors: BG_ECHECK "DISPLAY: file is empty; expected a JSON
 * object" for an empty text, "DISPLAY:LINE:COL: invalid JSON: ..." otherwise.
 * *out is NULL on error; what was allocated stays in the arena.
 */
int bg_value_parse(struct bg_arena *arena, const char *data, size_t len, const char *display,
		   struct bg_value **out, struct bg_ctx *ctx);
/*
 * The same for a file, read whole or mapped (bg_file_view; display, or
 * path when NULL, in messages). Errors: BG_EIO "DISPLAY: cannot read: ..." and those of
 * bg_value_parse.
 */
int bg_value_parse_file(struct bg_arena *arena, const char *path, const char *display,
			struct bg_value **out, struct bg_ctx *ctx);
/*
 * Parse flags for bg_value_parse_file_flags.
 * BG_VALUE_REJECT_DUPLICATES: an object that repeats a key, at any depth, is
 * the error BG_ECHECK "DISPLAY:LINE:COL: duplicate key 'KEY' (first at
 * LINE:COL); remove one of them", placed at the opening quote of the first
 * repeat in the text, however deep (for
 * files a person writes, benchgate.json: there a repeat is a mistake). It
 * costs nothing on documents without repeats; the other readers keep
 * Python's semantics, which the reference tools rely on.
 */
#define BG_VALUE_REJECT_DUPLICATES 1u
/*
 * BG_VALUE_FINITE: NaN, Infinity, -Infinity, reals beyond a double's range,
 * integers beyond 64 bits and lone surrogate escapes are errors, as in
 * jansson (for benchgate's own files, where such a value is a mistake, and
 * whose texts go into records jansson writes); by default they are read as
 * Python's json reads them.
 */
#define BG_VALUE_FINITE 2u
/* bg_value_parse_file with flags (BG_VALUE_*, or 0: the same). */
int bg_value_parse_file_flags(struct bg_arena *arena, const char *path, const char *display,
			      unsigned flags, struct bg_value **out, struct bg_ctx *ctx);
/*
 * Which members of a document to build, for readers that need a few fields
 * of a big file: a list of keys ended by {NULL, NULL}. A kept member whose
 * entry has members != NULL is filtered the same way with that list when
 * its value is an object, or for each object among its elements when it is
 * an array (arrays within arrays too); members == NULL keeps it whole.
 */
struct bg_value_keep {
	const char *key;
	const struct bg_value_keep *members;
};
/*
 * bg_value_parse_file, building only the members keep names (keep applies
 * to the top-level value as members applies above; NULL keeps everything).
 * The members left out are checked exactly as strictly: a document fails
 * with the same message here as with bg_value_parse_file. Duplicate keys
 * among kept members keep their Python semantics.
 */
int bg_value_parse_file_keep(struct bg_arena *arena, const char *path, const char *display,
			     const struct bg_value_keep *keep, struct bg_value **out,
			     struct bg_ctx *ctx);
/* True when v is an object that a keep list built without some of its
 * members (bg_value_parse_file_keep): an empty such object was not empty in
 * the text. False for anything else. */
bool bg_value_kept_partly(const struct bg_value *v);
/* bg_value_parse building only the members keep names (as above). */
int bg_value_parse_keep(struct bg_arena *arena, const char *data, size_t len, const char *display,
			const struct bg_value_keep *keep, struct bg_value **out, struct bg_ctx *ctx);
/* BG_ECHECK with "DISPLAY: top level must be a JSON object" unless it is one. */
int bg_value_expect_object(const struct bg_value *v, const char *display, struct bg_ctx *ctx);

/* ---- access (NULL-safe; wrong types read as empty/zero/NULL) ---- */

static inline bool bg_value_is_object(const struct bg_value *v) { return v && v->type == BG_VOBJECT; }
static inline bool bg_value_is_array(const struct bg_value *v) { return v && v->type == BG_VARRAY; }
static inline bool bg_value_is_string(const struct bg_value *v) { return v && v->type == BG_VSTRING; }
static inline bool bg_value_is_integer(const struct bg_value *v) { return v && v->type == BG_VINT; }
static inline bool bg_value_is_real(const struct bg_value *v) { return v && v->type == BG_VREAL; }
/* An integer beyond 64 bits (bg_value_is_integer is false for it). */
static inline bool bg_value_is_bigint(const struct bg_value *v) { return v && v->type == BG_VBIGINT; }
static inline bool bg_value_is_number(const struct bg_value *v)
{
	return v && (v->type == BG_VINT || v->type == BG_VREAL || v->type == BG_VBIGINT);
}
static inline bool bg_value_is_null(const struct bg_value *v) { return v && v->type == BG_VNULL; }
static inline bool bg_value_is_true(const struct bg_value *v) { return v && v->type == BG_VTRUE; }
static inline bool bg_value_is_false(const struct bg_value *v) { return v && v->type == BG_VFALSE; }
static inline bool bg_value_is_boolean(const struct bg_value *v)
{
	return v && (v->type == BG_VTRUE || v->type == BG_VFALSE);
}
/* Element count of an array or object; 0 for anything else. */
static inline size_t bg_value_size(const struct bg_value *v)
{
	return v && (v->type == BG_VARRAY || v->type == BG_VOBJECT) ? v->n : 0;
}
/* The string's bytes (NUL-terminated), or NULL when v is not a string. */
static inline const char *bg_value_str(const struct bg_value *v)
{
	return v && v->type == BG_VSTRING ? v->u.s : NULL;
}
/* The string's length in bytes; 0 when v is not a string. */
static inline size_t bg_value_len(const struct bg_value *v)
{
	return v && v->type == BG_VSTRING ? v->n : 0;
}
/* The integer, or 0 when v is not an integer. */
static inline int64_t bg_value_int(const struct bg_value *v)
{
	return v && v->type == BG_VINT ? v->u.i : 0;
}
/* The real, or 0.0 when v is not a real. */
static inline double bg_value_real(const struct bg_value *v)
{
	return v && v->type == BG_VREAL ? v->u.d : 0.0;
}
/* Element i of an array (borrowed), or NULL. */
static inline struct bg_value *bg_value_at(const struct bg_value *v, size_t i)
{
	return v && v->type == BG_VARRAY && i < v->n ? v->u.items[i] : NULL;
}
/* The member of an object with that key (borrowed), or NULL. */
struct bg_value *bg_value_get(const struct bg_value *obj, const char *key);
/* The same for a key of klen bytes (not necessarily NUL-terminated). */
struct bg_value *bg_value_getn(const struct bg_value *obj, const char *key, size_t klen);

#define BG_VALUE_CAT_(a, b) a##b
#define BG_VALUE_CAT(a, b) BG_VALUE_CAT_(a, b)
/* for each element: i (size_t) and v (struct bg_value *); no element at all
 * for anything but an array (an object's members are not elements) */
#define BG_VALUE_ARRAY_FOREACH(arr, i, v)                                                    \
	for ((i) = 0; bg_value_is_array(arr) && (i) < (arr)->n && ((v) = (arr)->u.items[(i)], (void)(v), 1); (i)++)
/* for each member in insertion order: k (const char *) and v (struct bg_value *);
 * no member at all for anything but an object */
#define BG_VALUE_OBJECT_FOREACH(obj, k, v)                                                   \
	for (size_t BG_VALUE_CAT(bg_i_, __LINE__) = 0;                                       \
	     bg_value_is_object(obj) && BG_VALUE_CAT(bg_i_, __LINE__) < (obj)->n &&          \
	     ((k) = (obj)->u.members[BG_VALUE_CAT(bg_i_, __LINE__)].key,                     \
	      (v) = (obj)->u.members[BG_VALUE_CAT(bg_i_, __LINE__)].value, (void)(k), (void)(v), 1); \
	     BG_VALUE_CAT(bg_i_, __LINE__)++)

/*
 * Projection: fetching many fixed fields of many objects at once. Prepare
 * once with the field names (borrowed: they must outlive the projection,
 * e.g. string literals); bg_value_project then fills out[i] with the value
 * of names[i] in obj, or NULL when absent (also when obj is not an object),
 * in one pass over obj's members, without hashing any key. The projection
 * remembers the addresses of key texts it matched (a speed-up only), so it
 * is not const and must not outlive the arenas of the objects it saw.
 */
#define BG_VALUE_PROJ_MAX 64
struct bg_value_proj {
	const char *const *names;
	size_t count;
	uint32_t hash[BG_VALUE_PROJ_MAX];
	uint32_t len[BG_VALUE_PROJ_MAX];
	uint8_t slot[256]; /* hash & 255 -> name index + 1, open addressing */
	const char *seen[BG_VALUE_PROJ_MAX]; /* key text last matched (interned keys repeat) */
};
/* count must be at most BG_VALUE_PROJ_MAX and names distinct. */
void bg_value_proj_init(struct bg_value_proj *p, const char *const *names, size_t count);
void bg_value_project(struct bg_value_proj *p, const struct bg_value *obj, struct bg_value **out);

/* ---- construction (everything in the arena; strings are copied) ---- */

/* Shared immutable singletons: never modify them. */
struct bg_value *bg_value_null(void);
struct bg_value *bg_value_true(void);
struct bg_value *bg_value_false(void);
struct bg_value *bg_value_new_int(struct bg_arena *a, int64_t i);
struct bg_value *bg_value_new_real(struct bg_arena *a, double d);
/* The integer whose decimal text (bg_bigint form: '-', then digits without
 * leading zeros) is digits: a BG_VINT when it fits in 64 bits, else a
 * BG_VBIGINT holding a copy of the text. */
struct bg_value *bg_value_new_int_text(struct bg_arena *a, const char *digits);
struct bg_value *bg_value_new_string(struct bg_arena *a, const char *s);
struct bg_value *bg_value_new_stringn(struct bg_arena *a, const char *s, size_t n);
/* A string value over s[0..n) without copying: s[n] must be '\0' and s must
 * live as long as the arena (arena memory, or static). */
struct bg_value *bg_value_new_string_shared(struct bg_arena *a, const char *s, size_t n);
/* An empty array/object; capacity is a hint. */
struct bg_value *bg_value_new_array(struct bg_arena *a, size_t capacity);
struct bg_value *bg_value_new_object(struct bg_arena *a, size_t capacity);
/* Appends v (borrowed, not copied) to an array. */
void bg_value_append(struct bg_arena *a, struct bg_value *arr, struct bg_value *v);
/*
 * Sets key (copied into the arena) to v: replaces the value in place when the key exists (position kept),
 * else appends. v is borrowed (not copied).
 */
void bg_value_set(struct bg_arena *a, struct bg_value *obj, const char *key, struct bg_value *v);
/* Appends a member whose key the caller knows is not present yet; key must
 * outlive the arena (a literal, or arena memory). For building big objects
 * fast: it does not build the hash index; call bg_value_index when done
 * (lookups stay correct meanwhile, only linear). */
void bg_value_set_new_key(struct bg_arena *a, struct bg_value *obj, const char *key,
			  struct bg_value *v);
/* Builds obj's hash index when it is big enough to need one and has none. */
void bg_value_index(struct bg_arena *a, struct bg_value *obj);
/* dict.update: every member of src set on dst in src order (values shared). */
void bg_value_update(struct bg_arena *a, struct bg_value *dst, const struct bg_value *src);
/* dict(base) updated with over, as a new object (values shared): base's
 * members in order, a key over has too taking over's value there, then
 * over's other members in order. Either may be NULL or not an object (no
 * members). Neither may hold a key twice (a parsed object never does). */
struct bg_value *bg_value_merged(struct bg_arena *a, const struct bg_value *base,
				 const struct bg_value *over);
/* A shallow copy of an object or array (members shared) with room for that
 * many more elements; other values are returned as they are. */
struct bg_value *bg_value_copy(struct bg_arena *a, const struct bg_value *v, size_t room);

/* ---- Python-compatible text ---- */

/* The value of a Unicode decimal digit (general category Nd, Unicode 14.0,
 * ASCII '0'..'9' among them) as Python's int() reads it; -1 for any other. */
int bg_py_decimal(unsigned long cp);
/* CPython's _PyUnicode_TransformDecimalAndSpaceToASCII, which int() and
 * float() apply to text first: a non-ASCII decimal digit becomes its ASCII
 * digit, non-ASCII whitespace a space, any other non-ASCII character (or a
 * byte that is no UTF-8) '?'. Appended to out. */
void bg_py_number_ascii(struct bg_strbuf *out, const char *s, size_t len);

/* json.dumps(v, indent=indent, sort_keys=sort_keys) (ensure_ascii);
 * indent < 0: compact with ", " and ": " separators. */
void bg_value_dump(struct bg_strbuf *out, const struct bg_value *v, int indent, bool sort_keys);
/* str(v) of the Python value (NULL: None). */
void bg_value_py_str(struct bg_strbuf *out, const struct bg_value *v);
/* repr(v) (NULL: None). */
void bg_value_py_repr(struct bg_strbuf *out, const struct bg_value *v);
/* Python truthiness (NULL: None, false). */
bool bg_value_truthy(const struct bg_value *v);
/* Python ==: integers, reals and booleans compare by value, containers
 * deeply; a NaN is not equal to itself, except as an item of two containers
 * (where Python sees one object: json reads every NaN as the same float). */
bool bg_value_equal(const struct bg_value *a, const struct bg_value *b);
/* Python's == where a container or a tuple compares its items
 * (PyObject_RichCompareBool): bg_value_equal, and a NaN equals a NaN. */
bool bg_value_py_same(const struct bg_value *a, const struct bg_value *b);
/* Python's a < b: 1, 0, or -1 where Python raises TypeError (two kinds
 * that never compare; None or objects among themselves). Lists compare at
 * their first items that are not the same (bg_value_py_same), then by
 * length; a NaN is below and above nothing. */
int bg_value_py_lt(const struct bg_value *a, const struct bg_value *b);
/* Appends a key that is the same for two values exactly when a Python set or
 * dict key sees one value (1, 1.0 and true alike; "1" apart; null one key);
 * false, sb unchanged, for a list or an object, which Python cannot hash. */
bool bg_value_py_key(struct bg_strbuf *sb, const struct bg_value *v);
/* Which values Python's < can order against each other, as a rank
 * bg_value_cmp uses: 0 None (NULL too), 1 numbers (bool, int, float), 2
 * texts, 3 lists (item by item), 4 objects. Values of two ranks never
 * compare; None and objects not even among themselves (unless equal). */
int bg_value_order_rank(const struct bg_value *v);
/* Python a < b ordering: <0, 0, >0; *type_error set when Python would raise TypeError. */
int bg_value_cmp(const struct bg_value *a, const struct bg_value *b, bool *type_error);
/* isinstance(v, (int, float)): integers, reals and booleans. */
bool bg_value_is_pynumber(const struct bg_value *v);
/* isinstance(v, int): integers (big ones too) and booleans; the value in
 * *out when out is not NULL, LLONG_MIN or LLONG_MAX for a big integer (its
 * sign kept, so range checks such as `x > 0` still hold). */
bool bg_value_is_pyint(const struct bg_value *v, long long *out);
/* float(v): numbers, bools, numeric strings; false when Python raises (a
 * big integer beyond a double's range too). */
bool bg_value_to_float(const struct bg_value *v, double *out);
/* int(v): ints, bools, floats (truncated), integer strings; false when Python
 * raises, and when the int is beyond 64 bits (bg_value_int_text has it). */
bool bg_value_to_int(const struct bg_value *v, long long *out);
/* int(v) of any size (up to CPython's 4300 digits for a text) as decimal
 * text appended to out: an optional '-', then digits without leading
 * zeros ("0" for zero). False, out unchanged, when Python raises. */
bool bg_value_int_text(const struct bg_value *v, struct bg_strbuf *out);
/* Whether str(v).strip() is empty. */
bool bg_value_str_blank(const struct bg_value *v);
/* repr(s) of a Python str holding the UTF-8 text s[0..len). */
void bg_value_repr_string(struct bg_strbuf *out, const char *s, size_t len);
/*
 * The offset in s[0..len) of the first lone surrogate a parsed string
 * keeps (a \ud800 escape without its pair, which Python's json keeps too),
 * or len when there is none. UTF-8 cannot encode one: where Python would
 * print it, or write it to a text file, it raises.
 */
size_t bg_value_surrogate_find(const char *s, size_t len);
/*
 * Appends why s[0..len) cannot be written as text, for a message:
 * "line N, 'LINE', holds the lone surrogate '\udXXX' ...", at the offset
 * bg_value_surrogate_find gave; first_line is the number of s's first
 * line (1 for a whole text).
 */
void bg_value_surrogate_say(struct bg_strbuf *out, const char *s, size_t len, size_t at, size_t first_line);
/*
 * Whether Python's print() writes a lone surrogate from U+DC80 to U+DCFF
 * as the byte 0x80 to 0xFF it stands for (its standard streams' error
 * handler is then "surrogateescape") instead of raising: so it does in
 * UTF-8 mode (pythonutf8 "1", the PYTHONUTF8 variable) and where its
 * LC_CTYPE locale (ctype: what setlocale(LC_CTYPE, "") gave, NULL when it
 * failed and C stayed) is C, POSIX or one it coerces C to (C.UTF-8,
 * C.utf8, UTF-8), as in most containers; under any other locale it raises.
 */
bool bg_value_py_stdio_escapes(const char *ctype, const char *pythonutf8);
/*
 * Appends Python's repr of the list of names (NULL-terminated, in the order
 * given) that obj lacks, e.g. "['owner', 'tier']"; returns how many.
 */
size_t bg_value_missing_list(struct bg_strbuf *out, const struct bg_value *obj, const char *const *names);
/* A JSON string literal as json.dumps writes it (ensure_ascii: \uXXXX, surrogate pairs). */
void bg_value_json_string(struct bg_strbuf *out, const char *s, size_t len);
/* repr(x) of a Python float (shortest round-trip digits). */
void bg_value_float_repr(struct bg_strbuf *out, double x);
/* strcmp by unsigned bytes: code-point order for UTF-8. */
int bg_value_strcmp_cp(const char *a, const char *b);
/* Object keys in code-point order; the caller frees the array (not the keys). */
const char **bg_value_sorted_keys(const struct bg_value *obj, size_t *count);

#ifdef __cplusplus
}
#endif

#endif
