/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sp_uapi.h: the /dev/superpass ABI (superpass-core's abi.rs, the single
 * definition; docs/abi.md) and the test device /dev/superpass-test
 * (module/superpass_testdev.c), for the guest test programs.
 */
#ifndef SP_UAPI_H
#define SP_UAPI_H

#include <stdint.h>
#include <sys/ioctl.h>

#define SP_ABI_VERSION	1
#define SP_MAGIC	0xB5
#define SP_MAX_CRITICAL	32
#define SP_TUNABLE_SLOTS 16
#define SP_NUM_TUNABLES	10
#define SP_NUM_COUNTERS	32
#define SP_HIST_BUCKETS	(1 + 25 * 64)

struct sp_hdr { uint32_t size, version; };
struct sp_version { struct sp_hdr hdr; uint32_t max_critical, num_tunables, num_counters, hist_buckets; uint64_t active_mask; };
struct sp_entry { int32_t tid; uint32_t role; };
struct sp_critical_list { struct sp_hdr hdr; uint32_t count, reserved; uint64_t generation; struct sp_entry entries[SP_MAX_CRITICAL]; };
struct sp_critical_one { struct sp_hdr hdr; struct sp_entry entry; };
struct sp_tid { struct sp_hdr hdr; int32_t tid; uint32_t reserved; };
struct sp_enable { struct sp_hdr hdr; uint32_t enabled, reserved; };
struct sp_tunables { struct sp_hdr hdr; uint32_t count, reserved; uint64_t values[SP_TUNABLE_SLOTS]; };
struct sp_stats {
	struct sp_hdr hdr; uint32_t enabled, ncritical; uint64_t active_mask, generation, boosted, hist_min, hist_max;
	uint64_t counters[SP_NUM_COUNTERS]; uint64_t hist[SP_HIST_BUCKETS];
};

_Static_assert(sizeof(struct sp_version) == 32, "VersionInfo");
_Static_assert(sizeof(struct sp_critical_list) == 24 + 8 * SP_MAX_CRITICAL, "CriticalList");
_Static_assert(sizeof(struct sp_critical_one) == 16, "CriticalOne");
_Static_assert(sizeof(struct sp_tid) == 16, "TidMsg");
_Static_assert(sizeof(struct sp_enable) == 16, "Enable");
_Static_assert(sizeof(struct sp_tunables) == 16 + 8 * SP_TUNABLE_SLOTS, "TunablesMsg");
_Static_assert(sizeof(struct sp_stats) == 56 + 8 * SP_NUM_COUNTERS + 8 * SP_HIST_BUCKETS, "StatsMsg");

#define SP_GET_VERSION		_IOR(SP_MAGIC, 1, struct sp_version)
#define SP_SET_CRITICAL		_IOW(SP_MAGIC, 2, struct sp_critical_list)
#define SP_ADD_CRITICAL		_IOW(SP_MAGIC, 3, struct sp_critical_one)
#define SP_REMOVE_CRITICAL	_IOW(SP_MAGIC, 4, struct sp_tid)
#define SP_SET_ENABLED		_IOW(SP_MAGIC, 5, struct sp_enable)
#define SP_GET_TUNABLES		_IOWR(SP_MAGIC, 6, struct sp_tunables)
#define SP_SET_TUNABLES		_IOW(SP_MAGIC, 7, struct sp_tunables)
#define SP_GET_STATS		_IOWR(SP_MAGIC, 8, struct sp_stats)
#define SP_RESET_STATS		_IOW(SP_MAGIC, 9, struct sp_hdr)
#define SP_GET_CRITICAL		_IOWR(SP_MAGIC, 10, struct sp_critical_list)

#define SP_ROLE_UI	0
#define SP_ROLE_RENDER	1
#define SP_ROLE_OTHER	2

/* Tunable indices (tunables.rs order). */
enum { SPT_MAX_CRITICAL, SPT_MAX_DEPTH, SPT_MAX_READERS, SPT_LOCK_SLOTS, SPT_MAX_GRANTS, SPT_QUEUE_CAP,
       SPT_SLICE_NS, SPT_BUDGET_NS, SPT_THROTTLE_WINDOW_NS, SPT_THROTTLE_MAX_PCT };

/* Counter indices (stats.rs order). */
enum { SPC_CRITICAL_WAITS, SPC_CHAIN_WAITS, SPC_BLOCKERS_FOUND, SPC_GRANTS, SPC_REVOKE_RELEASED,
       SPC_REVOKE_WAITER_DONE, SPC_REVOKE_BUDGET, SPC_REVOKE_EXIT, SPC_REVOKE_DISABLED,
       SPC_REVOKE_UNREGISTERED, SPC_REVOKE_RECONFIGURED, SPC_REVOKE_CHAIN, SPC_MISSED_READERS,
       SPC_MISSED_DEPTH, SPC_MISSED_LOCKS, SPC_MISSED_GRANTS, SPC_MISSED_QUEUE, SPC_NO_BLOCKER_KNOWN,
       SPC_LOCK_EVICTIONS, SPC_PICKS, SPC_PREEMPTS, SPC_SELECT_IDLE, SPC_ROTATIONS, SPC_THROTTLES,
       SPC_FAST_TRACK_NS, SPC_BLOCKED_NS };

/* abi::mech bits. */
#define SP_MECH_PICK (1ULL << 8)
static const char *const sp_mech_names[13] = {
	"mutex_wait", "rwsem_read_wait", "rwsem_write_wait", "rwsem_readers", "rwsem_writer",
	"mutex_unlock", "enqueue", "dequeue", "pick", "preempt", "select_cpu", "tick", "task_exit",
};

/* ---- /dev/superpass-test ---- */
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

#define SP_HDR(type) ((struct sp_hdr){ sizeof(type), SP_ABI_VERSION })

#endif
