/*
 * blockvtab.c - the `wsr_blocks` virtual table module (see blockvtab.h):
 * column blocks served to SQL as rows, after Perfetto's trace processor,
 * whose tables are virtual tables over columnar storage.
 *
 * Plans. xBestIndex takes, from the constraints SQLite offers:
 *   - comparisons (=, <, <=, >, >=) on the rowid and on the order column:
 *     they bound the rows, found by binary search over the blocks' zone
 *     maps (min and max of those columns grow with the block id) and then
 *     within the block's decoded column;
 *   - =, IN (all at once: sqlite3_vtab_in), the comparisons, IS NULL and IS
 *     NOT NULL on any other column: a block whose zone map excludes the
 *     value is not read (texts: a 64-bit mask of their hashes; integers:
 *     min and max, and for = and IN the column's set filter when the writer
 *     gave it one, as g_interval's g), and rows are tested against the
 *     decoded values;
 *   - ORDER BY the order column and/or the rowid, all ascending or all
 *     descending, is the storage order read forwards or backwards:
 *     orderByConsumed.
 *   - group=C (p_counters: group=p, order=ts): each block holds rows of one
 *     value of column C, and the order column grows within the blocks of
 *     that value, not across values. With an equality on C the plan reads
 *     only that value's blocks, seeks the order column's bounds among them
 *     and consumes ORDER BY it; without one every block is a candidate
 *     (the zone maps still skip them) and the order is not consumed.
 * Every constraint keeps omit = 0: SQLite tests it again, so the module
 * only has to be conservative (skip only what cannot match: a value of
 * another type than the column, a collation other than BINARY, a real,
 * are not used for skipping at all). The plan travels in idxStr.
 *
 * Zone maps. The vtab reads every block's zone map from NAME_zone once,
 * without touching the blobs, checks it, and keeps only what plans need
 * for every block: the first row's position and the key columns' min and
 * max (the binary searches). A filter on another column decodes that
 * column's zones of every block the first time (colz; with its set
 * filters), and a block check reads its block's zone map again, by id.
 * Holding them all decoded took 800 bytes a block of events, the memory of
 * a report that grew with the trace; now 40 bytes a block plus 40 per
 * filtered column. At each xFilter the vtab compares the last block id
 * with what it holds and reads only the new ones (ingestion reads through
 * the same connection it writes).
 *
 * Decoded blocks. Cursors decode only the columns the statement uses
 * (colUsed, plus the columns of the constraints and the keys), once per
 * block, into a cache of the vtab shared by its cursors (BCACHE_MIN blocks
 * kept, more only while cursors hold them; a slot is reused only when no
 * cursor refers to it): the schedtrace SELECT opens new p_counters cursors
 * at every tick, and finds the blocks of the tick before decoded.
 *
 * Invariants:
 *   - Read-only: no xUpdate, so SQLite refuses every write to the table.
 *   - A blob or zone map that does not decode, or whose key columns break
 *     the order invariants of blockvtab.h, is SQLITE_CORRUPT with a message
 *     naming the table and the block; nothing is returned from it.
 * Concurrency: none (a connection's vtab and cursors are used by one
 *   thread at a time).
 */

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "blockvtab.h"
#include "blockvtab_int.h"

int blockvtab_error(struct bvtab *vt, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sqlite3_free(vt->base.zErrMsg);
	vt->base.zErrMsg = sqlite3_vmprintf(fmt, ap);
	va_end(ap);
	return rc;
}

static void vt_free(struct bvtab *vt)
{
	if (vt == NULL)
		return;
	sqlite3_finalize(vt->st_last);
	sqlite3_finalize(vt->st_zones);
	sqlite3_finalize(vt->st_zone);
	sqlite3_finalize(vt->st_data);
	for (uint32_t c = 0; c < vt->ncols; c++)
		sqlite3_free(vt->cname[c]);
	for (uint32_t g = 0; g < vt->ngroups; g++)
		sqlite3_free(vt->groups[g].blocks);
	sqlite3_free(vt->groups);
	blockvtab_cache_free(vt);
	sqlite3_free(vt->name);
	sqlite3_free(vt->schema);
	sqlite3_free(vt->start);
	sqlite3_free(vt->keys);
	for (int c = 0; c < CB_MAX_COLS; c++) {
		sqlite3_free(vt->colz[c]);
		sqlite3_free(vt->colset[c]);
	}
	sqlite3_free(vt);
}

