/*
 * test-store-stream.c - the HTML report's one-pass timeline
 * (viewer/store_stream.c) gives, byte for byte, the full store's answer
 * for the whole trace (store_load_runs, store_load_states,
 * store_timeline_json), with the same lanes: on random databases written
 * through the analyzer's own writer (rows.c) with runs and states of every
 * width around a pixel, empty and overlapping spans, rows that are not
 * runs or have no P, Ps and Ms known only from p, m or gomaxprocs, at
 * several widths in pixels; and that a database whose runs of a P come out
 * of order is answered from the full store (the pass says so) with the
 * same answer.
 *
 * Invariants: fixed seeds (a failure repeats); each database is a temporary
 * file, removed by its case. Concurrency: none.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "db.h"
#include "rows.h"
#include "store.h"
#include "wsrtest.h"

#define NP 3 /* P 2 only in g_interval: gomaxprocs is 2 */
#define NM 4

static uint64_t rng;
static char dbpath[64];

static uint64_t rnd(void)
{
	return wsrtest_xorshift(&rng);
}

/* A width around the pixel of a 2400 px view of about 4 ms: 0 to tens of pixels. */
static int64_t width(void)
{
	switch (rnd() % 6) {
	case 0:
		return 0;
	case 1:
		return (int64_t)(rnd() % 20);
	case 2:
		return (int64_t)(rnd() % 3000);
	case 3:
		return (int64_t)(rnd() % 40000);
	default:
		return (int64_t)(rnd() % 400);
	}
}

static int end_cmp(const void *a, const void *b)
{
	const struct row_g_interval *x = a, *y = b;
	if (x->end_ts != y->end_ts)
		return (x->end_ts > y->end_ts) - (x->end_ts < y->end_ts);
	if (x->p != y->p)
		return (x->p > y->p) - (x->p < y->p);
	return (x->start_ts > y->start_ts) - (x->start_ts < y->start_ts);
}

/*
 * A database of n runs per P (plus runnable rows and runs without a P), in
 * end order as the deriver writes them; disorder: two runs of P 1 whose
 * starts go backwards in storage order.
 */
static void make_db(uint64_t seed, int n, bool disorder)
{
	static const char *const states[] = {"idle", "running", "spinning", "syscall", "bogus"};
	struct wsr_err err;
	sqlite3 *db = NULL;
	struct rows *rw;
	int64_t start = 1000000, end = start;
	size_t nr = 0;
	struct row_g_interval *r = calloc((size_t)(NP * n * 2 + 8), sizeof(*r));

	rng = seed;
	snprintf(dbpath, sizeof(dbpath), "/tmp/wsr-test-store-stream-%d.db", (int)getpid());
	unlink(dbpath);
	err_init(&err);
	ASSERT(r != NULL);
	ASSERT_EQ(db_create(dbpath, &db, &err), 0);
	ASSERT((rw = rows_create(db, &err)) != NULL);
	for (int p = 0; p < NP; p++) {
		int64_t t = start + (int64_t)(rnd() % 500), prev_s = t;
		for (int i = 0; i < n; i++) {
			int64_t s = t + (rnd() % 4 == 0 ? width() : 0);
			/* now and then, a run that starts inside the one before it (and,
			 * as runs are stored in end order, ends after it) */
			if (i > 0 && rnd() % 25 == 0) {
				s = t - (int64_t)(rnd() % 50);
				s = s > prev_s ? s : prev_s;
			}
			int64_t d = width();
			d = d > t - s ? d : t - s;
			bool run = rnd() % 8 != 0;
			r[nr++] = (struct row_g_interval){
				.g = (int64_t)(rnd() % 1000), .state = run ? 1 : 0, .start_ts = s,
				.dur = d, .p = rnd() % 40 == 0 ? -1 : p, .m = p, .reason = ROW_NULL,
				.source = ROW_NULL, .cut = 0, .end_ts = s + d};
			if (run) {
				prev_s = s;
				t = r[nr - 1].end_ts;
			}
		}
		if (t > end)
			end = t;
	}
	qsort(r, nr, sizeof(*r), end_cmp);
	if (disorder) {
		/* a run of P 1 that starts before the run of P 1 stored before it */
		for (size_t i = 0; i < nr; i++) {
			if (r[i].p != 1 || r[i].state != 1)
				continue;
			for (size_t k = i + 1; k < nr; k++) {
				if (r[k].p != 1 || r[k].state != 1)
					continue;
				r[k].start_ts = r[i].start_ts - 10;
				r[k].dur = r[k].end_ts - r[k].start_ts;
				break;
			}
			break;
		}
	}
	for (size_t i = 0; i < nr; i++)
		ASSERT_EQ(rows_add(rw, ROWS_G_INTERVAL, &r[i], &err), 0);
	for (int p = 0; p < 2; p++) {
		int64_t t = start;
		for (int i = 0; i < n / 2; i++) {
			int64_t s = t + (rnd() % 3 == 0 ? width() : 0), e = s + width();
			struct row_p_state ps = {p, states[rnd() % 5], s, e, ROW_NULL, 0};
			ASSERT_EQ(rows_add(rw, ROWS_P_STATE, &ps, &err), 0);
			t = e;
		}
	}
	/* P 5 only in the p table, M 9 only in the m table */
	struct row_p p5 = {5, 0, 0, 0, 0, 0};
	ASSERT_EQ(rows_add(rw, ROWS_P, &p5, &err), 0);
	struct row_m m9 = {9, 100, start, ROW_NULL};
	ASSERT_EQ(rows_add(rw, ROWS_M, &m9, &err), 0);
	for (int m = 0; m < NM; m++) {
		int64_t t = start;
		for (int i = 0; i < n / 3; i++) {
			int64_t s = t + width(), e = s + width();
			struct row_m_state ms = {m, states[rnd() % 5], s, e, ROW_NULL, 0};
			ASSERT_EQ(rows_add(rw, ROWS_M_STATE, &ms, &err), 0);
			t = e;
		}
	}
	ASSERT_EQ(rows_flush(rw, &err), 0);
	rows_destroy(rw);
	/* odd seeds: spans before the trace's start and after its end (the window clips them) */
	ASSERT_EQ(db_meta_int(db, "start_ts", start + (seed % 2 ? 300 : 0), &err), 0);
	ASSERT_EQ(db_meta_int(db, "end_ts", end + (seed % 2 ? -2000 : 100), &err), 0);
	ASSERT_EQ(db_meta_int(db, "gomaxprocs", 2, &err), 0);
	ASSERT_EQ(db_meta_int(db, "schema_version", WSR_DB_VERSION, &err), 0);
	ASSERT_EQ(db_finish(db, &err), 0);
	sqlite3_close(db);
	free(r);
}

