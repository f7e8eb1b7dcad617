//! `brisk reproduce`: run the built-in experiment suite in the simulator and
//! write the report.

use std::fs;
use std::io;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use crate::experiment::Experiment;
use crate::figures;
use crate::output::{SummaryRow, summarize, write_csv, write_csv_rows, write_json};
use crate::report::{Report, Table, write_report};
use crate::runner::{self, Record, RunTotals};

/// Name of the directory that holds the experiment files.
pub const EXPERIMENTS_DIR: &str = "experiments";

/// Where the report goes without `--out`: this directory, under the working
/// directory of the command.
pub const DEFAULT_OUT_DIR: &str = "brisk-report";

/// Options of `brisk reproduce`, as given on the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// Run only the experiments whose file stem or name contains this.
    pub only: Option<String>,
    /// Report directory (default [`DEFAULT_OUT_DIR`] in the working directory).
    pub out: Option<PathBuf>,
    /// Parallel runs (default: the number of cores).
    pub jobs: Option<NonZeroUsize>,
    /// Draw a progress bar on stderr.
    pub progress: bool,
}

/// The emulator's experiments, inside `experiments/`: run by `reproduce
/// --emulate`, never by the default `reproduce`.
pub const EMULATOR_DIR: &str = "emu";

/// Where `reproduce --emulate` writes its report by default.
pub const DEFAULT_EMU_OUT_DIR: &str = "brisk-report-emu";

/// The fallback location of `experiments/`: the workspace this crate was built in.
pub fn workspace_experiments_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("..")
        .join(EXPERIMENTS_DIR)
}

/// Finds the experiments directory: `cwd/experiments` first, then `fallback`.
pub fn resolve_experiments_dir(cwd: &Path, fallback: &Path) -> Result<PathBuf> {
    let local = cwd.join(EXPERIMENTS_DIR);
    for candidate in [&local, fallback] {
        if candidate.is_dir() {
            return Ok(fs::canonicalize(candidate).unwrap_or_else(|_| candidate.to_path_buf()));
        }
    }
    bail!(
        "brisk reproduce: cannot find the experiments directory (looked in {} and {})",
        local.display(),
        fallback.display()
    )
}

/// Lists the experiment files (`*.toml`, not recursive) in `dir`, sorted by name.
pub fn list_experiment_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|ext| ext == "toml") && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// What one experiment came to.
#[derive(Debug, Clone, Serialize)]
pub struct ExperimentSummary {
    pub name: String,
    pub file: String,
    pub runs: u64,
    pub sim_events: u64,
    pub virtual_seconds: f64,
    pub wall_seconds: f64,
    /// Each `[[reference]]` check: label and outcome (`agrees`, `known gap`,
    /// `differs`, `awaits WHAT`, or `not available: WHY`).
    pub checks: Vec<(String, String)>,
    /// The report's table of the paper's numbers beside ours: one row per
    /// `[[reference]]` (quantity, paper, ours, check).
    #[serde(skip)]
    pub comparison: Table,
    pub summary: Vec<SummaryRow>,
}

/// The whole suite's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct SuiteSummary {
    pub experiments: Vec<ExperimentSummary>,
    pub runs: u64,
    pub sim_events: u64,
    pub wall_seconds: f64,
    /// Simulated events per second of wall time.
    pub events_per_second: f64,
    pub out_dir: String,
}

impl SuiteSummary {
    /// The report's page: `index.html` in the (canonical) report directory.
    pub fn report_path(&self) -> PathBuf {
        Path::new(&self.out_dir).join("index.html")
    }
}

/// Runs the experiments of `dir` (filtered by `opts.only`) and writes the report.
pub fn reproduce(dir: &Path, opts: &Options) -> Result<SuiteSummary> {
    let files = list_experiment_files(dir)
        .with_context(|| format!("brisk reproduce: cannot read {}", dir.display()))?;
    run_files(&files, dir, opts)
}

