/*
 * runq.c - per-P local run queue (Go: runqput, runqget, runqgrab, runqsteal,
 * runqputslow).
 *
 * Invariants:
 *   - head and tail are free-running uint32; 0 <= tail - head <= WSR_RUNQ_SIZE.
 *   - A G is in exactly one place while runnable: a ring slot, runnext, or the
 *     global queue.
 *   - A full ring spills half of itself (128) plus the new G: 129 Gs, in one
 *     locked batch, to the global queue (runqputslow). If the global queue
 *     then holds more than backlog_per_p Gs per P, the spill sets the
 *     putting M's backlog flag (read by wsr_go, g.c).
 * Concurrency:
 *   - Only the owning P writes tail (seq_cst store: it also orders the put
 *     before wakep's read of nmspinning) and the ring slots (relaxed, published
 *     by the tail store), and only it sets runnext non-NULL (seq_cst exchange).
 *   - Any P may consume: load-acquire head and tail, read the slots (relaxed),
 *     then CAS-release head to commit; a failed CAS retries from scratch.
 *   - runnext is taken by CAS, by the owner (runqget) or a thief (last steal round).
 * Policy deque (WSRDEBUG=policy=deque): each P's local queue is its Chase-Lev
 * deque (deque.c) instead of the ring and runnext, behind the same functions.
 * The owner pushes and pops the newest G (so the G just made runnable runs
 * next, as runnext would give it, but without a slot of its own and without
 * inheriting the time slice); a thief takes the oldest, one per steal. A
 * full deque spills its 128 oldest and the new G to the global queue, as
 * the ring does. The events are the same: runqput (next = 0), runq_spill,
 * steal (n = 1, runnext = 0); the analyzer counts the queue the same way.
 * The push's seq_cst bottom store is the submitter's half of the Dekker
 * pair with wakep, as the ring's tail store is.
 * Policies locked and trylock (WSRDEBUG=policy=locked|trylock): the
 * same deque's slots and indices, but every access goes through the P's
 * dqlock (a blocking futex mutex, lock.c), as a teaching implementation
 * guards a deque: the owner pushes and pops at the bottom under it, a thief
 * takes from the top under it. Under locked a thief that finds the lock held
 * waits for it (convoying: thieves queue on one busy victim instead of
 * fanning out); under trylock it moves on to the next victim. Either
 * says so with steal_lock_wait. The indices stay atomics so that
 * wsr__runqempty and wsr__runqlen read them without the lock; the push's
 * bottom store is seq_cst for the Dekker pair with wakep, as above.
 * Policy tokio: the go ring with Tokio's choices (debug.c sets the knobs;
 * the runnext cap below).
 * Knobs: steal=one makes a ring steal take one G instead of half; steal=half
 * makes a deque steal take half (rounded up) instead of one, the first to
 * run, the rest pushed on the thief's own deque. runnext_limit (gmp.h) caps
 * the Gs run in a row from runnext (pp->runnext_runs, counted by execute):
 * a put with next past the cap goes to the tail instead (runnext=0: always;
 * tokio: after 3, Tokio's MAX_LIFO_POLLS_PER_TICK in multi_thread/worker.rs, which
 * disables the LIFO slot for the rest of the chain "to mitigate starvation"
 * in ping-pong workloads; Go: never).
 * Tracepoints: runqput, runq_spill, steal, steal_lock_wait.
 */
#include "config.h"

#include <time.h>

#include "chaos.h"
#include "runq.h"

/* Ring length above which runqget prefetches the next G (see there). */
#define WSR_RUNQ_PREFETCH_MIN 8

/* The runqput event a put announces (NULL for batch puts, which have none). */
struct putev {
	struct wsr_g *g;
	uint8_t next;
	struct wsr_g *kicked;
};

static bool policy_deque(void)
{
	return wsr__policy_is_deque(wsr__sched.policy);
}

static bool policy_locked(void)
{
	return wsr__sched.policy == WSR_POLICY_LOCKED || wsr__sched.policy == WSR_POLICY_TRYLOCK;
}

