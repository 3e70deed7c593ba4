/*
 * derive_int.h - the deriver's trackers and the state they share (private
 * to derive.c and the tracker files; the interface is derive.h).
 *
 * The pipe inside the deriver: a record is validated (validate.c), stored
 * as an events row (derive.c), then applied to the trackers, each of which
 * owns its state and the rows it writes:
 *   - gstate.c:   the G state machine (struct gs, found in gtable.c);
 *   - pmstate.c:  the P and M state machines (struct ps, struct ms);
 *   - counters.c: the global counters and the per-P ring counts and their
 *                 step-function rows (counters, p_counters);
 *   - latency.c:  the sched_latency distribution (meta.latency_*);
 *   - schedfeed.c: what schedcheck.c needs of every event and snapshot;
 *   - dag.c:      the work/span DAG, its strands and edges as they end.
 * Rows go through rows.c, the one place that knows the SQL.
 *
 * Invariants:
 *   - Events are applied in the decoder's (time) order; a tracker's state
 *     after event k depends only on events 0..k.
 *   - Memory follows the live Gs, the Ps and the Ms, never the events.
 *   - A struct gs pointer stays valid until the next gtable_insert().
 * Concurrency: the trackers run on the caller's thread; rows.c steps the
 *   INSERTs on its own writer thread (rows.h says when the connection is
 *   the caller's again).
 */
#ifndef WSR_ANALYZER_DERIVE_INT_H
#define WSR_ANALYZER_DERIVE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

#include "derive.h"
#include "err.h"
#include "gtable.h"
#include "latency.h"
#include "rec.h"
#include "rows.h"
#include "validate.h"

struct schedcheck;
struct dag;

enum pstate {
	PS_IDLE,
	PS_RUNNING,
	PS_SPINNING,
	PS_SYSCALL,
	PS_NONE
};

enum mstate {
	MS_RUNNING,
	MS_SPINNING,
	MS_SYSCALL,
	MS_PARKED,
	MS_NOP,
	MS_NONE
};

/* One p_counters row of a P, buffered (see "P runs" in counters.c). */
struct pcrow {
	int64_t ts, runq, runnext, ticks, runs;
};

struct ps {
	int64_t curg; /* the G running on it, 0: none */
	bool known, idle, pending_once, dirty;
	/* ring unknown (no init seen, or events lost): the next runqput's qlen
	 * sets it; spilled: its next runqput follows a runq_spill (see there) */
	bool ring_unsynced, spilled;
	uint8_t state;
	/* retaken: sysmon's retake seen, its handoff not yet, and no M has
	 * held the P since (a handoff after one did is late: pmstate.c) */
	bool retaken;
	/* steals of runnext whose steal event is still to come (see runqput) */
	int32_t rn_inflight;
	int32_t holder, st_m;
	int64_t start;
	int64_t ring, runnext, schedticks, syscalls, run_ns, runnext_runs, runs;
	int64_t w_ring, w_runnext, w_ticks, w_runs; /* last written to p_counters */
	bool written;
	struct pcrow *pc; /* p_counters rows not yet inserted (see "P runs") */
	int pc_n, pc_cap;
};

struct ms {
	int64_t curg; /* the G it runs or is in a call with, 0: none */
	bool known, parked, spinning, insyscall, has_creator;
	uint8_t state;
	int32_t p, st_p, creator;
	int64_t start, created_ts, tid;
};

struct counters {
	int64_t idle_ps, spinning_ms, idle_ms, threads, running_gs, runnable_gs, global_len;
};

#define MAX_OTHER_NAMES 256

struct derive {
	sqlite3 *db;
	char *trace;
	struct rows *rows;
	struct validator val;
	struct gtable gt;
	struct latency lat;
	struct dag *dag; /* dag.c */

	/* P/M state (pmstate.c) */
	struct ps *ps;
	int np;         /* Ps allocated */
	int gomaxprocs; /* 0 until init */
	int64_t runq_size;
	char runtime_version[128];
	char policy[32]; /* init.policy's name; "" when the trace lacks the field */
	struct ms *ms;
	int nm; /* Ms allocated (ids 0..nm-1) */
	int64_t threads;

	/* The last event's row, held until the next event's time is known: the
	 * last event at a timestamp carries the counters (counters.c). Its
	 * texts are copies (ev_name, ev_extra). */
	struct row_event ev_pend;
	bool ev_pending;
	char *ev_name, *ev_extra;
	size_t ev_name_cap, ev_extra_cap;

	/* counters (counters.c) */
	struct counters cur, written;
	bool written_any;
	int64_t written_ts;
	/* time integrals of the counters step function */
	int64_t idle_global_ns, idle_runnable_ns;
	int *dirty_ps;
	int n_dirty;

	uint64_t events, wsr_events, foreign_events, schedtraces, spins_found;
	/* runs that ended a runnable interval on a P's queue (p known, not
	 * cut), and those that ran on that P (gstate.c g_to; meta) */
	uint64_t queued_runs, local_runs;
	uint64_t discarded_events, discarded_packets, discarded_records, discarded_uncounted;
	int64_t first_ts;
	uint64_t per_ev[EV_COUNT + 2];
	/* counts of events outside the catalog, by name */
	char *other_names[MAX_OTHER_NAMES];
	uint64_t other_counts[MAX_OTHER_NAMES];
	int n_other;
	uint64_t other_overflow;

