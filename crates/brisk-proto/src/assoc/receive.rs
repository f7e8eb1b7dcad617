//! DATA in, SACK out (RFC 9260 6.2, 6.5, 6.9): TSN tracking, the receive
//! window, reassembly, ordered delivery and the decision when to SACK.

use bytes::Bytes;

use super::{Association, State};
use crate::events::Event;
use crate::rx::window::{self, Admission};
use crate::rx::{Fragment, MAX_DUPLICATES_PER_SACK, MAX_GAP_OFFSET, Received};
use crate::serial::Tsn;
use crate::time::Time;
use crate::timer::TimerKind;
use crate::wire::cause::ErrorCause;
use crate::wire::chunk::{Data, ForwardTsn, Sack};

/// What the DATA chunks of one packet amounted to.
#[derive(Debug, Default)]
pub(super) struct PacketData {
    pub any: bool,
    pub any_new: bool,
    pub any_duplicate: bool,
    /// The sender set the I bit on a chunk (RFC 9260 3.3.1).
    pub immediate: bool,
    pub gaps_before: bool,
    /// A chunk was dropped for lack of window: SACK at once (6.2).
    pub dropped: bool,
    pub ready: bool,
}

/// One DATA chunk (6.2).
pub(super) fn on_data(a: &mut Association, now: Time, d: &Data<'_>, seen: &mut PacketData) {
    if !matches!(
        a.state,
        State::Established | State::ShutdownPending | State::ShutdownSent
    ) {
        // 9.2: after SHUTDOWN the peer sends no new DATA; before setup there is none.
        a.counters.malformed_chunks += 1;
        return;
    }
    if !seen.any {
        seen.any = true;
        seen.gaps_before = a.tracker.has_gaps();
    }
    if d.payload.is_empty() {
        // 6.2: DATA without user data: ABORT with "No User Data".
        a.abort_with(
            ErrorCause::NoUserData { tsn: d.tsn },
            "peer sent a DATA chunk without user data",
        );
        return;
    }
    // RFC 7053: the I bit asks for a SACK at once; an older receiver ignores it.
    seen.immediate |= d.flags.immediate && a.cfg.honor_i_bit;
    match a.tracker.classify(Tsn(d.tsn)) {
        Received::New => {}
        Received::Duplicate => {
            a.tracker.record(Tsn(d.tsn));
            seen.any_duplicate = true;
            a.counters.duplicate_tsns_received += 1;
            return;
        }
        Received::OutOfWindow | Received::TooManyGaps => {
            a.counters.data_dropped_window_full += 1;
            seen.dropped = true;
            return;
        }
    }
    if !admit(a, d) {
        if a.state != State::Closed {
            a.counters.data_dropped_window_full += 1;
            seen.dropped = true;
        }
        return;
    }
    a.tracker.accept(Tsn(d.tsn));
    seen.any_new = true;
    a.counters.data_chunks_received += 1;
    a.counters.payload_bytes_received += d.payload.len() as u64;
    // 6.5: a stream the peer may not use: acknowledge the TSN, report, discard.
    if d.stream_id >= a.delivery.inbound_streams() {
        a.report_error(
            now,
            ErrorCause::InvalidStreamIdentifier {
                stream_id: d.stream_id,
            },
        );
        return;
    }
    let fragment = Fragment {
        tsn: d.tsn,
        stream_id: d.stream_id,
        ssn: d.ssn,
        ppid: d.ppid,
        flags: d.flags,
        payload: Bytes::copy_from_slice(&d.payload),
    };
    match a.reassembly.push(fragment) {
        Ok(Some(message)) => {
            super::reconfig::deliver(a, message, now);
            seen.ready |= a.delivery.has_ready();
        }
        Ok(None) => {}
        // A message beyond our limit, or fragments that contradict each other:
        // 6.9 leaves no way to deliver it, so the association ends.
        Err(e) => {
            let info = e.to_string();
            a.abort_with(
                ErrorCause::ProtocolViolation(info.as_bytes().to_vec().into()),
                &info,
            );
        }
    }
}

/// RFC 3758 3.6: a FORWARD TSN: the peer abandoned everything up to its New
/// Cumulative TSN. The TSNs count as received, partial messages at or below
/// it are dropped, the ordered streams it names skip to its SSNs (releasing
/// what waited behind them), and a SACK goes at once.
pub(super) fn on_forward_tsn(
    a: &mut Association,
    now: Time,
    f: &ForwardTsn,
    seen: &mut PacketData,
) {
    if !matches!(
        a.state,
        State::Established | State::ShutdownPending | State::ShutdownSent
    ) {
        // As for DATA (9.2): none after SHUTDOWN, none before setup.
        a.counters.malformed_chunks += 1;
        return;
    }
    a.counters.forward_tsns_received += 1;
    let cum = a.tracker.cum_tsn();
    let new_cum = Tsn(f.new_cum_tsn);
    if cum.is_before(new_cum) {
        // A peer abandons only what it sent, and it cannot have sent beyond
        // what a gap block reports: a New Cumulative TSN further ahead lies.
        if new_cum.since(cum) > MAX_GAP_OFFSET {
            a.counters.malformed_chunks += 1;
            return;
        }
        a.tracker.skip_to(new_cum);
        a.reassembly.forget_through(new_cum.0);
        let streams = a.delivery.inbound_streams();
        for s in f.streams.iter().filter(|s| s.stream_id < streams) {
            a.delivery.skip_through(s.stream_id, s.ssn, now);
        }
        seen.ready |= a.delivery.has_ready();
    }
    // 3.6: a SACK at once, also for an out-of-date FORWARD TSN.
    a.sack_requested = true;
    if seen.ready && !seen.any {
        a.emit(Event::MessageReady);
        seen.ready = false;
    }
}

