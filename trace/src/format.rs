//! What a trace file is, told by its content (never its name), and the trace inside a
//! container: gzip, atrace's compressed `ctrace`, systrace HTML.

use std::borrow::Cow;
use std::fmt;

use crate::ftrace_text;

/// What the bytes of a file are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Perfetto protobuf (`.pftrace`, `.perfetto-trace`).
    Perfetto,
    /// Kernel text ftrace: the tracefs `trace` file, `atrace` or `trace-cmd report` output.
    FtraceText,
    /// A database this tool already wrote.
    Sqlite,
    /// gzip-compressed (holding one of the other formats).
    Gzip,
    /// atrace's compressed output (`atrace -z`, `.ctrace`): `TRACE:` then zlib.
    Ctrace,
    /// systrace's HTML report with the trace text (and a process dump) inside.
    SystraceHtml,
    /// A zip archive (a bugreport, for example): not read directly.
    Zip,
    /// trace-cmd's binary `trace.dat`: not read directly.
    TraceCmdDat,
    /// Chrome's JSON trace format: not read.
    Json,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Perfetto => "Perfetto protobuf",
            Format::FtraceText => "ftrace text",
            Format::Sqlite => "SQLite database",
            Format::Gzip => "gzip",
            Format::Ctrace => "compressed atrace (ctrace)",
            Format::SystraceHtml => "systrace HTML",
            Format::Zip => "zip archive",
            Format::TraceCmdDat => "trace-cmd binary (trace.dat)",
            Format::Json => "JSON trace",
        })
    }
}

const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";
const GZIP_MAGIC: &[u8] = b"\x1f\x8b";
const ZIP_MAGIC: &[u8] = b"PK\x03\x04";
const ZIP_EMPTY_MAGIC: &[u8] = b"PK\x05\x06";
const TRACE_CMD_MAGIC: &[u8] = b"\x17\x08Dtracing";
/// `atrace` prints this line before the trace; `-z` deflates what follows.
const ATRACE_HEADER: &[u8] = b"TRACE:\n";

/// Where `atrace`'s `TRACE:` line ends, if it is near the start (after atrace's own
/// progress lines).
fn after_atrace_header(buf: &[u8]) -> Option<usize> {
    let head = &buf[..buf.len().min(1024)];
    let at = head
        .windows(ATRACE_HEADER.len())
        .position(|w| w == ATRACE_HEADER)?;
    // Only at the start of a line, and everything before it is text.
    let before = &head[..at];
    let text = before
        .iter()
        .all(|&b| b == b'\n' || b == b'\r' || (0x20..0x7f).contains(&b));
    (text && (at == 0 || before.ends_with(b"\n"))).then_some(at + ATRACE_HEADER.len())
}

fn first_non_space(buf: &[u8]) -> &[u8] {
    let skip = buf
        .iter()
        .take(4096)
        .take_while(|b| b.is_ascii_whitespace())
        .count();
    &buf[skip..]
}

/// Tells the format from the first bytes.
pub fn detect(buf: &[u8]) -> Format {
    let lead = first_non_space(buf);
    let lower: Vec<u8> = lead.iter().take(16).map(u8::to_ascii_lowercase).collect();
    if buf.starts_with(SQLITE_MAGIC) {
        Format::Sqlite
    } else if buf.starts_with(GZIP_MAGIC) {
        Format::Gzip
    } else if buf.starts_with(ZIP_MAGIC) || buf.starts_with(ZIP_EMPTY_MAGIC) {
        Format::Zip
    } else if buf.starts_with(TRACE_CMD_MAGIC) {
        Format::TraceCmdDat
    } else if let Some(at) = after_atrace_header(buf) {
        // zlib's first byte is 0x78 for the default window; anything else is plain text.
        if buf.get(at) == Some(&0x78) {
            Format::Ctrace
        } else {
            Format::FtraceText
        }
    } else if lower.starts_with(b"<!doctype html") || lower.starts_with(b"<html") {
        Format::SystraceHtml
    } else if buf.first() == Some(&0x0a) && !starts_like_text(buf) {
        Format::Perfetto
    } else if (lead.starts_with(b"{") || lead.starts_with(b"["))
        && ftrace_text::looks_like_text(buf)
    {
        Format::Json
    } else if ftrace_text::looks_like_text(buf) {
        Format::FtraceText
    } else {
        Format::Perfetto
    }
}

