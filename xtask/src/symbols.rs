//! `cargo xtask symbols`: the kernel symbols superpass.ko imports, as an ACK symbol list.
//!
//! A GKI kernel loads a vendor module only if every symbol it imports is in the kernel's KMI
//! (the union of the `android/abi_gki_aarch64*` symbol lists). This task writes superpass.ko's
//! imports in that format (`module/android/abi_gki_aarch64_superpass`) and compares them with
//! a committed excerpt of the stock lists (`module/android/gki_stock_symbols`), so the symbols a
//! vendor has to add to its own list are known before anyone tries a real device.

use crate::util::{root, wants_help};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

const HELP: &str = "usage: cargo xtask symbols [--check] [--ko <superpass.ko>]

Lists the symbols superpass.ko imports from the kernel (`nm -u`) and writes them
as an ACK symbol list, module/android/abi_gki_aarch64_superpass: a comment
header, `[abi_symbol_list]`, then one symbol a line, sorted the way ACK sorts
(case and leading underscores ignored). A vendor appends these to its own
android/abi_gki_aarch64_<vendor> list so that its GKI kernel exports them.

It then prints the symbols that are not in the committed stock lists
(module/android/gki_stock_symbols, an excerpt of ACK's own lists; its header
names the source) grouped as: vendor-hook tracepoints (__tracepoint_android_*,
__traceiter_android_*), Rust symbols (kernel and core crates), other C symbols.
Those are what a vendor must add; the rest a stock GKI kernel already exports.

The .ko is target/module/superpass.ko, rebuilt with `cargo xtask module` first
when it is missing or older than a file under module/ or core/src/.

  --check     write nothing; fail if the committed list differs from the one
              the .ko gives (run `cargo xtask symbols` and commit the result),
              then print the comparison (run by cargo xtask ci)
  --ko PATH   read this .ko instead (e.g. one built for aarch64 with Kleaf);
              nothing is built

Architectures. The test build is x86_64 and GKI is aarch64. Hook tracepoints,
Rust and almost all C symbol names are the same on both; a few come from x86's
arch code (pcpu_hot, this_cpu_off, _copy_from_user, ...). Those are written as
their aarch64 counterparts (or left out when arm64 needs no symbol), as listed
when the task runs. For an exact list, run --ko on an aarch64 build.
Rust symbol names carry a hash of the kernel's own build (`Cs<hash>_6kernel`),
so on a GKI kernel they differ from these; what they name does not.
";

/// The symbol list this task writes, relative to the workspace.
const LIST: &str = "module/android/abi_gki_aarch64_superpass";
/// The committed excerpt of ACK's stock symbol lists.
const STOCK: &str = "module/android/gki_stock_symbols";
const HEADER_LINE: &str = "[abi_symbol_list]";

/// x86_64 symbols that the test build imports only because of x86 arch code, and what an
/// aarch64 build imports instead (None: nothing, e.g. arm64 finds `current` in sp_el0).
const X86_ONLY: &[(&str, Option<&str>)] = &[
    // clang lowers a memcmp() compared only for equality to bcmp() for x86_64, not for
    // aarch64 (the arm64 .ko imports memcmp).
    ("bcmp", Some("memcmp")),
    ("_copy_from_user", Some("__arch_copy_from_user")),
    ("_copy_to_user", Some("__arch_copy_to_user")),
    // arm64's arch_scale_cpu_capacity() reads the per-CPU cpu_scale.
    ("arch_scale_cpu_capacity", Some("cpu_scale")),
    ("pcpu_hot", None),
    (
        "preempt_schedule_notrace_thunk",
        Some("preempt_schedule_notrace"),
    ),
    ("this_cpu_off", None),
];

/// Why a symbol is imported when the reason is not the module's own logic.
const NOTES: &[(&str, &str)] = &[(
    "__might_sleep",
    "only with CONFIG_DEBUG_ATOMIC_SLEEP (test kernel)",
)];

