/*
 * test-derive.c - unit tests of the one-pass derivation (analyzer/derive.c)
 * and of the cause chains, fed with synthetic records: no trace, no lttng.
 *
 * Invariants: each case builds its own database in a fresh temporary file
 *   (unlinked at once), so cases are independent and leave nothing behind.
 * Concurrency: single-threaded cases (the harness forks each one).
 */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "db.h"
#include "derive.h"
#include "err.h"
#include "rec.h"
#include "rows.h"
#include "wsrtest.h"

static sqlite3 *db;
static struct derive *dv;
static struct wsr_err err;

/* A fresh deriver on a fresh database; a test that sets up twice (two
 * traces) drops the first pair here, so nothing leaks (LeakSanitizer). */
static void setup(void)
{
	char path[] = "/tmp/wsr-test-derive-XXXXXX";
	int fd = mkstemp(path);

	derive_destroy(dv);
	sqlite3_close(db);
	dv = NULL;
	db = NULL;

	ASSERT(fd >= 0);
	close(fd);
	unlink(path);
	err_init(&err);
	ASSERT_EQ(db_create(path, &db, &err), 0);
	unlink(path);
	dv = derive_create(db, "synthetic", &err);
	ASSERT(dv != NULL);
	/* The DAG tests read every strand and edge (ingest --dag); the
	 * default, the critical path only, is dag_default_critical_path's. */
	derive_set_dag_rows(dv, true);
	struct wsr_rec s = {.type = REC_STREAM, .stream = 0, .extra_len = 8};
	ASSERT_EQ(derive_rec(dv, &s, "chan_0\0\0", &err), 0);
	struct wsr_rec s1 = {.type = REC_STREAM, .stream = 1, .extra_len = 8};
	ASSERT_EQ(derive_rec(dv, &s1, "chan_1\0\0", &err), 0);
}

/* One catalog event on stream 0 (or stream 1 with ev_on); payload fields
 * in catalog order: g (if the event has one), then a1, a2, a3. */
static int ev_on(int stream, int e, int64_t ts, int p, int m, ...)
{
	struct wsr_rec r = {.type = REC_EVENT, .ev = (uint8_t)e, .stream = (uint16_t)stream};
	const struct wsr_catalog_entry *c = &wsr_catalog[e];
	va_list ap;

	r.flags = REC_F_TS | REC_F_P | REC_F_M | REC_F_VPID;
	r.ts = ts;
	r.p = p;
	r.m = m;
	r.vpid = 42;
	va_start(ap, m);
	if (c->g != NULL) {
		r.g = va_arg(ap, int64_t);
		r.flags |= REC_F_G;
	}
	int64_t *a[3] = {&r.a1, &r.a2, &r.a3};
	for (int k = 0; k < 3; k++) {
		if (c->a[k] != NULL) {
			*a[k] = va_arg(ap, int64_t);
			r.flags |= (uint32_t)REC_F_A1 << k;
		}
	}
	va_end(ap);
	return derive_rec(dv, &r, NULL, &err);
}

#define EV(e, ts, p, m, ...) ASSERT_EQ(ev_on(0, e, ts, p, m, __VA_ARGS__), 0)
#define I(x)                 ((int64_t)(x))

static int64_t q1(const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v = INT64_MIN;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		wsrtest_fail(__FILE__, __LINE__, "%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void finish(void)
{
	int r = derive_finish(dv, &err);
	if (r != 0)
		err_print(&err, "derive_finish", stderr);
	ASSERT_EQ(r, 0);
	ASSERT_EQ(db_finish(db, &err), 0);
}

/* A G id created again while its G is alive (its exit lost) is a second G:
 * g_info has a row for each (since schema 7; a replaced row left the first
 * G's times out of g while g_interval kept its intervals), and each row's
 * times sum that G's intervals; a lookup by G finds both. */
WSR_TEST(derive_g_id_reused_has_a_row_per_g)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(2), I(256));
	EV(EV_P_IDLE, 101, 1, 0, I(1));
	EV(EV_G_CREATE, 110, 0, 0, I(5), I(0));
	EV(EV_RUNQPUT, 120, 0, 0, I(5), I(0), I(0), I(1));
	EV(EV_G_RUN, 130, 0, 0, I(5), I(1), I(0));
	EV(EV_G_STOP, 150, 0, 0, I(5), I(2));
	/* its exit is lost: the id comes back for another G */
	EV(EV_G_CREATE, 200, 0, 0, I(5), I(0));
	EV(EV_RUNQPUT, 210, 0, 0, I(5), I(0), I(0), I(1));
	EV(EV_G_RUN, 240, 0, 0, I(5), I(1), I(0));
	EV(EV_G_STOP, 300, 0, 0, I(5), I(WSR_REASON_EXIT));
	finish();
	ASSERT_EQ(q1("SELECT count(*) FROM g WHERE g = 5"), 2);
	ASSERT_EQ(q1("SELECT count(*) FROM g_info WHERE g = 5 AND ended IS NULL"), 1);
	ASSERT_EQ(q1("SELECT end_ts FROM g WHERE g = 5 AND end_ts IS NOT NULL"), 300);
	ASSERT_EQ(q1("SELECT run_ns FROM g WHERE g = 5 AND created_ts = 200"), 60);
	ASSERT_EQ(q1("SELECT run_ns FROM g WHERE g = 5 AND created_ts = 110"), 20);
	ASSERT_EQ(q1("SELECT sum(run_ns) FROM g WHERE g = 5"),
		  q1("SELECT sum(end_ts - start_ts) FROM g_state WHERE g = 5 AND state = 'running'"));
	ASSERT_EQ(q1("SELECT sum(runnable_ns + run_ns + waiting_ns + syscall_ns) FROM g WHERE g = 5"),
		  q1("SELECT sum(end_ts - start_ts) FROM g_state WHERE g = 5 AND state IN "
		     "('runnable', 'running', 'waiting', 'syscall')"));
}

/* Ring lengths are counted, not taken from runqput.qlen, which the owner
 * loads before its event's timestamp: here the owner read qlen = 3 before
 * a thief emptied its ring and runnext, and its event came after the steals
 * (seen at 8 Ps, issue 16). A put that finds runnext empty while the
 * reconstruction still has a G there means a thief took it and its steal
 * event is still to come: that steal must not clear the new runnext. */
WSR_TEST(derive_ring_counted_not_read)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(2), I(256));
	EV(EV_P_IDLE, 101, 1, 0, I(1));
	EV(EV_M_CREATE, 102, 0, 0, I(1));
	for (int g = 1; g <= 3; g++)
		EV(EV_G_CREATE, 110 + g, 0, 0, I(g), I(0));
	EV(EV_RUNQPUT, 121, 0, 0, I(1), I(0), I(0), I(1));
	EV(EV_RUNQPUT, 122, 0, 0, I(2), I(0), I(0), I(2));
	EV(EV_RUNQPUT, 123, 0, 0, I(3), I(1), I(0), I(2));
	EV(EV_P_BUSY, 200, 1, 0, I(0));
	EV(EV_STEAL, 210, 1, 1, I(0), I(1), I(0));
	EV(EV_G_RUN, 211, 1, 1, I(1), I(3), I(0));
	EV(EV_STEAL, 220, 1, 1, I(0), I(1), I(0));
	EV(EV_G_RUN, 221, 1, 1, I(2), I(3), I(0));
	EV(EV_STEAL, 230, 1, 1, I(0), I(1), I(1));
	EV(EV_G_RUN, 231, 1, 1, I(3), I(3), I(0));
	/* The owner's stale read: 2 in the ring plus the runnext it saw. */
	EV(EV_G_CREATE, 240, 0, 0, I(4), I(0));
	EV(EV_RUNQPUT, 241, 0, 0, I(4), I(1), I(0), I(3));
	/* G4 in runnext; a thief takes it, and the owner's next put (finding
	 * runnext empty: kicked 0) is in before that steal. */
	EV(EV_G_CREATE, 250, 0, 0, I(5), I(0));
	EV(EV_RUNQPUT, 251, 0, 0, I(5), I(1), I(0), I(0));
	EV(EV_STEAL, 252, 1, 1, I(0), I(1), I(1));
	EV(EV_G_RUN, 253, 1, 1, I(4), I(3), I(0));
	/* A full ring spills 128 and the new G to the global queue; the G's
	 * runqput after the spill adds nothing to the ring. */
	for (int g = 10; g < 10 + 256; g++)
		EV(EV_RUNQPUT, 300 + g, 0, 0, I(g), I(0), I(0), I(g - 9));
	EV(EV_RUNQ_SPILL, 600, 0, 0, I(129), I(129));
	EV(EV_RUNQPUT, 600, 0, 0, I(266), I(0), I(0), I(128));
	finish();
	ASSERT_EQ(q1("SELECT runq FROM p_counters WHERE p = 0 AND ts <= 241 ORDER BY ts DESC LIMIT 1"), 0);
	ASSERT_EQ(q1("SELECT runnext FROM p_counters WHERE p = 0 AND ts <= 241 ORDER BY ts DESC LIMIT 1"), 4);
	ASSERT_EQ(q1("SELECT runnext FROM p_counters WHERE p = 0 AND ts <= 252 ORDER BY ts DESC LIMIT 1"), 5);
	ASSERT_EQ(q1("SELECT runq FROM p_counters WHERE p = 0 AND ts <= 252 ORDER BY ts DESC LIMIT 1"), 0);
	ASSERT_EQ(q1("SELECT runq FROM p_counters WHERE p = 0 AND ts <= 565 ORDER BY ts DESC LIMIT 1"), 256);
	ASSERT_EQ(q1("SELECT runq FROM p_counters WHERE p = 0 AND ts <= 600 ORDER BY ts DESC LIMIT 1"), 128);
}

