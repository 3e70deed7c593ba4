/*
 * test-sched.c - the scheduler as a whole, small sizes: every G runs exactly
 * once, the skewed workload steals and spreads over every P, the spinning
 * cap holds, the stats agree with each other, schedtrace prints Go's format.
 *
 * Invariants: each case runs wsr_main one or more times in its own forked
 *   process, with WSRMAXPROCS set by the case; a watchdog turns a hang into
 *   a failure with the runtime's dump.
 * Concurrency: Gs record what they saw in atomics; the checks run after
 *   wsr_main returned (every M joined).
 */
#include "config.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <wsr.h>

#include "proc.h"
#include "watchdog.h"
#if WSR_HAVE_VALGRIND
# include <valgrind/valgrind.h>
#endif
#include "wsrtest.h"

static void setprocs(int n)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", n);
	setenv("WSRMAXPROCS", buf, 1);
}

/* ---- exit while an M is being started ---- */

/* An M is on allm (allocm) before its thread exists (newm_start): a main G
 * that returns in between made wsr__join_ms join thread 0 (SIGSEGV in
 * glibc, a CHECK failure under TSan, seen in TestPreemption at 8 Ps). The
 * chaos site CHAOS_NEWM widens that window; the spawns make the Ms start. */
static void nothing(void *arg)
{
	(void)arg;
}

static int exit_at_once_main(void *arg)
{
	(void)arg;
	for (int i = 0; i < 16; i++)
		wsr_go(nothing, NULL);
	return 0;
}

WSR_TEST_TIMEOUT(exit_while_an_m_starts, 60)
{
	setprocs(8);
	for (int i = 0; i < 200; i++) {
		char buf[32];

		snprintf(buf, sizeof(buf), "chaos=%d", i + 1);
		setenv("WSRDEBUG", buf, 1);
		ASSERT_EQ(wsr_main(exit_at_once_main, NULL), 0);
	}
	unsetenv("WSRDEBUG");
}

/* ---- every G exactly once ---- */

#define NSMALL 20000
static _Atomic int hits[NSMALL];
static _Atomic int ranon[64];
static wsr_waitgroup *wg;

static void mark(void *arg)
{
	uintptr_t i = (uintptr_t)arg;

	hits[i]++;
	ranon[wsr__getm()->p->id]++;
	wsr_waitgroup_done(wg);
}

static int spawn_main(void *arg)
{
	long n = *(long *)arg, i;

	wg = wsr_waitgroup_make();
	wsr_waitgroup_add(wg, n);
	for (i = 0; i < n; i++)
		wsr_go(mark, (void *)(uintptr_t)i);
	wsr_waitgroup_wait(wg);
	wsr_waitgroup_free(wg);
	return 7;
}

WSR_TEST_TIMEOUT(every_g_runs_exactly_once, 30)
{
	int procs[] = {1, 2, 4, 8};
	size_t k;

	wsrtest_watchdog(25, "every_g_runs_exactly_once");
	for (k = 0; k < sizeof(procs) / sizeof(procs[0]); k++) {
		long n = NSMALL, i;

		memset(hits, 0, sizeof(hits));
		setprocs(procs[k]);
		ASSERT_EQ(wsr_main(spawn_main, &n), 7);
		for (i = 0; i < n; i++)
			ASSERT_EQ(hits[i], 1);
		/* Every G that was created ran and stopped exactly once per run. */
		ASSERT_EQ(wsr__last_stats[WSR_ST_g_create], n + 1);
		ASSERT_EQ(wsr__last_stats[WSR_ST_g_run], wsr__last_stats[WSR_ST_g_stop]);
		ASSERT_EQ(wsr__last_stats[WSR_ST_init], 1);
		ASSERT_EQ(wsr__last_stats[WSR_ST_spin_start], wsr__last_stats[WSR_ST_spin_stop]);
		ASSERT_EQ(wsr__last_stats[WSR_ST_m_park], wsr__last_stats[WSR_ST_m_unpark]);
	}
}

/* ---- a spawn loop's backlog is bounded (WSRDEBUG=backlog) ---- */

#define NBACKLOG 60000
static _Atomic long bl_ran;
static long bl_max; /* spawner only */

static void bl_leaf(void *arg)
{
	(void)arg;
	bl_ran++;
}

