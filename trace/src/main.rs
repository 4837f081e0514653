//! `superpass-trace`: import traces into SQLite and report lock blocking.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use superpass_trace::{import, query, report};

const AFTER_HELP: &str = "\
Examples:
  # Perfetto trace from a phone, or the VM's tracefs text capture, into a database:
  superpass-trace import trace.pftrace -o trace.db
  superpass-trace import /sys/kernel/tracing/trace -o vm.db
  # Also read as they are: .gz, atrace/systrace output (.ctrace, .html), trace-cmd report:
  superpass-trace import systrace.html -o sys.db
  # What was not imported is listed after the import, and kept in the `stats` table:
  sqlite3 trace.db \"SELECT name, value FROM stats ORDER BY value DESC\"

  # The seed post's analysis in one go (any input: .pftrace, text ftrace, or .db):
  superpass-trace report trace.db
  superpass-trace report on.txt --baseline off.txt --json > report.json

  # Ask your own questions; the tables mirror trace_processor's:
  superpass-trace query trace.db trace/sql/census.sql
  sqlite3 trace.db \"SELECT name, COUNT(*) FROM thread_slice GROUP BY name\"

Annotate lock waits with atrace slices named lockwait:<lock> and holds with
lockhold:<lock>. On stock Android, record the `dalvik` atrace category: ART's
\"Lock contention on a monitor lock (owner tid: N)\" slices are reported as waits whose
owner is known. See docs/trace.md for the formats, the schema and the report's
definitions.";

#[derive(Parser)]
#[command(name = "superpass-trace", version, about, after_help = AFTER_HELP)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Import a trace into a SQLite database and list what was not imported.
    Import {
        /// The trace: Perfetto protobuf, ftrace text (tracefs `trace`, atrace, `trace-cmd
        /// report`), a ctrace or systrace HTML, any of them gzipped. The format is told by
        /// the content, not the name.
        trace: PathBuf,
        /// Database to write. An older database there is replaced; the input itself, or
        /// a file that is not a SQLite database, is never overwritten.
        #[arg(short, long, value_name = "DB")]
        output: PathBuf,
    },
    /// Report lock waits and holds: census, tails, overlaps, barging, itemized waits,
    /// SuperPass blocking and grants.
    Report {
        /// A .pftrace, a text ftrace file, or a database from `import`.
        trace: PathBuf,
        /// Print one stable JSON object instead of tables.
        #[arg(long)]
        json: bool,
        /// Waits at least this long (milliseconds) count as long.
        #[arg(long, default_value_t = 1.0, value_name = "MS", value_parser = positive_ms)]
        long_ms: f64,
        /// How many of the longest waits to itemize.
        #[arg(long, default_value_t = 10)]
        top: usize,
        /// The same scenario with SuperPass off: report how much runnable time went away.
        #[arg(long, value_name = "TRACE")]
        baseline: Option<PathBuf>,
        /// Print only the long waits, itemized (with the SuperPass events inside each).
        #[arg(long, conflicts_with_all = ["json", "baseline"])]
        long_only: bool,
    },
    /// Write a synthetic contended-lock Perfetto trace (for benchmarks and demos).
    #[command(hide = true)]
    Synth {
        /// Output .pftrace.
        #[arg(short, long)]
        output: PathBuf,
        /// Approximate size in MiB.
        #[arg(long, default_value_t = 15)]
        mb: usize,
    },
    /// Run SQL (text, or a .sql file) against a trace and print rows tab-separated.
    Query {
        /// A .pftrace, a text ftrace file, or a database from `import`.
        trace: PathBuf,
        /// A query, or the path of a .sql file (its last statement's rows are printed).
        sql: String,
    },
}

fn positive_ms(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err("must be a non-negative number of milliseconds".into())
    }
}

fn run(cli: Cli) -> Result<(), Box<dyn std::error::Error>> {
    match cli.cmd {
        Cmd::Import { trace, output } => {
            let t = std::time::Instant::now();
            let s = import::import_file(&trace, &output)?;
            let secs = t.elapsed().as_secs_f64();
            eprintln!("{s}");
            eprintln!(
                "wrote {} in {:.2} s ({:.2} M events/s)",
                output.display(),
                secs,
                s.events as f64 / secs / 1e6
            );
        }
        Cmd::Report {
            trace,
            json,
            long_ms,
            top,
            baseline,
            long_only,
        } => {
            let opts = report::Options {
                long_ns: (long_ms * 1e6) as i64,
                top,
            };
            let (conn, summary) = import::open_any(&trace)?;
            if let (Some(s), false, false) = (&summary, json, long_only) {
                eprintln!("{s}");
            }
            let mut r = report::analyze(&conn, opts)?;
            if let Some(b) = baseline {
                let (bconn, _) = import::open_any(&b)?;
                let base = report::analyze(&bconn, opts)?;
                r["versus_baseline"] = report::compare(&r, &base);
            }
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else if long_only {
                print!("{}", report::render_long_waits(&r));
            } else {
                print!("{}", report::render_text(&r));
            }
        }
        Cmd::Synth { output, mb } => {
            let (bytes, events) = superpass_trace::synth::contended_trace(mb << 20, 2);
            std::fs::write(&output, &bytes)?;
            eprintln!(
                "wrote {} ({} bytes, {events} events)",
                output.display(),
                bytes.len()
            );
        }
        Cmd::Query { trace, sql } => {
            let (conn, _) = import::open_any(&trace)?;
            let text = if sql.ends_with(".sql") {
                std::fs::read_to_string(&sql)?
            } else {
                sql
            };
            print!("{}", query::run(&conn, &text)?.to_tsv());
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("superpass-trace: {e}");
            ExitCode::FAILURE
        }
    }
}
