// SPDX-License-Identifier: GPL-2.0
/*
 * sp-futex: the priority-inversion scenario on userspace locks (the futex
 * hooks' cost is measured by sp-overhead).
 *
 * usage: sp-futex -l hint|pi|plain [-m off,on,off_n10,on_n10] [-d SECS] [-H HOGS] [-k HOLDERS]
 *                 [-w WORK_US] [-o OUTSIDE_US] [-p PERIOD_US]
 *                 [-R MIN_REDUCTION_PCT] [-G MAX_GROWTH_PCT] [-N MIN_WAITS]
 *                 [-A MIN_HANDOFFS] [-c CRIT_US] [-X MAX_WAIT_MS] [-P MAX_PICKS_PER_MS]
 *        sp-futex -x ITERS
 *
 * The lock is one of:
 *   hint   the owner-word lock of superpass_futex.h: its waiters name the
 *          holder's TID with FUTEX_WAIT (an owner-hinted futex);
 *   pi     a pthread mutex with PTHREAD_PRIO_INHERIT (a PI futex: the kernel
 *          records its owner in an rt_mutex);
 *   plain  a default pthread mutex: nothing tells the kernel who holds it.
 *
 * HOGS CPU-bound threads run at nice 0. HOLDERS holders (default 1) at nice 19
 * keep taking the lock and compute WORK_US of CPU work inside it, then
 * OUTSIDE_US outside it. With two or more, a release often wakes a holder
 * queued ahead of the critical thread: the next blocker, found through the
 * futex wake hooks (handoff_grants); -A N fails unless on makes at least N.
 * A critical thread takes the same lock every PERIOD_US, holds it CRIT_US
 * (default 10 us), and records how long each acquisition waited (clock_gettime around the lock
 * call). Each mode runs SECS: off (SuperPass disabled) and on (enabled, the
 * critical thread registered as UI); off_nN and on_nN run the critical
 * thread at nice -N (as Android runs the UI thread at -10), the plain modes
 * at nice 0. Per mode it prints waits, p50/p99/p99.9/max wait and waits over
 * 1, 10, 16 (a 60 Hz frame) and 100 ms, as a table and as "M key value"
 * metric lines. -R X fails unless on cuts the p99.9 wait by at least X%
 * against off of the same variant; -G X fails if on's p99.9 is more than X%
 * above off's; a mode runs on until it has MIN_WAITS waits (default 1000: a
 * p99.9 needs them), for at most 3 x SECS, and one with fewer fails either
 * check. -X M fails if an on mode had a wait longer than M ms. -P N fails if an
 * on mode's engine picked boosted tasks more than N times per fast-tracked ms
 * (each grant needs about one pick, and one per CFS slice it runs; a CPU that
 * reschedules in a loop around a boosted task picks it every few us). With SuperPass
 * on, each wait over 16 ms is captured from ftrace for the host to itemize
 * (sp_harness.h).
 *
 * -x ITERS only exercises the futex paths, without /dev/superpass (for the
 * hook test): 4 threads each take a PI mutex and the owner-word lock ITERS
 * times, sleeping 50 us inside, so that waiters queue, sleep and are woken.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "superpass_uapi.h"
#include "superpass_testdev.h"
#include "superpass_futex.h"
#include "sp_harness.h"

#define MAX_SAMPLES (1 << 20)

enum kind { HINT, PI, PLAIN };

static enum kind kind;
static const char *kind_name;
static int duration = 20, nhogs = 4, work_us = 500, outside_us = -1, period_us = 1000, crit_us = 10;
static double min_reduction = -1, max_growth = -1, max_wait_ms = -1, max_picks_per_ms = -1;
static long min_waits = 1000, min_handoffs = -1;
static int nholders = 1;
static atomic_int stop_mode;
static uint64_t *samples;
static atomic_long nsamples;

static struct superpass_lock owner_lock;
static pthread_mutex_t pmutex;


static void take(pid_t self)
{
	if (kind == HINT)
		superpass_lock(&owner_lock, self);
	else if (pthread_mutex_lock(&pmutex))
		abort();
}

static void drop(void)
{
	if (kind == HINT)
		superpass_unlock(&owner_lock);
	else
		pthread_mutex_unlock(&pmutex);
}

/* Burns @us of this thread's own CPU time: starved work takes longer, not less. */
static void work(int us)
{
	uint64_t end = thread_cpu_ns() + us * 1000ULL;

	while (thread_cpu_ns() < end)
		burn(burn_loops_per_us * 10);
}

