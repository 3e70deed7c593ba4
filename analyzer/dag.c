/*
 * dag.c - the computation DAG recorded by a trace: strands, edges, work,
 * span, burdened span and the greedy bounds (see dag.h, docs/workspan.md).
 *
 * Design. The DAG is built after the one-pass derivation, from three
 * tables it already wrote:
 *   - g_state running rows are the G's segments (a run between g_run and
 *     g_stop). A segment is cut into strands at every g_create and g_ready
 *     the G itself emitted while running (parent_g / by_g = the G): what
 *     follows a spawn or a wake in the same run does not precede the
 *     spawned or woken G, so the edge must leave from the strand that ends
 *     there.
 *   - Edges: continuation (strand k -> k+1 of the same G, within a segment
 *     or from one segment to the next); spawn (the strand ending at the
 *     parent's g_create -> the child's first strand); wake (the strand
 *     ending at by_g's g_ready -> the woken G's first strand starting at or
 *     after that g_ready). A g_ready with by_g = 0 (a runtime thread: timer,
 *     poller, syscall return) has no source strand: no edge, counted in
 *     meta.dag_wakes_runtime.
 *   - Each edge carries a delay: the time from its source event (g_create,
 *     g_ready, or for a continuation the G becoming runnable again: g_stop
 *     of a yield or preemption, its syscall return, a runtime wake) to the
 *     start of the target strand. Its burden is the part of that delay
 *     during which some P was not running a G (counters.running_gs <
 *     gomaxprocs): the time a greedy scheduler would not have waited. The
 *     rest of the delay is queueing behind other work with every P busy,
 *     which T1/P already accounts for. (With the whole delay as burden, the
 *     burdened span is T_P by construction on the path that ends last, and
 *     says nothing: measured on the validation programs; meta keeps that
 *     figure as delayed_span_ms.) The continuation into a segment that a G
 *     woke carries no burden: the wake edge does.
 *   - external waits: for a continuation into a segment that no G woke, the
 *     time from the source strand's end to the G being runnable again (a
 *     sleep, a blocking call, a wait that a runtime thread ended): the DAG
 *     has no edge for that dependency. With it, every instant of the run is
 *     either busy (all P run Gs: at most T1/P of them) or advances the last
 *     strand's chain of enabling edges by running time, burden or external
 *     wait, so T_P <= T1/P + burdened span + external waits (meta
 *     external_wait_ms), whatever the scheduler.
 * The longest paths (weight: strand running time; burdened: plus edge
 * burdens) are computed in one pass in topological order. Every edge goes
 * from a strand that ends no later than its target starts (the events are
 * in time order), so ordering strands by (start, end) is a topological
 * order unless two zero-length strands tie at the same nanosecond; the pass
 * checks every edge against that order and refuses the trace otherwise.
 * Full strictness (Blumofe-Leiserson): every wake edge goes from a child to
 * its parent; strictness: from a descendant to an ancestor. The spawn tree
 * comes from g.parent, with DFS entry/exit numbers for the ancestor test.
 *
 * Invariants:
 *   - Strand ids (dag_strand.id) are the topological order; dag_edge.src <
 *     dag_edge.dst for every edge.
 *   - work = sum of strand running time = sum of g_state running time.
 *   - span <= observed and work / P <= observed hold by construction
 *     (a path's strands do not overlap in time; at most P Gs run at once).
 * Concurrency: single-threaded, inside the ingesting transaction.
 * Rejected: building strands during the event pass (derive.c) would repeat
 *   the G state machine's handling of lost events and racing readies; one
 *   SQL pass over g_state reuses it. Splitting segments only at g_stop (no
 *   strands) makes a G that spawns and then computes look serial with its
 *   children: a chain of such Gs would show a span of the whole chain.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "dag.h"
#include "gtable.h"
#include "db.h"
#include "rows.h"

enum ekind {
	E_CONT,
	E_SPAWN,
	E_WAKE
};

static const char *const ekind_names[] = {"continue", "spawn", "wake"};

enum rel {
	R_NONE,
	R_PARENT,
	R_ANCESTOR,
	R_OTHER
};

static const char *const rel_names[] = {NULL, "parent", "ancestor", "other"};

struct gnode {
	int64_t g, parent, first_run_ts, end_ts; /* TS_NONE: never ran / never ended */
	int32_t first_seg, nseg;
	int32_t pidx; /* index of the parent, -1: none */
	int32_t tin, tout;
};

