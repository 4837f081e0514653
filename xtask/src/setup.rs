//! `cargo xtask setup`: installs what the README's commands need, and builds the kernels, ahead
//! of time.

use crate::kernel::{self, Arch, Opts};
use crate::util::wants_help;
use std::time::Instant;

const HELP: &str = "usage: cargo xtask setup [--kernels] [--no-cargo-fuzz]

Installs, once, what `cargo xtask demo` and `cargo xtask ci` would otherwise
install as they reach it (`cargo xtask doctor` lists what is missing):
  1. cargo-fuzz into $SUPERPASS_CACHE/tools (the fuzz smoke; ~1 min)
  2. the Debian packages for x86_64 and arm64 (as root; ~1 min with a fast
     mirror), and Debian's aarch64 busybox for the arm64 guest
  3. bindgen-cli into $SUPERPASS_CACHE/tools (the kernel's Rust; ~1.5 min)
  4. rsbinder-tools into $SUPERPASS_CACHE/tools (the guest's service manager
     for the HAL service test; ~2 min)
With --kernels, it then builds (or finds cached) the x86_64 test kernel and
the arm64 one (8-14 and 6-10 min cold on 2 idle cores, by the machine).

  --kernels        also build both test kernels
  --no-cargo-fuzz  leave step 1 out (CI runs this in the background while its
                   own fuzz step installs cargo-fuzz)

Everything lands in the same places the other tasks look, so running it twice
does nothing the second time. `cargo xtask ci` runs `setup --kernels
--no-cargo-fuzz` in the background beside its host checks, which a 2-core
machine's idle moments (linking, single-threaded tests, downloads) can take.
";

/// What to set up.
#[derive(Debug, Default, PartialEq, Eq)]
struct Plan {
    kernels: bool,
    cargo_fuzz: bool,
}

fn parse(args: &[String]) -> Result<Plan, String> {
    let mut plan = Plan {
        kernels: false,
        cargo_fuzz: true,
    };
    for a in args {
        match a.as_str() {
            "--kernels" => plan.kernels = true,
            "--no-cargo-fuzz" => plan.cargo_fuzz = false,
            _ => return Err(format!("unknown option `{a}`\n\n{HELP}")),
        }
    }
    Ok(plan)
}

/// Runs `f`, then says how long it took.
fn timed(what: &str, f: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    let t = Instant::now();
    eprintln!("[setup] {what}");
    f()?;
    eprintln!("[setup] {what}: done in {:.0}s", t.elapsed().as_secs_f64());
    Ok(())
}

pub fn main(args: &[String]) -> Result<(), String> {
    if wants_help(args) {
        print!("{HELP}");
        return Ok(());
    }
    let plan = parse(args)?;
    let start = Instant::now();
    if plan.cargo_fuzz {
        timed("cargo-fuzz", || crate::ci::ensure_cargo_fuzz().map(drop))?;
    }
    timed("Debian packages", || {
        crate::packages::ensure_packages(Arch::Arm64, false)?;
        crate::packages::arm64_busybox(false).map(drop)
    })?;
    timed("bindgen-cli", || kernel::ensure_bindgen(false))?;
    timed("rsbinder-tools", || {
        crate::guest_service::ensure_rsbinder_tools().map(drop)
    })?;
    if plan.kernels {
        for arch in [Arch::X86_64, Arch::Arm64] {
            timed(&format!("{} kernel", arch.name()), || {
                kernel::ensure(&Opts {
                    arch,
                    ..Opts::default()
                })
                .map(drop)
            })?;
        }
    }
    eprintln!("[setup] all done in {:.0}s", start.elapsed().as_secs_f64());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::strings as args;

    #[test]
    fn the_flags_choose_the_kernels_and_cargo_fuzz() {
        assert_eq!(
            parse(&[]).unwrap(),
            Plan {
                kernels: false,
                cargo_fuzz: true
            }
        );
        assert_eq!(
            parse(&args(&["--kernels", "--no-cargo-fuzz"])).unwrap(),
            Plan {
                kernels: true,
                cargo_fuzz: false
            }
        );
        assert!(parse(&args(&["--kernel"]))
            .unwrap_err()
            .contains("unknown option `--kernel`"));
    }
}
