/*
 * proc.h - internal entry points shared by the runtime's files: scheduling,
 * parking, Ms, Ps, Gs, stacks, timers, netpoll and sysmon.
 *
 * Invariants and concurrency: each prototype states its contract, in Go's
 * words ("Caller holds sched.lock", "Executed only by the owner P", "May run
 * without a P"); the implementations assert them.
 */
#ifndef WSR_RUNTIME_PROC_H
#define WSR_RUNTIME_PROC_H

#include <stdbool.h>
#include <stdint.h>

#include "gmp.h"

/* proc.c: scheduling and parking. */

/* Runs the scheduler loop on the current M's g0 until the runtime exits. */
void wsr__schedule(struct wsr_m *mp);
/* Switches from the running G to g0, which runs fn(mp, gp, arg); the G
 * resumes (maybe on another M) when someone readies and schedules it. */
void wsr__mcall(void (*fn)(struct wsr_m *mp, struct wsr_g *gp, void *arg), void *arg);
void wsr__gopreempt(void);
/* Parks the running G (Go: gopark). The G is marked waiting, then
 * commit(gp, arg) runs on the G itself and publishes it to its waker (usually
 * by unlocking the wait queue it joined); if commit returns false the park is
 * called off and the G runs again soon. Unlike Go, the commit does not run on
 * g0: ThreadSanitizer sees each G as its own thread, so a lock must be
 * released by the G that took it. A waker can therefore ready the G before
 * its context is saved; execute() waits for that (g->switching). */
void wsr__gopark(bool (*commit)(struct wsr_g *gp, void *arg), void *arg, uint8_t reason);
/* Makes a G_WAITING gp runnable: into the caller's P runnext (next) or tail,
 * or the global queue when the caller holds no P. Any context. */
void wsr__goready(struct wsr_g *gp, bool next);
/* Like goready for a batch arriving from the poller or timers with no P. */
void wsr__injectglist(struct wsr_m *mp, struct wsr_g *list);
/* Starts a spinning M if a P is idle and nobody spins. Any context. */
void wsr__wakep(struct wsr_m *mp);
/* The G yields if sysmon asked it to (running G only). */
void wsr__preempt_check(void);
/* Caller holds sched.lock: reports a deadlock (and exits 2) if nothing can
 * ever run again. */
void wsr__checkdead(void);

/* m.c: threads. */
/* Starts the thread of mp, allocated (nextp, spinning set) under sched.lock. */
void wsr__newm_start(struct wsr_m *mp);
struct wsr_m *wsr__mget(void);		  /* caller holds sched.lock */
void wsr__mput(struct wsr_m *mp);	  /* caller holds sched.lock */
struct wsr_m *wsr__allocm(void);	  /* caller holds sched.lock */
void wsr__minit(struct wsr_m *mp);	  /* on the new thread: TLS, signal stack, fiber */
void wsr__mexit_cleanup(struct wsr_m *mp); /* on the thread: undo minit */
void wsr__join_ms(void);		  /* wsr_main teardown */
bool wsr__ms_leaked(void);		  /* an M did not stop at teardown */
void wsr__freems(void);
/* A P that sysmon took from a blocking call (syscall.c's handoffp): its
 * handoff event is emitted under sched.lock where the P changes hands (before
 * the M given it is woken, or before it goes on the idle list), so that no
 * event of the P's next holder precedes it in the trace. */
struct wsr_handoff {
	int32_t holder; /* the M that was in the call */
	int64_t goid;	/* its G */
};
void wsr__trace_handoff(const struct wsr_handoff *ho, struct wsr_p *pp, int32_t to);
/* Gives pp (an idle P when NULL) to an idle or new M; -1 if none could be had.
 * ho: a hand-off (pp non-NULL), or NULL. */
int32_t wsr__startm(struct wsr_m *caller, struct wsr_p *pp, const struct wsr_handoff *ho);
/* Same, spinning, only if no M spins (nmspinning 0 -> 1 under sched.lock);
 * -2 (pp untouched, nothing emitted) when an M already spins. */
int32_t wsr__startm_spinning(struct wsr_m *caller, struct wsr_p *pp, const struct wsr_handoff *ho);
void wsr__goexit(void) __attribute__((noreturn));

/* p.c: Ps and the idle list. */
void wsr__procinit(int32_t nprocs);
void wsr__procfree(void);
void wsr__acquirep(struct wsr_m *mp, struct wsr_p *pp);
struct wsr_p *wsr__releasep(struct wsr_m *mp);
void wsr__pidleput(struct wsr_m *mp, struct wsr_p *pp); /* caller holds sched.lock */
struct wsr_p *wsr__pidleget(struct wsr_m *mp);		/* caller holds sched.lock */

/* g.c: G lifecycle. */
struct wsr_g *wsr__newproc(struct wsr_m *mp, void (*fn)(void *), void *arg, int64_t parent);
void wsr__gfput(struct wsr_p *pp, struct wsr_g *gp); /* owner */
void wsr__gfree_all(void);			      /* teardown */
void wsr__gentry(void *gp);			      /* first code run on a G's stack */
/* Calls fn for every G ever allocated; caller holds sched.gflock. */
void wsr__forallg(void (*fn)(struct wsr_g *gp, void *arg), void *arg);
const char *wsr__waitreason_string(uint8_t r);

