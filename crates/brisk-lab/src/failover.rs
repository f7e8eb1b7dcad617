//! Failover, as the lab measures it on a dual-homed topology: from what the
//! simulator saw (which link delivered each datagram to the receiver) and
//! what the applications recorded (when each message was written and read),
//! never from the protocol's private state.
//!
//! The failover time is the time from the primary path's outage start to
//! the first message read by the receiving application whose data arrived
//! over the secondary path. A message counts as arriving over the secondary
//! path when a datagram carrying data reached the receiver over the
//! secondary path's link at the instant the message was read: the
//! simulator hands the application every message a datagram completes in
//! the same instant the datagram arrives.

use brisk_proto::Time;
use brisk_sim::{Arrival, LinkId};

/// Why a run has no failover time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoFailover {
    /// The primary path has no outage.
    NoOutage,
    /// The outage starts after the run ended.
    OutageAfterRun,
    /// No message was read after the outage whose data came over the
    /// secondary path: the sender never failed over (or nothing was sent).
    NothingOverSecondary,
}

impl NoFailover {
    /// The metric that records the reason (value 1) in `runs.csv`.
    pub fn metric(self) -> &'static str {
        match self {
            NoFailover::NoOutage => "no_failover_no_outage",
            NoFailover::OutageAfterRun => "no_failover_outage_after_run",
            NoFailover::NothingOverSecondary => "no_failover_nothing_over_secondary",
        }
    }
}

impl std::fmt::Display for NoFailover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NoFailover::NoOutage => "the primary path has no outage",
            NoFailover::OutageAfterRun => "the outage starts after the run ended",
            NoFailover::NothingOverSecondary => {
                "no message was delivered over the secondary path after the outage"
            }
        })
    }
}

/// A failover: the first message read after the outage whose data came
/// over the secondary path.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Failover {
    /// When the primary path's outage started.
    pub outage: Time,
    /// The message (0-based plan number) and when it was read.
    pub message: usize,
    pub at: Time,
    /// From the outage start, ms.
    pub ms: f64,
}

/// The failover of a run whose primary path's outage started at `outage`
/// (`None`: no outage) and that ended at `end`: `read` holds when each
/// message was read, `arrivals` the datagrams that reached the receiver,
/// `secondary` the secondary path's link direction into the receiver.
pub fn failover(
    outage: Option<Time>,
    end: Time,
    read: &[Option<Time>],
    arrivals: &[Arrival],
    secondary: LinkId,
) -> Result<Failover, NoFailover> {
    let outage = outage.ok_or(NoFailover::NoOutage)?;
    if outage > end {
        return Err(NoFailover::OutageAfterRun);
    }
    let over_secondary = |t: Time| {
        arrivals
            .iter()
            .any(|a| a.arrived == t && a.data && a.link == secondary)
    };
    read.iter()
        .enumerate()
        .filter_map(|(i, r)| Some((i, (*r)?)))
        .filter(|&(_, t)| t >= outage && over_secondary(t))
        .min_by_key(|&(i, t)| (t, i))
        .map(|(message, at)| Failover {
            outage,
            message,
            at,
            ms: ms_between(outage, at),
        })
        .ok_or(NoFailover::NothingOverSecondary)
}

/// The messages written during the failover: from the outage start to the
/// failover, both included.
pub fn caught(outage: Time, failover: Time, written: &[Option<Time>]) -> Vec<usize> {
    written
        .iter()
        .enumerate()
        .filter(|(_, w)| w.is_some_and(|w| w >= outage && w <= failover))
        .map(|(i, _)| i)
        .collect()
}

/// Messages written and never read nor abandoned.
pub fn lost(written: &[Option<Time>], read: &[Option<Time>], abandoned: &[bool]) -> usize {
    written
        .iter()
        .enumerate()
        .filter(|&(i, w)| {
            w.is_some()
                && read.get(i).is_none_or(Option::is_none)
                && !abandoned.get(i).copied().unwrap_or(false)
        })
        .count()
}

fn ms_between(from: Time, to: Time) -> f64 {
    (to.as_micros() as f64 - from.as_micros() as f64) / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use brisk_sim::HostId;

    fn arrival(ms: u64, link: usize, data: bool) -> Arrival {
        Arrival {
            from: HostId::new(0),
            sent: Time::from_millis(ms.saturating_sub(10)),
            arrived: Time::from_millis(ms),
            size: 100,
            data,
            link: LinkId::new(link),
            to: "10.0.4.1:9899".parse().unwrap(),
            source: "10.0.3.1:9899".parse().unwrap(),
        }
    }

    const SECONDARY: LinkId = LinkId::new(2);

    fn t(ms: u64) -> Option<Time> {
        Some(Time::from_millis(ms))
    }

    #[test]
    fn the_failover_is_the_first_message_read_after_the_outage_from_the_secondary() {
        // Message 0 read over the primary before the outage, 1 over the
        // primary after it (in flight), 2 and 3 over the secondary; 4 never.
        let read = [t(100), t(1010), t(1500), t(1400), None];
        let arrivals = [
            arrival(100, 0, true),
            arrival(1010, 0, true),
            arrival(1200, 2, false), // no data: a heartbeat, say
            arrival(1400, 2, true),
            arrival(1500, 2, true),
        ];
        let f = failover(t(1000), Time::from_secs(9), &read, &arrivals, SECONDARY).unwrap();
        assert_eq!(f.message, 3);
        assert_eq!(f.at, Time::from_millis(1400));
        assert_eq!(f.ms, 400.0);
        let written = [t(50), t(990), t(1000), t(1300), t(1400), t(1401)];
        assert_eq!(caught(Time::from_secs(1), f.at, &written), [2, 3, 4]);
    }

    #[test]
    fn without_a_delivery_over_the_secondary_there_is_no_failover_and_a_reason() {
        let read = [t(100), t(1010), None];
        let arrivals = [arrival(100, 0, true), arrival(1010, 0, true)];
        let end = Time::from_secs(9);
        assert_eq!(
            failover(t(1000), end, &read, &arrivals, SECONDARY),
            Err(NoFailover::NothingOverSecondary)
        );
        assert_eq!(
            failover(None, end, &read, &arrivals, SECONDARY),
            Err(NoFailover::NoOutage)
        );
        assert_eq!(
            failover(t(10_000), end, &read, &arrivals, SECONDARY),
            Err(NoFailover::OutageAfterRun)
        );
        // A secondary delivery before the outage is no failover.
        let arrivals = [arrival(100, 2, true)];
        assert_eq!(
            failover(t(1000), end, &read, &arrivals, SECONDARY),
            Err(NoFailover::NothingOverSecondary)
        );
        assert_eq!(
            NoFailover::NothingOverSecondary.metric(),
            "no_failover_nothing_over_secondary"
        );
    }

    #[test]
    fn lost_messages_are_written_and_neither_read_nor_abandoned() {
        let written = [t(1), t(2), t(3), None];
        let read = [t(5), None, None, None];
        assert_eq!(lost(&written, &read, &[false, false, true, false]), 1);
        assert_eq!(lost(&written, &read, &[]), 2);
    }
}
