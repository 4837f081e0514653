//! Detects a trace's format, decodes it and writes the SQLite database.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use crate::events::{Diagnostics, Events};
use crate::model::{self, Model};
use crate::{db_writer, ftrace_text, perfetto, schema};

pub use crate::format::Format;

/// Why a trace could not be imported.
#[derive(Debug)]
pub enum ImportError {
    /// Reading or writing a file failed.
    Io(std::io::Error),
    /// The bytes are not a trace this tool reads.
    Format(String),
    /// SQLite failed.
    Db(rusqlite::Error),
    /// Refused: writing the output would destroy data.
    Refused(String),
    /// Any of the above, for a named file of a detected format.
    File {
        /// The file.
        path: PathBuf,
        /// Its format (outside in: `gzip, Perfetto protobuf`), when detected.
        formats: Vec<Format>,
        /// What went wrong.
        err: Box<ImportError>,
    },
}

impl ImportError {
    /// This error, said of the file at `path` whose content is `formats`.
    pub fn in_file(self, path: &Path, formats: &[Format]) -> ImportError {
        match self {
            e @ ImportError::File { .. } => e,
            e => ImportError::File {
                path: path.to_owned(),
                formats: formats.to_vec(),
                err: Box::new(e),
            },
        }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportError::Io(e) => write!(f, "{e}"),
            ImportError::Format(e) => write!(f, "{e}"),
            ImportError::Db(e) => write!(f, "database: {e}"),
            ImportError::Refused(e) => write!(f, "{e}"),
            ImportError::File { path, formats, err } => {
                write!(f, "{}", path.display())?;
                if !formats.is_empty() {
                    let names: Vec<String> = formats.iter().map(|f| f.to_string()).collect();
                    write!(f, " ({})", names.join(" > "))?;
                }
                write!(f, ": {err}")
            }
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
    /// Input format: the trace's own (inside any container).
    pub format: Format,
    /// Containers opened to reach it, outside in (empty for a bare trace).
    pub containers: Vec<Format>,
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
    /// Binder transactions read, by kind.
    pub binder: crate::binder::Counts,
    /// `binder_wait` rows: synchronous calls matched to their replies.
    pub binder_waits: usize,
    /// Skipped and repaired input.
    pub diag: Diagnostics,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in &self.containers {
            write!(f, "{c} > ")?;
        }
        write!(
            f,
            "{}: {} events -> {} slices, {} sched, {} thread_state, {} threads, {} superpass",
            self.format,
            self.events,
            self.slices,
            self.sched,
            self.thread_state,
            self.threads,
            self.superpass
        )?;
        // Only a trace with binder events gets this line, so others print as before.
        let b = &self.binder;
        if b.sync_calls + b.oneway_calls + b.replies > 0 {
            write!(
                f,
                "\n  binder: {} synchronous calls -> {} binder_wait rows, {} one-way calls, {} \
                 replies",
                b.sync_calls, self.binder_waits, b.oneway_calls, b.replies
            )?;
        }
        let d = &self.diag;
        let issues = [
            ("corrupt", d.corrupt),
            ("NaN counter values (stored as NULL)", d.nan_counters),
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
        if self.events == 0 {
            write!(
                f,
                "\n  warning: no events imported; what the trace holds is listed below"
            )?;
        }
        if d.truncated {
            write!(
                f,
                "\n  input truncated: the partial last packet was dropped"
            )?;
        }
        if !d.skipped.is_empty() {
            let items = if d.unknown == 1 { "item" } else { "items" };
            write!(
                f,
                "\n  {} {items} not imported (table `stats`), by kind:",
                d.unknown
            )?;
            let mut kinds: Vec<(&String, &u64)> = d.skipped.iter().collect();
            kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            for (kind, n) in kinds {
                write!(f, "\n    {n:>9}  {kind}")?;
            }
        }
        for n in &d.notes {
            write!(f, "\n  note: {n}")?;
        }
        Ok(())
    }
}

/// Guesses the format from the first bytes (see [`crate::format::detect`]).
pub fn detect(buf: &[u8]) -> Format {
    crate::format::detect(buf)
}

/// Decodes a trace (Perfetto or text, possibly in a container) into events; returns the
/// containers opened (outside in) and the trace's own format.
pub fn decode(buf: &[u8]) -> Result<(Vec<Format>, Events), ImportError> {
    let mut ev = Events::default();
    let (mut formats, data) =
        crate::format::unpack(buf).map_err(|(formats, e)| ImportError::File {
            path: PathBuf::new(),
            formats,
            err: Box::new(ImportError::Format(e)),
        })?;
    let format = formats.pop().unwrap_or(Format::Perfetto);
    let wrap = |e: String| {
        let mut all = formats.clone();
        all.push(format);
        ImportError::File {
            path: PathBuf::new(),
            formats: all,
            err: Box::new(ImportError::Format(e)),
        }
    };
    match format {
        Format::Sqlite => {
            return Err(wrap("this is already a superpass-trace database".into()));
        }
        Format::FtraceText => {
            // Invalid UTF-8 bytes become U+FFFD; a line holding them still parses.
            let text = String::from_utf8_lossy(&data);
            ftrace_text::parse(&text, &mut ev);
            if ev.sched.is_empty()
                && ev.slices.is_empty()
                && ev.superpass.is_empty()
                && ev.binder.is_empty()
            {
                return Err(wrap(format!(
                    "no ftrace events found in text input ({} unparsed lines)",
                    ev.diag.corrupt
                )));
            }
        }
        _ => perfetto::decode(&data, &mut ev).map_err(|e| wrap(e.to_string()))?,
    }
    formats.push(format);
    Ok((formats, ev))
}

fn timing() -> bool {
    std::env::var_os("SUPERPASS_TRACE_TIMING").is_some()
}

/// The process's peak resident memory so far (Linux `VmHWM`), for the timing lines: the
/// import's memory goal is a peak.
fn peak_rss() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .map(|v| v.trim().to_owned())
        })
        .unwrap_or_else(|| "n/a".to_owned())
}

