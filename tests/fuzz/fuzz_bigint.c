/*
 * fuzz_bigint.c - fuzz target for Python's int beyond 64 bits
 * (src/core/bigint.c), against OpenSSL's BIGNUM: a - b, a // b (BN_div
 * truncates; the floor is one less where the signs differ and the
 * division is not exact), the comparison, and a's magnitude in base 16,
 * 8 and 2. The input's first byte gives the signs and where a's digits
 * end; every later byte is a digit (its value mod 10), leading zeros
 * dropped, at most 4,300 digits a number (the most Python's int() reads
 * from a text). A difference aborts.
 *
 * This target alone links libcrypto: the library loads it at run time
 * (src/core/dynlib.h) and never for arithmetic.
 */
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bigint.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#define MAX_DIGITS 4300

/* The decimal text of digits data[0..n): sign, no leading zeros. */
static void number(struct bg_strbuf *out, const unsigned char *data, size_t n, bool neg)
{
	size_t i = 0;

	while (i < n && data[i] % 10 == 0)
		i++;
	if (n - i > MAX_DIGITS)
		i = n - MAX_DIGITS;
	while (i < n && data[i] % 10 == 0)
		i++;
	if (i == n) {
		bg_strbuf_addch(out, '0');
		return;
	}
	if (neg)
		bg_strbuf_addch(out, '-');
	for (; i < n; i++)
		bg_strbuf_addch(out, (char)('0' + data[i] % 10));
}

static void expect(const char *what, const char *got, const char *want)
{
	if (strcmp(got, want) != 0) {
		fprintf(stderr, "fuzz_bigint: %s: got %s, want %s\n", what, got, want);
		abort();
	}
}

/* |x| in base 2, 8 or 16 from its bits, lower case. */
static void bn_base(struct bg_strbuf *out, const BIGNUM *x, unsigned bits)
{
	int nbits = BN_num_bits(x), ndig = (nbits + (int)bits - 1) / (int)bits;

	if (ndig == 0)
		bg_strbuf_addch(out, '0');
	for (int d = ndig - 1; d >= 0; d--) {
		unsigned v = 0;
		for (int b = (int)bits - 1; b >= 0; b--)
			v = v << 1 | (unsigned)BN_is_bit_set(x, d * (int)bits + b);
		bg_strbuf_addch(out, "0123456789abcdef"[v]);
	}
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct bg_strbuf a = BG_STRBUF_INIT, b = BG_STRBUF_INIT, got = BG_STRBUF_INIT, want = BG_STRBUF_INIT;
	BIGNUM *x = NULL, *y = NULL, *r = BN_new(), *q = BN_new(), *rem = BN_new();
	BN_CTX *bn = BN_CTX_new();
	size_t split;
	char *text;
	int c;

	if (size < 1 || !r || !q || !rem || !bn)
		goto done;
	split = size > 1 ? 1 + (size_t)(data[0] >> 2) * (size - 1) / 64 : 1;
	number(&a, data + 1, split - 1, data[0] & 1);
	number(&b, data + split, size - split, data[0] & 2);
	if (!BN_dec2bn(&x, a.buf) || !BN_dec2bn(&y, b.buf))
		goto done;

	/* a - b */
	bg_bigint_sub(&got, a.buf, b.buf);
	BN_sub(r, x, y);
	text = BN_bn2dec(r);
	expect("a - b", got.buf, text);
	OPENSSL_free(text);

	/* a // b */
	bg_strbuf_reset(&got);
	if (BN_is_zero(y)) {
		if (bg_bigint_floordiv(&got, a.buf, b.buf) || got.len)
			abort();
	} else {
		if (!bg_bigint_floordiv(&got, a.buf, b.buf) || !BN_div(q, rem, x, y, bn))
			abort();
		if (!BN_is_zero(rem) && BN_is_negative(x) != BN_is_negative(y))
			BN_sub_word(q, 1);
		text = BN_bn2dec(q);
		expect("a // b", got.buf, text);
		OPENSSL_free(text);
	}

	/* a < b, a == b */
	c = BN_cmp(x, y);
	if (bg_bigint_cmp(a.buf, b.buf) != (c < 0 ? -1 : c > 0))
		abort();

	/* |a| in base 2, 8 and 16 */
	for (unsigned bits = 1; bits <= 4; bits += bits == 1 ? 2 : 1) {
		bg_strbuf_reset(&got);
		bg_strbuf_reset(&want);
		bg_bigint_to_base(&got, a.buf, 1u << bits, false);
		bn_base(&want, x, bits);
		expect("base", got.buf, want.buf);
	}
done:
	BN_free(x);
	BN_free(y);
	BN_free(r);
	BN_free(q);
	BN_free(rem);
	BN_CTX_free(bn);
	bg_strbuf_release(&a);
	bg_strbuf_release(&b);
	bg_strbuf_release(&got);
	bg_strbuf_release(&want);
	return 0;
}

#define FUZZ_NAME "fuzz_bigint"
#include "replay.h"
