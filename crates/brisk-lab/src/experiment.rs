//! Experiment files (TOML): what to run, on what network, with what traffic,
//! and what the paper reported. A bad file stops with an error that names the
//! file, the key and what was expected.
//!
//! ```toml
//! name = "seed000-fig2"
//! title = "MTT per message: bursts of 4, 200 ms gaps, 2000 kbit/s, 15 ms"
//! source = "seed 000 (Hurtig & Brunstrom), Fig. 2"
//! paper = "Standard: lost messages take 110-200 ms ..."
//! method = "loss-position"        # or "flow"
//! seed = 1
//! replications = 3
//! statistic = "median"            # or "mean-ci95"
//! figure = "mtt-per-tsn"          # or "summary-vs-delay"
//!
//! [topology]
//! kind = "point-to-point"
//! bandwidth = "2000kbit"
//! delay = "15ms"                  # one way
//!
//! [traffic]
//! kind = "bursts"
//! bursts = 12
//! warmup_bursts = 2
//! burst_size = 4                  # or { uniform = [1, 7] }
//! gap = "200ms"                   # or { exponential = "200ms" }
//! message_size = 200
//!
//! [[variants]]
//! name = "standard"
//! preset = "signaling-lksctp"
//!
//! [sweep]                         # optional: every combination is run
//! bandwidth = ["500kbit", "1000kbit", "2000kbit"]
//! delay = ["5ms", "10ms", "15ms", "20ms", "25ms"]
//!
//! [[reference]]                   # the paper's numbers, shown beside ours
//! label = "Standard, lost messages"
//! value = "110-200 ms"
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use brisk_proto::Config;
use brisk_proto::config::parse_duration;
use serde::Deserialize;

/// Why an experiment file was refused.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    #[error("{file}: cannot read: {source}")]
    Read {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("{file}: {message}")]
    Syntax { file: PathBuf, message: String },
    #[error("{file}: key `{key}`: expected {expected}, found {found}")]
    Invalid {
        file: PathBuf,
        key: String,
        expected: String,
        found: String,
    },
}

/// How runs are organised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Seed 000's method: for each position k, run the whole flow with exactly
    /// the k-th DATA packet dropped and measure that message.
    LossPosition,
    /// Run the flow under the configured impairments and measure everything.
    Flow,
}

/// How replications are summarised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Statistic {
    /// Deterministic scenarios: the median of the replications.
    Median,
    /// Random scenarios: the mean with a Student-t 95% confidence interval.
    MeanCi95,
}

/// Which figure the report draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Figure {
    /// MTT of each message (seed 000, Fig. 2).
    MttPerTsn,
    /// A summary per sweep point, against one-way delay, one line per bandwidth
    /// (seed 000, Fig. 3).
    SummaryVsDelay,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    name: String,
    title: String,
    source: String,
    #[serde(default)]
    paper: String,
    method: Method,
    #[serde(default = "default_seed")]
    seed: u64,
    #[serde(default = "default_replications")]
    replications: u32,
    statistic: Statistic,
    figure: Figure,
    topology: RawTopology,
    traffic: RawTraffic,
    variants: Vec<RawVariant>,
    #[serde(default)]
    sweep: RawSweep,
    #[serde(default)]
    impairments: Vec<String>,
    #[serde(default)]
    reference: Vec<Reference>,
    #[serde(default)]
    notes: Vec<String>,
}

fn default_seed() -> u64 {
    1
}

