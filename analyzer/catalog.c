/*
 * catalog.c - the wsr event catalog as the analyzer stores it (see rec.h and
 * sql/schema.sql event_fields, which must agree with this table).
 *
 * Invariants: one entry per enum wsr_ev in the same order; every field named
 * here exists in tracepoints/wsr_tp.h (tests/analyzer checks the decoded
 * database against event_fields).
 * Concurrency: read-only data.
 */
#include "config.h"

#include <stddef.h>

#include "rec.h"

const struct wsr_catalog_entry wsr_catalog[EV_COUNT] = {
	[EV_INIT] = {"init", NULL, {"gomaxprocs", "runq_size", NULL}, 1},
	[EV_G_CREATE] = {"g_create", "g", {"parent_g", NULL, NULL}, 0},
	[EV_RUNQPUT] = {"runqput", "g", {"next", "kicked_g", "qlen"}, 0},
	[EV_RUNQ_SPILL] = {"runq_spill", NULL, {"n", "global_len", NULL}, 0},
	[EV_GLOBRUNQ_PUT] = {"globrunq_put", "g", {NULL, "global_len", NULL}, 0},
	[EV_GLOBRUNQ_GET] = {"globrunq_get", NULL, {"n", "global_len", NULL}, 0},
	[EV_G_RUN] = {"g_run", "g", {"source", "inherit", NULL}, 0},
	[EV_G_STOP] = {"g_stop", "g", {"reason", NULL, NULL}, 0},
	[EV_G_READY] = {"g_ready", "g", {"by_g", NULL, NULL}, 0},
	[EV_STEAL] = {"steal", NULL, {"victim", "n", "runnext"}, 0},
	[EV_STEAL_SCAN] = {"steal_scan", NULL, {"rounds", "probed", "found"}, 0},
	[EV_SPIN_START] = {"spin_start", NULL, {"nmspinning", "found_work", NULL}, 0},
	[EV_SPIN_STOP] = {"spin_stop", NULL, {"nmspinning", "found_work", NULL}, 0},
	[EV_P_IDLE] = {"p_idle", NULL, {"npidle", NULL, NULL}, 0},
	[EV_P_BUSY] = {"p_busy", NULL, {"npidle", NULL, NULL}, 0},
	[EV_M_PARK] = {"m_park", NULL, {"nmidle", "by_m", NULL}, 0},
	[EV_M_UNPARK] = {"m_unpark", NULL, {"nmidle", "by_m", NULL}, 0},
	[EV_M_CREATE] = {"m_create", NULL, {"new_m", NULL, NULL}, 0},
	[EV_SYSCALL_ENTER] = {"syscall_enter", "g", {NULL, NULL, NULL}, 0},
	[EV_SYSCALL_EXIT] = {"syscall_exit", "g", {"fast", NULL, NULL}, 0},
	[EV_HANDOFF] = {"handoff", "g", {"to_m", NULL, NULL}, 0},
	[EV_RETAKE] = {"retake", "g", {"held_ns", NULL, NULL}, 0},
	[EV_PREEMPT] = {"preempt", "g", {"ran_ns", NULL, NULL}, 0},
	[EV_TIMER_FIRE] = {"timer_fire", "g", {NULL, NULL, NULL}, 0},
	[EV_NETPOLL] = {"netpoll", NULL, {"n_ready", "blocking", NULL}, 0},
	[EV_SCHEDTRACE] = {"schedtrace", NULL, {NULL, NULL, NULL}, 2},
};

const char *const wsr_g_source_names[WSR_G_SOURCE_COUNT] = {
	"runnext", "local", "global", "steal", "netpoll", "timer",
};

const char *const wsr_g_reason_names[WSR_G_REASON_COUNT] = {
	"yield",   "block", "sleep",  "chan",      "mutex", "syscall",
	"preempt", "exit",  "select", "waitgroup", "io",
};
