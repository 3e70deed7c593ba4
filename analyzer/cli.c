/*
 * cli.c - the table-driven option parser of cli.h over getopt_long.
 *
 * Design: each subcommand declares a `struct cli` (its options with their
 * argument names and help lines); cli_parse() builds getopt_long's
 * optstring and `struct option` array from it, reports unknown options,
 * missing values and operand counts in one wording, and prints --help from
 * the same table. So `wsr X --help`, the parser and the man page (checked by
 * tests/analyzer/check-man.py) list the same options.
 *
 * Invariants:
 *   - At most CLI_MAX_OPTS options per table (checked: a longer table is a
 *     programming error and aborts).
 *   - Messages: "PROG: error: unknown option 'ARG'", "PROG: error: option
 *     'ARG' needs a value", "PROG: error: unexpected argument 'ARG'".
 * Concurrency: getopt's globals; one thread.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "err.h"

#define CLI_MAX_OPTS 32
#define CLI_HELP_KEY 'h'

/* "  -o, --output FILE" or "      --interval DUR" into buf. */
static void opt_label(const struct cli_opt *o, char *buf, size_t size)
{
	char s[8] = "    ";

	if (o->key < CLI_LONG)
		snprintf(s, sizeof(s), "-%c, ", o->key);
	snprintf(buf, size, "  %s--%s%s%s", s, o->name, o->arg != NULL ? " " : "",
		 o->arg != NULL ? o->arg : "");
}

void cli_help(const struct cli *cli, FILE *f)
{
	static const struct cli_opt help = {"help", CLI_HELP_KEY, NULL, "this text"};
	char label[128];
	size_t width = 0;
	size_t n = 0;

	fprintf(f, "usage: %s\n", cli->synopsis);
	if (cli->about != NULL)
		fprintf(f, "%s\n", cli->about);
	for (; cli->opts[n].name != NULL; n++) {
		opt_label(&cli->opts[n], label, sizeof(label));
		if (strlen(label) > width)
			width = strlen(label);
	}
	opt_label(&help, label, sizeof(label));
	if (strlen(label) > width)
		width = strlen(label);
	fprintf(f, "options:\n");
	for (size_t i = 0; i <= n; i++) {
		const struct cli_opt *o = i < n ? &cli->opts[i] : &help;
		const char *h = o->help;

		opt_label(o, label, sizeof(label));
		fprintf(f, "%-*s  ", (int)width, label);
		for (; *h != '\0'; h++) {
			fputc(*h, f);
			if (*h == '\n')
				fprintf(f, "%-*s  ", (int)width, "");
		}
		fputc('\n', f);
	}
	if (cli->epilog != NULL)
		fprintf(f, "%s\n", cli->epilog);
}

int cli_parse(const struct cli *cli, int argc, char **argv, cli_fn fn, void *ctx, int *first)
{
	struct option lopts[CLI_MAX_OPTS + 2];
	char sopts[3 * CLI_MAX_OPTS + 8];
	size_t n = 0, k = 0;
	int c, nargs;

	sopts[k++] = cli->in_order ? '+' : ':';
	if (cli->in_order)
		sopts[k++] = ':';
	for (; cli->opts[n].name != NULL; n++) {
		const struct cli_opt *o = &cli->opts[n];

		if (n == CLI_MAX_OPTS || o->key == CLI_HELP_KEY || o->key <= 0)
			abort(); /* a table this parser cannot hold: a programming error */
		lopts[n] = (struct option){
			o->name, o->arg != NULL ? required_argument : no_argument, NULL, o->key};
		if (o->key < CLI_LONG) {
			sopts[k++] = (char)o->key;
			if (o->arg != NULL)
				sopts[k++] = ':';
		}
	}
	lopts[n++] = (struct option){"help", no_argument, NULL, CLI_HELP_KEY};
	lopts[n] = (struct option){NULL, 0, NULL, 0};
	sopts[k++] = CLI_HELP_KEY;
	sopts[k] = '\0';

	/* 0, not 1: glibc then re-reads the optstring's ordering ('+'), which
	 * differs between wsr's own options and a subcommand's. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, sopts, lopts, NULL)) != -1) {
		if (c == CLI_HELP_KEY) {
			cli_help(cli, stdout);
			if (cli->help_extra != NULL)
				cli->help_extra(stdout);
			return 0;
		}
		if (c == '?' || c == ':') {
			char shortopt[3] = {'-', (char)optopt, '\0'};
			/* A short option inside a cluster (-xq) is named alone. */
			const char *arg = optopt > 0 && optopt < CLI_LONG &&
							  strncmp(argv[optind - 1], "--", 2) != 0
						  ? shortopt
						  : argv[optind - 1];
			err_option(cli->prog, c, arg, stderr);
			cli_help(cli, stderr);
			return 2;
		}
		int rc = fn(ctx, c, optarg);
		if (rc != 0)
			return rc == CLI_DONE ? 0 : rc;
	}
	nargs = argc - optind;
	if (nargs < cli->min_args) {
		if (cli->missing != NULL)
			fprintf(stderr, "%s: error: %s\n", cli->prog, cli->missing);
		cli_help(cli, stderr);
		return 2;
	}
	if (cli->max_args >= 0 && nargs > cli->max_args) {
		fprintf(stderr, "%s: error: unexpected argument '%s'\n", cli->prog,
			argv[optind + cli->max_args]);
		return 2;
	}
	*first = optind;
	return -1;
}

int cli_self_dir(char *dir, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", dir, size - 1);
	char *slash;

	if (n <= 0)
		return -1;
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	if (slash == NULL)
		return -1;
	*slash = '\0';
	return 0;
}

int cli_exec_sibling(const char *prog, const char *name, char **argv)
{
	char self[PATH_MAX], path[PATH_MAX + 32];

	fflush(NULL);
	if (cli_self_dir(self, sizeof(self)) == 0) {
		snprintf(path, sizeof(path), "%s/wsr-%s", self, name);
		if (access(path, X_OK) == 0)
			execv(path, argv);
		snprintf(path, sizeof(path), "%s/../viewer/wsr-%s", self, name);
		if (access(path, X_OK) == 0)
			execv(path, argv);
	}
	snprintf(path, sizeof(path), "wsr-%s", name);
	execvp(path, argv);
	fprintf(stderr, "%s: error: cannot run wsr-%s: %s\n", prog, name, strerror(errno));
	return 1;
}
