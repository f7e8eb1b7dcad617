//! Figures, tables and `ours` quantities of flow experiments: seed 001's
//! retransmission tables (the first retransmission of each lost chunk, by
//! cause), seed 003's goodput against message size beside its throughput
//! model, and the Nagle study's MTT and DATA packets against message rate.

use std::collections::{BTreeMap, BTreeSet};

use crate::experiment::{Equation, Experiment, Figure, Statistic};
use crate::figfmt::{Figures, Quantity, chart_title, trim_number};
use crate::model;
use crate::output::{PointKey, ppb};
use crate::plot::{Chart, Point, Series, SeriesStyle};
use crate::report::Table;
use crate::runner::{Record, T3_BUNDLED};
use crate::stats;

/// Which sweep points a quantity looks at: every key given must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PointFilter {
    pub bandwidth_kbps: Option<u64>,
    pub delay_us: Option<u64>,
    /// Inclusive range of message sizes (`size=400..1450`, or one size).
    pub message_size: Option<(usize, usize)>,
    pub loss_ppb: Option<u64>,
    pub corrupt_ppb: Option<u64>,
    pub rate_milli: Option<u64>,
    pub mtu: Option<usize>,
}

impl PointFilter {
    /// `BANDWIDTH/DELAY` (seed 000's form, e.g. `2000kbit/15ms`) or
    /// `key=value` pairs separated by commas: `bandwidth`, `delay` (one way),
    /// `rtt` (twice the one-way delay), `size` (one size, or an inclusive
    /// range `400..1450`), `loss`, `corrupt`, `rate`, `mtu`.
    pub fn parse(text: &str) -> Result<PointFilter, String> {
        let duration_us = |v: &str| {
            brisk_proto::config::parse_duration(v)
                .map(|d| d.as_micros() as u64)
                .ok_or_else(|| format!("`{v}` is not a duration"))
        };
        let rate_kbps = |v: &str| {
            crate::experiment::parse_rate(v)
                .map(|r| r / 1000)
                .ok_or_else(|| format!("`{v}` is not a rate"))
        };
        let mut f = PointFilter::default();
        if !text.contains('=') {
            let (bw, delay) = text
                .split_once('/')
                .ok_or_else(|| format!("bad sweep point `{text}`"))?;
            f.bandwidth_kbps = Some(rate_kbps(bw)?);
            f.delay_us = Some(duration_us(delay)?);
            return Ok(f);
        }
        for pair in text.split(',') {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| format!("`{pair}` is not key=value"))?;
            let (k, v) = (k.trim(), v.trim());
            let number = |v: &str| {
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| format!("`{v}` is not a number"))
            };
            match k {
                "bandwidth" => f.bandwidth_kbps = Some(rate_kbps(v)?),
                "delay" => f.delay_us = Some(duration_us(v)?),
                "rtt" => f.delay_us = Some(duration_us(v)? / 2),
                "size" => {
                    f.message_size = Some(match v.split_once("..") {
                        Some((a, b)) => (number(a)? as usize, number(b)? as usize),
                        None => (number(v)? as usize, number(v)? as usize),
                    })
                }
                "loss" => f.loss_ppb = Some(ppb(number(v)?)),
                "corrupt" => f.corrupt_ppb = Some(ppb(number(v)?)),
                "rate" => f.rate_milli = Some((number(v)? * 1000.0).round() as u64),
                "mtu" => f.mtu = Some(number(v)? as usize),
                other => {
                    return Err(format!(
                        "unknown sweep key `{other}` (bandwidth, delay, rtt, size, loss, corrupt, rate, mtu)"
                    ));
                }
            }
        }
        Ok(f)
    }

    pub fn matches(&self, p: &PointKey) -> bool {
        fn ok<T: PartialEq>(want: Option<T>, have: T) -> bool {
            want.is_none_or(|w| w == have)
        }
        ok(self.bandwidth_kbps, p.bandwidth_kbps)
            && ok(self.delay_us, p.delay_us)
            && self
                .message_size
                .is_none_or(|(lo, hi)| p.message_size.is_some_and(|s| (lo..=hi).contains(&s)))
            && (self.loss_ppb.is_none() || self.loss_ppb == p.loss_ppb)
            && (self.corrupt_ppb.is_none() || self.corrupt_ppb == p.corrupt_ppb)
            && (self.rate_milli.is_none() || self.rate_milli == p.rate_milli)
            && (self.mtu.is_none() || self.mtu == p.mtu)
    }
}

/// Values of one metric of one variant (and flow, or all flows), per sweep
/// point matching `at`: one value per replication and flow.
fn by_point(
    records: &[Record],
    variant: &str,
    metric: &str,
    flow: Option<u32>,
    at: &PointFilter,
) -> BTreeMap<PointKey, Vec<f64>> {
    let mut out: BTreeMap<PointKey, Vec<f64>> = BTreeMap::new();
    for r in records {
        if r.variant == variant && r.metric == metric && flow.is_none_or(|f| r.flow == f) {
            let p = PointKey::of(r);
            if at.matches(&p) {
                out.entry(p).or_default().push(r.value);
            }
        }
    }
    out
}

/// The experiment's statistic of `values`, with a 95% CI for `mean-ci95`.
fn center(exp: &Experiment, values: &[f64]) -> (f64, Option<(f64, f64)>) {
    let s = stats::summarize(values);
    match exp.statistic {
        Statistic::Median => (s.median.unwrap_or(f64::NAN), None),
        Statistic::MeanCi95 => (s.mean.unwrap_or(f64::NAN), s.ci95),
    }
}

/// The round-trip propagation time of a point: the bottleneck both ways,
/// and on a dumbbell the access links too.
fn rtt_seconds(exp: &Experiment, p: &PointKey) -> f64 {
    let access = exp
        .topology
        .dumbbell
        .as_ref()
        .map_or(0.0, |d| 2.0 * d.access_delay.as_secs_f64());
    2.0 * (p.delay_us as f64 / 1e6 + access)
}

/// The IP MTU of a point: swept, or the first variant's SCTP packet size
/// plus the topology's overhead bytes.
fn mtu_of(exp: &Experiment, p: &PointKey) -> usize {
    p.mtu.unwrap_or_else(|| {
        exp.variants.first().map_or(1500, |v| v.config.mtu) + exp.topology.overhead_bytes
    })
}

/// A model's payload rate, kbit/s, at point `p` with `size`-byte messages.
/// The loss rate is `loss`, else the point's loss, else its packet error rate.
pub fn model_kbps(
    exp: &Experiment,
    eq: Equation,
    loss: Option<f64>,
    p: &PointKey,
    size: usize,
) -> Option<f64> {
    let mtu = mtu_of(exp, p) as f64;
    let rtt = rtt_seconds(exp, p);
    let loss = loss.or(p.loss()).or(p.corrupt());
    let bytes_per_s = match eq {
        Equation::Eq5 => model::eq5(size as f64, mtu, rtt, loss?)?,
        Equation::Eq7 => model::eq7(size as f64, mtu, rtt, loss?)?,
        Equation::Eq12 => model::eq12(size, mtu as usize, p.bandwidth_kbps as f64 * 1000.0)?,
    };
    Some(bytes_per_s * 8.0 / 1000.0)
}

