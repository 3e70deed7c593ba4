/*
 * server.c - HTTP front of the viewer: Host check, embedded assets, /api/.
 *
 * Security model (docs/viewer.md):
 *   - Loopback only: the listening socket is bound to 127.0.0.1, never to
 *     INADDR_ANY, so no other machine can connect.
 *   - DNS rebinding: a hostile page whose name is re-pointed at 127.0.0.1
 *     reaches this port with its own name in Host; every request without
 *     exactly one Host, "127.0.0.1:PORT" or "localhost:PORT", gets 421
 *     Misdirected Request before any routing (guard()).
 *   - Cross-site requests (guard()): an Origin other than this server is
 *     403; /api/ also needs Sec-Fetch-Site same-origin or none (if sent)
 *     and the per-run token in X-WSR-Token, which only the printed URL's
 *     fragment carries.
 *   - No file serving: URL paths map to the embedded assets or to api.c;
 *     everything else is 404, so there is no path to traverse.
 *   - The database is opened read-only with a read-only authorizer (rodb.c).
 *   - Answers carry a Content-Security-Policy (self only, no framing),
 *     nosniff and no-referrer headers.
 * Invariants:
 *   - Every response is created, queued and destroyed in handle(); a failed
 *     allocation yields MHD_NO (libmicrohttpd then closes the connection).
 * Concurrency: libmicrohttpd's internal thread pool (SERVER_THREADS) calls
 *   handle() concurrently; api.c locks each SQLite connection and reads the
 *   immutable store without locks; sv is complete before the first worker
 *   starts (server_start() binds the socket itself) and read-only afterwards.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "assets.h"
#include "server.h"

#define STR_(x) #x
#define STR(x)  STR_(x)
#define CONSOLE_BUSY                                                                               \
	"{\"error\":\"busy: " STR(CONSOLE_QUEUE) " console queries are already waiting; "          \
	"try again when one is done\"}"

/*
 * The HTTP threads only answer from memory or with one bounded query: the
 * console's queries run on console.c's threads while their connection is
 * suspended, so 4 is plenty.
 */
#define SERVER_THREADS 4
/*
 * Connections: many more than a browser opens, so that idle or half-sent
 * ones cannot lock the page out (64 of them did, for the 60 s timeout), and
 * a short idle timeout. Every client is 127.0.0.1, so a per-IP limit would be
 * the same limit. Capped by the descriptors the process may open.
 */
#define SERVER_MAX_CONNECTIONS 1000
#define SERVER_IDLE_TIMEOUT_S  10

#define CSP                                                                                        \
	"default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "                \
	"img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; "     \
	"form-action 'none'"

const struct viewer_asset *assets_find(const char *path)
{
	if (strcmp(path, "/") == 0)
		path = "/index.html";
	for (const struct viewer_asset *a = viewer_assets; a->path != NULL; a++)
		if (strcmp(a->path, path) == 0)
			return a;
	return NULL;
}

