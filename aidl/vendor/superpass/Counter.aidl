/*
 * SPDX-License-Identifier: Apache-2.0
 */

package vendor.superpass;

/**
 * One named event counter of the module.
 */
@VintfStability
parcelable Counter {
    /** Stable counter name. */
    @utf8InCpp String name;
    /** Events since load or since the last resetStats. */
    long value;
}
