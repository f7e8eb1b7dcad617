//! Loss recovery with exact expectations, 10 ms one way (RTT 20 ms). The
//! connection is up at 30 ms; data starts at t0 = 1 s.

mod harness;

use std::time::Duration;

use brisk_tcp::{RetransmitCause, TcpConfig, Time};
use harness::{Dir, Pair, ms, pattern, rfc_no_delack};

const MSS: usize = 1460;

fn t0() -> Time {
    Time::from_secs(1)
}

/// A connected pair (A sending with `a`, B with `b`), at t0.
fn pair(a: TcpConfig, b: TcpConfig) -> Pair {
    let mut p = Pair::new(ms(10), a, b);
    p.connect();
    p.run_to(t0());
    p
}

/// Writes `n` full segments one every `gap` (all at once for zero).
fn write_segments(p: &mut Pair, n: usize, mss: usize, gap: Duration) {
    for i in 0..n {
        p.a_write(&pattern(mss));
        if !gap.is_zero() && i + 1 < n {
            p.run_for(gap);
        }
    }
}

#[test]
fn a_single_loss_is_fast_retransmitted_on_the_third_duplicate_ack_and_halves_cwnd_in_bytes() {
    let a = TcpConfig {
        initial_window: Some(15),
        ..TcpConfig::rfc()
    };
    let mut p = pair(a, rfc_no_delack());
    p.drop_data(Dir::AtoB, 1);
    // Segment k leaves at t0 + (k-1) ms; its duplicate ACK is back 20 ms later.
    write_segments(&mut p, 15, MSS, ms(1));
    p.run_for(ms(500));
    // The third duplicate ACK comes from segment 4: t0 + 3 + 20 ms.
    assert_eq!(
        p.a_retransmissions(),
        vec![(t0() + ms(23), 0, RetransmitCause::FastRetransmit, 2)]
    );
    let s = p.a_stats();
    assert_eq!(s.duplicate_acks_received, 14);
    assert_eq!(s.fast_recoveries, 1);
    assert_eq!(s.rto_expirations, 0);
    // FlightSize at the loss: 15 segments; ssthresh = 15 * 1460 / 2; the
    // ACK of the retransmission ends recovery with cwnd = ssthresh.
    assert_eq!((s.ssthresh, s.cwnd), (10_950, 10_950));
    assert_eq!(p.b_received, pattern(MSS).repeat(15));
}

#[test]
fn packet_counted_cwnd_halves_15_segments_to_7() {
    let a = TcpConfig {
        initial_window: Some(15),
        ..TcpConfig::ns2_sack1()
    };
    let mut p = pair(a, TcpConfig::ns2_sack1());
    p.drop_data(Dir::AtoB, 1);
    write_segments(&mut p, 15, 1480, ms(1));
    p.run_for(ms(500));
    assert_eq!(
        p.a_retransmissions(),
        vec![(t0() + ms(23), 0, RetransmitCause::FastRetransmit, 2)]
    );
    let s = p.a_stats();
    assert_eq!((s.ssthresh, s.cwnd), (7 * 1480, 7 * 1480));
    assert_eq!(s.fast_recoveries, 1);
}

#[test]
fn newreno_repairs_two_losses_in_one_window_with_partial_acks_and_one_reduction() {
    let cfg = TcpConfig {
        sack: false,
        initial_window: Some(10),
        delayed_ack: None,
        ..TcpConfig::rfc()
    };
    let mut p = pair(cfg.clone(), cfg);
    p.drop_data(Dir::AtoB, 3);
    p.drop_data(Dir::AtoB, 6);
    write_segments(&mut p, 10, MSS, Duration::ZERO);
    p.run_for(ms(500));
    let m = MSS as u64;
    // All ten leave at t0; the six duplicate ACKs are back at t0 + 20 ms
    // (the third triggers); the partial ACK for 3-5 is back at t0 + 40 ms.
    assert_eq!(
        p.a_retransmissions(),
        vec![
            (t0() + ms(20), 2 * m, RetransmitCause::FastRetransmit, 2),
            (t0() + ms(40), 5 * m, RetransmitCause::FastRetransmit, 2),
        ]
    );
    let s = p.a_stats();
    assert_eq!(s.fast_recoveries, 1);
    assert_eq!(s.rto_expirations, 0);
    assert_eq!(s.duplicate_acks_received, 6);
    // At the third duplicate ACK segments 1 and 2 are acknowledged: FlightSize
    // is 8 segments, ssthresh = 8 * 1460 / 2; the full ACK leaves cwnd = ssthresh.
    assert_eq!((s.ssthresh, s.cwnd), (5840, 5840));
    assert_eq!(p.b_received.len(), 10 * MSS);
}

