/*
 * schedfeed.c - what the schedtrace cross-check (schedcheck.c) needs of
 * each event, and the schedtrace_fields rows it produces.
 *
 * Every event is handed to the cross-check with the changes it made to the
 * quantities a schedtrace snapshot reads: the five global counts (SQ_*),
 * then per P its ring length (SQ_P0 + 2p) and its schedtick (SQ_P0 + 2p +
 * 1). The snapshot itself comes with the schedtrace event.
 *
 * The changes. An event may change the globals and the ring and schedtick
 * of its own P and, for a steal, of the victim (counters.c, pmstate.c,
 * gstate.c), and nothing else changes them (a record that is not a catalog
 * event is applied to no tracker). So the quantities as they
 * were last fed (dv->sq_c, dv->sq_p) are their values before the event,
 * and sq_event() compares them with the values after it: one test for the
 * three events in four that change none of them, the list of the changes
 * for the others. (A copy taken before each event and compared after, the
 * list built for every event: 393 M of the deriver's 4.13 G instructions
 * on fib 25, a trace without schedtrace events; now 271 M.)
 *
 * Invariants: sq_event() runs after the trackers applied each catalog
 *   event, so the difference is that event's change alone; sq_c and sq_p
 *   are then the values fed to schedcheck.c, which sums the same changes.
 *   A P not fed yet was 0, as a P is when it becomes known (pmstate.c).
 * Concurrency: one thread.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "derive_int.h"
#include "schedcheck.h"

enum {
	SQ_IDLEPROCS,
	SQ_THREADS,
	SQ_SPINNING,
	SQ_IDLETHREADS,
	SQ_RUNQUEUE,
	SQ_P0
};

_Static_assert(SQ_P0 == sizeof(((struct derive *)0)->sq_c) / sizeof(int64_t),
	       "struct derive holds the globals as fed");

static const char *const sq_names[SQ_P0] = {"idleprocs", "threads", "spinningthreads",
					    "idlethreads", "runqueue"};

static void sq_globals(const struct derive *dv, int64_t *c)
{
	c[SQ_IDLEPROCS] = dv->cur.idle_ps;
	c[SQ_THREADS] = dv->cur.threads;
	c[SQ_SPINNING] = dv->cur.spinning_ms;
	c[SQ_IDLETHREADS] = dv->cur.idle_ms;
	c[SQ_RUNQUEUE] = dv->cur.global_len;
}

/* What a catalog event is to the cross-check: sysmon's (its emitter is the
 * pseudo-M -1), or aside: not "qualifying" for rule (c), what an M emits
 * between taking a G and its g_run (schedcheck.c). */
enum {
	SQ_SYSMON = 1,
	SQ_ASIDE = 2
};

static const uint8_t sq_kind[EV_COUNT] = {
	[EV_RETAKE] = SQ_SYSMON,     [EV_HANDOFF] = SQ_SYSMON,  [EV_PREEMPT] = SQ_SYSMON,
	[EV_SCHEDTRACE] = SQ_SYSMON, [EV_SPIN_STOP] = SQ_ASIDE, [EV_STEAL_SCAN] = SQ_ASIDE,
	[EV_SPIN_START] = SQ_ASIDE,  [EV_M_UNPARK] = SQ_ASIDE,  [EV_P_BUSY] = SQ_ASIDE,
	[EV_M_CREATE] = SQ_ASIDE,
};

/* Event r changed some quantity (or is a steal, or its P was not fed
 * yet): its changes into ch, and the values fed updated; how many, or -1
 * (out of memory). */
static __attribute__((noinline)) int sq_changes(struct derive *dv, const struct wsr_rec *r,
						struct sc_change *ch)
{
	int64_t c[SQ_P0];
	int n = 0;
	int p[2] = {r->p, r->ev == EV_STEAL ? (int)r->a1 : -1};