/// Runs the given experiment files (filtered by `opts.only`) and writes the report.
pub fn run_files(files: &[PathBuf], dir: &Path, opts: &Options) -> Result<SuiteSummary> {
    let started = Instant::now();
    let mut experiments = Vec::new();
    for file in files {
        let exp = Experiment::load(file)?;
        let keep = opts.only.as_ref().is_none_or(|only| {
            exp.name.contains(only.as_str())
                || file
                    .file_stem()
                    .is_some_and(|s| s.to_string_lossy().contains(only.as_str()))
        });
        if keep {
            experiments.push(exp);
        }
    }
    if experiments.is_empty() {
        match &opts.only {
            Some(only) => bail!(
                "brisk reproduce: no experiment in {} matches `{only}`",
                dir.display()
            ),
            None => bail!(
                "brisk reproduce: {} holds no experiment files",
                dir.display()
            ),
        }
    }
    let out = prepare_out(opts.out.as_deref())?;
    let jobs = opts
        .jobs
        .map(NonZeroUsize::get)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, NonZeroUsize::get));

    let total: u64 = experiments
        .iter()
        .map(|e| runner::expand(e).len() as u64)
        .sum();
    let bar = progress_bar(opts.progress, total);
    run_experiments(&experiments, &out, jobs, &bar, started)
}

/// Runs loaded experiments on `jobs` threads and writes their report to `out`
/// (`runs.csv`, `summary.csv`, `summary.json`, charts, `index.html`), counting
/// runs on `bar` (its length grows to the number of runs): what `brisk run`
/// and `brisk reproduce` do once the files are read, and what the Python
/// package calls, so that both write the same report.
pub fn run_experiments(
    experiments: &[Experiment],
    out: &Path,
    jobs: usize,
    bar: &ProgressBar,
    started: Instant,
) -> Result<SuiteSummary> {
    let out = prepare_out(Some(out))?;
    let accuracy = emulator_accuracy(experiments, bar)?;
    let mut results = Vec::new();
    for exp in experiments {
        bar.set_message(exp.name.clone());
        let t0 = Instant::now();
        let (records, totals) = runner::run(exp, jobs, bar);
        results.push(ExperimentResult {
            exp,
            records,
            totals,
            wall_seconds: t0.elapsed().as_secs_f64(),
        });
    }
    bar.finish_and_clear();
    write_results(&out, accuracy, results, started)
}

/// One experiment's outcome, from a run or from merged shards.
pub struct ExperimentResult<'a> {
    pub exp: &'a Experiment,
    pub records: Vec<Record>,
    pub totals: RunTotals,
    pub wall_seconds: f64,
}

/// Creates the report directory (`out`, or [`DEFAULT_OUT_DIR`] in the working
/// directory) and returns its canonical path.
pub fn prepare_out(out: Option<&Path>) -> Result<PathBuf> {
    let out = match out {
        Some(out) => out.to_path_buf(),
        None => std::env::current_dir()
            .context("cannot determine the current directory for the report")?
            .join(DEFAULT_OUT_DIR),
    };
    fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    // Named in full at the end of the run, wherever the command ran from.
    fs::canonicalize(&out).with_context(|| format!("resolving {}", out.display()))
}

/// The progress bar of `total` runs on stderr (hidden unless `show`).
pub fn progress_bar(show: bool, total: u64) -> ProgressBar {
    let bar = if show {
        ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr())
    } else {
        ProgressBar::hidden()
    };
    bar.set_length(0);
    if let Ok(style) = ProgressStyle::with_template("{msg:28} {wide_bar} {pos}/{len} runs ({eta})")
    {
        bar.set_style(style);
    }
    bar
}

/// Emulated results come with the emulator's own error, measured now: the
/// report's section on it, when any experiment runs a real stack.
pub fn emulator_accuracy(
    experiments: &[Experiment],
    bar: &ProgressBar,
) -> Result<Option<crate::report::Section>> {
    if !experiments
        .iter()
        .any(|e| e.variants.iter().any(|v| v.stack.is_some()))
    {
        return Ok(None);
    }
    bar.set_message("emulator accuracy");
    let plan = brisk_emu::accuracy::Plan::default();
    match brisk_emu::accuracy::measure_until(&plan, &crate::emu_runner::interrupted) {
        Ok(acc) => Ok(Some(crate::emu_report::accuracy_section(&acc))),
        Err(brisk_emu::EmuError::Interrupted) => crate::emu_runner::exit_interrupted(bar),
        Err(e) => bail!("brisk reproduce: measuring the emulator's accuracy: {e}"),
    }
}

