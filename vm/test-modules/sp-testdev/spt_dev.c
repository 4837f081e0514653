// SPDX-License-Identifier: GPL-2.0
/*
 * spt_dev.c: /dev/superpass-test, a test-only device (its own module,
 * never part of the product) that lets guest programs create exact kernel
 * lock contention on a module-owned struct mutex and struct rw_semaphore.
 *
 * SPT_LOCK takes the mutex, or the rwsem for read or write, computes for
 * hold_us microseconds of CPU work inside (a calibrated busy loop, so the
 * holder needs the CPU to finish: exactly the inversion SuperPass fixes),
 * releases it and reports how long the caller waited to get the lock.
 *
 * SPT_HOLD takes a lock and spins until SPT_RELEASE (or a hard timeout of at
 * most 10 s): the never-releasing blocker of the bounds test.
 *
 * SPT_LOCK_EX is SPT_LOCK with the orderings the follow-the-lock tests need,
 * all inside one call so that no lock is ever held across system calls. An
 * SPT_F_LEAD caller that holds its lock opens an episode; one SPT_F_FOLLOW
 * caller per episode goes for its own lock then, and any number of
 * SPT_F_JOIN callers (a storm of readers queueing behind a writer, which can
 * wait for them). SPT_SETTLE waits until the episode's follower is in place
 * (gone for its lock, and queued if the lead holds the mutex), or, with no
 * follower, until the lead lets go: a waiter that comes after that queues
 * behind the follower, or finds the joiners holding the lock. A holder of the
 * mutex can wait until someone waits for it, and can take the rwsem nested
 * inside the mutex (always in that order, never the other).
 *
 * SPT_RB_* are synchronous calls through a stand-in for Rust Binder
 * (spt_rbinder.c), which fires Rust Binder's vendor hooks.
 */
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/uaccess.h>
#include <linux/ktime.h>
#include <linux/delay.h>
#include <linux/wait.h>
#include <linux/sched.h>
#include <linux/sched/prio.h>
#include <linux/sched/signal.h>

#include "superpass_testdev.h"
#include "spt_rbinder.h"

#define SPT_F_ALL	(SPT_F_LEAD | SPT_F_FOLLOW | SPT_F_AWAIT | SPT_F_NEST | SPT_F_NICE | \
			 SPT_F_JOIN | SPT_F_YIELD | SPT_F_AWAIT_JOIN | SPT_F_RETAKE)

static DEFINE_MUTEX(spt_mutex);
static DECLARE_RWSEM(spt_rwsem);
static atomic_t spt_release = ATOMIC_INIT(0);
/* Episode leads holding their lock; one waits for its follower; one holds the mutex. */
static atomic_t spt_leads = ATOMIC_INIT(0);
static atomic_t spt_setup = ATOMIC_INIT(0);
static atomic_t spt_lead_mutex = ATOMIC_INIT(0);
/* A follower that nests without SPT_F_AWAIT is on its way to the rwsem's wait list. */
static atomic_t spt_nest_early = ATOMIC_INIT(0);
/* SPT_F_JOIN callers gone for their lock that do not hold it yet. */
static atomic_t spt_joining = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(spt_episode_wq);
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

/* @us of CPU work in chunks of 10 us, with a wall-clock safety cap of 2 s. */
static void spt_work(u64 us)
{
	u64 deadline = ktime_get_ns() + 2ULL * NSEC_PER_SEC;

	while (us && ktime_get_ns() < deadline) {
		u64 n = min_t(u64, us, 10);

		spt_burn(n * spt_loops_per_us);
		us -= n;
	}
}

/*
 * Sleeps (so that the holder needs a wakeup, and the CPU, to notice) until a
 * task waits for spt_mutex, at most @ms: what the holder does next (e.g. wait
 * for the rwsem) then happens while that task waits.
 */
