/*
 * wsr_tp.h - the LTTng-UST tracepoint provider `wsr` (public interface).
 *
 * Invariants:
 *   - Every event carries `p` (int32, -1 when the emitter holds no P),
 *     `m` (int32, -1 for threads that are not Ms, e.g. sysmon), `vtid` and
 *     `vpid` (int32: the emitting thread and process) first.
 *   - Ids are small integers: G ids from 1, P ids 0..gomaxprocs-1, M ids from 0.
 *   - Field names, types and argument order are the catalog of
 *     docs/tracepoints.md; tests/unit diffs the two, so change both or neither.
 * Concurrency:
 *   - LTTng-UST tracepoints are callable from any thread at any time; the
 *     runtime calls them only through WSR_TRACE() in runtime/trace.h.
 * Enumerations: wsr:g_source for g_run.source, wsr:g_reason for g_stop.reason.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER wsr

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "wsr_tp.h"

#if !defined(WSR_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define WSR_TP_H

#include <stdint.h>

#include <lttng/tracepoint.h>

/* In the probe stage only: one ring-buffer write per event. */
#include "wsr_tp_write.h"

#if defined(LTTNG_UST_TRACEPOINT_CREATE_PROBES) && !defined(WSR_TP_IDS)
# define WSR_TP_IDS
/*
 * vtid and vpid, the emitting thread's and process's ids as gettid() and
 * getpid() give them (the ids of LTTng's vtid/vpid contexts). They are
 * payload fields, evaluated only in the probes (this translation unit),
 * because a context field costs about 125 instructions per event in
 * liblttng-ust (a callback for its size, one for its value, and a write of
 * its own) and a payload field goes into the event's one write.
 * Concurrency: the tid cache is per thread (initial-exec TLS, no lock);
 * the pid cache is one relaxed atomic that any thread may fill with the
 * same value. A forked child starts with both cleared (pthread_atfork), as
 * LTTng clears its own. The probe translation unit needs syscall() declared:
 * compile it with _GNU_SOURCE or _DEFAULT_SOURCE (gnu11 has the latter;
 * wsr_tp.c defines the former).
 */
# include <pthread.h>
# include <sys/syscall.h>
# include <unistd.h>

static __thread int32_t wsr_tp_vtid_cache __attribute__((tls_model("initial-exec")));
static int32_t wsr_tp_vpid_cache;

static inline int32_t wsr_tp_vtid(void)
{
	int32_t t = wsr_tp_vtid_cache;

	if (__builtin_expect(t == 0, 0))
		wsr_tp_vtid_cache = t = (int32_t)syscall(SYS_gettid);
	return t;
}

static inline int32_t wsr_tp_vpid(void)
{
	int32_t v = __atomic_load_n(&wsr_tp_vpid_cache, __ATOMIC_RELAXED);

	if (__builtin_expect(v == 0, 0)) {
		v = (int32_t)getpid();
		__atomic_store_n(&wsr_tp_vpid_cache, v, __ATOMIC_RELAXED);
	}
	return v;
}

static void wsr_tp_ids_atfork_child(void)
{
	wsr_tp_vtid_cache = 0;
	__atomic_store_n(&wsr_tp_vpid_cache, 0, __ATOMIC_RELAXED);
}

__attribute__((constructor)) static void wsr_tp_ids_init(void)
{
	pthread_atfork(NULL, NULL, wsr_tp_ids_atfork_child);
}
#endif

#include "wsr_tp_schedtrace.h"

/* Where the G that starts running was taken from. */
LTTNG_UST_TRACEPOINT_ENUM(wsr, g_source,
	LTTNG_UST_TP_ENUM_VALUES(
		lttng_ust_field_enum_value("runnext", 0)
		lttng_ust_field_enum_value("local", 1)
		lttng_ust_field_enum_value("global", 2)
		lttng_ust_field_enum_value("steal", 3)
		lttng_ust_field_enum_value("netpoll", 4)
		lttng_ust_field_enum_value("timer", 5)
	)
)

