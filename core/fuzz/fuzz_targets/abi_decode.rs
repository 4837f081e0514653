//! Fuzzes the ioctl decoder and the engine's ioctl path with arbitrary commands and bytes.
//!
//! Run with `cargo +nightly fuzz run abi_decode` from `core/` (needs cargo-fuzz and nightly).

#![no_main]

use libfuzzer_sys::fuzz_target;
use superpass_core::abi::{self, Request};
use superpass_core::{Engine, NoObserver};

fuzz_target!(|data: &[u8]| {
    if data.len() < 5 {
        return;
    }
    // The first byte picks a known command (or a raw one), the rest is the argument.
    let cmd = match data[0] as usize {
        i if i < abi::COMMANDS.len() * 16 => abi::COMMANDS[i % abi::COMMANDS.len()].1,
        _ => u32::from_ne_bytes([data[1], data[2], data[3], data[4]]),
    };
    let mut buf = data[1..].to_vec();
    let _ = Request::decode(cmd, &buf);
    let mut e = Engine::new(4, NoObserver);
    e.set_enabled(0, true);
    if let Ok(n) = e.ioctl(1, cmd, &mut buf) {
        assert!(n <= buf.len());
    }
    e.check_invariants().unwrap();
});
