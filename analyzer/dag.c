/*
 * dag.c - the DAG tracker: the computation DAG recorded by a trace (strands,
 * edges), its work, span, burdened span and the greedy bounds, computed as
 * the events stream past (see dag.h, derive_int.h, docs/workspan.md).
 *
 * Design. The DAG is the G state machine's (gstate.c) running intervals:
 *   - A segment is one running interval of a G (a g_state running row). It
 *     is cut into strands at every g_create and g_ready the G itself emits
 *     while running (parent_g / by_g = the G): what follows a spawn or a
 *     wake in the same run does not precede the spawned or woken G, so the
 *     edge must leave from the strand that ends there.
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
 *
 * The longest paths (weight: strand running time; burdened: plus edge
 * burdens) are one pass in topological order, and the order in which the
 * strands end is one: an edge is known when its source strand ends (the
 * split, or the end of the G's segment) and is taken by its target when
 * the target strand ends, so a strand's longest paths are complete when it
 * ends. The tracker keeps, per live G (struct dagg, gs.dag): the strand
 * open in its running segment, the last strand of its previous segment,
 * and the edges waiting for its next segment; the unbusy time (some P not
 * running a G) is one running integral of the counters rows. Of the
 * strands it keeps only those some live state still refers to (struct
 * snode, reference-counted): each one's predecessor on its longest path,
 * so the critical path, the chain of the strand whose path is longest, is
 * there at the end. Strand ids are the order in which strands end.
 * Full strictness (Blumofe-Leiserson): every wake edge goes from a child to
 * its parent; strictness: from a descendant to an ancestor, looked up in
 * the spawn tree of the live Gs (an exiting G's children are handed to its
 * parent: the woken G is live, so it is an ancestor of the waker exactly
 * when it is one of the waker's live ancestors).
 *
 * Invariants:
 *   - dag_strand.id is the order in which the strands end (a topological
 *     order); dag_edge.src < dag_edge.dst for every edge.
 *   - work = sum of strand running time = sum of g_state running time.
 *   - span <= observed and work / P <= observed hold by construction
 *     (a path's strands do not overlap in time; at most P Gs run at once).
 *   - Memory follows the live Gs and the strands their longest paths hold
 *     (the critical path among them), not the number of strands: with
 *     dag.all unset, dag_strand gets the critical path's strands only and
 *     dag_edge nothing (ingest --dag: every strand and edge, as they end).
 *     Ended strands and exited Gs' states are kept for reuse (free_nodes,
 *     free_gs): at most as many as were held, and live, at once.
 *   - Tie-breaks are those of a pass over strands sorted by (start, end,
 *     G, order of end): a strand's predecessor is its first source of
 *     longest path in that order, and so is the path's last strand.
 * Concurrency: single-threaded, the deriver's thread; rows through rows.c.
 * Rejected: building the DAG after the event pass from g_state and the
 *   events (the design until schema 4): it held every strand and edge
 *   (1.4 GB for 10M events) and read 10M rows back. A DAG of segments only
 *   (no cut at g_create / g_ready) makes a G that spawns and then computes
 *   look serial with its children.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "dag.h"
#include "db.h"
#include "derive_int.h"

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

/* A strand that has ended, kept while a reference to it lives. */
struct snode {
	int64_t id, start, end, g;
	int64_t fin, bfin, dfin; /* longest paths ending with it, it included */
	int64_t crit;            /* strands on its longest path, it included */
	struct snode *pred;      /* the strand before it on that path (a reference) */
	const char *ends;
	int32_t seg, refs;
};

/* An edge whose source has ended, waiting for its target strand. */
struct pend {
	int64_t ts, u; /* the source event, the unbusy integral at it */
	int64_t fin, bfin, dfin;
	struct snode *src; /* a reference */
	uint8_t kind, rel;
};

