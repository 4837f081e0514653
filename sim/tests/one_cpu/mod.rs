//! The platform of the hand-built one-CPU cases, as scenario TOML.

/// One CPU of capacity 1024 with the top-app group on it, a 4 ms tick, a 3 ms base slice, and
/// context switches and migrations that cost nothing.
pub const ONE_CPU: &str = r#"[platform]
clusters = [{ name = "c", count = 1, capacity = 1024 }]
groups = [{ name = "top-app", cpus = [0] }]
tick_ns = 4000000
base_slice_ns = 3000000
context_switch_ns = 0
migration_ns = 0
"#;
