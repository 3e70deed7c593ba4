/*
 * header-c99.c - build-only check: wsr.h compiles alone as C99 -pedantic
 * (and, as header-cxx.cc, as C++). Compiling this file is the test.
 *
 * Invariants: includes nothing but wsr.h.
 * Concurrency: none.
 */
#include <wsr.h>

int main(void)
{
	wsr_select_case c = {0, WSR_RECV, 0, 0};

	return c.dir == WSR_RECV ? 0 : 1;
}
