// SPDX-License-Identifier: GPL-2.0
/*
 * sp-binder: checks binderfs and the binder driver.
 *
 * usage: sp-binder BINDERFS_MOUNTPOINT
 *
 * Creates a binder device through BINDER_CTL_ADD on binder-control, opens
 * it, maps its buffer and asks BINDER_VERSION. Prints metrics on stdout;
 * exits non-zero on any failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/android/binder.h>
#include <linux/android/binderfs.h>

int main(int argc, char **argv)
{
	struct binderfs_device dev = { 0 };
	struct binder_version ver = { 0 };
	char path[256];
	int ctl, fd;
	__u32 max_threads = 4;
	void *map;

	if (argc != 2) {
		fprintf(stderr, "usage: %s BINDERFS_MOUNTPOINT\n", argv[0]);
		return 2;
	}
	snprintf(path, sizeof(path), "%s/binder-control", argv[1]);
	ctl = open(path, O_RDONLY | O_CLOEXEC);
	if (ctl < 0) {
		fprintf(stderr, "open %s: %s\n", path, strerror(errno));
		return 1;
	}
	snprintf(dev.name, sizeof(dev.name), "sptest0");
	if (ioctl(ctl, BINDER_CTL_ADD, &dev) < 0) {
		fprintf(stderr, "BINDER_CTL_ADD: %s\n", strerror(errno));
		return 1;
	}
	printf("binder_device_major %u\nbinder_device_minor %u\n", dev.major, dev.minor);

	snprintf(path, sizeof(path), "%s/sptest0", argv[1]);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "open %s: %s\n", path, strerror(errno));
		return 1;
	}
	map = mmap(NULL, 128 * 1024, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		fprintf(stderr, "mmap: %s\n", strerror(errno));
		return 1;
	}
	if (ioctl(fd, BINDER_VERSION, &ver) < 0) {
		fprintf(stderr, "BINDER_VERSION: %s\n", strerror(errno));
		return 1;
	}
	if (ioctl(fd, BINDER_SET_MAX_THREADS, &max_threads) < 0) {
		fprintf(stderr, "BINDER_SET_MAX_THREADS: %s\n", strerror(errno));
		return 1;
	}
	printf("binder_protocol_version %d\n", ver.protocol_version);
	munmap(map, 128 * 1024);
	close(fd);
	close(ctl);
	return ver.protocol_version == BINDER_CURRENT_PROTOCOL_VERSION ? 0 : 1;
}
