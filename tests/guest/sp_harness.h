/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sp_harness.h: what the inversion programs (sp-inversion, sp-follow, sp-futex)
 * share: clocks, CPU burning and its calibration, the CPU hogs, the
 * /dev/superpass and test-device calls they make, the wait metrics, the
 * modes' nice variants, the off/on p99.9 verdict, ftrace captures and the
 * capture of each long wait with SuperPass on. Header-only: each guest
 * program is one .c file built on its own.
 */
#ifndef SP_HARNESS_H
#define SP_HARNESS_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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

#define MAX_THREADS 64

/* /dev/superpass and /dev/superpass-test, opened by main(). */
static int spfd, tfd;
/* Set once to stop every thread of the run. */
static atomic_int stop_all;
/* Loops done by each hog, for the hogs' rate. */
static atomic_long hog_iters[MAX_THREADS];
/* The hogs' nice value (0 unless a test asks for background hogs). */
static int hog_nice;

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

/* Zeroes SuperPass's counters, so that a mode's figures are its own. */
static __attribute__((unused)) int sp_reset_stats(void)
{
	struct sp_hdr h = SP_HDR(struct sp_hdr);

	return sp_ioctl(SP_RESET_STATS, &h, "RESET_STATS");
}

static __attribute__((unused)) int sp_get_stats(struct sp_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->hdr = SP_HDR(struct sp_stats);
	return sp_ioctl(SP_GET_STATS, s, "GET_STATS");
}

/* Registers the calling thread as a critical UI thread (@add), or removes it. */
static __attribute__((unused)) int sp_critical_self(int add)
{
	int32_t tid = (int32_t)syscall(SYS_gettid);

	if (add) {
		struct sp_critical_one c = { SP_HDR(struct sp_critical_one), { tid, SP_ROLE_UI } };

		return sp_ioctl(SP_ADD_CRITICAL, &c, "ADD_CRITICAL");
	}
	struct sp_tid t = { SP_HDR(struct sp_tid), tid, 0 };

	return sp_ioctl(SP_REMOVE_CRITICAL, &t, "REMOVE_CRITICAL");
}

/* Opens /dev/superpass and /dev/superpass-test into spfd and tfd; nonzero on failure. */
static __attribute__((unused)) int sp_open_devices(void)
{
	spfd = open("/dev/superpass", O_RDWR);
	tfd = open("/dev/superpass-test", O_RDWR);
	if (spfd < 0 || tfd < 0) {
		perror("open /dev/superpass{,-test} (load superpass.ko and sp_testdev.ko)");
		return -1;
	}
	return 0;
}

