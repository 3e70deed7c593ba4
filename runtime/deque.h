/*
 * deque.h - a Chase-Lev work-stealing deque of Gs, fixed capacity (the
 * `deque` policy's per-P queue; see deque.c for the memory-ordering
 * argument).
 *
 * Invariants:
 *   - top and bottom are free-running int64; 0 <= bottom - top <= WSR_DEQUE_SIZE
 *     whenever no take is in progress (a take lowers bottom first, so
 *     bottom - top may read -1 for an instant).
 *   - The Gs in the deque are slot[i % WSR_DEQUE_SIZE] for top <= i < bottom;
 *     each is taken exactly once, by the owner's pop or a thief's steal.
 * Concurrency:
 *   - One owner (the P's M) pushes and pops at the bottom; only it writes
 *     bottom and the slots.
 *   - Any thread may steal at the top; top only grows, by CAS.
 */
#ifndef WSR_RUNTIME_DEQUE_H
#define WSR_RUNTIME_DEQUE_H

#include <stdbool.h>
#include <stdint.h>

#include "atomic.h"

struct wsr_g;

#define WSR_DEQUE_SIZE 256

struct wsr_deque {
	_Atomic int64_t top; /* thieves' end: the oldest G */
	char pad0[64 - sizeof(int64_t)];
	_Atomic int64_t bottom; /* owner's end: one past the newest G */
	char pad1[64 - sizeof(int64_t)];
	_Atomic(struct wsr_g *) slot[WSR_DEQUE_SIZE];
};

/* What a steal found. */
enum wsr_steal_result {
	WSR_STEAL_EMPTY, /* nothing to take */
	WSR_STEAL_LOST,	 /* another taker won the race for the top G: try again or elsewhere */
	WSR_STEAL_OK
};

void wsr__deque_init(struct wsr_deque *d);

/* Owner only. Pushes gp at the bottom; false (and nothing changed) if full. */
bool wsr__deque_push(struct wsr_deque *d, struct wsr_g *gp);

/* Owner only. The newest G (LIFO), or NULL if empty. */
struct wsr_g *wsr__deque_pop(struct wsr_deque *d);

/* Any thread, the owner too (to move the oldest Gs elsewhere). The oldest G
 * (FIFO) in *gpp on WSR_STEAL_OK. */
enum wsr_steal_result wsr__deque_steal(struct wsr_deque *d, struct wsr_g **gpp);

/* A snapshot of the length for statistics and traces; exact only when
 * called by the owner with no thief active. */
uint32_t wsr__deque_len(struct wsr_deque *d);

#endif /* WSR_RUNTIME_DEQUE_H */
