/*
 * httpd.c - an HTTP/1.1 server on the runtime: one listener G accepts on
 * 127.0.0.1:PORT and spawns one G per connection, which parses requests
 * with libhttp_parser (Debian's libhttp-parser-dev) and answers them, with
 * keep-alive and pipelining; a signal G stops it on SIGINT or SIGTERM.
 *
 * Routes (GET and HEAD; another method gets 405, another path 404):
 *   /      "Hello, World!\n", a small static body;
 *   /work  a little CPU work and a blocking call: one pread(2) of the first
 *          4 KiB of FILE inside wsr_blocking(), then ROUNDS rounds of a
 *          multiply-xor hash over those bytes; the body is
 *          "work=<16 hex digits>\n". bench/go/httpd does the same in Go, so
 *          both servers give the same body for the same FILE and ROUNDS.
 * The status line and headers are the ones Go's net/http writes for these
 * handlers, in its order (HTTP/1.0 answered as HTTP/1.0; Content-Type,
 * Date, Content-Length, then Connection when it matters), so the two
 * servers write the same bytes for / and /work.
 *
 * Protocol rules: a connection stays open after a response unless the
 * request asks otherwise (http_should_keep_alive: HTTP/1.1 without
 * "Connection: close", or HTTP/1.0 with "Connection: keep-alive"); the
 * response then says "Connection: close" and the connection is closed once
 * it is written. Pipelined requests are answered in order: the parser is
 * paused at the end of each message, the response is appended to the
 * connection's output buffer, and the buffer is written when every byte
 * read so far has been parsed (one write for a whole pipelined batch).
 * Request bodies (Content-Length or chunked) are parsed and discarded.
 * Malformed input gets 400, a request line plus headers longer than
 * MAX_HEADER bytes 431; both with "Connection: close", after the
 * responses to the requests before it.
 *
 * Shutdown (as Go's http.Server.Shutdown): SIGINT or SIGTERM, read from a
 * signalfd by the signal G (both are blocked in every thread: main blocks
 * them before wsr_main, and threads inherit the mask), shuts down the
 * listener, which wakes the accept, and the read side of every idle
 * connection (one waiting for its next request with nothing buffered);
 * busy ones close when their current responses are written. Then main
 * prints the counters and returns 0 (1 if an unexpected I/O error happened).
 *
 * Invariants:
 *   - A connection is in `conns_list` from before its first read until just
 *     before its fd is closed, so the signal G's shutdown(2) never hits a
 *     reused fd number.
 *   - idle/draining are a Dekker pair (seq_cst): a connection sets idle and
 *     then reads draining; the signal G sets draining and then reads idle;
 *     so either the connection sees draining and closes, or the signal G
 *     sees it idle and shuts its read side, which ends its wsr_read.
 *   - Counters are per connection, added to the totals under conns_mu when
 *     it closes (no shared atomic per request).
 * Concurrency: a struct conn belongs to its G, except its list links
 *   (conns_mu) and `idle` (atomic), which the signal G reads; opts, file_fd
 *   and listen_fd are written before the first wsr_go and only read after;
 *   `total` is read by main only after every connection G has finished.
 * Schedule it provokes: netpoll-driven scheduling under a request/response
 * load: each request readies a G from epoll (g_run source "netpoll"), the
 * G runs for a few microseconds and parks in IO wait again; /work adds a
 * short syscall section (wsr_syscall_enter/exit) per request.
 *
 * Usage: httpd [--port N] [--rounds N] [--file PATH]
 *   --port 0 (the default) picks a free port; --rounds defaults to 5000;
 *   --file defaults to /proc/self/exe.
 * Prints "listening on 127.0.0.1:PORT" (flushed) at start, and at exit the
 * connections, requests (parsed ones, and the malformed ones answered with
 * 400 or 431), responses written, responses lost (the peer had closed or
 * reset the connection), bad requests (400 and 431 sent) and I/O errors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <http_parser.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <wsr.h>

#define MAX_HEADER 8192   /* request line + headers, as counted by http_parser */
#define IN_SIZE    8192
#define OUT_SIZE   16384
#define MAX_RESP   512    /* the longest response this server writes */
#define WORK_BYTES 4096

static const char hello_body[] = "Hello, World!\n";

struct opts {
	int port;
	long rounds;
	const char *file;
};

struct stats {
	uint64_t conns, requests, responses, lost, bad, errors;
};

struct conn {
	int fd;
	http_parser parser;
	char url[MAX_HEADER];
	size_t urllen;
	bool url_overflow;
	bool complete;       /* a message was completed and the parser paused */
	bool in_message;     /* bytes of a request have been parsed, not its end */
	_Atomic int idle;    /* waiting for a request with nothing buffered */
	char out[OUT_SIZE];
	size_t outlen;
	time_t date_sec;     /* the second that `date` shows */
	char date[40];
	struct stats st;
	struct conn *prev, *next;
};

