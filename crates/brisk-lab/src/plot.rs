//! Charts for the report, drawn with `plotters` to SVG and PNG.
//!
//! Two shapes of chart are in mind: "MTT per TSN" (seed 000 Fig. 2: one series
//! per protocol variant, x = message number, y = milliseconds) and "reduction vs
//! one-way delay" (Fig. 3: one line per bandwidth, with 95% confidence intervals
//! drawn as error bars). Both are a [`Chart`] of [`Series`] of [`Point`]s.
//!
//! Output is deterministic: the same chart gives byte-identical files. Text is
//! laid out (and, in PNG, rasterized) with DejaVu Sans, which is compiled into
//! the binary from the `dejavu` crate, so no system font is needed; the SVG
//! names the generic family `sans-serif`, which every viewer has.
//! Colors and marker shapes are fixed by the series' index in the chart.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;

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

/// One named series; its legend entry is its name (none when the name is empty).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<Point>,
    pub style: SeriesStyle,
}

/// A chart. Ranges left `None` are fitted to the data (and its error bars); a
/// y axis whose data are all non-negative starts at 0. Points with a NaN or
/// infinite coordinate are not drawn (a line breaks there).
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    pub x_range: Option<(f64, f64)>,
    pub y_range: Option<(f64, f64)>,
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
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        draw(&root, chart)?;
        root.present().map_err(|e| draw_error(chart, e))?;
    }
    Ok(svg)
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

/// The color of the series at `index`.
pub fn series_color(index: usize) -> RGBColor {
    PALETTE[index % PALETTE.len()]
}

/// Marker shapes, by series index.
#[derive(Clone, Copy)]
enum Shape {
    Circle,
    Triangle,
    Square,
    Cross,
}

fn series_shape(index: usize) -> Shape {
    [Shape::Circle, Shape::Triangle, Shape::Square, Shape::Cross][index % 4]
}

/// A series' glyph at one position: a marker (data points), or a short line
/// with the marker on its middle (legend entries of line series).
struct Glyph<C> {
    at: C,
    shape: Shape,
    color: RGBColor,
    /// Draw a line from `at` to 24 px right of it, marker (if any) centred on it.
    line: bool,
    marker: bool,
}

/// Legend line length, px.
const LEGEND_LINE: i32 = 24;

impl<'a, C> PointCollection<'a, C> for &'a Glyph<C> {
    type Point = &'a C;
    type IntoIter = std::iter::Once<&'a C>;
    fn point_iter(self) -> Self::IntoIter {
        std::iter::once(&self.at)
    }
}

impl<C, DB: DrawingBackend> Drawable<DB> for Glyph<C> {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        mut points: I,
        backend: &mut DB,
        _parent_dim: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let Some((mut x, y)) = points.next() else {
            return Ok(());
        };
        let stroke = self.color.stroke_width(2);
        if self.line {
            backend.draw_line((x, y), (x + LEGEND_LINE, y), &stroke)?;
            x += LEGEND_LINE / 2;
        }
        if !self.marker {
            return Ok(());
        }
        let fill = self.color.filled();
        match self.shape {
            Shape::Circle => backend.draw_circle((x, y), 4, &fill, true),
            Shape::Triangle => {
                backend.fill_polygon([(x, y - 6), (x - 5, y + 4), (x + 5, y + 4)], &fill)
            }
            Shape::Square => backend.draw_rect((x - 4, y - 4), (x + 4, y + 4), &fill, true),
            Shape::Cross => {
                backend.draw_line((x - 4, y - 4), (x + 4, y + 4), &stroke)?;
                backend.draw_line((x - 4, y + 4), (x + 4, y - 4), &stroke)
            }
        }
    }
}

/// A vertical error bar from `(x, low)` to `(x, high)` with short caps.
struct ErrorBarGlyph {
    ends: [(f64, f64); 2],
    color: RGBColor,
}

/// Half the width of an error bar's caps, px.
const CAP: i32 = 6;

