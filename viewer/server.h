/*
 * server.h - the viewer's HTTP server (libmicrohttpd) on 127.0.0.1.
 *
 * Invariants:
 *   - Bound to 127.0.0.1 only; port 0 asks the kernel for a free port and
 *     server_start() reads the bound port back (getsockname) before the
 *     server threads start.
 *   - Every request without exactly one Host header, "127.0.0.1:PORT" or
 *     "localhost:PORT", is refused with 421 (a DNS-rebinding page would send
 *     its own host name; a second Host is refused whatever its order).
 *   - Cross-site requests are refused (403): an Origin other than this
 *     server; for /api/, a Sec-Fetch-Site other than same-origin or none,
 *     and a missing or wrong per-run token (X-WSR-Token, random, in the URL
 *     fragment the server prints: a page elsewhere cannot read it).
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

/* The per-run token: random bytes, sent by the page in this header. */
#define SERVER_TOKEN_BYTES  16
#define SERVER_TOKEN_HEADER "X-WSR-Token"

struct server {
	struct MHD_Daemon *daemon;
	struct api *api;
	struct console console; /* /api/sql */
	int console_started;
	uint16_t port;
	char host[32], host_lh[32]; /* the Host headers accepted: 127.0.0.1:PORT, localhost:PORT */
	char token[2 * SERVER_TOKEN_BYTES + 1]; /* this run's token, hex */
	char url[128];                          /* http://127.0.0.1:PORT/#token=TOKEN */
};

int server_start(struct server *sv, struct api *api, uint16_t port, struct wsr_err *err);
void server_stop(struct server *sv);

#endif /* WSR_VIEWER_SERVER_H */
