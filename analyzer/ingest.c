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
 * Concurrency: single-threaded parent; the child only writes the pipe.
 */
#include "config.h"

#include <getopt.h>
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

#include "cmd.h"
#include "dchild.h"
#include "derive.h"
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
	bool init_missing = false;
	int ret = -1;

	if (publish_begin(&pb, out, o->force, "--force", err) < 0)
		goto out;
	if (precheck(&pr, dir) < 0)
		goto out;
	if (run_info_load(pb.db, dir, &ri, err) < 0 || precheck_run_info(&pr, &ri, dir, err) < 0)
		goto out;
	ru.dv = derive_create(pb.db, dir, err);
	if (ru.dv == NULL)
		goto out;
	if (o->vpid > 0)
		derive_set_vpid(ru.dv, o->vpid);

	struct dchild_opts dco = {
		.timeout_s = o->timeout_s, .verbose = o->verbose, .close_fd = pb.lock_fd};
	struct dchild_sink sink = {.rec = take_rec,
				   .events = events_so_far,
				   .tick = o->progress ? tick : NULL,
				   .ctx = &ru};
	if (dchild_decode(&pr, dir, &dco, &sink, err) < 0)
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
	derive_destroy(ru.dv);
	publish_end(&pb);
	precheck_free(&pr);
	return ret;
}

static const struct option ingest_options[] = {
	{"output", required_argument, NULL, 'o'},  {"force", no_argument, NULL, 'f'},
	{"timeout", required_argument, NULL, 't'}, {"vpid", required_argument, NULL, 'p'},
	{"quiet", no_argument, NULL, 'q'},         {"verbose", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
};

static void ingest_usage(FILE *f)
{
	fprintf(f, "usage: wsr ingest TRACE_DIR [-o trace.db] [--force] [--timeout SECONDS] "
		   "[--vpid PID] [--quiet] [--verbose]\n"
		   "  Reads the CTF trace under TRACE_DIR (babeltrace2) and writes one SQLite\n"
		   "  database (default TRACE_DIR/trace.db); see docs/schema.md.\n"
		   "  -o, --output FILE  the database to write (default TRACE_DIR/trace.db)\n"
		   "  -f, --force        replace an existing wsr database (never another file)\n"
		   "  --timeout S        give up when the decoder makes no progress for S seconds "
		   "(default 30)\n"
		   "  --vpid PID         analyse only the events of process PID\n"
		   "  -q, --quiet        no progress line and no summary line\n"
		   "  --verbose          let babeltrace2 print its own messages on stderr\n"
		   "  -h, --help         this text\n");
}

int cmd_ingest(int argc, char **argv)
{
	struct ingest_opts o = {.timeout_s = 30, .progress = isatty(2)};
	const char *dir = NULL, *out = NULL;
	char outbuf[PATH_MAX];
	struct ingest_stats stats = {0};
	struct wsr_err err;
	bool quiet = false;
	int c;

	err_init(&err);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:fqh", ingest_options, NULL)) != -1) {
		char *end;
		long v;
		switch (c) {
		case 'h':
			ingest_usage(stdout);
			return 0;
		case 'f':
			o.force = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'o':
			out = optarg;
			break;
		case 'p':
			v = strtol(optarg, &end, 10);
			if (*end != '\0' || v < 1) {
				fprintf(stderr, "wsr ingest: error: bad --vpid '%s'\n", optarg);
				return 2;
			}
			o.vpid = v;
			break;
		case 't':
			v = strtol(optarg, &end, 10);
			if (*end != '\0' || v < 1 || v > 86400) {
				fprintf(stderr, "wsr ingest: error: bad --timeout '%s'\n", optarg);
				return 2;
			}
			o.timeout_s = (int)v;
			break;
		default:
			err_option("wsr ingest", c, argv[optind - 1], stderr);
			ingest_usage(stderr);
			return 2;
		}
	}
	for (; optind < argc; optind++) {
		if (dir == NULL) {
			dir = argv[optind];
		} else {
			fprintf(stderr, "wsr ingest: error: unexpected argument '%s'\n",
				argv[optind]);
			ingest_usage(stderr);
			return 2;
		}
	}
	if (dir == NULL) {
		ingest_usage(stderr);
		return 2;
	}
	if (quiet)
		o.progress = false;
	if (out == NULL) {
		snprintf(outbuf, sizeof(outbuf), "%s/trace.db", dir);
		out = outbuf;
	}

	struct sigaction sa = {.sa_handler = dchild_interrupt};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (ingest_trace(dir, out, &o, &stats, &err) < 0) {
		if (o.progress)
			fputc('\n', stderr);
		err_print(&err, "wsr ingest", stderr);
		return err.exit_code;
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
