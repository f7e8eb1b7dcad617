//! Partial reliability (RFC 3758 with RFC 7496's policies) through the pair
//! harness, with exact expectations: 10 ms one way, so RTT 20 ms.

mod harness;

use std::time::Duration;

use brisk_proto::wire::chunk::types;
use brisk_proto::{Config, Event, MessageId, OutgoingMessage};
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

fn abandoned(p: &Pair) -> Vec<MessageId> {
    p.a_events
        .iter()
        .filter_map(|(_, _, e)| match e {
            Event::MessageAbandoned { id } => Some(*id),
            _ => None,
        })
        .collect()
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
    assert!(abandoned(&p).is_empty());
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
    assert_eq!(abandoned(&p), vec![lost]);
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
    assert_eq!(abandoned(&p), vec![timed]);
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
    assert_eq!(abandoned(&p), vec![timed]);
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
    assert_eq!(abandoned(&p), vec![big]);
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
