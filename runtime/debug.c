/*
 * debug.c - WSRDEBUG knobs, the schedtrace/scheddetail lines (Go's format,
 * field for field), the stats=1 summary, and the chaos injector.
 *
 * WSRDEBUG is a comma-separated list of key=value (Go's GODEBUG habits):
 *   schedtrace=MS   print a SCHED line to stderr every MS ms (and emit the
 *                   schedtrace tracepoint with the same counters)
 *   scheddetail=1   with schedtrace: the per-P, per-M and per-G lines too
 *   stats=1         print the "wsr stats:" line at exit (docs/tracepoints.md)
 *   stacksize=N     G stack size in bytes (suffix k/K or m/M allowed)
 *   chaos=SEED      random yields and sleeps at the scheduler's racy windows
 *   globalcheck=N   check the global queue every N schedule ticks (61)
 *   stealrounds=N   stealWork passes over the Ps (4)
 *   runnextpause=US pause before stealing a runnext G (3)
 *   backlog=N       global-queue Gs per P past which wsr_go preempts its
 *                   caller behind them (4096; 0: never, as Go)
 *   policy=NAME     the local queues: go (the default: ring, runnext,
 *                   half-steals), deque (a Chase-Lev deque per P: the
 *                   owner pushes and pops the newest, thieves take the
 *                   oldest, one at a time; runq.c), locked (the same
 *                   deque under a mutex per P; a thief waits for a held
 *                   lock), trylock (a thief moves on from a held lock)
 *                   or tokio (Go's ring with Tokio's choices: below)
 *   steal=half|one  Gs a steal takes: half the victim's queue (rounded up)
 *                   or one (the default: half for go and tokio, one for
 *                   the deques)
 *   victims=ORDER   stealWork's victim order: random (start and coprime
 *                   stride, Go), roundrobin (random start, then index
 *                   order, Tokio) or nearest (the thief's topology node
 *                   first); steal.c
 *   topology=NxM    N nodes of M consecutive Ps (N*M must be WSRMAXPROCS):
 *                   for victims=nearest, and the stats line's steal_remote
 *   spinning=CAP    the cap on spinning Ms: half (half the busy Ps, Go),
 *                   halfall (half of all Ps, Tokio), all, or none (only the
 *                   M that wakep starts); proc.c
 *   runnext=0|1     1: a G readied by the running G goes to runnext (Go);
 *                   0: to the tail like any other
 * policy=tokio sets, unless given explicitly: globalcheck=31, the fixed
 * global_queue_interval Tokio had before it tuned the interval itself
 * (Tokio >= 1.30 derives it from an EWMA of poll times, 200 us over the
 * mean poll, clamped to 2..127: multi_thread/stats.rs,
 * tuned_global_queue_interval; not modelled here); stealrounds=1 (one pass
 * over the workers, then the global queue: worker.rs, steal_work);
 * victims=roundrobin; spinning=halfall ("2 * num_searching >= num_workers"
 * refuses a searcher: idle.rs, transition_worker_to_searching); runnext
 * never stolen (Tokio's LIFO slot "is not currently stealable": config.rs,
 * disable_lifo_slot) and capped at 3 runs in a row (runq.c). The steal
 * amount stays Go's: Tokio's steal_into2 (queue.rs) also takes n - n/2,
 * at most half a 256-slot queue.
 * Unknown keys and bad values are reported on stderr and ignored.
 *
 * Invariants:
 *   - The knobs are written once in wsr__debug_init, before any M starts.
 *   - Counters printed by schedtrace are read racily, as Go does; the
 *     analyzer's cross-check allows for that.
 * Concurrency: schedtrace runs on sysmon under sched.lock; the stats summary
 *   runs after every M stopped (or in the deadlock exit, under sched.lock, or
 *   in the atexit hook of an exit() while the runtime runs, under sched.lock).
 * Tracepoints: schedtrace.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atomic.h"
#include "chaos.h"
#include "proc.h"
#include "runq.h"

int wsr__debug_stats, wsr__debug_scheddetail;
int64_t wsr__debug_schedtrace_ms;
int wsr__chaos_enabled;
uint64_t wsr__chaos_seed;

static bool parse_size(const char *v, size_t *out)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno != 0 || end == v)
		return false;
	if (*end == 'k' || *end == 'K') {
		n *= 1024;
		end++;
	} else if (*end == 'm' || *end == 'M') {
		n *= 1024 * 1024;
		end++;
	}
	if (*end != '\0' || n == 0 || n > (1ULL << 30))
		return false;
	*out = (size_t)n;
	return true;
}

static bool parse_int(const char *v, long long lo, long long hi, long long *out)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || n < lo || n > hi)
		return false;
	*out = n;
	return true;
}

/*
 * The stats line is printed once per wsr_main: at its teardown, in the
 * deadlock exit, or by the atexit hook when the program calls exit() while
 * the runtime runs (from a G, or from another thread). stats_live is 1 from
 * wsr__debug_init until the line is printed; the hook prints only then, so
 * it never reads the Ms after the teardown freed them.
 */
