// SPDX-License-Identifier: GPL-2.0
/*
 * sp-inversion: the priority-inversion scenario SuperPass exists for, on a
 * real kernel lock (/dev/superpass-test's mutex or rwsem).
 *
 * usage: sp-inversion [-l mutex|rwsem] [-m off,on,fifo,on+fifo,off_n10,on_n10] [-d SECS] [-H HOGS]
 *                     [-n HOG_NICE] [-B CPU] [-C CPU] [-w WORK_US] [-o OUTSIDE_US] [-p PERIOD_US] [-r READERS]
 *                     [-R MIN_REDUCTION_PCT] [-T TRACE_SECS] [-X MAX_WAIT_MS]
 *
 * HOGS CPU-bound threads run at nice 0 (HOG_NICE with -n). A blocker (started
 * on CPU with -B, then free to run on any CPU) at nice 19 keeps taking the
 * lock (the mutex, or the rwsem for writing) and computes WORK_US of CPU work
 * inside it, then OUTSIDE_US outside it. A critical thread takes the same
 * lock (the mutex, or the rwsem for reading) every PERIOD_US and records how
 * long each acquisition waited (measured in the kernel by the test device).
 * With -r N, N nice-19 readers hold the rwsem for reading instead and the
 * critical thread takes it for writing (the reader storm).
 *
 * Each mode runs for SECS (with -R, on until it has MIN_WAITS = 1000 waits,
 * the fewest a p99.9 can be read from, for at most 6 x SECS: a mode whose
 * waits are long has few of them; off's inversions of about a second each can
 * fill 97% of a mode): off (SuperPass disabled), on (SuperPass enabled,
 * the critical thread registered as UI), fifo (SuperPass disabled, the
 * critical thread SCHED_FIFO 1: Android's RT-UI baseline), on+fifo (both:
 * SuperPass enabled, the critical thread registered as in on and SCHED_FIFO 1
 * as in fifo; its metrics are onfifo_*) and ext (the critical
 * thread is registered by someone else, e.g. through superpass-service: it
 * prints "critical <pid> <tid>" on stdout, waits for one line on stdin, and
 * leaves SuperPass's enabled state alone). A mode with the suffix _nN runs
 * the critical thread at nice -N (on_n10: as Android runs the UI thread);
 * without it, at nice 0. Per mode it prints waits, p50/p99/p99.9/max wait,
 * waits over 1, 10, 16 (a 60 Hz frame) and 100 ms and the critical thread's
 * CPU share, as a table and as "key value" metric lines. With -R X it fails
 * unless "on" cuts the p99.9 wait by at least X% against "off" of the same
 * variant, and unless on+fifo does too and its longest wait is no longer than
 * on's of the same variant plus ONFIFO_MARGIN_US (see there). With -X M it
 * fails if a mode where SuperPass acts had a wait longer than M ms, or if in
 * none of them a woken critical waiter lost its retry and slept again (the
 * counter resumed_waits: the case such a run exists to exercise). With -T S it
 * captures S seconds of ftrace in each of off, on and fifo (not in the
 * variants) and writes it as <lock>-<mode>.trace to the boot's shared folder
 * for the host (cargo xtask demo saves them to target/vm/; sp_harness.h:
 * trace_print()). With SuperPass on, every wait over 16 ms outside that window
 * freezes a small ftrace recording whose window is written the same way
 * (sp_harness.h: the capture of long waits).
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

static const char *lockname = "mutex";
/* The fewest waits a mode's p99.9 is read from (its nearest rank is then not the maximum). */
#define MIN_WAITS 1000
/*
 * -R: on+fifo's longest wait may exceed on's by this much (us), a 60 Hz
 * frame. A FIFO critical thread runs as soon as its wait ends, where on's
 * competes with the hogs for a CPU, so on+fifo's waits should be no longer;
 * but each mode's longest is one wait, and the host sets it as much as the
 * mode: on a busy host on had two waits of 16.1 and 16.6 ms in a run whose
 * on_n10 never waited 1 ms (its holder and the waiter each runnable for
 * ms while a hog ran). Without the fast track, on+fifo's longest would be
 * fifo's: 1.0-1.2 s in the same run.
 */
#define ONFIFO_MARGIN_US 16000