/// Decodes `buf`; the formats are outside in, the trace's own last.
fn decode_timed(buf: &[u8]) -> Result<(Vec<Format>, Events), ImportError> {
    let t = std::time::Instant::now();
    let r = decode(buf)?;
    if timing() {
        eprintln!("timing: decode {:?} (peak RSS {})", t.elapsed(), peak_rss());
    }
    Ok(r)
}

/// Bytes read at a time from a bare Perfetto trace file.
const CHUNK: usize = 256 << 10;

/// Decodes the trace in the file at `path`; the formats are outside in, the trace's own
/// last. A bare Perfetto trace is decoded as it is read, [`CHUNK`] bytes at a time, so that
/// the file and its events are not in memory at once; any other format is read whole.
fn decode_file(path: &Path) -> Result<(Vec<Format>, Events), ImportError> {
    let t = std::time::Instant::now();
    let io = |e: std::io::Error| ImportError::Io(e).in_file(path, &[]);
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut buf = Vec::new();
    read_more(&mut file, &mut buf, CHUNK).map_err(io)?;
    if buf.len() < CHUNK || !crate::format::is_bare_perfetto(&buf) {
        file.read_to_end(&mut buf).map_err(io)?;
        return decode_timed(&buf).map_err(|e| name_file(e, path, &buf));
    }
    let mut ev = Events::default();
    decode_chunks(&mut file, buf, CHUNK, &mut ev).map_err(|e| match e {
        ImportError::Format(_) => ImportError::File {
            path: path.to_owned(),
            formats: vec![Format::Perfetto],
            err: Box::new(e),
        },
        e => e.in_file(path, &[Format::Perfetto]),
    })?;
    if timing() {
        eprintln!(
            "timing: decode {:?} (read {} KiB at a time; peak RSS {})",
            t.elapsed(),
            CHUNK >> 10,
            peak_rss()
        );
    }
    Ok((vec![Format::Perfetto], ev))
}

/// Appends up to `n` more bytes of `r` to `buf`; whether `r` ended before that.
fn read_more(r: &mut impl Read, buf: &mut Vec<u8>, n: usize) -> std::io::Result<bool> {
    let got = r.by_ref().take(n as u64).read_to_end(buf)?;
    Ok(got < n)
}

/// Decodes the Perfetto trace that starts with `buf` and continues in `r`, reading `chunk`
/// bytes at a time.
fn decode_chunks(
    r: &mut impl Read,
    mut buf: Vec<u8>,
    chunk: usize,
    ev: &mut Events,
) -> Result<(), ImportError> {
    let mut s = perfetto::StreamDecoder::default();
    let format = |e: perfetto::DecodeError| ImportError::Format(e.to_string());
    loop {
        // Always read: the bytes left over are a field that was not whole.
        let eof = read_more(r, &mut buf, chunk)?;
        let used = s.feed(&buf, eof, ev).map_err(format)?;
        buf.drain(..used);
        if eof {
            break;
        }
    }
    s.finish().map_err(format)
}

/// Builds the rows from `ev`, which it frees as it goes.
fn model_timed(ev: Events) -> Model {
    let t = std::time::Instant::now();
    let m = model::build(ev);
    if timing() {
        eprintln!("timing: model {:?} (peak RSS {})", t.elapsed(), peak_rss());
    }
    m
}

