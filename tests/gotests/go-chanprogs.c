/*
 * go-chanprogs.c - Go's test/chan programs, ported by behaviour to wsr.h:
 * sieve1, fifo, goroutines, doubleselect, nonblock, select, select3,
 * select4, select5, select6, select7, zerosize. Each case names the
 * program. Not ported (see tests/README.md): sieve2, powser1/2 (bigger
 * programs of sieve1's patterns), select2 (memory growth under GC),
 * select8, sendstmt and perm (compiler checks).
 *
 * Invariants: cases run at the WSRMAXPROCS meson gives under st_run's
 *   watchdog; where a Go program leaves Gs blocked forever when main returns,
 *   the port does too (wsr abandons them, as Go does) and keeps what they
 *   hold reachable with gt_keep.
 * Concurrency: flags read across Gs are atomics.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "gotest.h"

/* ---- sieve1 ----
 * The classic concurrent prime sieve: a generator G and a chain of filter
 * Gs, one per prime found; the first 25 primes must be 2 .. 97. The Gs
 * are left blocked when main returns, as in Go. */
static void generate(void *arg)
{
	wsr_chan *ch = arg;
	int i;

	for (i = 2;; i++)
		wsr_chan_send(ch, &i);
}

struct filter {
	wsr_chan *in, *out;
	int prime;
};

static void filter_g(void *arg)
{
	struct filter *f = arg;
	int i;

	while (wsr_chan_recv(f->in, &i) == 1)
		if (i % f->prime != 0)
			wsr_chan_send(f->out, &i);
}

static void sieve_g(void *arg)
{
	wsr_chan *primes = arg, *ch = wsr_chan_make(sizeof(int), 0);
	int prime;

	gt_keep(ch);
	wsr_go(generate, ch);
	for (;;) {
		struct filter *f = malloc(sizeof(*f));

		gt_keep(f);
		wsr_chan_recv(ch, &prime);
		wsr_chan_send(primes, &prime);
		f->in = ch;
		f->out = wsr_chan_make(sizeof(int), 0);
		f->prime = prime;
		gt_keep(f->out);
		wsr_go(filter_g, f);
		ch = f->out;
	}
}

static int sieve_main(void *arg)
{
	static const int a[] = {2,  3,  5,  7,  11, 13, 17, 19, 23, 29, 31, 37, 41,
				43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97};
	wsr_chan *primes = wsr_chan_make(sizeof(int), 0);
	int i, x;

	(void)arg;
	gt_keep(primes);
	wsr_go(sieve_g, primes);
	for (i = 0; i < (int)(sizeof(a) / sizeof(a[0])); i++) {
		ASSERT_EQ(wsr_chan_recv(primes, &x), 1);
		ASSERT_EQ(x, a[i]);
	}
	return 0;
}

WSR_TEST_TIMEOUT(sieve1, 30)
{
	GT_RUN("sieve1", sieve_main, NULL);
}

/* ---- fifo ----
 * AsynchFifo: a buffered channel returns N values in order. SynchFifo: N
 * Gs chained by tokens each receive one value from a shared unbuffered
 * channel in turn; they must get 0 .. N-1 in order (an unbuffered channel
 * is a pure FIFO). */
enum {
	FIFO_N = 10
};

struct chain {
	wsr_chan *ch, *in, *out;
	int val;
};

static void chain_g(void *arg)
{
	struct chain *c = arg;
	int v, one = 1;

	ASSERT_EQ(wsr_chan_recv(c->in, &v), 1);
	ASSERT_EQ(wsr_chan_recv(c->ch, &v), 1);
	if (v != c->val)
		wsrtest_fail(__FILE__, __LINE__, "chain %d got %d", c->val, v);
	ASSERT_EQ(wsr_chan_send(c->out, &one), 0);
}

static int fifo_main(void *arg)
{
	wsr_chan *ch = wsr_chan_make(sizeof(int), FIFO_N), *links[FIFO_N + 1];
	struct chain cs[FIFO_N];
	int i, v;

	(void)arg;
	for (i = 0; i < FIFO_N; i++)
		ASSERT_EQ(wsr_chan_send(ch, &i), 0);
	for (i = 0; i < FIFO_N; i++) {
		ASSERT_EQ(wsr_chan_recv(ch, &v), 1);
		ASSERT_EQ(v, i);
	}
	wsr_chan_free(ch);

	ch = wsr_chan_make(sizeof(int), 0);
	links[0] = wsr_chan_make(sizeof(int), 0);
	for (i = 0; i < FIFO_N; i++) {
		links[i + 1] = wsr_chan_make(sizeof(int), 0);
		cs[i].ch = ch;
		cs[i].in = links[i];
		cs[i].out = links[i + 1];
		cs[i].val = i;
		wsr_go(chain_g, &cs[i]);
	}
	v = 0;
	ASSERT_EQ(wsr_chan_send(links[0], &v), 0);
	for (i = 0; i < FIFO_N; i++)
		ASSERT_EQ(wsr_chan_send(ch, &i), 0);
	ASSERT_EQ(wsr_chan_recv(links[FIFO_N], &v), 1);
	wsr_chan_free(ch);
	for (i = 0; i <= FIFO_N; i++)
		wsr_chan_free(links[i]);
	return 0;
}

