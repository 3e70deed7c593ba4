/*
 * test-deque.c - the Chase-Lev deque (runtime/deque.c) alone: LIFO pops and
 * FIFO steals, the full check and index wrap-around, then threads: an owner
 * pushing and popping against thieves, every item taken exactly once, and the
 * last-item race (one item, owner's pop against three thieves) repeated.
 *
 * Invariants: items are the numbers 1..N disguised as G pointers (never
 *   dereferenced); taken[i] counts the takers of item i and must end at 1.
 * Concurrency: the threaded cases start NTHIEVES pthreads that only steal;
 *   the case's own thread is the owner (push, pop). Under ThreadSanitizer
 *   (the sanitizer builds run this suite) the orderings are checked too.
 */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "deque.h"
#include "wsrtest.h"

#define NTHIEVES 3

static struct wsr_g *item(int64_t i)
{
	return (struct wsr_g *)(uintptr_t)i;
}

static int64_t num(struct wsr_g *gp)
{
	return (int64_t)(uintptr_t)gp;
}

WSR_TEST(deque_lifo_pop_fifo_steal)
{
	static struct wsr_deque d;
	struct wsr_g *gp = NULL;

	wsr__deque_init(&d);
	ASSERT(wsr__deque_pop(&d) == NULL);
	ASSERT_EQ(wsr__deque_steal(&d, &gp), WSR_STEAL_EMPTY);
	for (int i = 1; i <= 10; i++)
		ASSERT(wsr__deque_push(&d, item(i)));
	ASSERT_EQ(wsr__deque_len(&d), 10);
	ASSERT_EQ(num(wsr__deque_pop(&d)), 10);
	ASSERT_EQ(wsr__deque_steal(&d, &gp), WSR_STEAL_OK);
	ASSERT_EQ(num(gp), 1);
	ASSERT_EQ(num(wsr__deque_pop(&d)), 9);
	ASSERT_EQ(wsr__deque_steal(&d, &gp), WSR_STEAL_OK);
	ASSERT_EQ(num(gp), 2);
	ASSERT_EQ(wsr__deque_len(&d), 6);
	for (int i = 8; i >= 3; i--)
		ASSERT_EQ(num(wsr__deque_pop(&d)), i);
	ASSERT(wsr__deque_pop(&d) == NULL);
	ASSERT(wsr__deque_pop(&d) == NULL); /* an empty pop leaves it empty */
	ASSERT_EQ(wsr__deque_len(&d), 0);
	ASSERT(wsr__deque_push(&d, item(11)));
	ASSERT_EQ(wsr__deque_steal(&d, &gp), WSR_STEAL_OK);
	ASSERT_EQ(num(gp), 11);
	ASSERT_EQ(wsr__deque_steal(&d, &gp), WSR_STEAL_EMPTY);
}

/* Full at WSR_DEQUE_SIZE; slots are reused as the indices run far past it. */
WSR_TEST(deque_full_and_wrap)
{
	static struct wsr_deque d;
	struct wsr_g *gp;
	int64_t next = 1, oldest = 1;

	wsr__deque_init(&d);
	for (int i = 0; i < WSR_DEQUE_SIZE; i++)
		ASSERT(wsr__deque_push(&d, item(next++)));
	ASSERT(!wsr__deque_push(&d, item(next)));
	ASSERT_EQ(wsr__deque_len(&d), WSR_DEQUE_SIZE);
	for (int round = 0; round < 1000; round++) {
		/* Steal 100 from the top, push 100 at the bottom: a full window
		 * that slides through every slot many times. */
		for (int k = 0; k < 100; k++) {
			ASSERT_EQ(wsr__deque_steal(&d, &gp), WSR_STEAL_OK);
			ASSERT_EQ(num(gp), oldest++);
		}
		for (int k = 0; k < 100; k++)
			ASSERT(wsr__deque_push(&d, item(next++)));
		ASSERT(!wsr__deque_push(&d, item(next)));
	}
	for (int64_t i = next - 1; i >= oldest; i--)
		ASSERT_EQ(num(wsr__deque_pop(&d)), i);
	ASSERT(wsr__deque_pop(&d) == NULL);
}

