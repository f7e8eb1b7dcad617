//! The latency mechanisms, each with exact expectations, through the pair
//! harness: 10 ms one way (RTT 20 ms).

mod harness;

use std::time::Duration;

use brisk_proto::{Config, EarlyRetransmit, OutgoingMessage, RetransmitCause, Time};
use harness::{Dir, Fate, Pair, ms};

fn connected(cfg: Config) -> Pair {
    let mut p = Pair::new(ms(10), cfg.clone());
    p.connect(cfg);
    p
}

/// Sends `n` 200-byte messages 1 ms apart (one packet each), from t0 = 1 s.
fn burst(p: &mut Pair, n: u64) -> Time {
    p.run_for(ms(1000) - Duration::from_micros(p.now.as_micros()));
    let t0 = p.now;
    for i in 0..n {
        p.a_send(OutgoingMessage::new(0, vec![i as u8; 200]));
        p.run_for(ms(1));
    }
    t0
}

fn causes(p: &Pair) -> Vec<(Time, RetransmitCause)> {
    p.a_retransmissions().iter().map(|r| (r.0, r.2)).collect()
}

fn with(f: impl FnOnce(&mut Config)) -> Config {
    let mut c = Config::rfc9260();
    f(&mut c);
    c
}

#[test]
fn packet_based_er_fires_at_once_on_two_packets_out_and_byte_based_does_not() {
    // Two packets out, the first lost, one SACK (for the second) comes back.
    for (mode, expected) in [
        (EarlyRetransmit::Packets, RetransmitCause::EarlyRetransmit),
        (EarlyRetransmit::Bytes, RetransmitCause::T3Timeout),
    ] {
        let mut p = connected(with(|c| c.early_retransmit = mode));
        p.drop_data_packet(Dir::AtoB, 1);
        let t0 = burst(&mut p, 2);
        p.run_for(ms(3000));
        let rtx = causes(&p);
        assert_eq!(rtx.len(), 1, "{mode:?}: {rtx:?}");
        assert_eq!(rtx[0].1, expected, "{mode:?}");
        if mode == EarlyRetransmit::Packets {
            // The SACK for packet 2 (sent at t0 + 1 ms) is back 20 ms later.
            assert_eq!(rtx[0].0, t0 + ms(21));
        }
        assert_eq!(p.b_recv_all().len(), 2);
    }
}

#[test]
fn packet_based_er_recovers_all_but_the_last_message_of_a_burst_of_four() {
    // Seed 000's setting: lksctp's threshold of 4, so only ER can act early.
    for k in 1..=4u64 {
        let mut p = connected(Config {
            fast_retransmit_threshold: 4,
            ..Config::signaling()
        });
        p.drop_data_packet(Dir::AtoB, k);
        burst(&mut p, 4);
        p.run_for(ms(2000));
        let rtx = causes(&p);
        assert_eq!(rtx.len(), 1, "k = {k}: {rtx:?}");
        let expected = if k < 4 {
            RetransmitCause::EarlyRetransmit
        } else {
            RetransmitCause::T3Timeout
        };
        assert_eq!(rtx[0].1, expected, "k = {k}");
    }
}

#[test]
fn a_reordering_delay_holds_early_retransmit_for_max_srtt_over_4_and_2_ms() {
    let mut p = connected(with(|c| {
        c.early_retransmit = EarlyRetransmit::Packets;
        c.early_retransmit_delay = true;
    }));
    // An RTT sample first: SRTT 20 ms, so the delay is 5 ms.
    p.a_send(OutgoingMessage::new(0, vec![0; 10]).immediate_sack(true));
    p.run_for(ms(500));
    let lost = p.data_packets(Dir::AtoB).len() as u64 + 1;
    p.drop_data_packet(Dir::AtoB, lost);
    let t0 = burst(&mut p, 2);
    p.run_for(ms(3000));
    let rtx = causes(&p);
    assert_eq!(rtx, vec![(t0 + ms(21) + ms(5), RetransmitCause::EarlyRetransmit)]);
}

#[test]
fn a_reordered_packet_cancels_the_delayed_early_retransmit() {
    let mut p = connected(with(|c| {
        c.early_retransmit = EarlyRetransmit::Packets;
        c.early_retransmit_delay = true;
    }));
    // The first packet arrives 3 ms late (after the second): within the 2 ms
    // minimum delay plus the SACK's travel, it is acknowledged before ER fires.
    p.rule(|s| (s.dir == Dir::AtoB && s.data_ordinal == Some(1)).then_some(Fate::Delay(ms(3))));
    burst(&mut p, 2);
    p.run_for(ms(3000));
    assert!(causes(&p).is_empty(), "{:?}", causes(&p));
}

#[test]
fn rto_restart_times_a_lost_second_message_from_its_own_send() {
    // Message 2 is lost and is the last: only T3 can recover it. The SACK for
    // message 1 is delayed 200 ms by the receiver and restarts T3.
    for (restart, expected) in [(false, 1220), (true, 1001)] {
        let mut p = connected(with(|c| c.rto_restart = restart));
        p.drop_data_packet(Dir::AtoB, 2);
        let t0 = burst(&mut p, 2);
        p.run_for(ms(3000));
        let rtx = causes(&p);
        // R3: RTO (1 s) after the SACK at t0 + 220 ms; RFC 7765: RTO after
        // message 2 was sent, at t0 + 1 ms.
        assert_eq!(rtx, vec![(t0 + ms(expected), RetransmitCause::T3Timeout)], "restart {restart}");
    }
}

#[test]
fn a_thin_stream_fast_retransmits_on_the_first_miss_indication() {
    let mut p = connected(with(|c| c.thin_fast_retransmit = true));
    p.drop_data_packet(Dir::AtoB, 1);
    let t0 = burst(&mut p, 2);
    p.run_for(ms(3000));
    assert_eq!(causes(&p), vec![(t0 + ms(21), RetransmitCause::FastRetransmit)]);
}

#[test]
fn a_thin_stream_uses_its_own_rto_min_and_linear_timeouts() {
    let cfg = with(|c| {
        c.thin_rto_min = Some(ms(200));
        c.thin_linear_timeouts = true;
        c.heartbeats = false;
    });
    let mut p = connected(cfg);
    // An RTT sample first (20 ms), so RTO = max(SRTT + 4 RTTVAR, 200 ms) = 200 ms.
    p.a_send(OutgoingMessage::new(0, vec![0; 10]).immediate_sack(true));
    p.run_for(ms(500));
    p.rule(|s| (s.dir == Dir::AtoB && s.has_data()).then_some(Fate::Drop));
    let t0 = burst(&mut p, 1);
    p.run_for(ms(1100));
    let times: Vec<Time> = causes(&p).iter().map(|r| r.0).collect();
    // Linear: every 200 ms, not 200, 400, 800.
    assert_eq!(times, vec![t0 + ms(200), t0 + ms(400), t0 + ms(600), t0 + ms(800), t0 + ms(1000)]);
}

#[test]
fn without_thin_switches_timeouts_back_off_from_rto_min() {
    let mut p = connected(with(|c| c.heartbeats = false));
    p.rule(|s| (s.dir == Dir::AtoB && s.has_data()).then_some(Fate::Drop));
    let t0 = burst(&mut p, 1);
    p.run_for(ms(8000));
    let times: Vec<Time> = causes(&p).iter().map(|r| r.0).collect();
    assert_eq!(times, vec![t0 + ms(1000), t0 + ms(3000), t0 + ms(7000)]);
}
