/*
 * promote.h - promotion of a qualified session into the registry.
 *
 * bg_promote_edit_registry rewrites the registry text so that gate_id has
 * the given state and names measurement_id in satisfied_by, and so that the
 * registry imports evidence_path (added once). Every other byte of the file
 * is unchanged. text must be valid JSON. The result is appended to out.
 * BG_ECHECK when the gate is not listed by id or a field has the wrong shape.
 */
#ifndef BENCHGATE_PROMOTE_H
#define BENCHGATE_PROMOTE_H

#include <stddef.h>

#include "benchgate/status.h"
#include "benchgate/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

int bg_promote_edit_registry(const char *text, size_t len, const char *gate_id, const char *state,
			     const char *measurement_id, const char *evidence_path, struct bg_strbuf *out,
			     struct bg_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif
