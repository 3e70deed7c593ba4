/*
 * throw.c - the fatal path (Go: throw, fatal, fatalthrow, crash): message,
 * G/M/P dump in scheddetail format, exit status 2.
 *
 * Go ends every fatal error and unrecovered panic with exit(2) after the
 * report, and with a crash (SIGABRT, a core dump) only when GOTRACEBACK=crash
 * asks for one. wsr does the same: wsr__fatal_exit() _exit(2)s (no atexit
 * handlers or destructors: other threads still run, and may hold the locks
 * those would take), or, with WSRTRACEBACK=crash, restores SIGABRT's
 * default action and abort()s. wsr has no recover, so what Go panics on
 * (closing a closed or nil channel, a negative WaitGroup counter, a nil
 * mutex) is a fatal error here too, printed as "wsr: fatal error:". Before
 * issue 17 every throw aborted: a core for every API misuse, and an exit
 * status that no caller could tell from a crash in their own code.
 *
 * Invariants:
 *   - Only the first thread to throw prints; others stop where they are.
 *   - The dump reads scheduler state without locks (it may be inconsistent,
 *     which is better than deadlocking on a lock the thrower holds).
 * Concurrency: any thread; throwing is a one-way door.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"
#include "runq.h"
#include "tpfreeze.h"

static _Atomic int throwing;
/* WSRTRACEBACK=crash: 1, else 0; -1 until read. */
static _Atomic int crash = -1;

void wsr__fatal_init(void)
{
	const char *s;

	if (atomic_load_explicit(&crash, memory_order_relaxed) >= 0)
		return;
	s = getenv("WSRTRACEBACK");
	atomic_store_explicit(&crash, s != NULL && strcmp(s, "crash") == 0,
			      memory_order_relaxed);
}

void wsr__fatal_exit(void)
{
	/* _exit and abort end every thread where it is: first let those
	 * writing an event finish it (tpfreeze.c). */
	wsr__tp_freeze();
	wsr__fatal_init();
	if (atomic_load_explicit(&crash, memory_order_relaxed) == 1) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGABRT, &sa, NULL);
		abort();
	}
	_exit(2);
}

static void dump(void)
{
	struct wsr_m *mp;
	int32_t i;

	if (wsr__sched.allp == NULL)
		return;
	fprintf(stderr, "SCHED: gomaxprocs=%d idleprocs=%d threads=%d spinningthreads=%d "
			"needspinning=%d idlethreads=%d runqueue=%d\n",
		wsr__sched.gomaxprocs, load_relaxed(&wsr__sched.npidle),
		load_relaxed(&wsr__sched.mcount), load_relaxed(&wsr__sched.nmspinning),
		load_relaxed(&wsr__sched.needspinning), load_relaxed(&wsr__sched.nmidle),
		load_relaxed(&wsr__sched.runqsize));
	for (i = 0; i < wsr__sched.gomaxprocs; i++) {
		struct wsr_p *pp = &wsr__sched.allp[i];

		fprintf(stderr, "  P%d: status=%u schedtick=%u syscalltick=%u runqsize=%u runnext=%s timerslen=%d\n",
			i, load_relaxed(&pp->status), load_relaxed(&pp->schedtick),
			load_relaxed(&pp->syscalltick), wsr__runqlen(pp),
			load_relaxed(&pp->runnext) != NULL ? "set" : "nil", pp->ntimers);
	}
	for (mp = wsr__sched.allm; mp != NULL; mp = mp->alllink)
		fprintf(stderr, "  M%d: p=%d curg=%lld spinning=%s blocked=%s\n", mp->id,
			p_id(mp->p), (long long)g_id(mp->curg), mp->spinning ? "true" : "false",
			mp->blocked ? "true" : "false");
}

void wsr__throw(const char *msg)
{
	int zero = 0;
	int e = errno;

	if (!atomic_compare_exchange_strong(&throwing, &zero, 1)) {
		for (;;)
			pause();
	}
	fflush(stdout);
	fprintf(stderr, "wsr: fatal error: %s", msg);
	if (e != 0 && strstr(msg, "failed") != NULL)
		fprintf(stderr, " (%s)", strerror(e));
	fputc('\n', stderr);
	{
		struct wsr_m *mp = wsr__getm();

		if (mp != NULL && mp->curg != NULL)
			fprintf(stderr, "\ngoroutine %lld [running] on M%d\n",
				(long long)mp->curg->goid, mp->id);
	}
	fputc('\n', stderr);
	dump();
	fflush(stderr);
	wsr__fatal_exit();
}

void wsr__assert_fail(const char *expr, const char *file, int line)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "assertion failed: %s (%s:%d)", expr, file, line);
	errno = 0;
	wsr__throw(buf);
}