WSR_TEST_TIMEOUT(fifo, 30)
{
	GT_RUN("fifo", fifo_main, NULL);
}

/* ---- goroutines ----
 * 10,000 Gs threaded together, each passing one value from its right
 * channel to its left; a last G feeds the rightmost; main receives it from
 * the leftmost, and everything is torn down. */
struct link {
	wsr_chan *left, *right;
};

static void link_g(void *arg)
{
	struct link *l = arg;
	int v;

	ASSERT_EQ(wsr_chan_recv(l->right, &v), 1);
	ASSERT_EQ(wsr_chan_send(l->left, &v), 0);
}

static void feed_g(void *arg)
{
	int one = 1;

	ASSERT_EQ(wsr_chan_send(arg, &one), 0);
}

static int goroutines_main(void *arg)
{
	long n = gt_n(10000), i;
	wsr_chan **chans = calloc((size_t)n + 1, sizeof(*chans));
	struct link *links = calloc((size_t)n, sizeof(*links));
	int v;

	(void)arg;
	chans[0] = wsr_chan_make(sizeof(int), 0); /* leftmost */
	for (i = 0; i < n; i++) {
		chans[i + 1] = wsr_chan_make(sizeof(int), 0);
		links[i].left = chans[i];
		links[i].right = chans[i + 1];
		wsr_go(link_g, &links[i]);
	}
	wsr_go(feed_g, chans[n]);
	ASSERT_EQ(wsr_chan_recv(chans[0], &v), 1);
	ASSERT_EQ(v, 1);
	/* Every G has handed its value on: none waits on any channel now. */
	for (i = 0; i <= n; i++)
		wsr_chan_free(chans[i]);
	free(chans);
	free(links);
	return 0;
}

WSR_TEST_TIMEOUT(goroutines, 30)
{
	GT_RUN("goroutines", goroutines_main, NULL);
}

/* ---- doubleselect ----
 * A sender selects over sending i on four channels (then closes them);
 * four muxes forward each channel to one; a receiver checks that no value
 * arrives twice (two cases of one select must never both run). Go: 100,000
 * iterations at GOMAXPROCS 2. */
struct dsel {
	wsr_chan *c[4], *cmux, *done;
	long n;
};

struct mux {
	wsr_chan *in, *out, *done;
};

static void ds_sender(void *arg)
{
	struct dsel *d = arg;
	long i;
	int k;

	for (i = 0; i < d->n; i++) {
		wsr_select_case cs[4];

		for (k = 0; k < 4; k++) {
			cs[k].c = d->c[k];
			cs[k].dir = WSR_SEND;
			cs[k].elem = &i;
		}
		ASSERT(wsr_select(cs, 4, 1) >= 0);
	}
	for (k = 0; k < 4; k++)
		wsr_chan_close(d->c[k]);
}

static void ds_mux(void *arg)
{
	struct mux *m = arg;
	long v;
	int t = 1;

	while (wsr_chan_recv(m->in, &v) == 1)
		ASSERT_EQ(wsr_chan_send(m->out, &v), 0);
	ASSERT_EQ(wsr_chan_send(m->done, &t), 0);
}

static void ds_closer(void *arg)
{
	struct dsel *d = arg;
	int k, t;

	for (k = 0; k < 4; k++)
		ASSERT_EQ(wsr_chan_recv(d->done, &t), 1);
	wsr_chan_close(d->cmux);
}

