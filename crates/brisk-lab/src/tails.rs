//! The tail of message latency per variant and sweep point, with its 95%
//! bootstrap interval over runs (`bootstrap.rs`), and the quantities that
//! compare two variants' tails: `p99-ratio`, `bytes-ratio` and `never-worse`.
//!
//! **How a check reads an interval.** With two or more runs of each variant
//! at a point, a ratio has an interval, and a check passes only on it: with
//! `max`, when the interval's upper bound is at most the bound at every point
//! (the quantity's `high` is the largest upper bound); with `min`, when its
//! lower bound is at least the bound at every point (`low` is the smallest
//! lower bound). With one run there is no interval: the raw ratio is
//! compared and the text says so; a check that cannot do without one says
//! `ci = true` and is refused at load with one replication.

use std::collections::BTreeMap;

use crate::bootstrap::{self, interval, pooled_quantile, ratio_interval, weighted_mean};
use crate::experiment::Experiment;
use crate::figfmt::Quantity;
use crate::flowfigs::{PointFilter, describe};
use crate::output::PointKey;
use crate::runner::Record;

/// A half-width above this share of the estimate (percent) is flagged: the
/// issue asks for every p99 within ±10%.
pub const TARGET_HALF_WIDTH_PCT: f64 = 10.0;

/// One variant at one point: per run, its messages' MTTs (sorted), its
/// bottleneck bytes per message, spurious retransmissions and share
/// delivered (a run's flows pooled).
#[derive(Debug, Default)]
pub(crate) struct Cell {
    pub mtts: Vec<Vec<f64>>,
    pub bytes: Vec<f64>,
    pub spurious: Vec<f64>,
    pub delivered: Vec<f64>,
}

/// An estimate with its 95% interval, when the runs give one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Estimate {
    pub value: f64,
    pub ci: Option<(f64, f64)>,
}

impl Estimate {
    /// `12.3 [11.0, 13.9]`, or the value alone.
    pub fn text(&self, digits: usize) -> String {
        match self.ci {
            Some((lo, hi)) => format!("{:.digits$} [{lo:.digits$}, {hi:.digits$}]", self.value),
            None => format!("{:.digits$}", self.value),
        }
    }

    /// The interval's half-width in percent of the value.
    pub fn half_width_pct(&self) -> Option<f64> {
        self.ci.map(|ci| bootstrap::half_width_pct(self.value, ci))
    }
}

/// What is compared: the 99th percentile MTT (pooled over runs) or the
/// mean bottleneck bytes per message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stat {
    P99,
    Bytes,
}

impl Stat {
    fn name(self) -> &'static str {
        match self {
            Stat::P99 => "p99",
            Stat::Bytes => "bytes",
        }
    }
}

impl Cell {
    fn runs(&self, stat: Stat) -> usize {
        match stat {
            Stat::P99 => self.mtts.len(),
            Stat::Bytes => self.bytes.len(),
        }
    }

    /// The statistic over the runs drawn `counts` times each.
    fn of(&self, stat: Stat, counts: &[u32]) -> Option<f64> {
        match stat {
            Stat::P99 => pooled_quantile(&self.mtts, counts, 0.99),
            Stat::Bytes => weighted_mean(&self.bytes, counts),
        }
    }

    fn all(&self, stat: Stat) -> Option<f64> {
        self.of(stat, &vec![1; self.runs(stat)])
    }
}

/// Every (variant, point) cell of a flow experiment's records.
pub(crate) struct Tails<'a> {
    exp: &'a Experiment,
    pub cells: BTreeMap<(usize, PointKey), Cell>,
}

