//! Deadline timers. The association's `poll_timeout` is the earliest of them.

use std::time::Duration;

use crate::time::Time;

/// A one-shot timer: running until its deadline, or stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timer {
    deadline: Option<Time>,
}

impl Timer {
    /// Starts (or restarts) the timer to fire `after` from `now`.
    pub fn start(&mut self, now: Time, after: Duration) {
        self.deadline = Some(now + after);
    }

    /// Starts the timer only if it is not running.
    pub fn start_if_stopped(&mut self, now: Time, after: Duration) {
        if self.deadline.is_none() {
            self.start(now, after);
        }
    }

    pub fn stop(&mut self) {
        self.deadline = None;
    }

    pub fn is_running(&self) -> bool {
        self.deadline.is_some()
    }

    pub fn deadline(&self) -> Option<Time> {
        self.deadline
    }

    /// If the deadline has passed, stops the timer and returns true.
    pub fn poll_expired(&mut self, now: Time) -> bool {
        match self.deadline {
            Some(d) if d <= now => {
                self.deadline = None;
                true
            }
            _ => false,
        }
    }
}

/// `t` rounded up to the next multiple of `granularity` (a clock tick);
/// unchanged for a granularity of zero.
pub fn on_tick(t: Time, granularity: Duration) -> Time {
    let g = u64::try_from(granularity.as_micros()).unwrap_or(u64::MAX);
    if g <= 1 {
        return t;
    }
    Time::from_micros(t.as_micros().div_ceil(g).saturating_mul(g))
}

/// The earliest of several optional deadlines.
pub fn earliest(deadlines: impl IntoIterator<Item = Option<Time>>) -> Option<Time> {
    deadlines.into_iter().flatten().min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_fires_once_at_its_deadline() {
        let mut t = Timer::default();
        t.start(Time::from_millis(10), Duration::from_millis(5));
        assert!(!t.poll_expired(Time::from_millis(14)));
        assert!(t.poll_expired(Time::from_millis(15)));
        assert!(!t.is_running());
        assert!(!t.poll_expired(Time::from_millis(16)));
    }

    #[test]
    fn deadlines_round_up_to_the_next_tick() {
        let g = Duration::from_millis(4);
        assert_eq!(on_tick(Time::from_micros(4_001), g), Time::from_millis(8));
        assert_eq!(on_tick(Time::from_millis(8), g), Time::from_millis(8));
        assert_eq!(on_tick(Time::from_micros(1), g), Time::from_millis(4));
        assert_eq!(on_tick(Time(12_345), Duration::ZERO), Time(12_345));
    }

    #[test]
    fn start_if_stopped_keeps_a_running_deadline() {
        let mut t = Timer::default();
        t.start(Time::ZERO, Duration::from_millis(5));
        t.start_if_stopped(Time::from_millis(3), Duration::from_millis(5));
        assert_eq!(t.deadline(), Some(Time::from_millis(5)));
        assert_eq!(
            earliest([None, Some(Time(9)), Some(Time(4))]),
            Some(Time(4))
        );
    }
}
