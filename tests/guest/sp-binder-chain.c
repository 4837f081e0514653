// SPDX-License-Identifier: GPL-2.0
/*
 * sp-binder-chain: a critical thread's synchronous binder calls, through the
 * server thread that serves them to what that thread waits for.
 *
 * usage: sp-binder-chain [-t c|rust] [-D BINDERFS] [-s chain|pool] [-m off,on,off_n10,on_n10]
 *                        [-d SECS] [-H HOGS] [-w WORK_US] [-p PERIOD_US] [-R MIN_REDUCTION_PCT]
 *
 * A server process takes the context manager of a new binder device and runs
 * its pool; a client process's critical thread calls it (handle 0, a
 * synchronous BC_TRANSACTION) every PERIOD_US and records each call's round
 * trip, from the ioctl that sends it to its BR_REPLY. HOGS nice-0 threads
 * compete for the CPUs. The test kernel's C binder has none of ACK's priority
 * inheritance (ACK sets the server thread to the caller's nice while it runs
 * the call; Debian's 6.12 binder keeps the thread's own): the pool threads
 * run at a fixed nice, and SuperPass sees the calls only through ACK's
 * binder hooks (vm/patches/0010).
 *
 *   chain  Two pool threads at nice -10 (a call's inherited priority). Each
 *          call takes /dev/superpass-test's mutex for 10 us, which a nice-19
 *          thread of the server keeps taking for WORK_US of work: the caller
 *          waits on the server thread, which waits on the holder.
 *   pool   One pool thread, at nice 10: a nice-10 client keeps it busy with
 *          calls of WORK_US of work each, so the critical call is queued (no
 *          thread is free) behind a call from the background.
 *
 * Transports: c (the default) calls through the kernel's C binder on a new
 * device of the binderfs mounted at BINDERFS. rust calls through the Rust
 * Binder stand-in of /dev/superpass-test (SPT_RB_*: this kernel has no Rust
 * Binder, so sp_testdev.ko makes the calls and fires Rust Binder's vendor
 * hooks as Rust Binder does), and then the rust_binder mechanism must be
 * active; Rust Binder reports no queued call, so only the chain scenario.
 *
 * Modes: off (SuperPass disabled) and on (enabled, the critical thread
 * registered as UI); _nN runs the critical thread at nice -N. Prints each
 * mode's waits as the other inversion programs do (M lines). It fails unless
 * the binder mechanism is active and, in every on mode, the critical calls
 * were tracked as waits and SuperPass granted; with -R X also unless on cuts
 * the p99.9 round trip by X% against off.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "superpass_uapi.h"
#include "superpass_testdev.h"
#include "sp_harness.h"
#include "sp_binder.h"

#define MAX_SAMPLES (1 << 20)
#define MIN_WAITS 1000
#define CODE_CRITICAL 1
#define CODE_BACKGROUND 2

static const char *scenario = "chain";
static int rust;	/* -t rust: the Rust Binder stand-in */
static int duration = 10, nhogs = 4, work_us = 500, period_us = 1000;
static double min_reduction = -1;
static uint64_t *samples;
static atomic_long nsamples;
static atomic_int stop_mode;

/* ---- the server process ---- */

static int server_fd, pool_nice;

/* What a pool thread does for a call before it replies. */
static void handle(uint32_t code)
{
	if (code == CODE_CRITICAL && !strcmp(scenario, "chain"))
		lock_op(SPT_OP_MUTEX, 10, NULL);
	else if (code == CODE_BACKGROUND)
		burn(work_us * burn_loops_per_us);
}

/* A server thread of the Rust Binder stand-in: takes calls and replies until killed. */
static void rust_loop(void)
{
	for (;;) {
		struct spt_rb_serve s = { .timeout_ms = 1000 };

		if (ioctl(tfd, SPT_RB_SERVE, &s) < 0) {
			if (errno == ETIMEDOUT || errno == EINTR)
				continue;
			perror("SPT_RB_SERVE");
			exit(1);
		}
		handle(s.code);
		if (ioctl(tfd, SPT_RB_REPLY, (unsigned long)s.cookie) < 0 && errno != ENOENT) {
			perror("SPT_RB_REPLY");
			exit(1);
		}
	}
}