static _Atomic int stats_live;
static bool stats_atexit;

/* Waits (100 ms at most) until every other M is parked or in a call: an M
 * that has no work left spins and parks within microseconds, and a parked
 * M emits nothing more. Otherwise the Ms still looking for work would emit
 * events (spin_stop, p_idle, steal_scan, m_park) after the line, which the
 * tracer records until its destructor, and race with the libraries'
 * destructors (TSan saw one). An M running a G that never stops is not
 * waited for beyond the bound. Read under sched.lock: an M joins the idle
 * list and emits m_park in one hold of it (proc.c, stopm). */
static void quiesce_for_exit(void)
{
	int32_t self = wsr__getm() != NULL ? 1 : 0;

	for (int i = 0; i < 2000; i++) {
		struct timespec ts = {0, 50 * 1000};
		int32_t busy;

		wsr__lock(&wsr__sched.lock);
		busy = load_relaxed(&wsr__sched.mcount) - load_relaxed(&wsr__sched.nmidle) - self -
		       load_seq(&wsr__sched.nsyscall);
		wsr__unlock(&wsr__sched.lock);
		if (busy <= 0)
			return;
		nanosleep(&ts, NULL);
	}
}

static void stats_at_exit(void)
{
	/* Other Ms may still run: allm is read under sched.lock, the counters
	 * racily (relaxed atomics), as schedtrace reads them. */
	if (load_relaxed(&stats_live) == 0)
		return;
	/* sysmon would go on emitting schedtrace (and retake, preempt) events
	 * that LTTng records until its own destructor runs, after the line:
	 * stop it first, so the line counts them; then let the other Ms park. */
	wsr__sysmon_stop();
	quiesce_for_exit();
	wsr__lock(&wsr__sched.lock);
	wsr__stats_print();
	wsr__unlock(&wsr__sched.lock);
}

/* Finds v in names[0..n) and stores its index; false if absent. */
static bool parse_name(const char *v, const char *const *names, size_t n, uint8_t *out)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v, names[i]) == 0) {
			*out = (uint8_t)i;
			return true;
		}
	return false;
}

/* In the order of enum wsr_victims and wsr_spinning (gmp.h). */
/* The catalog's policy enumeration (tracepoints/catalog.toml) names them. */
static const char *const policy_names[] = {
#define WSR_ENUM_NAME(NAME, label, value) [value] = #label,
	WSR_CAT_ENUM_POLICY(WSR_ENUM_NAME)
#undef WSR_ENUM_NAME
};
static const char *const victims_names[] = {"random", "roundrobin", "nearest"};
static const char *const spinning_names[] = {"half", "halfall", "all", "none"};
static const char *const steal_names[] = {"half", "one"};
#define NAMES(a) a, sizeof(a) / sizeof(a[0])
_Static_assert(sizeof(policy_names) / sizeof(policy_names[0]) == WSR_POLICY_TOKIO + 1,
	       "a name per policy");

static bool parse_topology(const char *v)
{
	char *end;
	long n, m;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno != 0 || end == v || *end != 'x' || n < 1 || n > WSR_MAXPROCS_LIMIT)
		return false;
	v = end + 1;
	m = strtol(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || m < 1 || n * m > WSR_MAXPROCS_LIMIT)
		return false;
	wsr__sched.topo_nodes = (int32_t)n;
	wsr__sched.topo_per_node = (int32_t)m;
	return true;
}

