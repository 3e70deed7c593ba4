/*
 * echo_server.c - a TCP echo server on the runtime: one listener G accepts
 * on 127.0.0.1:PORT with wsr_accept and spawns one G per connection, which
 * echoes with wsr_read / wsr_write until the peer closes.
 *
 * Schedule it provokes: netpoll-driven scheduling. Almost every G is parked
 * in IO wait; findrunnable's non-blocking poll and the one M blocked in
 * epoll_pwait2 ready them (g_run source "netpoll"), often in batches that go
 * through the global queue to idle Ps; accept bursts spawn Gs that fan out
 * by stealing. With nothing runnable, the last M sleeps in epoll instead of
 * parking, so the deadlock detector must stay quiet.
 * Usage: echo_server [PORT [MAXCONNS]]  (PORT 0 picks a free one; MAXCONNS 0
 * serves forever, otherwise the server stops accepting after that many
 * connections and exits when they are all done).
 * Prints "listening on 127.0.0.1:PORT" (flushed) at start and, at exit, the
 * connections served and bytes echoed; exits 1 on an I/O error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <wsr.h>

static _Atomic uint64_t bytes_echoed;
static _Atomic long nerrors;
static wsr_waitgroup *conns;

static void serve(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char buf[4096];
	ssize_t n;

	for (;;) {
		n = wsr_read(fd, buf, sizeof(buf));
		if (n == 0)
			break;
		if (n < 0) {
			if (errno != ECONNRESET) {
				perror("echo_server: read");
				nerrors++;
			}
			break;
		}
		if (wsr_write(fd, buf, (size_t)n) != n) {
			perror("echo_server: write");
			nerrors++;
			break;
		}
		bytes_echoed += (uint64_t)n;
	}
	close(fd);
	wsr_waitgroup_done(conns);
}

struct opts {
	int port;
	long maxconns;
};

static int main_g(void *arg)
{
	struct opts *o = arg;
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int one = 1, lfd, fd;
	long served = 0;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0) {
		perror("echo_server: socket");
		return 1;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)o->port);
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 4096) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len) != 0) {
		perror("echo_server: bind/listen");
		return 1;
	}
	conns = wsr_waitgroup_make();
	printf("listening on 127.0.0.1:%d\n", ntohs(sa.sin_port));
	fflush(stdout);
	while (o->maxconns == 0 || served < o->maxconns) {
		fd = wsr_accept(lfd, NULL, NULL);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE) {
				/* Out of fds: let the connection Gs close some. */
				wsr_sleep_ns(1000000);
				continue;
			}
			perror("echo_server: accept");
			nerrors++;
			break;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		served++;
		wsr_waitgroup_add(conns, 1);
		wsr_go(serve, (void *)(intptr_t)fd);
	}
	close(lfd);
	wsr_waitgroup_wait(conns);
	wsr_waitgroup_free(conns);
	printf("connections = %ld\n", served);
	printf("bytes echoed = %" PRIu64 "\n", (uint64_t)bytes_echoed);
	return nerrors != 0;
}

int main(int argc, char **argv)
{
	struct opts o = {0, 0};
	struct rlimit rl;

	if (argc > 1)
		o.port = atoi(argv[1]);
	if (argc > 2)
		o.maxconns = strtol(argv[2], NULL, 10);
	if (o.port < 0 || o.port > 65535 || o.maxconns < 0) {
		fprintf(stderr, "usage: echo_server [PORT [MAXCONNS]]\n");
		return 2;
	}
	/* One fd per connection: take the whole hard limit. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	return wsr_main(main_g, &o);
}