/* ---- the locked deque (policy=locked, trylock): pp->dq under pp->dqlock ---- */

/* Owner; false if full. The seq_cst bottom store: see the head comment. */
static bool ldq_push(struct wsr_p *pp, struct wsr_g *const *gs, uint32_t n)
{
	int64_t b, t;
	uint32_t i;

	wsr__lock(&pp->dqlock);
	b = load_relaxed(&pp->dq.bottom);
	t = load_relaxed(&pp->dq.top);
	if (b - t + n > WSR_DEQUE_SIZE) {
		wsr__unlock(&pp->dqlock);
		return false;
	}
	for (i = 0; i < n; i++)
		store_relaxed(&pp->dq.slot[(b + i) % WSR_DEQUE_SIZE], gs[i]);
	store_seq(&pp->dq.bottom, b + n);
	wsr__unlock(&pp->dqlock);
	return true;
}

/* Owner: the newest G, or NULL. */
static struct wsr_g *ldq_pop(struct wsr_p *pp)
{
	struct wsr_g *gp = NULL;
	int64_t b;

	wsr__lock(&pp->dqlock);
	b = load_relaxed(&pp->dq.bottom);
	if (b > load_relaxed(&pp->dq.top)) {
		gp = load_relaxed(&pp->dq.slot[(b - 1) % WSR_DEQUE_SIZE]);
		store_relaxed(&pp->dq.bottom, b - 1);
	}
	wsr__unlock(&pp->dqlock);
	return gp;
}

/* Caller holds pp->dqlock: moves up to max of the oldest Gs into out. */
static uint32_t ldq_take_locked(struct wsr_p *pp, struct wsr_g **out, uint32_t max)
{
	int64_t t = load_relaxed(&pp->dq.top);
	int64_t n = load_relaxed(&pp->dq.bottom) - t;
	uint32_t i;

	if (n > max)
		n = max;
	for (i = 0; i < (uint32_t)n; i++)
		out[i] = load_relaxed(&pp->dq.slot[(t + i) % WSR_DEQUE_SIZE]);
	if (n > 0)
		store_relaxed(&pp->dq.top, t + n);
	return (uint32_t)n;
}

/* Both deques: pushes gs[0..n) at the owner's end; false (nothing pushed)
 * if they do not fit. */
static bool dq_push(struct wsr_p *pp, struct wsr_g *const *gs, uint32_t n)
{
	uint32_t i;

	if (policy_locked())
		return ldq_push(pp, gs, n);
	if (wsr__deque_len(&pp->dq) + n > WSR_DEQUE_SIZE)
		return false;
	/* Only the owner pushes and thieves only shrink it: room stays. */
	for (i = 0; i < n; i++)
		if (!wsr__deque_push(&pp->dq, gs[i]))
			wsr__throw("runqput: deque full after its length was checked");
	return true;
}

/* Always inlined, and traced only in the traced copy of wsr__runqput (see
 * trace.h): out of line, the cold probe call made it a function with a frame
 * of its own on every put (21 instructions with no session). */
WSR_TRACE_BODY void emit_put(struct wsr_m *mp, struct wsr_p *pp, const struct putev *ev,
			     uint32_t qlen, bool traced)
{
	WSR_TRACE_IF(traced, runqput, &mp->stats, pp->id, mp->id, ev->g->goid, ev->next,
		     g_id(ev->kicked), qlen);
	if (ev->next)
		wsr__stat_add(&mp->stats, WSR_ST_runqput_next, 1);
}

/* Puts the spilled batch (its last G the one being put) on the global queue
 * and announces the spill and then ev's put (if any), all under sched.lock,
 * so nobody can take a G from the global queue before the events that put it
 * there. Sets the putting M's backlog flag past backlog_per_p Gs per P. */
