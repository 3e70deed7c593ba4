/*
 * proc.c - the scheduler: schedule, findrunnable, wakep/startm/stopm,
 * spinning, parking Gs, checkdead, and wsr_main (Go: proc.go).
 *
 * Design. Gs run on Ms (threads); an M needs a P to run Gs. Each M has a g0:
 * the thread's own stack, which runs wsr__schedule(). A G leaves the CPU only
 * by switching to its M's g0 (wsr__mcall), which then does what the G asked
 * (queue it, free it) after the G's registers are saved - so a yielding G is
 * never visible on a run queue before it can be resumed - and picks the next
 * G. Parking is the exception (see wsr__gopark): the G publishes itself to
 * its waker before switching, and g->switching covers the window. Rejected
 * design: Go's unlock-on-g0 (park_m calling unlockf) - under ThreadSanitizer
 * every G is a thread, and a mutex unlocked by another "thread" than the one
 * that locked it is a reported bug and corrupts its lock-set bookkeeping.
 *
 * findrunnable looks, in Go's order: timers -> local runnext/ring -> global
 * queue -> (not Go's: a stalled P's ring, steal.c) -> netpoll (non-blocking)
 * -> steal (if spinning is allowed) -> release
 * the P, drop spinning, re-check every source (the "delicate dance") -> block
 * in netpoll until the next timer, or park on the M's note (stopm).
 *
 * Worker parking/unparking (Go's essay, restated for wsr). We want enough
 * running Ms to use the Ps, and few enough parked/unparked to keep CPU and
 * latency low. An M is "spinning" when it has a P, no G, and is looking for
 * work. Invariant: if there is an idle P and runnable work, someone is
 * spinning or will be woken. Submitters (newproc, goready) queue work and then
 * call wakep(), which starts a spinning M only if there is no spinner
 * (nmspinning 0 -> 1 by CAS) and an idle P. A spinner that finds work stops
 * spinning and calls wakep() (resetspinning), so work fans out one M at a time.
 * An M that stops spinning must drop nmspinning FIRST and only then re-check
 * every queue, with a full StoreLoad barrier in between (both sides use
 * seq_cst atomics): otherwise a submitter could queue work after the re-check
 * but see nmspinning != 0 and not wake anyone. When wakep finds no idle P it
 * sets needspinning, which makes the next M about to give up its P spin
 * instead (Go issue 45867's lineage): a runnable G left on a busy P while
 * another P goes idle.
 *
 * The spinning cap: a new spinner joins only while 2*nmspinning < gomaxprocs -
 * npidle (checked and incremented in one CAS loop, so the cap really holds:
 * nmspinning <= max(1, ceil(gomaxprocs/2)) at all times). Rejected design:
 * Go's unconditional re-join after the delicate dance can exceed the cap
 * transiently; here a re-join is refused only when someone else spins, which
 * keeps the no-lost-work invariant. WSRDEBUG=spinning changes the cap
 * (halfall: 2*nmspinning < gomaxprocs, Tokio's; all: nmspinning <
 * gomaxprocs; none: no M joins in findrunnable, so only wakep's spinner and
 * the re-joins, capped at 1, spin); the invariant holds under each, since
 * wakep's 0 -> 1 and the re-join after the delicate dance are always let in.
 *
 * Invariants:
 *   - At the top of the g0 loop the M holds a P and is not running a G.
 *   - Nothing parks (stopm) while holding a P, sched.lock, or the spinning flag.
 *   - m->spinning <=> counted in nmspinning; spin_start/spin_stop alternate per M.
 * Concurrency:
 *   - sched.lock guards the idle M and P lists, the global queue, mcount.
 *   - nmspinning, npidle, needspinning are seq_cst atomics (the Dekker pairs).
 *   - A G's fields are written by the M running it or, while it is parked,
 *     by whoever holds the lock of the queue it waits on.
 * Tracepoints: init, g_run, g_stop, g_ready, globrunq_put, spin_start,
 *   spin_stop, m_park, m_unpark, netpoll.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <wsr.h>

#include "chaos.h"
#include "proc.h"
#include "runq.h"
#include "tpfreeze.h"

struct wsr_sched wsr__sched;
uint64_t wsr__max_spinning;
uint64_t wsr__last_stats[WSR_ST_COUNT];

/* initial-exec: libwsr is linked, never dlopen'ed, so the TLS access is one
 * instruction instead of a __tls_get_addr call. */
static __thread struct wsr_m *tls_m __attribute__((tls_model("initial-exec")));

/* Never inlined and opaque to the optimiser (the asm): a G may resume on
 * another thread, so the TLS address must be recomputed at every call. */
__attribute__((noinline)) struct wsr_m *wsr__getm(void)
{
	__asm__ volatile("" ::: "memory");
	return tls_m;
}

void wsr__setm(struct wsr_m *mp)
{
	tls_m = mp;
}

int64_t wsr__nanotime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

uint32_t wsr__fastrand(struct wsr_m *mp)
{
	/* wyrand: a 64-bit state, good enough for victim orders and chaos. */
	__uint128_t t;

	mp->rand += 0xa0761d6478bd642fULL;
	t = (__uint128_t)mp->rand * (mp->rand ^ 0xe7037ed1a0b428dbULL);
	return (uint32_t)((uint64_t)(t >> 64) ^ (uint64_t)t);
}

struct wsr_stats *wsr__stats_of(struct wsr_m *mp)
{
	return mp != NULL ? &mp->stats : &wsr__sysmon_stats;
}

/* ---- spinning ---- */

static void note_spinning(int32_t n)
{
	uint64_t cur = load_relaxed((_Atomic uint64_t *)&wsr__max_spinning);

	while ((uint64_t)n > cur &&
	       !atomic_compare_exchange_weak((_Atomic uint64_t *)&wsr__max_spinning, &cur,
					     (uint64_t)n))
		;
}

/* mp's increment took nmspinning to n: mark it spinning and say so. */
static void joinedspinning(struct wsr_m *mp, int32_t n)
{
	mp->spinning = true;
	store_seq(&wsr__sched.needspinning, 0);
	note_spinning(n);
	WSR_TRACE(spin_start, &mp->stats, p_id(mp->p), mp->id, n, 0);
}

/* Joins the spinners if 2*nmspinning < gomaxprocs - npidle (findrunnable),
 * or under the cap WSRDEBUG=spinning chose (enum wsr_spinning). */
