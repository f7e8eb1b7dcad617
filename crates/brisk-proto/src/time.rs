//! Time as the caller gives it: brisk-proto never reads a clock.

use std::ops::{Add, Sub};
use std::time::Duration;

/// A point on the caller's monotonic clock, in microseconds from an origin the
/// caller chooses (the simulator starts at zero; the UDP driver uses process start).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);

    pub const fn from_micros(us: u64) -> Self {
        Time(us)
    }

    pub const fn from_secs(s: u64) -> Self {
        Time(s.saturating_mul(1_000_000))
    }

    pub const fn from_millis(ms: u64) -> Self {
        Time(ms.saturating_mul(1000))
    }

    pub const fn as_micros(self) -> u64 {
        self.0
    }

    /// Time elapsed since `earlier`, zero if `earlier` is later.
    pub fn since(self, earlier: Time) -> Duration {
        Duration::from_micros(self.0.saturating_sub(earlier.0))
    }
}

impl Add<Duration> for Time {
    type Output = Time;

    /// Saturates at the far future rather than wrapping.
    fn add(self, d: Duration) -> Time {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        Time(self.0.saturating_add(us))
    }
}

impl Sub<Time> for Time {
    type Output = Duration;

    fn sub(self, earlier: Time) -> Duration {
        self.since(earlier)
    }
}

impl std::fmt::Display for Time {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{:06}s", self.0 / 1_000_000, self.0 % 1_000_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adding_and_subtracting_durations_saturates() {
        let t = Time::from_millis(5);
        assert_eq!(t + Duration::from_micros(7), Time(5_007));
        assert_eq!(Time(10) - Time(20), Duration::ZERO);
        assert_eq!(Time(u64::MAX - 1) + Duration::from_secs(1), Time(u64::MAX));
        assert_eq!(Time(1_500_000).to_string(), "1.500000s");
    }
}
