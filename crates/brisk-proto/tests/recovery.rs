//! Loss recovery (RFC 9260 6.3, 7.2) with exact expectations, through the pair
//! harness: 10 ms one way, so RTT 20 ms.

mod harness;

use std::time::Duration;

use brisk_proto::{CloseReason, Config, Event, OutgoingMessage, RetransmitCause, Time};
use harness::{Dir, Fate, Pair, ms};

/// Connects, then sends `n` 200-byte messages 1 ms apart, each in its own
/// packet (seed 000's burst), starting at t0 = 1 s.
fn burst(p: &mut Pair, n: u64) -> Time {
    p.run_for(ms(1000) - Duration::from_micros(p.now.as_micros()));
    let t0 = p.now;
    for i in 0..n {
        p.a_send(OutgoingMessage::new(0, vec![i as u8; 200]));
        p.run_for(ms(1));
    }
    t0
}

fn connected(cfg: Config) -> Pair {
    let mut p = Pair::new(ms(10), cfg.clone());
    p.connect(cfg);
    p
}

#[test]
fn single_loss_in_a_burst_of_four_is_recovered_by_t3_at_rto_min_after_the_restart() {
    let mut p = connected(Config::rfc9260());
    // Past the first DATA, which RFC 9260 5.1 SACKs at once.
    p.warm_up();
    p.drop_data_packet(Dir::AtoB, 3);
    let t0 = burst(&mut p, 4);
    p.run_for(ms(3000));
    let rtx = p.a_retransmissions();
    assert_eq!(rtx.len(), 1, "{rtx:?}");
    let (at, tsn, cause) = rtx[0];
    assert_eq!(cause, RetransmitCause::T3Timeout);
    assert_eq!(
        Some(tsn),
        p.data_packets(Dir::AtoB)[2].seen.tsns.first().copied()
    );
    // The SACK for packets 1 and 2 reaches A at t0 + 1 ms + 20 ms and restarts
    // T3 (R3) with RTO = RTO.Min = 1 s: the timeout fires at t0 + 1021 ms.
    assert_eq!(at, t0 + ms(1021));
    assert_eq!(p.b_recv_all().len(), 4);
}

#[test]
fn threshold_four_fast_retransmits_only_losses_with_four_packets_behind_them() {
    for k in 1..=7u64 {
        let mut p = connected(Config::lksctp_2_6_15());
        p.drop_data_packet(Dir::AtoB, k);
        burst(&mut p, 7);
        p.run_for(ms(3000));
        let rtx = p.a_retransmissions();
        assert_eq!(rtx.len(), 1, "k = {k}: {rtx:?}");
        let expected = if k <= 3 {
            RetransmitCause::FastRetransmit
        } else {
            RetransmitCause::T3Timeout
        };
        assert_eq!(rtx[0].2, expected, "k = {k}");
        assert_eq!(p.b_recv_all().len(), 7, "k = {k}");
    }
}

#[test]
fn fast_retransmit_goes_out_on_the_sack_with_the_fourth_miss_indication() {
    let mut p = connected(Config::lksctp_2_6_15());
    p.drop_data_packet(Dir::AtoB, 1);
    let t0 = burst(&mut p, 7);
    p.run_for(ms(1000));
    let (at, _, cause) = p.a_retransmissions()[0];
    assert_eq!(cause, RetransmitCause::FastRetransmit);
    // Packet k+4 = 5 leaves at t0 + 4 ms, its SACK is back 20 ms later.
    assert_eq!(at, t0 + ms(24));
}

#[test]
fn cwnd_halves_on_fast_retransmit_and_collapses_on_t3() {
    let cfg = Config {
        initial_cwnd: Some(20_000),
        ..Config::rfc9260()
    };
    let mut p = connected(cfg);
    let a = p.a_id.unwrap();
    p.drop_data_packet(Dir::AtoB, 1);
    burst(&mut p, 5);
    p.run_for(ms(100));
    let stats = p.a.association(a).unwrap().stats().clone();
    assert_eq!(stats.retransmissions(RetransmitCause::FastRetransmit), 1);
    assert_eq!(stats.fast_recoveries, 1);
    assert_eq!((stats.cwnd, stats.ssthresh), (10_000, 10_000));

    // Now lose everything A sends: T3 collapses cwnd to one PMDCS.
    p.rule(|s| (s.dir == Dir::AtoB && s.has_data()).then_some(Fate::Drop));
    p.run_for(ms(500));
    p.a_send(OutgoingMessage::new(0, vec![9; 100]));
    p.run_for(ms(1500));
    let stats = p.a.association(a).unwrap().stats().clone();
    assert_eq!(stats.t3_expirations, 1);
    assert_eq!(stats.cwnd, 1440, "1452-byte packets: PMDCS = 1452 - 12");
    // ssthresh = max(cwnd / 2, 4 * PMDCS) = max(10000 / 2, 5760).
    assert_eq!(stats.ssthresh, 5760);
}

