//! Seeds 001 and 002 through the library: every check of the thin-stream
//! tables and of the Nagle study, as `brisk reproduce` evaluates them.

#[allow(dead_code)] // each test file uses some of it
mod common;

use common::{assert_checks_pass, run};

#[test]
fn table2_standard_matches_the_paper_within_its_tolerances() {
    let (exp, records) = run("seed001-table2.toml");
    assert_checks_pass(&exp, &records);
    // Every lost chunk was retransmitted, and the tables count each once.
    let lost: f64 = records
        .iter()
        .filter(|r| r.metric == "lost_chunks")
        .map(|r| r.value)
        .sum();
    let first = records
        .iter()
        .filter(|r| r.metric.starts_with("lost_first_rtx_ms_"))
        .count();
    assert_eq!(lost as usize, first);
    assert!(first > 4000, "about 1,400 lost chunks per RTT: {first}");
}

#[test]
fn table3_and_the_sender_only_thin_stream_profile() {
    let (exp, records) = run("seed001-table3.toml");
    assert_checks_pass(&exp, &records);
}

#[test]
fn the_nagle_study_checks() {
    let (exp, records) = run("seed002-nagle.toml");
    assert_checks_pass(&exp, &records);
}

#[test]
fn table3_modification_rows_are_checked_and_carry_no_placeholder_frequencies() {
    let (exp, _) = run("seed001-table3.toml");
    let modification_rows: Vec<_> = exp
        .reference
        .iter()
        .filter(|r| r.label.starts_with('+'))
        .collect();
    assert_eq!(modification_rows.len(), 6);
    for r in modification_rows {
        assert!(r.min.is_some() && r.max.is_some(), "{}: no bounds", r.label);
    }
    for row in &exp.paper_rows {
        assert_ne!(
            row.frequency,
            Some(0.0),
            "{} {}: a 0% placeholder",
            row.variant,
            row.cause
        );
    }
}