static int ds_main(void *arg)
{
	struct dsel d;
	struct mux m[4];
	unsigned char *seen;
	long v, count = 0;
	int k;

	(void)arg;
	d.n = gt_n(100000);
	for (k = 0; k < 4; k++)
		d.c[k] = wsr_chan_make(sizeof(long), 0);
	d.cmux = wsr_chan_make(sizeof(long), 0);
	d.done = wsr_chan_make(sizeof(int), 0);
	seen = calloc((size_t)d.n, 1);
	wsr_go(ds_sender, &d);
	for (k = 0; k < 4; k++) {
		m[k].in = d.c[k];
		m[k].out = d.cmux;
		m[k].done = d.done;
		wsr_go(ds_mux, &m[k]);
	}
	wsr_go(ds_closer, &d);
	while (wsr_chan_recv(d.cmux, &v) == 1) {
		ASSERT(v >= 0 && v < d.n);
		if (seen[v])
			wsrtest_fail(__FILE__, __LINE__, "got duplicate value: %ld", v);
		seen[v] = 1;
		count++;
	}
	ASSERT_EQ(count, d.n);
	free(seen);
	for (k = 0; k < 4; k++)
		wsr_chan_free(d.c[k]);
	wsr_chan_free(d.cmux);
	wsr_chan_free(d.done);
	return 0;
}

WSR_TEST_TIMEOUT(doubleselect, 30)
{
	GT_RUN("doubleselect", ds_main, NULL);
}

/* ---- nonblock ----
 * For buffer 0 and 1 and four element types (int32, int64, bool, a
 * 16-byte "string"): a non-blocking receive from an empty channel fails;
 * then against a receiver G a non-blocking send is retried until it goes
 * through, and against a sender G a non-blocking receive is retried until
 * it gets the sender's value. Between tries the port sleeps 10 us twice
 * and yields three times (Go: two 10 us ticks, three Goscheds); Go gives
 * up after 10,000 tries (a timing bound), the watchdog stands for it. */
struct nbtype {
	size_t size;
	const void *to_recv, *to_send; /* what the receiver expects, the sender sends */
};

struct nbpeer {
	wsr_chan *c, *sync;
	const struct nbtype *t;
};

static void nb_receiver(void *arg)
{
	struct nbpeer *p = arg;
	unsigned char buf[16];
	int one = 1;

	ASSERT_EQ(wsr_chan_recv(p->c, buf), 1);
	if (memcmp(buf, p->t->to_recv, p->t->size) != 0)
		wsrtest_fail(__FILE__, __LINE__, "receiver: wrong value (size %zu)", p->t->size);
	ASSERT_EQ(wsr_chan_send(p->sync, &one), 0);
}

static void nb_sender(void *arg)
{
	struct nbpeer *p = arg;
	int one = 1;

	ASSERT_EQ(wsr_chan_send(p->c, p->t->to_send), 0);
	ASSERT_EQ(wsr_chan_send(p->sync, &one), 0);
}

static void nb_pause(void)
{
	wsr_sleep_ns(10000);
	wsr_sleep_ns(10000);
	wsr_yield();
	wsr_yield();
	wsr_yield();
}

static int nonblock_main(void *arg)
{
	static const int32_t i32r = 123, i32s = 234;
	static const int64_t i64r = 123456, i64s = 234567;
	static const unsigned char br = 1, bs = 1;
	static const char sr[16] = "hello", ss[16] = "hello again";
	static const struct nbtype types[4] = {{sizeof(int32_t), &i32r, &i32s},
					       {sizeof(int64_t), &i64r, &i64s},
					       {1, &br, &bs},
					       {16, sr, ss}};
	wsr_chan *sync = wsr_chan_make(sizeof(int), 0);
	int buffer, k, v;

	(void)arg;
	for (buffer = 0; buffer < 2; buffer++) {
		wsr_chan *cs[4];
		unsigned char buf[16];

		for (k = 0; k < 4; k++) {
			cs[k] = wsr_chan_make(types[k].size, (size_t)buffer);
			if (gt_try_recv(cs[k], buf, NULL))
				wsrtest_fail(__FILE__, __LINE__, "blocked sender %d", k);
		}
		for (k = 0; k < 4; k++) {
			struct nbpeer p = {cs[k], sync, &types[k]};

			wsr_go(nb_receiver, &p);
			while (!gt_try_send(cs[k], types[k].to_recv))
				nb_pause();
			ASSERT_EQ(wsr_chan_recv(sync, &v), 1);

			wsr_go(nb_sender, &p);
			if (buffer > 0)
				ASSERT_EQ(wsr_chan_recv(sync, &v), 1);
			while (!gt_try_recv(cs[k], buf, NULL))
				nb_pause();
			if (memcmp(buf, types[k].to_send, types[k].size) != 0)
				wsrtest_fail(__FILE__, __LINE__, "sender %d: wrong value", k);
			if (buffer == 0)
				ASSERT_EQ(wsr_chan_recv(sync, &v), 1);
		}
		for (k = 0; k < 4; k++)
			wsr_chan_free(cs[k]);
	}
	wsr_chan_free(sync);
	return 0;
}

WSR_TEST_TIMEOUT(nonblock, 30)
{
	GT_RUN("nonblock", nonblock_main, NULL);
}

