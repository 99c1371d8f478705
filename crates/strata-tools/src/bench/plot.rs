//! `--plot FILE.svg`: throughput and p99 latency over time, one line per step, drawn from
//! the `--report_interval_seconds` samples as a self-contained SVG (no dependency: the
//! picture is a few polylines, axes and labels); beside it, `FILE-compaction.svg`: the
//! compaction debt (pending compaction bytes) and the time writes spent stalled, over the
//! same seconds. The same chart of two panels over one x
//! axis draws other quantities too ([`render_chart`]: the expanding range's throughput and
//! disk reads against the size of its key range).

use std::fmt::Write as _;
use std::path::Path;

/// One interval sample: seconds since the run began, operations per second, p99 in us,
/// milliseconds writes spent stalled in the interval, and the compaction debt at its end.
#[derive(Debug, Clone, Copy, Default)]
pub struct Point {
    pub seconds: f64,
    pub ops_per_sec: f64,
    pub p99_us: f64,
    pub stall_ms: f64,
    pub pending_bytes: u64,
}

const WIDTH: f64 = 960.0;
const PANEL_HEIGHT: f64 = 260.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 40.0;
const GAP: f64 = 70.0;
const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// One point of a chart: its x, and its value in the top and the bottom panel.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub x: f64,
    pub top: f64,
    pub bottom: f64,
}

/// The labels of a chart's axes.
#[derive(Debug, Clone, Copy)]
pub struct Axes<'a> {
    pub x: &'a str,
    pub top: &'a str,
    pub bottom: &'a str,
}

/// The axes of the throughput chart.
const OVER_TIME: Axes<'static> = Axes {
    x: "seconds since the run began",
    top: "throughput (ops/s)",
    bottom: "p99 latency (us)",
};

/// The axes of the compaction chart.
const DEBT_OVER_TIME: Axes<'static> = Axes {
    x: "seconds since the run began",
    top: "pending compaction (MiB)",
    bottom: "writes stalled (ms per interval)",
};

/// Writes the chart of `series` (step name, samples) to `path`, and the compaction chart
/// to [`compaction_chart_path`]; returns that path.
pub fn write_svg(
    path: &Path,
    title: &str,
    series: &[(String, Vec<Point>)],
) -> std::io::Result<std::path::PathBuf> {
    std::fs::write(path, render(title, series))?;
    let debt = compaction_chart_path(path);
    std::fs::write(&debt, render_compaction(title, series))?;
    Ok(debt)
}

/// Where the compaction chart of `--plot PATH` goes: `PATH` with `-compaction` before its
/// extension.
pub fn compaction_chart_path(path: &Path) -> std::path::PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let name = match path.extension() {
        Some(ext) => format!("{stem}-compaction.{}", ext.to_string_lossy()),
        None => format!("{stem}-compaction"),
    };
    path.with_file_name(name)
}

/// The SVG text of the compaction chart: pending compaction bytes above, stalled
/// milliseconds below.
pub fn render_compaction(title: &str, series: &[(String, Vec<Point>)]) -> String {
    let panels = |p: &Point| (p.pending_bytes as f64 / 1048576.0, p.stall_ms);
    render_chart(title, DEBT_OVER_TIME, &samples_of(series, panels))
}

/// Each step's points as chart samples, `panels` giving the top and bottom value of one.
fn samples_of(
    series: &[(String, Vec<Point>)],
    panels: impl Fn(&Point) -> (f64, f64),
) -> Vec<(String, Vec<Sample>)> {
    series
        .iter()
        .map(|(step, points)| {
            let samples = points
                .iter()
                .map(|p| {
                    let (top, bottom) = panels(p);
                    Sample {
                        x: p.seconds,
                        top,
                        bottom,
                    }
                })
                .collect();
            (step.clone(), samples)
        })
        .collect()
}

/// Writes a chart of `series` with `axes` to `path`.
pub fn write_chart(
    path: &Path,
    title: &str,
    axes: Axes<'_>,
    series: &[(String, Vec<Sample>)],
) -> std::io::Result<()> {
    std::fs::write(path, render_chart(title, axes, series))
}

/// A round step for an axis spanning `max`, about five ticks.
fn tick_step(max: f64) -> f64 {
    let raw = (max / 5.0).max(f64::MIN_POSITIVE);
    let magnitude = 10f64.powf(raw.log10().floor());
    let unit = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .find(|m| m * magnitude >= raw)
        .unwrap_or(10.0);
    unit * magnitude
}

