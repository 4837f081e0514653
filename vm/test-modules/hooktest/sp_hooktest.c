// SPDX-License-Identifier: GPL-2.0
/*
 * sp_hooktest: attaches a counting probe to every vendor hook of the
 * SuperPass test kernel and checks the restricted-hook rules.
 *
 * /proc/sp_hooktest       one line per hook: "<hook> <count>", then
 *                         "selftest.<check> <value>" lines.
 * /proc/sp_hooktest_lock  write "<op> <hold_us>" with op = mutex, read or
 *                         write: takes the module's mutex or rwsem, holds it
 *                         for hold_us microseconds (sleeping), releases it.
 *                         Concurrent writers create deterministic contention.
 *
 * It attaches two probes to each restricted hook (ACK's limit), so that a
 * third, from sp_hookpeer, must be refused. Once loaded the module can never
 * be unloaded: its restricted probes cannot be detached, so it pins itself
 * (the kernel pins nothing).
 */
#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/delay.h>
#include <linux/sched.h>
#include <linux/tracepoint.h>
#include <linux/mmu_context.h>
#include <trace/hooks/dtask.h>
#include <trace/hooks/futex.h>
#include <trace/hooks/rwsem.h>
#include <trace/hooks/sched.h>
/*
 * Scheduler internals (struct rq, cpu_of(), ...) from the kernel build
 * tree, as the SuperPass module uses them (Kbuild adds -I$(srctree)).
 */
#include <kernel/sched/sched.h>

enum {
	H_MUTEX_WAIT_START, H_MUTEX_WAIT_FINISH, H_MUTEX_UNLOCK_SLOWPATH,
	H_RECORD_MUTEX_STARTTIME,
	H_RWSEM_READ_WAIT_START, H_RWSEM_READ_WAIT_FINISH,
	H_RWSEM_WRITE_WAIT_START, H_RWSEM_WRITE_WAIT_FINISH,
	H_RECORD_RWSEM_STARTTIME,
	H_RECORD_READER_OWNED, H_CLEAR_READER_OWNED,
	H_RECORD_WRITER_OWNED, H_CLEAR_WRITER_OWNED,
	H_ENQUEUE, H_DEQUEUE, H_REPLACE_NEXT, H_CHECK_PREEMPT, H_SELECT_RQ,
	H_TICK_ENTRY, H_SCHEDULER_TICK, H_FLUSH_TASK, H_FREE_TASK,
	H_RTMUTEX_WAIT_START, H_RTMUTEX_WAIT_FINISH,
	H_ALTER_FUTEX_PLIST_ADD, H_DO_FUTEX, H_FUTEX_WAIT_START, H_FUTEX_WAIT_END,
	H_FUTEX_WAKE_TRAVERSE_PLIST, H_FUTEX_WAKE_THIS, H_FUTEX_WAKE_UP_Q_FINISH,
	/* The second probe on android_rvh_enqueue_task: both probes run. */
	H_ENQUEUE_SECOND,
	H_NR
};

static const char *const hook_names[H_NR] = {
	"android_vh_mutex_wait_start", "android_vh_mutex_wait_finish",
	"android_vh_mutex_unlock_slowpath",
	"android_vh_record_mutex_lock_starttime",
	"android_vh_rwsem_read_wait_start", "android_vh_rwsem_read_wait_finish",
	"android_vh_rwsem_write_wait_start", "android_vh_rwsem_write_wait_finish",
	"android_vh_record_rwsem_lock_starttime",
	"android_vh_record_rwsem_reader_owned", "android_vh_clear_rwsem_reader_owned",
	"android_vh_record_rwsem_writer_owned", "android_vh_clear_rwsem_writer_owned",
	"android_rvh_enqueue_task", "android_rvh_dequeue_task",
	"android_rvh_replace_next_task_fair",
	"android_rvh_check_preempt_wakeup_fair",
	"android_rvh_select_task_rq_fair",
	"android_rvh_tick_entry", "android_vh_scheduler_tick",
	"android_rvh_flush_task", "android_vh_free_task",
	"android_vh_rtmutex_wait_start", "android_vh_rtmutex_wait_finish",
	"android_vh_alter_futex_plist_add", "android_vh_do_futex",
	"android_vh_futex_wait_start", "android_vh_futex_wait_end",
	"android_vh_futex_wake_traverse_plist", "android_vh_futex_wake_this",
	"android_vh_futex_wake_up_q_finish",
	"android_rvh_enqueue_task.second_probe",
};

