//! CUBIC's window growth and reduction (RFC 9438), in segments, for the
//! TCP model. [`crate::cc::CongestionControl`] keeps cwnd and ssthresh and
//! asks this module how much congestion avoidance adds and what a
//! congestion event leaves; slow start is RFC 5681's (no HyStart).
//!
//! Not modelled: the spurious-congestion undo of RFC 9438 4.9 (the model
//! has no DSACK or Eifel detection, so it never learns that a reduction
//! was spurious), and Linux's resetting of the epoch after an idle period.

use std::time::Duration;

use crate::Time;

/// C of RFC 9438 4.2 (segments per second cubed).
pub const C: f64 = 0.4;
/// β_cubic of RFC 9438 4.6: the window left after a congestion event.
pub const BETA: f64 = 0.7;
/// α_cubic of RFC 9438 4.3: 3 (1 - β) / (1 + β), Reno's average growth
/// for a flow that backs off to β.
pub const ALPHA: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);

/// RFC 9438 4.2 eq. 2: K = cbrt((W_max - cwnd_epoch) / C), seconds; zero
/// when the epoch starts at or above W_max.
pub fn k(w_max: f64, cwnd_epoch: f64) -> f64 {
    if w_max > cwnd_epoch {
        ((w_max - cwnd_epoch) / C).cbrt()
    } else {
        0.0
    }
}

/// RFC 9438 4.2 eq. 1: W_cubic(t) = C (t - K)^3 + W_max, segments.
pub fn w_cubic(t: f64, k: f64, w_max: f64) -> f64 {
    C * (t - k).powi(3) + w_max
}

/// One congestion avoidance stage: from its first ACK to the next
/// congestion event (RFC 9438 4.2's "epoch").
#[derive(Debug, Clone, PartialEq)]
struct Epoch {
    start: Time,
    k: f64,
    /// W_est of RFC 9438 4.3, segments.
    w_est: f64,
}

/// CUBIC's state between ACKs.
#[derive(Debug, Clone, PartialEq)]
pub struct Cubic {
    fast_convergence: bool,
    /// W_max, segments: the window before the last reduction (or less,
    /// with fast convergence).
    w_max: f64,
    /// cwnd_prior, segments: cwnd before the last reduction (RFC 9438 4.6).
    cwnd_prior: f64,
    epoch: Option<Epoch>,
    /// RFC 9438 4.8: the first stage after a timeout starts with K = 0 and
    /// W_max = cwnd.
    after_timeout: bool,
}

impl Default for Cubic {
    fn default() -> Self {
        Self::new()
    }
}

impl Cubic {
    /// No congestion event yet: W_max unknown (zero), fast convergence on
    /// (RFC 9438 4.7 SHOULD).
    pub fn new() -> Self {
        Self {
            fast_convergence: true,
            w_max: 0.0,
            cwnd_prior: 0.0,
            epoch: None,
            after_timeout: false,
        }
    }

    /// W_max, segments.
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// K of the current stage, seconds (`None` outside congestion avoidance).
    pub fn epoch_k(&self) -> Option<f64> {
        self.epoch.as_ref().map(|e| e.k)
    }

    /// Congestion avoidance: an ACK at `now` acknowledged `acked` segments
    /// with cwnd `cwnd` segments and smoothed RTT `rtt`. Returns the
    /// segments (fractional) to add to cwnd.
    pub fn on_ack(&mut self, now: Time, cwnd: f64, acked: f64, rtt: Duration) -> f64 {
        let cwnd = cwnd.max(1.0);
        if self.epoch.is_none() {
            // RFC 9438 4.2: the stage starts; cwnd_epoch = cwnd, W_est = cwnd.
            if self.after_timeout || self.w_max <= 0.0 {
                // RFC 9438 4.8 (and no event yet): K = 0, W_max = cwnd.
                self.w_max = cwnd;
                self.after_timeout = false;
            }
            self.epoch = Some(Epoch {
                start: now,
                k: k(self.w_max, cwnd),
                w_est: cwnd,
            });
        }
        let w_max = self.w_max;
        let cwnd_prior = self.cwnd_prior;
        let Some(e) = self.epoch.as_mut() else {
            return 0.0;
        };
        let t = now.since(e.start).as_secs_f64();
        // RFC 9438 4.3: W_est grows as Reno would, by α per cwnd acked; α
        // becomes 1 once W_est reaches cwnd_prior.
        let alpha = if e.w_est >= cwnd_prior { 1.0 } else { ALPHA };
        e.w_est += alpha * acked / cwnd;
        if w_cubic(t, e.k, w_max) < e.w_est {
            // RFC 9438 4.3: the Reno-friendly region, cwnd = W_est.
            return (e.w_est - cwnd).max(0.0);
        }
        // RFC 9438 4.4 and 4.5: aim at W_cubic(t + RTT), kept between cwnd
        // and 1.5 cwnd; grow by (target - cwnd) / cwnd per segment acked.
        let target = w_cubic(t + rtt.as_secs_f64(), e.k, w_max).clamp(cwnd, 1.5 * cwnd);
        (target - cwnd) / cwnd * acked
    }

    /// RFC 9438 4.6 and 4.7: a congestion event with cwnd `cwnd` segments.
    /// Sets W_max (lowered by fast convergence when the window did not
    /// regain the last W_max) and ends the stage; the caller sets ssthresh
    /// to β times the flight.
    pub fn on_congestion(&mut self, cwnd: f64) {
        self.w_max = if self.fast_convergence && cwnd < self.w_max {
            cwnd * (1.0 + BETA) / 2.0
        } else {
            cwnd
        };
        self.cwnd_prior = cwnd;
        self.epoch = None;
    }

