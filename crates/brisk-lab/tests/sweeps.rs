//! The sweep dimensions (message size, loss, packet errors, message rate, IP
//! MTU), one-at-a-time sweeps, per-endpoint and per-flow configs, and the new
//! traffic keys: parsing, and what the runner makes of them.

use std::path::Path;
use std::time::Duration;

use brisk_lab::experiment::{Combine, Dim, Experiment, Packing, PointIdx, Traffic, Value};
use brisk_lab::runner::{self, Record};
use indicatif::ProgressBar;

fn text(traffic: &str, variants: &str, extra: &str) -> String {
    format!(
        r#"
name = "t"
title = "T"
source = "test"
method = "flow"
statistic = "median"
figure = "goodput-vs-size"
{extra}
[topology]
kind = "point-to-point"
bandwidth = "10Mbit"
delay = "10ms"
[traffic]
{traffic}
{variants}
"#
    )
}

const ONE_VARIANT: &str = "[[variants]]\nname = \"a\"\npreset = \"rfc9260\"\n";

fn parse(t: &str) -> Experiment {
    Experiment::parse(Path::new("t.toml"), t).unwrap()
}

fn err(t: &str) -> String {
    Experiment::parse(Path::new("t.toml"), t)
        .unwrap_err()
        .to_string()
}

fn values<'a>(records: &'a [Record], metric: &'a str) -> impl Iterator<Item = &'a Record> + 'a {
    records.iter().filter(move |r| r.metric == metric)
}

const PERIODIC: &str =
    "kind = \"periodic\"\ninterval = \"100ms\"\nmessages = 20\nmessage_size = 100";

#[test]
fn every_sweep_dimension_parses_and_a_product_crosses_them_all() {
    let e = parse(&text(
        PERIODIC,
        ONE_VARIANT,
        "[sweep]\nmessage_size = [100, 200, 300]\nloss = [0.0, 0.01]\ncorrupt = [0.02]\nrate = [10, 20.5]\nmtu = [1500]",
    ));
    let sizes = [100, 200, 300].map(|m| Value::MessageSize(Some(m)));
    assert_eq!(e.sweep.values(Dim::MessageSize), sizes);
    let losses = [0.0, 0.01].map(|p| Value::Loss(Some(p)));
    assert_eq!(e.sweep.values(Dim::Loss), losses);
    assert_eq!(e.sweep.values(Dim::Corrupt), [Value::Corrupt(Some(0.02))]);
    let rates = [10.0, 20.5].map(|r| Value::Rate(Some(r)));
    assert_eq!(e.sweep.values(Dim::Rate), rates);
    assert_eq!(e.sweep.values(Dim::Mtu), [Value::Mtu(Some(1500))]);
    assert_eq!(e.sweep.combine, Combine::Product);
    assert_eq!(e.points().len(), 3 * 2 * 2);
    assert_eq!(e.dim_len(Dim::MessageSize), 3);
    // A point's values, and the traffic at it: the rate sets the interval.
    let p = e.point(
        &PointIdx::default()
            .with(Dim::MessageSize, 2)
            .with(Dim::Rate, 1),
    );
    assert_eq!((p.message_size, p.rate), (Some(300), Some(20.5)));
    match e.traffic.at(p.message_size, p.rate) {
        Traffic::Periodic {
            interval,
            message_size,
            ..
        } => {
            assert_eq!(message_size, 300);
            assert_eq!(interval, Duration::from_secs_f64(1.0 / 20.5));
        }
        other => panic!("{other:?}"),
    }
    // Without a sweep every dimension has one value: not set.
    let plain = parse(&text(PERIODIC, ONE_VARIANT, ""));
    assert_eq!(plain.points(), vec![PointIdx::default()]);
    assert_eq!(plain.sweep.values(Dim::Loss), [Value::Loss(None)]);
}

