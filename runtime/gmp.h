/*
 * gmp.h - the G, M, P and sched structures and their state machines
 * (Go: runtime2.go). The only header that defines the core structs.
 *
 * Invariants:
 *   - A runnable G is in exactly one place: a P's ring, a P's runnext, or the
 *     global queue. A waiting G is referenced only by what will wake it.
 *   - An M holds at most one P (m->p) and a P at most one M (p->m), and the two
 *     agree while the P is P_RUNNING. An idle P is on sched.pidle.
 *   - m->spinning is true iff the M is counted in sched.nmspinning.
 *   - Nothing parks (stopm) while holding a P, sched.lock, or the spinning flag.
 * Concurrency: each field says what protects it. "owner" means the M that
 *   holds the P (for P fields) or the M itself (for M fields).
 */
#ifndef WSR_RUNTIME_GMP_H
#define WSR_RUNTIME_GMP_H

#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "atomic.h"
#include "ctx.h"
#include "deque.h"
#include "lock.h"
#include "san.h"
#include "throw.h"
#include "trace.h"

#define WSR_RUNQ_SIZE	    256

/* The scheduling policies (WSRDEBUG=policy; docs/tracepoints.md, "Policies"),
 * numbered as the catalog's `policy` enumeration, which the init event carries
 * (tracepoints/catalog.toml: a new policy is added there):
 *   WSR_POLICY_GO     Go's ring, runnext, half-steals (the default)
 *   WSR_POLICY_DEQUE  a Chase-Lev deque per P: LIFO own, FIFO steal of one
 *   WSR_POLICY_LOCKED a mutex-guarded deque per P; thieves block on its lock
 *   WSR_POLICY_TRYLOCK the same; a thief that finds it held moves on
 *   WSR_POLICY_TOKIO  Go's ring with Tokio's choices (debug.c, runq.c) */
enum wsr_policy {
#define WSR_ENUM_VALUE(NAME, label, value) WSR_POLICY_##NAME = value,
	WSR_CAT_ENUM_POLICY(WSR_ENUM_VALUE)
#undef WSR_ENUM_VALUE
};

/* The policies whose local queue is pp->dq (LIFO own, FIFO steal) rather
 * than the ring and runnext. */
static inline bool wsr__policy_is_deque(uint8_t policy)
{
	/* One compare: the three are consecutive in the enum. */
	_Static_assert(WSR_POLICY_LOCKED == WSR_POLICY_DEQUE + 1 &&
			       WSR_POLICY_TRYLOCK == WSR_POLICY_DEQUE + 2,
		       "the deque policies are consecutive");
	return (uint8_t)(policy - WSR_POLICY_DEQUE) <= 2;
}

/* WSRDEBUG=victims: the order in which stealWork probes the other Ps. */
enum wsr_victims {
	WSR_VICTIMS_RANDOM,	/* random start, random coprime stride (Go) */
	WSR_VICTIMS_ROUNDROBIN, /* random start, then in index order (Tokio) */
	WSR_VICTIMS_NEAREST,	/* the thief's node of topology=NxM first, then the rest */
};

/* WSRDEBUG=spinning: the cap on spinning Ms (proc.c, trybecomespinning). */
enum wsr_spinning {
	WSR_SPIN_HALF,	   /* 2*spinning < busy Ps (Go) */
	WSR_SPIN_HALF_ALL, /* 2*spinning < all Ps (Tokio's searching workers) */
	WSR_SPIN_ALL,	   /* spinning < all Ps */
	WSR_SPIN_NONE,	   /* only the M that wakep starts spins */
};
#define WSR_STACKCACHE_MAX  32  /* stacks kept per P */
#define WSR_FIBERCACHE_MAX  64  /* TSan fibers kept per P (tsanfiber.c) */
/* Dead Gs kept per P before half go global. 256 (was 64): when one P spawns
 * and another runs and frees the Gs, each move through sched.gflock carries
 * 128 Gs, and the two Ps collide on it 4x less often. */