static bool trybecomespinning(struct wsr_m *mp)
{
	int32_t n = load_seq(&wsr__sched.nmspinning);

	for (;;) {
		int32_t busy = wsr__sched.gomaxprocs - load_seq(&wsr__sched.npidle);

		if (__builtin_expect(wsr__sched.spinning != WSR_SPIN_HALF, 0)) {
			/* Tokio's searching workers: 2*searching < all workers
			 * (idle.rs, transition_worker_to_searching); all: any M
			 * while another P may still have work; none: only the M
			 * that wakep started (it comes back spinning already). */
			if (wsr__sched.spinning == WSR_SPIN_NONE)
				return false;
			if (wsr__sched.spinning == WSR_SPIN_HALF_ALL)
				busy = wsr__sched.gomaxprocs;
			else
				busy = 2 * wsr__sched.gomaxprocs;
		}
		if (2 * n >= busy)
			return false;
		if (cas_seq(&wsr__sched.nmspinning, &n, n + 1))
			break;
	}
	joinedspinning(mp, n + 1);
	return true;
}

/* Re-joins after the delicate dance found work; refused only while someone
 * else spins (that spinner will find the work), so the cap always holds. */
static bool rejoinspinning(struct wsr_m *mp)
{
	int32_t cap = wsr__sched.spinning == WSR_SPIN_ALL    ? wsr__sched.gomaxprocs
		      : wsr__sched.spinning == WSR_SPIN_NONE ? 1
							     : (wsr__sched.gomaxprocs + 1) / 2;
	int32_t n = load_seq(&wsr__sched.nmspinning);

	for (;;) {
		if (n >= cap && n > 0)
			return false;
		if (cas_seq(&wsr__sched.nmspinning, &n, n + 1))
			break;
	}
	joinedspinning(mp, n + 1);
	return true;
}

static void dropspinning(struct wsr_m *mp, bool found)
{
	int32_t n;

	WSR_ASSERT(mp->spinning);
	mp->spinning = false;
	/* seq_cst: the StoreLoad barrier before the re-check (see the essay). */
	n = xadd_seq(&wsr__sched.nmspinning, -1) - 1;
	if (n < 0)
		wsr__throw("dropspinning: negative nmspinning");
	WSR_TRACE(spin_stop, &mp->stats, p_id(mp->p), mp->id, n, (uint8_t)found);
}

/* A spinner found work: stop spinning and maybe wake another spinner. */
static void resetspinning(struct wsr_m *mp)
{
	dropspinning(mp, true);
	wsr__wakep(mp);
}

/* Caller holds sched.lock. An idle P for a spinner, or needspinning = 1. */
static struct wsr_p *pidlegetspinning(struct wsr_m *mp)
{
	struct wsr_p *pp = wsr__pidleget(mp);

	if (pp == NULL)
		store_seq(&wsr__sched.needspinning, 1);
	return pp;
}

/* ---- waking and parking Ms ---- */

/* Caller holds sched.lock, which this releases. Gives pp to an idle M, or
 * to a new M when none is idle. With spinning, the caller counted that M in
 * nmspinning under this same lock hold, and spin_start is emitted here, on
 * the M's behalf, so the event sits where the counter changed (schedtrace
 * snapshots, taken under the lock, then agree with the trace): that event's
 * vtid is the caller's, not the new M's; likewise a woken M's m_unpark, and
 * the handoff of a P that sysmon retook (ho non-NULL, see struct
 * wsr_handoff). Returns the M's id, or -1 when the runtime is exiting (the P
 * and the count go back). */
static int32_t startm_locked(struct wsr_m *caller, struct wsr_p *pp, bool spinning,
			     const struct wsr_handoff *ho)
{
	struct wsr_m *nmp;
	bool fresh = false;

	wsr__assert_lock_held(&wsr__sched.lock);
	nmp = wsr__mget();
	if (nmp == NULL) {
		if (load_seq(&wsr__sched.exiting)) {
			/* No new thread after the main G returned (see wsr__join_ms). */
			if (ho != NULL)
				wsr__trace_handoff(ho, pp, -1);
			wsr__pidleput(caller, pp);
			if (spinning && xadd_seq(&wsr__sched.nmspinning, -1) <= 0)
				wsr__throw("startm: negative nmspinning");
			wsr__unlock(&wsr__sched.lock);
			return -1;
		}
		nmp = wsr__allocm();
		fresh = true;
		/* Before the spin_start below names the new M. */
		WSR_TRACE(m_create, wsr__stats_of(caller), p_id(caller != NULL ? caller->p : NULL),
			  m_id(caller), nmp->id);
	}
	WSR_ASSERT(!nmp->spinning && nmp->nextp == NULL);
	nmp->spinning = spinning;
	nmp->nextp = pp;
	/* On the M's behalf: spin_start where nmspinning rose, then m_unpark
	 * where mget lowered nmidle (see stopm), so that a parked M started to
	 * spin goes from parked to spinning, as it does in the runtime. */
	if (spinning)
		WSR_TRACE(spin_start, wsr__stats_of(caller), pp->id, nmp->id,
			  load_seq(&wsr__sched.nmspinning), 0);
	if (!fresh)
		WSR_TRACE(m_unpark, wsr__stats_of(caller), pp->id, nmp->id,
			  load_relaxed(&wsr__sched.nmidle), m_id(caller));
	/* Before the M can run pp; after the events above, which put the M in
	 * its state (the analyzer takes handoff's to_m as pp's holder). */
	if (ho != NULL)
		wsr__trace_handoff(ho, pp, nmp->id);
	wsr__unlock(&wsr__sched.lock);
	if (fresh) {
		wsr__newm_start(nmp);
	} else {
		/* Chaos draws from the caller's own PRNG (sysmon has none; nmp's
		 * belongs to nmp, which may still be on its way into notesleep). */
		if (caller != NULL)
			WSR_CHAOS(caller, CHAOS_UNPARK);
		wsr__notewakeup(&nmp->park);
	}
	return nmp->id;
}

void wsr__trace_handoff(const struct wsr_handoff *ho, struct wsr_p *pp, int32_t to)
{
	wsr__assert_lock_held(&wsr__sched.lock);
	WSR_TRACE(handoff, &wsr__sysmon_stats, pp->id, ho->holder, ho->goid, to);
}

int32_t wsr__startm(struct wsr_m *caller, struct wsr_p *pp, const struct wsr_handoff *ho)
{
	wsr__lock(&wsr__sched.lock);
	if (pp == NULL) {
		pp = wsr__pidleget(caller);
		if (pp == NULL) {
			wsr__unlock(&wsr__sched.lock);
			return -1;
		}
	}
	return startm_locked(caller, pp, false, ho);
}

int32_t wsr__startm_spinning(struct wsr_m *caller, struct wsr_p *pp, const struct wsr_handoff *ho)
{
	int32_t zero = 0;

	wsr__lock(&wsr__sched.lock);
	/* Only when nobody spins; counted under the lock (see startm_locked). */
	if (!cas_seq(&wsr__sched.nmspinning, &zero, 1)) {
		wsr__unlock(&wsr__sched.lock);
		return -2;
	}
	store_seq(&wsr__sched.needspinning, 0);
	note_spinning(1);
	return startm_locked(caller, pp, true, ho);
}

