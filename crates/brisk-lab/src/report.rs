//! The HTML report: one self-contained `index.html` (inline CSS, no scripts, no
//! external assets) that shows each reproduced figure next to the paper's
//! numbers, plus an SVG and a PNG file for every chart.
//!
//! The page is deterministic: the same [`Report`] gives the same bytes. It holds
//! no timestamp except what the caller puts in [`Report::generated_by`]. All
//! text is HTML-escaped.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::plot::{self, Chart, PlotError};

/// How far a section reproduces the paper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Our numbers agree with the paper's.
    Reproduced,
    /// Every check agrees or is a known gap (outside the paper's bounds,
    /// inside the bounds the experiment file records on ours); the text
    /// names the gaps.
    KnownGap(String),
    /// Some of the figure agrees; the text says what differs.
    Partial(String),
    /// Not run yet; the text says what it waits for (e.g. "the Early
    /// Retransmit series arrives with the latency mechanisms").
    Pending(String),
    /// The runs produced no data: nothing was reproduced.
    NoData(String),
}

impl Status {
    fn label(&self) -> &'static str {
        match self {
            Status::Reproduced => "Reproduced",
            Status::KnownGap(_) => "Known gap",
            Status::Partial(_) => "Partial",
            Status::Pending(_) => "Pending",
            Status::NoData(_) => "No data",
        }
    }

    fn class(&self) -> &'static str {
        match self {
            Status::Reproduced => "reproduced",
            Status::KnownGap(_) => "known-gap",
            Status::Partial(_) => "partial",
            Status::Pending(_) => "pending",
            Status::NoData(_) => "no-data",
        }
    }

    fn reason(&self) -> Option<&str> {
        match self {
            Status::Reproduced => None,
            Status::KnownGap(why)
            | Status::Partial(why)
            | Status::Pending(why)
            | Status::NoData(why) => Some(why),
        }
    }
}

/// A table of text cells. Rows shorter than the header are padded with empty
/// cells; an empty table (no headers, no rows) is not shown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// One reproduced figure or table.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// Anchor and identity, e.g. `seed000-fig2`: letters, digits, `-`, `_`
    /// and `.`; unique within the report.
    pub id: String,
    /// E.g. "Seed 000, Fig. 2: MTT per message, 4-message bursts, 2000 kbit/s, 15 ms".
    pub title: String,
    /// Which paper and figure.
    pub source: String,
    /// The paper's result in words and numbers.
    pub paper_claim: String,
    /// `(file stem, chart)`: written as `<stem>.svg` and `<stem>.png`. A stem
    /// is letters, digits, `-`, `_` and `.`, unique within the report.
    pub charts: Vec<(String, Chart)>,
    /// Our numbers beside the paper's.
    pub comparison: Table,
    /// Further tables, each with a caption (e.g. seed 001's Table 2, ours
    /// beside the paper's rows).
    pub tables: Vec<(String, Table)>,
    /// Explanations of the differences.
    pub notes: Vec<String>,
    pub status: Status,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub title: String,
    /// Paragraphs shown at the top.
    pub summary: Vec<String>,
    pub sections: Vec<Section>,
    /// How the report was made, e.g. "brisk 0.1.0, seed 1, 40 runs, 12.3 s".
    pub generated_by: String,
}

/// Why the report was not written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Plot(#[from] PlotError),
    #[error(
        "section {section:?}: {what} {name:?} must be non-empty letters, digits, '-', '_' or '.'"
    )]
    BadName {
        section: String,
        what: &'static str,
        name: String,
    },
    #[error("{what} {name:?} is used twice; each must be unique in the report")]
    Duplicate { what: &'static str, name: String },
}