static struct opts opts = {0, 5000, "/proc/self/exe"};
static int file_fd = -1;
static int listen_fd = -1;
static _Atomic int draining;
static wsr_mutex *conns_mu;
static struct conn *conns_list;   /* under conns_mu */
static struct stats total;        /* under conns_mu */
static wsr_waitgroup *conns_wg;

static void conn_register(struct conn *c)
{
	wsr_mutex_lock(conns_mu);
	c->prev = NULL;
	c->next = conns_list;
	if (conns_list != NULL)
		conns_list->prev = c;
	conns_list = c;
	wsr_mutex_unlock(conns_mu);
}

static void conn_unregister(struct conn *c)
{
	wsr_mutex_lock(conns_mu);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		conns_list = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	total.conns++;
	total.requests += c->st.requests;
	total.responses += c->st.responses;
	total.lost += c->st.lost;
	total.bad += c->st.bad;
	total.errors += c->st.errors;
	wsr_mutex_unlock(conns_mu);
}

static int on_message_begin(http_parser *p)
{
	struct conn *c = p->data;

	c->urllen = 0;
	c->url_overflow = false;
	c->in_message = true;
	return 0;
}

static int on_url(http_parser *p, const char *at, size_t len)
{
	struct conn *c = p->data;

	/* Called once or more per URL (a read may split it). */
	if (len > sizeof(c->url) - 1 - c->urllen) {
		c->url_overflow = true;
		return 0;
	}
	memcpy(c->url + c->urllen, at, len);
	c->urllen += len;
	return 0;
}

static int on_message_complete(http_parser *p)
{
	struct conn *c = p->data;

	/* Stop here so that this request is answered before the next one in
	 * the buffer is parsed (and before a "Connection: close" one ends the
	 * connection). */
	c->complete = true;
	c->in_message = false;
	http_parser_pause(p, 1);
	return 0;
}

static http_parser_settings settings = {
	.on_message_begin = on_message_begin,
	.on_url = on_url,
	.on_message_complete = on_message_complete,
};

/* Writes the output buffer; false if the connection is gone. */
static bool conn_flush(struct conn *c)
{
	ssize_t n;

	if (c->outlen == 0)
		return true;
	n = wsr_write(c->fd, c->out, c->outlen);
	if (n != (ssize_t)c->outlen) {
		int e = wsr_errno();

		if (e == EPIPE || e == ECONNRESET)
			c->st.lost++;
		else {
			fprintf(stderr, "httpd: write: %s\n", strerror(e));
			c->st.errors++;
		}
		c->outlen = 0;
		return false;
	}
	c->outlen = 0;
	return true;
}

