/*
 * wsr_tp_schedtrace.h - the record the runtime fills for one `schedtrace`
 * event (wsr_tp.h), shared by the provider and by tracing-disabled builds of
 * the runtime (runtime/trace.h), so that it is declared once.
 *
 * Invariants: runq, schedtick and read_ts each point to gomaxprocs entries;
 *   read_ts[i] is CLOCK_MONOTONIC in ns (LTTng-UST's default trace clock)
 *   taken just before P i's run queue and schedtick were loaded, so
 *   [read_ts[i], read_ts[i + 1]] (the event's own time for the last P)
 *   brackets the loads of P i; read_ts[0] is taken before the global counts
 *   too, which are loaded just before P0's.
 * Concurrency: filled and read by the one thread that emits the event.
 */
#ifndef WSR_TP_SCHEDTRACE_H
#define WSR_TP_SCHEDTRACE_H

#include <stdint.h>

/* The runtime's own counters, read racily (as Go does), for one schedtrace. */
struct wsr_tp_schedtrace {
	int32_t gomaxprocs;
	int32_t idleprocs;
	int32_t threads;
	int32_t spinning;
	int32_t needspinning;
	int32_t idlethreads;
	int32_t runqueue;
	const uint32_t *runq;      /* ring length, runnext excluded */
	const uint32_t *schedtick; /* the P's schedtick */
	const int64_t *read_ts;    /* when P i was read (CLOCK_MONOTONIC ns) */
};

#endif
