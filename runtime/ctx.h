/*
 * ctx.h - the context switch and nothing else (ctx_x86_64.S, ctx_aarch64.S).
 *
 * Invariants:
 *   - wsr__ctx_switch(from, to) saves exactly the callee-saved state of the
 *     ABI on the current stack (x86-64 SysV: rbx, rbp, r12-r15, MXCSR and the
 *     x87 control word; AArch64: x19-x30, d8-d15, FPCR), stores the stack
 *     pointer in from->sp, and resumes `to`. Everything else is the caller's.
 *   - wsr__ctx_make(c, hi, entry, arg) prepares a fresh stack ending at hi so
 *     that switching to c calls entry(arg) with an ABI-aligned stack; entry
 *     must never return.
 * Concurrency: a context is resumed by exactly one thread at a time; the
 *   scheduler guarantees that (a G is saved before it can be queued).
 */
#ifndef WSR_RUNTIME_CTX_H
#define WSR_RUNTIME_CTX_H

#include <stdint.h>
#include <string.h>

struct wsr_ctx {
	void *sp;
};

void wsr__ctx_switch(struct wsr_ctx *from, struct wsr_ctx *to);
void wsr__ctx_trampoline(void);

/* Every switch goes through here. The empty asm after the call keeps the
 * compiler from turning the switch into a tail call: with ThreadSanitizer a
 * tail call would run the caller's __tsan_func_exit after the fiber switch
 * but before the stack switch, popping a frame off the wrong fiber's shadow
 * stack (it underflows after a few switches and TSan crashes). Always
 * inlined: out of line (as a static inline called from a function built
 * without instrumentation, which clang will not inline it into) its own
 * __tsan_func_entry runs on the fiber switched to, and its exit never does. */
static inline __attribute__((always_inline)) void
wsr__ctx_swap(struct wsr_ctx *from, struct wsr_ctx *to)
{
	wsr__ctx_switch(from, to);
	__asm__ volatile("" ::: "memory");
}

static inline void wsr__ctx_make(struct wsr_ctx *c, void *hi, void (*entry)(void *), void *arg)
{
	uintptr_t top = (uintptr_t)hi & ~(uintptr_t)15;
#if defined(__x86_64__)
	/* From sp up: [mxcsr|fpucw] r15 r14 r13 r12 rbx rbp ret; trampoline then
	 * starts with rsp 16-aligned and calls r13(r12). */
	uint64_t *sp = (uint64_t *)(top - 80);

	memset(sp, 0, 80);
	sp[0] = 0x1F80u | ((uint64_t)0x037Fu << 32);
	sp[3] = (uint64_t)(uintptr_t)entry; /* r13 */
	sp[4] = (uint64_t)(uintptr_t)arg;   /* r12 */
	sp[7] = (uint64_t)(uintptr_t)wsr__ctx_trampoline;
	c->sp = sp;
#elif defined(__aarch64__)
	/* 176-byte frame: x19..x30 at 0..88, d8..d15 at 96..152, fpcr at 160. */
	uint64_t *sp = (uint64_t *)(top - 176);

	memset(sp, 0, 176);
	sp[0] = (uint64_t)(uintptr_t)arg;			  /* x19 */
	sp[1] = (uint64_t)(uintptr_t)entry;			  /* x20 */
	sp[11] = (uint64_t)(uintptr_t)wsr__ctx_trampoline;	  /* x30 */
	c->sp = sp;
#else
# error "wsr: no context switch for this architecture (x86-64 and aarch64 are supported)"
#endif
}

#endif /* WSR_RUNTIME_CTX_H */
