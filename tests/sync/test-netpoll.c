/*
 * test-netpoll.c - wsr_read/wsr_write/wsr_accept on fd numbers that
 * close(2) freed and pipe(2), socketpair(2) or socket(2) handed out again
 * (issue 17): the new file behind a reused number must be treated as new,
 * so a call that would block parks the G instead of blocking its thread.
 *
 * Each case runs at WSRMAXPROCS=1, where a thread blocked in read(2) stops
 * every G: the partner G that would unblock it never runs, and st_run's
 * watchdog turns the hang into a failure with the G/M/P dump.
 *
 * The poller registers a file with epoll once, at its first park, and never
 * again (netpoll.c): the later cases check what that must survive. A
 * number reused after close(2) as a socket or a non-blocking pipe (which wsr
 * cannot tell from the old file: its first park trusts a dead registration
 * until sysmon's sweep registers it again); wsr_close waking the Gs parked
 * on the fd it closes; thousands of fds over several descriptor pages, all
 * parked at once and then reused; and Gs trading one byte back and forth at
 * 2 and 8 Ps, where the byte's edge may come between a G's EAGAIN and its
 * park (a missed edge-triggered wakeup would hang the pair). The last case
 * is the scheduler's: a P kept busy by the poller must take the Gs of a P
 * that does not move (steal.c).
 *
 * Invariants: every case checks that the numbers really were reused (else it
 *   would test nothing); nothing asserts on elapsed time.
 * Concurrency: the runtime's; at P=1 the partner runs only when main parks.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <wsr.h>

#include "synctest.h"
#include "wsrtest.h"

#define BIG (256 * 1024) /* more than a pipe or socket buffer holds */

struct io {
	int rfd, wfd;
	size_t n;
	wsr_chan *done;
};

/* Writes n bytes to wfd (wsr_write parks while the buffer is full). */
static void writer_g(void *arg)
{
	struct io *io = arg;
	static char buf[BIG];
	int one = 1;

	memset(buf, 'w', io->n);
	ASSERT_EQ(wsr_write(io->wfd, buf, io->n), (ssize_t)io->n);
	wsr_chan_send(io->done, &one);
}

/* Reads exactly n bytes from rfd. */
static void read_all(int fd, size_t n)
{
	static char buf[BIG];
	size_t got = 0;

	while (got < n) {
		ssize_t r = wsr_read(fd, buf + got, n - got);

		ASSERT(r > 0);
		got += (size_t)r;
	}
}

static void reader_g(void *arg)
{
	struct io *io = arg;
	int one = 1;

	read_all(io->rfd, io->n);
	wsr_chan_send(io->done, &one);
}

/* Main reads while a G writes, then main writes while a G reads: both
 * directions of fds[0] -> fds[1] (and the reverse for a socket pair). */
static void exchange(int rfd, int wfd)
{
	struct io io = {rfd, wfd, 100, wsr_chan_make(sizeof(int), 0)};
	int v;

	/* Main reads first: the buffer is empty, so its read parks (or, with a
	 * blocking fd, blocks the only thread). */
	wsr_go(writer_g, &io);
	read_all(rfd, io.n);
	ASSERT_EQ(wsr_chan_recv(io.done, &v), 1);
	/* Main writes more than the buffer holds: its write parks until the
	 * reader G drains. */
	io.n = BIG;
	wsr_go(reader_g, &io);
	{
		static char buf[BIG];

		memset(buf, 'm', sizeof(buf));
		ASSERT_EQ(wsr_write(wfd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	}
	ASSERT_EQ(wsr_chan_recv(io.done, &v), 1);
	wsr_chan_free(io.done);
}

static int pipe_reuse_main(void *arg)
{
	int a[2], b[2];

	(void)arg;
	ASSERT_EQ(pipe(a), 0);
	exchange(a[0], a[1]);
	close(a[0]);
	close(a[1]);
	/* The lowest free numbers: the same two, now a new (blocking) pipe. */
	ASSERT_EQ(pipe(b), 0);
	ASSERT_EQ(b[0], a[0]);
	ASSERT_EQ(b[1], a[1]);
	exchange(b[0], b[1]);
	close(b[0]);
	close(b[1]);
	return 0;
}

WSR_TEST_TIMEOUT(reused_pipe_fds_park_not_block_p1, 30)
{
	st_run("reused_pipe_fds_park_not_block_p1", 1, pipe_reuse_main, NULL, 10);
}

static int socketpair_reuse_main(void *arg)
{
	int a[2], b[2];

	(void)arg;
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, a), 0);
	exchange(a[0], a[1]);
	exchange(a[1], a[0]);
	close(a[0]);
	close(a[1]);
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, b), 0);
	ASSERT_EQ(b[0], a[0]);
	ASSERT_EQ(b[1], a[1]);
	exchange(b[0], b[1]);
	exchange(b[1], b[0]);
	close(b[0]);
	close(b[1]);
	return 0;
}

