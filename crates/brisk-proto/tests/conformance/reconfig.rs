//! Stream reconfiguration (RFC 6525): nplab packetdrill scripts in
//! tests/bsd/sctp/sctp_reconfig: add_outgoing_streams, add_incoming_streams,
//! reset_outgoing_ssn(_passiv), reset_incoming_ssn(_passiv),
//! reset_ssn_tsn(_passiv).
//!
//! Not covered: the scripts sctp_enable_stream_reset and the *_event ones
//! test the sockets API (RFC 6458 options and notifications), which Brisk
//! does not have; its events are checked here instead.
//!
//! Not applicable: none further.

use brisk_proto::wire::chunk::{ReConfig, ReconfigParam, ReconfigResult, types};
use brisk_proto::wire::{Chunk, Param};
use brisk_proto::{Config, Event, ResetDirection};

use crate::tester::*;

fn reconfig_on() -> Config {
    Config {
        stream_reconfig: true,
        max_inbound_streams: 32,
        ..Config::rfc9260()
    }
}

/// A client with RE-CONFIG negotiated that has sent two acknowledged messages.
fn active() -> Tester {
    let mut t = Tester::client();
    let mut ack = init_ack(TESTER_TAG);
    ack.params
        .push(Param::SupportedExtensions(vec![types::RECONFIG]));
    t.establish_as_client_with(reconfig_on(), ack);
    for _ in 0..2 {
        let d = t.iut_sends(1000);
        t.ack_up_to(d.tsns()[0]);
        t.iut_tsn += 1;
    }
    t
}

/// A server with RE-CONFIG negotiated that has sent two messages and received two.
fn passive() -> Tester {
    let mut t = Tester::server_with(reconfig_on());
    let mut i = init(TESTER_TAG);
    i.params = vec![Param::SupportedExtensions(vec![types::RECONFIG])];
    t.establish_with(i);
    for _ in 0..2 {
        let d = t.iut_sends(1000);
        t.ack_up_to(d.tsns()[0]);
        t.iut_tsn += 1;
    }
    for _ in 0..2 {
        let c = t.next_data(1000);
        t.send(vec![c]);
    }
    assert_eq!(t.app_recv().len(), 2);
    t.advance(secs(1));
    t
}

/// The parameters of the RE-CONFIG chunks in `out`, owned.
fn reconfig_params_of(out: &Out) -> Vec<ReconfigParam<'static>> {
    out.packet()
        .chunks
        .into_iter()
        .filter_map(|c| match c {
            Chunk::ReConfig(r) => Some(r.params),
            _ => None,
        })
        .flatten()
        .map(owned)
        .collect()
}

fn owned(p: ReconfigParam<'_>) -> ReconfigParam<'static> {
    use ReconfigParam as R;
    match p {
        R::Unknown { typ, value } => R::Unknown {
            typ,
            value: value.into_owned().into(),
        },
        R::OutgoingSsnReset {
            request_seq,
            response_seq,
            last_tsn,
            streams,
        } => R::OutgoingSsnReset {
            request_seq,
            response_seq,
            last_tsn,
            streams,
        },
        R::IncomingSsnReset {
            request_seq,
            streams,
        } => R::IncomingSsnReset {
            request_seq,
            streams,
        },
        R::SsnTsnReset { request_seq } => R::SsnTsnReset { request_seq },
        R::Response {
            response_seq,
            result,
            next_tsns,
        } => R::Response {
            response_seq,
            result,
            next_tsns,
        },
        R::AddOutgoingStreams {
            request_seq,
            new_streams,
        } => R::AddOutgoingStreams {
            request_seq,
            new_streams,
        },
        R::AddIncomingStreams {
            request_seq,
            new_streams,
        } => R::AddIncomingStreams {
            request_seq,
            new_streams,
        },
    }
}

/// The parameters of the next packet with a RE-CONFIG the IUT sends now.
fn reconfig_params(t: &mut Tester) -> Vec<ReconfigParam<'static>> {
    while let Some(out) = t.next_packet(ms(10)) {
        let params = reconfig_params_of(&out);
        if !params.is_empty() {
            return params;
        }
    }
    panic!("no RE-CONFIG");
}

fn respond(t: &mut Tester, response_seq: u32, result: ReconfigResult) {
    t.send(vec![Chunk::ReConfig(ReConfig {
        params: vec![ReconfigParam::Response {
            response_seq,
            result,
            next_tsns: None,
        }],
    })]);
}

/// The IUT's first request sequence number: its initial TSN (RFC 6525 3.1).
fn first_seq(t: &Tester) -> u32 {
    t.iut_tsn.wrapping_sub(2)
}

/// nplab add_outgoing_streams: adding outgoing streams sends an Add Outgoing
/// Streams Request; a "performed" response adds them. RFC 6525 5.1.5, 5.2.5.
#[test]
fn adding_outgoing_streams_sends_a_request_and_takes_effect_when_performed() {
    let mut t = active();
    let now = t.now;
    let before = t.assoc().outbound_streams();
    t.assoc().add_streams(now, 10, 0).expect("add");
    let seq = first_seq(&t);
    assert_eq!(
        reconfig_params(&mut t),
        vec![ReconfigParam::AddOutgoingStreams {
            request_seq: seq,
            new_streams: 10
        }]
    );
    respond(&mut t, seq, ReconfigResult::SuccessPerformed);
    assert_eq!(t.assoc().outbound_streams(), before + 10);
    assert!(t.saw(|e| matches!(e, Event::StreamsAdded { .. })));
}

