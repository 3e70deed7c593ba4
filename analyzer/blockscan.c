/*
 * blockscan.c - the cursors of the wsr_blocks module (blockvtab.c has the
 * table and the planner; the design is there): a plan's constraints and
 * values, the blocks its key bounds and the zone maps leave, each block
 * read, checked and decoded once (only the columns the statement uses),
 * and the rows that pass, forwards or backwards.
 *
 * Invariants:
 *   - A text a constraint compares with is copied at xFilter: SQLite's
 *     values live only as long as the call that gives them.
 *   - A block is used only after its key columns were checked against the
 *     order invariants and its zone map (check_keys); a block that fails
 *     is SQLITE_CORRUPT, with the table and block named.
 *   - cu->bno is the block held in cu->blk (-1: none); its decoded columns
 *     stay valid until the cursor loads another block or closes.
 * Concurrency: none.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockvtab_int.h"

int blockscan_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
	struct bcur *cu = sqlite3_malloc(sizeof(*cu));

	(void)v;
	if (cu == NULL)
		return SQLITE_NOMEM;
	memset(cu, 0, sizeof(*cu));
	cu->bno = -1;
	cu->eof = true;
	*out = &cu->base;
	return SQLITE_OK;
}

static void filters_free(struct bcur *cu)
{
	for (int i = 0; i < cu->nf; i++) {
		sqlite3_free(cu->f[i].is);
		sqlite3_free(cu->f[i].ss);
		sqlite3_free(cu->f[i].slens);
		sqlite3_free(cu->f[i].match);
		for (int k = 0; k < cu->f[i].ntexts; k++)
			sqlite3_free(cu->f[i].texts[k]);
		sqlite3_free(cu->f[i].texts);
	}
	cu->nf = 0;
}

/* Drops the cursor's reference to its block. */
static void release(struct bcur *cu)
{
	if (cu->sl != NULL)
		cu->sl->refs--;
	cu->sl = NULL;
	cu->blk = NULL;
	cu->bno = -1;
}

int blockscan_close(sqlite3_vtab_cursor *c)
{
	struct bcur *cu = (struct bcur *)c;

	filters_free(cu);
	release(cu);
	sqlite3_free(cu);
	return SQLITE_OK;
}

/* One value of a filter on a column of type t: false when not comparable
 * (or out of memory: *s NULL). A text is copied (into f->texts): SQLite's
 * values live only as long as the call that gives them. */
static bool take_value(struct filt *f, uint8_t t, sqlite3_value *v, int64_t *i, const void **s,
		       int *slen)
{
	int vt = sqlite3_value_type(v);

	*s = "";
	if (t == CB_INT && vt == SQLITE_INTEGER) {
		*i = sqlite3_value_int64(v);
		return true;
	}
	if (t == CB_TEXT && vt == SQLITE_TEXT) {
		const unsigned char *x = sqlite3_value_text(v);
		int n = sqlite3_value_bytes(v);
		char *copy = x != NULL ? sqlite3_malloc(n + 1) : NULL;
		char **texts = copy != NULL ? sqlite3_realloc64(f->texts, ((uint64_t)f->ntexts + 1) *
									     sizeof(*texts))
					    : NULL;
		if (texts == NULL) {
			sqlite3_free(copy);
			*s = NULL;
			return false;
		}
		memcpy(copy, x, (size_t)n + 1);
		f->texts = texts;
		f->texts[f->ntexts++] = copy;
		*s = copy;
		*slen = n;
		f->bits |= cb_text_bit(copy, (size_t)n);
		return true;
	}
	return false;
}

