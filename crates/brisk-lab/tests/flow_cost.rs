//! Flow experiments show each variant's cost beside its benefit: bottleneck
//! bytes and packets per delivered message, and the retransmissions that
//! were not needed, counted against the packet log (issue 10, item 5).

use std::path::Path;

use brisk_lab::experiment::Experiment;
use brisk_lab::runner::{self, Record};
use brisk_lab::{figures, runner::RunTotals};
use indicatif::ProgressBar;

/// One 100-byte message every 30 ms over a 100 ms path, as a flow, with an
/// optional impairment line; a plain variant and one that bundles redundantly.
fn run(impairment: &str) -> (Experiment, Vec<Record>, RunTotals) {
    let impairments = if impairment.is_empty() {
        String::new()
    } else {
        format!("impairments = [\"{impairment}\"]")
    };
    let text = format!(
        r#"
name = "t"
title = "T"
source = "test"
method = "flow"
{impairments}
statistic = "median"
figure = "retransmission-table"
[topology]
kind = "point-to-point"
bandwidth = "10Mbit"
delay = "100ms"
[traffic]
kind = "periodic"
interval = "30ms"
messages = 20
message_size = 100
[[variants]]
name = "plain"
preset = "rfc9260"
[[variants]]
name = "bundling"
preset = "rfc9260"
set = {{ thin_redundant_bundling = true }}
"#
    );
    let exp = Experiment::parse(Path::new("t.toml"), &text).unwrap();
    let (records, totals) = runner::run(&exp, 1, &ProgressBar::hidden());
    assert_eq!(totals.incomplete, 0);
    (exp, records, totals)
}

fn value(records: &[Record], variant: &str, metric: &str) -> f64 {
    let v: Vec<f64> = records
        .iter()
        .filter(|r| r.variant == variant && r.metric == metric)
        .map(|r| r.value)
        .collect();
    assert_eq!(v.len(), 1, "{variant} {metric}: {v:?}");
    v[0]
}

#[test]
fn redundant_copies_cost_bytes_and_count_as_spurious_without_loss() {
    let (_, records, _) = run("");
    // 20 messages of 100 bytes, a 128-byte packet each (12 + 16 + 100), and
    // the sender's INIT and COOKIE ECHO (168 bytes together): 22 packets.
    assert_eq!(
        value(&records, "plain", "bottleneck_bytes_per_message"),
        136.4
    );
    assert_eq!(
        value(&records, "plain", "bottleneck_packets_per_message"),
        1.1
    );
    assert_eq!(value(&records, "plain", "spurious_retransmissions"), 0.0);
    let copies = value(&records, "bundling", "retransmissions_bundled");
    assert!(copies > 0.0);
    assert_eq!(
        value(&records, "bundling", "spurious_retransmissions"),
        copies
    );
    assert!(value(&records, "bundling", "bottleneck_bytes_per_message") > 136.4);
}

#[test]
fn a_needed_retransmission_is_not_spurious() {
    // The 3rd DATA packet is lost: the plain variant retransmits it once,
    // which it needed; counting every retransmission would call it spurious.
    let (_, records, _) = run("drop-data 3");
    let rtx: f64 = records
        .iter()
        .filter(|r| r.variant == "plain" && r.metric.starts_with("retransmissions_"))
        .map(|r| r.value)
        .sum();
    assert_eq!(rtx, 1.0, "{records:?}");
    assert_eq!(value(&records, "plain", "spurious_retransmissions"), 0.0);
    assert_eq!(value(&records, "plain", "lost_chunks"), 1.0);
}

#[test]
fn the_flow_report_shows_the_cost_table() {
    let (exp, records, totals) = run("");
    let section = figures::section(&exp, &records, &totals, None);
    let (_, table) = section
        .tables
        .iter()
        .find(|(title, _)| title.starts_with("Cost beside the benefit"))
        .expect("a cost table");
    assert_eq!(table.rows.len(), 2);
    let plain = &table.rows[0];
    assert_eq!(plain[0], "plain");
    assert_eq!(plain[3], "136.4", "bytes per message: {plain:?}");
    assert_eq!(plain[6], "0.00", "spurious retransmissions: {plain:?}");
}
