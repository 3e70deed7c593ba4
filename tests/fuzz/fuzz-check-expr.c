/*
 * fuzz-check-expr.c - libFuzzer target: the `wsr check --fail-if` language
 * (analyzer/check.c: parse, look up the metric, evaluate) and the duration
 * parser of `wsr report --interval` (duration_parse), on arbitrary bytes.
 *
 * Design. The input is cut at each '\n' into at most 8 conditions, which
 * are passed to cmd_check() exactly as the shell would pass
 * `wsr check DB --fail-if C1 --fail-if C2 ...`: a condition that does not
 * parse ends in a usage error (exit 2) before the database is opened; a
 * set that parses is evaluated against a real database, made once at start
 * by ingesting tests/fuzz/data/trace (a cut-down `wsr run` trace of fib).
 * Each condition is also fed to duration_parse().
 *
 * Invariants:
 *   - cmd_check() returns 0, 1 or 2 and nothing else, whatever the bytes;
 *     a condition made only of a metric name, an operator and a finite
 *     number never exits 2 when the metric exists (checked on the seeds).
 *   - duration_parse() either fails or gives a positive duration.
 *   - The database is created under a private temporary directory and
 *     removed at exit; stdout (cmd_check's verdict lines) goes to /dev/null.
 * Concurrency: libFuzzer calls the target from one thread; ingest_trace()
 *   forks a decoder child once, at initialisation.
 */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "err.h"
#include "ingest.h"
#include "duration.h"

#ifndef WSR_FUZZ_DATA_DIR
# define WSR_FUZZ_DATA_DIR "tests/fuzz/data"
#endif

#define MAX_CONDS 8

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char tmpdir[PATH_MAX];
static char db_path[PATH_MAX + 16];

static void cleanup(void)
{
	if (db_path[0] != '\0')
		unlink(db_path);
	if (tmpdir[0] != '\0')
		rmdir(tmpdir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *data = getenv("WSR_FUZZ_DATA");
	char trace[PATH_MAX];
	struct ingest_opts o = {.force = true, .timeout_s = 60};
	struct wsr_err err;

	(void)argc;
	(void)argv;
	if (data == NULL)
		data = WSR_FUZZ_DATA_DIR;
	snprintf(trace, sizeof(trace), "%s/trace", data);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/wsr-fuzz-check-XXXXXX");
	if (mkdtemp(tmpdir) == NULL) {
		perror("fuzz-check-expr: mkdtemp");
		exit(1);
	}
	snprintf(db_path, sizeof(db_path), "%s/trace.db", tmpdir);
	atexit(cleanup);
	err_init(&err);
	if (ingest_trace(trace, db_path, &o, NULL, &err) < 0) {
		err_print(&err, "fuzz-check-expr: ingesting the seed trace", stderr);
		exit(1);
	}
	/* cmd_check prints one verdict line per condition. */
	int dn = open("/dev/null", O_WRONLY);
	if (dn >= 0) {
		fflush(stdout);
		dup2(dn, 1);
		close(dn);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	char *args[3 + 2 * MAX_CONDS + 1];
	int argc = 0;

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	args[argc++] = "check";
	args[argc++] = db_path;
	char *line = text;
	for (int i = 0; i < MAX_CONDS && line != NULL; i++) {
		char *nl = strchr(line, '\n');
		if (nl != NULL)
			*nl = '\0';
		int64_t ns = 0;
		if (duration_parse(line, &ns) == 0 && ns <= 0) {
			fprintf(stderr, "duration_parse('%s') accepted %lld ns\n", line,
				(long long)ns);
			abort();
		}
		args[argc++] = "--fail-if";
		args[argc++] = line;
		line = nl != NULL ? nl + 1 : NULL;
	}
	args[argc] = NULL;
	int rc = cmd_check(argc, args);
	if (rc < 0 || rc > 2) {
		fprintf(stderr, "cmd_check returned %d\n", rc);
		abort();
	}
	free(text);
	return 0;
}
