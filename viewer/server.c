/*
 * server.c - HTTP front of the viewer: Host check, embedded assets, /api/.
 *
 * Security model (docs/viewer.md):
 *   - Loopback only: the listening socket is bound to 127.0.0.1, never to
 *     INADDR_ANY, so no other machine can connect.
 *   - DNS rebinding: a hostile page whose name is re-pointed at 127.0.0.1
 *     reaches this port with its own name in Host; every request whose Host
 *     is not "127.0.0.1:PORT" gets 421 Misdirected Request before any
 *     routing.
 *   - No file serving: URL paths map to the embedded assets or to api.c;
 *     everything else is 404, so there is no path to traverse.
 *   - The database is opened read-only with a read-only authorizer (api.c).
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "assets.h"
#include "server.h"

/* Enough that a slow query (the console's limit is 2 s) never stalls the timeline. */
#define SERVER_THREADS 4

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

static const char *get_arg(void *ctx, const char *name)
{
	return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, name);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_size, void **con_cls)
{
	struct server *sv = cls;
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	const struct viewer_asset *a;

	(void)version;
	(void)upload_data;
	(void)con_cls;
	if (host == NULL || strcmp(host, sv->host) != 0)
		return reply_text(c, MHD_HTTP_MISDIRECTED_REQUEST,
				  "421 Misdirected Request: this server answers only to its "
				  "loopback address\n");
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "405 Method Not Allowed\n");
	if (*upload_size != 0)
		return reply_text(c, MHD_HTTP_BAD_REQUEST, "400 Bad Request\n");
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
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0) {
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
	/* libmicrohttpd owns fd from here: MHD_stop_daemon() closes it. */
	sv->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL,
				      NULL, handle, sv, MHD_OPTION_LISTEN_SOCKET, fd,
				      MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)SERVER_THREADS,
				      MHD_OPTION_CONNECTION_LIMIT, (unsigned int)64,
				      MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)60,
				      MHD_OPTION_END);
	if (sv->daemon == NULL) {
		err_push(err, "cannot start the HTTP server on 127.0.0.1:%u", (unsigned)sv->port);
		close(fd);
		return -1;
	}
	return 0;
}

void server_stop(struct server *sv)
{
	if (sv->daemon != NULL)
		MHD_stop_daemon(sv->daemon);
	sv->daemon = NULL;
}
