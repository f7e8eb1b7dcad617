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
//! figure = "mtt-per-tsn"          # or "summary-vs-delay", "retransmission-table",
//!                                 # "goodput-vs-size", "mtt-vs-rate", "latency-table"
//!
//! [topology]
//! kind = "point-to-point"         # or "dumbbell" (flows, flow_variants,
//! bandwidth = "2000kbit"          #  access_bandwidth, access_delay,
//! delay = "15ms"                  #  access_impairments = [[], ["corrupt 0.01"]])
//!                                 # or "dual-homed" ([topology.primary] and
//!                                 #  [topology.secondary]: see `dual_homed.rs`)
//!
//! [traffic]
//! kind = "bursts"                 # or "periodic" (interval, messages or duration,
//! bursts = 12                     #  jitter), "bulk" (messages, or duration, warmup
//! warmup_bursts = 2               #  and packing = "bundle" | "one-per-packet"),
//! burst_size = 4                  #  "trace" (file); or { uniform = [1, 7] }
//! gap = "200ms"                   # or { exponential = "200ms" }
//! message_size = 200
//!
//! [[variants]]
//! name = "standard"
//! preset = "signaling-lksctp"
//! set = { sack_delay = "40ms" }   # knobs of the sending endpoint (and, by default,
//!                                 # of the receiving one)
//! receiver_preset = "lksctp-2.6.15"   # optional: the receiver's own preset
//! receiver_set = { sack_freq = 1 }    # optional: receiver-only overrides
//! flow_set = [{}, { pktdrop = true }] # optional: per dumbbell flow, both ends
//! unordered = true               # optional, SCTP: messages sent unordered
//! lifetime = "100ms"              # optional, SCTP: abandoned this long after the
//!                                 # write (RFC 7496), or max_retransmits = 0 (not
//!                                 # both; both ends need partial_reliability)
//!
//! [[variants]]
//! name = "tcp"
//! transport = "tcp"               # the TCP model (default "sctp": Brisk)
//! preset = "linux"                # rfc, ns2-sack1, linux, linux-thin
//! set = { rack_tlp = false }      # its knobs (`brisk knobs --tcp`)
//!
//! [sweep]                         # optional: every combination is run
//! bandwidth = ["500kbit", "1000kbit", "2000kbit"]
//! delay = ["5ms", "10ms", "15ms", "20ms", "25ms"]   # one way
//! message_size = [10, 50, 90]     # bytes
//! loss = [0.01, 0.02]             # Bernoulli loss added to the forward bottleneck
//! corrupt = [0.01]                # packet errors added to the forward bottleneck
//! rate = [10, 100, 1000]          # messages per second (periodic traffic)
//! mtu = [1500, 3000]              # IP MTU: both ends' mtu = this - overhead_bytes
//! combine = "product"             # or "one-at-a-time": first values are the base,
//! axis = "message_size"           #  each other value alone; the axis crossed with all;
//!                                 #  or "zip": the i-th values of every list together
//!
//! [[models]]                      # goodput-vs-size: seed 003's model curves
//! name = "eq. 7"
//! equation = "eq7"                # "eq5", "eq7" or "eq12"; step = 10 bytes
//!
//! [[paper_series]]                # the paper's numbers, drawn on the first chart
//! name = "paper: timeout"
//! x = [0, 100, 200, 400]
//! y = [1005.5, 1049.8, 1144.6, 1352.0]
//!
//! [[paper_rows]]                  # retransmission-table: the paper's table rows
//! variant = "standard"
//! rtt = 0
//! cause = "t3-timeout"
//! label = "Retransmission timeout"
//! number = 282
//! frequency = 76.2
//! min = 999.1
//! max = 1256.6
//! mean = 1005.5
//!
//! [[reference]]                   # the paper's numbers, shown beside ours
//! label = "Standard, lost messages"
//! value = "110-200 ms"
//! ours = "range:standard"         # optional, with min and/or max: a check
//!                                 # (the kinds: see `Reference`; e.g.
//!                                 # "position-ratio:A:B", A's mean MTT over
//!                                 # B's at every burst position, the largest)
//! min = 110.0                     # optional: the paper's bounds on ours
//! max = 200.0
//! awaits = "PKTDROP"              # optional: what a failing check waits for
//! gap = { why = "why ours differs", min = 30.0, max = 40.0 }
//!                                 # optional: a known gap, with bounds on our
//!                                 # own value (a text alone is context only)
//! ci = true                       # optional (p99-ratio, bytes-ratio): the check
//!                                 # needs the 95% bootstrap interval, so at least
//!                                 # 2 replications (refused at load otherwise)
//!
//! [[never_worse]]                 # at every sweep point, `better`'s p99 MTT is
//! better = "brisk-low-latency"    # not significantly above each of `than`'s:
//! than = ["brisk-signaling"]      # one check per `than` (see `never_worse.rs`)
//! tolerance = 0.1                 # optional: with one run, the raw ratio's slack
//! awaits = "an adaptive preset"   # optional, as in [[reference]]
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use brisk_proto::config::{format_duration, parse_duration};
use brisk_proto::{Config, ConfigError, Reliability};
use brisk_sim::SendOptions;
use brisk_tcp::TcpConfig;
use serde::Deserialize;

pub use crate::dual_homed::{DualHomed, End, Outage, PathSpec, Start, Window};
use crate::dual_homed::{RawPath, dual_homed};
pub use crate::sweep::{Combine, Dim, Point, PointIdx, Sweep, Value};

/// Why an experiment file was refused.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    #[error("{file}: cannot read: {source}")]
    Read {
        file: PathBuf,
        source: std::io::Error,
    },
    /// Not TOML, or not the fields an experiment has: the toml crate's message,
    /// which shows the line with a caret under the place.
    #[error("{file}: {message}")]
    Syntax { file: PathBuf, message: String },
    #[error("{file}: key `{key}`: expected {expected}, found {found}")]
    Invalid {
        file: PathBuf,
        key: String,
        expected: String,
        found: String,
    },
    /// The same, for a key whose line in the file is known.
    #[error("{}:{line}: key `{key}`: expected {expected}, found {found}", file.display())]
    InvalidAt {
        file: PathBuf,
        /// 1-based line of the experiment file.
        line: usize,
        key: String,
        expected: String,
        found: String,
    },
    /// A key that is refused for a reason of its own (an unknown knob).
    #[error("{file}: key `{key}`: {message}")]
    Refused {
        file: PathBuf,
        key: String,
        message: String,
    },
    /// An impairment pattern line that does not parse, with the line of the
    /// experiment file it is on.
    #[error(
        "{}{}: key `{key}`: {message}, in `{text}`",
        file.display(),
        line.map(|l| format!(":{l}")).unwrap_or_default()
    )]
    Pattern {
        file: PathBuf,
        /// 1-based line of the experiment file, when it could be found.
        line: Option<usize>,
        key: String,
        /// The pattern line.
        text: String,
        message: String,
    },
}

/// Where the impairment entries of an experiment file are, read again only
/// to report an error (`impairments[i]`, `topology.access_impairments[f][j]`).
#[derive(Deserialize)]
struct PatternSpans {
    #[serde(default)]
    impairments: Vec<toml::Spanned<String>>,
    #[serde(default)]
    topology: Option<TopologySpans>,
}

#[derive(Deserialize)]
struct TopologySpans {
    #[serde(default)]
    access_impairments: Vec<Vec<toml::Spanned<String>>>,
}

/// The error for a pattern entry `entry` (the text of `key`) whose line
/// `error.line` does not parse: names the line of the file it is on.
fn pattern_error(
    file: &Path,
    text: &str,
    key: String,
    entry: &str,
    span: Option<std::ops::Range<usize>>,
    error: brisk_sim::PatternError,
) -> ExperimentError {
    let within = error.line.saturating_sub(1);
    let line = span.and_then(|span| {
        let before = text.get(..span.start)?;
        let start = before.matches('\n').count() + 1;
        // A multi-line string drops the newline right after its opening quotes.
        let raw = text.get(span)?;
        let skipped = ["\"\"\"\n", "\"\"\"\r\n", "'''\n", "'''\r\n"]
            .iter()
            .any(|open| raw.starts_with(open));
        Some(start + within + usize::from(skipped))
    });
    ExperimentError::Pattern {
        file: file.to_owned(),
        line,
        key,
        text: entry.lines().nth(within).unwrap_or(entry).trim().to_owned(),
        message: error.message,
    }
}

/// A count as it is written in the file: `0`, `{ uniform = [3, 1] }`.
fn raw_count_text(count: &RawCount) -> String {
    match count {
        RawCount::Fixed(n) => n.to_string(),
        RawCount::Uniform { uniform: [a, b] } => format!("{{ uniform = [{a}, {b}] }}"),
    }
}

/// How runs are organised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Seed 000's method: for each position k, run the whole flow with exactly
    /// one packet dropped, the one carrying the first transmission of message
    /// k's first chunk (found by TSN: retransmissions and redundant copies sent
    /// before it do not count), and measure the message(s) whose first
    /// transmission the link's record shows was dropped.
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
    /// Seed 001, Tables 2 and 3: the first retransmission of each chunk whose
    /// original transmission was lost, by cause; a table beside the paper's
    /// rows (`[[paper_rows]]`) and a chart of the mean delays.
    RetransmissionTable,
    /// Goodput against message size (the `message_size` sweep), one series per
    /// variant, flow and other sweep point, with the curves of `[[models]]`
    /// (seed 003, Figs. 3, 5, 6, 8, 9).
    GoodputVsSize,
    /// Mean MTT and DATA packets per message against the message rate (the
    /// `rate` sweep), one series per variant and message size (Nagle).
    MttVsRate,
    /// Message latency per variant and sweep point: the 50th and 99th
    /// percentile and the largest MTT of every message of every run, with
    /// the bytes each message cost on the bottleneck; and the 99th
    /// percentile against the loss rate, one series per variant and message
    /// size (the application developer's case).
    LatencyTable,
    /// Seed 004, Tables 1 to 3: the one-way delay of every data packet
    /// (not the application's MTT), mean and variance, per variant and sweep
    /// point; with the mean square the paper's "variance" column matches.
    DelayTable,
    /// Seed 004, Figs. 4 to 6: one run per variant traced again, the
    /// sender's data packets (dropped ones marked) and its cwnd around the
    /// drops the experiment's impairments make.
    SequenceTrace,
}

/// A model of seed 003 drawn beside simulated goodput.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Equation {
    /// Eq. 5: headers not counted in flight.
    Eq5,
    /// Eq. 7: chunk headers counted in flight.
    Eq7,
    /// Eqs. 8 to 12: the loss-free ceiling of a link.
    Eq12,
}

impl Equation {
    pub fn name(self) -> &'static str {
        match self {
            Equation::Eq5 => "eq5",
            Equation::Eq7 => "eq7",
            Equation::Eq12 => "eq12",
        }
    }
}

