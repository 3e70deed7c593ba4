/*
 * validate.c - what every record must satisfy before the trackers see it
 * (validate.h).
 *
 * Invariants: checks read the record and the validator only; only
 *   validate_stream(), validate_vpid() and validate_accept() change state.
 * Concurrency: one thread.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "validate.h"

int validate_stream(struct validator *v, const struct wsr_rec *r, const char *extra,
		    struct wsr_err *err)
{
	struct stream_info *si = &v->streams[r->stream];
	const char *name = extra != NULL && r->extra_len > 0 ? extra : "?";

	if (!v->trace_real_done) {
		v->trace_real_done = true;
		v->trace_real = v->trace != NULL ? realpath(v->trace, NULL) : NULL;
	}
	size_t tl = v->trace_real != NULL ? strlen(v->trace_real) : 0;
	if (tl > 0 && strncmp(name, v->trace_real, tl) == 0 && name[tl] == '/' && name[tl + 1])
		name += tl + 1;
	free(si->name);
	si->name = strdup(name);
	si->cpu = (r->flags & REC_F_A1) ? (int32_t)r->a1 : -1;
	si->last_ts = INT64_MIN;
	si->declared = true;
	if (si->name == NULL) {
		err_push(err, "out of memory");
		return -1;
	}
	return 0;
}

/* One process per database: the state machines cannot mix two runtimes. */
int validate_vpid(struct validator *v, const struct wsr_rec *r, struct wsr_err *err)
{
	if (!(r->flags & REC_F_VPID))
		return 1;
	if (v->want_vpid > 0 && r->vpid != v->want_vpid) {
		v->skipped_other_vpid++;
		return 0;
	}
	if (v->vpid == 0) {
		v->vpid = r->vpid;
	} else if (r->vpid != v->vpid) {
		err_input(err,
			  "%s: the trace holds events of several processes (vpid %" PRId64
			  " and %d): pass --vpid PID to analyse one (wsr run records only "
			  "its child)",
			  v->trace, v->vpid, r->vpid);
		return -1;
	}
	return 1;
}

void validate_accept(struct validator *v, const struct wsr_rec *r)
{
	v->streams[r->stream].last_ts = r->ts;
	v->any_ts = true;
	v->last_ts = r->ts;
}

void validate_free(struct validator *v)
{
	free(v->trace_real);
	v->trace_real = NULL;
	v->trace_real_done = false;
	for (int i = 0; i < MAX_STREAMS; i++) {
		free(v->streams[i].name);
		v->streams[i].name = NULL;
	}
}

static const char *ev_name(const struct wsr_rec *r, const char *extra)
{
	if (r->ev < EV_COUNT)
		return wsr_catalog[r->ev].name;
	return extra != NULL && r->extra_len > 0 ? extra : "?";
}

static int bad(const struct validator *v, uint64_t index, const struct wsr_rec *r,
	       const char *extra, struct wsr_err *err, const char *what, int64_t val)
{
	const char *sname = v->streams[r->stream].name;

	err_input(err,
		  "%s: event #%" PRIu64 " (%s%s at %" PRId64 " ns, stream %s): %s = %" PRId64
		  " is out of range: the trace is corrupted or not from this runtime",
		  v->trace, index + 1, r->ev < EV_COUNT ? "wsr:" : "", ev_name(r, extra), r->ts,
		  sname != NULL ? sname : "?", what, val);
	return -1;
}

/* The flags of the fields a catalog event must carry: p, m and those the
 * catalog stores in g and a1..a3 (as wsr_catalog, from the same table),
 * but init.policy (a3), which came later than the catalog's other fields:
 * traces of older runtimes lack it, and no meta policy is written. */
