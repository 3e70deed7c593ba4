/*
 * stress-wakeup.c - no lost wakeup: 10,000 rounds of "every M goes idle,
 * then one G readies work" (from a timer: the main G sleeps, wakes, and
 * spawns one G per P, which must all run), plus rounds where the work is
 * readied by a channel send from a G on another P.
 *
 * Invariants: a lost wakeup shows as a hang, which the watchdog turns into
 *   a failure with the G/M/P dump; the runtime's own checkdead throws if a G
 *   is runnable while every M is parked.
 * Concurrency: the rounds are sequenced by a waitgroup and a channel.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <wsr.h>

#include "proc.h"
#include "watchdog.h"
#include "wsrtest.h"

static wsr_waitgroup *wg;
static _Atomic long ran;
static wsr_chan *ping, *pong;

static void work(void *arg)
{
	(void)arg;
	ran++;
	wsr_waitgroup_done(wg);
}

static void echo(void *arg)
{
	long v;

	(void)arg;
	while (wsr_chan_recv(ping, &v) == 1) {
		/* Sleep so this P and M go idle before the reply readies main. */
		wsr_sleep_ns(2000);
		wsr_chan_send(pong, &v);
	}
}

static int rounds_main(void *arg)
{
	long rounds = *(long *)arg, r, v;
	int p = wsr_gomaxprocs(), i;

	wg = wsr_waitgroup_make();
	for (r = 0; r < rounds; r++) {
		/* Everyone idle: the only G sleeps. */
		wsr_sleep_ns(5000);
		wsr_waitgroup_add(wg, p);
		for (i = 0; i < p; i++)
			wsr_go(work, NULL);
		wsr_waitgroup_wait(wg);
	}
	ping = wsr_chan_make(sizeof(long), 0);
	pong = wsr_chan_make(sizeof(long), 0);
	wsr_go(echo, NULL);
	for (r = 0; r < rounds; r++) {
		wsr_chan_send(ping, &r);
		ASSERT_EQ(wsr_chan_recv(pong, &v), 1);
		ASSERT_EQ(v, r);
	}
	wsr_chan_close(ping);
	wsr_waitgroup_free(wg);
	return 0;
}

static void run(int procs)
{
	long rounds = 10000 * wsrtest_scale();
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", procs);
	setenv("WSRMAXPROCS", buf, 1);
	wsrtest_watchdog(200, "wakeup rounds");
	ran = 0;
	ASSERT_EQ(wsr_main(rounds_main, &rounds), 0);
	ASSERT_EQ(ran, rounds * procs);
	printf("# %d Ps: %ld rounds; m_park=%llu m_unpark=%llu netpoll=%llu timer_fire=%llu\n", procs,
	       rounds, (unsigned long long)wsr__last_stats[WSR_ST_m_park],
	       (unsigned long long)wsr__last_stats[WSR_ST_m_unpark],
	       (unsigned long long)wsr__last_stats[WSR_ST_netpoll],
	       (unsigned long long)wsr__last_stats[WSR_ST_timer_fire]);
}

WSR_TEST_TIMEOUT(wakeup_rounds_p2, 240)
{
	run(2);
}

WSR_TEST_TIMEOUT(wakeup_rounds_p4, 240)
{
	run(4);
}