	sq_globals(dv, c);
	for (int k = 0; k < SQ_P0; k++) {
		if (c[k] != dv->sq_c[k])
			ch[n++] = (struct sc_change){k, c[k] - dv->sq_c[k]};
		dv->sq_c[k] = c[k];
	}
	if (dv->sq_np < dv->np) {
		int64_t *np = realloc(dv->sq_p, (size_t)dv->np * 2 * sizeof(*np));
		if (np == NULL)
			return -1;
		memset(np + 2 * dv->sq_np, 0, (size_t)(dv->np - dv->sq_np) * 2 * sizeof(*np));
		dv->sq_p = np;
		dv->sq_np = dv->np;
	}
	/* both Ps' changes before either is fed (a thief that names itself
	 * the victim has the change twice, as each P's) */
	int64_t after[2][2];
	for (int k = 0; k < 2; k++) {
		if (p[k] < 0 || p[k] >= dv->np)
			continue;
		const int64_t *f = &dv->sq_p[2 * p[k]];
		after[k][0] = dv->ps[p[k]].ring;
		after[k][1] = dv->ps[p[k]].schedticks;
		for (int j = 0; j < 2; j++)
			if (after[k][j] != f[j])
				ch[n++] = (struct sc_change){SQ_P0 + 2 * p[k] + j,
							     after[k][j] - f[j]};
	}
	for (int k = 0; k < 2; k++) {
		if (p[k] < 0 || p[k] >= dv->np)
			continue;
		dv->sq_p[2 * p[k]] = after[k][0];
		dv->sq_p[2 * p[k] + 1] = after[k][1];
	}
	return n;
}

static int sq_feed(struct derive *dv, const struct wsr_rec *r)
{
	struct sc_change ch[SQ_P0 + 4];
	const struct counters *c = &dv->cur;
	const int64_t *f = dv->sq_c;
	int p = r->p, n = 0;

	/* Most events change none of the quantities: one test for that. */
	if (r->ev == EV_STEAL || c->idle_ps != f[SQ_IDLEPROCS] || c->threads != f[SQ_THREADS] ||
	    c->spinning_ms != f[SQ_SPINNING] || c->idle_ms != f[SQ_IDLETHREADS] ||
	    c->global_len != f[SQ_RUNQUEUE] ||
	    (p >= 0 && p < dv->np &&
	     (p >= dv->sq_np || dv->ps[p].ring != dv->sq_p[2 * p] ||
	      dv->ps[p].schedticks != dv->sq_p[2 * p + 1])))
		n = sq_changes(dv, r, ch);
	if (n < 0)
		return -1;
	uint8_t kind = sq_kind[r->ev];
	return schedcheck_event(dv->sc, (int64_t)dv->events - 1, r->ts,
				(kind & SQ_SYSMON) ? -1 : r->m, r->ev == EV_RUNQPUT,
				!(kind & SQ_ASIDE), ch, n);
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
		rd[n++] =
			(struct sc_read){k, strtoll(q + strlen(pat), NULL, 10), WIN_B(0), WIN_E(0)};
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
	struct row_sched_field row = {
		.snap_id = f->snap_id,
		.snap_ts = f->snap_ts,
		.field = f->q < SQ_P0              ? sq_names[f->q]
			 : (f->q - SQ_P0) % 2 == 0 ? "runq"
						   : "schedticks",
		.p = f->q < SQ_P0 ? ROW_NULL : (f->q - SQ_P0) / 2,
		.rt = f->rt,
		.recon = f->recon,
		.read_b = f->b,
		.read_e = f->e,
		.racing = f->racing,
		.explained = f->explained < 0 ? ROW_NULL : f->explained,
	};

	return rows_add(dv->rows, ROWS_SCHED_FIELDS, &row, dv->sc_err);
}

int sq_event(struct derive *dv, const struct wsr_rec *r, const char *extra, struct wsr_err *err)
{
	if (sq_feed(dv, r) < 0) {
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

/* The schedtrace_fields rows. */
int sq_finish(struct derive *dv, struct wsr_err *err)
{
	dv->sc_err = err;
	return schedcheck_finish(dv->sc, sq_row, dv);
}
