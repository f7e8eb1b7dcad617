//! Stream reconfiguration (RFC 6525) through the pair harness, with exact
//! expectations: 10 ms one way, so RTT 20 ms.

mod harness;

use std::time::Duration;

use brisk_proto::wire::Packet;
use brisk_proto::wire::chunk::{Chunk, Data, ReConfig, ReconfigParam, ReconfigResult};
use brisk_proto::{Config, Event, OutgoingMessage, ReconfigError, ResetDirection, Time};
use harness::{Dir, Pair, ms};

fn reconfig_config() -> Config {
    Config {
        stream_reconfig: true,
        ..Config::rfc9260()
    }
}

fn connected(a: Config, b: Config) -> Pair {
    let mut p = Pair::new(ms(10), b);
    p.connect(a);
    p.run_for(ms(1000) - Duration::from_micros(p.now.as_micros()));
    p
}

fn pair() -> Pair {
    connected(reconfig_config(), reconfig_config())
}

/// Every RE-CONFIG parameter sent in `dir`, with when it was sent (ms) and
/// whether the packet was delivered.
fn reconfigs(p: &Pair, dir: Dir) -> Vec<(u64, ReconfigParam<'static>)> {
    let mut out = Vec::new();
    for l in p.log.iter().filter(|l| l.seen.dir == dir) {
        let Ok(packet) = Packet::decode(&l.seen.bytes) else {
            continue;
        };
        for c in &packet.chunks {
            if let Chunk::ReConfig(r) = c {
                for param in &r.params {
                    out.push((l.seen.sent_at.as_micros() / 1000, owned(param)));
                }
            }
        }
    }
    out
}