static int backlog_main(void *arg)
{
	long i, queued;

	(void)arg;
	bl_max = 0;
	for (i = 1; i <= NBACKLOG; i++) {
		wsr_go(bl_leaf, NULL);
		queued = i - bl_ran;
		if (queued > bl_max)
			bl_max = queued;
	}
	while (bl_ran < NBACKLOG)
		wsr_yield();
	return 0;
}

/* Gs queued at most: the bound, the spill that crossed it (129), every P's
 * ring and runnext full, one G running on each P. */
static long backlog_limit(long perp, int procs)
{
	return perp * procs + 129 + procs * 258L;
}

WSR_TEST_TIMEOUT(spawn_backlog_is_bounded, 60)
{
	static const struct {
		const char *env;
		long perp;
	} cases[] = {{"", 4096}, {"backlog=100", 100}};
	int procs[] = {1, 2};
	size_t k, j;

	wsrtest_watchdog(55, "spawn_backlog_is_bounded");
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		for (j = 0; j < sizeof(procs) / sizeof(procs[0]); j++) {
			setenv("WSRDEBUG", cases[k].env, 1);
			setprocs(procs[j]);
			bl_ran = 0;
			ASSERT_EQ(wsr_main(backlog_main, NULL), 0);
			ASSERT_EQ(bl_ran, NBACKLOG);
			printf("# backlog=%ld procs=%d: at most %ld Gs queued\n", cases[k].perp,
			       procs[j], bl_max);
			/* Without the bound, only sysmon's 10 ms slices would stop the
			 * loop: thousands more at backlog=100. */
			ASSERT_LE(bl_max, backlog_limit(cases[k].perp, procs[j]));
		}
	}
	unsetenv("WSRDEBUG");
}

/* ---- no preemption request before a full slice ---- */

static int brief_main(void *arg)
{
	int64_t t0 = wsr__nanotime();

	(void)arg;
	/* 2 ms of monotonic time on the CPU, never through the scheduler: the
	 * P's schedtick stays 0 (sysmon's own initial value) all along. */
	while (wsr__nanotime() - t0 < 2 * 1000 * 1000)
		__asm__ volatile("" ::: "memory");
	return 0;
}

WSR_TEST_TIMEOUT(no_preempt_before_a_slice, 30)
{
	int p;

	wsrtest_watchdog(25, "no_preempt_before_a_slice");
	for (p = 1; p <= 2; p++) {
		int tries;

		setprocs(p);
		/* A run that lasts a whole slice (10 ms) may be preempted rightly:
		 * on a loaded machine the 2 ms loop's thread can lose its CPU for
		 * that long (20 copies of this test at once did). Such a run says
		 * nothing either way, so it is made again. */
		for (tries = 0; tries < 10; tries++) {
			int64_t t0 = wsr__nanotime();

			ASSERT_EQ(wsr_main(brief_main, NULL), 0);
			if (wsr__nanotime() - t0 < 9 * 1000 * 1000)
				break;
		}
		if (tries == 10)
			wsrtest_skip("every run took a whole slice (a loaded machine)");
		/* sysmon used to take its first look at a P whose tick was still 0
		 * for a slice that began at time 0: a preempt event with ran_ns =
		 * the machine's uptime, in every trace. */
		ASSERT_EQ(wsr__last_stats[WSR_ST_preempt], 0);
	}
}

/* ---- skewed: the other Ps must steal ---- */

static long lcgwork = 20000;
static _Atomic uint64_t sink;

/*
 * skewed_steals_and_every_p_runs: the first G holds its P until a G has
 * started on another P, so that the others can only get work by stealing
 * from it, however late the OS gives their threads a CPU (on a loaded
 * machine the producer's P could otherwise run all 200 Gs first: the test
 * failed now and then under a load average of 10 to 19). The 10 s bound
 * is a safety net, not a measure: the assertions say what happened.
 */
static bool hold_first;
static _Atomic int held, started_on[64];

static void hold_until_another_p_runs(int self)
{
	struct timespec t0, t;
	int other = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!other) {
		for (int p = 0; p < wsr_gomaxprocs() && p < 64; p++)
			if (p != self && started_on[p] > 0)
				other = 1;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 10)
			break;
	}
}

