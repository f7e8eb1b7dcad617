//! Building an interop peer from a test: included with `#[path]` by the
//! tests of `brisk` (interop) and `brisk-lab` (the workload roles), so both
//! build the peers the one way, once per test process.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// The repository root, from a crate at `crates/NAME`.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds the interop peer `name` (`tests/interop/NAME/build.sh`) into
/// `target/interop` once per test process, with `env` set; returns its
/// binary. A failed build fails the test with the script's output.
pub fn build_peer(name: &str, env: &[(&str, &str)]) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let mut built = BUILT
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(p) = built.get(name) {
        return p.clone();
    }
    let script = repo().join(format!("tests/interop/{name}/build.sh"));
    let out = Command::new("bash")
        .arg(&script)
        .arg(repo().join("target/interop"))
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", script.display()));
    assert!(
        out.status.success(),
        "building the {name} interop peer failed (scripts/test installs its toolchain):\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let path = PathBuf::from(
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .lines()
            .last()
            .unwrap_or(""),
    );
    assert!(
        path.exists(),
        "the {name} build did not produce {}",
        path.display()
    );
    built.insert(name.to_owned(), path.clone());
    path
}
