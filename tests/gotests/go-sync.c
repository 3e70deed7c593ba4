/*
 * go-sync.c - Go's sync/waitgroup_test.go and sync/mutex_test.go, ported
 * by behaviour to wsr_waitgroup and wsr_mutex; each case names the Go test.
 * The misuse tests (TestWaitGroupMisuse, TestMutexMisuse's Mutex cases)
 * are in go-crash.c (and tests/sync/test-fatal.c's misuse_throws). Not
 * ported (see tests/README.md): TryLock (TestMutex's TryLock half; the
 * hammer's every third TryLock is a Lock here), RWMutex, TestSemaphore
 * (the runtime's internal semaphore), TestWaitGroupAlign (a layout matter).
 *
 * Invariants: cases run at the WSRMAXPROCS meson gives, under st_run's
 *   watchdog; Go's "within 10 s" (TestMutexFairness) is the watchdog.
 * Concurrency: shared counters are atomics, or plain under the mutex.
 */
#include <stdatomic.h>

#include "gotest.h"

/* ---- TestWaitGroup ----
 * 16 Gs each Done wg1 then Wait wg2; main Waits wg1, then Dones wg2 16
 * times, checking before each that no G has got past wg2 yet; finally all
 * 16 must get past. The same pair of waitgroups, 8 times over. */
struct wgt {
	wsr_waitgroup *wg1, *wg2;
	wsr_chan *exited;
};

static void wgt_g(void *arg)
{
	struct wgt *t = arg;
	int v = 1;

	wsr_waitgroup_done(t->wg1);
	wsr_waitgroup_wait(t->wg2);
	ASSERT_EQ(wsr_chan_send(t->exited, &v), 0);
}

static int wg_main(void *arg)
{
	enum {
		N = 16
	};
	struct wgt t = {wsr_waitgroup_make(), wsr_waitgroup_make(), NULL};
	int round, i, v;

	(void)arg;
	for (round = 0; round < 8; round++) {
		t.exited = wsr_chan_make(sizeof(int), N);
		wsr_waitgroup_add(t.wg1, N);
		wsr_waitgroup_add(t.wg2, N);
		for (i = 0; i < N; i++)
			wsr_go(wgt_g, &t);
		wsr_waitgroup_wait(t.wg1);
		for (i = 0; i < N; i++) {
			if (gt_try_recv(t.exited, &v, NULL))
				wsrtest_fail(__FILE__, __LINE__,
					     "WaitGroup released group too soon");
			wsr_waitgroup_done(t.wg2);
		}
		for (i = 0; i < N; i++)
			ASSERT_EQ(wsr_chan_recv(t.exited, &v), 1);
		wsr_chan_free(t.exited);
	}
	wsr_waitgroup_free(t.wg1);
	wsr_waitgroup_free(t.wg2);
	return 0;
}

WSR_TEST_TIMEOUT(TestWaitGroup, 30)
{
	GT_RUN("TestWaitGroup", wg_main, NULL);
}

/* ---- TestWaitGroupRace ----
 * Two Gs each add 1 to n and Done; Wait must not return before both did
 * (no spurious wakeup). 1000 fresh waitgroups. */
struct wgr {
	wsr_waitgroup *wg;
	_Atomic int n;
};

static void wgr_g(void *arg)
{
	struct wgr *r = arg;

	atomic_fetch_add(&r->n, 1);
	wsr_waitgroup_done(r->wg);
}

static int wgr_main(void *arg)
{
	long i, n = gt_n(1000);

	(void)arg;
	for (i = 0; i < n; i++) {
		struct wgr r = {wsr_waitgroup_make(), 0};

		wsr_waitgroup_add(r.wg, 1);
		wsr_go(wgr_g, &r);
		wsr_waitgroup_add(r.wg, 1);
		wsr_go(wgr_g, &r);
		wsr_waitgroup_wait(r.wg);
		if (atomic_load(&r.n) != 2)
			wsrtest_fail(__FILE__, __LINE__, "spurious wakeup from Wait");
		wsr_waitgroup_free(r.wg);
	}
	return 0;
}

