/*
 * blockread.h - reading a wsr_blocks table (blockvtab.h) block by block in
 * storage order, integer columns as arrays, without SQL per row: for readers
 * that walk a whole table (the viewer's lanes and counter buckets, the
 * latency histogram), where stepping a statement over millions of rows costs
 * several times the decoding itself.
 *
 * Invariants:
 *   - The same rows, values and order as SELECT over the virtual table with
 *     no WHERE: the blocks are checked exactly as the module checks them
 *     (blockscan_open_block: row counts against the zone maps, key columns
 *     in order); a block that fails is an error naming the table and block.
 *   - A block's arrays stay valid until the next blockread_next() or
 *     blockread_close().
 *   - Only INTEGER columns are read (blockread_open refuses a TEXT one).
 * Concurrency: a reader belongs to one thread and uses its connection, which
 *   no other thread may use meanwhile; readers on separate connections may
 *   run side by side.
 */
#ifndef WSR_ANALYZER_BLOCKREAD_H
#define WSR_ANALYZER_BLOCKREAD_H

#include <stdint.h>

#include <sqlite3.h>

#include "err.h"

#define BLOCKREAD_MAX_COLS 16

struct blockread;

/* The current block: nrows rows; v[i] and null[i] for the reader's column i. */
struct blockread_block {
	uint32_t no, nrows;
	const int64_t *v[BLOCKREAD_MAX_COLS];
	const uint8_t *null[BLOCKREAD_MAX_COLS]; /* nonzero: NULL (v is then 0) */
};

/* A reader of the columns cols[0..ncols) of main's wsr_blocks table name,
 * over all its blocks; 0, or -1 with the cause. */
int blockread_open(sqlite3 *db, const char *name, const char *const *cols, int ncols,
		   struct blockread **out, struct wsr_err *err);
/* The table's blocks. */
uint32_t blockread_nblocks(const struct blockread *br);
/* Reads only blocks [b0, b1) from now on (clamped to the table's). */
void blockread_range(struct blockread *br, uint32_t b0, uint32_t b1);
/* The next block into *blk: 1, 0 after the last, -1 with the cause. */
int blockread_next(struct blockread *br, struct blockread_block *blk, struct wsr_err *err);
void blockread_close(struct blockread *br);

#endif /* WSR_ANALYZER_BLOCKREAD_H */