#[test]
fn one_at_a_time_varies_each_dimension_alone_around_the_base_and_crosses_the_axis() {
    let e = parse(&text(
        PERIODIC,
        ONE_VARIANT,
        "[sweep]\nmessage_size = [100, 200, 300]\ndelay = [\"100ms\", \"50ms\"]\nloss = [0.01, 0.02, 0.05]\ncombine = \"one-at-a-time\"\naxis = \"message_size\"",
    ));
    let points = e.points();
    // Per size: the base, the other delay, the two other losses.
    assert_eq!(points.len(), 3 * (1 + 1 + 2));
    assert!(
        points
            .iter()
            .all(|p| p.get(Dim::Delay) == 0 || p.get(Dim::Loss) == 0)
    );
    for size in 0..3 {
        let at_size = points.iter().filter(|p| p.get(Dim::MessageSize) == size);
        assert_eq!(at_size.count(), 4);
    }
    // Without an axis, message size is varied alone too.
    let e = parse(&text(
        PERIODIC,
        ONE_VARIANT,
        "[sweep]\nmessage_size = [100, 200, 300]\nloss = [0.01, 0.02]\ncombine = \"one-at-a-time\"",
    ));
    assert_eq!(e.points().len(), 1 + 2 + 1);
}

#[test]
fn zip_takes_the_ith_values_together_and_crosses_the_axis() {
    let e = parse(&text(
        PERIODIC,
        ONE_VARIANT,
        "[sweep]\ndelay = [\"5ms\", \"25ms\"]\nloss = [0.01, 0.05]\nmessage_size = [100]\ncombine = \"zip\"",
    ));
    let points = e.points();
    assert_eq!(points.len(), 2);
    assert!(
        points
            .iter()
            .all(|p| p.get(Dim::Delay) == p.get(Dim::Loss) && p.get(Dim::MessageSize) == 0)
    );
    assert_eq!(e.point(&points[1]).delay, Duration::from_millis(25));
    let e = parse(&text(
        PERIODIC,
        ONE_VARIANT,
        "[sweep]\ndelay = [\"5ms\", \"25ms\"]\nloss = [0.01, 0.05]\nrate = [10, 20, 30]\ncombine = \"zip\"\naxis = \"rate\"",
    ));
    assert_eq!(e.points().len(), 2 * 3);
    // Lists of different lengths cannot be zipped.
    let e = err(&text(
        PERIODIC,
        ONE_VARIANT,
        "[sweep]\ndelay = [\"5ms\", \"25ms\"]\nloss = [0.01, 0.02, 0.05]\ncombine = \"zip\"",
    ));
    assert!(
        e.contains("key `sweep.loss`: expected as many values as sweep.delay (2)"),
        "{e}"
    );
}

#[test]
fn bad_sweep_values_are_named() {
    let e = err(&text(PERIODIC, ONE_VARIANT, "[sweep]\nloss = [1.5]"));
    assert!(
        e.contains("key `sweep.loss`: expected probabilities from 0 to 1, found 1.5"),
        "{e}"
    );
    let e = err(&text(PERIODIC, ONE_VARIANT, "[sweep]\nmessage_size = [4]"));
    assert!(e.contains("key `sweep.message_size`"), "{e}");
    let e = err(&text(PERIODIC, ONE_VARIANT, "[sweep]\nrate = []"));
    assert!(
        e.contains("key `sweep.rate`: expected at least one value"),
        "{e}"
    );
    let e = err(&text(PERIODIC, ONE_VARIANT, "[sweep]\nmtu = [100]"));
    assert!(e.contains("key `sweep.mtu`"), "{e}");
    let e = err(&text(
        "kind = \"bulk\"\nmessages = 5\nmessage_size = 100",
        ONE_VARIANT,
        "[sweep]\nrate = [10]",
    ));
    assert!(
        e.contains("key `sweep.rate`: expected periodic traffic"),
        "{e}"
    );
    let e = err(&text(
        PERIODIC,
        ONE_VARIANT,
        "[sweep]\nloss = [0.1]\naxis = \"delay\"",
    ));
    assert!(e.contains("key `sweep.axis`"), "{e}");
    let e = err(&text(
        PERIODIC,
        ONE_VARIANT,
        "[sweep]\ncombine = \"sometimes\"",
    ));
    assert!(e.contains("combine"), "{e}");
}

