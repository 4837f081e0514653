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
 *   futexwake COUNT FUTEX_WAKE calls on a futex nobody waits on (the
 *             uncontended unlock's syscall: do_futex and the wake probes).
 *   futexpp   COUNT round trips between two threads (pinned to CPU 0) that
 *             wake each other through FUTEX_WAIT/FUTEX_WAKE: every futex
 *             hook on the wait and the wake side.
 *   futexpp-hint  the same, each FUTEX_WAIT naming the other thread as the
 *             holder (an owner hint): the hint stash and its check too.
 *   pagefault COUNT rounds of mmap, a write fault on the new page, munmap:
 *             the per-VMA read lock of the fault and the mmap_lock writes,
 *             the rwsem paths every app takes all the time.
 *   binderpp  COUNT synchronous binder calls from this process to a context
 *             manager in a child process, on a device of its own on the
 *             binderfs mount $SP_BINDERFS (default /dev/binderfs), both
 *             pinned as pingpong is: every binder hook on the call and the
 *             reply path (ACK's, vm/patches/0010). ns per call.
 *   readlock  COUNT uncontended down_read/up_read pairs of a kernel rwsem
 *             inside one ioctl of /dev/superpass-test (sp_testdev.ko), timed
 *             in the kernel: the reader hooks alone, without syscall cost.
 *
 *   boostload SECS [noreg]  not a benchmark: keeps the fast track busy on
 *             the CPUs it may run on (the suite confines it with taskset) for
 *             SECS: two nice-0 hogs, a nice-0 holder that takes the test
 *             mutex for 2 ms of work and then runs 100 us outside it, and a
 *             thread that takes the mutex every 1 ms, so it nearly always
 *             waits. With superpass.ko loaded (and without noreg), that thread
 *             is registered critical and SuperPass is enabled, so the holder
 *             is granted at nearly every wait; otherwise the same threads run
 *             unhelped. Prints the waits it made.
 *
 *   boostidle SECS [noreg|quiet]  not a benchmark: keeps a blocker boosted
 *             while it sleeps, for SECS: a holder thread that sleeps, and
 *             this thread, registered critical (without noreg) with SuperPass
 *             enabled, waiting on a futex whose owner hint names the holder,
 *             in 100 ms waits one after another. The blocker stays boosted,
 *             and the CPUs it may run on stay idle almost all the time, so
 *             that under one instruction clock they add next to nothing to
 *             another CPU's elapsed time. With quiet, this thread is
 *             registered but sleeps instead of waiting: nothing is boosted.
 *             Prints the waits it made.
 *
 * The pingpong and futexpp loops pin to CPU 0, or to CPU $SP_OVERHEAD_CPU.
 *
 *   engage CRIT  not a benchmark: makes SuperPass attach its on-demand
 *             probes (superpass_core::probes) the way contention does. It
 *             registers itself critical beside CRIT (the suite's registered
 *             thread), waits for the test rwsem for reading while another
 *             thread holds it for writing, then leaves CRIT alone registered.
 *
 * usage: sp-overhead mutex|pingpong|futexwake|futexpp|futexpp-hint|pagefault|binderpp|readlock [COUNT]
 *        prints the ns value only
 *        sp-overhead engage CRIT
 *        sp-overhead boostload SECS [noreg]
 *        sp-overhead boostidle SECS [noreg|quiet]
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
#include <linux/futex.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <signal.h>

#include "superpass_testdev.h"
#include "superpass_uapi.h"
#include "sp_binder.h"

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

static uint32_t word[2];
static atomic_int tid[2];
static int hinted;

static long futex(uint32_t *w, int op, uint32_t val, void *uaddr2)
{
	return syscall(SYS_futex, w, op, val, NULL, uaddr2, 0);
}

/*
 * Player @me waits while its word is 0, clears it, sets the other's and
 * wakes it: a round trip is two waits and two wakes.
 */
static void *player(void *arg)
{
	int me = (int)(long)arg, other = !me;

	atomic_store(&tid[me], (int)syscall(SYS_gettid));
	while (!atomic_load(&tid[other]))
		sched_yield();
	for (long i = 0; i < count; i++) {
		if (me == 1 || i > 0) {
			while (!__atomic_load_n(&word[me], __ATOMIC_ACQUIRE))
				futex(&word[me], FUTEX_WAIT_PRIVATE, 0,
				      hinted ? (void *)(uintptr_t)atomic_load(&tid[other]) : NULL);
			__atomic_store_n(&word[me], 0, __ATOMIC_RELAXED);
		}
		__atomic_store_n(&word[other], 1, __ATOMIC_RELEASE);
		futex(&word[other], FUTEX_WAKE_PRIVATE, 1, NULL);
	}
	return NULL;
}

static int testdev = -1;

static void *write_holder(void *x)
{
	struct spt_lock l = { .op = SPT_OP_WRITE, .hold_us = 50000 };

	return (void *)(long)ioctl(testdev, SPT_LOCK, &l);
}

/* Registers the critical set {@crit, @self} (or {@crit} when @self is 0). */
static int set_critical(int sp, int crit, int self)
{
	struct sp_critical_list l = { SP_HDR(struct sp_critical_list) };

	l.entries[l.count++] = (struct sp_entry){ crit, SP_ROLE_UI };
	if (self)
		l.entries[l.count++] = (struct sp_entry){ self, SP_ROLE_UI };
	return ioctl(sp, SP_SET_CRITICAL, &l);
}

/*
 * A critical rwsem wait behind a writer: both probe groups become wanted.
 * The writer may not hold the lock yet when the read is tried (a thread
 * start can take longer than any fixed sleep under emulation), so an
 * uncontended read is retried with a longer head start.
 */
static int engage(int crit)
{
	struct spt_lock l = { .op = SPT_OP_READ };
	int sp = open("/dev/superpass", O_RDWR);
	pthread_t th;
	void *r;

	testdev = open("/dev/superpass-test", O_RDWR);
	if (sp < 0 || testdev < 0 || set_critical(sp, crit, (int)syscall(SYS_gettid))) {
		perror("sp-overhead engage");
		return 1;
	}
	for (int try = 1; try <= 5; try++) {
		pthread_create(&th, NULL, write_holder, NULL);
		usleep(10000 * try);
		l.wait_ns = 0;
		if (ioctl(testdev, SPT_LOCK, &l) || pthread_join(th, &r) || r) {
			perror("sp-overhead engage");
			return 1;
		}
		printf("try %d: waited %.1f us\n", try, l.wait_ns / 1000.0);
		/* The writer holds for 50 ms: a read that waited under 1 ms never queued. */
		if (l.wait_ns >= 1000000)
			return set_critical(sp, crit, 0) ? (perror("sp-overhead engage"), 1) : 0;
	}
	fprintf(stderr, "sp-overhead engage: the read never waited behind the writer\n");
	return 1;
}

static void pin_cpu0(void)
{
	const char *env = getenv("SP_OVERHEAD_CPU");
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(env ? atoi(env) : 0, &set);
	/* Threads created afterwards inherit the affinity. */
	sched_setaffinity(0, sizeof(set), &set);
}

/*
 * binderpp: @n calls to a context manager in a child process; ns per call,
 * or a negative value if the device or the server failed.
 */
static double binderpp(long n)
{
	const char *fs = getenv("SP_BINDERFS");
	double ns = -1;
	uint64_t t;
	pid_t srv;
	int fd;

	if (sp_binder_make_device(fs ? fs : "/dev/binderfs", "spov"))
		return -1;
	pin_cpu0();
	srv = fork();
	if (srv == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fd = sp_binder_open();
		if (sp_binder_become_manager(fd))
			_exit(2);
		sp_binder_loop(fd, NULL);
		_exit(1);
	}
	fd = sp_binder_open();
	/* The server is ready once a call comes back. */
	for (int i = 0; sp_binder_call(fd, 0); i++) {
		if (i == 50) {
			fprintf(stderr, "sp-overhead binderpp: the server never answered\n");
			goto out;
		}
		usleep(100000);
	}
	t = now_ns();
	for (long i = 0; i < n; i++) {
		if (sp_binder_call(fd, 1))
			goto out;
	}
	ns = (double)(now_ns() - t) / n;
out:
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	unlink(sp_binder_path);
	return ns;
}

static atomic_int boost_stop;

static void *boost_hog(void *x)
{
	volatile unsigned long n = 0;

	while (!atomic_load(&boost_stop))
		n++;
	return NULL;
}

static void *boost_holder(void *x)
{
	struct spt_lock l = { .op = SPT_OP_MUTEX, .hold_us = 2000 };

	while (!atomic_load(&boost_stop)) {
		uint64_t t;

		if (ioctl(testdev, SPT_LOCK, &l))
			return (void *)1L;
		t = now_ns();
		while (now_ns() - t < 100000 && !atomic_load(&boost_stop))
			;
	}
	return NULL;
}

/*
 * boostload: a mutex inversion on the CPUs this process may use, helped when
 * superpass.ko is loaded (the calling thread registered critical).
 */
static int boostload(int secs, int reg)
{
	struct spt_lock l = { .op = SPT_OP_MUTEX };
	struct sp_enable en = { SP_HDR(struct sp_enable), .enabled = 1 };
	int sp = open("/dev/superpass", O_RDWR);
	pthread_t th[3];
	long waits = 0, helped = 0;
	void *r;

	testdev = open("/dev/superpass-test", O_RDWR);
	if (testdev < 0) {
		perror("sp-overhead boostload: /dev/superpass-test");
		return 1;
	}
	if (reg && sp >= 0 &&
	    (set_critical(sp, (int)syscall(SYS_gettid), 0) || ioctl(sp, SP_SET_ENABLED, &en))) {
		perror("sp-overhead boostload: register");
		return 1;
	}
	pthread_create(&th[0], NULL, boost_hog, NULL);
	pthread_create(&th[1], NULL, boost_hog, NULL);
	pthread_create(&th[2], NULL, boost_holder, NULL);
	for (uint64_t end = now_ns() + (uint64_t)secs * 1000000000ULL; now_ns() < end;) {
		if (ioctl(testdev, SPT_LOCK, &l))
			return 1;
		waits++;
		helped += l.wait_ns >= 100000;
		usleep(1000);
	}
	atomic_store(&boost_stop, 1);
	for (int i = 0; i < 3; i++) {
		if (pthread_join(th[i], &r) || r)
			return 1;
	}
	printf("waits %ld over_100us %ld\n", waits, helped);
	return 0;
}

static atomic_int idle_holder;

/* The sleeping holder of boostidle's futex: its owner hint names this thread. */
static void *idle_hold(void *x)
{
	atomic_store(&idle_holder, (int)syscall(SYS_gettid));
	while (!atomic_load(&boost_stop))
		usleep(100000);
	return NULL;
}

/* How boostidle's thread takes part: unregistered, registered and waiting, registered and asleep. */
enum boostidle_mode { BI_NOREG, BI_WAIT, BI_QUIET };

static int boostidle(int secs, enum boostidle_mode mode)
{
	struct sp_enable en = { SP_HDR(struct sp_enable), .enabled = 1 };
	struct timespec to = { .tv_nsec = 100000000 };
	int sp = open("/dev/superpass", O_RDWR);
	uint32_t w = 0;
	long waits = 0;
	pthread_t th;

	if (mode != BI_NOREG && (sp < 0 || set_critical(sp, (int)syscall(SYS_gettid), 0) ||
				 ioctl(sp, SP_SET_ENABLED, &en))) {
		perror("sp-overhead boostidle: register");
		return 1;
	}
	pthread_create(&th, NULL, idle_hold, NULL);
	while (!atomic_load(&idle_holder))
		usleep(1000);
	for (uint64_t end = now_ns() + (uint64_t)secs * 1000000000ULL; now_ns() < end; waits++) {
		if (mode == BI_QUIET) {
			nanosleep(&to, NULL);
			continue;
		}
		syscall(SYS_futex, &w, FUTEX_WAIT_PRIVATE, 0, &to,
			(void *)(uintptr_t)atomic_load(&idle_holder), 0);
	}
	atomic_store(&boost_stop, 1);
	pthread_join(th, NULL);
	printf("waits %ld\n", waits);
	return 0;
}

int main(int argc, char **argv)
{
	char c = 'x';
	uint64_t t;
	pthread_t th;

	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "engage"))
		return argc == 3 ? engage(atoi(argv[2])) : 2;
	if (!strcmp(argv[1], "boostload") && (argc == 3 || (argc == 4 && !strcmp(argv[3], "noreg"))))
		return boostload(atoi(argv[2]), argc == 3);
	if (!strcmp(argv[1], "boostidle") && argc == 3)
		return boostidle(atoi(argv[2]), BI_WAIT);
	if (!strcmp(argv[1], "boostidle") && argc == 4 && !strcmp(argv[3], "noreg"))
		return boostidle(atoi(argv[2]), BI_NOREG);
	if (!strcmp(argv[1], "boostidle") && argc == 4 && !strcmp(argv[3], "quiet"))
		return boostidle(atoi(argv[2]), BI_QUIET);
	count = argc > 2 ? atol(argv[2]) : 20000;
	if (pipe(a) || pipe(b))
		return 2;
	if (!strcmp(argv[1], "futexwake")) {
		uint32_t w = 0;

		t = now_ns();
		for (long i = 0; i < count; i++)
			futex(&w, FUTEX_WAKE_PRIVATE, 1, NULL);
	} else if (!strcmp(argv[1], "futexpp") || !strcmp(argv[1], "futexpp-hint")) {
		pthread_t p0;

		hinted = !strcmp(argv[1], "futexpp-hint");
		pin_cpu0();
		t = now_ns();
		pthread_create(&p0, NULL, player, (void *)0L);
		pthread_create(&th, NULL, player, (void *)1L);
		pthread_join(p0, NULL);
		pthread_join(th, NULL);
	} else if (!strcmp(argv[1], "mutex")) {
		t = now_ns();
		for (long i = 0; i < count; i++) {
			if (write(a[1], &c, 1) != 1 || read(a[0], &c, 1) != 1)
				return 1;
		}
	} else if (!strcmp(argv[1], "pingpong")) {
		pin_cpu0();
		pthread_create(&th, NULL, pong, NULL);
		t = now_ns();
		for (long i = 0; i < count; i++) {
			if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
				return 1;
		}
		pthread_join(th, NULL);
	} else if (!strcmp(argv[1], "pagefault")) {
		t = now_ns();
		for (long i = 0; i < count; i++) {
			volatile char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
						MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED)
				return 1;
			p[0] = 1;
			munmap((void *)p, 4096);
		}
	} else if (!strcmp(argv[1], "binderpp")) {
		double ns = binderpp(count);

		if (ns < 0)
			return 1;
		printf("%.1f\n", ns);
		return 0;
	} else if (!strcmp(argv[1], "readlock")) {
		struct spt_loop l = { .op = SPT_OP_READ, .count = (uint32_t)count };
		int fd = open("/dev/superpass-test", O_RDWR);

		if (fd < 0 || ioctl(fd, SPT_LOOP, &l)) {
			perror("sp-overhead: readlock needs /dev/superpass-test (sp_testdev.ko)");
			return 1;
		}
		printf("%.2f\n", (double)l.ns / count);
		return 0;
	} else {
		fprintf(stderr, "sp-overhead: unknown benchmark %s\n", argv[1]);
		return 2;
	}
	printf("%.1f\n", (double)(now_ns() - t) / count);
	return 0;
}