struct seg {
	int64_t start, end, ready_ts;
	int32_t gi, first_strand, nstrand;
	char ends[16]; /* the g_stop reason, or "cut" */
	bool stolen, woken;
};

struct split {
	int64_t ts, target;
	int32_t seg, src; /* src: the strand that ends at ts */
	uint8_t kind;     /* E_SPAWN or E_WAKE */
};

struct strand {
	int64_t start, end;
	int32_t gi, seg, rank, pred;
	int64_t in, bin, din; /* longest path weights arriving at its start */
	uint8_t ends;         /* E_SPAWN / E_WAKE: a split; E_CONT: the segment's end */
	bool critical;
};

struct edge {
	int32_t src, dst;
	int64_t ts, delay, burden;
	int64_t wait; /* the whole scheduling delay (delayed span) */
	uint8_t kind, rel;
	bool stolen;
};

struct dag {
	sqlite3 *db;
	struct gnode *gs;
	int32_t ng;
	struct seg *segs;
	int32_t nseg, capseg;
	struct split *splits;
	int32_t nsplit, capsplit;
	struct strand *st;
	int32_t nst;
	int32_t *order;
	struct edge *ed;
	int32_t ned, caped;
	int64_t wakes_runtime, unplaced, external, steal_attempts;
	/* Unbusy time (some P not running a G) as a prefix integral over the
	 * counters step function: cf[i] = unbusy time in [cts[0], cts[i]). */
	int64_t *cts, *cf;
	bool *cun;
	int32_t nc, capc;
	int64_t procs;
};

static int grow(void **p, int32_t *cap, int32_t need, size_t size, struct wsr_err *err)
{
	if (need <= *cap)
		return 0;
	int32_t n = *cap > 0 ? *cap : 1024;
	while (n < need) {
		if (n > INT32_MAX / 2) {
			err_push(err, "dag: more than 2^30 rows");
			return -1;
		}
		n *= 2;
	}
	void *q = realloc(*p, (size_t)n * size);
	if (q == NULL) {
		err_push(err, "dag: out of memory (%" PRId32 " rows)", n);
		return -1;
	}
	*p = q;
	*cap = n;
	return 0;
}

