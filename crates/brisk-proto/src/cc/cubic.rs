//! CUBIC (RFC 9438) for SCTP: the window in bytes, PMDCS as the segment
//! size, slow start as RFC 9260 7.2.1 has it, and RFC 9260's floor of
//! 4*PMDCS on a reduction by SACK (7.2.3).
//!
//! In congestion avoidance the window follows W_cubic(t) = C*(t-K)^3 + W_max
//! (RFC 9438 4.2) from the moment the epoch began, or the Reno-friendly
//! estimate W_est when that is larger (4.3). A loss found by SACK multiplies
//! cwnd by beta_cubic = 0.7 (4.6) and lowers W_max further when the flow
//! lost before reaching its previous W_max (fast convergence, 4.7).

use std::time::Duration;

use super::{AckSample, CongestionController, cwv::Cwv};
use crate::time::Time;

/// RFC 9438 4.1: C, segments per second cubed.
pub const C: f64 = 0.4;
/// RFC 9438 4.1: the multiplicative decrease factor.
pub const BETA: f64 = 0.7;
/// RFC 9438 4.3: alpha_cubic = 3 (1 - beta) / (1 + beta), W_est's growth per
/// RTT (segments) until W_est reaches cwnd_prior.
pub const ALPHA: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);
/// cwnd's fractional bytes are kept in 1/FRAC units.
const FRAC: f64 = 1024.0;

/// RFC 9438 4.2: K, the seconds W_cubic takes from `cwnd_epoch` back to
/// `w_max` (both bytes; segments of `pmdcs` bytes); 0 from at or above it.
pub fn k_secs(w_max: u32, cwnd_epoch: u32, pmdcs: u32) -> f64 {
    let below = f64::from(w_max.saturating_sub(cwnd_epoch)) / f64::from(pmdcs.max(1));
    (below / C).cbrt()
}

/// RFC 9438 4.2 Figure 1, in bytes: W_cubic(t) = C*(t-K)^3 + W_max.
pub fn w_cubic(t_secs: f64, k_secs: f64, w_max: u32, pmdcs: u32) -> f64 {
    let d = t_secs - k_secs;
    C * d * d * d * f64::from(pmdcs) + f64::from(w_max)
}

/// One congestion avoidance stage (RFC 9438 4.2's epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Epoch {
    /// When it began, moved later by every application-limited or idle
    /// spell (RFC 9438 4.2 and 5.8: t excludes them).
    start: Time,
    /// K in microseconds.
    k_us: u64,
    /// W_est (4.3) in 1/FRAC bytes.
    w_est: u64,
}

/// What a reduction changed, for RFC 9438 4.9's undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Saved {
    cwnd: u32,
    ssthresh: u32,
    w_max: u32,
    cwnd_prior: u32,
    epoch: Option<Epoch>,
}

/// CUBIC state of one destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cubic {
    cwnd: u32,
    /// cwnd's fraction of a byte, in 1/FRAC units.
    cwnd_frac: u32,
    ssthresh: u32,
    /// PMDCS: the largest DATA chunk that fits the path (CUBIC's segment).
    pmdcs: u32,
    /// RFC 9438 4.1: cwnd just before the latest reduction (after fast
    /// convergence, 4.7), bytes; 0 before the first.
    w_max: u32,
    /// RFC 9438 4.1: cwnd before the latest reduction.
    cwnd_prior: u32,
    epoch: Option<Epoch>,
    /// RFC 9438 4.8: the next epoch follows a T3 expiry (K = 0, W_max =
    /// cwnd at its start).
    after_timeout: bool,
    /// Smoothed RTT from the SACKs' measurements (the RTT of 4.4's
    /// W_cubic(t + RTT)).
    srtt: Option<Duration>,
    last_sack_at: Option<Time>,
    last_sent_at: Option<Time>,
    saved: Option<Saved>,
    /// RFC 7661, when `cwnd_validation` is on.
    cwv: Option<Cwv>,
    /// The flight size before the latest SACK (LossFlightSize, RFC 7661).
    flight_at_last_sack: u32,
}

