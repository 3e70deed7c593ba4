/*
 * cmd.h - the `wsr` subcommands, one function per subcommand.
 *
 * Invariants:
 *   - Each cmd_* gets argv with argv[0] = the subcommand name and returns the
 *     process exit code: 0 success, 1 failure or gate breached, 2 usage error.
 * Concurrency: single-threaded front end.
 */
#ifndef WSR_ANALYZER_CMD_H
#define WSR_ANALYZER_CMD_H

#include <stdbool.h>
#include <stdio.h>

int cmd_run(int argc, char **argv);
int cmd_ingest(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_scale(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_sql(int argc, char **argv);

int cmd_lab(int argc, char **argv);

struct wsr_err;
/* DIR must not exist (it is created) or be an empty directory (scale.c). */
int cmd_make_out_dir(const char *dir, struct wsr_err *err);
/*
 * Runs this executable's `wsr run --lossless --out OUT -- PROG...` in a child
 * with WSRMAXPROCS=PROCS (and WSRDEBUG=WSRDEBUG unless NULL), its stdout and
 * stderr to the file LOG; returns its exit status (128 + N: signal N), or -1
 * (pushed) when it could not be run (scale.c; wsr scale and wsr lab).
 */
int cmd_run_child(const char *out, const char *log, int procs, const char *wsrdebug, char **prog,
		  struct wsr_err *err);

struct ingest_opts;
/*
 * `wsr ingest DIR -o OUT` without its command line (ingest.c), for `wsr run`:
 * messages on stderr as `wsr ingest` prints them; returns its exit status
 * (128 + N when signal N interrupted it; OUT NULL: DIR/trace.db).
 */
int ingest_main(const char *dir, const char *out, const struct ingest_opts *o, bool quiet);
/*
 * `wsr report PATH` in text on F (report.c), for `wsr run`: returns the exit
 * status `wsr report` would have, after printing any error on stderr.
 */
int report_main(const char *path, FILE *f);

#endif /* WSR_ANALYZER_CMD_H */
