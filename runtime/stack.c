/*
 * stack.c - G stacks: carved from chunks of STACK_CHUNK stacks, each with a
 * guard page, per-P and global caches, and the stack-overflow report on an
 * alternate signal stack.
 *
 * Layout of one stack: [guard page][usable bytes ... header]. The 16-byte
 * header at the very top records the usable size and the valgrind stack id.
 * A chunk is one mmap of STACK_CHUNK such stacks whose guards are installed
 * together (one process_madvise; else one madvise or mprotect per stack).
 * A chunk is unmapped only as a whole, at teardown: a run that used 20,000
 * stacks used to end in 20,000 munmaps (each splitting the merged VMA);
 * now adjacent chunks go in one call.
 *
 * Invariants:
 *   - A G owns a stack from its first run (execute) to its exit (goexit_m);
 *     a G that has never run has none.
 *   - A stack's pages are touched (faulted in) only once it is handed out:
 *     stack_map writes its header; the rest of a fresh chunk stays untouched.
 *   - A P's cache holds only stacks of the current default size; a stack of
 *     another size (after wsr_set_stack_size), or one the full pool cannot
 *     take, is dropped: its pages go back (MADV_DONTNEED), its address range
 *     stays reserved in its chunk until teardown, and it goes on spares[],
 *     which stack_map takes from (same size only) before carving. So a
 *     program whose live Gs rise past the pool again and again reuses the
 *     ranges it dropped instead of mapping new chunks each time.
 *   - chunks[] lists every chunk; wsr__stackpool_free unmaps them all, after
 *     every G stopped running (skipped if an M was left behind).
 *   - The SIGSEGV/SIGBUS handler runs on the M's own alternate stack and
 *     reports an overflow only for a fault inside (or just below) the running
 *     G's guard page; any other fault gets the previous disposition back.
 * Concurrency: pp->stackcache is the owner P's; the global pool, chunks[],
 *   spares[] and the chunk being carved are under poollock (a new chunk is mapped
 *   under it, once per STACK_CHUNK stacks); the default size is read and
 *   written atomically.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <wsr.h>

#include "proc.h"

#define STACK_HDR 16
/* Free stacks kept for reuse beyond the per-P caches. Unmapping and mapping
 * again costs three syscalls, a fault per touched page and, with several
 * Ms, a TLB shootdown; a spawn tree that keeps tens of thousands of parents
 * blocked frees and needs that many again all run long. Touched pages stay
 * resident (as Go keeps stacks until the next GC). */
#define POOL_MAX  65536

/* The pool's capacity: POOL_MAX; tests lower it (before wsr_main) to reach
 * the full-pool path with a few thousand Gs. Read under poollock. */
size_t wsr__stackpool_max = POOL_MAX;
/* Stacks per chunk: 64 x (256 KiB + a guard page) is 16.6 MB of address
 * space, mapped MAP_NORESERVE; only handed-out stacks get pages. */
#define STACK_CHUNK 64
#define ALTSTACK_SIZE (64 * 1024)

struct stack_hdr {
	uint32_t size_pages;
	uint32_t vgid;
};

static size_t pagesize;
static struct wsr_lock poollock = WSR_LOCK_INITIALIZER;
static void **pool; /* poolcap entries, allocated on first use */
static size_t poolcap;
static int npool;
static size_t poolsize; /* size of the stacks in pool; under poollock */

struct chunk {
	char *base;
	size_t len;
};

/* Under poollock: every chunk mapped since boot, and the one being carved. */
static struct chunk *chunks;
static size_t nchunks, chunkscap;
/* A dropped stack (see the invariants): its base and usable size. */
struct spare {
	char *base;
	size_t size;
};

static struct spare *spares;
static size_t nspares, sparescap;
static char *carve;	     /* next stack of the newest chunk */
static int carveleft;	     /* stacks left in it */
static size_t carvesize;     /* their usable size */
static struct sigaction old_segv, old_bus;
static pthread_once_t handler_once = PTHREAD_ONCE_INIT;
static _Atomic size_t default_size; /* 0: not decided yet (see cur_size) */
static _Atomic int size_from_api;   /* wsr_set_stack_size was called */