/* One live G's DAG state. */
struct dagg {
	struct dagg *up, *kids, *next, *prev; /* the spawn tree of live Gs */
	struct snode *last; /* the last strand of its last segment (a reference) */
	/* The strand open in the running segment: carried = it follows a
	 * split of the same segment (its paths are the split strand's). */
	bool carried;
	int64_t from, in, bin, din;
	struct snode *pred; /* a reference */
	int32_t nseg;       /* segments begun */
	bool stolen;        /* the current segment's run came from a steal */
	/* The open interval's start, and the closed one before it. */
	int64_t u_start, prev_start, prev_u;
	bool prev_runnable, prev_steal;
	struct pend *pend;
	int32_t npend, cappend;
};

struct dag {
	bool all;
	/* The unbusy integral over the counters rows so far. */
	bool u_any, u_un;
	int64_t u_ts, u_acc;
	int64_t seq; /* strands ended so far: the next strand's id */
	int64_t work, first, end, bspan, dspan;
	struct snode *best; /* the longest path's last strand (a reference) */
	int64_t edges, spawns, wakes, rel[4], roots;
	int64_t wakes_runtime, unplaced, external, steal_attempts;
	int64_t live_stacks, peak_stacks;
	/* The split the current event made, for its target (dag_after). */
	struct snode *split;
	uint8_t split_kind, split_rel;
	int64_t split_ts;
	struct snode *free_nodes;
	/* the states of exited Gs, for the next Gs (linked by next; each keeps
	 * its pend array): as many as Gs were live at once, at most */
	struct dagg *free_gs;
	int64_t kept, kept_peak; /* strands held at once (meta.dag_kept_peak) */
	void **chunks;
	size_t nchunks;
};

#define NODE_CHUNK 4096

struct dag *dag_create(bool all)
{
	struct dag *d = calloc(1, sizeof(*d));

	if (d != NULL)
		d->all = all;
	return d;
}

void dag_set_all(struct dag *d, bool all)
{
	d->all = all;
}

void dag_state_free(struct dagg *a)
{
	if (a != NULL)
		free(a->pend);
	free(a);
}

void dag_destroy(struct dag *d)
{
	if (d == NULL)
		return;
	for (struct dagg *a = d->free_gs, *n; a != NULL; a = n) {
		n = a->next;
		dag_state_free(a);
	}
	for (size_t i = 0; i < d->nchunks; i++)
		free(d->chunks[i]);
	free(d->chunks);
	free(d);
}

static struct snode *node_new(struct dag *d, struct wsr_err *err)
{
	if (d->free_nodes == NULL) {
		struct snode *c = malloc(NODE_CHUNK * sizeof(*c));
		void **cs = realloc(d->chunks, (d->nchunks + 1) * sizeof(*cs));
		if (c == NULL || cs == NULL) {
			free(c);
			if (cs != NULL)
				d->chunks = cs;
			err_push(err, "dag: out of memory");
			return NULL;
		}
		d->chunks = cs;
		d->chunks[d->nchunks++] = c;
		for (int i = 0; i < NODE_CHUNK; i++) {
			c[i].pred = d->free_nodes;
			d->free_nodes = &c[i];
		}
	}
	struct snode *n = d->free_nodes;
	d->free_nodes = n->pred;
	memset(n, 0, sizeof(*n));
	if (++d->kept > d->kept_peak)
		d->kept_peak = d->kept;
	return n;
}

static struct snode *ref(struct snode *n)
{
	if (n != NULL)
		n->refs++;
	return n;
}

/* Drops a reference; a strand nobody refers to goes, and with it its
 * reference to its predecessor. */
static void unref(struct dag *d, struct snode *n)
{
	while (n != NULL && --n->refs == 0) {
		struct snode *p = n->pred;
		n->pred = d->free_nodes;
		d->free_nodes = n;
		d->kept--;
		n = p;
	}
}

/* The order of a pass over strands sorted by time: (start, end, G, end
 * order). */
static bool before(const struct snode *a, const struct snode *b)
{
	if (a->start != b->start)
		return a->start < b->start;
	if (a->end != b->end)
		return a->end < b->end;
	if (a->g != b->g)
		return a->g < b->g;
	return a->id < b->id;
}

/* ---- the unbusy integral ---- */

