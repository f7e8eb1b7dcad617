//! Linux's autocorking (`autocork`): a short segment waits while the last
//! data segment is taken to be in the host's transmit queue. 10 ms one way;
//! data starts at t0 = 1 s; Nagle off unless said otherwise.

mod harness;

use std::time::Duration;

use brisk_tcp::wire::flags;
use brisk_tcp::{RetransmitCause, TcpConfig, Time};
use harness::{Dir, Pair, ms, pattern, rfc_no_delack};

fn t0() -> Time {
    Time::from_secs(1)
}

fn us(v: u64) -> Duration {
    Duration::from_micros(v)
}

/// `rfc` with Nagle off (TCP_NODELAY) and the given autocork.
fn nodelay(autocork: Option<Duration>) -> TcpConfig {
    TcpConfig {
        nagle: false,
        autocork,
        ..TcpConfig::rfc()
    }
}

fn pair(a: TcpConfig) -> Pair {
    let mut p = Pair::new(ms(10), a, rfc_no_delack());
    p.connect();
    p.run_to(t0());
    p
}

/// A's data segments: (time, stream offset, length).
fn a_data(p: &Pair) -> Vec<(Time, u64, usize)> {
    p.data_segments(Dir::AtoB)
        .iter()
        .map(|s| (s.sent_at, s.offset.unwrap(), s.len))
        .collect()
}

/// Four writes of 204 bytes at t0, each followed by a poll, as an
/// application writing messages back to back.
fn four_writes(p: &mut Pair) {
    for k in 0..4u8 {
        assert_eq!(p.a_write(&[k; 204]), 204);
    }
}

fn four_messages() -> Vec<u8> {
    (0..4u8).flat_map(|k| [k; 204]).collect()
}

#[test]
fn small_writes_of_one_instant_after_the_first_go_together_after_the_hold() {
    let mut p = pair(nodelay(Some(us(50))));
    four_writes(&mut p);
    p.run_for(Duration::from_secs(1));
    assert_eq!(a_data(&p), vec![(t0(), 0, 204), (t0() + us(50), 204, 612)]);
    assert_eq!(p.b_received, four_messages());
}

#[test]
fn the_linux_presets_cork_for_50us() {
    for preset in [TcpConfig::linux(), TcpConfig::linux_thin()] {
        let mut p = pair(TcpConfig {
            nagle: false,
            ..preset
        });
        four_writes(&mut p);
        p.run_for(Duration::from_secs(1));
        assert_eq!(a_data(&p), vec![(t0(), 0, 204), (t0() + us(50), 204, 612)]);
    }
}

#[test]
fn without_autocork_each_write_is_a_segment_at_once() {
    let mut p = pair(nodelay(None));
    four_writes(&mut p);
    p.run_for(Duration::from_secs(1));
    assert_eq!(
        a_data(&p),
        vec![
            (t0(), 0, 204),
            (t0(), 204, 204),
            (t0(), 408, 204),
            (t0(), 612, 204)
        ]
    );
    assert_eq!(p.b_received, four_messages());
}

#[test]
fn the_held_data_is_sent_by_the_timer_alone() {
    let mut p = pair(nodelay(Some(us(50))));
    four_writes(&mut p);
    assert_eq!(p.a_conn().unsent(), 612);
    // The autocork timer is A's earliest deadline (the RTO is at t0 + 1 s).
    assert_eq!(p.a.poll_timeout(), Some(t0() + us(50)));
    let mut buf = Vec::new();
    assert_eq!(p.a.poll_transmit(t0() + us(49), &mut buf), None);
    p.a.handle_timeout(t0() + us(50));
    assert!(p.a.poll_transmit(t0() + us(50), &mut buf).is_some());
    let seg = brisk_tcp::wire::parse_unchecked(&buf).unwrap();
    assert_eq!(seg.payload.len(), 612);
    assert_eq!(p.a_conn().unsent(), 0);
    assert_eq!(p.a.poll_transmit(t0() + us(50), &mut buf), None);
    // Nothing is held any more: the next deadline is the RTO's.
    assert_eq!(p.a.poll_timeout(), Some(t0() + Duration::from_secs(1)));
}

#[test]
fn a_write_more_than_the_hold_after_the_last_segment_goes_at_once() {
    let mut p = pair(nodelay(Some(us(50))));
    p.a_write(&[1; 204]);
    p.run_to(t0() + us(50));
    p.a_write(&[2; 204]);
    p.run_to(t0() + us(99));
    // 49 us after the last segment: held until 50 us after it.
    p.a_write(&[3; 204]);
    p.run_for(Duration::from_secs(1));
    assert_eq!(
        a_data(&p),
        vec![
            (t0(), 0, 204),
            (t0() + us(50), 204, 204),
            (t0() + us(100), 408, 204),
        ]
    );
}

#[test]
fn a_full_segment_is_never_held_and_the_rest_follows_after_the_hold() {
    let mut p = pair(nodelay(Some(us(50))));
    p.a_write(&[1; 204]);
    p.a_write(&pattern(1460));
    p.a_write(&pattern(1560));
    p.run_for(Duration::from_secs(1));
    assert_eq!(
        a_data(&p),
        vec![
            (t0(), 0, 204),
            (t0(), 204, 1460),
            (t0(), 1664, 1460),
            (t0() + us(50), 3124, 100),
        ]
    );
}

#[test]
fn nagle_still_holds_what_autocork_would_let_go() {
    let a = TcpConfig {
        nagle: true,
        ..nodelay(Some(us(50)))
    };
    let mut p = pair(a);
    four_writes(&mut p);
    p.run_for(Duration::from_secs(1));
    // Past the hold, Nagle waits for the ACK of the first (t0 + 20 ms).
    assert_eq!(a_data(&p), vec![(t0(), 0, 204), (t0() + ms(20), 204, 612)]);
}

#[test]
fn a_retransmission_is_never_held() {
    let mut p = pair(nodelay(Some(us(50))));
    p.drop_data(Dir::AtoB, 1);
    p.a_write(&[1; 204]);
    // A new segment 10 us before the RTO (t0 + 1 s) is sent at once (the
    // last went 1 s earlier); the RTO's retransmissions then come within
    // its hold and still go at once.
    p.run_to(t0() + us(999_990));
    p.a_write(&[2; 204]);
    p.run_for(Duration::from_secs(2));
    // After the RTO both are resent in order (one SMSS of cwnd holds both),
    // the second too within the hold of the first.
    let rto = t0() + Duration::from_secs(1);
    assert_eq!(
        p.a_retransmissions(),
        vec![
            (rto, 0, RetransmitCause::Rto, 2),
            (rto, 204, RetransmitCause::Rto, 2)
        ]
    );
    assert_eq!(
        a_data(&p),
        [
            (t0(), 0, 204),
            (t0() + us(999_990), 204, 204),
            (rto, 0, 204),
            (rto, 204, 204),
        ]
    );
    assert_eq!(p.b_received, [[1; 204], [2; 204]].concat());
}

#[test]
fn a_close_pushes_the_held_data_with_the_fin() {
    let mut p = pair(nodelay(Some(us(50))));
    p.a_write(&[1; 204]);
    p.a_write(&[2; 204]);
    assert_eq!(p.a_conn().unsent(), 204);
    let now = p.now;
    p.a_conn().close(now);
    p.flush();
    let data = p.data_segments(Dir::AtoB);
    assert_eq!(data.len(), 2);
    assert_eq!((data[1].sent_at, data[1].len), (t0(), 204));
    assert!(data[1].has(flags::FIN));
}
