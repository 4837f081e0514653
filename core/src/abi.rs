//! The single definition of the `/dev/superpass` ioctl interface.
//!
//! The kernel module decodes requests with this code and the service encodes them with it, so
//! the two sides cannot drift. Command numbers use the Linux `_IOC` encoding; every message is a
//! `#[repr(C)]` struct that starts with a [`Header`] carrying its size and the ABI version, and
//! is (de)serialised field by field in native byte order, validating everything: sizes, version,
//! counts, reserved fields, TIDs, roles and tunable ranges. Errors are typed and map to errno.
//! docs/abi.md documents every command.

use super::stats::{Histogram, HIST_BUCKETS, NUM_COUNTERS};
use super::tunables::{Tunables, MAX_CRITICAL, NUM_TUNABLES};
use super::{Role, Tid};

/// The ABI version every [`Header`] must carry.
pub const ABI_VERSION: u32 = 1;
/// The ioctl type byte ("magic") of `/dev/superpass`.
pub const MAGIC: u32 = 0xB5;
/// The most entries a [`CriticalList`] carries.
pub const MAX_CRITICAL_ENTRIES: usize = MAX_CRITICAL;
/// The tunable slots a [`TunablesMsg`] carries (room to grow past [`NUM_TUNABLES`]).
pub const TUNABLE_SLOTS: usize = 16;

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

/// Bits of [`StatsMsg::active_mask`]: which hooks and mechanisms the platform attached.
pub mod mech {
    /// `android_vh_mutex_wait_start` / `_finish`.
    pub const MUTEX_WAIT: u64 = 1 << 0;
    /// `android_vh_rwsem_read_wait_start` / `_finish`.
    pub const RWSEM_READ_WAIT: u64 = 1 << 1;
    /// `android_vh_rwsem_write_wait_start` / `_finish`.
    pub const RWSEM_WRITE_WAIT: u64 = 1 << 2;
    /// rwsem reader-owned record/clear hooks (reader tracking).
    pub const RWSEM_READERS: u64 = 1 << 3;
    /// rwsem writer-owned record/clear hooks.
    pub const RWSEM_WRITER: u64 = 1 << 4;
    /// `android_vh_mutex_unlock_slowpath` (release ends grants).
    pub const MUTEX_UNLOCK: u64 = 1 << 5;
    /// `android_rvh_enqueue_task`.
    pub const ENQUEUE: u64 = 1 << 6;
    /// `android_rvh_dequeue_task`.
    pub const DEQUEUE: u64 = 1 << 7;
    /// `android_rvh_replace_next_task_fair`: the fast track itself.
    pub const PICK: u64 = 1 << 8;
    /// `android_rvh_check_preempt_wakeup_fair`.
    pub const PREEMPT: u64 = 1 << 9;
    /// `android_rvh_select_task_rq_fair`.
    pub const SELECT_CPU: u64 = 1 << 10;
    /// The scheduler tick hook.
    pub const TICK: u64 = 1 << 11;
    /// `android_vh_free_task` (exit cleanup).
    pub const TASK_EXIT: u64 = 1 << 12;
    /// `android_vh_do_futex` and `android_vh_futex_wait_start` / `_end`: owner-hinted futexes.
    pub const FUTEX_HINT: u64 = 1 << 13;
    /// `android_vh_futex_wake_traverse_plist` and `android_vh_futex_wake_this`: a futex wake
    /// that passes over a tracked waiter boosts the woken thread.
    pub const FUTEX_WOKEN: u64 = 1 << 14;
    /// `android_vh_rtmutex_wait_start` / `_finish`: PI futexes and rt_mutexes.
    pub const PI_FUTEX: u64 = 1 << 15;
    /// `android_rvh_uclamp_eff_get`: a boosted task's uclamp.min is raised for its grant (only
    /// on a kernel with `CONFIG_UCLAMP_TASK`).
    pub const UCLAMP: u64 = 1 << 16;
    /// `android_rvh_update_misfit_status` and `android_rvh_can_migrate_task`: a boosted blocker
    /// off the fast CPUs is marked misfit, and load balancing keeps it, running, off the
    /// critical threads' CPUs.
    pub const MISFIT: u64 = 1 << 17;
}