/* A counters row at ts: running_gs Gs run on procs Ps from ts on. */
void dag_counters(struct derive *dv, int64_t ts, int64_t running_gs)
{
	struct dag *d = dv->dag;
	int64_t procs = dv->gomaxprocs > 0 ? dv->gomaxprocs : 1;

	if (d->u_any && d->u_un)
		d->u_acc += ts - d->u_ts;
	d->u_any = true;
	d->u_ts = ts;
	d->u_un = running_gs < procs;
}

/* Unbusy time from the first counters row to t (t >= every row's ts but
 * the one at t itself, which the integral to t does not depend on). */
static int64_t unbusy_at(const struct dag *d, int64_t t)
{
	if (!d->u_any)
		return 0;
	return d->u_acc + (d->u_un && t > d->u_ts ? t - d->u_ts : 0);
}

/* ---- per-G state ---- */

int dag_g_new(struct derive *dv, struct gs *e, struct dagg *carry, struct wsr_err *err)
{
	struct dag *d = dv->dag;
	struct dagg *a = carry;

	if (a == NULL && d->free_gs != NULL) {
		/* an exited G's state, as new but for its pend array */
		a = d->free_gs;
		d->free_gs = a->next;
		struct pend *pend = a->pend;
		int32_t cap = a->cappend;
		memset(a, 0, sizeof(*a));
		a->pend = pend;
		a->cappend = cap;
	} else if (a == NULL) {
		a = calloc(1, sizeof(*a));
		if (a == NULL) {
			err_push(err, "dag: out of memory");
			return -1;
		}
	}
	a->u_start = unbusy_at(d, e->start);
	a->carried = false;
	e->dag = a;
	return 0;
}

static void tree_unlink(struct dagg *a)
{
	if (a->prev != NULL)
		a->prev->next = a->next;
	else if (a->up != NULL)
		a->up->kids = a->next;
	if (a->next != NULL)
		a->next->prev = a->prev;
	a->up = a->next = a->prev = NULL;
}

static void tree_link(struct dagg *a, struct dagg *parent)
{
	tree_unlink(a);
	if (parent == NULL || parent == a)
		return;
	a->up = parent;
	a->next = parent->kids;
	if (parent->kids != NULL)
		parent->kids->prev = a;
	parent->kids = a;
}

/* w is a proper descendant of v among the live Gs. */
static bool tree_below(const struct dagg *w, const struct dagg *v)
{
	for (const struct dagg *x = w->up; x != NULL; x = x->up)
		if (x == v)
			return true;
	return false;
}

/* The G's edges that never found a target, and its references. */
static void dagg_release(struct dag *d, struct dagg *a)
{
	for (int32_t i = 0; i < a->npend; i++) {
		d->unplaced++;
		unref(d, a->pend[i].src);
	}
	a->npend = 0;
	unref(d, a->last);
	unref(d, a->pred);
	a->last = a->pred = NULL;
}

void dag_g_exit(struct derive *dv, struct gs *e)
{
	struct dag *d = dv->dag;
	struct dagg *a = e->dag;

	if (e->first_run_ts != TS_NONE)
		d->live_stacks--;
	if (a == NULL)
		return;
	/* Its children become its parent's: the tree keeps the live Gs. */
	while (a->kids != NULL)
		tree_link(a->kids, a->up);
	tree_unlink(a);
	dagg_release(d, a);
	a->next = d->free_gs;
	d->free_gs = a;
	e->dag = NULL;
}

void dag_first_run(struct derive *dv)
{
	dv->dag->live_stacks++;
}

/* The time moves on past the events at one timestamp: the live stacks
 * after all of them (a G exiting as another starts is not two stacks). */
void dag_time(struct derive *dv)
{
	struct dag *d = dv->dag;

	if (d->live_stacks > d->peak_stacks)
		d->peak_stacks = d->live_stacks;
}

/* ---- strands and edges ---- */

