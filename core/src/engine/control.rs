//! The control plane: enabling, the critical set, tunables and the ioctl requests.

use super::*;

impl<O: Observer> Engine<O> {
    /// Records which hooks/mechanisms the platform attached (`abi::mech` bits).
    pub(crate) fn set_active(&mut self, mask: u64) {
        self.active_mask = mask;
    }

    /// Turns the fast track on or off; off revokes every grant and forgets every wait.
    pub fn set_enabled(&mut self, now: Nanos, on: bool) {
        if self.enabled && !on {
            self.ft
                .revoke(now, RevokeReason::Disabled, |_| true, cx!(self));
            self.ft.clear_cooling();
            self.detector.reset(&self.tun);
            self.probes.clear();
            self.wakes.clear();
            self.pushes.clear();
        }
        self.enabled = on;
    }

    /// The groups of per-lock-operation probes ([`probes`] bits) the platform should keep
    /// attached at `now`: those a tracked wait or a boost needs now, and those needed within
    /// the last `probe_linger_ns`. A platform asks after each call it makes (the answer rises
    /// only then) and again at least every `probe_linger_ns / 2` while any group is attached
    /// (it falls with time alone). O(live waits).
    pub fn probes_wanted(&mut self, now: Nanos) -> u32 {
        if !self.enabled {
            return 0;
        }
        let wait_probes = self
            .detector
            .waits()
            .fold(0, |m, w| m | probes_for_wait(w.kind));
        self.probes_given(now, wait_probes)
    }

    /// [`Engine::probes_wanted`] once the live waits are known to need `wait_probes` (the
    /// union of [`probes_for_wait`]), for a caller that passes over the waits anyway.
    pub(super) fn probes_given(&mut self, now: Nanos, wait_probes: u32) -> u32 {
        if !self.enabled {
            return 0;
        }
        // A boost alone needs no owner probe: they report only locks that tracked waits are
        // on (the lock lanes), and a grant for a kernel lock lasts no longer than its wait.
        let mut needed = wait_probes;
        if self.tun.readers_while_critical != 0 && !self.critical.is_empty() {
            needed |= probes::READERS;
        }
        self.probes.update(now, needed, &self.tun)
    }

    /// Replaces the tunables; the lock table, grants and probe lingers start afresh under the
    /// new bounds.
    pub fn set_tunables(&mut self, now: Nanos, t: Tunables) -> Result<(), AbiError> {
        t.validate()?;
        self.ft
            .revoke(now, RevokeReason::Reconfigured, |_| true, cx!(self));
        self.tun = t;
        self.ft.configure(&self.tun);
        self.ft.clear_cooling();
        self.detector.reset(&self.tun);
        // Lingers restart under the new probe_linger_ns.
        self.probes.clear();
        // A smaller critical capacity drops the newest registrations.
        while self.critical.len() > t.max_critical as usize {
            let Some((tid, _)) = self.critical.iter().last() else {
                break;
            };
            self.remove_critical(now, tid)?;
        }
        Ok(())
    }

    /// Replaces the critical set with `entries` (all or nothing).
    pub fn set_critical(&mut self, now: Nanos, entries: &[(Tid, Role)]) -> Result<(), AbiError> {
        if entries.len() > self.tun.max_critical as usize {
            return Err(if entries.len() > MAX_CRITICAL {
                AbiError::TooMany
            } else {
                AbiError::NoSpace
            });
        }
        for (i, &(tid, _)) in entries.iter().enumerate() {
            if tid <= 0 || entries.iter().take(i).any(|&(t, _)| t == tid) {
                return Err(AbiError::BadTid);
            }
        }
        let mut old = [0 as Tid; MAX_CRITICAL];
        let mut n = 0;
        for (slot, (tid, _)) in old.iter_mut().zip(self.critical.iter()) {
            *slot = tid;
            n += 1;
        }
        for &tid in old.iter().take(n) {
            if !entries.iter().any(|&(t, _)| t == tid) {
                self.remove_critical(now, tid)?;
            }
        }
        for &(tid, role) in entries {
            self.add_critical(now, tid, role)?;
        }
        Ok(())
    }

    /// Registers `tid` as critical with `role` (or changes its role).
    pub fn add_critical(&mut self, _now: Nanos, tid: Tid, role: Role) -> Result<(), AbiError> {
        let new = !self.critical.contains(tid);
        self.critical
            .add(tid, role, self.tun.max_critical as usize)?;
        if new {
            self.critical_filter.insert(tid);
        }
        Ok(())
    }

    /// Unregisters `tid`, ending every grant made on its behalf.
    pub fn remove_critical(&mut self, now: Nanos, tid: Tid) -> Result<(), AbiError> {
        self.critical.remove(tid)?;
        self.critical_filter.remove(tid);
        if let Some(w) = self.detector.wait_of(tid) {
            if w.depth == 0 {
                self.detector.wait_finish(tid);
            }
        }
        self.ft.revoke(
            now,
            RevokeReason::Unregistered,
            |g| g.root == tid,
            cx!(self),
        );
        Ok(())
    }

    /// Takes each CPU's capacity (`capacity[cpu]`; the platform's `arch_scale_cpu_capacity`):
    /// waking blockers go to idle CPUs of the highest capacity, and those are the fast CPUs
    /// ([`Engine::set_fast_cpus`]).
    pub fn set_cpu_capacities(&mut self, capacity: &[u32]) {
        self.ft.set_capacities(capacity);
    }

