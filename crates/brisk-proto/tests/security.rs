//! Hostile input: forged and expired cookies, wrong verification tags, floods
//! of INIT, out-of-the-blue packets (RFC 9260 5.1.5, 8.4, 8.5), and peers
//! listing addresses they do not own (5.4, 5.2.2).

mod harness;

use brisk_proto::wire::cause::ErrorCause;
use brisk_proto::wire::chunk::{Abort, CookieEcho, Data, DataFlags, Init, types};
use brisk_proto::wire::{Chunk, CommonHeader, Packet, Param};
use brisk_proto::{AssocId, Config, Endpoint, EndpointConfig, Event, Time};
use harness::{Dir, Pair, ms};

fn packet(tag: u32, chunk: Chunk<'static>) -> Vec<u8> {
    harness::packet(tag, vec![chunk])
}

fn server() -> Endpoint {
    Endpoint::new(EndpointConfig::default(), [9; 32])
}

fn init(tag: u32) -> Chunk<'static> {
    Chunk::Init(Init {
        initiate_tag: tag,
        a_rwnd: 65536,
        outbound_streams: 10,
        inbound_streams: 10,
        initial_tsn: 1,
        params: vec![],
    })
}

#[test]
fn a_flood_of_inits_creates_no_association_state() {
    let mut ep = server();
    let peer = "192.0.2.1:9899".parse().unwrap();
    for i in 1..=10_000u32 {
        ep.handle_datagram(Time::ZERO, peer, &packet(0, init(i)));
    }
    assert_eq!(ep.association_count(), 0);
    assert_eq!(ep.stats().init_acks_sent, 10_000);
    let mut buf = Vec::new();
    let mut answered = 0;
    while ep.poll_transmit(Time::ZERO, &mut buf).is_some() {
        answered += 1;
    }
    assert_eq!(answered, 10_000);
    assert_eq!(ep.association_count(), 0);
}

#[test]
fn a_forged_cookie_is_dropped_silently() {
    let mut ep = server();
    let peer = "192.0.2.1:9899".parse().unwrap();
    let forged = Chunk::CookieEcho(CookieEcho {
        cookie: vec![0x5a; 150].into(),
    });
    ep.handle_datagram(Time::ZERO, peer, &packet(1234, forged));
    assert_eq!(ep.association_count(), 0);
    assert_eq!(ep.stats().cookies_rejected, 1);
    assert!(ep.poll_transmit(Time::ZERO, &mut Vec::new()).is_none());
}

/// Gets B's INIT ACK for an INIT from A's address, without A.
fn cookie_from(ep: &mut Endpoint, now: Time) -> (u32, Vec<u8>) {
    harness::init_ack_for(ep, now, "192.0.2.1:9899".parse().unwrap())
}

#[test]
fn a_tampered_cookie_fails_its_mac() {
    let mut ep = server();
    let (tag, mut cookie) = cookie_from(&mut ep, Time::ZERO);
    cookie[30] ^= 1;
    let echo = Chunk::CookieEcho(CookieEcho {
        cookie: cookie.into(),
    });
    ep.handle_datagram(
        Time::ZERO,
        "192.0.2.1:9899".parse().unwrap(),
        &packet(tag, echo),
    );
    assert_eq!(ep.association_count(), 0);
    assert_eq!(ep.stats().cookies_rejected, 1);
}

#[test]
fn an_expired_cookie_gets_a_stale_cookie_error_and_no_association() {
    let mut ep = server();
    let (tag, cookie) = cookie_from(&mut ep, Time::ZERO);
    let echo = Chunk::CookieEcho(CookieEcho {
        cookie: cookie.into(),
    });
    let late = Time::from_millis(60_000 + 500);
    ep.handle_datagram(late, "192.0.2.1:9899".parse().unwrap(), &packet(tag, echo));
    assert_eq!(ep.association_count(), 0);
    let mut buf = Vec::new();
    ep.poll_transmit(late, &mut buf).unwrap();
    let reply = Packet::decode(&buf).unwrap();
    assert_eq!(reply.header.verification_tag, 77);
    let Chunk::Error(e) = &reply.chunks[0] else {
        panic!("expected ERROR")
    };
    assert_eq!(
        e.causes,
        vec![ErrorCause::StaleCookie {
            staleness_us: 500_000
        }]
    );
}