/// Names of the [`mech`] bits, by bit number.
pub const MECH_NAMES: [&str; 18] = [
    "mutex_wait",
    "rwsem_read_wait",
    "rwsem_write_wait",
    "rwsem_readers",
    "rwsem_writer",
    "mutex_unlock",
    "enqueue",
    "dequeue",
    "pick",
    "preempt",
    "select_cpu",
    "tick",
    "task_exit",
    "futex_hint",
    "futex_woken",
    "pi_futex",
    "uclamp",
    "misfit",
];

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

/// Bounds-checked native-endian field reader.
struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(b: &'a [u8], size: usize) -> Result<Self, AbiError> {
        if b.len() != size {
            return Err(AbiError::BadSize);
        }
        Ok(Self { b, pos: 0 })
    }
    fn take<const N: usize>(&mut self) -> Result<[u8; N], AbiError> {
        let s = self
            .b
            .get(self.pos..self.pos + N)
            .ok_or(AbiError::BadSize)?;
        self.pos += N;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
    fn u32(&mut self) -> Result<u32, AbiError> {
        Ok(u32::from_ne_bytes(self.take()?))
    }
    fn i32(&mut self) -> Result<i32, AbiError> {
        Ok(i32::from_ne_bytes(self.take()?))
    }
    fn u64(&mut self) -> Result<u64, AbiError> {
        Ok(u64::from_ne_bytes(self.take()?))
    }
    fn zero32(&mut self) -> Result<(), AbiError> {
        if self.u32()? != 0 {
            return Err(AbiError::Reserved);
        }
        Ok(())
    }
    fn header(&mut self, size: usize) -> Result<Header, AbiError> {
        let h = Header {
            size: self.u32()?,
            version: self.u32()?,
        };
        h.check(size)?;
        Ok(h)
    }
}

/// Bounds-checked native-endian field writer.
struct Writer<'a> {
    b: &'a mut [u8],
    pos: usize,
}

impl<'a> Writer<'a> {
    fn new(b: &'a mut [u8], size: usize) -> Result<Self, AbiError> {
        if b.len() < size {
            return Err(AbiError::BadSize);
        }
        Ok(Self { b, pos: 0 })
    }
    fn put(&mut self, v: &[u8]) {
        // `new` checked the buffer against the message's size, so this is always in range.
        if let Some(d) = self.b.get_mut(self.pos..self.pos + v.len()) {
            d.copy_from_slice(v);
        }
        self.pos += v.len();
    }
    fn u32(&mut self, v: u32) {
        self.put(&v.to_ne_bytes());
    }
    fn i32(&mut self, v: i32) {
        self.put(&v.to_ne_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.put(&v.to_ne_bytes());
    }
    fn header(&mut self, size: usize) {
        self.u32(size as u32);
        self.u32(ABI_VERSION);
    }
}

/// A message that crosses the ioctl boundary.
pub trait Message: Sized {
    /// Its size in bytes, equal to `size_of::<Self>()` (checked at compile time).
    const SIZE: usize;
    /// Writes the message (with a fresh header) into the first [`Self::SIZE`] bytes of `out`.
    fn encode(&self, out: &mut [u8]) -> Result<(), AbiError>;
    /// Reads and fully validates a message from exactly [`Self::SIZE`] bytes.
    fn decode(b: &[u8]) -> Result<Self, AbiError>;
}

/// The first field of every message.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Header {
    /// The size of the whole message in bytes.
    pub size: u32,
    /// [`ABI_VERSION`].
    pub version: u32,
}

impl Header {
    /// The header a message of `size` bytes carries.
    pub const fn for_size(size: usize) -> Self {
        Self {
            size: size as u32,
            version: ABI_VERSION,
        }
    }

    fn check(&self, size: usize) -> Result<(), AbiError> {
        if self.size as usize != size {
            return Err(AbiError::BadSize);
        }
        if self.version != ABI_VERSION {
            return Err(AbiError::BadVersion);
        }
        Ok(())
    }
}

impl Message for Header {
    const SIZE: usize = 8;
    fn encode(&self, out: &mut [u8]) -> Result<(), AbiError> {
        Writer::new(out, Self::SIZE)?.header(Self::SIZE);
        Ok(())
    }
    fn decode(b: &[u8]) -> Result<Self, AbiError> {
        Reader::new(b, Self::SIZE)?.header(Self::SIZE)
    }
}

