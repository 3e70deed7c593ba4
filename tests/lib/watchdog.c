/*
 * watchdog.c - see watchdog.h.
 *
 * Invariants: one detached thread per call; it never returns before the
 *   deadline, so a passing test simply exits past it.
 * Concurrency: reads only its own argument block.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "throw.h"
#include "watchdog.h"

struct wd {
	unsigned secs;
	char what[200];
};

static void *wd_thread(void *arg)
{
	struct wd *w = arg;
	struct timespec ts = {(time_t)w->secs, 0};
	char msg[256];

	while (nanosleep(&ts, &ts) != 0)
		;
	snprintf(msg, sizeof(msg), "watchdog: %s hung for %u s", w->what, w->secs);
	wsr__throw(msg);
	return NULL;
}

void wsrtest_watchdog(unsigned secs, const char *what)
{
	const char *m = getenv("WSR_TEST_TIMEOUT_MULTIPLIER");
	struct wd *w = calloc(1, sizeof(*w));
	pthread_t t;

	if (w == NULL)
		abort();
	w->secs = secs * (unsigned)(m != NULL && atoi(m) > 0 ? atoi(m) : 1);
	snprintf(w->what, sizeof(w->what), "%s", what);
	if (pthread_create(&t, NULL, wd_thread, w) != 0)
		abort();
	pthread_detach(t);
}