#[test]
fn a_valid_cookie_with_the_wrong_tag_is_dropped() {
    let mut ep = server();
    let (tag, cookie) = cookie_from(&mut ep, Time::ZERO);
    let echo = Chunk::CookieEcho(CookieEcho {
        cookie: cookie.into(),
    });
    ep.handle_datagram(
        Time::ZERO,
        "192.0.2.1:9899".parse().unwrap(),
        &packet(tag ^ 1, echo),
    );
    assert_eq!(ep.association_count(), 0);
}

#[test]
fn packets_with_a_wrong_verification_tag_are_dropped() {
    let mut p = Pair::new(ms(10), Config::rfc9260());
    let (_, b) = p.connect(Config::rfc9260());
    let b_tag = p
        .log
        .iter()
        .find(|l| l.seen.has(types::COOKIE_ECHO))
        .map(|l| {
            CommonHeader::decode(&l.seen.bytes)
                .unwrap()
                .verification_tag
        })
        .unwrap();
    let data = |tag| {
        packet(
            tag,
            Chunk::Data(Data {
                flags: DataFlags::UNFRAGMENTED,
                tsn: 0,
                stream_id: 0,
                ssn: 0,
                ppid: 0,
                payload: vec![1u8; 8].into(),
            }),
        )
    };
    let before = p.b.association(b).unwrap().stats().clone();
    let now = p.now;
    p.b.handle_datagram(now, p.a_addr, &data(b_tag ^ 0xffff));
    let after = p.b.association(b).unwrap().stats().clone();
    assert_eq!(after.data_chunks_received, before.data_chunks_received);
    assert_eq!(after.malformed_chunks, before.malformed_chunks + 1);
    // An ABORT with a wrong tag does not end the association either.
    let abort = packet(b_tag ^ 1, Chunk::Abort(Abort::default()));
    p.b.handle_datagram(now, p.a_addr, &abort);
    assert_eq!(p.b.association_count(), 1);
}

#[test]
fn out_of_the_blue_data_is_answered_with_abort_t_bit_and_abort_is_never_answered() {
    let mut ep = server();
    let peer = "192.0.2.1:9899".parse().unwrap();
    let data = Chunk::Data(Data {
        flags: DataFlags::UNFRAGMENTED,
        tsn: 5,
        stream_id: 0,
        ssn: 0,
        ppid: 0,
        payload: vec![1u8; 4].into(),
    });
    ep.handle_datagram(Time::ZERO, peer, &packet(4242, data));
    let mut buf = Vec::new();
    ep.poll_transmit(Time::ZERO, &mut buf).unwrap();
    let reply = Packet::decode(&buf).unwrap();
    assert_eq!(reply.header.verification_tag, 4242);
    assert_eq!(
        reply.chunks,
        vec![Chunk::Abort(Abort {
            reflected_tag: true,
            causes: vec![]
        })]
    );
    ep.handle_datagram(
        Time::ZERO,
        peer,
        &packet(4242, Chunk::Abort(Abort::default())),
    );
    assert!(ep.poll_transmit(Time::ZERO, &mut Vec::new()).is_none());
    assert_eq!(ep.stats().out_of_the_blue, 2);
}

#[test]
fn corrupted_and_malformed_packets_are_counted_and_change_nothing() {
    let mut p = Pair::new(ms(10), Config::rfc9260());
    let (_, b) = p.connect(Config::rfc9260());
    let now = p.now;
    let mut good = p
        .log
        .iter()
        .find(|l| l.seen.dir == Dir::AtoB)
        .unwrap()
        .seen
        .bytes
        .clone();
    good[20] ^= 0xff;
    p.b.handle_datagram(now, p.a_addr, &good);
    p.b.handle_datagram(now, p.a_addr, &[0u8; 7]);
    p.b.handle_datagram(now, p.a_addr, &[0xff; 64]);
    assert_eq!(p.b.stats().bad_checksum, 2);
    assert_eq!(p.b.stats().malformed, 1);
    assert_eq!(p.b.association_count(), 1);
    assert_eq!(
        p.b.association(b).unwrap().state(),
        brisk_proto::State::Established
    );
}

