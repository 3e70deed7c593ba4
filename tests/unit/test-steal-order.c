/*
 * test-steal-order.c - stealWork's random victim order visits every P
 * exactly once per round, for gomaxprocs 1..64 and many random seeds.
 *
 * Invariants: uses the same enumerator as steal.c (steal.h), not a copy.
 * Concurrency: none.
 */
#include "config.h"

#include <string.h>

#include "steal.h"
#include "wsrtest.h"

WSR_TEST(every_p_once_per_round)
{
	uint32_t count, r;
	uint64_t x = 88172645463325252ULL;

	for (count = 1; count <= 64; count++) {
		struct wsr_steal_order o;

		ASSERT(wsr__steal_order_build(&o, count));
		for (r = 0; r < 2000; r++) {
			unsigned char seen[64];
			struct wsr_steal_enum e;
			uint32_t visits = 0;

			/* xorshift64 for the random start and stride choice */
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			memset(seen, 0, sizeof(seen));
			for (wsr__steal_enum_start(&o, (uint32_t)x, &e); !wsr__steal_enum_done(&e);
			     wsr__steal_enum_next(&e)) {
				ASSERT_LT(e.pos, count);
				ASSERT_EQ(seen[e.pos], 0);
				seen[e.pos] = 1;
				visits++;
			}
			ASSERT_EQ(visits, count);
		}
		wsr__steal_order_destroy(&o);
	}
}

WSR_TEST(strides_are_the_coprimes)
{
	struct wsr_steal_order o;

	ASSERT(wsr__steal_order_build(&o, 12));
	ASSERT_EQ(o.ncoprimes, 4); /* 1 5 7 11 */
	ASSERT_EQ(o.coprimes[0], 1);
	ASSERT_EQ(o.coprimes[1], 5);
	ASSERT_EQ(o.coprimes[2], 7);
	ASSERT_EQ(o.coprimes[3], 11);
	wsr__steal_order_destroy(&o);
	ASSERT(wsr__steal_order_build(&o, 1));
	ASSERT_EQ(o.ncoprimes, 1);
	wsr__steal_order_destroy(&o);
}
