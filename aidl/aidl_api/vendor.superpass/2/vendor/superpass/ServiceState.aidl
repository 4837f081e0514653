///////////////////////////////////////////////////////////////////////////////
// THIS FILE IS IMMUTABLE. DO NOT EDIT IN ANY CASE.                          //
///////////////////////////////////////////////////////////////////////////////

// This file is a snapshot of an AIDL file. Do not edit it manually. There are
// two cases:
// 1). this is a frozen version file - do not edit this in any case.
// 2). this is a 'current' file. If you make a backwards compatible change to
//     the interface (from the latest frozen version), the build system will
//     prompt you to update this file with `m <name>-update-api`.
//
// You must not make a backward incompatible change to any AIDL file built
// with the aidl_interface module type with versions property set. The module
// type is used to build AIDL files in a way that they can be used across
// independently updatable components of the system. If a new version of the
// interface is needed, please add a new version in the aidl_interface module
// properties.

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
