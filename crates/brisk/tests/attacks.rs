//! Attacks over real UDP on loopback: a `brisk::Endpoint` server, often a
//! legitimate peer, and an attacker that sends hand-built SCTP packets from a
//! plain UDP socket. Each test asserts the secure behaviour through the
//! association's `Stats`, the endpoint's `EndpointStats` and
//! `stalled_wakeups`, never through timing or RSS.
//!
//! The attacker that must know an association's tags and TSNs is the peer
//! itself: it does the four-way handshake by hand (`attack_kit::Peer`).

mod attack_kit;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use attack_kit::*;
use brisk::{Config, Error, SendOptions};
use brisk_proto::rx::window::{self, NEXT_TSN_ALLOWANCE};
use brisk_proto::wire::Chunk;
use brisk_proto::wire::chunk::{DataFlags, ShutdownComplete};
use rand::RngCore;
use tokio::time::{Instant, sleep};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

// ---------------------------------------------------------------------------
// 1. Verification-tag bypass behind a COOKIE ECHO

/// The finding's packet: the peer's ports, verification tag 0xdeadbeef, a
/// garbage 4-byte COOKIE ECHO (`0a000008 41414141`) and then an ABORT
/// (`06000004`). RFC 9260 8.5.1 D exempts only a *valid* COOKIE ECHO from the
/// tag check; the ABORT behind a garbage one must not end the association.
#[tokio::test]
async fn a_garbage_cookie_echo_with_a_wrong_tag_cannot_carry_an_abort() {
    let server = server(fast(), 1).await;
    let (mut peer, assoc) = peer_and_assoc(&server, PeerParams::default()).await;
    let before = live_stats(&assoc, "after the handshake");

    let forged = raw_packet(
        PEER_PORT,
        SERVER_PORT,
        0xdead_beef,
        &hex("0a000008 41414141 06000004"),
    );
    peer.att.send(&forged).await;
    await_assoc_packets(&assoc, before.packets_received + 1).await;
    live_stats(
        &assoc,
        "an ABORT behind a garbage COOKIE ECHO with tag 0xdeadbeef ended the association",
    );

    let msg = peer.message(0, b"still here".to_vec());
    peer.send(&[msg]).await;
    let got = bounded("recv after the forged ABORT", STEP, assoc.recv())
        .await
        .expect("the association is still established");
    assert_eq!(&got.payload[..], b"still here");
}

/// The same bypass used to inject DATA: it must be discarded, and the genuine
/// DATA with that TSN delivered afterwards.
#[tokio::test]
async fn a_garbage_cookie_echo_with_a_wrong_tag_cannot_carry_data() {
    let server = server(fast(), 2).await;
    let (mut peer, assoc) = peer_and_assoc(&server, PeerParams::default()).await;
    let before = live_stats(&assoc, "after the handshake");

    let forged = data_chunk(
        peer.next_tsn,
        0,
        0,
        DataFlags::UNFRAGMENTED,
        b"forged".to_vec(),
    );
    peer.send_tagged(0xdead_beef, &[cookie_echo_chunk(b"AAAA"), forged])
        .await;
    await_assoc_packets(&assoc, before.packets_received + 1).await;
    let after = live_stats(&assoc, "after the forged DATA");
    assert_eq!(
        after.data_chunks_received, before.data_chunks_received,
        "DATA behind a garbage COOKIE ECHO with a wrong tag was accepted"
    );
    let leaked = assoc.try_recv().map(|m| m.payload);
    assert!(
        leaked.is_none(),
        "DATA behind a garbage COOKIE ECHO with a wrong tag was delivered: {leaked:?}"
    );

    let genuine = peer.message(0, b"genuine".to_vec());
    peer.send(&[genuine]).await;
    let got = bounded("recv of the genuine DATA", STEP, assoc.recv())
        .await
        .expect("the association is still established");
    assert_eq!(&got.payload[..], b"genuine");
}

// ---------------------------------------------------------------------------
// 2. Reassembly bounded by the receive window

const SMALL_RWND: u32 = 64 * 1024;