/// The reply to [`GET_VERSION`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct VersionInfo {
    /// Header (size and [`ABI_VERSION`]).
    pub hdr: Header,
    /// [`MAX_CRITICAL_ENTRIES`].
    pub max_critical: u32,
    /// [`NUM_TUNABLES`].
    pub num_tunables: u32,
    /// [`NUM_COUNTERS`].
    pub num_counters: u32,
    /// [`HIST_BUCKETS`].
    pub hist_buckets: u32,
    /// Mechanisms the platform could attach ([`mech`] bits).
    pub active_mask: u64,
}

impl Message for VersionInfo {
    const SIZE: usize = 32;
    fn encode(&self, out: &mut [u8]) -> Result<(), AbiError> {
        let mut w = Writer::new(out, Self::SIZE)?;
        w.header(Self::SIZE);
        w.u32(self.max_critical);
        w.u32(self.num_tunables);
        w.u32(self.num_counters);
        w.u32(self.hist_buckets);
        w.u64(self.active_mask);
        Ok(())
    }
    fn decode(b: &[u8]) -> Result<Self, AbiError> {
        let mut r = Reader::new(b, Self::SIZE)?;
        Ok(Self {
            hdr: r.header(Self::SIZE)?,
            max_critical: r.u32()?,
            num_tunables: r.u32()?,
            num_counters: r.u32()?,
            hist_buckets: r.u32()?,
            active_mask: r.u64()?,
        })
    }
}

/// One critical thread and its role.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct CriticalEntry {
    /// The thread id, `> 0`.
    pub tid: i32,
    /// A [`Role`] as `u32`.
    pub role: u32,
}

impl CriticalEntry {
    /// An entry for `tid` with `role`.
    pub const fn new(tid: Tid, role: Role) -> Self {
        Self {
            tid,
            role: role as u32,
        }
    }

    /// The validated role.
    pub fn role(&self) -> Result<Role, AbiError> {
        Role::from_u32(self.role).ok_or(AbiError::BadRole)
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, AbiError> {
        Ok(Self {
            tid: r.i32()?,
            role: r.u32()?,
        })
    }

    fn validate(&self) -> Result<(), AbiError> {
        if self.tid <= 0 {
            return Err(AbiError::BadTid);
        }
        self.role().map(|_| ())
    }
}

/// The argument of [`SET_CRITICAL`] and the reply to [`GET_CRITICAL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct CriticalList {
    /// Header.
    pub hdr: Header,
    /// Entries in use, at most [`MAX_CRITICAL_ENTRIES`].
    pub count: u32,
    /// Must be zero.
    pub reserved: u32,
    /// The set's generation (output only; zero on input).
    pub generation: u64,
    /// `entries[..count]` are the threads; the rest must be zero.
    pub entries: [CriticalEntry; MAX_CRITICAL_ENTRIES],
}

impl CriticalList {
    /// A list of `entries`; more than [`MAX_CRITICAL_ENTRIES`] is [`AbiError::TooMany`].
    pub fn new(entries: &[(Tid, Role)]) -> Result<Self, AbiError> {
        if entries.len() > MAX_CRITICAL_ENTRIES {
            return Err(AbiError::TooMany);
        }
        let mut l = Self {
            hdr: Header::for_size(Self::SIZE),
            count: entries.len() as u32,
            reserved: 0,
            generation: 0,
            entries: [CriticalEntry::default(); MAX_CRITICAL_ENTRIES],
        };
        for (e, &(tid, role)) in l.entries.iter_mut().zip(entries) {
            *e = CriticalEntry::new(tid, role);
        }
        Ok(l)
    }

    /// The entries in use.
    pub fn entries(&self) -> &[CriticalEntry] {
        let n = (self.count as usize).min(MAX_CRITICAL_ENTRIES);
        self.entries.get(..n).unwrap_or(&[])
    }
}

impl Message for CriticalList {
    const SIZE: usize = 24 + 8 * MAX_CRITICAL_ENTRIES;
    fn encode(&self, out: &mut [u8]) -> Result<(), AbiError> {
        let mut w = Writer::new(out, Self::SIZE)?;
        w.header(Self::SIZE);
        w.u32(self.count);
        w.u32(self.reserved);
        w.u64(self.generation);
        for e in &self.entries {
            w.i32(e.tid);
            w.u32(e.role);
        }
        Ok(())
    }
    fn decode(b: &[u8]) -> Result<Self, AbiError> {
        let l = Self::decode_any(b)?;
        if l.generation != 0 {
            return Err(AbiError::Reserved);
        }
        Ok(l)
    }
}

