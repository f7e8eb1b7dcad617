//! Turns an experiment's records into a report section: charts, a table of
//! the paper's numbers beside ours, and the checks of `[[reference]]`.

use std::collections::BTreeMap;

use crate::experiment::{Count, Dim, Experiment, Figure, Reference, Statistic, Traffic};
use crate::figfmt::{Quantity, chart_title, trim_number};
use crate::flowfigs::{self, PointFilter};
use crate::output::PointKey;
use crate::plot::{Chart, Point, Series, SeriesStyle};
use crate::report::{Section, Status, Table};
use crate::runner::{Record, RunTotals};
use crate::stats;

/// MTT values of one variant: per sweep point and TSN, the values of each
/// replication.
type Mtts = BTreeMap<PointKey, BTreeMap<u64, Vec<(u32, f64)>>>;

fn mtts(records: &[Record], variant: &str) -> Mtts {
    let mut out: Mtts = BTreeMap::new();
    for r in records {
        if r.variant == variant
            && r.metric == "mtt_ms"
            && let Some(tsn) = r.tsn
        {
            out.entry(PointKey::of(r))
                .or_default()
                .entry(tsn)
                .or_default()
                .push((r.replication, r.value));
        }
    }
    out
}

/// The statistic of one TSN's replications.
fn reduce(exp: &Experiment, values: &[(u32, f64)]) -> (f64, Option<(f64, f64)>) {
    let v: Vec<f64> = values.iter().map(|x| x.1).collect();
    let s = stats::summarize(&v);
    match exp.statistic {
        Statistic::Median => (s.median.unwrap_or(f64::NAN), None),
        Statistic::MeanCi95 => (s.mean.unwrap_or(f64::NAN), s.ci95),
    }
}

/// Per-replication means over all TSNs of one sweep point, summarised: for
/// random scenarios this is the quantity with a confidence interval.
fn point_mean(
    exp: &Experiment,
    by_tsn: &BTreeMap<u64, Vec<(u32, f64)>>,
) -> (f64, Option<(f64, f64)>) {
    let mut per_rep: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for values in by_tsn.values() {
        for (rep, v) in values {
            per_rep.entry(*rep).or_default().push(*v);
        }
    }
    let means: Vec<f64> = per_rep.values().filter_map(|v| stats::mean(v)).collect();
    let s = stats::summarize(&means);
    match exp.statistic {
        Statistic::Median => (s.median.unwrap_or(f64::NAN), None),
        Statistic::MeanCi95 => (s.mean.unwrap_or(f64::NAN), s.ci95),
    }
}

/// How a mean reduction over loss positions is read.
#[derive(Clone, Copy, PartialEq)]
enum Averaging {
    /// The mean of each message's reduction (the literal reading of seed 000's
    /// "averaged over all loss positions").
    PerMessage,
    /// The reduction of the mean MTT over the messages (the other reading).
    OfMeans,
}

/// The reduction of B against A at one sweep point, per replication over the
/// TSNs (paired on the same traffic), in percent.
fn reduction_by(
    exp: &Experiment,
    a: &BTreeMap<u64, Vec<(u32, f64)>>,
    b: &BTreeMap<u64, Vec<(u32, f64)>>,
    how: Averaging,
) -> Option<(f64, Option<(f64, f64)>)> {
    // Per replication: the (A, B) pairs of every message measured in both.
    let mut per_rep: BTreeMap<u32, Vec<(f64, f64)>> = BTreeMap::new();
    for (tsn, av) in a {
        let Some(bv) = b.get(tsn) else { continue };
        for (rep, x) in av {
            if let Some((_, y)) = bv.iter().find(|(r, _)| r == rep)
                && *x > 0.0
            {
                per_rep.entry(*rep).or_default().push((*x, *y));
            }
        }
    }
    let reductions: Vec<f64> = per_rep
        .values()
        .filter_map(|pairs| match how {
            Averaging::PerMessage => {
                let r: Vec<f64> = pairs.iter().map(|(x, y)| (x - y) / x * 100.0).collect();
                stats::mean(&r)
            }
            Averaging::OfMeans => {
                let xs: Vec<f64> = pairs.iter().map(|p| p.0).collect();
                let ys: Vec<f64> = pairs.iter().map(|p| p.1).collect();
                let (mx, my) = (stats::mean(&xs)?, stats::mean(&ys)?);
                (mx > 0.0).then(|| (mx - my) / mx * 100.0)
            }
        })
        .collect();
    let s = stats::summarize(&reductions);
    let value = match exp.statistic {
        Statistic::Median => s.median?,
        Statistic::MeanCi95 => s.mean?,
    };
    Some((
        value,
        s.ci95.filter(|_| exp.statistic == Statistic::MeanCi95),
    ))
}

fn reduction(
    exp: &Experiment,
    a: &BTreeMap<u64, Vec<(u32, f64)>>,
    b: &BTreeMap<u64, Vec<(u32, f64)>>,
) -> Option<(f64, Option<(f64, f64)>)> {
    reduction_by(exp, a, b, Averaging::PerMessage)
}

