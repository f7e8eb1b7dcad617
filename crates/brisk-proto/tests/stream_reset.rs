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

fn a_assoc(p: &mut Pair) -> &mut brisk_proto::Association {
    let id = p.a_id.unwrap();
    p.a.association(id).unwrap()
}

fn b_assoc(p: &mut Pair) -> &mut brisk_proto::Association {
    let id = p.b_id.unwrap();
    p.b.association(id).unwrap()
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
    let now = p.now;
    a_assoc(&mut p).reset_streams(now, &[1]).unwrap();
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
    let now = p.now;
    a_assoc(&mut p).reset_streams(now, &[0]).unwrap();
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
        responses(&p, Dir::BtoA)
            .iter()
            .map(|r| r.1)
            .collect::<Vec<_>>(),
        vec![ReconfigResult::SuccessPerformed]
    );
    p.a_send(msg(0, 3));
    p.run_for(ms(100));
    let got: Vec<(u16, u8)> = p
        .b_recv_all()
        .iter()
        .map(|m| (m.ssn, m.payload[0]))
        .collect();
    assert_eq!(got, vec![(0, 1), (1, 2), (0, 3)]);
}

#[test]
fn reset_requests_fail_cleanly_when_not_negotiated() {
    // B does not offer RE-CONFIG: A may not ask.
    let mut p = connected(reconfig_config(), Config::rfc9260());
    assert!(!a_assoc(&mut p).stream_reconfig());
    let now = p.now;
    assert_eq!(
        a_assoc(&mut p).reset_streams(now, &[0]),
        Err(ReconfigError::NotNegotiated)
    );
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
    let now = p.now;
    assert_eq!(
        a_assoc(&mut p).reset_streams(now, &[3, 16]),
        Err(ReconfigError::UnknownStream {
            stream_id: 16,
            streams: 16
        })
    );
    assert_eq!(
        a_assoc(&mut p).reset_streams(now, &[]),
        Err(ReconfigError::NoStreams)
    );
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
    let got: Vec<(u16, u8)> = p
        .b_recv_all()
        .iter()
        .map(|m| (m.ssn, m.payload[0]))
        .collect();
    assert_eq!(got, vec![(0, 1), (0, 2)]);
}
