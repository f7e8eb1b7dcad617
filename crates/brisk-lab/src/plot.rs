//! Charts for the report, drawn with `plotters` to SVG and PNG.
//!
//! Two shapes of chart are in mind: "MTT per TSN" (seed 000 Fig. 2: one series
//! per protocol variant, x = message number, y = milliseconds) and "reduction vs
//! one-way delay" (Fig. 3: one line per bandwidth, with 95% confidence intervals
//! drawn as error bars). Both are a [`Chart`] of [`Series`] of [`Point`]s; a
//! chart with [`Chart::x_categories`] has a categorical x axis (category `i`
//! at x = `i + 1`).
//!
//! Output is deterministic: the same chart gives byte-identical files. Text is
//! laid out (and, in PNG, rasterized) with DejaVu Sans, which is compiled into
//! the binary from the `dejavu` crate, so no system font is needed; the SVG
//! names the generic family `sans-serif`, which every viewer has.
//!
//! How a series looks ([`Series::look`]): its colour, marker and dash are
//! given by the caller (colour = protocol variant, marker and dash = sweep
//! value, so a 4 × 3 chart has 4 colours and 12 distinct looks) or else fixed
//! by the series' index in the chart. Nothing is hidden: a marker that would
//! land on an earlier series' marker is moved sideways a few pixels, and a line
//! that would lie exactly on an earlier line is moved down 3 pixels. Axis
//! ranges always hold every point and error bar ([`axis_ranges`]); a long title
//! is wrapped (and its font shrunk), and the legend shrinks its font, wraps
//! into columns or shortens its entries so that it stays inside the image.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{BoldPoints, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::element::{Drawable, PointCollection};
use plotters::prelude::*;
use plotters::style::register_font;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters_backend::{BackendCoord, DrawingErrorKind};

/// Width and height of every chart, in pixels (PNG) or user units (SVG).
pub const SIZE: (u32, u32) = (1000, 600);

/// The font family name the charts use; registered with plotters on first use.
const FONT: &str = "sans-serif";

/// Series colors by index: the Okabe-Ito palette (distinguishable with the
/// common color-vision deficiencies) without its yellow, which is too faint on
/// white, then black and grey.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
    RGBColor(128, 128, 128), // grey
];

/// One data point; `ci = Some((low, high))` is drawn as a vertical error bar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub ci: Option<(f64, f64)>,
}

impl Point {
    /// A point without an error bar.
    pub fn new(x: f64, y: f64) -> Self {
        Self { x, y, ci: None }
    }

    /// A point with a `(low, high)` error bar.
    pub fn with_ci(x: f64, y: f64, ci: (f64, f64)) -> Self {
        Self { x, y, ci: Some(ci) }
    }
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeriesStyle {
    /// Points joined by a line, in x order as given.
    Line,
    /// Markers only.
    Markers,
    /// Both.
    LineAndMarkers,
}

/// Marker shapes, in the order [`Series::marker`] indexes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Triangle,
    Square,
    Cross,
    Diamond,
    OpenCircle,
    OpenTriangle,
    OpenSquare,
}

const MARKERS: [Marker; 8] = [
    Marker::Circle,
    Marker::Triangle,
    Marker::Square,
    Marker::Cross,
    Marker::Diamond,
    Marker::OpenCircle,
    Marker::OpenTriangle,
    Marker::OpenSquare,
];

/// Line patterns, in the order [`Series::dash`] indexes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dash {
    Solid,
    Dashed,
    Dotted,
    DashDot,
}

const DASHES: [Dash; 4] = [Dash::Solid, Dash::Dashed, Dash::Dotted, Dash::DashDot];

impl Dash {
    /// Lengths (px) of drawn and skipped stretches, alternating; empty for solid.
    fn pattern(self) -> &'static [f64] {
        match self {
            Dash::Solid => &[],
            Dash::Dashed => &[10.0, 6.0],
            Dash::Dotted => &[2.0, 5.0],
            Dash::DashDot => &[12.0, 5.0, 2.0, 5.0],
        }
    }
}

/// What a series looks like: its colour, marker and line pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Look {
    pub color: RGBColor,
    pub marker: Marker,
    pub dash: Dash,
}

/// One named series; its legend entry is its name (none when the name is empty).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<Point>,
    pub style: SeriesStyle,
    /// Index into the palette; `None`: the series' index in the chart.
    pub color: Option<usize>,
    /// Index into the marker shapes; `None`: fixed by the series' index.
    pub marker: Option<usize>,
    /// Index into the line patterns (0 is solid); `None`: solid.
    pub dash: Option<usize>,
}

impl Series {
    /// A series whose look is fixed by its index in the chart.
    pub fn new(name: impl Into<String>, points: Vec<Point>, style: SeriesStyle) -> Self {
        Self {
            name: name.into(),
            points,
            style,
            color: None,
            marker: None,
            dash: None,
        }
    }

    /// The same series in palette colour `index` (e.g. its variant's).
    pub fn with_color(mut self, index: usize) -> Self {
        self.color = Some(index);
        self
    }

    /// The same series with marker shape `index` (e.g. its sweep value's).
    pub fn with_marker(mut self, index: usize) -> Self {
        self.marker = Some(index);
        self
    }

    /// The same series with line pattern `index` (0 solid, 1 dashed, 2
    /// dotted, 3 dash-dot, then again).
    pub fn with_dash(mut self, index: usize) -> Self {
        self.dash = Some(index);
        self
    }

    /// How the series looks as the `index`-th of its chart. Without a given
    /// colour or marker, both follow the index: the first 64 series all look
    /// different.
    pub fn look(&self, index: usize) -> Look {
        Look {
            color: series_color(self.color.unwrap_or(index)),
            marker: MARKERS[self.marker.unwrap_or(index + index / PALETTE.len()) % MARKERS.len()],
            dash: DASHES[self.dash.unwrap_or(0) % DASHES.len()],
        }
    }
}

/// A chart. Ranges left `None` are fitted to the data (and its error bars); a
/// y axis whose data are all non-negative starts at 0. A range given is
/// widened when a point or error bar lies outside it: nothing is clipped.
/// Points with a NaN or infinite coordinate are not drawn (a line breaks
/// there).
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    pub x_range: Option<(f64, f64)>,
    pub y_range: Option<(f64, f64)>,
    /// Names of the categories of a categorical x axis (category `i` at
    /// x = `i + 1`, labelled with its name); empty for a numeric axis.
    pub x_categories: Vec<String>,
}

/// Why a chart was not written.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("cannot write chart {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot draw chart {title:?}: {message}")]
    Draw { title: String, message: String },
    #[error("chart {title:?}: {axis} range {range:?} is not a finite, increasing interval")]
    InvalidRange {
        title: String,
        axis: &'static str,
        range: (f64, f64),
    },
    #[error("the embedded DejaVu Sans font could not be registered with plotters")]
    Font,
}