fn quantity(exp: &Experiment, records: &[Record], spec: &str) -> Result<Quantity, String> {
    let mut parts = spec.splitn(2, ':');
    let kind = parts.next().unwrap_or("");
    let rest = parts
        .next()
        .ok_or_else(|| format!("`{spec}`: expected KIND:ARGS"))?;
    let (args, at) = match rest.split_once('@') {
        Some((a, p)) => (
            a,
            PointFilter::parse(p).map_err(|e| format!("`{spec}`: {e}"))?,
        ),
        None => (rest, PointFilter::default()),
    };
    if let Some(q) = flowfigs::quantity(exp, records, kind, args, &at) {
        return q.map_err(|e| format!("`{spec}`: {e}"));
    }
    let data = |variant: &str| -> Result<BTreeMap<u64, Vec<(u32, f64)>>, String> {
        let all = mtts(records, variant);
        if all.is_empty() {
            return Err(format!("`{spec}`: no results for `{variant}`"));
        }
        all.iter()
            .find(|(k, _)| at.matches(k))
            .map(|(_, v)| v.clone())
            .ok_or_else(|| format!("`{spec}`: no results for `{variant}` at that point"))
    };
    let stat_per_tsn = |d: &BTreeMap<u64, Vec<(u32, f64)>>| -> Vec<(u64, f64)> {
        d.iter().map(|(t, v)| (*t, reduce(exp, v).0)).collect()
    };
    let one = |x: f64| Quantity {
        text: format!("{x:.1}"),
        low: x,
        high: x,
        ci: None,
    };
    match kind {
        // The largest difference, message by message, between two variants'
        // MTTs: the simulator against the emulator, say.
        "max-diff" => {
            let (a, b) = args
                .split_once(':')
                .ok_or_else(|| format!("`{spec}`: expected max-diff:VARIANT:VARIANT"))?;
            let b: BTreeMap<u64, f64> = stat_per_tsn(&data(b)?).into_iter().collect();
            let (worst, at) = stat_per_tsn(&data(a)?)
                .into_iter()
                .filter_map(|(t, x)| b.get(&t).map(|y| ((x - y).abs(), t)))
                .fold(
                    (f64::NAN, 0),
                    |m, d| if m.0.is_nan() || d.0 > m.0 { d } else { m },
                );
            if worst.is_nan() {
                return Err(format!("`{spec}`: the two variants share no message"));
            }
            Ok(Quantity {
                text: format!("{worst:.2} (TSN {at})"),
                low: worst,
                high: worst,
                ci: None,
            })
        }
        "range" => {
            let v = stat_per_tsn(&data(args)?);
            let lo = v.iter().map(|x| x.1).fold(f64::INFINITY, f64::min);
            let hi = v.iter().map(|x| x.1).fold(f64::NEG_INFINITY, f64::max);
            Ok(Quantity {
                text: format!("{lo:.1} to {hi:.1}"),
                low: lo,
                high: hi,
                ci: None,
            })
        }
        "mean" => {
            let (m, ci) = point_mean(exp, &data(args)?);
            let mut q = one(m);
            if let Some((l, h)) = ci {
                q.text = format!("{m:.1} (95% CI {l:.1} to {h:.1})");
            }
            q.ci = ci;
            Ok(q)
        }
        "position" => {
            let (variant, k) = args
                .split_once(':')
                .and_then(|(v, k)| Some((v, k.parse::<u64>().ok()?)))
                .ok_or_else(|| format!("`{spec}`: expected position:VARIANT:K"))?;
            let n = burst_len(exp).map_err(|e| format!("`{spec}`: {e}"))?;
            position_means(exp, &data(variant)?, n)
                .get(&k)
                .copied()
                .map(one)
                .ok_or_else(|| format!("`{spec}`: no messages at position {k}"))
        }
        "position-ratio" => {
            // position-ratio:A:B: at every position of the burst and sweep
            // point, A's mean MTT of the lost message over B's; the largest.
            let (a, b) = args
                .split_once(':')
                .ok_or_else(|| format!("`{spec}`: expected position-ratio:A:B"))?;
            let n = burst_len(exp).map_err(|e| format!("`{spec}`: {e}"))?;
            position_ratio(exp, records, a, b, n, &at).map_err(|e| format!("`{spec}`: {e}"))
        }
        "rise" => {
            // Mean MTT of the last message of a burst less that of the first.
            let Traffic::Bursts {
                size: Count::Fixed(n),
                ..
            } = exp.traffic
            else {
                return Err(format!("`{spec}`: a rise needs fixed-size bursts"));
            };
            let means = position_means(exp, &data(args)?, u64::from(n));
            match (means.get(&1), means.get(&u64::from(n))) {
                (Some(first), Some(last)) => Ok(Quantity {
                    text: format!("{first:.1} to {last:.1} (+{:.1})", last - first),
                    low: last - first,
                    high: last - first,
                    ci: None,
                }),
                _ => Err(format!("`{spec}`: no messages to compare")),
            }
        }
        "reduction" | "reduction-of-means" => {
            let (a, b) = args
                .split_once(':')
                .ok_or_else(|| format!("`{spec}`: expected {kind}:A:B"))?;
            let how = if kind == "reduction" {
                Averaging::PerMessage
            } else {
                Averaging::OfMeans
            };
            let (m, ci) = reduction_by(exp, &data(a)?, &data(b)?, how)
                .ok_or_else(|| format!("`{spec}`: no paired results"))?;
            let mut q = one(m);
            q.text = match ci {
                Some((l, h)) => format!("{m:.1}% (95% CI {l:.1} to {h:.1})"),
                None => format!("{m:.1}%"),
            };
            q.ci = ci;
            Ok(q)
        }
        "gain" => {
            // gain:BASE:A:B: at every sweep point, B's reduction against BASE
            // less A's, in percentage points; the smallest of them.
            let mut parts = args.splitn(3, ':');
            let (Some(base), Some(a), Some(b)) = (parts.next(), parts.next(), parts.next()) else {
                return Err(format!("`{spec}`: expected gain:BASE:A:B"));
            };
            let (base_all, a_all, b_all) =
                (mtts(records, base), mtts(records, a), mtts(records, b));
            let gains = base_all.iter().filter_map(|(point, base_d)| {
                let (ad, bd) = (a_all.get(point)?, b_all.get(point)?);
                let (ra, _) = reduction(exp, base_d, ad)?;
                let (rb, _) = reduction(exp, base_d, bd)?;
                Some((rb - ra, point))
            });
            smallest(gains, "points").ok_or_else(|| format!("`{spec}`: no paired results"))
        }
        "last-gain" => {
            // last-gain:A:B: at every sweep point, the mean MTT of the last
            // message of each burst under A less that under B (ms); the smallest.
            let (a, b) = args
                .split_once(':')
                .ok_or_else(|| format!("`{spec}`: expected last-gain:A:B"))?;
            let Traffic::Bursts {
                size: Count::Fixed(n),
                ..
            } = exp.traffic
            else {
                return Err(format!("`{spec}`: last-gain needs fixed-size bursts"));
            };
            let last = |d: &BTreeMap<u64, Vec<(u32, f64)>>| {
                position_means(exp, d, u64::from(n))
                    .get(&u64::from(n))
                    .copied()
            };
            let (a_all, b_all) = (mtts(records, a), mtts(records, b));
            let gains = a_all.iter().filter_map(|(point, ad)| {
                let bd = b_all.get(point)?;
                Some((last(ad)? - last(bd)?, point))
            });
            smallest(gains, "ms").ok_or_else(|| format!("`{spec}`: no paired results"))
        }
        "max-reduction" => {
            // max-reduction:A:B: the message whose MTT B reduces the most.
            let (a, b) = args
                .split_once(':')
                .ok_or_else(|| format!("`{spec}`: expected max-reduction:A:B"))?;
            let (ad, bd) = (data(a)?, data(b)?);
            let best = ad
                .iter()
                .filter_map(|(tsn, av)| {
                    let (x, _) = reduce(exp, av);
                    let (y, _) = reduce(exp, bd.get(tsn)?);
                    (x > 0.0).then(|| ((x - y) / x * 100.0, *tsn))
                })
                .max_by(|p, q| p.0.total_cmp(&q.0))
                .ok_or_else(|| format!("`{spec}`: no paired results"))?;
            Ok(Quantity {
                text: format!("{:.0}% (TSN {})", best.0, best.1),
                low: best.0,
                high: best.0,
                ci: None,
            })
        }
        _ => Err(format!("`{spec}`: unknown quantity `{kind}`")),
    }
}

