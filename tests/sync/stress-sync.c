/*
 * stress-sync.c - heavy cases for the issue-3 runtime parts: the echo
 * server answering 1,000 concurrent connections from the load client (both
 * are the examples, run as processes), a select storm over shared channels,
 * partners freeing the channel a select just used, close racing with
 * senders, receivers and selects, and a contended mutex.
 *
 * Invariants: each case runs under a watchdog (st_run, or st_fork's kill
 *   deadline for the processes); sizes scale with WSR_STRESS_SCALE; seeds
 *   are fixed; every value is accounted for (conservation checks).
 * Concurrency: counters shared across Ms are atomics.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <wsr.h>

#include "synctest.h"
#include "wsrtest.h"

/* ---- echo: 1,000 concurrent connections, every byte verified ---- */

static void example_path(char *buf, size_t len, const char *name)
{
	const char *root = getenv("WSR_BUILD_ROOT");

	if (root == NULL)
		wsrtest_fail(__FILE__, __LINE__,
			     "WSR_BUILD_ROOT is not set (run through meson test)");
	snprintf(buf, len, "%s/examples/%s", root, name);
	if (access(buf, X_OK) != 0)
		wsrtest_fail(__FILE__, __LINE__, "%s: %s", buf, strerror(errno));
}

static void echo_run(const char *procs, long conns, long bytes)
{
	char server[4096], client[4096], port[16], line[256], cbuf[32], bbuf[32];
	struct rlimit rl;
	struct st_child r;
	int po[2], status;
	size_t n = 0;
	pid_t pid;
	FILE *f;

	example_path(server, sizeof(server), "echo_server");
	example_path(client, sizeof(client), "echo_client");
	/* Both processes need an fd per connection (plus the runtime's own). */
	ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < (rlim_t)conns + 256) {
		rl.rlim_cur = rl.rlim_max;
		ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
	}
	ASSERT_GE(rl.rlim_cur, (rlim_t)conns + 64);
	setenv("WSRMAXPROCS", procs, 1);
	snprintf(cbuf, sizeof(cbuf), "%ld", conns);
	snprintf(bbuf, sizeof(bbuf), "%ld", bytes);

	ASSERT_EQ(pipe(po), 0);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		char *argv[] = {server, "0", cbuf, NULL};

		dup2(po[1], 1);
		close(po[0]);
		close(po[1]);
		alarm(240);
		execv(server, argv);
		_exit(127);
	}
	close(po[1]);
	f = fdopen(po[0], "r");
	if (f == NULL || fgets(line, sizeof(line), f) == NULL ||
	    sscanf(line, "listening on 127.0.0.1:%15s", port) != 1) {
		kill(pid, SIGKILL);
		wsrtest_fail(__FILE__, __LINE__, "echo_server did not say where it listens");
	}
	{
		char *argv[] = {client, port, cbuf, bbuf, "512", NULL};

		st_exec(&r, argv, 240);
	}
	if (st_code(&r) != 0) {
		kill(pid, SIGKILL);
		wsrtest_fail(__FILE__, __LINE__, "echo_client exit %d\nstdout:\n%s\nstderr:\n%s",
			     st_code(&r), r.out, r.err);
	}
	snprintf(line, sizeof(line), "connections ok = %ld of %ld", conns, conns);
	ASSERT(strstr(r.out, line) != NULL);
	snprintf(line, sizeof(line), "bytes verified = %ld", conns * bytes);
	ASSERT(strstr(r.out, line) != NULL);
	printf("# P=%s %s", procs, strstr(r.out, "requests/s"));
	st_child_free(&r);
	/* The server stops after conns connections and reports them. */
	while (fgets(line, sizeof(line), f) != NULL)
		n += strncmp(line, "connections = ", 14) == 0 && atol(line + 14) == conns;
	fclose(f);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	ASSERT_EQ(n, 1);
}

WSR_TEST_TIMEOUT(echo_1000_connections_p1, 280)
{
	echo_run("1", 1000, 16384 * wsrtest_scale());
}

WSR_TEST_TIMEOUT(echo_1000_connections_p2, 280)
{
	echo_run("2", 1000, 16384 * wsrtest_scale());
}

/* ---- select storm ----
 * S selector Gs each loop on a select over K shared buffered channels with
 * a random mix of send and receive cases; a sender/receiver count per
 * channel must balance at the end (values are conserved). */
enum {
	K = 6,
	S = 16
};

static wsr_chan *storm[K];
static _Atomic long sent_sum, recv_sum, sent_n, recv_n;
static wsr_waitgroup *storm_wg;
static long storm_rounds;

