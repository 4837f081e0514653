// SPDX-License-Identifier: GPL-2.0
/*
 * superpass_binder.c: a synchronous binder call as a lock wait.
 *
 * The call's lock is its transaction, named by its debug_id (binder numbers
 * every transaction from one counter, so a reused address is another lock:
 * superpass_core::binder_txn_lock). The caller T waits on it from the moment
 * binder queues it; its owner is the server thread S that takes it, and
 * while no pool thread is free, the pool's busy threads are its readers. The
 * engine decides whether T matters; these probes only report, and never
 * write the transaction's vendor fields (other vendor modules own them).
 *
 *   proc_transaction_finish  T's sync call queued: wait start, S or the pool
 *   transaction_received     BR_TRANSACTION: S takes the call;
 *                            BR_REPLY: T received the reply, and its wait ends
 *   restore_priority         S replied: S releases, and the reply wakes T
 *   free_oem_binder_struct   the call is freed: its wait ends, if no reply woke T
 *
 * Every transaction in the system passes each attached hook, so the module
 * attaches no hook it can do without: S's pickup is read from its receipt of
 * the call, not from android_vh_binder_set_priority, which names the same
 * thread (chosen at queue time, which proc_transaction_finish already reports,
 * or the current thread at dequeue, just before the receipt) one hook
 * dispatch per call earlier.
 *
 * The reply wakes T in S's context, and S frees the call right after: T's
 * wait ends only once T runs and receives the reply, so that the wake turn a
 * release gives a woken critical waiter lasts until then. T's wait record
 * (superpass_waits.c) names the call for that receipt, which names only the
 * reply.
 */
#include <linux/rbtree.h>
#include <linux/sched.h>
#include <trace/hooks/binder.h>

#include <drivers/android/binder_internal.h>

#include "superpass.h"
#include "superpass_internal.h"

static u64 sp_binder_lock(const struct binder_transaction *t)
{
	return SP_BINDER_TXN_LOCK_TAG | (u32)READ_ONCE(t->debug_id);
}

/* Whether tracked waits may be on @t's lock (its lane in sp_lock_lanes). */
static bool sp_binder_may_matter(const struct binder_transaction *t)
{
	return sp_lock_may_matter((const void *)(unsigned long)sp_binder_lock(t));
}

/*
 * binder.c's looper states of a pool thread (BINDER_LOOPER_STATE_REGISTERED,
 * _ENTERED): that enum is private to binder.c.
 */
#define SP_BINDER_LOOPER_POOL (0x01 | 0x02)

/*
 * The busy threads of @proc's pool: at most @max of the first
 * SP_MAX_POOL_SCAN threads of its tree that serve a call now (the call on
 * top of their stack is one they took), were handed one they have not read
 * yet (woken with work on their own todo list, still waiting for a CPU), or
 * are pool threads on their way back to the pool (not waiting for work: they
 * replied and have yet to read again). The queued call waits for one of them
 * to come back for it. Called with proc->inner_lock held, which guards the
 * tree, every thread's todo list, transaction_stack and waiting_thread_node.
 */
static u32 sp_binder_busy_pool(struct binder_proc *proc, s32 *out, u32 max)
{
	struct rb_node *n;
	u32 seen = 0, found = 0;

	for (n = rb_first(&proc->threads); n && seen < SP_MAX_POOL_SCAN && found < max;
	     n = rb_next(n), seen++) {
		struct binder_thread *th = rb_entry(n, struct binder_thread, rb_node);
		struct binder_transaction *top = th->transaction_stack;

		bool serving = top && READ_ONCE(top->to_thread) == th;
		bool handed = th->process_todo && !list_empty(&th->todo);
		bool returning = (READ_ONCE(th->looper) & SP_BINDER_LOOPER_POOL) &&
				 list_empty(&th->waiting_thread_node);

		if ((serving || handed || returning) && th->task)
			out[found++] = th->task->pid;
	}
	return found;
}

/*
 * Every binder transaction in the system passes these probes. Each tests
 * inline whether the call may matter and leaves the rest to a noinline
 * function, so that test is all an unrelated call pays.
 */

/* The engine follows the current thread's sync call, queued for @server or (NULL) the pool. */
static noinline void sp_binder_call_followed(struct binder_proc *proc,
					     struct binder_transaction *t,
					     struct task_struct *server)
{
	s32 pool[SP_READER_TABLE_WAYS];
	u32 n = 0;

	if (!server)
		n = sp_binder_busy_pool(proc, pool, SP_READER_TABLE_WAYS);
	sp_hook_rwsem_wait_start(sp_now(), current->pid, sp_binder_lock(t), SP_KIND_BINDER,
				 server ? server->pid : 0, pool, n);
}

/* The current thread's sync call was queued: a wait, followed if the thread matters. */
static noinline void sp_binder_call_queued(struct binder_proc *proc, struct binder_transaction *t,
					   struct task_struct *server)
{
	sp_wait_note((const void *)(unsigned long)sp_binder_lock(t), SP_KIND_BINDER,
		     server ? server->pid : 0);
	if (sp_may_matter(current->pid))
		sp_binder_call_followed(proc, t, server);
}

void sp_probe_binder_txn_finish(void *d, struct binder_proc *proc, struct binder_transaction *t,
				struct task_struct *server, bool pending_async, bool sync)
{
	SP_COUNT(binder_txn_finish);
	if (sync && !pending_async && sp_waits_matter())
		sp_binder_call_queued(proc, t, server);
}

static noinline void sp_binder_replied(struct binder_transaction *t, struct task_struct *task)
{
	sp_hook_binder_reply(sp_now(), sp_binder_lock(t), task->pid, READ_ONCE(t->from_tid));
}

void sp_probe_binder_restore_priority(void *d, struct binder_transaction *t,
				      struct task_struct *task)
{
	SP_COUNT(binder_restore_priority);
	/* t is NULL when a thread goes back to its pool's work: no call ends there. */
	if (t && task && sp_binder_may_matter(t))
		sp_binder_replied(t, task);
}

static noinline void sp_binder_reply_received(void)
{
	u32 kind = 0;
	u64 lock = sp_wait_current(&kind);

	if (!lock || kind != SP_KIND_BINDER)
		return;
	sp_wait_clear(current->pid);
	if (sp_may_matter(current->pid))
		sp_hook_wait_finish(sp_now(), current->pid, lock);
}

/* The current thread, a server, takes @t. */
static noinline void sp_binder_taken(struct binder_transaction *t)
{
	sp_hook_owner(sp_now(), sp_binder_lock(t), current->pid, true);
}

void sp_probe_binder_received(void *d, struct binder_transaction *t, struct binder_proc *proc,
			      struct binder_thread *thread, uint32_t cmd)
{
	SP_COUNT(binder_received);
	if (cmd == BR_REPLY)
		sp_binder_reply_received();
	else if ((cmd == BR_TRANSACTION || cmd == BR_TRANSACTION_SEC_CTX) && sp_binder_may_matter(t))
		sp_binder_taken(t);
}

static noinline void sp_binder_freed(struct binder_transaction *t)
{
	sp_hook_binder_freed(sp_now(), sp_binder_lock(t), READ_ONCE(t->from_tid));
}

void sp_probe_binder_free(void *d, struct binder_transaction *t)
{
	SP_COUNT(binder_free);
	if (sp_binder_may_matter(t))
		sp_binder_freed(t);
}