#[test]
fn rfc6675_recovers_every_other_segment_lost_in_one_window_without_rto() {
    let a = TcpConfig {
        initial_window: Some(12),
        ..TcpConfig::rfc()
    };
    let mut p = pair(a, rfc_no_delack());
    for k in [2, 4, 6] {
        p.drop_data(Dir::AtoB, k);
    }
    write_segments(&mut p, 12, MSS, Duration::ZERO);
    p.run_for(ms(500));
    let m = MSS as u64;
    // Every SACK is back at t0 + 20 ms: by the last of them IsLost holds for
    // 2, 4 and 6, and the pipe (one retransmission) lets all three go.
    assert_eq!(
        p.a_retransmissions(),
        vec![
            (t0() + ms(20), m, RetransmitCause::FastRetransmit, 2),
            (t0() + ms(20), 3 * m, RetransmitCause::FastRetransmit, 2),
            (t0() + ms(20), 5 * m, RetransmitCause::FastRetransmit, 2),
        ]
    );
    let s = p.a_stats();
    assert_eq!((s.fast_recoveries, s.rto_expirations), (1, 0));
    // FlightSize at entry: segments 2..12 = 11; ssthresh = cwnd = 8030.
    assert_eq!((s.ssthresh, s.cwnd), (8030, 8030));
    assert_eq!(p.b_received, pattern(MSS).repeat(12));
    // One ACK per segment that arrived: 1 acknowledged, then 8 duplicates; the last
    // reports the holes with SACK blocks, the latest first (RFC 2018 4).
    let acks: Vec<_> = p
        .segments(Dir::BtoA)
        .into_iter()
        .filter(|s| s.sent_at == t0() + ms(10))
        .collect();
    assert_eq!(acks.len(), 9);
    let last_dup = acks.last().unwrap();
    let isn = p.isn(Dir::AtoB);
    let off = |w: u32| u64::from(w.wrapping_sub(isn).wrapping_sub(1));
    let blocks: Vec<(u64, u64)> = last_dup
        .sack()
        .iter()
        .map(|(l, r)| (off(*l), off(*r)))
        .collect();
    assert_eq!(
        blocks,
        vec![(6 * m, 12 * m), (4 * m, 5 * m), (2 * m, 3 * m)]
    );
}

#[test]
fn a_lost_fast_retransmission_is_repaired_by_the_rto_one_rto_after_the_first_send() {
    let a = TcpConfig {
        initial_window: Some(15),
        ..TcpConfig::rfc()
    };
    let mut p = pair(a, rfc_no_delack());
    p.drop_transmission(Dir::AtoB, 0, 1);
    p.drop_transmission(Dir::AtoB, 0, 2);
    write_segments(&mut p, 15, MSS, ms(1));
    p.run_for(Duration::from_secs(3));
    // No ACK advanced since segment 1 left at t0: the timer started then.
    assert_eq!(
        p.a_retransmissions(),
        vec![
            (t0() + ms(23), 0, RetransmitCause::FastRetransmit, 2),
            (t0() + Duration::from_secs(1), 0, RetransmitCause::Rto, 3),
        ]
    );
    let s = p.a_stats();
    assert_eq!(s.rto_expirations, 1);
    assert_eq!(p.b_received.len(), 15 * MSS);
}

