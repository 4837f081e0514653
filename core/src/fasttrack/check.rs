//! The fast track's structural invariants, checked by tests after every step.

use super::super::tunables::{Tunables, MAX_GRANTS};
use super::FastTrack;

impl FastTrack {
    /// Checks the structural invariants and bounds; used by tests.
    pub fn check(&self, t: &Tunables) -> Result<(), &'static str> {
        let soonest = self.cooling.iter().flatten().map(|c| c.until).min();
        if soonest.unwrap_or(super::super::Nanos::MAX) != self.next_regrant {
            return Err("next_regrant out of sync");
        }
        if self.direct_room != super::direct_room(t) {
            return Err("direct_room out of sync with the tunables");
        }
        let grants = self.grants.iter().flatten().count();
        if grants > t.max_grants as usize {
            return Err("more grants than max_grants");
        }
        let mask = |live: &dyn Fn(usize) -> bool| {
            (0..MAX_GRANTS)
                .filter(|&i| live(i))
                .fold(0u64, |m, i| m | 1 << i)
        };
        if self.live_grants != mask(&|i| self.grant_at(i).is_some()) {
            return Err("live_grants out of sync");
        }
        if self.live_boosts != mask(&|i| self.boost_at(i).is_some()) {
            return Err("live_boosts out of sync");
        }
        if self.chain_grants != mask(&|i| self.grant_at(i).is_some_and(|g| g.depth > 1)) {
            return Err("chain_grants out of sync");
        }
        for (bi, b) in self.boosts.iter().enumerate() {
            let Some(b) = b else { continue };
            let mine = mask(&|i| self.grant_at(i).is_some_and(|g| g.boost as usize == bi));
            if b.grants != mine || mine == 0 {
                return Err("boost's grant index out of sync");
            }
            if self
                .grants
                .iter()
                .flatten()
                .any(|g| g.boost as usize == bi && g.blocker != b.tid)
            {
                return Err("grant names another task than its boost");
            }
            if b.used >= t.budget_ns {
                return Err("boost over budget");
            }
            if !self.filter.may_contain(b.tid) {
                return Err("boost missing from filter");
            }
            let queued: usize = self
                .cpus
                .iter()
                .take(self.nr_cpus)
                .map(|pc| queue_of(pc).filter(|&x| x as usize == bi).count())
                .sum();
            match b.cpu {
                Some(c)
                    if queued == 1
                        && self
                            .cpus
                            .get(c as usize)
                            .is_some_and(|pc| queue_of(pc).any(|x| x as usize == bi)) => {}
                None if queued == 0 => {}
                _ => return Err("queue membership out of sync"),
            }
        }
        for (c, pc) in self.cpus.iter().enumerate().take(self.nr_cpus) {
            if pc.len as u32 > t.queue_cap || pc.len as usize > pc.queue.len() {
                return Err("queue over queue_cap");
            }
            if queue_of(pc).any(|bi| self.boost_at(bi as usize).is_none()) {
                return Err("queue holds a dead boost");
            }
            if let Some(bi) = pc.running {
                match self.boost_at(bi as usize) {
                    None => return Err("running a dead boost"),
                    Some(b) if b.cpu != Some(c as u16) => {
                        return Err("running a boost queued elsewhere")
                    }
                    Some(_) => {}
                }
            }
        }
        if self
            .cpus
            .iter()
            .skip(self.nr_cpus)
            .any(|pc| pc.len != 0 || pc.running.is_some())
        {
            return Err("fast-track work beyond nr_cpus");
        }
        Ok(())
    }
}

/// The boosts CPU state `pc` queues, head first.
fn queue_of(pc: &super::PerCpu) -> impl Iterator<Item = u8> + '_ {
    pc.queue.iter().copied().take(pc.len as usize)
}
