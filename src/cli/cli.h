/*
 * cli.h - the verb table and the shared option parser of the benchgate
 * program. Only src/cli/ prints or exits. Each cmd_<verb>.c exports one
 * struct bg_cmd; main.c lists them in one table, and --help is built from it.
 */
#ifndef BENCHGATE_CLI_H
#define BENCHGATE_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "benchgate/config.h"
#include "benchgate/registry.h"
#include "benchgate/status.h"
#include "benchgate/strbuf.h"

/* What every verb receives: the global options and its own arguments. */
struct bg_cli {
	const char *chdir_root; /* -C DIR, or NULL */
	const char *config_file; /* --config FILE, or NULL */
	int argc;                /* the verb's arguments, argv[0] is the verb */
	char **argv;
};

struct bg_cmd {
	const char *name;
	const char *summary; /* one line for `benchgate --help` */
	const char *usage;   /* "benchgate NAME [options] ..." (may be several lines) */
	const char *options; /* option help text, or NULL */
	int (*run)(struct bg_cli *cli, const struct bg_cmd *self);
	/* Checks positional word number index (its type or choice) where
	 * argparse converts it: as bg_cli_parse takes it, so before a --help
	 * after it. BG_OK, or the status of the usage error it printed. NULL
	 * when the verb's positionals take any word. */
	int (*check_pos)(const struct bg_cmd *self, int index, const char *word);
	/* Whether the verb reads the project and exits, evicting nothing from
	 * the page cache: its released file views are left mapped for the exit
	 * (bg_file_view_leave_mapped; a page still mapped is one no eviction
	 * can drop, so measure and run unmap theirs). */
	bool reads_only;
};

/* Option descriptors for bg_cli_parse. */
enum bg_opt_kind { BG_OPT_FLAG, BG_OPT_VALUE };
struct bg_opt {
	const char *long_name; /* without the leading "--" */
	char short_name;       /* 0 when none */
	enum bg_opt_kind kind;
	int id;                /* returned to the callback */
	bool repeatable;
};

/*
 * BG_OK when why (a --why TEXT) is one line of text that shows
 * (bg_format_line_problem), else BG_EUSAGE with "the reason (--why TEXT)
 * must be one line of text: ..." said on stderr: judged before anything is
 * opened, as a usage error.
 */
int bg_cli_check_reason(const char *why);

/*
 * Whether argparse takes argument a for an option rather than a value or a
 * positional: it starts with '-', is more than "-" and is no negative
 * number ("-3", "-.5"), and holds no space unless it is an option of opts
 * (may be NULL) with its value joined ("--name=a b", "-xa b"). "--" is one
 * too.
 */
bool bg_cli_option_like(const struct bg_opt *opts, const char *a);

/*
 * Parses cli->argv[1..] the way argparse does: --name=value, --name value,
 * unique prefixes of long names, -x value, and "--" ending the options.
 * on_opt(id, value, data) returns 0 or a usage message (static or owned by
 * data). Positionals are collected in order into pos (at most max_pos; more
 * is a usage error unless rest_after_dashdash is set and "--" came, in which
 * case everything after "--" is left at *rest_index).
 * Errors come in argparse's order: an ambiguous option anywhere first; then,
 * word by word, a missing or refused value, or -h/--help, which prints the
 * verb's help and returns BG_CLI_HELP_SHOWN (the program exits 0); an
 * unknown option or a positional too many only after every word (so
 * "list --bogus -h" shows help, "list --platform -h" is refused).
 * Usage errors are said on stderr and return BG_EUSAGE.
 */
#define BG_CLI_HELP_SHOWN 100
struct bg_parsed {
	char *pos[8];
	int npos;
	int rest_index; /* index in argv of the first word after "--", or -1 */
};
typedef const char *(*bg_opt_fn)(int id, const char *value, void *data);
int bg_cli_parse(struct bg_cli *cli, const struct bg_cmd *cmd, const struct bg_opt *opts,
		 int max_pos, bool stop_at_dashdash, bg_opt_fn on_opt, void *data,
		 struct bg_parsed *out);

