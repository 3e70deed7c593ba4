/*
 * tpfreeze.h - tracepoints in flight, and the freeze that a dying process
 * waits for them with (tpfreeze.c).
 *
 * Invariants:
 *   - Every tracepoint the runtime fires runs between wsr__tp_enter() and
 *     wsr__tp_leave() (trace.c's wsr__tp_* bodies): once enter returned
 *     true, the event is written and committed before leave.
 *   - After wsr__tp_freeze() began, no tracepoint starts (enter returns
 *     false), and freeze returns once none is in flight on another thread
 *     (or after WSR_TP_FREEZE_MAX_MS): the process may then die without
 *     leaving a sub-buffer uncommitted.
 * Concurrency: enter/leave from any thread, signal handlers included;
 *   wsr__tp_freeze() is async-signal-safe.
 */
#ifndef WSR_RUNTIME_TPFREEZE_H
#define WSR_RUNTIME_TPFREEZE_H

#include <stdbool.h>

#include "config.h"

/* The longest a dying process waits for the tracepoints in flight. */
#define WSR_TP_FREEZE_MAX_MS 1000

#if WSR_HAVE_TRACING
/* Whether a tracepoint may start now; true: call wsr__tp_leave() after it. */
bool wsr__tp_enter(void);
void wsr__tp_leave(void);
/* Stops new tracepoints and waits for those in flight (async-signal-safe). */
void wsr__tp_freeze(void);
/* Once per process, before the first M: the fatal signals whose action is
 * still the default get a handler that freezes, then dies of the signal as
 * before; exit() freezes after every atexit hook the runtime adds later. */
void wsr__tp_freeze_install(void);
#else
static inline void wsr__tp_freeze(void)
{
}
static inline void wsr__tp_freeze_install(void)
{
}
#endif

#endif /* WSR_RUNTIME_TPFREEZE_H */
