/*
 * scale.c - `wsr scale [--out DIR] [--max-procs N] -- PROGRAM ARGS`: records
 * PROGRAM with `wsr run --lossless` at P = 1, 2, 4 ... N (WSRMAXPROCS), then
 * writes the speed-up plot Cilkscale users know (observed speed-up, perfect
 * linear speed-up, the span bound, the burdened bound, the greedy
 * guarantee) as DIR/scale.html (one self-contained page, inline SVG) and the
 * figures as DIR/scale.md, which it also prints (docs/workspan.md).
 *
 * Design: each run is this same executable's `run` subcommand (the
 * file /proc/self/exe links to), so recording and ingestion are `wsr run`'s, with its
 * output in DIR/run-pN.log and its trace in DIR/pN (trace.db inside). The
 * figures are read back from each database's meta (dag.h). Speed-ups are
 * against the P = 1 run: observed T_P(1) / T_P(P); the span bound
 * min(P, T1/T_inf) and the greedy guarantee T1 / (T1/P + T_inf) use the
 * P = 1 run's work and span (the serial DAG, as Cilkscale's); the burdened
 * bound min(P, T1(1) / burdened span(P)) uses each run's own burdened span,
 * since the burden is what the schedule at that P measured. P beyond the
 * CPUs this process may use is run as asked, and the table and the plot say
 * so.
 *
 * Invariants:
 *   - DIR is created here (it must not exist, or be empty); nothing outside
 *     it is written. A failed run stops the sweep with its exit status.
 * Exit status: 0, 1 when a run, a file or stdout failed, 2 on a usage error.
 * Concurrency: single-threaded; the runs are sequential.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "cli.h"
#include "cmd.h"
#include "dag.h"
#include "db.h"
#include "err.h"
#include "sbuf.h"

#define SCALE_MAX_RUNS 16

struct point {
	int procs;
	struct dag_figures f;
	int64_t steals;
};

static const struct cli_opt scale_opts[] = {
	{"out", 'o', "DIR",
	 "where the runs and the plots go (default\n"
	 "./wsr-scale-PROGRAM-YYYYMMDD-HHMMSS)"},
	{"max-procs", 'n', "N", "the largest WSRMAXPROCS (default: twice the CPUs, at least 4)"},
	{NULL, 0, NULL, NULL},
};

static const struct cli scale_cli = {
	.prog = "wsr scale",
	.synopsis = "wsr scale [--out DIR] [--max-procs N] -- PROGRAM [ARGS...]",
	.about = "Records PROGRAM at WSRMAXPROCS = 1, 2, 4 ... N and writes DIR/scale.html and\n"
		 "DIR/scale.md (see wsr-scale(1)).",
	.opts = scale_opts,
	.in_order = true,
	.min_args = 1,
	.max_args = -1,
	.missing = "no PROGRAM to run",
};

struct scale_args {
	char *dir;
	int maxp;
};

static int scale_opt(void *ctx, int key, const char *arg)
{
	struct scale_args *a = ctx;

	if (key == 'o') {
		snprintf(a->dir, PATH_MAX, "%s", arg);
	} else if (key == 'n') {
		char *end;
		long v = strtol(arg, &end, 10);
		if (*end != '\0' || v < 1 || v > 1024) {
			fprintf(stderr, "wsr scale: error: --max-procs: 1..1024, not %s\n", arg);
			return 2;
		}
		a->maxp = (int)v;
	}
	return 0;
}

static int cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		return CPU_COUNT(&set) > 0 ? CPU_COUNT(&set) : 1;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

int cmd_make_out_dir(const char *dir, struct wsr_err *err)
{
	if (mkdir(dir, 0755) == 0)
		return 0;
	if (errno != EEXIST) {
		err_push(err, "creating %s: %s", dir, strerror(errno));
		return -1;
	}
	DIR *d = opendir(dir);
	if (d == NULL) {
		err_push(err, "%s: %s", dir, strerror(errno));
		return -1;
	}
	struct dirent *de;
	int n = 0;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	if (n > 0) {
		err_input(err, "%s: the directory is not empty", dir);
		return -1;
	}
	return 0;
}

/* One `wsr run --lossless --out DIR/pP -- PROGRAM ARGS` under WSRMAXPROCS=P,
 * output to DIR/run-pP.log. Returns its exit status, or -1. */
