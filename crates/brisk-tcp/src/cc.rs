//! Congestion control, RFC 5681: slow start, congestion avoidance and the
//! window reductions on loss. The window is held in bytes; with
//! `cwnd_in_packets` it is always a whole number of segments and the sender
//! counts segments instead of bytes, as ns-2 does.
//!
//! With `congestion_control = cubic` congestion avoidance and the
//! reductions follow CUBIC (RFC 9438, [`crate::cubic`]) instead of Reno;
//! slow start, recovery and the RTO's loss window stay RFC 5681's.

use std::time::Duration;

use crate::Time;
use crate::config::{CongestionAlgorithm, TcpConfig};
use crate::cubic::{self, Cubic};

/// cwnd, ssthresh and how they are counted.
#[derive(Debug, Clone, PartialEq)]
pub struct CongestionControl {
    cwnd: u32,
    ssthresh: u32,
    smss: u32,
    packets: bool,
    /// Appropriate Byte Counting (RFC 3465): congestion avoidance counts
    /// data acknowledged, not ACKs.
    abc: bool,
    /// Congestion avoidance's progress towards the next segment: ACKs (or,
    /// with `abc`, segments) in packet mode, bytes acknowledged with `abc`
    /// in byte mode.
    ca_count: u64,
    /// CUBIC's state; `None`: Reno.
    cubic: Option<Cubic>,
    /// CUBIC's growth not yet added to cwnd: segments in packet mode,
    /// bytes in byte mode.
    carry: f64,
}

impl CongestionControl {
    /// The initial window (RFC 5681 3.1) for a sender MSS of `smss`.
    pub fn new(cfg: &TcpConfig, smss: u32) -> Self {
        let smss = smss.max(1);
        Self {
            cwnd: cfg.initial_window_segments(smss).saturating_mul(smss),
            ssthresh: cfg.initial_ssthresh,
            smss,
            packets: cfg.cwnd_in_packets,
            abc: cfg.abc,
            ca_count: 0,
            cubic: match cfg.congestion_control {
                CongestionAlgorithm::Reno => None,
                CongestionAlgorithm::Cubic => Some(Cubic::new()),
            },
            carry: 0.0,
        }
    }

    /// CUBIC's state, if CUBIC is the algorithm.
    pub fn cubic(&self) -> Option<&Cubic> {
        self.cubic.as_ref()
    }

    /// Congestion window, bytes.
    pub fn cwnd(&self) -> u32 {
        self.cwnd
    }

    /// Slow-start threshold, bytes.
    pub fn ssthresh(&self) -> u32 {
        self.ssthresh
    }

    /// Whether cwnd and flight are counted in segments.
    pub fn in_packets(&self) -> bool {
        self.packets
    }

    /// The sender MSS.
    pub fn smss(&self) -> u32 {
        self.smss
    }

