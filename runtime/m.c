/*
 * m.c - Ms: allocation, the idle M list, thread start and exit, per-thread
 * setup (TLS, sanitizer fiber, signal stack) (Go: allocm, newm, mstart,
 * mput, mget).
 *
 * Invariants:
 *   - sched.allm lists every M ever created; an M struct is freed only at
 *     wsr_main teardown, after its thread was joined.
 *   - An M on sched.midle is parked in stopm (blocked == true) and holds no P.
 *   - mcount counts M threads that have not exited; M0 is the wsr_main thread.
 * Concurrency: midle, nmidle, mcount, mnext and allm under sched.lock.
 * Tracepoints: none (m_create is emitted by startm_locked, under sched.lock,
 *   right after allocm, so it precedes every event that names the new M).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chaos.h"
#include "proc.h"

static bool ms_leaked; /* some M did not stop at teardown: keep its memory */

struct wsr_m *wsr__allocm(void)
{
	struct wsr_m *mp;

	wsr__assert_lock_held(&wsr__sched.lock);
	mp = calloc(1, sizeof(*mp));
	if (mp == NULL)
		wsr__throw("allocm: out of memory");
	mp->id = wsr__sched.mnext++;
	mp->rand = (uint64_t)wsr__nanotime() ^ ((uint64_t)mp->id * 0x9E3779B97F4A7C15ULL);
	mp->alllink = wsr__sched.allm;
	wsr__sched.allm = mp;
	store_relaxed(&wsr__sched.mcount, load_relaxed(&wsr__sched.mcount) + 1);
	return mp;
}

void wsr__mput(struct wsr_m *mp)
{
	wsr__assert_lock_held(&wsr__sched.lock);
	mp->schedlink = wsr__sched.midle;
	wsr__sched.midle = mp;
	mp->blocked = true;
	store_relaxed(&wsr__sched.nmidle, load_relaxed(&wsr__sched.nmidle) + 1);
}

struct wsr_m *wsr__mget(void)
{
	struct wsr_m *mp = wsr__sched.midle;

	wsr__assert_lock_held(&wsr__sched.lock);
	if (mp != NULL) {
		wsr__sched.midle = mp->schedlink;
		mp->schedlink = NULL;
		mp->blocked = false;
		store_relaxed(&wsr__sched.nmidle, load_relaxed(&wsr__sched.nmidle) - 1);
	}
	return mp;
}

void wsr__minit(struct wsr_m *mp)
{
	pthread_attr_t attr;

	wsr__setm(mp);
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		pthread_attr_getstack(&attr, &mp->g0_stack_lo, &mp->g0_stack_size);
		pthread_attr_destroy(&attr);
	}
#if WSR_SAN_TSAN
	mp->tsan_fiber = san_tsan_current();
#endif
	if (wsr__chaos_seed_set())
		mp->rand = wsr__chaos_seed_for(mp->id);
	wsr__stack_overflow_init(mp);
}

void wsr__mexit_cleanup(struct wsr_m *mp)
{
	wsr__stack_overflow_fini(mp);
	wsr__setm(NULL);
}

static void *mstart(void *arg)
{
	struct wsr_m *mp = arg;
	struct wsr_p *pp;

	wsr__minit(mp);
	pp = mp->nextp;
	mp->nextp = NULL;
	if (pp != NULL)
		wsr__acquirep(mp, pp);
	wsr__schedule(mp);
	/* Teardown: no event says an M left, so no schedtrace is taken after
	 * the first one has (wsr__schedtrace checks mexited under the lock). */
	wsr__lock(&wsr__sched.lock);
	store_relaxed(&wsr__sched.mcount, load_relaxed(&wsr__sched.mcount) - 1);
	wsr__sched.mexited++;
	wsr__unlock(&wsr__sched.lock);
	wsr__mexit_cleanup(mp);
	return NULL;
}

void wsr__newm_start(struct wsr_m *mp)
{
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	WSR_CHAOS(mp, CHAOS_NEWM);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 1 << 20);
	rc = pthread_create(&t, &attr, mstart, mp);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		errno = rc;
		wsr__throw("newm: pthread_create failed");
	}
	/* The M is on allm since allocm, before its thread exists: wsr__join_ms
	 * joins it only once this is set (it used to join thread 0). */
	wsr__lock(&wsr__sched.lock);
	mp->thread = t;
	mp->started = true;
	wsr__unlock(&wsr__sched.lock);
}

void wsr__join_ms(void)
{
	struct timespec deadline, now;
	struct wsr_m *mp;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 2;
	for (;;) {
		bool unstarted = false;

		/* Under sched.lock: newm may still be adding an M it decided to
		 * start just before exiting was set, and an M on allm may not
		 * have its thread yet (newm_start): wait for it. */
		wsr__lock(&wsr__sched.lock);
		for (mp = wsr__sched.allm; mp != NULL; mp = mp->alllink) {
			if (mp->is_m0 || mp->joined)
				continue;
			if (mp->started)
				break;
			unstarted = true;
		}
		if (mp != NULL)
			mp->joined = true;
		wsr__unlock(&wsr__sched.lock);
		if (mp == NULL && !unstarted)
			break;
		if (mp == NULL) {
			struct timespec pause = {0, 100000};

			clock_gettime(CLOCK_REALTIME, &now);
			if (now.tv_sec > deadline.tv_sec ||
			    (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec)) {
				ms_leaked = true;
				break;
			}
			nanosleep(&pause, NULL);
			continue;
		}
		/* An M stuck in a G that never reaches a yield point, or in a
		 * call that never returns, is left behind (as Go's exit would). */
		if (pthread_timedjoin_np(mp->thread, NULL, &deadline) != 0)
			ms_leaked = true;
	}
}

bool wsr__ms_leaked(void)
{
	return ms_leaked;
}

void wsr__freems(void)
{
	struct wsr_m *mp, *next;

	if (ms_leaked)
		return;
	for (mp = wsr__sched.allm; mp != NULL; mp = next) {
		next = mp->alllink;
		free(mp);
	}
	wsr__sched.allm = NULL;
}
