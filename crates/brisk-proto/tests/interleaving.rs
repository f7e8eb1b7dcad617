//! Message interleaving (RFC 8260) through the pair harness: negotiation,
//! I-DATA on the wire, fragment-level scheduling, I-FORWARD-TSN, protocol
//! violations and a lying peer. 10 ms one way.

mod harness;

use std::time::Duration;

use brisk_proto::rx::window::NEXT_TSN_ALLOWANCE;
use brisk_proto::wire::chunk::types;
use brisk_proto::wire::chunk::{Data, DataFlags, IData, IForwardTsn, IForwardTsnStream, PpidOrFsn};
use brisk_proto::wire::{Chunk, Packet};
use brisk_proto::{CloseReason, Config, Event, OutgoingMessage, State, Time};
use harness::{Dir, Pair, ms};

fn idata(base: Config) -> Config {
    Config {
        message_interleaving: true,
        ..base
    }
}

/// Room for a 1 MiB message at the receiver.
fn big(base: Config) -> Config {
    Config {
        receive_buffer: 4 << 20,
        max_message_size: 2 << 20,
        send_buffer: 8 << 20,
        ..base
    }
}

fn connected(a: Config, b: Config) -> Pair {
    let mut p = Pair::new(ms(10), b);
    p.connect(a);
    p.run_for(ms(100));
    p
}

/// Interleaving and partial reliability on.
fn pr_idata() -> Config {
    Config {
        partial_reliability: true,
        ..idata(Config::rfc9260())
    }
}

/// Whether a chunk of `typ` was sent in `dir`.
fn sent_any(p: &Pair, dir: Dir, typ: u8) -> bool {
    chunks(p, dir).iter().any(|c| c.chunk_type() == typ)
}

fn a_assoc(p: &mut Pair) -> &mut brisk_proto::Association {
    let id = p.a_id.expect("connected");
    p.a.association(id).expect("association")
}

fn b_assoc(p: &mut Pair) -> &mut brisk_proto::Association {
    let id = p.b_id.expect("accepted");
    p.b.association(id).expect("association")
}

/// Every chunk of every packet sent in `dir`, decoded.
fn chunks(p: &Pair, dir: Dir) -> Vec<Chunk<'_>> {
    p.log
        .iter()
        .filter(|l| l.seen.dir == dir)
        .filter_map(|l| Packet::decode(&l.seen.bytes).ok())
        .flat_map(|pk| pk.chunks)
        .collect()
}

/// The raw bytes (header included) of the first chunk of `typ` in `dir`.
fn first_chunk_bytes(p: &Pair, dir: Dir, typ: u8) -> Option<Vec<u8>> {
    for l in p.log.iter().filter(|l| l.seen.dir == dir) {
        let b = &l.seen.bytes;
        let mut at = 12;
        while at + 4 <= b.len() {
            let len = usize::from(u16::from_be_bytes([b[at + 2], b[at + 3]]));
            if len < 4 {
                break;
            }
            if b[at] == typ {
                return b.get(at..at + len).map(<[u8]>::to_vec);
            }
            at += len.div_ceil(4) * 4;
        }
    }
    None
}

/// Runs until B has read `n` messages; returns (stream, length, when) in
/// the order B could read them.
fn read_in_order(p: &mut Pair, n: usize, limit: Duration) -> Vec<(u16, usize, u64)> {
    let mut got = Vec::new();
    let end = p.now + limit;
    while got.len() < n && p.now < end {
        if !p.step() {
            break;
        }
        let now = p.now.as_micros();
        for m in p.b_recv_all() {
            got.push((m.stream_id, m.payload.len(), now));
        }
    }
    got
}

/// The scenario of the head-of-line figure: a 1 MiB message on stream 1,
/// then a 100-byte one on stream 2.
fn large_then_small(interleave: bool) -> Vec<(u16, usize, u64)> {
    let cfg = |c| if interleave { idata(big(c)) } else { big(c) };
    let mut p = connected(cfg(Config::rfc9260()), cfg(Config::rfc9260()));
    assert_eq!(a_assoc(&mut p).message_interleaving(), interleave);
    assert_eq!(b_assoc(&mut p).message_interleaving(), interleave);
    let large: Vec<u8> = (0..1 << 20).map(|i: u32| (i % 251) as u8).collect();
    p.a_send(OutgoingMessage::new(1, large));
    p.a_send(OutgoingMessage::new(2, vec![9u8; 100]));
    read_in_order(&mut p, 2, Duration::from_secs(60))
}