#[test]
fn periodic_and_bulk_traffic_take_a_duration() {
    let e = parse(&text(
        "kind = \"periodic\"\ninterval = \"250ms\"\nduration = \"10s\"\njitter = \"2ms\"\nmessage_size = 100",
        ONE_VARIANT,
        "",
    ));
    assert!(matches!(
        e.traffic,
        Traffic::Periodic { messages: 40, duration: Some(_), jitter, .. } if jitter == Duration::from_millis(2)
    ));
    // The rate sweep recomputes the count from the duration.
    let e = parse(&text(
        "kind = \"periodic\"\nduration = \"2s\"\nmessage_size = 100",
        ONE_VARIANT,
        "[sweep]\nrate = [10, 100]",
    ));
    assert!(matches!(
        e.traffic.at(None, Some(100.0)),
        Traffic::Periodic { messages: 200, .. }
    ));
    let e = parse(&text(
        "kind = \"bulk\"\nduration = \"20s\"\nwarmup = \"5s\"\npacking = \"one-per-packet\"\nmessage_size = 100",
        ONE_VARIANT,
        "",
    ));
    assert_eq!(
        e.traffic,
        Traffic::Saturated {
            duration: Duration::from_secs(20),
            warmup: Duration::from_secs(5),
            message_size: 100,
            packing: Packing::OnePerPacket,
        }
    );
    let e = err(&text(
        "kind = \"bulk\"\nduration = \"5s\"\nwarmup = \"5s\"\nmessage_size = 100",
        ONE_VARIANT,
        "",
    ));
    assert!(
        e.contains("key `traffic.warmup`: expected less than traffic.duration"),
        "{e}"
    );
    let e = err(&text(
        "kind = \"bulk\"\nmessages = 5\nduration = \"5s\"\nmessage_size = 100",
        ONE_VARIANT,
        "",
    ));
    assert!(e.contains("either `messages` or `duration`"), "{e}");
}

#[test]
fn receiver_preset_and_receiver_set_configure_the_receiving_endpoint_only() {
    let e = parse(&text(
        PERIODIC,
        r#"
[[variants]]
name = "same"
preset = "lksctp-2.6.15"
set = { rto_min = "200ms", rto_initial = "200ms" }

[[variants]]
name = "no-delayed-sack"
preset = "lksctp-2.6.15"
set = { rto_min = "200ms", rto_initial = "200ms" }
receiver_set = { sack_freq = 1 }

[[variants]]
name = "thin-sender"
preset = "thin-stream"
receiver_preset = "lksctp-2.6.15"
receiver_set = { sack_delay = "100ms" }
"#,
        "",
    ));
    let [same, nds, thin] = &e.variants[..] else {
        panic!()
    };
    assert_eq!(
        same.config, same.receiver_config,
        "by default one config serves both"
    );
    // receiver_set applies on top of the sender's whole config.
    assert_eq!(
        (nds.config.sack_freq, nds.receiver_config.sack_freq),
        (2, 1)
    );
    assert_eq!(nds.receiver_config.rto_min, Duration::from_millis(200));
    // receiver_preset starts the receiver from another preset.
    assert!(thin.config.thin_fast_retransmit && !thin.receiver_config.thin_fast_retransmit);
    assert_eq!(thin.receiver_config.fast_retransmit_threshold, 4);
    assert_eq!(thin.receiver_config.sack_delay, Duration::from_millis(100));
    assert_eq!(
        thin.configs(0),
        (thin.config.clone(), thin.receiver_config.clone())
    );
    let e = err(&text(
        PERIODIC,
        "[[variants]]\nname = \"a\"\npreset = \"rfc9260\"\nreceiver_set = { sack_frequency = 1 }",
        "",
    ));
    assert!(
        e.contains("key `variants[0].receiver_set.sack_frequency`"),
        "{e}"
    );
    let e = err(&text(
        PERIODIC,
        "[[variants]]\nname = \"a\"\npreset = \"rfc9260\"\nreceiver_preset = \"turbo\"",
        "",
    ));
    assert!(e.contains("key `variants[0].receiver_preset`"), "{e}");
}

