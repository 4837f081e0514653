/*
 * SPDX-License-Identifier: Apache-2.0
 */

package vendor.superpass;

import vendor.superpass.Role;

/**
 * One latency-critical thread: the thread SuperPass protects from lock holders.
 */
@VintfStability
parcelable CriticalThread {
    /** Kernel thread id; it must belong to the pid given with it. */
    int tid;
    /** Why the thread is critical. */
    Role role = Role.OTHER;
}
