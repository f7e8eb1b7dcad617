//! Streams, messages, fragmentation, SACK behaviour and flow control
//! (RFC 9260 6.1, 6.2, 6.5, 6.6, 6.9) through the pair harness.

mod harness;

use std::time::Duration;

use brisk_proto::wire::chunk::types;
use brisk_proto::{Config, Event, OutgoingMessage, Time};
use harness::{Dir, Fate, Pair, ms};

fn connected(cfg: Config) -> Pair {
    let mut p = Pair::new(ms(10), cfg.clone());
    p.connect(cfg);
    p
}

#[test]
fn ordered_messages_arrive_once_in_order_with_ppid_and_stream() {
    let mut p = connected(Config::rfc9260());
    for i in 0..50u32 {
        p.a_send(
            OutgoingMessage::new((i % 3) as u16, i.to_be_bytes().to_vec()).with_ppid(1000 + i),
        );
    }
    p.run_for(ms(500));
    let got = p.b_recv_all();
    assert_eq!(got.len(), 50);
    for stream in 0..3u16 {
        let seq: Vec<u32> = got
            .iter()
            .filter(|m| m.stream_id == stream)
            .map(|m| u32::from_be_bytes(m.payload[..].try_into().unwrap()))
            .collect();
        let expected: Vec<u32> = (0..50).filter(|i| i % 3 == u32::from(stream)).collect();
        assert_eq!(seq, expected);
    }
    assert!(
        got.iter()
            .all(|m| m.ppid == 1000 + u32::from_be_bytes(m.payload[..].try_into().unwrap()))
    );
}

#[test]
fn a_large_message_is_fragmented_with_b_and_e_bits_and_reassembled() {
    let mut p = connected(Config::rfc9260());
    let body: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
    p.a_send(OutgoingMessage::new(1, body.clone()));
    p.run_for(ms(500));
    let data: usize = p
        .data_packets(Dir::AtoB)
        .iter()
        .map(|l| l.seen.tsns.len())
        .sum();
    // 1452-byte packets carry 1424 bytes of user data: 8 fragments.
    assert_eq!(data, 8);
    let got = p.b_recv_all();
    assert_eq!(got.len(), 1);
    assert_eq!(&got[0].payload[..], &body[..]);
}

#[test]
fn an_unordered_message_overtakes_a_lost_ordered_one() {
    let mut p = connected(Config::rfc9260());
    p.drop_data_packet(Dir::AtoB, 1);
    p.a_send(OutgoingMessage::new(0, &b"ordered-1"[..]));
    p.run_for(ms(1));
    p.a_send(OutgoingMessage::new(0, &b"ordered-2"[..]));
    p.run_for(ms(1));
    p.a_send(OutgoingMessage::new(0, &b"unordered"[..]).unordered(true));
    p.run_for(ms(50));
    let early: Vec<_> = p.b_recv_all().iter().map(|m| m.payload.clone()).collect();
    assert_eq!(
        early,
        vec![&b"unordered"[..]],
        "ordered-2 waits for ordered-1"
    );
    p.run_for(ms(2000));
    let late: Vec<_> = p.b_recv_all().iter().map(|m| m.payload.clone()).collect();
    assert_eq!(late, vec![&b"ordered-1"[..], &b"ordered-2"[..]]);
}

#[test]
fn delayed_sack_acks_every_second_packet_or_after_sack_delay() {
    let mut p = connected(Config::rfc9260());
    // RFC 9260 5.1: the association's first DATA chunk is SACKed at once,
    // when it arrives (10 ms).
    p.a_send(OutgoingMessage::new(0, vec![1; 100]));
    let t_warm = p.now;
    p.run_for(ms(1000));
    let first_sack = p
        .log
        .iter()
        .find(|l| l.seen.dir == Dir::BtoA && l.seen.has_sack())
        .map(|l| l.seen.sent_at);
    assert_eq!(first_sack, Some(t_warm + ms(10)));
    let sacks_before = p.log.iter().filter(|l| l.seen.has_sack()).count();
    p.a_send(OutgoingMessage::new(0, vec![1; 100]));
    let t_first = p.now;
    p.run_for(ms(1000));
    let sacks: Vec<Time> = p
        .log
        .iter()
        .filter(|l| l.seen.dir == Dir::BtoA && l.seen.has_sack())
        .map(|l| l.seen.sent_at)
        .collect();
    assert_eq!(sacks.len() - sacks_before, 1);
    // One packet: the SACK waits SACK.Delay = 200 ms after it arrives (10 ms).
    assert_eq!(*sacks.last().unwrap(), t_first + ms(210));

    // Two packets 1 ms apart: the second one is SACKed at once.
    p.a_send(OutgoingMessage::new(0, vec![1; 100]));
    let t = p.now;
    p.run_for(ms(1));
    p.a_send(OutgoingMessage::new(0, vec![1; 100]));
    p.run_for(ms(500));
    let last = p
        .log
        .iter()
        .rev()
        .find(|l| l.seen.dir == Dir::BtoA && l.seen.has_sack())
        .unwrap();
    assert_eq!(last.seen.sent_at, t + ms(11));
}

