/*
 * crash-midwrite.c - a program that dies while one of its threads is in the
 * middle of writing a tracepoint (tests/tracing/test_crash.py).
 *
 * LTTng-UST writes an event in three steps: reserve a slot in the CPU's
 * sub-buffer, copy the fields in, commit. A thread killed between reserve
 * and commit leaves that sub-buffer uncommitted forever: the consumer can
 * never deliver it, so `lttng stop` either waits for it without end or
 * returns without it, and every event of that CPU's sub-buffer is gone with
 * no loss counted (seen in CI: the fidelity harness's `abort` case, 2 of 3
 * runs of one suite on a loaded machine). The runtime's answer
 * (runtime/tpfreeze.c) is that a dying process first waits for the
 * tracepoints in flight. This program makes the window as wide as it likes:
 *
 *   1. the main G spawns BURST Gs that yield once and end (g_create events
 *      the checker counts exactly), and waits for them;
 *   2. a plain thread fires wsr:schedtrace through the runtime's own
 *      wsr__tp_schedtrace, with its `runq` sequence on a page registered
 *      with userfaultfd: the copy after the reserve faults, and the thread
 *      stops there, its slot reserved;
 *   3. a second thread, told of the fault, waits STALL_MS and only then
 *      fills the page, which lets the write finish;
 *   4. meanwhile, as soon as the fault is seen, the main G ends the process
 *      as MODE says.
 * Without the wait the process is gone before step 3: the marker event
 * (idleprocs = MARKER) and the sub-buffer around it are lost.
 *
 * Usage: crash-midwrite abort|segv|term|exit|fatal|kill
 *   abort: abort(); segv: a write through NULL; term: kill(getpid(),
 *   SIGTERM); exit: exit(3); fatal: a wsr fatal error (closing a closed
 *   channel: exit status 2); kill: kill(getpid(), SIGKILL), which nothing
 *   can wait for: the event is lost, and `wsr run` must say so.
 * Exit: as MODE says; 1 on bad usage; 77 when userfaultfd is not available
 *   (it says so on stderr).
 * Concurrency: the stalled thread and the fault thread share only the page
 *   and `faulted` (an atomic).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <wsr.h>

#include "trace.h"

#define BURST 200
#define STALL_MS 300
#define MARKER 4242

static wsr_waitgroup *wg;
static int uffd = -1;
static uint32_t *page;
static long page_size;
static _Atomic int faulted;

static void burst_g(void *arg)
{
	(void)arg;
	wsr_yield();
	wsr_waitgroup_done(wg);
}

/* Fires the marker event; its runq sequence is read from the unfilled page. */
static void *stalled(void *arg)
{
	static const uint32_t ticks[2] = {1, 2};
	static const int64_t read_ts[2] = {0, 0};
	struct wsr_tp_schedtrace st = {
		.gomaxprocs = 2,
		.idleprocs = MARKER,
		.runq = page,
		.schedtick = ticks,
		.read_ts = read_ts,
	};

	(void)arg;
	wsr__tp_schedtrace(-1, -1, &st);
	return NULL;
}

/* Waits for the fault, says so, waits STALL_MS, then fills the page. */
static void *filler(void *arg)
{
	struct pollfd pfd = {.fd = uffd, .events = POLLIN};
	struct uffd_msg msg;
	static char zeros[65536]; /* a page of zeros, whatever the page size (up to 64 KiB) */

	(void)arg;
	if (poll(&pfd, 1, 10000) != 1 || read(uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT) {
		fprintf(stderr, "crash-midwrite: no page fault from the tracepoint's copy\n");
		_exit(1);
	}
	atomic_store(&faulted, 1);
	struct timespec ts = {STALL_MS / 1000, (STALL_MS % 1000) * 1000000L};
	nanosleep(&ts, NULL);
	struct uffdio_copy copy = {
		.dst = (uintptr_t)page,
		.src = (uintptr_t)zeros,
		.len = (uint64_t)page_size,
	};
	if ((size_t)page_size > sizeof(zeros) || ioctl(uffd, UFFDIO_COPY, &copy) != 0)
		fprintf(stderr, "crash-midwrite: UFFDIO_COPY: %s\n", strerror(errno));
	return NULL;
}

/* A page that faults into `uffd` until filler() fills it; 0, or -1 (no userfaultfd). */
static int setup_page(void)
{
	page_size = sysconf(_SC_PAGESIZE);
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		return -1;
	struct uffdio_api api = {.api = UFFD_API};
	if (ioctl(uffd, UFFDIO_API, &api) != 0)
		return -1;
	page = mmap(NULL, (size_t)page_size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return -1;
	struct uffdio_register reg = {
		.range = {.start = (uintptr_t)page, .len = (uint64_t)page_size},
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	return ioctl(uffd, UFFDIO_REGISTER, &reg) == 0 ? 0 : -1;
}

static int main_g(void *arg)
{
	const char *mode = arg;
	pthread_t t1, t2;

	wg = wsr_waitgroup_make();
	wsr_waitgroup_add(wg, BURST);
	for (int i = 0; i < BURST; i++)
		wsr_go(burst_g, NULL);
	wsr_waitgroup_wait(wg);
	if (pthread_create(&t2, NULL, filler, NULL) != 0 ||
	    pthread_create(&t1, NULL, stalled, NULL) != 0) {
		fprintf(stderr, "crash-midwrite: pthread_create failed\n");
		return 1;
	}
	/* The process ends with them running: detached, not leaked (TSan). */
	pthread_detach(t1);
	pthread_detach(t2);
	while (!atomic_load(&faulted))
		wsr_sleep_ns(100000);
	if (strcmp(mode, "abort") == 0) {
		abort();
	} else if (strcmp(mode, "segv") == 0) {
		volatile int *volatile nowhere = NULL;
		*nowhere = 1;
	} else if (strcmp(mode, "term") == 0) {
		kill(getpid(), SIGTERM);
		for (;;)
			wsr_sleep_ns(1000000);
	} else if (strcmp(mode, "exit") == 0) {
		exit(3);
	} else if (strcmp(mode, "kill") == 0) {
		kill(getpid(), SIGKILL);
	} else {
		wsr_chan *c = wsr_chan_make(sizeof(int), 0);
		wsr_chan_close(c);
		wsr_chan_close(c);
	}
	return 1;
}

int main(int argc, char **argv)
{
	static const char *const modes[] = {"abort", "segv", "term", "exit", "fatal", "kill"};
	int known = 0;

	for (size_t i = 0; argc == 2 && i < sizeof(modes) / sizeof(modes[0]); i++)
		known |= strcmp(argv[1], modes[i]) == 0;
	if (!known) {
		fprintf(stderr, "usage: crash-midwrite abort|segv|term|exit|fatal|kill\n");
		return 1;
	}
	if (setup_page() != 0) {
		fprintf(stderr, "crash-midwrite: userfaultfd is not available here: %s\n",
			strerror(errno));
		return 77;
	}
	return wsr_main(main_g, argv[1]);
}
