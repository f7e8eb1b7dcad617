//! User data transfer: ETSI TS 102 369 group D (nplab `sctp-d-tests`), RFC
//! 9260 6.1 to 6.10.
//!
//! Covered: D/8/1 to 8/15 (8/5, T3 timeouts, here and in `timers`).
//!
//! Not applicable: none. nplab leaves out 8/13 to 8/15 because a socket has
//! no message size limit; Brisk has one (`Config::max_message_size`), so
//! they are played here.

use std::net::SocketAddr;

use brisk_proto::wire::Chunk;
use brisk_proto::wire::chunk::{DataFlags, GapBlock, Sack, types};
use brisk_proto::wire::{ErrorCause, Param};
use brisk_proto::{Config, SendError, State};

use crate::tester::*;

const B: DataFlags = DataFlags {
    immediate: false,
    unordered: false,
    beginning: true,
    ending: false,
};
const M: DataFlags = DataFlags {
    immediate: false,
    unordered: false,
    beginning: false,
    ending: false,
};
const E: DataFlags = DataFlags {
    immediate: false,
    unordered: false,
    beginning: false,
    ending: true,
};

fn client_with(cfg: Config, a_rwnd: u32) -> Tester {
    let mut t = Tester::client();
    let mut ack = init_ack(TESTER_TAG);
    ack.a_rwnd = a_rwnd;
    t.establish_as_client_with(cfg, ack);
    t
}

fn no_heartbeats() -> Config {
    Config {
        heartbeats: false,
        ..fast_rto()
    }
}

/// ETSI D/8/1 (sctp-d-v-8-1): a message that fits one packet goes as one
/// DATA chunk with B and E set. RFC 9260 6.9, 3.3.1.
#[test]
fn a_message_that_fits_one_packet_is_sent_unfragmented() {
    let mut t = Tester::client();
    t.establish_as_client();
    let max = Config::rfc9260().max_data_payload();
    t.app_send(0, max);
    let d = t.expect(types::DATA);
    assert_eq!(
        d.data(),
        vec![(DataFlags::UNFRAGMENTED, t.iut_tsn, 0, 0, max)]
    );
    t.ack_up_to(t.iut_tsn);
}

/// ETSI D/8/2 (sctp-d-v-8-2): a larger message is fragmented: B then E,
/// consecutive TSNs, one SSN. RFC 9260 6.9.
#[test]
fn a_larger_message_is_fragmented_with_consecutive_tsns() {
    let mut t = client_with(Config::rfc9260(), 1500);
    let max = Config::rfc9260().max_data_payload();
    t.app_send(0, max + 500);
    let first = t.expect(types::DATA);
    assert_eq!(first.data(), vec![(B, t.iut_tsn, 0, 0, max)]);
    t.ack_up_to(t.iut_tsn);
    let second = t.expect(types::DATA);
    assert_eq!(second.data(), vec![(E, t.iut_tsn + 1, 0, 0, 500)]);
    t.ack_up_to(t.iut_tsn + 1);
    t.silent();
}

/// ETSI D/8/3 (sctp-d-v-8-3): fragments first, middle, last are reassembled
/// into one message. RFC 9260 6.9.
#[test]
fn first_middle_and_last_fragments_are_reassembled() {
    let mut t = Tester::client();
    t.establish_as_client();
    t.send(vec![data_with(B, TESTER_TSN, 0, 0, 100)]);
    assert!(t.app_recv().is_empty());
    t.send(vec![data_with(M, TESTER_TSN + 1, 0, 0, 100)]);
    t.send(vec![data_with(E, TESTER_TSN + 2, 0, 0, 100)]);
    assert_eq!(t.last_sack_within(ms(300)), Some(TESTER_TSN + 2));
    assert_eq!(t.app_recv(), vec![(0, 300)]);
}

/// ETSI D/8/4 (sctp-d-v-8-4): a SACK acknowledging a TSN removes it from
/// retransmission; only the newer one is retransmitted. RFC 9260 6.2.1, 6.3.2.
#[test]
fn an_acknowledged_tsn_is_not_retransmitted() {
    let mut t = client_with(no_heartbeats(), 1500);
    let d1 = t.iut_sends(1000);
    t.ack_up_to(d1.tsns()[0]);
    let d2 = t.iut_sends(1000);
    let again = t.wait_for(types::DATA, secs(1));
    assert_eq!(again.tsns(), d2.tsns());
    assert_eq!(again.at - d2.at, ms(100));
}

