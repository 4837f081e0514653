//! The tuning commands `dumpsys <service> <args>` accepts, run through the AIDL interface.
//!
//! `adb shell cmd` cannot reach an rsbinder service (rsbinder 0.12 refuses
//! `SHELL_COMMAND_TRANSACTION` before user code runs), so the shell route for tuning is the
//! dump arguments: `dumpsys vendor.superpass.ISuperPass/default set max_depth 4`. Commands run
//! through the same [`ISuperPass`] methods a client calls, so the caller check applies: the
//! dumping uid must be allowed to change state.

use std::io::Write;

use crate::aidl::ISuperPass;
use crate::dump::Report;
use crate::status;

/// What `dumpsys` arguments ask for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Print the report (`--json` for JSON).
    Show {
        /// JSON instead of text.
        json: bool,
    },
    /// `set <name> <value>`: set a tunable.
    Set {
        /// Tunable name.
        name: String,
        /// New value.
        value: i64,
    },
    /// `get <name>`: print one tunable's value.
    Get {
        /// Tunable name.
        name: String,
    },
    /// `enable` / `disable`.
    Enable(bool),
    /// `discovery on|off`.
    Discovery(bool),
    /// `reset-stats`.
    ResetStats,
    /// `help`.
    Help,
}

/// The help text of the dump arguments.
pub const HELP: &str = "\
SuperPass dump arguments (dumpsys vendor.superpass.ISuperPass/default [ARGS]):
  (none)              state, critical threads, active hooks, stats, tunables
  --json              the same as JSON
  set <name> <value>  set a tunable; values take _ separators and ns/us/ms/s suffixes
  get <name>          print one tunable
  enable | disable    turn the fast track on or off (saved across restarts)
  discovery on|off    watch the top-app cpuset for the foreground app (saved)
  reset-stats         zero the counters and the histogram
  help                this text
Changing commands need an allowed uid (default: system, root).
";

/// Parses `2_000_000`, `2ms`, `500us`, `1s`, `40ns` into an integer (time units into ns).
pub fn parse_value(s: &str) -> Result<i64, String> {
    let t = s.trim().replace('_', "");
    let (digits, mult) = [
        ("ns", 1i64),
        ("us", 1_000),
        ("ms", 1_000_000),
        ("s", 1_000_000_000),
    ]
    .iter()
    .find_map(|&(suffix, m)| t.strip_suffix(suffix).map(|d| (d.to_string(), m)))
    .unwrap_or((t.clone(), 1));
    let n: i64 = digits
        .parse()
        .map_err(|_| format!("`{s}` is not a number (e.g. 4, 2_000_000, 2ms)"))?;
    n.checked_mul(mult)
        .ok_or_else(|| format!("`{s}` is too large"))
}

fn on_off(s: Option<&str>) -> Result<bool, String> {
    match s {
        Some("on" | "true" | "1") => Ok(true),
        Some("off" | "false" | "0") => Ok(false),
        _ => Err("expected on or off".into()),
    }
}

/// Parses dump arguments.
pub fn parse(args: &[String]) -> Result<Command, String> {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    Ok(match a.as_slice() {
        [] => Command::Show { json: false },
        ["--json"] | ["-j"] => Command::Show { json: true },
        ["set", name, value] => Command::Set {
            name: name.to_string(),
            value: parse_value(value)?,
        },
        ["get", name] => Command::Get {
            name: name.to_string(),
        },
        ["enable"] => Command::Enable(true),
        ["disable"] => Command::Enable(false),
        ["discovery", v] => Command::Discovery(on_off(Some(v))?),
        ["reset-stats"] => Command::ResetStats,
        ["help"] | ["-h"] | ["--help"] => Command::Help,
        _ => return Err(format!("unknown arguments {args:?}")),
    })
}

/// Runs `cmd` against `svc`, writing its output to `out`.
pub fn execute(cmd: &Command, svc: &dyn ISuperPass, out: &mut dyn Write) -> Result<(), String> {
    let err = |s: rsbinder::Status| status::describe(&s);
    let w = |out: &mut dyn Write, s: &str| {
        out.write_all(s.as_bytes())
            .map_err(|e| format!("write: {e}"))
    };
    match cmd {
        Command::Show { json } => {
            let r = Report::collect(svc).map_err(err)?;
            let mut s = if *json { r.to_json() } else { r.to_text() };
            if !s.ends_with('\n') {
                s.push('\n');
            }
            w(out, &s)
        }
        Command::Set { name, value } => {
            svc.setTunable(name, *value).map_err(err)?;
            w(out, &format!("{name} = {value}\n"))
        }
        Command::Get { name } => {
            let t = svc.getTunables().map_err(err)?;
            let t = t
                .iter()
                .find(|t| &t.name == name)
                .ok_or_else(|| format!("no tunable named `{name}`"))?;
            w(out, &format!("{}\n", t.value))
        }
        Command::Enable(on) => {
            svc.setEnabled(*on).map_err(err)?;
            w(out, if *on { "enabled\n" } else { "disabled\n" })
        }
        Command::Discovery(on) => {
            svc.setForegroundDiscovery(*on).map_err(err)?;
            w(
                out,
                if *on {
                    "foreground discovery on\n"
                } else {
                    "foreground discovery off\n"
                },
            )
        }
        Command::ResetStats => {
            svc.resetStats().map_err(err)?;
            w(out, "stats reset\n")
        }
        Command::Help => w(out, HELP),
    }
}

/// The service's `dump`: parses `args`, runs the command, and reports errors in the output
/// (dumpsys shows only what the service writes).
pub fn run_dump(svc: &dyn ISuperPass, args: &[String], out: &mut dyn Write) {
    let r = parse(args).and_then(|c| execute(&c, svc, out));
    if let Err(e) = r {
        let _ = writeln!(out, "error: {e}\n\n{HELP}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Command, String> {
        let v: Vec<String> = s.split_whitespace().map(String::from).collect();
        parse(&v)
    }

    #[test]
    fn parses_every_command() {
        assert_eq!(p(""), Ok(Command::Show { json: false }));
        assert_eq!(p("--json"), Ok(Command::Show { json: true }));
        assert_eq!(
            p("set slice_ns 2ms"),
            Ok(Command::Set {
                name: "slice_ns".into(),
                value: 2_000_000
            })
        );
        assert_eq!(
            p("get max_depth"),
            Ok(Command::Get {
                name: "max_depth".into()
            })
        );
        assert_eq!(p("enable"), Ok(Command::Enable(true)));
        assert_eq!(p("disable"), Ok(Command::Enable(false)));
        assert_eq!(p("discovery on"), Ok(Command::Discovery(true)));
        assert_eq!(p("reset-stats"), Ok(Command::ResetStats));
        assert_eq!(p("help"), Ok(Command::Help));
        assert!(p("set x").is_err());
        assert!(p("discovery maybe").is_err());
        assert!(p("frobnicate").is_err());
    }

    #[test]
    fn values_take_units_and_separators() {
        assert_eq!(parse_value("4"), Ok(4));
        assert_eq!(parse_value("2_000_000"), Ok(2_000_000));
        assert_eq!(parse_value("500us"), Ok(500_000));
        assert_eq!(parse_value("1s"), Ok(1_000_000_000));
        assert_eq!(parse_value("-3"), Ok(-3));
        assert!(parse_value("2 parsecs").is_err());
        assert!(parse_value("99999999999s").is_err());
    }
}
