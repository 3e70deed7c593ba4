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
 *   both come from the catalog's WSR_CAT_TP (tracepoints/catalog.toml); it
 *   fires between wsr__tp_enter() and wsr__tp_leave(), so that a dying
 *   process waits for it to be committed (tpfreeze.c), and not at all once
 *   the process is dying.
 * Concurrency: any thread, as the tracepoints themselves.
 */
#include "config.h"

#include "tpfreeze.h"
#include "trace.h"

/* lttng_ust_do_tracepoint(wsr, ev, a, b, ...) from the parenthesised argument list. */
#define WSR_TP_CALL(...) lttng_ust_do_tracepoint(__VA_ARGS__)
#define WSR_TP_UNPAREN(...) __VA_ARGS__
#define WSR_TP_DEFINE(ev, params, args)                                                            \
	void wsr__tp_##ev params                                                                   \
	{                                                                                          \
		if (wsr__tp_enter()) {                                                             \
			WSR_TP_CALL(wsr, ev, WSR_TP_UNPAREN args);                                 \
			wsr__tp_leave();                                                           \
		}                                                                                  \
	}
WSR_CAT_TP(WSR_TP_DEFINE)