fn owned(p: &ReconfigParam<'_>) -> ReconfigParam<'static> {
    match p.clone() {
        ReconfigParam::Unknown { typ, value } => ReconfigParam::Unknown {
            typ,
            value: value.into_owned().into(),
        },
        ReconfigParam::OutgoingSsnReset {
            request_seq,
            response_seq,
            last_tsn,
            streams,
        } => ReconfigParam::OutgoingSsnReset {
            request_seq,
            response_seq,
            last_tsn,
            streams,
        },
        ReconfigParam::IncomingSsnReset {
            request_seq,
            streams,
        } => ReconfigParam::IncomingSsnReset {
            request_seq,
            streams,
        },
        ReconfigParam::SsnTsnReset { request_seq } => ReconfigParam::SsnTsnReset { request_seq },
        ReconfigParam::Response {
            response_seq,
            result,
            next_tsns,
        } => ReconfigParam::Response {
            response_seq,
            result,
            next_tsns,
        },
        ReconfigParam::AddOutgoingStreams {
            request_seq,
            new_streams,
        } => ReconfigParam::AddOutgoingStreams {
            request_seq,
            new_streams,
        },
        ReconfigParam::AddIncomingStreams {
            request_seq,
            new_streams,
        } => ReconfigParam::AddIncomingStreams {
            request_seq,
            new_streams,
        },
    }
}

/// The (response seq, result) of every response sent in `dir`.
fn responses(p: &Pair, dir: Dir) -> Vec<(u32, ReconfigResult)> {
    reconfigs(p, dir)
        .into_iter()
        .filter_map(|(_, r)| match r {
            ReconfigParam::Response {
                response_seq,
                result,
                ..
            } => Some((response_seq, result)),
            _ => None,
        })
        .collect()
}

/// Every DATA chunk sent in `dir`: (sent at ms, TSN, stream, SSN, first payload byte).
fn data_chunks(p: &Pair, dir: Dir) -> Vec<(u64, u32, u16, u16, u8)> {
    let mut out = Vec::new();
    for l in p.log.iter().filter(|l| l.seen.dir == dir) {
        let Ok(packet) = Packet::decode(&l.seen.bytes) else {
            continue;
        };
        for c in &packet.chunks {
            if let Chunk::Data(Data {
                tsn,
                stream_id,
                ssn,
                payload,
                ..
            }) = c
            {
                out.push((
                    l.seen.sent_at.as_micros() / 1000,
                    *tsn,
                    *stream_id,
                    *ssn,
                    payload[0],
                ));
            }
        }
    }
    out
}

fn events(log: &[(Time, brisk_proto::AssocId, Event)]) -> Vec<(u64, Event)> {
    log.iter()
        .filter(|(_, _, e)| {
            matches!(
                e,
                Event::StreamsReset { .. }
                    | Event::StreamResetFailed { .. }
                    | Event::StreamsAdded { .. }
                    | Event::StreamsAddFailed { .. }
                    | Event::AssociationReset
                    | Event::AssociationResetFailed { .. }
            )
        })
        .map(|(t, _, e)| (t.as_micros() / 1000, e.clone()))
        .collect()
}

/// `events` without their times.
fn just_events(log: &[(Time, brisk_proto::AssocId, Event)]) -> Vec<Event> {
    events(log).into_iter().map(|e| e.1).collect()
}

/// What B received: (SSN, tag) of each message, in order.
fn b_ssns_and_tags(p: &mut Pair) -> Vec<(u16, u8)> {
    p.b_recv_all()
        .iter()
        .map(|m| (m.ssn, m.payload[0]))
        .collect()
}

fn a_assoc(p: &mut Pair) -> &mut brisk_proto::Association {
    let id = p.a_id.unwrap();
    p.a.association(id).unwrap()
}

fn b_assoc(p: &mut Pair) -> &mut brisk_proto::Association {
    let id = p.b_id.unwrap();
    p.b.association(id).unwrap()
}

/// A asks to reset its outgoing `streams` (RFC 6525 5.1.2).
fn a_resets(p: &mut Pair, streams: &[u16]) -> Result<(), ReconfigError> {
    let now = p.now;
    a_assoc(p).reset_streams(now, streams)
}

/// The results of the responses sent in `dir`, in order.
fn results(p: &Pair, dir: Dir) -> Vec<ReconfigResult> {
    responses(p, dir).iter().map(|r| r.1).collect()
}

fn msg(stream: u16, tag: u8) -> OutgoingMessage {
    OutgoingMessage::new(stream, vec![tag; 100])
}

#[test]
fn reset_request_waits_for_in_flight_data_on_that_stream() {
    let mut p = pair();
    assert!(a_assoc(&mut p).stream_reconfig() && b_assoc(&mut p).stream_reconfig());
    let first_tsn = p.a_next_tsn();
    // Three messages on stream 1; the second one's packet is lost.
    p.drop_data_packet(Dir::AtoB, 2);
    for tag in 1..=3 {
        p.a_send(msg(1, tag));
        p.run_for(ms(1));
    }
    a_resets(&mut p, &[1]).unwrap();
    // Sent after the call: waits for the reset, then goes with SSN 0.
    p.a_send(msg(1, 4));
    p.run_for(ms(5000));

    // A's one request: stream 1, Sender's Last Assigned TSN = message 3's.
    let requests: Vec<_> = reconfigs(&p, Dir::AtoB)
        .into_iter()
        .filter(|(_, r)| matches!(r, ReconfigParam::OutgoingSsnReset { .. }))
        .collect();
    let Some((
        asked_at,
        ReconfigParam::OutgoingSsnReset {
            request_seq,
            last_tsn,
            streams,
            ..
        },
    )) = requests.first().cloned()
    else {
        panic!("no request: {requests:?}")
    };
    assert_eq!(streams, vec![1]);
    assert_eq!(last_tsn, first_tsn + 2, "the TSN of message 3");
    // RFC 6525 5.1.1: the first request's number is the initial TSN.
    assert_eq!(request_seq, first_tsn);
    // B: "In progress" (TSN 2 is missing), then, once the retransmission
    // arrived, "Success - Performed" unasked (and again to A's retry of the
    // request, which its timer sent at about the same time: 5.2.1, the
    // same answer to a repeat).
    let mut answers = responses(&p, Dir::BtoA);
    answers.dedup();
    assert_eq!(
        answers,
        vec![
            (request_seq, ReconfigResult::InProgress),
            (request_seq, ReconfigResult::SuccessPerformed)
        ]
    );
    // Messages 1 to 3 exactly once, in order, then message 4 with SSN 0.
    let got: Vec<(u16, u16, u8)> = p
        .b_recv_all()
        .iter()
        .map(|m| (m.stream_id, m.ssn, m.payload[0]))
        .collect();
    assert_eq!(got, vec![(1, 0, 1), (1, 1, 2), (1, 2, 3), (1, 0, 4)]);
    // On the wire: message 4 left only after A learned of the reset, SSN 0.
    let a_events = events(&p.a_events);
    let b_events = events(&p.b_events);
    let reset_at = match &a_events[..] {
        [
            (
                t,
                Event::StreamsReset {
                    direction: ResetDirection::Outgoing,
                    streams,
                },
            ),
        ] if streams == &[1] => *t,
        other => panic!("A's events: {other:?}"),
    };
    assert!(matches!(
        &b_events[..],
        [(_, Event::StreamsReset { direction: ResetDirection::Incoming, streams })] if streams == &[1]
    ));
    let fourth: Vec<_> = data_chunks(&p, Dir::AtoB)
        .into_iter()
        .filter(|d| d.4 == 4)
        .collect();
    assert_eq!(fourth.len(), 1, "{fourth:?}");
    assert_eq!((fourth[0].1, fourth[0].3), (first_tsn + 3, 0));
    assert!(fourth[0].0 >= reset_at && reset_at > asked_at);
    let b = b_assoc(&mut p).stats();
    // The request, and A's retry after "In progress" (not an error).
    assert_eq!((b.reconfig_requests_received, b.streams_reset), (2, 1));
    let a = a_assoc(&mut p).stats();
    assert_eq!(
        (
            a.reconfig_requests_sent,
            a.reconfig_retransmissions,
            a.streams_reset
        ),
        (1, 1, 1)
    );
    assert!(a_assoc(&mut p).all_acked());
}

#[test]
fn a_reset_with_nothing_in_flight_is_performed_at_once_and_the_next_message_has_ssn_zero() {
    let mut p = pair();
    for tag in 1..=2 {
        p.a_send(msg(0, tag));
    }
    p.run_for(ms(100));
    a_resets(&mut p, &[0]).unwrap();
    p.run_for(ms(25));
    // One round trip: the request out, Success back.
    assert!(matches!(
        &events(&p.a_events)[..],
        [(
            _,
            Event::StreamsReset {
                direction: ResetDirection::Outgoing,
                ..
            }
        )]
    ));
    assert_eq!(
        results(&p, Dir::BtoA),
        vec![ReconfigResult::SuccessPerformed]
    );
    p.a_send(msg(0, 3));
    p.run_for(ms(100));
    let got = b_ssns_and_tags(&mut p);
    assert_eq!(got, vec![(0, 1), (1, 2), (0, 3)]);
}

#[test]
fn reset_requests_fail_cleanly_when_not_negotiated() {
    // B does not offer RE-CONFIG: A may not ask.
    let mut p = connected(reconfig_config(), Config::rfc9260());
    assert!(!a_assoc(&mut p).stream_reconfig());
    assert_eq!(a_resets(&mut p, &[0]), Err(ReconfigError::NotNegotiated));
    let now = p.now;
    assert_eq!(
        a_assoc(&mut p).add_streams(now, 1, 0),
        Err(ReconfigError::NotNegotiated)
    );
    // A RE-CONFIG sent anyway is denied by B, which did not offer it.
    let req = Chunk::ReConfig(ReConfig {
        params: vec![ReconfigParam::OutgoingSsnReset {
            request_seq: 1,
            response_seq: 0,
            last_tsn: 0,
            streams: vec![0],
        }],
    });
    p.inject_to_b(vec![req]);
    p.run_for(ms(20));
    assert_eq!(responses(&p, Dir::BtoA), vec![(1, ReconfigResult::Denied)]);
    assert!(events(&p.b_events).is_empty());
}

#[test]
fn unknown_streams_and_empty_lists_are_refused_before_anything_is_sent() {
    let mut p = pair();
    assert_eq!(
        a_resets(&mut p, &[3, 16]),
        Err(ReconfigError::UnknownStream {
            stream_id: 16,
            streams: 16
        })
    );
    assert_eq!(a_resets(&mut p, &[]), Err(ReconfigError::NoStreams));
    let now = p.now;
    assert!(matches!(
        a_assoc(&mut p).add_streams(now, 0, 1),
        Err(ReconfigError::TooManyStreams { limit: 16, .. })
    ));
    p.run_for(ms(100));
    assert!(reconfigs(&p, Dir::AtoB).is_empty());
}

#[test]
fn an_incoming_reset_request_makes_the_peer_reset_its_outgoing_streams() {
    let mut p = pair();
    p.a_send(msg(1, 1));
    p.run_for(ms(100));
    let now = p.now;
    b_assoc(&mut p).request_incoming_reset(now, &[1]).unwrap();
    p.run_for(ms(100));
    // B asks (5.1.3); A answers Success and sends its own Outgoing SSN
    // Reset Request, naming B's request as the one it answers (5.2.3).
    let from_b = reconfigs(&p, Dir::BtoA);
    let Some((
        _,
        ReconfigParam::IncomingSsnReset {
            request_seq: asked,
            streams,
        },
    )) = from_b.first().cloned()
    else {
        panic!("B's request: {from_b:?}")
    };
    assert_eq!(streams, vec![1]);
    let from_a: Vec<ReconfigParam<'static>> =
        reconfigs(&p, Dir::AtoB).into_iter().map(|r| r.1).collect();
    assert!(
        from_a.contains(&ReconfigParam::Response {
            response_seq: asked,
            result: ReconfigResult::SuccessPerformed,
            next_tsns: None
        }),
        "{from_a:?}"
    );
    assert!(
        from_a.iter().any(|r| matches!(r,
            ReconfigParam::OutgoingSsnReset { response_seq, streams, .. }
                if *response_seq == asked && streams == &[1])),
        "{from_a:?}"
    );
    assert!(matches!(
        &events(&p.b_events)[..],
        [(_, Event::StreamsReset { direction: ResetDirection::Incoming, streams })] if streams == &[1]
    ));
    assert!(matches!(
        &events(&p.a_events)[..],
        [(_, Event::StreamsReset { direction: ResetDirection::Outgoing, streams })] if streams == &[1]
    ));
    p.a_send(msg(1, 2));
    p.run_for(ms(100));
    let got = b_ssns_and_tags(&mut p);
    assert_eq!(got, vec![(0, 1), (0, 2)]);
}

/// Drops the first `n` packets in `dir` that carry a RE-CONFIG chunk.
fn drop_reconfigs(p: &mut Pair, dir: Dir, n: u32) {
    let mut left = n;
    p.rule(move |s| {
        if s.dir == dir && s.has(brisk_proto::wire::chunk::types::RECONFIG) && left > 0 {
            left -= 1;
            return Some(harness::Fate::Drop);
        }
        None
    });
}

#[test]
fn a_lost_request_is_retransmitted_by_the_reconfig_timer_with_the_same_number() {
    let mut p = pair();
    drop_reconfigs(&mut p, Dir::AtoB, 1);
    a_resets(&mut p, &[3]).unwrap();
    p.run_for(ms(3000));
    let sent: Vec<(u64, u32)> = reconfigs(&p, Dir::AtoB)
        .into_iter()
        .filter_map(|(t, r)| match r {
            ReconfigParam::OutgoingSsnReset { request_seq, .. } => Some((t, request_seq)),
            _ => None,
        })
        .collect();
    // At once, then after the RTO (RTO.Initial, 1 s: no RTT measured yet on
    // a quiet association), same number.
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[0].1, sent[1].1);
    assert_eq!(sent[1].0 - sent[0].0, 1000);
    assert!(matches!(
        &events(&p.a_events)[..],
        [(
            _,
            Event::StreamsReset {
                direction: ResetDirection::Outgoing,
                ..
            }
        )]
    ));
    assert_eq!(a_assoc(&mut p).stats().reconfig_retransmissions, 1);
}

