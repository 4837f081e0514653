// SPDX-License-Identifier: GPL-2.0
/*
 * superpass_probestat.c: how often each probe runs, for the overhead
 * itemization (calls per iteration of a workload, times cost per call).
 *
 * Counting is off unless asked for: each probe's first statement is a
 * static branch (a no-op instruction while off) around a per-CPU increment.
 * /sys/kernel/debug/superpass/probe_calls reads "probe calls" lines summed
 * over the CPUs, after "counting 0|1" and "attached G" (the on-demand probe
 * groups attached now, SP_PROBES_* bits); writing 1 zeroes the counts and
 * starts counting, 0 stops. pick_calls reads the pick probe's counts per CPU.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kstrtox.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>

#include "superpass.h"
#include "superpass_internal.h"

DEFINE_STATIC_KEY_FALSE(sp_counting);
DEFINE_PER_CPU(u64, sp_probe_calls[SPP_NR]);

static const char *const sp_probe_names[SPP_NR] = {
#define SP_PROBE_NAME(name) [SPP_##name] = #name,
	SP_PROBES(SP_PROBE_NAME)
#undef SP_PROBE_NAME
};

static struct dentry *sp_debugfs_dir;

static int sp_calls_show(struct seq_file *m, void *v)
{
	int p, cpu;

	seq_printf(m, "counting %d\n", static_branch_unlikely(&sp_counting) ? 1 : 0);
	seq_printf(m, "attached %u\n", sp_probes_attached_mask());
	for (p = 0; p < SPP_NR; p++) {
		u64 n = 0;

		for_each_possible_cpu(cpu)
			n += per_cpu(sp_probe_calls[p], cpu);
		seq_printf(m, "%s %llu\n", sp_probe_names[p], n);
	}
	return 0;
}

static int sp_calls_open(struct inode *inode, struct file *file)
{
	return single_open(file, sp_calls_show, NULL);
}

/*
 * pick_calls: per CPU, the pick probe's calls, how many of them took the
 * engine lock, and how often any code took the engine lock there (the counts
 * probe_calls sums), to show that a CPU with no fast-track work neither picks
 * nor does anything else under the shared lock.
 */
static int sp_picks_show(struct seq_file *m, void *v)
{
	int cpu;

	seq_puts(m, "cpu replace_next pick_engine engine_lock\n");
	for_each_possible_cpu(cpu)
		seq_printf(m, "%d %llu %llu %llu\n", cpu,
			   per_cpu(sp_probe_calls[SPP_replace_next], cpu),
			   per_cpu(sp_probe_calls[SPP_pick_engine], cpu),
			   per_cpu(sp_probe_calls[SPP_engine_lock], cpu));
	return 0;
}

static int sp_picks_open(struct inode *inode, struct file *file)
{
	return single_open(file, sp_picks_show, NULL);
}

static const struct file_operations sp_picks_fops = {
	.owner = THIS_MODULE,
	.open = sp_picks_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

static ssize_t sp_calls_write(struct file *file, const char __user *buf,
			      size_t len, loff_t *ppos)
{
	bool on;
	int p, cpu, r;

	r = kstrtobool_from_user(buf, len, &on);
	if (r)
		return r;
	static_branch_disable(&sp_counting);
	if (on) {
		for_each_possible_cpu(cpu)
			for (p = 0; p < SPP_NR; p++)
				per_cpu(sp_probe_calls[p], cpu) = 0;
		static_branch_enable(&sp_counting);
	}
	return len;
}

static const struct file_operations sp_calls_fops = {
	.owner = THIS_MODULE,
	.open = sp_calls_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = sp_calls_write,
};

/* Best effort: without debugfs (a user build), there is simply no counter file. */
void sp_probestat_init(void)
{
	sp_debugfs_dir = debugfs_create_dir("superpass", NULL);
	debugfs_create_file("probe_calls", 0600, sp_debugfs_dir, NULL, &sp_calls_fops);
	debugfs_create_file("pick_calls", 0400, sp_debugfs_dir, NULL, &sp_picks_fops);
}

void sp_probestat_exit(void)
{
	debugfs_remove_recursive(sp_debugfs_dir);
	static_branch_disable(&sp_counting);
}
