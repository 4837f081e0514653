//! Detects a trace's format, decodes it and writes the SQLite database.

use std::fmt;
use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use crate::events::{Diagnostics, Events};
use crate::model::{self, Model};
use crate::{ftrace_text, perfetto, schema};

/// What a trace file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Perfetto protobuf (`.pftrace`, `.perfetto-trace`).
    Perfetto,
    /// Kernel text ftrace (tracefs `trace`).
    FtraceText,
    /// A database this tool already wrote.
    Sqlite,
}

/// Why a trace could not be imported.
#[derive(Debug)]
pub enum ImportError {
    /// Reading or writing a file failed.
    Io(std::io::Error),
    /// The bytes are not a trace this tool reads.
    Format(String),
    /// SQLite failed.
    Db(rusqlite::Error),
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportError::Io(e) => write!(f, "{e}"),
            ImportError::Format(e) => write!(f, "{e}"),
            ImportError::Db(e) => write!(f, "database: {e}"),
        }
    }
}

impl std::error::Error for ImportError {}

impl From<std::io::Error> for ImportError {
    fn from(e: std::io::Error) -> Self {
        ImportError::Io(e)
    }
}

impl From<rusqlite::Error> for ImportError {
    fn from(e: rusqlite::Error) -> Self {
        ImportError::Db(e)
    }
}

/// What an import did.
#[derive(Debug, Clone)]
pub struct Summary {
    /// Input format.
    pub format: Format,
    /// Events decoded.
    pub events: u64,
    /// Rows written per main table.
    pub slices: usize,
    /// `sched` rows.
    pub sched: usize,
    /// `thread_state` rows.
    pub thread_state: usize,
    /// `thread` rows.
    pub threads: usize,
    /// SuperPass events.
    pub superpass: usize,
    /// Skipped and repaired input.
    pub diag: Diagnostics,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?}: {} events -> {} slices, {} sched, {} thread_state, {} threads, {} superpass",
            self.format,
            self.events,
            self.slices,
            self.sched,
            self.thread_state,
            self.threads,
            self.superpass
        )?;
        let d = &self.diag;
        let issues = [
            ("corrupt", d.corrupt),
            ("unknown (skipped)", d.unknown),
            ("out of order (re-sorted)", d.out_of_order),
            ("unmatched slice ends (dropped)", d.unmatched_ends),
            ("unended slices (dur = -1)", d.unended_slices),
            ("lost-event markers", d.lost_events),
        ];
        for (what, n) in issues {
            if n > 0 {
                write!(f, "\n  {n} {what}")?;
            }
        }
        if d.truncated {
            write!(
                f,
                "\n  input truncated: the partial last packet was dropped"
            )?;
        }
        for n in &d.notes {
            write!(f, "\n  note: {n}")?;
        }
        Ok(())
    }
}

const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// Guesses the format from the first bytes.
pub fn detect(buf: &[u8]) -> Format {
    if buf.starts_with(SQLITE_MAGIC) {
        Format::Sqlite
    } else if buf.first() == Some(&0x0a) && !starts_like_text(buf) {
        Format::Perfetto
    } else if ftrace_text::looks_like_text(buf) {
        Format::FtraceText
    } else {
        Format::Perfetto
    }
}

/// A text trace may begin with a blank line (0x0a, also Perfetto's first tag byte); a real
/// Perfetto packet is followed by a length and binary data.
fn starts_like_text(buf: &[u8]) -> bool {
    let rest = &buf[1..buf.len().min(256)];
    ftrace_text::looks_like_text(rest)
        && rest
            .iter()
            .all(|&b| b == b'\n' || b == b'\t' || (0x20..0x7f).contains(&b))
}