/// nplab add_incoming_streams: adding incoming streams sends an Add Incoming
/// Streams Request; a denial is reported. RFC 6525 5.1.6, 5.2.6.
#[test]
fn adding_incoming_streams_sends_a_request_and_reports_a_denial() {
    let mut t = active();
    let now = t.now;
    t.assoc().add_streams(now, 0, 10).expect("add");
    let seq = first_seq(&t);
    assert_eq!(
        reconfig_params(&mut t),
        vec![ReconfigParam::AddIncomingStreams {
            request_seq: seq,
            new_streams: 10
        }]
    );
    respond(&mut t, seq, ReconfigResult::Denied);
    assert!(t.saw(|e| matches!(e, Event::StreamsAddFailed { .. })));
}

/// nplab reset_outgoing_ssn: resetting an outgoing stream sends an Outgoing
/// SSN Reset Request with our last TSN; "performed" resets it. RFC 6525 5.1.2.
#[test]
fn resetting_an_outgoing_stream_sends_the_last_tsn_and_resets_when_performed() {
    let mut t = active();
    let now = t.now;
    t.assoc().reset_streams(now, &[0]).expect("reset");
    let seq = first_seq(&t);
    let params = reconfig_params(&mut t);
    let [
        ReconfigParam::OutgoingSsnReset {
            request_seq,
            last_tsn,
            streams,
            ..
        },
    ] = params.as_slice()
    else {
        panic!("an Outgoing SSN Reset Request, got {params:?}");
    };
    assert_eq!(*request_seq, seq);
    assert_eq!(*last_tsn, t.iut_tsn.wrapping_sub(1));
    assert_eq!(streams, &vec![0]);
    respond(&mut t, seq, ReconfigResult::SuccessPerformed);
    assert!(t.saw(|e| matches!(
        e,
        Event::StreamsReset {
            direction: ResetDirection::Outgoing,
            ..
        }
    )));
    t.app_send(0, 100);
    let d = t.expect(types::DATA);
    assert_eq!(d.data()[0].3, 0, "SSN from 0 again");
}

/// nplab reset_incoming_ssn: asking the peer to reset its outgoing streams
/// sends an Incoming SSN Reset Request; its Outgoing SSN Reset Request is
/// answered "performed". RFC 6525 5.1.3, 5.2.2.
#[test]
fn an_incoming_reset_request_is_followed_by_the_peers_outgoing_reset() {
    let mut t = active();
    let now = t.now;
    t.assoc().request_incoming_reset(now, &[0]).expect("reset");
    let seq = first_seq(&t);
    assert_eq!(
        reconfig_params(&mut t),
        vec![ReconfigParam::IncomingSsnReset {
            request_seq: seq,
            streams: vec![0]
        }]
    );
    t.send(vec![Chunk::ReConfig(ReConfig {
        params: vec![ReconfigParam::OutgoingSsnReset {
            request_seq: TESTER_TSN,
            response_seq: seq,
            last_tsn: TESTER_TSN.wrapping_sub(1),
            streams: vec![0],
        }],
    })]);
    assert_eq!(
        reconfig_params(&mut t),
        vec![ReconfigParam::Response {
            response_seq: TESTER_TSN,
            result: ReconfigResult::SuccessPerformed,
            next_tsns: None
        }]
    );
}

/// nplab reset_ssn_tsn: an SSN/TSN reset sends an SSN/TSN Reset Request; the
/// response with the next TSNs resets the association. RFC 6525 5.1.4, 5.2.4.
#[test]
fn an_ssn_tsn_reset_request_resets_the_association_when_performed() {
    let mut t = active();
    let now = t.now;
    t.assoc().reset_ssn_tsn(now).expect("reset");
    let seq = first_seq(&t);
    assert_eq!(
        reconfig_params(&mut t),
        vec![ReconfigParam::SsnTsnReset { request_seq: seq }]
    );
    let receiver_next = TESTER_TSN + 1_000_000;
    let sender_next = t.iut_tsn + 1_000_000;
    t.send(vec![Chunk::ReConfig(ReConfig {
        params: vec![ReconfigParam::Response {
            response_seq: seq,
            result: ReconfigResult::SuccessPerformed,
            next_tsns: Some((receiver_next, sender_next)),
        }],
    })]);
    assert!(t.saw(|e| matches!(e, Event::AssociationReset)));
    t.app_send(0, 100);
    assert_eq!(t.expect(types::DATA).tsns(), vec![sender_next]);
}

