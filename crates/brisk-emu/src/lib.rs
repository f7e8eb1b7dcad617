//! Brisk's real-time emulator. Like Mahimahi, it joins network namespaces
//! through TUN devices to one user-space process; unlike Mahimahi, the
//! process runs the very link code the simulator runs (`brisk-net`): the same
//! bandwidth, delay, drop-tail queue, impairments and loss patterns, on the
//! wall clock instead of virtual time. So real stacks (Linux TCP, usrsctp,
//! pion, Brisk itself) meet exactly the patterns the simulator uses, and the
//! simulator can be checked against them.
//!
//! - [`Emulation`]: namespaces and devices made, forwarding started; commands
//!   run in a host's namespace ([`Emulation::command`]) or a thread enters it
//!   ([`Emulation::enter`]); [`Emulation::finish`] stops, writes the pcapng
//!   and removes everything. A namespace left by a crashed run is found by
//!   its name and removed by the next start.
//! - [`Forwarder`]: the sans-IO core, one [`brisk_net::Link`] per ordered
//!   pair of hosts, testable on virtual time.
//!
//! - [`accuracy`]: the emulator's own delay, rate and ordinal error, measured
//!   end to end with probes in the namespaces.
//!
//! It needs root (or CAP_NET_ADMIN and CAP_SYS_ADMIN) and iproute2.

pub mod accuracy;
mod emulation;
mod forward;
pub mod netns;

pub use emulation::{DEVICE, Emulation, EmulationConfig, host_addr};
pub use forward::{ForwardStats, Forwarder, MAX_IN_FLIGHT_BYTES, host_label};

/// What can go wrong setting up or running an emulation.
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    #[error(
        "the emulator needs root (or CAP_NET_ADMIN and CAP_SYS_ADMIN) to make network namespaces and TUN devices; run it with sudo"
    )]
    NotRoot,
    #[error("`{tool}` is not installed: install the Debian package {package}")]
    Missing { tool: String, package: String },
    #[error("`{command}` failed: {stderr}")]
    Command { command: String, stderr: String },
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Config(String),
    #[error("interrupted")]
    Interrupted,
}