impl<'a> Tails<'a> {
    pub fn of(exp: &'a Experiment, records: &[Record]) -> Tails<'a> {
        // (variant, point) -> replication -> values of the run.
        type Runs = BTreeMap<(usize, PointKey), BTreeMap<u32, Vec<f64>>>;
        let (mut mtts, mut bytes, mut spurious, mut delivered) =
            (Runs::new(), Runs::new(), Runs::new(), Runs::new());
        for r in records {
            let into = match r.metric.as_str() {
                "mtt_ms" => &mut mtts,
                "bottleneck_bytes_per_message" => &mut bytes,
                "spurious_retransmissions" => &mut spurious,
                "delivered_pct" => &mut delivered,
                _ => continue,
            };
            let Some(vi) = exp.variants.iter().position(|v| v.name == r.variant) else {
                continue;
            };
            into.entry((vi, PointKey::of(r)))
                .or_default()
                .entry(r.replication)
                .or_default()
                .push(r.value);
        }
        let mut cells: BTreeMap<(usize, PointKey), Cell> = BTreeMap::new();
        for (k, runs) in mtts {
            let c = cells.entry(k).or_default();
            c.mtts = runs
                .into_values()
                .map(|mut v| {
                    v.sort_by(f64::total_cmp);
                    v
                })
                .collect();
        }
        // A run's flows: their mean.
        let per_run = |runs: BTreeMap<u32, Vec<f64>>| -> Vec<f64> {
            runs.into_values()
                .filter_map(|v| crate::stats::mean(&v))
                .collect()
        };
        for (k, runs) in bytes {
            cells.entry(k).or_default().bytes = per_run(runs);
        }
        for (k, runs) in spurious {
            cells.entry(k).or_default().spurious = per_run(runs);
        }
        for (k, runs) in delivered {
            cells.entry(k).or_default().delivered = per_run(runs);
        }
        Tails { exp, cells }
    }

    fn seed(&self, what: String) -> u64 {
        bootstrap::seed_for(self.exp.seed, &what)
    }

    /// A variant's statistic at a point, with its interval.
    pub fn estimate(&self, stat: Stat, vi: usize, p: &PointKey) -> Option<Estimate> {
        let c = self.cells.get(&(vi, *p))?;
        let value = c.all(stat)?;
        let seed = self.seed(format!(
            "{}|{}|{p:?}",
            stat.name(),
            self.exp.variants[vi].name
        ));
        let ci = interval(seed, c.runs(stat), |n| c.of(stat, n));
        Some(Estimate { value, ci })
    }

    /// A's statistic over B's at a point, with the interval of the ratio
    /// (each variant's runs resampled independently).
    pub fn ratio(&self, stat: Stat, a: usize, b: usize, p: &PointKey) -> Option<Estimate> {
        let (ca, cb) = (self.cells.get(&(a, *p))?, self.cells.get(&(b, *p))?);
        let value = ca.all(stat)? / cb.all(stat)?;
        let seed = self.seed(format!(
            "{}-ratio|{}|{}|{p:?}",
            stat.name(),
            self.exp.variants[a].name,
            self.exp.variants[b].name
        ));
        let ci = ratio_interval(
            seed,
            ca.runs(stat),
            |n| ca.of(stat, n),
            cb.runs(stat),
            |n| cb.of(stat, n),
        );
        Some(Estimate { value, ci })
    }

    /// The ratio at every point both variants ran that `at` admits.
    fn ratios(
        &self,
        stat: Stat,
        a: usize,
        b: usize,
        at: &PointFilter,
    ) -> Vec<(PointKey, Estimate)> {
        self.cells
            .keys()
            .filter(|(v, p)| *v == a && at.matches(p))
            .filter_map(|(_, p)| Some((*p, self.ratio(stat, a, b, p)?)))
            .collect()
    }
}

fn variant_index(exp: &Experiment, name: &str, kind: &str) -> Result<usize, String> {
    exp.variants
        .iter()
        .position(|v| v.name == name)
        .ok_or_else(|| format!("{kind}: unknown variant `{name}`"))
}

/// `p99-ratio:A:B` and `bytes-ratio:A:B`: A's statistic over B's at every
/// shared point matching `at`. The text gives the point with the largest
/// upper bound (the largest ratio without intervals), its ratio and
/// interval; `high` is the largest upper bound and `low` the smallest lower
/// bound over the points (see the module documentation).
pub(crate) fn ratio_quantity(
    exp: &Experiment,
    records: &[Record],
    kind: &str,
    a: &str,
    b: &str,
    at: &PointFilter,
) -> Result<Quantity, String> {
    let stat = if kind == "p99-ratio" {
        Stat::P99
    } else {
        Stat::Bytes
    };
    let (ai, bi) = (variant_index(exp, a, kind)?, variant_index(exp, b, kind)?);
    let ratios = Tails::of(exp, records).ratios(stat, ai, bi, at);
    let hi = |e: &Estimate| e.ci.map_or(e.value, |c| c.1);
    let lo = |e: &Estimate| e.ci.map_or(e.value, |c| c.0);
    let (p, worst) = ratios
        .iter()
        .max_by(|x, y| hi(&x.1).total_cmp(&hi(&y.1)))
        .ok_or_else(|| format!("{kind}: the two variants share no sweep point"))?;
    let low = ratios
        .iter()
        .map(|x| lo(&x.1))
        .fold(f64::INFINITY, f64::min);
    Ok(Quantity {
        text: ratio_text(worst, p, ratios.len()),
        low,
        high: hi(worst),
        ci: worst.ci,
    })
}

/// `2.35 [2.10, 2.61] at 64 B, loss 10%`, or with one run `2.35 (one run:
/// no interval) at ...`.
fn ratio_text(e: &Estimate, p: &PointKey, points: usize) -> String {
    let one = if e.ci.is_none() {
        " (one run: no interval)"
    } else {
        ""
    };
    let at = if points > 1 {
        format!(" at the worst of {points} points, {}", describe(p))
    } else {
        String::new()
    };
    format!("{}{one}{at}", e.text(ratio_digits(e.value)))
}

/// Decimals for a ratio: two, or four below 0.1 (0.004 is not 0.00).
fn ratio_digits(x: f64) -> usize {
    if x != 0.0 && x.abs() < 0.1 { 4 } else { 2 }
}

/// `never-worse:A:B[:TOLERANCE]` (see `never_worse.rs`): the largest, over
/// the points matching `at`, of the evidence that A's p99 is above B's: the
/// lower bound of the ratio's interval, or with one run the ratio over
/// `1 + tolerance`. At most 1 everywhere: never (significantly) worse.
pub(crate) fn never_worse_quantity(
    exp: &Experiment,
    records: &[Record],
    args: &[&str],
    at: &PointFilter,
) -> Result<Quantity, String> {
    let (a, b, tolerance) = match args {
        [a, b] => (*a, *b, crate::never_worse::DEFAULT_TOLERANCE),
        [a, b, t] => match t.parse::<f64>() {
            Ok(t) if t.is_finite() && t >= 0.0 => (*a, *b, t),
            _ => return Err(format!("never-worse: `{t}` is not a tolerance")),
        },
        _ => return Err("expected never-worse:VARIANT:VARIANT[:TOLERANCE]".into()),
    };
    let (ai, bi) = (
        variant_index(exp, a, "never-worse")?,
        variant_index(exp, b, "never-worse")?,
    );
    let ratios = Tails::of(exp, records).ratios(Stat::P99, ai, bi, at);
    let evidence = |e: &Estimate| e.ci.map_or(e.value / (1.0 + tolerance), |c| c.0);
    let (p, worst) = ratios
        .iter()
        .max_by(|x, y| evidence(&x.1).total_cmp(&evidence(&y.1)))
        .ok_or("never-worse: the two variants share no sweep point")?;
    let x = evidence(worst);
    let d = ratio_digits(x);
    let how = match worst.ci {
        Some((lo, _)) => format!("lower bound {lo:.d$}"),
        None => format!("one run: ratio over {}", 1.0 + tolerance),
    };
    let verdict = if x > 1.0 { "worse" } else { "not worse" };
    Ok(Quantity {
        text: format!(
            "{x:.d$} ({how}; {verdict}); worst of {} points: {}, p99 ratio {}",
            ratios.len(),
            describe(p),
            worst.text(ratio_digits(worst.value))
        ),
        low: x,
        high: x,
        ci: worst.ci,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::SweepValues;

    /// The application case's twin, whose variants the records name.
    fn twin() -> Experiment {
        Experiment::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../experiments/webrtc-app.toml"),
        )
        .unwrap()
    }

    /// One run of `variant` at `loss`: 100 messages of 50 ms, the last
    /// `slow` of them at `tail` ms; `bytes` per message.
    fn run(variant: &str, loss: f64, rep: u32, slow: usize, tail: f64, bytes: f64) -> Vec<Record> {
        let base = Record {
            experiment: "webrtc-app".into(),
            variant: variant.into(),
            bandwidth_kbps: 10_000,
            delay_ms: 50.0,
            replication: rep,
            position: None,
            flow: 0,
            tsn: None,
            metric: "mtt_ms".into(),
            value: 0.0,
            sweep: Some(Box::new(SweepValues {
                message_size: Some(64),
                loss: Some(loss),
                ..Default::default()
            })),
        };
        let mut out: Vec<Record> = (0..100u64)
            .map(|i| Record {
                tsn: Some(i + 1),
                value: if i >= 100 - slow as u64 { tail } else { 50.0 },
                ..base.clone()
            })
            .collect();
        out.push(Record {
            metric: "bottleneck_bytes_per_message".into(),
            value: bytes,
            ..base
        });
        out
    }

    /// `runs` runs of `variant` whose tails are `tails[i % len]` ms.
    fn runs(variant: &str, loss: f64, n: u32, tails: &[f64]) -> Vec<Record> {
        (0..n)
            .flat_map(|r| run(variant, loss, r, 2, tails[r as usize % tails.len()], 100.0))
            .collect()
    }

    fn q(exp: &Experiment, records: &[Record], kind: &str, args: &str) -> Quantity {
        let parts: Vec<&str> = args.split(':').collect();
        let at = PointFilter::default();
        match kind {
            "never-worse" => never_worse_quantity(exp, records, &parts, &at),
            _ => ratio_quantity(exp, records, kind, parts[0], parts[1], &at),
        }
        .unwrap()
    }

    #[test]
    fn a_ratio_check_reads_the_upper_bound_of_its_interval() {
        let exp = twin();
        // A's tails alternate 100 and 300 ms from run to run, B's are 400:
        // the pooled ratio is 0.75, but resampling the runs puts the upper
        // bound at 300/400 or near it, above a bound of 0.6 that the raw
        // ratio of some resamples meets.
        let mut records = runs("brisk-low-latency", 0.05, 8, &[100.0, 300.0]);
        records.extend(runs("tcp-linux", 0.05, 8, &[400.0]));
        let r = q(&exp, &records, "p99-ratio", "brisk-low-latency:tcp-linux");
        let (lo, hi) = r.ci.expect("8 runs each: an interval");
        assert!(lo < 0.5 && hi >= 0.75, "{lo} {hi}");
        assert_eq!(r.high, hi);
        assert_eq!(r.low, lo);
        assert!(r.text.contains('['), "{}", r.text);
        // Identical runs: the interval is the ratio itself.
        let mut same = runs("brisk-low-latency", 0.05, 4, &[200.0]);
        same.extend(runs("tcp-linux", 0.05, 4, &[400.0]));
        let r = q(&exp, &same, "p99-ratio", "brisk-low-latency:tcp-linux");
        assert_eq!(r.ci, Some((0.5, 0.5)));
        assert_eq!(
            q(&exp, &same, "bytes-ratio", "brisk-low-latency:tcp-linux").high,
            1.0
        );
    }

    #[test]
    fn never_worse_fails_only_where_the_whole_interval_is_above_one() {
        let exp = twin();
        // At 2% A is clearly slower (every run 500 against 200); at 5% A is
        // as fast as B on average but noisier.
        let mut records = runs("brisk-low-latency", 0.02, 6, &[500.0]);
        records.extend(runs("brisk-signaling", 0.02, 6, &[200.0]));
        records.extend(runs("brisk-low-latency", 0.05, 6, &[150.0, 250.0]));
        records.extend(runs("brisk-signaling", 0.05, 6, &[200.0]));
        let worse = q(
            &exp,
            &records,
            "never-worse",
            "brisk-low-latency:brisk-signaling",
        );
        assert!((worse.high - 2.5).abs() < 1e-9, "{}", worse.text);
        assert!(worse.text.contains("loss 2%"), "{}", worse.text);
        // The 5% point alone: within the noise, not worse.
        let at5: Vec<Record> = records
            .iter()
            .filter(|r| r.loss() == Some(0.05))
            .cloned()
            .collect();
        let ok = q(
            &exp,
            &at5,
            "never-worse",
            "brisk-low-latency:brisk-signaling",
        );
        assert!(ok.high <= 1.0, "{}", ok.text);
        assert!(ok.text.contains("not worse"), "{}", ok.text);
    }

    #[test]
    fn never_worse_with_one_run_allows_the_tolerance_and_no_more() {
        let exp = twin();
        let one = |a: f64, b: f64| {
            let mut r = run("brisk-low-latency", 0.1, 0, 2, a, 100.0);
            r.extend(run("brisk-rfc9260", 0.1, 0, 2, b, 100.0));
            r
        };
        let args = "brisk-low-latency:brisk-rfc9260";
        // 5% slower: within the default 10%.
        let q1 = q(&exp, &one(210.0, 200.0), "never-worse", args);
        assert!(q1.high <= 1.0 && q1.ci.is_none(), "{}", q1.text);
        assert!(q1.text.contains("one run"), "{}", q1.text);
        // 20% slower: worse.
        assert!(q(&exp, &one(240.0, 200.0), "never-worse", args).high > 1.0);
        // With a tolerance of 0.25 given, 20% is allowed.
        let wide = format!("{args}:0.25");
        assert!(q(&exp, &one(240.0, 200.0), "never-worse", &wide).high <= 1.0);
    }

    #[test]
    fn intervals_are_the_same_for_the_same_records() {
        let exp = twin();
        let mut records = runs("brisk-low-latency", 0.05, 5, &[100.0, 170.0, 260.0]);
        records.extend(runs("tcp-linux", 0.05, 5, &[300.0, 380.0]));
        let a = q(&exp, &records, "p99-ratio", "brisk-low-latency:tcp-linux");
        let b = q(&exp, &records, "p99-ratio", "brisk-low-latency:tcp-linux");
        assert_eq!((a.text, a.ci), (b.text, b.ci));
    }

    #[test]
    fn the_latency_table_shows_the_interval_its_width_and_the_price() {
        let exp = twin();
        let mut records = runs("brisk-low-latency", 0.05, 6, &[100.0, 300.0]);
        records.extend(runs("tcp-linux", 0.05, 6, &[400.0]));
        let (_, tables) = crate::flowfigs::figure(&exp, &records);
        let t = &tables[0].1;
        let col = |name: &str| t.headers.iter().position(|h| h.contains(name)).unwrap();
        let row = &t.rows[0];
        assert_eq!(row[col("variant")], "brisk-low-latency");
        assert_eq!(row[col("runs")], "6");
        assert!(row[col("p99 MTT")].contains('['), "{row:?}");
        assert!(
            row[col("half-width")].contains("wider than ±10%"),
            "{row:?}"
        );
        assert_eq!(t.rows[1][col("half-width")], "±0.0%");
        col("spurious retransmissions");
        col("bytes per message");
    }
}