    /// RFC 5681 3.1: slow start while cwnd < ssthresh.
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// An ACK at `now` acknowledged `acked` new bytes, `segments` whole
    /// segments, outside fast recovery; `rtt` is the smoothed RTT (CUBIC's
    /// target looks one RTT ahead).
    pub fn on_ack(&mut self, acked: u64, segments: u64, now: Time, rtt: Duration) {
        if acked == 0 {
            return;
        }
        if !self.in_slow_start() && self.cubic.is_some() {
            self.cubic_on_ack(acked, segments, now, rtt);
            return;
        }
        if self.packets {
            if self.in_slow_start() {
                // One segment per segment acknowledged (at least one per
                // ACK): ns-2's opencwnd with a sink that acks every segment,
                // and Linux's tcp_slow_start.
                let n = u32::try_from(segments.max(1)).unwrap_or(u32::MAX);
                self.cwnd = self.cwnd.saturating_add(self.smss.saturating_mul(n));
            } else {
                // ns-2 adds 1/cwnd per ACK: one segment after cwnd ACKs.
                // With `abc`, one per cwnd segments acknowledged, as Linux's
                // tcp_cong_avoid_ai counts them.
                self.ca_count += if self.abc { segments.max(1) } else { 1 };
                let w = u64::from((self.cwnd / self.smss).max(1));
                if self.ca_count >= w {
                    let delta = self.ca_count / w;
                    self.ca_count -= delta * w;
                    let grow = u32::try_from(delta).unwrap_or(u32::MAX);
                    self.cwnd = self.cwnd.saturating_add(self.smss.saturating_mul(grow));
                }
            }
        } else if self.in_slow_start() {
            // RFC 5681 3.1 eq. 2: cwnd += min(N, SMSS).
            let n = u32::try_from(acked.min(u64::from(self.smss))).unwrap_or(self.smss);
            self.cwnd = self.cwnd.saturating_add(n);
        } else if self.abc {
            // RFC 3465 2.1: one SMSS once a cwnd's worth of bytes is acked.
            self.ca_count += acked;
            if self.ca_count >= u64::from(self.cwnd.max(1)) {
                self.ca_count -= u64::from(self.cwnd.max(1));
                self.cwnd = self.cwnd.saturating_add(self.smss);
            }
        } else {
            // RFC 5681 3.1 eq. 3: cwnd += SMSS*SMSS/cwnd, at least one byte.
            let inc = (u64::from(self.smss) * u64::from(self.smss)) / u64::from(self.cwnd.max(1));
            self.cwnd = self
                .cwnd
                .saturating_add(u32::try_from(inc.max(1)).unwrap_or(u32::MAX));
        }
    }

    /// RFC 9438 4.2 to 4.5 in congestion avoidance: cwnd grows towards
    /// W_cubic (or W_est in the Reno-friendly region).
    fn cubic_on_ack(&mut self, acked: u64, segments: u64, now: Time, rtt: Duration) {
        let smss = f64::from(self.smss);
        let (window, acked_segs) = if self.packets {
            let n = if self.abc { segments.max(1) } else { 1 };
            (f64::from(self.cwnd / self.smss) + self.carry, n as f64)
        } else {
            (
                (f64::from(self.cwnd) + self.carry) / smss,
                acked as f64 / smss,
            )
        };
        let Some(c) = self.cubic.as_mut() else {
            return;
        };
        let inc = c.on_ack(now, window, acked_segs, rtt);
        self.carry += if self.packets { inc } else { inc * smss };
        let whole = self.carry.floor();
        self.carry -= whole;
        // Whole segments (packet mode) or bytes; `as` saturates.
        let whole = whole as u32;
        let grow = if self.packets {
            self.smss.saturating_mul(whole)
        } else {
            whole
        };
        self.cwnd = self.cwnd.saturating_add(grow);
    }

    /// The ssthresh a loss with this flight leaves. Reno, RFC 5681 3.1
    /// eq. 4: max(FlightSize / 2, 2 * SMSS), in packets max(floor(segments
    /// / 2), 2) segments. CUBIC: cwnd * β_cubic (0.7), at least 2
    /// segments: RFC 9438 4.6 allows cwnd in place of FlightSize, and Linux
    /// (which the `linux` preset models) uses cwnd. FlightSize would be
    /// wrong here: the model's windows leave in one burst, so when a loss
    /// is detected the ACKs of the window's first part have already
    /// shrunk the flight to a fraction of cwnd.
    pub fn loss_ssthresh(&self, flight_bytes: u64, flight_segs: u64) -> u32 {
        let smss = u64::from(self.smss);
        let cwnd = u64::from(self.cwnd);
        let v = match (self.cubic.is_some(), self.packets) {
            (false, true) => (flight_segs / 2).max(2) * smss,
            (false, false) => (flight_bytes / 2).max(2 * smss),
            // `as` truncates: floor, as Linux's integer β does.
            (true, true) => (((cwnd / smss) as f64 * cubic::BETA) as u64).max(2) * smss,
            (true, false) => ((cwnd as f64 * cubic::BETA) as u64).max(2 * smss),
        };
        u32::try_from(v).unwrap_or(u32::MAX)
    }

