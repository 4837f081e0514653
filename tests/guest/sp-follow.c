// SPDX-License-Identifier: GPL-2.0
/*
 * sp-follow: inversions where the task that blocks the critical thread is not
 * (only) the lock owner it saw when it started waiting, on real kernel locks
 * (/dev/superpass-test's mutex and rwsem). SuperPass has to follow the lock.
 *
 * usage: sp-follow -s storm|handoff|chain|chain-asleep [-m off,on,off_n10,on_n10] [-d SECS] [-H HOGS]
 *                  [-p PERIOD_US] [-e EPISODE_MS] [-r READERS] [-a A_US]
 *                  [-b B_US] [-i INNER_US] [-k] [-t TUNABLE=VALUE]...
 *                  [-R MIN_REDUCTION_PCT] [-N MIN_WAITS] [-X MAX_WAIT_MS]
 *
 * HOGS CPU-bound threads run at nice 0; the critical thread takes a lock every
 * PERIOD_US (10 us inside) and records how long each acquisition waited
 * (measured in the kernel by the test device). The blockers work at nice 19
 * inside their locks, in episodes about EPISODE_MS apart:
 *
 *   storm    Every EPISODE_MS a gate thread (nice 0) takes the rwsem for
 *            writing until READERS readers have queued behind it for reading;
 *            when it lets go they all get the lock at once, each with A_US of
 *            work inside, and the critical thread takes it for writing. More
 *            readers than max_readers (4): the tracked ones must be refilled
 *            from the recorded ones as they leave.
 *   handoff  A takes the mutex and, once B (woken when A holds it) has
 *            queued behind it, works A_US inside; B then holds it for B_US.
 *            The owner when the critical thread starts waiting (A) is not the
 *            one it waits for longest (B): B must be granted as the woken
 *            waiter or as the new owner.
 *   chain    T2 takes the rwsem for writing with B_US of work inside; T1,
 *            woken when T2 holds it, takes the mutex, waits until the
 *            critical thread waits for it, works A_US, then takes the rwsem
 *            for writing (INNER_US inside): critical -> T1 -> T2. T1's rwsem
 *            wait starts after the critical thread's wait, while T1 is boosted.
 *            With -k, T2 takes the rwsem again the moment it lets go, in the
 *            kernel (SPT_F_RETAKE), and works B_US inside again: its release
 *            wakes T1, but the retake (a writer's optimistic spin, which no
 *            wait probe reports) beats T1's retry, and T1, a link of the
 *            chain, sleeps again.
 *   chain-asleep  The chain, but T1 takes the rwsem right after the mutex
 *            (give -a 0) and the critical thread waits for the mutex only
 *            once T1 sleeps on the rwsem: the engine learns T1's wait when
 *            it boosts T1, from the module's record of waits in progress.
 *
 * Every blocker waits for its episode at nice 0, so that it is in place when
 * the episode needs it, and does its work inside the lock at nice 19
 * (SPT_F_NICE): it is that work the hogs starve, in every mode alike. The
 * long blockers (storm readers, B, T2) give up the CPU once they hold the
 * lock (SPT_F_YIELD), as if preempted there, so that every episode makes them
 * wait for the CPU inside the lock, not only the unlucky ones. The
 * critical thread holds off its next attempt while an episode is being set
 * up (SPT_SETTLE, a few ms once per episode), so that its wait queues behind
 * B, finds T1 holding the mutex or the storm's readers holding the rwsem:
 * every episode has the shape it claims.
 *
 * -t sets a tunable (e.g. max_depth=1) for the run, as a control. With -X,
 * it fails if a wait with SuperPass on lasts over MAX_WAIT_MS, or if no woken
 * waiter lost its retry in the run (the engine's resumed_waits): the check of
 * a lock that changes hands where no probe sees it (tests/guest/suites). Before
 * anything else it checks that the test device refuses bad SPT_LOCK_EX and
 * SPT_SETTLE requests.
 *
 * Each mode runs for SECS: off (SuperPass disabled) and on (enabled, the
 * critical thread registered as UI); off_nN and on_nN run the critical
 * thread at nice -N (as Android runs the UI thread at -10), the plain modes
 * at nice 0. Per mode it prints waits, p50/p99/p99.9/max wait, waits over 1,
 * 10, 16 (a 60 Hz frame) and 100 ms, the episodes, how long the long blocker
 * (reader, B, T2) held its lock and the SuperPass counters, as a table and as
 * "M key value" metric lines. With -R X it fails unless on cuts the p99.9
 * wait by at least X% against off of the same variant; it fails if a mode
 * has fewer than MIN_WAITS waits (default 1000: a p99.9 needs them). With
 * SuperPass on, each wait over 16 ms is captured from ftrace for the host to
 * itemize (sp_harness.h: the capture of long waits).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "superpass_uapi.h"
#include "superpass_testdev.h"
#include "sp_harness.h"

#define MAX_SAMPLES (1 << 20)
/* Bound on each wait for an episode partner, so that the threads notice stop_all. */
#define PARTNER_TIMEOUT_MS 200