void wsr__wakep(struct wsr_m *mp)
{
	int32_t zero = 0;
	struct wsr_p *pp;

	/* Be conservative: only start a spinner when none exists. seq_cst: pairs
	 * with the decrement in dropspinning (the Dekker pair). With one P, the
	 * caller's, no P can be idle and nobody can spin: nothing to do. */
	if (wsr__sched.gomaxprocs == 1 || load_seq(&wsr__sched.nmspinning) != 0)
		return;
	/* No idle P and needspinning already set: the slow path would only set
	 * it again (the next M to give up its P will spin; if someone cleared
	 * it, that someone spins and will find the work). Spares sched.lock on
	 * every spawn and ready while all Ps are busy. */
	if (load_seq(&wsr__sched.npidle) == 0 && load_seq(&wsr__sched.needspinning) == 1)
		return;
	wsr__lock(&wsr__sched.lock);
	if (wsr__sched.pidle == NULL) {
		/* Work we cannot start: make the next M about to drop its P spin
		 * instead (the delicate dance, Go issue 45867's lineage). */
		store_seq(&wsr__sched.needspinning, 1);
		wsr__unlock(&wsr__sched.lock);
		return;
	}
	if (!cas_seq(&wsr__sched.nmspinning, &zero, 1)) {
		wsr__unlock(&wsr__sched.lock);
		return;
	}
	note_spinning(1);
	pp = wsr__pidleget(mp);
	startm_locked(mp, pp, true, NULL);
}

/* Parks mp until startm hands it a P (or the runtime exits). */
static void stopm(struct wsr_m *mp)
{
	struct wsr_p *pp;
	int32_t nmidle;

	WSR_ASSERT(mp->p == NULL);
	WSR_ASSERT(!mp->spinning);
	wsr__lock(&wsr__sched.lock);
	if (load_relaxed(&wsr__sched.exiting)) {
		/* wakeall_for_exit may already have run: do not sleep through it. */
		wsr__unlock(&wsr__sched.lock);
		return;
	}
	wsr__mput(mp);
	nmidle = load_relaxed(&wsr__sched.nmidle);
	/* Under the lock, as nmidle changed: the idle-M count and its events
	 * are in one order (m_unpark is emitted by the waker, also under it). */
	WSR_TRACE(m_park, &mp->stats, -1, mp->id, nmidle, -1);
	wsr__checkdead();
	wsr__unlock(&wsr__sched.lock);
	WSR_CHAOS(mp, CHAOS_PARK);
	wsr__notesleep(&mp->park);
	wsr__noteclear(&mp->park);
	pp = mp->nextp;
	mp->nextp = NULL;
	if (pp != NULL)
		wsr__acquirep(mp, pp);
	/* The waker emitted m_unpark (and a spinning wakeup's spin_start). */
}

/* Wakes every parked M and the poller so they see sched.exiting. */
static void wakeall_for_exit(struct wsr_m *caller)
{
	struct wsr_m *mp;

	wsr__lock(&wsr__sched.lock);
	while ((mp = wsr__mget()) != NULL) {
		mp->nextp = NULL;
		mp->spinning = false;
		WSR_TRACE(m_unpark, wsr__stats_of(caller), -1, mp->id,
			  load_relaxed(&wsr__sched.nmidle), m_id(caller));
		wsr__notewakeup(&mp->park);
	}
	wsr__unlock(&wsr__sched.lock);
	wsr__netpoll_break();
}

/* ---- running Gs ---- */

WSR_TRACE_BODY void execute_body(struct wsr_m *mp, struct wsr_g *gp, bool inherit, uint8_t src,
				 bool traced)
{
	struct wsr_p *pp = mp->p;

	WSR_DASSERT(pp != NULL && pp->m == mp);
	WSR_DASSERT(load_relaxed(&gp->status) == G_RUNNABLE);
	/* A G readied while still switching out of its last park: wait until its
	 * M saved its context (a few instructions; yield if that M lost its CPU).
	 * load-acquire; pairs with the store-release in park_m. */
	if (__builtin_expect(load_acq(&gp->switching) != 0, 0)) {
		int spins = 0;

		while (load_acq(&gp->switching) != 0) {
			if (++spins > 100)
				sched_yield();
			else
				cpu_relax();
		}
	}
	mp->curg = gp;
	gp->m = mp;
	store_relaxed(&gp->status, G_RUNNING);
	if (!inherit) {
		store_relaxed(&pp->schedtick, load_relaxed(&pp->schedtick) + 1);
		if (pp->runnext_runs != 0) /* no store on the yield loop's path */
			pp->runnext_runs = 0;
	} else {
		/* Runs in a row from runnext, for its cap (runq.c, runnext_limit). */
		pp->runnext_runs++;
		if (!wsr__policy_is_deque(wsr__sched.policy))
			src = SRC_RUNNEXT; /* only runnext hands down a time slice (see schedule) */
	}
	/* (The deque policies: a G readied by the last one inherits its slice
	 * too, but it came from the deque, and the trace says so: runq.c.) */
	if (gp->readysrc != 0) {
		src = gp->readysrc;
		gp->readysrc = 0;
	}
	store_relaxed(&pp->curgoid, gp->goid);
	WSR_TRACE_IF(traced, g_run, &mp->stats, pp->id, mp->id, gp->goid, src, (uint8_t)inherit);
	if (gp->stack == NULL) {
		if (!wsr__stackalloc(pp, gp))
			wsr__throw("execute: out of memory for a G stack");
		wsr__ctx_make(&gp->ctx, wsr__stack_top(gp), wsr__gentry, gp);
#if WSR_SAN_TSAN
		gp->tsan_fiber = wsr__fiber_get(pp);
#endif
	}
#if WSR_SAN_ASAN
	san_switch_begin(&mp->asan_fake_stack, (char *)gp->stack + wsr__page_size(),
			 gp->stack_size);
#endif
#if WSR_SAN_TSAN
	san_tsan_switch(gp->tsan_fiber);
#endif
	wsr__ctx_swap(&mp->g0ctx, &gp->ctx);
#if WSR_SAN_ASAN
	san_switch_end(mp->asan_fake_stack);
#endif
}

/* Runs gp on mp until it switches back to g0. Two copies (trace.h): which
 * one runs is chosen once per schedule round (see schedule_body). */
WSR_TRACED_COPY void execute_traced(struct wsr_m *mp, struct wsr_g *gp, bool inherit, uint8_t src)
{
	execute_body(mp, gp, inherit, src, true);
}