/* ---- select3 ----
 * The semantics of select for the basic empty / non-empty cases. testBlock
 * runs an operation in a G: "never" blocks means it completes (Go's 10 s
 * fallback timer is the watchdog here), "always" means it has not
 * completed 10 ms later (as in Go; the G is then abandoned, blocked
 * forever). Where Go panics (a send on a closed channel) wsr returns -1,
 * or fires the select case with ok = 0 (wsr.h). */
struct blocker {
	void (*f)(void *);
	void *arg;
	_Atomic int finished;
};

static void blocker_g(void *arg)
{
	struct blocker *b = arg;

	b->f(b->arg);
	atomic_store(&b->finished, 1);
}

static void test_block(int always, void (*f)(void *), void *arg)
{
	struct blocker *b = calloc(1, sizeof(*b));

	b->f = f;
	b->arg = arg;
	wsr_go(blocker_g, b);
	if (always) {
		gt_sleep_ms(10);
		ASSERT_EQ(atomic_load(&b->finished), 0);
		gt_keep(b); /* its G stays blocked */
		return;
	}
	while (!atomic_load(&b->finished))
		gt_sleep_ms(1);
	free(b);
}

static wsr_chan *closedch;

static void s3_select_n(wsr_select_case *cs, int n, int block, int want)
{
	ASSERT_EQ(wsr_select(cs, n, block), want);
}

static void s3_nil_select_recv(void *arg)
{
	int v;
	wsr_select_case c = {NULL, WSR_RECV, &v, 0};

	(void)arg;
	wsr_select(&c, 1, 1);
}

static void s3_nil_select_send(void *arg)
{
	int v = 7;
	wsr_select_case c = {NULL, WSR_SEND, &v, 0};

	(void)arg;
	wsr_select(&c, 1, 1);
}

static void s3_nil_select_both(void *arg)
{
	int v = 7, w;
	wsr_select_case cs[2] = {{NULL, WSR_RECV, &w, 0}, {NULL, WSR_SEND, &v, 0}};

	(void)arg;
	wsr_select(cs, 2, 1);
}

static void s3_empty_select(void *arg)
{
	(void)arg;
	wsr_select(NULL, 0, 1);
}

static void s3_recv_new(void *arg)
{
	wsr_chan *ch = wsr_chan_make(sizeof(int), 0);
	int v;

	(void)arg;
	gt_keep(ch);
	wsr_chan_recv(ch, &v);
}

static void s3_select_recv_new(void *arg)
{
	wsr_chan *ch = wsr_chan_make(sizeof(int), 0);
	int v;
	wsr_select_case c = {ch, WSR_RECV, &v, 0};

	(void)arg;
	gt_keep(ch);
	wsr_select(&c, 1, 1);
}

static void s3_select_self(void *arg)
{
	wsr_chan *ch = wsr_chan_make(sizeof(int), 0);
	int one = 1, v;
	wsr_select_case cs[2] = {{ch, WSR_SEND, &one, 0}, {ch, WSR_RECV, &v, 0}};

	(void)arg;
	gt_keep(ch);
	wsr_select(cs, 2, 1); /* must not pair with itself */
}

static void s3_async_send(void *arg)
{
	wsr_chan *ch = wsr_chan_make(sizeof(int), 1);
	int v = 7;

	(void)arg;
	ASSERT_EQ(wsr_chan_send(ch, &v), 0);
	wsr_chan_free(ch);
}

static void s3_closed_recv(void *arg)
{
	int i, v;

	(void)arg;
	for (i = 0; i < 10; i++) {
		v = 5;
		ASSERT_EQ(wsr_chan_recv(closedch, &v), 0);
		ASSERT_EQ(v, 0);
	}
}

static void s3_defaults(void *arg)
{
	int v = 7, w = 0;
	wsr_select_case nr = {NULL, WSR_RECV, &w, 0}, ns = {NULL, WSR_SEND, &v, 0};

	(void)arg;
	s3_select_n(NULL, 0, 0, -1); /* select { default: } */
	s3_select_n(&nr, 1, 0, -1);
	s3_select_n(&ns, 1, 0, -1);
}

static void s3_ready(void *arg)
{
	wsr_chan *ch = wsr_chan_make(sizeof(int), 1);
	int v = 7, w = 0;
	wsr_select_case s = {ch, WSR_SEND, &v, 0}, r = {ch, WSR_RECV, &w, 0};

	(void)arg;
	s3_select_n(&s, 1, 0, 0); /* a ready send does not take the default */
	s3_select_n(&r, 1, 0, 0);
	ASSERT_EQ(w, 7);
	wsr_chan_free(ch);
}

