/*
 * globrunq.c - the global run queue (Go: globrunqput, globrunqputbatch,
 * globrunqget).
 *
 * The queue is a ring of G pointers (sched.gq), not a list linked through
 * g->schedlink as in Go. A spill from a full local ring (129 Gs) and a batch
 * get (up to 128) then copy pointers under sched.lock and never touch the Gs
 * themselves: in the skewed benchmark every G passes through here, made on
 * one CPU and taken by the other, and walking the links made the taker miss
 * on each G while it held the lock the spilling P was waiting for.
 *
 * Invariants:
 *   - gqcap is 0 (gq NULL) or a power of two; gqhead and gqtail run freely
 *     (uint32), 0 <= gqtail - gqhead <= gqcap, and the queue's Gs are
 *     gq[gqhead % gqcap] ... gq[(gqtail - 1) % gqcap], oldest first.
 *   - sched.runqsize == gqtail - gqhead.
 *   - The ring only grows (doubling, keeping the order); wsr__globrunq_free
 *     frees it at teardown, dropping any Gs still queued (their structs
 *     live in the G slabs), unless an M did not stop (wsr__ms_leaked), which
 *     could still queue a G: the ring is then kept, as the slabs are.
 *   - A batch get takes min(len, len/gomaxprocs + 1, max, WSR_RUNQ_SIZE/2) Gs,
 *     so one P cannot drain the queue while others starve.
 * Concurrency:
 *   - Every function here except wsr__globrunq_free is called with
 *     sched.lock held (asserted); free runs single-threaded at teardown.
 *   - runqsize is also read without the lock (relaxed) as a hint.
 * Tracepoints: globrunq_get (globrunq_put is emitted by the callers, who know
 *   the G's story).
 */
#include "config.h"

#include <stdlib.h>

#include "proc.h"
#include "runq.h"

#define GQ_MINCAP 512

/* Makes room for n more Gs. */
static void gq_reserve(uint32_t n)
{
	uint32_t len = wsr__sched.gqtail - wsr__sched.gqhead;
	uint32_t cap = wsr__sched.gqcap, i;
	struct wsr_g **gq;

	if (cap - len >= n)
		return;
	if (cap == 0)
		cap = GQ_MINCAP;
	while (cap - len < n) {
		if (cap > UINT32_MAX / 2)
			wsr__throw("globrunqput: global run queue overflow");
		cap *= 2;
	}
	gq = malloc(sizeof(*gq) * (size_t)cap);
	if (gq == NULL)
		wsr__throw("globrunqput: out of memory");
	for (i = 0; i < len; i++)
		gq[i] = wsr__sched.gq[(wsr__sched.gqhead + i) & (wsr__sched.gqcap - 1)];
	free(wsr__sched.gq);
	wsr__sched.gq = gq;
	wsr__sched.gqcap = cap;
	wsr__sched.gqhead = 0;
	wsr__sched.gqtail = len;
}

void wsr__globrunqput(struct wsr_g *gp)
{
	wsr__globrunqputbatch(&gp, 1);
}

void wsr__globrunqputbatch(struct wsr_g *const *gs, uint32_t n)
{
	uint32_t i, mask;

	wsr__assert_lock_held(&wsr__sched.lock);
	gq_reserve(n);
	mask = wsr__sched.gqcap - 1;
	for (i = 0; i < n; i++)
		wsr__sched.gq[(wsr__sched.gqtail + i) & mask] = gs[i];
	wsr__sched.gqtail += n;
	store_relaxed(&wsr__sched.runqsize, load_relaxed(&wsr__sched.runqsize) + (int32_t)n);
}

struct wsr_g *wsr__globrunqget(struct wsr_m *mp, struct wsr_p *pp, int32_t max)
{
	int32_t size = load_relaxed(&wsr__sched.runqsize);
	struct wsr_g *batch[WSR_RUNQ_SIZE / 2];
	uint32_t mask = wsr__sched.gqcap - 1;
	int32_t n, i;

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
	for (i = 0; i < n; i++)
		batch[i] = wsr__sched.gq[(wsr__sched.gqhead + (uint32_t)i) & mask];
	wsr__sched.gqhead += (uint32_t)n;
	store_relaxed(&wsr__sched.runqsize, size - n);
	if (n > 1)
		wsr__runqput_batch(mp, pp, batch + 1, (uint32_t)n - 1);
	WSR_TRACE(globrunq_get, &mp->stats, pp->id, mp->id, (uint32_t)n, (uint32_t)(size - n));
	return batch[0];
}

void wsr__globrunq_free(void)
{
	/* An M that did not stop (stuck in a call) may still queue its G. */
	if (wsr__ms_leaked())
		return;
	free(wsr__sched.gq);
	wsr__sched.gq = NULL;
	wsr__sched.gqcap = 0;
	wsr__sched.gqhead = wsr__sched.gqtail = 0;
	store_relaxed(&wsr__sched.runqsize, 0);
}
