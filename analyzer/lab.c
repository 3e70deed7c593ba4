/*
 * lab.c - `wsr lab [--workloads LIST] [--policies LIST] [--procs LIST]
 * [--out DIR] [--runs N] [--quick]`: records every workload x policy x P
 * with `wsr run --lossless` (cmd_run_child, scale.c) under
 * WSRDEBUG=policy=NAME and WSRMAXPROCS=P, then writes one comparison as
 * DIR/lab.txt (also printed), DIR/lab.md, DIR/lab.json and DIR/lab.html (one
 * self-contained page, inline SVG) (docs/lab.md).
 *
 * Design: the workloads are the examples and bench programs of the build
 * tree this executable belongs to (../examples, ../bench from its
 * directory), with fixed arguments (smaller under --quick); those not built
 * are left out of the default list. The policies are the catalog's `policy`
 * enumeration (wsr_policy_names), which the runtime's enum wsr_policy is
 * declared from; a policy may carry knobs (go+steal=one: WSRDEBUG
 * policy=go,steal=one). Each figure is read back from the run's database
 * through metrics.c (metrics_load, metric_value, metrics_lab_load), but for
 * one count: throughput is the workload's own operation count (the number
 * its output names, in the run's log) over meta duration_ns; speed-up is
 * from duration_ns only. With --runs N each cell is
 * the run of median duration (N odd: the middle one; even: the lower middle),
 * and all its figures are that run's, so every cell is one database's.
 *
 * Invariants:
 *   - Every operand is checked before anything is written: an unknown
 *     workload or policy, a bad P or N exits 2, a DIR that cannot be created
 *     or is not empty exits 1, and in both cases nothing is touched.
 *   - Nothing outside DIR is written. A failed run stops the lab, and so
 *     does a run whose runtime ignored part of its WSRDEBUG (a bad knob
 *     value: the cell would not be the configuration it is labelled).
 * Concurrency: single-threaded; the runs are sequential.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "cli.h"
#include "cmd.h"
#include "db.h"
#include "err.h"
#include "metrics.h"
#include "rec.h"

#define LAB_MAX 16 /* workloads, policies, Ps, runs: each at most */

/* The arguments keep each trace near 10-30 MB of database at P = 1 (sieve
 * 2000 gave 2.2 GB: its cost grows with the square of N; bench-yield 20000,
 * 232 MB). */
struct workload {
	const char *name, *path; /* path: relative to the build tree */
	const char *args[4], *quick[4];
	/* The operation count in the program's output: the number right after
	 * the first occurrence of this text (bench/bench.h's result line has
	 * " ops=K"; each example prints its own count). */
	const char *ops;
};

static const struct workload workloads[] = {
	{"fib", "examples/fib", {"20"}, {"12"}, "spawned = "},
	{"skewed", "examples/skewed", {"20000", "400"}, {"2000", "400"}, "ran = "},
	{"pingpong", "examples/pingpong", {"10000"}, {"2000"}, "round trips = "},
	{"sieve", "examples/sieve", {"200"}, {"50"}, "prime "},
	{"pipeline", "examples/pipeline", {"5000"}, {"1000"}, "results = "},
	{"bench-spawn_tree", "bench/bench-spawn_tree", {"14"}, {"10"}, " ops="},
	{"bench-spawn_flat", "bench/bench-spawn_flat", {"20000", "1"}, {"2000", "1"}, " ops="},
	{"bench-skewed", "bench/bench-skewed", {"20000", "512", "1"}, {"2000", "512", "1"},
	 " ops="},
	{"bench-yield", "bench/bench-yield", {"2000"}, {"500"}, " ops="},
};
#define N_WORKLOADS ((int)(sizeof(workloads) / sizeof(workloads[0])))

/* One cell's figures (NAN-free: a figure that does not apply is `have` 0). */
enum fig {
	F_THROUGHPUT, /* the workload's operations per second of meta duration_ns */
	F_SPEEDUP,    /* duration at P = 1 (same workload, policy) / duration */
	F_STEALS,
	F_GS_PER_STEAL,
	F_ATTEMPTS_PER_STEAL,
	F_SPIN_PCT,
	F_P50_US,
	F_P99_US,
	F_LOCALITY_PCT,
	F_LOCK_WAITS,   /* steal_lock_wait events (locked, trylock) */
	F_LOCK_WAIT_MS, /* their wait_ns summed */
	F_REMOTE,       /* steals across the nodes of topology=NxM */
	F_COUNT
};