    /// Names the platform's fast CPUs (its biggest cores): waking blockers go to an idle one
    /// first. An empty mask, the default, treats every CPU as fast.
    pub fn set_fast_cpus(&mut self, mask: u64) {
        self.ft.set_fast_cpus(mask);
    }

    /// Zeroes counters and the histogram.
    pub fn reset_stats(&mut self) {
        // In place: a `Stats` temporary would take ~13 KiB of (kernel) stack.
        self.stats.counters = [0; NUM_COUNTERS];
        self.stats.blocking.clear();
    }

    /// Applies a decoded request and encodes the reply into `out`, returning its length.
    ///
    /// The platform decides what only it can (privilege, which threads the caller sees) before
    /// calling: `req` names threads as the engine does ([`Request::to_engine`]), and the reply
    /// names them as the caller does, through `space`; a registered thread the caller cannot see
    /// is left out of it.
    pub fn apply(
        &mut self,
        now: Nanos,
        req: &Request,
        out: &mut [u8],
        space: &impl TidSpace,
    ) -> Result<usize, AbiError> {
        match req {
            Request::GetVersion => {
                let v = abi::VersionInfo {
                    hdr: abi::Header::for_size(abi::VersionInfo::SIZE),
                    max_critical: MAX_CRITICAL as u32,
                    num_tunables: NUM_TUNABLES as u32,
                    num_counters: NUM_COUNTERS as u32,
                    hist_buckets: HIST_BUCKETS as u32,
                    active_mask: self.active_mask,
                };
                v.encode(out)?;
                Ok(abi::VersionInfo::SIZE)
            }
            Request::SetCritical(l) => {
                let mut e = [(0 as Tid, Role::Other); MAX_CRITICAL];
                let n = l.entries().len();
                for (slot, x) in e.iter_mut().zip(l.entries()) {
                    *slot = (x.tid, x.role()?);
                }
                self.set_critical(now, e.get(..n).ok_or(AbiError::TooMany)?)?;
                Ok(0)
            }
            Request::AddCritical(x) => {
                self.add_critical(now, x.tid, x.role()?)?;
                Ok(0)
            }
            Request::RemoveCritical(tid) => {
                self.remove_critical(now, *tid)?;
                Ok(0)
            }
            Request::SetEnabled(on) => {
                self.set_enabled(now, *on);
                Ok(0)
            }
            Request::GetTunables => {
                abi::TunablesMsg::new(&self.tun).encode(out)?;
                Ok(abi::TunablesMsg::SIZE)
            }
            Request::SetTunables(t) => {
                self.set_tunables(now, *t)?;
                Ok(0)
            }
            Request::GetStats => {
                // Encoded from the engine's own arrays: a `StatsMsg` is ~13 KiB, too big for a
                // kernel stack.
                let h = &self.stats.blocking;
                abi::StatsMsg::encode_parts(
                    out,
                    &abi::StatsHead {
                        enabled: self.enabled as u32,
                        ncritical: self.critical.len() as u32,
                        active_mask: self.active_mask,
                        generation: self.critical.generation(),
                        boosted: self.ft.boosted_count() as u64,
                        hist_min: h.min(),
                        hist_max: h.max(),
                    },
                    &self.stats.counters,
                    h.buckets(),
                )?;
                Ok(abi::StatsMsg::SIZE)
            }
            Request::ResetStats => {
                self.reset_stats();
                Ok(0)
            }
            Request::GetCritical => {
                let mut e = [(0 as Tid, Role::Other); MAX_CRITICAL];
                let mut n = 0;
                let seen = self
                    .critical
                    .iter()
                    .filter_map(|(tid, role)| Some((space.to_caller(tid)?, role)));
                for (slot, x) in e.iter_mut().zip(seen) {
                    *slot = x;
                    n += 1;
                }
                let mut l = abi::CriticalList::new(e.get(..n).ok_or(AbiError::TooMany)?)?;
                l.generation = self.critical.generation();
                l.encode(out)?;
                Ok(abi::CriticalList::SIZE)
            }
        }
    }

    /// Decodes ioctl `cmd`'s argument from `buf`, applies it, and writes the reply into `buf`.
    ///
    /// This is the kernel module's ioctl path minus what only the platform knows (privilege,
    /// which threads the caller sees: here all of them, by the engine's TIDs), shared with the
    /// service's in-memory device.
    pub fn ioctl(&mut self, now: Nanos, cmd: u32, buf: &mut [u8]) -> Result<usize, AbiError> {
        let req = Request::decode(cmd, buf)?;
        self.apply(now, &req, buf, &SameSpace)
    }
}

/// The probe groups a tracked wait of `kind` needs: a kernel lock's owner changes must be seen
/// while a wait is on it, and an rwsem's readers as well; a futex names its owner itself.
pub(super) fn probes_for_wait(kind: LockKind) -> u32 {
    match kind {
        LockKind::Mutex => probes::OWNERS,
        LockKind::RwsemRead | LockKind::RwsemWrite => probes::ALL,
        // A futex names its owner itself; a binder call's server thread and pool come from
        // the binder hooks, which are always attached.
        LockKind::Futex | LockKind::PiFutex | LockKind::Binder => 0,
    }
}