    /// Sets ssthresh for a loss with this flight (a congestion event: CUBIC
    /// records W_max, RFC 9438 4.6 and 4.7).
    pub fn reduce_ssthresh(&mut self, flight_bytes: u64, flight_segs: u64) {
        self.ssthresh = self.loss_ssthresh(flight_bytes, flight_segs);
        self.ca_count = 0;
        self.carry = 0.0;
        let window = f64::from(self.cwnd) / f64::from(self.smss);
        if let Some(c) = self.cubic.as_mut() {
            c.on_congestion(window);
        }
    }

    /// Sets cwnd (bytes; whole segments in packet mode).
    pub fn set_cwnd(&mut self, cwnd: u32) {
        self.cwnd = if self.packets {
            (cwnd / self.smss).max(1) * self.smss
        } else {
            cwnd.max(1)
        };
    }

    /// cwnd = ssthresh (fast recovery with SACK, RFC 6675 5 step 4.2; a full
    /// ACK in NewReno, RFC 6582 3.2 step 3).
    pub fn cwnd_to_ssthresh(&mut self) {
        self.set_cwnd(self.ssthresh);
    }

    /// RFC 5681 3.1: after a retransmission timeout cwnd is the loss window,
    /// one segment.
    pub fn on_rto(&mut self) {
        self.cwnd = self.smss;
        self.ca_count = 0;
        self.carry = 0.0;
        // RFC 9438 4.8: the next congestion avoidance starts with K = 0.
        if let Some(c) = self.cubic.as_mut() {
            c.on_timeout();
        }
    }

    /// NewReno inflation: one segment per further duplicate ACK (RFC 5681
    /// 3.2 step 4, RFC 6582 3.2 step 4).
    pub fn inflate(&mut self, segments: u32) {
        self.cwnd = self.cwnd.saturating_add(self.smss.saturating_mul(segments));
    }

    /// NewReno partial ACK (RFC 6582 3.2 step 5): deflate by the data
    /// acknowledged, add back one SMSS if at least one SMSS was acknowledged.
    pub fn deflate(&mut self, acked_bytes: u64, acked_segs: u64) {
        let acked = if self.packets {
            acked_segs.saturating_mul(u64::from(self.smss))
        } else {
            acked_bytes
        };
        let mut c = u64::from(self.cwnd).saturating_sub(acked);
        if acked >= u64::from(self.smss) {
            c += u64::from(self.smss);
        }
        self.set_cwnd(u32::try_from(c).unwrap_or(u32::MAX));
    }