/// ETSI D/8/5 (sctp-d-i-8-5): when T3-rtx expires, the DATA is sent again
/// after RTO. RFC 9260 6.3.3.
#[test]
fn unacknowledged_data_is_retransmitted_when_t3_expires() {
    let mut t = client_with(no_heartbeats(), 1500);
    let d = t.iut_sends(1000);
    let again = t.wait_for(types::DATA, secs(1));
    assert_eq!(again.tsns(), d.tsns());
    assert_eq!(again.at - d.at, ms(100));
}

/// ETSI D/8/6 (sctp-d-o-8-6): a duplicate DATA is reported in a SACK sent at
/// once. RFC 9260 6.2, 6.7.
#[test]
fn a_duplicate_data_chunk_is_reported_at_once() {
    let mut t = Tester::client();
    t.establish_as_client();
    t.send(vec![data(TESTER_TSN, 0, 0, 100)]);
    t.wait_for(types::SACK, ms(200));
    t.send(vec![data(TESTER_TSN + 1, 0, 1, 100)]);
    t.advance(ms(100));
    t.send(vec![data(TESTER_TSN + 1, 0, 1, 100)]);
    let s = t.expect(types::SACK);
    let sack = s.sack().expect("SACK");
    assert_eq!(sack.cum_tsn_ack, TESTER_TSN + 1);
    assert_eq!(sack.dup_tsns, vec![TESTER_TSN + 1]);
    assert_eq!(t.app_recv().len(), 2);
}

/// ETSI D/8/7 (sctp-d-o-8-7): with a zero window and nothing in flight, one
/// DATA chunk probes the window; new data waits until the window opens.
/// RFC 9260 6.1 A.
#[test]
fn a_zero_window_is_probed_with_one_data_chunk() {
    let mut t = client_with(no_heartbeats(), 1500);
    let max = Config::rfc9260().max_data_payload();
    let tsn = t.iut_tsn;
    t.app_send(0, max);
    t.expect(types::DATA);
    t.send(vec![sack(tsn, 0)]);
    t.app_send(0, max);
    t.app_send(0, max);
    let probe = t.next_packet(ms(150)).expect("a window probe");
    assert_eq!(probe.tsns(), vec![tsn + 1]);
    let again = t.wait_for(types::DATA, secs(1));
    assert_eq!(again.tsns(), vec![tsn + 1], "only the probe, no new data");
    t.send(vec![sack(tsn + 1, 1500)]);
    let next = t.expect(types::DATA);
    assert_eq!(next.tsns(), vec![tsn + 2]);
}

/// ETSI D/8/8 (sctp-d-o-8-8): a zero window is probed with the next fragment
/// of a fragmented message. RFC 9260 6.1 A, 6.9.
#[test]
fn a_zero_window_is_probed_with_the_next_fragment() {
    let mut t = client_with(no_heartbeats(), 1500);
    let max = Config::rfc9260().max_data_payload();
    let tsn = t.iut_tsn;
    t.app_send(0, 2 * max + 100);
    let first = t.expect(types::DATA);
    assert_eq!(first.data()[0].0, B);
    t.send(vec![sack(tsn, 0)]);
    let probe = t.next_packet(ms(150)).expect("a window probe");
    assert_eq!(probe.data(), vec![(M, tsn + 1, 0, 0, max)]);
    t.send(vec![sack(tsn, 0)]);
    let again = t.wait_for(types::DATA, secs(1));
    assert_eq!(again.tsns(), vec![tsn + 1]);
    t.send(vec![sack(tsn + 1, 1500)]);
    let last = t.expect(types::DATA);
    assert_eq!(last.data(), vec![(E, tsn + 2, 0, 0, 100)]);
}

/// ETSI D/8/9 (sctp-d-v-8-9): on T3 expiry, retransmissions go before new
/// data. RFC 9260 6.1 C, 6.3.3 E3.
#[test]
fn retransmissions_are_sent_before_new_data() {
    let mut t = client_with(no_heartbeats(), 5000);
    let max = Config::rfc9260().max_data_payload();
    let tsn = t.iut_tsn;
    t.app_send(0, max);
    t.expect(types::DATA);
    t.ack_up_to(tsn);
    t.app_send(0, max);
    t.app_send(0, max);
    let mut sent = Vec::new();
    while let Some(o) = t.poll() {
        sent.extend(o.tsns());
    }
    assert_eq!(sent, vec![tsn + 1, tsn + 2]);
    t.send(vec![Chunk::Sack(Sack {
        cum_tsn_ack: tsn,
        a_rwnd: 5000,
        gap_blocks: vec![GapBlock { start: 2, end: 2 }],
        dup_tsns: vec![],
    })]);
    t.app_send(0, max);
    t.app_send(0, max);
    while t.poll().is_some() {}
    let rtx = t.wait_for(types::DATA, secs(2));
    assert_eq!(
        rtx.tsns().first(),
        Some(&(tsn + 1)),
        "the retransmission first"
    );
}