impl Cubic {
    /// Initial cwnd as RFC 9260 7.2.1 (or configured); ssthresh the peer's
    /// window ("arbitrarily high").
    pub fn new(pmdcs: u32, initial_cwnd: Option<u32>, peer_rwnd: u32) -> Self {
        let cwnd = initial_cwnd.unwrap_or((4 * pmdcs).min((2 * pmdcs).max(4404)));
        Self {
            cwnd: cwnd.max(pmdcs),
            cwnd_frac: 0,
            ssthresh: peer_rwnd.max(pmdcs),
            pmdcs,
            w_max: 0,
            cwnd_prior: 0,
            epoch: None,
            after_timeout: false,
            srtt: None,
            last_sack_at: None,
            last_sent_at: None,
            saved: None,
            cwv: None,
            flight_at_last_sack: 0,
        }
    }

    /// With RFC 7661 congestion window validation (`cwnd_validation`).
    pub fn with_cwnd_validation(mut self, on: bool) -> Self {
        self.cwv = on.then(Cwv::default);
        self
    }

    /// W_max, bytes.
    pub fn w_max(&self) -> u32 {
        self.w_max
    }

    /// K of the current epoch, if one runs.
    pub fn k(&self) -> Option<Duration> {
        self.epoch.map(|e| Duration::from_micros(e.k_us))
    }

    fn floor(&self) -> u32 {
        4 * self.pmdcs
    }

    fn cwnd_f(&self) -> f64 {
        f64::from(self.cwnd) + f64::from(self.cwnd_frac) / FRAC
    }

    fn set_cwnd_f(&mut self, v: f64) {
        let v = v.clamp(0.0, f64::from(u32::MAX));
        self.cwnd = v.floor() as u32;
        self.cwnd_frac = ((v - v.floor()) * FRAC) as u32;
    }

    fn set_cwnd(&mut self, v: u32) {
        self.cwnd = v;
        self.cwnd_frac = 0;
    }

    /// RFC 9438 4.2: a congestion avoidance stage begins now.
    fn begin_epoch(&mut self, now: Time) -> Epoch {
        let k = if self.after_timeout || self.w_max <= self.cwnd {
            // 4.8 after a timeout, or cwnd already at W_max: the plateau
            // is here.
            self.after_timeout = false;
            self.w_max = self.cwnd;
            0.0
        } else {
            k_secs(self.w_max, self.cwnd, self.pmdcs)
        };
        Epoch {
            start: now,
            k_us: (k * 1e6) as u64,
            w_est: u64::from(self.cwnd) * FRAC as u64,
        }
    }

    /// RFC 9438 4.3 to 4.5: one SACK of `acked` bytes in congestion
    /// avoidance.
    fn congestion_avoidance(&mut self, now: Time, acked: u32) {
        let mut e = match self.epoch {
            Some(e) => e,
            None => self.begin_epoch(now),
        };
        let cwnd = self.cwnd_f().max(1.0);
        let t = now.since(e.start).as_secs_f64();
        let k = e.k_us as f64 / 1e6;
        // 4.3: W_est grows by alpha segments per cwnd acknowledged; alpha
        // becomes 1 once W_est reaches cwnd_prior.
        let w_est = e.w_est as f64 / FRAC;
        let alpha = if w_est >= f64::from(self.cwnd_prior) {
            1.0
        } else {
            ALPHA
        };
        let w_est = w_est + alpha * f64::from(self.pmdcs) * f64::from(acked) / cwnd;
        e.w_est = (w_est * FRAC) as u64;
        let next = if w_cubic(t, k, self.w_max, self.pmdcs) < w_est {
            // 4.3: the Reno-friendly region.
            w_est
        } else {
            // 4.4, 4.5: towards W_cubic one RTT ahead, at most 1.5 cwnd.
            let rtt = self.srtt.unwrap_or(Duration::from_millis(100));
            let target =
                w_cubic(t + rtt.as_secs_f64(), k, self.w_max, self.pmdcs).clamp(cwnd, 1.5 * cwnd);
            cwnd + (target - cwnd) * f64::from(acked) / cwnd
        };
        self.set_cwnd_f(next.max(self.cwnd_f()));
        self.epoch = Some(e);
    }

    fn save(&mut self) {
        self.saved = Some(Saved {
            cwnd: self.cwnd,
            ssthresh: self.ssthresh,
            w_max: self.w_max,
            cwnd_prior: self.cwnd_prior,
            epoch: self.epoch,
        });
    }