static void spt_await_waiter(u32 ms)
{
	u64 deadline = ktime_get_ns() + (u64)ms * NSEC_PER_MSEC;

	while (list_empty(&spt_mutex.wait_list) && ktime_get_ns() < deadline &&
	       !fatal_signal_pending(current))
		usleep_range(50, 100);
}

/* SPT_F_AWAIT_JOIN: polled, as a joiner that queued cannot say so. */
static void spt_await_joiners(u32 n, u32 ms)
{
	u64 deadline = ktime_get_ns() + (u64)ms * NSEC_PER_MSEC;

	while (atomic_read(&spt_joining) < n && ktime_get_ns() < deadline &&
	       !fatal_signal_pending(current))
		usleep_range(50, 100);
}

static void spt_episode_open(u32 op)
{
	atomic_inc(&spt_leads);
	atomic_set(&spt_lead_mutex, op == SPT_OP_MUTEX);
	atomic_set(&spt_setup, 1);
	wake_up_all(&spt_episode_wq);
}

static void spt_episode_close(void)
{
	atomic_dec(&spt_leads);
	/* A follower that never came must not hold up SPT_SETTLE. */
	atomic_set(&spt_setup, 0);
	atomic_set(&spt_lead_mutex, 0);
}

/*
 * SPT_F_FOLLOW waits for an episode and claims it, SPT_F_JOIN only waits for
 * one; 0, -ETIMEDOUT or -EINTR.
 */
static int spt_follow(u32 flags, u32 ms)
{
	long left;

	if (flags & SPT_F_FOLLOW)
		left = wait_event_killable_timeout(spt_episode_wq,
				atomic_cmpxchg(&spt_setup, 1, 0) == 1,
				msecs_to_jiffies(ms));
	else
		left = wait_event_killable_timeout(spt_episode_wq,
				atomic_read(&spt_leads) > 0,
				msecs_to_jiffies(ms));
	return left < 0 ? -EINTR : left ? 0 : -ETIMEDOUT;
}

static bool spt_settling(void)
{
	return atomic_read(&spt_setup) ||
	       (atomic_read(&spt_lead_mutex) && list_empty(&spt_mutex.wait_list)) ||
	       (atomic_read(&spt_nest_early) && list_empty(&spt_rwsem.wait_list));
}

/* SPT_SETTLE: polled, as nothing signals that a follower got queued. */
static long spt_settle(unsigned long ms)
{
	u64 deadline;

	if (ms > 10000)
		return -EINVAL;
	deadline = ktime_get_ns() + (u64)ms * NSEC_PER_MSEC;
	while (spt_settling() && ktime_get_ns() < deadline) {
		if (fatal_signal_pending(current))
			return -EINTR;
		usleep_range(50, 100);
	}
	return 0;
}

static int spt_lock_ex_check(const struct spt_lock_ex *l)
{
	bool mutex_only = l->flags & (SPT_F_AWAIT | SPT_F_NEST);

	if (l->op > SPT_OP_WRITE || (l->flags & ~SPT_F_ALL) || l->await_n > 64)
		return -EINVAL;
	if (mutex_only && l->op != SPT_OP_MUTEX)
		return -EINVAL;
	if ((l->flags & SPT_F_FOLLOW) && (l->flags & SPT_F_JOIN))
		return -EINVAL;
	if ((l->flags & SPT_F_NEST) &&
	    l->inner_op != SPT_OP_READ && l->inner_op != SPT_OP_WRITE)
		return -EINVAL;
	if (l->hold_us > 1000000 || l->inner_us > 1000000 || l->timeout_ms > 10000)
		return -EINVAL;
	/* A test device must not raise anyone's priority. */
	if ((l->flags & SPT_F_NICE) &&
	    (l->hold_nice < task_nice(current) || l->hold_nice > MAX_NICE))
		return -EINVAL;
	return 0;
}

/*
 * SPT_F_RETAKE: lets go of @l's lock and takes it again at once, then works
 * hold_us inside again. The release wakes a queued waiter, which retries only
 * once it runs: unless it runs first, the retake beats it (a writer takes an
 * rwsem by an optimistic spin, where no wait hook runs). Nonzero if the lock
 * is not held any more.
 */