#[test]
fn idata_small_message_on_stream_2_delivered_before_large_on_stream_1_ends() {
    let with = large_then_small(true);
    eprintln!("with I-DATA: {with:?}");
    assert_eq!(with.len(), 2, "{with:?}");
    assert_eq!(
        (with[0].0, with[0].1, with[1].0, with[1].1),
        (2, 100, 1, 1 << 20),
        "with I-DATA the small message overtakes: {with:?}"
    );
    // Within about a round trip of being sent, long before the large one.
    assert!(with[0].2 + 200_000 < with[1].2, "{with:?}");

    let without = large_then_small(false);
    eprintln!("without I-DATA: {without:?}");
    assert_eq!(without.len(), 2, "{without:?}");
    assert_eq!(
        (without[0].0, without[0].1, without[1].0),
        (1, 1 << 20, 2),
        "with DATA the small message waits for the large one: {without:?}"
    );
    assert!(without[1].2 >= without[0].2);
    // The small message waited about as long as the large one took.
    assert!(without[1].2 > with[1].2 / 2, "{without:?} vs {with:?}");
}

#[test]
fn both_ends_on_negotiate_idata_and_send_every_message_as_idata_chunks() {
    let mut p = connected(pr_idata(), pr_idata());
    assert!(a_assoc(&mut p).message_interleaving());
    assert!(b_assoc(&mut p).message_interleaving());
    // Both INIT and INIT ACK list I-DATA and I-FORWARD-TSN (RFC 8260 2.2).
    for (dir, typ) in [(Dir::AtoB, types::INIT), (Dir::BtoA, types::INIT_ACK)] {
        let init = chunks(&p, dir)
            .into_iter()
            .find(|c| c.chunk_type() == typ)
            .expect("INIT / INIT ACK");
        let supports = |t| match &init {
            Chunk::Init(i) => i.supports(t),
            Chunk::InitAck(i) => i.supports(t),
            _ => false,
        };
        assert!(supports(types::IDATA) && supports(types::IFORWARD_TSN));
    }
    p.a_send(
        OutgoingMessage::new(3, vec![0xAB; 10])
            .with_ppid(0x0102_0304)
            .unordered(false),
    );
    p.a_send(OutgoingMessage::new(3, vec![0xCD; 3000]).with_ppid(77));
    p.run_for(ms(200));
    let got = p.b_recv_all();
    assert_eq!(got.len(), 2);
    assert_eq!((got[0].ppid, got[0].payload.len()), (0x0102_0304, 10));
    assert_eq!((got[1].ppid, got[1].payload.len()), (77, 3000));

    // The first user-data chunk, byte for byte: type 64, flags B|E, length
    // 20 + 10, TSN, stream 3, reserved 0, MID 0, PPID.
    let bytes = first_chunk_bytes(&p, Dir::AtoB, types::IDATA).expect("an I-DATA chunk");
    let tsn = u32::from_be_bytes(bytes[4..8].try_into().unwrap());
    let mut want = vec![0x40, 0x03, 0x00, 30];
    want.extend_from_slice(&tsn.to_be_bytes());
    want.extend_from_slice(&[0, 3, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4]);
    want.extend_from_slice(&[0xAB; 10]);
    assert_eq!(bytes, want);
    // The 3000-byte message: MID 1, FSN 0 (PPID), 1, 2 on consecutive TSNs.
    let frags: Vec<(u32, u32, PpidOrFsn, u8)> = chunks(&p, Dir::AtoB)
        .into_iter()
        .filter_map(|c| match c {
            Chunk::IData(d) if d.mid == 1 => Some((d.tsn, d.mid, d.ppid_or_fsn, d.flags.bits())),
            _ => None,
        })
        .collect();
    assert_eq!(
        frags.iter().map(|f| (f.2, f.3 & 0x03)).collect::<Vec<_>>(),
        [
            (PpidOrFsn::Ppid(77), 0x02),
            (PpidOrFsn::Fsn(1), 0x00),
            (PpidOrFsn::Fsn(2), 0x01)
        ]
    );
    // Never a DATA chunk, either way.
    for dir in [Dir::AtoB, Dir::BtoA] {
        assert!(!sent_any(&p, dir, types::DATA));
    }
}

