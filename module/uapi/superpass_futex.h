/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * superpass_futex.h: owner-hinted futex waits for userspace locks.
 *
 * A thread about to sleep in FUTEX_WAIT or FUTEX_WAIT_BITSET on a contended
 * lock passes the holder's TID in the otherwise unused uaddr2 argument:
 *
 *	syscall(SYS_futex, uaddr, FUTEX_WAIT_PRIVATE, val, timeout,
 *		(void *)(uintptr_t)owner_tid, 0);
 *
 * On a kernel with superpass.ko, if the waiter is a registered critical thread
 * (or a thread SuperPass is already running on a critical thread's behalf),
 * and the TID names a live thread of the same process other than the waiter,
 * that thread is fast-tracked until the wait ends. Anything else is ignored;
 * a kernel without superpass.ko ignores uaddr2 for these ops altogether, so
 * the call is safe everywhere. The exact rules are in docs/abi.md,
 * "Owner-hinted futexes"; where ART and bionic would pass the hint is in
 * docs/futex.md.
 *
 * Below: the one-call helper, and a minimal owner-word lock built on it (the
 * lock word holds the owner's TID, as PI futexes do), used by the guest test
 * sp-futex and as a reference for integrations.
 */
#ifndef _SUPERPASS_FUTEX_H
#define _SUPERPASS_FUTEX_H

#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * Sleeps while *uaddr == val, naming owner_tid as the thread that holds the
 * lock; returns as FUTEX_WAIT does (0, or -1 with errno EAGAIN, EINTR, ...).
 */
static inline long superpass_futex_wait(uint32_t *uaddr, uint32_t val,
					pid_t owner_tid,
					const struct timespec *timeout)
{
	return syscall(SYS_futex, uaddr, FUTEX_WAIT_PRIVATE, val, timeout,
		       (void *)(uintptr_t)(owner_tid > 0 ? owner_tid : 0), 0);
}

/* The owner-word lock: 0 when free, else the owner's TID plus a waiters bit. */
#define SUPERPASS_LOCK_WAITERS	0x80000000u
#define SUPERPASS_LOCK_TID_MASK	0x3fffffffu

struct superpass_lock {
	uint32_t word;
};

static inline pid_t superpass_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Takes the lock; @self is the caller's TID (superpass_gettid(), cached). */
static inline void superpass_lock(struct superpass_lock *l, pid_t self)
{
	uint32_t w = 0;

	if (__atomic_compare_exchange_n(&l->word, &w, (uint32_t)self, 0,
					__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	for (;;) {
		if (w == 0) {
			/* Others may still sleep: keep the waiters bit when taking it here. */
			if (__atomic_compare_exchange_n(&l->word, &w,
							(uint32_t)self | SUPERPASS_LOCK_WAITERS,
							0, __ATOMIC_ACQUIRE,
							__ATOMIC_RELAXED))
				return;
			continue;
		}
		if (!(w & SUPERPASS_LOCK_WAITERS) &&
		    !__atomic_compare_exchange_n(&l->word, &w, w | SUPERPASS_LOCK_WAITERS,
						 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			continue;
		superpass_futex_wait(&l->word, w | SUPERPASS_LOCK_WAITERS,
				     (pid_t)(w & SUPERPASS_LOCK_TID_MASK), NULL);
		w = __atomic_load_n(&l->word, __ATOMIC_RELAXED);
	}
}

/* Releases the lock and wakes one sleeper, if any. */
static inline void superpass_unlock(struct superpass_lock *l)
{
	uint32_t old = __atomic_exchange_n(&l->word, 0, __ATOMIC_RELEASE);

	if (old & SUPERPASS_LOCK_WAITERS)
		syscall(SYS_futex, &l->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

#endif /* _SUPERPASS_FUTEX_H */
