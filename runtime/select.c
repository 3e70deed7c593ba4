/*
 * select.c - wsr_select (Go: select.go's selectgo): waits on several channel
 * operations and runs exactly one, chosen uniformly at random among the
 * ready ones.
 *
 * Invariants:
 *   - Channels are locked in address order (each once), so two selects over
 *     the same channels cannot deadlock; cases are polled in a random order.
 *   - When parked, the G has one sudog per case enqueued; the first waker to
 *     CAS selectdone 0 -> 1 wins (wsr__waitq_dequeue), sets g->param to its
 *     sudog, and takes the select's other sudogs on that same channel off it
 *     (the samec ring) before unlocking it.
 *   - After it wakes, the G never touches the channel whose case fired: it
 *     locks only the other case channels, in address order, and removes its
 *     sudogs from them. That channel's partner may already have freed it:
 *     once a G's operation on c has returned (or its wsr_chan_close), nothing
 *     of the select is left on c, and wsr.h lets it call wsr_chan_free(c).
 *     The other case channels stay in use until wsr_select returns.
 *   - A send case on a closed channel fires with ok = 0 (wsr_chan_send's -1).
 * Rejected designs: Go's selectgo re-locks every case channel after the
 *   wakeup, the fired one included, and dequeues the other sudogs there; its
 *   GC keeps that channel alive, wsr's explicit wsr_chan_free does not (issue
 *   17: valgrind saw wsr__lock on freed memory; glibc's free-list word in the
 *   freed lock made the G wait on it for ever). A reference count on each
 *   channel held by parked selects would also work, at the price of an atomic
 *   pair per case and of wsr_chan_free deferring the free to the last
 *   woken select; doing the fired channel's clean-up in the waker, which
 *   holds that lock anyway, costs nothing when a channel appears in one case
 *   only (samec NULL).
 * Concurrency: as chan.c; all the case channels are locked while deciding.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <wsr.h>

#include "chan.h"
#include "proc.h"

#define SMALL 16

/* One non-nil case: its channel and index; sorted by channel address. */
struct selent {
	struct wsr_chan *c;
	int caseidx;
	int pollpos; /* its place in the poll order: the tie-break of one channel's cases */
};

struct selstate {
	struct selent *ord; /* n entries, sorted by (c, caseidx) */
	int n;
};

/* Locks every case channel once, in address order, except skip (NULL: all). */
static void sellock(struct selstate *s, struct wsr_chan *skip)
{
	int k;

	for (k = 0; k < s->n; k++) {
		struct wsr_chan *c = s->ord[k].c;

		if ((k > 0 && s->ord[k - 1].c == c) || c == skip)
			continue;
		wsr__lock(&c->lock);
	}
}

/* Unlocks them in reverse order, except skip, whose lock the direct helpers
 * release (pass 1) or which the G no longer owns a share of (pass 3). */
static void selunlock(struct selstate *s, struct wsr_chan *skip)
{
	int k;

	for (k = s->n - 1; k >= 0; k--) {
		struct wsr_chan *c = s->ord[k].c;

		if ((k > 0 && s->ord[k - 1].c == c) || c == skip)
			continue;
		wsr__unlock(&c->lock);
	}
}

static bool selparkcommit(struct wsr_g *gp, void *arg)
{
	(void)gp;
	selunlock(arg, NULL);
	return true;
}

static int cmp_selent(const void *a, const void *b)
{
	const struct selent *x = a, *y = b;

	if (x->c != y->c)
		return (uintptr_t)x->c < (uintptr_t)y->c ? -1 : 1;
	return (x->pollpos > y->pollpos) - (x->pollpos < y->pollpos);
}

