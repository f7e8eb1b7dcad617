//! RFC 9260 7.2 congestion control, the default: slow start, congestion
//! avoidance with partial_bytes_acked, and the reductions on loss.
//!
//! Sizes count whole DATA chunks with their headers and padding (7.2: "the
//! length of the DATA chunk, including the padding, SHOULD be used").

use super::{AckSample, CongestionController, cwv::Cwv};
use crate::time::Time;

/// cwnd, ssthresh and partial_bytes_acked of one destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rfc9260 {
    cwnd: u32,
    ssthresh: u32,
    partial_bytes_acked: u32,
    /// PMDCS: the largest DATA chunk that fits the path.
    pmdcs: u32,
    /// RFC 7661, when `cwnd_validation` is on.
    cwv: Option<Cwv>,
    /// The flight size before the latest SACK (RFC 7661's LossFlightSize
    /// when that SACK finds a loss).
    flight_at_last_sack: u32,
}

impl Rfc9260 {
    /// RFC 9260 7.2.1: cwnd = min(4*PMDCS, max(2*PMDCS, 4404)) unless configured;
    /// ssthresh starts at the peer's advertised window ("arbitrarily high").
    pub fn new(pmdcs: u32, initial_cwnd: Option<u32>, peer_rwnd: u32) -> Self {
        let cwnd = initial_cwnd.unwrap_or((4 * pmdcs).min((2 * pmdcs).max(4404)));
        Self {
            cwnd: cwnd.max(pmdcs),
            ssthresh: peer_rwnd.max(pmdcs),
            partial_bytes_acked: 0,
            pmdcs,
            cwv: None,
            flight_at_last_sack: 0,
        }
    }

    /// With RFC 7661 congestion window validation (`cwnd_validation`).
    pub fn with_cwnd_validation(mut self, on: bool) -> Self {
        self.cwv = on.then(Cwv::default);
        self
    }

    pub fn partial_bytes_acked(&self) -> u32 {
        self.partial_bytes_acked
    }

    /// A SACK acknowledged `bytes_acked` new bytes and advanced the cumulative
    /// TSN ack point; `flight_before` was the flight size before it.
    pub fn on_ack(&mut self, bytes_acked: u32, flight_before: u32, in_fast_recovery: bool) {
        self.grow(bytes_acked, flight_before >= self.cwnd, in_fast_recovery);
    }

    /// 7.2.1 and 7.2.2 for `bytes_acked` newly acknowledged; `fully_utilized`
    /// when the window was in use (with RFC 7661: validated).
    fn grow(&mut self, bytes_acked: u32, fully_utilized: bool, in_fast_recovery: bool) {
        if bytes_acked == 0 || in_fast_recovery {
            // 7.2.1: no increase in Fast Recovery.
            return;
        }
        if self.cwnd <= self.ssthresh {
            // 7.2.1 slow start: only while cwnd is fully used; by at most
            // min(bytes acked, L * PMDCS) with L = 1.
            if fully_utilized {
                self.cwnd += bytes_acked.min(self.pmdcs);
            }
        } else {
            // 7.2.2 congestion avoidance.
            self.partial_bytes_acked = self.partial_bytes_acked.saturating_add(bytes_acked);
            if self.partial_bytes_acked >= self.cwnd && fully_utilized {
                self.partial_bytes_acked -= self.cwnd;
                self.cwnd += self.pmdcs;
            } else if self.partial_bytes_acked > self.cwnd {
                self.partial_bytes_acked = self.cwnd;
            }
        }
    }

    /// 7.2.2: all outstanding data acknowledged.
    pub fn on_all_acked(&mut self) {
        self.partial_bytes_acked = 0;
    }

    /// 7.2.3: loss detected from SACKs (fast retransmit); with RFC 7661
    /// 4.4.1 in the non-validated phase, half of max(pipeACK,
    /// LossFlightSize) rather than half of an unused cwnd.
    pub fn on_fast_retransmit(&mut self, now: Time) {
        let base = match &self.cwv {
            Some(cwv) => cwv.loss_base(now, self.cwnd, self.flight_at_last_sack),
            None => self.cwnd,
        };
        self.ssthresh = (base / 2).max(4 * self.pmdcs);
        self.cwnd = self.ssthresh;
        self.partial_bytes_acked = 0;
    }

    /// 7.2.3 and 6.3.3 E1: the T3-rtx timer expired.
    pub fn on_t3_expiry(&mut self) {
        self.ssthresh = (self.cwnd / 2).max(4 * self.pmdcs);
        self.cwnd = self.pmdcs;
        self.partial_bytes_acked = 0;
        if let Some(cwv) = &mut self.cwv {
            cwv.restart();
        }
    }

    /// The T3 expiry that collapsed cwnd was spurious (RFC 4015 3.2): cwnd and
    /// ssthresh return to at least what they were before it.
    pub fn undo(&mut self, cwnd: u32, ssthresh: u32) {
        self.cwnd = self.cwnd.max(cwnd);
        self.ssthresh = self.ssthresh.max(ssthresh);
    }

    /// 7.2.1: while no data is sent, cwnd = max(cwnd/2, 4*PMDCS) once per RTO;
    /// before the first reduction, ssthresh = cwnd. `idle_rtos` is how many RTOs
    /// passed without sending. A cwnd at or below 4*PMDCS is left alone (the
    /// rule only ever shrinks it).
    pub fn on_idle(&mut self, idle_rtos: u32) {
        let floor = 4 * self.pmdcs;
        for _ in 0..idle_rtos.min(32) {
            if self.cwnd <= floor {
                break;
            }
            self.ssthresh = self.ssthresh.max(self.cwnd);
            self.cwnd = (self.cwnd / 2).max(floor);
        }
    }
}

