//! The rules of INIT, INIT ACK and SHUTDOWN ACK before the handshake ends, packet by packet: a scripted peer's packets, built with
//! `brisk_proto::wire`, go to an `Endpoint` in memory, and its replies are
//! checked exactly: chunks, verification tags, T bits (RFC 9260 3.3, 5,
//! 8.4, 8.5.1, 9.2).

mod harness;

use std::net::SocketAddr;

use brisk_proto::wire::cause::ErrorCause;
use brisk_proto::wire::chunk::{Abort, CookieEcho, Init, InitAck, types};
use brisk_proto::wire::{Chunk, Packet, Param, Tlv};
use brisk_proto::{AssocId, CloseReason, Config, Endpoint, EndpointConfig, Event, State, Time};
use harness::packet;

/// The scripted peer's Initiate Tag and initial TSN.
const PEER_TAG: u32 = 77;
const PEER_TSN: u32 = 1;

fn peer() -> SocketAddr {
    "192.0.2.1:9899".parse().unwrap()
}

fn server() -> Endpoint {
    Endpoint::new(EndpointConfig::default(), [9; 32])
}

fn init() -> Init<'static> {
    Init {
        initiate_tag: PEER_TAG,
        a_rwnd: 65536,
        outbound_streams: 10,
        inbound_streams: 10,
        initial_tsn: PEER_TSN,
        params: vec![],
    }
}

/// Every packet `ep` sends at `now`.
fn sent(ep: &mut Endpoint, now: Time) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let mut buf = Vec::new();
        if ep.poll_transmit(now, &mut buf).is_none() {
            return out;
        }
        out.push(buf);
    }
}

/// The verification tag and chunk types of a packet.
fn shape(bytes: &[u8]) -> (u32, Vec<u8>) {
    let p = Packet::decode(bytes).expect("a valid packet");
    (
        p.header.verification_tag,
        p.chunks.iter().map(Chunk::chunk_type).collect(),
    )
}

/// Sends `ep` the scripted peer's INIT and returns its INIT ACK.
fn init_ack_from(ep: &mut Endpoint, now: Time, init: Init<'static>) -> InitAck<'static> {
    ep.handle_datagram(now, peer(), &packet(0, vec![Chunk::Init(init)]));
    let replies = sent(ep, now);
    let p = Packet::decode(&replies[0]).unwrap();
    let Chunk::InitAck(ack) = &p.chunks[0] else {
        panic!("expected INIT ACK, got {:?}", shape(&replies[0]))
    };
    InitAck {
        initiate_tag: ack.initiate_tag,
        a_rwnd: ack.a_rwnd,
        outbound_streams: ack.outbound_streams,
        inbound_streams: ack.inbound_streams,
        initial_tsn: ack.initial_tsn,
        params: ack.params.iter().cloned().map(|p| p.into_owned()).collect(),
    }
}

/// An association between `ep` (accepting) and the scripted peer, after the
/// handshake: `ep`'s INIT ACK.
fn established(ep: &mut Endpoint) -> InitAck<'static> {
    let ack = init_ack_from(ep, Time::ZERO, init());
    let cookie = ack.state_cookie().unwrap().to_vec();
    let echo = Chunk::CookieEcho(CookieEcho {
        cookie: cookie.into(),
    });
    ep.handle_datagram(Time::ZERO, peer(), &packet(ack.initiate_tag, vec![echo]));
    let replies = sent(ep, Time::ZERO);
    assert_eq!(shape(&replies[0]), (PEER_TAG, vec![types::COOKIE_ACK]));
    ack
}

/// The one ABORT `bytes` carries: (verification tag, T bit, its causes'
/// codes and values).
fn the_abort(bytes: &[u8]) -> (u32, bool, Vec<(u16, Vec<u8>)>) {
    let p = Packet::decode(bytes).expect("a valid packet");
    let [
        Chunk::Abort(Abort {
            reflected_tag,
            causes,
        }),
    ] = &p.chunks[..]
    else {
        panic!("expected one ABORT, got {:?}", shape(bytes));
    };
    let causes = causes
        .iter()
        .map(|c| {
            let mut v = Vec::new();
            c.encode(&mut v).unwrap();
            (c.code(), v.get(4..).unwrap_or_default().to_vec())
        })
        .collect();
    (p.header.verification_tag, *reflected_tag, causes)
}

fn host_name() -> Param<'static> {
    Param::HostNameAddress(b"peer.example\0".to_vec().into())
}