static void spill_batch(struct wsr_m *mp, struct wsr_p *pp, struct wsr_g *const *batch,
			uint32_t n, const struct putev *ev, bool traced)
{
	int32_t glen;

	wsr__lock(&wsr__sched.lock);
	wsr__globrunqputbatch(batch, n);
	glen = load_relaxed(&wsr__sched.runqsize);
	if (wsr__sched.backlog_per_p != 0 &&
	    glen > (int64_t)wsr__sched.backlog_per_p * wsr__sched.gomaxprocs)
		mp->backlog = true;
	WSR_TRACE_IF(traced, runq_spill, &mp->stats, pp->id, mp->id, n, (uint32_t)glen);
	if (ev != NULL)
		emit_put(mp, pp, ev, wsr__runqlen(pp), traced);
	wsr__unlock(&wsr__sched.lock);
}

/* Moves half the full ring plus gp to the global queue in one batch. With ev,
 * its runqput event follows the runq_spill, both under sched.lock, so nobody
 * can take gp from the global queue before the events that put it there. */
static bool runqputslow(struct wsr_m *mp, struct wsr_p *pp, struct wsr_g *gp, uint32_t h,
			uint32_t t, const struct putev *ev)
{
	struct wsr_g *batch[WSR_RUNQ_SIZE / 2 + 1];
	uint32_t n = (t - h) / 2, i;

	WSR_ASSERT(n == WSR_RUNQ_SIZE / 2);
	for (i = 0; i < n; i++)
		batch[i] = load_relaxed(&pp->runq[(h + i) % WSR_RUNQ_SIZE]);
	/* CAS-release commits the consume; pairs with load-acquire of head by other consumers. */
	if (!cas_rel(&pp->runqhead, &h, h + n))
		return false;
	batch[n] = gp;
	spill_batch(mp, pp, batch, n + 1, ev, true);
	return true;
}

/* Puts gp at the ring's tail, announcing ev (if any) just before the tail
 * store publishes gp; a full ring spills instead (see runqputslow). */
WSR_TRACE_BODY void runqput_tail(struct wsr_m *mp, struct wsr_p *pp, struct wsr_g *gp,
				 const struct putev *ev, bool traced)
{
	for (;;) {
		/* load-acquire; synchronises with consumers' CAS-release of head. */
		uint32_t h = load_acq(&pp->runqhead);
		uint32_t t = load_relaxed(&pp->runqtail);

		if (t - h < WSR_RUNQ_SIZE) {
			store_relaxed(&pp->runq[t % WSR_RUNQ_SIZE], gp);
			if (ev != NULL)
				emit_put(mp, pp, ev, t - h + 1, traced);
			/* seq_cst: publishes the slot (pairs with load-acquire of tail by
			 * consumers) and is the submitter's half of the Dekker pair with
			 * wakep's load_seq(nmspinning): a release store is a plain mov on
			 * x86-64 that the later load may overtake, and a spinner dropping
			 * nmspinning could then miss this G (tests/reliability/parking.pml
			 * -DTSO_TAIL finds that lost wakeup). */
			store_seq(&pp->runqtail, t + 1);
			return;
		}
		if (runqputslow(mp, pp, gp, h, t, ev))
			return;
		/* The ring is not full any more: the put above must succeed. */
	}
}

static bool ring_full(struct wsr_p *pp)
{
	return load_relaxed(&pp->runqtail) - load_acq(&pp->runqhead) >= WSR_RUNQ_SIZE;
}