/* Why a G stopped running. */
LTTNG_UST_TRACEPOINT_ENUM(wsr, g_reason,
	LTTNG_UST_TP_ENUM_VALUES(
		lttng_ust_field_enum_value("yield", 0)
		lttng_ust_field_enum_value("block", 1)
		lttng_ust_field_enum_value("sleep", 2)
		lttng_ust_field_enum_value("chan", 3)
		lttng_ust_field_enum_value("mutex", 4)
		lttng_ust_field_enum_value("syscall", 5)
		lttng_ust_field_enum_value("preempt", 6)
		lttng_ust_field_enum_value("exit", 7)
		lttng_ust_field_enum_value("select", 8)
		lttng_ust_field_enum_value("waitgroup", 9)
		lttng_ust_field_enum_value("io", 10)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(wsr, init,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int32_t, gomaxprocs, int32_t, runq_size,
		const char *, version),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, p, p)
		lttng_ust_field_integer(int32_t, m, m)
		lttng_ust_field_integer(int32_t, vtid, wsr_tp_vtid())
		lttng_ust_field_integer(int32_t, vpid, wsr_tp_vpid())
		lttng_ust_field_integer(int32_t, gomaxprocs, gomaxprocs)
		lttng_ust_field_integer(int32_t, runq_size, runq_size)
		lttng_ust_field_string(version, version)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(wsr, g_create,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int64_t, g, int64_t, parent_g),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, p, p)
		lttng_ust_field_integer(int32_t, m, m)
		lttng_ust_field_integer(int32_t, vtid, wsr_tp_vtid())
		lttng_ust_field_integer(int32_t, vpid, wsr_tp_vpid())
		lttng_ust_field_integer(int64_t, g, g)
		lttng_ust_field_integer(int64_t, parent_g, parent_g)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(wsr, runqput,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int64_t, g, uint8_t, next, int64_t, kicked_g,
		uint32_t, qlen),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, p, p)
		lttng_ust_field_integer(int32_t, m, m)
		lttng_ust_field_integer(int32_t, vtid, wsr_tp_vtid())
		lttng_ust_field_integer(int32_t, vpid, wsr_tp_vpid())
		lttng_ust_field_integer(int64_t, g, g)
		lttng_ust_field_integer(uint8_t, next, next)
		lttng_ust_field_integer(int64_t, kicked_g, kicked_g)
		lttng_ust_field_integer(uint32_t, qlen, qlen)
	)
)

/* n Gs moved and the global queue length after the move. */
LTTNG_UST_TRACEPOINT_EVENT_CLASS(wsr, n_global,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, uint32_t, n, uint32_t, global_len),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, p, p)
		lttng_ust_field_integer(int32_t, m, m)
		lttng_ust_field_integer(int32_t, vtid, wsr_tp_vtid())
		lttng_ust_field_integer(int32_t, vpid, wsr_tp_vpid())
		lttng_ust_field_integer(uint32_t, n, n)
		lttng_ust_field_integer(uint32_t, global_len, global_len)
	)
)
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(wsr, n_global, wsr, runq_spill,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, uint32_t, n, uint32_t, global_len))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(wsr, n_global, wsr, globrunq_get,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, uint32_t, n, uint32_t, global_len))

LTTNG_UST_TRACEPOINT_EVENT(wsr, globrunq_put,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int64_t, g, uint32_t, global_len),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, p, p)
		lttng_ust_field_integer(int32_t, m, m)
		lttng_ust_field_integer(int32_t, vtid, wsr_tp_vtid())
		lttng_ust_field_integer(int32_t, vpid, wsr_tp_vpid())
		lttng_ust_field_integer(int64_t, g, g)
		lttng_ust_field_integer(uint32_t, global_len, global_len)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(wsr, g_run,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int64_t, g, uint8_t, source, uint8_t, inherit),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, p, p)
		lttng_ust_field_integer(int32_t, m, m)
		lttng_ust_field_integer(int32_t, vtid, wsr_tp_vtid())
		lttng_ust_field_integer(int32_t, vpid, wsr_tp_vpid())
		lttng_ust_field_integer(int64_t, g, g)
		lttng_ust_field_enum(wsr, g_source, uint8_t, source, source)
		lttng_ust_field_integer(uint8_t, inherit, inherit)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(wsr, g_stop,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int64_t, g, uint8_t, reason),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, p, p)
		lttng_ust_field_integer(int32_t, m, m)
		lttng_ust_field_integer(int32_t, vtid, wsr_tp_vtid())
		lttng_ust_field_integer(int32_t, vpid, wsr_tp_vpid())
		lttng_ust_field_integer(int64_t, g, g)
		lttng_ust_field_enum(wsr, g_reason, uint8_t, reason, reason)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(wsr, g_ready,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int64_t, g, int64_t, by_g),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, p, p)
		lttng_ust_field_integer(int32_t, m, m)
		lttng_ust_field_integer(int32_t, vtid, wsr_tp_vtid())
		lttng_ust_field_integer(int32_t, vpid, wsr_tp_vpid())
		lttng_ust_field_integer(int64_t, g, g)
		lttng_ust_field_integer(int64_t, by_g, by_g)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(wsr, steal,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int32_t, victim, uint32_t, n, uint8_t, runnext),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, p, p)
		lttng_ust_field_integer(int32_t, m, m)
		lttng_ust_field_integer(int32_t, vtid, wsr_tp_vtid())
		lttng_ust_field_integer(int32_t, vpid, wsr_tp_vpid())
		lttng_ust_field_integer(int32_t, victim, victim)
		lttng_ust_field_integer(uint32_t, n, n)
		lttng_ust_field_integer(uint8_t, runnext, runnext)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(wsr, steal_scan,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, uint32_t, rounds, uint32_t, probed, uint8_t,
		found),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, p, p)
		lttng_ust_field_integer(int32_t, m, m)
		lttng_ust_field_integer(int32_t, vtid, wsr_tp_vtid())
		lttng_ust_field_integer(int32_t, vpid, wsr_tp_vpid())
		lttng_ust_field_integer(uint32_t, rounds, rounds)
		lttng_ust_field_integer(uint32_t, probed, probed)
		lttng_ust_field_integer(uint8_t, found, found)
	)
)

