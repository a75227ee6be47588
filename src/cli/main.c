/*
 * main.c - the benchgate program: the one table of verbs and what is said
 * from it (the usage, `help`, an unknown verb with the verbs it is closest
 * to), the global options, then the verb; the exit status, and output that
 * could not be written said once.
 */
#include "cli/cli.h"
#include "benchgate/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const struct bg_cmd bg_cmd_validate, bg_cmd_list, bg_cmd_next, bg_cmd_show,
	bg_cmd_command, bg_cmd_render, bg_cmd_check;
extern const struct bg_cmd bg_cmd_lease, bg_cmd_experiments, bg_cmd_run;
/* measurement engine verbs */
extern const struct bg_cmd bg_cmd_measure, bg_cmd_sessions, bg_cmd_session;
/* decision and curation verbs */
extern const struct bg_cmd bg_cmd_key, bg_cmd_compare, bg_cmd_accept, bg_cmd_reject, bg_cmd_history,
	bg_cmd_repeat, bg_cmd_promote, bg_cmd_dashboard;
extern const struct bg_cmd bg_cmd_help;

const struct bg_cmd *const bg_commands[] = {
	/* the registry: pure reads with the reference's output */
	&bg_cmd_validate,
	&bg_cmd_list,
	&bg_cmd_next,
	&bg_cmd_show,
	&bg_cmd_command,
	&bg_cmd_render,
	&bg_cmd_check,
	/* measuring */
	&bg_cmd_measure,
	&bg_cmd_sessions,
	&bg_cmd_session,
	/* the lifecycle */
	&bg_cmd_run,
	&bg_cmd_lease,
	&bg_cmd_experiments,
	/* decisions, curation, promotion */
	&bg_cmd_key,
	&bg_cmd_compare,
	&bg_cmd_accept,
	&bg_cmd_reject,
	&bg_cmd_history,
	&bg_cmd_repeat,
	&bg_cmd_promote,
	&bg_cmd_dashboard,
	/* this help */
	&bg_cmd_help,
	NULL,
};

void bg_cli_main_usage(struct bg_strbuf *out)
{
	bg_strbuf_adds(out, "usage: benchgate [-C DIR] [--config FILE] VERB [options]\n"
			    "       benchgate --help | --version\n\n"
			    "benchgate is parity-first continuous profiling for scientific and GPU code.\n\n"
			    "global options:\n"
			    "  -C DIR         run in the project rooted at DIR\n"
			    "  --config FILE  read FILE instead of benchgate.json\n"
			    "  -h, --help     show this help (benchgate VERB --help for a verb)\n"
			    "  --version      show the version\n\n"
			    "verbs:\n");
	for (size_t i = 0; bg_commands[i]; i++)
		bg_strbuf_addf(out, "  %-12s %s\n", bg_commands[i]->name, bg_commands[i]->summary);
}

const struct bg_cmd *bg_cli_find_verb(const char *name)
{
	for (size_t i = 0; bg_commands[i]; i++) {
		if (strcmp(bg_commands[i]->name, name) == 0)
			return bg_commands[i];
	}
	return NULL;
}

void bg_cli_unknown_verb(const char *prefix, const char *word)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	const char *names[sizeof(bg_commands) / sizeof(bg_commands[0])];
	size_t n = 0;

	for (; bg_commands[n]; n++)
		names[n] = bg_commands[n]->name;
	bg_strbuf_adds(&sb, prefix);
	bg_strbuf_adds(&sb, ": unknown verb '");
	bg_cli_add_shown(&sb, word);
	bg_strbuf_addch(&sb, '\'');
	bg_cli_add_near(&sb, word, strlen(word), names, n, BG_CLI_NEAR_BEGINNINGS, "");
	bg_strbuf_adds(&sb, "; see 'benchgate --help'\n");
	bg_cli_main_usage(&sb);
	bg_cli_write(&sb, true);
	bg_strbuf_release(&sb);
}

/* The program's usage on f. */
static void main_usage(FILE *f)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;

	bg_cli_main_usage(&sb);
	bg_cli_write(&sb, f != stdout);
	bg_strbuf_release(&sb);
}

/*
 * Sets a global option's value (-C DIR, --config FILE) once: an empty one
 * would name the working directory as a file, and a second one would
 * silently replace the first. False (the message and usage printed) when
 * the command line is wrong.
 */
