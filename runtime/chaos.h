/*
 * chaos.h - WSRDEBUG=chaos=SEED: random sched_yield()s and short sleeps at the
 * racy windows of the scheduler, to shake out lost wakeups in stress tests.
 *
 * Invariants:
 *   - Off (the default), WSR_CHAOS() costs one predictable branch on a word
 *     written once at boot.
 *   - On, the decisions come from the M's own PRNG seeded from SEED and the
 *     M id, so a seed reproduces the same perturbation pattern per M.
 * Concurrency: wsr__chaos_enabled is written before any M starts; the PRNG
 *   is the calling M's (owner only).
 */
#ifndef WSR_RUNTIME_CHAOS_H
#define WSR_RUNTIME_CHAOS_H

#include <stdint.h>

enum chaos_site {
	CHAOS_RUNNEXT,	   /* around runnext put/steal */
	CHAOS_STEAL,	   /* between reading a victim's ring and the CAS on its head */
	CHAOS_SPIN_DROP,   /* between dropping nmspinning and re-checking the queues */
	CHAOS_PARK,	   /* just before an M sleeps on its note */
	CHAOS_UNPARK,	   /* between picking an idle M and waking it */
	CHAOS_RELEASEP,	   /* between releasing a P and re-checking */
	CHAOS_NEWM,	   /* between putting a new M on allm and creating its thread */
	CHAOS_NSITES
};

struct wsr_m;
extern int wsr__chaos_enabled;
extern uint64_t wsr__chaos_seed;
void wsr__chaos(struct wsr_m *mp, enum chaos_site site);

#define WSR_CHAOS(mp, site)                                                                        \
	do {                                                                                       \
		if (__builtin_expect(wsr__chaos_enabled, 0))                                       \
			wsr__chaos((mp), (site));                                                  \
	} while (0)

#endif /* WSR_RUNTIME_CHAOS_H */
