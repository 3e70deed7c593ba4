/*
 * atomic.h - C11 atomics named by their ordering (Concurrency Kit style).
 *
 * Invariants:
 *   - Every shared word that is read without a lock is _Atomic and is touched
 *     only through these wrappers, so each call site says its ordering.
 *   - Full barriers (the Dekker pairs of the parking protocol) are written as
 *     seq_cst read-modify-writes or loads/stores, never atomic_thread_fence,
 *     because ThreadSanitizer models the former and not the latter.
 * Concurrency: the wrappers are what the concurrency rules are built from.
 */
#ifndef WSR_RUNTIME_ATOMIC_H
#define WSR_RUNTIME_ATOMIC_H

#include <stdatomic.h>

#define load_relaxed(p)	    atomic_load_explicit((p), memory_order_relaxed)
#define load_acq(p)	    atomic_load_explicit((p), memory_order_acquire)
#define load_seq(p)	    atomic_load_explicit((p), memory_order_seq_cst)
#define store_relaxed(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)
#define store_rel(p, v)	    atomic_store_explicit((p), (v), memory_order_release)
#define store_seq(p, v)	    atomic_store_explicit((p), (v), memory_order_seq_cst)
#define xadd_seq(p, v)	    atomic_fetch_add_explicit((p), (v), memory_order_seq_cst)
#define xadd_relaxed(p, v)  atomic_fetch_add_explicit((p), (v), memory_order_relaxed)
#define xchg_seq(p, v)	    atomic_exchange_explicit((p), (v), memory_order_seq_cst)
#define xchg_acq_rel(p, v)  atomic_exchange_explicit((p), (v), memory_order_acq_rel)
#define xchg_acq(p, v)	    atomic_exchange_explicit((p), (v), memory_order_acquire)
#define xchg_rel(p, v)	    atomic_exchange_explicit((p), (v), memory_order_release)

/* Strong CAS; *expp is updated on failure. */
#define cas_acq(p, expp, v)                                                                        \
	atomic_compare_exchange_strong_explicit((p), (expp), (v), memory_order_acquire,            \
						memory_order_relaxed)
#define cas_rel(p, expp, v)                                                                        \
	atomic_compare_exchange_strong_explicit((p), (expp), (v), memory_order_release,            \
						memory_order_relaxed)
#define cas_acq_rel(p, expp, v)                                                                    \
	atomic_compare_exchange_strong_explicit((p), (expp), (v), memory_order_acq_rel,            \
						memory_order_acquire)
#define cas_seq(p, expp, v)                                                                        \
	atomic_compare_exchange_strong_explicit((p), (expp), (v), memory_order_seq_cst,            \
						memory_order_seq_cst)

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#endif
}

#endif /* WSR_RUNTIME_ATOMIC_H */