static const char *http_date(struct conn *c)
{
	time_t now = time(NULL);
	struct tm tm;

	if (now != c->date_sec) {
		gmtime_r(&now, &tm);
		strftime(c->date, sizeof(c->date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
		c->date_sec = now;
	}
	return c->date;
}

/* Appends one response; flushes first if it might not fit. */
static bool respond(struct conn *c, int status, const char *reason, const char *body,
		    size_t bodylen, bool head, bool keepalive, int http_minor, const char *extra)
{
	int n;

	if (sizeof(c->out) - c->outlen < MAX_RESP && !conn_flush(c))
		return false;
	n = snprintf(c->out + c->outlen, sizeof(c->out) - c->outlen,
		     "HTTP/1.%d %d %s\r\n%s"
		     "Content-Type: text/plain; charset=utf-8\r\n"
		     "Date: %s\r\n"
		     "Content-Length: %zu\r\n"
		     "%s"
		     "\r\n"
		     "%.*s",
		     http_minor == 0 ? 0 : 1, status, reason, extra, http_date(c), bodylen,
		     !keepalive ? "Connection: close\r\n" :
		     http_minor == 0 ? "Connection: keep-alive\r\n" : "",
		     head ? 0 : (int)bodylen, body);
	if (n < 0 || (size_t)n >= sizeof(c->out) - c->outlen) {
		/* MAX_RESP is too small for this response: a bug here. */
		fprintf(stderr, "httpd: response too long\n");
		abort();
	}
	c->outlen += (size_t)n;
	c->st.responses++;
	return true;
}

struct pread_args {
	void *buf;
	size_t len;
	ssize_t got;
	int err;
};

static void *do_pread(void *arg)
{
	struct pread_args *a = arg;

	a->got = pread(file_fd, a->buf, a->len, 0);
	a->err = a->got < 0 ? errno : 0;
	return NULL;
}

/* The /work handler's body: one blocking read, then the CPU work. */
static int work_body(char *body, size_t size)
{
	unsigned char buf[WORK_BYTES];
	struct pread_args a = {buf, sizeof(buf), 0, 0};
	uint64_t h = 14695981039346656037ull; /* FNV-1a offset basis and prime */
	size_t j = 0, n;

	wsr_blocking(do_pread, &a);
	if (a.got <= 0) {
		fprintf(stderr, "httpd: pread %s: %s\n", opts.file,
			a.got < 0 ? strerror(a.err) : "empty file");
		return -1;
	}
	n = (size_t)a.got;
	for (long i = 0; i < opts.rounds; i++) {
		h = (h ^ buf[j]) * 1099511628211ull;
		if (++j == n)
			j = 0;
	}
	return snprintf(body, size, "work=%016" PRIx64 "\n", h);
}

/* Answers the request the parser just completed; false to close. */
static bool handle(struct conn *c)
{
	http_parser *p = &c->parser;
	bool keepalive = http_should_keep_alive(p) && !p->upgrade && !atomic_load(&draining);
	bool head = p->method == HTTP_HEAD;
	struct http_parser_url u;
	const char *path = "";
	size_t pathlen = 0;
	char body[64];
	int n;

	c->st.requests++;
	if (c->url_overflow) {
		c->st.bad++;
		respond(c, 431, "Request Header Fields Too Large", "", 0, false, false,
			p->http_minor, "");
		return false;
	}
	http_parser_url_init(&u);
	if (http_parser_parse_url(c->url, c->urllen, p->method == HTTP_CONNECT, &u) != 0) {
		c->st.bad++;
		respond(c, 400, "Bad Request", "400 Bad Request", 15, head, false, p->http_minor, "");
		return false;
	}
	if (u.field_set & (1 << UF_PATH)) {
		path = c->url + u.field_data[UF_PATH].off;
		pathlen = u.field_data[UF_PATH].len;
	}
	if (p->method != HTTP_GET && !head) {
		if (!respond(c, 405, "Method Not Allowed", "405 method not allowed\n", 23, false,
			     keepalive, p->http_minor, "Allow: GET, HEAD\r\n"))
			return false;
	} else if (pathlen == 1 && path[0] == '/') {
		if (!respond(c, 200, "OK", hello_body, sizeof(hello_body) - 1, head, keepalive,
			     p->http_minor, ""))
			return false;
	} else if (pathlen == 5 && memcmp(path, "/work", 5) == 0) {
		n = work_body(body, sizeof(body));
		if (n < 0) {
			c->st.errors++;
			respond(c, 500, "Internal Server Error", "", 0, head, false, p->http_minor, "");
			return false;
		}
		if (!respond(c, 200, "OK", body, (size_t)n, head, keepalive, p->http_minor, ""))
			return false;
	} else {
		if (!respond(c, 404, "Not Found", "404 page not found\n", 19, head, keepalive,
			     p->http_minor, ""))
			return false;
	}
	return keepalive;
}

/* A parse error: 431 for oversized headers, 400 for the rest. */
static void reject(struct conn *c, enum http_errno e)
{
	c->st.requests++;
	c->st.bad++;
	if (e == HPE_HEADER_OVERFLOW)
		respond(c, 431, "Request Header Fields Too Large", "", 0, false, false, 1, "");
	else
		respond(c, 400, "Bad Request", "400 Bad Request", 15, false, false, 1, "");
}

static void serve(void *arg)
{
	struct conn *c = arg;
	char in[IN_SIZE];
	ssize_t n;

	http_parser_init(&c->parser, HTTP_REQUEST);
	c->parser.data = c;
	conn_register(c);
	for (;;) {
		size_t off = 0;

		/* Dekker with stop(): idle, then draining. */
		if (!c->in_message) {
			atomic_store(&c->idle, 1);
			if (atomic_load(&draining))
				break;
		}
		n = wsr_read(c->fd, in, sizeof(in));
		atomic_store(&c->idle, 0);
		if (n == 0)
			break;
		if (n < 0) {
			int e = wsr_errno();

			if (e != ECONNRESET) {
				fprintf(stderr, "httpd: read: %s\n", strerror(e));
				c->st.errors++;
			}
			break;
		}
		while (off < (size_t)n) {
			enum http_errno e;

			c->complete = false;
			off += http_parser_execute(&c->parser, &settings, in + off, (size_t)n - off);
			e = HTTP_PARSER_ERRNO(&c->parser);
			if (c->complete) {
				http_parser_pause(&c->parser, 0);
				if (!handle(c))
					goto done;
				continue;
			}
			if (e != HPE_OK) {
				reject(c, e);
				goto done;
			}
			/* The parser stops early only at the end of a message
			 * (above) or on an error; anything else would loop. */
			if (off < (size_t)n) {
				fprintf(stderr, "httpd: the parser stopped early\n");
				c->st.errors++;
				goto done;
			}
		}
		if (!conn_flush(c))
			goto closed;
	}
	goto closed;
done:
	conn_flush(c);
closed:
	conn_unregister(c);
	close(c->fd);
	free(c);
	wsr_waitgroup_done(conns_wg);
}

/* The signal G: waits for SIGINT or SIGTERM, then starts the shutdown. */
static void stop(void *arg)
{
	int sfd = (int)(intptr_t)arg;
	struct signalfd_siginfo si;
	struct conn *c;

	while (wsr_read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si)) {
		if (wsr_errno() != EINTR) {
			perror("httpd: signalfd read");
			exit(1);
		}
	}
	atomic_store(&draining, 1);
	/* Wakes the listener's wsr_accept (it then fails with EINVAL). */
	shutdown(listen_fd, SHUT_RD);
	wsr_mutex_lock(conns_mu);
	for (c = conns_list; c != NULL; c = c->next)
		if (atomic_load(&c->idle))
			shutdown(c->fd, SHUT_RD);
	wsr_mutex_unlock(conns_mu);
	close(sfd);
}

static int main_g(void *arg)
{
	int sfd = (int)(intptr_t)arg;
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int one = 1, fd;
	uint64_t errors = 0;

	file_fd = open(opts.file, O_RDONLY | O_CLOEXEC);
	if (file_fd < 0) {
		fprintf(stderr, "httpd: %s: %s\n", opts.file, strerror(errno));
		return 1;
	}
	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0) {
		perror("httpd: socket");
		return 1;
	}
	setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)opts.port);
	if (bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(listen_fd, 4096) != 0 ||
	    getsockname(listen_fd, (struct sockaddr *)&sa, &len) != 0) {
		perror("httpd: bind/listen");
		return 1;
	}
	conns_mu = wsr_mutex_make();
	conns_wg = wsr_waitgroup_make();
	wsr_go(stop, (void *)(intptr_t)sfd);
	printf("listening on 127.0.0.1:%d\n", ntohs(sa.sin_port));
	fflush(stdout);
	for (;;) {
		struct conn *c;

		fd = wsr_accept(listen_fd, NULL, NULL);
		if (fd < 0) {
			int e = wsr_errno();

			if (atomic_load(&draining))
				break;
			if (e == EMFILE || e == ENFILE) {
				/* Out of fds: let the connection Gs close some. */
				wsr_sleep_ns(1000000);
				continue;
			}
			fprintf(stderr, "httpd: accept: %s\n", strerror(e));
			errors++;
			break;
		}
		if (atomic_load(&draining)) {
			close(fd);
			break;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c = calloc(1, sizeof(*c));
		if (c == NULL) {
			fprintf(stderr, "httpd: out of memory\n");
			close(fd);
			errors++;
			break;
		}
		c->fd = fd;
		c->date_sec = (time_t)-1;
		wsr_waitgroup_add(conns_wg, 1);
		wsr_go(serve, c);
	}
	close(listen_fd);
	wsr_waitgroup_wait(conns_wg);
	wsr_waitgroup_free(conns_wg);
	close(file_fd);
	/* Every connection G has returned: total is no longer written. */
	printf("connections = %" PRIu64 "\n", total.conns);
	printf("requests = %" PRIu64 "\n", total.requests);
	printf("responses = %" PRIu64 "\n", total.responses);
	printf("responses lost = %" PRIu64 "\n", total.lost);
	printf("bad requests = %" PRIu64 "\n", total.bad);
	printf("io errors = %" PRIu64 "\n", total.errors + errors);
	return total.errors + errors != 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: httpd [--port N] [--rounds N] [--file PATH]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"port", required_argument, NULL, 'p'},
		{"rounds", required_argument, NULL, 'r'},
		{"file", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct rlimit rl;
	sigset_t set;
	char *end;
	long v;
	int ch, sfd;

	while ((ch = getopt_long(argc, argv, "p:r:f:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'p':
			v = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || v < 0 || v > 65535) {
				fprintf(stderr, "httpd: --port %s: want 0 to 65535\n", optarg);
				return 2;
			}
			opts.port = (int)v;
			break;
		case 'r':
			v = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || v < 0) {
				fprintf(stderr, "httpd: --rounds %s: want a count >= 0\n", optarg);
				return 2;
			}
			opts.rounds = v;
			break;
		case 'f':
			opts.file = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	/* One fd per connection: take the whole hard limit. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* A peer that resets a connection must cost an EPIPE, not the process. */
	signal(SIGPIPE, SIG_IGN);
	/* Blocked before the runtime starts its threads, so all inherit it. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0) {
		fprintf(stderr, "httpd: pthread_sigmask failed\n");
		return 1;
	}
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0) {
		perror("httpd: signalfd");
		return 1;
	}
	http_parser_set_max_header_size(MAX_HEADER);
	return wsr_main(main_g, (void *)(intptr_t)sfd);
}