static int edge_row(struct dag *d, int64_t src, uint8_t kind, int64_t ts, int64_t delay,
		    int64_t burden, bool stolen, uint8_t rel, struct wsr_err *err,
		    struct rows *rw)
{
	d->edges++;
	d->spawns += kind == E_SPAWN;
	d->wakes += kind == E_WAKE;
	d->rel[rel]++;
	if (!d->all)
		return 0;
	struct row_dag_edge row = {
		.src = src,
		.dst = d->seq,
		.kind = ekind_names[kind],
		.ts = ts,
		.delay_ns = delay,
		.burden_ns = burden,
		.stolen = stolen,
		.relation = rel != R_NONE ? rel_names[rel] : NULL,
	};
	return rows_add(rw, ROWS_DAG_EDGE, &row, err);
}

/* One more source of the strand about to end: a's in-values. */
static void offer(struct dag *d, struct dagg *a, struct snode *src, int64_t fin, int64_t bfin,
		  int64_t dfin)
{
	if (a->pred == NULL || fin > a->in || (fin == a->in && before(src, a->pred))) {
		unref(d, a->pred);
		a->pred = ref(src);
		a->in = fin;
	}
	if (bfin > a->bin)
		a->bin = bfin;
	if (dfin > a->din)
		a->din = dfin;
}

/* The first strand of G e's segment [e->start, ...) ends: its sources are
 * the edges waiting for it and the continuation from the G's last strand. */
static int segment_in(struct derive *dv, struct gs *e, struct dagg *a, struct wsr_err *err)
{
	struct dag *d = dv->dag;
	int64_t start = e->start;
	bool first = a->nseg == 0, woken = false;
	int32_t keep = 0;

	a->nseg++;
	a->from = start;
	a->in = a->bin = a->din = 0;
	a->stolen = a->prev_runnable && a->prev_steal;
	for (int32_t i = 0; i < a->npend; i++) {
		struct pend *p = &a->pend[i];
		if (p->ts > start && p->kind == E_WAKE) {
			a->pend[keep++] = *p; /* for a later segment */
			continue;
		}
		if (p->ts > start || (p->kind == E_SPAWN && !first)) {
			/* The child ran before its g_create: lost events. */
			d->unplaced++;
			unref(d, p->src);
			continue;
		}
		int64_t burden = a->u_start - p->u, delay = start - p->ts;
		woken |= p->kind == E_WAKE;
		offer(d, a, p->src, p->fin, p->bfin + burden, p->dfin + delay);
		if (edge_row(d, p->src->id, p->kind, p->ts, delay, burden, a->stolen, p->rel, err,
			     dv->rows) < 0)
			return -1;
		unref(d, p->src);
	}
	a->npend = keep;
	if (a->last == NULL)
		return 0;
	const struct snode *l = a->last;
	int64_t ready = a->prev_runnable ? a->prev_start : start, burden = 0, wait = 0;
	if (!woken) {
		burden = a->u_start - (a->prev_runnable ? a->prev_u : a->u_start);
		wait = start - ready;
		d->external += ready - l->end;
	}
	offer(d, a, a->last, l->fin, l->bfin + burden, l->dfin + wait);
	return edge_row(d, l->id, E_CONT, l->end, start - l->end, burden, a->stolen, R_NONE, err,
			dv->rows);
}

/* n's dag_strand row. */
static struct row_dag_strand strand_row(const struct snode *n, int64_t critical)
{
	return (struct row_dag_strand){
		.id = n->id,
		.g = n->g,
		.seg = n->seg,
		.start_ts = n->start,
		.end_ts = n->end,
		.ends = n->ends,
		.span_ns = n->fin,
		.burdened_ns = n->bfin,
		.pred = n->pred != NULL ? n->pred->id : ROW_NULL,
		.critical = critical,
	};
}

/* G e's open strand ends at ts (ends: what ended it); a reference-free
 * node, or NULL on error. */
static struct snode *strand_end(struct derive *dv, struct gs *e, int64_t ts, const char *ends,
				struct wsr_err *err)
{
	struct dag *d = dv->dag;
	struct dagg *a = e->dag;