static bool global_value(const char **slot, const char *name, const char *value)
{
	const char *why = !*value ? "needs a non-empty argument" : *slot ? "is given twice" : NULL;

	if (why) {
		fprintf(stderr, "benchgate: option '%s' %s\n", name, why);
		main_usage(stderr);
		return false;
	}
	*slot = value;
	return true;
}

/*
 * Big input files are mapped (bg_file_view): one that another process
 * truncates while benchgate reads it raises SIGBUS. That is an I/O failure
 * with a message, not a crash.
 */
static void on_sigbus(int sig)
{
	static const char msg[] = "benchgate: bus error (SIGBUS) reading a mapped file: was an input "
				  "file truncated while benchgate read it? run the command again\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* nothing more to say */
	}
	_exit(BG_EIO);
}

/* "benchgate: unknown WHAT 'WORD'TAIL" on stderr, the typed word shown (cli.h). */
static void unknown(const char *what, const char *word, const char *tail)
{
	struct bg_strbuf shown = BG_STRBUF_INIT;

	fprintf(stderr, "benchgate: unknown %s '%s'%s\n", what, bg_cli_shown(&shown, word), tail);
	bg_strbuf_release(&shown);
}

/* The global options, as bg_cli_option_like knows them (-Ca b is -C's). */
static const struct bg_opt global_opts[] = {
	{"config", 'C', BG_OPT_VALUE, 0, false},
	{"help", 'h', BG_OPT_FLAG, 0, false},
	{"version", 0, BG_OPT_FLAG, 0, false},
	{0},
};

#define NGLOBALS (sizeof(global_opts) / sizeof(*global_opts) - 1)

/* "benchgate: unknown option 'WORD'" for a global option, with the one a
 * long option is a slip for ("(did you mean '--version'?)"). */
static void unknown_option(const char *word)
{
	const char *globals[NGLOBALS];
	struct bg_strbuf near = BG_STRBUF_INIT;

	for (size_t k = 0; k < NGLOBALS; k++)
		globals[k] = global_opts[k].long_name;
	if (word[0] == '-' && word[1] == '-')
		bg_cli_add_near(&near, word + 2, strcspn(word + 2, "="), globals, NGLOBALS, 0, "--");
	unknown("option", word, near.buf);
	bg_strbuf_release(&near);
}

static int run_main(int argc, char **argv);

/*
 * The global long option "--NAME[=VALUE]" a is, or begins as argparse
 * allows ("--conf", "--vers"): "config", "help" or "version", else NULL.
 * *value: the text after '=', or NULL.
 */
static const char *global_long(const char *a, const char **value)
{
	const char *eq = strchr(a + 2, '=');
	size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);

	*value = eq ? eq + 1 : NULL;
	if (a[0] != '-' || a[1] != '-' || len == 0)
		return NULL;
	for (size_t k = 0; k < NGLOBALS; k++) /* their first letters differ: a beginning is one's */
		if (strncmp(global_opts[k].long_name, a + 2, len) == 0 && strlen(global_opts[k].long_name) >= len)
			return global_opts[k].long_name;
	return NULL;
}

/* Memory exhausted: an I/O or system failure (exit 4) said on stderr, as
 * DESIGN.md's statuses have it, not an abort and a core dump. */
static void out_of_memory(size_t n)
{
	char msg[96];
	int len = snprintf(msg, sizeof(msg), "benchgate: out of memory (allocating %zu bytes)\n", n);

	if (len > 0 && write(STDERR_FILENO, msg, (size_t)len) < 0) {
		/* nothing more to say */
	}
	_exit(BG_EIO);
}

/*
 * Standard input, output and error that the caller closed are opened on
 * /dev/null, read-only: otherwise the first file benchgate opens (a lease,
 * a manifest, a document being written) would take descriptor 1 and receive
 * what is printed. Writing to such an output fails, and is said.
 */
static void hold_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) == -1 && errno == EBADF && open("/dev/null", O_RDONLY) < 0)
			return; /* nothing better to do: the descriptors stay as given */
	}
}

/* The verb's status, or BG_EIO (said on stderr) when what it printed could
 * not all be written: a full disk or a closed descriptor is not a success. */