static const struct {
	const char *key, *title;
	int prec; /* decimals */
} figs[F_COUNT] = {
	{"throughput", "ops/s", 0},
	{"speedup", "speed-up", 2},
	{"steals", "steals", 0},
	{"gs_per_steal", "Gs/steal", 2},
	{"attempts_per_steal", "probes/steal", 2},
	{"spin_cpu_pct", "spin CPU %", 2},
	{"latency_p50_us", "p50 us", 1},
	{"latency_p99_us", "p99 us", 1},
	{"locality_pct", "local %", 1},
	{"lock_waits", "lock waits", 0},
	{"lock_wait_ms", "lock wait ms", 3},
	{"remote_steals", "remote", 0},
};

struct cell {
	int w, pol, procs; /* pol: the index of the policy in lab_args.pol */
	char rel[PATH_MAX]; /* the trace directory, relative to DIR */
	char knobs[256];    /* meta policy_knobs */
	int64_t duration_ns, ops; /* ops: -1 when the output names no count */
	double v[F_COUNT];
	bool have[F_COUNT];
};

/* A policy of the matrix: NAME[+KNOB=VALUE...] as given (its label and
 * directory name) and the WSRDEBUG value it runs with. */
struct lab_policy {
	char label[96], wsrdebug[128];
	int id;    /* the catalog's policy */
	int nodes; /* nodes=N: topology=Nx(P/N) at each P that N divides; 0: none */
};

struct lab_args {
	char dir[PATH_MAX];
	int wl[LAB_MAX], nw;
	struct lab_policy pol[LAB_MAX];
	int npol;
	int procs[LAB_MAX], np;
	int runs;
	bool quick;
};

static const struct cli_opt lab_opts[] = {
	{"workloads", 'w', "LIST", "comma-separated workloads (default: every one built)"},
	{"policies", 'p', "LIST",
	 "comma-separated policies, each NAME or NAME+KNOB=VALUE...\n"
	 "(e.g. go+steal=one; default: every one of the catalog, no knobs)"},
	{"procs", 'n', "LIST", "comma-separated WSRMAXPROCS values (default: 1,2,8,64)"},
	{"out", 'o', "DIR",
	 "where the runs and the comparison go (default\n"
	 "./wsr-lab-YYYYMMDD-HHMMSS); must not exist or be empty"},
	{"runs", 'r', "N", "runs per cell; the run of median duration is shown (default 1)"},
	{"quick", 'q', NULL, "small arguments for every workload"},
	{NULL, 0, NULL, NULL},
};

/* The WSRDEBUG scheduling knobs a policy may carry (runtime/debug.c), and
 * the lab's own nodes=N (lab_policy.nodes). */
static const char *const knob_keys[] = {"steal",	"victims",     "topology", "spinning",
					"runnext",	"globalcheck", "stealrounds", "runnextpause",
					"backlog",	"nodes",       NULL};

static void lab_list(FILE *f)
{
	fprintf(f, "\nworkloads:");
	for (int i = 0; i < N_WORKLOADS; i++)
		fprintf(f, " %s", workloads[i].name);
	fprintf(f, "\npolicies:");
	for (int i = 0; i < WSR_POLICY_COUNT; i++)
		fprintf(f, " %s", wsr_policy_names[i]);
	fprintf(f, "\nknobs:");
	for (int i = 0; knob_keys[i] != NULL; i++)
		fprintf(f, " %s", knob_keys[i]);
	fprintf(f, "\n");
}

static const struct cli lab_cli = {
	.prog = "wsr lab",
	.synopsis = "wsr lab [--workloads LIST] [--policies LIST] [--procs LIST] [--out DIR]\n"
		    "       [--runs N] [--quick]",
	.about = "Records every workload x policy x P and writes one comparison to\n"
		 "DIR/lab.txt, lab.md, lab.json and lab.html (see wsr-lab(1)).",
	.opts = lab_opts,
	.min_args = 0,
	.max_args = 0,
	.help_extra = lab_list,
};

static int find_name(const char *s, size_t n, int count, const char *(*name)(int))
{
	for (int i = 0; i < count; i++)
		if (strlen(name(i)) == n && strncmp(name(i), s, n) == 0)
			return i;
	return -1;
}

static const char *wl_name(int i)
{
	return workloads[i].name;
}

static const char *pol_name(int i)
{
	return wsr_policy_names[i];
}

/* One policy NAME[+KNOB=VALUE...] of --policies (len bytes of s) into *p;
 * 2 after a message when the name or a knob is unknown. */