static atomic_long_t counts[H_NR];
/* Probes that saw impossible arguments (must stay 0). */
static atomic_long_t bad_args;

static DEFINE_MUTEX(sp_mutex);
static DECLARE_RWSEM(sp_rwsem);

#define HIT(h) atomic_long_inc(&counts[h])

/* --- lock hooks (normal) --- */
static void p_mutex_wait_start(void *d, struct mutex *l) { HIT(H_MUTEX_WAIT_START); }
static void p_mutex_wait_finish(void *d, struct mutex *l) { HIT(H_MUTEX_WAIT_FINISH); }
static void p_mutex_unlock_slowpath(void *d, struct mutex *l) { HIT(H_MUTEX_UNLOCK_SLOWPATH); }
static void p_record_mutex(void *d, struct mutex *l, unsigned long t) { HIT(H_RECORD_MUTEX_STARTTIME); }
static void p_rwsem_read_wait_start(void *d, struct rw_semaphore *s) { HIT(H_RWSEM_READ_WAIT_START); }
static void p_rwsem_read_wait_finish(void *d, struct rw_semaphore *s) { HIT(H_RWSEM_READ_WAIT_FINISH); }
static void p_rwsem_write_wait_start(void *d, struct rw_semaphore *s) { HIT(H_RWSEM_WRITE_WAIT_START); }
static void p_rwsem_write_wait_finish(void *d, struct rw_semaphore *s) { HIT(H_RWSEM_WRITE_WAIT_FINISH); }
static void p_record_rwsem(void *d, struct rw_semaphore *s, unsigned long t) { HIT(H_RECORD_RWSEM_STARTTIME); }
static void p_record_reader(void *d, struct rw_semaphore *s, struct list_head *w) { HIT(H_RECORD_READER_OWNED); }
static void p_clear_reader(void *d, struct rw_semaphore *s) { HIT(H_CLEAR_READER_OWNED); }
static void p_record_writer(void *d, struct rw_semaphore *s) { HIT(H_RECORD_WRITER_OWNED); }
static void p_clear_writer(void *d, struct rw_semaphore *s) { HIT(H_CLEAR_WRITER_OWNED); }

