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