/// ETSI D/8/10 (sctp-d-v-8-10): a SACK from the peer's other address is
/// accepted. RFC 9260 6.4, 8.5.
#[test]
fn a_sack_from_another_peer_address_is_accepted() {
    let mut t = Tester::server_with(no_heartbeats());
    let other: SocketAddr = "192.0.2.2:9899".parse().expect("address");
    let mut i = init(TESTER_TAG);
    i.params = vec![
        Param::Ipv4Address("192.0.2.1".parse().expect("v4")),
        Param::Ipv4Address("192.0.2.2".parse().expect("v4")),
    ];
    t.establish_with(i);
    let d = t.iut_sends(100);
    let now = t.now;
    let bytes = packet(t.iut_tag, vec![sack(d.tsns()[0], TESTER_RWND)]);
    t.iut.handle_datagram(now, other, &bytes);
    assert_eq!(t.assoc().flight_size(), 0);
    let outs = t.advance(secs(2));
    assert!(
        outs.iter().all(|o| !o.has(types::DATA)),
        "no retransmission"
    );
}

/// ETSI D/8/11 (sctp-d-i-8-11): a DATA chunk without user data gets ABORT
/// (No User Data). RFC 9260 6.2, 3.3.10.9.
#[test]
fn an_empty_data_chunk_is_aborted_with_no_user_data() {
    let mut t = Tester::client();
    t.establish_as_client_with(fast_rto(), init_ack(TESTER_TAG));
    t.send(vec![data(TESTER_TSN, 0, 0, 0)]);
    let abort = t.expect(types::ABORT);
    let p = abort.packet();
    let Some(Chunk::Abort(a)) = p.chunks.first() else {
        unreachable!()
    };
    assert_eq!(a.causes, vec![ErrorCause::NoUserData { tsn: TESTER_TSN }]);
    assert_eq!(t.state(), State::Closed);
}

/// ETSI D/8/12 (sctp-d-o-8-12): a SACK older than the cumulative TSN already
/// acknowledged is ignored. RFC 9260 6.2.1 D i.
#[test]
fn an_outdated_sack_is_ignored() {
    let mut t = client_with(no_heartbeats(), 1500);
    let d1 = t.iut_sends(1000);
    let tsn = d1.tsns()[0];
    t.ack_up_to(tsn);
    let d2 = t.iut_sends(1000);
    t.send(vec![Chunk::Sack(Sack {
        cum_tsn_ack: tsn.wrapping_sub(1),
        a_rwnd: 1500,
        gap_blocks: vec![GapBlock { start: 2, end: 2 }],
        dup_tsns: vec![],
    })]);
    let again = t.wait_for(types::DATA, secs(1));
    assert_eq!(again.tsns(), d2.tsns());
    assert_eq!(again.at - d2.at, ms(100));
    t.ack_up_to(tsn + 1);
    assert_eq!(t.assoc().flight_size(), 0);
}

fn small_messages() -> Config {
    Config {
        max_message_size: 3000,
        ..Config::rfc9260()
    }
}

/// ETSI D/8/13 (sctp-d-v-8-13, not in nplab): a message of the maximum size
/// is received whole. RFC 9260 6.9.
#[test]
fn a_message_of_the_maximum_size_is_received() {
    let mut t = Tester::client();
    t.establish_as_client_with(small_messages(), init_ack(TESTER_TAG));
    t.send(vec![
        data_with(B, TESTER_TSN, 0, 0, 1000),
        data_with(M, TESTER_TSN + 1, 0, 0, 1000),
        data_with(E, TESTER_TSN + 2, 0, 0, 1000),
    ]);
    assert_eq!(t.app_recv(), vec![(0, 3000)]);
}

/// ETSI D/8/14 (sctp-d-v-8-14, not in nplab): a message of the maximum size
/// is sent, fragmented. RFC 9260 6.9.
#[test]
fn a_message_of_the_maximum_size_is_sent() {
    let mut t = Tester::client();
    t.establish_as_client_with(small_messages(), init_ack(TESTER_TAG));
    t.app_send(0, 3000);
    let mut bytes = 0;
    while let Some(o) = t.poll() {
        bytes += o.data().iter().map(|d| d.4).sum::<usize>();
    }
    assert_eq!(bytes, 3000);
}

/// ETSI D/8/15 (sctp-d-v-8-15, not in nplab): a message over the maximum
/// size is refused to the application. RFC 9260 6.9 (an implementation limit).
#[test]
fn a_message_over_the_maximum_size_is_refused() {
    let mut t = Tester::client();
    t.establish_as_client_with(small_messages(), init_ack(TESTER_TAG));
    assert_eq!(
        t.try_send(0, 3001),
        Err(SendError::MessageTooLarge {
            size: 3001,
            max: 3000
        })
    );
    t.silent();
}

