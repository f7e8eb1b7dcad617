//! The RTO estimator, RFC 9260 6.3.1 rules C1 to C7.

use std::time::Duration;

/// Clock granularity G of C6: our clock counts microseconds.
const GRANULARITY: Duration = Duration::from_micros(1);

/// SRTT, RTTVAR and RTO of one destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtoEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    /// SRTT + 4 RTTVAR (or RTO.Initial before a measurement), unclamped.
    estimate: Duration,
    /// Doublings since the last measurement (E2).
    backoff: u32,
    min: Duration,
    max: Duration,
}

impl RtoEstimator {
    /// C1: RTO starts at RTO.Initial.
    pub fn new(initial: Duration, min: Duration, max: Duration) -> Self {
        Self {
            srtt: None,
            rttvar: Duration::ZERO,
            estimate: initial,
            backoff: 0,
            min,
            max,
        }
    }

    /// Feeds one RTT measurement R (C2, C3), collapsing any back-off.
    pub fn on_measurement(&mut self, r: Duration) {
        match self.srtt {
            // C2: the first measurement.
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            // C3: RTTVAR first, with the old SRTT; alpha 1/8, beta 1/4.
            Some(srtt) => {
                self.rttvar = self.rttvar * 3 / 4 + srtt.abs_diff(r) / 4;
                self.srtt = Some(srtt * 7 / 8 + r / 8);
            }
        }
        // C6 (granularity): RTTVAR never zero.
        self.rttvar = self.rttvar.max(GRANULARITY);
        self.estimate = self.srtt.unwrap_or(r) + 4 * self.rttvar;
        self.backoff = 0;
    }

    /// E2: doubles RTO, bounded by RTO.Max.
    pub fn back_off(&mut self) {
        if self.rto() < self.max {
            self.backoff += 1;
        }
    }

    /// Current RTO, back-off included: C6 (RTO.Min), C7 (RTO.Max).
    pub fn rto(&self) -> Duration {
        self.rto_with_min(self.min)
    }

    /// The RTO with another lower bound (thin streams, seed 001 4.2).
    pub fn rto_with_min(&self, min: Duration) -> Duration {
        let base = self.estimate.clamp(min.min(self.max), self.max);
        base.saturating_mul(1 << self.backoff.min(20)).min(self.max)
    }

    /// Doublings since the last measurement (E2).
    pub fn backoff(&self) -> u32 {
        self.backoff
    }

    /// Withdraws the doublings beyond `to` (the undo of a spurious expiry,
    /// RFC 4015 3.2).
    pub fn undo_back_off(&mut self, to: u32) {
        self.backoff = self.backoff.min(to);
    }

    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }

    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn rto_starts_at_initial_and_follows_c2_c3() {
        let mut e = RtoEstimator::new(ms(3000), ms(10), ms(60_000));
        assert_eq!(e.rto(), ms(3000));
        e.on_measurement(ms(100)); // C2: SRTT 100, RTTVAR 50, RTO 300
        assert_eq!(e.srtt(), Some(ms(100)));
        assert_eq!(e.rto(), ms(300));
        e.on_measurement(ms(200)); // C3: RTTVAR 37.5+25=62.5, SRTT 87.5+25=112.5
        assert_eq!(e.rttvar(), Duration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(Duration::from_micros(112_500)));
        assert_eq!(e.rto(), Duration::from_micros(362_500));
    }

    #[test]
    fn rto_is_clamped_to_min_and_max() {
        let mut e = RtoEstimator::new(ms(1000), ms(1000), ms(60_000));
        e.on_measurement(ms(10));
        assert_eq!(e.rto(), ms(1000), "C6: rounded up to RTO.Min");
        assert_eq!(
            e.rto_with_min(ms(200)),
            ms(200),
            "a thin stream's lower minimum"
        );
        let mut e = RtoEstimator::new(ms(1000), ms(100), ms(400));
        e.on_measurement(ms(300));
        assert_eq!(e.rto(), ms(400), "C7: capped at RTO.Max");
    }

    #[test]
    fn back_off_doubles_up_to_max_and_a_measurement_collapses_it() {
        let mut e = RtoEstimator::new(ms(1000), ms(1000), ms(3000));
        e.back_off();
        assert_eq!(e.rto(), ms(2000));
        e.back_off();
        assert_eq!(e.rto(), ms(3000));
        e.back_off();
        assert_eq!(e.rto(), ms(3000));
        e.on_measurement(ms(50));
        assert_eq!(e.rto(), ms(1000));
    }

    #[test]
    fn identical_samples_keep_rttvar_at_granularity_not_zero() {
        let mut e = RtoEstimator::new(ms(1000), Duration::from_micros(1), ms(60_000));
        for _ in 0..200 {
            e.on_measurement(ms(20));
        }
        assert!(e.rttvar() >= GRANULARITY);
        assert!(e.rto() >= ms(20));
    }
}
