//! Per-destination state (RFC 9260 6.3, 7.2): RTO, congestion control and
//! PMTU. One path today; multi-homing adds more, with their error counters
//! (8.2) and their own T3 (its timer is in the association's table today).

use std::net::SocketAddr;

use crate::cc::CongestionControl;
use crate::config::Config;
use crate::recovery::ack_reach::AckSpacing;
use crate::recovery::rto::RtoEstimator;
use crate::time::Time;

/// One destination transport address of the peer.
#[derive(Debug, Clone)]
pub struct Path {
    /// Where packets go: with RFC 6951 encapsulation, the peer's UDP address.
    pub remote: SocketAddr,
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
            rto: RtoEstimator::new(cfg.rto_initial, cfg.rto_min, cfg.rto_max),
            cc: CongestionControl::new(pmdcs(cfg.mtu), cfg.initial_cwnd, peer_rwnd),
            mtu: cfg.mtu,
            last_data_sent: None,
            ack_spacing: AckSpacing::default(),
        }
    }
}

/// The largest DATA chunk (header included) that fits a packet of `mtu` bytes.
pub fn pmdcs(mtu: usize) -> u32 {
    u32::try_from(mtu.saturating_sub(12)).unwrap_or(u32::MAX)
}