/* Sleeps until @at (ns, CLOCK_MONOTONIC): a periodic loop's next start. */
static __attribute__((unused)) void sleep_until_mono(uint64_t at)
{
	struct timespec ts = { .tv_sec = at / 1000000000ULL, .tv_nsec = at % 1000000000ULL };

	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
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

	set_nice(hog_nice);
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

/* A wait longer than this drops a 60 Hz frame (16.7 ms): the *_over_16ms metrics. */
#define FRAME_NS 16000000ULL

/* One mode's waits, summarised; long_captured: waits over 16 ms captured by lw_note(). */
struct wait_stats {
	long waits, over_1ms, over_10ms, over_16ms, over_100ms, long_captured;
	uint64_t p50, p99, p999, max;
};

/* Sorts the @n waits (ns) of @v and summarises them into @s. */
static __attribute__((unused)) void summarize_waits(uint64_t *v, long n, struct wait_stats *s)
{
	memset(s, 0, sizeof(*s));
	qsort(v, n, sizeof(*v), cmp_u64);
	s->waits = n;
	for (long i = 0; i < n; i++) {
		s->over_1ms += v[i] > 1000000;
		s->over_10ms += v[i] > 10000000;
		s->over_16ms += v[i] > FRAME_NS;
		s->over_100ms += v[i] > 100000000;
	}
	s->p50 = pct(v, n, 0.5);
	s->p99 = pct(v, n, 0.99);
	s->p999 = pct(v, n, 0.999);
	s->max = n ? v[n - 1] : 0;
}

/*
 * A mode is a base mode (off, on, fifo, ext; sp-inversion also on+fifo) with
 * an optional suffix _nN that runs the critical thread at nice -N: on_n10 is
 * "on" with the critical thread at nice -10, as Android runs the UI thread
 * and RenderThread. Without it the critical thread runs at nice 0, the
 * harsher case. Returns the base's length, or -1 if the suffix is malformed;
 * sets *nice.
 */
static __attribute__((unused)) int mode_variant(const char *mode, int *nice)
{
	const char *s = strstr(mode, "_n");
	char *end;
	long n;

	*nice = 0;
	if (!s)
		return (int)strlen(mode);
	n = strtol(s + 2, &end, 10);
	if (end == s + 2 || *end || n < 1 || n > 20)
		return -1;
	*nice = (int)-n;
	return (int)(s - mode);
}

/* Whether @mode is @base, in either variant. */
static __attribute__((unused)) int mode_is(const char *mode, const char *base)
{
	int nice, n = mode_variant(mode, &nice);

	return n >= 0 && strlen(base) == (size_t)n && !strncmp(mode, base, n);
}

/* The mode's variant suffix: "" or "_nN". */
static __attribute__((unused)) const char *mode_suffix(const char *mode)
{
	const char *s = strstr(mode, "_n");

	return s ? s : "";
}

/*
 * @mode as a metric prefix and capture tag: the mode without its '+', so that
 * on+fifo (SuperPass on and the critical threads SCHED_FIFO) is onfifo and
 * on+fifo_n10 is onfifo_n10; other modes unchanged. Writes into @buf.
 */
static __attribute__((unused)) const char *mode_key(const char *mode, char *buf, size_t len)
{
	size_t j = 0;

	for (size_t i = 0; mode[i] && j + 1 < len; i++)
		if (mode[i] != '+')
			buf[j++] = mode[i];
	buf[j] = 0;
	return buf;
}

/* Whether SuperPass acts in @mode: on, or ext (registered by someone else). */
static __attribute__((unused)) int mode_superpass(const char *mode)
{
	return mode_is(mode, "on") || mode_is(mode, "ext");
}

/* Prints @s as "M <mode>_<key> value" metric lines, the same keys in every program. */
static __attribute__((unused)) void print_wait_metrics(const char *mode, const struct wait_stats *s)
{
	printf("M %s_waits %ld\n", mode, s->waits);
	printf("M %s_p50_us %.1f\n", mode, s->p50 / 1e3);
	printf("M %s_p99_us %.1f\n", mode, s->p99 / 1e3);
	printf("M %s_p999_us %.1f\n", mode, s->p999 / 1e3);
	printf("M %s_max_us %.1f\n", mode, s->max / 1e3);
	printf("M %s_over_1ms %ld\n", mode, s->over_1ms);
	printf("M %s_over_10ms %ld\n", mode, s->over_10ms);
	printf("M %s_over_16ms %ld\n", mode, s->over_16ms);
	printf("M %s_over_100ms %ld\n", mode, s->over_100ms);
	if (mode_superpass(mode)) {
		printf("M %s_long_captured %ld\n", mode, s->long_captured);
		printf("M %s_long_uncaptured %ld\n", mode, s->over_16ms - s->long_captured);
	}
}

/*
 * Judges SuperPass on against off by their p99.9 waits (ns) and prints the
 * p999_reduction_pct metric (with the variant's suffix, e.g.
 * p999_reduction_pct_n10) and the sentence behind it. Returns nonzero if on
 * cuts the p99.9 by less than min_reduction percent (checked when >= 0), lies
 * more than max_growth percent above off (checked when >= 0), or either run
 * has fewer than min_waits waits, too few for its p99.9 to be one.
 */
static __attribute__((unused)) int p999_verdict(const char *variant, uint64_t off_p999, long off_waits,
						uint64_t on_p999, long on_waits, double min_reduction,
						double max_growth, long min_waits)
{
	int fail = 0, nice;
	double red;
	char who[40] = "";

	if (*variant && mode_variant(variant, &nice) >= 0)
		snprintf(who, sizeof(who), " (critical thread at nice %d)", nice);
	if (!off_p999) {
		printf("FAIL%s cannot compare: off had no waits\n", who);
		return 1;
	}
	red = 100.0 * (1.0 - (double)on_p999 / (double)off_p999);
	printf("M p999_reduction_pct%s %.1f\n", variant, red);
	printf("p99.9 wait%s: off %.1f us (%ld waits) -> on %.1f us (%ld waits): %.1f%% reduction\n", who,
	       off_p999 / 1e3, off_waits, on_p999 / 1e3, on_waits, red);
	if (min_reduction >= 0 && red < min_reduction) {
		printf("FAIL%s p99.9 reduction %.1f%% < %.0f%%\n", who, red, min_reduction);
		fail = 1;
	}
	if (max_growth >= 0 && -red > max_growth) {
		printf("FAIL%s on's p99.9 is %.1f%% above off's; at most %.0f%% allowed\n", who, -red,
		       max_growth);
		fail = 1;
	}
	if (off_waits < min_waits || on_waits < min_waits) {
		printf("FAIL%s too few waits for a p99.9 (off %ld, on %ld; need >= %ld)\n", who, off_waits,
		       on_waits, min_waits);
		fail = 1;
	}
	return fail;
}

/* A mode's name, waits and lost retries resumed, for judge_modes() and judge_lost_retries(). */
struct mode_waits {
	const char *mode;
	const struct wait_stats *w;
	unsigned long long resumed;
};

/*
 * Judges every SuperPass-on mode (on or ext, either variant) against off of
 * its variant with p999_verdict(). Returns nonzero if a verdict failed, an on
 * mode has no off to compare with, or no mode was judged.
 */
static __attribute__((unused)) int judge_modes(const struct mode_waits *m, int n, double min_reduction,
					       double max_growth, long min_waits)
{
	int fail = 0, judged = 0;

	for (int i = 0; i < n; i++) {
		const char *sfx = mode_suffix(m[i].mode);
		const struct mode_waits *off = NULL;

		if (!mode_superpass(m[i].mode))
			continue;
		for (int j = 0; j < n; j++)
			if (mode_is(m[j].mode, "off") && !strcmp(mode_suffix(m[j].mode), sfx))
				off = &m[j];
		if (!off) {
			printf("FAIL cannot compare %s: no off%s run\n", m[i].mode, sfx);
			fail = 1;
			continue;
		}
		fail |= p999_verdict(sfx, off->w->p999, off->w->waits, m[i].w->p999, m[i].w->waits,
				     min_reduction, max_growth, min_waits);
		judged++;
	}
	if (!judged) {
		printf("FAIL cannot compare: need off and on runs\n");
		fail = 1;
	}
	return fail;
}

/*
 * The lost-retry check (-X): every wait of a mode in which SuperPass acts
 * (@acts) is under @max_ms, and in those modes at least one woken waiter lost
 * its retry (resumed_waits), else the run exercised nothing.
 */
static __attribute__((unused)) int judge_lost_retries(const struct mode_waits *m, int n,
						      int (*acts)(const char *mode), double max_ms)
{
	unsigned long long resumed = 0;
	int fail = 0;

	for (int i = 0; i < n; i++) {
		if (!acts(m[i].mode))
			continue;
		resumed += m[i].resumed;
		if (m[i].w->max <= max_ms * 1e6)
			continue;
		printf("FAIL: %s: a wait of %.1f ms, over the %.0f ms allowed\n", m[i].mode, m[i].w->max / 1e6,
		       max_ms);
		fail = 1;
	}
	if (!resumed) {
		printf("FAIL: no woken waiter lost its retry: nothing was exercised\n");
		fail = 1;
	}
	return fail;
}

#define TR "/sys/kernel/tracing/"

static __attribute__((unused)) void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	if (fd >= 0) {
		if (write(fd, s, strlen(s)) < 0)
			perror(path);
		close(fd);
	}
}

