// SPDX-License-Identifier: GPL-2.0
/*
 * sp-pcpu: the inversion on the cgroup threadgroup lock, a percpu
 * rw-semaphore (cgroup_threadgroup_rwsem).
 *
 * usage: sp-pcpu -c CGROUP_ROOT [-m off,on,off_n10,on_n10] [-d SECS] [-H HOGS]
 *                [-p PERIOD_US] [-R MIN_REDUCTION_PCT] [-N MIN_WAITS]
 *
 * Every pthread_create() reads the lock (cgroup_can_fork), and every move of
 * a process between cgroups writes it (cgroup_procs_write). A mover thread at
 * nice 19 moves a sleeping child process between two cgroups under
 * CGROUP_ROOT (cgroup v2, created here) without pause; HOGS CPU-bound threads
 * (default 4) at nice 0 starve it, so it is often preempted holding the lock
 * for writing. A critical thread creates and joins a thread every PERIOD_US
 * (default 1000) and records how long each pthread_create() took. Each mode
 * runs SECS (default 10), and on until it has MIN_WAITS (default 1000)
 * creates, for at most 6 x SECS (off's creates often wait hundreds of ms on a
 * preempted writer, so it can need 3 x SECS): off (SuperPass disabled) and on
 * (enabled, the critical thread registered as UI); _nN runs the critical
 * thread at nice -N. Per mode it prints the creates' p50/p99/p99.9/max and
 * counts over 1, 10, 16 and 100 ms as "M <mode>_<key> value" lines (the
 * keys of the other inversion tests: a create is a wait), and the moves
 * made; then each on mode's p99.9 cut against off of the same variant. -R X
 * fails unless that cut is at least X%; a mode with fewer than MIN_WAITS
 * creates fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "superpass_uapi.h"
#include "superpass_testdev.h"
#include "sp_harness.h"

#define MAX_MODES 8

static char procs[2][256];
static pid_t child;
static atomic_int mover_stop;
static atomic_long moves;

static void *noop(void *arg)
{
	return arg;
}

/* Moves the child between the two cgroups until told to stop. */
static void *mover(void *arg)
{
	char pid[16];
	int n = snprintf(pid, sizeof(pid), "%d", child);

	(void)arg;
	set_nice(19);
	for (long i = 0; !atomic_load(&mover_stop); i++) {
		int fd = open(procs[i & 1], O_WRONLY);

		if (fd < 0 || write(fd, pid, n) != n) {
			perror(procs[i & 1]);
			if (fd >= 0)
				close(fd);
			return (void *)1L;
		}
		close(fd);
		atomic_fetch_add(&moves, 1);
	}
	return NULL;
}

/* Creates cgroup @name under @root and writes its cgroup.procs path to @out. */
static int make_cgroup(const char *root, const char *name, char *out, size_t len)
{
	char dir[200];

	snprintf(dir, sizeof(dir), "%s/%s", root, name);
	if (mkdir(dir, 0755) && errno != EEXIST) {
		perror(dir);
		return -1;
	}
	snprintf(out, len, "%s/cgroup.procs", dir);
	return 0;
}

struct mode_result {
	char mode[24];
	struct wait_stats w;
	long moves;
};

static int run_mode(const char *mode, int secs, int nhogs, int period_us, long min_waits,
		    struct mode_result *r)
{
	long cap = 200000, n = 0;
	uint64_t *v = calloc(cap, sizeof(*v));
	pthread_t hogs[MAX_THREADS], mv, t;
	int nice, on = mode_superpass(mode);
	long tid = syscall(SYS_gettid);
	char key[32];
	uint64_t start, end, next;
	void *ret;

