//! DATA in, SACK out (RFC 9260 6.2, 6.5, 6.9): TSN tracking, the receive
//! window, reassembly, ordered delivery and the decision when to SACK.

use bytes::Bytes;

use super::{Association, State};
use crate::events::Event;
use crate::rx::interleaved::MessageKey;
use crate::rx::window::{self, Admission};
use crate::rx::{Fragment, IFragment, MAX_DUPLICATES_PER_SACK, MAX_GAP_OFFSET, Received};
use crate::serial::Tsn;
use crate::time::Time;
use crate::timer::TimerKind;
use crate::wire::cause::ErrorCause;
use crate::wire::chunk::{Data, ForwardTsn, IData, IForwardTsn, PpidOrFsn, Sack};

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

/// The fields of a DATA or I-DATA chunk that the receive rules read.
struct UserChunk<'c> {
    tsn: u32,
    stream_id: u16,
    immediate: bool,
    payload: &'c [u8],
    /// I-DATA: the message the fragment belongs to (RFC 8260 2.1).
    message: Option<MessageKey>,
}

/// One DATA chunk (6.2).
pub(super) fn on_data(a: &mut Association, now: Time, d: &Data<'_>, seen: &mut PacketData) {
    let c = UserChunk {
        tsn: d.tsn,
        stream_id: d.stream_id,
        immediate: d.flags.immediate,
        payload: &d.payload,
        message: None,
    };
    if !take_chunk(a, now, &c, seen) {
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
        Err(e) => abort_reassembly(a, &e),
    }
}

/// One I-DATA chunk (RFC 8260 2.1): as DATA (6.2), reassembled by message
/// and FSN, ordered by MID.
pub(super) fn on_idata(a: &mut Association, now: Time, d: &IData<'_>, seen: &mut PacketData) {
    let key = (d.stream_id, d.flags.unordered, d.mid);
    let c = UserChunk {
        tsn: d.tsn,
        stream_id: d.stream_id,
        immediate: d.flags.immediate,
        payload: &d.payload,
        message: Some(key),
    };
    if !take_chunk(a, now, &c, seen) {
        return;
    }
    let fragment = IFragment {
        tsn: d.tsn,
        stream_id: d.stream_id,
        mid: d.mid,
        fsn: d.fsn(),
        ppid: match d.ppid_or_fsn {
            PpidOrFsn::Ppid(ppid) => ppid,
            PpidOrFsn::Fsn(_) => 0,
        },
        flags: d.flags,
        payload: Bytes::copy_from_slice(&d.payload),
    };
    match super::reconfig::reassemble_idata(a, fragment, now) {
        Ok(()) => seen.ready |= a.delivery.has_ready(),
        Err(e) => abort_reassembly(a, &e),
    }
}

/// A message beyond our limit, or fragments that contradict each other: 6.9
/// leaves no way to deliver it, so the association ends.
pub(super) fn abort_reassembly(a: &mut Association, e: &crate::rx::ReassemblyError) {
    let info = e.to_string();
    a.abort_with(
        ErrorCause::ProtocolViolation(info.as_bytes().to_vec().into()),
        &info,
    );
}

/// RFC 8260 2.1: DATA once I-DATA was negotiated, or I-DATA when it was
/// not: the peer breaks the protocol; ABORT with a Protocol Violation.
pub(super) fn on_wrong_data_kind(a: &mut Association, chunk: &'static str) {
    let info = if a.interleaving() {
        format!("peer sent a {chunk} chunk, but I-DATA was negotiated (RFC 8260 2.1)")
    } else {
        format!("peer sent an {chunk} chunk, but I-DATA was not negotiated (RFC 8260 2.1)")
    };
    a.abort_with(
        ErrorCause::ProtocolViolation(info.as_bytes().to_vec().into()),
        &info,
    );
}

/// 9.2: after SHUTDOWN the peer sends no new user data (nor skips any with a
/// FORWARD TSN); before setup there is none. Otherwise the chunk is counted
/// malformed and ignored.
fn user_data_allowed(a: &mut Association) -> bool {
    let allowed = matches!(
        a.state,
        State::Established | State::ShutdownPending | State::ShutdownSent
    );
    if !allowed {
        a.counters.malformed_chunks += 1;
    }
    allowed
}

/// The rules every chunk of user data passes (6.2, 6.5): state, the I bit,
/// the TSN's classification, the receive window and the stream. Returns
/// whether the chunk is new and its fragment goes on to reassembly.
fn take_chunk(a: &mut Association, now: Time, d: &UserChunk<'_>, seen: &mut PacketData) -> bool {
    if !user_data_allowed(a) {
        return false;
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
        return false;
    }
    // RFC 7053: the I bit asks for a SACK at once; an older receiver ignores it.
    seen.immediate |= d.immediate && a.cfg.honor_i_bit;
    match a.tracker.classify(Tsn(d.tsn)) {
        Received::New => {}
        Received::Duplicate => {
            a.tracker.record(Tsn(d.tsn));
            seen.any_duplicate = true;
            a.counters.duplicate_tsns_received += 1;
            return false;
        }
        Received::OutOfWindow | Received::TooManyGaps => {
            a.counters.data_dropped_window_full += 1;
            seen.dropped = true;
            return false;
        }
    }
    if !admit(a, d) {
        if a.state != State::Closed {
            a.counters.data_dropped_window_full += 1;
            seen.dropped = true;
        }
        return false;
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
        return false;
    }
    true
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
    // As for DATA (9.2).
    if !user_data_allowed(a) {
        return;
    }
    a.counters.forward_tsns_received += 1;
    if skip_cum_tsn(a, f.new_cum_tsn) {
        a.reassembly.forget_through(f.new_cum_tsn);
        let streams = a.delivery.inbound_streams();
        for s in f.streams.iter().filter(|s| s.stream_id < streams) {
            super::reconfig::skip_ssn(a, s.stream_id, s.ssn, f.new_cum_tsn, now);
        }
        seen.ready |= a.delivery.has_ready();
    }
    after_forward_tsn(a, seen);
}

