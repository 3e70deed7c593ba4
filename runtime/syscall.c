/*
 * syscall.c - blocking calls with P hand-off (Go: entersyscall, exitsyscall,
 * handoffp, and retake's syscall half, which sysmon calls).
 *
 * Invariants:
 *   - Between wsr_syscall_enter and _exit the G is G_SYSCALL, keeps its M,
 *     and its old P is P_SYSCALL with p->m == NULL, until sysmon retakes it
 *     (CAS P_SYSCALL -> P_IDLE) or the G gets it back (CAS -> P_RUNNING);
 *     exactly one of the two CASes wins.
 *   - On exit the G runs on its old P if it can, else on an idle P, else it
 *     is queued globally and its M parks (nothing parks holding a P).
 *   - errno survives wsr_syscall_exit: the call's errno is read on the M
 *     that made the call and written back on whatever M the G resumes on,
 *     so `r = wsr_blocking(fn, arg); if (r == NULL) use(errno);` works.
 * Concurrency: p->status is the arbiter (seq_cst CAS); m->syscallwhen is
 *   written by the M and read by sysmon.
 * Tracepoints: syscall_enter, syscall_exit, retake, handoff; on the slow
 *   exit path g_stop(syscall), then globrunq_put, or p_busy and runqput when
 *   a P went idle meanwhile.
 */
#include "config.h"

#include <errno.h>

#include <wsr.h>

#include "proc.h"
#include "runq.h"

/* errno from a G (proc.h). The empty asm keeps the optimiser from reusing an
 * errno address computed before a switch; noinline keeps callers from
 * caching it across the call. */
__attribute__((noinline)) int wsr__errno_get(void)
{
	__asm__ volatile("" ::: "memory");
	return errno;
}

__attribute__((noinline)) void wsr__errno_set(int e)
{
	__asm__ volatile("" ::: "memory");
	errno = e;
}

void wsr_syscall_enter(void)
{
	struct wsr_m *mp = wsr__getm();
	struct wsr_g *gp;
	struct wsr_p *pp;

	if (mp == NULL || mp->curg == NULL)
		wsr__throw("wsr_syscall_enter: called outside a G");
	gp = mp->curg;
	pp = mp->p;
	if (load_relaxed(&gp->status) != G_RUNNING || pp == NULL)
		wsr__throw("wsr_syscall_enter: nested or unbalanced call");
	WSR_TRACE(syscall_enter, &mp->stats, pp->id, mp->id, gp->goid);
	store_relaxed(&pp->syscalltick, load_relaxed(&pp->syscalltick) + 1);
	xadd_seq(&wsr__sched.nsyscall, 1);
	store_relaxed(&gp->status, G_SYSCALL);
	store_seq(&mp->syscallwhen, wsr__nanotime());
	store_relaxed(&pp->syscallm, mp->id);
	store_relaxed(&pp->syscallwhen, load_relaxed(&mp->syscallwhen));
	mp->oldp = pp;
	pp->m = NULL;
	mp->p = NULL;
	/* seq_cst: sysmon's CAS on status must see p->m == NULL. */
	store_seq(&pp->status, P_SYSCALL);
}

/* On g0, with no P: queue the G globally; the scheduler loop then parks.
 * The idle-P check and the global put are one sched.lock section (as in Go's
 * exitsyscall0): a P that went idle since wsr_syscall_exit looked (sysmon's
 * handoffp of our own P, say) is taken here and runs the G next, rather
 * than idling while the G waits on the global queue and every M parks. */
static void exitsyscall0(struct wsr_m *mp, struct wsr_g *gp, void *arg)
{
	uint32_t glen = 0;
	struct wsr_p *pp;

	(void)arg;
	WSR_TRACE(g_stop, &mp->stats, -1, mp->id, gp->goid, WR_SYSCALL);
	mp->curg = NULL;
	gp->m = NULL;
	store_relaxed(&gp->status, G_RUNNABLE);
	wsr__lock(&wsr__sched.lock);
	pp = wsr__pidleget(mp);
	if (pp == NULL) {
		/* The event under the lock: after it, another M may run gp. */
		wsr__globrunqput(gp);
		glen = (uint32_t)load_relaxed(&wsr__sched.runqsize);
		WSR_TRACE(globrunq_put, &mp->stats, -1, mp->id, gp->goid, glen);
		wsr__unlock(&wsr__sched.lock);
		return;
	}
	wsr__unlock(&wsr__sched.lock);
	wsr__acquirep(mp, pp);
	wsr__runqput(mp, pp, gp, true);
}

