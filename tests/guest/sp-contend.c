// SPDX-License-Identifier: GPL-2.0
/*
 * sp-contend: drives kernel lock contention from userspace.
 *
 * usage: sp-contend [-t threads] [-n iterations] [-s spinners] FILE OP:US[,OP:US...]
 *
 * Starts `threads` workers; worker i writes "OP US" to FILE `iterations`
 * times, taking the ops round-robin from the list (worker i starts at op
 * i % count). With FILE = /proc/sp_hooktest_lock each write makes the test
 * module take its mutex ("mutex") or rwsem ("read"/"write") and sleep US
 * microseconds while holding it, so concurrent workers block on each other.
 * `spinners` busy threads keep both CPUs running fair tasks meanwhile, so
 * wakeups meet a running task (wakeup preemption) and ticks hit busy CPUs.
 *
 * Prints "key value" lines (metrics) on stdout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *path;
static char ops[16][32];
static int nops, iterations = 100;
static atomic_int done, failures;
static atomic_long writes;

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	int fd = open(path, O_WRONLY);
	int i;

	if (fd < 0) {
		perror(path);
		atomic_fetch_add(&failures, 1);
		return NULL;
	}
	for (i = 0; i < iterations; i++) {
		const char *op = ops[(id + i) % nops];

		if (write(fd, op, strlen(op)) < 0) {
			fprintf(stderr, "write %s: %s\n", op, strerror(errno));
			atomic_fetch_add(&failures, 1);
			break;
		}
		atomic_fetch_add(&writes, 1);
	}
	close(fd);
	return NULL;
}

static void *spinner(void *arg)
{
	volatile unsigned long x = 0;

	(void)arg;
	while (!atomic_load(&done))
		x++;
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 4, spinners = 2, c, i;
	pthread_t w[64], s[16];
	char *list, *tok;
	long t0;

	while ((c = getopt(argc, argv, "t:n:s:")) != -1) {
		switch (c) {
		case 't': threads = atoi(optarg); break;
		case 'n': iterations = atoi(optarg); break;
		case 's': spinners = atoi(optarg); break;
		default: goto usage;
		}
	}
	if (argc - optind != 2 || threads < 1 || threads > 64 || spinners < 0 || spinners > 16)
		goto usage;
	path = argv[optind];
	list = strdup(argv[optind + 1]);
	for (tok = strtok(list, ","); tok && nops < 16; tok = strtok(NULL, ",")) {
		char *colon = strchr(tok, ':');

		if (!colon)
			goto usage;
		*colon = ' ';
		snprintf(ops[nops++], sizeof(ops[0]), "%s", tok);
	}
	if (!nops)
		goto usage;

	t0 = now_ms();
	for (i = 0; i < spinners; i++)
		pthread_create(&s[i], NULL, spinner, NULL);
	for (i = 0; i < threads; i++)
		pthread_create(&w[i], NULL, worker, (void *)(long)i);
	for (i = 0; i < threads; i++)
		pthread_join(w[i], NULL);
	atomic_store(&done, 1);
	for (i = 0; i < spinners; i++)
		pthread_join(s[i], NULL);

	printf("contend_elapsed_ms %ld\n", now_ms() - t0);
	printf("contend_writes %ld\n", atomic_load(&writes));
	printf("contend_failures %d\n", atomic_load(&failures));
	return atomic_load(&failures) ? 1 : 0;
usage:
	fprintf(stderr, "usage: %s [-t threads] [-n iterations] [-s spinners] FILE OP:US[,OP:US...]\n",
		argv[0]);
	return 2;
}
