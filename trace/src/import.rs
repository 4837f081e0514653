//! Detects a trace's format, decodes it and writes the SQLite database.

use std::fmt;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, MAIN_DB};

use crate::btree::Sink;
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
    /// How the tables were written.
    pub writer: Writer,
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
        if let Writer::Sql(why) = &self.writer {
            write!(f, "\n  written with SQL inserts: {why}")?;
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

/// How an import wrote the tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Writer {
    /// The big tables laid out as b-tree pages directly (`btree.rs`): the normal path.
    Pages,
    /// SQL INSERTs through SQLite, for the reason given (requested, or the page writer
    /// declined this trace or schema).
    Sql(String),
}

fn timing() -> bool {
    std::env::var_os("SUPERPASS_TRACE_TIMING").is_some()
}

/// Decodes `buf` and builds the rows.
fn decode_model(buf: &[u8]) -> Result<(Format, Model), ImportError> {
    let t = std::time::Instant::now();
    let (format, ev) = decode(buf)?;
    let t_decode = t.elapsed();
    let m = model::build(ev);
    if timing() {
        eprintln!(
            "timing: decode {:?}, model {:?}",
            t_decode,
            t.elapsed() - t_decode
        );
    }
    Ok((format, m))
}

fn summary(format: Format, m: &Model, writer: Writer) -> Summary {
    Summary {
        format,
        events: m.event_count,
        slices: m.slices.len(),
        sched: m.sched.len(),
        thread_state: m.thread_state.len(),
        threads: m.threads.len(),
        superpass: m.superpass.len(),
        diag: m.diag.clone(),
        writer,
    }
}

/// Writes `m` into `conn` (empty) with SQL INSERTs.
fn write_sql(conn: &mut Connection, m: &Model) -> Result<(), ImportError> {
    let t = std::time::Instant::now();
    schema::create(conn)?;
    schema::write(conn, m)?;
    if timing() {
        eprintln!("timing: sqlite inserts {:?}", t.elapsed());
    }
    Ok(())
}

/// Builds the database image with the page writer, or says why it declined.
fn build_image(m: &Model, sink: Option<Sink>) -> Result<Result<Vec<u8>, String>, ImportError> {
    let t = std::time::Instant::now();
    let img = schema::image(m, sink)?.map_err(|why| why.0);
    if timing() {
        eprintln!("timing: database image {:?}", t.elapsed());
    }
    Ok(img)
}

/// Decodes `buf` and writes every table into `conn`, which must be empty, with SQL INSERTs
/// (the reference writer; [`import_in_memory`] and [`import_file`] lay out pages directly).
pub fn import_into(buf: &[u8], conn: &mut Connection) -> Result<Summary, ImportError> {
    let (format, m) = decode_model(buf)?;
    write_sql(conn, &m)?;
    Ok(summary(format, &m, Writer::Sql("requested".into())))
}

/// Sets pragmas for a one-shot bulk load (no journal: a failed import leaves a file to delete).
fn bulk_pragmas(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "PRAGMA page_size = 65536; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; \
         PRAGMA locking_mode = EXCLUSIVE; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -131072;",
    )
}

/// The file an import writes before renaming it to `output`.
fn partial_path(output: &Path) -> PathBuf {
    let mut name = output.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".partial-{}", std::process::id()));
    output.with_file_name(name)
}

/// Writes the database for `m` to the new file `path` and flushes it to disk.
///
/// The page writer's pages go to a writer thread over a bounded channel as they are built;
/// it writes them and flushes every few MiB, so most of the disk writing overlaps the page
/// building and the final `fsync` has little left to do.
fn write_file(m: &Model, path: &Path) -> Result<Writer, ImportError> {
    let file = std::fs::File::create(path)?;
    let (tx, rx) = std::sync::mpsc::sync_channel::<(u64, Vec<u8>)>(8);
    let writer = std::thread::spawn(move || -> std::io::Result<std::fs::File> {
        let mut f = file;
        let mut unsynced = 0;
        for (offset, chunk) in rx {
            f.seek(SeekFrom::Start(offset))?;
            f.write_all(&chunk)?;
            unsynced += chunk.len();
            if unsynced >= 4 << 20 {
                f.sync_data()?;
                unsynced = 0;
            }
        }
        Ok(f)
    });
    let sink: Sink = Box::new(move |offset, chunk| {
        // A failed writer has hung up; its error is reported when it is joined.
        let _ = tx.send((offset, chunk));
    });
    let built = build_image(m, Some(sink));
    // The sink (and so the channel) is gone once the image is: the writer has finished.
    let written = writer
        .join()
        .unwrap_or_else(|_| Err(std::io::Error::other("writer thread panicked")));
    match built? {
        Ok(prefix) => {
            let t = std::time::Instant::now();
            let mut f = written?;
            f.seek(SeekFrom::Start(0))?;
            f.write_all(&prefix)?;
            f.sync_all()?;
            if timing() {
                eprintln!("timing: final write and fsync {:?}", t.elapsed());
            }
            Ok(Writer::Pages)
        }
        Err(why) => {
            drop(written);
            std::fs::remove_file(path)?;
            let mut conn = Connection::open(path)?;
            bulk_pragmas(&conn)?;
            write_sql(&mut conn, m)?;
            conn.close().map_err(|(_, e)| e)?;
            // synchronous = OFF: SQLite did not flush the file.
            std::fs::OpenOptions::new()
                .write(true)
                .open(path)?
                .sync_all()?;
            Ok(Writer::Sql(why))
        }
    }
}

/// Flushes the directory entry of `path` (a rename) to disk, where the platform allows it.
fn sync_parent(path: &Path) {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Imports the trace at `input` into a new database file at `output` (replacing it).
///
/// The database is written to `<output>.partial-<pid>` beside it, flushed to disk
/// (`fsync`), and renamed over `output` only when complete, so `output` never holds a
/// partial database. On any error the partial file is deleted and an existing `output` is
/// left as it was.
pub fn import_file(input: &Path, output: &Path) -> Result<Summary, ImportError> {
    let buf = std::fs::read(input)?;
    let (format, m) = decode_model(&buf)?;
    drop(buf);
    let partial = partial_path(output);
    let r = write_file(&m, &partial).and_then(|w| {
        std::fs::rename(&partial, output)?;
        sync_parent(output);
        Ok(w)
    });
    match r {
        Ok(writer) => Ok(summary(format, &m, writer)),
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            Err(e)
        }
    }
}

/// Imports `buf` into a new in-memory database.
pub fn import_in_memory(buf: &[u8]) -> Result<(Connection, Summary), ImportError> {
    let (format, m) = decode_model(buf)?;
    let mut conn = Connection::open_in_memory()?;
    let writer = match build_image(&m, None)? {
        Ok(img) => {
            conn.deserialize_read_exact(MAIN_DB, &img[..], img.len(), false)?;
            Writer::Pages
        }
        Err(why) => {
            bulk_pragmas(&conn)?;
            write_sql(&mut conn, &m)?;
            Writer::Sql(why)
        }
    };
    Ok((conn, summary(format, &m, writer)))
}

/// Imports `buf` into a new in-memory database with SQL INSERTs only: the reference the
/// page writer is tested against.
pub fn import_in_memory_sql(buf: &[u8]) -> Result<(Connection, Summary), ImportError> {
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
