/*
 * sim-emitter.c - a deterministic scheduler simulation that fires the `wsr`
 * tracepoints directly, so the analyzer is tested against a trace whose
 * every counter is known exactly.
 *
 * One thread plays NPROCS Ps and Ms in lock step (round robin), following
 * the catalog semantics of docs/tracepoints.md: G1 spawns the Gs (runnext,
 * kicking the old runnext to the ring, spilling half the ring to the global
 * queue when full), wakep starts a spinning M on an idle P, spinners steal
 * half of a victim's ring, Gs block on a "channel" and are readied by
 * others, yield to the global queue, make blocking calls, and exit; Ps with
 * nothing to do go idle and their Ms park. Every STEPS steps a `schedtrace`
 * event carries the simulation's own counters, which are exact (one
 * thread), so the analyzer's reconstruction must match them exactly.
 *
 * Usage: sim-emitter [-p NPROCS] [-g NGS] [-w WORK] [-s SEED] [-t STEPS] [-i 0|1] [-f 0|1]
 * (-i 0: no init event; -f 1: also one foreign event, LTTng's tracef, whose
 * string holds every character JSON escapes: SIM_FOREIGN_MSG).
 * At exit it prints the runtime's `WSRDEBUG=stats=1` line with the counts
 * it emitted.
 *
 * Invariants:
 *   - A G is in exactly one place: a ring, a runnext slot, the global
 *     queue, running on a P, waiting, or gone.
 *   - An M holds at most one P; parked Ms hold none; spinning Ms hold one.
 * Concurrency: single-threaded by design (exact counters).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lttng/tracef.h>

#include "wsr_tp.h"

/* tests/analyzer/test_analyzer.py checks events.extra against this. */
#define SIM_FOREIGN_MSG "q\"b\\n\nr\rt\t<&>\x01 end"

#define RUNQ 256
#define MAXP 16

enum {
	C_INIT,
	C_G_CREATE,
	C_RUNQPUT,
	C_RUNQPUT_NEXT,
	C_RUNQ_SPILL,
	C_GLOBRUNQ_PUT,
	C_GLOBRUNQ_GET,
	C_G_RUN,
	C_G_STOP,
	C_G_READY,
	C_STEAL,
	C_STOLEN,
	C_STEAL_SCAN,
	C_SPIN_START,
	C_SPIN_STOP,
	C_P_IDLE,
	C_P_BUSY,
	C_M_PARK,
	C_M_UNPARK,
	C_M_CREATE,
	C_SYSCALL_ENTER,
	C_SYSCALL_EXIT,
	C_SCHEDTRACE,
	C_MAX
};

static uint64_t cnt[C_MAX];

struct g {
	int64_t id;
	int work;
	int kind; /* 0 plain, 1 blocks once, 2 yields once, 3 syscall once */
	int done_special;
};

struct p {
	int64_t ring[RUNQ];
	uint32_t head, tail;
	int64_t runnext;
	int64_t cur; /* running G, 0 if none */
	int m;       /* holder, -1 if none */
	int idle;
	long tick;
	uint32_t schedtick; /* as the runtime's: runs that do not inherit a slice */
};

struct m {
	int p; /* -1 if none */
	int parked, spinning;
};

static int np = 2, nm;
static struct p P[MAXP];
static struct m M[MAXP];
static struct g *G;
static int64_t ngs = 2000, next_id = 1, spawned, live;
static int64_t *glob;
static size_t glob_head, glob_len, glob_cap;
static int64_t *waiting;
static size_t nwaiting;
static int npidle, nmidle, nmspinning, max_spinning;
static uint64_t rng = 42;
static int work = 3;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static uint32_t qlen(int p)
{
	return P[p].tail - P[p].head;
}

static void glob_push(int64_t g)
{
	if (glob_len == glob_cap) {
		size_t ncap = glob_cap ? glob_cap * 2 : 1024;
		int64_t *n = malloc(ncap * sizeof(*n));
		if (n == NULL)
			abort();
		for (size_t i = 0; i < glob_len; i++)
			n[i] = glob[(glob_head + i) % glob_cap];
		free(glob);
		glob = n;
		glob_cap = ncap;
		glob_head = 0;
	}
	glob[(glob_head + glob_len++) % glob_cap] = g;
}

static int64_t glob_pop(void)
{
	int64_t g = glob[glob_head];
	glob_head = (glob_head + 1) % glob_cap;
	glob_len--;
	return g;
}

