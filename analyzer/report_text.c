/*
 * report_text.c - `wsr report` in text (terminals) and markdown (a CI job
 * summary): the one renderer of both, as the md flag changes only headings
 * and tables, never which figures appear (docs/report.md, "Sections").
 *
 * Invariants: reads struct report (report.h) and the discarded ranges and
 *   steal pairs of the database; every figure the lost events may have
 *   touched carries r->mark.
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

static int print_discarded(struct report *r, FILE *f, bool md, struct wsr_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (db_prepare(
		    r->db, &st,
		    "SELECT kind, stream, cpu, begin_ts, end_ts, count FROM discarded ORDER BY coalesce(begin_ts, 0) LIMIT 20",
		    err) < 0) {
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(st, 0);
		const char *stream = (const char *)sqlite3_column_text(st, 1);
		char b[64] = "?", e[64] = "?", c[32] = "?";
		if (sqlite3_column_type(st, 3) != SQLITE_NULL)
			report_fmt_ns(b, sizeof(b), sqlite3_column_int64(st, 3) - r->m->start_ts);
		if (sqlite3_column_type(st, 4) != SQLITE_NULL)
			report_fmt_ns(e, sizeof(e), sqlite3_column_int64(st, 4) - r->m->start_ts);
		if (sqlite3_column_type(st, 5) != SQLITE_NULL)
			snprintf(c, sizeof(c), "%" PRId64, (int64_t)sqlite3_column_int64(st, 5));
		fprintf(f, "%s%s %s lost on cpu %d (stream %s) between %s and %s\n",
			md ? "- " : "  ", c, kind, sqlite3_column_int(st, 2), stream, b, e);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		err_push(err, "sqlite: %s", sqlite3_errmsg(r->db));
		return -1;
	}
	/* The first 20 places; the JSON report and the table hold them all. */
	if (r->m->discarded_ranges > 20)
		fprintf(f,
			"%s... and %" PRId64
			" more (every place: the JSON report, or SELECT * FROM "
			"discarded)\n",
			md ? "- " : "  ", r->m->discarded_ranges - 20);
	return 0;
}

struct cell {
	int64_t steals, gs;
};

static struct cell *steal_matrix(struct report *r, struct wsr_err *err)
{
	int np = r->m->np;
	struct cell *mx = calloc((size_t)(np > 0 ? np * np : 1), sizeof(*mx));
	sqlite3_stmt *st = NULL;
	int rc;

	if (mx == NULL) {
		err_push(err, "out of memory");
		return NULL;
	}
	if (db_prepare(r->db, &st, METRICS_STEAL_PAIRS_SQL, err) < 0) {
		free(mx);
		return NULL;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int t = sqlite3_column_int(st, 0), v = sqlite3_column_int(st, 1);
		if (t < 0 || t >= np || v < 0 || v >= np)
			continue;
		mx[t * np + v].steals = sqlite3_column_int64(st, 2);
		mx[t * np + v].gs = sqlite3_column_int64(st, 3);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		err_push(err, "sqlite: %s", sqlite3_errmsg(r->db));
		free(mx);
		return NULL;
	}
	return mx;
}

/* Program, exit, duration, counts; where events were lost. */
static int print_header(struct report *r, FILE *f, bool md, struct wsr_err *err)
{
	const struct metrics *m = r->m;
	const char *mk = r->mark;
	char d[64];

	report_fmt_ns(d, sizeof(d), m->duration_ns);
	if (md)
		fprintf(f, "## wsr report: %s\n\n", m->program);
	else
		fprintf(f, "wsr report: %s\n", m->path);
	const char *pre = md ? "- " : "  ";
	fprintf(f, "%sprogram: %s%s%s%s, runtime %s\n", pre,
		r->m->command[0] ? r->m->command : m->program, m->hostname[0] ? " on " : "",
		m->hostname, m->vpid[0] ? (md ? "" : "") : "",
		m->runtime_version[0] ? m->runtime_version : "?");
	fprintf(f, "%sexit: %s\n", pre, r->exit_text);
	if (m->policy[0] != '\0')
		fprintf(f, "%spolicy: %s\n", pre, m->policy);
	if (m->policy_knobs[0] != '\0')
		fprintf(f, "%sknobs: %s\n", pre, m->policy_knobs);
	if (r->m->init_missing)
		fprintf(f,
			"%sduration: %s, gomaxprocs unknown (the trace has no init event: the "
			"recording started after the program), threads %" PRId64 "%s, Gs %" PRId64
			"%s\n",
			pre, d, m->threads, mk, m->gs, mk);
	else
		fprintf(f,
			"%sduration: %s, gomaxprocs %d, threads %" PRId64 "%s, Gs %" PRId64 "%s\n",
			pre, d, m->gomaxprocs, m->threads, mk, m->gs, mk);
	fprintf(f,
		"%sevents: %" PRId64 " (%" PRId64 " wsr), discarded: %" PRId64 " events, %" PRId64
		" packets\n",
		pre, m->events, m->wsr_events, m->discarded_events, m->discarded_packets);
	if (m->discarded_events + m->discarded_packets > 0) {
		fprintf(f, "%sWARNING: events were lost; figures marked * may be off. Where:\n",
			pre);
		return print_discarded(r, f, md, err);
	}
	return 0;
}

