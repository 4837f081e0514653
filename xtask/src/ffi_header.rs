//! `module/superpass_ffi.h`: the C prototypes of the seam between superpass.ko's Rust crate and
//! its C companion, generated from the Rust side's declarations so the two cannot drift.
//!
//! Both directions are declared once: the entry points C calls (`#[no_mangle] pub extern "C"
//! fn`) in the crate root, `module/superpass_main.rs`, and the C helpers Rust calls (the one
//! `extern "C"` block) in `module/ffi.rs`, beside their safe wrappers. This reads those
//! declarations and spells each in C. A type without a C spelling here fails the generation,
//! naming the function.

use crate::util::root;
use std::fs;

/// Where the entry points are declared, relative to the workspace root.
const SOURCE: &str = "module/superpass_main.rs";
/// Where the C helpers are declared.
const HELPERS: &str = "module/ffi.rs";

/// One function of the seam.
#[derive(Debug, PartialEq, Eq)]
struct Proto {
    name: String,
    /// (name, Rust type) pairs.
    args: Vec<(String, String)>,
    /// The Rust return type; empty for none.
    ret: String,
}

/// The C spelling of Rust type `ty` in a prototype.
fn c_type(ty: &str) -> Option<&'static str> {
    Some(match ty {
        "" | "()" => "void",
        "bool" => "bool",
        "u32" => "u32",
        "u64" => "u64",
        "i32" => "s32",
        "c_int" => "int",
        "c_uint" => "unsigned int",
        "c_long" => "long",
        "c_ulong" => "unsigned long",
        "*mut c_void" => "void *",
        "*const c_void" => "const void *",
        "*const i32" => "const s32 *",
        "*mut u64" => "u64 *",
        "*mut u32" => "u32 *",
        "*mut u8" => "u8 *",
        "*mut i32" => "s32 *",
        _ => return None,
    })
}

/// Splits `name: Type, name: Type,` into pairs.
fn parse_args(list: &str) -> Vec<(String, String)> {
    list.split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .filter_map(|a| {
            let (n, t) = a.split_once(':')?;
            Some((
                n.trim().to_string(),
                t.split_whitespace().collect::<Vec<_>>().join(" "),
            ))
        })
        .collect()
}

/// The function declared from `at` in `src` (just after `fn `): its name, arguments and return
/// type, up to the body's `{` or the declaration's `;`.
fn parse_fn(src: &str) -> Option<Proto> {
    let open = src.find('(')?;
    let name = src[..open].trim().to_string();
    let close = open + src[open..].find(')')?;
    let args = parse_args(&src[open + 1..close]);
    let rest = &src[close + 1..];
    let end = rest.find(['{', ';'])?;
    let ret = rest[..end]
        .trim()
        .strip_prefix("->")
        .map(|r| r.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    Some(Proto { name, args, ret })
}

/// The entry points C calls, in source order.
fn entries(src: &str) -> Vec<Proto> {
    let mut out = Vec::new();
    let mut rest = src;
    while let Some(i) = rest.find("#[no_mangle]") {
        rest = &rest[i + "#[no_mangle]".len()..];
        if let Some(j) = rest.find("extern \"C\" fn ") {
            if let Some(p) = parse_fn(&rest[j + "extern \"C\" fn ".len()..]) {
                out.push(p);
            }
        }
    }
    out
}

/// The C helpers Rust calls: the `extern "C"` block's functions, in source order.
fn helpers(src: &str) -> Result<Vec<Proto>, String> {
    let start = src
        .find("extern \"C\" {")
        .ok_or_else(|| format!("{HELPERS}: no `extern \"C\" {{` block"))?;
    let block = &src[start + "extern \"C\" {".len()..];
    let end = block
        .find('}')
        .ok_or_else(|| format!("{HELPERS}: the `extern \"C\"` block does not end"))?;
    let mut out = Vec::new();
    let mut rest = &block[..end];
    while let Some(i) = rest.find(" fn ") {
        rest = &rest[i + " fn ".len()..];
        if let Some(p) = parse_fn(rest) {
            out.push(p);
        }
    }
    Ok(out)
}

/// `proto` in C, as one line.
fn c_line(p: &Proto) -> Result<String, String> {
    let spell = |ty: &str| {
        c_type(ty).ok_or_else(|| {
            format!(
                "module/: `{}` uses `{ty}`, which has no C spelling in xtask/src/ffi_header.rs",
                p.name
            )
        })
    };
    let ret = spell(&p.ret)?;
    let mut args = Vec::new();
    for (n, t) in &p.args {
        let c = spell(t)?;
        args.push(if c.ends_with('*') {
            format!("{c}{n}")
        } else {
            format!("{c} {n}")
        });
    }
    let args = if args.is_empty() {
        "void".to_string()
    } else {
        args.join(", ")
    };
    let sep = if ret.ends_with('*') { "" } else { " " };
    Ok(format!("{ret}{sep}{}({args});", p.name))
}

/// The text of `module/superpass_ffi.h`.
pub fn generate() -> Result<String, String> {
    let read =
        |path: &str| fs::read_to_string(root().join(path)).map_err(|e| format!("{path}: {e}"));
    let entries = entries(&read(SOURCE)?);
    let helpers = helpers(&read(HELPERS)?)?;
    if entries.is_empty() {
        return Err(format!("{SOURCE}: found no entry points"));
    }
    if helpers.is_empty() {
        return Err(format!("{HELPERS}: found no C helpers"));
    }
    let mut o = String::from(
        "/* SPDX-License-Identifier: GPL-2.0 */\n\
         /*\n \
         * Generated by `cargo xtask gen-headers` from module/superpass_main.rs and module/ffi.rs; do not edit.\n \
         *\n \
         * The seam between superpass.ko's Rust crate and its C companion, both\n \
         * directions, spelled in C from the Rust declarations (superpass.h explains it).\n \
         */\n\
         #ifndef SUPERPASS_FFI_H\n#define SUPERPASS_FFI_H\n\n#include <linux/types.h>\n\n\
         /* ---- Rust entry points (superpass_main.rs) ---- */\n",
    );
    for p in &entries {
        o.push_str(&c_line(p)?);
        o.push('\n');
    }
    o.push_str("\n/* ---- C helpers for Rust (declared in ffi.rs) ---- */\n");
    for p in &helpers {
        o.push_str(&c_line(p)?);
        o.push('\n');
    }
    o.push_str("\n#endif /* SUPERPASS_FFI_H */\n");
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spells_both_directions() {
        let src = "
            #[no_mangle]
            pub unsafe extern \"C\" fn sp_hook_x(now: u64, tid: i32, p: *mut c_void,) -> bool {
            }
            mod ffi {
                extern \"C\" {
                    pub(crate) fn sp_y() -> u64;
                    pub(crate) fn sp_z(r: *const i32, n: c_uint);
                }
            }";
        let e = entries(src);
        assert_eq!(
            c_line(&e[0]).unwrap(),
            "bool sp_hook_x(u64 now, s32 tid, void *p);"
        );
        let h = helpers(src).unwrap();
        assert_eq!(c_line(&h[0]).unwrap(), "u64 sp_y(void);");
        assert_eq!(
            c_line(&h[1]).unwrap(),
            "void sp_z(const s32 *r, unsigned int n);"
        );
    }

    #[test]
    fn an_unknown_type_names_the_function() {
        let p = parse_fn("sp_w(x: Vec<u8>) -> u32 {").unwrap();
        let e = c_line(&p).unwrap_err();
        assert!(e.contains("sp_w") && e.contains("Vec<u8>"), "{e}");
    }
}
