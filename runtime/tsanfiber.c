/*
 * tsanfiber.c - ThreadSanitizer fibers for Gs (TSan builds only; elsewhere
 * these are empty). TSan needs a fiber per running G, switched to with each
 * stack switch (san.h). Creating one maps and zeroes a ThreadState with a
 * 512 KiB shadow stack, and destroying it unmaps that: one pair per G was
 * most of every spawn test's time under TSan. So a G takes its fiber at its
 * first run from its P's cache and gives it back at its exit, as it does its
 * stack (stack.c).
 *
 * Invariants:
 *   - A G holds a fiber from its first run (execute) to its exit (goexit);
 *     a G that never ran, or a G struct on a free list, holds none.
 *   - A cached fiber's shadow stack is empty: the G's entry and exit path
 *     (wsr__gentry, wsr__goexit, mcall_noreturn), whose frames never
 *     return, has no TSan frames (WSR_NO_FUNC_ENTRY, san.h), and every
 *     switch is inlined. Without that attribute (gcc) nothing is cached:
 *     each G's fiber is destroyed at its exit (WSR_TSAN_FIBER_REUSE 0).
 *   - A P caches at most WSR_FIBERCACHE_MAX fibers (each a mapping of its
 *     own: tens of thousands, one per free G struct, ran out of
 *     vm.max_map_count); the rest are destroyed. wsr__fibercache_flush
 *     destroys a P's cache at teardown.
 * Concurrency: pp->fibercache is the owner P's.
 */
#include "config.h"

#include "proc.h"

void *wsr__fiber_get(struct wsr_p *pp)
{
#if WSR_SAN_TSAN
	if (WSR_TSAN_FIBER_REUSE && pp->nfibercache > 0)
		return pp->fibercache[--pp->nfibercache];
	return san_tsan_create();
#else
	(void)pp;
	return NULL;
#endif
}

void wsr__fiber_put(struct wsr_p *pp, void *fiber)
{
#if WSR_SAN_TSAN
	if (WSR_TSAN_FIBER_REUSE && pp->nfibercache < WSR_FIBERCACHE_MAX) {
		pp->fibercache[pp->nfibercache++] = fiber;
		return;
	}
	san_tsan_destroy(fiber);
#else
	(void)pp;
	(void)fiber;
#endif
}

void wsr__fibercache_flush(struct wsr_p *pp)
{
#if WSR_SAN_TSAN
	while (pp->nfibercache > 0)
		san_tsan_destroy(pp->fibercache[--pp->nfibercache]);
#else
	(void)pp;
#endif
}