#[test]
fn a_peer_whose_udp_port_changes_keeps_its_association_and_replies_follow_it() {
    // RFC 6951 5.4: the encapsulation port is learned from received packets.
    let mut p = Pair::new(ms(10), Config::rfc9260());
    let (_, b) = p.connect(Config::rfc9260());
    let ootb = p.b.stats().out_of_the_blue; // INIT and COOKIE ECHO
    let moved: std::net::SocketAddr = "10.0.0.1:40000".parse().unwrap();
    p.a_addr = moved;
    p.a_send(brisk_proto::OutgoingMessage::new(0, &b"after the move"[..]));
    p.run_for(ms(500));
    let got = p.b_recv_all();
    assert_eq!(got.len(), 1);
    assert_eq!(p.b.association(b).unwrap().remote(), moved);
    assert_eq!(p.b.association_count(), 1);
    assert_eq!(p.b.stats().out_of_the_blue, ootb);
}

#[test]
fn without_port_learning_a_packet_from_a_new_port_is_out_of_the_blue() {
    // Port learning is RFC 6951's: over another transport (DTLS) a peer's
    // address names one connection, and a packet with the right tag that
    // arrives on another one does not take the association over.
    let mut p = Pair::new(ms(10), Config::rfc9260());
    let (_, b) = p.connect(Config::rfc9260());
    p.b.set_peer_port_learning(false);
    let ootb = p.b.stats().out_of_the_blue;
    let original = p.a_addr;
    p.a_addr = "10.0.0.1:40000".parse().unwrap();
    p.a_send(brisk_proto::OutgoingMessage::new(0, &b"from elsewhere"[..]));
    p.run_for(ms(500));
    assert!(p.b_recv_all().is_empty());
    assert!(p.b.stats().out_of_the_blue > ootb);
    assert_eq!(p.b.association(b).unwrap().remote(), original);
}

#[test]
fn a_packet_from_a_new_port_with_a_wrong_tag_is_out_of_the_blue() {
    let mut p = Pair::new(ms(10), Config::rfc9260());
    let (_, b) = p.connect(Config::rfc9260());
    let (tag, _) = p.tags();
    let ootb = p.b.stats().out_of_the_blue;
    let now = p.now;
    let data = Chunk::Data(Data {
        flags: DataFlags::UNFRAGMENTED,
        tsn: 0,
        stream_id: 0,
        ssn: 0,
        ppid: 0,
        payload: vec![1u8; 4].into(),
    });
    p.b.handle_datagram(
        now,
        "10.0.0.1:40001".parse().unwrap(),
        &packet(tag ^ 1, data),
    );
    assert_eq!(p.b.stats().out_of_the_blue, ootb + 1);
    assert_eq!(p.b.association(b).unwrap().remote(), p.a_addr);
}

// --- Listed addresses (RFC 9260 5.4): a peer's INIT may list addresses it
// does not own. Until a HEARTBEAT ACK confirms one, it is not the peer's.

/// The squatter's own address, and the victim's, which the squatter lists.
const SQUATTER: &str = "192.0.2.1:9899";
const VICTIM: &str = "192.0.2.66:9899";
/// The server, as the victim's endpoint sees it.
const SERVER: &str = "198.51.100.5:9899";

fn sa(s: &str) -> std::net::SocketAddr {
    s.parse().unwrap()
}

/// Everything `ep` has to send at `now`, with its destination.
fn drain(ep: &mut Endpoint, now: Time) -> Vec<(std::net::SocketAddr, Vec<u8>)> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while let Some(t) = ep.poll_transmit(now, &mut buf) {
        out.push((t.destination, std::mem::take(&mut buf)));
    }
    out
}

fn events(ep: &mut Endpoint) -> Vec<(AssocId, Event)> {
    std::iter::from_fn(|| ep.poll_event()).collect()
}

/// What `s` sent, by destination and bytes.
type Sent = Vec<(std::net::SocketAddr, Vec<u8>)>;