/* trace_marker while a capture runs: atrace lockwait/lockhold slices (docs/trace.md). */
static atomic_int marker_fd = -1;

/*
 * Writes a marker line (@fmt with @tid) while a capture runs. A write fails
 * (EBADF) while a long wait's capture has the recording frozen; that is
 * expected, and errno is kept: callers mark around calls whose errno they read.
 */
static __attribute__((unused)) void mark(const char *fmt, long tid)
{
	int fd = atomic_load(&marker_fd), e = errno;
	char m[96];
	int n;

	if (fd < 0)
		return;
	n = snprintf(m, sizeof(m), fmt, tid);
	if (write(fd, m, n) < 0)
		errno = e;
}

/* Writes @text as one marker line while a capture runs (as mark() does). */
static __attribute__((unused)) void mark_text(const char *text)
{
	int fd = atomic_load(&marker_fd), e = errno;

	if (fd >= 0 && write(fd, text, strlen(text)) < 0)
		errno = e;
}

/*
 * Starts ftrace with per-CPU buffers of @buffer_kb: the scheduler's switches,
 * wakeups and blocked reasons, SuperPass's events and our markers. Returns 0
 * without a writable tracefs.
 */
static __attribute__((unused)) int trace_start(int buffer_kb)
{
	char kb[16];

	if (access(TR "trace", W_OK))
		return 0;
	write_file("/proc/sys/kernel/sched_schedstats", "1"); /* for sched_blocked_reason */
	write_file(TR "tracing_on", "0");
	/* CLOCK_MONOTONIC stamps: a long wait's lines are picked by the programs' own times. */
	write_file(TR "trace_clock", "mono");
	snprintf(kb, sizeof(kb), "%d", buffer_kb);
	write_file(TR "buffer_size_kb", kb);
	write_file(TR "trace", "");
	write_file(TR "events/sched/sched_switch/enable", "1");
	write_file(TR "events/sched/sched_waking/enable", "1");
	write_file(TR "events/sched/sched_blocked_reason/enable", "1");
	write_file(TR "events/sched/sched_migrate_task/enable", "1");
	/* Whether a woken waiter spins on its mutex (LCB_F_MUTEX | LCB_F_SPIN) or sleeps again. */
	write_file(TR "events/lock/contention_begin/filter", "flags & 32");
	write_file(TR "events/lock/contention_begin/enable", "1");
	write_file(TR "events/lock/contention_end/enable", "1");
	write_file(TR "events/superpass/enable", "1");
	/* A binder round trip: superpass-trace makes each call a wait on its server thread. */
	write_file(TR "events/binder/binder_transaction/enable", "1");
	write_file(TR "events/binder/binder_transaction_received/enable", "1");
	write_file(TR "tracing_on", "1");
	atomic_store(&marker_fd, open(TR "trace_marker", O_WRONLY));
	return 1;
}

