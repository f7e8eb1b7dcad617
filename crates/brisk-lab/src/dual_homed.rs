//! The `dual-homed` topology of experiment files: a sender and a receiver
//! with two addresses each, joined by two disjoint paths (primary and
//! secondary), each with its own link, impairments and outages.
//!
//! ```toml
//! [topology]
//! kind = "dual-homed"
//! bandwidth = "2000kbit"        # each path's, unless the path sets its own
//! delay = "15ms"                #  (the sweep's bandwidth and delay vary these)
//! queue_packets = 100
//!
//! [topology.primary]            # optional, as is every key in it
//! bandwidth = "2000kbit"        # this path's own (not swept)
//! delay = "15ms"
//! queue_packets = 50
//! impairments = ["bernoulli 0.01"]          # pattern lines, sender -> receiver
//! reverse_impairments = ["bernoulli 0.01"]  # receiver -> sender
//! black_hole = { from = "10s" }             # both directions drop everything
//!                                           # from then on, or until `until`
//!                                           # (a time) or for `duration`
//! outages = [{ from = "2s", until = "2.5s" }, { from = "4s", duration = "1s" }]
//!
//! [topology.secondary]
//! delay = "50ms"
//! black_hole = { from = { uniform = ["5s", "15s"] } }   # a random start per
//!                                                       # replication
//! ```
//!
//! Times count from the start of the run: the receiver associates at time 0
//! and the first message is written 500 ms after the association is up. A
//! random start (`{ uniform = [LOW, HIGH] }`) is drawn for each sweep point
//! and replication from the run's traffic seed: every variant meets the same
//! outage. The sender's addresses are 10.0.1.1 (primary) and 10.0.3.1
//! (secondary), the receiver's 10.0.2.1 and 10.0.4.1; the receiver
//! associates to the sender's primary address.
//!
//! The simulator adds the top-level `impairments`, the sweep's loss and
//! corruption and a loss-position drop to the primary path's sender ->
//! receiver direction, which is the experiment's bottleneck.
//!
//! A dual-homed run records, besides a flow's metrics (whose bottleneck
//! costs count both paths), the failover metrics of [`crate::failover`]:
//! `outage_start_ms` (the primary path's earliest outage in the run),
//! `failover_ms` (NaN, with a `no_failover_*` record giving the reason,
//! when nothing was delivered over the secondary path after the outage),
//! `failed_over` (1 or 0), `failover_messages` and `failover_mtt_ms` (per
//! message written from the outage to the failover), `messages_lost`,
//! `messages_duplicated`, `needless_retransmissions` and
//! `bytes_sent_primary` / `bytes_sent_secondary`; the report shows them in a
//! failover table.

use std::ops::Range;
use std::time::Duration;

use brisk_proto::config::{format_duration, parse_duration};
use rand::Rng;
use serde::Deserialize;
use toml::Spanned;

use crate::experiment::{Cx, ExperimentError};

/// A dual-homed topology's two paths.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DualHomed {
    pub primary: PathSpec,
    pub secondary: PathSpec,
}

/// One path of a dual-homed topology. `None` takes the topology's value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PathSpec {
    pub bandwidth_bps: Option<u64>,
    pub delay: Option<Duration>,
    pub queue_packets: Option<usize>,
    /// Pattern lines for the sender -> receiver direction.
    pub impairments: Vec<String>,
    /// Pattern lines for the receiver -> sender direction.
    pub reverse_impairments: Vec<String>,
    /// Both directions drop every packet from its start on (until its end).
    pub black_hole: Option<Outage>,
    /// Windows in which both directions drop every packet.
    pub outages: Vec<Outage>,
}

/// An outage: a start, fixed or random, and an end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outage {
    pub from: Start,
    pub end: End,
}

/// When an outage starts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Start {
    At(Duration),
    /// Uniform over `[low, high]` (microseconds), per replication.
    Uniform(Duration, Duration),
}

/// When an outage ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum End {
    /// Never: a black hole to the end of the run.
    Never,
    At(Duration),
    /// This long after its start.
    After(Duration),
}