/// A text trace may begin with a blank line (0x0a, also Perfetto's first tag byte); a real
/// Perfetto packet is followed by a length and binary data.
/// How much of a file [`is_bare_perfetto`] needs.
pub const HEAD_LEN: usize = 8192;

/// Whether a file whose first bytes are `head` is a bare (uncompressed) Perfetto trace, as
/// [`detect`] of the whole file would say. Told from the first [`HEAD_LEN`] bytes alone, so
/// that the trace can be decoded as it is read; `false` for a shorter `head`, and when the
/// answer would need more of the file (it may look like text).
pub fn is_bare_perfetto(head: &[u8]) -> bool {
    // A first byte 0x0a (`Trace.packet`) that is not followed by text decides `detect`
    // once the magic numbers, the atrace header and the HTML lead (after at most 4 KiB of
    // white space) are ruled out, and those lie within the first HEAD_LEN bytes.
    head.len() >= HEAD_LEN
        && head[0] == 0x0a
        && !starts_like_text(head)
        && detect(head) == Format::Perfetto
}

fn starts_like_text(buf: &[u8]) -> bool {
    let rest = &buf[1..buf.len().min(256)];
    ftrace_text::looks_like_text(rest)
        && rest
            .iter()
            .all(|&b| b == b'\n' || b == b'\t' || (0x20..0x7f).contains(&b))
}

/// Why a file's trace could not be reached: the formats seen (outside in) and the reason.
pub type Unreadable = (Vec<Format>, String);

/// Inflated data larger than this is refused (a decompression bomb, or not a trace).
const MAX_INFLATED: usize = 4 << 30;

/// The trace inside `buf`: containers are opened (gzip, ctrace, systrace HTML, at most
/// two levels, e.g. a gzipped HTML). Returns the formats from the outside in, the last
/// being the trace's own, and its bytes. Unreadable formats are an error that says what
/// the file is and what to do, with the formats seen so far.
pub fn unpack(buf: &[u8]) -> Result<(Vec<Format>, Cow<'_, [u8]>), Unreadable> {
    let mut formats = Vec::new();
    let mut data = Cow::Borrowed(buf);
    for _ in 0..3 {
        let f = detect(&data);
        formats.push(f);
        let inner = open(f, &data);
        match inner {
            Ok(Some(inner)) => data = Cow::Owned(inner),
            Ok(None) => return Ok((formats, data)),
            Err(e) => return Err((formats, e)),
        }
    }
    Err((formats, "containers nested more than twice".into()))
}

/// The content of container `f`; `None` if `f` is a trace format, an error if it is not
/// readable.
fn open(f: Format, data: &[u8]) -> Result<Option<Vec<u8>>, String> {
    Ok(Some(match f {
        Format::Perfetto | Format::FtraceText | Format::Sqlite => return Ok(None),
        Format::Gzip => gunzip(data)?,
        Format::Ctrace => {
            let at = after_atrace_header(data).unwrap_or(0);
            miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(&data[at..], MAX_INFLATED)
                .map_err(|e| format!("the zlib data after `TRACE:` does not inflate: {e:?}"))?
        }
        Format::SystraceHtml => systrace_html(data)?,
        Format::Zip => {
            return Err(
                "a zip archive is not a trace: unzip it and import the trace inside \
                            (a bugreport keeps Perfetto traces under \
                            FS/data/misc/perfetto-traces/)"
                    .into(),
            )
        }
        Format::TraceCmdDat => {
            return Err("trace-cmd's binary trace.dat is not read: convert it with \
                            `trace-cmd report -i trace.dat > trace.txt` and import the text"
                .into())
        }
        Format::Json => {
            return Err("Chrome JSON traces are not read: record a Perfetto trace \
                            (protobuf) or ftrace text instead"
                .into())
        }
    }))
}

/// Inflates a gzip member (RFC 1952): header, raw deflate, trailer.
fn gunzip(buf: &[u8]) -> Result<Vec<u8>, String> {
    const FHCRC: u8 = 2;
    const FEXTRA: u8 = 4;
    const FNAME: u8 = 8;
    const FCOMMENT: u8 = 16;
    let bad = || "gzip header is damaged".to_string();
    if buf.len() < 18 || buf[2] != 8 {
        return Err(bad());
    }
    let flags = buf[3];
    let mut at = 10;
    if flags & FEXTRA != 0 {
        let n = u16::from_le_bytes([
            *buf.get(at).ok_or_else(bad)?,
            *buf.get(at + 1).ok_or_else(bad)?,
        ]);
        at += 2 + n as usize;
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            let end = buf
                .get(at..)
                .ok_or_else(bad)?
                .iter()
                .position(|&b| b == 0)
                .ok_or_else(bad)?;
            at += end + 1;
        }
    }
    if flags & FHCRC != 0 {
        at += 2;
    }
    let body = buf.get(at..).ok_or_else(bad)?;
    miniz_oxide::inflate::decompress_to_vec_with_limit(body, MAX_INFLATED)
        .map_err(|e| format!("gzip data does not inflate (truncated or damaged): {e:?}"))
}

