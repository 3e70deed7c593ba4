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

int cmd_run(int argc, char **argv);
int cmd_ingest(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_scale(int argc, char **argv);

#endif /* WSR_ANALYZER_CMD_H */
