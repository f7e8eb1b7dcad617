//! The dual-homed topology through the parser and the runner, with Brisk
//! multi-homed: a black hole on the primary path makes the sender fail over
//! (at once with SCTP-PF, by retransmissions to the secondary without it)
//! and lose nothing; with both paths black-holed there is no failover and
//! the metrics say why; a black hole on the secondary path changes nothing.

use std::path::{Path, PathBuf};
use std::time::Duration;

use brisk_lab::experiment::{End, Experiment, Start};
use brisk_lab::runner::{self, Record};
use indicatif::ProgressBar;

fn fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dual-homed.toml")
}

fn fixture_text() -> String {
    std::fs::read_to_string(fixture_path()).unwrap()
}

fn parse(text: &str) -> Experiment {
    Experiment::parse(Path::new("dh.toml"), text).unwrap()
}

fn err(text: &str) -> String {
    Experiment::parse(Path::new("dh.toml"), text)
        .unwrap_err()
        .to_string()
}

/// The fixture with its primary path's black hole moved to the secondary.
fn secondary_black_hole() -> String {
    let text = fixture_text();
    let hole = "black_hole = { from = { uniform = [\"2s\", \"3s\"] } }\n";
    assert!(text.contains(hole));
    text.replace(hole, "").replace(
        "[topology.secondary]\n",
        &format!("[topology.secondary]\n{hole}"),
    )
}

/// The fixture without the black hole.
fn no_black_hole() -> String {
    fixture_text().replace(
        "black_hole = { from = { uniform = [\"2s\", \"3s\"] } }\n",
        "",
    )
}

fn run(exp: &Experiment) -> Vec<Record> {
    runner::run(exp, 2, &ProgressBar::hidden()).0
}

fn values(records: &[Record], variant: &str, metric: &str) -> Vec<f64> {
    records
        .iter()
        .filter(|r| r.variant == variant && r.metric == metric)
        .map(|r| r.value)
        .collect()
}

/// (replication, message, MTT) of every message delivered.
fn deliveries(records: &[Record], variant: &str) -> Vec<(u32, Option<u64>, f64)> {
    records
        .iter()
        .filter(|r| r.variant == variant && r.metric == "mtt_ms")
        .map(|r| (r.replication, r.tsn, r.value))
        .collect()
}

#[test]
fn the_fixture_parses_into_two_paths_with_a_random_black_hole() {
    let exp = Experiment::load(&fixture_path()).unwrap();
    let d = exp.topology.dual_homed.as_ref().unwrap();
    assert!(exp.topology.dumbbell.is_none());
    assert_eq!(exp.topology.delay, Duration::from_millis(15));
    let hole = d.primary.black_hole.unwrap();
    assert_eq!(
        hole.from,
        Start::Uniform(Duration::from_secs(2), Duration::from_secs(3))
    );
    assert_eq!(hole.end, End::Never);
    assert_eq!(d.primary.delay, None, "the topology's, swept");
    assert_eq!(d.secondary.delay, Some(Duration::from_millis(50)));
    assert_eq!(d.secondary.impairments, ["bernoulli 0.01"]);
    assert_eq!(d.secondary.outages.len(), 1);
    assert_eq!(
        d.secondary.outages[0].end,
        End::After(Duration::from_millis(200))
    );
}