	/* Its sources: the split strand before it, or segment_in's. */
	if (a->carried ? edge_row(d, a->pred->id, E_CONT, a->from, 0, 0, false, R_NONE, err,
				  dv->rows) < 0
		       : segment_in(dv, e, a, err) < 0)
		return NULL;
	struct snode *n = node_new(d, err);
	if (n == NULL)
		return NULL;
	int64_t w = ts - a->from;
	n->id = d->seq++;
	n->start = a->from;
	n->end = ts;
	n->g = e->g;
	n->seg = a->nseg - 1;
	n->ends = ends;
	n->fin = a->in + w;
	n->bfin = a->bin + w;
	n->dfin = a->din + w;
	n->pred = a->pred; /* a's reference passes to n */
	n->crit = n->pred != NULL ? n->pred->crit + 1 : 1;
	a->pred = NULL;
	a->carried = false;
	d->roots += n->pred == NULL;
	d->work += w;
	if (d->seq == 1 || n->start < d->first)
		d->first = n->start;
	if (d->seq == 1 || n->end > d->end)
		d->end = n->end;
	if (n->bfin > d->bspan)
		d->bspan = n->bfin;
	if (n->dfin > d->dspan)
		d->dspan = n->dfin;
	if (d->best == NULL || n->fin > d->best->fin ||
	    (n->fin == d->best->fin && before(n, d->best))) {
		unref(d, d->best);
		d->best = ref(n);
	}
	if (d->all) {
		struct row_dag_strand row = strand_row(n, 0);
		ref(n); /* a failing rows_add must not free it under the caller */
		int rc = rows_add(dv->rows, ROWS_DAG_STRAND, &row, err);
		n->refs--;
		if (rc < 0)
			return NULL;
	}
	return n;
}

/* G e's interval [e->start, ts) closes into g_state (gstate.c g_close):
 * a running one ends its segment's last strand. source: how the next
 * interval was entered (the g_run's source, WSR_SOURCE_*; -1: none). */
int dag_interval(struct derive *dv, struct gs *e, int64_t ts, int source, int cut,
		 struct wsr_err *err)
{
	struct dag *d = dv->dag;
	struct dagg *a = e->dag;

	if (e->state == GS_RUNNING) {
		struct snode *n =
			strand_end(dv, e, ts, cut ? "cut" : (e->reason != GR_NONE ? g_reason_name(e->reason) : ""), err);
		if (n == NULL)
			return -1;
		unref(d, a->last);
		a->last = ref(n);
	}
	a->prev_runnable = e->state == GS_RUNNABLE;
	a->prev_start = e->start;
	a->prev_u = a->u_start;
	a->prev_steal = source == WSR_SOURCE_STEAL;
	a->u_start = unbusy_at(d, ts);
	return 0;
}

static int add_pend(struct dagg *a, const struct pend *p, struct wsr_err *err)
{
	if (a->npend == a->cappend) {
		int32_t n = a->cappend > 0 ? 2 * a->cappend : 4;
		struct pend *q = realloc(a->pend, (size_t)n * sizeof(*q));
		if (q == NULL) {
			err_push(err, "dag: out of memory");
			return -1;
		}
		a->pend = q;
		a->cappend = n;
	}
	a->pend[a->npend++] = *p;
	return 0;
}

/* dag_before() of a g_create or g_ready (out of line: most events are
 * neither, and their call stays short). */
static __attribute__((noinline)) int dag_split(struct derive *dv, const struct wsr_rec *r,
					       struct wsr_err *err)
{
	struct dag *d = dv->dag;
	bool create = r->ev == EV_G_CREATE;
	int64_t emitter = (r->flags & REC_F_A1) ? r->a1 : 0;

