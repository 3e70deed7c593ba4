/*
 * derive.c - the one-pass state machine from wsr events to database rows
 * (see derive.h and docs/schema.md).
 *
 * Design. Events arrive in time order (the muxer's). Each event is inserted
 * into `events`, then applied to three small state machines:
 *   - G: runnable -> running -> waiting / syscall / runnable ... -> exit.
 *     A G's current interval is open in its `struct gs`; a transition closes
 *     it into g_state. Live Gs sit in a dense array found through an
 *     open-addressing hash of indices (see "G table"), so memory follows
 *     the number of live Gs, not of events.
 *   - P: idle / running / spinning / syscall, computed from the P's idle flag
 *     and the state of the M holding it. Which M holds which P is learnt from
 *     the (p, m) pair every event carries (the emitter holds p), except for
 *     the events that name another thread's P or M (retake, handoff,
 *     preempt) and the ones with their own meaning (p_idle, p_busy,
 *     m_unpark).
 *   - M: running / spinning / syscall / parked / no_p.
 * P and M intervals are only written when the state changes, and an
 * interval of zero length is folded into the next one, so per P and M the
 * rows tile time. The counters come from the events' own counts (npidle,
 * nmspinning, nmidle, global_len) where the catalog carries them, and from
 * the G state machine (running_gs, runnable_gs) otherwise; one row is
 * written per timestamp at which any changed. Per-P ring lengths are counted
 * from the queue operations (sums commute, so a count is exact once every
 * event before an instant is in, whatever their order); runqput.qlen, a load
 * racing with thieves, only sets a ring the count cannot know (no init
 * event, or events lost):
 *   runqput:      +1 (the G, or the one kicked from runnext), 0 right
 *                 after a runq_spill (both went to the global queue)
 *   steal:        thief += n-1, victim -= n (runnext: victim's slot cleared)
 *   globrunq_get: P += n-1;  runq_spill: P -= n-1
 *   g_run:        nothing if it is the G run at once after a steal or
 *                 global get; runnext slot cleared if it held the G;
 *                 else ring -= 1 when the G came from the local ring.
 *
 * Invariants:
 *   - Rows are inserted through prepared statements inside the caller's
 *     transaction; every sqlite3_step is checked.
 *   - A G interval is [start, ts) of its open state; zero-length G intervals
 *     are kept (a G run the instant it is readied has latency 0).
 *   - Validation rejects what random bytes decoded as fields would produce:
 *     p outside -1..gomaxprocs-1, m outside -1..WSR_MAX_M-1, G ids outside
 *     0..2^48, unknown enum values, time going backwards.
 * Concurrency: single-threaded.
 * Rejected: storing the counters as a JSON column per row (4x the size);
 *   keeping every G in memory until the end (memory would follow events).
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "dag.h"
#include "db.h"
#include "derive.h"
#include "schedcheck.h"

#define WSR_MAX_P   1024
#define WSR_MAX_M   (1 << 20)
#define WSR_MAX_G   ((int64_t)1 << 48)
#define MAX_STREAMS 4096
#define LAT_BUCKETS 512

enum gstate {
	GS_RUNNABLE,
	GS_RUNNING,
	GS_WAITING,
	GS_SYSCALL,
	GS_UNKNOWN /* after lost events: see "losses" */
};

static const char *const gstate_names[] = {"runnable", "running", "waiting", "syscall",
					   "unknown"};

enum pstate {
	PS_IDLE,
	PS_RUNNING,
	PS_SPINNING,
	PS_SYSCALL,
	PS_NONE
};

static const char *const pstate_names[] = {"idle", "running", "spinning", "syscall"};

enum mstate {
	MS_RUNNING,
	MS_SPINNING,
	MS_SYSCALL,
	MS_PARKED,
	MS_NOP,
	MS_NONE
};

static const char *const mstate_names[] = {"running", "spinning", "syscall", "parked", "no_p"};

enum gq {
	Q_NONE,
	Q_RING,
	Q_RUNNEXT,
	Q_GLOBAL
};

struct gs {
	int64_t g; /* 0: empty slot */
	int64_t parent;
	int64_t created_ts, first_run_ts, start;
	int64_t runs, stolen, ns[5];
	int32_t create_p, p, m, qp;
	const char *reason;
	uint8_t state, q;
	bool has_parent, pending_ready;
};

/* One p_counters row of a P, buffered (see "P runs"). */
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

enum stmt {
	ST_EVENT,
	ST_G_STATE,
	ST_P_STATE,
	ST_M_STATE,
	ST_COUNTERS,
	ST_P_COUNTERS,
	ST_STEAL,
	ST_SPILL,
	ST_GLOBAL_GET,
	ST_G,
	ST_DISCARDED,
	ST_P,
	ST_M,
	ST_EVENT_COUNT,
	ST_SCHED_FIELD,
	ST_COUNT
};

