/*
 * ctfindex.h - LTTng's CTF packet index files (TRACE/.../index/STREAM.idx):
 * one entry per packet the consumer wrote to STREAM.
 *
 * Invariants:
 *   - Format 1.x only, big endian: a 16-byte header (magic 0xC1F1DCC1,
 *     major, minor, entry length), then fixed-size entries: offset,
 *     packet_size, content_size (both in bits), timestamp_begin,
 *     timestamp_end, events_discarded (cumulative per stream), stream_id;
 *     1.1 adds stream_instance_id and packet_seq_num.
 *   - A trailing partial entry is reported (the index is truncated), never
 *     silently dropped.
 *   - Shared by `wsr run` (loss counts, analyzer/record/trace_index.c) and
 *     `wsr ingest` (the stream files hold every packet the index lists).
 * Concurrency: none; the caller owns the returned array.
 */
#ifndef WSR_ANALYZER_CTFINDEX_H
#define WSR_ANALYZER_CTFINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct ctf_index_entry {
	uint64_t offset;           /* bytes from the start of the stream file */
	uint64_t packet_size;      /* bits */
	uint64_t content_size;     /* bits */
	uint64_t ts_begin, ts_end; /* clock cycles, as in the packet context */
	uint64_t events_discarded; /* cumulative over the stream */
	uint64_t seq;              /* packet_seq_num (valid when has_seq) */
	bool has_seq;
};

/*
 * Reads the index file PATH into *ENTRIES (malloc'd, the caller frees; NULL
 * when it lists no packet) and *N. Returns 0, or -1 after pushing a cause
 * (err_input for a file that is not a readable 1.x index).
 */
int ctf_index_load(const char *path, struct ctf_index_entry **entries, size_t *n,
		   struct wsr_err *err);

#endif /* WSR_ANALYZER_CTFINDEX_H */