/* A bg_opt_fn for verbs without options (never called: every option is unknown). */
const char *bg_cli_no_options(int id, const char *value, void *data);
/* Prints "benchgate VERB: MESSAGE" and the verb's usage on stderr; returns 2.
 * MESSAGE (and bg_cli_fail's) is shown as bg_cli_add_shown shows stored
 * text: it quotes what was typed, files' names and texts, programs' words. */
int bg_cli_usage_error(const struct bg_cmd *cmd, const char *fmt, ...) BG_PRINTF(2, 3);
/* Prints "benchgate: MESSAGE" on stderr, its control bytes shown as
 * bg_cli_add_shown shows them (one line, whatever MESSAGE quotes); returns status. */
int bg_cli_fail(int status, const char *msg);
/* Writes the whole buffer to stdout (or stderr); BG_EIO on failure (for
 * stdout said by bg_cli_stdout_failed). On a
 * terminal its control bytes but newlines and tabs are shown as
 * bg_cli_add_shown shows them; a pipe or a file gets the bytes unchanged. */
int bg_cli_write(const struct bg_strbuf *sb, bool to_stderr);
/* bg_cli_write to stdout of what a registry verb prints, as Python's print
 * writes it: text holding a lone surrogate (bg_value_surrogate_find) is
 * refused whole, as print raises on it: nothing is written, the line is
 * named on stderr and BG_ECHECK returned; else bg_cli_write's status.
 * Where Python's print would write U+DC80..U+DCFF as their bytes
 * (bg_value_py_stdio_escapes, from the environment's locale) so are they. */
int bg_cli_write_text(const struct bg_strbuf *sb);
/* Whether standard output is a pipe whose reader has gone (its writes would
 * fail with EPIPE): what a verb that stopped for that reason need not say. */
bool bg_cli_stdout_reader_gone(void);
/* Says once per process on stderr that standard output could not be
 * written ("benchgate: standard output: cannot write: REASON"), err being
 * the errno of the failed write; nothing for EPIPE (the reader stopped),
 * and nothing after the first failure, said or not. */
void bg_cli_stdout_failed(int err);
/*
 * A verb's rows printed as a walk over the store hands them over
 * (bg_store_each_session, bg_store_each_history): into out, as a JSON
 * array (json: byte for byte what bg_json_dump_py(array, 2, false) prints
 * for the whole array) or as a table (header before the first row, then
 * row for each), so that a large store is never held whole. bg_cli_rows_add
 * is the walk's bg_store_row_fn (always BG_OK); after the walk, n says how
 * many rows came, and bg_cli_rows_end closes a JSON array (and its line),
 * or ends a table with a line naming the sessions timed by the program
 * itself (timing "reported": their p50, p95 and max are its own samples,
 * not process wall time; every one, or the first ten ids and how many
 * more), nothing when none was.
 */
struct bg_cli_rows {
	struct bg_strbuf *out;
	bool json;
	void (*header)(struct bg_strbuf *out);
	void (*row)(struct bg_strbuf *out, const json_t *r);
	size_t n;
	size_t reported;	    /* rows of timing "reported" */
	long long reported_id[10]; /* the first ten of them */
};
int bg_cli_rows_add(const json_t *r, void *rows, struct bg_ctx *ctx);
void bg_cli_rows_end(struct bg_cli_rows *rows);
/* A verb's help (usage, summary, options) on stdout; BG_EIO when it could not be written (said). */
int bg_cli_print_help(const struct bg_cmd *cmd);

/* Loads the project configuration for the verb. On failure prints and returns the status. */
int bg_cli_load_config(struct bg_cli *cli, struct bg_config *cfg);
/* Loads config and registry; on failure prints the message and returns the status. */
int bg_cli_load_registry(struct bg_cli *cli, struct bg_config *cfg, struct bg_registry *reg);
/* Prints the library message for a failed call and returns status. */
int bg_cli_fail_ctx(int status, struct bg_ctx *ctx);
/* bg_cli_fail_ctx for a failure to read the project's files: when no
 * benchgate.json was found and the registry or the profile matrix that the
 * defaults name is not there, it adds that this is likely no project and
 * what to do (run it in one, or -C DIR; with -C DIR, whether DIR is one). */
