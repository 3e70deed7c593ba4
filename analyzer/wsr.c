/*
 * wsr.c - the `wsr` front end: dispatches `wsr SUBCOMMAND ...` to cmd_*().
 *
 * Invariants:
 *   - `wsr view` is not linked in: it execs `wsr-view` found next to this
 *     executable (git-style), so the front end never depends on the viewer.
 *     So are `wsr report --format html` and `wsr export --perfetto`: wsr-view
 *     reads the subcommand from its argv[0] ("report", "export").
 *   - Exit codes: 0 success, 1 failure, 2 usage error.
 * Concurrency: single-threaded.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
};

static const struct subcommand subcommands[] = {
	{"run", cmd_run,
	 "run [--out DIR] [--lossless] [--subbuf-size SIZE] [--num-subbuf N] [--no-ingest] -- "
	 "PROGRAM ARGS"},
	{"ingest", cmd_ingest, "ingest TRACE_DIR [-o trace.db] [--force]"},
	{"report", cmd_report,
	 "report trace.db [--interval 10ms] [--detail] [--format text|md|json|junit|html] "
	 "[--steal-graph dot]"},
	{"check", cmd_check, "check trace.db --fail-if 'METRIC OP VALUE' ..."},
	{"diff", cmd_diff, "diff base.db new.db"},
	{"scale", cmd_scale, "scale [--out DIR] [--max-procs N] -- PROGRAM ARGS"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: wsr SUBCOMMAND [ARGS]\n\nsubcommands:\n");
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(f, "  wsr %s\n", subcommands[i].usage);
	fprintf(f, "  wsr report --format html [-o report.html] trace.db\n"
		   "  wsr export --perfetto trace.db -o trace.perfetto-trace\n"
		   "  wsr view trace.db [--port N]\n  wsr --version\n");
}

/* Runs wsr-NAME from the directory of this executable, then from PATH. */
static int exec_sibling(const char *name, char **argv)
{
	char self[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash != NULL) {
			*slash = '\0';
			snprintf(path, sizeof(path), "%s/wsr-%s", self, name);
			if (access(path, X_OK) == 0)
				execv(path, argv);
			snprintf(path, sizeof(path), "%s/../viewer/wsr-%s", self, name);
			if (access(path, X_OK) == 0)
				execv(path, argv);
		}
	}
	snprintf(path, sizeof(path), "wsr-%s", name);
	execvp(path, argv);
	fprintf(stderr, "wsr %s: error: cannot run wsr-%s: %s\n", name, name, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("wsr %s\n", WSR_VERSION);
		return 0;
	}
	/* HTML reports and Perfetto exports are the viewer's (wsr-view, git-style). */
	if (strcmp(argv[1], "export") == 0)
		return exec_sibling("view", argv + 1);
	if (strcmp(argv[1], "report") == 0) {
		for (int i = 2; i + 1 < argc; i++)
			if (strcmp(argv[i], "--format") == 0 && strcmp(argv[i + 1], "html") == 0)
				return exec_sibling("view", argv + 1);
	}
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (strcmp(argv[1], subcommands[i].name) == 0)
			return subcommands[i].fn(argc - 1, argv + 1);
	if (strcmp(argv[1], "view") == 0)
		return exec_sibling("view", argv + 1);
	fprintf(stderr, "wsr: error: unknown subcommand '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
