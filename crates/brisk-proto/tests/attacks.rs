//! Regression tests for the attacks of issue 9, in memory against
//! `brisk_proto::Endpoint`: each fails on the code before its fix.
//! (`crates/brisk/tests/attacks.rs` repeats them over real UDP.)

mod harness;

use brisk_proto::rx::window::NEXT_TSN_ALLOWANCE;
use brisk_proto::wire::chunk::{CookieEcho, Data, DataFlags, GapBlock, Sack};
use brisk_proto::wire::{Chunk, Packet};
use brisk_proto::{Config, Endpoint, EndpointConfig, OutgoingMessage, SendError, State, Time};
use harness::{Dir, Fate, Pair, ms, packet};

fn data(tsn: u32, flags: DataFlags, payload: &[u8]) -> Chunk<'static> {
    Chunk::Data(Data {
        flags,
        tsn,
        stream_id: 0,
        ssn: 0,
        ppid: 0,
        payload: payload.to_vec().into(),
    })
}

const FIRST: DataFlags = DataFlags {
    immediate: false,
    unordered: false,
    beginning: true,
    ending: false,
};

/// The 24-byte packet of the finding: ports 5000 to 5000, tag 0xdeadbeef, a
/// 4-byte COOKIE ECHO and an ABORT, with a correct CRC32c.
const OFF_PATH_ABORT: &str = "13881388deadbeeff94168c80a0000084141414106000004";

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn an_abort_bundled_after_a_garbage_cookie_echo_does_not_pass_the_tag_check() {
    let mut p = Pair::new(ms(10), Config::rfc9260());
    let (_, b) = p.connect(Config::rfc9260());
    let bytes = hex(OFF_PATH_ABORT);
    assert!(
        Packet::decode(&bytes).is_ok(),
        "the attack packet is valid SCTP"
    );
    let now = p.now;
    p.b.handle_datagram(now, p.a_addr, &bytes);
    assert_eq!(p.b.association(b).unwrap().state(), State::Established);
    // Nothing answered it, and the association still carries messages.
    p.a_send(OutgoingMessage::new(0, &b"still here"[..]));
    p.run_for(ms(300));
    assert_eq!(p.b_recv_all().len(), 1);
}

#[test]
fn data_bundled_after_a_garbage_cookie_echo_takes_no_tsn() {
    let mut p = Pair::new(ms(10), Config::rfc9260());
    let (_, b) = p.connect(Config::rfc9260());
    let tsn = p.a_next_tsn();
    let forged = packet(
        0xdead_beef,
        vec![
            Chunk::CookieEcho(CookieEcho {
                cookie: b"AAAA".to_vec().into(),
            }),
            data(tsn, DataFlags::UNFRAGMENTED, b"forged"),
        ],
    );
    let now = p.now;
    p.b.handle_datagram(now, p.a_addr, &forged);
    assert_eq!(p.b.association(b).unwrap().stats().data_chunks_received, 0);
    // The genuine message with that TSN is delivered.
    p.a_send(OutgoingMessage::new(0, &b"genuine"[..]));
    p.run_for(ms(300));
    let got = p.b_recv_all();
    assert_eq!(got.len(), 1);
    assert_eq!(&got[0].payload[..], b"genuine");
}

fn server() -> Endpoint {
    Endpoint::new(EndpointConfig::default(), [9; 32])
}

/// B's INIT ACK for an INIT from `peer`: (B's tag, the cookie).
fn cookie_for(ep: &mut Endpoint, peer: std::net::SocketAddr) -> (u32, Vec<u8>) {
    harness::init_ack_for(ep, Time::ZERO, peer)
}

fn echo(tag: u32, cookie: &[u8]) -> Vec<u8> {
    packet(
        tag,
        vec![Chunk::CookieEcho(CookieEcho {
            cookie: cookie.to_vec().into(),
        })],
    )
}

