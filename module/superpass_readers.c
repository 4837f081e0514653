// SPDX-License-Identifier: GPL-2.0
/*
 * superpass_readers.c: the lock-free record of rwsem readers.
 *
 * An rwsem names only its last reader, so a critical writer's blockers must
 * be recorded as readers come and go. Sending every down_read() in the
 * system (the per-VMA lock of every page fault among them) to the engine
 * would put its lock on the hottest paths, so readers are recorded here:
 * SP_READER_TABLE_SETS sets, picked by a hash of the lock, of
 * SP_READER_TABLE_WAYS 64-bit entries, each (32-bit hash of the lock << 32 |
 * TID). A reader claims a free entry of its lock's set with one cmpxchg as it
 * enters, probing from a way picked by its TID, and clears it as it leaves:
 * without contention both find the entry at the first probe. When a tracked thread starts waiting on
 * the rwsem, the set's entries for that lock are the readers the engine
 * learns (Event::LockSeen); from then on, while the lock's lane is set,
 * its reader events also go to the engine.
 *
 * The record is best effort and bounded: a reader that finds its set full is
 * not recorded, a 32-bit hash collision can name a reader of another lock
 * (bounded by the grant budget like any other blocker), and the whole record
 * is cleared when recording stops (SuperPass disabled or nothing critical).
 */
#include <linux/atomic.h>
#include <linux/hash.h>
#include <linux/string.h>

#include "superpass.h"
#include "superpass_internal.h"

static u64 sp_readers[SP_READER_TABLE_SETS][SP_READER_TABLE_WAYS] ____cacheline_aligned;

static inline u64 *sp_reader_set(struct rw_semaphore *sem)
{
	return sp_readers[hash_ptr(sem, ilog2(SP_READER_TABLE_SETS))];
}

static inline u32 sp_reader_home(pid_t tid)
{
	return (u32)tid % SP_READER_TABLE_WAYS;
}

static inline u32 sp_reader_next(u32 w)
{
	return (w + 1) % SP_READER_TABLE_WAYS;
}

static inline u64 sp_reader_key(struct rw_semaphore *sem)
{
	return (u64)hash_ptr(sem, 32) << 32;
}

/*
 * Records that @tid entered @sem for reading. Fully ordered (cmpxchg, or the
 * barrier when the set is full): the caller's next read of sp_lock_lanes
 * comes after the entry, so a wait start that publishes the lane and then
 * reads the set sees either the entry or this reader's forwarded event.
 */
void sp_reader_enter(struct rw_semaphore *sem, pid_t tid)
{
	u64 *set = sp_reader_set(sem), e = sp_reader_key(sem) | (u32)tid;
	u32 i, w;

	/* Probing starts at the reader's home way, where its leave looks first. */
	for (i = 0, w = sp_reader_home(tid); i < SP_READER_TABLE_WAYS; i++, w = sp_reader_next(w)) {
		if (!READ_ONCE(set[w]) && !cmpxchg(&set[w], 0, e))
			return;
	}
	smp_mb();
}

/* Clears @tid's entry for @sem, if it has one; fully ordered like sp_reader_enter(). */
void sp_reader_leave(struct rw_semaphore *sem, pid_t tid)
{
	u64 *set = sp_reader_set(sem), e = sp_reader_key(sem) | (u32)tid;
	u32 i, w;

	for (i = 0, w = sp_reader_home(tid); i < SP_READER_TABLE_WAYS; i++, w = sp_reader_next(w)) {
		if (READ_ONCE(set[w]) == e && cmpxchg(&set[w], e, 0) == e)
			return;
	}
	smp_mb();
}

/* The recorded readers of @sem but @skip, into @out (SP_READER_TABLE_WAYS entries); returns how many. */
u32 sp_readers_of(struct rw_semaphore *sem, pid_t skip, s32 *out)
{
	u64 *set = sp_reader_set(sem), key = sp_reader_key(sem);
	u32 n = 0;
	int i;

	for (i = 0; i < SP_READER_TABLE_WAYS; i++) {
		u64 v = READ_ONCE(set[i]);
		s32 tid = (s32)(u32)v;

		if (v && (v & ~0xffffffffULL) == key && tid > 0 && tid != skip)
			out[n++] = tid;
	}
	return n;
}

/* Forgets every recorded reader (engine lock held: recording just stopped). */
void sp_readers_clear(void)
{
	int s, i;

	for (s = 0; s < SP_READER_TABLE_SETS; s++)
		for (i = 0; i < SP_READER_TABLE_WAYS; i++)
			WRITE_ONCE(sp_readers[s][i], 0);
}