WSR_TEST_TIMEOUT(TestWaitGroupRace, 30)
{
	GT_RUN("TestWaitGroupRace", wgr_main, NULL);
}

/* ---- TestMutex ----
 * 10 Gs hammer one mutex, 1000 lock/unlock pairs each (Go's every third
 * iteration is a TryLock, which wsr lacks: a Lock here). The protected
 * counter is plain: only the mutex makes it right, and TSan checks that. */
struct hammer {
	wsr_mutex *m;
	long count; /* under m */
	wsr_chan *cdone;
};

static void hammer_g(void *arg)
{
	struct hammer *h = arg;
	int i, v = 1;

	for (i = 0; i < 1000; i++) {
		wsr_mutex_lock(h->m);
		h->count++;
		wsr_mutex_unlock(h->m);
	}
	ASSERT_EQ(wsr_chan_send(h->cdone, &v), 0);
}

static int mutex_main(void *arg)
{
	struct hammer h = {wsr_mutex_make(), 0, wsr_chan_make(sizeof(int), 0)};
	int i, v;

	(void)arg;
	wsr_mutex_lock(h.m);
	wsr_mutex_unlock(h.m);
	for (i = 0; i < 10; i++)
		wsr_go(hammer_g, &h);
	for (i = 0; i < 10; i++)
		ASSERT_EQ(wsr_chan_recv(h.cdone, &v), 1);
	ASSERT_EQ(h.count, 10 * 1000);
	wsr_mutex_free(h.m);
	wsr_chan_free(h.cdone);
	return 0;
}

WSR_TEST_TIMEOUT(TestMutex, 30)
{
	GT_RUN("TestMutex", mutex_main, NULL);
}

/* ---- TestMutexFairness ----
 * One G holds the mutex most of the time (lock, sleep 100 us, unlock, loop
 * until stop); another must still get it 10 times (sleeping 100 us before
 * each). Go gives it 10 s; here the watchdog. */
struct mfair {
	wsr_mutex *mu;
	wsr_chan *stop, *done;
	wsr_waitgroup *wg;
};

static void mfair_holder(void *arg)
{
	struct mfair *f = arg;

	for (;;) {
		wsr_mutex_lock(f->mu);
		wsr_sleep_ns(100000);
		wsr_mutex_unlock(f->mu);
		if (gt_closed(f->stop))
			break;
	}
	wsr_waitgroup_done(f->wg);
}

static void mfair_taker(void *arg)
{
	struct mfair *f = arg;
	int i, v = 1;

	for (i = 0; i < 10; i++) {
		wsr_sleep_ns(100000);
		wsr_mutex_lock(f->mu);
		wsr_mutex_unlock(f->mu);
	}
	ASSERT_EQ(wsr_chan_send(f->done, &v), 0);
	wsr_waitgroup_done(f->wg);
}

static int mfair_main(void *arg)
{
	struct mfair f = {wsr_mutex_make(), wsr_chan_make(0, 0), wsr_chan_make(sizeof(int), 1),
			  wsr_waitgroup_make()};
	int v;

	(void)arg;
	wsr_waitgroup_add(f.wg, 2);
	wsr_go(mfair_holder, &f);
	wsr_go(mfair_taker, &f);
	ASSERT_EQ(wsr_chan_recv(f.done, &v), 1);
	wsr_chan_close(f.stop);
	wsr_waitgroup_wait(f.wg);
	wsr_mutex_free(f.mu);
	wsr_chan_free(f.stop);
	wsr_chan_free(f.done);
	wsr_waitgroup_free(f.wg);
	return 0;
}

WSR_TEST_TIMEOUT(TestMutexFairness, 30)
{
	GT_RUN("TestMutexFairness", mfair_main, NULL);
}