#[test]
fn a_receiver_without_delayed_sack_changes_what_the_sender_measures() {
    // One lost message in a thin stream: with delayed SACK the sender's RTT
    // samples carry the 200 ms SACK delay and its RTO is long; with a
    // receiver that SACKs every packet, RTO falls to RTO.Min.
    let e = parse(&text(
        "kind = \"periodic\"\ninterval = \"250ms\"\nmessages = 40\nmessage_size = 100",
        r#"
[[variants]]
name = "delayed"
preset = "rfc9260"
set = { rto_min = "100ms", rto_initial = "200ms" }

[[variants]]
name = "immediate"
preset = "rfc9260"
set = { rto_min = "100ms", rto_initial = "200ms" }
receiver_set = { sack_freq = 1 }
"#,
        "impairments = [\"drop-data 30\"]",
    ));
    let (records, totals) = runner::run(&e, 1, &ProgressBar::hidden());
    assert_eq!(totals.incomplete, 0);
    let delay = |v: &str| -> f64 {
        let d: Vec<f64> = records
            .iter()
            .filter(|r| r.variant == v && r.metric.starts_with("lost_first_rtx_ms_"))
            .map(|r| r.value)
            .collect();
        assert_eq!(d.len(), 1, "{v}: one lost chunk");
        d[0]
    };
    let (slow, fast) = (delay("delayed"), delay("immediate"));
    assert!(slow > 200.0, "{slow}");
    assert!(fast < 150.0, "{fast}");
}

#[test]
fn flow_set_overrides_one_flow_of_a_dumbbell_at_both_ends() {
    let t = r#"
name = "t"
title = "T"
source = "test"
method = "flow"
statistic = "median"
figure = "goodput-vs-size"
[topology]
kind = "dumbbell"
flows = 2
bandwidth = "10Mbit"
delay = "5ms"
access_impairments = [[], ["corrupt 0.5"]]
[traffic]
kind = "periodic"
interval = "100ms"
messages = 5
message_size = 100
[[variants]]
name = "one-pktdrop"
preset = "rfc9260"
flow_set = [{}, { pktdrop = true }]
"#;
    let e = parse(t);
    let v = &e.variants[0];
    assert!(!v.configs(0).0.pktdrop && !v.configs(0).1.pktdrop);
    assert!(v.configs(1).0.pktdrop && v.configs(1).1.pktdrop);
    let d = e.topology.dumbbell.as_ref().unwrap();
    assert_eq!(
        d.access_impairments,
        vec![vec![], vec!["corrupt 0.5".to_owned()]]
    );
    // Records carry the run's variant name; the flows are told apart by number.
    let (records, _) = runner::run(&e, 1, &ProgressBar::hidden());
    let lost: Vec<(u32, f64)> = values(&records, "lost_chunks")
        .map(|r| (r.flow, r.value))
        .collect();
    assert_eq!(lost.len(), 2);
    assert_eq!(lost[0], (0, 0.0), "flow 1's access link is clean");
    assert!(lost[1].1 > 0.0, "flow 2 loses on its access link: {lost:?}");
    assert!(records.iter().all(|r| r.variant == "one-pktdrop"));
    let e = err(&t.replace(
        "flow_set = [{}, { pktdrop = true }]",
        "flow_set = [{}, {}, {}]",
    ));
    assert!(e.contains("key `variants[0].flow_set`"), "{e}");
    let e = err(&t.replace("kind = \"dumbbell\"", "kind = \"point-to-point\""));
    assert!(e.contains("key `topology.access_impairments`"), "{e}");
}

