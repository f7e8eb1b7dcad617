//! The T3-rtx timer: rules R1 to R4 (RFC 9260 6.3.2) and expiry E1 to E3 (6.3.3).

use crate::path::Path;
use crate::time::Time;
use crate::tx::outstanding::{Outstanding, SackOutcome};

/// R1: DATA was sent (new or retransmitted); start T3 if it is not running.
pub fn on_data_sent(path: &mut Path, now: Time) {
    path.t3.start_if_stopped(now, path.rto.rto());
}

/// R1, when the earliest outstanding chunk itself was retransmitted: 6.3.2
/// ("restart the timer if the earliest outstanding DATA chunk ... is being
/// retransmitted").
pub fn on_earliest_retransmitted(path: &mut Path, now: Time) {
    path.t3.start(now, path.rto.rto());
}

/// R2, R3, R4 after a SACK was applied.
pub fn on_sack(path: &mut Path, outstanding: &Outstanding, outcome: &SackOutcome, now: Time) {
    if outstanding.earliest_unacked().is_none() {
        // R2: everything sent to this address is acknowledged.
        path.t3.stop();
    } else if outcome.earliest_acked {
        // R3: the earliest outstanding TSN was acknowledged: restart with the current RTO.
        path.t3.start(now, path.rto.rto());
    } else if outcome.reneged {
        // R4: a gap-acked TSN went missing again.
        path.t3.start_if_stopped(now, path.rto.rto());
    }
}

/// E1 and E2 of an expiry: collapse cwnd, back off RTO. The caller marks the
/// outstanding chunks (E3) and counts the error (8.1, 8.2).
pub fn on_expiry(path: &mut Path) {
    path.cc.on_t3_expiry();
    path.rto.back_off();
}
