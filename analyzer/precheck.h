/*
 * precheck.h - the checks of a trace directory before it is decoded
 * (precheck.c): CTF metadata present and complete, stream packets whole and
 * as their LTTng packet index and wsr-run.json list them.
 *
 * Invariants: precheck() fills `struct pre` (the directories holding a
 *   metadata file, for the decoder, and the packets' time range, for the
 *   progress line) or fails with err_input (exit 2).
 * Concurrency: one thread at a time (nftw has no user pointer).
 */
#ifndef WSR_ANALYZER_PRECHECK_H
#define WSR_ANALYZER_PRECHECK_H

#include <limits.h>
#include <stdint.h>

#include "err.h"
#include "runinfo.h"

struct pre {
	struct wsr_err *err;
	const char *root;
	int files, metadata, streams;
	uint64_t stream_bytes;
	/* packets walked in the LTTng stream files, and their sizes in bytes */
	uint64_t packets, packet_bytes;
	char first_meta[PATH_MAX];
	char **dirs; /* directories holding a metadata file */
	int ndirs;
	/* time range of the LTTng packets, in ns (0 when unknown) */
	int64_t begin_ns, end_ns;
	int failed;
};

/* pr->err and pr->root set, the rest zero. */
int precheck(struct pre *pr, const char *dir);
/* wsr-run.json's packet and byte counts against the stream files. */
int precheck_run_info(const struct pre *pr, const struct run_info *ri, const char *dir,
		      struct wsr_err *err);
void precheck_free(struct pre *pr);

#endif /* WSR_ANALYZER_PRECHECK_H */