#[test]
fn a_lost_response_makes_the_peer_repeat_its_answer_without_resetting_twice() {
    let mut p = pair();
    drop_reconfigs(&mut p, Dir::BtoA, 1);
    p.a_send(msg(3, 1));
    p.run_for(ms(100));
    a_resets(&mut p, &[3]).unwrap();
    p.run_for(ms(100));
    // B reset stream 3 and answered; the answer was lost.
    assert_eq!(events(&p.b_events).len(), 1);
    // B meanwhile gets a message on stream 3 with SSN 0 from the new numbering:
    // impossible before A learns, so nothing is sent yet.
    p.a_send(msg(3, 2));
    p.run_for(ms(3000));
    // A's retransmission (same number) is answered as before (5.2.1), and
    // the stream is not reset a second time.
    assert_eq!(
        results(&p, Dir::BtoA),
        vec![
            ReconfigResult::SuccessPerformed,
            ReconfigResult::SuccessPerformed
        ]
    );
    assert_eq!(events(&p.b_events).len(), 1, "{:?}", events(&p.b_events));
    let got = b_ssns_and_tags(&mut p);
    assert_eq!(got, vec![(0, 1), (0, 2)]);
    assert_eq!(b_assoc(&mut p).stats().reconfig_requests_received, 2);
}

