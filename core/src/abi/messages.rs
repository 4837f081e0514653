//! The messages: each is declared once, and validated once, as it is decoded.

use super::super::stats::{Histogram, HIST_BUCKETS, NUM_COUNTERS};
use super::super::tunables::{Tunables, MAX_CRITICAL, NUM_TUNABLES};
use super::super::{Role, Tid};
use super::codec::{Wire, Writer, ABI_VERSION};
use super::declare::{messages, read, Message};
use super::errors::AbiError;
#[cfg(doc)]
use super::{
    mech, ADD_CRITICAL, GET_CRITICAL, GET_STATS, GET_TUNABLES, GET_VERSION, REMOVE_CRITICAL,
    SET_CRITICAL, SET_ENABLED, SET_TUNABLES,
};

/// The most entries a [`CriticalList`] carries.
pub const MAX_CRITICAL_ENTRIES: usize = MAX_CRITICAL;
/// The tunable slots a [`TunablesMsg`] carries (room to grow past [`NUM_TUNABLES`]).
pub const TUNABLE_SLOTS: usize = 32;

const _: () = assert!(NUM_TUNABLES <= TUNABLE_SLOTS);

messages! {
    /// The first field of every message.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    message Header as sp_hdr for [RESET_STATS] {
        /// The size of the whole message in bytes.
        size: u32,
        /// [`ABI_VERSION`].
        version: u32,
    }

    /// The reply to [`GET_VERSION`].
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    message VersionInfo as sp_version for [GET_VERSION] {
        /// Header (size and [`ABI_VERSION`]).
        hdr: Header,
        /// [`MAX_CRITICAL_ENTRIES`].
        max_critical: u32,
        /// [`NUM_TUNABLES`].
        num_tunables: u32,
        /// [`NUM_COUNTERS`].
        num_counters: u32,
        /// [`HIST_BUCKETS`].
        hist_buckets: u32,
        /// Mechanisms the platform could attach ([`mech`] bits).
        active_mask: u64,
    }

    /// One critical thread and its role.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    part CriticalEntry as sp_entry {
        /// The thread id, `> 0`.
        tid: i32,
        /// A [`Role`] as `u32`.
        role: u32,
    }

    /// The argument of [`SET_CRITICAL`] and the reply to [`GET_CRITICAL`].
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    message CriticalList as sp_critical_list for [SET_CRITICAL, GET_CRITICAL], checked by check {
        /// Header.
        hdr: Header,
        /// Entries in use, at most [`MAX_CRITICAL_ENTRIES`].
        count: u32,
        /// Must be zero.
        reserved: u32,
        /// The set's generation (output only; zero on input).
        generation: u64,
        /// `entries[..count]` are the threads; the rest must be zero.
        entries: [CriticalEntry; MAX_CRITICAL_ENTRIES],
    }

    /// The argument of [`ADD_CRITICAL`].
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    message CriticalOne as sp_critical_one for [ADD_CRITICAL], checked by check {
        /// Header.
        hdr: Header,
        /// The thread to add.
        entry: CriticalEntry,
    }

    /// The argument of [`REMOVE_CRITICAL`].
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    message TidMsg as sp_tid for [REMOVE_CRITICAL], checked by check {
        /// Header.
        hdr: Header,
        /// The thread, `> 0`.
        tid: i32,
        /// Must be zero.
        reserved: u32,
    }

    /// The argument of [`SET_ENABLED`].
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    message Enable as sp_enable for [SET_ENABLED], checked by check {
        /// Header.
        hdr: Header,
        /// 1 to enable, 0 to disable; anything else is invalid.
        enabled: u32,
        /// Must be zero.
        reserved: u32,
    }

    /// The argument of [`SET_TUNABLES`] and the reply to [`GET_TUNABLES`].
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    message TunablesMsg as sp_tunables for [GET_TUNABLES, SET_TUNABLES], checked by check {
        /// Header.
        hdr: Header,
        /// Must be [`NUM_TUNABLES`].
        count: u32,
        /// Must be zero.
        reserved: u32,
        /// Values in `tunables::TUNABLES` order; slots past `count` must be zero.
        values: [u64; TUNABLE_SLOTS],
    }

    /// The reply to [`GET_STATS`].
    #[derive(Clone, Debug, PartialEq, Eq)]
    message StatsMsg as sp_stats for [GET_STATS] {
        /// Header.
        hdr: Header,
        /// 1 if the fast track is enabled.
        enabled: u32,
        /// Registered critical threads.
        ncritical: u32,
        /// Attached hooks/mechanisms ([`mech`] bits).
        active_mask: u64,
        /// The critical set's generation.
        generation: u64,
        /// Tasks boosted right now.
        boosted: u64,
        /// The smallest recorded blocking duration (ns).
        hist_min: u64,
        /// The largest recorded blocking duration (ns).
        hist_max: u64,
        /// Counters, named by `stats::COUNTER_NAMES`.
        counters: [u64; NUM_COUNTERS],
        /// Blocking-duration histogram buckets (see `stats::Histogram`).
        hist: [u64; HIST_BUCKETS],
    }
}

