/*
 * trace.c - one out-of-line, cold function per tracepoint (tracing builds).
 *
 * Why: lttng_ust_tracepoint() expands the probe call inline at every site;
 * even when no session listens, that code keeps values live and costs spills
 * in the scheduler's hot paths (about 10 instructions per site, +6% on a
 * channel ping-pong). WSR_TRACE_FIRE() instead tests the tracepoint's state
 * inline and calls one of these only when a session enabled the event.
 *
 * Invariants: each wsr__tp_EV(args) fires wsr:EV with exactly its arguments:
 *   both come from the catalog's WSR_CAT_TP (tracepoints/catalog.toml).
 * Concurrency: any thread, as the tracepoints themselves.
 */
#include "config.h"

#include "trace.h"

/* lttng_ust_do_tracepoint(wsr, ev, a, b, ...) from the parenthesised argument list. */
#define WSR_TP_CALL(...) lttng_ust_do_tracepoint(__VA_ARGS__)
#define WSR_TP_UNPAREN(...) __VA_ARGS__
#define WSR_TP_DEFINE(ev, params, args)                                                            \
	void wsr__tp_##ev params                                                                   \
	{                                                                                          \
		WSR_TP_CALL(wsr, ev, WSR_TP_UNPAREN args);                                         \
	}
WSR_CAT_TP(WSR_TP_DEFINE)