WSR_TEST_TIMEOUT(reused_socketpair_fds_park_not_block_p1, 30)
{
	st_run("reused_socketpair_fds_park_not_block_p1", 1, socketpair_reuse_main, NULL, 10);
}

/* A socket pair's numbers reused by a pipe, and a pipe's by a socket pair:
 * what was learnt about the old file must not mislead the calls on the new. */
static int mixed_reuse_main(void *arg)
{
	int a[2], b[2], c[2];

	(void)arg;
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, a), 0);
	exchange(a[0], a[1]);
	close(a[0]);
	close(a[1]);
	ASSERT_EQ(pipe(b), 0);
	ASSERT_EQ(b[0], a[0]);
	ASSERT_EQ(b[1], a[1]);
	exchange(b[0], b[1]);
	close(b[0]);
	close(b[1]);
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, c), 0);
	ASSERT_EQ(c[0], a[0]);
	ASSERT_EQ(c[1], a[1]);
	exchange(c[0], c[1]);
	exchange(c[1], c[0]);
	close(c[0]);
	close(c[1]);
	return 0;
}

WSR_TEST_TIMEOUT(reused_fds_of_another_kind_park_not_block_p1, 30)
{
	st_run("reused_fds_of_another_kind_park_not_block_p1", 1, mixed_reuse_main, NULL, 10);
}

/* A listening socket whose number an earlier socket had: wsr_accept parks
 * until a G connects (Go: the poller owns the listener's fd). */
struct lsn {
	struct sockaddr_in sa;
	wsr_chan *done;
};

static void connector_g(void *arg)
{
	struct lsn *l = arg;
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	ASSERT(fd >= 0);
	ASSERT_EQ(wsr_connect(fd, (struct sockaddr *)&l->sa, sizeof(l->sa)), 0);
	close(fd);
	wsr_chan_send(l->done, &one);
}

static int listen_on(struct sockaddr_in *sa)
{
	socklen_t len = sizeof(*sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ASSERT(fd >= 0);
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ASSERT_EQ(bind(fd, (struct sockaddr *)sa, sizeof(*sa)), 0);
	ASSERT_EQ(listen(fd, 4), 0);
	ASSERT_EQ(getsockname(fd, (struct sockaddr *)sa, &len), 0);
	return fd;
}

static int accept_reuse_main(void *arg)
{
	struct lsn l;
	int round, first = -1, v;

	(void)arg;
	l.done = wsr_chan_make(sizeof(int), 0);
	for (round = 0; round < 2; round++) {
		int fd = listen_on(&l.sa), c;

		if (round == 0)
			first = fd;
		else
			ASSERT_EQ(fd, first);
		/* Nobody has connected yet: the accept parks, the G connects. */
		wsr_go(connector_g, &l);
		c = wsr_accept(fd, NULL, NULL);
		ASSERT(c >= 0);
		ASSERT_EQ(wsr_chan_recv(l.done, &v), 1);
		close(c);
		close(fd);
	}
	wsr_chan_free(l.done);
	return 0;
}

WSR_TEST_TIMEOUT(reused_listener_fd_accept_parks_p1, 30)
{
	st_run("reused_listener_fd_accept_parks_p1", 1, accept_reuse_main, NULL, 10);
}

/* A socket pair and a pipe created non-blocking, closed with close(2), and
 * their numbers handed out again the same way: wsr sees nothing that tells
 * the new files from the old ones (no O_NONBLOCK to set, MSG_DONTWAIT on
 * the sockets), so each first park trusts the old registration, which died
 * with the old file; only the sweep's second registration wakes it. */
static int nonblock_reuse_main(void *arg)
{
	int a[2], b[2], round;

	(void)arg;
	for (round = 0; round < 3; round++) {
		ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, b), 0);
		if (round > 0) {
			ASSERT_EQ(b[0], a[0]);
			ASSERT_EQ(b[1], a[1]);
		}
		exchange(b[0], b[1]);
		exchange(b[1], b[0]);
		close(b[0]);
		close(b[1]);
		ASSERT_EQ(pipe2(b, O_NONBLOCK), 0);
		if (round > 0) {
			ASSERT_EQ(b[0], a[0]);
			ASSERT_EQ(b[1], a[1]);
		}
		exchange(b[0], b[1]);
		close(b[0]);
		close(b[1]);
		a[0] = b[0];
		a[1] = b[1];
	}
	return 0;
}

