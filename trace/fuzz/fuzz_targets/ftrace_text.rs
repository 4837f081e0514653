//! Fuzzes the text ftrace parser: any text must parse or be counted corrupt, never panic.
//!
//! Run: `cd trace/fuzz && cargo +nightly fuzz run ftrace_text`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use superpass_trace::{events::Events, ftrace_text};

fuzz_target!(|data: &[u8]| {
    let mut ev = Events::default();
    ftrace_text::parse(&String::from_utf8_lossy(data), &mut ev);
});