/// A model curve: `equation` evaluated every `step` bytes of message size at
/// each sweep point (with the point's loss rate, RTT, MTU and bandwidth, or
/// `loss` when given).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    pub name: String,
    pub equation: Equation,
    #[serde(default = "default_step")]
    pub step: usize,
    #[serde(default)]
    pub loss: Option<f64>,
}

fn default_step() -> usize {
    10
}

/// Numbers the paper published as a series, drawn as markers on the
/// experiment's first chart (`x` and `y` in the chart's units).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaperSeries {
    pub name: String,
    pub x: Vec<f64>,
    pub y: Vec<f64>,
}

/// One row of a table the paper published (seed 001, Tables 2 and 3): the
/// first retransmissions of one cause, for one variant at one RTT.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct PaperRow {
    pub variant: String,
    /// Round-trip time, ms (twice the one-way delay of the sweep point).
    pub rtt: f64,
    /// Our cause it compares with (`t3-timeout`, `t3-bundled`,
    /// `fast-retransmit`, `spurious`, ...).
    pub cause: String,
    /// The paper's name for it.
    pub label: String,
    pub number: u64,
    /// Share of all first retransmissions, percent, where the paper gives it.
    #[serde(default)]
    pub frequency: Option<f64>,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
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
    #[serde(default)]
    models: Vec<Model>,
    #[serde(default)]
    paper_series: Vec<PaperSeries>,
    #[serde(default)]
    paper_rows: Vec<PaperRow>,
    /// Real stacks the emulator runs: a variant with `stack = NAME` runs
    /// NAME's commands in the emulator instead of the simulator.
    #[serde(default)]
    stacks: Vec<RawStack>,
    /// `[[never_worse]]`: one variant's p99 at most others' at every point,
    /// expanded into `[[reference]]` checks (see `never_worse.rs`).
    #[serde(default)]
    never_worse: Vec<crate::never_worse::RawNeverWorse>,
    /// A competing bulk flow beside the measured one (the fairness
    /// experiment): see [`Competing`].
    #[serde(default)]
    competing: Option<RawCompeting>,
}

/// `[competing]`: a bulk flow that shares the bottleneck with each
/// variant's flow.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCompeting {
    #[serde(default)]
    variant: Option<String>,
    #[serde(default)]
    message_size: Option<usize>,
    #[serde(default)]
    warmup: Option<String>,
    #[serde(default)]
    server: Vec<String>,
    #[serde(default)]
    client: Vec<String>,
}

/// A `[[stacks]]` table: the commands of a real stack's receiver (run in
/// host b, the server) and sender (host a), as argument lists, and the
/// sysctls of both hosts' network namespaces.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStack {
    name: String,
    /// `sctp` (default) or `tcp`: how the emulator finds the message a
    /// first-transmission drop hit.
    #[serde(default)]
    transport: Option<String>,
    server: Vec<String>,
    client: Vec<String>,
    #[serde(default)]
    sysctl: BTreeMap<String, toml::Value>,
    /// Linux's TCP congestion control in both hosts' namespaces (`cubic`,
    /// `bbr` or `reno`); the emulator allows it for the run.
    #[serde(default)]
    congestion_control: Option<String>,
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
    /// Dumbbell: per flow, pattern lines for its sender's access link toward
    /// the bottleneck (e.g. `[[], ["corrupt 0.01"]]`).
    #[serde(default)]
    access_impairments: Option<Vec<Vec<String>>>,
    /// Dual-homed: each path's link, impairments and outages.
    #[serde(default)]
    primary: Option<toml::Spanned<RawPath>>,
    #[serde(default)]
    secondary: Option<toml::Spanned<RawPath>>,
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
    /// Periodic: how long to send (instead of `messages`); bulk: how long to
    /// keep the send buffer full (instead of `messages`).
    #[serde(default)]
    duration: Option<String>,
    /// Bulk with a duration: goodput is measured after this long.
    #[serde(default)]
    warmup: Option<String>,
    /// Bulk with a duration: `bundle` (default) or `one-per-packet`.
    #[serde(default)]
    packing: Option<Packing>,
    /// Periodic: each write comes up to this much (uniform) later than
    /// `interval` after the one before.
    #[serde(default)]
    jitter: Option<String>,
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
    /// Required unless the variant runs a `stack` (whose own commands then
    /// say how it is configured; `{config}` in them expands to this preset).
    #[serde(default)]
    preset: Option<String>,
    /// Runs this `[[stacks]]` entry's commands in the emulator.
    #[serde(default)]
    stack: Option<String>,
    /// The simulated transport: "sctp" (Brisk, the default) or "tcp" (the
    /// TCP model, whose presets and knobs `preset` and `set` then name).
    #[serde(default)]
    transport: Option<String>,
    #[serde(default)]
    set: BTreeMap<String, toml::Value>,
    /// For loss-position experiments: drop nothing (the no-loss baseline).
    #[serde(default)]
    no_loss: bool,
    /// The receiving endpoint's preset (default: the sender's whole config).
    #[serde(default)]
    receiver_preset: Option<String>,
    /// Overrides for the receiving endpoint only.
    #[serde(default)]
    receiver_set: BTreeMap<String, toml::Value>,
    /// Dumbbell: per flow, overrides for both of that flow's endpoints.
    #[serde(default)]
    flow_set: Vec<BTreeMap<String, toml::Value>>,
    /// SCTP: send the variant's messages unordered (the U bit).
    #[serde(default)]
    unordered: bool,
    /// SCTP: abandon each message this long after it is written, if not
    /// acknowledged by then (RFC 7496 3.1; needs `partial_reliability`).
    #[serde(default)]
    lifetime: Option<String>,
    /// SCTP: retransmit each message at most this many times (RFC 7496 3.2).
    #[serde(default)]
    max_retransmits: Option<i64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSweep {
    #[serde(default)]
    bandwidth: Option<Vec<String>>,
    #[serde(default)]
    delay: Option<Vec<String>>,
    #[serde(default)]
    message_size: Option<Vec<i64>>,
    #[serde(default)]
    loss: Option<Vec<f64>>,
    #[serde(default)]
    corrupt: Option<Vec<f64>>,
    #[serde(default)]
    rate: Option<Vec<f64>>,
    #[serde(default)]
    mtu: Option<Vec<i64>>,
    #[serde(default)]
    combine: Combine,
    #[serde(default)]
    axis: Option<Dim>,
}

/// A number from the paper, shown beside ours.
///
/// `ours` names the quantity of our results to compare with it:
/// - `range:VARIANT`: the smallest and largest MTT of the variant (ms);
/// - `mean:VARIANT`: the mean MTT over all measured messages (ms);
/// - `position:VARIANT:K`: the mean MTT of the K-th message of each burst,
///   or of a trace (ms);
/// - `position-ratio:A:B`: at every position K of the burst (or trace) and
///   every sweep point where both have results, A's `position:A:K` over B's;
///   the largest ratio, named with its position and point (the smallest is
///   the quantity's low): a per-position bound such as "at most 0.5x at
///   every loss position" is `max = 0.5`;
/// - `mean:VARIANT@BANDWIDTH/DELAY`: the mean MTT at one sweep point, e.g.
///   `mean:standard@2000kbit/15ms`;
/// - `reduction:A:B` or `reduction:A:B@BANDWIDTH/DELAY`: the mean MTT
///   reduction of variant B against A, in percent: the mean over messages of
///   each message's reduction; `reduction-of-means:A:B` is the reduction of
///   the mean MTT instead;
/// - `gain:BASE:A:B`: B's reduction against BASE less A's, in percentage
///   points, at the sweep point where it is smallest;
/// - `last-gain:A:B`: the mean MTT of the last message of each burst under A
///   less that under B (ms), at the sweep point where it is smallest.
///
/// More kinds, for flow experiments (see `figures.rs` for the full list):
/// `lost-rtx:VARIANT:CAUSE` (mean first-retransmission delay of lost chunks,
/// ms; `CAUSE` may be `all`), `lost-share:VARIANT:CAUSE` (percent of lost
/// chunks), `rtx-share:VARIANT:CAUSE` (percent of all first retransmissions,
/// spurious ones included, the paper's "frequency"), `metric:VARIANT:METRIC`
/// or `metric:VARIANT:METRIC:FLOW` (mean over replications), `model:VARIANT:EQ`
/// (goodput in percent of `eq5`, `eq7` or `eq12`), `max-reduction:A:B:METRIC`
/// and `reduction-range:A:B:METRIC` (percent), `p99-ratio:A:B`,
/// `bytes-ratio:A:B` and `never-worse:A:B[:TOLERANCE]` (with 95% bootstrap
/// intervals: see `tails.rs`). A sweep point is named after
/// `@` as `key=value` pairs: `bandwidth=2000kbit,delay=15ms,rtt=30ms,size=200,
/// loss=0.01,corrupt=0.01,rate=100,mtu=1500`; keys left out match every value.
///
/// With `min` and/or `max` (the paper's bounds), the report (and the tests)
/// check that ours lies within them: the check "agrees". `gap` records a
/// difference from the paper that we measured and could not remove: with
/// bounds on OUR OWN value (`gap = { why = "...", min = 30.0, max = 40.0 }`)
/// a check outside the paper's bounds but inside these is a "known gap",
/// shown apart with its explanation; outside both it "differs", so a change
/// in behaviour still fails it. A gap given as text alone is context printed
/// beside the check, never a pass. `awaits` names what a check waits for
/// (e.g. a protocol mechanism not implemented yet): the check still runs and
/// still fails, and the report lists it apart.
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
    #[serde(default)]
    pub awaits: Option<String>,
    #[serde(default)]
    pub gap: Option<KnownGap>,
    /// The check demands a 95% bootstrap interval (`p99-ratio`,
    /// `bytes-ratio`, `never-worse`): the file needs at least two
    /// replications, else it is refused at load; see `tails.rs`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ci: bool,
}

/// A `gap` entry of a `[[reference]]`: an explanation, and optionally the
/// bounds our own value is known to lie within.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(untagged)]
pub enum KnownGap {
    /// Context only: the check still differs.
    Text(String),
    /// `{ why = "...", min = ..., max = ... }`.
    Bounded(BoundedGap),
}

/// A known gap with bounds on our own value.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct BoundedGap {
    pub why: String,
    #[serde(default)]
    pub min: Option<f64>,
    #[serde(default)]
    pub max: Option<f64>,
}

impl KnownGap {
    /// The explanation.
    pub fn why(&self) -> &str {
        match self {
            KnownGap::Text(t) => t,
            KnownGap::Bounded(b) => &b.why,
        }
    }

    /// The bounds on our own value, if the entry records any.
    pub fn bounds(&self) -> Option<(Option<f64>, Option<f64>)> {
        match self {
            KnownGap::Text(_) => None,
            KnownGap::Bounded(b) => Some((b.min, b.max)),
        }
    }
}

