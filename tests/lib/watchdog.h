/*
 * watchdog.h - a watchdog thread for runtime tests: a hang becomes a failure
 * with the runtime's G/M/P dump, not a CI timeout.
 *
 * Invariants: after wsrtest_watchdog(secs, what), if the process is still
 *   alive secs seconds later, wsr__throw("watchdog: <what> hung") runs, which
 *   prints the dump and exits 2. secs is scaled by WSR_TEST_TIMEOUT_MULTIPLIER.
 * Concurrency: the thread only sleeps, then throws; it touches no test state.
 */
#ifndef WSR_TESTS_LIB_WATCHDOG_H
#define WSR_TESTS_LIB_WATCHDOG_H

void wsrtest_watchdog(unsigned secs, const char *what);

#endif /* WSR_TESTS_LIB_WATCHDOG_H */
