/*
 * SPDX-License-Identifier: Apache-2.0
 */

package vendor.superpass;

/**
 * One non-empty bucket of the blocking-duration histogram.
 */
@VintfStability
parcelable HistogramBucket {
    /** Smallest duration the bucket holds, in nanoseconds. */
    long lowNs;
    /** Width of the bucket, in nanoseconds. */
    long widthNs;
    /** Samples in the bucket. */
    long count;
}