static int32_t g_index(const struct dag *d, int64_t g)
{
	int32_t lo = 0, hi = d->ng - 1;

	while (lo <= hi) {
		int32_t mid = lo + (hi - lo) / 2;
		if (d->gs[mid].g == g)
			return mid;
		if (d->gs[mid].g < g)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static int sq_fail(struct dag *d, sqlite3_stmt *st, const char *what, struct wsr_err *err)
{
	err_push(err, "sqlite: %s: %s", what, sqlite3_errmsg(d->db));
	sqlite3_finalize(st);
	return -1;
}

/* The spawn tree: Gs by id, parents, DFS numbers (iterative). */
static int load_gs(struct dag *d, struct wsr_err *err)
{
	sqlite3_stmt *st = NULL;
	int32_t cap = 0, *kids = NULL, *kfirst = NULL, *stack = NULL, *next = NULL;
	int rc, ret = -1;

	if (db_prepare(d->db, &st,
		       "SELECT g, coalesce(parent, 0), first_run_ts IS NOT NULL, first_run_ts, "
		       "end_ts IS NOT NULL, end_ts FROM g ORDER BY g",
		       err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (grow((void **)&d->gs, &cap, d->ng + 1, sizeof(*d->gs), err) < 0) {
			sqlite3_finalize(st);
			return -1;
		}
		struct gnode *n = &d->gs[d->ng++];
		memset(n, 0, sizeof(*n));
		n->g = sqlite3_column_int64(st, 0);
		n->parent = sqlite3_column_int64(st, 1);
		n->first_run_ts = sqlite3_column_int(st, 2) ? sqlite3_column_int64(st, 3) : TS_NONE;
		n->end_ts = sqlite3_column_int(st, 4) ? sqlite3_column_int64(st, 5) : TS_NONE;
		n->first_seg = -1;
		n->tin = n->tout = -1;
	}
	if (rc != SQLITE_DONE)
		return sq_fail(d, st, "reading g", err);
	sqlite3_finalize(st);

	/* Children lists by counting sort on the parent index. */
	size_t n1 = (size_t)d->ng + 1;
	kfirst = calloc(n1, sizeof(*kfirst));
	kids = calloc(n1, sizeof(*kids));
	stack = calloc(n1, sizeof(*stack));
	next = calloc(n1, sizeof(*next));
	if (kfirst == NULL || kids == NULL || stack == NULL || next == NULL) {
		err_push(err, "dag: out of memory (%" PRId32 " Gs)", d->ng);
		goto out;
	}
	for (int32_t i = 0; i < d->ng; i++) {
		d->gs[i].pidx = d->gs[i].parent > 0 ? g_index(d, d->gs[i].parent) : -1;
		if (d->gs[i].pidx == i)
			d->gs[i].pidx = -1;
		if (d->gs[i].pidx >= 0)
			kfirst[d->gs[i].pidx + 1]++;
	}
	for (int32_t i = 0; i < d->ng; i++)
		kfirst[i + 1] += kfirst[i];
	for (int32_t i = 0; i < d->ng; i++)
		next[i] = kfirst[i];
	for (int32_t i = 0; i < d->ng; i++)
		if (d->gs[i].pidx >= 0)
			kids[next[d->gs[i].pidx]++] = i;
	/* DFS from each root; next[] is reused as the child cursor. A cycle of
	 * parents (corrupt input) is never entered: its Gs keep tin = -1. */
	int32_t clock = 0;
	for (int32_t r = 0; r < d->ng; r++) {
		if (d->gs[r].pidx >= 0)
			continue;
		int32_t sp = 0;
		stack[sp++] = r;
		next[r] = kfirst[r];
		d->gs[r].tin = clock++;
		while (sp > 0) {
			int32_t v = stack[sp - 1];
			if (next[v] < kfirst[v + 1]) {
				int32_t c = kids[next[v]++];
				d->gs[c].tin = clock++;
				next[c] = kfirst[c];
				stack[sp++] = c;
			} else {
				d->gs[v].tout = clock++;
				sp--;
			}
		}
	}
	ret = 0;
out:
	free(kfirst);
	free(kids);
	free(stack);
	free(next);
	return ret;
}

/* Segments: the running rows of g_state, per G in time order (g_state rows
 * of one G are written as they close, so rowid order is time order). The
 * row before a running row, when runnable, gives when the G became ready
 * and whether its run came from a steal. */
static int load_segs(struct dag *d, struct wsr_err *err)
{
	sqlite3_stmt *st = NULL;
	int64_t prev_g = 0, prev_start = 0;
	bool prev_runnable = false, prev_steal = false;
	int rc;

	if (db_prepare(d->db, &st,
		       "SELECT g, state, start_ts, end_ts, coalesce(reason, ''), "
		       "coalesce(source, ''), cut FROM g_state ORDER BY g, rowid",
		       err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t g = sqlite3_column_int64(st, 0);
		const char *state = (const char *)sqlite3_column_text(st, 1);
		int64_t start = sqlite3_column_int64(st, 2);
		int64_t end = sqlite3_column_int64(st, 3);
		const char *reason = (const char *)sqlite3_column_text(st, 4);
		const char *source = (const char *)sqlite3_column_text(st, 5);
		bool cut = sqlite3_column_int(st, 6) != 0;

		if (g != prev_g)
			prev_runnable = false;
		if (state != NULL && strcmp(state, "running") == 0) {
			int32_t gi = g_index(d, g);
			if (gi < 0) {
				err_push(err, "dag: G %" PRId64 " runs in g_state but has no g row",
					 g);
				sqlite3_finalize(st);
				return -1;
			}
			if (grow((void **)&d->segs, &d->capseg, d->nseg + 1, sizeof(*d->segs),
				 err) < 0) {
				sqlite3_finalize(st);
				return -1;
			}
			struct seg *s = &d->segs[d->nseg];
			memset(s, 0, sizeof(*s));
			s->start = start;
			s->end = end;
			s->ready_ts = prev_runnable ? prev_start : start;
			s->stolen = prev_runnable && prev_steal;
			s->gi = gi;
			snprintf(s->ends, sizeof(s->ends), "%s",
				 cut ? "cut" : (reason != NULL ? reason : ""));
			if (d->gs[gi].first_seg < 0)
				d->gs[gi].first_seg = d->nseg;
			d->gs[gi].nseg++;
			d->nseg++;
		}
		prev_g = g;
		prev_start = start;
		prev_runnable = state != NULL && strcmp(state, "runnable") == 0;
		prev_steal = source != NULL && strcmp(source, "steal") == 0;
	}
	if (rc != SQLITE_DONE)
		return sq_fail(d, st, "reading g_state", err);
	sqlite3_finalize(st);
	return 0;
}

/* The segment of G gi running at ts (start <= ts <= end), or -1. */
static int32_t seg_at(const struct dag *d, int32_t gi, int64_t ts)
{
	const struct gnode *n = &d->gs[gi];
	int32_t lo = n->first_seg, hi = n->first_seg + n->nseg - 1, best = -1;

	while (lo <= hi) {
		int32_t mid = lo + (hi - lo) / 2;
		if (d->segs[mid].start <= ts) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return best >= 0 && d->segs[best].end >= ts ? best : -1;
}

/* The first segment of G gi starting at or after ts, or -1. */
static int32_t seg_after(const struct dag *d, int32_t gi, int64_t ts)
{
	const struct gnode *n = &d->gs[gi];
	int32_t lo = n->first_seg, hi = n->first_seg + n->nseg - 1, best = -1;

	while (lo <= hi) {
		int32_t mid = lo + (hi - lo) / 2;
		if (d->segs[mid].start >= ts) {
			best = mid;
			hi = mid - 1;
		} else {
			lo = mid + 1;
		}
	}
	return best;
}

/* Split points: g_create / g_ready emitted by a running G, by emitter and
 * time, so that each segment's splits are consecutive and in order. */
static int load_splits(struct dag *d, struct wsr_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (db_prepare(d->db, &st,
		       "SELECT ts, name = 'g_create', g, a1, name = 'steal_scan', a2 FROM events "
		       "WHERE name IN ('g_create', 'g_ready', 'steal_scan') ORDER BY a1, ts, id",
		       err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t ts = sqlite3_column_int64(st, 0);
		bool create = sqlite3_column_int(st, 1) != 0;
		int64_t target = sqlite3_column_int64(st, 2);
		int64_t emitter = sqlite3_column_int64(st, 3);

		if (sqlite3_column_int(st, 4) != 0) {
			/* steal_scan: probed = the victims this search looked at. */
			d->steal_attempts += sqlite3_column_int64(st, 5);
			continue;
		}
		if (emitter <= 0) {
			/* A root G's creation, or a runtime thread's wake. */
			if (!create)
				d->wakes_runtime++;
			continue;
		}
		int32_t gi = g_index(d, emitter);
		int32_t s = gi >= 0 && d->gs[gi].nseg > 0 ? seg_at(d, gi, ts) : -1;
		if (s < 0) {
			/* The emitter was not running (lost events): no edge. */
			d->unplaced++;
			continue;
		}
		if (grow((void **)&d->splits, &d->capsplit, d->nsplit + 1, sizeof(*d->splits),
			 err) < 0) {
			sqlite3_finalize(st);
			return -1;
		}
		struct split *p = &d->splits[d->nsplit++];
		p->ts = ts;
		p->target = target;
		p->seg = s;
		p->src = -1; /* set when the strands are cut (build) */
		p->kind = create ? E_SPAWN : E_WAKE;
	}
	if (rc != SQLITE_DONE)
		return sq_fail(d, st, "reading g_create and g_ready", err);
	sqlite3_finalize(st);
	return 0;
}

static int load_unbusy(struct dag *d, struct wsr_err *err)
{
	sqlite3_stmt *st = NULL;
	int32_t c1 = 0, c2 = 0;
	int rc;

	if (db_get_meta_int(d->db, "gomaxprocs", &d->procs) < 0 || d->procs <= 0)
		d->procs = 1;
	if (db_prepare(d->db, &st, "SELECT ts, running_gs FROM counters ORDER BY ts", err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (grow((void **)&d->cts, &d->capc, d->nc + 1, sizeof(*d->cts), err) < 0 ||
		    grow((void **)&d->cf, &c1, d->capc, sizeof(*d->cf), err) < 0 ||
		    grow((void **)&d->cun, &c2, d->capc, sizeof(*d->cun), err) < 0) {
			sqlite3_finalize(st);
			return -1;
		}
		int32_t i = d->nc++;
		d->cts[i] = sqlite3_column_int64(st, 0);
		d->cun[i] = sqlite3_column_int64(st, 1) < d->procs;
		d->cf[i] =
			i == 0 ? 0 : d->cf[i - 1] + (d->cun[i - 1] ? d->cts[i] - d->cts[i - 1] : 0);
	}
	if (rc != SQLITE_DONE)
		return sq_fail(d, st, "reading counters", err);
	sqlite3_finalize(st);
	return 0;
}

/* Unbusy time in [cts[0], t). Before the first counters row nothing ran. */
static int64_t unbusy_to(const struct dag *d, int64_t t)
{
	int32_t lo = 0, hi = d->nc - 1, best = -1;

	while (lo <= hi) {
		int32_t mid = lo + (hi - lo) / 2;
		if (d->cts[mid] <= t) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	if (best < 0)
		return 0;
	return d->cf[best] + (d->cun[best] ? t - d->cts[best] : 0);
}

static int64_t unbusy(const struct dag *d, int64_t a, int64_t b)
{
	return b > a ? unbusy_to(d, b) - unbusy_to(d, a) : 0;
}

static struct edge *add_edge(struct dag *d, int32_t src, int32_t dst, uint8_t kind, int64_t ts,
			     struct wsr_err *err)
{
	if (grow((void **)&d->ed, &d->caped, d->ned + 1, sizeof(*d->ed), err) < 0)
		return NULL;
	struct edge *e = &d->ed[d->ned++];
	memset(e, 0, sizeof(*e));
	e->src = src;
	e->dst = dst;
	e->kind = kind;
	e->ts = ts;
	e->delay = d->st[dst].start - ts;
	return e;
}

/* Strands (segments cut at their splits) and every edge. */
static int build(struct dag *d, struct wsr_err *err)
{
	int32_t n = d->nseg + d->nsplit;

	d->st = calloc((size_t)n + 1, sizeof(*d->st));
	if (d->st == NULL) {
		err_push(err, "dag: out of memory (%" PRId32 " strands)", n);
		return -1;
	}
	int32_t k = 0;
	for (int32_t s = 0; s < d->nseg; s++) {
		struct seg *sg = &d->segs[s];
		int64_t from = sg->start;
		sg->first_strand = d->nst;
		for (; k < d->nsplit && d->splits[k].seg == s; k++) {
			struct strand *t = &d->st[d->nst++];
			t->start = from;
			t->end = d->splits[k].ts;
			t->gi = sg->gi;
			t->seg = s;
			t->ends = d->splits[k].kind;
			d->splits[k].src = d->nst - 1;
			from = d->splits[k].ts;
		}
		struct strand *t = &d->st[d->nst++];
		t->start = from;
		t->end = sg->end;
		t->gi = sg->gi;
		t->seg = s;
		t->ends = E_CONT;
		sg->nstrand = d->nst - sg->first_strand;
	}

	/* Spawn and wake edges, from the strand that ends at the split. */
	for (int32_t i = 0; i < d->nsplit; i++) {
		const struct split *p = &d->splits[i];
		const struct seg *from = &d->segs[p->seg];
		int32_t ti = g_index(d, p->target);
		int32_t tseg = ti >= 0 && d->gs[ti].nseg > 0
				       ? (p->kind == E_SPAWN ? d->gs[ti].first_seg
							     : seg_after(d, ti, p->ts))
				       : -1;
		if (p->src < 0 || tseg < 0 || d->segs[tseg].start < p->ts) {
			/* The target never ran (again) in the trace, or lost events. */
			d->unplaced++;
			continue;
		}
		struct edge *e =
			add_edge(d, p->src, d->segs[tseg].first_strand, p->kind, p->ts, err);
		if (e == NULL)
			return -1;
		e->burden = unbusy(d, p->ts, d->st[e->dst].start);
		e->wait = e->delay;
		e->stolen = d->segs[tseg].stolen;
		if (p->kind == E_WAKE) {
			const struct gnode *w = &d->gs[from->gi], *v = &d->gs[ti];
			d->segs[tseg].woken = true;
			if (w->pidx == ti)
				e->rel = R_PARENT;
			else if (v->tin >= 0 && w->tin >= 0 && v->tin < w->tin && w->tout < v->tout)
				e->rel = R_ANCESTOR;
			else
				e->rel = R_OTHER;
		}
	}

	/* Continuations. */
	for (int32_t s = 0; s < d->nseg; s++) {
		const struct seg *sg = &d->segs[s];
		for (int32_t j = sg->first_strand + 1; j < sg->first_strand + sg->nstrand; j++)
			if (add_edge(d, j - 1, j, E_CONT, d->st[j - 1].end, err) == NULL)
				return -1;
		if (s + 1 < d->nseg && d->segs[s + 1].gi == sg->gi) {
			const struct seg *nx = &d->segs[s + 1];
			int32_t last = sg->first_strand + sg->nstrand - 1;
			struct edge *e = add_edge(d, last, nx->first_strand, E_CONT, sg->end, err);
			if (e == NULL)
				return -1;
			e->stolen = nx->stolen;
			if (!nx->woken) {
				e->burden = unbusy(d, nx->ready_ts, nx->start);
				e->wait = nx->start - nx->ready_ts;
				d->external += nx->ready_ts - sg->end;
			}
		}
	}
	return 0;
}

static const struct strand *cmp_st;

static int cmp_time(const void *a, const void *b)
{
	const struct strand *x = &cmp_st[*(const int32_t *)a], *y = &cmp_st[*(const int32_t *)b];

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	if (x->gi != y->gi)
		return x->gi < y->gi ? -1 : 1;
	return *(const int32_t *)a < *(const int32_t *)b ? -1 : 1;
}

static int cmp_edge_src(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->dst < y->dst ? -1 : (x->dst > y->dst);
}

/* Topological order by time, checked on every edge; then the longest paths
 * in one pass. Afterwards edges' src/dst are ranks. */
static int longest(struct dag *d, int32_t *last, struct wsr_err *err)
{
	d->order = malloc(((size_t)d->nst + 1) * sizeof(*d->order));
	if (d->order == NULL) {
		err_push(err, "dag: out of memory");
		return -1;
	}
	for (int32_t i = 0; i < d->nst; i++)
		d->order[i] = i;
	cmp_st = d->st;
	qsort(d->order, (size_t)d->nst, sizeof(*d->order), cmp_time);
	cmp_st = NULL;
	for (int32_t r = 0; r < d->nst; r++)
		d->st[d->order[r]].rank = r;
	for (int32_t i = 0; i < d->ned; i++) {
		struct edge *e = &d->ed[i];
		const struct strand *a = &d->st[e->src], *b = &d->st[e->dst];
		if (a->rank >= b->rank) {
			err_input(err,
				  "dag: the %s edge from G %" PRId64 " at %" PRId64
				  " ns to G %" PRId64 " at %" PRId64
				  " ns is not in time order (strands of zero length at the same "
				  "nanosecond): the trace clock is too coarse for a DAG",
				  ekind_names[e->kind], d->gs[a->gi].g, a->end, d->gs[b->gi].g,
				  b->start);
			return -1;
		}
		e->src = a->rank;
		e->dst = b->rank;
	}
	/* Strands in rank order (edges now refer to ranks). */
	struct strand *sorted = malloc(((size_t)d->nst + 1) * sizeof(*sorted));
	if (sorted == NULL) {
		err_push(err, "dag: out of memory");
		return -1;
	}
	for (int32_t r = 0; r < d->nst; r++) {
		sorted[r] = d->st[d->order[r]];
		sorted[r].pred = -1;
		sorted[r].in = sorted[r].bin = sorted[r].din = 0;
	}
	free(d->st);
	d->st = sorted;
	if (d->ned > 0) /* d->ed is NULL without edges: qsort wants an array */
		qsort(d->ed, (size_t)d->ned, sizeof(*d->ed), cmp_edge_src);

	int64_t best = -1;
	int32_t k = 0;
	*last = -1;
	for (int32_t r = 0; r < d->nst; r++) {
		struct strand *s = &d->st[r];
		int64_t w = s->end - s->start;
		int64_t fin = s->in + w, bfin = s->bin + w, dfin = s->din + w;
		if (fin > best) {
			best = fin;
			*last = r;
		}
		for (; k < d->ned && d->ed[k].src == r; k++) {
			const struct edge *e = &d->ed[k];
			struct strand *t = &d->st[e->dst];
			if (fin > t->in || (t->pred < 0 && fin >= t->in)) {
				t->in = fin;
				t->pred = r;
			}
			if (bfin + e->burden > t->bin)
				t->bin = bfin + e->burden;
			if (dfin + e->wait > t->din)
				t->din = dfin + e->wait;
		}
	}
	for (int32_t r = *last; r >= 0; r = d->st[r].pred)
		d->st[r].critical = true;
	return 0;
}

static int meta_real(sqlite3 *db, const char *key, double v, struct wsr_err *err)
{
	sqlite3_stmt *st = NULL;

	if (db_prepare(db, &st, "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)", err) <
	    0)
		return -1;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 2, v);
	if (sqlite3_step(st) != SQLITE_DONE) {
		err_push(err, "sqlite: meta %s: %s", key, sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	return 0;
}

/* The rows go through rows.c (its writer thread); flushed before the meta
 * figures, which read the connection. */
static int write_rows(struct dag *d, struct rows *rw, struct wsr_err *err)
{
	for (int32_t r = 0; r < d->nst; r++) {
		const struct strand *s = &d->st[r];
		const struct seg *sg = &d->segs[s->seg];
		const struct gnode *n = &d->gs[s->gi];
		struct row_dag_strand row = {
			.id = r,
			.g = n->g,
			.seg = s->seg - n->first_seg,
			.start_ts = s->start,
			.end_ts = s->end,
			.ends = s->ends == E_SPAWN  ? "spawn"
				: s->ends == E_WAKE ? "wake"
						    : sg->ends,
			.span_ns = s->in + (s->end - s->start),
			.burdened_ns = s->bin + (s->end - s->start),
			.pred = s->pred >= 0 ? s->pred : ROW_NULL,
			.critical = s->critical,
		};
		if (rows_add(rw, ROWS_DAG_STRAND, &row, err) < 0)
			return -1;
	}
	for (int32_t i = 0; i < d->ned; i++) {
		const struct edge *e = &d->ed[i];
		struct row_dag_edge row = {
			.src = e->src,
			.dst = e->dst,
			.kind = ekind_names[e->kind],
			.ts = e->ts,
			.delay_ns = e->delay,
			.burden_ns = e->burden,
			.stolen = e->stolen,
			.relation = e->rel != R_NONE ? rel_names[e->rel] : NULL,
		};
		if (rows_add(rw, ROWS_DAG_EDGE, &row, err) < 0)
			return -1;
	}
	return rows_flush(rw, err);
}

/* A stack's start (+1, a G's first run) or release (-1, its exit). */
struct stack_ev {
	int64_t ts;
	int delta;
};

/* By time; at equal times exits first, so that a G exiting as another
 * starts does not count as two stacks. */
static int cmp_stack_ev(const void *a, const void *b)
{
	const struct stack_ev *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->delta > y->delta) - (x->delta < y->delta);
}

/* The most Gs that had started and not exited at once: each holds a stack
 * (taken at its first run, released at its exit). The timestamps are
 * compared as they are: any int64 value, however large the clock's offset. */
static int peak_stacks(const struct dag *d, int64_t *peak, struct wsr_err *err)
{
	struct stack_ev *ev = malloc(((size_t)d->ng * 2 + 1) * sizeof(*ev));
	size_t n = 0;
	int64_t live = 0;

	*peak = 0;
	if (ev == NULL) {
		err_push(err, "dag: out of memory");
		return -1;
	}
	for (int32_t i = 0; i < d->ng; i++) {
		if (d->gs[i].first_run_ts == TS_NONE)
			continue;
		ev[n++] = (struct stack_ev){d->gs[i].first_run_ts, 1};
		if (d->gs[i].end_ts != TS_NONE)
			ev[n++] = (struct stack_ev){d->gs[i].end_ts, -1};
	}
	qsort(ev, n, sizeof(*ev), cmp_stack_ev);
	for (size_t k = 0; k < n; k++) {
		live += ev[k].delta;
		if (live > *peak)
			*peak = live;
	}
	free(ev);
	return 0;
}

static int write_meta(struct dag *d, int32_t last, struct wsr_err *err)
{
	int64_t work = 0, span = 0, bspan = 0, dspan = 0, first = 0, end = 0, procs = 0;
	int64_t critical = 0;
	int64_t spawns = 0, wakes = 0, rel[4] = {0, 0, 0, 0}, roots = 0, stacks = 0;

	if (peak_stacks(d, &stacks, err) < 0)
		return -1;
	bool *has_in = calloc((size_t)d->nst + 1, sizeof(*has_in));

	if (has_in == NULL) {
		err_push(err, "dag: out of memory");
		return -1;
	}
	for (int32_t i = 0; i < d->ned; i++)
		has_in[d->ed[i].dst] = true;
	for (int32_t r = 0; r < d->nst; r++)
		roots += !has_in[r];
	free(has_in);

	for (int32_t r = 0; r < d->nst; r++) {
		const struct strand *s = &d->st[r];
		work += s->end - s->start;
		if (s->bin + (s->end - s->start) > bspan)
			bspan = s->bin + (s->end - s->start);
		if (s->din + (s->end - s->start) > dspan)
			dspan = s->din + (s->end - s->start);
		if (r == 0 || s->start < first)
			first = s->start;
		if (r == 0 || s->end > end)
			end = s->end;
		critical += s->critical;
	}
	if (last >= 0)
		span = d->st[last].in + (d->st[last].end - d->st[last].start);
	for (int32_t i = 0; i < d->ned; i++) {
		spawns += d->ed[i].kind == E_SPAWN;
		wakes += d->ed[i].kind == E_WAKE;
		rel[d->ed[i].rel]++;
	}
	procs = d->procs;

	double ms = 1e6, t1 = (double)work / ms, tinf = (double)span / ms;
	double tb = (double)bspan / ms, tp = (double)(end - first) / ms, p = (double)procs;
	double lower = t1 / p > tinf ? t1 / p : tinf, greedy = t1 / p + tinf;

	struct {
		const char *k;
		double v;
	} reals[] = {
		{"work_ms", t1},
		{"span_ms", tinf},
		{"parallelism", span > 0 ? t1 / tinf : 0},
		{"burdened_span_ms", tb},
		{"burdened_parallelism", bspan > 0 ? t1 / tb : 0},
		{"observed_ms", tp},
		{"lower_bound_ms", lower},
		{"greedy_bound_ms", greedy},
		{"burdened_bound_ms", t1 / p + tb},
		{"delayed_span_ms", (double)dspan / ms},
		{"external_wait_ms", (double)d->external / ms},
		{"bound_position", greedy > lower ? (tp - lower) / (greedy - lower) : 0},
		{"span_strands", work > 0 ? (double)span * (double)d->nst / (double)work : 0},
	};

	struct {
		const char *k;
		int64_t v;
	} ints[] = {
		{"dag_strands", d->nst},
		{"dag_edges", d->ned},
		{"dag_spawn_edges", spawns},
		{"dag_wake_edges", wakes},
		{"dag_critical_strands", critical},
		{"dag_wakes_parent", rel[R_PARENT]},
		{"dag_wakes_ancestor", rel[R_ANCESTOR]},
		{"dag_wakes_other", rel[R_OTHER]},
		{"dag_wakes_runtime", d->wakes_runtime},
		{"dag_unplaced", d->unplaced},
		{"dag_roots", roots},
		{"steal_attempts", d->steal_attempts},
		{"peak_live_stacks", stacks},
		{"dag_fully_strict", rel[R_ANCESTOR] == 0 && rel[R_OTHER] == 0},
		{"dag_strict", rel[R_OTHER] == 0},
	};

	for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++)
		if (meta_real(d->db, reals[i].k, reals[i].v, err) < 0)
			return -1;
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		if (db_meta_int(d->db, ints[i].k, ints[i].v, err) < 0)
			return -1;
	return 0;
}

int dag_build(sqlite3 *db, struct rows *rw, struct wsr_err *err)
{
	struct dag d;
	int32_t last = -1;
	int ret = -1;

	memset(&d, 0, sizeof(d));
	d.db = db;
	if (load_gs(&d, err) < 0 || load_unbusy(&d, err) < 0 || load_segs(&d, err) < 0 ||
	    load_splits(&d, err) < 0 || build(&d, err) < 0 || longest(&d, &last, err) < 0 ||
	    write_rows(&d, rw, err) < 0 || write_meta(&d, last, err) < 0) {
		err_push(err, "building the DAG (dag_strand, dag_edge)");
		goto out;
	}
	ret = 0;
out:
	free(d.gs);
	free(d.segs);
	free(d.splits);
	free(d.st);
	free(d.order);
	free(d.ed);
	free(d.cts);
	free(d.cf);
	free(d.cun);
	return ret;
}