/*
 * Stops the recording and empties the buffer. The events stay enabled: each
 * enable or disable patches their call sites (static calls) while the other
 * CPUs run them, and under QEMU's TCG that once crashed a guest with an int3
 * oops in __schedule's sched_switch call. Enabled once per boot, an event
 * costs a probe call that finds the recording off.
 */
static __attribute__((unused)) void trace_stop(void)
{
	int fd = atomic_exchange(&marker_fd, -1);

	if (fd >= 0)
		close(fd);
	write_file(TR "tracing_on", "0");
	write_file(TR "trace", "");
}

/* The timestamp (ns) of an ftrace text line ("comm-pid [cpu] flags secs.usecs: ..."), 0 if none. */
static __attribute__((unused)) uint64_t trace_line_ns(const char *line)
{
	const char *p = strstr(line, "] ");

	if (line[0] == '#' || !p)
		return 0;
	for (p += 2; *p;) {
		char *end;
		double t;

		while (*p == ' ')
			p++;
		t = strtod(p, &end);
		if (end > p && *end == ':')
			return (uint64_t)(t * 1e9);
		while (*p && *p != ' ')
			p++;
	}
	return 0;
}

/* The host's folder for the captures, when the boot shares one (tests/guest/init.sh). */
#define SHARE "/sptrace/"

