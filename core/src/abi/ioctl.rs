//! The ioctl numbers: Linux's `_IOC` encoding, each command, and who may run it.

use super::declare::Message;
use super::messages::{
    CriticalList, CriticalOne, Enable, Header, StatsMsg, TidMsg, TunablesMsg, VersionInfo,
};

/// The ioctl type byte ("magic") of `/dev/superpass`.
pub const MAGIC: u32 = 0xB5;

const IOC_NRBITS: u32 = 8;
const IOC_TYPEBITS: u32 = 8;
const IOC_SIZEBITS: u32 = 14;
const IOC_NRSHIFT: u32 = 0;
const IOC_TYPESHIFT: u32 = IOC_NRSHIFT + IOC_NRBITS;
const IOC_SIZESHIFT: u32 = IOC_TYPESHIFT + IOC_TYPEBITS;
const IOC_DIRSHIFT: u32 = IOC_SIZESHIFT + IOC_SIZEBITS;

/// `_IOC_NONE`: no data.
pub const IOC_NONE: u32 = 0;
/// `_IOC_WRITE`: user space writes, the kernel reads.
pub const IOC_WRITE: u32 = 1;
/// `_IOC_READ`: the kernel writes, user space reads.
pub const IOC_READ: u32 = 2;

/// Linux `_IOC(dir, type, nr, size)`.
pub const fn ioc(dir: u32, ty: u32, nr: u32, size: usize) -> u32 {
    (dir << IOC_DIRSHIFT)
        | (ty << IOC_TYPESHIFT)
        | (nr << IOC_NRSHIFT)
        | ((size as u32) << IOC_SIZESHIFT)
}
/// Linux `_IOR(type, nr, size)`.
pub const fn ior(ty: u32, nr: u32, size: usize) -> u32 {
    ioc(IOC_READ, ty, nr, size)
}
/// Linux `_IOW(type, nr, size)`.
pub const fn iow(ty: u32, nr: u32, size: usize) -> u32 {
    ioc(IOC_WRITE, ty, nr, size)
}
/// Linux `_IOWR(type, nr, size)`.
pub const fn iowr(ty: u32, nr: u32, size: usize) -> u32 {
    ioc(IOC_READ | IOC_WRITE, ty, nr, size)
}
/// Linux `_IOC_DIR(cmd)`.
pub const fn ioc_dir(cmd: u32) -> u32 {
    cmd >> IOC_DIRSHIFT
}
/// Linux `_IOC_SIZE(cmd)`: the bytes the argument points at.
pub const fn ioc_size(cmd: u32) -> usize {
    ((cmd >> IOC_SIZESHIFT) & ((1 << IOC_SIZEBITS) - 1)) as usize
}
/// Linux `_IOC_NR(cmd)`.
pub const fn ioc_nr(cmd: u32) -> u32 {
    (cmd >> IOC_NRSHIFT) & ((1 << IOC_NRBITS) - 1)
}
/// Linux `_IOC_TYPE(cmd)`.
pub const fn ioc_type(cmd: u32) -> u32 {
    (cmd >> IOC_TYPESHIFT) & ((1 << IOC_TYPEBITS) - 1)
}

/// Reads the version and limits (no input).
pub const GET_VERSION: u32 = ior(MAGIC, 1, VersionInfo::SIZE);
/// Replaces the whole critical set.
pub const SET_CRITICAL: u32 = iow(MAGIC, 2, CriticalList::SIZE);
/// Adds one critical thread (or changes its role).
pub const ADD_CRITICAL: u32 = iow(MAGIC, 3, CriticalOne::SIZE);
/// Removes one critical thread.
pub const REMOVE_CRITICAL: u32 = iow(MAGIC, 4, TidMsg::SIZE);
/// Turns the fast track on or off at run time.
pub const SET_ENABLED: u32 = iow(MAGIC, 5, Enable::SIZE);
/// Reads the tunables.
pub const GET_TUNABLES: u32 = iowr(MAGIC, 6, TunablesMsg::SIZE);
/// Replaces the tunables (all or nothing).
pub const SET_TUNABLES: u32 = iow(MAGIC, 7, TunablesMsg::SIZE);
/// Reads counters, the blocking histogram and the active-mechanism mask.
pub const GET_STATS: u32 = iowr(MAGIC, 8, StatsMsg::SIZE);
/// Zeroes counters and the histogram.
pub const RESET_STATS: u32 = iow(MAGIC, 9, Header::SIZE);
/// Reads the critical set.
pub const GET_CRITICAL: u32 = iowr(MAGIC, 10, CriticalList::SIZE);

/// Every command, for tests, fuzzers and docs.
pub const COMMANDS: [(&str, u32); 10] = [
    ("GET_VERSION", GET_VERSION),
    ("SET_CRITICAL", SET_CRITICAL),
    ("ADD_CRITICAL", ADD_CRITICAL),
    ("REMOVE_CRITICAL", REMOVE_CRITICAL),
    ("SET_ENABLED", SET_ENABLED),
    ("GET_TUNABLES", GET_TUNABLES),
    ("SET_TUNABLES", SET_TUNABLES),
    ("GET_STATS", GET_STATS),
    ("RESET_STATS", RESET_STATS),
    ("GET_CRITICAL", GET_CRITICAL),
];

/// True if `cmd` changes state.
pub const fn is_mutating(cmd: u32) -> bool {
    matches!(
        cmd,
        SET_CRITICAL | ADD_CRITICAL | REMOVE_CRITICAL | SET_ENABLED | SET_TUNABLES | RESET_STATS
    )
}

/// True if `cmd` needs `CAP_SYS_NICE`: every change, and the reads that reveal which threads
/// are critical or what they wait on (the critical set names the foreground app's threads; the
/// statistics follow its blocking), which would otherwise tell any process which app is in
/// front.
pub const fn needs_privilege(cmd: u32) -> bool {
    is_mutating(cmd) || matches!(cmd, GET_CRITICAL | GET_STATS)
}

// `_IOC_SIZE` has 14 bits.
const _: () = assert!(StatsMsg::SIZE < (1 << IOC_SIZEBITS));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ioc_matches_linux_encoding() {
        // _IOR('S', 1, int) on x86_64 is 0x80045301.
        assert_eq!(ior(b'S' as u32, 1, 4), 0x8004_5301);
        assert_eq!(iow(b'S' as u32, 2, 8), 0x4008_5302);
        assert_eq!(iowr(b'S' as u32, 3, 16), 0xC010_5303);
        assert_eq!(ioc_size(GET_STATS), StatsMsg::SIZE);
        assert_eq!(ioc_type(SET_CRITICAL), MAGIC);
        assert_eq!(ioc_nr(GET_CRITICAL), 10);
        assert_eq!(ioc_dir(GET_VERSION), IOC_READ);
    }

    #[test]
    fn commands_are_distinct() {
        for (i, a) in COMMANDS.iter().enumerate() {
            for b in &COMMANDS[i + 1..] {
                assert_ne!(a.1, b.1, "{} vs {}", a.0, b.0);
            }
        }
    }
}