int bg_cli_fail_project(const struct bg_cli *cli, int status, struct bg_ctx *ctx, const struct bg_config *cfg);
/* That hint alone, appended to msg where it applies (a failure of status
 * reading the project's files); whether it did. */
bool bg_cli_add_project_hint(struct bg_strbuf *msg, const struct bg_cli *cli, int status, const struct bg_config *cfg);

/*
 * The signals that end a measuring verb cleanly (the run's tree killed, the
 * session or experiment recorded as interrupted): SIGINT, SIGTERM, SIGQUIT
 * (Ctrl-\, which would otherwise kill benchgate and leave the run, its
 * lease and its outputs' marks behind), and SIGHUP (a closed terminal or
 * ssh connection) unless it was ignored when benchgate started (nohup).
 * bg_cli_catch_stop sets *flag to 1 on any of them, saving the old
 * dispositions in saved; bg_cli_release_stop puts them back. One verb at
 * a time: the flag is kept in a static.
 */
enum { BG_CLI_STOP_SIGNALS = 4 };
struct bg_cli_stop {
	struct sigaction old[BG_CLI_STOP_SIGNALS];
	struct sigaction old_tstp, old_cont;
	bool suspend; /* bg_cli_catch_suspend installed its handler */
	bool cont;    /* ... and its SIGCONT handler */
};
void bg_cli_catch_stop(volatile sig_atomic_t *flag, struct bg_cli_stop *saved);
/*
 * After bg_cli_catch_stop, for a verb that measures: SIGTSTP (Ctrl-Z, kill
 * -TSTP) suspends the session, the run with benchgate, and SIGCONT goes on
 * with both (bg_measure_suspend), unless SIGTSTP was ignored when
 * benchgate started; a SIGCONT after a SIGSTOP that benchgate did not make
 * is noted (bg_measure_continued). bg_cli_release_stop puts the old
 * dispositions back.
 */
void bg_cli_catch_suspend(struct bg_cli_stop *saved);
void bg_cli_release_stop(const struct bg_cli_stop *saved);

/*
 * Appends s (NULL: "n/a") as a terminal should show a stored text: every C0
 * control byte (newline and escape included), DEL, every C1 control
 * (U+0080..U+009F, written as two bytes), the bidirectional overrides and
 * isolates (U+202A..U+202E, U+2066..U+2069) and every byte that is not
 * UTF-8 as \xNN, other text unchanged, so that what a store, a registry or
 * a measured program put in a text can neither start a line of its own,
 * move the cursor, change colours nor reorder the line.
 * bg_cli_shown does the same into *tmp (emptied first) and returns its
 * text, for a printf column; the caller releases tmp.
 */
void bg_cli_add_shown(struct bg_strbuf *out, const char *s);
const char *bg_cli_shown(struct bg_strbuf *tmp, const char *s);
/* Ends a line of a padded table: drops the spaces at the end of out (the
 * padding of an empty last column), then appends '\n'. */
void bg_cli_end_line(struct bg_strbuf *out);
/* Whether bg_cli_add_shown would change s. */
bool bg_cli_needs_showing(const char *s);
/* The length in bytes of the control that s starts with (1 for C0 or DEL,
 * 2 for C1, 3 for a bidirectional override, embedding or isolate, 1 for a
 * byte that starts no well-formed UTF-8 character), else 0: the rule of
 * bg_format_control_at (format.h), which the dashboard shares. */
size_t bg_cli_control_at(const char *s);
/* The length in bytes of the character s starts with: its UTF-8 length when
 * well formed, else 1. Walks text one character at a time with the above. */
size_t bg_cli_char_at(const char *s);

