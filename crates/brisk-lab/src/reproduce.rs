//! `brisk reproduce`: find the experiment files of the built-in suite.
//!
//! The simulator and the experiment runner do not exist yet, so this module only
//! finds `experiments/`, lists its `*.toml` files and says honestly what it did
//! not do. It never writes a report and never claims to have run anything.

use std::fmt;
use std::fs;
use std::io;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// Name of the directory that holds the experiment files.
pub const EXPERIMENTS_DIR: &str = "experiments";

/// Options of `brisk reproduce`, as given on the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// Run only the experiment with this name (the file stem, e.g. `er-burst`).
    pub only: Option<String>,
    /// Directory the report would be written to. Nothing is written yet.
    pub out: Option<PathBuf>,
    /// Number of parallel replications. Unused until the runner exists.
    pub jobs: Option<NonZeroUsize>,
}

/// What `brisk reproduce` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The experiments directory has no experiment files: nothing to run.
    NoExperiments { dir: PathBuf },
    /// Experiment files exist, but there is no runner to run them.
    RunnerNotImplemented {
        dir: PathBuf,
        /// The files `--only` selected (all files without `--only`), sorted.
        selected: Vec<PathBuf>,
        /// Every experiment file in the directory, sorted.
        found: Vec<PathBuf>,
        only: Option<String>,
    },
}

impl Outcome {
    /// Whether the command succeeded: only when there was honestly nothing to do.
    pub fn is_success(&self) -> bool {
        matches!(self, Outcome::NoExperiments { .. })
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::NoExperiments { dir } => write!(
                f,
                "brisk reproduce: no experiments exist yet ({} has no experiment files). \
                 The simulator and experiment runner arrive with the network-lab work; \
                 nothing was run and no report was written.",
                dir.display()
            ),
            Outcome::RunnerNotImplemented {
                dir,
                selected,
                found,
                only,
            } => {
                writeln!(
                    f,
                    "brisk reproduce: the experiment runner is not implemented yet; \
                     nothing was run and no report was written."
                )?;
                match only {
                    Some(name) if selected.is_empty() => {
                        write!(
                            f,
                            "No experiment named `{name}` in {}. Experiment files found:",
                            dir.display()
                        )?;
                        write_file_list(f, found)
                    }
                    Some(name) => {
                        write!(
                            f,
                            "Experiment `{name}` (selected with --only) in {}:",
                            dir.display()
                        )?;
                        write_file_list(f, selected)
                    }
                    None => {
                        write!(f, "Experiment files found in {}:", dir.display())?;
                        write_file_list(f, found)
                    }
                }
            }
        }
    }
}

fn write_file_list(f: &mut fmt::Formatter<'_>, files: &[PathBuf]) -> fmt::Result {
    for file in files {
        let name = file.file_name().unwrap_or(file.as_os_str());
        write!(f, "\n  {}", Path::new(name).display())?;
    }
    Ok(())
}

/// The fallback location of `experiments/`: the workspace this crate was built in.
pub fn workspace_experiments_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("..")
        .join(EXPERIMENTS_DIR)
}

/// Finds the experiments directory: `cwd/experiments` first, then `fallback`.
///
/// The returned path is canonicalized when possible so messages show a clean path.
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

