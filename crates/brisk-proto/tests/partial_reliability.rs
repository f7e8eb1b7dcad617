//! Partial reliability (RFC 3758 with RFC 7496's policies) through the pair
//! harness, with exact expectations: 10 ms one way, so RTT 20 ms.

mod harness;

use std::time::Duration;

use brisk_proto::wire::chunk::types;
use brisk_proto::{Config, OutgoingMessage, RetransmitCause};
use harness::{Dir, Pair, ms};

fn pr_config() -> Config {
    Config {
        partial_reliability: true,
        ..Config::rfc9260()
    }
}

fn connected(a: Config, b: Config) -> Pair {
    let mut p = Pair::new(ms(10), b);
    p.connect(a);
    p.run_for(ms(1000) - Duration::from_micros(p.now.as_micros()));
    p
}

/// The New Cumulative TSN of each FORWARD TSN A sent, and when (ms).
fn forward_tsns(p: &Pair) -> Vec<(u32, u64)> {
    p.log
        .iter()
        .filter(|l| l.seen.dir == Dir::AtoB)
        .filter_map(|l| {
            let new_cum = chunk_value(&l.seen.bytes, types::FORWARD_TSN)?;
            let b: [u8; 4] = new_cum.get(..4)?.try_into().ok()?;
            Some((u32::from_be_bytes(b), l.seen.sent_at.as_micros() / 1000))
        })
        .collect()
}

/// The value of the first chunk of `typ` in an SCTP packet.
fn chunk_value(packet: &[u8], typ: u8) -> Option<&[u8]> {
    let mut at = 12;
    while at + 4 <= packet.len() {
        let len = usize::from(u16::from_be_bytes([packet[at + 2], packet[at + 3]]));
        if len < 4 {
            return None;
        }
        if packet[at] == typ {
            return packet.get(at + 4..at + len);
        }
        at += len.div_ceil(4) * 4;
    }
    None
}

#[test]
fn both_ends_offer_forward_tsn_and_a_reliable_peer_gets_every_message_reliably() {
    // A offers partial reliability, B does not: the policy is ignored.
    let mut p = connected(pr_config(), Config::rfc9260());
    p.drop_data_packet(Dir::AtoB, 1);
    p.a_send(OutgoingMessage::new(0, vec![1u8; 100]).with_max_retransmits(0));
    p.run_for(ms(3000));
    assert!(p.a_abandoned().is_empty());
    let rtx = p.a_retransmissions();
    assert_eq!(rtx.len(), 1, "sent again as if reliable: {rtx:?}");
    assert_eq!(p.b_recv_all().len(), 1);
}

#[test]
fn max_retransmits_zero_and_one_drop_abandon_the_message_and_retransmit_nothing() {
    let mut p = connected(pr_config(), pr_config());
    let first_tsn = p.a_next_tsn();
    // The first of three messages is lost; the other two arrive.
    p.drop_data_packet(Dir::AtoB, 1);
    let lost = p.a_send(OutgoingMessage::new(0, vec![1u8; 100]).with_max_retransmits(0));
    p.run_for(ms(1));
    p.a_send(OutgoingMessage::new(0, vec![2u8; 100]).with_max_retransmits(0));
    p.run_for(ms(1));
    p.a_send(OutgoingMessage::new(0, vec![3u8; 100]).with_max_retransmits(0));
    p.run_for(ms(3000));
    assert_eq!(p.a_abandoned(), vec![lost]);
    assert!(
        p.a_retransmissions().is_empty(),
        "never retransmitted: {:?}",
        p.a_retransmissions()
    );
    // The FORWARD TSN skips the lost TSN; B delivers the two others, in order.
    let fwd = forward_tsns(&p);
    assert_eq!(fwd.first().map(|f| f.0), Some(first_tsn), "{fwd:?}");
    let got: Vec<u8> = p.b_recv_all().iter().map(|m| m.payload[0]).collect();
    assert_eq!(got, vec![2, 3]);
    let b = p.b_id.unwrap();
    let b_stats = p.b.association(b).unwrap().stats();
    assert_eq!(b_stats.forward_tsns_received, fwd.len() as u64);
    let a = p.a_id.unwrap();
    let a_stats = p.a.association(a).unwrap().stats();
    assert_eq!(a_stats.messages_abandoned, 1);
    assert_eq!(a_stats.total_retransmissions(), 0);
    // Everything is settled: nothing outstanding, no timer left for it.
    assert!(p.a.association(a).unwrap().all_acked());
}