#[test]
fn a_cookie_replayed_from_a_thousand_addresses_creates_one_association() {
    let mut ep = server();
    let peer: std::net::SocketAddr = "192.0.2.1:9899".parse().unwrap();
    let (tag, cookie) = cookie_for(&mut ep, peer);
    for i in 0..1000u32 {
        let spoofed = std::net::SocketAddr::new(
            std::net::Ipv4Addr::from(0xc633_6400 + i).into(),
            9899 + (i % 7) as u16,
        );
        ep.handle_datagram(Time::ZERO, spoofed, &echo(tag, &cookie));
    }
    assert_eq!(ep.association_count(), 0);
    assert_eq!(ep.stats().cookies_rejected, 1000);
    // From the address it was issued to, once.
    ep.handle_datagram(Time::ZERO, peer, &echo(tag, &cookie));
    assert_eq!(ep.association_count(), 1);
    // The same address and UDP port only.
    let other_port: std::net::SocketAddr = "192.0.2.1:9900".parse().unwrap();
    ep.handle_datagram(Time::ZERO, other_port, &echo(tag, &cookie));
    assert_eq!(ep.association_count(), 1);
    assert_eq!(ep.stats().cookies_accepted, 1);
}

#[test]
fn a_replayed_cookie_is_answered_per_5_2_4_and_creates_no_second_association() {
    let mut ep = server();
    let peer: std::net::SocketAddr = "192.0.2.1:9899".parse().unwrap();
    let (tag, cookie) = cookie_for(&mut ep, peer);
    ep.handle_datagram(Time::ZERO, peer, &echo(tag, &cookie));
    let mut buf = Vec::new();
    while ep.poll_transmit(Time::ZERO, &mut buf).is_some() {}
    // Replayed from the same address: action D, COOKIE ACK again.
    let now = Time::from_millis(10);
    ep.handle_datagram(now, peer, &echo(tag, &cookie));
    assert_eq!(ep.association_count(), 1);
    assert_eq!(ep.stats().cookies_accepted, 1);
    buf.clear();
    ep.poll_transmit(now, &mut buf).expect("a reply");
    let reply = Packet::decode(&buf).unwrap();
    assert!(matches!(reply.chunks[..], [Chunk::CookieAck(_)]));
}

#[test]
fn a_replayed_cookie_after_the_peer_moved_port_creates_no_second_association() {
    let mut p = Pair::new(ms(10), Config::rfc9260());
    p.connect(Config::rfc9260());
    let cookie_packet = p
        .log
        .iter()
        .find(|l| {
            l.seen.dir == Dir::AtoB && l.seen.has(brisk_proto::wire::chunk::types::COOKIE_ECHO)
        })
        .unwrap()
        .seen
        .bytes
        .clone();
    let original = p.a_addr;
    // The peer's UDP port changes (RFC 6951 5.4): the association follows it.
    p.a_addr = "10.0.0.1:40000".parse().unwrap();
    p.a_send(OutgoingMessage::new(0, &b"moved"[..]));
    p.run_for(ms(300));
    assert_eq!(p.b_recv_all().len(), 1);
    // The old cookie, from the old address, within its lifetime: the
    // association takes it (its tag; RFC 6951 5.4) as a retransmitted COOKIE
    // ECHO (RFC 9260 5.2.4 D), and no second one is made.
    let accepted = p.b.stats().cookies_accepted;
    let now = p.now;
    p.b.handle_datagram(now, original, &cookie_packet);
    assert_eq!(p.b.association_count(), 1);
    assert_eq!(p.b.stats().cookies_accepted, accepted);
    let b = p.b_id.unwrap();
    assert_eq!(p.b.association(b).unwrap().state(), State::Established);
}

#[test]
fn lower_tsns_under_a_high_one_cannot_grow_reassembly_past_the_window() {
    let cfg = Config {
        receive_buffer: 64 << 10,
        ..Config::rfc9260()
    };
    for size in [1000usize, 1] {
        let mut p = Pair::new(ms(10), cfg.clone());
        let (_, b) = p.connect(Config::rfc9260());
        let base = p.a_next_tsn();
        let limit = (64 << 10) + NEXT_TSN_ALLOWANCE;
        // One chunk at the top of the gap window, then every lower TSN two
        // apart (first fragments that never end), never the one at `base`.
        p.inject_to_b(vec![data(base.wrapping_add(65_000), FIRST, &vec![7; size])]);
        let mut worst = 0;
        for k in 0..3000u32 {
            let tsn = base.wrapping_add(64_998 - 2 * k);
            p.inject_to_b(vec![data(tsn, FIRST, &vec![7; size])]);
            let held = p.b.association(b).unwrap().receive_held();
            worst = worst.max(held);
            assert!(
                held <= limit,
                "{size} B chunks: held {held} > {limit} at {k}"
            );
        }
        let stats = p.b.association(b).unwrap().stats().clone();
        assert!(
            stats.data_dropped_window_full + stats.data_reneged > 0,
            "{size} B: drops and reneging counted"
        );
        assert!(worst > 32 << 10, "{size} B: the window was used ({worst})");
        // The SACKs advertise what is left of the buffer, never more.
        assert_eq!(p.b.association(b).unwrap().state(), State::Established);
    }
}

