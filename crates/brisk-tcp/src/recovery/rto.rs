//! The retransmission timeout, RFC 6298: SRTT and RTTVAR with alpha 1/8 and
//! beta 1/4, RTO = SRTT + max(G, 4 RTTVAR), bounded by RTO.Min and RTO.Max,
//! doubled on each expiry.

use std::time::Duration;

/// RFC 6298 5.7: the RTO after a handshake whose SYN was retransmitted.
pub const FALLBACK_RTO: Duration = Duration::from_secs(3);

/// SRTT, RTTVAR and RTO of one connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtoEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    /// SRTT + max(G, 4 RTTVAR), or the initial RTO before a measurement.
    base: Duration,
    /// Doublings since the last measurement (5.5).
    backoff: u32,
    min: Duration,
    max: Duration,
    granularity: Duration,
}

impl RtoEstimator {
    /// RFC 6298 2.1: RTO starts at `initial`.
    pub fn new(initial: Duration, min: Duration, max: Duration, granularity: Duration) -> Self {
        Self {
            srtt: None,
            rttvar: Duration::ZERO,
            base: initial,
            backoff: 0,
            min,
            max,
            granularity,
        }
    }

    /// Feeds one RTT measurement R (2.2, 2.3) and drops any back-off.
    pub fn on_sample(&mut self, r: Duration) {
        match self.srtt {
            // 2.2: the first measurement.
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            // 2.3: RTTVAR first, with the old SRTT; alpha 1/8, beta 1/4.
            Some(srtt) => {
                self.rttvar = self.rttvar * 3 / 4 + srtt.abs_diff(r) / 4;
                self.srtt = Some(srtt * 7 / 8 + r / 8);
            }
        }
        // 2.2/2.3: RTO = SRTT + max(G, K*RTTVAR), K = 4.
        self.base = self.srtt.unwrap_or(r) + self.granularity.max(self.rttvar * 4);
        self.backoff = 0;
    }

    /// 5.5: RTO = RTO * 2, bounded by RTO.Max (2.5).
    pub fn back_off(&mut self) {
        if self.rto() < self.max {
            self.backoff += 1;
        }
    }

    /// 5.7: a SYN timed out and no RTT was measured; data transfer starts
    /// with an RTO of 3 s (or the initial RTO, if larger), without back-off.
    pub fn fall_back(&mut self) {
        if self.srtt.is_none() {
            self.base = self.base.max(FALLBACK_RTO);
        }
        self.backoff = 0;
    }

    /// The RTO now: 2.4 (at least RTO.Min), back-off (5.5), 2.5 (at most RTO.Max).
    pub fn rto(&self) -> Duration {
        let base = self.base.max(self.min).min(self.max);
        base.saturating_mul(1u32 << self.backoff.min(30))
            .min(self.max)
    }

    /// The RTO computed from SRTT and RTTVAR alone, without back-off.
    pub fn unbacked_rto(&self) -> Duration {
        self.base.max(self.min).min(self.max)
    }

    /// Smoothed RTT, once measured.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }

    /// RTT variation.
    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }

    /// Doublings since the last measurement.
    pub fn backoff(&self) -> u32 {
        self.backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn estimator_follows_rfc_6298_2() {
        let mut e = RtoEstimator::new(ms(1000), ms(200), ms(60_000), ms(10));
        assert_eq!(e.rto(), ms(1000));
        e.on_sample(ms(100)); // SRTT 100, RTTVAR 50, RTO 300
        assert_eq!(e.rto(), ms(300));
        e.on_sample(ms(200)); // RTTVAR 37.5 + 25 = 62.5, SRTT 87.5 + 25 = 112.5
        assert_eq!(e.srtt(), Some(Duration::from_micros(112_500)));
        assert_eq!(e.rto(), Duration::from_micros(362_500));
        for _ in 0..100 {
            e.on_sample(ms(100));
        }
        // RTTVAR decays towards zero: G holds the margin.
        assert_eq!(e.rto(), ms(200), "RTO.Min");
        let mut e = RtoEstimator::new(ms(1000), ms(1), ms(60_000), ms(10));
        for _ in 0..100 {
            e.on_sample(ms(100));
        }
        assert_eq!(e.rto(), ms(110), "SRTT + G");
    }

    #[test]
    fn back_off_doubles_to_the_maximum_and_a_sample_ends_it() {
        let mut e = RtoEstimator::new(ms(1000), ms(1000), ms(3000), ms(1));
        e.back_off();
        assert_eq!(e.rto(), ms(2000));
        e.back_off();
        e.back_off();
        assert_eq!((e.rto(), e.backoff()), (ms(3000), 2));
        e.fall_back();
        assert_eq!(e.rto(), ms(3000));
        e.on_sample(ms(10));
        assert_eq!(e.rto(), ms(1000));
    }
}
