// SPDX-License-Identifier: GPL-2.0
/*
 * sp-churn: critical threads and blockers exit while fast-tracked.
 *
 * Each round forks a blocker process (nice 19) that takes the test device's
 * mutex and spins holding it, and a critical process that registers itself
 * and blocks on the mutex, so the blocker is fast-tracked; then both are
 * SIGKILLed, in an order that varies by round, while the grant is live. A
 * thread variant does the same with threads that exit on their own. At the
 * end nothing may stay registered or boosted (exit cleanup), and the kernel
 * must not oops or warn (checked by the host).
 *
 * usage: sp-churn [-n ROUNDS] [-d SECS]      prints "M key value"
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "superpass_uapi.h"
#include "superpass_testdev.h"

static int spfd, tfd;

static void blocker_child(void)
{
	struct spt_lock l = { .op = SPT_OP_MUTEX, .hold_us = 5000 };

	setpriority(PRIO_PROCESS, 0, 19);
	ioctl(tfd, SPT_HOLD, &l);
	_exit(0);
}

static void critical_child(void)
{
	struct sp_critical_one c = { SP_HDR(struct sp_critical_one), { getpid(), SP_ROLE_UI } };
	struct spt_lock l = { .op = SPT_OP_MUTEX, .hold_us = 10 };

	ioctl(spfd, SP_ADD_CRITICAL, &c);
	ioctl(tfd, SPT_LOCK, &l);
	_exit(0);
}

static void *thr_critical(void *a)
{
	struct sp_critical_one c = { SP_HDR(struct sp_critical_one), { (int32_t)syscall(SYS_gettid), SP_ROLE_RENDER } };
	struct spt_lock l = { .op = SPT_OP_WRITE, .hold_us = 10 };

	ioctl(spfd, SP_ADD_CRITICAL, &c);
	ioctl(tfd, SPT_LOCK, &l);
	return NULL; /* exits registered: the exit hook must clean up */
}

static void *thr_blocker(void *a)
{
	struct spt_lock l = { .op = SPT_OP_WRITE, .hold_us = 3000 };

	setpriority(PRIO_PROCESS, syscall(SYS_gettid), 19);
	ioctl(tfd, SPT_LOCK, &l);
	return NULL;
}

static void *hog(void *a)
{
	for (;;)
		for (volatile int i = 0; i < 1000000; i++)
			;
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = 200, secs = 60, opt, fail = 0, done = 0;
	struct sp_enable en = { SP_HDR(struct sp_enable), 1, 0 };
	struct sp_stats *st = calloc(1, sizeof(*st));
	pthread_t h[3];
	time_t end;

	while ((opt = getopt(argc, argv, "n:d:")) != -1) {
		if (opt == 'n')
			rounds = atoi(optarg);
		else if (opt == 'd')
			secs = atoi(optarg);
	}
	spfd = open("/dev/superpass", O_RDWR);
	tfd = open("/dev/superpass-test", O_RDWR);
	if (spfd < 0 || tfd < 0)
		return 2;
	ioctl(spfd, SP_SET_ENABLED, &en);
	{
		struct sp_hdr rh = SP_HDR(struct sp_hdr);

		ioctl(spfd, SP_RESET_STATS, &rh);
	}
	for (int i = 0; i < 3; i++)
		pthread_create(&h[i], NULL, hog, NULL);
	end = time(NULL) + secs;
	for (int r = 0; r < rounds && time(NULL) < end; r++, done++) {
		pid_t b = fork();

		if (!b)
			blocker_child();
		usleep(20000);
		pid_t c = fork();

		if (!c)
			critical_child();
		usleep(10000 + (r % 5) * 5000);
		if (r % 2) {
			kill(b, SIGKILL);
			kill(c, SIGKILL);
		} else {
			kill(c, SIGKILL);
			kill(b, SIGKILL);
		}
		waitpid(b, NULL, 0);
		waitpid(c, NULL, 0);

		/* Thread variant: both exit on their own while the grant may be live. */
		pthread_t tb, tc;

		pthread_create(&tb, NULL, thr_blocker, NULL);
		usleep(2000);
		pthread_create(&tc, NULL, thr_critical, NULL);
		pthread_join(tb, NULL);
		pthread_join(tc, NULL);
	}
	/* Freed task_structs are reclaimed after an RCU grace period. */
	for (int i = 0; i < 50; i++) {
		memset(st, 0, sizeof(*st));
		st->hdr = SP_HDR(struct sp_stats);
		ioctl(spfd, SP_GET_STATS, st);
		if (!st->ncritical && !st->boosted)
			break;
		usleep(100000);
	}
	printf("M rounds %d\n", done);
	printf("M grants %llu\n", (unsigned long long)st->counters[SP_COUNTER_GRANTS]);
	printf("M revoke_exit %llu\n", (unsigned long long)st->counters[SP_COUNTER_REVOKE_EXIT]);
	printf("M revoke_waiter_done %llu\n", (unsigned long long)st->counters[SP_COUNTER_REVOKE_WAITER_DONE]);
	printf("M left_critical %u\n", st->ncritical);
	printf("M left_boosted %llu\n", (unsigned long long)st->boosted);
	if (st->ncritical || st->boosted) {
		printf("FAIL state left behind by exited tasks\n");
		fail = 1;
	}
	if (!st->counters[SP_COUNTER_GRANTS]) {
		printf("FAIL nothing was ever fast-tracked\n");
		fail = 1;
	}
	en.enabled = 0;
	ioctl(spfd, SP_SET_ENABLED, &en);
	return fail;
}
