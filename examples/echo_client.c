/*
 * echo_client.c - a load client for echo_server, on the runtime too: C
 * connection Gs connect at once (wsr_connect), each sends M bytes as
 * requests of R bytes (wsr_write, then wsr_read until the R bytes are back)
 * and checks every byte against its own pattern.
 *
 * Schedule it provokes: C Gs parked in netpoll at the same time, readied in
 * batches by epoll; connect bursts; the client and server each keep an M
 * blocked in epoll while their other Ps steal the readied Gs.
 * Usage: echo_client PORT [C [M [R]]]  (defaults 100 connections, 65536
 * bytes each, 512-byte requests).
 * Prints requests/s, the connections that completed and the bytes verified;
 * exits 1 if any connection failed or any byte came back wrong.
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
#include <time.h>
#include <unistd.h>

#include <wsr.h>

struct opts {
	int port;
	long nconn, bytes, reqsize;
};

static struct opts o;
static _Atomic long ok_conns, bad_conns, requests;
static _Atomic uint64_t bytes_ok;
static wsr_waitgroup *wg;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Byte i of connection id's stream: differs per connection and per offset. */
static unsigned char pattern(long id, long i)
{
	uint64_t x = (uint64_t)id * 0x9E3779B97F4A7C15ULL + (uint64_t)i;

	x ^= x >> 31;
	x *= 0xBF58476D1CE4E5B9ULL;
	return (unsigned char)(x >> 56);
}

static int run_conn(long id)
{
	unsigned char *out = malloc((size_t)o.reqsize), *in = malloc((size_t)o.reqsize);
	struct sockaddr_in sa;
	long off = 0, k, got;
	int fd, one = 1, rc = -1;
	ssize_t n;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || out == NULL || in == NULL) {
		perror("echo_client: socket");
		goto out;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)o.port);
	if (wsr_connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		perror("echo_client: connect");
		goto out;
	}
	while (off < o.bytes) {
		long len = o.bytes - off < o.reqsize ? o.bytes - off : o.reqsize;

		for (k = 0; k < len; k++)
			out[k] = pattern(id, off + k);
		if (wsr_write(fd, out, (size_t)len) != len) {
			perror("echo_client: write");
			goto out;
		}
		for (got = 0; got < len; got += n) {
			n = wsr_read(fd, in + got, (size_t)(len - got));
			if (n <= 0) {
				fprintf(stderr, "echo_client: conn %ld: %s at byte %ld\n", id,
					n == 0 ? "early EOF" : strerror(errno), off + got);
				goto out;
			}
		}
		for (k = 0; k < len; k++)
			if (in[k] != out[k]) {
				fprintf(stderr, "echo_client: conn %ld: byte %ld is %u, want %u\n",
					id, off + k, in[k], out[k]);
				goto out;
			}
		off += len;
		bytes_ok += (uint64_t)len;
		requests++;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(out);
	free(in);
	return rc;
}

static void conn_g(void *arg)
{
	if (run_conn((long)(intptr_t)arg) == 0)
		ok_conns++;
	else
		bad_conns++;
	wsr_waitgroup_done(wg);
}

static int main_g(void *arg)
{
	double t0, dt;
	long i;

	(void)arg;
	wg = wsr_waitgroup_make();
	t0 = now_s();
	wsr_waitgroup_add(wg, o.nconn);
	for (i = 0; i < o.nconn; i++)
		wsr_go(conn_g, (void *)(intptr_t)i);
	wsr_waitgroup_wait(wg);
	dt = now_s() - t0;
	wsr_waitgroup_free(wg);
	printf("gomaxprocs = %d\n", wsr_gomaxprocs());
	printf("connections ok = %ld of %ld\n", (long)ok_conns, o.nconn);
	printf("bytes verified = %" PRIu64 "\n", (uint64_t)bytes_ok);
	printf("requests = %ld\n", (long)requests);
	printf("requests/s = %.0f\n", dt > 0 ? (double)requests / dt : 0.0);
	if (bad_conns != 0 || ok_conns != o.nconn ||
	    bytes_ok != (uint64_t)o.nconn * (uint64_t)o.bytes) {
		fprintf(stderr, "echo_client: %ld connections failed\n", (long)bad_conns);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct rlimit rl;

	if (argc < 2) {
		fprintf(stderr, "usage: echo_client PORT [C [M [R]]]\n");
		return 2;
	}
	o.port = atoi(argv[1]);
	o.nconn = argc > 2 ? strtol(argv[2], NULL, 10) : 100;
	o.bytes = argc > 3 ? strtol(argv[3], NULL, 10) : 65536;
	o.reqsize = argc > 4 ? strtol(argv[4], NULL, 10) : 512;
	if (o.port <= 0 || o.port > 65535 || o.nconn < 1 || o.bytes < 0 || o.reqsize < 1) {
		fprintf(stderr, "usage: echo_client PORT [C [M [R]]]\n");
		return 2;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	return wsr_main(main_g, NULL);
}