static int duration = 10, nhogs = 4, work_us = 500, outside_us = -1, period_us = 1000, nreaders;
/* -B: the CPU each blocker starts on (-1: wherever the kernel puts it). */
static int blocker_cpu = -1;
/* -C: the CPU the critical thread is kept on (-1: wherever the kernel puts it). */
static int critical_cpu = -1;
static double min_reduction = -1;
static double trace_secs;
static double max_wait_ms = -1;
static atomic_int stop_mode;
static uint64_t *samples;
static atomic_long nsamples;
/* Holds each blocker completed: a mode starts once each blocker held the lock again. */
static atomic_long blocker_holds[MAX_THREADS];
static int nblockers;

/* The blocker (or one reader of the storm): nice 19, takes the lock, works inside. */
static void *blocker(void *arg)
{
	uint32_t op = (uint32_t)((long)arg & 0xff);
	int idx = (int)((long)arg >> 8);
	int outside = outside_us < 0 ? work_us : outside_us;

	long tid = syscall(SYS_gettid);

	set_nice(19);
	if (blocker_cpu >= 0) {
		cpu_set_t one, all;

		CPU_ZERO(&one);
		CPU_SET(blocker_cpu, &one);
		if (sched_getaffinity(0, sizeof(all), &all) == 0 &&
		    sched_setaffinity(0, sizeof(one), &one) == 0)
			sched_setaffinity(0, sizeof(all), &all);
	}
	while (!atomic_load(&stop_all)) {
		mark("B|%ld|lockhold:spt\n", tid);
		if (lock_op(op, work_us, NULL) < 0) {
			perror("blocker SPT_LOCK");
			break;
		}
		mark("E|%ld\n", tid);
		atomic_fetch_add(&blocker_holds[idx], 1);
		burn(outside * burn_loops_per_us);
	}
	return NULL;
}

/*
 * Waits (at most 5 s) until every blocker has let go of the lock and taken it
 * again. An rwsem names only its last reader, so SuperPass knows a reader
 * only if its probes saw it enter: readers still inside from before the
 * critical thread's registration are unknown to it. On a phone the UI thread
 * is registered long before it contends; so here, after the registration.
 */
static void await_blockers_cycled(void)
{
	long seen[MAX_THREADS];
	uint64_t deadline = now_ns() + 5000000000ULL;

	for (int i = 0; i < nblockers; i++)
		seen[i] = atomic_load(&blocker_holds[i]) + 1;
	for (int i = 0; i < nblockers; i++) {
		while (atomic_load(&blocker_holds[i]) <= seen[i] && now_ns() < deadline)
			usleep(1000);
	}
	if (now_ns() >= deadline)
		fprintf(stderr, "a blocker kept the lock for 5 s after the registration\n");
}

struct mode_result {
	const char *mode;
	struct wait_stats w;
	double cpu_share, hog_rate, secs;
	struct sp_stats st;
};

static const char *mode_name;
static atomic_int critical_ready;

/* Whether @mode registers the critical thread itself (and enables SuperPass): on and on+fifo. */
static int mode_registers(const char *mode)
{
	return mode_is(mode, "on") || mode_is(mode, "on+fifo");
}

/* Whether SuperPass acts in @mode: on, on+fifo or ext. */
static int mode_acts(const char *mode)
{
	return mode_superpass(mode) || mode_is(mode, "on+fifo");
}

