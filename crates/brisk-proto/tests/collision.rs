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

/// Sends `count` ordered messages "{tag}{n}" on each of streams 0..4 from
/// one side's association.
fn send_on_streams(ep: &mut Endpoint, id: brisk_proto::AssocId, now: brisk_proto::Time, tag: &str) {
    let assoc = ep.association(id).expect("association");
    for n in 0..3 {
        for stream in 0..4u16 {
            let payload = format!("{tag}{stream}.{n}").into_bytes();
            assoc
                .send(now, OutgoingMessage::new(stream, payload))
                .expect("send");
        }
    }
}

/// What one side's association delivered, per stream, in order.
fn received(ep: &mut Endpoint, id: brisk_proto::AssocId) -> Vec<Vec<String>> {
    let mut per_stream = vec![Vec::new(); 4];
    if let Some(assoc) = ep.association(id) {
        while let Some(m) = assoc.recv() {
            per_stream[usize::from(m.stream_id)]
                .push(String::from_utf8_lossy(&m.payload).into_owned());
        }
    }
    per_stream
}

fn expected(tag: &str) -> Vec<Vec<String>> {
    (0..4)
        .map(|s| (0..3).map(|n| format!("{tag}{s}.{n}")).collect())
        .collect()
}

/// A and B use streams 0..3 (`cfg` both ways), leaving what A received
/// unread when `read_before` is false; then B restarts (a fresh endpoint on
/// the same address and port connects again: 5.2.4 A at A) and both use the
/// same streams again. Returns what each side read afterwards.
fn restart_and_reuse_streams(cfg: Config, read_before: bool) -> [Vec<Vec<String>>; 2] {
    let mut p = Pair::new(ms(10), cfg.clone());
    let (a, b) = p.connect(cfg.clone());
    let now = p.now;
    send_on_streams(&mut p.a, a, now, "a-old");
    send_on_streams(&mut p.b, b, now, "b-old");
    p.run_for(ms(1000));
    assert_eq!(received(&mut p.b, b), expected("a-old"));
    if read_before {
        assert_eq!(received(&mut p.a, a), expected("b-old"));
    }
    p.b = Endpoint::new(
        EndpointConfig {
            accept_config: cfg.clone(),
            ..EndpointConfig::default()
        },
        [8; 32],
    );
    p.b_events.clear();
    let b2 = p.b.connect(p.now, p.a_addr, cfg).unwrap();
    p.b_id = Some(b2);
    p.run_for(ms(1000));
    assert!(
        p.a_events
            .iter()
            .any(|(_, id, e)| *id == a && *e == Event::Restarted)
    );
    assert!(p.b_events.iter().any(|(_, _, e)| *e == Event::Connected));
    let now = p.now;
    send_on_streams(&mut p.a, a, now, "a-new");
    send_on_streams(&mut p.b, b2, now, "b-new");
    p.run_for(ms(2000));
    [received(&mut p.a, a), received(&mut p.b, b2)]
}

#[test]
fn after_a_peer_restart_ordered_messages_on_used_streams_are_delivered_both_ways() {
    // RFC 9260 5.2.4 A, 6.5: the restarted association numbers every stream
    // from SSN 0, both ways, as the restarted peer does.
    let [at_a, at_b] = restart_and_reuse_streams(Config::rfc9260(), true);
    assert_eq!(at_b, expected("a-new"));
    assert_eq!(at_a, expected("b-new"));
}

#[test]
fn after_a_peer_restart_i_data_messages_on_used_streams_are_delivered_both_ways() {
    // RFC 8260 2.1: with I-DATA the MIDs start from 0 again too.
    let cfg = Config {
        message_interleaving: true,
        ..Config::rfc9260()
    };
    let [at_a, at_b] = restart_and_reuse_streams(cfg, true);
    assert_eq!(at_b, expected("a-new"));
    assert_eq!(at_a, expected("b-new"));
}

#[test]
fn messages_received_before_a_peer_restart_stay_readable_after_it() {
    let [at_a, _] = restart_and_reuse_streams(Config::rfc9260(), false);
    let both: Vec<Vec<String>> = expected("b-old")
        .into_iter()
        .zip(expected("b-new"))
        .map(|(old, new)| old.into_iter().chain(new).collect())
        .collect();
    assert_eq!(at_a, both);
}