/// The whole TLV of a parameter, as an error cause carries it.
fn tlv(p: &Param<'_>) -> Vec<u8> {
    let mut v = Vec::new();
    p.encode(&mut v).unwrap();
    v
}

#[test]
fn an_init_with_a_host_name_address_is_answered_with_abort_unresolvable_address() {
    let mut ep = server();
    let mut i = init();
    i.params.push(host_name());
    ep.handle_datagram(Time::ZERO, peer(), &packet(0, vec![Chunk::Init(i)]));
    let replies = sent(&mut ep, Time::ZERO);
    assert_eq!(replies.len(), 1);
    // RFC 9260 3.3.2 Note 3, 5.1.2 B: ABORT under the Initiate Tag, T clear.
    assert_eq!(
        the_abort(&replies[0]),
        (
            PEER_TAG,
            false,
            vec![(ErrorCause::UNRESOLVABLE_ADDRESS, tlv(&host_name()))]
        )
    );
    assert_eq!(ep.stats().init_acks_sent, 0);
}

#[test]
fn an_init_with_a_window_below_1500_is_answered_with_abort_and_1500_is_accepted() {
    let mut ep = server();
    // RFC 9260 3.3.2: a_rwnd < 1500: discard, ABORT under the Initiate Tag.
    let small = Init {
        a_rwnd: 1499,
        ..init()
    };
    ep.handle_datagram(Time::ZERO, peer(), &packet(0, vec![Chunk::Init(small)]));
    let replies = sent(&mut ep, Time::ZERO);
    assert_eq!(replies.len(), 1);
    let (tag, t_bit, causes) = the_abort(&replies[0]);
    assert_eq!((tag, t_bit), (PEER_TAG, false));
    assert_eq!(causes.len(), 1);
    assert_eq!(causes[0].0, ErrorCause::INVALID_MANDATORY_PARAMETER);
    assert_eq!(ep.stats().init_acks_sent, 0);
    let least = Init {
        a_rwnd: 1500,
        ..init()
    };
    let ack = init_ack_from(&mut ep, Time::ZERO, least);
    assert_ne!(ack.initiate_tag, 0);
}

#[test]
fn an_init_with_a_window_below_1500_leaves_an_existing_association_as_it_was() {
    let mut ep = server();
    established(&mut ep);
    let id = ep.association_ids().next().unwrap();
    let small = Init {
        initiate_tag: 1234,
        a_rwnd: 1000,
        ..init()
    };
    let now = Time::from_millis(5);
    ep.handle_datagram(now, peer(), &packet(0, vec![Chunk::Init(small)]));
    let replies = sent(&mut ep, now);
    assert_eq!(replies.len(), 1);
    assert_eq!(the_abort(&replies[0]).0, 1234);
    // RFC 9260 3.3.2: MUST NOT change the state of any existing association.
    assert_eq!(
        ep.association(id).map(|a| a.state()),
        Some(State::Established)
    );
}

#[test]
fn the_init_ack_offers_no_more_outbound_streams_than_the_init_accepts() {
    // RFC 9260 3.3.3: OS of the INIT ACK MUST NOT exceed the INIT's MIS.
    let mut ep = server();
    let one = Init {
        inbound_streams: 1,
        ..init()
    };
    let ack = init_ack_from(&mut ep, Time::ZERO, one);
    assert_eq!(ack.outbound_streams, 1);
    let many = Init {
        initiate_tag: 78,
        inbound_streams: u16::MAX,
        ..init()
    };
    let ack = init_ack_from(&mut ep, Time::ZERO, many);
    assert_eq!(ack.outbound_streams, Config::rfc9260().outbound_streams);
}

/// An endpoint that connects to the scripted peer: its association and the
/// Initiate Tag of its INIT.
fn client() -> (Endpoint, AssocId, u32) {
    let mut ep = Endpoint::new(
        EndpointConfig {
            accept: false,
            ..EndpointConfig::default()
        },
        [3; 32],
    );
    let id = ep.connect(Time::ZERO, peer(), Config::rfc9260()).unwrap();
    let replies = sent(&mut ep, Time::ZERO);
    let p = Packet::decode(&replies[0]).unwrap();
    let Chunk::Init(i) = &p.chunks[0] else {
        panic!("expected INIT")
    };
    let tag = i.initiate_tag;
    (ep, id, tag)
}