struct shared {
	struct wsr_deque d;
	_Atomic int done, running;
	_Atomic(uint8_t) *taken;
	int64_t n;
	_Atomic int64_t stolen, lost;
};

static void take(struct shared *s, struct wsr_g *gp)
{
	int64_t i = num(gp);

	if (i < 1 || i > s->n)
		wsrtest_fail(__FILE__, __LINE__, "took item %jd, not one of 1..%jd", (intmax_t)i,
			     (intmax_t)s->n);
	atomic_fetch_add_explicit(&s->taken[i - 1], 1, memory_order_relaxed);
}

static void *thief(void *arg)
{
	struct shared *s = arg;
	struct wsr_g *gp;

	atomic_fetch_add(&s->running, 1);
	for (;;) {
		enum wsr_steal_result r = wsr__deque_steal(&s->d, &gp);

		if (r == WSR_STEAL_OK) {
			take(s, gp);
			atomic_fetch_add_explicit(&s->stolen, 1, memory_order_relaxed);
		} else if (r == WSR_STEAL_LOST) {
			atomic_fetch_add_explicit(&s->lost, 1, memory_order_relaxed);
		} else if (atomic_load(&s->done)) {
			/* done is set after the owner's last pop: empty for good. */
			return NULL;
		}
	}
}

static struct shared *start(int64_t n, pthread_t *th)
{
	struct shared *s = calloc(1, sizeof(*s));

	ASSERT(s != NULL);
	s->n = n;
	s->taken = calloc((size_t)n, sizeof(*s->taken));
	ASSERT(s->taken != NULL);
	wsr__deque_init(&s->d);
	for (int k = 0; k < NTHIEVES; k++)
		ASSERT_EQ(pthread_create(&th[k], NULL, thief, s), 0);
	/* The owner starts when every thief does (a loaded machine may take a
	 * while to run them; the case's timeout bounds the wait). */
	while (atomic_load(&s->running) < NTHIEVES)
		sched_yield();
	return s;
}

/* Checks that each of the items 1..pushed was taken exactly once and clears
 * their marks, once the thieves have counted `stolen` steals in all (a thief
 * marks its item before it counts it, so every mark is in by then). */
static void check_taken(struct shared *s, int64_t pushed, int64_t stolen)
{
	while (atomic_load(&s->stolen) < stolen)
		sched_yield();
	ASSERT_EQ(atomic_load(&s->stolen), stolen);
	for (int64_t i = 0; i < pushed; i++) {
		if (atomic_load(&s->taken[i]) != 1)
			wsrtest_fail(__FILE__, __LINE__, "item %jd taken %d times", (intmax_t)i + 1,
				     (int)atomic_load(&s->taken[i]));
		atomic_store_explicit(&s->taken[i], 0, memory_order_relaxed);
	}
}

/* A batch: its items were numbered from 1 again after `popped0` pops and
 * `stolen0` steals in all. */
struct batch {
	int64_t popped0, stolen0, n;
};

/* Stops and joins the thieves, then checks the items of the last (or only)
 * batch, `pushed` of them, with `popped` pops in all. */
static void finish(struct shared *s, pthread_t *th, int64_t popped, int64_t pushed,
		   const struct batch *b)
{
	int64_t stolen;

	atomic_store(&s->done, 1);
	for (int k = 0; k < NTHIEVES; k++)
		ASSERT_EQ(pthread_join(th[k], NULL), 0);
	stolen = atomic_load(&s->stolen);
	check_taken(s, pushed, stolen);
	ASSERT_EQ((popped - b->popped0) + (stolen - b->stolen0), pushed);
	printf("# %jd items in %jd batch(es): %jd popped, %jd stolen, %jd steals lost a race\n",
	       (intmax_t)(popped + stolen), (intmax_t)b->n, (intmax_t)popped, (intmax_t)stolen,
	       (intmax_t)atomic_load(&s->lost));
	free(s->taken);
	free(s);
}