#[test]
fn a_timed_message_abandoned_after_its_lifetime_is_skipped_by_forward_tsn() {
    let mut p = connected(pr_config(), pr_config());
    let first_tsn = p.a_next_tsn();
    let t0 = p.now.as_micros() / 1000;
    p.drop_data_packet(Dir::AtoB, 1);
    let timed = p.a_send(OutgoingMessage::new(0, vec![7u8; 100]).with_lifetime(ms(500)));
    p.run_for(ms(5000));
    // T3 fires at RTO.Initial (1 s), past the lifetime: abandoned instead of
    // retransmitted, and a FORWARD TSN goes at once.
    assert_eq!(p.a_abandoned(), vec![timed]);
    assert!(p.a_retransmissions().is_empty());
    let fwd = forward_tsns(&p);
    assert_eq!(fwd, vec![(first_tsn, t0 + 1000)], "one FORWARD TSN at T3");
    assert!(p.b_recv_all().is_empty());
    // B skipped the TSN: the next message is delivered at once.
    p.a_send(OutgoingMessage::new(0, vec![8u8; 100]));
    p.run_for(ms(15));
    let got = p.b_recv_all();
    assert_eq!(got.len(), 1, "no wait for the abandoned TSN");
    assert_eq!(got[0].payload[0], 8);
    // Its delayed SACK acknowledges everything.
    p.run_for(ms(300));
    assert!(p.a.association(p.a_id.unwrap()).unwrap().all_acked());
}

#[test]
fn a_timed_message_whose_lifetime_ends_before_it_is_sent_never_takes_a_tsn() {
    let mut p = connected(pr_config(), pr_config());
    let first_tsn = p.a_next_tsn();
    let timed = p.a_send(OutgoingMessage::new(0, vec![2u8; 100]).with_lifetime(Duration::ZERO));
    p.a_send(OutgoingMessage::new(0, vec![3u8; 100]));
    p.run_for(ms(200));
    assert_eq!(p.a_abandoned(), vec![timed]);
    let sent: Vec<Vec<u32>> = p
        .data_packets(Dir::AtoB)
        .iter()
        .map(|l| l.seen.tsns.clone())
        .collect();
    assert_eq!(
        sent,
        vec![vec![first_tsn]],
        "only the second message, first TSN"
    );
    assert!(forward_tsns(&p).is_empty(), "nothing to skip");
    let got: Vec<u8> = p.b_recv_all().iter().map(|m| m.payload[0]).collect();
    assert_eq!(got, vec![3]);
}

#[test]
fn a_lost_fragment_abandons_the_whole_message_and_the_receiver_drops_its_part() {
    let mut p = connected(pr_config(), pr_config());
    // 3,000 bytes: three fragments at the default MTU; the second is lost.
    p.drop_data_packet(Dir::AtoB, 2);
    let big = p.a_send(OutgoingMessage::new(0, vec![5u8; 3000]).with_max_retransmits(0));
    p.run_for(ms(5));
    p.a_send(OutgoingMessage::new(0, vec![6u8; 10]));
    p.run_for(ms(3000));
    assert_eq!(p.a_abandoned(), vec![big]);
    assert!(p.a_retransmissions().is_empty());
    let got: Vec<usize> = p.b_recv_all().iter().map(|m| m.payload.len()).collect();
    assert_eq!(
        got,
        vec![10],
        "the partial message is dropped, the next delivered"
    );
    let b = p.b_id.unwrap();
    let held = p.b.association(b).unwrap().receive_held();
    assert_eq!(held, 0, "nothing of the abandoned message is held");
    assert!(p.a.association(p.a_id.unwrap()).unwrap().all_acked());
}

#[test]
fn a_forward_tsn_beyond_anything_the_peer_could_have_sent_is_dropped_and_counted() {
    let mut p = connected(pr_config(), pr_config());
    p.a_send(OutgoingMessage::new(0, vec![1u8; 10]));
    p.run_for(ms(500));
    let cum = p.a_next_tsn().wrapping_sub(1);
    let b = p.b_id.unwrap();
    let before = p.b.association(b).unwrap().stats().malformed_chunks;
    p.inject_to_b(vec![brisk_proto::wire::Chunk::ForwardTsn(
        brisk_proto::wire::chunk::ForwardTsn {
            new_cum_tsn: cum.wrapping_add(1_000_000),
            streams: vec![],
        },
    )]);
    let after = p.b.association(b).unwrap().stats().malformed_chunks;
    assert_eq!(after, before + 1);
    // B still takes the next TSN as the next one.
    p.a_send(OutgoingMessage::new(0, vec![2u8; 10]));
    p.run_for(ms(15));
    assert_eq!(p.b_recv_all().len(), 2);
}