static const char *const stmt_sql[ST_COUNT] = {
	[ST_EVENT] = "INSERT INTO events (id, ts, name, cpu, tid, vpid, p, m, g, a1, a2, a3, "
		     "extra) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[ST_G_STATE] = "INSERT INTO g_state (g, state, start_ts, end_ts, p, m, reason, source, "
		       "cut) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[ST_P_STATE] = "INSERT INTO p_state (p, state, start_ts, end_ts, m, cut) VALUES (?, ?, ?, "
		       "?, ?, ?)",
	[ST_M_STATE] = "INSERT INTO m_state (m, state, start_ts, end_ts, p, cut) VALUES (?, ?, ?, "
		       "?, ?, ?)",
	[ST_COUNTERS] = "INSERT INTO counters (ts, idle_ps, spinning_ms, idle_ms, threads, "
			"running_gs, runnable_gs, global_len) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
	[ST_P_COUNTERS] = "INSERT INTO p_counters (p, ts, runq, runnext, schedticks, runs) VALUES "
			  "(?, ?, ?, ?, ?, ?)",
	[ST_STEAL] = "INSERT INTO steals (ts, thief, victim, m, n, runnext) VALUES (?, ?, ?, ?, "
		     "?, ?)",
	[ST_SPILL] = "INSERT INTO spills (ts, p, m, n, global_len) VALUES (?, ?, ?, ?, ?)",
	[ST_GLOBAL_GET] = "INSERT INTO global_gets (ts, p, m, n, global_len) VALUES (?, ?, ?, ?, "
			  "?)",
	[ST_G] = "INSERT OR REPLACE INTO g (g, parent, created_ts, first_run_ts, end_ts, "
		 "create_p, runs, stolen, run_ns, runnable_ns, waiting_ns, syscall_ns, "
		 "end_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[ST_DISCARDED] = "INSERT INTO discarded (kind, stream, cpu, begin_ts, end_ts, count) "
			 "VALUES (?, ?, ?, ?, ?, ?)",
	[ST_P] = "INSERT INTO p (p, schedticks, syscalls, run_ns, runnext_runs, runs) VALUES (?, ?, "
		 "?, ?, ?, ?)",
	[ST_M] = "INSERT INTO m (m, tid, created_ts, creator) VALUES (?, ?, ?, ?)",
	[ST_EVENT_COUNT] = "INSERT INTO event_counts (name, n) VALUES (?, ?) ON CONFLICT (name) "
			   "DO UPDATE SET n = n + excluded.n",
	[ST_SCHED_FIELD] = "INSERT INTO schedtrace_fields (snap_id, snap_ts, field, p, rt, recon, "
			   "read_b, read_e, racing, explained) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
};

#define MAX_OTHER_NAMES 256

/*
 * Row batching. Each table's rows are collected as typed values and written
 * BATCH_ROWS at a time with one multi-row INSERT (one sqlite3_step per batch
 * instead of per row: about 40% less CPU per row, measured); a partial
 * batch goes out row by row at a flush. Nothing reads the tables during
 * ingestion, and rows of one table keep their order (p_counters: the rows
 * of one P; its key orders the rest, see "P runs"), so batching is
 * invisible in the result. Text values are static strings (catalog and
 * state names) or copies owned by the batch until written.
 */
#define BATCH_ROWS 32

enum vtype {
	V_NULL,
	V_INT,
	V_TEXT,
	V_OWNED
};

struct val {
	uint8_t t;
	int64_t i;
	const char *s;
	int len;
};

struct batch {
	sqlite3_stmt *one, *many; /* many: NULL when the table is not batched */
	int ncols, nrows;
	struct val *vals; /* BATCH_ROWS x ncols */
};

struct stream_info {
	char *name;
	int32_t cpu;
	int64_t last_ts;
	bool declared;
};

struct derive {
	sqlite3 *db;
	char *trace;
	struct batch b[ST_COUNT];

	/* live Gs (see "G table") */
	struct gs *gtab;
	uint32_t *gidx, *gfree;
	size_t gn, galloc, nfree, gcap, gcount, gpeak;
	uint64_t gtotal;

	struct ps *ps;
	int np;         /* Ps allocated */
	int gomaxprocs; /* 0 until init */
	int64_t runq_size;
	char runtime_version[128];

	struct ms *ms;
	int nm; /* Ms allocated (ids 0..nm-1) */
	int64_t threads;

	struct counters cur, written;
	bool written_any;
	int64_t written_ts;
	/* sched_latency (runnable intervals not cut) by latency bucket, for
	 * the percentiles (see "latency percentiles") */
	uint64_t lat_hist[LAT_BUCKETS];
	uint64_t lat_n;
	int64_t lat_max;
	/* time integrals of the counters step function */
	int64_t idle_global_ns, idle_runnable_ns;
	int *dirty_ps;
	int n_dirty;

	struct stream_info streams[MAX_STREAMS];

	uint64_t events, wsr_events, foreign_events, schedtraces, spins_found;
	uint64_t discarded_events, discarded_packets, discarded_records, discarded_uncounted;
	int64_t first_ts, last_ts;
	bool any_ts;
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
	/* the one process analysed: want_vpid (--vpid) or the first seen */
	int64_t want_vpid, vpid;
	uint64_t skipped_other_vpid;

	/* the schedtrace cross-check (see "schedtrace check") */
	struct schedcheck *sc;
	/* Gs whose state became unknown through lost events (see "losses") */
	uint64_t loss_repairs;
	struct wsr_err *sc_err; /* for sq_row, during derive_finish */
};

/* Binding helpers on the current row: -1 (no P / no M) and absent values are
 * stored as NULL only where the schema says so; events keep -1 as emitted. */
static inline void bind_i64(struct val *s, int i, int64_t v)
{
	s[i - 1].t = V_INT;
	s[i - 1].i = v;
}

static inline void bind_null(struct val *s, int i)
{
	s[i - 1].t = V_NULL;
}

static inline void bind_opt(struct val *s, int i, bool present, int64_t v)
{
	if (present)
		bind_i64(s, i, v);
	else
		bind_null(s, i);
}

static inline void bind_id(struct val *s, int i, int64_t v)
{
	if (v >= 0)
		bind_i64(s, i, v);
	else
		bind_null(s, i);
}

/* t must outlive the batch (a string literal or catalog name). */
static inline void bind_text(struct val *s, int i, const char *t)
{
	if (t != NULL) {
		s[i - 1].t = V_TEXT;
		s[i - 1].s = t;
		s[i - 1].len = -1;
	} else {
		bind_null(s, i);
	}
}

static inline int bind_text_copy(struct val *s, int i, const char *t, int len)
{
	size_t n = len >= 0 ? (size_t)len : strlen(t);
	char *c = malloc(n + 1);

	if (c == NULL)
		return -1;
	memcpy(c, t, n);
	c[n] = '\0';
	s[i - 1].t = V_OWNED;
	s[i - 1].s = c;
	s[i - 1].len = (int)n;
	return 0;
}

static void bind_vals(sqlite3_stmt *st, const struct val *v, int n)
{
	for (int i = 0; i < n; i++) {
		switch (v[i].t) {
		case V_INT:
			sqlite3_bind_int64(st, i + 1, v[i].i);
			break;
		case V_TEXT:
		case V_OWNED:
			sqlite3_bind_text(st, i + 1, v[i].s, v[i].len, SQLITE_STATIC);
			break;
		default:
			sqlite3_bind_null(st, i + 1);
		}
	}
}

static void free_vals(struct val *v, int n)
{
	for (int i = 0; i < n; i++)
		if (v[i].t == V_OWNED)
			free((char *)v[i].s);
}

/* The current row of table k, to fill with bind_*() and end with step(). */
static inline struct val *row(struct derive *dv, enum stmt k)
{
	struct batch *b = &dv->b[k];

	return b->vals + (size_t)b->nrows * (size_t)b->ncols;
}

static int flush_batch(struct derive *dv, enum stmt k, struct wsr_err *err)
{
	struct batch *b = &dv->b[k];
	int rc = SQLITE_DONE;

	if (b->nrows == 0)
		return 0;
	if (b->many != NULL && b->nrows == BATCH_ROWS) {
		bind_vals(b->many, b->vals, b->ncols * BATCH_ROWS);
		rc = sqlite3_step(b->many);
		sqlite3_reset(b->many);
	} else {
		for (int r = 0; r < b->nrows && rc == SQLITE_DONE; r++) {
			bind_vals(b->one, b->vals + (size_t)r * (size_t)b->ncols, b->ncols);
			rc = sqlite3_step(b->one);
			sqlite3_reset(b->one);
		}
	}
	free_vals(b->vals, b->nrows * b->ncols);
	b->nrows = 0;
	if (rc != SQLITE_DONE) {
		err_push(err, "sqlite: inserting (%.40s...): %s", stmt_sql[k],
			 sqlite3_errmsg(dv->db));
		return -1;
	}
	return 0;
}

/* Ends the current row of table k (written when the batch is full). */
static int step(struct derive *dv, enum stmt k, struct wsr_err *err)
{
	struct batch *b = &dv->b[k];

	b->nrows++;
	if (b->nrows == (b->many != NULL ? BATCH_ROWS : 1))
		return flush_batch(dv, k, err);
	return 0;
}

static int pc_flush(struct derive *dv, int p, struct wsr_err *err);

static int flush_all(struct derive *dv, struct wsr_err *err)
{
	for (int p = 0; p < dv->np; p++)
		if (pc_flush(dv, p, err) < 0)
			return -1;
	for (int k = 0; k < ST_COUNT; k++)
		if (flush_batch(dv, (enum stmt)k, err) < 0)
			return -1;
	return 0;
}

/* ---- G table ----
 *
 * Live Gs are packed in a dense array (gtab[0..gn), a free slot has g = 0
 * and its index on the gfree stack) and found through an open-addressing
 * hash of 32-bit indices (gidx: 0 empty, else index + 1; load <= 1/2;
 * backward-shift deletion). Memory is about sizeof(struct gs) + 12 bytes
 * per G at the live peak, where a table of whole entries at load 1/2 took
 * 2-4 times sizeof(struct gs) per G (fib 29: 31 MB -> 11 MB).
 * A struct gs pointer stays valid until the next g_insert (which may
 * move the array). */

static inline size_t ghash(const struct derive *dv, int64_t g)
{
	return (size_t)(((uint64_t)g * 0x9E3779B97F4A7C15ull) >> 17) & (dv->gcap - 1);
}

static struct gs *g_find(struct derive *dv, int64_t g)
{
	size_t i = ghash(dv, g);
	uint32_t x;

	while ((x = dv->gidx[i]) != 0) {
		if (dv->gtab[x - 1].g == g)
			return &dv->gtab[x - 1];
		i = (i + 1) & (dv->gcap - 1);
	}
	return NULL;
}

static int g_grow_index(struct derive *dv)
{
	size_t ncap = dv->gcap * 2;
	uint32_t *nidx = calloc(ncap, sizeof(*nidx));

	if (nidx == NULL)
		return -1;
	free(dv->gidx);
	dv->gidx = nidx;
	dv->gcap = ncap;
	for (size_t k = 0; k < dv->gn; k++) {
		if (dv->gtab[k].g == 0)
			continue;
		size_t i = ghash(dv, dv->gtab[k].g);
		while (dv->gidx[i] != 0)
			i = (i + 1) & (dv->gcap - 1);
		dv->gidx[i] = (uint32_t)k + 1;
	}
	return 0;
}

static struct gs *g_insert(struct derive *dv, int64_t g, struct wsr_err *err)
{
	if ((dv->gcount + 1) * 2 > dv->gcap && g_grow_index(dv) < 0)
		goto oom;
	uint32_t k;
	if (dv->nfree > 0) {
		k = dv->gfree[--dv->nfree];
	} else {
		if (dv->gn == dv->galloc) {
			size_t n = dv->galloc * 2;
			struct gs *nt = realloc(dv->gtab, n * sizeof(*nt));
			if (nt == NULL)
				goto oom;
			dv->gtab = nt;
			uint32_t *nf = realloc(dv->gfree, n * sizeof(*nf));
			if (nf == NULL)
				goto oom;
			dv->gfree = nf;
			dv->galloc = n;
		}
		k = (uint32_t)dv->gn++;
	}
	size_t i = ghash(dv, g);
	while (dv->gidx[i] != 0)
		i = (i + 1) & (dv->gcap - 1);
	dv->gidx[i] = k + 1;
	struct gs *e = &dv->gtab[k];
	memset(e, 0, sizeof(*e));
	e->g = g;
	e->p = e->m = e->qp = e->create_p = -1;
	e->first_run_ts = -1;
	dv->gcount++;
	dv->gtotal++;
	if (dv->gcount > dv->gpeak)
		dv->gpeak = dv->gcount;
	return e;
oom:
	err_push(err, "out of memory (%zu live Gs)", dv->gcount);
	return NULL;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
static void g_delete(struct derive *dv, struct gs *e)
{
	uint32_t k = (uint32_t)(e - dv->gtab);
	size_t mask = dv->gcap - 1;
	size_t i = ghash(dv, e->g);

	while (dv->gidx[i] != k + 1)
		i = (i + 1) & mask;
	size_t j = i;
	for (;;) {
		j = (j + 1) & mask;
		if (dv->gidx[j] == 0)
			break;
		size_t h = ghash(dv, dv->gtab[dv->gidx[j] - 1].g);
		/* Move j to i if h is cyclically outside (i, j]. */
		if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
			dv->gidx[i] = dv->gidx[j];
			i = j;
		}
	}
	dv->gidx[i] = 0;
	e->g = 0;
	dv->gfree[dv->nfree++] = k;
	dv->gcount--;
}

static void count_state(struct derive *dv, uint8_t state, int delta)
{
	if (state == GS_RUNNING)
		dv->cur.running_gs += delta;
	else if (state == GS_RUNNABLE)
		dv->cur.runnable_gs += delta;
}

/* ---- latency percentiles ----
 *
 * meta.latency_* are sched_latency's nearest-rank percentiles. Sorting the
 * whole view at the end cost a sort of one row per runnable interval; instead
 * the intervals are counted by latency bucket as they close (16 exact
 * buckets below 16 ns, then 8 per power of two), which says which bucket
 * holds each rank and the rank within it, and a query sorts only the rows of
 * that bucket. Exact, and memory does not depend on the trace. */

static int lat_bucket(int64_t v)
{
	if (v < 16)
		return v < 0 ? 0 : (int)v;
	int e = 63 - __builtin_clzll((unsigned long long)v);
	return 16 + (e - 4) * 8 + (int)((v >> (e - 3)) & 7);
}

/* Bucket b holds the latencies in [lo, last]. */
static void lat_bounds(int b, int64_t *lo, int64_t *last)
{
	if (b < 16) {
		*lo = *last = b;
		return;
	}
	int e = (b - 16) / 8 + 4, sub = (b - 16) % 8;
	*lo = (int64_t)(8 + sub) << (e - 3);
	*last = *lo + (((int64_t)1 << (e - 3)) - 1);
}

static void lat_count(struct derive *dv, int64_t v)
{
	dv->lat_hist[lat_bucket(v)]++;
	if (dv->lat_n == 0 || v > dv->lat_max)
		dv->lat_max = v;
	dv->lat_n++;
}

static int g_close(struct derive *dv, struct gs *e, int64_t ts, const char *source, int cut,
		   struct wsr_err *err)
{
	struct val *s = row(dv, ST_G_STATE);

	bind_i64(s, 1, e->g);
	bind_text(s, 2, gstate_names[e->state]);
	bind_i64(s, 3, e->start);
	bind_i64(s, 4, ts);
	bind_id(s, 5, e->p);
	bind_id(s, 6, e->m);
	bind_text(s, 7, e->reason);
	bind_text(s, 8, source);
	bind_i64(s, 9, cut);
	e->ns[e->state] += ts - e->start;
	if (e->state == GS_RUNNABLE && !cut)
		lat_count(dv, ts - e->start);
	if (e->state == GS_RUNNING && e->p >= 0 && e->p < dv->np)
		dv->ps[e->p].run_ns += ts - e->start;
	return step(dv, ST_G_STATE, err);
}

/* Closes the open interval and opens `state` at ts. */
static int g_to(struct derive *dv, struct gs *e, uint8_t state, int64_t ts, int32_t p, int32_t m,
		const char *reason, const char *source, struct wsr_err *err)
{
	if (g_close(dv, e, ts, source, 0, err) < 0)
		return -1;
	count_state(dv, e->state, -1);
	e->state = state;
	e->start = ts;
	e->p = p;
	e->m = m;
	e->reason = reason;
	count_state(dv, state, +1);
	return 0;
}

static int g_write_row(struct derive *dv, struct gs *e, int64_t end_ts, struct wsr_err *err)
{
	struct val *s = row(dv, ST_G);

	bind_i64(s, 1, e->g);
	bind_opt(s, 2, e->has_parent, e->parent);
	bind_i64(s, 3, e->created_ts);
	bind_opt(s, 4, e->first_run_ts >= 0, e->first_run_ts);
	bind_opt(s, 5, end_ts >= 0, end_ts);
	bind_id(s, 6, e->create_p);
	bind_i64(s, 7, e->runs);
	bind_i64(s, 8, e->stolen);
	bind_i64(s, 9, e->ns[GS_RUNNING]);
	bind_i64(s, 10, e->ns[GS_RUNNABLE]);
	bind_i64(s, 11, e->ns[GS_WAITING]);
	bind_i64(s, 12, e->ns[GS_SYSCALL]);
	bind_text(s, 13, end_ts >= 0 ? "exit" : NULL);
	return step(dv, ST_G, err);
}

/* A G seen for the first time at ts, in `state`. */
static struct gs *g_new(struct derive *dv, int64_t g, int64_t ts, uint8_t state, const char *reason,
			struct wsr_err *err)
{
	struct gs *e = g_find(dv, g);

	if (e != NULL) {
		/* The id is reused without an exit: close the old G as cut. */
		if (g_close(dv, e, ts, NULL, 1, err) < 0 || g_write_row(dv, e, -1, err) < 0)
			return NULL;
		count_state(dv, e->state, -1);
		g_delete(dv, e);
	}
	e = g_insert(dv, g, err);
	if (e == NULL)
		return NULL;
	e->created_ts = ts;
	e->start = ts;
	e->state = state;
	e->reason = reason;
	count_state(dv, state, +1);
	return e;
}

static struct gs *g_get(struct derive *dv, int64_t g, int64_t ts, struct wsr_err *err)
{
	struct gs *e = g_find(dv, g);

	if (e == NULL)
		e = g_new(dv, g, ts, GS_WAITING, NULL, err);
	return e;
}

/* ---- losses ----
 *
 * A lossless trace never has a P or an M running two Gs, but a lost g_stop
 * would leave its G "running" until the end. So the state machines hold
 * the physical bounds themselves: when an event shows that a G cannot be
 * running any more (another G runs on its P or M, its P goes idle, its M
 * parks or spins), its interval is closed as cut (cut = 1) and the G is
 * `unknown` until its next event; a G that is run again while "running"
 * has its interval cut too. Likewise a P that an M holds is not idle (a
 * lost p_busy), and an M that runs a G neither spins nor is in a call (a
 * lost spin_stop or syscall_exit). In a lossless trace none of this
 * happens (meta.loss_repairs counts the times it did). */

/* G e's open interval ends at ts as cut by a loss; e is `unknown` after it. */
static int g_lose(struct derive *dv, struct gs *e, int64_t ts, struct wsr_err *err)
{
	if (g_close(dv, e, ts, NULL, 1, err) < 0)
		return -1;
	count_state(dv, e->state, -1);
	if (e->p >= 0 && e->p < dv->np && dv->ps[e->p].curg == e->g)
		dv->ps[e->p].curg = 0;
	if (e->m >= 0 && e->m < dv->nm && dv->ms[e->m].curg == e->g)
		dv->ms[e->m].curg = 0;
	e->state = GS_UNKNOWN;
	e->start = ts;
	e->p = e->m = -1;
	e->reason = NULL;
	e->pending_ready = false;
	dv->loss_repairs++;
	return 0;
}

/* The G that P p (or M m) runs, unless it is g: it cannot run any more. */
static int p_evict(struct derive *dv, int p, int64_t g, int64_t ts, struct wsr_err *err)
{
	int64_t cur = dv->ps[p].curg;
	struct gs *o;

	if (cur == 0 || cur == g)
		return 0;
	dv->ps[p].curg = 0;
	o = g_find(dv, cur);
	if (o != NULL && o->state == GS_RUNNING && o->p == p)
		return g_lose(dv, o, ts, err);
	return 0;
}

static int m_evict(struct derive *dv, int m, int64_t g, int64_t ts, struct wsr_err *err)
{
	int64_t cur = dv->ms[m].curg;
	struct gs *o;

	if (cur == 0 || cur == g)
		return 0;
	dv->ms[m].curg = 0;
	o = g_find(dv, cur);
	if (o != NULL && (o->state == GS_RUNNING || o->state == GS_SYSCALL) && o->m == m)
		return g_lose(dv, o, ts, err);
	return 0;
}

/* The emitter M m holds P p (-1: none) at ts: a G still "running" on M m
 * elsewhere, or on P p with another M, lost its g_stop. */
static int held_repair(struct derive *dv, int m, int p, int64_t ts, struct wsr_err *err)
{
	struct gs *o;

	if (m < dv->nm && dv->ms[m].curg != 0) {
		o = g_find(dv, dv->ms[m].curg);
		if (o != NULL && o->state == GS_RUNNING && o->m == m && o->p != p &&
		    g_lose(dv, o, ts, err) < 0)
			return -1;
	}
	if (p >= 0 && p < dv->np && dv->ps[p].curg != 0) {
		o = g_find(dv, dv->ps[p].curg);
		if (o != NULL && o->state == GS_RUNNING && o->p == p && o->m != m &&
		    g_lose(dv, o, ts, err) < 0)
			return -1;
	}
	return 0;
}

/* ---- P and M ---- */

static int p_ensure(struct derive *dv, int p, struct wsr_err *err)
{
	if (p < dv->np)
		return 0;
	int n = dv->np == 0 ? 8 : dv->np;
	while (n <= p)
		n *= 2;
	struct ps *np = realloc(dv->ps, (size_t)n * sizeof(*np));
	if (np == NULL) {
		err_push(err, "out of memory");
		return -1;
	}
	dv->ps = np;
	int *nd = realloc(dv->dirty_ps, (size_t)n * sizeof(*nd));
	if (nd == NULL) {
		err_push(err, "out of memory");
		return -1;
	}
	dv->dirty_ps = nd;
	memset(np + dv->np, 0, (size_t)(n - dv->np) * sizeof(*np));
	dv->np = n;
	return 0;
}

static int m_ensure(struct derive *dv, int m, struct wsr_err *err)
{
	if (m < dv->nm)
		return 0;
	int n = dv->nm == 0 ? 16 : dv->nm;
	while (n <= m)
		n *= 2;
	struct ms *nm = realloc(dv->ms, (size_t)n * sizeof(*nm));
	if (nm == NULL) {
		err_push(err, "out of memory");
		return -1;
	}
	memset(nm + dv->nm, 0, (size_t)(n - dv->nm) * sizeof(*nm));
	dv->ms = nm;
	dv->nm = n;
	return 0;
}

static void p_dirty(struct derive *dv, int p)
{
	if (!dv->ps[p].dirty) {
		dv->ps[p].dirty = true;
		dv->dirty_ps[dv->n_dirty++] = p;
	}
}

/* Writes one P or M state interval [start, end) (who: its M or P; cut: 1 if
 * the trace ended inside it). */
static int state_row(struct derive *dv, enum stmt stmt, int64_t id, const char *state,
		     int64_t start, int64_t end, int64_t who, int cut, struct wsr_err *err)
{
	struct val *s = row(dv, stmt);

	bind_i64(s, 1, id);
	bind_text(s, 2, state);
	bind_i64(s, 3, start);
	bind_i64(s, 4, end);
	bind_id(s, 5, who);
	bind_i64(s, 6, cut);
	return step(dv, stmt, err);
}

static int p_set(struct derive *dv, int p, int64_t ts, struct wsr_err *err)
{
	struct ps *P = &dv->ps[p];
	uint8_t st = PS_RUNNING;
	int32_t m = -1;

	if (P->idle) {
		st = PS_IDLE;
	} else if (P->holder >= 0 && dv->ms[P->holder].p == p) {
		struct ms *M = &dv->ms[P->holder];
		m = P->holder;
		st = M->insyscall ? PS_SYSCALL : M->spinning ? PS_SPINNING : PS_RUNNING;
	}
	if (st == P->state && m == P->st_m)
		return 0;
	if (P->state != PS_NONE && ts > P->start &&
	    state_row(dv, ST_P_STATE, p, pstate_names[P->state], P->start, ts, P->st_m, 0, err) < 0)
		return -1;
	if (P->state == PS_NONE || ts > P->start)
		P->start = ts;
	P->state = st;
	P->st_m = m;
	return 0;
}

static int m_set(struct derive *dv, int m, int64_t ts, struct wsr_err *err)
{
	struct ms *M = &dv->ms[m];
	uint8_t st;
	int32_t p = M->p;

	if (M->parked)
		st = MS_PARKED, p = -1;
	else if (M->insyscall)
		st = MS_SYSCALL;
	else if (M->p < 0)
		st = MS_NOP;
	else
		st = M->spinning ? MS_SPINNING : MS_RUNNING;
	if (st == M->state && p == M->st_p)
		return 0;
	if (M->state != MS_NONE && ts > M->start &&
	    state_row(dv, ST_M_STATE, m, mstate_names[M->state], M->start, ts, M->st_p, 0, err) < 0)
		return -1;
	if (M->state == MS_NONE || ts > M->start)
		M->start = ts;
	M->state = st;
	M->st_p = p;
	return 0;
}

/* Makes M m known (first seen at ts, by an event with thread id tid). */
static int m_known(struct derive *dv, int m, int64_t ts, int64_t tid, struct wsr_err *err)
{
	if (m < 0)
		return 0;
	if (m_ensure(dv, m, err) < 0)
		return -1;
	struct ms *M = &dv->ms[m];
	if (!M->known) {
		M->known = true;
		M->p = M->st_p = -1;
		M->state = MS_NONE;
		M->created_ts = ts;
		M->tid = tid;
		dv->threads++;
		dv->cur.threads = dv->threads;
		if (m_set(dv, m, ts, err) < 0)
			return -1;
	} else if (M->tid < 0 && tid >= 0) {
		M->tid = tid;
	}
	return 0;
}

static int p_known(struct derive *dv, int p, int64_t ts, struct wsr_err *err)
{
	if (p < 0)
		return 0;
	if (p_ensure(dv, p, err) < 0)
		return -1;
	struct ps *P = &dv->ps[p];
	if (!P->known) {
		P->known = true;
		P->ring_unsynced = dv->gomaxprocs == 0;
		P->holder = P->st_m = -1;
		P->state = PS_NONE;
		return p_set(dv, p, ts, err);
	}
	return 0;
}

/* A G still "running" on M m's P p when M m loses p lost its g_stop (an
 * M gives up its P only after its G stopped or entered a call). */
static int m_loses_p(struct derive *dv, int m, int p, int64_t ts, struct wsr_err *err)
{
	struct gs *o;

	if (m < 0 || dv->ms[m].curg == 0)
		return 0;
	o = g_find(dv, dv->ms[m].curg);
	if (o != NULL && o->state == GS_RUNNING && o->m == m && o->p == p)
		return g_lose(dv, o, ts, err);
	return 0;
}

/* M m holds P p from ts on (both known). */
static int assoc(struct derive *dv, int m, int p, int64_t ts, struct wsr_err *err)
{
	struct ms *M = &dv->ms[m];
	struct ps *P = &dv->ps[p];

	if (M->p == p && P->holder == m && !M->parked)
		return 0;
	M->parked = false;
	if (M->p >= 0 && M->p != p) {
		int op = M->p;
		if (m_loses_p(dv, m, op, ts, err) < 0)
			return -1;
		if (dv->ps[op].holder == m)
			dv->ps[op].holder = -1;
		M->p = p;
		if (p_set(dv, op, ts, err) < 0)
			return -1;
	}
	if (P->holder >= 0 && P->holder != m) {
		int om = P->holder;
		if (m_loses_p(dv, om, p, ts, err) < 0)
			return -1;
		if (dv->ms[om].p == p)
			dv->ms[om].p = -1;
		P->holder = m;
		if (m_set(dv, om, ts, err) < 0)
			return -1;
	}
	M->p = p;
	P->holder = m;
	if (m_set(dv, m, ts, err) < 0 || p_set(dv, p, ts, err) < 0)
		return -1;
	return 0;
}

/* M m no longer holds P p (if it did). */
static int release(struct derive *dv, int m, int p, int64_t ts, struct wsr_err *err)
{
	if (m >= 0 && dv->ms[m].p == p && m_loses_p(dv, m, p, ts, err) < 0)
		return -1;
	if (m >= 0 && dv->ms[m].p == p) {
		dv->ms[m].p = -1;
		if (m_set(dv, m, ts, err) < 0)
			return -1;
	}
	if (p >= 0 && dv->ps[p].holder == m) {
		dv->ps[p].holder = -1;
		if (p_set(dv, p, ts, err) < 0)
			return -1;
	}
	return 0;
}

/* ---- counters ---- */

/* ---- P runs ----
 *
 * p_counters is keyed by (p, ts), and its rows come in time order, P after
 * P. Inserted in that order, each row lands at another P's end of the
 * B-tree, and a row costs twice as much as an append (1.0-1.1 us against
 * 0.55-0.6 us: a C program inserting 4M rows of 2 Ps into an empty table
 * with the analyzer's pragmas). So each P's rows are buffered and
 * inserted as one run, which costs about what an append costs once the run
 * spans a few pages (runs of 2,048 rows: 0.8 us, 16,384: 0.6 us). The
 * buffers share a budget of PC_BUDGET rows (2 MiB) split among gomaxprocs.
 */
#define PC_BUDGET  65536
#define PC_RUN_MIN 256
#define PC_RUN_MAX 16384

static int pc_flush(struct derive *dv, int p, struct wsr_err *err)
{
	struct ps *P = &dv->ps[p];

	for (int i = 0; i < P->pc_n; i++) {
		const struct pcrow *c = &P->pc[i];
		struct val *s = row(dv, ST_P_COUNTERS);
		bind_i64(s, 1, p);
		bind_i64(s, 2, c->ts);
		bind_i64(s, 3, c->runq);
		bind_i64(s, 4, c->runnext);
		bind_i64(s, 5, c->ticks);
		bind_i64(s, 6, c->runs);
		if (step(dv, ST_P_COUNTERS, err) < 0)
			return -1;
	}
	P->pc_n = 0;
	return 0;
}

static int pc_add(struct derive *dv, int p, int64_t ts, struct wsr_err *err)
{
	struct ps *P = &dv->ps[p];

	if (P->pc == NULL) {
		int n = dv->gomaxprocs > 0 ? PC_BUDGET / dv->gomaxprocs : PC_RUN_MIN;
		n = n < PC_RUN_MIN ? PC_RUN_MIN : n > PC_RUN_MAX ? PC_RUN_MAX : n;
		P->pc = malloc((size_t)n * sizeof(*P->pc));
		if (P->pc == NULL) {
			err_push(err, "out of memory");
			return -1;
		}
		P->pc_cap = n;
	}
	if (P->pc_n == P->pc_cap && pc_flush(dv, p, err) < 0)
		return -1;
	/* A ring count is below 0 only while a removal's event precedes its
	 * addition's (a thief's steal from a ring whose owner has not yet
	 * announced the Gs it stole into it); the table shows 0. */
	P->pc[P->pc_n++] =
		(struct pcrow){ts, P->ring > 0 ? P->ring : 0, P->runnext, P->schedticks, P->runs};
	return 0;
}

static int flush_counters(struct derive *dv, int64_t ts, struct wsr_err *err)
{
	if (!dv->written_any || memcmp(&dv->cur, &dv->written, sizeof(dv->cur)) != 0) {
		if (dv->written_any) {
			/* The previous row held on [written_ts, ts). */
			int64_t dt = ts - dv->written_ts;
			const struct counters *w = &dv->written;
			if (w->idle_ps > 0 && w->global_len > 0)
				dv->idle_global_ns += dt;
			if (w->idle_ps > 0 && w->runnable_gs > 0)
				dv->idle_runnable_ns += dt;
		}
		dv->written_ts = ts;
		struct val *s = row(dv, ST_COUNTERS);
		bind_i64(s, 1, ts);
		bind_i64(s, 2, dv->cur.idle_ps);
		bind_i64(s, 3, dv->cur.spinning_ms);
		bind_i64(s, 4, dv->cur.idle_ms);
		bind_i64(s, 5, dv->cur.threads);
		bind_i64(s, 6, dv->cur.running_gs);
		bind_i64(s, 7, dv->cur.runnable_gs);
		bind_i64(s, 8, dv->cur.global_len);
		if (step(dv, ST_COUNTERS, err) < 0)
			return -1;
		dv->written = dv->cur;
		dv->written_any = true;
	}
	for (int i = 0; i < dv->n_dirty; i++) {
		int p = dv->dirty_ps[i];
		struct ps *P = &dv->ps[p];
		P->dirty = false;
		if (P->written && P->w_ring == P->ring && P->w_runnext == P->runnext &&
		    P->w_ticks == P->schedticks && P->w_runs == P->runs)
			continue;
		if (pc_add(dv, p, ts, err) < 0)
			return -1;
		P->written = true;
		P->w_ring = P->ring;
		P->w_runnext = P->runnext;
		P->w_ticks = P->schedticks;
		P->w_runs = P->runs;
	}
	dv->n_dirty = 0;
	return 0;
}

/* ---- creation ---- */

struct derive *derive_create(sqlite3 *db, const char *trace, struct wsr_err *err)
{
	struct derive *dv = calloc(1, sizeof(*dv));

	if (dv == NULL) {
		err_push(err, "out of memory");
		return NULL;
	}
	dv->db = db;
	dv->trace = strdup(trace);
	dv->sc = schedcheck_create();
	dv->gcap = 1024;
	dv->gidx = calloc(dv->gcap, sizeof(*dv->gidx));
	dv->galloc = 512;
	dv->gtab = malloc(dv->galloc * sizeof(*dv->gtab));
	dv->gfree = malloc(dv->galloc * sizeof(*dv->gfree));
	if (dv->trace == NULL || dv->gidx == NULL || dv->gtab == NULL || dv->gfree == NULL ||
	    dv->sc == NULL) {
		err_push(err, "out of memory");
		goto fail;
	}
	for (int k = 0; k < ST_COUNT; k++) {
		struct batch *b = &dv->b[k];
		if (db_prepare(db, &b->one, stmt_sql[k], err) < 0)
			goto fail;
		b->ncols = sqlite3_bind_parameter_count(b->one);
		b->vals = calloc((size_t)BATCH_ROWS * (size_t)b->ncols, sizeof(*b->vals));
		if (b->vals == NULL) {
			err_push(err, "out of memory");
			goto fail;
		}
		/* "INSERT ... VALUES (?, ...)" repeated BATCH_ROWS times; not for
		 * upserts (the ON CONFLICT clause follows the tuple). */
		const char *tuple = strstr(stmt_sql[k], "VALUES (");
		if (tuple == NULL || strstr(stmt_sql[k], "ON CONFLICT") != NULL)
			continue;
		tuple += 7;
		size_t pre = (size_t)(tuple - stmt_sql[k]), tl = strlen(tuple);
		char *sql = malloc(pre + (tl + 2) * BATCH_ROWS + 1);
		if (sql == NULL) {
			err_push(err, "out of memory");
			goto fail;
		}
		memcpy(sql, stmt_sql[k], pre);
		size_t off = pre;
		for (int r = 0; r < BATCH_ROWS; r++) {
			if (r > 0) {
				memcpy(sql + off, ", ", 2);
				off += 2;
			}
			memcpy(sql + off, tuple, tl);
			off += tl;
		}
		sql[off] = '\0';
		int rc = db_prepare(db, &b->many, sql, err);
		free(sql);
		if (rc < 0)
			goto fail;
	}
	return dv;
fail:
	derive_destroy(dv);
	return NULL;
}

void derive_destroy(struct derive *dv)
{
	if (dv == NULL)
		return;
	for (int k = 0; k < ST_COUNT; k++) {
		struct batch *b = &dv->b[k];
		sqlite3_finalize(b->one);
		sqlite3_finalize(b->many);
		if (b->vals != NULL)
			free_vals(b->vals, b->nrows * b->ncols);
		free(b->vals);
	}
	for (int i = 0; i < MAX_STREAMS; i++)
		free(dv->streams[i].name);
	for (int i = 0; i < dv->n_other; i++)
		free(dv->other_names[i]);
	free(dv->gtab);
	free(dv->gidx);
	free(dv->gfree);
	for (int p = 0; p < dv->np; p++)
		free(dv->ps[p].pc);
	free(dv->ps);
	free(dv->ms);
	free(dv->dirty_ps);
	free(dv->trace);
	schedcheck_destroy(dv->sc);
	free(dv);
}

void derive_set_vpid(struct derive *dv, int64_t vpid)
{
	dv->want_vpid = vpid;
}

uint64_t derive_event_count(const struct derive *dv)
{
	return dv->events;
}

int64_t derive_last_ts(const struct derive *dv)
{
	return dv->last_ts;
}

uint64_t derive_wsr_event_count(const struct derive *dv)
{
	return dv->wsr_events;
}

/* ---- validation ---- */

static const char *ev_name(const struct wsr_rec *r, const char *extra)
{
	if (r->ev < EV_COUNT)
		return wsr_catalog[r->ev].name;
	return extra != NULL && r->extra_len > 0 ? extra : "?";
}

static int bad(struct derive *dv, const struct wsr_rec *r, const char *extra, struct wsr_err *err,
	       const char *what, int64_t v)
{
	const char *sname = dv->streams[r->stream].name;

	err_input(err,
		  "%s: event #%" PRIu64 " (%s%s at %" PRId64 " ns, stream %s): %s = %" PRId64
		  " is out of range: the trace is corrupted or not from this runtime",
		  dv->trace, dv->events + 1, r->ev < EV_COUNT ? "wsr:" : "", ev_name(r, extra),
		  r->ts, sname != NULL ? sname : "?", what, v);
	return -1;
}

static int validate(struct derive *dv, const struct wsr_rec *r, const char *extra,
		    struct wsr_err *err)
{
	int maxp = dv->gomaxprocs > 0 ? dv->gomaxprocs : WSR_MAX_P;
	struct stream_info *si = &dv->streams[r->stream];

	if (!si->declared) {
		err_push(err, "internal: record for undeclared stream %u", r->stream);
		return -1;
	}
	if (!(r->flags & REC_F_TS))
		return bad(dv, r, extra, err, "timestamp (missing)", 0);
	if (r->ts < si->last_ts) {
		err_input(err,
			  "%s: stream %s: time goes backwards at event #%" PRIu64 " (%" PRId64
			  " ns after %" PRId64 " ns): the trace is corrupted",
			  dv->trace, si->name, dv->events + 1, r->ts, si->last_ts);
		return -1;
	}
	if (dv->any_ts && r->ts < dv->last_ts) {
		err_input(err,
			  "%s: time goes backwards across streams at event #%" PRIu64 " (%" PRId64
			  " ns after %" PRId64 " ns): the trace is corrupted",
			  dv->trace, dv->events + 1, r->ts, dv->last_ts);
		return -1;
	}
	if (r->ev >= EV_COUNT)
		return 0;
	if (!(r->flags & REC_F_P) || !(r->flags & REC_F_M)) {
		err_input(err, "%s: event wsr:%s lacks the fields p and m of the wsr catalog",
			  dv->trace, wsr_catalog[r->ev].name);
		return -1;
	}
	if (r->p < -1 || r->p >= maxp)
		return bad(dv, r, extra, err, "p", r->p);
	if (r->m < -1 || r->m >= WSR_MAX_M)
		return bad(dv, r, extra, err, "m", r->m);
	const struct wsr_catalog_entry *c = &wsr_catalog[r->ev];
	if (c->g != NULL) {
		if (!(r->flags & REC_F_G)) {
			err_input(err, "%s: event wsr:%s lacks its field %s", dv->trace, c->name,
				  c->g);
			return -1;
		}
		if (r->g < 0 || r->g >= WSR_MAX_G)
			return bad(dv, r, extra, err, "g", r->g);
	}
	for (int k = 0; k < 3; k++) {
		uint32_t bit = (uint32_t)REC_F_A1 << k;
		if (c->a[k] != NULL && !(r->flags & bit)) {
			err_input(err, "%s: event wsr:%s lacks its field %s", dv->trace, c->name,
				  c->a[k]);
			return -1;
		}
	}
	switch (r->ev) {
	case EV_INIT:
		if (r->a1 < 1 || r->a1 > WSR_MAX_P)
			return bad(dv, r, extra, err, "gomaxprocs", r->a1);
		break;
	case EV_G_CREATE:
	case EV_G_RUN:
	case EV_G_STOP:
	case EV_RUNQPUT:
	case EV_GLOBRUNQ_PUT:
	case EV_G_READY:
		if (r->g < 1)
			return bad(dv, r, extra, err, "g", r->g);
		if (r->ev == EV_G_RUN && (r->a1 < 0 || r->a1 >= WSR_G_SOURCE_COUNT))
			return bad(dv, r, extra, err, "source", r->a1);
		if (r->ev == EV_G_STOP && (r->a1 < 0 || r->a1 >= WSR_G_REASON_COUNT))
			return bad(dv, r, extra, err, "reason", r->a1);
		if (r->ev == EV_RUNQPUT && (r->a2 < 0 || r->a2 >= WSR_MAX_G))
			return bad(dv, r, extra, err, "kicked_g", r->a2);
		/* g_stop(syscall) ends a call whose G found no P (p = -1). */
		if (r->ev != EV_G_CREATE && r->ev != EV_G_READY && r->ev != EV_GLOBRUNQ_PUT &&
		    r->p < 0 && !(r->ev == EV_G_STOP && r->a1 == WSR_REASON_SYSCALL))
			return bad(dv, r, extra, err, "p", r->p);
		break;
	case EV_STEAL:
		if (r->a1 < 0 || r->a1 >= maxp)
			return bad(dv, r, extra, err, "victim", r->a1);
		if (r->a2 < 1 || r->a2 > 1 << 20)
			return bad(dv, r, extra, err, "n", r->a2);
		if (r->p < 0)
			return bad(dv, r, extra, err, "p", r->p);
		break;
	case EV_RUNQ_SPILL:
	case EV_GLOBRUNQ_GET:
		if (r->a1 < 0 || r->a1 > 1 << 20)
			return bad(dv, r, extra, err, "n", r->a1);
		if (r->p < 0)
			return bad(dv, r, extra, err, "p", r->p);
		break;
	case EV_M_CREATE:
		if (r->a1 < 0 || r->a1 >= WSR_MAX_M)
			return bad(dv, r, extra, err, "new_m", r->a1);
		break;
	case EV_P_IDLE:
	case EV_P_BUSY:
		if (r->p < 0)
			return bad(dv, r, extra, err, "p", r->p);
		if (r->a1 < 0 || r->a1 > maxp)
			return bad(dv, r, extra, err, "npidle", r->a1);
		break;
	case EV_SPIN_START:
	case EV_SPIN_STOP:
		if (r->a1 < 0 || r->a1 >= WSR_MAX_M)
			return bad(dv, r, extra, err, "nmspinning", r->a1);
		break;
	case EV_HANDOFF:
		if (r->a1 < -1 || r->a1 >= WSR_MAX_M)
			return bad(dv, r, extra, err, "to_m", r->a1);
		break;
	default:
		break;
	}
	return 0;
}

/* ---- the state machines ---- */

static int apply(struct derive *dv, const struct wsr_rec *r, const char *extra, struct wsr_err *err)
{
	int64_t ts = r->ts;
	int p = r->p, m = r->m;
	int64_t tid = (r->flags & REC_F_TID) ? r->tid : -1;
	struct gs *e;

	/* The emitter: every event but these is emitted by M m holding P p. */
	bool foreign_pm = r->ev == EV_RETAKE || r->ev == EV_HANDOFF || r->ev == EV_PREEMPT ||
			  r->ev == EV_SCHEDTRACE;
	if (!foreign_pm) {
		/* A woken M's m_unpark and spin_start are emitted by its waker
		 * (startm): their vtid is the waker's, so an M's tid comes from
		 * its other events. */
		bool by_waker = r->ev == EV_SPIN_START || r->ev == EV_M_UNPARK;
		if (m_known(dv, m, ts, by_waker ? -1 : tid, err) < 0)
			return -1;
	}
	if (p_known(dv, p, ts, err) < 0)
		return -1;
	bool holds = !foreign_pm && m >= 0 && r->ev != EV_P_IDLE && r->ev != EV_P_BUSY &&
		     r->ev != EV_M_UNPARK;
	if (holds && held_repair(dv, m, p, ts, err) < 0)
		return -1;
	if (holds && p >= 0) {
		if (dv->ps[p].idle) {
			/* M m holds it: its p_busy was lost (see "losses"). */
			dv->ps[p].idle = false;
			dv->loss_repairs++;
		}
		if (assoc(dv, m, p, ts, err) < 0 || p_set(dv, p, ts, err) < 0)
			return -1;
	} else if (!foreign_pm && m >= 0 && dv->ms[m].parked && r->ev != EV_M_PARK &&
		   r->ev != EV_M_UNPARK) {
		dv->ms[m].parked = false;
		if (m_set(dv, m, ts, err) < 0)
			return -1;
	}

	switch (r->ev) {
	case EV_INIT:
		if (dv->gomaxprocs == 0) {
			dv->gomaxprocs = (int)r->a1;
			dv->runq_size = r->a2;
			if (extra != NULL)
				snprintf(dv->runtime_version, sizeof(dv->runtime_version), "%s",
					 extra);
			for (int k = 0; k < dv->gomaxprocs; k++) {
				if (p_known(dv, k, ts, err) < 0)
					return -1;
				/* P0 starts held by M0; the others start idle. */
				if (k > 0 || m < 0) {
					dv->ps[k].idle = true;
					if (p_set(dv, k, ts, err) < 0)
						return -1;
				}
			}
			if (m >= 0 && assoc(dv, m, 0, ts, err) < 0)
				return -1;
		}
		break;
	case EV_G_CREATE:
		e = g_new(dv, r->g, ts, GS_RUNNABLE, "create", err);
		if (e == NULL)
			return -1;
		e->has_parent = true;
		e->parent = r->a1;
		e->create_p = p;
		break;
	case EV_RUNQPUT: {
		struct ps *P = &dv->ps[p];
		e = g_find(dv, r->g);
		if (e == NULL) {
			e = g_new(dv, r->g, ts, GS_RUNNABLE, "ready", err);
			if (e == NULL)
				return -1;
		}
		if (e->state == GS_WAITING || e->state == GS_SYSCALL || e->state == GS_UNKNOWN) {
			if (g_to(dv, e, GS_RUNNABLE, ts, p, -1,
				 e->state == GS_SYSCALL ? "syscall" : "ready", NULL, err) < 0)
				return -1;
		} else if (e->state == GS_RUNNING) {
			e->pending_ready = true;
		} else if (e->p < 0) {
			e->p = p;
		}
		e->q = r->a1 ? Q_RUNNEXT : Q_RING;
		e->qp = p;
		/* The ring is counted, not read from qlen: qlen is loaded before
		 * the event's timestamp, and a thief's steal may land between the
		 * two. The G put (next = 0) or the one kicked out of runnext goes
		 * to the ring, except right after a runq_spill, which sent it to
		 * the global queue with the 128 it counts (runq.c). */
		int64_t to_ring = r->a1 ? r->a2 > 0 : 1;
		if (P->spilled)
			to_ring = 0;
		P->spilled = false;
		if (r->a1) {
			if (r->a2 > 0) {
				struct gs *k = g_find(dv, r->a2);
				if (k != NULL) {
					k->q = Q_RING;
					k->qp = p;
				}
			} else if (P->runnext != 0) {
				/* The owner found runnext empty, yet no steal of it is
				 * in yet: a thief took it and its steal event follows. */
				P->rn_inflight++;
			}
			P->runnext = r->g;
		}
		P->ring += to_ring;
		if (P->ring_unsynced) {
			P->ring = r->a3;
			P->ring_unsynced = false;
		}
		p_dirty(dv, p);
		break;
	}
	case EV_RUNQ_SPILL: {
		struct ps *P = &dv->ps[p];
		/* 128 from the ring plus the G being put (or kicked from runnext),
		 * whose runqput follows (runq.c). */
		P->ring -= r->a1 - 1;
		P->spilled = true;
		p_dirty(dv, p);
		dv->cur.global_len = r->a2;
		struct val *s = row(dv, ST_SPILL);
		bind_i64(s, 1, ts);
		bind_i64(s, 2, p);
		bind_i64(s, 3, m);
		bind_i64(s, 4, r->a1);
		bind_i64(s, 5, r->a2);
		if (step(dv, ST_SPILL, err) < 0)
			return -1;
		break;
	}
	case EV_GLOBRUNQ_PUT:
		e = g_find(dv, r->g);
		if (e == NULL) {
			e = g_new(dv, r->g, ts, GS_RUNNABLE, "ready", err);
			if (e == NULL)
				return -1;
		}
		if (e->state == GS_WAITING || e->state == GS_SYSCALL || e->state == GS_UNKNOWN) {
			if (g_to(dv, e, GS_RUNNABLE, ts, -1, -1,
				 e->state == GS_SYSCALL ? "syscall" : "ready", NULL, err) < 0)
				return -1;
		} else if (e->state == GS_RUNNING) {
			e->pending_ready = true;
		}
		e->q = Q_GLOBAL;
		e->qp = -1;
		dv->cur.global_len = r->a2;
		break;
	case EV_GLOBRUNQ_GET: {
		struct ps *P = &dv->ps[p];
		if (r->a1 > 0) {
			P->ring += r->a1 - 1;
			P->pending_once = true;
		}
		p_dirty(dv, p);
		dv->cur.global_len = r->a2;
		struct val *s = row(dv, ST_GLOBAL_GET);
		bind_i64(s, 1, ts);
		bind_i64(s, 2, p);
		bind_i64(s, 3, m);
		bind_i64(s, 4, r->a1);
		bind_i64(s, 5, r->a2);
		if (step(dv, ST_GLOBAL_GET, err) < 0)
			return -1;
		break;
	}
	case EV_G_RUN: {
		struct ps *P = &dv->ps[p];
		const char *src = wsr_g_source_names[r->a1];
		e = g_find(dv, r->g);
		if (e == NULL) {
			/* First seen running (the trace began after it was queued). */
			e = g_new(dv, r->g, ts, GS_RUNNING, NULL, err);
			if (e == NULL)
				return -1;
			e->p = p;
			e->m = m;
		} else {
			if (e->q == Q_RUNNEXT && e->qp >= 0 && e->qp != p &&
			    dv->ps[e->qp].runnext == r->g) {
				dv->ps[e->qp].runnext = 0;
				p_dirty(dv, e->qp);
			}
			/* Run again while "running": its g_stop was lost. */
			if (e->state == GS_RUNNING && g_lose(dv, e, ts, err) < 0)
				return -1;
			if (g_to(dv, e, GS_RUNNING, ts, p, m, NULL, src, err) < 0)
				return -1;
		}
		/* Another G still "running" on this P or M lost its g_stop. */
		if (p_evict(dv, p, r->g, ts, err) < 0)
			return -1;
		dv->ps[p].curg = r->g;
		if (m >= 0) {
			struct ms *M = &dv->ms[m];
			if (m_evict(dv, m, r->g, ts, err) < 0)
				return -1;
			M->curg = r->g;
			if (M->spinning || M->insyscall) {
				/* Its spin_stop or syscall_exit was lost. */
				M->spinning = M->insyscall = false;
				dv->loss_repairs++;
				if (m_set(dv, m, ts, err) < 0 || p_set(dv, p, ts, err) < 0)
					return -1;
			}
		}
		if (P->pending_once) {
			P->pending_once = false;
		} else if (P->runnext == r->g) {
			P->runnext = 0;
		} else if (r->a1 == WSR_SOURCE_LOCAL ||
			   ((r->a1 == WSR_SOURCE_NETPOLL || r->a1 == WSR_SOURCE_TIMER) &&
			    e->q != Q_NONE)) {
			/* A G readied by a timer or the poller keeps that source
			 * wherever it was queued: not the one run at once (above),
			 * not runnext, so from this ring, where a global get or a
			 * steal may have moved it (q still says where it was put).
			 * Q_NONE: the poller ran it directly, from no queue. */
			P->ring--;
		}
		if (P->runnext == r->g)
			P->runnext = 0;
		/* The runtime's schedtick: runs that do not inherit the slice. */
		if (!r->a2)
			P->schedticks++;
		P->runs++;
		if (r->a1 == WSR_SOURCE_RUNNEXT)
			P->runnext_runs++;
		p_dirty(dv, p);
		e->q = Q_NONE;
		e->qp = -1;
		e->pending_ready = false;
		e->runs++;
		if (r->a1 == WSR_SOURCE_STEAL)
			e->stolen++;
		if (e->first_run_ts < 0)
			e->first_run_ts = ts;
		break;
	}
	case EV_G_STOP: {
		const char *reason = wsr_g_reason_names[r->a1];
		e = g_find(dv, r->g);
		if (e == NULL) {
			e = g_new(dv, r->g, ts, GS_RUNNING, NULL, err);
			if (e == NULL)
				return -1;
			e->p = p;
			e->m = m;
		}
		if (e->state == GS_RUNNING)
			e->reason = reason;
		if (p >= 0 && dv->ps[p].curg == r->g)
			dv->ps[p].curg = 0;
		if (m >= 0) {
			/* A stop on M m of another G than the one it runs: that
			 * one's g_stop was lost. */
			if (m_evict(dv, m, r->g, ts, err) < 0)
				return -1;
			dv->ms[m].curg = 0;
		}
		if (r->a1 == WSR_REASON_EXIT) {
			if (g_close(dv, e, ts, NULL, 0, err) < 0 || g_write_row(dv, e, ts, err) < 0)
				return -1;
			count_state(dv, e->state, -1);
			g_delete(dv, e);
			break;
		}
		uint8_t next;
		const char *why = reason;
		int32_t qp = -1;
		/* syscall: the slow end of a call (p = -1): the G is queued
		 * next (globrunq_put, or runqput on a P that went idle). */
		if (r->a1 == WSR_REASON_YIELD || r->a1 == WSR_REASON_PREEMPT ||
		    r->a1 == WSR_REASON_SYSCALL || e->pending_ready) {
			next = GS_RUNNABLE;
			if (e->pending_ready)
				why = "ready";
			if (e->q == Q_RING || e->q == Q_RUNNEXT)
				qp = e->qp;
		} else {
			next = GS_WAITING;
		}
		if (g_close(dv, e, ts, NULL, 0, err) < 0)
			return -1;
		count_state(dv, e->state, -1);
		e->state = next;
		e->start = ts;
		e->p = next == GS_RUNNABLE ? qp : p;
		e->m = next == GS_RUNNABLE ? -1 : m;
		e->reason = why;
		e->pending_ready = false;
		count_state(dv, next, +1);
		break;
	}
	case EV_G_READY:
		e = g_get(dv, r->g, ts, err);
		if (e == NULL)
			return -1;
		if (e->state == GS_WAITING || e->state == GS_SYSCALL || e->state == GS_UNKNOWN) {
			if (g_to(dv, e, GS_RUNNABLE, ts, -1, -1,
				 e->state == GS_SYSCALL ? "syscall" : "ready", NULL, err) < 0)
				return -1;
		} else if (e->state == GS_RUNNING) {
			e->pending_ready = true;
		}
		break;
	case EV_STEAL: {
		int v = (int)r->a1;
		/* p_known() may grow (realloc) dv->ps: take the pointers after it. */
		if (p_known(dv, v, ts, err) < 0)
			return -1;
		struct ps *T = &dv->ps[p];
		struct ps *V = &dv->ps[v];
		int64_t from_ring = r->a2;
		if (r->a3) {
			/* The G the owner found gone at its last put (see runqput),
			 * or the one in runnext now. */
			if (V->rn_inflight > 0)
				V->rn_inflight--;
			else
				V->runnext = 0;
			from_ring--;
		}
		V->ring -= from_ring;
		T->ring += r->a2 - 1;
		T->pending_once = true;
		p_dirty(dv, p);
		p_dirty(dv, v);
		struct val *s = row(dv, ST_STEAL);
		bind_i64(s, 1, ts);
		bind_i64(s, 2, p);
		bind_i64(s, 3, v);
		bind_i64(s, 4, m);
		bind_i64(s, 5, r->a2);
		bind_i64(s, 6, r->a3);
		if (step(dv, ST_STEAL, err) < 0)
			return -1;
		break;
	}
	case EV_SPIN_START:
	case EV_SPIN_STOP:
		/* A spinning M runs no G. */
		if (r->ev == EV_SPIN_START && m >= 0 && m_evict(dv, m, 0, ts, err) < 0)
			return -1;
		dv->cur.spinning_ms = r->a1;
		if (r->ev == EV_SPIN_STOP && r->a2)
			dv->spins_found++;
		if (m >= 0) {
			dv->ms[m].spinning = r->ev == EV_SPIN_START;
			if (m_set(dv, m, ts, err) < 0)
				return -1;
			if (dv->ms[m].p >= 0 && p_set(dv, dv->ms[m].p, ts, err) < 0)
				return -1;
		}
		break;
	case EV_P_IDLE:
		dv->cur.idle_ps = r->a1;
		if (p_evict(dv, p, 0, ts, err) < 0)
			return -1;
		dv->ps[p].idle = true;
		if (dv->ps[p].holder >= 0) {
			if (release(dv, dv->ps[p].holder, p, ts, err) < 0)
				return -1;
		}
		if (p_set(dv, p, ts, err) < 0)
			return -1;
		break;
	case EV_P_BUSY:
		dv->cur.idle_ps = r->a1;
		dv->ps[p].idle = false;
		if (p_set(dv, p, ts, err) < 0)
			return -1;
		/* An M without a P that takes one off the idle list runs it. */
		if (m >= 0 && dv->ms[m].p < 0 && assoc(dv, m, p, ts, err) < 0)
			return -1;
		break;
	case EV_M_PARK:
		dv->cur.idle_ms = r->a1;
		if (m >= 0) {
			struct ms *M = &dv->ms[m];
			if (m_evict(dv, m, 0, ts, err) < 0)
				return -1;
			if (M->p >= 0 && release(dv, m, M->p, ts, err) < 0)
				return -1;
			M->parked = true;
			M->spinning = false;
			M->insyscall = false;
			if (m_set(dv, m, ts, err) < 0)
				return -1;
		}
		break;
	case EV_M_UNPARK:
		dv->cur.idle_ms = r->a1;
		if (m >= 0) {
			dv->ms[m].parked = false;
			if (p >= 0) {
				if (assoc(dv, m, p, ts, err) < 0)
					return -1;
			} else if (m_set(dv, m, ts, err) < 0) {
				return -1;
			}
		}
		break;
	case EV_M_CREATE: {
		int nm = (int)r->a1;
		if (m_ensure(dv, nm, err) < 0)
			return -1;
		if (!dv->ms[nm].known) {
			if (m_known(dv, nm, ts, -1, err) < 0)
				return -1;
			dv->ms[nm].tid = -1;
		}
		dv->ms[nm].has_creator = true;
		dv->ms[nm].creator = m;
		break;
	}
	case EV_SYSCALL_ENTER:
		e = g_get(dv, r->g, ts, err);
		if (e == NULL)
			return -1;
		if (e->state != GS_SYSCALL &&
		    g_to(dv, e, GS_SYSCALL, ts, p, m, "syscall", NULL, err) < 0)
			return -1;
		if (p >= 0) {
			dv->ps[p].syscalls++;
			if (dv->ps[p].curg == r->g)
				dv->ps[p].curg = 0;
		}
		if (m >= 0)
			dv->ms[m].curg = r->g;
		if (m >= 0) {
			dv->ms[m].insyscall = true;
			if (m_set(dv, m, ts, err) < 0)
				return -1;
			if (dv->ms[m].p >= 0 && p_set(dv, dv->ms[m].p, ts, err) < 0)
				return -1;
		}
		break;
	case EV_SYSCALL_EXIT:
		e = g_get(dv, r->g, ts, err);
		if (e == NULL)
			return -1;
		if (m >= 0) {
			struct ms *M = &dv->ms[m];
			M->insyscall = false;
			if (!r->a1 && p < 0 && M->p >= 0 && release(dv, m, M->p, ts, err) < 0)
				return -1;
			if (m_set(dv, m, ts, err) < 0)
				return -1;
			if (M->p >= 0 && p_set(dv, M->p, ts, err) < 0)
				return -1;
		}
		/* With a P (its own, fast, or an idle one) the G runs on; with
		 * none it stays in the call until its g_stop(syscall). */
		if (p >= 0) {
			if (e->state != GS_RUNNING &&
			    g_to(dv, e, GS_RUNNING, ts, p, m, NULL, NULL, err) < 0)
				return -1;
			if (p_evict(dv, p, r->g, ts, err) < 0)
				return -1;
			dv->ps[p].curg = r->g;
		}
		break;
	case EV_HANDOFF: {
		int to = (int)r->a1;
		if (p < 0)
			break;
		if (m >= 0 && m < dv->nm && dv->ms[m].known && release(dv, m, p, ts, err) < 0)
			return -1;
		if (to >= 0) {
			if (m_known(dv, to, ts, -1, err) < 0 || assoc(dv, to, p, ts, err) < 0)
				return -1;
		}
		break;
	}
	case EV_RETAKE:
		if (p >= 0 && m >= 0 && m < dv->nm && dv->ms[m].known &&
		    release(dv, m, p, ts, err) < 0)
			return -1;
		break;
	default:
		break;
	}
	return 0;
}

/* ---- schedtrace check ----
 *
 * Every event is handed to the cross-check (schedcheck.c) with the changes
 * it made to the quantities a schedtrace snapshot reads: the five global
 * counts (SQ_*), then per P its ring length (SQ_P0 + 2p) and its schedtick
 * (SQ_P0 + 2p + 1). The snapshot itself comes with the schedtrace event. */
enum {
	SQ_IDLEPROCS,
	SQ_THREADS,
	SQ_SPINNING,
	SQ_IDLETHREADS,
	SQ_RUNQUEUE,
	SQ_P0
};

static const char *const sq_names[SQ_P0] = {"idleprocs", "threads", "spinningthreads",
					    "idlethreads", "runqueue"};

struct sq_before {
	int64_t c[SQ_P0];
	int p[2];
	int64_t ring[2], ticks[2];
};

static void sq_globals(const struct derive *dv, int64_t *c)
{
	c[SQ_IDLEPROCS] = dv->cur.idle_ps;
	c[SQ_THREADS] = dv->cur.threads;
	c[SQ_SPINNING] = dv->cur.spinning_ms;
	c[SQ_IDLETHREADS] = dv->cur.idle_ms;
	c[SQ_RUNQUEUE] = dv->cur.global_len;
}

/* What an event may change: the globals and the rings of its P and, for a
 * steal, the victim. */
static void sq_take(const struct derive *dv, const struct wsr_rec *r, struct sq_before *b)
{
	sq_globals(dv, b->c);
	b->p[0] = r->p;
	b->p[1] = r->ev == EV_STEAL ? (int)r->a1 : -1;
	for (int k = 0; k < 2; k++) {
		int p = b->p[k];
		bool have = p >= 0 && p < dv->np;
		b->ring[k] = have ? dv->ps[p].ring : 0;
		b->ticks[k] = have ? dv->ps[p].schedticks : 0;
	}
}

static int sq_feed(struct derive *dv, const struct wsr_rec *r, const struct sq_before *b)
{
	struct sc_change ch[SQ_P0 + 4];
	int64_t c[SQ_P0];
	int n = 0;

	sq_globals(dv, c);
	for (int k = 0; k < SQ_P0; k++)
		if (c[k] != b->c[k])
			ch[n++] = (struct sc_change){k, c[k] - b->c[k]};
	for (int k = 0; k < 2; k++) {
		int p = b->p[k];
		if (p < 0 || p >= dv->np)
			continue;
		if (dv->ps[p].ring != b->ring[k])
			ch[n++] = (struct sc_change){SQ_P0 + 2 * p, dv->ps[p].ring - b->ring[k]};
		if (dv->ps[p].schedticks != b->ticks[k])
			ch[n++] = (struct sc_change){SQ_P0 + 2 * p + 1,
						     dv->ps[p].schedticks - b->ticks[k]};
	}
	bool sysmon = r->ev == EV_RETAKE || r->ev == EV_HANDOFF || r->ev == EV_PREEMPT ||
		      r->ev == EV_SCHEDTRACE;
	/* Not "qualifying" for rule (c): what an M emits between taking a G
	 * and its g_run (schedcheck.c). */
	bool aside = r->ev == EV_SPIN_STOP || r->ev == EV_STEAL_SCAN || r->ev == EV_SPIN_START ||
		     r->ev == EV_M_UNPARK || r->ev == EV_P_BUSY || r->ev == EV_M_CREATE;
	return schedcheck_event(dv->sc, (int64_t)dv->events - 1, r->ts, sysmon ? -1 : r->m,
				r->ev == EV_RUNQPUT, !aside, ch, n);
}

/* Integers of the JSON array at "key":[...] in the schedtrace record (at
 * most max); -1 when absent or not an array. */
static int json_ints(const char *json, const char *key, int64_t *out, int max)
{
	char pat[32];
	const char *q;
	int n = 0;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	q = json != NULL ? strstr(json, pat) : NULL;
	if (q == NULL)
		return -1;
	q += strlen(pat);
	if (*q != '[')
		return -1;
	q++;
	while (*q != ']' && *q != '\0' && n < max) {
		char *end;
		long long v = strtoll(q, &end, 10);
		if (end == q)
			return -1;
		out[n++] = v;
		q = end;
		if (*q == ',')
			q++;
	}
	return n;
}

/* The snapshot of a schedtrace event: each field with the window in which
 * the runtime read it (read_ts; the event's time in older traces). */
static int sq_snapshot(struct derive *dv, const struct wsr_rec *r, const char *extra,
		       struct wsr_err *err)
{
	int np = dv->gomaxprocs > 0 ? dv->gomaxprocs : 0;
	int64_t *buf = malloc((size_t)(3 * np + 1) * sizeof(*buf));
	struct sc_read *rd = malloc((size_t)(SQ_P0 + 2 * np) * sizeof(*rd));
	int n = 0, ret = -1;

	if (buf == NULL || rd == NULL) {
		err_push(err, "out of memory");
		goto out;
	}
	int64_t *runq = buf, *ticks = buf + np, *rts = buf + 2 * np;
	int nq = json_ints(extra, "runq", runq, np);
	int nt = json_ints(extra, "schedticks", ticks, np);
	int nr = json_ints(extra, "read_ts", rts, np);
	if (nr != np)
		nr = 0;
	/* read_ts[i]..read_ts[i+1] brackets P i (the globals with P0). */
#define WIN_B(i) (nr > 0 ? rts[(i)] : r->ts)
#define WIN_E(i) (nr > 0 && (i) + 1 < np ? rts[(i) + 1] : r->ts)
	static const char *const gkey[SQ_P0] = {"idleprocs", "threads", "spinningthreads",
						"idlethreads", "runqueue"};
	for (int k = 0; k < SQ_P0; k++) {
		char pat[32];
		const char *q;
		snprintf(pat, sizeof(pat), "\"%s\":", gkey[k]);
		q = extra != NULL ? strstr(extra, pat) : NULL;
		if (q == NULL)
			continue;
		rd[n++] = (struct sc_read){k, strtoll(q + strlen(pat), NULL, 10), WIN_B(0), WIN_E(0)};
	}
	for (int i = 0; i < np; i++) {
		if (i < nq)
			rd[n++] = (struct sc_read){SQ_P0 + 2 * i, runq[i], WIN_B(i), WIN_E(i)};
		if (i < nt)
			rd[n++] = (struct sc_read){SQ_P0 + 2 * i + 1, ticks[i], WIN_B(i), WIN_E(i)};
	}
#undef WIN_B
#undef WIN_E
	if (schedcheck_snapshot(dv->sc, (int64_t)dv->events - 1, r->ts, rd, n) < 0) {
		err_push(err, "out of memory");
		goto out;
	}
	ret = 0;
out:
	free(buf);
	free(rd);
	return ret;
}

static int sq_row(void *ctx, const struct sc_row *f)
{
	struct derive *dv = ctx;
	struct val *s = row(dv, ST_SCHED_FIELD);

	bind_i64(s, 1, f->snap_id);
	bind_i64(s, 2, f->snap_ts);
	if (f->q < SQ_P0) {
		bind_text(s, 3, sq_names[f->q]);
		bind_null(s, 4);
	} else {
		bind_text(s, 3, (f->q - SQ_P0) % 2 == 0 ? "runq" : "schedticks");
		bind_i64(s, 4, (f->q - SQ_P0) / 2);
	}
	bind_i64(s, 5, f->rt);
	bind_i64(s, 6, f->recon);
	bind_i64(s, 7, f->b);
	bind_i64(s, 8, f->e);
	if (f->racing == NULL)
		bind_null(s, 9);
	else if (bind_text_copy(s, 9, f->racing, -1) < 0) {
		err_push(dv->sc_err, "out of memory");
		return -1;
	}
	bind_i64(s, 10, f->explained);
	return step(dv, ST_SCHED_FIELD, dv->sc_err);
}

static int insert_event(struct derive *dv, const struct wsr_rec *r, const char *extra,
			struct wsr_err *err)
{
	struct val *s = row(dv, ST_EVENT);
	const char *name;
	const char *x = NULL;
	int xlen = 0;

	if (r->ev < EV_COUNT) {
		name = wsr_catalog[r->ev].name;
		if (r->extra_len > 0) {
			x = extra;
			xlen = (int)strnlen(extra, r->extra_len);
		}
	} else {
		/* "name\0{json}" */
		name = extra;
		size_t nl = strnlen(extra, r->extra_len);
		if (nl + 1 < r->extra_len) {
			x = extra + nl + 1;
			xlen = (int)strnlen(x, r->extra_len - nl - 1);
		}
		if (strncmp(name, "wsr:", 4) == 0)
			name += 4;
		int k = 0;
		while (k < dv->n_other && strcmp(dv->other_names[k], name) != 0)
			k++;
		if (k == dv->n_other && k < MAX_OTHER_NAMES) {
			dv->other_names[k] = strdup(name);
			if (dv->other_names[k] == NULL) {
				err_push(err, "out of memory");
				return -1;
			}
			dv->n_other++;
		}
		if (k < dv->n_other)
			dv->other_counts[k]++;
		else
			dv->other_overflow++;
	}
	bind_i64(s, 1, (int64_t)dv->events);
	bind_i64(s, 2, r->ts);
	if (r->ev < EV_COUNT)
		bind_text(s, 3, name);
	else if (bind_text_copy(s, 3, name, -1) < 0)
		goto oom;
	bind_opt(s, 4, r->flags & REC_F_CPU, r->cpu);
	bind_opt(s, 5, r->flags & REC_F_TID, r->tid);
	bind_opt(s, 6, r->flags & REC_F_VPID, r->vpid);
	bind_opt(s, 7, r->flags & REC_F_P, r->p);
	bind_opt(s, 8, r->flags & REC_F_M, r->m);
	bind_opt(s, 9, r->flags & REC_F_G, r->g);
	bind_opt(s, 10, r->flags & REC_F_A1, r->a1);
	bind_opt(s, 11, r->flags & REC_F_A2, r->a2);
	bind_opt(s, 12, r->flags & REC_F_A3, r->a3);
	if (x == NULL)
		bind_null(s, 13);
	else if (bind_text_copy(s, 13, x, xlen) < 0)
		goto oom;
	return step(dv, ST_EVENT, err);
oom:
	err_push(err, "out of memory");
	return -1;
}

static void meta_env(struct derive *dv, const char *key, const char *val)
{
	if (strcmp(key, "hostname") == 0)
		snprintf(dv->hostname, sizeof(dv->hostname), "%s", val);
	else if (strcmp(key, "procname") == 0)
		snprintf(dv->procname, sizeof(dv->procname), "%s", val);
	else if (strcmp(key, "tracer_name") == 0)
		snprintf(dv->tracer, sizeof(dv->tracer), "%s", val);
	else if (strcmp(key, "vpid") == 0)
		snprintf(dv->env_vpid, sizeof(dv->env_vpid), "%s", val);
	else if (strcmp(key, "domain") == 0)
		snprintf(dv->domain, sizeof(dv->domain), "%s", val);
	else if (strcmp(key, "tracer_major") == 0)
		dv->tracer_major = atoi(val);
	else if (strcmp(key, "tracer_minor") == 0)
		dv->tracer_minor = atoi(val);
}

int derive_rec(struct derive *dv, const struct wsr_rec *r, const char *extra, struct wsr_err *err)
{
	switch (r->type) {
	case REC_STREAM: {
		struct stream_info *si = &dv->streams[r->stream];
		free(si->name);
		si->name = strdup(extra != NULL && r->extra_len > 0 ? extra : "?");
		si->cpu = (r->flags & REC_F_A1) ? (int32_t)r->a1 : -1;
		si->last_ts = INT64_MIN;
		si->declared = true;
		return si->name != NULL ? 0 : -1;
	}
	case REC_META:
		if (extra != NULL && r->extra_len > 1) {
			size_t kl = strnlen(extra, r->extra_len);
			if (kl + 1 < r->extra_len)
				meta_env(dv, extra, extra + kl + 1);
		}
		return 0;
	case REC_DISCARDED: {
		struct stream_info *si = &dv->streams[r->stream];
		struct val *s = row(dv, ST_DISCARDED);
		bool ev = r->a1 == REC_DISC_EVENTS;
		bind_text(s, 1, ev ? "events" : "packets");
		if (bind_text_copy(s, 2, si->name != NULL ? si->name : "?", -1) < 0) {
			err_push(err, "out of memory");
			return -1;
		}
		bind_id(s, 3, si->cpu);
		bind_opt(s, 4, r->flags & REC_F_TS, r->ts);
		bind_opt(s, 5, r->flags & REC_F_G, r->g);
		bind_opt(s, 6, r->flags & REC_F_A2, r->a2);
		if (step(dv, ST_DISCARDED, err) < 0)
			return -1;
		dv->discarded_records++;
		/* the lost events may have moved Gs in or out of any ring */
		for (int k = 0; k < dv->np; k++) {
			dv->ps[k].ring_unsynced = true;
			dv->ps[k].rn_inflight = 0;
		}
		if (!(r->flags & REC_F_A2))
			dv->discarded_uncounted++;
		if (ev)
			dv->discarded_events += (r->flags & REC_F_A2) ? (uint64_t)r->a2 : 1;
		else
			dv->discarded_packets += (r->flags & REC_F_A2) ? (uint64_t)r->a2 : 1;
		return 0;
	}
	case REC_EVENT:
		break;
	default:
		return 0;
	}

	/* One process per database: the state machines cannot mix two runtimes. */
	if (r->flags & REC_F_VPID) {
		if (dv->want_vpid > 0 && r->vpid != dv->want_vpid) {
			dv->skipped_other_vpid++;
			return 0;
		}
		if (dv->vpid == 0) {
			dv->vpid = r->vpid;
		} else if (r->vpid != dv->vpid) {
			err_input(err,
				  "%s: the trace holds events of several processes (vpid %" PRId64
				  " and %d): pass --vpid PID to analyse one (wsr run records only "
				  "its child)",
				  dv->trace, dv->vpid, r->vpid);
			return -1;
		}
	}

	if (validate(dv, r, extra, err) < 0)
		return -1;
	dv->streams[r->stream].last_ts = r->ts;
	if (!dv->any_ts) {
		dv->any_ts = true;
		dv->first_ts = r->ts;
	} else if (r->ts != dv->last_ts) {
		if (flush_counters(dv, dv->last_ts, err) < 0)
			return -1;
	}
	dv->last_ts = r->ts;
	if (insert_event(dv, r, extra, err) < 0)
		return -1;
	dv->events++;
	dv->per_ev[r->ev < EV_COUNT + 2 ? r->ev : EV_FOREIGN]++;
	if (r->ev == EV_FOREIGN) {
		dv->foreign_events++;
		return 0;
	}
	dv->wsr_events++;
	if (r->ev == EV_SCHEDTRACE)
		dv->schedtraces++;
	if (r->ev >= EV_COUNT)
		return 0;
	struct sq_before before;
	sq_take(dv, r, &before);
	if (apply(dv, r, extra, err) < 0)
		return -1;
	if (sq_feed(dv, r, &before) < 0) {
		err_push(err, "out of memory");
		return -1;
	}
	/* A waker lowers nmidle before this M's m_unpark (schedcheck.c, (d)). */
	if (r->ev == EV_M_PARK && r->m >= 0 &&
	    schedcheck_pending(dv->sc, r->m, SQ_IDLETHREADS, -1, (int64_t)dv->events - 1, r->ts) <
		    0) {
		err_push(err, "out of memory");
		return -1;
	}
	if (r->ev == EV_SCHEDTRACE)
		return sq_snapshot(dv, r, extra, err);
	return 0;
}

/* A round schedtrace interval giving about 20 lines over the trace (1 ms at
 * least). */
static int64_t nice_interval(int64_t duration)
{
	static const int64_t steps[] = {1, 2, 5};
	int64_t target = duration / 20, best = 1000000;

	if (target <= 0)
		return 1000000;
	for (int64_t dec = 1000; dec <= (int64_t)1e12; dec *= 10)
		for (int k = 0; k < 3; k++)
			if (steps[k] * dec <= target)
				best = steps[k] * dec;
	/* Go's SCHED lines count whole milliseconds: no finer default. */
	return best < 1000000 ? 1000000 : best;
}

/* The scheduling-latency distribution (nearest-rank p50/p90/p99 and max of
 * sched_latency), computed once here in one sorted pass so that reports
 * need not sort millions of intervals each time: meta.latency_n,
 * latency_p50_ns, latency_p90_ns, latency_p99_ns, latency_max_ns. */
/* The value of nearest rank `rank` (1-based) of sched_latency. */
static int lat_rank(struct derive *dv, uint64_t rank, int64_t *out, struct wsr_err *err)
{
	sqlite3_stmt *st = NULL;
	uint64_t before = 0;
	int b = 0, ret = -1;
	int64_t lo, last;

	*out = 0;
	if (rank == 0)
		return 0;
	while (b < LAT_BUCKETS - 1 && before + dv->lat_hist[b] < rank)
		before += dv->lat_hist[b++];
	lat_bounds(b, &lo, &last);
	if (db_prepare(dv->db, &st,
		       "SELECT latency_ns FROM sched_latency WHERE latency_ns >= ?1 AND "
		       "latency_ns <= ?2 ORDER BY 1 LIMIT 1 OFFSET ?3",
		       err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, lo);
	sqlite3_bind_int64(st, 2, last);
	sqlite3_bind_int64(st, 3, (int64_t)(rank - before - 1));
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
	} else {
		err_push(err, "sqlite: latency rank %" PRIu64 ": %s", rank,
			 rc == SQLITE_DONE ? "not in its bucket" : sqlite3_errmsg(dv->db));
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

static int latency_meta(struct derive *dv, struct wsr_err *err)
{
	uint64_t n = dv->lat_n;
	int64_t p50 = 0, p90 = 0, p99 = 0;

	if (lat_rank(dv, (n * 50 + 99) / 100, &p50, err) < 0 ||
	    lat_rank(dv, (n * 90 + 99) / 100, &p90, err) < 0 ||
	    lat_rank(dv, (n * 99 + 99) / 100, &p99, err) < 0)
		return -1;
	if (db_meta_int(dv->db, "latency_n", (int64_t)n, err) < 0 ||
	    db_meta_int(dv->db, "latency_p50_ns", p50, err) < 0 ||
	    db_meta_int(dv->db, "latency_p90_ns", p90, err) < 0 ||
	    db_meta_int(dv->db, "latency_p99_ns", p99, err) < 0 ||
	    db_meta_int(dv->db, "latency_max_ns", n > 0 ? dv->lat_max : 0, err) < 0)
		return -1;
	return 0;
}

int derive_finish(struct derive *dv, struct wsr_err *err)
{
	int64_t end = dv->last_ts;
	char buf[512];

	if (dv->finished)
		return 0;
	dv->finished = true;
	if (dv->any_ts && flush_counters(dv, end, err) < 0)
		return -1;
	if (dv->written_any) {
		const struct counters *w = &dv->written;
		int64_t dt = end - dv->written_ts;
		if (w->idle_ps > 0 && w->global_len > 0)
			dv->idle_global_ns += dt;
		if (w->idle_ps > 0 && w->runnable_gs > 0)
			dv->idle_runnable_ns += dt;
	}
	/* Close what is open at the last event: cut = 1. */
	for (size_t i = 0; i < dv->gn; i++) {
		struct gs *e = &dv->gtab[i];
		if (e->g == 0)
			continue;
		if (g_close(dv, e, end, NULL, 1, err) < 0 || g_write_row(dv, e, -1, err) < 0)
			return -1;
	}
	for (int p = 0; p < dv->np; p++) {
		struct ps *P = &dv->ps[p];
		if (!P->known)
			continue;
		if (P->state != PS_NONE && end > P->start &&
		    state_row(dv, ST_P_STATE, p, pstate_names[P->state], P->start, end, P->st_m,
			      1, err) < 0)
			return -1;
		struct val *s = row(dv, ST_P);
		bind_i64(s, 1, p);
		bind_i64(s, 2, P->schedticks);
		bind_i64(s, 3, P->syscalls);
		bind_i64(s, 4, P->run_ns);
		bind_i64(s, 5, P->runnext_runs);
		bind_i64(s, 6, P->runs);
		if (step(dv, ST_P, err) < 0)
			return -1;
	}
	for (int m = 0; m < dv->nm; m++) {
		struct ms *M = &dv->ms[m];
		if (!M->known)
			continue;
		if (M->state != MS_NONE && end > M->start &&
		    state_row(dv, ST_M_STATE, m, mstate_names[M->state], M->start, end, M->st_p,
			      1, err) < 0)
			return -1;
		struct val *s = row(dv, ST_M);
		bind_i64(s, 1, m);
		bind_opt(s, 2, M->tid >= 0, M->tid);
		bind_i64(s, 3, M->created_ts);
		bind_opt(s, 4, M->has_creator, M->creator);
		if (step(dv, ST_M, err) < 0)
			return -1;
	}

	dv->sc_err = err;
	if (schedcheck_finish(dv->sc, sq_row, dv) < 0)
		return -1;
	for (int k = 0; k < EV_COUNT + dv->n_other; k++) {
		const char *name =
			k < EV_COUNT ? wsr_catalog[k].name : dv->other_names[k - EV_COUNT];
		uint64_t n = k < EV_COUNT ? dv->per_ev[k] : dv->other_counts[k - EV_COUNT];
		if (n == 0)
			continue;
		struct val *s = row(dv, ST_EVENT_COUNT);
		bind_text(s, 1, name);
		bind_i64(s, 2, (int64_t)n);
		if (step(dv, ST_EVENT_COUNT, err) < 0)
			return -1;
	}
	if (flush_all(dv, err) < 0)
		return -1;
	if (dv->other_overflow > 0 &&
	    db_exec(dv->db,
		    "DELETE FROM event_counts; INSERT INTO event_counts SELECT name, count(*) "
		    "FROM events GROUP BY name",
		    err) < 0)
		return -1;

	int64_t duration = dv->any_ts ? end - dv->first_ts : 0;
	snprintf(buf, sizeof(buf), "%d.%d", dv->tracer_major, dv->tracer_minor);
	if (dv->env_vpid[0] == '\0' && dv->vpid != 0)
		snprintf(dv->env_vpid, sizeof(dv->env_vpid), "%" PRId64, dv->vpid);

	struct {
		const char *k;
		int64_t v;
		bool ok;
	} ints[] = {
		{"schema_version", WSR_DB_VERSION, true},
		{"gomaxprocs", dv->gomaxprocs, dv->gomaxprocs > 0},
		{"runq_size", dv->runq_size, dv->gomaxprocs > 0},
		{"start_ts", dv->first_ts, dv->any_ts},
		{"end_ts", end, dv->any_ts},
		{"duration_ns", duration, dv->any_ts},
		{"events", (int64_t)dv->events, true},
		{"wsr_events", (int64_t)dv->wsr_events, true},
		{"foreign_events", (int64_t)dv->foreign_events, true},
		{"schedtrace_events", (int64_t)dv->schedtraces, true},
		{"discarded_events", (int64_t)dv->discarded_events, true},
		{"discarded_packets", (int64_t)dv->discarded_packets, true},
		{"discarded_records", (int64_t)dv->discarded_records, true},
		{"discarded_uncounted", (int64_t)dv->discarded_uncounted, true},
		{"g_count", (int64_t)dv->gtotal, true},
		{"g_live_peak", (int64_t)dv->gpeak, true},
		{"schedtrace_interval_ns", nice_interval(duration), true},
		{"idle_while_global_ns", dv->idle_global_ns, true},
		{"idle_while_runnable_ns", dv->idle_runnable_ns, true},
		{"spins_found", (int64_t)dv->spins_found, true},
		{"loss_repairs", (int64_t)dv->loss_repairs, true},
		{"schedtrace_fields", schedcheck_fields(dv->sc), true},
		{"schedtrace_unexplained", schedcheck_unexplained(dv->sc), true},
		{"other_process_events", (int64_t)dv->skipped_other_vpid, dv->want_vpid > 0},
	};

	for (size_t k = 0; k < sizeof(ints) / sizeof(ints[0]); k++)
		if (ints[k].ok && db_meta_int(dv->db, ints[k].k, ints[k].v, err) < 0)
			return -1;

	struct {
		const char *k;
		const char *v;
	} texts[] = {
		{"trace_path", dv->trace},
		{"hostname", dv->hostname},
		{"procname", dv->procname},
		{"vpid", dv->env_vpid},
		{"tracer", dv->tracer},
		{"tracer_version", dv->tracer[0] != '\0' ? buf : ""},
		{"domain", dv->domain},
		{"runtime_version", dv->runtime_version},
		{"analyzer_version", WSR_VERSION},
		{"clock", "ns from origin (babeltrace2 clock snapshot)"},
	};

	for (size_t k = 0; k < sizeof(texts) / sizeof(texts[0]); k++)
		if (texts[k].v[0] != '\0' && db_meta_text(dv->db, texts[k].k, texts[k].v, err) < 0)
			return -1;
	if (flush_all(dv, err) < 0 || latency_meta(dv, err) < 0)
		return -1;
	/* The work/span DAG reads the g and g_state rows flushed above. */
	return dag_build(dv->db, err);
}
