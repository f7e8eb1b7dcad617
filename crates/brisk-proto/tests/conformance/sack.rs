//! Acknowledgements: ETSI TS 102 369 group A (nplab `sctp-a-tests`), RFC 9260
//! 6.2, 6.7.
//!
//! Covered: A/9/1, 9/2, 9/3.
//!
//! Not applicable: none.

use brisk_proto::wire::chunk::{GapBlock, types};

use crate::tester::*;

/// ETSI A/9/1 (sctp-a-v-9-1): the first DATA of an association is
/// acknowledged at once, not after the SACK delay. RFC 9260 6.2 (5.1 note on
/// the first DATA), 6.7.
#[test]
fn the_first_data_of_an_association_is_sacked_at_once() {
    let mut t = Tester::server();
    t.establish();
    let c = t.next_data(100);
    t.send(vec![c]);
    let s = t.expect(types::SACK);
    assert_eq!(s.sack().expect("SACK").cum_tsn_ack, TESTER_TSN);
    assert_eq!(t.app_recv(), vec![(0, 100)]);
    t.tester_shuts_down();
}

/// ETSI A/9/2 (sctp-a-v-9-2): one SACK acknowledges DATA chunks bundled in
/// one packet. RFC 9260 6.2.
#[test]
fn one_sack_covers_bundled_data_chunks() {
    let mut t = Tester::server();
    t.establish();
    let chunks = vec![t.next_data(100), t.next_data(100), t.next_data(100)];
    t.send(chunks);
    let s = t.wait_for(types::SACK, ms(200));
    let sack = s.sack().expect("SACK");
    assert_eq!(sack.cum_tsn_ack, TESTER_TSN + 2);
    assert!(sack.gap_blocks.is_empty());
    assert_eq!(t.app_recv().len(), 3);
    t.silent_for(secs(1));
    t.tester_shuts_down();
}

/// ETSI A/9/3 (sctp-a-o-9-3): a DATA chunk past a gap is acknowledged at
/// once with a gap report; the SACK after the gap is filled reports no gap.
/// RFC 9260 6.7.
#[test]
fn data_past_a_gap_is_sacked_at_once_with_a_gap_report() {
    let mut t = Tester::server();
    t.establish();
    t.send(vec![data(TESTER_TSN, 0, 0, 100)]);
    t.wait_for(types::SACK, ms(200));
    t.send(vec![data(TESTER_TSN + 2, 0, 2, 100)]);
    let s = t.expect(types::SACK);
    let sack = s.sack().expect("SACK");
    assert_eq!(sack.cum_tsn_ack, TESTER_TSN);
    assert_eq!(sack.gap_blocks, vec![GapBlock { start: 2, end: 2 }]);
    t.send(vec![data(TESTER_TSN + 1, 0, 1, 100)]);
    let s = t.wait_for(types::SACK, ms(200));
    let sack = s.sack().expect("SACK");
    assert_eq!(sack.cum_tsn_ack, TESTER_TSN + 2);
    assert!(sack.gap_blocks.is_empty());
    assert_eq!(t.app_recv().len(), 3);
    t.tsn = TESTER_TSN + 3;
    t.tester_shuts_down();
}

/// RFC 9260 6.2: a lone DATA packet (after the first) is acknowledged when
/// the SACK delay (200 ms here) expires, not before.
#[test]
fn a_lone_data_packet_is_sacked_when_the_sack_delay_expires() {
    let mut t = Tester::server();
    t.establish();
    let c = t.next_data(100);
    t.send(vec![c]);
    t.advance(secs(1));
    let c = t.next_data(100);
    let sent = t.now;
    t.send(vec![c]);
    let s = t.wait_for(types::SACK, secs(1));
    assert_eq!(s.at - sent, ms(200));
    assert_eq!(s.sack().expect("SACK").cum_tsn_ack, TESTER_TSN + 1);
}

