//! Traffic kinds, metrics and the dumbbell, through the runner.

use std::path::Path;

use brisk_lab::experiment::{Experiment, Traffic, parse_trace};
use brisk_lab::runner::{self, Record};
use indicatif::ProgressBar;

fn experiment(traffic: &str, topology: &str, extra: &str) -> Experiment {
    Experiment::parse(
        Path::new("t.toml"),
        &experiment_text(traffic, topology, extra),
    )
    .unwrap()
}

fn experiment_text(traffic: &str, topology: &str, extra: &str) -> String {
    format!(
        r#"
name = "t"
title = "T"
source = "test"
method = "flow"
statistic = "mean-ci95"
figure = "summary-vs-delay"
replications = 2
{extra}
[topology]
{topology}
[traffic]
{traffic}
[[variants]]
name = "a"
preset = "rfc9260"
[[variants]]
name = "b"
preset = "lksctp-2.6.15"
"#
    )
}

fn values<'a>(records: &'a [Record], metric: &'a str) -> impl Iterator<Item = &'a Record> + 'a {
    records.iter().filter(move |r| r.metric == metric)
}

#[test]
fn two_identical_flows_share_a_dumbbell_bottleneck_about_evenly() {
    let exp = experiment(
        "kind = \"bulk\"\nmessages = 400\nmessage_size = 1000",
        "kind = \"dumbbell\"\nflows = 2\nbandwidth = \"5Mbit\"\ndelay = \"10ms\"\nqueue_packets = 50",
        "",
    );
    let (records, totals) = runner::run(&exp, 2, &ProgressBar::hidden());
    assert_eq!(totals.incomplete, 0);
    let shares: Vec<f64> = values(&records, "share_pct")
        .filter(|r| r.variant == "a" && r.replication == 0)
        .map(|r| r.value)
        .collect();
    assert_eq!(shares.len(), 2);
    assert!((shares[0] + shares[1] - 100.0).abs() < 1e-9);
    assert!(
        shares.iter().all(|s| (30.0..70.0).contains(s)),
        "{shares:?}"
    );
    // Goodput of each flow is bounded by the bottleneck.
    for r in values(&records, "goodput_kbps") {
        assert!(r.value > 100.0 && r.value < 5000.0, "{r:?}");
    }
}

#[test]
fn flow_variants_put_different_protocol_variants_on_one_bottleneck() {
    let exp = experiment(
        "kind = \"bulk\"\nmessages = 200\nmessage_size = 1000",
        "kind = \"dumbbell\"\nflows = 2\nflow_variants = [\"a\", \"b\"]\nbandwidth = \"5Mbit\"\ndelay = \"10ms\"",
        "",
    );
    let (records, _) = runner::run(&exp, 2, &ProgressBar::hidden());
    let flows: Vec<(u32, String)> = values(&records, "share_pct")
        .filter(|r| r.replication == 0)
        .map(|r| (r.flow, r.variant.clone()))
        .collect();
    assert!(
        flows.contains(&(0, "a".into())) && flows.contains(&(1, "b".into())),
        "{flows:?}"
    );
}

#[test]
fn a_periodic_thin_stream_under_loss_reports_owd_variance_and_first_retransmission_delays() {
    let exp = experiment(
        "kind = \"periodic\"\ninterval = \"250ms\"\nmessages = 200\nmessage_size = 100",
        "kind = \"point-to-point\"\nbandwidth = \"1Mbit\"\ndelay = \"50ms\"",
        "impairments = [\"bernoulli 0.05\"]",
    );
    let (records, totals) = runner::run(&exp, 2, &ProgressBar::hidden());
    assert_eq!(totals.incomplete, 0);
    let owd: Vec<f64> = values(&records, "owd_mean_ms").map(|r| r.value).collect();
    assert!(owd.iter().all(|v| *v > 50.0), "{owd:?}");
    assert!(values(&records, "owd_variance_ms2").all(|r| r.value > 0.0));
    let delays: Vec<f64> = records
        .iter()
        .filter(|r| r.metric.starts_with("first_rtx_delay_ms_"))
        .map(|r| r.value)
        .collect();
    assert!(
        !delays.is_empty(),
        "5% loss over 200 messages retransmits something"
    );
    // A thin stream recovers by T3 (RTO.Min 1 s); an expiry also resends the
    // chunks sent shortly before it (RFC 9260 6.3.3 E3), hence small delays too.
    assert!(delays.iter().all(|d| *d > 0.0));
    assert!(delays.iter().any(|d| *d >= 1000.0), "{delays:?}");
}

#[test]
fn trace_files_parse_with_units_and_name_the_bad_line() {
    assert_eq!(
        parse_trace("# t size\n0 100\n1.5s 200\n2500ms 300 # last\n").unwrap(),
        vec![
            (std::time::Duration::ZERO, 100, 0),
            (std::time::Duration::from_millis(1500), 200, 0),
            (std::time::Duration::from_millis(2500), 300, 0),
        ]
    );
    // A third column names the SCTP stream.
    assert_eq!(
        parse_trace(
            "0 1048576 1
0 100 2
"
        )
        .unwrap(),
        vec![
            (std::time::Duration::ZERO, 1 << 20, 1),
            (std::time::Duration::ZERO, 100, 2),
        ]
    );
    assert_eq!(
        parse_trace(
            "0 100
0 100 70000
"
        )
        .unwrap_err()
        .0,
        2
    );
    assert_eq!(parse_trace("0 100\nsoon 5\n").unwrap_err().0, 2);
    assert!(
        parse_trace("0 4\n").is_err(),
        "messages carry an 8-byte number"
    );
    let dir = std::env::temp_dir().join(format!("brisk-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("trace.txt"), "0 100\n0.1 100\n").unwrap();
    let exp_path = dir.join("exp.toml");
    std::fs::write(
        &exp_path,
        experiment_text(
            "kind = \"trace\"\nfile = \"trace.txt\"\nmessage_size = 100",
            "kind = \"point-to-point\"\nbandwidth = \"1Mbit\"\ndelay = \"1ms\"",
            "",
        ),
    )
    .unwrap();
    let exp = Experiment::load(&exp_path).unwrap();
    assert_eq!(
        exp.traffic,
        Traffic::Trace {
            entries: vec![
                (std::time::Duration::ZERO, 100, 0),
                (std::time::Duration::from_millis(100), 100, 0)
            ]
        }
    );
    let (records, totals) = runner::run(&exp, 1, &ProgressBar::hidden());
    assert_eq!(totals.incomplete, 0);
    assert_eq!(
        values(&records, "owd_mean_ms").count(),
        4,
        "2 variants x 2 replications"
    );
    std::fs::write(dir.join("trace.txt"), "0 100\nlater 100\n").unwrap();
    let err = Experiment::load(&exp_path).unwrap_err().to_string();
    assert!(err.contains("trace.txt:2: `later` is not a time"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