/* Opens <tag>.trace in the shared folder to append to; NULL if there is none. */
static __attribute__((unused)) FILE *trace_file(const char *tag)
{
	char path[128];

	if (access(SHARE, W_OK) || snprintf(path, sizeof(path), SHARE "%s.trace", tag) >= (int)sizeof(path))
		return NULL;
	return fopen(path, "a");
}

/*
 * Writes the buffer's lines stamped in [@from, @to] ns (and the header) to
 * <tag>.trace in the shared folder, or where no folder is shared prints them
 * as "SPTRACE <tag> <line>"; the host saves either as
 * target/vm/inversion-<tag>.trace. All of them when @to is 0. Returns the
 * first event's time, or 0 if the buffer held none.
 */
static __attribute__((unused)) uint64_t trace_print(const char *tag, uint64_t from, uint64_t to)
{
	char line[1024];
	uint64_t first = 0;
	FILE *f = fopen(TR "trace", "r");
	FILE *out;

	if (!f)
		return 0;
	out = trace_file(tag);
	while (fgets(line, sizeof(line), f)) {
		uint64_t t = trace_line_ns(line);

		if (t && !first)
			first = t;
		if (to && t > to)
			break;
		if (to && t && t < from)
			continue;
		if (out)
			fputs(line, out);
		else
			printf("SPTRACE %s %s", tag, line);
	}
	fclose(f);
	if (out)
		fclose(out);
	fflush(stdout);
	return first;
}

/* Prints the whole capture as trace_print() does, then stops ftrace. */
static __attribute__((unused)) void trace_dump(const char *tag)
{
	int fd = atomic_exchange(&marker_fd, -1);

	if (fd >= 0)
		close(fd);
	write_file(TR "tracing_on", "0");
	trace_print(tag, 0, 0);
	trace_stop();
}

/*
 * The capture of long waits: while SuperPass is on, ftrace records into small
 * ring buffers, and a wait longer than FRAME_NS freezes them (one write to
 * tracing_on, from the critical thread as its wait ends). A dumper thread
 * then prints the lines of that wait's window as its own capture, <tag>-wN,
 * and restarts the recording; the host itemizes each with superpass-trace.
 * Reading a buffer formats all of it, which costs the guest CPU time (each
 * capture's log line says how much), so the buffers are small and a mode
 * captures at most LW_MAX waits. A wait that began while the recording was
 * off (before the mode's capture started, or during a dump) is not captured:
 * its start would be missing. The *_long_uncaptured metric counts the waits
 * over 16 ms left without a capture of their own (sp-inversion's -T window
 * is recorded whole instead: the host itemizes the long waits in it too).
 */
#define LW_MAX 12
#define LW_BUFFER_KB 1024
/* Context kept before a wait (its blocker's recent states) and after it. */
#define LW_BEFORE_NS 100000000ULL
#define LW_AFTER_NS 2000000ULL

static struct {
	atomic_int active, armed, pending, stop;
	/* When the recording last (re)started: a wait that began before it is not whole. */
	_Atomic uint64_t since;
	uint64_t from, to, wait_ns;
	int on_fd, captured;
	char tag[80];
	pthread_t dumper;
} lw = { .on_fd = -1 };

