/*
 * trace.c - one out-of-line, cold function per tracepoint (tracing builds).
 *
 * Why: lttng_ust_tracepoint() expands the probe call inline at every site;
 * even when no session listens, that code keeps values live and costs spills
 * in the scheduler's hot paths (about 10 instructions per site, +6% on a
 * channel ping-pong). WSR_TRACE_FIRE() instead tests the tracepoint's state
 * inline and calls one of these only when a session enabled the event.
 *
 * Invariants: each wsr__tp_EV(args) fires wsr:EV with exactly its arguments
 *   (generated from wsr_tp.h's LTTNG_UST_TP_ARGS; keep the two in step).
 * Concurrency: any thread, as the tracepoints themselves.
 */
#include "config.h"

#include "trace.h"

void wsr__tp_init(int32_t p, int32_t m, int32_t gomaxprocs, int32_t runq_size, const char * version)
{
	lttng_ust_do_tracepoint(wsr, init, p, m, gomaxprocs, runq_size, version);
}

void wsr__tp_g_create(int32_t p, int32_t m, int64_t g, int64_t parent_g)
{
	lttng_ust_do_tracepoint(wsr, g_create, p, m, g, parent_g);
}

void wsr__tp_runqput(int32_t p, int32_t m, int64_t g, uint8_t next, int64_t kicked_g, uint32_t qlen)
{
	lttng_ust_do_tracepoint(wsr, runqput, p, m, g, next, kicked_g, qlen);
}

void wsr__tp_runq_spill(int32_t p, int32_t m, uint32_t n, uint32_t global_len)
{
	lttng_ust_do_tracepoint(wsr, runq_spill, p, m, n, global_len);
}

void wsr__tp_globrunq_put(int32_t p, int32_t m, int64_t g, uint32_t global_len)
{
	lttng_ust_do_tracepoint(wsr, globrunq_put, p, m, g, global_len);
}

void wsr__tp_globrunq_get(int32_t p, int32_t m, uint32_t n, uint32_t global_len)
{
	lttng_ust_do_tracepoint(wsr, globrunq_get, p, m, n, global_len);
}

void wsr__tp_g_run(int32_t p, int32_t m, int64_t g, uint8_t source, uint8_t inherit)
{
	lttng_ust_do_tracepoint(wsr, g_run, p, m, g, source, inherit);
}

void wsr__tp_g_stop(int32_t p, int32_t m, int64_t g, uint8_t reason)
{
	lttng_ust_do_tracepoint(wsr, g_stop, p, m, g, reason);
}

void wsr__tp_g_ready(int32_t p, int32_t m, int64_t g, int64_t by_g)
{
	lttng_ust_do_tracepoint(wsr, g_ready, p, m, g, by_g);
}

void wsr__tp_steal(int32_t p, int32_t m, int32_t victim, uint32_t n, uint8_t runnext)
{
	lttng_ust_do_tracepoint(wsr, steal, p, m, victim, n, runnext);
}

void wsr__tp_steal_scan(int32_t p, int32_t m, uint32_t rounds, uint32_t probed, uint8_t found)
{
	lttng_ust_do_tracepoint(wsr, steal_scan, p, m, rounds, probed, found);
}

void wsr__tp_spin_start(int32_t p, int32_t m, int32_t nmspinning, uint8_t found_work)
{
	lttng_ust_do_tracepoint(wsr, spin_start, p, m, nmspinning, found_work);
}

void wsr__tp_spin_stop(int32_t p, int32_t m, int32_t nmspinning, uint8_t found_work)
{
	lttng_ust_do_tracepoint(wsr, spin_stop, p, m, nmspinning, found_work);
}

void wsr__tp_p_idle(int32_t p, int32_t m, int32_t npidle)
{
	lttng_ust_do_tracepoint(wsr, p_idle, p, m, npidle);
}

void wsr__tp_p_busy(int32_t p, int32_t m, int32_t npidle)
{
	lttng_ust_do_tracepoint(wsr, p_busy, p, m, npidle);
}

void wsr__tp_m_park(int32_t p, int32_t m, int32_t nmidle, int32_t by_m)
{
	lttng_ust_do_tracepoint(wsr, m_park, p, m, nmidle, by_m);
}

void wsr__tp_m_unpark(int32_t p, int32_t m, int32_t nmidle, int32_t by_m)
{
	lttng_ust_do_tracepoint(wsr, m_unpark, p, m, nmidle, by_m);
}

void wsr__tp_m_create(int32_t p, int32_t m, int32_t new_m)
{
	lttng_ust_do_tracepoint(wsr, m_create, p, m, new_m);
}

void wsr__tp_syscall_enter(int32_t p, int32_t m, int64_t g)
{
	lttng_ust_do_tracepoint(wsr, syscall_enter, p, m, g);
}

void wsr__tp_syscall_exit(int32_t p, int32_t m, int64_t g, uint8_t fast)
{
	lttng_ust_do_tracepoint(wsr, syscall_exit, p, m, g, fast);
}

void wsr__tp_retake(int32_t p, int32_t m, int64_t g, int64_t held_ns)
{
	lttng_ust_do_tracepoint(wsr, retake, p, m, g, held_ns);
}

void wsr__tp_handoff(int32_t p, int32_t m, int64_t g, int32_t to_m)
{
	lttng_ust_do_tracepoint(wsr, handoff, p, m, g, to_m);
}

void wsr__tp_preempt(int32_t p, int32_t m, int64_t g, int64_t ran_ns)
{
	lttng_ust_do_tracepoint(wsr, preempt, p, m, g, ran_ns);
}

void wsr__tp_timer_fire(int32_t p, int32_t m, int64_t g)
{
	lttng_ust_do_tracepoint(wsr, timer_fire, p, m, g);
}

void wsr__tp_netpoll(int32_t p, int32_t m, uint32_t n_ready, uint8_t blocking)
{
	lttng_ust_do_tracepoint(wsr, netpoll, p, m, n_ready, blocking);
}

void wsr__tp_schedtrace(int32_t p, int32_t m, const struct wsr_tp_schedtrace * st)
{
	lttng_ust_do_tracepoint(wsr, schedtrace, p, m, st);
}
