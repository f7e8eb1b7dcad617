//! The loss-position method (seed 000) drops the first transmission of the
//! k-th message, found by TSN, and measures the message the link actually
//! dropped: a variant that retransmits before position k (a spurious timeout,
//! a redundant copy) is still measured on message k.

use std::path::Path;

use brisk_lab::experiment::Experiment;
use brisk_lab::runner::{self, Record};
use indicatif::ProgressBar;

/// RTO 20 ms on a 200 ms round trip: T3 retransmits every message spuriously
/// before the next one is written.
const SPURIOUS: &str = r#"rto_initial = "20ms", rto_min = "20ms", rto_max = "20ms", assoc_max_retrans = 100, path_max_retrans = 100, max_init_retransmits = 100"#;

/// One message every 30 ms over a 100 ms path; `set` configures the variant.
fn run(set: &str) -> Vec<Record> {
    parse_and_run(&experiment("loss-position", "", set))
}

/// The same traffic as a flow under an impairment pattern line.
fn run_flow(set: &str, pattern: &str) -> Vec<Record> {
    parse_and_run(&experiment(
        "flow",
        &format!("impairments = [\"{pattern}\"]"),
        set,
    ))
}

fn parse_and_run(text: &str) -> Vec<Record> {
    let exp = Experiment::parse(Path::new("t.toml"), text).unwrap();
    let (records, totals) = runner::run(&exp, 1, &ProgressBar::hidden());
    assert_eq!(totals.incomplete, 0);
    records
}

fn experiment(method: &str, extra: &str, set: &str) -> String {
    format!(
        r#"
name = "t"
title = "T"
source = "test"
method = "{method}"
{extra}
statistic = "median"
figure = "mtt-per-tsn"
[topology]
kind = "point-to-point"
bandwidth = "10Mbit"
delay = "100ms"
[traffic]
kind = "periodic"
interval = "30ms"
messages = 6
message_size = 100
[[variants]]
name = "v"
preset = "rfc9260"
set = {{ {set} }}
"#
    )
}

/// (position, message measured, MTT) of each loss-position run.
fn measured(records: &[Record]) -> Vec<(u64, u64, f64)> {
    let mut out: Vec<_> = records
        .iter()
        .filter(|r| r.metric == "mtt_ms")
        .map(|r| (r.position.unwrap(), r.tsn.unwrap(), r.value))
        .collect();
    out.sort_by(|a, b| a.partial_cmp(b).unwrap());
    out
}

#[test]
fn a_variant_that_retransmits_before_position_k_is_still_measured_on_message_k() {
    // RTO 20 ms on a 200 ms round trip: every message is retransmitted
    // spuriously by T3 before the next one is written.
    let spurious = run(SPURIOUS);
    let spurious_t3 = spurious
        .iter()
        .filter(|r| r.metric == "retransmissions_t3-timeout")
        .map(|r| r.value)
        .sum::<f64>();
    assert!(spurious_t3 > 0.0, "the variant retransmits spuriously");
    let got = measured(&spurious);
    assert_eq!(got.len(), 6, "{got:?}");
    for &(position, message, _) in &got {
        assert_eq!(
            message, position,
            "position {position} measured message {message}"
        );
    }
    // Each lost first transmission costs time (a delivered original takes
    // 100.1 ms; the spurious T3 copies make some recoveries quick).
    let mean = got.iter().map(|g| g.2).sum::<f64>() / got.len() as f64;
    assert!(mean > 105.0, "mean MTT {mean} ms: {got:?}");

    // KauNet-style `drop-data 2` drops the second DATA packet, here the T3
    // copy of message 1: message 2 is never lost. That is why positions do
    // not use it.
    let flow = run_flow(SPURIOUS, "drop-data 2");
    let second = flow
        .iter()
        .find(|r| r.metric == "mtt_ms" && r.tsn == Some(2))
        .map(|r| r.value)
        .unwrap();
    assert!(second < 101.0, "message 2 under drop-data 2: {second} ms");
}

#[test]
fn a_standard_variant_loses_exactly_the_message_of_each_position() {
    let got = measured(&run(""));
    assert_eq!(got.len(), 6, "{got:?}");
    for &(position, message, mtt) in &got {
        assert_eq!(message, position);
        // Recovered by T3 or fast retransmit: never in one one-way delay.
        assert!(mtt > 150.0, "position {position}: {mtt} ms");
    }
}

fn values(records: &[Record], metric: &str) -> Vec<f64> {
    records
        .iter()
        .filter(|r| r.metric == metric)
        .map(|r| r.value)
        .collect()
}

#[test]
fn each_run_records_its_cost_beside_its_latency() {
    let standard = run("");
    // One loss, recovered once: nothing spurious; a bit over one packet of
    // 100-byte payload per message on the bottleneck.
    assert_eq!(values(&standard, "spurious_retransmissions"), vec![0.0; 6]);
    for b in values(&standard, "bottleneck_bytes_per_message") {
        assert!((128.0..300.0).contains(&b), "{b} bytes per message");
    }
    for p in values(&standard, "bottleneck_packets_per_message") {
        assert!((1.0..2.5).contains(&p), "{p} packets per message");
    }
    // The spurious timeouts show up as their cost.
    let spurious = run(SPURIOUS);
    let extra: f64 = values(&spurious, "spurious_retransmissions").iter().sum();
    assert!(extra >= 6.0, "{extra} spurious retransmissions");
    let bytes = |r: &[Record]| {
        values(r, "bottleneck_bytes_per_message")
            .iter()
            .sum::<f64>()
    };
    assert!(bytes(&spurious) > 1.5 * bytes(&standard));
}
