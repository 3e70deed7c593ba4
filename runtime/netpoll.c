/*
 * netpoll.c - the network poller on epoll, and wsr_read/wsr_write/wsr_accept/
 * wsr_connect, which park the G (not the thread) until the fd is ready
 * (Go: netpoll.go, netpoll_epoll.go).
 *
 * Invariants:
 *   - No call blocks its thread, whatever the fd number was before: close(2)
 *     and the next pipe(2), socket(2) or open(2) may give the number to a new
 *     file, and wsr does not own close (Go's poller does: it sees every
 *     close), so nothing learnt about an fd number is trusted as a fact about
 *     the file behind it. wsr_read and wsr_write on a socket pass
 *     MSG_DONTWAIT (recv/send, no state on the fd at all); on anything else
 *     they check O_NONBLOCK (fcntl F_GETFL, set if clear) at every call. A
 *     descriptor's `notsock` is only a hint that saves the failing recv/send
 *     (ENOTSOCK) on a known non-socket; a stale hint costs an fcntl, never a
 *     blocked thread, and is dropped whenever O_NONBLOCK had to be set (a
 *     file not seen before). wsr_accept and wsr_connect check O_NONBLOCK on
 *     their socket at every call. Rejected: caching "already non-blocking"
 *     per number (issue 17: a reused number stayed blocking and stopped the
 *     whole P), and an fcntl on every socket call (270 to 360 ns here,
 *     against 3.5 to 3.8 us for a one-byte write and read on a Unix socket
 *     pair).
 *   - Each fd waited on is registered edge-triggered for read and write once
 *     per file, at its first park (a call that succeeds at once makes no
 *     epoll_ctl), and never re-armed (Go registers at open and never again).
 *     `armed` says the file now at this number is registered, as far as wsr
 *     knows. It is cleared where wsr learns that the number names a new file
 *     (wsr_accept's and wsr_connect's socket, an fd whose O_NONBLOCK had to be
 *     set) and by wsr_close. A number closed with close(2) and handed out
 *     again as a socket (or as a file created non-blocking) is not seen: its
 *     first park trusts a registration that died with the old file. sysmon's
 *     sweep (wsr__netpoll_sweep) catches those: every trusted park that lasts
 *     past one sweep is registered once more (EEXIST: it was fine), so such a
 *     G waits at most two sweep periods (10 to 40 ms) for its first wakeup,
 *     never forever, and a park that trusted nothing costs the sweep nothing.
 *     Rejected: an epoll_ctl before every park (issue 17: 0.54 a request,
 *     ~4% of the HTTP server's CPU, all of them EEXIST), and a check of the
 *     file's identity at every park (fstat, kcmp: a system call as well).
 *   - wsr_close evicts: it unregisters the fd, bumps `closeseq` and wakes
 *     the Gs parked on it, which return -1 with EBADF (Go's Close). A G
 *     parked on an fd that plain close(2) closed stays parked (as a thread
 *     in read(2) does), unless its park was a trusted one the sweep checks.
 *   - A poll descriptor's rg/wg word is 0 (nothing), PD_READY (an event
 *     arrived that nobody consumed), PD_WAIT (a G is about to park) or the
 *     parked G itself; only the parking G and the wakers (the poller,
 *     wsr_close, the sweep) change it, by CAS.
 *   - wsr__lastpoll is 0 exactly while one M blocks in epoll; wsr__polluntil
 *     is when that M will wake by itself (0: never).
 * Concurrency: the descriptor table grows under tablelock and its entries
 *   never move (pages of descriptors); rg/wg and closeseq are seq_cst atomics
 *   (a parking G sets PD_WAIT then reads closeseq; wsr_close bumps closeseq
 *   then takes rg/wg); armed and parkseq are hints (relaxed): a wrong value
 *   costs an epoll_ctl or a late sweep check, never a lost wakeup, because
 *   an epoll_ctl ADD is always safe to repeat. sm_seen and sm_checked belong
 *   to sysmon's thread. The break eventfd is written by anyone and drained by
 *   the poller.
 * Tracepoints: netpoll (g_ready for each G, in findrunnable/injectglist).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <wsr.h>

#include "proc.h"
#include "san.h"

#if WSR_SAN_TSAN
/* ThreadSanitizer's dynamic annotations (its runtime defines them). */
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
#endif

#define PD_READY ((uintptr_t)1)
#define PD_WAIT  ((uintptr_t)2)
#define PD_PAGE  1024
#define PD_PAGES 1024 /* fds up to 1M */