#[test]
fn one_end_without_interleaving_means_plain_data_and_never_idata() {
    for (a, b) in [
        (idata(Config::rfc9260()), Config::rfc9260()),
        (Config::rfc9260(), idata(Config::rfc9260())),
    ] {
        let mut p = connected(a.clone(), b);
        assert!(!a_assoc(&mut p).message_interleaving());
        assert!(!b_assoc(&mut p).message_interleaving());
        // The end that has the knob on lists I-DATA; the other does not.
        let init = chunks(&p, Dir::AtoB)
            .into_iter()
            .find_map(|c| match c {
                Chunk::Init(i) => Some(i.supports(types::IDATA)),
                _ => None,
            })
            .unwrap();
        assert_eq!(init, a.message_interleaving);
        p.a_send(OutgoingMessage::new(1, vec![1u8; 5000]));
        p.run_for(ms(300));
        assert_eq!(p.b_recv_all().len(), 1);
        let sent = chunks(&p, Dir::AtoB);
        assert!(sent.iter().any(|c| c.chunk_type() == types::DATA));
        for dir in [Dir::AtoB, Dir::BtoA] {
            assert!(!sent_any(&p, dir, types::IDATA));
        }
    }
}

#[test]
fn an_abandoned_message_is_skipped_by_i_forward_tsn_and_later_ones_are_delivered() {
    let mut p = connected(pr_idata(), pr_idata());
    // Message 0 (stream 0, MID 0) is lost once and may not be retransmitted.
    p.drop_data_packet(Dir::AtoB, 1);
    let lost = p.a_send(OutgoingMessage::new(0, vec![1u8; 100]).with_max_retransmits(0));
    p.run_for(ms(1));
    let later = p.a_send(OutgoingMessage::new(0, vec![2u8; 100]));
    p.a_send(OutgoingMessage::new(4, vec![3u8; 100]).unordered(true));
    p.run_for(ms(3000));
    assert_eq!(p.a_abandoned(), [lost]);
    assert!(later.0 > lost.0);
    let forwards: Vec<IForwardTsn> = chunks(&p, Dir::AtoB)
        .into_iter()
        .filter_map(|c| match c {
            Chunk::IForwardTsn(f) => Some(f),
            _ => None,
        })
        .collect();
    assert!(!forwards.is_empty(), "an I-FORWARD-TSN went");
    assert_eq!(
        forwards[0].streams,
        [IForwardTsnStream {
            stream_id: 0,
            unordered: false,
            mid: 0
        }]
    );
    // The TSN of the lost chunk is the New Cumulative TSN.
    let lost_tsn = p
        .log
        .iter()
        .find(|l| l.seen.dir == Dir::AtoB && l.seen.has_data())
        .map(|l| l.seen.tsns[0])
        .unwrap();
    assert_eq!(forwards[0].new_cum_tsn, lost_tsn);
    assert!(
        !sent_any(&p, Dir::AtoB, types::FORWARD_TSN),
        "never a FORWARD TSN with I-DATA"
    );
    let got = p.b_recv_all();
    let mut payloads: Vec<u8> = got.iter().map(|m| m.payload[0]).collect();
    payloads.sort_unstable();
    assert_eq!(
        payloads,
        [2, 3],
        "the later messages arrived, the lost one never"
    );
    assert!(a_assoc(&mut p).all_acked());
}

#[test]
fn a_partly_sent_abandoned_message_is_dropped_by_the_receiver_and_its_stream_moves_on() {
    let mut p = connected(pr_idata(), pr_idata());
    // A three-packet message whose second packet is lost: the receiver holds
    // its first fragment until the I-FORWARD-TSN says to drop it.
    p.drop_data_packet(Dir::AtoB, 2);
    p.a_send(OutgoingMessage::new(1, vec![5u8; 4000]).with_max_retransmits(0));
    p.a_send(OutgoingMessage::new(1, vec![6u8; 50]));
    p.run_for(ms(3000));
    assert_eq!(p.a_abandoned().len(), 1);
    let got = p.b_recv_all();
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].stream_id, got[0].payload[0]), (1, 6));
    assert_eq!(b_assoc(&mut p).receive_held(), 0, "nothing is left over");
}

