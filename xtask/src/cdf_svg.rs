//! Wait-time distributions drawn as an SVG picture: empirical CDFs on a log time axis.
//!
//! One panel per lock, one curve per mode, hand-written SVG (no dependencies). The x axis is
//! the wait on a log scale (decade ticks, 1 ns to 10 s labels). The y axis is the fraction of
//! waits at most x, stretched toward the tail: 0, 0.5, 0.9, 0.99, 0.999, ... are placed at
//! `-log10(1 - F)`, so the rare long waits that matter for jank get as much room as the bulk.
//! With `n` samples no step but the last lies above `1 - 1/n`, so the axis ends at
//! `1 - 10^-D` with `D = ceil(log10(n))` and that top edge is labelled 1: the final step to the
//! largest wait is drawn to it, and no other value is misplaced.

use std::fmt::Write as _;

/// One mode's waits, e.g. "off".
pub struct Series {
    /// Legend name.
    pub label: String,
    /// Measured waits in nanoseconds, any order.
    pub waits_ns: Vec<u64>,
    /// Why there are no waits (shown instead of the numbers when `waits_ns` is empty).
    pub missing: String,
}

/// One lock's panel.
pub struct Panel {
    /// Heading above the plot.
    pub title: String,
    /// Curves, drawn in this order with the palette below.
    pub series: Vec<Series>,
}

/// The whole picture.
pub struct Figure {
    /// Heading of the picture.
    pub title: String,
    /// Panels, left to right.
    pub panels: Vec<Panel>,
    /// Lines of small print under the panels (where the samples come from).
    pub notes: Vec<String>,
}

/// Line colour and dash pattern of the i-th series (Okabe-Ito colours, readable when
/// colour-blind; the third curve is also dashed).
const STYLE: [(&str, &str); 4] = [
    ("#D55E00", ""),
    ("#0072B2", ""),
    ("#009E73", "7 4"),
    ("#CC79A7", "2 3"),
];

const PANEL_W: f64 = 580.0;
const PLOT_L: f64 = 78.0;
const PLOT_W: f64 = 470.0;
const PLOT_T: f64 = 34.0;
const PLOT_H: f64 = 330.0;
const TITLE_H: f64 = 44.0;
const LEGEND_ROW: f64 = 19.0;

/// The summary numbers of one series, as the legend and the console show them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    pub n: usize,
    pub p50: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
}

/// The `p` quantile of sorted `v` as superpass-trace's report defines it: the shortest wait
/// whose rank `(i - 1) / (n - 1)` is at least `p` (a lone wait is every percentile).
pub fn percentile(v: &[u64], p: f64) -> Option<u64> {
    let n = v.len();
    if n <= 1 {
        return v.first().copied();
    }
    // Compared exactly as the report's SQL does, so that both pick the same sample.
    let i = (0..n)
        .find(|&i| i as f64 / (n - 1) as f64 >= p)
        .unwrap_or(n - 1);
    Some(v[i])
}

/// Count, p50, p99, p99.9 and max of `waits` (sorted or not); `None` when empty.
pub fn summarize(waits: &[u64]) -> Option<Summary> {
    let mut v = waits.to_vec();
    v.sort_unstable();
    Some(Summary {
        n: v.len(),
        p50: percentile(&v, 0.50)?,
        p99: percentile(&v, 0.99)?,
        p999: percentile(&v, 0.999)?,
        max: *v.last()?,
    })
}

/// A duration with three significant digits and its unit: `850 ns`, `14.2 µs`, `3.10 ms`,
/// `1.20 s`; `ascii` writes `us` for µs (console tables).
pub fn fmt_ns(ns: u64, ascii: bool) -> String {
    let us = if ascii { "us" } else { "µs" };
    let (v, unit) = match ns {
        0..=999 => return format!("{ns} ns"),
        1_000..=999_999 => (ns as f64 / 1e3, us),
        1_000_000..=999_999_999 => (ns as f64 / 1e6, "ms"),
        _ => (ns as f64 / 1e9, "s"),
    };
    // Rounding can carry into the next digit (999.96 -> "1000"); that reads fine.
    if v < 10.0 {
        format!("{v:.2} {unit}")
    } else if v < 100.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.0} {unit}")
    }
}