size_t wsr__page_size(void)
{
	if (pagesize == 0)
		pagesize = (size_t)sysconf(_SC_PAGESIZE);
	return pagesize;
}

/* base is a mapped stack, so pagesize is set (chunk_map read it); read
 * directly, not through wsr__page_size's test: wsr__stack_top runs once per G. */
static struct stack_hdr *hdr_of(void *base, size_t size)
{
	return (struct stack_hdr *)((char *)base + pagesize + size - STACK_HDR);
}

/*
 * Where a G's first frame starts: below the header, lowered by a "colour"
 * of 0-63 cache lines. Every stack ends on a page boundary, so without it
 * the top frames of all Gs (the saved context, the sudog of a blocked
 * channel operation) sit at the same offset in their pages. Caches index
 * sets by those offset bits (L1 entirely, L2 in part), so thousands of
 * parked Gs then compete for a few sets: the concurrent prime sieve (3,000
 * blocked filters) missed in L2 on nearly every switch. The colour belongs
 * to the stack (its page number), not to the G: a stack reused from a P's
 * cache puts the next G's frames on the lines the last G just warmed.
 * A 256 KiB stack gives up at most 4,032 bytes (1.5%); smaller stacks get
 * fewer colours (one per 4 KiB), so a 16 KiB stack gives up at most 192.
 */
void *wsr__stack_top(struct wsr_g *gp)
{
	/* Colours: one per 4 KiB of stack, at most 64. No division: this runs
	 * once per G (spawn_flat starts 3 M) and a div costs ~10 ns. With
	 * pages other than 4 KiB the colours are fewer, never wrong. */
	size_t ncolours = gp->stack_size >> 12, colour;

	if (ncolours > 64)
		ncolours = 64;
	colour = ((((uintptr_t)gp->stack >> 12) & 63) * ncolours) >> 6;
	return (char *)hdr_of(gp->stack, gp->stack_size) - colour * 64;
}

static size_t round_pages(size_t n)
{
	size_t ps = wsr__page_size();

	return (n + ps - 1) / ps * ps;
}

size_t wsr_set_stack_size(size_t bytes)
{
	size_t old = load_relaxed(&default_size);

	if (old == 0)
		old = wsr__sched.stacksize != 0 ? wsr__sched.stacksize : 256 * 1024;
	if (bytes != 0) {
		if (bytes < 16 * 1024)
			bytes = 16 * 1024;
		store_relaxed(&default_size, round_pages(bytes));
		store_relaxed(&size_from_api, 1);
	}
	return old;
}

static size_t cur_size(void)
{
	size_t s = load_relaxed(&default_size);

	if (__builtin_expect(s == 0, 0)) {
		/* First use: WSRDEBUG=stacksize or the default, in whole pages. */
		s = round_pages(wsr__sched.stacksize != 0 ? wsr__sched.stacksize : 256 * 1024);
		store_relaxed(&default_size, s);
	}
	return s;
}

#ifndef MADV_GUARD_INSTALL
# define MADV_GUARD_INSTALL 102 /* Linux >= 6.13 */
#endif

/* 1 while MADV_GUARD_INSTALL works (Linux >= 6.13), 0 once the kernel
 * refused it; 1 while process_madvise(PIDFD_SELF) takes it (newer kernels:
 * 6.18 does), 0 once it did not. */
static _Atomic int guard_madvise = 1;
static _Atomic int guard_batch = 1;

#ifndef PIDFD_SELF
# define PIDFD_SELF (-10000)
#endif

/* Makes the first page of a stack fault on access. A guard region (Linux >=
 * 6.13) splits no VMA, so adjacent stacks merge into one mapping; mprotect
 * splits it into two, and vm.max_map_count (65530 by default) then caps live
 * stacks near 32 K. */
