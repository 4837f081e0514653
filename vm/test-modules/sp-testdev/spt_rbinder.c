// SPDX-License-Identifier: GPL-2.0
/*
 * spt_rbinder.c: a stand-in for Rust Binder, for the guest tests of
 * superpass.ko's Rust Binder probes on a kernel that has no Rust Binder.
 *
 * The test kernel declares Rust Binder's vendor hooks and its object layout
 * (vm/patches/0012) but has no driver behind them. This file is that driver
 * as far as the hooks can tell: it makes transactions and threads, describes
 * them in RUST_BINDER_LAYOUT (with Arc-style headers before the thread and
 * process objects, so a reader must apply arc_offset), and fires
 *
 *   android_vh_rust_binder_set_priority(t, server)  when a server thread
 *       takes t: at selection in the caller's context when a server is
 *       idle, else at dequeue in the server's context (as C binder's hook);
 *   android_vh_rust_binder_restore_priority(server)  at the reply, after
 *       the wakeup of the caller.
 *
 * A call lives on its caller's stack while the caller sleeps for the reply;
 * servers name it by a slot cookie, and everything that reaches it, the
 * hooks included, runs under spt_rb_lock. One-way calls are not offered.
 */
#include <linux/errno.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "superpass_testdev.h"
#include "spt_rbinder.h"

#if __has_include(<trace/hooks/rust_binder.h>) && __has_include(<drivers/android/binder/rust_binder.h>)
#include <drivers/android/binder/rust_binder.h>
#include <trace/hooks/rust_binder.h>

/* Where Rust's Arc keeps its counts, before the object. */
struct spt_rb_arc_header {
	u64 strong;
	u64 weak;
};

struct spt_rb_process {
	struct task_struct *task;
};

struct spt_rb_thread {
	void *process;		/* a struct spt_rb_arc_process */
	s32 id;
	struct task_struct *task;
};

struct spt_rb_arc_process {
	struct spt_rb_arc_header hdr;
	struct spt_rb_process p;
};

struct spt_rb_arc_thread {
	struct spt_rb_arc_header hdr;
	struct spt_rb_thread th;
};

struct spt_rb_txn {
	size_t debug_id;
	u32 code;
	u32 flags;
	void *from_thread;	/* the caller's struct spt_rb_arc_thread */
	void *to_proc;		/* the server side's struct spt_rb_arc_process */
	void *target_node;	/* none */
	struct list_head queued;
	struct task_struct *server;	/* once taken */
	bool replied;
};

/* A server thread waiting in SPT_RB_SERVE for a call. */
struct spt_rb_idle {
	struct list_head link;
	struct task_struct *task;
	u64 cookie;		/* the call handed to it, once one is */
};

#define SPT_RB_SLOTS 16

static DEFINE_SPINLOCK(spt_rb_lock);
static LIST_HEAD(spt_rb_queue);
static LIST_HEAD(spt_rb_idle_servers);
/* Taken calls, by slot; a cookie is 1 + slot + (generation << 8). */
static struct spt_rb_txn *spt_rb_slot[SPT_RB_SLOTS];
static u32 spt_rb_gen[SPT_RB_SLOTS];
static DECLARE_WAIT_QUEUE_HEAD(spt_rb_wq);
static atomic_t spt_rb_debug_id = ATOMIC_INIT(0x40000000);
static struct spt_rb_arc_process spt_rb_server_proc;
static bool spt_rb_ready;

void spt_rb_init(void)
{
	struct rust_binder_layout *l = &RUST_BINDER_LAYOUT;

	/* A real Rust Binder has described its own objects: leave it alone. */
	if (l->th.task || l->t.from_thread || l->th.arc_offset)
		return;
	l->t.debug_id = offsetof(struct spt_rb_txn, debug_id);
	l->t.code = offsetof(struct spt_rb_txn, code);
	l->t.flags = offsetof(struct spt_rb_txn, flags);
	l->t.from_thread = offsetof(struct spt_rb_txn, from_thread);
	l->t.to_proc = offsetof(struct spt_rb_txn, to_proc);
	l->t.target_node = offsetof(struct spt_rb_txn, target_node);
	l->th.arc_offset = offsetof(struct spt_rb_arc_thread, th);
	l->th.process = offsetof(struct spt_rb_thread, process);
	l->th.id = offsetof(struct spt_rb_thread, id);
	l->th.task = offsetof(struct spt_rb_thread, task);
	l->p.arc_offset = offsetof(struct spt_rb_arc_process, p);
	l->p.task = offsetof(struct spt_rb_process, task);
	spt_rb_ready = true;
}

void spt_rb_exit(void)
{
	if (spt_rb_ready)
		memset(&RUST_BINDER_LAYOUT, 0, sizeof(RUST_BINDER_LAYOUT));
}

/* @server takes @t into a free slot; returns its cookie, or 0 if every slot is taken. */
static u64 spt_rb_take(struct spt_rb_txn *t, struct task_struct *server)
{
	lockdep_assert_held(&spt_rb_lock);
	for (u32 i = 0; i < SPT_RB_SLOTS; i++) {
		if (spt_rb_slot[i])
			continue;
		spt_rb_slot[i] = t;
		t->server = server;
		trace_android_vh_rust_binder_set_priority(t, server);
		return 1 + i + ((u64)++spt_rb_gen[i] << 8);
	}
	return 0;
}

/* The call a cookie names, if its caller still waits for it. */
static struct spt_rb_txn *spt_rb_of(u64 cookie)
{
	u64 i = (cookie & 0xff) - 1;