static void *critical(void *arg)
{
	uint32_t op = (uint32_t)(long)arg;
	uint64_t *cpu = malloc(sizeof(uint64_t));
	uint64_t t0 = thread_cpu_ns();
	int nice;

	mode_variant(mode_name, &nice);
	set_nice(nice);
	if (critical_cpu >= 0) {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(critical_cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one)) {
			perror("critical thread: sched_setaffinity");
			exit(2);
		}
	}
	if (mode_is(mode_name, "ext")) {
		char go[16];

		/* Someone else registers this thread, then tells us to go. */
		printf("critical %d %ld\n", getpid(), (long)syscall(SYS_gettid));
		fflush(stdout);
		if (!fgets(go, sizeof(go), stdin)) {
			fprintf(stderr, "ext: no go line on stdin\n");
			exit(2);
		}
	}
	/* on+fifo: the policy first, as Android's RT-UI sets it before anyone registers the thread. */
	if (mode_is(mode_name, "fifo") || mode_is(mode_name, "on+fifo")) {
		struct sched_param sp = { .sched_priority = 1 };

		if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
			perror("SCHED_FIFO");
			exit(2);
		}
	}
	if (mode_registers(mode_name)) {
		struct sp_critical_one c = { SP_HDR(struct sp_critical_one), { (int32_t)syscall(SYS_gettid), SP_ROLE_UI } };

		if (sp_ioctl(SP_ADD_CRITICAL, &c, "ADD_CRITICAL"))
			exit(2);
	}
	if (nreaders)
		await_blockers_cycled();
	if (mode_acts(mode_name))
		stall_watch_start((int)syscall(SYS_gettid));
	atomic_store(&critical_ready, 1);
	while (!atomic_load(&stop_mode)) {
		uint64_t w, t, next = now_ns() + period_us * 1000ULL;
		struct timespec ts;

		/* The slice also covers the 10 us hold: the ioctl returns after it. */
		mark("B|%ld|lockwait:spt\n", syscall(SYS_gettid));
		t = now_ns();
		if (lock_op(op, 10, &w) < 0) {
			perror("critical SPT_LOCK");
			break;
		}
		mark("E|%ld\n", syscall(SYS_gettid));
		lw_note(t, w);
		long i = atomic_fetch_add(&nsamples, 1);

		if (i < MAX_SAMPLES)
			samples[i] = w;
		ts.tv_sec = next / 1000000000ULL;
		ts.tv_nsec = next % 1000000000ULL;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	stall_watch_stop();
	if (mode_registers(mode_name)) {
		struct sp_tid t = { SP_HDR(struct sp_tid), (int32_t)syscall(SYS_gettid), 0 };

		sp_ioctl(SP_REMOVE_CRITICAL, &t, "REMOVE_CRITICAL");
	}
	*cpu = thread_cpu_ns() - t0;
	return cpu;
}

static int run_mode(const char *mode, struct mode_result *r)
{
	uint32_t crit_op = strcmp(lockname, "mutex") ? (nreaders ? SPT_OP_WRITE : SPT_OP_READ) : SPT_OP_MUTEX;
	long hog0 = 0, hog1 = 0;
	pthread_t th;
	uint64_t t0, t1, *cpu;
	int tracing = 0, nice, captured, window;
	char tag[64], key[32];

	mode_name = mode;
	memset(r, 0, sizeof(*r));
	r->mode = mode;
	if (mode_variant(mode, &nice) < 0 ||
	    (!mode_is(mode, "off") && !mode_is(mode, "on") && !mode_is(mode, "fifo") &&
	     !mode_is(mode, "on+fifo") && !mode_is(mode, "ext"))) {
		fprintf(stderr, "-m %s: off, on, fifo, on+fifo or ext, with an optional _nN (nice -N)\n",
			mode);
		return -1;
	}
	if (!mode_is(mode, "ext") && sp_enable(mode_registers(mode)))
		return -1;
	sp_reset_stats();
	atomic_store(&nsamples, 0);
	atomic_store(&stop_mode, 0);
	atomic_store(&critical_ready, 0);
	/* The window is for the demo's picture of off / on / fifo, not for on+fifo or the nice variants. */
	window = trace_secs > 0 && !*mode_suffix(mode) &&
		 (mode_is(mode, "off") || mode_is(mode, "on") || mode_is(mode, "fifo"));
	/* A window mode captures its long waits too, but for the window itself and its dump. */
	if (mode_acts(mode))
		lw_start(mode_key(mode, key, sizeof(key)));
	pthread_create(&th, NULL, critical, (void *)(long)crit_op);
	/* ext waits for its registration: the mode's time starts after it. */
	while (!atomic_load(&critical_ready))
		usleep(1000);
	for (int i = 0; i < nhogs; i++)
		hog0 += atomic_load(&hog_iters[i]);
	t0 = now_ns();
	if (window) {
		double t = trace_secs < duration ? trace_secs : duration;

		/* Let the mode settle, then trace a window of it. */
		sleep(1);
		lw_stop();
		tracing = trace_start(4096);
		usleep((useconds_t)(t * 1e6));
		snprintf(tag, sizeof(tag), "%s-%s", lockname, mode);
		if (tracing)
			trace_dump(tag);
		if (mode_acts(mode))
			lw_resume();
		if (duration > t + 1)
			usleep((useconds_t)((duration - t - 1) * 1e6));
	} else {
		sleep(duration);
	}
	/* A p99.9 verdict (-R) needs MIN_WAITS waits per mode. */
	for (int extra = 0; min_reduction >= 0 && atomic_load(&nsamples) < MIN_WAITS &&
			    extra < 5 * duration; extra++)
		sleep(1);
	atomic_store(&stop_mode, 1);
	pthread_join(th, (void **)&cpu);
	t1 = now_ns();
	lw_stop();
	captured = mode_acts(mode) ? lw_captured() : 0;
	for (int i = 0; i < nhogs; i++)
		hog1 += atomic_load(&hog_iters[i]);
	sp_get_stats(&r->st);
	if (!mode_is(mode, "ext"))
		sp_enable(0);

	long n = atomic_load(&nsamples);

	summarize_waits(samples, n > MAX_SAMPLES ? MAX_SAMPLES : n, &r->w);
	r->w.long_captured = captured;
	r->cpu_share = 100.0 * (double)*cpu / (double)(t1 - t0);
	r->secs = (double)(t1 - t0) / 1e9;
	r->hog_rate = (double)(hog1 - hog0) / ((double)(t1 - t0) / 1e9);
	free(cpu);
	return 0;
}

