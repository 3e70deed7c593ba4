/*
 * steal.c - stealWork: up to stealrounds (4) passes over every P in a random
 * order (random start, random stride coprime to gomaxprocs), taking half of a
 * victim's ring with one CAS; on the last pass also running other Ps' expired
 * timers and taking a victim's runnext (after a ~3 us pause) (Go: stealWork,
 * randomOrder).
 *
 * Invariants:
 *   - Idle Ps are not probed (their queues are empty by pidleput's check).
 *   - Every successful steal emits one steal event whose n counts every G
 *     taken, including the one returned to run at once; every call emits one
 *     steal_scan.
 * Concurrency: executed by a spinning M that holds a P (mp->p); the victim's
 *   queue is read lock-free (runq.c), its timers under its timerlock.
 * Tracepoints: steal, steal_scan.
 */
#include "config.h"

#include <stdlib.h>

#include "proc.h"
#include "runq.h"
#include "steal.h"

static struct wsr_steal_order order;

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
	if (!wsr__steal_order_build(&order, (uint32_t)nprocs))
		wsr__throw("steal_order_init: out of memory");
}

void wsr__steal_order_free(void)
{
	wsr__steal_order_destroy(&order);
}

struct wsr_g *wsr__stealwork(struct wsr_m *mp, int64_t now, bool *newwork, int64_t *polluntil)
{
	struct wsr_p *pp = mp->p;
	uint32_t probed = 0;
	int32_t round;

	*newwork = false;
	*polluntil = 0;
	for (round = 0; round < wsr__sched.stealrounds; round++) {
		bool last = round == wsr__sched.stealrounds - 1;
		struct wsr_steal_enum e;

		for (wsr__steal_enum_start(&order, wsr__fastrand(mp), &e);
		     !wsr__steal_enum_done(&e); wsr__steal_enum_next(&e)) {
			struct wsr_p *p2 = &wsr__sched.allp[e.pos];
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
			gp = wsr__runqsteal(mp, pp, p2, last, &n, &gotnext);
			if (gp != NULL) {
				WSR_TRACE(steal, &mp->stats, pp->id, mp->id, p2->id, n,
					  (uint8_t)gotnext);
				wsr__stat_add(&mp->stats, WSR_ST_stolen, n);
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