/// A raw peer at `from` sets up an association with `s`, its INIT carrying
/// `tag` and listing `listed`: the association, the server's tag, and what
/// the server sent after the COOKIE ECHO (and its timers due at once).
fn associate(s: &mut Endpoint, from: &str, tag: u32, listed: &[&str]) -> (AssocId, u32, Sent) {
    let Chunk::Init(mut i) = init(tag) else {
        unreachable!()
    };
    i.params = listed
        .iter()
        .map(|a| Param::Ipv4Address(a.parse().unwrap()))
        .collect();
    s.handle_datagram(Time::ZERO, sa(from), &packet(0, Chunk::Init(i)));
    let sent = drain(s, Time::ZERO);
    let p = Packet::decode(&sent[0].1).unwrap();
    let Chunk::InitAck(ack) = &p.chunks[0] else {
        panic!("expected INIT ACK")
    };
    let echo = Chunk::CookieEcho(CookieEcho {
        cookie: ack.state_cookie().unwrap().to_vec().into(),
    });
    let before: Vec<AssocId> = s.association_ids().collect();
    s.handle_datagram(Time::ZERO, sa(from), &packet(ack.initiate_tag, echo));
    let id = s
        .association_ids()
        .find(|id| !before.contains(id))
        .expect("a new association");
    // Timers due at once: the first probe of a listed address (5.4).
    s.handle_timeout(Time::ZERO);
    (id, ack.initiate_tag, drain(s, Time::ZERO))
}

/// A server with an association with the squatter, whose INIT (tag 77)
/// listed the victim's address; what the server sent on the way.
fn squatted() -> (Endpoint, AssocId, Sent) {
    let mut s = server();
    let (id, _, sent) = associate(&mut s, SQUATTER, 77, &["192.0.2.66"]);
    (s, id, sent)
}

/// The HEARTBEAT ACK for the first HEARTBEAT in `sent` to `to`.
fn heartbeat_ack(sent: &Sent, to: &str) -> Chunk<'static> {
    let hb = sent
        .iter()
        .filter(|(dst, _)| *dst == sa(to))
        .find_map(
            |(_, bytes)| match &Packet::decode(bytes).unwrap().chunks[0] {
                Chunk::Heartbeat(hb) => Some(hb.info().unwrap().to_vec()),
                _ => None,
            },
        )
        .expect("a heartbeat");
    Chunk::HeartbeatAck(brisk_proto::wire::chunk::HeartbeatAck {
        params: vec![Param::HeartbeatInfo(hb.into())],
    })
}

fn data(tsn: u32) -> Chunk<'static> {
    Chunk::Data(Data {
        flags: DataFlags::UNFRAGMENTED,
        tsn,
        stream_id: 0,
        ssn: 0,
        ppid: 0,
        payload: vec![1u8; 8].into(),
    })
}

fn chunk_types(bytes: &[u8]) -> Vec<u8> {
    Packet::decode(bytes)
        .unwrap()
        .chunks
        .iter()
        .map(Chunk::chunk_type)
        .collect()
}

#[test]
fn the_owner_of_an_address_another_peer_listed_still_gets_its_own_association() {
    let (mut s, squatter, _) = squatted();
    let mut victim = Endpoint::new(
        EndpointConfig {
            accept: false,
            ..EndpointConfig::default()
        },
        [5; 32],
    );
    victim
        .connect(Time::ZERO, sa(SERVER), Config::rfc9260())
        .unwrap();
    let mut to_squatter = Vec::new();
    for _ in 0..4 {
        for (_, bytes) in drain(&mut victim, Time::ZERO) {
            s.handle_datagram(Time::ZERO, sa(VICTIM), &bytes);
        }
        for (to, bytes) in drain(&mut s, Time::ZERO) {
            if to == sa(VICTIM) {
                victim.handle_datagram(Time::ZERO, sa(SERVER), &bytes);
            } else {
                to_squatter.push(chunk_types(&bytes));
            }
        }
    }
    // The victim's INIT is answered at its source (5.1 B), and its COOKIE
    // ECHO makes a new association (5.1.5), not a restart of the squatter's.
    assert!(
        events(&mut victim)
            .iter()
            .any(|(_, e)| matches!(e, Event::Connected)),
        "the victim never connected; the squatter got {to_squatter:?}"
    );
    assert!(to_squatter.is_empty(), "{to_squatter:?}");
    assert_eq!(s.association_count(), 2);
    assert!(
        !events(&mut s)
            .iter()
            .any(|(id, e)| *id == squatter && matches!(e, Event::Restarted))
    );
    let owner = s.association_ids().find(|id| *id != squatter).unwrap();
    assert_eq!(s.association_ref(owner).unwrap().remote(), sa(VICTIM));
    assert_eq!(s.association_ref(squatter).unwrap().remote(), sa(SQUATTER));
}

