//! The peer's requests (RFC 6525 5.2): checked by sequence number,
//! performed, deferred or refused, and answered.

use super::*;

/// One request of the peer, checked against the sequence number we expect
/// (5.2.1); returns the answer.
pub(super) fn on_request(
    a: &mut Association,
    now: Time,
    p: &ReconfigParam<'_>,
) -> ReconfigParam<'static> {
    let seq = request_seq(p);
    if !a.reconfig.negotiated {
        // Not offered by us (or by the peer): refused, without state.
        return response(seq, ReconfigResult::Denied);
    }
    if seq != a.reconfig.peer_next_seq {
        // 5.2.1: a retransmission of a request we answered gets the same
        // answer; any other number is a bad one.
        return a
            .reconfig
            .repeat(seq)
            .unwrap_or_else(|| response(seq, ReconfigResult::ErrorBadSequenceNumber));
    }
    let (answer, consumed) = perform(a, now, p);
    if consumed {
        a.reconfig.peer_next_seq = seq.wrapping_add(1);
        a.reconfig.remember(answer.clone());
    }
    answer
}

/// Performs (or defers, or refuses) the request `p`, which carries the
/// sequence number we expected. Returns the answer and whether the request
/// was taken (otherwise its retransmission is performed anew).
fn perform(
    a: &mut Association,
    now: Time,
    p: &ReconfigParam<'_>,
) -> (ReconfigParam<'static>, bool) {
    let seq = request_seq(p);
    if matches!(p, ReconfigParam::OutgoingSsnReset { .. }) && a.reconfig.ssn_tsn_in_flight() {
        // Our SSN/TSN Reset Request is in flight and holds the ordered
        // messages that arrive until it is answered (5.1.4): the stream
        // reset waits for that answer, "In progress", and the peer's
        // retransmission is taken anew.
        return (response(seq, ReconfigResult::InProgress), false);
    }
    let result = match p {
        ReconfigParam::OutgoingSsnReset {
            response_seq,
            last_tsn,
            streams,
            ..
        } => on_outgoing_reset(a, now, seq, *response_seq, Tsn(*last_tsn), streams),
        ReconfigParam::IncomingSsnReset { streams, .. } => on_incoming_reset(a, streams),
        ReconfigParam::SsnTsnReset { .. } => return on_ssn_tsn_reset(a, now, seq),
        ReconfigParam::AddOutgoingStreams { new_streams, .. } => on_add_outgoing(a, *new_streams),
        ReconfigParam::AddIncomingStreams { new_streams, .. } => on_add_incoming(a, *new_streams),
        ReconfigParam::Response { .. } | ReconfigParam::Unknown { .. } => ReconfigResult::Denied,
    };
    (response(seq, result), true)
}

/// 5.2.2: the peer reset its outgoing streams, our incoming ones.
fn on_outgoing_reset(
    a: &mut Association,
    now: Time,
    seq: u32,
    response_seq: u32,
    last_tsn: Tsn,
    streams: &[u16],
) -> ReconfigResult {
    // 5.2.2: the answer to our Incoming SSN Reset Request, if it was one.
    complete_incoming_request(a, response_seq);
    let streams = normalized(streams);
    let inbound = a.delivery.inbound_streams();
    if streams.last().is_some_and(|&s| s >= inbound) {
        return ReconfigResult::Denied;
    }
    if a.reconfig.deferred.is_some() {
        return ReconfigResult::ErrorRequestAlreadyInProgress;
    }
    let cum = a.tracker.cum_tsn();
    if !cum.is_before(last_tsn) {
        // E3: everything before the reset has arrived (or was skipped).
        reset_incoming(a, now, &streams, last_tsn);
        return ReconfigResult::SuccessPerformed;
    }
    // A sender cannot have assigned TSNs further ahead than a gap block
    // reaches: a Last Assigned TSN beyond lies.
    if last_tsn.since(cum) > MAX_GAP_OFFSET {
        a.counters.malformed_chunks += 1;
        return ReconfigResult::Denied;
    }
    // E1: deferred until the cumulative TSN reaches it.
    a.reconfig.deferred = Some(Box::new(Deferred {
        request_seq: seq,
        last_tsn,
        streams,
        held: Vec::new(),
        held_bytes: 0,
        next_numbering: None,
    }));
    ReconfigResult::InProgress
}

