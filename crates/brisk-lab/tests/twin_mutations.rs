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

/// 64-byte messages without loss, 2 runs.
const CLEAN: Cut = Cut {
    sizes: "[64]",
    losses: "[0.0]",
    replications: 2,
};

/// The whole twin, as shipped: its seeds, so its p99 goals hold as they do
/// in `reproduce` (a cut twin draws other losses, and the goals' intervals
/// at 40 runs are wide enough that some draws fail them).
const WHOLE: Cut = Cut {
    sizes: "[64, 1024]",
    losses: "[0.0, 0.02, 0.05, 0.10]",
    replications: 40,
};

/// 1 KiB messages at 10% loss, 8 runs.
const KIB_AT_10_PERCENT: Cut = Cut {
    sizes: "[1024]",
    losses: "[0.10]",
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
const BYTES_GOAL: &str = "Goal: low-latency's bytes per message";

#[test]
fn low_latency_copying_on_a_clean_path_is_worse_than_signaling() {
    // Copies on a path that loses nothing only add bytes, and each packet
    // takes longer to serialize: without a residual the whole budget is
    // spent at 0% loss too.
    off_must_fail(
        CLEAN,
        "brisk-low-latency",
        "redundancy_residual_loss = 0",
        NEVER_WORSE_THAN_SIGNALING,
    );
}

#[test]
fn low_latency_without_copies_fails_the_p99_goal_at_5_percent() {
    // A lost message waits for RACK-TLP, a round trip and more, and holds
    // back those behind it: the p99 is near the TCP model's.
    off_must_fail(
        WHOLE,
        "brisk-low-latency",
        "redundancy_budget = 0",
        "Goal: low-latency's 99th percentile over the TCP model's at 5% loss",
    );
}

#[test]
fn low_latency_with_rfc9260_congestion_control_falls_behind_its_stream() {
    // RFC 9260 7.2.3 halves cwnd on every random loss: at 1 KiB the stream
    // falls behind its own rate and its backlog grows.
    off_must_fail(
        KIB_AT_10_PERCENT,
        "brisk-low-latency",
        "congestion_control = \"rfc9260\"",
        "low-latency keeps up with its own 512 kbit/s",
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