/*
 * Judges each on+fifo mode against off and on of its variant: its p99.9 must
 * be cut by >= @min_reduction % against off's, and its longest wait be no
 * longer than on's plus ONFIFO_MARGIN_US. Prints the figures of both and the
 * metrics onfifo_p999_reduction_pct<variant> and onfifo_max_vs_on_us<variant>.
 */
static int judge_onfifo(const struct mode_result *res, int nres, double min_reduction)
{
	int fail = 0;

	for (int i = 0; i < nres; i++) {
		const char *sfx = mode_suffix(res[i].mode);
		const struct mode_result *off = NULL, *on = NULL, *r = &res[i];
		double red;

		if (!mode_is(r->mode, "on+fifo"))
			continue;
		for (int j = 0; j < nres; j++) {
			if (strcmp(mode_suffix(res[j].mode), sfx))
				continue;
			if (mode_is(res[j].mode, "off"))
				off = &res[j];
			else if (mode_is(res[j].mode, "on"))
				on = &res[j];
		}
		if (!off || !on || !off->w.p999) {
			printf("FAIL cannot judge %s: needs off%s and on%s runs with waits\n", r->mode, sfx, sfx);
			fail = 1;
			continue;
		}
		red = 100.0 * (1.0 - (double)r->w.p999 / (double)off->w.p999);
		printf("M onfifo_p999_reduction_pct%s %.1f\n", sfx, red);
		printf("M onfifo_max_vs_on_us%s %.1f\n", sfx, ((double)r->w.max - (double)on->w.max) / 1e3);
		printf("%s: p99.9 wait off %.1f us (%ld waits) -> %.1f us (%ld waits): %.1f%% reduction; "
		       "longest wait %.1f us against on%s's %.1f us (%ld waits)\n",
		       r->mode, off->w.p999 / 1e3, off->w.waits, r->w.p999 / 1e3, r->w.waits, red,
		       r->w.max / 1e3, sfx, on->w.max / 1e3, on->w.waits);
		if (red < min_reduction) {
			printf("FAIL %s p99.9 reduction %.1f%% < %.0f%%\n", r->mode, red, min_reduction);
			fail = 1;
		}
		if (r->w.max > on->w.max + ONFIFO_MARGIN_US * 1000ULL) {
			printf("FAIL %s's longest wait %.1f us is more than %d us over on%s's %.1f us\n", r->mode,
			       r->w.max / 1e3, ONFIFO_MARGIN_US, sfx, on->w.max / 1e3);
			fail = 1;
		}
		if (r->w.waits < MIN_WAITS) {
			printf("FAIL %s: too few waits for a p99.9 (%ld; need >= %d)\n", r->mode, r->w.waits,
			       MIN_WAITS);
			fail = 1;
		}
	}
	return fail;
}

