/*
 * fuzz-ingest.c - libFuzzer target: `wsr ingest` (analyzer/ingest.c and
 * everything behind it) on a trace directory written from the fuzz input,
 * then the metrics of the database it produced (metrics.c).
 *
 * Design. Each input becomes the directory TMP/t holding two files:
 *   - t/wsr_0, a CTF stream file: the input bytes;
 *   - t/metadata: the real metadata of a `wsr run` trace
 *     (tests/fuzz/data/trace/metadata, plain-text TSDL).
 * An input that starts with "WSRMETA" + a 2-byte little-endian length L
 * carries its own metadata instead: the next L bytes are the metadata file
 * and the rest is the stream file. So the stream prechecks, babeltrace2's
 * decoding, the decoder (decode.c), the validation and state machines of
 * derive.c and the metadata prechecks all see fuzzed bytes.
 * The input is ingested with ingest_trace(), the product's code path: the
 * prechecks run in this process, decoding runs in a forked child with a
 * no-progress limit of WSR_FUZZ_INGEST_TIMEOUT seconds (default 2), so one
 * input costs at most about that long even when babeltrace2 hangs.
 * A database that comes out is then loaded with metrics_load() and run
 * through metrics_diagnose() and schedtrace_line().
 *
 * Invariants:
 *   - ingest_trace() fails cleanly (exit code 1 or 2, no database left) or
 *     succeeds; metrics_load() on its output succeeds.
 *   - The decoder child is an ordinary part of the product: babeltrace2
 *     aborting in it is the crash that ingest.c turns into "the trace is
 *     corrupted", so the child gets the default SIGABRT action back
 *     (pthread_atfork) instead of libFuzzer's crash handler. A sanitizer
 *     report in the child (decode.c is instrumented) makes it exit 1 after
 *     libFuzzer saved the input; the parent then sees "the decoder exited
 *     with status 1" and aborts too, so the run stops with the reproducer.
 *     WSR_FUZZ_VERBOSE=1 keeps the child's stderr to read the report.
 * Concurrency: libFuzzer calls the target from one thread; ingest_trace()
 *   forks one decoder child per input and waits for it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "db.h"
#include "err.h"
#include "ingest.h"
#include "metrics.h"

#ifndef WSR_FUZZ_DATA_DIR
# define WSR_FUZZ_DATA_DIR "tests/fuzz/data"
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char tmpdir[PATH_MAX];
static char trace_dir[PATH_MAX + 8], meta_path[PATH_MAX + 32], stream_path[PATH_MAX + 32];
static char db_path[PATH_MAX + 32];
static char *metadata;
static size_t metadata_len;
static int timeout_s = 2;
static int verbose;

static void cleanup(void)
{
	if (tmpdir[0] == '\0')
		return;
	unlink(db_path);
	unlink(meta_path);
	unlink(stream_path);
	rmdir(trace_dir);
	rmdir(tmpdir);
}

static void child_signals(void)
{
	signal(SIGABRT, SIG_DFL);
}

static int write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return -1;
	const char *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return close(fd);
}

static void die(const char *what)
{
	fprintf(stderr, "fuzz-ingest: %s: %s\n", what, strerror(errno));
	exit(1);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *data = getenv("WSR_FUZZ_DATA");
	const char *t = getenv("WSR_FUZZ_INGEST_TIMEOUT");
	char path[PATH_MAX];

	(void)argc;
	(void)argv;
	if (data == NULL)
		data = WSR_FUZZ_DATA_DIR;
	if (t != NULL && atoi(t) > 0)
		timeout_s = atoi(t);
	verbose = getenv("WSR_FUZZ_VERBOSE") != NULL && atoi(getenv("WSR_FUZZ_VERBOSE")) > 0;
	snprintf(path, sizeof(path), "%s/trace/metadata", data);
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		die(path);
	if (fseek(f, 0, SEEK_END) < 0)
		die(path);
	long len = ftell(f);
	rewind(f);
	metadata = malloc((size_t)len + 1);
	if (metadata == NULL || fread(metadata, 1, (size_t)len, f) != (size_t)len)
		die(path);
	metadata_len = (size_t)len;
	fclose(f);

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/wsr-fuzz-ingest-XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		die("mkdtemp");
	snprintf(trace_dir, sizeof(trace_dir), "%s/t", tmpdir);
	snprintf(meta_path, sizeof(meta_path), "%s/metadata", trace_dir);
	snprintf(stream_path, sizeof(stream_path), "%s/wsr_0", trace_dir);
	snprintf(db_path, sizeof(db_path), "%s/trace.db", tmpdir);
	if (mkdir(trace_dir, 0755) < 0)
		die(trace_dir);
	atexit(cleanup);
	pthread_atfork(NULL, NULL, child_signals);
	return 0;
}

/* Runs the analyses of `wsr report` over a database that ingested. */
static void analyse(void)
{
	struct metrics *m = calloc(1, sizeof(*m));
	struct diag diags[32];
	char line[4096];
	sqlite3 *db = NULL;
	struct wsr_err err;

	err_init(&err);
	if (m == NULL)
		return;
	if (db_open_ro(db_path, &db, &err) < 0 || metrics_load(db, db_path, m, &err) < 0) {
		/* A database that ingest accepted must load. */
		err_print(&err, "fuzz-ingest: metrics of an ingested trace", stderr);
		abort();
	}
	metrics_diagnose(m, diags, 32);
	for (int i = 0; i < 4; i++) {
		int64_t ts = m->start_ts + (m->end_ts - m->start_ts) / 3 * i;
		schedtrace_line(db, m, ts, i % 2 == 1, line, sizeof(line), &err);
	}
	sqlite3_close(db);
	free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *meta = (const uint8_t *)metadata, *stream = data;
	size_t mlen = metadata_len, slen = size;
	struct ingest_opts o = {.force = true, .timeout_s = timeout_s, .verbose = verbose};
	struct wsr_err err;

	if (size >= 9 && memcmp(data, "WSRMETA", 7) == 0) {
		mlen = (size_t)data[7] | (size_t)data[8] << 8;
		if (mlen > size - 9)
			mlen = size - 9;
		meta = data + 9;
		stream = meta + mlen;
		slen = size - 9 - mlen;
	}
	if (write_file(meta_path, meta, mlen) < 0 || write_file(stream_path, stream, slen) < 0)
		die("writing the trace");
	err_init(&err);
	unlink(db_path);
	if (ingest_trace(trace_dir, db_path, &o, NULL, &err) == 0) {
		analyse();
		return 0;
	}
	if (access(db_path, F_OK) == 0) {
		fprintf(stderr, "fuzz-ingest: a failed ingest left %s behind\n", db_path);
		abort();
	}
	char chain[WSR_ERR_MAX * WSR_ERR_LEN];
	err_format(&err, chain, sizeof(chain));
	if (err.exit_code != 1 && err.exit_code != 2) {
		fprintf(stderr, "fuzz-ingest: exit code %d: %s\n", err.exit_code, chain);
		abort();
	}
	if (strstr(chain, "the decoder exited with status 1") != NULL) {
		fprintf(stderr,
			"fuzz-ingest: the decoder child died with a sanitizer report (rerun "
			"with WSR_FUZZ_VERBOSE=1 to read it): %s\n",
			chain);
		abort();
	}
	return 0;
}
