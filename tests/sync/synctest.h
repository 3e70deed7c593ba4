/*
 * synctest.h - helpers shared by the tests/sync cases: run a main G under a
 * watchdog, and run a whole runtime in a forked child with its stdout and
 * stderr captured (for exit codes and fatal messages).
 *
 * Invariants:
 *   - st_run() arms a watchdog thread before wsr_main: if the runtime has not
 *     returned after the given seconds it calls wsr__throw("watchdog: NAME
 *     hung"), which prints the G/M/P dump and exits 2, so a hang is a failure
 *     with a diagnosis rather than a bare SIGALRM. The watchdog fires before
 *     the harness alarm (keep secs below the case timeout).
 *   - st_fork() runs fn in a plain fork: fine for code that starts no
 *     thread, but the test process already runs LTTng-UST's threads and
 *     TSan refuses to start threads after a multi-threaded fork, so a child
 *     that boots the runtime must be exec'd (st_exec, as test-fatal does
 *     with sync-child).
 * Concurrency: the watchdog is a plain pthread, not an M; it only reads the
 *   clock and, on expiry, throws.
 */
#ifndef WSR_TESTS_SYNC_SYNCTEST_H
#define WSR_TESTS_SYNC_SYNCTEST_H

#include <stdbool.h>
#include <stddef.h>

/* Sets WSRMAXPROCS (if procs > 0), arms the watchdog, runs wsr_main(fn, arg)
 * and fails the case unless it returns 0. */
void st_run(const char *name, int procs, int (*fn)(void *), void *arg, unsigned secs);

/* Arms the watchdog alone (for code that calls wsr_main itself). */
void st_watchdog(const char *name, unsigned secs);

struct st_child {
	int status; /* raw waitpid status */
	char *out;  /* captured stdout, NUL-terminated (malloc'd) */
	char *err;  /* captured stderr */
};

/* Forks; the child runs fn(arg) with stdout and stderr redirected into
 * pipes, then _exit(0) if fn returns. The parent collects both streams and
 * the exit status (it gives up on the child after secs seconds: SIGKILL). */
void st_fork(struct st_child *r, void (*fn)(void *), void *arg, unsigned secs);
/* Like st_fork, but execs argv (envp NULL keeps the environment). */
void st_exec(struct st_child *r, char *const argv[], unsigned secs);
void st_child_free(struct st_child *r);

/* Exit code if the child exited, else -signal. */
int st_code(const struct st_child *r);

/* True when built with AddressSanitizer / ThreadSanitizer. */
bool st_asan(void);
bool st_tsan(void);

/* Deterministic PRNG for tests (splitmix64 on a caller-owned state). */
unsigned long long st_rand(unsigned long long *state);

#endif /* WSR_TESTS_SYNC_SYNCTEST_H */
