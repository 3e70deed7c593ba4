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
#include "wsrtest.h"

static sqlite3 *db;
static struct derive *dv;
static struct wsr_err err;

static void setup(void)
{
	char path[] = "/tmp/wsr-test-derive-XXXXXX";
	int fd = mkstemp(path);

	ASSERT(fd >= 0);
	close(fd);
	unlink(path);
	err_init(&err);
	ASSERT_EQ(db_create(path, &db, &err), 0);
	unlink(path);
	dv = derive_create(db, "synthetic", &err);
	ASSERT(dv != NULL);
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
	ASSERT_EQ(derive_finish(dv, &err), 0);
	ASSERT_EQ(db_finish(db, &err), 0);
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
