/*
 * err.h - cause chains for the analyzer: each failing function pushes one
 * line saying what it was doing; main() prints the chain once.
 *
 * Invariants:
 *   - Causes are kept innermost first; err_print() prints the outermost first
 *     as "wsr CMD: error: OUTER: caused by: ... caused by: INNER".
 *   - exit_code is 1 (failure) unless a cause was pushed with err_input(),
 *     which marks the input as bad (exit 2, like a usage error).
 *   - At most WSR_ERR_MAX causes are kept: the innermost (the root cause)
 *     and the most recent, outer ones; middle ones are dropped first.
 * Concurrency: a struct wsr_err belongs to one thread.
 */
#ifndef WSR_ANALYZER_ERR_H
#define WSR_ANALYZER_ERR_H

#include <stdio.h>

#define WSR_ERR_MAX 8
#define WSR_ERR_LEN 512

struct wsr_err {
	int n;
	int exit_code;
	char msg[WSR_ERR_MAX][WSR_ERR_LEN];
};

void err_init(struct wsr_err *err);
void err_push(struct wsr_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Pushes a cause and marks the input as bad: the command exits 2. */
void err_input(struct wsr_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints the chain on one line: "PROG: error: OUTER: caused by: INNER". */
void err_print(const struct wsr_err *err, const char *prog, FILE *f);
/* After getopt_long returned '?' or ':' (optstring starting with ':'):
 * prints "PROG: error: unknown option 'ARG'" or "... 'ARG' needs a value". */
void err_option(const char *prog, int c, const char *arg, FILE *f);
/* The chain as one string (outermost first) into buf. */
void err_format(const struct wsr_err *err, char *buf, size_t size);

#endif /* WSR_ANALYZER_ERR_H */
