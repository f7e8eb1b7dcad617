//! The latency mechanisms, each with exact expectations, through the pair
//! harness: 10 ms one way (RTT 20 ms).

mod harness;

use std::time::Duration;

use brisk_proto::{Config, EarlyRetransmit, OutgoingMessage, RetransmitCause, Time};
use harness::{Dir, Fate, Pair, ms};

/// Connected and past the first DATA, which RFC 9260 5.1 SACKs at once:
/// B delays its SACKs as 6.2 says.
fn connected(cfg: Config) -> Pair {
    let mut p = Pair::new(ms(10), cfg.clone());
    p.connect(cfg);
    p.warm_up();
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
    assert_eq!(
        rtx,
        vec![(t0 + ms(21) + ms(5), RetransmitCause::EarlyRetransmit)]
    );
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
        assert_eq!(
            rtx,
            vec![(t0 + ms(expected), RetransmitCause::T3Timeout)],
            "restart {restart}"
        );
    }
}

/// RTO.Min 100 ms with RTO restart; the receiver delays the SACK of a lone
/// packet 200 ms. `floor` and `undo` switch the two guards against spurious
/// timeouts.
fn restart_against_delayed_sacks(floor: bool, undo: bool) -> Pair {
    let cfg = with(|c| {
        c.rto_min = ms(100);
        c.rto_initial = ms(100);
        c.rto_restart = true;
        c.ack_reach_floor = floor;
        c.spurious_timeout_undo = undo;
    });
    connected(cfg)
}

#[test]
fn the_ack_reach_floor_waits_for_the_delayed_sack_of_a_bursts_last_packet() {
    // Three messages at t0, t0 + 1 and t0 + 2 ms, none lost. The SACK of the
    // second is back at t0 + 21 ms; the third's SACK waits 200 ms at the
    // receiver and is back at t0 + 222 ms. RFC 7765 alone restarts T3 at
    // RTO (100 ms) less the third's age (19 ms): it expires at t0 + 102 ms,
    // 120 ms before the SACK, and sends the third again for nothing.
    let mut bare = restart_against_delayed_sacks(false, false);
    let t0 = burst(&mut bare, 3);
    bare.run_for(ms(1000));
    assert_eq!(
        causes(&bare),
        vec![(t0 + ms(102), RetransmitCause::T3Timeout)]
    );
    let a = bare.a_id.unwrap();
    assert_eq!(bare.a.association(a).unwrap().stats().t3_expirations, 1);
    // The floor: the third left 1 ms after the second, then the 200 ms SACK
    // delay and 4 RTTVAR: T3 is due after t0 + 222 ms, when the SACK is back.
    let mut guarded = restart_against_delayed_sacks(true, false);
    burst(&mut guarded, 3);
    guarded.run_for(ms(1000));
    assert_eq!(causes(&guarded), vec![]);
    let a = guarded.a_id.unwrap();
    assert_eq!(guarded.a.association(a).unwrap().stats().t3_expirations, 0);
    assert_eq!(guarded.b_recv_all().len(), 3);
}

#[test]
fn a_spurious_timeout_is_detected_by_the_duplicate_report_and_its_cwnd_collapse_undone() {
    // As above without the floor: T3 expires at t0 + 102 ms. The
    // retransmission reaches a receiver that holds the chunk, which reports
    // it as a duplicate at once (RFC 3708): back at t0 + 122 ms.
    let cwnd_after = |undo: bool| {
        let mut p = restart_against_delayed_sacks(false, undo);
        let a = p.a_id.unwrap();
        burst(&mut p, 3);
        let before = p.a.association(a).unwrap().stats().cwnd;
        p.run_for(ms(1000));
        let stats = p.a.association(a).unwrap().stats().clone();
        assert_eq!(stats.t3_expirations, 1);
        (
            before,
            stats.cwnd,
            stats.spurious_timeouts_undone,
            stats.rto,
        )
    };
    let (before, cwnd, undone, rto) = cwnd_after(true);
    assert_eq!((cwnd, undone), (before, 1), "cwnd back to {before}");
    assert!(rto < ms(200), "the back-off is withdrawn too: {rto:?}");
    // Without the undo, E1 left cwnd at one PMDCS (1440 bytes) and E2's
    // back-off stands until the next measurement.
    let (_, cwnd, undone, _) = cwnd_after(false);
    assert_eq!((cwnd, undone), (1440, 0));
}

