/*
 * tpfreeze.c - a dying process does not cut an event in half (tpfreeze.h).
 *
 * Why. LTTng-UST writes an event in three steps: reserve a slot in the
 * CPU's sub-buffer, copy the fields in, commit. A thread that dies between
 * reserve and commit leaves that sub-buffer uncommitted for good: the
 * consumer never delivers it, so `lttng stop` waits for it without end or
 * returns without it, and every event of that sub-buffer is lost with no
 * loss counted. A process dies that way whenever one thread crashes, calls
 * abort() or exit(), or takes a fatal signal, while another thread is
 * inside a tracepoint: the fidelity harness's `abort` case lost thousands
 * of events so, on a loaded machine, and tests/tracing/crash-midwrite.c
 * does it at will. Go stops the world before a fatal error's report for
 * the same reason (freezetheworld); here only the tracepoints are stopped.
 *
 * Design. Each thread counts its tracepoints in flight in a slot of its own
 * (a cache line; threads past SLOTS - 1 share the last one). A dying
 * thread sets `frozen`, after which no tracepoint starts, then waits until
 * every other slot is 0 (at most WSR_TP_FREEZE_MAX_MS: a thread that is
 * blocked in a lossless reserve for longer is not worth hanging a crash
 * for). The increment and the load of `frozen` are sequentially consistent,
 * as are the freezer's store and its loads of the slots: whichever comes
 * first in their total order, the freezer sees the tracepoint or the
 * tracepoint sees the freeze. Who dies:
 *   - a fatal signal whose action was the default when the runtime first
 *     started (installed here, once): the handler freezes, then the signal
 *     kills the process as before (SA_RESETHAND, raised again). An
 *     asynchronous one (not a fault) that lands on a thread inside a
 *     tracepoint waits until that tracepoint's end (wsr__tp_leave);
 *   - exit(): an atexit hook, registered before the runtime's own (the
 *     stats line counts every event first);
 *   - the runtime's fatal errors and stack overflows (throw.c,
 *     wsr__fatal_exit) and a fault the runtime passes on (stack.c hands
 *     SIGSEGV and SIGBUS to the handler that was there before it: this one).
 * Nothing helps a process killed by SIGKILL (docs/recording.md).
 *
 * Invariants: a slot's count is the tracepoints in flight of the threads
 *   that own it (a private slot's is its owner's depth, written by its
 *   owner only: one locked store on entry, a plain release store on exit;
 *   the shared last slot counts with locked adds); `frozen` never goes
 *   back to 0; depth (per thread) is this thread's own share of its slot.
 * Concurrency: slots and frozen are atomics; depth, my_slot and deferred
 *   are the thread's own (read by its signal handlers, which run on it).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atomic.h"
#include "tpfreeze.h"

#define SLOTS 1024

struct slot {
	_Atomic uint32_t n;
} __attribute__((aligned(64)));

static struct slot slots[SLOTS];
static _Atomic uint32_t nclaimed;
static _Atomic uint32_t frozen;

#define WSR_TLS __thread __attribute__((tls_model("initial-exec")))
static WSR_TLS int32_t my_slot = -1;
static WSR_TLS uint32_t depth;
static WSR_TLS int deferred;

bool wsr__tp_enter(void)
{
	int32_t s = my_slot;

	if (s < 0) {
		uint32_t k = xadd_seq(&nclaimed, 1);
		s = my_slot = k < SLOTS ? (int32_t)k : SLOTS - 1;
	}
	/* One locked instruction: a private slot is written by its owner only. */
	if (s < SLOTS - 1)
		store_seq(&slots[s].n, depth + 1);
	else
		xadd_seq(&slots[s].n, 1);
	atomic_signal_fence(memory_order_seq_cst);
	depth++;
	if (load_seq(&frozen) != 0) {
		wsr__tp_leave();
		return false;
	}
	return true;
}

static void die_of(int sig);

void wsr__tp_leave(void)
{
	depth--;
	atomic_signal_fence(memory_order_seq_cst);
	if (my_slot < SLOTS - 1)
		store_rel(&slots[my_slot].n, depth);
	else
		atomic_fetch_sub_explicit(&slots[my_slot].n, 1, memory_order_release);
	if (depth == 0 && deferred != 0) {
		int sig = deferred;
		deferred = 0;
		die_of(sig);
	}
}

static int64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

void wsr__tp_freeze(void)
{
	int32_t self = my_slot;
	int64_t until;

	store_seq(&frozen, 1);
	until = mono_ns() + (int64_t)WSR_TP_FREEZE_MAX_MS * 1000000;
	for (;;) {
		uint32_t k = load_seq(&nclaimed);
		uint64_t busy = 0;

		for (uint32_t i = 0; i < k && i < SLOTS; i++)
			if ((int32_t)i != self || self == SLOTS - 1)
				busy += load_seq(&slots[i].n);
		/* The shared slot holds this thread's own share too. */
		if (self == SLOTS - 1)
			busy -= busy < depth ? busy : depth;
		if (busy == 0 || mono_ns() >= until)
			return;
		struct timespec ts = {0, 20 * 1000};
		nanosleep(&ts, NULL);
	}
}

/* The signal's default action is restored (SA_RESETHAND): after the freeze,
 * it kills the process as it would have without the runtime. */
static void die_of(int sig)
{
	wsr__tp_freeze();
	raise(sig);
}

/* Faults recur when the handler returns and cannot wait for a tracepoint's end. */
static bool is_fault(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGTRAP ||
	       sig == SIGSYS;
}

static void on_fatal(int sig)
{
	int e = errno;

	/* This thread is in a tracepoint: die at its end. Only once: a thread
	 * stuck in one (a lossless reserve that never gets room) must not make
	 * the process deaf to signals; the same signal again finds its default
	 * action already (SA_RESETHAND), another one lands here and dies. */
	if (depth > 0 && !is_fault(sig) && deferred == 0)
		deferred = sig;
	else
		die_of(sig);
	errno = e;
}

static void freeze_at_exit(void)
{
	wsr__tp_freeze();
}

/* The signals whose default action ends the process (core or term), but
 * those that profilers and libraries take for themselves (SIGUSR1/2,
 * SIGPROF, SIGVTALRM, the real-time ones). */
static const int fatal_signals[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGILL,  SIGTRAP,
				    SIGABRT, SIGBUS,  SIGFPE,  SIGSEGV, SIGPIPE,
				    SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ, SIGSYS};

static void install(void)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fatal;
	sa.sa_flags = SA_RESETHAND | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		int sig = fatal_signals[i];
		/* A program's own handler, or an ignored signal, stays as it is. */
		if (sigaction(sig, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
		    old.sa_handler == SIG_DFL)
			sigaction(sig, &sa, NULL);
	}
	atexit(freeze_at_exit);
}

void wsr__tp_freeze_install(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, install);
}