/// The peer's Outgoing SSN Reset Request answered our Incoming SSN Reset
/// Request `response_seq` (5.2.2, 5.1.3): that request is done.
fn complete_incoming_request(a: &mut Association, response_seq: u32) {
    let Some(flight) = a.reconfig.in_flight.as_mut() else {
        return;
    };
    flight
        .requests
        .retain(|(seq, r)| !(*seq == response_seq && matches!(r, Request::ResetIncoming { .. })));
    if flight.requests.is_empty() {
        a.reconfig.in_flight = None;
        a.timers.stop(TimerKind::Reconfig);
    }
}

/// 5.2.2 E3: the next expected SSN of `streams` (all if empty) is 0; with
/// I-DATA the next MID, and the unfinished messages of the old numbering
/// (with a fragment at or before `last_tsn`) are dropped: every TSN up to
/// it arrived or was skipped, so what is missing of them was abandoned.
fn reset_incoming(a: &mut Association, now: Time, streams: &[u16], last_tsn: Tsn) {
    let list: Vec<u16> = if streams.is_empty() {
        (0..a.delivery.inbound_streams()).collect()
    } else {
        streams.to_vec()
    };
    for &s in &list {
        a.delivery.reset_stream(s, now);
        if a.interleaving() {
            a.mid_ordering.reset_stream(s, now, &mut a.delivery);
            a.ireassembly.forget_old_numbering(s, last_tsn.0);
        }
    }
    a.counters.streams_reset += list.len() as u64;
    if a.delivery.has_ready() {
        a.emit(Event::MessageReady);
    }
    a.emit(Event::StreamsReset {
        direction: ResetDirection::Incoming,
        streams: list,
    });
}

/// 5.2.3: the peer asks us to reset our outgoing `streams` (all if
/// empty): those we have used go in our next Outgoing SSN Reset Request.
/// A stream never used still numbers from 0: nothing to reset, and no
/// state is made for it (a request naming every stream costs nothing).
fn on_incoming_reset(a: &mut Association, streams: &[u16]) -> ReconfigResult {
    let outbound = a.outbound_streams;
    if streams.iter().any(|&s| s >= outbound) {
        return ReconfigResult::Denied;
    }
    let used: Vec<u16> = if streams.is_empty() {
        a.send_queue.used_streams().collect()
    } else {
        let used: BTreeSet<u16> = a.send_queue.used_streams().collect();
        normalized(streams)
            .into_iter()
            .filter(|s| used.contains(s))
            .collect()
    };
    if used.is_empty() {
        return ReconfigResult::SuccessNothingToDo;
    }
    for s in used {
        a.reconfig.pending_mut().reset.insert(s);
        a.send_queue.pause(s);
    }
    ReconfigResult::SuccessPerformed
}

/// 5.2.4: the peer asks to reset every SSN and the TSNs. Performed only
/// when everything we sent is acknowledged (otherwise "In progress", and
/// the peer's retransmission is taken anew).
fn on_ssn_tsn_reset(a: &mut Association, now: Time, seq: u32) -> (ReconfigParam<'static>, bool) {
    if a.reconfig.deferred.is_some() || a.reconfig.in_flight.is_some() {
        return (
            response(seq, ReconfigResult::ErrorRequestAlreadyInProgress),
            true,
        );
    }
    if !a.rtx.outstanding().is_empty() || a.send_queue.has_started_message() {
        return (response(seq, ReconfigResult::InProgress), false);
    }
    // G4: as a FORWARD TSN to the highest TSN received; G1: the peer's
    // next TSN is the first we did not acknowledge plus 2^31.
    let receiver_next = a.tracker.cum_tsn().next().plus(1 << 31);
    restart_receiving(a, now, receiver_next, false);
    // G2, G3: our next TSN stays (nothing is outstanding).
    let sender_next = a.rtx.outstanding().next_tsn();
    a.send_queue.reset_all_ssns();
    a.emit(Event::AssociationReset);
    (
        ReconfigParam::Response {
            response_seq: seq,
            result: ReconfigResult::SuccessPerformed,
            next_tsns: Some((sender_next.0, receiver_next.0)),
        },
        true,
    )
}

