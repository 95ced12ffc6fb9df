//! The lab's pictures and page: throughput against threads per design (chatroom), seconds
//! against groups per design (hackbench), seaccess's overhead per experiment beside the seed's
//! published figure, each as SVG and PNG, and an index.html that shows the tables and the
//! plots together. PNG text needs a font: DejaVu Sans (fonts-dejavu-core, which `make deps`
//! installs); without it the PNGs are left out and said so, the SVGs (whose text the viewer
//! draws) are written all the same.

use std::fmt::Write as _;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use seaccess_lab::chatroom::Chatroom;
use seaccess_lab::hackbench::Hackbench;

const FONT: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
const SIZE: (u32, u32) = (860, 520);

/// One line of a plot: a name and its points.
pub(crate) type Series = (String, Vec<(f64, f64)>);

/// A bar of the overhead plot: the experiment, our overhead (percent) and the seed's
/// published figure where it has one.
pub(crate) struct Bar {
    pub name: String,
    pub ours: f64,
    /// Our figure's 95% interval (percent), where the experiment gives one.
    pub ci: Option<(f64, f64)>,
    pub seed: Option<f64>,
}

/// Registers the PNG font once; false (and PNGs skipped) when it cannot be read.
fn font() -> bool {
    static OK: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *OK.get_or_init(|| match std::fs::read(FONT) {
        Ok(bytes) => plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            Box::leak(bytes.into_boxed_slice()),
        )
        .is_ok(),
        Err(_) => false,
    })
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn lines<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    x: &str,
    y: &str,
    series: &[Series],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let pts = series.iter().flat_map(|s| s.1.iter());
    let (mut x0, mut x1, mut y1) = (f64::MAX, f64::MIN, 0f64);
    for &(a, b) in pts {
        x0 = x0.min(a);
        x1 = x1.max(a);
        y1 = y1.max(b);
    }
    if x0 > x1 {
        return Err(format!("{title}: nothing to plot"));
    }
    let pad = ((x1 - x0) * 0.05).max(0.5);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d((x0 - pad)..(x1 + pad), 0f64..(y1 * 1.15).max(1e-9))
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x)
        .y_desc(y)
        .draw()
        .map_err(err)?;
    for (i, (name, p)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(p.iter().copied(), color.stroke_width(2)))
            .map_err(err)?
            .label(name.as_str())
            .legend(move |(a, b)| {
                PathElement::new(vec![(a, b), (a + 20, b)], color.stroke_width(2))
            });
        chart
            .draw_series(p.iter().map(|&q| Circle::new(q, 3, color.filled())))
            .map_err(err)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

fn bars<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    data: &[Bar],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let vals = data.iter().flat_map(|b| {
        [Some(b.ours), b.seed, b.ci.map(|c| c.0), b.ci.map(|c| c.1)]
            .into_iter()
            .flatten()
    });
    let (lo, hi) = vals.fold((0f64, 1f64), |(l, h), v| (l.min(v), h.max(v)));
    let n = data.len().max(1) as f64;
    let names: Vec<String> = data.iter().map(|b| b.name.clone()).collect();
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.5f64..(n - 0.5), (lo * 1.15 - 1.0)..(hi * 1.15 + 1.0))
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(data.len().max(1))
        .x_label_formatter(&|x| {
            names
                .get(x.round().max(0.0) as usize)
                .filter(|_| (x - x.round()).abs() < 0.01)
                .cloned()
                .unwrap_or_default()
        })
        .y_desc("overhead against vanilla, %")
        .draw()
        .map_err(err)?;
    let ours = Palette99::pick(0).to_rgba();
    let seed = Palette99::pick(1).to_rgba();
    chart
        .draw_series(data.iter().enumerate().map(|(i, b)| {
            Rectangle::new(
                [(i as f64 - 0.35, 0.0), (i as f64 - 0.02, b.ours)],
                ours.filled(),
            )
        }))
        .map_err(err)?
        .label("seaccess (this run; whiskers: 95% interval)")
        .legend(move |(a, b)| Rectangle::new([(a, b - 5), (a + 14, b + 5)], ours.filled()));
    chart
        .draw_series(data.iter().enumerate().filter_map(|(i, b)| {
            b.ci.map(|(l, h)| {
                ErrorBar::new_vertical(i as f64 - 0.185, l, b.ours, h, BLACK.filled(), 10)
            })
        }))
        .map_err(err)?;
    chart
        .draw_series(data.iter().enumerate().filter_map(|(i, b)| {
            b.seed.map(|s| {
                Rectangle::new(
                    [(i as f64 + 0.02, 0.0), (i as f64 + 0.35, s)],
                    seed.filled(),
                )
            })
        }))
        .map_err(err)?
        .label("the seed's published figure")
        .legend(move |(a, b)| Rectangle::new([(a, b - 5), (a + 14, b + 5)], seed.filled()));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