void wsr__debug_init(void)
{
	const char *env = getenv("WSRDEBUG");
	char *copy, *tok, *save = NULL;

	store_relaxed(&stats_live, 1);

	wsr__debug_stats = 0;
	wsr__debug_scheddetail = 0;
	wsr__debug_schedtrace_ms = 0;
	wsr__chaos_enabled = 0;
	wsr__sched.globalcheck = 61;
	wsr__sched.stealrounds = 4;
	wsr__sched.runnextpause_us = 3;
	wsr__sched.backlog_per_p = 4096;
	wsr__sched.policy = WSR_POLICY_GO;
	wsr__sched.steal_one = 0;
	wsr__sched.runnext_nosteal = 0;
	wsr__sched.victims = WSR_VICTIMS_RANDOM;
	wsr__sched.spinning = WSR_SPIN_HALF;
	wsr__sched.runnext_limit = 0;
	wsr__sched.topo_nodes = 0;
	wsr__sched.topo_per_node = 0;
	wsr__sched.stacksize = 256 * 1024;
	if (env == NULL || *env == '\0')
		return;
	copy = strdup(env);
	if (copy == NULL)
		return;
	/* Knobs given explicitly, which a policy's own defaults leave alone. */
	bool set_steal = false, set_globalcheck = false, set_rounds = false, set_victims = false;
	bool set_spinning = false, runnext_off = false;

	for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		const char *v;
		long long n;
		bool ok = true;

		if (eq == NULL) {
			fprintf(stderr, "wsr: WSRDEBUG: ignoring '%s' (want key=value)\n", tok);
			continue;
		}
		*eq = '\0';
		v = eq + 1;
		if (strcmp(tok, "schedtrace") == 0)
			ok = parse_int(v, 0, 3600000, &n) && (wsr__debug_schedtrace_ms = n, true);
		else if (strcmp(tok, "scheddetail") == 0)
			ok = parse_int(v, 0, 1, &n) && (wsr__debug_scheddetail = (int)n, true);
		else if (strcmp(tok, "stats") == 0)
			ok = parse_int(v, 0, 1, &n) && (wsr__debug_stats = (int)n, true);
		else if (strcmp(tok, "stacksize") == 0)
			ok = parse_size(v, &wsr__sched.stacksize) && wsr__sched.stacksize >= 16384;
		else if (strcmp(tok, "chaos") == 0)
			ok = parse_int(v, 0, INT64_MAX, &n) &&
			     (wsr__chaos_seed = (uint64_t)n, wsr__chaos_enabled = 1, true);
		else if (strcmp(tok, "globalcheck") == 0)
			ok = parse_int(v, 1, 1000000, &n) &&
			     (wsr__sched.globalcheck = (int32_t)n, set_globalcheck = true);
		else if (strcmp(tok, "stealrounds") == 0)
			ok = parse_int(v, 1, 64, &n) &&
			     (wsr__sched.stealrounds = (int32_t)n, set_rounds = true);
		else if (strcmp(tok, "runnextpause") == 0)
			ok = parse_int(v, 0, 1000, &n) &&
			     (wsr__sched.runnextpause_us = (int32_t)n, true);
		else if (strcmp(tok, "backlog") == 0)
			ok = parse_int(v, 0, 1 << 24, &n) &&
			     (wsr__sched.backlog_per_p = (int32_t)n, true);
		else if (strcmp(tok, "policy") == 0)
			ok = parse_name(v, NAMES(policy_names), &wsr__sched.policy);
		else if (strcmp(tok, "steal") == 0)
			ok = parse_name(v, NAMES(steal_names), &wsr__sched.steal_one) &&
			     (set_steal = true);
		else if (strcmp(tok, "victims") == 0)
			ok = parse_name(v, NAMES(victims_names), &wsr__sched.victims) &&
			     (set_victims = true);
		else if (strcmp(tok, "spinning") == 0)
			ok = parse_name(v, NAMES(spinning_names), &wsr__sched.spinning) &&
			     (set_spinning = true);
		else if (strcmp(tok, "topology") == 0)
			ok = parse_topology(v);
		else if (strcmp(tok, "runnext") == 0)
			ok = parse_int(v, 0, 1, &n) && (runnext_off = n == 0, true);
		else
			fprintf(stderr, "wsr: WSRDEBUG: ignoring unknown key '%s'\n", tok);
		if (!ok)
			fprintf(stderr, "wsr: WSRDEBUG: ignoring bad value %s=%s\n", tok, v);
	}
	free(copy);
	/* The policies' own defaults, where the knob was not given. */
	if (!set_steal)
		wsr__sched.steal_one = wsr__policy_is_deque(wsr__sched.policy);
	if (wsr__sched.policy == WSR_POLICY_TOKIO) {
		if (!set_globalcheck)
			wsr__sched.globalcheck = 31;
		if (!set_rounds)
			wsr__sched.stealrounds = 1;
		if (!set_victims)
			wsr__sched.victims = WSR_VICTIMS_ROUNDROBIN;
		if (!set_spinning)
			wsr__sched.spinning = WSR_SPIN_HALF_ALL;
		wsr__sched.runnext_nosteal = 1;
		wsr__sched.runnext_limit = 3 + 1;
	}
	if (runnext_off)
		wsr__sched.runnext_limit = 0 + 1;
	if (wsr__debug_stats && !stats_atexit) {
		/* A program may end with exit() from a G, while the runtime runs:
		 * wsr_main's teardown never comes, so print the line at exit(). */
		stats_atexit = true;
		atexit(stats_at_exit);
	}
	if (wsr__sched.stacksize < 16384)
		wsr__sched.stacksize = 256 * 1024;
}

