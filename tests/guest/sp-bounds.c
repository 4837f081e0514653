// SPDX-License-Identifier: GPL-2.0
/*
 * sp-bounds: a fast-tracked blocker that never releases its lock gets no
 * more CPU than the budget and the throttle allow, and the hogs keep going.
 *
 * HOGS nice-0 hogs run throughout. Phase 1 (SECS) measures their progress
 * alone. Phase 2 (SECS): a nice-19 blocker takes the test device's mutex and
 * spins holding it (SPT_HOLD) until released; a registered critical thread
 * blocks on the mutex, so SuperPass fast-tracks the blocker, which never lets
 * go. At the end the main thread releases it.
 *
 * Pass: the fast-tracked CPU time (FastTrackNs) exceeds budget_ns by at most
 * 1 ms per grant (the module's timer ends a grant on its budget, not at the
 * next tick), a grant ended by budget, the blocker was granted at most once
 * per throttle window (the budget is per window: a revoked holder that still
 * blocks is granted again a window later), and the hogs got at least
 * MIN_PCT% (default 80) of the CPU share they had in phase 1. The share is
 * the hogs' own CPU time over wall time: unlike their iteration rate, it
 * does not move when the host slows the whole VM down (TCG on a shared
 * machine), only when something else takes their CPUs. The iteration rates
 * are printed too.
 *
 * usage: sp-bounds [-d SECS] [-H HOGS] [-P MIN_PCT]    prints "M key value"
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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

static int spfd, tfd, nhogs = 4;
static atomic_int stop;
static atomic_long iters;
static atomic_int holding;

/* The summed CPU time of the first @n threads of @h. */
static uint64_t cpu_of(pthread_t *h, int n)
{
	uint64_t sum = 0;

	for (int i = 0; i < n; i++) {
		clockid_t cid;
		struct timespec ts;

		if (!pthread_getcpuclockid(h[i], &cid) && !clock_gettime(cid, &ts))
			sum += ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	}
	return sum;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void *hog(void *a)
{
	while (!atomic_load(&stop)) {
		for (volatile int i = 0; i < 1000; i++)
			;
		atomic_fetch_add_explicit(&iters, 1, memory_order_relaxed);
	}
	return NULL;
}

static uint64_t blocker_cpu_ns;

static void *blocker(void *a)
{
	struct spt_lock l = { .op = SPT_OP_MUTEX, .hold_us = 9000 /* ms: hard timeout */ };
	struct timespec ts;

	setpriority(PRIO_PROCESS, syscall(SYS_gettid), 19);
	atomic_store(&holding, 1);
	if (ioctl(tfd, SPT_HOLD, &l))
		perror("SPT_HOLD");
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	blocker_cpu_ns = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	return NULL;
}

static void *critical(void *a)
{
	struct sp_critical_one c = { SP_HDR(struct sp_critical_one), { (int32_t)syscall(SYS_gettid), SP_ROLE_UI } };
	struct spt_lock l = { .op = SPT_OP_MUTEX, .hold_us = 10 };

	if (ioctl(spfd, SP_ADD_CRITICAL, &c))
		perror("ADD_CRITICAL");
	if (ioctl(tfd, SPT_LOCK, &l))
		perror("critical SPT_LOCK");
	return NULL;
}

int main(int argc, char **argv)
{
	int secs = 3, opt, fail = 0;
	double min_pct = 80;
	pthread_t h[32], b, c;
	struct sp_enable en = { SP_HDR(struct sp_enable), 1, 0 };
	struct sp_tunables t = { SP_HDR(struct sp_tunables) };
	struct sp_stats *st = calloc(1, sizeof(*st));
	struct sp_hdr rh = SP_HDR(struct sp_hdr);

	while ((opt = getopt(argc, argv, "d:H:P:")) != -1) {
		if (opt == 'd')
			secs = atoi(optarg);
		else if (opt == 'H')
			nhogs = atoi(optarg);
		else if (opt == 'P')
			min_pct = atof(optarg);
	}
	spfd = open("/dev/superpass", O_RDWR);
	tfd = open("/dev/superpass-test", O_RDWR);
	if (spfd < 0 || tfd < 0 || nhogs > 32)
		return 2;
	if (ioctl(spfd, SP_GET_TUNABLES, &t))
		return 2;
	for (int i = 0; i < nhogs; i++)
		pthread_create(&h[i], NULL, hog, NULL);
	sleep(1);
	long i0 = atomic_load(&iters);
	uint64_t t0 = now_ns(), c0 = cpu_of(h, nhogs);
	sleep(secs);
	double base = (atomic_load(&iters) - i0) / ((now_ns() - t0) / 1e9);
	double share_alone = (double)(cpu_of(h, nhogs) - c0) / (double)(now_ns() - t0);

	ioctl(spfd, SP_SET_ENABLED, &en);
	ioctl(spfd, SP_RESET_STATS, &rh);
	pthread_create(&b, NULL, blocker, NULL);
	while (!atomic_load(&holding))
		usleep(1000);
	usleep(200000);
	pthread_create(&c, NULL, critical, NULL);
	i0 = atomic_load(&iters);
	t0 = now_ns();
	c0 = cpu_of(h, nhogs);
	sleep(secs);
	double during = (atomic_load(&iters) - i0) / ((now_ns() - t0) / 1e9);
	double share_during = (double)(cpu_of(h, nhogs) - c0) / (double)(now_ns() - t0);

	st->hdr = SP_HDR(struct sp_stats);
	ioctl(spfd, SP_GET_STATS, st);
	uint64_t boosted_ns = now_ns() - t0;
	ioctl(tfd, SPT_RELEASE);
	pthread_join(b, NULL);
	pthread_join(c, NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < nhogs; i++)
		pthread_join(h[i], NULL);
	en.enabled = 0;
	ioctl(spfd, SP_SET_ENABLED, &en);

	uint64_t budget = t.values[SP_TUNABLE_BUDGET_NS], ft = st->counters[SP_COUNTER_FAST_TRACK_NS];
	/*
	 * The module arms a timer for the moment a grant's budget runs out, so a grant may
	 * overrun it by the timer's latency only, not by a tick (4 ms at HZ=250): at most
	 * 1 ms per grant.
	 */
	uint64_t grants = st->counters[SP_COUNTER_GRANTS];
	/* The budget is per throttle window: one grant, then one more per window passed. */
	uint64_t window = t.values[SP_TUNABLE_THROTTLE_WINDOW_NS];
	uint64_t max_grants = 1 + (window ? boosted_ns / window : 0);
	uint64_t slack = 1000000 * (grants ? grants : 1);
	uint64_t overrun = ft > budget * (grants ? grants : 1) ? ft - budget * (grants ? grants : 1) : 0;
	double pct = 100.0 * share_during / share_alone;
	uint64_t picks = st->counters[SP_COUNTER_PICKS];
	double picks_per_ms = ft ? picks / (ft / 1e6) : 0;

	printf("M budget_ms %.1f\n", budget / 1e6);
	printf("M fast_track_ms %.2f\n", ft / 1e6);
	printf("M overrun_ms %.3f\n", overrun / 1e6);
	printf("M revoke_budget %llu\n", (unsigned long long)st->counters[SP_COUNTER_REVOKE_BUDGET]);
	printf("M grants %llu\n", (unsigned long long)st->counters[SP_COUNTER_GRANTS]);
	printf("M max_grants %llu\n", (unsigned long long)max_grants);
	printf("M budget_regrants %llu\n", (unsigned long long)st->counters[SP_COUNTER_BUDGET_REGRANTS]);
	printf("M throttles %llu\n", (unsigned long long)st->counters[SP_COUNTER_THROTTLES]);
	printf("M picks %llu\n", (unsigned long long)picks);
	printf("M picks_per_ms %.2f\n", picks_per_ms);
	printf("M blocker_cpu_ms %.1f\n", blocker_cpu_ns / 1e6);
	printf("M hog_rate_alone %.0f\n", base);
	printf("M hog_rate_during %.0f\n", during);
	printf("M hog_rate_pct %.1f\n", 100.0 * during / base);
	printf("M hog_cpus_alone %.3f\n", share_alone);
	printf("M hog_cpus_during %.3f\n", share_during);
	printf("M hog_progress_pct %.1f\n", pct);
	printf("fast-tracked %.2f ms (budget %.1f ms), %llu grant(s), %llu budget revocation(s); hogs at %.1f%% of their solo CPU share\n",
	       ft / 1e6, budget / 1e6, (unsigned long long)st->counters[SP_COUNTER_GRANTS],
	       (unsigned long long)st->counters[SP_COUNTER_REVOKE_BUDGET], pct);
	if (!st->counters[SP_COUNTER_GRANTS]) {
		printf("FAIL the blocker was never fast-tracked\n");
		fail = 1;
	}
	if (overrun > slack) {
		printf("FAIL fast-tracked CPU %.3f ms over the budget (at most 1 ms per grant)\n",
		       overrun / 1e6);
		fail = 1;
	}
	if (grants > max_grants) {
		printf("FAIL %llu grants in %.2f s: at most one budget per %.0f ms window allows %llu\n",
		       (unsigned long long)grants, boosted_ns / 1e9, window / 1e6,
		       (unsigned long long)max_grants);
		fail = 1;
	}
	if (!st->counters[SP_COUNTER_REVOKE_BUDGET]) {
		printf("FAIL no grant ended by budget\n");
		fail = 1;
	}
	if (pct < min_pct) {
		printf("FAIL hogs starved (%.1f%% < %.0f%%)\n", pct, min_pct);
		fail = 1;
	}
	return fail;
}