static int parse_policy(const char *s, size_t len, struct lab_policy *p)
{
	size_t nl = strcspn(s, "+");
	int k;

	if (nl > len)
		nl = len;
	if (len >= sizeof(p->label) ||
	    (k = find_name(s, nl, WSR_POLICY_COUNT, pol_name)) < 0) {
		fprintf(stderr, "wsr lab: error: --policies: unknown policy '%.*s' (known:",
			(int)nl, s);
		for (int i = 0; i < WSR_POLICY_COUNT; i++)
			fprintf(stderr, " %s", wsr_policy_names[i]);
		fprintf(stderr, ")\n");
		return 2;
	}
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && strchr("_+=", s[i]) == NULL) {
			fprintf(stderr,
				"wsr lab: error: --policies: '%.*s': only letters, digits, '_', "
				"'+' and '=' (it names a directory)\n",
				(int)len, s);
			return 2;
		}
	snprintf(p->label, sizeof(p->label), "%.*s", (int)len, s);
	p->id = k;
	p->nodes = 0;
	int n = snprintf(p->wsrdebug, sizeof(p->wsrdebug), "policy=%s", wsr_policy_names[k]);
	for (size_t at = nl; at < len;) {
		const char *kv = s + at + 1;
		size_t l = strcspn(kv, "+"), kl = strcspn(kv, "=");
		if (at + 1 + l > len)
			l = len - at - 1;
		bool known = false;
		for (int i = 0; knob_keys[i] != NULL; i++)
			known |= kl < l && strlen(knob_keys[i]) == kl &&
				 strncmp(kv, knob_keys[i], kl) == 0;
		if (!known || kl + 1 >= l) {
			fprintf(stderr,
				"wsr lab: error: --policies: '%.*s' in '%s': want KNOB=VALUE, "
				"KNOB one of",
				(int)l, kv, p->label);
			for (int i = 0; knob_keys[i] != NULL; i++)
				fprintf(stderr, " %s", knob_keys[i]);
			fprintf(stderr, "\n");
			return 2;
		}
		if (kl == 5 && strncmp(kv, "nodes", 5) == 0) {
			char *end;
			long v = strtol(kv + 6, &end, 10);
			if (end != kv + l || v < 1 || v > 1024) {
				fprintf(stderr, "wsr lab: error: --policies: '%.*s': want 1..1024\n",
					(int)l, kv);
				return 2;
			}
			p->nodes = (int)v;
		} else {
			n += snprintf(p->wsrdebug + n, sizeof(p->wsrdebug) - (size_t)n, ",%.*s",
				      (int)l, kv);
		}
		at += 1 + l;
	}
	return 0;
}

static int parse_policies(const char *list, struct lab_args *a)
{
	a->npol = 0;
	for (const char *s = list; *s != '\0';) {
		size_t l = strcspn(s, ",");
		if (a->npol >= LAB_MAX) {
			fprintf(stderr, "wsr lab: error: --policies: at most %d\n", LAB_MAX);
			return 2;
		}
		if (parse_policy(s, l, &a->pol[a->npol]) != 0)
			return 2;
		for (int i = 0; i < a->npol; i++)
			if (strcmp(a->pol[i].label, a->pol[a->npol].label) == 0) {
				fprintf(stderr, "wsr lab: error: --policies: '%s' twice\n",
					a->pol[i].label);
				return 2;
			}
		a->npol++;
		s += l;
		if (*s == ',')
			s++;
	}
	if (a->npol == 0) {
		fprintf(stderr, "wsr lab: error: --policies: an empty list\n");
		return 2;
	}
	return 0;
}

/* LIST of names into out[]; 2 after a message on an unknown one. */
static int parse_names(const char *opt, const char *list, int count, const char *(*name)(int),
		       int *out, int *n)
{
	*n = 0;
	for (const char *s = list; *s != '\0';) {
		size_t l = strcspn(s, ",");
		int k = find_name(s, l, count, name);
		if (k < 0 || *n >= LAB_MAX) {
			fprintf(stderr, "wsr lab: error: --%s: %s '%.*s' (known:", opt,
				k < 0 ? "unknown" : "too many, at", (int)l, s);
			for (int i = 0; i < count; i++)
				fprintf(stderr, " %s", name(i));
			fprintf(stderr, ")\n");
			return 2;
		}
		out[(*n)++] = k;
		s += l;
		if (*s == ',')
			s++;
	}
	if (*n == 0) {
		fprintf(stderr, "wsr lab: error: --%s: an empty list\n", opt);
		return 2;
	}
	return 0;
}

static int parse_count(const char *opt, const char *s, int lo, int hi, int *v)
{
	char *end;
	long x = strtol(s, &end, 10);

	if (end == s || (*end != '\0' && *end != ',') || x < lo || x > hi) {
		fprintf(stderr, "wsr lab: error: --%s: want %d..%d, not '%s'\n", opt, lo, hi, s);
		return 2;
	}
	*v = (int)x;
	return 0;
}