/// Writes `<stem>.svg` and `<stem>.png` for every chart and then `index.html`
/// into `out_dir` (created if missing), and returns the written paths in that
/// order. Section ids and chart stems are checked before anything is written.
pub fn write_report(out_dir: &Path, report: &Report) -> Result<Vec<PathBuf>, ReportError> {
    validate(report)?;
    std::fs::create_dir_all(out_dir).map_err(|source| ReportError::Io {
        path: out_dir.to_path_buf(),
        source,
    })?;
    let mut written = Vec::new();
    for section in &report.sections {
        for (stem, chart) in &section.charts {
            let svg = out_dir.join(format!("{stem}.svg"));
            plot::render_svg(chart, &svg)?;
            written.push(svg);
            let png = out_dir.join(format!("{stem}.png"));
            plot::render_png(chart, &png)?;
            written.push(png);
        }
    }
    let index = out_dir.join("index.html");
    std::fs::write(&index, render_html(report)).map_err(|source| ReportError::Io {
        path: index.clone(),
        source,
    })?;
    written.push(index);
    Ok(written)
}

/// A name safe as a file stem, an HTML id and a URL fragment without escaping.
fn is_safe_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn validate(report: &Report) -> Result<(), ReportError> {
    let mut ids = std::collections::BTreeSet::new();
    let mut stems = std::collections::BTreeSet::new();
    for section in &report.sections {
        let bad = |what, name: &str| ReportError::BadName {
            section: section.id.clone(),
            what,
            name: name.to_string(),
        };
        if !is_safe_name(&section.id) {
            return Err(bad("section id", &section.id));
        }
        if !ids.insert(section.id.as_str()) {
            return Err(ReportError::Duplicate {
                what: "section id",
                name: section.id.clone(),
            });
        }
        for (stem, _) in &section.charts {
            if !is_safe_name(stem) || stem == "index" {
                return Err(bad("chart file stem", stem));
            }
            if !stems.insert(stem.as_str()) {
                return Err(ReportError::Duplicate {
                    what: "chart file stem",
                    name: stem.clone(),
                });
            }
        }
    }
    Ok(())
}

/// `text` with `&`, `<`, `>`, `"` and `'` replaced by character references,
/// safe in element content and in quoted attribute values.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