	lockdep_assert_held(&spt_rb_lock);
	if (!cookie || i >= SPT_RB_SLOTS || (u32)(cookie >> 8) != spt_rb_gen[i])
		return NULL;
	return spt_rb_slot[i];
}

static long spt_rb_call(unsigned long arg)
{
	struct spt_rb_arc_thread me = { .th = { .id = current->pid, .task = current } };
	struct spt_rb_txn t = { .from_thread = &me, .to_proc = &spt_rb_server_proc };
	struct spt_rb_idle *idle;
	struct spt_rb_call c;
	long left;
	u64 t0;

	if (copy_from_user(&c, (void __user *)arg, sizeof(c)))
		return -EFAULT;
	if (!c.timeout_ms || c.timeout_ms > 10000)
		return -EINVAL;
	t.debug_id = atomic_inc_return(&spt_rb_debug_id);
	t.code = c.code;
	INIT_LIST_HEAD(&t.queued);
	t0 = ktime_get_ns();
	spin_lock(&spt_rb_lock);
	idle = list_first_entry_or_null(&spt_rb_idle_servers, struct spt_rb_idle, link);
	if (idle)
		idle->cookie = spt_rb_take(&t, idle->task);
	if (idle && idle->cookie)
		list_del_init(&idle->link);
	else
		list_add_tail(&t.queued, &spt_rb_queue);
	spin_unlock(&spt_rb_lock);
	wake_up_all(&spt_rb_wq);
	left = wait_event_interruptible_timeout(spt_rb_wq, READ_ONCE(t.replied),
						msecs_to_jiffies(c.timeout_ms));
	spin_lock(&spt_rb_lock);
	if (!t.replied) {
		/* No server may reach the call once its caller has gone. */
		list_del_init(&t.queued);
		for (int i = 0; i < SPT_RB_SLOTS; i++)
			if (spt_rb_slot[i] == &t)
				spt_rb_slot[i] = NULL;
	}
	spin_unlock(&spt_rb_lock);
	if (!t.replied)
		return left < 0 ? left : -ETIMEDOUT;
	c.ns = ktime_get_ns() - t0;
	if (copy_to_user((void __user *)arg, &c, sizeof(c)))
		return -EFAULT;
	return 0;
}

static long spt_rb_serve(unsigned long arg)
{
	struct spt_rb_idle me = { .task = current };
	struct spt_rb_serve s;
	struct spt_rb_txn *t;
	long left = 1;

	if (copy_from_user(&s, (void __user *)arg, sizeof(s)))
		return -EFAULT;
	if (!s.timeout_ms || s.timeout_ms > 10000)
		return -EINVAL;
	INIT_LIST_HEAD(&me.link);
	spin_lock(&spt_rb_lock);
	for (;;) {
		/* Handed a call whose caller is still there: serve it. */
		t = spt_rb_of(me.cookie);
		if (t)
			break;
		t = list_first_entry_or_null(&spt_rb_queue, struct spt_rb_txn, queued);
		if (t) {
			me.cookie = spt_rb_take(t, current);
			if (!me.cookie) {
				list_del_init(&me.link);
				spin_unlock(&spt_rb_lock);
				return -EBUSY;
			}
			list_del_init(&t->queued);
			break;
		}
		if (left <= 0) {
			list_del_init(&me.link);
			spin_unlock(&spt_rb_lock);
			return left < 0 ? left : -ETIMEDOUT;
		}
		me.cookie = 0;
		if (list_empty(&me.link))
			list_add_tail(&me.link, &spt_rb_idle_servers);
		spin_unlock(&spt_rb_lock);
		left = wait_event_interruptible_timeout(spt_rb_wq, READ_ONCE(me.cookie) != 0 ||
							!list_empty_careful(&spt_rb_queue),
							msecs_to_jiffies(s.timeout_ms));
		spin_lock(&spt_rb_lock);
	}
	list_del_init(&me.link);
	s.code = t->code;
	s.cookie = me.cookie;
	spin_unlock(&spt_rb_lock);
	if (copy_to_user((void __user *)arg, &s, sizeof(s)))
		return -EFAULT;
	return 0;
}

static long spt_rb_reply(unsigned long cookie)
{
	struct spt_rb_txn *t;

	spin_lock(&spt_rb_lock);
	t = spt_rb_of(cookie);
	if (t && t->server == current) {
		spt_rb_slot[(cookie & 0xff) - 1] = NULL;
		WRITE_ONCE(t->replied, true);
	} else {
		t = NULL;
	}
	spin_unlock(&spt_rb_lock);
	wake_up_all(&spt_rb_wq);
	/* The server is done with the call even if its caller has gone. */
	trace_android_vh_rust_binder_restore_priority(current);
	return t ? 0 : -ENOENT;
}

long spt_rb_ioctl(unsigned int cmd, unsigned long arg)
{
	if (!spt_rb_ready)
		return -ENODEV;
	switch (cmd) {
	case SPT_RB_CALL:
		return spt_rb_call(arg);
	case SPT_RB_SERVE:
		return spt_rb_serve(arg);
	case SPT_RB_REPLY:
		return spt_rb_reply(arg);
	}
	return -ENOTTY;
}

#else /* no Rust Binder hooks in this kernel */

void spt_rb_init(void)
{
}

void spt_rb_exit(void)
{
}

long spt_rb_ioctl(unsigned int cmd, unsigned long arg)
{
	return -ENODEV;
}

#endif
