/*
 * report.c - `wsr report trace.db [--interval DUR] [--detail]
 *            [--format text|md|json|junit|html] [--steal-graph dot] [-o FILE]`.
 *
 * Design: metrics.c computes the figures once (struct metrics); this file
 * only lays them out, in four formats that carry the same content:
 * header, schedtrace lines (Go's format, reconstructed at each interval from
 * the counters step function), per-P table, latency, runnext, spinning,
 * steal matrix, diagnostics. When events were discarded, the header says
 * where, and every figure that may be off carries a `*`.
 *
 * Invariants:
 *   - The database is opened read-only; output goes to stdout, errors to
 *     stderr as one cause chain.
 *   - Exit codes: 0 report written; 1 failure (SQLite); 2 usage error or not
 *     a wsr database. Diagnostics never change the exit code (`wsr check`
 *     is the CI gate).
 * Concurrency: single-threaded.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cli.h"
#include "cmd.h"
#include "dag.h"
#include "db.h"
#include "duration.h"
#include "metrics.h"
#include "outfile.h"
#include "sbuf.h"

enum fmt {
	F_TEXT,
	F_MD,
	F_JSON,
	F_JUNIT
};

#define MAX_LINES 100000
#define LINE_SIZE 65536

static void xml_text(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

static void fmt_ns(char *buf, size_t size, int64_t ns)
{
	if (ns >= 1000000000)
		snprintf(buf, size, "%.3f s", (double)ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, size, "%.3f ms", (double)ns / 1e6);
	else if (ns >= 1000)
		snprintf(buf, size, "%.1f us", (double)ns / 1e3);
	else
		snprintf(buf, size, "%" PRId64 " ns", ns);
}

struct report {
	sqlite3 *db;
	struct metrics *m;
	int64_t interval;
	bool detail;
	char **lines;
	int nlines;
	struct diag diags[16];
	int ndiags;
	const char *mark; /* "*" when events were lost, else "" */
	/* From `wsr run`'s record (meta.command, exit_status, exit_signal);
	 * empty / -1 when the trace was recorded otherwise. */
	char command[4096];
	int64_t exit_status, exit_signal;
	char exit_text[256]; /* how the program ended, one phrase */
	bool init_missing;   /* meta.init_missing: gomaxprocs is unknown */
};

/* How the traced program ended, as the report states it (docs/report.md). */
static void describe_exit(struct report *r)
{
	if (r->exit_status < 0) {
		snprintf(r->exit_text, sizeof(r->exit_text), "unknown (not recorded by `wsr run`)");
	} else if (r->exit_signal > 0) {
		int sig = (int)r->exit_signal;
		snprintf(r->exit_text, sizeof(r->exit_text), "killed by signal %d (%s)%s", sig,
			 strsignal(sig),
			 sig == SIGABRT ? ": it crashed (libwsr aborts on a fatal error)" : "");
	} else if (r->exit_status == 2) {
		snprintf(r->exit_text, sizeof(r->exit_text),
			 "exited with status 2 (libwsr exits 2 on a deadlock, \"all goroutines "
			 "are asleep\": see the program's stderr)");
	} else if (r->exit_status == 0) {
		snprintf(r->exit_text, sizeof(r->exit_text), "exited with status 0");
	} else {
		snprintf(r->exit_text, sizeof(r->exit_text),
			 "exited with status %" PRId64 " (failure)", r->exit_status);
	}
}

/* The figures read from meta that metrics.c does not carry. */
static int load_run_meta(struct report *r, struct wsr_err *err)
{
	int64_t v;
	int n0 = err->n;

	db_meta_read_text(r->db, "command", r->command, sizeof(r->command), err);
	r->exit_status = db_meta_read_int(r->db, "exit_status", &v, err) == 1 ? v : -1;
	r->exit_signal = db_meta_read_int(r->db, "exit_signal", &v, err) == 1 ? v : -1;
	/* A wsr-run.json from before exit_signal: 128 + N is how it said "signal N". */
	if (r->exit_signal < 0 && r->exit_status > 128 && r->exit_status < 128 + 65)
		r->exit_signal = r->exit_status - 128;
	else if (r->exit_signal < 0 && r->exit_status >= 0)
		r->exit_signal = 0;
	r->init_missing = db_meta_read_int(r->db, "init_missing", &v, err) == 1 && v != 0;
	describe_exit(r);
	return err->n > n0 ? -1 : 0;
}