/// 5.2.5: the peer adds outgoing streams, our incoming ones, up to
/// `Config::max_inbound_streams`.
fn on_add_outgoing(a: &mut Association, added: u16) -> ReconfigResult {
    let total = u32::from(a.delivery.inbound_streams()) + u32::from(added);
    if added == 0 || total > u32::from(a.cfg.max_inbound_streams) {
        return ReconfigResult::Denied;
    }
    let incoming = a.delivery.add_streams(added);
    if a.interleaving() {
        // RFC 8260: I-DATA on the new streams is ordered by MID.
        a.mid_ordering.add_streams(added);
    }
    a.emit(Event::StreamsAdded {
        outgoing: a.outbound_streams,
        incoming,
    });
    ReconfigResult::SuccessPerformed
}

/// 5.2.6: the peer asks us to add outgoing streams: our Add Outgoing
/// Streams Request follows (up to 65535 streams).
fn on_add_incoming(a: &mut Association, added: u16) -> ReconfigResult {
    let (asked, _) = a.reconfig.adds_requested();
    let total = u32::from(a.outbound_streams) + asked + u32::from(added);
    if added == 0 || total > u32::from(u16::MAX) {
        return ReconfigResult::Denied;
    }
    let p = &mut a.reconfig.pending_mut().add;
    p.0 = p.0.saturating_add(added);
    ReconfigResult::SuccessPerformed
}

/// A whole message for delivery: held if a deferred reset covers its
/// stream and it belongs to the new numbering (5.2.2 E1).
pub(in crate::assoc) fn deliver(a: &mut Association, msg: Reassembled, now: Time) {
    if let Some(Held::Data(msg)) = hold_if_due(a, Held::Data(msg)) {
        a.delivery.push(msg, now);
    }
}

/// A whole I-DATA message for ordering by MID: held as DATA ones are
/// (5.2.2 E1, the MIDs restarting at 0 with RFC 8260).
fn deliver_idata(a: &mut Association, msg: IReassembled, now: Time) {
    if let Some(Held::IData(msg)) = hold_if_due(a, Held::IData(msg)) {
        a.mid_ordering.push(msg, now, &mut a.delivery);
    }
}

/// Holds an ordered message that a deferred reset must hold (it is of the
/// new numbering, 5.2.2 E1), or that waits for the answer to our SSN/TSN
/// Reset Request (5.1.4, see `Reconfig::ssn_tsn_held`); gives back any
/// other, to be delivered now.
fn hold_if_due(a: &mut Association, msg: Held) -> Option<Held> {
    let (stream, unordered, bytes) = msg.stream_unordered_len();
    if unordered {
        return Some(msg);
    }
    if let Some(d) = a.reconfig.deferred.as_mut()
        && d.is_next_numbering(stream, msg.first_tsn().0)
    {
        d.hold(bytes, msg);
        return None;
    }
    if a.reconfig.ssn_tsn_in_flight() {
        a.reconfig.ssn_tsn_held_bytes += bytes;
        a.reconfig.ssn_tsn_held.push(msg);
        return None;
    }
    Some(msg)
}

/// A new I-DATA fragment for reassembly (RFC 8260 2.1). While a deferred
/// reset covers its stream, a fragment beyond the request's Sender's Last
/// Assigned TSN is of the new numbering: it is reassembled apart, as its
/// MID may repeat one of an unfinished message of the old numbering. A
/// message it completes is delivered (unordered) or ordered, or held.
pub(in crate::assoc) fn reassemble_idata(
    a: &mut Association,
    f: IFragment,
    now: Time,
) -> Result<(), ReassemblyError> {
    let largest = a.cfg.largest_message_received();
    let whole = match a.reconfig.deferred.as_mut() {
        Some(d) if d.is_next_numbering(f.stream_id, f.tsn) => {
            let first = d.last_tsn.next().0;
            d.next_numbering
                .get_or_insert_with(|| IReassembly::new(first, largest))
                .push(f)?
        }
        _ => a.ireassembly.push(f)?,
    };
    if let Some(msg) = whole {
        deliver_idata(a, msg, now);
    }
    Ok(())
}

/// The bytes and fragments held of the unfinished I-DATA message `key`
/// that a fragment with TSN `tsn` continues, where that fragment goes.
pub(in crate::assoc) fn ipartial(
    a: &Association,
    tsn: u32,
    key: MessageKey,
) -> Option<(usize, usize)> {
    match a.reconfig.deferred.as_ref() {
        Some(d) if d.is_next_numbering(key.0, tsn) => d.next_numbering.as_ref()?.partial(key),
        _ => a.ireassembly.partial(key),
    }
}

