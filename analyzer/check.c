/*
 * check.c - `wsr check trace.db --fail-if 'METRIC OP VALUE' ...` (the CI
 * gate) and `wsr diff base.db new.db` (the same metrics side by side).
 *
 * Invariants:
 *   - A condition is METRIC OP NUMBER with OP one of > >= < <= == !=;
 *     METRIC is a name of metric_list (metrics.c); anything else is a usage
 *     error (exit 2) naming the problem.
 *   - check prints one line per condition: "ok: ..." or "FAIL: ..." (the
 *     one-line reason), and exits 1 if any condition is breached.
 *   - Figures that discarded events may have touched say so on their line.
 * Concurrency: single-threaded.
 */
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cli.h"
#include "cmd.h"
#include "db.h"
#include "metrics.h"
#include "sbuf.h"

enum op {
	OP_GT,
	OP_GE,
	OP_LT,
	OP_LE,
	OP_EQ,
	OP_NE
};

#define OP_COUNT 6
static const char *const op_names[OP_COUNT] = {">", ">=", "<", "<=", "==", "!="};

static const char *op_str(enum op op)
{
	return (unsigned)op < OP_COUNT ? op_names[op] : "?";
}

struct cond {
	char metric[64];
	enum op op;
	double value;
	const char *text;
};

static const struct metric_info *find_metric(const char *name)
{
	for (int i = 0; i < metric_count; i++)
		if (strcmp(metric_list[i].name, name) == 0)
			return &metric_list[i];
	return NULL;
}

/* Parses "METRIC OP NUMBER"; returns 0, or -1 with a message in why. */
static int parse_cond(const char *s, struct cond *c, char *why, size_t wsize)
{
	const char *p = s;
	size_t n = 0;

	c->text = s;
	while (isspace((unsigned char)*p))
		p++;
	while ((isalnum((unsigned char)*p) || *p == '_') && n + 1 < sizeof(c->metric))
		c->metric[n++] = *p++;
	c->metric[n] = '\0';
	if (n == 0) {
		snprintf(why, wsize, "'%.200s': expected METRIC OP VALUE, e.g. 'spin_cpu_pct > 25'",
			 s);
		return -1;
	}
	if (find_metric(c->metric) == NULL) {
		snprintf(why, wsize,
			 "'%.200s': unknown metric '%.64s' (wsr check --list shows them)", s,
			 c->metric);
		return -1;
	}
	while (isspace((unsigned char)*p))
		p++;
	int found = -1;
	for (int k = 0; k < 6; k++) {
		size_t l = strlen(op_names[k]);
		if (strncmp(p, op_names[k], l) == 0 && (found < 0 || l > strlen(op_names[found])))
			found = k;
	}
	if (found < 0) {
		snprintf(why, wsize, "'%.200s': expected one of > >= < <= == != after '%.64s'", s,
			 c->metric);
		return -1;
	}
	c->op = (enum op)found;
	p += strlen(op_names[found]);
	char *end;
	c->value = strtod(p, &end);
	if (end == p || !isfinite(c->value)) {
		snprintf(why, wsize, "'%.200s': expected a number after '%s'", s, op_names[found]);
		return -1;
	}
	while (isspace((unsigned char)*end))
		end++;
	if (*end != '\0') {
		snprintf(why, wsize, "'%.200s': unexpected '%.200s' after the number", s, end);
		return -1;
	}
	return 0;
}

static bool holds(enum op op, double a, double b)
{
	switch (op) {
	case OP_GT:
		return a > b;
	case OP_GE:
		return a >= b;
	case OP_LT:
		return a < b;
	case OP_LE:
		return a <= b;
	case OP_EQ:
		return a == b;
	case OP_NE:
		return a != b;
	}
	return false;
}

static void list_metrics(FILE *f)
{
	for (int i = 0; i < metric_count; i++)
		fprintf(f, "  %-24s %s\n", metric_list[i].name, metric_list[i].what);
}

static int load(const char *path, sqlite3 **db, struct metrics **m, struct wsr_err *err)
{
	*m = calloc(1, sizeof(**m));
	if (*m == NULL) {
		err_push(err, "out of memory");
		return -1;
	}
	if (db_open_ro(path, db, err) < 0 || metrics_load(*db, path, *m, err) < 0)
		return -1;
	return 0;
}

static void check_help_metrics(FILE *f)
{
	fprintf(f, "metrics:\n");
	list_metrics(f);
}

static const struct cli_opt check_opts[] = {
	{"fail-if", CLI_LONG, "EXPR",
	 "a condition METRIC OP VALUE, OP one of > >= < <= == !=;\n"
	 "repeat it for more; exit 1 if any condition holds"},
	{"list", CLI_LONG + 1, NULL, "the metrics, one a line"},
	{NULL, 0, NULL, NULL},
};