/// RFC 9260 6.2: a SACK goes at once for every second packet with DATA.
#[test]
fn every_second_data_packet_is_sacked_at_once() {
    let mut t = Tester::server();
    t.establish();
    let c = t.next_data(100);
    t.send(vec![c]);
    t.advance(secs(1));
    let c = t.next_data(100);
    t.send(vec![c]);
    t.silent();
    let c = t.next_data(100);
    t.send(vec![c]);
    let s = t.expect(types::SACK);
    assert_eq!(s.sack().expect("SACK").cum_tsn_ack, TESTER_TSN + 2);
}

/// RFC 9260 6.4: a SACK goes to the address the DATA came from.
#[test]
fn a_sack_goes_to_the_source_of_the_data() {
    let mut t = Tester::server();
    let other: std::net::SocketAddr = "192.0.2.2:9899".parse().expect("address");
    let mut i = init(TESTER_TAG);
    i.params = vec![
        brisk_proto::wire::Param::Ipv4Address("192.0.2.1".parse().expect("v4")),
        brisk_proto::wire::Param::Ipv4Address("192.0.2.2".parse().expect("v4")),
    ];
    t.establish_with(i);
    let now = t.now;
    let chunks = vec![t.next_data(100), t.next_data(100)];
    let bytes = packet(t.iut_tag, chunks);
    t.iut.handle_datagram(now, other, &bytes);
    let c = t.next_data(100);
    let bytes = packet(t.iut_tag, vec![c]);
    t.iut.handle_datagram(now, other, &bytes);
    let s = t.next_packet(ms(500)).expect("a SACK");
    assert!(s.has(types::SACK));
    assert_eq!(s.to, other);
}

/// RFC 9260 6.10, 6.2: a pending SACK rides on new DATA, and control
/// chunks go before DATA in the bundle.
#[test]
fn a_sack_bundled_with_data_comes_first() {
    let mut t = Tester::server();
    t.establish();
    let c = t.next_data(100);
    t.send(vec![c]);
    t.advance(secs(1));
    let c = t.next_data(100);
    t.send(vec![c]);
    t.app_send(0, 100);
    let out = t.poll().expect("a packet");
    assert_eq!(out.types(), vec![types::SACK, types::DATA]);
}

/// RFC 9260 6.2, 6.2.1: the advertised window shrinks by the data held
/// for the application and opens again once it reads.
#[test]
fn the_advertised_window_tracks_unread_data() {
    let mut t = Tester::server_with(brisk_proto::Config {
        receive_buffer: 20_000,
        ..brisk_proto::Config::rfc9260()
    });
    let ack = t.establish();
    assert_eq!(ack.init_fields().1, 20_000);
    let chunks = vec![t.next_data(1000), t.next_data(1000), t.next_data(1000)];
    t.send(chunks);
    let s = t.wait_for(types::SACK, ms(200));
    let held = s.sack().expect("SACK").a_rwnd;
    assert!(held <= 17_000, "a_rwnd {held} after 3000 unread bytes");
    assert_eq!(t.app_recv().len(), 3);
    let chunks = vec![t.next_data(10), t.next_data(10)];
    t.send(chunks);
    let s = t.wait_for(types::SACK, ms(200));
    let open = s.sack().expect("SACK").a_rwnd;
    assert!(open > held, "a_rwnd {open} after reading, {held} before");
}

/// RFC 9260 6.7, 3.3.4: each run of TSNs received past a gap is one gap
/// block, offsets from the cumulative TSN.
#[test]
fn each_run_past_a_gap_is_one_gap_block() {
    let mut t = Tester::server();
    t.establish();
    t.send(vec![data(TESTER_TSN, 0, 0, 10)]);
    t.wait_for(types::SACK, ms(200));
    t.send(vec![
        data(TESTER_TSN + 2, 0, 2, 10),
        data(TESTER_TSN + 3, 0, 3, 10),
        data(TESTER_TSN + 5, 0, 5, 10),
    ]);
    let s = t.expect(types::SACK);
    let sack = s.sack().expect("SACK");
    assert_eq!(sack.cum_tsn_ack, TESTER_TSN);
    assert_eq!(
        sack.gap_blocks,
        vec![GapBlock { start: 2, end: 3 }, GapBlock { start: 5, end: 5 }]
    );
}
