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
 *     sudog, and the G removes every other sudog before returning.
 *   - A send case on a closed channel fires with ok = 0 (wsr_chan_send's -1).
 * Concurrency: as chan.c; all the case channels are locked while deciding.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <wsr.h>

#include "chan.h"
#include "proc.h"

#define SMALL 16

struct selstate {
	struct wsr_chan **lockorder;
	int nlock;
};

static void sellock(struct selstate *s)
{
	int i;

	for (i = 0; i < s->nlock; i++)
		wsr__lock(&s->lockorder[i]->lock);
}

static void selunlock(struct selstate *s)
{
	int i;

	for (i = s->nlock - 1; i >= 0; i--)
		wsr__unlock(&s->lockorder[i]->lock);
}

static bool selparkcommit(struct wsr_g *gp, void *arg)
{
	(void)gp;
	selunlock(arg);
	return true;
}

static int cmp_chan(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(struct wsr_chan *const *)a;
	uintptr_t y = (uintptr_t)*(struct wsr_chan *const *)b;

	return x < y ? -1 : x > y;
}

/* Unlocks every channel but c, whose lock the direct helpers release. */
static void selunlock_except(struct selstate *s, struct wsr_chan *c)
{
	int i;

	for (i = s->nlock - 1; i >= 0; i--)
		if (s->lockorder[i] != c)
			wsr__unlock(&s->lockorder[i]->lock);
}

int wsr_select(wsr_select_case *cases, int n, int block)
{
	struct wsr_chan *lockbuf[SMALL], **lockorder = lockbuf;
	struct wsr_sudog sgbuf[SMALL], *sgs = sgbuf;
	int orderbuf[SMALL], *pollorder = orderbuf;
	struct selstate st;
	struct wsr_m *mp = wsr__getm();
	struct wsr_g *gp = mp != NULL ? mp->curg : NULL;
	_Atomic int selectdone = 0;
	int i, j, nlock = 0, fired = -1;
	struct wsr_sudog *win;

	if (gp == NULL)
		wsr__throw("select: called outside a G");
	if (n < 0)
		wsr__throw("select: negative case count");
	if (n > SMALL) {
		lockorder = malloc(sizeof(*lockorder) * (size_t)n);
		sgs = malloc(sizeof(*sgs) * (size_t)n);
		pollorder = malloc(sizeof(*pollorder) * (size_t)n);
		if (lockorder == NULL || sgs == NULL || pollorder == NULL)
			wsr__throw("select: out of memory");
	}
	/* Random poll order (Fisher-Yates, Go's cheaprandn); nil channels never fire. */
	for (i = 0, j = 0; i < n; i++) {
		int k;

		if (cases[i].c == NULL)
			continue;
		k = (int)(wsr__fastrand(mp) % (uint32_t)(j + 1));
		pollorder[j] = pollorder[k];
		pollorder[k] = i;
		lockorder[j] = cases[i].c;
		j++;
	}
	qsort(lockorder, (size_t)j, sizeof(*lockorder), cmp_chan);
	for (i = 0; i < j; i++)
		if (nlock == 0 || lockorder[nlock - 1] != lockorder[i])
			lockorder[nlock++] = lockorder[i];
	st.lockorder = lockorder;
	st.nlock = nlock;
	n = j; /* pollorder has j entries */

	sellock(&st);
	/* Pass 1: something ready? */
	for (i = 0; i < n && fired < 0; i++) {
		wsr_select_case *cs = &cases[pollorder[i]];
		struct wsr_chan *c = cs->c;
		struct wsr_sudog *sg;

		if (cs->dir == WSR_RECV) {
			if ((sg = wsr__waitq_dequeue(&c->sendq)) != NULL) {
				selunlock_except(&st, c);
				wsr__chan_recv_direct(c, sg, cs->elem);
				cs->ok = 1;
				fired = pollorder[i];
			} else if (c->qcount > 0) {
				wsr__chan_bufget(c, cs->elem);
				selunlock(&st);
				cs->ok = 1;
				fired = pollorder[i];
			} else if (c->closed) {
				selunlock(&st);
				if (cs->elem != NULL && c->elemsize > 0)
					memset(cs->elem, 0, c->elemsize);
				cs->ok = 0;
				fired = pollorder[i];
			}
		} else if (cs->dir == WSR_SEND) {
			if (c->closed) {
				selunlock(&st);
				cs->ok = 0;
				fired = pollorder[i];
			} else if ((sg = wsr__waitq_dequeue(&c->recvq)) != NULL) {
				selunlock_except(&st, c);
				wsr__chan_send_direct(c, sg, cs->elem);
				cs->ok = 1;
				fired = pollorder[i];
			} else if (c->qcount < c->cap) {
				wsr__chan_bufput(c, cs->elem);
				selunlock(&st);
				cs->ok = 1;
				fired = pollorder[i];
			}
		} else {
			selunlock(&st);
			wsr__throw("select: bad case direction");
		}
	}
	if (fired >= 0 || !block) {
		if (fired < 0)
			selunlock(&st);
		goto out;
	}

	/* Pass 2: enqueue on every channel and park. */
	gp->param = NULL;
	for (i = 0; i < n; i++) {
		wsr_select_case *cs = &cases[pollorder[i]];
		struct wsr_sudog *sg = &sgs[i];

		memset(sg, 0, sizeof(*sg));
		sg->g = gp;
		sg->elem = cs->elem;
		sg->c = cs->c;
		sg->selectdone = &selectdone;
		sg->caseidx = pollorder[i];
		wsr__waitq_enqueue(cs->dir == WSR_RECV ? &cs->c->recvq : &cs->c->sendq, sg);
	}
	wsr__gopark(selparkcommit, &st, WR_SELECT);

	/* Pass 3: dequeue from the channels that did not fire. */
	win = gp->param;
	gp->param = NULL;
	sellock(&st);
	for (i = 0; i < n; i++) {
		struct wsr_sudog *sg = &sgs[i];

		if (sg == win)
			continue;
		wsr__waitq_remove(cases[sg->caseidx].dir == WSR_RECV ? &sg->c->recvq : &sg->c->sendq,
				  sg);
	}
	selunlock(&st);
	if (win == NULL)
		wsr__throw("select: woken without a case");
	fired = win->caseidx;
	cases[fired].ok = win->success ? 1 : 0;
out:
	if (lockorder != lockbuf) {
		free(lockorder);
		free(sgs);
		free(pollorder);
	}
	wsr__preempt_check();
	return fired;
}