fn default_replications() -> u32 {
    1
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTopology {
    kind: String,
    bandwidth: String,
    delay: String,
    #[serde(default)]
    queue_packets: Option<usize>,
    #[serde(default)]
    overhead_bytes: Option<usize>,
    /// Dumbbell: sender/receiver pairs sharing the bottleneck.
    #[serde(default)]
    flows: Option<u32>,
    /// Dumbbell: the variant of each flow, overriding the run's variant.
    #[serde(default)]
    flow_variants: Option<Vec<String>>,
    #[serde(default)]
    access_bandwidth: Option<String>,
    #[serde(default)]
    access_delay: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTraffic {
    kind: String,
    #[serde(default)]
    bursts: Option<u32>,
    #[serde(default)]
    warmup_bursts: Option<u32>,
    #[serde(default)]
    burst_size: Option<RawCount>,
    #[serde(default)]
    gap: Option<RawGap>,
    #[serde(default)]
    message_size: Option<usize>,
    #[serde(default)]
    interval: Option<String>,
    #[serde(default)]
    messages: Option<u64>,
    #[serde(default)]
    file: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum RawCount {
    Fixed(i64),
    Uniform { uniform: [i64; 2] },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum RawGap {
    Fixed(String),
    Exponential { exponential: String },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVariant {
    name: String,
    preset: String,
    #[serde(default)]
    set: BTreeMap<String, toml::Value>,
    /// For loss-position experiments: drop nothing (the no-loss baseline).
    #[serde(default)]
    no_loss: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSweep {
    #[serde(default)]
    bandwidth: Option<Vec<String>>,
    #[serde(default)]
    delay: Option<Vec<String>>,
}

/// A number from the paper, shown beside ours.
///
/// `ours` names the quantity of our results to compare with it:
/// - `range:VARIANT`: the smallest and largest MTT of the variant (ms);
/// - `mean:VARIANT`: the mean MTT over all measured messages (ms);
/// - `position:VARIANT:K`: the mean MTT of the K-th message of each burst (ms);
/// - `mean:VARIANT@BANDWIDTH/DELAY`: the mean MTT at one sweep point, e.g.
///   `mean:standard@2000kbit/15ms`;
/// - `reduction:A:B` or `reduction:A:B@BANDWIDTH/DELAY`: the mean MTT
///   reduction of variant B against A, in percent.
///
/// With `min` and/or `max`, the report (and the tests) check that ours lies
/// within them.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    pub label: String,
    pub value: String,
    #[serde(default)]
    pub ours: Option<String>,
    #[serde(default)]
    pub min: Option<f64>,
    #[serde(default)]
    pub max: Option<f64>,
}

/// The network: senders and receivers across a bottleneck.
#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    pub bandwidth_bps: u64,
    pub delay: Duration,
    pub queue_packets: usize,
    /// Bytes each packet carries beyond the SCTP packet (IP, and UDP if modelled).
    pub overhead_bytes: usize,
    /// `None`: point to point, one flow. `Some`: a dumbbell.
    pub dumbbell: Option<Dumbbell>,
}

/// A dumbbell: `flows` sender/receiver pairs; each host reaches its router over
/// an access link, the routers share the bottleneck.
#[derive(Debug, Clone, PartialEq)]
pub struct Dumbbell {
    pub flows: u32,
    /// Per flow, the index of its variant (`None`: the run's variant).
    pub flow_variants: Option<Vec<usize>>,
    pub access_bandwidth_bps: u64,
    pub access_delay: Duration,
}

/// How many messages a burst has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    Fixed(u32),
    /// Uniform over `[low, high]`, inclusive.
    Uniform(u32, u32),
}

/// Time between bursts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Gap {
    Fixed(Duration),
    Exponential(Duration),
}

/// What the sender sends.
#[derive(Debug, Clone, PartialEq)]
pub enum Traffic {
    /// Bursts of messages separated by gaps (seed 000); each message in its own packet.
    Bursts {
        bursts: u32,
        warmup_bursts: u32,
        size: Count,
        gap: Gap,
        message_size: usize,
    },
    /// A thin stream: one message every `interval` (seed 001: 4 writes/s).
    Periodic {
        interval: Duration,
        messages: u64,
        message_size: usize,
    },
    /// `messages` messages written as fast as the send buffer takes them.
    Bulk { messages: u64, message_size: usize },
    /// Messages at the times and sizes a trace file lists.
    Trace { entries: Vec<(Duration, usize)> },
}

/// A protocol variant: a preset with overrides.
#[derive(Debug, Clone)]
pub struct Variant {
    pub name: String,
    pub config: Config,
    pub no_loss: bool,
}

/// A validated experiment.
#[derive(Debug, Clone)]
pub struct Experiment {
    pub file: PathBuf,
    pub name: String,
    pub title: String,
    pub source: String,
    pub paper: String,
    pub method: Method,
    pub seed: u64,
    pub replications: u32,
    pub statistic: Statistic,
    pub figure: Figure,
    pub topology: Topology,
    pub traffic: Traffic,
    pub variants: Vec<Variant>,
    /// Sweep values; a single value each when not swept.
    pub bandwidths: Vec<u64>,
    pub delays: Vec<Duration>,
    pub impairments: Vec<String>,
    pub reference: Vec<Reference>,
    pub notes: Vec<String>,
}

/// Parses a rate: `2000kbit`, `2Mbit`, `1Gbit`, `64000bit` or bits per second.
pub fn parse_rate(value: &str) -> Option<u64> {
    let v = value.trim().to_ascii_lowercase();
    let (number, scale) = if let Some(n) = v.strip_suffix("gbit") {
        (n, 1e9)
    } else if let Some(n) = v.strip_suffix("mbit") {
        (n, 1e6)
    } else if let Some(n) = v.strip_suffix("kbit") {
        (n, 1e3)
    } else if let Some(n) = v.strip_suffix("bit") {
        (n, 1.0)
    } else {
        (v.as_str(), 1.0)
    };
    let x: f64 = number.trim().parse().ok()?;
    (x.is_finite() && x > 0.0).then(|| (x * scale).round() as u64)
}

/// Parses a trace: one message per line, `TIME SIZE` (time since the start,
/// with a unit or in seconds; size in bytes, at least 8); `#` comments.
pub fn parse_trace(text: &str) -> Result<Vec<(Duration, usize)>, (usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut f = line.split_whitespace();
        let (Some(t), Some(size), None) = (f.next(), f.next(), f.next()) else {
            return Err((n + 1, format!("`{line}` is not TIME SIZE")));
        };
        let t = if t.parse::<f64>().is_ok() {
            parse_duration(&format!("{t}s"))
        } else {
            parse_duration(t)
        }
        .ok_or_else(|| (n + 1, format!("`{t}` is not a time")))?;
        let size: usize = size
            .parse()
            .ok()
            .filter(|s| *s >= 8)
            .ok_or_else(|| (n + 1, format!("`{size}` is not a size of at least 8 bytes")))?;
        out.push((t, size));
    }
    if out.is_empty() {
        return Err((0, "no messages".into()));
    }
    Ok(out)
}

/// The presets experiments use: the protocol's, plus `signaling-lksctp`, seed
/// 000's "Standard": lksctp 2.6.15 with the signaling parameters of its Table 1
/// (RTO.Initial 200 ms, RTO.Min 100, RTO.Max 400, SACK delay 40 ms) and none of
/// the latency mechanisms.
pub fn preset(name: &str) -> Option<Config> {
    let signaling = |base: Config| Config {
        rto_initial: Duration::from_millis(200),
        rto_min: Duration::from_millis(100),
        rto_max: Duration::from_millis(400),
        sack_delay: Duration::from_millis(40),
        ..base
    };
    match name {
        "signaling-lksctp" => Some(signaling(Config::lksctp_2_6_15())),
        other => Config::preset(other).ok(),
    }
}

/// Names `preset` knows.
pub const LAB_PRESETS: &[&str] = &[
    "rfc9260",
    "lksctp-2.6.15",
    "signaling",
    "thin-stream",
    "low-latency",
    "signaling-lksctp",
];

impl Experiment {
    /// Reads and validates an experiment file.
    pub fn load(path: &Path) -> Result<Experiment, ExperimentError> {
        let text = std::fs::read_to_string(path).map_err(|source| ExperimentError::Read {
            file: path.to_owned(),
            source,
        })?;
        Self::parse(path, &text)
    }

    /// Parses and validates experiment text; `path` names it in errors.
    pub fn parse(path: &Path, text: &str) -> Result<Experiment, ExperimentError> {
        let raw: RawFile = toml::from_str(text).map_err(|e| ExperimentError::Syntax {
            file: path.to_owned(),
            message: e.to_string().trim_end().replace('\n', " "),
        })?;
        let invalid = |key: &str, expected: &str, found: String| ExperimentError::Invalid {
            file: path.to_owned(),
            key: key.to_owned(),
            expected: expected.to_owned(),
            found,
        };
        let rate = |key: &str, v: &str| {
            parse_rate(v).ok_or_else(|| {
                invalid(
                    key,
                    "a positive rate such as 2000kbit or 2Mbit",
                    format!("`{v}`"),
                )
            })
        };
        let duration = |key: &str, v: &str| {
            parse_duration(v).ok_or_else(|| {
                invalid(
                    key,
                    "a non-negative duration such as 15ms or 1.5s",
                    format!("`{v}`"),
                )
            })
        };

        let dumbbell = match raw.topology.kind.as_str() {
            "point-to-point" => None,
            "dumbbell" => {
                let flows = raw.topology.flows.unwrap_or(2);
                if flows == 0 {
                    return Err(invalid("topology.flows", "at least 1", "0".into()));
                }
                let flow_variants = match &raw.topology.flow_variants {
                    None => None,
                    Some(names) => {
                        if names.len() != flows as usize {
                            return Err(invalid(
                                "topology.flow_variants",
                                &format!("one variant name per flow ({flows})"),
                                format!("{} names", names.len()),
                            ));
                        }
                        let mut idx = Vec::new();
                        for n in names {
                            let i = raw.variants.iter().position(|v| &v.name == n).ok_or_else(
                                || {
                                    invalid(
                                        "topology.flow_variants",
                                        "names of [[variants]]",
                                        format!("`{n}`"),
                                    )
                                },
                            )?;
                            idx.push(i);
                        }
                        Some(idx)
                    }
                };
                Some(Dumbbell {
                    flows,
                    flow_variants,
                    access_bandwidth_bps: match &raw.topology.access_bandwidth {
                        Some(v) => rate("topology.access_bandwidth", v)?,
                        None => 1_000_000_000,
                    },
                    access_delay: match &raw.topology.access_delay {
                        Some(v) => duration("topology.access_delay", v)?,
                        None => Duration::ZERO,
                    },
                })
            }
            other => {
                return Err(invalid(
                    "topology.kind",
                    "\"point-to-point\" or \"dumbbell\"",
                    format!("`{other}`"),
                ));
            }
        };
        let topology = Topology {
            bandwidth_bps: rate("topology.bandwidth", &raw.topology.bandwidth)?,
            delay: duration("topology.delay", &raw.topology.delay)?,
            queue_packets: raw.topology.queue_packets.unwrap_or(1000),
            overhead_bytes: raw.topology.overhead_bytes.unwrap_or(28),
            dumbbell,
        };
        if raw.replications == 0 {
            return Err(invalid("replications", "at least 1", "0".into()));
        }

        let bandwidths = match &raw.sweep.bandwidth {
            None => vec![topology.bandwidth_bps],
            Some(v) if v.is_empty() => {
                return Err(invalid(
                    "sweep.bandwidth",
                    "at least one value",
                    "an empty list".into(),
                ));
            }
            Some(v) => v
                .iter()
                .map(|x| rate("sweep.bandwidth", x))
                .collect::<Result<_, _>>()?,
        };
        let delays = match &raw.sweep.delay {
            None => vec![topology.delay],
            Some(v) if v.is_empty() => {
                return Err(invalid(
                    "sweep.delay",
                    "at least one value",
                    "an empty list".into(),
                ));
            }
            Some(v) => v
                .iter()
                .map(|x| duration("sweep.delay", x))
                .collect::<Result<_, _>>()?,
        };

        let t = &raw.traffic;
        let need = |key: &'static str| {
            invalid(
                &format!("traffic.{key}"),
                "a value for this traffic kind",
                "nothing".into(),
            )
        };
        let message_size = t.message_size.ok_or_else(|| need("message_size"))?;
        if message_size < 8 {
            return Err(invalid(
                "traffic.message_size",
                "at least 8 bytes (messages carry their number)",
                message_size.to_string(),
            ));
        }
        let traffic = match t.kind.as_str() {
            "bursts" => {
                let size = match t.burst_size.clone().ok_or_else(|| need("burst_size"))? {
                    RawCount::Fixed(n) if n >= 1 => Count::Fixed(n as u32),
                    RawCount::Uniform { uniform: [a, b] } if a >= 1 && b >= a => {
                        Count::Uniform(a as u32, b as u32)
                    }
                    other => {
                        return Err(invalid(
                            "traffic.burst_size",
                            "a count of at least 1, or { uniform = [low, high] } with 1 <= low <= high",
                            format!("{other:?}"),
                        ));
                    }
                };
                let gap = match t.gap.clone().ok_or_else(|| need("gap"))? {
                    RawGap::Fixed(g) => Gap::Fixed(duration("traffic.gap", &g)?),
                    RawGap::Exponential { exponential } => {
                        Gap::Exponential(duration("traffic.gap.exponential", &exponential)?)
                    }
                };
                let bursts = t.bursts.ok_or_else(|| need("bursts"))?;
                let warmup_bursts = t.warmup_bursts.unwrap_or(0);
                if bursts <= warmup_bursts {
                    return Err(invalid(
                        "traffic.bursts",
                        "more bursts than warmup_bursts",
                        format!("{bursts} bursts, {warmup_bursts} warm-up"),
                    ));
                }
                Traffic::Bursts {
                    bursts,
                    warmup_bursts,
                    size,
                    gap,
                    message_size,
                }
            }
            "bulk" => Traffic::Bulk {
                messages: t.messages.ok_or_else(|| need("messages"))?,
                message_size,
            },
            "trace" => {
                let name = t.file.as_deref().ok_or_else(|| need("file"))?;
                let trace_path = path.parent().unwrap_or(Path::new(".")).join(name);
                let text = std::fs::read_to_string(&trace_path).map_err(|e| {
                    invalid(
                        "traffic.file",
                        "a readable trace file",
                        format!("{}: {e}", trace_path.display()),
                    )
                })?;
                Traffic::Trace {
                    entries: parse_trace(&text).map_err(|(line, what)| {
                        invalid(
                            "traffic.file",
                            "lines of `TIME SIZE` (e.g. `1.5s 200`)",
                            format!("{}:{line}: {what}", trace_path.display()),
                        )
                    })?,
                }
            }
            "periodic" => Traffic::Periodic {
                interval: duration(
                    "traffic.interval",
                    t.interval.as_deref().ok_or_else(|| need("interval"))?,
                )?,
                messages: t.messages.ok_or_else(|| need("messages"))?,
                message_size,
            },
            other => {
                return Err(invalid(
                    "traffic.kind",
                    "\"bursts\", \"periodic\", \"bulk\" or \"trace\"",
                    format!("`{other}`"),
                ));
            }
        };

        if raw.variants.is_empty() {
            return Err(invalid(
                "variants",
                "at least one [[variants]] table",
                "none".into(),
            ));
        }
        let mut variants = Vec::new();
        for (i, v) in raw.variants.iter().enumerate() {
            let key = |k: &str| format!("variants[{i}].{k}");
            let mut config = preset(&v.preset).ok_or_else(|| {
                invalid(
                    &key("preset"),
                    &format!("one of {}", LAB_PRESETS.join(", ")),
                    format!("`{}`", v.preset),
                )
            })?;
            for (k, value) in &v.set {
                let text = match value {
                    toml::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                config.set(k, &text).map_err(|e| {
                    invalid(
                        &key(&format!("set.{k}")),
                        &e.to_string(),
                        format!("`{text}`"),
                    )
                })?;
            }
            config
                .validate()
                .map_err(|e| invalid(&key("set"), &e.to_string(), "values out of range".into()))?;
            variants.push(Variant {
                name: v.name.clone(),
                config,
                no_loss: v.no_loss,
            });
        }
        for line in &raw.impairments {
            brisk_sim::parse_pattern(line).map_err(|e| {
                invalid(
                    "impairments",
                    &format!("a pattern line ({e})"),
                    format!("`{line}`"),
                )
            })?;
        }
        Ok(Experiment {
            file: path.to_owned(),
            name: raw.name,
            title: raw.title,
            source: raw.source,
            paper: raw.paper,
            method: raw.method,
            seed: raw.seed,
            replications: raw.replications,
            statistic: raw.statistic,
            figure: raw.figure,
            topology,
            traffic,
            variants,
            bandwidths,
            delays,
            impairments: raw.impairments,
            reference: raw.reference,
            notes: raw.notes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "t"
title = "T"
source = "test"
method = "loss-position"
statistic = "median"
figure = "mtt-per-tsn"
replications = 3
[topology]
kind = "point-to-point"
bandwidth = "2000kbit"
delay = "15ms"
[traffic]
kind = "bursts"
bursts = 12
warmup_bursts = 2
burst_size = { uniform = [1, 7] }
gap = { exponential = "200ms" }
message_size = 200
[[variants]]
name = "standard"
preset = "signaling-lksctp"
set = { sack_delay = "40ms", fast_retransmit_threshold = 4 }
[sweep]
bandwidth = ["500kbit", "1Mbit"]
"#;

    fn err(text: &str) -> String {
        Experiment::parse(Path::new("exp.toml"), text)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_good_file_parses_with_presets_overrides_and_sweep() {
        let e = Experiment::parse(Path::new("exp.toml"), GOOD).unwrap();
        assert_eq!(e.bandwidths, vec![500_000, 1_000_000]);
        assert_eq!(e.delays, vec![Duration::from_millis(15)]);
        assert_eq!(e.variants[0].config.fast_retransmit_threshold, 4);
        assert_eq!(e.variants[0].config.rto_min, Duration::from_millis(100));
        assert!(matches!(
            e.traffic,
            Traffic::Bursts {
                size: Count::Uniform(1, 7),
                gap: Gap::Exponential(_),
                ..
            }
        ));
    }

    #[test]
    fn an_unknown_key_names_the_file_and_the_key() {
        let e = err(&GOOD.replace("replications = 3", "replications = 3\ncolour = \"red\""));
        assert!(e.starts_with("exp.toml: "), "{e}");
        assert!(e.contains("unknown field `colour`"), "{e}");
    }

    #[test]
    fn a_wrong_type_names_the_key_and_the_expected_type() {
        let e = err(&GOOD.replace("replications = 3", "replications = \"three\""));
        assert!(e.contains("replications") && e.contains("expected"), "{e}");
    }

    #[test]
    fn a_negative_bandwidth_is_refused_with_what_was_expected() {
        let e = err(&GOOD.replace("bandwidth = \"2000kbit\"", "bandwidth = \"-5kbit\""));
        assert_eq!(
            e,
            "exp.toml: key `topology.bandwidth`: expected a positive rate such as 2000kbit or 2Mbit, found `-5kbit`"
        );
    }

    #[test]
    fn an_empty_sweep_is_refused() {
        let e = err(&GOOD.replace("bandwidth = [\"500kbit\", \"1Mbit\"]", "bandwidth = []"));
        assert_eq!(
            e,
            "exp.toml: key `sweep.bandwidth`: expected at least one value, found an empty list"
        );
    }

    #[test]
    fn an_unknown_preset_or_knob_is_named() {
        let e = err(&GOOD.replace("signaling-lksctp", "turbo"));
        assert!(
            e.contains("key `variants[0].preset`: expected one of rfc9260"),
            "{e}"
        );
        let e = err(&GOOD.replace("sack_delay = \"40ms\"", "sack_dely = \"40ms\""));
        assert!(e.contains("key `variants[0].set.sack_dely`"), "{e}");
    }

    #[test]
    fn rates_parse_with_units() {
        assert_eq!(parse_rate("2000kbit"), Some(2_000_000));
        assert_eq!(parse_rate("1.5Mbit"), Some(1_500_000));
        assert_eq!(parse_rate("64000"), Some(64_000));
        assert_eq!(parse_rate("0kbit"), None);
        assert_eq!(parse_rate("fast"), None);
    }
}