static void schedtrace(void)
{
	uint32_t runq[MAXP], ticks[MAXP];
	int64_t read_ts[MAXP];
	struct wsr_tp_schedtrace st = {np,     npidle, nm,   nmspinning, 0, nmidle, (int32_t)glob_len,
				       runq,   ticks,  read_ts};

	for (int i = 0; i < np; i++) {
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		read_ts[i] = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
		runq[i] = qlen(i);
		ticks[i] = P[i].schedtick;
	}
	lttng_ust_tracepoint(wsr, schedtrace, -1, -1, &st);
	cnt[C_SCHEDTRACE]++;
}

/* runqput on P p by its M: next=1 puts g in runnext, kicking the old one. */
static void runqput(int p, int64_t g, int next)
{
	struct p *pp = &P[p];
	int64_t kicked = 0;

	if (next) {
		kicked = pp->runnext;
		pp->runnext = g;
		g = kicked;
		if (g == 0) {
			lttng_ust_tracepoint(wsr, runqput, p, pp->m, pp->runnext, 1, 0, qlen(p));
			cnt[C_RUNQPUT]++;
			cnt[C_RUNQPUT_NEXT]++;
			return;
		}
	}
	if (qlen(p) == RUNQ) {
		/* runqputslow: half the ring plus g go to the global queue. */
		uint32_t n = RUNQ / 2;
		for (uint32_t i = 0; i < n; i++)
			glob_push(pp->ring[(pp->head + i) % RUNQ]);
		pp->head += n;
		glob_push(g);
		lttng_ust_tracepoint(wsr, runq_spill, p, pp->m, n + 1, (uint32_t)glob_len);
		cnt[C_RUNQ_SPILL]++;
		/* g itself went to the global queue; the runqput reports the ring. */
	} else {
		pp->ring[pp->tail % RUNQ] = g;
		pp->tail++;
	}
	if (next) {
		lttng_ust_tracepoint(wsr, runqput, p, pp->m, pp->runnext, 1, kicked, qlen(p));
		cnt[C_RUNQPUT_NEXT]++;
	} else {
		lttng_ust_tracepoint(wsr, runqput, p, pp->m, g, 0, 0, qlen(p));
	}
	cnt[C_RUNQPUT]++;
}

/* wakep: an idle P and a parked M become a spinning pair. */
static void wakep(int by_p)
{
	if (npidle == 0 || nmspinning != 0)
		return;
	int p = -1, m = -1;
	for (int i = 0; i < np && p < 0; i++)
		if (P[i].idle)
			p = i;
	for (int i = 0; i < nm && m < 0; i++)
		if (M[i].parked)
			m = i;
	if (p < 0 || m < 0)
		return;
	P[p].idle = 0;
	npidle--;
	lttng_ust_tracepoint(wsr, p_busy, p, P[by_p].m, npidle);
	cnt[C_P_BUSY]++;
	M[m].parked = 0;
	nmidle--;
	M[m].p = p;
	P[p].m = m;
	lttng_ust_tracepoint(wsr, m_unpark, p, m, nmidle, P[by_p].m);
	cnt[C_M_UNPARK]++;
	M[m].spinning = 1;
	nmspinning++;
	if (nmspinning > max_spinning)
		max_spinning = nmspinning;
	lttng_ust_tracepoint(wsr, spin_start, p, m, nmspinning, 0);
	cnt[C_SPIN_START]++;
}

static void run(int p, int64_t g, int source)
{
	P[p].cur = g;
	P[p].tick++;
	if (source != 0)
		P[p].schedtick++;
	lttng_ust_tracepoint(wsr, g_run, p, P[p].m, g, (uint8_t)source, source == 0);
	cnt[C_G_RUN]++;
}

static void stop_spinning(int m, int found)
{
	if (!M[m].spinning)
		return;
	M[m].spinning = 0;
	nmspinning--;
	lttng_ust_tracepoint(wsr, spin_stop, M[m].p, m, nmspinning, (uint8_t)found);
	cnt[C_SPIN_STOP]++;
}

