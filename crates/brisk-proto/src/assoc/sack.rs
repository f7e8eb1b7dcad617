//! A received SACK (RFC 9260 6.2.1), or the cumulative ack of a SHUTDOWN
//! (9.2): the retransmission queue applies it (`tx::retransmission_queue`);
//! the association acts on what it found: errors cleared (8.3), messages
//! acknowledged, or an abort for a SACK of data never sent (15).

use super::{Association, State};
use crate::events::Event;
use crate::serial::Tsn;
use crate::time::Time;
use crate::tx::outstanding::SackRejected;
use crate::tx::retransmission_queue::SackResult;
use crate::wire::cause::ErrorCause;
use crate::wire::chunk::Sack;

/// A SACK chunk. Returns whether it was applied (the shutdown may then move on).
pub(super) fn on_sack(a: &mut Association, now: Time, sack: &Sack) -> bool {
    if !matches!(
        a.state,
        State::Established | State::ShutdownPending | State::ShutdownSent | State::ShutdownReceived
    ) {
        return false;
    }
    a.counters.sacks_received += 1;
    if a.reconfig.awaits_ssn_tsn_answer()
        && Tsn(sack.cum_tsn_ack) == a.rtx.outstanding().next_tsn().plus(1 << 31).prev()
    {
        // RFC 6525 5.2.4 G1: the peer performed our SSN/TSN reset and
        // acknowledges in our new numbering before its answer (later in
        // the packet, or lost) reached us. Nothing is outstanding (5.1.4):
        // nothing to learn from it, and no TSN never sent.
        return false;
    }
    let queued = a.queued_chunk();
    let (rtx, mut env) = a.tx();
    let result = rtx.on_sack(now, sack, queued, &mut env);
    act(a, now, result, "SACK")
}

/// 9.2: the Cumulative TSN Ack of a SHUTDOWN acknowledges like a SACK.
pub(super) fn on_shutdown_cum_ack(a: &mut Association, now: Time, cum_tsn_ack: Tsn) -> bool {
    let queued = a.queued_chunk();
    let (rtx, mut env) = a.tx();
    let result = rtx.on_shutdown_cum_ack(now, cum_tsn_ack, queued, &mut env);
    act(a, now, result, "SHUTDOWN")
}

/// Acts on what the retransmission queue made of a SACK, or of the
/// cumulative ack of a SHUTDOWN: `chunk` names which, for an abort.
fn act(
    a: &mut Association,
    now: Time,
    result: Result<SackResult, SackRejected>,
    chunk: &str,
) -> bool {
    let result = match result {
        Ok(result) => result,
        // 6.2.1: an old SACK that arrived late.
        Err(SackRejected::Stale) => return false,
        // RFC 9260 15: MUST abort on a SACK acknowledging a TSN never sent.
        Err(SackRejected::AcksUnsentTsn) => {
            a.counters.malformed_chunks += 1;
            let info = format!("{chunk} acknowledges a TSN never sent");
            a.abort_with(
                ErrorCause::ProtocolViolation(info.as_bytes().to_vec().into()),
                &format!("peer's {info}"),
            );
            return false;
        }
    };
    if result.peer_alive {
        // 8.3: the peer is reachable.
        a.clear_errors();
    }
    if result.acked_paths != 0 {
        a.on_paths_acked(now, result.acked_paths);
    }
    for m in &result.acked_messages {
        a.counters.messages_acked += 1;
        if a.cfg.events {
            a.emit(Event::MessageAcked {
                id: m.id,
                queued_at: m.queued_at,
                first_sent_at: m.first_sent_at,
                acked_at: now,
            });
        }
    }
    true
}