static int install_guard(char *base, size_t guard)
{
	if (load_relaxed(&guard_madvise)) {
		if (madvise(base, guard, MADV_GUARD_INSTALL) == 0)
			return 0;
		if (errno != EINVAL)
			return -1;
		store_relaxed(&guard_madvise, 0);
	}
	return mprotect(base, guard, PROT_NONE);
}

/* Installs the guard page of each of the n stacks of span bytes from base:
 * one process_madvise when the kernel takes it, else one call per stack. */
static int install_guards(char *base, int n, size_t span, size_t guard)
{
	int i;

#ifdef SYS_process_madvise
	if (load_relaxed(&guard_madvise) && load_relaxed(&guard_batch)) {
		struct iovec iov[STACK_CHUNK];

		for (i = 0; i < n; i++) {
			iov[i].iov_base = base + (size_t)i * span;
			iov[i].iov_len = guard;
		}
		if (syscall(SYS_process_madvise, PIDFD_SELF, iov, (size_t)n, MADV_GUARD_INSTALL,
			    0) == (long)((size_t)n * guard))
			return 0;
		/* Refused or partial (the guards already installed stay: installing
		 * one again is harmless): fall back to one call per stack. */
		store_relaxed(&guard_batch, 0);
	}
#endif
	for (i = 0; i < n; i++)
		if (install_guard(base + (size_t)i * span, guard) != 0)
			return -1;
	return 0;
}

/* Caller holds poollock. Maps a chunk of stacks of size bytes and makes it
 * the one carved from; false if out of memory. */
static bool chunk_map(size_t size)
{
	size_t guard = wsr__page_size(), span = guard + size, len = span * STACK_CHUNK;
	char *base;

	if (nchunks == chunkscap) {
		size_t cap = chunkscap != 0 ? 2 * chunkscap : 64;
		struct chunk *nc = realloc(chunks, cap * sizeof(*nc));

		if (nc == NULL)
			return false;
		chunks = nc;
		chunkscap = cap;
	}
	base = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (base == MAP_FAILED)
		return false;
	if (install_guards(base, STACK_CHUNK, span, guard) != 0) {
		munmap(base, len);
		return false;
	}
	chunks[nchunks].base = base;
	chunks[nchunks].len = len;
	nchunks++;
	carve = base;
	carveleft = STACK_CHUNK;
	carvesize = size;
	return true;
}

/* A fresh stack of size bytes from the chunk being carved (a new chunk when
 * it is used up or holds another size), or NULL. */
static void *stack_map(size_t size)
{
	size_t guard = wsr__page_size();
	struct stack_hdr *h;
	char *base = NULL;

	wsr__lock(&poollock);
	if (nspares > 0 && spares[nspares - 1].size == size) {
		base = spares[--nspares].base;
	} else if ((carveleft > 0 && carvesize == size) || chunk_map(size)) {
		base = carve;
		carve += guard + size;
		carveleft--;
	}
	wsr__unlock(&poollock);
	if (base == NULL)
		return NULL;
	h = hdr_of(base, size);
	h->size_pages = (uint32_t)(size / guard);
	h->vgid = san_stack_register(base + guard, base + guard + size);
	return base;
}

/* Teardown: valgrind forgets the stack (chunks are unmapped after). */
static void stack_forget(void *base, size_t size)
{
	san_stack_deregister(hdr_of(base, size)->vgid);
}

/* A stack not needed now: give its pages back, keep its address range (its
 * chunk is unmapped only as a whole). */
static void stack_release(void *base, size_t size)
{
	size_t guard = wsr__page_size();

	stack_forget(base, size);
	madvise((char *)base + guard, size, MADV_DONTNEED);
}

/* Caller holds poollock. Puts a released stack on spares[] for stack_map;
 * if spares[] cannot grow, the range just stays unused until teardown. */
