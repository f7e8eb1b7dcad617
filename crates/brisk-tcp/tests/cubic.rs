//! CUBIC (RFC 9438) in the model: a bulk flow backs off to β = 0.7 of its
//! flight on a loss and regrows along the concave cubic curve towards
//! W_max. 50 ms one way (RTT 100 ms), so that the cubic region, not the
//! Reno-friendly one, governs the regrowth.

mod harness;

use std::time::Duration;

use brisk_tcp::config::CongestionAlgorithm;
use brisk_tcp::{TcpConfig, TcpEvent, Time};
use harness::{Dir, Pair, ms, pattern};

const MSS: u32 = 1460;

/// (time, cwnd, ssthresh) in segments of every trace event of A, for a
/// bulk transfer from t = 1 s to `end` that loses data segment `drop`.
fn bulk_trace(cc: CongestionAlgorithm, drop: u64, end: Time) -> Vec<(Time, u32, u32)> {
    let a = TcpConfig {
        congestion_control: cc,
        trace: true,
        // Leave slow start at 80 segments.
        initial_ssthresh: 80 * MSS,
        ..TcpConfig::linux()
    };
    let mut p = Pair::new(ms(50), a, TcpConfig::linux());
    p.connect();
    p.run_to(Time::from_secs(1));
    p.drop_data(Dir::AtoB, drop);
    let chunk = pattern(256 << 10);
    while p.now < end {
        p.a_write(&chunk);
        p.run_for(ms(20));
        // Keep memory bounded: the receiver's copy is not checked here.
        p.b_received.clear();
    }
    p.a_events
        .iter()
        .filter_map(|(_, _, e)| match e {
            TcpEvent::Trace {
                at, cwnd, ssthresh, ..
            } => Some((*at, cwnd / MSS, ssthresh / MSS)),
            _ => None,
        })
        .collect()
}

/// The reduction: (time, cwnd before it, ssthresh it set).
fn reduction(trace: &[(Time, u32, u32)]) -> (Time, u32, u32) {
    let i = trace
        .iter()
        .position(|&(_, _, ss)| ss < 80)
        .expect("a reduction");
    (trace[i].0, trace[i - 1].1, trace[i].2)
}

/// cwnd (segments) at time `t`: the last trace entry at or before it.
fn cwnd_at(trace: &[(Time, u32, u32)], t: Time) -> u32 {
    trace
        .iter()
        .take_while(|&&(at, _, _)| at <= t)
        .last()
        .map(|&(_, c, _)| c)
        .unwrap_or(0)
}

#[test]
fn a_bulk_cubic_flow_backs_off_to_0_7_and_regrows_along_the_cubic_curve() {
    let trace = bulk_trace(CongestionAlgorithm::Cubic, 1500, Time::from_secs(10));
    let (at, w_max, ssthresh) = reduction(&trace);
    // RFC 9438 4.6: ssthresh = β_cubic cwnd (Linux's choice, which the RFC
    // allows in place of FlightSize).
    let ratio = f64::from(ssthresh) / f64::from(w_max);
    assert!((0.67..=0.71).contains(&ratio), "{ssthresh} / {w_max}");
    // RFC 9438 4.2: K = cbrt((W_max - cwnd_epoch) / C); the stage begins
    // about one RTT after the reduction, when recovery ends.
    let w = f64::from(w_max);
    let k = ((w - f64::from(ssthresh)) / 0.4).cbrt();
    let epoch = at + ms(100);
    let secs = |s: f64| Duration::from_secs_f64(s);
    // Concave: half-way to K the window has regained most of the gap,
    // W_cubic(K/2) = W_max - C (K/2)^3 = W_max - gap / 8, where Reno
    // (one segment per RTT) would have regained K/2 / 0.1 segments.
    let half = cwnd_at(&trace, epoch + secs(k / 2.0));
    let want_half = w - (w - f64::from(ssthresh)) / 8.0;
    assert!(
        (f64::from(half) - want_half).abs() <= 3.0,
        "cwnd {half} at K/2 = {:.2} s, W_cubic {want_half:.1}",
        k / 2.0
    );
    // The plateau: near W_max at K, not far beyond it.
    let at_k = cwnd_at(&trace, epoch + secs(k));
    assert!(
        (f64::from(at_k) - w).abs() <= 3.0,
        "cwnd {at_k} at K = {k:.2} s, W_max {w_max}"
    );
}

#[test]
fn reno_backs_off_to_at_most_half_where_cubic_keeps_0_7() {
    // RFC 5681 eq. 4 halves FlightSize, which is below cwnd when the loss
    // is detected (the window's first part is acknowledged by then).
    let (_, w_max, ssthresh) = reduction(&bulk_trace(
        CongestionAlgorithm::Reno,
        1500,
        Time::from_secs(3),
    ));
    let ratio = f64::from(ssthresh) / f64::from(w_max);
    assert!(ratio <= 0.51, "{ssthresh} / {w_max}");
}