/// How many positions a burst has, for position quantities: the size of
/// fixed-size bursts, or the length of a trace.
fn burst_len(exp: &Experiment) -> Result<u64, String> {
    match &exp.traffic {
        Traffic::Bursts {
            size: Count::Fixed(n),
            ..
        } if *n > 0 => Ok(u64::from(*n)),
        Traffic::Trace { entries } if !entries.is_empty() => {
            Ok(u64::try_from(entries.len()).unwrap_or(u64::MAX))
        }
        _ => Err("positions need fixed-size bursts or a trace".into()),
    }
}

/// The mean over messages of each message's statistic, by its position
/// (1 to `n`) in its burst: the mean MTT of the lost message at each position,
/// for a loss-position run. Positions without messages are absent.
fn position_means(
    exp: &Experiment,
    by_tsn: &BTreeMap<u64, Vec<(u32, f64)>>,
    n: u64,
) -> BTreeMap<u64, f64> {
    let mut by_position: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for (tsn, values) in by_tsn {
        if let Some(before) = tsn.checked_sub(1) {
            by_position
                .entry(before % n + 1)
                .or_default()
                .push(reduce(exp, values).0);
        }
    }
    by_position
        .into_iter()
        .filter_map(|(k, v)| Some((k, stats::mean(&v)?)))
        .collect()
}

/// `position-ratio:A:B`: A's mean MTT at each burst position over B's, at
/// each sweep point matching `at` where both have that position; the largest
/// ratio (named with its position and point) is the quantity's high, the
/// smallest its low.
fn position_ratio(
    exp: &Experiment,
    records: &[Record],
    a: &str,
    b: &str,
    n: u64,
    at: &PointFilter,
) -> Result<Quantity, String> {
    let (a_all, b_all) = (mtts(records, a), mtts(records, b));
    for (name, all) in [(a, &a_all), (b, &b_all)] {
        if all.is_empty() {
            return Err(format!("no results for `{name}`"));
        }
    }
    let mut ratios: Vec<(f64, u64, &PointKey)> = Vec::new();
    for (point, ad) in a_all.iter().filter(|(p, _)| at.matches(p)) {
        let Some(bd) = b_all.get(point) else {
            continue;
        };
        let bm = position_means(exp, bd, n);
        for (k, x) in position_means(exp, ad, n) {
            if let Some(y) = bm.get(&k) {
                let r = x / y;
                if !r.is_nan() {
                    ratios.push((r, k, point));
                }
            }
        }
    }
    let cmp = |p: &&(f64, u64, &PointKey), q: &&(f64, u64, &PointKey)| p.0.total_cmp(&q.0);
    let (Some(hi), Some(lo)) = (ratios.iter().max_by(cmp), ratios.iter().min_by(cmp)) else {
        return Err(format!("`{a}` and `{b}` share no position at any point"));
    };
    Ok(Quantity {
        text: format!(
            "{:.2} at position {}, {} kbit/s, {} ms",
            hi.0,
            hi.1,
            hi.2.bandwidth_kbps,
            hi.2.delay_us as f64 / 1000.0
        ),
        low: lo.0,
        high: hi.0,
        ci: None,
    })
}

/// The smallest of per-sweep-point values, named with its point.
fn smallest<'a>(values: impl Iterator<Item = (f64, &'a PointKey)>, unit: &str) -> Option<Quantity> {
    let (g, at) = values.min_by(|x, y| x.0.total_cmp(&y.0))?;
    Some(Quantity {
        text: format!(
            "{g:+.1} {unit} (smallest, at {} kbit/s, {} ms)",
            at.bandwidth_kbps,
            at.delay_us as f64 / 1000.0
        ),
        low: g,
        high: g,
        ci: None,
    })
}

/// What one `[[reference]]` check came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Within the paper's bounds.
    Agrees,
    /// Outside the paper's bounds, inside the bounds on our own value that
    /// the entry's `gap` records.
    KnownGap,
    /// Outside both.
    Differs,
    /// Outside the paper's bounds, waiting for a mechanism (`awaits`): listed
    /// apart, and it does not fail a run.
    Awaits(String),
}

impl Outcome {
    /// The word the summaries use: `agrees`, `known gap`, `differs`, `awaits …`.
    pub fn word(&self) -> String {
        match self {
            Outcome::Agrees => "agrees".into(),
            Outcome::KnownGap => "known gap".into(),
            Outcome::Differs => "differs".into(),
            Outcome::Awaits(a) => format!("awaits {a}"),
        }
    }
}

fn within(q: &Quantity, lo: Option<f64>, hi: Option<f64>) -> bool {
    lo.is_none_or(|m| q.low >= m) && hi.is_none_or(|m| q.high <= m)
}

/// A reference's outcome; `None` when it has no bounds (no check).
fn check(r: &Reference, q: &Quantity) -> Option<Outcome> {
    if r.min.is_none() && r.max.is_none() {
        return None;
    }
    if within(q, r.min, r.max) {
        return Some(Outcome::Agrees);
    }
    if let Some((lo, hi)) = r.gap.as_ref().and_then(|g| g.bounds())
        && within(q, lo, hi)
    {
        return Some(Outcome::KnownGap);
    }
    Some(match &r.awaits {
        Some(a) => Outcome::Awaits(a.clone()),
        None => Outcome::Differs,
    })
}

/// The outcome of each `[[reference]]` check: (label, outcome), or why ours
/// could not be computed.
pub type Checks = Vec<(String, Result<Outcome, String>)>;

/// The outcome of every `[[reference]]` check (a row with `ours` and bounds).
pub fn checks(exp: &Experiment, records: &[Record]) -> Checks {
    section_and_checks(exp, records, &RunTotals::default(), None).1
}

fn ms(x: f64) -> String {
    format!("{x:.1}")
}

/// The report section of one experiment.
pub fn section(
    exp: &Experiment,
    records: &[Record],
    totals: &RunTotals,
    pending: Option<&str>,
) -> Section {
    section_and_checks(exp, records, totals, pending).0
}