/// Decodes a trace (Perfetto or text) into events.
pub fn decode(buf: &[u8]) -> Result<(Format, Events), ImportError> {
    let mut ev = Events::default();
    let format = detect(buf);
    match format {
        Format::Sqlite => {
            return Err(ImportError::Format(
                "this is already a superpass-trace database".into(),
            ))
        }
        Format::Perfetto => {
            perfetto::decode(buf, &mut ev).map_err(|e| ImportError::Format(e.to_string()))?
        }
        Format::FtraceText => {
            // Invalid UTF-8 bytes become U+FFFD; the lines that hold them then fail to parse
            // and are counted corrupt.
            let text = String::from_utf8_lossy(buf);
            ftrace_text::parse(&text, &mut ev);
            if ev.sched.is_empty() && ev.slices.is_empty() && ev.superpass.is_empty() {
                return Err(ImportError::Format(format!(
                    "no ftrace events found in text input ({} unparsed lines)",
                    ev.diag.corrupt
                )));
            }
        }
    }
    Ok((format, ev))
}

/// Decodes `buf` and writes every table into `conn`, which must be empty.
pub fn import_into(buf: &[u8], conn: &mut Connection) -> Result<Summary, ImportError> {
    let timing = std::env::var_os("SUPERPASS_TRACE_TIMING").is_some();
    let t = std::time::Instant::now();
    let (format, ev) = decode(buf)?;
    let t_decode = t.elapsed();
    let m: Model = model::build(ev);
    let t_model = t.elapsed();
    schema::create(conn)?;
    schema::write(conn, &m)?;
    if timing {
        eprintln!(
            "timing: decode {:?}, model {:?}, sqlite {:?}",
            t_decode,
            t_model - t_decode,
            t.elapsed() - t_model
        );
    }
    Ok(Summary {
        format,
        events: m.event_count,
        slices: m.slices.len(),
        sched: m.sched.len(),
        thread_state: m.thread_state.len(),
        threads: m.threads.len(),
        superpass: m.superpass.len(),
        diag: m.diag,
    })
}

/// Sets pragmas for a one-shot bulk load (no journal: a failed import leaves a file to delete).
fn bulk_pragmas(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "PRAGMA page_size = 65536; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; \
         PRAGMA locking_mode = EXCLUSIVE; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -131072;",
    )
}

/// Imports the trace at `input` into a new database file at `output` (replacing it).
pub fn import_file(input: &Path, output: &Path) -> Result<Summary, ImportError> {
    let buf = std::fs::read(input)?;
    if output.exists() {
        std::fs::remove_file(output)?;
    }
    let mut conn = Connection::open(output)?;
    bulk_pragmas(&conn)?;
    let r = import_into(&buf, &mut conn);
    if r.is_err() {
        drop(conn);
        let _ = std::fs::remove_file(output);
    }
    r
}

/// Imports `buf` into a new in-memory database.
pub fn import_in_memory(buf: &[u8]) -> Result<(Connection, Summary), ImportError> {
    let mut conn = Connection::open_in_memory()?;
    bulk_pragmas(&conn)?;
    let s = import_into(buf, &mut conn)?;
    Ok((conn, s))
}

/// Opens a trace of any supported format as a database: a `.db` read-only, anything else
/// imported into memory.
pub fn open_any(path: &Path) -> Result<(Connection, Option<Summary>), ImportError> {
    let buf = std::fs::read(path)?;
    if detect(&buf) == Format::Sqlite {
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        return Ok((conn, None));
    }
    let (conn, s) = import_in_memory(&buf)?;
    Ok((conn, Some(s)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_formats() {
        assert_eq!(detect(b"SQLite format 3\0rest"), Format::Sqlite);
        assert_eq!(detect(b"# tracer: nop\n"), Format::FtraceText);
        assert_eq!(detect(b"\n# tracer: nop\n"), Format::FtraceText);
        assert_eq!(
            detect(&[0x0a, 0x05, 0x50, 0x01, 0x00, 0x9f, 0x00]),
            Format::Perfetto
        );
        assert_eq!(detect(&[0xff, 0x00]), Format::Perfetto);
    }
}
