//! A token bucket on the injected clock: how often the association may answer
//! a peer's mistakes (ERROR chunks), whatever the peer sends.

use std::time::Duration;

use crate::time::Time;

/// Up to `capacity` events at once, refilled at `capacity` per `period`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenBucket {
    capacity: u32,
    period: Duration,
    tokens: u32,
    /// When the tokens were last counted.
    updated: Option<Time>,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(capacity: u32, period: Duration) -> Self {
        Self {
            capacity,
            period,
            tokens: capacity,
            updated: None,
        }
    }

    /// Takes a token if one is left at `now`.
    pub fn take(&mut self, now: Time) -> bool {
        self.refill(now);
        if self.tokens == 0 {
            return false;
        }
        self.tokens -= 1;
        true
    }

    fn refill(&mut self, now: Time) {
        let Some(then) = self.updated else {
            self.updated = Some(now);
            return;
        };
        let per_token = self.period.as_micros() / u128::from(self.capacity.max(1));
        if per_token == 0 {
            self.tokens = self.capacity;
            self.updated = Some(now);
            return;
        }
        let earned = now.since(then).as_micros() / per_token;
        if earned > 0 {
            let earned = u32::try_from(earned).unwrap_or(u32::MAX);
            self.tokens = self.tokens.saturating_add(earned).min(self.capacity);
            // Keep the remainder: tokens accrue at the exact rate.
            let spent = u64::try_from(per_token * u128::from(earned)).unwrap_or(u64::MAX);
            self.updated = Some(then + Duration::from_micros(spent));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_empties_the_bucket_and_time_refills_it_at_the_rate() {
        let mut b = TokenBucket::new(10, Duration::from_secs(1));
        let t0 = Time::from_millis(5);
        assert_eq!((0..30).filter(|_| b.take(t0)).count(), 10);
        // 100 ms earns one token, 250 ms two (and half of a third).
        assert!(b.take(Time::from_millis(105)));
        assert!(!b.take(Time::from_millis(105)));
        assert_eq!((0..5).filter(|_| b.take(Time::from_millis(355))).count(), 2);
        // Never more than the capacity.
        assert_eq!((0..30).filter(|_| b.take(Time::from_secs(100))).count(), 10);
    }
}
