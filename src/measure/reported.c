/*
 * reported.c - the reported-timing file (DESIGN.md, docs/measure.md): what a
 * command measured itself and wrote to the file named by $BENCHGATE_RESULT,
 *   {"samples_seconds": [s, ...], "metrics": {"name": number, ...}}
 * read strictly, since its numbers become the session's timings: every
 * sample a number of seconds from 0 to 1e9 (at least one), every metric a
 * number from -1e150 to 1e150 (so that every statistic stays finite), no
 * other field. See measure.h for the contracts.
 */
#include "benchgate/json.h"
#include "benchgate/measure.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Bounds that keep a session's memory and store in proportion: every sample
 * is kept in the run record, the store and the statistics.
 */
#define MAX_SAMPLES 1000000
#define MAX_FILE_BYTES ((long long)64 << 20)

/*
 * Bounds that keep every statistic finite: a sample becomes nanoseconds and
 * a metric's mean and standard deviation sum squares, so a huge but finite
 * number would turn them into infinities, which JSON cannot hold (the
 * statistic would vanish and the session keep no timing).
 */
#define MAX_SAMPLE_SECONDS 1e9 /* 31 years */
#define MAX_METRIC 1e150

static bool finite_number(const json_t *v, double bound)
{
	return json_is_number(v) && isfinite(json_number_value(v)) && fabs(json_number_value(v)) <= bound;
}

int bg_reported_check(const json_t *doc, const char *display, json_t **samples, json_t **metrics,
		      struct bg_ctx *ctx)
{
	const json_t *sv = json_object_get(doc, "samples_seconds"), *mv = json_object_get(doc, "metrics"), *x;
	const char *key;
	size_t i;

	*samples = *metrics = NULL;
	if (bg_json_expect_object(doc, display, ctx))
		return BG_ECHECK;
	json_object_foreach((json_t *)doc, key, x)
		if (strcmp(key, "samples_seconds") != 0 && strcmp(key, "metrics") != 0)
			return bg_error(ctx, BG_ECHECK, "%s: no field '%s' (its fields: samples_seconds, metrics)",
					display, key);
	if (!json_is_array(sv) || json_array_size(sv) == 0)
		return bg_error(ctx, BG_ECHECK, "%s: 'samples_seconds' must be a non-empty list of seconds",
				display);
	if (json_array_size(sv) > MAX_SAMPLES)
		return bg_error(ctx, BG_ECHECK,
				"%s: %zu samples; a run may report at most %d (aggregate repetitions in the program)",
				display, json_array_size(sv), MAX_SAMPLES);
	json_array_foreach(sv, i, x)
		if (!finite_number(x, MAX_SAMPLE_SECONDS) || json_number_value(x) < 0)
			return bg_error(ctx, BG_ECHECK,
					"%s: samples_seconds[%zu] must be a number of seconds from 0 to 1e9", display, i);
	if (mv && !json_is_object(mv))
		return bg_error(ctx, BG_ECHECK, "%s: 'metrics' must be an object of names and numbers", display);
	json_object_foreach((json_t *)mv, key, x) {
		if (!*key)
			return bg_error(ctx, BG_ECHECK, "%s: a metric needs a name", display);
		if (!finite_number(x, MAX_METRIC))
			return bg_error(ctx, BG_ECHECK, "%s: metric '%s' must be a finite number from -1e150 to 1e150",
					display, key);
	}
	*samples = json_array();
	json_array_foreach(sv, i, x)
		json_array_append_new(*samples, json_real(json_number_value(x) + 0.0)); /* -0.0 is 0 */
	*metrics = mv ? json_deep_copy(mv) : json_object();
	return BG_OK;
}

int bg_reported_read(const char *path, const char *display, json_t **samples, json_t **metrics,
		     struct bg_ctx *ctx)
{
	struct bg_strbuf text = BG_STRBUF_INIT;
	json_t *doc = NULL;
	struct stat st;
	char buf[65536];
	ssize_t n;
	int rc = BG_OK, fd;

	*samples = *metrics = NULL;
	/* the command made it: a FIFO is never waited on (O_NONBLOCK opens one
	 * at once) nor a device read, and no more than the limit is read */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return bg_error(ctx, BG_EIO, "%s: cannot read: %s", display, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return bg_error(ctx, BG_ECHECK, "%s: not a regular file (%s); the command must write its result as a "
				"file at that path", display,
				S_ISDIR(st.st_mode) ? "a folder" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a device or socket");
	}
	if ((long long)st.st_size > MAX_FILE_BYTES) {
		close(fd);
		return bg_error(ctx, BG_ECHECK, "%s: %lld bytes; a result file may hold at most 64 MiB", display,
				(long long)st.st_size);
	}
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = bg_error(ctx, BG_EIO, "%s: cannot read: %s", display, strerror(errno));
			break;
		}
		if ((long long)text.len + n > MAX_FILE_BYTES) { /* grown since fstat */
			rc = bg_error(ctx, BG_ECHECK, "%s: more than 64 MiB; a result file may hold at most 64 MiB",
				      display);
			break;
		}
		bg_strbuf_addn(&text, buf, (size_t)n);
	}
	close(fd);
	if (rc == BG_OK)
		rc = bg_json_load_buffer_unique(text.buf ? text.buf : "", text.len, display, &doc, ctx);
	if (rc == BG_OK)
		rc = bg_reported_check(doc, display, samples, metrics, ctx);
	bg_strbuf_release(&text);
	json_decref(doc);
	return rc;
}