#[test]
fn the_i_bit_gets_an_immediate_sack() {
    let mut p = connected(Config::rfc9260());
    p.a_send(OutgoingMessage::new(0, vec![1; 100]).immediate_sack(true));
    let t = p.now;
    p.run_for(ms(500));
    let data = p.data_packets(Dir::AtoB);
    let bytes = &data[0].seen.bytes;
    assert_eq!(bytes[12 + 1] & 0x08, 0x08, "the I flag is on the wire");
    let sack = p
        .log
        .iter()
        .find(|l| l.seen.dir == Dir::BtoA && l.seen.has_sack() && l.seen.sent_at > t)
        .unwrap();
    assert_eq!(sack.seen.sent_at, t + ms(10));
}

#[test]
fn a_gap_is_sacked_at_once_with_its_block_and_duplicates_are_reported() {
    let mut p = connected(Config::rfc9260());
    p.drop_data_packet(Dir::AtoB, 1);
    p.rule(|s| (s.dir == Dir::AtoB && s.data_ordinal == Some(3)).then_some(Fate::Duplicate));
    p.a_send(OutgoingMessage::new(0, vec![1; 100]));
    p.run_for(ms(1));
    p.a_send(OutgoingMessage::new(0, vec![2; 100]));
    p.run_for(ms(1));
    p.a_send(OutgoingMessage::new(0, vec![3; 100]));
    p.run_for(ms(100));
    let sacks: Vec<_> = p
        .log
        .iter()
        .filter(|l| l.seen.dir == Dir::BtoA && l.seen.has_sack())
        .filter_map(|l| l.seen.sack.clone().map(|s| (l.seen.sent_at, s)))
        .collect();
    let first_tsn = p.data_packets(Dir::AtoB)[0].seen.tsns[0];
    let gap_sacks: Vec<_> = sacks.iter().filter(|(_, (_, g))| !g.is_empty()).collect();
    assert!(gap_sacks.len() >= 2, "{sacks:?}");
    // Cum ack stays before the lost TSN; the block covers the next ones.
    assert_eq!(gap_sacks[0].1, (first_tsn.wrapping_sub(1), vec![(2, 2)]));
    assert_eq!(gap_sacks[1].1.1, vec![(2, 3)]);
    let b = p.b_id.unwrap();
    assert_eq!(
        p.b.association(b).unwrap().stats().duplicate_tsns_received,
        1
    );
}

#[test]
fn max_burst_limits_new_data_packets_per_transmission_opportunity() {
    let cfg = Config {
        max_burst: 2,
        initial_cwnd: Some(100_000),
        ..Config::rfc9260()
    };
    let mut p = connected(cfg);
    for _ in 0..10 {
        p.a_send(OutgoingMessage::new(0, vec![0; 1100]));
    }
    // Everything queued at one instant; the first opportunity sends 2 packets.
    let t = p.now;
    p.run_for(ms(1));
    let sent_now = p
        .data_packets(Dir::AtoB)
        .iter()
        .filter(|l| l.seen.sent_at == t)
        .count();
    assert_eq!(sent_now, 2, "Max.Burst packets per opportunity");
    p.run_for(ms(1000));
    assert_eq!(p.b_recv_all().len(), 10);
}

#[test]
fn zero_window_stalls_the_sender_until_the_reader_drains() {
    let cfg = Config {
        receive_buffer: 4000,
        max_message_size: 20_000,
        ..Config::rfc9260()
    };
    let mut p = connected(cfg);
    for i in 0..20u8 {
        p.a_send(OutgoingMessage::new(0, vec![i; 1000]));
    }
    p.run_for(ms(3000));
    let b = p.b_id.unwrap();
    let buffered: usize = {
        let stats = p.b.association(b).unwrap().stats().clone();
        stats.payload_bytes_received as usize
    };
    assert!(
        buffered <= 5000,
        "B holds at most its window plus a probe: {buffered}"
    );
    // Reading opens the window; everything arrives, exactly once, in order.
    // Dropped zero window probes wait for T3, which backs off (RFC 9260 6.1 A).
    let mut all = Vec::new();
    for _ in 0..120 {
        all.extend(p.b_recv_all());
        p.run_for(ms(500));
    }
    all.extend(p.b_recv_all());
    let firsts: Vec<u8> = all.iter().map(|m| m.payload[0]).collect();
    assert_eq!(firsts, (0..20).collect::<Vec<u8>>());
}

#[test]
fn sending_on_a_stream_beyond_the_negotiated_count_is_refused() {
    let b_cfg = Config {
        max_inbound_streams: 2,
        ..Config::rfc9260()
    };
    let mut p = Pair::new(ms(10), b_cfg);
    let (a, _) = p.connect(Config::rfc9260());
    assert_eq!(p.a.association(a).unwrap().outbound_streams(), 2);
    let now = p.now;
    let err =
        p.a.association(a)
            .unwrap()
            .send(now, OutgoingMessage::new(5, vec![1]))
            .unwrap_err();
    assert!(err.to_string().contains("stream 5 does not exist"), "{err}");
}