/* --- futex and rt_mutex hooks --- */
static void p_rtmutex_wait_start(void *d, struct rt_mutex_base *l)
{
	HIT(H_RTMUTEX_WAIT_START);
	if (!l)
		atomic_long_inc(&bad_args);
}
static void p_rtmutex_wait_finish(void *d, struct rt_mutex_base *l) { HIT(H_RTMUTEX_WAIT_FINISH); }
static void p_alter_futex_plist_add(void *d, struct plist_node *n, struct plist_head *h, bool *on)
{
	HIT(H_ALTER_FUTEX_PLIST_ADD);
	if (!n || !h || !on || *on)
		atomic_long_inc(&bad_args);
}
static void p_do_futex_cmd(int cmd, unsigned int *flags)
{
	HIT(H_DO_FUTEX);
	/* cmd is op & FUTEX_CMD_MASK: an operation number (FUTEX_WAIT ... FUTEX_LOCK_PI2). */
	if (!flags || cmd < 0 || cmd > 15)
		atomic_long_inc(&bad_args);
}
#ifdef CONFIG_ANDROID_VH_DO_FUTEX_UADDR
static void p_do_futex(void *d, u32 __user *uaddr, int cmd, unsigned int *flags, u32 __user *uaddr2)
{
	p_do_futex_cmd(cmd, flags);
}
#else
static void p_do_futex(void *d, int cmd, unsigned int *flags, u32 __user *uaddr2)
{
	p_do_futex_cmd(cmd, flags);
}
#endif
static void p_futex_wait_start(void *d, unsigned int flags, u32 bitset)
{
	HIT(H_FUTEX_WAIT_START);
	if (!bitset)
		atomic_long_inc(&bad_args);
}
static void p_futex_wait_end(void *d, unsigned int flags, u32 bitset) { HIT(H_FUTEX_WAIT_END); }
static void p_futex_wake_traverse(void *d, struct plist_head *chain, int *target_nr,
				  union futex_key key, u32 bitset)
{
	HIT(H_FUTEX_WAKE_TRAVERSE_PLIST);
	if (!chain || !target_nr || !bitset)
		atomic_long_inc(&bad_args);
}
static void p_futex_wake_this(void *d, int ret, int nr_wake, int target_nr, struct task_struct *p)
{
	HIT(H_FUTEX_WAKE_THIS);
	if (!p || ret < 0 || ret >= nr_wake)
		atomic_long_inc(&bad_args);
}
static void p_futex_wake_up_q_finish(void *d, int nr_wake, int target_nr) { HIT(H_FUTEX_WAKE_UP_Q_FINISH); }

/* --- scheduler hooks --- */
static void p_enqueue(void *d, struct rq *rq, struct task_struct *p, int flags)
{
	/* The task is enqueued on its own CPU's runqueue. */
	if (!rq || !p || cpu_of(rq) != task_cpu(p))
		atomic_long_inc(&bad_args);
	HIT(H_ENQUEUE);
}
static void p_dequeue(void *d, struct rq *rq, struct task_struct *p, int flags)
{
	if (!rq || !p)
		atomic_long_inc(&bad_args);
	HIT(H_DEQUEUE);
}
static void p_replace_next(void *d, struct rq *rq, struct task_struct **p,
			   struct task_struct *prev)
{
	if (!rq || !p || !prev)
		atomic_long_inc(&bad_args);
	HIT(H_REPLACE_NEXT);
}
static void p_check_preempt(void *d, struct rq *rq, struct task_struct *p,
			    bool *preempt, bool *nopreempt, int wake_flags,
			    struct sched_entity *se, struct sched_entity *pse)
{
	if (!rq || !p || !preempt || !nopreempt || !se || !pse || *preempt || *nopreempt)
		atomic_long_inc(&bad_args);
	HIT(H_CHECK_PREEMPT);
}
static void p_select_rq(void *d, struct task_struct *p, int prev_cpu, int sd_flag,
			int wake_flags, int *new_cpu)
{
	if (!p || !new_cpu || *new_cpu != -1)
		atomic_long_inc(&bad_args);
	HIT(H_SELECT_RQ);
}
static void p_tick_entry(void *d, struct rq *rq) { HIT(H_TICK_ENTRY); }
static void p_scheduler_tick(void *d, struct rq *rq) { HIT(H_SCHEDULER_TICK); }
static void p_flush_task(void *d, struct task_struct *p) { HIT(H_FLUSH_TASK); }
static void p_free_task(void *d, struct task_struct *p) { HIT(H_FREE_TASK); }

/* Second probes: ACK lets each restricted hook take two. */
static void s_enqueue(void *d, struct rq *rq, struct task_struct *p, int flags) { HIT(H_ENQUEUE_SECOND); }
static void s_dequeue(void *d, struct rq *rq, struct task_struct *p, int flags) { }
static void s_replace_next(void *d, struct rq *rq, struct task_struct **p,
			   struct task_struct *prev) { }