void wsr__mcall(void (*fn)(struct wsr_m *mp, struct wsr_g *gp, void *arg), void *arg)
{
	struct wsr_m *mp = wsr__getm();
	struct wsr_g *gp = mp->curg;

	WSR_ASSERT(gp != NULL);
	mp->mcall_fn = fn;
	mp->mcall_arg = arg;
	mp->mcall_g = gp;
#if WSR_SAN_ASAN
	san_switch_begin(&gp->asan_fake_stack, mp->g0_stack_lo, mp->g0_stack_size);
#endif
#if WSR_SAN_TSAN
	san_tsan_switch(mp->tsan_fiber);
#endif
	wsr__ctx_swap(&gp->ctx, &mp->g0ctx);
	/* Resumed, maybe on another M: mp is stale from here on. */
#if WSR_SAN_ASAN
	san_switch_end(gp->asan_fake_stack);
#endif
}

/* Leaves the G's stack for good (exit): ASan must forget its fake stack.
 * No TSan frame: the G's fiber is reused (san.h). */
static WSR_NO_FUNC_ENTRY __attribute__((noreturn)) void
mcall_noreturn(void (*fn)(struct wsr_m *, struct wsr_g *, void *))
{
	struct wsr_m *mp = wsr__getm();
	struct wsr_g *gp = mp->curg;

	mp->mcall_fn = fn;
	mp->mcall_arg = NULL;
	mp->mcall_g = gp;
#if WSR_SAN_ASAN
	san_switch_begin(NULL, mp->g0_stack_lo, mp->g0_stack_size);
#endif
#if WSR_SAN_TSAN
	san_tsan_switch(mp->tsan_fiber);
#endif
	wsr__ctx_swap(&gp->ctx, &mp->g0ctx);
	wsr__throw("mcall_noreturn: a dead G was resumed");
}

/* Takes the G off the M (on g0, after the switch). */
static void dropg(struct wsr_m *mp, struct wsr_g *gp)
{
	mp->curg = NULL;
	gp->m = NULL;
}

/* The running M puts its own G gp on the global queue (a yield under the
 * deque policies, a preemption) and, as Go's goschedImpl, wakes a P: the M
 * may next run a G that never yields, and with a P idle and nobody
 * spinning, gp would wait behind it (test-knobs a_preempted_g_wakes_...).
 * The event under the lock: once it is unlocked another M may run gp (even
 * to its exit, and its G struct may be reused). */
static void globrunqput_behind(struct wsr_m *mp, struct wsr_g *gp, bool traced)
{
	uint32_t glen;

	wsr__lock(&wsr__sched.lock);
	wsr__globrunqput(gp);
	glen = (uint32_t)load_relaxed(&wsr__sched.runqsize);
	WSR_TRACE_IF(traced, globrunq_put, &mp->stats, mp->p->id, mp->id, gp->goid, glen);
	wsr__unlock(&wsr__sched.lock);
	wsr__wakep(mp);
}

WSR_TRACE_BODY void gosched_body(struct wsr_m *mp, struct wsr_g *gp, bool traced)
{
	WSR_TRACE_IF(traced, g_stop, &mp->stats, mp->p->id, mp->id, gp->goid, WR_YIELD);
	dropg(mp, gp);
	store_relaxed(&gp->status, G_RUNNABLE);
	if (wsr__policy_is_deque(wsr__sched.policy)) {
		/* The owner's end of a deque is the next G it runs: a yield put
		 * there would run again at once. It goes behind everyone, to the
		 * global queue, as Go's Gosched does. */
		globrunqput_behind(mp, gp, traced);
		return;
	}
	wsr__runqput(mp, mp->p, gp, false);
}

WSR_TRACED_COPY void gosched_traced(struct wsr_m *mp, struct wsr_g *gp)
{
	gosched_body(mp, gp, true);
}

static void gosched_m(struct wsr_m *mp, struct wsr_g *gp, void *arg)
{
	(void)arg;
	if (WSR_TRACE_ENABLED(g_stop)) {
		gosched_traced(mp, gp);
		return;
	}
	gosched_body(mp, gp, false);
}

static void preempt_m(struct wsr_m *mp, struct wsr_g *gp, void *arg)
{
	(void)arg;
	WSR_TRACE(g_stop, &mp->stats, mp->p->id, mp->id, gp->goid, WR_PREEMPT);
	dropg(mp, gp);
	store_relaxed(&gp->status, G_RUNNABLE);
	/* Like Go: a preempted G goes to the global queue, behind everyone. */
	globrunqput_behind(mp, gp, WSR_TRACE_ENABLED(globrunq_put));
}

/* Preempts the running G at once (wsr_go when the global queue is long). */
void wsr__gopreempt(void)
{
	wsr__mcall(preempt_m, NULL);
	wsr__preempt_check();
}

/* On g0 after a park: the G's context is saved; let others resume it. */
static void park_m(struct wsr_m *mp, struct wsr_g *gp, void *arg)
{
	(void)arg;
	dropg(mp, gp);
	/* store-release; pairs with the load-acquire spin in execute. */
	store_rel(&gp->switching, 0);
}

/* On g0 when a commit refused the park: the G runs again next. */
static void parkabort_m(struct wsr_m *mp, struct wsr_g *gp, void *arg)
{
	(void)arg;
	dropg(mp, gp);
	store_relaxed(&gp->status, G_RUNNABLE);
	WSR_TRACE(g_ready, &mp->stats, mp->p->id, mp->id, gp->goid, gp->goid);
	wsr__runqput(mp, mp->p, gp, true);
}

WSR_TRACE_BODY void gopark_body(bool (*commit)(struct wsr_g *gp, void *arg), void *arg,
				uint8_t reason, bool traced)
{
	struct wsr_m *mp = wsr__getm();
	struct wsr_g *gp = mp->curg;

	WSR_TRACE_IF(traced, g_stop, &mp->stats, mp->p->id, mp->id, gp->goid, reason);
	gp->waitreason = reason;
	store_relaxed(&gp->switching, 1);
	store_relaxed(&gp->status, G_WAITING);
	/* The commit publishes the G to its waker (usually by unlocking the
	 * queue it sits on). From here a waker may ready it and another M pick
	 * it up: that M waits in execute until park_m cleared `switching`. */
	if (commit != NULL && !commit(gp, arg)) {
		store_relaxed(&gp->switching, 0);
		wsr__mcall(parkabort_m, NULL);
		return;
	}
	wsr__mcall(park_m, NULL);
}

WSR_TRACED_COPY void gopark_traced(bool (*commit)(struct wsr_g *gp, void *arg), void *arg,
				   uint8_t reason)
{
	gopark_body(commit, arg, reason, true);
}