/// First-retransmission delays of one variant at the points matching `at`:
/// (cause, lost, delay ms).
fn first_rtx(records: &[Record], variant: &str, at: &PointFilter) -> Vec<(String, bool, f64)> {
    records
        .iter()
        .filter(|r| r.variant == variant && at.matches(&PointKey::of(r)))
        .filter_map(|r| {
            if let Some(c) = r.metric.strip_prefix("lost_first_rtx_ms_") {
                Some((c.to_owned(), true, r.value))
            } else {
                r.metric
                    .strip_prefix("spurious_first_rtx_ms_")
                    .map(|c| (c.to_owned(), false, r.value))
            }
        })
        .collect()
}

fn one(x: f64, text: String) -> Quantity {
    Quantity {
        text,
        low: x,
        high: x,
        ci: None,
    }
}

/// A value with one decimal, or three when it is small.
fn num(x: f64) -> String {
    if x != 0.0 && x.abs() < 10.0 {
        format!("{x:.3}")
    } else {
        format!("{x:.1}")
    }
}

/// Several values (one per sweep point): their mean, checked by min and max.
fn spread(values: &[(PointKey, f64)], unit: &str) -> Result<Quantity, String> {
    let v: Vec<f64> = values.iter().map(|x| x.1).collect();
    let mean = stats::mean(&v).ok_or("no results at the points named")?;
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let text = if v.len() == 1 {
        format!("{}{unit}", num(mean))
    } else {
        format!(
            "{}{unit} (mean of {} points, {} to {})",
            num(mean),
            v.len(),
            num(lo),
            num(hi)
        )
    };
    Ok(Quantity {
        text,
        low: lo,
        high: hi,
        ci: None,
    })
}

/// The quantities of flow experiments, or `None` for a kind this module
/// does not know (seed 000's MTT quantities).
pub(crate) fn quantity(
    exp: &Experiment,
    records: &[Record],
    kind: &str,
    args: &str,
    at: &PointFilter,
) -> Option<Result<Quantity, String>> {
    let parts: Vec<&str> = args.split(':').collect();
    let q = match kind {
        // A's 99th percentile MTT (or bytes per message) over B's at every
        // sweep point both ran, with bootstrap intervals: see `tails.rs`.
        "p99-ratio" | "bytes-ratio" => {
            let [a, b] = parts[..] else {
                return Some(Err(format!("expected {kind}:VARIANT:VARIANT")));
            };
            crate::tails::ratio_quantity(exp, records, kind, a, b, at)
        }
        "never-worse" => crate::tails::never_worse_quantity(exp, records, &parts, at),
        "lost-rtx" | "lost-share" | "rtx-share" => {
            let [variant, cause] = parts[..] else {
                return Some(Err(format!("expected {kind}:VARIANT:CAUSE")));
            };
            rtx_quantity(records, kind, variant, cause, at)
        }
        "metric" => {
            let (variant, metric, flow) = match parts[..] {
                [v, m] => (v, m, None),
                [v, m, f] => match f.parse::<u32>() {
                    Ok(f) => (v, m, Some(f)),
                    Err(_) => return Some(Err(format!("`{f}` is not a flow number"))),
                },
                _ => return Some(Err("expected metric:VARIANT:METRIC[:FLOW]".into())),
            };
            let points: Vec<(PointKey, f64)> = by_point(records, variant, metric, flow, at)
                .into_iter()
                .map(|(p, v)| (p, center(exp, &v).0))
                .collect();
            if points.len() == 1 {
                let values: Vec<f64> = by_point(records, variant, metric, flow, at)
                    .into_values()
                    .next()
                    .unwrap_or_default();
                let (m, ci) = center(exp, &values);
                let text = match ci {
                    Some((l, h)) => format!("{} (95% CI {} to {})", num(m), num(l), num(h)),
                    None => num(m),
                };
                Ok(one(m, text))
            } else {
                spread(&points, "").map_err(|e| format!("{e} (`{variant}`, `{metric}`)"))
            }
        }
        // The largest value of one metric of a variant, over every run,
        // message and sweep point named: the slowest failover, the worst
        // MTT. A run that recorded NaN (it never got there) has no largest.
        "metric-max" => {
            let [variant, metric] = parts[..] else {
                return Some(Err("expected metric-max:VARIANT:METRIC".into()));
            };
            let values: Vec<f64> = by_point(records, variant, metric, None, at)
                .into_values()
                .flatten()
                .collect();
            if values.iter().any(|v| v.is_nan()) {
                let n = values.iter().filter(|v| v.is_nan()).count();
                Err(format!(
                    "metric-max: {n} of {} `{metric}` values of `{variant}` are NaN (never reached)",
                    values.len()
                ))
            } else {
                match values.iter().copied().reduce(f64::max) {
                    Some(m) => Ok(one(m, format!("{} (max of {})", num(m), values.len()))),
                    None => Err(format!("metric-max: no `{metric}` of `{variant}`")),
                }
            }
        }
        "model" => {
            let (variant, eq, flow) = match parts[..] {
                [v, e] => (v, e, None),
                [v, e, f] => match f.parse::<u32>() {
                    Ok(f) => (v, e, Some(f)),
                    Err(_) => return Some(Err(format!("`{f}` is not a flow number"))),
                },
                _ => return Some(Err("expected model:VARIANT:EQ[:FLOW]".into())),
            };
            let eq = match eq {
                "eq5" => Equation::Eq5,
                "eq7" => Equation::Eq7,
                "eq12" => Equation::Eq12,
                other => return Some(Err(format!("unknown model `{other}` (eq5, eq7, eq12)"))),
            };
            let loss = exp
                .models
                .iter()
                .find(|m| m.equation == eq)
                .and_then(|m| m.loss);
            let points: Vec<(PointKey, f64)> = by_point(records, variant, "goodput_kbps", flow, at)
                .into_iter()
                .filter_map(|(p, v)| {
                    let size = p.message_size?;
                    let m = model_kbps(exp, eq, loss, &p, size)?;
                    Some((p, center(exp, &v).0 / m * 100.0))
                })
                .collect();
            spread(&points, "% of the model")
        }
        // The ratio of two variants' means of one metric, over the sweep
        // points both ran (the largest, when there are several).
        // With FLOW, that flow's records only (a dumbbell's competing flow).
        "metric-ratio" => {
            let (a, b, metric, flow) = match parts[..] {
                [a, b, m] => (a, b, m, None),
                [a, b, m, f] => match f.parse::<u32>() {
                    Ok(f) => (a, b, m, Some(f)),
                    Err(_) => return Some(Err(format!("`{f}` is not a flow number"))),
                },
                _ => return Some(Err("expected metric-ratio:A:B:METRIC[:FLOW]".into())),
            };
            let pa = by_point(records, a, metric, flow, at);
            let pb = by_point(records, b, metric, flow, at);
            let worst = pa
                .iter()
                .filter_map(|(p, va)| Some(stats::mean(va)? / stats::mean(pb.get(p)?)?))
                .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))));
            match worst {
                Some(w) => Ok(one(w, format!("{w:.2}"))),
                None => Err(format!(
                    "metric-ratio: no paired `{metric}` of `{a}` and `{b}`"
                )),
            }
        }
        "max-reduction" | "reduction-range" => {
            let [a, b, metric] = parts[..] else {
                return Some(Err(format!("expected {kind}:A:B:METRIC")));
            };
            let pa = by_point(records, a, metric, None, at);
            let pb = by_point(records, b, metric, None, at);
            let points: Vec<(PointKey, f64)> = pa
                .iter()
                .filter_map(|(p, va)| {
                    let x = stats::mean(va)?;
                    let y = stats::mean(pb.get(p)?)?;
                    (x > 0.0).then(|| (*p, (x - y) / x * 100.0))
                })
                .collect();
            if kind == "reduction-range" {
                spread(&points, "%")
            } else {
                match points.iter().max_by(|x, y| x.1.total_cmp(&y.1)) {
                    Some((p, r)) => Ok(one(*r, format!("{r:.1}% (at {})", describe(p)))),
                    None => Err(format!("no paired results of `{a}` and `{b}`")),
                }
            }
        }
        _ => return None,
    };
    Some(q)
}

