/*
 * server.h - the viewer's HTTP server (libmicrohttpd) on 127.0.0.1.
 *
 * Invariants:
 *   - Bound to 127.0.0.1 only; port 0 asks the kernel for a free port and
 *     server_start() reads the bound port back (getsockname) before the
 *     server threads start.
 *   - Every request whose Host header is not exactly "127.0.0.1:PORT" is
 *     refused with 421 (a DNS-rebinding page would send its own host name).
 *   - Only GET and HEAD; only the embedded assets and /api/NAME answers;
 *     nothing is read from the disk but the database.
 *   - /api/sql goes to the console (console.h): its own threads, connections
 *     and bounded queue; the connection is suspended meanwhile, so no HTTP
 *     thread waits for a console query, and a full queue is answered 503.
 *   - Many connections (SERVER_MAX_CONNECTIONS) with a short idle timeout,
 *     so idle or half-sent requests cannot lock the page out.
 * Concurrency: a pool of polling threads answers requests; struct api
 *   serialises each SQLite connection with its own mutex (api.h).
 */
#ifndef WSR_VIEWER_SERVER_H
#define WSR_VIEWER_SERVER_H

#include <stdint.h>

#include "api.h"
#include "console.h"
#include "err.h"

struct server {
	struct MHD_Daemon *daemon;
	struct api *api;
	struct console console; /* /api/sql */
	int console_started;
	uint16_t port;
	char host[32]; /* the one Host header accepted */
};

int server_start(struct server *sv, struct api *api, uint16_t port, struct wsr_err *err);
void server_stop(struct server *sv);

#endif /* WSR_VIEWER_SERVER_H */