/* init, one G created, queued, run and exiting on P0; P1 idle. */
WSR_TEST(derive_g_lifecycle)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(2), I(256));
	EV(EV_P_IDLE, 101, 1, 0, I(1));
	EV(EV_G_CREATE, 110, 0, 0, I(1), I(0));
	EV(EV_RUNQPUT, 120, 0, 0, I(1), I(0), I(0), I(1));
	EV(EV_G_RUN, 130, 0, 0, I(1), I(1), I(0));
	EV(EV_G_STOP, 150, 0, 0, I(1), I(7));
	finish();
	ASSERT_EQ(q1("SELECT count(*) FROM g_state WHERE g = 1"), 2);
	ASSERT_EQ(q1("SELECT start_ts FROM g_state WHERE g = 1 AND state = 'runnable'"), 110);
	ASSERT_EQ(q1("SELECT end_ts FROM g_state WHERE g = 1 AND state = 'runnable'"), 130);
	ASSERT_EQ(q1("SELECT p FROM g_state WHERE g = 1 AND state = 'runnable'"), 0);
	ASSERT_EQ(q1("SELECT count(*) FROM g_state WHERE state = 'runnable' AND reason = 'create' "
		     "AND source = 'local'"),
		  1);
	ASSERT_EQ(q1("SELECT end_ts FROM g_state WHERE g = 1 AND state = 'running' AND reason = "
		     "'exit'"),
		  150);
	ASSERT_EQ(q1("SELECT end_ts FROM g WHERE g = 1"), 150);
	ASSERT_EQ(q1("SELECT run_ns FROM g WHERE g = 1"), 20);
	ASSERT_EQ(q1("SELECT runnable_ns FROM g WHERE g = 1"), 20);
	ASSERT_EQ(q1("SELECT latency_ns FROM sched_latency WHERE g = 1"), 20);
	/* P0 held by M0 from init to the end; P1 idle all along. */
	ASSERT_EQ(q1("SELECT count(*) FROM p_state WHERE p = 0"), 1);
	ASSERT_EQ(q1("SELECT start_ts FROM p_state WHERE p = 0 AND state = 'running' AND m = 0"),
		  100);
	ASSERT_EQ(q1("SELECT end_ts FROM p_state WHERE p = 1 AND state = 'idle'"), 150);
	/* Counters: the step function after each timestamp. */
	ASSERT_EQ(q1("SELECT runnable_gs FROM counters WHERE ts = 110"), 1);
	ASSERT_EQ(q1("SELECT running_gs FROM counters WHERE ts = 130"), 1);
	ASSERT_EQ(q1("SELECT runnable_gs FROM counters WHERE ts = 130"), 0);
	ASSERT_EQ(q1("SELECT running_gs FROM counters WHERE ts = 150"), 0);
	ASSERT_EQ(q1("SELECT idle_ps FROM counters WHERE ts = 101"), 1);
	ASSERT_EQ(q1("SELECT runq FROM p_counters WHERE p = 0 AND ts = 120"), 1);
	ASSERT_EQ(q1("SELECT runq FROM p_counters WHERE p = 0 AND ts = 130"), 0);
	ASSERT_EQ(q1("SELECT schedticks FROM p_counters WHERE p = 0 AND ts = 130"), 1);
	ASSERT_EQ(q1("SELECT n FROM event_counts WHERE name = 'g_run'"), 1);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'duration_ns'"), 50);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'gomaxprocs'"), 2);
}

/* A steal moves half the victim's ring; the G run at once is not counted twice. */
WSR_TEST(derive_steal_ring_lengths)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(2), I(256));
	EV(EV_P_IDLE, 101, 1, 0, I(1));
	EV(EV_M_CREATE, 102, 0, 0, I(1));
	for (int g = 1; g <= 4; g++) {
		EV(EV_G_CREATE, 110 + g, 0, 0, I(g), I(0));
		EV(EV_RUNQPUT, 110 + g, 0, 0, I(g), I(0), I(0), I(g));
	}
	EV(EV_P_BUSY, 200, 1, 0, I(0));
	EV(EV_M_UNPARK, 201, 1, 1, I(0), I(0));
	EV(EV_SPIN_START, 202, 1, 1, I(1), I(0));
	EV(EV_STEAL, 210, 1, 1, I(0), I(2), I(0));
	EV(EV_SPIN_STOP, 211, 1, 1, I(0), I(1));
	EV(EV_G_RUN, 212, 1, 1, I(1), I(3), I(0));
	EV(EV_G_RUN, 220, 0, 0, I(3), I(1), I(0));
	finish();
	ASSERT_EQ(q1("SELECT runq FROM p_counters WHERE p = 0 AND ts = 210"), 2);
	ASSERT_EQ(q1("SELECT runq FROM p_counters WHERE p = 1 AND ts = 210"), 1);
	ASSERT_EQ(q1("SELECT runq FROM p_counters WHERE p = 1 ORDER BY ts DESC LIMIT 1"), 1);
	ASSERT_EQ(q1("SELECT runq FROM p_counters WHERE p = 0 ORDER BY ts DESC LIMIT 1"), 1);
	ASSERT_EQ(q1("SELECT schedticks FROM p_counters WHERE p = 1 ORDER BY ts DESC LIMIT 1"), 1);
	ASSERT_EQ(q1("SELECT count(*) FROM steals WHERE thief = 1 AND victim = 0 AND n = 2"), 1);
	ASSERT_EQ(q1("SELECT gs FROM steal_graph WHERE thief = 1 AND victim = 0"), 2);
	ASSERT_EQ(q1("SELECT stolen FROM g WHERE g = 1"), 1);
	/* P1: idle, then spinning with M1, then running. */
	ASSERT_EQ(
		q1("SELECT count(*) FROM p_state WHERE p = 1 AND state = 'idle' AND end_ts = 200"),
		1);
	ASSERT_EQ(q1("SELECT count(*) FROM p_state WHERE p = 1 AND state = 'spinning' AND "
		     "start_ts = 202 AND end_ts = 211"),
		  1);
	ASSERT_EQ(q1("SELECT count(*) FROM m_state WHERE m = 1 AND state = 'spinning' AND "
		     "start_ts = 202 AND end_ts = 211"),
		  1);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'spins_found'"), 1);
	ASSERT_EQ(q1("SELECT count(*) FROM m"), 2);
	ASSERT_EQ(q1("SELECT threads FROM counters ORDER BY ts DESC LIMIT 1"), 2);
}

/* A G woken before its g_stop is runnable, not waiting, after the stop. */
WSR_TEST(derive_ready_before_stop)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(1), I(256));
	EV(EV_G_CREATE, 110, 0, 0, I(1), I(0));
	EV(EV_RUNQPUT, 110, 0, 0, I(1), I(0), I(0), I(1));
	EV(EV_G_RUN, 120, 0, 0, I(1), I(1), I(0));
	EV(EV_G_READY, 130, 0, 0, I(1), I(0));
	EV(EV_G_STOP, 140, 0, 0, I(1), I(3));
	EV(EV_G_RUN, 150, 0, 0, I(1), I(1), I(0));
	finish();
	ASSERT_EQ(q1("SELECT count(*) FROM g_state WHERE g = 1 AND state = 'waiting'"), 0);
	ASSERT_EQ(q1("SELECT start_ts FROM g_state WHERE g = 1 AND state = 'runnable' AND reason = "
		     "'ready'"),
		  140);
	ASSERT_EQ(q1("SELECT cut FROM g_state WHERE g = 1 ORDER BY start_ts DESC LIMIT 1"), 1);
	ASSERT_EQ(q1("SELECT end_ts IS NULL FROM g WHERE g = 1"), 1);
}

/* Blocking calls: G, M and P all go through syscall and back. */
WSR_TEST(derive_syscall)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(1), I(256));
	EV(EV_G_CREATE, 110, 0, 0, I(1), I(0));
	EV(EV_RUNQPUT, 110, 0, 0, I(1), I(0), I(0), I(1));
	EV(EV_G_RUN, 120, 0, 0, I(1), I(1), I(0));
	EV(EV_SYSCALL_ENTER, 130, 0, 0, I(1));
	EV(EV_SYSCALL_EXIT, 160, 0, 0, I(1), I(1));
	EV(EV_G_STOP, 170, 0, 0, I(1), I(7));
	finish();
	ASSERT_EQ(q1("SELECT end_ts - start_ts FROM g_state WHERE g = 1 AND state = 'syscall'"),
		  30);
	ASSERT_EQ(q1("SELECT end_ts - start_ts FROM p_state WHERE p = 0 AND state = 'syscall'"),
		  30);
	ASSERT_EQ(q1("SELECT end_ts - start_ts FROM m_state WHERE m = 0 AND state = 'syscall'"),
		  30);
	ASSERT_EQ(q1("SELECT syscall_ns FROM g WHERE g = 1"), 30);
	ASSERT_EQ(q1("SELECT syscalls FROM p WHERE p = 0"), 1);
}

/* Validation: what random payload bytes would decode into is rejected. */
WSR_TEST(derive_rejects_p_out_of_range)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(2), I(256));
	ASSERT_NE(ev_on(0, EV_G_CREATE, 110, 7, 0, I(1), I(0)), 0);
	ASSERT_EQ(err.exit_code, 2);
	ASSERT(strstr(err.msg[err.n - 1], "p = 7 is out of range") != NULL);
}

WSR_TEST(derive_rejects_bad_enum)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(1), I(256));
	EV(EV_G_CREATE, 110, 0, 0, I(1), I(0));
	ASSERT_NE(ev_on(0, EV_G_RUN, 120, 0, 0, I(1), I(77), I(0)), 0);
	ASSERT_EQ(err.exit_code, 2);
	ASSERT(strstr(err.msg[err.n - 1], "source = 77") != NULL);
}

WSR_TEST(derive_rejects_time_going_back)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(1), I(256));
	ASSERT_EQ(ev_on(1, EV_G_CREATE, 120, 0, 0, I(1), I(0)), 0);
	ASSERT_NE(ev_on(1, EV_G_CREATE, 110, 0, 0, I(2), I(0)), 0);
	ASSERT_EQ(err.exit_code, 2);
	ASSERT(strstr(err.msg[err.n - 1], "time goes backwards") != NULL);
}

WSR_TEST(derive_rejects_two_processes)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(1), I(256));
	struct wsr_rec r = {
		.type = REC_EVENT, .ev = EV_P_IDLE, .ts = 120, .p = 0, .m = 0, .vpid = 43, .a1 = 1};
	r.flags = REC_F_TS | REC_F_P | REC_F_M | REC_F_VPID | REC_F_A1;
	ASSERT_NE(derive_rec(dv, &r, NULL, &err), 0);
	ASSERT_EQ(err.exit_code, 2);
	ASSERT(strstr(err.msg[err.n - 1], "several processes") != NULL);
}

