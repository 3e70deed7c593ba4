/*
 * chan.h - channel internals shared by chan.c and select.c (Go: chan.go's
 * hchan, sudog, waitq).
 *
 * Invariants: see chan.c.
 */
#ifndef WSR_RUNTIME_CHAN_H
#define WSR_RUNTIME_CHAN_H

#include <stdbool.h>
#include <stddef.h>

#include "gmp.h"

/* A G waiting on a channel (one per case for a select); lives on the
 * waiting G's stack while it is parked. Written by the G before it parks and
 * after it wakes; in between, only under c->lock. */
struct wsr_sudog {
	struct wsr_g *g;
	struct wsr_sudog *next, *prev;
	void *elem;		/* data to send, or where to receive (may be NULL) */
	struct wsr_chan *c;
	_Atomic int *selectdone; /* select: the waker that CASes 0 -> 1 wins */
	/* select: the next sudog of the same select on the same channel c (a
	 * ring), or NULL when c appears in one case only. The waker that wins
	 * takes them all off c, so the woken G never touches c again. */
	struct wsr_sudog *samec;
	int caseidx;
	bool isrecv;		/* on c->recvq (else c->sendq) */
	bool success;		/* true: a value moved; false: woken by close */
};

struct wsr_waitq {
	struct wsr_sudog *first, *last;
};

struct wsr_chan {
	struct wsr_lock lock;	/* guards everything below */
	size_t elemsize;
	size_t cap;		/* ring size; 0 for an unbuffered channel */
	size_t qcount;		/* values in the ring */
	size_t sendx, recvx;
	char *buf;
	bool closed;
	struct wsr_waitq recvq, sendq;
};

void wsr__waitq_enqueue(struct wsr_waitq *q, struct wsr_sudog *sg);
/* Caller holds q's channel lock. Removes and returns the first sudog whose G
 * can still be woken (a select that another channel already won is skipped);
 * for a select, also removes its other sudogs on the same channel (samec),
 * so that once the caller unlocks, the channel holds nothing of that G. */
struct wsr_sudog *wsr__waitq_dequeue(struct wsr_waitq *q);
void wsr__waitq_remove(struct wsr_waitq *q, struct wsr_sudog *sg);

/* Caller holds c->lock; both unlock it and ready the partner. */
void wsr__chan_send_direct(struct wsr_chan *c, struct wsr_sudog *sg, const void *elem);
void wsr__chan_recv_direct(struct wsr_chan *c, struct wsr_sudog *sg, void *elem);
/* Caller holds c->lock: ring ops. */
void wsr__chan_bufput(struct wsr_chan *c, const void *elem);
void wsr__chan_bufget(struct wsr_chan *c, void *elem);

#endif /* WSR_RUNTIME_CHAN_H */
