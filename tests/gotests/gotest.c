/*
 * gotest.c - the helpers of gotest.h.
 *
 * Invariants: see gotest.h; gt_procs reads WSRMAXPROCS once per call, the
 *   same variable the runtime reads at wsr_main.
 * Concurrency: the select helpers are called from Gs; the rest is pure.
 */
#include "gotest.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

int gt_procs(void)
{
	const char *s = getenv("WSRMAXPROCS");
	long v = s != NULL ? strtol(s, NULL, 10) : 1;

	return v > 0 ? (int)v : 1;
}

void gt_need_procs(int n, const char *why)
{
	if (gt_procs() != n)
		wsrtest_skip("runs at WSRMAXPROCS=%d only (%s)", n, why);
}

void gt_need_min_procs(int n, const char *why)
{
	if (gt_procs() < n)
		wsrtest_skip("needs WSRMAXPROCS >= %d (%s)", n, why);
}

long gt_n(long n)
{
	long v = n * wsrtest_scale();

	if (st_tsan())
		v /= 40; /* its per-case start-up (about 1 s here) is the rest of the budget */
	else if (st_asan())
		v /= 10;
	return v > 0 ? v : 1;
}

void gt_sleep_ms(int64_t ms)
{
	wsr_sleep_ns(ms * 1000000);
}

int64_t gt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int gt_try_send(wsr_chan *c, const void *elem)
{
	wsr_select_case sc = {c, WSR_SEND, (void *)elem, 0};

	return wsr_select(&sc, 1, 0) == 0;
}

int gt_try_recv(wsr_chan *c, void *elem, int *ok)
{
	wsr_select_case sc = {c, WSR_RECV, elem, 0};
	int fired = wsr_select(&sc, 1, 0) == 0;

	if (ok != NULL)
		*ok = fired ? sc.ok : 0;
	return fired;
}

int gt_closed(wsr_chan *c)
{
	int ok;

	return gt_try_recv(c, NULL, &ok) && !ok;
}

/* External linkage, so the compiler cannot drop the stores as dead. */
void *gt_kept[4096];

void gt_keep(void *p)
{
	static _Atomic int n;
	int i = atomic_fetch_add(&n, 1);

	ASSERT_LT(i, 4096);
	gt_kept[i] = p;
}