static int lab_opt(void *ctx, int key, const char *arg)
{
	struct lab_args *a = ctx;

	switch (key) {
	case 'w':
		return parse_names("workloads", arg, N_WORKLOADS, wl_name, a->wl, &a->nw);
	case 'p':
		return parse_policies(arg, a);
	case 'n':
		a->np = 0;
		for (const char *s = arg; *s != '\0';) {
			if (a->np >= LAB_MAX) {
				fprintf(stderr, "wsr lab: error: --procs: at most %d values\n",
					LAB_MAX);
				return 2;
			}
			if (parse_count("procs", s, 1, 1024, &a->procs[a->np]))
				return 2;
			a->np++;
			s += strcspn(s, ",");
			if (*s == ',')
				s++;
		}
		return a->np > 0 ? 0 : (fprintf(stderr, "wsr lab: error: --procs: empty\n"), 2);
	case 'o':
		snprintf(a->dir, sizeof(a->dir), "%s", arg);
		return 0;
	case 'r':
		if (strchr(arg, ',') != NULL) {
			fprintf(stderr, "wsr lab: error: --runs: one number, not '%s'\n", arg);
			return 2;
		}
		return parse_count("runs", arg, 1, LAB_MAX, &a->runs);
	case 'q':
		a->quick = true;
		return 0;
	}
	return 0;
}

/* The build tree: this executable's directory's parent. */
static int tree_dir(char *buf, size_t size, struct wsr_err *err)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0) {
		err_push(err, "readlink /proc/self/exe: %s", strerror(errno));
		return -1;
	}
	self[n] = '\0';
	char *s = strrchr(self, '/');
	if (s != NULL)
		*s = '\0';
	if (snprintf(buf, size, "%s/..", self) >= (int)size) {
		err_push(err, "%s: the path is too long", self);
		return -1;
	}
	return 0;
}

/* The run's log (the program's output and wsr run's): the operation count
 * after the workload's key (-1 when absent), and -1 (pushed) when the
 * runtime ignored part of WSRDEBUG. */
static int read_log(const char *log, const struct workload *wl, int64_t *ops,
		    struct wsr_err *err)
{
	FILE *f = fopen(log, "r");
	char line[1024];
	int ret = 0;

	*ops = -1;
	if (f == NULL) {
		err_push(err, "reading %s: %s", log, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		const char *k = strstr(line, wl->ops);
		char *end;
		if (*ops < 0 && k != NULL) {
			long long v = strtoll(k + strlen(wl->ops), &end, 10);
			if (end != k + strlen(wl->ops) && v >= 0)
				*ops = v;
		}
		if (strncmp(line, "wsr: WSRDEBUG: ignoring", 23) == 0) {
			line[strcspn(line, "\n")] = '\0';
			err_push(err, "%s: the runtime said '%s': fix the knob", log, line);
			ret = -1;
			break;
		}
	}
	fclose(f);
	return ret;
}

static int load_cell(const char *dir, struct cell *c, struct wsr_err *err)
{
	char path[PATH_MAX * 2];
	sqlite3 *db = NULL;
	struct metrics *m = calloc(1, sizeof(*m));
	struct lab_figures lf;
	int ret = -1;
	double v;

	snprintf(path, sizeof(path), "%s/%s/trace.db", dir, c->rel);
	if (m == NULL) {
		err_push(err, "out of memory");
		return -1;
	}
	if (db_open_ro(path, &db, err) < 0 || metrics_load(db, path, m, err) < 0 ||
	    metrics_lab_load(db, &lf, err) < 0)
		goto out;
	c->duration_ns = m->duration_ns;
	snprintf(c->knobs, sizeof(c->knobs), "%s", lf.knobs);
	memset(c->have, 0, sizeof(c->have));
	if (m->duration_ns > 0 && c->ops >= 0) {
		c->v[F_THROUGHPUT] = (double)c->ops * 1e9 / (double)m->duration_ns;
		c->have[F_THROUGHPUT] = true;
	}
	if (lf.lock_waits >= 0) {
		c->v[F_LOCK_WAITS] = (double)lf.lock_waits;
		c->v[F_LOCK_WAIT_MS] = (double)lf.lock_wait_ns / 1e6;
		c->have[F_LOCK_WAITS] = c->have[F_LOCK_WAIT_MS] = true;
	}
	if (lf.remote_steals >= 0) {
		c->v[F_REMOTE] = (double)lf.remote_steals;
		c->have[F_REMOTE] = true;
	}
	c->v[F_STEALS] = (double)m->steals;
	c->have[F_STEALS] = true;
	if (m->steals > 0) {
		c->v[F_GS_PER_STEAL] = (double)m->stolen / (double)m->steals;
		c->have[F_GS_PER_STEAL] = true;
		if (lf.steal_attempts >= 0) {
			c->v[F_ATTEMPTS_PER_STEAL] = (double)lf.steal_attempts / (double)m->steals;
			c->have[F_ATTEMPTS_PER_STEAL] = true;
		}
	}

	static const struct {
		enum fig f;
		const char *name;
	} mv[] = {{F_SPIN_PCT, "spin_cpu_pct"},
		  {F_P50_US, "latency_p50_us"},
		  {F_P99_US, "latency_p99_us"}};

	for (size_t k = 0; k < sizeof(mv) / sizeof(mv[0]); k++)
		if (metric_value(m, mv[k].name, &v) == 0 &&
		    (mv[k].f == F_SPIN_PCT || m->latency_n > 0)) {
			c->v[mv[k].f] = v;
			c->have[mv[k].f] = true;
		}
	if (lf.queued_runs > 0) {
		c->v[F_LOCALITY_PCT] = 100.0 * (double)lf.local_runs / (double)lf.queued_runs;
		c->have[F_LOCALITY_PCT] = true;
	}
	ret = 0;
out:
	free(m);
	if (db != NULL)
		sqlite3_close(db);
	return ret;
}

static void fmt(char *buf, size_t n, const struct cell *c, int f)
{
	if (c->have[f])
		snprintf(buf, n, "%.*f", figs[f].prec, c->v[f]);
	else
		snprintf(buf, n, "-");
}

/* Labels and knob strings go into JSON, HTML and paths as they are: a label
 * holds only letters, digits, '_', '+' and '=' (parse_policy), and the
 * runtime's knob string only those and ','. */

/* "P = 1, 2" into buf: the Ps at which policy q's cells had knobs K. */
static void knob_ps(const struct cell *cells, int n, int q, const char *k, char *buf,
		    size_t size)
{
	size_t off = 0;
	int seen[LAB_MAX * LAB_MAX], ns = 0;

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		bool dup = false;
		if (cells[i].pol != q || strcmp(cells[i].knobs, k) != 0)
			continue;
		for (int j = 0; j < ns; j++)
			dup |= seen[j] == cells[i].procs;
		if (dup || ns >= LAB_MAX * LAB_MAX)
			continue;
		seen[ns++] = cells[i].procs;
		off += (size_t)snprintf(buf + off, off < size ? size - off : 0, "%s%d",
					ns > 1 ? ", " : "P = ", cells[i].procs);
		if (off >= size)
			break;
	}
}

