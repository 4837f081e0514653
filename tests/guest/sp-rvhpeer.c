// SPDX-License-Identifier: GPL-2.0
/*
 * sp-rvhpeer: checks that a vendor scheduler's placement survives SuperPass
 * as the second probe of android_rvh_select_task_rq_fair.
 *
 * usage: sp-rvhpeer [-n WAKEUPS] [-m MIN_PCT]
 *
 * Names its thread "spv-probe", which sp_vendorsched.ko places on the last
 * online CPU at every wakeup. It sleeps 2 ms WAKEUPS times and records the
 * CPU it runs on right after each wakeup. The thread is not critical and
 * blocks nobody, so SuperPass must leave the vendor's choice alone: at least
 * MIN_PCT% (default 90: load balancing may move it in between) of the
 * wakeups must land on the vendor's CPU. Prints "key value" metrics.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = 500, opt, target = -1, on_target = 0;
	double min_pct = 90;
	FILE *f;
	char key[64];
	long val;

	while ((opt = getopt(argc, argv, "n:m:")) != -1) {
		switch (opt) {
		case 'n': n = atoi(optarg); break;
		case 'm': min_pct = atof(optarg); break;
		default:
			fprintf(stderr, "usage: see the comment at the top of sp-rvhpeer.c\n");
			return 2;
		}
	}
	f = fopen("/proc/sp_vendorsched", "r");
	if (!f) {
		perror("/proc/sp_vendorsched (insmod sp_vendorsched.ko first)");
		return 2;
	}
	while (fscanf(f, "%63s %ld", key, &val) == 2)
		if (!strcmp(key, "target_cpu"))
			target = (int)val;
	fclose(f);
	prctl(PR_SET_NAME, "spv-probe");
	for (int i = 0; i < n; i++) {
		usleep(2000);
		if (sched_getcpu() == target)
			on_target++;
	}
	double pct = 100.0 * on_target / n;

	printf("vendor_target_cpu %d\nwakeups %d\non_vendor_cpu %d\non_vendor_cpu_pct %.1f\n", target, n,
	       on_target, pct);
	if (pct < min_pct) {
		printf("FAIL: only %.1f%% of wakeups on the vendor's CPU (want >= %.0f%%)\n", pct, min_pct);
		return 1;
	}
	return 0;
}