	/* environment of the trace (REC_META) */
	char hostname[256], procname[256], tracer[64], env_vpid[32], domain[32];
	int tracer_major, tracer_minor;
	bool finished;

	/* the schedtrace cross-check (schedfeed.c) */
	struct schedcheck *sc;
	/* the quantities as last fed to it: the five globals, then per P its
	 * ring and schedtick (Ps 0..sq_np-1) */
	int64_t sq_c[5];
	int64_t *sq_p;
	int sq_np;
	/* states corrected because events were lost (see "losses", gstate.c) */
	uint64_t loss_repairs;
	struct wsr_err *sc_err; /* for the schedtrace_fields rows, during derive_finish */
};

/* gstate.c: the G tracker */
void g_count_state(struct derive *dv, uint8_t state, int delta);
/* Closes G e's open interval at ts into g_interval; source: the g_run source
 * (WSR_SOURCE_*) that ends it, -1 none. */
int g_close(struct derive *dv, struct gs *e, int64_t ts, int source, int cut,
	    struct wsr_err *err);
/* The name of a struct gs reason (GR_*, WSR_REASON_*): NULL for GR_NONE. */
const char *g_reason_name(int reason);
int g_write_row(struct derive *dv, struct gs *e, int64_t end_ts, struct wsr_err *err);
int g_lose(struct derive *dv, struct gs *e, int64_t ts, struct wsr_err *err);
int p_evict(struct derive *dv, int p, int64_t g, int64_t ts, struct wsr_err *err);
int m_evict(struct derive *dv, int m, int64_t g, int64_t ts, struct wsr_err *err);
int held_repair(struct derive *dv, int m, int p, int64_t ts, struct wsr_err *err);
int m_loses_p(struct derive *dv, int m, int p, int64_t ts, struct wsr_err *err);
int ev_g_create(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err);
int ev_g_queued(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err);
int ev_g_run(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err);
int ev_g_stop(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err);
int ev_g_ready(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err);
int ev_syscall(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err);
int g_finish(struct derive *dv, int64_t end, struct wsr_err *err);

/* pmstate.c: the P and M trackers */
int p_known(struct derive *dv, int p, int64_t ts, struct wsr_err *err);
int m_known(struct derive *dv, int m, int64_t ts, int64_t tid, struct wsr_err *err);
int m_ensure(struct derive *dv, int m, struct wsr_err *err);
int p_set(struct derive *dv, int p, int64_t ts, struct wsr_err *err);
int m_set(struct derive *dv, int m, int64_t ts, struct wsr_err *err);
/* Sets M m's spinning flag and keeps cur.spinning_ms the count of flags set. */
void m_set_spinning(struct derive *dv, int m, bool on);
int pm_assoc(struct derive *dv, int m, int p, int64_t ts, struct wsr_err *err);
int pm_release(struct derive *dv, int m, int p, int64_t ts, struct wsr_err *err);
int pm_emitter(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err);
int ev_init(struct derive *dv, const struct wsr_rec *r, const char *extra, struct wsr_err *err);
int ev_pm(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err);
int pm_finish(struct derive *dv, int64_t end, struct wsr_err *err);
void pm_destroy(struct derive *dv);

/* counters.c: the counters tracker */
void p_dirty(struct derive *dv, int p);
int ev_queue(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err);
void ring_g_run(struct derive *dv, const struct wsr_rec *r, const struct gs *e);
int counters_flush(struct derive *dv, int64_t ts, struct wsr_err *err);
int counters_finish(struct derive *dv, int64_t end, struct wsr_err *err);

/* dag.c: the DAG tracker (hooks of the G and counters trackers) */
struct dag *dag_create(bool all);
void dag_set_all(struct dag *d, bool all);
void dag_destroy(struct dag *d);
void dag_counters(struct derive *dv, int64_t ts, int64_t running_gs);
void dag_time(struct derive *dv);
/* carry: the state of a G whose id was reused without an exit, or NULL */
int dag_g_new(struct derive *dv, struct gs *e, struct dagg *carry, struct wsr_err *err);
void dag_first_run(struct derive *dv);
void dag_g_exit(struct derive *dv, struct gs *e);
void dag_g_free(struct gs *e);
void dag_state_free(struct dagg *a);
int dag_interval(struct derive *dv, struct gs *e, int64_t ts, int source, int cut,
		 struct wsr_err *err);
int dag_before(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err);
int dag_after(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err);
int dag_finish(struct derive *dv, struct wsr_err *err);

/* schedfeed.c: the schedtrace cross-check's view of each event (after the
 * trackers applied it) */
int sq_event(struct derive *dv, const struct wsr_rec *r, const char *extra, struct wsr_err *err);
int sq_finish(struct derive *dv, struct wsr_err *err);

#endif /* WSR_ANALYZER_DERIVE_INT_H */