static const struct cli check_cli = {
	.prog = "wsr check",
	.synopsis = "wsr check trace.db --fail-if 'METRIC OP VALUE' ... | wsr check --list",
	.about = "The CI gate: one line per condition, exit 1 when one holds (see wsr-check(1)).",
	.opts = check_opts,
	.min_args = 0,
	.max_args = 1,
	.help_extra = check_help_metrics,
};

struct check_args {
	struct cond conds[64];
	int n;
};

static int check_opt(void *ctx, int key, const char *arg)
{
	struct check_args *a = ctx;
	char why[512];

	if (key == CLI_LONG + 1) {
		list_metrics(stdout);
		return CLI_DONE;
	}
	if (a->n == 64) {
		fprintf(stderr, "wsr check: error: at most 64 conditions\n");
		return 2;
	}
	if (parse_cond(arg, &a->conds[a->n], why, sizeof(why)) < 0) {
		fprintf(stderr, "wsr check: error: %s\n", why);
		return 2;
	}
	a->n++;
	return 0;
}

int cmd_check(int argc, char **argv)
{
	struct check_args *a = calloc(1, sizeof(*a));
	struct cond *conds;
	int n, breaches = 0, ret = 1, first;
	const char *path;
	struct wsr_err err;
	sqlite3 *db = NULL;
	struct metrics *m = NULL;

	if (a == NULL) {
		fprintf(stderr, "wsr check: error: out of memory\n");
		return 1;
	}
	err_init(&err);
	ret = cli_parse(&check_cli, argc, argv, check_opt, a, &first);
	if (ret >= 0)
		goto out;
	ret = 1;
	conds = a->conds;
	n = a->n;
	path = first < argc ? argv[first] : NULL;
	if (path == NULL || n == 0) {
		fprintf(stderr, "wsr check: error: %s\n",
			path == NULL ? "no database given" : "no --fail-if condition given");
		cli_help(&check_cli, stderr);
		ret = 2;
		goto out;
	}
	if (load(path, &db, &m, &err) < 0) {
		err_print(&err, "wsr check", stderr);
		ret = err.exit_code;
		goto out;
	}
	bool lossy_trace = m->discarded_events + m->discarded_packets > 0;
	for (int i = 0; i < n; i++) {
		double v = 0;
		const struct metric_info *mi = find_metric(conds[i].metric);
		metric_value(m, conds[i].metric, &v);
		bool breach = holds(conds[i].op, v, conds[i].value);
		breaches += breach;
		printf("%s: %s %s %g: %s = %.6g%s\n", breach ? "FAIL" : "ok", conds[i].metric,
		       op_str(conds[i].op), conds[i].value, conds[i].metric, v,
		       lossy_trace && mi->lossy ? " (approximate: events were lost)" : "");
	}
	ret = breaches > 0 ? 1 : 0;
out:
	free(a);
	free(m);
	if (db != NULL)
		sqlite3_close(db);
	return ret;
}

/*
 * What makes two runs unlike: another program or other arguments, another
 * gomaxprocs, a trace whose gomaxprocs is unknown. Each is a sentence in
 * OUT; returns how many.
 */
static int diff_warnings(struct metrics *m[2], char out[][1024], int max)
{
	const char *cmd[2];
	int n = 0;

	for (int k = 0; k < 2; k++)
		cmd[k] = m[k]->command[0] != '\0' ? m[k]->command : m[k]->program;
	if (n < max && strcmp(cmd[0], cmd[1]) != 0)
		snprintf(out[n++], 1024,
			 "the runs are of different programs or arguments (base: %.400s; new: "
			 "%.400s): the deltas compare unlike runs",
			 cmd[0], cmd[1]);
	bool unknown[2];
	for (int k = 0; k < 2; k++)
		unknown[k] = m[k]->init_missing;
	if (n < max && (unknown[0] || unknown[1]))
		snprintf(out[n++], 1024, "gomaxprocs is unknown in the %s run (no init event)",
			 unknown[0] && unknown[1] ? "base and the new"
			 : unknown[0]             ? "base"
						  : "new");
	else if (n < max && m[0]->gomaxprocs != m[1]->gomaxprocs)
		snprintf(out[n++], 1024,
			 "the runs have different gomaxprocs (base %d, new %d): per-P figures "
			 "and percentages of the Ps compare unlike runs",
			 m[0]->gomaxprocs, m[1]->gomaxprocs);
	return n;
}

static const struct cli_opt diff_opts[] = {
	{"format", 'f', "FORMAT", "text (default), md, json"},
	{NULL, 0, NULL, NULL},
};

