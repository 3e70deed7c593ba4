/*
 * wsr_view.c - `wsr-view`: the viewer's entry point (run by `wsr view`,
 * git-style; `wsr report --format html` and `wsr export --perfetto` exec it
 * with --html / --perfetto).
 *
 *   wsr-view trace.db [--port N]            serve the web UI on 127.0.0.1
 *   wsr-view --html [-o FILE] [--interval DUR] trace.db   self-contained HTML report
 *   wsr-view --perfetto -o FILE trace.db    Perfetto protobuf trace
 *
 * The front end execs this binary with argv[0] the subcommand, which only
 * names it in messages: "view" (`wsr view trace.db [--port N]`) and
 * "report" (`wsr report --format html` execs `report --html [-o FILE]
 * [--interval DUR] trace.db`, report.c). Options are read by the analyzer's
 * parser (cli.c) and --interval by its duration grammar (duration.c), so
 * the HTML report reads a duration as the text report does. The Perfetto
 * export lives in the analyzer library (`wsr export`); --perfetto calls it.
 * Without -o the HTML report goes to stdout.
 *
 * Invariants:
 *   - Exit codes: 0 success, 1 failure, 2 usage error or bad input.
 *   - The database is only ever opened read-only (rodb.c).
 *   - The server prints exactly one line on stdout, "wsr view: serving
 *     PATH at http://127.0.0.1:PORT/#token=HEX", flushed, once it is
 *     listening (the token is this run's; the API needs it; tests
 *     and scripts read the URL from it); the store loads in the background
 *     meanwhile (the page shows "indexing" until the sampled overview or the
 *     lanes are ready, then the overview until the lanes are). It stops on
 *     SIGINT, SIGTERM or SIGHUP.
 * Concurrency: SIGINT/SIGTERM are blocked before the server thread starts,
 *   so only the main thread takes them (sigwait).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "cli.h"
#include "db.h"
#include "duration.h"
#include "err.h"
#include "html_report.h"
#include "perfetto.h"
#include "server.h"

static const char *prog = "wsr view";

static int serve(const char *db_path, unsigned port, struct wsr_err *err)
{
	/*
	 * WSR_VIEW_PREVIEW_ONLY=1 (tests/browser) serves the overview and never
	 * loads the lanes, so the page's overview path can be checked on a small
	 * trace, which would otherwise be indexed before the first request.
	 */
	const char *po = getenv("WSR_VIEW_PREVIEW_ONLY");
	int flags = API_LOG | API_PREVIEW;
	struct api api;
	struct server sv;
	sigset_t set;
	int sig;

	/* Blocked before any thread starts, so every thread inherits the mask. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (po != NULL && strcmp(po, "1") == 0)
		flags |= API_PREVIEW_ONLY;
	if (api_open(&api, db_path, flags, err) < 0)
		return -1;
	if (server_start(&sv, &api, (uint16_t)port, err) < 0) {
		api_close(&api);
		return -1;
	}
	printf("wsr view: serving %s at %s\n", db_path, sv.url);
	fflush(stdout);
	sigwait(&set, &sig);
	server_stop(&sv);
	api_close(&api);
	return 0;
}

enum {
	OPT_HTML = CLI_LONG,
	OPT_PERFETTO,
	OPT_PORT,
	OPT_INTERVAL
};

static const struct cli_opt view_opts[] = {
	{"port", OPT_PORT, "N", "serve on 127.0.0.1:N (default: a free port)"},
	{"html", OPT_HTML, NULL,
	 "write the HTML report instead (what `wsr report --format html` runs)"},
	{"perfetto", OPT_PERFETTO, NULL, "write the Perfetto export instead (as `wsr export`)"},
	{"output", 'o', "FILE",
	 "with --html or --perfetto: the file to write (--html: default stdout)"},
	{"interval", OPT_INTERVAL, "DUR",
	 "with --html: the schedtrace table's interval, as `wsr report\n"
	 "--interval` (10ms, 500us; a bare number is ms)"},
	{NULL, 0, NULL, NULL},
};

static const struct cli view_cli = {
	.prog = "wsr view",
	.synopsis = "wsr view trace.db [--port N]\n"
		    "       wsr-view [--html [--interval DUR] | --perfetto] [-o FILE] trace.db",
	.about = "The web UI of a trace database on 127.0.0.1: open the URL it prints (see\n"
		 "wsr-view(1)). Ctrl-C stops it.",
	.opts = view_opts,
	.min_args = 1,
	.max_args = 1,
};

struct view_args {
	enum {
		SERVE,
		HTML,
		PERFETTO
	} mode;

	const char *out;
	long port;
	int64_t interval;
};

static int view_opt(void *ctx, int key, const char *arg)
{
	struct view_args *a = ctx;
	char *end;

	switch (key) {
	case OPT_HTML:
		a->mode = HTML;
		break;
	case OPT_PERFETTO:
		a->mode = PERFETTO;
		break;
	case 'o':
		a->out = arg;
		break;
	case OPT_PORT:
		errno = 0;
		a->port = strtol(arg, &end, 10);
		if (errno != 0 || *end != '\0' || a->port < 0 || a->port > 65535) {
			fprintf(stderr, "%s: error: bad port %s\n", prog, arg);
			return 2;
		}
		break;
	case OPT_INTERVAL:
		if (duration_parse(arg, &a->interval) < 0) {
			fprintf(stderr, "%s: error: bad --interval '%s': " DURATION_HINT "\n", prog,
				arg);
			return 2;
		}
		break;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct wsr_err err;
	struct view_args a = {SERVE, NULL, 0, 0};
	struct cli cli = view_cli;
	const char *db;
	int rc = 0, first;

	err_init(&err);
	{
		const char *base = strrchr(argv[0], '/') != NULL ? strrchr(argv[0], '/') + 1 : argv[0];
		if (strcmp(base, "report") == 0)
			prog = "wsr report";
		else if (strcmp(base, "export") == 0)
			prog = "wsr export";
	}
	cli.prog = prog;
	rc = cli_parse(&cli, argc, argv, view_opt, &a, &first);
	if (rc >= 0)
		return rc;
	db = argv[first];
	if ((a.mode == PERFETTO && a.out == NULL) || (a.mode == SERVE && a.out != NULL)) {
		fprintf(stderr, "%s: error: %s\n", prog,
			a.mode == PERFETTO ? "--perfetto needs -o FILE"
					   : "-o is for --html or --perfetto");
		cli_help(&cli, stderr);
		return 2;
	}
	if (a.mode == SERVE) {
		rc = serve(db, (unsigned)a.port, &err);
	} else if (a.mode == HTML) {
		struct api api;
		prog = "wsr report";
		rc = api_open(&api, db, API_REPORT, &err);
		if (rc == 0) {
			rc = html_report_write(&api, a.out, a.interval, &err);
			api_close(&api);
		}
	} else {
		sqlite3 *sdb = NULL;
		prog = "wsr export";
		rc = db_open_ro(db, &sdb, &err);
		if (rc == 0)
			rc = perfetto_write(sdb, a.out, &err);
		sqlite3_close(sdb);
	}
	if (rc < 0) {
		err_print(&err, prog, stderr);
		return err.exit_code != 0 ? err.exit_code : 1;
	}
	return 0;
}