WSR_TEST(derive_vpid_filter)
{
	setup();
	derive_set_vpid(dv, 43);
	EV(EV_INIT, 100, -1, 0, I(1), I(256)); /* vpid 42: skipped */
	struct wsr_rec r = {.type = REC_EVENT,
			    .ev = EV_INIT,
			    .ts = 120,
			    .p = -1,
			    .m = 0,
			    .vpid = 43,
			    .a1 = 1,
			    .a2 = 256};
	r.flags = REC_F_TS | REC_F_P | REC_F_M | REC_F_VPID | REC_F_A1 | REC_F_A2;
	ASSERT_EQ(derive_rec(dv, &r, NULL, &err), 0);
	finish();
	ASSERT_EQ(q1("SELECT count(*) FROM events"), 1);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'other_process_events'"), 1);
}

/* The cause chain keeps the root cause and the outermost context. */
WSR_TEST(err_chain_keeps_root_cause)
{
	struct wsr_err e;
	char buf[8192];

	err_init(&e);
	err_push(&e, "root");
	for (int i = 0; i < 20; i++)
		err_push(&e, "ctx%d", i);
	err_input(&e, "outer");
	err_format(&e, buf, sizeof(buf));
	ASSERT_EQ(e.exit_code, 2);
	ASSERT(strncmp(buf, "outer: caused by: ctx19", 23) == 0);
	ASSERT(strstr(buf, "caused by: root") != NULL);
	ASSERT_EQ(e.n, WSR_ERR_MAX);
}

/* Like EV, with the emitting thread's id (vtid). */
static int ev_tid(int e, int64_t ts, int p, int m, int32_t tid, int64_t a1)
{
	struct wsr_rec r = {.type = REC_EVENT, .ev = (uint8_t)e, .stream = 0};

	r.flags = REC_F_TS | REC_F_P | REC_F_M | REC_F_VPID | REC_F_TID | REC_F_A1 | REC_F_A2;
	r.ts = ts;
	r.p = p;
	r.m = m;
	r.vpid = 42;
	r.tid = tid;
	r.a1 = a1;
	r.a2 = 0;
	return derive_rec(dv, &r, NULL, &err);
}

/* Issue 16, item 1: a G back from a blocking call that finds no P stops
 * with p = -1 (runtime/syscall.c, exitsyscall0) and is queued globally.
 * The trace is valid: the G stays in the call until that g_stop, then is
 * runnable. */
WSR_TEST(derive_syscall_exit_without_p)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(1), I(256));
	EV(EV_G_CREATE, 110, 0, 0, I(1), I(0));
	EV(EV_RUNQPUT, 120, 0, 0, I(1), I(0), I(0), I(1));
	EV(EV_G_RUN, 130, 0, 0, I(1), I(1), I(0));
	EV(EV_SYSCALL_ENTER, 140, 0, 0, I(1));
	EV(EV_RETAKE, 150, 0, 0, I(1), I(10));
	EV(EV_HANDOFF, 151, 0, 0, I(1), I(1));
	EV(EV_M_UNPARK, 152, 0, 1, I(0), I(-1));
	EV(EV_SYSCALL_EXIT, 160, -1, 0, I(1), I(0));
	EV(EV_G_STOP, 161, -1, 0, I(1), I(WSR_REASON_SYSCALL));
	EV(EV_GLOBRUNQ_PUT, 162, -1, 0, I(1), I(1));
	EV(EV_M_PARK, 163, -1, 0, I(1), I(-1));
	EV(EV_GLOBRUNQ_GET, 170, 0, 1, I(1), I(0));
	EV(EV_G_RUN, 171, 0, 1, I(1), I(WSR_SOURCE_GLOBAL), I(0));
	EV(EV_G_STOP, 180, 0, 1, I(1), I(WSR_REASON_EXIT));
	finish();
	ASSERT_EQ(q1("SELECT count(*) FROM g_state WHERE g = 1 AND state = 'syscall' AND "
		     "start_ts = 140 AND end_ts = 161 AND m = 0"),
		  1);
	ASSERT_EQ(q1("SELECT count(*) FROM g_state WHERE g = 1 AND state = 'runnable' AND "
		     "start_ts = 161 AND end_ts = 171 AND reason = 'syscall'"),
		  1);
	ASSERT_EQ(q1("SELECT count(*) FROM g_state WHERE g = 1 AND state = 'running' AND "
		     "start_ts = 171 AND end_ts = 180 AND p = 0 AND m = 1"),
		  1);
	ASSERT_EQ(q1("SELECT sum(end_ts - start_ts) FROM g_state WHERE g = 1"), 180 - 110);
}

/* Issue 16, item 1: back from a call on an idle P (fast = 0, p >= 0) the G
 * runs on at once, without a g_run: it is running there, not runnable. */
WSR_TEST(derive_syscall_exit_on_idle_p)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(2), I(256));
	EV(EV_P_IDLE, 101, 1, 0, I(1));
	EV(EV_G_CREATE, 110, 0, 0, I(1), I(0));
	EV(EV_RUNQPUT, 120, 0, 0, I(1), I(0), I(0), I(1));
	EV(EV_G_RUN, 130, 0, 0, I(1), I(1), I(0));
	EV(EV_SYSCALL_ENTER, 140, 0, 0, I(1));
	EV(EV_P_BUSY, 159, 1, 0, I(0));
	EV(EV_SYSCALL_EXIT, 160, 1, 0, I(1), I(0));
	EV(EV_G_STOP, 180, 1, 0, I(1), I(WSR_REASON_EXIT));
	finish();
	ASSERT_EQ(q1("SELECT count(*) FROM g_state WHERE g = 1 AND state = 'running' AND "
		     "start_ts = 160 AND end_ts = 180 AND p = 1"),
		  1);
	ASSERT_EQ(q1("SELECT count(*) FROM g_state WHERE g = 1 AND state = 'runnable' AND "
		     "start_ts >= 140"),
		  0);
}

/* Issue 16, item 2: a lost g_stop must not leave its G running beside the
 * next G of its P: the interval is cut where the next G runs, the G is
 * `unknown` until its next event, and no P runs two Gs at once. */
WSR_TEST(derive_lost_g_stop_is_cut)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(1), I(256));
	EV(EV_G_CREATE, 110, 0, 0, I(1), I(0));
	EV(EV_RUNQPUT, 111, 0, 0, I(1), I(0), I(0), I(1));
	EV(EV_G_CREATE, 112, 0, 0, I(2), I(0));
	EV(EV_RUNQPUT, 113, 0, 0, I(2), I(0), I(0), I(2));
	EV(EV_G_RUN, 130, 0, 0, I(1), I(1), I(0));
	/* G1's g_stop (block) at 140 is lost */
	EV(EV_G_RUN, 150, 0, 0, I(2), I(1), I(0));
	EV(EV_G_READY, 160, 0, 0, I(1), I(2));
	EV(EV_RUNQPUT, 161, 0, 0, I(1), I(1), I(0), I(0));
	EV(EV_G_STOP, 170, 0, 0, I(2), I(WSR_REASON_EXIT));
	EV(EV_G_RUN, 171, 0, 0, I(1), I(0), I(1));
	finish();
	ASSERT_EQ(q1("SELECT end_ts FROM g_state WHERE g = 1 AND state = 'running' AND "
		     "start_ts = 130"),
		  150);
	ASSERT_EQ(q1("SELECT cut FROM g_state WHERE g = 1 AND state = 'running' AND "
		     "start_ts = 130"),
		  1);
	ASSERT_EQ(q1("SELECT count(*) FROM g_state WHERE g = 1 AND state = 'unknown' AND "
		     "start_ts = 150 AND end_ts = 160"),
		  1);
	ASSERT_EQ(q1("SELECT count(*) FROM g_state a JOIN g_state b ON a.p = b.p AND a.g < b.g "
		     "AND a.state = 'running' AND b.state = 'running' AND a.start_ts < b.end_ts "
		     "AND b.start_ts < a.end_ts"),
		  0);
	ASSERT_EQ(q1("SELECT max(running_gs) FROM counters"), 1);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'loss_repairs'"), 1);
}

/* Issue 16, item 3: a woken M's spin_start is emitted by its waker (with
 * the waker's vtid): the M's tid comes from its own events, and an M is
 * created no later than its first interval. */
WSR_TEST(derive_m_tid_is_its_own)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(2), I(256));
	ASSERT_EQ(ev_tid(EV_P_IDLE, 101, 1, 0, 1000, 1), 0);
	ASSERT_EQ(ev_tid(EV_M_CREATE, 110, 0, 0, 1000, 1), 0);
	ASSERT_EQ(ev_tid(EV_P_BUSY, 111, 1, 0, 1000, 0), 0);
	ASSERT_EQ(ev_tid(EV_SPIN_START, 112, 1, 1, 1000, 1), 0); /* by M0 for M1 */
	ASSERT_EQ(ev_tid(EV_SPIN_STOP, 130, 1, 1, 2000, 0), 0);  /* M1 itself */
	/* an older trace: spin_start for M2 first, m_create after it */
	ASSERT_EQ(ev_tid(EV_SPIN_START, 140, -1, 2, 1000, 1), 0);
	ASSERT_EQ(ev_tid(EV_M_CREATE, 141, 0, 0, 1000, 2), 0);
	ASSERT_EQ(ev_tid(EV_SPIN_STOP, 150, -1, 2, 3000, 0), 0);
	finish();
	ASSERT_EQ(q1("SELECT tid FROM m WHERE m = 0"), 1000);
	ASSERT_EQ(q1("SELECT tid FROM m WHERE m = 1"), 2000);
	ASSERT_EQ(q1("SELECT tid FROM m WHERE m = 2"), 3000);
	ASSERT_EQ(q1("SELECT created_ts FROM m WHERE m = 1"), 110);
	ASSERT_EQ(q1("SELECT count(*) FROM m JOIN m_state s USING (m) WHERE s.start_ts < "
		     "m.created_ts"),
		  0);
}

/* Issue 16, item 4: schedticks count the runs that do not inherit the time
 * slice, as the runtime's schedtick does. */