/// RFC 9260 6.2: whether a new chunk fits the receive buffer, making room
/// for it by reneging on the highest fragments held for reassembly when its
/// TSN is below them (see `rx::window` for the policy).
fn admit(a: &mut Association, d: &Data<'_>) -> bool {
    let charge = window::charge(d.payload.len());
    let buffer = usize::try_from(a.cfg.receive_buffer).unwrap_or(usize::MAX);
    let partial = a.reassembly.partial_before(d.tsn);
    let next = window::Next {
        is_next: a.tracker.is_next(Tsn(d.tsn)),
        above_highest: a.tracker.highest_received().is_before(Tsn(d.tsn)),
        continues_message: partial.is_some(),
    };
    if let Some((bytes, fragments)) = partial {
        let message = window::held(bytes + d.payload.len(), fragments + 1);
        if message > buffer.saturating_add(window::NEXT_TSN_ALLOWANCE) {
            // It could never be reassembled: say so rather than stall.
            let info = format!(
                "a message on stream {} is larger than the receive buffer of {buffer} bytes \
                 can hold (at least {message} bytes with bookkeeping)",
                d.stream_id
            );
            a.abort_with(
                ErrorCause::ProtocolViolation(info.as_bytes().to_vec().into()),
                &info,
            );
            return false;
        }
    }
    match window::admit(a.receive_held(), charge, buffer, next) {
        Admission::Accept => true,
        Admission::Drop => false,
        Admission::MakeRoom { mut need } => {
            // Only fragments above this TSN may go, and only if enough can.
            if !a.reassembly.can_free_above(d.tsn, need, window::charge) {
                return false;
            }
            let mut evicted = Vec::new();
            while need > 0 {
                let Some((tsn, len)) = a.reassembly.evict_highest_above(d.tsn) else {
                    break;
                };
                need = need.saturating_sub(window::charge(len));
                evicted.push(tsn);
            }
            for &tsn in &evicted {
                a.tracker.forget(Tsn(tsn));
            }
            a.counters.data_reneged += evicted.len() as u64;
            need == 0
        }
    }
}

/// After the DATA chunks of a packet: the SACK decision (6.2, 6.7).
pub(super) fn after_data_packet(a: &mut Association, now: Time, seen: &PacketData) {
    if seen.ready {
        a.emit(Event::MessageReady);
    }
    if a.state == State::Closed {
        return;
    }
    let gaps_after = a.tracker.has_gaps();
    if let Some(delay) = a.sack_decision.on_data_packet(
        now,
        seen.any_new,
        seen.any_duplicate,
        seen.immediate,
        seen.gaps_before,
        gaps_after,
    ) {
        a.timers
            .start_if_stopped(TimerKind::DelayedSack, now, delay);
    }
    if seen.dropped {
        a.sack_requested = true;
    }
    // A window too small for a full packet means the sender is probing it one
    // chunk at a time (RFC 9260 6.1 A): a delayed SACK would add SACK.Delay
    // to every probe. Acknowledge at once.
    if seen.any_new && (a.our_rwnd() as usize) < a.path.mtu {
        a.sack_requested = true;
    }
}

/// Whether a SACK must go in the next packet.
pub(super) fn sack_due(a: &Association, now: Time) -> bool {
    a.sack_requested
        || a.sack_decision
            .sack_due(now, a.timers.deadline(TimerKind::DelayedSack))
}

/// Whether a delayed SACK is pending (worth bundling with outgoing DATA).
pub(super) fn sack_pending(a: &Association) -> bool {
    a.sack_requested
        || a.sack_decision
            .deadline(a.timers.deadline(TimerKind::DelayedSack))
            .is_some()
}

/// Builds the SACK to send now, to fit in `room` bytes, and resets the SACK
/// timer.
pub(super) fn make_sack(a: &mut Association, room: usize) -> Sack {
    // 6.2: as many gap blocks as fit the packet (with room for 32 duplicates).
    let max_gaps = room.saturating_sub(16 + 4 * MAX_DUPLICATES_PER_SACK) / 4;
    let rwnd = a.our_rwnd();
    let sack = a.tracker.sack(rwnd, max_gaps);
    a.advertised_rwnd = rwnd;
    a.sack_requested = false;
    a.sack_decision.on_sack_sent();
    a.timers.stop(TimerKind::DelayedSack);
    a.counters.sacks_sent += 1;
    sack
}