fn b_closed_reason(p: &Pair) -> Option<String> {
    p.b_events.iter().find_map(|(_, _, e)| match e {
        Event::Closed(CloseReason::LocalAbort { reason }) => Some(reason.clone()),
        _ => None,
    })
}

/// Whether B sent an ABORT with a Protocol Violation cause (code 13).
fn b_aborted_with_protocol_violation(p: &Pair) -> bool {
    first_chunk_bytes(p, Dir::BtoA, types::ABORT)
        .is_some_and(|b| b.len() >= 6 && u16::from_be_bytes([b[4], b[5]]) == 13)
}

#[test]
fn data_after_idata_was_negotiated_is_a_protocol_violation() {
    let mut p = connected(idata(Config::rfc9260()), idata(Config::rfc9260()));
    let tsn = p.a_next_tsn();
    p.inject_to_b(vec![Chunk::Data(Data {
        flags: DataFlags::UNFRAGMENTED,
        tsn,
        stream_id: 0,
        ssn: 0,
        ppid: 0,
        payload: vec![1u8; 10].into(),
    })]);
    p.run_for(ms(1));
    let reason = b_closed_reason(&p).expect("B aborted");
    assert!(
        reason.contains("DATA") && reason.contains("RFC 8260"),
        "{reason}"
    );
    assert!(b_aborted_with_protocol_violation(&p));
    assert!(p.b_recv_all().is_empty());
}

#[test]
fn idata_without_negotiation_is_a_protocol_violation() {
    // B offers I-DATA, A does not: not negotiated.
    let mut p = connected(Config::rfc9260(), idata(Config::rfc9260()));
    let tsn = p.a_next_tsn();
    p.inject_to_b(vec![Chunk::IData(IData {
        flags: DataFlags::UNFRAGMENTED,
        tsn,
        stream_id: 0,
        mid: 0,
        ppid_or_fsn: PpidOrFsn::Ppid(0),
        payload: vec![1u8; 10].into(),
    })]);
    p.run_for(ms(1));
    let reason = b_closed_reason(&p).expect("B aborted");
    assert!(
        reason.contains("I-DATA") && reason.contains("not negotiated"),
        "{reason}"
    );
    assert!(b_aborted_with_protocol_violation(&p));
}

fn ifrag(
    tsn: u32,
    stream: u16,
    mid: u32,
    fsn: u32,
    b: bool,
    e: bool,
    len: usize,
) -> Chunk<'static> {
    Chunk::IData(IData {
        flags: DataFlags {
            immediate: false,
            unordered: false,
            beginning: b,
            ending: e,
        },
        tsn,
        stream_id: stream,
        mid,
        ppid_or_fsn: if b {
            PpidOrFsn::Ppid(0)
        } else {
            PpidOrFsn::Fsn(fsn)
        },
        payload: vec![7u8; len].into(),
    })
}

