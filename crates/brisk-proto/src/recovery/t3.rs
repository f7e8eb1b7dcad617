//! The T3-rtx timer: rules R1 to R4 (RFC 9260 6.3.2) and expiry E1 and E2
//! (6.3.3), as pure decisions; the retransmission queue applies them to the
//! timer table and the path.

use std::time::Duration;

use crate::recovery::rto_restart;

/// What sending DATA does to T3 (R1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnSend {
    /// Start T3 if it is not running.
    StartIfStopped,
    /// Restart it: the earliest outstanding chunk itself was sent again
    /// (6.3.2: "restart the timer if the earliest outstanding DATA chunk ...
    /// is being retransmitted").
    Restart,
}

/// R1: DATA went out; `earliest` when it was the earliest outstanding chunk
/// sent again.
pub fn on_send(earliest_resent: bool) -> OnSend {
    if earliest_resent {
        OnSend::Restart
    } else {
        OnSend::StartIfStopped
    }
}

/// What a SACK does to T3 (R2 to R4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnSack {
    /// R2: everything sent to this address is acknowledged: stop.
    Stop,
    /// R3: the earliest outstanding TSN was acknowledged: restart.
    Restart,
    /// R4: a gap-acked TSN went missing again: start if stopped.
    StartIfStopped,
    /// Nothing changes.
    Keep,
}

/// R2 to R4 after a SACK was applied.
pub fn on_sack(outstanding: bool, earliest_acked: bool, reneged: bool) -> OnSack {
    if !outstanding {
        OnSack::Stop
    } else if earliest_acked {
        OnSack::Restart
    } else if reneged {
        OnSack::StartIfStopped
    } else {
        OnSack::Keep
    }
}

/// R3's timeout: RTO, or with `restart` (RFC 7765 applies) RTO less the age
/// of the earliest outstanding chunk.
pub fn restart_timeout(rto: Duration, restart: bool, earliest_age: Duration) -> Duration {
    if restart {
        rto_restart::timeout(rto, earliest_age)
    } else {
        rto
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sacks_stop_restart_or_start_t3_by_r2_to_r4() {
        assert_eq!(on_sack(false, true, true), OnSack::Stop);
        assert_eq!(on_sack(true, true, true), OnSack::Restart);
        assert_eq!(on_sack(true, false, true), OnSack::StartIfStopped);
        assert_eq!(on_sack(true, false, false), OnSack::Keep);
        assert_eq!(on_send(true), OnSend::Restart);
        assert_eq!(on_send(false), OnSend::StartIfStopped);
        let ms = Duration::from_millis;
        assert_eq!(restart_timeout(ms(300), false, ms(100)), ms(300));
        assert_eq!(restart_timeout(ms(300), true, ms(100)), ms(200));
    }
}