/* The knobs in force as a WSRDEBUG value that reproduces them (the `knobs`
 * event): the policy, then each knob the policies differ in, resolved. */
void wsr__debug_knobs(char *buf, size_t size)
{
	int n = snprintf(buf, size,
			 "policy=%s,steal=%s,victims=%s,spinning=%s,runnext=%d,globalcheck=%d,"
			 "stealrounds=%d",
			 policy_names[wsr__sched.policy], steal_names[wsr__sched.steal_one],
			 victims_names[wsr__sched.victims], spinning_names[wsr__sched.spinning],
			 wsr__sched.runnext_limit != 1, (int)wsr__sched.globalcheck,
			 (int)wsr__sched.stealrounds);

	if (wsr__sched.topo_nodes > 0 && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, ",topology=%dx%d", (int)wsr__sched.topo_nodes,
			 (int)wsr__sched.topo_per_node);
}

/* ---- chaos ---- */

bool wsr__chaos_seed_set(void)
{
	return wsr__chaos_enabled != 0;
}

uint64_t wsr__chaos_seed_for(int32_t mid)
{
	return wsr__chaos_seed * 0x9E3779B97F4A7C15ULL + (uint64_t)mid * 0xBF58476D1CE4E5B9ULL + 1;
}

void wsr__chaos(struct wsr_m *mp, enum chaos_site site)
{
	uint32_t r = wsr__fastrand(mp);

	(void)site;
	/* One in 8: yield the thread; one in 64: sleep 1-50 us. */
	if ((r & 7) == 0) {
		sched_yield();
	} else if ((r & 63) == 1) {
		struct timespec ts = {0, (long)(1000 + (r >> 8) % 50000)};

		nanosleep(&ts, NULL);
	}
}

/* ---- schedtrace ---- */

struct gdump {
	FILE *f;
};

static const char *gstatus_num(uint32_t s)
{
	/* Go's numbering: _Gidle 0, _Grunnable 1, _Grunning 2, _Gsyscall 3,
	 * _Gwaiting 4, _Gdead 6. */
	static const char *const go[] = {"0", "1", "2", "4", "3", "6"};

	return s < sizeof(go) / sizeof(go[0]) ? go[s] : "?";
}

static void dump_g(struct wsr_g *gp, void *arg)
{
	struct gdump *d = arg;
	uint32_t s = load_relaxed(&gp->status);
	struct wsr_m *mp;

	if (s == G_IDLE || s == G_DEAD)
		return;
	mp = s == G_RUNNING || s == G_SYSCALL ? gp->m : NULL;
	fprintf(d->f, "  G%lld: status=%s(%s) m=", (long long)gp->goid, gstatus_num(s),
		s == G_WAITING ? wsr__waitreason_string(gp->waitreason) : "");
	if (mp != NULL)
		fprintf(d->f, "%d", mp->id);
	else
		fputs("nil", d->f);
	fputs(" lockedm=nil\n", d->f);
}