/// The quantity kinds an `ours` spec may name, each with the positions of
/// its arguments that name variants (`None`: every argument does, as in
/// `gain:BASE:A:B`) and how many arguments it takes at least and at most.
const SPEC_KINDS: &[(&str, &[usize], usize, usize)] = &[
    ("range", &[0], 1, 1),
    ("mean", &[0], 1, 1),
    ("rise", &[0], 1, 1),
    ("position", &[0], 2, 2),
    ("position-ratio", &[0, 1], 2, 2),
    ("reduction", &[0, 1], 2, 2),
    ("reduction-of-means", &[0, 1], 2, 2),
    ("last-gain", &[0, 1], 2, 2),
    ("gain", &[0, 1, 2], 3, 3),
    ("max-reduction", &[0, 1], 2, 3),
    ("reduction-range", &[0, 1], 3, 3),
    ("lost-rtx", &[0], 2, 2),
    ("lost-share", &[0], 2, 2),
    ("rtx-share", &[0], 2, 2),
    ("metric", &[0], 2, 3),
    ("metric-max", &[0], 2, 2),
    ("model", &[0], 2, 3),
    ("max-diff", &[0, 1], 2, 2),
    ("p99-ratio", &[0, 1], 2, 2),
    ("bytes-ratio", &[0, 1], 2, 2),
    ("metric-ratio", &[0, 1], 3, 4),
    ("never-worse", &[0, 1], 2, 3),
];

/// The quantity kinds whose checks read a bootstrap interval (`ci = true`).
const CI_KINDS: &[&str] = &["p99-ratio", "bytes-ratio", "never-worse"];

