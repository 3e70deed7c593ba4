/*
 * steal.c - stealWork: up to stealrounds (4) passes over every P in a random
 * order (random start, random stride coprime to gomaxprocs), taking half of a
 * victim's ring with one CAS; on the last pass also running other Ps' expired
 * timers and taking a victim's runnext (after a ~3 us pause) (Go: stealWork,
 * randomOrder).
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
 *     taken, including the one returned to run at once; every call emits one
 *     steal_scan.
 * Concurrency: executed by a spinning M that holds a P (mp->p); the victim's
 *   queue is read lock-free (runq.c), its timers under its timerlock.
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
}

void wsr__steal_order_free(void)
{
	wsr__steal_order_destroy(&order);
	wsr__steal_order_destroy(&node_order);
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