struct pollfd_desc {
	_Atomic uintptr_t rg;
	_Atomic uintptr_t wg;
	_Atomic int notsock; /* hint: the last file seen at this number was no socket */
	_Atomic uint32_t armed;	   /* 1: registered with epoll (see the head comment) */
	_Atomic uint32_t parkseq;  /* parks that trusted `armed` (bumped by the parking G) */
	_Atomic uint32_t closeseq; /* wsr_close calls on this number */
	uint32_t sm_seen;	   /* sysmon: parkseq at its last sweep */
	uint32_t sm_checked;	   /* sysmon: the last parkseq it registered again */
};

_Atomic int64_t wsr__lastpoll;
_Atomic int64_t wsr__polluntil;

static int epfd = -1; /* written once in netpoll_init (pthread_once) */
static int breakfd = -1;
/* store-release after epfd and breakfd are set; netpoll_break load-acquires
 * it, since it may run on a thread that never went through pthread_once. */
static _Atomic int inited;
static _Atomic int breakpending;
static _Atomic int32_t nwaiters;
static _Atomic int maxfd = -1; /* the highest fd number ever registered */
static struct wsr_lock tablelock = WSR_LOCK_INITIALIZER;
static _Atomic(struct pollfd_desc *) table[PD_PAGES];
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void netpoll_init(void)
{
	struct epoll_event ev;

	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		wsr__throw("netpoll_init: epoll_create1 failed");
	breakfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (breakfd < 0)
		wsr__throw("netpoll_init: eventfd failed");
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.fd = breakfd;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, breakfd, &ev) != 0)
		wsr__throw("netpoll_init: epoll_ctl failed");
	/* store-release: pairs with the load-acquire in wsr__netpoll_break. */
	store_rel(&inited, 1);
}

bool wsr__netpoll_inited(void)
{
	pthread_once(&init_once, netpoll_init);
	return true;
}

int32_t wsr__netpoll_waiters(void)
{
	return load_seq(&nwaiters);
}

void wsr__netpoll_close(void)
{
	/* The descriptors and the epoll fd live as long as the process: fds
	 * registered by the program may outlive wsr_main. */
}

