/*
 * blockvtab_int.h - what the two halves of the wsr_blocks module share:
 * blockvtab.c (the table, its zone maps, the planner) and blockscan.c (the
 * cursors). Not an interface: blockvtab.h is.
 *
 * Invariants: as in blockvtab.c. Concurrency: none (one connection's).
 */
#ifndef WSR_ANALYZER_BLOCKVTAB_INT_H
#define WSR_ANALYZER_BLOCKVTAB_INT_H

#ifdef WSR_SQLITE_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#else
#include <sqlite3.h>
#endif

#include <stdbool.h>
#include <stdint.h>

#include "colblock.h"

#define POS_COL (-2) /* the row's position, when the rowid is not a column */

enum fop {
	F_EQ,
	F_LT,
	F_LE,
	F_GT,
	F_GE,
	F_ISNULL,
	F_NOTNULL,
	F_IN
};

/* A decoded block, shared by the cursors of a vtab (the statements of a
 * report open and close cursors at every correlated subquery: a block
 * decoded for one is there for the next). refs: cursors on it. */
struct bslot {
	struct cb_block blk;
	uint8_t *buf; /* the blob, which blk's dictionaries point into */
	size_t cap;
	int64_t bno; /* -1: none */
	uint64_t used_at;
	int refs;
};

#define BCACHE_MIN 8 /* slots kept decoded; more only while cursors hold them */

struct bvtab {
	sqlite3_vtab base;
	sqlite3 *db;
	char *name, *schema;
	uint32_t ncols;
	char *cname[CB_MAX_COLS];
	uint8_t type[CB_MAX_COLS];
	int rowid_col; /* POS_COL: the position */
	int order_col; /* -1: none */
	int group_col; /* -1: none; else each block holds one value of it */
	/* group=: the blocks of each value of group_col, in id order */
	struct bgroup {
		int64_t value;
		uint32_t *blocks, n, cap;
	} *groups;
	uint32_t ngroups, capgroups;
	/*
	 * What the vtab keeps of the zone maps of its nz blocks, each read and
	 * checked once when the block appears: its first row's position
	 * (start), the key columns' min and max (keys: what a plan's binary
	 * searches read), and, for each column a filter tests, that column's
	 * zone in every block (colz, with its set filters in colset), decoded
	 * the first time. A block check reads its block's zone map again
	 * (blockvtab_zone). So 40 bytes a block, plus 40 per filtered column:
	 * the zone maps themselves (140 bytes a block of events, 600 of
	 * g_interval, 800 decoded) stay in the file.
	 */
	uint32_t nz, capz;
	int64_t *start; /* nz + 1 entries: position of each block's first row */
	struct bkeys {
		int64_t min[2], max[2]; /* [0]: rowid_col, [1]: order_col (when >= 0) */
	} *keys;
	int64_t zone_bno; /* the block whose zones zone holds; -1: none */
	struct cb_zone zone[CB_MAX_COLS];
	/* colz[c][b] for the first colz_n[c] blocks; a set filter's bytes at
	 * colset[c] + set_at */
	struct cb_zone *colz[CB_MAX_COLS];
	uint32_t colz_n[CB_MAX_COLS];
	uint8_t *colset[CB_MAX_COLS];
	uint64_t colset_n[CB_MAX_COLS], colset_cap[CB_MAX_COLS];
	sqlite3_stmt *st_last, *st_zones, *st_zone, *st_data;
	struct bslot **cache;
	int ncache;
	uint64_t clock;
};

/* One constraint of the plan, with its value from xFilter. */
struct filt {
	int col;
	uint8_t op;
	bool never; /* a comparison with NULL: no row matches */
	bool skip;  /* a value the module does not compare: SQLite alone tests it */
	int64_t i;
	const void *s;
	int slen;
	uint64_t bits; /* texts: their mask bits (IN: all of them) */
	int n;         /* F_IN: values */
	int64_t *is;
	const void **ss;
	int *slens;
	uint8_t *match; /* texts, per block: 1 for the dictionary entries that match */
	uint32_t mcap;
	char **texts; /* the copies of the texts */
	int ntexts;
};

