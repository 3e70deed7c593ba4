/*
 * perfetto.c - `wsr export --perfetto trace.db -o FILE`: the trace as a
 * Perfetto protobuf trace (TracePacket / TrackDescriptor / TrackEvent),
 * hand-encoded; ui.perfetto.dev and trace_processor open it.
 *
 * Why protobuf and not Chrome's Trace Event JSON: a steal happens while the
 * thief P is usually between G slices (spinning), so there is no enclosing
 * slice to bind a JSON flow event ("s"/"f") to, and Perfetto's JSON
 * importer drops flows it cannot bind (or binds them to the next slice,
 * which is the wrong G). TrackEvent instants carry flow_ids and
 * terminating_flow_ids themselves, so each steal is one arrow from an
 * instant on the victim's track to an instant on the thief's, at the
 * steal's timestamp, with nothing guessed.
 *
 * Layout: a root track "wsr" (explicit child order) with children
 *   P0..Pn-1 (G run slices named "G<id>", steal instants), the counter tracks
 *   (idle_ps, spinning_ms, runnable_gs, global_len; one value per change), and
 *   M0.. (state slices: running, spinning, syscall, parked, no_p).
 * Invariants:
 *   - Events are written in global timestamp order (a k-way merge of one
 *     cursor per P, per M, the counters and the steals); at equal times slice
 *     ends come before slice begins, then steals, then counters.
 *   - Per track, slices never overlap (the database tiles them); a slice
 *     starting before the previous one ends is clipped to its end.
 *   - Flow id k + 1 belongs to the steal with rowid k: its flow_ids end sits
 *     on the victim track, its terminating_flow_ids end on the thief track.
 *   - One packet sequence (id 1); the first packet clears incremental state.
 *   - All or nothing: FILE.tmp, then rename (outfile.c).
 *   - In the analyzer library: `wsr export` needs no viewer (and wsr-view
 *     --perfetto calls the same perfetto_write()).
 * Concurrency: single-threaded.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "db.h"
#include "outfile.h"
#include "perfetto.h"
#include "sbuf.h"

/* Field numbers of the messages in perfetto/protos/perfetto/trace. */
enum {
	TRACE_PACKET = 1,
	PKT_TIMESTAMP = 8,
	PKT_SEQ_ID = 10,
	PKT_TRACK_EVENT = 11,
	PKT_SEQ_FLAGS = 13,
	PKT_TRACK_DESCRIPTOR = 60,
	TD_UUID = 1,
	TD_NAME = 2,
	TD_PARENT = 5,
	TD_COUNTER = 8,
	TD_CHILD_ORDERING = 11,
	TD_RANK = 12,
	TE_DEBUG = 4,
	TE_TYPE = 9,
	TE_TRACK = 11,
	TE_NAME = 23,
	TE_COUNTER_VALUE = 30,
	TE_FLOW_IDS = 47,
	TE_TERM_FLOW_IDS = 48,
	DA_INT = 4,
	DA_NAME = 10,
};

enum {
	TYPE_SLICE_BEGIN = 1,
	TYPE_SLICE_END = 2,
	TYPE_INSTANT = 3,
	TYPE_COUNTER = 4
};

#define ROOT_UUID       1
#define P_UUID(p)       (0x100000ULL + (uint64_t)(p))
#define M_UUID(m)       (0x200000ULL + (uint64_t)(m))
#define COUNTER_UUID(k) (0x300000ULL + (uint64_t)(k))
#define NCOUNTERS       4

static const char *const counter_names[NCOUNTERS] = {"idle_ps", "spinning_ms", "runnable_gs",
						     "global_len"};

static void pb_varint(struct sbuf *b, uint64_t v)
{
	unsigned char tmp[10];
	size_t n = 0;

	do {
		tmp[n] = v & 0x7f;
		v >>= 7;
		if (v != 0)
			tmp[n] |= 0x80;
		n++;
	} while (v != 0);
	sb_add(b, tmp, n);
}

static void pb_u64(struct sbuf *b, int field, uint64_t v)
{
	pb_varint(b, (uint64_t)field << 3);
	pb_varint(b, v);
}

static void pb_fixed64(struct sbuf *b, int field, uint64_t v)
{
	unsigned char tmp[8];

	pb_varint(b, (uint64_t)field << 3 | 1);
	for (int i = 0; i < 8; i++)
		tmp[i] = (unsigned char)(v >> (8 * i));
	sb_add(b, tmp, 8);
}

static void pb_bytes(struct sbuf *b, int field, const void *data, size_t len)
{
	pb_varint(b, (uint64_t)field << 3 | 2);
	pb_varint(b, len);
	sb_add(b, data, len);
}

