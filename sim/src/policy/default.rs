//! The stock kernel: no inheritance, no promotion, no fast track.

use super::Policy;

/// Stock scheduling.
#[derive(Clone, Copy, Debug, Default)]
pub struct Default;

impl Policy for Default {
    fn name(&self) -> &'static str {
        "default"
    }

    fn lock_hooks(&self) -> bool {
        false
    }
}