/// A single 100-byte write at t0 whose first `lost` transmissions are dropped.
fn tail_loss(cfg: TcpConfig, lost: u32) -> Pair {
    let mut p = pair(cfg, rfc_no_delack());
    for k in 1..=lost {
        p.drop_transmission(Dir::AtoB, 0, k);
    }
    p.a_write(&[7; 100]);
    p.run_for(Duration::from_secs(30));
    p
}

fn rto_times(p: &Pair) -> Vec<Time> {
    p.a_retransmissions()
        .iter()
        .filter(|r| r.2 == RetransmitCause::Rto)
        .map(|r| r.0)
        .collect()
}

#[test]
fn timeouts_back_off_one_two_four_seconds() {
    let p = tail_loss(TcpConfig::rfc(), 3);
    let s = |v: u64| t0() + Duration::from_secs(v);
    assert_eq!(rto_times(&p), vec![s(1), s(3), s(7)]);
    let tx: Vec<u32> = p.a_retransmissions().iter().map(|r| r.3).collect();
    assert_eq!(tx, vec![2, 3, 4]);
    let st = p.a_stats();
    assert_eq!(st.rto_expirations, 3);
    // RFC 5681 eq. 4 once (max(100 / 2, 2 * SMSS)), cwnd = one segment,
    // then slow start: +100 bytes for the 100 acknowledged.
    assert_eq!((st.ssthresh, st.cwnd), (2920, 1560));
}

#[test]
fn thin_linear_timeouts_keep_the_rto_linear() {
    let cfg = TcpConfig {
        thin_linear_timeouts: true,
        ..TcpConfig::rfc()
    };
    let p = tail_loss(cfg, 3);
    let s = |v: u64| t0() + Duration::from_secs(v);
    assert_eq!(rto_times(&p), vec![s(1), s(2), s(3)]);
}

#[test]
fn thin_linear_timeouts_double_from_the_seventh_expiry() {
    let cfg = TcpConfig {
        thin_linear_timeouts: true,
        ..TcpConfig::rfc()
    };
    let p = tail_loss(cfg, 8);
    let s = |v: u64| t0() + Duration::from_secs(v);
    assert_eq!(
        rto_times(&p),
        vec![s(1), s(2), s(3), s(4), s(5), s(6), s(7), s(9)]
    );
}

#[test]
fn rto_min_bounds_the_timeout_from_below() {
    let cfg = TcpConfig {
        rto_min: ms(200),
        ..TcpConfig::rfc()
    };
    // SRTT 20 ms, RTTVAR 10 ms: SRTT + 4 RTTVAR = 60 ms, raised to 200 ms.
    let p = tail_loss(cfg, 1);
    assert_eq!(rto_times(&p), vec![t0() + ms(200)]);
}

#[test]
fn karn_takes_no_sample_from_a_retransmission_and_keeps_the_backed_off_rto() {
    let mut p = tail_loss(TcpConfig::rfc(), 2);
    let s = p.a_stats();
    assert_eq!(s.srtt, Some(ms(20)), "unchanged since the handshake");
    assert_eq!(
        s.rto,
        Duration::from_secs(4),
        "two back-offs, no new sample"
    );
    // A new segment, acknowledged normally, gives a sample and ends the back-off.
    p.a_write(&[1; 10]);
    p.run_for(ms(100));
    let s = p.a_stats();
    assert_eq!(s.srtt, Some(ms(20)));
    assert_eq!(s.rto, Duration::from_secs(1));
}

#[test]
fn early_retransmit_fires_on_the_first_duplicate_ack_with_two_segments_out() {
    let with = TcpConfig {
        early_retransmit: true,
        ..TcpConfig::rfc()
    };
    for (cfg, want) in [
        (with, (t0() + ms(20), RetransmitCause::EarlyRetransmit)),
        (
            TcpConfig::rfc(),
            (t0() + Duration::from_secs(1), RetransmitCause::Rto),
        ),
    ] {
        let mut p = pair(cfg, rfc_no_delack());
        p.drop_data(Dir::AtoB, 1);
        write_segments(&mut p, 2, MSS, Duration::ZERO);
        p.run_for(Duration::from_secs(3));
        let r = p.a_retransmissions();
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!((r[0].0, r[0].2), want);
        assert_eq!(p.b_received.len(), 2 * MSS);
    }
}