/* syscall.c: errno from a G. A G may resume on another thread after any
 * park or preemption point, and __errno_location() is declared const, so
 * the compiler may compute errno's thread-local address once per function
 * and reuse it on the wrong thread (DESIGN.md). These never-inlined
 * accessors look it up afresh at every use. */
int wsr__errno_get(void);
void wsr__errno_set(int e);

/* stack.c: G stacks. */
bool wsr__stackalloc(struct wsr_p *pp, struct wsr_g *gp);
void wsr__stackfree(struct wsr_p *pp, struct wsr_g *gp);
void wsr__stackcache_flush(struct wsr_p *pp);
/* tsanfiber.c: a G's TSan fiber, from its P's cache (NULL without TSan). */
void *wsr__fiber_get(struct wsr_p *pp);
void wsr__fiber_put(struct wsr_p *pp, void *fiber);
void wsr__fibercache_flush(struct wsr_p *pp);
void wsr__stack_overflow_init(struct wsr_m *mp);
void wsr__stack_overflow_fini(struct wsr_m *mp);
/* The address a fresh G's stack starts from (its top, below a small header). */
void *wsr__stack_top(struct wsr_g *gp);
void wsr__stackpool_free(void);
void wsr__stack_boot(void); /* wsr_main start */
/* For tests: stacks carved from chunks since boot (a chunk left for one of
 * another size counts whole), and the pool's capacity (set before wsr_main). */
size_t wsr__stacks_carved(void);
extern size_t wsr__stackpool_max;
size_t wsr__page_size(void);

/* steal.c: stealWork. */
struct wsr_g *wsr__stealwork(struct wsr_m *mp, int64_t now, bool *newwork, int64_t *polluntil);
/* Steals from a P whose queue has not moved for a while (steal.c); NULL
 * mostly at once (one scan every quarter of that while, process-wide). */
struct wsr_g *wsr__stealstalled(struct wsr_m *mp, int64_t now);
void wsr__steal_order_init(int32_t nprocs);
void wsr__steal_order_free(void);

/* time.c: per-P timer heaps. */
/* Runs pp's expired timers (owner); returns the next deadline or 0. now == 0:
 * read the clock only if pp has a timer (the cheap check of every schedule). */
int64_t wsr__checktimers(struct wsr_m *mp, struct wsr_p *pp, int64_t now, bool *ran);
/* Earliest deadline over every P, 0 if none (may run without a P). */
int64_t wsr__timers_next(void);
bool wsr__timers_any(void);
void wsr__timers_free(struct wsr_p *pp);

/* netpoll.c: epoll. */
bool wsr__netpoll_inited(void);
int32_t wsr__netpoll_waiters(void);
/* delay < 0 blocks, 0 polls, > 0 waits that many ns; returns ready Gs. */
struct wsr_g *wsr__netpoll(struct wsr_m *mp, int64_t delay, int32_t *n);
void wsr__netpoll_break(void);
void wsr__netpoll_close(void);
/* sysmon: registers again the fds of parks that trusted an old registration
 * (netpoll.c's head comment); wakes the Gs of closed fds. */
void wsr__netpoll_sweep(void);
extern _Atomic int64_t wsr__lastpoll; /* 0 while an M blocks in netpoll */
extern _Atomic int64_t wsr__polluntil;

/* sysmon.c and debug.c. */
bool wsr__retake_syscall(struct wsr_p *pp, int64_t held_ns);
/* What sysmon does about pp at time now (Go: the body of retake's loop);
 * updates pp's sm_* fields. Executed only by sysmon (or a test, on a P no
 * M uses). */
enum sm_action {
	SM_NONE,    /* leave the P alone */
	SM_PREEMPT, /* ask the running G to yield (it used up its slice) */
	SM_RETAKE,  /* take the P from the M in its call and hand it off */
};
enum sm_action wsr__sysmon_check(struct wsr_p *pp, int64_t now);
void wsr__sysmon_start(void);
void wsr__sysmon_stop(void);
void wsr__debug_init(void);
/* The knobs in force as a WSRDEBUG value (policy=...,steal=...,...; debug.c). */
void wsr__debug_knobs(char *buf, size_t size);
void wsr__schedtrace(bool detailed);
void wsr__stats_print(void);
extern struct wsr_stats wsr__sysmon_stats;
extern int wsr__debug_stats, wsr__debug_scheddetail;
extern int64_t wsr__debug_schedtrace_ms;
extern uint64_t wsr__max_spinning;
/* Every M's and sysmon's stats summed; last_stats holds the sum of the last
 * wsr_main run, taken at teardown (tests read it after wsr_main returns). */
void wsr__stats_sum(uint64_t out[WSR_ST_COUNT]);
extern uint64_t wsr__last_stats[WSR_ST_COUNT];
bool wsr__chaos_seed_set(void);
uint64_t wsr__chaos_seed_for(int32_t mid);

#endif /* WSR_RUNTIME_PROC_H */