int main(int argc, char **argv)
{
	char modes_arg[128] = "off,on,fifo", key[32];
	struct mode_result res[8];
	int nres = 0, opt, fail = 0;
	pthread_t hogs[MAX_THREADS], blockers[MAX_THREADS];

	while ((opt = getopt(argc, argv, "l:m:d:H:n:B:C:w:o:p:r:R:T:X:")) != -1) {
		switch (opt) {
		case 'l': lockname = optarg; break;
		case 'm': snprintf(modes_arg, sizeof(modes_arg), "%s", optarg); break;
		case 'd': duration = atoi(optarg); break;
		case 'H': nhogs = atoi(optarg); break;
		case 'n': hog_nice = atoi(optarg); break;
		case 'B': blocker_cpu = atoi(optarg); break;
		case 'C': critical_cpu = atoi(optarg); break;
		case 'w': work_us = atoi(optarg); break;
		case 'o': outside_us = atoi(optarg); break;
		case 'p': period_us = atoi(optarg); break;
		case 'r': nreaders = atoi(optarg); break;
		case 'R': min_reduction = atof(optarg); break;
		case 'T': trace_secs = atof(optarg); break;
		case 'X': max_wait_ms = atof(optarg); break;
		default:
			fprintf(stderr, "usage: see the comment at the top of sp-inversion.c\n");
			return 2;
		}
	}
	if (strcmp(lockname, "mutex") && strcmp(lockname, "rwsem")) {
		fprintf(stderr, "-l: mutex or rwsem\n");
		return 2;
	}
	if (nhogs > MAX_THREADS || nreaders > MAX_THREADS)
		return 2;
	spfd = open("/dev/superpass", O_RDWR);
	tfd = open("/dev/superpass-test", O_RDWR);
	if (spfd < 0 || tfd < 0) {
		perror("open /dev/superpass{,-test} (load superpass.ko and sp_testdev.ko)");
		return 2;
	}
	samples = calloc(MAX_SAMPLES, sizeof(uint64_t));
	calibrate();
	for (long i = 0; i < nhogs; i++)
		pthread_create(&hogs[i], NULL, hog, (void *)i);
	nblockers = nreaders ? nreaders : 1;
	for (int i = 0; i < nblockers; i++) {
		uint32_t op = strcmp(lockname, "mutex") ? (nreaders ? SPT_OP_READ : SPT_OP_WRITE) : SPT_OP_MUTEX;

		pthread_create(&blockers[i], NULL, blocker, (void *)((long)op | (long)i << 8));
	}
	sleep(1);
	for (char *save, *m = strtok_r(modes_arg, ",", &save); m && nres < 8; m = strtok_r(NULL, ",", &save)) {
		if (run_mode(m, &res[nres]))
			return 1;
		nres++;
	}
	atomic_store(&stop_all, 1);
	for (int i = 0; i < nhogs; i++)
		pthread_join(hogs[i], NULL);
	for (int i = 0; i < nblockers; i++)
		pthread_join(blockers[i], NULL);

	printf("\nInversion scenario: %s, %d hogs (nice %d), %s%d us of work inside the lock",
	       nreaders ? "rwsem reader storm" : lockname, nhogs, hog_nice,
	       nreaders ? "readers x" : "blocker: ", nreaders ? nreaders : work_us);
	if (!nreaders)
		printf(" and %d us outside", outside_us < 0 ? work_us : outside_us);
	printf(" (nice 19), critical thread every %d us, %d s per mode", period_us, duration);
	printf(min_reduction >= 0 ? " (longer until %d waits, at most %d s)\n" : "\n", MIN_WAITS,
	       6 * duration);
	if (nreaders)
		printf("  (%d readers, each %d us inside)\n", nreaders, work_us);
	printf("%-11s %8s %10s %10s %10s %10s %9s %6s %9s %8s %8s\n", "mode", "waits", "p50(us)", "p99(us)",
	       "p99.9(us)", "max(us)", ">1ms", ">16ms", "crit.cpu%", "grants", "picks");
	for (int i = 0; i < nres; i++) {
		struct mode_result *r = &res[i];

		printf("%-11s %8ld %10.1f %10.1f %10.1f %10.1f %9ld %6ld %9.2f %8llu %8llu\n", r->mode, r->w.waits,
		       r->w.p50 / 1e3, r->w.p99 / 1e3, r->w.p999 / 1e3, r->w.max / 1e3, r->w.over_1ms,
		       r->w.over_16ms, r->cpu_share,
		       (unsigned long long)r->st.counters[SP_COUNTER_GRANTS], (unsigned long long)r->st.counters[SP_COUNTER_PICKS]);
	}
	for (int i = 0; i < nres; i++) {
		struct mode_result *r = &res[i];
		const char *m = mode_key(r->mode, key, sizeof(key));

		print_wait_metrics(m, &r->w);
		if (mode_is(r->mode, "on+fifo")) {
			printf("M %s_long_captured %ld\n", m, r->w.long_captured);
			printf("M %s_long_uncaptured %ld\n", m, r->w.over_16ms - r->w.long_captured);
		}
		printf("M %s_secs %.1f\n", m, r->secs);
		printf("M %s_crit_cpu_pct %.2f\n", m, r->cpu_share);
		printf("M %s_hog_iters_per_s %.0f\n", m, r->hog_rate);
		if (mode_acts(r->mode)) {
			const __u64 *c = r->st.counters;

			printf("M %s_critical_waits %llu\n", m, (unsigned long long)c[SP_COUNTER_CRITICAL_WAITS]);
			printf("M %s_blockers_found %llu\n", m, (unsigned long long)c[SP_COUNTER_BLOCKERS_FOUND]);
			printf("M %s_grants %llu\n", m, (unsigned long long)c[SP_COUNTER_GRANTS]);
			printf("M %s_picks %llu\n", m, (unsigned long long)c[SP_COUNTER_PICKS]);
			printf("M %s_preempts %llu\n", m, (unsigned long long)c[SP_COUNTER_PREEMPTS]);
			printf("M %s_missed_readers %llu\n", m, (unsigned long long)c[SP_COUNTER_MISSED_READERS]);
			printf("M %s_revoke_budget %llu\n", m, (unsigned long long)c[SP_COUNTER_REVOKE_BUDGET]);
			printf("M %s_throttles %llu\n", m, (unsigned long long)c[SP_COUNTER_THROTTLES]);
			printf("M %s_deferred_grants %llu\n", m, (unsigned long long)c[SP_COUNTER_DEFERRED_GRANTS]);
			printf("M %s_resumed_waits %llu\n", m, (unsigned long long)c[SP_COUNTER_RESUMED_WAITS]);
			printf("M %s_select_idle %llu\n", m, (unsigned long long)c[SP_COUNTER_SELECT_IDLE]);
			printf("M %s_select_home %llu\n", m, (unsigned long long)c[SP_COUNTER_SELECT_HOME]);
			printf("M %s_uclamp_boosts %llu\n", m, (unsigned long long)c[SP_COUNTER_UCLAMP_BOOSTS]);
			printf("M %s_wake_grants %llu\n", m, (unsigned long long)c[SP_COUNTER_WAKE_GRANTS]);
			printf("M %s_wait_turns %llu\n", m, (unsigned long long)c[SP_COUNTER_WAIT_TURNS]);
			printf("M %s_revoke_turn_over %llu\n", m, (unsigned long long)c[SP_COUNTER_REVOKE_TURN_OVER]);
			printf("M %s_stranded_picks %llu\n", m, (unsigned long long)c[SP_COUNTER_STRANDED_PICKS]);
			printf("M %s_pushes %llu\n", m, (unsigned long long)c[SP_COUNTER_PUSHES]);
			printf("M %s_push_backs %llu\n", m, (unsigned long long)c[SP_COUNTER_PUSH_BACKS]);
			printf("M %s_fast_track_ms %.1f\n", m, c[SP_COUNTER_FAST_TRACK_NS] / 1e6);
			if (c[SP_COUNTER_CRITICAL_WAITS])
				printf("M %s_blockers_per_wait %.2f\n", m,
				       (double)c[SP_COUNTER_BLOCKERS_FOUND] / (double)c[SP_COUNTER_CRITICAL_WAITS]);
		}
	}
	struct mode_waits mw[8];

	for (int i = 0; i < nres; i++)
		mw[i] = (struct mode_waits){ res[i].mode, &res[i].w, res[i].st.counters[SP_COUNTER_RESUMED_WAITS] };
	if (min_reduction >= 0) {
		fail |= judge_modes(mw, nres, min_reduction, -1, MIN_WAITS);
		fail |= judge_onfifo(res, nres, min_reduction);
	}
	if (max_wait_ms >= 0)
		fail |= judge_lost_retries(mw, nres, mode_acts, max_wait_ms);
	return fail;
}