WSR_TRACE_BODY void runqput_body(struct wsr_m *mp, struct wsr_p *pp, struct wsr_g *gp, bool next,
				 bool traced)
{
	struct putev ev = {gp, next, NULL};
	struct wsr_g *old, *kicked;

	WSR_DASSERT(pp->m == mp);
	WSR_DASSERT(load_relaxed(&gp->status) == G_RUNNABLE);
	/* Every runqput event is emitted before the put makes gp visible: once it
	 * is in runnext, the ring or the global queue, another M may run (and
	 * finish) it, and the trace must not show that g_run before this event.
	 * When the put overflows the ring, the runq_spill comes first and qlen is
	 * the ring length after the spill (runqputslow). */
	if (!next) {
		runqput_tail(mp, pp, gp, &ev, traced);
		return;
	}
	WSR_CHAOS(mp, CHAOS_RUNNEXT);
	/* Only the owner sets runnext non-NULL; thieves may only clear it. */
	old = load_relaxed(&pp->runnext);
	if (old != NULL && ring_full(pp) && cas_acq_rel(&pp->runnext, &old, NULL)) {
		/* Kicking old out will spill: move it first (runq_spill), then
		 * announce gp and publish it in the now empty runnext. */
		runqput_tail(mp, pp, old, NULL, traced);
		ev.kicked = old;
		emit_put(mp, pp, &ev, wsr__runqlen(pp), traced);
		/* seq_cst: the Dekker pair with wakep, as the tail store. */
		old = xchg_seq(&pp->runnext, gp);
		WSR_ASSERT(old == NULL);
		return;
	}
	old = load_relaxed(&pp->runnext);
	/* Traced, the event must say for certain which G it kicks to the ring:
	 * a thief may take runnext between the load above and the exchange
	 * below, so claim it first (a thief then finds runnext empty until gp
	 * is in it). kicked = 0 is certain without a claim: only the owner makes
	 * runnext non-NULL. Untraced, one exchange does both (no event to keep
	 * true). */
	if (traced && old != NULL)
		old = xchg_acq_rel(&pp->runnext, NULL);
	ev.kicked = old;
	emit_put(mp, pp, &ev, wsr__runqlen(pp) + (old != NULL), traced);
	/* seq_cst for the Dekker pair with wakep (free on x86-64: XCHG). */
	kicked = xchg_seq(&pp->runnext, gp);
	if (traced) {
		WSR_DASSERT(kicked == NULL);
		kicked = old;
	}
	if (kicked != NULL)
		runqput_tail(mp, pp, kicked, NULL, traced);
}

/* policy=deque: moves the 128 oldest Gs of the full deque and gp to the
 * global queue (thieves may take some meanwhile: fewer move), announcing the
 * spill and then gp's put under sched.lock, as runqputslow does. */
static void dq_putslow(struct wsr_m *mp, struct wsr_p *pp, struct wsr_g *gp, bool traced)
{
	struct wsr_g *batch[WSR_DEQUE_SIZE / 2 + 1];
	struct putev ev = {gp, 0, NULL};
	uint32_t n = 0;

	if (policy_locked()) {
		wsr__lock(&pp->dqlock);
		n = ldq_take_locked(pp, batch, WSR_DEQUE_SIZE / 2);
		wsr__unlock(&pp->dqlock);
	}
	while (!policy_locked() && n < WSR_DEQUE_SIZE / 2) {
		enum wsr_steal_result r = wsr__deque_steal(&pp->dq, &batch[n]);

		if (r == WSR_STEAL_OK)
			n++;
		else if (r == WSR_STEAL_EMPTY)
			break;
	}
	batch[n] = gp;
	spill_batch(mp, pp, batch, n + 1, &ev, traced);
}

/* policy=deque: gp at the bottom, announced before the push makes it
 * visible (as runqput_tail). The newest G is the owner's next anyway; next
 * only marks it to inherit the time slice when popped (dq_next), so that a
 * pair handing a token back and forth shares one slice and sysmon can
 * preempt it, as Go's runnext does (TestPingPongHog). */
static void dq_put(struct wsr_m *mp, struct wsr_p *pp, struct wsr_g *gp, bool next, bool traced)
{
	struct putev ev = {gp, 0, NULL};
	uint32_t len = wsr__deque_len(&pp->dq);

	if (len >= WSR_DEQUE_SIZE) {
		dq_putslow(mp, pp, gp, traced);
		return;
	}
	pp->dq_next = next ? gp : NULL;
	emit_put(mp, pp, &ev, len + 1, traced);
	if (!dq_push(pp, &gp, 1))
		wsr__throw("runqput: deque full after its length was checked");
}

WSR_TRACED_COPY void runqput_traced(struct wsr_m *mp, struct wsr_p *pp, struct wsr_g *gp, bool next)
{
	runqput_body(mp, pp, gp, next, true);
}