/// What a key naming a variant expected: the names the file declares.
pub(crate) fn variant_names_expected(variants: &[Variant]) -> String {
    format!(
        "names of [[variants]] ({})",
        variants
            .iter()
            .map(|v| v.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The variant names an `ours` spec (`KIND:ARGS[@POINT]`) refers to, or what
/// is wrong with its shape.
pub fn spec_variants(spec: &str) -> Result<Vec<&str>, String> {
    let body = spec.split_once('@').map_or(spec, |(b, _)| b);
    let (kind, args) = body
        .split_once(':')
        .ok_or_else(|| "a quantity such as `reduction:A:B` (KIND:ARGS)".to_owned())?;
    let &(_, variants, lo, hi) = SPEC_KINDS.iter().find(|k| k.0 == kind).ok_or_else(|| {
        format!(
            "one of the quantity kinds {}",
            SPEC_KINDS
                .iter()
                .map(|k| k.0)
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    let parts: Vec<&str> = args.split(':').collect();
    if parts.len() < lo || parts.len() > hi {
        return Err(format!(
            "{} argument{} after `{kind}:`",
            if lo == hi {
                lo.to_string()
            } else {
                format!("{lo} to {hi}")
            },
            if hi == 1 { "" } else { "s" }
        ));
    }
    Ok(variants.iter().map(|&i| parts[i]).collect())
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
    /// `Some`: one flow over two disjoint paths (`bandwidth_bps`, `delay`
    /// and `queue_packets` are each path's unless it sets its own).
    pub dual_homed: Option<DualHomed>,
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
    /// Per flow, pattern lines for its sender's access link (toward the bottleneck).
    pub access_impairments: Vec<Vec<String>>,
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
    /// A thin stream: one message every `interval` (seed 001: 4 writes/s);
    /// with `duration`, as many as fit in it (`messages` is then derived).
    /// Each write comes `interval` plus up to `jitter` (uniform) after the
    /// one before, as from an application that sleeps between writes: never
    /// early, and never at exact multiples of the interval.
    Periodic {
        interval: Duration,
        messages: u64,
        duration: Option<Duration>,
        jitter: Duration,
        message_size: usize,
    },
    /// `messages` messages written as fast as the send buffer takes them.
    Bulk { messages: u64, message_size: usize },
    /// A sender that always has data (seed 003): for `duration` it keeps
    /// about 64 KiB of messages queued; goodput counts the payload read after
    /// `warmup`.
    Saturated {
        duration: Duration,
        warmup: Duration,
        message_size: usize,
        packing: Packing,
    },
    /// Messages at the times and sizes a trace file lists, each on its
    /// SCTP stream (0 unless the line names one).
    Trace {
        entries: Vec<(Duration, usize, u16)>,
    },
}

/// How a saturated sender fills packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Packing {
    /// Keep messages queued; the protocol bundles as many as fit.
    #[default]
    Bundle,
    /// Write one message only when nothing is queued and the congestion
    /// window has room, each in its own callback: one message per packet, the
    /// assumption of seed 003's eqs. 5 and 7.
    OnePerPacket,
}

impl Traffic {
    /// The size of every message, when they are all alike.
    pub fn message_size(&self) -> Option<usize> {
        match self {
            Traffic::Bursts { message_size, .. }
            | Traffic::Periodic { message_size, .. }
            | Traffic::Bulk { message_size, .. }
            | Traffic::Saturated { message_size, .. } => Some(*message_size),
            Traffic::Trace { .. } => None,
        }
    }

    /// The traffic at a sweep point: its message size and message rate.
    pub fn at(&self, message_size: Option<usize>, rate: Option<f64>) -> Traffic {
        let mut t = self.clone();
        match &mut t {
            Traffic::Bursts {
                message_size: m, ..
            }
            | Traffic::Bulk {
                message_size: m, ..
            }
            | Traffic::Saturated {
                message_size: m, ..
            } => *m = message_size.unwrap_or(*m),
            Traffic::Periodic {
                interval,
                messages,
                duration,
                message_size: m,
                ..
            } => {
                *m = message_size.unwrap_or(*m);
                if let Some(r) = rate.filter(|r| *r > 0.0) {
                    *interval = Duration::from_secs_f64(1.0 / r);
                }
                if let Some(d) = duration {
                    *messages = periodic_count(*d, *interval);
                }
            }
            Traffic::Trace { .. } => {}
        }
        t
    }
}

/// Messages of a periodic stream that start within `duration`.
fn periodic_count(duration: Duration, interval: Duration) -> u64 {
    if interval.is_zero() {
        return 1;
    }
    (duration.as_nanos() / interval.as_nanos()).max(1) as u64
}

/// A protocol variant: a preset with overrides, for the sender and (when it
/// differs) the receiver, and optionally per flow of a dumbbell.
#[derive(Debug, Clone)]
pub struct Variant {
    pub name: String,
    /// A real stack the emulator runs for this variant; `None`: the
    /// simulator runs Brisk with `config`.
    pub stack: Option<Stack>,
    /// The sender's config.
    pub config: Config,
    /// The receiver's config: the sender's unless `receiver_preset` or
    /// `receiver_set` says otherwise.
    pub receiver_config: Config,
    pub no_loss: bool,
    /// Per flow of a dumbbell: (sender, receiver) configs with `flow_set`
    /// applied; empty when the variant has no `flow_set`.
    pub flow_configs: Vec<(Config, Config)>,
    /// The simulator runs the TCP model for this variant, both ends with
    /// their own config; `None`: Brisk's SCTP with `config`.
    pub tcp: Option<TcpVariant>,
    /// How the variant's messages are sent (`unordered`, `lifetime`,
    /// `max_retransmits`): SCTP in the simulator only.
    pub send: SendOptions,
}

/// A TCP variant's (sender, receiver) configs.
#[derive(Debug, Clone, PartialEq)]
pub struct TcpVariant {
    pub sender: TcpConfig,
    pub receiver: TcpConfig,
    /// The preset the sender's config started from.
    pub preset: String,
}

/// A real stack's commands (see [`crate::emu_runner`] for their
/// placeholders) and the sysctls set in both namespaces before each run.
#[derive(Debug, Clone, PartialEq)]
pub struct Stack {
    pub name: String,
    pub tcp: bool,
    pub server: Vec<String>,
    pub client: Vec<String>,
    pub sysctl: Vec<(String, String)>,
    /// Linux's TCP congestion control set in both hosts' namespaces for
    /// the run (one of [`LINUX_CONGESTION_CONTROLS`]); `None`: the one the
    /// namespaces inherit from the machine.
    pub congestion_control: Option<String>,
}

/// A competing bulk flow (`[competing]`): in the simulator the last flow
/// of a dumbbell runs `variant` with a sender that always has data for as
/// long as the measured flow's traffic lasts; in the emulator `server` and
/// `client` run beside each stack's commands in the same two hosts. Its
/// records carry the run's variant name, flow 1 (`goodput_kbps:1`: the
/// payload read after `warmup`).
#[derive(Debug, Clone, PartialEq)]
pub struct Competing {
    /// The `[[variants]]` entry the simulator's competing flow runs; no run
    /// of its own.
    pub variant: Option<usize>,
    /// Bytes per write of the bulk sender.
    pub message_size: usize,
    /// Not measured from the start of the run.
    pub warmup: Duration,
    /// The emulator's competing receiver (host b) and sender (host a),
    /// with a stack's placeholders and `{competing_records}`; they must
    /// use ports of their own. Empty: no competing pair in the emulator.
    pub server: Vec<String>,
    pub client: Vec<String>,
}

/// The Linux congestion controls a `[[stacks]]` table may name.
pub const LINUX_CONGESTION_CONTROLS: &[&str] = &["cubic", "bbr", "reno"];

impl Stack {
    pub fn transport_is_tcp(&self) -> bool {
        self.tcp
    }
}

impl Variant {
    /// The (sender, receiver) configs of flow `flow`.
    pub fn configs(&self, flow: usize) -> (Config, Config) {
        self.flow_configs
            .get(flow)
            .cloned()
            .unwrap_or_else(|| (self.config.clone(), self.receiver_config.clone()))
    }
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
    /// Sweep values; a single value each when not swept (`None`: not set).
    pub sweep: Sweep,
    pub impairments: Vec<String>,
    pub reference: Vec<Reference>,
    pub notes: Vec<String>,
    pub models: Vec<Model>,
    pub paper_series: Vec<PaperSeries>,
    pub paper_rows: Vec<PaperRow>,
    /// A competing bulk flow beside each variant's, if any.
    pub competing: Option<Competing>,
}

impl Experiment {
    /// How many values dimension `d` has.
    pub fn dim_len(&self, d: Dim) -> usize {
        self.sweep.len(d)
    }

    /// The sweep points, in a fixed order (see [`Sweep::points`]).
    pub fn points(&self) -> Vec<PointIdx> {
        self.sweep.points()
    }

    /// Whether records carry the sweep values beyond bandwidth and delay:
    /// when the experiment sweeps any of them or draws a flow figure.
    pub fn records_sweep_values(&self) -> bool {
        self.sweep.sets_beyond_link()
            || matches!(
                self.figure,
                Figure::RetransmissionTable
                    | Figure::GoodputVsSize
                    | Figure::MttVsRate
                    | Figure::LatencyTable
                    | Figure::DelayTable
                    | Figure::SequenceTrace
            )
    }

    /// The values of the sweep point `p`.
    pub fn point(&self, p: &PointIdx) -> Point {
        self.sweep.point(p)
    }
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

/// One message of a trace: when it is written (since the start), its size
/// in bytes and the SCTP stream it goes on.
pub type TraceEntry = (Duration, usize, u16);

/// Parses a trace: one message per line, `TIME SIZE [STREAM]` (time since
/// the start, with a unit or in seconds; size in bytes, at least 8; the SCTP
/// stream it goes on, 0 if left out); `#` comments.
pub fn parse_trace(text: &str) -> Result<Vec<TraceEntry>, (usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut f = line.split_whitespace();
        let (Some(t), Some(size), stream, None) = (f.next(), f.next(), f.next(), f.next()) else {
            return Err((n + 1, format!("`{line}` is not TIME SIZE [STREAM]")));
        };
        let stream: u16 = match stream {
            None => 0,
            Some(s) => s
                .parse()
                .map_err(|_| (n + 1, format!("`{s}` is not a stream number (0 to 65535)")))?,
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
        out.push((t, size, stream));
    }
    if out.is_empty() {
        return Err((0, "no messages".into()));
    }
    Ok(out)
}

/// The presets experiments use: the protocol's ([`brisk_proto::PRESETS`]),
/// plus the lab's own ([`LAB_ONLY_PRESETS`]).
pub fn preset(name: &str) -> Option<Config> {
    match name {
        "signaling-lksctp" => Some(signaling_lksctp()),
        other => Config::preset(other).ok(),
    }
}

/// The presets only experiments know, with their docs.
pub const LAB_ONLY_PRESETS: &[(&str, &str)] = &[(
    "signaling-lksctp",
    "Seed 000's \"Standard\": lksctp 2.6.15 with the signaling timers of its \
     Table 1 (RTO.Initial 200 ms, RTO.Min 100, RTO.Max 400, SACK delay 40 ms) \
     and none of the latency mechanisms.",
)];

/// `signaling-lksctp`: [`Config::lksctp_2_6_15`] with the timer values of
/// [`Config::signaling`] (seed 000, Table 1), as `config.rs` declares them.
fn signaling_lksctp() -> Config {
    let signaling = Config::signaling();
    Config {
        rto_initial: signaling.rto_initial,
        rto_min: signaling.rto_min,
        rto_max: signaling.rto_max,
        sack_delay: signaling.sack_delay,
        ..Config::lksctp_2_6_15()
    }
}

/// A TCP variant from its table: `preset` one of the TCP model's, `set`
/// its knobs for both ends, `receiver_set` the receiver's alone.
fn tcp_variant(vx: &VariantCx, v: &RawVariant) -> Result<TcpVariant, ExperimentError> {
    let name = v.preset.as_deref().unwrap_or("rfc");
    let mut sender = TcpConfig::preset(name).map_err(|_| {
        vx.invalid(
            "preset",
            &format!(
                "one of the TCP model's presets ({})",
                brisk_tcp::PRESETS.join(", ")
            ),
            format!("`{name}`"),
        )
    })?;
    let apply = |config: &mut TcpConfig,
                 k: &str,
                 set: &BTreeMap<String, toml::Value>|
     -> Result<(), ExperimentError> {
        for (knob, value) in set {
            let text = knob_text(value);
            config.set(knob, &text).map_err(|e| {
                vx.invalid(&format!("{k}.{knob}"), &e.to_string(), format!("`{text}`"))
            })?;
        }
        Ok(())
    };
    apply(&mut sender, "set", &v.set)?;
    let mut receiver = sender.clone();
    apply(&mut receiver, "receiver_set", &v.receiver_set)?;
    for (k, what) in [
        ("receiver_preset", v.receiver_preset.is_some()),
        ("flow_set", !v.flow_set.is_empty()),
        ("stack", v.stack.is_some()),
    ] {
        if what {
            return Err(vx.invalid(
                k,
                "nothing: a TCP variant takes preset, set and receiver_set",
                "a value".into(),
            ));
        }
    }
    Ok(TcpVariant {
        sender,
        receiver,
        preset: name.to_owned(),
    })
}

/// A `set` table's knobs and values, a nested table's knobs under dotted
/// names: TOML reads `set = { thin.rto_min = "200ms" }` as a table `thin`,
/// and this gives `thin.rto_min`, which [`Config::set`] knows.
fn dotted_knobs(set: &BTreeMap<String, toml::Value>) -> Vec<(String, &toml::Value)> {
    let mut out = Vec::new();
    for (key, value) in set {
        push_dotted(key.clone(), value, &mut out);
    }
    out
}

/// Pushes `key = value`, or each knob of a table under `key.`.
fn push_dotted<'a>(key: String, value: &'a toml::Value, out: &mut Vec<(String, &'a toml::Value)>) {
    match value {
        toml::Value::Table(table) => {
            for (k, v) in table {
                push_dotted(format!("{key}.{k}"), v, out);
            }
        }
        _ => out.push((key, value)),
    }
}

/// A knob's value as `set` reads it: a TOML string as it is, anything else
/// as TOML writes it.
fn knob_text(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
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

/// What every section's validator needs: the file, to name it (and find
/// lines in it) in errors.
pub(crate) struct Cx<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Cx<'_> {
    /// The 1-based line of the file at byte `at`.
    fn line_at(&self, at: usize) -> usize {
        self.text.get(..at).map_or(0, |b| b.matches('\n').count()) + 1
    }

    /// Key `key`, at `span` in the file, does not hold what was expected.
    pub(crate) fn invalid_at(
        &self,
        span: std::ops::Range<usize>,
        key: &str,
        expected: &str,
        found: String,
    ) -> ExperimentError {
        ExperimentError::InvalidAt {
            file: self.path.to_owned(),
            line: self.line_at(span.start),
            key: key.to_owned(),
            expected: expected.to_owned(),
            found,
        }
    }

    /// Pattern line `line` (the text of `key`, at `span` in the file) parses.
    pub(crate) fn check_pattern_at(
        &self,
        line: &str,
        key: String,
        span: std::ops::Range<usize>,
    ) -> Result<(), ExperimentError> {
        brisk_sim::parse_pattern(line)
            .map(|_| ())
            .map_err(|e| pattern_error(self.path, self.text, key, line, Some(span), e))
    }

    /// Pattern line `line` (the text of `key`) parses; else the error names
    /// the line of the file it is on, found by `span` (where the file has it).
    fn check_pattern(
        &self,
        line: &str,
        key: String,
        span: impl FnOnce(PatternSpans) -> Option<std::ops::Range<usize>>,
    ) -> Result<(), ExperimentError> {
        brisk_sim::parse_pattern(line).map(|_| ()).map_err(|e| {
            let span = toml::from_str::<PatternSpans>(self.text)
                .ok()
                .and_then(span);
            pattern_error(self.path, self.text, key, line, span, e)
        })
    }

    /// Key `key` does not hold what was expected.
    pub(crate) fn invalid(&self, key: &str, expected: &str, found: String) -> ExperimentError {
        ExperimentError::Invalid {
            file: self.path.to_owned(),
            key: key.to_owned(),
            expected: expected.to_owned(),
            found,
        }
    }

    /// A rate at key `key`.
    fn rate(&self, key: &str, v: &str) -> Result<u64, ExperimentError> {
        parse_rate(v).ok_or_else(|| {
            self.invalid(
                key,
                "a positive rate such as 2000kbit or 2Mbit",
                format!("`{v}`"),
            )
        })
    }

    /// A duration at key `key`.
    fn duration(&self, key: &str, v: &str) -> Result<Duration, ExperimentError> {
        parse_duration(v).ok_or_else(|| {
            self.invalid(
                key,
                "a non-negative duration such as 15ms or 1.5s",
                format!("`{v}`"),
            )
        })
    }

    /// `value` where `ok`, else what key `key` expected and found (`found`).
    fn expect(
        &self,
        key: &str,
        ok: bool,
        value: Value,
        expected: &str,
        found: impl ToString,
    ) -> Result<Value, ExperimentError> {
        if ok {
            Ok(value)
        } else {
            Err(self.invalid(key, expected, found.to_string()))
        }
    }
}

impl RawSweep {
    /// Whether the file lists dimension `d`.
    fn lists(&self, d: Dim) -> bool {
        match d {
            Dim::Bandwidth => self.bandwidth.is_some(),
            Dim::Delay => self.delay.is_some(),
            Dim::MessageSize => self.message_size.is_some(),
            Dim::Loss => self.loss.is_some(),
            Dim::Corrupt => self.corrupt.is_some(),
            Dim::Rate => self.rate.is_some(),
            Dim::Mtu => self.mtu.is_some(),
        }
    }
}

/// `[sweep]`: every dimension's values in [`Dim::ALL`] order (the topology's
/// bandwidth and delay, or nothing, where not swept); a rate needs periodic
/// traffic.
fn sweep(cx: &Cx, raw: &RawFile, topology: &Topology) -> Result<Sweep, ExperimentError> {
    let dims = Dim::ALL
        .into_iter()
        .map(|d| Ok((d, dim_values(cx, &raw.sweep, d, topology)?)))
        .collect::<Result<Vec<_>, ExperimentError>>()?;
    if raw.sweep.rate.is_some() && raw.traffic.kind != "periodic" {
        return Err(cx.invalid(
            "sweep.rate",
            "periodic traffic (the rate sets its interval)",
            format!("traffic.kind `{}`", raw.traffic.kind),
        ));
    }
    Ok(Sweep {
        dims,
        combine: raw.sweep.combine,
        axis: raw.sweep.axis,
    })
}

/// The values of dimension `d`, each checked.
fn dim_values(
    cx: &Cx,
    s: &RawSweep,
    d: Dim,
    topology: &Topology,
) -> Result<Vec<Value>, ExperimentError> {
    let key = format!("sweep.{}", d.name());
    let key = key.as_str();
    let overhead = topology.overhead_bytes as i64;
    let probability = |p: f64, value: fn(Option<f64>) -> Value| {
        let ok = (0.0..=1.0).contains(&p);
        cx.expect(key, ok, value(Some(p)), "probabilities from 0 to 1", p)
    };
    match d {
        Dim::Bandwidth => listed(
            cx,
            key,
            &s.bandwidth,
            Value::Bandwidth(topology.bandwidth_bps),
            |x| cx.rate(key, x).map(Value::Bandwidth),
        ),
        Dim::Delay => listed(cx, key, &s.delay, Value::Delay(topology.delay), |x| {
            cx.duration(key, x).map(Value::Delay)
        }),
        Dim::MessageSize => listed(cx, key, &s.message_size, Value::MessageSize(None), |&m| {
            let value = Value::MessageSize(Some(m as usize));
            let expected = "sizes of at least 8 bytes (messages carry their number)";
            cx.expect(key, m >= 8, value, expected, m)
        }),
        Dim::Loss => listed(cx, key, &s.loss, Value::Loss(None), |&p| {
            probability(p, Value::Loss)
        }),
        Dim::Corrupt => listed(cx, key, &s.corrupt, Value::Corrupt(None), |&p| {
            probability(p, Value::Corrupt)
        }),
        Dim::Rate => listed(cx, key, &s.rate, Value::Rate(None), |&r| {
            let ok = r.is_finite() && r > 0.0;
            let expected = "positive message rates (messages per second)";
            cx.expect(key, ok, Value::Rate(Some(r)), expected, r)
        }),
        Dim::Mtu => listed(cx, key, &s.mtu, Value::Mtu(None), |&m| {
            let ok = (128 + overhead..=65_535 + overhead).contains(&m);
            let expected =
                "IP MTUs whose SCTP packets (less topology.overhead_bytes) are 128 to 65535 bytes";
            cx.expect(key, ok, Value::Mtu(Some(m as usize)), expected, m)
        }),
    }
}

/// A dimension's values: `unset` alone when the file does not list it, else
/// each listed value parsed (at least one).
fn listed<T>(
    cx: &Cx,
    key: &str,
    list: &Option<Vec<T>>,
    unset: Value,
    parse: impl Fn(&T) -> Result<Value, ExperimentError>,
) -> Result<Vec<Value>, ExperimentError> {
    match list {
        None => Ok(vec![unset]),
        Some(v) if v.is_empty() => {
            Err(cx.invalid(key, "at least one value", "an empty list".into()))
        }
        Some(v) => v.iter().map(parse).collect(),
    }
}

/// `sweep.axis` names a dimension the sweep lists.
fn check_axis(cx: &Cx, s: &RawSweep) -> Result<(), ExperimentError> {
    match s.axis {
        Some(axis) if !s.lists(axis) => Err(cx.invalid(
            "sweep.axis",
            "a dimension the sweep lists",
            format!("`{}`", axis.name()),
        )),
        _ => Ok(()),
    }
}

/// `combine = "zip"`: every zipped list has the same length.
fn check_zip(cx: &Cx, sweep: &Sweep) -> Result<(), ExperimentError> {
    match sweep.unequal_zip() {
        Some((first, other)) => Err(cx.invalid(
            &format!("sweep.{}", other.name()),
            &format!(
                "as many values as sweep.{} ({}), for combine = \"zip\"",
                first.name(),
                sweep.len(first)
            ),
            sweep.len(other).to_string(),
        )),
        None => Ok(()),
    }
}

/// `[topology]`: the link, and a dumbbell's flows and access links.
fn topology(cx: &Cx, raw: &RawFile) -> Result<Topology, ExperimentError> {
    let t = &raw.topology;
    let dumbbell = match t.kind.as_str() {
        "point-to-point" | "dual-homed" => None,
        "dumbbell" => Some(dumbbell(cx, t, &raw.variants)?),
        other => {
            return Err(cx.invalid(
                "topology.kind",
                "\"point-to-point\", \"dumbbell\" or \"dual-homed\"",
                format!("`{other}`"),
            ));
        }
    };
    let dual_homed = match t.kind.as_str() {
        "dual-homed" => Some(dual_homed_topology(cx, raw)?),
        kind => {
            if let Some((name, p)) = [("primary", &t.primary), ("secondary", &t.secondary)]
                .into_iter()
                .find_map(|(n, p)| Some((n, p.as_ref()?)))
            {
                return Err(cx.invalid_at(
                    p.span(),
                    &format!("topology.{name}"),
                    "a dual-homed topology (kind = \"dual-homed\"): paths exist only there",
                    format!("kind `{kind}`"),
                ));
            }
            None
        }
    };
    if t.access_impairments.is_some() && dumbbell.is_none() {
        return Err(cx.invalid(
            "topology.access_impairments",
            "a dumbbell (access links exist only there)",
            "a point-to-point topology".into(),
        ));
    }
    Ok(Topology {
        bandwidth_bps: cx.rate("topology.bandwidth", &t.bandwidth)?,
        delay: cx.duration("topology.delay", &t.delay)?,
        queue_packets: t.queue_packets.unwrap_or(1000),
        overhead_bytes: t.overhead_bytes.unwrap_or(28),
        dumbbell,
        dual_homed,
    })
}

/// `kind = "dual-homed"`: its two paths; no dumbbell keys, and no variant
/// that runs a real stack (the emulator runs a point-to-point link).
fn dual_homed_topology(cx: &Cx, raw: &RawFile) -> Result<DualHomed, ExperimentError> {
    let t = &raw.topology;
    for (key, set) in [
        ("flows", t.flows.is_some()),
        ("flow_variants", t.flow_variants.is_some()),
        ("access_bandwidth", t.access_bandwidth.is_some()),
        ("access_delay", t.access_delay.is_some()),
        ("access_impairments", t.access_impairments.is_some()),
    ] {
        if set {
            return Err(cx.invalid(
                &format!("topology.{key}"),
                "nothing: a dual-homed topology has one flow over two paths \
                 (set them in [topology.primary] and [topology.secondary])",
                "a value".into(),
            ));
        }
    }
    if let Some(i) = raw.variants.iter().position(|v| v.stack.is_some()) {
        return Err(cx.invalid(
            &format!("variants[{i}].stack"),
            "a simulated variant: the emulator runs a point-to-point link, \
             not a dual-homed topology",
            "a real stack".into(),
        ));
    }
    dual_homed(cx, t.primary.as_ref(), t.secondary.as_ref())
}

/// `kind = "dumbbell"`: its flows, their variants and access links.
fn dumbbell(
    cx: &Cx,
    t: &RawTopology,
    variants: &[RawVariant],
) -> Result<Dumbbell, ExperimentError> {
    let flows = t.flows.unwrap_or(2);
    if flows == 0 {
        return Err(cx.invalid("topology.flows", "at least 1", "0".into()));
    }
    let flow_variants = match &t.flow_variants {
        None => None,
        Some(names) => Some(flow_variants(cx, names, flows, variants)?),
    };
    let access_impairments = access_impairments(cx, t, flows)?;
    Ok(Dumbbell {
        flows,
        flow_variants,
        access_impairments,
        access_bandwidth_bps: match &t.access_bandwidth {
            Some(v) => cx.rate("topology.access_bandwidth", v)?,
            None => 1_000_000_000,
        },
        access_delay: match &t.access_delay {
            Some(v) => cx.duration("topology.access_delay", v)?,
            None => Duration::ZERO,
        },
    })
}

/// `topology.flow_variants`: one variant name per flow, as indices.
fn flow_variants(
    cx: &Cx,
    names: &[String],
    flows: u32,
    variants: &[RawVariant],
) -> Result<Vec<usize>, ExperimentError> {
    if names.len() != flows as usize {
        return Err(cx.invalid(
            "topology.flow_variants",
            &format!("one variant name per flow ({flows})"),
            format!("{} names", names.len()),
        ));
    }
    names
        .iter()
        .map(|n| {
            variants.iter().position(|v| &v.name == n).ok_or_else(|| {
                cx.invalid(
                    "topology.flow_variants",
                    "names of [[variants]]",
                    format!("`{n}`"),
                )
            })
        })
        .collect()
}

/// `topology.access_impairments`: at most one list of pattern lines per flow.
fn access_impairments(
    cx: &Cx,
    t: &RawTopology,
    flows: u32,
) -> Result<Vec<Vec<String>>, ExperimentError> {
    let access_impairments = t.access_impairments.clone().unwrap_or_default();
    if access_impairments.len() > flows as usize {
        return Err(cx.invalid(
            "topology.access_impairments",
            &format!("at most one list of pattern lines per flow ({flows})"),
            format!("{} lists", access_impairments.len()),
        ));
    }
    for (f, lines) in access_impairments.iter().enumerate() {
        for (j, line) in lines.iter().enumerate() {
            let key = format!("topology.access_impairments[{f}][{j}]");
            cx.check_pattern(line, key, |s| {
                let t = s.topology?;
                t.access_impairments.get(f)?.get(j).map(|s| s.span())
            })?;
        }
    }
    Ok(access_impairments)
}

/// `[traffic]`: what the sender sends.
fn traffic(cx: &Cx, raw: &RawFile) -> Result<Traffic, ExperimentError> {
    let t = &raw.traffic;
    let message_size = t.message_size.ok_or_else(|| need(cx, "message_size"))?;
    if message_size < 8 {
        return Err(cx.invalid(
            "traffic.message_size",
            "at least 8 bytes (messages carry their number)",
            message_size.to_string(),
        ));
    }
    match t.kind.as_str() {
        "bursts" => bursts(cx, t, message_size),
        "bulk" => bulk(cx, t, message_size),
        "trace" => trace(cx, t),
        "periodic" => periodic(cx, t, message_size, raw.sweep.rate.is_some()),
        other => Err(cx.invalid(
            "traffic.kind",
            "\"bursts\", \"periodic\", \"bulk\" or \"trace\"",
            format!("`{other}`"),
        )),
    }
}

/// A key this traffic kind needs and the file leaves out.
fn need(cx: &Cx, key: &str) -> ExperimentError {
    cx.invalid(
        &format!("traffic.{key}"),
        "a value for this traffic kind",
        "nothing".into(),
    )
}

/// `kind = "bursts"`.
fn bursts(cx: &Cx, t: &RawTraffic, message_size: usize) -> Result<Traffic, ExperimentError> {
    let size = match t.burst_size.clone().ok_or_else(|| need(cx, "burst_size"))? {
        RawCount::Fixed(n) if n >= 1 => Count::Fixed(n as u32),
        RawCount::Uniform { uniform: [a, b] } if a >= 1 && b >= a => {
            Count::Uniform(a as u32, b as u32)
        }
        other => {
            return Err(cx.invalid(
                "traffic.burst_size",
                "a count of at least 1, or { uniform = [low, high] } with 1 <= low <= high",
                format!("`{}`", raw_count_text(&other)),
            ));
        }
    };
    let gap = match t.gap.clone().ok_or_else(|| need(cx, "gap"))? {
        RawGap::Fixed(g) => Gap::Fixed(cx.duration("traffic.gap", &g)?),
        RawGap::Exponential { exponential } => {
            Gap::Exponential(cx.duration("traffic.gap.exponential", &exponential)?)
        }
    };
    let bursts = t.bursts.ok_or_else(|| need(cx, "bursts"))?;
    let warmup_bursts = t.warmup_bursts.unwrap_or(0);
    if bursts <= warmup_bursts {
        return Err(cx.invalid(
            "traffic.bursts",
            "more bursts than warmup_bursts",
            format!("{bursts} bursts, {warmup_bursts} warm-up"),
        ));
    }
    Ok(Traffic::Bursts {
        bursts,
        warmup_bursts,
        size,
        gap,
        message_size,
    })
}

/// `kind = "bulk"`: a number of messages, or a saturated sender for a duration.
fn bulk(cx: &Cx, t: &RawTraffic, message_size: usize) -> Result<Traffic, ExperimentError> {
    match (t.messages, &t.duration) {
        (Some(messages), None) => Ok(Traffic::Bulk {
            messages,
            message_size,
        }),
        (None, Some(d)) => {
            let duration = cx.duration("traffic.duration", d)?;
            let warmup = match &t.warmup {
                Some(w) => cx.duration("traffic.warmup", w)?,
                None => Duration::ZERO,
            };
            if warmup >= duration {
                return Err(cx.invalid(
                    "traffic.warmup",
                    "less than traffic.duration",
                    format!(
                        "`{}` (duration `{}`)",
                        format_duration(warmup),
                        format_duration(duration)
                    ),
                ));
            }
            Ok(Traffic::Saturated {
                duration,
                warmup,
                message_size,
                packing: t.packing.unwrap_or_default(),
            })
        }
        _ => Err(cx.invalid(
            "traffic.messages",
            "either `messages` or `duration` for bulk traffic",
            "both or neither".into(),
        )),
    }
}

/// `kind = "trace"`: the file, next to the experiment file.
fn trace(cx: &Cx, t: &RawTraffic) -> Result<Traffic, ExperimentError> {
    let name = t.file.as_deref().ok_or_else(|| need(cx, "file"))?;
    let trace_path = cx.path.parent().unwrap_or(Path::new(".")).join(name);
    let text = std::fs::read_to_string(&trace_path).map_err(|e| {
        cx.invalid(
            "traffic.file",
            "a readable trace file",
            format!("{}: {e}", trace_path.display()),
        )
    })?;
    Ok(Traffic::Trace {
        entries: parse_trace(&text).map_err(|(line, what)| {
            cx.invalid(
                "traffic.file",
                "lines of `TIME SIZE [STREAM]` (e.g. `1.5s 200` or `0 100 2`)",
                format!("{}:{line}: {what}", trace_path.display()),
            )
        })?,
    })
}

/// `kind = "periodic"`: an interval (1 s when a swept rate sets it), and a
/// number of messages or a duration.
fn periodic(
    cx: &Cx,
    t: &RawTraffic,
    message_size: usize,
    rate_swept: bool,
) -> Result<Traffic, ExperimentError> {
    let jitter = match &t.jitter {
        Some(j) => cx.duration("traffic.jitter", j)?,
        None => Duration::ZERO,
    };
    let interval = match (&t.interval, rate_swept) {
        (Some(i), _) => cx.duration("traffic.interval", i)?,
        (None, true) => Duration::from_secs(1),
        (None, false) => return Err(need(cx, "interval")),
    };
    let (messages, duration) = match (t.messages, &t.duration) {
        (Some(messages), None) => (messages, None),
        (None, Some(d)) => {
            let d = cx.duration("traffic.duration", d)?;
            (periodic_count(d, interval), Some(d))
        }
        _ => {
            return Err(cx.invalid(
                "traffic.messages",
                "either `messages` or `duration` for periodic traffic",
                "both or neither".into(),
            ));
        }
    };
    Ok(Traffic::Periodic {
        interval,
        messages,
        duration,
        jitter,
        message_size,
    })
}

/// `[competing]`: a variant for the last flow of a dumbbell without
/// `flow_variants`, and/or both emulator commands.
fn competing(
    cx: &Cx,
    raw: Option<&RawCompeting>,
    topology: &Topology,
    variants: &[Variant],
) -> Result<Option<Competing>, ExperimentError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let variant = match &raw.variant {
        None => None,
        Some(name) => {
            let fits = topology
                .dumbbell
                .as_ref()
                .is_some_and(|d| d.flows >= 2 && d.flow_variants.is_none());
            if !fits {
                return Err(cx.invalid(
                    "competing.variant",
                    "a dumbbell topology of at least 2 flows without flow_variants",
                    format!("`{name}`"),
                ));
            }
            Some(
                variants
                    .iter()
                    .position(|v| &v.name == name)
                    .ok_or_else(|| {
                        cx.invalid(
                            "competing.variant",
                            "the name of a [[variants]] entry",
                            format!("`{name}`"),
                        )
                    })?,
            )
        }
    };
    if raw.server.is_empty() != raw.client.is_empty() {
        return Err(cx.invalid(
            "competing.server",
            "both server and client commands, or neither",
            "one of them".into(),
        ));
    }
    let warmup = match &raw.warmup {
        None => Duration::from_secs(2),
        Some(w) => cx.duration("competing.warmup", w)?,
    };
    Ok(Some(Competing {
        variant,
        message_size: raw.message_size.unwrap_or(1448).max(1),
        warmup,
        server: raw.server.clone(),
        client: raw.client.clone(),
    }))
}

/// `[[stacks]]`: a known transport, and both commands.
fn check_stacks(cx: &Cx, stacks: &[RawStack]) -> Result<(), ExperimentError> {
    for (i, st) in stacks.iter().enumerate() {
        if let Some(t) = st
            .transport
            .as_deref()
            .filter(|t| !["sctp", "tcp"].contains(t))
        {
            return Err(cx.invalid(
                &format!("stacks[{i}].transport"),
                "sctp or tcp",
                format!("`{t}`"),
            ));
        }
        if let Some(cc) = st
            .congestion_control
            .as_deref()
            .filter(|cc| !LINUX_CONGESTION_CONTROLS.contains(cc))
        {
            return Err(cx.invalid(
                &format!("stacks[{i}].congestion_control"),
                "one of Linux's congestion controls: cubic, bbr or reno",
                format!("`{cc}`"),
            ));
        }
        if st.congestion_control.is_some()
            && st.sysctl.contains_key("net.ipv4.tcp_congestion_control")
        {
            return Err(cx.invalid(
                &format!("stacks[{i}].sysctl"),
                "no net.ipv4.tcp_congestion_control beside congestion_control",
                "both".into(),
            ));
        }
        for (role, argv) in [("server", &st.server), ("client", &st.client)] {
            if argv.is_empty() {
                return Err(cx.invalid(
                    &format!("stacks[{i}].{role}"),
                    "a command: the program and its arguments",
                    "an empty list".into(),
                ));
            }
        }
    }
    Ok(())
}

/// `[[variants]]`: at least one, each valid, every name once.
fn variants(cx: &Cx, raw: &RawFile, topology: &Topology) -> Result<Vec<Variant>, ExperimentError> {
    if raw.variants.is_empty() {
        return Err(cx.invalid("variants", "at least one [[variants]] table", "none".into()));
    }
    let flows = topology.dumbbell.as_ref().map_or(1, |d| d.flows as usize);
    let variants = raw
        .variants
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let vx = VariantCx { cx, i };
            variant(&vx, v, &raw.stacks, flows)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut names = std::collections::BTreeSet::new();
    for v in &variants {
        if !names.insert(v.name.as_str()) {
            return Err(cx.invalid(
                "variants",
                "a different name for every variant",
                format!("`{}` twice", v.name),
            ));
        }
    }
    Ok(variants)
}

/// The validator's view of `variants[i]`: its keys.
struct VariantCx<'a> {
    cx: &'a Cx<'a>,
    i: usize,
}

impl VariantCx<'_> {
    /// Key `k` of this variant: `variants[i].k`.
    fn key(&self, k: &str) -> String {
        format!("variants[{}].{k}", self.i)
    }

    /// Key `k` of this variant does not hold what was expected.
    fn invalid(&self, k: &str, expected: &str, found: String) -> ExperimentError {
        self.cx.invalid(&self.key(k), expected, found)
    }

    /// The lab preset `name`, given at key `k`.
    fn preset(&self, k: &str, name: &str) -> Result<Config, ExperimentError> {
        preset(name).ok_or_else(|| {
            self.invalid(
                k,
                &format!("one of {}", LAB_PRESETS.join(", ")),
                format!("`{name}`"),
            )
        })
    }

    /// `config` with the knobs of table `k` set, then validated.
    fn apply(
        &self,
        config: &mut Config,
        k: &str,
        set: &BTreeMap<String, toml::Value>,
    ) -> Result<(), ExperimentError> {
        for (knob, value) in dotted_knobs(set) {
            let text = knob_text(value);
            config.set(&knob, &text).map_err(|e| match e {
                ConfigError::BadValue { expected, .. } => {
                    self.invalid(&format!("{k}.{knob}"), expected, format!("`{text}`"))
                }
                other => ExperimentError::Refused {
                    file: self.cx.path.to_owned(),
                    key: self.key(&format!("{k}.{knob}")),
                    message: other.to_string(),
                },
            })?;
        }
        config.validate().map_err(|e| match e {
            ConfigError::Invalid { field, expected } => self.invalid(
                &format!("{k}.{field}"),
                &format!("{field} {expected}"),
                format!("`{}`", config.get(field).unwrap_or_default()),
            ),
            other => self.invalid(k, "valid settings", other.to_string()),
        })
    }
}

/// One `[[variants]]` table: a real stack, the TCP model, or Brisk with its
/// sender, receiver and per-flow configs.
fn variant(
    vx: &VariantCx,
    v: &RawVariant,
    stacks: &[RawStack],
    flows: usize,
) -> Result<Variant, ExperimentError> {
    let stack = match &v.stack {
        None => None,
        Some(name) => Some(variant_stack(vx, name, stacks)?),
    };
    let send = send_options(vx, v)?;
    let refused = if stack.is_some() {
        Some(("a stack", "its own commands send its messages"))
    } else if v.transport.as_deref() == Some("tcp") {
        Some(("a TCP", "TCP delivers every byte, in order"))
    } else {
        None
    };
    if let Some((kind, why)) = refused {
        let set = [
            ("unordered", v.unordered),
            ("lifetime", v.lifetime.is_some()),
            ("max_retransmits", v.max_retransmits.is_some()),
        ];
        if let Some((k, _)) = set.iter().find(|(_, on)| *on) {
            return Err(vx.invalid(
                k,
                &format!(
                    "nothing: `unordered`, `lifetime` and `max_retransmits` apply to \
                     simulated SCTP variants ({why})"
                ),
                format!("a value on {kind} variant"),
            ));
        }
    }
    match v.transport.as_deref() {
        None | Some("sctp") => {}
        Some("tcp") => {
            return Ok(Variant {
                name: v.name.clone(),
                stack: None,
                config: Config::rfc9260(),
                receiver_config: Config::rfc9260(),
                no_loss: v.no_loss,
                flow_configs: Vec::new(),
                tcp: Some(tcp_variant(vx, v)?),
                send,
            });
        }
        Some(other) => {
            return Err(vx.invalid("transport", "\"sctp\" or \"tcp\"", format!("`{other}`")));
        }
    }
    let preset_name = match (&v.preset, &stack) {
        (Some(p), _) => p.as_str(),
        (None, Some(_)) => "rfc9260",
        (None, None) => {
            return Err(vx.invalid(
                "preset",
                &format!("a preset ({}), or a stack", LAB_PRESETS.join(", ")),
                "none".into(),
            ));
        }
    };
    let mut config = vx.preset("preset", preset_name)?;
    vx.apply(&mut config, "set", &v.set)?;
    let mut receiver_config = match &v.receiver_preset {
        Some(name) => vx.preset("receiver_preset", name)?,
        None => config.clone(),
    };
    vx.apply(&mut receiver_config, "receiver_set", &v.receiver_set)?;
    let flow_configs = flow_configs(vx, v, flows, &config, &receiver_config)?;
    Ok(Variant {
        name: v.name.clone(),
        stack,
        config,
        receiver_config,
        no_loss: v.no_loss,
        flow_configs,
        tcp: None,
        send,
    })
}

/// `variants[i].unordered`, `.lifetime` and `.max_retransmits` (at most one
/// of the two policies): how the variant's messages are sent.
fn send_options(vx: &VariantCx, v: &RawVariant) -> Result<SendOptions, ExperimentError> {
    let reliability = match (&v.lifetime, v.max_retransmits) {
        (Some(_), Some(_)) => {
            return Err(vx.invalid(
                "max_retransmits",
                "either `lifetime` or `max_retransmits`, not both (one policy per message)",
                "both".into(),
            ));
        }
        (Some(text), None) => match parse_duration(text) {
            Some(d) if !d.is_zero() => Reliability::Lifetime(d),
            _ => {
                return Err(vx.invalid(
                    "lifetime",
                    "a positive duration such as 100ms or 1.5s",
                    format!("`{text}`"),
                ));
            }
        },
        (None, Some(n)) => match u32::try_from(n) {
            Ok(n) => Reliability::MaxRetransmits(n),
            Err(_) => {
                return Err(vx.invalid(
                    "max_retransmits",
                    &format!("a number of retransmissions from 0 to {}", u32::MAX),
                    n.to_string(),
                ));
            }
        },
        (None, None) => Reliability::Reliable,
    };
    Ok(SendOptions {
        unordered: v.unordered,
        reliability,
        ..SendOptions::default()
    })
}

/// `variants[i].stack`: the `[[stacks]]` table it names.
fn variant_stack(
    vx: &VariantCx,
    name: &str,
    stacks: &[RawStack],
) -> Result<Stack, ExperimentError> {
    let st = stacks.iter().find(|st| st.name == name).ok_or_else(|| {
        let known: Vec<&str> = stacks.iter().map(|st| st.name.as_str()).collect();
        vx.invalid(
            "stack",
            &format!("the name of a [[stacks]] table ({})", known.join(", ")),
            format!("`{name}`"),
        )
    })?;
    Ok(Stack {
        name: st.name.clone(),
        tcp: st.transport.as_deref() == Some("tcp"),
        server: st.server.clone(),
        client: st.client.clone(),
        sysctl: st
            .sysctl
            .iter()
            .map(|(k, v)| (k.clone(), knob_text(v)))
            .collect(),
        congestion_control: st.congestion_control.clone(),
    })
}

/// `variants[i].flow_set`: per flow of a dumbbell, both ends' configs with
/// the flow's overrides (none without a `flow_set`).
fn flow_configs(
    vx: &VariantCx,
    v: &RawVariant,
    flows: usize,
    config: &Config,
    receiver_config: &Config,
) -> Result<Vec<(Config, Config)>, ExperimentError> {
    if v.flow_set.len() > flows {
        return Err(vx.invalid(
            "flow_set",
            &format!("at most one table of overrides per flow ({flows})"),
            format!("{} tables", v.flow_set.len()),
        ));
    }
    let mut flow_configs = Vec::new();
    if !v.flow_set.is_empty() {
        for f in 0..flows {
            let (mut s, mut r) = (config.clone(), receiver_config.clone());
            if let Some(set) = v.flow_set.get(f) {
                vx.apply(&mut s, &format!("flow_set[{f}]"), set)?;
                vx.apply(&mut r, &format!("flow_set[{f}]"), set)?;
            }
            flow_configs.push((s, r));
        }
    }
    Ok(flow_configs)
}

/// `[[models]]`: a step of at least a byte, a loss rate that is a probability.
fn check_models(cx: &Cx, models: &[Model]) -> Result<(), ExperimentError> {
    for (i, m) in models.iter().enumerate() {
        if m.step == 0 {
            return Err(cx.invalid(&format!("models[{i}].step"), "at least 1 byte", "0".into()));
        }
        if m.loss.is_some_and(|p| !(p > 0.0 && p <= 1.0)) {
            return Err(cx.invalid(
                &format!("models[{i}].loss"),
                "a probability above 0 and at most 1",
                m.loss.map(|p| p.to_string()).unwrap_or_default(),
            ));
        }
    }
    Ok(())
}

/// `[[paper_series]]`: as many x values as y values.
fn check_paper_series(cx: &Cx, series: &[PaperSeries]) -> Result<(), ExperimentError> {
    for (i, ps) in series.iter().enumerate() {
        if ps.x.len() != ps.y.len() {
            return Err(cx.invalid(
                &format!("paper_series[{i}]"),
                "as many x values as y values",
                format!("{} and {}", ps.x.len(), ps.y.len()),
            ));
        }
    }
    Ok(())
}

/// `[[reference]]`: `ours` names a quantity of known variants, bounds are
/// finite and in order, a bounded gap has bounds and a check to explain.
fn check_references(
    cx: &Cx,
    references: &[Reference],
    variants: &[Variant],
    replications: u32,
) -> Result<(), ExperimentError> {
    for (i, r) in references.iter().enumerate() {
        let key = |k: &str| format!("reference[{i}].{k}");
        if let Some(spec) = &r.ours {
            check_ours(cx, &key("ours"), spec, variants)?;
        }
        if r.ci {
            let kind = r
                .ours
                .as_deref()
                .and_then(|s| s.split_once(':'))
                .map(|s| s.0);
            if !kind.is_some_and(|k| CI_KINDS.contains(&k)) {
                return Err(cx.invalid(
                    &key("ci"),
                    &format!(
                        "`ours` of a kind with an interval ({})",
                        CI_KINDS.join(", ")
                    ),
                    format!("`{}`", r.ours.as_deref().unwrap_or("")),
                ));
            }
            if replications < 2 {
                return Err(cx.invalid(
                    &key("ci"),
                    "at least 2 replications (a 95% interval is bootstrapped over runs)",
                    format!("replications = {replications}"),
                ));
            }
        }
        check_bounds(cx, &key(""), "", r.min, r.max)?;
        if let Some(KnownGap::Bounded(g)) = &r.gap {
            check_bounds(cx, &key(""), "gap.", g.min, g.max)?;
            if g.min.is_none() && g.max.is_none() {
                return Err(cx.invalid(
                    &key("gap"),
                    "bounds on our own value (`min` and/or `max`) beside `why`, \
                     or the explanation alone as a string",
                    "`why` alone".into(),
                ));
            }
            if r.min.is_none() && r.max.is_none() {
                return Err(cx.invalid(
                    &key("gap"),
                    "a check (the paper's `min` and/or `max`) for the gap to explain",
                    "no bounds".into(),
                ));
            }
        }
    }
    Ok(())
}

/// `ours` (at `key`): a quantity's shape, naming variants the file has.
fn check_ours(cx: &Cx, key: &str, spec: &str, variants: &[Variant]) -> Result<(), ExperimentError> {
    let named =
        spec_variants(spec).map_err(|expected| cx.invalid(key, &expected, format!("`{spec}`")))?;
    for v in named {
        if !variants.iter().any(|known| known.name == v) {
            return Err(cx.invalid(
                key,
                &variant_names_expected(variants),
                format!("`{v}` in `{spec}`"),
            ));
        }
    }
    Ok(())
}

/// Bounds `{k}min` and `{k}max` under `prefix`: finite, and min at most max.
fn check_bounds(
    cx: &Cx,
    prefix: &str,
    k: &str,
    lo: Option<f64>,
    hi: Option<f64>,
) -> Result<(), ExperimentError> {
    for (name, x) in [("min", lo), ("max", hi)] {
        if x.is_some_and(|x| !x.is_finite()) {
            return Err(cx.invalid(
                &format!("{prefix}{k}{name}"),
                "a finite number",
                format!("{}", x.unwrap_or_default()),
            ));
        }
    }
    match (lo, hi) {
        (Some(l), Some(h)) if l > h => Err(cx.invalid(
            &format!("{prefix}{k}min"),
            &format!("at most {k}max"),
            format!("min {l}, max {h}"),
        )),
        _ => Ok(()),
    }
}

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
    /// Each section has its validator, run in this order (the first error
    /// found is the one reported).
    pub fn parse(path: &Path, text: &str) -> Result<Experiment, ExperimentError> {
        let raw: RawFile = toml::from_str(text).map_err(|e| ExperimentError::Syntax {
            file: path.to_owned(),
            // Kept on its lines: the toml crate shows the line and a caret.
            message: e.to_string().trim_end().to_owned(),
        })?;
        let cx = Cx { path, text };
        let topology = topology(&cx, &raw)?;
        if raw.replications == 0 {
            return Err(cx.invalid("replications", "at least 1", "0".into()));
        }
        let sweep = sweep(&cx, &raw, &topology)?;
        let traffic = traffic(&cx, &raw)?;
        check_stacks(&cx, &raw.stacks)?;
        let variants = variants(&cx, &raw, &topology)?;
        check_models(&cx, &raw.models)?;
        check_paper_series(&cx, &raw.paper_series)?;
        check_axis(&cx, &raw.sweep)?;
        let mut reference = raw.reference;
        reference.extend(crate::never_worse::expand(
            &cx,
            &raw.never_worse,
            &variants,
            raw.replications,
        )?);
        check_references(&cx, &reference, &variants, raw.replications)?;
        let competing = competing(&cx, raw.competing.as_ref(), &topology, &variants)?;
        for (i, line) in raw.impairments.iter().enumerate() {
            cx.check_pattern(line, format!("impairments[{i}]"), |s| {
                s.impairments.get(i).map(|s| s.span())
            })?;
        }
        let exp = Experiment {
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
            sweep,
            impairments: raw.impairments,
            reference,
            notes: raw.notes,
            models: raw.models,
            paper_series: raw.paper_series,
            paper_rows: raw.paper_rows,
            competing,
        };
        check_zip(&cx, &exp.sweep)?;
        Ok(exp)
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
    fn the_lab_presets_are_the_protocols_and_signaling_lksctp_as_it_was() {
        let names: Vec<&str> = brisk_proto::PRESETS
            .iter()
            .chain(LAB_ONLY_PRESETS.iter().map(|(name, _)| name))
            .copied()
            .collect();
        assert_eq!(names, LAB_PRESETS);
        for name in LAB_PRESETS {
            assert!(preset(name).is_some_and(|c| c.validate().is_ok()), "{name}");
        }
        // Its values before they came from the declaration (issue 13).
        let pinned = Config {
            rto_initial: Duration::from_millis(200),
            rto_min: Duration::from_millis(100),
            rto_max: Duration::from_millis(400),
            sack_delay: Duration::from_millis(40),
            ..Config::lksctp_2_6_15()
        };
        assert_eq!(preset("signaling-lksctp"), Some(pinned));
        assert_eq!(preset("bogus"), None);
    }

    #[test]
    fn grouped_knobs_may_be_set_as_dotted_keys_or_nested_tables() {
        let parse = |set: &str| {
            let text = GOOD.replace(
                "set = { sack_delay = \"40ms\", fast_retransmit_threshold = 4 }",
                set,
            );
            Experiment::parse(Path::new("exp.toml"), &text).map(|e| e.variants[0].config.clone())
        };
        let flat =
            parse("set = { thin_rto_min = \"200ms\", early_retransmit_delay = true }").unwrap();
        assert_eq!(flat.thin_rto_min, Some(Duration::from_millis(200)));
        for set in [
            "set = { thin.rto_min = \"200ms\", early_retransmit.delay = true }",
            "set = { thin = { rto_min = \"200ms\" }, early_retransmit_delay = true }",
        ] {
            assert_eq!(parse(set).unwrap(), flat, "{set}");
        }
        let e = parse("set = { thin.rto_mni = \"200ms\" }")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("key `variants[0].set.thin.rto_mni`")
                && e.contains("did you mean `thin_rto_min`?"),
            "{e}"
        );
    }

    #[test]
    fn a_good_file_parses_with_presets_overrides_and_sweep() {
        let e = Experiment::parse(Path::new("exp.toml"), GOOD).unwrap();
        assert_eq!(e.sweep.bandwidths(), vec![500_000, 1_000_000]);
        assert_eq!(
            e.sweep.values(Dim::Delay),
            [Value::Delay(Duration::from_millis(15))]
        );
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

    fn with_reference(reference: &str) -> String {
        format!("{GOOD}\n[[reference]]\nlabel = \"L\"\nvalue = \"1\"\n{reference}\n")
    }

    #[test]
    fn a_check_naming_a_variant_the_file_lacks_is_refused() {
        let e = err(&with_reference(
            "ours = \"reduction:standard:early-retransmit@delay=5ms\"\nmin = 1.0",
        ));
        assert_eq!(
            e,
            "exp.toml: key `reference[0].ours`: expected names of [[variants]] (standard), \
             found `early-retransmit` in `reduction:standard:early-retransmit@delay=5ms`"
        );
        let e = err(&with_reference("ours = \"median:standard\"\nmin = 1.0"));
        assert!(
            e.contains("key `reference[0].ours`: expected one of the quantity kinds range, mean"),
            "{e}"
        );
        let e = err(&with_reference("ours = \"position:standard\"\nmin = 1.0"));
        assert!(e.contains("expected 2 arguments after `position:`"), "{e}");
        let ok = with_reference("ours = \"gain:standard:standard:standard\"\nmin = 1.0");
        assert!(Experiment::parse(Path::new("exp.toml"), &ok).is_ok());
    }

    #[test]
    fn bounds_out_of_order_are_refused_for_the_paper_and_the_gap() {
        let e = err(&with_reference(
            "ours = \"mean:standard\"\nmin = 50.0\nmax = 40.0",
        ));
        assert_eq!(
            e,
            "exp.toml: key `reference[0].min`: expected at most max, found min 50, max 40"
        );
        let e = err(&with_reference(
            "ours = \"mean:standard\"\nmin = 40.0\nmax = 50.0\n\
             gap = { why = \"w\", min = 30.0, max = 20.0 }",
        ));
        assert_eq!(
            e,
            "exp.toml: key `reference[0].gap.min`: expected at most gap.max, found min 30, max 20"
        );
        let e = err(&with_reference(
            "ours = \"mean:standard\"\nmin = 40.0\ngap = { why = \"w\" }",
        ));
        assert!(e.contains("key `reference[0].gap`"), "{e}");
        let ok = with_reference(
            "ours = \"mean:standard\"\nmin = 40.0\nmax = 50.0\n\
             gap = { why = \"w\", min = 20.0, max = 30.0 }",
        );
        let exp = Experiment::parse(Path::new("exp.toml"), &ok).unwrap();
        assert_eq!(
            exp.reference[0].gap.as_ref().and_then(KnownGap::bounds),
            Some((Some(20.0), Some(30.0)))
        );
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

    /// GOOD with a TCP variant `name = "tcp"` whose table ends in `rest`.
    fn with_tcp(rest: &str) -> String {
        GOOD.replace(
            "[sweep]",
            &format!("[[variants]]\nname = \"tcp\"\ntransport = \"tcp\"\n{rest}\n[sweep]"),
        )
    }

    #[test]
    fn a_tcp_variant_takes_the_models_preset_and_knobs_for_both_ends() {
        let text = with_tcp(
            "preset = \"linux\"\nset = { nagle = false }\nreceiver_set = { delayed_ack = \"none\" }",
        );
        let exp = Experiment::parse(Path::new("exp.toml"), &text).unwrap();
        let tcp = exp.variants[1].tcp.as_ref().unwrap();
        assert_eq!(tcp.preset, "linux");
        assert!(!tcp.sender.nagle && !tcp.receiver.nagle);
        assert_eq!(tcp.receiver.delayed_ack, None);
        assert!(tcp.sender.delayed_ack.is_some());
        assert!(exp.variants[0].tcp.is_none());
    }

    #[test]
    fn a_bad_tcp_variant_names_its_key_and_what_was_expected() {
        let e = err(&with_tcp("preset = \"bbr\""));
        assert!(e.contains("key `variants[1].preset`: expected one of the TCP model's presets (rfc, ns2-sack1, linux, linux-thin)"), "{e}");
        let e = err(&with_tcp("set = { nagel = false }"));
        assert!(e.contains("key `variants[1].set.nagel`"), "{e}");
        let e = err(&with_tcp("set = { mss = \"big\" }"));
        assert!(e.contains("key `variants[1].set.mss`"), "{e}");
        let e = err(&with_tcp("flow_set = [{}]"));
        assert!(e.contains("key `variants[1].flow_set`"), "{e}");
        let e = err(&GOOD.replace(
            "preset = \"signaling-lksctp\"",
            "transport = \"quic\"\npreset = \"signaling-lksctp\"",
        ));
        assert!(
            e.contains("key `variants[0].transport`: expected \"sctp\" or \"tcp\""),
            "{e}"
        );
    }

    #[test]
    fn send_options_are_read_checked_and_refused_where_they_cannot_apply() {
        let with = |rest: &str| {
            GOOD.replace(
                "set = { sack_delay",
                &format!("{rest}\nset = {{ partial_reliability = true, sack_delay"),
            )
        };
        let exp = Experiment::parse(
            Path::new("exp.toml"),
            &with("unordered = true\nlifetime = \"100ms\""),
        )
        .unwrap();
        assert_eq!(
            exp.variants[0].send,
            SendOptions {
                unordered: true,
                reliability: Reliability::Lifetime(Duration::from_millis(100)),
                stream: 0,
            }
        );
        let exp = Experiment::parse(Path::new("exp.toml"), &with("max_retransmits = 0")).unwrap();
        assert_eq!(
            exp.variants[0].send.reliability,
            Reliability::MaxRetransmits(0)
        );
        assert!(!exp.variants[0].send.unordered);
        let exp = Experiment::parse(Path::new("exp.toml"), GOOD).unwrap();
        assert!(exp.variants[0].send.is_default());
        let e = err(&with("lifetime = \"soon\""));
        assert!(
            e.contains("key `variants[0].lifetime`: expected a positive duration such as 100ms or 1.5s, found `soon`"),
            "{e}"
        );
        let e = err(&with("lifetime = \"0ms\""));
        assert!(e.contains("key `variants[0].lifetime`"), "{e}");
        let e = err(&with("max_retransmits = -1"));
        assert!(
            e.contains("key `variants[0].max_retransmits`: expected a number of retransmissions from 0 to 4294967295, found -1"),
            "{e}"
        );
        let e = err(&with("lifetime = \"100ms\"\nmax_retransmits = 0"));
        assert!(
            e.contains("key `variants[0].max_retransmits`: expected either `lifetime` or `max_retransmits`, not both"),
            "{e}"
        );
        let e = err(&with_tcp("preset = \"linux\"\nunordered = true"));
        assert!(
            e.contains("key `variants[1].unordered`: expected nothing: `unordered`, `lifetime` and `max_retransmits` apply to simulated SCTP variants (TCP delivers every byte, in order), found a value on a TCP variant"),
            "{e}"
        );
        let e = err(&with_tcp("max_retransmits = 1"));
        assert!(e.contains("key `variants[1].max_retransmits`"), "{e}");
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

    #[test]
    fn a_stack_states_its_linux_congestion_control_and_a_bad_one_is_named() {
        let with = |cc: &str| {
            GOOD.replace(
                "[[variants]]\nname = \"standard\"",
                &format!(
                    "[[stacks]]\nname = \"linux\"\ntransport = \"tcp\"\nserver = [\"s\"]\nclient = [\"c\"]\n{cc}\n[[variants]]\nname = \"linux\"\nstack = \"linux\"\n[[variants]]\nname = \"standard\""
                ),
            )
        };
        let e = Experiment::parse(
            Path::new("exp.toml"),
            &with("congestion_control = \"cubic\""),
        )
        .unwrap();
        let stack = e.variants[0].stack.as_ref().unwrap();
        assert_eq!(stack.congestion_control.as_deref(), Some("cubic"));
        assert!(stack.sysctl.is_empty());
        let e = Experiment::parse(Path::new("exp.toml"), &with("")).unwrap();
        assert_eq!(
            e.variants[0].stack.as_ref().unwrap().congestion_control,
            None
        );
        let msg = err(&with("congestion_control = \"vegas\""));
        assert!(msg.contains("exp.toml"), "{msg}");
        assert!(msg.contains("stacks[0].congestion_control"), "{msg}");
        assert!(msg.contains("cubic, bbr or reno"), "{msg}");
        assert!(msg.contains("`vegas`"), "{msg}");
        let msg = err(&with(
            "congestion_control = \"bbr\"\nsysctl = { \"net.ipv4.tcp_congestion_control\" = \"reno\" }",
        ));
        assert!(msg.contains("stacks[0].sysctl"), "{msg}");
    }
}