    /// Whether one more segment of `len` bytes fits: flight + len <= cwnd in
    /// bytes, or flight + 1 <= cwnd in segments; `extra` segments beyond
    /// cwnd are allowed (Limited Transmit).
    pub fn allows(&self, flight_bytes: u64, flight_segs: u64, len: u64, extra: u32) -> bool {
        if self.packets {
            flight_segs < u64::from(self.cwnd / self.smss) + u64::from(extra)
        } else {
            flight_bytes + len <= u64::from(self.cwnd) + u64::from(extra) * u64::from(self.smss)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RTT: Duration = Duration::from_millis(100);

    fn cc(packets: bool) -> CongestionControl {
        let cfg = TcpConfig {
            cwnd_in_packets: packets,
            initial_window: Some(2),
            initial_ssthresh: 4 * 1000,
            ..TcpConfig::rfc()
        };
        CongestionControl::new(&cfg, 1000)
    }

    #[test]
    fn with_abc_delayed_acks_do_not_slow_congestion_avoidance() {
        // cwnd 4 segments, in congestion avoidance; ACKs for 2 segments each.
        let grow = |packets: bool, abc: bool| {
            let cfg = TcpConfig {
                cwnd_in_packets: packets,
                abc,
                initial_window: Some(4),
                initial_ssthresh: 4 * 1000,
                ..TcpConfig::rfc()
            };
            let mut c = CongestionControl::new(&cfg, 1000);
            for _ in 0..2 {
                c.on_ack(2000, 2, Time::ZERO, RTT);
            }
            c.cwnd()
        };
        // Four segments acknowledged (one cwnd): one segment more with ABC.
        assert_eq!(grow(true, true), 5000);
        assert_eq!(grow(false, true), 5000);
        // Without it, two ACKs: packet mode waits for 4 ACKs, byte mode
        // adds SMSS*SMSS/cwnd per ACK (250, then 1000*1000/4250 = 235).
        assert_eq!(grow(true, false), 4000);
        assert_eq!(grow(false, false), 4485);
    }

    #[test]
    fn slow_start_then_congestion_avoidance_in_bytes() {
        let mut c = cc(false);
        assert_eq!(c.cwnd(), 2000);
        c.on_ack(1000, 1, Time::ZERO, RTT);
        c.on_ack(500, 0, Time::ZERO, RTT);
        assert_eq!(c.cwnd(), 3500);
        c.on_ack(3000, 3, Time::ZERO, RTT); // min(N, SMSS)
        assert_eq!(c.cwnd(), 4500);
        assert!(!c.in_slow_start());
        c.on_ack(1000, 1, Time::ZERO, RTT); // 1000*1000/4500 = 222
        assert_eq!(c.cwnd(), 4722);
    }

    #[test]
    fn packet_mode_grows_by_segments_and_halves_with_floor() {
        let mut c = cc(true);
        c.on_ack(1, 0, Time::ZERO, RTT);
        assert_eq!(c.cwnd(), 3000);
        c.on_ack(3000, 3, Time::ZERO, RTT);
        assert_eq!(
            c.cwnd(),
            6000,
            "slow start overshoots ssthresh by what was acked"
        );
        c.set_cwnd(4000);
        for _ in 0..3 {
            c.on_ack(1000, 1, Time::ZERO, RTT);
            assert_eq!(c.cwnd(), 4000);
        }
        c.on_ack(1000, 1, Time::ZERO, RTT);
        assert_eq!(c.cwnd(), 5000);
        assert_eq!(c.loss_ssthresh(15_000, 15), 7000);
        assert_eq!(c.loss_ssthresh(15_000, 3), 2000);
        assert_eq!(cc(false).loss_ssthresh(15_000, 15), 7500);
        assert_eq!(cc(false).loss_ssthresh(3000, 3), 2000);
        assert!(c.allows(0, 4, 1, 0) && !c.allows(0, 5, 1, 0) && c.allows(0, 5, 1, 1));
    }

    #[test]
    fn newreno_inflates_and_deflates() {
        let mut c = cc(false);
        c.reduce_ssthresh(10_000, 10);
        c.cwnd_to_ssthresh();
        c.inflate(3);
        assert_eq!(c.cwnd(), 8000);
        c.deflate(2000, 2);
        assert_eq!(c.cwnd(), 7000);
        c.deflate(500, 1);
        assert_eq!(c.cwnd(), 6500);
        c.on_rto();
        assert_eq!(c.cwnd(), 1000);
    }

    #[test]
    fn cubic_reduces_to_0_7_of_cwnd_and_grows_along_the_curve_in_packets() {
        let cfg = TcpConfig {
            cwnd_in_packets: true,
            abc: true,
            initial_window: Some(100),
            initial_ssthresh: 50 * 1000,
            congestion_control: CongestionAlgorithm::Cubic,
            ..TcpConfig::rfc()
        };
        let mut c = CongestionControl::new(&cfg, 1000);
        // RFC 9438 4.6: floor(100 * 0.7) = 70 segments, whatever the flight.
        c.reduce_ssthresh(40_000, 40);
        assert_eq!(c.ssthresh(), 70_000);
        c.cwnd_to_ssthresh();
        assert_eq!(c.cubic().map(Cubic::w_max), Some(100.0));
        // K = cbrt(30 / 0.4) = 4.217 s; 1 s into the stage the target is
        // W_cubic(1.1) = 87.88: each segment acked adds (87.88 - 70) / 70
        // = 0.255, so 4 segments add one whole segment.
        c.on_ack(1000, 1, Time::ZERO, RTT);
        let t = Time::from_secs(1);
        for _ in 0..4 {
            c.on_ack(1000, 1, t, RTT);
        }
        assert_eq!(c.cwnd(), 71_000);
        // RFC 9438 4.8: after a timeout cwnd is one segment and the next
        // stage starts with K = 0.
        c.reduce_ssthresh(71_000, 71);
        c.on_rto();
        assert_eq!((c.cwnd(), c.ssthresh()), (1000, 49_000));
    }
}