void wsr__gopark(bool (*commit)(struct wsr_g *gp, void *arg), void *arg, uint8_t reason)
{
	if (WSR_TRACE_ENABLED(g_stop)) {
		gopark_traced(commit, arg, reason);
		return;
	}
	gopark_body(commit, arg, reason, false);
}

WSR_TRACE_BODY void goready_body(struct wsr_g *gp, bool next, bool traced)
{
	struct wsr_m *mp = wsr__getm();
	struct wsr_g *by = mp != NULL ? mp->curg : NULL;
	struct wsr_p *pp = mp != NULL ? mp->p : NULL;

	if (load_relaxed(&gp->status) != G_WAITING)
		wsr__throw("goready: G is not waiting");
	store_relaxed(&gp->status, G_RUNNABLE);
	WSR_TRACE_IF(traced, g_ready, wsr__stats_of(mp), p_id(pp), m_id(mp), gp->goid, g_id(by));
	if (pp != NULL) {
		wsr__runqput(mp, pp, gp, next);
	} else {
		uint32_t glen;

		/* Rare (a ready from outside any P): traced in both copies,
		 * under the lock (see gosched_body). */
		wsr__lock(&wsr__sched.lock);
		wsr__globrunqput(gp);
		glen = (uint32_t)load_relaxed(&wsr__sched.runqsize);
		WSR_TRACE(globrunq_put, wsr__stats_of(mp), -1, m_id(mp), gp->goid, glen);
		wsr__unlock(&wsr__sched.lock);
	}
	wsr__wakep(mp);
}

WSR_TRACED_COPY void goready_traced(struct wsr_g *gp, bool next)
{
	goready_body(gp, next, true);
}

void wsr__goready(struct wsr_g *gp, bool next)
{
	if (WSR_TRACE_ENABLED(g_ready)) {
		goready_traced(gp, next);
		return;
	}
	goready_body(gp, next, false);
}

/* Puts n Gs of the list from *listp on the global queue in one sched.lock
 * (each one's g_ready and globrunq_put under it, so nobody runs a G before
 * its events); advances *listp. */
static void inject_global(struct wsr_m *mp, struct wsr_g **listp, int32_t n)
{
	struct wsr_g *batch[128];
	int32_t pid = p_id(mp != NULL ? mp->p : NULL);

	while (n > 0) {
		uint32_t k = 0, i, glen;

		for (; k < 128 && k < (uint32_t)n; k++) {
			batch[k] = *listp;
			*listp = batch[k]->schedlink;
			store_relaxed(&batch[k]->status, G_RUNNABLE);
		}
		wsr__lock(&wsr__sched.lock);
		glen = (uint32_t)load_relaxed(&wsr__sched.runqsize);
		for (i = 0; i < k; i++) {
			WSR_TRACE(g_ready, wsr__stats_of(mp), pid, m_id(mp), batch[i]->goid, 0);
			WSR_TRACE(globrunq_put, wsr__stats_of(mp), pid, m_id(mp), batch[i]->goid,
				  glen + i + 1);
		}
		wsr__globrunqputbatch(batch, k);
		wsr__unlock(&wsr__sched.lock);
		n -= (int32_t)k;
	}
}

/* Starts up to n idle Ps (with an M each) for Gs put on the global queue. */
static void inject_startidle(struct wsr_m *mp, int32_t n)
{
	int32_t i;

	for (i = 0; i < n && load_seq(&wsr__sched.npidle) > 0; i++)
		if (wsr__startm(mp, NULL, NULL) == -1)
			break;
}

void wsr__injectglist(struct wsr_m *mp, struct wsr_g *list)
{
	struct wsr_p *pp = mp != NULL ? mp->p : NULL;
	struct wsr_g *gp;
	int32_t n = 0, nglobal;

	/* Like Go's injectglist: without a P, everything goes to the global
	 * queue and as many idle Ps as there are Gs are started. With one, only
	 * as many Gs as there are idle Ps go there (one lock for them all), for
	 * the Ps started for them; the rest join our own queue. */
	for (gp = list; gp != NULL; gp = gp->schedlink)
		n++;
	if (n == 0)
		return;
	nglobal = n;
	if (pp != NULL) {
		int32_t idle = load_seq(&wsr__sched.npidle);

		if (idle < nglobal)
			nglobal = idle;
	}
	if (nglobal > 0) {
		inject_global(mp, &list, nglobal);
		inject_startidle(mp, nglobal);
	}
	if (pp == NULL)
		return;
	while (list != NULL) {
		gp = list;
		list = gp->schedlink;
		store_relaxed(&gp->status, G_RUNNABLE);
		WSR_TRACE(g_ready, &mp->stats, pp->id, mp->id, gp->goid, 0);
		wsr__runqput(mp, pp, gp, false);
	}
	/* Go's hedge: a P may have gone idle after npidle was read, with the
	 * Gs on our queue; wakep does nothing if someone spins or none is idle. */
	wsr__wakep(mp);
}

WSR_TRACE_BODY void goexit_body(struct wsr_m *mp, struct wsr_g *gp, bool traced)
{
	struct wsr_p *pp = mp->p;

	WSR_TRACE_IF(traced, g_stop, &mp->stats, pp->id, mp->id, gp->goid, WR_EXIT);
	dropg(mp, gp);
	store_relaxed(&gp->status, G_DEAD);
#if WSR_SAN_TSAN
	wsr__fiber_put(pp, gp->tsan_fiber);
	gp->tsan_fiber = NULL;
#endif
	wsr__stackfree(pp, gp);
	if (gp->goid == 1) {
		store_seq(&wsr__sched.exiting, 1);
		wakeall_for_exit(mp);
	}
	wsr__gfput(pp, gp);
}

WSR_TRACED_COPY void goexit_traced(struct wsr_m *mp, struct wsr_g *gp)
{
	goexit_body(mp, gp, true);
}

static void goexit_m(struct wsr_m *mp, struct wsr_g *gp, void *arg)
{
	(void)arg;
	if (WSR_TRACE_ENABLED(g_stop)) {
		goexit_traced(mp, gp);
		return;
	}
	goexit_body(mp, gp, false);
}

WSR_NO_FUNC_ENTRY void wsr__goexit(void)
{
	mcall_noreturn(goexit_m);
}

/* A G caught at a yield point after the main G returned: never resumed. */
static void abandon_m(struct wsr_m *mp, struct wsr_g *gp, void *arg)
{
	(void)arg;
	WSR_TRACE(g_stop, &mp->stats, p_id(mp->p), mp->id, gp->goid, WR_EXIT);
	dropg(mp, gp);
	store_relaxed(&gp->status, G_DEAD);
}

