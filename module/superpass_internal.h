/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What superpass.ko's C files share among themselves (not with Rust): the
 * lock-free mirrors of the engine's state, the gates the probes test before
 * reaching the engine, and the probes the registration table attaches.
 */
#ifndef SUPERPASS_INTERNAL_H
#define SUPERPASS_INTERNAL_H

#include <linux/atomic.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/jump_label.h>
#include <linux/percpu.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>

#include "superpass_consts.h"

struct rq;
struct task_struct;
struct sched_entity;

/*
 * The gates: one word of SP_GATE_* flags (superpass_consts.h, from
 * superpass-core's gates module, which says what each lets through) that the
 * engine decides and sp_publish() stores under the engine lock after every
 * engine call, so that a probe decides with one load whether its event can
 * change anything.
 */
extern atomic_t sp_gates;

static inline bool sp_gate(u32 g)
{
	return atomic_read(&sp_gates) & g;
}
/*
 * Engine::lanes(): bit (tid % 64) clear proves the task is not critical,
 * not boosted and has no tracked wait (interest), or is not boosted
 * (boosted). They keep the engine lock off the probes of unrelated tasks.
 */
extern atomic64_t sp_interest_lanes;
extern atomic64_t sp_boosted_lanes;

/*
 * Engine::lock_lanes(): bit ((address >> SP_LOCK_LANE_SHIFT) % 64) clear
 * proves no tracked wait is on the lock, so its rwsem acquire and release
 * events stay out of the engine (the reader record below still sees them).
 */
extern atomic64_t sp_lock_lanes;
extern atomic64_t sp_woken_lanes;
/* Engine::published().waiting_lanes; read by preempting picks, stored when it changes. */
extern atomic64_t sp_waiting_lanes;

static inline u32 sp_lock_lane(const void *lock)
{
	return ((unsigned long)lock >> SP_LOCK_LANE_SHIFT) % 64;
}

/* Whether tracked waits may be on @lock. */
static inline bool sp_lock_may_matter(const void *lock)
{
	return atomic64_read(&sp_lock_lanes) & (1ULL << sp_lock_lane(lock));
}

/* ---- probe call counting (superpass_probestat.c) ---- */
#define SP_PROBES(X) \
	X(mutex_wait_start) X(mutex_wait_finish) X(mutex_unlock_slowpath) \
	X(mutex_starttime) X(rwsem_read_wait_start) X(rwsem_write_wait_start) \
	X(rwsem_wait_finish) X(reader_owned) X(reader_cleared) X(writer_owned) \
	X(writer_cleared) X(rwsem_wake_finish) X(rtmutex_wait_start) X(rtmutex_wait_finish) \
	X(do_futex) X(futex_wait_start) X(futex_wait_end) X(futex_wake_traverse) \
	X(futex_wake_this) X(futex_wake_up_q_finish) X(futex_queue) X(free_task) X(enqueue) \
	X(dequeue) X(replace_next) X(preempt) X(select) X(tick) X(uclamp_eff_get) \
	X(update_misfit_status) X(can_migrate_task) X(pick_engine) X(tick_engine) \
	X(pi_pending_owner) X(move_request) X(move_done) X(move_stale) X(move_stopper) \
	X(binder_txn_finish) X(binder_restore_priority) X(binder_received) X(binder_free) \
	X(rust_binder_set_priority) X(rust_binder_restore_priority) \
	X(engine_lock) X(pcpu_wq_add) X(pcpu_record) X(pcpu_up_write)

enum sp_probe_id {
#define SP_PROBE_ID(name) SPP_##name,
	SP_PROBES(SP_PROBE_ID)
#undef SP_PROBE_ID
	SPP_NR
};

DECLARE_STATIC_KEY_FALSE(sp_counting);
DECLARE_PER_CPU(u64, sp_probe_calls[SPP_NR]);

static __always_inline int sp_count(int id)
{
	if (static_branch_unlikely(&sp_counting))
		this_cpu_inc(sp_probe_calls[id]);
	return 0;
}

