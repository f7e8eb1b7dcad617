//! Path failure and quick failover (RFC 9260 8.2; RFC 7829, SCTP-PF): what a
//! destination's consecutive timeouts make of it, and why data moves between
//! destinations. Pure rules; `assoc/paths.rs` applies them.

use std::time::Duration;

use crate::config::Config;
use crate::path::PathState;

/// The error thresholds of a destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    /// Path.Max.Retrans (RFC 9260 8.2).
    pub pmr: u32,
    /// PotentiallyFailed.Max.Retrans, when SCTP-PF is on (RFC 7829 3.2).
    pub pfmr: Option<u32>,
}

impl Thresholds {
    pub fn of(cfg: &Config) -> Self {
        Self {
            pmr: cfg.path_max_retrans,
            pfmr: cfg.potentially_failed.then_some(cfg.pf_max_retrans),
        }
    }
}

/// The state of a destination with `errors` consecutive timeouts: inactive
/// once they exceed Path.Max.Retrans (RFC 9260 8.2); before that, with
/// SCTP-PF, potentially failed once they exceed PFMR (RFC 7829 3.2 rule 2;
/// with PFMR 0, on the first timeout). A PFMR at or above PMR leaves PF
/// unused (RFC 7829 3.2 rule 7 counts the failure from PMR alone).
pub fn state_after_timeouts(errors: u32, t: Thresholds) -> PathState {
    if errors > t.pmr {
        PathState::Inactive
    } else if t.pfmr.is_some_and(|pfmr| errors > pfmr) {
        PathState::PotentiallyFailed
    } else {
        PathState::Active
    }
}

/// RFC 7829 5 (Primary Path Switchover): with PSMR set, a primary whose
/// errors exceed it is replaced for good by the destination data moved to,
/// instead of data switching back when it recovers.
pub fn switches_primary(errors: u32, psmr: Option<u32>) -> bool {
    psmr.is_some_and(|psmr| errors > psmr)
}

/// How long until the next heartbeat of a destination (RFC 9260 8.3; RFC
/// 7829 3.2 rule 4): an unconfirmed or potentially failed destination is
/// probed once per RTO (5.4; PF ignores HB.interval); an idle one once per
/// RTO + HB.interval, less half an RTO and plus a jitter of up to one RTO
/// (the +/- 50% of 8.3).
pub fn heartbeat_interval(
    state: PathState,
    confirmed: bool,
    rto: Duration,
    hb_interval: Duration,
    jitter: Duration,
) -> Duration {
    if !confirmed || state == PathState::PotentiallyFailed {
        rto
    } else {
        hb_interval + rto / 2 + jitter.min(rto)
    }
}

/// Why new data moved from one destination to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailoverCause {
    /// The data path became potentially failed (RFC 7829 3.2 rule 3).
    PotentiallyFailed,
    /// The data path became inactive after Path.Max.Retrans (RFC 9260 8.2).
    PathFailed,
    /// The primary is usable again: data switches back to it.
    PrimaryRecovered,
    /// A destination became usable while the data path was not (it had
    /// failed, or was potentially failed with every other path).
    PathRecovered,
    /// The application chose another primary.
    PrimarySet,
}

impl FailoverCause {
    pub const ALL: [FailoverCause; 5] = [
        FailoverCause::PotentiallyFailed,
        FailoverCause::PathFailed,
        FailoverCause::PrimaryRecovered,
        FailoverCause::PathRecovered,
        FailoverCause::PrimarySet,
    ];

    pub const fn index(self) -> usize {
        self as usize
    }

    pub const fn name(self) -> &'static str {
        match self {
            FailoverCause::PotentiallyFailed => "potentially-failed",
            FailoverCause::PathFailed => "path-failed",
            FailoverCause::PrimaryRecovered => "primary-recovered",
            FailoverCause::PathRecovered => "path-recovered",
            FailoverCause::PrimarySet => "primary-set",
        }
    }

    /// Whether data returns to the primary (a switchback) rather than
    /// leaving a destination (a failover).
    pub const fn is_switchback(self) -> bool {
        matches!(self, FailoverCause::PrimaryRecovered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RFC: Thresholds = Thresholds { pmr: 5, pfmr: None };

    #[test]
    fn without_pf_a_path_fails_when_errors_exceed_pmr() {
        assert_eq!(state_after_timeouts(5, RFC), PathState::Active);
        assert_eq!(state_after_timeouts(6, RFC), PathState::Inactive);
    }

    #[test]
    fn pfmr_zero_makes_the_first_timeout_potentially_failed() {
        let t = Thresholds {
            pmr: 5,
            pfmr: Some(0),
        };
        assert_eq!(state_after_timeouts(0, t), PathState::Active);
        assert_eq!(state_after_timeouts(1, t), PathState::PotentiallyFailed);
        assert_eq!(state_after_timeouts(5, t), PathState::PotentiallyFailed);
        assert_eq!(state_after_timeouts(6, t), PathState::Inactive);
        let t1 = Thresholds {
            pmr: 5,
            pfmr: Some(1),
        };
        assert_eq!(state_after_timeouts(1, t1), PathState::Active);
        assert_eq!(state_after_timeouts(2, t1), PathState::PotentiallyFailed);
    }

    #[test]
    fn pf_paths_and_unconfirmed_ones_are_probed_every_rto() {
        let rto = Duration::from_millis(300);
        let hb = Duration::from_secs(30);
        let j = Duration::from_millis(100);
        assert_eq!(
            heartbeat_interval(PathState::PotentiallyFailed, true, rto, hb, j),
            rto
        );
        assert_eq!(
            heartbeat_interval(PathState::Active, false, rto, hb, j),
            rto
        );
        assert_eq!(
            heartbeat_interval(PathState::Active, true, rto, hb, j),
            hb + Duration::from_millis(250)
        );
    }

    #[test]
    fn psmr_replaces_the_primary_only_when_set_and_exceeded() {
        assert!(!switches_primary(10, None));
        assert!(!switches_primary(2, Some(2)));
        assert!(switches_primary(3, Some(2)));
    }
}