/// Sends `total` middle fragments of `size` bytes (TSNs base+1.. ascending,
/// `per_packet` to a packet, `packets_per_batch` packets between checks)
/// after one first fragment at base+65000; base itself never comes. Checks
/// after each batch that the server holds at most its buffer plus
/// `NEXT_TSN_ALLOWANCE`, and that every SACK advertises at most the buffer.
async fn flood_incomplete_fragments(
    seed: u8,
    size: usize,
    total: u32,
    per_packet: u32,
    packets_per_batch: u32,
) {
    let cfg = Config {
        receive_buffer: SMALL_RWND,
        // Room for the whole flood as one message, so that only the window
        // (not the message size limit) can stop it.
        max_message_size: 4 << 20,
        ..fast()
    };
    let server = server(cfg, seed).await;
    let (peer, assoc) = peer_and_assoc(&server, PeerParams::default()).await;
    let bound = SMALL_RWND as usize + NEXT_TSN_ALLOWANCE;
    let base = peer.next_tsn;
    let mut packets = live_stats(&assoc, "after the handshake").packets_received;

    // A message that is never completed, far above the cumulative point.
    peer.send(&[data_chunk(
        base.wrapping_add(65_000),
        0,
        1,
        FIRST,
        vec![0x55; size],
    )])
    .await;
    packets += 1;
    await_assoc_packets(&assoc, packets).await;

    let mut sent = 1u64;
    let mut max_held = 0usize;
    let mut sack_windows = Vec::new();
    let mut next = 1u32;
    let packets_total = total / per_packet;
    let mut p = 0;
    while p < packets_total {
        for _ in 0..packets_per_batch.min(packets_total - p) {
            let chunks: Vec<Chunk<'static>> = (0..per_packet)
                .map(|i| data_chunk(base.wrapping_add(next + i), 0, 0, MIDDLE, vec![0xaa; size]))
                .collect();
            next += per_packet;
            sent += u64::from(per_packet);
            peer.send(&chunks).await;
            packets += 1;
            p += 1;
        }
        await_assoc_packets(&assoc, packets).await;
        let s = live_stats(&assoc, "during the fragment flood");
        max_held = max_held.max(s.receive_held);
        assert!(
            s.receive_held <= bound,
            "after {sent} chunks the server holds {} bytes, more than its buffer {SMALL_RWND} + NEXT_TSN_ALLOWANCE = {bound}",
            s.receive_held
        );
        for d in peer.drain() {
            sack_windows.extend(d.sacks().iter().map(|s| s.a_rwnd));
        }
    }
    sleep(ms(50)).await;
    for d in peer.drain() {
        sack_windows.extend(d.sacks().iter().map(|s| s.a_rwnd));
    }

    let s = live_stats(&assoc, "after the fragment flood");
    assert!(
        !sack_windows.is_empty(),
        "the server sent no SACK during the flood"
    );
    let widest = sack_windows.iter().copied().max().unwrap_or(0);
    assert!(
        widest <= SMALL_RWND,
        "the server advertised a_rwnd {widest}, more than its buffer {SMALL_RWND}"
    );
    assert_eq!(
        s.data_chunks_received + s.data_dropped_window_full + s.duplicate_tsns_received,
        sent,
        "every DATA chunk is either taken or counted as dropped: {s:?}"
    );
    assert!(
        s.data_dropped_window_full > 0,
        "{sent} chunks of {size} bytes into a {SMALL_RWND}-byte window, yet none counted as dropped"
    );
    // Nothing was delivered: what was taken and not reneged on is still held.
    let held_chunks = s.data_chunks_received - s.data_reneged;
    let most = (bound / window::charge(size)) as u64;
    assert!(
        held_chunks <= most,
        "{held_chunks} fragments of {size} bytes held; the window allows at most {most}"
    );
    assert!(s.receive_held <= bound && max_held <= bound);
}

#[tokio::test]
async fn reassembly_of_1000_byte_fragments_is_bounded_by_the_receive_window() {
    flood_incomplete_fragments(3, 1000, 3000, 1, 50).await;
}

/// One-byte chunks: the per-chunk charge must keep the bookkeeping bounded too.
#[tokio::test]
async fn reassembly_of_1_byte_fragments_is_bounded_by_the_receive_window() {
    flood_incomplete_fragments(4, 1, 20_000, 200, 10).await;
}

// ---------------------------------------------------------------------------
// 3. A cookie is bound to the address it was issued to