impl CriticalList {
    /// Decodes a [`GET_CRITICAL`] reply, which carries the set's generation.
    pub fn decode_reply(b: &[u8]) -> Result<Self, AbiError> {
        Self::decode_any(b)
    }

    fn decode_any(b: &[u8]) -> Result<Self, AbiError> {
        let mut r = Reader::new(b, Self::SIZE)?;
        let hdr = r.header(Self::SIZE)?;
        let count = r.u32()?;
        r.zero32()?;
        let generation = r.u64()?;
        if count as usize > MAX_CRITICAL_ENTRIES {
            return Err(AbiError::TooMany);
        }
        let mut entries = [CriticalEntry::default(); MAX_CRITICAL_ENTRIES];
        for (i, e) in entries.iter_mut().enumerate() {
            *e = CriticalEntry::read(&mut r)?;
            if i < count as usize {
                e.validate()?;
            } else if *e != CriticalEntry::default() {
                return Err(AbiError::Reserved);
            }
        }
        let used = entries.get(..count as usize).ok_or(AbiError::TooMany)?;
        for (i, e) in used.iter().enumerate() {
            if used.iter().take(i).any(|x| x.tid == e.tid) {
                return Err(AbiError::BadTid);
            }
        }
        Ok(Self {
            hdr,
            count,
            reserved: 0,
            generation,
            entries,
        })
    }
}

/// The argument of [`ADD_CRITICAL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct CriticalOne {
    /// Header.
    pub hdr: Header,
    /// The thread to add.
    pub entry: CriticalEntry,
}

impl CriticalOne {
    /// A request to add `tid` with `role`.
    pub const fn new(tid: Tid, role: Role) -> Self {
        Self {
            hdr: Header::for_size(Self::SIZE),
            entry: CriticalEntry::new(tid, role),
        }
    }
}

impl Message for CriticalOne {
    const SIZE: usize = 16;
    fn encode(&self, out: &mut [u8]) -> Result<(), AbiError> {
        let mut w = Writer::new(out, Self::SIZE)?;
        w.header(Self::SIZE);
        w.i32(self.entry.tid);
        w.u32(self.entry.role);
        Ok(())
    }
    fn decode(b: &[u8]) -> Result<Self, AbiError> {
        let mut r = Reader::new(b, Self::SIZE)?;
        let hdr = r.header(Self::SIZE)?;
        let entry = CriticalEntry::read(&mut r)?;
        entry.validate()?;
        Ok(Self { hdr, entry })
    }
}

/// The argument of [`REMOVE_CRITICAL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct TidMsg {
    /// Header.
    pub hdr: Header,
    /// The thread, `> 0`.
    pub tid: i32,
    /// Must be zero.
    pub reserved: u32,
}

impl TidMsg {
    /// A message naming `tid`.
    pub const fn new(tid: Tid) -> Self {
        Self {
            hdr: Header::for_size(Self::SIZE),
            tid,
            reserved: 0,
        }
    }
}

impl Message for TidMsg {
    const SIZE: usize = 16;
    fn encode(&self, out: &mut [u8]) -> Result<(), AbiError> {
        let mut w = Writer::new(out, Self::SIZE)?;
        w.header(Self::SIZE);
        w.i32(self.tid);
        w.u32(self.reserved);
        Ok(())
    }
    fn decode(b: &[u8]) -> Result<Self, AbiError> {
        let mut r = Reader::new(b, Self::SIZE)?;
        let hdr = r.header(Self::SIZE)?;
        let tid = r.i32()?;
        r.zero32()?;
        if tid <= 0 {
            return Err(AbiError::BadTid);
        }
        Ok(Self {
            hdr,
            tid,
            reserved: 0,
        })
    }
}

/// The argument of [`SET_ENABLED`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Enable {
    /// Header.
    pub hdr: Header,
    /// 1 to enable, 0 to disable; anything else is invalid.
    pub enabled: u32,
    /// Must be zero.
    pub reserved: u32,
}

