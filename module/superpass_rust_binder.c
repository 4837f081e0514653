// SPDX-License-Identifier: GPL-2.0
/*
 * superpass_rust_binder.c: a synchronous Rust Binder call as a lock wait.
 *
 * ACK's Rust Binder (binder.impl=rust) has three vendor hooks, and none
 * where a call is queued, received or freed:
 *
 *   rust_binder_set_priority      server S takes the call t of caller T
 *   rust_binder_restore_priority  S replied to the call it serves (not named)
 *
 * So a call is followed from the moment its server takes it: T waits on
 * the call (the lock binder_txn_lock(debug_id), as for the C driver) owned
 * by S, and S's own lock waits chain from it. The reply ends S's innermost
 * call and T's wait (Event::ServerReplied). A call no pool thread is free
 * for is not followed while it is queued: no hook reports it. The objects
 * are opaque; drivers/android/binder/rust_binder.h reads them through the
 * layout the driver publishes. The probes never write them.
 *
 * Compiled in only where the kernel declares the hooks (SP_HAVE_RUST_BINDER);
 * the rust_binder mechanism says whether they attached.
 */
#include <linux/rcupdate.h>
#include <linux/sched.h>

#include "superpass.h"
#include "superpass_internal.h"

#ifdef SP_HAVE_RUST_BINDER

#include <drivers/android/binder/rust_binder.h>

/* The caller of @t, if it is a thread the engine may follow: its tid and CPU. */
static noinline void sp_rust_binder_taken(rust_binder_transaction t, struct task_struct *server)
{
	struct task_struct *caller;
	pid_t tid = 0;
	u32 cpu = 0;

	/* A call's sender thread; NULL for a call binder made itself. */
	if (!*(void **)(t + RUST_BINDER_LAYOUT.t.from_thread))
		return;
	rcu_read_lock();
	caller = rust_binder_thread_task(rust_binder_transaction_from_thread(t));
	if (caller) {
		tid = caller->pid;
		cpu = task_cpu(caller);
	}
	rcu_read_unlock();
	if (tid && sp_may_matter(tid))
		sp_hook_binder_taken(sp_now(), tid, cpu,
				     SP_BINDER_TXN_LOCK_TAG |
					     (u32)rust_binder_transaction_debug_id(t),
				     server->pid);
}

void sp_probe_rust_binder_set_priority(void *d, void *t, struct task_struct *task)
{
	SP_COUNT(rust_binder_set_priority);
	if (task && sp_waits_matter() && !(rust_binder_transaction_flags(t) & TF_ONE_WAY))
		sp_rust_binder_taken(t, task);
}

static noinline void sp_rust_binder_replied(struct task_struct *server)
{
	sp_hook_server_replied(sp_now(), server->pid);
}

/*
 * A server holding a followed call is boosted, or was until its budget ran
 * out (then it is still a holder the engine may grant again): either lane
 * may name it.
 */
void sp_probe_rust_binder_restore_priority(void *d, struct task_struct *task)
{
	SP_COUNT(rust_binder_restore_priority);
	if (task && (sp_may_be_boosted(task->pid) || sp_may_matter(task->pid)))
		sp_rust_binder_replied(task);
}

#endif /* SP_HAVE_RUST_BINDER */