/// RFC 8260 2.3.1: an I-FORWARD-TSN, RFC 3758 3.6 for I-DATA: the TSNs up to
/// its New Cumulative TSN count as received; each entry names a stream, U
/// and MID: the unfinished messages it covers are dropped (an ordered entry
/// covers its stream's MIDs up to it, an unordered one its own MID), and an
/// ordered stream skips to the MID after it, releasing what waited behind.
/// Entries for unknown streams are ignored.
pub(super) fn on_iforward_tsn(
    a: &mut Association,
    now: Time,
    f: &IForwardTsn,
    seen: &mut PacketData,
) {
    // As for DATA (9.2).
    if !user_data_allowed(a) {
        return;
    }
    a.counters.forward_tsns_received += 1;
    if skip_cum_tsn(a, f.new_cum_tsn) {
        // What it skipped without naming it (see `forget_stranded`).
        a.ireassembly.forget_stranded(f.new_cum_tsn);
        let streams = a.delivery.inbound_streams();
        for s in f.streams.iter().filter(|s| s.stream_id < streams) {
            a.ireassembly.forget(s.stream_id, s.unordered, s.mid);
            if !s.unordered {
                super::reconfig::skip_mid(a, s.stream_id, s.mid, f.new_cum_tsn, now);
            }
        }
        seen.ready |= a.delivery.has_ready();
    }
    after_forward_tsn(a, seen);
}

/// RFC 3758 3.6: moves the cumulative TSN to a FORWARD TSN's (or an
/// I-FORWARD-TSN's) New Cumulative TSN; whether it moved.
fn skip_cum_tsn(a: &mut Association, new_cum_tsn: u32) -> bool {
    let cum = a.tracker.cum_tsn();
    let new_cum = Tsn(new_cum_tsn);
    if !cum.is_before(new_cum) {
        return false;
    }
    // A peer abandons only what it sent, and it cannot have sent beyond
    // what a gap block reports: a New Cumulative TSN further ahead lies.
    if new_cum.since(cum) > MAX_GAP_OFFSET {
        a.counters.malformed_chunks += 1;
        return false;
    }
    a.tracker.skip_to(new_cum);
    true
}

/// RFC 3758 3.6: a SACK at once, also for an out-of-date FORWARD TSN.
fn after_forward_tsn(a: &mut Association, seen: &mut PacketData) {
    a.sack_requested = true;
    if seen.ready && !seen.any {
        a.emit(Event::MessageReady);
        seen.ready = false;
    }
}

/// RFC 9260 6.2: whether a new chunk fits the receive buffer, making room
/// for it by reneging on the highest fragments held for reassembly when its
/// TSN is below them (see `rx::window` for the policy).
fn admit(a: &mut Association, d: &UserChunk<'_>) -> bool {
    let charge = window::charge(d.payload.len());
    let buffer = usize::try_from(a.cfg.receive_buffer).unwrap_or(usize::MAX);
    // The unfinished message the chunk continues: by TSN for DATA, by
    // (stream, U, MID) for I-DATA.
    let partial = match d.message {
        None => a.reassembly.partial_before(d.tsn),
        Some(key) => super::reconfig::ipartial(a, d.tsn, key),
    };
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
    let admitted = match window::admit(a.receive_held(), charge, buffer, next) {
        Admission::Accept => true,
        Admission::Drop => false,
        Admission::MakeRoom { need } => make_room(a, d, need),
    };
    // Messages a stream reset holds are released by its answer or by the
    // cumulative TSN, not by the application: no stall while there are.
    if !admitted
        && next.is_next
        && a.interleaving()
        && !a.delivery.has_ready()
        && a.reconfig.held() == (0, 0)
    {
        // RFC 8260 leaves the receiver to hold every interleaved message
        // whole: a buffer full of unfinished messages, none of which the
        // application can read, that cannot take the chunk the cumulative
        // TSN waits for can never move again. Say so rather than stall.
        let info = format!(
            "the peer interleaved unfinished messages that together fill the receive \
             buffer of {buffer} bytes ({} held), and the chunk with TSN {} does not fit",
            a.receive_held(),
            d.tsn
        );
        a.abort_with(
            ErrorCause::ProtocolViolation(info.as_bytes().to_vec().into()),
            &info,
        );
    }
    admitted
}

/// RFC 9260 6.2: makes `need` charged bytes of room for chunk `d` by
/// reneging on the highest fragments held above its TSN, if enough can go.
fn make_room(a: &mut Association, d: &UserChunk<'_>, mut need: usize) -> bool {
    // Only fragments above this TSN may go, and only if enough can.
    let can_free = if a.interleaving() {
        a.ireassembly.can_free_above(d.tsn, need, window::charge)
    } else {
        a.reassembly.can_free_above(d.tsn, need, window::charge)
    };
    if !can_free {
        return false;
    }
    let mut evicted = Vec::new();
    while need > 0 {
        let highest = if a.interleaving() {
            a.ireassembly.evict_highest_above(d.tsn)
        } else {
            a.reassembly.evict_highest_above(d.tsn)
        };
        let Some((tsn, len)) = highest else {
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
    if seen.any_new && (a.our_rwnd() as usize) < a.paths.data().mtu {
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
