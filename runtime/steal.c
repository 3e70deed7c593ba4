/*
 * steal.c - stealWork: up to stealrounds (4) passes over every P in a random
 * order (random start, random stride coprime to gomaxprocs), taking half of a
 * victim's ring with one CAS; on the last pass also running other Ps' expired
 * timers and taking a victim's runnext (after a ~3 us pause) (Go: stealWork,
 * randomOrder).
 *
 * It also takes Gs from a P whose ring has not moved for STALL_NS
 * (wsr__stealstalled, called by findrunnable before it polls the network):
 * the kernel stopped the P's thread, or its G runs without a yield point.
 * An M whose queues are empty and that keeps finding new Gs in the poller
 * never spins, so stealWork alone never takes such a ring (issue 17: the 1%
 * tail of an HTTP server at 2 Ps was Gs waiting on a P whose thread the
 * kernel had stopped for ms). Go has no equivalent: its sysmon retakes
 * only Ps in system calls, and preempts running Gs after 10 ms.
 *
 * The victim order is WSRDEBUG=victims (debug.c): random (Go's, above);
 * roundrobin, a random start and then every P in index order (Tokio's
 * steal_work in multi_thread/worker.rs: "Start from a random worker", then
 * (start + i) % num); nearest, with topology=NxM (N nodes of M consecutive
 * Ps, standing in for NUMA nodes): the thief's own node first, in a random
 * order of its own, then the other Ps in the random order. A successful
 * steal from a P on another node counts steal_remote in the stats line
 * (with a topology, whatever the order). A topology whose N*M is not
 * gomaxprocs is reported and ignored (nearest is then random).
 *
 * Invariants:
 *   - Each pass probes every other P once, in every order (wsr__steal_victims).
 *   - Idle Ps are not probed (their queues are empty by pidleput's check).
 *   - Every successful steal emits one steal event whose n counts every G
 *     taken, including the one returned to run at once; every stealWork call
 *     emits one steal_scan (a stalled-ring steal emits its steal only).
 *   - A stalled ring is one whose head (the next G to run) is the same at
 *     two scans STALL_NS apart while the ring is not empty: that G waited at
 *     least that long. Scans are process-wide, one at a time (stallnext, a
 *     CAS), at most one per STALL_NS/4; runnext is never taken this way.
 * Concurrency: stealWork is executed by a spinning M that holds a P (mp->p),
 *   stealstalled by any M that holds one; the victim's queue is read
 *   lock-free (runq.c), its timers under its timerlock. The stall watch is
 *   relaxed atomics written by the scanner of the moment: a stale value
 *   only delays or hastens one steal, which is always safe.
 * Tracepoints: steal, steal_scan.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "proc.h"
#include "runq.h"
#include "steal.h"

static struct wsr_steal_order order;
/* victims=nearest: the random order within one node (topo_per_node Ps). */
static struct wsr_steal_order node_order;

/* The stalled-queue watch: per P, the ring head seen at a scan and since
 * when it has not moved while the ring was not empty (0: not watching). */
struct stallwatch {
	_Atomic uint32_t head;
	_Atomic int64_t since;
};

static struct stallwatch *watch;
static _Atomic int64_t stallnext; /* the next scan is due at this time */
/* How long the first G of a P's ring may wait before an M that found no
 * work of its own takes half of the ring. Measured (docs/performance.md,
 * HTTP under wrk at 2 Ps): 300 us took the p99 to 0.76-0.88 of the runs
 * without it, at the same requests/s; 1 ms moved the p99 less (0.89-1.02). */
#define STALL_NS (300 * 1000)