#[test]
fn a_forward_tsn_without_partial_reliability_negotiated_is_not_obeyed() {
    let mut p = connected(Config::rfc9260(), Config::rfc9260());
    p.drop_data_packet(Dir::AtoB, 1);
    let tsn = p.a_next_tsn();
    p.a_send(OutgoingMessage::new(0, vec![1u8; 10]));
    p.run_for(ms(5));
    p.inject_to_b(vec![brisk_proto::wire::Chunk::ForwardTsn(
        brisk_proto::wire::chunk::ForwardTsn {
            new_cum_tsn: tsn,
            streams: vec![],
        },
    )]);
    let b = p.b_id.unwrap();
    assert_eq!(p.b.association(b).unwrap().stats().forward_tsns_received, 0);
    // The message is retransmitted by T3 and delivered after all.
    p.run_for(ms(3000));
    assert_eq!(p.b_recv_all().len(), 1);
}

/// Drops A's first packet carrying a FORWARD TSN.
fn drop_first_forward_tsn(p: &mut Pair) {
    let mut dropped = false;
    p.rule(move |s| {
        (s.dir == Dir::AtoB && s.has(types::FORWARD_TSN) && !std::mem::replace(&mut dropped, true))
            .then_some(harness::Fate::Drop)
    });
}

/// The first of 20 ordered messages, one every 5 ms (20 ms RTT), is lost,
/// and so is the FORWARD TSN that skips it; `data_packet` is its DATA
/// packet's 1-based number. Returns (its TSN, when it was sent, in ms).
fn lose_data_then_forward_tsn(p: &mut Pair, data_packet: u64) -> (u32, u64) {
    let first_tsn = p.a_next_tsn();
    let t0 = p.now.as_micros() / 1000;
    p.drop_data_packet(Dir::AtoB, data_packet);
    drop_first_forward_tsn(p);
    for k in 0..20u8 {
        p.a_send(OutgoingMessage::new(0, vec![k; 100]).with_max_retransmits(0));
        p.run_for(ms(5));
    }
    p.run_for(ms(3000));
    (first_tsn, t0)
}

/// When B could deliver each message, in ms.
fn deliverable_ms(p: &mut Pair) -> Vec<u64> {
    p.b_recv_all()
        .iter()
        .map(|m| m.deliverable_at.as_micros() / 1000)
        .collect()
}

#[test]
fn a_lost_forward_tsn_goes_again_once_a_sack_reports_data_sent_after_it() {
    // RFC 3758 3.5 C3: a SACK short of the Advanced.Peer.Ack.Point calls
    // for a FORWARD TSN. It used to go again only at T3 (1 s here): the
    // ordered stream stalled that long. No RTT is measured yet (the hole is
    // the first TSN: nothing was acknowledged cumulatively), so what tells
    // the FORWARD TSN was lost is a SACK reporting DATA sent after it.
    let mut p = connected(pr_config(), pr_config());
    let (first_tsn, t0) = lose_data_then_forward_tsn(&mut p, 1);
    // B reports the hole from t0+15 (arriving t0+25, +30, +35): the third
    // report abandons the message, the FORWARD TSN (lost) goes at t0+35.
    // B's SACK of the DATA sent with it arrives at t0+55.
    let fwd = forward_tsns(&p);
    assert_eq!(fwd, vec![(first_tsn, t0 + 35), (first_tsn, t0 + 55)]);
    assert_eq!(p.a_retransmissions(), vec![]);
    // B delivers the 19 others once that FORWARD TSN arrives (t0+65),
    // those sent later as they come.
    let at = deliverable_ms(&mut p);
    assert_eq!(at.len(), 19, "{at:?}");
    assert_eq!(at[0], t0 + 65, "{at:?}");
    let b = p.b_id.unwrap();
    assert_eq!(p.b.association(b).unwrap().stats().forward_tsns_received, 1);
}

