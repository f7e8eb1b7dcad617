//! The per-message record's first transmission, for SCTP and TCP alike: the
//! time a message waits in its sender (`send_wait_mean_ms`) is zero on an
//! idle path, and Nagle's wait when a sender holds small messages back.

use std::path::Path;

use brisk_lab::experiment::Experiment;
use brisk_lab::runner::{self, Record};
use indicatif::ProgressBar;

fn run(sctp_nagle: &str, tcp_nagle: bool, interval: &str) -> Vec<Record> {
    let text = format!(
        r#"
name = "t"
title = "T"
source = "test"
method = "flow"
statistic = "mean-ci95"
figure = "latency-table"
[topology]
kind = "point-to-point"
bandwidth = "10Mbit"
delay = "50ms"
[traffic]
kind = "periodic"
interval = "{interval}"
messages = 40
message_size = 100
[[variants]]
name = "sctp"
preset = "rfc9260"
set = {{ nagle = "{sctp_nagle}" }}
[[variants]]
name = "tcp"
transport = "tcp"
preset = "rfc"
set = {{ nagle = {tcp_nagle} }}
"#
    );
    let exp = Experiment::parse(Path::new("t.toml"), &text).unwrap();
    runner::run(&exp, 1, &ProgressBar::hidden()).0
}

fn wait(records: &[Record], variant: &str) -> f64 {
    let v: Vec<f64> = records
        .iter()
        .filter(|r| r.variant == variant && r.metric == "send_wait_mean_ms")
        .map(|r| r.value)
        .collect();
    assert_eq!(v.len(), 1, "{variant}: {v:?}");
    v[0]
}

#[test]
fn messages_leave_at_once_on_an_idle_path_whatever_the_transport() {
    let records = run("off", false, "500ms");
    assert_eq!(wait(&records, "sctp"), 0.0);
    assert_eq!(wait(&records, "tcp"), 0.0);
}

#[test]
fn nagle_holds_small_messages_back_for_about_a_round_trip_in_both() {
    // A message every 5 ms over a 100 ms RTT: with Nagle each waits for the
    // acknowledgement of what is in flight, up to one RTT (plus the
    // receiver's delayed acknowledgement).
    let records = run("classic", true, "5ms");
    for v in ["sctp", "tcp"] {
        let w = wait(&records, v);
        assert!(w > 20.0 && w < 400.0, "{v}: {w}");
    }
}