    /// RFC 9438 4.6 and 4.7: a loss found by SACK, once per recovery.
    /// With RFC 7661 in the non-validated phase the reduction is taken from
    /// max(pipeACK, LossFlightSize) (RFC 7661 4.4.1, beta_cubic for its
    /// 1/2) instead of the unused cwnd.
    pub fn on_fast_retransmit(&mut self, now: Time) {
        self.save();
        let base = match &self.cwv {
            Some(cwv) => cwv.loss_base(now, self.cwnd, self.flight_at_last_sack),
            None => self.cwnd,
        };
        // 4.7 fast convergence: a flow that lost below its last W_max
        // leaves room for others.
        self.w_max = if base < self.w_max {
            (f64::from(base) * (1.0 + BETA) / 2.0) as u32
        } else {
            base
        };
        // 4.3's cwnd_prior: the window in use when the loss came.
        self.cwnd_prior = base;
        // 4.6, with RFC 9260 7.2.3's floor of 4*PMDCS.
        self.ssthresh = ((f64::from(base) * BETA) as u32).max(self.floor());
        self.set_cwnd(self.ssthresh);
        self.epoch = None;
        self.after_timeout = false;
    }

    /// RFC 9438 4.8: cwnd = 1 PMDCS (RFC 9260 7.2.3), ssthresh from beta;
    /// the next congestion avoidance stage starts with K = 0.
    pub fn on_t3_expiry(&mut self) {
        self.save();
        self.cwnd_prior = self.cwnd;
        self.ssthresh = ((self.cwnd_f() * BETA) as u32).max(self.floor());
        self.set_cwnd(self.pmdcs);
        self.epoch = None;
        self.after_timeout = true;
        if let Some(cwv) = &mut self.cwv {
            cwv.restart();
        }
    }

    /// RFC 9438 4.9: the reduction was spurious; the state before it
    /// returns, cwnd and ssthresh at least `cwnd` and `ssthresh`.
    pub fn undo(&mut self, cwnd: u32, ssthresh: u32) {
        if let Some(s) = self.saved.take() {
            self.w_max = s.w_max;
            self.cwnd_prior = s.cwnd_prior;
            self.epoch = s.epoch;
            self.after_timeout = false;
            self.ssthresh = self.ssthresh.max(s.ssthresh);
            if s.cwnd > self.cwnd {
                self.set_cwnd(s.cwnd);
            }
        }
        if cwnd > self.cwnd {
            self.set_cwnd(cwnd);
        }
        self.ssthresh = self.ssthresh.max(ssthresh);
    }

    /// RFC 9260 7.2.1: `idle_rtos` RTOs without data: cwnd halves per RTO
    /// down to 4*PMDCS, and the next epoch starts from there towards the
    /// old W_max. With RFC 7661 the window is kept instead (4.3).
    pub fn on_idle(&mut self, idle_rtos: u32) {
        if self.cwv.is_some() {
            return;
        }
        let floor = self.floor();
        for _ in 0..idle_rtos.min(32) {
            if self.cwnd <= floor {
                break;
            }
            self.ssthresh = self.ssthresh.max(self.cwnd);
            self.w_max = self.w_max.max(self.cwnd);
            self.set_cwnd((self.cwnd / 2).max(floor));
            self.epoch = None;
        }
    }
}

impl CongestionController for Cubic {
    fn cwnd(&self) -> u32 {
        self.cwnd
    }
    fn ssthresh(&self) -> u32 {
        self.ssthresh
    }
    fn pmdcs(&self) -> u32 {
        self.pmdcs
    }

    /// RFC 9438 4.2 and 5.8: data after an idle spell (nothing in flight)
    /// moves the epoch on by the spell, so that t excludes it.
    fn on_sent(&mut self, now: Time, bytes: u32, flight_after: u32) {
        if flight_after <= bytes
            && let Some(e) = &mut self.epoch
        {
            let quiet_since = self.last_sack_at.max(self.last_sent_at).unwrap_or(now);
            e.start = e.start + now.since(quiet_since.max(e.start));
        }
        self.last_sent_at = Some(now);
    }