static int col_index(const struct bvtab *vt, const char *name, size_t len)
{
	for (uint32_t c = 0; c < vt->ncols; c++)
		if (strlen(vt->cname[c]) == len && strncasecmp(vt->cname[c], name, len) == 0)
			return (int)c;
	return -1;
}

/* "name TYPE" (TYPE INTEGER or TEXT, case-insensitive). */
static int parse_col(struct bvtab *vt, const char *arg, char **err)
{
	const char *p = arg;
	while (isspace((unsigned char)*p))
		p++;
	const char *n0 = p;
	while (*p != '\0' && !isspace((unsigned char)*p))
		p++;
	size_t nlen = (size_t)(p - n0);
	while (isspace((unsigned char)*p))
		p++;
	const char *t0 = p;
	while (*p != '\0' && !isspace((unsigned char)*p))
		p++;
	size_t tlen = (size_t)(p - t0);
	while (isspace((unsigned char)*p))
		p++;
	uint8_t type = 0;
	if (tlen == 7 && strncasecmp(t0, "INTEGER", 7) == 0)
		type = CB_INT;
	else if (tlen == 4 && strncasecmp(t0, "TEXT", 4) == 0)
		type = CB_TEXT;
	if (nlen == 0 || type == 0 || *p != '\0') {
		*err = sqlite3_mprintf("wsr_blocks: column \"%s\" is not \"NAME INTEGER\" or \"NAME "
				       "TEXT\"",
				       arg);
		return SQLITE_ERROR;
	}
	if (vt->ncols == CB_MAX_COLS) {
		*err = sqlite3_mprintf("wsr_blocks: more than %d columns", CB_MAX_COLS);
		return SQLITE_ERROR;
	}
	vt->cname[vt->ncols] = sqlite3_mprintf("%.*s", (int)nlen, n0);
	if (vt->cname[vt->ncols] == NULL)
		return SQLITE_NOMEM;
	vt->type[vt->ncols++] = type;
	return SQLITE_OK;
}