pub fn main(args: &[String]) -> Result<(), String> {
    if wants_help(args) {
        print!("{HELP}");
        return Ok(());
    }
    let mut check = false;
    let mut ko = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--check" => check = true,
            "--ko" => ko = Some(PathBuf::from(it.next().ok_or("--ko needs a path")?)),
            _ => return Err(format!("unknown option `{a}`\n\n{HELP}")),
        }
    }
    let ko = match ko {
        Some(k) => k,
        None => module_ko()?,
    };
    let imports = undefined_symbols(&ko)?;
    let (syms, mapped) = to_aarch64(&imports);
    for (x86, arm) in &mapped {
        match arm {
            Some(a) => eprintln!("[symbols] x86_64 {x86} -> aarch64 {a}"),
            None => eprintln!("[symbols] x86_64 {x86}: no aarch64 counterpart, left out"),
        }
    }
    let text = format_list(&syms, &ko_label(&ko));
    let list = root().join(LIST);
    if check {
        let old = fs::read_to_string(&list).map_err(|e| format!("{}: {e}", list.display()))?;
        let committed = parse_list(&old).map_err(|e| format!("{}: {e}", list.display()))?;
        let (added, removed) = diff(&committed, &syms);
        if !added.is_empty() || !removed.is_empty() {
            let mut what = Vec::new();
            if !added.is_empty() {
                what.push(format!("the .ko also imports {}", added.join(", ")));
            }
            if !removed.is_empty() {
                what.push(format!("it no longer imports {}", removed.join(", ")));
            }
            return Err(format!(
                "{LIST} is stale: {}; run `cargo xtask symbols` and commit the result",
                what.join("; ")
            ));
        }
        eprintln!("[symbols] {LIST} is up to date ({} symbols)", syms.len());
    } else {
        if let Some(dir) = list.parent() {
            fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        fs::write(&list, text).map_err(|e| format!("{}: {e}", list.display()))?;
        eprintln!("[symbols] wrote {LIST} ({} symbols)", syms.len());
    }
    let stock_path = root().join(STOCK);
    let stock_text =
        fs::read_to_string(&stock_path).map_err(|e| format!("{}: {e}", stock_path.display()))?;
    let stock = parse_list(&stock_text).map_err(|e| format!("{}: {e}", stock_path.display()))?;
    print!("{}", report(&syms, &stock));
    Ok(())
}

/// target/module/superpass.ko, built first if missing or older than its sources.
fn module_ko() -> Result<PathBuf, String> {
    let ko = root().join("target/module/superpass.ko");
    let built = fs::metadata(&ko).and_then(|m| m.modified()).ok();
    let newest = [root().join("module"), root().join("core/src")]
        .iter()
        .filter_map(|d| newest_mtime(d))
        .max();
    let fresh = match (built, newest) {
        (Some(b), Some(n)) => b >= n,
        (Some(_), None) => true,
        (None, _) => false,
    };
    if fresh {
        eprintln!("[symbols] reusing {}", ko.display());
        return Ok(ko);
    }
    eprintln!(
        "[symbols] {} is missing or stale: building it",
        ko.display()
    );
    let k = crate::kernel::ensure(&crate::kernel::Opts::default())?;
    crate::module::build(&k)
}

/// The newest modification time of the files under `dir`. module/android/ (written from
/// the .ko) and module/compat/ (a separate check) are not part of the .ko and are skipped.
fn newest_mtime(dir: &Path) -> Option<SystemTime> {
    let mut newest = None;
    for e in fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.ends_with("android") || p.ends_with("compat") {
            continue;
        }
        let t = if p.is_dir() {
            newest_mtime(&p)
        } else {
            e.metadata().and_then(|m| m.modified()).ok()
        };
        newest = newest.max(t);
    }
    newest
}

/// `nm -u` of the .ko (llvm-nm reads any architecture's ELF; binutils nm is the fallback).
fn undefined_symbols(ko: &Path) -> Result<Vec<String>, String> {
    if !ko.is_file() {
        return Err(format!("{}: no such file", ko.display()));
    }
    let mut last = String::new();
    for nm in ["llvm-nm-19", "llvm-nm", "nm"] {
        match Command::new(nm).arg("-u").arg(ko).output() {
            Ok(o) if o.status.success() => {
                let out = String::from_utf8_lossy(&o.stdout);
                return parse_nm_undefined(&out)
                    .map_err(|e| format!("{nm} -u {}: {e}", ko.display()));
            }
            Ok(o) => {
                last = format!(
                    "{nm} -u {}: {}",
                    ko.display(),
                    String::from_utf8_lossy(&o.stderr).trim()
                )
            }
            Err(e) => last = format!("{nm}: {e}"),
        }
    }
    Err(format!(
        "cannot list the symbols of {}: {last}",
        ko.display()
    ))
}

/// The names of `nm -u` output (`<spaces>U <name>` or `<name> U` with `-P`-like layouts);
/// sorted and deduplicated.
pub fn parse_nm_undefined(out: &str) -> Result<Vec<String>, String> {
    let mut syms = BTreeSet::new();
    for (i, line) in out.lines().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            [] => {}
            ["U" | "w" | "v", name] => {
                syms.insert((*name).to_string());
            }
            _ => {
                return Err(format!(
                    "line {}: expected `U <symbol>`, got `{}`",
                    i + 1,
                    line.trim()
                ))
            }
        }
    }
    Ok(syms.into_iter().collect())
}