/// A RE-CONFIG chunk from A injected into B.
fn inject(p: &mut Pair, params: Vec<ReconfigParam<'static>>) {
    p.inject_to_b(vec![Chunk::ReConfig(ReConfig { params })]);
    p.run_for(ms(20));
}

/// Hands A a packet with `chunk` as if B had sent it (nothing flushed).
fn hand_to_a(p: &mut Pair, chunk: Chunk<'static>) {
    let (_, b_to_a) = p.tags();
    let bytes = harness::packet(b_to_a, vec![chunk]);
    let (now, b_addr) = (p.now, p.b_addr);
    p.a.handle_datagram(now, b_addr, &bytes);
}

/// A's next request number as B expects it: A's initial TSN.
fn a_first_seq(p: &Pair) -> u32 {
    // A sent no data and no request: its next TSN is still its initial TSN.
    p.a_next_tsn()
}

#[test]
fn bad_sequence_numbers_are_answered_as_such_and_change_nothing() {
    let mut p = pair();
    let seq = a_first_seq(&p);
    let reset = |request_seq| ReconfigParam::OutgoingSsnReset {
        request_seq,
        response_seq: 0,
        last_tsn: seq.wrapping_sub(1),
        streams: vec![2],
    };
    // Too far ahead, and behind: Bad Sequence Number, nothing reset.
    inject(&mut p, vec![reset(seq.wrapping_add(5))]);
    inject(&mut p, vec![reset(seq.wrapping_sub(3))]);
    assert!(events(&p.b_events).is_empty());
    // The expected one is performed; its repeat answered the same, not redone.
    inject(&mut p, vec![reset(seq)]);
    inject(&mut p, vec![reset(seq)]);
    assert_eq!(
        responses(&p, Dir::BtoA),
        vec![
            (seq.wrapping_add(5), ReconfigResult::ErrorBadSequenceNumber),
            (seq.wrapping_sub(3), ReconfigResult::ErrorBadSequenceNumber),
            (seq, ReconfigResult::SuccessPerformed),
            (seq, ReconfigResult::SuccessPerformed),
        ]
    );
    assert_eq!(events(&p.b_events).len(), 1);
}