/// Writes `runs.csv`, `summary.csv`, `summary.json`, the plots and
/// `index.html` of `results` into `out`; what `run` and `reproduce` write,
/// and `merge` writes the same from shards.
pub fn write_results(
    out: &Path,
    accuracy: Option<crate::report::Section>,
    results: Vec<ExperimentResult<'_>>,
    started: Instant,
) -> Result<SuiteSummary> {
    // runs.csv (34 MB for Fig. 7) is written on a thread of its own while
    // this one summarizes and draws: the serial end of a sharded run.
    std::thread::scope(|scope| {
        let runs_csv = scope.spawn(|| {
            let rows = results.iter().flat_map(|r| r.records.iter());
            write_csv_rows(&out.join("runs.csv"), rows).map_err(anyhow::Error::msg)
        });
        let suite = summarize_and_report(out, accuracy, &results, started);
        runs_csv
            .join()
            .map_err(|_| anyhow::anyhow!("writing runs.csv panicked"))??;
        let mut suite = suite?;
        suite.wall_seconds = started.elapsed().as_secs_f64();
        suite.events_per_second = suite.sim_events as f64 / suite.wall_seconds.max(1e-9);
        Ok(suite)
    })
}

/// Everything of [`write_results`] but `runs.csv`.
fn summarize_and_report(
    out: &Path,
    accuracy: Option<crate::report::Section>,
    results: &[ExperimentResult<'_>],
    started: Instant,
) -> Result<SuiteSummary> {
    let mut all_summary = Vec::new();
    let mut sections: Vec<_> = accuracy.into_iter().collect();
    let mut summaries = Vec::new();
    let mut totals_all = RunTotals::default();
    for &ExperimentResult {
        exp,
        ref records,
        ref totals,
        wall_seconds,
    } in results
    {
        let summary = summarize(exp, records);
        let pending = None;
        let (section, checks) = figures::section_and_checks(exp, records, totals, pending);
        let comparison = section.comparison.clone();
        sections.push(section);
        let checks = checks
            .into_iter()
            .map(|(label, r)| {
                let outcome = match r {
                    Ok(o) => o.word(),
                    Err(e) => format!("not available: {e}"),
                };
                (label, outcome)
            })
            .collect();
        summaries.push(ExperimentSummary {
            name: exp.name.clone(),
            file: exp.file.display().to_string(),
            runs: totals.runs,
            sim_events: totals.sim_events,
            virtual_seconds: totals.virtual_time.as_secs_f64(),
            wall_seconds,
            checks,
            comparison,
            summary: summary.clone(),
        });
        totals_all.runs += totals.runs;
        totals_all.sim_events += totals.sim_events;
        all_summary.extend(summary);
    }

    write_csv(&out.join("summary.csv"), &all_summary).map_err(anyhow::Error::msg)?;
    let wall = started.elapsed().as_secs_f64();
    let suite = SuiteSummary {
        runs: totals_all.runs,
        sim_events: totals_all.sim_events,
        wall_seconds: wall,
        events_per_second: totals_all.sim_events as f64 / wall.max(1e-9),
        out_dir: out.display().to_string(),
        experiments: summaries,
    };
    // summary.json holds no wall-clock figures, so that it is reproducible.
    let stable: Vec<_> = suite
        .experiments
        .iter()
        .map(|e| {
            serde_json::json!({
                "name": e.name, "runs": e.runs, "sim_events": e.sim_events,
                "virtual_seconds": e.virtual_seconds, "checks": e.checks, "summary": e.summary,
            })
        })
        .collect();
    write_json(&out.join("summary.json"), &stable).map_err(anyhow::Error::msg)?;
    let report = Report {
        title: "Brisk: reproduced SCTP loss-recovery results".into(),
        summary: vec![
            format!(
                "{} experiments, {} simulated runs of the real protocol code (brisk-proto) \
                 over a deterministic discrete-event network.",
                suite.experiments.len(),
                suite.runs
            ),
            "Each figure shows the paper's numbers beside Brisk's, with the checks the \
             experiment file declares."
                .into(),
        ],
        sections,
        generated_by: format!("brisk {} (brisk reproduce)", env!("CARGO_PKG_VERSION")),
    };
    write_report(out, &report).map_err(|e| anyhow::anyhow!("writing the report: {e}"))?;
    Ok(suite)
}

/// Whether a check's outcome fails a run: it differs, or ours could not be
/// computed.
fn fails(outcome: &str) -> bool {
    outcome == "differs" || outcome.starts_with("not available")
}

impl ExperimentSummary {
    /// How many checks came to each outcome: (agree, known gap, differ or not
    /// available, await a mechanism).
    pub fn tally(&self) -> (usize, usize, usize, usize) {
        let n = |f: &dyn Fn(&str) -> bool| self.checks.iter().filter(|c| f(&c.1)).count();
        (
            n(&|o| o == "agrees"),
            n(&|o| o == "known gap"),
            n(&|o| fails(o)),
            n(&|o| o.starts_with("awaits ")),
        )
    }
}

impl SuiteSummary {
    /// Every check that differs or could not be computed, as
    /// `experiment: label [outcome]`. A run with any fails.
    pub fn failures(&self) -> Vec<String> {
        self.experiments
            .iter()
            .flat_map(|e| {
                e.checks
                    .iter()
                    .filter(|c| fails(&c.1))
                    .map(move |c| format!("{}: {} [{}]", e.name, c.0, c.1))
            })
            .collect()
    }
}

impl std::fmt::Display for SuiteSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut total = (0, 0, 0, 0);
        for e in &self.experiments {
            let (agree, gap, differ, wait) = e.tally();
            total = (
                total.0 + agree,
                total.1 + gap,
                total.2 + differ,
                total.3 + wait,
            );
            let mut verdict = format!("{agree} agree");
            if gap > 0 {
                verdict.push_str(&format!(
                    ", {gap} known gap{}",
                    if gap == 1 { "" } else { "s" }
                ));
            }
            if differ > 0 {
                verdict.push_str(&format!(", {differ} DIFFER"));
            }
            if wait > 0 {
                verdict.push_str(&format!(", {wait} await mechanisms"));
            }
            if e.checks.is_empty() {
                verdict = "no checks".into();
            }
            writeln!(
                f,
                "{:<16} {:>6} runs {:>5.1} s, {:>7.0}x real time  {verdict}",
                e.name,
                e.runs,
                e.wall_seconds,
                e.virtual_seconds / e.wall_seconds.max(1e-9)
            )?;
        }
        writeln!(
            f,
            "{} runs, {} simulated events in {:.1} s ({:.2} M events/s)",
            self.runs,
            self.sim_events,
            self.wall_seconds,
            self.events_per_second / 1e6,
        )?;
        writeln!(
            f,
            "checks: {} agree, {} known gaps, {} differ or not available, {} await mechanisms",
            total.0, total.1, total.2, total.3
        )?;
        for e in &self.experiments {
            for c in e.checks.iter().filter(|c| c.1 == "known gap") {
                writeln!(f, "  known gap: {}: {}", e.name, c.0)?;
            }
            for c in e.checks.iter().filter(|c| c.1.starts_with("awaits ")) {
                writeln!(f, "  {}: {}: {}", c.1, e.name, c.0)?;
            }
        }
        let failures = self.failures();
        if !failures.is_empty() {
            writeln!(
                f,
                "FAILED: {} checks differ from the paper or could not be computed:",
                failures.len()
            )?;
            for x in &failures {
                writeln!(f, "  {x}")?;
            }
        }
        write!(f, "report: {}", self.report_path().display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::Experiment;

    #[test]
    fn every_emulator_experiment_file_parses_and_runs_a_stack() {
        let dir = workspace_experiments_dir().join("emu");
        let files = list_experiment_files(&dir).unwrap();
        assert!(files.len() >= 5, "{files:?}");
        for f in files {
            let exp = Experiment::load(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            assert!(!exp.points().is_empty(), "{}", f.display());
            assert!(
                exp.variants.iter().any(|v| v.stack.is_some()),
                "{}",
                f.display()
            );
        }
    }
}