fn summary(mut formats: Vec<Format>, m: &Model) -> Summary {
    let format = formats.pop().unwrap_or(Format::Perfetto);
    Summary {
        format,
        containers: formats,
        events: m.event_count,
        slices: m.slices.len(),
        sched: m.sched.len(),
        thread_state: m.thread_state_len(),
        threads: m.threads.len(),
        superpass: m.superpass.len(),
        binder: m.binder_counts,
        binder_waits: m.binder_waits.len(),
        diag: m.diag.clone(),
    }
}

/// Writes `m` into `conn` (empty) with SQL INSERTs; `m` is freed table by table as its rows
/// are written, which keeps the peak memory of an import down.
fn write_sql(conn: &mut Connection, m: Model) -> Result<(), ImportError> {
    let t = std::time::Instant::now();
    schema::create(conn)?;
    db_writer::write(conn, m)?;
    if timing() {
        eprintln!(
            "timing: sqlite inserts {:?} (peak RSS {})",
            t.elapsed(),
            peak_rss()
        );
    }
    Ok(())
}

/// Decodes `buf` and writes every table into `conn`, which must be empty.
pub fn import_into(buf: &[u8], conn: &mut Connection) -> Result<Summary, ImportError> {
    let (formats, ev) = decode_timed(buf)?;
    let m = model_timed(ev);
    let s = summary(formats, &m);
    write_sql(conn, m)?;
    Ok(s)
}

/// Sets pragmas for a one-shot bulk load (no journal: a failed import leaves a file to delete).
fn bulk_pragmas(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "PRAGMA page_size = 65536; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; \
         PRAGMA locking_mode = EXCLUSIVE; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -131072;",
    )
}

/// SQLite's page cache, in KiB, when an import writes a file: a fixed part of the import's
/// memory, whatever the trace's size.
pub const FILE_CACHE_KIB: u32 = 2048;

/// The file an import writes before renaming it to `output`.
fn partial_path(output: &Path) -> PathBuf {
    let mut name = output.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".partial-{}", std::process::id()));
    output.with_file_name(name)
}

/// Writes the database for `m` to the new file `path` and flushes it to disk.
fn write_file(m: Model, path: &Path) -> Result<(), ImportError> {
    let mut conn = Connection::open(path)?;
    bulk_pragmas(&conn)?;
    // A small page cache: SQLite writes pages to the file as they fill, instead of holding
    // the whole database in memory until the commit (no journal, so nothing else is
    // written). Measured no slower: the rows are appended, and the pages an append needs
    // stay in the cache.
    conn.execute_batch(&format!("PRAGMA cache_size = -{FILE_CACHE_KIB}"))?;
    write_sql(&mut conn, m)?;
    conn.close().map_err(|(_, e)| e)?;
    // synchronous = OFF: SQLite did not flush the file.
    let t = std::time::Instant::now();
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)?
        .sync_all()?;
    if timing() {
        eprintln!("timing: fsync {:?}", t.elapsed());
    }
    Ok(())
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

/// Refuses an output that would destroy data: the input itself (under any name), or an
/// existing file that is not a SQLite database.
fn check_output(input: &Path, output: &Path) -> Result<(), ImportError> {
    let out_meta = match std::fs::metadata(output) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    if out_meta.is_dir() {
        return Err(ImportError::Refused(format!(
            "output {} is a directory",
            output.display()
        )));
    }
    if let Ok(in_meta) = std::fs::metadata(input) {
        if same_file(&in_meta, &out_meta) {
            return Err(ImportError::Refused(format!(
                "output {} is the input trace; refusing to overwrite it (choose another -o)",
                output.display()
            )));
        }
    }
    let mut head = [0u8; 16];
    let n = std::io::Read::read(&mut std::fs::File::open(output)?, &mut head)?;
    if n > 0 && detect(&head[..n]) != Format::Sqlite {
        return Err(ImportError::Refused(format!(
            "output {} exists and is not a SQLite database; refusing to replace it \
             (delete it or choose another -o)",
            output.display()
        )));
    }
    Ok(())
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, _: &std::fs::Metadata) -> bool {
    false
}

/// Reads `path`, naming it in the error.
fn read(path: &Path) -> Result<Vec<u8>, ImportError> {
    std::fs::read(path).map_err(|e| ImportError::Io(e).in_file(path, &[]))
}

/// Names `path` (and its format, when known) in `e`.
fn name_file(e: ImportError, path: &Path, buf: &[u8]) -> ImportError {
    match e {
        ImportError::File {
            path: p,
            formats,
            err,
        } if p.as_os_str().is_empty() => ImportError::File {
            path: path.to_owned(),
            formats,
            err,
        },
        e @ ImportError::File { .. } => e,
        e => e.in_file(path, &[detect(buf)]),
    }
}