/// Runs `brisk reproduce` against the experiments directory `dir`.
///
/// Writes nothing: not the report, not `opts.out`.
pub fn reproduce(dir: &Path, opts: &Options) -> Result<Outcome> {
    let found = list_experiment_files(dir)
        .with_context(|| format!("brisk reproduce: cannot read {}", dir.display()))?;
    if found.is_empty() {
        return Ok(Outcome::NoExperiments {
            dir: dir.to_path_buf(),
        });
    }
    let selected = match &opts.only {
        Some(name) => found
            .iter()
            .filter(|file| file.file_stem().is_some_and(|stem| stem == name.as_str()))
            .cloned()
            .collect(),
        None => found.clone(),
    };
    Ok(Outcome::RunnerNotImplemented {
        dir: dir.to_path_buf(),
        selected,
        found,
        only: opts.only.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{SystemTime, UNIX_EPOCH};

    /// A fresh directory under the system temp dir, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new() -> TempDir {
            static COUNTER: AtomicU64 = AtomicU64::new(0);
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            let name = format!(
                "brisk-lab-reproduce-{}-{}-{}",
                std::process::id(),
                nanos,
                COUNTER.fetch_add(1, Ordering::Relaxed)
            );
            let path = std::env::temp_dir().join(name);
            fs::create_dir_all(&path).unwrap();
            TempDir(path)
        }

        fn path(&self) -> &Path {
            &self.0
        }

        fn touch(&self, name: &str) -> PathBuf {
            let path = self.0.join(name);
            fs::write(&path, "").unwrap();
            path
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn empty_experiments_dir_reports_no_experiments_and_succeeds() {
        let tmp = TempDir::new();
        let outcome = reproduce(tmp.path(), &Options::default()).unwrap();
        assert_eq!(
            outcome,
            Outcome::NoExperiments {
                dir: tmp.path().to_path_buf()
            }
        );
        assert!(outcome.is_success());
        let message = outcome.to_string();
        assert!(message.contains("no experiments exist yet"), "{message}");
        assert!(message.contains("nothing was run"), "{message}");
    }

    #[test]
    fn non_toml_files_are_not_experiments() {
        let tmp = TempDir::new();
        tmp.touch("README.md");
        tmp.touch("notes.toml.bak");
        fs::create_dir(tmp.path().join("dir.toml")).unwrap();
        let outcome = reproduce(tmp.path(), &Options::default()).unwrap();
        assert!(matches!(outcome, Outcome::NoExperiments { .. }));
    }

    #[test]
    fn toml_files_fail_because_runner_is_missing_and_are_listed_sorted() {
        let tmp = TempDir::new();
        let b = tmp.touch("b-thin-stream.toml");
        let a = tmp.touch("a-early-retransmit.toml");
        tmp.touch("README.md");
        let outcome = reproduce(tmp.path(), &Options::default()).unwrap();
        assert!(!outcome.is_success());
        match &outcome {
            Outcome::RunnerNotImplemented {
                selected, found, ..
            } => {
                assert_eq!(found, &vec![a.clone(), b.clone()]);
                assert_eq!(selected, &vec![a, b]);
            }
            other => panic!("expected RunnerNotImplemented, got {other:?}"),
        }
        let message = outcome.to_string();
        assert!(message.contains("not implemented yet"), "{message}");
        assert!(message.contains("nothing was run"), "{message}");
        assert!(message.contains("a-early-retransmit.toml"), "{message}");
        assert!(message.contains("b-thin-stream.toml"), "{message}");
        assert!(!message.contains("no experiments exist yet"), "{message}");
    }

    #[test]
    fn only_selects_the_experiment_by_file_stem_and_still_fails() {
        let tmp = TempDir::new();
        let a = tmp.touch("a.toml");
        tmp.touch("b.toml");
        let opts = Options {
            only: Some("a".into()),
            ..Options::default()
        };
        let outcome = reproduce(tmp.path(), &opts).unwrap();
        assert!(!outcome.is_success());
        match outcome {
            Outcome::RunnerNotImplemented { selected, .. } => assert_eq!(selected, vec![a]),
            other => panic!("expected RunnerNotImplemented, got {other:?}"),
        }
    }

    #[test]
    fn only_with_unknown_name_says_so_and_lists_what_exists() {
        let tmp = TempDir::new();
        tmp.touch("a.toml");
        let opts = Options {
            only: Some("missing".into()),
            ..Options::default()
        };
        let outcome = reproduce(tmp.path(), &opts).unwrap();
        assert!(!outcome.is_success());
        let message = outcome.to_string();
        assert!(
            message.contains("No experiment named `missing`"),
            "{message}"
        );
        assert!(message.contains("a.toml"), "{message}");
    }

    #[test]
    fn reproduce_never_creates_the_out_dir() {
        let tmp = TempDir::new();
        let out = tmp.path().join("report");
        let opts = Options {
            out: Some(out.clone()),
            ..Options::default()
        };
        reproduce(tmp.path(), &opts).unwrap();
        tmp.touch("a.toml");
        reproduce(tmp.path(), &opts).unwrap();
        assert!(!out.exists());
    }

    #[test]
    fn experiments_dir_in_current_dir_wins_over_fallback() {
        let cwd = TempDir::new();
        let fallback = TempDir::new();
        fs::create_dir(cwd.path().join(EXPERIMENTS_DIR)).unwrap();
        let dir = resolve_experiments_dir(cwd.path(), fallback.path()).unwrap();
        assert_eq!(
            dir,
            fs::canonicalize(cwd.path().join(EXPERIMENTS_DIR)).unwrap()
        );
    }

    #[test]
    fn experiments_dir_falls_back_when_current_dir_has_none() {
        let cwd = TempDir::new();
        let fallback = TempDir::new();
        let dir = resolve_experiments_dir(cwd.path(), fallback.path()).unwrap();
        assert_eq!(dir, fs::canonicalize(fallback.path()).unwrap());
    }

    #[test]
    fn missing_experiments_dir_is_an_error_naming_both_places() {
        let cwd = TempDir::new();
        let fallback = cwd.path().join("nowhere");
        let err = resolve_experiments_dir(cwd.path(), &fallback).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("cannot find the experiments directory"));
        assert!(message.contains("nowhere"), "{message}");
    }

    #[test]
    fn fallback_points_at_the_workspace_experiments_dir() {
        let dir = workspace_experiments_dir();
        assert!(dir.ends_with("../../experiments"), "{}", dir.display());
    }
}