static __attribute__((unused)) void *lw_dumper(void *arg)
{
	while (!atomic_load(&lw.stop)) {
		char tag[96];
		uint64_t first, t;

		if (!atomic_load(&lw.pending)) {
			usleep(10000);
			continue;
		}
		snprintf(tag, sizeof(tag), "%s-w%d", lw.tag, ++lw.captured);
		t = now_ns();
		first = trace_print(tag, lw.from, lw.to);
		printf("long wait %.1f ms with SuperPass on: its ftrace window is capture %s (read in %.0f ms)\n",
		       lw.wait_ns / 1e6, tag, (now_ns() - t) / 1e6);
		if (!first || first > lw.from + LW_BEFORE_NS)
			printf("  (capture %s starts %.1f ms into the wait: the buffer had overwritten the rest)\n",
			       tag, first ? (first - lw.from - LW_BEFORE_NS) / 1e6 : lw.wait_ns / 1e6);
		write_file(TR "trace", "");
		atomic_store(&lw.pending, 0);
		if (lw.captured < LW_MAX) {
			atomic_store(&lw.since, now_ns());
			write_file(TR "tracing_on", "1");
			atomic_store(&lw.armed, 1);
		}
	}
	return NULL;
}

/* Starts the capture of long waits again after lw_stop(), numbering on from its captures. */
static __attribute__((unused)) void lw_resume(void)
{
	if (lw.captured >= LW_MAX)
		return;
	atomic_store(&lw.pending, 0);
	atomic_store(&lw.stop, 0);
	atomic_store(&lw.since, now_ns());
	if (!trace_start(LW_BUFFER_KB))
		return;
	lw.on_fd = open(TR "tracing_on", O_WRONLY);
	if (lw.on_fd < 0 || pthread_create(&lw.dumper, NULL, lw_dumper, NULL)) {
		trace_stop();
		return;
	}
	atomic_store(&lw.armed, 1);
	atomic_store(&lw.active, 1);
}

/* Starts the capture of long waits for a SuperPass-on mode; @tag names its captures. */
static __attribute__((unused)) void lw_start(const char *tag)
{
	const char *test = getenv("SPTEST_NAME");

	snprintf(lw.tag, sizeof(lw.tag), "%s-%s", test ? test : "guest", tag);
	lw.captured = 0;
	lw_resume();
}

/*
 * The critical thread's wait that began at @t0 lasted @wait_ns (as its metrics
 * count it): a long one freezes the recording. Called once its lockwait slice
 * has ended, so that the capture holds the whole slice.
 */
static __attribute__((unused)) void lw_note(uint64_t t0, uint64_t wait_ns)
{
	if (wait_ns <= FRAME_NS || !atomic_load(&lw.active) || t0 < atomic_load(&lw.since) ||
	    !atomic_exchange(&lw.armed, 0))
		return;
	if (write(lw.on_fd, "0", 1) < 0)
		perror("tracing_on");
	lw.from = t0 - LW_BEFORE_NS;
	lw.to = now_ns() + LW_AFTER_NS;
	lw.wait_ns = wait_ns;
	atomic_store(&lw.pending, 1);
}

/* The waits captured since lw_start(), across its lw_resume()s. */
static __attribute__((unused)) int lw_captured(void)
{
	return lw.captured;
}

/* Ends the capture (a pending dump is finished first); returns the waits it captured. */
static __attribute__((unused)) int lw_stop(void)
{
	if (!atomic_exchange(&lw.active, 0))
		return 0;
	while (atomic_load(&lw.pending))
		usleep(10000);
	atomic_store(&lw.stop, 1);
	pthread_join(lw.dumper, NULL);
	close(lw.on_fd);
	lw.on_fd = -1;
	trace_stop();
	return lw.captured;
}

/*
 * Stall snapshots, for diagnosis (SP_STALLWATCH=1 in the environment): a
 * SCHED_FIFO thread looks at one thread every 2 ms. Once that thread has been
 * runnable for STALL_NS without running, the scheduler's own view of the
 * runqueues goes into the ftrace buffer through trace_marker, so that a long
 * wait's capture shows why it did not run: from /sys/kernel/debug/sched/debug,
 * each CPU's cfs_rq (avg_vruntime, nr_running) and its runnable sp-* tasks
 * (vruntime, E/N for eligible or not, deadline, slice). Off by default: the
 * watcher is itself a task that wakes every 2 ms.
 */
