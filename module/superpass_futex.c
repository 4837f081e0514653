// SPDX-License-Identifier: GPL-2.0
/*
 * superpass_futex.c: the futex and rt_mutex probes of superpass.ko.
 *
 * PI futexes (FUTEX_LOCK_PI) sleep in an rt_mutex, which records its owner:
 * the rtmutex wait probes report them like kernel mutexes (kind pi-futex).
 * Between a release and the woken next owner's run the rt_mutex names nobody;
 * the futex word, which the release already set to the next owner's TID,
 * names it then (read through the do_futex stash below).
 *
 * A plain futex names no owner, so SuperPass sees it only when userspace says
 * who holds it: a thread about to sleep in FUTEX_WAIT(_BITSET) passes the
 * holder's TID in the otherwise unused uaddr2 (docs/abi.md, "Owner-hinted
 * futexes"). do_futex stashes the hint per CPU, futex_wait_start (same
 * syscall, same CPU unless the task was switched out in between) reports the
 * wait with it, futex_wait_end ends it. The engine decides whether the waiter
 * matters; only then is the hint checked against the task list.
 *
 * A futex wake that wakes one thread while a tracked thread stays queued on
 * the same futex reports the woken thread: it is the next holder. The wake
 * probes walk at most SP_MAX_FUTEX_SCAN entries of the hash-bucket chain,
 * under the bucket lock the caller holds, and only while a tracked thread is
 * in a hinted futex wait.
 */
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/futex.h>
#include <linux/percpu.h>
#include <linux/pid.h>
#include <linux/plist.h>
#include <linux/rcupdate.h>
#include <linux/rtmutex.h>
#include <linux/uaccess.h>
#include <trace/hooks/dtask.h>
#include <trace/hooks/futex.h>
/* struct futex_q and futex_match(): the chain entries the wake probes read. */
#include <kernel/futex/futex.h>

#include "superpass.h"
#include "superpass_internal.h"

/* Mirror of kernel/locking/rtmutex_common.h: the low bit of rt_mutex_base::owner. */
#define SP_RT_MUTEX_HAS_WAITERS	1UL

/* ---- PI futexes and rt_mutexes ---- */

static s32 sp_pi_pending_owner(void);

void sp_probe_rtmutex_wait_start(void *d, struct rt_mutex_base *lock)
{
	s32 owner;

	SP_COUNT(rtmutex_wait_start);
	if (!sp_waits_matter() || !sp_may_matter(current->pid))
		return;
	/* wait_lock is held: the owner cannot change under us. */
	owner = sp_owner_tid((unsigned long)READ_ONCE(lock->owner), SP_RT_MUTEX_HAS_WAITERS);
	/*
	 * None: a release woke the next owner, which takes the rt_mutex only when
	 * it runs. The futex word already names it.
	 */
	if (!owner)
		owner = sp_pi_pending_owner();
	sp_hook_wait_start(sp_now(), current->pid, (u64)(unsigned long)lock,
			   SP_KIND_PI_FUTEX, owner);
}

void sp_probe_rtmutex_wait_finish(void *d, struct rt_mutex_base *lock)
{
	SP_COUNT(rtmutex_wait_finish);
	if (!sp_waits_matter() || !sp_may_matter(current->pid))
		return;
	sp_hook_wait_finish(sp_now(), current->pid, (u64)(unsigned long)lock);
}

/* ---- owner-hinted futex waits ---- */

/*
 * The hint do_futex saw, for the futex_wait_start of the same syscall, or the
 * futex word of a FUTEX_LOCK_PI, for its rt_mutex wait. The task's
 * context-switch count tells a stash from this syscall apart from one left
 * behind when the task migrated between the two hooks.
 */
struct sp_futex_hint {
	struct task_struct *task;
	unsigned long switches;
	s32 owner;
	u32 __user *pi_word;
};

static DEFINE_PER_CPU(struct sp_futex_hint, sp_futex_hint);

static unsigned long sp_switches(struct task_struct *t)
{
	return READ_ONCE(t->nvcsw) + READ_ONCE(t->nivcsw);
}