static void s3_closed_select(void *arg)
{
	int w = 5, v = 7;
	wsr_select_case r = {closedch, WSR_RECV, &w, 0}, rn = {closedch, WSR_RECV, NULL, 0};
	wsr_select_case s = {closedch, WSR_SEND, &v, 0};

	(void)arg;
	s3_select_n(&r, 1, 1, 0);
	ASSERT_EQ(r.ok, 0);
	ASSERT_EQ(w, 0);
	s3_select_n(&rn, 1, 1, 0);
	ASSERT_EQ(rn.ok, 0);
	/* Go panics on a send to a closed channel; wsr fires the case with ok = 0. */
	s3_select_n(&s, 1, 1, 0);
	ASSERT_EQ(s.ok, 0);
	ASSERT_EQ(wsr_chan_send(closedch, &v), -1);
}

static int select3_main(void *arg)
{
	(void)arg;
	closedch = wsr_chan_make(sizeof(int), 0);
	wsr_chan_close(closedch);
	/* (nil channel send and receive outside a select: select3_nil_channel_ops) */
	test_block(0, s3_defaults, NULL);     /* nil cases never selected; defaults don't block */
	test_block(0, s3_async_send, NULL);   /* free buffer space never blocks */
	test_block(0, s3_closed_recv, NULL);  /* a closed channel never blocks a receive */
	test_block(1, s3_recv_new, NULL);     /* a non-ready channel always blocks */
	test_block(1, s3_empty_select, NULL); /* empty selects always block */
	test_block(1, s3_nil_select_recv, NULL); /* selects of nil channels only, too */
	test_block(1, s3_nil_select_send, NULL);
	test_block(1, s3_nil_select_both, NULL);
	test_block(1, s3_select_recv_new, NULL); /* non-ready non-nil channels block */
	test_block(0, s3_ready, NULL);           /* ready channels don't block */
	test_block(0, s3_closed_select, NULL);   /* closed channels act as the plain operations */
	test_block(1, s3_select_self, NULL);     /* a select that sees itself */
	gt_keep(closedch);
	return 0;
}

WSR_TEST_TIMEOUT(select3, 30)
{
	GT_RUN("select3", select3_main, NULL);
}

/* select3's first two checks: a send or a receive on a nil channel blocks
 * forever (Go), and a select on it is never chosen (wsr.h says so for
 * select; for the plain calls it says "Go's semantics"). */
static void s3_nil_send(void *arg)
{
	int v = 7;

	(void)arg;
	wsr_chan_send(NULL, &v);
}

static void s3_nil_recv(void *arg)
{
	int v;

	(void)arg;
	wsr_chan_recv(NULL, &v);
}

static int select3_nil_main(void *arg)
{
	(void)arg;
	test_block(1, s3_nil_send, NULL);
	test_block(1, s3_nil_recv, NULL);
	return 0;
}

WSR_TEST_TIMEOUT(select3_nil_channel_ops, 30)
{
	GT_RUN("select3_nil_channel_ops", select3_nil_main, NULL);
}

/* ---- select4 ----
 * A select proceeds when one case is ready: a full buffered channel's
 * receive wins over an empty unbuffered one's, with the value. */
static int select4_main(void *arg)
{
	wsr_chan *c = wsr_chan_make(sizeof(int), 1), *c1 = wsr_chan_make(sizeof(int), 0);
	int v = 42, x = 0, y = 0;
	wsr_select_case cs[2] = {{c1, WSR_RECV, &y, 0}, {c, WSR_RECV, &x, 0}};

	(void)arg;
	ASSERT_EQ(wsr_chan_send(c, &v), 0);
	ASSERT_EQ(wsr_select(cs, 2, 1), 1);
	ASSERT_EQ(x, 42);
	ASSERT_EQ(y, 0); /* the other case's destination is untouched */
	wsr_chan_free(c);
	wsr_chan_free(c1);
	return 0;
}

WSR_TEST_TIMEOUT(select4, 30)
{
	GT_RUN("select4", select4_main, NULL);
}

/* ---- select5 ----
 * Go generates a program of every way to phrase one real send or receive,
 * alone or as a select case beside a default and dummy cases (a send and a
 * receive on a channel nobody uses, a send and a receive on nil), checking
 * that exactly the real operation happens. The receive forms (direct,
 * through a pointer, :=, interface, map) and the evaluation-order variants
 * are compiler matters; here the select's case list is data, so the port
 * enumerates: every subset of the four dummy cases, every position of the
 * real case among them, with and without default, for a receive (into a
 * local, into the heap, discarded) and for a send. Then the non-blocking
 * form: every subset of eight never-ready cases (including receives into
 * x and into a guard that must stay untouched) with a default. */
