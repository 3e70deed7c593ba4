/*
 * tp-emitter.c - a small multi-threaded program that fires `wsr` tracepoints
 * directly, so `wsr run` and the trace checker can be tested without libwsr.
 *
 * It plays a tiny, consistent schedule: thread t acts as M t holding P t
 * and, for each of its ITERS Gs, emits g_create, runqput, g_run and g_stop
 * (every tenth G also goes through spin_start/spin_stop and p_idle/p_busy,
 * as a spinner that found work would). At exit it prints the runtime's
 * `WSRDEBUG=stats=1` line with the counts it emitted, in the runtime's
 * format, so the same checker verifies both.
 *
 * Usage: tp-emitter [-t THREADS] [-n ITERS] [-x EXIT_CODE] [-k SIGNAL] [-B]
 *   -x ends the program with that exit status, -k raises that signal at the
 *   end (both after the events and the stats line), to test exit pass-through.
 *   -B breaks the sequence rules on purpose (a g_run of a G never made
 *   runnable, a spin_stop with no spin_start, a second p_idle, an event
 *   naming a P between its retake and its handoff, a handoff with no
 *   retake), counted in
 *   the stats line, so a test can show that the checker catches them.
 *
 * Invariants:
 *   - G ids are unique across threads (t * ITERS + i + 1); P = M = t.
 *   - Per M, spin_start/spin_stop alternate; per P, p_idle/p_busy alternate;
 *     every g_run of a G follows its g_create and runqput.
 * Concurrency: each thread emits and counts on its own; counts are summed
 *   after pthread_join.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wsr_tp.h"

enum { C_INIT, C_G_CREATE, C_RUNQPUT, C_RUNQPUT_NEXT, C_G_RUN, C_G_STOP, C_SPIN_START,
       C_SPIN_STOP, C_P_IDLE, C_P_BUSY, C_M_CREATE, C_STEAL_SCAN, C_RETAKE, C_HANDOFF, C_MAX };

struct worker {
	pthread_t thread;
	int32_t id;
	long iters;
	uint64_t count[C_MAX];
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int32_t p = w->id, m = w->id;

	for (long i = 0; i < w->iters; i++) {
		int64_t g = (int64_t)w->id * w->iters + i + 1;
		uint8_t next = (uint8_t)(i & 1);

		if (i % 10 == 0) {
			lttng_ust_tracepoint(wsr, p_idle, p, m, 1);
			lttng_ust_tracepoint(wsr, spin_start, -1, m, 1, 0);
			lttng_ust_tracepoint(wsr, p_busy, p, m, 0);
			lttng_ust_tracepoint(wsr, spin_stop, p, m, 0, 1);
			w->count[C_P_IDLE]++;
			w->count[C_SPIN_START]++;
			w->count[C_P_BUSY]++;
			w->count[C_SPIN_STOP]++;
		}
		lttng_ust_tracepoint(wsr, g_create, p, m, g, 0);
		lttng_ust_tracepoint(wsr, runqput, p, m, g, next, 0, next ? 0 : 1);
		lttng_ust_tracepoint(wsr, g_run, p, m, g, next ? 0 : 1, next);
		lttng_ust_tracepoint(wsr, g_stop, p, m, g, 7);
		w->count[C_G_CREATE]++;
		w->count[C_RUNQPUT]++;
		w->count[C_RUNQPUT_NEXT] += next;
		w->count[C_G_RUN]++;
		w->count[C_G_STOP]++;
	}
	return NULL;
}

static long parse_long(const char *s, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 0) {
		fprintf(stderr, "tp-emitter: error: bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long nthreads = 2, iters = 1000, exit_code = 0, sig = 0, broken = 0;
	uint64_t total[C_MAX] = {0};
	struct worker *workers;
	const char *dbg;
	int opt;

	while ((opt = getopt(argc, argv, "t:n:x:k:B")) != -1) {
		switch (opt) {
		case 't':
			nthreads = parse_long(optarg, "thread count");
			break;
		case 'n':
			iters = parse_long(optarg, "iteration count");
			break;
		case 'x':
			exit_code = parse_long(optarg, "exit code");
			break;
		case 'k':
			sig = parse_long(optarg, "signal");
			break;
		case 'B':
			broken = 1;
			break;
		default:
			fprintf(stderr, "usage: tp-emitter [-t THREADS] [-n ITERS] [-x EXIT] [-k SIG] "
					"[-B]\n");
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > 64) {
		fprintf(stderr, "tp-emitter: error: thread count must be 1..64\n");
		return 2;
	}
	workers = calloc((size_t)nthreads, sizeof(*workers));
	if (workers == NULL) {
		fprintf(stderr, "tp-emitter: error: out of memory\n");
		return 1;
	}

	lttng_ust_tracepoint(wsr, init, -1, 0, (int32_t)nthreads, 256, "tp-emitter", 0);
	total[C_INIT]++;
	for (long t = 0; t < nthreads; t++) {
		workers[t].id = (int32_t)t;
		workers[t].iters = iters;
		if (t > 0) {
			lttng_ust_tracepoint(wsr, m_create, 0, 0, (int32_t)t);
			total[C_M_CREATE]++;
		}
		if (pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]) != 0) {
			fprintf(stderr, "tp-emitter: error: pthread_create failed\n");
			return 1;
		}
	}
	for (long t = 0; t < nthreads; t++) {
		pthread_join(workers[t].thread, NULL);
		for (int c = 0; c < C_MAX; c++)
			total[c] += workers[t].count[c];
	}
	free(workers);
	if (broken) {
		int64_t ghost = (int64_t)nthreads * iters + 1;

		lttng_ust_tracepoint(wsr, g_run, 0, 0, ghost, 1, 0);
		lttng_ust_tracepoint(wsr, g_stop, 0, 0, ghost, 7);
		lttng_ust_tracepoint(wsr, spin_stop, 0, 0, 0, 0);
		lttng_ust_tracepoint(wsr, p_idle, 0, 0, 1);
		lttng_ust_tracepoint(wsr, p_idle, 0, 0, 1);
		total[C_G_RUN]++;
		total[C_G_STOP]++;
		total[C_SPIN_STOP]++;
		total[C_P_IDLE] += 2;
		/* P 0 named by M 1 between its retake and its handoff; a handoff of P 1
		 * that no retake took. */
		lttng_ust_tracepoint(wsr, retake, 0, 0, ghost, 1000);
		lttng_ust_tracepoint(wsr, steal_scan, 0, 1, 1, 1, 0);
		lttng_ust_tracepoint(wsr, handoff, 0, 0, ghost, 0);
		lttng_ust_tracepoint(wsr, handoff, 1, 0, ghost, -1);
		total[C_RETAKE]++;
		total[C_STEAL_SCAN]++;
		total[C_HANDOFF] += 2;
	}

	dbg = getenv("WSRDEBUG");
	if (dbg != NULL && strstr(dbg, "stats=1") != NULL)
		fprintf(stderr,
			"wsr stats: init=%ju g_create=%ju runqput=%ju runqput_next=%ju runq_spill=0 "
			"globrunq_put=0 globrunq_get=0 g_run=%ju g_stop=%ju g_ready=0 steal=0 "
			"stolen=0 steal_scan=%ju spin_start=%ju spin_stop=%ju p_idle=%ju p_busy=%ju "
			"m_park=0 m_unpark=0 m_create=%ju syscall_enter=0 syscall_exit=0 handoff=%ju "
			"retake=%ju preempt=0 timer_fire=0 netpoll=0 schedtrace=0 max_spinning=1\n",
			(uintmax_t)total[C_INIT], (uintmax_t)total[C_G_CREATE],
			(uintmax_t)total[C_RUNQPUT], (uintmax_t)total[C_RUNQPUT_NEXT],
			(uintmax_t)total[C_G_RUN], (uintmax_t)total[C_G_STOP],
			(uintmax_t)total[C_STEAL_SCAN], (uintmax_t)total[C_SPIN_START], (uintmax_t)total[C_SPIN_STOP],
			(uintmax_t)total[C_P_IDLE], (uintmax_t)total[C_P_BUSY],
			(uintmax_t)total[C_M_CREATE], (uintmax_t)total[C_HANDOFF],
			(uintmax_t)total[C_RETAKE]);
	if (sig > 0) {
		signal((int)sig, SIG_DFL);
		raise((int)sig);
	}
	return (int)exit_code;
}