static void sp_stash_hint(int cmd, u32 __user *uaddr2)
{
	struct sp_futex_hint *h;
	/* The TID travels as a pointer value: uaddr2 = (void *)(uintptr_t)tid. */
	unsigned long tid = (unsigned long)uaddr2;

	if (cmd != FUTEX_WAIT && cmd != FUTEX_WAIT_BITSET)
		return;
	if (!tid || tid > PID_MAX_LIMIT || !sp_waits_matter())
		return;
	/* Probes run with preemption disabled. */
	h = this_cpu_ptr(&sp_futex_hint);
	h->task = current;
	h->switches = sp_switches(current);
	h->owner = (s32)tid;
	h->pi_word = NULL;
}

#ifdef SP_DO_FUTEX_UADDR
void sp_probe_do_futex(void *d, u32 __user *uaddr, int cmd,
		       unsigned int *flags, u32 __user *uaddr2)
{
	struct sp_futex_hint *h;

	SP_COUNT(do_futex);
	if ((cmd != FUTEX_LOCK_PI && cmd != FUTEX_LOCK_PI2) || !sp_waits_matter() ||
	    !sp_may_matter(current->pid)) {
		sp_stash_hint(cmd, uaddr2);
		return;
	}
	h = this_cpu_ptr(&sp_futex_hint);
	h->task = current;
	h->switches = sp_switches(current);
	h->owner = 0;
	h->pi_word = uaddr;
}

/*
 * For a FUTEX_LOCK_PI of the current task about to wait in its rt_mutex: the
 * thread its futex word names (validated as a hint is), or 0. The word is
 * read without faulting: the caller holds the rt_mutex's wait_lock.
 */
static s32 sp_pi_pending_owner(void)
{
	struct sp_futex_hint *h = this_cpu_ptr(&sp_futex_hint);
	u32 __user *word = h->pi_word;
	s32 owner;
	u32 v;

	if (h->task != current || !word)
		return 0;
	h->task = NULL;
	h->pi_word = NULL;
	if (h->switches != sp_switches(current) ||
	    copy_from_user_nofault(&v, word, sizeof(v)))
		return 0;
	owner = sp_futex_hint_owner((s32)(v & FUTEX_TID_MASK));
	if (owner)
		sp_count(SPP_pi_pending_owner);
	return owner;
}
#else
void sp_probe_do_futex(void *d, int cmd, unsigned int *flags,
		       u32 __user *uaddr2)
{
	SP_COUNT(do_futex);
	sp_stash_hint(cmd, uaddr2);
}

/* The legacy hook passes no futex word: a pending PI owner stays unknown. */
static s32 sp_pi_pending_owner(void)
{
	return 0;
}
#endif

void sp_probe_futex_wait_start(void *d, unsigned int flags, u32 bitset)
{
	SP_COUNT(futex_wait_start);
	struct sp_futex_hint *h = this_cpu_ptr(&sp_futex_hint);
	s32 owner;

	/* A FUTEX_LOCK_PI's stash is its rt_mutex wait's, not a hint. */
	if (h->task != current || h->pi_word)
		return;
	h->task = NULL;
	owner = h->owner;
	if (h->switches != sp_switches(current) || !sp_waits_matter() ||
	    !sp_may_matter(current->pid))
		return;
	sp_hook_futex_wait(sp_now(), current->pid, owner);
}

void sp_probe_futex_wait_end(void *d, unsigned int flags, u32 bitset)
{
	SP_COUNT(futex_wait_end);
	if (!sp_futex_waits_matter() || !sp_may_matter(current->pid))
		return;
	sp_hook_futex_wait_end(sp_now(), current->pid);
}

/*
 * The kernel's own TID of the thread that @tid names in current's PID
 * namespace (user space writes its own gettid() as the hint), if it is a live
 * thread of current's process other than current; 0 otherwise.
 */
s32 sp_futex_hint_owner(s32 tid)
{
	struct task_struct *t;
	s32 owner;

	rcu_read_lock();
	t = sp_task_named(tid, true);
	owner = t && t != current && same_thread_group(t, current) && !(t->flags & PF_EXITING) ?
		t->pid : 0;
	rcu_read_unlock();
	return owner;
}

/* ---- futex wakes ---- */

/*
 * The waiters of the futex being woken, found by the traverse probe for the
 * wake_this probes of the same futex_wake() call: both run under hb->lock, so
 * on one CPU with nothing in between.
 */
