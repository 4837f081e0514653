//! A hand-written SVG of the blocking-duration CDF, one line per policy (log-scaled x).
//! The tail (p99 and beyond) is drawn by `crate::plot_tail`.

use std::fmt::Write;

pub(crate) const COLORS: [&str; 8] = [
    "#444444", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#d62728", "#8c564b", "#e377c2",
];

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
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" font-size="14">{}</text>"#,
        ml,
        esc(title)
    );
    // Axes and grid.
    let mut e = lmin as i32;
    while e as f64 <= lmax {
        let ns = 10f64.powi(e) as u64;
        let gx = x(ns);
        let label = match e {
            3 => "1 µs".to_string(),
            4 => "10 µs".to_string(),
            5 => "100 µs".to_string(),
            6 => "1 ms".to_string(),
            7 => "10 ms".to_string(),
            8 => "100 ms".to_string(),
            _ => format!("1e{e} ns"),
        };
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
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">critical-thread blocking duration (log scale)</text>"#,
        ml + pw / 2.0,
        h - 10.0
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(16,{:.1}) rotate(-90)" text-anchor="middle">fraction of blockings ≤ x</text>"#,
        mt + ph / 2.0
    );
    for (i, (name, v)) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
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
        if !d.is_empty() {
            let _ = writeln!(
                s,
                r#"<path d="{d}" fill="none" stroke="{c}" stroke-width="1.6"/>"#
            );
        }
        let ly = mt + 16.0 * i as f64 + 8.0;
        let lx = ml + pw + 14.0;
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{c}" stroke-width="3"/><text x="{}" y="{}">{} (n={})</text>"#,
            lx + 18.0,
            lx + 24.0,
            ly + 4.0,
            esc(name),
            v.len()
        );
    }
    s.push_str("</svg>\n");
    s
}

pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
