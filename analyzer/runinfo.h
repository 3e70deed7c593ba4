/*
 * runinfo.h - what `wsr run` recorded about a run (TRACE/wsr-run.json,
 * written by analyzer/record/cmd_run.c), read back by `wsr ingest`.
 *
 * Invariants:
 *   - The JSON is parsed by SQLite's JSON functions on the caller's
 *     connection (no hand-written parser); a file that is not valid JSON or
 *     lacks `program`/`argv` is bad input (err_input), an absent file is not
 *     an error (found = false: a trace recorded by hand has none).
 *   - Keys missing from an older wsr-run.json are marked absent (-1), never
 *     invented.
 * Concurrency: none.
 */
#ifndef WSR_ANALYZER_RUNINFO_H
#define WSR_ANALYZER_RUNINFO_H

#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

#include "err.h"

struct run_info {
	bool found;
	char program[1024];  /* argv[0] as given to `wsr run` */
	char command[4096];  /* argv, shell-quoted where needed, space-separated */
	int64_t exit_status; /* as a shell's $? (128 + N when killed by signal N) */
	int64_t exit_signal; /* N when a signal killed it, 0 when it exited; -1 absent */
	int64_t packets, stream_bytes, streams; /* what the packet indexes held; -1 absent */
	double wall_s;
	int lossless; /* 0/1, -1 absent */
	int flushed;  /* 0: `lttng stop` gave up on the tracer's last data; 1; -1 absent */
};

/* Reads DIR/wsr-run.json into *RI. Returns 0 or -1. */
int run_info_load(sqlite3 *db, const char *dir, struct run_info *ri, struct wsr_err *err);

#endif /* WSR_ANALYZER_RUNINFO_H */