#[test]
fn a_chunk_is_fast_retransmitted_at_most_once() {
    let mut p = connected(Config::rfc9260());
    p.drop_data_packet(Dir::AtoB, 1);
    // Also lose the fast retransmission (the 7th DATA packet A sends).
    p.drop_data_packet(Dir::AtoB, 7);
    burst(&mut p, 6);
    p.run_for(ms(5000));
    let causes: Vec<_> = p.a_retransmissions().iter().map(|r| r.2).collect();
    assert_eq!(
        causes,
        vec![RetransmitCause::FastRetransmit, RetransmitCause::T3Timeout]
    );
    assert_eq!(p.b_recv_all().len(), 6);
}

/// Sends 40 messages 1 ms apart with the 1st DATA packet lost and, when
/// `fr_ordinal` is given, that DATA packet (the fast retransmission) lost too.
fn lost_fast_retransmission(cfg: Config, fr_ordinal: Option<u64>) -> Pair {
    let mut p = connected(cfg);
    p.drop_data_packet(Dir::AtoB, 1);
    if let Some(k) = fr_ordinal {
        p.drop_data_packet(Dir::AtoB, k);
    }
    burst(&mut p, 40);
    p.run_for(ms(5000));
    p
}

#[test]
fn a_lost_fast_retransmission_is_fast_retransmitted_again_with_lost_retransmission_detection() {
    let cfg = Config {
        lost_retransmission_detection: true,
        ..Config::rfc9260()
    };
    // Where the fast retransmission of the 1st message goes: new data keeps
    // flowing behind it, 1 ms apart.
    let probe = lost_fast_retransmission(cfg.clone(), None);
    let (fr_at, tsn, cause) = probe.a_retransmissions()[0];
    assert_eq!(cause, RetransmitCause::FastRetransmit);
    let fr = probe
        .data_packets(Dir::AtoB)
        .iter()
        .find(|l| l.seen.sent_at == fr_at && l.seen.tsns.contains(&tsn))
        .and_then(|l| l.seen.data_ordinal)
        .unwrap();
    assert!(fr > 10, "new data was sent before it: {fr}");

    let mut p = lost_fast_retransmission(cfg, Some(fr));
    let rtx = p.a_retransmissions();
    let causes: Vec<_> = rtx.iter().map(|r| r.2).collect();
    assert_eq!(
        causes,
        vec![
            RetransmitCause::FastRetransmit,
            RetransmitCause::FastRetransmit
        ],
        "{rtx:?}"
    );
    assert!(rtx.iter().all(|r| r.1 == tsn));
    // The second goes when SACKs for three packets sent after the first
    // report the TSN missing: one RTT (20 ms) and three packets (1 ms apart,
    // SACKed every second one) later, long before T3 (RTO.Min 1 s).
    let gap = rtx[1].0 - rtx[0].0;
    assert!(gap >= ms(22) && gap <= ms(26), "{gap:?}");
    assert_eq!(p.b_recv_all().len(), 40);

    // RFC 9260 7.2.4 alone leaves the lost retransmission to T3.
    let p = lost_fast_retransmission(Config::rfc9260(), Some(fr));
    let causes: Vec<_> = p.a_retransmissions().iter().map(|r| r.2).collect();
    assert_eq!(
        causes,
        vec![RetransmitCause::FastRetransmit, RetransmitCause::T3Timeout]
    );
}

#[test]
fn t3_backs_off_and_the_association_fails_after_max_retrans() {
    let cfg = Config {
        assoc_max_retrans: 3,
        heartbeats: false,
        ..Config::rfc9260()
    };
    let mut p = connected(cfg);
    p.rule(|s| (s.dir == Dir::AtoB && s.has_data()).then_some(Fate::Drop));
    let t0 = burst(&mut p, 1);
    p.run_for(ms(60_000));
    let times: Vec<Time> = p.a_retransmissions().iter().map(|r| r.0).collect();
    // RTO 1 s (no measurement yet), doubled each time: +1, +3, +7 s.
    assert_eq!(times, vec![t0 + ms(1000), t0 + ms(3000), t0 + ms(7000)]);
    let closed = p
        .a_events
        .iter()
        .find_map(|(t, _, e)| match e {
            Event::Closed(r) => Some((*t, r.clone())),
            _ => None,
        })
        .expect("closed");
    assert_eq!(
        closed,
        (t0 + ms(15_000), CloseReason::PeerUnreachable { errors: 4 })
    );
    assert!(
        p.a_events
            .iter()
            .any(|(_, _, e)| matches!(e, Event::SendFailed { .. })),
        "the unacknowledged message is reported failed"
    );
}

