//! What the experiment figures and the flow figures share: the quantity a
//! check compares, chart titles and number formatting (a leaf: `figures` and
//! `flowfigs` both use it, neither needs the other for it).

use crate::experiment::Experiment;
use crate::plot::Chart;
use crate::report::Table;

/// An evaluated `ours` quantity: its text, and the values a check compares.
#[derive(Debug)]
pub(crate) struct Quantity {
    pub text: String,
    pub low: f64,
    pub high: f64,
    /// The 95% confidence interval of a single value, when there is one.
    pub ci: Option<(f64, f64)>,
}

/// A chart title: the experiment title without its "Seed N, Fig. M: " prefix,
/// which the section heading already gives.
pub(crate) fn chart_title(exp: &Experiment) -> String {
    exp.title
        .split_once(": ")
        .map_or(exp.title.as_str(), |(_, t)| t)
        .to_owned()
}

/// A number with at most three decimals and no trailing zeros.
pub(crate) fn trim_number(x: f64) -> String {
    let s = format!("{x:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

/// Charts (file stem, chart) and tables (caption, table) of a section.
pub(crate) type Figures = (Vec<(String, Chart)>, Vec<(String, Table)>);