#define WSR_GFREE_MAX	    256
#define WSR_MAXPROCS_LIMIT  1024

/*
 * G status. Who owns the stack, whether the G is queued, which of g->m is valid:
 *   G_IDLE     just allocated or on a free list; no stack in use; not queued; m NULL.
 *   G_RUNNABLE on a run queue (ring, runnext or global); not executing; m NULL.
 *              A G that has never run has no stack yet (stack == NULL).
 *   G_RUNNING  executing user code on g->m, which holds a P; the G owns its stack.
 *   G_WAITING  parked by gopark; referenced by a wait queue, timer or poller;
 *              not on a run queue; m NULL; its context is saved.
 *   G_SYSCALL  in a blocking call between wsr_syscall_enter and _exit; owns its
 *              stack and g->m; g->m may have lost its P.
 *   G_DEAD     returned; on a free list, stack returned to a cache.
 */
enum g_status {
	G_IDLE = 0,
	G_RUNNABLE,
	G_RUNNING,
	G_WAITING,
	G_SYSCALL,
	G_DEAD,
};

/*
 * P status:
 *   P_IDLE     on sched.pidle (under sched.lock), p->m NULL.
 *   P_RUNNING  held by p->m, which runs user code or the scheduler with it.
 *   P_SYSCALL  p->m is in a blocking call; sysmon may retake the P (CAS to P_IDLE).
 */
enum p_status {
	P_IDLE = 0,
	P_RUNNING,
	P_SYSCALL,
};

struct wsr_m;
struct wsr_p;

struct wsr_g {
	/* First cache line: every field a park, a ready or a switch touches.
	 * Gs are 64-byte aligned (slabs in g.c), so a hand-off to a G that
	 * another CPU ran last, or that waited long (a filter in a long
	 * pipeline), misses on one line of its struct instead of two or three. */
	_Alignas(64) struct wsr_ctx ctx; /* saved context; written only by the switch */
	void *stack;		     /* mapping base (guard page first), NULL before the first run */
	struct wsr_m *m;	     /* M running it (G_RUNNING/G_SYSCALL); owner */
	void *param;		     /* value passed by the waker (select: the sudog) */
	int64_t goid;		     /* set by newproc before the G is queued; then immutable */
	_Atomic uint32_t status;     /* enum g_status; written by the G's owner of the moment */
	/* 1 from a park's commit until its M saved the context (park_m). */
	_Atomic uint32_t switching;
	uint8_t waitreason;	     /* enum wsr_reason while G_WAITING */
	uint8_t readysrc;	     /* SRC_TIMER/SRC_NETPOLL for the next g_run, else 0 */
	uint8_t sleeping;	     /* 1 while parked in wsr_sleep_ns; owner */
	int32_t timeridx;	     /* index in its P's timer heap, -1 if none */
	/* Second line: creation, first run, wait lists, timers. */
	struct wsr_g *schedlink;     /* wait lists: under their lock */
	size_t stack_size;	     /* usable bytes above the guard page */
	void (*fn)(void *);	     /* entry; set at creation, read at first run */
	void *arg;
	int64_t parent;		     /* goid of the creator, 0 for the main G */
	int64_t when;		     /* timer deadline (ns) while in a timer heap */
#if WSR_SAN_TSAN
	void *tsan_fiber;	     /* from its first run to its exit (tsanfiber.c) */
#endif
#if WSR_SAN_ASAN
	void *asan_fake_stack;	     /* ASan's fake stack handle across a switch */
#endif
};

/* Starts loading both cache lines of *gp, for writing: for a G that will run
 * (runqget) or be reused (gfget) soon and that another CPU, or nobody for a
 * long time, touched last, so that the misses overlap the work before it
 * instead of stalling the scheduler. A hint only; gp may be stale (a
 * prefetch never faults). */