/// A lying peer opens thousands of interleaved messages that never finish:
/// many streams, many MIDs, MIDs far ahead, huge FSNs, in TSN order and from
/// the top of the gap window down; then sends lying I-FORWARD-TSNs. B never
/// holds more than its buffer plus the one-chunk allowance, never panics,
/// and still delivers a genuine message afterwards.
#[test]
fn a_lying_peer_opening_many_interleaved_messages_cannot_grow_memory_past_the_window() {
    const BUFFER: u32 = 64 << 10;
    let cfg = Config {
        receive_buffer: BUFFER,
        max_inbound_streams: 1024,
        ..idata(Config::rfc9260())
    };
    let limit = BUFFER as usize + NEXT_TSN_ALLOWANCE;
    for size in [1000usize, 1] {
        let mut p = Pair::new(ms(10), cfg.clone());
        p.connect(Config {
            outbound_streams: 1024,
            ..idata(Config::rfc9260())
        });
        assert!(b_assoc(&mut p).message_interleaving());
        let base = p.a_next_tsn();
        let mut worst = 0;
        let mut check = |p: &mut Pair, what: &str| {
            let held = b_assoc(p).receive_held();
            worst = worst.max(held);
            assert!(held <= limit, "{size} B, {what}: held {held} > {limit}");
        };
        // Ascending TSNs (skipping base): every fragment a middle or first
        // one of a different message; MIDs far ahead, FSNs huge.
        for k in 1..4000u32 {
            let stream = (k % 1024) as u16;
            let mid = k.wrapping_mul(0x9E37_79B9);
            let fsn = u32::MAX - k;
            let first = k % 3 == 0;
            p.inject_to_b(vec![ifrag(
                base.wrapping_add(k),
                stream,
                mid,
                fsn,
                first,
                false,
                size,
            )]);
            check(&mut p, "ascending");
        }
        // From the top of the gap window down: lower TSNs make room by
        // reneging on the highest held fragments.
        for k in 0..2000u32 {
            let tsn = base.wrapping_add(65_000 - 2 * k);
            p.inject_to_b(vec![ifrag(
                tsn,
                (k % 7) as u16,
                k,
                k + 1,
                false,
                false,
                size,
            )]);
            check(&mut p, "descending");
        }
        // Ordered whole messages far ahead of their stream wait for MID 0.
        for k in 0..500u32 {
            let tsn = base.wrapping_add(30_000 + k);
            p.inject_to_b(vec![ifrag(tsn, 5, 1 << 30 | k, 0, true, true, size)]);
            check(&mut p, "far-ahead MIDs");
        }
        // Lying I-FORWARD-TSNs: unknown streams, MIDs far ahead (or behind),
        // a New Cumulative TSN far beyond anything sent.
        let lies = IForwardTsn {
            new_cum_tsn: base.wrapping_add(3),
            streams: (0..200u16)
                .map(|s| IForwardTsnStream {
                    stream_id: s.wrapping_mul(331),
                    unordered: s % 2 == 0,
                    mid: u32::from(s).wrapping_mul(0x8000_0001),
                })
                .collect(),
        };
        p.inject_to_b(vec![Chunk::IForwardTsn(lies)]);
        p.inject_to_b(vec![Chunk::IForwardTsn(IForwardTsn {
            new_cum_tsn: base.wrapping_add(1 << 30),
            streams: vec![],
        })]);
        check(&mut p, "I-FORWARD-TSN");
        assert_eq!(b_assoc(&mut p).state(), State::Established);
        let stats = b_assoc(&mut p).stats().clone();
        assert!(stats.data_dropped_window_full + stats.data_reneged > 0);
        assert!(worst > 32 << 10, "{size} B: the window was used ({worst})");
    }
}

#[test]
fn a_message_id_reused_for_a_whole_message_while_one_is_open_aborts() {
    let mut p = connected(idata(Config::rfc9260()), idata(Config::rfc9260()));
    let base = p.a_next_tsn();
    p.inject_to_b(vec![ifrag(base, 0, 0, 0, true, false, 10)]);
    p.inject_to_b(vec![ifrag(base.wrapping_add(1), 0, 0, 0, true, true, 10)]);
    p.run_for(ms(1));
    assert!(b_closed_reason(&p).is_some_and(|r| r.contains("MID")));
    assert!(b_aborted_with_protocol_violation(&p));
}

/// The receiver holds each message it has part of until it is whole, so
/// two messages that fit its buffer one at a time but not together must not
/// both be part-sent: the sender starts the second when the first is done
/// (interleaving them would fill the buffer with two halves forever).
#[test]
fn two_large_messages_that_together_exceed_the_receive_buffer_both_arrive() {
    let cfg = Config {
        receive_buffer: 1 << 20,
        max_message_size: 1 << 20,
        ..idata(Config::rfc9260())
    };
    let mut p = connected(cfg.clone(), cfg);
    p.a_send(OutgoingMessage::new(1, vec![1u8; 700 << 10]));
    p.a_send(OutgoingMessage::new(2, vec![2u8; 700 << 10]));
    p.a_send(OutgoingMessage::new(3, vec![3u8; 100]));
    let got = read_in_order(&mut p, 3, Duration::from_secs(120));
    let streams: Vec<u16> = got.iter().map(|g| g.0).collect();
    // The small one still overtakes; the second large one follows the first.
    assert_eq!(streams, [3, 1, 2], "{got:?}");
    assert!(got.iter().skip(1).all(|g| g.1 == 700 << 10));
    assert_eq!(b_assoc(&mut p).receive_held(), 0);
}