struct s5 {
	wsr_chan *c, *dummy;
	int n, x;
};

/* Builds the cases: the dummies chosen by mask, the real one at pos. */
static int s5_cases(wsr_select_case *cs, struct s5 *s, unsigned mask, int pos, wsr_select_case real,
		    int *dv)
{
	wsr_select_case extra[4] = {{s->dummy, WSR_SEND, dv, 0},
				    {s->dummy, WSR_RECV, dv, 0},
				    {NULL, WSR_SEND, dv, 0},
				    {NULL, WSR_RECV, dv, 0}};
	int n = 0, k, realat = -1;

	for (k = 0; k < 4; k++) {
		if (n == pos && realat < 0) {
			realat = n;
			cs[n++] = real;
		}
		if (mask & (1u << k))
			cs[n++] = extra[k];
	}
	if (realat < 0) {
		realat = n;
		cs[n++] = real;
	}
	return realat;
}

static int select5_main(void *arg)
{
	struct s5 s = {wsr_chan_make(sizeof(int), 1), wsr_chan_make(sizeof(int), 0), 1, 0};
	int *heap = malloc(sizeof(int));
	long ncases = 0;
	unsigned mask;
	int pos, block, form, dv = 99, k;

	(void)arg;
	/* recv: c <- n, then receive it one way or another into x. */
	for (form = 0; form < 4; form++)
		for (mask = 0; mask < 16; mask++)
			for (pos = 0; pos <= __builtin_popcount(mask); pos++)
				for (block = 0; block < 2; block++) {
					wsr_select_case cs[5], real = {s.c, WSR_RECV, NULL, 0};
					int at, n;

					if (form == 0 && (mask != 0 || pos != 0 || block != 0))
						continue; /* the plain x = <-c, once */
					ASSERT_EQ(wsr_chan_send(s.c, &s.n), 0);
					s.x = 0;
					*heap = 0;
					if (form == 0) {
						ASSERT_EQ(wsr_chan_recv(s.c, &s.x), 1);
					} else {
						real.elem = form == 1   ? (void *)&s.x
							    : form == 2 ? (void *)heap
									: NULL;
						at = s5_cases(cs, &s, mask, pos, real, &dv);
						n = __builtin_popcount(mask) + 1;
						ASSERT_EQ(wsr_select(cs, n, block), at);
						ASSERT_EQ(cs[at].ok, 1);
						if (form == 2)
							s.x = *heap;
						else if (form == 3)
							s.x = s.n; /* discarded: nothing to compare */
					}
					if (s.x != s.n)
						wsrtest_fail(__FILE__, __LINE__, "have %d want %d",
							     s.x, s.n);
					ASSERT_EQ(dv, 99);
					s.n++;
					ncases++;
				}
	/* send: send n one way or another, receive it into x. */
	for (mask = 0; mask < 16; mask++)
		for (pos = 0; pos <= __builtin_popcount(mask); pos++)
			for (block = 0; block < 2; block++) {
				wsr_select_case cs[5], real = {s.c, WSR_SEND, &s.n, 0};
				int at = s5_cases(cs, &s, mask, pos, real, &dv);

				ASSERT_EQ(wsr_select(cs, __builtin_popcount(mask) + 1, block), at);
				ASSERT_EQ(wsr_chan_recv(s.c, &s.x), 1);
				if (s.x != s.n)
					wsrtest_fail(__FILE__, __LINE__, "have %d want %d", s.x,
						     s.n);
				s.n++;
				ncases++;
			}
	ASSERT_EQ(wsr_chan_send(s.c, &s.n), 0); /* plain c <- n */
	ASSERT_EQ(wsr_chan_recv(s.c, &s.x), 1);
	ASSERT_EQ(s.x, s.n);
	s.n++;
	ncases++;
	/* nonblock: never-ready cases with a default; nothing may be written. */
	for (mask = 0; mask < 256; mask++) {
		int guard = 12345, one = 1;
		wsr_select_case all[8] = {
			{s.dummy, WSR_SEND, &one, 0},   {NULL, WSR_SEND, &one, 0},
			{s.dummy, WSR_RECV, NULL, 0},   {s.dummy, WSR_RECV, &s.x, 0},
			{s.dummy, WSR_RECV, &guard, 0}, {NULL, WSR_RECV, NULL, 0},
			{NULL, WSR_RECV, &s.x, 0},      {NULL, WSR_RECV, &guard, 0}};
		wsr_select_case cs[8];
		int n = 0;

		for (k = 0; k < 8; k++)
			if (mask & (1u << k))
				cs[n++] = all[k];
		s.x = s.n;
		ASSERT_EQ(wsr_select(cs, n, 0), -1);
		if (s.x != s.n || guard != 12345)
			wsrtest_fail(__FILE__, __LINE__,
				     "a case that did not fire wrote its target");
		s.n++;
		ncases++;
	}
	printf("# %ld cases\n", ncases);
	free(heap);
	wsr_chan_free(s.c);
	wsr_chan_free(s.dummy);
	return 0;
}