static int run_one(const char *dir, int procs, char **prog, struct wsr_err *err)
{
	char out[PATH_MAX], log[PATH_MAX];

	snprintf(out, sizeof(out), "%s/p%d", dir, procs);
	snprintf(log, sizeof(log), "%s/run-p%d.log", dir, procs);
	return cmd_run_child(out, log, procs, NULL, prog, err);
}

int cmd_run_child(const char *out, const char *log, int procs, const char *wsrdebug, char **prog,
		  struct wsr_err *err)
{
	char np[16], self[PATH_MAX];
	int argc = 0;
	ssize_t sn = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (sn <= 0) {
		err_push(err, "readlink /proc/self/exe: %s", strerror(errno));
		return -1;
	}
	self[sn] = '\0';

	while (prog[argc] != NULL)
		argc++;
	char **argv = calloc((size_t)argc + 7, sizeof(*argv)); /* 6 fixed, NULL */
	if (argv == NULL) {
		err_push(err, "out of memory");
		return -1;
	}
	snprintf(np, sizeof(np), "%d", procs);
	argv[0] = "wsr";
	argv[1] = "run";
	argv[2] = "--lossless";
	argv[3] = "--out";
	argv[4] = (char *)out;
	argv[5] = "--";
	for (int i = 0; i < argc; i++)
		argv[6 + i] = prog[i];
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		err_push(err, "creating %s: %s", log, strerror(errno));
		free(argv);
		return -1;
	}
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		err_push(err, "fork: %s", strerror(errno));
		close(fd);
		free(argv);
		return -1;
	}
	if (pid == 0) {
		/* Stopped with us, whatever stops us (wsr lab or scale killed
		 * mid-run): wsr run takes SIGTERM as an order to stop PROGRAM and
		 * its session; a parent gone before the prctl is seen after it. */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
			_exit(1);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		setenv("WSRMAXPROCS", np, 1);
		if (wsrdebug != NULL)
			setenv("WSRDEBUG", wsrdebug, 1);
		execv(self, argv);
		fprintf(stderr, "wsr scale: error: exec %s: %s\n", self, strerror(errno));
		_exit(127);
	}
	close(fd);
	free(argv);
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			err_push(err, "waitpid: %s", strerror(errno));
			return -1;
		}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int load_point(const char *dir, struct point *pt, struct wsr_err *err)
{
	char path[PATH_MAX];
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int ret = -1;

	snprintf(path, sizeof(path), "%s/p%d/trace.db", dir, pt->procs);
	if (db_open_ro(path, &db, err) < 0)
		goto out;
	dag_figures_load(db, &pt->f);
	if (!pt->f.present) {
		err_input(err, "%s: no G ran: no work and span", path);
		goto out;
	}
	if (db_prepare(db, &st, "SELECT count(*) FROM steals", err) < 0)
		goto out;
	if (sqlite3_step(st) != SQLITE_ROW) {
		err_push(err, "sqlite: %s: %s", path, sqlite3_errmsg(db));
		goto out;
	}
	pt->steals = sqlite3_column_int64(st, 0);
	ret = 0;
out:
	sqlite3_finalize(st);
	if (db != NULL)
		sqlite3_close(db);
	return ret;
}

static double minf(double a, double b)
{
	return a < b ? a : b;
}

/* The curves of the plot at point k (against the P = 1 run, pts[0]). */
static void curves(const struct point *pts, int k, double c[5])
{
	const struct dag_figures *one = &pts[0].f, *f = &pts[k].f;
	double p = pts[k].procs;

	c[0] = f->observed_ms > 0 ? one->observed_ms / f->observed_ms : 0; /* observed */
	c[1] = p;                                                          /* linear */
	c[2] = minf(p, one->parallelism);                                  /* span bound */
	c[3] = f->burdened_span_ms > 0 ? minf(p, one->work_ms / f->burdened_span_ms) : 0;
	c[4] = one->work_ms / (one->work_ms / p + one->span_ms); /* greedy guarantee */
}