/// nplab reset_outgoing_ssn_passiv: the peer's Outgoing SSN Reset Request,
/// for data all received, is answered "performed". RFC 6525 5.2.2.
#[test]
fn a_peers_outgoing_reset_is_performed() {
    let mut t = passive();
    t.send(vec![Chunk::ReConfig(ReConfig {
        params: vec![ReconfigParam::OutgoingSsnReset {
            request_seq: TESTER_TSN,
            response_seq: t.iut_tsn,
            last_tsn: t.tsn.wrapping_sub(1),
            streams: vec![0],
        }],
    })]);
    assert_eq!(
        reconfig_params(&mut t),
        vec![ReconfigParam::Response {
            response_seq: TESTER_TSN,
            result: ReconfigResult::SuccessPerformed,
            next_tsns: None
        }]
    );
}

/// nplab reset_incoming_ssn_passiv: the peer's Incoming SSN Reset Request is
/// answered with our Outgoing SSN Reset Request and a response. RFC 6525 5.2.3.
#[test]
fn a_peers_incoming_reset_request_gets_our_outgoing_reset() {
    let mut t = passive();
    t.send(vec![Chunk::ReConfig(ReConfig {
        params: vec![ReconfigParam::IncomingSsnReset {
            request_seq: TESTER_TSN,
            streams: vec![0],
        }],
    })]);
    let mut params = reconfig_params(&mut t);
    while let Some(more) = t.next_packet(ms(10)) {
        params.extend(reconfig_params_of(&more));
    }
    assert!(
        params
            .iter()
            .any(|p| matches!(p, ReconfigParam::OutgoingSsnReset { response_seq, .. } if *response_seq == TESTER_TSN)),
        "{params:?}"
    );
}

/// nplab reset_ssn_tsn_passiv: the peer's SSN/TSN Reset Request is answered
/// with a response; when performed, it carries the next TSNs. RFC 6525 5.2.4.
#[test]
fn a_peers_ssn_tsn_reset_request_is_answered() {
    let mut t = passive();
    t.send(vec![Chunk::ReConfig(ReConfig {
        params: vec![ReconfigParam::SsnTsnReset {
            request_seq: TESTER_TSN,
        }],
    })]);
    let params = reconfig_params(&mut t);
    let [
        ReconfigParam::Response {
            response_seq,
            result,
            next_tsns,
        },
    ] = params.as_slice()
    else {
        panic!("a Re-configuration Response, got {params:?}");
    };
    assert_eq!(*response_seq, TESTER_TSN);
    if *result == ReconfigResult::SuccessPerformed {
        assert!(next_tsns.is_some(), "RFC 6525 4.4: the next TSNs");
    }
}

fn outgoing_reset(request_seq: u32, last_tsn: u32) -> Chunk<'static> {
    Chunk::ReConfig(ReConfig {
        params: vec![ReconfigParam::OutgoingSsnReset {
            request_seq,
            response_seq: 0,
            last_tsn,
            streams: vec![0],
        }],
    })
}

/// RFC 6525 5.2.1: a request with an unexpected sequence number gets "Error:
/// Bad Sequence Number"; the last request repeated gets its response again.
#[test]
fn request_sequence_numbers_are_checked() {
    let mut t = passive();
    let last = t.tsn.wrapping_sub(1);
    t.send(vec![outgoing_reset(TESTER_TSN + 5, last)]);
    assert_eq!(
        reconfig_params(&mut t),
        vec![ReconfigParam::Response {
            response_seq: TESTER_TSN + 5,
            result: ReconfigResult::ErrorBadSequenceNumber,
            next_tsns: None
        }]
    );
    t.send(vec![outgoing_reset(TESTER_TSN, last)]);
    let performed = vec![ReconfigParam::Response {
        response_seq: TESTER_TSN,
        result: ReconfigResult::SuccessPerformed,
        next_tsns: None,
    }];
    assert_eq!(reconfig_params(&mut t), performed);
    t.send(vec![outgoing_reset(TESTER_TSN, last)]);
    assert_eq!(reconfig_params(&mut t), performed, "the same answer again");
}

/// RFC 6525 5.2.2: an Outgoing SSN Reset Request whose last TSN has not
/// arrived yet is deferred; it is performed once that DATA arrives.
#[test]
fn an_outgoing_reset_waits_for_its_last_tsn() {
    let mut t = passive();
    let missing = t.tsn;
    t.send(vec![outgoing_reset(TESTER_TSN, missing)]);
    let mut early = Vec::new();
    while let Some(out) = t.next_packet(ms(10)) {
        early.extend(reconfig_params_of(&out));
    }
    assert!(
        early.iter().all(|p| !matches!(
            p,
            ReconfigParam::Response {
                result: ReconfigResult::SuccessPerformed,
                ..
            }
        )),
        "not performed before TSN {missing} arrives: {early:?}"
    );
    let c = t.next_data(100);
    t.send(vec![c]);
    let mut late = Vec::new();
    while let Some(out) = t.next_packet(ms(300)) {
        late.extend(reconfig_params_of(&out));
    }
    assert!(
        late.contains(&ReconfigParam::Response {
            response_seq: TESTER_TSN,
            result: ReconfigResult::SuccessPerformed,
            next_tsns: None
        }),
        "{late:?}"
    );
}
