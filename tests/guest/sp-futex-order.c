// SPDX-License-Identifier: GPL-2.0
/*
 * sp-futex-order: which waiter a futex wake takes first.
 *
 * Each round, a background thread (nice 0, not registered) goes to sleep on a
 * futex word, then a critical thread (registered, nice -10 as Android runs the
 * UI thread) goes to sleep on the same word. The main thread then wakes one
 * waiter, and records which one woke, before waking the other. The kernel wakes
 * a futex's waiters of equal priority in the order they queued: the background
 * thread. With SuperPass on (queue_first, android_vh_alter_futex_plist_add) the
 * critical thread is queued ahead of it and wakes first.
 *
 * Modes: off (SuperPass disabled, the critical thread still registered) and on.
 * Prints "M crit_first_<mode> <fraction>", "M rounds_<mode> <n>" and, for on,
 * "M queued_first <n>" (the engine's counter). Fails unless the critical
 * thread woke first in at most 5% of the off rounds and at least 95% of the
 * on rounds, and the counter counted every on round.
 *
 * usage: sp-futex-order [-r ROUNDS]
 */
#include "sp_harness.h"

#include <linux/futex.h>

static _Atomic uint32_t word;
/* The round each waiter may start (set by main), and which waiter woke first. */
static atomic_int go_bg, go_crit, first;
static atomic_int done;
static atomic_int crit_tid, bg_tid;
static atomic_int quit;

enum { BG = 1, CRIT = 2 };

static long futex(_Atomic uint32_t *w, int op, uint32_t val)
{
	return syscall(SYS_futex, (uint32_t *)w, op, val, NULL, NULL, 0);
}

/* Sleeps on the word until a wake; claims the round's first wake for @who. */
static void wait_once(int who)
{
	uint32_t v = atomic_load(&word);

	while (futex(&word, FUTEX_WAIT_PRIVATE, v) < 0 && errno == EINTR)
		;
	int none = 0;

	atomic_compare_exchange_strong(&first, &none, who);
	atomic_fetch_add(&done, 1);
}

static void *waiter(void *arg)
{
	int who = (int)(long)arg;
	atomic_int *go = who == CRIT ? &go_crit : &go_bg;
	int seen = 0;

	if (who == CRIT) {
		set_nice(-10);
		if (sp_critical_self(1))
			return (void *)1;
		atomic_store(&crit_tid, (int)syscall(SYS_gettid));
	} else {
		atomic_store(&bg_tid, (int)syscall(SYS_gettid));
	}
	for (;;) {
		int r;

		while ((r = atomic_load(go)) == seen && !atomic_load(&quit))
			sched_yield();
		if (atomic_load(&quit))
			break;
		seen = r;
		wait_once(who);
	}
	if (who == CRIT)
		sp_critical_self(0);
	return NULL;
}

/* Whether thread @tid sleeps (state S in /proc): here, only in its futex wait. */
static int asleep(int tid)
{
	char path[64], buf[256], *p;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = (int)fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n > 0 ? n : 0] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

/* Waits (bounded, 2 s) until thread @tid sleeps; 0 on success. */
static int until_asleep(int tid)
{
	for (int i = 0; i < 20000; i++) {
		if (asleep(tid))
			return 0;
		usleep(100);
	}
	fprintf(stderr, "sp-futex-order: thread %d never went to sleep on the futex\n", tid);
	return -1;
}

/* One mode: @rounds rounds; the fraction of them the critical thread woke first, or -1. */
static double run(int rounds)
{
	int crit_first = 0;

	for (int r = 1; r <= rounds; r++) {
		atomic_store(&first, 0);
		atomic_store(&done, 0);
		atomic_store(&go_bg, r);
		if (until_asleep(atomic_load(&bg_tid)))
			return -1;
		atomic_store(&go_crit, r);
		if (until_asleep(atomic_load(&crit_tid)))
			return -1;
		if (futex(&word, FUTEX_WAKE_PRIVATE, 1) != 1) {
			fprintf(stderr, "sp-futex-order: round %d: the wake woke no waiter\n", r);
			return -1;
		}
		while (!atomic_load(&first))
			sched_yield();
		crit_first += atomic_load(&first) == CRIT;
		while (atomic_load(&done) < 2) {
			futex(&word, FUTEX_WAKE_PRIVATE, 1);
			sched_yield();
		}
		atomic_fetch_add(&word, 1);
	}
	return (double)crit_first / rounds;
}

int main(int argc, char **argv)
{
	pthread_t bg, crit;
	struct sp_stats s;
	int rounds = 200, opt, rc = 0;
	double off, on;
	uint64_t q0;

	while ((opt = getopt(argc, argv, "r:")) != -1) {
		if (opt == 'r') {
			rounds = atoi(optarg);
		} else {
			fprintf(stderr, "usage: sp-futex-order [-r ROUNDS]\n");
			return 2;
		}
	}
	if (rounds < 20) {
		fprintf(stderr, "sp-futex-order: -r %d: at least 20 rounds\n", rounds);
		return 2;
	}
	if (sp_open_devices())
		return 1;
	pthread_create(&bg, NULL, waiter, (void *)(long)BG);
	pthread_create(&crit, NULL, waiter, (void *)(long)CRIT);
	while (!atomic_load(&bg_tid) || !atomic_load(&crit_tid))
		usleep(1000);

	if (sp_enable(0))
		return 1;
	off = run(rounds);
	if (sp_enable(1) || sp_get_stats(&s))
		return 1;
	q0 = s.counters[SP_COUNTER_QUEUED_FIRST];
	on = run(rounds);
	if (sp_get_stats(&s))
		return 1;
	atomic_store(&quit, 1);
	pthread_join(bg, NULL);
	pthread_join(crit, NULL);
	if (off < 0 || on < 0)
		return 1;

	printf("critical thread woke first: off %.3f, on %.3f of %d rounds each\n", off, on, rounds);
	printf("M crit_first_off %.3f\nM crit_first_on %.3f\nM rounds_off %d\nM rounds_on %d\n",
	       off, on, rounds, rounds);
	printf("M queued_first %llu\n",
	       (unsigned long long)(s.counters[SP_COUNTER_QUEUED_FIRST] - q0));
	if (off > 0.05) {
		printf("FAIL: with SuperPass off the critical thread woke first in %.1f%% of the rounds "
		       "(the kernel's order is first come, first woken)\n", off * 100);
		rc = 1;
	}
	if (on < 0.95) {
		printf("FAIL: with SuperPass on the critical thread woke first in only %.1f%% of the "
		       "rounds\n", on * 100);
		rc = 1;
	}
	if (s.counters[SP_COUNTER_QUEUED_FIRST] - q0 < (uint64_t)rounds) {
		printf("FAIL: queued_first counted %llu of %d critical futex waits\n",
		       (unsigned long long)(s.counters[SP_COUNTER_QUEUED_FIRST] - q0), rounds);
		rc = 1;
	}
	return rc;
}