void wsr__runqput(struct wsr_m *mp, struct wsr_p *pp, struct wsr_g *gp, bool next)
{
	/* The runnext cap (see the head comment); 0 - 1 (none) by default. */
	if (next && pp->runnext_runs >= wsr__sched.runnext_limit - 1u)
		next = false;
	if (policy_deque()) {
		dq_put(mp, pp, gp, next, WSR_TRACE_ENABLED(runqput));
		return;
	}
	/* Two copies (trace.h). */
	if (WSR_TRACE_ENABLED(runqput)) {
		runqput_traced(mp, pp, gp, next);
		return;
	}
	runqput_body(mp, pp, gp, next, false);
}

void wsr__runqput_batch(struct wsr_m *mp, struct wsr_p *pp, struct wsr_g *const *gs, uint32_t n)
{
	/* Only the owner writes tail; consumers can only make more room. */
	uint32_t h = load_acq(&pp->runqhead);
	uint32_t t = load_relaxed(&pp->runqtail);
	uint32_t i;

	WSR_DASSERT(pp->m == mp);
	(void)mp;
	if (n == 0)
		return;
	if (policy_deque()) {
		if (!dq_push(pp, gs, n))
			wsr__throw("runqput_batch: deque overflow");
		return;
	}
	if (t - h + n > WSR_RUNQ_SIZE)
		wsr__throw("runqput_batch: runq overflow");
	for (i = 0; i < n; i++)
		store_relaxed(&pp->runq[(t + i) % WSR_RUNQ_SIZE], gs[i]);
	/* seq_cst, as in runqput_tail: publishes the slots (pairs with
	 * consumers' load-acquire of tail) and orders them before any later
	 * read of nmspinning. */
	store_seq(&pp->runqtail, t + n);
}

/* policy=deque: the newest G (see dq_put for inherit). */
static struct wsr_g *dq_get(struct wsr_p *pp, bool *inherit)
{
	struct wsr_g *gp = policy_locked() ? ldq_pop(pp) : wsr__deque_pop(&pp->dq);

	*inherit = gp != NULL && gp == pp->dq_next;
	pp->dq_next = NULL;
	return gp;
}

/* Under policy=deque the ring and runnext stay empty, so the policy is
 * looked at only where the ring is found empty: the go policy's gets pay
 * nothing for it. */
struct wsr_g *wsr__runqget(struct wsr_p *pp, bool *inherit)
{
	struct wsr_g *next = load_relaxed(&pp->runnext);

	/* A CAS (not a plain store) because a thief may take runnext concurrently. */
	if (next != NULL && cas_acq_rel(&pp->runnext, &next, NULL)) {
		*inherit = true;
		return next;
	}
	*inherit = false;
	for (;;) {
		/* load-acquire; synchronises with other consumers' CAS-release. */
		uint32_t h = load_acq(&pp->runqhead);
		uint32_t t = load_relaxed(&pp->runqtail);
		struct wsr_g *gp;

		if (t == h)
			return policy_deque() ? dq_get(pp, inherit) : NULL;
		gp = load_relaxed(&pp->runq[h % WSR_RUNQ_SIZE]);
		/* CAS-release commits the consume. */
		if (cas_rel(&pp->runqhead, &h, h + 1)) {
			/* With a backlog, the next G has waited (or came in a
			 * batch from another CPU, or was made long ago): start
			 * loading it while this one runs. Not with a few Gs
			 * cycling (yield), whose lines are hot: there the
			 * prefetches cost 12% of a yield. A stale slot is
			 * harmless to prefetch. */
			if (t - h > WSR_RUNQ_PREFETCH_MIN)
				wsr__g_prefetch(load_relaxed(&pp->runq[(h + 1) % WSR_RUNQ_SIZE]));
			return gp;
		}
	}
}