WSR_TEST(derive_schedticks_skip_inherited)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(1), I(256));
	EV(EV_G_CREATE, 110, 0, 0, I(1), I(0));
	EV(EV_RUNQPUT, 111, 0, 0, I(1), I(0), I(0), I(1));
	EV(EV_G_RUN, 120, 0, 0, I(1), I(WSR_SOURCE_LOCAL), I(0));
	EV(EV_G_CREATE, 121, 0, 0, I(2), I(1));
	EV(EV_RUNQPUT, 122, 0, 0, I(2), I(1), I(0), I(0));
	EV(EV_G_STOP, 123, 0, 0, I(1), I(WSR_REASON_EXIT));
	EV(EV_G_RUN, 124, 0, 0, I(2), I(WSR_SOURCE_RUNNEXT), I(1));
	EV(EV_G_STOP, 125, 0, 0, I(2), I(WSR_REASON_EXIT));
	finish();
	ASSERT_EQ(q1("SELECT schedticks FROM p WHERE p = 0"), 1);
	ASSERT_EQ(q1("SELECT schedticks FROM p_counters WHERE p = 0 ORDER BY ts DESC LIMIT 1"), 1);
}

/* A schedtrace record as the decoder writes it. */
static int sched_ev(int64_t ts, const char *json)
{
	struct wsr_rec r = {.type = REC_EVENT, .ev = EV_SCHEDTRACE, .stream = 0};

	r.flags = REC_F_TS | REC_F_P | REC_F_M | REC_F_VPID;
	r.ts = ts;
	r.p = r.m = -1;
	r.vpid = 42;
	r.extra_len = (uint32_t)strlen(json) + 1;
	return derive_rec(dv, &r, json, &err);
}

/* Issue 16, item 5: each snapshot field is compared with the
 * reconstruction when the runtime read it; a difference is explained only
 * by an event that raced with the read (here a spill emitted after the
 * read by an M whose change preceded it), and otherwise reported. */
WSR_TEST(derive_schedtrace_fields_racing)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(1), I(256));
	EV(EV_G_CREATE, 110, 0, 0, I(1), I(0));
	EV(EV_RUNQPUT, 111, 0, 0, I(1), I(0), I(0), I(1));
	EV(EV_G_CREATE, 112, 0, 0, I(2), I(0));
	EV(EV_RUNQPUT, 113, 0, 0, I(2), I(0), I(0), I(2));
	/* M0's next event: its stores are done (no runqput races any more) */
	EV(EV_STEAL_SCAN, 115, 0, 0, I(1), I(0), I(0));
	/* read at 120..130: ring 2 (agrees); idleprocs 0 */
	ASSERT_EQ(sched_ev(131, "{\"gomaxprocs\":1,\"idleprocs\":0,\"threads\":1,"
				"\"spinningthreads\":0,\"needspinning\":0,\"idlethreads\":0,"
				"\"runqueue\":0,\"runq\":[2],\"schedticks\":[0],\"read_ts\":[120]}"),
		  0);
	/* read at 140: ring 1, but the G that left it runs only at 150 (its
	 * CAS came before the read: explained by that g_run) */
	ASSERT_EQ(sched_ev(141, "{\"gomaxprocs\":1,\"idleprocs\":0,\"threads\":1,"
				"\"spinningthreads\":0,\"needspinning\":0,\"idlethreads\":0,"
				"\"runqueue\":0,\"runq\":[1],\"schedticks\":[1],\"read_ts\":[140]}"),
		  0);
	EV(EV_G_RUN, 150, 0, 0, I(1), I(WSR_SOURCE_LOCAL), I(0));
	/* read at 160: ring 5, which nothing explains */
	ASSERT_EQ(sched_ev(161, "{\"gomaxprocs\":1,\"idleprocs\":0,\"threads\":1,"
				"\"spinningthreads\":0,\"needspinning\":0,\"idlethreads\":0,"
				"\"runqueue\":0,\"runq\":[5],\"schedticks\":[1],\"read_ts\":[160]}"),
		  0);
	finish();
	ASSERT_EQ(q1("SELECT count(*) FROM schedtrace_fields WHERE snap_ts = 131 AND rt = recon"),
		  7);
	ASSERT_EQ(q1("SELECT recon FROM schedtrace_fields WHERE snap_ts = 141 AND field = 'runq'"),
		  2);
	ASSERT_EQ(q1("SELECT explained FROM schedtrace_fields WHERE snap_ts = 141 AND field = "
		     "'runq'"),
		  1);
	ASSERT_EQ(q1("SELECT e.name = 'g_run' AND e.ts = 150 FROM schedtrace_fields f, "
		     "json_each(f.racing) j JOIN events e ON e.id = j.value WHERE f.snap_ts = 141 "
		     "AND f.field = 'runq'"),
		  1);
	ASSERT_EQ(q1("SELECT explained FROM schedtrace_fields WHERE snap_ts = 141 AND field = "
		     "'schedticks'"),
		  1);
	ASSERT_EQ(q1("SELECT explained FROM schedtrace_fields WHERE snap_ts = 161 AND field = "
		     "'runq'"),
		  0);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'schedtrace_unexplained'"), 1);
	ASSERT_EQ(q1("SELECT explained FROM schedtrace_check WHERE ts = 161"), 0);
	ASSERT_EQ(q1("SELECT explained FROM schedtrace_check WHERE ts = 141"), 1);
}

/* An M that took a G from its ring (no event yet) wakes another M before its
 * g_run: the wakeup's events (p_busy here) come between the change and its
 * event, so a snapshot read between them is explained by the g_run (rule (c)
 * of schedcheck.c sets them aside; seen at 2 Ps, a timer's G taken by a
 * spinning M that the kernel then descheduled). */
WSR_TEST(derive_schedtrace_change_before_wakeup)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(2), I(256));
	EV(EV_P_IDLE, 101, 1, 0, I(1));
	EV(EV_G_CREATE, 110, 0, 0, I(1), I(0));
	EV(EV_RUNQPUT, 111, 0, 0, I(1), I(0), I(0), I(1));
	EV(EV_G_CREATE, 112, 0, 0, I(2), I(0));
	EV(EV_RUNQPUT, 113, 0, 0, I(2), I(0), I(0), I(2));
	EV(EV_STEAL_SCAN, 115, 0, 0, I(1), I(0), I(0));
	/* M0 takes G1 from its ring at ~135; the snapshot reads ring 1 at 140 */
	ASSERT_EQ(sched_ev(141, "{\"gomaxprocs\":2,\"idleprocs\":1,\"threads\":1,"
				"\"spinningthreads\":0,\"needspinning\":0,\"idlethreads\":0,"
				"\"runqueue\":0,\"runq\":[1,0],\"schedticks\":[0,0],"
				"\"read_ts\":[140,140]}"),
		  0);
	EV(EV_P_BUSY, 145, 1, 0, I(0));
	EV(EV_G_RUN, 150, 0, 0, I(1), I(WSR_SOURCE_LOCAL), I(0));
	finish();
	ASSERT_EQ(q1("SELECT recon FROM schedtrace_fields WHERE snap_ts = 141 AND field = 'runq' "
		     "AND p = 0"),
		  2);
	ASSERT_EQ(q1("SELECT explained FROM schedtrace_fields WHERE snap_ts = 141 AND field = "
		     "'runq' AND p = 0"),
		  1);
	ASSERT_EQ(q1("SELECT e.name = 'g_run' AND e.ts = 150 FROM schedtrace_fields f, "
		     "json_each(f.racing) j JOIN events e ON e.id = j.value WHERE f.snap_ts = 141 "
		     "AND f.field = 'runq' AND f.p = 0"),
		  1);
}

/* A lost g_stop (of G1) and a lost g_run (of G2): G2's syscall_enter on the
 * same P and M is the first sign, and G1's running interval ends there, cut,
 * not at the next event that moves the P (seen in fidelity-io's lossy run
 * under deque and tokio: a G "running" on a P in its syscall state). */
WSR_TEST(derive_lost_g_stop_cut_by_another_gs_syscall)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(1), I(256));
	EV(EV_G_CREATE, 110, 0, 0, I(1), I(0));
	EV(EV_RUNQPUT, 111, 0, 0, I(1), I(0), I(0), I(1));
	EV(EV_G_CREATE, 112, 0, 0, I(2), I(0));
	EV(EV_RUNQPUT, 113, 0, 0, I(2), I(0), I(0), I(2));
	EV(EV_G_RUN, 120, 0, 0, I(1), I(WSR_SOURCE_LOCAL), I(0));
	EV(EV_SYSCALL_ENTER, 200, 0, 0, I(2));
	EV(EV_SYSCALL_EXIT, 300, 0, 0, I(2), I(1));
	EV(EV_P_IDLE, 400, 0, 0, I(1));
	finish();
	ASSERT_EQ(q1("SELECT end_ts FROM g_state WHERE g = 1 AND state = 'running'"), 200);
	ASSERT_EQ(q1("SELECT cut FROM g_state WHERE g = 1 AND state = 'running'"), 1);
	ASSERT_EQ(q1("SELECT count(*) FROM g_state g, p_state p WHERE g.state = 'running' AND "
		     "p.p = 0 AND p.state = 'syscall' AND g.start_ts < p.end_ts AND "
		     "p.start_ts < g.end_ts"),
		  0);
}

/* A lost spin_stop: M0 spun, then (its spin_stop and G1's g_run lost) comes
 * back from a call with G1 on P0. The M runs G1, it is not spinning: the
 * flag goes with the call, a loss repair (seen in fidelity-io's lossy run
 * under deque: a G running on a P whose M was "spinning"). */
WSR_TEST(derive_lost_spin_stop_cut_by_a_call)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(1), I(256));
	EV(EV_G_CREATE, 110, 0, 0, I(1), I(0));
	EV(EV_SPIN_START, 150, 0, 0, I(1), I(0));
	EV(EV_SYSCALL_EXIT, 200, 0, 0, I(1), I(0));
	EV(EV_G_STOP, 300, 0, 0, I(1), I(7));
	EV(EV_P_IDLE, 400, 0, 0, I(1));
	finish();
	ASSERT_EQ(q1("SELECT count(*) FROM m_state WHERE m = 0 AND state = 'spinning' AND "
		     "end_ts > 200"),
		  0);
	ASSERT_EQ(q1("SELECT spinning_ms FROM counters WHERE ts = 200"), 0);
	ASSERT_GE(q1("SELECT value FROM meta WHERE key = 'loss_repairs'"), 1);
}