/// The report section of one experiment and the outcome of its checks,
/// each quantity computed once for both.
pub fn section_and_checks(
    exp: &Experiment,
    records: &[Record],
    totals: &RunTotals,
    pending: Option<&str>,
) -> (Section, Checks) {
    let mut outcomes = Checks::new();
    let mut charts = Vec::new();
    let mut tables = Vec::new();
    let lossy: Vec<&str> = exp.variants.iter().map(|v| v.name.as_str()).collect();
    match exp.figure {
        Figure::MttPerTsn => {
            let mut series = Vec::new();
            for (i, v) in exp.variants.iter().enumerate() {
                let all = mtts(records, &v.name);
                let Some(by_tsn) = all.values().next() else {
                    continue;
                };
                let points = by_tsn
                    .iter()
                    .map(|(tsn, vals)| {
                        let (y, ci) = reduce(exp, vals);
                        Point {
                            x: *tsn as f64,
                            y,
                            ci,
                        }
                    })
                    .collect();
                let style = if v.no_loss || i == 0 {
                    SeriesStyle::Line
                } else {
                    SeriesStyle::Markers
                };
                // Colour and marker follow the variant, as in every chart.
                series.push(
                    Series::new(v.name.clone(), points, style)
                        .with_color(i)
                        .with_marker(i),
                );
            }
            // The y axis fits the data (a fixed axis clipped slow messages).
            charts.push((
                format!("{}-mtt", exp.name),
                Chart {
                    title: chart_title(exp),
                    x_label: "TSN (message number)".into(),
                    y_label: "message transfer time (ms)".into(),
                    series,
                    x_range: None,
                    y_range: None,
                    x_categories: Vec::new(),
                },
            ));
        }
        Figure::SummaryVsDelay => {
            // Colour is the variant; marker and dash are the bandwidth.
            let mut series = Vec::new();
            for (vi, v) in exp.variants.iter().enumerate() {
                let all = mtts(records, &v.name);
                for (bi, bw) in exp.sweep.bandwidths().into_iter().enumerate() {
                    let bw_k = bw / 1000;
                    let points = all
                        .iter()
                        .filter(|(p, _)| p.bandwidth_kbps == bw_k)
                        .map(|(p, by_tsn)| {
                            let (y, ci) = point_mean(exp, by_tsn);
                            Point {
                                x: p.delay_ms(),
                                y,
                                ci,
                            }
                        })
                        .collect();
                    series.push(
                        Series::new(
                            format!("{}, {bw_k} kbit/s", v.name),
                            points,
                            SeriesStyle::LineAndMarkers,
                        )
                        .with_color(vi)
                        .with_marker(bi)
                        .with_dash(bi),
                    );
                }
            }
            charts.push((
                format!("{}-mean-mtt", exp.name),
                Chart {
                    title: format!("{}: mean MTT", chart_title(exp)),
                    x_label: "one-way delay (ms)".into(),
                    y_label: "mean MTT (ms)".into(),
                    series,
                    x_range: None,
                    y_range: None,
                    x_categories: Vec::new(),
                },
            ));
        }
        Figure::RetransmissionTable
        | Figure::GoodputVsSize
        | Figure::MttVsRate
        | Figure::LatencyTable
        | Figure::DelayTable
        | Figure::SequenceTrace => {
            let (c, t) = flowfigs::figure(exp, records);
            charts.extend(c);
            tables.extend(t);
        }
    }
    flowfigs::add_paper_series(exp, &mut charts);
    if let Some(t) = crate::positions::burst_position_table(exp, records) {
        tables.push((
            "Mean MTT of the lost message by its position in the burst, beside the no-loss MTT"
                .to_owned(),
            t,
        ));
    }
    if exp.method == crate::experiment::Method::LossPosition
        && let Some(t) = cost_table(exp, records)
    {
        tables.push((
            "Cost beside latency (means over every loss-position run)".to_owned(),
            t,
        ));
    }
    if exp.method == crate::experiment::Method::Flow
        && let Some(t) = flow_cost_table(exp, records)
    {
        tables.push((
            "Cost beside the benefit (means over every run of the variant, all sweep points)"
                .to_owned(),
            t,
        ));
    }
    if exp.topology.dual_homed.is_some()
        && let Some(t) = crate::failover::table(exp, records)
    {
        tables.push((
            "Failover: from the primary path's outage to the first message delivered \
             over the secondary path, and its cost (per variant and link; failover times \
             over the runs that failed over)"
                .to_owned(),
            t,
        ));
    }

    // The paper's numbers beside ours.
    let mut rows = Vec::new();
    let mut failed = Vec::new();
    let mut gaps = Vec::new();
    let mut awaiting = Vec::new();
    let mut reductions = Vec::new();
    for r in &exp.reference {
        let context = |verdict: String| match &r.gap {
            Some(g) => format!("{verdict}: {}", g.why()),
            None => verdict,
        };
        let (ours, verdict) = match &r.ours {
            Some(spec) => match quantity(exp, records, spec).and_then(|q| {
                // `ci = true`: without an interval the check cannot pass.
                if r.ci && q.ci.is_none() {
                    Err(format!(
                        "`{spec}`: no 95% interval (fewer than 2 runs at a point)"
                    ))
                } else {
                    Ok(q)
                }
            }) {
                Ok(q) => {
                    if let Some(pair) = ReductionPair::of(r, spec, &q) {
                        reductions.push(pair);
                    }
                    let expected = bounds(r.min, r.max);
                    let outcome = check(r, &q);
                    if let Some(o) = &outcome {
                        outcomes.push((r.label.clone(), Ok(o.clone())));
                    }
                    let verdict = match outcome {
                        Some(Outcome::Agrees) => format!("agrees ({expected})"),
                        Some(Outcome::KnownGap) => {
                            gaps.push(r.label.clone());
                            let (lo, hi) =
                                r.gap.as_ref().and_then(|g| g.bounds()).unwrap_or_default();
                            context(format!(
                                "known gap (paper {expected}; ours known to lie {})",
                                bounds(lo, hi)
                            ))
                        }
                        Some(Outcome::Differs) => {
                            failed.push(r.label.clone());
                            let known = match r.gap.as_ref().and_then(|g| g.bounds()) {
                                Some((lo, hi)) => {
                                    format!(", and outside the known gap's {}", bounds(lo, hi))
                                }
                                None => String::new(),
                            };
                            context(format!("differs (expected {expected}{known})"))
                        }
                        Some(Outcome::Awaits(a)) => {
                            awaiting.push(format!("{} (awaits {a})", r.label));
                            format!("differs (expected {expected}; awaits {a})")
                        }
                        None => String::new(),
                    };
                    (q.text, verdict)
                }
                Err(e) => {
                    if r.min.is_some() || r.max.is_some() {
                        failed.push(format!("{} (not available)", r.label));
                        outcomes.push((r.label.clone(), Err(e.clone())));
                    }
                    (format!("not available: {e}"), String::new())
                }
            },
            None => (String::new(), String::new()),
        };
        rows.push(vec![r.label.clone(), r.value.clone(), ours, verdict]);
    }
    if let Some(chart) = reduction_chart(&reductions) {
        charts.push((format!("{}-paper-vs-ours", exp.name), chart));
    }
    let comparison = Table {
        headers: vec![
            "quantity".into(),
            "paper".into(),
            if exp.variants.iter().any(|v| v.stack.is_some()) {
                "ours (emulated runs beside any simulated ones)".into()
            } else {
                "Brisk (simulated)".into()
            },
            "check".into(),
        ],
        rows,
    };

    // Every sweep point, for the record.
    let mut notes = exp.notes.clone();
    let mtt_figure = matches!(exp.figure, Figure::MttPerTsn | Figure::SummaryVsDelay);
    if mtt_figure && exp.dim_len(Dim::Bandwidth) * exp.dim_len(Dim::Delay) > 1 {
        let mut detail = Vec::new();
        for v in lossy.iter() {
            for (p, by_tsn) in mtts(records, v) {
                let (m, ci) = point_mean(exp, &by_tsn);
                let ci = ci
                    .map(|(l, h)| format!(" ({}..{})", ms(l), ms(h)))
                    .unwrap_or_default();
                detail.push(format!(
                    "{v} at {} kbit/s, {} ms: {} ms{ci}",
                    p.bandwidth_kbps,
                    p.delay_ms(),
                    ms(m)
                ));
            }
        }
        notes.push(format!("Mean MTT per sweep point: {}.", detail.join("; ")));
    }
    notes.push(format!(
        "{} simulated runs, {} events, {:.0} s of virtual time{}.",
        totals.runs,
        totals.sim_events,
        totals.virtual_time.as_secs_f64(),
        if totals.incomplete > 0 {
            format!(
                "; {} runs ended with a message still missing",
                totals.incomplete
            )
        } else {
            String::new()
        }
    ));
    let status = if let Some(p) = pending {
        Status::Pending(p.to_owned())
    } else if records.is_empty() || totals.runs == 0 {
        Status::NoData("the runs recorded no data".to_owned())
    } else if !failed.is_empty() {
        let mut why = format!("differs from the paper on: {}", failed.join(", "));
        if !gaps.is_empty() {
            why.push_str(&format!("; known gaps: {}", gaps.join(", ")));
        }
        if !awaiting.is_empty() {
            why.push_str(&format!("; still waiting: {}", awaiting.join(", ")));
        }
        Status::Partial(why)
    } else if !awaiting.is_empty() {
        Status::Pending(format!(
            "checks that wait for protocol mechanisms still fail: {}",
            awaiting.join(", ")
        ))
    } else if !gaps.is_empty() {
        Status::KnownGap(format!(
            "every other check agrees; known gaps (outside the paper's bounds, inside the bounds \
             recorded on ours): {}",
            gaps.join(", ")
        ))
    } else {
        Status::Reproduced
    };
    let section = Section {
        id: exp.name.clone(),
        title: exp.title.clone(),
        source: exp.source.clone(),
        paper_claim: exp.paper.clone(),
        charts,
        comparison,
        tables,
        notes,
        status,
    };
    (section, outcomes)
}

