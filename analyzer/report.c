/*
 * report.c - `wsr report trace.db [--interval DUR] [--detail]
 *            [--format text|md|json|junit|html] [--steal-graph dot] [-o FILE]`.
 *
 * Design: metrics.c computes the figures once (struct metrics); this file
 * gathers them with the run's meta and the SCHED lines into struct report
 * (report.h), and one renderer per format lays them out (report_text.c
 * for text and md, report_json.c, report_junit.c, report_dot.c), with
 * the same content in every format:
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
#include "report.h"
#include "sbuf.h"

enum fmt {
	F_TEXT,
	F_MD,
	F_JSON,
	F_JUNIT
};

#define MAX_LINES 100000
#define LINE_SIZE 65536

void report_fmt_ns(char *buf, size_t size, int64_t ns)
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

/* How the traced program ended, as the report states it (docs/report.md). */
static void describe_exit(struct report *r)
{
	if (r->m->exit_status < 0) {
		snprintf(r->exit_text, sizeof(r->exit_text), "unknown (not recorded by `wsr run`)");
	} else if (r->m->exit_signal > 0) {
		int sig = (int)r->m->exit_signal;
		snprintf(r->exit_text, sizeof(r->exit_text), "killed by signal %d (%s)%s", sig,
			 strsignal(sig),
			 sig == SIGABRT ? ": it crashed (libwsr aborts on a fatal error)" : "");
	} else if (r->m->exit_status == 2) {
		snprintf(r->exit_text, sizeof(r->exit_text),
			 "exited with status 2 (libwsr exits 2 on a deadlock, \"all goroutines "
			 "are asleep\": see the program's stderr)");
	} else if (r->m->exit_status == 0) {
		snprintf(r->exit_text, sizeof(r->exit_text), "exited with status 0");
	} else {
		snprintf(r->exit_text, sizeof(r->exit_text),
			 "exited with status %" PRId64 " (failure)", r->m->exit_status);
	}
	if (r->m->unflushed) {
		size_t n = strlen(r->exit_text);

		snprintf(r->exit_text + n, sizeof(r->exit_text) - n,
			 "; the tracer could not write all its data (a thread killed while writing "
			 "an event), so the trace may miss events at its end that no loss count "
			 "includes");
	}
}

/* The figures read from meta that metrics.c does not carry. */
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
	describe_exit(&r);
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
	int rc = a->graph != NULL ? report_dot_write(&r, f, &err)
		 : fm == F_JSON   ? report_json_write(&r, f, &err)
		 : fm == F_JUNIT  ? report_junit_write(&r, f, &err)
				  : report_text_write(&r, f, fm == F_MD, &err);
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
