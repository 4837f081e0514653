/* SPDX-License-Identifier: GPL-2.0 */
/*
 * superpass_testdev.h: the ABI of /dev/superpass-test, the test-only lock
 * device of sp_testdev.ko (spt_dev.c, and spt_rbinder.c for SPT_RB_*). The
 * module and the guest test programs both include this one copy. It is the C
 * module's own ABI, not superpass-core's, so it is written by hand (the
 * /dev/superpass ABI is the generated superpass_uapi.h).
 */
#ifndef SUPERPASS_TESTDEV_H
#define SUPERPASS_TESTDEV_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define SPT_OP_MUTEX	0
#define SPT_OP_READ	1
#define SPT_OP_WRITE	2

struct spt_lock {
	__u32 op;		/* SPT_OP_* */
	__u32 hold_us;		/* CPU work inside the lock (SPT_LOCK), or timeout ms (SPT_HOLD) */
	__u64 wait_ns;		/* out: time from the lock call to owning the lock */
	__u64 hold_ns;		/* out: wall time the lock was held */
};

/* SPT_LOOP: @count uncontended lock/unlock pairs in the kernel (overhead test). */
struct spt_loop {
	__u32 op;
	__u32 count;
	__u64 ns;		/* out: time the loop took */
};

#define SPT_MAGIC	0xB6
#define SPT_LOCK	_IOWR(SPT_MAGIC, 1, struct spt_lock)
#define SPT_HOLD	_IOWR(SPT_MAGIC, 2, struct spt_lock)
#define SPT_RELEASE	_IO(SPT_MAGIC, 3)
#define SPT_LOOP	_IOWR(SPT_MAGIC, 4, struct spt_loop)

/* SPT_LOCK_EX flags. */
#define SPT_F_LEAD	(1U << 0)	/* once the lock is held, open an episode */
#define SPT_F_FOLLOW	(1U << 1)	/* first wait for an episode to follow */
#define SPT_F_AWAIT	(1U << 2)	/* mutex: once held, wait until another task waits for it */
#define SPT_F_NEST	(1U << 3)	/* mutex: then take the rwsem (inner_op) inside it */
#define SPT_F_NICE	(1U << 4)	/* do the work inside at nice hold_nice (>= the caller's) */
#define SPT_F_JOIN	(1U << 5)	/* first wait until an episode's lead holds its lock */
#define SPT_F_YIELD	(1U << 6)	/* yield the CPU once before the work, as if preempted */
#define SPT_F_AWAIT_JOIN (1U << 7)	/* once held, wait until await_n SPT_F_JOIN callers queue */
#define SPT_F_RETAKE	(1U << 8)	/* let go and take the lock again at once, hold_us inside again */

struct spt_lock_ex {
	__u32 op;		/* SPT_OP_* of the (outer) lock */
	__u32 flags;		/* SPT_F_* */
	__u32 hold_us;		/* CPU work with the lock held (before the inner lock) */
	__u32 inner_op;		/* SPT_F_NEST: SPT_OP_READ or SPT_OP_WRITE */
	__u32 inner_us;		/* SPT_F_NEST: CPU work with both locks held */
	__s32 hold_nice;	/* SPT_F_NICE: nice for the work inside, >= the caller's */
	__u32 timeout_ms;	/* bound on each SPT_F_FOLLOW/JOIN/AWAIT* wait, <= 10000 */
	__u32 await_n;		/* SPT_F_AWAIT_JOIN: how many joiners, <= 64 */
	__u64 wait_ns;		/* out: time from taking the lock to owning it */
	__u64 inner_wait_ns;	/* out: SPT_F_NEST: the same for the rwsem */
	__u64 hold_ns;		/* out: wall time the (outer) lock was held */
};

#define SPT_LOCK_EX	_IOWR(SPT_MAGIC, 5, struct spt_lock_ex)
/* Sleeps until the current episode is set up (see above), at most arg ms (<= 10000). */
#define SPT_SETTLE	_IO(SPT_MAGIC, 6)

/*
 * The Rust Binder stand-in (spt_rbinder.c): synchronous calls from client
 * threads to server threads, reported through Rust Binder's vendor hooks
 * as Rust Binder reports them. SPT_RB_CALL sends a call and sleeps until its
 * reply; SPT_RB_SERVE waits for a call and takes it; SPT_RB_REPLY (arg: the
 * cookie SERVE returned) replies. -ENODEV where the kernel has no Rust
 * Binder hooks or a real Rust Binder owns their layout.
 */
struct spt_rb_call {
	__u32 code;		/* passed to the server */
	__u32 timeout_ms;	/* bound on the wait for the reply, 1..10000 */
	__u64 ns;		/* out: from the call to its reply */
};

struct spt_rb_serve {
	__u32 timeout_ms;	/* bound on the wait for a call, 1..10000 */
	__u32 code;		/* out: the call's code */
	__u64 cookie;		/* out: names the call to SPT_RB_REPLY */
};

#define SPT_RB_CALL	_IOWR(SPT_MAGIC, 7, struct spt_rb_call)
#define SPT_RB_SERVE	_IOWR(SPT_MAGIC, 8, struct spt_rb_serve)
#define SPT_RB_REPLY	_IO(SPT_MAGIC, 9)

_Static_assert(sizeof(struct spt_lock) == 24, "spt_lock");
_Static_assert(sizeof(struct spt_loop) == 16, "spt_loop");
_Static_assert(sizeof(struct spt_lock_ex) == 56, "spt_lock_ex");
_Static_assert(sizeof(struct spt_rb_call) == 16, "spt_rb_call");
_Static_assert(sizeof(struct spt_rb_serve) == 16, "spt_rb_serve");

#endif /* SUPERPASS_TESTDEV_H */