/* One synchronous call with this transport; nonzero on failure. */
static int call(int fd, uint32_t code)
{
	struct spt_rb_call c = { .code = code, .timeout_ms = 10000 };

	if (!rust)
		return sp_binder_call(fd, code);
	return ioctl(tfd, SPT_RB_CALL, &c) < 0;
}

/* Serves calls until the process is killed: a pool thread of the context manager. */
static void *looper(void *arg)
{
	set_nice(pool_nice);
	if (rust)
		rust_loop();
	sp_binder_loop(server_fd, handle);
	return NULL;
}

/* The server's low-priority thread that keeps taking the mutex its calls need. */
static void *holder(void *arg)
{
	long tid = syscall(SYS_gettid);

	set_nice(19);
	for (;;) {
		mark("B|%ld|lockhold:spt\n", tid);
		lock_op(SPT_OP_MUTEX, work_us, NULL);
		mark("E|%ld\n", tid);
		burn(100 * burn_loops_per_us);
	}
	return NULL;
}

static void server(int nthreads)
{
	pthread_t th;

	/* The holder's marks, for the captures the client's long calls freeze. */
	atomic_store(&marker_fd, open(TR "trace_marker", O_WRONLY | O_CLOEXEC));
	if (!rust) {
		server_fd = sp_binder_open();
		if (sp_binder_become_manager(server_fd))
			exit(2);
	}
	if (!strcmp(scenario, "chain"))
		pthread_create(&th, NULL, holder, NULL);
	for (int i = 1; i < nthreads; i++)
		pthread_create(&th, NULL, looper, NULL);
	looper(NULL);
}

/* ---- the client process ---- */

static int client_fd;
static const char *mode_name;
static atomic_int critical_ready;

/* The background client of the pool scenario: nice 10, one call after another. */
static void *background(void *arg)
{
	int fd = rust ? -1 : sp_binder_open();

	set_nice(10);
	while (!atomic_load(&stop_all))
		if (call(fd, CODE_BACKGROUND))
			break;
	return NULL;
}

static void *critical(void *arg)
{
	int nice;

	mode_variant(mode_name, &nice);
	set_nice(nice);
	if (mode_is(mode_name, "on") && sp_critical_self(1))
		exit(2);
	atomic_store(&critical_ready, 1);
	while (!atomic_load(&stop_mode)) {
		uint64_t t, next = now_ns() + period_us * 1000ULL, w;

		/* The itemizer (superpass-trace) reads each call as a wait between these marks. */
		mark("B|%ld|lockwait:binder\n", syscall(SYS_gettid));
		t = now_ns();
		if (call(client_fd, CODE_CRITICAL)) {
			fprintf(stderr, "critical call failed\n");
			exit(1);
		}
		w = now_ns() - t;
		mark("E|%ld\n", syscall(SYS_gettid));
		lw_note(t, w);
		long i = atomic_fetch_add(&nsamples, 1);

		if (i < MAX_SAMPLES)
			samples[i] = w;
		sleep_until_mono(next);
	}
	if (mode_is(mode_name, "on"))
		sp_critical_self(0);
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
	char key[32];
	int nice;

	if (mode_variant(mode, &nice) < 0 || (!mode_is(mode, "off") && !mode_is(mode, "on"))) {
		fprintf(stderr, "-m %s: off or on, with an optional _nN (nice -N)\n", mode);
		return -1;
	}
	memset(r, 0, sizeof(*r));
	r->mode = mode;
	mode_name = mode;
	if (sp_enable(mode_is(mode, "on")))
		return -1;
	sp_reset_stats();
	atomic_store(&nsamples, 0);
	atomic_store(&stop_mode, 0);
	atomic_store(&critical_ready, 0);
	if (mode_is(mode, "on"))
		lw_start(mode_key(mode, key, sizeof(key)));
	pthread_create(&th, NULL, critical, NULL);
	while (!atomic_load(&critical_ready))
		usleep(1000);
	sleep(duration);
	for (int extra = 0; min_reduction >= 0 && atomic_load(&nsamples) < MIN_WAITS &&
			    extra < 5 * duration; extra++)
		sleep(1);
	atomic_store(&stop_mode, 1);
	pthread_join(th, NULL);
	lw_stop();
	r->w.long_captured = mode_is(mode, "on") ? lw_captured() : 0;
	sp_get_stats(&r->st);
	sp_enable(0);

	long n = atomic_load(&nsamples);
	long captured = r->w.long_captured;

	summarize_waits(samples, n > MAX_SAMPLES ? MAX_SAMPLES : n, &r->w);
	r->w.long_captured = captured;
	return 0;
}