static void pb_str(struct sbuf *b, int field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

struct writer {
	FILE *f;
	struct sbuf pkt, te, tmp;
	int first;
	int64_t packets;
};

/* Writes the packet in w->pkt (sequence fields added here) and clears it. */
static void emit_packet(struct writer *w)
{
	struct sbuf framed;

	pb_u64(&w->pkt, PKT_SEQ_ID, 1);
	if (w->first) {
		pb_u64(&w->pkt, PKT_SEQ_FLAGS, 1); /* SEQ_INCREMENTAL_STATE_CLEARED */
		w->first = 0;
	}
	sb_init(&framed);
	pb_bytes(&framed, TRACE_PACKET, w->pkt.buf, w->pkt.len);
	if (!framed.oom)
		fwrite(framed.buf, 1, framed.len, w->f);
	sb_free(&framed);
	w->pkt.len = 0;
	w->packets++;
}

static void track(struct writer *w, uint64_t uuid, uint64_t parent, const char *name, int rank,
		  int counter)
{
	w->tmp.len = 0;
	pb_u64(&w->tmp, TD_UUID, uuid);
	pb_str(&w->tmp, TD_NAME, name);
	if (parent != 0) {
		pb_u64(&w->tmp, TD_PARENT, parent);
		pb_u64(&w->tmp, TD_RANK, (uint64_t)rank);
	} else {
		pb_u64(&w->tmp, TD_CHILD_ORDERING, 3); /* EXPLICIT */
	}
	if (counter)
		pb_bytes(&w->tmp, TD_COUNTER, "", 0);
	pb_bytes(&w->pkt, PKT_TRACK_DESCRIPTOR, w->tmp.buf, w->tmp.len);
	emit_packet(w);
}

/* Starts a TrackEvent in w->te; finish with event_end(). */
static void event_begin(struct writer *w, int type, uint64_t track_uuid)
{
	w->te.len = 0;
	pb_u64(&w->te, TE_TYPE, (uint64_t)type);
	pb_u64(&w->te, TE_TRACK, track_uuid);
}

static void event_end(struct writer *w, int64_t ts)
{
	pb_u64(&w->pkt, PKT_TIMESTAMP, (uint64_t)ts);
	pb_bytes(&w->pkt, PKT_TRACK_EVENT, w->te.buf, w->te.len);
	emit_packet(w);
}

static void debug_int(struct writer *w, const char *name, int64_t v)
{
	w->tmp.len = 0;
	pb_str(&w->tmp, DA_NAME, name);
	pb_u64(&w->tmp, DA_INT, (uint64_t)v);
	pb_bytes(&w->te, TE_DEBUG, w->tmp.buf, w->tmp.len);
}

enum cur_kind {
	CUR_P,
	CUR_M,
	CUR_COUNTERS,
	CUR_STEALS
};

struct cursor {
	enum cur_kind kind;
	int64_t id;
	sqlite3_stmt *q;
	int done;
	int phase; /* slice cursors: 0 = the begin is next, 1 = the end */
	int64_t s, e, v, prev_e;
	char name[32];
	int64_t last[NCOUNTERS];
	int have_last;
};

/* Fetches the next row; returns -1 on a database error. */
static int cursor_next(sqlite3 *db, struct cursor *c, struct wsr_err *err)
{
	int rc = sqlite3_step(c->q);

	if (rc == SQLITE_DONE) {
		c->done = 1;
		return 0;
	}
	if (rc != SQLITE_ROW) {
		err_push(err, "reading the database: %s", sqlite3_errmsg(db));
		return -1;
	}
	c->s = sqlite3_column_int64(c->q, 0);
	c->phase = 0;
	if (c->kind == CUR_P || c->kind == CUR_M) {
		c->e = sqlite3_column_int64(c->q, 1);
		if (c->s < c->prev_e)
			c->s = c->prev_e;
		if (c->e < c->s)
			c->e = c->s;
		c->prev_e = c->e;
		if (c->kind == CUR_P) {
			c->v = sqlite3_column_int64(c->q, 2);
		} else {
			const char *st = (const char *)sqlite3_column_text(c->q, 2);
			snprintf(c->name, sizeof(c->name), "%s", st != NULL ? st : "?");
		}
	}
	return 0;
}

/* The time of the cursor's next event and its order among equal times. */
static void cursor_key(const struct cursor *c, int64_t *ts, int *ord)
{
	switch (c->kind) {
	case CUR_P:
	case CUR_M:
		*ts = c->phase == 0 ? c->s : c->e;
		*ord = c->phase == 0 ? 1 : 0;
		break;
	case CUR_STEALS:
		*ts = c->s;
		*ord = 2;
		break;
	default:
		*ts = c->s;
		*ord = 3;
	}
}

/* Writes the cursor's next event(s) and advances it. */
static int cursor_emit(sqlite3 *db, struct writer *w, struct cursor *c, struct wsr_err *err)
{
	char name[64];

	switch (c->kind) {
	case CUR_P:
	case CUR_M: {
		uint64_t uuid = c->kind == CUR_P ? P_UUID(c->id) : M_UUID(c->id);
		if (c->phase == 0) {
			event_begin(w, TYPE_SLICE_BEGIN, uuid);
			if (c->kind == CUR_P) {
				snprintf(name, sizeof(name), "G%" PRId64, c->v);
				pb_str(&w->te, TE_NAME, name);
				debug_int(w, "g", c->v);
			} else {
				pb_str(&w->te, TE_NAME, c->name);
			}
			event_end(w, c->s);
			c->phase = 1;
			return 0;
		}
		event_begin(w, TYPE_SLICE_END, uuid);
		event_end(w, c->e);
		return cursor_next(db, c, err);
	}
	case CUR_STEALS: {
		int64_t thief = sqlite3_column_int64(c->q, 1);
		int64_t victim = sqlite3_column_int64(c->q, 2);
		int64_t n = sqlite3_column_int64(c->q, 3);
		uint64_t flow = (uint64_t)sqlite3_column_int64(c->q, 4) + 1;

		event_begin(w, TYPE_INSTANT, P_UUID(victim));
		snprintf(name, sizeof(name), "stolen by P%" PRId64, thief);
		pb_str(&w->te, TE_NAME, name);
		debug_int(w, "n", n);
		pb_fixed64(&w->te, TE_FLOW_IDS, flow);
		event_end(w, c->s);
		event_begin(w, TYPE_INSTANT, P_UUID(thief));
		snprintf(name, sizeof(name), "steal from P%" PRId64, victim);
		pb_str(&w->te, TE_NAME, name);
		debug_int(w, "n", n);
		pb_fixed64(&w->te, TE_TERM_FLOW_IDS, flow);
		event_end(w, c->s);
		return cursor_next(db, c, err);
	}
	default:
		for (int k = 0; k < NCOUNTERS; k++) {
			int64_t v = sqlite3_column_int64(c->q, k + 1);
			if (c->have_last && c->last[k] == v)
				continue;
			c->last[k] = v;
			event_begin(w, TYPE_COUNTER, COUNTER_UUID(k));
			pb_u64(&w->te, TE_COUNTER_VALUE, (uint64_t)v);
			event_end(w, c->s);
		}
		c->have_last = 1;
		return cursor_next(db, c, err);
	}
}

static int ids(sqlite3 *db, const char *sql, int64_t **out, size_t *n, struct wsr_err *err)
{
	sqlite3_stmt *q = NULL;
	int rc;

	*out = NULL;
	*n = 0;
	if (db_prepare(db, &q, sql, err) < 0) {
		return -1;
	}
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t *a = realloc(*out, (*n + 1) * sizeof(*a));
		if (a == NULL)
			break;
		a[(*n)++] = sqlite3_column_int64(q, 0);
		*out = a;
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE) {
		err_push(err, "reading ids: %s", sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

int perfetto_write(sqlite3 *db, const char *path, struct wsr_err *err)
{
	struct writer w = {.first = 1};
	struct cursor *cur = NULL;
	int64_t *ps = NULL, *ms = NULL;
	size_t nps = 0, nms = 0, ncur = 0;
	struct out_file of = {0};
	char name[64];
	int ret = -1;

	sb_init(&w.pkt);
	sb_init(&w.te);
	sb_init(&w.tmp);
	if (ids(db,
		"SELECT p FROM p UNION SELECT DISTINCT p FROM g_state "
		"WHERE state = 'running' AND p IS NOT NULL ORDER BY 1",
		&ps, &nps, err) < 0 ||
	    ids(db, "SELECT m FROM m UNION SELECT DISTINCT m FROM m_state ORDER BY 1", &ms, &nms,
		err) < 0)
		goto out;
	cur = calloc(nps + nms + 2, sizeof(*cur));
	if (cur == NULL) {
		err_push(err, "out of memory");
		goto out;
	}
	if (out_file_open(&of, path, err) < 0)
		goto out;
	w.f = of.f;
	track(&w, ROOT_UUID, 0, "wsr", 0, 0);
	for (size_t i = 0; i < nps; i++) {
		snprintf(name, sizeof(name), "P%" PRId64, ps[i]);
		track(&w, P_UUID(ps[i]), ROOT_UUID, name, (int)i, 0);
		cur[ncur].kind = CUR_P;
		cur[ncur].id = ps[i];
		/* a P's runs do not overlap (gstate.c), so their end order, the
		 * storage order of g_interval, is their start order: no sort */
		if (db_prepare(db, &cur[ncur].q,
			       "SELECT start_ts, end_ts, g FROM g_state "
			       "WHERE p = ?1 AND state = 'running' ORDER BY rowid",
			       err) < 0)
			goto out;
		sqlite3_bind_int64(cur[ncur].q, 1, ps[i]);
		ncur++;
	}
	for (int k = 0; k < NCOUNTERS; k++)
		track(&w, COUNTER_UUID(k), ROOT_UUID, counter_names[k], 1000 + k, 1);
	for (size_t i = 0; i < nms; i++) {
		snprintf(name, sizeof(name), "M%" PRId64, ms[i]);
		track(&w, M_UUID(ms[i]), ROOT_UUID, name, 2000 + (int)i, 0);
		cur[ncur].kind = CUR_M;
		cur[ncur].id = ms[i];
		if (db_prepare(db, &cur[ncur].q,
			       "SELECT start_ts, end_ts, state FROM m_state "
			       "WHERE m = ?1 ORDER BY start_ts",
			       err) < 0)
			goto out;
		sqlite3_bind_int64(cur[ncur].q, 1, ms[i]);
		ncur++;
	}
	cur[ncur].kind = CUR_COUNTERS;
	if (db_prepare(db, &cur[ncur].q,
		       "SELECT ts, idle_ps, spinning_ms, runnable_gs, global_len "
		       "FROM counters ORDER BY ts",
		       err) < 0)
		goto out;
	ncur++;
	cur[ncur].kind = CUR_STEALS;
	if (db_prepare(db, &cur[ncur].q,
		       "SELECT ts, thief, victim, n, rowid FROM steals ORDER BY ts, rowid",
		       err) < 0)
		goto out;
	ncur++;
	for (size_t i = 0; i < ncur; i++)
		if (cursor_next(db, &cur[i], err) < 0)
			goto out;
	/* The k-way merge: the cursor with the smallest (ts, order) goes next. */
	for (;;) {
		size_t best = ncur;
		int64_t bts = 0;
		int bord = 0;

		for (size_t i = 0; i < ncur; i++) {
			int64_t ts;
			int ord;
			if (cur[i].done)
				continue;
			cursor_key(&cur[i], &ts, &ord);
			if (best == ncur || ts < bts || (ts == bts && ord < bord)) {
				best = i;
				bts = ts;
				bord = ord;
			}
		}
		if (best == ncur)
			break;
		if (cursor_emit(db, &w, &cur[best], err) < 0)
			goto out;
	}
	if (w.pkt.oom || w.te.oom || w.tmp.oom) {
		err_push(err, "out of memory");
		goto out;
	}
	w.f = NULL;
	if (out_file_close(&of, true, err) < 0)
		goto out;
	ret = 0;
out:
	for (size_t i = 0; cur != NULL && i < ncur + 1 && i < nps + nms + 2; i++)
		sqlite3_finalize(cur[i].q);
	out_file_close(&of, false, err);
	free(cur);
	free(ps);
	free(ms);
	sb_free(&w.pkt);
	sb_free(&w.te);
	sb_free(&w.tmp);
	return ret;
}

enum {
	OPT_PERFETTO = CLI_LONG
};

static const struct cli_opt export_opts[] = {
	{"perfetto", OPT_PERFETTO, NULL,
	 "Perfetto's protobuf trace format (the only one, and the default)"},
	{"output", 'o', "FILE", "the file to write (through FILE.tmp, then renamed)"},
	{NULL, 0, NULL, NULL},
};

static const struct cli export_cli = {
	.prog = "wsr export",
	.synopsis = "wsr export [--perfetto] trace.db -o FILE",
	.about = "The trace database as a Perfetto trace: P and M tracks, G slices, steal\n"
		 "arrows, counters; open it in ui.perfetto.dev (see wsr-export(1)).",
	.opts = export_opts,
	.min_args = 1,
	.max_args = 1,
};

static int export_opt(void *ctx, int key, const char *arg)
{
	if (key == 'o')
		*(const char **)ctx = arg;
	return 0;
}

int cmd_export(int argc, char **argv)
{
	const char *out = NULL;
	struct wsr_err err;
	sqlite3 *db = NULL;
	int first, rc = cli_parse(&export_cli, argc, argv, export_opt, &out, &first);

	if (rc >= 0)
		return rc;
	if (out == NULL) {
		fprintf(stderr, "wsr export: error: no output file: -o FILE\n");
		cli_help(&export_cli, stderr);
		return 2;
	}
	err_init(&err);
	rc = db_open_ro(argv[first], &db, &err) < 0 || perfetto_write(db, out, &err) < 0;
	sqlite3_close(db);
	if (rc != 0) {
		err_print(&err, "wsr export", stderr);
		return err.exit_code;
	}
	return 0;
}