/* Reads the counters of one schedtrace; caller holds sched.lock. The
 * per-P reads race with the Ps' owners and thieves (as in Go), so each P's
 * loads are bracketed by read_ts (wsr_tp_schedtrace.h): the analyzer
 * compares P i with its reconstruction at the time P i was read, not at the
 * event's, and names the events that raced with the loads. */
static void schedtrace_read(struct wsr_tp_schedtrace *st, uint32_t *runq, uint32_t *ticks,
			    int64_t *read_ts)
{
	int32_t i;

	read_ts[0] = wsr__nanotime(); /* brackets the global counts with P0 */
	st->gomaxprocs = wsr__sched.gomaxprocs;
	st->idleprocs = load_seq(&wsr__sched.npidle);
	st->threads = load_relaxed(&wsr__sched.mcount);
	st->spinning = load_seq(&wsr__sched.nmspinning);
	st->needspinning = load_seq(&wsr__sched.needspinning);
	st->idlethreads = load_relaxed(&wsr__sched.nmidle);
	st->runqueue = load_relaxed(&wsr__sched.runqsize);
	for (i = 0; i < wsr__sched.gomaxprocs; i++) {
		if (i > 0)
			read_ts[i] = wsr__nanotime();
		runq[i] = wsr__runqlen(&wsr__sched.allp[i]);
		ticks[i] = load_relaxed(&wsr__sched.allp[i].schedtick);
	}
	st->runq = runq;
	st->schedtick = ticks;
	st->read_ts = read_ts;
}

/* Prints one schedtrace (and scheddetail) block from what schedtrace_read saw;
 * caller holds sched.lock. */
static void schedtrace_print(FILE *f, bool detailed, const struct wsr_tp_schedtrace *st,
			     const uint32_t *runq)
{
	int32_t i;
	struct wsr_m *mp;

	/* As Go's: milliseconds since the runtime started (wsr_main: the init
	 * event), at the first read of the snapshot (read_ts[0]). */
	fprintf(f,
		"SCHED %lldms: gomaxprocs=%d idleprocs=%d threads=%d spinningthreads=%d "
		"needspinning=%d idlethreads=%d runqueue=%d",
		(long long)((st->read_ts[0] - wsr__sched.starttime) / 1000000), st->gomaxprocs, st->idleprocs,
		st->threads, st->spinning, st->needspinning, st->idlethreads, st->runqueue);
	if (detailed) {
		fprintf(f, " gcwaiting=false nmidlelocked=0 stopwait=0 sysmonwait=false\n");
		for (i = 0; i < wsr__sched.gomaxprocs; i++) {
			struct wsr_p *pp = &wsr__sched.allp[i];
			uint32_t s = load_relaxed(&pp->status);
			/* Go's numbering: _Pidle 0, _Prunning 1, _Psyscall 2. */
			struct wsr_m *owner = s == P_RUNNING ? pp->m : NULL;

			fprintf(f, "  P%d: status=%u schedtick=%u syscalltick=%u m=", i, s,
				st->schedtick[i], load_relaxed(&pp->syscalltick));
			if (owner != NULL)
				fprintf(f, "%d", owner->id);
			else
				fputs("nil", f);
			fprintf(f, " runqsize=%u gfreecnt=%d timerslen=%d\n", runq[i],
				pp->gfreecnt, pp->ntimers);
		}
		for (mp = wsr__sched.allm; mp != NULL; mp = mp->alllink) {
			struct wsr_p *pp = mp->p;
			struct wsr_g *gp = mp->curg;

			fprintf(f, "  M%d: p=", mp->id);
			if (pp != NULL)
				fprintf(f, "%d", pp->id);
			else
				fputs("nil", f);
			fputs(" curg=", f);
			if (gp != NULL)
				fprintf(f, "%lld", (long long)gp->goid);
			else
				fputs("nil", f);
			fprintf(f,
				" mallocing=0 throwing=0 preemptoff= locks=0 dying=0 spinning=%s "
				"blocked=%s lockedg=nil\n",
				mp->spinning ? "true" : "false", mp->blocked ? "true" : "false");
		}
		{
			struct gdump d = {f};

			wsr__lock(&wsr__sched.gflock);
			wsr__forallg(dump_g, &d);
			wsr__unlock(&wsr__sched.gflock);
		}
	} else {
		for (i = 0; i < wsr__sched.gomaxprocs; i++) {
			fputs(" ", f);
			if (i == 0)
				fputs("[ ", f);
			fprintf(f, "%u", runq[i]);
			if (i == wsr__sched.gomaxprocs - 1)
				fputs(" ]", f);
		}
		fputs(" schedticks=[ ", f);
		for (i = 0; i < wsr__sched.gomaxprocs; i++)
			fprintf(f, "%u ", st->schedtick[i]);
		fputs("]\n", f);
	}
	fflush(f);
}

