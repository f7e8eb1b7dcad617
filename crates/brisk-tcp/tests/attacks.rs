//! A peer that lies, floods or sends garbage: every buffer stays within its
//! configured bound, and every such segment is dropped or ignored and counted.

mod harness;

use std::net::SocketAddr;
use std::time::Duration;

use brisk_tcp::wire::{self, Header, flags};
use brisk_tcp::{TcpConfig, TcpEndpoint, TcpEvent, Time};
use harness::{Dir, Fate, Pair, ipv4, ms, pattern, rfc_no_delack};

fn t0() -> Time {
    Time::from_secs(1)
}

fn pair(a: TcpConfig, b: TcpConfig) -> Pair {
    let mut p = Pair::new(ms(10), a, b);
    p.connect();
    p.run_to(t0());
    p
}

/// A with three segments in flight whose ACKs never arrive.
fn a_with_data_in_flight() -> Pair {
    let mut p = pair(TcpConfig::rfc(), rfc_no_delack());
    p.rule(|s| (s.dir == Dir::BtoA).then_some(Fate::Drop));
    p.a_write(&pattern(3 * 1460));
    p
}

#[test]
fn sack_blocks_about_data_never_sent_or_already_acked_are_ignored() {
    let mut p = a_with_data_in_flight();
    let sent = 3 * 1460;
    let isn = p.isn(Dir::AtoB);
    let at = |off: u64| isn.wrapping_add(1).wrapping_add(off as u32);
    for _ in 0..5 {
        let mut h = p.header(Dir::BtoA, 0, 0);
        // Beyond SND.NXT; below SND.UNA; empty; reaching past SND.NXT.
        for (l, r) in [
            (at(sent + 100), at(sent + 200)),
            (at(0).wrapping_sub(500), at(0)),
            (at(1460), at(1460)),
            (at(1460), at(sent + 1)),
        ] {
            h.options.sack.push(l, r);
        }
        p.inject(Dir::BtoA, &h, &[]);
    }
    let s = p.a_stats();
    assert_eq!(s.invalid_sack_blocks, 20);
    assert_eq!(s.fast_recoveries, 0, "no SACK counted: no recovery");
    assert!(p.a_retransmissions().is_empty());
    assert_eq!(s.flight_size, 3 * 1460, "nothing marked SACKed");
    // The plain duplicate ACKs are still duplicate ACKs (RFC 5681), but
    // with SACK only new SACK information counts towards DupThresh.
    assert_eq!(s.duplicate_acks_received, 5);
}

#[test]
fn an_ack_for_data_never_sent_is_ignored_and_answered_with_an_ack() {
    let mut p = a_with_data_in_flight();
    let before = p.segments(Dir::AtoB).len();
    let h = p.header(Dir::BtoA, 0, 1_000_000);
    p.inject(Dir::BtoA, &h, &[]);
    let s = p.a_stats();
    assert_eq!(s.acks_for_unsent, 1);
    assert_eq!(
        p.a_conn().send_queued(),
        3 * 1460,
        "nothing was taken as acknowledged"
    );
    assert_eq!(s.flight_size, 3 * 1460);
    let after = p.segments(Dir::AtoB);
    assert_eq!(after.len(), before + 1);
    assert!(
        after[before].is_pure_ack(),
        "RFC 9293 3.10.7.4: send an ACK"
    );
    // An ACK with data beyond what was sent is dropped whole: its data too.
    let b_seq_before = p.a_stats().bytes_received;
    p.inject(Dir::BtoA, &h, b"sneaky");
    assert_eq!(p.a_stats().bytes_received, b_seq_before);
    assert_eq!(p.a_stats().acks_for_unsent, 2);
}