static void cpu_g(void *arg)
{
	uint64_t x = (uint64_t)(uintptr_t)arg;
	int self = wsr__getm()->p->id, zero = 0;
	long i;

	started_on[self]++;
	if (hold_first && atomic_compare_exchange_strong(&held, &zero, 1))
		hold_until_another_p_runs(self);
	for (i = 0; i < lcgwork; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink += x;
	ranon[wsr__getm()->p->id]++;
	wsr_waitgroup_done(wg);
}

static int skewed_main(void *arg)
{
	long n = *(long *)arg, i;

	wg = wsr_waitgroup_make();
	wsr_waitgroup_add(wg, n);
	for (i = 0; i < n; i++)
		wsr_go(cpu_g, (void *)(uintptr_t)(i + 1));
	wsr_waitgroup_wait(wg);
	wsr_waitgroup_free(wg);
	return 0;
}

WSR_TEST_TIMEOUT(skewed_steals_and_every_p_runs, 30)
{
	/* Fewer Gs than a ring holds: nothing spills to the global queue, so the
	 * other Ps can get work only by stealing. */
	long n = 200;
	int p, n_other;

	wsrtest_watchdog(25, "skewed_steals_and_every_p_runs");
	lcgwork = 200000;
	hold_first = true;
	for (p = 2; p <= 4; p += 2) {
		int i;

		memset(ranon, 0, sizeof(ranon));
		memset(started_on, 0, sizeof(started_on));
		held = 0;
		setprocs(p);
		ASSERT_EQ(wsr_main(skewed_main, &n), 0);
#if WSR_HAVE_VALGRIND
		if (RUNNING_ON_VALGRIND) {
			/* valgrind runs one thread at a time: the producer's M may
			 * finish everything before another M gets the CPU. */
			printf("# steal counts not checked under valgrind\n");
			continue;
		}
#endif
		/* The safety net above was not what ended the hold. */
		for (i = 0, n_other = 0; i < p; i++)
			n_other += started_on[i] > 0;
		ASSERT_GT(n_other, 1);
		ASSERT_GT(wsr__last_stats[WSR_ST_steal] + wsr__last_stats[WSR_ST_globrunq_get], 0);
		ASSERT_GT(wsr__last_stats[WSR_ST_steal], 0);
		ASSERT_GE(wsr__last_stats[WSR_ST_stolen], wsr__last_stats[WSR_ST_steal]);
		/* Every P ran Gs: checked at 2 Ps. With 4 Ps on 2 CPUs a P whose M
		 * never gets a CPU during the run may legitimately run none. */
		if (p == 2)
			for (i = 0; i < p; i++)
				ASSERT_GT(ranon[i], 0);
	}
}

WSR_TEST_TIMEOUT(spinning_cap_holds, 30)
{
	int procs[] = {1, 2, 3, 4, 8, 16};
	size_t k;
	long n = 3000;

	wsrtest_watchdog(25, "spinning_cap_holds");
	lcgwork = 2000;
	for (k = 0; k < sizeof(procs) / sizeof(procs[0]); k++) {
		int p = procs[k];

		setprocs(p);
		ASSERT_EQ(wsr_main(skewed_main, &n), 0);
		/* 2*nmspinning < gomaxprocs - npidle at every join: at most ceil(P/2). */
		ASSERT_LE(wsr__max_spinning, (uint64_t)((p + 1) / 2));
		if (p == 1)
			ASSERT_EQ(wsr__max_spinning, 0);
	}
}

/* ---- schedtrace ---- */

static int sleepy_main(void *arg)
{
	(void)arg;
	wsr_sleep_ns(60 * 1000 * 1000);
	return 0;
}

static char *capture_stderr_run(int (*fn)(void *), void *arg)
{
	char path[] = "/tmp/wsr-test-XXXXXX";
	int fd = mkstemp(path), saved = dup(2);
	static char buf[1 << 16];
	ssize_t n;

	ASSERT(fd >= 0);
	unlink(path);
	fflush(stderr);
	dup2(fd, 2);
	ASSERT_EQ(wsr_main(fn, arg), 0);
	fflush(stderr);
	dup2(saved, 2);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	ASSERT(n > 0);
	buf[n] = '\0';
	close(fd);
	return buf;
}

WSR_TEST_TIMEOUT(schedtrace_go_format, 20)
{
	regex_t re;
	char *out, *line, *save = NULL;
	int lines = 0;

	wsrtest_watchdog(15, "schedtrace_go_format");
	setprocs(2);
	setenv("WSRDEBUG", "schedtrace=10,stats=1", 1);
	out = capture_stderr_run(sleepy_main, NULL);
	ASSERT_EQ(regcomp(&re,
			  "^SCHED [0-9]+ms: gomaxprocs=2 idleprocs=[0-2] threads=[0-9]+ "
			  "spinningthreads=[0-9]+ needspinning=[01] idlethreads=[0-9]+ "
			  "runqueue=[0-9]+ \\[ [0-9]+ [0-9]+ \\] schedticks=\\[ [0-9]+ [0-9]+ \\]$",
			  REG_EXTENDED | REG_NOSUB),
		  0);
	long last_ms = -1;

	for (line = strtok_r(out, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "SCHED ", 6) == 0) {
			if (regexec(&re, line, 0, NULL, 0) != 0)
				wsrtest_fail(__FILE__, __LINE__, "bad schedtrace line: %s", line);
			/* As Go's: ms since the runtime started (the first line comes
			 * when sysmon starts, "SCHED 0ms" unless its thread starts
			 * late), never going back. tests/analyzer checks each label
			 * against the trace's time of its snapshot. */
			long ms = strtol(line + 6, NULL, 10);
			ASSERT(ms >= last_ms);
			last_ms = ms;
			lines++;
		} else {
			ASSERT(strncmp(line, "wsr stats: init=1 g_create=1 ", 29) == 0);
		}
	}
	regfree(&re);
	ASSERT_GE(lines, 3);
	ASSERT_EQ(wsr__last_stats[WSR_ST_schedtrace], lines);
}