void wsr__schedtrace(bool detailed)
{
	uint32_t stackq[64], stackt[64];
	int64_t stackr[64];
	uint32_t *runq = stackq, *ticks = stackt;
	int64_t *read_ts = stackr;
	struct wsr_tp_schedtrace st;

	if (wsr__sched.gomaxprocs > 64) {
		size_t n = (size_t)wsr__sched.gomaxprocs;

		runq = calloc(n, sizeof(uint32_t));
		ticks = calloc(n, sizeof(uint32_t));
		read_ts = calloc(n, sizeof(int64_t));
		if (runq == NULL || ticks == NULL || read_ts == NULL)
			goto out;
	}
	/* Like Go, under sched.lock: the idle lists and the global queue are still. */
	wsr__lock(&wsr__sched.lock);
	if (wsr__sched.mexited > 0) {
		/* The teardown has begun and Ms leave without an event: a snapshot
		 * now would count fewer threads than the trace can account for. */
		wsr__unlock(&wsr__sched.lock);
		goto out;
	}
	schedtrace_read(&st, runq, ticks, read_ts);
	/* The event first, right after the reads: its timestamp is then as close
	 * as can be to the snapshot the analyzer cross-checks it against. */
	WSR_TRACE(schedtrace, &wsr__sysmon_stats, -1, -1, &st);
	schedtrace_print(stderr, detailed, &st, runq);
	wsr__unlock(&wsr__sched.lock);
out:
	if (runq != stackq) {
		free(runq);
		free(ticks);
		free(read_ts);
	}
}

/* ---- stats ---- */

/* The keys of the `wsr stats:` line in its order: the catalog's, with each
 * extra counter after its event (WSR_CAT_STAT_ORDER), then WSR_CAT_STAT_LAST. */
static const enum wsr_stat stat_order[] = {
#define WSR_STAT_KEY(key) WSR_ST_##key,
	WSR_CAT_STAT_ORDER(WSR_STAT_KEY)
#undef WSR_STAT_KEY
};

static const char *const stat_names[] = {
#define WSR_STAT_KEY(key) #key,
	WSR_CAT_STAT_ORDER(WSR_STAT_KEY)
#undef WSR_STAT_KEY
};
_Static_assert(sizeof(stat_order) / sizeof(stat_order[0]) == WSR_ST_COUNT,
	       "the stats line prints every counter once");

void wsr__stats_sum(uint64_t out[WSR_ST_COUNT])
{
	struct wsr_m *mp;
	int i;

	for (i = 0; i < WSR_ST_COUNT; i++)
		out[i] = load_relaxed(&wsr__sysmon_stats.n[i]);
	for (mp = wsr__sched.allm; mp != NULL; mp = mp->alllink)
		for (i = 0; i < WSR_ST_COUNT; i++)
			out[i] += load_relaxed(&mp->stats.n[i]);
}

void wsr__stats_print(void)
{
	uint64_t sum[WSR_ST_COUNT];
	size_t i;

	/* Once: the teardown, the deadlock exit and the atexit hook may race;
	 * the exchange picks one (it pairs with itself in the others). */
	if (xchg_acq_rel(&stats_live, 0) == 0)
		return;
	wsr__stats_sum(sum);
	fflush(stdout);
	fputs("wsr stats:", stderr);
	for (i = 0; i < sizeof(stat_order) / sizeof(stat_order[0]); i++)
		fprintf(stderr, " %s=%llu", stat_names[i], (unsigned long long)sum[stat_order[i]]);
#define WSR_STAT_LAST(key) fprintf(stderr, " " #key "=%llu", (unsigned long long)wsr__##key);
	WSR_CAT_STAT_LAST(WSR_STAT_LAST)
#undef WSR_STAT_LAST
	fputc('\n', stderr);
	fflush(stderr);
}
