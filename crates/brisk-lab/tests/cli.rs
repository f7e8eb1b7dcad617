//! Runs the `brisk` binary as a user would.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn brisk(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_brisk"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run the brisk binary")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn reproduce_says_no_experiments_exist_yet_and_exits_zero() {
    let output = brisk(&["reproduce"], &workspace_root());
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(out.contains("no experiments exist yet"), "{out}");
    assert!(out.contains("nothing was run"), "{out}");
}

#[test]
fn reproduce_finds_the_workspace_experiments_from_another_directory() {
    // The crate directory has no experiments/, so the workspace one is used.
    let output = brisk(&["reproduce"], Path::new(env!("CARGO_MANIFEST_DIR")));
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(stdout(&output).contains("no experiments exist yet"));
}

#[test]
fn reproduce_writes_no_report_into_out_dir() {
    let out_dir = std::env::temp_dir().join(format!(
        "brisk-cli-test-out-{}-never-created",
        std::process::id()
    ));
    let out_arg = out_dir.to_str().expect("temp dir path is UTF-8");
    let output = brisk(
        &["reproduce", "--out", out_arg, "--jobs", "2"],
        &workspace_root(),
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(!out_dir.exists(), "{} was created", out_dir.display());
}

#[test]
fn reproduce_rejects_zero_jobs() {
    let output = brisk(&["reproduce", "--jobs", "0"], &workspace_root());
    assert_ne!(output.status.code(), Some(0), "{output:?}");
}

#[test]
fn help_lists_reproduce() {
    let output = brisk(&["--help"], &workspace_root());
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(stdout(&output).contains("reproduce"), "{}", stdout(&output));
}

#[test]
fn version_prints_the_package_version() {
    let output = brisk(&["--version"], &workspace_root());
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        stdout(&output).trim(),
        format!("brisk {}", env!("CARGO_PKG_VERSION"))
    );
}
