//! The tuning commands that `dumpsys <service> <args>` and `cmd <service> <args>` accept.
//!
//! One table for both shell routes: `dumpsys vendor.superpass.ISuperPass/default set max_depth 4`
//! (the dump transaction) and `cmd vendor.superpass.ISuperPass/default set max_depth 4` (the
//! shell-command transaction, [`crate::shell`]). Commands run through the same [`ISuperPass`]
//! methods a client calls, so the caller check applies: the calling uid must be allowed to
//! change state. `fifo` is a setting of the service itself with no interface method: it runs
//! through [`Local`], which only the service's own dump and shell routes have.

use std::io::Write;

use rsbinder::BinderResult;

use crate::aidl::ISuperPass;
use crate::dump::Report;
use crate::rtui;
use crate::status;

/// The service's own settings, which the interface has no method for: only `dumpsys` and
/// `cmd`, answered in the service, reach them.
pub trait Local {
    /// Turns RT-UI on or off (an allowed uid only; saved) and says how it stands after.
    fn set_fifo(&self, on: bool) -> BinderResult<rtui::Status>;

    /// How RT-UI stands.
    fn fifo(&self) -> rtui::Status;
}

/// Why `fifo` fails where the service's own routes are not at hand (a client's proxy).
const NO_LOCAL: &str = "fifo is a setting of the service itself: use dumpsys or cmd \
     vendor.superpass.ISuperPass/default fifo on|off (or superpassctl dumpsys fifo on|off)";

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
    /// `fifo on|off` turns RT-UI on or off; `fifo` alone prints how it stands.
    Fifo(Option<bool>),
    /// `reset-stats`.
    ResetStats,
    /// `help`.
    Help,
}

/// The help text of the dump arguments.
pub const HELP: &str = "\
SuperPass commands (dumpsys or cmd vendor.superpass.ISuperPass/default [ARGS]):
  (none)              state, critical threads, active hooks, stats, tunables
  --json              the same as JSON
  set <name> <value>  set a tunable; values take _ separators, *_ns ones ns/us/ms/s suffixes
  get <name>          print one tunable
  enable | disable    turn the fast track on or off (saved across restarts)
  discovery on|off    watch the top-app cpuset for the foreground app (saved)
  fifo on|off         RT-UI: make the critical UI and render threads SCHED_FIFO 1, and put
                      each back to its policy and nice when it leaves the set or on off
                      (saved; off by default; the service needs CAP_SYS_NICE)
  fifo                how RT-UI stands: threads SCHED_FIFO, failures by errno
  reset-stats         zero the counters and the histogram
  help                this text
Changing commands need an allowed uid (default: system, root).
";

/// True if tunable `name` is a time in ns, so its values may carry a time unit.
pub fn takes_time_units(name: &str) -> bool {
    match superpass_core::tunables::TUNABLES
        .iter()
        .find(|d| d.name == name)
    {
        Some(d) => d.unit == "ns",
        None => name.ends_with("_ns"),
    }
}

/// Parses a value for tunable `name`: time tunables take `2ms`, `500us`, `1s`, `40ns`; the
/// others plain integers. Both take `_` separators.
pub fn parse_tunable_value(name: &str, s: &str) -> Result<i64, String> {
    let plain = s.trim().replace('_', "");
    if !takes_time_units(name) && plain.parse::<i64>().is_err() {
        return Err(match parse_value(s) {
            Ok(_) => format!(
                "`{s}` has a time unit, but {name} is not a time (only the *_ns tunables take \
                 ns/us/ms/s)"
            ),
            Err(_) => format!("`{s}` is not a number (e.g. 4 or 1_000)"),
        });
    }
    parse_value(s)
}

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

fn on_off(cmd: &str, s: &str) -> Result<bool, String> {
    match s {
        "on" | "true" | "1" => Ok(true),
        "off" | "false" | "0" => Ok(false),
        _ => Err(format!("{cmd} takes on or off, not `{s}`")),
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
            value: parse_tunable_value(name, value)?,
        },
        ["get", name] => Command::Get {
            name: name.to_string(),
        },
        ["enable"] => Command::Enable(true),
        ["disable"] => Command::Enable(false),
        ["discovery", v] => Command::Discovery(on_off("discovery", v)?),
        ["fifo"] => Command::Fifo(None),
        ["fifo", v] => Command::Fifo(Some(on_off("fifo", v)?)),
        ["reset-stats"] => Command::ResetStats,
        ["help"] | ["-h"] | ["--help"] => Command::Help,
        _ => return Err(format!("unknown arguments {args:?}")),
    })
}