	if (emitter <= 0) {
		/* A root G's creation, or a runtime thread's wake. */
		if (!create)
			d->wakes_runtime++;
		return 0;
	}
	struct gs *x = gtable_find(&dv->gt, emitter);
	if (x == NULL || x->state != GS_RUNNING) {
		/* The emitter was not running (lost events): no edge. */
		d->unplaced++;
		return 0;
	}
	struct dagg *a = x->dag;
	if (!a->carried)
		a->from = x->start;
	struct snode *n = strand_end(dv, x, r->ts, create ? "spawn" : "wake", err);
	if (n == NULL)
		return -1;
	/* The segment goes on from ts, its strand's paths carried on. */
	a->carried = true;
	a->from = r->ts;
	a->in = n->fin;
	a->bin = n->bfin;
	a->din = n->dfin;
	a->pred = ref(n);
	d->split = ref(n);
	d->split_kind = create ? E_SPAWN : E_WAKE;
	d->split_ts = r->ts;
	d->split_rel = R_NONE;
	if (!create) {
		struct gs *v = r->g > 0 ? gtable_find(&dv->gt, r->g) : NULL;
		if (x->has_parent && x->parent == r->g && x->g != r->g)
			d->split_rel = R_PARENT;
		else if (v != NULL && v->dag != NULL && tree_below(a, v->dag))
			d->split_rel = R_ANCESTOR;
		else
			d->split_rel = R_OTHER;
	}
	return 0;
}

/* Before the trackers apply r: a g_create or g_ready that a running G
 * emitted ends its strand there (the edge's source). */
int dag_before(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err)
{
	if (r->ev == EV_STEAL_SCAN) {
		/* probed: the victims this search looked at */
		if (r->flags & REC_F_A2)
			dv->dag->steal_attempts += r->a2;
		return 0;
	}
	if (r->ev != EV_G_CREATE && r->ev != EV_G_READY)
		return 0;
	return dag_split(dv, r, err);
}

/* dag_after() of a g_create, or of an event after a split (out of line,
 * as dag_split). */
static __attribute__((noinline)) int dag_target(struct derive *dv, const struct wsr_rec *r,
						struct wsr_err *err)
{
	struct dag *d = dv->dag;
	struct gs *t = (r->flags & REC_F_G) && r->g > 0 ? gtable_find(&dv->gt, r->g) : NULL;

	if (r->ev == EV_G_CREATE && t != NULL && t->dag != NULL) {
		int64_t parent = (r->flags & REC_F_A1) ? r->a1 : 0;
		struct gs *pe = parent > 0 ? gtable_find(&dv->gt, parent) : NULL;
		tree_link(t->dag, pe != NULL ? pe->dag : NULL);
	}
	if (d->split == NULL)
		return 0;
	struct snode *n = d->split;
	d->split = NULL;
	if (t == NULL || t->dag == NULL) {
		d->unplaced++;
		unref(d, n);
		return 0;
	}
	struct pend p = {
		.ts = d->split_ts,
		.u = unbusy_at(d, d->split_ts),
		.fin = n->fin,
		.bfin = n->bfin,
		.dfin = n->dfin,
		.src = n, /* d->split's reference passes to the edge */
		.kind = d->split_kind,
		.rel = d->split_rel,
	};
	if (add_pend(t->dag, &p, err) < 0) {
		unref(d, n);
		return -1;
	}
	return 0;
}

/* After the trackers applied r: the spawn tree, and the edge of the split
 * dag_before() made waits for its target's strand. */
int dag_after(struct derive *dv, const struct wsr_rec *r, struct wsr_err *err)
{
	if (r->ev != EV_G_CREATE && dv->dag->split == NULL)
		return 0;
	return dag_target(dv, r, err);
}

/* ---- the end ---- */

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

/* The critical path: its strands' rows (all: the rows are there, marked). */
static int critical_rows(struct derive *dv, struct wsr_err *err)
{
	struct dag *d = dv->dag;
	sqlite3_stmt *st = NULL;

	if (d->all) {
		if (rows_flush(dv->rows, err) < 0 ||
		    db_prepare(dv->db, &st, "UPDATE dag_strand SET critical = 1 WHERE id = ?1",
			       err) < 0)
			return -1;
	}
	for (const struct snode *n = d->best; n != NULL; n = n->pred) {
		if (st != NULL) {
			sqlite3_bind_int64(st, 1, n->id);
			if (sqlite3_step(st) != SQLITE_DONE) {
				err_push(err, "sqlite: dag_strand: %s", sqlite3_errmsg(dv->db));
				sqlite3_finalize(st);
				return -1;
			}
			sqlite3_reset(st);
			continue;
		}
		struct row_dag_strand row = strand_row(n, 1);
		if (rows_add(dv->rows, ROWS_DAG_STRAND, &row, err) < 0)
			return -1;
	}
	sqlite3_finalize(st);
	return rows_flush(dv->rows, err);
}