fn label(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v >= 1e3 {
        // Whole thousands bare, others with their hundreds (ticks 500 apart: 1.5K, 2K).
        match v % 1e3 == 0.0 {
            true => format!("{:.0}K", v / 1e3),
            false => format!("{:.1}K", v / 1e3),
        }
    } else if v >= 10.0 || v == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The SVG text of the throughput chart.
pub fn render(title: &str, series: &[(String, Vec<Point>)]) -> String {
    let panels = |p: &Point| (p.ops_per_sec, p.p99_us);
    render_chart(title, OVER_TIME, &samples_of(series, panels))
}

/// The SVG text of a chart: two panels (`axes.top` above `axes.bottom`) over one x axis,
/// a line per series in each.
pub fn render_chart(title: &str, axes: Axes<'_>, series: &[(String, Vec<Sample>)]) -> String {
    let points = series.iter().flat_map(|(_, p)| p.iter());
    let t_max = points.clone().map(|p| p.x).fold(1.0, f64::max);
    let q_max = points.clone().map(|p| p.top).fold(1.0, f64::max);
    let l_max = points.map(|p| p.bottom).fold(1.0, f64::max);
    let height = TOP + 2.0 * PANEL_HEIGHT + GAP + 50.0;
    let plot_w = WIDTH - LEFT - RIGHT;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="22" font-size="15" text-anchor="middle">{}</text>"#,
        LEFT + plot_w / 2.0,
        escape(title)
    );
    let panels = [
        (axes.top, q_max, TOP, 0usize),
        (axes.bottom, l_max, TOP + PANEL_HEIGHT + GAP, 1usize),
    ];
    for (name, y_max, top, which) in panels {
        let y_step = tick_step(y_max);
        let y_top = (y_max / y_step).ceil() * y_step;
        let x_step = tick_step(t_max);
        let x_end = (t_max / x_step).ceil() * x_step;
        let x = |t: f64| LEFT + plot_w * t / x_end;
        let y = |v: f64| top + PANEL_HEIGHT * (1.0 - v / y_top);
        // Grid, ticks and labels.
        let mut v = 0.0;
        while v <= y_top + y_step / 2.0 {
            let _ = writeln!(
                svg,
                r##"<line x1="{LEFT}" x2="{x2}" y1="{yv:.1}" y2="{yv:.1}" stroke="#ddd"/><text x="{tx}" y="{ty:.1}" text-anchor="end">{text}</text>"##,
                x2 = LEFT + plot_w,
                yv = y(v),
                tx = LEFT - 6.0,
                ty = y(v) + 4.0,
                text = label(v)
            );
            v += y_step;
        }
        let mut t = 0.0;
        while t <= x_end + x_step / 2.0 {
            let _ = writeln!(
                svg,
                r##"<line x1="{xt:.1}" x2="{xt:.1}" y1="{top}" y2="{bottom}" stroke="#eee"/><text x="{xt:.1}" y="{ty}" text-anchor="middle">{text}</text>"##,
                xt = x(t),
                bottom = top + PANEL_HEIGHT,
                ty = top + PANEL_HEIGHT + 16.0,
                text = label(t)
            );
            t += x_step;
        }
        let _ = writeln!(
            svg,
            r##"<rect x="{LEFT}" y="{top}" width="{plot_w}" height="{PANEL_HEIGHT}" fill="none" stroke="#888"/><text x="{LEFT}" y="{}" font-weight="bold">{}</text><text x="{}" y="{}" text-anchor="middle">{}</text>"##,
            top - 8.0,
            escape(name),
            LEFT + plot_w / 2.0,
            top + PANEL_HEIGHT + 32.0,
            escape(axes.x)
        );
        for (i, (step, pts)) in series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let path: Vec<String> = pts
                .iter()
                .map(|p| {
                    let v = if which == 0 { p.top } else { p.bottom };
                    format!("{:.1},{:.1}", x(p.x), y(v))
                })
                .collect();
            if path.len() == 1 {
                let (px, py) = path[0].split_once(',').unwrap_or(("0", "0"));
                let _ = writeln!(svg, r#"<circle cx="{px}" cy="{py}" r="3" fill="{color}"/>"#);
            } else if !path.is_empty() {
                let _ = writeln!(
                    svg,
                    r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
                    path.join(" ")
                );
            }
            if which == 0 {
                let ly = top + 14.0 + 18.0 * i as f64;
                let lx = LEFT + plot_w + 12.0;
                let _ = writeln!(
                    svg,
                    r#"<line x1="{lx}" x2="{}" y1="{ly}" y2="{ly}" stroke="{color}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#,
                    lx + 18.0,
                    lx + 24.0,
                    ly + 4.0,
                    escape(step)
                );
            }
        }
    }
    svg.push_str("</svg>\n");
    svg
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(tick_step(100.0), 20.0);
        assert_eq!(tick_step(1_000_000.0), 200_000.0);
        assert_eq!(tick_step(7.0), 2.0);
        assert_eq!(label(250_000.0), "250K");
        assert_eq!(label(1_500.0), "1.5K");
        assert_eq!(label(2_000.0), "2K");
        assert_eq!(label(2_500_000.0), "2.5M");
    }

    #[test]
    fn the_chart_has_a_line_per_step_in_both_panels() {
        let pts = |q: f64| -> Vec<Point> {
            (1..=5)
                .map(|i| Point {
                    seconds: i as f64,
                    ops_per_sec: q * i as f64,
                    p99_us: 10.0,
                    ..Point::default()
                })
                .collect()
        };
        let svg = render(
            "a <run>",
            &[
                ("fillrandom".into(), pts(1000.0)),
                ("overwrite".into(), pts(900.0)),
            ],
        );
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert_eq!(svg.matches("<polyline").count(), 4);
        assert!(svg.contains(">overwrite</text>"));
        assert!(svg.contains("a &lt;run&gt;"));
    }
}
