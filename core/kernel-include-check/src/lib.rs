//! A `#![no_std]` crate that includes superpass-core by path, the way `superpass.ko` does.
//!
//! The kernel build has no Cargo: `module/superpass_main.rs` pulls the policy in with the
//! `#[path]` line below. If superpass-core ever grows a dependency, a proc macro, a `crate::`
//! path or a module file that doesn't resolve under `#[path]`, this crate stops compiling.

#![no_std]
#![forbid(unsafe_code)]

// `#![no_std]` inside the included root only matters to its own crate build; here it is inert.
#[expect(unused_attributes)]
#[path = "../../src/lib.rs"]
pub mod superpass_core;

use superpass_core::abi::{self, Message};
use superpass_core::{Engine, LockKind, NoObserver, Role};

/// Drives one inversion through the included engine, as a hook sequence would.
pub fn smoke() -> Option<i32> {
    let mut e = Engine::new(2, NoObserver);
    e.set_enabled(0, true);
    e.add_critical(0, 100, Role::Ui).ok()?;
    let boosted = e.wait_start(10, 100, 0xdead_0000, LockKind::Mutex, Some(200));
    e.enqueue(11, 1, *boosted.as_slice().first()?);
    let picked = e.pick(12, 1, 300);
    let mut buf = [0u8; abi::StatsMsg::SIZE];
    abi::request_header(abi::GET_STATS, &mut buf).ok()?;
    e.ioctl(13, abi::GET_STATS, &mut buf).ok()?;
    let stats = abi::StatsMsg::decode(&buf).ok()?;
    (stats.counters[superpass_core::stats::Counter::Grants as usize] == 1).then_some(picked?)
}

#[cfg(test)]
mod tests {
    #[test]
    fn included_engine_works() {
        assert_eq!(super::smoke(), Some(200));
    }
}
