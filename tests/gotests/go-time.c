/*
 * go-time.c - the cases of Go's time/sleep_test.go that need only a sleep,
 * ported by behaviour to wsr_sleep_ns; each case names the Go test. wsr has
 * no timers of its own (time.After, AfterFunc, NewTimer, Reset, Stop,
 * Ticker): where a Go test uses After only to wait, a G that sleeps stands
 * for it; the tests of the timer objects themselves are listed in
 * tests/README.md. tests/sync/test-proc.c already checks 10,000 sleepers
 * and deadline order (timers_fire_in_deadline_order_p1, a simpler
 * TestAfterQueuing).
 *
 * Invariants: a sleep must last at least what was asked (the contract, not
 *   a timing bound); nothing asserts an upper bound on elapsed time.
 * Concurrency: shared flags are atomics; the signal handler only counts.
 */
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "gotest.h"

/* ---- TestSleep ----
 * A G sleeps delay/2, then interrupts the process with a signal whose
 * handler has no SA_RESTART (Go: SIGCHLD through syscall.Kill), so any
 * thread in epoll_wait/futex/nanosleep gets EINTR; main's Sleep(delay)
 * must still last at least delay. */
static volatile sig_atomic_t interrupts;

static void on_signal(int sig)
{
	(void)sig;
	interrupts++;
}

static void interrupter(void *arg)
{
	wsr_waitgroup *wg = arg;

	gt_sleep_ms(50);
	ASSERT_EQ(kill(getpid(), SIGCHLD), 0);
	wsr_waitgroup_done(wg);
}

static int sleep_main(void *arg)
{
	const int64_t delay = 100000000;
	wsr_waitgroup *wg = wsr_waitgroup_make();
	int64_t start, took;

	(void)arg;
	wsr_waitgroup_add(wg, 1);
	wsr_go(interrupter, wg);
	start = gt_now_ns();
	wsr_sleep_ns(delay);
	took = gt_now_ns() - start;
	if (took < delay)
		wsrtest_fail(__FILE__, __LINE__, "Sleep(100 ms) slept for only %lld ns",
			     (long long)took);
	wsr_waitgroup_wait(wg);
	wsr_waitgroup_free(wg);
	ASSERT_EQ(interrupts, 1);
	return 0;
}

WSR_TEST_TIMEOUT(TestSleep, 30)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART */
	sigemptyset(&sa.sa_mask);
	ASSERT_EQ(sigaction(SIGCHLD, &sa, NULL), 0);
	GT_RUN("TestSleep", sleep_main, NULL);
}

/* ---- TestAfterQueuing ----
 * 13 Gs wait for "After(slot x delta)" (here: sleep it) and report their
 * slot on a buffered channel; the slots (with repeats) must arrive in
 * non-decreasing order. As in Go, up to 5 attempts with delta = 20, 70,
 * 120, 170, 220 ms, failing only if all fail: on a loaded machine a thread
 * can wait tens of ms for a CPU (Go's own runtime then reorders 20 ms
 * neighbours too). Go also bounds each arrival time; that is not done here
 * (no timing bound). */
static const int slots[] = {5, 3, 6, 6, 6, 1, 1, 2, 7, 9, 4, 8, 0};
#define NSLOTS ((int)(sizeof(slots) / sizeof(slots[0])))

struct await {
	int slot;
	int64_t delta;
	wsr_chan *result;
};

static void await_g(void *arg)
{
	struct await *a = arg;

	wsr_sleep_ns(a->slot * a->delta);
	ASSERT_EQ(wsr_chan_send(a->result, &a->slot), 0);
}

/* One attempt: 1 if the slots came in order, else 0 (and says how). */
static int after_queuing(int64_t delta)
{
	wsr_chan *result = wsr_chan_make(sizeof(int), NSLOTS);
	struct await as[NSLOTS];
	int i, order[NSLOTS], good = 1;

	for (i = 0; i < NSLOTS; i++) {
		as[i].slot = slots[i];
		as[i].delta = delta;
		as[i].result = result;
		wsr_go(await_g, &as[i]);
	}
	for (i = 0; i < NSLOTS; i++)
		ASSERT_EQ(wsr_chan_recv(result, &order[i]), 1);
	for (i = 1; i < NSLOTS && good; i++)
		if (order[i] < order[i - 1]) {
			printf("# delta %lld ms: After calls returned out of order: %d after %d\n",
			       (long long)delta / 1000000, order[i], order[i - 1]);
			good = 0;
		}
	wsr_chan_free(result);
	return good;
}

static int aq_main(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 5; i++)
		if (after_queuing((int64_t)(20 + i * 50) * 1000000))
			return 0;
	wsrtest_fail(__FILE__, __LINE__, "out of order in all 5 attempts");
}

WSR_TEST_TIMEOUT(TestAfterQueuing, 30)
{
	GT_RUN("TestAfterQueuing", aq_main, NULL);
}

/* ---- TestSleepZeroDeadlock ----
 * Sleep(0) used to leave the G marked waiting, so the next trip into the
 * scheduler (Go: a GC from another G) lost it. Main does Sleep(0) and a
 * buffered channel round trip 100 times while another G keeps entering the
 * scheduler (yields, Go's GCs), at 4 Ps in Go, at the test's P count here. */
struct szd {
	wsr_chan *c;
	_Atomic int stop;
};

static void szd_g(void *arg)
{
	struct szd *s = arg;
	int i, v = 1;

	for (i = 0; i < 100 || !atomic_load(&s->stop); i++)
		wsr_yield();
	ASSERT_EQ(wsr_chan_send(s->c, &v), 0);
}

static int szd_main(void *arg)
{
	struct szd s = {wsr_chan_make(sizeof(int), 0), 0};
	int i, v = 1;

	(void)arg;
	wsr_go(szd_g, &s);
	for (i = 0; i < 100; i++) {
		wsr_chan *tmp = wsr_chan_make(sizeof(int), 1);

		wsr_sleep_ns(0);
		ASSERT_EQ(wsr_chan_send(tmp, &v), 0);
		ASSERT_EQ(wsr_chan_recv(tmp, &v), 1);
		wsr_chan_free(tmp);
	}
	atomic_store(&s.stop, 1);
	ASSERT_EQ(wsr_chan_recv(s.c, &v), 1);
	wsr_chan_free(s.c);
	return 0;
}

WSR_TEST_TIMEOUT(TestSleepZeroDeadlock, 30)
{
	GT_RUN("TestSleepZeroDeadlock", szd_main, NULL);
}

/* ---- TestOverflowSleep ----
 * A sleep of the largest duration must not wrap into a short one (a G doing
 * it has not woken 25 ms later), nor disturb other sleeps; a sleep of the
 * most negative duration returns at once (Go checks After(neg) fires before
 * a 1 s After; here the failure would be a negative taken for a huge
 * duration, a hang, which the watchdog reports). */
static _Atomic int big_returned;

static void big_sleeper(void *arg)
{
	(void)arg;
	wsr_sleep_ns(INT64_MAX);
	atomic_store(&big_returned, 1);
}

static int overflow_main(void *arg)
{
	(void)arg;
	wsr_go(big_sleeper, NULL);
	gt_sleep_ms(25);
	ASSERT_EQ(atomic_load(&big_returned), 0);
	wsr_sleep_ns(INT64_MIN);
	wsr_sleep_ns(-1);
	ASSERT_EQ(atomic_load(&big_returned), 0);
	return 0; /* the big sleeper is abandoned, as in Go */
}

WSR_TEST_TIMEOUT(TestOverflowSleep, 30)
{
	GT_RUN("TestOverflowSleep", overflow_main, NULL);
}