#[test]
fn requests_for_unknown_streams_too_many_streams_or_far_tsns_are_denied() {
    let mut p = pair();
    let seq = a_first_seq(&p);
    let cum = seq.wrapping_sub(1);
    inject(
        &mut p,
        vec![ReconfigParam::OutgoingSsnReset {
            request_seq: seq,
            response_seq: 0,
            last_tsn: cum,
            streams: vec![1, 16],
        }],
    );
    // A Sender's Last Assigned TSN further than any gap block reaches.
    inject(
        &mut p,
        vec![ReconfigParam::OutgoingSsnReset {
            request_seq: seq.wrapping_add(1),
            response_seq: 0,
            last_tsn: cum.wrapping_add(1 << 20),
            streams: vec![1],
        }],
    );
    // Adding 65535 streams either way.
    inject(
        &mut p,
        vec![
            ReconfigParam::AddOutgoingStreams {
                request_seq: seq.wrapping_add(2),
                new_streams: u16::MAX,
            },
            ReconfigParam::AddIncomingStreams {
                request_seq: seq.wrapping_add(3),
                new_streams: u16::MAX,
            },
        ],
    );
    assert_eq!(results(&p, Dir::BtoA), vec![ReconfigResult::Denied; 4]);
    assert!(events(&p.b_events).is_empty());
    let b = b_assoc(&mut p);
    assert_eq!((b.inbound_streams(), b.outbound_streams()), (16, 16));
    assert_eq!(b.receive_held(), 0);
    // A response to a request B never sent: ignored.
    inject(
        &mut p,
        vec![ReconfigParam::Response {
            response_seq: 12345,
            result: ReconfigResult::SuccessPerformed,
            next_tsns: Some((1, 2)),
        }],
    );
    assert!(events(&p.b_events).is_empty());
    assert!(!b_assoc(&mut p).is_closed());
    // Every one of them took a number: the next is performed.
    inject(
        &mut p,
        vec![ReconfigParam::OutgoingSsnReset {
            request_seq: seq.wrapping_add(4),
            response_seq: 0,
            last_tsn: cum,
            streams: vec![1],
        }],
    );
    assert_eq!(
        responses(&p, Dir::BtoA).last(),
        Some(&(seq.wrapping_add(4), ReconfigResult::SuccessPerformed))
    );
}

#[test]
fn a_storm_of_requests_in_one_packet_draws_one_answer() {
    // RFC 6525 5.1.1: one request in flight at a time, so one RE-CONFIG
    // chunk of requests per packet; the other 39 are not processed.
    let mut p = pair();
    let seq = a_first_seq(&p);
    let chunks: Vec<Chunk<'static>> = (0..40u32)
        .map(|i| {
            Chunk::ReConfig(ReConfig {
                params: vec![ReconfigParam::OutgoingSsnReset {
                    request_seq: seq.wrapping_add(i),
                    response_seq: 0,
                    last_tsn: seq.wrapping_sub(1),
                    streams: vec![],
                }],
            })
        })
        .collect();
    p.inject_to_b(chunks);
    p.run_for(ms(20));
    assert_eq!(
        responses(&p, Dir::BtoA),
        vec![(seq, ReconfigResult::SuccessPerformed)]
    );
    assert_eq!(events(&p.b_events).len(), 1);
    let b = b_assoc(&mut p).stats();
    assert_eq!(b.reconfig_requests_received, 1);
    assert_eq!(b.malformed_chunks, 39);
    // Replays and bad numbers, one per packet: each answered, a response
    // queue of at most four waiting.
    for i in 0..10u32 {
        let chunk = Chunk::ReConfig(ReConfig {
            params: vec![ReconfigParam::SsnTsnReset {
                request_seq: seq.wrapping_add(1000 + i),
            }],
        });
        let (tag, _) = p.tags();
        let bytes = harness::packet(tag, vec![chunk]);
        let (now, a_addr) = (p.now, p.a_addr);
        p.b.handle_datagram(now, a_addr, &bytes);
    }
    p.run_for(ms(20));
    assert_eq!(
        responses(&p, Dir::BtoA)[1..],
        (0..4u32)
            .map(|i| (
                seq.wrapping_add(1000 + i),
                ReconfigResult::ErrorBadSequenceNumber
            ))
            .collect::<Vec<_>>()[..]
    );
    assert_eq!(b_assoc(&mut p).stats().errors_suppressed, 6);
}

#[test]
fn a_deferred_reset_holds_new_numbering_data_within_the_receive_window() {
    // A lying peer: a reset whose last TSN is ahead, then data on the reset
    // stream beyond it, as if the reset had happened: held, charged to the
    // window, released in order once the TSNs before it arrive.
    let b_cfg = Config {
        receive_buffer: 8000,
        ..reconfig_config()
    };
    let mut p = connected(reconfig_config(), b_cfg);
    let seq = a_first_seq(&p);
    let first = p.a_next_tsn();
    inject(
        &mut p,
        vec![ReconfigParam::OutgoingSsnReset {
            request_seq: seq,
            response_seq: 0,
            last_tsn: first, // one DATA chunk before the reset
            streams: vec![5],
        }],
    );
    assert_eq!(
        responses(&p, Dir::BtoA),
        vec![(seq, ReconfigResult::InProgress)]
    );
    let data = |tsn: u32, ssn: u16, tag: u8| {
        Chunk::Data(Data {
            flags: brisk_proto::wire::chunk::DataFlags::UNFRAGMENTED,
            tsn,
            stream_id: 5,
            ssn,
            ppid: 0,
            payload: vec![tag; 1000].into(),
        })
    };
    // New numbering first: SSN 0.. after the reset's TSN, far more than fits.
    for i in 0..20u32 {
        p.inject_to_b(vec![data(first + 1 + i, i as u16, 10 + i as u8)]);
    }
    let held = b_assoc(&mut p).receive_held();
    assert!(held <= 8000 + 2000, "held {held}");
    assert!(p.b_recv_all().is_empty(), "nothing before the reset");
    // The old numbering's last message (SSN 7 of the old count) arrives.
    p.inject_to_b(vec![data(first, 7, 1)]);
    p.run_for(ms(20));
    let got = b_ssns_and_tags(&mut p);
    // SSN 7 is not the expected 0 of the old numbering: it waits until the
    // reset, which delivers it first, then the new numbering in order.
    assert!(got.len() >= 2, "{got:?}");
    assert_eq!(got[0], (7, 1));
    for (i, m) in got[1..].iter().enumerate() {
        assert_eq!(*m, (i as u16, 10 + i as u8));
    }
    assert_eq!(
        responses(&p, Dir::BtoA).last(),
        Some(&(seq, ReconfigResult::SuccessPerformed))
    );
}