static void storm_g(void *arg)
{
	unsigned long long seed = (unsigned long long)(uintptr_t)arg * 7919 + 1;
	wsr_select_case cs[K];
	long vals[K], r;
	int k, f;

	for (r = 0; r < storm_rounds; r++) {
		for (k = 0; k < K; k++) {
			cs[k].c = storm[k];
			cs[k].dir = (st_rand(&seed) & 1) ? WSR_SEND : WSR_RECV;
			vals[k] = (long)(st_rand(&seed) % 1000) + 1;
			cs[k].elem = &vals[k];
		}
		/* Non-blocking half the time, so nobody waits forever at the end. */
		f = wsr_select(cs, K, 0);
		if (f < 0)
			continue;
		ASSERT_EQ(cs[f].ok, 1);
		if (cs[f].dir == WSR_SEND) {
			sent_sum += vals[f];
			sent_n++;
		} else {
			recv_sum += vals[f];
			recv_n++;
		}
	}
	wsr_waitgroup_done(storm_wg);
}

static int storm_main(void *arg)
{
	long v;
	int k, i;

	(void)arg;
	storm_rounds = 20000 * wsrtest_scale();
	for (k = 0; k < K; k++)
		storm[k] = wsr_chan_make(sizeof(long), (size_t)k); /* channel 0 is unbuffered */
	storm_wg = wsr_waitgroup_make();
	wsr_waitgroup_add(storm_wg, S);
	for (i = 0; i < S; i++)
		wsr_go(storm_g, (void *)(uintptr_t)i);
	wsr_waitgroup_wait(storm_wg);
	/* Whatever is still buffered was sent but not received. */
	for (k = 0; k < K; k++) {
		wsr_chan_close(storm[k]);
		while (wsr_chan_recv(storm[k], &v) == 1) {
			recv_sum += v;
			recv_n++;
		}
		wsr_chan_free(storm[k]);
	}
	ASSERT_EQ(sent_n, recv_n);
	ASSERT_EQ(sent_sum, recv_sum);
	ASSERT_GT(sent_n, 0);
	wsr_waitgroup_free(storm_wg);
	return 0;
}

WSR_TEST_TIMEOUT(select_storm_conserves_values_p2, 120)
{
	st_run("select_storm_conserves_values_p2", 2, storm_main, NULL, 100);
}

/* ---- partners free the channel a select just used (issue 17) ----
 * FP pairs. Each round the partner makes a fresh unbuffered channel, hands
 * it to its selector over a persistent channel, completes one case of the
 * selector's blocking select on it (a send or a receive; the select lists
 * the fresh channel once or twice, beside a channel that never fires) and
 * frees it as soon as its own call returns. Whether the selector parked
 * first or found the partner waiting is up to the Ps; under ASan a select
 * that touched the freed channel is a heap-use-after-free. Every third
 * round the partner closes the channel instead; a close does not wait for
 * the select to start (a send or receive pairs with it), so that partner
 * frees the channel only once the selector says its select returned. */
enum { FP = 4 };

struct fpair {
	wsr_chan *hand, *never, *ack;
	long rounds;
	_Atomic long got, want;
};

static wsr_waitgroup *fp_wg;

static void fp_selector(void *arg)
{
	struct fpair *p = arg;
	long r;

	for (r = 0; r < p->rounds; r++) {
		wsr_chan *c;
		long in1 = 0, in2 = 0, out = r + 1, dummy = 0;
		wsr_select_case cs[3];
		int n = 2, k;

		ASSERT_EQ(wsr_chan_recv(p->hand, &c), 1);
		cs[0].c = p->never;
		cs[0].dir = WSR_RECV;
		cs[0].elem = &dummy;
		cs[1].c = c;
		cs[1].dir = r % 3 == 1 ? WSR_SEND : WSR_RECV;
		cs[1].elem = r % 3 == 1 ? (void *)&out : (void *)&in1;
		if (r % 2 == 0 && r % 3 != 1) {
			cs[2].c = c; /* the same channel twice */
			cs[2].dir = WSR_RECV;
			cs[2].elem = &in2;
			n = 3;
		}
		k = wsr_select(cs, n, 1);
		ASSERT(k >= 1);
		/* c may be freed already: only our own variables from here. */
		if (r % 3 != 1 && cs[k].ok)
			p->got += in1 + in2;
		if (r % 3 == 2) {
			ASSERT_EQ(cs[k].ok, 0);
			ASSERT_EQ(wsr_chan_send(p->ack, &r), 0);
		}
	}
	wsr_waitgroup_done(fp_wg);
}