static void *holder(void *arg)
{
	pid_t self = superpass_gettid();
	int outside = outside_us < 0 ? work_us : outside_us;

	set_nice(19);
	while (!atomic_load(&stop_all)) {
		mark("B|%ld|lockhold:futex\n", self);
		take(self);
		work(work_us);
		drop();
		mark("E|%ld\n", self);
		work(outside);
	}
	return NULL;
}

static const char *mode_name;

static void *critical(void *arg)
{
	pid_t self = superpass_gettid();
	int nice;

	mode_variant(mode_name, &nice);
	set_nice(nice);
	if (mode_is(mode_name, "on")) {
		struct sp_critical_one c = { SP_HDR(struct sp_critical_one), { self, SP_ROLE_UI } };

		if (sp_ioctl(SP_ADD_CRITICAL, &c, "ADD_CRITICAL"))
			exit(2);
	}
	while (!atomic_load(&stop_mode)) {
		uint64_t next = now_ns() + period_us * 1000ULL;
		uint64_t t0, w;
		struct timespec ts;

		mark("B|%ld|lockwait:futex\n", self);
		t0 = now_ns();
		take(self);
		w = now_ns() - t0;
		work(crit_us);
		drop();
		mark("E|%ld\n", self);
		lw_note(t0, w);
		long i = atomic_fetch_add(&nsamples, 1);

		if (i < MAX_SAMPLES)
			samples[i] = w;
		ts.tv_sec = next / 1000000000ULL;
		ts.tv_nsec = next % 1000000000ULL;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	if (mode_is(mode_name, "on")) {
		struct sp_tid t = { SP_HDR(struct sp_tid), self, 0 };

		sp_ioctl(SP_REMOVE_CRITICAL, &t, "REMOVE_CRITICAL");
	}
	return NULL;
}

struct mode_result {
	const char *mode;
	struct wait_stats w;
	struct sp_stats st;
};

static int run_mode(const char *mode, struct mode_result *r)
{
	pthread_t th;
	int nice, captured;

	mode_name = mode;
	memset(r, 0, sizeof(*r));
	r->mode = mode;
	if (mode_variant(mode, &nice) < 0 || (!mode_is(mode, "off") && !mode_is(mode, "on"))) {
		fprintf(stderr, "-m %s: off or on, with an optional _nN (nice -N)\n", mode);
		return -1;
	}
	if (sp_enable(mode_is(mode, "on")))
		return -1;
	sp_reset_stats();
	atomic_store(&nsamples, 0);
	atomic_store(&stop_mode, 0);
	/*
	 * SuperPass cannot see a plain futex, so it has nothing to itemize there, and
	 * dumping captures in "on" alone would make on slower than the off it is
	 * held to.
	 */
	if (mode_is(mode, "on") && kind != PLAIN)
		lw_start(mode);
	pthread_create(&th, NULL, critical, NULL);
	sleep(duration);
	/* A mode whose waits are long has few of them: it runs on for its p99.9, up to 3x. */
	for (int extra = 0; atomic_load(&nsamples) < min_waits && extra < 2 * duration; extra++)
		sleep(1);
	atomic_store(&stop_mode, 1);
	pthread_join(th, NULL);
	captured = lw_stop();
	sp_get_stats(&r->st);
	sp_enable(0);

	long n = atomic_load(&nsamples);

	summarize_waits(samples, n > MAX_SAMPLES ? MAX_SAMPLES : n, &r->w);
	r->w.long_captured = captured;
	return 0;
}

static long exercise_iters;

static void *exerciser(void *arg)
{
	pid_t self = superpass_gettid();

	for (long i = 0; i < exercise_iters; i++) {
		pthread_mutex_lock(&pmutex);
		usleep(50);
		pthread_mutex_unlock(&pmutex);
		superpass_lock(&owner_lock, self);
		usleep(50);
		superpass_unlock(&owner_lock);
	}
	return NULL;
}

static int exercise(void)
{
	pthread_mutexattr_t ma;
	pthread_t t[4];

	pthread_mutexattr_init(&ma);
	if (pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT))
		return 2;
	pthread_mutex_init(&pmutex, &ma);
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, exerciser, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("exercised: 4 threads x %ld PI-mutex and owner-word lock rounds\n", exercise_iters);
	return 0;
}