static inline void wsr__g_prefetch(const struct wsr_g *gp)
{
	const char *b = (const char *)gp;

	/* A G is two 64-byte-aligned lines. */
	_Static_assert(sizeof(struct wsr_g) <= 128, "wsr__g_prefetch covers two lines");
	__builtin_prefetch(b, 1);
	__builtin_prefetch(b + 64, 1);
}

/* WSR_GFREE_MAX/2 dead Gs moved between a P and sched.gfree in one piece. */
struct wsr_gbatch {
	struct wsr_gbatch *next;
	struct wsr_g *g[WSR_GFREE_MAX / 2];
};

struct wsr_p {
	int32_t id;
	_Atomic uint32_t status;     /* enum p_status; CAS by sysmon for P_SYSCALL -> P_IDLE */
	struct wsr_m *m;	     /* owner, or NULL when idle; owner/sched.lock */
	_Atomic uint32_t schedtick;  /* incremented per non-inherited run; owner writes */
	_Atomic uint32_t syscalltick; /* incremented per syscall; owner writes */
	struct wsr_p *link;	     /* sched.pidle; under sched.lock */
	_Atomic int64_t curgoid;     /* goid of the running G (for sysmon); owner writes */
	_Atomic uint8_t preempt;     /* sysmon sets; the running G clears it at a yield point */
	int64_t goidcache, goidcacheend; /* batch of goids; owner */

	/* atomic: load-acquire by all consumers, CAS-release to consume. */
	_Atomic uint32_t runqhead;
	/* atomic: only the owner writes (store-release); others load-acquire. */
	_Atomic uint32_t runqtail;
	/* slots: owner stores relaxed before publishing tail; consumers load relaxed. */
	_Atomic(struct wsr_g *) runq[WSR_RUNQ_SIZE];
	/* owner sets non-NULL; anyone may CAS it to NULL (runnext steal). */
	_Atomic(struct wsr_g *) runnext;
	/* The local queue under policy=deque instead of the ring and runnext
	 * (runq.c); its own rules in deque.h. All zero is an empty deque. */
	struct wsr_deque dq;
	/* policy=deque: the G last put with next (readied by the running G);
	 * popped next, it inherits the time slice as a runnext G does. Owner
	 * only; a hint (the G may have been stolen since). */
	struct wsr_g *dq_next;
	/* policy=locked/trylock: guards dq, whose atomics are then read
	 * without it only for the racy emptiness and length checks (runq.c). */
	struct wsr_lock dqlock;
	/* Gs run in a row that inherited the time slice from runnext (the
	 * runnext cap, WSRDEBUG=runnext and policy=tokio; proc.c). Owner. */
	uint32_t runnext_runs;

	/* Dead Gs, a stack (top at gfreecnt - 1); owner. An array, so a spawn can
	 * prefetch the G it will take next without loading the one it takes. */
	struct wsr_g *gfree[WSR_GFREE_MAX];
	int32_t gfreecnt;
	void *stackcache[WSR_STACKCACHE_MAX]; /* free stacks of the default size; owner */
	int32_t nstackcache;
	size_t stackcache_size;	     /* size of the cached stacks; owner */
#if WSR_SAN_TSAN
	void *fibercache[WSR_FIBERCACHE_MAX]; /* free TSan fibers (tsanfiber.c); owner */
	int32_t nfibercache;
#endif

	/* Timers (time.c): a min-heap of sleeping Gs by g->when, under timerlock. */
	struct wsr_lock timerlock;
	struct wsr_g **timers;
	int32_t ntimers, timerscap;
	_Atomic int64_t timer0when;  /* earliest deadline, 0 if none; read without timerlock */

	_Atomic int32_t syscallm;    /* M in the call while P_SYSCALL; owner writes */
	_Atomic int64_t syscallwhen; /* when that call started; owner writes */