/* The SCHED lines: the rows of sql/schedtrace.sql at r->interval (metrics.h). */
static int build_schedtrace(struct report *r, struct wsr_err *err)
{
	const struct metrics *m = r->m;
	int64_t n = r->interval > 0 ? m->duration_ns / r->interval : 0;
	struct schedtrace_row *row = NULL;
	sqlite3_stmt *q = NULL;
	char *buf = NULL;
	int ret = -1, rc = 0;

	if (n > MAX_LINES) {
		err_input(err, "--interval %" PRId64 " ns gives %" PRId64 " lines (at most %d)",
			  r->interval, n, MAX_LINES);
		return -1;
	}
	r->lines = calloc((size_t)(n > 0 ? n : 1), sizeof(*r->lines));
	buf = malloc(LINE_SIZE);
	row = malloc(sizeof(*row));
	if (r->lines == NULL || buf == NULL || row == NULL) {
		err_push(err, "out of memory");
		goto out;
	}
	if (n == 0) {
		ret = 0;
		goto out;
	}
	if (schedtrace_prepare(r->db, r->interval, n, &q, err) < 0)
		goto out;
	while (r->nlines < n && (rc = schedtrace_next(r->db, q, row, err)) == 1) {
		schedtrace_format(row, buf, LINE_SIZE);
		if (r->detail && schedtrace_detail(r->db, row, buf, LINE_SIZE, err) < 0)
			goto out;
		r->lines[r->nlines] = strdup(buf);
		if (r->lines[r->nlines] == NULL) {
			err_push(err, "out of memory");
			goto out;
		}
		r->nlines++;
	}
	if (r->nlines < n && rc < 0)
		goto out;
	ret = 0;
out:
	sqlite3_finalize(q);
	free(row);
	free(buf);
	return ret;
}

