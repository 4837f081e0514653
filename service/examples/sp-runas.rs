//! `sp-runas`: runs a program as another uid with only the capabilities named, as init would.
//!
//! Usage: `sp-runas --uid N --gid N [--groups N,N] [--caps sys_nice,...] -- PROGRAM [ARGS...]`.
//! Android's init starts a service with `user`, `group` and `capabilities` lines; this does
//! the same for the VM test, where busybox's `setpriv` cannot change uids: it keeps the
//! capabilities across the uid change (`PR_SET_KEEPCAPS`), limits the permitted, effective and
//! inheritable sets to the ones named and raises them as ambient, so they survive `exec`.

use std::os::unix::process::CommandExt;
use std::process::ExitCode;

/// `_LINUX_CAPABILITY_VERSION_3`: 64-bit capability sets in two words.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// A capability by its name without `CAP_` (any case) or its number.
fn capability(name: &str) -> Result<u32, String> {
    match name.to_ascii_lowercase().trim_start_matches("cap_") {
        "sys_nice" => Ok(23),
        "sys_admin" => Ok(21),
        "sys_ptrace" => Ok(19),
        "dac_read_search" => Ok(2),
        n => n
            .parse()
            .ok()
            .filter(|&c| c < 64)
            .ok_or_else(|| format!("unknown capability `{name}`")),
    }
}

fn list<T>(s: &str, f: impl Fn(&str) -> Result<T, String>) -> Result<Vec<T>, String> {
    s.split(',').filter(|p| !p.is_empty()).map(f).collect()
}

fn number(s: &str) -> Result<u32, String> {
    s.parse().map_err(|_| format!("`{s}` is not a number"))
}

fn check(what: &str, rc: libc::c_int) -> Result<(), String> {
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("{what}: {}", std::io::Error::last_os_error()))
    }
}

fn run() -> Result<std::io::Error, String> {
    let mut uid = None;
    let mut gid = None;
    let mut groups = Vec::new();
    let mut caps = Vec::new();
    let mut args = std::env::args().skip(1);
    let mut program = Vec::new();
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--uid" => uid = Some(number(&value()?)?),
            "--gid" => gid = Some(number(&value()?)?),
            "--groups" => groups = list(&value()?, number)?,
            "--caps" => caps = list(&value()?, capability)?,
            "--" => {
                program = args.collect();
                break;
            }
            _ => return Err(format!("unknown argument `{a}`")),
        }
    }
    let (Some(uid), Some(gid)) = (uid, gid) else {
        return Err("--uid and --gid are required".into());
    };
    let Some((prog, rest)) = program.split_first() else {
        return Err("no program after --".into());
    };
    let mut data = [CapData::default(); 2];
    for &c in &caps {
        let d = &mut data[(c / 32) as usize];
        let bit = 1u32 << (c % 32);
        d.effective |= bit;
        d.permitted |= bit;
        d.inheritable |= bit;
    }
    let gids: Vec<libc::gid_t> = groups.clone();
    // SAFETY: plain syscalls on this process; `gids` and `data` are valid for the lengths given.
    unsafe {
        check(
            "PR_SET_KEEPCAPS",
            libc::prctl(libc::PR_SET_KEEPCAPS, 1, 0, 0, 0),
        )?;
        check("setgroups", libc::setgroups(gids.len(), gids.as_ptr()))?;
        check("setresgid", libc::setresgid(gid, gid, gid))?;
        check("setresuid", libc::setresuid(uid, uid, uid))?;
        let mut header = CapHeader {
            version: CAPABILITY_VERSION_3,
            pid: 0,
        };
        let rc = libc::syscall(libc::SYS_capset, &mut header, data.as_mut_ptr());
        check("capset", rc as libc::c_int)?;
        for &c in &caps {
            let rc = libc::prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_RAISE as libc::c_ulong,
                c as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
            );
            check("PR_CAP_AMBIENT_RAISE", rc)?;
        }
    }
    Ok(std::process::Command::new(prog).args(rest).exec())
}

fn main() -> ExitCode {
    match run() {
        Ok(exec_error) => eprintln!("sp-runas: exec: {exec_error}"),
        Err(e) => eprintln!("sp-runas: {e}"),
    }
    ExitCode::from(126)
}