/// Checks a reserved field, which must be zero.
fn zero(reserved: u32) -> Result<(), AbiError> {
    if reserved != 0 {
        return Err(AbiError::Reserved);
    }
    Ok(())
}

impl Header {
    /// The header a message of `size` bytes carries.
    pub const fn for_size(size: usize) -> Self {
        Self {
            size: size as u32,
            version: ABI_VERSION,
        }
    }
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

    /// Checks an entry in use: a real TID and a known role.
    fn check(&self) -> Result<(), AbiError> {
        if self.tid <= 0 {
            return Err(AbiError::BadTid);
        }
        self.role().map(|_| ())
    }
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

    /// The entries in use, to rewrite in place (their TIDs, into another namespace).
    pub(crate) fn entries_mut(&mut self) -> &mut [CriticalEntry] {
        let n = (self.count as usize).min(MAX_CRITICAL_ENTRIES);
        self.entries.get_mut(..n).unwrap_or(&mut [])
    }

    /// Decodes a [`GET_CRITICAL`] reply, which carries the set's generation.
    pub fn decode_reply(b: &[u8]) -> Result<Self, AbiError> {
        let l: Self = read(b)?;
        l.check_reply()?;
        Ok(l)
    }

    /// Checks a request: a reply's checks, and no generation.
    fn check(&self) -> Result<(), AbiError> {
        self.check_reply()?;
        if self.generation != 0 {
            return Err(AbiError::Reserved);
        }
        Ok(())
    }

    /// Checks the count, the entries in use, that they name distinct threads, and that the
    /// rest is zero.
    fn check_reply(&self) -> Result<(), AbiError> {
        zero(self.reserved)?;
        let count = self.count as usize;
        if count > MAX_CRITICAL_ENTRIES {
            return Err(AbiError::TooMany);
        }
        for (i, e) in self.entries.iter().enumerate() {
            if i < count {
                e.check()?;
            } else if *e != CriticalEntry::default() {
                return Err(AbiError::Reserved);
            }
        }
        let used = self.entries();
        for (i, e) in used.iter().enumerate() {
            if used.iter().take(i).any(|x| x.tid == e.tid) {
                return Err(AbiError::BadTid);
            }
        }
        Ok(())
    }
}

impl CriticalOne {
    /// A request to add `tid` with `role`.
    pub const fn new(tid: Tid, role: Role) -> Self {
        Self {
            hdr: Header::for_size(Self::SIZE),
            entry: CriticalEntry::new(tid, role),
        }
    }

    /// The valid entry to add.
    pub(super) fn check(&self) -> Result<CriticalEntry, AbiError> {
        self.entry.check()?;
        Ok(self.entry)
    }
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

    /// The valid TID it names.
    pub(super) fn check(&self) -> Result<Tid, AbiError> {
        zero(self.reserved)?;
        if self.tid <= 0 {
            return Err(AbiError::BadTid);
        }
        Ok(self.tid)
    }
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

    /// Whether it enables.
    pub(super) fn check(&self) -> Result<bool, AbiError> {
        zero(self.reserved)?;
        if self.enabled > 1 {
            return Err(AbiError::BadValue);
        }
        Ok(self.enabled == 1)
    }
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

