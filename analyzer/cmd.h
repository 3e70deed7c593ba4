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