/* The lanes' ids of a store as text. */
static void ids(const struct store *st, struct sbuf *out)
{
	for (size_t i = 0; i < st->nps; i++)
		sb_printf(out, "p%lld ", (long long)st->p_runs[i].id);
	for (size_t i = 0; i < st->nms; i++)
		sb_printf(out, "m%lld ", (long long)st->m_states[i].id);
}

/* The pass's answer against the full store's at px; the pass's return. */
static int compare(int px)
{
	struct wsr_err err;
	struct store full, pass;
	struct sbuf a, b, ia, ib;
	sqlite3 *db = NULL;
	uint32_t nblocks = 0;

	err_init(&err);
	sb_init(&a);
	sb_init(&b);
	sb_init(&ia);
	sb_init(&ib);
	if (db_open_ro(dbpath, &db, &err) < 0) {
		char msg[WSR_ERR_LEN * 2];
		err_format(&err, msg, sizeof(msg));
		wsrtest_fail(__FILE__, __LINE__, "%s", msg);
	}
	ASSERT_EQ(store_init(&full, db, &err), 0);
	ASSERT_EQ(store_run_blocks(db, &nblocks, &err), 0);
	ASSERT_EQ(store_load_runs(&full, db, 0, nblocks, &err), 0);
	ASSERT_EQ(store_load_states(&full, db, &err), 0);
	store_timeline_json(&full, 0, full.duration_ns, px, &a);
	ASSERT_EQ(store_init(&pass, db, &err), 0);
	int rc = store_timeline_stream(&pass, db, px, &b, &err);
	if (rc < 0) {
		char msg[WSR_ERR_LEN * 2];
		err_format(&err, msg, sizeof(msg));
		wsrtest_fail(__FILE__, __LINE__, "store_timeline_stream: %s", msg);
	}
	ids(&full, &ia);
	ids(&pass, &ib);
	ASSERT(!a.oom && !b.oom);
	if (a.len != b.len || memcmp(a.buf, b.buf, a.len) != 0) {
		size_t k = 0;
		while (k < a.len && k < b.len && a.buf[k] == b.buf[k])
			k++;
		wsrtest_fail(__FILE__, __LINE__, "px %d: the answers differ at byte %zu of %zu/%zu: "
			     "full ...%.60s, pass ...%.60s", px, k, a.len, b.len,
			     a.buf + (k > 20 ? k - 20 : 0), b.buf + (k > 20 ? k - 20 : 0));
	}
	ASSERT_EQ(ia.len, ib.len);
	ASSERT(memcmp(ia.buf, ib.buf, ia.len) == 0);
	/* the lanes: gomaxprocs', p's, the runs', m's and m_state's */
	ASSERT(strstr(ib.buf, "p0 p1 p2 p5 m0 m1 m2 m3 m9") != NULL);
	store_free(&full);
	store_free(&pass);
	sqlite3_close(db);
	sb_free(&a);
	sb_free(&b);
	sb_free(&ia);
	sb_free(&ib);
	return rc;
}

WSR_TEST_TIMEOUT(store_stream_answers_as_the_full_store, 120)
{
	static const int widths[] = {1, 7, 300, 2400, 100000};
	for (uint64_t seed = 1; seed <= 4; seed++) {
		make_db(seed * 7919, 4000 + (int)seed * 1500, false);
		for (size_t k = 0; k < sizeof(widths) / sizeof(widths[0]); k++)
			ASSERT_EQ(compare(widths[k]), 0);
		unlink(dbpath);
	}
}

WSR_TEST_TIMEOUT(store_stream_out_of_order_takes_the_full_store, 60)
{
	make_db(4242, 3000, true);
	ASSERT_EQ(compare(2400), 1);
	ASSERT_EQ(compare(13), 1);
	unlink(dbpath);
}