#[test]
fn message_ready_is_reported_when_data_becomes_deliverable() {
    let mut p = connected(Config::rfc9260());
    let t = p.now;
    p.a_send(OutgoingMessage::new(0, vec![7; 10]));
    p.run_for(ms(100));
    let ready: Vec<Time> = p
        .b_events
        .iter()
        .filter(|(_, _, e)| *e == Event::MessageReady)
        .map(|(at, ..)| *at)
        .collect();
    assert_eq!(ready, vec![t + ms(10)]);
    let m = p.b_recv_all().remove(0);
    assert_eq!((m.completed_at, m.deliverable_at), (t + ms(10), t + ms(10)));
    assert!(p.log.iter().any(|l| l.seen.has(types::DATA)));
}

#[test]
fn a_message_the_receive_buffer_can_never_hold_ends_the_association_with_a_reason() {
    // B's own MTU would carry 69,000 bytes in two fragments, which its buffer
    // and allowance hold (`validate` checks that); A's MTU cuts them into 49,
    // whose bookkeeping does not fit.
    let b_cfg = Config {
        receive_buffer: 4000,
        mtu: 65_535,
        max_message_size: 69_000,
        ..Config::rfc9260()
    };
    assert!(b_cfg.validate().is_ok());
    let mut p = Pair::new(ms(10), b_cfg);
    p.connect(Config::rfc9260());
    p.a_send(OutgoingMessage::new(0, vec![3; 69_000]));
    p.run_for(ms(5_000));
    let reason = p
        .b_events
        .iter()
        .find_map(|(_, _, e)| match e {
            brisk_proto::Event::Closed(brisk_proto::CloseReason::LocalAbort { reason }) => {
                Some(reason.clone())
            }
            _ => None,
        })
        .expect("B aborted");
    assert!(
        reason.contains("larger than the receive buffer"),
        "{reason}"
    );
    // The sender learns it from the ABORT.
    assert!(p.a_events.iter().any(|(_, _, e)| matches!(
        e,
        brisk_proto::Event::Closed(brisk_proto::CloseReason::PeerAbort { .. })
    )));
}

/// When B's SACK for A's one message left, after the message arrived.
fn sack_wait_for_an_i_bit_message(b_honours: bool) -> Duration {
    let b_cfg = Config {
        honor_i_bit: b_honours,
        ..Config::rfc9260()
    };
    let mut p = Pair::new(ms(10), b_cfg);
    p.connect(Config::rfc9260());
    // Past the first DATA, which RFC 9260 5.1 SACKs at once either way.
    p.warm_up();
    let mark = p.log.len();
    p.a_send(OutgoingMessage::new(0, &b"now"[..]).immediate_sack(true));
    p.run_for(ms(1000));
    let data_at = p.log[mark..]
        .iter()
        .find(|l| l.seen.dir == Dir::AtoB && l.seen.has_data())
        .map(|l| l.seen.sent_at + ms(10))
        .expect("DATA");
    let sack_at = p.log[mark..]
        .iter()
        .find(|l| l.seen.dir == Dir::BtoA && l.seen.has_sack())
        .map(|l| l.seen.sent_at)
        .expect("SACK");
    sack_at.since(data_at)
}

#[test]
fn an_rfc_7053_receiver_sacks_an_i_bit_at_once_and_an_lksctp_2_6_15_one_delays() {
    assert_eq!(sack_wait_for_an_i_bit_message(true), Duration::ZERO);
    // Linux 2.6.15 predates the I bit: the delayed SACK waits SACK.Delay.
    assert_eq!(
        sack_wait_for_an_i_bit_message(false),
        Config::rfc9260().sack_delay
    );
    assert!(!Config::lksctp_2_6_15().honor_i_bit);
}

/// When A's T3 retransmits its first, lost, DATA chunk: (first sent, retransmitted).
fn t3_after_a_loss(granularity: Duration) -> (Time, Time) {
    let cfg = Config {
        timer_granularity: granularity,
        ..Config::rfc9260()
    };
    let mut p = Pair::new(ms(10), cfg.clone());
    p.connect(cfg);
    // Off the 4 ms grid.
    p.run_for(Duration::from_micros(1_234));
    p.drop_data_packet(Dir::AtoB, 1);
    p.a_send(OutgoingMessage::new(0, &b"lost once"[..]));
    p.run_for(ms(3_000));
    let (at, _, cause) = p.a_retransmissions()[0];
    assert_eq!(cause, brisk_proto::RetransmitCause::T3Timeout);
    let first = p.data_packets(Dir::AtoB)[0].seen.sent_at;
    (first, at)
}

#[test]
fn with_a_timer_granularity_t3_fires_on_the_next_tick() {
    let rto = Config::rfc9260().rto_initial;
    let (first, at) = t3_after_a_loss(Duration::ZERO);
    assert_eq!(at, first + rto, "exactly on time without ticks");
    let (first, at) = t3_after_a_loss(ms(4));
    assert_eq!(at.as_micros() % 4_000, 0, "on a 4 ms tick: {at}");
    assert!(
        at >= first + rto && at < first + rto + ms(4),
        "{first} {at}"
    );
}
