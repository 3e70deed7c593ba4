/*
 * ingest.c - `wsr ingest TRACE_DIR [-o trace.db] [--force]`: CTF -> SQLite,
 * the command line and the pipe that runs its stages in order:
 *   precheck (precheck.c) -> decode in a child (dchild.c, decode.c; records
 *   framed by recframe.c) -> derive (derive.c and its trackers; rows.c)
 *   -> publish (publish.c, shared with the bt2 plugin).
 * The decoder child and this process run in parallel on the two cores.
 * Rejected: a second SQLite writer (the child writing `events` into the
 *   final file while this process writes the derived tables into another,
 *   merged at the end with INSERT ... SELECT). On this 2-core machine under
 *   load it was no faster and the merge cost a third of the run (10M events:
 *   144 s instead of ~62 s); one writer is simpler.
 *
 * Invariants:
 *   - OUT is created only by publish_finish()'s rename; on any failure or on
 *     SIGINT/SIGTERM/SIGHUP the temporary file is removed (publish.h).
 *   - Exit codes: 0 done; 1 failure (I/O, SQLite); 2 usage error or bad
 *     input (not a trace, empty, no wsr events, truncated, corrupted).
 * Concurrency: single-threaded parent; the child only fills the shared
 *   segments it owns (dchild.c).
 */
#include "config.h"

#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "dchild.h"
#include "derive.h"
#include "duration.h"
#include "ingest.h"
#include "precheck.h"
#include "publish.h"
#include "runinfo.h"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* What the pipe's stages share for the progress line and the timings. */
struct run {
	const struct ingest_opts *o;
	const struct pre *pr;
	struct derive *dv;
	uint64_t events; /* when decoding ended */
	double t0, t_dec, t_fin, t_end;
};

static void progress(struct run *ru)
{
	if (!ru->o->progress)
		return;
	double el = now_s() - ru->t0;
	uint64_t n = derive_event_count(ru->dv);
	double rate = el > 0 ? (double)n / el : 0;
	const struct pre *pr = ru->pr;
	if (pr->end_ns > pr->begin_ns) {
		double pct = 100.0 * (double)(derive_last_ts(ru->dv) - pr->begin_ns) /
			     (double)(pr->end_ns - pr->begin_ns);
		if (pct < 0)
			pct = 0;
		if (pct > 100)
			pct = 100;
		fprintf(stderr, "\rwsr ingest: %" PRIu64 " events, %.2fM events/s, %3.0f%%  ", n,
			rate / 1e6, pct);
	} else {
		fprintf(stderr, "\rwsr ingest: %" PRIu64 " events, %.2fM events/s  ", n,
			rate / 1e6);
	}
}

static void tick(void *ctx)
{
	progress(ctx);
}

static int take_rec(void *ctx, const struct wsr_rec *r, const char *extra, struct wsr_err *err)
{
	struct run *ru = ctx;

	return derive_rec(ru->dv, r, extra, err);
}

static uint64_t events_so_far(void *ctx)
{
	struct run *ru = ctx;

	return derive_event_count(ru->dv);
}

/* The progress line during the steps after decoding (closing the intervals,
 * building the indexes), which take a while on big traces and show no count. */
static void phase(void *ctx, const char *step)
{
	struct run *ru = ctx;

	if (strcmp(step, "closing the intervals") == 0)
		ru->t_dec = now_s();
	else if (strcmp(step, "building the indexes") == 0)
		ru->t_fin = now_s();
	else
		ru->t_end = now_s();
	if (!ru->o->progress)
		return;
	if (strcmp(step, "done") == 0)
		fprintf(stderr, "\rwsr ingest: %" PRIu64 " events decoded; done.%40s\n", ru->events,
			"");
	else
		fprintf(stderr, "\rwsr ingest: %" PRIu64 " events decoded; %s...%20s", ru->events,
			step, "");
}

int ingest_trace(const char *dir, const char *out, const struct ingest_opts *o,
		 struct ingest_stats *stats, struct wsr_err *err)
{
	struct pre pr = {.err = err, .root = dir};
	struct publish pb;
	struct run_info ri;
	struct run ru = {.o = o, .pr = &pr, .t0 = now_s()};
	struct dchild dc = {.pid = -1, .fd = -1, .segs = NULL};
	bool init_missing = false;
	int ret = -1;

	if (publish_begin(&pb, out, o->force, "--force", err) < 0)
		goto out;
	if (precheck(&pr, dir) < 0)
		goto out;
	if (run_info_load(pb.db, dir, &ri, err) < 0 || precheck_run_info(&pr, &ri, dir, err) < 0)
		goto out;
	/* The child first: derive_create() starts the row writer thread, and a
	 * fork must not happen beside a thread (dchild.h). */
	struct dchild_opts dco = {
		.timeout_s = o->timeout_s, .verbose = o->verbose, .close_fd = pb.lock_fd};
	if (dchild_start(&dc, &pr, &dco, err) < 0)
		goto out;
	ru.dv = derive_create(pb.db, dir, err);
	if (ru.dv == NULL)
		goto out;
	if (o->vpid > 0)
		derive_set_vpid(ru.dv, o->vpid);
	derive_set_dag_rows(ru.dv, o->dag_rows);