#[test]
fn early_retransmit_without_sack_uses_oseg_minus_one_duplicate_acks() {
    let cfg = TcpConfig {
        early_retransmit: true,
        sack: false,
        ..rfc_no_delack()
    };
    let mut p = pair(cfg.clone(), cfg);
    p.drop_data(Dir::AtoB, 1);
    write_segments(&mut p, 3, MSS, Duration::ZERO);
    p.run_for(Duration::from_secs(3));
    // Three out: ER_thresh = 2 duplicate ACKs.
    assert_eq!(
        p.a_retransmissions(),
        vec![(t0() + ms(20), 0, RetransmitCause::EarlyRetransmit, 2)]
    );
}

/// Three 100-byte writes 50 ms apart (a thin stream), the first lost.
fn thin_stream(cfg: TcpConfig) -> Pair {
    let cfg = TcpConfig {
        nagle: false,
        ..cfg
    };
    let mut p = pair(cfg, rfc_no_delack());
    p.drop_data(Dir::AtoB, 1);
    for _ in 0..3 {
        p.a_write(&[3; 100]);
        p.run_for(ms(50));
    }
    p.run_for(Duration::from_secs(3));
    p
}

#[test]
fn thin_dupack_retransmits_on_the_first_duplicate_ack() {
    let p = thin_stream(TcpConfig {
        thin_dupack: true,
        ..TcpConfig::rfc()
    });
    // The second write leaves at t0 + 50 ms; its duplicate ACK is back 20 ms later.
    assert_eq!(
        p.a_retransmissions(),
        vec![(t0() + ms(70), 0, RetransmitCause::FastRetransmit, 2)]
    );
    let p = thin_stream(TcpConfig::rfc());
    assert_eq!(
        p.a_retransmissions(),
        vec![(t0() + Duration::from_secs(1), 0, RetransmitCause::Rto, 2)]
    );
}

fn rack_cfg() -> TcpConfig {
    TcpConfig {
        rack_tlp: true,
        ..TcpConfig::rfc()
    }
}

#[test]
fn a_tail_loss_is_repaired_by_a_probe_at_two_srtt_plus_the_ack_delay_not_by_the_rto() {
    let a = TcpConfig {
        initial_window: Some(10),
        ..rack_cfg()
    };
    let mut p = pair(a, rfc_no_delack());
    p.drop_data(Dir::AtoB, 10);
    write_segments(&mut p, 10, MSS, Duration::ZERO);
    p.run_for(Duration::from_secs(3));
    // The ACK of segment 9 arrives at t0 + 20 ms with one segment left in
    // flight: PTO = 2 * 20 + 200 ms.
    assert_eq!(
        p.a_retransmissions(),
        vec![(
            t0() + ms(260),
            9 * MSS as u64,
            RetransmitCause::TailLossProbe,
            2
        )]
    );
    let s = p.a_stats();
    assert_eq!(
        (s.rto_expirations, s.tail_loss_probes, s.fast_recoveries),
        (0, 1, 0)
    );
    // The probe repaired a loss: cwnd falls to max(1 segment / 2, 2 SMSS).
    assert_eq!((s.ssthresh, s.cwnd), (2920, 2920));
    assert_eq!(p.b_received.len(), 10 * MSS);
}