void wsr__netpoll_break(void)
{
	int zero = 0;
	uint64_t one = 1;

	/* load-acquire: pairs with the store-release in netpoll_init; no
	 * poller can be blocked before the poller exists. */
	if (!load_acq(&inited))
		return;
	if (!cas_seq(&breakpending, &zero, 1))
		return;
	while (write(breakfd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
}

static struct pollfd_desc *pd_get(int fd)
{
	struct pollfd_desc *page;
	int pi = fd / PD_PAGE;

	if (fd < 0 || pi >= PD_PAGES)
		return NULL;
	page = load_acq(&table[pi]);
	if (page == NULL) {
		wsr__lock(&tablelock);
		page = load_relaxed(&table[pi]);
		if (page == NULL) {
			page = calloc(PD_PAGE, sizeof(*page));
			if (page == NULL)
				wsr__throw("netpoll: out of memory");
			/* store-release publishes the zeroed page; pairs with load-acquire above. */
			store_rel(&table[pi], page);
		}
		wsr__unlock(&tablelock);
	}
	return &page[fd % PD_PAGE];
}

/* Makes fd non-blocking if it is not; -1 with errno set on failure. Checked
 * at every call: the number may name a new file since the last one. */
static int pd_nonblock(int fd, struct pollfd_desc *pd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	if (!(fl & O_NONBLOCK)) {
		if (fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
			return -1;
		/* A file not seen before (or whose flags someone reset): learn
		 * afresh whether it is a socket, and register it. */
		store_relaxed(&pd->notsock, 0);
		store_relaxed(&pd->armed, 0);
	}
	return 0;
}

/* A number that wsr knows to name a new file (just accepted, about to
 * connect): forget what an old owner of the number left. */
static void pd_fresh(struct pollfd_desc *pd)
{
	store_seq(&pd->rg, 0);
	store_seq(&pd->wg, 0);
	store_relaxed(&pd->notsock, 0);
	store_relaxed(&pd->armed, 0);
}

/* One read(2) that never blocks: recv(MSG_DONTWAIT) on a socket, else
 * read(2) on the fd made non-blocking. A zero-length read goes to read(2),
 * which returns 0 at once where recv would consume a datagram. */
static ssize_t pd_read(int fd, struct pollfd_desc *pd, void *buf, size_t n)
{
	if (n > 0 && !load_relaxed(&pd->notsock)) {
		ssize_t r = recv(fd, buf, n, MSG_DONTWAIT);

		if (r >= 0 || wsr__errno_get() != ENOTSOCK)
			return r;
		store_relaxed(&pd->notsock, 1);
	}
	if (pd_nonblock(fd, pd) != 0)
		return -1;
	return read(fd, buf, n);
}

/* The same for write(2): send(MSG_DONTWAIT) on a socket (SIGPIPE as write;
 * n > 0 here). */
static ssize_t pd_write(int fd, struct pollfd_desc *pd, const void *buf, size_t n)
{
	if (!load_relaxed(&pd->notsock)) {
		ssize_t r = send(fd, buf, n, MSG_DONTWAIT);

		if (r >= 0 || wsr__errno_get() != ENOTSOCK)
			return r;
		store_relaxed(&pd->notsock, 1);
	}
	if (pd_nonblock(fd, pd) != 0)
		return -1;
	return write(fd, buf, n);
}

/* Registers fd with epoll (EEXIST is fine); -1 with errno set on failure.
 * Adding an fd that is already ready reports it at once, so nothing that
 * arrived since the call's EAGAIN is missed. */
static int epoll_add(int fd)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
	ev.data.fd = fd;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0 && wsr__errno_get() != EEXIST)
		return -1;
	return 0;
}

/* The sweep registers fds that a G may close(2) at the same moment: that
 * is the point (a closed number reports EBADF, a reused one is registered,
 * both harmless), but ThreadSanitizer takes an fd used on one thread while
 * another closes it for the program's race. Its reads of the fd are not
 * recorded (the program's own uses of the fd are). */
static int sweep_add(int fd)
{
	int r;

#if WSR_SAN_TSAN
	AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
#endif
	r = epoll_add(fd);
#if WSR_SAN_TSAN
	AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
#endif
	return r;
}

/* Makes sure fd is registered before a park: once per file (see the head
 * comment), or a park that trusts `armed`, which the sweep may check. */
static int pd_register(int fd, struct pollfd_desc *pd)
{
	int top;

	if (load_relaxed(&pd->armed)) {
		/* Only parking Gs write it; a lost increment (both directions at
		 * once) at worst makes the sweep check a park once more. */
		store_relaxed(&pd->parkseq, load_relaxed(&pd->parkseq) + 1);
		return 0;
	}
	wsr__netpoll_inited();
	if (epoll_add(fd) != 0)
		return -1;
	store_relaxed(&pd->armed, 1);
	top = load_relaxed(&maxfd);
	while (fd > top && !cas_seq(&maxfd, &top, fd))
		;
	return 0;
}

/* Hands the ready state to the waiter; returns the G to wake, if any. */
static struct wsr_g *pd_unblock(_Atomic uintptr_t *gpp)
{
	uintptr_t old = load_seq(gpp);

	for (;;) {
		if (old == PD_READY)
			return NULL;
		if (cas_seq(gpp, &old, PD_READY))
			return old > PD_WAIT ? (struct wsr_g *)old : NULL;
	}
}

static bool block_commit(struct wsr_g *gp, void *arg)
{
	_Atomic uintptr_t *gpp = arg;
	uintptr_t expect = PD_WAIT;

	/* CAS PD_WAIT -> G; fails if the poller set PD_READY meanwhile. */
	if (cas_seq(gpp, &expect, (uintptr_t)gp)) {
		xadd_seq(&nwaiters, 1);
		return true;
	}
	return false;
}

/* Takes the G parked on gpp, if any, onto list (the poller's and the
 * evictions' way to wake it). */
static struct wsr_g *pd_ready(_Atomic uintptr_t *gpp, struct wsr_g *list, int32_t *n)
{
	struct wsr_g *gp = pd_unblock(gpp);

	if (gp == NULL)
		return list;
	xadd_seq(&nwaiters, -1);
	gp->readysrc = SRC_NETPOLL;
	gp->schedlink = list;
	(*n)++;
	return gp;
}

/* Parks until fd is ready for this mode (gpp is pd's rg or wg word); -1 with
 * errno set if fd cannot be registered, or EBADF if wsr_close closed it. */
static int pd_wait(int fd, struct pollfd_desc *pd, _Atomic uintptr_t *gpp)
{
	uint32_t cseq = load_seq(&pd->closeseq);
	uintptr_t old;

	if (pd_register(fd, pd) != 0)
		return -1;
	old = load_seq(gpp);

	for (;;) {
		if (old == PD_READY) {
			if (cas_seq(gpp, &old, 0))
				return 0;
			continue;
		}
		if (old != 0)
			wsr__throw("netpoll: two Gs wait on the same fd and direction");
		if (cas_seq(gpp, &old, PD_WAIT))
			break;
	}
	/* seq_cst after PD_WAIT: either we see wsr_close's closeseq, or its
	 * eviction sees PD_WAIT (and aborts the park) or us parked. */
	if (load_seq(&pd->closeseq) == cseq)
		wsr__gopark(block_commit, (void *)gpp, WR_IO);
	/* Consume the readiness that woke us (or that aborted the park). */
	xchg_seq(gpp, 0);
	if (load_seq(&pd->closeseq) != cseq) {
		wsr__errno_set(EBADF);
		return -1;
	}
	return 0;
}

struct wsr_g *wsr__netpoll(struct wsr_m *mp, int64_t delay, int32_t *np)
{
	struct epoll_event evs[128];
	struct wsr_g *list = NULL;
	int n, i;
	int32_t ready = 0;

	wsr__netpoll_inited();
	if (delay < 0) {
		n = epoll_pwait2(epfd, evs, 128, NULL, NULL);
	} else {
		struct timespec ts = {delay / 1000000000, delay % 1000000000};

		n = epoll_pwait2(epfd, evs, 128, &ts, NULL);
	}
	if (n < 0 && errno == ENOSYS) {
		int ms = delay < 0 ? -1 : (int)((delay + 999999) / 1000000);

		n = epoll_wait(epfd, evs, 128, ms);
	}
	for (i = 0; i < n; i++) {
		struct pollfd_desc *pd;

		if (evs[i].data.fd == breakfd) {
			uint64_t v;

			while (read(breakfd, &v, sizeof(v)) < 0 && errno == EINTR)
				;
			store_seq(&breakpending, 0);
			continue;
		}
		pd = pd_get(evs[i].data.fd);
		if (pd == NULL)
			continue;
		if (evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
			list = pd_ready(&pd->rg, list, &ready);
		if (evs[i].events & (EPOLLOUT | EPOLLHUP | EPOLLERR))
			list = pd_ready(&pd->wg, list, &ready);
	}
	if (ready > 0 || delay != 0)
		WSR_TRACE(netpoll, wsr__stats_of(mp), p_id(mp != NULL ? mp->p : NULL), m_id(mp),
			  (uint32_t)ready, (uint8_t)(delay != 0));
	*np = ready;
	return list;
}

void wsr__netpoll_sweep(void)
{
	struct wsr_g *list = NULL;
	int32_t n = 0;
	int fd, top;

	/* load-acquire: pairs with netpoll_init's store-release (epfd). */
	if (!load_acq(&inited) || load_seq(&nwaiters) == 0)
		return;
	top = load_relaxed(&maxfd);
	for (fd = 0; fd <= top; fd++) {
		struct pollfd_desc *page = load_acq(&table[fd / PD_PAGE]), *pd;
		uint32_t seq;

		if (page == NULL) {
			fd |= PD_PAGE - 1;
			continue;
		}
		pd = &page[fd % PD_PAGE];
		if (load_seq(&pd->rg) <= PD_WAIT && load_seq(&pd->wg) <= PD_WAIT)
			continue;
		seq = load_relaxed(&pd->parkseq);
		if (seq == pd->sm_checked)
			continue; /* no trusted park since the last check */
		if (seq != pd->sm_seen) {
			pd->sm_seen = seq; /* check it next time, if it lasts */
			continue;
		}
		pd->sm_checked = seq;
		/* 0: the registration had died with an old file (now registered,
		 * and reported at once if ready); EEXIST: it was fine. */
		if (sweep_add(fd) == 0)
			continue;
		/* The number names no pollable file (closed): wake its Gs, whose
		 * retry reports the error. */
		list = pd_ready(&pd->rg, list, &n);
		list = pd_ready(&pd->wg, list, &n);
	}
	if (list != NULL)
		wsr__injectglist(wsr__getm(), list);
}

int wsr_close(int fd)
{
	struct pollfd_desc *pd = pd_get(fd);
	struct wsr_g *list = NULL;
	int32_t n = 0;
	int r;

	if (pd != NULL) {
		/* seq_cst: pairs with pd_wait's load after PD_WAIT. */
		xadd_seq(&pd->closeseq, 1);
		/* Another fd of the same file (dup) would keep the registration,
		 * and report its events on this number: drop it. */
		if (xchg_seq(&pd->armed, 0) != 0 && load_acq(&inited))
			epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
		store_relaxed(&pd->notsock, 0);
		/* Acquire the parked Gs' words: their last use of the fd came
		 * before their park's CAS, so it happens before this close. */
		(void)load_seq(&pd->rg);
		(void)load_seq(&pd->wg);
	}
	r = close(fd);
	if (pd != NULL) {
		int e = wsr__errno_get();

		list = pd_ready(&pd->rg, list, &n);
		list = pd_ready(&pd->wg, list, &n);
		if (list != NULL)
			wsr__injectglist(wsr__getm(), list);
		wsr__errno_set(e);
	}
	return r;
}

static void io_enter(const char *what)
{
	struct wsr_m *mp = wsr__getm();

	if (mp == NULL || mp->curg == NULL)
		wsr__throw(what);
}

ssize_t wsr_read(int fd, void *buf, size_t n)
{
	struct pollfd_desc *pd = pd_get(fd);

	io_enter("wsr_read: called outside a G");
	if (pd == NULL) {
		wsr__errno_set(EBADF);
		return -1;
	}
	for (;;) {
		ssize_t r = pd_read(fd, pd, buf, n);

		if (r >= 0 || (wsr__errno_get() != EAGAIN && wsr__errno_get() != EINTR)) {
			int e = wsr__errno_get();

			wsr__preempt_check();
			wsr__errno_set(e);
			return r;
		}
		if (wsr__errno_get() == EAGAIN && pd_wait(fd, pd, &pd->rg) != 0)
			return -1;
	}
}

ssize_t wsr_write(int fd, const void *buf, size_t n)
{
	struct pollfd_desc *pd = pd_get(fd);
	size_t done = 0;

	io_enter("wsr_write: called outside a G");
	if (pd == NULL) {
		wsr__errno_set(EBADF);
		return -1;
	}
	/* Like Go's fd.Write: all of buf, unless an error stops it. */
	while (done < n) {
		ssize_t r = pd_write(fd, pd, (const char *)buf + done, n - done);

		if (r >= 0) {
			done += (size_t)r;
			continue;
		}
		if (wsr__errno_get() == EINTR)
			continue;
		if (wsr__errno_get() != EAGAIN || pd_wait(fd, pd, &pd->wg) != 0)
			return done > 0 ? (ssize_t)done : -1;
	}
	wsr__preempt_check();
	return (ssize_t)done;
}

int wsr_accept(int fd, struct sockaddr *sa, socklen_t *len)
{
	struct pollfd_desc *pd = pd_get(fd);

	io_enter("wsr_accept: called outside a G");
	if (pd == NULL) {
		wsr__errno_set(EBADF);
		return -1;
	}
	for (;;) {
		int c;

		/* accept4 has no per-call MSG_DONTWAIT: check the listener's flag
		 * every time round (it may be a new socket with an old number). */
		if (pd_nonblock(fd, pd) != 0)
			return -1;
		c = accept4(fd, sa, len, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (c >= 0) {
			struct pollfd_desc *cpd = pd_get(c);

			if (cpd != NULL)
				pd_fresh(cpd);
			wsr__preempt_check();
			return c;
		}
		if (wsr__errno_get() == EINTR || wsr__errno_get() == ECONNABORTED)
			continue;
		if (wsr__errno_get() != EAGAIN || pd_wait(fd, pd, &pd->rg) != 0)
			return -1;
	}
}

int wsr_connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	struct pollfd_desc *pd = pd_get(fd);
	socklen_t elen = sizeof(int);
	int err = 0;

	io_enter("wsr_connect: called outside a G");
	if (pd == NULL) {
		wsr__errno_set(EBADF);
		return -1;
	}
	pd_fresh(pd);
	/* connect needs O_NONBLOCK itself (EINPROGRESS); no MSG_DONTWAIT here. */
	if (pd_nonblock(fd, pd) != 0)
		return -1;
	if (connect(fd, sa, len) == 0)
		return 0;
	if (wsr__errno_get() != EINPROGRESS && wsr__errno_get() != EINTR)
		return -1;
	for (;;) {
		if (pd_wait(fd, pd, &pd->wg) != 0)
			return -1;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0)
			return -1;
		if (err == EINPROGRESS || err == EALREADY)
			continue;
		if (err != 0) {
			wsr__errno_set(err);
			return -1;
		}
		wsr__preempt_check();
		return 0;
	}
}