/* The runtime changes nmspinning before it emits spin_start or spin_stop, so
 * an M descheduled between the two emits a count that other Ms have moved
 * since: here M1 stopped spinning before M0 started (M0's spin_start says
 * 1), and M1's spin_stop, emitted later, says 0 while M0 spins. The count
 * is the number of spinning Ms (seen: a spin_stop 4.3 ms late under the
 * tokio policy, and a snapshot's spinningthreads = 1 left unexplained). */
WSR_TEST(derive_spinning_count_is_the_spinning_ms)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(2), I(256));
	EV(EV_P_IDLE, 101, 1, 0, I(1));
	EV(EV_SPIN_START, 110, 0, 1, I(1), I(0));
	EV(EV_SPIN_START, 120, 0, 0, I(1), I(0));
	EV(EV_SPIN_STOP, 200, -1, 1, I(0), I(0));
	ASSERT_EQ(sched_ev(300, "{\"gomaxprocs\":2,\"idleprocs\":1,\"threads\":2,"
				"\"spinningthreads\":1,\"needspinning\":0,\"idlethreads\":0,"
				"\"runqueue\":0,\"runq\":[0,0],\"schedticks\":[0,0],"
				"\"read_ts\":[290,295]}"),
		  0);
	finish();
	ASSERT_EQ(q1("SELECT spinning_ms FROM counters WHERE ts = 120"), 2);
	ASSERT_EQ(q1("SELECT spinning_ms FROM counters WHERE ts = 200"), 1);
	ASSERT_EQ(q1("SELECT recon FROM schedtrace_fields WHERE snap_ts = 300 AND field = "
		     "'spinningthreads'"),
		  1);
	ASSERT_EQ(q1("SELECT explained FROM schedtrace_fields WHERE snap_ts = 300 AND field = "
		     "'spinningthreads'"),
		  1);
}

/* n rounds of G1 put on P0's ring and run from it: 2n ring changes and n
 * schedticks, from ts on, 4 ns a round. */
static void put_run_rounds(int64_t ts, int n)
{
	for (int i = 0; i < n; i++, ts += 4) {
		EV(EV_RUNQPUT, ts, 0, 0, I(1), I(0), I(0), I(1));
		EV(EV_G_RUN, ts + 1, 0, 0, I(1), I(WSR_SOURCE_LOCAL), I(0));
		EV(EV_G_STOP, ts + 2, 0, 0, I(1), I(WSR_REASON_YIELD));
	}
}

/* A snapshot whose reader was descheduled mid-read races with every change
 * in its window, here 120 on the ring and 60 on schedticks (seen: 467 us,
 * more than the 48 candidates the check once kept, and the field was then
 * reported unexplained). Every such field is still checked: a value some
 * subset reaches is explained, one outside [all the -1s, all the +1s] is
 * not. */
WSR_TEST(derive_schedtrace_many_racing)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(1), I(256));
	EV(EV_G_CREATE, 110, 0, 0, I(1), I(0));
	put_run_rounds(200, 60);
	ASSERT_EQ(sched_ev(500, "{\"gomaxprocs\":1,\"idleprocs\":0,\"threads\":1,"
				"\"spinningthreads\":0,\"needspinning\":0,\"idlethreads\":0,"
				"\"runqueue\":0,\"runq\":[1],\"schedticks\":[30],\"read_ts\":[190]}"),
		  0);
	put_run_rounds(600, 60);
	ASSERT_EQ(sched_ev(900, "{\"gomaxprocs\":1,\"idleprocs\":0,\"threads\":1,"
				"\"spinningthreads\":0,\"needspinning\":0,\"idlethreads\":0,"
				"\"runqueue\":0,\"runq\":[61],\"schedticks\":[100],"
				"\"read_ts\":[590]}"),
		  0);
	finish();
	ASSERT_EQ(q1("SELECT explained FROM schedtrace_fields WHERE snap_ts = 500 AND field = "
		     "'runq'"),
		  1);
	ASSERT_EQ(q1("SELECT json_array_length(racing) FROM schedtrace_fields WHERE snap_ts = 500 "
		     "AND field = 'runq'"),
		  1);
	ASSERT_EQ(q1("SELECT explained FROM schedtrace_fields WHERE snap_ts = 500 AND field = "
		     "'schedticks'"),
		  1);
	ASSERT_EQ(q1("SELECT count(*) FROM schedtrace_fields f, json_each(f.racing) j JOIN events "
		     "e ON e.id = j.value WHERE f.snap_ts = 500 AND f.field = 'schedticks' AND "
		     "e.name = 'g_run' AND e.ts > 190 AND e.ts <= 500"),
		  30);
	ASSERT_EQ(q1("SELECT explained FROM schedtrace_fields WHERE snap_ts = 900 AND field = "
		     "'runq'"),
		  0);
	ASSERT_EQ(q1("SELECT explained FROM schedtrace_fields WHERE snap_ts = 900 AND field = "
		     "'schedticks'"),
		  1);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'schedtrace_unexplained'"), 1);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'schedtrace_uncheckable'"), 0);
}

/* A read window older than the history the check keeps per quantity (512
 * changes) cannot be checked: explained is NULL, counted apart from the
 * unexplained, and the snapshot's schedtrace_check row is NULL too. */
WSR_TEST(derive_schedtrace_window_older_than_history)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(1), I(256));
	EV(EV_G_CREATE, 110, 0, 0, I(1), I(0));
	put_run_rounds(200, 300);
	ASSERT_EQ(sched_ev(2000, "{\"gomaxprocs\":1,\"idleprocs\":0,\"threads\":1,"
				 "\"spinningthreads\":0,\"needspinning\":0,\"idlethreads\":0,"
				 "\"runqueue\":0,\"runq\":[0],\"schedticks\":[300],"
				 "\"read_ts\":[150]}"),
		  0);
	finish();
	ASSERT_EQ(q1("SELECT explained IS NULL FROM schedtrace_fields WHERE snap_ts = 2000 AND "
		     "field = 'runq'"),
		  1);
	ASSERT_EQ(q1("SELECT explained FROM schedtrace_fields WHERE snap_ts = 2000 AND field = "
		     "'schedticks'"),
		  1);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'schedtrace_unexplained'"), 0);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'schedtrace_uncheckable'"), 1);
	ASSERT_EQ(q1("SELECT explained IS NULL FROM schedtrace_check WHERE ts = 2000"), 1);
}

/* Gs readied by the poller keep the source netpoll wherever they went: the
 * first ran directly (no queue), the others went to the global queue and a
 * global get moved one of them into the ring: its run empties the ring. */
WSR_TEST(derive_netpoll_gs_through_global_get)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(1), I(256));
	for (int g = 1; g <= 3; g++) {
		int64_t t = 100 + 10 * g;
		EV(EV_G_CREATE, t, 0, 0, I(g), I(0));
		EV(EV_RUNQPUT, t + 1, 0, 0, I(g), I(0), I(0), I(1));
		EV(EV_G_RUN, t + 2, 0, 0, I(g), I(WSR_SOURCE_LOCAL), I(0));
		EV(EV_G_STOP, t + 3, 0, 0, I(g), I(WSR_REASON_IO));
	}
	EV(EV_NETPOLL, 200, 0, 0, I(3), I(0));
	EV(EV_G_READY, 201, 0, 0, I(1), I(0));
	EV(EV_G_READY, 202, 0, 0, I(2), I(0));
	EV(EV_GLOBRUNQ_PUT, 203, 0, 0, I(2), I(1));
	EV(EV_G_READY, 204, 0, 0, I(3), I(0));
	EV(EV_GLOBRUNQ_PUT, 205, 0, 0, I(3), I(2));
	EV(EV_G_RUN, 210, 0, 0, I(1), I(WSR_SOURCE_NETPOLL), I(0));
	EV(EV_G_STOP, 211, 0, 0, I(1), I(WSR_REASON_EXIT));
	EV(EV_GLOBRUNQ_GET, 220, 0, 0, I(2), I(0));
	EV(EV_G_RUN, 221, 0, 0, I(2), I(WSR_SOURCE_NETPOLL), I(0));
	EV(EV_G_STOP, 222, 0, 0, I(2), I(WSR_REASON_EXIT));
	EV(EV_G_RUN, 230, 0, 0, I(3), I(WSR_SOURCE_NETPOLL), I(0));
	EV(EV_G_STOP, 231, 0, 0, I(3), I(WSR_REASON_EXIT));
	finish();
	ASSERT_EQ(q1("SELECT runq FROM p_counters WHERE p = 0 AND ts = 220"), 1);
	ASSERT_EQ(q1("SELECT runq FROM p_counters WHERE p = 0 ORDER BY ts DESC LIMIT 1"), 0);
}

/* Losses, P and M side: a P held by an M that runs a G is not idle (its
 * p_busy was lost), and that M is not spinning (its spin_stop was lost). */
WSR_TEST(derive_lost_p_busy_and_spin_stop)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(2), I(256));
	EV(EV_P_IDLE, 101, 1, 0, I(1));
	EV(EV_SPIN_START, 110, -1, 1, I(1), I(0));
	/* lost: p_busy of P1 by M1, spin_stop of M1 */
	EV(EV_G_CREATE, 120, 0, 0, I(1), I(0));
	EV(EV_RUNQPUT, 121, 0, 0, I(1), I(0), I(0), I(1));
	EV(EV_G_RUN, 130, 1, 1, I(1), I(WSR_SOURCE_STEAL), I(0));
	EV(EV_G_STOP, 140, 1, 1, I(1), I(WSR_REASON_EXIT));
	finish();
	ASSERT_EQ(q1("SELECT count(*) FROM p_state WHERE p = 1 AND state = 'running' AND "
		     "start_ts <= 130 AND end_ts >= 140"),
		  1);
	ASSERT_EQ(q1("SELECT count(*) FROM m_state WHERE m = 1 AND state = 'running' AND "
		     "start_ts <= 130 AND end_ts >= 140"),
		  1);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'loss_repairs'"), 2);
}

/* Losses: an M seen holding another P no longer runs the G it ran on its
 * old one (that G's g_stop was lost). */