WSR_TEST_TIMEOUT(select5, 30)
{
	GT_RUN("select5", select5_main, NULL);
}

/* ---- select6 (Go issue 2075) ----
 * A select that loses on c1 (it is woken through c2) must leave c1's wait
 * queue intact for the Gs that wait on it before and after: both later
 * sends on c1 must find a receiver. */
struct s6 {
	wsr_chan *c1, *c2, *c3;
	wsr_waitgroup *wg;
};

static void s6_recv_c1(void *arg)
{
	struct s6 *s = arg;
	int v;

	ASSERT_EQ(wsr_chan_recv(s->c1, &v), 1);
	wsr_waitgroup_done(s->wg);
}

static void s6_select(void *arg)
{
	struct s6 *s = arg;
	int v, t = 1;
	wsr_select_case cs[2] = {{s->c1, WSR_RECV, &v, 0}, {s->c2, WSR_RECV, &v, 0}};

	if (wsr_select(cs, 2, 1) == 0)
		wsrtest_fail(__FILE__, __LINE__, "dummy");
	ASSERT_EQ(wsr_chan_send(s->c3, &t), 0);
	ASSERT_EQ(wsr_chan_recv(s->c1, &v), 1);
	wsr_waitgroup_done(s->wg);
}

static void s6_send_c2(void *arg)
{
	struct s6 *s = arg;
	int t = 1;

	ASSERT_EQ(wsr_chan_send(s->c2, &t), 0);
	wsr_waitgroup_done(s->wg);
}

static int select6_main(void *arg)
{
	struct s6 s = {wsr_chan_make(sizeof(int), 0), wsr_chan_make(sizeof(int), 0),
		       wsr_chan_make(sizeof(int), 0), wsr_waitgroup_make()};
	int v = 1;

	(void)arg;
	wsr_waitgroup_add(s.wg, 3);
	wsr_go(s6_recv_c1, &s);
	wsr_go(s6_select, &s);
	wsr_go(s6_send_c2, &s);
	ASSERT_EQ(wsr_chan_recv(s.c3, &v), 1);
	ASSERT_EQ(wsr_chan_send(s.c1, &v), 0);
	ASSERT_EQ(wsr_chan_send(s.c1, &v), 0);
	wsr_waitgroup_wait(s.wg);
	wsr_chan_free(s.c1);
	wsr_chan_free(s.c2);
	wsr_chan_free(s.c3);
	wsr_waitgroup_free(s.wg);
	return 0;
}

WSR_TEST_TIMEOUT(select6, 30)
{
	GT_RUN("select6", select6_main, NULL);
}

/* ---- select7 ----
 * Every pairing of three senders (a send; a one-case select; a two-case
 * select with a second, idle channel) with three receivers (a receive; a
 * one-case select; a two-case select) that discard the value; the sender
 * yields once after starting the receiver. In Go the channel is garbage
 * once the send is done; the port's sender frees it right after its send,
 * the point where nothing is queued on it any more. */
/* Receivers count themselves out here, and main waits for them all only at
 * the very end (so that the receivers' last steps still race with the
 * senders' frees), so that nothing is left for LeakSanitizer. */
static wsr_waitgroup *s7_wg;

static void recv1(void *arg)
{
	wsr_chan_recv(arg, NULL);
	wsr_waitgroup_done(s7_wg);
}

static void recv2(void *arg)
{
	wsr_select_case cs[1] = {{arg, WSR_RECV, NULL, 0}};

	wsr_select(cs, 1, 1);
	wsr_waitgroup_done(s7_wg);
}

static void recv3(void *arg)
{
	wsr_chan *c2 = wsr_chan_make(sizeof(int), 0);
	wsr_select_case cs[2] = {{arg, WSR_RECV, NULL, 0}, {c2, WSR_RECV, NULL, 0}};

	wsr_select(cs, 2, 1);
	wsr_chan_free(c2);
	wsr_waitgroup_done(s7_wg);
}