#[test]
fn a_forward_tsn_past_the_reset_tsn_completes_a_deferred_reset() {
    let cfg = Config {
        partial_reliability: true,
        ..reconfig_config()
    };
    let mut p = connected(cfg.clone(), cfg);
    // Two messages on stream 1; the first is lost and may not be resent.
    p.drop_data_packet(Dir::AtoB, 1);
    let lost = p.a_send(msg(1, 1).with_max_retransmits(0));
    p.run_for(ms(1));
    p.a_send(msg(1, 2));
    p.run_for(ms(1));
    a_resets(&mut p, &[1]).unwrap();
    p.a_send(msg(1, 3));
    p.run_for(ms(5000));
    // B defers (TSN 1 missing); A abandons message 1 and its FORWARD TSN
    // moves B past the reset's TSN: performed, answered, and message 3
    // goes with SSN 0.
    let mut answers = responses(&p, Dir::BtoA);
    answers.dedup();
    assert_eq!(
        answers.iter().map(|r| r.1).collect::<Vec<_>>(),
        vec![ReconfigResult::InProgress, ReconfigResult::SuccessPerformed]
    );
    assert!(
        p.a_events
            .iter()
            .any(|(_, _, e)| matches!(e, Event::MessageAbandoned { id } if *id == lost))
    );
    let got = b_ssns_and_tags(&mut p);
    assert_eq!(got, vec![(1, 2), (0, 3)]);
    assert!(matches!(
        &events(&p.a_events)[..],
        [(
            _,
            Event::StreamsReset {
                direction: ResetDirection::Outgoing,
                ..
            }
        )]
    ));
}

#[test]
fn an_ssn_tsn_reset_restarts_every_stream_and_the_tsns_both_ways() {
    let mut p = pair();
    for s in 0..3 {
        p.a_send(msg(s, s as u8));
    }
    p.run_for(ms(100));
    let b_cum_before = p.a_next_tsn().wrapping_sub(1);
    let now = p.now;
    a_assoc(&mut p).reset_ssn_tsn(now).unwrap();
    assert_eq!(
        a_assoc(&mut p).reset_ssn_tsn(now),
        Err(ReconfigError::AlreadyRequested)
    );
    // Sent while the reset is asked: waits for it. The request itself
    // waits for B's delayed SACK (200 ms) of the three messages.
    p.a_send(msg(0, 9));
    p.run_for(ms(500));
    let resp: Vec<_> = reconfigs(&p, Dir::BtoA);
    let [
        (
            _,
            ReconfigParam::Response {
                result,
                next_tsns: Some((_, receiver_next)),
                ..
            },
        ),
    ] = &resp[..]
    else {
        panic!("{resp:?}")
    };
    assert_eq!(*result, ReconfigResult::SuccessPerformed);
    // 5.2.4 G1: the first TSN B did not acknowledge, plus 2^31.
    assert_eq!(
        *receiver_next,
        b_cum_before.wrapping_add(1).wrapping_add(1 << 31)
    );
    assert!(matches!(
        &events(&p.a_events)[..],
        [(_, Event::AssociationReset)]
    ));
    assert!(matches!(
        &events(&p.b_events)[..],
        [(_, Event::AssociationReset)]
    ));
    // The held message goes with the new TSN and SSN 0.
    let last = *data_chunks(&p, Dir::AtoB).last().unwrap();
    assert_eq!((last.1, last.3, last.4), (*receiver_next, 0, 9));
    let got: Vec<(u16, u16, u8)> = p
        .b_recv_all()
        .iter()
        .map(|m| (m.stream_id, m.ssn, m.payload[0]))
        .collect();
    assert_eq!(got, vec![(0, 0, 0), (1, 0, 1), (2, 0, 2), (0, 0, 9)]);
    p.run_for(ms(300));
    assert!(a_assoc(&mut p).all_acked());
}

