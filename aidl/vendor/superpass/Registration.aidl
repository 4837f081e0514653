/*
 * SPDX-License-Identifier: Apache-2.0
 */

package vendor.superpass;

import vendor.superpass.Role;

/**
 * One critical thread as the service holds it, with who registered it.
 */
@VintfStability
parcelable Registration {
    /** Process the thread belongs to. */
    int pid;
    /** Kernel thread id. */
    int tid;
    /** Why the thread is critical. */
    Role role = Role.OTHER;
    /**
     * Who owns it: "unowned" (registered without a token), "client:<pid>" (a live client
     * token, with the pid that first used it) or "discovery" (the top-app watcher); threads
     * of the foreground app carry a "foreground:" prefix.
     */
    @utf8InCpp String owner;
}
