//! A hand-written SVG of the blocking tail: for each policy, the fraction of critical waits
//! longer than x, on log-log axes, so p99 and p99.9 get as much room as the median. Horizontal
//! lines mark 1% (p99) and 0.1% (p99.9): where a policy's curve crosses one is its percentile.

use crate::svg;
use std::fmt::Write;

/// Draws the survival function `P(wait > x)` of the given sorted durations (ns), one series
/// per `(name, values)`.
pub fn tail_svg(title: &str, series: &[(String, Vec<u64>)]) -> String {
    let (w, h, ml, mr, mt, mb) = (860.0, 460.0, 80.0, 250.0, 40.0, 50.0);
    let (pw, ph) = (w - ml - mr, h - mt - mb);
    let max = series
        .iter()
        .filter_map(|s| s.1.last())
        .copied()
        .max()
        .unwrap_or(1_000_000)
        .max(1_000_000);
    let nmax = series.iter().map(|s| s.1.len()).max().unwrap_or(1).max(10);
    // x from 10 µs to the next power of ten above the longest wait.
    let (xl0, xl1) = (4.0, (max as f64).log10().ceil());
    // y from 1 down to the smallest non-zero fraction any series can show.
    let yl1 = -((nmax as f64).log10().ceil());
    let x = |ns: f64| ml + pw * ((ns.max(1e4)).log10() - xl0) / (xl1 - xl0);
    let y = |f: f64| mt + ph * (f.log10() / yl1);
    let mut s = svg::open(w, h, ml, title);
    for e in xl0 as i32..=xl1 as i32 {
        let gx = x(10f64.powi(e));
        let label = svg::decade(e);
        let _ = writeln!(
            s,
            r##"<line x1="{gx:.1}" y1="{mt}" x2="{gx:.1}" y2="{:.1}" stroke="#ddd"/><text x="{gx:.1}" y="{:.1}" text-anchor="middle">{label}</text>"##,
            mt + ph,
            mt + ph + 18.0
        );
    }
    for e in (yl1 as i32..=0).rev() {
        let f = 10f64.powi(e);
        let gy = y(f);
        let (stroke, note) = match e {
            -2 => ("#999", "p99"),
            -3 => ("#999", "p99.9"),
            _ => ("#eee", ""),
        };
        let label = if e == 0 {
            "1".to_string()
        } else {
            format!("1e{e}")
        };
        let _ = writeln!(
            s,
            r##"<line x1="{ml}" y1="{gy:.1}" x2="{:.1}" y2="{gy:.1}" stroke="{stroke}"/><text x="{:.1}" y="{:.1}" text-anchor="end">{label}</text>"##,
            ml + pw,
            ml - 6.0,
            gy + 4.0,
        );
        if !note.is_empty() {
            // Inside the plot at its right edge, clear of the tick label.
            let _ = writeln!(
                s,
                r##"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="#666">{note}</text>"##,
                ml + pw - 4.0,
                gy - 4.0
            );
        }
    }
    svg::axis_titles(
        &mut s,
        svg::Frame { ml, mt, pw, ph, h },
        "critical-thread wait x (log scale)",
        "fraction of waits longer than x (log scale)",
    );
    for (i, (name, v)) in series.iter().enumerate() {
        let n = v.len() as f64;
        let mut d = String::new();
        // A step down at each distinct value, from the shortest wait to the longest (the last
        // wait leaves a fraction of 1/n, the floor the curve can show).
        let mut k = 0;
        while k < v.len() {
            let ns = v[k];
            while k < v.len() && v[k] == ns {
                k += 1;
            }
            let above = (v.len() - k) as f64 / n;
            let f = above.max(1.0 / n);
            let _ = write!(
                d,
                "{}{:.1},{:.1} ",
                if d.is_empty() { "M" } else { "L" },
                x(ns as f64),
                y(f)
            );
        }
        svg::series(&mut s, i, &d, name, v.len(), ml + pw + 14.0, mt, 18.0);
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_the_tail_and_every_series() {
        let a: Vec<u64> = (1..=2000).map(|i| i * 50_000).collect();
        let svg = tail_svg("t", &[("default".into(), a.clone()), ("x".into(), a)]);
        assert!(svg.contains("p99.9") && svg.contains("p99"));
        assert!(svg.contains("default (n=2000)") && svg.contains("x (n=2000)"));
        assert_eq!(svg.matches("<path").count(), 2);
    }
}
