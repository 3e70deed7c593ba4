/*
 * test-sysmon.c - sysmon's decision about one P (wsr__sysmon_check, Go:
 * the body of retake's loop), driven look by look on a P that no M uses,
 * with a made-up clock: a G that runs too long is asked to yield, a long
 * call loses its P, and a G that makes back-to-back short calls loses its P
 * once it has held it for a time slice, however many calls it made (Go
 * issue 28701; issue 17 here, where it kept the P for ever).
 *
 * Invariants: no runtime is started (sched.nmspinning and sched.npidle are
 *   0: nobody else could take work, as at WSRMAXPROCS=1); each case uses
 *   its own zeroed P; times are arguments, never read from a clock.
 * Concurrency: none; the test is sysmon.
 */
#include "config.h"

#include <string.h>

#include "proc.h"
#include "wsrtest.h"

#define MS (1000 * 1000)
#define US 1000

static struct wsr_p p;

static void reset(uint32_t status)
{
	memset(&p, 0, sizeof(p));
	store_relaxed(&p.status, status);
	store_relaxed(&p.schedtick, 7);
}

/* One G running without a yield point: asked to yield once its slice
 * (10 ms) is over, and not before. */
WSR_TEST(running_g_is_preempted_after_a_slice)
{
	int64_t now;
	int looks = 0;

	reset(P_RUNNING);
	for (now = 1 * MS; now < 100 * MS; now += 100 * US) {
		enum sm_action a = wsr__sysmon_check(&p, now);

		looks++;
		if (a == SM_PREEMPT)
			break;
		ASSERT_EQ(a, SM_NONE);
	}
	/* First look at 1 ms starts the slice; it ends at 11 ms. */
	ASSERT_EQ(now, 11 * MS);
	ASSERT_EQ(looks, 101);
}

/* One long call: the P is retaken at the second look that sees it. */
WSR_TEST(long_call_loses_its_p)
{
	reset(P_SYSCALL);
	store_relaxed(&p.syscalltick, 3);
	store_relaxed(&p.syscallwhen, 1 * MS);
	ASSERT_EQ(wsr__sysmon_check(&p, 1 * MS + 50 * US), SM_NONE);
	ASSERT_EQ(wsr__sysmon_check(&p, 1 * MS + 100 * US), SM_RETAKE);
}

/* The case of issue 17: the G is back from its 10 us call and in the next
 * one at every look (a new syscalltick each time, never 20 us into it), and
 * never rescheduled (same schedtick). Its slice ends all the same: the P
 * must be retaken at the first look after 10 ms. */
WSR_TEST(back_to_back_short_calls_lose_the_p_after_a_slice)
{
	int64_t now;
	uint32_t tick = 3;

	reset(P_SYSCALL);
	for (now = 1 * MS; now < 1000 * MS; now += 100 * US) {
		enum sm_action a;

		store_relaxed(&p.syscalltick, ++tick);
		store_relaxed(&p.syscallwhen, now - 5 * US);
		a = wsr__sysmon_check(&p, now);
		if (a == SM_RETAKE)
			break;
		ASSERT_EQ(a, SM_NONE);
	}
	ASSERT_EQ(now, 11 * MS);
}

/* The same G, mostly in short calls, seen running at one look in 50 (its
 * time between calls): the slice counts in both states, from the first
 * look (1 ms), so the P is retaken or the G asked to yield by 11 ms. */
WSR_TEST(mostly_short_calls_and_some_running_share_one_slice)
{
	int64_t now;
	uint32_t tick = 3;
	int look = 0;
	enum sm_action a = SM_NONE;

	reset(P_SYSCALL);
	for (now = 1 * MS; now < 1000 * MS; now += 100 * US, look++) {
		bool running = look % 50 == 49;

		store_relaxed(&p.status, running ? P_RUNNING : P_SYSCALL);
		if (!running) {
			store_relaxed(&p.syscalltick, ++tick);
			store_relaxed(&p.syscallwhen, now - 5 * US);
		}
		a = wsr__sysmon_check(&p, now);
		if (a != SM_NONE)
			break;
	}
	ASSERT_EQ(now, 11 * MS);
	ASSERT_EQ(a, SM_RETAKE);
}

/* A P whose Gs change at every look (a new schedtick each time) keeps
 * making short calls: each G gets a fresh slice, so nothing is retaken. */
WSR_TEST(new_gs_making_short_calls_keep_the_p)
{
	int64_t now;
	uint32_t tick = 3, sched = 7;

	reset(P_SYSCALL);
	for (now = 1 * MS; now < 100 * MS; now += 100 * US) {
		store_relaxed(&p.schedtick, ++sched);
		store_relaxed(&p.syscalltick, ++tick);
		store_relaxed(&p.syscallwhen, now - 5 * US);
		ASSERT_EQ(wsr__sysmon_check(&p, now), SM_NONE);
	}
}