static void add_headers(struct MHD_Response *r, const char *mime)
{
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, mime);
	MHD_add_response_header(r, "Content-Security-Policy", CSP);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Cache-Control", "no-store");
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status, const char *mime,
			     void *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (r == NULL) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	add_headers(r, mime);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned int status, const char *msg)
{
	return reply(c, status, "text/plain; charset=utf-8", (void *)msg, strlen(msg),
		     MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result reply_json(struct MHD_Connection *c, unsigned int status, const char *msg)
{
	return reply(c, status, "application/json; charset=utf-8", (void *)msg, strlen(msg),
		     MHD_RESPMEM_PERSISTENT);
}

/*
 * The request headers that decide whether a request is ours: how many of
 * each there are (a duplicate is refused whatever its order) and the value.
 */
struct guard_headers {
	int host, origin, site, token;
	const char *host_v, *origin_v, *site_v, *token_v;
};

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
				    const char *value)
{
	struct guard_headers *h = cls;

	(void)kind;
	if (key == NULL)
		return MHD_YES;
	if (strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0) {
		h->host++;
		h->host_v = value;
	} else if (strcasecmp(key, "Origin") == 0) {
		h->origin++;
		h->origin_v = value;
	} else if (strcasecmp(key, "Sec-Fetch-Site") == 0) {
		h->site++;
		h->site_v = value;
	} else if (strcasecmp(key, SERVER_TOKEN_HEADER) == 0) {
		h->token++;
		h->token_v = value;
	}
	return MHD_YES;
}

/* Compares without stopping at the first difference (the token is a secret). */
static int same_secret(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d = la != lb;

	for (size_t i = 0; i < la && i < lb; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

/*
 * 0 if the request may be answered, else the status of the refusal (and
 * *why): 421 unless there is exactly one Host and it is 127.0.0.1:PORT or
 * localhost:PORT (DNS rebinding); 403 for an Origin other than this server
 * (as named by Host); for /api/, 403 unless Sec-Fetch-Site (if sent) is
 * same-origin or none and the one X-WSR-Token header is this run's token.
 */
static unsigned int guard(const struct server *sv, struct MHD_Connection *c, int api,
			  const char **why)
{
	struct guard_headers h = {0};
	char origin[64];

	MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &h);
	if (h.host != 1 || h.host_v == NULL ||
	    (strcmp(h.host_v, sv->host) != 0 && strcmp(h.host_v, sv->host_lh) != 0)) {
		*why = "421 Misdirected Request: this server answers only to one Host: "
		       "127.0.0.1:PORT or localhost:PORT\n";
		return MHD_HTTP_MISDIRECTED_REQUEST;
	}
	snprintf(origin, sizeof(origin), "http://%s", h.host_v);
	if (h.origin > 1 || (h.origin == 1 && (h.origin_v == NULL || strcmp(h.origin_v, origin) != 0))) {
		*why = "{\"error\":\"403 Forbidden: cross-origin request\"}";
		return MHD_HTTP_FORBIDDEN;
	}
	if (!api)
		return 0;
	if (h.site > 1 || (h.site == 1 && (h.site_v == NULL || (strcmp(h.site_v, "same-origin") != 0 &&
							       strcmp(h.site_v, "none") != 0)))) {
		*why = "{\"error\":\"403 Forbidden: cross-site request\"}";
		return MHD_HTTP_FORBIDDEN;
	}
	if (h.token != 1 || h.token_v == NULL || !same_secret(h.token_v, sv->token)) {
		*why = "{\"error\":\"403 Forbidden: missing or wrong " SERVER_TOKEN_HEADER
		       " (open the URL that wsr view printed: it carries the token)\"}";
		return MHD_HTTP_FORBIDDEN;
	}
	return 0;
}

static const char *get_arg(void *ctx, const char *name)
{
	return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, name);
}

/*
 * A console query in flight: the connection is suspended from the moment it
 * is queued until its answer is in (sql_done, on a console thread, resumes
 * it), so no HTTP thread waits for it. lock orders the suspend in handle()
 * before the resume in sql_done(), which may come first otherwise.
 */
struct sql_req {
	pthread_mutex_t lock;
	struct MHD_Connection *c;
	int suspended, done, status; /* under lock */
	char *body;                  /* under lock; the answer, once done */
	size_t len;
};

static void sql_done(void *arg, int status, char *body, size_t len)
{
	struct sql_req *r = arg;

	pthread_mutex_lock(&r->lock);
	r->status = status;
	r->body = body;
	r->len = len;
	r->done = 1;
	if (r->suspended) {
		r->suspended = 0;
		MHD_resume_connection(r->c);
	}
	pthread_mutex_unlock(&r->lock);
}

/* Called by libmicrohttpd when a request ends, however it ends. */
static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct sql_req *r = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (r == NULL)
		return;
	/* sql_done() may still be inside its critical section: wait it out. */
	pthread_mutex_lock(&r->lock);
	pthread_mutex_unlock(&r->lock);
	pthread_mutex_destroy(&r->lock);
	free(r->body);
	free(r);
	*con_cls = NULL;
}

/* /api/sql: queue the query and suspend, or (called again) send the answer. */
static enum MHD_Result handle_sql(struct server *sv, struct MHD_Connection *c, void **con_cls)
{
	struct sql_req *r = *con_cls;
	const char *q;