WSR_TEST_TIMEOUT(reused_nonblocking_fds_park_and_wake_p1, 30)
{
	st_run("reused_nonblocking_fds_park_and_wake_p1", 1, nonblock_reuse_main, NULL, 20);
}

/* The same with wsr_close: the numbers are registered afresh at once. */
static int wsr_close_reuse_main(void *arg)
{
	int a[2], b[2], round;

	(void)arg;
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, a), 0);
	for (round = 0; round < 3; round++) {
		exchange(a[0], a[1]);
		exchange(a[1], a[0]);
		ASSERT_EQ(wsr_close(a[0]), 0);
		ASSERT_EQ(wsr_close(a[1]), 0);
		ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, b), 0);
		ASSERT_EQ(b[0], a[0]);
		ASSERT_EQ(b[1], a[1]);
	}
	exchange(a[0], a[1]);
	ASSERT_EQ(wsr_close(a[0]), 0);
	ASSERT_EQ(wsr_close(a[1]), 0);
	/* An fd that is not open: close(2)'s error, as close(2) gives it. */
	ASSERT_EQ(wsr_close(a[0]), -1);
	ASSERT_EQ(wsr_errno(), EBADF);
	return 0;
}

WSR_TEST_TIMEOUT(wsr_close_then_reuse_p1, 30)
{
	st_run("wsr_close_then_reuse_p1", 1, wsr_close_reuse_main, NULL, 20);
}

/* The runtime's count of Gs parked in the poller (proc.h; the tests link
 * the internal library): a park is otherwise invisible to a test. */
int32_t wsr__netpoll_waiters(void);

/* A G parked in wsr_read, or in wsr_write on a full buffer, while another G
 * closes the fd with wsr_close: it wakes and fails with EBADF (Go's Close of
 * a conn with a pending Read or Write). */
struct parked {
	int fd;
	int write; /* 0: wsr_read, 1: wsr_write until the buffer is full */
	wsr_chan *started, *res;
};

static void parked_g(void *arg)
{
	struct parked *pk = arg;
	static char buf[BIG];
	int one = 1, e;
	ssize_t r;

	wsr_chan_send(pk->started, &one);
	if (pk->write)
		r = wsr_write(pk->fd, buf, sizeof(buf)); /* more than the buffer */
	else
		r = wsr_read(pk->fd, buf, 1);
	e = r < 0 ? wsr_errno() : 0;
	/* A write may have moved part of buf before it parked. */
	if (pk->write && r > 0) {
		r = wsr_write(pk->fd, buf, 1);
		e = r < 0 ? wsr_errno() : 0;
	}
	ASSERT_EQ(r, -1);
	wsr_chan_send(pk->res, &e);
}

static int close_wakes_main(void *arg)
{
	int dir;

	(void)arg;
	for (dir = 0; dir < 2; dir++) {
		struct parked pk;
		int sv[2], v, e;

		ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		pk.fd = sv[0];
		pk.write = dir;
		pk.started = wsr_chan_make(sizeof(int), 0);
		pk.res = wsr_chan_make(sizeof(int), 1);
		wsr_go(parked_g, &pk);
		ASSERT_EQ(wsr_chan_recv(pk.started, &v), 1);
		/* Until it has parked: closing an fd that another G is using
		 * (not parked) is the program's race, as with threads. */
		while (wsr__netpoll_waiters() == 0)
			wsr_yield();
		ASSERT_EQ(wsr_close(sv[0]), 0);
		ASSERT_EQ(wsr_chan_recv(pk.res, &e), 1);
		ASSERT_EQ(e, EBADF);
		close(sv[1]);
		wsr_chan_free(pk.started);
		wsr_chan_free(pk.res);
	}
	return 0;
}