int main(int argc, char **argv)
{
	char modes_arg[128] = "off,on", key[32];
	const char *binderfs = NULL;
	struct mode_result res[8];
	struct sp_version ver = { SP_HDR(struct sp_version) };
	pthread_t hogs[MAX_THREADS], bg;
	int nres = 0, opt, fail = 0;
	__u64 mech;
	pid_t srv;

	while ((opt = getopt(argc, argv, "t:D:s:m:d:H:w:p:R:")) != -1) {
		switch (opt) {
		case 't':
			if (strcmp(optarg, "c") && strcmp(optarg, "rust")) {
				fprintf(stderr, "-t %s: c or rust\n", optarg);
				return 2;
			}
			rust = !strcmp(optarg, "rust");
			break;
		case 'D': binderfs = optarg; break;
		case 's': scenario = optarg; break;
		case 'm': snprintf(modes_arg, sizeof(modes_arg), "%s", optarg); break;
		case 'd': duration = atoi(optarg); break;
		case 'H': nhogs = atoi(optarg); break;
		case 'w': work_us = atoi(optarg); break;
		case 'p': period_us = atoi(optarg); break;
		case 'R': min_reduction = atof(optarg); break;
		default:
			fprintf(stderr, "usage: see the comment at the top of sp-binder-chain.c\n");
			return 2;
		}
	}
	if ((!rust && !binderfs) || (strcmp(scenario, "chain") && strcmp(scenario, "pool")) ||
	    (rust && strcmp(scenario, "chain")) || nhogs > MAX_THREADS) {
		fprintf(stderr, "-t c needs -D BINDERFS; -s chain or pool, and only chain with -t rust\n");
		return 2;
	}
	if (sp_open_devices() || (!rust && sp_binder_make_device(binderfs, "spchain")))
		return 2;
	calibrate();
	pool_nice = strcmp(scenario, "chain") ? 10 : -10;
	srv = fork();
	if (srv == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		server(strcmp(scenario, "chain") ? 1 : 2);
		_exit(1);
	}
	samples = calloc(MAX_SAMPLES, sizeof(uint64_t));
	client_fd = rust ? -1 : sp_binder_open();
	/* The server is ready once a call comes back. */
	for (int i = 0; call(client_fd, 0); i++) {
		if (i == 50) {
			fprintf(stderr, "the server never answered\n");
			kill(srv, SIGKILL);
			return 2;
		}
		usleep(100000);
	}
	for (long i = 0; i < nhogs; i++)
		pthread_create(&hogs[i], NULL, hog, (void *)i);
	if (!strcmp(scenario, "pool"))
		pthread_create(&bg, NULL, background, NULL);
	sleep(1);
	for (char *save, *m = strtok_r(modes_arg, ",", &save); m && nres < 8;
	     m = strtok_r(NULL, ",", &save)) {
		if (run_mode(m, &res[nres])) {
			kill(srv, SIGKILL);
			return 1;
		}
		nres++;
	}
	atomic_store(&stop_all, 1);
	for (int i = 0; i < nhogs; i++)
		pthread_join(hogs[i], NULL);
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	if (!strcmp(scenario, "pool"))
		pthread_join(bg, NULL);
	sp_ioctl(SP_GET_VERSION, &ver, "GET_VERSION");
	mech = rust ? SP_MECH_RUST_BINDER : SP_MECH_BINDER;

	printf("\n%s %s: %d hogs (nice 0), %s, critical call every %d us, %d s per mode\n",
	       rust ? "Rust Binder (stand-in)" : "Binder", scenario, nhogs,
	       strcmp(scenario, "chain") ?
		       "one pool thread (nice 10) kept busy by a nice-10 client's calls" :
		       "two pool threads (nice -10) whose calls take a mutex a nice-19 thread holds",
	       period_us, duration);
	printf("  (%d us of work per hold or background call)\n", work_us);
	printf("%-8s %8s %10s %10s %10s %10s %9s %6s %8s %8s\n", "mode", "calls", "p50(us)", "p99(us)",
	       "p99.9(us)", "max(us)", ">1ms", ">16ms", "grants", "chain");
	for (int i = 0; i < nres; i++) {
		struct mode_result *r = &res[i];

		printf("%-8s %8ld %10.1f %10.1f %10.1f %10.1f %9ld %6ld %8llu %8llu\n", r->mode,
		       r->w.waits, r->w.p50 / 1e3, r->w.p99 / 1e3, r->w.p999 / 1e3, r->w.max / 1e3,
		       r->w.over_1ms, r->w.over_16ms,
		       (unsigned long long)r->st.counters[SP_COUNTER_GRANTS],
		       (unsigned long long)r->st.counters[SP_COUNTER_CHAIN_WAITS]);
	}
	printf("M %s_active %d\n", rust ? "rust_binder" : "binder", !!(ver.active_mask & mech));
	for (int i = 0; i < nres; i++) {
		struct mode_result *r = &res[i];
		const char *m = mode_key(r->mode, key, sizeof(key));
		const __u64 *c = r->st.counters;

		print_wait_metrics(m, &r->w);
		if (!mode_is(r->mode, "on"))
			continue;
		printf("M %s_critical_waits %llu\n", m, (unsigned long long)c[SP_COUNTER_CRITICAL_WAITS]);
		printf("M %s_blockers_found %llu\n", m, (unsigned long long)c[SP_COUNTER_BLOCKERS_FOUND]);
		printf("M %s_chain_waits %llu\n", m, (unsigned long long)c[SP_COUNTER_CHAIN_WAITS]);
		printf("M %s_grants %llu\n", m, (unsigned long long)c[SP_COUNTER_GRANTS]);
		printf("M %s_picks %llu\n", m, (unsigned long long)c[SP_COUNTER_PICKS]);
		if (!c[SP_COUNTER_CRITICAL_WAITS] || !c[SP_COUNTER_GRANTS]) {
			printf("FAIL %s: %llu critical waits, %llu grants: the calls were not followed\n",
			       r->mode, (unsigned long long)c[SP_COUNTER_CRITICAL_WAITS],
			       (unsigned long long)c[SP_COUNTER_GRANTS]);
			fail = 1;
		}
	}
	if (!(ver.active_mask & mech)) {
		printf("FAIL the %s mechanism is not active (active_mask 0x%llx)\n",
		       rust ? "rust_binder" : "binder", (unsigned long long)ver.active_mask);
		fail = 1;
	}
	if (min_reduction >= 0) {
		struct mode_waits mw[8];

		for (int i = 0; i < nres; i++)
			mw[i] = (struct mode_waits){ res[i].mode, &res[i].w };
		fail |= judge_modes(mw, nres, min_reduction, -1, MIN_WAITS);
	}
	return fail;
}