struct sp_futex_wake {
	struct task_struct *waker;
	int n;
	s32 queued[SP_MAX_FUTEX_SCAN];
};

static DEFINE_PER_CPU(struct sp_futex_wake, sp_futex_wake);

void sp_probe_futex_wake_traverse(void *d, struct plist_head *chain,
				  int *target_nr, union futex_key key,
				  u32 bitset)
{
	SP_COUNT(futex_wake_traverse);
	struct sp_futex_wake *w = this_cpu_ptr(&sp_futex_wake);
	struct futex_q *q;
	bool tracked = false;
	int seen = 0;

	w->waker = NULL;
	w->n = 0;
	if (!sp_futex_waits_matter())
		return;
	plist_for_each_entry(q, chain, list) {
		struct task_struct *t;

		if (++seen > SP_MAX_FUTEX_SCAN || w->n == SP_MAX_FUTEX_SCAN)
			break;
		t = READ_ONCE(q->task);
		if (t && futex_match(&q->key, &key) && (q->bitset & bitset)) {
			w->queued[w->n++] = t->pid;
			tracked |= sp_may_matter(t->pid);
		}
	}
	/* Only a wake that passes over or wakes a thread the engine may track matters. */
	if (tracked)
		w->waker = current;
}

void sp_probe_futex_wake_this(void *d, int ret, int nr_wake, int target_nr,
			      struct task_struct *p)
{
	SP_COUNT(futex_wake_this);
	struct sp_futex_wake *w = this_cpu_ptr(&sp_futex_wake);

	if (w->waker != current || !p)
		return;
	sp_hook_futex_woken(sp_now(), p->pid, current->pid, w->queued, w->n);
}

void sp_probe_futex_wake_up_q_finish(void *d, int nr_wake, int target_nr)
{
	SP_COUNT(futex_wake_up_q_finish);
	struct sp_futex_wake *w = this_cpu_ptr(&sp_futex_wake);

	if (w->waker == current)
		w->waker = NULL;
}

/*
 * @node joins @head, first among the nodes of its priority (plist_add(), which
 * modules cannot call, puts it last). plist keeps the first node of each
 * priority on prio_list, in order: the walk passes at most one node per
 * priority present (MAX_PRIO at most).
 */
static void sp_plist_add_first(struct plist_node *node, struct plist_head *head)
{
	struct plist_node *first, *iter;

	if (plist_head_empty(head)) {
		list_add_tail(&node->node_list, &head->node_list);
		return;
	}
	first = iter = plist_first(head);
	do {
		if (iter->prio >= node->prio)
			break;
		iter = list_next_entry(iter, prio_list);
	} while (iter != first);
	if (iter->prio < node->prio) {
		/* Every priority comes first: a new group, last. */
		list_add_tail(&node->prio_list, &first->prio_list);
		list_add_tail(&node->node_list, &head->node_list);
	} else if (iter->prio > node->prio) {
		/* No node of its priority: a new group, before iter's. */
		list_add_tail(&node->prio_list, &iter->prio_list);
		list_add_tail(&node->node_list, &iter->node_list);
	} else {
		/* iter leads the group: node takes its place on prio_list and goes before it. */
		list_replace_init(&iter->prio_list, &node->prio_list);
		list_add_tail(&node->node_list, &iter->node_list);
	}
}

static noinline void sp_futex_queue(struct plist_node *node, struct plist_head *head,
				    bool *already_on_hb)
{
	if (!sp_hook_futex_queue(current->pid))
		return;
	sp_plist_add_first(node, head);
	*already_on_hb = true;
}

/*
 * __futex_queue(): the current task's wait joins the hash bucket's chain
 * (hb->lock held). A futex wake takes the chain's waiters of the futex in
 * order, first come, first woken among equal priorities: a critical thread
 * queued behind background threads would wait out each one's critical
 * section after the holder's. The engine decides whether this waiter goes
 * ahead of its priority's (queue_first); a probe before this one (a SoC
 * vendor's) that queued the node already has the last word.
 */
void sp_probe_alter_futex_plist_add(void *d, struct plist_node *node, struct plist_head *head,
				    bool *already_on_hb)
{
	SP_COUNT(futex_queue);
	if (!*already_on_hb && sp_may_matter(current->pid))
		sp_futex_queue(node, head, already_on_hb);
}
