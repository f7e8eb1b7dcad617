//! The T3-rtx timer: rules R1 to R4 (RFC 9260 6.3.2) and expiry E1 to E3 (6.3.3).

use std::time::Duration;

use crate::path::Path;
use crate::recovery::{ack_reach, rto_restart};
use crate::time::Time;
use crate::timer::{TimerKind, TimerTable};
use crate::tx::outstanding::{Outstanding, SackOutcome};

/// R1: DATA was sent (new or retransmitted); start T3 with `rto` if it is not running.
pub fn on_data_sent(timers: &mut TimerTable, now: Time, rto: Duration) {
    timers.start_if_stopped(TimerKind::T3Rtx, now, rto);
}

/// R1, when the earliest outstanding chunk itself was retransmitted: 6.3.2
/// ("restart the timer if the earliest outstanding DATA chunk ... is being
/// retransmitted").
pub fn on_earliest_retransmitted(timers: &mut TimerTable, now: Time, rto: Duration) {
    timers.start(TimerKind::T3Rtx, now, rto);
}

/// R2, R3, R4 after a SACK was applied. `rto` is the RTO in force; with
/// `restart` (RFC 7765 applies), R3 subtracts the earliest chunk's age. With
/// `peer_sack_delay` (the ack-reach floor applies), the restarted timer never
/// expires before the earliest chunk's SACK can be back.
#[allow(clippy::too_many_arguments)]
pub fn on_sack(
    timers: &mut TimerTable,
    path: &Path,
    outstanding: &Outstanding,
    outcome: &SackOutcome,
    now: Time,
    rto: Duration,
    restart: bool,
    peer_sack_delay: Option<Duration>,
) {
    let Some(earliest) = outstanding.earliest_unacked() else {
        // R2: everything sent to this address is acknowledged.
        timers.stop(TimerKind::T3Rtx);
        return;
    };
    if outcome.earliest_acked {
        // R3: the earliest outstanding TSN was acknowledged: restart; RFC 7765
        // restarts at RTO less the age of the earliest outstanding chunk.
        let mut timeout = if restart {
            rto_restart::timeout(rto, now.since(earliest.last_sent))
        } else {
            rto
        };
        if let Some(peer_sack_delay) = peer_sack_delay {
            timeout = ack_reach::apply(
                timeout,
                &ack_reach::AckReach {
                    now,
                    htna_sent: outcome.htna_sent.unwrap_or(now),
                    earliest_sent: earliest.last_sent,
                    immediate: earliest.immediate,
                    peer_sack_delay,
                    rttvar: path.rto.rttvar(),
                    packets_outstanding: outstanding.packets_outstanding(),
                    spacing: path.ack_spacing.per_packet(),
                    rto,
                },
            );
        }
        timers.start(TimerKind::T3Rtx, now, timeout);
    } else if outcome.reneged {
        // R4: a gap-acked TSN went missing again.
        timers.start_if_stopped(TimerKind::T3Rtx, now, rto);
    }
}

/// E1 and E2 of an expiry: collapse cwnd and, unless `linear` (thin streams,
/// seed 001 4.2.2), back off RTO. The caller marks the outstanding chunks (E3)
/// and counts the error (8.1, 8.2).
pub fn on_expiry(path: &mut Path, back_off: bool) {
    path.cc.on_t3_expiry();
    if back_off {
        path.rto.back_off();
    }
}
