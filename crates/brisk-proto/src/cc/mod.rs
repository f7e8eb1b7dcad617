//! Congestion control of one destination, behind one trait so that each
//! path runs the controller its `Config` names (`congestion_control`):
//! RFC 9260 7.2's (the default, [`Rfc9260`]) or a BBR-like one that does
//! not take random loss for congestion ([`Bbr`]). The retransmission
//! queue tells the controller what happened (data sent, a SACK, a loss found
//! by SACK, a T3 expiry, an idle period); the controller alone owns cwnd and
//! ssthresh.
//!
//! Sizes count whole DATA chunks with their headers and padding (RFC 9260
//! 7.2: "the length of the DATA chunk, including the padding, SHOULD be
//! used").

mod bbr;
mod cubic;
mod cwv;
mod delivery_rate;
mod rfc9260;

use std::time::Duration;

use crate::config::{Config, CongestionAlgorithm};
use crate::time::Time;

pub use bbr::Bbr;
pub use cubic::Cubic;
pub use rfc9260::Rfc9260;

/// What one SACK told the sender, for the controller of the path it
/// acknowledged data on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckSample {
    pub now: Time,
    /// Bytes newly acknowledged, cumulatively or by gap blocks.
    pub bytes_acked: u32,
    /// The flight size before the SACK.
    pub flight_before: u32,
    /// The sender is in Fast Recovery (RFC 9260 7.2.4).
    pub in_fast_recovery: bool,
    /// The RTT measured from this SACK (RFC 9260 6.3.1), if any.
    pub rtt: Option<Duration>,
    /// When the most recently sent of the chunks this SACK newly
    /// acknowledged was sent (for delivery-rate estimates).
    pub newest_acked_sent_at: Option<Time>,
    /// Nothing waits to be sent (no new data queued, no chunk marked for
    /// retransmission): the sender is application-limited unless cwnd is
    /// full (draft-cheng-iccrg-delivery-rate-estimation 3.4).
    pub app_limited: bool,
}

/// A congestion controller of one destination.
pub trait CongestionController {
    /// Congestion window, bytes.
    fn cwnd(&self) -> u32;
    /// Slow start threshold, bytes.
    fn ssthresh(&self) -> u32;
    /// PMDCS: the largest DATA chunk that fits the path.
    fn pmdcs(&self) -> u32;
    /// RFC 9260 6.1 B: new data may go out while the flight is below cwnd;
    /// the packet that does so may overshoot it by less than one PMDCS.
    fn allows_new_data(&self, flight_size: u32) -> bool {
        flight_size < self.cwnd()
    }
    /// A DATA chunk of `bytes` went out, new or retransmitted (not a
    /// redundant copy of a chunk still in flight); `flight_after` is the
    /// flight size with it.
    fn on_sent(&mut self, _now: Time, _bytes: u32, _flight_after: u32) {}
    /// A SACK acknowledged new data (or none: `bytes_acked` 0).
    fn on_ack(&mut self, ack: &AckSample);
    /// RFC 9260 7.2.2: all outstanding data acknowledged.
    fn on_all_acked(&mut self);
    /// RFC 9260 7.2.3: loss detected from SACKs; once per recovery episode.
    fn on_fast_retransmit(&mut self, now: Time);
    /// SACKs showed `bytes` in flight lost: fast retransmit or Early
    /// Retransmit marked them (whether or not a recovery began).
    fn on_lost(&mut self, _now: Time, _bytes: u32) {}
    /// RFC 9260 7.2.3 and 6.3.3 E1: the T3-rtx timer expired.
    fn on_t3_expiry(&mut self, now: Time);
    /// The reduction was spurious (RFC 4015 3.2): cwnd and ssthresh return
    /// to at least `cwnd` and `ssthresh`.
    fn undo(&mut self, cwnd: u32, ssthresh: u32);
    /// RFC 9260 7.2.1: `idle_rtos` RTOs passed without data sent.
    fn on_idle(&mut self, idle_rtos: u32);
}

/// The controller of one path, as `Config::congestion_control` chose it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CongestionControl {
    Rfc9260(Rfc9260),
    Cubic(Cubic),
    /// Boxed: its model (a few hundred bytes) costs only the paths that run it.
    Bbr(Box<Bbr>),
}

impl CongestionControl {
    /// The controller `cfg` names, for a path whose largest DATA chunk is
    /// `pmdcs`, to a peer that advertised `peer_rwnd`.
    pub fn new(cfg: &Config, pmdcs: u32, peer_rwnd: u32) -> Self {
        match cfg.congestion_control {
            CongestionAlgorithm::Rfc9260 => Self::Rfc9260(
                Rfc9260::new(pmdcs, cfg.initial_cwnd, peer_rwnd)
                    .with_cwnd_validation(cfg.cwnd_validation),
            ),
            CongestionAlgorithm::Cubic => Self::Cubic(
                Cubic::new(pmdcs, cfg.initial_cwnd, peer_rwnd)
                    .with_cwnd_validation(cfg.cwnd_validation),
            ),
            CongestionAlgorithm::Bbr => Self::Bbr(Box::new(Bbr::new(pmdcs, cfg.initial_cwnd))),
        }
    }

    fn inner(&self) -> &dyn CongestionController {
        match self {
            Self::Rfc9260(c) => c,
            Self::Cubic(c) => c,
            Self::Bbr(c) => c.as_ref(),
        }
    }

    fn inner_mut(&mut self) -> &mut dyn CongestionController {
        match self {
            Self::Rfc9260(c) => c,
            Self::Cubic(c) => c,
            Self::Bbr(c) => c.as_mut(),
        }
    }
}

impl CongestionController for CongestionControl {
    fn cwnd(&self) -> u32 {
        self.inner().cwnd()
    }
    fn ssthresh(&self) -> u32 {
        self.inner().ssthresh()
    }
    fn pmdcs(&self) -> u32 {
        self.inner().pmdcs()
    }
    fn allows_new_data(&self, flight_size: u32) -> bool {
        self.inner().allows_new_data(flight_size)
    }
    fn on_sent(&mut self, now: Time, bytes: u32, flight_after: u32) {
        self.inner_mut().on_sent(now, bytes, flight_after);
    }
    fn on_ack(&mut self, ack: &AckSample) {
        self.inner_mut().on_ack(ack);
    }
    fn on_all_acked(&mut self) {
        self.inner_mut().on_all_acked();
    }
    fn on_fast_retransmit(&mut self, now: Time) {
        self.inner_mut().on_fast_retransmit(now);
    }
    fn on_lost(&mut self, now: Time, bytes: u32) {
        self.inner_mut().on_lost(now, bytes);
    }
    fn on_t3_expiry(&mut self, now: Time) {
        self.inner_mut().on_t3_expiry(now);
    }
    fn undo(&mut self, cwnd: u32, ssthresh: u32) {
        self.inner_mut().undo(cwnd, ssthresh);
    }
    fn on_idle(&mut self, idle_rtos: u32) {
        self.inner_mut().on_idle(idle_rtos);
    }
}