#[tokio::test]
async fn a_cookie_only_establishes_from_the_address_it_was_issued_to() {
    let server = server(fast(), 5).await;
    let a = Attacker::bind(server.local_addr(), PEER_PORT).await;
    let tag = rand::random::<u32>() | 1;
    let info = a.init(tag, 1000, 1 << 20, 16, 16).await;
    let echo = packet(
        PEER_PORT,
        SERVER_PORT,
        info.server_tag,
        &[cookie_echo_chunk(&info.cookie)],
    );

    let before = server.stats();
    let mut others = Vec::new();
    for _ in 0..50 {
        let o = Attacker::bind(server.local_addr(), PEER_PORT).await;
        o.send(&echo).await;
        others.push(o);
    }
    await_endpoint_packets(&server, before.packets_received + 50).await;
    let s = server.stats();
    assert_eq!(
        s.cookies_accepted - before.cookies_accepted,
        0,
        "a cookie replayed from 50 other UDP ports established associations"
    );
    assert_eq!(
        s.cookies_rejected - before.cookies_rejected,
        50,
        "each replay from another address is counted as rejected"
    );
    let stolen = accept_within(&server, ms(300)).await;
    assert!(
        stolen.is_none(),
        "the server accepted an association from {:?}, not the cookie's address {}",
        stolen.map(|x| x.remote()),
        a.local_addr()
    );
    for o in &others {
        let acks = o
            .drain()
            .iter()
            .filter(|d| d.any(|c| matches!(c, Chunk::CookieAck(_))))
            .count();
        assert_eq!(acks, 0, "{} got a COOKIE ACK", o.local_addr());
    }

    // The address the cookie was issued to establishes, once.
    a.send(&echo).await;
    let (_, acked) = a
        .collect_until(STEP, |d| d.any(|c| matches!(c, Chunk::CookieAck(_))))
        .await;
    assert!(acked, "the cookie's own address got no COOKIE ACK");
    assert_eq!(server.stats().cookies_accepted, before.cookies_accepted + 1);
    let assoc = accept_within(&server, STEP)
        .await
        .expect("the server accepts the cookie's own address");
    assert_eq!(assoc.remote(), a.local_addr());

    // A replay from the same address: RFC 9260 5.2.4 action D, COOKIE ACK
    // again and no second association.
    a.send(&echo).await;
    let (_, acked) = a
        .collect_until(STEP, |d| d.any(|c| matches!(c, Chunk::CookieAck(_))))
        .await;
    assert!(acked, "a replayed COOKIE ECHO gets a COOKIE ACK (5.2.4 D)");
    assert_eq!(server.stats().cookies_accepted, before.cookies_accepted + 1);
    assert!(accept_within(&server, ms(300)).await.is_none());
    live_stats(&assoc, "after the replay from the same address");
}

// ---------------------------------------------------------------------------
// 4. A peer that acknowledges only with gap blocks

#[tokio::test]
async fn a_peer_that_acks_only_by_gap_blocks_blocks_the_sender_at_its_buffer() {
    const SEND_BUF: usize = 256 * 1024;
    const MSG: usize = 1000;
    let cfg = Config {
        send_buffer: SEND_BUF,
        max_message_size: 64 * 1024,
        ..Config::rfc9260()
    };
    let server = server(cfg, 6).await;
    let (peer, assoc) = peer_and_assoc(
        &server,
        PeerParams {
            a_rwnd: 1 << 26,
            ..PeerParams::default()
        },
    )
    .await;
    // The most messages the buffer admits when none is cumulatively acked.
    let cap = (SEND_BUF / brisk_proto::tx::held(MSG, 1)) as u32;

    let queued = Arc::new(AtomicU32::new(0));
    let sender = {
        let assoc = assoc.clone();
        let queued = queued.clone();
        tokio::spawn(async move {
            for i in 0..2000u32 {
                if assoc
                    .send(0, vec![i as u8; MSG], SendOptions::default())
                    .await
                    .is_err()
                {
                    return;
                }
                queued.fetch_add(1, Ordering::SeqCst);
            }
        })
    };

    let cum = peer.server_cum_none();
    let mut received = BTreeSet::new();
    let mut max_held = 0usize;
    let mut last = (0u32, Instant::now());
    let end = Instant::now() + Duration::from_secs(6);
    while Instant::now() < end {
        if let Some(d) = peer.recv(ms(20)).await {
            let data = d.data();
            if !data.is_empty() {
                received.extend(data.iter().map(|(tsn, _)| *tsn));
                peer.send(&[sack_chunk(cum, 1 << 26, &gap_blocks(cum, &received))])
                    .await;
            }
        }
        if let Some(s) = assoc.stats() {
            max_held = max_held.max(s.send_held);
            assert!(
                s.send_held <= SEND_BUF,
                "the server holds {} bytes for sending, more than its send buffer {SEND_BUF}",
                s.send_held
            );
        }
        let n = queued.load(Ordering::SeqCst);
        if n != last.0 {
            last = (n, Instant::now());
        } else if n + 1 >= cap && last.1.elapsed() > ms(600) {
            break;
        }
        if n > cap {
            break;
        }
    }
    let n = queued.load(Ordering::SeqCst);
    assert!(!received.is_empty(), "the server sent no DATA");
    assert!(
        n <= cap,
        "{n} messages of {MSG} bytes queued with none cumulatively acked; the {SEND_BUF}-byte buffer admits {cap}"
    );
    assert!(max_held <= SEND_BUF);
    assert!(
        !sender.is_finished(),
        "the sender finished 2000 messages with nothing cumulatively acked"
    );
    live_stats(&assoc, "the gap-only peer");

    // One more send waits for room (while the peer keeps gap-acking) instead
    // of queueing without bound.
    let extra = async {
        tokio::time::timeout(
            ms(500),
            assoc.send(1, vec![0u8; MSG], SendOptions::default()),
        )
        .await
    };
    let keep_acking = async {
        let end = Instant::now() + ms(600);
        while Instant::now() < end {
            if let Some(d) = peer.recv(ms(20)).await {
                let data = d.data();
                if !data.is_empty() {
                    received.extend(data.iter().map(|(tsn, _)| *tsn));
                    peer.send(&[sack_chunk(cum, 1 << 26, &gap_blocks(cum, &received))])
                        .await;
                }
            }
        }
    };
    let (extra, ()) = tokio::join!(extra, keep_acking);
    assert!(
        extra.is_err(),
        "send() resolved ({extra:?}) with the send buffer full of gap-acked data"
    );
    let s = live_stats(&assoc, "the gap-only peer");
    assert!(s.send_held <= SEND_BUF, "send_held {}", s.send_held);
    sender.abort();
}