/// A peer that interleaves more unfinished messages than the receive buffer
/// holds (Brisk's own sender never does) leaves no way forward: once the
/// chunk the cumulative TSN waits for cannot enter and the application has
/// nothing to read, the receiver aborts and says why, rather than stall.
#[test]
fn a_peer_that_fills_the_buffer_with_unfinished_interleaved_messages_is_aborted_not_waited_for() {
    const BUFFER: u32 = 16 << 10;
    let cfg = Config {
        receive_buffer: BUFFER,
        ..idata(Config::rfc9260())
    };
    let mut p = Pair::new(ms(10), cfg);
    p.connect(idata(Config::rfc9260()));
    let base = p.a_next_tsn();
    // First fragments of messages on streams 0..: each fits, together not.
    let b = p.b_id.expect("accepted");
    let (mut k, mut worst) = (0u32, 0);
    while let Some(assoc) =
        p.b.association(b)
            .filter(|a| a.state() == State::Established)
    {
        worst = worst.max(assoc.receive_held());
        assert!(k < 100, "never aborted");
        let chunk = ifrag(
            base.wrapping_add(k),
            (k % 8) as u16,
            k / 8,
            0,
            true,
            false,
            1000,
        );
        p.inject_to_b(vec![chunk]);
        k += 1;
    }
    assert!(worst <= BUFFER as usize + NEXT_TSN_ALLOWANCE, "{worst}");
    let reason = b_closed_reason(&p).expect("B aborted");
    assert!(
        reason.contains("interleaved unfinished messages"),
        "{reason}"
    );
    assert!(b_aborted_with_protocol_violation(&p));
    // Not before the buffer was full (each chunk charged with bookkeeping).
    let charged = k as usize * brisk_proto::rx::window::charge(1000);
    assert!(charged > BUFFER as usize, "aborted after {k} chunks");
}

/// Chunk types of the packets A sent that carried user data, in order.
fn a_data_chunk_types(p: &Pair) -> Vec<Vec<u8>> {
    p.data_packets(Dir::AtoB)
        .iter()
        .map(|l| {
            l.seen
                .chunk_types
                .iter()
                .copied()
                .filter(|&t| t == types::DATA || t == types::IDATA)
                .collect()
        })
        .collect()
}

/// The latency mechanisms act on I-DATA chunks as on DATA: packet-based
/// Early Retransmit resends a lost I-DATA chunk on the first SACK, and a
/// PKTDROP report for a corrupted packet of I-DATA brings it back at once;
/// every retransmission is an I-DATA chunk.
#[test]
fn early_retransmit_and_pktdrop_resend_lost_i_data_chunks() {
    use brisk_proto::{EarlyRetransmit, RetransmitCause};
    let with = |f: fn(&mut Config)| {
        let mut c = idata(Config::rfc9260());
        f(&mut c);
        c
    };
    let cases: [(Config, harness::Fate, RetransmitCause); 2] = [
        (
            with(|c| c.early_retransmit = EarlyRetransmit::Packets),
            harness::Fate::Drop,
            RetransmitCause::EarlyRetransmit,
        ),
        (
            with(|c| c.pktdrop = true),
            harness::Fate::Corrupt,
            RetransmitCause::PacketDrop,
        ),
    ];
    for (cfg, fate, cause) in cases {
        let mut p = connected(cfg.clone(), cfg);
        assert!(a_assoc(&mut p).message_interleaving());
        p.rule(move |s| (s.dir == Dir::AtoB && s.data_ordinal == Some(1)).then_some(fate));
        for i in 0..2u8 {
            p.a_send(OutgoingMessage::new(u16::from(i), vec![i; 200]));
            p.run_for(ms(1));
        }
        p.run_for(ms(2000));
        let rtx = p.a_retransmissions();
        assert_eq!(rtx.len(), 1, "{cause:?}: {rtx:?}");
        assert_eq!(rtx[0].2, cause);
        // Within a round trip or so of the loss (20 ms RTT), not after T3's
        // RTO (at least 1 s).
        let t0 = p.data_packets(Dir::AtoB)[0].seen.sent_at;
        let after = rtx[0].0.as_micros() - t0.as_micros();
        assert!(
            (20_000..=30_000).contains(&after),
            "{cause:?} after {after} us"
        );
        let types = a_data_chunk_types(&p);
        assert_eq!(types.len(), 3, "{types:?}");
        assert!(types.iter().flatten().all(|&t| t == types::IDATA));
        assert_eq!(p.b_recv_all().len(), 2);
    }
}