/// A drawn outage: `[from, to)`, `to` = `Duration::MAX` for never.
pub type Window = (Duration, Duration);

impl Outage {
    /// The window this outage covers in one run, its start drawn from `rng`
    /// if random.
    pub fn window(&self, rng: &mut impl Rng) -> Window {
        let from = match self.from {
            Start::At(t) => t,
            Start::Uniform(lo, hi) => {
                let (lo, hi) = (lo.as_micros() as u64, hi.as_micros() as u64);
                Duration::from_micros(rng.random_range(lo..=hi))
            }
        };
        let to = match self.end {
            End::Never => Duration::MAX,
            End::At(t) => t,
            End::After(d) => from.saturating_add(d),
        };
        (from, to)
    }
}

impl PathSpec {
    /// The path's outage windows in one run: the black hole's, then each
    /// outage's in file order, random starts drawn from `rng` in that order.
    pub fn windows(&self, rng: &mut impl Rng) -> Vec<Window> {
        self.black_hole
            .iter()
            .chain(&self.outages)
            .map(|o| o.window(rng))
            .collect()
    }
}

impl DualHomed {
    /// Both paths' outage windows in one run, drawn from `rng` (primary
    /// first): (primary, secondary).
    pub fn windows(&self, rng: &mut impl Rng) -> (Vec<Window>, Vec<Window>) {
        let primary = self.primary.windows(rng);
        (primary, self.secondary.windows(rng))
    }
}

