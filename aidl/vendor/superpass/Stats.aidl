/*
 * SPDX-License-Identifier: Apache-2.0
 */

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