#[test]
fn karn_rule_takes_no_rtt_sample_from_a_retransmission() {
    let mut p = connected(Config::rfc9260());
    let a = p.a_id.unwrap();
    p.drop_data_packet(Dir::AtoB, 1);
    burst(&mut p, 1);
    p.run_for(ms(3000));
    let stats = p.a.association(a).unwrap().stats().clone();
    assert_eq!(stats.t3_expirations, 1);
    assert_eq!(stats.srtt, None, "the only DATA was retransmitted");
    // The next message, sent once, gives the first sample: RTT 20 ms.
    p.a_send(OutgoingMessage::new(0, vec![1; 10]));
    p.run_for(ms(1000));
    let srtt = p.a.association(a).unwrap().stats().srtt;
    assert!(
        srtt.is_some_and(|s| s >= ms(20) && s <= ms(220)),
        "{srtt:?}"
    );
}

#[test]
fn retransmission_events_carry_first_send_time_and_count() {
    let mut p = connected(Config::rfc9260());
    p.drop_data_packet(Dir::AtoB, 1);
    let t0 = burst(&mut p, 1);
    p.run_for(ms(2000));
    let e = p
        .a_events
        .iter()
        .find_map(|(_, _, e)| match e {
            Event::Retransmission {
                first_sent_at,
                transmissions,
                ..
            } => Some((*first_sent_at, *transmissions)),
            _ => None,
        })
        .unwrap();
    assert_eq!(e, (t0, 2));
    let acked = p
        .a_events
        .iter()
        .find_map(|(_, _, e)| match e {
            Event::MessageAcked {
                queued_at,
                first_sent_at,
                acked_at,
                ..
            } => Some((*queued_at, *first_sent_at, *acked_at)),
            _ => None,
        })
        .unwrap();
    assert_eq!(acked.0, t0);
    assert_eq!(acked.1, t0);
    assert!(acked.2 > t0 + ms(1000));
}

#[test]
fn with_events_off_counters_still_count_but_no_per_message_events_are_made() {
    let cfg = Config {
        events: false,
        ..Config::rfc9260()
    };
    let mut p = connected(cfg);
    let a = p.a_id.unwrap();
    p.drop_data_packet(Dir::AtoB, 1);
    burst(&mut p, 2);
    p.run_for(ms(3000));
    let stats = p.a.association(a).unwrap().stats().clone();
    assert_eq!(stats.total_retransmissions(), 1);
    assert_eq!(stats.messages_acked, 2);
    assert!(!p.a_events.iter().any(|e| matches!(
        e.2,
        Event::Retransmission { .. } | Event::MessageAcked { .. }
    )));
}

#[test]
fn sacks_lost_in_a_time_window_cause_spurious_t3_retransmissions_reported_as_duplicates() {
    let cfg = Config {
        heartbeats: false,
        ..Config::rfc9260()
    };
    let mut p = connected(cfg);
    let (a, b) = (p.a_id.unwrap(), p.b_id.unwrap());
    let t1 = Time::from_millis(1000);
    let t2 = Time::from_millis(2500);
    // Every SACK B sends between t1 and t2 is lost.
    p.rule(move |s| {
        (s.dir == Dir::BtoA && s.has_sack() && s.sent_at >= t1 && s.sent_at < t2)
            .then_some(Fate::Drop)
    });
    let t0 = burst(&mut p, 1);
    assert_eq!(t0, t1);
    p.run_for(ms(6000));
    let times: Vec<Time> = p.a_retransmissions().iter().map(|r| r.0).collect();
    // T3 at t0 + 1 s; its duplicate's SACK (t0 + 1010 ms) is lost too; the next
    // T3, backed off to 2 s, fires at t0 + 3 s, and that SACK gets through.
    assert_eq!(times, vec![t0 + ms(1000), t0 + ms(3000)]);
    assert_eq!(
        p.b.association(b).unwrap().stats().duplicate_tsns_received,
        2
    );
    assert_eq!(p.b_recv_all().len(), 1, "delivered once");
    assert_eq!(p.a.association(a).unwrap().stats().messages_acked, 1);
}

#[test]
fn lost_retransmission_detection_never_fires_when_only_one_packet_is_lost() {
    // low-latency: thin (threshold 1) with redundant copies in new packets,
    // whose SACKs must not be read as evidence against a retransmission
    // still on its way. Every position of a burst of seven.
    for k in 1..=7u64 {
        let mut p = connected(Config::low_latency());
        p.drop_data_packet(Dir::AtoB, k);
        burst(&mut p, 7);
        p.run_for(ms(3000));
        let fast: Vec<_> = p
            .a_retransmissions()
            .into_iter()
            .filter(|r| r.2 == RetransmitCause::FastRetransmit)
            .collect();
        assert!(fast.len() <= 1, "k = {k}: {fast:?}");
        assert_eq!(p.b_recv_all().len(), 7, "k = {k}");
    }
}
