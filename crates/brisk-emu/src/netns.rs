//! Network namespaces: made and removed with iproute2 (`ip netns`), entered
//! by a thread with `setns(2)`, and run in by commands through `ip netns
//! exec`. Every namespace the emulator makes is named
//! `brisk-emu-PID-RUN-HOST`, so one left behind by a crashed run (its PID no
//! longer alive) is recognised and removed by the next.

use std::fs::File;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::EmuError;

/// The prefix of every namespace the emulator makes.
pub const PREFIX: &str = "brisk-emu-";

/// Where iproute2 keeps named namespaces.
const NETNS_DIR: &str = "/var/run/netns";

/// Runs `ip ARGS`, failing with its standard error.
pub(crate) fn ip(args: &[&str]) -> Result<Output, EmuError> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => EmuError::Missing {
                tool: "ip".into(),
                package: "iproute2".into(),
            },
            _ => EmuError::Io {
                what: "running ip".into(),
                source: e,
            },
        })?;
    if !out.status.success() {
        return Err(EmuError::Command {
            command: format!("ip {}", args.join(" ")),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(out)
}

/// One named network namespace, removed when dropped.
#[derive(Debug)]
pub struct Namespace {
    name: String,
    removed: bool,
}

impl Namespace {
    /// Makes the namespace `name` with its loopback up.
    pub fn create(name: &str) -> Result<Self, EmuError> {
        ip(&["netns", "add", name])?;
        let ns = Self {
            name: name.to_owned(),
            removed: false,
        };
        ip(&["-n", name, "link", "set", "lo", "up"])?;
        Ok(ns)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// A command that runs `program` inside the namespace.
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name, program]);
        c
    }

    /// Moves the calling thread into the namespace: sockets it opens from
    /// then on live there. For in-process probes and tests.
    pub fn enter(&self) -> Result<(), EmuError> {
        let path = Path::new(NETNS_DIR).join(&self.name);
        let file = File::open(&path).map_err(|e| EmuError::Io {
            what: format!("opening {}", path.display()),
            source: e,
        })?;
        nix::sched::setns(file, nix::sched::CloneFlags::CLONE_NEWNET).map_err(|e| EmuError::Io {
            what: format!("entering namespace {}", self.name),
            source: e.into(),
        })
    }

    /// Removes the namespace (and the devices in it).
    pub fn remove(mut self) -> Result<(), EmuError> {
        self.removed = true;
        ip(&["netns", "delete", &self.name]).map(|_| ())
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        if !self.removed {
            let _ = ip(&["netns", "delete", &self.name]);
        }
    }
}

/// The namespaces iproute2 knows whose name starts with [`PREFIX`].
pub fn ours() -> Result<Vec<String>, EmuError> {
    let out = ip(&["netns", "list"])?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(PREFIX))
        .map(str::to_owned)
        .collect())
}

/// The PID a namespace name records (`brisk-emu-PID-RUN-HOST`).
fn owner(name: &str) -> Option<u32> {
    name.strip_prefix(PREFIX)?.split('-').next()?.parse().ok()
}

/// Removes the emulator's namespaces whose process is gone (a crashed or
/// killed run), and returns their names.
pub fn remove_leftovers() -> Result<Vec<String>, EmuError> {
    let mut removed = Vec::new();
    for name in ours()? {
        let alive = owner(&name).is_some_and(|pid| Path::new(&format!("/proc/{pid}")).exists());
        if !alive {
            ip(&["netns", "delete", &name])?;
            removed.push(name);
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_is_read_from_the_name() {
        assert_eq!(owner("brisk-emu-4242-0-a"), Some(4242));
        assert_eq!(owner("brisk-emu-x-a"), None);
        assert_eq!(owner("other-1-a"), None);
    }
}