/* The owner pushes bursts and pops part of each (a fork-join shape) while
 * three thieves steal; every item is taken once, by exactly one of them.
 * Every 16th burst the owner leaves to the thieves and waits until they have
 * emptied the deque, so steals happen however the threads are scheduled. */
WSR_TEST_TIMEOUT(deque_owner_against_thieves, 60)
{
	pthread_t th[NTHIEVES];
	int64_t n = 400000 * wsrtest_scale(), next = 1, popped = 0;
	struct shared *s = start(n, th);
	unsigned seed = 1;

	for (int bursts = 0; next <= n; bursts++) {
		int burst = 1 + (int)(rand_r(&seed) % 300);

		if (bursts % 16 == 15) {
			for (int k = 0; k < burst && next <= n; k++)
				if (wsr__deque_push(&s->d, item(next)))
					next++;
			while (wsr__deque_len(&s->d) != 0)
				sched_yield();
			continue;
		}
		for (int k = 0; k < burst && next <= n; k++) {
			if (!wsr__deque_push(&s->d, item(next))) {
				/* Full: the owner takes from its own bottom to make room. */
				struct wsr_g *gp = wsr__deque_pop(&s->d);
				if (gp != NULL) {
					take(s, gp);
					popped++;
				}
				continue;
			}
			next++;
		}
		for (int k = (int)(rand_r(&seed) % (unsigned)(burst + 1)); k > 0; k--) {
			struct wsr_g *gp = wsr__deque_pop(&s->d);
			if (gp == NULL)
				break;
			take(s, gp);
			popped++;
		}
	}
	for (struct wsr_g *gp; (gp = wsr__deque_pop(&s->d)) != NULL;) {
		take(s, gp);
		popped++;
	}
	finish(s, th, popped, n, &(struct batch){.n = 1});
}

/* Rounds of k items: the owner pushes them, pauses a varying while, and pops
 * until empty, against three thieves. k = 1 is the last-G race (race 3 in
 * deque.c) on every round; k = 2 is the round where a missing StoreLoad
 * order would show: the owner, its lowered bottom still in its store buffer,
 * reads the top below b and takes index b without a CAS, while one thief
 * takes b - 1 and another, reading the old bottom, takes b as well. Rounds go
 * on until both sides have won often and n / 20 items went by: in batches of
 * n items, each checked and its marks cleared, for as many batches as that
 * takes. A loaded machine may leave the thieves without a CPU through
 * millions of rounds (663 steals in 4,000,000 items once, beside the suite's
 * compile jobs); only the case's timeout bounds the wait. */
static void rounds_of(int k)
{
	pthread_t th[NTHIEVES];
	int64_t n = 4000000 * wsrtest_scale(), popped = 0, i = 1;
	struct shared *s = start(n, th);
	struct batch b = {.n = 1};
	unsigned seed = 1;

	for (;;) {
		int64_t items = b.popped0 + b.stolen0 + i - 1;
		if (items > n / 20 && popped >= 1000 && atomic_load(&s->stolen) >= 1000)
			break;
		if (i + k - 1 > n) {
			/* The batch is over and the deque empty: its items are all
			 * taken, and the thieves took those the owner did not pop. */
			int64_t stolen = b.stolen0 + (i - 1) - (popped - b.popped0);
			check_taken(s, i - 1, stolen);
			b = (struct batch){.popped0 = popped, .stolen0 = stolen, .n = b.n + 1};
			i = 1;
		}
		for (int j = 0; j < k; j++)
			ASSERT(wsr__deque_push(&s->d, item(i++)));
		/* A varying pause, so the pops meet steals at every phase. */
		for (unsigned c = rand_r(&seed) % 64; c > 0; c--)
			cpu_relax();
		for (struct wsr_g *gp; (gp = wsr__deque_pop(&s->d)) != NULL;) {
			take(s, gp);
			popped++;
		}
		ASSERT(wsr__deque_pop(&s->d) == NULL);
	}
	finish(s, th, popped, i - 1, &b);
}

WSR_TEST_TIMEOUT(deque_last_item_race, 60)
{
	rounds_of(1);
}

WSR_TEST_TIMEOUT(deque_two_item_race, 60)
{
	rounds_of(2);
}
