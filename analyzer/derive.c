/*
 * derive.c - the one-pass deriver from wsr records to database rows (see
 * derive.h, derive_int.h and docs/schema.md): the front of the pipe inside
 * the analyzer.
 *
 * Design. Records arrive in time order (the muxer's). Each event is
 * validated (validate.c), stored as an events row, then applied to the
 * trackers in a fixed order: the emitter's P and M (pmstate.c), then the
 * event's own handler (gstate.c for G events, counters.c for queue events,
 * pmstate.c for P and M events), then the schedtrace cross-check
 * (schedfeed.c). derive_finish() closes what is open and writes the
 * per-G/P/M rows, the event counts and meta, then builds the DAG (dag.c).
 *
 * Invariants:
 *   - Rows are written through rows.c inside the caller's transaction.
 *   - Counters rows are written when the time moves on, so one row holds
 *     the values after every event at its ts; they are columns of the last
 *     event at that ts, so each events row is held (ev_pend, its texts
 *     copied) until the next event or derive_finish().
 *   - Memory follows the live Gs, the Ps and the Ms, never the events.
 * Concurrency: single-threaded.
 * Rejected: keeping every G in memory until the end (memory would follow
 *   events).
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "db.h"
#include "derive_int.h"
#include "schedcheck.h"

struct derive *derive_create(sqlite3 *db, const char *trace, struct wsr_err *err)
{
	struct derive *dv = calloc(1, sizeof(*dv));

	if (dv == NULL) {
		err_push(err, "out of memory");
		return NULL;
	}
	dv->db = db;
	dv->trace = strdup(trace);
	dv->val.trace = dv->trace;
	dv->sc = schedcheck_create();
	dv->dag = dag_create(false);
	if (dv->trace == NULL || dv->sc == NULL || dv->dag == NULL || gtable_init(&dv->gt) < 0) {
		err_push(err, "out of memory");
		goto fail;
	}
	if (latency_open(&dv->lat, db, err) < 0)
		goto fail;
	dv->rows = rows_create(db, err);
	if (dv->rows == NULL)
		goto fail;
	return dv;
fail:
	derive_destroy(dv);
	return NULL;
}

void derive_destroy(struct derive *dv)
{
	if (dv == NULL)
		return;
	rows_destroy(dv->rows);
	latency_close(&dv->lat);
	validate_free(&dv->val);
	for (int i = 0; i < dv->n_other; i++)
		free(dv->other_names[i]);
	/* Every entry's DAG state: a G of id 0 (bad input) looks like a free
	 * slot but has one too; a freed slot has none (dag_g_exit). */
	for (size_t i = 0; dv->gt.gtab != NULL && i < dv->gt.gn; i++)
		dag_g_free(&dv->gt.gtab[i]);
	dag_destroy(dv->dag);
	gtable_free(&dv->gt);
	free(dv->ev_name);
	free(dv->ev_extra);
	pm_destroy(dv);
	free(dv->trace);
	schedcheck_destroy(dv->sc);
	free(dv->sq_p);
	free(dv);
}

void derive_set_vpid(struct derive *dv, int64_t vpid)
{
	dv->val.want_vpid = vpid;
}

void derive_set_dag_rows(struct derive *dv, bool all)
{
	dag_set_all(dv->dag, all);
}

uint64_t derive_event_count(const struct derive *dv)
{
	return dv->events;
}

int64_t derive_last_ts(const struct derive *dv)
{
	return dv->val.last_ts;
}

uint64_t derive_wsr_event_count(const struct derive *dv)
{
	return dv->wsr_events;
}

/* Counts an event outside the catalog under its name. */
static int count_other(struct derive *dv, const char *name, struct wsr_err *err)
{
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
	return 0;
}

static int64_t opt(const struct wsr_rec *r, uint32_t flag, int64_t v)
{
	return (r->flags & flag) ? v : ROW_NULL;
}

/* A copy of s (NULL stays NULL) in *buf, grown as needed. */
static int keep_text(char **buf, size_t *cap, const char *s, const char **out,
		     struct wsr_err *err)
{
	size_t n = s != NULL ? strlen(s) + 1 : 0;

	*out = NULL;
	if (s == NULL)
		return 0;
	if (n > *cap) {
		size_t c = *cap > 0 ? *cap : 256;
		while (c < n)
			c *= 2;
		char *b = realloc(*buf, c);
		if (b == NULL) {
			err_push(err, "out of memory");
			return -1;
		}
		*buf = b;
		*cap = c;
	}
	memcpy(*buf, s, n);
	*out = *buf;
	return 0;
}

/* The held event row goes out (with the counters, if counters_flush()
 * set them on it). */
static int emit_event(struct derive *dv, struct wsr_err *err)
{
	if (!dv->ev_pending)
		return 0;
	dv->ev_pending = false;
	return rows_add(dv->rows, ROWS_EVENTS, &dv->ev_pend, err);
}

/* The event's row is held until the next event: if the time moves on then,
 * the counters after it are columns of this row (counters.c). */
static int insert_event(struct derive *dv, const struct wsr_rec *r, const char *extra,
			struct wsr_err *err)
{
	const char *name;
	const char *x = NULL;

