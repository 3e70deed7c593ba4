/*
 * chan.c - channels with Go's semantics (Go: chan.go): unbuffered and
 * buffered, FIFO wait queues, close wakes every waiter.
 *
 * Invariants:
 *   - qcount > 0 implies recvq is empty; qcount < cap implies sendq is empty
 *     (a waiting partner is always served before the ring).
 *   - A value moves exactly once: from the sender's elem to the ring or
 *     straight to a parked receiver's elem (or from a parked sender's elem),
 *     always under c->lock; the woken G finds sudog->success set.
 *   - A G readied by its communication partner goes to runnext and inherits
 *     the time slice, so a ping-pong pair runs as a unit on one P.
 *   - A channel and its ring are one allocation (buf points just past the
 *     header, or is NULL when cap or elemsize is 0).
 *   - Send on a closed channel returns -1 (Go panics); recv drains the ring,
 *     then returns 0 with elem zeroed; closing twice, or closing NULL, is
 *     fatal (Go panics); send and recv on NULL block for ever (as Go's).
 * Concurrency: everything under c->lock; a parking G's sudog is enqueued
 *   under the lock, which g0 releases only after the G's context is saved.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <wsr.h>

#include "chan.h"
#include "proc.h"

/* The header rounded up so that the ring after it is max-aligned. */
#define CHAN_HDR                                                                                   \
	((sizeof(struct wsr_chan) + _Alignof(max_align_t) - 1) / _Alignof(max_align_t) *           \
	 _Alignof(max_align_t))

wsr_chan *wsr_chan_make(size_t elem_size, size_t cap)
{
	wsr_chan *c;
	size_t bufsize;

	if (elem_size > (1u << 16) || (cap != 0 && elem_size != 0 && cap > SIZE_MAX / elem_size))
		return NULL;
	/* One block, as Go's makechan: the ring follows the header, aligned
	 * for any element type (CHAN_HDR). */
	bufsize = cap * elem_size;
	if (bufsize > SIZE_MAX - CHAN_HDR)
		return NULL;
	c = calloc(1, CHAN_HDR + bufsize);
	if (c == NULL)
		return NULL;
	c->elemsize = elem_size;
	c->cap = cap;
	if (bufsize > 0)
		c->buf = (char *)c + CHAN_HDR;
	wsr__lock_init(&c->lock);
	return c;
}

void wsr_chan_free(wsr_chan *c)
{
	if (c == NULL)
		return;
	if (c->recvq.first != NULL || c->sendq.first != NULL)
		wsr__throw("chan_free: Gs still wait on the channel");
	wsr__lock_destroy(&c->lock);
	free(c); /* the ring too: one block */
}

void wsr__waitq_enqueue(struct wsr_waitq *q, struct wsr_sudog *sg)
{
	sg->next = NULL;
	sg->prev = q->last;
	if (q->last != NULL)
		q->last->next = sg;
	else
		q->first = sg;
	q->last = sg;
}

void wsr__waitq_remove(struct wsr_waitq *q, struct wsr_sudog *sg)
{
	if (sg->prev != NULL)
		sg->prev->next = sg->next;
	else if (q->first == sg)
		q->first = sg->next;
	else
		return; /* not on this queue (already dequeued) */
	if (sg->next != NULL)
		sg->next->prev = sg->prev;
	else
		q->last = sg->prev;
	sg->next = sg->prev = NULL;
}

struct wsr_sudog *wsr__waitq_dequeue(struct wsr_waitq *q)
{
	for (;;) {
		struct wsr_sudog *sg = q->first;
		int zero = 0;

		if (sg == NULL)
			return NULL;
		q->first = sg->next;
		if (q->first != NULL)
			q->first->prev = NULL;
		else
			q->last = NULL;
		sg->next = sg->prev = NULL;
		if (sg->selectdone != NULL) {
			struct wsr_sudog *s;

			/* A select parked on several channels is won by one waker only. */
			if (!cas_seq(sg->selectdone, &zero, 1))
				continue;
			/* The select's other cases on this channel go with it: the
			 * woken G must not lock this channel again (select.c). */
			for (s = sg->samec; s != NULL && s != sg; s = s->samec)
				wsr__waitq_remove(s->isrecv ? &s->c->recvq : &s->c->sendq, s);
		}
		return sg;
	}
}

static void *slot(struct wsr_chan *c, size_t i)
{
	return c->buf + i * c->elemsize;
}

void wsr__chan_bufput(struct wsr_chan *c, const void *elem)
{
	if (c->elemsize > 0)
		memcpy(slot(c, c->sendx), elem, c->elemsize);
	if (++c->sendx == c->cap)
		c->sendx = 0;
	c->qcount++;
}

void wsr__chan_bufget(struct wsr_chan *c, void *elem)
{
	if (c->elemsize > 0) {
		if (elem != NULL)
			memcpy(elem, slot(c, c->recvx), c->elemsize);
		memset(slot(c, c->recvx), 0, c->elemsize);
	}
	if (++c->recvx == c->cap)
		c->recvx = 0;
	c->qcount--;
}

