/*
 * gohere.c - see gohere.h.
 *
 * Invariants and concurrency: see gohere.h. It is wsr_go's newproc call
 *   alone (runtime/g.c): the same put and wakeup, not the checks after it.
 */
#include "config.h"

#include <wsr.h>

#include "gohere.h"
#include "proc.h"
#include "throw.h"

void wsrtest_go_here(void (*fn)(void *), void *arg)
{
	struct wsr_m *mp = wsr__getm();

	if (mp == NULL || mp->curg == NULL)
		wsr__throw("wsrtest_go_here: called outside a G");
	wsr__newproc(mp, fn, arg, mp->curg->goid);
}