#[test]
fn the_runner_applies_each_sweep_dimension() {
    // Rate and message size: 1 s at 10 and 20 messages per second, one packet each.
    let e = parse(&text(
        "kind = \"periodic\"\nduration = \"1s\"\nmessage_size = 100",
        ONE_VARIANT,
        "[sweep]\nrate = [10, 20]\nmessage_size = [100, 300]",
    ));
    let (records, totals) = runner::run(&e, 2, &ProgressBar::hidden());
    assert_eq!((totals.runs, totals.incomplete), (4, 0));
    let mut seen: Vec<(Option<usize>, Option<f64>, f64)> = values(&records, "data_packets")
        .map(|r| (r.message_size(), r.rate(), r.value))
        .collect();
    seen.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(
        seen,
        [
            (Some(100), Some(10.0), 10.0),
            (Some(100), Some(20.0), 20.0),
            (Some(300), Some(10.0), 10.0),
            (Some(300), Some(20.0), 20.0)
        ]
    );
    // Loss: nothing lost at 0, something at 0.3, and the record says which.
    let e = parse(&text(PERIODIC, ONE_VARIANT, "[sweep]\nloss = [0.0, 0.3]"));
    let (records, _) = runner::run(&e, 2, &ProgressBar::hidden());
    let lost: Vec<(Option<f64>, f64)> = values(&records, "lost_chunks")
        .map(|r| (r.loss(), r.value))
        .collect();
    assert_eq!(lost[0], (Some(0.0), 0.0));
    assert!(lost[1].0 == Some(0.3) && lost[1].1 > 0.0, "{lost:?}");
    // Packet errors: corrupted packets are lost too.
    let e = parse(&text(PERIODIC, ONE_VARIANT, "[sweep]\ncorrupt = [0.3]"));
    let (records, _) = runner::run(&e, 1, &ProgressBar::hidden());
    assert!(values(&records, "lost_chunks").all(|r| r.value > 0.0 && r.corrupt() == Some(0.3)));
    // MTU: 1200-byte messages fit a 1500-byte MTU, and need two packets at 1000.
    let e = parse(&text(
        "kind = \"periodic\"\ninterval = \"100ms\"\nmessages = 10\nmessage_size = 1200",
        ONE_VARIANT,
        "[sweep]\nmtu = [1500, 1000]",
    ));
    let (records, _) = runner::run(&e, 2, &ProgressBar::hidden());
    let per_message: Vec<(Option<usize>, f64)> = values(&records, "data_packets_per_message")
        .map(|r| (r.mtu(), r.value))
        .collect();
    assert_eq!(per_message, [(Some(1500), 1.0), (Some(1000), 2.0)]);
}

#[test]
fn a_saturated_sender_keeps_the_path_busy_one_message_per_packet_or_bundled() {
    // A 20 kB receive window keeps the path uncongested: no losses.
    let window =
        "[[variants]]\nname = \"a\"\npreset = \"rfc9260\"\nset = { receive_buffer = 20000 }\n";
    let run = |packing: &str| {
        let e = parse(&text(
            &format!(
                "kind = \"bulk\"\nduration = \"3s\"\nwarmup = \"1s\"\nmessage_size = 100\npacking = \"{packing}\""
            ),
            window,
            "",
        ));
        let (records, totals) = runner::run(&e, 1, &ProgressBar::hidden());
        assert_eq!(totals.incomplete, 0);
        let get = |m: &str| values(&records, m).map(|r| r.value).next().unwrap();
        assert_eq!(get("lost_chunks"), 0.0);
        (get("goodput_kbps"), get("data_packets_per_message"))
    };
    let (goodput, per_message) = run("one-per-packet");
    assert!(goodput > 100.0, "{goodput}");
    assert_eq!(per_message, 1.0);
    let (goodput, per_message) = run("bundle");
    assert!(goodput > 1000.0, "{goodput}");
    assert!(per_message < 0.2, "bundled: {per_message}");
}