int main(int argc, char **argv)
{
	char modes_arg[128] = "off,on";
	struct mode_result res[8];
	int nres = 0, opt, fail = 0;
	pthread_t hogs[MAX_THREADS], hold[MAX_THREADS];
	pthread_mutexattr_t ma;

	while ((opt = getopt(argc, argv, "l:m:d:H:k:w:o:p:R:G:N:A:x:c:X:P:")) != -1) {
		switch (opt) {
		case 'l': kind_name = optarg; break;
		case 'm': snprintf(modes_arg, sizeof(modes_arg), "%s", optarg); break;
		case 'd': duration = atoi(optarg); break;
		case 'H': nhogs = atoi(optarg); break;
		case 'k': nholders = atoi(optarg); break;
		case 'w': work_us = atoi(optarg); break;
		case 'o': outside_us = atoi(optarg); break;
		case 'p': period_us = atoi(optarg); break;
		case 'R': min_reduction = atof(optarg); break;
		case 'G': max_growth = atof(optarg); break;
		case 'N': min_waits = atol(optarg); break;
		case 'A': min_handoffs = atol(optarg); break;
		case 'x': exercise_iters = atol(optarg); break;
		case 'c': crit_us = atoi(optarg); break;
		case 'X': max_wait_ms = atof(optarg); break;
		case 'P': max_picks_per_ms = atof(optarg); break;
		default:
			fprintf(stderr, "usage: see the comment at the top of sp-futex.c\n");
			return 2;
		}
	}
	if (exercise_iters > 0)
		return exercise();
	spfd = open("/dev/superpass", O_RDWR);
	if (spfd < 0) {
		perror("open /dev/superpass (load superpass.ko)");
		return 2;
	}
	if (!kind_name || (strcmp(kind_name, "hint") && strcmp(kind_name, "pi") && strcmp(kind_name, "plain"))) {
		fprintf(stderr, "-l: hint, pi or plain\n");
		return 2;
	}
	kind = !strcmp(kind_name, "hint") ? HINT : !strcmp(kind_name, "pi") ? PI : PLAIN;
	if (nhogs > MAX_THREADS || nholders < 1 || nholders > MAX_THREADS) {
		fprintf(stderr, "-H and -k: at most %d threads, -k at least 1\n", MAX_THREADS);
		return 2;
	}
	pthread_mutexattr_init(&ma);
	if (kind == PI && pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT)) {
		fprintf(stderr, "PTHREAD_PRIO_INHERIT unsupported\n");
		return 2;
	}
	pthread_mutex_init(&pmutex, &ma);
	samples = calloc(MAX_SAMPLES, sizeof(uint64_t));
	calibrate();
	for (long i = 0; i < nhogs; i++)
		pthread_create(&hogs[i], NULL, hog, (void *)i);
	for (int i = 0; i < nholders; i++)
		pthread_create(&hold[i], NULL, holder, NULL);
	sleep(1);
	for (char *save, *m = strtok_r(modes_arg, ",", &save); m && nres < 8; m = strtok_r(NULL, ",", &save)) {
		if (run_mode(m, &res[nres]))
			return 1;
		nres++;
	}
	atomic_store(&stop_all, 1);
	for (int i = 0; i < nhogs; i++)
		pthread_join(hogs[i], NULL);
	for (int i = 0; i < nholders; i++)
		pthread_join(hold[i], NULL);

	printf("\nUserspace lock: %s, %d hogs (nice 0), %d holder(s): %d us of work inside (nice 19), "
	       "critical thread every %d us, %d s per mode\n", kind_name, nhogs, nholders, work_us,
	       period_us, duration);
	printf("%-8s %8s %10s %10s %10s %10s %9s %6s %8s %8s %8s\n", "mode", "waits", "p50(us)", "p99(us)",
	       "p99.9(us)", "max(us)", ">1ms", ">16ms", "hints", "grants", "picks");
	for (int i = 0; i < nres; i++) {
		struct mode_result *r = &res[i];
		const __u64 *c = r->st.counters;

		printf("%-8s %8ld %10.1f %10.1f %10.1f %10.1f %9ld %6ld %8llu %8llu %8llu\n", r->mode, r->w.waits,
		       r->w.p50 / 1e3, r->w.p99 / 1e3, r->w.p999 / 1e3, r->w.max / 1e3, r->w.over_1ms, r->w.over_16ms,
		       (unsigned long long)c[SP_COUNTER_FUTEX_HINTS], (unsigned long long)c[SP_COUNTER_GRANTS],
		       (unsigned long long)c[SP_COUNTER_PICKS]);
	}
	for (int i = 0; i < nres; i++) {
		struct mode_result *r = &res[i];
		const char *m = r->mode;
		const __u64 *c = r->st.counters;

		print_wait_metrics(m, &r->w);
		if (mode_is(m, "on")) {
			printf("M %s_critical_waits %llu\n", m, (unsigned long long)c[SP_COUNTER_CRITICAL_WAITS]);
			printf("M %s_futex_hints %llu\n", m, (unsigned long long)c[SP_COUNTER_FUTEX_HINTS]);
			printf("M %s_futex_hints_rejected %llu\n", m,
			       (unsigned long long)c[SP_COUNTER_FUTEX_HINTS_REJECTED]);
			printf("M %s_grants %llu\n", m, (unsigned long long)c[SP_COUNTER_GRANTS]);
			printf("M %s_handoff_grants %llu\n", m, (unsigned long long)c[SP_COUNTER_HANDOFF_GRANTS]);
			printf("M %s_revoke_released %llu\n", m, (unsigned long long)c[SP_COUNTER_REVOKE_RELEASED]);
			printf("M %s_picks %llu\n", m, (unsigned long long)c[SP_COUNTER_PICKS]);
			printf("M %s_wake_grants %llu\n", m, (unsigned long long)c[SP_COUNTER_WAKE_GRANTS]);
			printf("M %s_wait_turns %llu\n", m, (unsigned long long)c[SP_COUNTER_WAIT_TURNS]);
			printf("M %s_throttles %llu\n", m, (unsigned long long)c[SP_COUNTER_THROTTLES]);
			printf("M %s_fast_track_ms %.1f\n", m, c[SP_COUNTER_FAST_TRACK_NS] / 1e6);
		}
	}
	if (min_reduction >= 0 || max_growth >= 0) {
		struct mode_waits mw[8];

		for (int i = 0; i < nres; i++)
			mw[i] = (struct mode_waits){ res[i].mode, &res[i].w };
		fail |= judge_modes(mw, nres, min_reduction, max_growth, min_waits);
	}
	for (int i = 0; i < nres && max_picks_per_ms >= 0; i++) {
		const __u64 *c = res[i].st.counters;
		double ft_ms = c[SP_COUNTER_FAST_TRACK_NS] / 1e6;

		if (!mode_is(res[i].mode, "on") || ft_ms <= 0)
			continue;
		if (c[SP_COUNTER_PICKS] / ft_ms > max_picks_per_ms) {
			printf("FAIL %s: %llu picks in %.1f fast-tracked ms (at most %.1f per ms): the CPU "
			       "reschedules in a loop around a boosted task\n",
			       res[i].mode, (unsigned long long)c[SP_COUNTER_PICKS], ft_ms,
			       max_picks_per_ms);
			fail = 1;
		}
	}
	if (min_handoffs >= 0) {
		long n = -1;

		for (int i = 0; i < nres; i++)
			if (!strcmp(res[i].mode, "on"))
				n = (long)res[i].st.counters[SP_COUNTER_HANDOFF_GRANTS];
		if (n < min_handoffs) {
			printf("FAIL handoff grants in on: %ld, want at least %ld\n", n, min_handoffs);
			fail = 1;
		}
	}
	for (int i = 0; i < nres && max_wait_ms >= 0; i++) {
		if (!mode_is(res[i].mode, "on") || res[i].w.max <= max_wait_ms * 1e6)
			continue;
		printf("FAIL: %s: a wait of %.1f ms, over the %.0f ms allowed\n", res[i].mode,
		       res[i].w.max / 1e6, max_wait_ms);
		fail = 1;
	}
	return fail;
}