/* nmspinning after the transition; found_work: the spinner found a G. */
LTTNG_UST_TRACEPOINT_EVENT_CLASS(wsr, spin,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int32_t, nmspinning, uint8_t, found_work),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, p, p)
		lttng_ust_field_integer(int32_t, m, m)
		lttng_ust_field_integer(int32_t, vtid, wsr_tp_vtid())
		lttng_ust_field_integer(int32_t, vpid, wsr_tp_vpid())
		lttng_ust_field_integer(int32_t, nmspinning, nmspinning)
		lttng_ust_field_integer(uint8_t, found_work, found_work)
	)
)
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(wsr, spin, wsr, spin_start,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int32_t, nmspinning, uint8_t, found_work))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(wsr, spin, wsr, spin_stop,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int32_t, nmspinning, uint8_t, found_work))

/* npidle after the transition. */
LTTNG_UST_TRACEPOINT_EVENT_CLASS(wsr, pidle,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int32_t, npidle),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, p, p)
		lttng_ust_field_integer(int32_t, m, m)
		lttng_ust_field_integer(int32_t, vtid, wsr_tp_vtid())
		lttng_ust_field_integer(int32_t, vpid, wsr_tp_vpid())
		lttng_ust_field_integer(int32_t, npidle, npidle)
	)
)
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(wsr, pidle, wsr, p_idle,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int32_t, npidle))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(wsr, pidle, wsr, p_busy,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int32_t, npidle))

/* nmidle after the transition; by_m: the M that woke it (-1 for m_park). */
LTTNG_UST_TRACEPOINT_EVENT_CLASS(wsr, mpark,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int32_t, nmidle, int32_t, by_m),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, p, p)
		lttng_ust_field_integer(int32_t, m, m)
		lttng_ust_field_integer(int32_t, vtid, wsr_tp_vtid())
		lttng_ust_field_integer(int32_t, vpid, wsr_tp_vpid())
		lttng_ust_field_integer(int32_t, nmidle, nmidle)
		lttng_ust_field_integer(int32_t, by_m, by_m)
	)
)
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(wsr, mpark, wsr, m_park,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int32_t, nmidle, int32_t, by_m))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(wsr, mpark, wsr, m_unpark,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int32_t, nmidle, int32_t, by_m))

LTTNG_UST_TRACEPOINT_EVENT(wsr, m_create,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int32_t, new_m),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, p, p)
		lttng_ust_field_integer(int32_t, m, m)
		lttng_ust_field_integer(int32_t, vtid, wsr_tp_vtid())
		lttng_ust_field_integer(int32_t, vpid, wsr_tp_vpid())
		lttng_ust_field_integer(int32_t, new_m, new_m)
	)
)

/* A G-only event: syscall_enter, timer_fire. */
LTTNG_UST_TRACEPOINT_EVENT_CLASS(wsr, g_only,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int64_t, g),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, p, p)
		lttng_ust_field_integer(int32_t, m, m)
		lttng_ust_field_integer(int32_t, vtid, wsr_tp_vtid())
		lttng_ust_field_integer(int32_t, vpid, wsr_tp_vpid())
		lttng_ust_field_integer(int64_t, g, g)
	)
)
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(wsr, g_only, wsr, syscall_enter,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int64_t, g))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(wsr, g_only, wsr, timer_fire,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int64_t, g))

