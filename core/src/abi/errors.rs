//! Why the ABI refuses a request, and the errno each refusal returns.

#[cfg(doc)]
use super::super::Role;
#[cfg(doc)]
use super::{ABI_VERSION, COMMANDS};

/// Why a request was refused; each maps to one errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbiError {
    /// The buffer or the header's size field is not the message's size.
    BadSize,
    /// The header's version is not [`ABI_VERSION`].
    BadVersion,
    /// A count is above its maximum.
    TooMany,
    /// A reserved or unused field is not zero.
    Reserved,
    /// A TID is `<= 0`, or repeated in one list.
    BadTid,
    /// A role is not one of [`Role`].
    BadRole,
    /// A value is out of its documented range.
    BadValue,
    /// The command is not one of [`COMMANDS`].
    UnknownCommand,
    /// No tunable has that name.
    UnknownTunable,
    /// The caller lacks `CAP_SYS_NICE` (decided by the platform).
    NotPermitted,
    /// The TID to remove is not registered.
    NotFound,
    /// The critical set is full.
    NoSpace,
    /// No task has that TID (decided by the platform).
    NoSuchTask,
    /// User memory could not be read or written (decided by the platform).
    Fault,
}

impl AbiError {
    /// The positive errno value; the ioctl returns its negation.
    pub const fn errno(self) -> i32 {
        const EPERM: i32 = 1;
        const ENOENT: i32 = 2;
        const ESRCH: i32 = 3;
        const E2BIG: i32 = 7;
        const EFAULT: i32 = 14;
        const EINVAL: i32 = 22;
        const ENOTTY: i32 = 25;
        const ENOSPC: i32 = 28;
        match self {
            Self::BadSize
            | Self::BadVersion
            | Self::Reserved
            | Self::BadTid
            | Self::BadRole
            | Self::BadValue => EINVAL,
            Self::TooMany => E2BIG,
            Self::UnknownCommand => ENOTTY,
            Self::UnknownTunable | Self::NotFound => ENOENT,
            Self::NotPermitted => EPERM,
            Self::NoSpace => ENOSPC,
            Self::NoSuchTask => ESRCH,
            Self::Fault => EFAULT,
        }
    }

    /// A short description for logs and CLIs.
    pub const fn describe(self) -> &'static str {
        match self {
            Self::BadSize => "message size does not match",
            Self::BadVersion => "unsupported ABI version",
            Self::TooMany => "too many entries",
            Self::Reserved => "reserved field is not zero",
            Self::BadTid => "invalid or repeated TID",
            Self::BadRole => "invalid role",
            Self::BadValue => "value out of range",
            Self::UnknownCommand => "unknown ioctl command",
            Self::UnknownTunable => "unknown tunable",
            Self::NotPermitted => "CAP_SYS_NICE required",
            Self::NotFound => "TID is not registered",
            Self::NoSpace => "critical set is full",
            Self::NoSuchTask => "no such task",
            Self::Fault => "bad user address",
        }
    }
}

impl core::fmt::Display for AbiError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_values() {
        assert_eq!(AbiError::BadSize.errno(), 22);
        assert_eq!(AbiError::TooMany.errno(), 7);
        assert_eq!(AbiError::UnknownCommand.errno(), 25);
        assert_eq!(AbiError::NotPermitted.errno(), 1);
    }
}