impl Enable {
    /// A request to enable (`true`) or disable.
    pub const fn new(on: bool) -> Self {
        Self {
            hdr: Header::for_size(Self::SIZE),
            enabled: on as u32,
            reserved: 0,
        }
    }
}

impl Message for Enable {
    const SIZE: usize = 16;
    fn encode(&self, out: &mut [u8]) -> Result<(), AbiError> {
        let mut w = Writer::new(out, Self::SIZE)?;
        w.header(Self::SIZE);
        w.u32(self.enabled);
        w.u32(self.reserved);
        Ok(())
    }
    fn decode(b: &[u8]) -> Result<Self, AbiError> {
        let mut r = Reader::new(b, Self::SIZE)?;
        let hdr = r.header(Self::SIZE)?;
        let enabled = r.u32()?;
        r.zero32()?;
        if enabled > 1 {
            return Err(AbiError::BadValue);
        }
        Ok(Self {
            hdr,
            enabled,
            reserved: 0,
        })
    }
}

/// The argument of [`SET_TUNABLES`] and the reply to [`GET_TUNABLES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct TunablesMsg {
    /// Header.
    pub hdr: Header,
    /// Must be [`NUM_TUNABLES`].
    pub count: u32,
    /// Must be zero.
    pub reserved: u32,
    /// Values in `tunables::TUNABLES` order; slots past `count` must be zero.
    pub values: [u64; TUNABLE_SLOTS],
}

impl TunablesMsg {
    /// A message carrying `t`.
    pub fn new(t: &Tunables) -> Self {
        let mut values = [0u64; TUNABLE_SLOTS];
        values[..NUM_TUNABLES].copy_from_slice(&t.to_array());
        Self {
            hdr: Header::for_size(Self::SIZE),
            count: NUM_TUNABLES as u32,
            reserved: 0,
            values,
        }
    }

    /// The validated tunables.
    pub fn tunables(&self) -> Result<Tunables, AbiError> {
        let mut v = [0u64; NUM_TUNABLES];
        v.copy_from_slice(&self.values[..NUM_TUNABLES]);
        Tunables::from_array(&v)
    }
}

impl Message for TunablesMsg {
    const SIZE: usize = 16 + 8 * TUNABLE_SLOTS;
    fn encode(&self, out: &mut [u8]) -> Result<(), AbiError> {
        let mut w = Writer::new(out, Self::SIZE)?;
        w.header(Self::SIZE);
        w.u32(self.count);
        w.u32(self.reserved);
        for v in self.values {
            w.u64(v);
        }
        Ok(())
    }
    fn decode(b: &[u8]) -> Result<Self, AbiError> {
        let mut r = Reader::new(b, Self::SIZE)?;
        let hdr = r.header(Self::SIZE)?;
        let count = r.u32()?;
        r.zero32()?;
        if count as usize > TUNABLE_SLOTS {
            return Err(AbiError::TooMany);
        }
        if count as usize != NUM_TUNABLES {
            return Err(AbiError::BadValue);
        }
        let mut values = [0u64; TUNABLE_SLOTS];
        for (i, v) in values.iter_mut().enumerate() {
            *v = r.u64()?;
            if i >= NUM_TUNABLES && *v != 0 {
                return Err(AbiError::Reserved);
            }
        }
        let m = Self {
            hdr,
            count,
            reserved: 0,
            values,
        };
        m.tunables()?;
        Ok(m)
    }
}

/// The reply to [`GET_STATS`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct StatsMsg {
    /// Header.
    pub hdr: Header,
    /// 1 if the fast track is enabled.
    pub enabled: u32,
    /// Registered critical threads.
    pub ncritical: u32,
    /// Attached hooks/mechanisms ([`mech`] bits).
    pub active_mask: u64,
    /// The critical set's generation.
    pub generation: u64,
    /// Tasks boosted right now.
    pub boosted: u64,
    /// The smallest recorded blocking duration (ns).
    pub hist_min: u64,
    /// The largest recorded blocking duration (ns).
    pub hist_max: u64,
    /// Counters, named by `stats::COUNTER_NAMES`.
    pub counters: [u64; NUM_COUNTERS],
    /// Blocking-duration histogram buckets (see `stats::Histogram`).
    pub hist: [u64; HIST_BUCKETS],
}