/* fast: 1 when the G got its own P back without going through the scheduler. */
LTTNG_UST_TRACEPOINT_EVENT(wsr, syscall_exit,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int64_t, g, uint8_t, fast),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, p, p)
		lttng_ust_field_integer(int32_t, m, m)
		lttng_ust_field_integer(int32_t, vtid, wsr_tp_vtid())
		lttng_ust_field_integer(int32_t, vpid, wsr_tp_vpid())
		lttng_ust_field_integer(int64_t, g, g)
		lttng_ust_field_integer(uint8_t, fast, fast)
	)
)

/* p was taken from m (blocked in a call with g) and given to to_m (-1: idle list). */
LTTNG_UST_TRACEPOINT_EVENT(wsr, handoff,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int64_t, g, int32_t, to_m),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, p, p)
		lttng_ust_field_integer(int32_t, m, m)
		lttng_ust_field_integer(int32_t, vtid, wsr_tp_vtid())
		lttng_ust_field_integer(int32_t, vpid, wsr_tp_vpid())
		lttng_ust_field_integer(int64_t, g, g)
		lttng_ust_field_integer(int32_t, to_m, to_m)
	)
)

/* sysmon retook p from m, which had been in a call with g for held_ns. */
LTTNG_UST_TRACEPOINT_EVENT(wsr, retake,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int64_t, g, int64_t, held_ns),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, p, p)
		lttng_ust_field_integer(int32_t, m, m)
		lttng_ust_field_integer(int32_t, vtid, wsr_tp_vtid())
		lttng_ust_field_integer(int32_t, vpid, wsr_tp_vpid())
		lttng_ust_field_integer(int64_t, g, g)
		lttng_ust_field_integer(int64_t, held_ns, held_ns)
	)
)

/* sysmon asked g (running on p/m for ran_ns) to yield. */
LTTNG_UST_TRACEPOINT_EVENT(wsr, preempt,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, int64_t, g, int64_t, ran_ns),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, p, p)
		lttng_ust_field_integer(int32_t, m, m)
		lttng_ust_field_integer(int32_t, vtid, wsr_tp_vtid())
		lttng_ust_field_integer(int32_t, vpid, wsr_tp_vpid())
		lttng_ust_field_integer(int64_t, g, g)
		lttng_ust_field_integer(int64_t, ran_ns, ran_ns)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(wsr, netpoll,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, uint32_t, n_ready, uint8_t, blocking),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, p, p)
		lttng_ust_field_integer(int32_t, m, m)
		lttng_ust_field_integer(int32_t, vtid, wsr_tp_vtid())
		lttng_ust_field_integer(int32_t, vpid, wsr_tp_vpid())
		lttng_ust_field_integer(uint32_t, n_ready, n_ready)
		lttng_ust_field_integer(uint8_t, blocking, blocking)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(wsr, schedtrace,
	LTTNG_UST_TP_ARGS(int32_t, p, int32_t, m, const struct wsr_tp_schedtrace *, st),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, p, p)
		lttng_ust_field_integer(int32_t, m, m)
		lttng_ust_field_integer(int32_t, vtid, wsr_tp_vtid())
		lttng_ust_field_integer(int32_t, vpid, wsr_tp_vpid())
		lttng_ust_field_integer(int32_t, gomaxprocs, st->gomaxprocs)
		lttng_ust_field_integer(int32_t, idleprocs, st->idleprocs)
		lttng_ust_field_integer(int32_t, threads, st->threads)
		lttng_ust_field_integer(int32_t, spinningthreads, st->spinning)
		lttng_ust_field_integer(int32_t, needspinning, st->needspinning)
		lttng_ust_field_integer(int32_t, idlethreads, st->idlethreads)
		lttng_ust_field_integer(int32_t, runqueue, st->runqueue)
		lttng_ust_field_sequence(uint32_t, runq, st->runq, uint32_t, st->gomaxprocs)
		lttng_ust_field_sequence(uint32_t, schedticks, st->schedtick, uint32_t, st->gomaxprocs)
		lttng_ust_field_sequence(int64_t, read_ts, st->read_ts, uint32_t, st->gomaxprocs)
	)
)

#endif /* WSR_TP_H */

#include <lttng/tracepoint-event.h>