/// `[topology.primary]` or `[topology.secondary]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPath {
    #[serde(default)]
    bandwidth: Option<Spanned<String>>,
    #[serde(default)]
    delay: Option<Spanned<String>>,
    #[serde(default)]
    queue_packets: Option<Spanned<i64>>,
    #[serde(default)]
    impairments: Vec<Spanned<String>>,
    #[serde(default)]
    reverse_impairments: Vec<Spanned<String>>,
    #[serde(default)]
    black_hole: Option<Spanned<RawOutage>>,
    #[serde(default)]
    outages: Vec<Spanned<RawOutage>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOutage {
    from: Spanned<RawStart>,
    #[serde(default)]
    until: Option<Spanned<String>>,
    #[serde(default)]
    duration: Option<Spanned<String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum RawStart {
    At(String),
    Uniform { uniform: [String; 2] },
}

const DURATION: &str = "a non-negative duration such as 15ms or 1.5s";

/// Validates both paths of a dual-homed topology (`topology.primary` and
/// `topology.secondary`, each optional).
pub(crate) fn dual_homed(
    cx: &Cx,
    primary: Option<&Spanned<RawPath>>,
    secondary: Option<&Spanned<RawPath>>,
) -> Result<DualHomed, ExperimentError> {
    let empty = RawPath::default();
    let path = |name: &str, raw: Option<&Spanned<RawPath>>| {
        path(
            cx,
            &format!("topology.{name}"),
            raw.map_or(&empty, |r| r.get_ref()),
        )
    };
    Ok(DualHomed {
        primary: path("primary", primary)?,
        secondary: path("secondary", secondary)?,
    })
}

fn path(cx: &Cx, key: &str, raw: &RawPath) -> Result<PathSpec, ExperimentError> {
    let k = |name: &str| format!("{key}.{name}");
    let bandwidth_bps = match &raw.bandwidth {
        Some(b) => Some(crate::experiment::parse_rate(b.get_ref()).ok_or_else(|| {
            cx.invalid_at(
                b.span(),
                &k("bandwidth"),
                "a positive rate such as 2000kbit or 2Mbit",
                format!("`{}`", b.get_ref()),
            )
        })?),
        None => None,
    };
    let delay = match &raw.delay {
        Some(d) => Some(duration(cx, &k("delay"), d)?),
        None => None,
    };
    let queue_packets = match &raw.queue_packets {
        Some(q) if *q.get_ref() >= 1 => Some(*q.get_ref() as usize),
        Some(q) => {
            return Err(cx.invalid_at(
                q.span(),
                &k("queue_packets"),
                "at least 1 packet",
                q.get_ref().to_string(),
            ));
        }
        None => None,
    };
    let lines = |name: &str, list: &[Spanned<String>]| -> Result<Vec<String>, ExperimentError> {
        list.iter()
            .enumerate()
            .map(|(i, line)| {
                let text = line.get_ref();
                cx.check_pattern_at(text, format!("{key}.{name}[{i}]"), line.span())?;
                Ok(text.clone())
            })
            .collect()
    };
    let black_hole = match &raw.black_hole {
        Some(o) => Some(outage(cx, &k("black_hole"), o, false)?),
        None => None,
    };
    let outages = raw
        .outages
        .iter()
        .enumerate()
        .map(|(i, o)| outage(cx, &format!("{key}.outages[{i}]"), o, true))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(PathSpec {
        bandwidth_bps,
        delay,
        queue_packets,
        impairments: lines("impairments", &raw.impairments)?,
        reverse_impairments: lines("reverse_impairments", &raw.reverse_impairments)?,
        black_hole,
        outages,
    })
}

/// A duration at `key`, its line named when it does not parse.
fn duration(cx: &Cx, key: &str, v: &Spanned<String>) -> Result<Duration, ExperimentError> {
    parse_duration(v.get_ref())
        .ok_or_else(|| cx.invalid_at(v.span(), key, DURATION, format!("`{}`", v.get_ref())))
}

/// An outage table at `key`; a window (`needs_end`) must say when it ends.
fn outage(
    cx: &Cx,
    key: &str,
    raw: &Spanned<RawOutage>,
    needs_end: bool,
) -> Result<Outage, ExperimentError> {
    let o = raw.get_ref();
    let from_key = format!("{key}.from");
    let from = match o.from.get_ref() {
        RawStart::At(t) => Start::At(duration(cx, &from_key, &spanned(t, o.from.span()))?),
        RawStart::Uniform { uniform: [lo, hi] } => {
            let span = o.from.span();
            let key = format!("{from_key}.uniform");
            let lo_d = duration(cx, &key, &spanned(lo, span.clone()))?;
            let hi_d = duration(cx, &key, &spanned(hi, span.clone()))?;
            if lo_d > hi_d {
                return Err(cx.invalid_at(
                    span,
                    &key,
                    "[LOW, HIGH] with LOW at most HIGH",
                    format!("[`{lo}`, `{hi}`]"),
                ));
            }
            Start::Uniform(lo_d, hi_d)
        }
    };
    let latest = match from {
        Start::At(t) | Start::Uniform(_, t) => t,
    };
    let end = match (&o.until, &o.duration) {
        (Some(_), Some(d)) => {
            return Err(cx.invalid_at(
                d.span(),
                &format!("{key}.duration"),
                "either `until` or `duration`, not both",
                "both".into(),
            ));
        }
        (Some(u), None) => {
            let until_key = format!("{key}.until");
            let t = duration(cx, &until_key, u)?;
            if t <= latest {
                return Err(cx.invalid_at(
                    u.span(),
                    &until_key,
                    &format!(
                        "a time after the latest start ({})",
                        format_duration(latest)
                    ),
                    format!("`{}`", u.get_ref()),
                ));
            }
            End::At(t)
        }
        (None, Some(d)) => {
            let duration_key = format!("{key}.duration");
            let t = duration(cx, &duration_key, d)?;
            if t.is_zero() {
                return Err(cx.invalid_at(
                    d.span(),
                    &duration_key,
                    "a positive duration such as 500ms",
                    format!("`{}`", d.get_ref()),
                ));
            }
            End::After(t)
        }
        (None, None) if needs_end => {
            return Err(cx.invalid_at(
                raw.span(),
                &format!("{key}.until"),
                "an end: `until` (a time) or `duration` (an outage window ends; \
                 a `black_hole` need not)",
                "neither".into(),
            ));
        }
        (None, None) => End::Never,
    };
    Ok(Outage { from, end })
}

/// `value` with the span of the entry it came from (for its line).
fn spanned(value: &str, span: Range<usize>) -> Spanned<String> {
    Spanned::new(span, value.to_owned())
}
