//! Shards: `runner::run_shard` and `shard::merge` give back the report of an
//! unsharded run byte for byte, whatever N; a set of shards that is not one
//! whole split of one experiment is refused, naming the shard at fault.

#[allow(dead_code)] // each test file uses some of it
mod common;

use std::path::{Path, PathBuf};
use std::time::Instant;

use brisk_lab::experiment::Experiment;
use brisk_lab::reproduce::{self, ExperimentResult};
use brisk_lab::runner;
use brisk_lab::shard::{self, Shard, ShardError, ShardOutput};
use common::{experiment_path, mutated};
use indicatif::ProgressBar;

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("brisk-shards-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes the report of `records` and `totals` into `out`, as `brisk run` does.
fn write(exp: &Experiment, out: &Path, records: Vec<runner::Record>, totals: runner::RunTotals) {
    let result = ExperimentResult {
        exp,
        records,
        totals,
        wall_seconds: 0.0,
    };
    reproduce::write_results(out, None, vec![result], Instant::now()).unwrap();
}

/// Runs shard K of N for every K into `dir/K`, and returns the directories.
fn run_shards(exp: &Experiment, n: u32, dir: &Path) -> Vec<PathBuf> {
    (1..=n)
        .map(|k| {
            let out = runner::run_shard(exp, Shard::new(k, n).unwrap(), 1, &ProgressBar::hidden());
            let d = dir.join(format!("{k}-of-{n}"));
            out.write(&d).unwrap();
            d
        })
        .collect()
}

const OUTPUTS: [&str; 3] = ["runs.csv", "summary.csv", "summary.json"];

/// For N in {1, 2, 3, 7}: the shards, written and read back, merge into the
/// same runs.csv, summary.csv and summary.json as one run on 2 threads.
fn assert_merges_byte_identical(exp: &Experiment, tag: &str) {
    let dir = temp_dir(tag);
    let whole = dir.join("whole");
    std::fs::create_dir_all(&whole).unwrap();
    let (records, totals) = runner::run(exp, 2, &ProgressBar::hidden());
    assert!(!records.is_empty());
    let runs = totals.runs;
    write(exp, &whole, records, totals.clone());
    for n in [1u32, 2, 3, 7] {
        let dirs = run_shards(exp, n, &dir.join(format!("n{n}")));
        // Every run in exactly one shard.
        let held: u64 = dirs
            .iter()
            .map(|d| shard::read_manifest(d).unwrap().runs as u64)
            .sum();
        assert_eq!(held, runs);
        // Shards given in any order.
        let mut shuffled = dirs.clone();
        shuffled.reverse();
        let (merged, merged_totals) = shard::merge_dirs(exp, &shuffled).unwrap();
        assert_eq!(merged_totals, totals, "N = {n}");
        let out = dir.join(format!("merged{n}"));
        std::fs::create_dir_all(&out).unwrap();
        write(exp, &out, merged, merged_totals);
        for f in OUTPUTS {
            let a = std::fs::read(whole.join(f)).unwrap();
            let b = std::fs::read(out.join(f)).unwrap();
            assert!(a == b, "{}: N = {n}: merged {f} differs", exp.name);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn merged_shards_of_a_flow_experiment_are_byte_identical_to_one_run() {
    // Sweep values in every record (a flow figure), SCTP beside TCP.
    let exp = mutated(
        "thin-sctp-vs-tcp.toml",
        &[("replications = 4", "replications = 2")],
    );
    assert!(exp.records_sweep_values());
    assert_merges_byte_identical(&exp, "flow");
}

#[test]
fn merged_shards_of_a_loss_position_experiment_are_byte_identical_to_one_run() {
    let exp = Experiment::load(&experiment_path("seed000-fig02.toml")).unwrap();
    assert!(runner::expand(&exp).iter().any(|k| k.position.is_some()));
    assert_merges_byte_identical(&exp, "positions");
}

#[test]
fn merged_shards_in_memory_equal_the_runners_records_and_totals() {
    let exp = Experiment::load(&experiment_path("seed000-fig02.toml")).unwrap();
    let (records, totals) = runner::run(&exp, 2, &ProgressBar::hidden());
    let shards: Vec<ShardOutput> = (1..=3)
        .map(|k| runner::run_shard(&exp, Shard::new(k, 3).unwrap(), 2, &ProgressBar::hidden()))
        .collect();
    // One of them handed on in memory, as a Ray task's result.
    let mut shards = shards;
    let bytes = shards[1].encode().unwrap();
    shards[1] = ShardOutput::decode(&bytes, "task 2").unwrap();
    assert!(ShardOutput::decode(&bytes[..bytes.len() - 1], "task 2").is_err());
    let (merged, merged_totals) = shard::merge(&exp, shards).unwrap();
    assert_eq!(merged_totals, totals);
    assert_eq!(merged, records);
}

/// Shards 1..=3 of fig02, written once, for the refusal tests.
fn fig02_shards(tag: &str) -> (Experiment, PathBuf, Vec<PathBuf>) {
    let exp = mutated(
        "seed000-fig02.toml",
        &[("replications = 3", "replications = 1")],
    );
    let dir = temp_dir(tag);
    let dirs = run_shards(&exp, 3, &dir);
    (exp, dir, dirs)
}

fn merge_error(exp: &Experiment, dirs: &[PathBuf]) -> String {
    let e = shard::merge_dirs(exp, dirs).unwrap_err();
    e.to_string()
}

#[test]
fn a_missing_shard_is_named() {
    let (exp, dir, d) = fig02_shards("missing");
    let e = merge_error(&exp, &[d[0].clone(), d[2].clone()]);
    assert_eq!(e, "missing shard 2 of 3");
    let e = merge_error(&exp, &[d[1].clone()]);
    assert_eq!(e, "missing shards 1, 3 of 3");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_duplicate_shard_is_named_with_both_places() {
    let (exp, dir, d) = fig02_shards("duplicate");
    let copy = dir.join("copy-of-2");
    std::fs::create_dir_all(&copy).unwrap();
    for f in ["manifest.json", "runs.csv", "shard-runs.csv"] {
        std::fs::copy(d[1].join(f), copy.join(f)).unwrap();
    }
    let e = merge_error(
        &exp,
        &[d[0].clone(), d[1].clone(), copy.clone(), d[2].clone()],
    );
    assert_eq!(
        e,
        format!(
            "shard 2/3 is there twice: {} and {}",
            d[1].display(),
            copy.display()
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_shard_of_another_experiment_is_named() {
    let (exp, dir, d) = fig02_shards("other");
    // The same file with another seed: the same name, other runs.
    let other = mutated(
        "seed000-fig02.toml",
        &[
            ("replications = 3", "replications = 1"),
            ("seed = ", "seed = 1"),
        ],
    );
    let foreign = dir.join("foreign");
    runner::run_shard(&other, Shard::new(2, 3).unwrap(), 1, &ProgressBar::hidden())
        .write(&foreign)
        .unwrap();
    let e = merge_error(&exp, &[d[0].clone(), foreign.clone(), d[2].clone()]);
    assert!(
        e.starts_with(&format!(
            "{}: shard of another experiment: it is `seed000-fig02` (hash {}), expected \
             `seed000-fig02` (hash {})",
            foreign.display(),
            shard::experiment_hash(&other),
            shard::experiment_hash(&exp)
        )) && e.contains("changed since the shard ran"),
        "{e}"
    );
    // Another experiment altogether.
    let hol = Experiment::load(&experiment_path("hol-idata.toml")).unwrap();
    let e = merge_error(&hol, &d);
    assert!(
        e.starts_with(&format!(
            "{}: shard of another experiment: it is `seed000-fig02`",
            d[0].display()
        )) && e.contains("expected `hol-idata`"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_shard_of_a_different_n_is_named() {
    let (exp, dir, d) = fig02_shards("n");
    let half = dir.join("half");
    runner::run_shard(&exp, Shard::new(2, 2).unwrap(), 1, &ProgressBar::hidden())
        .write(&half)
        .unwrap();
    let e = merge_error(&exp, &[d[0].clone(), half.clone(), d[2].clone()]);
    assert_eq!(
        e,
        format!(
            "{}: shard 2/2 is one of 2 shards, but {} is one of 3: all shards must come from \
             the same --shard K/N split",
            half.display(),
            d[0].display()
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_damaged_shard_directory_is_refused_naming_the_file() {
    let (exp, dir, d) = fig02_shards("damaged");
    // No manifest: unfinished.
    let unfinished = dir.join("unfinished");
    std::fs::create_dir_all(&unfinished).unwrap();
    let e = merge_error(&exp, &[d[0].clone(), unfinished.clone(), d[2].clone()]);
    assert_eq!(
        e,
        format!(
            "{}: missing: not a shard directory, or its shard did not finish",
            unfinished.join("manifest.json").display()
        )
    );
    // A run dropped from the run list.
    let runs = d[1].join("shard-runs.csv");
    let text = std::fs::read_to_string(&runs).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.remove(1);
    std::fs::write(&runs, lines.join("\n") + "\n").unwrap();
    let e = merge_error(&exp, &d);
    assert!(
        e.starts_with(&format!(
            "{}: shard 2/3 is inconsistent: shard-runs.csv lists",
            d[1].display()
        )),
        "{e}"
    );
    // A future format.
    let manifest = d[2].join("manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace("\"format_version\": 1", "\"format_version\": 9"),
    )
    .unwrap();
    let e = merge_error(&exp, &[d[2].clone()]);
    assert_eq!(
        e,
        format!(
            "{}: format_version 9: this brisk reads version 1",
            manifest.display()
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn no_shards_is_an_error() {
    let exp = Experiment::load(&experiment_path("hol-idata.toml")).unwrap();
    let e = shard::merge(&exp, Vec::new()).unwrap_err();
    assert!(matches!(e, ShardError::NoShards), "{e}");
}

#[test]
fn the_experiment_hash_follows_the_content_and_its_trace_not_the_path() {
    let dir = temp_dir("hash");
    let src = experiment_path("hol-idata.toml");
    let text = std::fs::read_to_string(&src).unwrap();
    let trace = std::fs::read_to_string(experiment_path("hol-idata.trace")).unwrap();
    std::fs::write(dir.join("hol-idata.toml"), &text).unwrap();
    std::fs::write(dir.join("hol-idata.trace"), &trace).unwrap();
    let here = Experiment::load(&src).unwrap();
    let there = Experiment::load(&dir.join("hol-idata.toml")).unwrap();
    assert_eq!(
        shard::experiment_hash(&here),
        shard::experiment_hash(&there)
    );
    // The trace's first message one byte larger.
    let first = trace
        .lines()
        .find(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .unwrap();
    let mut fields: Vec<String> = first.split_whitespace().map(String::from).collect();
    fields[1] = format!("{}", fields[1].parse::<u64>().unwrap() + 1);
    std::fs::write(
        dir.join("hol-idata.trace"),
        trace.replacen(first, &fields.join(" "), 1),
    )
    .unwrap();
    let changed = Experiment::load(&dir.join("hol-idata.toml")).unwrap();
    assert_ne!(
        shard::experiment_hash(&here),
        shard::experiment_hash(&changed)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
