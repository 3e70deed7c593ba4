/*
 * report.h - what `wsr report`'s renderers share (report.c and one file per
 * format: report_text.c for text and md, report_json.c, report_junit.c,
 * report_dot.c for --steal-graph dot).
 *
 * Invariants:
 *   - report.c fills struct report (the figures of metrics.c, the run's meta,
 *     the SCHED lines, the diagnostics) once; a renderer only lays it out and
 *     reads the database for nothing but the rows it lists (steal pairs,
 *     discarded ranges), through metrics.h's definitions.
 *   - Each format has exactly one renderer; a renderer returns 0 or -1 with
 *     the cause pushed, and writes only to F.
 * Concurrency: single-threaded.
 */
#ifndef WSR_ANALYZER_REPORT_H
#define WSR_ANALYZER_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include "err.h"
#include "metrics.h"

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
	char exit_text[512]; /* how the program ended, one phrase (m->exit_status ...) */
};

/* A duration as the text report prints it: "1.234 s", "5.000 ms", "12.0 us", "7 ns". */
void report_fmt_ns(char *buf, size_t size, int64_t ns);

/* Value of a named metric of metrics.c (0 for an unknown name). */
static inline double report_metric(const struct metrics *m, const char *name)
{
	double v = 0;

	metric_value(m, name, &v);
	return v;
}

/* text (MD false) or markdown (MD true): the same sections and figures. */
int report_text_write(struct report *r, FILE *f, bool md, struct wsr_err *err);
int report_json_write(struct report *r, FILE *f, struct wsr_err *err);
/* One testcase per diagnostic rule, the text report as system-out. */
int report_junit_write(struct report *r, FILE *f, struct wsr_err *err);
/* --steal-graph dot: the steal graph in Graphviz DOT. */
int report_dot_write(struct report *r, FILE *f, struct wsr_err *err);

#endif /* WSR_ANALYZER_REPORT_H */