/// A message queued before the handshake settles is charged to the send
/// buffer as I-DATA fragments when the knob is on, so that learning that the
/// peer agreed (smaller fragments, more chunks) never raises its charge past
/// what `send` admitted.
#[test]
fn a_message_queued_before_the_handshake_keeps_its_send_buffer_charge_once_idata_is_agreed() {
    let cfg = Config {
        send_buffer: 6000,
        max_message_size: 6000,
        ..idata(Config::rfc9260())
    };
    let mut p = Pair::new(ms(10), idata(Config::rfc9260()));
    let a = p.a.connect(p.now, p.b_addr, cfg).expect("connect");
    p.a_id = Some(a);
    // 2 x 1420 + 1 bytes: three I-DATA chunks at MTU 1452 (1420 bytes of
    // payload each), where two DATA chunks (1424) and a byte would be
    // counted as two.
    let now = p.now;
    let assoc = p.a.association(a).unwrap();
    assoc
        .send(now, OutgoingMessage::new(1, vec![5u8; 2 * 1420 + 1]))
        .unwrap();
    let before = assoc.send_held();
    assert!(before <= 6000);
    let mut worst = 0;
    let mut got = Vec::new();
    while got.is_empty() && p.now < Time::from_millis(5000) {
        p.step();
        if let Some(assoc) = p.a.association(a) {
            worst = worst.max(assoc.send_held());
        }
        got.extend(p.b_recv_all());
    }
    assert!(p.a.association(a).unwrap().message_interleaving());
    assert!(
        worst <= before,
        "charged {before} when queued, up to {worst} once I-DATA was agreed"
    );
    assert_eq!(got.len(), 1);
}

/// An unordered message abandoned after part of it arrived: the
/// I-FORWARD-TSN names it with U set and its own MID (unordered messages
/// number their MIDs apart), the receiver drops the part it held, and the
/// stream's later unordered and ordered messages arrive.
#[test]
fn an_abandoned_unordered_message_is_named_with_u_and_its_mid_and_its_part_is_dropped() {
    let mut p = connected(pr_idata(), pr_idata());
    p.a_send(OutgoingMessage::new(3, vec![1u8; 10]).unordered(true));
    p.run_for(ms(100));
    assert_eq!(p.b_recv_all().len(), 1);
    // Unordered MID 1 on stream 3: three packets, the second lost.
    let lost_packet = p.data_packets(Dir::AtoB).len() as u64 + 2;
    p.drop_data_packet(Dir::AtoB, lost_packet);
    p.a_send(
        OutgoingMessage::new(3, vec![2u8; 4000])
            .unordered(true)
            .with_max_retransmits(0),
    );
    p.a_send(OutgoingMessage::new(3, vec![3u8; 10]).unordered(true));
    p.a_send(OutgoingMessage::new(3, vec![4u8; 10]));
    p.run_for(ms(3000));
    assert_eq!(p.a_abandoned().len(), 1);
    let entries: Vec<IForwardTsnStream> = chunks(&p, Dir::AtoB)
        .into_iter()
        .filter_map(|c| match c {
            Chunk::IForwardTsn(f) => Some(f.streams),
            _ => None,
        })
        .flatten()
        .collect();
    assert!(!entries.is_empty());
    assert!(
        entries.iter().all(|e| *e
            == IForwardTsnStream {
                stream_id: 3,
                unordered: true,
                mid: 1
            }),
        "{entries:?}"
    );
    let mut got: Vec<u8> = p.b_recv_all().iter().map(|m| m.payload[0]).collect();
    got.sort_unstable();
    assert_eq!(got, [3, 4]);
    assert_eq!(
        b_assoc(&mut p).receive_held(),
        0,
        "the part held was dropped"
    );
}
