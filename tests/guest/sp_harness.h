/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sp_harness.h: what the inversion programs (sp-inversion, sp-follow, sp-futex)
 * share: clocks, CPU burning and its calibration, the CPU hogs, the
 * /dev/superpass and test-device calls they make, percentiles and the off/on
 * p99.9 verdict. Header-only: each guest program is one .c file built on its
 * own.
 */
#ifndef SP_HARNESS_H
#define SP_HARNESS_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "superpass_uapi.h"
#include "superpass_testdev.h"

#define MAX_THREADS 64

/* /dev/superpass and /dev/superpass-test, opened by main(). */
static int spfd, tfd;
/* Set once to stop every thread of the run. */
static atomic_int stop_all;
/* Loops done by each hog, for the hogs' rate. */
static atomic_long hog_iters[MAX_THREADS];

static __attribute__((unused)) uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static __attribute__((unused)) uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void __attribute__((noinline, unused)) burn(uint64_t loops)
{
	for (volatile uint64_t i = 0; i < loops; i++)
		;
}

static __attribute__((unused)) int sp_ioctl(unsigned long cmd, void *arg, const char *what)
{
	if (ioctl(spfd, cmd, arg) < 0) {
		fprintf(stderr, "%s: %s\n", what, strerror(errno));
		return -1;
	}
	return 0;
}

static __attribute__((unused)) int sp_enable(int on)
{
	struct sp_enable e = { SP_HDR(struct sp_enable), on, 0 };

	return sp_ioctl(SP_SET_ENABLED, &e, "SET_ENABLED");
}

static __attribute__((unused)) int sp_get_stats(struct sp_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->hdr = SP_HDR(struct sp_stats);
	return sp_ioctl(SP_GET_STATS, s, "GET_STATS");
}

static __attribute__((unused)) int lock_op(uint32_t op, uint32_t hold_us, uint64_t *wait_ns)
{
	struct spt_lock l = { .op = op, .hold_us = hold_us };

	if (ioctl(tfd, SPT_LOCK, &l) < 0)
		return -1;
	if (wait_ns)
		*wait_ns = l.wait_ns;
	return 0;
}

static __attribute__((unused)) void set_nice(int n)
{
	setpriority(PRIO_PROCESS, syscall(SYS_gettid), n);
}

static __attribute__((unused)) void *hog(void *arg)
{
	long id = (long)arg;

	set_nice(0);
	while (!atomic_load(&stop_all)) {
		burn(1000);
		atomic_fetch_add_explicit(&hog_iters[id], 1, memory_order_relaxed);
	}
	return NULL;
}

static __attribute__((unused)) int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static __attribute__((unused)) uint64_t pct(uint64_t *v, long n, double p)
{
	long i;

	if (!n)
		return 0;
	i = (long)(p * (n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

/* burn() loops per microsecond of this CPU, from calibrate(). */
static uint64_t burn_loops_per_us = 100;

/* Sets burn_loops_per_us from the fastest of five timed burns (the others were preempted). */
static __attribute__((unused)) void calibrate(void)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 5; i++) {
		uint64_t t = now_ns();

		burn(200000);
		t = now_ns() - t;
		if (t < best)
			best = t;
	}
	burn_loops_per_us = 200000 * 1000 / (best ? best : 1);
	if (!burn_loops_per_us)
		burn_loops_per_us = 1;
}

/*
 * Judges SuperPass on against off by their p99.9 waits (ns) and prints the
 * p999_reduction_pct metric and the sentence behind it. Returns nonzero if on
 * cuts the p99.9 by less than min_reduction percent (checked when >= 0), lies
 * more than max_growth percent above off (checked when >= 0), or either run
 * has fewer than min_waits waits, too few for its p99.9 to be one.
 */
static __attribute__((unused)) int p999_verdict(uint64_t off_p999, long off_waits, uint64_t on_p999,
						long on_waits, double min_reduction, double max_growth,
						long min_waits)
{
	int fail = 0;
	double red;

	if (!off_p999) {
		printf("FAIL cannot compare: off had no waits\n");
		return 1;
	}
	red = 100.0 * (1.0 - (double)on_p999 / (double)off_p999);
	printf("M p999_reduction_pct %.1f\n", red);
	printf("p99.9 wait: off %.1f us (%ld waits) -> on %.1f us (%ld waits): %.1f%% reduction\n",
	       off_p999 / 1e3, off_waits, on_p999 / 1e3, on_waits, red);
	if (min_reduction >= 0 && red < min_reduction) {
		printf("FAIL p99.9 reduction %.1f%% < %.0f%%\n", red, min_reduction);
		fail = 1;
	}
	if (max_growth >= 0 && -red > max_growth) {
		printf("FAIL on's p99.9 is %.1f%% above off's; at most %.0f%% allowed\n", -red, max_growth);
		fail = 1;
	}
	if (off_waits < min_waits || on_waits < min_waits) {
		printf("FAIL too few waits for a p99.9 (off %ld, on %ld; need >= %ld)\n", off_waits, on_waits,
		       min_waits);
		fail = 1;
	}
	return fail;
}

#endif /* SP_HARNESS_H */