#define NEED_FLAGS(ev, EV, g, a1, a2, a3, text, n_json)                                        \
 [EV_##EV] = REC_F_P | REC_F_M | ((g) != NULL ? REC_F_G : 0) | ((a1) != NULL ? REC_F_A1 : 0) | \
	     ((a2) != NULL ? REC_F_A2 : 0) | ((a3) != NULL && EV_##EV != EV_INIT ? REC_F_A3 : 0),
static const uint32_t need_flags[EV_COUNT] = {WSR_CAT_COLUMNS(NEED_FLAGS)};
#undef NEED_FLAGS

/* The fields of catalog event r: present, and p, m and g in range. */
static int fields(const struct validator *v, const struct wsr_rec *r, const char *extra, int maxp,
		  uint64_t index, struct wsr_err *err)
{
	if (!(r->flags & REC_F_P) || !(r->flags & REC_F_M)) {
		err_input(err, "%s: event wsr:%s lacks the fields p and m of the wsr catalog",
			  v->trace, wsr_catalog[r->ev].name);
		return -1;
	}
	if (r->p < -1 || r->p >= maxp)
		return bad(v, index, r, extra, err, "p", r->p);
	if (r->m < -1 || r->m >= WSR_MAX_M)
		return bad(v, index, r, extra, err, "m", r->m);
	const struct wsr_catalog_entry *c = &wsr_catalog[r->ev];
	if (c->g != NULL) {
		if (!(r->flags & REC_F_G)) {
			err_input(err, "%s: event wsr:%s lacks its field %s", v->trace, c->name,
				  c->g);
			return -1;
		}
		if (r->g < 0 || r->g >= WSR_MAX_G)
			return bad(v, index, r, extra, err, "g", r->g);
	}
	for (int k = 0; k < 3; k++) {
		uint32_t bit = (uint32_t)REC_F_A1 << k;
		if (c->a[k] != NULL && !(r->flags & bit) && (need_flags[r->ev] & bit)) {
			err_input(err, "%s: event wsr:%s lacks its field %s", v->trace, c->name,
				  c->a[k]);
			return -1;
		}
	}
	return 0;
}

int validate_event(const struct validator *v, const struct wsr_rec *r, const char *extra,
		   int gomaxprocs, uint64_t index, struct wsr_err *err)
{
	int maxp = gomaxprocs > 0 ? gomaxprocs : WSR_MAX_P;
	const struct stream_info *si = &v->streams[r->stream];

	if (!si->declared) {
		err_push(err, "internal: record for undeclared stream %u", r->stream);
		return -1;
	}
	if (!(r->flags & REC_F_TS))
		return bad(v, index, r, extra, err, "timestamp (missing)", 0);
	if (r->ts < si->last_ts) {
		err_input(err,
			  "%s: stream %s: time goes backwards at event #%" PRIu64 " (%" PRId64
			  " ns after %" PRId64 " ns): the trace is corrupted",
			  v->trace, si->name, index + 1, r->ts, si->last_ts);
		return -1;
	}
	if (v->any_ts && r->ts < v->last_ts) {
		err_input(err,
			  "%s: time goes backwards across streams at event #%" PRIu64 " (%" PRId64
			  " ns after %" PRId64 " ns): the trace is corrupted",
			  v->trace, index + 1, r->ts, v->last_ts);
		return -1;
	}
	if (r->ev >= EV_COUNT)
		return 0;
	/* Every field present and in range (the common case) in one test;
	 * otherwise the checks one by one say which is wrong. */
	uint32_t need = need_flags[r->ev];
	if (((r->flags & need) != need || r->p < -1 || r->p >= maxp || r->m < -1 ||
	     r->m >= WSR_MAX_M || ((need & REC_F_G) && (r->g < 0 || r->g >= WSR_MAX_G))) &&
	    fields(v, r, extra, maxp, index, err) < 0)
		return -1;
	switch (r->ev) {
	case EV_INIT:
		if (r->a1 < 1 || r->a1 > WSR_MAX_P)
			return bad(v, index, r, extra, err, "gomaxprocs", r->a1);
		break;
	case EV_G_CREATE:
	case EV_G_RUN:
	case EV_G_STOP:
	case EV_RUNQPUT:
	case EV_GLOBRUNQ_PUT:
	case EV_G_READY:
		if (r->g < 1)
			return bad(v, index, r, extra, err, "g", r->g);
		if (r->ev == EV_G_RUN && (r->a1 < 0 || r->a1 >= WSR_G_SOURCE_COUNT))
			return bad(v, index, r, extra, err, "source", r->a1);
		if (r->ev == EV_G_STOP && (r->a1 < 0 || r->a1 >= WSR_G_REASON_COUNT))
			return bad(v, index, r, extra, err, "reason", r->a1);
		if (r->ev == EV_RUNQPUT && (r->a2 < 0 || r->a2 >= WSR_MAX_G))
			return bad(v, index, r, extra, err, "kicked_g", r->a2);
		/* g_stop(syscall) ends a call whose G found no P (p = -1). */
		if (r->ev != EV_G_CREATE && r->ev != EV_G_READY && r->ev != EV_GLOBRUNQ_PUT &&
		    r->p < 0 && !(r->ev == EV_G_STOP && r->a1 == WSR_REASON_SYSCALL))
			return bad(v, index, r, extra, err, "p", r->p);
		break;
	case EV_STEAL:
		if (r->a1 < 0 || r->a1 >= maxp)
			return bad(v, index, r, extra, err, "victim", r->a1);
		if (r->a2 < 1 || r->a2 > 1 << 20)
			return bad(v, index, r, extra, err, "n", r->a2);
		if (r->p < 0)
			return bad(v, index, r, extra, err, "p", r->p);
		break;
	case EV_RUNQ_SPILL:
	case EV_GLOBRUNQ_GET:
		if (r->a1 < 0 || r->a1 > 1 << 20)
			return bad(v, index, r, extra, err, "n", r->a1);
		if (r->p < 0)
			return bad(v, index, r, extra, err, "p", r->p);
		break;
	case EV_M_CREATE:
		if (r->a1 < 0 || r->a1 >= WSR_MAX_M)
			return bad(v, index, r, extra, err, "new_m", r->a1);
		break;
	case EV_P_IDLE:
	case EV_P_BUSY:
		if (r->p < 0)
			return bad(v, index, r, extra, err, "p", r->p);
		if (r->a1 < 0 || r->a1 > maxp)
			return bad(v, index, r, extra, err, "npidle", r->a1);
		break;
	case EV_SPIN_START:
	case EV_SPIN_STOP:
		if (r->a1 < 0 || r->a1 >= WSR_MAX_M)
			return bad(v, index, r, extra, err, "nmspinning", r->a1);
		break;
	case EV_HANDOFF:
		if (r->a1 < -1 || r->a1 >= WSR_MAX_M)
			return bad(v, index, r, extra, err, "to_m", r->a1);
		break;
	default:
		break;
	}
	return 0;
}