enum fmt_kind { FMT_TEXT, FMT_MD, FMT_HTML };

/* The knobs in force (meta policy_knobs), one line per policy and string. */
static void write_knobs(FILE *f, const struct cell *cells, int n, const struct lab_args *a,
			enum fmt_kind kind)
{
	static const char *const head[] = {"\nknobs in force (meta policy_knobs):\n",
					   "\n**Knobs in force** (meta `policy_knobs`):\n\n",
					   "<h2>Knobs in force</h2>\n<p>meta policy_knobs</p><ul>\n"};
	char ps[256];

	fputs(head[kind], f);
	for (int q = 0; q < a->npol; q++)
		for (int i = 0; i < n; i++) {
			bool first = true;
			if (cells[i].pol != q)
				continue;
			for (int j = 0; j < i; j++)
				first &= !(cells[j].pol == q && strcmp(cells[j].knobs, cells[i].knobs) == 0);
			if (!first)
				continue;
			const char *k = cells[i].knobs[0] != '\0' ? cells[i].knobs : "(none recorded)";
			knob_ps(cells, n, q, cells[i].knobs, ps, sizeof(ps));
			if (kind == FMT_TEXT)
				fprintf(f, "  %s (%s): %s\n", a->pol[q].label, ps, k);
			else if (kind == FMT_MD)
				fprintf(f, "- `%s` (%s): `%s`\n", a->pol[q].label, ps, k);
			else
				fprintf(f, "<li><code>%s</code> (%s): <code>%s</code></li>\n",
					a->pol[q].label, ps, k);
		}
	if (kind == FMT_HTML)
		fputs("</ul>\n", f);
}

static int label_width(const struct lab_args *a)
{
	int w = 7;
	for (int q = 0; q < a->npol; q++)
		if ((int)strlen(a->pol[q].label) > w)
			w = (int)strlen(a->pol[q].label);
	return w;
}

