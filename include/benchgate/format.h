/*
 * format.h - how benchgate writes a duration or a size for a person: the one
 * scaling that history, sessions, session, compare and the dashboard share,
 * so that a figure reads the same in each (src/core/format.c owns it; the
 * generated coverage document keeps the reference's own formats,
 * bg_registry_format_seconds and bg_registry_format_bytes of registry.h).
 *
 * A value is written in the largest unit in which its magnitude, as printed
 * with that unit's decimals, is at least 1:
 *   durations (nanoseconds)  ns (0 decimals), us (1), ms (2), s (3)
 *   sizes (bytes)            B (0), KiB (2), MiB (3), GiB (3)
 * ("812.4 us", "50.31 ms", "1.204 s", "512 B", "1.100 MiB"); a negative
 * value (an envelope's low bound) gets the unit of its size; one of a
 * million or more of the largest unit is written "1.000e+06 s". What was not
 * measured (anything but a JSON number) is "n/a".
 *
 * It also writes a signal's number with its name (bg_format_signal), and
 * owns the judgement of outside text (a reason, an id) as one line
 * a person reads back (bg_format_line_problem), and which of its characters
 * no reader shows as they are (bg_format_control_at).
 */
#ifndef BENCHGATE_FORMAT_H
#define BENCHGATE_FORMAT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "benchgate/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A unit: its name, how many nanoseconds or bytes it holds, its decimals. */
struct bg_unit {
	const char *name;
	double factor;
	int decimals;
};

/* The unit ns (nanoseconds) or bytes is written in. */
struct bg_unit bg_format_duration_unit(double ns);
struct bg_unit bg_format_bytes_unit(double bytes);
/* Appends ns (a JSON number of nanoseconds, or anything else: "n/a"). */
void bg_format_duration(struct bg_strbuf *out, const json_t *ns);
/* Appends bytes (a JSON number of bytes, or anything else: "n/a"). */
void bg_format_bytes(struct bg_strbuf *out, const json_t *bytes);
/*
 * What keeps s from reading back as one line of text in a terminal and a
 * table, or NULL when nothing does: s must be valid UTF-8 without a control
 * character (C0, DEL, C1), a line or a paragraph separator or a
 * bidirectional embedding, override or isolate, and some character of it
 * must show: not only Unicode spaces (Python's str.isspace) and characters
 * that show nothing (Default_Ignorable_Code_Point, U+2800). The answer is a static
 * phrase ("it is not valid UTF-8") for a message about s.
 */
const char *bg_format_line_problem(const char *s);
/* bg_format_line_problem's phrase for a text where nothing shows. */
#define BG_FORMAT_BLANK "it is blank (nothing in it shows: only spaces or invisible characters such as U+200B)"
/*
 * Whether nothing in s shows: it holds only Unicode spaces (Python's
 * str.isspace, tabs and newlines too) and characters that show nothing
 * (Default_Ignorable_Code_Point, U+2800); true for "". A byte that is not
 * UTF-8 shows.
 */
bool bg_format_blank(const char *s);
/*
 * The length in bytes of the character at s that no reader may show as it
 * is, else 0: a C0 control or DEL (1), a C1 control U+0080..U+009F (2), a
 * bidirectional embedding, override or isolate U+202A..U+202E,
 * U+2066..U+2069 (3: it reorders what follows it), a byte that starts no
 * well-formed UTF-8 character (1). Such bytes are shown as \xNN, by the
 * terminal verbs and the dashboard alike.
 */
size_t bg_format_control_at(const char *s);
/* Appends signal sig as a person reads it: its number, then its name and
 * the system's description when the system has them ("11 (SIGSEGV:
 * Segmentation fault)", "40" for a real-time signal). */
void bg_format_signal(struct bg_strbuf *out, int sig);
/*
 * Whether line[0..n) (its line end left out; a trailing CR is ignored) is
 * a merge-conflict marker as git writes them: "<<<<<<<", "|||||||",
 * "=======" or ">>>>>>>", alone or (but "=======") followed by a space and
 * a label. What a merge leaves in a file two branches changed.
 */
bool bg_format_conflict_marker(const char *line, size_t n);
/* Whether the 1-based line of text[0..len) is such a marker (false past
 * the end): a JSON error there says so. */
bool bg_format_conflict_line(const char *text, size_t len, long line);

#ifdef __cplusplus
}
#endif

#endif
