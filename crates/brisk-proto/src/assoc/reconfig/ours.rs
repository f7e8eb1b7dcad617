//! Our requests (RFC 6525 5.1): the next one goes when none is in flight,
//! the RE-CONFIG timer retransmits it, and the peer's answers end it.

use super::*;

/// Before each packet: sends the next request if none is in flight and one
/// is ready (RFC 6525 5.1.1: one request in flight at a time).
pub(in crate::assoc) fn poll_request(a: &mut Association, now: Time) {
    let r = &a.reconfig;
    // Also while shutting down: the streams paused for a reset hold
    // messages that the shutdown waits for.
    if !r.negotiated
        || r.in_flight.is_some()
        || !r.has_pending()
        || !matches!(
            a.state,
            State::Established | State::ShutdownPending | State::ShutdownReceived
        )
    {
        return;
    }
    // Stream lists that fit one packet, both of them with the chunk.
    let max_streams = a.paths.data().mtu.saturating_sub(12 + 4 + 16 + 8) / 4;
    let mut requests: Vec<Request> = Vec::new();
    if !a.reconfig.pending().ssn_tsn {
        let ready: Vec<u16> = a
            .reconfig
            .pending()
            .reset
            .iter()
            .copied()
            .filter(|&s| a.send_queue.is_drained(s))
            .take(max_streams)
            .collect();
        if !ready.is_empty() {
            // 5.1.2 A3: the TSN last assigned.
            let last_tsn = a.rtx.outstanding().next_tsn().prev().0;
            let pending = a.reconfig.pending_mut();
            for &s in &ready {
                pending.reset.remove(&s);
                pending.reset_tsns.insert(s, Tsn(last_tsn));
            }
            requests.push(Request::ResetOutgoing {
                streams: ready,
                last_tsn,
            });
        }
    }
    if !a.reconfig.pending().incoming.is_empty() {
        let streams: Vec<u16> = a
            .reconfig
            .pending()
            .incoming
            .iter()
            .copied()
            .take(max_streams)
            .collect();
        let pending = a.reconfig.pending_mut();
        for s in &streams {
            pending.incoming.remove(s);
        }
        requests.push(Request::ResetIncoming { streams });
    }
    if requests.is_empty() && a.reconfig.pending().add != (0, 0) {
        let (out, inc) = std::mem::take(&mut a.reconfig.pending_mut().add);
        if out > 0 {
            requests.push(Request::AddOutgoing(out));
        }
        if inc > 0 {
            requests.push(Request::AddIncoming(inc));
        }
    }
    // Not while the peer's stream reset is deferred: its messages held
    // wait for it, and the SSN/TSN reset holds what arrives after.
    if requests.is_empty()
        && a.reconfig.pending().ssn_tsn
        && a.reconfig.deferred.is_none()
        && a.rtx.outstanding().is_empty()
        && !a.send_queue.has_started_message()
    {
        a.reconfig.pending_mut().ssn_tsn = false;
        requests.push(Request::SsnTsn);
    }
    if requests.is_empty() {
        return;
    }
    a.counters.reconfig_requests_sent += requests.len() as u64;
    let requests = requests
        .into_iter()
        .map(|r| (a.reconfig.take_seq(), r))
        .collect();
    let flight = InFlight {
        requests,
        // 5.1.2 A4: the peer's last Request Sequence Number we received.
        response_seq: a.reconfig.peer_next_seq.wrapping_sub(1),
        backoff: 0,
        in_progress: false,
    };
    send(a, &flight);
    a.reconfig.in_flight = Some(Box::new(flight));
    let rto = a.paths.data().rto.rto();
    a.timers.start(TimerKind::Reconfig, now, rto);
}