static double mv(const struct metrics *m, const char *name)
{
	double v = 0;

	metric_value(m, name, &v);
	return v;
}

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
			fmt_ns(b, sizeof(b), sqlite3_column_int64(st, 3) - r->m->start_ts);
		if (sqlite3_column_type(st, 4) != SQLITE_NULL)
			fmt_ns(e, sizeof(e), sqlite3_column_int64(st, 4) - r->m->start_ts);
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
		fprintf(f, "%s... and %" PRId64 " more (every place: the JSON report, or SELECT * FROM "
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

static int print_text(struct report *r, FILE *f, bool md, struct wsr_err *err)
{
	const struct metrics *m = r->m;
	char d[64], iv[64], b1[64], b2[64], b3[64], b4[64];
	const char *mk = r->mark;

	fmt_ns(d, sizeof(d), m->duration_ns);
	fmt_ns(iv, sizeof(iv), r->interval);
	if (md)
		fprintf(f, "## wsr report: %s\n\n", m->program);
	else
		fprintf(f, "wsr report: %s\n", m->path);
	const char *pre = md ? "- " : "  ";
	fprintf(f, "%sprogram: %s%s%s%s, runtime %s\n", pre,
		r->command[0] ? r->command : m->program, m->hostname[0] ? " on " : "", m->hostname,
		m->vpid[0] ? (md ? "" : "") : "", m->runtime_version[0] ? m->runtime_version : "?");
	fprintf(f, "%sexit: %s\n", pre, r->exit_text);
	if (r->init_missing)
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
		if (print_discarded(r, f, md, err) < 0)
			return -1;
	}

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

	fmt_ns(b1, sizeof(b1), m->latency_p50);
	fmt_ns(b2, sizeof(b2), m->latency_p90);
	fmt_ns(b3, sizeof(b3), m->latency_p99);
	fmt_ns(b4, sizeof(b4), m->latency_max);
	fprintf(f,
		"\n%sscheduling latency%s (ready -> run, %" PRId64
		" samples): p50 %s, p90 %s, p99 %s, max %s\n",
		md ? "- " : "", mk, m->latency_n, b1, b2, b3, b4);
	fprintf(f, "%srunnext hit rate%s: %.1f%% of %" PRId64 " runs\n", md ? "- " : "", mk,
		mv(m, "runnext_hit_pct"), m->runs);
	fprintf(f,
		"%ssteals%s: %" PRId64 " (%" PRId64 " Gs); spills: %" PRId64 " (%" PRId64
		" Gs); global gets: %" PRId64 " (%" PRId64 " Gs)\n",
		md ? "- " : "", mk, m->steals, m->stolen, m->spills, m->spilled, m->global_gets,
		m->global_gs);
	fmt_ns(b1, sizeof(b1), m->spin_ns);
	fmt_ns(b2, sizeof(b2), (int64_t)(mv(m, "spin_per_steal_us") * 1e3));
	fprintf(f,
		"%sspinning%s: %s of M time (%.1f%% of a CPU), %s per successful steal; %" PRId64
		" spins, %" PRId64 " found work, %" PRId64 " found none (%.0f%%)\n",
		md ? "- " : "", mk, b1, mv(m, "spin_cpu_pct"), b2, m->spins, m->spins_found,
		m->spins_empty, mv(m, "spin_wasted_pct"));
	fprintf(f,
		"%sidle Ps while work was queued%s: %.1f%% of the run (global queue), %.1f%% "
		"(any runnable G)\n",
		md ? "- " : "", mk, mv(m, "idle_while_global_pct"),
		mv(m, "idle_while_runnable_pct"));

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

	dag_print_text(f, &m->ws, m->steals, m->discarded_events + m->discarded_packets > 0, md);

	fprintf(f, md ? "\n### diagnostics\n\n" : "\ndiagnostics:\n");
	if (r->ndiags == 0)
		fprintf(f, "%snothing stands out\n", md ? "- " : "  - ");
	for (int i = 0; i < r->ndiags; i++)
		fprintf(f, "%s%s\n", md ? "- " : "  - ", r->diags[i].text);
	return 0;
}

static int print_json(struct report *r, FILE *f, struct wsr_err *err)
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
	fprintf(f, ",\n  \"command\": ");
	json_fputs(f, r->command);
	if (r->exit_status >= 0)
		fprintf(f, ",\n  \"exit_status\": %" PRId64 ",\n  \"exit_signal\": %" PRId64,
			r->exit_status, r->exit_signal);
	else
		fprintf(f, ",\n  \"exit_status\": null,\n  \"exit_signal\": null");
	fprintf(f, ",\n  \"exit\": ");
	json_fputs(f, r->exit_text);
	fprintf(f,
		",\n  \"start_ts\": %" PRId64 ",\n  \"end_ts\": %" PRId64
		",\n  \"duration_ns\": %" PRId64 ",\n",
		m->start_ts, m->end_ts, m->duration_ns);
	if (r->init_missing)
		fprintf(f, "  \"gomaxprocs\": null,\n  \"init_missing\": true,\n");
	else
		fprintf(f, "  \"gomaxprocs\": %d,\n  \"init_missing\": false,\n", m->gomaxprocs);
	fprintf(f, "  \"lossy\": %s,\n",
		m->discarded_events + m->discarded_packets > 0 ? "true" : "false");
	fprintf(f, "  \"metrics\": {");
	for (int i = 0; i < metric_count; i++) {
		double v = mv(m, metric_list[i].name);
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
	if (db_prepare(r->db, &st,
		       METRICS_STEAL_PAIRS_SQL,
		       err) < 0) {
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

static int print_junit(struct report *r, FILE *f, struct wsr_err *err)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	int failures = 0;

	if (mem == NULL) {
		err_push(err, "out of memory");
		return -1;
	}
	if (print_text(r, mem, false, err) < 0) {
		fclose(mem);
		free(text);
		return -1;
	}
	fclose(mem);
	for (int i = 0; i < r->ndiags; i++)
		failures++;
	/* One more test case: the program itself ended well (status 0). */
	bool exit_bad = r->exit_status > 0;
	failures += exit_bad;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
		   "  <testsuite name=\"wsr report ");
	xml_text(f, r->m->program);
	fprintf(f, "\" tests=\"%d\" failures=\"%d\" time=\"%.6f\">\n", diag_rule_count + 1,
		failures, (double)r->m->duration_ns / 1e9);
	fprintf(f, "    <testcase classname=\"wsr.program\" name=\"the program exited with status "
		   "0\">");
	if (exit_bad) {
		fprintf(f, "\n      <failure type=\"exit\" message=\"");
		xml_text(f, r->exit_text);
		fprintf(f, "\"/>\n    ");
	} else if (r->exit_status < 0) {
		fprintf(f, "<skipped message=\"");
		xml_text(f, r->exit_text);
		fprintf(f, "\"/>");
	}
	fprintf(f, "</testcase>\n");
	for (int k = 0; k < diag_rule_count; k++) {
		fprintf(f, "    <testcase classname=\"wsr.diagnostics\" name=\"");
		xml_text(f, diag_rules[k].title);
		fprintf(f, "\">");
		for (int i = 0; i < r->ndiags; i++) {
			if (strcmp(r->diags[i].id, diag_rules[k].id) != 0)
				continue;
			fprintf(f, "\n      <failure type=\"%s\" message=\"", diag_rules[k].id);
			xml_text(f, r->diags[i].text);
			fprintf(f, "\"/>\n    ");
		}
		fprintf(f, "</testcase>\n");
	}
	fprintf(f, "    <system-out>");
	xml_text(f, text);
	fprintf(f, "</system-out>\n  </testsuite>\n</testsuites>\n");
	free(text);
	return 0;
}