enum scenario { STORM, HANDOFF, CHAIN };

static enum scenario scen;
/* chain-asleep: T1 is already asleep on the rwsem when the critical thread waits for the mutex. */
static int asleep;
static const char *scen_name;
static int duration = 30, nhogs = 4, period_us = 1000, episode_ms = -1, nreaders = 12;
static int a_us = -1, b_us = -1, inner_us = 100, retake;
static double min_reduction = -1, max_wait_ms = -1;
static long min_waits = 1000;
static atomic_int stop_mode;
static uint64_t *samples;
static atomic_long nsamples;
/* Episode bookkeeping: completed episodes, and those in which the partner blocked. */
static atomic_long episodes, partner_holds, partner_blocked;
static uint64_t storm_base;
/* Wall time the long blocker (storm reader, B, T2) held its lock, per mode. */
#define MAX_HOLDS 8192
static uint64_t holds[MAX_HOLDS];
static atomic_long nholds;
/* -t overrides, applied for the run and undone at the end. */
static struct sp_tunables tun_saved;
static int tun_set;
static char *tunables[8];
static int ntunables;

static void sleep_until(uint64_t t)
{
	struct timespec ts = { t / 1000000000ULL, t % 1000000000ULL };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void record_hold(uint64_t ns)
{
	long i = atomic_fetch_add(&nholds, 1);

	if (i < MAX_HOLDS)
		holds[i] = ns;
}

static void sleep_until_tick(void)
{
	uint64_t p = episode_ms * 1000000ULL;

	sleep_until(storm_base + ((now_ns() - storm_base) / p + 1) * p);
}

/* The storm's gate: holds the rwsem for writing until the readers have queued up behind it. */
static void *gate(void *arg)
{
	set_nice(0);
	while (!atomic_load(&stop_all)) {
		struct spt_lock_ex l = {
			.op = SPT_OP_WRITE,
			.flags = SPT_F_LEAD | SPT_F_AWAIT_JOIN,
			.await_n = nreaders,
			.timeout_ms = 50,
		};

		sleep_until_tick();
		mark("B|%ld|lockhold:rwsem\n", syscall(SYS_gettid));
		if (ioctl(tfd, SPT_LOCK_EX, &l) < 0) {
			perror("gate SPT_LOCK_EX");
			break;
		}
		mark("E|%ld\n", syscall(SYS_gettid));
		atomic_fetch_add(&episodes, 1);
	}
	return NULL;
}

/* A storm reader: once per storm, queues behind the gate (SPT_F_JOIN). */
static void *reader(void *arg)
{
	set_nice(0);
	while (!atomic_load(&stop_all)) {
		struct spt_lock_ex l = {
			.op = SPT_OP_READ,
			.flags = SPT_F_JOIN | SPT_F_NICE | SPT_F_YIELD,
			.hold_us = a_us,
			.hold_nice = 19,
			.timeout_ms = PARTNER_TIMEOUT_MS,
		};

		sleep_until_tick();
		mark("B|%ld|lockhold:rwsem\n", syscall(SYS_gettid));
		if (ioctl(tfd, SPT_LOCK_EX, &l) < 0) {
			mark("E|%ld\n", syscall(SYS_gettid));
			if (errno == ETIMEDOUT)
				continue;
			perror("reader SPT_LOCK_EX");
			break;
		}
		mark("E|%ld\n", syscall(SYS_gettid));
		atomic_fetch_add(&partner_holds, 1);
		record_hold(l.hold_ns);
	}
	return NULL;
}

/*
 * The episode's lead: handoff A (the mutex; holds on until B has queued
 * behind it, then A_US of work) or chain T2 (the rwsem for writing, B_US of
 * work). One episode every EPISODE_MS.
 */
static void *leader(void *arg)
{
	struct timespec gap = { episode_ms / 1000, (episode_ms % 1000) * 1000000L };

	set_nice(0);
	while (!atomic_load(&stop_all)) {
		struct spt_lock_ex l = {
			.op = SPT_OP_MUTEX,
			.flags = SPT_F_LEAD | SPT_F_AWAIT | SPT_F_NICE,
			.hold_us = a_us,
			.hold_nice = 19,
			.timeout_ms = PARTNER_TIMEOUT_MS,
		};

		if (scen == CHAIN)
			l = (struct spt_lock_ex){
				.op = SPT_OP_WRITE,
				.flags = SPT_F_LEAD | SPT_F_NICE | SPT_F_YIELD | (retake ? SPT_F_RETAKE : 0),
				.hold_us = b_us,
				.hold_nice = 19,
			};
		nanosleep(&gap, NULL);
		mark(scen == CHAIN ? "B|%ld|lockhold:rwsem\n" : "B|%ld|lockhold:mutex\n", syscall(SYS_gettid));
		if (ioctl(tfd, SPT_LOCK_EX, &l) < 0) {
			perror("leader SPT_LOCK_EX");
			break;
		}
		mark("E|%ld\n", syscall(SYS_gettid));
		atomic_fetch_add(&episodes, 1);
		if (scen == CHAIN)
			record_hold(l.hold_ns);
	}
	return NULL;
}

/*
 * The episode's follower: handoff B (queues for the mutex behind A, then B_US
 * of work) or chain T1 (takes the mutex, waits until the critical thread waits
 * for it, then A_US of work and the rwsem for writing, nested).
 */
static void *follower(void *arg)
{
	set_nice(0);
	while (!atomic_load(&stop_all)) {
		struct spt_lock_ex l = {
			.op = SPT_OP_MUTEX,
			.flags = SPT_F_FOLLOW | SPT_F_NICE | SPT_F_YIELD,
			.hold_us = b_us,
			.hold_nice = 19,
			.timeout_ms = PARTNER_TIMEOUT_MS,
		};

		if (scen == CHAIN) {
			/* T1's rwsem wait must start after the critical one, for the chain to be seen. */
			l.flags &= ~SPT_F_YIELD;
			l.flags |= (asleep ? 0 : SPT_F_AWAIT) | SPT_F_NEST;
			l.hold_us = a_us;
			l.inner_op = SPT_OP_WRITE;
			l.inner_us = inner_us;
		}
		mark("B|%ld|lockhold:mutex\n", syscall(SYS_gettid));
		if (ioctl(tfd, SPT_LOCK_EX, &l) < 0) {
			mark("E|%ld\n", syscall(SYS_gettid));
			if (errno == ETIMEDOUT)
				continue;
			perror("follower SPT_LOCK_EX");
			break;
		}
		mark("E|%ld\n", syscall(SYS_gettid));
		atomic_fetch_add(&partner_holds, 1);
		if (scen == HANDOFF) {
			record_hold(l.hold_ns);
			/* B waited for the mutex: it took it after A, not before. */
			if (l.wait_ns > 100000)
				atomic_fetch_add(&partner_blocked, 1);
		} else if (l.inner_wait_ns > 100000) {
			atomic_fetch_add(&partner_blocked, 1);
		}
	}
	return NULL;
}

struct mode_result {
	const char *mode;
	struct wait_stats w;
	long episodes, partner_holds, partner_blocked, nholds;
	uint64_t hold_p50, hold_p90, hold_max;
	double cpu_share, hog_rate;
	struct sp_stats st;
};

static const char *mode_name;
static atomic_int critical_ready;

static void *critical(void *arg)
{
	uint32_t op = scen == STORM ? SPT_OP_WRITE : SPT_OP_MUTEX;
	uint64_t *cpu = malloc(sizeof(uint64_t));
	uint64_t t0 = thread_cpu_ns();
	int on = mode_is(mode_name, "on"), nice;
	long tid = syscall(SYS_gettid);

	mode_variant(mode_name, &nice);
	set_nice(nice);
	if (on) {
		struct sp_critical_one c = { SP_HDR(struct sp_critical_one), { (int32_t)syscall(SYS_gettid), SP_ROLE_UI } };

		if (sp_ioctl(SP_ADD_CRITICAL, &c, "ADD_CRITICAL"))
			exit(2);
	}
	/*
	 * An rwsem names only its last reader, so SuperPass knows a reader only
	 * if its probes saw it enter: readers still inside from before the
	 * registration are unknown to it. On a phone the UI thread is registered
	 * long before it contends; so here the mode starts once the gate has taken
	 * the rwsem for writing (every earlier reader gone) and let a storm in.
	 * Likewise the module records waits in progress only while a critical
	 * thread is registered: a T1 already asleep on the rwsem at registration
	 * (always in chain-asleep; in chain when an episode straddles it) is
	 * unknown, so a chain's mode starts two episodes later too.
	 */
	if (scen == STORM || scen == CHAIN) {
		long e0 = atomic_load(&episodes);
		uint64_t deadline = now_ns() + 5000000000ULL;

		while (atomic_load(&episodes) < e0 + 2 && now_ns() < deadline)
			usleep(1000);
	}
	if (mode_superpass(mode_name))
		stall_watch_start((int)syscall(SYS_gettid));
	atomic_store(&critical_ready, 1);
	while (!atomic_load(&stop_mode)) {
		uint64_t w, t, next = now_ns() + period_us * 1000ULL;

		/* Not while an episode is being set up (see the top of the file). */
		if (ioctl(tfd, SPT_SETTLE, 100) < 0) {
			perror("critical SPT_SETTLE");
			break;
		}
		mark(scen == STORM ? "B|%ld|lockwait:rwsem\n" : "B|%ld|lockwait:mutex\n", tid);
		t = now_ns();
		if (lock_op(op, 10, &w) < 0) {
			perror("critical SPT_LOCK");
			break;
		}
		mark("E|%ld\n", tid);
		lw_note(t, w);
		long i = atomic_fetch_add(&nsamples, 1);

		if (i < MAX_SAMPLES)
			samples[i] = w;
		sleep_until(next);
	}
	stall_watch_stop();
	if (on) {
		struct sp_tid t = { SP_HDR(struct sp_tid), (int32_t)syscall(SYS_gettid), 0 };

		sp_ioctl(SP_REMOVE_CRITICAL, &t, "REMOVE_CRITICAL");
	}
	*cpu = thread_cpu_ns() - t0;
	return cpu;
}

static int run_mode(const char *mode, struct mode_result *r)
{
	long hog0 = 0, hog1 = 0, ep0, ph0, pb0;
	pthread_t th;
	uint64_t t0, t1, *cpu;
	struct sp_hdr h = SP_HDR(struct sp_hdr);
	int captured;

	mode_name = mode;
	memset(r, 0, sizeof(*r));
	r->mode = mode;
	if (sp_enable(mode_is(mode, "on")) || sp_ioctl(SP_RESET_STATS, &h, "RESET_STATS"))
		return -1;
	atomic_store(&nsamples, 0);
	atomic_store(&nholds, 0);
	atomic_store(&stop_mode, 0);
	atomic_store(&critical_ready, 0);
	if (mode_is(mode, "on"))
		lw_start(mode);
	pthread_create(&th, NULL, critical, NULL);
	while (!atomic_load(&critical_ready))
		usleep(1000);
	for (int i = 0; i < nhogs; i++)
		hog0 += atomic_load(&hog_iters[i]);
	ep0 = atomic_load(&episodes);
	ph0 = atomic_load(&partner_holds);
	pb0 = atomic_load(&partner_blocked);
	t0 = now_ns();
	sleep(duration);
	atomic_store(&stop_mode, 1);
	pthread_join(th, (void **)&cpu);
	t1 = now_ns();
	captured = lw_stop();
	for (int i = 0; i < nhogs; i++)
		hog1 += atomic_load(&hog_iters[i]);
	r->episodes = atomic_load(&episodes) - ep0;
	r->partner_holds = atomic_load(&partner_holds) - ph0;
	r->partner_blocked = atomic_load(&partner_blocked) - pb0;
	sp_get_stats(&r->st);
	sp_enable(0);

	long n = atomic_load(&nsamples);

	summarize_waits(samples, n > MAX_SAMPLES ? MAX_SAMPLES : n, &r->w);
	r->w.long_captured = captured;
	n = atomic_load(&nholds);
	if (n > MAX_HOLDS)
		n = MAX_HOLDS;
	qsort(holds, n, sizeof(uint64_t), cmp_u64);
	r->nholds = n;
	r->hold_p50 = pct(holds, n, 0.5);
	r->hold_p90 = pct(holds, n, 0.9);
	r->hold_max = n ? holds[n - 1] : 0;
	r->cpu_share = 100.0 * (double)*cpu / (double)(t1 - t0);
	r->hog_rate = (double)(hog1 - hog0) / ((double)(t1 - t0) / 1e9);
	free(cpu);
	return 0;
}

/* SPT_LOCK_EX and SPT_SETTLE must refuse what they cannot do safely; returns the failures. */
static int check_bad_input(void)
{
	static const struct { const char *what; struct spt_lock_ex l; } bad[] = {
		{ "op 3", { .op = 3 } },
		{ "unknown flag", { .flags = 1U << 31 } },
		{ "await_n 65", { .flags = SPT_F_AWAIT_JOIN, .await_n = 65 } },
		{ "hold_us 1000001", { .hold_us = 1000001 } },
		{ "inner_us 1000001", { .flags = SPT_F_NEST, .inner_op = SPT_OP_READ, .inner_us = 1000001 } },
		{ "timeout_ms 10001", { .flags = SPT_F_FOLLOW, .timeout_ms = 10001 } },
		{ "AWAIT on the rwsem", { .op = SPT_OP_READ, .flags = SPT_F_AWAIT } },
		{ "NEST in the rwsem", { .op = SPT_OP_WRITE, .flags = SPT_F_NEST, .inner_op = SPT_OP_READ } },
		{ "NEST the mutex", { .flags = SPT_F_NEST, .inner_op = SPT_OP_MUTEX } },
		{ "FOLLOW and JOIN", { .flags = SPT_F_FOLLOW | SPT_F_JOIN } },
		{ "nice below the caller's", { .flags = SPT_F_NICE, .hold_nice = -20 } },
		{ "nice 20", { .flags = SPT_F_NICE, .hold_nice = 20 } },
	};
	int fails = 0;

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct spt_lock_ex l = bad[i].l;

		if (ioctl(tfd, SPT_LOCK_EX, &l) == 0 || errno != EINVAL) {
			printf("FAIL SPT_LOCK_EX accepted a bad request: %s (%s)\n", bad[i].what, strerror(errno));
			fails++;
		}
	}
	if (ioctl(tfd, SPT_LOCK_EX, (void *)16) == 0 || errno != EFAULT) {
		printf("FAIL SPT_LOCK_EX with a bad pointer: %s\n", strerror(errno));
		fails++;
	}
	if (ioctl(tfd, SPT_SETTLE, 10001) == 0 || errno != EINVAL) {
		printf("FAIL SPT_SETTLE accepted 10001 ms\n");
		fails++;
	}
	return fails;
}

