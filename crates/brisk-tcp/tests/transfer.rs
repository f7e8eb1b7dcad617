//! Data transfer: segmentation, Nagle, delayed ACKs, flow control, and the
//! cwnd trace. 10 ms one way; data starts at t0 = 1 s.

mod harness;

use std::time::Duration;

use brisk_tcp::wire::flags;
use brisk_tcp::{TcpConfig, TcpEvent, Time};
use harness::{Dir, Pair, ms, pattern, rfc_no_delack};

fn t0() -> Time {
    Time::from_secs(1)
}

fn pair(a: TcpConfig, b: TcpConfig) -> Pair {
    let mut p = Pair::new(ms(10), a, b);
    p.connect();
    p.run_to(t0());
    p
}

/// (sent_at, ack as a stream offset) of each pure ACK from B after t0.
fn b_acks(p: &Pair) -> Vec<(Time, u64)> {
    let isn = p.isn(Dir::AtoB);
    p.segments(Dir::BtoA)
        .iter()
        .filter(|s| s.sent_at >= t0() && s.is_pure_ack())
        .map(|s| {
            (
                s.sent_at,
                u64::from(s.header.ack.wrapping_sub(isn).wrapping_sub(1)),
            )
        })
        .collect()
}

#[test]
fn a_bulk_transfer_arrives_whole_in_full_sized_segments() {
    let mut p = pair(TcpConfig::rfc(), TcpConfig::rfc());
    let data = pattern(1_000_000);
    let mut written = 0;
    while written < data.len() {
        written += p.a_write(&data[written..]);
        p.run_for(ms(5));
    }
    p.run_for(Duration::from_secs(2));
    assert_eq!(p.b_received, data);
    let s = p.a_stats();
    assert_eq!(s.bytes_sent_new, 1_000_000);
    assert_eq!(s.total_retransmissions(), 0);
    assert_eq!(s.data_segments_sent, 1_000_000_u64.div_ceil(1460));
    assert!(p.data_segments(Dir::AtoB).iter().all(|d| d.len <= 1460));
    assert_eq!(p.b_stats().bytes_received, 1_000_000);
    // Slow start ran to the receive window: no loss, ssthresh still infinite.
    assert_eq!(s.ssthresh, u32::MAX);
    assert!(s.cwnd > 65_535, "{}", s.cwnd);
}

/// Ten 100-byte writes 1 ms apart from t0; the data segments (time, length).
fn small_writes(a: TcpConfig, b: TcpConfig) -> Vec<(Time, usize)> {
    let mut p = pair(a, b);
    for _ in 0..10 {
        p.a_write(&[5; 100]);
        p.run_for(ms(1));
    }
    p.run_for(Duration::from_secs(1));
    assert_eq!(p.b_received, vec![5; 1000]);
    p.data_segments(Dir::AtoB)
        .iter()
        .map(|s| (s.sent_at, s.len))
        .collect()
}

#[test]
fn nagle_coalesces_small_writes_until_the_ack() {
    // The first goes at once; the other nine wait for its ACK at t0 + 20 ms.
    assert_eq!(
        small_writes(TcpConfig::rfc(), rfc_no_delack()),
        vec![(t0(), 100), (t0() + ms(20), 900)]
    );
    // With a delayed-ACK receiver the ACK comes 200 ms later (the classic
    // Nagle and delayed ACK stall).
    assert_eq!(
        small_writes(TcpConfig::rfc(), TcpConfig::rfc()),
        vec![(t0(), 100), (t0() + ms(220), 900)]
    );
}

#[test]
fn without_nagle_each_small_write_is_a_segment() {
    let a = TcpConfig {
        nagle: false,
        ..TcpConfig::rfc()
    };
    let want: Vec<(Time, usize)> = (0..10).map(|k| (t0() + ms(k), 100)).collect();
    assert_eq!(small_writes(a, rfc_no_delack()), want);
}

#[test]
fn delayed_ack_acks_every_second_full_segment_or_after_the_delay() {
    let mut p = pair(TcpConfig::rfc(), TcpConfig::rfc());
    // The initial window is three segments: all leave at t0.
    p.a_write(&pattern(3 * 1460));
    p.run_for(Duration::from_secs(1));
    // An ACK for the first two at once, one for the third after 200 ms.
    assert_eq!(
        b_acks(&p),
        vec![(t0() + ms(10), 2920), (t0() + ms(210), 4380)]
    );
}

#[test]
fn delayed_ack_acks_at_once_out_of_order_and_hole_filling_segments() {
    let mut p = pair(TcpConfig::rfc(), TcpConfig::rfc());
    p.drop_data(Dir::AtoB, 1);
    p.a_write(&pattern(3 * 1460));
    p.run_for(Duration::from_secs(2));
    // Segments 2 and 3 arrive out of order: two immediate duplicates. The
    // retransmission of 1 (RTO, t0 + 1 s) fills the hole: acknowledged at once.
    assert_eq!(
        b_acks(&p),
        vec![
            (t0() + ms(10), 0),
            (t0() + ms(10), 0),
            (t0() + Duration::from_secs(1) + ms(10), 4380),
        ]
    );
    let dup = &p.segments(Dir::BtoA)[1];
    assert_eq!(dup.sack().len(), 1, "the duplicates carry a SACK block");
}