#[test]
fn with_the_primary_black_holed_the_sender_fails_over_and_loses_nothing() {
    let exp = Experiment::load(&fixture_path()).unwrap();
    let records = run(&exp);
    let starts = values(&records, "standard", "outage_start_ms");
    assert_eq!(starts.len(), 2, "one per replication");
    assert!(
        starts.iter().all(|s| (2000.0..=3000.0).contains(s)),
        "{starts:?}"
    );
    assert_ne!(starts[0], starts[1], "drawn per replication");
    assert_eq!(
        values(&records, "signaling", "outage_start_ms"),
        starts,
        "every variant meets the same outage"
    );
    for v in ["standard", "signaling"] {
        assert_eq!(values(&records, v, "failed_over"), [1.0, 1.0], "{v}");
        assert_eq!(values(&records, v, "messages_lost"), [0.0, 0.0], "{v}");
        assert_eq!(values(&records, v, "messages_duplicated"), [0.0, 0.0]);
        // At most the one message whose SACK the black hole ate: the first
        // DATA is SACKed at once (RFC 9260 5.1), so the 4th of each burst
        // waits for a delayed SACK, which the dead primary may swallow.
        let needless = values(&records, v, "needless_retransmissions");
        assert!(needless.iter().all(|&n| n <= 1.0), "{v}: {needless:?}");
        assert!(
            values(&records, v, "bytes_sent_secondary")
                .iter()
                .all(|&b| b > 80.0 * 200.0 / 4.0),
            "{v}"
        );
    }
    // RFC 9260 timers (RTO.Min 1 s): the first message delivered over the
    // secondary is a retransmission after one RTO, from the oldest message
    // not yet acknowledged (which may be the last of the burst before the
    // outage, up to one 200 ms gap earlier); new data stays on the primary
    // (Path.Max.Retrans 5 takes 63 s), so every message written after the
    // outage is caught in the failover.
    let standard = values(&records, "standard", "failover_ms");
    assert!(
        standard.iter().all(|&f| (800.0..1300.0).contains(&f)),
        "{standard:?}"
    );
    assert!(
        values(&records, "standard", "switch_ms")
            .iter()
            .all(|x| x.is_nan())
    );
    let caught = values(&records, "standard", "failover_messages");
    assert!(caught.iter().all(|&n| n >= 40.0), "{caught:?}");
    // Signaling with SCTP-PF (RTO.Min 100 ms, PFMR 0): data moves on the
    // first timeout, and only the messages before it are caught.
    let signaling = values(&records, "signaling", "failover_ms");
    assert!(signaling.iter().all(|&f| f < 250.0), "{signaling:?}");
    let switch = values(&records, "signaling", "switch_ms");
    assert!(switch.iter().all(|&s| s < 250.0), "{switch:?}");
    assert_eq!(
        values(&records, "signaling", "failover_messages"),
        [4.0, 4.0]
    );
    let mtt = values(&records, "signaling", "failover_mtt_ms");
    assert!(mtt.iter().all(|&m| m < 2.0 * 100.0 + 30.0), "{mtt:?}");
}

#[test]
fn with_both_paths_black_holed_no_failover_is_reported() {
    // The secondary dies before the primary does: nothing is left.
    let text = fixture_text().replace(
        "[topology.secondary]\n",
        "[topology.secondary]\nblack_hole = { from = \"1500ms\" }\n",
    );
    let records = run(&parse(&text));
    for v in ["standard", "signaling"] {
        // No failover: NaN (never 0), with the reason recorded.
        let failover = values(&records, v, "failover_ms");
        assert_eq!(failover.len(), 2);
        assert!(failover.iter().all(|x| x.is_nan()), "{v}: {failover:?}");
        assert_eq!(values(&records, v, "failed_over"), [0.0, 0.0]);
        assert_eq!(
            values(&records, v, "no_failover_nothing_over_secondary"),
            [1.0, 1.0]
        );
        assert!(values(&records, v, "failover_mtt_ms").is_empty());
        // Deliveries stop at the outage: messages written after it are
        // never read (and once the association gives up, after
        // Association.Max.Retrans, the rest cannot be written at all).
        let lost = values(&records, v, "messages_lost");
        for (rep, lost) in lost.iter().enumerate() {
            let delivered = deliveries(&records, v)
                .iter()
                .filter(|d| d.0 == rep as u32)
                .count() as f64;
            assert!(delivered + lost <= 80.0, "{v} {rep}");
            assert!(*lost >= 1.0 && delivered <= 60.0, "{v} {rep}: {lost}");
        }
        assert_eq!(values(&records, v, "messages_duplicated"), [0.0, 0.0]);
    }
}

#[test]
fn with_the_black_hole_on_the_secondary_path_nothing_changes() {
    let plain = run(&parse(&no_black_hole()));
    let holed = run(&parse(&secondary_black_hole()));
    for v in ["standard", "signaling"] {
        let delivered = deliveries(&plain, v);
        assert_eq!(
            delivered.len(),
            160,
            "{v}: every message, both replications"
        );
        assert_eq!(deliveries(&holed, v), delivered, "{v}");
        assert_eq!(values(&holed, v, "messages_lost"), [0.0, 0.0]);
        assert_eq!(values(&plain, v, "messages_lost"), [0.0, 0.0]);
        // The primary has no outage: no failover to measure, and the
        // reason says so.
        assert_eq!(values(&holed, v, "no_failover_no_outage"), [1.0, 1.0]);
        assert!(values(&holed, v, "failover_ms").is_empty());
    }
}

#[test]
fn the_same_seed_gives_the_same_records() {
    let exp = parse(&secondary_black_hole().replace("replications = 2", "replications = 1"));
    let a = run(&exp);
    let b = run(&exp);
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}

/// The fixture with `old` replaced by `new` (which must be there).
fn with(old: &str, new: &str) -> String {
    let text = fixture_text();
    assert!(text.contains(old), "{old}");
    text.replace(old, new)
}

/// The 1-based line of the fixture holding `needle` once replaced.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

