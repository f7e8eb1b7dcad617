//! Mutation tests of the application case's simulated twin
//! (`experiments/webrtc-app.toml`, issue 28): a protocol mechanism switched
//! off, or a knob set wrong, must make one of the twin's checks fail.
//!
//! Each test is one line, [`off_must_fail`]: the twin cut to a few points
//! and runs (a debug build runs it in seconds), the check named by its
//! label's start, a variant's knobs changed. The helper asserts that the
//! check holds on the cut twin as shipped and fails with the change. Checks
//! that wait for a mechanism (`awaits`) are judged as plain checks here, so
//! that one that passes today is guarded like any other.
//!
//! To guard a new knob: pick a check it makes pass (`never_worse` against
//! signaling or rfc9260, a goal against the TCP model) and the points where
//! it does, and add `off_must_fail(cut, "brisk-low-latency", "KNOB = false",
//! "Never worse: ...")`.

#[allow(dead_code)] // each test file uses some of it
mod common;

use brisk_lab::experiment::Experiment;
use brisk_lab::figures::{self, Outcome};
use brisk_lab::runner;
use common::mutated;
use indicatif::ProgressBar;

const TWIN: &str = "webrtc-app.toml";

/// Which of the twin's points and how many runs.
#[derive(Debug, Clone, Copy)]
struct Cut {
    /// `[sweep] message_size`, as TOML.
    sizes: &'static str,
    /// `[sweep] loss`, as TOML.
    losses: &'static str,
    replications: u32,
}

/// 64-byte messages at 2, 5 and 10% loss, 8 runs.
const SMALL: Cut = Cut {
    sizes: "[64]",
    losses: "[0.02, 0.05, 0.10]",
    replications: 8,
};

/// The twin cut to `cut`, `variant`'s knobs extended by `set` (the body of
/// an inline table, e.g. `rto_min = "3s"`; empty: unchanged), its checks
/// those whose label starts with `check`, none of them awaiting anything.
fn twin(cut: Cut, variant: &str, set: &str, check: &str) -> Experiment {
    let header = format!("name = \"{variant}\"\n");
    let text = std::fs::read_to_string(common::experiment_path(TWIN)).unwrap();
    let at = text
        .find(&header)
        .unwrap_or_else(|| panic!("no variant `{variant}`"));
    // The variant's block: its name line, preset line and any `set` line.
    let block_end = text[at..].find("\n\n").map_or(text.len(), |e| at + e + 1);
    let block = &text[at..block_end];
    let changed = if set.is_empty() {
        block.to_owned()
    } else if let Some(i) = block.find("set = { ") {
        let i = i + "set = { ".len();
        format!("{}{set}, {}", &block[..i], &block[i..])
    } else {
        format!("{block}set = {{ {set} }}\n")
    };
    let replications = "replications = 40";
    let mut exp = mutated(
        TWIN,
        &[
            (block, &changed),
            (
                "message_size = [64, 1024]",
                &format!("message_size = {}", cut.sizes),
            ),
            (
                "loss = [0.0, 0.02, 0.05, 0.10]",
                &format!("loss = {}", cut.losses),
            ),
            (
                replications,
                &format!("replications = {}", cut.replications),
            ),
        ],
    );
    exp.reference.retain(|r| r.label.starts_with(check));
    assert_eq!(exp.reference.len(), 1, "checks starting `{check}`");
    for r in &mut exp.reference {
        r.awaits = None;
    }
    exp
}

/// The outcome of the one check of `exp`.
fn outcome(exp: &Experiment) -> (String, Result<Outcome, String>) {
    let (records, _) = runner::run(exp, 2, &ProgressBar::hidden());
    let mut checks = figures::checks(exp, &records);
    assert_eq!(checks.len(), 1, "{checks:?}");
    checks.remove(0)
}

/// `variant` with `set` (knobs, as in an inline table) must fail the check
/// whose label starts with `check`, which the twin as shipped passes at
/// `cut`'s points.
fn off_must_fail(cut: Cut, variant: &str, set: &str, check: &str) {
    let (label, before) = outcome(&twin(cut, variant, "", check));
    assert!(
        matches!(before, Ok(Outcome::Agrees | Outcome::KnownGap)),
        "{label}: unmutated it does not hold: {before:?}"
    );
    let (label, after) = outcome(&twin(cut, variant, set, check));
    assert!(
        !matches!(after, Ok(Outcome::Agrees | Outcome::KnownGap)),
        "{label}: still holds with {variant} {{ {set} }}: {after:?}"
    );
}

const NEVER_WORSE_THAN_SIGNALING: &str =
    "Never worse: brisk-low-latency's 99th percentile at most brisk-signaling's";
const NEVER_WORSE_THAN_RFC9260: &str =
    "Never worse: brisk-low-latency's 99th percentile at most brisk-rfc9260's";
const BYTES_GOAL: &str = "Goal: low-latency's bytes per message";

#[test]
fn low_latency_without_lost_retransmission_detection_is_worse_than_signaling() {
    // A lost fast retransmission waits for T3 at RTO.Min 1 s.
    off_must_fail(
        SMALL,
        "brisk-low-latency",
        "lost_retransmission_detection = false",
        NEVER_WORSE_THAN_SIGNALING,
    );
}

#[test]
fn low_latency_with_a_slower_rto_min_is_worse_than_rfc9260() {
    // Above RFC 9260's RTO.Min of 1 s (RFC 9260 6.3.1 C6) every T3 recovery
    // is later than rfc9260's.
    off_must_fail(
        SMALL,
        "brisk-low-latency",
        "rto_min = \"3s\", rto_initial = \"3s\", lost_retransmission_detection = false",
        NEVER_WORSE_THAN_RFC9260,
    );
}

#[test]
fn low_latency_bundling_without_a_byte_budget_fails_the_bytes_goal() {
    // Thin mode at any flight: every packet carries every unacknowledged
    // chunk in front of the new one (seed 001 4.4), far past 2x TCP's bytes.
    off_must_fail(
        SMALL,
        "brisk-low-latency",
        "thin_threshold = 1000",
        BYTES_GOAL,
    );
}