/// Queues the RE-CONFIG chunk of a request in flight.
fn send(a: &mut Association, flight: &InFlight) {
    let params = flight
        .requests
        .iter()
        .map(|(seq, r)| match r {
            Request::ResetOutgoing { streams, last_tsn } => ReconfigParam::OutgoingSsnReset {
                request_seq: *seq,
                response_seq: flight.response_seq,
                last_tsn: *last_tsn,
                streams: streams.clone(),
            },
            Request::ResetIncoming { streams } => ReconfigParam::IncomingSsnReset {
                request_seq: *seq,
                streams: streams.clone(),
            },
            Request::SsnTsn => ReconfigParam::SsnTsnReset { request_seq: *seq },
            Request::AddOutgoing(n) => ReconfigParam::AddOutgoingStreams {
                request_seq: *seq,
                new_streams: *n,
            },
            Request::AddIncoming(n) => ReconfigParam::AddIncomingStreams {
                request_seq: *seq,
                new_streams: *n,
            },
        })
        .collect();
    let chunk = Chunk::ReConfig(ReConfig { params });
    if flight
        .requests
        .iter()
        .any(|(_, r)| matches!(r, Request::SsnTsn))
    {
        // 5.2.4 G3 has the peer take its own outstanding data as
        // acknowledged, which usrsctp does not: a SACK of everything we
        // received goes first, in the same packet, so that none is left.
        a.sack_requested = true;
        a.control.push_back(Control::new(chunk));
    } else {
        // In a packet of its own: a peer that cannot parse it drops the
        // packet (pion/sctp v1.11.3 does), and nothing else goes with it.
        a.control.push_back(Control::alone(chunk));
    }
}

/// Requests never given up: the peer may have performed them already.
fn never_given_up(r: &Request) -> bool {
    matches!(r, Request::ResetOutgoing { .. } | Request::SsnTsn)
}

/// The RE-CONFIG timer expired (RFC 6525 5.1.1): the request goes again,
/// after twice the wait, and counts as an error of the association, unless
/// the peer had answered "In progress" (5.2.7). A flight of requests that
/// may be given up (adding streams, asking the peer to reset its streams)
/// counts none: a peer that cannot parse them (pion/sctp v1.11.3 drops
/// them) is no unreachable peer, and two such requests would otherwise end
/// an idle association; they are given up after `MAX_REQUEST_RETRANSMITS`.
pub(in crate::assoc) fn on_timer(a: &mut Association, now: Time) {
    let Some(mut flight) = a.reconfig.in_flight.take() else {
        return;
    };
    if flight.in_progress {
        flight.in_progress = false;
    } else {
        if flight.requests.iter().any(|(_, r)| never_given_up(r)) && !a.count_error() {
            return;
        }
        if flight.backoff >= MAX_REQUEST_RETRANSMITS {
            // Never answered: what may be given up is reported as failed.
            let (kept, given_up): (Vec<_>, Vec<_>) = std::mem::take(&mut flight.requests)
                .into_iter()
                .partition(|(_, r)| never_given_up(r));
            flight.requests = kept;
            for (_, request) in given_up {
                finish(a, now, request, NO_ANSWER, None);
            }
            if flight.requests.is_empty() {
                return;
            }
        }
        flight.backoff = flight.backoff.saturating_add(1);
    }
    a.counters.reconfig_retransmissions += 1;
    send(a, &flight);
    let wait = a
        .paths
        .data()
        .rto
        .rto()
        .saturating_mul(1u32 << flight.backoff.min(16))
        .min(a.cfg.rto_max);
    a.reconfig.in_flight = Some(flight);
    a.timers.start(TimerKind::Reconfig, now, wait);
}