void wsr__preempt_check(void)
{
	struct wsr_m *mp = wsr__getm();
	struct wsr_p *pp;

	if (__builtin_expect(load_relaxed(&wsr__sched.exiting) != 0, 0) && mp != NULL &&
	    mp->curg != NULL && mp->curg->goid != 1) {
		wsr__mcall(abandon_m, NULL);
		wsr__throw("preempt_check: an abandoned G was resumed");
	}
	if (mp == NULL || (pp = mp->p) == NULL)
		return;
	if (__builtin_expect(load_relaxed(&pp->preempt) != 0, 0)) {
		store_relaxed(&pp->preempt, 0);
		wsr__mcall(preempt_m, NULL);
	}
}

/* ---- findrunnable ---- */

/* Blocks until it finds a G (returned with *inherit and *src set), or
 * returns NULL when the runtime exits. Executed by an M that holds a P on
 * entry; may park the M, which comes back with a (maybe different) P. */
static struct wsr_g *findrunnable(struct wsr_m *mp, bool *inherit, uint8_t *src)
{
	struct wsr_p *pp;
	struct wsr_g *gp;
	int64_t now, polluntil, w;
	bool ran, newwork, wasspinning;
	int32_t i;

top:
	if (load_relaxed(&wsr__sched.exiting))
		return NULL;
	if (mp->p == NULL) {
		/* Came back from stopm without a P (exit wakeup). */
		stopm(mp);
		goto top;
	}
	pp = mp->p;
	now = wsr__nanotime();
	polluntil = wsr__checktimers(mp, pp, now, &ran);

	/* local runq */
	gp = wsr__runqget(pp, inherit);
	if (gp != NULL) {
		*src = *inherit && !wsr__policy_is_deque(wsr__sched.policy) ? SRC_RUNNEXT
										     : SRC_LOCAL;
		return gp;
	}

	/* global runq */
	if (load_relaxed(&wsr__sched.runqsize) != 0) {
		wsr__lock(&wsr__sched.lock);
		gp = wsr__globrunqget(mp, pp, 0);
		wsr__unlock(&wsr__sched.lock);
		if (gp != NULL) {
			*inherit = false;
			*src = SRC_GLOBAL;
			return gp;
		}
	}

	/* A P whose M has not taken a G from its ring for a while (the kernel
	 * stopped its thread, or a G runs long): take half of its Gs before
	 * looking for new work. */
	gp = wsr__stealstalled(mp, now);
	if (gp != NULL) {
		*inherit = false;
		*src = SRC_STEAL;
		return gp;
	}

	/* Poll the network without blocking, if anyone waits on it and no M
	 * is blocked in it already. */
	if (wsr__netpoll_inited() && wsr__netpoll_waiters() > 0 &&
	    load_relaxed(&wsr__lastpoll) != 0) {
		int32_t n = 0;
		struct wsr_g *list = wsr__netpoll(mp, 0, &n);

		if (list != NULL) {
			gp = list;
			list = gp->schedlink;
			gp->schedlink = NULL;
			WSR_TRACE(g_ready, &mp->stats, pp->id, mp->id, gp->goid, 0);
			store_relaxed(&gp->status, G_RUNNABLE);
			if (list != NULL)
				wsr__injectglist(mp, list);
			*inherit = false;
			*src = SRC_NETPOLL;
			return gp;
		}
	}

	/* Steal, if spinning is allowed (the cap). */
	if (mp->spinning || trybecomespinning(mp)) {
		gp = wsr__stealwork(mp, now, &newwork, &w);
		if (gp != NULL) {
			*inherit = false;
			*src = SRC_STEAL;
			return gp;
		}
		if (newwork)
			goto top;
		if (w != 0 && (polluntil == 0 || w < polluntil))
			polluntil = w;
	}

	/* Give up the P: re-check the global queue and needspinning under the lock. */
	wsr__lock(&wsr__sched.lock);
	if (load_relaxed(&wsr__sched.exiting)) {
		wsr__unlock(&wsr__sched.lock);
		return NULL;
	}
	if (load_relaxed(&wsr__sched.runqsize) != 0) {
		gp = wsr__globrunqget(mp, pp, 0);
		wsr__unlock(&wsr__sched.lock);
		*inherit = false;
		*src = SRC_GLOBAL;
		return gp;
	}
	if (!mp->spinning && load_seq(&wsr__sched.needspinning) == 1) {
		/* See the essay: a submitter found no idle P; spin instead of leaving. */
		if (rejoinspinning(mp)) {
			wsr__unlock(&wsr__sched.lock);
			goto top;
		}
	}
	if (wsr__releasep(mp) != pp)
		wsr__throw("findrunnable: wrong P");
	wsr__pidleput(mp, pp);
	wsr__unlock(&wsr__sched.lock);
	WSR_CHAOS(mp, CHAOS_RELEASEP);

	/* The delicate dance: drop nmspinning first, then re-check every source. */
	wasspinning = mp->spinning;
	if (mp->spinning) {
		dropspinning(mp, false);
		WSR_CHAOS(mp, CHAOS_SPIN_DROP);

		wsr__lock(&wsr__sched.lock);
		if (load_relaxed(&wsr__sched.runqsize) != 0) {
			struct wsr_p *p2 = pidlegetspinning(mp);

			if (p2 != NULL) {
				wsr__acquirep(mp, p2);
				gp = wsr__globrunqget(mp, p2, 0);
				wsr__unlock(&wsr__sched.lock);
				if (gp == NULL)
					wsr__throw("findrunnable: global runq empty with non-zero runqsize");
				rejoinspinning(mp);
				*inherit = false;
				*src = SRC_GLOBAL;
				return gp;
			}
		}
		wsr__unlock(&wsr__sched.lock);

		/* Only what a steal could take: under policy=tokio a G in
		 * runnext is its running owner's, and counting it sent this M
		 * round (a P, a failed steal, the P back) until the owner
		 * blocked (test-knobs, tokio_idle_m_parks_...). */
		for (i = 0; i < wsr__sched.gomaxprocs; i++) {
			struct wsr_p *p2 = &wsr__sched.allp[i];

			if (load_relaxed(&p2->status) != P_IDLE && wsr__runqstealable(p2)) {
				wsr__lock(&wsr__sched.lock);
				p2 = pidlegetspinning(mp);
				wsr__unlock(&wsr__sched.lock);
				if (p2 != NULL) {
					wsr__acquirep(mp, p2);
					rejoinspinning(mp);
					goto top;
				}
				break;
			}
		}
	}
	/* Timers on any P (ours was just released, others may be idle). */
	w = wsr__timers_next();
	if (w != 0 && (polluntil == 0 || w < polluntil))
		polluntil = w;