/// A rectangle in pixels: left, top, right, bottom.
pub type PxRect = (i32, i32, i32, i32);

/// Where a chart's parts landed, in pixels from the top left of the image.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Layout {
    /// The title's lines as drawn (wrapped, maybe shortened), and their font size.
    pub title_lines: Vec<String>,
    pub title_font: u32,
    /// The box around the title's lines; `None` without a title.
    pub title: Option<PxRect>,
    /// The plotting area (inside the axes).
    pub plot: PxRect,
    /// The box around the legend; `None` when no series is named.
    pub legend: Option<PxRect>,
    /// The legend's entries as drawn (maybe shortened), and their font size.
    pub legend_names: Vec<String>,
    pub legend_font: u32,
    /// Per series, where each finite point's marker (or line vertex) was drawn.
    pub marks: Vec<Vec<(i32, i32)>>,
}

/// Writes `chart` as an SVG file at `path`, creating missing parent directories.
pub fn render_svg(chart: &Chart, path: &Path) -> Result<(), PlotError> {
    write_file(path, render_svg_string(chart)?.as_bytes())
}

/// Writes `chart` as a PNG file of [`SIZE`] at `path`, creating missing parent
/// directories. The file is PNG whatever its extension.
pub fn render_png(chart: &Chart, path: &Path) -> Result<(), PlotError> {
    write_file(path, &render_png_bytes(chart)?)
}

/// The SVG document for `chart`.
pub fn render_svg_string(chart: &Chart) -> Result<String, PlotError> {
    Ok(render_svg_with_layout(chart)?.0)
}

/// Where the parts of `chart` land (the same in SVG and PNG: both lay text
/// out with the same font).
pub fn layout(chart: &Chart) -> Result<Layout, PlotError> {
    Ok(render_svg_with_layout(chart)?.1)
}

fn render_svg_with_layout(chart: &Chart) -> Result<(String, Layout), PlotError> {
    let mut svg = String::new();
    let layout;
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        layout = draw(&root, chart)?;
        root.present().map_err(|e| draw_error(chart, e))?;
    }
    Ok((svg, layout))
}

/// The PNG file contents (8-bit RGB, [`SIZE`]) for `chart`.
pub fn render_png_bytes(chart: &Chart) -> Result<Vec<u8>, PlotError> {
    let (w, h) = SIZE;
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, SIZE).into_drawing_area();
        draw(&root, chart)?;
        root.present().map_err(|e| draw_error(chart, e))?;
    }
    let mut png_data = Vec::new();
    let mut encoder = png::Encoder::new(&mut png_data, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let encoded = encoder
        .write_header()
        .and_then(|mut writer| writer.write_image_data(&rgb));
    encoded.map_err(|e| PlotError::Draw {
        title: chart.title.clone(),
        message: format!("PNG encoding failed: {e}"),
    })?;
    Ok(png_data)
}

fn write_file(path: &Path, contents: &[u8]) -> Result<(), PlotError> {
    let io = |source| PlotError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    std::fs::write(path, contents).map_err(io)
}

fn draw_error(chart: &Chart, e: impl std::fmt::Display) -> PlotError {
    PlotError::Draw {
        title: chart.title.clone(),
        message: e.to_string(),
    }
}

/// Registers DejaVu Sans (regular and bold) as [`FONT`], once per process.
fn ensure_font() -> Result<(), PlotError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).is_ok()
            && register_font(FONT, FontStyle::Bold, dejavu::sans::bold()).is_ok()
    });
    if ok { Ok(()) } else { Err(PlotError::Font) }
}

/// The palette colour `index` (modulo the palette's size).
pub fn series_color(index: usize) -> RGBColor {
    PALETTE[index % PALETTE.len()]
}

/// Legend line length, px.
const LEGEND_LINE: i32 = 34;

/// A series' glyph at one pixel: a marker (data points), or a short line
/// from it to the right with the marker on its middle (legend entries).
struct Glyph {
    at: BackendCoord,
    look: Look,
    line: bool,
    marker: bool,
}

impl<'a> PointCollection<'a, BackendCoord> for &'a Glyph {
    type Point = &'a BackendCoord;
    type IntoIter = std::iter::Once<&'a BackendCoord>;
    fn point_iter(self) -> Self::IntoIter {
        std::iter::once(&self.at)
    }
}

impl<DB: DrawingBackend> Drawable<DB> for Glyph {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        mut points: I,
        backend: &mut DB,
        _parent_dim: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let Some((mut x, y)) = points.next() else {
            return Ok(());
        };
        let color = self.look.color;
        if self.line {
            stroke_path(
                backend,
                &[(x, y), (x + LEGEND_LINE, y)],
                color,
                self.look.dash,
            )?;
            x += LEGEND_LINE / 2;
        }
        if !self.marker {
            return Ok(());
        }
        let stroke = color.stroke_width(2);
        let fill = color.filled();
        match self.look.marker {
            Marker::Circle => backend.draw_circle((x, y), 5, &fill, true),
            Marker::Triangle => {
                backend.fill_polygon([(x, y - 6), (x - 5, y + 4), (x + 5, y + 4)], &fill)
            }
            Marker::Square => backend.draw_rect((x - 4, y - 4), (x + 4, y + 4), &fill, true),
            Marker::Cross => {
                backend.draw_line((x - 4, y - 4), (x + 4, y + 4), &stroke)?;
                backend.draw_line((x - 4, y + 4), (x + 4, y - 4), &stroke)
            }
            Marker::Diamond => {
                backend.fill_polygon([(x, y - 6), (x + 5, y), (x, y + 6), (x - 5, y)], &fill)
            }
            Marker::OpenCircle => backend.draw_circle((x, y), 5, &stroke, false),
            Marker::OpenTriangle => backend.draw_path(
                [(x, y - 7), (x - 6, y + 5), (x + 6, y + 5), (x, y - 7)],
                &stroke,
            ),
            Marker::OpenSquare => backend.draw_rect((x - 5, y - 5), (x + 5, y + 5), &stroke, false),
        }
    }
}