static void write_table(FILE *f, const struct cell *cells, int n, const struct lab_args *a,
			bool md)
{
	char b[64];
	int pw = label_width(a);

	if (md) {
		fprintf(f, "| workload | policy | P |");
		for (int k = 0; k < F_COUNT; k++)
			fprintf(f, " %s |", figs[k].title);
		fprintf(f, " trace |\n|---|---|---:|");
		for (int k = 0; k < F_COUNT; k++)
			fprintf(f, "---:|");
		fprintf(f, "---|\n");
	} else {
		fprintf(f, "%-18s %-*s %4s", "workload", pw, "policy", "P");
		for (int k = 0; k < F_COUNT; k++)
			fprintf(f, " %12s", figs[k].title);
		fprintf(f, "  trace\n");
	}
	for (int i = 0; i < n; i++) {
		const struct cell *c = &cells[i];
		if (md)
			fprintf(f, "| %s | %s | %d |", workloads[c->w].name, a->pol[c->pol].label,
				c->procs);
		else
			fprintf(f, "%-18s %-*s %4d", workloads[c->w].name, pw, a->pol[c->pol].label,
				c->procs);
		for (int k = 0; k < F_COUNT; k++) {
			fmt(b, sizeof(b), c, k);
			if (md)
				fprintf(f, " [%s](%s/trace.db) |", b, c->rel);
			else
				fprintf(f, " %12s", b);
		}
		if (md)
			fprintf(f, " [%s](%s) |\n", c->rel, c->rel);
		else
			fprintf(f, "  %s\n", c->rel);
	}
	write_knobs(f, cells, n, a, md ? FMT_MD : FMT_TEXT);
}

static void write_json(FILE *f, const struct cell *cells, int n, const struct lab_args *a)
{
	fprintf(f, "{\n  \"cells\": [");
	for (int i = 0; i < n; i++) {
		const struct cell *c = &cells[i];
		fprintf(f,
			"%s\n    {\"workload\": \"%s\", \"policy\": \"%s\", \"label\": \"%s\", "
			"\"procs\": %d, \"knobs\": \"%s\", \"trace\": \"%s\", "
			"\"db\": \"%s/trace.db\", \"duration_ns\": %" PRId64,
			i ? "," : "", workloads[c->w].name, wsr_policy_names[a->pol[c->pol].id],
			a->pol[c->pol].label, c->procs, c->knobs, c->rel, c->rel, c->duration_ns);
		if (c->ops >= 0)
			fprintf(f, ", \"ops\": %" PRId64, c->ops);
		else
			fprintf(f, ", \"ops\": null");
		for (int k = 0; k < F_COUNT; k++) {
			if (c->have[k])
				fprintf(f, ", \"%s\": %.17g", figs[k].key, c->v[k]);
			else
				fprintf(f, ", \"%s\": null", figs[k].key);
		}
		fprintf(f, "}");
	}
	fprintf(f, "\n  ]\n}\n");
}

/* One SVG plot of figure K against P for workload W, a line per policy. */
static void svg_plot(FILE *f, const struct cell *cells, int n, int w, int k,
		     const struct lab_args *a)
{
	static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c",
					      "#9467bd", "#ff7f0e", "#8c564b"};
	const double W = 360, H = 200, L = 50, B = 30, T = 20, R = 30;
	double ymax = 0;

	for (int i = 0; i < n; i++)
		if (cells[i].w == w && cells[i].have[k] && cells[i].v[k] > ymax)
			ymax = cells[i].v[k];
	if (ymax <= 0)
		ymax = 1;
	fprintf(f,
		"<svg width=\"%.0f\" height=\"%.0f\">"
		"<text x=\"%.0f\" y=\"14\" font-size=\"12\">%s</text>",
		W, H, L, figs[k].title);
	fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#000\"/>", L,
		H - B, W - R, H - B);
	fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#000\"/>", L, T,
		L, H - B);
	fprintf(f, "<text x=\"2\" y=\"%.0f\" font-size=\"10\">%.3g</text>", T + 4, ymax);
	fprintf(f, "<text x=\"2\" y=\"%.0f\" font-size=\"10\">0</text>", H - B);
	for (int j = 0; j < a->np; j++) {
		double x = L + (W - L - R) * (a->np > 1 ? (double)j / (a->np - 1) : 0.5);
		fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" font-size=\"10\">P=%d</text>", x - 10,
			H - B + 14, a->procs[j]);
	}
	for (int q = 0; q < a->npol; q++) {
		const char *col = colours[q % 6];
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" points=\"", col);
		for (int j = 0; j < a->np; j++)
			for (int i = 0; i < n; i++)
				if (cells[i].w == w && cells[i].pol == q &&
				    cells[i].procs == a->procs[j] && cells[i].have[k])
					fprintf(f, "%.1f,%.1f ",
						L + (W - L - R) * (a->np > 1
									   ? (double)j / (a->np - 1)
									   : 0.5),
						H - B - (H - B - T) * cells[i].v[k] / ymax);
		fprintf(f, "\"/><text x=\"%.0f\" y=\"%d\" font-size=\"10\" fill=\"%s\">%s</text>",
			W - 60, 14 + 12 * q, col, a->pol[q].label);
	}
	fprintf(f, "</svg>\n");
}

