/*
 * trace.h - the only place the runtime touches LTTng: WSR_TRACE(ev, p, m, ...).
 *
 * Invariants:
 *   - WSR_TRACE() both counts the event in the emitting thread's stats (for
 *     WSRDEBUG=stats=1) and fires the `wsr` tracepoint of the same name, so
 *     the two can never disagree; the argument order is that of wsr_tp.h.
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

/* One counter per catalog event, plus the derived stats keys. */
#define WSR_EVENTS(X)                                                                              \
	X(init) X(g_create) X(runqput) X(runq_spill) X(globrunq_put) X(globrunq_get) X(g_run)      \
	X(g_stop) X(g_ready) X(steal) X(steal_scan) X(spin_start) X(spin_stop) X(p_idle)           \
	X(p_busy) X(m_park) X(m_unpark) X(m_create) X(syscall_enter) X(syscall_exit) X(retake)     \
	X(handoff) X(preempt) X(timer_fire) X(netpoll) X(schedtrace)

enum wsr_stat {
#define WSR_STAT_ENUM(ev) WSR_ST_##ev,
	WSR_EVENTS(WSR_STAT_ENUM)
#undef WSR_STAT_ENUM
	WSR_ST_runqput_next,
	WSR_ST_stolen,
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
WSR_TP_COLD void wsr__tp_init(int32_t p, int32_t m, int32_t gomaxprocs, int32_t runq_size, const char * version);
WSR_TP_COLD void wsr__tp_g_create(int32_t p, int32_t m, int64_t g, int64_t parent_g);
WSR_TP_COLD void wsr__tp_runqput(int32_t p, int32_t m, int64_t g, uint8_t next, int64_t kicked_g, uint32_t qlen);
WSR_TP_COLD void wsr__tp_runq_spill(int32_t p, int32_t m, uint32_t n, uint32_t global_len);
WSR_TP_COLD void wsr__tp_globrunq_put(int32_t p, int32_t m, int64_t g, uint32_t global_len);
WSR_TP_COLD void wsr__tp_globrunq_get(int32_t p, int32_t m, uint32_t n, uint32_t global_len);
WSR_TP_COLD void wsr__tp_g_run(int32_t p, int32_t m, int64_t g, uint8_t source, uint8_t inherit);
WSR_TP_COLD void wsr__tp_g_stop(int32_t p, int32_t m, int64_t g, uint8_t reason);
WSR_TP_COLD void wsr__tp_g_ready(int32_t p, int32_t m, int64_t g, int64_t by_g);
WSR_TP_COLD void wsr__tp_steal(int32_t p, int32_t m, int32_t victim, uint32_t n, uint8_t runnext);
WSR_TP_COLD void wsr__tp_steal_scan(int32_t p, int32_t m, uint32_t rounds, uint32_t probed, uint8_t found);
WSR_TP_COLD void wsr__tp_spin_start(int32_t p, int32_t m, int32_t nmspinning, uint8_t found_work);
WSR_TP_COLD void wsr__tp_spin_stop(int32_t p, int32_t m, int32_t nmspinning, uint8_t found_work);
WSR_TP_COLD void wsr__tp_p_idle(int32_t p, int32_t m, int32_t npidle);
WSR_TP_COLD void wsr__tp_p_busy(int32_t p, int32_t m, int32_t npidle);
WSR_TP_COLD void wsr__tp_m_park(int32_t p, int32_t m, int32_t nmidle, int32_t by_m);
WSR_TP_COLD void wsr__tp_m_unpark(int32_t p, int32_t m, int32_t nmidle, int32_t by_m);
WSR_TP_COLD void wsr__tp_m_create(int32_t p, int32_t m, int32_t new_m);
WSR_TP_COLD void wsr__tp_syscall_enter(int32_t p, int32_t m, int64_t g);
WSR_TP_COLD void wsr__tp_syscall_exit(int32_t p, int32_t m, int64_t g, uint8_t fast);
WSR_TP_COLD void wsr__tp_retake(int32_t p, int32_t m, int64_t g, int64_t held_ns);
WSR_TP_COLD void wsr__tp_handoff(int32_t p, int32_t m, int64_t g, int32_t to_m);
WSR_TP_COLD void wsr__tp_preempt(int32_t p, int32_t m, int64_t g, int64_t ran_ns);
WSR_TP_COLD void wsr__tp_timer_fire(int32_t p, int32_t m, int64_t g);
WSR_TP_COLD void wsr__tp_netpoll(int32_t p, int32_t m, uint32_t n_ready, uint8_t blocking);
WSR_TP_COLD void wsr__tp_schedtrace(int32_t p, int32_t m, const struct wsr_tp_schedtrace * st);

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

/* Values of the g_source and g_reason enumerations (wsr_tp.h). */
enum wsr_source {
	SRC_RUNNEXT = 0,
	SRC_LOCAL = 1,
	SRC_GLOBAL = 2,
	SRC_STEAL = 3,
	SRC_NETPOLL = 4,
	SRC_TIMER = 5,
};

enum wsr_reason {
	WR_YIELD = 0,
	WR_BLOCK = 1,
	WR_SLEEP = 2,
	WR_CHAN = 3,
	WR_MUTEX = 4,
	WR_SYSCALL = 5,
	WR_PREEMPT = 6,
	WR_EXIT = 7,
	WR_SELECT = 8,
	WR_WAITGROUP = 9,
	WR_IO = 10,
};

#endif /* WSR_RUNTIME_TRACE_H */