static void write_md(FILE *f, const struct point *pts, int n, int ncpu, char **prog)
{
	fprintf(f, "## wsr scale: %s\n\n", prog[0]);
	fprintf(f, "| P | T_P ms | speed-up | span bound | burdened bound | greedy guarantee | "
		   "work ms | work inflation | span ms | parallelism | burdened span ms | "
		   "lower ms | greedy ms | position | steals | P x T_inf (strands) | peak stacks | "
		   "S1 x P | note |\n");
	fprintf(f, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
		   "\n");
	for (int k = 0; k < n; k++) {
		const struct dag_figures *w = &pts[k].f;
		double c[5];
		curves(pts, k, c);
		fprintf(f,
			"| %d | %.3f | %.2f | %.2f | %.2f | %.2f | %.3f | %.3f | %.3f | %.2f | %.3f "
			"| %.3f | %.3f | %.2f | %" PRId64 " | %.1f | %" PRId64 " | %" PRId64
			" | %s%s |\n",
			pts[k].procs, w->observed_ms, c[0], c[2], c[3], c[4], w->work_ms,
			pts[0].f.work_ms > 0 ? w->work_ms / pts[0].f.work_ms : 0, w->span_ms,
			w->parallelism, w->burdened_span_ms, w->lower_bound_ms, w->greedy_bound_ms,
			w->bound_position, pts[k].steals, pts[k].procs * w->span_strands,
			w->peak_live_stacks, pts[0].f.peak_live_stacks * pts[k].procs,
			pts[k].procs > ncpu ? "P exceeds the CPUs; " : "",
			w->fully_strict ? "fully strict" : "not fully strict");
	}
	fprintf(f,
		"\nSpeed-ups are against the P = 1 run. span bound = min(P, T1/T_inf), greedy "
		"guarantee = T1 / (T1/P + T_inf), both from the P = 1 run; burdened bound = "
		"min(P, T1 / burdened span at P). Peak stacks: the most Gs started and not "
		"exited at once; S1 is the P = 1 run's. This process may use %d CPU%s.\n",
		ncpu, ncpu == 1 ? "" : "s");
}

/* The page; the markdown table goes in a <pre>, escaped (the program's name
 * is the user's: it may hold '<' or '&'). Returns -1 if the table could not
 * be rendered (out of memory). */
static int write_html(FILE *f, const struct point *pts, int n, int ncpu, char **prog)
{
	static const char *const names[] = {"observed speed-up", "perfect linear speed-up",
					    "span bound", "burdened bound", "greedy guarantee"};
	static const char *const colors[] = {"#d62728", "#7f7f7f", "#1f77b4", "#ff7f0e", "#2ca02c"};
	const double W = 720, H = 440, L = 60, R = 200, T = 30, B = 50;
	double ymax = 1, xmax = pts[n - 1].procs;

	for (int k = 0; k < n; k++) {
		double c[5];
		curves(pts, k, c);
		for (int s = 0; s < 5; s++)
			if (c[s] > ymax)
				ymax = c[s];
	}
	ymax *= 1.1;
#define X(p) (L + ((p)-1) / (xmax > 1 ? xmax - 1 : 1) * (W - L - R))
#define Y(v) (H - B - (v) / ymax * (H - T - B))
	fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>wsr scale: ");
	xml_fputs(f, prog[0]);
	fprintf(f, "</title>\n<style>body{font-family:sans-serif;margin:2em}"
		   "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;"
		   "text-align:right}</style></head><body>\n<h1>wsr scale</h1>\n");
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		"font-size=\"12\">\n",
		W, H);
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", L,
		H - B, W - R, H - B);
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", L,
		T, L, H - B);
	for (int k = 0; k < n; k++)
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d</text>\n",
			X(pts[k].procs), H - B + 16, pts[k].procs);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">P (WSRMAXPROCS)</text>\n",
		(L + W - R) / 2, H - 12);
	for (int i = 0; i <= 5; i++) {
		double v = ymax / 1.1 * i / 5;
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.1f</text>\n", L - 6,
			Y(v) + 4, v);
	}
	fprintf(f,
		"<text x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" "
		"text-anchor=\"middle\">speed-up</text>\n",
		(T + H - B) / 2, (T + H - B) / 2);
	if (xmax > ncpu && ncpu >= 1) {
		double x = X(ncpu);
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" "
			"stroke-dasharray=\"4 3\"/>\n<text x=\"%.1f\" y=\"%.1f\">P &gt; %d CPU%s "
			"beyond this line</text>\n",
			x, T, x, H - B, x + 4, T + 12, ncpu, ncpu == 1 ? "" : "s");
	}
	for (int s = 0; s < 5; s++) {
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"",
			colors[s], s == 1 ? " stroke-dasharray=\"6 4\"" : "");
		for (int k = 0; k < n; k++) {
			double c[5];
			curves(pts, k, c);
			fprintf(f, "%.1f,%.1f ", X(pts[k].procs), Y(c[s]));
		}
		fprintf(f, "\"/>\n");
		if (s == 0)
			for (int k = 0; k < n; k++) {
				double c[5];
				curves(pts, k, c);
				fprintf(f,
					"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
					X(pts[k].procs), Y(c[0]), colors[0]);
			}
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
			"stroke-width=\"2\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
			W - R + 12, T + 10 + 18.0 * s, W - R + 36, T + 10 + 18.0 * s, colors[s],
			W - R + 40, T + 14 + 18.0 * s, names[s]);
	}
	char *md = NULL;
	size_t mdlen = 0;
	FILE *mf = open_memstream(&md, &mdlen);
	if (mf == NULL)
		return -1;
	write_md(mf, pts, n, ncpu, prog);
	if (fclose(mf) != 0) {
		free(md);
		return -1;
	}
	fprintf(f, "</svg>\n<pre>\n");
	xml_fputs(f, md);
	fprintf(f, "</pre>\n</body></html>\n");
	free(md);
	return 0;
