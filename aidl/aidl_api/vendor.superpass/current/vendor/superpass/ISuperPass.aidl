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

import vendor.superpass.CriticalThread;
import vendor.superpass.ServiceState;
import vendor.superpass.Stats;
import vendor.superpass.Tunable;

/**
 * SuperPass HAL: tells the superpass kernel module which threads are latency critical, and tunes it.
 *
 * Service name: vendor.superpass.ISuperPass/default.
 *
 * Ownership: calls that register threads take a nullable `token`. With a token, the
 * registrations belong to it and are dropped when the token's process dies (or on
 * releaseClient). With null, they stay until removed (what superpassctl does).
 *
 * Errors: EX_SECURITY for a caller whose uid is not allowed; EX_ILLEGAL_ARGUMENT for a
 * malformed call; EX_SERVICE_SPECIFIC with one of the ERROR_* codes below otherwise.
 */
@VintfStability
interface ISuperPass {
    /** Most critical threads the module holds at once, over all owners. */
    const int MAX_CRITICAL_THREADS = 32;
    /** Longest tunable name accepted. */
    const int MAX_NAME_LENGTH = 64;

    /** A tid does not exist or does not belong to the pid given with it. */
    const int ERROR_NO_SUCH_THREAD = 1;
    /** A role is not one of Role's values. */
    const int ERROR_BAD_ROLE = 2;
    /** The call would make more than MAX_CRITICAL_THREADS critical threads. */
    const int ERROR_TOO_MANY_THREADS = 3;
    /** No tunable has that name. */
    const int ERROR_UNKNOWN_TUNABLE = 4;
    /** The value is outside the tunable's range. */
    const int ERROR_OUT_OF_RANGE = 5;
    /** The tid is not registered by this owner. */
    const int ERROR_NOT_REGISTERED = 6;
    /** The module refused or failed the request (see the service log for the errno). */
    const int ERROR_DEVICE = 7;

    /**
     * Declares the foreground app: its UI thread (uiTid == pid) and RenderThread.
     *
     * Replaces the previous foreground app, whoever set it. renderTid 0 means the app
     * has no RenderThread yet.
     */
    void setForegroundApp(in @nullable IBinder token, int pid, int uiTid, int renderTid);

    /** Forgets the foreground app. */
    void clearForegroundApp();

    /** Replaces every thread registered by this owner with `threads`, all of process `pid`. */
    void setCriticalThreads(in @nullable IBinder token, int pid, in CriticalThread[] threads);

    /** Registers one more critical thread of process `pid` (or changes its role). */
    void addCriticalThread(in @nullable IBinder token, int pid, in CriticalThread thread);

    /** Unregisters a thread this owner registered. */
    void removeCriticalThread(in @nullable IBinder token, int tid);

    /** Drops everything registered with `token`, as if its process had died. */
    void releaseClient(in IBinder token);

    /** Turns boosting on or off; persisted across restarts. */
    void setEnabled(boolean enabled);

    /** Turns the top-app cpuset watcher on or off; persisted across restarts. */
    void setForegroundDiscovery(boolean enabled);

    /** Returns the module's statistics. */
    Stats getStats();

    /** Zeroes the module's counters and histogram. */
    void resetStats();

    /** Returns every tunable with its value and range. */
    Tunable[] getTunables();

    /** Sets one tunable by name; persisted across restarts. */
    void setTunable(@utf8InCpp String name, long value);

    /** Returns what the service holds: mode, foreground app, registrations. */
    ServiceState getState();

    /**
     * Version 2: setForegroundApp without waiting for the service, for the framework's
     * top-app change, which runs under ActivityManager's lock: a hung service cannot stall it.
     *
     * The service applies the same checks; a refused call is logged, not returned.
     */
    oneway void notifyForegroundApp(in @nullable IBinder token, int pid, int uiTid, int renderTid);
}