#[test]
fn a_bad_path_value_names_the_file_line_key_and_expectation() {
    let text = with("delay = \"50ms\"", "delay = \"soon\"");
    assert_eq!(
        err(&text),
        format!(
            "dh.toml:{}: key `topology.secondary.delay`: expected a non-negative duration \
             such as 15ms or 1.5s, found `soon`",
            line_of(&text, "\"soon\"")
        )
    );
    let text = with(
        "[topology.secondary]\n",
        "[topology.secondary]\nbandwidth = \"-1kbit\"\n",
    );
    assert_eq!(
        err(&text),
        format!(
            "dh.toml:{}: key `topology.secondary.bandwidth`: expected a positive rate such as \
             2000kbit or 2Mbit, found `-1kbit`",
            line_of(&text, "-1kbit")
        )
    );
    let text = with(
        "[topology.secondary]\n",
        "[topology.secondary]\nqueue_packets = 0\n",
    );
    assert_eq!(
        err(&text),
        format!(
            "dh.toml:{}: key `topology.secondary.queue_packets`: expected at least 1 packet, found 0",
            line_of(&text, "queue_packets = 0")
        )
    );
}

#[test]
fn a_bad_outage_names_the_file_line_key_and_expectation() {
    let text = with("[\"2s\", \"3s\"]", "[\"3s\", \"2s\"]");
    assert_eq!(
        err(&text),
        format!(
            "dh.toml:{}: key `topology.primary.black_hole.from.uniform`: expected [LOW, HIGH] \
             with LOW at most HIGH, found [`3s`, `2s`]",
            line_of(&text, "black_hole")
        )
    );
    let text = with("[\"2s\", \"3s\"] }", "[\"2s\", \"3s\"] }, until = \"2.5s\"");
    assert_eq!(
        err(&text),
        format!(
            "dh.toml:{}: key `topology.primary.black_hole.until`: expected a time after the \
             latest start (3s), found `2.5s`",
            line_of(&text, "black_hole")
        )
    );
    let text = with(
        "{ from = \"1s\", duration = \"200ms\" }",
        "{ from = \"1s\" }",
    );
    assert_eq!(
        err(&text),
        format!(
            "dh.toml:{}: key `topology.secondary.outages[0].until`: expected an end: `until` \
             (a time) or `duration` (an outage window ends; a `black_hole` need not), found neither",
            line_of(&text, "outages")
        )
    );
    let text = with(
        "duration = \"200ms\"",
        "duration = \"200ms\", until = \"2s\"",
    );
    let e = err(&text);
    assert!(
        e.starts_with(&format!(
            "dh.toml:{}: key `topology.secondary.outages[0].duration`: expected either `until` \
             or `duration`",
            line_of(&text, "outages")
        )),
        "{e}"
    );
    let text = with("{ from = \"1s\"", "{ from = \"later\"");
    assert_eq!(
        err(&text),
        format!(
            "dh.toml:{}: key `topology.secondary.outages[0].from`: expected a non-negative \
             duration such as 15ms or 1.5s, found `later`",
            line_of(&text, "later")
        )
    );
}

#[test]
fn a_bad_pattern_line_on_a_path_names_its_line() {
    let text = with(
        "[\"bernoulli 0.01\"]",
        "[\"bernoulli 0.01\", \"bernoulli lots\"]",
    );
    let e = err(&text);
    assert!(
        e.starts_with(&format!(
            "dh.toml:{}: key `topology.secondary.impairments[1]`: ",
            line_of(&text, "bernoulli lots")
        )),
        "{e}"
    );
    assert!(e.ends_with("in `bernoulli lots`"), "{e}");
}

#[test]
fn paths_belong_to_a_dual_homed_topology_and_dumbbell_keys_do_not() {
    let text = with("kind = \"dual-homed\"", "kind = \"point-to-point\"");
    assert_eq!(
        err(&text),
        format!(
            "dh.toml:{}: key `topology.primary`: expected a dual-homed topology (kind = \
             \"dual-homed\"): paths exist only there, found kind `point-to-point`",
            line_of(&text, "[topology.primary]")
        )
    );
    let e = err(&with(
        "queue_packets = 100",
        "queue_packets = 100\nflows = 2",
    ));
    assert!(
        e.starts_with("dh.toml: key `topology.flows`: expected nothing: a dual-homed topology"),
        "{e}"
    );
    // An unknown key in a path: the toml parser's message, with its line.
    let text = with("delay = \"50ms\"", "delay = \"50ms\"\nlatency = \"1ms\"");
    let e = err(&text);
    assert!(e.starts_with("dh.toml: "), "{e}");
    assert!(e.contains("unknown field `latency`"), "{e}");
    assert!(
        e.contains(&format!("line {}, column", line_of(&text, "latency = "))),
        "{e}"
    );
    let e = err(&with("kind = \"dual-homed\"", "kind = \"triple-homed\""));
    assert!(
        e.contains("expected \"point-to-point\", \"dumbbell\" or \"dual-homed\""),
        "{e}"
    );
}