static int prepare(struct bvtab *vt, sqlite3_stmt **st, const char *fmt)
{
	char *sql = sqlite3_mprintf(fmt, vt->schema, vt->name);
	int rc;

	if (sql == NULL)
		return SQLITE_NOMEM;
	rc = sqlite3_prepare_v3(vt->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
	sqlite3_free(sql);
	return rc;
}

int blockvtab_new(sqlite3 *db, int argc, const char *const *argv, struct bvtab **out,
		 char **err)
{
	struct bvtab *vt = sqlite3_malloc(sizeof(*vt));
	const char *rowid = NULL, *order = NULL, *group = NULL, *base = NULL;
	char *end;
	long long first = 0;
	int rc = SQLITE_NOMEM;

	*out = NULL;
	if (vt == NULL)
		return SQLITE_NOMEM;
	memset(vt, 0, sizeof(*vt));
	vt->db = db;
	vt->rowid_col = POS_COL;
	vt->order_col = -1;
	vt->group_col = -1;
	vt->zone_bno = -1;
	vt->schema = sqlite3_mprintf("%s", argv[1]);
	vt->name = sqlite3_mprintf("%s", argv[2]);
	if (vt->schema == NULL || vt->name == NULL)
		goto fail;
	for (int i = 3; i < argc; i++) {
		const char *a = argv[i];
		while (isspace((unsigned char)*a))
			a++;
		if (strncasecmp(a, "rowid=", 6) == 0)
			rowid = a + 6;
		else if (strncasecmp(a, "order=", 6) == 0)
			order = a + 6;
		else if (strncasecmp(a, "group=", 6) == 0)
			group = a + 6;
		else if (strncasecmp(a, "base=", 5) == 0)
			base = a + 5;
		else if ((rc = parse_col(vt, a, err)) != SQLITE_OK)
			goto fail;
	}
	rc = SQLITE_ERROR;
	if (vt->ncols == 0) {
		*err = sqlite3_mprintf("wsr_blocks: no columns");
		goto fail;
	}
	if (rowid != NULL &&
	    ((vt->rowid_col = col_index(vt, rowid, strlen(rowid))) < 0 ||
	     vt->type[vt->rowid_col] != CB_INT)) {
		*err = sqlite3_mprintf("wsr_blocks: rowid=%s is not an INTEGER column", rowid);
		goto fail;
	}
	if (order != NULL && ((vt->order_col = col_index(vt, order, strlen(order))) < 0 ||
			      vt->type[vt->order_col] != CB_INT)) {
		*err = sqlite3_mprintf("wsr_blocks: order=%s is not an INTEGER column", order);
		goto fail;
	}
	if (group != NULL && ((vt->group_col = col_index(vt, group, strlen(group))) < 0 ||
			      vt->type[vt->group_col] != CB_INT || vt->group_col == vt->order_col ||
			      vt->group_col == vt->rowid_col)) {
		*err = sqlite3_mprintf("wsr_blocks: group=%s is not another INTEGER column", group);
		goto fail;
	}
	if (base != NULL && (rowid != NULL || (first = strtoll(base, &end, 10), *end != '\0') ||
			     first < 0 || first > 1000000000)) {
		*err = sqlite3_mprintf("wsr_blocks: base=%s: not a position's rowid of 0..1e9 (and "
				       "no rowid= column)",
				       base);
		goto fail;
	}
	vt->start = sqlite3_malloc(sizeof(*vt->start));
	if (vt->start == NULL) {
		rc = SQLITE_NOMEM;
		goto fail;
	}
	vt->start[0] = first;
	*out = vt;
	return SQLITE_OK;
fail:
	vt_free(vt);
	return rc;
}

static int vt_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
		      sqlite3_vtab **out, char **err)
{
	struct bvtab *vt = NULL;
	char *decl;
	int rc;

	(void)aux;
	*out = NULL;
	if ((rc = blockvtab_new(db, argc, argv, &vt, err)) != SQLITE_OK)
		return rc;
	decl = sqlite3_mprintf("CREATE TABLE x(");
	for (uint32_t c = 0; c < vt->ncols && decl != NULL; c++) {
		char *d = sqlite3_mprintf("%s%s\"%w\" %s", decl, c > 0 ? ", " : "", vt->cname[c],
					  vt->type[c] == CB_INT ? "INTEGER" : "TEXT");
		sqlite3_free(decl);
		decl = d;
	}
	if (decl != NULL) {
		char *d = sqlite3_mprintf("%s)", decl);
		sqlite3_free(decl);
		decl = d;
	}
	if (decl == NULL) {
		vt_free(vt);
		return SQLITE_NOMEM;
	}
	rc = sqlite3_declare_vtab(db, decl);
	sqlite3_free(decl);
	if (rc != SQLITE_OK) {
		vt_free(vt);
		return rc;
	}
	/* it only reads its own tables: usable from views whatever trusted_schema */
	sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
	*out = &vt->base;
	return SQLITE_OK;
}

/*
 * The arguments of "CREATE VIRTUAL TABLE name USING wsr_blocks(a, b, ...)",
 * split at the commas outside parentheses and quotes, as SQLite gives them
 * to xConnect (argv[0..2]: module, schema, table). Into args (nargs at most
 * max); SQLITE_OK, or SQLITE_ERROR when sql is not such a statement.
 */
static int split_args(char *sql, char **args, int max, int *nargs)
{
	char *p = strstr(sql, "wsr_blocks");
	int depth = 0;
	char quote = 0;

	if (p == NULL || (p = strchr(p, '(')) == NULL)
		return SQLITE_ERROR;
	*nargs = 3;
	args[(*nargs)++] = ++p;
	for (; *p != '\0'; p++) {
		if (quote != 0) {
			if (*p == quote)
				quote = 0;
		} else if (*p == '\'' || *p == '"') {
			quote = *p;
		} else if (*p == '(') {
			depth++;
		} else if (*p == ')' && depth > 0) {
			depth--;
		} else if (*p == ')' || *p == ',') {
			int last = *p == ')';
			*p = '\0';
			if (last)
				return SQLITE_OK;
			if (*nargs == max)
				return SQLITE_ERROR;
			args[(*nargs)++] = p + 1;
		}
	}
	return SQLITE_ERROR;
}