static void write_html(FILE *f, const struct cell *cells, int n, const struct lab_args *a)
{
	char b[64];

	fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>wsr lab</title>"
		   "<style>body{font-family:sans-serif}td,th{padding:2px 6px;text-align:right}"
		   "svg{margin:4px;border:1px solid #ccc}</style></head><body>\n"
		   "<h1>wsr lab</h1>\n");
	for (int wi = 0; wi < a->nw; wi++) {
		int w = a->wl[wi];
		fprintf(f, "<h2>%s</h2>\n<div>\n", workloads[w].name);
		for (int k = 0; k < F_COUNT; k++)
			svg_plot(f, cells, n, w, k, a);
		fprintf(f, "</div>\n<table><tr><th>policy</th><th>P</th>");
		for (int k = 0; k < F_COUNT; k++)
			fprintf(f, "<th>%s</th>", figs[k].title);
		fprintf(f, "<th>trace</th></tr>\n");
		for (int i = 0; i < n; i++) {
			if (cells[i].w != w)
				continue;
			fprintf(f, "<tr><td>%s</td><td>%d</td>", a->pol[cells[i].pol].label,
				cells[i].procs);
			for (int k = 0; k < F_COUNT; k++) {
				fmt(b, sizeof(b), &cells[i], k);
				fprintf(f, "<td><a href=\"%s/trace.db\">%s</a></td>", cells[i].rel,
					b);
			}
			fprintf(f, "<td><a href=\"%s\">%s</a></td></tr>\n", cells[i].rel,
				cells[i].rel);
		}
		fprintf(f, "</table>\n");
	}
	write_knobs(f, cells, n, a, FMT_HTML);
	fprintf(f, "</body></html>\n");
}

static int cmp_dur(const void *x, const void *y)
{
	const struct cell *a = x, *b = y;
	return (a->duration_ns > b->duration_ns) - (a->duration_ns < b->duration_ns);
}

