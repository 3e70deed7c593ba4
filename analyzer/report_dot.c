/*
 * report_dot.c - `wsr report --steal-graph dot`: the steal graph in
 * Graphviz DOT, an edge victim -> thief per steal pair (metrics.h), labelled
 * with steals and Gs, its width by Gs; nodes show each P's running %.
 *
 * Invariants: the pairs are METRICS_STEAL_PAIRS_SQL's rows, as the report's
 *   matrix and the viewer's graph.
 * Concurrency: single-threaded.
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
#include "metrics.h"
#include "report.h"

int report_dot_write(struct report *r, FILE *f, struct wsr_err *err)
{
	const struct metrics *m = r->m;
	sqlite3_stmt *st = NULL;
	int rc;
	int64_t maxgs = 1;

	fprintf(f, "/* wsr steal graph of %s: an edge victim -> thief carries the Gs stolen */\n",
		m->path);
	fprintf(f, "digraph steals {\n  rankdir=LR;\n  node [shape=circle];\n");
	for (int p = 0; p < m->np; p++) {
		double v[5];
		metrics_p_pcts(m, p, v);
		fprintf(f, "  P%d [label=\"P%d\\n%.0f%% running\"];\n", p, p, v[0]);
	}
	if (db_prepare(r->db, &st, "SELECT max(gs) FROM steal_graph", err) < 0)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0)
		maxgs = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW) {
		err_push(err, "sqlite: reading steal_graph: %s", sqlite3_errmsg(r->db));
		return -1;
	}
	if (db_prepare(r->db, &st, METRICS_STEAL_PAIRS_SQL, err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t gs = sqlite3_column_int64(st, 3);
		fprintf(f,
			"  P%d -> P%d [label=\"%" PRId64 " steals\\n%" PRId64
			" Gs\", penwidth=%.2f];\n",
			sqlite3_column_int(st, 1), sqlite3_column_int(st, 0),
			(int64_t)sqlite3_column_int64(st, 2), gs,
			1.0 + 5.0 * (double)gs / (double)maxgs);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		err_push(err, "sqlite: %s", sqlite3_errmsg(r->db));
		return -1;
	}
	fprintf(f, "}\n");
	return 0;
}