// ---------------------------------------------------------------------------
// 5. Out-of-the-blue packets

#[tokio::test]
async fn out_of_the_blue_packets_get_at_most_an_abort_and_aborts_get_nothing() {
    let server = server(fast(), 7).await;
    let x = Attacker::bind(server.local_addr(), 40_000).await;
    let y = Attacker::bind(server.local_addr(), 40_001).await;
    let before = server.stats();

    let mut tags = BTreeSet::new();
    let mut responses = Vec::new();
    let mut sent = 0u64;
    for _ in 0..10 {
        for i in 0..100 {
            let tag = loop {
                let t = rand::random::<u32>();
                if t != 0 && !tags.contains(&t) {
                    break t;
                }
            };
            tags.insert(tag);
            let chunk = match i % 3 {
                0 => data_chunk(
                    rand::random(),
                    0,
                    0,
                    DataFlags::UNFRAGMENTED,
                    b"ootb".to_vec(),
                ),
                1 => sack_chunk(rand::random(), 65_536, &[]),
                _ => heartbeat_chunk(b"ootb heartbeat"),
            };
            x.send_chunks(tag, &[chunk]).await;
            sent += 1;
        }
        await_endpoint_packets(&server, before.packets_received + sent).await;
        responses.extend(x.collect(ms(50), ms(1000)).await);
    }
    // RFC 9260 8.4 rule 2: an out-of-the-blue packet with an ABORT anywhere in
    // it is discarded silently.
    for i in 0..100u32 {
        let tag = rand::random::<u32>() | 1;
        let abort = Chunk::Abort(brisk_proto::wire::chunk::Abort {
            reflected_tag: i % 2 == 0,
            causes: vec![],
        });
        let chunks = match i % 3 {
            0 => vec![abort],
            1 => vec![
                data_chunk(i, 0, 0, DataFlags::UNFRAGMENTED, b"x".to_vec()),
                abort,
            ],
            _ => vec![heartbeat_chunk(b"hb"), abort],
        };
        y.send_chunks(tag, &chunks).await;
        sent += 1;
    }
    await_endpoint_packets(&server, before.packets_received + sent).await;
    responses.extend(x.collect(ms(100), ms(1000)).await);
    let to_aborts = y.collect(ms(200), ms(500)).await;

    let s = server.stats();
    assert_eq!(
        s.out_of_the_blue - before.out_of_the_blue,
        1100,
        "every packet is counted as out of the blue"
    );
    assert!(
        to_aborts.is_empty(),
        "packets carrying an ABORT were answered: {:?}",
        to_aborts.iter().map(Datagram::names).collect::<Vec<_>>()
    );
    assert!(responses.len() <= 1000);
    let mut answered = BTreeMap::new();
    for d in &responses {
        let p = d.packet();
        assert!(
            matches!(
                p.chunks.as_slice(),
                [Chunk::Abort(brisk_proto::wire::chunk::Abort {
                    reflected_tag: true,
                    ..
                })]
            ),
            "an out-of-the-blue packet was answered with {:?}, not one ABORT with the T bit",
            d.names()
        );
        let tag = p.header.verification_tag;
        assert!(
            tags.contains(&tag),
            "the ABORT reflects tag {tag:#x}, which we never sent"
        );
        *answered.entry(tag).or_insert(0u32) += 1;
    }
    assert!(
        answered.values().all(|&n| n == 1),
        "a packet was answered more than once"
    );
    assert_eq!(
        s.aborts_sent - before.aborts_sent,
        responses.len() as u64,
        "aborts_sent counts the ABORTs that went out"
    );
}

// ---------------------------------------------------------------------------
// 6. A SACK is due on entering SHUTDOWN-RECEIVED