#[test]
fn segments_beyond_the_receive_window_are_dropped_and_counted() {
    let b = TcpConfig {
        receive_window: 20_000,
        ..TcpConfig::rfc()
    };
    let mut p = pair(TcpConfig::rfc(), b);
    p.auto_read = false;
    for k in 0..100u64 {
        let h = p.header(Dir::AtoB, 1_000_000 + k * 1000, 0);
        p.inject(Dir::AtoB, &h, &[0xee; 1000]);
    }
    let s = p.b_stats();
    assert_eq!(s.out_of_window_dropped, 100);
    assert_eq!(s.bytes_received, 0);
    assert_eq!(p.b_conn().out_of_order_bytes(), 0);
    // One straddling the right edge keeps only what fits the window.
    let h = p.header(Dir::AtoB, 19_500, 0);
    p.inject(Dir::AtoB, &h, &[1; 1000]);
    assert_eq!(p.b_conn().out_of_order_bytes(), 500);
    // A flood within the window, out of order: never more than the window held.
    for k in 0..200u64 {
        let h = p.header(Dir::AtoB, 1 + k * 150, 0);
        p.inject(Dir::AtoB, &h, &[2; 100]);
    }
    let c = p.b_conn();
    assert!(c.readable() + c.out_of_order_bytes() <= 20_000);
    assert_eq!(c.readable(), 0);
}

#[test]
fn out_of_order_ranges_are_bounded() {
    let b = TcpConfig {
        max_ooo_ranges: 16,
        ..TcpConfig::rfc()
    };
    let mut p = pair(TcpConfig::rfc(), b);
    for k in 0..1000u64 {
        let h = p.header(Dir::AtoB, 2 + 2 * k, 0);
        p.inject(Dir::AtoB, &h, &[9]);
    }
    assert_eq!(p.b_conn().out_of_order_ranges(), 16);
    assert_eq!(p.b_stats().ooo_ranges_dropped, 1000 - 16);
    // The real data still goes through, and fills and joins the ranges.
    p.a_write(&pattern(100));
    p.run_for(ms(500));
    assert_eq!(p.b_received.len(), 100);
    assert_eq!(p.b_conn().out_of_order_ranges(), 0);
}

fn syn_from(port: u16) -> (SocketAddr, Vec<u8>) {
    let from: SocketAddr = format!("10.0.0.9:{port}").parse().unwrap();
    let h = Header {
        src_port: port,
        dst_port: 80,
        seq: u32::from(port) * 7919,
        flags: flags::SYN,
        window: 65535,
        ..Header::default()
    };
    let mut buf = Vec::new();
    wire::write(&h, &[], ipv4(from), "10.0.0.2".parse().unwrap(), &mut buf).unwrap();
    (from, buf)
}

fn drain(ep: &mut TcpEndpoint, now: Time) -> Vec<(SocketAddr, Vec<u8>)> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while let Some(to) = ep.poll_transmit(now, &mut buf) {
        out.push((to, buf.clone()));
    }
    out
}

#[test]
fn a_syn_flood_opens_at_most_max_connections_and_they_expire() {
    let cfg = TcpConfig {
        max_connections: 8,
        max_syn_retransmissions: 2,
        ..TcpConfig::rfc()
    };
    let mut b = TcpEndpoint::new("10.0.0.2:80".parse().unwrap(), cfg, true, 5);
    for port in 1000..1100 {
        let (from, syn) = syn_from(port);
        b.handle_segment(Time::ZERO, from, &syn);
    }
    assert_eq!(b.stats().connections_accepted, 8);
    assert_eq!(b.stats().syns_refused, 92);
    assert_eq!(drain(&mut b, Time::ZERO).len(), 8, "one SYN-ACK each");
    // SYN-ACKs again at 1 s and 3 s, then they give up at 7 s.
    while let Some(t) = b.poll_timeout() {
        b.handle_timeout(t);
        drain(&mut b, t);
    }
    assert_eq!(b.stats().embryonic_dropped, 8);
    assert!(b.connection_ids().is_empty());
    assert_eq!(b.poll_event(), None, "the application never heard of them");
    let (from, syn) = syn_from(2000);
    b.handle_segment(Time::from_secs(10), from, &syn);
    assert_eq!(b.stats().connections_accepted, 9, "room again");
}

#[test]
fn resets_for_segments_to_no_connection_are_bounded() {
    let mut ep = TcpEndpoint::new("10.0.0.2:80".parse().unwrap(), TcpConfig::rfc(), false, 5);
    for port in 1000..1200 {
        let (from, syn) = syn_from(port);
        ep.handle_segment(Time::ZERO, from, &syn);
    }
    assert_eq!(ep.stats().no_connection, 200);
    assert_eq!(ep.stats().resets_suppressed, 200 - 64);
    let resets = drain(&mut ep, Time::ZERO);
    assert_eq!(resets.len(), 64);
    let rst = wire::parse_unchecked(&resets[0].1).unwrap().header;
    assert_eq!(rst.flags, flags::RST | flags::ACK);
    assert_eq!(rst.ack, 1000 * 7919 + 1);
}

