/*
 * runq.h - per-P local run queue: the 256-slot ring plus runnext (Go: runqput,
 * runqget, runqgrab, runqsteal, runqputslow) and the global queue (globrunq.c).
 *
 * Invariants and concurrency: see runq.c and globrunq.c.
 */
#ifndef WSR_RUNTIME_RUNQ_H
#define WSR_RUNTIME_RUNQ_H

#include <stdbool.h>
#include <stdint.h>

#include "gmp.h"

/* Makes gp runnable on pp (owner only); next: into runnext, kicking its old
 * occupant to the tail. Spills half the ring to the global queue when full. */
void wsr__runqput(struct wsr_m *mp, struct wsr_p *pp, struct wsr_g *gp, bool next);
/* Puts gs[0..n) at the tail like runqput(next = false), with one publish of
 * the tail, and without runqput events: for Gs that arrive in a batch whose
 * own event (globrunq_get) already counts them. Owner only; the ring must
 * have room for all n (it throws otherwise): callers take a batch only when
 * their ring is empty, and a batch is at most half a ring. */
void wsr__runqput_batch(struct wsr_m *mp, struct wsr_p *pp, struct wsr_g *const *gs, uint32_t n);
/* Takes the next G (owner only): runnext first (*inherit = true), then the ring. */
struct wsr_g *wsr__runqget(struct wsr_p *pp, bool *inherit);
/* Steals half of p2's ring (or its runnext on the last round) into pp's ring
 * and returns one G to run; *n counts every G taken. pp's owner only. */
struct wsr_g *wsr__runqsteal(struct wsr_m *mp, struct wsr_p *pp, struct wsr_p *p2,
			     bool stealrunnext, uint32_t *n, bool *gotnext);
bool wsr__runqempty(struct wsr_p *pp);
/* Whether a thief could take a G from pp now: !runqempty, less runnext when
 * thieves never take it (runnext_nosteal, policy=tokio). Racy snapshot. */
bool wsr__runqstealable(struct wsr_p *pp);
/* Ring length, runnext excluded (racy snapshot, as schedtrace wants). */
uint32_t wsr__runqlen(struct wsr_p *pp);
/* Moves every G off pp's queues (owner only, P being torn down). */
struct wsr_g *wsr__runqdrain(struct wsr_p *pp, int *n);

/* Global queue; caller holds sched.lock. */
void wsr__globrunqput(struct wsr_g *gp);
void wsr__globrunqputbatch(struct wsr_g *const *gs, uint32_t n);
/* Takes min(len, len/gomaxprocs + 1, max if > 0, 128) Gs: returns one, queues
 * the rest on pp. Emits globrunq_get. */
struct wsr_g *wsr__globrunqget(struct wsr_m *mp, struct wsr_p *pp, int32_t max);
/* Frees the global queue's ring (teardown, single-threaded). */
void wsr__globrunq_free(void);

#endif /* WSR_RUNTIME_RUNQ_H */