	if (r->ev < EV_COUNT) {
		name = wsr_catalog[r->ev].name;
		if (r->extra_len > 0)
			x = extra;
	} else {
		/* "name\0{json}" */
		name = extra;
		size_t nl = strlen(extra);
		if (nl + 1 < r->extra_len)
			x = extra + nl + 1;
		if (strncmp(name, "wsr:", 4) == 0)
			name += 4;
		if (count_other(dv, name, err) < 0)
			return -1;
	}
	if (emit_event(dv, err) < 0)
		return -1;
	/* built in place: it is held */
	struct row_event *row = &dv->ev_pend;
	row->id = (int64_t)dv->events;
	row->ts = r->ts;
	row->name = name;
	row->cpu = opt(r, REC_F_CPU, r->cpu);
	row->tid = opt(r, REC_F_TID, r->tid);
	row->vpid = opt(r, REC_F_VPID, r->vpid);
	row->p = opt(r, REC_F_P, r->p);
	row->m = opt(r, REC_F_M, r->m);
	row->g = opt(r, REC_F_G, r->g);
	row->a1 = opt(r, REC_F_A1, r->a1);
	row->a2 = opt(r, REC_F_A2, r->a2);
	row->a3 = opt(r, REC_F_A3, r->a3);
	row->extra = NULL;
	row->idle_ps = row->spinning_ms = row->idle_ms = row->threads = ROW_NULL;
	row->running_gs = row->runnable_gs = row->global_len = ROW_NULL;
	/* a catalog name is static; another one, and the extra, are the decoder's */
	if ((r->ev >= EV_COUNT &&
	     keep_text(&dv->ev_name, &dv->ev_name_cap, name, &row->name, err) < 0) ||
	    (x != NULL && keep_text(&dv->ev_extra, &dv->ev_extra_cap, x, &row->extra, err) < 0))
		return -1;
	dv->ev_pending = true;
	return 0;
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

static int discarded(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err)
{
	const struct stream_info *si = &dv->val.streams[r->stream];
	bool ev = r->a1 == REC_DISC_EVENTS;
	struct row_discarded row = {
		.kind = ev ? "events" : "packets",
		.stream = si->name != NULL ? si->name : "?",
		.cpu = si->cpu,
		.begin_ts = opt(r, REC_F_TS, r->ts),
		.end_ts = opt(r, REC_F_G, r->g),
		.count = opt(r, REC_F_A2, r->a2),
	};

	if (rows_add(dv->rows, ROWS_DISCARDED, &row, err) < 0)
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

/* The trackers, in order, on one catalog event. */
static int apply(struct derive *dv, const struct wsr_rec *r, const char *extra, struct wsr_err *err)
{
	if (pm_emitter(dv, r, err) < 0)
		return -1;
	switch (r->ev) {
	case EV_INIT:
		return ev_init(dv, r, extra, err);
	case EV_G_CREATE:
		return ev_g_create(dv, r, err);
	case EV_RUNQPUT:
	case EV_GLOBRUNQ_PUT:
		if (ev_g_queued(dv, r, err) < 0)
			return -1;
		return ev_queue(dv, r, err);
	case EV_RUNQ_SPILL:
	case EV_GLOBRUNQ_GET:
	case EV_STEAL:
		return ev_queue(dv, r, err);
	case EV_G_RUN:
		return ev_g_run(dv, r, err);
	case EV_G_STOP:
		return ev_g_stop(dv, r, err);
	case EV_G_READY:
		return ev_g_ready(dv, r, err);
	case EV_SYSCALL_ENTER:
	case EV_SYSCALL_EXIT:
		return ev_syscall(dv, r, err);
	default:
		return ev_pm(dv, r, err);
	}
}

static int derive_event(struct derive *dv, const struct wsr_rec *r, const char *extra,
			struct wsr_err *err)
{
	int keep;

	/* rec.h: an extra is NUL-terminated (rows.c reads it as a string) */
	if (r->extra_len > 0 && (extra == NULL || extra[r->extra_len - 1] != '\0')) {
		err_push(err, "internal: record extra not NUL-terminated");
		return -1;
	}
	keep = validate_vpid(&dv->val, r, err);
	if (keep <= 0)
		return keep;
	if (validate_event(&dv->val, r, extra, dv->gomaxprocs, dv->events, err) < 0)
		return -1;
	bool first = !dv->val.any_ts;
	int64_t prev = dv->val.last_ts;
	validate_accept(&dv->val, r);
	if (first)
		dv->first_ts = r->ts;
	else if (r->ts != prev) {
		if (counters_flush(dv, prev, err) < 0)
			return -1;
		dag_time(dv);
	}
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
	if (dag_before(dv, r, err) < 0 || apply(dv, r, extra, err) < 0 || dag_after(dv, r, err) < 0)
		return -1;
	return sq_event(dv, r, extra, err);
}

int derive_rec(struct derive *dv, const struct wsr_rec *r, const char *extra, struct wsr_err *err)
{
	switch (r->type) {
	case REC_STREAM:
		return validate_stream(&dv->val, r, extra, err);
	case REC_META:
		if (extra != NULL && r->extra_len > 1) {
			size_t kl = strnlen(extra, r->extra_len);
			if (kl + 1 < r->extra_len)
				meta_env(dv, extra, extra + kl + 1);
		}
		return 0;
	case REC_DISCARDED:
		return discarded(dv, r, err);
	case REC_EVENT:
		return derive_event(dv, r, extra, err);
	default:
		return 0;
	}
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

static int event_counts(struct derive *dv, struct wsr_err *err)
{
	for (int k = 0; k < EV_COUNT + dv->n_other; k++) {
		struct row_event_count row = {
			.name = k < EV_COUNT ? wsr_catalog[k].name : dv->other_names[k - EV_COUNT],
			.n = (int64_t)(k < EV_COUNT ? dv->per_ev[k]
						    : dv->other_counts[k - EV_COUNT]),
		};
		if (row.n != 0 && rows_add(dv->rows, ROWS_EVENT_COUNTS, &row, err) < 0)
			return -1;
	}
	if (rows_flush(dv->rows, err) < 0)
		return -1;
	if (dv->other_overflow > 0 && rows_recount_events(dv->rows, err) < 0)
		return -1;
	return 0;
}

static int write_meta(struct derive *dv, struct wsr_err *err)
{
	int64_t end = dv->val.last_ts;
	char buf[512];
	int64_t duration = dv->val.any_ts ? end - dv->first_ts : 0;
	bool any_ts = dv->val.any_ts;

	snprintf(buf, sizeof(buf), "%d.%d", dv->tracer_major, dv->tracer_minor);
	if (dv->env_vpid[0] == '\0' && dv->val.vpid != 0)
		snprintf(dv->env_vpid, sizeof(dv->env_vpid), "%" PRId64, dv->val.vpid);

	struct {
		const char *k;
		int64_t v;
		bool ok;
	} ints[] = {
		{"schema_version", WSR_DB_VERSION, true},
		{"gomaxprocs", dv->gomaxprocs, dv->gomaxprocs > 0},
		{"runq_size", dv->runq_size, dv->gomaxprocs > 0},
		{"start_ts", dv->first_ts, any_ts},
		{"end_ts", end, any_ts},
		{"duration_ns", duration, any_ts},
		{"events", (int64_t)dv->events, true},
		{"wsr_events", (int64_t)dv->wsr_events, true},
		{"foreign_events", (int64_t)dv->foreign_events, true},
		{"schedtrace_events", (int64_t)dv->schedtraces, true},
		{"discarded_events", (int64_t)dv->discarded_events, true},
		{"discarded_packets", (int64_t)dv->discarded_packets, true},
		{"discarded_records", (int64_t)dv->discarded_records, true},
		{"discarded_uncounted", (int64_t)dv->discarded_uncounted, true},
		{"g_count", (int64_t)dv->gt.gtotal, true},
		{"g_live_peak", (int64_t)dv->gt.gpeak, true},
		{"schedtrace_interval_ns", nice_interval(duration), true},
		{"idle_while_global_ns", dv->idle_global_ns, true},
		{"idle_while_runnable_ns", dv->idle_runnable_ns, true},
		{"spins_found", (int64_t)dv->spins_found, true},
		{"queued_runs", (int64_t)dv->queued_runs, true},
		{"local_runs", (int64_t)dv->local_runs, true},
		{"loss_repairs", (int64_t)dv->loss_repairs, true},
		{"schedtrace_fields", schedcheck_fields(dv->sc), true},
		{"schedtrace_unexplained", schedcheck_unexplained(dv->sc), true},
		{"schedtrace_uncheckable", schedcheck_uncheckable(dv->sc), true},
		{"other_process_events", (int64_t)dv->val.skipped_other_vpid,
		 dv->val.want_vpid > 0},
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
		{"policy", dv->policy},
		{"analyzer_version", WSR_VERSION},
		{"clock", "ns from origin (babeltrace2 clock snapshot)"},
	};

	for (size_t k = 0; k < sizeof(texts) / sizeof(texts[0]); k++)
		if (texts[k].v[0] != '\0' && db_meta_text(dv->db, texts[k].k, texts[k].v, err) < 0)
			return -1;
	return 0;
}

int derive_finish(struct derive *dv, struct wsr_err *err)
{
	int64_t end = dv->val.last_ts;

	if (dv->finished)
		return 0;
	dv->finished = true;
	/* Close what is open at the last event: cut = 1. */
	if (counters_finish(dv, end, err) < 0 || emit_event(dv, err) < 0 ||
	    g_finish(dv, end, err) < 0 ||
	    pm_finish(dv, end, err) < 0 || sq_finish(dv, err) < 0 || event_counts(dv, err) < 0 ||
	    write_meta(dv, err) < 0)
		return -1;
	if (rows_flush(dv->rows, err) < 0 || latency_meta(&dv->lat, dv->db, err) < 0)
		return -1;
	/* The work/span DAG: g_finish closed its last strands. */
	return dag_finish(dv, err);
}
