//! A received SACK (RFC 9260 6.2.1): acknowledgement, RTT measurement, the
//! T3-rtx rules, congestion control and fast retransmit, in the order 7.2.4
//! requires (cwnd adjustments for new acks before any fast-retransmit reduction).

use super::{Association, State, shutdown};
use crate::events::Event;
use crate::recovery::t3;
use crate::time::Time;
use crate::tx::outstanding::SackRejected;
use crate::wire::chunk::Sack;

pub(super) fn on_sack(a: &mut Association, now: Time, sack: &Sack) {
    if !matches!(
        a.state,
        State::Established | State::ShutdownPending | State::ShutdownSent | State::ShutdownReceived
    ) {
        return;
    }
    a.stats.sacks_received += 1;
    apply(a, now, sack);
}

/// Applies a SACK, or the cumulative ack of a SHUTDOWN (9.2).
pub(super) fn apply(a: &mut Association, now: Time, sack: &Sack) {
    let flight_before = a.outstanding.flight_size();
    let outcome = match a.outstanding.on_sack(sack, now) {
        Ok(outcome) => outcome,
        // 6.2.1: an old SACK that arrived late.
        Err(SackRejected::Stale) => return,
        Err(SackRejected::AcksUnsentTsn) => {
            a.stats.malformed_chunks += 1;
            return;
        }
    };
    if let Some(rtt) = outcome.rtt {
        a.path.rto.on_measurement(rtt);
    }
    if outcome.bytes_acked > 0 {
        // 8.3: acknowledged DATA resets the error counters.
        a.clear_errors();
    }
    // 7.2.1, 7.2.2 before 7.2.3 (note at the end of 7.2.4).
    a.path.cc.on_ack(
        outcome.bytes_acked,
        flight_before,
        a.fast_recovery.in_recovery(),
    );
    a.fast_recovery.on_cum_ack(sack.cum_tsn_ack);
    let fr = a.fast_recovery.on_sack(
        sack,
        &outcome,
        &mut a.outstanding,
        a.cfg.fast_retransmit_threshold,
    );
    if fr.entered_recovery {
        a.path.cc.on_fast_retransmit();
        a.stats.fast_recoveries += 1;
    }
    if !fr.marked.is_empty() {
        a.fast_retransmit_now = true;
    }
    // 6.2.1: rwnd = a_rwnd less what is still outstanding.
    a.peer_rwnd = sack.a_rwnd.saturating_sub(a.outstanding.flight_size());
    t3::on_sack(&mut a.path, &a.outstanding, &outcome, now);
    if a.outstanding.is_empty() {
        a.path.cc.on_all_acked();
    }
    for m in &outcome.acked_messages {
        a.stats.messages_acked += 1;
        if a.cfg.events {
            a.emit(Event::MessageAcked {
                id: m.id,
                queued_at: m.queued_at,
                first_sent_at: m.first_sent_at,
                acked_at: now,
            });
        }
    }
    shutdown::progress(a, now);
}
