/*
 * globrunq.c - the global run queue (Go: globrunqput, globrunqputbatch,
 * globrunqget).
 *
 * Invariants:
 *   - sched.runqsize is the length of the list runqhead..runqtail, linked
 *     through g->schedlink, NULL-terminated.
 *   - A batch get takes min(len, len/gomaxprocs + 1, max, WSR_RUNQ_SIZE/2) Gs,
 *     so one P cannot drain the queue while others starve.
 * Concurrency:
 *   - Every function here is called with sched.lock held (asserted).
 *   - runqsize is also read without the lock (relaxed) as a hint.
 * Tracepoints: globrunq_get (globrunq_put is emitted by the callers, who know
 *   the G's story).
 */
#include "config.h"

#include "runq.h"

void wsr__globrunqput(struct wsr_g *gp)
{
	wsr__assert_lock_held(&wsr__sched.lock);
	gp->schedlink = NULL;
	if (wsr__sched.runqtail != NULL)
		wsr__sched.runqtail->schedlink = gp;
	else
		wsr__sched.runqhead = gp;
	wsr__sched.runqtail = gp;
	store_relaxed(&wsr__sched.runqsize, load_relaxed(&wsr__sched.runqsize) + 1);
}

void wsr__globrunqputbatch(struct wsr_g *head, struct wsr_g *tail, int32_t n)
{
	wsr__assert_lock_held(&wsr__sched.lock);
	tail->schedlink = NULL;
	if (wsr__sched.runqtail != NULL)
		wsr__sched.runqtail->schedlink = head;
	else
		wsr__sched.runqhead = head;
	wsr__sched.runqtail = tail;
	store_relaxed(&wsr__sched.runqsize, load_relaxed(&wsr__sched.runqsize) + n);
}

static struct wsr_g *globrunqpop(void)
{
	struct wsr_g *gp = wsr__sched.runqhead;

	wsr__sched.runqhead = gp->schedlink;
	if (wsr__sched.runqhead == NULL)
		wsr__sched.runqtail = NULL;
	gp->schedlink = NULL;
	return gp;
}

struct wsr_g *wsr__globrunqget(struct wsr_m *mp, struct wsr_p *pp, int32_t max)
{
	int32_t size = load_relaxed(&wsr__sched.runqsize);
	int32_t n, i;
	struct wsr_g *gp;

	wsr__assert_lock_held(&wsr__sched.lock);
	if (size == 0)
		return NULL;
	n = size / wsr__sched.gomaxprocs + 1;
	if (n > size)
		n = size;
	if (max > 0 && n > max)
		n = max;
	if (n > WSR_RUNQ_SIZE / 2)
		n = WSR_RUNQ_SIZE / 2;
	store_relaxed(&wsr__sched.runqsize, size - n);
	gp = globrunqpop();
	for (i = 1; i < n; i++)
		wsr__runqput_batch(mp, pp, globrunqpop());
	WSR_TRACE(globrunq_get, &mp->stats, pp->id, mp->id, (uint32_t)n, (uint32_t)(size - n));
	return gp;
}