fn rtx_quantity(
    records: &[Record],
    kind: &str,
    variant: &str,
    cause: &str,
    at: &PointFilter,
) -> Result<Quantity, String> {
    let all = first_rtx(records, variant, at);
    let lost: Vec<&(String, bool, f64)> = all.iter().filter(|x| x.1).collect();
    let of_cause = |x: &&&(String, bool, f64)| cause == "all" || x.0 == cause;
    match kind {
        "lost-rtx" => {
            let v: Vec<f64> = lost.iter().filter(of_cause).map(|x| x.2).collect();
            let m = stats::mean(&v)
                .ok_or_else(|| format!("no lost chunk of `{variant}` recovered by `{cause}`"))?;
            Ok(one(m, format!("{m:.1} (n = {})", v.len())))
        }
        "lost-share" => {
            if lost.is_empty() {
                return Err(format!("no lost chunks of `{variant}`"));
            }
            let n = lost.iter().filter(of_cause).count();
            let share = n as f64 / lost.len() as f64 * 100.0;
            Ok(one(share, format!("{share:.1}% ({n} of {})", lost.len())))
        }
        _ => {
            if all.is_empty() {
                return Err(format!("no retransmissions of `{variant}`"));
            }
            let n = match cause {
                "spurious" => all.iter().filter(|x| !x.1).count(),
                "lost" => lost.len(),
                c => all.iter().filter(|x| x.0 == c).count(),
            };
            let share = n as f64 / all.len() as f64 * 100.0;
            Ok(one(share, format!("{share:.1}% ({n} of {})", all.len())))
        }
    }
}

/// A point in words, naming only what a sweep sets.
pub(crate) fn describe(p: &PointKey) -> String {
    let mut parts = vec![
        format!("{} kbit/s", p.bandwidth_kbps),
        format!("RTT {} ms", trim_number(2.0 * p.delay_ms())),
    ];
    if let Some(s) = p.message_size {
        parts.push(format!("{s} B"));
    }
    if let Some(l) = p.loss() {
        parts.push(format!("loss {}%", trim_number(l * 100.0)));
    }
    if let Some(c) = p.corrupt() {
        parts.push(format!("packet errors {}%", trim_number(c * 100.0)));
    }
    if let Some(r) = p.rate() {
        parts.push(format!("{}/s", trim_number(r)));
    }
    if let Some(m) = p.mtu {
        parts.push(format!("MTU {m}"));
    }
    parts.join(", ")
}