#[test]
fn a_thin_stream_fast_retransmits_on_the_first_miss_indication() {
    let mut p = connected(with(|c| c.thin_fast_retransmit = true));
    p.drop_data_packet(Dir::AtoB, 1);
    let t0 = burst(&mut p, 2);
    p.run_for(ms(3000));
    assert_eq!(
        causes(&p),
        vec![(t0 + ms(21), RetransmitCause::FastRetransmit)]
    );
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
    assert_eq!(
        times,
        vec![
            t0 + ms(200),
            t0 + ms(400),
            t0 + ms(600),
            t0 + ms(800),
            t0 + ms(1000)
        ]
    );
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

/// Takes one RTT sample (20 ms) with an immediately acknowledged message.
fn warm_up(p: &mut Pair) {
    p.a_send(OutgoingMessage::new(0, vec![0; 10]).immediate_sack(true));
    p.run_for(ms(500));
}

#[test]
fn the_tail_loss_probe_fires_at_two_srtt_and_fast_retransmit_recovers_the_tail() {
    let mut p = connected(with(|c| {
        c.tail_loss_probe = true;
        c.sack_delay = Duration::from_millis(40);
    }));
    warm_up(&mut p);
    // A burst of 3, the last (tail) packet lost: nothing after it draws a SACK.
    let lost = p.data_packets(Dir::AtoB).len() as u64 + 3;
    p.drop_data_packet(Dir::AtoB, lost);
    let t0 = burst(&mut p, 3);
    p.run_for(ms(2000));
    let rtx = causes(&p);
    assert_eq!(rtx.len(), 1, "{rtx:?}");
    let (at, cause) = rtx[0];
    assert_eq!(cause, RetransmitCause::TailLossProbe);
    // The SACK for packet 2 is back at t0 + 21 ms and gives a 21 ms sample:
    // SRTT = 20 * 7/8 + 21/8 = 20.125 ms. PTO = 2 SRTT, plus the 40 ms SACK
    // delay because one packet is outstanding.
    assert_eq!(at, t0 + ms(21) + Duration::from_micros(40_250) + ms(40));
    assert_eq!(p.b_recv_all().len(), 4);
    let a = p.a_id.unwrap();
    let stats = p.a.association(a).unwrap().stats().clone();
    assert_eq!(stats.t3_expirations, 0);
}

#[test]
fn the_tail_loss_probe_never_fires_after_t3_and_leaves_cwnd_alone() {
    let mut p = connected(with(|c| c.tail_loss_probe = true));
    let a = p.a_id.unwrap();
    warm_up(&mut p);
    let cwnd = p.a.association(a).unwrap().stats().cwnd;
    // Lose everything: one probe, then T3.
    p.rule(|s| (s.dir == Dir::AtoB && s.has_data()).then_some(Fate::Drop));
    burst(&mut p, 2);
    p.run_for(ms(500));
    let rtx = causes(&p);
    assert_eq!(
        rtx.iter()
            .filter(|r| r.1 == RetransmitCause::TailLossProbe)
            .count(),
        1,
        "{rtx:?}"
    );
    assert_eq!(
        p.a.association(a).unwrap().stats().cwnd,
        cwnd,
        "no reduction for the probe"
    );
    p.run_for(ms(2000));
    assert!(causes(&p).iter().any(|r| r.1 == RetransmitCause::T3Timeout));
}

#[test]
fn a_thin_stream_sets_the_i_bit_and_gets_immediate_sacks() {
    let mut p = connected(with(|c| c.thin_immediate_sack = true));
    let t = p.now;
    p.a_send(OutgoingMessage::new(0, vec![1; 100]));
    p.run_for(ms(500));
    let data = p.data_packets(Dir::AtoB);
    assert_eq!(data[0].seen.bytes[12 + 1] & 0x08, 0x08, "I bit on the wire");
    let sack = p
        .log
        .iter()
        .find(|l| l.seen.dir == Dir::BtoA && l.seen.has_sack() && l.seen.sent_at > t)
        .unwrap();
    assert_eq!(sack.seen.sent_at, t + ms(10), "no 200 ms delayed SACK");
}

#[test]
fn redundant_bundling_carries_unacknowledged_chunks_in_front_of_new_ones() {
    let mut p = connected(with(|c| c.thin_redundant_bundling = true));
    // Message 1 is lost; message 2, sent 1 ms later, carries it again.
    p.drop_data_packet(Dir::AtoB, 1);
    let t0 = burst(&mut p, 2);
    p.run_for(ms(1000));
    let second = &p.data_packets(Dir::AtoB)[1].seen;
    assert_eq!(second.tsns.len(), 2, "the unacknowledged chunk rides along");
    assert!(second.tsns[0] < second.tsns[1], "older chunk first");
    assert_eq!(causes(&p), vec![(t0 + ms(1), RetransmitCause::Bundled)]);
    let got = p.b_recv_all();
    assert_eq!(got.len(), 2);
    assert_eq!(
        got[0].deliverable_at,
        t0 + ms(11),
        "message 1 arrives with message 2"
    );
}

#[test]
fn aggressive_bundling_fills_a_thin_fast_retransmission_with_the_earliest_chunks() {
    let mut p = connected(with(|c| {
        c.thin_fast_retransmit = true;
        c.thin_aggressive_bundling = true;
    }));
    // Packets 1 and 2 lost, 3 arrives: its SACK fast-retransmits 1 and 2 on the
    // first miss indication, and packet 2's chunk rides along as Bundled... or
    // is itself marked; either way both go in one packet.
    p.drop_data_packet(Dir::AtoB, 1);
    p.drop_data_packet(Dir::AtoB, 2);
    burst(&mut p, 3);
    p.run_for(ms(1000));
    let rtx_packets: Vec<_> = p.data_packets(Dir::AtoB).into_iter().skip(3).collect();
    assert_eq!(
        rtx_packets[0].seen.tsns.len(),
        2,
        "both missing chunks in one packet"
    );
    assert_eq!(p.b_recv_all().len(), 3);
}

#[test]
fn nagle_classic_holds_small_messages_behind_outstanding_data_minshall_does_not() {
    use brisk_proto::Nagle;
    // Three 100-byte messages 5 ms apart; the receiver delays SACKs 200 ms.
    let packets = |mode: Nagle| {
        let mut p = connected(with(|c| c.nagle = mode));
        for _ in 0..3 {
            p.a_send(OutgoingMessage::new(0, vec![1; 100]));
            p.run_for(ms(5));
        }
        p.run_for(ms(1000));
        let sizes: Vec<usize> = p
            .data_packets(Dir::AtoB)
            .iter()
            .map(|l| l.seen.tsns.len())
            .collect();
        let last_read = p
            .b_recv_all()
            .iter()
            .map(|m| m.deliverable_at)
            .max()
            .unwrap();
        (sizes, last_read)
    };
    let (off, off_t) = packets(Nagle::Off);
    assert_eq!(off, vec![1, 1, 1]);
    // Classic: message 1 goes; 2 and 3 wait for its (delayed) SACK, then share a packet.
    let (classic, classic_t) = packets(Nagle::Classic);
    assert_eq!(classic, vec![1, 2]);
    // Minshall: the same here, since message 1's packet was less than full...
    let (minshall, _) = packets(Nagle::Minshall);
    assert_eq!(minshall, vec![1, 2]);
    assert!(
        classic_t > off_t + ms(150),
        "classic waits for the delayed SACK"
    );
}

#[test]
fn minshall_sends_a_small_packet_behind_full_ones() {
    use brisk_proto::Nagle;
    // A 3000-byte message (two full packets and a small tail), then a small
    // message 5 ms later. Classic holds it behind the outstanding data;
    // Minshall holds it only behind the unacknowledged small tail.
    let run = |mode: Nagle, second_size: usize| {
        let mut p = connected(with(|c| c.nagle = mode));
        p.a_send(OutgoingMessage::new(0, vec![1; 2848]));
        p.run_for(ms(5));
        p.a_send(OutgoingMessage::new(0, vec![2; second_size]));
        p.run_for(ms(1000));
        p.data_packets(Dir::AtoB)
            .iter()
            .map(|l| l.seen.sent_at)
            .collect::<Vec<_>>()
    };
    // 2848 bytes = exactly two full packets of 1424: no small packet outstanding.
    let classic = run(Nagle::Classic, 100);
    let minshall = run(Nagle::Minshall, 100);
    assert_eq!(minshall.len(), 3);
    assert_eq!(
        minshall[2],
        minshall[0] + ms(5),
        "Minshall sends the small message at once"
    );
    assert!(classic[2] > classic[0] + ms(15), "classic waits for a SACK");
}

#[test]
fn a_corrupted_data_packet_is_retransmitted_after_one_pktdrop_with_cwnd_unchanged() {
    let cfg = with(|c| c.pktdrop = true);
    let mut p = connected(cfg);
    let (a, b) = (p.a_id.unwrap(), p.b_id.unwrap());
    p.rule(|s| (s.dir == Dir::AtoB && s.data_ordinal == Some(1)).then_some(Fate::Corrupt));
    let cwnd = p.a.association(a).unwrap().stats().cwnd;
    let t0 = burst(&mut p, 1);
    p.run_for(ms(1000));
    // Corrupted on arrival at t0 + 10 ms, reported at once, back at t0 + 20 ms.
    assert_eq!(causes(&p), vec![(t0 + ms(20), RetransmitCause::PacketDrop)]);
    let sa = p.a.association(a).unwrap().stats().clone();
    assert_eq!(
        (
            sa.pktdrops_received,
            sa.cwnd,
            sa.t3_expirations,
            sa.fast_recoveries
        ),
        (1, cwnd, 0, 0)
    );
    assert_eq!(p.b.association(b).unwrap().stats().pktdrops_sent, 1);
    assert_eq!(p.b.stats().bad_checksum, 1);
    assert_eq!(p.b_recv_all().len(), 1);
}

#[test]
fn pktdrop_is_never_sent_to_a_peer_that_did_not_offer_it() {
    // A offers PKTDROP, B does not: B's endpoint config is the default.
    let mut p = Pair::new(ms(10), Config::rfc9260());
    p.connect(with(|c| c.pktdrop = true));
    let b = p.b_id.unwrap();
    p.rule(|s| (s.dir == Dir::AtoB && s.data_ordinal == Some(1)).then_some(Fate::Corrupt));
    burst(&mut p, 1);
    p.run_for(ms(3000));
    assert_eq!(p.b.association(b).unwrap().stats().pktdrops_sent, 0);
    assert!(
        !p.log
            .iter()
            .any(|l| l.seen.has(brisk_proto::wire::chunk::types::PKTDROP))
    );
    assert_eq!(
        causes(&p).first().map(|c| c.1),
        Some(RetransmitCause::T3Timeout)
    );
}

#[test]
fn supported_extensions_is_offered_only_when_pktdrop_is_on() {
    use brisk_proto::wire::{Chunk, Packet, Param};
    let init_params = |cfg: Config| {
        let mut p = Pair::new(ms(10), cfg.clone());
        p.connect(cfg);
        let init = &p.log[0].seen.bytes;
        let packet = Packet::decode(init).unwrap();
        let Chunk::Init(i) = &packet.chunks[0] else {
            panic!()
        };
        i.params
            .iter()
            .cloned()
            .map(Param::into_owned)
            .collect::<Vec<_>>()
    };
    assert!(
        init_params(Config::rfc9260()).is_empty(),
        "the standard INIT carries no parameters"
    );
    assert_eq!(
        init_params(with(|c| c.pktdrop = true)),
        vec![Param::SupportedExtensions(vec![0x81])]
    );
}