/// A mean-reduction check (`reduction` or `reduction-of-means`) whose paper
/// value is a percentage: the paper's number beside ours, for the chart.
#[derive(Debug, Clone, PartialEq)]
struct ReductionPair {
    /// `A:B` of the spec, the sweep point in words (empty without `@`), and
    /// whether it is read as the reduction of the mean MTT.
    variants: String,
    point: String,
    of_means: bool,
    paper: f64,
    /// The check's bounds on the paper's number.
    min: Option<f64>,
    max: Option<f64>,
    ours: f64,
    ours_ci: Option<(f64, f64)>,
}

impl ReductionPair {
    /// The pair for reference `r` whose `ours` is `spec`, evaluated to `q`;
    /// `None` for other quantities, or when the paper gives no percentage.
    fn of(r: &Reference, spec: &str, q: &Quantity) -> Option<ReductionPair> {
        let (kind, rest) = spec.split_once(':')?;
        if kind != "reduction" && kind != "reduction-of-means" {
            return None;
        }
        let paper = r
            .value
            .trim()
            .strip_suffix('%')?
            .trim()
            .parse::<f64>()
            .ok()?;
        let (variants, at) = match rest.split_once('@') {
            Some((v, at)) => (v, PointFilter::parse(at).ok()?),
            None => (rest, PointFilter::default()),
        };
        let mut point = Vec::new();
        if let Some(bw) = at.bandwidth_kbps {
            point.push(format!("{bw} kbit/s"));
        }
        if let Some(d) = at.delay_us {
            point.push(format!("{} ms", trim_number(d as f64 / 1000.0)));
        }
        Some(ReductionPair {
            variants: variants.to_owned(),
            point: point.join(", "),
            of_means: kind == "reduction-of-means",
            paper,
            min: r.min,
            max: r.max,
            ours: q.low,
            ours_ci: q.ci,
        })
    }
}

/// The paper's mean reductions beside ours, one category per check: the
/// paper's number with its check's bounds as an error bar, ours with its 95%
/// confidence interval where there is one. `None` without such checks.
fn reduction_chart(pairs: &[ReductionPair]) -> Option<Chart> {
    if pairs.is_empty() {
        return None;
    }
    let several_pairs = pairs.iter().any(|p| p.variants != pairs[0].variants);
    let categories = pairs
        .iter()
        .map(|p| {
            let mut words = Vec::new();
            if several_pairs {
                let (a, b) = p.variants.split_once(':').unwrap_or((&p.variants, ""));
                words.push(format!("{b} vs {a}"));
            }
            if !p.point.is_empty() {
                words.push(p.point.clone());
            }
            words.push(
                if p.of_means {
                    "(of the mean MTT)"
                } else {
                    "(per message)"
                }
                .to_owned(),
            );
            words.join(" ")
        })
        .collect();
    // Side by side: the paper left of each category, ours right.
    const SHIFT: f64 = 0.12;
    let paper = pairs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let x = (i + 1) as f64 - SHIFT;
            match (p.min, p.max) {
                (None, None) => Point::new(x, p.paper),
                (lo, hi) => {
                    Point::with_ci(x, p.paper, (lo.unwrap_or(p.paper), hi.unwrap_or(p.paper)))
                }
            }
        })
        .collect();
    let ours = pairs
        .iter()
        .enumerate()
        .map(|(i, p)| Point {
            x: (i + 1) as f64 + SHIFT,
            y: p.ours,
            ci: p.ours_ci,
        })
        .collect();
    let has_bounds = pairs.iter().any(|p| p.min.is_some() || p.max.is_some());
    let has_ci = pairs.iter().any(|p| p.ours_ci.is_some());
    Some(Chart {
        title: "Mean MTT reduction: the paper's beside ours".into(),
        x_label: "check".into(),
        y_label: "mean MTT reduction (%)".into(),
        series: vec![
            Series::new(
                if has_bounds {
                    "paper (bar: the check's bounds)"
                } else {
                    "paper"
                },
                paper,
                SeriesStyle::Markers,
            )
            .with_color(6)
            .with_marker(7),
            Series::new(
                if has_ci {
                    "Brisk, simulated (bar: 95% CI)"
                } else {
                    "Brisk, simulated"
                },
                ours,
                SeriesStyle::Markers,
            )
            .with_color(0)
            .with_marker(0),
        ],
        x_range: None,
        y_range: None,
        x_categories: categories,
    })
}

pub(crate) fn bounds(lo: Option<f64>, hi: Option<f64>) -> String {
    match (lo, hi) {
        (Some(l), Some(h)) => format!("{l} to {h}"),
        (Some(l), None) => format!("at least {l}"),
        (None, Some(h)) => format!("at most {h}"),
        (None, None) => String::new(),
    }
}

