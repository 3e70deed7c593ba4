/*
 * trace.h - the only place the runtime touches LTTng: WSR_TRACE(ev, p, m, ...).
 *
 * Invariants:
 *   - WSR_TRACE() both counts the event in the emitting thread's stats (for
 *     WSRDEBUG=stats=1) and fires the `wsr` tracepoint of the same name, so
 *     the two can never disagree; the argument order is that of wsr_tp.h.
 *   - The events, their arguments, the stats keys and the enumerators below
 *     are expanded from the catalog's X-macros (wsr_catalog.h, generated
 *     from tracepoints/catalog.toml; HACKING.md, "The event catalog").
 *   - With WSR_HAVE_TRACING == 0 the tracepoint compiles to nothing, but its
 *     arguments still type-check and the stats are still counted.
 *   - WSR_TRACE_ENABLED(ev) guards arguments that cost something to build.
 *   - The hottest functions (newproc, a round of the schedule loop, runqput,
 *     goready, gopark, gosched_m, goexit_m) come in two copies built from
 *     one always-inline body with a constant `traced` argument: the plain
 *     copy counts its events (WSR_TRACE_IF) and fires none; the function
 *     tests its event at the top and calls the cold, traced copy instead
 *     when a session enabled it. Only that test stays on the hot path (2
 *     instructions on x86-64, see WSR_TRACE_ENABLED): a probe call in the
 *     body, even a cold one, makes the compiler keep values in saved
 *     registers and build a frame on every call (about 10 instructions a
 *     site with no session). Both copies count the same stats.
 * Concurrency: stats live in the emitting M (or sysmon's private block),
 *   written only by that thread with relaxed atomics and summed at exit. The
 *   block is passed explicitly: no TLS address is ever cached across a switch.
 */
#ifndef WSR_RUNTIME_TRACE_H
#define WSR_RUNTIME_TRACE_H

#include "config.h"

#include <stdint.h>

#include "atomic.h"

/* The catalog (tracepoints/catalog.toml), as X-macros generated at build time. */
#include "wsr_catalog.h"

/* One counter per catalog event, then the other per-thread stats keys. */
enum wsr_stat {
#define WSR_STAT_ENUM(ev, EV) WSR_ST_##ev,
	WSR_CAT_EVENTS(WSR_STAT_ENUM)
#undef WSR_STAT_ENUM
#define WSR_STAT_ENUM(key) WSR_ST_##key,
	WSR_CAT_STAT_EXTRA(WSR_STAT_ENUM)
#undef WSR_STAT_ENUM
	WSR_ST_COUNT
};

/* Per-thread stats block (in struct wsr_m, or sysmon's own); summed by debug.c. */
struct wsr_stats {
	_Atomic uint64_t n[WSR_ST_COUNT];
};

static inline void wsr__stat_add(struct wsr_stats *s, enum wsr_stat st, uint64_t v)
{
	/* Only the owning thread writes its block; relaxed: read racily by the summary. */
	store_relaxed(&s->n[st], load_relaxed(&s->n[st]) + v);
}

#if WSR_HAVE_TRACING
/* libwsr is the only module that fires the provider: its tracepoint
 * definitions (tracepoints/wsr_tp.c) are hidden, so the state words are
 * addressed directly, not through the GOT. */
# define LTTNG_UST_TRACEPOINT_HIDDEN_DEFINITION
# include "wsr_tp.h"
# define WSR_TP_COLD __attribute__((noinline, cold))
/* wsr__tp_EV(the arguments of wsr:EV): fires the tracepoint (trace.c). */
# define WSR_TP_PROTO(ev, params, args) WSR_TP_COLD void wsr__tp_##ev params;
WSR_CAT_TP(WSR_TP_PROTO)
# undef WSR_TP_PROTO

# if defined(__x86_64__)
/* Whether a session enabled the event: the state word of its tracepoint
 * (what lttng_ust_tracepoint_enabled reads), tested in 2 instructions,
 * `cmpl $0, state(%rip); jne`. For the volatile read compilers load, test and
 * branch (3), and may form the address in a register first (4). asm goto is
 * volatile: the state is read anew at every test, as with the volatile read.
 * The "i" operand needs a link-time address, hence the hidden definitions
 * (above); a macro, not an inline function, so that it holds at -O0 too. */
#  define WSR_TRACE_ENABLED(ev)                                                                  \
	__builtin_expect(__extension__({                                                           \
		__label__ wsr_tp_on_;                                                              \
		_Bool wsr_tp_r_ = 1;                                                               \
		__asm__ goto("cmpl $0, %c0(%%rip)\n\tjne %l[wsr_tp_on_]"                            \
			     : : "i"(&lttng_ust_tracepoint_wsr___##ev.state) : "cc" : wsr_tp_on_); \
		wsr_tp_r_ = 0;                                                                     \
	wsr_tp_on_:                                                                                \
		wsr_tp_r_;                                                                         \
	}), 0)
# else
#  define WSR_TRACE_ENABLED(ev) lttng_ust_tracepoint_enabled(wsr, ev)
# endif
/* Inline: the test above; the probe call is out of line (trace.c). */
# define WSR_TRACE_FIRE(ev, ...)                                                                   \
	do {                                                                                       \
		if (WSR_TRACE_ENABLED(ev))                                                         \
			wsr__tp_##ev(__VA_ARGS__);                                                 \
	} while (0)
#else
# include "wsr_tp_schedtrace.h"
static inline void wsr__trace_args(int dummy, ...)
{
	(void)dummy;
}
# define WSR_TRACE_ENABLED(ev) 0
# define WSR_TRACE_FIRE(ev, ...)                                                                   \
	do {                                                                                       \
		if (0)                                                                             \
			wsr__trace_args(0, __VA_ARGS__);                                           \
	} while (0)
#endif

/* statsp: the emitting thread's block (&mp->stats); the rest is the tracepoint's arguments. */
#define WSR_TRACE(ev, statsp, ...)                                                                 \
	do {                                                                                       \
		wsr__stat_add((statsp), WSR_ST_##ev, 1);                                           \
		WSR_TRACE_FIRE(ev, __VA_ARGS__);                                                   \
	} while (0)

/* WSR_TRACE in the traced copy of a hot function, only the count in the
 * plain one (traced is a constant in each copy; see the head of this file). */
#define WSR_TRACE_IF(traced, ev, statsp, ...)                                                      \
	do {                                                                                       \
		if (traced)                                                                        \
			WSR_TRACE(ev, statsp, __VA_ARGS__);                                        \
		else                                                                               \
			wsr__stat_add((statsp), WSR_ST_##ev, 1);                                   \
	} while (0)
/* The body both copies are built from, and the traced copy (unused, and
 * dropped, when tracing is compiled out). */
#define WSR_TRACE_BODY  static inline __attribute__((always_inline))
#define WSR_TRACED_COPY static __attribute__((noinline, cold, unused))

/* Values of the g_source and g_reason enumerations (SRC_RUNNEXT, WR_YIELD, ...). */
enum wsr_source {
#define WSR_ENUM_VALUE(NAME, label, value) SRC_##NAME = value,
	WSR_CAT_ENUM_G_SOURCE(WSR_ENUM_VALUE)
#undef WSR_ENUM_VALUE
};

enum wsr_reason {
#define WSR_ENUM_VALUE(NAME, label, value) WR_##NAME = value,
	WSR_CAT_ENUM_G_REASON(WSR_ENUM_VALUE)
#undef WSR_ENUM_VALUE
};

#endif /* WSR_RUNTIME_TRACE_H */
