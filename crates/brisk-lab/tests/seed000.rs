//! Seed 000's baseline through the library: the Standard (lksctp 2.6.15 with
//! the signaling parameters) series against the numbers the paper states.

use std::path::Path;

use brisk_lab::experiment::Experiment;
use brisk_lab::{figures, runner};
use indicatif::ProgressBar;

fn run(file: &str) -> (Experiment, Vec<runner::Record>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments")
        .join(file);
    let exp = Experiment::load(&path).unwrap();
    let (records, totals) = runner::run(&exp, 2, &ProgressBar::hidden());
    assert_eq!(totals.incomplete, 0, "every run delivered every message");
    (exp, records)
}

fn assert_checks_pass(exp: &Experiment, records: &[runner::Record]) {
    let checks = figures::checks(exp, records);
    assert!(!checks.is_empty());
    for (label, outcome) in checks {
        assert_eq!(outcome, Ok(true), "{}: {label}", exp.name);
    }
}

#[test]
fn fig2_standard_takes_110_to_200_ms_with_the_timer_restart_effect() {
    let (exp, records) = run("seed000-fig02.toml");
    assert_checks_pass(&exp, &records);
    // Every lost message was recovered by a T3 timeout: with 4 packets per
    // burst, lksctp's 4 miss indications are never reached.
    let fr: f64 = records
        .iter()
        .filter(|r| r.variant == "standard" && r.metric == "retransmissions_fast-retransmit")
        .map(|r| r.value)
        .sum();
    let t3: f64 = records
        .iter()
        .filter(|r| r.variant == "standard" && r.metric == "retransmissions_t3-timeout")
        .map(|r| r.value)
        .sum();
    assert_eq!(fr, 0.0);
    assert_eq!(t3, 120.0, "40 positions x 3 replications, one timeout each");
}

#[test]
fn fig4_standard_fast_retransmits_the_first_three_messages_of_a_burst() {
    let (exp, records) = run("seed000-fig04.toml");
    assert_checks_pass(&exp, &records);
}