impl CongestionController for Rfc9260 {
    fn cwnd(&self) -> u32 {
        self.cwnd
    }
    fn ssthresh(&self) -> u32 {
        self.ssthresh
    }
    fn pmdcs(&self) -> u32 {
        self.pmdcs
    }
    fn on_ack(&mut self, ack: &AckSample) {
        self.flight_at_last_sack = ack.flight_before;
        let mut fully_utilized = ack.flight_before >= self.cwnd;
        if let Some(cwv) = &mut self.cwv {
            cwv.on_ack(ack.now, ack.bytes_acked, ack.rtt, ack.in_fast_recovery);
            // RFC 7661 4.3: a validated window may grow though not full.
            fully_utilized = cwv.may_grow(ack.now, self.cwnd, fully_utilized);
            if cwv.nvp_expired(ack.now) {
                // RFC 7661 4.4.3: the NVP ran out, the unused window goes.
                self.ssthresh = self.ssthresh.max(self.cwnd / 4 * 3);
                self.cwnd = (self.cwnd / 2).max(4 * self.pmdcs).min(self.cwnd);
            }
        }
        self.grow(ack.bytes_acked, fully_utilized, ack.in_fast_recovery);
    }
    fn on_all_acked(&mut self) {
        Rfc9260::on_all_acked(self);
    }
    fn on_fast_retransmit(&mut self, now: Time) {
        Rfc9260::on_fast_retransmit(self, now);
    }
    fn on_t3_expiry(&mut self, _now: Time) {
        Rfc9260::on_t3_expiry(self);
    }
    fn undo(&mut self, cwnd: u32, ssthresh: u32) {
        Rfc9260::undo(self, cwnd, ssthresh);
    }
    fn on_idle(&mut self, idle_rtos: u32) {
        // RFC 7661 4.3 replaces 7.2.1's decay: the window is kept for the
        // non-validated period.
        if self.cwv.is_none() {
            Rfc9260::on_idle(self, idle_rtos);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MTU: u32 = 1172;

    #[test]
    fn initial_cwnd_follows_7_2_1() {
        assert_eq!(Rfc9260::new(MTU, None, 1 << 20).cwnd(), 4404);
        assert_eq!(Rfc9260::new(1452, None, 1 << 20).cwnd(), 4404);
        assert_eq!(Rfc9260::new(9000, None, 1 << 20).cwnd(), 18000);
        assert_eq!(Rfc9260::new(500, None, 1 << 20).cwnd(), 2000);
        assert_eq!(Rfc9260::new(MTU, Some(3000), 1 << 20).cwnd(), 3000);
    }

    #[test]
    fn slow_start_grows_by_at_most_one_pmdcs_and_only_when_cwnd_is_used() {
        let mut cc = Rfc9260::new(MTU, None, 1 << 20);
        cc.on_ack(3000, 1000, false);
        assert_eq!(cc.cwnd(), 4404, "not fully utilized: no growth");
        cc.on_ack(3000, 4404, false);
        assert_eq!(cc.cwnd(), 4404 + MTU);
        cc.on_ack(500, 9000, false);
        assert_eq!(cc.cwnd(), 4404 + MTU + 500);
        cc.on_ack(3000, 9000, true);
        assert_eq!(cc.cwnd(), 4404 + MTU + 500, "no growth in fast recovery");
    }

    #[test]
    fn congestion_avoidance_adds_one_pmdcs_per_cwnd_acked() {
        let mut cc = Rfc9260::new(MTU, Some(10_000), 5_000);
        cc.on_ack(6_000, 10_000, false);
        assert_eq!((cc.cwnd(), cc.partial_bytes_acked()), (10_000, 6_000));
        cc.on_ack(6_000, 10_000, false);
        assert_eq!((cc.cwnd(), cc.partial_bytes_acked()), (10_000 + MTU, 2_000));
        cc.on_ack(20_000, 100, false);
        assert_eq!(
            cc.partial_bytes_acked(),
            cc.cwnd(),
            "capped at cwnd when underused"
        );
    }

    #[test]
    fn fast_retransmit_halves_and_t3_collapses_cwnd() {
        let mut cc = Rfc9260::new(MTU, Some(20_000), 1 << 20);
        cc.on_fast_retransmit(Time::ZERO);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (10_000, 10_000));
        cc.on_fast_retransmit(Time::ZERO);
        assert_eq!(cc.cwnd(), 5_000);
        cc.on_fast_retransmit(Time::ZERO);
        assert_eq!(cc.cwnd(), 4 * MTU, "never below 4 PMDCS");
        cc.on_t3_expiry();
        assert_eq!((cc.cwnd(), cc.ssthresh()), (MTU, 4 * MTU));
        cc.undo(5_000, 10_000);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (5_000, 10_000), "undone");
        cc.undo(100, 100);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (5_000, 10_000), "never lowered");
    }

    #[test]
    fn an_idle_path_decays_cwnd_once_per_rto_but_never_raises_it() {
        let mut cc = Rfc9260::new(MTU, Some(40_000), 1 << 20);
        cc.on_idle(1);
        assert_eq!((cc.cwnd(), cc.ssthresh()), (20_000, 1 << 20));
        cc.on_idle(10);
        assert_eq!(cc.cwnd(), 4 * MTU);
        let mut small = Rfc9260::new(MTU, None, 1 << 20);
        small.on_idle(3);
        assert_eq!(small.cwnd(), 4404, "below 4 PMDCS: untouched");
    }
}