static int spt_retake(const struct spt_lock_ex *l)
{
	int r;

	spt_drop(l->op);
	r = spt_take(l->op);
	if (r)
		return r;
	if (l->flags & SPT_F_YIELD)
		yield();
	spt_work(l->hold_us);
	return 0;
}

static long spt_lock_ex(unsigned long arg)
{
	struct spt_lock_ex l;
	u64 t0, t1, t2;
	long nice = task_nice(current);
	bool held = true;
	int r;

	if (copy_from_user(&l, (void __user *)arg, sizeof(l)))
		return -EFAULT;
	r = spt_lock_ex_check(&l);
	if (r)
		return r;
	if (l.flags & (SPT_F_FOLLOW | SPT_F_JOIN)) {
		r = spt_follow(l.flags, l.timeout_ms);
		if (r)
			return r;
		/* Settled once it sleeps on the rwsem: a waiter then finds it asleep there. */
		if ((l.flags & SPT_F_FOLLOW) && (l.flags & SPT_F_NEST) && !(l.flags & SPT_F_AWAIT))
			atomic_set(&spt_nest_early, 1);
	}
	if (l.flags & SPT_F_JOIN)
		atomic_inc(&spt_joining);
	t0 = ktime_get_ns();
	r = spt_take(l.op);
	if (l.flags & SPT_F_JOIN)
		atomic_dec(&spt_joining);
	if (r) {
		atomic_set(&spt_nest_early, 0);
		return r;
	}
	t1 = ktime_get_ns();
	l.wait_ns = t1 - t0;
	l.inner_wait_ns = 0;
	if (l.flags & SPT_F_LEAD)
		spt_episode_open(l.op);
	if (l.flags & SPT_F_AWAIT)
		spt_await_waiter(l.timeout_ms);
	if (l.flags & SPT_F_AWAIT_JOIN)
		spt_await_joiners(l.await_n, l.timeout_ms);
	if (l.flags & SPT_F_NICE)
		set_user_nice(current, l.hold_nice);
	/* The holder is off the CPU inside the lock, as a preempted one would be. */
	if (l.flags & SPT_F_YIELD)
		yield();
	spt_work(l.hold_us);
	if (l.flags & SPT_F_NEST) {
		u64 t = ktime_get_ns();

		r = spt_take(l.inner_op);
		atomic_set(&spt_nest_early, 0);
		if (!r) {
			l.inner_wait_ns = ktime_get_ns() - t;
			spt_work(l.inner_us);
			spt_drop(l.inner_op);
		}
	}
	if (!r && (l.flags & SPT_F_RETAKE)) {
		r = spt_retake(&l);
		held = !r;
	}
	if (l.flags & SPT_F_LEAD)
		spt_episode_close();
	t2 = ktime_get_ns();
	if (held)
		spt_drop(l.op);
	if (l.flags & SPT_F_NICE)
		set_user_nice(current, nice);
	if (r)
		return r;
	l.hold_ns = t2 - t1;
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
	if (cmd == SPT_LOCK_EX)
		return spt_lock_ex(arg);
	if (cmd == SPT_SETTLE)
		return spt_settle(arg);
	if (cmd == SPT_RB_CALL || cmd == SPT_RB_SERVE || cmd == SPT_RB_REPLY)
		return spt_rb_ioctl(cmd, arg);
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
		spt_work(l.hold_us);
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

static int __init spt_init(void)
{
	spt_calibrate();
	spt_rb_init();
	pr_info("sp_testdev: /dev/superpass-test (%llu loops/us)\n", spt_loops_per_us);
	return misc_register(&spt_misc);
}

static void __exit spt_exit(void)
{
	misc_deregister(&spt_misc);
	spt_rb_exit();
}

module_init(spt_init);
module_exit(spt_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("SuperPass test-only lock contention device");