/* findRunnable for P p; returns 1 if a G now runs on p. */
static int schedule(int p)
{
	struct p *pp = &P[p];
	int m = pp->m;

	if (pp->tick % 61 == 0 && glob_len > 0) {
		int64_t g = glob_pop();
		lttng_ust_tracepoint(wsr, globrunq_get, p, m, 1, (uint32_t)glob_len);
		cnt[C_GLOBRUNQ_GET]++;
		stop_spinning(m, 1);
		run(p, g, 2);
		return 1;
	}
	if (pp->runnext != 0) {
		int64_t g = pp->runnext;
		pp->runnext = 0;
		run(p, g, 0);
		return 1;
	}
	if (qlen(p) > 0) {
		int64_t g = pp->ring[pp->head % RUNQ];
		pp->head++;
		run(p, g, 1);
		return 1;
	}
	if (glob_len > 0) {
		uint32_t n = (uint32_t)(glob_len / (size_t)np + 1);
		if (n > glob_len)
			n = (uint32_t)glob_len;
		if (n > RUNQ / 2)
			n = RUNQ / 2;
		int64_t g = glob_pop();
		for (uint32_t i = 1; i < n; i++) {
			pp->ring[pp->tail % RUNQ] = glob_pop();
			pp->tail++;
		}
		lttng_ust_tracepoint(wsr, globrunq_get, p, m, n, (uint32_t)glob_len);
		cnt[C_GLOBRUNQ_GET]++;
		stop_spinning(m, 1);
		if (n > 1)
			wakep(p);
		run(p, g, 2);
		return 1;
	}
	/* Steal: spinning allowed while 2*nmspinning < gomaxprocs - npidle. */
	if (!M[m].spinning && 2 * nmspinning < np - npidle) {
		M[m].spinning = 1;
		nmspinning++;
		if (nmspinning > max_spinning)
			max_spinning = nmspinning;
		lttng_ust_tracepoint(wsr, spin_start, p, m, nmspinning, 0);
		cnt[C_SPIN_START]++;
	}
	if (M[m].spinning) {
		int start = (int)(rnd() % (uint32_t)np), probed = 0;
		for (int k = 0; k < np; k++) {
			int v = (start + k) % np;
			if (v == p)
				continue;
			probed++;
			uint32_t vl = qlen(v);
			int take_next = vl == 0 && P[v].runnext != 0 && P[v].cur != 0;
			if (vl == 0 && !take_next)
				continue;
			uint32_t n;
			int64_t g;
			if (take_next) {
				g = P[v].runnext;
				P[v].runnext = 0;
				n = 1;
			} else {
				n = vl - vl / 2;
				g = P[v].ring[P[v].head % RUNQ];
				P[v].head++;
				for (uint32_t i = 1; i < n; i++) {
					pp->ring[pp->tail % RUNQ] = P[v].ring[P[v].head % RUNQ];
					P[v].head++;
					pp->tail++;
				}
			}
			lttng_ust_tracepoint(wsr, steal, p, m, v, n, (uint8_t)take_next);
			cnt[C_STEAL]++;
			cnt[C_STOLEN] += n;
			lttng_ust_tracepoint(wsr, steal_scan, p, m, 1, (uint32_t)probed, 1);
			cnt[C_STEAL_SCAN]++;
			stop_spinning(m, 1);
			wakep(p);
			run(p, g, 3);
			return 1;
		}
		lttng_ust_tracepoint(wsr, steal_scan, p, m, 4, (uint32_t)probed, 0);
		cnt[C_STEAL_SCAN]++;
	}
	/* Nothing: release P, drop spinning, park. */
	pp->idle = 1;
	npidle++;
	lttng_ust_tracepoint(wsr, p_idle, p, m, npidle);
	cnt[C_P_IDLE]++;
	pp->m = -1;
	M[m].p = -1;
	stop_spinning(m, 0);
	M[m].parked = 1;
	nmidle++;
	lttng_ust_tracepoint(wsr, m_park, -1, m, nmidle, -1);
	cnt[C_M_PARK]++;
	return 0;
}

static struct g *gof(int64_t id)
{
	return &G[id];
}

