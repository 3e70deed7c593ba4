/*
 * header-cxx.cc - build-only check: wsr.h compiles alone as C++.
 *
 * Invariants: includes nothing but wsr.h.
 * Concurrency: none.
 */
#include <wsr.h>

int main()
{
	wsr_select_case c = {nullptr, WSR_SEND, nullptr, 0};

	return c.dir == WSR_SEND ? 0 : 1;
}
