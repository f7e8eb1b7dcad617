//! The lost-chunk metric of seed 001's tables: the first retransmission of
//! each chunk whose original transmission the network really lost, by cause,
//! with spurious retransmissions (the original arrived) counted apart.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use brisk_lab::experiment::Experiment;
use brisk_lab::runner::{
    self, Record, T3_BUNDLED, first_retransmissions, lost_tsns, repair_delays,
};
use brisk_lab::traffic::{Receiver, Retransmitted};
use brisk_proto::{Config, EndpointConfig, RetransmitCause, Time};
use brisk_sim::{Fate, PacketRecord, Sim};
use indicatif::ProgressBar;

fn run(
    preset: &str,
    set: &str,
    interval: &str,
    delay: &str,
    drops: &str,
    messages: u32,
) -> Vec<Record> {
    let text = format!(
        r#"
name = "t"
title = "T"
source = "test"
method = "flow"
statistic = "mean-ci95"
figure = "retransmission-table"
impairments = ["drop-data {drops}"]
[topology]
kind = "point-to-point"
bandwidth = "100Mbit"
delay = "{delay}"
[traffic]
kind = "periodic"
interval = "{interval}"
messages = {messages}
message_size = 100
[[variants]]
name = "v"
preset = "{preset}"
set = {{ {set} }}
"#
    );
    let exp = Experiment::parse(Path::new("t.toml"), &text).unwrap();
    let (records, totals) = runner::run(&exp, 1, &ProgressBar::hidden());
    assert_eq!(totals.incomplete, 0);
    records
}

/// (lost?, cause) -> delays, ms.
fn first_rtx(records: &[Record]) -> BTreeMap<(bool, String), Vec<f64>> {
    let mut out: BTreeMap<(bool, String), Vec<f64>> = BTreeMap::new();
    for r in records {
        if let Some(c) = r.metric.strip_prefix("lost_first_rtx_ms_") {
            out.entry((true, c.into())).or_default().push(r.value);
        } else if let Some(c) = r.metric.strip_prefix("spurious_first_rtx_ms_") {
            out.entry((false, c.into())).or_default().push(r.value);
        }
    }
    out
}

fn metric(records: &[Record], m: &str) -> Vec<f64> {
    records
        .iter()
        .filter(|r| r.metric == m)
        .map(|r| r.value)
        .collect()
}

#[test]
fn one_dropped_chunk_recovered_by_t3_gives_one_delay_and_the_spurious_ones_apart() {
    // A thin stream over a 300 ms RTT that never fast-retransmits: when T3
    // fires for the lost chunk, the chunks sent in the last RTT are still in
    // flight and E3 resends them too.
    let records = run(
        "lksctp-2.6.15",
        "fast_retransmit_threshold = 100",
        "250ms",
        "150ms",
        "3",
        40,
    );
    assert_eq!(metric(&records, "lost_chunks"), [1.0]);
    let rtx = first_rtx(&records);
    let lost: Vec<_> = rtx.iter().filter(|(k, _)| k.0).collect();
    assert_eq!(lost.len(), 1, "{rtx:?}");
    let ((_, cause), delays) = lost[0];
    assert_eq!(cause, "t3-timeout", "{rtx:?}");
    assert_eq!(delays.len(), 1);
    assert!(delays[0] >= 1000.0, "RTO.Min is 1 s: {delays:?}");
    // The spurious resends are there, counted apart, and the plain first
    // retransmission metric (which cannot tell them apart) counts them all.
    let spurious: usize = rtx.iter().filter(|(k, _)| !k.0).map(|(_, v)| v.len()).sum();
    assert!(spurious >= 1, "{rtx:?}");
    let all = records
        .iter()
        .filter(|r| r.metric.starts_with("first_rtx_delay_ms_"))
        .count();
    assert_eq!(all, 1 + spurious);
}

#[test]
fn one_dropped_chunk_recovered_by_fast_retransmit_has_that_cause() {
    // Messages every 20 ms over a 20 ms RTT: three later packets report the
    // gap long before RTO.Min.
    let records = run("rfc9260", "", "20ms", "10ms", "10", 60);
    assert_eq!(metric(&records, "lost_chunks"), [1.0]);
    let rtx = first_rtx(&records);
    assert_eq!(rtx.len(), 1, "{rtx:?}");
    let ((lost, cause), delays) = rtx.iter().next().unwrap();
    assert!(*lost);
    assert_eq!(cause, "fast-retransmit");
    assert_eq!(delays.len(), 1);
    assert!(delays[0] < 200.0, "{delays:?}");
    // The same delay read off the wire, as the emulator reads a real stack's.
    assert_eq!(metric(&records, runner::REPAIR), delays.clone());
}

#[test]
fn a_lost_chunk_bundled_behind_the_one_t3_expired_for_is_t3_bundled() {
    let records = run("lksctp-2.6.15", "", "250ms", "50ms", "3 4", 40);
    assert_eq!(metric(&records, "lost_chunks"), [2.0]);
    let rtx = first_rtx(&records);
    let lost: Vec<(&str, usize)> = rtx
        .iter()
        .filter(|(k, _)| k.0)
        .map(|(k, v)| (k.1.as_str(), v.len()))
        .collect();
    assert_eq!(lost, [(T3_BUNDLED, 1), ("t3-timeout", 1)], "{rtx:?}");
}

