/*
 * runbook.c - what `run` checks of a runbook and of the registry's decision
 * settings before anything is written (see runbook.h): each field of its
 * type and range, and no field the engine would not honour; and the
 * runbook's digest that a session records (lifecycle.h).
 */
#include "lifecycle/runbook.h"

#include "benchgate/decide.h"
#include "benchgate/lifecycle.h"
#include "benchgate/measure.h"
#include "benchgate/sha256.h"
#include "benchgate/strbuf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int bg_lifecycle_runbook_sha256(const json_t *rb, char hex[65], struct bg_ctx *ctx)
{
	char *text = json_dumps(rb ? rb : json_null(),
				JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
	int rc;

	if (!text)
		return bg_error(ctx, BG_EIO, "cannot write the runbook as JSON: out of memory");
	rc = bg_sha256_hex(text, strlen(text), hex, ctx);
	free(text);
	return rc;
}

static const char *jstr(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static bool all_strings(const json_t *list)
{
	size_t i;
	json_t *x;

	if (!json_is_array(list))
		return false;
	json_array_foreach(list, i, x)
		if (!json_is_string(x))
			return false;
	return true;
}

/*
 * The first member of obj that is not one of names, or NULL; *list
 * receives names joined with ", " for the message (the caller releases it).
 */
static const char *unknown_member(const json_t *obj, const char *const *names, struct bg_strbuf *list)
{
	const char *k;
	json_t *v;
	size_t i;

	for (i = 0; names[i]; i++)
		bg_strbuf_addf(list, "%s%s", i ? ", " : "", names[i]);
	json_object_foreach((json_t *)obj, k, v) {
		(void)v;
		for (i = 0; names[i] && strcmp(names[i], k) != 0; i++)
			;
		if (!names[i])
			return k;
	}
	return NULL;
}

/*
 * The runbook's required_environment (a list of variable names), question
 * (a text) and inputs (a list of {"path", optional "dataset_id"}): a value
 * of another shape would be ignored, so it is refused before anything is
 * written.
 */
int bg_runbook_check_declared(const json_t *rb, const char *id, struct bg_ctx *ctx)
{
	static const char *const input_fields[] = {"dataset_id", "path", NULL};
	const json_t *env = json_object_get(rb, "required_environment"), *inputs = json_object_get(rb, "inputs"), *x;
	struct bg_strbuf list = BG_STRBUF_INIT;
	const char *k;
	size_t i;
	int rc = BG_OK;

	if (env && !json_is_null(env) && !all_strings(env))
		return bg_error(ctx, BG_EPRECOND, "runbook '%s': required_environment must be a list of variable names", id);
	if (env && !json_is_null(env))
		json_array_foreach(env, i, x) {
			const char *name = json_string_value(x);
			if (!*name || strchr(name, '='))
				return bg_error(ctx, BG_EPRECOND,
						"runbook '%s': required_environment[%zu] '%s' is not a variable name "
						"(a name such as \"CUDA_VISIBLE_DEVICES\", without '=' or a value)",
						id, i, name);
		}
	if ((x = json_object_get(rb, "question")) && !json_is_string(x) && !json_is_null(x))
		return bg_error(ctx, BG_EPRECOND, "runbook '%s': question must be a text (a falsifiable question; {field}s allowed)", id);
	if (!inputs || json_is_null(inputs))
		return BG_OK;
	if (!json_is_array(inputs))
		return bg_error(ctx, BG_EPRECOND, "runbook '%s': inputs must be a list of {\"dataset_id\": ID, \"path\": PATH}", id);
	json_array_foreach(inputs, i, x) {
		bg_strbuf_reset(&list);
		if (!json_is_object(x))
			rc = bg_error(ctx, BG_EPRECOND, "runbook '%s': inputs[%zu] must be an object {\"dataset_id\": ID, \"path\": PATH}", id, i);
		else if ((k = unknown_member(x, input_fields, &list)))
			rc = bg_error(ctx, BG_EPRECOND, "runbook '%s': inputs[%zu] has no field '%s' (its fields: %s)", id, i, k, list.buf);
		else if (!json_is_string(json_object_get(x, "path")) || !*json_string_value(json_object_get(x, "path")))
			rc = bg_error(ctx, BG_EPRECOND, "runbook '%s': inputs[%zu] needs a \"path\" (a nonempty string)", id, i);
		else if (json_object_get(x, "dataset_id") && !json_is_string(json_object_get(x, "dataset_id")) &&
			 !json_is_null(json_object_get(x, "dataset_id")))
			rc = bg_error(ctx, BG_EPRECOND, "runbook '%s': inputs[%zu].dataset_id must be a string", id, i);
		if (rc)
			break;
	}
	bg_strbuf_release(&list);
	return rc;
}

/* Whether v is a finite number >= 0. */
static bool tolerance(const json_t *v)
{
	return json_is_number(v) && isfinite(json_number_value(v)) && json_number_value(v) >= 0;
}

/*
 * measure.parity: one of the three shapes of DESIGN.md, each with its own
 * fields only. Anything else would run the gate without proving its outputs
 * (or fail every run for a malformed digest), so it is refused.
 */
static int check_parity(const json_t *parity, const char *rb, struct bg_ctx *ctx)
{
	static const char *const sha_fields[] = {"kind", "expected", NULL};
	static const char *const close_fields[] = {"kind", "reference", "rtol", "atol", NULL};
	static const char *const cmd_fields[] = {"kind", "command", NULL};
	static const char *const shapes =
		"{\"kind\": \"sha256\", \"expected\": HEX}, {\"kind\": \"allclose\", \"reference\": PATH, "
		"\"rtol\": R, \"atol\": A} or {\"kind\": \"command\", \"command\": CMD}";
	const char *kind = jstr(parity, "kind"), *k, *v;
	const char *const *fields;
	struct bg_strbuf list = BG_STRBUF_INIT;
	int rc = BG_OK;

	if (!json_is_object(parity))
		return bg_error(ctx, BG_EPRECOND, "runbook '%s': measure.parity must be %s", rb, shapes);
	if (!kind)
		return bg_error(ctx, BG_EPRECOND, "runbook '%s': measure.parity needs a \"kind\": \"sha256\", \"allclose\" or \"command\"", rb);
	if (strcmp(kind, "sha256") == 0)
		fields = sha_fields;
	else if (strcmp(kind, "allclose") == 0)
		fields = close_fields;
	else if (strcmp(kind, "command") == 0)
		fields = cmd_fields;
	else
		return bg_error(ctx, BG_EPRECOND,
				"runbook '%s': measure.parity has an unknown kind '%s' (use \"sha256\", \"allclose\" or \"command\")",
				rb, kind);
	if ((k = unknown_member(parity, fields, &list)))
		rc = bg_error(ctx, BG_EPRECOND, "runbook '%s': measure.parity of kind '%s' has no field '%s' (its fields: %s)",
			      rb, kind, k, list.buf);
	else if (fields == sha_fields && (!(v = jstr(parity, "expected")) || strlen(v) != 64 ||
					  strspn(v, "0123456789abcdefABCDEF") != 64))
		rc = bg_error(ctx, BG_EPRECOND, "runbook '%s': measure.parity.expected must be a SHA-256 of 64 hexadecimal digits", rb);
	else if (fields == close_fields && (!(v = jstr(parity, "reference")) || !*v))
		rc = bg_error(ctx, BG_EPRECOND, "runbook '%s': measure.parity.reference must name the reference .npy file", rb);
	else if (fields == close_fields && json_object_get(parity, "rtol") && !tolerance(json_object_get(parity, "rtol")))
		rc = bg_error(ctx, BG_EPRECOND, "runbook '%s': measure.parity.rtol must be a number >= 0", rb);
	else if (fields == close_fields && json_object_get(parity, "atol") && !tolerance(json_object_get(parity, "atol")))
		rc = bg_error(ctx, BG_EPRECOND, "runbook '%s': measure.parity.atol must be a number >= 0", rb);
	else if (fields == cmd_fields && (!(v = jstr(parity, "command")) || !*v))
		rc = bg_error(ctx, BG_EPRECOND, "runbook '%s': measure.parity.command must be a nonempty command", rb);
	bg_strbuf_release(&list);
	return rc;
}

/*
 * The measure object's fields, each of its type and range (DESIGN.md), and
 * no other: a field the engine would not honour (a typo, a quoted number)
 * is refused here, before anything is written, instead of being ignored.
 */
int bg_runbook_check_measure(const json_t *m, const char *rb, struct bg_ctx *ctx)
{
	static const char *const fields[] = {
		"warmups", "repetitions", "timeout_seconds", "timing", "outputs", "parity",
		"deterministic", "cache", "memory_floor_bytes", "sample_interval_ms", NULL,
	};
	static const char *const cache_fields[] = {"state", "evict", NULL};
	const json_t *v, *cache = json_object_get(m, "cache");
	const char *k;
	struct bg_strbuf list = BG_STRBUF_INIT;
	enum bg_timing timing;
	int rc = BG_OK;

	if ((k = unknown_member(m, fields, &list)))
		rc = bg_error(ctx, BG_EPRECOND, "runbook '%s': measure has no field '%s' (its fields: %s)", rb, k, list.buf);
	else if ((v = json_object_get(m, "warmups")) &&
		 !(json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= BG_COUNT_MAX))
		rc = bg_error(ctx, BG_EPRECOND, "runbook '%s': measure.warmups must be an integer >= 0 and <= " BG_COUNT_MAX_TEXT, rb);
	else if ((v = json_object_get(m, "repetitions")) &&
		 !(json_is_integer(v) && json_integer_value(v) >= 1 && json_integer_value(v) <= BG_COUNT_MAX))
		rc = bg_error(ctx, BG_EPRECOND, "runbook '%s': measure.repetitions must be an integer >= 1 and <= " BG_COUNT_MAX_TEXT, rb);
	else if ((v = json_object_get(m, "timeout_seconds")) &&
		 !(json_is_number(v) && json_number_value(v) > 0 && json_number_value(v) <= BG_TIMEOUT_MAX_SECONDS))
		rc = bg_error(ctx, BG_EPRECOND, "runbook '%s': measure.timeout_seconds must be a number of seconds > 0 and <= " BG_TIMEOUT_MAX_TEXT, rb);
	else if ((v = json_object_get(m, "timing")) && bg_timing_parse(json_string_value(v), &timing) != 0)
		rc = bg_error(ctx, BG_EPRECOND, "runbook '%s': measure.timing must be \"process\" or \"reported\"", rb);
	else if ((v = json_object_get(m, "outputs")) && !all_strings(v))
		rc = bg_error(ctx, BG_EPRECOND, "runbook '%s': measure.outputs must be a list of paths", rb);
	else if ((v = json_object_get(m, "deterministic")) && !json_is_boolean(v))
		rc = bg_error(ctx, BG_EPRECOND, "runbook '%s': measure.deterministic must be true or false", rb);
	else if ((v = json_object_get(m, "memory_floor_bytes")) && !(json_is_number(v) && json_number_value(v) > 0))
		rc = bg_error(ctx, BG_EPRECOND, "runbook '%s': measure.memory_floor_bytes must be a number of bytes > 0", rb);
	else if ((v = json_object_get(m, "sample_interval_ms")) &&
		 !(json_is_integer(v) && json_integer_value(v) >= 1 && json_integer_value(v) <= BG_COUNT_MAX))
		rc = bg_error(ctx, BG_EPRECOND,
			      "runbook '%s': measure.sample_interval_ms must be an integer of milliseconds >= 1 and <= " BG_COUNT_MAX_TEXT,
			      rb);
	else if (cache && !json_is_object(cache))
		rc = bg_error(ctx, BG_EPRECOND, "runbook '%s': measure.cache must be an object: {\"state\": ..., \"evict\": [paths]}", rb);
	if (rc == BG_OK && (v = json_object_get(m, "parity")))
		rc = check_parity(v, rb, ctx);
	bg_strbuf_reset(&list);
	if (rc == BG_OK && cache) {
		const json_t *evict = json_object_get(cache, "evict");
		bool cold = jstr(cache, "state") && strcmp(jstr(cache, "state"), "cold") == 0;

		if ((k = unknown_member(cache, cache_fields, &list)))
			rc = bg_error(ctx, BG_EPRECOND, "runbook '%s': measure.cache has no field '%s' (its fields: %s)", rb, k, list.buf);
		else if ((v = json_object_get(cache, "state")) && !json_is_string(v))
			rc = bg_error(ctx, BG_EPRECOND, "runbook '%s': measure.cache.state must be a string", rb);
		else if (evict && !all_strings(evict))
			rc = bg_error(ctx, BG_EPRECOND, "runbook '%s': measure.cache.evict must be a list of paths", rb);
		else if (cold && json_array_size(evict) == 0)
			rc = bg_error(ctx, BG_EPRECOND,
				      "runbook '%s': measure.cache.state \"cold\" needs measure.cache.evict, the files whose "
				      "eviction before every run proves the claim", rb);
		else if (json_array_size(evict) > 0 && jstr(cache, "state") && !cold)
			rc = bg_error(ctx, BG_EPRECOND,
				      "runbook '%s': measure.cache.evict makes every run cold, but measure.cache.state is '%s'; "
				      "claim \"cold\" or evict nothing", rb, jstr(cache, "state"));
	}
	bg_strbuf_release(&list);
	return rc;
}

/*
 * The registry's decision settings (benchgate's addition, docs/formats.md):
 * a list of {"gate" or "key": ID, "k": > 0, "window": >= 1, "floor": >= 0},
 * the window never below min_sessions (the contract's minimum: a smaller
 * window would never hold enough sessions to decide). An entry that would
 * be ignored (a key that is not a whole key id) or would make decisions
 * meaningless is refused before the session rather than dropped. (That a
 * gate entry names a gate of the registry is the caller's to check.)
 */
/* Whether s is a comparison key id as stored: 64 lower-case hex digits. */
static bool key_id_text(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
			return false;
	return n == 64;
}

int bg_runbook_check_thresholds(const json_t *list, size_t min_sessions, struct bg_ctx *ctx)
{
	static const char *const fields[] = {"gate", "key", "k", "window", "floor", NULL};
	size_t i;
	json_t *t, *v;
	const char *k;

	if (!list || json_is_null(list))
		return BG_OK;
	if (!json_is_array(list))
		return bg_error(ctx, BG_EPRECOND, "the registry's 'thresholds' must be a list of {\"gate\" or \"key\": ID, \"k\", \"window\", \"floor\"}");
	json_array_foreach(list, i, t) {
		struct bg_strbuf names = BG_STRBUF_INIT;
		int rc = BG_OK;

		if (!json_is_object(t) || json_is_string(json_object_get(t, "gate")) == json_is_string(json_object_get(t, "key")))
			rc = bg_error(ctx, BG_EPRECOND, "the registry's thresholds[%zu] must be an object with exactly one of \"gate\" or \"key\" (a string)", i);
		else if ((k = unknown_member(t, fields, &names)))
			rc = bg_error(ctx, BG_EPRECOND, "the registry's thresholds[%zu] has no field '%s' (its fields: %s)", i, k, names.buf);
		else if ((v = json_object_get(t, "k")) && !(json_is_number(v) && json_number_value(v) > 0))
			rc = bg_error(ctx, BG_EPRECOND, "the registry's thresholds[%zu].k must be a number > 0", i);
		else if ((v = json_object_get(t, "window")) && !(json_is_integer(v) && json_integer_value(v) >= 1))
			rc = bg_error(ctx, BG_EPRECOND, "the registry's thresholds[%zu].window must be an integer >= 1", i);
		else if (v && (size_t)json_integer_value(v) < min_sessions)
			rc = bg_error(ctx, BG_EPRECOND,
				      "the registry's thresholds[%zu].window %lld is below the comparison contract's "
				      "minimum of %zu accepted sessions, so no decision could ever be made; use a window >= %zu",
				      i, (long long)json_integer_value(v), min_sessions, min_sessions);
		else if ((v = json_object_get(t, "floor")) && !(json_is_number(v) && json_number_value(v) >= 0))
			rc = bg_error(ctx, BG_EPRECOND, "the registry's thresholds[%zu].floor must be a number >= 0", i);
		else if (json_is_string(json_object_get(t, "key")) && !key_id_text(json_string_value(json_object_get(t, "key"))))
			rc = bg_error(ctx, BG_EPRECOND,
				      "the registry's thresholds[%zu].key '%s' is not a comparison key id: give all 64 "
				      "lower-case hexadecimal digits, as 'benchgate key SESSION' prints them (a prefix "
				      "matches no key, and the entry would be ignored)",
				      i, json_string_value(json_object_get(t, "key")));
		bg_strbuf_release(&names);
		if (rc)
			return rc;
	}
	return BG_OK;
}

int bg_runbook_check_contract(const json_t *profile, const char *display, struct bg_ctx *ctx)
{
	static const char key[] = "comparison_contract.comparison_key";
	static const char min[] = "minimum_accepted_sessions_before_hard_threshold";
	const json_t *contract, *fields, *f, *m;
	size_t i, j;

	if (!profile)
		return BG_OK;
	if (!json_is_object(profile))
		return bg_error(ctx, BG_EPRECOND, "%s: the profile matrix must be a JSON object; 'run' takes the comparison key from it", display);
	contract = json_object_get(profile, "comparison_contract");
	if (!json_is_object(contract))
		return bg_error(ctx, BG_EPRECOND, "%s: 'comparison_contract' %s; 'run' takes the comparison key from it",
				display, contract ? "must be an object" : "is missing");
	fields = json_object_get(contract, "comparison_key");
	if (!json_is_array(fields) || json_array_size(fields) == 0)
		return bg_error(ctx, BG_EPRECOND, "%s: %s must be a nonempty list of field names", display, key);
	json_array_foreach(fields, i, f) {
		const char *name = json_string_value(f);

		if (!name || !*name)
			return bg_error(ctx, BG_EPRECOND, "%s: %s[%zu] must be a field name (a nonempty string)", display, key, i);
		for (j = 0; j < i; j++)
			if (strcmp(name, json_string_value(json_array_get(fields, j))) == 0)
				return bg_error(ctx, BG_EPRECOND, "%s: %s names '%s' twice", display, key, name);
	}
	m = json_object_get(contract, min);
	if (m && !(json_is_integer(m) ? json_integer_value(m) >= 0
		   : json_is_real(m) && json_real_value(m) >= 0 && json_real_value(m) <= 1e9 &&
			     json_real_value(m) == (double)(long long)json_real_value(m)))
		return bg_error(ctx, BG_EPRECOND, "%s: comparison_contract.%s must be a whole number >= 0", display, min);
	return BG_OK;
}

int bg_runbook_check_key_fields(const json_t *profile, const char *display, const json_t *key_fields,
				const char *config_display, struct bg_ctx *ctx)
{
	const json_t *fields = json_object_get(json_object_get(profile, "comparison_contract"), "comparison_key"), *f, *x;
	const char *name;
	size_t i;

	json_object_foreach((json_t *)key_fields, name, x) {
		struct bg_strbuf list = BG_STRBUF_INIT;
		bool found = false;
		int rc;

		if (profile) {
			json_array_foreach(fields, i, f)
				found = found || (json_string_value(f) && strcmp(json_string_value(f), name) == 0);
		} else {
			for (const char *const *d = bg_default_key_fields; *d; d++)
				found = found || strcmp(*d, name) == 0;
		}
		if (found)
			continue;
		if (profile) {
			json_array_foreach(fields, i, f)
				bg_strbuf_addf(&list, "%s%s", i ? ", " : "", json_string_value(f));
		} else {
			for (const char *const *d = bg_default_key_fields; *d; d++)
				bg_strbuf_addf(&list, "%s%s", d == bg_default_key_fields ? "" : ", ", *d);
		}
		rc = bg_error(ctx, BG_EPRECOND,
			      "%s: key_fields maps '%s', which is no field of the comparison key (%s%s: %s), "
			      "so its mapping would never be used: correct the name or remove it",
			      config_display, name, profile ? display : "the default key, without a profile matrix",
			      profile ? "'s comparison_contract.comparison_key" : "", list.buf);
		bg_strbuf_release(&list);
		return rc;
	}
	return BG_OK;
}