    /// RFC 9438 4.8: a retransmission timeout (after [`Cubic::on_congestion`]
    /// for its first expiry): the next stage starts with K = 0.
    pub fn on_timeout(&mut self) {
        self.epoch = None;
        self.after_timeout = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RTT: Duration = Duration::from_millis(100);

    fn at(ms: u64) -> Time {
        Time::from_micros(ms * 1000)
    }

    #[test]
    fn k_and_w_cubic_match_hand_computed_values() {
        // W_max 100, cwnd_epoch 70: K = cbrt(30 / 0.4) = cbrt(75) = 4.2172 s.
        let kk = k(100.0, 70.0);
        assert!((kk - 4.217_163).abs() < 1e-5, "{kk}");
        // At t = 0 the curve starts at cwnd_epoch, at t = K it reaches W_max,
        // and 1 s past K it is 0.4 above.
        assert!((w_cubic(0.0, kk, 100.0) - 70.0).abs() < 1e-9);
        assert!((w_cubic(kk, kk, 100.0) - 100.0).abs() < 1e-9);
        assert!((w_cubic(kk + 1.0, kk, 100.0) - 100.4).abs() < 1e-9);
        // t = 2 s: 0.4 (2 - 4.2172)^3 + 100 = 95.6403.
        assert!((w_cubic(2.0, kk, 100.0) - 95.640_3).abs() < 1e-3);
        assert_eq!(k(50.0, 60.0), 0.0);
        // α = 3 * 0.3 / 1.7.
        assert!((ALPHA - 0.529_411_76).abs() < 1e-8);
    }

    #[test]
    fn fast_convergence_lowers_w_max_when_the_window_did_not_regain_it() {
        let mut c = Cubic::new();
        c.on_congestion(100.0);
        assert_eq!(c.w_max(), 100.0);
        // Below the last W_max: W_max = 80 * (1 + 0.7) / 2 = 68.
        c.on_congestion(80.0);
        assert!((c.w_max() - 68.0).abs() < 1e-9);
        c.on_congestion(90.0);
        assert_eq!(c.w_max(), 90.0);
    }

    #[test]
    fn concave_growth_aims_at_w_cubic_one_rtt_ahead() {
        let mut c = Cubic::new();
        c.on_congestion(100.0);
        // First ACK of the stage at t = 0 with cwnd 70 (= 0.7 W_max):
        // W_cubic(0) = 70 lies below W_est = 70 + 0.5294 / 70, so this ACK
        // is in the Reno-friendly region and adds α / cwnd = 0.007563.
        let inc = c.on_ack(at(0), 70.0, 1.0, RTT);
        assert!((inc - 0.007_563).abs() < 1e-6, "{inc}");
        // 1 s later, cwnd 80: W_cubic(1) = 86.68 is above W_est, target
        // W_cubic(1.1) = 0.4 (1.1 - 4.2172)^3 + 100 = 87.8846; one segment
        // acked adds (87.8846 - 80) / 80 = 0.098557.
        let inc = c.on_ack(at(1000), 80.0, 1.0, RTT);
        assert!((inc - 0.098_557).abs() < 1e-5, "{inc}");
        assert!((c.epoch_k().unwrap() - 4.217_163).abs() < 1e-5);
        // At t = K the target is W_cubic(K + 0.1) = 100.0004: at cwnd 100
        // growth is nearly flat (the plateau).
        let inc = c.on_ack(at(4217), 100.0, 1.0, RTT);
        assert!(inc < 1e-4, "{inc}");
    }

    #[test]
    fn target_is_capped_at_one_and_a_half_cwnd() {
        let mut c = Cubic::new();
        c.on_congestion(10.0);
        c.on_ack(at(0), 7.0, 1.0, RTT);
        // 20 s later W_cubic is far above; the target is 1.5 cwnd, so one
        // segment acked at cwnd 7 adds (10.5 - 7) / 7 = 0.5.
        let inc = c.on_ack(at(20_000), 7.0, 1.0, RTT);
        assert!((inc - 0.5).abs() < 1e-9, "{inc}");
    }

    #[test]
    fn reno_friendly_region_follows_w_est_when_it_is_above_the_curve() {
        // Small W_max and a long RTT: W_cubic barely moves while W_est gains
        // α per window. W_max 10, cwnd 7: K = cbrt(7.5) = 1.9574 s.
        let mut c = Cubic::new();
        c.on_congestion(10.0);
        let mut cwnd = 7.0;
        // 7 segments acked at t = 0: W_est = 7 + 7 * 0.5294 / 7 = 7.5294;
        // W_cubic(0) = 7 < W_est, so cwnd becomes W_est.
        let mut added = 0.0;
        for _ in 0..7 {
            let inc = c.on_ack(at(0), cwnd, 1.0, RTT);
            cwnd += inc;
            added += inc;
        }
        assert!(added > 0.45 && added < 0.6, "{added}");
        // Switched to pure cubic growth the same ACKs would add far less
        // (target W_cubic(0.1) = 7.30, 7 * 0.3/7 = 0.3 at most).
    }

    #[test]
    fn after_a_timeout_the_stage_starts_with_k_zero_at_the_current_window() {
        let mut c = Cubic::new();
        c.on_congestion(100.0);
        c.on_timeout();
        // RFC 9438 4.8: W_max = cwnd at the stage's start, K = 0: convex
        // growth from there.
        c.on_ack(at(0), 20.0, 1.0, RTT);
        assert_eq!(c.w_max(), 20.0);
        assert_eq!(c.epoch_k(), Some(0.0));
    }
}