/// The label of the decade tick `10^e` ns: `1 ns` ... `100 ms`, `1 s`, `10 s`.
pub fn decade_label(e: i32) -> String {
    let (units, base) = [("ns", 0), ("µs", 3), ("ms", 6), ("s", 9)]
        .into_iter()
        .rev()
        .find(|&(_, b)| e >= b)
        .unwrap_or(("ns", 0));
    if units == "s" && e > 9 {
        return format!("{} s", 10u64.pow((e - 9) as u32));
    }
    format!("{} {units}", 10u64.pow((e - base).max(0) as u32))
}

/// The x range in decades, `[lo, hi]` with `lo < hi`, shared by all panels so they compare.
pub fn x_decades(fig: &Figure) -> (i32, i32) {
    let all = fig
        .panels
        .iter()
        .flat_map(|p| &p.series)
        .flat_map(|s| &s.waits_ns);
    let min = all.clone().filter(|&&w| w > 0).min().copied();
    let max = all.max().copied();
    match (min, max) {
        (Some(lo), Some(hi)) => {
            let lo = (lo as f64).log10().floor() as i32;
            let hi = (hi as f64).log10().ceil() as i32;
            (lo, hi.max(lo + 1))
        }
        // No waits at all: 1 µs .. 1 s, a range that reads as "time" to anyone.
        _ => (3, 9),
    }
}

/// The tail-stretched y position (in decades) of cumulative fraction `f`, capped at `top`.
pub fn y_decades(f: f64, top: u32) -> f64 {
    if f >= 1.0 {
        return top as f64;
    }
    (-(1.0 - f).log10()).clamp(0.0, top as f64)
}

/// How many decades the y axis spans for `n` samples: `ceil(log10(n))`, at least 2 (0.99).
pub fn y_top(n: usize) -> u32 {
    let mut d = 0;
    while 10usize.saturating_pow(d) < n {
        d += 1;
    }
    d.max(2)
}

/// Label of y tick `k` decades up: 0.9, 0.99, ...; the top edge reads 1 (the largest wait).
fn y_tick_label(k: u32, top: u32) -> String {
    if k == top {
        "1".into()
    } else {
        format!("0.{}", "9".repeat(k as usize))
    }
}

/// `s` cut to `max` characters, with an ellipsis when cut (legend cells have fixed room).
fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut c: String = s.chars().take(max - 1).collect();
    c.push('…');
    c
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Points of the empirical CDF of sorted `v` as (wait, fraction at most it) corners of a
/// step line: from fraction 0 at the first wait, up one step per distinct wait.
fn cdf_steps(v: &[u64]) -> Vec<(u64, f64)> {
    let n = v.len() as f64;
    let mut pts = Vec::new();
    let mut i = 0;
    let mut prev = 0.0;
    while i < v.len() {
        let x = v[i];
        while i < v.len() && v[i] == x {
            i += 1;
        }
        let f = i as f64 / n;
        pts.push((x, prev));
        pts.push((x, f));
        prev = f;
    }
    pts
}

/// Drops corners that lie on a straight horizontal or vertical run, and repeats.
fn thin(pts: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(pts.len());
    for p in pts {
        if out.last() == Some(&p) {
            continue;
        }
        if out.len() >= 2 {
            let a = out[out.len() - 2];
            let b = out[out.len() - 1];
            if (a.0 == b.0 && b.0 == p.0) || (a.1 == b.1 && b.1 == p.1) {
                out.pop();
            }
        }
        out.push(p);
    }
    out
}