#[test]
fn an_init_ack_relayed_from_a_squatted_address_never_restarts_the_squatters_association() {
    let (mut s, squatter, _) = squatted();
    let squatter_paths = s.association_ref(squatter).unwrap().paths();
    // The victim's INIT, from the address the squatter listed.
    s.handle_datagram(Time::ZERO, sa(VICTIM), &packet(0, init(88)));
    let sent = drain(&mut s, Time::ZERO);
    let (to, ack) = sent
        .iter()
        .find_map(|(to, bytes)| {
            let p = Packet::decode(bytes).unwrap();
            match &p.chunks[0] {
                Chunk::InitAck(a) => {
                    Some((*to, (a.initiate_tag, a.state_cookie().unwrap().to_vec())))
                }
                _ => None,
            }
        })
        .unwrap();
    // 5.1 B, 5.2.2: the INIT ACK goes to the INIT's source, never to
    // another peer. Were it relayed there, the victim's COOKIE ECHO...
    assert_eq!(to, sa(VICTIM));
    let echo = Chunk::CookieEcho(CookieEcho {
        cookie: ack.1.into(),
    });
    s.handle_datagram(Time::ZERO, sa(VICTIM), &packet(ack.0, echo));
    // ... makes the victim's own association; the squatter's stays as it was.
    assert_eq!(s.association_count(), 2);
    assert!(
        !events(&mut s)
            .iter()
            .any(|(id, e)| *id == squatter && matches!(e, Event::Restarted))
    );
    assert_eq!(s.association_ref(squatter).unwrap().paths(), squatter_paths);
    for (to, bytes) in drain(&mut s, Time::ZERO) {
        let types = chunk_types(&bytes);
        if types.contains(&types::COOKIE_ACK) {
            assert_eq!(to, sa(VICTIM));
        }
        assert_ne!(to, sa(SQUATTER), "{types:?}");
    }
}

#[test]
fn an_init_adding_an_address_to_an_established_association_is_aborted_listing_it() {
    let (mut s, id, _) = squatted();
    events(&mut s);
    let paths = s.association_ref(id).unwrap().paths();
    // The peer's INIT lists an address it already listed, and a new one.
    let Chunk::Init(mut i) = init(99) else {
        unreachable!()
    };
    i.params = vec![
        Param::Ipv4Address("192.0.2.66".parse().unwrap()),
        Param::Ipv4Address("192.0.2.77".parse().unwrap()),
    ];
    s.handle_datagram(Time::ZERO, sa(SQUATTER), &packet(0, Chunk::Init(i)));
    let sent = drain(&mut s, Time::ZERO);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].0, sa(SQUATTER));
    let reply = Packet::decode(&sent[0].1).unwrap();
    // RFC 9260 5.2.2: ABORT under the INIT's Initiate Tag, with "Restart of
    // an Association with New Addresses" listing the new address's TLV.
    assert_eq!(reply.header.verification_tag, 99);
    assert_eq!(
        reply.chunks,
        vec![Chunk::Abort(Abort {
            reflected_tag: false,
            causes: vec![ErrorCause::RestartWithNewAddresses(
                vec![0, 5, 0, 8, 192, 0, 2, 77].into()
            )],
        })]
    );
    // The association is as it was.
    let a = s.association_ref(id).unwrap();
    assert_eq!(a.state(), brisk_proto::State::Established);
    assert_eq!(a.paths(), paths);
    assert!(events(&mut s).is_empty());
    // Without a new address, the INIT is answered as 5.2.2 says.
    let Chunk::Init(mut i) = init(100) else {
        unreachable!()
    };
    i.params = vec![Param::Ipv4Address("192.0.2.66".parse().unwrap())];
    s.handle_datagram(Time::ZERO, sa(SQUATTER), &packet(0, Chunk::Init(i)));
    let sent = drain(&mut s, Time::ZERO);
    assert!(matches!(
        Packet::decode(&sent[0].1).unwrap().chunks[0],
        Chunk::InitAck(_)
    ));
}
#[test]
fn a_squatted_address_gets_only_heartbeats_and_only_until_it_is_given_up() {
    let (mut s, squatter, sent) = squatted();
    // Data queued for the squatter goes to its confirmed address only.
    s.association(squatter)
        .unwrap()
        .send(
            Time::ZERO,
            brisk_proto::OutgoingMessage::new(0, &b"for the squatter"[..]),
        )
        .unwrap();
    let mut to_victim: Vec<Vec<u8>> = sent
        .iter()
        .filter(|(to, _)| *to == sa(VICTIM))
        .map(|(_, b)| chunk_types(b))
        .collect();
    while let Some(now) = s.poll_timeout() {
        if now > Time::ZERO + std::time::Duration::from_secs(600) {
            break;
        }
        s.handle_timeout(now);
        for (to, bytes) in drain(&mut s, now) {
            if to == sa(VICTIM) {
                to_victim.push(chunk_types(&bytes));
            }
        }
    }
    // 5.4: nothing but HEARTBEAT to an unconfirmed address; and after
    // Path.Max.Retrans + 1 unanswered probes it is no longer probed.
    assert!(
        to_victim.iter().all(|t| t == &vec![types::HEARTBEAT]),
        "{to_victim:?}"
    );
    let pmr = Config::rfc9260().path_max_retrans as usize;
    assert!(
        !to_victim.is_empty() && to_victim.len() <= pmr + 1,
        "{} probes",
        to_victim.len()
    );
}