/// Draws a polyline in `dash`'s pattern, 2 px wide. The pattern runs on
/// across vertices.
fn stroke_path<DB: DrawingBackend>(
    backend: &mut DB,
    points: &[BackendCoord],
    color: RGBColor,
    dash: Dash,
) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
    let stroke = color.stroke_width(2);
    let pattern = dash.pattern();
    if pattern.is_empty() {
        return backend.draw_path(points.iter().copied(), &stroke);
    }
    let round = |(x, y): (f64, f64)| (x.round() as i32, y.round() as i32);
    let mut stretch = 0;
    let mut left = pattern[0];
    let mut on = true;
    let mut current: Vec<(f64, f64)> = Vec::new();
    if let Some(&(x, y)) = points.first() {
        current.push((f64::from(x), f64::from(y)));
    }
    for pair in points.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let (ax, ay) = (f64::from(a.0), f64::from(a.1));
        let (dx, dy) = (f64::from(b.0) - ax, f64::from(b.1) - ay);
        let len = (dx * dx + dy * dy).sqrt();
        let mut pos = 0.0;
        while len - pos > left {
            pos += left;
            let p = (ax + dx * pos / len, ay + dy * pos / len);
            if on {
                current.push(p);
                backend.draw_path(current.drain(..).map(round), &stroke)?;
            } else {
                current.push(p);
            }
            on = !on;
            stretch = (stretch + 1) % pattern.len();
            left = pattern[stretch];
        }
        left -= len - pos;
        if on {
            current.push((f64::from(b.0), f64::from(b.1)));
        }
    }
    if on && current.len() > 1 {
        backend.draw_path(current.into_iter().map(round), &stroke)?;
    }
    Ok(())
}

/// A polyline in pixels, in a series' colour and pattern.
struct Polyline {
    points: Vec<BackendCoord>,
    color: RGBColor,
    dash: Dash,
}

impl<'a> PointCollection<'a, BackendCoord> for &'a Polyline {
    type Point = &'a BackendCoord;
    type IntoIter = std::slice::Iter<'a, BackendCoord>;
    fn point_iter(self) -> Self::IntoIter {
        self.points.iter()
    }
}

impl<DB: DrawingBackend> Drawable<DB> for Polyline {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        points: I,
        backend: &mut DB,
        _parent_dim: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let points: Vec<BackendCoord> = points.collect();
        stroke_path(backend, &points, self.color, self.dash)
    }
}

/// A vertical error bar from `ends[0]` to `ends[1]` (pixels) with short caps.
struct ErrorBarGlyph {
    ends: [BackendCoord; 2],
    color: RGBColor,
}

/// Half the width of an error bar's caps, px.
const CAP: i32 = 6;

impl<'a> PointCollection<'a, BackendCoord> for &'a ErrorBarGlyph {
    type Point = &'a BackendCoord;
    type IntoIter = std::slice::Iter<'a, BackendCoord>;
    fn point_iter(self) -> Self::IntoIter {
        self.ends.iter()
    }
}

impl<DB: DrawingBackend> Drawable<DB> for ErrorBarGlyph {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        mut points: I,
        backend: &mut DB,
        _parent_dim: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let (Some((x0, y0)), Some((x1, y1))) = (points.next(), points.next()) else {
            return Ok(());
        };
        let stroke = self.color.stroke_width(2);
        backend.draw_line((x0, y0), (x1, y1), &stroke)?;
        backend.draw_line((x0 - CAP, y0), (x0 + CAP, y0), &stroke)?;
        backend.draw_line((x1 - CAP, y1), (x1 + CAP, y1), &stroke)
    }
}

fn finite(p: &Point) -> bool {
    p.x.is_finite() && p.y.is_finite()
}

/// The (low, high) of an error bar, ordered, if both ends are finite.
fn error_bar(p: &Point) -> Option<(f64, f64)> {
    let (a, b) = p.ci?;
    (a.is_finite() && b.is_finite()).then_some((a.min(b), a.max(b)))
}

/// The smallest and largest of some values.
type Span = (f64, f64);

/// The smallest and largest x of the finite points, and the same of y with
/// their error bars.
fn data_bounds(chart: &Chart) -> (Option<Span>, Option<Span>) {
    let points = || {
        chart
            .series
            .iter()
            .flat_map(|s| &s.points)
            .filter(|p| finite(p))
    };
    let bounds = |values: &mut dyn Iterator<Item = f64>| {
        values.fold(None, |acc: Option<(f64, f64)>, v| {
            Some(acc.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))))
        })
    };
    let x = bounds(&mut points().map(|p| p.x));
    let mut ys = points().flat_map(|p| {
        let (lo, hi) = error_bar(p).unwrap_or((p.y, p.y));
        [p.y, lo, hi]
    });
    (x, bounds(&mut ys))
}

/// Fitted axis ranges: x spans the data with 3% padding (a categorical x
/// axis spans its categories, half a category beyond each end); y spans the
/// data and error bars, from 0 when nothing is negative, with 8% of the
/// axis as headroom (and 5% below when it does not start at 0).
fn fitted_ranges(chart: &Chart) -> ((f64, f64), (f64, f64)) {
    let (xb, yb) = data_bounds(chart);
    let x = match (xb, chart.x_categories.len()) {
        (None, 0) => (0.0, 1.0),
        (Some((lo, hi)), 0) => {
            let pad = if hi > lo { (hi - lo) * 0.03 } else { 0.5 };
            (lo - pad, hi + pad)
        }
        (b, n) => {
            let (lo, hi) = b.unwrap_or((1.0, n as f64));
            ((lo - 0.5).min(0.5), (hi + 0.5).max(n as f64 + 0.5))
        }
    };
    let y = match yb {
        None => (0.0, 1.0),
        Some((lo, hi)) => {
            if lo >= 0.0 {
                let span = if hi > 0.0 { hi } else { 1.0 };
                (0.0, hi + span * 0.08)
            } else {
                let span = if hi > lo { hi - lo } else { hi.abs().max(1.0) };
                (lo - span * 0.05, hi + span * 0.08)
            }
        }
    };
    (x, y)
}

fn checked_range(
    chart: &Chart,
    axis: &'static str,
    (lo, hi): (f64, f64),
) -> Result<(f64, f64), PlotError> {
    if lo.is_finite() && hi.is_finite() && lo < hi {
        Ok((lo, hi))
    } else {
        Err(PlotError::InvalidRange {
            title: chart.title.clone(),
            axis,
            range: (lo, hi),
        })
    }
}

/// `range` widened, when the data reach beyond it, to the data plus `below`
/// and `above` of the widened span.
fn widen(range: (f64, f64), data: Option<(f64, f64)>, below: f64, above: f64) -> (f64, f64) {
    let Some((dlo, dhi)) = data else {
        return range;
    };
    let span = range.1.max(dhi) - range.0.min(dlo);
    let lo = if dlo < range.0 {
        dlo - span * below
    } else {
        range.0
    };
    let hi = if dhi > range.1 {
        dhi + span * above
    } else {
        range.1
    };
    (lo, hi)
}