#[test]
fn a_hole_filling_chunk_takes_the_place_of_the_highest_held_fragments() {
    let cfg = Config {
        receive_buffer: 16 << 10,
        ..Config::rfc9260()
    };
    let mut p = Pair::new(ms(10), cfg);
    let (_, b) = p.connect(Config::rfc9260());
    let base = p.a_next_tsn();
    // Fill the buffer with first fragments at base+2, base+4, ...
    let mut k = 1;
    while p.b.association(b).unwrap().receive_held() + brisk_proto::rx::window::charge(1000)
        <= 16 << 10
    {
        p.inject_to_b(vec![data(base.wrapping_add(2 * k), FIRST, &[1; 1000])]);
        k += 1;
    }
    let highest = base.wrapping_add(2 * (k - 1));
    // A lower TSN (base+1, a whole message) with no room: the highest
    // fragment goes.
    p.inject_to_b(vec![data(
        base.wrapping_add(1),
        DataFlags::UNFRAGMENTED,
        &[2; 1000],
    )]);
    let stats = p.b.association(b).unwrap().stats().clone();
    assert_eq!(stats.data_reneged, 1);
    assert!(p.b.association(b).unwrap().receive_held() <= 16 << 10);
    // The next SACK no longer reports the reneged TSN.
    p.run_for(ms(15));
    let sack = p
        .log
        .iter()
        .rev()
        .find(|l| l.seen.dir == Dir::BtoA && l.seen.has_sack())
        .map(|l| Packet::decode(&l.seen.bytes).unwrap().chunks.clone())
        .unwrap();
    let Some(Chunk::Sack(s)) = sack.into_iter().find(|c| matches!(c, Chunk::Sack(_))) else {
        panic!("a SACK")
    };
    let top = s.gap_blocks.last().unwrap().end;
    assert!(
        s.cum_tsn_ack.wrapping_add(u32::from(top)) != highest,
        "the reneged TSN {highest} is not acknowledged"
    );
}

#[test]
fn a_peer_that_acks_only_by_gap_blocks_cannot_make_the_sender_hold_more_than_its_buffer() {
    let cfg = Config {
        send_buffer: 256 << 10,
        ..Config::rfc9260()
    };
    let mut p = Pair::new(ms(10), Config::rfc9260());
    p.connect(cfg.clone());
    let (_, b_tag) = p.tags();
    let a = p.a_id.unwrap();
    let initial = p.a_next_tsn();
    // B's own packets never reach A; the attacker answers in its place.
    p.rule(|s| (s.dir == Dir::BtoA).then_some(Fate::Drop));
    let mut refused = 0;
    for round in 0..400 {
        for _ in 0..20 {
            let msg = OutgoingMessage::new(0, vec![round as u8; 1000]);
            match p.a.association(a).unwrap().send(p.now, msg) {
                Ok(_) => {}
                Err(SendError::BufferFull { .. }) => refused += 1,
                Err(e) => panic!("{e}"),
            }
        }
        p.run_for(ms(5));
        // Everything sent so far is gap-acked; the cumulative ack never moves.
        let next = p.a_next_tsn();
        let span = next.wrapping_sub(initial);
        if span >= 2 {
            let sack = Sack {
                cum_tsn_ack: initial.wrapping_sub(1),
                a_rwnd: 1 << 30,
                gap_blocks: vec![GapBlock {
                    start: 2,
                    end: u16::try_from(span.min(65_535)).unwrap(),
                }],
                dup_tsns: vec![],
            };
            let now = p.now;
            p.a.handle_datagram(now, p.b_addr, &packet(b_tag, vec![Chunk::Sack(sack)]));
        }
        let held = p.a.association(a).unwrap().send_held();
        assert!(held <= 256 << 10, "round {round}: {held} held");
    }
    assert!(refused > 0, "send refused once the buffer was full");
}