WSR_TEST(derive_lost_g_stop_m_moved)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(2), I(256));
	EV(EV_P_IDLE, 101, 1, 0, I(1));
	EV(EV_G_CREATE, 110, 0, 0, I(1), I(0));
	EV(EV_RUNQPUT, 111, 0, 0, I(1), I(0), I(0), I(1));
	EV(EV_G_RUN, 120, 0, 0, I(1), I(WSR_SOURCE_LOCAL), I(0));
	/* lost: G1's g_stop, p_idle of P0, p_busy of P1 */
	EV(EV_STEAL_SCAN, 130, 1, 0, I(4), I(1), I(0));
	finish();
	ASSERT_EQ(q1("SELECT end_ts FROM g_state WHERE g = 1 AND state = 'running'"), 130);
	ASSERT_EQ(q1("SELECT cut FROM g_state WHERE g = 1 AND state = 'running'"), 1);
	ASSERT_EQ(q1("SELECT count(*) FROM g_state WHERE g = 1 AND state = 'unknown'"), 1);
}

/* A waker lowers nmidle before the woken M's m_unpark; when the trace ends
 * first (a crash), that M's m_park explains the snapshot's lower count. An
 * M that emits again explains nothing that way. */
WSR_TEST(derive_schedtrace_unpark_never_emitted)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(2), I(256));
	EV(EV_P_IDLE, 101, 1, 0, I(1));
	EV(EV_M_CREATE, 102, 0, 0, I(1));
	EV(EV_M_PARK, 110, -1, 1, I(1), I(-1));
	ASSERT_EQ(sched_ev(121, "{\"gomaxprocs\":2,\"idleprocs\":1,\"threads\":2,"
				"\"spinningthreads\":0,\"needspinning\":0,\"idlethreads\":0,"
				"\"runqueue\":0,\"runq\":[0,0],\"schedticks\":[0,0],"
				"\"read_ts\":[120,120]}"),
		  0);
	EV(EV_STEAL_SCAN, 130, 0, 0, I(4), I(1), I(0)); /* M0 goes on: nothing owed */
	ASSERT_EQ(sched_ev(141, "{\"gomaxprocs\":2,\"idleprocs\":1,\"threads\":2,"
				"\"spinningthreads\":0,\"needspinning\":0,\"idlethreads\":2,"
				"\"runqueue\":0,\"runq\":[0,0],\"schedticks\":[0,0],"
				"\"read_ts\":[140,140]}"),
		  0);
	finish();
	ASSERT_EQ(q1("SELECT explained FROM schedtrace_fields WHERE snap_ts = 121 AND field = "
		     "'idlethreads'"),
		  1);
	ASSERT_EQ(q1("SELECT e.name = 'm_park' FROM schedtrace_fields f, json_each(f.racing) j "
		     "JOIN events e ON e.id = j.value WHERE f.snap_ts = 121 AND f.field = "
		     "'idlethreads'"),
		  1);
	ASSERT_EQ(q1("SELECT explained FROM schedtrace_fields WHERE snap_ts = 141 AND field = "
		     "'idlethreads'"),
		  0);
}

/* Losses: an M whose P is handed to another M (here by sysmon, after a
 * syscall_enter that was lost) no longer runs the G it ran on that P. */
WSR_TEST(derive_lost_g_stop_p_handed_off)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(1), I(256));
	EV(EV_G_CREATE, 110, 0, 0, I(1), I(0));
	EV(EV_RUNQPUT, 111, 0, 0, I(1), I(0), I(0), I(1));
	EV(EV_G_RUN, 120, 0, 0, I(1), I(WSR_SOURCE_LOCAL), I(0));
	/* lost: G1's syscall_enter */
	EV(EV_RETAKE, 130, 0, 0, I(1), I(20));
	EV(EV_HANDOFF, 131, 0, 0, I(1), I(1));
	finish();
	ASSERT_EQ(q1("SELECT end_ts FROM g_state WHERE g = 1 AND state = 'running'"), 130);
	ASSERT_EQ(q1("SELECT cut FROM g_state WHERE g = 1 AND state = 'running'"), 1);
	ASSERT_EQ(q1("SELECT count(*) FROM g_state a JOIN m_state b ON a.m = b.m AND "
		     "a.state = 'running' AND b.state != 'running' AND a.start_ts < b.end_ts "
		     "AND b.start_ts < a.end_ts"),
		  0);
}

/* Sysmon's retake of P0 from M0 (in a call with G1); P0 goes idle and M0,
 * back from its call, takes it off the idle list and runs G1 on it. late:
 * the handoff comes after M0's events on P0, as a runtime before
 * 2026-12-02 could emit it; else where the runtime emits it now (before
 * p_idle). Either way G1's run is whole and nothing was repaired; a late
 * handoff applied took P0 from M0 again and cut G1 (fidelity-io under TSan). */
static void handoff_trace(bool late)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(1), I(256));
	EV(EV_G_CREATE, 110, 0, 0, I(1), I(0));
	EV(EV_RUNQPUT, 111, 0, 0, I(1), I(0), I(0), I(1));
	EV(EV_G_RUN, 120, 0, 0, I(1), I(1), I(0));
	EV(EV_SYSCALL_ENTER, 130, 0, 0, I(1));
	EV(EV_RETAKE, 150, 0, 0, I(1), I(20));
	if (!late)
		EV(EV_HANDOFF, 151, 0, 0, I(1), I(-1));
	EV(EV_P_IDLE, 152, 0, -1, I(1));
	EV(EV_P_BUSY, 160, 0, 0, I(0));
	EV(EV_SYSCALL_EXIT, 161, 0, 0, I(1), I(0));
	if (late)
		EV(EV_HANDOFF, 170, 0, 0, I(1), I(-1));
	EV(EV_G_STOP, 200, 0, 0, I(1), I(7));
	finish();
	ASSERT_EQ(q1("SELECT count(*) FROM g_state WHERE cut = 1 AND end_ts < 200"), 0);
	ASSERT_EQ(q1("SELECT start_ts FROM g_state WHERE g = 1 AND state = 'running' AND "
		     "end_ts = 200"),
		  161);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'loss_repairs'"), 0);
	ASSERT_EQ(q1("SELECT count(*) FROM p_state WHERE p = 0 AND m = 0 AND state = 'running' "
		     "AND start_ts <= 161 AND end_ts >= 200"),
		  1);
}

WSR_TEST(derive_handoff_before_the_next_holder)
{
	handoff_trace(false);
}

WSR_TEST(derive_late_handoff_changes_nothing)
{
	handoff_trace(true);
}

/*
 * The work/span DAG (analyzer/dag.c), built by derive_finish(). Times are
 * exact, so every figure is too. G1 (main) on P0 spawns G2 at 200 and G3
 * at 300, blocks on a waitgroup at 400; P1 steals G2 (320..1320), which
 * wakes G1 at 1300; G3 runs on P0 410..910; G1 runs again 1330..1400.
 * Strands: G1 [130,200] [200,300] [300,400] [1330,1400], G2 [320,1300]
 * [1300,1320], G3 [410,910]: work 1840. Span: G1 [130,200] -> G2
 * [320,1300] -> G1 [1330,1400] = 70 + 980 + 70 = 1120. Some P runs no G
 * before 320, in [400,410) and after 910, so the burdens are: spawn of G2
 * 120 (200..320), spawn of G3 30 (300..320, 400..410), the wake 30; the
 * burdened span is 70 + 120 + 980 + 30 + 70 = 1270.
 */
WSR_TEST(dag_fork_join_exact)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(2), I(256));
	EV(EV_P_IDLE, 101, 1, 0, I(1));
	EV(EV_G_CREATE, 110, 0, 0, I(1), I(0));
	EV(EV_RUNQPUT, 111, 0, 0, I(1), I(0), I(0), I(1));
	EV(EV_G_RUN, 130, 0, 0, I(1), I(1), I(0));
	EV(EV_G_CREATE, 200, 0, 0, I(2), I(1));
	EV(EV_RUNQPUT, 201, 0, 0, I(2), I(0), I(0), I(1));
	EV(EV_G_CREATE, 300, 0, 0, I(3), I(1));
	EV(EV_RUNQPUT, 301, 0, 0, I(3), I(0), I(0), I(1));
	EV(EV_P_BUSY, 310, 1, 1, I(0));
	EV(EV_G_RUN, 320, 1, 1, I(2), I(3), I(0));
	EV(EV_G_STOP, 400, 0, 0, I(1), I(9));
	EV(EV_G_RUN, 410, 0, 0, I(3), I(1), I(0));
	EV(EV_G_STOP, 910, 0, 0, I(3), I(7));
	EV(EV_G_READY, 1300, 1, 1, I(1), I(2));
	EV(EV_RUNQPUT, 1301, 1, 1, I(1), I(0), I(0), I(1));
	EV(EV_G_STOP, 1320, 1, 1, I(2), I(7));
	EV(EV_G_RUN, 1330, 1, 1, I(1), I(1), I(0));
	EV(EV_G_STOP, 1400, 1, 1, I(1), I(7));
	finish();
	ASSERT_EQ(q1("SELECT count(*) FROM dag_strand"), 7);
	ASSERT_EQ(q1("SELECT sum(end_ts - start_ts) FROM dag_strand"), 1840);
	ASSERT_EQ(q1("SELECT count(*) FROM dag_edge"), 7);
	ASSERT_EQ(q1("SELECT count(*) FROM dag_edge WHERE src >= dst"), 0);
	ASSERT_EQ(q1("SELECT max(span_ns) FROM dag_strand"), 1120);
	ASSERT_EQ(q1("SELECT max(burdened_ns) FROM dag_strand"), 1270);
	ASSERT_EQ(q1("SELECT count(*) FROM dag_strand WHERE critical = 1 AND start_ts IN "
		     "(130, 320, 1330)"),
		  3);
	ASSERT_EQ(q1("SELECT count(*) FROM dag_strand WHERE critical = 1"), 3);
	ASSERT_EQ(q1("SELECT delay_ns * 1000 + burden_ns FROM dag_edge e JOIN dag_strand s ON "
		     "s.id = e.dst WHERE e.kind = 'spawn' AND s.g = 2"),
		  120 * 1000 + 120);
	ASSERT_EQ(q1("SELECT delay_ns * 1000 + burden_ns FROM dag_edge e JOIN dag_strand s ON "
		     "s.id = e.dst WHERE e.kind = 'spawn' AND s.g = 3"),
		  110 * 1000 + 30);
	ASSERT_EQ(q1("SELECT stolen FROM dag_edge e JOIN dag_strand s ON s.id = e.dst WHERE "
		     "e.kind = 'spawn' AND s.g = 2"),
		  1);
	ASSERT_EQ(q1("SELECT count(*) FROM dag_edge WHERE kind = 'wake' AND relation = 'parent' "
		     "AND delay_ns = 30 AND burden_ns = 30 AND ts = 1300"),
		  1);
	ASSERT_EQ(q1("SELECT burden_ns FROM dag_edge e JOIN dag_strand s ON s.id = e.dst WHERE "
		     "e.kind = 'continue' AND s.start_ts = 1330"),
		  0);
	ASSERT_EQ(q1("SELECT round(value * 1e6) FROM meta WHERE key = 'work_ms'"), 1840);
	ASSERT_EQ(q1("SELECT round(value * 1e6) FROM meta WHERE key = 'span_ms'"), 1120);
	ASSERT_EQ(q1("SELECT round(value * 1e6) FROM meta WHERE key = 'burdened_span_ms'"), 1270);
	ASSERT_EQ(q1("SELECT round(value * 1e6) FROM meta WHERE key = 'observed_ms'"), 1270);
	/* Whole delays: G2's spawn 120, the wake 30 -> 70 + 120 + 980 + 30 + 70. */
	ASSERT_EQ(q1("SELECT round(value * 1e6) FROM meta WHERE key = 'delayed_span_ms'"), 1270);
	ASSERT_EQ(q1("SELECT round(value * 1e6) FROM meta WHERE key = 'lower_bound_ms'"), 1120);
	ASSERT_EQ(q1("SELECT round(value * 1e6) FROM meta WHERE key = 'greedy_bound_ms'"), 920 + 1120);
	ASSERT_EQ(q1("SELECT round(value * 1e6) FROM meta WHERE key = 'external_wait_ms'"), 0);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'dag_fully_strict'"), 1);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'dag_roots'"), 1);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'dag_spawn_edges'"), 2);
	/* G1 130..1400, G2 320..1320, G3 410..910: three stacks at once. */
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'peak_live_stacks'"), 3);
}

