/*
 * trace_index.c - what a finished trace holds according to LTTng's packet
 * indexes (index/STREAM.idx, ctfindex.h): streams, packets, bytes,
 * discarded events and lost packets. No event is decoded: `wsr ingest`
 * counts the events (meta.events), once, and `wsr run --no-ingest` says so.
 *
 * Invariants:
 *   - events_discarded is cumulative per stream: the last entry of each
 *     index holds the stream's total; a gap in packet_seq_num is a lost
 *     packet. Unsigned sums, so a wrapped count stays right modulo 2^64.
 *   - A trace with no index file gives all zeros.
 * Concurrency: single-threaded (nftw() state in a static).
 */
#include "config.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ctfindex.h"
#include "record.h"

/* nftw() state for trace_index_read(): the first error wins. */
static struct {
	struct trace_index *ix;
	struct wsr_err *err;
	int failed;
} iwalk;

/*
 * One index file (ctfindex.h). events_discarded is cumulative per stream,
 * so the last entry holds the stream's total; a gap in packet_seq_num is a
 * lost packet.
 */
static int index_file(const char *path)
{
	struct ctf_index_entry *e = NULL;
	size_t n = 0;

	if (ctf_index_load(path, &e, &n, iwalk.err) != 0)
		return -1;
	iwalk.ix->streams++;
	for (size_t i = 0; i < n; i++) {
		iwalk.ix->packets++;
		iwalk.ix->bytes += e[i].packet_size / 8;
		if (i > 0 && e[i].has_seq && e[i - 1].has_seq && e[i].seq > e[i - 1].seq + 1)
			iwalk.ix->lost_packets += e[i].seq - e[i - 1].seq - 1;
	}
	if (n > 0)
		iwalk.ix->discarded_events += e[n - 1].events_discarded;
	free(e);
	return 0;
}

static int iwalk_visit(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	size_t n = strlen(path);

	(void)sb;
	(void)ftw;
	if (type != FTW_F || n < 4 || strcmp(path + n - 4, ".idx") != 0 ||
	    strstr(path, "/index/") == NULL)
		return 0;
	if (index_file(path) != 0) {
		iwalk.failed = 1;
		return 1; /* stop the walk */
	}
	return 0;
}

int trace_index_read(struct wsr_err *err, const char *dir, struct trace_index *ix)
{
	int rc;

	memset(ix, 0, sizeof(*ix));
	iwalk.ix = ix;
	iwalk.err = err;
	iwalk.failed = 0;
	rc = nftw(dir, iwalk_visit, 16, FTW_PHYS);
	if (iwalk.failed)
		return -1;
	if (rc != 0) {
		err_push(err, "walking %s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}
