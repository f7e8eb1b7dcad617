//! RFC 7661 (New Congestion Window Validation), for the window-based
//! controllers (RFC 9260 7.2 and CUBIC) when `cwnd_validation` is on.
//!
//! pipeACK (RFC 7661 4.2) is what the path carried per round trip lately:
//! the largest number of bytes acknowledged within one RTT over the last
//! pipeACK Sampling Period, max(3*RTT, 1 s). A cwnd is validated while
//! pipeACK >= cwnd/2 (or pipeACK is not yet defined), non-validated below.
//!
//! What changes for the controller:
//! - growth: a validated window may grow although the sender is not
//!   cwnd-limited (it uses at least half of it; the growth so bounded to
//!   twice what the flow carries), where RFC 9260 7.2.1/7.2.2 (and RFC 9438
//!   5.8) ask for a fully used window; a non-validated window does not grow
//!   (RFC 7661 4.3);
//! - idle and rate-limited periods: cwnd is kept, not decayed (RFC 7661 4.3
//!   replaces RFC 9260 7.2.1's decay per RTO), for at most the
//!   non-validated period (NVP, five minutes); then it is halved;
//! - loss in the non-validated phase (RFC 7661 4.4.1): the reduction is
//!   taken from max(pipeACK, LossFlightSize), what was really in use, not
//!   from the unused cwnd. Applied once, when the loss is found: the
//!   controller hears of no end of recovery, so 4.4.1's second step (less
//!   R, the data retransmitted in the recovery) is left out.

use std::time::Duration;

use crate::time::Time;

/// RFC 7661 5: the non-validated period, five minutes.
pub const NVP: Duration = Duration::from_secs(300);

/// Slots of the pipeACK maximum filter: the sampling period split in parts.
const SLOTS: usize = 4;

/// The pipeACK Sampling Period for a round trip of `rtt`: max(3*RTT, 1 s)
/// (RFC 7661 4.2).
fn sampling_period(rtt: Duration) -> Duration {
    (3 * rtt).max(Duration::from_secs(1))
}

/// RFC 7661 state of one destination.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cwv {
    /// The sample being taken: when it began and the bytes acked since.
    sample: Option<(Time, u64)>,
    /// Largest sample of each part of the sampling period: (start, bytes).
    slots: [(Time, u32); SLOTS],
    filled: usize,
    /// When the window last left the validated phase (start of the NVP).
    nvp_since: Option<Time>,
    /// Smoothed RTT from the SACKs' measurements (RFC 6298's 1/8 gain).
    srtt: Option<Duration>,
}

impl Cwv {
    /// The smoothed round trip the filter uses (1 s before any measurement,
    /// RFC 9260 6.3's initial RTO order).
    pub fn srtt(&self) -> Duration {
        self.srtt.unwrap_or(Duration::from_secs(1))
    }

    /// A SACK acknowledged `bytes_acked`; `rtt` is its measurement if any.
    /// No sample is taken in loss recovery (RFC 7661 4.2: the acknowledged
    /// volume then says what the recovery repaired, not what the path
    /// carries), and a sample that spans more than two round trips (an idle
    /// spell) is dropped.
    pub fn on_ack(&mut self, now: Time, bytes_acked: u32, rtt: Option<Duration>, recovery: bool) {
        if let Some(r) = rtt {
            self.srtt = Some(match self.srtt {
                None => r,
                Some(s) => (s * 7 + r) / 8,
            });
        }
        if recovery {
            self.sample = None;
            return;
        }
        let rtt = self.srtt().max(Duration::from_micros(1));
        let Some((start, acked)) = self.sample else {
            self.sample = Some((now, 0));
            return;
        };
        let acked = acked + u64::from(bytes_acked);
        let took = now.since(start);
        if took < rtt {
            self.sample = Some((start, acked));
            return;
        }
        if took <= 2 * rtt {
            // One round trip's worth of what the sample saw.
            let per_rtt = u128::from(acked) * rtt.as_micros() / took.as_micros().max(1);
            self.push(now, u32::try_from(per_rtt).unwrap_or(u32::MAX), rtt);
        }
        self.sample = Some((now, 0));
    }

    fn push(&mut self, now: Time, bytes: u32, rtt: Duration) {
        let part = sampling_period(rtt) / SLOTS as u32;
        if self.filled > 0 {
            let last = &mut self.slots[self.filled - 1];
            if now.since(last.0) < part {
                last.1 = last.1.max(bytes);
                return;
            }
        }
        if self.filled == SLOTS {
            self.slots.copy_within(1.., 0);
            self.filled -= 1;
        }
        self.slots[self.filled] = (now, bytes);
        self.filled += 1;
    }

    /// pipeACK in bytes, `None` while undefined (RFC 7661 4.2); samples
    /// older than the sampling period count for nothing.
    pub fn pipe_ack(&self, now: Time) -> Option<u32> {
        if self.filled == 0 {
            return None;
        }
        let period = sampling_period(self.srtt());
        Some(
            self.slots[..self.filled]
                .iter()
                .filter(|(at, _)| now.since(*at) < period)
                .map(|(_, b)| *b)
                .max()
                .unwrap_or(0),
        )
    }

    /// RFC 7661 4.3: validated while pipeACK >= cwnd/2 or undefined.
    pub fn validated(&self, now: Time, cwnd: u32) -> bool {
        self.pipe_ack(now)
            .is_none_or(|p| u64::from(p) * 2 >= u64::from(cwnd))
    }

