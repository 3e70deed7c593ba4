/*
 * wsr.c - the `wsr` front end: dispatches `wsr SUBCOMMAND ...` to cmd_*().
 *
 * Invariants:
 *   - `wsr view` is not linked in: it execs `wsr-view` found next to this
 *     executable (git-style, cli_exec_sibling), so the front end never
 *     depends on the viewer. So does `wsr report --format html` (report.c).
 *   - Options before the subcommand are wsr's own (--help, --version), read
 *     by the same parser as every subcommand's (cli.c); everything after it
 *     is the subcommand's.
 *   - Exit codes: 0 success, 1 failure, 2 usage error.
 * Concurrency: single-threaded.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"

static int cmd_view(int argc, char **argv)
{
	(void)argc;
	return cli_exec_sibling("wsr view", "view", argv);
}

static const struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *what;
} subcommands[] = {
	{"run", cmd_run, "record PROGRAM under LTTng, ingest its trace, print the report"},
	{"ingest", cmd_ingest, "CTF trace -> SQLite database"},
	{"report", cmd_report, "the figures of a trace database (text, md, json, junit, html)"},
	{"check", cmd_check, "CI gate: exit 1 when a --fail-if condition holds"},
	{"diff", cmd_diff, "the metrics of two runs side by side"},
	{"scale", cmd_scale, "record PROGRAM at P = 1, 2, 4 ... N: speed-up plot and table"},
	{"lab", cmd_lab, "run workloads x policies x P and compare them (text, md, json, html)"},
	{"export", cmd_export, "Perfetto protobuf trace of a database"},
	{"sql", cmd_sql, "the sqlite3 shell on a trace database, read-only"},
	{"view", cmd_view, "the web UI on 127.0.0.1 (wsr-view)"},
};

static void list_subcommands(FILE *f)
{
	fprintf(f, "subcommands (wsr SUBCOMMAND --help, man wsr-SUBCOMMAND):\n");
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(f, "  %-8s %s\n", subcommands[i].name, subcommands[i].what);
}

enum {
	OPT_VERSION = CLI_LONG
};

static const struct cli_opt wsr_opts[] = {
	{"version", OPT_VERSION, NULL, "print wsr's version"},
	{NULL, 0, NULL, NULL},
};

static const struct cli wsr_cli = {
	.prog = "wsr",
	.synopsis = "wsr [--version] SUBCOMMAND [ARGS]",
	.opts = wsr_opts,
	.in_order = true,
	.min_args = 1,
	.max_args = -1,
	.help_extra = list_subcommands,
};

static int wsr_opt(void *ctx, int key, const char *arg)
{
	(void)ctx;
	(void)arg;
	if (key == OPT_VERSION) {
		printf("wsr %s\n", WSR_VERSION);
		return CLI_DONE;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int first;
	int rc = cli_parse(&wsr_cli, argc, argv, wsr_opt, NULL, &first);

	if (rc >= 0) {
		if (rc == 2)
			list_subcommands(stderr);
		return rc;
	}
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (strcmp(argv[first], subcommands[i].name) == 0)
			return subcommands[i].fn(argc - first, argv + first);
	fprintf(stderr, "wsr: error: unknown subcommand '%s'\n", argv[first]);
	cli_help(&wsr_cli, stderr);
	list_subcommands(stderr);
	return 2;
}
