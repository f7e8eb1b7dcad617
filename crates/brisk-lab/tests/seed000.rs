//! Seed 000's baseline through the library: the Standard (lksctp 2.6.15 with
//! the signaling parameters) series against the numbers the paper states.

mod common;

use brisk_lab::experiment::Experiment;
use brisk_lab::figures;
use common::{assert_checks_pass, experiment_path, run, run_experiment};

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

/// Fig. 5's slowest corner for low-latency, 500 kbit/s and 5 ms: bursts of 7
/// at 100 ms gaps nearly fill the link, so redundant bundling must stop once
/// the stream is no longer thin or its copies queue behind each other.
#[test]
fn fig5_low_latency_beats_early_retransmit_where_the_link_is_busiest() {
    let text = std::fs::read_to_string(experiment_path("seed000-fig05.toml")).unwrap();
    let text = text
        .replace(
            r#"bandwidth = ["500kbit", "1000kbit", "2000kbit"]"#,
            r#"bandwidth = ["500kbit"]"#,
        )
        .replace(
            r#"delay = ["5ms", "10ms", "15ms", "20ms", "25ms"]"#,
            r#"delay = ["5ms"]"#,
        );
    let dir = std::env::temp_dir().join(format!("brisk-fig5-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("fig05-corner.toml");
    std::fs::write(&file, text).unwrap();
    let exp = Experiment::load(&file).unwrap();
    assert_eq!(exp.points().len(), 1, "the sweep was narrowed");
    let records = run_experiment(&exp);
    let checks = figures::checks(&exp, &records);
    for label in [
        "low-latency beats Early Retransmit at every combination (percentage points, smallest gain)",
        "low-latency beats Early Retransmit for the last message of each burst (ms saved, smallest over combinations)",
    ] {
        let outcome = checks.iter().find(|c| c.0 == label).map(|c| c.1.clone());
        assert_eq!(outcome, Some(Ok(figures::Outcome::Agrees)), "{label}");
    }
    // Redundant bundling happened, but only while thin: packets 2 to 4 of a
    // burst carry 1 + 2 + 3 copies, 6 per burst of 12, plus the few that ride
    // with the one loss's recovery. (Counting copies as packets leaving the
    // flight made every packet look thin: over 240 copies a run.)
    let bundled: f64 = records
        .iter()
        .filter(|r| r.variant == "low-latency" && r.metric == "retransmissions_bundled")
        .map(|r| r.value)
        .sum();
    let runs = records
        .iter()
        .filter(|r| r.variant == "low-latency" && r.metric == "mtt_ms")
        .count() as f64;
    assert!(bundled > 0.0, "redundant bundling is on in low-latency");
    assert!(
        bundled / runs <= 12.0 * 6.0 + 6.0,
        "{bundled} copies in {runs} runs"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