/// Two host ids of a simulator (records name their ends by them).
fn hosts() -> (brisk_sim::HostId, brisk_sim::HostId) {
    let mut sim = Sim::new(1);
    let a = sim.add_host(
        "10.0.0.1:9899".parse().unwrap(),
        EndpointConfig::default(),
        Box::new(Receiver::new(
            "10.0.0.2:9899".parse().unwrap(),
            Config::rfc9260(),
            0,
        )),
    );
    let b = sim.add_host(
        "10.0.0.2:9899".parse().unwrap(),
        EndpointConfig::default(),
        Box::new(Receiver::new(
            "10.0.0.1:9899".parse().unwrap(),
            Config::rfc9260(),
            0,
        )),
    );
    (a, b)
}

fn packet(
    src: brisk_sim::HostId,
    dst: brisk_sim::HostId,
    tsns: &[u32],
    fate: Fate,
) -> PacketRecord {
    PacketRecord {
        entered: Time::ZERO,
        src,
        dst,
        ordinal: 1,
        data_ordinal: Some(1),
        size: 100,
        data_tsns: tsns.to_vec(),
        fate,
    }
}

fn sent(corrupted: bool) -> Fate {
    Fate::Sent {
        start: Time::ZERO,
        arrival: Time::ZERO,
        corrupted,
        duplicated: false,
        reordered: false,
    }
}

#[test]
fn lost_means_the_first_carrier_on_some_link_of_the_path_was_dropped_or_corrupted() {
    let (s, r) = hosts();
    // Access link: TSN 1 dropped there, TSN 2 arrives, TSN 3 corrupted.
    let access = vec![
        packet(s, r, &[1], Fate::ImpairmentDrop),
        packet(s, r, &[2], sent(false)),
        packet(s, r, &[3], sent(true)),
        // The retransmissions of 1 and 3 arrive.
        packet(s, r, &[1, 3], sent(false)),
        // Another sender's dropped packet is none of ours.
        packet(r, s, &[9], Fate::QueueDrop),
    ];
    // Bottleneck: 1 first appears as its (delivered) retransmission, 2 is
    // queue-dropped, 4 arrives; a later drop of 2's resend does not matter.
    let bottleneck = vec![
        packet(s, r, &[2], Fate::QueueDrop),
        packet(s, r, &[1, 4], sent(false)),
        packet(s, r, &[2], Fate::ImpairmentDrop),
    ];
    let lost = lost_tsns(&[&access, &bottleneck], s);
    assert_eq!(lost, HashSet::from([1, 2, 3]));
    assert!(lost_tsns(&[&access], r).contains(&9));
}

#[test]
fn the_head_of_a_t3_expiry_is_its_lowest_tsn_even_across_the_wrap() {
    let at = |ms| Time::from_millis(ms);
    let rtx = |tsn: u32, cause: RetransmitCause, t, transmissions| Retransmitted {
        unit: tsn,
        cause: cause.name(),
        at: at(t),
        first_sent_at: at(100),
        transmissions,
    };
    let events = [
        // One expiry at 1100 ms resends u32::MAX, 0 and 1 (in that TSN order).
        rtx(0, RetransmitCause::T3Timeout, 1100, 2),
        rtx(u32::MAX, RetransmitCause::T3Timeout, 1100, 2),
        rtx(1, RetransmitCause::T3Timeout, 1100, 2),
        // A fast retransmission, and a second retransmission (not a first).
        rtx(5, RetransmitCause::FastRetransmit, 400, 2),
        rtx(0, RetransmitCause::T3Timeout, 3100, 3),
    ];
    let lost = HashSet::from([u32::MAX, 1, 5]);
    let got = first_retransmissions(&events, &lost);
    assert_eq!(
        got,
        [
            (T3_BUNDLED, false, 1000.0),
            ("t3-timeout", true, 1000.0),
            (T3_BUNDLED, true, 1000.0),
            ("fast-retransmit", true, 300.0),
        ]
    );
}

#[test]
fn the_repair_delay_runs_from_a_lost_units_first_copy_to_its_second_on_the_link() {
    let (s, r) = hosts();
    let at = |ms: u64, p: PacketRecord| PacketRecord {
        entered: Time::from_millis(ms),
        ..p
    };
    let log = vec![
        at(0, packet(s, r, &[1], Fate::ImpairmentDrop)),
        at(5, packet(s, r, &[2], sent(false))),
        at(7, packet(r, s, &[1], sent(false))), // the other direction's unit 1
        at(40, packet(s, r, &[1, 3], sent(false))), // 1 again, 40 ms on
        at(90, packet(s, r, &[1], sent(false))), // a third copy: not counted
        at(95, packet(s, r, &[2], sent(false))), // 2 again, but 2 was not lost
    ];
    let lost = HashSet::from([1, 7]);
    assert_eq!(repair_delays(&log, s, &lost), [40.0]);
}