	struct dchild_sink sink = {.rec = take_rec,
				   .events = events_so_far,
				   .tick = o->progress ? tick : NULL,
				   .ctx = &ru};
	if (dchild_run(&dc, dir, &dco, &sink, err) < 0)
		goto out;
	progress(&ru);
	ru.events = derive_event_count(ru.dv);
	if (publish_finish(&pb, &ru.dv, dir, &ri, phase, &ru, &init_missing, err) < 0)
		goto out;
	if (getenv("WSR_INGEST_TIMING") != NULL)
		fprintf(stderr, "wsr ingest: decode+derive %.2f s, finish %.2f s, indexes %.2f s\n",
			ru.t_dec - ru.t0, ru.t_fin - ru.t_dec, ru.t_end - ru.t_fin);
	if (stats != NULL) {
		stats->events = ru.events;
		stats->seconds = now_s() - ru.t0;
		stats->init_missing = init_missing;
	}
	ret = 0;
out:
	dchild_stop(&dc);
	derive_destroy(ru.dv);
	publish_end(&pb);
	precheck_free(&pr);
	return ret;
}

enum {
	OPT_TIMEOUT = CLI_LONG,
	OPT_VPID,
	OPT_VERBOSE,
	OPT_DAG
};

static const struct cli_opt ingest_opts[] = {
	{"output", 'o', "FILE", "the database to write (default TRACE_DIR/trace.db)"},
	{"force", 'f', NULL, "replace an existing wsr database (never another file)"},
	{"timeout", OPT_TIMEOUT, "DUR",
	 "give up when the decoder makes no progress for DUR, whole\n"
	 "seconds (default 30s)"},
	{"vpid", OPT_VPID, "PID", "analyse only the events of process PID"},
	{"dag", OPT_DAG, NULL,
	 "write every strand and edge of the work/span DAG to dag_strand\n"
	 "and dag_edge (default: the critical path's strands only)"},
	{"quiet", 'q', NULL, "no progress line and no summary line"},
	{"verbose", OPT_VERBOSE, NULL, "let babeltrace2 print its own messages on stderr"},
	{NULL, 0, NULL, NULL},
};

static const struct cli ingest_cli = {
	.prog = "wsr ingest",
	.synopsis = "wsr ingest TRACE_DIR [-o trace.db] [--force] [--timeout DUR] [--vpid PID] "
		    "[--dag] [--quiet] [--verbose]",
	.about = "Reads the CTF trace under TRACE_DIR (babeltrace2) and writes one SQLite\n"
		 "database (default TRACE_DIR/trace.db); see wsr-ingest(1) and docs/schema.md.",
	.opts = ingest_opts,
	.min_args = 1,
	.max_args = 1,
};

struct ingest_args {
	struct ingest_opts o;
	const char *out;
	bool quiet;
};

static int ingest_opt(void *ctx, int key, const char *arg)
{
	struct ingest_args *a = ctx;
	int64_t ns;
	char *end;
	long v;

	switch (key) {
	case 'f':
		a->o.force = true;
		break;
	case 'q':
		a->quiet = true;
		break;
	case OPT_VERBOSE:
		a->o.verbose = true;
		break;
	case OPT_DAG:
		a->o.dag_rows = true;
		break;
	case 'o':
		a->out = arg;
		break;
	case OPT_VPID:
		v = strtol(arg, &end, 10);
		if (*end != '\0' || v < 1) {
			fprintf(stderr, "wsr ingest: error: bad --vpid '%s'\n", arg);
			return 2;
		}
		a->o.vpid = v;
		break;
	case OPT_TIMEOUT:
		if (duration_parse(arg, &ns) < 0 || ns % 1000000000 != 0 || ns > 86400000000000) {
			fprintf(stderr,
				"wsr ingest: error: bad --timeout '%s': whole seconds from 1s to "
				"86400s, e.g. 30s (" DURATION_HINT ")\n",
				arg);
			return 2;
		}
		a->o.timeout_s = (int)(ns / 1000000000);
		break;
	}
	return 0;
}

int ingest_main(const char *dir, const char *out, const struct ingest_opts *o, bool quiet)
{
	char outbuf[PATH_MAX];
	struct ingest_stats stats = {0};
	struct sigaction sa = {.sa_handler = dchild_interrupt}, old[3];
	static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
	struct wsr_err err;
	int ret;

	err_init(&err);
	if (out == NULL) {
		snprintf(outbuf, sizeof(outbuf), "%s/trace.db", dir);
		out = outbuf;
	}
	/* A stop signal makes ingest_trace() remove its temporary file and fail. */
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);
	ret = ingest_trace(dir, out, o, &stats, &err);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	if (ret < 0) {
		if (o->progress)
			fputc('\n', stderr);
		err_print(&err, "wsr ingest", stderr);
		/* Interrupted: 128 + N, as a shell reports a process killed by signal N. */
		return dchild_interrupted() ? 128 + dchild_interrupted() : err.exit_code;
	}
	if (stats.init_missing)
		fprintf(stderr,
			"wsr ingest: warning: the trace has no init event (the recording "
			"started after the program did): gomaxprocs and the runtime version "
			"are unknown (meta.init_missing = 1)\n");
	if (!quiet)
		fprintf(stderr, "wsr ingest: %" PRIu64 " events in %.2f s (%.2fM events/s) -> %s\n",
			stats.events, stats.seconds,
			stats.seconds > 0 ? (double)stats.events / stats.seconds / 1e6 : 0.0, out);
	return 0;
}

int cmd_ingest(int argc, char **argv)
{
	struct ingest_args a = {.o = {.timeout_s = 30, .progress = isatty(2)}};
	int first, rc = cli_parse(&ingest_cli, argc, argv, ingest_opt, &a, &first);

	if (rc >= 0)
		return rc;
	if (a.quiet)
		a.o.progress = false;
	return ingest_main(argv[first], a.out, &a.o, a.quiet);
}