/// The plots of a run, written to `dir`: the names of the files written, and a note when the
/// PNGs had to be left out.
pub(crate) fn plots(
    dir: &Path,
    chat: Option<&Chatroom>,
    hack: Option<&Hackbench>,
    overheads: &[Bar],
) -> Result<(Vec<String>, Option<String>), String> {
    let png = font();
    let mut files = Vec::new();
    let mut charts: Vec<(String, String, String, String, Vec<Series>)> = Vec::new();
    if let Some(c) = chat {
        let mut s: Vec<Series> = Vec::new();
        for row in &c.rows {
            for (name, v) in &row.rates {
                match s.iter_mut().find(|x| &x.0 == name) {
                    Some(x) => x.1.push((row.threads as f64, *v)),
                    None => s.push((name.clone(), vec![(row.threads as f64, *v)])),
                }
            }
        }
        charts.push((
            "chatroom".into(),
            "chatroom (2001): throughput against threads".into(),
            "threads".into(),
            "messages per second".into(),
            s,
        ));
    }
    if let Some(h) = hack {
        for t in ["sockets", "pipes"] {
            let mut s: Vec<Series> = Vec::new();
            for row in h.rows.iter().filter(|r| r.transport.name() == t) {
                for (name, v) in &row.seconds {
                    match s.iter_mut().find(|x| &x.0 == name) {
                        Some(x) => x.1.push((row.groups as f64, *v)),
                        None => s.push((name.clone(), vec![(row.groups as f64, *v)])),
                    }
                }
            }
            charts.push((
                format!("hackbench-{t}"),
                format!("hackbench (2004), {t}: seconds against groups"),
                "groups".into(),
                "seconds".into(),
                s,
            ));
        }
    }
    for (stem, title, x, y, s) in &charts {
        let svg = dir.join(format!("{stem}.svg"));
        lines(
            SVGBackend::new(&svg, SIZE).into_drawing_area(),
            title,
            x,
            y,
            s,
        )?;
        files.push(format!("{stem}.svg"));
        if png {
            let p = dir.join(format!("{stem}.png"));
            lines(
                BitMapBackend::new(&p, SIZE).into_drawing_area(),
                title,
                x,
                y,
                s,
            )?;
            files.push(format!("{stem}.png"));
        }
    }
    if !overheads.is_empty() {
        let title = "seaccess's overhead per experiment, beside the seed's";
        let svg = dir.join("overheads.svg");
        bars(
            SVGBackend::new(&svg, SIZE).into_drawing_area(),
            title,
            overheads,
        )?;
        files.push("overheads.svg".into());
        if png {
            let p = dir.join("overheads.png");
            bars(
                BitMapBackend::new(&p, SIZE).into_drawing_area(),
                title,
                overheads,
            )?;
            files.push("overheads.png".into());
        }
    }
    let note = (!png).then(|| format!("PNG plots left out: {FONT} cannot be read (install fonts-dejavu-core, as make deps does); the SVGs are written"));
    Ok((files, note))
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The tables (the Markdown the run printed) and the SVG plots on one page.
pub(crate) fn index_html(markdown: &str, files: &[String], policy: &str) -> String {
    let mut h = String::new();
    let _ = writeln!(
        h,
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>seaccess lab</title>"
    );
    let _ = writeln!(h, "<style>body{{font-family:sans-serif;max-width:1000px;margin:2em auto}}table{{border-collapse:collapse}}td,th{{border:1px solid #999;padding:3px 8px;text-align:right}}img{{max-width:100%}}</style></head><body>");
    let _ = writeln!(h, "<h1>seaccess lab</h1>\n<p>policy {}</p>", esc(policy));
    let mut in_table = false;
    for line in markdown.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            if in_table {
                h.push_str("</table>\n");
                in_table = false;
            }
            let _ = writeln!(h, "<h2>{}</h2>", esc(title));
        } else if line.starts_with("|---") {
            continue;
        } else if let Some(row) = line.strip_prefix('|') {
            let cells: Vec<&str> = row
                .trim_end_matches('|')
                .split('|')
                .map(str::trim)
                .collect();
            let tag = if in_table { "td" } else { "th" };
            if !in_table {
                h.push_str("<table>\n");
                in_table = true;
            }
            let _ = writeln!(
                h,
                "<tr>{}</tr>",
                cells
                    .iter()
                    .map(|c| format!("<{tag}>{}</{tag}>", esc(c)))
                    .collect::<String>()
            );
        } else {
            if in_table {
                h.push_str("</table>\n");
                in_table = false;
            }
            if !line.trim().is_empty() {
                let _ = writeln!(h, "<p>{}</p>", esc(line));
            }
        }
    }
    if in_table {
        h.push_str("</table>\n");
    }
    for f in files.iter().filter(|f| f.ends_with(".svg")) {
        let _ = writeln!(h, "<p><img src=\"{0}\" alt=\"{0}\"></p>", esc(f));
    }
    h.push_str("</body></html>\n");
    h
}