    fn on_ack(&mut self, ack: &AckSample) {
        let now = ack.now;
        self.flight_at_last_sack = ack.flight_before;
        if let Some(r) = ack.rtt {
            self.srtt = Some(self.srtt.map_or(r, |s| (s * 7 + r) / 8));
        }
        let previous = self.last_sack_at.replace(now);
        // RFC 9438 5.8 (RFC 9260 7.2.1): growth only while cwnd is used;
        // RFC 7661 4.3: or while it is validated.
        let mut may_grow = ack.flight_before >= self.cwnd;
        if let Some(cwv) = &mut self.cwv {
            cwv.on_ack(now, ack.bytes_acked, ack.rtt, ack.in_fast_recovery);
            may_grow = cwv.may_grow(now, self.cwnd, may_grow);
            if cwv.nvp_expired(now) {
                // RFC 7661 4.4.3: the NVP ran out, the unused window goes.
                self.ssthresh = self.ssthresh.max(self.cwnd / 4 * 3);
                self.set_cwnd((self.cwnd / 2).max(self.floor()).min(self.cwnd));
                self.epoch = None;
            }
        }
        if ack.bytes_acked == 0 || ack.in_fast_recovery {
            // RFC 9260 7.2.1: no increase in Fast Recovery.
            return;
        }
        if !may_grow {
            // RFC 9438 5.8 and 4.2: an application-limited spell does not
            // grow cwnd and does not count in t.
            if let (Some(e), Some(p)) = (&mut self.epoch, previous) {
                e.start = e.start + now.since(p.max(e.start));
            }
            return;
        }
        if self.cwnd < self.ssthresh {
            // RFC 9438 4.10 with RFC 9260 7.2.1's slow start: at most one
            // PMDCS per SACK.
            self.set_cwnd(self.cwnd.saturating_add(ack.bytes_acked.min(self.pmdcs)));
            return;
        }
        self.congestion_avoidance(now, ack.bytes_acked);
    }

    fn on_all_acked(&mut self) {}