int blockvtab_open_direct(sqlite3 *db, const char *name, struct bvtab **out, char **err)
{
	sqlite3_stmt *q = NULL;
	char *sql = NULL, *args[CB_MAX_COLS + 8];
	int nargs = 0, rc;

	*out = NULL;
	*err = NULL;
	rc = sqlite3_prepare_v2(db,
				"SELECT sql FROM main.sqlite_schema WHERE type = 'table' AND name = ?1",
				-1, &q, NULL);
	if (rc != SQLITE_OK) {
		*err = sqlite3_mprintf("%s: %s", name, sqlite3_errmsg(db));
		return rc;
	}
	sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW && sqlite3_column_text(q, 0) != NULL)
		sql = sqlite3_mprintf("%s", (const char *)sqlite3_column_text(q, 0));
	else if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		*err = sqlite3_mprintf("%s: no such table", name);
	else
		*err = sqlite3_mprintf("%s: %s", name, sqlite3_errmsg(db));
	sqlite3_finalize(q);
	if (*err != NULL)
		return rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_ERROR : rc;
	if (sql == NULL)
		return SQLITE_NOMEM;
	args[0] = "wsr_blocks";
	args[1] = "main";
	args[2] = (char *)name;
	if (split_args(sql, args, CB_MAX_COLS + 8, &nargs) != SQLITE_OK) {
		*err = sqlite3_mprintf("%s: not a wsr_blocks table", name);
		rc = SQLITE_ERROR;
	} else {
		rc = blockvtab_new(db, nargs, (const char *const *)args, out, err);
	}
	sqlite3_free(sql);
	if (rc == SQLITE_OK && (rc = blockvtab_zones_refresh(*out)) != SQLITE_OK) {
		*err = sqlite3_mprintf("%s", (*out)->base.zErrMsg != NULL ? (*out)->base.zErrMsg
									    : sqlite3_errstr(rc));
		blockvtab_free(*out);
		*out = NULL;
	}
	return rc;
}

void blockvtab_free(struct bvtab *vt)
{
	if (vt != NULL)
		sqlite3_free(vt->base.zErrMsg);
	vt_free(vt);
}

static int vt_disconnect(sqlite3_vtab *v)
{
	vt_free((struct bvtab *)v);
	return SQLITE_OK;
}

void blockvtab_cache_free(struct bvtab *vt)
{
	int k = 0;

	for (int i = 0; i < vt->ncache; i++) {
		if (vt->cache[i]->refs > 0) {
			vt->cache[k++] = vt->cache[i];
			continue;
		}
		cb_free(&vt->cache[i]->blk);
		sqlite3_free(vt->cache[i]->buf);
		sqlite3_free(vt->cache[i]);
	}
	vt->ncache = k;
	if (k == 0) {
		sqlite3_free(vt->cache);
		vt->cache = NULL;
	}
}

struct bgroup *blockvtab_group(struct bvtab *vt, int64_t value, bool add)
{
	for (uint32_t g = 0; g < vt->ngroups; g++)
		if (vt->groups[g].value == value)
			return &vt->groups[g];
	if (!add)
		return NULL;
	if (vt->ngroups == vt->capgroups) {
		uint32_t cap = vt->capgroups > 0 ? 2 * vt->capgroups : 8;
		struct bgroup *gs = sqlite3_realloc64(vt->groups, (uint64_t)cap * sizeof(*gs));
		if (gs == NULL)
			return NULL;
		vt->groups = gs;
		vt->capgroups = cap;
	}
	struct bgroup *g = &vt->groups[vt->ngroups++];
	memset(g, 0, sizeof(*g));
	g->value = value;
	return g;
}


const struct cb_zone *blockvtab_zone(struct bvtab *vt, uint32_t b)
{
	char msg[128];
	uint32_t n;
	int rc;

	if (vt->zone_bno == (int64_t)b)
		return vt->zone;
	vt->zone_bno = -1;
	sqlite3_bind_int64(vt->st_zone, 1, b);
	rc = sqlite3_step(vt->st_zone);
	if (rc != SQLITE_ROW) {
		if (rc == SQLITE_DONE)
			blockvtab_error(vt, SQLITE_CORRUPT, "%s_zone: block %u: missing", vt->name, b);
		else
			blockvtab_error(vt, rc, "%s_zone: %s", vt->name, sqlite3_errmsg(vt->db));
		sqlite3_reset(vt->st_zone);
		return NULL;
	}
	rc = cb_zone_decode(sqlite3_column_blob(vt->st_zone, 0),
			    (size_t)sqlite3_column_bytes(vt->st_zone, 0), vt->ncols, vt->type, &n,
			    vt->zone, msg, sizeof(msg));
	sqlite3_reset(vt->st_zone);
	if (rc < 0) {
		blockvtab_error(vt, SQLITE_CORRUPT, "%s_zone: block %u: %s", vt->name, b, msg);
		return NULL;
	}
	if (n != (uint32_t)(vt->start[b + 1] - vt->start[b])) {
		blockvtab_error(vt, SQLITE_CORRUPT, "%s_zone: block %u: %u rows, %lld when first read",
				vt->name, b, n, (long long)(vt->start[b + 1] - vt->start[b]));
		return NULL;
	}
	vt->zone_bno = b;
	return vt->zone;
}

