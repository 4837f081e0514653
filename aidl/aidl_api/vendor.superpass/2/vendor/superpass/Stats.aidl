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

import vendor.superpass.Counter;
import vendor.superpass.HistogramBucket;

/**
 * A snapshot of the module's statistics, as returned by ISuperPass.getStats.
 */
@VintfStability
parcelable Stats {
    /** Whether the fast track is on. */
    boolean enabled;
    /** Critical threads registered in the module. */
    int criticalThreads;
    /** Generation of the module's critical set (bumped on every change). */
    long generation;
    /** Tasks boosted right now. */
    long boosted;
    /** Bit mask of the hooks and mechanisms the module attached; names in activeMechanisms. */
    long activeMask;
    /** Names of the attached mechanisms, one per set bit of activeMask. */
    @utf8InCpp String[] activeMechanisms;
    /** Every named event counter, in the module's order. */
    Counter[] counters;
    /** How long critical threads were blocked: samples recorded. */
    long blockedSamples;
    /** Shortest recorded blocking, in nanoseconds. */
    long blockedMinNs;
    /** Median blocking, in nanoseconds. */
    long blockedP50Ns;
    /** 90th percentile, in nanoseconds. */
    long blockedP90Ns;
    /** 99th percentile, in nanoseconds. */
    long blockedP99Ns;
    /** Longest recorded blocking, in nanoseconds. */
    long blockedMaxNs;
    /** The non-empty buckets of the blocking histogram, shortest first. */
    HistogramBucket[] blockedHistogram;
}
