// SPDX-License-Identifier: GPL-2.0
/*
 * superpass_dev.c: /dev/superpass, the module parameter and the C side of
 * module init and exit.
 */
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>

#include "superpass.h"
#include "superpass_internal.h"

static long sp_dev_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	return sp_ioctl(cmd, arg);
}

static const struct file_operations sp_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = sp_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice sp_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "superpass",
	.fops = &sp_fops,
	/* Root only until ueventd applies the platform's owner and mode. */
	.mode = 0600,
};

static bool sp_misc_registered;

/*
 * Called by the Rust module init once the engine exists: registers the
 * device, then attaches the hooks. Reports the active mechanisms and the
 * mechanisms another module blocked.
 */
int sp_c_init(u64 *active_mask, u64 *busy_mask)
{
	int r;

	sp_sched_init();
	sp_trace_init();
	r = misc_register(&sp_misc);
	if (r)
		return r;
	sp_misc_registered = true;
	sp_probestat_init();
	sp_attach_all(active_mask, busy_mask);
	return 0;
}

/*
 * Only reachable when no restricted hook was attached (otherwise the module
 * is pinned): detaches the normal hooks and removes the devices.
 */
void sp_c_exit(void)
{
	sp_detach_normal();
	sp_probestat_exit();
	if (sp_misc_registered)
		misc_deregister(&sp_misc);
	sp_moves_exit();
	sp_sched_exit();
}
