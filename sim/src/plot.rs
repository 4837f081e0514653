//! A hand-written SVG of the blocking-duration CDF, one line per policy (log-scaled x).
//! The tail (p99 and beyond) is drawn by `crate::plot_tail`.

use crate::svg;
use std::fmt::Write;

/// Draws CDFs of the given sorted durations (ns), one series per `(name, values)`.
pub fn cdf_svg(title: &str, series: &[(String, Vec<u64>)]) -> String {
    let (w, h, ml, mr, mt, mb) = (820.0, 440.0, 70.0, 230.0, 40.0, 50.0);
    let pw = w - ml - mr;
    let ph = h - mt - mb;
    let max = series
        .iter()
        .filter_map(|s| s.1.last())
        .copied()
        .max()
        .unwrap_or(1000)
        .max(1000);
    let min = 1000u64; // 1 µs
    let lmin = (min as f64).log10();
    let lmax = (max as f64).log10().ceil().max(lmin + 1.0);
    let x = |ns: u64| ml + pw * (((ns.max(min)) as f64).log10() - lmin) / (lmax - lmin);
    let y = |p: f64| mt + ph * (1.0 - p);
    let mut s = svg::open(w, h, ml, title);
    // Axes and grid.
    let mut e = lmin as i32;
    while e as f64 <= lmax {
        let ns = 10f64.powi(e) as u64;
        let gx = x(ns);
        let label = svg::decade(e);
        let _ = writeln!(
            s,
            r##"<line x1="{gx:.1}" y1="{mt}" x2="{gx:.1}" y2="{:.1}" stroke="#ddd"/><text x="{gx:.1}" y="{:.1}" text-anchor="middle">{label}</text>"##,
            mt + ph,
            mt + ph + 18.0
        );
        e += 1;
    }
    // 0.99 would overlap 1 on a linear axis: the tail is `tail_svg`'s job.
    for p in [0.0, 0.25, 0.5, 0.75, 0.9, 1.0] {
        let gy = y(p);
        let _ = writeln!(
            s,
            r##"<line x1="{ml}" y1="{gy:.1}" x2="{:.1}" y2="{gy:.1}" stroke="#eee"/><text x="{:.1}" y="{:.1}" text-anchor="end">{p}</text>"##,
            ml + pw,
            ml - 6.0,
            gy + 4.0
        );
    }
    svg::axis_titles(
        &mut s,
        svg::Frame { ml, mt, pw, ph, h },
        "critical-thread blocking duration (log scale)",
        "fraction of blockings ≤ x",
    );
    for (i, (name, v)) in series.iter().enumerate() {
        let n = v.len().max(1) as f64;
        let mut d = String::new();
        // At most ~600 points per line: step through the sorted values.
        let step = (v.len() / 600).max(1);
        for (k, &ns) in v.iter().enumerate() {
            if k % step != 0 && k + 1 != v.len() {
                continue;
            }
            let _ = write!(
                d,
                "{}{:.1},{:.1} ",
                if d.is_empty() { "M" } else { "L" },
                x(ns),
                y((k + 1) as f64 / n)
            );
        }
        svg::series(&mut s, i, &d, name, v.len(), ml + pw + 14.0, mt, 16.0);
    }
    s.push_str("</svg>\n");
    s
}
