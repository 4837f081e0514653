/*
 * SPDX-License-Identifier: Apache-2.0
 */

package vendor.superpass;

import vendor.superpass.Registration;

/**
 * What the service holds and pushes into the module, as returned by ISuperPass.getState.
 */
@VintfStability
parcelable ServiceState {
    /** ABI version the module reports for /dev/superpass. */
    int abiVersion;
    /** Backend in use: "device" (/dev/superpass) or "memory" (in-process engine, tests). */
    @utf8InCpp String backend;
    /** Whether boosting is on. */
    boolean enabled;
    /** Whether the top-app cpuset watcher runs (foreground discovery). */
    boolean foregroundDiscovery;
    /** Foreground app pid, or 0 when none is known. */
    int foregroundPid;
    /** Every critical thread the module holds, merged from all owners. */
    Registration[] registrations;
    /** Number of live client tokens being watched for death. */
    int clients;
}