struct bcur {
	sqlite3_vtab_cursor base;
	struct bslot *sl;     /* the current block (a reference), NULL: none */
	struct cb_block *blk; /* sl's, when sl is not NULL */
	int64_t bno;          /* sl's block id, -1: none */
	bool desc, eof;
	bool in_block; /* r and r_end are set for block b */
	uint64_t used; /* columns to decode */
	struct filt f[32];
	int nf;
	int group; /* the group the plan reads (its blocks only), -1: every block */
	int64_t b, b_end; /* the current position in the blocks read, and the end (in direction) */
	int64_t r, r_end;  /* the current row, and the one after the last, in the block */
	int64_t rlo, rhi, olo, ohi;
};

/* Block b's zone maps, one per column, read and decoded into vt->zone
 * (valid until the next call; their set_at is not kept: see colz); NULL
 * when they cannot be read or no longer decode (then the error is the
 * vtab's). */
const struct cb_zone *blockvtab_zone(struct bvtab *vt, uint32_t b);
/* Column c's zone of block b, kept for every block once a filter asks (a
 * filter skims the zone maps of many blocks per lookup); NULL when out of
 * memory or as blockvtab_zone. */
const struct cb_zone *blockvtab_zone_col(struct bvtab *vt, uint32_t b, uint32_t c);
/* The set filter of column c's zone z (from blockvtab_zone_col, z->set_log != 0). */
static inline const uint8_t *blockvtab_set(const struct bvtab *vt, uint32_t c,
					   const struct cb_zone *z)
{
	return vt->colset[c] + z->set_at;
}

/* Sets the vtab's error message; returns rc. */
int blockvtab_error(struct bvtab *vt, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The group of value (added when add and new; NULL: none, or out of memory). */
struct bgroup *blockvtab_group(struct bvtab *vt, int64_t value, bool add);
/* Frees the decoded blocks no cursor holds (all, at disconnect). */
void blockvtab_cache_free(struct bvtab *vt);
/* Reads the zone maps of the blocks added since the last call. */
int blockvtab_zones_refresh(struct bvtab *vt);

/*
 * A vtab built from the arguments of its CREATE VIRTUAL TABLE (argv[1]: the
 * schema, argv[2]: the table, argv[3..]: the module's arguments), declared
 * to no connection: xConnect's first half. SQLITE_OK, or an error code with
 * a message in *err (sqlite3_free it).
 */
int blockvtab_new(sqlite3 *db, int argc, const char *const *argv, struct bvtab **out,
		  char **err);
/*
 * The vtab of main's wsr_blocks table name, for reading its blocks without
 * SQL (blockread.c): built from its statement in sqlite_schema, with every
 * zone map read. SQLITE_OK, or an error code with a message in *err
 * (sqlite3_free it). Free it with blockvtab_free().
 */
int blockvtab_open_direct(sqlite3 *db, const char *name, struct bvtab **out, char **err);
void blockvtab_free(struct bvtab *vt);

/*
 * Opens block b (its bytes: data, len, kept unchanged while blk is used) into
 * blk, checks its row count against its zone map and its key columns against
 * the order invariants (decoding them). SQLITE_OK, or SQLITE_CORRUPT with
 * the vtab's message naming the table and the block.
 */
int blockscan_open_block(struct bvtab *vt, struct cb_block *blk, uint32_t b, const void *data,
			 size_t len);
/* Decodes column c of block b, opened in blk; SQLITE_OK or SQLITE_CORRUPT (message as above). */
int blockscan_decode(struct bvtab *vt, struct cb_block *blk, uint32_t b, uint32_t c);

int blockscan_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out);
int blockscan_close(sqlite3_vtab_cursor *c);
int blockscan_filter(sqlite3_vtab_cursor *c, int idxnum, const char *idxstr, int argc,
		     sqlite3_value **argv);
int blockscan_next(sqlite3_vtab_cursor *c);
int blockscan_eof(sqlite3_vtab_cursor *c);
int blockscan_column(sqlite3_vtab_cursor *c, sqlite3_context *ctx, int i);
int blockscan_rowid(sqlite3_vtab_cursor *c, sqlite3_int64 *out);

#endif /* WSR_ANALYZER_BLOCKVTAB_INT_H */