	/* sysmon's view (sysmon.c); only sysmon touches these. */
	uint32_t sm_schedtick, sm_syscalltick;
	int64_t sm_schedwhen, sm_syscallwhen;
} __attribute__((aligned(64)));

struct wsr_m {
	int32_t id;		     /* immutable */
	struct wsr_ctx g0ctx;	     /* the scheduler's context on the thread's own stack */
	struct wsr_g *curg;	     /* G running on this M; owner */
	struct wsr_p *p;	     /* P held; owner */
	struct wsr_p *nextp;	     /* P handed over by startm before the wakeup; under sched.lock */
	bool spinning;		     /* counted in sched.nmspinning; owner (startm before wakeup) */
	bool blocked;		     /* parked on its note; under sched.lock */
	/* A put by this M spilled into a global queue longer than the backlog
	 * bound (runq.c); wsr_go clears it before and reads it after newproc. */
	bool backlog;
	struct wsr_note park;	     /* stopm sleeps here */
	struct wsr_m *schedlink;     /* sched.midle; under sched.lock */
	struct wsr_m *alllink;	     /* sched.allm; under sched.lock */
	uint64_t rand;		     /* per-M PRNG state; owner */
	/* mcall: what g0 must do for the G that just switched to it; owner. */
	void (*mcall_fn)(struct wsr_m *mp, struct wsr_g *gp, void *arg);
	void *mcall_arg;
	struct wsr_g *mcall_g;
	pthread_t thread;
	bool is_m0;		     /* the thread that called wsr_main */
	bool joined;		     /* wsr__join_ms took it; under sched.lock */
	bool started;		     /* thread is set (newm_start); under sched.lock */
	_Atomic int64_t syscallwhen; /* nanotime at wsr_syscall_enter; 0 when not in a call */
	struct wsr_p *oldp;	     /* P held before the syscall; owner */
	void *g0_stack_lo;	     /* bounds of the thread's stack (sanitizers) */
	size_t g0_stack_size;
#if WSR_SAN_TSAN
	void *tsan_fiber;	     /* the thread's own fiber */
#endif
#if WSR_SAN_ASAN
	void *asan_fake_stack;
#endif
	void *altstack;		     /* sigaltstack for the overflow report */
	struct wsr_stats stats;	     /* owner writes (trace.h) */
};

/*
 * Laid out by who writes what (each group starts a cache line): the fields
 * every spawn, preemption check and schedule round reads but nobody writes
 * after boot come first, so the lock words and counters that the Ps write
 * all the time never evict them from another CPU's cache (at `dd972b4`,
 * `exiting` shared a line with goidgen and gflock, and 70% of
 * wsr__preempt_check's samples in skewed at 2 Ps were that miss).
 */
struct wsr_sched {
	/* Read-mostly: written at boot, or once at the end (exiting, mainresult). */
	_Alignas(64) int32_t gomaxprocs; /* immutable after boot */
	struct wsr_p *allp;	     /* gomaxprocs Ps; immutable array after boot */
	_Atomic int32_t exiting;     /* set when the main G returns */
	_Atomic int32_t mainstarted;
	int mainresult;
	int64_t starttime;	     /* nanotime at boot */