/// The x and y ranges `chart` is drawn with: the given ranges, widened to
/// hold every point and error bar (with 3% padding on x, 8% headroom above
/// and 5% below on y), or the fitted ones.
pub fn axis_ranges(chart: &Chart) -> Result<(Range<f64>, Range<f64>), PlotError> {
    let (fit_x, fit_y) = fitted_ranges(chart);
    let (xb, yb) = data_bounds(chart);
    let x = match chart.x_range {
        Some(r) => widen(checked_range(chart, "x", r)?, xb, 0.03, 0.03),
        None => fit_x,
    };
    let y = match chart.y_range {
        Some(r) => widen(checked_range(chart, "y", r)?, yb, 0.05, 0.08),
        None => fit_y,
    };
    let (x, y) = (checked_range(chart, "x", x)?, checked_range(chart, "y", y)?);
    Ok((x.0..x.1, y.0..y.1))
}

/// A tick label: at most three decimals, without trailing zeros.
fn tick_label(v: &f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// Space around the image's edge, px.
const MARGIN: i32 = 14;
/// Largest and smallest title font, px.
const TITLE_FONT: (u32, u32) = (26, 15);
/// Largest and smallest legend font, px.
const LEGEND_FONT: (u32, u32) = (18, 11);
/// Widest the legend may be, px.
const LEGEND_MAX_WIDTH: i32 = 400;
/// Padding inside the legend box, and between its columns, px.
const LEGEND_PAD: i32 = 10;
const LEGEND_COLUMN_GAP: i32 = 16;
/// Between the plot's right edge and the legend, px.
const LEGEND_GAP: i32 = 22;
/// Tick labels, axis descriptions and category names, px.
const TICK_FONT: u32 = 18;
const DESC_FONT: u32 = 22;
const CATEGORY_FONT: u32 = 16;
/// Tick marks, px; labels sit twice as far from the axis.
const TICK: i32 = 5;
/// Markers closer than this (px, both ways) to an earlier series' marker are
/// moved sideways by [`DODGE`] steps.
const NEAR: i32 = 5;
const DODGE: i32 = 8;
/// A line that lies on an earlier one is moved down this far, px.
const LINE_SHIFT: i32 = 3;

/// `text` in lines no wider than `max`, broken at spaces and after hyphens
/// (a piece wider than `max` is a line of its own).
fn wrap(text: &str, max: i32, width: &dyn Fn(&str) -> i32) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for (w, word) in text.split_whitespace().enumerate() {
        for (k, piece) in word.split_inclusive('-').enumerate() {
            let glue = if w > 0 && k == 0 { " " } else { "" };
            let candidate = if line.is_empty() {
                piece.to_owned()
            } else {
                format!("{line}{glue}{piece}")
            };
            if line.is_empty() || width(&candidate) <= max {
                line = candidate;
            } else {
                lines.push(std::mem::replace(&mut line, piece.to_owned()));
            }
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// `text`, shortened with an ellipsis until it is no wider than `max`.
fn shorten(text: &str, max: i32, width: &dyn Fn(&str) -> i32) -> String {
    if width(text) <= max {
        return text.to_owned();
    }
    let mut chars: Vec<char> = text.chars().collect();
    while !chars.is_empty() {
        chars.pop();
        let s: String = chars.iter().collect::<String>().trim_end().to_owned() + "…";
        if width(&s) <= max {
            return s;
        }
    }
    "…".to_owned()
}

/// The title's font size and lines: the largest font at which it wraps into
/// at most two lines that fit, else the smallest font, three lines at most,
/// the last one shortened.
fn fit_title(title: &str, max: i32, width: &dyn Fn(&str, u32) -> i32) -> (u32, Vec<String>) {
    if title.trim().is_empty() {
        return (TITLE_FONT.0, Vec::new());
    }
    for size in (TITLE_FONT.1..=TITLE_FONT.0).rev() {
        let w = |s: &str| width(s, size);
        let lines = wrap(title, max, &w);
        if lines.len() <= 2 && lines.iter().all(|l| w(l) <= max) {
            return (size, lines);
        }
    }
    let size = TITLE_FONT.1;
    let w = |s: &str| width(s, size);
    let mut lines = wrap(title, max, &w);
    if lines.len() > 3 {
        let rest = lines.split_off(2).join(" ");
        lines.push(rest);
    }
    let lines = lines.iter().map(|l| shorten(l, max, &w)).collect();
    (size, lines)
}

/// How the legend is laid out.
struct LegendPlan {
    font: u32,
    row: i32,
    per_column: usize,
    column_width: i32,
    names: Vec<String>,
    width: i32,
    height: i32,
}

/// The legend for `names` in at most `max_height` px: the largest font at
/// which it fits [`LEGEND_MAX_WIDTH`] (in as many columns as the height
/// needs); at the smallest, entries are shortened to fit.
fn plan_legend(
    names: &[&str],
    max_height: i32,
    width: &dyn Fn(&str, u32) -> i32,
) -> Option<LegendPlan> {
    if names.is_empty() {
        return None;
    }
    let n = names.len();
    for font in (LEGEND_FONT.1..=LEGEND_FONT.0).rev() {
        let row = font as i32 + 8;
        let per_column = (((max_height - 2 * LEGEND_PAD) / row).max(1) as usize).min(n);
        let columns = n.div_ceil(per_column) as i32;
        let text = names.iter().map(|s| width(s, font)).max().unwrap_or(0);
        let mut column_width = LEGEND_LINE + 8 + text;
        let mut total = columns * column_width + (columns - 1) * LEGEND_COLUMN_GAP + 2 * LEGEND_PAD;
        let smallest = font == LEGEND_FONT.1;
        if total > LEGEND_MAX_WIDTH && !smallest {
            continue;
        }
        let mut shown: Vec<String> = names.iter().map(|s| (*s).to_owned()).collect();
        if total > LEGEND_MAX_WIDTH {
            column_width =
                (LEGEND_MAX_WIDTH - 2 * LEGEND_PAD - (columns - 1) * LEGEND_COLUMN_GAP) / columns;
            let room = column_width - LEGEND_LINE - 8;
            let w = |s: &str| width(s, font);
            shown = shown.iter().map(|s| shorten(s, room, &w)).collect();
            total = LEGEND_MAX_WIDTH;
        }
        return Some(LegendPlan {
            font,
            row,
            per_column,
            column_width,
            names: shown,
            width: total,
            height: per_column as i32 * row + 2 * LEGEND_PAD,
        });
    }
    None
}

/// Draws `chart` onto `root` and says where its parts landed.
fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
) -> Result<Layout, PlotError> {
    ensure_font()?;
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| draw_error(chart, e);
    let (x, y) = axis_ranges(chart)?;
    let (w, h) = (SIZE.0 as i32, SIZE.1 as i32);
    let width_of = |text: &str, style: &TextStyle| -> i32 {
        root.estimate_text_size(text, style)
            .map_or(0, |(w, _)| w as i32)
    };
    let plain = |size: u32| TextStyle::from((FONT, size).into_font());
    let bold = |size: u32| TextStyle::from((FONT, size).into_font().style(FontStyle::Bold));
    let mut layout = Layout::default();
    root.fill(&WHITE).map_err(err)?;

    // The title, wrapped to the width of the image.
    let (title_font, title_lines) = fit_title(&chart.title, w - 2 * MARGIN, &|s, size| {
        width_of(s, &bold(size))
    });
    let title_row = (title_font as f64 * 1.25).round() as i32;
    let mut top = MARGIN;
    if !title_lines.is_empty() {
        let style = bold(title_font).pos(Pos::new(HPos::Center, VPos::Top));
        let mut widest = 0;
        for (i, line) in title_lines.iter().enumerate() {
            root.draw_text(line, &style, (w / 2, top + i as i32 * title_row))
                .map_err(err)?;
            widest = widest.max(width_of(line, &bold(title_font)));
        }
        let bottom = top + title_lines.len() as i32 * title_row;
        layout.title = Some((w / 2 - widest / 2, top, w / 2 + (widest + 1) / 2, bottom));
        top = bottom + 12;
    } else {
        top += 8;
    }
    layout.title_lines = title_lines;
    layout.title_font = title_font;

    // The legend: a column (or columns) right of the plot, never over data.
    let named: Vec<(usize, &Series)> = chart
        .series
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.name.is_empty())
        .collect();
    let names: Vec<&str> = named.iter().map(|(_, s)| s.name.as_str()).collect();
    let legend = plan_legend(&names, h - top - MARGIN, &|s, size| {
        width_of(s, &plain(size))
    });

    // Label areas: wide enough for the widest tick label and the description.
    let desc_height = (DESC_FONT as f64 * 1.2).round() as i32;
    let tick_height = (TICK_FONT as f64 * 1.2).round() as i32;
    let y_ticks = RangedCoordf64::from(y.clone()).key_points(BoldPoints(10));
    let widest_y_tick = y_ticks
        .iter()
        .map(|v| width_of(&tick_label(v), &plain(TICK_FONT)))
        .max()
        .unwrap_or(0);
    let y_area = desc_height + 10 + widest_y_tick + 2 * TICK + 4;
    let categories = !chart.x_categories.is_empty();
    let category_row = (CATEGORY_FONT as f64 * 1.2).round() as i32;
    let x_area = if categories {
        2 * TICK + 3 * category_row + 8 + desc_height
    } else {
        2 * TICK + tick_height + 8 + desc_height
    };
    let right = match &legend {
        Some(l) => MARGIN + l.width + LEGEND_GAP,
        None => {
            // Room for half of the last x tick label.
            let last = RangedCoordf64::from(x.clone())
                .key_points(BoldPoints(12))
                .last()
                .map_or(0, |v| width_of(&tick_label(v), &plain(TICK_FONT)));
            (last / 2 + 6).max(25)
        }
    };
    let area = root.margin(top, MARGIN, MARGIN, right);
    let mut ctx = ChartBuilder::on(&area)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area)
        .build_cartesian_2d(x.clone(), y.clone())
        .map_err(err)?;
    let mut mesh = ctx.configure_mesh();
    mesh.x_desc(&chart.x_label)
        .y_desc(&chart.y_label)
        .axis_desc_style((FONT, DESC_FONT))
        .label_style((FONT, TICK_FONT))
        .set_all_tick_mark_size(TICK)
        .x_labels(12)
        .y_labels(10)
        .x_label_formatter(&tick_label)
        .y_label_formatter(&tick_label)
        .bold_line_style(RGBColor(215, 215, 215))
        .light_line_style(RGBColor(242, 242, 242));
    if categories {
        mesh.x_labels(0).disable_x_mesh();
    }
    mesh.draw().map_err(err)?;
    let (px, py) = ctx.plotting_area().get_pixel_range();
    layout.plot = (px.start, py.start, px.end, py.end);

    if categories {
        let n = chart.x_categories.len() as i32;
        let room = ((px.end - px.start) / n - 8).max(20);
        let style = plain(CATEGORY_FONT).pos(Pos::new(HPos::Center, VPos::Top));
        let w = |s: &str| width_of(s, &plain(CATEGORY_FONT));
        for (i, name) in chart.x_categories.iter().enumerate() {
            let (cx, _) = ctx.backend_coord(&((i + 1) as f64, y.start));
            root.draw(&PathElement::new(
                vec![(cx, py.end), (cx, py.end + TICK)],
                BLACK.stroke_width(1),
            ))
            .map_err(err)?;
            let mut lines = wrap(name, room, &w);
            if lines.len() > 3 {
                let rest = lines.split_off(2).join(" ");
                lines.push(rest);
            }
            for (k, line) in lines.iter().enumerate() {
                let line = shorten(line, room, &w);
                root.draw_text(
                    &line,
                    &style,
                    (cx, py.end + 2 * TICK + k as i32 * category_row),
                )
                .map_err(err)?;
            }
        }
    }

    // Every point in pixels; markers moved off earlier series' markers, and
    // lines lying on earlier lines moved down.
    let mut placed: Vec<BackendCoord> = Vec::new();
    let mut lines_so_far: Vec<Vec<BackendCoord>> = Vec::new();
    for (index, series) in chart.series.iter().enumerate() {
        let look = series.look(index);
        let has_line = series.style != SeriesStyle::Markers;
        let has_markers = series.style != SeriesStyle::Line;
        let pixel = |p: &Point| ctx.backend_coord(&(p.x, p.y));
        let vertices: Vec<BackendCoord> = series
            .points
            .iter()
            .filter(|p| finite(p))
            .map(pixel)
            .collect();
        let shift = if has_line && !vertices.is_empty() {
            let on_earlier = lines_so_far
                .iter()
                .filter(|earlier| {
                    vertices.iter().all(|v| {
                        earlier
                            .iter()
                            .any(|u| (u.0 - v.0).abs() <= 2 && (u.1 - v.1).abs() <= 2)
                    })
                })
                .count() as i32;
            on_earlier * LINE_SHIFT
        } else {
            0
        };
        // Per finite point: the horizontal move of its marker.
        let moves: Vec<i32> = vertices
            .iter()
            .map(|&(vx, vy)| {
                if !has_markers {
                    return 0;
                }
                let free = |dx: i32| {
                    !placed
                        .iter()
                        .any(|q| (q.0 - (vx + dx)).abs() < NEAR && (q.1 - vy).abs() < NEAR)
                };
                [0, 1, -1, 2, -2, 3, -3]
                    .into_iter()
                    .map(|k| k * DODGE)
                    .find(|&dx| free(dx))
                    .unwrap_or(0)
            })
            .collect();

        // Error bars first, then the line, then the markers on top.
        let finite_points = series.points.iter().filter(|p| finite(p));
        for ((p, &(vx, _)), dx) in finite_points.zip(&vertices).zip(&moves) {
            if let Some((lo, hi)) = error_bar(p) {
                let (_, ylo) = ctx.backend_coord(&(p.x, lo));
                let (_, yhi) = ctx.backend_coord(&(p.x, hi));
                let bx = vx + if has_markers { *dx } else { 0 };
                root.draw(&ErrorBarGlyph {
                    ends: [(bx, ylo + shift), (bx, yhi + shift)],
                    color: look.color,
                })
                .map_err(err)?;
            }
        }
        if has_line {
            // A line breaks at non-finite points: draw each finite run.
            for run in series
                .points
                .split(|p| !finite(p))
                .filter(|r| !r.is_empty())
            {
                let points = run
                    .iter()
                    .map(|p| {
                        let (px, py) = pixel(p);
                        (px, py + shift)
                    })
                    .collect();
                root.draw(&Polyline {
                    points,
                    color: look.color,
                    dash: look.dash,
                })
                .map_err(err)?;
            }
            lines_so_far.push(vertices.clone());
        }
        let marks: Vec<BackendCoord> = vertices
            .iter()
            .zip(&moves)
            .map(|(&(vx, vy), dx)| {
                if has_markers {
                    (vx + dx, vy)
                } else {
                    (vx, vy + shift)
                }
            })
            .collect();
        if has_markers {
            for &at in &marks {
                root.draw(&Glyph {
                    at,
                    look,
                    line: false,
                    marker: true,
                })
                .map_err(err)?;
            }
            placed.extend(&marks);
        }
        layout.marks.push(marks);
    }

    if let Some(plan) = legend {
        let (x0, y0) = (w - MARGIN - plan.width, py.start);
        root.draw(&Rectangle::new(
            [(x0, y0), (x0 + plan.width, y0 + plan.height)],
            RGBColor(170, 170, 170),
        ))
        .map_err(err)?;
        let text_style = plain(plan.font).pos(Pos::new(HPos::Left, VPos::Center));
        for (k, ((index, series), name)) in named.iter().zip(&plan.names).enumerate() {
            let (column, row) = ((k / plan.per_column) as i32, (k % plan.per_column) as i32);
            let x = x0 + LEGEND_PAD + column * (plan.column_width + LEGEND_COLUMN_GAP);
            let y = y0 + LEGEND_PAD + row * plan.row + plan.row / 2;
            let style = series.style;
            root.draw(&Glyph {
                at: if style == SeriesStyle::Markers {
                    (x + LEGEND_LINE / 2, y)
                } else {
                    (x, y)
                },
                look: series.look(*index),
                line: style != SeriesStyle::Markers,
                marker: style != SeriesStyle::Line,
            })
            .map_err(err)?;
            root.draw_text(name, &text_style, (x + LEGEND_LINE + 8, y))
                .map_err(err)?;
        }
        layout.legend = Some((x0, y0, x0 + plan.width, y0 + plan.height));
        layout.legend_names = plan.names;
        layout.legend_font = plan.font;
    }
    Ok(layout)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory under the system temp dir for one test.
    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("brisk-lab-plot-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Seed 000 Fig. 2 in shape: MTT per TSN, no loss as a line, Standard as markers.
    fn mtt_per_tsn() -> Chart {
        let no_loss = (9..=48)
            .map(|tsn| Point::new(tsn as f64, 16.0 + ((tsn - 9) % 4) as f64 * 1.2))
            .collect();
        let standard = (9..=48)
            .map(|tsn| {
                let lost = tsn % 4 == 0;
                Point::new(
                    tsn as f64,
                    if lost {
                        110.0 + (tsn % 7) as f64 * 13.0
                    } else {
                        17.0
                    },
                )
            })
            .collect();
        Chart {
            title: "MTT per message: 4-message bursts, 2000 kbit/s, 15 ms".into(),
            x_label: "TSN (message number)".into(),
            y_label: "MTT (ms)".into(),
            series: vec![
                Series::new("No loss", no_loss, SeriesStyle::Line),
                Series::new("Standard", standard, SeriesStyle::Markers),
            ],
            x_range: None,
            y_range: None,
            x_categories: Vec::new(),
        }
    }

    /// Seed 000 Fig. 3 in shape: reduction vs delay, one line per bandwidth, with CIs.
    fn reduction_vs_delay() -> Chart {
        let series = [500, 1000, 2000]
            .iter()
            .enumerate()
            .map(|(i, kbit)| {
                Series::new(
                    format!("{kbit} kbit/s"),
                    [5.0, 10.0, 15.0, 20.0, 25.0]
                        .iter()
                        .map(|&d| {
                            let y = 40.0 + 6.0 * i as f64 - 0.5 * d;
                            Point::with_ci(d, y, (y - 3.0, y + 3.0))
                        })
                        .collect(),
                    SeriesStyle::LineAndMarkers,
                )
            })
            .collect();
        Chart {
            title: "Mean MTT reduction & one-way delay <4 msgs>".into(),
            x_label: "one-way delay (ms)".into(),
            y_label: "MTT reduction (%)".into(),
            series,
            x_range: Some((0.0, 30.0)),
            y_range: None,
            x_categories: Vec::new(),
        }
    }

    #[test]
    fn svg_is_byte_identical_for_the_same_chart() {
        for chart in [mtt_per_tsn(), reduction_vs_delay()] {
            let a = render_svg_string(&chart).unwrap();
            let b = render_svg_string(&chart.clone()).unwrap();
            assert_eq!(a, b);
        }
    }

    #[test]
    fn png_is_byte_identical_for_the_same_chart() {
        let chart = reduction_vs_delay();
        assert_eq!(
            render_png_bytes(&chart).unwrap(),
            render_png_bytes(&chart).unwrap()
        );
    }

    #[test]
    fn svg_file_holds_title_axis_labels_and_series_names() {
        let dir = temp_dir("svg");
        let path = dir.join("fig2.svg");
        render_svg(&mtt_per_tsn(), &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        assert!(svg.contains(r#"width="1000" height="600""#));
        for text in [
            "MTT per message: 4-message bursts, 2000 kbit/s, 15 ms",
            "TSN (message number)",
            "MTT (ms)",
            "\nNo loss\n",
            "\nStandard\n",
        ] {
            assert!(svg.contains(text), "SVG lacks {text:?}");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn svg_escapes_markup_in_text() {
        let svg = render_svg_string(&reduction_vs_delay()).unwrap();
        assert!(svg.contains("Mean MTT reduction &amp; one-way delay &lt;4 msgs&gt;"));
        assert!(svg.contains("\n2000 kbit/s\n"));
    }

    #[test]
    fn png_file_has_the_signature_and_the_chart_size() {
        let dir = temp_dir("png");
        let path = dir.join("nested").join("fig3.png");
        render_png(&reduction_vs_delay(), &path).unwrap();
        let png_data = std::fs::read(&path).unwrap();
        assert_eq!(&png_data[..8], b"\x89PNG\r\n\x1a\n");
        // IHDR comes first: length, "IHDR", width, height (big-endian).
        assert_eq!(&png_data[12..16], b"IHDR");
        let width = u32::from_be_bytes(png_data[16..20].try_into().unwrap());
        let height = u32::from_be_bytes(png_data[20..24].try_into().unwrap());
        assert_eq!((width, height), SIZE);
        let info = png::Decoder::new(std::io::Cursor::new(&png_data))
            .read_info()
            .unwrap()
            .info()
            .clone();
        assert_eq!((info.width, info.height), SIZE);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn png_text_is_rendered_with_the_embedded_font() {
        // The same chart with and without a title must differ in the title
        // band: the font draws real glyphs, not nothing.
        let titled = mtt_per_tsn();
        let untitled = Chart {
            title: String::new(),
            ..titled.clone()
        };
        assert_ne!(
            render_png_bytes(&titled).unwrap(),
            render_png_bytes(&untitled).unwrap()
        );
    }

    #[test]
    fn series_colors_are_distinct_and_stable_by_index() {
        let colors: Vec<_> = (0..PALETTE.len()).map(series_color).collect();
        for (i, a) in colors.iter().enumerate() {
            for b in &colors[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(series_color(1), RGBColor(213, 94, 0));
        assert_eq!(series_color(PALETTE.len() + 1), series_color(1));
        // The SVG uses them: series 0 in blue, series 1 in vermillion.
        let svg = render_svg_string(&mtt_per_tsn()).unwrap();
        assert!(svg.contains("#0072B2"), "no blue in the SVG");
        assert!(svg.contains("#D55E00"), "no vermillion in the SVG");
    }

    #[test]
    fn empty_and_non_finite_data_still_render() {
        let mut chart = mtt_per_tsn();
        chart.series[0].points.clear();
        chart.series[1].points = vec![
            Point::new(1.0, f64::NAN),
            Point::new(2.0, 5.0),
            Point::new(f64::INFINITY, 3.0),
        ];
        let svg = render_svg_string(&chart).unwrap();
        assert!(svg.contains("\nNo loss\n"));
        chart.series.clear();
        render_svg_string(&chart).unwrap();
        render_png_bytes(&chart).unwrap();
    }

    #[test]
    fn fitted_y_range_starts_at_zero_and_covers_error_bars() {
        let ((x0, x1), (y0, y1)) = fitted_ranges(&reduction_vs_delay());
        assert!(x0 < 5.0 && x1 > 25.0);
        assert_eq!(y0, 0.0);
        // Highest point: 2000 kbit/s at 5 ms, 52 - 2.5 = 49.5, bar to 52.5.
        assert!(y1 > 52.5);
    }

    #[test]
    fn an_empty_or_reversed_range_is_an_error() {
        let mut chart = mtt_per_tsn();
        chart.y_range = Some((10.0, 10.0));
        let e = render_svg_string(&chart).unwrap_err();
        assert!(
            matches!(e, PlotError::InvalidRange { axis: "y", .. }),
            "{e}"
        );
        chart.y_range = None;
        chart.x_range = Some((5.0, f64::NAN));
        assert!(render_png_bytes(&chart).is_err());
    }

    #[test]
    fn unwritable_path_is_an_error_naming_the_path() {
        let dir = temp_dir("unwritable");
        let file = dir.join("not-a-dir");
        std::fs::write(&file, b"x").unwrap();
        let path = file.join("chart.svg");
        let e = render_svg(&mtt_per_tsn(), &path).unwrap_err();
        assert!(e.to_string().contains("not-a-dir"), "{e}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// The pixels of `png_data` (RGB) and the image's width.
    fn decode(png_data: &[u8]) -> (Vec<u8>, usize) {
        let mut reader = png::Decoder::new(std::io::Cursor::new(png_data))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb);
        buf.truncate(info.buffer_size());
        (buf, info.width as usize)
    }

    /// How many pixels of `rect` have exactly `color`.
    fn count_color(rgb: &[u8], width: usize, rect: PxRect, color: RGBColor) -> usize {
        let (x0, y0, x1, y1) = rect;
        let mut n = 0;
        for y in y0.max(0)..y1 {
            for x in x0.max(0)..x1 {
                let i = (y as usize * width + x as usize) * 3;
                if rgb[i..i + 3] == [color.0, color.1, color.2] {
                    n += 1;
                }
            }
        }
        n
    }

    fn chart_of(series: Vec<Series>) -> Chart {
        Chart {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series,
            x_range: None,
            y_range: None,
            x_categories: Vec::new(),
        }
    }

    #[test]
    fn looks_given_by_the_caller_win_and_default_looks_differ_for_64_series() {
        let s = Series::new("s", vec![], SeriesStyle::Line);
        let looks: Vec<Look> = (0..64).map(|i| s.look(i)).collect();
        for (i, a) in looks.iter().enumerate() {
            for b in &looks[i + 1..] {
                assert_ne!(a, b);
            }
        }
        let given = s.clone().with_color(2).with_marker(3).with_dash(1).look(9);
        assert_eq!(
            given,
            Look {
                color: series_color(2),
                marker: Marker::Cross,
                dash: Dash::Dashed,
            }
        );
        // The SVG draws a dashed line as several pieces: more polylines.
        let points: Vec<Point> = (0..5).map(|i| Point::new(i as f64, i as f64)).collect();
        let solid = chart_of(vec![Series::new("a", points.clone(), SeriesStyle::Line)]);
        let dashed = chart_of(vec![
            Series::new("a", points, SeriesStyle::Line).with_dash(1),
        ]);
        let polylines = |c: &Chart| render_svg_string(c).unwrap().matches("<polyline").count();
        assert!(polylines(&dashed) > polylines(&solid) + 5);
    }

    #[test]
    fn two_coinciding_series_both_stay_visible() {
        let points: Vec<Point> = (1..=6)
            .map(|i| Point::new(i as f64, 10.0 + (i % 3) as f64))
            .collect();
        for style in [
            SeriesStyle::Markers,
            SeriesStyle::LineAndMarkers,
            SeriesStyle::Line,
        ] {
            let chart = chart_of(vec![
                Series::new("first", points.clone(), style),
                Series::new("second", points.clone(), style),
            ]);
            let layout = layout(&chart).unwrap();
            assert_eq!(layout.legend_names, ["first", "second"], "{style:?}");
            // No mark of the second lies on one of the first.
            for (a, b) in layout.marks[0].iter().zip(&layout.marks[1]) {
                let apart = (a.0 - b.0).abs().max((a.1 - b.1).abs());
                assert!(apart >= 3, "{style:?}: {a:?} and {b:?}");
            }
            // Both colours show in the plot, the first nearly as much as alone.
            let (rgb, width) = decode(&render_png_bytes(&chart).unwrap());
            let alone = chart_of(vec![chart.series[0].clone()]);
            let (rgb_alone, _) = decode(&render_png_bytes(&alone).unwrap());
            let plot = layout.plot;
            let first = count_color(&rgb, width, plot, series_color(0));
            let second = count_color(&rgb, width, plot, series_color(1));
            let first_alone = count_color(&rgb_alone, width, plot, series_color(0));
            assert!(second > 0, "{style:?}");
            assert!(
                first * 2 > first_alone,
                "{style:?}: the first series keeps {first} of {first_alone} pixels"
            );
        }
    }

    #[test]
    fn axis_ranges_hold_every_point_and_error_bar_with_headroom() {
        // An MTT-per-TSN chart whose slow messages lie above a given 0-250 ms axis.
        let mut chart = mtt_per_tsn();
        chart.series[1]
            .points
            .push(Point::with_ci(49.0, 400.0, (380.0, 450.0)));
        chart.y_range = Some((0.0, 250.0));
        let (x, y) = axis_ranges(&chart).unwrap();
        assert!(x.start < 9.0 && x.end > 49.0, "{x:?}");
        assert_eq!(y.start, 0.0);
        assert!(y.end > 450.0 * 1.05 && y.end < 450.0 * 1.2, "{y:?}");
        // Fitted: the same, and a range that holds the data is kept.
        chart.y_range = None;
        let (_, fitted) = axis_ranges(&chart).unwrap();
        assert_eq!(fitted.start, 0.0);
        assert!(
            fitted.end > 450.0 * 1.05 && fitted.end < 450.0 * 1.2,
            "{fitted:?}"
        );
        chart.y_range = Some((0.0, 1000.0));
        assert_eq!(axis_ranges(&chart).unwrap().1, 0.0..1000.0);
        // Below the axis too, with room under the lowest error bar.
        chart.y_range = Some((0.0, 1000.0));
        chart.series[0]
            .points
            .push(Point::with_ci(20.0, -5.0, (-30.0, 0.0)));
        let (_, y) = axis_ranges(&chart).unwrap();
        assert!(y.start < -30.0 && y.end == 1000.0, "{y:?}");
        // Headroom is a share of the axis, not of the data's spread.
        let narrow = chart_of(vec![Series::new(
            "n",
            vec![Point::new(1.0, 47.0), Point::new(2.0, 48.0)],
            SeriesStyle::Markers,
        )]);
        let (_, y) = axis_ranges(&narrow).unwrap();
        assert!(y.end >= 48.0 * 1.07, "{y:?}");
    }

    #[test]
    fn a_long_title_and_a_long_legend_stay_inside_the_png() {
        let title = "A very long chart title that names every parameter of the run: \
                     bursts of seven 200-byte messages, exponential gaps of 200 ms mean, \
                     500, 1000 and 2000 kbit/s, one-way delays from 5 to 25 ms, forty runs each";
        let series = (0..30)
            .map(|i| {
                Series::new(
                    format!("variant number {i} with a rather long name, 2000 kbit/s, 25 ms"),
                    vec![Point::new(i as f64, 1000.0 * i as f64)],
                    SeriesStyle::LineAndMarkers,
                )
            })
            .collect();
        let chart = Chart {
            title: title.into(),
            x_label: "one-way delay (ms)".into(),
            y_label: "mean message transfer time (ms)".into(),
            series,
            x_range: None,
            y_range: None,
            x_categories: Vec::new(),
        };
        let layout = layout(&chart).unwrap();
        let (w, h) = (SIZE.0 as i32, SIZE.1 as i32);
        let inside = |r: PxRect| r.0 >= 0 && r.1 >= 0 && r.2 <= w && r.3 <= h;
        let legend = layout.legend.unwrap();
        assert!(inside(legend), "legend {legend:?}");
        assert!(inside(layout.title.unwrap()), "title {:?}", layout.title);
        assert!(inside(layout.plot), "plot {:?}", layout.plot);
        assert!((2..=3).contains(&layout.title_lines.len()));
        assert_eq!(layout.legend_names.len(), 30);
        assert!(layout.plot.2 < legend.0, "the legend is right of the plot");
        assert!(
            layout.title.unwrap().3 < layout.plot.1,
            "the title is above the plot"
        );
        // In the PNG itself, a band along every edge is background.
        let (rgb, width) = decode(&render_png_bytes(&chart).unwrap());
        let band = 6;
        for (name, rect) in [
            ("top", (0, 0, w, band)),
            ("bottom", (0, h - band, w, h)),
            ("left", (0, 0, band, h)),
            ("right", (w - band, 0, w, h)),
        ] {
            let area = ((rect.2 - rect.0) * (rect.3 - rect.1)) as usize;
            assert_eq!(
                count_color(&rgb, width, rect, WHITE),
                area,
                "something is drawn in the {name} band"
            );
        }
    }

    #[test]
    fn a_categorical_axis_names_its_categories() {
        let mut chart = chart_of(vec![Series::new(
            "ours",
            vec![Point::new(1.0, 5.0), Point::new(2.0, 7.0)],
            SeriesStyle::Markers,
        )]);
        chart.x_categories = vec!["2000 kbit/s, 5 ms".into(), "thin-sender-rfc7053".into()];
        let (x, _) = axis_ranges(&chart).unwrap();
        assert_eq!(x, 0.5..2.5);
        let svg = render_svg_string(&chart).unwrap();
        assert!(svg.contains("2000 kbit/s, 5 ms"), "{svg}");
        assert!(svg.contains("thin-sender-rfc7053") || svg.contains("rfc7053"));
        assert_eq!(
            wrap("thin-sender-rfc7053", 1, &|s| s.len() as i32),
            ["thin-", "sender-", "rfc7053"]
        );
    }

    #[test]
    fn tick_labels_drop_trailing_zeros() {
        assert_eq!(tick_label(&10.0), "10");
        assert_eq!(tick_label(&2.5), "2.5");
        assert_eq!(tick_label(&0.125), "0.125");
        assert_eq!(tick_label(&-0.0001), "0");
    }
}
