/*
 * format.c - durations and sizes as people read them (see format.h).
 */
#include "benchgate/format.h"

#include <math.h>

static const char *const duration_names[] = {"ns", "us", "ms", "s"};
static const double duration_factors[] = {1, 1e3, 1e6, 1e9};
static const int duration_decimals[] = {0, 1, 2, 3};

static const char *const bytes_names[] = {"B", "KiB", "MiB", "GiB"};
static const double bytes_factors[] = {1, 1024.0, 1024.0 * 1024, 1024.0 * 1024 * 1024};
/* three decimals of MiB: a 1% envelope of a 1 MiB peak shows */
static const int bytes_decimals[] = {0, 2, 3, 3};

/*
 * The largest of the n units in which v's magnitude, as printed with that
 * unit's decimals, is at least 1 (each factor a multiple of the one before).
 */
static struct bg_unit pick(double v, const char *const *names, const double *factors, const int *decimals,
			   int n)
{
	int u = 0;

	for (int k = 1; k < n; k++) {
		double p = 1;

		for (int d = 0; d < decimals[k - 1]; d++)
			p *= 10;
		/* past the next unit once rounding in this one would print 1000 or 1024 */
		if (fabs(v) / factors[k - 1] * p + 0.5 >= factors[k] / factors[k - 1] * p)
			u = k;
	}
	return (struct bg_unit){names[u], factors[u], decimals[u]};
}

struct bg_unit bg_format_duration_unit(double ns)
{
	return pick(ns, duration_names, duration_factors, duration_decimals, 4);
}

struct bg_unit bg_format_bytes_unit(double bytes)
{
	return pick(bytes, bytes_names, bytes_factors, bytes_decimals, 4);
}

static void put(struct bg_strbuf *out, const json_t *v, struct bg_unit (*unit)(double))
{
	struct bg_unit u;
	double x;

	if (!json_is_number(v)) {
		bg_strbuf_adds(out, "n/a");
		return;
	}
	x = json_number_value(v);
	u = unit(x);
	bg_strbuf_addf(out, "%.*f %s", u.decimals, x / u.factor, u.name);
}

void bg_format_duration(struct bg_strbuf *out, const json_t *ns)
{
	put(out, ns, bg_format_duration_unit);
}

void bg_format_bytes(struct bg_strbuf *out, const json_t *bytes)
{
	put(out, bytes, bg_format_bytes_unit);
}