WSR_TEST_TIMEOUT(wsr_close_wakes_parked_reader_and_writer_p1, 30)
{
	st_run("wsr_close_wakes_parked_reader_and_writer_p1", 1, close_wakes_main, NULL, 20);
}

WSR_TEST_TIMEOUT(wsr_close_wakes_parked_reader_and_writer_p2, 30)
{
	st_run("wsr_close_wakes_parked_reader_and_writer_p2", 2, close_wakes_main, NULL, 20);
}

/* Many fds at once, over several descriptor pages (1024 each): a reader G
 * parked on each of NPAIRS socket pairs, then one byte to each; then all of
 * them closed with close(2) and their numbers reused by new pairs, whose
 * first parks all trust dead registrations (the sweep's work at scale). */
#define NPAIRS 1400

struct many {
	int (*sv)[2];
	wsr_waitgroup *wg;
};

static struct many many;

static void many_reader_g(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char c;

	ASSERT_EQ(wsr_read(fd, &c, 1), 1);
	ASSERT_EQ(c, 'x');
	wsr_waitgroup_done(many.wg);
}

static int many_fds_main(void *arg)
{
	int round, i, first = -1;

	(void)arg;
	many.sv = calloc(NPAIRS, sizeof(*many.sv));
	ASSERT(many.sv != NULL);
	many.wg = wsr_waitgroup_make();
	for (round = 0; round < 2; round++) {
		for (i = 0; i < NPAIRS; i++)
			ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, many.sv[i]), 0);
		if (round == 0)
			first = many.sv[NPAIRS - 1][1];
		else
			ASSERT_EQ(many.sv[NPAIRS - 1][1], first); /* the same numbers */
		ASSERT(first >= 2 * 1024);
		wsr_waitgroup_add(many.wg, NPAIRS);
		for (i = 0; i < NPAIRS; i++)
			wsr_go(many_reader_g, (void *)(intptr_t)many.sv[i][0]);
		for (i = 0; i < 100; i++)
			wsr_yield(); /* let most of them park */
		for (i = 0; i < NPAIRS; i++)
			ASSERT_EQ(wsr_write(many.sv[i][1], "x", 1), 1);
		wsr_waitgroup_wait(many.wg);
		for (i = 0; i < NPAIRS; i++) {
			close(many.sv[i][0]);
			close(many.sv[i][1]);
		}
	}
	wsr_waitgroup_free(many.wg);
	free(many.sv);
	return 0;
}

static void many_fds(const char *name, int procs)
{
	struct rlimit rl;

	ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < 2 * NPAIRS + 64) {
		if (rl.rlim_max < 2 * NPAIRS + 64)
			wsrtest_skip("RLIMIT_NOFILE too low for the many-fds case");
		rl.rlim_cur = rl.rlim_max;
		ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
	}
	st_run(name, procs, many_fds_main, NULL, 25);
}

WSR_TEST_TIMEOUT(many_fds_parked_then_reused_p1, 30)
{
	many_fds("many_fds_parked_then_reused_p1", 1);
}

WSR_TEST_TIMEOUT(many_fds_parked_then_reused_p2, 30)
{
	many_fds("many_fds_parked_then_reused_p2", 2);
}

/* NBALLS bytes bounce between the two ends of NPAIRS2 socket pairs, a G on
 * each end reading one byte and writing it back, ROUNDS times. Every read
 * but the first finds the buffer empty and parks while the peer's write may
 * be landing: the edge of that write must wake it, whether it comes before
 * the EAGAIN, between the EAGAIN and the park, or after. */
#define NPAIRS2 16
#define ROUNDS 3000

static wsr_waitgroup *bounce_wg;

static void bounce_g(void *arg)
{
	int fd = (int)(intptr_t)arg, i;
	char c = 'b';

	for (i = 0; i < ROUNDS; i++) {
		ASSERT_EQ(wsr_read(fd, &c, 1), 1);
		ASSERT_EQ(wsr_write(fd, &c, 1), 1);
	}
	wsr_waitgroup_done(bounce_wg);
}