/// `Config::largest_message_received` (an implementation limit, RFC 9260
/// 6.9): a message over the maximum size ends the association with ABORT.
#[test]
fn a_received_message_over_the_maximum_size_ends_the_association() {
    let mut t = Tester::client();
    t.establish_as_client_with(small_messages(), init_ack(TESTER_TAG));
    t.send(vec![
        data_with(B, TESTER_TSN, 0, 0, 1000),
        data_with(M, TESTER_TSN + 1, 0, 0, 1000),
        data_with(M, TESTER_TSN + 2, 0, 0, 1000),
        data_with(E, TESTER_TSN + 3, 0, 0, 1000),
    ]);
    let abort = t.next_packet(ms(10)).expect("an ABORT");
    assert!(abort.has(types::ABORT), "{:?}", names(&abort.types()));
    assert_eq!(t.state(), State::Closed);
}

/// RFC 9260 7.2.4: the third SACK reporting a TSN missing triggers its fast
/// retransmission at once, before T3 expires.
#[test]
fn a_tsn_reported_missing_three_times_is_fast_retransmitted() {
    let mut t = client_with(no_heartbeats(), 100_000);
    let tsn = t.iut_tsn;
    for _ in 0..5 {
        t.app_send(0, 100);
    }
    let mut sent = Vec::new();
    while let Some(o) = t.poll() {
        sent.extend(o.tsns());
    }
    assert_eq!(sent, (tsn..tsn + 5).collect::<Vec<_>>());
    for end in 2..=4u16 {
        t.send(vec![Chunk::Sack(Sack {
            cum_tsn_ack: tsn.wrapping_sub(1),
            a_rwnd: 100_000,
            gap_blocks: vec![GapBlock { start: 2, end }],
            dup_tsns: vec![],
        })]);
        if end < 4 {
            assert!(t.poll().is_none_or(|o| !o.tsns().contains(&tsn)));
        }
    }
    let rtx = t.expect(types::DATA);
    assert_eq!(rtx.tsns(), vec![tsn]);
}

/// RFC 9260 6.2.1: gap blocks take the reported TSNs out of the flight;
/// a later cumulative ack covers the rest, and nothing is retransmitted.
#[test]
fn gap_reports_and_the_cumulative_ack_clear_the_flight() {
    let mut t = client_with(no_heartbeats(), 100_000);
    let tsn = t.iut_tsn;
    for _ in 0..3 {
        t.app_send(0, 100);
    }
    while t.poll().is_some() {}
    t.send(vec![Chunk::Sack(Sack {
        cum_tsn_ack: tsn.wrapping_sub(1),
        a_rwnd: 100_000,
        gap_blocks: vec![GapBlock { start: 2, end: 3 }],
        dup_tsns: vec![],
    })]);
    t.ack_up_to(tsn + 2);
    assert_eq!(t.assoc().flight_size(), 0);
    let outs = t.advance(secs(3));
    assert!(outs.iter().all(|o| !o.has(types::DATA)));
}

/// RFC 9260 6.6: an unordered message is delivered at once, past an ordered
/// one waiting for an earlier SSN.
#[test]
fn an_unordered_message_is_delivered_past_an_ordered_gap() {
    let mut t = Tester::client();
    t.establish_as_client();
    t.send(vec![data(TESTER_TSN, 0, 1, 100)]);
    assert!(t.app_recv().is_empty(), "SSN 1 waits for SSN 0");
    let unordered = DataFlags {
        unordered: true,
        ..DataFlags::UNFRAGMENTED
    };
    t.send(vec![data_with(unordered, TESTER_TSN + 1, 0, 0, 50)]);
    assert_eq!(t.app_recv(), vec![(0, 50)]);
    t.send(vec![data(TESTER_TSN + 2, 0, 0, 10)]);
    assert_eq!(t.app_recv(), vec![(0, 10), (0, 100)]);
}

/// RFC 9260 6.5: each outbound stream numbers its messages from SSN 0.
#[test]
fn each_stream_numbers_its_messages_from_ssn_zero() {
    let mut t = client_with(Config::rfc9260(), 100_000);
    for stream in [0u16, 1, 0, 1, 2] {
        t.app_send(stream, 10);
    }
    let mut seen = Vec::new();
    while let Some(o) = t.poll() {
        seen.extend(o.data().into_iter().map(|d| (d.2, d.3)));
    }
    seen.sort_unstable();
    assert_eq!(seen, vec![(0, 0), (0, 1), (1, 0), (1, 1), (2, 0)]);
}