    fn on_fast_retransmit(&mut self, now: Time) {
        Cubic::on_fast_retransmit(self, now);
    }
    fn on_t3_expiry(&mut self, _now: Time) {
        Cubic::on_t3_expiry(self);
    }
    fn undo(&mut self, cwnd: u32, ssthresh: u32) {
        Cubic::undo(self, cwnd, ssthresh);
    }
    fn on_idle(&mut self, idle_rtos: u32) {
        Cubic::on_idle(self, idle_rtos);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A segment of 1000 bytes keeps the hand computations in segments.
    const SEG: u32 = 1000;
    const RTT: Duration = Duration::from_millis(100);

    fn ack(now: Time, bytes: u32, flight_before: u32) -> AckSample {
        AckSample {
            now,
            bytes_acked: bytes,
            flight_before,
            in_fast_recovery: false,
            rtt: Some(RTT),
            newest_acked_sent_at: None,
            app_limited: false,
        }
    }

    fn at(ms: u64) -> Time {
        Time::from_millis(ms)
    }

    #[test]
    fn k_and_w_cubic_match_rfc_9438_figures_by_hand() {
        // W_max = 100 segments, cwnd_epoch = 70: K = cbrt(30 / 0.4) =
        // cbrt(75) = 4.2172 s.
        let k = k_secs(100 * SEG, 70 * SEG, SEG);
        assert!((k - 4.2172).abs() < 1e-4, "K = {k}");
        assert!((w_cubic(0.0, k, 100 * SEG, SEG) - 70_000.0).abs() < 0.01);
        assert!((w_cubic(k, k, 100 * SEG, SEG) - 100_000.0).abs() < 0.01);
        // t = 2 s: 100 + 0.4 * (2 - 4.2172)^3 = 100 - 4.3599 = 95.640 segments.
        assert!((w_cubic(2.0, k, 100 * SEG, SEG) - 95_640.0).abs() < 1.0);
        // Beyond K the curve is convex: t = 5 s gives 100 + 0.4 * 0.7828^3
        // = 100.1919 segments.
        assert!((w_cubic(5.0, k, 100 * SEG, SEG) - 100_191.9).abs() < 1.0);
        assert_eq!(k_secs(50 * SEG, 70 * SEG, SEG), 0.0);
        assert!((ALPHA - 0.529_411_76).abs() < 1e-6);
    }

    #[test]
    fn a_loss_multiplies_cwnd_by_0_7_with_fast_convergence_on_the_next() {
        let mut cc = Cubic::new(SEG, Some(100 * SEG), 1 << 20);
        cc.on_fast_retransmit(at(0));
        assert_eq!(
            (cc.cwnd(), cc.ssthresh(), cc.w_max()),
            (70_000, 70_000, 100_000)
        );
        // Lost again at 80 segments, below W_max: W_max = 80 * 1.7 / 2 = 68.
        cc.set_cwnd(80 * SEG);
        cc.on_fast_retransmit(at(1000));
        assert_eq!((cc.cwnd(), cc.w_max()), (56_000, 68_000));
        // Never below 4 PMDCS (RFC 9260 7.2.3).
        cc.set_cwnd(5 * SEG);
        cc.on_fast_retransmit(at(2000));
        assert_eq!(cc.cwnd(), 4 * SEG);
    }

    #[test]
    fn congestion_avoidance_follows_the_cubic_curve_back_to_w_max_in_k_seconds() {
        let mut cc = Cubic::new(SEG, Some(100 * SEG), 1 << 20);
        cc.on_fast_retransmit(at(0));
        // One SACK of a whole window per RTT; the first starts the epoch
        // (K = 4.2172 s).
        let mut t = 0;
        let mut trace = Vec::new();
        while t < 6000 {
            t += 100;
            let cwnd = cc.cwnd();
            cc.on_ack(&ack(at(t), cwnd, cwnd));
            trace.push((t, cc.cwnd()));
        }
        assert!((cc.k().unwrap().as_secs_f64() - 4.2172).abs() < 1e-3);
        let at_ms = |ms: u64| trace.iter().find(|(t, _)| *t == ms).unwrap().1;
        // Each SACK moves cwnd to W_cubic(t + RTT) of the epoch (started at
        // the first SACK, 100 ms): at t = 2.1 s, W_cubic(2.1 s) = 100 + 0.4 *
        // (2.1 - 4.2172)^3 = 96.204 segments.
        assert!(
            (i64::from(at_ms(2100)) - 96_204).abs() < 50,
            "{}",
            at_ms(2100)
        );
        // Plateau near W_max around K...
        let near_k = at_ms(4300);
        assert!((99_500..=100_500).contains(&near_k), "{near_k}");
        // ...then convex growth past it.
        assert!(at_ms(6000) > 100_500 + 500, "{}", at_ms(6000));
        // Monotone.
        assert!(trace.windows(2).all(|w| w[0].1 <= w[1].1));
    }

    #[test]
    fn a_small_window_grows_in_the_reno_friendly_region() {
        // W_max = 10 segments: cubic growth is slow (K = cbrt(3 / 0.4) =
        // 1.96 s), W_est grows by alpha = 0.529 segment per RTT.
        let mut cc = Cubic::new(SEG, Some(10 * SEG), 1 << 20);
        cc.on_fast_retransmit(at(0));
        assert_eq!(cc.cwnd(), 7 * SEG);
        let mut t = 0;
        for _ in 0..4 {
            t += 100;
            let cwnd = cc.cwnd();
            cc.on_ack(&ack(at(t), cwnd, cwnd));
        }
        // W_est after 4 RTTs of one window each: 7 + 4 * 0.529 = 9.12
        // segments, above W_cubic(0.3 s) = 10 + 0.4 * (0.3 - 1.957)^3 = 8.18.
        let cwnd = cc.cwnd();
        assert!((9_050..=9_200).contains(&cwnd), "{cwnd}");
    }

    #[test]
    fn an_application_limited_window_neither_grows_nor_advances_the_epoch() {
        let mut cc = Cubic::new(SEG, Some(100 * SEG), 1 << 20);
        cc.on_fast_retransmit(at(0));
        cc.on_ack(&ack(at(100), 70 * SEG, 70 * SEG));
        let cwnd = cc.cwnd();
        // Ten seconds of SACKs for a flight of 10 segments: no growth.
        for i in 1..=100 {
            cc.on_ack(&ack(at(100 + 100 * i), 10 * SEG, 10 * SEG));
        }
        assert_eq!(cc.cwnd(), cwnd);
        // Back to cwnd-limited: the curve resumes where it was, t = 0.1 s:
        // W_cubic(0.2 s) = 100 + 0.4 * (0.2 - 4.2172)^3 = 74.07 segments,
        // not W_cubic(10.2 s), far above W_max (capped at 1.5 cwnd).
        cc.on_ack(&ack(at(10_200), cwnd, cwnd));
        assert!((i64::from(cc.cwnd()) - 74_069).abs() < 10, "{}", cc.cwnd());
    }

    #[test]
    fn an_idle_spell_moves_the_epoch_on() {
        let mut cc = Cubic::new(SEG, Some(100 * SEG), 1 << 20);
        cc.on_fast_retransmit(at(0));
        cc.on_sent(at(0), SEG, 70 * SEG);
        cc.on_ack(&ack(at(100), 70 * SEG, 70 * SEG));
        // All acked at 100 ms; idle until 20 s.
        cc.on_sent(at(20_000), SEG, SEG);
        let cwnd = cc.cwnd();
        cc.on_ack(&ack(at(20_100), cwnd, cwnd));
        // t = 0.1 s, as if the 19.9 s of idleness had not been.
        assert!((i64::from(cc.cwnd()) - 74_069).abs() < 10, "{}", cc.cwnd());
    }

    #[test]
    fn t3_collapses_to_one_pmdcs_and_restarts_the_curve_with_k_zero() {
        let mut cc = Cubic::new(SEG, Some(100 * SEG), 1 << 20);
        cc.on_t3_expiry();
        assert_eq!((cc.cwnd(), cc.ssthresh()), (SEG, 70_000));
        // Slow start to ssthresh, one PMDCS per SACK.
        let mut t = 0;
        while cc.cwnd() < cc.ssthresh() {
            t += 10;
            cc.on_ack(&ack(at(t), SEG, cc.cwnd()));
        }
        assert_eq!(cc.cwnd(), 70_000);
        cc.on_ack(&ack(at(t + 10), SEG, cc.cwnd()));
        assert_eq!(cc.k(), Some(Duration::ZERO));
        assert_eq!(cc.w_max(), 70_000);
    }

    #[test]
    fn a_spurious_t3_is_undone_with_the_curve_it_interrupted() {
        let mut cc = Cubic::new(SEG, Some(100 * SEG), 1 << 20);
        cc.on_fast_retransmit(at(0));
        cc.on_ack(&ack(at(100), 70 * SEG, 70 * SEG));
        let (cwnd, ssthresh, k) = (cc.cwnd(), cc.ssthresh(), cc.k());
        cc.on_t3_expiry();
        assert_eq!(cc.cwnd(), SEG);
        cc.undo(cwnd, ssthresh);
        assert_eq!(
            (cc.cwnd(), cc.ssthresh(), cc.w_max(), cc.k()),
            (cwnd, ssthresh, 100_000, k)
        );
    }

    #[test]
    fn idle_rtos_decay_cwnd_unless_rfc_7661_keeps_it() {
        let mut cc = Cubic::new(SEG, Some(40 * SEG), 1 << 20);
        cc.on_idle(1);
        assert_eq!(cc.cwnd(), 20 * SEG);
        let mut kept = Cubic::new(SEG, Some(40 * SEG), 1 << 20).with_cwnd_validation(true);
        kept.on_idle(3);
        assert_eq!(kept.cwnd(), 40 * SEG);
    }

    #[test]
    fn with_rfc_7661_a_validated_rate_limited_window_grows() {
        // A flow that uses 6 of its 10 segments: pipeACK 6 >= 10/2.
        let run = |cwv: bool| {
            let mut cc = Cubic::new(SEG, Some(10 * SEG), 1 << 20).with_cwnd_validation(cwv);
            for i in 0..20u64 {
                cc.on_ack(&ack(at(100 * i), 6 * SEG, 6 * SEG));
            }
            cc.cwnd()
        };
        assert_eq!(run(false), 10 * SEG, "RFC 9438 5.8: not cwnd-limited");
        // Slow start while validated, up to twice the flow's use.
        let grown = run(true);
        assert!((11 * SEG..=12 * SEG + SEG).contains(&grown), "{grown}");
    }

    #[test]
    fn with_rfc_7661_a_loss_when_rate_limited_is_taken_from_what_was_used() {
        let mut cc = Cubic::new(SEG, Some(40 * SEG), 1 << 20).with_cwnd_validation(true);
        for i in 0..5u64 {
            cc.on_ack(&ack(at(100 * i), 8 * SEG, 8 * SEG));
        }
        cc.on_fast_retransmit(at(500));
        // max(pipeACK 8, LossFlightSize 8) * 0.7 = 5.6 segments; floor 4.
        assert_eq!(cc.cwnd(), 5_600);
    }
}
