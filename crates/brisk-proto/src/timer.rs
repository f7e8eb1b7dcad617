//! Deadline timers: a one-shot [`Timer`], and the association's [`TimerTable`],
//! one deadline per [`TimerKind`]. The table drives `poll_timeout` (its
//! earliest deadline), the expiry dispatch (in [`TimerKind::ALL`] order) and
//! closing (every timer stops); a new timer is one more variant.

use std::time::Duration;

use crate::time::Time;

/// A one-shot timer: running until its deadline, or stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timer {
    deadline: Option<Time>,
}

impl Timer {
    /// Starts (or restarts) the timer to fire `after` from `now`.
    #[inline]
    pub fn start(&mut self, now: Time, after: Duration) {
        self.deadline = Some(now + after);
    }

    /// Starts the timer only if it is not running.
    #[inline]
    pub fn start_if_stopped(&mut self, now: Time, after: Duration) {
        if self.deadline.is_none() {
            self.start(now, after);
        }
    }

    #[inline]
    pub fn stop(&mut self) {
        self.deadline = None;
    }

    #[inline]
    pub fn is_running(&self) -> bool {
        self.deadline.is_some()
    }

    #[inline]
    pub fn deadline(&self) -> Option<Time> {
        self.deadline
    }

    /// If the deadline has passed, stops the timer and returns true.
    #[inline]
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

/// The timers of an association (RFC 9260 5.1, 6.2, 6.3, 8.3, 9.2, and the
/// latency mechanisms' own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimerKind {
    /// T1-init in COOKIE-WAIT, T1-cookie in COOKIE-ECHOED (5.1).
    T1,
    /// T3-rtx (6.3.2).
    T3Rtx,
    /// Early Retransmit's reordering delay (RFC 5827 6).
    EarlyRetransmit,
    /// RACK's reordering timer (RFC 8985 6.3): chunks sent before the latest
    /// acknowledged one are lost if not acknowledged by then.
    RackReorder,
    /// The tail loss probe (RFC 8985 7).
    TailLossProbe,
    /// T2-shutdown (9.2).
    T2Shutdown,
    /// T5-shutdown-guard (9.2).
    ShutdownGuard,
    /// The heartbeat of the idle path (8.3).
    Heartbeat,
    /// The RE-CONFIG timer: a stream reconfiguration request awaits its
    /// response (RFC 6525 5.1.1).
    Reconfig,
    /// The copy probe of redundancy within a byte budget (`tx::redundancy`):
    /// a copy of a chunk too large to share a packet, half an ITT after it.
    CopyProbe,
    /// The delayed SACK (6.2). Its expiry does nothing by itself: it makes a
    /// SACK due, and the next packet carries it, which disarms it.
    DelayedSack,
}

impl TimerKind {
    /// Every kind, in the order expiries are handled when several are due.
    pub const ALL: [TimerKind; 11] = [
        TimerKind::T1,
        TimerKind::T3Rtx,
        TimerKind::EarlyRetransmit,
        TimerKind::RackReorder,
        TimerKind::TailLossProbe,
        TimerKind::T2Shutdown,
        TimerKind::ShutdownGuard,
        TimerKind::Heartbeat,
        TimerKind::Reconfig,
        TimerKind::CopyProbe,
        TimerKind::DelayedSack,
    ];

    const fn index(self) -> usize {
        self as usize
    }
}

/// One deadline per [`TimerKind`]: the one place an association's timers live.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TimerTable {
    deadlines: [Option<Time>; TimerKind::ALL.len()],
}

impl TimerTable {
    /// Starts (or restarts) `kind` to fire `after` from `now`.
    #[inline]
    pub fn start(&mut self, kind: TimerKind, now: Time, after: Duration) {
        self.deadlines[kind.index()] = Some(now + after);
    }

    /// Starts `kind` only if it is not running.
    #[inline]
    pub fn start_if_stopped(&mut self, kind: TimerKind, now: Time, after: Duration) {
        if !self.is_running(kind) {
            self.start(kind, now, after);
        }
    }

    #[inline]
    pub fn stop(&mut self, kind: TimerKind) {
        self.deadlines[kind.index()] = None;
    }

    /// Stops every timer (the association closed).
    #[inline]
    pub fn stop_all(&mut self) {
        self.deadlines = Default::default();
    }

    #[inline]
    pub fn is_running(&self, kind: TimerKind) -> bool {
        self.deadlines[kind.index()].is_some()
    }

    #[inline]
    pub fn deadline(&self, kind: TimerKind) -> Option<Time> {
        self.deadlines[kind.index()]
    }

    /// If `kind`'s deadline has passed, stops it and returns true.
    #[inline]
    pub fn poll_expired(&mut self, kind: TimerKind, now: Time) -> bool {
        match self.deadlines[kind.index()] {
            Some(d) if d <= now => {
                self.deadlines[kind.index()] = None;
                true
            }
            _ => false,
        }
    }

    /// The earliest deadline, on the clock's next tick (`granularity`;
    /// rounding up keeps the order, so the earliest rounded is the earliest's).
    #[inline]
    pub fn earliest(&self, granularity: Duration) -> Option<Time> {
        let first = self.deadlines.iter().flatten().min()?;
        Some(on_tick(*first, granularity))
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
    fn the_table_fires_each_kind_once_and_reports_the_earliest_tick() {
        let mut t = TimerTable::default();
        t.start(TimerKind::T3Rtx, Time::ZERO, Duration::from_millis(7));
        t.start(TimerKind::Heartbeat, Time::ZERO, Duration::from_millis(3));
        t.start_if_stopped(TimerKind::Heartbeat, Time::ZERO, Duration::from_millis(9));
        assert_eq!(t.earliest(Duration::ZERO), Some(Time::from_millis(3)));
        assert_eq!(
            t.earliest(Duration::from_millis(4)),
            Some(Time::from_millis(4))
        );
        assert!(!t.poll_expired(TimerKind::T3Rtx, Time::from_millis(6)));
        assert!(t.poll_expired(TimerKind::T3Rtx, Time::from_millis(7)));
        assert!(!t.is_running(TimerKind::T3Rtx));
        t.stop_all();
        assert_eq!(t.earliest(Duration::ZERO), None);
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
