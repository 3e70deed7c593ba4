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
 * Invariants: every case checks that the numbers really were reused (else it
 *   would test nothing); nothing asserts on elapsed time.
 * Concurrency: the runtime's; at P=1 the partner runs only when main parks.
 */
#include <netinet/in.h>
#include <string.h>
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