/// B's initial TSN, from its INIT ACK on the wire.
fn b_initial_tsn(p: &Pair) -> u32 {
    p.log
        .iter()
        .find_map(|l| match &Packet::decode(&l.seen.bytes).ok()?.chunks[0] {
            Chunk::InitAck(ack) => Some(ack.initial_tsn),
            _ => None,
        })
        .unwrap()
}

#[test]
fn data_then_shutdown_gets_its_sack_and_leaves_no_deadline_in_the_past() {
    let mut p = Pair::new(ms(10), Config::rfc9260());
    let (_, b) = p.connect(Config::rfc9260());
    let tsn = p.a_next_tsn();
    let cum_of_b = b_initial_tsn(&p).wrapping_sub(1);
    // Two packets from the peer, back to back: DATA, then SHUTDOWN.
    p.inject_to_b(vec![data(tsn, DataFlags::UNFRAGMENTED, b"last words")]);
    p.inject_to_b(vec![Chunk::Shutdown(brisk_proto::wire::chunk::Shutdown {
        cum_tsn_ack: cum_of_b,
    })]);
    let now = p.now;
    p.b.handle_timeout(now);
    while p.b.poll_transmit(now, &mut Vec::new()).is_some() {}
    assert!(
        p.b.poll_timeout().is_none_or(|t| t > now),
        "B's deadline {:?} is not in the past at {now:?}",
        p.b.poll_timeout()
    );
    p.run_for(ms(50));
    // The DATA was acknowledged (B's SACK reached A's side of the wire).
    let acked = p
        .log
        .iter()
        .filter(|l| l.seen.dir == Dir::BtoA)
        .filter_map(|l| l.seen.sack.as_ref())
        .any(|(cum, _)| *cum == tsn);
    assert!(acked, "a SACK for TSN {tsn}");
    let _ = b;
}

#[test]
fn chunks_on_an_invalid_stream_are_all_sacked_and_errors_are_rate_limited() {
    let mut p = Pair::new(ms(10), Config::rfc9260());
    let (_, b) = p.connect(Config::rfc9260());
    let first = p.a_next_tsn();
    let invalid = |tsn: u32| {
        Chunk::Data(Data {
            flags: DataFlags::UNFRAGMENTED,
            tsn,
            stream_id: 999,
            ssn: 0,
            ppid: 0,
            payload: vec![5; 8].into(),
        })
    };
    // B's SACKs acknowledge TSNs A never sent: kept from A (RFC 9260 15).
    p.rule(|s| (s.dir == Dir::BtoA).then_some(Fate::Drop));
    // 300 chunks in 10 packets of 30.
    for packet in 0..10u32 {
        let chunks = (0..30u32)
            .map(|i| invalid(first.wrapping_add(packet * 30 + i)))
            .collect();
        p.inject_to_b(chunks);
    }
    // The first packet was SACKed at once (RFC 9260 5.1), so the last one's
    // SACK is the delayed one (SACK.Delay, 200 ms).
    p.run_for(ms(250));
    let from_b: Vec<_> = p.log.iter().filter(|l| l.seen.dir == Dir::BtoA).collect();
    let errors = from_b
        .iter()
        .map(|l| {
            l.seen
                .chunk_types
                .iter()
                .filter(|&&t| t == brisk_proto::wire::chunk::types::ERROR)
                .count()
        })
        .sum::<usize>();
    assert!(
        (1..=10).contains(&errors),
        "{errors} ERROR chunks for 300 bad chunks"
    );
    let last = first.wrapping_add(299);
    assert!(
        from_b
            .iter()
            .filter_map(|l| l.seen.sack.as_ref())
            .any(|(cum, _)| *cum == last),
        "a SACK acknowledges all 300"
    );
    let stats = p.b.association(b).unwrap().stats().clone();
    assert_eq!(stats.errors_suppressed as usize, 300 - errors);
    assert_eq!(p.b.association(b).unwrap().state(), State::Established);
}