static int print_dot(struct report *r, FILE *f, struct wsr_err *err)
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
	if (db_prepare(r->db, &st,
		       METRICS_STEAL_PAIRS_SQL, err) < 0)
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

enum {
	OPT_INTERVAL = CLI_LONG,
	OPT_DETAIL,
	OPT_FORMAT,
	OPT_STEAL_GRAPH
};

static const struct cli_opt report_opts[] = {
	{"interval", OPT_INTERVAL, "DUR",
	 "schedtrace line interval: 10ms, 500us, 1s, 100000ns (a bare\n"
	 "number is ms); default: about 20 lines over the trace"},
	{"detail", OPT_DETAIL, NULL, "Go's scheddetail lines (each P and M) after each SCHED line"},
	{"format", OPT_FORMAT, "FORMAT",
	 "text (default), md, json, junit, or html (one self-contained\n"
	 "page, written by wsr-view)"},
	{"steal-graph", OPT_STEAL_GRAPH, "FORMAT",
	 "the steal graph instead of the report: dot (Graphviz)"},
	{"output", 'o', "FILE", "write to FILE (through FILE.tmp, then renamed), not stdout"},
	{NULL, 0, NULL, NULL},
};

static const struct cli report_cli = {
	.prog = "wsr report",
	.synopsis = "wsr report trace.db [--interval DUR] [--detail] "
		    "[--format text|md|json|junit|html] [--steal-graph dot] [-o FILE]",
	.about = "The figures of a trace database: header, schedtrace, per P, latency, steals,\n"
		 "work and span, diagnostics (see wsr-report(1)).",
	.opts = report_opts,
	.min_args = 1,
	.max_args = 1,
};

struct report_args {
	const char *format, *graph, *out, *interval_text;
	int64_t interval;
	bool detail;
};

static int report_opt(void *ctx, int key, const char *arg)
{
	struct report_args *a = ctx;

	switch (key) {
	case OPT_INTERVAL:
		if (duration_parse(arg, &a->interval) < 0) {
			fprintf(stderr,
				"wsr report: error: bad --interval '%s': " DURATION_HINT "\n", arg);
			return 2;
		}
		a->interval_text = arg;
		break;
	case OPT_DETAIL:
		a->detail = true;
		break;
	case OPT_FORMAT:
		a->format = arg;
		break;
	case OPT_STEAL_GRAPH:
		a->graph = arg;
		break;
	case 'o':
		a->out = arg;
		break;
	}
	return 0;
}

