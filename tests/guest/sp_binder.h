/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sp_binder.h: raw binder for the guest programs that call through it
 * (sp-binder-chain, sp-overhead): a device of their own on binderfs, its
 * buffer, one synchronous call to the context manager, and the context
 * manager's loop that answers calls. Header-only, as sp_harness.h.
 */
#ifndef SP_BINDER_H
#define SP_BINDER_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/android/binder.h>
#include <linux/android/binderfs.h>

#define SP_BINDER_MAP_SIZE (1024 * 1024)

/* The path of the program's binder device, from sp_binder_make_device(). */
static char sp_binder_path[600];

/*
 * Creates a binder device named @prefix plus the PID on the binderfs mount
 * @binderfs (through its binder-control) and sets sp_binder_path; 0 or -1.
 */
static __attribute__((unused)) int sp_binder_make_device(const char *binderfs, const char *prefix)
{
	struct binderfs_device dev = { 0 };
	char ctl[256];
	int fd;

	snprintf(ctl, sizeof(ctl), "%s/binder-control", binderfs);
	fd = open(ctl, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "open %s: %s\n", ctl, strerror(errno));
		return -1;
	}
	snprintf(dev.name, sizeof(dev.name), "%s%d", prefix, getpid());
	if (ioctl(fd, BINDER_CTL_ADD, &dev) < 0) {
		fprintf(stderr, "%s: BINDER_CTL_ADD %s: %s\n", ctl, dev.name, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	snprintf(sp_binder_path, sizeof(sp_binder_path), "%s/%s", binderfs, dev.name);
	return 0;
}

/* Opens the program's binder device and maps its buffer: every binder user needs both. */
static __attribute__((unused)) int sp_binder_open(void)
{
	int fd = open(sp_binder_path, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "open %s: %s\n", sp_binder_path, strerror(errno));
		exit(2);
	}
	if (mmap(NULL, SP_BINDER_MAP_SIZE, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
		fprintf(stderr, "mmap %s: %s\n", sp_binder_path, strerror(errno));
		exit(2);
	}
	return fd;
}

static int sp_binder_write_read(int fd, const void *wbuf, size_t wlen, void *rbuf, size_t rlen,
				size_t *got)
{
	struct binder_write_read bwr = {
		.write_size = wlen, .write_buffer = (binder_uintptr_t)(uintptr_t)wbuf,
		.read_size = rlen, .read_buffer = (binder_uintptr_t)(uintptr_t)rbuf,
	};
	int r;

	do
		r = ioctl(fd, BINDER_WRITE_READ, &bwr);
	while (r < 0 && errno == EINTR);
	if (got)
		*got = bwr.read_consumed;
	return r;
}

struct __attribute__((packed)) sp_binder_txn {
	uint32_t cmd;
	struct binder_transaction_data tr;
};

struct __attribute__((packed)) sp_binder_free_reply {
	uint32_t free_cmd;
	binder_uintptr_t buffer;
	uint32_t reply_cmd;
	struct binder_transaction_data tr;
};

/*
 * Walks the returned commands in @buf until the one that ends a call: the
 * reply (frees its buffer; returns 1) or an error (returns -1); 0 if neither
 * came yet.
 */
static int sp_binder_scan_reply(int fd, const uint8_t *buf, size_t len)
{
	size_t off = 0;

	while (off + sizeof(uint32_t) <= len) {
		uint32_t cmd;

		memcpy(&cmd, buf + off, sizeof(cmd));
		off += sizeof(cmd);
		switch (cmd) {
		case BR_NOOP:
		case BR_TRANSACTION_COMPLETE:
			break;
		case BR_REPLY: {
			struct binder_transaction_data tr;
			struct __attribute__((packed)) { uint32_t cmd; binder_uintptr_t buffer; } fb;

			memcpy(&tr, buf + off, sizeof(tr));
			off += sizeof(tr);
			fb.cmd = BC_FREE_BUFFER;
			fb.buffer = tr.data.ptr.buffer;
			sp_binder_write_read(fd, &fb, sizeof(fb), NULL, 0, NULL);
			return 1;
		}
		case BR_DEAD_REPLY:
		case BR_FAILED_REPLY:
			fprintf(stderr, "binder call failed (0x%x)\n", cmd);
			return -1;
		default:
			fprintf(stderr, "unexpected binder return 0x%x\n", cmd);
			return -1;
		}
	}
	return 0;
}

/* One synchronous call with @code to the context manager; 0 once its reply came. */
static __attribute__((unused)) int sp_binder_call(int fd, uint32_t code)
{
	struct sp_binder_txn w = { .cmd = BC_TRANSACTION };
	uint8_t rbuf[256];
	size_t got;
	int r;

	w.tr.target.handle = 0;
	w.tr.code = code;
	if (sp_binder_write_read(fd, &w, sizeof(w), rbuf, sizeof(rbuf), &got) < 0)
		return -1;
	while (!(r = sp_binder_scan_reply(fd, rbuf, got)))
		if (sp_binder_write_read(fd, NULL, 0, rbuf, sizeof(rbuf), &got) < 0)
			return -1;
	return r < 0 ? -1 : 0;
}

/* Makes @fd's process the context manager of its device, with no threads spawned on demand. */
static __attribute__((unused)) int sp_binder_become_manager(int fd)
{
	int zero = 0;

	if (ioctl(fd, BINDER_SET_MAX_THREADS, &zero) < 0 ||
	    ioctl(fd, BINDER_SET_CONTEXT_MGR, &zero) < 0) {
		fprintf(stderr, "%s: BINDER_SET_MAX_THREADS / BINDER_SET_CONTEXT_MGR: %s\n",
			sp_binder_path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * A pool thread of the context manager on @fd: enters the looper and answers
 * every call, after @handle(code) (may be NULL) has run, until the process is
 * killed. Exits the process on an error.
 */
static __attribute__((unused)) void sp_binder_loop(int fd, void (*handle)(uint32_t code))
{
	uint32_t enter = BC_ENTER_LOOPER;
	uint8_t rbuf[512];

	sp_binder_write_read(fd, &enter, sizeof(enter), NULL, 0, NULL);
	for (;;) {
		size_t got, off = 0;

		if (sp_binder_write_read(fd, NULL, 0, rbuf, sizeof(rbuf), &got) < 0) {
			fprintf(stderr, "server %s: BINDER_WRITE_READ: %s\n", sp_binder_path,
				strerror(errno));
			exit(1);
		}
		while (off + sizeof(uint32_t) <= got) {
			struct binder_transaction_data tr;
			struct sp_binder_free_reply fr = {
				.free_cmd = BC_FREE_BUFFER, .reply_cmd = BC_REPLY,
			};
			uint32_t cmd;

			memcpy(&cmd, rbuf + off, sizeof(cmd));
			off += sizeof(cmd);
			if (cmd == BR_NOOP || cmd == BR_TRANSACTION_COMPLETE || cmd == BR_SPAWN_LOOPER)
				continue;
			if (cmd != BR_TRANSACTION) {
				fprintf(stderr, "server: unexpected binder return 0x%x\n", cmd);
				exit(1);
			}
			memcpy(&tr, rbuf + off, sizeof(tr));
			off += sizeof(tr);
			if (handle)
				handle(tr.code);
			fr.buffer = tr.data.ptr.buffer;
			sp_binder_write_read(fd, &fr, sizeof(fr), NULL, 0, NULL);
		}
	}
}

#endif