/// Names for `points` relative to `base` (one of them): the base is "base"
/// and each other point names only what differs from it (one parameter at
/// a time); without a base among them, the parts that differ between them.
fn names_from_base(points: &[PointKey], base: &PointKey) -> Vec<String> {
    if points.len() < 2 || !points.contains(base) {
        return distinguish(points);
    }
    let base_words: Vec<String> = describe(base).split(", ").map(str::to_owned).collect();
    points
        .iter()
        .map(|p| {
            if p == base {
                return "base".to_owned();
            }
            describe(p)
                .split(", ")
                .enumerate()
                .filter(|(i, w)| base_words.get(*i).is_none_or(|b| b != w))
                .map(|(_, w)| w.to_owned())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect()
}

/// The parts of each point's description that differ between `points`.
pub(crate) fn distinguish(points: &[PointKey]) -> Vec<String> {
    let words: Vec<Vec<String>> = points
        .iter()
        .map(|p| describe(p).split(", ").map(str::to_owned).collect())
        .collect();
    let width = words.iter().map(Vec::len).max().unwrap_or(0);
    let varying: Vec<usize> = (0..width)
        .filter(|&i| {
            let set: BTreeSet<Option<&String>> = words.iter().map(|w| w.get(i)).collect();
            set.len() > 1
        })
        .collect();
    words
        .iter()
        .map(|w| {
            varying
                .iter()
                .filter_map(|&i| w.get(i).cloned())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect()
}

/// (cause, lost, delay ms) of each first retransmission.
type FirstRtx = Vec<(String, bool, f64)>;

/// The charts and tables of a flow figure.
pub(crate) fn figure(exp: &Experiment, records: &[Record]) -> Figures {
    match exp.figure {
        Figure::RetransmissionTable => retransmission_figure(exp, records),
        Figure::GoodputVsSize => goodput_figure(exp, records),
        Figure::MttVsRate => rate_figure(exp, records),
        Figure::LatencyTable => latency_figure(exp, records),
        Figure::DelayTable => crate::packet_delay::figure(exp, records),
        Figure::SequenceTrace => crate::traces::figure(exp),
        Figure::MttPerTsn | Figure::SummaryVsDelay => (Vec::new(), Vec::new()),
    }
}

/// Adds the paper's published series, as markers, to the first chart. A
/// paper series named like one of ours after its last ": " (`paper:
/// t3-timeout` beside `ours: t3-timeout`) takes that series' colour, with an
/// open marker.
pub(crate) fn add_paper_series(exp: &Experiment, charts: &mut [(String, Chart)]) {
    let Some((_, chart)) = charts.first_mut() else {
        return;
    };
    let suffix = |name: &str| name.rsplit(": ").next().unwrap_or(name).to_owned();
    let ours: Vec<(String, usize, crate::plot::Marker)> = chart
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| (suffix(&s.name), s.color.unwrap_or(i), s.look(i).marker))
        .collect();
    for ps in &exp.paper_series {
        let points =
            ps.x.iter()
                .zip(&ps.y)
                .map(|(x, y)| Point::new(*x, *y))
                .collect();
        let mut series = Series::new(ps.name.clone(), points, SeriesStyle::Markers);
        if let Some((_, color, marker)) = ours.iter().find(|o| o.0 == suffix(&ps.name)) {
            use crate::plot::Marker;
            // The open counterpart of our marker (see plot::MARKERS).
            let open = match marker {
                Marker::Triangle => 6,
                Marker::Square => 7,
                _ => 5,
            };
            series = series.with_color(*color).with_marker(open);
        }
        chart.series.push(series);
    }
}

/// The order causes are listed in.
const CAUSES: [&str; 7] = [
    "t3-timeout",
    "fast-retransmit",
    T3_BUNDLED,
    "early-retransmit",
    "tail-loss-probe",
    "bundled",
    "packet-drop",
];

fn ms(x: Option<f64>) -> String {
    x.map_or_else(String::new, |v| format!("{v:.1}"))
}

fn retransmission_figure(exp: &Experiment, records: &[Record]) -> Figures {
    // Per variant and point: (cause, lost, delay).
    let mut data: BTreeMap<(usize, PointKey), FirstRtx> = BTreeMap::new();
    let order = |v: &str| exp.variants.iter().position(|x| x.name == v);
    for r in records {
        let Some(vi) = order(&r.variant) else {
            continue;
        };
        let entry = if let Some(c) = r.metric.strip_prefix("lost_first_rtx_ms_") {
            Some((c.to_owned(), true))
        } else {
            r.metric
                .strip_prefix("spurious_first_rtx_ms_")
                .map(|c| (c.to_owned(), false))
        };
        let key = (vi, PointKey::of(r));
        if let Some((c, lost)) = entry {
            data.entry(key).or_default().push((c, lost, r.value));
        } else if r.metric == "lost_chunks" {
            data.entry(key).or_default();
        }
    }

    let headers = [
        "variant",
        "RTT (ms)",
        "first retransmission by",
        "chunks",
        "% of lost",
        "% of all first rtx",
        "min (ms)",
        "max (ms)",
        "mean (ms)",
        "paper: type",
        "paper: number",
        "paper: frequency",
        "paper: min",
        "paper: max",
        "paper: mean",
    ];
    let mut rows = Vec::new();
    for ((vi, p), items) in &data {
        let variant = &exp.variants[*vi].name;
        let rtt = 2.0 * p.delay_ms();
        let lost: Vec<&(String, bool, f64)> = items.iter().filter(|x| x.1).collect();
        let total = items.len();
        let paper = |cause: &str| {
            exp.paper_rows
                .iter()
                .find(|r| &r.variant == variant && (r.rtt - rtt).abs() < 0.5 && r.cause == cause)
        };
        let mut row = |label: &str, values: &[f64], of_lost: bool, cause_key: &str| {
            let n = values.len();
            let s = stats::summarize(values);
            let share = |d: usize| {
                if d == 0 {
                    String::new()
                } else {
                    format!("{:.1}%", n as f64 / d as f64 * 100.0)
                }
            };
            let mut cells = vec![
                variant.clone(),
                trim_number(rtt),
                label.to_owned(),
                n.to_string(),
                if of_lost {
                    share(lost.len())
                } else {
                    String::new()
                },
                share(total),
                ms(s.min),
                ms(s.max),
                ms(s.mean),
            ];
            match paper(cause_key) {
                Some(pr) => cells.extend([
                    pr.label.clone(),
                    pr.number.to_string(),
                    pr.frequency
                        .map_or_else(|| "not given".to_owned(), |f| format!("{f:.1}%")),
                    format!("{:.1}", pr.min),
                    format!("{:.1}", pr.max),
                    format!("{:.1}", pr.mean),
                ]),
                None => cells.extend(std::iter::repeat_n(String::new(), 6)),
            }
            rows.push(cells);
        };
        let mut causes: Vec<String> = CAUSES.iter().map(|c| (*c).to_owned()).collect();
        for x in &lost {
            if !causes.contains(&x.0) {
                causes.push(x.0.clone());
            }
        }
        for c in &causes {
            let v: Vec<f64> = lost.iter().filter(|x| &x.0 == c).map(|x| x.2).collect();
            if !v.is_empty() || paper(c).is_some() {
                row(c, &v, true, c);
            }
        }
        let all: Vec<f64> = lost.iter().map(|x| x.2).collect();
        row("all lost chunks", &all, true, "all");
        let spurious: Vec<f64> = items.iter().filter(|x| !x.1).map(|x| x.2).collect();
        row("spurious (original arrived)", &spurious, false, "spurious");
    }
    let table = Table {
        headers: headers.iter().map(|h| (*h).to_owned()).collect(),
        rows,
    };

    // The chart: mean delay of lost chunks by cause, against RTT, or per
    // variant when there is one RTT.
    let delays: BTreeSet<u64> = data.keys().map(|(_, p)| p.delay_us).collect();
    let mean_of = |items: &[(String, bool, f64)], cause: &str| {
        let v: Vec<f64> = items
            .iter()
            .filter(|x| x.1 && (cause == "all" || x.0 == cause))
            .map(|x| x.2)
            .collect();
        let s = stats::summarize(&v);
        (s.mean, s.ci95)
    };
    let shown = ["t3-timeout", "fast-retransmit", "all"];
    let label = |c: &str| match c {
        "all" => "all lost chunks".to_owned(),
        c => c.to_owned(),
    };
    let mut series = Vec::new();
    let by_rtt = delays.len() > 1;
    // Against RTT: colour is the variant and the marker the cause (with one
    // variant, both the cause). Per variant (categories): colour and marker
    // are the cause.
    let several = exp.variants.len() > 1;
    if by_rtt {
        for (vi, v) in exp.variants.iter().enumerate() {
            for (ci, c) in shown.iter().copied().enumerate() {
                let points: Vec<Point> = data
                    .iter()
                    .filter(|((i, _), _)| *i == vi)
                    .filter_map(|((_, p), items)| {
                        let (m, ci) = mean_of(items, c);
                        Some(Point {
                            x: 2.0 * p.delay_ms(),
                            y: m?,
                            ci,
                        })
                    })
                    .collect();
                if !points.is_empty() {
                    let name = if exp.variants.len() > 1 {
                        format!("{}: {}", v.name, label(c))
                    } else {
                        format!("ours: {}", label(c))
                    };
                    series.push(
                        Series::new(name, points, SeriesStyle::LineAndMarkers)
                            .with_color(if several { vi } else { ci })
                            .with_marker(ci),
                    );
                }
            }
        }
    } else {
        for (ci, c) in shown.iter().copied().enumerate() {
            let points: Vec<Point> = data
                .iter()
                .filter_map(|((vi, _), items)| {
                    let (m, ci) = mean_of(items, c);
                    Some(Point {
                        x: (*vi + 1) as f64,
                        y: m?,
                        ci,
                    })
                })
                .collect();
            if !points.is_empty() {
                series.push(
                    Series::new(format!("ours: {}", label(c)), points, SeriesStyle::Markers)
                        .with_color(ci)
                        .with_marker(ci),
                );
            }
        }
    }
    let chart = Chart {
        title: chart_title(exp),
        x_label: if by_rtt {
            "round-trip time (ms)"
        } else {
            "variant"
        }
        .into(),
        y_label: "mean delay of the first retransmission (ms)".into(),
        series,
        x_range: None,
        y_range: None,
        x_categories: if by_rtt {
            Vec::new()
        } else {
            exp.variants.iter().map(|v| v.name.clone()).collect()
        },
    };
    (
        vec![(format!("{}-first-rtx", exp.name), chart)],
        vec![(
            "First retransmission of each lost chunk, by cause, beside the paper's table".into(),
            table,
        )],
    )
}

/// The variant (index) and flow a model equation describes: those of the
/// first `model:VARIANT:EQ[:FLOW]` reference that names the equation; else
/// the first variant's first flow.
fn modelled(exp: &Experiment, eq: Equation) -> (usize, u32) {
    exp.reference
        .iter()
        .filter_map(|r| {
            let spec = r.ours.as_deref()?.strip_prefix("model:")?;
            let spec = spec.split_once('@').map_or(spec, |(s, _)| s);
            let mut parts = spec.split(':');
            let (variant, equation) = (parts.next()?, parts.next()?);
            let flow = parts.next().and_then(|f| f.parse().ok()).unwrap_or(0);
            let vi = exp.variants.iter().position(|v| v.name == variant)?;
            (equation == eq.name()).then_some((vi, flow))
        })
        .next()
        .unwrap_or((0, 0))
}

fn goodput_figure(exp: &Experiment, records: &[Record]) -> Figures {
    // (variant, flow, point without size) -> size -> values
    type Curves = BTreeMap<(usize, u32, PointKey), BTreeMap<usize, Vec<f64>>>;
    let mut curves: Curves = BTreeMap::new();
    for r in records.iter().filter(|r| r.metric == "goodput_kbps") {
        let (Some(vi), Some(size)) = (
            exp.variants.iter().position(|v| v.name == r.variant),
            r.message_size(),
        ) else {
            continue;
        };
        let p = PointKey::of(r).without_size();
        curves
            .entry((vi, r.flow, p))
            .or_default()
            .entry(size)
            .or_default()
            .push(r.value);
    }
    let groups: Vec<PointKey> = curves
        .keys()
        .map(|k| k.2)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let base = PointKey::of_point(&exp.point(&crate::experiment::PointIdx::default()), None)
        .without_size();
    let group_names = names_from_base(&groups, &base);
    let group_name = |p: &PointKey| {
        groups
            .iter()
            .position(|g| g == p)
            .map(|i| group_names[i].clone())
            .unwrap_or_default()
    };
    let flows = exp.topology.dumbbell.as_ref().map_or(1, |d| d.flows);
    // Colour: the sweep point when there are several (a model curve is one
    // point's), else the variant, else the flow; the marker tells the rest.
    // A model curve takes the colour of the series it models, with a dash.
    let group_index = |p: &PointKey| groups.iter().position(|g| g == p).unwrap_or(0);
    let color_of = |vi: usize, flow: u32, p: &PointKey| {
        if groups.len() > 1 {
            group_index(p)
        } else if exp.variants.len() > 1 {
            vi
        } else {
            flow as usize
        }
    };
    let marker_of = |vi: usize, flow: u32| {
        if groups.len() > 1 {
            vi * flows as usize + flow as usize
        } else if exp.variants.len() > 1 {
            flow as usize
        } else {
            0
        }
    };
    let mut series = Vec::new();
    let mut model_series = Vec::new();
    for ((vi, flow, p), by_size) in &curves {
        let mut parts = Vec::new();
        if exp.variants.len() > 1 {
            parts.push(exp.variants[*vi].name.clone());
        }
        if flows > 1 {
            parts.push(format!("flow {}", flow + 1));
        }
        let g = group_name(p);
        if !g.is_empty() {
            parts.push(g);
        }
        let points = by_size
            .iter()
            .map(|(size, v)| {
                let (y, ci) = center(exp, v);
                Point {
                    x: *size as f64,
                    y,
                    ci,
                }
            })
            .collect();
        series.push(
            Series::new(
                format!("ours: {}", parts.join(", ")),
                points,
                SeriesStyle::Markers,
            )
            .with_color(color_of(*vi, *flow, p))
            .with_marker(marker_of(*vi, *flow)),
        );
    }
    let sizes: BTreeSet<usize> = curves.values().flat_map(|c| c.keys().copied()).collect();
    let (lo, hi) = (
        sizes.first().copied().unwrap_or(10),
        sizes.last().copied().unwrap_or(1450),
    );
    for (mi, m) in exp.models.iter().enumerate() {
        let (modelled_variant, modelled_flow) = modelled(exp, m.equation);
        for p in &groups {
            let points: Vec<Point> = (lo..=hi)
                .step_by(m.step)
                .filter_map(|size| {
                    let y = model_kbps(exp, m.equation, m.loss, p, size)?;
                    Some(Point::new(size as f64, y))
                })
                .collect();
            if points.is_empty() {
                continue;
            }
            let g = group_name(p);
            let name = if g.is_empty() {
                m.name.clone()
            } else {
                format!("{}, {g}", m.name)
            };
            model_series.push((
                *p,
                m.equation,
                Series::new(name, points, SeriesStyle::Line)
                    .with_color(color_of(modelled_variant, modelled_flow, p))
                    .with_dash(mi + 1),
            ));
        }
    }
    // With several curves, the main chart draws the first model only; the
    // base chart below has every model.
    let first_model = exp.models.first().map(|m| m.equation);
    let mut main = series.clone();
    main.extend(
        model_series
            .iter()
            .filter(|m| groups.len() < 2 || Some(m.1) == first_model)
            .map(|m| m.2.clone()),
    );
    let chart = Chart {
        title: chart_title(exp),
        x_label: "message size (bytes)".into(),
        y_label: "goodput (kbit/s)".into(),
        series: main,
        x_range: None,
        y_range: None,
        x_categories: Vec::new(),
    };
    let mut charts = vec![(format!("{}-goodput", exp.name), chart)];
    // With several curves, the base point alone against every model (seed
    // 003's Fig. 5 next to its Fig. 3).
    if groups.len() > 1 && exp.models.len() > 1 && groups.contains(&base) {
        let g = group_name(&base);
        let strip = |s: &Series| Series {
            name: s
                .name
                .trim_end_matches(&format!(", {g}"))
                .trim_end_matches(&format!(": {g}"))
                .to_owned(),
            ..s.clone()
        };
        let mut only_base: Vec<Series> = curves
            .keys()
            .zip(&series)
            .filter(|(k, _)| k.2 == base)
            .map(|(_, s)| strip(s))
            .collect();
        only_base.extend(
            model_series
                .iter()
                .filter(|m| m.0 == base)
                .map(|m| strip(&m.2)),
        );
        charts.push((
            format!("{}-base", exp.name),
            Chart {
                title: format!("base point ({}), every model", describe(&base)),
                x_label: "message size (bytes)".into(),
                y_label: "goodput (kbit/s)".into(),
                series: only_base,
                x_range: None,
                y_range: None,
                x_categories: Vec::new(),
            },
        ));
    }

    // Every simulated point beside each model.
    let mut headers: Vec<String> = ["variant", "flow", "point", "size (B)", "goodput (kbit/s)"]
        .iter()
        .map(|h| (*h).to_owned())
        .collect();
    for m in &exp.models {
        headers.push(format!("{} (kbit/s)", m.name));
        headers.push(format!("ours / {}", m.equation.name()));
    }
    let mut rows = Vec::new();
    for ((vi, flow, p), by_size) in &curves {
        for (size, v) in by_size {
            let (y, ci) = center(exp, v);
            let mut cells = vec![
                exp.variants[*vi].name.clone(),
                (flow + 1).to_string(),
                group_name(p),
                size.to_string(),
                match ci {
                    Some((l, h)) => format!("{y:.1} ({l:.1} to {h:.1})"),
                    None => format!("{y:.1}"),
                },
            ];
            let mut at = *p;
            at.message_size = Some(*size);
            for m in &exp.models {
                match model_kbps(exp, m.equation, m.loss, &at, *size) {
                    Some(mk) => {
                        cells.push(format!("{mk:.1}"));
                        cells.push(format!("{:.0}%", y / mk * 100.0));
                    }
                    None => cells.extend([String::new(), String::new()]),
                }
            }
            rows.push(cells);
        }
    }
    (
        charts,
        vec![(
            "Simulated goodput at each message size beside the model".into(),
            Table { headers, rows },
        )],
    )
}

/// The `q` quantile (0 to 1) of sorted values: the nearest rank.
fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    Some(sorted[((last as f64) * q).round() as usize])
}

/// Every message's MTT, per (variant, sweep point); with the bytes per
/// message and the share delivered, per run.
struct Latencies {
    mtts: BTreeMap<(usize, PointKey), Vec<f64>>,
    bytes: BTreeMap<(usize, PointKey), Vec<f64>>,
    delivered: BTreeMap<(usize, PointKey), Vec<f64>>,
}

fn latencies(exp: &Experiment, records: &[Record]) -> Latencies {
    let mut l = Latencies {
        mtts: BTreeMap::new(),
        bytes: BTreeMap::new(),
        delivered: BTreeMap::new(),
    };
    for r in records {
        let Some(vi) = exp.variants.iter().position(|v| v.name == r.variant) else {
            continue;
        };
        let key = (vi, PointKey::of(r));
        let into = match r.metric.as_str() {
            "mtt_ms" => &mut l.mtts,
            "bottleneck_bytes_per_message" => &mut l.bytes,
            "delivered_pct" => &mut l.delivered,
            _ => continue,
        };
        into.entry(key).or_default().push(r.value);
    }
    for v in l.mtts.values_mut() {
        v.sort_by(f64::total_cmp);
    }
    l
}

/// The latency table: per point and variant, the runs and messages, p50,
/// p99 with its 95% bootstrap interval over runs (`tails.rs`) and the
/// interval's half-width (flagged beyond ±10%), the largest MTT, and the
/// price beside them: bottleneck bytes per message, spurious retransmissions
/// per run and the share delivered.
fn latency_table(
    exp: &Experiment,
    records: &[Record],
    points: &[PointKey],
    l: &Latencies,
) -> Table {
    let tails = crate::tails::Tails::of(exp, records);
    let names = distinguish(points);
    let mut rows = Vec::new();
    for (pi, p) in points.iter().enumerate() {
        for (vi, v) in exp.variants.iter().enumerate() {
            let (Some(m), Some(cell)) = (l.mtts.get(&(vi, *p)), tails.cells.get(&(vi, *p))) else {
                continue;
            };
            let num = |x: Option<f64>, digits: usize| {
                x.map_or("-".to_owned(), |x| format!("{x:.digits$}"))
            };
            let p99 = tails.estimate(crate::tails::Stat::P99, vi, p);
            let half = match p99.and_then(|e| e.half_width_pct()) {
                Some(h) if h > crate::tails::TARGET_HALF_WIDTH_PCT => {
                    format!("±{h:.1}% (wider than ±10%)")
                }
                Some(h) => format!("±{h:.1}%"),
                None => "one run: no interval".to_owned(),
            };
            rows.push(vec![
                names[pi].clone(),
                v.name.clone(),
                cell.mtts.len().to_string(),
                m.len().to_string(),
                num(quantile(m, 0.5), 1),
                p99.map_or("-".to_owned(), |e| e.text(1)),
                half,
                num(m.last().copied(), 1),
                num(stats::mean(&cell.bytes), 1),
                num(stats::mean(&cell.spurious), 2),
                num(stats::mean(&cell.delivered), 1),
            ]);
        }
    }
    Table {
        headers: [
            "point",
            "variant",
            "runs",
            "messages",
            "p50 MTT (ms)",
            "p99 MTT (ms) [95% CI]",
            "p99 CI half-width",
            "max MTT (ms)",
            "bottleneck bytes per message",
            "spurious retransmissions per run",
            "delivered (%)",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect(),
        rows,
    }
}

fn latency_figure(exp: &Experiment, records: &[Record]) -> Figures {
    let l = latencies(exp, records);
    let points: Vec<PointKey> = l
        .mtts
        .keys()
        .map(|k| k.1)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let table = latency_table(exp, records, &points, &l);
    // p99 against the loss rate, or against the RTT when only the delay is
    // swept: one series per variant and message size.
    let losses: BTreeSet<Option<u64>> = l.mtts.keys().map(|k| k.1.loss_ppb).collect();
    let delays: BTreeSet<u64> = l.mtts.keys().map(|k| k.1.delay_us).collect();
    let by_rtt = losses.len() <= 1 && delays.len() > 1;
    let mut curves: BTreeMap<(usize, Option<usize>), Vec<Point>> = BTreeMap::new();
    for ((vi, p), v) in &l.mtts {
        let x = if by_rtt {
            Some(2.0 * p.delay_us as f64 / 1000.0)
        } else {
            p.loss_ppb.map(|loss| loss as f64 / 1e7)
        };
        if let (Some(x), Some(y)) = (x, quantile(v, 0.99)) {
            curves
                .entry((*vi, p.message_size))
                .or_default()
                .push(Point { x, y, ci: None });
        }
    }
    let sizes: BTreeSet<Option<usize>> = curves.keys().map(|k| k.1).collect();
    let series = curves
        .into_iter()
        .map(|((vi, size), points)| {
            let name = match (size, sizes.len()) {
                (Some(s), n) if n > 1 => format!("{}, {s} B", exp.variants[vi].name),
                _ => exp.variants[vi].name.clone(),
            };
            let si = sizes.iter().position(|x| *x == size).unwrap_or(0);
            Series::new(name, points, SeriesStyle::LineAndMarkers)
                .with_color(vi)
                .with_marker(si)
        })
        .collect();
    let chart = Chart {
        title: format!("{}: 99th percentile MTT", chart_title(exp)),
        x_label: if by_rtt {
            "RTT (ms)"
        } else {
            "random loss (%)"
        }
        .into(),
        y_label: "p99 MTT (ms)".into(),
        series,
        x_range: None,
        y_range: None,
        x_categories: Vec::new(),
    };
    (
        vec![(format!("{}-p99", exp.name), chart)],
        vec![(
            "Message latency: every message of every run (p50, p99 with its 95% bootstrap interval over runs, max) and its cost (bytes, spurious retransmissions)".to_owned(),
            table,
        )],
    )
}

fn rate_figure(exp: &Experiment, records: &[Record]) -> Figures {
    // metric -> (variant, point without rate) -> rate -> values
    type Curves = BTreeMap<(usize, PointKey), BTreeMap<u64, Vec<f64>>>;
    let metrics = [
        ("owd_mean_ms", "mean MTT (ms)", "mtt"),
        (
            "data_packets_per_message",
            "DATA packets per message",
            "packets",
        ),
    ];
    let collect = |metric: &str| {
        let mut curves: Curves = BTreeMap::new();
        for r in records.iter().filter(|r| r.metric == metric) {
            let (Some(vi), Some(rate)) = (
                exp.variants.iter().position(|v| v.name == r.variant),
                PointKey::of(r).rate_milli,
            ) else {
                continue;
            };
            curves
                .entry((vi, PointKey::of(r).without_rate()))
                .or_default()
                .entry(rate)
                .or_default()
                .push(r.value);
        }
        curves
    };
    let all: Vec<Curves> = metrics.iter().map(|m| collect(m.0)).collect();
    let groups: Vec<PointKey> = all[0]
        .keys()
        .map(|k| k.1)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let names = distinguish(&groups);
    let group_name = |p: &PointKey| {
        groups
            .iter()
            .position(|g| g == p)
            .map(|i| names[i].clone())
            .unwrap_or_default()
    };
    // One chart per metric and per point (message size): each holds the
    // variants, so no two series share a colour and marker.
    let mut charts = Vec::new();
    for ((_, label, stem), curves) in metrics.iter().zip(&all) {
        for (gi, g) in groups.iter().enumerate() {
            let series = curves
                .iter()
                .filter(|((_, p), _)| p == g)
                .map(|((vi, _), by_rate)| {
                    let points = by_rate
                        .iter()
                        .map(|(rate, v)| {
                            let (y, ci) = center(exp, v);
                            Point {
                                x: *rate as f64 / 1000.0,
                                y,
                                ci,
                            }
                        })
                        .collect();
                    Series::new(
                        exp.variants[*vi].name.clone(),
                        points,
                        SeriesStyle::LineAndMarkers,
                    )
                    .with_color(*vi)
                    .with_marker(*vi)
                })
                .collect();
            let name = group_name(g);
            let (file, title) = if groups.len() > 1 {
                (
                    format!("{}-{stem}-{}", exp.name, gi + 1),
                    format!("{label}, {name}"),
                )
            } else {
                (format!("{}-{stem}", exp.name), (*label).to_owned())
            };
            charts.push((
                file,
                Chart {
                    title,
                    x_label: "messages per second".into(),
                    y_label: (*label).to_owned(),
                    series,
                    x_range: None,
                    y_range: None,
                    x_categories: Vec::new(),
                },
            ));
        }
    }
    let mut rows = Vec::new();
    for ((vi, p), by_rate) in &all[0] {
        for (rate, v) in by_rate {
            let mut cells = vec![
                exp.variants[*vi].name.clone(),
                group_name(p),
                trim_number(*rate as f64 / 1000.0),
                format!("{:.1}", center(exp, v).0),
            ];
            let packets = all[1]
                .get(&(*vi, *p))
                .and_then(|c| c.get(rate))
                .map(|v| format!("{:.3}", center(exp, v).0))
                .unwrap_or_default();
            cells.push(packets);
            rows.push(cells);
        }
    }
    let table = Table {
        headers: [
            "variant",
            "point",
            "messages/s",
            "mean MTT (ms)",
            "DATA packets per message",
        ]
        .iter()
        .map(|h| (*h).to_owned())
        .collect(),
        rows,
    };
    (
        charts,
        vec![("Mean MTT and DATA packets per sweep point".into(), table)],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records of `variant`: `n` messages of `mtt` ms, the last `slow` of
    /// them at 10 times that, and `bytes` per message, at `loss`.
    fn latency_records(variant: &str, loss: f64, mtt: f64, slow: usize, bytes: f64) -> Vec<Record> {
        let base = Record {
            experiment: "e".into(),
            variant: variant.into(),
            bandwidth_kbps: 10_000,
            delay_ms: 50.0,
            replication: 0,
            position: None,
            flow: 0,
            tsn: None,
            metric: "mtt_ms".into(),
            value: 0.0,
            sweep: Some(Box::new(crate::runner::SweepValues {
                loss: Some(loss),
                ..Default::default()
            })),
        };
        let mut out: Vec<Record> = (0..100)
            .map(|i| Record {
                tsn: Some(i + 1),
                value: if i >= 100 - slow as u64 {
                    mtt * 10.0
                } else {
                    mtt
                },
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

    #[test]
    fn p99_and_bytes_ratios_take_the_worst_shared_point_and_can_fail() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../experiments/emu/webrtc-app-emu.toml"),
        )
        .unwrap();
        let exp = Experiment::parse(std::path::Path::new("webrtc.toml"), &text).unwrap();
        let mut records = latency_records("brisk-low-latency", 0.02, 60.0, 0, 130.0);
        records.extend(latency_records("usrsctp", 0.02, 60.0, 5, 100.0));
        records.extend(latency_records("brisk-low-latency", 0.05, 60.0, 5, 130.0));
        records.extend(latency_records("usrsctp", 0.05, 60.0, 5, 100.0));
        let at = PointFilter::default();
        let q = |kind, args| quantity(&exp, &records, kind, args, &at).unwrap().unwrap();
        // At 2% ours is 60 against 600 (0.1); at 5% both are 600 (1.0): the
        // worst point counts, so the goal of 0.5 fails (one run each: no
        // interval, `high` is the largest ratio and `low` the smallest).
        let worst = q("p99-ratio", "brisk-low-latency:usrsctp");
        assert!((worst.high - 1.0).abs() < 1e-9);
        assert!((worst.low - 0.1).abs() < 1e-9);
        assert!(
            worst.text.contains("one run: no interval"),
            "{}",
            worst.text
        );
        assert!((q("bytes-ratio", "brisk-low-latency:usrsctp").low - 1.3).abs() < 1e-9);
        // Any metric's means: bytes per message again, 130 against 100.
        let r = q(
            "metric-ratio",
            "brisk-low-latency:usrsctp:bottleneck_bytes_per_message",
        );
        assert!((r.low - 1.3).abs() < 1e-9);
        assert!(
            quantity(&exp, &records, "metric-ratio", "usrsctp:pion:mtt_ms", &at)
                .unwrap()
                .is_err()
        );
        let only = PointFilter::parse("loss=0.02").unwrap();
        let q2 = quantity(
            &exp,
            &records,
            "p99-ratio",
            "brisk-low-latency:usrsctp",
            &only,
        )
        .unwrap()
        .unwrap();
        assert!((q2.low - 0.1).abs() < 1e-9);
        assert!(
            quantity(&exp, &records, "p99-ratio", "brisk-low-latency:pion", &at)
                .unwrap()
                .is_err(),
            "no shared point"
        );
    }

    #[test]
    fn metric_ratio_of_one_flow_compares_the_competing_flows_goodput() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../experiments/emu/webrtc-app-emu.toml"),
        )
        .unwrap();
        let exp = Experiment::parse(std::path::Path::new("webrtc.toml"), &text).unwrap();
        // Flow 0 (the thin stream) and flow 1 (the competing bulk flow) of
        // two runs: the bulk flow keeps 9000 kbit/s next to one and 8100
        // next to the other; the thin streams' own goodput differs the
        // other way and must not enter the ratio.
        let goodput = |variant: &str, flow: u32, value: f64| Record {
            flow,
            metric: "goodput_kbps".into(),
            value,
            ..latency_records(variant, 0.02, 1.0, 0, 1.0).remove(0)
        };
        let records = vec![
            goodput("brisk-low-latency", 0, 40.0),
            goodput("brisk-low-latency", 1, 8100.0),
            goodput("brisk-rfc9260", 0, 20.0),
            goodput("brisk-rfc9260", 1, 9000.0),
        ];
        let at = PointFilter::default();
        let q = |args| quantity(&exp, &records, "metric-ratio", args, &at).unwrap();
        let r = q("brisk-low-latency:brisk-rfc9260:goodput_kbps:1").unwrap();
        assert!((r.low - 0.9).abs() < 1e-9, "{}", r.low);
        // Without the flow both flows' goodputs are averaged together.
        let all = q("brisk-low-latency:brisk-rfc9260:goodput_kbps").unwrap();
        assert!((all.low - 4070.0 / 4510.0).abs() < 1e-9, "{}", all.low);
        assert!(q("brisk-low-latency:brisk-rfc9260:goodput_kbps:x").is_err());
    }

    fn key(delay_us: u64, size: usize, loss: Option<f64>) -> PointKey {
        PointKey {
            bandwidth_kbps: 2000,
            delay_us,
            message_size: Some(size),
            loss_ppb: loss.map(ppb),
            ..PointKey::default()
        }
    }

    fn load(file: &str) -> Experiment {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../experiments")
            .join(file);
        Experiment::load(&path).unwrap()
    }

    /// A goodput record of `variant` at one point of a flow experiment.
    fn goodput(
        variant: &str,
        (bandwidth_kbps, delay_ms): (u64, f64),
        size: usize,
        sweep: crate::runner::SweepValues,
    ) -> Record {
        Record {
            experiment: "t".into(),
            variant: variant.into(),
            bandwidth_kbps,
            delay_ms,
            replication: 0,
            position: None,
            flow: 0,
            tsn: None,
            metric: "goodput_kbps".into(),
            value: 400.0 + size as f64 / 10.0,
            sweep: Some(Box::new(crate::runner::SweepValues {
                message_size: Some(size),
                ..sweep
            })),
        }
    }

    /// The look of the series named `name` in `chart`.
    fn look_of(chart: &Chart, name: &str) -> crate::plot::Look {
        let i = chart.series.iter().position(|s| s.name == name);
        let i = i.unwrap_or_else(|| panic!("no series {name:?} in {:?}", chart.series));
        chart.series[i].look(i)
    }

    #[test]
    fn model_curves_take_the_colour_of_the_series_they_model_with_a_dash() {
        use crate::plot::Dash;
        use crate::runner::SweepValues;
        // Seed 003 Figs. 3 and 5: one variant at four points, a model per point.
        let exp = load("seed003-fig03.toml");
        let at = |loss: f64, mtu: usize| SweepValues {
            loss: Some(loss),
            mtu: Some(mtu),
            ..SweepValues::default()
        };
        let mut records = Vec::new();
        for size in [500, 1000] {
            records.push(goodput("rfc9260", (100_000, 100.0), size, at(0.01, 1500)));
            records.push(goodput("rfc9260", (100_000, 50.0), size, at(0.01, 1500)));
            records.push(goodput("rfc9260", (100_000, 100.0), size, at(0.02, 1500)));
            records.push(goodput("rfc9260", (100_000, 100.0), size, at(0.01, 3000)));
        }
        let (charts, _) = goodput_figure(&exp, &records);
        let main = &charts[0].1;
        let models: Vec<&Series> = main
            .series
            .iter()
            .filter(|s| s.style == SeriesStyle::Line)
            .collect();
        assert_eq!(models.len(), 4, "{:?}", main.series);
        let mut colours = Vec::new();
        for m in models {
            let point = m.name.strip_prefix("eq. 7, ").unwrap();
            let model = look_of(main, &m.name);
            let ours = look_of(main, &format!("ours: {point}"));
            assert_eq!(model.color, ours.color, "{}", m.name);
            assert_ne!(model.dash, Dash::Solid, "{}", m.name);
            colours.push(model.color);
        }
        colours.dedup();
        assert_eq!(colours.len(), 4, "each point its own colour");
        // The base point against both equations: one colour, two dashes.
        let (_, base) = charts.iter().find(|(s, _)| s.ends_with("-base")).unwrap();
        let (ours, eq7, eq5) = (
            look_of(base, "ours"),
            look_of(base, "eq. 7"),
            look_of(base, "eq. 5"),
        );
        assert_eq!((eq7.color, eq5.color), (ours.color, ours.color));
        assert!(eq7.dash != eq5.dash && eq7.dash != Dash::Solid && eq5.dash != Dash::Solid);

        // Seed 003 Fig. 6: eq. 5 models the standard association and eq. 12
        // (the ceiling) the PKTDROP one, as the checks name them.
        let exp = load("seed003-fig06.toml");
        let corrupt = || SweepValues {
            corrupt: Some(0.01),
            ..SweepValues::default()
        };
        let mut records = Vec::new();
        for size in [500, 1000] {
            for v in ["standard", "pktdrop"] {
                records.push(goodput(v, (10_000, 10.0), size, corrupt()));
            }
        }
        let (charts, _) = goodput_figure(&exp, &records);
        let chart = &charts[0].1;
        let standard = look_of(chart, "ours: standard");
        let pktdrop = look_of(chart, "ours: pktdrop");
        assert_ne!(standard.color, pktdrop.color);
        let eq5 = look_of(chart, "eq. 5 (1% errors, RTT 20 ms)");
        let eq12 = look_of(chart, "eq. 12 (error-free ceiling, 10 Mbit/s)");
        assert_eq!((eq5.color, eq12.color), (standard.color, pktdrop.color));
        assert!(eq5.dash != Dash::Solid && eq12.dash != Dash::Solid);
    }

    #[test]
    fn point_filters_take_both_forms_ranges_and_rtt() {
        let old = PointFilter::parse("2000kbit/15ms").unwrap();
        assert!(old.matches(&key(15_000, 200, None)));
        assert!(!old.matches(&key(5_000, 200, None)));
        let f = PointFilter::parse("rtt=200ms,size=400..1450,loss=0.01").unwrap();
        assert_eq!(f.delay_us, Some(100_000));
        assert!(f.matches(&key(100_000, 400, Some(0.01))));
        assert!(f.matches(&key(100_000, 1450, Some(0.01))));
        assert!(!f.matches(&key(100_000, 390, Some(0.01))));
        assert!(!f.matches(&key(100_000, 500, Some(0.02))));
        assert!(
            !f.matches(&key(100_000, 500, None)),
            "a loss the point lacks"
        );
        assert!(PointFilter::default().matches(&key(1, 2, None)));
        assert!(
            PointFilter::parse("colour=red")
                .unwrap_err()
                .contains("unknown sweep key")
        );
        assert!(PointFilter::parse("size=big").is_err());
        assert!(PointFilter::parse("fast").is_err());
    }

    #[test]
    fn points_are_named_by_what_differs_from_the_base() {
        let base = key(100_000, 100, Some(0.01)).without_size();
        let rtt = key(50_000, 100, Some(0.01)).without_size();
        let loss = key(100_000, 100, Some(0.02)).without_size();
        assert_eq!(
            names_from_base(&[rtt, base, loss], &base),
            ["RTT 100 ms", "base", "loss 2%"]
        );
        assert_eq!(
            distinguish(&[rtt, loss]),
            ["RTT 100 ms, loss 1%", "RTT 200 ms, loss 2%"]
        );
    }
}
