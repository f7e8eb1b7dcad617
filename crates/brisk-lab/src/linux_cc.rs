//! Linux's TCP congestion control for an emulated run.
//!
//! A network namespace other than the initial one may set
//! `net.ipv4.tcp_congestion_control` only to an algorithm in the global
//! `net.ipv4.tcp_allowed_congestion_control` (the kernel's
//! tcp_set_default_congestion_control refuses a restricted one with EPERM).
//! [`AllowedGuard`] adds the stack's algorithm to that list for the run and
//! takes it out again when dropped, also when the run fails.

use std::path::{Path, PathBuf};

/// The algorithms the kernel has (built in or loaded).
pub const AVAILABLE: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";
/// The algorithms a namespace other than the initial one may choose.
pub const ALLOWED: &str = "/proc/sys/net/ipv4/tcp_allowed_congestion_control";

/// Keeps one algorithm in the allowed list while it lives.
#[derive(Debug)]
pub struct AllowedGuard {
    name: String,
    allowed: PathBuf,
    /// Whether we added it (and so take it out again).
    added: bool,
}

impl AllowedGuard {
    /// Makes `name` allowed for namespaces, from the machine's lists.
    pub fn allow(name: &str) -> Result<Self, String> {
        Self::allow_in(Path::new(AVAILABLE), Path::new(ALLOWED), name)
    }

    /// [`AllowedGuard::allow`] with the two lists at other paths.
    pub fn allow_in(available: &Path, allowed: &Path, name: &str) -> Result<Self, String> {
        let read = |path: &Path| {
            std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))
        };
        let have = read(available)?;
        if !have.split_whitespace().any(|a| a == name) {
            return Err(format!(
                "Linux congestion control `{name}` is not available on this machine ({} lists: {}); load it with `modprobe tcp_{name}`",
                available.display(),
                have.trim()
            ));
        }
        let list = read(allowed)?;
        let mut names: Vec<&str> = list.split_whitespace().collect();
        let added = !names.contains(&name);
        if added {
            names.push(name);
            std::fs::write(allowed, format!("{}\n", names.join(" "))).map_err(|e| {
                format!(
                    "allowing congestion control `{name}` in {}: {e}",
                    allowed.display()
                )
            })?;
        }
        Ok(Self {
            name: name.to_owned(),
            allowed: allowed.to_path_buf(),
            added,
        })
    }
}

impl Drop for AllowedGuard {
    /// Takes our algorithm out of the list as it is now (another run may
    /// have changed the rest meanwhile).
    fn drop(&mut self) {
        if !self.added {
            return;
        }
        if let Ok(list) = std::fs::read_to_string(&self.allowed) {
            let rest: Vec<&str> = list
                .split_whitespace()
                .filter(|a| *a != self.name)
                .collect();
            let _ = std::fs::write(&self.allowed, format!("{}\n", rest.join(" ")));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lists(tag: &str, allowed: &str) -> (PathBuf, PathBuf) {
        let dir = std::env::temp_dir().join(format!("brisk-linux-cc-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (av, al) = (dir.join("available"), dir.join("allowed"));
        std::fs::write(&av, "reno bbr cubic\n").unwrap();
        std::fs::write(&al, allowed).unwrap();
        (av, al)
    }

    #[test]
    fn the_guard_allows_the_algorithm_for_its_life_and_restores_the_list() {
        let (av, al) = lists("add", "reno bbr\n");
        {
            let _g = AllowedGuard::allow_in(&av, &al, "cubic").unwrap();
            assert_eq!(std::fs::read_to_string(&al).unwrap(), "reno bbr cubic\n");
        }
        assert_eq!(std::fs::read_to_string(&al).unwrap(), "reno bbr\n");
        // Already allowed: left as it was, also afterwards.
        {
            let _g = AllowedGuard::allow_in(&av, &al, "bbr").unwrap();
        }
        assert_eq!(std::fs::read_to_string(&al).unwrap(), "reno bbr\n");
    }

    #[test]
    fn a_missing_algorithm_is_an_error_that_names_it() {
        let (av, al) = lists("missing", "reno\n");
        let e = AllowedGuard::allow_in(&av, &al, "vegas").unwrap_err();
        assert!(e.contains("`vegas` is not available"), "{e}");
        assert!(e.contains("reno bbr cubic"), "{e}");
        assert_eq!(std::fs::read_to_string(&al).unwrap(), "reno\n");
    }
}