/// Replaces x86-only imports by their aarch64 counterparts; returns the list (sorted, the
/// ACK way) and the replacements made.
pub fn to_aarch64(imports: &[String]) -> (Vec<String>, Vec<(String, Option<String>)>) {
    let mut out = BTreeSet::new();
    let mut mapped = Vec::new();
    for s in imports {
        match X86_ONLY.iter().find(|(x, _)| *x == s) {
            Some((x, arm)) => {
                mapped.push((x.to_string(), arm.map(str::to_string)));
                if let Some(a) = arm {
                    out.insert(a.to_string());
                }
            }
            None => {
                out.insert(s.clone());
            }
        }
    }
    let mut v: Vec<String> = out.into_iter().collect();
    ack_sort(&mut v);
    (v, mapped)
}

/// ACK's order: by name with case and leading underscores ignored, then by the exact name.
pub fn ack_sort(v: &mut [String]) {
    v.sort_by(|a, b| {
        let key = |s: &str| s.trim_start_matches('_').to_ascii_lowercase();
        key(a).cmp(&key(b)).then_with(|| a.cmp(b))
    });
}

/// How the list's header names the .ko: relative to the workspace when inside it.
fn ko_label(ko: &Path) -> String {
    let abs = fs::canonicalize(ko).unwrap_or_else(|_| ko.to_path_buf());
    let base = fs::canonicalize(root()).unwrap_or_else(|_| root());
    match abs.strip_prefix(&base) {
        Ok(rel) => rel.display().to_string(),
        Err(_) => ko
            .file_name()
            .map_or_else(|| ko.display().to_string(), |n| n.to_string_lossy().into()),
    }
}

/// The symbol list file: a comment header, `[abi_symbol_list]`, two-space-indented symbols.
pub fn format_list(syms: &[String], from: &str) -> String {
    let mut s = String::new();
    s.push_str("# Generated by `cargo xtask symbols` from ");
    s.push_str(from);
    s.push_str(" (nm -u); do not edit.\n");
    s.push_str("# The kernel symbols superpass.ko imports, for a vendor's android/abi_gki_aarch64_<vendor>.\n");
    s.push_str("# Built on x86_64: its x86-only imports are replaced by the aarch64 ones\n");
    s.push_str("# (cargo xtask symbols --help); Rust names carry the kernel build's crate hash.\n");
    s.push_str("# `cargo xtask symbols --check` (CI) fails when this file is stale.\n");
    s.push_str(HEADER_LINE);
    s.push('\n');
    for sym in syms {
        s.push_str("  ");
        s.push_str(sym);
        s.push('\n');
    }
    s
}

/// The symbols of a list file: `#` comments, blank lines and `[section]` headers are
/// skipped; every other line is one symbol. Errors name the line.
pub fn parse_list(text: &str) -> Result<Vec<String>, String> {
    let mut syms = BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || (t.starts_with('[') && t.ends_with(']')) {
            continue;
        }
        if t.split_whitespace().count() != 1 || !t.chars().all(|c| c.is_ascii_graphic()) {
            return Err(format!(
                "line {}: expected one symbol name, got `{t}`",
                i + 1
            ));
        }
        syms.insert(t.to_string());
    }
    Ok(syms.into_iter().collect())
}

/// (in `new` but not `old`, in `old` but not `new`), each sorted.
pub fn diff(old: &[String], new: &[String]) -> (Vec<String>, Vec<String>) {
    let o: BTreeSet<&String> = old.iter().collect();
    let n: BTreeSet<&String> = new.iter().collect();
    (
        n.difference(&o).map(|s| s.to_string()).collect(),
        o.difference(&n).map(|s| s.to_string()).collect(),
    )
}

/// The three groups of symbols a vendor must add.
#[derive(Debug, Default, PartialEq)]
pub struct Missing {
    pub hooks: Vec<String>,
    pub rust: Vec<String>,
    pub c: Vec<String>,
}

/// The symbols of `syms` absent from `stock`, grouped.
pub fn missing(syms: &[String], stock: &[String]) -> Missing {
    let (absent, _) = diff(stock, syms);
    let mut m = Missing::default();
    for s in absent {
        if s.starts_with("__tracepoint_android_") || s.starts_with("__traceiter_android_") {
            m.hooks.push(s);
        } else if s.starts_with("_R") {
            m.rust.push(s);
        } else {
            m.c.push(s);
        }
    }
    for v in [&mut m.hooks, &mut m.rust, &mut m.c] {
        ack_sort(v);
    }
    m
}

