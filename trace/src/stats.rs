//! The `stats` table: what an import skipped or repaired, one row per kind, in the manner
//! of trace_processor's `stats`.

use crate::events::Diagnostics;

/// One `stats` row: name, severity, value, description.
pub type StatRow = (String, &'static str, u64, String);

/// What a skipped kind means, from its prefix.
fn describe(kind: &str) -> String {
    let (prefix, what) = kind.split_once(':').unwrap_or(("", kind));
    match prefix {
        "ftrace" => format!("ftrace events `{what}` not imported"),
        "packet" => format!("TracePacket field `{what}` not imported"),
        "track_event" => format!("track events skipped: {what}"),
        "trace" => format!("top-level Trace field `{what}` skipped"),
        "clock" => format!("track events whose clock could not be converted: {what}"),
        "superpass" => "SuperPass events with a missing or malformed field".into(),
        "binder" => match crate::binder::STATS.iter().find(|(k, _)| *k == kind) {
            Some((_, what)) => (*what).to_owned(),
            None => format!("binder: {what}"),
        },
        _ => format!("skipped: {kind}"),
    }
}

/// The rows for `d`: every non-zero repair counter, then every skipped kind.
pub fn rows(d: &Diagnostics) -> Vec<StatRow> {
    let mut out: Vec<StatRow> = Vec::new();
    let fixed: [(&str, &'static str, u64, &str); 7] = [
        (
            "import_corrupt",
            "error",
            d.corrupt,
            "packets or lines that did not decode (skipped)",
        ),
        (
            "import_truncated",
            "error",
            u64::from(d.truncated),
            "the input ended inside a packet",
        ),
        (
            "counter_nan",
            "data_loss",
            d.nan_counters,
            "counter values that were NaN (stored as NULL)",
        ),
        (
            "import_out_of_order",
            "info",
            d.out_of_order,
            "events whose timestamp went backwards on their CPU (re-sorted)",
        ),
        (
            "import_unmatched_ends",
            "error",
            d.unmatched_ends,
            "slice ends with no open slice (dropped)",
        ),
        (
            "import_unended_slices",
            "info",
            d.unended_slices,
            "slices still open at the end (dur = -1)",
        ),
        (
            "ftrace_lost_events",
            "data_loss",
            d.lost_events,
            "lost-event markers: the kernel dropped events",
        ),
    ];
    for (name, severity, value, description) in fixed {
        if value > 0 {
            out.push((name.to_owned(), severity, value, description.to_owned()));
        }
    }
    for (kind, &n) in &d.skipped {
        out.push((kind.clone(), "data_loss", n, describe(kind)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_name_each_kind() {
        let mut d = Diagnostics::default();
        d.skip("ftrace:cpu_idle");
        d.skip("ftrace:cpu_idle");
        d.skip("packet:perf_sample");
        d.nan_counters = 3;
        let r = rows(&d);
        assert_eq!(d.unknown, 3);
        assert!(r.iter().any(|x| x.0 == "ftrace:cpu_idle" && x.2 == 2));
        assert!(r.iter().any(|x| x.0 == "counter_nan" && x.2 == 3));
        assert!(!r.iter().any(|x| x.0 == "import_corrupt"));
    }
}