#[test]
fn a_lost_forward_tsn_goes_again_on_a_short_sack_an_rtt_later() {
    // With an RTT measured (20 ms), a duplicate waits that long after the
    // last FORWARD TSN (the note to RFC 3758 3.5 C3).
    let mut p = connected(pr_config(), pr_config());
    p.a_send(OutgoingMessage::new(0, vec![9u8; 100]));
    p.run_for(ms(500));
    assert_eq!(p.b_recv_all().len(), 1);
    let (first_tsn, t0) = lose_data_then_forward_tsn(&mut p, 2);
    // Lost at t0+35; the short SACKs at t0+40 .. t0+50 left B before it
    // could arrive; the one at t0+55 is the first a full RTT later.
    let fwd = forward_tsns(&p);
    assert_eq!(fwd, vec![(first_tsn, t0 + 35), (first_tsn, t0 + 55)]);
    let at = deliverable_ms(&mut p);
    assert_eq!(at.len(), 19, "{at:?}");
    assert_eq!(at[0], t0 + 65, "{at:?}");
}

#[test]
fn a_forward_tsn_that_arrives_is_not_repeated_for_the_sacks_already_on_their_way() {
    // RTT known, messages every 5 ms: four SACKs short of the point are in
    // flight when the FORWARD TSN leaves; none of them repeats it.
    let mut p = connected(pr_config(), pr_config());
    p.a_send(OutgoingMessage::new(0, vec![9u8; 100]));
    p.run_for(ms(500));
    let first_tsn = p.a_next_tsn();
    let t0 = p.now.as_micros() / 1000;
    p.drop_data_packet(Dir::AtoB, 2);
    for k in 0..20u8 {
        p.a_send(OutgoingMessage::new(0, vec![k; 100]).with_max_retransmits(0));
        p.run_for(ms(5));
    }
    p.run_for(ms(3000));
    assert_eq!(forward_tsns(&p), vec![(first_tsn, t0 + 35)]);
    // The first message, and the 19 after the lost one.
    assert_eq!(p.b_recv_all().len(), 20);
}

#[test]
fn a_forward_tsn_goes_last_in_a_packet_without_data_with_data_and_with_idata() {
    // Be conservative in what you send: some receivers drop a packet in
    // which a FORWARD TSN (RFC 3758 3.2) or I-FORWARD-TSN (RFC 8260 2.3)
    // is followed by another chunk, and usrsctp aborts on any control
    // chunk after DATA: it goes last, in a packet without DATA, though DATA
    // is ready to go.
    for idata in [false, true] {
        let c = Config {
            message_interleaving: idata,
            ..pr_config()
        };
        let mut p = connected(c.clone(), c);
        for n in [1, 3, 6] {
            p.drop_data_packet(Dir::AtoB, n);
        }
        // More than the window holds: new data waits when the loss is found.
        for i in 0..40u8 {
            p.a_send(OutgoingMessage::new(0, vec![i; 1000]).with_max_retransmits(0));
        }
        p.run_for(ms(3000));
        let forward = |t: u8| t == types::FORWARD_TSN || t == types::IFORWARD_TSN;
        let with_forward: Vec<&Vec<u8>> = p
            .log
            .iter()
            .filter(|l| l.seen.dir == Dir::AtoB && l.seen.chunk_types.iter().any(|&t| forward(t)))
            .map(|l| &l.seen.chunk_types)
            .collect();
        assert!(!with_forward.is_empty(), "idata {idata}: no FORWARD TSN");
        for types in &with_forward {
            assert!(
                types.last().is_some_and(|&t| forward(t))
                    && !types.contains(&types::DATA)
                    && !types.contains(&types::IDATA),
                "idata {idata}: {types:?}"
            );
        }
    }
}

#[test]
fn with_low_latency_and_no_loss_no_message_is_abandoned() {
    // RFC 3758 / RFC 7496: a limit of retransmissions counts those the
    // sender makes to recover a loss. The low-latency preset's redundant
    // copies (cause Bundled) and tail-loss probes are not: without loss,
    // no message with max_retransmits = 0 is abandoned. Bursts of a few
    // messages with pauses between, some SACKs late: probes go.
    let a = Config {
        partial_reliability: true,
        ..Config::low_latency()
    };
    let mut causes = Vec::new();
    for (b, size, mut x) in [
        (pr_config(), 200, 1u64),
        (pr_config(), 1500, 3),
        (a.clone(), 3000, 4),
    ] {
        let mut p = connected(a.clone(), b);
        // Some SACKs late, none lost: the probe goes before them.
        p.rule(|seen| {
            (seen.dir == Dir::BtoA && seen.ordinal % 4 == 0).then_some(harness::Fate::Delay(ms(60)))
        });
        let mut sent = 0;
        for i in 0..200u32 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            for _ in 0..(x >> 61) {
                let m = OutgoingMessage::new((i % 3) as u16, vec![i as u8; size]);
                p.a_send(m.with_max_retransmits(0));
                sent += 1;
            }
            p.run_for(ms([0, 1, 3, 10, 25, 60, 150, 400][(x >> 60) as usize % 8]));
            sent -= p.b_recv_all().len();
        }
        p.run_for(ms(3000));
        sent -= p.b_recv_all().len();
        assert_eq!(p.a_abandoned(), vec![], "{size}");
        assert_eq!(sent, 0, "{size}: every message arrives");
        causes.extend(p.a_retransmissions().iter().map(|r| r.2));
    }
    assert!(causes.contains(&RetransmitCause::Bundled));
    assert!(causes.contains(&RetransmitCause::TailLossProbe));
}