static int write_out(const char *dir, const char *name, const struct cell *cells, int n,
		     const struct lab_args *a, struct wsr_err *err)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		err_push(err, "creating %s: %s", path, strerror(errno));
		return -1;
	}
	if (strcmp(name, "lab.md") == 0)
		write_table(f, cells, n, a, true);
	else if (strcmp(name, "lab.txt") == 0)
		write_table(f, cells, n, a, false);
	else if (strcmp(name, "lab.json") == 0)
		write_json(f, cells, n, a);
	else
		write_html(f, cells, n, a);
	if (fclose(f) != 0) {
		err_push(err, "writing %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Speed-up against the same workload and policy at P = 1, when measured. */
static void set_speedups(struct cell *cells, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (cells[j].w == cells[i].w && cells[j].pol == cells[i].pol &&
			    cells[j].procs == 1 && cells[i].duration_ns > 0) {
				cells[i].v[F_SPEEDUP] =
					(double)cells[j].duration_ns / (double)cells[i].duration_ns;
				cells[i].have[F_SPEEDUP] = true;
			}
}

/* wsr-lab-YYYYMMDD-HHMMSS in the current directory. */
static void default_dir(char *dir, size_t size)
{
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(dir, size, "wsr-lab-%s", stamp);
}

int cmd_lab(int argc, char **argv)
{
	struct wsr_err err;
	struct lab_args *a = calloc(1, sizeof(*a));
	char tree[PATH_MAX], exe[PATH_MAX * 2];
	struct cell *cells = NULL, runs[LAB_MAX];
	int first, n = 0, rc;

	err_init(&err);
	if (a == NULL) {
		fprintf(stderr, "wsr lab: error: out of memory\n");
		return 1;
	}
	a->runs = 1;
	rc = cli_parse(&lab_cli, argc, argv, lab_opt, a, &first);
	if (rc >= 0)
		goto done;
	if (tree_dir(tree, sizeof(tree), &err) < 0)
		goto fail;
	if (a->nw == 0) {
		for (int i = 0; i < N_WORKLOADS; i++) {
			snprintf(exe, sizeof(exe), "%s/%s", tree, workloads[i].path);
			if (access(exe, X_OK) == 0)
				a->wl[a->nw++] = i;
		}
		if (a->nw == 0) {
			err_input(&err, "no workload is built under %s", tree);
			goto fail;
		}
	}
	for (int i = 0; i < a->nw; i++) {
		snprintf(exe, sizeof(exe), "%s/%s", tree, workloads[a->wl[i]].path);
		if (access(exe, X_OK) != 0) {
			fprintf(stderr, "wsr lab: error: workload %s: %s is not built\n",
				workloads[a->wl[i]].name, exe);
			rc = 2;
			goto done;
		}
	}
	if (a->npol == 0)
		for (int i = 0; i < WSR_POLICY_COUNT && i < LAB_MAX; i++)
			parse_policy(wsr_policy_names[i], strlen(wsr_policy_names[i]),
				     &a->pol[a->npol++]);
	if (a->np == 0) {
		static const int dflt[] = {1, 2, 8, 64};
		for (int i = 0; i < 4; i++)
			a->procs[a->np++] = dflt[i];
	}
	if (a->dir[0] == '\0')
		default_dir(a->dir, sizeof(a->dir));
	if (cmd_make_out_dir(a->dir, &err) < 0)
		goto fail;
	int total = a->nw * a->npol * a->np;
	cells = calloc((size_t)total, sizeof(*cells));
	if (cells == NULL) {
		err_push(&err, "out of memory");
		goto fail;
	}
	bool tty = isatty(STDERR_FILENO);
	for (int wi = 0; wi < a->nw; wi++)
		for (int pi = 0; pi < a->npol; pi++)
			for (int ni = 0; ni < a->np; ni++) {
				const struct workload *wl = &workloads[a->wl[wi]];
				const char *const *args = a->quick ? wl->quick : wl->args;
				char *prog[6] = {exe};
				char dbg[160], out[PATH_MAX * 2], log[PATH_MAX * 2 + 8];
				int procs = a->procs[ni];

				snprintf(exe, sizeof(exe), "%s/%s", tree, wl->path);
				for (int k = 0; k < 4 && args[k] != NULL; k++)
					prog[k + 1] = (char *)args[k];
				int nodes = a->pol[pi].nodes, dl;
				dl = snprintf(dbg, sizeof(dbg), "%s", a->pol[pi].wsrdebug);
				if (nodes > 0 && procs % nodes == 0)
					snprintf(dbg + dl, sizeof(dbg) - (size_t)dl,
						 ",topology=%dx%d", nodes, procs / nodes);
				for (int r = 0; r < a->runs; r++) {
					struct cell *c = &runs[r];
					memset(c, 0, sizeof(*c));
					c->w = a->wl[wi];
					c->pol = pi;
					c->procs = procs;
					int l = snprintf(c->rel, sizeof(c->rel), "%s/%s/p%d",
							 wl->name, a->pol[pi].label, procs);
					if (a->runs > 1)
						snprintf(c->rel + l, sizeof(c->rel) - (size_t)l,
							 "-r%d", r + 1);
					snprintf(out, sizeof(out), "%s/%s", a->dir, c->rel);
					snprintf(log, sizeof(log), "%s.log", out);
					if (tty)
						fprintf(stderr,
							"\rwsr lab: [%d/%d] %s %s P=%d run %d/%d\033[K",
							n + 1, total, wl->name,
							a->pol[pi].label, procs, r + 1,
							a->runs);
					/* the parent directories of OUT */
					char mk[PATH_MAX * 2];
					snprintf(mk, sizeof(mk), "%s/%s", a->dir, wl->name);
					if ((mkdir(mk, 0755) < 0 && errno != EEXIST) ||
					    (snprintf(mk, sizeof(mk), "%s/%s/%s", a->dir, wl->name,
						      a->pol[pi].label),
					     mkdir(mk, 0755) < 0 && errno != EEXIST)) {
						err_push(&err, "creating %s: %s", mk,
							 strerror(errno));
						goto fail;
					}
					int st = cmd_run_child(out, log, procs, dbg, prog, &err);
					if (st != 0) {
						if (st > 0)
							err_push(
								&err,
								"%s %s at P = %d exited %d (see %s)",
								wl->name, dbg, procs, st, log);
						goto fail;
					}
					if (read_log(log, wl, &c->ops, &err) < 0 ||
					    load_cell(a->dir, c, &err) < 0)
						goto fail;
				}
				qsort(runs, (size_t)a->runs, sizeof(runs[0]), cmp_dur);
				cells[n++] = runs[(a->runs - 1) / 2];
			}
	if (tty)
		fprintf(stderr, "\r\033[K");
	set_speedups(cells, n);
	static const char *const names[] = {"lab.txt", "lab.md", "lab.json", "lab.html"};
	for (int k = 0; k < 4; k++)
		if (write_out(a->dir, names[k], cells, n, a, &err) < 0)
			goto fail;
	write_table(stdout, cells, n, a, false);
	printf("\nwrote %s/lab.txt, lab.md, lab.json and lab.html\n", a->dir);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		err_push(&err, "writing the table to stdout: %s", strerror(errno));
		goto fail;
	}
	rc = 0;
	goto done;
fail:
	err_print(&err, "wsr lab", stderr);
	rc = err.exit_code;
done:
	free(cells);
	free(a);
	return rc;
}