/* The filter's value(s) from argv; sets never/skip. */
static int filter_values(struct bvtab *vt, struct filt *f, sqlite3_value *v)
{
	uint8_t t = f->col >= 0 ? vt->type[f->col] : CB_INT;

	if (f->op == F_ISNULL || f->op == F_NOTNULL)
		return SQLITE_OK;
	if (f->op != F_IN) {
		if (sqlite3_value_type(v) == SQLITE_NULL)
			f->never = true;
		else if (!take_value(f, t, v, &f->i, &f->s, &f->slen))
			f->skip = true;
		return f->s == NULL ? SQLITE_NOMEM : SQLITE_OK;
	}
	sqlite3_value *x = NULL;
	int n = 0, cap = 0, rc;
	for (rc = sqlite3_vtab_in_first(v, &x); rc == SQLITE_OK && x != NULL;
	     rc = sqlite3_vtab_in_next(v, &x)) {
		if (sqlite3_value_type(x) == SQLITE_NULL)
			continue; /* x IN (NULL, ...) is never true for NULL */
		if (n == cap) {
			cap = cap > 0 ? 2 * cap : 8;
			int64_t *is = sqlite3_realloc64(f->is, (uint64_t)cap * sizeof(*is));
			if (is != NULL)
				f->is = is;
			const void **ss = sqlite3_realloc64(f->ss, (uint64_t)cap * sizeof(*ss));
			if (ss != NULL)
				f->ss = ss;
			int *sl = sqlite3_realloc64(f->slens, (uint64_t)cap * sizeof(*sl));
			if (sl != NULL)
				f->slens = sl;
			if (is == NULL || ss == NULL || sl == NULL)
				return SQLITE_NOMEM;
		}
		if (!take_value(f, t, x, &f->is[n], &f->ss[n], &f->slens[n]))
			f->skip = true;
		if (f->ss[n] == NULL)
			return SQLITE_NOMEM;
		n++;
	}
	if (rc != SQLITE_OK && rc != SQLITE_DONE)
		return rc;
	f->n = n;
	if (n == 0 && !f->skip)
		f->never = true;
	return SQLITE_OK;
}

/* False when integer zone z shows that no row holds v: out of its range,
 * or absent from its set filter when it has one. */
static bool zone_may_hold(const struct bvtab *vt, uint32_t c, const struct cb_zone *z,
			  int64_t v)
{
	return v >= z->min && v <= z->max &&
	       (z->set_log == 0 || cb_set_may_hold(blockvtab_set(vt, c, z), z->set_log, v));
}

/* False when the zone map of block b shows that no row can pass f. */
static bool zone_may(struct bvtab *vt, uint32_t b, const struct filt *f)
{
	if (f->skip)
		return true;
	if (f->never)
		return false;
	if (f->col < 0)
		return true; /* the position: bounded, not tested */
	const struct cb_zone *z = blockvtab_zone_col(vt, b, (uint32_t)f->col);
	if (z == NULL)
		return true; /* read it: the block's own checks then fail */
	uint32_t n = (uint32_t)(vt->start[b + 1] - vt->start[b]);
	if (f->op == F_ISNULL)
		return z->nnull > 0;
	if (z->nnull == n)
		return false;
	if (f->op == F_NOTNULL)
		return true;
	if (vt->type[f->col] == CB_TEXT)
		return (z->mask & f->bits) != 0;
	switch (f->op) {
	case F_EQ:
		return zone_may_hold(vt, (uint32_t)f->col, z, f->i);
	case F_LT:
		return z->min < f->i;
	case F_LE:
		return z->min <= f->i;
	case F_GT:
		return z->max > f->i;
	case F_GE:
		return z->max >= f->i;
	default: /* F_IN */
		for (int k = 0; k < f->n; k++)
			if (zone_may_hold(vt, (uint32_t)f->col, z, f->is[k]))
				return true;
		return false;
	}
}

/* Narrows [*lo, *hi] by filter f on an integer key. */
static void bound(const struct filt *f, int64_t *lo, int64_t *hi)
{
	if (f->skip || f->op == F_IN || f->op == F_ISNULL || f->op == F_NOTNULL)
		return;
	if (f->never) {
		*lo = INT64_MAX;
		*hi = INT64_MIN;
		return;
	}
	int64_t v = f->i;
	switch (f->op) {
	case F_EQ:
		*lo = v > *lo ? v : *lo;
		*hi = v < *hi ? v : *hi;
		break;
	case F_LT:
		if (v == INT64_MIN)
			*lo = INT64_MAX, *hi = INT64_MIN;
		else if (v - 1 < *hi)
			*hi = v - 1;
		break;
	case F_LE:
		if (v < *hi)
			*hi = v;
		break;
	case F_GT:
		if (v == INT64_MAX)
			*lo = INT64_MAX, *hi = INT64_MIN;
		else if (v + 1 > *lo)
			*lo = v + 1;
		break;
	case F_GE:
		if (v > *lo)
			*lo = v;
		break;
	default:
		break;
	}
}

