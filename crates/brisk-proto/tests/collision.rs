//! Duplicate and colliding setup chunks (RFC 9260 5.2.1 to 5.2.6).

mod harness;

use brisk_proto::wire::chunk::types;
use brisk_proto::{Config, Endpoint, EndpointConfig, Event, OutgoingMessage, State};
use harness::{Dir, Fate, Pair, ms};

fn count(p: &Pair, dir: Dir, chunk: u8) -> usize {
    p.log
        .iter()
        .filter(|l| l.seen.dir == dir && l.seen.has(chunk))
        .count()
}

#[test]
fn simultaneous_connects_collide_into_one_association_per_side() {
    let mut p = Pair::symmetric(ms(10), Config::rfc9260());
    let now = p.now;
    let a = p.a.connect(now, p.b_addr, Config::rfc9260()).unwrap();
    let b = p.b.connect(now, p.a_addr, Config::rfc9260()).unwrap();
    p.a_id = Some(a);
    p.run_for(ms(2000));
    assert_eq!((p.a.association_count(), p.b.association_count()), (1, 1));
    assert_eq!(p.a.association(a).unwrap().state(), State::Established);
    assert_eq!(p.b.association(b).unwrap().state(), State::Established);
    // Each side answered the other's INIT with an INIT ACK (5.2.1).
    assert!(count(&p, Dir::AtoB, types::INIT_ACK) >= 1);
    assert!(count(&p, Dir::BtoA, types::INIT_ACK) >= 1);
    // Data flows both ways with consistent tags.
    p.b_id = Some(b);
    p.a_send(OutgoingMessage::new(0, &b"from a"[..]));
    let now = p.now;
    p.b.association(b)
        .unwrap()
        .send(now, OutgoingMessage::new(0, &b"from b"[..]))
        .unwrap();
    p.run_for(ms(1000));
    assert_eq!(p.b_recv_all().len(), 1);
    let got = p.a.association(a).unwrap().recv().unwrap();
    assert_eq!(&got.payload[..], b"from b");
}

#[test]
fn a_retransmitted_cookie_echo_is_acknowledged_again_without_a_second_association() {
    let mut p = Pair::new(ms(10), Config::rfc9260());
    // The first COOKIE ACK is lost: A retransmits COOKIE ECHO (action D).
    let mut dropped = false;
    p.rule(move |s| {
        let first = s.has(types::COOKIE_ACK) && !dropped;
        dropped |= first;
        first.then_some(Fate::Drop)
    });
    p.connect(Config::rfc9260());
    assert_eq!(count(&p, Dir::AtoB, types::COOKIE_ECHO), 2);
    assert_eq!(count(&p, Dir::BtoA, types::COOKIE_ACK), 2);
    assert_eq!(p.b.association_count(), 1);
    let b_connected = p
        .b_events
        .iter()
        .filter(|e| e.2 == Event::Connected)
        .count();
    assert_eq!(b_connected, 1);
}

#[test]
fn a_peer_restart_is_detected_by_tie_tags_and_reported() {
    let mut p = Pair::new(ms(10), Config::rfc9260());
    let (_, b) = p.connect(Config::rfc9260());
    p.a_send(OutgoingMessage::new(0, &b"before"[..]));
    p.run_for(ms(500));
    assert_eq!(p.b_recv_all().len(), 1);
    // A crashes and comes back with no memory of the association (5.2.2, 5.2.4 A).
    p.a = Endpoint::new(
        EndpointConfig {
            accept: false,
            ..EndpointConfig::default()
        },
        [7; 32],
    );
    p.a_events.clear();
    let a2 = p.a.connect(p.now, p.b_addr, Config::rfc9260()).unwrap();
    p.a_id = Some(a2);
    p.run_for(ms(500));
    assert!(p.a_connected());
    assert!(
        p.b_events
            .iter()
            .any(|(_, id, e)| *id == b && *e == Event::Restarted)
    );
    assert_eq!(p.b.association_count(), 1);
    assert_eq!(p.b.association(b).unwrap().state(), State::Established);
    // The INIT ACK to a known peer carried a new tag (5.2.2).
    p.a_send(OutgoingMessage::new(0, &b"after"[..]));
    p.run_for(ms(500));
    let got = p.b_recv_all();
    assert_eq!(got.len(), 1);
    assert_eq!(&got[0].payload[..], b"after");
    assert_eq!(got[0].ssn, 0, "a restart starts the streams afresh");
}

#[test]
fn an_init_ack_in_an_established_association_is_discarded() {
    let mut p = Pair::new(ms(10), Config::rfc9260());
    let (a, _) = p.connect(Config::rfc9260());
    let init_ack = p
        .log
        .iter()
        .find(|l| l.seen.has(types::INIT_ACK))
        .unwrap()
        .seen
        .bytes
        .clone();
    let now = p.now;
    p.a.handle_datagram(now, p.b_addr, &init_ack);
    assert_eq!(p.a.association(a).unwrap().state(), State::Established);
    assert!(p.a.poll_transmit(now, &mut Vec::new()).is_none());
}

#[test]
fn a_stale_cookie_is_retried_with_a_cookie_preservative() {
    // B's cookies live 15 ms; the COOKIE ECHO takes 20 ms to come back.
    let b_cfg = Config {
        valid_cookie_life: ms(15),
        ..Config::rfc9260()
    };
    let mut p = Pair::new(ms(10), b_cfg);
    p.connect(Config::rfc9260());
    assert_eq!(
        count(&p, Dir::AtoB, types::INIT),
        2,
        "a second INIT after the Stale Cookie error"
    );
    assert_eq!(count(&p, Dir::BtoA, types::ERROR), 1);
    let second_init = p
        .log
        .iter()
        .filter(|l| l.seen.has(types::INIT))
        .nth(1)
        .unwrap();
    let packet = brisk_proto::wire::Packet::decode(&second_init.seen.bytes).unwrap();
    let brisk_proto::wire::Chunk::Init(init) = &packet.chunks[0] else {
        panic!()
    };
    assert!(
        init.params
            .iter()
            .any(|p| matches!(p, brisk_proto::wire::Param::CookiePreservative { .. }))
    );
}