static int write_meta(struct derive *dv, struct wsr_err *err)
{
	struct dag *d = dv->dag;
	int64_t span = d->best != NULL ? d->best->fin : 0, nst = d->seq, work = d->work;
	int64_t procs = dv->gomaxprocs > 0 ? dv->gomaxprocs : 1;
	double ms = 1e6, t1 = (double)work / ms, tinf = (double)span / ms;
	double tb = (double)d->bspan / ms, tp = (double)(d->end - d->first) / ms, p = (double)procs;
	double lower = t1 / p > tinf ? t1 / p : tinf, greedy = t1 / p + tinf;

	struct {
		const char *k;
		double v;
	} reals[] = {
		{"work_ms", t1},
		{"span_ms", tinf},
		{"parallelism", span > 0 ? t1 / tinf : 0},
		{"burdened_span_ms", tb},
		{"burdened_parallelism", d->bspan > 0 ? t1 / tb : 0},
		{"observed_ms", tp},
		{"lower_bound_ms", lower},
		{"greedy_bound_ms", greedy},
		{"burdened_bound_ms", t1 / p + tb},
		{"delayed_span_ms", (double)d->dspan / ms},
		{"external_wait_ms", (double)d->external / ms},
		{"bound_position", greedy > lower ? (tp - lower) / (greedy - lower) : 0},
		{"span_strands", work > 0 ? (double)span * (double)nst / (double)work : 0},
	};

	struct {
		const char *k;
		int64_t v;
	} ints[] = {
		{"dag_strands", nst},
		{"dag_edges", d->edges},
		{"dag_spawn_edges", d->spawns},
		{"dag_wake_edges", d->wakes},
		{"dag_critical_strands", d->best != NULL ? d->best->crit : 0},
		{"dag_wakes_parent", d->rel[R_PARENT]},
		{"dag_wakes_ancestor", d->rel[R_ANCESTOR]},
		{"dag_wakes_other", d->rel[R_OTHER]},
		{"dag_wakes_runtime", d->wakes_runtime},
		{"dag_unplaced", d->unplaced},
		{"dag_roots", d->roots},
		{"steal_attempts", d->steal_attempts},
		{"peak_live_stacks", d->peak_stacks},
		{"dag_kept_peak", d->kept_peak},
		{"dag_fully_strict", d->rel[R_ANCESTOR] == 0 && d->rel[R_OTHER] == 0},
		{"dag_strict", d->rel[R_OTHER] == 0},
	};

	for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++)
		if (meta_real(dv->db, reals[i].k, reals[i].v, err) < 0)
			return -1;
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		if (db_meta_int(dv->db, ints[i].k, ints[i].v, err) < 0)
			return -1;
	return db_meta_text(dv->db, "dag_tables", d->all ? "all" : "critical", err);
}

/* After g_finish (every interval closed): the edges still waiting, the
 * critical path's rows, the figures in meta. */
int dag_finish(struct derive *dv, struct wsr_err *err)
{
	struct dag *d = dv->dag;

	dag_time(dv);
	for (size_t i = 0; i < dv->gt.gn; i++) {
		struct gs *e = &dv->gt.gtab[i];
		if (e->dag != NULL) /* a G of id 0 (bad input) too */
			dagg_release(d, e->dag);
	}
	unref(d, d->split);
	d->split = NULL;
	if (critical_rows(dv, err) < 0 || write_meta(dv, err) < 0) {
		err_push(err, "building the DAG (dag_strand, dag_edge)");
		return -1;
	}
	return 0;
}

/* A live G's state, when the deriver goes (the tree is dropped whole). */
void dag_g_free(struct gs *e)
{
	dag_state_free(e->dag);
	e->dag = NULL;
}
