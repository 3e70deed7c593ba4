/*
 * sysmon.c - the system monitor thread (Go: sysmon, retake, preemptone):
 * retakes Ps from Ms stuck in a call for more than 20 us, asks Gs that ran
 * for more than 10 ms to yield, fires the schedtrace lines, wakes an M
 * for timers nobody is waiting on, and every 10 ms runs the poller's sweep
 * (wsr__netpoll_sweep: fds whose park trusted an old registration).
 *
 * The 10 ms time slice counts from sysmon's first look at a schedtick, in
 * P_RUNNING and P_SYSCALL alike (Go's retake since issue 28701): a G that
 * makes back-to-back calls shorter than sysmon's period is never seen in
 * the same call twice, yet once its slice is over its P is retaken (it has
 * no M to ask to yield) and handed off, so the other Gs of its P run. The
 * slice then starts again, so a G alone on its P is handed off at most once
 * per slice.
 *
 * Invariants:
 *   - sysmon holds no P and is not an M (m = -1 in its events); it never
 *     touches a P's queues, only statuses (CAS), the preempt flag and the
 *     per-P fields reserved for it (sm_*); the Gs its sweep wakes go to the
 *     global queue (injectglist without a P).
 *   - Its sleep starts at 20 us and doubles after 50 idle rounds up to 10 ms,
 *     and is never longer than the next schedtrace tick.
 * Concurrency: one thread; stopped through stopnote at teardown.
 * Tracepoints: retake, handoff (syscall.c), preempt, schedtrace (debug.c).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "proc.h"
#include "runq.h"

#define FORCE_PREEMPT_NS (10 * 1000 * 1000)
#define SYSCALL_RETAKE_NS (20 * 1000)
#define NETPOLL_SWEEP_NS (10 * 1000 * 1000)

struct wsr_stats wsr__sysmon_stats;
static pthread_t thread;
static struct wsr_note stopnote;
static bool started;

enum sm_action wsr__sysmon_check(struct wsr_p *pp, int64_t now)
{
	uint32_t s = load_seq(&pp->status), t;
	bool sysretake = false;

	if (s != P_RUNNING && s != P_SYSCALL)
		return SM_NONE;
	/* The time slice, for a P in a call as well as a running one (Go
	 * issue 28701): a G whose calls are shorter than sysmon's period is
	 * always back on its P, or in a new call, when sysmon looks again, so
	 * the call tests below never fire; it must still lose the P when its
	 * slice is over. sm_schedwhen 0: the first look at this P (its tick
	 * may still be 0, as sm_schedtick is): start its slice now. */
	t = load_relaxed(&pp->schedtick);
	if (pp->sm_schedtick != t || pp->sm_schedwhen == 0) {
		pp->sm_schedtick = t;
		pp->sm_schedwhen = now;
	} else if (pp->sm_schedwhen + FORCE_PREEMPT_NS <= now) {
		if (s == P_RUNNING)
			return load_relaxed(&pp->preempt) ? SM_NONE : SM_PREEMPT;
		/* No M to ask: take the P (Go's sysretake). */
		sysretake = true;
	}
	if (s == P_RUNNING)
		return SM_NONE;
	t = load_relaxed(&pp->syscalltick);
	if (!sysretake && (pp->sm_syscalltick != t || pp->sm_syscallwhen == 0)) {
		pp->sm_syscalltick = t;
		pp->sm_syscallwhen = now;
		return SM_NONE;
	}
	/* Like Go: keep the P if it has nothing to do and others can take
	 * work anyway, unless the call has lasted 10 ms. */
	if (wsr__runqempty(pp) &&
	    load_seq(&wsr__sched.nmspinning) + load_seq(&wsr__sched.npidle) > 0 &&
	    pp->sm_syscallwhen + FORCE_PREEMPT_NS > now)
		return SM_NONE;
	/* One call, seen twice: retake it once it has lasted 20 us. */
	if (!sysretake && now - load_relaxed(&pp->syscallwhen) < SYSCALL_RETAKE_NS)
		return SM_NONE;
	return SM_RETAKE;
}

static int retake(int64_t now)
{
	int n = 0;
	int32_t i;

	for (i = 0; i < wsr__sched.gomaxprocs; i++) {
		struct wsr_p *pp = &wsr__sched.allp[i];

		switch (wsr__sysmon_check(pp, now)) {
		case SM_PREEMPT:
			store_relaxed(&pp->preempt, 1);
			WSR_TRACE(preempt, &wsr__sysmon_stats, pp->id, -1,
				  load_relaxed(&pp->curgoid), now - pp->sm_schedwhen);
			/* Ask again only after another full slice. */
			pp->sm_schedwhen = now;
			break;
		case SM_RETAKE:
			if (wsr__retake_syscall(pp, now - load_relaxed(&pp->syscallwhen))) {
				/* The slice starts again: a G that gets the P back at
				 * once (it had nothing to yield to) is not retaken at
				 * every look. (If the G won the race for its P, the
				 * next look asks it to yield instead.) */
				pp->sm_schedwhen = now;
				n++;
			}
			break;
		case SM_NONE:
			break;
		}
	}
	return n;
}

static void *sysmon(void *arg)
{
	int64_t delay = 20 * 1000, nexttrace = 0, nextsweep = 0;
	int idle = 0;

	(void)arg;
	if (wsr__debug_schedtrace_ms > 0)
		nexttrace = wsr__nanotime();
	for (;;) {
		int64_t now, sleep = delay;

		if (nexttrace != 0) {
			int64_t left = nexttrace - wsr__nanotime();

			if (left < sleep)
				sleep = left > 0 ? left : 0;
		}
		if (sleep > 0 && wsr__notetsleep(&stopnote, sleep))
			break;
		if (load_relaxed(&wsr__sched.exiting))
			break;
		now = wsr__nanotime();
		if (nexttrace != 0 && now >= nexttrace) {
			wsr__schedtrace(wsr__debug_scheddetail != 0);
			nexttrace += wsr__debug_schedtrace_ms * 1000000;
			if (nexttrace < now)
				nexttrace = now + wsr__debug_schedtrace_ms * 1000000;
		}
		/* A timer is overdue and no M waits in the poller: get one going. */
		{
			int64_t w = wsr__timers_next();

			/* w may be INT64_MAX (wsr_sleep_ns(INT64_MAX)): compare
			 * without adding to it. */
			if (w != 0 && w < now - 1000000 && load_seq(&wsr__lastpoll) != 0 &&
			    load_seq(&wsr__sched.npidle) > 0)
				wsr__wakep(NULL);
		}
		if (now >= nextsweep) {
			wsr__netpoll_sweep();
			nextsweep = now + NETPOLL_SWEEP_NS;
		}
		if (retake(now) > 0)
			idle = 0;
		else
			idle++;
		if (idle == 0)
			delay = 20 * 1000;
		else if (idle > 50 && delay < 10 * 1000 * 1000)
			delay *= 2;
	}
	return NULL;
}

void wsr__sysmon_start(void)
{
	wsr__noteclear(&stopnote);
	memset(&wsr__sysmon_stats, 0, sizeof(wsr__sysmon_stats));
	if (pthread_create(&thread, NULL, sysmon, NULL) != 0)
		wsr__throw("sysmon_start: pthread_create failed");
	started = true;
}

void wsr__sysmon_stop(void)
{
	if (!started)
		return;
	wsr__notewakeup(&stopnote);
	pthread_join(thread, NULL);
	started = false;
}
