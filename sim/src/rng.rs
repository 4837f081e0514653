//! Seeded random streams: one per workload thread, and one for scheduler tie-breaks.
//!
//! Keeping the streams apart means a policy that reorders events does not change the
//! work a thread draws: seed *s* gives every policy the same sequence of compute and
//! sleep lengths per thread (common random numbers, so paired comparisons are tight).

use crate::workload::Dist;
use rand_core::RngCore;
use rand_pcg::Pcg64;

/// A seeded random stream.
#[derive(Clone, Debug)]
pub struct Stream(Pcg64);

impl Stream {
    /// The stream `index` of seed `seed`.
    pub fn new(seed: u64, index: u64) -> Self {
        let state = (seed as u128) << 64 | 0x853c_49e6_748f_ea9b;
        Stream(Pcg64::new(state ^ 0xcafe_f00d_d15e_a5e5, index as u128))
    }

    /// A uniform float in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform integer in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.0.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// A sample of `d`, in nanoseconds.
    pub fn sample_ns(&mut self, d: &Dist) -> u64 {
        let us = match *d {
            Dist::Fixed(v) => v,
            Dist::Range([lo, hi]) => lo + (hi - lo) * self.unit(),
            Dist::Exp { exp } => (-(1.0 - self.unit()).ln() * exp).min(20.0 * exp),
        };
        (us.max(0.0) * 1000.0) as u64
    }
}