#[tokio::test]
async fn data_before_shutdown_is_sacked_and_the_shutdown_completes() {
    let server = server(fast(), 8).await;
    let (mut peer, assoc) = peer_and_assoc(&server, PeerParams::default()).await;
    let msg = peer.message(0, b"last words".to_vec());
    let tsn = peer.next_tsn.wrapping_sub(1);
    peer.send(&[msg]).await;
    peer.send(&[shutdown_chunk(peer.server_cum_none())]).await;

    let (mut got, shutdown_acked) = peer
        .collect_until(Duration::from_secs(2), |d| {
            d.any(|c| matches!(c, Chunk::ShutdownAck(_)))
        })
        .await;
    got.extend(peer.collect(ms(300), ms(600)).await);
    let sacked = got
        .iter()
        .flat_map(Datagram::sacks)
        .any(|s| serial_ge(s.cum_tsn_ack, tsn));
    assert!(
        sacked,
        "the DATA (TSN {tsn}) sent before SHUTDOWN was never acknowledged; the server sent {:?}",
        got.iter().map(Datagram::names).collect::<Vec<_>>()
    );
    assert!(shutdown_acked, "no SHUTDOWN ACK");
    let m = bounded("recv of the last message", STEP, assoc.recv())
        .await
        .expect("the message sent before SHUTDOWN is delivered");
    assert_eq!(&m.payload[..], b"last words");
    assert_eq!(
        server.stalled_wakeups(),
        0,
        "the driver woke on a past deadline with nothing to do in SHUTDOWN-RECEIVED/ACK-SENT"
    );

    peer.send(&[Chunk::ShutdownComplete(ShutdownComplete {
        reflected_tag: false,
    })])
    .await;
    let end = bounded("recv after SHUTDOWN COMPLETE", STEP, assoc.recv()).await;
    assert!(
        matches!(&end, Err(Error::Closed(_))),
        "the association should have closed gracefully: {end:?}"
    );
    sleep(ms(200)).await;
    assert_eq!(
        server.stalled_wakeups(),
        0,
        "stalled wake-ups after the shutdown"
    );
}

// ---------------------------------------------------------------------------
// 7. DATA on an invalid stream

#[tokio::test]
async fn data_on_an_invalid_stream_is_acked_and_errors_are_rate_limited() {
    let server = server(fast(), 9).await;
    let (mut peer, assoc) = peer_and_assoc(&server, PeerParams::default()).await;
    let before = live_stats(&assoc, "after the handshake");
    const PACKETS: usize = 3;
    for _ in 0..PACKETS {
        let chunks: Vec<Chunk<'static>> = (0..100u16)
            .map(|ssn| {
                let tsn = peer.next_tsn;
                peer.next_tsn = tsn.wrapping_add(1);
                // The server accepts 16 inbound streams: 100 does not exist.
                data_chunk(tsn, 100, ssn, DataFlags::UNFRAGMENTED, b"bad!".to_vec())
            })
            .collect();
        peer.send(&chunks).await;
    }
    let last = peer.next_tsn.wrapping_sub(1);
    await_assoc_packets(&assoc, before.packets_received + PACKETS as u64).await;

    let (mut got, all_acked) = peer
        .collect_until(Duration::from_secs(2), |d| {
            d.sacks().iter().any(|s| s.cum_tsn_ack == last)
        })
        .await;
    got.extend(peer.collect(ms(200), ms(500)).await);
    assert!(
        all_acked,
        "no SACK with cumulative TSN ack {last} covering the 300 chunks"
    );
    let error_chunks: usize = got
        .iter()
        .map(|d| d.count(|c| invalid_stream_causes(c) > 0))
        .sum();
    let causes: usize = got
        .iter()
        .flat_map(Datagram::chunks)
        .map(|c| invalid_stream_causes(&c))
        .sum();
    let control_packets = got
        .iter()
        .filter(|d| d.any(|c| !matches!(c, Chunk::Sack(_) | Chunk::Data(_))))
        .count();
    assert!(
        error_chunks <= PACKETS,
        "{error_chunks} ERROR chunks (Invalid Stream Identifier) for {PACKETS} packets received: at most one per packet"
    );
    assert!(
        causes < 300,
        "{causes} Invalid Stream Identifier causes for 300 chunks: not rate-limited"
    );
    assert!(
        control_packets <= PACKETS,
        "{control_packets} packets of control chunks in answer to {PACKETS} packets (RFC 9260 Security Considerations: at most one each)"
    );
    assert!(assoc.try_recv().is_none());
    let s = live_stats(&assoc, "after DATA on an invalid stream");
    assert_eq!(s.data_chunks_received - before.data_chunks_received, 300);
}