	/* Block in the poller until the next timer, if nobody else does. */
	if (wsr__netpoll_inited() && (wsr__netpoll_waiters() > 0 || polluntil != 0) &&
	    xchg_seq(&wsr__lastpoll, 0) != 0) {
		struct wsr_g *list;
		struct wsr_p *p2;
		int64_t delay = -1;
		int32_t n = 0;

		store_seq(&wsr__polluntil, polluntil);
		if (polluntil != 0) {
			now = wsr__nanotime();
			delay = polluntil - now;
			if (delay < 0)
				delay = 0;
		}
		list = wsr__netpoll(mp, delay, &n);
		store_seq(&wsr__polluntil, 0);
		store_seq(&wsr__lastpoll, wsr__nanotime());
		wsr__lock(&wsr__sched.lock);
		p2 = load_relaxed(&wsr__sched.exiting) ? NULL : wsr__pidleget(mp);
		wsr__unlock(&wsr__sched.lock);
		if (p2 == NULL) {
			if (list != NULL)
				wsr__injectglist(mp, list);
		} else {
			wsr__acquirep(mp, p2);
			if (list != NULL) {
				gp = list;
				list = gp->schedlink;
				gp->schedlink = NULL;
				WSR_TRACE(g_ready, &mp->stats, p2->id, mp->id, gp->goid, 0);
				store_relaxed(&gp->status, G_RUNNABLE);
				if (list != NULL)
					wsr__injectglist(mp, list);
				if (wasspinning)
					rejoinspinning(mp);
				*inherit = false;
				*src = SRC_NETPOLL;
				return gp;
			}
			if (wasspinning)
				rejoinspinning(mp);
			goto top;
		}
	} else if (polluntil != 0 && wsr__netpoll_inited()) {
		int64_t pu = load_seq(&wsr__polluntil);

		if (pu == 0 || pu > polluntil)
			wsr__netpoll_break();
	}
	stopm(mp);
	goto top;
}

/* Runs gp, then does on g0 what it asked for: the end of a schedule round. */
WSR_TRACE_BODY void run_body(struct wsr_m *mp, struct wsr_g *gp, bool inherit, uint8_t src,
			     bool traced)
{
	/* A spinner that found work lets another M spin (fan-out). */
	if (mp->spinning)
		resetspinning(mp);
	if (traced)
		execute_traced(mp, gp, inherit, src);
	else
		execute_body(mp, gp, inherit, src, false);
	/* Back on g0: do what the G asked for. */
	mp->mcall_fn(mp, mp->mcall_g, mp->mcall_arg);
	mp->mcall_fn = NULL;
	mp->mcall_g = NULL;
}

/* A round whose local queues were empty: findrunnable (which may sleep) and
 * its own g_run test. Returns false when the runtime exits. */
static __attribute__((noinline)) bool schedule_slow(struct wsr_m *mp)
{
	struct wsr_g *gp;
	bool inherit = false;
	uint8_t src = SRC_LOCAL;

	gp = findrunnable(mp, &inherit, &src);
	if (gp == NULL)
		return false;
	run_body(mp, gp, inherit, src, WSR_TRACE_ENABLED(g_run));
	return true;
}

/* One round of the g0 loop: find a G, run it, then do on g0 what it asked
 * for. Returns false when the M must leave the loop (the runtime exits).
 * Two copies (trace.h): wsr__schedule tests g_run before the round, not just
 * before execute, so that the plain round keeps no value alive for a cold
 * call. Between the test and g_run the round only looks at its timers and
 * queues; a round that needs findrunnable, which may sleep, tests g_run
 * again after it (schedule_slow). */
WSR_TRACE_BODY bool schedule_body(struct wsr_m *mp, bool traced)
{
	struct wsr_g *gp = NULL;
	bool inherit = false;
	uint8_t src = SRC_LOCAL;
	struct wsr_p *pp;

	if (mp->p == NULL) {
		stopm(mp);
		return true;
	}
	pp = mp->p;
	/* Timers first, as Go's findRunnable does on every schedule: Gs that
	 * keep yielding must not starve a sleeper whose time has come. */
	if (load_relaxed(&pp->timer0when) != 0) {
		bool ran;

		wsr__checktimers(mp, pp, 0, &ran);
	}
	/* Fairness: check the global queue every globalcheck ticks. */
	if (load_relaxed(&pp->schedtick) % (uint32_t)wsr__sched.globalcheck == 0 &&
	    load_relaxed(&wsr__sched.runqsize) > 0) {
		wsr__lock(&wsr__sched.lock);
		gp = wsr__globrunqget(mp, pp, 1);
		wsr__unlock(&wsr__sched.lock);
		if (gp != NULL)
			src = SRC_GLOBAL;
	}
	/* From the local queue src stays SRC_LOCAL: execute makes it
	 * SRC_RUNNEXT when inherit is set (only runnext hands down a time
	 * slice). */
	if (gp == NULL)
		gp = wsr__runqget(pp, &inherit);
	if (gp == NULL)
		return schedule_slow(mp);
	run_body(mp, gp, inherit, src, traced);
	return true;
}

WSR_TRACED_COPY bool schedule_traced(struct wsr_m *mp)
{
	return schedule_body(mp, true);
}

void wsr__schedule(struct wsr_m *mp)
{
	/* The exit test first: the compiler then repeats it at the end of a
	 * round, which loops back with its own branch (no jump per round). */
	while (!load_relaxed(&wsr__sched.exiting)) {
		if (WSR_TRACE_ENABLED(g_run)) {
			if (!schedule_traced(mp))
				break;
		} else if (!schedule_body(mp, false)) {
			break;
		}
	}
	if (mp->spinning)
		dropspinning(mp, false);
	if (mp->p != NULL)
		wsr__releasep(mp);
}

/* ---- checkdead ---- */

const char *wsr__waitreason_string(uint8_t r)
{
	static const char *const names[] = {
		[WR_YIELD] = "yield",	      [WR_BLOCK] = "blocked",
		[WR_SLEEP] = "sleep",	      [WR_CHAN] = "chan send/receive",
		[WR_MUTEX] = "mutex",	      [WR_SYSCALL] = "syscall",
		[WR_PREEMPT] = "preempted",   [WR_EXIT] = "exit",
		[WR_SELECT] = "select",	      [WR_WAITGROUP] = "waitgroup wait",
		[WR_IO] = "IO wait",
	};

	return r < sizeof(names) / sizeof(names[0]) && names[r] != NULL ? names[r] : "?";
}

static void count_waiting(struct wsr_g *gp, void *arg)
{
	if (load_relaxed(&gp->status) == G_WAITING)
		++*(int32_t *)arg;
}