/// Runs `cmd` against `svc`, writing its output to `out` (a client: no `fifo`).
pub fn execute(cmd: &Command, svc: &dyn ISuperPass, out: &mut dyn Write) -> Result<(), String> {
    execute_with(cmd, svc, None, out)
}

/// Runs `cmd` against `svc` and, in the service, its own settings `local`.
pub fn execute_with(
    cmd: &Command,
    svc: &dyn ISuperPass,
    local: Option<&dyn Local>,
    out: &mut dyn Write,
) -> Result<(), String> {
    let err = |s: rsbinder::Status| status::describe(&s);
    let w = |out: &mut dyn Write, s: &str| {
        out.write_all(s.as_bytes())
            .map_err(|e| format!("write: {e}"))
    };
    match cmd {
        Command::Show { json } => {
            let mut r = Report::collect(svc).map_err(err)?;
            r.service.fifo = local.map(|l| l.fifo());
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
        Command::Fifo(on) => {
            let local = local.ok_or(NO_LOCAL)?;
            let st = match on {
                Some(on) => local.set_fifo(*on).map_err(err)?,
                None => local.fifo(),
            };
            w(out, &format!("fifo: {}\n", st.summary()))
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
pub fn run_dump(
    svc: &dyn ISuperPass,
    local: Option<&dyn Local>,
    args: &[String],
    out: &mut dyn Write,
) {
    let r = parse(args).and_then(|c| execute_with(&c, svc, local, out));
    if let Err(e) = r {
        let _ = writeln!(out, "error: {e}\n\n{HELP}");
    }
}

/// What `cmd` returns for a command that failed (AOSP's `ShellCommand` uses -1 too).
pub const SHELL_FAILED: i32 = -1;

/// The service's shell command: parses `args`, runs the command, writes its output to `out`
/// and a failure to `err`, and returns the result code `cmd` exits with (0 or
/// [`SHELL_FAILED`]).
pub fn run_shell(
    svc: &dyn ISuperPass,
    local: Option<&dyn Local>,
    args: &[String],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    match parse(args).and_then(|c| execute_with(&c, svc, local, out)) {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(err, "error: {e}\n\n{HELP}");
            SHELL_FAILED
        }
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
        assert_eq!(p("fifo on"), Ok(Command::Fifo(Some(true))));
        assert_eq!(p("fifo off"), Ok(Command::Fifo(Some(false))));
        assert_eq!(p("fifo"), Ok(Command::Fifo(None)));
        assert_eq!(p("reset-stats"), Ok(Command::ResetStats));
        assert_eq!(p("help"), Ok(Command::Help));
        assert!(p("set x").is_err());
        assert_eq!(
            p("discovery maybe"),
            Err("discovery takes on or off, not `maybe`".into())
        );
        assert_eq!(
            p("fifo maybe"),
            Err("fifo takes on or off, not `maybe`".into())
        );
        assert!(p("fifo on now").is_err());
        assert!(HELP.contains("fifo on|off"));
        assert!(p("frobnicate").is_err());
    }

    #[test]
    fn only_time_tunables_take_units() {
        assert_eq!(parse_tunable_value("slice_ns", "2ms"), Ok(2_000_000));
        assert_eq!(parse_tunable_value("max_depth", "4"), Ok(4));
        assert_eq!(parse_tunable_value("max_depth", "1_0"), Ok(10));
        let e = parse_tunable_value("max_depth", "4ms").unwrap_err();
        assert!(e.contains("not a time"), "{e}");
        assert!(parse_tunable_value("max_depth", "four")
            .unwrap_err()
            .contains("not a number"));
        assert!(p("set max_depth 4ms").is_err());
        assert_eq!(
            p("set budget_ns 1ms"),
            Ok(Command::Set {
                name: "budget_ns".into(),
                value: 1_000_000
            })
        );
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