/// A Re-configuration Response (5.2.7), matched to our request in flight by
/// its sequence number; any other is ignored.
pub(super) fn on_response(
    a: &mut Association,
    now: Time,
    response_seq: u32,
    result: ReconfigResult,
    next_tsns: Option<(u32, u32)>,
) {
    let found = a
        .reconfig
        .in_flight
        .as_ref()
        .and_then(|f| f.requests.iter().position(|(seq, _)| *seq == response_seq));
    let (Some(i), Some(flight)) = (found, a.reconfig.in_flight.as_mut()) else {
        a.counters.malformed_chunks += 1;
        return;
    };
    // An answer proves the peer reachable (RFC 9260 8.3).
    a.errors = 0;
    if result == ReconfigResult::InProgress {
        // 5.2.7: ask again after a while, without counting an error.
        flight.in_progress = true;
        let ssn_tsn = matches!(flight.requests[i].1, Request::SsnTsn);
        let rto = a.paths.data().rto.rto();
        a.timers.start(TimerKind::Reconfig, now, rto);
        if ssn_tsn {
            // 5.2.4: the peer has not reset yet (it waits for its data to be
            // acknowledged, which may need the room these messages take),
            // and performs only on a retransmission we send from now on:
            // every message held so far is of the old numbering.
            release_ssn_tsn_held(a, now);
        }
        return;
    }
    let (_, request) = flight.requests.remove(i);
    if flight.requests.is_empty() {
        a.reconfig.in_flight = None;
        a.timers.stop(TimerKind::Reconfig);
    }
    finish(a, now, request, result, next_tsns);
}

/// Our request ended with `result`: performs our side of it and reports.
fn finish(
    a: &mut Association,
    now: Time,
    request: Request,
    result: ReconfigResult,
    next_tsns: Option<(u32, u32)>,
) {
    let ok = is_success(result);
    match request {
        Request::ResetOutgoing { streams, .. } => {
            for &s in &streams {
                a.send_queue.resume(s, ok);
                // Asked again after messages were held: another reset is
                // owed, once they went.
                if a.send_queue.is_paused(s) {
                    a.reconfig.pending_mut().reset.insert(s);
                } else {
                    a.reconfig.pending_mut().reset.remove(&s);
                }
            }
            if ok {
                a.counters.streams_reset += streams.len() as u64;
                a.emit(Event::StreamsReset {
                    direction: ResetDirection::Outgoing,
                    streams,
                });
            } else {
                // The old numbering goes on: FORWARD TSN names it again.
                for s in &streams {
                    a.reconfig.pending_mut().reset_tsns.remove(s);
                }
                a.emit(Event::StreamResetFailed { streams, result });
            }
        }
        Request::ResetIncoming { streams } => {
            if result == ReconfigResult::SuccessNothingToDo {
                // The peer never used them: they number from 0 already, and
                // no Outgoing SSN Reset Request of its own follows.
                a.emit(Event::StreamsReset {
                    direction: ResetDirection::Incoming,
                    streams,
                });
            } else if !ok {
                a.emit(Event::StreamResetFailed { streams, result });
            }
        }
        Request::SsnTsn => match next_tsns {
            Some((sender_next, receiver_next)) if ok => {
                // 5.1.4: the peer's next TSN, and ours.
                restart_receiving(a, now, Tsn(sender_next), true);
                let rwnd = a.rtx.peer_rwnd();
                a.rtx.reset_tsns(Tsn(receiver_next), &mut a.timers);
                // Every stream is reset and nothing of the old TSNs is
                // outstanding: no FORWARD TSN entry is left out any more
                // (the old TSNs, half the number space away, compare at random).
                a.reconfig.pending_mut().reset_tsns.clear();
                a.rtx.on_peer_window(rwnd);
                a.send_queue.reset_all_ssns();
                a.emit(Event::AssociationReset);
            }
            _ => {
                // The numbering goes on: what was held for it goes in order.
                release_ssn_tsn_held(a, now);
                a.emit(Event::AssociationResetFailed { result });
            }
        },
        Request::AddOutgoing(n) => {
            if ok {
                a.outbound_streams = a.outbound_streams.saturating_add(n);
                a.send_queue.limit_streams(a.outbound_streams);
                a.emit(Event::StreamsAdded {
                    outgoing: a.outbound_streams,
                    incoming: a.delivery.inbound_streams(),
                });
            } else {
                a.emit(Event::StreamsAddFailed {
                    outgoing: n,
                    incoming: 0,
                    result,
                });
            }
        }
        Request::AddIncoming(n) => {
            if !ok {
                a.emit(Event::StreamsAddFailed {
                    outgoing: 0,
                    incoming: n,
                    result,
                });
            }
        }
    }
}

