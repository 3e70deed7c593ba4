/*
 * cli.h - the one command-line parser of every `wsr` subcommand and of
 * wsr-view (cli.c): getopt_long driven by a table that also prints --help,
 * so an option cannot be accepted without being listed, nor listed without
 * being accepted. docs/man/wsr-SUBCOMMAND.1.scd documents the same table;
 * the test `man-pages` compares each --help with its man page.
 *
 * Invariants:
 *   - -h/--help is implicit in every table: it prints the help on stdout and
 *     the command exits 0.
 *   - A usage error prints "PROG: error: ..." on stderr (and, for an unknown
 *     option or a missing operand, the help) and the command exits 2.
 *   - Options may follow operands (GNU style) unless in_order is set, in
 *     which case they end at the first operand (`wsr run -- PROGRAM ARGS`).
 * Concurrency: uses getopt's globals (optind, optarg): call from one thread.
 */
#ifndef WSR_ANALYZER_CLI_H
#define WSR_ANALYZER_CLI_H

#include <stdbool.h>
#include <stdio.h>

/* Keys above this value name long-only options. */
#define CLI_LONG 256

struct cli_opt {
	const char *name; /* long name, without "--" */
	int key;          /* the short option's letter, or CLI_LONG + n for a long-only one */
	const char *arg;  /* the argument's name in --help and the man page; NULL: none */
	const char *help; /* what it does; '\n' starts a continuation line */
};

struct cli {
	const char *prog;            /* "wsr report": the prefix of every message */
	const char *synopsis;        /* the usage line(s) after "usage: " */
	const char *about;           /* a paragraph after the synopsis, or NULL */
	const char *epilog;          /* a paragraph after the options, or NULL */
	const struct cli_opt *opts;  /* ends with a NULL name; --help is added */
	bool in_order;               /* options end at the first operand */
	int min_args, max_args;      /* operands allowed; max_args < 0: any number */
	const char *missing;         /* said when fewer than min_args operands, or NULL */
	void (*help_extra)(FILE *f); /* printed after --help's text (e.g. the metrics) */
};

/* A cli_fn's answer when its option did the whole job (--version, --list): exit 0. */
#define CLI_DONE (-1)

/*
 * Called once per option in command-line order with its key and argument
 * (NULL when it takes none). Returns 0 to go on, CLI_DONE, or an exit status
 * (2 for a bad value, after printing why) that makes cli_parse() stop and
 * return it.
 */
typedef int (*cli_fn)(void *ctx, int key, const char *arg);

/*
 * Parses argv[1..argc-1] (argv[0] is the subcommand). Returns -1 when the
 * command should go on, with *first the index of the first operand in argv;
 * otherwise the status to exit with (0 after --help, 2 on a usage error).
 */
int cli_parse(const struct cli *cli, int argc, char **argv, cli_fn fn, void *ctx, int *first);

/* The --help text: synopsis, about, one line per option, epilog. */
void cli_help(const struct cli *cli, FILE *f);

/* This executable's directory (from /proc/self/exe) into DIR; 0, or -1. */
int cli_self_dir(char *dir, size_t size);

/*
 * Execs wsr-NAME from this executable's directory, else ../viewer/ (a build
 * tree), else PATH, with ARGV (argv[0] tells it the subcommand). Returns 1
 * after printing "PROG: error: cannot run wsr-NAME: ..." if none would run.
 */
int cli_exec_sibling(const char *prog, const char *name, char **argv);

#endif /* WSR_ANALYZER_CLI_H */