#[test]
fn a_listed_address_finds_its_association_once_a_heartbeat_ack_confirms_it() {
    // A peer with two addresses: it lists its second one, which answers.
    let mut s = server();
    let (id, tag, sent) = associate(&mut s, SQUATTER, 77, &["192.0.2.66"]);
    // Unconfirmed, an INIT from it is the endpoint's to answer (stateless).
    let stateless = s.stats().init_acks_sent;
    s.handle_datagram(Time::ZERO, sa(VICTIM), &packet(0, init(78)));
    assert_eq!(s.stats().init_acks_sent, stateless + 1);
    drain(&mut s, Time::ZERO);
    // RFC 9260 5.4: the HEARTBEAT ACK with our nonce confirms it...
    s.handle_datagram(
        Time::ZERO,
        sa(VICTIM),
        &packet(tag, heartbeat_ack(&sent, VICTIM)),
    );
    let paths = s.association_ref(id).unwrap().paths();
    assert!(paths.iter().all(|p| p.confirmed), "{paths:?}");
    drain(&mut s, Time::ZERO);
    // ... and from then on its packets find the association: an INIT is
    // the association's (5.2.2), answered at its source.
    s.handle_datagram(Time::ZERO, sa(VICTIM), &packet(0, init(79)));
    assert_eq!(s.stats().init_acks_sent, stateless + 1);
    let sent = drain(&mut s, Time::ZERO);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].0, sa(VICTIM));
    assert_eq!(chunk_types(&sent[0].1), vec![types::INIT_ACK]);
}

#[test]
fn confirming_an_address_that_names_another_association_keeps_that_ones_entry() {
    let mut s = server();
    // The owner of the address associates first.
    let (owner, owner_tag, _) = associate(&mut s, VICTIM, 55, &[]);
    // Another peer lists it, and its probe's nonce comes back (an on-path
    // accomplice): the address is confirmed for that association too.
    let (other, other_tag, sent) = associate(&mut s, SQUATTER, 77, &["192.0.2.66"]);
    s.handle_datagram(
        Time::ZERO,
        sa(SQUATTER),
        &packet(other_tag, heartbeat_ack(&sent, VICTIM)),
    );
    assert!(s.association_ref(other).unwrap().paths()[1].confirmed);
    // Packets from the address still belong to its owner's association.
    s.handle_datagram(Time::ZERO, sa(VICTIM), &packet(owner_tag, data(1)));
    let owner_stats = s.association_ref(owner).unwrap().stats();
    assert_eq!(owner_stats.data_chunks_received, 1);
    assert_eq!(
        s.association_ref(other)
            .unwrap()
            .stats()
            .data_chunks_received,
        0
    );
}