/// After a packet moved the cumulative TSN: performs a deferred reset once
/// every TSN up to its Sender's Last Assigned TSN arrived or was skipped
/// (5.2.2 E1 to E4), and answers the request again, now performed.
pub(in crate::assoc) fn after_packet(a: &mut Association, now: Time) {
    a.reconfig.requests_in_packet = false;
    let Some(d) = &a.reconfig.deferred else {
        return;
    };
    if a.tracker.cum_tsn().is_before(d.last_tsn) {
        return;
    }
    let Some(d) = a.reconfig.deferred.take() else {
        return;
    };
    reset_incoming(a, now, &d.streams, d.last_tsn);
    // The new numbering's unfinished I-DATA messages join the association's
    // reassembly, now rid of the old numbering's.
    for f in d
        .next_numbering
        .map(IReassembly::into_fragments)
        .unwrap_or_default()
    {
        match a.ireassembly.push(f) {
            Ok(Some(msg)) => a.mid_ordering.push(msg, now, &mut a.delivery),
            Ok(None) => {}
            // Only a fragment that arrived before the request could clash.
            Err(e) => {
                super::super::receive::abort_reassembly(a, &e);
                return;
            }
        }
    }
    release(a, d.held, now);
    if a.delivery.has_ready() {
        a.emit(Event::MessageReady);
    }
    answer_performed(a, d.request_seq);
}

/// The messages a deferred reset held, now that the streams were reset,
/// and the skips that came behind them, in the order they arrived.
pub(super) fn release(a: &mut Association, held: Vec<Held>, now: Time) {
    for m in held {
        match m {
            Held::Data(m) => a.delivery.push(m, now),
            Held::IData(m) => a.mid_ordering.push(m, now, &mut a.delivery),
            Held::Skip { stream, ssn, .. } => a.delivery.skip_through(stream, ssn, now),
            Held::SkipMid { stream, mid, .. } => {
                a.mid_ordering
                    .skip_through(stream, mid, now, &mut a.delivery);
            }
        }
    }
}

/// RFC 3758 3.6: a FORWARD TSN with New Cumulative TSN `new_cum` skips
/// ordered `stream` through `ssn` (see [`skip_stream`]).
pub(in crate::assoc) fn skip_ssn(
    a: &mut Association,
    stream: u16,
    ssn: u16,
    new_cum: u32,
    now: Time,
) {
    let tsn = Tsn(new_cum);
    skip_stream(a, Held::Skip { stream, ssn, tsn }, now);
}

/// RFC 8260 2.3.1: an I-FORWARD-TSN with New Cumulative TSN `new_cum` skips
/// ordered `stream` through `mid` (see [`skip_stream`]).
pub(in crate::assoc) fn skip_mid(
    a: &mut Association,
    stream: u16,
    mid: u32,
    new_cum: u32,
    now: Time,
) {
    let tsn = Tsn(new_cum);
    skip_stream(a, Held::SkipMid { stream, mid, tsn }, now);
}

/// RFC 3758 3.6 with RFC 6525: a FORWARD TSN's skip of an ordered stream
/// waits behind the messages held meanwhile, as a message would (see
/// [`hold_if_due`]): applied at once, it would pass held messages by, and
/// they would be dropped as stale when released, though acknowledged.
/// Applied at once otherwise.
fn skip_stream(a: &mut Association, skip: Held, now: Time) {
    let (stream, ..) = skip.stream_unordered_len();
    if let Some(d) = a.reconfig.deferred.as_mut()
        && d.is_next_numbering(stream, skip.first_tsn().0)
    {
        super::hold_skip(&mut d.held, skip);
    } else if a.reconfig.ssn_tsn_in_flight() {
        super::hold_skip(&mut a.reconfig.ssn_tsn_held, skip);
    } else {
        release(a, vec![skip], now);
    }
}

/// The deferred request `seq` is performed: it is answered so, now and to
/// any repeat.
pub(super) fn answer_performed(a: &mut Association, seq: u32) {
    let answer = response(seq, ReconfigResult::SuccessPerformed);
    for slot in &mut a.reconfig.answered {
        if request_seq(slot) == seq {
            *slot = answer.clone();
        }
    }
    queue_answers(a, vec![answer]);
}