    /// The valid tunables it carries.
    pub(super) fn check(&self) -> Result<Tunables, AbiError> {
        zero(self.reserved)?;
        if self.count as usize > TUNABLE_SLOTS {
            return Err(AbiError::TooMany);
        }
        if self.count as usize != NUM_TUNABLES {
            return Err(AbiError::BadValue);
        }
        if self.values.iter().skip(NUM_TUNABLES).any(|&v| v != 0) {
            return Err(AbiError::Reserved);
        }
        self.tunables()
    }
}

messages!(@struct
    /// The scalar fields of a [`StatsMsg`], for [`StatsMsg::encode_parts`].
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    StatsHead {
        /// See [`StatsMsg::enabled`].
        enabled: u32,
        /// See [`StatsMsg::ncritical`].
        ncritical: u32,
        /// See [`StatsMsg::active_mask`].
        active_mask: u64,
        /// See [`StatsMsg::generation`].
        generation: u64,
        /// See [`StatsMsg::boosted`].
        boosted: u64,
        /// See [`StatsMsg::hist_min`].
        hist_min: u64,
        /// See [`StatsMsg::hist_max`].
        hist_max: u64,
    }
);

impl StatsMsg {
    /// Encodes a stats message from borrowed parts, without building a `StatsMsg` (~13 KiB,
    /// too big for a kernel stack).
    pub fn encode_parts(
        out: &mut [u8],
        head: &StatsHead,
        counters: &[u64; NUM_COUNTERS],
        hist: &[u64; HIST_BUCKETS],
    ) -> Result<(), AbiError> {
        let mut w = Writer::new(out, Self::SIZE)?;
        w.header(Self::SIZE);
        head.put(&mut w);
        counters.put(&mut w);
        hist.put(&mut w);
        Ok(())
    }

    /// The blocking histogram this message carries.
    pub fn histogram(&self) -> Histogram {
        Histogram::from_parts(&self.hist, self.hist_min, self.hist_max)
    }
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
    fn stats_parts_encode_as_the_message() {
        let mut s = StatsMsg {
            hdr: Header::default(),
            enabled: 1,
            ncritical: 2,
            active_mask: 3,
            generation: 4,
            boosted: 5,
            hist_min: 6,
            hist_max: 7,
            counters: [0; NUM_COUNTERS],
            hist: [0; HIST_BUCKETS],
        };
        for (i, c) in s.counters.iter_mut().enumerate() {
            *c = 100 + i as u64;
        }
        for (i, h) in s.hist.iter_mut().enumerate() {
            *h = 1000 + i as u64;
        }
        let head = StatsHead {
            enabled: 1,
            ncritical: 2,
            active_mask: 3,
            generation: 4,
            boosted: 5,
            hist_min: 6,
            hist_max: 7,
        };
        let mut parts = [0u8; StatsMsg::SIZE];
        StatsMsg::encode_parts(&mut parts, &head, &s.counters, &s.hist).unwrap();
        assert_eq!(enc(&s)[..StatsMsg::SIZE], parts[..]);
        s.hdr = Header::for_size(StatsMsg::SIZE);
        assert_eq!(StatsMsg::decode(&parts), Ok(s));
    }

    #[test]
    fn messages_are_listed_in_c_order() {
        let names: [&str; 9] = core::array::from_fn(|i| MESSAGES[i].name);
        assert_eq!(
            names,
            [
                "Header",
                "VersionInfo",
                "CriticalEntry",
                "CriticalList",
                "CriticalOne",
                "TidMsg",
                "Enable",
                "TunablesMsg",
                "StatsMsg"
            ]
        );
        let list = CriticalList::DESC;
        assert_eq!(list.size, 24 + 8 * MAX_CRITICAL_ENTRIES);
        assert_eq!(list.commands, ["SET_CRITICAL", "GET_CRITICAL"]);
        let entries = list.fields[4];
        assert_eq!(
            (entries.name, entries.ty, entries.offset),
            ("entries", "CriticalEntry", 24)
        );
        assert_eq!(
            entries.len,
            Some((MAX_CRITICAL_ENTRIES, "MAX_CRITICAL_ENTRIES"))
        );
    }
}