// ---------------------------------------------------------------------------
// 8. INIT flood

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_init_flood_creates_no_state_and_a_legitimate_client_still_connects() {
    const INITS: u32 = 100_000;
    let server = server(fast(), 10).await;
    let addr = server.local_addr();
    let flood = tokio::spawn(async move {
        let socks: Vec<std::net::UdpSocket> = (0..64)
            .map(|_| {
                let s = std::net::UdpSocket::bind(any_loopback()).expect("flood socket");
                s.set_nonblocking(true).expect("non-blocking");
                s
            })
            .collect();
        let end = Instant::now() + Duration::from_secs(20);
        let mut sent = 0u32;
        'flood: for round in 0..=(INITS / 64) {
            for s in &socks {
                if sent == INITS {
                    break 'flood;
                }
                let pkt = packet(
                    rand::random::<u16>() | 1,
                    SERVER_PORT,
                    0,
                    &[init_chunk(
                        rand::random::<u32>() | 1,
                        rand::random(),
                        65_536,
                        16,
                        16,
                    )],
                );
                // A full socket buffer loses the INIT: a flood does not care.
                let _ = s.send_to(&pkt, addr);
                sent += 1;
            }
            if round % 16 == 0 {
                tokio::task::yield_now().await;
            }
            if Instant::now() > end {
                break;
            }
        }
        sent
    });

    let flooding = eventually(STEP, || server.stats().inits_received >= 1000).await;
    assert!(flooding, "the flood did not reach the server");
    let client = client(81).await;
    let client_cfg = Config {
        rto_initial: ms(200),
        rto_min: ms(200),
        rto_max: Duration::from_secs(1),
        max_init_retransmits: 30,
        ..Config::rfc9260()
    };
    let legit = bounded(
        "a legitimate connect under an INIT flood",
        Duration::from_secs(30),
        client.connect(addr, client_cfg),
    )
    .await
    .expect("the legitimate client connects during the flood");
    let sent = bounded("the flood", Duration::from_secs(30), flood)
        .await
        .expect("flood task");
    assert_eq!(sent, INITS);
    let accepted = accept_within(&server, STEP)
        .await
        .expect("the server accepts the legitimate client");
    assert_eq!(accepted.remote(), client.local_addr());

    // Let the server finish what reached it.
    sleep(ms(500)).await;
    let s = server.stats();
    assert!(s.inits_received >= 1000, "{s:?}");
    assert!(s.init_acks_sent <= s.inits_received, "{s:?}");
    assert_eq!(
        s.cookies_accepted, 1,
        "only the legitimate client holds an association: {s:?}"
    );
    assert!(
        accept_within(&server, ms(300)).await.is_none(),
        "an INIT created an association"
    );
    legit
        .send(0, &b"through the flood"[..], SendOptions::default())
        .await
        .expect("send");
    let m = bounded("recv after the flood", STEP, accepted.recv())
        .await
        .expect("recv");
    assert_eq!(&m.payload[..], b"through the flood");
}

// ---------------------------------------------------------------------------
// 9. Forged, bit-flipped, expired and replayed cookies

#[tokio::test]
async fn forged_and_bit_flipped_cookies_are_rejected_silently() {
    let server = server(fast(), 11).await;
    let a = Attacker::bind(server.local_addr(), PEER_PORT).await;
    let tag = rand::random::<u32>() | 1;
    let info = a.init(tag, 1, 1 << 20, 16, 16).await;
    let len = info.cookie.len();
    let before = server.stats();

    let mut bad = Vec::new();
    for _ in 0..3 {
        let mut c = vec![0u8; len];
        rand::rng().fill_bytes(&mut c);
        bad.push(c);
    }
    for pos in [0, 1, 2, 19, 20, 30, len / 2, len - 33, len - 32, len - 1] {
        let mut c = info.cookie.clone();
        c[pos] ^= 1 << (pos % 8);
        bad.push(c);
    }
    for c in &bad {
        a.send_chunks(info.server_tag, &[cookie_echo_chunk(c)])
            .await;
    }
    let n = bad.len() as u64;
    await_endpoint_packets(&server, before.packets_received + n).await;
    let responses = a.collect(ms(200), ms(500)).await;
    let s = server.stats();
    assert_eq!(
        s.cookies_rejected - before.cookies_rejected,
        n,
        "every forged or bit-flipped cookie is counted as rejected"
    );
    assert_eq!(
        s.cookies_accepted, before.cookies_accepted,
        "a bad cookie was accepted"
    );
    assert_eq!(s.stale_cookies, before.stale_cookies);
    assert!(
        responses.is_empty(),
        "bad cookies are dropped silently, yet the server answered {:?}",
        responses.iter().map(Datagram::names).collect::<Vec<_>>()
    );
    assert!(accept_within(&server, ms(300)).await.is_none());

    // The genuine cookie still works: the rejections were for the damage.
    a.send_chunks(info.server_tag, &[cookie_echo_chunk(&info.cookie)])
        .await;
    let (_, acked) = a
        .collect_until(STEP, |d| d.any(|c| matches!(c, Chunk::CookieAck(_))))
        .await;
    assert!(acked, "the genuine cookie got no COOKIE ACK");
    assert_eq!(server.stats().cookies_accepted, before.cookies_accepted + 1);
}

