/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sp_testdev.h: the test-only device /dev/superpass-test (superpass.ko with
 * testdev=1), for the guest test programs. Its ABI is the C module's own
 * (module/superpass_testdev.c), not superpass-core's; keep the two equal.
 * The /dev/superpass ABI is the generated superpass_uapi.h.
 */
#ifndef SP_TESTDEV_H
#define SP_TESTDEV_H

#include <stdint.h>
#include <sys/ioctl.h>

#define SPT_OP_MUTEX	0
#define SPT_OP_READ	1
#define SPT_OP_WRITE	2
struct spt_lock { uint32_t op, hold_us; uint64_t wait_ns, hold_ns; };
struct spt_loop { uint32_t op, count; uint64_t ns; };
#define SPT_MAGIC	0xB6
#define SPT_LOCK	_IOWR(SPT_MAGIC, 1, struct spt_lock)
#define SPT_HOLD	_IOWR(SPT_MAGIC, 2, struct spt_lock)
#define SPT_RELEASE	_IO(SPT_MAGIC, 3)
#define SPT_LOOP	_IOWR(SPT_MAGIC, 4, struct spt_loop)

/* SPT_LOCK_EX: SPT_LOCK with episodes and nesting (sp-follow). */
#define SPT_F_LEAD	(1U << 0)	/* once the lock is held, open an episode */
#define SPT_F_FOLLOW	(1U << 1)	/* first wait for an episode to follow */
#define SPT_F_AWAIT	(1U << 2)	/* mutex: once held, wait until another task waits for it */
#define SPT_F_NEST	(1U << 3)	/* mutex: then take the rwsem (inner_op) inside it */
#define SPT_F_NICE	(1U << 4)	/* do the work inside at nice hold_nice (>= the caller's) */
#define SPT_F_JOIN	(1U << 5)	/* first wait until an episode's lead holds its lock */
#define SPT_F_YIELD	(1U << 6)	/* yield the CPU once before the work, as if preempted */
#define SPT_F_AWAIT_JOIN (1U << 7)	/* once held, wait until await_n SPT_F_JOIN callers queue */
struct spt_lock_ex {
	uint32_t op, flags, hold_us, inner_op, inner_us;
	int32_t hold_nice;
	uint32_t timeout_ms, await_n;
	uint64_t wait_ns, inner_wait_ns, hold_ns;
};
_Static_assert(sizeof(struct spt_lock_ex) == 56, "spt_lock_ex");
#define SPT_LOCK_EX	_IOWR(SPT_MAGIC, 5, struct spt_lock_ex)
/* Sleeps until the current episode is set up, at most arg ms. */
#define SPT_SETTLE	_IO(SPT_MAGIC, 6)

#endif