/// The mean of `metric` over `variant`'s records.
fn variant_mean(records: &[Record], variant: &str, metric: &str) -> Option<f64> {
    let values: Vec<f64> = records
        .iter()
        .filter(|r| r.variant == variant && r.metric == metric)
        .map(|r| r.value)
        .collect();
    crate::stats::mean(&values)
}

/// A cost table's cell: `x` with `digits` decimals, or "no data".
fn cell(x: Option<f64>, digits: usize) -> String {
    x.map_or_else(|| "no data".to_owned(), |x| format!("{x:.digits$}"))
}

/// Each variant's latency beside what it costs, over all its loss-position
/// runs: the mean MTT of the lost messages, the bytes and packets that
/// crossed the bottleneck per message delivered, and the retransmissions
/// that were not needed. `None` when no run recorded the cost.
fn cost_table(exp: &Experiment, records: &[Record]) -> Option<Table> {
    let mean_of = |variant: &str, metric: &str| variant_mean(records, variant, metric);
    // Counts recorded only where non-zero: their sum over the variant's runs
    // (each run records its bottleneck bytes) divided by the runs.
    let per_run = |variant: &str, metric: &str| -> f64 {
        let runs = records
            .iter()
            .filter(|r| r.variant == variant && r.metric == "bottleneck_bytes_per_message")
            .count();
        let total: f64 = records
            .iter()
            .filter(|r| r.variant == variant && r.metric == metric)
            .map(|r| r.value)
            .sum();
        // (+ 0.0: a sum of nothing is -0.0, which would print as "-0.00".)
        total / runs.max(1) as f64 + 0.0
    };
    let mut rows = Vec::new();
    for v in exp.variants.iter().filter(|v| !v.no_loss) {
        let name = v.name.as_str();
        let Some(bytes) = mean_of(name, "bottleneck_bytes_per_message") else {
            continue;
        };
        rows.push(vec![
            name.to_owned(),
            cell(mean_of(name, "mtt_ms"), 1),
            cell(Some(bytes), 1),
            cell(mean_of(name, "bottleneck_packets_per_message"), 3),
            cell(mean_of(name, "spurious_retransmissions"), 2),
            cell(
                Some(per_run(name, "spurious_retransmissions_t3-timeout")),
                2,
            ),
            cell(Some(per_run(name, "spurious_retransmissions_bundled")), 2),
            cell(Some(per_run(name, "spurious_timeouts_undone")), 2),
        ]);
    }
    (!rows.is_empty()).then(|| Table {
        headers: vec![
            "variant".into(),
            "mean MTT of lost messages (ms)".into(),
            "bottleneck bytes per message".into(),
            "bottleneck packets per message".into(),
            "spurious retransmissions per run".into(),
            "of which by T3 per run".into(),
            "of which redundant copies per run".into(),
            "spurious timeouts undone per run".into(),
        ],
        rows,
    })
}