#[tokio::test]
async fn an_expired_cookie_gets_a_stale_cookie_error_and_no_association() {
    let cfg = Config {
        valid_cookie_life: ms(200),
        ..fast()
    };
    let server = server(cfg, 12).await;
    let a = Attacker::bind(server.local_addr(), PEER_PORT).await;
    let tag = rand::random::<u32>() | 1;
    let info = a.init(tag, 1, 1 << 20, 16, 16).await;
    sleep(ms(400)).await;
    let before = server.stats();
    a.send_chunks(info.server_tag, &[cookie_echo_chunk(&info.cookie)])
        .await;
    let (got, stale) = a
        .collect_until(STEP, |d| d.any(is_stale_cookie_error))
        .await;
    assert!(
        stale,
        "no Stale Cookie ERROR for an expired cookie; got {:?}",
        got.iter().map(Datagram::names).collect::<Vec<_>>()
    );
    let error = got.last().expect("the ERROR");
    assert_eq!(
        error.vtag(),
        tag,
        "the Stale Cookie ERROR carries the tag of the INIT it answers"
    );
    assert!(
        !got.iter()
            .any(|d| d.any(|c| matches!(c, Chunk::CookieAck(_)))),
        "an expired cookie was acknowledged"
    );
    let s = server.stats();
    assert_eq!(s.stale_cookies - before.stale_cookies, 1);
    assert_eq!(s.cookies_accepted, before.cookies_accepted);
    assert!(accept_within(&server, ms(300)).await.is_none());
}

// ---------------------------------------------------------------------------
// 10. Wrong verification tags

#[tokio::test]
async fn chunks_with_a_wrong_verification_tag_are_discarded() {
    let server = server(Config::rfc9260(), 13).await;
    let (mut peer, assoc) = peer_and_assoc(&server, PeerParams::default()).await;
    // The server has a message outstanding, so a forged SACK could ack it.
    assoc
        .send(0, &b"from the server"[..], SendOptions::default())
        .await
        .expect("send");
    let (got, ok) = peer.collect_until(STEP, |d| !d.data().is_empty()).await;
    assert!(ok, "the server's DATA did not arrive");
    let server_tsn = got.last().expect("DATA").data()[0].0;
    let before = live_stats(&assoc, "before the wrong tags");

    let wrong = peer.server_tag ^ 0x5a5a_5a5a;
    let forged_data = data_chunk(
        peer.next_tsn,
        0,
        0,
        DataFlags {
            immediate: true,
            ..DataFlags::UNFRAGMENTED
        },
        b"forged".to_vec(),
    );
    peer.send_tagged(wrong, &[forged_data]).await;
    peer.send_tagged(wrong, &[sack_chunk(server_tsn, 1 << 20, &[])])
        .await;
    peer.send_tagged(wrong, &[heartbeat_chunk(b"wrong tag")])
        .await;
    peer.send_tagged(wrong, &[shutdown_chunk(server_tsn)]).await;
    await_assoc_packets(&assoc, before.packets_received + 4).await;
    let responses = peer.collect(ms(200), ms(400)).await;

    let s = live_stats(&assoc, "packets with a wrong tag ended the association");
    assert_eq!(
        s.malformed_chunks - before.malformed_chunks,
        4,
        "each wrong-tag packet is counted"
    );
    assert_eq!(s.data_chunks_received, before.data_chunks_received);
    assert_eq!(s.sacks_received, before.sacks_received);
    assert_eq!(s.messages_acked, before.messages_acked);
    assert!(assoc.try_recv().is_none(), "wrong-tag DATA was delivered");
    let answered: Vec<_> = responses
        .iter()
        .filter(|d| {
            d.any(|c| {
                matches!(
                    c,
                    Chunk::HeartbeatAck(_)
                        | Chunk::ShutdownAck(_)
                        | Chunk::Abort(_)
                        | Chunk::Sack(_)
                )
            })
        })
        .map(Datagram::names)
        .collect();
    assert!(
        answered.is_empty(),
        "wrong-tag packets were answered: {answered:?}"
    );

    // Still established: the genuine chunks work.
    peer.send(&[sack_chunk(server_tsn, 1 << 20, &[])]).await;
    let acked = eventually(STEP, || {
        assoc
            .stats()
            .is_some_and(|s| s.messages_acked == before.messages_acked + 1)
    })
    .await;
    assert!(acked, "the genuine SACK did not acknowledge the message");
    let genuine = peer.message(0, b"genuine".to_vec());
    peer.send(&[genuine]).await;
    let m = bounded("recv of genuine DATA", STEP, assoc.recv())
        .await
        .expect("recv");
    assert_eq!(&m.payload[..], b"genuine");
    assoc
        .send(0, &b"not shutting down"[..], SendOptions::default())
        .await
        .expect("the wrong-tag SHUTDOWN must not have started a shutdown");
}

// ---------------------------------------------------------------------------
// 11. SACKs for TSNs never sent

