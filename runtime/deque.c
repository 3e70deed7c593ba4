/*
 * deque.c - a Chase-Lev work-stealing deque (Chase and Lev, SPAA 2005), in
 * the C11 form of Lê, Pop, Cohen and Zappa Nardelli (PPoPP 2013), fixed
 * capacity: a full deque refuses the push and the caller spills (as the
 * ring's runqputslow does). The owner pushes and pops at the bottom (LIFO:
 * the G it just made, cache-warm); thieves take one G at the top (FIFO: the
 * oldest, in fork-join code usually the largest piece of work).
 *
 * Invariants: see deque.h.
 *
 * Concurrency, and why each ordering is what it is. Three races matter.
 *   1. Publication (push -> steal). The owner writes the slot (relaxed),
 *      then bottom with a release store; a thief's seq_cst (so acquire) load
 *      of bottom that sees it also sees the slot.
 *   2. Reuse (steal -> push). A thief reads slot[t] before its CAS on top;
 *      the owner overwrites that slot only when pushing index t + SIZE,
 *      which it does only after its acquire load of top has seen the CAS (the
 *      full check). So the thief's read happens before the overwrite. A thief
 *      whose CAS fails may read a slot being overwritten: the slots are
 *      atomic (relaxed), so that is no data race, and it drops the value.
 *   3. The last G (pop against steal). The owner lowers bottom to b, then
 *      reads top; a thief reads top, then bottom. This is a Dekker pair: if
 *      the owner's store could pass its load (x86-64's store buffer does
 *      exactly that to a plain store), both could take index b. Lê et al.
 *      put seq_cst fences between; here the owner's store is a seq_cst
 *      exchange and all four accesses are seq_cst (ThreadSanitizer models
 *      seq_cst operations, not fences: atomic.h). In the single total order,
 *      either the thief's load of bottom follows the owner's store (it sees
 *      b and cannot take index b unless top is b, and then the two CAS top
 *      from b and one wins) or it precedes it, and then so does the thief's
 *      load of top, so the owner reads a top at least as new: if that is
 *      below b, the thief's index is below b too. When the owner reads
 *      top == b (one G left) it takes the G only by winning the CAS on top,
 *      like a thief, and puts bottom back to b + 1 either way.
 *   4. Wakeups (push -> wakep, outside this file). The runtime reads
 *      nmspinning after a push to decide whether to wake a spinner, and a
 *      spinner drops nmspinning and then looks at every queue: a Dekker pair,
 *      so push's bottom store is seq_cst (XCHG), as the ring's tail store is
 *      (runq.c; tests/reliability/parking.pml -DTSO_TAIL finds the lost
 *      wakeup a release store allows).
 * Cost on x86-64: push is a plain store and an XCHG; pop is one XCHG plus, for the
 * last G only, one CMPXCHG; a steal is one CMPXCHG.
 */
#include "config.h"

#include <stddef.h>

#include "deque.h"

void wsr__deque_init(struct wsr_deque *d)
{
	store_relaxed(&d->top, 0);
	store_relaxed(&d->bottom, 0);
	for (int i = 0; i < WSR_DEQUE_SIZE; i++)
		store_relaxed(&d->slot[i], NULL);
}

bool wsr__deque_push(struct wsr_deque *d, struct wsr_g *gp)
{
	int64_t b = load_relaxed(&d->bottom);
	/* acquire: a thief's CAS that freed the slot we may reuse (race 2). */
	int64_t t = load_acq(&d->top);

	if (b - t >= WSR_DEQUE_SIZE)
		return false;
	store_relaxed(&d->slot[b % WSR_DEQUE_SIZE], gp);
	/* seq_cst: publishes the slot (race 1; release would do for that) and,
	 * in the runtime, is the submitter's half of the Dekker pair with
	 * wakep's load of nmspinning (race 4). */
	store_seq(&d->bottom, b + 1);
	return true;
}

struct wsr_g *wsr__deque_pop(struct wsr_deque *d)
{
	int64_t b = load_relaxed(&d->bottom) - 1;
	struct wsr_g *gp;
	int64_t t;

	/* seq_cst exchange, then seq_cst load: the StoreLoad order of race 3. */
	(void)xchg_seq(&d->bottom, b);
	t = load_seq(&d->top);
	if (t > b) {
		/* Empty: undo. */
		store_relaxed(&d->bottom, b + 1);
		return NULL;
	}
	gp = load_relaxed(&d->slot[b % WSR_DEQUE_SIZE]);
	if (t < b)
		return gp; /* no thief can reach index b (race 3) */
	/* The last G: thieves may be after it too; the CAS on top decides. */
	if (!cas_seq(&d->top, &t, t + 1))
		gp = NULL;
	store_relaxed(&d->bottom, b + 1);
	return gp;
}

enum wsr_steal_result wsr__deque_steal(struct wsr_deque *d, struct wsr_g **gpp)
{
	/* seq_cst loads, top before bottom: race 3; the bottom load is also the
	 * acquire of race 1. */
	int64_t t = load_seq(&d->top);
	int64_t b = load_seq(&d->bottom);
	struct wsr_g *gp;

	if (t >= b)
		return WSR_STEAL_EMPTY;
	gp = load_relaxed(&d->slot[t % WSR_DEQUE_SIZE]);
	/* seq_cst CAS: takes index t (race 3) and releases our slot read (race 2). */
	if (!cas_seq(&d->top, &t, t + 1))
		return WSR_STEAL_LOST;
	*gpp = gp;
	return WSR_STEAL_OK;
}

uint32_t wsr__deque_len(struct wsr_deque *d)
{
	int64_t b = load_relaxed(&d->bottom);
	int64_t t = load_relaxed(&d->top);
	int64_t n = b - t;

	return n < 0 ? 0 : n > WSR_DEQUE_SIZE ? WSR_DEQUE_SIZE : (uint32_t)n;
}
