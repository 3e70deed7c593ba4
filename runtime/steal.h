/*
 * steal.h - the random victim order of stealWork (Go: randomOrder).
 *
 * Invariants:
 *   - For count Ps, coprimes holds every stride in 1..count coprime to count,
 *     so start + k*stride mod count (k = 0..count-1) visits each P exactly once.
 * Concurrency: an order is built once at boot and read-only afterwards; an
 *   enumerator lives on one M's stack.
 */
#ifndef WSR_RUNTIME_STEAL_H
#define WSR_RUNTIME_STEAL_H

#include <stdbool.h>
#include <stdint.h>

struct wsr_steal_order {
	uint32_t count;
	uint32_t ncoprimes;
	uint32_t *coprimes;
};

struct wsr_steal_enum {
	uint32_t i, count, pos, inc;
};

/* The order in which a thief `self` probes the Ps in one stealWork pass,
 * from the random draw r, under WSRDEBUG=victims and topology (steal.c):
 * every P once (self too, which the caller skips) into out[0..gomaxprocs);
 * returns gomaxprocs. After wsr__steal_order_init. */
uint32_t wsr__steal_victims(uint32_t self, uint32_t r, uint32_t *out);

/* Returns false on allocation failure. */
bool wsr__steal_order_build(struct wsr_steal_order *o, uint32_t count);
void wsr__steal_order_destroy(struct wsr_steal_order *o);

static inline void wsr__steal_enum_start(const struct wsr_steal_order *o, uint32_t r,
					 struct wsr_steal_enum *e)
{
	e->i = 0;
	e->count = o->count;
	e->pos = r % o->count;
	e->inc = o->coprimes[(r / o->count) % o->ncoprimes];
}

static inline bool wsr__steal_enum_done(const struct wsr_steal_enum *e)
{
	return e->i == e->count;
}

static inline void wsr__steal_enum_next(struct wsr_steal_enum *e)
{
	e->i++;
	e->pos = (e->pos + e->inc) % e->count;
}

#endif /* WSR_RUNTIME_STEAL_H */