/* A probe's first line: a declaration, so it may precede the probe's own. */
#define SP_COUNT(name) int sp_counted_ __maybe_unused = sp_count(SPP_##name)

void sp_probestat_init(void);
void sp_probestat_exit(void);

/* superpass:superpass_probes: the on-demand probe groups now attached (superpass_hooks.c). */
void sp_trace_probes(u32 groups);

/* How sp_kick_cpu() asked a CPU to pick again (superpass:superpass_kick). */
enum { SP_KICK_LOCAL, SP_KICK_IPI, SP_KICK_PENDING, SP_KICK_BUSY };
void sp_trace_kick(u32 cpu, u32 how);

/* ---- the lock-free rwsem reader record (superpass_readers.c) ---- */
void sp_reader_enter(struct rw_semaphore *sem, pid_t tid);
void sp_reader_leave(struct rw_semaphore *sem, pid_t tid);
u32 sp_readers_of(struct rw_semaphore *sem, pid_t skip, s32 *out);
void sp_readers_clear(void);

/* ---- the lock-free record of waits in progress (superpass_waits.c) ---- */
void sp_wait_note(const void *lock, u32 kind, s32 owner);
void sp_wait_clear(pid_t tid);
u64 sp_wait_current(u32 *kind);
s32 sp_wait_owner_now(u64 *lock);
void sp_waits_clear(void);

static inline bool sp_lane(atomic64_t *lanes, pid_t tid)
{
	return atomic64_read(lanes) & (1ULL << ((u32)tid % 64));
}

/* Whether a lock wait by @tid could matter (it may be critical, boosted or waiting). */
static inline bool sp_may_matter(pid_t tid)
{
	return sp_lane(&sp_interest_lanes, tid);
}

/*
 * Whether @tid may be a critical waiter a release woke: its sleep before it
 * takes the lock means it lost the lock again (sp_probe_dequeue).
 */
static inline bool sp_may_be_woken(pid_t tid)
{
	return sp_gate(SP_GATE_WOKEN) && sp_lane(&sp_woken_lanes, tid);
}

/*
 * Whether @tid may be a critical thread inside a tracked wait no release has
 * woken, or on its way back from one: its preemption before it sleeps matters
 * (sp_replace_next()), and so does its sleep (sp_probe_dequeue()).
 */
static inline bool sp_may_be_waiting(pid_t tid)
{
	return sp_lane(&sp_waiting_lanes, tid);
}

/* Whether @tid may be boosted. */
static inline bool sp_may_be_boosted(pid_t tid)
{
	return sp_lane(&sp_boosted_lanes, tid);
}

static inline bool sp_waits_matter(void)
{
	return sp_gate(SP_GATE_WAITS);
}

/* Reader acquisitions: the detector must learn readers before a critical writer waits. */
static inline bool sp_owners_matter(void)
{
	return sp_gate(SP_GATE_OWNERS);
}

/*
 * Mutex owners: the wait probes read them from the lock itself
 * (lock->owner), so acquire/release events only matter
 * while something is boosted (a release ends the owner's grants) or a
 * tracked thread is waiting (a new owner that took the lock from under it
 * must be boosted). This keeps the engine lock off every mutex_lock() in the
 * system while a critical thread is merely registered.
 */
static inline bool sp_ownership_matters(void)
{
	return sp_gate(SP_GATE_OWNERSHIP);
}

/* Futex wait ends and wakes: only while a tracked thread is in a hinted futex wait. */
static inline bool sp_futex_waits_matter(void)
{
	return sp_gate(SP_GATE_FUTEX_WAITS);
}

/*
 * Under rcu_read_lock(): the task that @tid names in the calling task's PID
 * namespace (@callers) or in the kernel's own, or NULL.
 */
static inline struct task_struct *sp_task_named(s32 tid, bool callers)
{
	if (tid <= 0)
		return NULL;
	return pid_task(callers ? find_vpid(tid) : find_pid_ns(tid, &init_pid_ns), PIDTYPE_PID);
}

static inline bool sp_boosting(void)
{
	return sp_gate(SP_GATE_BOOSTING);
}