#[test]
fn quickack_acks_the_first_segments_at_once() {
    let b = TcpConfig {
        quickack_segments: 2,
        ..TcpConfig::rfc()
    };
    let a = TcpConfig {
        nagle: false,
        ..TcpConfig::rfc()
    };
    let mut p = pair(a, b);
    for _ in 0..3 {
        p.a_write(&[1; 10]);
        p.run_for(ms(50));
    }
    p.run_for(Duration::from_secs(1));
    assert_eq!(
        b_acks(&p),
        vec![
            (t0() + ms(10), 10),
            (t0() + ms(60), 20),
            (t0() + ms(100) + ms(210), 30),
        ]
    );
}

#[test]
fn the_receive_window_stops_the_sender_and_reading_reopens_it() {
    let b = TcpConfig {
        receive_window: 8000,
        ..rfc_no_delack()
    };
    let a = TcpConfig {
        initial_window: Some(10),
        ..TcpConfig::rfc()
    };
    let mut p = pair(a, b);
    p.auto_read = false;
    let data = pattern(40_000);
    assert_eq!(p.a_write(&data), 40_000);
    p.run_for(Duration::from_secs(5));
    assert_eq!(p.b_conn().readable(), 8000, "exactly the window, no more");
    let s = p.a_stats();
    assert_eq!(s.peer_window, 0);
    // The persist timer sent a one-byte probe into the closed window, which
    // B dropped (and answered).
    assert!(s.window_probes >= 1, "{s:?}");
    assert!(p.b_stats().out_of_window_dropped >= 1);
    assert!(p.data_segments(Dir::AtoB).iter().any(|d| d.len == 1));
    // Half an hour of closed window: probes go on (backed off to RTO.Max),
    // no timeout counts against the connection (RFC 1122 4.2.2.17) and
    // cwnd is left alone.
    let cwnd = s.cwnd;
    p.run_for(Duration::from_secs(1800));
    let s = p.a_stats();
    assert_eq!(p.a_conn().state(), brisk_tcp::State::Established);
    assert_eq!((s.rto_expirations, s.cwnd), (0, cwnd));
    assert!(s.window_probes > 30, "{}", s.window_probes);
    assert_eq!(p.b_conn().readable(), 8000);
    p.auto_read = true;
    p.run_for(Duration::from_secs(120));
    assert_eq!(p.b_received, data);
}

#[test]
fn the_send_buffer_bounds_what_write_accepts() {
    let a = TcpConfig {
        send_buffer: 10_000,
        ..TcpConfig::rfc()
    };
    let mut p = pair(a, TcpConfig::rfc());
    let now = p.now;
    assert_eq!(p.a_conn().write(now, &pattern(25_000)), 10_000);
    assert_eq!(p.a_conn().write(now, &[1]), 0);
    assert_eq!(
        (p.a_conn().send_queued(), p.a_conn().unsent()),
        (10_000, 10_000)
    );
    p.flush();
    assert_eq!(p.a_conn().unsent(), 10_000 - 3 * 1460);
    p.run_for(Duration::from_secs(1));
    assert_eq!(p.a_conn().send_queued(), 0);
    assert_eq!(p.a_conn().write(now, &pattern(25_000)), 10_000);
}

#[test]
fn trace_reports_every_cwnd_and_ssthresh_change() {
    let a = TcpConfig {
        trace: true,
        initial_window: Some(4),
        ..TcpConfig::rfc()
    };
    let mut p = pair(a, rfc_no_delack());
    p.drop_data(Dir::AtoB, 1);
    p.a_write(&pattern(4 * 1460));
    p.run_for(Duration::from_secs(3));
    let trace: Vec<(Time, u32, u32)> = p
        .a_events
        .iter()
        .filter_map(|(_, _, e)| match e {
            TcpEvent::Trace {
                at, cwnd, ssthresh, ..
            } => Some((*at, *cwnd, *ssthresh)),
            _ => None,
        })
        .collect();
    let inf = u32::MAX;
    assert_eq!(
        trace,
        vec![
            // At Connected: the initial window.
            (Time::from_millis(20), 4 * 1460, inf),
            // Segment 1 is lost; the third duplicate ACK (t0 + 20 ms) starts
            // recovery with FlightSize 4 segments: ssthresh = cwnd = 2920.
            // The ACK of the retransmission ends recovery without a change.
            (t0() + ms(20), 2920, 2920),
        ]
    );
    assert!(!p.segments(Dir::AtoB).iter().any(|s| s.has(flags::RST)));
}