/// The ftrace text of a systrace HTML report: the `trace-data` script blocks that hold
/// text (JSON blocks, from Chrome, are left out), or the old `linuxPerfData` JavaScript
/// string. The process dump block, when present, follows the ftrace text.
fn systrace_html(buf: &[u8]) -> Result<Vec<u8>, String> {
    const OPEN: &str = "<script class=\"trace-data\" type=\"application/text\">";
    const CLOSE: &str = "</script>";
    let html = String::from_utf8_lossy(buf);
    let mut out = String::new();
    let mut rest: &str = &html;
    while let Some(p) = rest.find(OPEN) {
        let body = &rest[p + OPEN.len()..];
        let end = body.find(CLOSE).unwrap_or(body.len());
        let block = body[..end].trim_start_matches(['\n', '\r']);
        let lead = block.trim_start();
        if !(lead.starts_with('{') || lead.starts_with('[')) {
            out.push_str(block);
            if !out.ends_with('\n') {
                out.push('\n');
            }
        }
        rest = &body[end..];
    }
    if out.is_empty() {
        if let Some(p) = html.find("linuxPerfData = \"") {
            // Each line of the JavaScript string ends in `\n\`; the last in `\n";`.
            for line in html[p + "linuxPerfData = \"".len()..].lines() {
                let done = line.trim_end().ends_with("\";");
                let text = line
                    .trim_end()
                    .trim_end_matches("\";")
                    .trim_end_matches('\\')
                    .trim_end_matches("\\n");
                out.push_str(&text.replace("\\\"", "\"").replace("\\\\", "\\"));
                out.push('\n');
                if done {
                    break;
                }
            }
        }
    }
    if out.trim().is_empty() {
        return Err(
            "HTML without systrace trace data (no `trace-data` block or \
                    `linuxPerfData`)"
                .into(),
        );
    }
    Ok(out.into_bytes())
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
        assert_eq!(detect(b"\x1f\x8b\x08\0"), Format::Gzip);
        assert_eq!(detect(b"PK\x03\x04...."), Format::Zip);
        assert_eq!(detect(b"\x17\x08Dtracing6"), Format::TraceCmdDat);
        assert_eq!(detect(b"TRACE:\n\x78\x9c"), Format::Ctrace);
        assert_eq!(
            detect(b"capturing trace... done\nTRACE:\n# tracer"),
            Format::FtraceText
        );
        assert_eq!(detect(b"<!DOCTYPE html>\n<html>"), Format::SystraceHtml);
        assert_eq!(detect(b"  {\"traceEvents\": []}"), Format::Json);
    }

    #[test]
    fn text_with_invalid_utf8_is_text() {
        // A thread name cut in the middle of a CJK character.
        let mut t = b"# tracer: nop\n  \xe4\xb8-12 [000] 1.0: sched_switch: x\n".to_vec();
        t.extend(std::iter::repeat_n(b'a', 5000));
        assert_eq!(detect(&t), Format::FtraceText);
    }

    #[test]
    fn unpacks_old_systrace_html() {
        let html = b"<!DOCTYPE html>\n<script>\n  var linuxPerfData = \"\\\n# tracer: nop\\n\\\n a-1 [000] 1.0: 0: B|1|x\\n\\\n  \\n\";\n</script>";
        let (f, text) = unpack(html).unwrap();
        assert_eq!(f, [Format::SystraceHtml, Format::FtraceText]);
        let text = String::from_utf8(text.into_owned()).unwrap();
        assert!(text.contains("\n a-1 [000] 1.0: 0: B|1|x\n"), "{text:?}");
    }

    #[test]
    fn unreadable_formats_say_what_to_do() {
        assert!(unpack(b"PK\x03\x04....").unwrap_err().1.contains("unzip"));
        assert!(unpack(b"\x17\x08Dtracing6")
            .unwrap_err()
            .1
            .contains("trace-cmd report"));
        assert!(unpack(b"\x1f\x8b\x08\0\0\0\0\0\0\0garbage!").is_err());
    }
}