/// The scalar fields of a [`StatsMsg`], for [`StatsMsg::encode_parts`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatsHead {
    /// See [`StatsMsg::enabled`].
    pub enabled: u32,
    /// See [`StatsMsg::ncritical`].
    pub ncritical: u32,
    /// See [`StatsMsg::active_mask`].
    pub active_mask: u64,
    /// See [`StatsMsg::generation`].
    pub generation: u64,
    /// See [`StatsMsg::boosted`].
    pub boosted: u64,
    /// See [`StatsMsg::hist_min`].
    pub hist_min: u64,
    /// See [`StatsMsg::hist_max`].
    pub hist_max: u64,
}

impl StatsMsg {
    /// Encodes a stats message from borrowed parts, without building a `StatsMsg` (~13 KiB,
    /// too big for a kernel stack); [`Message::encode`] goes through here too.
    pub fn encode_parts(
        out: &mut [u8],
        head: &StatsHead,
        counters: &[u64; NUM_COUNTERS],
        hist: &[u64; HIST_BUCKETS],
    ) -> Result<(), AbiError> {
        let mut w = Writer::new(out, Self::SIZE)?;
        w.header(Self::SIZE);
        w.u32(head.enabled);
        w.u32(head.ncritical);
        w.u64(head.active_mask);
        w.u64(head.generation);
        w.u64(head.boosted);
        w.u64(head.hist_min);
        w.u64(head.hist_max);
        for &c in counters.iter() {
            w.u64(c);
        }
        for &h in hist.iter() {
            w.u64(h);
        }
        Ok(())
    }

    /// The blocking histogram this message carries.
    pub fn histogram(&self) -> Histogram {
        Histogram::from_parts(&self.hist, self.hist_min, self.hist_max)
    }
}

impl Message for StatsMsg {
    const SIZE: usize = 56 + 8 * NUM_COUNTERS + 8 * HIST_BUCKETS;
    fn encode(&self, out: &mut [u8]) -> Result<(), AbiError> {
        let head = StatsHead {
            enabled: self.enabled,
            ncritical: self.ncritical,
            active_mask: self.active_mask,
            generation: self.generation,
            boosted: self.boosted,
            hist_min: self.hist_min,
            hist_max: self.hist_max,
        };
        Self::encode_parts(out, &head, &self.counters, &self.hist)
    }
    fn decode(b: &[u8]) -> Result<Self, AbiError> {
        let mut r = Reader::new(b, Self::SIZE)?;
        let hdr = r.header(Self::SIZE)?;
        let enabled = r.u32()?;
        let ncritical = r.u32()?;
        let active_mask = r.u64()?;
        let generation = r.u64()?;
        let boosted = r.u64()?;
        let hist_min = r.u64()?;
        let hist_max = r.u64()?;
        let mut counters = [0u64; NUM_COUNTERS];
        for c in counters.iter_mut() {
            *c = r.u64()?;
        }
        let mut hist = [0u64; HIST_BUCKETS];
        for h in hist.iter_mut() {
            *h = r.u64()?;
        }
        Ok(Self {
            hdr,
            enabled,
            ncritical,
            active_mask,
            generation,
            boosted,
            hist_min,
            hist_max,
            counters,
            hist,
        })
    }
}

// The wire layout is the #[repr(C)] layout, with no padding: both sides may also cast.
const _: () = assert!(core::mem::size_of::<Header>() == Header::SIZE);
const _: () = assert!(core::mem::size_of::<VersionInfo>() == VersionInfo::SIZE);
const _: () = assert!(core::mem::size_of::<CriticalEntry>() == 8);
const _: () = assert!(core::mem::size_of::<CriticalList>() == CriticalList::SIZE);
const _: () = assert!(core::mem::size_of::<CriticalOne>() == CriticalOne::SIZE);
const _: () = assert!(core::mem::size_of::<TidMsg>() == TidMsg::SIZE);
const _: () = assert!(core::mem::size_of::<Enable>() == Enable::SIZE);
const _: () = assert!(core::mem::size_of::<TunablesMsg>() == TunablesMsg::SIZE);
const _: () = assert!(core::mem::size_of::<StatsMsg>() == StatsMsg::SIZE);
// `_IOC_SIZE` has 14 bits.
const _: () = assert!(StatsMsg::SIZE < (1 << IOC_SIZEBITS));
const _: () = assert!(NUM_TUNABLES <= TUNABLE_SLOTS);