/* Grabs half of pp's ring into batch[batchhead...]; returns how many. */
static uint32_t runqgrab(struct wsr_m *mp, struct wsr_p *pp, _Atomic(struct wsr_g *) *batch,
			 uint32_t batchhead, bool stealrunnext, bool *gotnext)
{
	*gotnext = false;
	for (;;) {
		/* load-acquire head: synchronise with other consumers. */
		uint32_t h = load_acq(&pp->runqhead);
		/* load-acquire tail: synchronise with the producer's store-release. */
		uint32_t t = load_acq(&pp->runqtail);
		uint32_t n = t - h, i;

		n = n - n / 2;
		if (n == 0) {
			struct wsr_g *next;

			if (!stealrunnext)
				return 0;
			next = load_relaxed(&pp->runnext);
			if (next == NULL)
				return 0;
			if (load_relaxed(&pp->status) == P_RUNNING) {
				/* The victim is probably about to run its runnext G (it was just
				 * readied by the running G): give it ~3 us to do so, as Go does,
				 * rather than ping-pong the G between Ps. */
				struct timespec ts = {0, wsr__sched.runnextpause_us * 1000L};

				if (ts.tv_nsec > 0)
					nanosleep(&ts, NULL);
			}
			WSR_CHAOS(mp, CHAOS_RUNNEXT);
			if (!cas_acq_rel(&pp->runnext, &next, NULL))
				continue;
			store_relaxed(&batch[batchhead % WSR_RUNQ_SIZE], next);
			*gotnext = true;
			return 1;
		}
		if (n > WSR_RUNQ_SIZE / 2) /* read an inconsistent h and t */
			continue;
		if (wsr__sched.steal_one)
			n = 1; /* steal=one */
		for (i = 0; i < n; i++)
			store_relaxed(&batch[(batchhead + i) % WSR_RUNQ_SIZE],
				      load_relaxed(&pp->runq[(h + i) % WSR_RUNQ_SIZE]));
		WSR_CHAOS(mp, CHAOS_STEAL);
		/* CAS-release commits the consume. */
		if (cas_rel(&pp->runqhead, &h, h + n))
			return n;
	}
}

/* policy=locked/trylock: the oldest G of p2 (steal=half: half of them,
 * rounded up), taken under p2's lock; the rest go on pp's own deque after
 * that lock is dropped (holding two P locks at once could deadlock two
 * thieves of each other). A held lock: steal_lock_wait, then wait
 * (locked) or give up on p2 (trylock). */
static struct wsr_g *ldq_steal(struct wsr_m *mp, struct wsr_p *pp, struct wsr_p *p2, uint32_t *np,
			       bool *gotnext)
{
	struct wsr_g *batch[WSR_DEQUE_SIZE / 2 + 1];
	uint32_t n, want = 1;

	*gotnext = false;
	*np = 0;
	/* Racy look first, as the lock-free deque's steal does. */
	if (wsr__runqempty(p2))
		return NULL;
	if (!wsr__trylock(&p2->dqlock)) {
		int64_t t0;

		if (wsr__sched.policy == WSR_POLICY_TRYLOCK) {
			WSR_TRACE(steal_lock_wait, &mp->stats, pp->id, mp->id, p2->id, 0, 0);
			return NULL;
		}
		t0 = wsr__nanotime();
		wsr__lock(&p2->dqlock);
		WSR_TRACE(steal_lock_wait, &mp->stats, pp->id, mp->id, p2->id,
			  wsr__nanotime() - t0, 1);
	}
	WSR_CHAOS(mp, CHAOS_STEAL);
	if (!wsr__sched.steal_one) {
		want = (uint32_t)(load_relaxed(&p2->dq.bottom) - load_relaxed(&p2->dq.top));
		want = want - want / 2;
	}
	n = ldq_take_locked(p2, batch, want);
	wsr__unlock(&p2->dqlock);
	if (n == 0)
		return NULL;
	if (n > 1 && !ldq_push(pp, batch + 1, n - 1))
		wsr__throw("runqsteal: own deque full while stealing");
	*np = n;
	return batch[0];
}

