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