static void s_check_preempt(void *d, struct rq *rq, struct task_struct *p,
			    bool *preempt, bool *nopreempt, int wake_flags,
			    struct sched_entity *se, struct sched_entity *pse) { }
static void s_select_rq(void *d, struct task_struct *p, int prev_cpu, int sd_flag,
			int wake_flags, int *new_cpu) { }
static void s_tick_entry(void *d, struct rq *rq) { }
static void s_flush_task(void *d, struct task_struct *p) { }
/* A third probe, which every restricted hook must refuse. */
static void p_other_enqueue(void *d, struct rq *rq, struct task_struct *p, int flags) { }
static void p_other_tick(void *d, struct rq *rq) { }

/* Results of the checks done at load time (reported by /proc/sp_hooktest). */
static int reg_rc[H_NR];
static int st_rvh_second_attach;	/* a second probe on each restricted hook: 0 */
static int st_rvh_third_attach;		/* a third probe: -EBUSY */
static int st_kernel_pins;		/* module refcount the kernel took for our probes: 0 */
static int st_rvh_generic_attach;	/* tracepoint_probe_register: -EBUSY */
static int st_rvh_detach;		/* tracepoint_probe_unregister: refused (<0) */
static int st_rvh_restricted_flag;	/* android_rvh_is_restricted(): 1 */
static int st_vh_restricted_flag;	/* android_rvh_is_restricted() on a normal hook: 0 */
static int st_vh_detach;		/* unregister a normal hook: 0 */
static int st_vh_reattach;		/* register it again: 0 */