/* At the end the other Ms leave their loops at their next scheduling point,
 * without an event: a snapshot taken after one has left counted fewer
 * threads than the trace shows (seen in fidelity-sched at 2 Ps: threads=1
 * against 3, sysmon's last tick racing with the teardown). None is taken
 * once an M has left (sched.mexited, under sched.lock). The window is a few
 * microseconds wide, so the case sets mexited itself and asks for one. */
static int snapshot_after_an_m_left_main(void *arg)
{
	(void)arg;
	wsr__lock(&wsr__sched.lock);
	wsr__sched.mexited = 1;
	wsr__unlock(&wsr__sched.lock);
	wsr__schedtrace(false);
	wsr__lock(&wsr__sched.lock);
	wsr__sched.mexited = 0;
	wsr__unlock(&wsr__sched.lock);
	wsr__schedtrace(false);
	return 0;
}

WSR_TEST_TIMEOUT(schedtrace_none_after_an_m_left, 20)
{
	char *out;

	wsrtest_watchdog(15, "schedtrace_none_after_an_m_left");
	setprocs(2);
	unsetenv("WSRDEBUG");
	out = capture_stderr_run(snapshot_after_an_m_left_main, NULL);
	/* the second call's line only */
	ASSERT(strncmp(out, "SCHED ", 6) == 0);
	ASSERT(strstr(out + 6, "SCHED ") == NULL);
}

WSR_TEST_TIMEOUT(scheddetail_lines, 20)
{
	char *out;

#if defined(__has_feature)
# if __has_feature(thread_sanitizer)
	/* scheddetail reads other Ms' fields without locks, as Go's does (a
	 * debugging aid may be inconsistent, never block): TSan would rightly
	 * call those reads races, so this one feature is not run under it. */
	printf("# skipped under ThreadSanitizer: scheddetail reads racily by design\n");
	return;
# endif
#endif
	wsrtest_watchdog(15, "scheddetail_lines");
	setprocs(2);
	setenv("WSRDEBUG", "schedtrace=20,scheddetail=1", 1);
	out = capture_stderr_run(sleepy_main, NULL);
	ASSERT(strstr(out, " gcwaiting=false nmidlelocked=0 stopwait=0 sysmonwait=false\n") != NULL);
	ASSERT(strstr(out, "  P0: status=") != NULL);
	ASSERT(strstr(out, "  P1: status=") != NULL);
	ASSERT(strstr(out, " schedtick=") != NULL);
	ASSERT(strstr(out, " gfreecnt=") != NULL);
	ASSERT(strstr(out, " timerslen=") != NULL);
	ASSERT(strstr(out, "  M0: p=") != NULL);
	ASSERT(strstr(out, "  G1: status=4(sleep) m=nil lockedm=nil") != NULL);
}

WSR_TEST(outside_a_g_is_an_error_not_a_crash)
{
	ASSERT_EQ(wsr_self_id(), -1);
	ASSERT_EQ(wsr_gomaxprocs(), 0);
}