struct wsr_g *wsr__runqsteal(struct wsr_m *mp, struct wsr_p *pp, struct wsr_p *p2,
			     bool stealrunnext, uint32_t *np, bool *gotnext)
{
	uint32_t t, n, h;
	struct wsr_g *gp;

	if (policy_locked())
		return ldq_steal(mp, pp, p2, np, gotnext);
	if (policy_deque()) {
		/* One G, the oldest (steal=half: half, rounded up); a lost race
		 * is retried while there is any. */
		enum wsr_steal_result r;
		uint32_t want = 1;

		*gotnext = false;
		*np = 0;
		if (!wsr__sched.steal_one) {
			want = wsr__deque_len(&p2->dq);
			want = want - want / 2;
		}
		while ((r = wsr__deque_steal(&p2->dq, &gp)) == WSR_STEAL_LOST)
			cpu_relax();
		if (r != WSR_STEAL_OK)
			return NULL;
		*np = 1;
		/* The rest of a half on our own deque, which is empty (we steal). */
		while (*np < want) {
			struct wsr_g *g2;

			r = wsr__deque_steal(&p2->dq, &g2);
			if (r == WSR_STEAL_EMPTY)
				break;
			if (r == WSR_STEAL_LOST)
				continue;
			if (!wsr__deque_push(&pp->dq, g2))
				wsr__throw("runqsteal: own deque full while stealing");
			(*np)++;
		}
		return gp;
	}
	t = load_relaxed(&pp->runqtail);
	n = runqgrab(mp, p2, pp->runq, t, stealrunnext, gotnext);

	*np = n;
	if (n == 0)
		return NULL;
	n--;
	gp = load_relaxed(&pp->runq[(t + n) % WSR_RUNQ_SIZE]);
	if (n == 0)
		return gp;
	/* load-acquire; synchronises with consumers of our own ring. */
	h = load_acq(&pp->runqhead);
	if (t - h + n >= WSR_RUNQ_SIZE)
		wsr__throw("runqsteal: runq overflow");
	/* store-release publishes the stolen Gs. */
	store_rel(&pp->runqtail, t + n);
	return gp;
}

bool wsr__runqempty(struct wsr_p *pp)
{
	if (policy_deque()) {
		/* seq_cst, top then bottom, as a steal reads them. */
		int64_t t = load_seq(&pp->dq.top);

		return load_seq(&pp->dq.bottom) <= t;
	}
	/* Same retry loop as Go: runnext may move to the ring between the loads. */
	for (;;) {
		uint32_t head = load_seq(&pp->runqhead);
		uint32_t tail = load_seq(&pp->runqtail);
		struct wsr_g *next = load_seq(&pp->runnext);

		if (tail == load_seq(&pp->runqtail))
			return head == tail && next == NULL;
	}
}

bool wsr__runqstealable(struct wsr_p *pp)
{
	if (!wsr__sched.runnext_nosteal)
		return !wsr__runqempty(pp);
	/* runnext is the owner's alone (policy=tokio): the ring only. A G
	 * that moves from runnext to the ring afterwards was put by the
	 * owner, which is running and runs it (or wakes an M: runqput). */
	uint32_t head = load_seq(&pp->runqhead);

	return load_seq(&pp->runqtail) != head;
}

uint32_t wsr__runqlen(struct wsr_p *pp)
{
	if (policy_deque())
		return wsr__deque_len(&pp->dq);
	uint32_t h = load_relaxed(&pp->runqhead);
	uint32_t t = load_relaxed(&pp->runqtail);
	uint32_t n = t - h;

	return n > WSR_RUNQ_SIZE ? 0 : n;
}

struct wsr_g *wsr__runqdrain(struct wsr_p *pp, int *np)
{
	struct wsr_g *head = NULL, **tailp = &head;
	bool inherit;
	struct wsr_g *gp;
	int n = 0;

	while ((gp = wsr__runqget(pp, &inherit)) != NULL) {
		*tailp = gp;
		tailp = &gp->schedlink;
		n++;
	}
	*tailp = NULL;
	*np = n;
	return head;
}