/* The block at position pos of those the cursor reads. */
static uint32_t at(const struct bvtab *vt, const struct bcur *cu, int64_t pos)
{
	return cu->group >= 0 ? vt->groups[cu->group].blocks[pos] : (uint32_t)pos;
}

/* The keys[] index of key column col (the rowid's or the order column). */
#define KEY(vt, col) ((col) == (vt)->rowid_col ? 0 : 1)

/* First position whose block's key (rowid or order column) max >= lo. */
static uint32_t first_block(const struct bvtab *vt, const struct bcur *cu, uint32_t count,
			    int col, int64_t lo)
{
	uint32_t a = 0, b = count;

	while (a < b) {
		uint32_t m = a + (b - a) / 2, k = at(vt, cu, m);
		int64_t mx = col == POS_COL ? vt->start[k + 1] - 1 : vt->keys[k].max[KEY(vt, col)];
		if (mx < lo)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* One past the last position whose block's key min <= hi. */
static uint32_t end_block(const struct bvtab *vt, const struct bcur *cu, uint32_t count, int col,
			  int64_t hi)
{
	uint32_t a = 0, b = count;

	while (a < b) {
		uint32_t m = a + (b - a) / 2, k = at(vt, cu, m);
		int64_t mn = col == POS_COL ? vt->start[k] : vt->keys[k].min[KEY(vt, col)];
		if (mn <= hi)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* First row of the decoded sorted column v (n rows) with v >= x. */
static int64_t lower_row(const int64_t *v, int64_t n, int64_t x)
{
	int64_t a = 0, b = n;

	while (a < b) {
		int64_t m = a + (b - a) / 2;
		if (v[m] < x)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* First row with v > x. */
static int64_t upper_row(const int64_t *v, int64_t n, int64_t x)
{
	int64_t a = 0, b = n;

	while (a < b) {
		int64_t m = a + (b - a) / 2;
		if (v[m] <= x)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

static int decode_col(struct bvtab *vt, struct cb_block *blk, int64_t bno, uint32_t c)
{
	char msg[128];

	if (cb_decode_col(blk, c, msg, sizeof(msg)) < 0)
		return blockvtab_error(vt, SQLITE_CORRUPT, "%s_block %lld: %s", vt->name,
				       (long long)bno, msg);
	return SQLITE_OK;
}

static int decode(struct bvtab *vt, struct bcur *cu, uint32_t c)
{
	return decode_col(vt, cu->blk, cu->bno, c);
}

/* The key columns of block b, just decoded, keep the order invariants. */
static int check_keys(struct bvtab *vt, const struct cb_block *blk, uint32_t b)
{
	const struct cb_zone *z = blockvtab_zone(vt, b);
	int keys[3] = {vt->rowid_col, vt->order_col, vt->group_col};

	if (z == NULL)
		return SQLITE_CORRUPT;
	for (int k = 0; k < 3; k++) {
		if (keys[k] < 0)
			continue;
		const struct cb_col *c = &blk->cols[keys[k]];
		for (uint32_t r = 0; r < blk->nrows; r++) {
			bool bad = c->null[r] || c->v[r] < z[keys[k]].min || c->v[r] > z[keys[k]].max;
			if (!bad && r > 0 && k < 2)
				bad = k == 0 ? c->v[r] <= c->v[r - 1] : c->v[r] < c->v[r - 1];
			if (bad)
				return blockvtab_error(vt, SQLITE_CORRUPT,
						       "%s_block %u: column %s out of order at row %u",
						       vt->name, b, vt->cname[keys[k]], r);
		}
	}
	return SQLITE_OK;
}

int blockscan_open_block(struct bvtab *vt, struct cb_block *blk, uint32_t b, const void *data,
			 size_t len)
{
	char msg[128];
	int rc;

	if (b >= vt->nz)
		return blockvtab_error(vt, SQLITE_CORRUPT, "%s_block %u: no zone map", vt->name, b);
	if (cb_open(blk, data, len, vt->ncols, vt->type, msg, sizeof(msg)) < 0)
		return blockvtab_error(vt, SQLITE_CORRUPT, "%s_block %u: %s", vt->name, b, msg);
	if (blk->nrows != (uint32_t)(vt->start[b + 1] - vt->start[b]))
		return blockvtab_error(vt, SQLITE_CORRUPT, "%s_block %u: %u rows, its zone map says %lld",
				       vt->name, b, blk->nrows,
				       (long long)(vt->start[b + 1] - vt->start[b]));
	if ((vt->rowid_col >= 0 && (rc = decode_col(vt, blk, b, (uint32_t)vt->rowid_col)) != 0) ||
	    (vt->order_col >= 0 && (rc = decode_col(vt, blk, b, (uint32_t)vt->order_col)) != 0) ||
	    (vt->group_col >= 0 && (rc = decode_col(vt, blk, b, (uint32_t)vt->group_col)) != 0))
		return rc;
	return check_keys(vt, blk, b);
}

int blockscan_decode(struct bvtab *vt, struct cb_block *blk, uint32_t b, uint32_t c)
{
	return decode_col(vt, blk, b, c);
}

/* A slot for block b with a reference taken: the one that holds it, or
 * the least recently used free one (bno -1 then), or a new one. */
static struct bslot *take_slot(struct bvtab *vt, uint32_t b)
{
	struct bslot *lru = NULL;

	for (int i = 0; i < vt->ncache; i++) {
		struct bslot *sl = vt->cache[i];
		if (sl->bno == (int64_t)b) {
			lru = sl;
			break;
		}
		if (sl->refs == 0 && (lru == NULL || sl->used_at < lru->used_at))
			lru = sl;
	}
	if (lru == NULL || (lru->bno != (int64_t)b && vt->ncache < BCACHE_MIN)) {
		struct bslot **c = sqlite3_realloc64(vt->cache,
						     ((uint64_t)vt->ncache + 1) * sizeof(*c));
		if (c == NULL)
			return NULL;
		vt->cache = c;
		lru = sqlite3_malloc(sizeof(*lru));
		if (lru == NULL)
			return NULL;
		memset(lru, 0, sizeof(*lru));
		lru->bno = -1;
		vt->cache[vt->ncache++] = lru;
	}
	if (lru->bno != (int64_t)b)
		lru->bno = -1;
	lru->used_at = ++vt->clock;
	lru->refs++;
	return lru;
}

/* Reads and opens block b (unless it is the cursor's already), decodes the
 * columns the cursor uses, and matches the filters' texts to its dictionary. */
static int load_block(struct bvtab *vt, struct bcur *cu, uint32_t b)
{
	int rc;

	if (cu->bno != (int64_t)b) {
		release(cu);
		struct bslot *sl = take_slot(vt, b);
		if (sl == NULL)
			return SQLITE_NOMEM;
		cu->sl = sl;
		cu->blk = &sl->blk;
		if (sl->bno == (int64_t)b) {
			cu->bno = b;
			goto decoded;
		}
		sqlite3_bind_int64(vt->st_data, 1, b);
		rc = sqlite3_step(vt->st_data);
		if (rc != SQLITE_ROW) {
			sqlite3_reset(vt->st_data);
			if (rc == SQLITE_DONE)
				return blockvtab_error(vt, SQLITE_CORRUPT, "%s_block %u: missing",
						       vt->name, b);
			return blockvtab_error(vt, rc, "%s_block %u: %s", vt->name, b,
					       sqlite3_errmsg(vt->db));
		}
		const void *data = sqlite3_column_blob(vt->st_data, 0);
		size_t len = (size_t)sqlite3_column_bytes(vt->st_data, 0);
		if (len > sl->cap) {
			uint8_t *nb = sqlite3_realloc64(sl->buf, len);
			if (nb == NULL) {
				sqlite3_reset(vt->st_data);
				return SQLITE_NOMEM;
			}
			sl->buf = nb;
			sl->cap = len;
		}
		if (len > 0)
			memcpy(sl->buf, data, len);
		sqlite3_reset(vt->st_data);
		cu->bno = b;
		sl->bno = b;
		if ((rc = blockscan_open_block(vt, cu->blk, b, sl->buf, len)) != SQLITE_OK)
			goto bad;
	}
decoded:
	for (uint32_t c = 0; c < vt->ncols; c++)
		if (((cu->used >> (c < 63 ? c : 63)) & 1) != 0 && (rc = decode(vt, cu, c)) != 0)
			goto bad;
	for (int i = 0; i < cu->nf; i++) {
		struct filt *f = &cu->f[i];
		if (f->col < 0 || vt->type[f->col] != CB_TEXT || f->skip || f->never ||
		    (f->op != F_EQ && f->op != F_IN))
			continue;
		const struct cb_col *c = &cu->blk->cols[f->col];
		if (c->ndict > f->mcap) {
			uint8_t *m = sqlite3_realloc64(f->match, c->ndict);
			if (m == NULL)
				return SQLITE_NOMEM;
			f->match = m;
			f->mcap = c->ndict;
		}
		for (uint32_t d = 0; d < c->ndict; d++) {
			f->match[d] = 0;
			for (int k = 0; k < (f->op == F_EQ ? 1 : f->n); k++) {
				const void *s = f->op == F_EQ ? f->s : f->ss[k];
				int sl = f->op == F_EQ ? f->slen : f->slens[k];
				if ((uint32_t)sl == c->dlen[d] &&
				    (sl == 0 || memcmp(s, c->dict[d], (size_t)sl) == 0))
					f->match[d] = 1;
			}
		}
	}
	return SQLITE_OK;
bad:
	if (cu->sl != NULL)
		cu->sl->bno = -1;
	release(cu);
	return rc;
}

/* Row r of the current block passes every filter. */
static bool row_passes(const struct bvtab *vt, const struct bcur *cu, int64_t r)
{
	for (int i = 0; i < cu->nf; i++) {
		const struct filt *f = &cu->f[i];
		if (f->skip || f->col < 0)
			continue;
		const struct cb_col *c = &cu->blk->cols[f->col];
		bool null = c->null[r];
		int64_t x = c->v[r];
		if (f->op == F_ISNULL) {
			if (!null)
				return false;
			continue;
		}
		if (null)
			return false;
		if (f->op == F_NOTNULL)
			continue;
		if (vt->type[f->col] == CB_TEXT) {
			if (!f->match[x])
				return false;
			continue;
		}
		bool ok;
		switch (f->op) {
		case F_EQ:
			ok = x == f->i;
			break;
		case F_LT:
			ok = x < f->i;
			break;
		case F_LE:
			ok = x <= f->i;
			break;
		case F_GT:
			ok = x > f->i;
			break;
		case F_GE:
			ok = x >= f->i;
			break;
		default:
			ok = false;
			for (int k = 0; k < f->n && !ok; k++)
				ok = x == f->is[k];
		}
		if (!ok)
			return false;
	}
	return true;
}

/* The row range of block b within the key bounds. */
static void block_rows(const struct bvtab *vt, struct bcur *cu, uint32_t b, int64_t *r0,
		       int64_t *r1)
{
	int64_t n = cu->blk->nrows;

	*r0 = 0;
	*r1 = n;
	if (vt->rowid_col == POS_COL) {
		int64_t s = vt->start[b];
		if (cu->rlo > s)
			*r0 = cu->rlo - s < n ? cu->rlo - s : n;
		if (cu->rhi < s + n - 1)
			*r1 = cu->rhi < s ? 0 : cu->rhi - s + 1;
	} else if (cu->rlo != INT64_MIN || cu->rhi != INT64_MAX) {
		const int64_t *v = cu->blk->cols[vt->rowid_col].v;
		int64_t a = lower_row(v, n, cu->rlo), e = upper_row(v, n, cu->rhi);
		*r0 = a > *r0 ? a : *r0;
		*r1 = e < *r1 ? e : *r1;
	}
	if (vt->order_col >= 0 && (cu->olo != INT64_MIN || cu->ohi != INT64_MAX)) {
		const int64_t *v = cu->blk->cols[vt->order_col].v;
		int64_t a = lower_row(v, n, cu->olo), e = upper_row(v, n, cu->ohi);
		*r0 = a > *r0 ? a : *r0;
		*r1 = e < *r1 ? e : *r1;
	}
	if (*r1 < *r0)
		*r1 = *r0;
}

/* Moves to the next passing row at or after the current one (in direction). */
static int seek(struct bvtab *vt, struct bcur *cu)
{
	int64_t step = cu->desc ? -1 : 1;
	int rc;

	for (;;) {
		if (cu->in_block) {
			for (; cu->r != cu->r_end; cu->r += step)
				if (row_passes(vt, cu, cu->r))
					return SQLITE_OK;
			cu->in_block = false;
			cu->b += step;
		}
		/* the next block the zone maps do not exclude */
		for (; cu->b != cu->b_end; cu->b += step) {
			bool may = true;
			for (int i = 0; i < cu->nf && may; i++)
				may = zone_may(vt, at(vt, cu, cu->b), &cu->f[i]);
			if (may)
				break;
		}
		if (cu->b == cu->b_end) {
			cu->eof = true;
			return SQLITE_OK;
		}
		uint32_t k = at(vt, cu, cu->b);
		if ((rc = load_block(vt, cu, k)) != SQLITE_OK)
			return rc;
		int64_t r0, r1;
		block_rows(vt, cu, k, &r0, &r1);
		cu->r = cu->desc ? r1 - 1 : r0;
		cu->r_end = cu->desc ? r0 - 1 : r1;
		cu->in_block = true;
	}
}

int blockscan_filter(sqlite3_vtab_cursor *c, int idxnum, const char *idxstr, int argc,
		     sqlite3_value **argv)
{
	struct bcur *cu = (struct bcur *)c;
	struct bvtab *vt = (struct bvtab *)c->pVtab;
	const char *p = idxstr;
	int ai = 0, rc;
	unsigned long long used = 0;
	int desc = 0;

	(void)idxnum;
	filters_free(cu);
	cu->eof = true;
	cu->in_block = false;
	if ((rc = blockvtab_zones_refresh(vt)) != SQLITE_OK)
		return rc;
	for (int i = 0; i < vt->ncache; i++)
		if (vt->cache[i]->bno >= (int64_t)vt->nz)
			vt->cache[i]->bno = -1;
	if (cu->bno >= (int64_t)vt->nz)
		release(cu);
	while (p != NULL && *p != '|' && *p != '\0') {
		int col, op, n = 0;
		if (sscanf(p, "%d,%d;%n", &col, &op, &n) != 2 || n == 0 || cu->nf == 32)
			return blockvtab_error(vt, SQLITE_INTERNAL, "%s: bad plan \"%s\"", vt->name, idxstr);
		struct filt *f = &cu->f[cu->nf++];
		memset(f, 0, sizeof(*f));
		f->col = col;
		f->op = (uint8_t)op;
		if (op != F_ISNULL && op != F_NOTNULL) {
			if (ai >= argc)
				return blockvtab_error(vt, SQLITE_INTERNAL, "%s: plan and arguments disagree",
						vt->name);
			if ((rc = filter_values(vt, f, argv[ai++])) != SQLITE_OK)
				return rc;
		}
		p += n;
	}
	if (p == NULL || sscanf(p, "|%d|%llx", &desc, &used) != 2)
		return blockvtab_error(vt, SQLITE_INTERNAL, "%s: bad plan \"%s\"", vt->name,
				idxstr != NULL ? idxstr : "");
	cu->desc = desc != 0;
	/* the columns to decode: the statement's, the filters', the keys' */
	for (int i = 0; i < cu->nf; i++)
		if (cu->f[i].col >= 0)
			used |= 1ull << (cu->f[i].col < 63 ? cu->f[i].col : 63);
	if (vt->rowid_col >= 0)
		used |= 1ull << vt->rowid_col;
	if (vt->order_col >= 0)
		used |= 1ull << vt->order_col;
	if (vt->group_col >= 0)
		used |= 1ull << vt->group_col;
	if (used >> 63)
		used = ~0ull;
	cu->used = used;
	cu->rlo = cu->olo = INT64_MIN;
	cu->rhi = cu->ohi = INT64_MAX;
	for (int i = 0; i < cu->nf; i++) {
		if (cu->f[i].col == vt->rowid_col)
			bound(&cu->f[i], &cu->rlo, &cu->rhi);
		if (cu->f[i].col >= 0 && cu->f[i].col == vt->order_col)
			bound(&cu->f[i], &cu->olo, &cu->ohi);
	}
	/* group=: an equality on the group column reads that group's blocks */
	cu->group = -1;
	bool none = false;
	for (int i = 0; i < cu->nf && vt->group_col >= 0; i++) {
		const struct filt *f = &cu->f[i];
		if (f->col != vt->group_col || f->op != F_EQ || f->skip)
			continue;
		struct bgroup *g = f->never ? NULL : blockvtab_group(vt, f->i, false);
		if (g == NULL)
			none = true;
		else
			cu->group = (int)(g - vt->groups);
		break;
	}
	uint32_t b0 = 0, b1 = cu->group >= 0 ? vt->groups[cu->group].n : vt->nz;
	uint32_t count = b1;
	if (none || cu->rlo > cu->rhi || cu->olo > cu->ohi) {
		b1 = 0;
	} else {
		if (cu->rlo != INT64_MIN || cu->rhi != INT64_MAX) {
			uint32_t a = first_block(vt, cu, count, vt->rowid_col, cu->rlo);
			uint32_t e = end_block(vt, cu, count, vt->rowid_col, cu->rhi);
			b0 = a > b0 ? a : b0;
			b1 = e < b1 ? e : b1;
		}
		/* the order column grows across blocks (of one group, with group=) */
		if (vt->order_col >= 0 && (vt->group_col < 0 || cu->group >= 0) &&
		    (cu->olo != INT64_MIN || cu->ohi != INT64_MAX)) {
			uint32_t a = first_block(vt, cu, count, vt->order_col, cu->olo);
			uint32_t e = end_block(vt, cu, count, vt->order_col, cu->ohi);
			b0 = a > b0 ? a : b0;
			b1 = e < b1 ? e : b1;
		}
	}
	cu->eof = false;
	if (b1 <= b0) {
		cu->eof = true;
		return SQLITE_OK;
	}
	cu->b = cu->desc ? (int64_t)b1 - 1 : b0;
	cu->b_end = cu->desc ? (int64_t)b0 - 1 : b1;
	cu->in_block = false;
	return seek(vt, cu);
}

int blockscan_next(sqlite3_vtab_cursor *c)
{
	struct bcur *cu = (struct bcur *)c;

	cu->r += cu->desc ? -1 : 1;
	return seek((struct bvtab *)c->pVtab, cu);
}

int blockscan_eof(sqlite3_vtab_cursor *c)
{
	return ((struct bcur *)c)->eof;
}

int blockscan_column(sqlite3_vtab_cursor *c, sqlite3_context *ctx, int i)
{
	struct bcur *cu = (struct bcur *)c;
	struct bvtab *vt = (struct bvtab *)c->pVtab;
	int rc;

	if (i < 0 || (uint32_t)i >= vt->ncols)
		return SQLITE_RANGE;
	if ((rc = decode(vt, cu, (uint32_t)i)) != SQLITE_OK) {
		sqlite3_result_error(ctx, vt->base.zErrMsg, -1);
		sqlite3_result_error_code(ctx, rc);
		return rc;
	}
	const struct cb_col *col = &cu->blk->cols[i];
	if (col->null[cu->r])
		sqlite3_result_null(ctx);
	else if (col->type == CB_INT)
		sqlite3_result_int64(ctx, col->v[cu->r]);
	else
		sqlite3_result_text(ctx, (const char *)col->dict[col->v[cu->r]],
				    (int)col->dlen[col->v[cu->r]], SQLITE_TRANSIENT);
	return SQLITE_OK;
}

int blockscan_rowid(sqlite3_vtab_cursor *c, sqlite3_int64 *out)
{
	struct bcur *cu = (struct bcur *)c;
	struct bvtab *vt = (struct bvtab *)c->pVtab;

	if (vt->rowid_col == POS_COL)
		*out = vt->start[cu->bno] + cu->r;
	else
		*out = cu->blk->cols[vt->rowid_col].v[cu->r];
	return SQLITE_OK;
}