static void fp_partner(void *arg)
{
	struct fpair *p = arg;
	long r, v;

	for (r = 0; r < p->rounds; r++) {
		wsr_chan *c = wsr_chan_make(sizeof(long), 0);

		ASSERT_EQ(wsr_chan_send(p->hand, &c), 0);
		if (r % 3 == 1) {
			ASSERT_EQ(wsr_chan_recv(c, &v), 1);
			ASSERT_EQ(v, r + 1);
		} else if (r % 3 == 2) {
			wsr_chan_close(c);
			ASSERT_EQ(wsr_chan_recv(p->ack, &v), 1);
			ASSERT_EQ(v, r);
		} else {
			v = r + 1;
			ASSERT_EQ(wsr_chan_send(c, &v), 0);
			p->want += v;
		}
		wsr_chan_free(c);
	}
	wsr_waitgroup_done(fp_wg);
}

static int fp_main(void *arg)
{
	struct fpair ps[FP];
	int i;

	(void)arg;
	fp_wg = wsr_waitgroup_make();
	wsr_waitgroup_add(fp_wg, 2 * FP);
	for (i = 0; i < FP; i++) {
		ps[i].hand = wsr_chan_make(sizeof(wsr_chan *), 0);
		ps[i].never = wsr_chan_make(sizeof(long), 0);
		ps[i].ack = wsr_chan_make(sizeof(long), 0);
		ps[i].rounds = 20000 * wsrtest_scale();
		ps[i].got = ps[i].want = 0;
		wsr_go(fp_selector, &ps[i]);
		wsr_go(fp_partner, &ps[i]);
	}
	wsr_waitgroup_wait(fp_wg);
	for (i = 0; i < FP; i++) {
		ASSERT_EQ(ps[i].got, ps[i].want);
		ASSERT_GT(ps[i].want, 0);
		wsr_chan_free(ps[i].hand);
		wsr_chan_free(ps[i].never);
		wsr_chan_free(ps[i].ack);
	}
	wsr_waitgroup_free(fp_wg);
	return 0;
}

WSR_TEST_TIMEOUT(select_partners_free_channels_p2, 120)
{
	st_run("select_partners_free_channels_p2", 2, fp_main, NULL, 100);
}

WSR_TEST_TIMEOUT(select_partners_free_channels_p8, 120)
{
	st_run("select_partners_free_channels_p8", 8, fp_main, NULL, 100);
}

/* Blocking selects paired with plain senders and receivers: each blocking
 * select over {recv a, send b} is matched by exactly one partner. */
static wsr_chan *ba, *bb;
static _Atomic long moved_a, moved_b;

static void bsel_g(void *arg)
{
	long n = (long)(intptr_t)arg, i, in, out = 1;
	wsr_select_case cs[2];

	for (i = 0; i < n; i++) {
		cs[0].c = ba;
		cs[0].dir = WSR_RECV;
		cs[0].elem = &in;
		cs[1].c = bb;
		cs[1].dir = WSR_SEND;
		cs[1].elem = &out;
		if (wsr_select(cs, 2, 1) == 0)
			moved_a++;
		else
			moved_b++;
	}
	wsr_waitgroup_done(storm_wg);
}

static void feeder_g(void *arg)
{
	long n = (long)(intptr_t)arg, i, v = 1;

	for (i = 0; i < n; i++)
		ASSERT_EQ(wsr_chan_send(ba, &v), 0);
	wsr_waitgroup_done(storm_wg);
}

static void drainer_g(void *arg)
{
	long n = (long)(intptr_t)arg, i, v;

	for (i = 0; i < n; i++)
		ASSERT_EQ(wsr_chan_recv(bb, &v), 1);
	wsr_waitgroup_done(storm_wg);
}

static int bsel_main(void *arg)
{
	long per = 5000 * wsrtest_scale();
	int i, n = 8;

	(void)arg;
	ba = wsr_chan_make(sizeof(long), 0);
	bb = wsr_chan_make(sizeof(long), 0);
	storm_wg = wsr_waitgroup_make();
	/* n selectors do 2*per ops each; n feeders and n drainers do per each. */
	wsr_waitgroup_add(storm_wg, 3 * n);
	for (i = 0; i < n; i++) {
		wsr_go(bsel_g, (void *)(intptr_t)(2 * per));
		wsr_go(feeder_g, (void *)(intptr_t)per);
		wsr_go(drainer_g, (void *)(intptr_t)per);
	}
	wsr_waitgroup_wait(storm_wg);
	ASSERT_EQ(moved_a, n * per);
	ASSERT_EQ(moved_b, n * per);
	wsr_chan_free(ba);
	wsr_chan_free(bb);
	wsr_waitgroup_free(storm_wg);
	return 0;
}

