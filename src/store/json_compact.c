/*
 * json_compact.c - the store's compact JSON writer for jansson values: what
 * json_dumps(v, JSON_COMPACT) writes (reals as %.17g, which reads back
 * exactly), faster than jansson's callback-based dump: a session of 1000
 * runs writes 1000 records. Bytes go straight into the buffer (grown once
 * per item), integers are formatted without printf, and so are reals that
 * hold an integer below 1e15 (what %.17g writes for them, plus ".0"); other
 * reals still go through %.17g. See store/json_compact.h.
 */
#include "store/json_compact.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

void bg_store_json_string(struct bg_strbuf *out, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t k = 0;
	char *p;

	bg_strbuf_grow(out, n + 2);
	p = out->buf + out->len;
	*p++ = '"';
	/* most strings need no escape: copy the plain run in one go */
	while (k < n && (unsigned char)s[k] >= 0x20 && s[k] != '"' && s[k] != '\\')
		k++;
	memcpy(p, s, k);
	p += k;
	for (; k < n; k++) {
		unsigned char c = (unsigned char)s[k];

		if (c >= 0x20 && c != '"' && c != '\\') {
			*p++ = (char)c;
			continue;
		}
		/* an escape takes up to 6 bytes for 1: make room for the rest too */
		out->len = (size_t)(p - out->buf);
		bg_strbuf_grow(out, 6 + (n - k) + 1);
		p = out->buf + out->len;
		*p++ = '\\';
		switch (c) {
		case '"':
		case '\\':
			*p++ = (char)c;
			break;
		case '\n':
			*p++ = 'n';
			break;
		case '\t':
			*p++ = 't';
			break;
		case '\r':
			*p++ = 'r';
			break;
		default:
			*p++ = 'u';
			*p++ = '0';
			*p++ = '0';
			*p++ = hex[c >> 4];
			*p++ = hex[c & 15];
			break;
		}
	}
	*p++ = '"';
	out->len = (size_t)(p - out->buf);
	out->buf[out->len] = '\0';
}

/* The decimal digits of v, as printf's %lld writes them. */
static void write_integer(struct bg_strbuf *out, long long v)
{
	char tmp[24], *end = tmp + sizeof(tmp), *q = end;
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

	do {
		*--q = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--q = '-';
	bg_strbuf_addn(out, q, (size_t)(end - q));
}

static void write_real(struct bg_strbuf *out, double v)
{
	size_t at = out->len;

	/* |v| < 1e15 and integral: %.17g writes the integer's digits (no exponent, no point) */
	if (v > -1e15 && v < 1e15 && v == (double)(long long)v && !(v == 0 && signbit(v))) {
		write_integer(out, (long long)v);
		bg_strbuf_addn(out, ".0", 2);
		return;
	}
	bg_strbuf_addf(out, "%.17g", v);
	if (!strpbrk(out->buf + at, ".eEni"))
		bg_strbuf_addn(out, ".0", 2);
}

/* Object o without its members named skip1 and skip2 (either may be NULL). */
void bg_store_json_object(struct bg_strbuf *out, const json_t *o, const char *skip1,
			const char *skip2)
{
	const char *key;
	json_t *item;
	bool first = true;

	bg_store_put_byte(out, '{');
	json_object_foreach((json_t *)o, key, item) {
		if ((skip1 && strcmp(key, skip1) == 0) || (skip2 && strcmp(key, skip2) == 0))
			continue;
		if (!first)
			bg_store_put_byte(out, ',');
		first = false;
		bg_store_json_string(out, key, strlen(key));
		bg_store_put_byte(out, ':');
		bg_store_json_compact(out, item);
	}
	bg_store_put_byte(out, '}');
}

void bg_store_json_compact(struct bg_strbuf *out, const json_t *v)
{
	json_t *item;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		bg_store_json_object(out, v, NULL, NULL);
		break;
	case JSON_ARRAY:
		bg_store_put_byte(out, '[');
		json_array_foreach(v, i, item) {
			if (i)
				bg_store_put_byte(out, ',');
			bg_store_json_compact(out, item);
		}
		bg_store_put_byte(out, ']');
		break;
	case JSON_STRING:
		bg_store_json_string(out, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		write_integer(out, (long long)json_integer_value(v));
		break;
	case JSON_REAL:
		write_real(out, json_real_value(v));
		break;
	case JSON_TRUE:
		bg_strbuf_addn(out, "true", 4);
		break;
	case JSON_FALSE:
		bg_strbuf_addn(out, "false", 5);
		break;
	default:
		bg_strbuf_addn(out, "null", 4);
		break;
	}
}