/* A number as Python's float() reads it (argparse type=float): decimal or
 * inf/nan, white space around it; a C hexadecimal float ("0x10") is not
 * one. False when s is none, *out set anyway. */
bool bg_cli_parse_double(const char *s, double *out);
/* A number of seconds for --timeout or --wait: the whole of s, above 0 and
 * at most BG_TIMEOUT_MAX_SECONDS (measure.h); false otherwise, *out set anyway. */
bool bg_cli_parse_seconds(const char *s, double *out);
/* Parses a Python-style integer (argparse type=int); false beyond 64 bits. */
bool bg_cli_parse_int(const char *s, long long *out);
/* The same, but a value beyond 64 bits, which Python takes as it is, is
 * clamped to LLONG_MIN or LLONG_MAX (for a count only compared, as next's --limit). */
bool bg_cli_parse_int_clamped(const char *s, long long *out);
/* The value of --last N (sessions, history): a positive integer, one beyond
 * 64 bits being every session, into *last; NULL, or the usage message,
 * written into msg[size]. */
const char *bg_cli_last_arg(const char *v, long *last, char *msg, size_t size);

/*
 * Appends to out " (did you mean NAMES?)", NAMES the names that word[0..len)
 * is likely a slip for, quoted with shown_prefix before each ("'a'", "'a'
 * or 'b'", "'a', 'b' or 'c'"):
 * those within 1 edit (a letter added, dropped, changed, or two swapped;
 * ASCII case ignored) of a word of up to 4 bytes, 2 of a longer one, and
 * with BG_CLI_NEAR_BEGINNINGS those the word begins (3 bytes or more,
 * ranked by the letters missing); the nearest first, in the order of names
 * among equals, at most three, and with BG_CLI_NEAR_NEAREST only those as
 * near as the nearest. Returns how many (0: nothing appended, no name is near).
 */
enum { BG_CLI_NEAR_BEGINNINGS = 1, BG_CLI_NEAR_NEAREST = 2 };
size_t bg_cli_add_near(struct bg_strbuf *out, const char *word, size_t len, const char *const *names, size_t n,
		       unsigned flags, const char *shown_prefix);

/* bg_cli_add_near over the ids of reg's gates, the nearest only (ids often
 * differ in one letter); no beginnings: a slip in an id, not a part of one. */
size_t bg_cli_add_near_gate(struct bg_strbuf *out, const struct bg_registry *reg, const char *word);
/* The reference's line for a gate show and command do not find, "Unknown
 * benchmark gate: ID", with " (did you mean ...?)" after it when a gate is near. */
void bg_cli_add_unknown_gate(struct bg_strbuf *out, const struct bg_registry *reg, const char *id);
/* For a gate id without stored sessions: BG_OK when the registry cfg names
 * has it (a gate never run). When it has not (a mistyped id, not a gate
 * never run), unknown, with msg receiving "unknown gate 'ID': no session is
 * stored for it and the registry has no such gate (did you mean ...?); see
 * 'benchgate list'". When the registry cannot be read, nothing tells the two
 * apart: its own status (1 malformed, 4 unreadable), msg receiving its
 * message and that the id could not be checked. (The store's verbs read a
 * gate that has sessions without the registry.) */
int bg_cli_unknown_stored_gate(const struct bg_cli *cli, const struct bg_config *cfg, const char *id, int unknown,
			       struct bg_strbuf *msg);

/* main.c: the table of verbs, NULL-terminated, in the order --help lists them. */
extern const struct bg_cmd *const bg_commands[];
/* The program's usage and its verbs, as `benchgate --help` prints it, appended to out. */
void bg_cli_main_usage(struct bg_strbuf *out);
/* The verb named name exactly, or NULL. */
const struct bg_cmd *bg_cli_find_verb(const char *name);
/* Says on stderr "PREFIX: unknown verb 'WORD' (did you mean 'V'?); see
 * 'benchgate --help'" (the suggestion only when a verb is near: a slip of one
 * or two letters, or a beginning), then the program's usage. */
void bg_cli_unknown_verb(const char *prefix, const char *word);

#endif