int main(int argc, char **argv)
{
	int rc, e = 0;

	hold_std_fds();
	bg_set_out_of_memory(out_of_memory);
	json_set_alloc_funcs(bg_xmalloc, free); /* jansson's exhaustion too: exit 4, said */
	rc = run_main(argc, argv);
	if (fflush(stdout) != 0)
		e = errno;
	else if (ferror(stdout))
		e = EIO; /* an earlier write failed (said then, when it went through bg_cli_write) */
	if (e) {
		bg_cli_stdout_failed(e);
		if (rc == 0)
			rc = BG_EIO;
	}
	return rc;
}

static int run_main(int argc, char **argv)
{
	struct bg_cli cli = {0};
	const struct bg_cmd *verb;
	int i = 1, rc;

	/* One short-lived process: big blocks come from the heap and freed
	 * memory stays there, instead of one mmap and munmap (and a TLB
	 * flush) per block; the system takes it all back at exit. */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	{
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_sigbus;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGBUS, &sa, NULL);
		/* a reader that closed its pipe (`| head -1`) is a failed write,
		 * exit 4 without a word (bg_cli_write), never a death by SIGPIPE
		 * (status 141, after measure stored a session, or a run killed
		 * holding its lease); what benchgate runs gets SIGPIPE back
		 * (bg_spawn resets it) */
		sa.sa_handler = SIG_IGN;
		sigaction(SIGPIPE, &sa, NULL);
	}
	while (i < argc && argv[i][0] == '-') {
		const char *a = argv[i], *joined;
		const char *g;

		if (strcmp(a, "--") == 0) { /* the end of the options, as argparse reads it: the verb follows */
			i++;
			break;
		}
		g = global_long(a, &joined);

		if (g && joined && strcmp(g, "config") != 0) {
			fprintf(stderr, "benchgate: option '--%s' takes no value\n", g);
			main_usage(stderr);
			return BG_EUSAGE;
		}
		if (strcmp(a, "-h") == 0 || (g && strcmp(g, "help") == 0)) {
			main_usage(stdout);
			return 0;
		} else if (g && strcmp(g, "version") == 0) {
			printf("benchgate %s\n", BENCHGATE_VERSION);
			return 0;
		} else if (strcmp(a, "-C") == 0 || (g && !joined)) {
			const char *name = g ? "--config" : "-C";

			if (i + 1 >= argc || bg_cli_option_like(global_opts, argv[i + 1])) {
				if (i + 1 >= argc)
					fprintf(stderr, "benchgate: option '%s' needs an argument\n", name);
				else
					fprintf(stderr, "benchgate: option '%s' needs an argument, but '%s' %s; one that "
						"starts with '-' is written '%s'\n", name, argv[i + 1],
						strcmp(argv[i + 1], "--") == 0 ? "ends the options" : "reads as an option",
						g ? "--config=FILE" : "-CDIR");
				main_usage(stderr);
				return BG_EUSAGE;
			}
			if (!global_value(g ? &cli.config_file : &cli.chdir_root, name, argv[i + 1]))
				return BG_EUSAGE;
			i += 2;
		} else if (strncmp(a, "-C", 2) == 0) {
			/* -CDIR, or -C=DIR as argparse reads it */
			if (!global_value(&cli.chdir_root, "-C", a + 2 + (a[2] == '=')))
				return BG_EUSAGE;
			i++;
		} else if (g) { /* --config=FILE */
			if (!global_value(&cli.config_file, "--config", joined))
				return BG_EUSAGE;
			i++;
		} else {
			unknown_option(a);
			main_usage(stderr);
			return BG_EUSAGE;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "benchgate: a verb is required\n");
		main_usage(stderr);
		return BG_EUSAGE;
	}
	verb = bg_cli_find_verb(argv[i]);
	if (!verb) {
		bg_cli_unknown_verb("benchgate", argv[i]);
		return BG_EUSAGE;
	}
	cli.argc = argc - i;
	cli.argv = argv + i;
	/* a verb that only reads leaves the inputs it read whole mapped (up to
	 * 16 MiB of them): on the VMs benchgate is measured on, unmapping
	 * validate's three views cost 6% of its time (docs/performance.md) */
	if (verb->reads_only)
		bg_file_view_leave_mapped((size_t)16 << 20);
	rc = verb->run(&cli, verb);
	return rc == BG_CLI_HELP_SHOWN ? BG_OK : rc;
}
