/*
 * report_json.c - `wsr report --format json`: every metric of `wsr check
 * --list`, the per-P figures, the schedtrace lines, the steal matrix, the
 * discarded ranges, work and span, and the diagnostics, in one object.
 *
 * Invariants: strings through json_fputs() (sbuf.c), numbers as %.17g or
 *   integers; the member order is part of the format (scripts diff it).
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
#include "sbuf.h"

int report_json_write(struct report *r, FILE *f, struct wsr_err *err)
{
	const struct metrics *m = r->m;
	sqlite3_stmt *st = NULL;
	int rc;

	fprintf(f, "{\n  \"trace\": ");
	json_fputs(f, m->path);
	fprintf(f, ",\n  \"program\": ");
	json_fputs(f, m->program);
	fprintf(f, ",\n  \"hostname\": ");
	json_fputs(f, m->hostname);
	fprintf(f, ",\n  \"runtime_version\": ");
	json_fputs(f, m->runtime_version);
	if (m->policy[0] != '\0') {
		fprintf(f, ",\n  \"policy\": ");
		json_fputs(f, m->policy);
	}
	if (m->policy_knobs[0] != '\0') {
		fprintf(f, ",\n  \"policy_knobs\": ");
		json_fputs(f, m->policy_knobs);
	}
	fprintf(f, ",\n  \"command\": ");
	json_fputs(f, r->m->command);
	if (r->m->exit_status >= 0)
		fprintf(f, ",\n  \"exit_status\": %" PRId64 ",\n  \"exit_signal\": %" PRId64,
			r->m->exit_status, r->m->exit_signal);
	else
		fprintf(f, ",\n  \"exit_status\": null,\n  \"exit_signal\": null");
	fprintf(f, ",\n  \"exit\": ");
	json_fputs(f, r->exit_text);
	fprintf(f,
		",\n  \"start_ts\": %" PRId64 ",\n  \"end_ts\": %" PRId64
		",\n  \"duration_ns\": %" PRId64 ",\n",
		m->start_ts, m->end_ts, m->duration_ns);
	if (r->m->init_missing)
		fprintf(f, "  \"gomaxprocs\": null,\n  \"init_missing\": true,\n");
	else
		fprintf(f, "  \"gomaxprocs\": %d,\n  \"init_missing\": false,\n", m->gomaxprocs);
	fprintf(f, "  \"lossy\": %s,\n",
		m->discarded_events + m->discarded_packets > 0 ? "true" : "false");
	fprintf(f, "  \"metrics\": {");
	for (int i = 0; i < metric_count; i++) {
		double v = report_metric(m, metric_list[i].name);
		fprintf(f, "%s\n    \"%s\": %.17g", i ? "," : "", metric_list[i].name, v);
	}
	fprintf(f, "\n  },\n  \"latency_samples\": %" PRId64 ",\n  \"procs\": [", m->latency_n);
	for (int p = 0; p < m->np; p++) {
		const struct p_metrics *pm = &m->p[p];
		double v[5];
		metrics_p_pcts(m, p, v);
		fprintf(f,
			"%s\n    {\"p\": %d, \"running_pct\": %.3f, \"idle_pct\": %.3f, "
			"\"spinning_pct\": %.3f, \"syscall_pct\": %.3f, \"sched_pct\": %.3f, "
			"\"steals_in\": %" PRId64 ", \"gs_in\": %" PRId64
			", \"steals_out\": %" PRId64 ", \"gs_out\": %" PRId64
			", \"spills\": %" PRId64 ", \"global_gets\": %" PRId64
			", \"schedticks\": %" PRId64 ", \"runnext_runs\": %" PRId64 "}",
			p ? "," : "", p, v[0], v[1], v[2], v[3], v[4], pm->steals_in, pm->gs_in,
			pm->steals_out, pm->gs_out, pm->spills, pm->global_gets, pm->schedticks,
			pm->runnext_runs);
	}
	fprintf(f, "\n  ],\n  \"interval_ns\": %" PRId64 ",\n  \"schedtrace\": [", r->interval);
	for (int i = 0; i < r->nlines; i++) {
		fprintf(f, "%s\n    ", i ? "," : "");
		json_fputs(f, r->lines[i]);
	}
	fprintf(f, "\n  ],\n  \"steal_matrix\": [");
	if (db_prepare(r->db, &st, METRICS_STEAL_PAIRS_SQL, err) < 0) {
		return -1;
	}
	int k = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		fprintf(f,
			"%s\n    {\"thief\": %d, \"victim\": %d, \"steals\": %" PRId64
			", \"gs\": %" PRId64 "}",
			k++ ? "," : "", sqlite3_column_int(st, 0), sqlite3_column_int(st, 1),
			(int64_t)sqlite3_column_int64(st, 2), (int64_t)sqlite3_column_int64(st, 3));
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		err_push(err, "sqlite: %s", sqlite3_errmsg(r->db));
		return -1;
	}
	fprintf(f, "\n  ],\n  \"discarded\": [");
	if (db_prepare(r->db, &st,
		       "SELECT kind, stream, cpu, begin_ts, end_ts, count FROM discarded",
		       err) < 0) {
		return -1;
	}
	k = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		fprintf(f, "%s\n    {\"kind\": ", k++ ? "," : "");
		json_fputs(f, (const char *)sqlite3_column_text(st, 0));
		fprintf(f, ", \"stream\": ");
		json_fputs(f, (const char *)sqlite3_column_text(st, 1));
		for (int c = 2; c < 6; c++) {
			static const char *const names[] = {"",         "",       "cpu",
							    "begin_ts", "end_ts", "count"};
			if (sqlite3_column_type(st, c) == SQLITE_NULL)
				fprintf(f, ", \"%s\": null", names[c]);
			else
				fprintf(f, ", \"%s\": %" PRId64, names[c],
					(int64_t)sqlite3_column_int64(st, c));
		}
		fprintf(f, "}");
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		err_push(err, "sqlite: %s", sqlite3_errmsg(r->db));
		return -1;
	}
	fprintf(f, "\n  ],\n  \"work_span\": ");
	dag_print_json(f, &m->ws, m->steals);
	fprintf(f, ",\n  \"diagnostics\": [");
	for (int i = 0; i < r->ndiags; i++) {
		fprintf(f, "%s\n    {\"id\": \"%s\", \"text\": ", i ? "," : "", r->diags[i].id);
		json_fputs(f, r->diags[i].text);
		fprintf(f, "}");
	}
	fprintf(f, "\n  ]\n}\n");
	return 0;
}