/* A sleep ended by a runtime thread (by_g = 0): no wake edge, the wait is
 * external; a wake between siblings makes the DAG neither strict nor fully
 * strict. G1 spawns G2 and G3 (parent 1), G2 wakes G3 (a sibling). */
WSR_TEST(dag_runtime_wake_and_sibling)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(1), I(256));
	EV(EV_G_CREATE, 110, 0, 0, I(1), I(0));
	EV(EV_RUNQPUT, 111, 0, 0, I(1), I(0), I(0), I(1));
	EV(EV_G_RUN, 130, 0, 0, I(1), I(1), I(0));
	EV(EV_G_STOP, 200, 0, 0, I(1), I(2));
	EV(EV_G_READY, 500, -1, -1, I(1), I(0));
	EV(EV_RUNQPUT, 501, 0, 0, I(1), I(0), I(0), I(1));
	EV(EV_G_RUN, 520, 0, 0, I(1), I(1), I(0));
	EV(EV_G_CREATE, 530, 0, 0, I(2), I(1));
	EV(EV_RUNQPUT, 531, 0, 0, I(2), I(0), I(0), I(1));
	EV(EV_G_CREATE, 540, 0, 0, I(3), I(1));
	EV(EV_RUNQPUT, 541, 0, 0, I(3), I(0), I(0), I(1));
	EV(EV_G_STOP, 600, 0, 0, I(1), I(7));
	EV(EV_G_RUN, 610, 0, 0, I(3), I(1), I(0));
	EV(EV_G_STOP, 620, 0, 0, I(3), I(3));
	EV(EV_G_RUN, 630, 0, 0, I(2), I(1), I(0));
	EV(EV_G_READY, 640, 0, 0, I(3), I(2));
	EV(EV_RUNQPUT, 641, 0, 0, I(3), I(0), I(0), I(1));
	EV(EV_G_STOP, 650, 0, 0, I(2), I(7));
	EV(EV_G_RUN, 660, 0, 0, I(3), I(1), I(0));
	EV(EV_G_STOP, 670, 0, 0, I(3), I(7));
	finish();
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'dag_wakes_runtime'"), 1);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'dag_wake_edges'"), 1);
	ASSERT_EQ(q1("SELECT count(*) FROM dag_edge WHERE kind = 'wake' AND relation = 'other'"),
		  1);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'dag_fully_strict'"), 0);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'dag_strict'"), 0);
	/* G1 waited 200..500 on the timer; runnable 500..520 with P0 idle. */
	ASSERT_EQ(q1("SELECT round(value * 1e6) FROM meta WHERE key = 'external_wait_ms'"), 300);
	ASSERT_EQ(q1("SELECT burden_ns FROM dag_edge e JOIN dag_strand s ON s.id = e.dst WHERE "
		     "e.kind = 'continue' AND s.start_ts = 520"),
		  20);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'dag_roots'"), 1);
	/* G1 exits at 600 before G3 starts at 610; G2 and G3 overlap. */
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'peak_live_stacks'"), 2);
}

/* Zero-length strands at the same nanosecond: G5 spawns G3 and both run
 * and stop at ts 200. Sorted by time, G3's strand came first and the edge
 * went backwards, so until schema 4 the trace was refused; strands are now
 * numbered as they end, which the events' order makes topological. */
WSR_TEST(dag_orders_untimed_edges_by_event)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(1), I(256));
	EV(EV_G_CREATE, 110, 0, 0, I(5), I(0));
	EV(EV_RUNQPUT, 111, 0, 0, I(5), I(0), I(0), I(1));
	EV(EV_G_RUN, 200, 0, 0, I(5), I(1), I(0));
	EV(EV_G_CREATE, 200, 0, 0, I(3), I(5));
	EV(EV_RUNQPUT, 200, 0, 0, I(3), I(0), I(0), I(1));
	EV(EV_G_STOP, 200, 0, 0, I(5), I(7));
	EV(EV_G_RUN, 200, 0, 0, I(3), I(1), I(0));
	EV(EV_G_STOP, 200, 0, 0, I(3), I(7));
	finish();
	ASSERT_EQ(q1("SELECT count(*) FROM dag_strand"), 3);
	ASSERT_EQ(q1("SELECT count(*) FROM dag_edge WHERE src >= dst"), 0);
	ASSERT_EQ(q1("SELECT count(*) FROM dag_edge e JOIN dag_strand a ON a.id = e.src JOIN "
		     "dag_strand b ON b.id = e.dst WHERE e.kind = 'spawn' AND a.g = 5 AND "
		     "a.ends = 'spawn' AND b.g = 3"),
		  1);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'dag_roots'"), 1);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'dag_unplaced'"), 0);
}

/* dag_fork_join_exact's events on a clock shifted by b. */
static void fork_join_events(int64_t b)
{
	EV(EV_INIT, b + 100, -1, 0, I(2), I(256));
	EV(EV_P_IDLE, b + 101, 1, 0, I(1));
	EV(EV_G_CREATE, b + 110, 0, 0, I(1), I(0));
	EV(EV_RUNQPUT, b + 111, 0, 0, I(1), I(0), I(0), I(1));
	EV(EV_G_RUN, b + 130, 0, 0, I(1), I(1), I(0));
	EV(EV_G_CREATE, b + 200, 0, 0, I(2), I(1));
	EV(EV_RUNQPUT, b + 201, 0, 0, I(2), I(0), I(0), I(1));
	EV(EV_G_CREATE, b + 300, 0, 0, I(3), I(1));
	EV(EV_RUNQPUT, b + 301, 0, 0, I(3), I(0), I(0), I(1));
	EV(EV_P_BUSY, b + 310, 1, 1, I(0));
	EV(EV_G_RUN, b + 320, 1, 1, I(2), I(3), I(0));
	EV(EV_G_STOP, b + 400, 0, 0, I(1), I(9));
	EV(EV_G_RUN, b + 410, 0, 0, I(3), I(1), I(0));
	EV(EV_G_STOP, b + 910, 0, 0, I(3), I(7));
	EV(EV_G_READY, b + 1300, 1, 1, I(1), I(2));
	EV(EV_RUNQPUT, b + 1301, 1, 1, I(1), I(0), I(0), I(1));
	EV(EV_G_STOP, b + 1320, 1, 1, I(2), I(7));
	EV(EV_G_RUN, b + 1330, 1, 1, I(1), I(1), I(0));
	EV(EV_G_STOP, b + 1400, 1, 1, I(1), I(7));
}

/* dag_fork_join_exact's three Gs on a clock shifted by b: peak_live_stacks,
 * work and span must not depend on where the clock's origin is. */
static void fork_join_at(int64_t b)
{
	setup();
	fork_join_events(b);
	finish();
	/* G1 from b+130, G2 from b+320, G3 b+410..b+910: three stacks at once. */
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'peak_live_stacks'"), 3);
	ASSERT_EQ(q1("SELECT round(value * 1e6) FROM meta WHERE key = 'work_ms'"), 1840);
	ASSERT_EQ(q1("SELECT round(value * 1e6) FROM meta WHERE key = 'span_ms'"), 1120);
}

/* A clock that passes 2^62 ns during the run (a CTF clock may have any
 * offset). peak_stacks() used to sort 2 * ts + 1 (start) and 2 * ts (exit),
 * which overflows past 2^62: signed overflow (UBSan), and in practice the
 * later events sorted first and the peak came out 1. */
WSR_TEST(dag_peak_stacks_late_clock)
{
	fork_join_at((INT64_C(1) << 62) - 350);
}

/* The counters are columns of the last event at their timestamp (the
 * counters view): G1 is created, queued and run; at ts 200 two events (a
 * g_create and its runqput) change runnable_gs, and only the second one,
 * the last at 200, carries the counters after both. */
