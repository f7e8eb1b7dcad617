//! `runs.csv` (every measured value), `summary.csv` and `summary.json` (each
//! group of replications reduced to the experiment's statistic).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::experiment::{Experiment, Statistic};
use crate::runner::Record;
use crate::stats;

/// One summarised group: the replications of one variant at one sweep point,
/// for one message (TSN) or for the whole run, and one metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryRow {
    pub experiment: String,
    pub variant: String,
    pub bandwidth_kbps: u64,
    pub delay_ms: f64,
    pub flow: u32,
    pub tsn: Option<u64>,
    pub metric: String,
    /// `median` or `mean`.
    pub statistic: &'static str,
    pub n: usize,
    pub value: f64,
    pub ci95_low: Option<f64>,
    pub ci95_high: Option<f64>,
}

/// Groups records by everything but the replication and loss position, and
/// reduces each group to the experiment's statistic.
pub fn summarize(exp: &Experiment, records: &[Record]) -> Vec<SummaryRow> {
    type Key = (String, u64, u64, u32, Option<u64>, String);
    let mut groups: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.experiment == exp.name) {
        let key = (
            r.variant.clone(),
            r.bandwidth_kbps,
            (r.delay_ms * 1000.0).round() as u64,
            r.flow,
            r.tsn,
            r.metric.clone(),
        );
        groups.entry(key).or_default().push(r.value);
    }
    // Keep the variants in the order the file lists them.
    let order = |v: &str| {
        exp.variants
            .iter()
            .position(|x| x.name == v)
            .unwrap_or(usize::MAX)
    };
    let mut rows: Vec<SummaryRow> = groups
        .into_iter()
        .map(|((variant, bw, delay_us, flow, tsn, metric), values)| {
            let s = stats::summarize(&values);
            let (statistic, value, ci) = match exp.statistic {
                Statistic::Median => ("median", s.median.unwrap_or(f64::NAN), None),
                Statistic::MeanCi95 => ("mean", s.mean.unwrap_or(f64::NAN), s.ci95),
            };
            SummaryRow {
                experiment: exp.name.clone(),
                variant,
                bandwidth_kbps: bw,
                delay_ms: delay_us as f64 / 1000.0,
                flow,
                tsn,
                metric,
                statistic,
                n: s.n,
                value,
                ci95_low: ci.map(|c| c.0),
                ci95_high: ci.map(|c| c.1),
            }
        })
        .collect();
    rows.sort_by_key(|r| {
        (
            order(&r.variant),
            r.bandwidth_kbps,
            (r.delay_ms * 1000.0).round() as u64,
            r.flow,
            r.tsn,
            r.metric.clone(),
        )
    });
    rows
}

/// Writes `rows` as CSV to `path`.
pub fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> Result<(), String> {
    let mut w = csv::Writer::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
    for row in rows {
        w.serialize(row)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    w.flush().map_err(|e| format!("{}: {e}", path.display()))
}

/// Writes `value` as pretty JSON to `path`.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), String> {
    let text =
        serde_json::to_string_pretty(value).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))
}