/// Renders `fig` as a standalone SVG document.
pub fn render(fig: &Figure) -> String {
    let (lo, hi) = x_decades(fig);
    let rows = fig.panels.iter().map(|p| p.series.len()).max().unwrap_or(0);
    let legend_h = (rows as f64 + 1.0) * LEGEND_ROW + 8.0;
    let panel_h = PLOT_T + PLOT_H + 48.0 + legend_h;
    let width = PANEL_W * fig.panels.len().max(1) as f64 + 20.0;
    let height = TITLE_H + panel_h + 18.0 * fig.notes.len() as f64 + 16.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        s,
        r#"<rect x="0" y="0" width="{width:.0}" height="{height:.0}" fill="white"/>"#
    );
    let _ = writeln!(
        s,
        r#"<text x="{:.0}" y="26" font-size="17" font-weight="bold" text-anchor="middle">{}</text>"#,
        width / 2.0,
        esc(&fig.title)
    );
    if fig.panels.is_empty() {
        let _ = writeln!(
            s,
            r##"<text x="{:.0}" y="{:.0}" text-anchor="middle" fill="#B00000">no locks to draw: no captures were found</text>"##,
            width / 2.0,
            TITLE_H + 40.0
        );
    }
    for (i, p) in fig.panels.iter().enumerate() {
        panel(&mut s, p, 10.0 + PANEL_W * i as f64, TITLE_H, (lo, hi));
    }
    for (i, n) in fig.notes.iter().enumerate() {
        let _ = writeln!(
            s,
            r##"<text x="14" y="{:.0}" font-size="11" fill="#444">{}</text>"##,
            TITLE_H + panel_h + 14.0 + 18.0 * i as f64,
            esc(n)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Draws one panel with its top-left corner at (`ox`, `oy`).
fn panel(s: &mut String, p: &Panel, ox: f64, oy: f64, (lo, hi): (i32, i32)) {
    let (l, t) = (ox + PLOT_L, oy + PLOT_T);
    let (r, b) = (l + PLOT_W, t + PLOT_H);
    let n_max = p.series.iter().map(|s| s.waits_ns.len()).max().unwrap_or(0);
    let top = y_top(n_max);
    let xpx = |ns: f64| {
        let d = ns.max(10f64.powi(lo)).log10();
        l + (d - lo as f64) / (hi - lo) as f64 * PLOT_W
    };
    let ypx = |dec: f64| b - dec / top as f64 * PLOT_H;
    let _ = writeln!(s, r#"<g class="panel">"#);
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" font-size="14" font-weight="bold" text-anchor="middle">{}</text>"#,
        (l + r) / 2.0,
        oy + 20.0,
        esc(&p.title)
    );
    // Grid and x ticks: every decade labelled, 2..9 as minor ticks.
    let _ = writeln!(s, r##"<g class="x-axis" stroke="#000">"##);
    for e in lo..=hi {
        let x = xpx(10f64.powi(e));
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{t:.1}" x2="{x:.1}" y2="{b:.1}" stroke="#DDD"/>"##
        );
        let _ = writeln!(
            s,
            r#"<line x1="{x:.1}" y1="{b:.1}" x2="{x:.1}" y2="{:.1}"/>"#,
            b + 6.0
        );
        let _ = writeln!(
            s,
            r#"<text class="x-tick" x="{x:.1}" y="{:.1}" stroke="none" text-anchor="middle">{}</text>"#,
            b + 20.0,
            decade_label(e)
        );
        if e < hi {
            for m in 2..10 {
                let x = xpx(m as f64 * 10f64.powi(e));
                let _ = writeln!(
                    s,
                    r#"<line x1="{x:.1}" y1="{b:.1}" x2="{x:.1}" y2="{:.1}"/>"#,
                    b + 3.0
                );
            }
        }
    }
    let _ = writeln!(s, "</g>");
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">wait time (log scale)</text>"#,
        (l + r) / 2.0,
        b + 38.0
    );
    // y ticks: 0, 0.5, then one per decade of the tail.
    let _ = writeln!(s, r##"<g class="y-axis" stroke="#000">"##);
    let mut ticks = vec![(0.0, "0".to_string()), (y_decades(0.5, top), "0.5".into())];
    ticks.extend((1..=top).map(|k| (k as f64, y_tick_label(k, top))));
    for (dec, label) in ticks {
        let y = ypx(dec);
        let _ = writeln!(
            s,
            r##"<line x1="{l:.1}" y1="{y:.1}" x2="{r:.1}" y2="{y:.1}" stroke="#DDD"/>"##
        );
        let _ = writeln!(
            s,
            r#"<line x1="{:.1}" y1="{y:.1}" x2="{l:.1}" y2="{y:.1}"/>"#,
            l - 6.0
        );
        let _ = writeln!(
            s,
            r#"<text class="y-tick" x="{:.1}" y="{:.1}" stroke="none" text-anchor="end">{label}</text>"#,
            l - 9.0,
            y + 4.0
        );
    }
    let _ = writeln!(s, "</g>");
    let _ = writeln!(
        s,
        r#"<text transform="translate({:.1},{:.1}) rotate(-90)" text-anchor="middle">fraction of waits ≤ x (tail-stretched)</text>"#,
        l - 52.0,
        (t + b) / 2.0
    );
    let _ = writeln!(
        s,
        r##"<rect x="{l:.1}" y="{t:.1}" width="{PLOT_W:.1}" height="{PLOT_H:.1}" fill="none" stroke="#000"/>"##
    );
    // Curves.
    for (i, ser) in p.series.iter().enumerate() {
        if ser.waits_ns.is_empty() {
            continue;
        }
        let (color, dash) = STYLE[i % STYLE.len()];
        let mut v = ser.waits_ns.clone();
        v.sort_unstable();
        let pts: Vec<(f64, f64)> = cdf_steps(&v)
            .into_iter()
            .map(|(x, f)| {
                let px = (xpx(x as f64) * 10.0).round() / 10.0;
                let py = (ypx(y_decades(f, top)) * 10.0).round() / 10.0;
                (px, py)
            })
            .collect();
        let mut d = String::new();
        for (j, (x, y)) in thin(pts).into_iter().enumerate() {
            let _ = write!(d, "{}{x:.1},{y:.1}", if j == 0 { "M" } else { " L" });
        }
        let dash = if dash.is_empty() {
            String::new()
        } else {
            format!(r#" stroke-dasharray="{dash}""#)
        };
        let _ = writeln!(
            s,
            r#"<path class="cdf" data-series="{}" d="{d}" fill="none" stroke="{color}" stroke-width="2"{dash} stroke-linejoin="round"/>"#,
            esc(&ser.label)
        );
    }
    if p.series.iter().all(|s| s.waits_ns.is_empty()) {
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="14" fill="#B00000">no waits captured for this lock</text>"##,
            (l + r) / 2.0,
            (t + b) / 2.0
        );
    }
    // Legend under the axis: one row per mode with its numbers (the report's percentiles).
    let ly = b + 62.0;
    let cols = [
        ("mode", 28.0),
        ("waits", 110.0),
        ("p50", 180.0),
        ("p99", 260.0),
        ("p99.9", 340.0),
        ("max", 420.0),
    ];
    let _ = writeln!(s, r#"<g class="legend">"#);
    for (name, dx) in cols {
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{ly:.1}" font-weight="bold" fill="#333">{name}</text>"##,
            ox + dx
        );
    }
    for (i, ser) in p.series.iter().enumerate() {
        let (color, dash) = STYLE[i % STYLE.len()];
        let y = ly + LEGEND_ROW * (i as f64 + 1.0);
        let dash = if dash.is_empty() {
            String::new()
        } else {
            format!(r#" stroke-dasharray="{dash}""#)
        };
        let _ = writeln!(
            s,
            r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="2.5"{dash}/>"#,
            ox + 2.0,
            y - 4.0,
            ox + 22.0,
            y - 4.0
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{y:.1}">{}</text>"#,
            ox + cols[0].1,
            esc(&clip(&ser.label, 10))
        );
        match summarize(&ser.waits_ns) {
            Some(m) => {
                let vals = [
                    m.n.to_string(),
                    fmt_ns(m.p50, false),
                    fmt_ns(m.p99, false),
                    fmt_ns(m.p999, false),
                    fmt_ns(m.max, false),
                ];
                for (v, (_, dx)) in vals.iter().zip(&cols[1..]) {
                    let _ = writeln!(s, r#"<text x="{:.1}" y="{y:.1}">{v}</text>"#, ox + dx);
                }
            }
            None => {
                let _ = writeln!(
                    s,
                    r##"<text x="{:.1}" y="{y:.1}" fill="#B00000">no samples: {}</text>"##,
                    ox + cols[1].1,
                    esc(&clip(&ser.missing, 52))
                );
            }
        }
    }
    let _ = writeln!(s, "</g>");
    let _ = writeln!(s, "</g>");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(label: &str, waits: Vec<u64>) -> Series {
        Series {
            label: label.into(),
            waits_ns: waits,
            missing: "no capture".into(),
        }
    }

    fn figure(panels: Vec<Panel>) -> Figure {
        Figure {
            title: "waits <&>".into(),
            panels,
            notes: vec!["from \"traces\"".into()],
        }
    }

    /// Checks that tags nest and close, and that attribute values carry no raw `<`/`&`.
    fn check_xml(svg: &str) {
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.trim_end().ends_with("</svg>"));
        let mut stack: Vec<String> = Vec::new();
        let mut rest = svg;
        while let Some(i) = rest.find('<') {
            let text = &rest[..i];
            assert!(!text.contains('>'), "stray '>' in text {text:?}");
            let end = rest[i..].find('>').expect("unclosed tag") + i;
            let tag = &rest[i + 1..end];
            assert!(!tag.contains('<'), "'<' inside tag {tag:?}");
            assert_eq!(
                tag.matches('"').count() % 2,
                0,
                "unbalanced quotes in {tag:?}"
            );
            if let Some(name) = tag.strip_prefix('/') {
                assert_eq!(stack.pop().as_deref(), Some(name), "mismatched </{name}>");
            } else if !tag.ends_with('/') {
                stack.push(tag.split_whitespace().next().unwrap().to_string());
            }
            for ent in rest[i..end].split('&').skip(1) {
                assert!(
                    ["amp;", "lt;", "gt;", "quot;"]
                        .iter()
                        .any(|e| ent.starts_with(e)),
                    "raw & in {tag:?}"
                );
            }
            rest = &rest[end + 1..];
        }
        assert!(stack.is_empty(), "unclosed {stack:?}");
    }

    /// The (x, y) points of every CDF path, by series name.
    fn paths(svg: &str) -> Vec<(String, Vec<(f64, f64)>)> {
        svg.lines()
            .filter(|l| l.starts_with("<path class=\"cdf\""))
            .map(|l| {
                let attr = |k: &str| {
                    let a = l.find(&format!(" {k}=\"")).unwrap() + k.len() + 3;
                    l[a..a + l[a..].find('"').unwrap()].to_string()
                };
                let pts = attr("d")
                    .split(['M', 'L'])
                    .filter(|p| !p.trim().is_empty())
                    .map(|p| {
                        let (x, y) = p.trim().split_once(',').unwrap();
                        (x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect();
                (attr("data-series"), pts)
            })
            .collect()
    }

    fn lognormalish(n: u64, scale: u64) -> Vec<u64> {
        // Deterministic spread over ~4 decades with a long tail.
        (0..n)
            .map(|i| scale + (i * 7919 % n).pow(3) * scale / (n * n) + (i % 13) * 100)
            .collect()
    }

    #[test]
    fn svg_is_well_formed_and_escaped() {
        let fig = figure(vec![
            Panel {
                title: "mutex <1>".into(),
                series: vec![
                    series("off", lognormalish(2000, 10_000)),
                    series("on", lognormalish(2500, 5_000)),
                    series("fifo & co", vec![]),
                ],
            },
            Panel {
                title: "rwsem".into(),
                series: vec![series("off", vec![12_000, 900_000_000])],
            },
        ]);
        let svg = render(&fig);
        check_xml(&svg);
        assert!(svg.contains("waits &lt;&amp;&gt;"));
        assert!(svg.contains("from &quot;traces&quot;"));
        assert_eq!(svg.matches(r#"<g class="panel">"#).count(), 2);
        assert_eq!(paths(&svg).len(), 3);
        assert!(svg.contains("no samples: no capture"));
        assert!(svg.contains("fifo &amp; co"));
        assert!(svg.contains(">2000<") && svg.contains(">2500<"));
        assert!(svg.contains("wait time (log scale)"));
    }

    #[test]
    fn curves_are_monotone_and_end_at_the_top() {
        let fig = figure(vec![Panel {
            title: "mutex".into(),
            series: vec![
                series("off", lognormalish(3000, 1_000)),
                series("on", vec![5_000; 10]),
                series("one", vec![70_000]),
            ],
        }]);
        let svg = render(&fig);
        let ps = paths(&svg);
        assert_eq!(ps.len(), 3);
        let top = PLOT_T + TITLE_H;
        let bottom = top + PLOT_H;
        for (name, pts) in ps {
            assert!(pts.len() >= 2, "{name}");
            for w in pts.windows(2) {
                assert!(w[1].0 >= w[0].0, "{name}: x goes back {w:?}");
                assert!(w[1].1 <= w[0].1, "{name}: y goes down {w:?}");
            }
            assert!((pts[0].1 - bottom).abs() < 0.11, "{name} starts at 0");
            assert!(
                (pts.last().unwrap().1 - top).abs() < 0.11,
                "{name} ends at 1"
            );
        }
    }

    #[test]
    fn log_axis_has_decade_ticks() {
        let fig = figure(vec![Panel {
            title: "mutex".into(),
            series: vec![series("off", vec![1_500, 2_000_000, 340_000_000])],
        }]);
        assert_eq!(x_decades(&fig), (3, 9));
        let svg = render(&fig);
        let labels: Vec<&str> = svg
            .lines()
            .filter(|l| l.contains(r#"class="x-tick""#))
            .map(|l| &l[l.find('>').unwrap() + 1..l.rfind("</text>").unwrap()])
            .collect();
        assert_eq!(
            labels,
            ["1 µs", "10 µs", "100 µs", "1 ms", "10 ms", "100 ms", "1 s"]
        );
        // Decades are equally spaced.
        let xs: Vec<f64> = svg
            .lines()
            .filter(|l| l.contains(r#"class="x-tick""#))
            .map(|l| {
                let a = l.find(" x=\"").unwrap() + 4;
                l[a..a + l[a..].find('"').unwrap()].parse().unwrap()
            })
            .collect();
        let gap = xs[1] - xs[0];
        assert!(xs.windows(2).all(|w| (w[1] - w[0] - gap).abs() < 0.2));
        assert!((xs[6] - xs[0] - PLOT_W).abs() < 0.2);
        assert_eq!(decade_label(0), "1 ns");
        assert_eq!(decade_label(2), "100 ns");
        assert_eq!(decade_label(10), "10 s");
    }

    #[test]
    fn y_axis_is_stretched_toward_the_tail() {
        assert_eq!(y_top(1), 2);
        assert_eq!(y_top(1000), 3);
        assert_eq!(y_top(1001), 4);
        assert_eq!(y_decades(0.0, 3), 0.0);
        assert!((y_decades(0.9, 3) - 1.0).abs() < 1e-9);
        assert!((y_decades(0.999, 3) - 3.0).abs() < 1e-9);
        assert_eq!(y_decades(1.0, 3), 3.0);
        let svg = render(&figure(vec![Panel {
            title: "m".into(),
            series: vec![series("off", (1..=2000).collect())],
        }]));
        let labels: Vec<&str> = svg
            .lines()
            .filter(|l| l.contains(r#"class="y-tick""#))
            .map(|l| &l[l.find('>').unwrap() + 1..l.rfind("</text>").unwrap()])
            .collect();
        assert_eq!(labels, ["0", "0.5", "0.9", "0.99", "0.999", "1"]);
    }

    #[test]
    fn empty_input_says_so() {
        let svg = render(&figure(vec![Panel {
            title: "rwsem".into(),
            series: vec![series("off", vec![]), series("on", vec![])],
        }]));
        check_xml(&svg);
        assert!(svg.contains("no waits captured for this lock"));
        assert_eq!(svg.matches("no samples: no capture").count(), 2);
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(clip("abc", 4), "abc");
        assert!(paths(&svg).is_empty());
        // The axis still reads as time.
        assert!(svg.contains(">1 µs<") && svg.contains(">1 s<"));

        let none = render(&figure(vec![]));
        check_xml(&none);
        assert!(none.contains("no locks to draw"));
    }

    #[test]
    fn percentiles_follow_the_report() {
        let v: Vec<u64> = (1..=1000).collect();
        // rank (i-1)/(n-1) >= p: p50 of 1..=1000 is the 501st value (499.5 -> 500 -> 501).
        assert_eq!(percentile(&v, 0.5), Some(501));
        assert_eq!(percentile(&v, 0.99), Some(991));
        assert_eq!(percentile(&v, 0.999), Some(1000));
        assert_eq!(percentile(&[7], 0.99), Some(7));
        assert_eq!(percentile(&[], 0.5), None);
        let s = summarize(&[30, 10, 20]).unwrap();
        assert_eq!((s.n, s.p50, s.max), (3, 20, 30));
        assert_eq!(summarize(&[]), None);
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(fmt_ns(850, false), "850 ns");
        assert_eq!(fmt_ns(14_230, false), "14.2 µs");
        assert_eq!(fmt_ns(14_230, true), "14.2 us");
        assert_eq!(fmt_ns(3_100_000, false), "3.10 ms");
        assert_eq!(fmt_ns(464_534_400, false), "465 ms");
        assert_eq!(fmt_ns(1_200_000_000, false), "1.20 s");
    }
}