#[test]
fn a_tail_probe_sends_new_data_when_there_is_some() {
    let a = TcpConfig {
        initial_window: Some(2),
        nagle: false,
        ..rack_cfg()
    };
    let mut p = pair(a, rfc_no_delack());
    // Both of the first flight are lost; the third segment waits for cwnd.
    p.drop_data(Dir::AtoB, 1);
    p.drop_data(Dir::AtoB, 2);
    write_segments(&mut p, 3, MSS, Duration::ZERO);
    p.run_for(Duration::from_secs(3));
    // PTO = 2 SRTT after the last send at t0: the probe is segment 3 (new
    // data beyond cwnd); its SACK lets RACK mark 1 and 2 lost at once
    // (reo_wnd = min_RTT / 4 has passed since they were sent).
    let third = p.data_segments(Dir::AtoB)[2].sent_at;
    assert_eq!(third, t0() + ms(40));
    let r = p.a_retransmissions();
    assert_eq!(
        r,
        vec![
            (t0() + ms(60), 0, RetransmitCause::Rack, 2),
            (t0() + ms(60), MSS as u64, RetransmitCause::Rack, 2),
        ]
    );
    assert_eq!(p.a_stats().tail_loss_probes, 1);
}

#[test]
fn rack_marks_a_segment_lost_by_time_with_the_reordering_timer() {
    let a = TcpConfig {
        nagle: false,
        ..rack_cfg()
    };
    let mut p = pair(a, rfc_no_delack());
    p.drop_data(Dir::AtoB, 1);
    p.a_write(&[1; 100]);
    p.run_for(ms(2));
    p.a_write(&[2; 100]);
    p.run_for(Duration::from_secs(3));
    // The SACK of the second write (sent at t0 + 2 ms) arrives at t0 + 22
    // ms: RACK.rtt = 20 ms, reo_wnd = min_RTT / 4 = 5 ms, so the first
    // write is lost at t0 + 0 + 20 + 5 ms: the reordering timer fires then.
    assert_eq!(
        p.a_retransmissions(),
        vec![(t0() + ms(25), 0, RetransmitCause::Rack, 2)]
    );
    let s = p.a_stats();
    assert_eq!(
        (s.fast_recoveries, s.rto_expirations, s.tail_loss_probes),
        (1, 0, 0)
    );
    assert_eq!(p.b_received, [vec![1; 100], vec![2; 100]].concat());
}

#[test]
fn rack_finds_a_lost_retransmission() {
    let a = TcpConfig {
        initial_window: Some(10),
        ..rack_cfg()
    };
    let mut p = pair(a, rfc_no_delack());
    // Segment 1 is lost, then its first retransmission as well; new data
    // keeps flowing behind, whose SACKs show the retransmission lost.
    p.drop_transmission(Dir::AtoB, 0, 1);
    p.drop_transmission(Dir::AtoB, 0, 2);
    write_segments(&mut p, 30, MSS, ms(5));
    p.run_for(Duration::from_secs(3));
    let r = p.a_retransmissions();
    assert_eq!(r.len(), 2, "{r:?}");
    assert!(
        r.iter().all(|x| x.2 == RetransmitCause::Rack && x.1 == 0),
        "{r:?}"
    );
    assert_eq!(p.a_stats().rto_expirations, 0);
    assert_eq!(p.b_received.len(), 30 * MSS);
}

/// IW 4 and ten segments written at t0, the first lost; B's second and
/// third duplicate ACKs are held 1 and 2 ms so each arrives on its own.
/// Returns A's data segments after t0 (time, offset) and ssthresh.
fn limited_transmit(on: bool) -> (Vec<(Time, u64)>, u32) {
    let a = TcpConfig {
        initial_window: Some(4),
        limited_transmit: on,
        ..TcpConfig::rfc()
    };
    let mut p = pair(a, rfc_no_delack());
    p.drop_data(Dir::AtoB, 1);
    p.rule(|s| {
        (s.dir == Dir::BtoA && (3..=4).contains(&s.ordinal))
            .then(|| harness::Fate::Delay(ms(s.ordinal - 2)))
    });
    write_segments(&mut p, 10, MSS, Duration::ZERO);
    p.run_for(ms(22));
    let segs = p
        .data_segments(Dir::AtoB)
        .iter()
        .filter(|s| s.sent_at > t0())
        .map(|s| (s.sent_at, s.offset.unwrap()))
        .collect();
    (segs, p.a_stats().ssthresh)
}