/// Each variant's benefit beside its cost in flow experiments, over all its
/// runs: mean one-way delay and goodput where the runs record them, the
/// bottleneck bytes and packets per message delivered (bytes per payload byte
/// for saturated flows), and the retransmissions that were not needed.
fn flow_cost_table(exp: &Experiment, records: &[Record]) -> Option<Table> {
    let mean_of = |variant: &str, metric: &str| variant_mean(records, variant, metric);
    let mut rows = Vec::new();
    for v in &exp.variants {
        let name = v.name.as_str();
        let Some(spurious) = mean_of(name, "spurious_retransmissions") else {
            continue;
        };
        rows.push(vec![
            name.to_owned(),
            cell(mean_of(name, "owd_mean_ms"), 1),
            cell(mean_of(name, "goodput_kbps"), 1),
            cell(mean_of(name, "bottleneck_bytes_per_message"), 1),
            cell(mean_of(name, "bottleneck_packets_per_message"), 3),
            cell(mean_of(name, "bottleneck_bytes_per_payload_byte"), 3),
            cell(Some(spurious), 2),
        ]);
    }
    (!rows.is_empty()).then(|| Table {
        headers: vec![
            "variant".into(),
            "mean one-way delay of messages (ms)".into(),
            "goodput (kbit/s)".into(),
            "bottleneck bytes per message".into(),
            "bottleneck packets per message".into(),
            "bottleneck bytes per payload byte".into(),
            "spurious retransmissions per run".into(),
        ],
        rows,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An MTT record of `variant`'s message `tsn` at Fig. 2's link, from a
    /// loss-position run at that message.
    pub(crate) fn record(variant: &str, tsn: u64, value: f64) -> Record {
        Record {
            experiment: "t".into(),
            variant: variant.into(),
            bandwidth_kbps: 2000,
            delay_ms: 15.0,
            replication: 0,
            position: Some(tsn),
            flow: 0,
            tsn: Some(tsn),
            metric: "mtt_ms".into(),
            value,
            sweep: None,
        }
    }

    fn fig2() -> Experiment {
        load("seed000-fig02.toml")
    }

    fn load(file: &str) -> Experiment {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../experiments")
            .join(file);
        Experiment::load(&path).unwrap()
    }

    /// The chart of `section` written as `stem`.
    fn chart<'a>(section: &'a Section, stem: &str) -> &'a Chart {
        let charts = &section.charts;
        let found = charts.iter().find(|(s, _)| s == stem);
        &found
            .unwrap_or_else(|| panic!("no chart {stem} in {charts:?}"))
            .1
    }

    /// Fig. 2's records: bursts of 4, the 4th message slow.
    fn fig2_records() -> Vec<Record> {
        let mut records = Vec::new();
        for (tsn, (std, er, ll)) in [
            (100.0, 50.0, 20.0),
            (100.0, 50.0, 20.0),
            (100.0, 50.0, 20.0),
            (300.0, 100.0, 40.0),
        ]
        .into_iter()
        .enumerate()
        {
            let tsn = tsn as u64 + 1;
            records.push(record("standard", tsn, std));
            records.push(record("early-retransmit", tsn, er));
            records.push(record("low-latency", tsn, ll));
        }
        records
    }

    #[test]
    fn colour_is_the_variant_and_every_variant_and_bandwidth_looks_different() {
        // Seed 000 Fig. 5: 4 variants by 3 bandwidths, 12 series.
        let exp = load("seed000-fig05.toml");
        let mut records = Vec::new();
        for (vi, v) in exp.variants.iter().enumerate() {
            for bw in exp.sweep.bandwidths() {
                for delay_ms in [5.0, 25.0] {
                    for tsn in 1..=3 {
                        records.push(Record {
                            bandwidth_kbps: bw / 1000,
                            delay_ms,
                            ..record(&v.name, tsn, 20.0 + vi as f64 + delay_ms)
                        });
                    }
                }
            }
        }
        let (section, _) = section_and_checks(&exp, &records, &RunTotals::default(), None);
        let chart = chart(&section, "seed000-fig05-mean-mtt");
        assert_eq!(chart.series.len(), 12);
        let looks: Vec<(&str, &str, crate::plot::Look)> = chart
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let (variant, bandwidth) = s.name.split_once(", ").unwrap();
                (variant, bandwidth, s.look(i))
            })
            .collect();
        for (i, a) in looks.iter().enumerate() {
            for b in &looks[i + 1..] {
                // One colour per variant, distinct across variants.
                assert_eq!(a.0 == b.0, a.2.color == b.2.color, "{a:?} and {b:?}");
                // No two series share colour, marker and dash.
                assert_ne!(a.2, b.2, "{a:?} and {b:?}");
                // Within a variant, each bandwidth has its own marker and dash.
                if a.0 == b.0 {
                    assert!(a.2.marker != b.2.marker && a.2.dash != b.2.dash);
                }
            }
        }
    }

    #[test]
    fn the_mtt_per_tsn_axis_holds_every_message() {
        let exp = fig2();
        let mut records = fig2_records();
        records.push(record("standard", 8, 480.0));
        let (section, _) = section_and_checks(&exp, &records, &RunTotals::default(), None);
        let chart = chart(&section, "seed000-fig02-mtt");
        let (_, y) = crate::plot::axis_ranges(chart).unwrap();
        assert_eq!(y.start, 0.0);
        assert!(y.end > 480.0 && y.end < 480.0 * 1.2, "{y:?}");
    }

    #[test]
    fn the_papers_mean_reductions_are_charted_beside_ours() {
        let exp = fig2();
        let records = fig2_records();
        let (section, _) = section_and_checks(&exp, &records, &RunTotals::default(), None);
        let chart = chart(&section, "seed000-fig02-paper-vs-ours");
        // Two checks have a percentage from the paper (41%): the mean
        // reduction per message (bounds 34 to 48) and of the mean MTT; the
        // low-latency one has "(ours)", not a number from the paper.
        assert_eq!(chart.x_categories, ["(per message)", "(of the mean MTT)"]);
        let [paper, ours] = &chart.series[..] else {
            panic!("{:?}", chart.series);
        };
        assert!(paper.name.starts_with("paper"), "{}", paper.name);
        assert!(ours.name.starts_with("Brisk"), "{}", ours.name);
        let ys = |s: &Series| s.points.iter().map(|p| p.y).collect::<Vec<_>>();
        assert_eq!(ys(paper), [41.0, 41.0]);
        assert_eq!(paper.points[0].ci, Some((34.0, 48.0)));
        assert_eq!(paper.points[1].ci, None);
        // Ours as the checks computed them: (50 + 50 + 50 + 66.7) / 4 and
        // (600 - 250) / 600, the numbers the comparison table shows.
        let ours_y = ys(ours);
        assert!((ours_y[0] - 54.1667).abs() < 1e-3, "{ours_y:?}");
        assert!((ours_y[1] - 58.3333).abs() < 1e-3, "{ours_y:?}");
        for (y, label) in ours_y.iter().zip([
            "Early Retransmit: mean reduction",
            "Early Retransmit: mean reduction, read",
        ]) {
            let row = section
                .comparison
                .rows
                .iter()
                .find(|r| r[0].starts_with(label))
                .unwrap();
            assert!(row[2].starts_with(&format!("{y:.1}%")), "{row:?}");
        }
        // Side by side in each category: the paper left, ours right.
        for (p, o) in paper.points.iter().zip(&ours.points) {
            assert!(p.x < o.x && (o.x - p.x) < 0.5 && p.x.round() == o.x.round());
        }
        // Only experiments with such checks get the chart.
        let fig2_like_without = Experiment {
            reference: Vec::new(),
            ..exp.clone()
        };
        let (section, _) =
            section_and_checks(&fig2_like_without, &records, &RunTotals::default(), None);
        assert!(
            section
                .charts
                .iter()
                .all(|(s, _)| !s.ends_with("paper-vs-ours"))
        );
    }

    #[test]
    fn a_run_without_data_is_no_data_and_its_checks_are_not_available() {
        let exp = fig2();
        let section = section(&exp, &[], &RunTotals::default(), None);
        assert!(
            matches!(section.status, Status::NoData(_)),
            "{:?}",
            section.status
        );
        let checks = checks(&exp, &[]);
        assert!(!checks.is_empty());
        assert!(checks.iter().all(|c| c.1.is_err()), "{checks:?}");
    }

    #[test]
    fn a_gap_with_bounds_on_ours_is_a_known_gap_and_a_text_alone_is_not() {
        let q = |x: f64| Quantity {
            text: String::new(),
            low: x,
            high: x,
            ci: None,
        };
        let mut r = Reference {
            label: "L".into(),
            value: "53%".into(),
            ours: Some("reduction:standard:early-retransmit".into()),
            min: Some(46.0),
            max: Some(60.0),
            awaits: None,
            gap: Some(crate::experiment::KnownGap::Text("why".into())),
            ci: false,
        };
        assert_eq!(check(&r, &q(50.0)), Some(Outcome::Agrees));
        assert_eq!(check(&r, &q(62.0)), Some(Outcome::Differs));
        r.gap = Some(crate::experiment::KnownGap::Bounded(
            crate::experiment::BoundedGap {
                why: "why".into(),
                min: Some(59.4),
                max: Some(65.4),
            },
        ));
        assert_eq!(check(&r, &q(62.0)), Some(Outcome::KnownGap));
        assert_eq!(check(&r, &q(70.0)), Some(Outcome::Differs));
        assert_eq!(check(&r, &q(30.0)), Some(Outcome::Differs));
        r.awaits = Some("a mechanism".into());
        assert_eq!(
            check(&r, &q(70.0)),
            Some(Outcome::Awaits("a mechanism".into()))
        );
        r.min = None;
        r.max = None;
        assert_eq!(check(&r, &q(70.0)), None);
    }

    #[test]
    fn reductions_read_per_message_or_of_the_means_and_the_last_message_gain() {
        // Seed 000 Fig. 2's file: bursts of 4, one sweep point, medians.
        let exp = fig2();
        let records = fig2_records();
        let q = |spec: &str| quantity(&exp, &records, spec).map(|q| q.low);
        // (50 + 50 + 50 + 66.7) / 4 against (600 - 250) / 600.
        let per_message = q("reduction:standard:early-retransmit").unwrap();
        let of_means = q("reduction-of-means:standard:early-retransmit").unwrap();
        assert!((per_message - 54.1667).abs() < 1e-3, "{per_message}");
        assert!((of_means - 58.3333).abs() < 1e-3, "{of_means}");
        // The 4th message: 100 ms under ER, 40 under low-latency.
        assert_eq!(q("last-gain:early-retransmit:low-latency"), Ok(60.0));
        // low-latency's reduction (80, 80, 80, 86.7) less ER's, in points.
        let gain = q("gain:standard:early-retransmit:low-latency").unwrap();
        assert!((gain - 27.5).abs() < 1e-3, "{gain}");
        assert!(q("last-gain:early-retransmit").is_err());
    }

    /// `variant`'s record of message `tsn` at another sweep point.
    fn record_at(variant: &str, tsn: u64, value: f64, kbps: u64, delay_ms: f64) -> Record {
        Record {
            bandwidth_kbps: kbps,
            delay_ms,
            ..record(variant, tsn, value)
        }
    }

    #[test]
    fn a_position_ratio_is_the_worst_shared_position_over_every_point() {
        // Bursts of 4 (seed 000 Fig. 2's file), medians per message.
        let exp = fig2();
        let mut records = vec![
            // Position 1 (TSNs 1 and 5): a's mean 60, b's 200: 0.3.
            record("a", 1, 50.0),
            record("a", 5, 70.0),
            record("b", 1, 200.0),
            // Position 4: 90 over 100: 0.9, the worst at this point.
            record("a", 4, 90.0),
            record("b", 4, 100.0),
            // Position 2 for a alone, position 3 for b alone: skipped, though
            // 500 / 10 would be the largest ratio of all.
            record("a", 2, 500.0),
            record("b", 3, 10.0),
        ];
        let q = |records: &[Record], spec: &str| quantity(&exp, records, spec);
        let one_point = q(&records, "position-ratio:a:b").unwrap();
        assert!((one_point.high - 0.9).abs() < 1e-9, "{one_point:?}");
        assert!((one_point.low - 0.3).abs() < 1e-9, "{one_point:?}");
        assert_eq!(one_point.text, "0.90 at position 4, 2000 kbit/s, 15 ms");
        // The helper the `position` kind shares: the mean at position 1.
        assert_eq!(q(&records, "position:a:1").map(|q| q.low), Ok(60.0));
        // At most 0.5x at every position fails on position 4.
        let goal = Reference {
            label: "goal".into(),
            value: "(goal: 0.5 or less)".into(),
            ours: Some("position-ratio:a:b".into()),
            min: None,
            max: Some(0.5),
            awaits: None,
            gap: None,
            ci: false,
        };
        assert_eq!(check(&goal, &one_point), Some(Outcome::Differs));
        // A second sweep point whose position 2 is worse still: 95 over 100.
        records.push(record_at("a", 2, 95.0, 500, 25.0));
        records.push(record_at("b", 2, 100.0, 500, 25.0));
        let two_points = q(&records, "position-ratio:a:b").unwrap();
        assert!((two_points.high - 0.95).abs() < 1e-9, "{two_points:?}");
        assert_eq!(two_points.text, "0.95 at position 2, 500 kbit/s, 25 ms");
        // `@` keeps to the matching points.
        let first = q(&records, "position-ratio:a:b@bandwidth=2000kbit").unwrap();
        assert!((first.high - 0.9).abs() < 1e-9, "{first:?}");
        // The other way round, the worst is b over a at position 1.
        let reversed = q(&records, "position-ratio:b:a").unwrap();
        assert!((reversed.high - 200.0 / 60.0).abs() < 1e-9, "{reversed:?}");
        assert!(reversed.text.contains("at position 1, 2000 kbit/s"));
        // Within 0.5x everywhere, the check agrees.
        let halved: Vec<Record> = records
            .iter()
            .map(|r| Record {
                value: if r.variant == "a" { 0.4 } else { 1.0 } * r.value,
                ..r.clone()
            })
            .filter(|r| r.variant != "a" || r.tsn != Some(2) || r.bandwidth_kbps != 2000)
            .collect();
        let ok = q(&halved, "position-ratio:a:b").unwrap();
        assert!(ok.high <= 0.5, "{ok:?}");
        assert_eq!(check(&goal, &ok), Some(Outcome::Agrees));
    }

    #[test]
    fn a_position_ratio_without_a_variant_or_a_shared_position_is_an_error_naming_it() {
        let exp = fig2();
        let records = vec![record("a", 1, 50.0), record("b", 2, 100.0)];
        let q = |spec: &str| quantity(&exp, &records, spec);
        let e = q("position-ratio:a:nobody").unwrap_err();
        assert!(e.starts_with("`position-ratio:a:nobody`: "), "{e}");
        assert!(e.contains("no results for `nobody`"), "{e}");
        let e = q("position-ratio:nobody:b").unwrap_err();
        assert!(e.contains("no results for `nobody`"), "{e}");
        let e = q("position-ratio:a:b").unwrap_err();
        assert!(e.starts_with("`position-ratio:a:b`: "), "{e}");
        assert!(e.contains("share no position"), "{e}");
        let e = q("position-ratio:a:b@bandwidth=500kbit").unwrap_err();
        assert!(e.contains("share no position"), "{e}");
        let e = q("position-ratio:a").unwrap_err();
        assert!(e.contains("expected position-ratio:A:B"), "{e}");
    }

    #[test]
    fn the_emulated_loss_position_files_check_low_latency_against_every_real_stack() {
        let reals = [
            "usrsctp",
            "usrsctp-rto-min-100ms",
            "pion",
            "linux-tcp-cubic",
            "linux-tcp-bbr",
            "linux-tcp-thin",
        ];
        let files = [
            ("emu/real-stacks-fig02.toml", &[(2000, 15.0)][..]),
            (
                "emu/real-stacks-fig03.toml",
                &[(2000, 5.0), (500, 25.0)][..],
            ),
        ];
        for (file, points) in files {
            let exp = load(file);
            // Every real stack at 100 ms at every position of two bursts and
            // at every point, pion at 80 ms at position 3; low-latency at 40
            // ms, 48 at position 3: 0.48x of every stack but 0.6x of pion's.
            let mut records = Vec::new();
            for &(kbps, delay_ms) in points {
                for tsn in 1..=8 {
                    let third = tsn % 4 == 3;
                    for v in reals {
                        let mtt = if v == "pion" && third { 80.0 } else { 100.0 };
                        records.push(record_at(v, tsn, mtt, kbps, delay_ms));
                    }
                    let ll = if third { 48.0 } else { 40.0 };
                    records.push(record_at("brisk-low-latency", tsn, ll, kbps, delay_ms));
                }
            }
            let checks = checks(&exp, &records);
            for v in reals {
                let ours = format!("position-ratio:brisk-low-latency:{v}");
                let r = exp
                    .reference
                    .iter()
                    .find(|r| r.ours.as_deref() == Some(ours.as_str()))
                    .unwrap_or_else(|| panic!("{file}: no check {ours}"));
                assert_eq!(r.max, Some(0.5), "{file}: {ours}");
                let (_, outcome) = checks.iter().find(|c| c.0 == r.label).unwrap();
                // 48 over pion's 80 is 0.6; 48 over 100 is 0.48 elsewhere.
                let want = if v == "pion" {
                    Outcome::Differs
                } else {
                    Outcome::Agrees
                };
                assert_eq!(outcome.as_ref(), Ok(&want), "{file}: {}", r.label);
            }
        }
    }
}