#undef X
#undef Y
}

int cmd_scale(int argc, char **argv)
{
	struct wsr_err err;
	char dir[PATH_MAX] = "";
	struct point pts[SCALE_MAX_RUNS];
	struct scale_args a = {dir, 0};
	int ncpu = cpus(), maxp, n = 0, first;

	err_init(&err);
	int rc = cli_parse(&scale_cli, argc, argv, scale_opt, &a, &first);
	if (rc >= 0)
		return rc;
	maxp = a.maxp;
	char **prog = argv + first;
	if (maxp == 0)
		maxp = 2 * ncpu > 4 ? 2 * ncpu : 4;
	if (dir[0] == '\0') {
		char stamp[32];
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
		const char *base = strrchr(prog[0], '/');
		snprintf(dir, sizeof(dir), "wsr-scale-%s-%s", base != NULL ? base + 1 : prog[0],
			 stamp);
	}
	if (cmd_make_out_dir(dir, &err) < 0)
		goto fail;
	/* P = 1, 2, 4 ... and maxp itself when it is not a power of 2. */
	int plist[SCALE_MAX_RUNS], np = 0;
	for (int p = 1; p <= maxp && np < SCALE_MAX_RUNS - 1; p *= 2)
		plist[np++] = p;
	if (plist[np - 1] != maxp)
		plist[np++] = maxp;
	for (int i = 0; i < np; i++) {
		int p = plist[i];
		fprintf(stderr, "wsr scale: P = %d%s ...\n", p,
			p > ncpu ? " (more Ps than CPUs)" : "");
		int st = run_one(dir, p, prog, &err);
		if (st != 0) {
			if (st > 0)
				err_push(&err, "wsr run at P = %d exited %d (see %s/run-p%d.log)",
					 p, st, dir, p);
			goto fail;
		}
		pts[n].procs = p;
		if (load_point(dir, &pts[n], &err) < 0)
			goto fail;
		n++;
	}
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/scale.md", dir);
	FILE *md = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/scale.html", dir);
	FILE *html = fopen(path, "w");
	if (md == NULL || html == NULL) {
		err_push(&err, "creating %s: %s", path, strerror(errno));
		if (md != NULL)
			fclose(md);
		if (html != NULL)
			fclose(html);
		goto fail;
	}
	write_md(md, pts, n, ncpu, prog);
	if (write_html(html, pts, n, ncpu, prog) < 0) {
		err_push(&err, "out of memory rendering %s/scale.html", dir);
		fclose(md);
		fclose(html);
		goto fail;
	}
	if (fclose(md) != 0 || fclose(html) != 0) {
		err_push(&err, "writing %s: %s", dir, strerror(errno));
		goto fail;
	}
	write_md(stdout, pts, n, ncpu, prog);
	printf("\nwrote %s/scale.html and %s/scale.md\n", dir, dir);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		/* The files are written; the table on stdout is lost (a full disk, a
		 * closed pipe): say so rather than exit 0. */
		err_push(&err, "writing the table to stdout: %s", strerror(errno));
		goto fail;
	}
	return 0;
fail:
	err_print(&err, "wsr scale", stderr);
	return err.exit_code;
}
