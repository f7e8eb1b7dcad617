//! Per-destination state (RFC 9260 6.3, 7.2, 8.2, 8.3): one [`Path`] for each
//! transport address of the peer, with its RTO, congestion control, PMTU,
//! error counter, reachability and confirmation; and the [`Paths`] of an
//! association, which choose where data, retransmissions and replies go.

mod set;

use std::net::SocketAddr;

use crate::cc::CongestionControl;
use crate::config::Config;
use crate::recovery::ack_reach::AckSpacing;
use crate::recovery::rto::RtoEstimator;
use crate::time::Time;

pub use set::{MAX_PATHS, Paths};

/// A path's index in its association's [`Paths`]: stable for the
/// association's life (paths are never removed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PathId(pub u8);

impl PathId {
    pub const FIRST: PathId = PathId(0);

    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    /// The id of the path at `index` (a set holds at most `MAX_PATHS`).
    pub fn from_index(index: usize) -> Self {
        PathId(u8::try_from(index).unwrap_or(u8::MAX))
    }
}

/// Whether a destination is reachable (RFC 9260 8.2; RFC 7829 5.1 adds
/// Potentially Failed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathState {
    Active,
    /// RFC 7829 5.1: more than PFMR consecutive timeouts: data avoids it, and
    /// heartbeats probe it once per RTO.
    PotentiallyFailed,
    /// RFC 9260 8.2: more than Path.Max.Retrans consecutive timeouts.
    Inactive,
}

impl PathState {
    pub const fn name(self) -> &'static str {
        match self {
            PathState::Active => "active",
            PathState::PotentiallyFailed => "potentially-failed",
            PathState::Inactive => "inactive",
        }
    }
}

/// One destination transport address of the peer.
#[derive(Debug, Clone)]
pub struct Path {
    /// Where packets go: with RFC 6951 encapsulation, the peer's UDP address.
    pub remote: SocketAddr,
    pub state: PathState,
    /// RFC 9260 5.4: a heartbeat to the address came back (or the address is
    /// the one the association was set up with). Data goes only to
    /// confirmed paths.
    pub confirmed: bool,
    /// Consecutive timeouts of this destination (8.2).
    pub errors: u32,
    pub rto: RtoEstimator,
    pub cc: CongestionControl,
    /// Largest SCTP packet for this path.
    pub mtu: usize,
    /// When DATA was last sent here, for heartbeats and cwnd decay on idle.
    pub last_data_sent: Option<Time>,
    /// The bottleneck's per-packet spacing as this path's SACKs show it.
    pub ack_spacing: AckSpacing,
}

impl Path {
    pub fn new(remote: SocketAddr, cfg: &Config, peer_rwnd: u32) -> Self {
        Self {
            remote,
            state: PathState::Active,
            confirmed: true,
            errors: 0,
            rto: RtoEstimator::new(cfg.rto_initial, cfg.rto_min, cfg.rto_max),
            cc: CongestionControl::new(cfg, pmdcs(cfg.mtu), peer_rwnd),
            mtu: cfg.mtu,
            last_data_sent: None,
            ack_spacing: AckSpacing::default(),
        }
    }

    /// A path to an address the peer listed: unconfirmed until a heartbeat
    /// comes back from it (RFC 9260 5.4).
    pub fn unconfirmed(remote: SocketAddr, cfg: &Config, peer_rwnd: u32) -> Self {
        Self {
            confirmed: false,
            ..Self::new(remote, cfg, peer_rwnd)
        }
    }

    /// Whether data may go here: confirmed and active.
    pub fn usable(&self) -> bool {
        self.confirmed && self.state == PathState::Active
    }
}

/// The largest DATA chunk (header included) that fits a packet of `mtu` bytes.
pub fn pmdcs(mtu: usize) -> u32 {
    u32::try_from(mtu.saturating_sub(12)).unwrap_or(u32::MAX)
}
