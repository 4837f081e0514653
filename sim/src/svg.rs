//! The pieces both hand-written plots share: the canvas and title, axis titles, decade labels,
//! and one policy's curve with its legend row.

use std::fmt::Write;

/// Series colors, in series order (repeating).
pub const COLORS: [&str; 9] = [
    "#444444", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#d62728", "#8c564b", "#e377c2",
    "#17becf",
];

/// Escapes text for SVG.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Opens a `w` × `h` white canvas with `title` at left margin `ml`.
pub fn open(w: f64, h: f64, ml: f64, title: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{ml}" y="22" font-size="14">{}</text>"#,
        esc(title)
    );
    s
}

/// Where a plot's area lies on its canvas.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    /// Left margin (px).
    pub ml: f64,
    /// Top margin (px).
    pub mt: f64,
    /// Plot area width (px).
    pub pw: f64,
    /// Plot area height (px).
    pub ph: f64,
    /// Canvas height (px).
    pub h: f64,
}

/// Writes the x axis title `x` under the plot area and the y axis title `y`, rotated, left of it.
pub fn axis_titles(s: &mut String, f: Frame, x: &str, y: &str) {
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        f.ml + f.pw / 2.0,
        f.h - 10.0,
        esc(x)
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(16,{:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        f.mt + f.ph / 2.0,
        esc(y)
    );
}

/// The label of the duration `10^e` ns.
pub fn decade(e: i32) -> String {
    match e {
        3 => "1 µs".into(),
        4 => "10 µs".into(),
        5 => "100 µs".into(),
        6 => "1 ms".into(),
        7 => "10 ms".into(),
        8 => "100 ms".into(),
        9 => "1 s".into(),
        _ => format!("1e{e} ns"),
    }
}

/// Series `i`'s curve (`d`, SVG path data; nothing if empty) and its legend row: `row` px
/// apart from the plot's top `mt`, at `lx`, labelled with `name` and its `n` samples.
#[expect(
    clippy::too_many_arguments,
    reason = "a curve and its legend row are placed by both"
)]
pub fn series(s: &mut String, i: usize, d: &str, name: &str, n: usize, lx: f64, mt: f64, row: f64) {
    let c = COLORS[i % COLORS.len()];
    if !d.is_empty() {
        let _ = writeln!(
            s,
            r#"<path d="{d}" fill="none" stroke="{c}" stroke-width="1.6"/>"#
        );
    }
    let ly = mt + row * i as f64 + 8.0;
    let _ = writeln!(
        s,
        r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{c}" stroke-width="3"/><text x="{}" y="{}">{} (n={n})</text>"#,
        lx + 18.0,
        lx + 24.0,
        ly + 4.0,
        esc(name),
    );
}