/* The HTML report is wsr-view's: run it with what it needs (docs/viewer.md). */
static int report_html(const struct report_args *a, const char *path)
{
	char *argv[8];
	int n = 0;

	argv[n++] = "report";
	argv[n++] = "--html";
	if (a->out != NULL) {
		argv[n++] = "-o";
		argv[n++] = (char *)a->out;
	}
	if (a->interval_text != NULL) {
		argv[n++] = "--interval";
		argv[n++] = (char *)a->interval_text;
	}
	argv[n++] = (char *)path;
	argv[n] = NULL;
	return cli_exec_sibling("wsr report", "view", argv);
}

/* Writes the report of PATH as A says, on F (NULL: A->out or stdout); the exit status. */
static int report_write(const char *path, const struct report_args *a, enum fmt fm, FILE *f)
{
	struct wsr_err err;
	struct report r = {0};
	struct metrics *m = NULL;
	struct out_file of = {0};
	sqlite3 *db = NULL;
	int ret = 1;

	err_init(&err);
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		fprintf(stderr, "wsr report: error: out of memory\n");
		return 1;
	}
	if (db_open_ro(path, &db, &err) < 0 || metrics_load(db, path, m, &err) < 0)
		goto fail;
	r.db = db;
	r.m = m;
	if (load_run_meta(&r, &err) < 0)
		goto fail;
	r.detail = a->detail;
	r.interval = a->interval > 0 ? a->interval : m->schedtrace_interval_ns;
	r.mark = m->discarded_events + m->discarded_packets > 0 ? "*" : "";
	r.ndiags = metrics_diagnose(m, r.diags, 16);
	if (a->graph == NULL && build_schedtrace(&r, &err) < 0)
		goto fail;
	if (f == NULL) {
		if (out_file_open(&of, a->out, &err) < 0)
			goto fail;
		f = of.f;
	}
	int rc = a->graph != NULL ? print_dot(&r, f, &err)
		 : fm == F_JSON   ? print_json(&r, f, &err)
		 : fm == F_JUNIT  ? print_junit(&r, f, &err)
				  : print_text(&r, f, fm == F_MD, &err);
	if (of.f == NULL && rc == 0 && fflush(f) != 0) {
		err_push(&err, "writing the report: %s", strerror(errno));
		rc = -1;
	}
	if (out_file_close(&of, rc == 0, &err) < 0 || rc < 0)
		goto fail;
	ret = 0;
	goto out;
fail:
	err_print(&err, "wsr report", stderr);
	ret = err.exit_code;
out:
	for (int i = 0; i < r.nlines; i++)
		free(r.lines[i]);
	free(r.lines);
	free(m);
	if (db != NULL)
		sqlite3_close(db);
	return ret;
}

int report_main(const char *path, FILE *f)
{
	struct report_args a = {.format = "text"};

	return report_write(path, &a, F_TEXT, f);
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = {.format = "text"};
	const char *path;
	enum fmt fm = F_TEXT;
	int ret, first;

	ret = cli_parse(&report_cli, argc, argv, report_opt, &a, &first);
	if (ret >= 0)
		return ret;
	path = argv[first];
	if (strcmp(a.format, "text") == 0)
		fm = F_TEXT;
	else if (strcmp(a.format, "md") == 0 || strcmp(a.format, "markdown") == 0)
		fm = F_MD;
	else if (strcmp(a.format, "json") == 0)
		fm = F_JSON;
	else if (strcmp(a.format, "junit") == 0)
		fm = F_JUNIT;
	else if (strcmp(a.format, "html") == 0 && a.graph == NULL)
		return report_html(&a, path);
	else if (strcmp(a.format, "html") != 0) {
		fprintf(stderr,
			"wsr report: error: unknown format '%s' (text, md, json, junit, html)\n",
			a.format);
		return 2;
	}
	if (a.graph != NULL && strcmp(a.graph, "dot") != 0) {
		fprintf(stderr, "wsr report: error: unknown steal graph format '%s' (dot)\n",
			a.graph);
		return 2;
	}
	return report_write(path, &a, fm, NULL);
}