#define STALL_NS 8000000ULL

static struct {
	pthread_t thread;
	atomic_int stop;
	int tid, on;
} stall;

/* @tid's state letter and sum_exec_runtime (/proc/self/task/<tid>/{stat,schedstat}). */
static int stall_sample(int tid, char *state, uint64_t *exec)
{
	char path[64], buf[512], *p;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	if (!(f = fopen(path, "r")))
		return -1;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	p = ok ? strrchr(buf, ')') : NULL;
	if (!p || !p[1] || !p[2])
		return -1;
	*state = p[2];
	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
	if (!(f = fopen(path, "r")))
		return -1;
	ok = fscanf(f, "%" SCNu64, exec) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

static void stall_dump(int tid, uint64_t stalled_ns)
{
	static char text[256 * 1024];
	char line[300];
	int fd = open("/sys/kernel/debug/sched/debug", O_RDONLY), in_cfs = 0;
	ssize_t n, len = 0;
	char *l, *save;

	if (fd < 0)
		return;
	while (len < (ssize_t)sizeof(text) - 1 && (n = read(fd, text + len, sizeof(text) - 1 - len)) > 0)
		len += n;
	close(fd);
	text[len] = 0;
	snprintf(line, sizeof(line), "stall %d: runnable %.1f ms without running\n", tid, stalled_ns / 1e6);
	mark_text(line);
	for (l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		int keep = 0;

		if (!strncmp(l, "cfs_rq[", 7)) {
			in_cfs = 1;
			keep = 1;
		} else if (!strncmp(l, "rt_rq[", 6) || !strncmp(l, "dl_rq[", 6) || !strncmp(l, "cpu#", 4)) {
			in_cfs = 0;
			keep = !strncmp(l, "cpu#", 4);
		} else if (in_cfs && (strstr(l, ".avg_vruntime") || strstr(l, ".nr_running") ||
				      strstr(l, ".left_vruntime") || strstr(l, ".zero_vruntime"))) {
			keep = 1;
		} else if (strstr(l, " sp-") && (l[0] == ' ' || l[0] == '>')) {
			keep = 1;
		}
		if (keep) {
			snprintf(line, sizeof(line), "stall %d: %.250s\n", tid, l);
			mark_text(line);
		}
	}
}

static void *stall_watcher(void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };
	uint64_t last_exec = 0, since = 0;
	int dumped = 0;

	(void)arg;
	sched_setscheduler(0, SCHED_FIFO, &sp);
	while (!atomic_load(&stall.stop)) {
		uint64_t exec, t = now_ns();
		struct timespec ts = { 0, 2000000 };
		char state;

		if (!stall_sample(stall.tid, &state, &exec) && state == 'R' && exec == last_exec) {
			if (!since)
				since = t;
			else if (!dumped && t - since >= STALL_NS) {
				stall_dump(stall.tid, t - since);
				dumped = 1;
			}
		} else {
			since = 0;
			dumped = 0;
		}
		last_exec = exec;
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* Watches thread @tid for stalls if SP_STALLWATCH=1 (see above). */
static __attribute__((unused)) void stall_watch_start(int tid)
{
	const char *e = getenv("SP_STALLWATCH");

	if (!e || strcmp(e, "1") || stall.on)
		return;
	stall.tid = tid;
	atomic_store(&stall.stop, 0);
	stall.on = !pthread_create(&stall.thread, NULL, stall_watcher, NULL);
}

static __attribute__((unused)) void stall_watch_stop(void)
{
	if (!stall.on)
		return;
	atomic_store(&stall.stop, 1);
	pthread_join(stall.thread, NULL);
	stall.on = 0;
}

#endif /* SP_HARNESS_H */