static void spare_put(void *base, size_t size)
{
	if (nspares == sparescap) {
		size_t cap = sparescap != 0 ? 2 * sparescap : 256;
		struct spare *ns = realloc(spares, cap * sizeof(*ns));

		if (ns == NULL)
			return;
		spares = ns;
		sparescap = cap;
	}
	spares[nspares].base = base;
	spares[nspares].size = size;
	nspares++;
}

/* The madvise runs outside poollock; only the push is under it. */
static void stack_drop(void *base, size_t size)
{
	stack_release(base, size);
	wsr__lock(&poollock);
	spare_put(base, size);
	wsr__unlock(&poollock);
}

size_t wsr__stacks_carved(void)
{
	size_t n;

	wsr__lock(&poollock);
	n = nchunks * STACK_CHUNK - (size_t)carveleft;
	wsr__unlock(&poollock);
	return n;
}

/* Empties pp's cache if it holds stacks of another size than size. */
static void cache_resize(struct wsr_p *pp, size_t size)
{
	if (pp->stackcache_size == size)
		return;
	while (pp->nstackcache > 0)
		stack_drop(pp->stackcache[--pp->nstackcache], pp->stackcache_size);
	pp->stackcache_size = size;
}

bool wsr__stackalloc(struct wsr_p *pp, struct wsr_g *gp)
{
	size_t size = cur_size();
	void *s;

	cache_resize(pp, size);
	if (pp->nstackcache == 0) {
		/* Refill half the P cache from the pool in one go. */
		wsr__lock(&poollock);
		if (poolsize == size && pool != NULL)
			while (npool > 0 && pp->nstackcache < WSR_STACKCACHE_MAX / 2)
				pp->stackcache[pp->nstackcache++] = pool[--npool];
		wsr__unlock(&poollock);
	}
	s = pp->nstackcache > 0 ? pp->stackcache[--pp->nstackcache] : stack_map(size);
	if (s == NULL)
		return false;
	gp->stack = s;
	gp->stack_size = size;
	return true;
}

void wsr__stackfree(struct wsr_p *pp, struct wsr_g *gp)
{
	void *s = gp->stack;
	size_t size = gp->stack_size;

	if (s == NULL)
		return;
	gp->stack = NULL;
	gp->stack_size = 0;
	cache_resize(pp, cur_size());
	if (size != pp->stackcache_size) {
		stack_drop(s, size);
		return;
	}
	if (pp->nstackcache < WSR_STACKCACHE_MAX) {
		pp->stackcache[pp->nstackcache++] = s;
		return;
	}
	/* Full: move half of the P cache and this stack to the pool. */
	wsr__lock(&poollock);
	if (pool == NULL && (pool = malloc(sizeof(*pool) * wsr__stackpool_max)) != NULL)
		poolcap = wsr__stackpool_max;
	if (pool == NULL) {
		wsr__unlock(&poollock);
		stack_drop(s, size);
		return;
	}
	if (poolsize != size) {
		while (npool > 0) {
			stack_release(pool[npool - 1], poolsize);
			spare_put(pool[--npool], poolsize);
		}
		poolsize = size;
	}
	while (pp->nstackcache > WSR_STACKCACHE_MAX / 2 && (size_t)npool < poolcap)
		pool[npool++] = pp->stackcache[--pp->nstackcache];
	if ((size_t)npool < poolcap) {
		pool[npool++] = s;
		s = NULL;
	}
	wsr__unlock(&poollock);
	if (s != NULL)
		stack_drop(s, size);
}

/* Teardown (procfree): the chunks go in wsr__stackpool_free. */
void wsr__stackcache_flush(struct wsr_p *pp)
{
	while (pp->nstackcache > 0)
		stack_forget(pp->stackcache[--pp->nstackcache], pp->stackcache_size);
}

void wsr__stack_boot(void)
{
	/* A new wsr_main run reads WSRDEBUG=stacksize again, unless the program
	 * chose a size through the API. */
	if (!load_relaxed(&size_from_api))
		store_relaxed(&default_size, 0);
}

static int chunk_cmp(const void *a, const void *b)
{
	const struct chunk *x = a, *y = b;

	return x->base < y->base ? -1 : x->base > y->base;
}

