/*
 * fid-io.c - the fidelity harness's blocking-call and poller workload
 * (tests/fidelity/README.md): every path of runtime/syscall.c and netpoll.c.
 *
 * Phases, in order, each ended by a waitgroup:
 *   1. hand-off without a free P: BLOCKERS Gs each call wsr_blocking() around a
 *      20 ms usleep at once, while one more G keeps a P busy (it computes, with
 *      only preemption points, until 5 ms after the last usleep ended). sysmon
 *      retakes each P (retake, handoff), another M runs the next G; at
 *      WSRMAXPROCS=1 the Gs come back to no free P: g_stop(syscall) with no P,
 *      globrunq_put, m_park. With more Ps they come back to an idle P (p_busy,
 *      runqput).
 *   2. fast returns: FASTN wsr_syscall_enter/exit pairs around nothing, from
 *      two Gs (syscall_exit fast=1).
 *   3. retake while work waits: a G holds a call for 3 ms while 3 runnable Gs
 *      sit in its P's queue (sysmon retakes at once, handoff to an M).
 *   4. netpoll: PIPES pipe pairs and one socketpair, a reader G per fd parked in
 *      wsr_read and a writer G that writes MSGS messages with short sleeps
 *      between, so each read parks (g_stop io) and the poller readies it
 *      (netpoll, g_ready, g_run source netpoll), blocking in epoll when idle.
 * Invariants: prints the bytes moved and the calls made; exit 1 if any is wrong.
 * Concurrency: each fd has one reader and one writer G.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <wsr.h>

#include "burst.h"

#define BLOCKERS 4
#define FASTN 200
#define PIPES 3
#define MSGS 40

static wsr_waitgroup *wg;
static _Atomic long calls, bytes;
static _Atomic int entered, napped;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *nap20(void *arg)
{
	(void)arg;
	usleep(20000);
	atomic_fetch_add(&napped, 1);
	return NULL;
}

static void blocker(void *arg)
{
	(void)arg;
	atomic_fetch_add(&entered, 1);
	wsr_blocking(nap20, NULL);
	atomic_fetch_add(&calls, 1);
	wsr_waitgroup_done(wg);
}

/* Lets the blockers start, then holds its P until 5 ms after their naps. */
static void busy(void *arg)
{
	int64_t end;

	(void)arg;
	while (atomic_load(&entered) < BLOCKERS)
		wsr_sleep_ns(100000);
	while (atomic_load(&napped) < BLOCKERS)
		wsr_preempt_point();
	end = now_ns() + 5000000;
	while (now_ns() < end)
		wsr_preempt_point();
	atomic_fetch_add(&calls, 1);
	wsr_waitgroup_done(wg);
}

static void fast(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < FASTN; i++) {
		wsr_syscall_enter();
		wsr_syscall_exit();
		atomic_fetch_add(&calls, 1);
	}
	wsr_waitgroup_done(wg);
}

static void holder(void *arg)
{
	(void)arg;
	wsr_syscall_enter();
	usleep(3000);
	wsr_syscall_exit();
	atomic_fetch_add(&calls, 1);
	wsr_waitgroup_done(wg);
}

static void waiter(void *arg)
{
	(void)arg;
	atomic_fetch_add(&calls, 1);
	wsr_waitgroup_done(wg);
}

static void reader(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char buf[64];
	long got = 0;
	ssize_t n;

	while (got < MSGS * 8 && (n = wsr_read(fd, buf, sizeof(buf))) > 0)
		got += n;
	atomic_fetch_add(&bytes, got);
	wsr_waitgroup_done(wg);
}

static void writer(void *arg)
{
	int fd = (int)(intptr_t)arg;
	int i;

	for (i = 0; i < MSGS; i++) {
		if (wsr_write(fd, "01234567", 8) != 8)
			break;
		if (i % 4 == 3)
			wsr_sleep_ns(200000);
	}
	wsr_waitgroup_done(wg);
}

static int main_g(void *arg)
{
	int fds[PIPES + 1][2], i;
	long want_calls = BLOCKERS + 1 + 2 * FASTN + 1 + 3;

	(void)arg;
	fid_burst();
	wg = wsr_waitgroup_make();

	wsr_waitgroup_add(wg, BLOCKERS + 1);
	wsr_go(busy, NULL);
	for (i = 0; i < BLOCKERS; i++)
		wsr_go(blocker, NULL);
	wsr_waitgroup_wait(wg);

	wsr_waitgroup_add(wg, 2);
	wsr_go(fast, NULL);
	wsr_go(fast, NULL);
	wsr_waitgroup_wait(wg);

	wsr_waitgroup_add(wg, 4);
	wsr_go(holder, NULL);
	for (i = 0; i < 3; i++)
		wsr_go(waiter, NULL);
	wsr_waitgroup_wait(wg);

	for (i = 0; i < PIPES; i++)
		if (pipe(fds[i]) != 0) {
			perror("fid-io: pipe");
			return 1;
		}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds[PIPES]) != 0) {
		perror("fid-io: socketpair");
		return 1;
	}
	wsr_waitgroup_add(wg, 2 * (PIPES + 1));
	for (i = 0; i <= PIPES; i++) {
		wsr_go(reader, (void *)(intptr_t)fds[i][0]);
		wsr_go(writer, (void *)(intptr_t)fds[i][1]);
	}
	wsr_waitgroup_wait(wg);
	for (i = 0; i <= PIPES; i++) {
		close(fds[i][0]);
		close(fds[i][1]);
	}

	wsr_waitgroup_free(wg);
	printf("fid-io: calls %ld (want %ld), bytes %ld (want %d)\n", atomic_load(&calls),
	       want_calls, atomic_load(&bytes), (PIPES + 1) * MSGS * 8);
	return atomic_load(&calls) == want_calls && atomic_load(&bytes) == (PIPES + 1) * MSGS * 8
		       ? 0 : 1;
}

int main(void)
{
	return wsr_main(main_g, NULL);
}
