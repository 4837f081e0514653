//! Real third-party traces (`../shared/corpus/project-tests`, origins and licences in the
//! corpus README): each imports, and its row counts equal the counts the trace itself gives,
//! as computed independently by `tests/pin_counts.py` (Perfetto's schema, or line matching).

mod shared_corpus;

use rusqlite::Connection;
use superpass_trace::import::{self, Format};

/// The corpus folder these tests read.
const FOLDER: &str = "project-tests";

struct Case {
    file: &'static str,
    formats: &'static [Format],
    /// sched_switch events = `sched` rows.
    switches: i64,
    /// Slice begins and instants = `slice` rows.
    slices: i64,
    /// Counter samples (atrace `C|`, cpu_idle, cpu_frequency, track-event counters).
    counters: i64,
}

const CASES: &[Case] = &[
    Case {
        file: "catapult_android_systrace.html.gz",
        formats: &[Format::Gzip, Format::SystraceHtml, Format::FtraceText],
        switches: 11074,
        slices: 5984,
        counters: 1611,
    },
    Case {
        file: "catapult_atrace.ctrace",
        formats: &[Format::Ctrace, Format::FtraceText],
        switches: 0,
        slices: 480,
        counters: 88,
    },
    Case {
        file: "catapult_atrace_data.txt",
        formats: &[Format::FtraceText],
        switches: 72,
        slices: 0,
        counters: 0,
    },
    Case {
        file: "ms_android12_cpu_sampling.pftrace.gz",
        formats: &[Format::Gzip, Format::Perfetto],
        switches: 24698,
        slices: 0,
        counters: 8032,
    },
    Case {
        file: "ms_android_sched.perfetto-trace.gz",
        formats: &[Format::Gzip, Format::Perfetto],
        switches: 15267,
        slices: 1,
        counters: 11855,
    },
    Case {
        file: "ms_chrome.pftrace.gz",
        formats: &[Format::Gzip, Format::Perfetto],
        switches: 0,
        slices: 146133,
        counters: 0,
    },
];

fn count(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn corpus_row_counts_match_the_traces() {
    let Some(dir) = shared_corpus::folder(FOLDER, "corpus_row_counts_match_the_traces") else {
        return;
    };
    for c in CASES {
        let bytes = shared_corpus::read(&dir, c.file);
        let (conn, s) =
            import::import_in_memory(&bytes).unwrap_or_else(|e| panic!("{}: {e}", c.file));
        let mut formats = s.containers.clone();
        formats.push(s.format);
        assert_eq!(formats, c.formats, "{}", c.file);
        assert_eq!(
            count(&conn, "SELECT COUNT(*) FROM sched"),
            c.switches,
            "{}",
            c.file
        );
        assert_eq!(
            count(&conn, "SELECT COUNT(*) FROM slice"),
            c.slices,
            "{}",
            c.file
        );
        assert_eq!(
            count(&conn, "SELECT COUNT(*) FROM counter"),
            c.counters,
            "{}",
            c.file
        );
        // Every slice is on a named thread or a process/async track, and the trace spans
        // a plausible capture (not days, as unconverted clocks gave).
        let span = count(&conn, "SELECT end_ts - start_ts FROM trace_bounds");
        assert!(
            (0..3_600_000_000_000).contains(&span),
            "{}: {span} ns",
            c.file
        );
        assert_eq!(
            count(&conn, "SELECT COUNT(*) FROM pragma_foreign_key_check"),
            0,
            "{}",
            c.file
        );
    }
}

#[test]
fn text_traces_name_threads_and_processes() {
    let Some(bytes) = shared_corpus::file(
        FOLDER,
        "catapult_android_systrace.html.gz",
        "text_traces_name_threads_and_processes",
    ) else {
        return;
    };
    let (conn, _) = import::import_in_memory(&bytes).unwrap();
    // Every thread that wrote a line or was switched has a name; atrace slices carry the
    // process name of their pid (from its main thread).
    assert_eq!(
        count(&conn, "SELECT COUNT(*) FROM thread WHERE name IS NULL"),
        0
    );
    let unnamed = count(
        &conn,
        "SELECT COUNT(*) FROM thread_slice WHERE process_name IS NULL",
    );
    assert_eq!(unnamed, 0);
    assert!(
        count(
            &conn,
            "SELECT COUNT(*) FROM counter_track WHERE name = 'VSYNC'"
        ) > 0
    );
}

#[test]
fn chrome_default_tracks_and_clocks() {
    let Some(bytes) = shared_corpus::file(
        FOLDER,
        "ms_chrome.pftrace.gz",
        "chrome_default_tracks_and_clocks",
    ) else {
        return;
    };
    let (conn, s) = import::import_in_memory(&bytes).unwrap();
    // Track events on the sequences' default tracks land on their threads.
    let on_threads = count(&conn, "SELECT COUNT(*) FROM thread_slice");
    assert!(on_threads * 10 > 146133 * 9, "{on_threads}");
    // Legacy async phases are not imported, and say so by phase.
    assert!(s
        .diag
        .skipped
        .keys()
        .any(|k| k.starts_with("track_event:legacy_phase_")));
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM stats WHERE name LIKE 'clock:%'"
        ),
        0
    );
}

/// Chrome writes its track events on sequence-scoped incremental clocks (id 64) that its
/// sequences' snapshots tie to MONOTONIC, which only the global snapshot ties to the boot
/// clock: every slice needs a two-step conversion.
#[test]
fn chrome_sequence_clocks_keep_every_slice() {
    let test = "chrome_sequence_clocks_keep_every_slice";
    let Some(bytes) = shared_corpus::file("traces", "chrome_page_loads.pftrace", test) else {
        return;
    };
    let (conn, _) = import::import_in_memory(&bytes).unwrap();
    // pin_counts.py: 21,536 slice begins + 1,401 instants (Perfetto's schema).
    assert_eq!(count(&conn, "SELECT COUNT(*) FROM slice"), 21536 + 1401);
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM stats WHERE name LIKE 'clock:%'"
        ),
        0
    );
    // The first slice begin of sequence 3, converted by hand (Perfetto's schema): its clock
    // 64 delta is 0 from the sequence's snapshot (MONOTONIC 197311716079623), then
    // MONOTONIC to BOOTTIME with the latest global snapshot before it (boot
    // 687424971011702 = mono 197309547444459).
    let first = 197_311_716_079_623i64 - 197_309_547_444_459 + 687_424_971_011_702;
    assert_eq!(
        count(
            &conn,
            "SELECT MIN(ts) FROM slice WHERE name = 'AsyncTask.run: qy'"
        ),
        first
    );
    let span = count(&conn, "SELECT end_ts - start_ts FROM trace_bounds");
    assert!((0..600_000_000_000).contains(&span), "{span} ns");
}

#[test]
fn a_trace_of_nothing_importable_says_what_it_holds() {
    let Some(bytes) = shared_corpus::file(
        FOLDER,
        "ms_android_gpu.pftrace.gz",
        "a_trace_of_nothing_importable_says_what_it_holds",
    ) else {
        return;
    };
    let (conn, s) = import::import_in_memory(&bytes).unwrap();
    assert_eq!(s.events, 0);
    let gpu = count(
        &conn,
        "SELECT value FROM stats WHERE name = 'packet:gpu_counter_event'",
    );
    // pin_counts.py: 5783 packets carry gpu_counter_event.
    assert_eq!(gpu, 5783);
    assert!(s.to_string().contains("no events imported"), "{s}");
}