/* Applies "name=value" on top of the current tunables. */
static int set_tunable(const char *arg)
{
	struct sp_tunables t = { SP_HDR(struct sp_tunables) };
	const char *eq = strchr(arg, '=');
	int k;

	for (k = 0; k < SP_NUM_TUNABLES; k++)
		if (eq && strlen(sp_tunable_names[k]) == (size_t)(eq - arg) &&
		    !strncmp(arg, sp_tunable_names[k], eq - arg))
			break;
	if (k == SP_NUM_TUNABLES) {
		fprintf(stderr, "-t %s: unknown tunable\n", arg);
		return -1;
	}
	if (sp_ioctl(SP_GET_TUNABLES, &t, "GET_TUNABLES"))
		return -1;
	if (!tun_set) {
		tun_saved = t;
		tun_set = 1;
	}
	t.values[k] = strtoull(eq + 1, NULL, 0);
	return sp_ioctl(SP_SET_TUNABLES, &t, "SET_TUNABLES");
}

/* The counters that say whether (and how) SuperPass followed the lock. */
static const int shown_counters[] = {
	SP_COUNTER_CRITICAL_WAITS, SP_COUNTER_CHAIN_WAITS, SP_COUNTER_BLOCKERS_FOUND,
	SP_COUNTER_GRANTS, SP_COUNTER_FOLLOW_GRANTS, SP_COUNTER_HANDOFF_GRANTS,
	SP_COUNTER_READERS_SEEN, SP_COUNTER_READERS_TRACKED, SP_COUNTER_MISSED_READERS,
	SP_COUNTER_MISSED_DEPTH, SP_COUNTER_MISSED_GRANTS, SP_COUNTER_NO_BLOCKER_KNOWN,
	SP_COUNTER_REVOKE_BUDGET, SP_COUNTER_REVOKE_CHAIN, SP_COUNTER_THROTTLES,
	SP_COUNTER_PICKS, SP_COUNTER_PREEMPTS, SP_COUNTER_DEFERRED_GRANTS,
	SP_COUNTER_RESUMED_WAITS, SP_COUNTER_BUDGET_REGRANTS, SP_COUNTER_SELECT_IDLE,
	SP_COUNTER_SELECT_HOME, SP_COUNTER_UCLAMP_BOOSTS, SP_COUNTER_WAKE_GRANTS,
	SP_COUNTER_REVOKE_TURN_OVER, SP_COUNTER_STRANDED_PICKS, SP_COUNTER_WAIT_TURNS,
};

