/*
 * wsr.h - libwsr, a Go-style G/M/P work-stealing runtime for C programs.
 *
 * A G is a coroutine with its own stack, an M an OS thread, a P the licence
 * to run Gs (WSRMAXPROCS of them). Start the runtime with wsr_main(); every
 * other call is made from inside a G (a function run by wsr_main or wsr_go).
 * Gs are scheduled cooperatively: every call below is a yield point, and long
 * loops should call wsr_preempt_point().
 *
 * Environment: WSRMAXPROCS=N (default: the CPUs this process may use),
 * WSRDEBUG=schedtrace=MS,scheddetail=1,stats=1,stacksize=BYTES,... and
 * WSRTRACEBACK=crash (see README).
 *
 * Fatal errors, as in Go: misuse that has no error return (closing a closed
 * or NULL channel, unlocking an unlocked mutex, a negative waitgroup
 * counter, wsr_go of NULL, a NULL mutex or waitgroup), a deadlock (every G
 * blocked for good) and a stack overflow print "wsr: fatal error: ..." (or
 * the deadlock report) on stderr and exit with status 2; with
 * WSRTRACEBACK=crash they abort() instead (SIGABRT, for a core dump).
 *
 * This header compiles alone as C99 -pedantic and as C++.
 */
#ifndef WSR_H
#define WSR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
# define WSR_EXPORT __attribute__((visibility("default")))
#else
# define WSR_EXPORT
#endif

/* Boots the runtime, runs main_fn(arg) as the main G, and returns its result
 * once it returns (other Gs still running then are abandoned, as in Go). */
WSR_EXPORT int wsr_main(int (*main_fn)(void *), void *arg);

/* Spawns a G running fn(arg). */
WSR_EXPORT void wsr_go(void (*fn)(void *), void *arg);

/* Lets other Gs run; the caller stays runnable. */
WSR_EXPORT void wsr_yield(void);

/* Parks the calling G for at least ns nanoseconds. */
WSR_EXPORT void wsr_sleep_ns(int64_t ns);

/* The number of Ps. */
WSR_EXPORT int wsr_gomaxprocs(void);

/* The calling G's id (from 1), or -1 outside a G. */
WSR_EXPORT int64_t wsr_self_id(void);

/* Channels, with Go's semantics. Send and receive on a NULL channel block
 * for ever (a NULL case of wsr_select is never ready); closing NULL is
 * fatal. */
typedef struct wsr_chan wsr_chan;
WSR_EXPORT wsr_chan *wsr_chan_make(size_t elem_size, size_t cap);
/* 0 when sent, -1 when the channel is closed. */
WSR_EXPORT int wsr_chan_send(wsr_chan *c, const void *elem);
/* 1 with a value, 0 when closed and drained (elem is then zeroed). */
WSR_EXPORT int wsr_chan_recv(wsr_chan *c, void *elem);
WSR_EXPORT void wsr_chan_close(wsr_chan *c);
/* Frees c (NULL: nothing). No G may wait on c or use it afterwards. A G may
 * free c as soon as its own last operation on c (or wsr_chan_close) has
 * returned, even when that operation completed a case of another G's
 * wsr_select, which then never touches c again; any other wsr_select that
 * lists c uses it until that wsr_select returns. Fatal if a G waits on c. */
WSR_EXPORT void wsr_chan_free(wsr_chan *c);

enum { WSR_SEND = 1, WSR_RECV = 2 };
typedef struct {
	wsr_chan *c;  /* NULL: the case is never ready */
	int dir;      /* WSR_SEND or WSR_RECV */
	void *elem;   /* value to send, or where to receive */
	int ok;       /* set for a fired WSR_RECV: 1 value, 0 closed */
} wsr_select_case;
/* Waits until one case can proceed and runs it (a fair random choice among
 * the ready ones); returns its index, or -1 if !block and none is ready. */
WSR_EXPORT int wsr_select(wsr_select_case *cases, int n, int block);

typedef struct wsr_waitgroup wsr_waitgroup;
WSR_EXPORT wsr_waitgroup *wsr_waitgroup_make(void);
WSR_EXPORT void wsr_waitgroup_add(wsr_waitgroup *wg, int64_t delta);
WSR_EXPORT void wsr_waitgroup_done(wsr_waitgroup *wg);
WSR_EXPORT void wsr_waitgroup_wait(wsr_waitgroup *wg);
WSR_EXPORT void wsr_waitgroup_free(wsr_waitgroup *wg);

typedef struct wsr_mutex wsr_mutex;
WSR_EXPORT wsr_mutex *wsr_mutex_make(void);
WSR_EXPORT void wsr_mutex_lock(wsr_mutex *mu);
WSR_EXPORT void wsr_mutex_unlock(wsr_mutex *mu);
WSR_EXPORT void wsr_mutex_free(wsr_mutex *mu);

/* Bracket a blocking call: while inside, the P may be handed to another M. */
WSR_EXPORT void wsr_syscall_enter(void);
WSR_EXPORT void wsr_syscall_exit(void);
/* Runs fn(arg) between wsr_syscall_enter and wsr_syscall_exit. */
WSR_EXPORT void *wsr_blocking(void *(*fn)(void *), void *arg);

/* Yields if sysmon asked the calling G to (it has run for more than 10 ms). */
WSR_EXPORT void wsr_preempt_point(void);

/* Like read(2) and friends, but park the G (not the thread) until the fd is
 * ready. -1 and errno on error. Any fd number will do, however it was used
 * before close(2) freed it: on a socket wsr_read/wsr_write pass MSG_DONTWAIT
 * and leave its flags alone; any other fd (a pipe, a tty) is made
 * non-blocking (O_NONBLOCK), checked at every call; wsr_accept makes its
 * listener, and wsr_connect its socket, non-blocking, and accepted sockets
 * are created non-blocking. */
WSR_EXPORT ssize_t wsr_read(int fd, void *buf, size_t n);
WSR_EXPORT ssize_t wsr_write(int fd, const void *buf, size_t n);
WSR_EXPORT int wsr_accept(int fd, struct sockaddr *sa, socklen_t *len);
WSR_EXPORT int wsr_connect(int fd, const struct sockaddr *sa, socklen_t len);
/* close(2), and Go's Close: the Gs parked on fd in wsr_read/wsr_write/
 * wsr_accept/wsr_connect wake and return -1 with EBADF. (A G parked on an
 * fd that plain close(2) closes stays parked, as a thread in read(2) does.)
 * An fd closed with close(2) and handed out again still works with the
 * calls above, but its first park may wait up to ~40 ms for its wakeup;
 * wsr_close avoids that. */
WSR_EXPORT int wsr_close(int fd);

/* errno of the calling thread, read through a call the compiler cannot
 * fold: a G may resume on another thread after any wsr_* call, and
 * __errno_location() is declared const, so `errno` read in the same function
 * before and after a park may name the old thread's. Read a failed wsr_*
 * call's error as wsr_errno(), right after the call. */
WSR_EXPORT int wsr_errno(void);

/* Stack size of Gs created from now on (bytes, rounded up to pages); 0 keeps
 * the current one. Returns the previous size. Default 256 KiB or
 * WSRDEBUG=stacksize=N. */
WSR_EXPORT size_t wsr_set_stack_size(size_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* WSR_H */