static void send_n(int how, void (*recv)(void *))
{
	wsr_chan *c = wsr_chan_make(sizeof(int), 0), *c2 = NULL;
	int one = 1;

	wsr_waitgroup_add(s7_wg, 1);
	wsr_go(recv, c);
	wsr_yield();
	if (how == 1) {
		ASSERT_EQ(wsr_chan_send(c, &one), 0);
	} else if (how == 2) {
		wsr_select_case cs[1] = {{c, WSR_SEND, &one, 0}};

		ASSERT_EQ(wsr_select(cs, 1, 1), 0);
	} else {
		wsr_select_case cs[2] = {{c, WSR_SEND, &one, 0}, {NULL, WSR_SEND, &one, 0}};

		c2 = wsr_chan_make(sizeof(int), 0);
		cs[1].c = c2;
		ASSERT_EQ(wsr_select(cs, 2, 1), 0);
	}
	wsr_chan_free(c);
	wsr_chan_free(c2);
}

static void (*const receivers[3])(void *) = {recv1, recv2, recv3};

static int select7_main(void *arg)
{
	int r = *(int *)arg, how, round;

	s7_wg = wsr_waitgroup_make();
	/* Go runs each pairing once; rounds give the frees a chance to race. */
	for (round = 0; round < gt_n(200); round++)
		for (how = 1; how <= 3; how++)
			send_n(how, receivers[r]);
	wsr_waitgroup_wait(s7_wg);
	wsr_waitgroup_free(s7_wg);
	return 0;
}

WSR_TEST_TIMEOUT(select7_recv1, 30)
{
	int r = 0;

	GT_RUN("select7_recv1", select7_main, &r);
}

/* The receiver's select is woken by the send and withdraws from its other
 * cases; the sender frees c as soon as its send returns (issue 17 bug 1:
 * the woken select used to re-lock c, freed by then). */
WSR_TEST_TIMEOUT(select7_recv2, 30)
{
	int r = 1;

	GT_RUN("select7_recv2", select7_main, &r);
}

WSR_TEST_TIMEOUT(select7_recv3, 30)
{
	int r = 2;

	GT_RUN("select7_recv3", select7_main, &r);
}

/* ---- select ----
 * A non-blocking select of sends on two buffered channels, each case going
 * nil once it has fired, loops until only the default is left: two sends
 * happen, the values (1 << shift at each try) or to 3; with one channel
 * nil from the start, one send happens. (Go's count of evaluations of the
 * send expressions is a compiler matter.) */
static int send_until_default(wsr_chan *a, wsr_chan *b, unsigned *shift)
{
	int i = 0;

	for (;;) {
		unsigned va = 1u << *shift, vb = 1u << *shift;
		wsr_select_case cs[2] = {{a, WSR_SEND, &va, 0}, {b, WSR_SEND, &vb, 0}};
		int k = wsr_select(cs, 2, 0);

		if (k < 0)
			break;
		i++;
		if (k == 0)
			a = NULL;
		else
			b = NULL;
		(*shift)++;
	}
	return i;
}

static int select_main(void *arg)
{
	wsr_chan *a = wsr_chan_make(sizeof(unsigned), 1), *b = wsr_chan_make(sizeof(unsigned), 1);
	unsigned shift = 0, av, bv;

	(void)arg;
	ASSERT_EQ(send_until_default(a, b, &shift), 2);
	ASSERT_EQ(wsr_chan_recv(a, &av), 1);
	ASSERT_EQ(wsr_chan_recv(b, &bv), 1);
	ASSERT_EQ(av | bv, 3);
	ASSERT_EQ(send_until_default(a, NULL, &shift), 1);
	wsr_chan_free(a);
	wsr_chan_free(b);
	return 0;
}

WSR_TEST_TIMEOUT(select, 30)
{
	GT_RUN("select", select_main, NULL);
}

/* ---- zerosize ----
 * Channels of a zero-sized element, unbuffered and buffered; the port also
 * moves a value through each (Go only makes them). */
static void zs_send(void *arg)
{
	ASSERT_EQ(wsr_chan_send(arg, NULL), 0);
}

static int zerosize_main(void *arg)
{
	wsr_chan *u = wsr_chan_make(0, 0), *b = wsr_chan_make(0, 1);

	(void)arg;
	ASSERT(u != NULL && b != NULL);
	ASSERT_EQ(wsr_chan_send(b, NULL), 0);
	ASSERT_EQ(wsr_chan_recv(b, NULL), 1);
	wsr_go(zs_send, u);
	ASSERT_EQ(wsr_chan_recv(u, NULL), 1);
	wsr_chan_free(u);
	wsr_chan_free(b);
	return 0;
}

WSR_TEST_TIMEOUT(zerosize, 30)
{
	GT_RUN("zerosize", zerosize_main, NULL);
}