/*
 * Published::work_cpus: bit @cpu clear says that CPU's picks and ticks have
 * nothing to do, so a CPU without fast-track work never takes the engine lock
 * while other CPUs have some. CPUs past 64 always ask.
 */
extern atomic64_t sp_work_cpus;

static inline bool sp_cpu_has_work(int cpu)
{
	return cpu >= 64 || (atomic64_read(&sp_work_cpus) & (1ULL << cpu));
}

/* ---- lock probes (superpass_lock.c), normal hooks ---- */
void sp_probe_mutex_wait_start(void *d, struct mutex *lock);
void sp_probe_mutex_wait_finish(void *d, struct mutex *lock);
void sp_probe_mutex_unlock_slowpath(void *d, struct mutex *lock);
void sp_probe_mutex_starttime(void *d, struct mutex *lock, unsigned long settime);
void sp_probe_rwsem_read_wait_start(void *d, struct rw_semaphore *sem);
void sp_probe_rwsem_write_wait_start(void *d, struct rw_semaphore *sem);
void sp_probe_rwsem_wait_finish(void *d, struct rw_semaphore *sem);
void sp_probe_reader_owned(void *d, struct rw_semaphore *sem, struct list_head *wlist);
void sp_probe_reader_cleared(void *d, struct rw_semaphore *sem);
void sp_probe_writer_owned(void *d, struct rw_semaphore *sem);
void sp_probe_writer_cleared(void *d, struct rw_semaphore *sem);
void sp_probe_rwsem_wake_finish(void *d, struct rw_semaphore *sem);

/* The TID of the task an owner word names (flag bits in @flags_mask). */
s32 sp_owner_tid(unsigned long word, unsigned long flags_mask);

/* ---- futex and rt_mutex probes (superpass_futex.c), normal hooks ---- */
struct rt_mutex_base;
struct plist_head;
struct plist_node;
union futex_key;
void sp_probe_rtmutex_wait_start(void *d, struct rt_mutex_base *lock);
void sp_probe_rtmutex_wait_finish(void *d, struct rt_mutex_base *lock);
#ifdef SP_DO_FUTEX_UADDR
void sp_probe_do_futex(void *d, u32 __user *uaddr, int cmd,
		       unsigned int *flags, u32 __user *uaddr2);
#else
void sp_probe_do_futex(void *d, int cmd, unsigned int *flags,
		       u32 __user *uaddr2);
#endif
void sp_probe_futex_wait_start(void *d, unsigned int flags, u32 bitset);
void sp_probe_futex_wait_end(void *d, unsigned int flags, u32 bitset);
void sp_probe_futex_wake_traverse(void *d, struct plist_head *chain,
				  int *target_nr, union futex_key key,
				  u32 bitset);
void sp_probe_futex_wake_this(void *d, int ret, int nr_wake, int target_nr,
			      struct task_struct *p);
void sp_probe_futex_wake_up_q_finish(void *d, int nr_wake, int target_nr);
void sp_probe_alter_futex_plist_add(void *d, struct plist_node *node, struct plist_head *head,
				    bool *already_on_hb);

/* ---- scheduler probes (superpass_sched.c), restricted hooks but free_task ---- */
void sp_probe_enqueue(void *d, struct rq *rq, struct task_struct *p, int flags);
void sp_probe_dequeue(void *d, struct rq *rq, struct task_struct *p, int flags);
#ifdef SP_ACK_6_6
/* android15-6.6 prototypes (module/Kbuild: SUPERPASS_ACK=6.6). */
void sp_probe_replace_next(void *d, struct rq *rq, struct task_struct **p,
			   struct sched_entity **se, bool *repick, bool simple,
			   struct task_struct *prev);
void sp_probe_preempt(void *d, struct rq *rq, struct task_struct *p,
		      bool *preempt, bool *nopreempt, int wake_flags,
		      struct sched_entity *se, struct sched_entity *pse,
		      int next_buddy_marked);
#else
void sp_probe_replace_next(void *d, struct rq *rq, struct task_struct **p,
			   struct task_struct *prev);
