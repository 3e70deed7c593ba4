/*
 * colblock.h - the block codec: a batch of rows of integer and text columns
 * as one compact blob, column by column, and the block's zone map (per
 * column: how many NULLs, the integers' min and max and, for the columns
 * that ask for one, a set filter of their values (lookups by a G id), a
 * 64-bit mask of the texts' hashes). The blob format is docs/schema.md's "Column blocks".
 *
 * Invariants:
 *   - cb_decode_col() gives back exactly what cb_encode() was given: every
 *     integer (INT64_MIN and INT64_MAX included), every text byte for byte
 *     (empty texts and texts with NUL bytes included), every NULL.
 *   - Nothing in a blob or zone is trusted: a truncated or corrupt one makes
 *     cb_open()/cb_decode_col()/cb_zone_decode() fail with a message, never
 *     read out of bounds or return other values.
 *   - A reader's columns point into the blob it was opened on: the caller
 *     keeps that memory unchanged until the next cb_open() or cb_free().
 * Concurrency: none; an encoder call and a reader belong to one thread.
 */
#ifndef WSR_ANALYZER_COLBLOCK_H
#define WSR_ANALYZER_COLBLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbuf.h"

enum cb_type {
	CB_INT = 1,
	CB_TEXT = 2
};

/* One column of the rows to encode: nrows entries in each array. */
struct cb_col_in {
	uint8_t type;
	const uint8_t *null;  /* nonzero: NULL (the value is then ignored); NULL: none is */
	const int64_t *v;     /* CB_INT: the values; CB_TEXT: offsets in text */
	const uint32_t *len;  /* CB_TEXT: byte lengths */
	const char *text;     /* CB_TEXT: the bytes the offsets point into */
	uint8_t set;          /* CB_INT: the zone map holds a set filter of the values */
	size_t stride;        /* CB_INT: bytes from a row's value to the next's (0: 8) */
};

/* The zone map of one column of a block. */
struct cb_zone {
	uint32_t nnull;  /* NULL values */
	int64_t min, max; /* CB_INT, when nnull < nrows */
	uint64_t mask;   /* CB_TEXT: bit cb_text_bit() of every non-NULL text */
	/* CB_INT: a set filter of the values (a Bloom filter of 2^set_log bits,
	 * 0: none), its bytes at offset set_at of the zone map as decoded (the
	 * caller copies them: see cb_zone_decode) */
	uint8_t set_log;
	uint32_t set_at;
};

/* Whether a set filter of 2^log bits may hold v (false: v is not there). */
bool cb_set_may_hold(const uint8_t *set, uint8_t log, int64_t v);

#define CB_MAX_ROWS 65536
#define CB_MAX_COLS 64
/*
 * Appends the block of nrows rows (1 <= nrows <= CB_MAX_ROWS, ncols <=
 * CB_MAX_COLS) to blob, and the zone map of its columns to zone when zone is
 * not NULL. 0, or -1 when out of memory.
 */
int cb_encode(const struct cb_col_in *cols, uint32_t ncols, uint32_t nrows, struct sbuf *blob,
	      struct sbuf *zone);

/* The mask bit of a text (the same hash for the writer and the readers). */
uint64_t cb_text_bit(const void *s, size_t len);

/* Decodes a zone map of ncols columns of the given types into zones and
 * its block's row count into *nrows, after checking its checksum; 0, or -1
 * with a message. A column's set filter stays in data (set_at, 2^set_log / 8
 * bytes). */
int cb_zone_decode(const void *data, size_t len, uint32_t ncols, const uint8_t *types,
		   uint32_t *nrows, struct cb_zone *zones, char *err, size_t errlen);

/* A decoded column: v (CB_TEXT: indices into dict) and null, nrows each. */
struct cb_col {
	uint8_t type, decoded;
	uint32_t off, size, sum; /* its payload in the blob, and its checksum */
	int64_t *v;
	uint8_t *null;
	uint32_t ndict;
	const uint8_t **dict; /* CB_TEXT: the texts, dlen[i] bytes each */
	uint32_t *dlen;
	uint32_t cap, dcap;
};

struct cb_block {
	const uint8_t *data;
	size_t len;
	uint32_t nrows, ncols;
	struct cb_col cols[CB_MAX_COLS];
};

/* Parses a blob's header; the columns must be ncols of the given types.
 * b may be reused from block to block (cb_free() at the end). */
int cb_open(struct cb_block *b, const void *data, size_t len, uint32_t ncols,
	    const uint8_t *types, char *err, size_t errlen);
/* Decodes column c (once per cb_open). 0, or -1 with a message. */
int cb_decode_col(struct cb_block *b, uint32_t c, char *err, size_t errlen);
void cb_free(struct cb_block *b);

#endif /* WSR_ANALYZER_COLBLOCK_H */
