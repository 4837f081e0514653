//! Runs one hot-path operation N times, for `cargo xtask insns` to count its instructions.
//!
//! Usage: `hotpath_insns <name> <iterations>`; `hotpath_insns list` prints the names. Run it
//! under `valgrind --tool=callgrind` and divide the operation function's inclusive instruction
//! count by the iterations: that is the per-call cost, including the call itself.

#[path = "../benches/common/mod.rs"]
mod common;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("list") || args.is_empty() {
        for hp in common::HOT_PATHS {
            println!("{}", hp.name);
        }
        return;
    }
    let name = &args[0];
    let n: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let hp = common::HOT_PATHS
        .iter()
        .find(|h| h.name == name)
        .unwrap_or_else(|| panic!("unknown hot path {name}"));
    let mut e = (hp.setup)();
    // Time stands still: the boosted blocker stays within its slice, budget and window.
    let now = 10u64;
    for _ in 0..n {
        (hp.op)(&mut e, now);
        if let Some(u) = hp.undo {
            u(&mut e, now);
        }
    }
    std::hint::black_box(&e);
}