#[test]
fn adding_incoming_streams_makes_the_peer_add_outgoing_ones_it_then_uses() {
    let a_cfg = Config {
        max_inbound_streams: 32,
        ..reconfig_config()
    };
    let mut p = connected(a_cfg.clone(), a_cfg);
    let now = p.now;
    assert!(matches!(
        a_assoc(&mut p).add_streams(now, 0, 17),
        Err(ReconfigError::TooManyStreams { limit: 32, .. })
    ));
    a_assoc(&mut p).add_streams(now, 2, 4).unwrap();
    p.run_for(ms(200));
    // A's pair of requests (5.1.5, 5.1.6); B adds A's 2 outgoing streams at
    // once and asks A to add 4 incoming ones by its own Add Outgoing Streams.
    assert!(
        reconfigs(&p, Dir::BtoA)
            .iter()
            .any(|(_, r)| matches!(r, ReconfigParam::AddOutgoingStreams { new_streams: 4, .. }))
    );
    assert_eq!(
        just_events(&p.a_events),
        vec![
            Event::StreamsAdded {
                outgoing: 18,
                incoming: 16
            },
            Event::StreamsAdded {
                outgoing: 18,
                incoming: 20
            }
        ]
    );
    assert_eq!(
        just_events(&p.b_events),
        vec![
            Event::StreamsAdded {
                outgoing: 16,
                incoming: 18
            },
            Event::StreamsAdded {
                outgoing: 20,
                incoming: 18
            }
        ]
    );
    // The new streams carry messages both ways.
    p.a_send(msg(17, 1));
    let now = p.now;
    b_assoc(&mut p).send(now, msg(19, 2)).unwrap();
    p.run_for(ms(100));
    let got = p.b_recv_all();
    assert_eq!((got[0].stream_id, got[0].payload[0]), (17, 1));
    let a_id = p.a_id.unwrap();
    let m = p.a.association(a_id).unwrap().recv().unwrap();
    assert_eq!((m.stream_id, m.payload[0]), (19, 2));
}

#[test]
fn a_request_to_add_streams_the_peer_never_answers_is_given_up() {
    // As pion/sctp v1.11.3 with Add Streams Requests: it cannot parse them
    // and drops the packet without a word. Each request goes in a packet of
    // its own, so that nothing else is lost with it.
    let mut p = connected(
        Config {
            max_inbound_streams: 32,
            // Nothing else proves the peer reachable meanwhile.
            heartbeats: false,
            ..reconfig_config()
        },
        Config {
            max_inbound_streams: 32,
            ..reconfig_config()
        },
    );
    drop_reconfigs(&mut p, Dir::AtoB, u32::MAX);
    let now = p.now;
    a_assoc(&mut p).add_streams(now, 2, 2).unwrap();
    p.a_send(msg(2, 1));
    p.run_for(ms(120_000));
    let sent = reconfigs(&p, Dir::AtoB).len() as u32;
    // Two requests in one chunk, sent 1 + 5 times.
    assert_eq!(sent, 2 * (1 + brisk_proto::assoc::MAX_REQUEST_RETRANSMITS));
    assert!(
        p.log
            .iter()
            .filter(|l| l.seen.has(brisk_proto::wire::chunk::types::RECONFIG))
            .all(|l| l.seen.chunk_types.len() == 1),
        "alone in its packet"
    );
    let no_answer = brisk_proto::assoc::NO_ANSWER;
    assert_eq!(
        just_events(&p.a_events),
        vec![
            Event::StreamsAddFailed {
                outgoing: 2,
                incoming: 0,
                result: no_answer
            },
            Event::StreamsAddFailed {
                outgoing: 0,
                incoming: 2,
                result: no_answer
            }
        ]
    );
    assert_eq!(a_assoc(&mut p).outbound_streams(), 16);
    assert_eq!(p.b_recv_all().len(), 1);
    assert!(!a_assoc(&mut p).is_closed());
    // Its six errors are forgiven: two more such requests on an idle
    // association (heartbeats off) do not end it.
    for _ in 0..2 {
        let now = p.now;
        a_assoc(&mut p).add_streams(now, 1, 0).unwrap();
        p.run_for(ms(120_000));
    }
    assert!(!a_assoc(&mut p).is_closed());
    assert_eq!(events(&p.a_events).len(), 4);
}

#[test]
fn a_reset_of_our_outgoing_streams_is_never_given_up() {
    // The peer may have reset its side with the answer lost: retransmitted
    // until answered (or the association fails), never resumed unreset.
    let mut p = pair();
    drop_reconfigs(&mut p, Dir::BtoA, 8);
    p.a_send(msg(2, 1));
    a_resets(&mut p, &[2]).unwrap();
    p.a_send(msg(2, 2));
    p.run_for(ms(400_000));
    assert!(reconfigs(&p, Dir::AtoB).len() >= 9);
    assert!(matches!(
        &events(&p.a_events)[..],
        [(
            _,
            Event::StreamsReset {
                direction: ResetDirection::Outgoing,
                ..
            }
        )]
    ));
    let got = b_ssns_and_tags(&mut p);
    assert_eq!(got, vec![(0, 1), (0, 2)]);
}

#[test]
fn a_request_listing_hundreds_of_streams_is_bounded_by_the_packet_and_deduplicated() {
    let mut p = pair();
    let seq = a_first_seq(&p);
    let cum = seq.wrapping_sub(1);
    // 600 stream numbers, all valid, repeated: one reset of the 16 streams.
    let streams: Vec<u16> = (0..600u16).map(|i| i % 16).collect();
    inject(
        &mut p,
        vec![ReconfigParam::OutgoingSsnReset {
            request_seq: seq,
            response_seq: 0,
            last_tsn: cum,
            streams: streams.clone(),
        }],
    );
    let mut with_unknown = streams;
    with_unknown.push(u16::MAX);
    inject(
        &mut p,
        vec![ReconfigParam::OutgoingSsnReset {
            request_seq: seq.wrapping_add(1),
            response_seq: 0,
            last_tsn: cum,
            streams: with_unknown,
        }],
    );
    assert_eq!(
        responses(&p, Dir::BtoA),
        vec![
            (seq, ReconfigResult::SuccessPerformed),
            (seq.wrapping_add(1), ReconfigResult::Denied)
        ]
    );
    assert_eq!(
        just_events(&p.b_events),
        vec![Event::StreamsReset {
            direction: ResetDirection::Incoming,
            streams: (0..16).collect()
        }]
    );
    assert_eq!(b_assoc(&mut p).stats().streams_reset, 16);
}