/// `assoc/sack.rs`: a SACK whose Cumulative TSN Ack is at or beyond the next
/// TSN to send is refused by `Outstanding::on_sack` (`AcksUnsentTsn`), counted
/// in `malformed_chunks` and otherwise ignored: the association stays up.
/// Gap blocks beyond the last TSN sent are clipped away and change nothing.
/// (RFC 9260's Security Considerations say an implementation MUST abort on
/// such a SACK; Brisk discards it instead, and this test pins that choice.)
#[tokio::test]
async fn a_sack_for_tsns_never_sent_aborts_the_association() {
    // RFC 9260 15: an implementation MUST abort the association if it receives
    // a SACK acknowledging a TSN that has not been sent; a cumulative ack past
    // the last TSN sent, and a gap block past it, each do.
    let bogus: [(i64, &[(u16, u16)]); 2] = [(1_000_000, &[]), (-1, &[(2, 1000)])];
    for (seed, (cum_offset, gaps)) in (14u8..).zip(bogus) {
        let server = server(Config::rfc9260(), seed).await;
        let (peer, assoc) = peer_and_assoc(&server, PeerParams::default()).await;
        assoc
            .send(0, &b"one"[..], SendOptions::default())
            .await
            .expect("send");
        let (got, ok) = peer.collect_until(STEP, |d| !d.data().is_empty()).await;
        assert!(ok, "the server's DATA did not arrive");
        let s_tsn = got.last().expect("DATA").data()[0].0;
        assert_eq!(s_tsn, peer.server_initial_tsn);
        let cum = s_tsn.wrapping_add_signed(cum_offset as i32);
        peer.send(&[sack_chunk(cum, 1 << 20, gaps)]).await;
        let (got, aborted) = peer.collect_until(STEP, |d| d.any(is_abort)).await;
        assert!(
            aborted,
            "cum {cum_offset:+}, gaps {gaps:?}: no ABORT; the server sent {:?}",
            got.iter().flat_map(|d| d.names()).collect::<Vec<_>>()
        );
        let closed = eventually(STEP, || assoc.stats().is_none()).await;
        assert!(closed, "the association ended");
        let err = assoc
            .recv()
            .await
            .expect_err("recv on an aborted association");
        assert!(
            err.to_string().contains("never sent") || err.to_string().contains("abort"),
            "{err}"
        );
    }
}

// ---------------------------------------------------------------------------
// 12. A peer that never SACKs

#[tokio::test]
async fn a_peer_that_never_sacks_is_declared_unreachable_after_max_retrans() {
    const SEND_BUF: usize = 64 * 1024;
    const MAX_RETRANS: u32 = 4;
    let cfg = Config {
        rto_initial: ms(100),
        rto_min: ms(50),
        rto_max: ms(200),
        assoc_max_retrans: MAX_RETRANS,
        send_buffer: SEND_BUF,
        max_message_size: SEND_BUF,
        ..Config::rfc9260()
    };
    let server = server(cfg, 15).await;
    let (peer, assoc) = peer_and_assoc(
        &server,
        PeerParams {
            a_rwnd: 1 << 24,
            ..PeerParams::default()
        },
    )
    .await;
    let sender = {
        let assoc = assoc.clone();
        tokio::spawn(async move {
            for i in 0..200u32 {
                if assoc
                    .send(0, vec![i as u8; 1000], SendOptions::default())
                    .await
                    .is_err()
                {
                    break;
                }
            }
        })
    };

    let mut seen: HashMap<u32, u32> = HashMap::new();
    let mut max_held = 0usize;
    let end = Instant::now() + Duration::from_secs(10);
    while Instant::now() < end {
        match assoc.stats() {
            Some(s) => max_held = max_held.max(s.send_held),
            None => break,
        }
        if let Some(d) = peer.recv(ms(10)).await {
            for (tsn, _) in d.data() {
                *seen.entry(tsn).or_default() += 1;
            }
        }
    }
    for d in peer.drain() {
        for (tsn, _) in d.data() {
            *seen.entry(tsn).or_default() += 1;
        }
    }
    let end = bounded("recv once the peer is unreachable", STEP, assoc.recv()).await;
    assert!(
        matches!(end, Err(Error::PeerUnreachable { errors }) if errors == MAX_RETRANS + 1),
        "expected PeerUnreachable after {MAX_RETRANS} retransmissions, got {end:?}"
    );
    let first = seen.get(&peer.server_initial_tsn).copied().unwrap_or(0);
    assert!(
        first > MAX_RETRANS,
        "the first TSN was sent {first} times; T3 should have retransmitted it {MAX_RETRANS} times"
    );
    assert!(
        max_held <= SEND_BUF,
        "the server held {max_held} bytes for sending, more than its buffer {SEND_BUF}"
    );
    bounded("the sender ends with the association", STEP, sender)
        .await
        .expect("sender task");
}