/// Imports the trace at `input` into a new database file at `output` (replacing an older
/// database there).
///
/// Refused: an `output` that is the input file, or an existing file that is not a SQLite
/// database. The database is written to `<output>.partial-<pid>` beside it, flushed to
/// disk (`fsync`), and renamed over `output` only when complete, so `output` never holds a
/// partial database. On any error the partial file is deleted and an existing `output` is
/// left as it was.
pub fn import_file(input: &Path, output: &Path) -> Result<Summary, ImportError> {
    check_output(input, output)?;
    let (formats, ev) = decode_file(input)?;
    let m = model_timed(ev);
    let s = summary(formats, &m);
    let partial = partial_path(output);
    let r = write_file(m, &partial).and_then(|()| {
        std::fs::rename(&partial, output)?;
        sync_parent(output);
        Ok(())
    });
    match r {
        Ok(()) => Ok(s),
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            Err(e.in_file(output, &[]))
        }
    }
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
    let buf = read(path)?;
    if detect(&buf) == Format::Sqlite {
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| ImportError::Db(e).in_file(path, &[Format::Sqlite]))?;
        return Ok((conn, None));
    }
    let (conn, s) = import_in_memory(&buf).map_err(|e| name_file(e, path, &buf))?;
    Ok((conn, Some(s)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What decoding `bytes` gives, whole or read `chunk` bytes at a time.
    fn decoded(bytes: &[u8], chunk: Option<usize>) -> String {
        let mut ev = Events::default();
        let r = match chunk {
            None => perfetto::decode(bytes, &mut ev).map_err(|e| e.to_string()),
            Some(n) => {
                let mut r = bytes;
                decode_chunks(&mut r, Vec::new(), n, &mut ev).map_err(|e| e.to_string())
            }
        };
        format!("{r:?}\n{ev:?}")
    }

    #[test]
    fn a_trace_read_in_chunks_decodes_as_the_whole() {
        let (trace, _) = crate::synth::contended_trace(200 << 10, 2);
        // The offset of each top-level field, to damage the framing between packets.
        let mut starts = Vec::new();
        let mut fields = crate::wire::Fields::new(&trace);
        while fields.next().is_some() {
            starts.push(fields.position());
        }
        let mid = starts[starts.len() / 2];
        let framing_error = [&trace[..mid], &[0x00, 0x01], &trace[mid..]].concat();
        let cases: [(&str, &[u8]); 5] = [
            ("whole", &trace),
            ("truncated", &trace[..trace.len() - 100]),
            ("framing error", &framing_error),
            ("not a trace", &[0x0a, 0xff, 0xff, 0xff, 0x0f, 1, 2]),
            ("empty", &[]),
        ];
        for (what, bytes) in cases {
            let whole = decoded(bytes, None);
            for chunk in [1, 7, 4096, 65536, trace.len() + 1] {
                assert_eq!(decoded(bytes, Some(chunk)), whole, "{what}, chunk {chunk}");
            }
        }
        assert!(decoded(&trace, None).starts_with("Ok"));
        assert!(decoded(&framing_error, None).contains("framing error after"));
        assert!(decoded(&trace[..trace.len() - 100], None).contains("truncated: true"));
    }

    #[test]
    fn a_file_imports_the_same_read_in_chunks_or_whole() {
        let dir = std::env::temp_dir().join(format!("sp-chunks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // Bigger than one chunk, so that the file is read in pieces.
        let (trace, events) = crate::synth::contended_trace(CHUNK * 5 / 2, 2);
        assert!(crate::format::is_bare_perfetto(&trace[..CHUNK]));
        let input = dir.join("t.pftrace");
        std::fs::write(&input, &trace).unwrap();
        let output = dir.join("t.db");
        let from_file = import_file(&input, &output).unwrap();
        let (conn, in_memory) = import_in_memory(&trace).unwrap();
        assert_eq!(from_file.events, events);
        assert_eq!(format!("{from_file}"), format!("{in_memory}"));
        let file = Connection::open(&output).unwrap();
        let rows = |c: &Connection| -> Vec<String> {
            let mut st = c
                .prepare("SELECT ts, dur, utid, state FROM thread_state ORDER BY id")
                .unwrap();
            st.query_map([], |r| {
                Ok(format!(
                    "{} {} {} {}",
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, String>(3)?
                ))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
        };
        assert_eq!(rows(&file), rows(&conn));
        std::fs::remove_dir_all(&dir).ok();
    }
}