/// A decoded, validated request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// [`GET_VERSION`].
    GetVersion,
    /// [`SET_CRITICAL`].
    SetCritical(CriticalList),
    /// [`ADD_CRITICAL`].
    AddCritical(CriticalEntry),
    /// [`REMOVE_CRITICAL`].
    RemoveCritical(Tid),
    /// [`SET_ENABLED`].
    SetEnabled(bool),
    /// [`GET_TUNABLES`].
    GetTunables,
    /// [`SET_TUNABLES`].
    SetTunables(Tunables),
    /// [`GET_STATS`].
    GetStats,
    /// [`RESET_STATS`].
    ResetStats,
    /// [`GET_CRITICAL`].
    GetCritical,
}

impl Request {
    /// Whether applying it can change which probe groups the engine wants: the platform then
    /// attaches them before the request returns (a registered thread's readers are recorded
    /// from then on), where other changes reach the probes some time later.
    pub fn changes_probes(&self) -> bool {
        matches!(
            self,
            Self::SetCritical(_)
                | Self::AddCritical(_)
                | Self::SetEnabled(_)
                | Self::SetTunables(_)
        )
    }

    /// Decodes the argument of ioctl `cmd` from `buf`, which holds `ioc_size(cmd)` bytes
    /// (for commands that read input) and is otherwise ignored.
    pub fn decode(cmd: u32, buf: &[u8]) -> Result<Self, AbiError> {
        Ok(match cmd {
            GET_VERSION => Self::GetVersion,
            SET_CRITICAL => Self::SetCritical(CriticalList::decode(buf)?),
            ADD_CRITICAL => Self::AddCritical(CriticalOne::decode(buf)?.entry),
            REMOVE_CRITICAL => Self::RemoveCritical(TidMsg::decode(buf)?.tid),
            SET_ENABLED => Self::SetEnabled(Enable::decode(buf)?.enabled == 1),
            GET_TUNABLES => {
                Reader::new(buf, TunablesMsg::SIZE)?.header(TunablesMsg::SIZE)?;
                Self::GetTunables
            }
            SET_TUNABLES => Self::SetTunables(TunablesMsg::decode(buf)?.tunables()?),
            GET_STATS => {
                Reader::new(buf, StatsMsg::SIZE)?.header(StatsMsg::SIZE)?;
                Self::GetStats
            }
            RESET_STATS => {
                Header::decode(buf)?;
                Self::ResetStats
            }
            GET_CRITICAL => {
                Reader::new(buf, CriticalList::SIZE)?.header(CriticalList::SIZE)?;
                Self::GetCritical
            }
            _ => return Err(AbiError::UnknownCommand),
        })
    }

    /// The TIDs the request names, which the platform checks for existence.
    pub fn tids(&self) -> impl Iterator<Item = Tid> + '_ {
        let (list, one): (&[CriticalEntry], Option<Tid>) = match self {
            Self::SetCritical(l) => (l.entries(), None),
            Self::AddCritical(e) => (&[], Some(e.tid)),
            _ => (&[], None),
        };
        list.iter().map(|e| e.tid).chain(one)
    }
}

