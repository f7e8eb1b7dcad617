//! What the tests that run the shipped experiment files share.

use std::path::{Path, PathBuf};

use brisk_lab::experiment::Experiment;
use brisk_lab::{figures, runner};
use indicatif::ProgressBar;

/// The path of a file in the repository's `experiments/`.
pub fn experiment_path(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments")
        .join(file)
}

/// A file of `experiments/` with each `(from, to)` replaced once; every
/// `from` must be there, so that a changed file cannot make a mutation a
/// no-op.
pub fn mutated(file: &str, edits: &[(&str, &str)]) -> Experiment {
    let path = experiment_path(file);
    let mut text = std::fs::read_to_string(&path).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{file}: `{from}` not found");
        text = text.replacen(from, to, 1);
    }
    Experiment::parse(&path, &text).unwrap()
}

/// Runs an experiment on 2 threads; every run must deliver every message.
pub fn run_experiment(exp: &Experiment) -> Vec<runner::Record> {
    let (records, totals) = runner::run(exp, 2, &ProgressBar::hidden());
    assert_eq!(totals.incomplete, 0, "every run delivered every message");
    records
}

/// Loads and runs one file of `experiments/`.
pub fn run(file: &str) -> (Experiment, Vec<runner::Record>) {
    let exp = Experiment::load(&experiment_path(file)).unwrap();
    let records = run_experiment(&exp);
    (exp, records)
}

/// Every check the file declares agrees with the paper, or is a known gap
/// inside the bounds the file records on ours.
pub fn assert_checks_pass(exp: &Experiment, records: &[runner::Record]) {
    let checks = figures::checks(exp, records);
    assert!(!checks.is_empty());
    for (label, outcome) in checks {
        assert!(
            matches!(
                outcome,
                Ok(figures::Outcome::Agrees | figures::Outcome::KnownGap)
            ),
            "{}: {label}: {outcome:?}",
            exp.name
        );
    }
}