	if (!v || mode_variant(mode, &nice) < 0)
		return -1;
	snprintf(r->mode, sizeof(r->mode), "%s", mode);
	if (sp_enable(on) || (on && sp_critical_self(1)))
		return -1;
	set_nice(nice);
	atomic_store(&stop_all, 0);
	atomic_store(&mover_stop, 0);
	atomic_store(&moves, 0);
	for (long i = 0; i < nhogs; i++)
		pthread_create(&hogs[i], NULL, hog, (void *)i);
	pthread_create(&mv, NULL, mover, NULL);
	usleep(100000);
	/* Creates over 16 ms with SuperPass on are captured for superpass-trace to itemize. */
	if (on)
		lw_start(mode_key(mode, key, sizeof(key)));
	start = now_ns();
	end = start + (uint64_t)secs * 1000000000ULL;
	next = start;
	while (n < cap) {
		uint64_t now = now_ns(), t0, t1;

		if ((now >= end && n >= min_waits) || now >= start + 6ULL * secs * 1000000000ULL)
			break;
		mark("B|%ld|lockwait:pcpu\n", tid);
		t0 = now_ns();
		if (pthread_create(&t, NULL, noop, NULL))
			break;
		t1 = now_ns();
		mark("E|%ld\n", tid);
		lw_note(t0, t1 - t0);
		pthread_join(t, NULL);
		v[n++] = t1 - t0;
		next += (uint64_t)period_us * 1000;
		sleep_until_mono(next > now_ns() ? next : now_ns());
	}
	lw_stop();
	atomic_store(&mover_stop, 1);
	atomic_store(&stop_all, 1);
	pthread_join(mv, &ret);
	for (int i = 0; i < nhogs; i++)
		pthread_join(hogs[i], NULL);
	if (on)
		sp_critical_self(0);
	set_nice(0);
	r->moves = atomic_load(&moves);
	summarize_waits(v, n, &r->w);
	r->w.long_captured = on ? lw_captured() : 0;
	free(v);
	return ret ? -1 : 0;
}

int main(int argc, char **argv)
{
	const char *root = NULL;
	char modes_arg[128] = "off,on";
	int secs = 10, nhogs = 4, period_us = 1000, opt, nres = 0, fail = 0;
	double min_reduction = -1;
	long min_waits = 1000;
	struct mode_result res[MAX_MODES];
	struct mode_waits mw[MAX_MODES];

	while ((opt = getopt(argc, argv, "c:m:d:H:p:R:N:")) != -1) {
		switch (opt) {
		case 'c': root = optarg; break;
		case 'm': snprintf(modes_arg, sizeof(modes_arg), "%s", optarg); break;
		case 'd': secs = atoi(optarg); break;
		case 'H': nhogs = atoi(optarg); break;
		case 'p': period_us = atoi(optarg); break;
		case 'R': min_reduction = atof(optarg); break;
		case 'N': min_waits = atol(optarg); break;
		default: goto usage;
		}
	}
	if (!root || secs < 1 || nhogs < 0 || nhogs > MAX_THREADS || period_us < 1)
		goto usage;
	if (sp_open_devices() || make_cgroup(root, "spa", procs[0], sizeof(procs[0])) ||
	    make_cgroup(root, "spb", procs[1], sizeof(procs[1])))
		return 1;
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (!child) {
		pause();
		_exit(0);
	}
	for (char *save, *m = strtok_r(modes_arg, ",", &save); m && nres < MAX_MODES;
	     m = strtok_r(NULL, ",", &save)) {
		if (run_mode(m, secs, nhogs, period_us, min_waits, &res[nres])) {
			printf("FAIL mode %s did not run\n", m);
			fail = 1;
			break;
		}
		printf("%-8s creates %6ld  p50 %8.1f us  p99.9 %10.1f us  max %10.1f us  >16ms %ld  moves %ld\n",
		       res[nres].mode, res[nres].w.waits, res[nres].w.p50 / 1e3,
		       res[nres].w.p999 / 1e3, res[nres].w.max / 1e3, res[nres].w.over_16ms,
		       res[nres].moves);
		print_wait_metrics(res[nres].mode, &res[nres].w);
		printf("M %s_moves %ld\n", res[nres].mode, res[nres].moves);
		mw[nres].mode = res[nres].mode;
		mw[nres].w = &res[nres].w;
		nres++;
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	if (!fail)
		fail = judge_modes(mw, nres, min_reduction, -1, min_waits);
	return fail;
usage:
	fprintf(stderr, "usage: %s -c CGROUP_ROOT [-m off,on,...] [-d SECS] [-H HOGS] [-p PERIOD_US] "
			"[-R MIN_REDUCTION_PCT] [-N MIN_WAITS]\n", argv[0]);
	return 2;
}