const STYLE: &str = "\
body{font-family:-apple-system,'Segoe UI',Roboto,'DejaVu Sans',Arial,sans-serif;\
max-width:1100px;margin:0 auto;padding:1.5em;color:#1d1d1f;line-height:1.5}
h1{margin-bottom:.2em}
h2{margin-top:0;font-size:1.35em}
.generated{color:#666;font-size:.9em;margin-top:0}
nav ol{padding-left:1.4em}
nav li{margin:.25em 0}
section.fig{border-top:1px solid #ddd;padding-top:1.2em;margin-top:2em}
.badge{display:inline-block;font-size:.75em;font-weight:600;padding:.1em .6em;\
border-radius:1em;vertical-align:middle;margin-left:.4em;white-space:nowrap}
.badge.reproduced{background:#d8f3dc;color:#1b5e20;border:1px solid #74c69d}
.badge.known-gap{background:#fff3cd;color:#7a4f01;border:1px solid #f0c36d}
.badge.partial{background:#fde2e1;color:#8a1c1c;border:1px solid #e8a09a}
.badge.pending{background:#e9ecef;color:#495057;border:1px solid #adb5bd}
.badge.no-data{background:#e9ecef;color:#8a1c1c;border:1px solid #adb5bd}
td.agrees{color:#1b5e20}
td.known-gap{background:#fff3cd;color:#7a4f01}
td.differs{background:#fde2e1;color:#8a1c1c}
.status-reason{color:#555;font-style:italic}
.source{color:#555;font-size:.9em}
.claim{border-left:4px solid #0072b2;background:#f3f8fc;margin:1em 0;padding:.6em 1em}
figure{margin:1em 0}
figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.9em;color:#555}
div.table-wrap{overflow-x:auto;max-width:100%;margin:1em 0}
table{border-collapse:collapse;margin:0;font-size:.92em}
th,td{border:1px solid #ccc;padding:.3em .7em;text-align:left}
th{background:#f3f3f3}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.nochart{color:#666;font-style:italic}
";

/// Whether a table cell reads as a number (right-aligned): e.g. `-41.5`,
/// `64%`, `1,005.5 ms`, `110-200`.
fn is_numeric(cell: &str) -> bool {
    let t = cell.trim();
    let t = t.strip_suffix("ms").unwrap_or(t).trim_end();
    let t = t.strip_suffix('%').unwrap_or(t);
    !t.is_empty()
        && t.chars().any(|c| c.is_ascii_digit())
        && t.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | ',' | '-' | '+' | '±' | ' ' | '–'))
}

/// The class of a check cell: green when it agrees, amber for a known gap,
/// red when it differs or ours is not available.
fn check_class(cell: &str) -> Option<&'static str> {
    if cell.starts_with("agrees") {
        Some(" class=\"agrees\"")
    } else if cell.starts_with("known gap") {
        Some(" class=\"known-gap\"")
    } else if cell.starts_with("differs") || cell.starts_with("not available") {
        Some(" class=\"differs\"")
    } else {
        None
    }
}

fn badge(status: &Status) -> String {
    format!(
        r#"<span class="badge {}">{}</span>"#,
        status.class(),
        status.label()
    )
}

/// The text of `index.html` for `report` (no files are needed to make it).
pub fn render_html(report: &Report) -> String {
    let mut h = String::new();
    let title = escape_html(&report.title);
    // `write!` to a String cannot fail.
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
         <header>\n<h1>{title}</h1>\n"
    );
    if !report.generated_by.is_empty() {
        let _ = writeln!(
            h,
            "<p class=\"generated\">Generated by {}</p>",
            escape_html(&report.generated_by)
        );
    }
    h.push_str("</header>\n");

    for paragraph in &report.summary {
        let _ = writeln!(h, "<p>{}</p>", escape_html(paragraph));
    }
    let count = |class: &str| {
        report
            .sections
            .iter()
            .filter(|s| s.status.class() == class)
            .count()
    };
    let _ = writeln!(
        h,
        "<p class=\"tally\">{} sections: {} reproduced, {} with known gaps only, {} partial \
         (a check differs), {} pending, {} without data.</p>",
        report.sections.len(),
        count("reproduced"),
        count("known-gap"),
        count("partial"),
        count("pending"),
        count("no-data")
    );

    if !report.sections.is_empty() {
        h.push_str("<nav>\n<h2>Contents</h2>\n<ol>\n");
        for s in &report.sections {
            let _ = writeln!(
                h,
                "<li><a href=\"#{}\">{}</a> {}</li>",
                s.id,
                escape_html(&s.title),
                badge(&s.status)
            );
        }
        h.push_str("</ol>\n</nav>\n");
    }

    for s in &report.sections {
        section_html(&mut h, s);
    }

    h.push_str("</body>\n</html>\n");
    h
}

fn section_html(h: &mut String, s: &Section) {
    let _ = writeln!(
        h,
        "<section class=\"fig\" id=\"{}\">\n<h2>{} {}</h2>",
        s.id,
        escape_html(&s.title),
        badge(&s.status)
    );
    if let Some(reason) = s.status.reason() {
        let _ = writeln!(
            h,
            "<p class=\"status-reason\">{}: {}</p>",
            s.status.label(),
            escape_html(reason)
        );
    }
    if !s.source.is_empty() {
        let _ = writeln!(
            h,
            "<p class=\"source\">Source: {}</p>",
            escape_html(&s.source)
        );
    }
    if !s.paper_claim.is_empty() {
        let _ = writeln!(
            h,
            "<blockquote class=\"claim\"><strong>The paper:</strong> {}</blockquote>",
            escape_html(&s.paper_claim)
        );
    }
    if s.charts.is_empty() {
        h.push_str("<p class=\"nochart\">No chart yet.</p>\n");
    }
    let (w, ht) = plot::SIZE;
    for (stem, chart) in &s.charts {
        let caption = escape_html(&chart.title);
        let _ = writeln!(
            h,
            "<figure>\n<img src=\"{stem}.svg\" alt=\"{caption}\" width=\"{w}\" height=\"{ht}\">\n\
             <figcaption>{caption} (<a href=\"{stem}.png\">PNG</a>, \
             <a href=\"{stem}.svg\">SVG</a>)</figcaption>\n</figure>"
        );
    }
    table_html(h, &s.comparison);
    for (caption, table) in &s.tables {
        if !caption.is_empty() {
            let _ = writeln!(h, "<h3>{}</h3>", escape_html(caption));
        }
        table_html(h, table);
    }
    if !s.notes.is_empty() {
        h.push_str("<h3>Notes</h3>\n<ul class=\"notes\">\n");
        for note in &s.notes {
            let _ = writeln!(h, "<li>{}</li>", escape_html(note));
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</section>\n");
}

fn table_html(h: &mut String, t: &Table) {
    if t.headers.is_empty() && t.rows.is_empty() {
        return;
    }
    // Wide tables scroll sideways inside their box instead of widening the page.
    h.push_str("<div class=\"table-wrap\">\n<table>\n");
    if !t.headers.is_empty() {
        h.push_str("<thead><tr>");
        for cell in &t.headers {
            let _ = write!(h, "<th>{}</th>", escape_html(cell));
        }
        h.push_str("</tr></thead>\n");
    }
    h.push_str("<tbody>\n");
    for row in &t.rows {
        h.push_str("<tr>");
        let pad = t.headers.len().saturating_sub(row.len());
        for cell in row
            .iter()
            .map(String::as_str)
            .chain(std::iter::repeat_n("", pad))
        {
            let class = if is_numeric(cell) {
                " class=\"num\""
            } else {
                check_class(cell).unwrap_or_default()
            };
            let _ = write!(h, "<td{class}>{}</td>", escape_html(cell));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody>\n</table>\n</div>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::{Point, Series, SeriesStyle};

    /// A fresh directory under the system temp dir for one test.
    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("brisk-lab-report-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn chart(title: &str) -> Chart {
        Chart {
            title: title.into(),
            x_label: "TSN".into(),
            y_label: "MTT (ms)".into(),
            series: vec![
                Series::new(
                    "No loss",
                    (1..=8)
                        .map(|i| Point::new(i as f64, 16.0 + i as f64))
                        .collect(),
                    SeriesStyle::Line,
                ),
                Series::new(
                    "Standard",
                    vec![Point::new(4.0, 180.0), Point::new(8.0, 150.0)],
                    SeriesStyle::Markers,
                ),
            ],
            x_range: None,
            y_range: None,
            x_categories: Vec::new(),
        }
    }

    fn report() -> Report {
        Report {
            title: "Brisk reproduction report".into(),
            summary: vec!["Seeds 000 & 001 <simulated>.".into()],
            sections: vec![
                Section {
                    id: "seed000-fig2".into(),
                    title: "Seed 000, Fig. 2: MTT < 200 ms & more".into(),
                    source: "Seed 000, Fig. 2".into(),
                    paper_claim: "Largest reduction 64% (TSN 12); mean reduction 41%".into(),
                    charts: vec![("seed000-fig2".into(), chart("MTT per TSN"))],
                    comparison: Table {
                        headers: vec!["metric".into(), "paper".into(), "ours".into()],
                        rows: vec![
                            vec!["mean reduction".into(), "41%".into(), "39.5%".into()],
                            vec!["largest reduction".into(), "64%".into()],
                        ],
                    },
                    tables: vec![],
                    notes: vec!["Message size is 200 bytes \"as assumed\".".into()],
                    status: Status::Partial("Early Retransmit series pending".into()),
                },
                Section {
                    id: "seed001-table2".into(),
                    title: "Seed 001, Table 2".into(),
                    source: "Seed 001, Table 2".into(),
                    paper_claim: "RTT 0: timeout 1005.5 ms".into(),
                    charts: vec![],
                    comparison: Table::default(),
                    tables: vec![],
                    notes: vec![],
                    status: Status::Pending(
                        "the thin-stream mechanisms arrive with the latency work".into(),
                    ),
                },
            ],
            generated_by: "brisk 0.1.0, seed 1, 3 runs".into(),
        }
    }

    #[test]
    fn report_writes_charts_and_a_linked_escaped_index() {
        let dir = temp_dir("two-sections");
        let written = write_report(&dir, &report()).unwrap();
        let names: Vec<_> = written
            .iter()
            .map(|p| p.file_name().unwrap().to_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["seed000-fig2.svg", "seed000-fig2.png", "index.html"]
        );
        for path in &written {
            assert!(
                std::fs::metadata(path).unwrap().len() > 0,
                "{path:?} is empty"
            );
        }
        let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"));
        for id in ["seed000-fig2", "seed001-table2"] {
            assert!(html.contains(&format!("id=\"{id}\"")), "no section {id}");
            assert!(
                html.contains(&format!("href=\"#{id}\"")),
                "no contents link to {id}"
            );
        }
        assert!(html.contains("Seed 000, Fig. 2: MTT &lt; 200 ms &amp; more"));
        assert!(!html.contains("MTT < 200"));
        assert!(html.contains("Seeds 000 &amp; 001 &lt;simulated&gt;."));
        assert!(html.contains("&quot;as assumed&quot;"));
        // Every local link and image points at a file that exists.
        for attr in ["src=\"", "href=\""] {
            for target in html.split(attr).skip(1) {
                let target = &target[..target.find('"').unwrap()];
                if !target.starts_with('#') {
                    assert!(dir.join(target).is_file(), "{target} does not exist");
                }
            }
        }
        assert!(html.contains("<img src=\"seed000-fig2.svg\""));
        assert!(html.contains("<a href=\"seed000-fig2.png\">PNG</a>"));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn status_badges_and_reasons_appear() {
        let mut r = report();
        r.sections.push(Section {
            id: "seed000-fig3".into(),
            status: Status::Reproduced,
            charts: vec![],
            ..r.sections[1].clone()
        });
        let html = render_html(&r);
        assert!(html.contains(r#"<span class="badge partial">Partial</span>"#));
        assert!(html.contains(r#"<span class="badge pending">Pending</span>"#));
        assert!(html.contains(r#"<span class="badge reproduced">Reproduced</span>"#));
        assert!(html.contains("Pending: the thin-stream mechanisms arrive with the latency work"));
        assert!(html.contains("Partial: Early Retransmit series pending"));
        assert!(html.contains(
            "3 sections: 1 reproduced, 0 with known gaps only, 1 partial (a check differs), \
             1 pending, 0 without data."
        ));
        // Badges appear in the contents and in each section heading.
        assert_eq!(html.matches("badge pending").count(), 2);
    }

    #[test]
    fn a_section_without_data_and_one_with_known_gaps_say_so_and_checks_are_coloured() {
        let mut r = report();
        r.sections[0].status = Status::NoData("the runs recorded no data".into());
        r.sections[1].status = Status::KnownGap("Fig. 6".into());
        r.sections[1].comparison.rows = vec![
            vec!["a".into(), "1".into(), "1".into(), "agrees (0 to 2)".into()],
            vec![
                "b".into(),
                "1".into(),
                "5".into(),
                "known gap (paper 0 to 2)".into(),
            ],
            vec![
                "c".into(),
                "1".into(),
                "9".into(),
                "differs (expected 0 to 2)".into(),
            ],
        ];
        let html = render_html(&r);
        assert!(html.contains(r#"<span class="badge no-data">No data</span>"#));
        assert!(html.contains("No data: the runs recorded no data"));
        assert!(!html.contains(">Reproduced<"));
        assert!(html.contains(r#"<span class="badge known-gap">Known gap</span>"#));
        assert!(html.contains(r#"<td class="agrees">agrees (0 to 2)</td>"#));
        assert!(html.contains(r#"<td class="known-gap">known gap (paper 0 to 2)</td>"#));
        assert!(html.contains(r#"<td class="differs">differs (expected 0 to 2)</td>"#));
    }

    #[test]
    fn page_is_self_contained_and_deterministic() {
        let html = render_html(&report());
        assert_eq!(html, render_html(&report()));
        assert!(!html.contains("<script"));
        assert!(!html.contains("http://") && !html.contains("https://"));
        assert!(!html.contains("<link"));
        assert!(html.contains("<style>"));
    }

    #[test]
    fn comparison_table_pads_short_rows_and_aligns_numbers() {
        let html = render_html(&report());
        assert!(html.contains("<th>metric</th><th>paper</th><th>ours</th>"));
        assert!(
            html.contains("<tr><td>largest reduction</td><td class=\"num\">64%</td><td></td></tr>")
        );
        assert!(is_numeric("1,005.5 ms") && is_numeric("-41.5") && is_numeric("110-200"));
        assert!(!is_numeric("timeout") && !is_numeric("TSN 12") && !is_numeric("-"));
    }

    #[test]
    fn wide_tables_scroll_in_their_own_box() {
        let mut r = report();
        r.sections[0].tables.push((
            "Fifteen columns".into(),
            Table {
                headers: (1..=15)
                    .map(|i| format!("a long column header {i}"))
                    .collect(),
                rows: vec![(1..=15).map(|i| format!("{i}.5")).collect()],
            },
        ));
        let html = render_html(&r);
        let tables = html.matches("<table>").count();
        assert_eq!(tables, 2, "the comparison and the wide table");
        assert_eq!(
            html.matches("<div class=\"table-wrap\">\n<table>").count(),
            tables,
            "every table is wrapped"
        );
        assert_eq!(html.matches("</table>\n</div>").count(), tables);
        // The box scrolls sideways; the page does not.
        let css = &html[html.find("<style>").unwrap()..html.find("</style>").unwrap()];
        assert!(css.contains("div.table-wrap{overflow-x:auto"), "{css}");
    }

    #[test]
    fn a_pending_section_without_charts_says_so() {
        let html = render_html(&report());
        let pending = &html[html.find("id=\"seed001-table2\"").unwrap()..];
        assert!(pending.contains("No chart yet."));
        assert!(!pending.contains("<table>"));
    }

    #[test]
    fn unsafe_or_duplicate_names_are_refused_before_writing() {
        let dir = temp_dir("refused");
        let mut r = report();
        r.sections[0].charts[0].0 = "../escape".into();
        let e = write_report(&dir, &r).unwrap_err();
        assert!(matches!(e, ReportError::BadName { .. }), "{e}");
        assert!(!dir.exists(), "nothing may be written");

        let mut r = report();
        r.sections[1].id = "seed000-fig2".into();
        let e = write_report(&dir, &r).unwrap_err();
        assert!(e.to_string().contains("seed000-fig2"), "{e}");

        let mut r = report();
        let dup = r.sections[0].charts[0].clone();
        r.sections[1].charts.push(dup);
        assert!(matches!(
            write_report(&dir, &r),
            Err(ReportError::Duplicate { .. })
        ));

        let mut r = report();
        r.sections[0].id = "has space".into();
        assert!(write_report(&dir, &r).is_err());
        assert!(!dir.exists());
    }

    #[test]
    fn unwritable_output_dir_is_an_error_naming_the_path() {
        let base = temp_dir("unwritable");
        std::fs::create_dir_all(&base).unwrap();
        let file = base.join("a-file");
        std::fs::write(&file, b"x").unwrap();
        let e = write_report(&file.join("out"), &report()).unwrap_err();
        assert!(e.to_string().contains("a-file"), "{e}");
        std::fs::remove_dir_all(base).unwrap();
    }

    #[test]
    fn escape_html_replaces_markup_characters() {
        assert_eq!(
            escape_html(r#"<a href="x">'b' & c</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;b&#39; &amp; c&lt;/a&gt;"
        );
        assert_eq!(escape_html("plain ± ü"), "plain ± ü");
    }
}