/// Writes the header a caller must put in the argument of a read-only command such as
/// [`GET_STATS`], so the kernel can check size and version before replying.
pub fn request_header(cmd: u32, buf: &mut [u8]) -> Result<(), AbiError> {
    let size = ioc_size(cmd);
    Writer::new(buf, size.max(Header::SIZE))?.header(size);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc<M: Message>(m: &M) -> [u8; 16384] {
        let mut b = [0u8; 16384];
        m.encode(&mut b).unwrap();
        b
    }

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

    #[test]
    fn critical_list_roundtrip_and_validation() {
        let l = CriticalList::new(&[(100, Role::Ui), (101, Role::Render)]).unwrap();
        let b = enc(&l);
        let d = CriticalList::decode(&b[..CriticalList::SIZE]).unwrap();
        assert_eq!(d.entries(), l.entries());

        assert_eq!(
            CriticalList::decode(&b[..CriticalList::SIZE - 1]),
            Err(AbiError::BadSize)
        );
        let mut bad = b;
        bad[4] = 2; // version
        assert_eq!(
            CriticalList::decode(&bad[..CriticalList::SIZE]),
            Err(AbiError::BadVersion)
        );
        let mut bad = b;
        bad[0] = 3; // size field
        assert_eq!(
            CriticalList::decode(&bad[..CriticalList::SIZE]),
            Err(AbiError::BadSize)
        );
        let mut bad = b;
        bad[8..12].copy_from_slice(&33u32.to_ne_bytes());
        assert_eq!(
            CriticalList::decode(&bad[..CriticalList::SIZE]),
            Err(AbiError::TooMany)
        );
        let mut bad = b;
        bad[12] = 1; // reserved
        assert_eq!(
            CriticalList::decode(&bad[..CriticalList::SIZE]),
            Err(AbiError::Reserved)
        );
        let mut bad = b;
        bad[24..28].copy_from_slice(&0i32.to_ne_bytes());
        assert_eq!(
            CriticalList::decode(&bad[..CriticalList::SIZE]),
            Err(AbiError::BadTid)
        );
        let mut bad = b;
        bad[28..32].copy_from_slice(&7u32.to_ne_bytes());
        assert_eq!(
            CriticalList::decode(&bad[..CriticalList::SIZE]),
            Err(AbiError::BadRole)
        );
        let mut bad = b;
        bad[40] = 9; // an unused entry
        assert_eq!(
            CriticalList::decode(&bad[..CriticalList::SIZE]),
            Err(AbiError::Reserved)
        );
        let dup = CriticalList::new(&[(5, Role::Ui), (5, Role::Render)]).unwrap();
        assert_eq!(
            CriticalList::decode(&enc(&dup)[..CriticalList::SIZE]),
            Err(AbiError::BadTid)
        );
        assert!(CriticalList::new(&[(1, Role::Ui); 33]).is_err());
    }

    #[test]
    fn small_messages_validate() {
        let b = enc(&TidMsg::new(-3));
        assert_eq!(TidMsg::decode(&b[..16]), Err(AbiError::BadTid));
        let mut b = enc(&Enable::new(true));
        assert_eq!(Enable::decode(&b[..16]).unwrap().enabled, 1);
        b[8] = 2;
        assert_eq!(Enable::decode(&b[..16]), Err(AbiError::BadValue));
        let b = enc(&CriticalOne::new(9, Role::Other));
        assert_eq!(CriticalOne::decode(&b[..16]).unwrap().entry.tid, 9);
    }

    #[test]
    fn tunables_roundtrip_and_ranges() {
        let t = Tunables::default();
        let b = enc(&TunablesMsg::new(&t));
        assert_eq!(
            TunablesMsg::decode(&b[..TunablesMsg::SIZE])
                .unwrap()
                .tunables(),
            Ok(t)
        );
        let mut bad = b;
        bad[16..24].copy_from_slice(&0u64.to_ne_bytes()); // max_critical = 0
        assert_eq!(
            TunablesMsg::decode(&bad[..TunablesMsg::SIZE]),
            Err(AbiError::BadValue)
        );
        let mut bad = b;
        bad[TunablesMsg::SIZE - 1] = 1;
        assert_eq!(
            TunablesMsg::decode(&bad[..TunablesMsg::SIZE]),
            Err(AbiError::Reserved)
        );
    }

    #[test]
    fn request_decode_checks_command_and_header() {
        let mut b = [0u8; 16384];
        assert_eq!(
            Request::decode(0x1234, &b[..8]),
            Err(AbiError::UnknownCommand)
        );
        assert_eq!(
            Request::decode(GET_STATS, &b[..StatsMsg::SIZE]),
            Err(AbiError::BadSize)
        );
        request_header(GET_STATS, &mut b).unwrap();
        assert_eq!(
            Request::decode(GET_STATS, &b[..StatsMsg::SIZE]),
            Ok(Request::GetStats)
        );
        assert_eq!(Request::decode(GET_VERSION, &[]), Ok(Request::GetVersion));
    }

    #[test]
    fn errno_values() {
        assert_eq!(AbiError::BadSize.errno(), 22);
        assert_eq!(AbiError::TooMany.errno(), 7);
        assert_eq!(AbiError::UnknownCommand.errno(), 25);
        assert_eq!(AbiError::NotPermitted.errno(), 1);
    }
}