	/* Knobs (debug.c), immutable after boot. */
	int32_t globalcheck;	     /* check the global queue every N ticks (61) */
	int32_t stealrounds;	     /* stealWork rounds (4) */
	int32_t runnextpause_us;     /* pause before stealing runnext (3) */
	uint8_t policy;		     /* enum wsr_policy: WSRDEBUG=policy (go) */
	/* Zero is Go's behaviour for each of these (a sched that debug.c
	 * never saw, as in the unit tests, schedules as Go does). */
	uint8_t steal_one;	     /* steal=one (1) or half (0); the policy's default */
	uint8_t runnext_nosteal;     /* thieves never take runnext (tokio: 1) */
	uint8_t victims;	     /* enum wsr_victims: WSRDEBUG=victims (random) */
	uint8_t spinning;	     /* enum wsr_spinning: WSRDEBUG=spinning (half) */
	/* A put with next goes to runnext only while fewer than
	 * runnext_limit - 1 Gs in a row ran from it (unsigned: 0 is no limit,
	 * Go's; 1 is runnext=0; 4 is tokio's 3). */
	uint32_t runnext_limit;
	int32_t topo_nodes, topo_per_node; /* WSRDEBUG=topology=NxM; 0x0: none */
	/* Gs the global queue may hold per P before wsr_go preempts its caller
	 * behind them (runq.c, g.c): a spawn loop faster than the Ps drain it
	 * otherwise queues without bound, 128 bytes per G. 0: no bound (Go). */
	int32_t backlog_per_p;	     /* WSRDEBUG=backlog (4096) */
	size_t stacksize;	     /* default usable stack bytes */

	/* Read by wakep on every spawn; written on spin and idle transitions. */
	_Alignas(64) _Atomic int32_t npidle; /* written under sched.lock, read anywhere (seq_cst) */
	_Atomic int32_t nmspinning;  /* see the parking essay in proc.c */
	_Atomic int32_t needspinning;

	_Alignas(64) struct wsr_lock lock; /* "sched.lock": guards the fields marked below */

	struct wsr_m *midle;	     /* idle Ms; sched.lock */
	_Atomic int32_t nmidle;	     /* written under sched.lock, read racily */
	_Atomic int32_t mcount;	     /* live Ms; written under sched.lock, read racily */
	int32_t mexited;	     /* Ms that left at teardown (no event); under sched.lock */
	int32_t mnext;		     /* next M id; sched.lock */
	int32_t nmsys;		     /* Ms that are not Ms for checkdead (none today) */
	struct wsr_m *allm;	     /* sched.lock */

	struct wsr_p *pidle;	     /* idle Ps; sched.lock */

	struct wsr_g **gq;	     /* global queue: a ring of gqcap Gs; sched.lock */
	uint32_t gqcap, gqhead, gqtail; /* see globrunq.c; sched.lock */
	_Atomic int32_t runqsize;    /* gqtail - gqhead; written under sched.lock, read racily */

	_Alignas(64) struct wsr_lock gflock;
	struct wsr_gbatch *gfree;    /* global dead Gs: full batches (g.c); gflock */
	struct wsr_gbatch *gbspare;  /* empty batches for the next spill; gflock */
	int32_t ngfree;

	/* Counters every P writes. */
	_Alignas(64) _Atomic int64_t goidgen;
	_Atomic int32_t nsyscall;    /* Gs in wsr_syscall_enter..exit */
	_Atomic int32_t nhandoff;    /* Ps sysmon is retaking: counted as running Ms by checkdead */
};

extern struct wsr_sched wsr__sched;

/* The M running this thread (NULL outside the runtime). Never inlined, and
 * never cached across a park: a G may resume on another M. */
struct wsr_m *wsr__getm(void);
void wsr__setm(struct wsr_m *mp);

/* The running G, or NULL on g0 / outside the runtime. */
static inline struct wsr_g *wsr__getg(void)
{
	struct wsr_m *mp = wsr__getm();

	return mp != NULL ? mp->curg : NULL;
}

int64_t wsr__nanotime(void);
uint32_t wsr__fastrand(struct wsr_m *mp);

static inline int32_t p_id(const struct wsr_p *pp)
{
	return pp != NULL ? pp->id : -1;
}

static inline int32_t m_id(const struct wsr_m *mp)
{
	return mp != NULL ? mp->id : -1;
}

static inline int64_t g_id(const struct wsr_g *gp)
{
	return gp != NULL ? gp->goid : 0;
}

/* Stats block of an M, or sysmon's when mp is NULL. */
struct wsr_stats *wsr__stats_of(struct wsr_m *mp);

#endif /* WSR_RUNTIME_GMP_H */