void wsr__stackpool_free(void)
{
	size_t i, j;

	wsr__lock(&poollock);
	while (npool > 0)
		stack_forget(pool[--npool], poolsize);
	free(pool);
	pool = NULL;
	poolcap = 0;
	/* An M left behind may still run a G on one of these stacks (as
	 * wsr__gfree_all, keep the memory then). Otherwise unmap every chunk,
	 * adjacent ones (mmap tends to place them so) in one call. */
	if (!wsr__ms_leaked() && nchunks > 0) {
		qsort(chunks, nchunks, sizeof(*chunks), chunk_cmp);
		for (i = 0; i < nchunks; i = j) {
			size_t len = chunks[i].len;

			for (j = i + 1; j < nchunks && chunks[j].base == chunks[i].base + len; j++)
				len += chunks[j].len;
			munmap(chunks[i].base, len);
		}
	}
	free(chunks);
	chunks = NULL;
	nchunks = chunkscap = 0;
	free(spares);
	spares = NULL;
	nspares = sparescap = 0;
	carve = NULL;
	carveleft = 0;
	wsr__unlock(&poollock);
}

/* ---- the overflow report ---- */

static size_t fmt_u64(char *buf, uint64_t v)
{
	char tmp[24];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	return n;
}

static void put(char *buf, size_t *len, const char *s)
{
	size_t n = strlen(s);

	memcpy(buf + *len, s, n);
	*len += n;
}

static void fault_handler(int sig, siginfo_t *si, void *uctx)
{
	struct wsr_m *mp = wsr__getm();
	struct wsr_g *gp = mp != NULL ? mp->curg : NULL;
	char *addr = si->si_addr;

	if (gp != NULL && gp->stack != NULL) {
		char *guard = gp->stack;
		size_t ps = wsr__page_size();

		/* Inside the guard page, or a big frame that jumped just below it. */
		if (addr >= guard - 16 * ps && addr < guard + ps) {
			char buf[256];
			size_t len = 0;

			put(buf, &len, "wsr: fatal error: stack overflow in goroutine ");
			len += fmt_u64(buf + len, (uint64_t)gp->goid);
			put(buf, &len, " (stack size ");
			len += fmt_u64(buf + len, (uint64_t)gp->stack_size);
			put(buf, &len, " bytes; raise it with WSRDEBUG=stacksize=N or wsr_set_stack_size)\n");
			if (write(2, buf, len) < 0) {
				/* Nothing more can be done from a signal handler. */
			}
			wsr__fatal_exit(); /* async-signal-safe: install_handler read the knob */
		}
	}
	/* Not ours: restore the previous disposition and let the fault recur. */
	sigaction(sig, sig == SIGSEGV ? &old_segv : &old_bus, NULL);
	(void)uctx;
}

static __attribute__((unused)) void install_handler(void)
{
	struct sigaction sa;

	wsr__fatal_init();
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fault_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
}

void wsr__stack_overflow_init(struct wsr_m *mp)
{
	stack_t ss;

#if WSR_SAN_ASAN
	/* ASan reports overflows itself, with its own handler and alt stack. */
	(void)mp;
	(void)ss;
	(void)handler_once;
	return;
#else
	mp->altstack = mmap(NULL, ALTSTACK_SIZE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mp->altstack == MAP_FAILED) {
		mp->altstack = NULL;
		return;
	}
	ss.ss_sp = mp->altstack;
	ss.ss_size = ALTSTACK_SIZE;
	ss.ss_flags = 0;
	sigaltstack(&ss, NULL);
	pthread_once(&handler_once, install_handler);
#endif
}

void wsr__stack_overflow_fini(struct wsr_m *mp)
{
	stack_t ss;

	if (mp->altstack == NULL)
		return;
	memset(&ss, 0, sizeof(ss));
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	munmap(mp->altstack, ALTSTACK_SIZE);
	mp->altstack = NULL;
}