static void register_all(void)
{
	int refs;

	/* Normal hooks first: they can be undone. */
	reg_rc[H_MUTEX_WAIT_START] = register_trace_android_vh_mutex_wait_start(p_mutex_wait_start, NULL);
	reg_rc[H_MUTEX_WAIT_FINISH] = register_trace_android_vh_mutex_wait_finish(p_mutex_wait_finish, NULL);
	reg_rc[H_MUTEX_UNLOCK_SLOWPATH] = register_trace_android_vh_mutex_unlock_slowpath(p_mutex_unlock_slowpath, NULL);
	reg_rc[H_RECORD_MUTEX_STARTTIME] = register_trace_android_vh_record_mutex_lock_starttime(p_record_mutex, NULL);
	reg_rc[H_RWSEM_READ_WAIT_START] = register_trace_android_vh_rwsem_read_wait_start(p_rwsem_read_wait_start, NULL);
	reg_rc[H_RWSEM_READ_WAIT_FINISH] = register_trace_android_vh_rwsem_read_wait_finish(p_rwsem_read_wait_finish, NULL);
	reg_rc[H_RWSEM_WRITE_WAIT_START] = register_trace_android_vh_rwsem_write_wait_start(p_rwsem_write_wait_start, NULL);
	reg_rc[H_RWSEM_WRITE_WAIT_FINISH] = register_trace_android_vh_rwsem_write_wait_finish(p_rwsem_write_wait_finish, NULL);
	reg_rc[H_RECORD_RWSEM_STARTTIME] = register_trace_android_vh_record_rwsem_lock_starttime(p_record_rwsem, NULL);
	reg_rc[H_RECORD_READER_OWNED] = register_trace_android_vh_record_rwsem_reader_owned(p_record_reader, NULL);
	reg_rc[H_CLEAR_READER_OWNED] = register_trace_android_vh_clear_rwsem_reader_owned(p_clear_reader, NULL);
	reg_rc[H_RECORD_WRITER_OWNED] = register_trace_android_vh_record_rwsem_writer_owned(p_record_writer, NULL);
	reg_rc[H_CLEAR_WRITER_OWNED] = register_trace_android_vh_clear_rwsem_writer_owned(p_clear_writer, NULL);
	reg_rc[H_SCHEDULER_TICK] = register_trace_android_vh_scheduler_tick(p_scheduler_tick, NULL);
	reg_rc[H_FREE_TASK] = register_trace_android_vh_free_task(p_free_task, NULL);
	reg_rc[H_RTMUTEX_WAIT_START] = register_trace_android_vh_rtmutex_wait_start(p_rtmutex_wait_start, NULL);
	reg_rc[H_RTMUTEX_WAIT_FINISH] = register_trace_android_vh_rtmutex_wait_finish(p_rtmutex_wait_finish, NULL);
	reg_rc[H_ALTER_FUTEX_PLIST_ADD] = register_trace_android_vh_alter_futex_plist_add(p_alter_futex_plist_add, NULL);
	reg_rc[H_DO_FUTEX] = register_trace_android_vh_do_futex(p_do_futex, NULL);
	reg_rc[H_FUTEX_WAIT_START] = register_trace_android_vh_futex_wait_start(p_futex_wait_start, NULL);
	reg_rc[H_FUTEX_WAIT_END] = register_trace_android_vh_futex_wait_end(p_futex_wait_end, NULL);
	reg_rc[H_FUTEX_WAKE_TRAVERSE_PLIST] = register_trace_android_vh_futex_wake_traverse_plist(p_futex_wake_traverse, NULL);
	reg_rc[H_FUTEX_WAKE_THIS] = register_trace_android_vh_futex_wake_this(p_futex_wake_this, NULL);
	reg_rc[H_FUTEX_WAKE_UP_Q_FINISH] = register_trace_android_vh_futex_wake_up_q_finish(p_futex_wake_up_q_finish, NULL);

	/* Normal hooks detach and re-attach. */
	st_vh_detach = unregister_trace_android_vh_mutex_wait_start(p_mutex_wait_start, NULL);
	tracepoint_synchronize_unregister();
	st_vh_reattach = register_trace_android_vh_mutex_wait_start(p_mutex_wait_start, NULL);
	st_vh_restricted_flag = android_rvh_is_restricted(&__tracepoint_android_vh_mutex_wait_start);

	/* Restricted hooks last: from here on the module is pinned. */
	refs = module_refcount(THIS_MODULE);
	reg_rc[H_ENQUEUE] = register_trace_android_rvh_enqueue_task(p_enqueue, NULL);
	reg_rc[H_DEQUEUE] = register_trace_android_rvh_dequeue_task(p_dequeue, NULL);
	reg_rc[H_REPLACE_NEXT] = register_trace_android_rvh_replace_next_task_fair(p_replace_next, NULL);
	reg_rc[H_CHECK_PREEMPT] = register_trace_android_rvh_check_preempt_wakeup_fair(p_check_preempt, NULL);
	reg_rc[H_SELECT_RQ] = register_trace_android_rvh_select_task_rq_fair(p_select_rq, NULL);
	reg_rc[H_TICK_ENTRY] = register_trace_android_rvh_tick_entry(p_tick_entry, NULL);
	reg_rc[H_FLUSH_TASK] = register_trace_android_rvh_flush_task(p_flush_task, NULL);
	reg_rc[H_ENQUEUE_SECOND] = 0;	/* registered with the rules below */

	/* Restricted-hook rules. */
	st_rvh_restricted_flag = android_rvh_is_restricted(&__tracepoint_android_rvh_enqueue_task);
	st_rvh_second_attach = register_trace_android_rvh_enqueue_task(s_enqueue, NULL) ?:
		register_trace_android_rvh_dequeue_task(s_dequeue, NULL) ?:
		register_trace_android_rvh_replace_next_task_fair(s_replace_next, NULL) ?:
		register_trace_android_rvh_check_preempt_wakeup_fair(s_check_preempt, NULL) ?:
		register_trace_android_rvh_select_task_rq_fair(s_select_rq, NULL) ?:
		register_trace_android_rvh_tick_entry(s_tick_entry, NULL) ?:
		register_trace_android_rvh_flush_task(s_flush_task, NULL);
	st_rvh_third_attach = register_trace_android_rvh_enqueue_task(p_other_enqueue, NULL);
	/* ACK pins nothing; our probes cannot be detached, so we pin ourselves. */
	st_kernel_pins = module_refcount(THIS_MODULE) - refs;
	__module_get(THIS_MODULE);
	st_rvh_generic_attach = tracepoint_probe_register(&__tracepoint_android_rvh_tick_entry,
							  (void *)p_other_tick, NULL);
	st_rvh_detach = tracepoint_probe_unregister(&__tracepoint_android_rvh_enqueue_task,
						    (void *)p_enqueue, NULL);
}

