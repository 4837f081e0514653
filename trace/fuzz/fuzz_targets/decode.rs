//! Fuzzes the Perfetto decoder: any bytes must decode or fail, never panic.
//!
//! Run: `cd trace/fuzz && cargo +nightly fuzz run decode`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use superpass_trace::{events::Events, perfetto};

fuzz_target!(|data: &[u8]| {
    let mut ev = Events::default();
    let _ = perfetto::decode(data, &mut ev);
});
