// SPDX-License-Identifier: GPL-2.0
/*
 * sp-ctl: a minimal /dev/superpass client for guest test scripts.
 *
 *   sp-ctl enable 0|1          SET_ENABLED
 *   sp-ctl critical [TID...]   SET_CRITICAL (role ui; no TIDs clears the set)
 *   sp-ctl list                GET_CRITICAL: the registered TIDs, one a line
 *   sp-ctl stats               GET_STATS as "key value" lines
 *   sp-ctl set NAME=VALUE      one tunable, the others kept (GET/SET_TUNABLES)
 *   sp-ctl get NAME            one tunable's value (GET_TUNABLES)
 *   sp-ctl uclamp-used         asks for uclamp.min 0 (no change) on this thread, which
 *                              switches the kernel's uclamp accounting on, as Android's
 *                              task profiles do at boot (until then no clamp is computed)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/sched.h>
#include <linux/sched/types.h>
#include <unistd.h>
#include "superpass_uapi.h"

int main(int argc, char **argv)
{
	int fd;

	if (argc == 2 && !strcmp(argv[1], "uclamp-used")) {
		struct sched_attr a = {
			.size = sizeof(a),
			.sched_flags = SCHED_FLAG_KEEP_ALL | SCHED_FLAG_UTIL_CLAMP_MIN,
			.sched_util_min = 0,
		};

		if (syscall(SYS_sched_setattr, 0, &a, 0)) {
			perror("sched_setattr(uclamp.min)");
			return 1;
		}
		return 0;
	}
	fd = open("/dev/superpass", O_RDWR);
	if (fd < 0 || argc < 2) {
		fprintf(stderr, "usage: sp-ctl enable 0|1 | critical [TID...] | list | stats | set NAME=VALUE | get NAME | "
				"uclamp-used\n");
		return 2;
	}
	if (!strcmp(argv[1], "enable") && argc == 3) {
		struct sp_enable e = { SP_HDR(struct sp_enable), (uint32_t)atoi(argv[2]), 0 };

		if (ioctl(fd, SP_SET_ENABLED, &e)) {
			perror("SET_ENABLED");
			return 1;
		}
	} else if (!strcmp(argv[1], "critical")) {
		struct sp_critical_list l = { SP_HDR(struct sp_critical_list) };

		for (int i = 2; i < argc && l.count < SP_MAX_CRITICAL; i++)
			l.entries[l.count++] = (struct sp_entry){ atoi(argv[i]), SP_ROLE_UI };
		if (ioctl(fd, SP_SET_CRITICAL, &l)) {
			perror("SET_CRITICAL");
			return 1;
		}
	} else if (!strcmp(argv[1], "list")) {
		struct sp_critical_list l = { SP_HDR(struct sp_critical_list) };

		if (ioctl(fd, SP_GET_CRITICAL, &l)) {
			perror("GET_CRITICAL");
			return 1;
		}
		for (uint32_t i = 0; i < l.count && i < SP_MAX_CRITICAL; i++)
			printf("%d\n", l.entries[i].tid);
	} else if (!strcmp(argv[1], "stats")) {
		struct sp_stats *s = calloc(1, sizeof(*s));

		s->hdr = SP_HDR(struct sp_stats);
		if (ioctl(fd, SP_GET_STATS, s)) {
			perror("GET_STATS");
			return 1;
		}
		printf("enabled %u\nncritical %u\nactive_mask 0x%llx\nall_mechanisms 0x%llx\nboosted %llu\n",
		       s->enabled, s->ncritical, (unsigned long long)s->active_mask,
		       (unsigned long long)((1ULL << SP_NUM_MECHS) - 1), (unsigned long long)s->boosted);
		for (unsigned i = 0; i < SP_NUM_COUNTERS; i++)
			if (sp_counter_names[i]) /* NULL: a reserved slot */
				printf("%s %llu\n", sp_counter_names[i], (unsigned long long)s->counters[i]);
		for (int b = 0; b < SP_NUM_MECHS; b++)
			if (s->active_mask & (1ULL << b))
				printf("mechanism %s\n", sp_mech_names[b]);
	} else if ((!strcmp(argv[1], "set") || !strcmp(argv[1], "get")) && argc == 3) {
		struct sp_tunables t = { SP_HDR(struct sp_tunables) };
		int set = !strcmp(argv[1], "set");
		const char *eq = set ? strchr(argv[2], '=') : argv[2] + strlen(argv[2]);
		int k;

		for (k = 0; k < SP_NUM_TUNABLES; k++)
			if (eq && strlen(sp_tunable_names[k]) == (size_t)(eq - argv[2]) &&
			    !strncmp(argv[2], sp_tunable_names[k], eq - argv[2]))
				break;
		if (k == SP_NUM_TUNABLES) {
			fprintf(stderr, "sp-ctl %s %s: unknown tunable\n", argv[1], argv[2]);
			return 2;
		}
		if (ioctl(fd, SP_GET_TUNABLES, &t)) {
			perror("GET_TUNABLES");
			return 1;
		}
		if (!set) {
			printf("%llu\n", (unsigned long long)t.values[k]);
			return 0;
		}
		t.values[k] = strtoull(eq + 1, NULL, 0);
		if (ioctl(fd, SP_SET_TUNABLES, &t)) {
			perror("SET_TUNABLES");
			return 1;
		}
	} else {
		fprintf(stderr, "sp-ctl: unknown command\n");
		return 2;
	}
	return 0;
}