    /// Whether cwnd may grow on this SACK: a cwnd-limited sender always
    /// (RFC 9260 7.2.1), otherwise only while the window is validated.
    /// Also starts or ends the non-validated period.
    pub fn may_grow(&mut self, now: Time, cwnd: u32, fully_utilized: bool) -> bool {
        let validated = self.validated(now, cwnd);
        if validated || fully_utilized {
            self.nvp_since = None;
        } else if self.nvp_since.is_none() {
            self.nvp_since = Some(now);
        }
        validated || fully_utilized
    }

    /// RFC 7661 4.4.1: the volume a loss response is taken from. In the
    /// non-validated phase max(pipeACK, LossFlightSize), at most `cwnd`;
    /// otherwise `cwnd` itself.
    pub fn loss_base(&self, now: Time, cwnd: u32, loss_flight: u32) -> u32 {
        match self.pipe_ack(now) {
            Some(p) if u64::from(p) * 2 < u64::from(cwnd) => p.max(loss_flight).min(cwnd),
            _ => cwnd,
        }
    }

    /// RFC 7661 4.4.3: the non-validated period ran out without the window
    /// being validated again; the caller halves cwnd (at most once per NVP).
    pub fn nvp_expired(&mut self, now: Time) -> bool {
        match self.nvp_since {
            Some(since) if now.since(since) >= NVP => {
                self.nvp_since = Some(now);
                true
            }
            _ => false,
        }
    }

    /// After a T3 expiry the old measurements describe another flight: the
    /// filter starts again (pipeACK undefined, validated).
    pub fn restart(&mut self) {
        self.sample = None;
        self.filled = 0;
        self.nvp_since = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RTT: Duration = Duration::from_millis(100);

    fn at(ms: u64) -> Time {
        Time::from_millis(ms)
    }

    /// Feeds `per_rtt` bytes acknowledged in one SACK each RTT for `rounds`
    /// round trips, starting at `from` ms; returns the time after.
    fn feed(c: &mut Cwv, from: u64, rounds: u64, per_rtt: u32) -> u64 {
        let mut t = from;
        for _ in 0..rounds {
            t += 100;
            c.on_ack(at(t), per_rtt, Some(RTT), false);
        }
        t
    }

    #[test]
    fn pipe_ack_is_undefined_until_a_round_trip_was_sampled() {
        let mut c = Cwv::default();
        c.on_ack(at(0), 1000, Some(RTT), false);
        assert_eq!(c.pipe_ack(at(0)), None);
        c.on_ack(at(50), 1000, Some(RTT), false);
        assert_eq!(c.pipe_ack(at(50)), None, "less than one RTT");
        c.on_ack(at(100), 4000, Some(RTT), false);
        assert_eq!(c.pipe_ack(at(100)), Some(5000));
        assert!(c.validated(at(100), 10_000));
        assert!(!c.validated(at(100), 10_001));
    }

    #[test]
    fn pipe_ack_is_the_largest_recent_sample_which_ages_out_after_the_period() {
        let mut c = Cwv::default();
        c.on_ack(at(0), 0, Some(RTT), false);
        let t = feed(&mut c, 0, 3, 50_000);
        assert_eq!(c.pipe_ack(at(t)), Some(50_000));
        // The sampling period is max(3 RTT, 1 s) = 1 s: the big samples
        // are gone 1 s later, the small ones remain.
        let t = feed(&mut c, t, 12, 5_000);
        assert_eq!(c.pipe_ack(at(t)), Some(5_000));
        assert_eq!(c.pipe_ack(at(t + 2000)), Some(0), "idle: nothing recent");
    }

    #[test]
    fn no_sample_is_taken_in_recovery_or_across_an_idle_spell() {
        let mut c = Cwv::default();
        c.on_ack(at(0), 0, Some(RTT), false);
        c.on_ack(at(100), 9000, Some(RTT), true);
        c.on_ack(at(150), 9000, Some(RTT), true);
        assert_eq!(c.pipe_ack(at(150)), None);
        c.on_ack(at(200), 0, Some(RTT), false);
        c.on_ack(at(5000), 1_000_000, Some(RTT), false);
        assert_eq!(c.pipe_ack(at(5000)), None, "an idle spell is no sample");
    }

    #[test]
    fn a_rate_limited_window_may_grow_only_while_half_of_it_is_used() {
        let mut c = Cwv::default();
        c.on_ack(at(0), 0, Some(RTT), false);
        let t = feed(&mut c, 0, 3, 6_000);
        assert!(c.may_grow(at(t), 12_000, false), "pipeACK = cwnd/2");
        assert!(!c.may_grow(at(t), 12_001, false), "non-validated");
        assert!(c.may_grow(at(t), 50_000, true), "cwnd-limited");
    }

    #[test]
    fn a_loss_in_the_non_validated_phase_is_taken_from_what_was_in_use() {
        let mut c = Cwv::default();
        c.on_ack(at(0), 0, Some(RTT), false);
        let t = feed(&mut c, 0, 3, 6_000);
        assert_eq!(c.loss_base(at(t), 40_000, 8_000), 8_000, "LossFlightSize");
        assert_eq!(c.loss_base(at(t), 40_000, 2_000), 6_000, "pipeACK");
        assert_eq!(c.loss_base(at(t), 10_000, 2_000), 10_000, "validated");
    }

    #[test]
    fn the_non_validated_period_ends_after_five_minutes() {
        let mut c = Cwv::default();
        c.on_ack(at(0), 0, Some(RTT), false);
        let t = feed(&mut c, 0, 3, 1_000);
        assert!(!c.may_grow(at(t), 40_000, false));
        assert!(!c.nvp_expired(at(t + 299_000)));
        assert!(c.nvp_expired(at(t + 300_000)));
        assert!(!c.nvp_expired(at(t + 300_001)), "once per period");
    }
}