void wsr__chan_send_direct(struct wsr_chan *c, struct wsr_sudog *sg, const void *elem)
{
	struct wsr_g *gp = sg->g;

	if (sg->elem != NULL && c->elemsize > 0)
		memcpy(sg->elem, elem, c->elemsize);
	sg->success = true;
	gp->param = sg;
	wsr__unlock(&c->lock);
	wsr__goready(gp, true);
}

void wsr__chan_recv_direct(struct wsr_chan *c, struct wsr_sudog *sg, void *elem)
{
	struct wsr_g *gp = sg->g;

	if (c->cap == 0) {
		if (elem != NULL && c->elemsize > 0)
			memcpy(elem, sg->elem, c->elemsize);
	} else {
		/* The ring is full: take its head, put the sender's value at its tail
		 * (which is the same slot). */
		wsr__chan_bufget(c, elem);
		wsr__chan_bufput(c, sg->elem);
	}
	sg->success = true;
	gp->param = sg;
	wsr__unlock(&c->lock);
	wsr__goready(gp, true);
}

static bool chan_commit(struct wsr_g *gp, void *arg)
{
	struct wsr_chan *c = arg;

	(void)gp;
	wsr__unlock(&c->lock);
	return true;
}

static struct wsr_g *need_g(const char *what)
{
	struct wsr_g *gp = wsr__getg();

	if (gp == NULL)
		wsr__throw(what);
	return gp;
}

/* Send and receive on a NULL channel block for ever, as on Go's nil channel:
 * the G parks with nothing that could wake it, and if no other G can run the
 * deadlock report ends the program. */
static WSR_NORETURN void nilchan_block(struct wsr_g *gp)
{
	(void)gp;
	wsr__gopark(NULL, NULL, WR_CHAN);
	wsr__throw("chan: a G blocked on a nil channel was woken");
}

int wsr_chan_send(wsr_chan *c, const void *elem)
{
	struct wsr_g *gp = need_g("chan_send: called outside a G");
	struct wsr_sudog sg, *rsg;

	if (c == NULL)
		nilchan_block(gp);
	wsr__lock(&c->lock);
	if (c->closed) {
		wsr__unlock(&c->lock);
		return -1;
	}
	rsg = wsr__waitq_dequeue(&c->recvq);
	if (rsg != NULL) {
		wsr__chan_send_direct(c, rsg, elem);
		wsr__preempt_check();
		return 0;
	}
	if (c->qcount < c->cap) {
		wsr__chan_bufput(c, elem);
		wsr__unlock(&c->lock);
		wsr__preempt_check();
		return 0;
	}
	memset(&sg, 0, sizeof(sg));
	sg.g = gp;
	sg.elem = (void *)elem;
	sg.c = c;
	gp->param = NULL;
	wsr__waitq_enqueue(&c->sendq, &sg);
	wsr__gopark(chan_commit, c, WR_CHAN);
	wsr__preempt_check();
	return sg.success ? 0 : -1;
}

int wsr_chan_recv(wsr_chan *c, void *elem)
{
	struct wsr_g *gp = need_g("chan_recv: called outside a G");
	struct wsr_sudog sg, *ssg;

	if (c == NULL)
		nilchan_block(gp);
	wsr__lock(&c->lock);
	ssg = wsr__waitq_dequeue(&c->sendq);
	if (ssg != NULL) {
		wsr__chan_recv_direct(c, ssg, elem);
		wsr__preempt_check();
		return 1;
	}
	if (c->qcount > 0) {
		wsr__chan_bufget(c, elem);
		wsr__unlock(&c->lock);
		wsr__preempt_check();
		return 1;
	}
	if (c->closed) {
		wsr__unlock(&c->lock);
		if (elem != NULL && c->elemsize > 0)
			memset(elem, 0, c->elemsize);
		wsr__preempt_check();
		return 0;
	}
	memset(&sg, 0, sizeof(sg));
	sg.g = gp;
	sg.elem = elem;
	sg.c = c;
	gp->param = NULL;
	wsr__waitq_enqueue(&c->recvq, &sg);
	wsr__gopark(chan_commit, c, WR_CHAN);
	wsr__preempt_check();
	return sg.success ? 1 : 0;
}

void wsr_chan_close(wsr_chan *c)
{
	struct wsr_sudog *list = NULL, *sg;

	if (c == NULL)
		wsr__throw("chan_close: close of nil channel");
	wsr__lock(&c->lock);
	if (c->closed) {
		wsr__unlock(&c->lock);
		wsr__throw("chan_close: close of closed channel");
	}
	c->closed = true;
	while ((sg = wsr__waitq_dequeue(&c->recvq)) != NULL) {
		if (sg->elem != NULL && c->elemsize > 0)
			memset(sg->elem, 0, c->elemsize);
		sg->success = false;
		sg->g->param = sg;
		sg->next = list;
		list = sg;
	}
	while ((sg = wsr__waitq_dequeue(&c->sendq)) != NULL) {
		sg->success = false;
		sg->g->param = sg;
		sg->next = list;
		list = sg;
	}
	wsr__unlock(&c->lock);
	while (list != NULL) {
		sg = list;
		list = sg->next;
		/* sg lives on the woken G's stack: read it before readying. */
		wsr__goready(sg->g, false);
	}
	if (wsr__getg() != NULL)
		wsr__preempt_check();
}