WSR_TEST_TIMEOUT(blocking_selects_pair_exactly_p2, 120)
{
	st_run("blocking_selects_pair_exactly_p2", 2, bsel_main, NULL, 100);
}

/* ---- close races ----
 * Rounds of: senders, receivers and selects pile onto a fresh channel,
 * then it is closed while they run. (On a buffered channel a select with
 * both a send and a receive case is always ready, so its G never parks and
 * holds its P until sysmon's 10 ms preemption: a round costs ~20 ms by
 * design, hence few rounds.) Every send either delivered (counted by
 * a receiver) or got -1; nobody is left parked (the waitgroup completes). */
struct crace {
	wsr_chan *c;
	_Atomic long delivered, received, refused;
	wsr_waitgroup *wg;
};

static void cr_send(void *arg)
{
	struct crace *cr = arg;
	long v = 1;

	for (;;) {
		if (wsr_chan_send(cr->c, &v) != 0) {
			cr->refused++;
			break;
		}
		cr->delivered++;
	}
	wsr_waitgroup_done(cr->wg);
}

static void cr_recv(void *arg)
{
	struct crace *cr = arg;
	long v;

	while (wsr_chan_recv(cr->c, &v) == 1)
		cr->received++;
	wsr_waitgroup_done(cr->wg);
}

static void cr_select(void *arg)
{
	struct crace *cr = arg;
	long in, out = 1;
	wsr_select_case cs[2];

	for (;;) {
		int f;

		cs[0].c = cr->c;
		cs[0].dir = WSR_RECV;
		cs[0].elem = &in;
		cs[1].c = cr->c;
		cs[1].dir = WSR_SEND;
		cs[1].elem = &out;
		f = wsr_select(cs, 2, 1);
		if (!cs[f].ok)
			break;
		if (f == 0)
			cr->received++;
		else
			cr->delivered++;
	}
	wsr_waitgroup_done(cr->wg);
}

static int crace_main(void *arg)
{
	int round, i, rounds = 60 * (int)wsrtest_scale();

	(void)arg;
	for (round = 0; round < rounds; round++) {
		struct crace cr = {wsr_chan_make(sizeof(long), (size_t)(round % 3)), 0, 0, 0,
				   wsr_waitgroup_make()};
		long v;

		wsr_waitgroup_add(cr.wg, 12);
		for (i = 0; i < 4; i++) {
			wsr_go(cr_send, &cr);
			wsr_go(cr_recv, &cr);
			wsr_go(cr_select, &cr);
		}
		wsr_sleep_ns(100000 + 1000 * (round % 50));
		wsr_chan_close(cr.c);
		wsr_waitgroup_wait(cr.wg);
		/* The buffer may still hold delivered values nobody took. */
		while (wsr_chan_recv(cr.c, &v) == 1)
			cr.received++;
		ASSERT_EQ(cr.delivered, cr.received);
		ASSERT_EQ(cr.refused, 4);
		wsr_chan_free(cr.c);
		wsr_waitgroup_free(cr.wg);
	}
	return 0;
}

WSR_TEST_TIMEOUT(close_races_with_senders_receivers_selects_p2, 120)
{
	st_run("close_races_with_senders_receivers_selects_p2", 2, crace_main, NULL, 100);
}

/* ---- contended mutex with sleeps and yields inside ---- */
static wsr_mutex *cm;
static long cm_counter; /* under cm */

static void cm_g(void *arg)
{
	long n = (long)(intptr_t)arg, i;

	for (i = 0; i < n; i++) {
		wsr_mutex_lock(cm);
		cm_counter++;
		if (i % 100 == 0)
			wsr_sleep_ns(10000);
		else if (i % 10 == 0)
			wsr_yield();
		wsr_mutex_unlock(cm);
	}
	wsr_waitgroup_done(storm_wg);
}

static int cm_main(void *arg)
{
	long per = 3000 * wsrtest_scale();
	int i, n = 32;

	(void)arg;
	cm = wsr_mutex_make();
	storm_wg = wsr_waitgroup_make();
	wsr_waitgroup_add(storm_wg, n);
	for (i = 0; i < n; i++)
		wsr_go(cm_g, (void *)(intptr_t)per);
	wsr_waitgroup_wait(storm_wg);
	ASSERT_EQ(cm_counter, n * per);
	wsr_mutex_free(cm);
	wsr_waitgroup_free(storm_wg);
	return 0;
}

WSR_TEST_TIMEOUT(contended_mutex_p2, 120)
{
	st_run("contended_mutex_p2", 2, cm_main, NULL, 100);
}
