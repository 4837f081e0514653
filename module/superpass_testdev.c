// SPDX-License-Identifier: GPL-2.0
/*
 * superpass_testdev.c: /dev/superpass-test, a test-only device (module
 * parameter testdev=1) that lets guest programs create exact kernel lock
 * contention on a module-owned struct mutex and struct rw_semaphore.
 *
 * SPT_LOCK takes the mutex, or the rwsem for read or write, computes for
 * hold_us microseconds of CPU work inside (a calibrated busy loop, so the
 * holder needs the CPU to finish: exactly the inversion SuperPass fixes),
 * releases it and reports how long the caller waited to get the lock.
 *
 * SPT_HOLD takes a lock and spins until SPT_RELEASE (or a hard timeout of at
 * most 10 s): the never-releasing blocker of the bounds test.
 */
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/uaccess.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>

#include "superpass.h"

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

static DEFINE_MUTEX(spt_mutex);
static DECLARE_RWSEM(spt_rwsem);
static atomic_t spt_release = ATOMIC_INIT(0);
/* Busy-loop iterations per microsecond of CPU work, calibrated at load. */
static u64 spt_loops_per_us = 100;

static noinline void spt_burn(u64 loops)
{
	u64 i;

	for (i = 0; i < loops; i++)
		barrier();
}

static void spt_calibrate(void)
{
	u64 best = ~0ULL, t, loops = 200000;
	int i;

	/* Best of 5: the fastest run is the one least disturbed. */
	for (i = 0; i < 5; i++) {
		t = ktime_get_ns();
		spt_burn(loops);
		t = ktime_get_ns() - t;
		if (t && t < best)
			best = t;
	}
	spt_loops_per_us = max_t(u64, 1, loops * 1000 / max_t(u64, best, 1));
}

static int spt_take(u32 op)
{
	switch (op) {
	case SPT_OP_MUTEX:
		return mutex_lock_killable(&spt_mutex);
	case SPT_OP_READ:
		return down_read_killable(&spt_rwsem);
	case SPT_OP_WRITE:
		return down_write_killable(&spt_rwsem);
	}
	return -EINVAL;
}

static void spt_drop(u32 op)
{
	switch (op) {
	case SPT_OP_MUTEX:
		mutex_unlock(&spt_mutex);
		break;
	case SPT_OP_READ:
		up_read(&spt_rwsem);
		break;
	case SPT_OP_WRITE:
		up_write(&spt_rwsem);
		break;
	}
}

static long spt_loop(unsigned long arg)
{
	struct spt_loop l;
	u64 t0;
	u32 i;

	if (copy_from_user(&l, (void __user *)arg, sizeof(l)))
		return -EFAULT;
	if (l.op > SPT_OP_WRITE || l.count > 10000000)
		return -EINVAL;
	t0 = ktime_get_ns();
	for (i = 0; i < l.count; i++) {
		if (spt_take(l.op))
			return -EINTR;
		spt_drop(l.op);
	}
	l.ns = ktime_get_ns() - t0;
	if (copy_to_user((void __user *)arg, &l, sizeof(l)))
		return -EFAULT;
	return 0;
}

static long spt_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct spt_lock l;
	u64 t0, t1, t2, deadline;
	int r;

	if (cmd == SPT_LOOP)
		return spt_loop(arg);
	if (cmd == SPT_RELEASE) {
		atomic_set(&spt_release, 1);
		return 0;
	}
	if (cmd != SPT_LOCK && cmd != SPT_HOLD)
		return -ENOTTY;
	if (copy_from_user(&l, (void __user *)arg, sizeof(l)))
		return -EFAULT;
	if (l.op > SPT_OP_WRITE)
		return -EINVAL;
	if (cmd == SPT_LOCK && l.hold_us > 1000000)
		return -EINVAL;
	if (cmd == SPT_HOLD)
		atomic_set(&spt_release, 0);
	t0 = ktime_get_ns();
	r = spt_take(l.op);
	if (r)
		return r;
	t1 = ktime_get_ns();
	if (cmd == SPT_LOCK) {
		/* CPU work in chunks of 10 us, with a wall-clock safety cap. */
		u64 left = l.hold_us;

		deadline = t1 + 2ULL * NSEC_PER_SEC;
		while (left && ktime_get_ns() < deadline) {
			u64 n = min_t(u64, left, 10);

			spt_burn(n * spt_loops_per_us);
			left -= n;
		}
	} else {
		deadline = t1 + min_t(u64, l.hold_us ? l.hold_us : 10000, 10000) *
				NSEC_PER_MSEC;
		while (!atomic_read(&spt_release) && ktime_get_ns() < deadline &&
		       !fatal_signal_pending(current))
			spt_burn(10 * spt_loops_per_us);
	}
	t2 = ktime_get_ns();
	spt_drop(l.op);
	l.wait_ns = t1 - t0;
	l.hold_ns = t2 - t1;
	if (copy_to_user((void __user *)arg, &l, sizeof(l)))
		return -EFAULT;
	return 0;
}

static const struct file_operations spt_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = spt_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice spt_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "superpass-test",
	.fops = &spt_fops,
	.mode = 0666,
};

int sp_testdev_init(void)
{
	spt_calibrate();
	pr_info("superpass: test device /dev/superpass-test (%llu loops/us)\n",
		spt_loops_per_us);
	return misc_register(&spt_misc);
}

void sp_testdev_exit(void)
{
	misc_deregister(&spt_misc);
}