/* The schedtrace lines (report.c's r->lines, with the interval r->interval). */
static void print_schedtrace(const struct report *r, FILE *f, bool md)
{
	const char *mk = r->mark;
	char iv[64];

	report_fmt_ns(iv, sizeof(iv), r->interval);
	fprintf(f,
		md ? "\n### schedtrace (every %s, reconstructed)\n\n```\n"
		   : "\nschedtrace (every %s, reconstructed from the trace%s):\n",
		iv,
		md      ? ""
		: mk[0] ? "; may be off after a loss"
			: "");
	for (int i = 0; i < r->nlines; i++)
		fprintf(f, "%s\n", r->lines[i]);
	if (md)
		fprintf(f, "```\n");
}

/* One row per P: time in each state, steals, spills, gets, schedticks. */
static void print_per_p(const struct report *r, FILE *f, bool md)
{
	const struct metrics *m = r->m;
	const char *mk = r->mark;

	if (md) {
		fprintf(f, "\n### per P\n\n| P | running | idle | spinning | syscall | sched | "
			   "steals in (Gs) | steals out (Gs) | spills | global gets | schedticks | "
			   "runnext |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	} else {
		fprintf(f,
			"\nper P%s:        running   idle  spinning  syscall  sched   steals in "
			"(Gs)  steals out (Gs)  spills  global gets  schedticks  runnext\n",
			mk);
	}
	for (int p = 0; p < m->np; p++) {
		const struct p_metrics *pm = &m->p[p];
		double v[5];
		metrics_p_pcts(m, p, v);
		char in[48], out[48];
		snprintf(in, sizeof(in), "%" PRId64 " (%" PRId64 ")", pm->steals_in, pm->gs_in);
		snprintf(out, sizeof(out), "%" PRId64 " (%" PRId64 ")", pm->steals_out, pm->gs_out);
		if (md)
			fprintf(f,
				"| P%d | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %s | %s | %" PRId64
				" | %" PRId64 " | %" PRId64 " | %" PRId64 " |\n",
				p, v[0], v[1], v[2], v[3], v[4], in, out, pm->spills,
				pm->global_gets, pm->schedticks, pm->runnext_runs);
		else
			fprintf(f,
				"  P%-4d            %6.1f%% %6.1f%% %7.1f%% %7.1f%% %6.1f%%   %-15s  "
				"%-15s  %6" PRId64 "  %11" PRId64 "  %10" PRId64 "  %7" PRId64 "\n",
				p, v[0], v[1], v[2], v[3], v[4], in, out, pm->spills,
				pm->global_gets, pm->schedticks, pm->runnext_runs);
	}
}

/* Latency, runnext, steals, spinning, idle Ps: one line each. */
static void print_summary(const struct report *r, FILE *f, bool md)
{
	const struct metrics *m = r->m;
	const char *mk = r->mark;
	char b1[64], b2[64], b3[64], b4[64];

	report_fmt_ns(b1, sizeof(b1), m->latency_p50);
	report_fmt_ns(b2, sizeof(b2), m->latency_p90);
	report_fmt_ns(b3, sizeof(b3), m->latency_p99);
	report_fmt_ns(b4, sizeof(b4), m->latency_max);
	fprintf(f,
		"\n%sscheduling latency%s (ready -> run, %" PRId64
		" samples): p50 %s, p90 %s, p99 %s, max %s\n",
		md ? "- " : "", mk, m->latency_n, b1, b2, b3, b4);
	fprintf(f, "%srunnext hit rate%s: %.1f%% of %" PRId64 " runs\n", md ? "- " : "", mk,
		report_metric(m, "runnext_hit_pct"), m->runs);
	fprintf(f,
		"%ssteals%s: %" PRId64 " (%" PRId64 " Gs); spills: %" PRId64 " (%" PRId64
		" Gs); global gets: %" PRId64 " (%" PRId64 " Gs)\n",
		md ? "- " : "", mk, m->steals, m->stolen, m->spills, m->spilled, m->global_gets,
		m->global_gs);
	report_fmt_ns(b1, sizeof(b1), m->spin_ns);
	report_fmt_ns(b2, sizeof(b2), (int64_t)(report_metric(m, "spin_per_steal_us") * 1e3));
	fprintf(f,
		"%sspinning%s: %s of M time (%.1f%% of a CPU), %s per successful steal; %" PRId64
		" spins, %" PRId64 " found work, %" PRId64 " found none (%.0f%%)\n",
		md ? "- " : "", mk, b1, report_metric(m, "spin_cpu_pct"), b2, m->spins,
		m->spins_found, m->spins_empty, report_metric(m, "spin_wasted_pct"));
	fprintf(f,
		"%sidle Ps while work was queued%s: %.1f%% of the run (global queue), %.1f%% "
		"(any runnable G)\n",
		md ? "- " : "", mk, report_metric(m, "idle_while_global_pct"),
		report_metric(m, "idle_while_runnable_pct"));
}

/* The thief x victim matrix of steals and Gs. */
static int print_steal_matrix(struct report *r, FILE *f, bool md, struct wsr_err *err)
{
	const struct metrics *m = r->m;
	const char *mk = r->mark;

	struct cell *mx = steal_matrix(r, err);
	if (mx == NULL)
		return -1;
	if (md) {
		fprintf(f, "\n### steal matrix (row: thief, column: victim; steals / Gs)\n\n|   |");
		for (int v = 0; v < m->np; v++)
			fprintf(f, " P%d |", v);
		fprintf(f, "\n|---|");
		for (int v = 0; v < m->np; v++)
			fprintf(f, "---|");
		fprintf(f, "\n");
	} else {
		fprintf(f, "\nsteal matrix%s (row: thief, column: victim; steals / Gs):\n       ",
			mk);
		for (int v = 0; v < m->np; v++)
			fprintf(f, " %14s%d", "P", v);
		fprintf(f, "\n");
	}
	for (int t = 0; t < m->np; t++) {
		fprintf(f, md ? "| P%d |" : "  P%-4d", t);
		for (int v = 0; v < m->np; v++) {
			char c[48];
			if (t == v)
				snprintf(c, sizeof(c), "-");
			else
				snprintf(c, sizeof(c), "%" PRId64 " / %" PRId64,
					 mx[t * m->np + v].steals, mx[t * m->np + v].gs);
			fprintf(f, md ? " %s |" : " %15s", c);
		}
		fprintf(f, "\n");
	}
	free(mx);

	return 0;
}

int report_text_write(struct report *r, FILE *f, bool md, struct wsr_err *err)
{
	const struct metrics *m = r->m;

	if (print_header(r, f, md, err) < 0)
		return -1;
	print_schedtrace(r, f, md);
	print_per_p(r, f, md);
	print_summary(r, f, md);
	if (print_steal_matrix(r, f, md, err) < 0)
		return -1;
	dag_print_text(f, &m->ws, m->steals, m->discarded_events + m->discarded_packets > 0, md);

	fprintf(f, md ? "\n### diagnostics\n\n" : "\ndiagnostics:\n");
	if (r->ndiags == 0)
		fprintf(f, "%snothing stands out\n", md ? "- " : "  - ");
	for (int i = 0; i < r->ndiags; i++)
		fprintf(f, "%s%s\n", md ? "- " : "  - ", r->diags[i].text);
	return 0;
}
