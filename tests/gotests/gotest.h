/*
 * gotest.h - helpers shared by the ports of Go's own tests (tests/gotests):
 * the P count comes from the environment (meson runs every port at
 * WSRMAXPROCS 1, 2 and 8), sizes shrink under the sanitizers, and a few
 * idioms of Go's tests that wsr.h has no word for.
 *
 * Invariants:
 *   - GT_RUN(name, fn, arg) runs fn as the main G under st_run's watchdog
 *     (20 s, scaled by WSR_TEST_TIMEOUT_MULTIPLIER) at the WSRMAXPROCS the
 *     test was started with; a hang is a failure with the G/M/P dump.
 *   - gt_n(n) is n x WSR_STRESS_SCALE, divided by 10 in an ASan build (as
 *     the other stress tests do) and by 40 in a TSan build (about 1 s of
 *     TSan start-up per case is most of a port's time there), at least 1.
 *   - Nothing here measures elapsed time against a bound; gt_sleep_ms only
 *     gives other Gs a chance to reach a blocking point, as Go's tests do with
 *     time.Sleep, and the checks after it hold whatever the timing.
 * Concurrency: none of its own; everything runs inside the runtime's Gs.
 */
#ifndef WSR_TESTS_GOTESTS_GOTEST_H
#define WSR_TESTS_GOTESTS_GOTEST_H

#include <stdint.h>

#include <wsr.h>

#include "synctest.h"
#include "wsrtest.h"

/* Watchdog for one runtime: below every case's 30 s harness alarm. */
#define GT_SECS 20

#define GT_RUN(name, fn, arg) st_run((name), 0, (fn), (arg), GT_SECS)

/* The WSRMAXPROCS this process runs at (1 if unset or bad). */
int gt_procs(void);

/* Skips the case unless the test runs at exactly / at least that many Ps. */
void gt_need_procs(int n, const char *why);
void gt_need_min_procs(int n, const char *why);

/* n x WSR_STRESS_SCALE, /10 under ASan, /40 under TSan, at least 1. */
long gt_n(long n);

/* wsr_sleep_ns(ms ms). */
void gt_sleep_ms(int64_t ms);

/* CLOCK_MONOTONIC in ns. */
int64_t gt_now_ns(void);

/* One non-blocking (block 0) or blocking select case on c. */
int gt_try_send(wsr_chan *c, const void *elem);
int gt_try_recv(wsr_chan *c, void *elem, int *ok);

/* A Go "done" idiom: a closed-once channel of size 0 used as a broadcast;
 * gt_closed reports without blocking whether c is closed (and drained). */
int gt_closed(wsr_chan *c);

/* Keeps p reachable from a static table until the process exits. For what a
 * Go program abandons to its Gs (a channel a G blocks on forever when main
 * returns): freeing it would be wrong, and LeakSanitizer does not scan G
 * stacks, so without this it would report the abandoned object as leaked. */
void gt_keep(void *p);

#endif /* WSR_TESTS_GOTESTS_GOTEST_H */