/// The comparison as printed: counts, then each group with its symbols.
pub fn report(syms: &[String], stock: &[String]) -> String {
    let m = missing(syms, stock);
    let n = m.hooks.len() + m.rust.len() + m.c.len();
    let mut s = format!(
        "superpass.ko imports {} symbols; {} are in the stock GKI lists ({STOCK}), {n} are not.\n",
        syms.len(),
        syms.len() - n
    );
    if n == 0 {
        return s;
    }
    s.push_str("A vendor must add these to its symbol list:\n");
    let groups = [
        ("vendor-hook tracepoints", &m.hooks),
        (
            "Rust (kernel and core crates; hashes differ per kernel build)",
            &m.rust,
        ),
        ("other C symbols", &m.c),
    ];
    for (name, v) in groups {
        if v.is_empty() {
            continue;
        }
        s.push_str(&format!("  {name} ({}):\n", v.len()));
        for sym in v.iter() {
            match NOTES.iter().find(|(n, _)| n == sym) {
                Some((_, why)) => s.push_str(&format!("    {sym}    # {why}\n")),
                None => s.push_str(&format!("    {sym}\n")),
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::strings as v;

    #[test]
    fn nm_output_is_parsed_sorted_and_deduplicated() {
        let out = "                 U mutex_unlock\n                 U _printk\n\n   U _printk\n   w weak_one\n";
        assert_eq!(
            parse_nm_undefined(out).unwrap(),
            v(&["_printk", "mutex_unlock", "weak_one"])
        );
    }

    #[test]
    fn nm_output_with_defined_symbols_is_an_error() {
        let e = parse_nm_undefined("0000000000000000 T init_module\n").unwrap_err();
        assert!(e.contains("line 1"), "{e}");
    }

    #[test]
    fn ack_order_ignores_case_and_leading_underscores() {
        let mut s = v(&[
            "mutex_unlock",
            "__module_get",
            "LZ4_decompress",
            "_printk",
            "kfree",
        ]);
        ack_sort(&mut s);
        assert_eq!(
            s,
            v(&[
                "kfree",
                "LZ4_decompress",
                "__module_get",
                "mutex_unlock",
                "_printk"
            ])
        );
    }

    #[test]
    fn x86_only_imports_become_aarch64_ones() {
        let (syms, mapped) = to_aarch64(&v(&["_copy_to_user", "pcpu_hot", "memcpy", "bcmp"]));
        assert_eq!(syms, v(&["__arch_copy_to_user", "memcmp", "memcpy"]));
        assert_eq!(
            mapped,
            vec![
                (
                    "_copy_to_user".to_string(),
                    Some("__arch_copy_to_user".to_string())
                ),
                ("pcpu_hot".to_string(), None),
                ("bcmp".to_string(), Some("memcmp".to_string()))
            ]
        );
    }

    #[test]
    fn list_format_round_trips() {
        let syms = v(&["__module_get", "memcpy"]);
        let text = format_list(&syms, "target/module/superpass.ko");
        assert!(text.starts_with("# Generated by `cargo xtask symbols`"));
        assert!(text.contains("\n[abi_symbol_list]\n  __module_get\n  memcpy\n"));
        assert_eq!(parse_list(&text).unwrap(), syms);
    }

    #[test]
    fn a_list_line_with_two_words_is_an_error_naming_the_line() {
        let e = parse_list("[abi_symbol_list]\n  memcpy\n  mem cpy\n").unwrap_err();
        assert!(e.contains("line 3"), "{e}");
    }

    #[test]
    fn diff_finds_added_and_removed() {
        let (a, r) = diff(&v(&["a", "b"]), &v(&["b", "c"]));
        assert_eq!((a, r), (v(&["c"]), v(&["a"])));
    }

    #[test]
    fn missing_symbols_are_grouped() {
        let syms = v(&[
            "__tracepoint_android_vh_mutex_wait_start",
            "__traceiter_android_rvh_tick_entry",
            "_RNvNtCsl7L7n58I0Vr_6kernel5print11call_printk",
            "smp_call_function_single_async",
            "memcpy",
        ]);
        let m = missing(&syms, &v(&["memcpy", "__traceiter_android_rvh_tick_entry"]));
        assert_eq!(m.hooks, v(&["__tracepoint_android_vh_mutex_wait_start"]));
        assert_eq!(
            m.rust,
            v(&["_RNvNtCsl7L7n58I0Vr_6kernel5print11call_printk"])
        );
        assert_eq!(m.c, v(&["smp_call_function_single_async"]));
        let r = report(&syms, &v(&["memcpy"]));
        assert!(r.contains("imports 5 symbols; 1 are in the stock"), "{r}");
        assert!(r.contains("vendor-hook tracepoints (2)"), "{r}");
    }
}