#[test]
fn an_abandoned_message_is_never_reported_acknowledged() {
    // RFC 3758 3.5: once the peer's cumulative ack passes an abandoned
    // message (after the FORWARD TSN), the message stays abandoned: it
    // ends in MessageAbandoned, never also in MessageAcked.
    for idata in [false, true] {
        let c = Config {
            events: true,
            message_interleaving: idata,
            ..pr_config()
        };
        let mut p = connected(c.clone(), c);
        p.drop_data_packet(Dir::AtoB, 1);
        let lost = p.a_send(OutgoingMessage::new(0, vec![1u8; 100]).with_max_retransmits(0));
        for tag in 2..=4 {
            p.run_for(ms(1));
            p.a_send(OutgoingMessage::new(0, vec![tag; 100]).with_max_retransmits(0));
        }
        p.run_for(ms(5000));
        assert_eq!(p.a_abandoned(), vec![lost], "idata {idata}");
        let acked: Vec<_> = p
            .a_events
            .iter()
            .filter_map(|(_, _, e)| match e {
                brisk_proto::Event::MessageAcked { id, .. } => Some(*id),
                _ => None,
            })
            .collect();
        assert_eq!(acked.len(), 3, "idata {idata}: {acked:?}");
        assert!(!acked.contains(&lost), "idata {idata}: {acked:?}");
    }
}

/// The New Cumulative TSN of every FORWARD TSN and I-FORWARD-TSN A sent.
fn forward_points(p: &Pair) -> Vec<u32> {
    use brisk_proto::wire::{Chunk, Packet};
    p.log
        .iter()
        .filter(|l| l.seen.dir == Dir::AtoB)
        .filter_map(|l| Packet::decode(&l.seen.bytes).ok())
        .flat_map(|pk| {
            pk.chunks
                .iter()
                .filter_map(|c| match c {
                    Chunk::ForwardTsn(f) => Some(f.new_cum_tsn),
                    Chunk::IForwardTsn(f) => Some(f.new_cum_tsn),
                    _ => None,
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn successive_forward_tsns_never_go_backwards_under_random_loss() {
    // RFC 3758 3.5: the Advanced.Peer.Ack.Point never moves back, even when
    // the peer reports (gap-acks) chunks of a message already abandoned.
    // Random loss and reordering both ways, messages of one to four
    // fragments with retransmission limits of 0 to 2, with DATA and I-DATA.
    let mut forwards = 0;
    for seed in 1..=200u64 {
        let idata = seed % 2 == 0;
        let c = Config {
            message_interleaving: idata,
            mtu: 600,
            ..pr_config()
        };
        let mut p = connected(c.clone(), c);
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut wire = next();
        p.rule(move |_| {
            wire ^= wire << 13;
            wire ^= wire >> 7;
            wire ^= wire << 17;
            match wire % 16 {
                0..=2 => Some(harness::Fate::Drop),
                3 => Some(harness::Fate::Delay(ms(15))),
                _ => None,
            }
        });
        for _ in 0..150 {
            let len = (next() % 2000 + 1) as usize;
            let stream = (next() % 3) as u16;
            let max = (next() % 3) as u32;
            p.a_send(OutgoingMessage::new(stream, vec![7; len]).with_max_retransmits(max));
            p.run_for(ms(next() % 30));
            p.b_recv_all();
        }
        p.run_for(ms(10_000));
        let points = forward_points(&p);
        forwards += points.len();
        for w in points.windows(2) {
            assert!(
                w[1].wrapping_sub(w[0]) < 1 << 31,
                "seed {seed}: FORWARD TSN to {} after one to {}: {points:?}",
                w[1],
                w[0]
            );
        }
    }
    assert!(forwards > 20, "{forwards} FORWARD TSNs");
}
