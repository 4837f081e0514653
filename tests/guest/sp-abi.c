// SPDX-License-Identifier: GPL-2.0
/*
 * sp-abi: exercises every /dev/superpass command and the ways to get them
 * wrong: wrong size or version, too many TIDs, nonexistent TIDs, reserved
 * fields, an unprivileged caller (EPERM), then N random ioctls (default
 * 100000; every answer must be success or an errno, and the kernel must not
 * oops or warn: the host checks the kernel log).
 *
 * usage: sp-abi [-n RANDOM_IOCTLS] [-x]   prints "M key value" metric lines
 *        (-x: do not require the pick mechanism)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "superpass_uapi.h"

static int fd, failures, checks;

#define CHECK(cond, ...)						\
	do {								\
		checks++;						\
		if (!(cond)) {						\
			failures++;					\
			printf("FAIL %s:%d: ", __FILE__, __LINE__);	\
			printf(__VA_ARGS__);				\
			printf("\n");					\
		}							\
	} while (0)

/* ioctl returning 0 or -errno. */
static int io(unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

static int add_critical(int tid, uint32_t role)
{
	struct sp_critical_one c = { SP_HDR(struct sp_critical_one), { tid, role } };

	return io(SP_ADD_CRITICAL, &c);
}

static int remove_critical(int tid)
{
	struct sp_tid t = { SP_HDR(struct sp_tid), tid, 0 };

	return io(SP_REMOVE_CRITICAL, &t);
}

static int set_enabled(uint32_t on)
{
	struct sp_enable e = { SP_HDR(struct sp_enable), on, 0 };

	return io(SP_SET_ENABLED, &e);
}

static void *sleeper(void *arg)
{
	pause();
	return NULL;
}

/*
 * An unprivileged child (the fd was opened as root): GET_VERSION and
 * GET_TUNABLES work; every change, GET_STATS and GET_CRITICAL get EPERM.
 */
static int unprivileged(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		int bad = 0;
		struct sp_version v = { SP_HDR(struct sp_version) };
		struct sp_stats *s = calloc(1, sizeof(*s));
		struct sp_hdr h = SP_HDR(struct sp_hdr);
		struct sp_tunables t = { SP_HDR(struct sp_tunables) };

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(3);
		bad |= io(SP_GET_VERSION, &v) != 0;
		s->hdr = SP_HDR(struct sp_stats);
		bad |= (io(SP_GET_STATS, s) != -EPERM) << 6;
		bad |= (io(SP_GET_TUNABLES, &t) != 0) << 7;
		{
			struct sp_critical_list c = { SP_HDR(struct sp_critical_list) };

			bad |= (io(SP_GET_CRITICAL, &c) != -EPERM) << 8;
		}
		bad |= (add_critical(getpid(), SP_ROLE_UI) != -EPERM) << 1;
		bad |= (set_enabled(1) != -EPERM) << 2;
		bad |= (remove_critical(getpid()) != -EPERM) << 3;
		bad |= (io(SP_RESET_STATS, &h) != -EPERM) << 4;
		t.count = SP_NUM_TUNABLES;
		bad |= (io(SP_SET_TUNABLES, &t) != -EPERM) << 5;
		_exit(bad);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

static uint64_t rng = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(int argc, char **argv)
{
	long nrandom = 100000, ok = 0, errs = 0, weird = 0;
	int opt, r, need_pick = 1;
	pthread_t th[3];
	int tids[3];

	while ((opt = getopt(argc, argv, "n:x")) != -1) {
		if (opt == 'n')
			nrandom = atol(optarg);
		else if (opt == 'x')
			need_pick = 0; /* another module owns the pick hook */
	}
	fd = open("/dev/superpass", O_RDWR);
	if (fd < 0) {
		perror("/dev/superpass");
		return 2;
	}
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, sleeper, NULL);
	usleep(100000);
	{
		/* The TIDs of our sleeper threads, from /proc/self/task (read by this process). */
		DIR *d = opendir("/proc/self/task");
		struct dirent *e;
		int n = 0, me = getpid();

		while (d && (e = readdir(d))) {
			int t = atoi(e->d_name);

			if (t > 0 && t != me && n < 3)
				tids[n++] = t;
		}
		if (d)
			closedir(d);
		CHECK(n == 3, "found %d sleeper TIDs", n);
	}

	/* GET_VERSION. */
	struct sp_version v = { 0 };
	r = io(SP_GET_VERSION, &v);
	CHECK(r == 0 && v.hdr.size == sizeof(v) && v.hdr.version == SP_ABI_VERSION, "GET_VERSION %d", r);
	CHECK(v.max_critical == SP_MAX_CRITICAL && v.num_counters == SP_NUM_COUNTERS &&
	      v.num_tunables == SP_NUM_TUNABLES && v.hist_buckets == SP_HIST_BUCKETS, "GET_VERSION limits");
	printf("M active_mask 0x%llx\n", (unsigned long long)v.active_mask);
	CHECK(!need_pick || (v.active_mask & SP_MECH_PICK), "pick mechanism active");

	/* SET_ENABLED, including a bad value and a reserved field. */
	CHECK(set_enabled(1) == 0, "enable");
	CHECK(set_enabled(2) == -EINVAL, "enable=2 -> EINVAL");
	{
		struct sp_enable e = { SP_HDR(struct sp_enable), 1, 7 };
		CHECK(io(SP_SET_ENABLED, &e) == -EINVAL, "reserved != 0 -> EINVAL");
		e = (struct sp_enable){ { 16, 2 }, 1, 0 };
		CHECK(io(SP_SET_ENABLED, &e) == -EINVAL, "version 2 -> EINVAL");
		e = (struct sp_enable){ { 24, 1 }, 1, 0 };
		CHECK(io(SP_SET_ENABLED, &e) == -EINVAL, "size field 24 -> EINVAL");
	}
	/* Wrong size encoded in the command number. */
	{
		char buf[64] = { 0 };
		CHECK(ioctl(fd, _IOW(SP_MAGIC, 5, char[24]), buf) < 0 && errno == ENOTTY, "wrong ioctl size -> ENOTTY");
		CHECK(ioctl(fd, _IOW(SP_MAGIC, 99, struct sp_enable), buf) < 0 && errno == ENOTTY, "unknown nr -> ENOTTY");
		CHECK(ioctl(fd, SP_GET_VERSION, (void *)8) < 0 && errno == EFAULT, "bad pointer -> EFAULT");
		CHECK(ioctl(fd, SP_SET_ENABLED, (void *)8) < 0 && errno == EFAULT, "bad pointer (write) -> EFAULT");
	}

	/* ADD / REMOVE / GET / SET_CRITICAL. */
	CHECK(add_critical(tids[0], SP_ROLE_UI) == 0, "add critical");
	CHECK(add_critical(tids[0], SP_ROLE_RENDER) == 0, "change role");
	CHECK(add_critical(tids[1], 9) == -EINVAL, "bad role -> EINVAL");
	CHECK(add_critical(0, SP_ROLE_UI) == -EINVAL, "tid 0 -> EINVAL");
	CHECK(add_critical(-5, SP_ROLE_UI) == -EINVAL, "tid -5 -> EINVAL");
	CHECK(add_critical(4000000, SP_ROLE_UI) == -ESRCH, "nonexistent tid -> ESRCH");
	CHECK(remove_critical(tids[2]) == -ENOENT, "remove unregistered -> ENOENT");
	CHECK(remove_critical(tids[0]) == 0, "remove");
	{
		struct sp_critical_list l = { SP_HDR(struct sp_critical_list) };
		l.count = 2;
		l.entries[0] = (struct sp_entry){ tids[0], SP_ROLE_UI };
		l.entries[1] = (struct sp_entry){ tids[1], SP_ROLE_RENDER };
		CHECK(io(SP_SET_CRITICAL, &l) == 0, "set critical (2)");
		struct sp_critical_list g = { SP_HDR(struct sp_critical_list) };
		CHECK(io(SP_GET_CRITICAL, &g) == 0 && g.count == 2, "get critical -> 2 (%u)", g.count);
		l.count = 33;
		CHECK(io(SP_SET_CRITICAL, &l) == -E2BIG, "33 TIDs -> E2BIG");
		l.count = 2;
		l.entries[1].tid = tids[0];
		CHECK(io(SP_SET_CRITICAL, &l) == -EINVAL, "duplicate TID -> EINVAL");
		l.entries[1].tid = 4000001;
		CHECK(io(SP_SET_CRITICAL, &l) == -ESRCH, "nonexistent TID in list -> ESRCH");
		l.entries[1] = (struct sp_entry){ tids[1], SP_ROLE_RENDER };
		l.entries[5].tid = 3;
		CHECK(io(SP_SET_CRITICAL, &l) == -EINVAL, "garbage past count -> EINVAL");
		l.entries[5].tid = 0;
		l.generation = 1;
		CHECK(io(SP_SET_CRITICAL, &l) == -EINVAL, "generation on input -> EINVAL");
		l.generation = 0;
		l.count = 0;
		CHECK(io(SP_SET_CRITICAL, &l) == -EINVAL, "entries past count 0 -> EINVAL");
		memset(l.entries, 0, sizeof(l.entries));
		CHECK(io(SP_SET_CRITICAL, &l) == 0, "clear critical set");
	}

	/* Tunables. */
	{
		struct sp_tunables t = { SP_HDR(struct sp_tunables) };
		CHECK(io(SP_GET_TUNABLES, &t) == 0 && t.count == SP_NUM_TUNABLES, "get tunables");
		struct sp_tunables u = t;
		u.hdr = SP_HDR(struct sp_tunables);
		CHECK(io(SP_SET_TUNABLES, &u) == 0, "set tunables (same)");
		u.values[SP_TUNABLE_MAX_CRITICAL] = 0;
		CHECK(io(SP_SET_TUNABLES, &u) == -EINVAL, "max_critical 0 -> EINVAL");
		u = t;
		u.hdr = SP_HDR(struct sp_tunables);
		u.values[SP_TUNABLE_BUDGET_NS] = 1;
		CHECK(io(SP_SET_TUNABLES, &u) == -EINVAL, "budget 1 ns -> EINVAL");
		u = t;
		u.hdr = SP_HDR(struct sp_tunables);
		u.values[SP_NUM_TUNABLES] = 1;
		CHECK(io(SP_SET_TUNABLES, &u) == -EINVAL, "unused slot -> EINVAL");
		u = t;
		u.hdr = SP_HDR(struct sp_tunables);
		u.count = SP_TUNABLE_SLOTS + 1;
		CHECK(io(SP_SET_TUNABLES, &u) == -E2BIG, "count past the slots -> E2BIG");
	}

	/* Stats. */
	{
		struct sp_stats *s = calloc(1, sizeof(*s));
		s->hdr = SP_HDR(struct sp_stats);
		CHECK(io(SP_GET_STATS, s) == 0 && s->enabled == 1, "get stats");
		printf("M stats_active_mask 0x%llx\n", (unsigned long long)s->active_mask);
		s->hdr.version = 9;
		CHECK(io(SP_GET_STATS, s) == -EINVAL, "stats bad version -> EINVAL");
		struct sp_hdr h = SP_HDR(struct sp_hdr);
		CHECK(io(SP_RESET_STATS, &h) == 0, "reset stats");
		h.size = 4;
		CHECK(io(SP_RESET_STATS, &h) == -EINVAL, "reset bad size -> EINVAL");
		free(s);
	}

	r = unprivileged();
	CHECK(r == 0, "unprivileged caller: version and tunables readable; changes, stats and the critical set EPERM (bits 0x%x)", r);

	/* Random ioctls: commands near ours and garbage payloads. */
	{
		static unsigned char buf[20000];
		static const unsigned long cmds[] = { SP_GET_VERSION, SP_SET_CRITICAL, SP_ADD_CRITICAL,
			SP_REMOVE_CRITICAL, SP_SET_ENABLED, SP_GET_TUNABLES, SP_SET_TUNABLES, SP_GET_STATS,
			SP_RESET_STATS, SP_GET_CRITICAL };

		for (long i = 0; i < nrandom; i++) {
			unsigned long cmd;
			uint64_t x = rnd();

			switch (x % 4) {
			case 0: cmd = cmds[(x >> 8) % 10]; break;
			case 1: cmd = cmds[(x >> 8) % 10] ^ (1UL << ((x >> 16) % 32)); break;
			case 2: cmd = _IOC((x >> 8) % 4, SP_MAGIC, (x >> 12) % 16, (x >> 20) % 16384); break;
			default: cmd = (uint32_t)rnd(); break;
			}
			/* Mostly valid headers with random bodies, sometimes all garbage. */
			size_t n = _IOC_SIZE(cmd) < sizeof(buf) ? _IOC_SIZE(cmd) : sizeof(buf);
			for (size_t j = 0; j < n; j += 8) {
				uint64_t y = rnd();
				memcpy(buf + j, &y, n - j < 8 ? n - j : 8);
			}
			if (x & (1 << 30) && n >= 8) {
				uint32_t hdr[2] = { (uint32_t)n, SP_ABI_VERSION };
				memcpy(buf, hdr, 8);
				/* Small positive TIDs sometimes name our own threads. */
				if (n >= 16 && (x & (1ULL << 40))) {
					int32_t tid = tids[(x >> 41) % 3];
					memcpy(buf + 8, &tid, 4);
					uint32_t role = (x >> 44) % 4;
					memcpy(buf + 12, &role, 4);
				}
			}
			void *arg = (x & (1ULL << 50)) ? (void *)(uintptr_t)(rnd() & 0xffffffffffffULL) : buf;
			int rc = ioctl(fd, cmd, arg);

			if (rc == 0)
				ok++;
			else if (rc == -1 && errno > 0 && errno < 4096)
				errs++;
			else
				weird++;
		}
	}
	printf("M random_ioctls %ld\n", nrandom);
	printf("M random_ok %ld\n", ok);
	printf("M random_errno %ld\n", errs);
	printf("M random_weird %ld\n", weird);
	CHECK(weird == 0, "every random ioctl answered success or an errno");
	set_enabled(0);
	{
		struct sp_critical_list l = { SP_HDR(struct sp_critical_list) };
		io(SP_SET_CRITICAL, &l);
	}
	printf("M checks %d\n", checks);
	printf("M failures %d\n", failures);
	return failures ? 1 : 0;
}
