/*
 * blockread.c - a wsr_blocks table read block by block (see blockread.h).
 *
 * The table's definition, zone maps and block checks are the module's own
 * (blockvtab_open_direct, blockscan_open_block): this file only walks the
 * NAME_block rows in id order with one statement and hands out the decoded
 * columns, so a reader sees what SELECT over the table would, minus the
 * cost of a statement step and a column call per value.
 *
 * Invariants:
 *   - next is the id of the block the next call must return; a row of
 *     NAME_block with another id (a gap) is SQLITE_CORRUPT, "missing".
 *   - blk is opened on the statement's current blob, valid until the
 *     statement steps again: the next blockread_next() or the close.
 * Concurrency: as blockread.h.
 */
#include <stdlib.h>
#include <string.h>

#include "blockread.h"
#include "blockvtab_int.h"

struct blockread {
	struct bvtab *vt;
	sqlite3_stmt *q;
	int ncols;
	uint32_t col[BLOCKREAD_MAX_COLS];
	uint32_t next, end;
	int started;
	struct cb_block blk;
};

/* The vtab's message (or SQLite's) as the innermost cause. */
static int fail(struct blockread *br, int rc, struct wsr_err *err)
{
	const char *msg = br->vt->base.zErrMsg;

	if (msg != NULL)
		err_push(err, "%s", msg);
	else
		err_push(err, "%s_block: %s", br->vt->name, sqlite3_errstr(rc));
	return -1;
}

int blockread_open(sqlite3 *db, const char *name, const char *const *cols, int ncols,
		   struct blockread **out, struct wsr_err *err)
{
	struct blockread *br = calloc(1, sizeof(*br));
	char *msg = NULL, *sql = NULL;
	int rc;

	*out = NULL;
	if (br == NULL || ncols > BLOCKREAD_MAX_COLS) {
		err_push(err, br == NULL ? "out of memory" : "reading %s: too many columns", name);
		free(br);
		return -1;
	}
	rc = blockvtab_open_direct(db, name, &br->vt, &msg);
	if (rc != SQLITE_OK) {
		err_push(err, "%s", msg != NULL ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
		free(br);
		return -1;
	}
	for (int i = 0; i < ncols; i++) {
		uint32_t c = 0;
		while (c < br->vt->ncols && strcmp(br->vt->cname[c], cols[i]) != 0)
			c++;
		if (c == br->vt->ncols || br->vt->type[c] != CB_INT) {
			err_push(err, "%s has no INTEGER column %s", name, cols[i]);
			goto fail;
		}
		br->col[i] = c;
	}
	br->ncols = ncols;
	br->end = br->vt->nz;
	sql = sqlite3_mprintf("SELECT id, data FROM \"main\".\"%w_block\" "
			      "WHERE id >= ?1 AND id < ?2 ORDER BY id",
			      name);
	if (sql == NULL) {
		err_push(err, "out of memory");
		goto fail;
	}
	rc = sqlite3_prepare_v2(db, sql, -1, &br->q, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		err_push(err, "%s_block: %s", name, sqlite3_errmsg(db));
		goto fail;
	}
	*out = br;
	return 0;
fail:
	blockread_close(br);
	return -1;
}

uint32_t blockread_nblocks(const struct blockread *br)
{
	return br->vt->nz;
}

void blockread_range(struct blockread *br, uint32_t b0, uint32_t b1)
{
	br->end = b1 < br->vt->nz ? b1 : br->vt->nz;
	br->next = b0 < br->end ? b0 : br->end;
	br->started = 0;
	sqlite3_reset(br->q);
}

int blockread_next(struct blockread *br, struct blockread_block *blk, struct wsr_err *err)
{
	int rc;

	if (br->next >= br->end)
		return 0;
	if (!br->started) {
		sqlite3_bind_int64(br->q, 1, br->next);
		sqlite3_bind_int64(br->q, 2, br->end);
		br->started = 1;
	}
	rc = sqlite3_step(br->q);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		err_push(err, "%s_block: %s", br->vt->name, sqlite3_errmsg(br->vt->db));
		return -1;
	}
	if (rc == SQLITE_DONE || sqlite3_column_int64(br->q, 0) != (int64_t)br->next) {
		err_push(err, "%s_block %u: missing", br->vt->name, br->next);
		return -1;
	}
	rc = blockscan_open_block(br->vt, &br->blk, br->next, sqlite3_column_blob(br->q, 1),
				  (size_t)sqlite3_column_bytes(br->q, 1));
	for (int i = 0; i < br->ncols && rc == SQLITE_OK; i++)
		rc = blockscan_decode(br->vt, &br->blk, br->next, br->col[i]);
	if (rc != SQLITE_OK)
		return fail(br, rc, err);
	blk->no = br->next;
	blk->nrows = br->blk.nrows;
	for (int i = 0; i < br->ncols; i++) {
		blk->v[i] = br->blk.cols[br->col[i]].v;
		blk->null[i] = br->blk.cols[br->col[i]].null;
	}
	br->next++;
	return 1;
}

void blockread_close(struct blockread *br)
{
	if (br == NULL)
		return;
	sqlite3_finalize(br->q);
	cb_free(&br->blk);
	blockvtab_free(br->vt);
	free(br);
}
