/*
 * SPDX-License-Identifier: Apache-2.0
 */

package vendor.superpass;

/**
 * One policy knob of the module: its current value and the range it accepts.
 */
@VintfStability
parcelable Tunable {
    /** Stable name, as accepted by ISuperPass.setTunable. */
    @utf8InCpp String name;
    /** Value in force in the module. */
    long value;
    /** Value the module starts with. */
    long defaultValue;
    /** Smallest accepted value. */
    long min;
    /** Largest accepted value. */
    long max;
    /** Unit of the value ("ns", "us", "count", "bool", ...). */
    @utf8InCpp String unit;
    /** One-line description. */
    @utf8InCpp String doc;
}