static uint32_t gcd(uint32_t a, uint32_t b)
{
	while (b != 0) {
		uint32_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

bool wsr__steal_order_build(struct wsr_steal_order *o, uint32_t count)
{
	uint32_t i;

	o->count = count;
	o->ncoprimes = 0;
	o->coprimes = malloc(sizeof(uint32_t) * count);
	if (o->coprimes == NULL)
		return false;
	for (i = 1; i <= count; i++)
		if (gcd(i, count) == 1)
			o->coprimes[o->ncoprimes++] = i;
	return true;
}

void wsr__steal_order_destroy(struct wsr_steal_order *o)
{
	free(o->coprimes);
	o->coprimes = NULL;
}

void wsr__steal_order_init(int32_t nprocs)
{
	if (wsr__sched.topo_nodes != 0 &&
	    wsr__sched.topo_nodes * wsr__sched.topo_per_node != nprocs) {
		fprintf(stderr,
			"wsr: WSRDEBUG: ignoring topology=%dx%d (%d Ps, not WSRMAXPROCS=%d)\n",
			wsr__sched.topo_nodes, wsr__sched.topo_per_node,
			wsr__sched.topo_nodes * wsr__sched.topo_per_node, nprocs);
		wsr__sched.topo_nodes = 0;
		wsr__sched.topo_per_node = 0;
	}
	if (!wsr__steal_order_build(&order, (uint32_t)nprocs) ||
	    !wsr__steal_order_build(&node_order, wsr__sched.topo_nodes != 0
							 ? (uint32_t)wsr__sched.topo_per_node
							 : 1))
		wsr__throw("steal_order_init: out of memory");
	watch = calloc((size_t)nprocs, sizeof(*watch));
	if (watch == NULL)
		wsr__throw("steal_order_init: out of memory");
	store_relaxed(&stallnext, 0);
}

void wsr__steal_order_free(void)
{
	wsr__steal_order_destroy(&order);
	wsr__steal_order_destroy(&node_order);
	free(watch);
	watch = NULL;
}

/* The node of P id under topology=NxM (0 without one). */
static uint32_t node_of(uint32_t id)
{
	return wsr__sched.topo_nodes != 0 ? id / (uint32_t)wsr__sched.topo_per_node : 0;
}

uint32_t wsr__steal_victims(uint32_t self, uint32_t r, uint32_t *out)
{
	uint32_t count = order.count, n = 0, i;
	struct wsr_steal_enum e;

	if (wsr__sched.victims == WSR_VICTIMS_ROUNDROBIN) {
		for (i = 0; i < count; i++)
			out[n++] = (r + i) % count;
		return n;
	}
	if (wsr__sched.victims == WSR_VICTIMS_NEAREST && wsr__sched.topo_nodes != 0) {
		uint32_t base = node_of(self) * (uint32_t)wsr__sched.topo_per_node;

		for (wsr__steal_enum_start(&node_order, r, &e); !wsr__steal_enum_done(&e);
		     wsr__steal_enum_next(&e))
			out[n++] = base + e.pos;
		/* Another draw for the rest, so the two orders are independent. */
		r = r * 2654435761u + 1;
	}
	for (wsr__steal_enum_start(&order, r, &e); !wsr__steal_enum_done(&e); wsr__steal_enum_next(&e))
		if (wsr__sched.victims != WSR_VICTIMS_NEAREST ||
		    wsr__sched.topo_nodes == 0 || node_of(e.pos) != node_of(self))
			out[n++] = e.pos;
	return n;
}

struct wsr_g *wsr__stealstalled(struct wsr_m *mp, int64_t now)
{
	int64_t next = load_relaxed(&stallnext);
	struct wsr_p *pp = mp->p;
	int32_t i;

	if (now < next || wsr__sched.gomaxprocs == 1)
		return NULL;
	/* One scanner at a time, a quarter of the threshold apart. */
	if (!cas_seq(&stallnext, &next, now + STALL_NS / 4))
		return NULL;
	for (i = 0; i < wsr__sched.gomaxprocs; i++) {
		struct wsr_p *p2 = &wsr__sched.allp[i];
		struct stallwatch *w = &watch[i];
		struct wsr_g *gp;
		uint32_t h, t, n;
		bool gotnext;

		if (p2 == pp || load_relaxed(&p2->status) != P_RUNNING)
			continue;
		/* load-acquire, as a thief reads them (runq.c). */
		h = load_acq(&p2->runqhead);
		t = load_acq(&p2->runqtail);
		if (t == h) {
			store_relaxed(&w->since, 0);
			continue;
		}
		if (load_relaxed(&w->since) == 0 || load_relaxed(&w->head) != h) {
			store_relaxed(&w->head, h);
			store_relaxed(&w->since, now);
			continue;
		}
		if (now - load_relaxed(&w->since) < STALL_NS)
			continue;
		/* The same G has been first in p2's ring since `since`. */
		store_relaxed(&w->since, 0);
		gp = wsr__runqsteal(mp, pp, p2, false, &n, &gotnext);
		if (gp != NULL) {
			WSR_TRACE(steal, &mp->stats, pp->id, mp->id, p2->id, n, (uint8_t)gotnext);
			wsr__stat_add(&mp->stats, WSR_ST_stolen, n);
			if (wsr__sched.topo_nodes != 0 &&
			    node_of((uint32_t)pp->id) != node_of((uint32_t)p2->id))
				wsr__stat_add(&mp->stats, WSR_ST_steal_remote, 1);
			return gp;
		}
	}
	return NULL;
}

struct wsr_g *wsr__stealwork(struct wsr_m *mp, int64_t now, bool *newwork, int64_t *polluntil)
{
	struct wsr_p *pp = mp->p;
	uint32_t probed = 0;
	int32_t round;
	/* The victims of a pass in order, for the orders other than random's
	 * (whose enumerator needs no array). */
	uint32_t victims[WSR_MAXPROCS_LIMIT];
	bool byarray = wsr__sched.victims != WSR_VICTIMS_RANDOM;

	*newwork = false;
	*polluntil = 0;
	for (round = 0; round < wsr__sched.stealrounds; round++) {
		bool last = round == wsr__sched.stealrounds - 1;
		struct wsr_steal_enum e = {0, 0, 0, 0};
		uint32_t k = 0, nv = 0;

		if (byarray)
			nv = wsr__steal_victims((uint32_t)pp->id, wsr__fastrand(mp), victims);
		else
			wsr__steal_enum_start(&order, wsr__fastrand(mp), &e);
		for (; byarray ? k < nv : !wsr__steal_enum_done(&e);
		     byarray ? (void)k++ : wsr__steal_enum_next(&e)) {
			struct wsr_p *p2 = &wsr__sched.allp[byarray ? victims[k] : e.pos];
			struct wsr_g *gp;
			uint32_t n;
			bool gotnext;

			if (p2 == pp)
				continue;
			if (last && load_relaxed(&p2->timer0when) != 0) {
				bool ran = false;
				int64_t w = wsr__checktimers(mp, p2, now, &ran);

				if (w != 0 && (*polluntil == 0 || w < *polluntil))
					*polluntil = w;
				if (ran) {
					bool inherit;

					/* Timers readied Gs into our own queue. */
					gp = wsr__runqget(pp, &inherit);
					if (gp != NULL) {
						WSR_TRACE(steal_scan, &mp->stats, pp->id, mp->id,
							  (uint32_t)round + 1, probed, 1);
						return gp;
					}
					*newwork = true;
				}
			}
			if (load_relaxed(&p2->status) == P_IDLE)
				continue;
			probed++;
			gp = wsr__runqsteal(mp, pp, p2, last && !wsr__sched.runnext_nosteal, &n,
					    &gotnext);
			if (gp != NULL) {
				WSR_TRACE(steal, &mp->stats, pp->id, mp->id, p2->id, n,
					  (uint8_t)gotnext);
				wsr__stat_add(&mp->stats, WSR_ST_stolen, n);
				if (node_of((uint32_t)p2->id) != node_of((uint32_t)pp->id))
					wsr__stat_add(&mp->stats, WSR_ST_steal_remote, 1);
				WSR_TRACE(steal_scan, &mp->stats, pp->id, mp->id,
					  (uint32_t)round + 1, probed, 1);
				return gp;
			}
		}
	}
	WSR_TRACE(steal_scan, &mp->stats, pp->id, mp->id, (uint32_t)wsr__sched.stealrounds, probed,
		  0);
	return NULL;
}