#[test]
fn a_denied_reset_resumes_the_stream_with_its_old_numbering() {
    let mut p = pair();
    let seq = a_first_seq(&p);
    // B never sees A's request; a "Denied" answers it instead.
    drop_reconfigs(&mut p, Dir::AtoB, u32::MAX);
    p.a_send(msg(2, 1));
    a_resets(&mut p, &[2]).unwrap();
    p.a_send(msg(2, 2));
    p.run_for(ms(100));
    assert!(p.b_recv_all().len() == 1, "message 2 waits for the answer");
    let denied = Chunk::ReConfig(ReConfig {
        params: vec![ReconfigParam::Response {
            response_seq: seq,
            result: ReconfigResult::Denied,
            next_tsns: None,
        }],
    });
    hand_to_a(&mut p, denied);
    p.run_for(ms(100));
    assert_eq!(
        just_events(&p.a_events),
        vec![Event::StreamResetFailed {
            streams: vec![2],
            result: ReconfigResult::Denied
        }]
    );
    let got = b_ssns_and_tags(&mut p);
    assert_eq!(got, vec![(1, 2)]);
}

#[test]
fn an_incoming_reset_of_streams_never_used_has_nothing_to_do() {
    let mut p = pair();
    let now = p.now;
    b_assoc(&mut p)
        .request_incoming_reset(now, &[5, 6])
        .unwrap();
    p.run_for(ms(100));
    // A never sent on them: Success - Nothing to do, no request of its own.
    assert_eq!(
        responses(&p, Dir::AtoB)
            .iter()
            .map(|r| r.1)
            .collect::<Vec<_>>(),
        vec![ReconfigResult::SuccessNothingToDo]
    );
    assert_eq!(reconfigs(&p, Dir::AtoB).len(), 1);
    assert!(events(&p.a_events).is_empty());
    assert_eq!(
        just_events(&p.b_events),
        vec![Event::StreamsReset {
            direction: ResetDirection::Incoming,
            streams: vec![5, 6]
        }]
    );
    // A request naming every stream (an empty list) resets only those used.
    p.a_send(msg(3, 1));
    p.run_for(ms(100));
    let seq = reconfigs(&p, Dir::BtoA)
        .iter()
        .filter_map(|(_, r)| match r {
            ReconfigParam::IncomingSsnReset { request_seq, .. } => Some(*request_seq),
            _ => None,
        })
        .max()
        .unwrap();
    let all = Chunk::ReConfig(ReConfig {
        params: vec![ReconfigParam::IncomingSsnReset {
            request_seq: seq.wrapping_add(1),
            streams: vec![],
        }],
    });
    hand_to_a(&mut p, all);
    p.run_for(ms(100));
    assert!(
        reconfigs(&p, Dir::AtoB).iter().any(|(_, r)| matches!(r,
            ReconfigParam::OutgoingSsnReset { streams, .. } if streams == &[3])),
        "{:?}",
        reconfigs(&p, Dir::AtoB)
    );
    assert!(matches!(
        &events(&p.a_events)[..],
        [(_, Event::StreamsReset { direction: ResetDirection::Outgoing, streams })] if streams == &[3]
    ));
}

/// RFC 6525 5.1.4: while our SSN/TSN Reset Request waits for its answer,
/// the ordered messages that arrive are held (their numbering depends on
/// the answer), though acknowledged. If the association ends before the
/// answer comes, they still reach the application, in the order they
/// arrived, and none is lost (fuzz seed 0x2dd1e8 with BRISK_FUZZ_RECONFIG=1:
/// an acknowledged message never delivered after PeerUnreachable).
#[test]
fn messages_held_for_an_unanswered_ssn_tsn_reset_are_delivered_when_the_association_ends() {
    let mut p = pair();
    p.b_send(msg(0, 1));
    p.run_for(ms(300));
    assert_eq!(p.a_recv_all().len(), 1);
    // B's answers never arrive.
    p.rule(|s| (s.dir == Dir::BtoA && s.chunk_types.contains(&130)).then_some(harness::Fate::Drop));
    let now = p.now;
    a_assoc(&mut p).reset_ssn_tsn(now).unwrap();
    p.run_for(ms(50));
    for tag in 2..6 {
        p.b_send(msg(0, tag));
    }
    p.run_for(ms(500));
    let held = p.a_recv_all();
    assert!(held.is_empty(), "held for the reset: {held:?}");
    let now = p.now;
    a_assoc(&mut p).abort(now, "test");
    let tags: Vec<u8> = p.a_recv_all().iter().map(|m| m.payload[0]).collect();
    assert_eq!(tags, [2, 3, 4, 5]);
}