static void print_waiting(struct wsr_g *gp, void *arg)
{
	(void)arg;
	if (load_relaxed(&gp->status) == G_WAITING)
		fprintf(stderr, "goroutine %lld [%s]%s\n", (long long)gp->goid,
			wsr__waitreason_string(gp->waitreason), gp->goid == 1 ? " (main)" : "");
}

void wsr__checkdead(void)
{
	int32_t run, i, nblocked = 0;

	wsr__assert_lock_held(&wsr__sched.lock);
	if (load_relaxed(&wsr__sched.exiting) || !load_relaxed(&wsr__sched.mainstarted))
		return;
	/* A P that sysmon is handing off counts as a running M (syscall.c). */
	run = load_relaxed(&wsr__sched.mcount) - load_relaxed(&wsr__sched.nmidle) +
	      load_seq(&wsr__sched.nhandoff);
	if (run > 0)
		return;
	if (run < 0)
		wsr__throw("checkdead: inconsistent M counts");
	if (load_relaxed(&wsr__sched.nsyscall) > 0 || wsr__netpoll_waiters() > 0 ||
	    wsr__timers_any())
		return;
	/* Every M is parked: a runnable G now is a lost wakeup, a runtime bug. */
	if (load_relaxed(&wsr__sched.runqsize) != 0)
		wsr__throw("checkdead: runnable G on the global queue but every M is parked");
	for (i = 0; i < wsr__sched.gomaxprocs; i++)
		if (!wsr__runqempty(&wsr__sched.allp[i]))
			wsr__throw("checkdead: runnable G on a P but every M is parked");
	wsr__lock(&wsr__sched.gflock);
	wsr__forallg(count_waiting, &nblocked);
	if (nblocked == 0) {
		wsr__unlock(&wsr__sched.gflock);
		return;
	}
	fflush(stdout);
	fprintf(stderr, "wsr: all goroutines are asleep - deadlock!\n\n");
	wsr__forallg(print_waiting, NULL);
	wsr__unlock(&wsr__sched.gflock);
	fflush(stderr);
	if (wsr__debug_stats)
		wsr__stats_print();
	wsr__fatal_exit();
}

/* ---- wsr_main ---- */

struct main_args {
	int (*fn)(void *);
	void *arg;
};

static void main_g(void *varg)
{
	struct main_args *ma = varg;

	wsr__sched.mainresult = ma->fn(ma->arg);
}

static int32_t default_procs(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && (n = CPU_COUNT(&set)) > 0)
		return n;
	return 1;
}

static _Atomic int running;

int wsr_main(int (*main_fn)(void *), void *arg)
{
	struct main_args ma = {main_fn, arg};
	struct wsr_m *m0;
	const char *s;
	int32_t nprocs, i;
	int zero = 0;

	if (!atomic_compare_exchange_strong(&running, &zero, 1))
		wsr__throw("wsr_main: the runtime is already running");
	memset(&wsr__sched, 0, sizeof(wsr__sched));
	wsr__max_spinning = 0;
	wsr__lock_init(&wsr__sched.lock);
	wsr__lock_init(&wsr__sched.gflock);
	/* Before debug_init's atexit hook and the first M's fault handler, which
	 * both hand on to what is there before them (tpfreeze.c). */
	wsr__tp_freeze_install();
	wsr__debug_init();
	wsr__stack_boot();
	nprocs = default_procs();
	s = getenv("WSRMAXPROCS");
	if (s != NULL && *s != '\0') {
		char *end;
		long v = strtol(s, &end, 10);

		if (*end == '\0' && v > 0 && v <= WSR_MAXPROCS_LIMIT)
			nprocs = (int32_t)v;
		else
			fprintf(stderr, "wsr: ignoring WSRMAXPROCS=%s (want 1..%d)\n", s,
				WSR_MAXPROCS_LIMIT);
	}
	wsr__sched.gomaxprocs = nprocs;
	store_relaxed(&wsr__lastpoll, wsr__nanotime());

	wsr__lock(&wsr__sched.lock);
	m0 = wsr__allocm();
	wsr__unlock(&wsr__sched.lock);
	m0->is_m0 = true;
	m0->thread = pthread_self();
	wsr__minit(m0);
	/* Before the knobs event: it drops a topology of the wrong size. */
	wsr__steal_order_init(nprocs);
	/* The origin of the SCHED lines, as close as can be to the init event's
	 * time, which is the origin of `wsr report`'s. */
	wsr__sched.starttime = wsr__nanotime();
	WSR_TRACE(init, &m0->stats, -1, m0->id, nprocs, WSR_RUNQ_SIZE, WSR_VERSION,
		  wsr__sched.policy);
	char knobs[192];
	wsr__debug_knobs(knobs, sizeof(knobs));
	WSR_TRACE(knobs, &m0->stats, -1, m0->id, knobs);
	wsr__procinit(nprocs);
	wsr__acquirep(m0, &wsr__sched.allp[0]);
	wsr__lock(&wsr__sched.lock);
	for (i = nprocs - 1; i >= 1; i--)
		wsr__pidleput(m0, &wsr__sched.allp[i]);
	wsr__unlock(&wsr__sched.lock);

	wsr__newproc(m0, main_g, &ma, 0);
	store_seq(&wsr__sched.mainstarted, 1);
	wsr__sysmon_start();

	wsr__schedule(m0);

	/* Teardown: every other M leaves its loop at its next scheduling point. */
	wakeall_for_exit(m0);
	wsr__sysmon_stop();
	wsr__join_ms();
	wsr__stats_sum(wsr__last_stats);
	if (wsr__debug_stats)
		wsr__stats_print();
	wsr__mexit_cleanup(m0);
	wsr__gfree_all();
	wsr__globrunq_free();
	wsr__procfree();
	wsr__stackpool_free();
	wsr__freems();
	wsr__steal_order_free();
	wsr__netpoll_close();
	store_seq(&running, 0);
	return wsr__sched.mainresult;
}

int wsr_gomaxprocs(void)
{
	return wsr__sched.gomaxprocs;
}

int64_t wsr_self_id(void)
{
	struct wsr_g *gp = wsr__getg();

	return gp != NULL ? gp->goid : -1;
}

__attribute__((noinline)) int wsr_errno(void)
{
	__asm__ volatile("" ::: "memory");
	return errno;
}

void wsr_yield(void)
{
	struct wsr_m *mp = wsr__getm();

	if (mp == NULL || mp->curg == NULL)
		wsr__throw("wsr_yield: called outside a G");
	wsr__mcall(gosched_m, NULL);
	wsr__preempt_check();
}

void wsr_preempt_point(void)
{
	wsr__preempt_check();
}