/* Appends the set filter of zone z (its bytes in zone) to colset[c]; z->set_at then points there. */
static int keep_set(struct bvtab *vt, uint32_t c, struct cb_zone *z, const uint8_t *zone)
{
	uint64_t n = ((uint64_t)1 << z->set_log) / 8, at = vt->colset_n[c];

	if (at + n > UINT32_MAX)
		return SQLITE_TOOBIG;
	if (at + n > vt->colset_cap[c]) {
		uint64_t cap = vt->colset_cap[c] > 0 ? 2 * vt->colset_cap[c] : 65536;
		while (cap < at + n)
			cap *= 2;
		uint8_t *r = sqlite3_realloc64(vt->colset[c], cap);
		if (r == NULL)
			return SQLITE_NOMEM;
		vt->colset[c] = r;
		vt->colset_cap[c] = cap;
	}
	memcpy(vt->colset[c] + at, zone + z->set_at, (size_t)n);
	z->set_at = (uint32_t)at;
	vt->colset_n[c] = at + n;
	return SQLITE_OK;
}

const struct cb_zone *blockvtab_zone_col(struct bvtab *vt, uint32_t b, uint32_t c)
{
	struct cb_zone z[CB_MAX_COLS];
	char msg[128];
	int rc;

	if (b < vt->colz_n[c])
		return &vt->colz[c][b];
	struct cb_zone *a = sqlite3_realloc64(vt->colz[c], (uint64_t)vt->nz * sizeof(*a));
	if (a == NULL)
		return NULL;
	vt->colz[c] = a;
	/* the zone maps not yet read for c, in one pass (st_zones: id >= ?1) */
	sqlite3_bind_int64(vt->st_zones, 1, vt->colz_n[c]);
	while (vt->colz_n[c] < vt->nz && (rc = sqlite3_step(vt->st_zones)) == SQLITE_ROW) {
		uint32_t k = vt->colz_n[c], n;
		const uint8_t *zone = sqlite3_column_blob(vt->st_zones, 1);
		if (sqlite3_column_int64(vt->st_zones, 0) != (int64_t)k) {
			blockvtab_error(vt, SQLITE_CORRUPT, "%s_zone: block %u: missing", vt->name, k);
			break;
		}
		if (cb_zone_decode(zone, (size_t)sqlite3_column_bytes(vt->st_zones, 1), vt->ncols,
				   vt->type, &n, z, msg, sizeof(msg)) < 0) {
			blockvtab_error(vt, SQLITE_CORRUPT, "%s_zone: block %u: %s", vt->name, k, msg);
			break;
		}
		if (z[c].set_log != 0 && keep_set(vt, c, &z[c], zone) != SQLITE_OK)
			break;
		a[k] = z[c];
		vt->colz_n[c] = k + 1;
	}
	sqlite3_reset(vt->st_zones);
	return b < vt->colz_n[c] ? &a[b] : NULL;
}