void sp_probe_preempt(void *d, struct rq *rq, struct task_struct *p,
		      bool *preempt, bool *nopreempt, int wake_flags,
		      struct sched_entity *se, struct sched_entity *pse);
#endif
void sp_probe_select(void *d, struct task_struct *p, int prev_cpu,
		     int sd_flag, int wake_flags, int *new_cpu);
void sp_probe_tick(void *d, struct rq *rq);
#ifdef CONFIG_UCLAMP_TASK
void sp_probe_uclamp_eff_get(void *d, struct task_struct *p, enum uclamp_id clamp_id,
			     struct uclamp_se *uc_max, struct uclamp_se *uc_eff, int *ret);
#endif
void sp_probe_update_misfit_status(void *d, struct task_struct *p, struct rq *rq,
				   bool *need_update);
void sp_probe_can_migrate_task(void *d, struct task_struct *p, int dst_cpu, int *can_migrate);
void sp_probe_free_task(void *d, struct task_struct *p);

/*
 * The current task's lock wait on @lock ended (superpass_lock.c): the engine
 * hears of it if the task may matter, and of its ownership if it @owns the
 * lock now and tracked waits are on it.
 */
void sp_report_wait_end(const void *lock, bool owns);

/* ---- percpu rw-semaphores (superpass_pcpu.c) ---- */
struct percpu_rw_semaphore;
void sp_probe_pcpu_wq_add(void *d, struct percpu_rw_semaphore *sem, bool reader);
void sp_probe_pcpu_record(void *d, struct percpu_rw_semaphore *sem, unsigned long settime);
/* The wait of @tid on a percpu semaphore's readers, as a draining writer (superpass_pcpu.c). */
bool sp_pcpu_drain_of(s32 tid, u64 *lock, u32 *kind);
/* Forgets the recorded writers and draining notes (the record probe is detached). */
void sp_pcpu_clear(void);
void sp_probe_pcpu_up_write(void *d, struct percpu_rw_semaphore *sem);

/* ---- binder calls (superpass_binder.c) ---- */
struct binder_proc;
struct binder_thread;
struct binder_transaction;
void sp_probe_binder_txn_finish(void *d, struct binder_proc *proc, struct binder_transaction *t,
				struct task_struct *server, bool pending_async, bool sync);
void sp_probe_binder_restore_priority(void *d, struct binder_transaction *t,
				      struct task_struct *task);
void sp_probe_binder_received(void *d, struct binder_transaction *t, struct binder_proc *proc,
			      struct binder_thread *thread, uint32_t cmd);
void sp_probe_binder_free(void *d, struct binder_transaction *t);

/*
 * ---- Rust Binder calls (superpass_rust_binder.c), on a kernel that
 * declares its hooks ----
 */
#if __has_include(<trace/hooks/rust_binder.h>) && __has_include(<drivers/android/binder/rust_binder.h>)
#define SP_HAVE_RUST_BINDER 1
/* Rust Binder's transaction is opaque: a void pointer (rust_binder_transaction). */
void sp_probe_rust_binder_set_priority(void *d, void *t, struct task_struct *task);
void sp_probe_rust_binder_restore_priority(void *d, struct task_struct *task);
#endif

/* ---- scheduler helpers (superpass_sched.c) ---- */
void sp_sched_init(void);
void sp_sched_exit(void);
struct rq *sp_rq(unsigned int cpu);
bool sp_task_fair(struct task_struct *p);
bool sp_task_delayed(struct task_struct *p);
void sp_moves_exit(void);

/* Draws the key of the lock ids the tracepoints print (superpass_hooks.c). */
void sp_trace_init(void);

/* ---- hook registration (superpass_attach.c) ---- */
void sp_attach_all(u64 *active_mask, u64 *busy_mask);
void sp_detach_normal(void);
/* Called with the engine lock held, after every engine call: the probe groups to keep. */
void sp_probes_want(u32 probes);
/* The probe groups attached now (SP_PROBES_*). */
u32 sp_probes_attached_mask(void);

#endif /* SUPERPASS_INTERNAL_H */
