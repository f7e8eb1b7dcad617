//! Seed 000's baseline through the library: the Standard (lksctp 2.6.15 with
//! the signaling parameters) series against the numbers the paper states.

#[allow(dead_code)] // each test file uses some of it
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

/// Fig. 6's known-gap text states numbers from the runs; this keeps them true:
/// the range of the 40 per-replication mean reductions (each replication is a
/// draw of the random gaps) and the recorded causes of each recovery.
#[test]
fn fig6_gap_text_matches_the_draws_and_the_recorded_causes() {
    use std::collections::{BTreeMap, HashSet};
    let (exp, records) = run("seed000-fig06.toml");
    assert_checks_pass(&exp, &records);
    let gap = std::fs::read_to_string(experiment_path("seed000-fig06.toml")).unwrap();
    // MTT of the lost message by (variant, replication, position).
    let mut mtt: BTreeMap<(&str, u32, u64), f64> = BTreeMap::new();
    let mut causes: BTreeMap<(&str, &str), HashSet<(u32, u64)>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.position.is_some()) {
        let key = (r.replication, r.position.unwrap());
        if r.metric == "mtt_ms" {
            mtt.insert((r.variant.as_str(), key.0, key.1), r.value);
        } else if let Some(cause) = r.metric.strip_prefix("retransmissions_") {
            causes
                .entry((r.variant.as_str(), cause))
                .or_default()
                .insert(key);
        }
    }
    let mut reductions: Vec<f64> = (0..40)
        .map(|rep| {
            let per: Vec<f64> = mtt
                .iter()
                .filter(|(k, _)| k.0 == "standard" && k.1 == rep)
                .map(|(k, s)| (s - mtt[&("early-retransmit", rep, k.2)]) / s * 100.0)
                .collect();
            per.iter().sum::<f64>() / per.len() as f64
        })
        .collect();
    reductions.sort_by(f64::total_cmp);
    let range = format!(
        "range from {:.1}% to {:.1}% (median {:.1}%)",
        reductions[0],
        reductions[39],
        (reductions[19] + reductions[20]) / 2.0
    );
    assert!(gap.contains(&range), "the text should say: {range}");
    assert!(
        59.5 - reductions[39] >= 11.95,
        "the largest 12 points below"
    );
    let count = |v, c| causes.get(&(v, c)).map_or(0, HashSet::len);
    let stated = format!(
        "by ER in {} of 1,600 runs, by fast retransmit in {} and by T3 in {}",
        thousands(count("early-retransmit", "early-retransmit")),
        count("early-retransmit", "fast-retransmit"),
        count("early-retransmit", "t3-timeout"),
    );
    assert!(gap.contains(&stated), "the text should say: {stated}");
    let standard = format!(
        "the Standard needs T3 in {}",
        thousands(count("standard", "t3-timeout"))
    );
    assert!(gap.contains(&standard), "the text should say: {standard}");
}

fn thousands(n: usize) -> String {
    if n >= 1000 {
        format!("{},{:03}", n / 1000, n % 1000)
    } else {
        n.to_string()
    }
}