/// The scripted peer's INIT ACK, with a state cookie and `extra` parameters.
fn peer_init_ack(extra: Vec<Param<'static>>) -> InitAck<'static> {
    let mut params = vec![Param::StateCookie(b"a cookie".to_vec().into())];
    params.extend(extra);
    InitAck {
        initiate_tag: PEER_TAG,
        a_rwnd: 65536,
        outbound_streams: 10,
        inbound_streams: 10,
        initial_tsn: PEER_TSN,
        params,
    }
}

/// Hands the client an INIT ACK; returns what it sent back and its events.
fn answer_init(ack: InitAck<'static>) -> (Vec<Vec<u8>>, Vec<Event>, Option<State>) {
    let (mut ep, id, tag) = client();
    let now = Time::from_millis(5);
    ep.handle_datagram(now, peer(), &packet(tag, vec![Chunk::InitAck(ack)]));
    let replies = sent(&mut ep, now);
    let mut events = Vec::new();
    while let Some((_, e)) = ep.poll_event() {
        events.push(e);
    }
    let state = ep.association_ref(id).map(|a| a.state());
    (replies, events, state)
}

fn local_abort(events: &[Event]) -> bool {
    events
        .iter()
        .any(|e| matches!(e, Event::Closed(CloseReason::LocalAbort { .. })))
}

#[test]
fn an_init_ack_with_a_host_name_address_aborts_the_association() {
    let (replies, events, state) = answer_init(peer_init_ack(vec![host_name()]));
    // RFC 9260 3.3.3 Note 3, 5.1.2 B: ABORT (no COOKIE ECHO), under the
    // INIT ACK's Initiate Tag, with Unresolvable Address.
    assert_eq!(replies.len(), 1);
    assert_eq!(
        the_abort(&replies[0]),
        (
            PEER_TAG,
            false,
            vec![(ErrorCause::UNRESOLVABLE_ADDRESS, tlv(&host_name()))]
        )
    );
    assert!(local_abort(&events), "{events:?}");
    assert_ne!(state, Some(State::CookieEchoed));
}

#[test]
fn an_init_ack_with_a_window_below_1500_aborts_the_association() {
    let ack = InitAck {
        a_rwnd: 1499,
        ..peer_init_ack(vec![])
    };
    let (replies, events, state) = answer_init(ack);
    // RFC 9260 3.3.3, 5.1: discarded, answered by ABORT under its Initiate Tag.
    assert_eq!(replies.len(), 1);
    let (tag, t_bit, causes) = the_abort(&replies[0]);
    assert_eq!((tag, t_bit), (PEER_TAG, false));
    assert_eq!(causes.len(), 1);
    assert_eq!(causes[0].0, ErrorCause::INVALID_MANDATORY_PARAMETER);
    assert!(local_abort(&events), "{events:?}");
    assert_ne!(state, Some(State::CookieEchoed));
}

#[test]
fn an_init_ack_with_initiate_tag_0_is_answered_with_abort_t_bit_and_destroys_the_tcb() {
    let (mut ep, id, our_tag) = client();
    let ack = InitAck {
        initiate_tag: 0,
        ..peer_init_ack(vec![])
    };
    let now = Time::from_millis(5);
    ep.handle_datagram(now, peer(), &packet(our_tag, vec![Chunk::InitAck(ack)]));
    let replies = sent(&mut ep, now);
    // RFC 9260 3.3.3: destroy the TCB, SHOULD send ABORT with the T bit:
    // the packet carries our own tag, the one the peer knows from our INIT
    // (8.5.1 B).
    assert_eq!(replies.len(), 1);
    let (tag, t_bit, _) = the_abort(&replies[0]);
    assert_eq!((tag, t_bit), (our_tag, true));
    let mut closed = false;
    while let Some((_, e)) = ep.poll_event() {
        closed |= matches!(e, Event::Closed(_));
    }
    assert!(closed);
    assert!(ep.association_ref(id).is_none_or(|a| a.is_closed()));
}

/// Hands `ep` a SHUTDOWN ACK under `tag`; checks the answer is a SHUTDOWN
/// COMPLETE under the same tag with the T bit.
fn shutdown_ack_gets_shutdown_complete_t_bit(ep: &mut Endpoint, tag: u32) {
    let now = Time::from_millis(5);
    let ack = Chunk::ShutdownAck(brisk_proto::wire::chunk::ShutdownAck);
    ep.handle_datagram(now, peer(), &packet(tag, vec![ack]));
    let replies = sent(ep, now);
    assert_eq!(replies.len(), 1, "tag {tag:#x}");
    let p = Packet::decode(&replies[0]).unwrap();
    assert_eq!(p.header.verification_tag, tag);
    assert!(
        matches!(
            p.chunks[..],
            [Chunk::ShutdownComplete(
                brisk_proto::wire::chunk::ShutdownComplete {
                    reflected_tag: true
                }
            )]
        ),
        "{:?}",
        shape(&replies[0])
    );
}

#[test]
fn a_shutdown_ack_before_the_handshake_ends_is_answered_with_shutdown_complete_t_bit() {
    // RFC 9260 8.5.1 E, 8.4 rule 5: in COOKIE-WAIT and COOKIE-ECHOED it is
    // out of the blue, whatever its tag: SHUTDOWN COMPLETE under the tag
    // received, T bit set; the handshake goes on.
    let (mut ep, id, our_tag) = client();
    for tag in [our_tag, 0xdead_beef] {
        shutdown_ack_gets_shutdown_complete_t_bit(&mut ep, tag);
        let state = ep.association_ref(id).map(|a| a.state());
        assert_eq!(state, Some(State::CookieWait));
    }
    let ack = Chunk::InitAck(peer_init_ack(vec![]));
    ep.handle_datagram(Time::from_millis(5), peer(), &packet(our_tag, vec![ack]));
    let echo = sent(&mut ep, Time::from_millis(5));
    assert_eq!(shape(&echo[0]), (PEER_TAG, vec![types::COOKIE_ECHO]));
    for tag in [our_tag, PEER_TAG] {
        shutdown_ack_gets_shutdown_complete_t_bit(&mut ep, tag);
        let state = ep.association_ref(id).map(|a| a.state());
        assert_eq!(state, Some(State::CookieEchoed));
    }
}

/// The error cause codes of the ABORTs that crossed the wire in `dir`.
fn abort_causes(p: &harness::Pair, dir: harness::Dir) -> Vec<Vec<u16>> {
    p.log
        .iter()
        .filter(|l| l.seen.dir == dir && l.seen.has(types::ABORT))
        .map(|l| the_abort(&l.seen.bytes).2.iter().map(|c| c.0).collect())
        .collect()
}

#[test]
fn an_abort_after_association_max_retrans_does_not_claim_a_protocol_violation() {
    let cfg = Config {
        assoc_max_retrans: 2,
        ..Config::rfc9260()
    };
    let mut p = harness::Pair::new(harness::ms(10), cfg.clone());
    p.connect(cfg);
    // B's SACKs are lost: A's DATA goes unanswered until it gives up (8.1).
    p.rule(|s| (s.dir == harness::Dir::BtoA).then_some(harness::Fate::Drop));
    p.a_send(brisk_proto::OutgoingMessage::new(0, &b"lost"[..]));
    p.run_for(harness::ms(60_000));
    assert!(
        p.a_events
            .iter()
            .any(|(_, _, e)| matches!(e, Event::Closed(CloseReason::PeerUnreachable { .. })))
    );
    // RFC 9260 3.3.10.13: Protocol Violation is for the peer's violations;
    // giving up is our own decision (3.3.10.12).
    assert_eq!(
        abort_causes(&p, harness::Dir::AtoB),
        vec![vec![ErrorCause::USER_INITIATED_ABORT]]
    );
}

#[test]
fn an_abort_when_the_shutdown_guard_expires_does_not_claim_a_protocol_violation() {
    let cfg = Config {
        assoc_max_retrans: 100,
        rto_max: harness::ms(2000),
        ..Config::rfc9260()
    };
    let mut p = harness::Pair::new(harness::ms(10), cfg.clone());
    let (a, _) = p.connect(cfg);
    // B's SHUTDOWN ACKs are lost: T5-shutdown-guard ends it (9.2).
    p.rule(|s| (s.dir == harness::Dir::BtoA).then_some(harness::Fate::Drop));
    let now = p.now;
    p.a.association(a).unwrap().shutdown(now);
    p.run_for(harness::ms(30_000));
    assert!(
        p.a_events
            .iter()
            .any(|(_, _, e)| matches!(e, Event::Closed(CloseReason::LocalAbort { .. })))
    );
    assert_eq!(
        abort_causes(&p, harness::Dir::AtoB),
        vec![vec![ErrorCause::USER_INITIATED_ABORT]]
    );
}