void wsr_syscall_exit(void)
{
	struct wsr_m *mp = wsr__getm();
	struct wsr_g *gp;
	struct wsr_p *oldp, *pp;
	uint32_t expect = P_SYSCALL;
	int e = wsr__errno_get(); /* the call's errno, on the M that made the call */

	if (mp == NULL || mp->curg == NULL || load_relaxed(&mp->curg->status) != G_SYSCALL)
		wsr__throw("wsr_syscall_exit: not in a call");
	gp = mp->curg;
	oldp = mp->oldp;
	mp->oldp = NULL;
	store_seq(&mp->syscallwhen, 0);
	xadd_seq(&wsr__sched.nsyscall, -1);
	/* Fast path: our P is still ours. */
	if (oldp != NULL && cas_seq(&oldp->status, &expect, P_RUNNING)) {
		mp->p = oldp;
		oldp->m = mp;
		store_relaxed(&gp->status, G_RUNNING);
		WSR_TRACE(syscall_exit, &mp->stats, oldp->id, mp->id, gp->goid, 1);
		wsr__preempt_check();
		wsr__errno_set(e);
		return;
	}
	/* Any idle P will do. */
	wsr__lock(&wsr__sched.lock);
	pp = wsr__pidleget(mp);
	wsr__unlock(&wsr__sched.lock);
	if (pp != NULL) {
		wsr__acquirep(mp, pp);
		store_relaxed(&gp->status, G_RUNNING);
		WSR_TRACE(syscall_exit, &mp->stats, pp->id, mp->id, gp->goid, 0);
		wsr__preempt_check();
		wsr__errno_set(e);
		return;
	}
	WSR_TRACE(syscall_exit, &mp->stats, -1, mp->id, gp->goid, 0);
	store_relaxed(&gp->status, G_RUNNING);
	wsr__mcall(exitsyscall0, NULL);
	/* Resumed, maybe on another M. */
	wsr__preempt_check();
	wsr__errno_set(e);
}

void *wsr_blocking(void *(*fn)(void *), void *arg)
{
	void *r;

	wsr_syscall_enter();
	r = fn(arg);
	wsr_syscall_exit();
	return r;
}

/* Sysmon: pp (no longer owned) needs an M or goes idle (Go: handoffp). The
 * handoff event is emitted where pp changes hands, under sched.lock (startm,
 * or here before pidleput): after the lock, the M given pp, or any M taking
 * it off the idle list, runs it, and its events must not precede the one
 * that says where pp went (a late handoff would take pp from its next
 * holder in the analyzer's P/M state). */
static void handoffp(struct wsr_p *pp, const struct wsr_handoff *ho)
{
	if (!wsr__runqempty(pp) || load_relaxed(&wsr__sched.runqsize) != 0 ||
	    load_relaxed(&pp->timer0when) != 0) {
		wsr__startm(NULL, pp, ho);
		return;
	}
	/* No local work: help only if nobody spins and no P is idle. */
	if (load_seq(&wsr__sched.nmspinning) + load_seq(&wsr__sched.npidle) == 0 &&
	    wsr__startm_spinning(NULL, pp, ho) != -2)
		return;
	wsr__lock(&wsr__sched.lock);
	/* Again under the lock (Go's handoffp does the same): an M leaving its
	 * call may have queued its G globally since the test above. */
	if (load_relaxed(&wsr__sched.runqsize) != 0) {
		wsr__unlock(&wsr__sched.lock);
		wsr__startm(NULL, pp, ho);
		return;
	}
	wsr__trace_handoff(ho, pp, -1);
	wsr__pidleput(NULL, pp);
	wsr__unlock(&wsr__sched.lock);
}

/* Called by sysmon for a P it sees in P_SYSCALL for long enough. */
bool wsr__retake_syscall(struct wsr_p *pp, int64_t held_ns)
{
	uint32_t expect = P_SYSCALL;
	struct wsr_handoff ho = {
		.holder = load_relaxed(&pp->syscallm),
		.goid = load_relaxed(&pp->curgoid),
	};

	/* Counted as one more running M before the CAS, as Go's retake does
	 * (incidlelocked(-1)): once the CAS wins, the M in the call can come
	 * back, find no P, queue its G globally and park, the last M to do so;
	 * its checkdead must not take the P in sysmon's hands for a lost
	 * wakeup. seq_cst: that M's failed CAS on status follows ours. */
	xadd_seq(&wsr__sched.nhandoff, 1);
	if (!cas_seq(&pp->status, &expect, P_IDLE)) {
		xadd_seq(&wsr__sched.nhandoff, -1);
		return false;
	}
	/* Before handoffp makes pp anyone's: nothing else can name it. */
	WSR_TRACE(retake, &wsr__sysmon_stats, pp->id, ho.holder, ho.goid, held_ns);
	handoffp(pp, &ho);
	/* And the check that count may have put off (Go's incidlelocked(1)). */
	wsr__lock(&wsr__sched.lock);
	xadd_seq(&wsr__sched.nhandoff, -1);
	wsr__checkdead();
	wsr__unlock(&wsr__sched.lock);
	return true;
}