static int bounce_main(void *arg)
{
	int sv[NPAIRS2][2], i;
	char c;

	(void)arg;
	bounce_wg = wsr_waitgroup_make();
	wsr_waitgroup_add(bounce_wg, 2 * NPAIRS2);
	for (i = 0; i < NPAIRS2; i++) {
		ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]), 0);
		wsr_go(bounce_g, (void *)(intptr_t)sv[i][0]);
		wsr_go(bounce_g, (void *)(intptr_t)sv[i][1]);
		ASSERT_EQ(write(sv[i][1], "b", 1), 1); /* the ball, for sv[i][0] */
	}
	wsr_waitgroup_wait(bounce_wg);
	for (i = 0; i < NPAIRS2; i++) {
		/* The last write of sv[i][1]'s G is still unread. */
		ASSERT_EQ(read(sv[i][0], &c, 1), 1);
		close(sv[i][0]);
		close(sv[i][1]);
	}
	wsr_waitgroup_free(bounce_wg);
	return 0;
}

WSR_TEST_TIMEOUT(edge_triggered_bounce_p2, 30)
{
	st_run("edge_triggered_bounce_p2", 2, bounce_main, NULL, 25);
}

WSR_TEST_TIMEOUT(edge_triggered_bounce_p8, 30)
{
	st_run("edge_triggered_bounce_p8", 8, bounce_main, NULL, 25);
}

/* A P whose G runs without a yield point (a kernel that stopped its thread
 * looks the same to the others: a P whose ring does not move) while the
 * other P always finds the next G in the poller: the Gs in the first P's
 * ring must not wait for the hog. The other P never runs out of work, so it
 * never spins and steals; it must take them from the stalled ring before it
 * polls (steal.c, wsr__stealstalled). Before that, the hog below waited
 * forever for the G it had queued. */
static atomic_int stall_ran, stall_stop;
static wsr_chan *stall_done;

static void stall_queued_g(void *arg)
{
	(void)arg;
	atomic_store(&stall_ran, 1);
}

static void stall_next_g(void *arg)
{
	(void)arg;
}

static void stall_hog_g(void *arg)
{
	int one = 1;

	(void)arg;
	/* The first goes to runnext, the second kicks it into the ring. */
	wsr_go(stall_queued_g, NULL);
	wsr_go(stall_next_g, NULL);
	while (!atomic_load(&stall_ran))
		;
	wsr_chan_send(stall_done, &one);
}

static void stall_bounce_g(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char c;

	/* Until main shuts the pair down (EOF or EPIPE). */
	while (wsr_read(fd, &c, 1) == 1 && wsr_write(fd, &c, 1) == 1)
		;
	ASSERT(atomic_load(&stall_stop));
	wsr_waitgroup_done(bounce_wg);
}

static int stalled_p_main(void *arg)
{
	int sv[2], v, i;

	(void)arg;
	signal(SIGPIPE, SIG_IGN);
	stall_done = wsr_chan_make(sizeof(int), 0);
	bounce_wg = wsr_waitgroup_make();
	wsr_waitgroup_add(bounce_wg, 2);
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	wsr_go(stall_bounce_g, (void *)(intptr_t)sv[0]);
	wsr_go(stall_bounce_g, (void *)(intptr_t)sv[1]);
	ASSERT_EQ(write(sv[1], "b", 1), 1);
	for (i = 0; i < 100; i++)
		wsr_yield(); /* the bounce is under way on some P */
	wsr_go(stall_hog_g, NULL);
	ASSERT_EQ(wsr_chan_recv(stall_done, &v), 1);
	atomic_store(&stall_stop, 1);
	/* Stop the bounce: both ends see EOF, or EPIPE on a write. */
	ASSERT_EQ(shutdown(sv[0], SHUT_RDWR), 0);
	wsr_waitgroup_wait(bounce_wg);
	close(sv[0]);
	close(sv[1]);
	wsr_waitgroup_free(bounce_wg);
	wsr_chan_free(stall_done);
	return 0;
}

WSR_TEST_TIMEOUT(busy_poller_takes_gs_of_a_stalled_p_p2, 30)
{
	st_run("busy_poller_takes_gs_of_a_stalled_p_p2", 2, stalled_p_main, NULL, 20);
}