static const struct cli diff_cli = {
	.prog = "wsr diff",
	.synopsis = "wsr diff base.db new.db [--format text|md|json]",
	.about = "The metrics of two runs side by side with their deltas; a warning on\n"
		 "stderr when the runs are of different programs or gomaxprocs.",
	.opts = diff_opts,
	.min_args = 2,
	.max_args = 2,
};

static int diff_opt(void *ctx, int key, const char *arg)
{
	if (key == 'f')
		*(const char **)ctx = arg;
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	const char *paths[2];
	const char *format = "text";
	struct wsr_err err;
	sqlite3 *db[2] = {NULL, NULL};
	struct metrics *m[2] = {NULL, NULL};
	int ret = 1, first;

	err_init(&err);
	ret = cli_parse(&diff_cli, argc, argv, diff_opt, &format, &first);
	if (ret >= 0)
		return ret;
	ret = 1;
	paths[0] = argv[first];
	paths[1] = argv[first + 1];
	bool md = strcmp(format, "md") == 0, json = strcmp(format, "json") == 0;
	if (!md && !json && strcmp(format, "text") != 0) {
		fprintf(stderr, "wsr diff: error: unknown format '%s' (text, md, json)\n", format);
		return 2;
	}
	for (int k = 0; k < 2; k++) {
		if (load(paths[k], &db[k], &m[k], &err) < 0) {
			err_print(&err, "wsr diff", stderr);
			ret = err.exit_code;
			goto out;
		}
	}
	char warn[4][1024];
	int nwarn = diff_warnings(m, warn, 4);
	for (int k = 0; k < nwarn; k++)
		fprintf(stderr, "wsr diff: warning: %s\n", warn[k]);
	if (json) {
		printf("{\n  \"base\": ");
		json_fputs(stdout, paths[0]);
		printf(",\n  \"new\": ");
		json_fputs(stdout, paths[1]);
		printf(",\n  \"warnings\": [");
		for (int k = 0; k < nwarn; k++) {
			printf("%s\n    ", k ? "," : "");
			json_fputs(stdout, warn[k]);
		}
		printf("%s],\n  \"metrics\": {", nwarn ? "\n  " : "");
	} else if (md) {
		for (int k = 0; k < nwarn; k++)
			printf("> **warning:** %s\n\n", warn[k]);
		printf("| metric | base | new | delta | delta %% |\n|---|---|---|---|---|\n");
	} else {
		printf("%-26s %16s %16s %16s %9s\n", "metric", "base", "new", "delta", "delta%");
	}
	for (int i = 0; i < metric_count; i++) {
		double a = 0, b = 0;
		metric_value(m[0], metric_list[i].name, &a);
		metric_value(m[1], metric_list[i].name, &b);
		double d = b - a;
		char rel[32];
		if (a != 0)
			snprintf(rel, sizeof(rel), "%+.1f%%", 100.0 * d / fabs(a));
		else
			snprintf(rel, sizeof(rel), "%s", d == 0 ? "0.0%" : "n/a");
		bool lossy = metric_list[i].lossy &&
			     (m[0]->discarded_events + m[0]->discarded_packets +
				      m[1]->discarded_events + m[1]->discarded_packets >
			      0);
		if (json)
			printf("%s\n    \"%s\": {\"base\": %.17g, \"new\": %.17g, \"delta\": %.17g}",
			       i ? "," : "", metric_list[i].name, a, b, d);
		else if (md)
			printf("| %s%s | %.6g | %.6g | %+.6g | %s |\n", metric_list[i].name,
			       lossy ? "*" : "", a, b, d, rel);
		else
			printf("%-26s %16.6g %16.6g %+16.6g %9s\n", metric_list[i].name, a, b, d,
			       rel);
		if (!json && !md && lossy)
			printf("%-26s (* events were lost in one of the runs: approximate)\n", "");
	}
	/* Work inflation T1(new) / T1(base) (docs/workspan.md): base at P = 1. */
	double w0 = m[0]->ws.work_ms, w1 = m[1]->ws.work_ms;
	bool infl = m[0]->ws.present && m[1]->ws.present && w0 > 0;
	if (json)
		printf("\n  },\n  \"work_inflation\": %.17g\n}\n", infl ? w1 / w0 : 0.0);
	else if (infl)
		printf("%swork inflation T1(new)/T1(base) = %.4f (P = %d -> %d)\n", md ? "\n" : "",
		       w1 / w0, m[0]->ws.procs, m[1]->ws.procs);
	ret = 0;
out:
	for (int k = 0; k < 2; k++) {
		free(m[k]);
		if (db[k] != NULL)
			sqlite3_close(db[k]);
	}
	return ret;
}