/// The ordered messages held for our SSN/TSN Reset Request, known to be of
/// the old numbering, go for delivery in order.
fn release_ssn_tsn_held(a: &mut Association, now: Time) {
    let held = std::mem::take(&mut a.reconfig.ssn_tsn_held);
    a.reconfig.ssn_tsn_held_bytes = 0;
    theirs::release(a, held, now);
    if a.delivery.has_ready() {
        a.emit(Event::MessageReady);
    }
}

/// RFC 3758 3.5 F with RFC 6525: a FORWARD TSN's entry for a stream we asked
/// to reset, when the FORWARD TSN passes the request's Sender's Last
/// Assigned TSN but the last chunk it skips on that stream belongs to the old
/// numbering (its TSN at or before that TSN), is left out: the peer may have
/// reset the stream already, and that SSN would then skip messages of the
/// new numbering. The reset, performed
/// once the peer's cumulative TSN reaches the request's, delivers what
/// waited behind the abandoned message (and, with I-DATA, drops what is
/// left of the unfinished messages of the old numbering).
pub(in crate::assoc) fn filter_forward_tsn(a: &mut Association, forward: &mut Chunk<'static>) {
    if a.reconfig.pending().reset_tsns.is_empty() {
        return;
    }
    // Once everything up to a request's TSN is acknowledged, no chunk of
    // the old numbering is left.
    let cum = a.rtx.outstanding().cum_ack_point();
    a.reconfig
        .pending_mut()
        .reset_tsns
        .retain(|_, last| cum.is_before(*last));
    let outstanding = a.rtx.outstanding();
    let reset_tsns = &a.reconfig.pending().reset_tsns;
    // An entry of `stream` skipping through `point` is kept unless the last
    // chunk it skips on that stream (ordered, or for an unordered I-DATA
    // entry the chunks of its one message) belongs to the old numbering.
    let keep = |stream: u16, point: Tsn, unordered: Option<u32>| {
        let Some(&last) = reset_tsns.get(&stream) else {
            return true;
        };
        // An ordered entry of a FORWARD TSN that does not pass the request's
        // TSN reaches the peer before it can perform the reset (RFC 6525
        // 5.2.2: only once its cumulative TSN reaches the request's): the
        // skip applies to the old numbering, and must go, for the reset may
        // still fail, and the stream would wait for the abandoned SSN for
        // good. (An unordered message blocks nothing: its entry stays out.)
        if unordered.is_none() && point.is_at_or_before(last) {
            return true;
        }
        let skipped = outstanding
            .chunks()
            .filter(|c| {
                c.frag.stream_id.0 == stream
                    && c.tsn.is_at_or_before(point)
                    && match unordered {
                        None => !c.frag.flags.unordered,
                        Some(mid) => c.frag.flags.unordered && c.frag.mid == mid,
                    }
            })
            .map(|c| c.tsn)
            .last();
        skipped.is_none_or(|tsn| last.is_before(tsn))
    };
    match forward {
        Chunk::ForwardTsn(f) => {
            let point = Tsn(f.new_cum_tsn);
            f.streams.retain(|e| keep(e.stream_id, point, None));
        }
        // RFC 8260 2.3.1 with RFC 6525: the same for I-FORWARD-TSN's entries.
        // An unordered entry names one message by its MID, and the reset
        // restarts the unordered MIDs at 0 too (RFC 8260 2.3): an entry for
        // an old message could name, once the peer reset the stream, a new
        // message with the same MID and drop it. It is left out as well: the
        // peer drops what is left of the old numbering's unfinished messages
        // when it performs the reset.
        Chunk::IForwardTsn(f) => {
            let point = Tsn(f.new_cum_tsn);
            f.streams
                .retain(|e| keep(e.stream_id, point, e.unordered.then_some(e.mid)));
        }
        _ => {}
    }
}
