//! Association setup (RFC 9260 5.1, 5.2) through the pair harness.

mod harness;

use brisk_proto::wire::chunk::types;
use brisk_proto::{CloseReason, Config, Event, OutgoingMessage, State};
use harness::{Dir, Fate, Pair, ms};

#[test]
fn four_way_handshake_establishes_both_sides_in_two_round_trips() {
    let mut p = Pair::new(ms(10), Config::rfc9260());
    let (a, b) = p.connect(Config::rfc9260());
    assert_eq!(p.a.association(a).unwrap().state(), State::Established);
    assert_eq!(p.b.association(b).unwrap().state(), State::Established);
    let kinds: Vec<(Dir, Vec<u8>)> = p
        .log
        .iter()
        .map(|l| (l.seen.dir, l.seen.chunk_types.clone()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (Dir::AtoB, vec![types::INIT]),
            (Dir::BtoA, vec![types::INIT_ACK]),
            (Dir::AtoB, vec![types::COOKIE_ECHO]),
            (Dir::BtoA, vec![types::COOKIE_ACK]),
        ]
    );
    // A is up after 2 RTTs of 20 ms; B after 1.5.
    let a_up = p
        .a_events
        .iter()
        .find(|e| e.2 == Event::Connected)
        .unwrap()
        .0;
    let b_up = p
        .b_events
        .iter()
        .find(|e| e.2 == Event::Connected)
        .unwrap()
        .0;
    assert_eq!(a_up, brisk_proto::Time::from_millis(40));
    assert_eq!(b_up, brisk_proto::Time::from_millis(30));
}

#[test]
fn lost_init_is_retransmitted_after_rto_initial_with_backoff() {
    let mut p = Pair::new(ms(10), Config::rfc9260());
    p.rule(|s| (s.dir == Dir::AtoB && s.has(types::INIT) && s.ordinal <= 2).then_some(Fate::Drop));
    let (_a, _b) = p.connect(Config::rfc9260());
    let inits: Vec<_> = p
        .log
        .iter()
        .filter(|l| l.seen.has(types::INIT))
        .map(|l| l.seen.sent_at)
        .collect();
    // RTO.Initial 1 s, then doubled: 0, 1 s, 3 s.
    assert_eq!(
        inits,
        vec![
            brisk_proto::Time::ZERO,
            brisk_proto::Time::from_millis(1000),
            brisk_proto::Time::from_millis(3000)
        ]
    );
}

#[test]
fn handshake_gives_up_after_max_init_retransmits() {
    let mut p = Pair::new(ms(10), Config::rfc9260());
    p.rule(|s| (s.dir == Dir::AtoB).then_some(Fate::Drop));
    let cfg = Config {
        max_init_retransmits: 2,
        ..Config::rfc9260()
    };
    let id = p.a.connect(p.now, p.b_addr, cfg).unwrap();
    p.a_id = Some(id);
    p.run_for(ms(60_000));
    let inits = p.log.iter().filter(|l| l.seen.has(types::INIT)).count();
    assert_eq!(inits, 3, "one INIT and two retransmissions");
    assert!(p.a_events.iter().any(|(t, _, e)| {
        *e == Event::Closed(CloseReason::HandshakeTimeout { attempts: 3 })
            && *t == brisk_proto::Time::from_millis(7000)
    }));
    assert_eq!(p.a.association_count(), 0);
}

#[test]
fn lost_cookie_echo_is_retransmitted() {
    let mut p = Pair::new(ms(10), Config::rfc9260());
    p.rule(|s| (s.has(types::COOKIE_ECHO) && s.ordinal == 2).then_some(Fate::Drop));
    p.connect(Config::rfc9260());
    let echoes = p
        .log
        .iter()
        .filter(|l| l.seen.has(types::COOKIE_ECHO))
        .count();
    assert_eq!(echoes, 2);
}

#[test]
fn messages_queued_before_the_handshake_are_sent_after_it() {
    let mut p = Pair::new(ms(10), Config::rfc9260());
    let id = p.a.connect(p.now, p.b_addr, Config::rfc9260()).unwrap();
    p.a_id = Some(id);
    let now = p.now;
    p.a.association(id)
        .unwrap()
        .send(now, OutgoingMessage::new(0, &b"early"[..]))
        .unwrap();
    p.run_for(ms(200));
    let got = p.b_recv_all();
    assert_eq!(got.len(), 1);
    assert_eq!(&got[0].payload[..], b"early");
}