/* One unit of work of the G running on p. */
static void step_g(int p)
{
	struct p *pp = &P[p];
	int m = pp->m;
	int64_t id = pp->cur;
	struct g *g = gof(id);

	if (id == 1 && spawned < ngs) {
		/* G1 spawns a batch of Gs. */
		int batch = 1 + (int)(rnd() % 8);
		for (int i = 0; i < batch && spawned < ngs; i++) {
			int64_t c = ++next_id;
			struct g *cg = gof(c);
			cg->id = c;
			cg->work = 1 + (int)(rnd() % (uint32_t)work);
			cg->kind = (int)(rnd() % 6);
			if (cg->kind > 3)
				cg->kind = 0;
			spawned++;
			live++;
			lttng_ust_tracepoint(wsr, g_create, p, m, c, 1);
			cnt[C_G_CREATE]++;
			runqput(p, c, 1);
			wakep(p);
		}
		if (spawned < ngs) {
			/* Yield to the global queue now and then. */
			if (rnd() % 4 == 0) {
				lttng_ust_tracepoint(wsr, g_stop, p, m, id, 0);
				cnt[C_G_STOP]++;
				pp->cur = 0;
				glob_push(id);
				lttng_ust_tracepoint(wsr, globrunq_put, p, m, id,
						     (uint32_t)glob_len);
				cnt[C_GLOBRUNQ_PUT]++;
			}
			return;
		}
		lttng_ust_tracepoint(wsr, g_stop, p, m, id, 7);
		cnt[C_G_STOP]++;
		pp->cur = 0;
		live--;
		return;
	}
	/* Ready a waiting G sometimes (a channel send). */
	if (nwaiting > 0 && rnd() % 2 == 0) {
		int64_t w = waiting[--nwaiting];
		lttng_ust_tracepoint(wsr, g_ready, p, m, w, id);
		cnt[C_G_READY]++;
		runqput(p, w, 1);
		wakep(p);
	}
	if (--g->work > 0)
		return;
	if (!g->done_special && g->kind != 0) {
		g->done_special = 1;
		g->work = 1 + (int)(rnd() % (uint32_t)work);
		if (g->kind == 1) {
			lttng_ust_tracepoint(wsr, g_stop, p, m, id, 3);
			cnt[C_G_STOP]++;
			pp->cur = 0;
			waiting[nwaiting++] = id;
			return;
		}
		if (g->kind == 2) {
			lttng_ust_tracepoint(wsr, g_stop, p, m, id, 0);
			cnt[C_G_STOP]++;
			pp->cur = 0;
			glob_push(id);
			lttng_ust_tracepoint(wsr, globrunq_put, p, m, id, (uint32_t)glob_len);
			cnt[C_GLOBRUNQ_PUT]++;
			return;
		}
		lttng_ust_tracepoint(wsr, syscall_enter, p, m, id);
		cnt[C_SYSCALL_ENTER]++;
		lttng_ust_tracepoint(wsr, syscall_exit, p, m, id, 1);
		cnt[C_SYSCALL_EXIT]++;
		return;
	}
	lttng_ust_tracepoint(wsr, g_stop, p, m, id, 7);
	cnt[C_G_STOP]++;
	pp->cur = 0;
	live--;
}