#[test]
fn limited_transmit_sends_a_new_segment_on_each_of_the_first_two_duplicate_acks() {
    let m = MSS as u64;
    let (segs, ssthresh) = limited_transmit(true);
    assert_eq!(
        segs[..3],
        [
            (t0() + ms(20), 4 * m),
            (t0() + ms(21), 5 * m),
            (t0() + ms(22), 0)
        ]
    );
    // FlightSize at the third duplicate ACK: the four, plus two.
    assert_eq!(ssthresh, 3 * MSS as u32);
    let (segs, ssthresh) = limited_transmit(false);
    assert_eq!(
        segs[0],
        (t0() + ms(22), 0),
        "nothing new before the retransmission"
    );
    assert_eq!(ssthresh, 2 * MSS as u32);
}

#[test]
fn dupthresh_is_a_knob() {
    let a = TcpConfig {
        initial_window: Some(15),
        dupthresh: 5,
        ..TcpConfig::rfc()
    };
    let mut p = pair(a, rfc_no_delack());
    p.drop_data(Dir::AtoB, 1);
    write_segments(&mut p, 15, MSS, ms(1));
    p.run_for(ms(500));
    // The fifth duplicate ACK comes from segment 6: t0 + 5 + 20 ms.
    assert_eq!(
        p.a_retransmissions(),
        vec![(t0() + ms(25), 0, RetransmitCause::FastRetransmit, 2)]
    );
}

#[test]
fn a_fixed_rack_reordering_window_replaces_min_rtt_over_four() {
    let a = TcpConfig {
        nagle: false,
        rack_reo_wnd: Some(Duration::ZERO),
        ..rack_cfg()
    };
    let mut p = pair(a, rfc_no_delack());
    p.drop_data(Dir::AtoB, 1);
    p.a_write(&[1; 100]);
    p.run_for(ms(2));
    p.a_write(&[2; 100]);
    p.run_for(Duration::from_secs(3));
    // With no reordering window the SACK at t0 + 22 ms marks it at once.
    assert_eq!(
        p.a_retransmissions(),
        vec![(t0() + ms(22), 0, RetransmitCause::Rack, 2)]
    );
}

#[test]
fn without_sack_fast_retransmit_waits_for_exactly_dupthresh_duplicate_acks_then_inflates() {
    let cfg = TcpConfig {
        sack: false,
        initial_window: Some(15),
        trace: true,
        ..rfc_no_delack()
    };
    let mut p = pair(cfg.clone(), cfg);
    p.drop_data(Dir::AtoB, 1);
    write_segments(&mut p, 15, MSS, ms(1));
    p.run_for(ms(500));
    assert_eq!(
        p.a_retransmissions(),
        vec![(t0() + ms(23), 0, RetransmitCause::FastRetransmit, 2)]
    );
    let trace: Vec<(Time, u32, u32)> = p
        .a_events
        .iter()
        .filter_map(|(_, _, e)| match e {
            brisk_tcp::TcpEvent::Trace {
                at, cwnd, ssthresh, ..
            } if *at > t0() => Some((*at, *cwnd, *ssthresh)),
            _ => None,
        })
        .collect();
    let m = MSS as u32;
    // Entry: ssthresh = 15 * 1460 / 2 = 10950, cwnd = ssthresh + 3 SMSS;
    // each further duplicate ACK (segments 5 to 15) adds one SMSS; the full
    // ACK of the retransmission (t0 + 43 ms) sets cwnd = ssthresh.
    let mut want = vec![(t0() + ms(23), 10_950 + 3 * m, 10_950)];
    for k in 1..=11u32 {
        want.push((t0() + ms(23 + u64::from(k)), 10_950 + (3 + k) * m, 10_950));
    }
    want.push((t0() + ms(43), 10_950, 10_950));
    assert_eq!(trace, want);
}