	if (r != NULL) {
		char *body;
		size_t len;
		int status;

		pthread_mutex_lock(&r->lock);
		if (!r->done) {
			pthread_mutex_unlock(&r->lock);
			return MHD_YES;
		}
		body = r->body;
		len = r->len;
		status = r->status;
		r->body = NULL;
		pthread_mutex_unlock(&r->lock);
		return reply(c, (unsigned int)status, "application/json; charset=utf-8", body, len,
			     MHD_RESPMEM_MUST_FREE);
	}
	q = get_arg(c, "q");
	if (q == NULL)
		return reply_json(c, MHD_HTTP_BAD_REQUEST, "{\"error\":\"bad arguments\"}");
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return MHD_NO;
	pthread_mutex_init(&r->lock, NULL);
	r->c = c;
	*con_cls = r;
	pthread_mutex_lock(&r->lock);
	if (console_submit(&sv->console, q, sql_done, r) < 0) {
		pthread_mutex_unlock(&r->lock);
		return reply_json(c, MHD_HTTP_SERVICE_UNAVAILABLE, CONSOLE_BUSY);
	}
	MHD_suspend_connection(c);
	r->suspended = 1;
	pthread_mutex_unlock(&r->lock);
	return MHD_YES;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_size, void **con_cls)
{
	struct server *sv = cls;
	const struct viewer_asset *a;
	const char *why = NULL;
	unsigned int refused;

	(void)version;
	(void)upload_data;
	refused = guard(sv, c, strncmp(url, "/api/", 5) == 0, &why);
	if (refused == MHD_HTTP_MISDIRECTED_REQUEST)
		return reply_text(c, refused, why);
	if (refused != 0)
		return reply_json(c, refused, why);
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "405 Method Not Allowed\n");
	if (*upload_size != 0)
		return reply_text(c, MHD_HTTP_BAD_REQUEST, "400 Bad Request\n");
	if (strcmp(url, "/api/sql") == 0)
		return handle_sql(sv, c, con_cls);
	if (strncmp(url, "/api/", 5) == 0) {
		struct sbuf out;
		int status;
		char *body;
		size_t len;

		sb_init(&out);
		status = api_handle(sv->api, url + 5, get_arg, c, &out);
		if (out.oom) {
			sb_free(&out);
			return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
		}
		body = sb_steal(&out, &len);
		return reply(c, (unsigned int)status, "application/json; charset=utf-8", body, len,
			     MHD_RESPMEM_MUST_FREE);
	}
	a = assets_find(url);
	if (a == NULL)
		return reply_text(c, MHD_HTTP_NOT_FOUND, "404 Not Found\n");
	return reply(c, MHD_HTTP_OK, a->mime, (void *)a->data, a->len, MHD_RESPMEM_PERSISTENT);
}

/* SERVER_MAX_CONNECTIONS, or fewer if the descriptor limit (raised to its hard limit) is low. */
static unsigned int max_connections(void)
{
	struct rlimit rl;
	rlim_t want = SERVER_MAX_CONNECTIONS + 64; /* the database, the console, pipes... */

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 64;
	if (rl.rlim_cur < want && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur >= want)
		return SERVER_MAX_CONNECTIONS;
	return rl.rlim_cur > 128 ? (unsigned int)(rl.rlim_cur - 64) : 64;
}

/*
 * The listening socket is made here, not by libmicrohttpd, so that the port
 * (and so the one accepted Host) is known before any worker thread runs:
 * handle() then reads sv->host without a lock.
 */
int server_start(struct server *sv, struct api *api, uint16_t port, struct wsr_err *err)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd = -1, one = 1;

	memset(sv, 0, sizeof(*sv));
	sv->api = api;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		err_push(err, "socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, SOMAXCONN) < 0) {
		err_push(err, "cannot listen on 127.0.0.1:%u: %s", (unsigned)port, strerror(errno));
		close(fd);
		return -1;
	}
	if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0 || ntohs(sa.sin_port) == 0) {
		err_push(err, "cannot read back the listening port: %s", strerror(errno));
		close(fd);
		return -1;
	}
	sv->port = ntohs(sa.sin_port);
	snprintf(sv->host, sizeof(sv->host), "127.0.0.1:%u", (unsigned)sv->port);
	snprintf(sv->host_lh, sizeof(sv->host_lh), "localhost:%u", (unsigned)sv->port);
	{
		unsigned char rnd[SERVER_TOKEN_BYTES];
		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
			err_push(err, "cannot make the access token: %s", strerror(errno));
			close(fd);
			return -1;
		}
		for (size_t i = 0; i < sizeof(rnd); i++)
			snprintf(sv->token + 2 * i, 3, "%02x", rnd[i]);
	}
	snprintf(sv->url, sizeof(sv->url), "http://%s/#token=%s", sv->host, sv->token);
	if (console_start(&sv->console, api->path, err) < 0) {
		close(fd);
		return -1;
	}
	sv->console_started = 1;
	/* libmicrohttpd owns fd from here: MHD_stop_daemon() closes it. */
	sv->daemon = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
			MHD_USE_ERROR_LOG,
		0, NULL, NULL, handle, sv, MHD_OPTION_LISTEN_SOCKET, fd,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)SERVER_THREADS,
		MHD_OPTION_CONNECTION_LIMIT, max_connections(),
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)SERVER_IDLE_TIMEOUT_S,
		MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_END);
	if (sv->daemon == NULL) {
		err_push(err, "cannot start the HTTP server on 127.0.0.1:%u", (unsigned)sv->port);
		close(fd);
		server_stop(sv);
		return -1;
	}
	return 0;
}

/*
 * The console first: it answers every query it accepted, which resumes each
 * suspended connection (libmicrohttpd must not be stopped with one).
 */
void server_stop(struct server *sv)
{
	if (sv->console_started)
		console_stop(&sv->console);
	sv->console_started = 0;
	if (sv->daemon != NULL)
		MHD_stop_daemon(sv->daemon);
	sv->daemon = NULL;
}