int main(int argc, char **argv)
{
	long steps_per_trace = 50;
	int emit_init = 1, emit_foreign = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "-p") == 0)
			np = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "-g") == 0)
			ngs = atol(argv[i + 1]);
		else if (strcmp(argv[i], "-w") == 0)
			work = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "-s") == 0)
			rng = strtoull(argv[i + 1], NULL, 10) | 1;
		else if (strcmp(argv[i], "-t") == 0)
			steps_per_trace = atol(argv[i + 1]);
		else if (strcmp(argv[i], "-i") == 0)
			emit_init = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "-f") == 0)
			emit_foreign = atoi(argv[i + 1]);
	}
	if (np < 1 || np > MAXP || ngs < 1 || work < 1 || steps_per_trace < 1) {
		fprintf(stderr,
			"usage: sim-emitter [-p 1..%d] [-g NGS] [-w WORK] [-s SEED] "
			"[-t STEPS] [-i 0|1] [-f 0|1]\n",
			MAXP);
		return 2;
	}
	G = calloc((size_t)ngs + 2, sizeof(*G));
	waiting = calloc((size_t)ngs + 2, sizeof(*waiting));
	if (G == NULL || waiting == NULL)
		return 1;

	if (emit_foreign)
		lttng_ust_tracef("%s", SIM_FOREIGN_MSG);
	/* -i 0: no init event, as in a recording that started after the program. */
	if (emit_init) {
		lttng_ust_tracepoint(wsr, init, -1, 0, np, RUNQ, "sim-emitter", 0);
		cnt[C_INIT]++;
	}
	nm = 1;
	P[0].m = 0;
	M[0].p = 0;
	for (int i = 1; i < np; i++) {
		P[i].idle = 1;
		P[i].m = -1;
		npidle++;
		lttng_ust_tracepoint(wsr, p_idle, i, 0, npidle);
		cnt[C_P_IDLE]++;
	}
	for (int i = 1; i < np; i++) {
		lttng_ust_tracepoint(wsr, m_create, 0, 0, i);
		cnt[C_M_CREATE]++;
		M[i].p = -1;
		M[i].parked = 1;
		nm++;
		nmidle++;
		lttng_ust_tracepoint(wsr, m_park, -1, i, nmidle, -1);
		cnt[C_M_PARK]++;
	}
	/* The main G. */
	G[1].id = 1;
	live = 1;
	lttng_ust_tracepoint(wsr, g_create, 0, 0, 1, 0);
	cnt[C_G_CREATE]++;
	runqput(0, 1, 0);
	long step = 0;
	while (live > 0) {
		if (npidle == np) {
			fprintf(stderr, "sim-emitter: stuck with %lld live Gs\n", (long long)live);
			return 1;
		}
		for (int p = 0; p < np; p++) {
			if (P[p].idle || P[p].m < 0)
				continue;
			if (P[p].cur != 0)
				step_g(p);
			else if (!schedule(p) && live > 0 && npidle == np) {
				/* Everything parked: a waiting G is woken "by the
				 * network" onto the global queue and an M started. */
				if (nwaiting > 0) {
					int64_t w = waiting[--nwaiting];
					lttng_ust_tracepoint(wsr, g_ready, -1, -1, w, 0);
					cnt[C_G_READY]++;
					glob_push(w);
					lttng_ust_tracepoint(wsr, globrunq_put, -1, -1, w,
							     (uint32_t)glob_len);
					cnt[C_GLOBRUNQ_PUT]++;
					P[0].idle = 0;
					npidle--;
					lttng_ust_tracepoint(wsr, p_busy, 0, -1, npidle);
					cnt[C_P_BUSY]++;
					int m = 0;
					while (!M[m].parked)
						m++;
					M[m].parked = 0;
					nmidle--;
					M[m].p = 0;
					P[0].m = m;
					lttng_ust_tracepoint(wsr, m_unpark, 0, m, nmidle, -1);
					cnt[C_M_UNPARK]++;
				}
			}
		}
		if (++step % steps_per_trace == 0)
			schedtrace();
	}
	schedtrace();
	fprintf(stderr,
		"wsr stats: init=%lu g_create=%lu runqput=%lu runqput_next=%lu runq_spill=%lu "
		"globrunq_put=%lu globrunq_get=%lu g_run=%lu g_stop=%lu g_ready=%lu steal=%lu "
		"stolen=%lu steal_scan=%lu spin_start=%lu spin_stop=%lu p_idle=%lu p_busy=%lu "
		"m_park=%lu m_unpark=%lu m_create=%lu syscall_enter=%lu syscall_exit=%lu "
		"handoff=0 retake=0 preempt=0 timer_fire=0 netpoll=0 schedtrace=%lu "
		"max_spinning=%d\n",
		(unsigned long)cnt[C_INIT], (unsigned long)cnt[C_G_CREATE],
		(unsigned long)cnt[C_RUNQPUT], (unsigned long)cnt[C_RUNQPUT_NEXT],
		(unsigned long)cnt[C_RUNQ_SPILL], (unsigned long)cnt[C_GLOBRUNQ_PUT],
		(unsigned long)cnt[C_GLOBRUNQ_GET], (unsigned long)cnt[C_G_RUN],
		(unsigned long)cnt[C_G_STOP], (unsigned long)cnt[C_G_READY],
		(unsigned long)cnt[C_STEAL], (unsigned long)cnt[C_STOLEN],
		(unsigned long)cnt[C_STEAL_SCAN], (unsigned long)cnt[C_SPIN_START],
		(unsigned long)cnt[C_SPIN_STOP], (unsigned long)cnt[C_P_IDLE],
		(unsigned long)cnt[C_P_BUSY], (unsigned long)cnt[C_M_PARK],
		(unsigned long)cnt[C_M_UNPARK], (unsigned long)cnt[C_M_CREATE],
		(unsigned long)cnt[C_SYSCALL_ENTER], (unsigned long)cnt[C_SYSCALL_EXIT],
		(unsigned long)cnt[C_SCHEDTRACE], max_spinning);
	free(G);
	free(waiting);
	free(glob);
	return 0;
}
