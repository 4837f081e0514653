// SPDX-License-Identifier: GPL-2.0
/*
 * sp-overhead: one measurement run of the two overhead micro-benchmarks.
 *
 *   mutex     COUNT uncontended lock/unlock pairs of a kernel mutex: the pipe
 *             mutex of a one-byte write+read per iteration, so it works with
 *             or without superpass.ko loaded. Prints ns per iteration.
 *   pingpong  COUNT round trips between two threads over two pipes (two
 *             wakeups each, through every scheduler hook), both pinned to
 *             CPU 0 so that idle-exit latency (large under TCG) stays out of
 *             the number. ns per round trip.
 *
 * usage: sp-overhead mutex|pingpong [COUNT]       prints the ns value only
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int a[2], b[2];
static long count;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void *pong(void *x)
{
	char c;

	for (long i = 0; i < count; i++) {
		if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	char c = 'x';
	uint64_t t;
	pthread_t th;

	if (argc < 2)
		return 2;
	count = argc > 2 ? atol(argv[2]) : 20000;
	if (pipe(a) || pipe(b))
		return 2;
	if (!strcmp(argv[1], "mutex")) {
		t = now_ns();
		for (long i = 0; i < count; i++) {
			if (write(a[1], &c, 1) != 1 || read(a[0], &c, 1) != 1)
				return 1;
		}
	} else {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(0, &set);
		/* The pong thread inherits the affinity. */
		sched_setaffinity(0, sizeof(set), &set);
		pthread_create(&th, NULL, pong, NULL);
		t = now_ns();
		for (long i = 0; i < count; i++) {
			if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
				return 1;
		}
		pthread_join(th, NULL);
	}
	printf("%.1f\n", (double)(now_ns() - t) / count);
	return 0;
}