#[test]
fn a_corrupted_segment_is_dropped_counted_and_repaired() {
    let mut p = pair(TcpConfig::rfc(), rfc_no_delack());
    p.rule(|s| (s.data_ordinal == Some(1)).then_some(Fate::Corrupt));
    p.a_write(b"precious");
    p.run_for(Duration::from_secs(2));
    assert_eq!(p.b.stats().bad_checksum, 1);
    assert_eq!(p.b_stats().bytes_received, 8);
    assert_eq!(p.b_received, b"precious");
    assert_eq!(p.a_retransmissions().len(), 1);
}

/// `bytes` with a valid checksum from A to B, handed to B.
fn deliver_raw(p: &mut Pair, mut bytes: Vec<u8>) {
    if bytes.len() >= 18 {
        bytes[16] = 0;
        bytes[17] = 0;
        let sum = wire::checksum(ipv4(p.a_addr), ipv4(p.b_addr), &bytes);
        bytes[16..18].copy_from_slice(&sum.to_be_bytes());
    }
    let now = p.now;
    p.b.handle_segment(now, p.a_addr, &bytes);
    p.flush();
}

#[test]
fn malformed_headers_are_dropped_and_counted() {
    let mut p = pair(TcpConfig::rfc(), TcpConfig::rfc());
    let mut good = Vec::new();
    let h = p.header(Dir::AtoB, 0, 0);
    wire::write(&h, b"x", ipv4(p.a_addr), ipv4(p.b_addr), &mut good).unwrap();
    let mut cases: Vec<Vec<u8>> = Vec::new();
    for offset in [0u8, 4, 6, 15] {
        let mut b = good.clone();
        b[12] = offset << 4;
        cases.push(b);
    }
    // Options that overrun the header, a zero length, a bad SACK length.
    for opts in [[2u8, 9, 5, 0], [8, 10, 0, 0], [3, 0, 0, 0], [5, 3, 0, 0]] {
        let mut b = good[..20].to_vec();
        b[12] = 6 << 4;
        b.extend_from_slice(&opts);
        cases.push(b);
    }
    let n = cases.len() as u64;
    for c in cases {
        deliver_raw(&mut p, c);
    }
    deliver_raw(&mut p, vec![0; 19]);
    deliver_raw(&mut p, Vec::new());
    let st = p.b.stats();
    // Offset 15 reaches past a 21-byte segment; so do 0, 4 (too small) and 6.
    assert_eq!(st.malformed, n + 2);
    assert_eq!(p.b_stats().bytes_received, 0);
}

#[test]
fn resets_need_the_exact_sequence_number() {
    let mut p = pair(TcpConfig::rfc(), TcpConfig::rfc());
    // In the window but not RCV.NXT: a challenge ACK (RFC 5961 3.2).
    let mut h = p.header(Dir::AtoB, 100, 0);
    h.flags = flags::RST;
    p.inject(Dir::AtoB, &h, &[]);
    assert_eq!(p.b_stats().challenge_acks, 1);
    assert!(
        p.b_events
            .iter()
            .all(|(_, _, e)| !matches!(e, TcpEvent::Closed(_)))
    );
    // A SYN on an established connection: a challenge ACK too (RFC 5961 4.2).
    let mut h = p.header(Dir::AtoB, 0, 0);
    h.flags = flags::SYN;
    p.inject(Dir::AtoB, &h, &[]);
    assert_eq!(p.b_stats().challenge_acks, 2);
    // Exactly RCV.NXT: the connection is reset.
    let mut h = p.header(Dir::AtoB, 0, 0);
    h.flags = flags::RST;
    p.inject(Dir::AtoB, &h, &[]);
    assert!(
        p.b_events
            .iter()
            .any(|(_, _, e)| *e == TcpEvent::Closed(brisk_tcp::CloseReason::Reset))
    );
}
