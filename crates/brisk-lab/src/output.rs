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
    pub message_size: Option<usize>,
    pub loss: Option<f64>,
    pub corrupt: Option<f64>,
    pub rate: Option<f64>,
    pub mtu: Option<usize>,
}

/// Groups records by everything but the replication and loss position, and
/// reduces each group to the experiment's statistic.
pub fn summarize(exp: &Experiment, records: &[Record]) -> Vec<SummaryRow> {
    // Borrowed keys: no strings copied per record (Fig. 7 has 423,000).
    type Key<'a> = (&'a str, PointKey, u32, Option<u64>, &'a str);
    let mut groups: BTreeMap<Key<'_>, (Vec<f64>, &Record)> = BTreeMap::new();
    for r in records.iter().filter(|r| r.experiment == exp.name) {
        let key = (
            r.variant.as_str(),
            PointKey::of(r),
            r.flow,
            r.tsn,
            r.metric.as_str(),
        );
        groups
            .entry(key)
            .or_insert_with(|| (Vec::new(), r))
            .0
            .push(r.value);
    }
    // Keep the variants in the order the file lists them.
    let order = |v: &str| {
        exp.variants
            .iter()
            .position(|x| x.name == v)
            .unwrap_or(usize::MAX)
    };
    let mut rows: Vec<(PointKey, SummaryRow)> = groups
        .into_iter()
        .map(|((variant, point, flow, tsn, metric), (values, first))| {
            let s = stats::summarize(&values);
            let (statistic, value, ci) = match exp.statistic {
                Statistic::Median => ("median", s.median.unwrap_or(f64::NAN), None),
                Statistic::MeanCi95 => ("mean", s.mean.unwrap_or(f64::NAN), s.ci95),
            };
            let row = SummaryRow {
                experiment: exp.name.clone(),
                variant: variant.to_owned(),
                bandwidth_kbps: first.bandwidth_kbps,
                delay_ms: first.delay_ms,
                flow,
                tsn,
                metric: metric.to_owned(),
                statistic,
                n: s.n,
                value,
                ci95_low: ci.map(|c| c.0),
                ci95_high: ci.map(|c| c.1),
                message_size: first.message_size(),
                loss: first.loss(),
                corrupt: first.corrupt(),
                rate: first.rate(),
                mtu: first.mtu(),
            };
            (point, row)
        })
        .collect();
    rows.sort_by(|(pa, a), (pb, b)| {
        (order(&a.variant), pa, a.flow, a.tsn, &a.metric).cmp(&(
            order(&b.variant),
            pb,
            b.flow,
            b.tsn,
            &b.metric,
        ))
    });
    rows.into_iter().map(|(_, r)| r).collect()
}

/// A sweep point as read from a record, ordered and comparable: bandwidth
/// (kbit/s), one-way delay (µs), message size, loss and corruption (parts per
/// billion), rate (milli-messages per second) and MTU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct PointKey {
    pub bandwidth_kbps: u64,
    pub delay_us: u64,
    pub message_size: Option<usize>,
    pub loss_ppb: Option<u64>,
    pub corrupt_ppb: Option<u64>,
    pub rate_milli: Option<u64>,
    pub mtu: Option<usize>,
}

/// Parts per billion of a probability.
pub fn ppb(p: f64) -> u64 {
    (p * 1e9).round() as u64
}

impl PointKey {
    pub fn of(r: &Record) -> PointKey {
        PointKey {
            bandwidth_kbps: r.bandwidth_kbps,
            delay_us: (r.delay_ms * 1000.0).round() as u64,
            message_size: r.message_size(),
            loss_ppb: r.loss().map(ppb),
            corrupt_ppb: r.corrupt().map(ppb),
            rate_milli: r.rate().map(|x| (x * 1000.0).round() as u64),
            mtu: r.mtu(),
        }
    }

    /// The key of a sweep point's values (as its records will carry them,
    /// with the message size the traffic gives it).
    pub fn of_point(p: &crate::experiment::Point, message_size: Option<usize>) -> PointKey {
        PointKey {
            bandwidth_kbps: p.bandwidth_bps / 1000,
            delay_us: p.delay.as_micros() as u64,
            message_size: p.message_size.or(message_size),
            loss_ppb: p.loss.map(ppb),
            corrupt_ppb: p.corrupt.map(ppb),
            rate_milli: p.rate.map(|x| (x * 1000.0).round() as u64),
            mtu: p.mtu,
        }
    }

    /// One-way delay, ms.
    pub fn delay_ms(&self) -> f64 {
        self.delay_us as f64 / 1000.0
    }

    pub fn loss(&self) -> Option<f64> {
        self.loss_ppb.map(|x| x as f64 / 1e9)
    }

    pub fn corrupt(&self) -> Option<f64> {
        self.corrupt_ppb.map(|x| x as f64 / 1e9)
    }

    pub fn rate(&self) -> Option<f64> {
        self.rate_milli.map(|x| x as f64 / 1000.0)
    }

    /// The point without its message size: the series a goodput-vs-size
    /// chart draws it in.
    pub fn without_size(mut self) -> PointKey {
        self.message_size = None;
        self
    }

    /// The point without its rate (the x axis of an MTT-vs-rate chart).
    pub fn without_rate(mut self) -> PointKey {
        self.rate_milli = None;
        self
    }
}

/// Writes `rows` as CSV to `path`.
pub fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> Result<(), String> {
    write_csv_rows(path, rows)
}

/// Writes `rows` as CSV with a header to `path`, from an iterator.
pub fn write_csv_rows<T: Serialize>(
    path: &Path,
    rows: impl IntoIterator<Item = T>,
) -> Result<(), String> {
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

/// Writes `text` to standard output. A reader that went away (`brisk knobs |
/// head`) is not an error: the write is dropped, never a panic as `println!`
/// would make it.
pub fn print_stdout(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}
