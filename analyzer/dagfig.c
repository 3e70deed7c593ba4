/*
 * dagfig.c - the work/span figures as reports read them back from meta and
 * print them (dag.h): dag_figures_load(), the verdict line, the text,
 * markdown and JSON blocks. dag.c computes and writes them.
 *
 * Invariants: reads meta only; a figure absent from meta (an older
 *   database) reads as 0.
 * Concurrency: any thread, on its own connection.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "dag.h"
#include "db.h"

static double meta_d(sqlite3 *db, const char *key)
{
	sqlite3_stmt *st = NULL;
	double v = 0;

	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL) !=
	    SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int64_t meta_n(sqlite3 *db, const char *key)
{
	int64_t v = 0;

	return db_get_meta_int(db, key, &v) == 0 ? v : 0;
}

void dag_figures_load(sqlite3 *db, struct dag_figures *f)
{
	int64_t strands = 0;

	memset(f, 0, sizeof(*f));
	if (db_get_meta_int(db, "dag_strands", &strands) < 0 || strands <= 0)
		return;
	f->present = true;
	f->procs = (int)meta_n(db, "gomaxprocs");
	f->work_ms = meta_d(db, "work_ms");
	f->span_ms = meta_d(db, "span_ms");
	f->parallelism = meta_d(db, "parallelism");
	f->burdened_span_ms = meta_d(db, "burdened_span_ms");
	f->burdened_parallelism = meta_d(db, "burdened_parallelism");
	f->observed_ms = meta_d(db, "observed_ms");
	f->lower_bound_ms = meta_d(db, "lower_bound_ms");
	f->greedy_bound_ms = meta_d(db, "greedy_bound_ms");
	f->burdened_bound_ms = meta_d(db, "burdened_bound_ms");
	f->bound_position = meta_d(db, "bound_position");
	f->span_strands = meta_d(db, "span_strands");
	f->strands = strands;
	f->edges = meta_n(db, "dag_edges");
	f->spawn_edges = meta_n(db, "dag_spawn_edges");
	f->wake_edges = meta_n(db, "dag_wake_edges");
	f->critical_strands = meta_n(db, "dag_critical_strands");
	f->wakes_parent = meta_n(db, "dag_wakes_parent");
	f->wakes_ancestor = meta_n(db, "dag_wakes_ancestor");
	f->wakes_other = meta_n(db, "dag_wakes_other");
	f->wakes_runtime = meta_n(db, "dag_wakes_runtime");
	f->unplaced = meta_n(db, "dag_unplaced");
	f->roots = meta_n(db, "dag_roots");
	f->steal_attempts = meta_n(db, "steal_attempts");
	f->peak_live_stacks = meta_n(db, "peak_live_stacks");
	f->external_wait_ms = meta_d(db, "external_wait_ms");
	f->fully_strict = meta_n(db, "dag_fully_strict") != 0;
	f->strict = meta_n(db, "dag_strict") != 0;
}

void dag_verdict(const struct dag_figures *f, char *buf, size_t size)
{
	char where[256], model[512];
	double full = f->burdened_bound_ms + f->external_wait_ms;

	if (f->observed_ms <= f->greedy_bound_ms)
		snprintf(where, sizeof(where),
			 "T_P is within the greedy bound, %.0f%% of the way from the lower bound "
			 "to it.",
			 100.0 * f->bound_position);
	else
		snprintf(where, sizeof(where),
			 "T_P is above the greedy bound by %.3f ms: the schedule was not greedy "
			 "(a P went without a G while one was ready) or waited outside the DAG.",
			 f->observed_ms - f->greedy_bound_ms);
	if (f->fully_strict)
		snprintf(model, sizeof(model),
			 "The DAG is fully strict (every wake is a child's join to its parent): "
			 "it meets the hypothesis of the randomized work-stealing theorem, "
			 "E[T_P] = T1/P + O(T_inf), a statement about Blumofe and Leiserson's "
			 "stealer, which wsr's differs from (it steals half a queue, keeps runnext "
			 "and a global queue).");
	else
		snprintf(model, sizeof(model),
			 "The DAG is not fully strict (%" PRId64 " wakes to a farther ancestor, "
			 "%" PRId64 " between other Gs): the randomized work-stealing theorem "
			 "does not apply; the greedy bound T_P <= T1/P + T_inf still holds for "
			 "any greedy schedule of the DAG as recorded.",
			 f->wakes_ancestor, f->wakes_other);
	snprintf(buf, size,
		 "%s %s For this schedule, T_P <= T1/P + burdened span + external waits "
		 "(%.3f <= %.3f ms)%s.",
		 where, model, f->observed_ms, full,
		 f->roots > 1 || f->unplaced > 0
			 ? ", provided every strand but the first has an enabling edge, which "
			   "this DAG does not (several roots, or events it could not place)"
			 : "");
}

void dag_print_text(FILE *f, const struct dag_figures *w, int64_t steals, bool lossy, bool md)
{
	char verdict[1536];

	fprintf(f, md ? "\n### work and span\n\n" : "\nwork and span (docs/workspan.md):\n");
	if (!w->present) {
		fprintf(f, "%sno G ran: no DAG\n", md ? "- " : "  ");
		return;
	}
	double pts = (double)w->procs * w->span_strands;

	struct {
		const char *name, *unit, *note;
		double v;
	} rows[] = {
		{"work T1", "ms", "running time of every strand", w->work_ms},
		{"span T_inf", "ms", "longest path, by running time", w->span_ms},
		{"parallelism", "", "T1 / T_inf", w->parallelism},
		{"burdened span", "ms", "plus each edge's delay while a P had no G",
		 w->burdened_span_ms},
		{"burdened parallelism", "", "T1 / burdened span", w->burdened_parallelism},
		{"observed T_P", "ms", "first strand's start to last strand's end", w->observed_ms},
		{"lower bound", "ms", "max(T1/P, T_inf)", w->lower_bound_ms},
		{"greedy bound", "ms", "T1/P + T_inf", w->greedy_bound_ms},
		{"burdened bound", "ms", "T1/P + burdened span", w->burdened_bound_ms},
		{"external waits", "ms", "sleeps, blocking calls, runtime wakes: no edge",
		 w->external_wait_ms},
	};

	if (md)
		fprintf(f, "| figure | value | meaning |\n|---|---|---|\n");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (md)
			fprintf(f, "| %s | %.3f%s%s | %s |\n", rows[i].name, rows[i].v,
				rows[i].unit[0] ? " " : "", rows[i].unit, rows[i].note);
		else
			fprintf(f, "  %-22s %12.3f %-3s %s\n", rows[i].name, rows[i].v,
				rows[i].unit, rows[i].note);
	}
	const char *pre = md ? "\n" : "  ";
	fprintf(f,
		"%sP = %d. The DAG: %" PRId64 " strands, %" PRId64 " edges (%" PRId64
		" spawns, %" PRId64 " wakes); critical path %" PRId64 " strands.\n",
		pre, w->procs, w->strands, w->edges, w->spawn_edges, w->wake_edges,
		w->critical_strands);
	fprintf(f,
		"%sSteals: %" PRId64 " successful, %" PRId64
		" attempts (victims probed), against P x T_inf = %d x %.1f mean strands = %.1f.\n",
		md ? "" : "  ", steals, w->steal_attempts, w->procs, w->span_strands, pts);
	fprintf(f,
		"%sPeak live stacks: %" PRId64
		" (Gs started and not exited; against S1 x P, S1 from a P = 1 trace: wsr scale).\n",
		md ? "" : "  ", w->peak_live_stacks);
	fprintf(f,
		"%sWakes: %" PRId64 " child to parent, %" PRId64 " to a farther ancestor, %" PRId64
		" between other Gs; %" PRId64
		" by runtime threads (timers, I/O, syscall returns: not in the DAG)%s.\n",
		md ? "" : "  ", w->wakes_parent, w->wakes_ancestor, w->wakes_other,
		w->wakes_runtime,
		w->unplaced > 0 ? "; some spawns or wakes could not be placed (lost events, or a G "
				  "that never ran after them)"
				: "");
	dag_verdict(w, verdict, sizeof(verdict));
	fprintf(f, "%s%s\n", md ? "\n" : "  ", verdict);
	if (lossy)
		fprintf(f,
			"%sEvents were lost: strands and edges near the losses are missing, so "
			"every figure above is approximate.\n",
			md ? "\n" : "  ");
}

void dag_print_json(FILE *f, const struct dag_figures *w, int64_t steals)
{
	char verdict[1536];

	if (!w->present) {
		fprintf(f, "null");
		return;
	}
	dag_verdict(w, verdict, sizeof(verdict));
	fprintf(f,
		"{\"procs\": %d, \"work_ms\": %.17g, \"span_ms\": %.17g, \"parallelism\": %.17g, "
		"\"burdened_span_ms\": %.17g, \"burdened_parallelism\": %.17g, "
		"\"observed_ms\": %.17g, \"lower_bound_ms\": %.17g, \"greedy_bound_ms\": %.17g, "
		"\"burdened_bound_ms\": %.17g, \"external_wait_ms\": %.17g, "
		"\"bound_position\": %.17g, "
		"\"span_strands\": %.17g, \"steals\": %" PRId64 ", \"steal_attempts\": %" PRId64
		", \"strands\": %" PRId64 ", \"edges\": %" PRId64 ", \"spawn_edges\": %" PRId64
		", \"wake_edges\": %" PRId64 ", \"critical_strands\": %" PRId64
		", \"peak_live_stacks\": %" PRId64 ", \"wakes_parent\": %" PRId64
		", \"wakes_ancestor\": %" PRId64 ", \"wakes_other\": %" PRId64
		", \"wakes_runtime\": %" PRId64 ", \"unplaced\": %" PRId64 ", \"roots\": %" PRId64
		", \"fully_strict\": %s, \"strict\": %s, \"verdict\": \"",
		w->procs, w->work_ms, w->span_ms, w->parallelism, w->burdened_span_ms,
		w->burdened_parallelism, w->observed_ms, w->lower_bound_ms, w->greedy_bound_ms,
		w->burdened_bound_ms, w->external_wait_ms, w->bound_position, w->span_strands,
		steals, w->steal_attempts, w->strands, w->edges, w->spawn_edges, w->wake_edges,
		w->critical_strands, w->peak_live_stacks, w->wakes_parent, w->wakes_ancestor,
		w->wakes_other, w->wakes_runtime, w->unplaced, w->roots,
		w->fully_strict ? "true" : "false", w->strict ? "true" : "false");
	/* The verdict is plain ASCII without quotes or backslashes. */
	fputs(verdict, f);
	fputs("\"}", f);
}
