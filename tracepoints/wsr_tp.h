/*
 * wsr_tp.h - the LTTng-UST tracepoint provider `wsr` (public interface).
 *
 * Invariants:
 *   - Every event carries `p` (int32, -1 when the emitter holds no P),
 *     `m` (int32, -1 for threads that are not Ms, e.g. sysmon), `vtid` and
 *     `vpid` (int32: the emitting thread and process) first.
 *   - Ids are small integers: G ids from 1, P ids 0..gomaxprocs-1, M ids from 0.
 *   - The events, their fields (names, types, order), their arguments and
 *     the enumerations are defined once, in tracepoints/catalog.toml; the
 *     build generates wsr_tp_events.h from it (HACKING.md, "Adding an
 *     event"), and the unit test catalog-drift checks the compiled provider
 *     against the catalog. This file holds what the catalog cannot say: the
 *     vtid/vpid payload helpers and the gather-write override.
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

/* The enumerations and events: generated from catalog.toml (gen_catalog.py). */
#include "wsr_tp_events.h"

#endif /* WSR_TP_H */

#include <lttng/tracepoint-event.h>