static int counts_show(struct seq_file *m, void *v)
{
	int i;

	for (i = 0; i < H_NR; i++)
		seq_printf(m, "%s %ld\n", hook_names[i], atomic_long_read(&counts[i]));
	for (i = 0; i < H_NR; i++)
		seq_printf(m, "register.%s %d\n", hook_names[i], reg_rc[i]);
	seq_printf(m, "selftest.rvh_second_attach %d\n", st_rvh_second_attach);
	seq_printf(m, "selftest.rvh_third_attach %d\n", st_rvh_third_attach);
	seq_printf(m, "selftest.kernel_pins %d\n", st_kernel_pins);
	seq_printf(m, "selftest.rvh_generic_attach %d\n", st_rvh_generic_attach);
	seq_printf(m, "selftest.rvh_detach %d\n", st_rvh_detach);
	seq_printf(m, "selftest.rvh_is_restricted %d\n", st_rvh_restricted_flag);
	seq_printf(m, "selftest.vh_is_restricted %d\n", st_vh_restricted_flag);
	seq_printf(m, "selftest.vh_detach %d\n", st_vh_detach);
	seq_printf(m, "selftest.vh_reattach %d\n", st_vh_reattach);
	seq_printf(m, "selftest.bad_args %ld\n", atomic_long_read(&bad_args));
	return 0;
}

static ssize_t lock_write(struct file *file, const char __user *ubuf,
			  size_t len, loff_t *ppos)
{
	char buf[32], op[8];
	unsigned int us;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	if (sscanf(buf, "%7s %u", op, &us) != 2 || us > 1000000)
		return -EINVAL;

	if (!strcmp(op, "mutex")) {
		mutex_lock(&sp_mutex);
		usleep_range(us, us + 50);
		mutex_unlock(&sp_mutex);
	} else if (!strcmp(op, "read")) {
		down_read(&sp_rwsem);
		usleep_range(us, us + 50);
		up_read(&sp_rwsem);
	} else if (!strcmp(op, "write")) {
		down_write(&sp_rwsem);
		usleep_range(us, us + 50);
		up_write(&sp_rwsem);
	} else {
		return -EINVAL;
	}
	return len;
}

static const struct proc_ops lock_ops = {
	.proc_write = lock_write,
	.proc_lseek = noop_llseek,
};

static int __init sp_hooktest_init(void)
{
	if (!proc_create_single("sp_hooktest", 0444, NULL, counts_show))
		return -ENOMEM;
	if (!proc_create("sp_hooktest_lock", 0222, NULL, &lock_ops)) {
		remove_proc_entry("sp_hooktest", NULL);
		return -ENOMEM;
	}
	/* Nothing may fail after this: restricted probes stay forever. */
	register_all();
	pr_info("sp_hooktest: attached to %d hooks\n", H_NR);
	return 0;
}
module_init(sp_hooktest_init);

/* Never runs: the module pinned itself once its restricted probes were attached. */
static void __exit sp_hooktest_exit(void)
{
	remove_proc_entry("sp_hooktest_lock", NULL);
	remove_proc_entry("sp_hooktest", NULL);
}
module_exit(sp_hooktest_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("SuperPass test kernel: counts every vendor hook");