static void describe(void)
{
	switch (scen) {
	case STORM:
		printf("\nReader storm: critical writer vs %d readers let in at once by a write hold "
		       "(%d us inside each at nice 19), storms every %d ms", nreaders, a_us, episode_ms);
		break;
	case HANDOFF:
		printf("\nOwner change: A holds the mutex (%d us of work), then B, queued behind it, %d us; "
		       "both nice 19 inside; episodes %d ms apart", a_us, b_us, episode_ms);
		break;
	case CHAIN:
		printf("\nChain: critical -> mutex (T1: %d us of work, then the rwsem for writing, %d us inside) "
		       "-> rwsem (T2 writes, %d us%s); both nice 19 inside; episodes %d ms apart", a_us, inner_us,
		       b_us, retake ? ", lets go and at once again" : "", episode_ms);
		break;
	}
	printf("; %d hogs (nice 0), critical thread every %d us, %d s per mode\n", nhogs, period_us, duration);
	for (int i = 0; i < ntunables; i++)
		printf("  tunable %s (for this run)\n", tunables[i]);
}

int main(int argc, char **argv)
{
	char modes_arg[128] = "off,on";
	struct mode_result res[8];
	int nres = 0, opt, fail = 0, nthreads = 0;
	pthread_t hogs[MAX_THREADS], threads[MAX_THREADS];
	const char *partner = "";

	while ((opt = getopt(argc, argv, "s:m:d:H:p:e:r:a:b:i:kt:R:N:X:")) != -1) {
		switch (opt) {
		case 's': scen_name = optarg; break;
		case 'm': snprintf(modes_arg, sizeof(modes_arg), "%s", optarg); break;
		case 'd': duration = atoi(optarg); break;
		case 'H': nhogs = atoi(optarg); break;
		case 'p': period_us = atoi(optarg); break;
		case 'e': episode_ms = atoi(optarg); break;
		case 'r': nreaders = atoi(optarg); break;
		case 'a': a_us = atoi(optarg); break;
		case 'b': b_us = atoi(optarg); break;
		case 'i': inner_us = atoi(optarg); break;
		case 'k': retake = 1; break;
		case 't':
			if (ntunables < 8)
				tunables[ntunables++] = optarg;
			break;
		case 'R': min_reduction = atof(optarg); break;
		case 'N': min_waits = atol(optarg); break;
		case 'X': max_wait_ms = atof(optarg); break;
		default:
			fprintf(stderr, "usage: see the comment at the top of sp-follow.c\n");
			return 2;
		}
	}
	if (!scen_name || (strcmp(scen_name, "storm") && strcmp(scen_name, "handoff") && strcmp(scen_name, "chain") &&
			   strcmp(scen_name, "chain-asleep"))) {
		fprintf(stderr, "-s: storm, handoff, chain or chain-asleep\n");
		return 2;
	}
	asleep = !strcmp(scen_name, "chain-asleep");
	scen = !strcmp(scen_name, "storm") ? STORM : !strcmp(scen_name, "handoff") ? HANDOFF : CHAIN;
	/* Defaults per scenario: -a is the reader's / A's / T1's work, -b B's / T2's. */
	if (a_us < 0)
		a_us = scen == STORM ? 300 : scen == HANDOFF ? 500 : asleep ? 0 : 100;
	if (b_us < 0)
		b_us = 1500;
	if (episode_ms < 0)
		episode_ms = scen == STORM ? 200 : 100;
	if (nhogs < 0 || nhogs > MAX_THREADS || nreaders < 1 || nreaders > MAX_THREADS - 2 ||
	    episode_ms < 1 || period_us < 1 || duration < 1 || (retake && scen != CHAIN)) {
		fprintf(stderr, "sp-follow: bad arguments\n");
		return 2;
	}
	spfd = open("/dev/superpass", O_RDWR);
	tfd = open("/dev/superpass-test", O_RDWR);
	if (spfd < 0 || tfd < 0) {
		perror("open /dev/superpass{,-test} (load superpass.ko and sp_testdev.ko)");
		return 2;
	}
	if (check_bad_input())
		return 1;
	for (int i = 0; i < ntunables; i++)
		if (set_tunable(tunables[i]))
			return 2;
	samples = calloc(MAX_SAMPLES, sizeof(uint64_t));
	storm_base = now_ns();
	for (long i = 0; i < nhogs; i++)
		pthread_create(&hogs[i], NULL, hog, (void *)i);
	if (scen == STORM) {
		pthread_create(&threads[nthreads++], NULL, gate, NULL);
		for (int i = 0; i < nreaders; i++)
			pthread_create(&threads[nthreads++], NULL, reader, NULL);
	} else {
		pthread_create(&threads[nthreads++], NULL, leader, NULL);
		pthread_create(&threads[nthreads++], NULL, follower, NULL);
	}
	sleep(1);
	for (char *save, *m = strtok_r(modes_arg, ",", &save); m && nres < 8; m = strtok_r(NULL, ",", &save)) {
		int nice;

		if (mode_variant(m, &nice) < 0 || (!mode_is(m, "off") && !mode_is(m, "on"))) {
			fprintf(stderr, "-m: off and/or on, each with an optional _nN (nice -N)\n");
			return 2;
		}
		if (run_mode(m, &res[nres]))
			return 1;
		nres++;
	}
	/* Hogs first: the nice-19 threads then finish their episodes quickly. */
	atomic_store(&stop_all, 1);
	for (int i = 0; i < nhogs; i++)
		pthread_join(hogs[i], NULL);
	for (int i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	if (tun_set)
		sp_ioctl(SP_SET_TUNABLES, &tun_saved, "SET_TUNABLES (restore)");

	describe();
	partner = scen == STORM ? "reads" : scen == HANDOFF ? "B:held/queued" : "T1:held/blocked";
	printf("%-8s %8s %10s %10s %10s %10s %6s %6s %6s %8s %16s %18s %7s %7s\n", "mode", "waits", "p50(us)",
	       "p99(us)", "p99.9(us)", "max(us)", ">1ms", ">16ms", ">100ms", "episodes", partner,
	       scen == STORM ? "read held p50/max" : scen == HANDOFF ? "B held p50/max" : "T2 held p50/max",
	       "grants", "picks");
	for (int i = 0; i < nres; i++) {
		struct mode_result *r = &res[i];
		char pp[64], hh[64];

		if (scen == STORM)
			snprintf(pp, sizeof(pp), "%ld", r->partner_holds);
		else
			snprintf(pp, sizeof(pp), "%ld/%ld", r->partner_holds, r->partner_blocked);
		snprintf(hh, sizeof(hh), "%.1f/%.1f ms", r->hold_p50 / 1e6, r->hold_max / 1e6);
		printf("%-8s %8ld %10.1f %10.1f %10.1f %10.1f %6ld %6ld %6ld %8ld %16s %18s %7llu %7llu\n", r->mode,
		       r->w.waits, r->w.p50 / 1e3, r->w.p99 / 1e3, r->w.p999 / 1e3, r->w.max / 1e3, r->w.over_1ms,
		       r->w.over_16ms, r->w.over_100ms, r->episodes, pp, hh,
		       (unsigned long long)r->st.counters[SP_COUNTER_GRANTS],
		       (unsigned long long)r->st.counters[SP_COUNTER_PICKS]);
	}
	for (int i = 0; i < nres; i++) {
		struct mode_result *r = &res[i];
		const char *m = r->mode;

		print_wait_metrics(m, &r->w);
		printf("M %s_episodes %ld\n", m, r->episodes);
		if (scen == STORM) {
			printf("M %s_reader_holds %ld\n", m, r->partner_holds);
		} else {
			printf("M %s_%s %ld\n", m, scen == HANDOFF ? "b_holds" : "t1_holds", r->partner_holds);
			printf("M %s_%s %ld\n", m, scen == HANDOFF ? "b_queued" : "t1_blocked_on_t2",
			       r->partner_blocked);
		}
		/* How long the long blocker held its lock: short when it ran fast-tracked. */
		printf("M %s_%s_hold_p50_ms %.2f\n", m, scen == STORM ? "reader" : scen == HANDOFF ? "b" : "t2",
		       r->hold_p50 / 1e6);
		printf("M %s_%s_hold_p90_ms %.2f\n", m, scen == STORM ? "reader" : scen == HANDOFF ? "b" : "t2",
		       r->hold_p90 / 1e6);
		printf("M %s_%s_hold_max_ms %.2f\n", m, scen == STORM ? "reader" : scen == HANDOFF ? "b" : "t2",
		       r->hold_max / 1e6);
		printf("M %s_crit_cpu_pct %.2f\n", m, r->cpu_share);
		printf("M %s_hog_iters_per_s %.0f\n", m, r->hog_rate);
		if (mode_is(m, "on")) {
			for (unsigned j = 0; j < sizeof(shown_counters) / sizeof(shown_counters[0]); j++) {
				int c = shown_counters[j];

				printf("M %s_%s %llu\n", m, sp_counter_names[c], (unsigned long long)r->st.counters[c]);
			}
			printf("M %s_fast_track_ms %.1f\n", m, r->st.counters[SP_COUNTER_FAST_TRACK_NS] / 1e6);
			if (r->st.counters[SP_COUNTER_CRITICAL_WAITS])
				printf("M %s_blockers_per_wait %.2f\n", m,
				       (double)r->st.counters[SP_COUNTER_BLOCKERS_FOUND] /
				       (double)r->st.counters[SP_COUNTER_CRITICAL_WAITS]);
		}
	}
	printf("M min_waits %ld\n", min_waits);
	struct mode_waits mw[8];

	for (int i = 0; i < nres; i++)
		mw[i] = (struct mode_waits){ res[i].mode, &res[i].w, res[i].st.counters[SP_COUNTER_RESUMED_WAITS] };
	if (min_reduction >= 0)
		fail |= judge_modes(mw, nres, min_reduction, -1, 0);
	if (max_wait_ms >= 0)
		fail |= judge_lost_retries(mw, nres, mode_superpass, max_wait_ms);
	for (int i = 0; i < nres; i++) {
		if (res[i].w.waits < min_waits) {
			printf("FAIL %s: %ld waits, fewer than %ld: its p99.9 is not a real p99.9\n", res[i].mode,
			       res[i].w.waits, min_waits);
			fail = 1;
		}
	}
	return fail;
}
