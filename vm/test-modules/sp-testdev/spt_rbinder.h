/* SPDX-License-Identifier: GPL-2.0 */
/* spt_rbinder.c, the Rust Binder stand-in, as spt_dev.c drives it. */
#ifndef SPT_RBINDER_H
#define SPT_RBINDER_H

void spt_rb_init(void);
void spt_rb_exit(void);
/* SPT_RB_CALL, SPT_RB_SERVE and SPT_RB_REPLY; -ENODEV without Rust Binder's hooks. */
long spt_rb_ioctl(unsigned int cmd, unsigned long arg);

#endif