/* The statements on the block tables (once), and the last block id (-1: none). */
static int last_block(struct bvtab *vt, int64_t *last)
{
	int rc;

	*last = -1;
	if (vt->st_last == NULL &&
	    ((rc = prepare(vt, &vt->st_last, "SELECT max(id) FROM \"%w\".\"%w_zone\"")) !=
		     SQLITE_OK ||
	     (rc = prepare(vt, &vt->st_zones,
			   "SELECT id, zone FROM \"%w\".\"%w_zone\" WHERE id >= ?1 ORDER BY id")) !=
		     SQLITE_OK ||
	     (rc = prepare(vt, &vt->st_zone,
			   "SELECT zone FROM \"%w\".\"%w_zone\" WHERE id = ?1")) != SQLITE_OK ||
	     (rc = prepare(vt, &vt->st_data,
			   "SELECT data FROM \"%w\".\"%w_block\" WHERE id = ?1")) != SQLITE_OK))
		return blockvtab_error(vt, rc, "%s: %s", vt->name, sqlite3_errmsg(vt->db));
	rc = sqlite3_step(vt->st_last);
	if (rc == SQLITE_ROW && sqlite3_column_type(vt->st_last, 0) != SQLITE_NULL)
		*last = sqlite3_column_int64(vt->st_last, 0);
	sqlite3_reset(vt->st_last);
	if (rc != SQLITE_ROW)
		return blockvtab_error(vt, rc, "%s: %s", vt->name, sqlite3_errmsg(vt->db));
	return SQLITE_OK;
}