int wsr_select(wsr_select_case *cases, int n, int block)
{
	struct selent ordbuf[SMALL], *ord = ordbuf;
	struct wsr_sudog sgbuf[SMALL], *sgs = sgbuf;
	int orderbuf[SMALL], *pollorder = orderbuf;
	struct selstate st;
	struct wsr_m *mp = wsr__getm();
	struct wsr_g *gp = mp != NULL ? mp->curg : NULL;
	_Atomic int selectdone = 0;
	int i, j, k, fired = -1;
	struct wsr_sudog *win;

	if (gp == NULL)
		wsr__throw("select: called outside a G");
	if (n < 0)
		wsr__throw("select: negative case count");
	if (n > SMALL) {
		ord = malloc(sizeof(*ord) * (size_t)n);
		sgs = malloc(sizeof(*sgs) * (size_t)n);
		pollorder = malloc(sizeof(*pollorder) * (size_t)n);
		if (ord == NULL || sgs == NULL || pollorder == NULL)
			wsr__throw("select: out of memory");
	}
	/* Random poll order (Fisher-Yates, Go's cheaprandn); nil channels never fire. */
	for (i = 0, j = 0; i < n; i++) {
		if (cases[i].c == NULL)
			continue;
		if (cases[i].dir != WSR_RECV && cases[i].dir != WSR_SEND)
			wsr__throw("select: bad case direction");
		k = (int)(wsr__fastrand(mp) % (uint32_t)(j + 1));
		pollorder[j] = pollorder[k];
		pollorder[k] = i;
		j++;
	}
	/* Lock order: by channel, and a channel's cases in poll order, so that
	 * two cases on one channel are queued (pass 2) in a random order, as
	 * Go's heap sort of the poll order leaves them (TestPseudoRandomSend:
	 * an unbuffered channel's receiver takes the first sender queued). */
	for (k = 0; k < j; k++)
		ord[k] = (struct selent){cases[pollorder[k]].c, pollorder[k], k};
	qsort(ord, (size_t)j, sizeof(*ord), cmp_selent);
	st.ord = ord;
	st.n = j;
	n = j; /* pollorder and ord have j entries */

	sellock(&st, NULL);
	/* Pass 1: something ready? */
	for (i = 0; i < n && fired < 0; i++) {
		wsr_select_case *cs = &cases[pollorder[i]];
		struct wsr_chan *c = cs->c;
		struct wsr_sudog *sg;

		if (cs->dir == WSR_RECV) {
			if ((sg = wsr__waitq_dequeue(&c->sendq)) != NULL) {
				selunlock(&st, c);
				wsr__chan_recv_direct(c, sg, cs->elem);
				cs->ok = 1;
				fired = pollorder[i];
			} else if (c->qcount > 0) {
				wsr__chan_bufget(c, cs->elem);
				selunlock(&st, NULL);
				cs->ok = 1;
				fired = pollorder[i];
			} else if (c->closed) {
				selunlock(&st, NULL);
				if (cs->elem != NULL && c->elemsize > 0)
					memset(cs->elem, 0, c->elemsize);
				cs->ok = 0;
				fired = pollorder[i];
			}
		} else {
			if (c->closed) {
				selunlock(&st, NULL);
				cs->ok = 0;
				fired = pollorder[i];
			} else if ((sg = wsr__waitq_dequeue(&c->recvq)) != NULL) {
				selunlock(&st, c);
				wsr__chan_send_direct(c, sg, cs->elem);
				cs->ok = 1;
				fired = pollorder[i];
			} else if (c->qcount < c->cap) {
				wsr__chan_bufput(c, cs->elem);
				selunlock(&st, NULL);
				cs->ok = 1;
				fired = pollorder[i];
			}
		}
	}
	if (fired >= 0 || !block) {
		if (fired < 0)
			selunlock(&st, NULL);
		goto out;
	}

	/* Pass 2: enqueue on every channel, in lock order (as Go), and park.
	 * Cases sharing a channel are adjacent in ord: link them in a ring. */
	gp->param = NULL;
	for (i = 0; i < n; i++) {
		wsr_select_case *cs = &cases[ord[i].caseidx];
		struct wsr_sudog *sg = &sgs[i];

		memset(sg, 0, sizeof(*sg));
		sg->g = gp;
		sg->elem = cs->elem;
		sg->c = cs->c;
		sg->selectdone = &selectdone;
		sg->caseidx = ord[i].caseidx;
		sg->isrecv = cs->dir == WSR_RECV;
		if (i > 0 && ord[i - 1].c == sg->c) {
			/* Join the ring that sgs[i - 1] closes: sgs[i - 1].samec is the
			 * group's first sudog (or NULL while the group has one). */
			sg->samec = sgs[i - 1].samec != NULL ? sgs[i - 1].samec : &sgs[i - 1];
			sgs[i - 1].samec = sg;
		}
		wsr__waitq_enqueue(sg->isrecv ? &sg->c->recvq : &sg->c->sendq, sg);
	}
	wsr__gopark(selparkcommit, &st, WR_SELECT);

	/* Pass 3: dequeue from the channels that did not fire. The one that did
	 * holds nothing of ours any more (its waker took our sudogs off it) and
	 * may already be freed: it is neither locked nor read here. */
	win = gp->param;
	gp->param = NULL;
	if (win == NULL)
		wsr__throw("select: woken without a case");
	sellock(&st, win->c);
	for (i = 0; i < n; i++) {
		struct wsr_sudog *sg = &sgs[i];

		if (sg->c == win->c)
			continue;
		wsr__waitq_remove(sg->isrecv ? &sg->c->recvq : &sg->c->sendq, sg);
	}
	selunlock(&st, win->c);
	fired = win->caseidx;
	cases[fired].ok = win->success ? 1 : 0;
out:
	if (ord != ordbuf) {
		free(ord);
		free(sgs);
		free(pollorder);
	}
	wsr__preempt_check();
	return fired;
}