impl<'a> PointCollection<'a, (f64, f64)> for &'a ErrorBarGlyph {
    type Point = &'a (f64, f64);
    type IntoIter = std::slice::Iter<'a, (f64, f64)>;
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

/// Fitted axis ranges: x spans the data with 3% padding; y spans the data and
/// error bars with 8% headroom, from 0 when nothing is negative.
fn fitted_ranges(chart: &Chart) -> ((f64, f64), (f64, f64)) {
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
    let x = match bounds(&mut points().map(|p| p.x)) {
        None => (0.0, 1.0),
        Some((lo, hi)) => {
            let pad = if hi > lo { (hi - lo) * 0.03 } else { 0.5 };
            (lo - pad, hi + pad)
        }
    };
    let mut ys = points().flat_map(|p| {
        let (lo, hi) = error_bar(p).unwrap_or((p.y, p.y));
        [p.y, lo, hi]
    });
    let y = match bounds(&mut ys) {
        None => (0.0, 1.0),
        Some((lo, hi)) => {
            let span = if hi > lo { hi - lo } else { hi.abs().max(1.0) };
            if lo >= 0.0 {
                (0.0, hi + span * 0.08)
            } else {
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
) -> Result<Range<f64>, PlotError> {
    if lo.is_finite() && hi.is_finite() && lo < hi {
        Ok(lo..hi)
    } else {
        Err(PlotError::InvalidRange {
            title: chart.title.clone(),
            axis,
            range: (lo, hi),
        })
    }
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

/// Draws `chart` onto `root`.
fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, chart: &Chart) -> Result<(), PlotError> {
    ensure_font()?;
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| draw_error(chart, e);
    let (fit_x, fit_y) = fitted_ranges(chart);
    let x = checked_range(chart, "x", chart.x_range.unwrap_or(fit_x))?;
    let y = checked_range(chart, "y", chart.y_range.unwrap_or(fit_y))?;

    // The legend is a column right of the plot, so it never hides data.
    let legend_font = TextStyle::from((FONT, 19).into_font());
    let named: Vec<(usize, &Series)> = chart
        .series
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.name.is_empty())
        .collect();
    let mut legend_text_width = 0;
    for (_, series) in &named {
        let (w, _) = root
            .estimate_text_size(&series.name, &legend_font)
            .map_err(err)?;
        legend_text_width = legend_text_width.max(w as i32);
    }
    let legend_width = LEGEND_LINE + 10 + legend_text_width;
    let right_margin = if named.is_empty() {
        25
    } else {
        (legend_width + 50).clamp(120, 360)
    };

    root.fill(&WHITE).map_err(err)?;
    let mut ctx = ChartBuilder::on(root)
        .caption(
            &chart.title,
            (FONT, title_size(&chart.title))
                .into_font()
                .style(FontStyle::Bold),
        )
        .margin(20)
        .margin_right(right_margin)
        .x_label_area_size(60)
        .y_label_area_size(80)
        .build_cartesian_2d(x, y)
        .map_err(err)?;
    ctx.configure_mesh()
        .x_desc(&chart.x_label)
        .y_desc(&chart.y_label)
        .axis_desc_style((FONT, 22))
        .label_style((FONT, 18))
        .x_labels(12)
        .y_labels(10)
        .x_label_formatter(&tick_label)
        .y_label_formatter(&tick_label)
        .bold_line_style(RGBColor(215, 215, 215))
        .light_line_style(RGBColor(242, 242, 242))
        .draw()
        .map_err(err)?;

    for (index, series) in chart.series.iter().enumerate() {
        let color = series_color(index);
        let shape = series_shape(index);
        let style = series.style;
        let visible = || series.points.iter().filter(|p| finite(p));

        let bars = visible().filter_map(|p| {
            error_bar(p).map(|(lo, hi)| ErrorBarGlyph {
                ends: [(p.x, lo), (p.x, hi)],
                color,
            })
        });
        ctx.draw_series(bars).map_err(err)?;

        if style != SeriesStyle::Markers {
            // A line breaks at non-finite points: draw each finite run.
            let runs = series
                .points
                .split(|p| !finite(p))
                .filter(|run| !run.is_empty())
                .map(|run| {
                    PathElement::new(
                        run.iter().map(|p| (p.x, p.y)).collect::<Vec<_>>(),
                        color.stroke_width(2),
                    )
                });
            ctx.draw_series(runs).map_err(err)?;
        }
        if style != SeriesStyle::Line {
            let markers = visible().map(|p| Glyph {
                at: (p.x, p.y),
                shape,
                color,
                line: false,
                marker: true,
            });
            ctx.draw_series(markers).map_err(err)?;
        }
    }

    if !named.is_empty() {
        let (px, py) = ctx.plotting_area().get_pixel_range();
        const ROW: i32 = 26;
        let (x0, y0) = (px.end + 25, py.start + 18);
        let rows = named.len() as i32;
        root.draw(&Rectangle::new(
            [
                (x0 - 10, y0 - 18),
                (x0 + legend_width + 10, y0 + (rows - 1) * ROW + 18),
            ],
            RGBColor(170, 170, 170),
        ))
        .map_err(err)?;
        let text_style = legend_font.pos(Pos::new(HPos::Left, VPos::Center));
        for (row, (index, series)) in named.iter().enumerate() {
            let y = y0 + row as i32 * ROW;
            let style = series.style;
            let glyph = Glyph {
                at: if style == SeriesStyle::Markers {
                    (x0 + LEGEND_LINE / 2, y)
                } else {
                    (x0, y)
                },
                shape: series_shape(*index),
                color: series_color(*index),
                line: style != SeriesStyle::Markers,
                marker: style != SeriesStyle::Line,
            };
            root.draw(&glyph).map_err(err)?;
            root.draw_text(&series.name, &text_style, (x0 + LEGEND_LINE + 10, y))
                .map_err(err)?;
        }
    }
    Ok(())
}

/// A title font size that fits a 1000-pixel-wide chart: 28 px, smaller for
/// long titles (about 0.55 em per character in DejaVu Sans Bold).
fn title_size(title: &str) -> u32 {
    let chars = title.chars().count().max(1) as f64;
    (960.0 / (0.62 * chars)).clamp(14.0, 28.0) as u32
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
                Series {
                    name: "No loss".into(),
                    points: no_loss,
                    style: SeriesStyle::Line,
                },
                Series {
                    name: "Standard".into(),
                    points: standard,
                    style: SeriesStyle::Markers,
                },
            ],
            x_range: None,
            y_range: None,
        }
    }

    /// Seed 000 Fig. 3 in shape: reduction vs delay, one line per bandwidth, with CIs.
    fn reduction_vs_delay() -> Chart {
        let series = [500, 1000, 2000]
            .iter()
            .enumerate()
            .map(|(i, kbit)| Series {
                name: format!("{kbit} kbit/s"),
                points: [5.0, 10.0, 15.0, 20.0, 25.0]
                    .iter()
                    .map(|&d| {
                        let y = 40.0 + 6.0 * i as f64 - 0.5 * d;
                        Point::with_ci(d, y, (y - 3.0, y + 3.0))
                    })
                    .collect(),
                style: SeriesStyle::LineAndMarkers,
            })
            .collect();
        Chart {
            title: "Mean MTT reduction & one-way delay <4 msgs>".into(),
            x_label: "one-way delay (ms)".into(),
            y_label: "MTT reduction (%)".into(),
            series,
            x_range: Some((0.0, 30.0)),
            y_range: None,
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

    #[test]
    fn tick_labels_drop_trailing_zeros() {
        assert_eq!(tick_label(&10.0), "10");
        assert_eq!(tick_label(&2.5), "2.5");
        assert_eq!(tick_label(&0.125), "0.125");
        assert_eq!(tick_label(&-0.0001), "0");
    }
}