int blockvtab_zones_refresh(struct bvtab *vt)
{
	int rc;
	int64_t last = -1;
	char msg[128];

	if ((rc = last_block(vt, &last)) != SQLITE_OK)
		return rc;
	if (last + 1 == (int64_t)vt->nz)
		return SQLITE_OK;
	if (last + 1 < (int64_t)vt->nz)
		vt->nz = 0; /* fewer blocks than before (rewritten): read them all again */
	if (vt->nz == 0) {
		memset(vt->colz_n, 0, sizeof(vt->colz_n));
		memset(vt->colset_n, 0, sizeof(vt->colset_n));
		for (uint32_t g = 0; g < vt->ngroups; g++)
			vt->groups[g].n = 0;
	}
	if (last >= (int64_t)UINT32_MAX - 1)
		return blockvtab_error(vt, SQLITE_CORRUPT, "%s_zone: block id %lld", vt->name,
				(long long)last);
	if ((uint32_t)(last + 1) > vt->capz) {
		uint32_t cap = (uint32_t)(last + 1) + 64;
		int64_t *start = sqlite3_realloc64(vt->start, ((uint64_t)cap + 1) * sizeof(*start));
		if (start == NULL)
			return SQLITE_NOMEM;
		vt->start = start;
		struct bkeys *keys = sqlite3_realloc64(vt->keys, (uint64_t)cap * sizeof(*keys));
		if (keys == NULL)
			return SQLITE_NOMEM;
		vt->keys = keys;
		vt->capz = cap;
	}
	vt->zone_bno = -1;
	sqlite3_bind_int64(vt->st_zones, 1, vt->nz);
	while ((rc = sqlite3_step(vt->st_zones)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(vt->st_zones, 0);
		uint32_t n = 0;
		const void *z = sqlite3_column_blob(vt->st_zones, 1);
		int zlen = sqlite3_column_bytes(vt->st_zones, 1);
		if (id != (int64_t)vt->nz || id > last) {
			rc = blockvtab_error(vt, SQLITE_CORRUPT, "%s_zone: block %lld where %u was expected",
				      vt->name, (long long)id, vt->nz);
			goto out;
		}
		struct cb_zone *zc = vt->zone;
		if (cb_zone_decode(z, (size_t)zlen, vt->ncols, vt->type, &n, zc, msg,
				   sizeof(msg)) < 0) {
			rc = blockvtab_error(vt, SQLITE_CORRUPT, "%s_zone: block %lld: %s", vt->name,
				      (long long)id, msg);
			goto out;
		}
		struct bgroup *g = NULL;
		if (vt->group_col >= 0) {
			if (zc[vt->group_col].nnull > 0 ||
			    zc[vt->group_col].min != zc[vt->group_col].max) {
				rc = blockvtab_error(vt, SQLITE_CORRUPT,
						     "%s_zone: block %lld holds more than one %s",
						     vt->name, (long long)id, vt->cname[vt->group_col]);
				goto out;
			}
			if ((g = blockvtab_group(vt, zc[vt->group_col].min, true)) == NULL) {
				rc = SQLITE_NOMEM;
				goto out;
			}
		}
		/* the block before in storage order (of its group, with group=) */
		int64_t prev = g != NULL ? (g->n > 0 ? (int64_t)g->blocks[g->n - 1] : -1)
					 : (int64_t)vt->nz - 1;
		struct bkeys *k = &vt->keys[vt->nz];
		memset(k, 0, sizeof(*k));
		if (vt->rowid_col >= 0) {
			k->min[0] = zc[vt->rowid_col].min;
			k->max[0] = zc[vt->rowid_col].max;
		}
		if (vt->order_col >= 0) {
			k->min[1] = zc[vt->order_col].min;
			k->max[1] = zc[vt->order_col].max;
		}
		if ((vt->rowid_col >= 0 && zc[vt->rowid_col].nnull > 0) ||
		    (vt->order_col >= 0 && zc[vt->order_col].nnull > 0) ||
		    (vt->nz > 0 && vt->rowid_col >= 0 && k->min[0] <= vt->keys[vt->nz - 1].max[0]) ||
		    (prev >= 0 && vt->order_col >= 0 && k->min[1] < vt->keys[prev].max[1])) {
			rc = blockvtab_error(vt, SQLITE_CORRUPT,
					     "%s_zone: block %lld is out of order with the one before",
					     vt->name, (long long)id);
			goto out;
		}
		if (g != NULL) {
			if (g->n == g->cap) {
				uint32_t cap = g->cap > 0 ? 2 * g->cap : 16;
				uint32_t *b = sqlite3_realloc64(g->blocks, (uint64_t)cap * sizeof(*b));
				if (b == NULL) {
					rc = SQLITE_NOMEM;
					goto out;
				}
				g->blocks = b;
				g->cap = cap;
			}
			g->blocks[g->n++] = vt->nz;
		}
		vt->start[vt->nz + 1] = vt->start[vt->nz] + n;
		vt->nz++;
	}
	if (rc != SQLITE_DONE)
		rc = blockvtab_error(vt, rc, "%s_zone: %s", vt->name, sqlite3_errmsg(vt->db));
	else if (vt->nz != (uint32_t)(last + 1))
		rc = blockvtab_error(vt, SQLITE_CORRUPT, "%s_zone: %u blocks, the last numbered %lld",
			      vt->name, vt->nz, (long long)last);
	else
		rc = SQLITE_OK;
out:
	sqlite3_reset(vt->st_zones);
	vt->zone_bno = -1;
	if (rc != SQLITE_OK) {
		vt->nz = 0;
		memset(vt->colz_n, 0, sizeof(vt->colz_n));
		memset(vt->colset_n, 0, sizeof(vt->colset_n));
		for (uint32_t g = 0; g < vt->ngroups; g++)
			vt->groups[g].n = 0;
	}
	return rc;
}

/* ---- planning ---- */

static bool key_col(const struct bvtab *vt, int c)
{
	return c == vt->rowid_col || (c >= 0 && c == vt->order_col);
}

static int vt_best_index(sqlite3_vtab *v, sqlite3_index_info *info)
{
	struct bvtab *vt = (struct bvtab *)v;
	double rows, cost;
	int argv = 0, nused = 0;
	bool unique = false, group_eq = false;
	char plan[512];
	size_t off = 0;
	uint64_t used = info->colUsed;

	if (vt->nz == 0)
		blockvtab_zones_refresh(vt); /* a failure shows at xFilter; plan with what is known */
	rows = vt->start[vt->nz] > vt->start[0] ? (double)(vt->start[vt->nz] - vt->start[0]) : 1.0;
	double per_block = vt->nz > 0 ? rows / vt->nz : 1.0;
	cost = rows;
	for (int i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];
		int col = c->iColumn < 0 ? vt->rowid_col : c->iColumn;
		uint8_t op;
		if (!c->usable || nused == 32 || off + 16 > sizeof(plan))
			continue;
		switch (c->op) {
		case SQLITE_INDEX_CONSTRAINT_EQ:
			op = F_EQ;
			break;
		case SQLITE_INDEX_CONSTRAINT_LT:
			op = F_LT;
			break;
		case SQLITE_INDEX_CONSTRAINT_LE:
			op = F_LE;
			break;
		case SQLITE_INDEX_CONSTRAINT_GT:
			op = F_GT;
			break;
		case SQLITE_INDEX_CONSTRAINT_GE:
			op = F_GE;
			break;
		case SQLITE_INDEX_CONSTRAINT_ISNULL:
			op = F_ISNULL;
			break;
		case SQLITE_INDEX_CONSTRAINT_ISNOTNULL:
			op = F_NOTNULL;
			break;
		default:
			continue;
		}
		if (col == POS_COL && (op == F_ISNULL || op == F_NOTNULL))
			continue;
		if (col >= 0 && vt->type[col] == CB_TEXT) {
			const char *coll = sqlite3_vtab_collation(info, i);
			if (op != F_EQ && op != F_ISNULL && op != F_NOTNULL)
				continue;
			if (op == F_EQ && coll != NULL && strcasecmp(coll, "BINARY") != 0)
				continue;
		}
		if (op == F_EQ && sqlite3_vtab_in(info, i, -1)) {
			if (key_col(vt, col) || col == POS_COL)
				continue; /* SQLite tests it; the keys' bounds need one value */
			sqlite3_vtab_in(info, i, 1);
			op = F_IN;
		}
		if (op != F_ISNULL && op != F_NOTNULL)
			info->aConstraintUsage[i].argvIndex = ++argv;
		info->aConstraintUsage[i].omit = 0;
		off += (size_t)snprintf(plan + off, sizeof(plan) - off, "%d,%d;", col, op);
		nused++;
		if (col >= 0)
			used |= col < 63 ? (uint64_t)1 << col : (uint64_t)1 << 63;
		/* the estimates: a bound on a key column a quarter, equality one block */
		if (col >= 0 && col == vt->group_col && op == F_EQ) {
			group_eq = true;
			double n = vt->ngroups > 0 ? vt->ngroups : 4;
			rows /= n;
			cost /= n;
		} else if (col == vt->rowid_col && op == F_EQ) {
			unique = true;
			rows = 1;
			cost = per_block < cost ? per_block : cost;
		} else if (key_col(vt, col) || col == POS_COL) {
			if (op == F_EQ) {
				rows = rows > 4 ? 4 : rows;
				cost = per_block < cost ? per_block : cost;
			} else {
				rows /= 4;
				cost = cost / 4 > per_block ? cost / 4 : per_block;
			}
		} else if (op == F_EQ || op == F_IN) {
			rows /= 10;
			cost *= 0.9;
		} else if (op == F_NOTNULL) {
			rows *= 0.75;
		} else if (op == F_ISNULL) {
			rows *= 0.25;
		} else {
			rows /= 3;
			cost *= 0.95;
		}
	}
	/* the storage order, forwards or backwards (with group=: of one group) */
	bool desc = false;
	if (info->nOrderBy > 0) {
		bool ok = vt->group_col < 0 || group_eq;
		desc = info->aOrderBy[0].desc;
		for (int k = 0; k < info->nOrderBy && ok; k++) {
			int col = info->aOrderBy[k].iColumn < 0 ? vt->rowid_col
								: info->aOrderBy[k].iColumn;
			if (col >= 0 && col == vt->group_col)
				continue; /* one value */
			if (info->aOrderBy[k].desc != desc)
				ok = false;
			else if (col == vt->rowid_col)
				break; /* unique: what follows cannot reorder */
			else if (col != vt->order_col || col < 0)
				ok = false;
		}
		if (ok)
			info->orderByConsumed = 1;
		else
			desc = false;
	}
	if (off + 24 > sizeof(plan))
		return SQLITE_ERROR;
	snprintf(plan + off, sizeof(plan) - off, "|%d|%llx", desc ? 1 : 0,
		 (unsigned long long)used);
	info->idxStr = sqlite3_mprintf("%s", plan);
	if (info->idxStr == NULL)
		return SQLITE_NOMEM;
	info->needToFreeIdxStr = 1;
	info->estimatedRows = rows < 1 ? 1 : (sqlite3_int64)rows;
	info->estimatedCost = 10 + (cost < 1 ? 1 : cost);
	if (unique)
		info->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
	return SQLITE_OK;
}

static const sqlite3_module module = {
	.iVersion = 0,
	.xCreate = vt_connect,
	.xConnect = vt_connect,
	.xBestIndex = vt_best_index,
	.xDisconnect = vt_disconnect,
	.xDestroy = vt_disconnect,
	.xOpen = blockscan_open,
	.xClose = blockscan_close,
	.xFilter = blockscan_filter,
	.xNext = blockscan_next,
	.xEof = blockscan_eof,
	.xColumn = blockscan_column,
	.xRowid = blockscan_rowid,
};

int blockvtab_register(sqlite3 *db)
{
	return sqlite3_create_module_v2(db, "wsr_blocks", &module, NULL, NULL);
}