WSR_TEST(counters_on_last_event_of_ts)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(1), I(256));
	EV(EV_G_CREATE, 110, 0, 0, I(1), I(0));
	EV(EV_RUNQPUT, 111, 0, 0, I(1), I(0), I(0), I(1));
	EV(EV_G_RUN, 120, 0, 0, I(1), I(1), I(0));
	EV(EV_G_CREATE, 200, 0, 0, I(2), I(1));
	EV(EV_RUNQPUT, 200, 0, 0, I(2), I(0), I(0), I(1));
	EV(EV_G_STOP, 300, 0, 0, I(1), I(7));
	finish();
	ASSERT_EQ(q1("SELECT count(*) FROM events WHERE ts = 200 AND running_gs IS NOT NULL"), 1);
	ASSERT_EQ(q1("SELECT name = 'runqput' FROM events WHERE ts = 200 AND running_gs IS NOT "
		     "NULL"),
		  1);
	ASSERT_EQ(q1("SELECT runnable_gs * 10 + running_gs FROM counters WHERE ts = 200"), 11);
	ASSERT_EQ(q1("SELECT count(*) FROM counters"), q1("SELECT count(DISTINCT ts) FROM counters"));
	/* The last event of the trace carries the last row (counters_finish). */
	ASSERT_EQ(q1("SELECT runnable_gs * 10 + running_gs FROM counters WHERE ts = 300"), 10);
	ASSERT_EQ(q1("SELECT max(ts) FROM counters"), 300);
}

/* Without ingest --dag: the same figures, dag_strand holds the critical
 * path's three strands (G1 [130,200] -> G2 [320,1300] -> G1 [1330,1400],
 * each with its predecessor) and dag_edge is empty. */
WSR_TEST(dag_default_critical_path)
{
	setup();
	derive_set_dag_rows(dv, false);
	fork_join_events(0);
	finish();
	ASSERT_EQ(q1("SELECT count(*) FROM dag_strand WHERE critical = 1"), 3);
	ASSERT_EQ(q1("SELECT count(*) FROM dag_strand WHERE start_ts IN (130, 320, 1330)"), 3);
	ASSERT_EQ(q1("SELECT count(*) FROM dag_edge"), 0);
	ASSERT_EQ(q1("SELECT count(*) FROM dag_strand s JOIN dag_strand p ON p.id = s.pred"), 2);
	ASSERT_EQ(q1("SELECT max(span_ns) FROM dag_strand"), 1120);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'dag_strands'"), 7);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'dag_edges'"), 7);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'dag_critical_strands'"), 3);
	ASSERT_EQ(q1("SELECT round(value * 1e6) FROM meta WHERE key = 'burdened_span_ms'"), 1270);
	ASSERT_EQ(q1("SELECT count(*) FROM meta WHERE key = 'dag_tables' AND value = 'critical'"),
		  1);
}

/* The tracker's memory does not follow the strands: it holds the strands
 * that lie on a live G's longest path (and the longest one's), not the
 * others. N Gs that a runtime thread creates (parent 0) and that run one
 * after another are N roots; no more strands are held at once
 * (meta.dag_kept_peak) for 2000 of them than for 10. */
static int64_t kept_peak_after(int gs)
{
	setup();
	derive_set_dag_rows(dv, false);
	EV(EV_INIT, 100, -1, 0, I(1), I(256));
	for (int k = 0; k < gs; k++) {
		int64_t t = 1000 + 100 * k, c = 1 + k;
		EV(EV_G_CREATE, t, 0, 0, I(c), I(0));
		EV(EV_RUNQPUT, t + 1, 0, 0, I(c), I(0), I(0), I(1));
		EV(EV_G_RUN, t + 10, 0, 0, I(c), I(1), I(0));
		EV(EV_G_STOP, t + 10 + (k % 7), 0, 0, I(c), I(7));
	}
	finish();
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'dag_strands'"), gs);
	ASSERT_EQ(q1("SELECT value FROM meta WHERE key = 'dag_roots'"), gs);
	ASSERT_EQ(q1("SELECT round(value * 1e6) FROM meta WHERE key = 'span_ms'"), 6);
	return q1("SELECT value FROM meta WHERE key = 'dag_kept_peak'");
}

WSR_TEST(dag_memory_flat_in_strands)
{
	int64_t small = kept_peak_after(10), large = kept_peak_after(2000);

	ASSERT(small > 0);
	ASSERT(large <= small);
}

/* A clock whose origin is after the run (negative times from origin: a CTF
 * clock class may have a negative offset): -1 was "never ran" in the G
 * table, and a G first run at -1 ns would count as never run. */
WSR_TEST(dag_negative_clock)
{
	fork_join_at(-100000);
	ASSERT_EQ(q1("SELECT count(*) FROM g WHERE first_run_ts IS NULL"), 0);
	fork_join_at(-231);
	ASSERT_EQ(q1("SELECT first_run_ts FROM g WHERE g = 1"), -101);
	ASSERT_EQ(q1("SELECT first_run_ts FROM g WHERE g = 2"), 89);
}

/* An empty text stays an empty text: rows.c copies texts into a batch
 * arena, and an empty one must not be bound as NULL when that arena was
 * never allocated. A run that ends in a blocking call has no g_stop
 * reason, so its strand ends with "" (dag_strand.ends is NOT NULL); here
 * it is the only strand, so the only text of its batch. */
WSR_TEST(rows_empty_text_is_not_null)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(1), I(256));
	EV(EV_G_CREATE, 110, 0, 0, I(1), I(0));
	EV(EV_RUNQPUT, 111, 0, 0, I(1), I(0), I(0), I(1));
	EV(EV_G_RUN, 120, 0, 0, I(1), I(1), I(0));
	EV(EV_SYSCALL_ENTER, 200, 0, 0, I(1));
	EV(EV_P_IDLE, 300, 0, 0, I(1));
	finish();
	ASSERT_EQ(q1("SELECT count(*) FROM dag_strand WHERE g = 1 AND seg = 0 AND ends = ''"), 1);
}

/*
 * rows.c's writer with block tables only: many blocks of events and of
 * p_counters (one stream per P) and no other row. The deriver used to wait
 * for a spare block while the writer slept until 16 batches were queued,
 * which only the other tables' rows ever brought: a short trace hung. And a
 * table with a block stream per P had one spare block too many: while the
 * deriver waited, the writer could return more than the spares could hold.
 */
WSR_TEST(rows_blocks_alone_are_written)
{
	char path[] = "/tmp/wsr-test-rows-XXXXXX";
	int fd = mkstemp(path);
	sqlite3 *rdb = NULL;
	struct wsr_err e;
	sqlite3_stmt *st = NULL;

	ASSERT(fd >= 0);
	close(fd);
	unlink(path);
	err_init(&e);
	ASSERT_EQ(db_create(path, &rdb, &e), 0);
	unlink(path);
	struct rows *rw = rows_create(rdb, &e);
	ASSERT(rw != NULL);
	for (int i = 0; i < 20000; i++) {
		struct row_event ev = {
			.id = i, .ts = 1000 + i / 3, .name = i % 5 ? "g_run" : "steal",
			.cpu = i % 2, .tid = ROW_NULL, .vpid = 7, .p = i % 3 - 1, .m = 0,
			.g = i, .a1 = ROW_NULL, .a2 = ROW_NULL, .a3 = ROW_NULL, .extra = NULL,
			.idle_ps = ROW_NULL, .spinning_ms = ROW_NULL, .idle_ms = ROW_NULL,
			.threads = ROW_NULL, .running_gs = ROW_NULL, .runnable_gs = ROW_NULL,
			.global_len = i % 4 ? ROW_NULL : i,
		};
		ASSERT_EQ(rows_add(rw, ROWS_EVENTS, &ev, &e), 0);
		/* 6 Ps, each filling its blocks in turn: the deriver keeps waiting
		 * for spare blocks (it used to be handed one more than there are) */
		for (int p = 0; p < 6; p++) {
			struct row_p_counters pc = {.p = p, .ts = 1000 + i / 3, .runq = i % 7,
						    .runnext = 0, .schedticks = i, .runs = i};
			ASSERT_EQ(rows_add(rw, ROWS_P_COUNTERS, &pc, &e), 0);
		}
	}
	ASSERT_EQ(rows_flush(rw, &e), 0);
	ASSERT_EQ(sqlite3_prepare_v2(rdb,
				     "SELECT (SELECT count(*) FROM events), (SELECT sum(g) FROM events), "
				     "(SELECT count(*) FROM p_counters WHERE p = 1), "
				     "(SELECT ts FROM p_counters WHERE p = 2 AND ts <= 2000 "
				     "ORDER BY ts DESC LIMIT 1)",
				     -1, &st, NULL),
		  SQLITE_OK);
	ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
	ASSERT_EQ(sqlite3_column_int64(st, 0), 20000);
	ASSERT_EQ(sqlite3_column_int64(st, 1), 20000LL * 19999 / 2);
	ASSERT_EQ(sqlite3_column_int64(st, 2), 20000);
	ASSERT_EQ(sqlite3_column_int64(st, 3), 2000);
	sqlite3_finalize(st);
	rows_destroy(rw);
	sqlite3_close(rdb);
}

/*
 * More names outside the catalog than the deriver counts itself: the end of
 * ingestion counts event_counts again from events, a query on the virtual
 * table inside the writing transaction, which must see every block written.
 */
WSR_TEST(derive_event_counts_recounted_from_the_blocks)
{
	setup();
	EV(EV_INIT, 100, -1, 0, I(2), I(256));
	for (int i = 0; i < 3000; i++) {
		char extra[64];
		int n = snprintf(extra, sizeof(extra), "other:ev%d", i % 300);
		memcpy(extra + n + 1, "{}", 3);
		struct wsr_rec r = {.type = REC_EVENT, .ev = EV_COUNT, .stream = 0};
		r.flags = REC_F_TS | REC_F_VPID;
		r.ts = 200 + i;
		r.vpid = 42;
		r.extra_len = (uint32_t)(n + 1 + 3);
		ASSERT_EQ(derive_rec(dv, &r, extra, &err), 0);
	}
	finish();
	ASSERT_EQ(q1("SELECT count(*) FROM events"), 3001);
	ASSERT_EQ(q1("SELECT count(*) FROM event_counts"), 301);
	ASSERT_EQ(q1("SELECT sum(n) FROM event_counts"), 3001);
	ASSERT_EQ(q1("SELECT n FROM event_counts WHERE name = 'other:ev299'"), 10);
	ASSERT_EQ(q1("SELECT count(*) FROM (SELECT name, count(*) AS n FROM events GROUP BY name) "
		     "e JOIN event_counts c USING (name) WHERE c.n = e.n"),
		  301);
}
