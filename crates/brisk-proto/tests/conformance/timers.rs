//! Retransmission timer and fault handling: ETSI TS 102 369 groups RT
//! (nplab `sctp-rt-tests`) and FH/5/1 (`sctp-fh-i-5-1-*`), RFC 9260 6.3, 8.1, 8.2.
//!
//! Covered: RT/11/1, 11/2, 11/3, FH/5/1/1, 5/1/2, and D/8/5 (T3 timeouts).
//!
//! Not applicable: none. (RT/11/3, dual homing, uses a second peer
//! address listed in the INIT.)

use std::net::SocketAddr;

use brisk_proto::wire::chunk::types;
use brisk_proto::wire::{Chunk, ErrorCause, Param};
use brisk_proto::{CloseReason, Config, State};

use crate::tester::*;

fn fh_config() -> Config {
    Config {
        rto_initial: ms(100),
        rto_min: ms(50),
        rto_max: ms(200),
        heartbeats: false,
        ..Config::rfc9260()
    }
}

/// The times (ms since `from`) of the packets with DATA `tsn` in `outs`.
fn times_of(outs: &[Out], tsn: u32, from: brisk_proto::Time) -> Vec<u64> {
    outs.iter()
        .filter(|o| o.tsns().contains(&tsn))
        .map(|o| (o.at - from).as_millis() as u64)
        .collect()
}

/// ETSI FH/5/1/1 (sctp-fh-i-5-1-1): DATA is retransmitted on T3 until
/// Association.Max.Retrans, then the association ends with an ABORT (without
/// Protocol Violation). RFC 9260 8.1, 6.3.3.
#[test]
fn unacknowledged_data_ends_the_association_after_association_max_retrans() {
    let mut t = Tester::server_with(fh_config());
    t.establish();
    let d = t.iut_sends(1000);
    let tsn = d.tsns()[0];
    let outs = t.advance(secs(10));
    let times = times_of(&outs, tsn, d.at);
    assert_eq!(
        times,
        vec![100, 300, 500, 700, 900, 1100, 1300, 1500, 1700, 1900]
    );
    let last = outs.last().expect("an ABORT");
    assert_first(last, types::ABORT);
    assert!(
        !last.cause_codes().contains(&ErrorCause::PROTOCOL_VIOLATION),
        "causes {:?}",
        last.cause_codes()
    );
    assert!(matches!(
        t.closed(),
        Some(CloseReason::PeerUnreachable { .. })
    ));
    t.assert_gone();
}

/// ETSI FH/5/1/2 (sctp-fh-i-5-1-2): a SACK resets the error count, so new
/// data gets the full Association.Max.Retrans again. RFC 9260 8.1, 8.3.
#[test]
fn a_sack_resets_the_association_error_count() {
    let mut t = Tester::server_with(fh_config());
    t.establish();
    let d = t.iut_sends(1000);
    let tsn = d.tsns()[0];
    let outs = t.advance(ms(550));
    assert_eq!(times_of(&outs, tsn, d.at), vec![100, 300, 500]);
    t.ack_up_to(tsn);
    let d2 = t.iut_sends(1000);
    let tsn2 = d2.tsns()[0];
    let outs = t.advance(secs(10));
    assert_eq!(times_of(&outs, tsn2, d2.at).len(), 10);
    assert_first(outs.last().expect("an ABORT"), types::ABORT);
    assert_eq!(t.state(), State::Closed);
}

/// ETSI RT/11/1 and RT/11/2 (sctp-rt-i-11-1, -11-2): T3-rtx doubles the RTO
/// up to RTO.Max on each expiry, and a SACK of new data stops it. RFC 9260
/// 6.3.3 E1/E2, 6.3.2 R3.
#[test]
fn t3_rtx_backs_off_to_rto_max_and_stops_when_acknowledged() {
    let mut t = Tester::server_with(fast_rto());
    t.establish();
    let d = t.iut_sends(1000);
    let tsn = d.tsns()[0];
    let outs = t.advance(ms(3200));
    assert_eq!(
        times_of(&outs, tsn, d.at),
        vec![100, 300, 700, 1500, 2300, 3100]
    );
    t.ack_up_to(tsn);
    t.silent_for(secs(5));
    t.tester_shuts_down();
}

/// ETSI RT/11/3 (sctp-rt-i-11-3): with two peer addresses, a T3
/// retransmission goes to the other, confirmed address. RFC 9260 6.4.1.
#[test]
fn t3_retransmissions_go_to_an_alternate_address() {
    let mut t = Tester::server_with(fast_rto());
    let other: SocketAddr = "192.0.2.2:9899".parse().expect("address");
    let mut i = init(TESTER_TAG);
    i.params = vec![
        Param::Ipv4Address("192.0.2.1".parse().expect("v4")),
        Param::Ipv4Address("192.0.2.2".parse().expect("v4")),
    ];
    t.establish_with(i);
    // Confirm the second address: answer its HEARTBEAT (RFC 9260 5.4).
    let mut confirmed = false;
    while let Some(out) = t.next_packet(secs(3)) {
        if out.to != other || !out.has(types::HEARTBEAT) {
            continue;
        }
        let p = out.packet();
        let Some(Chunk::Heartbeat(h)) = p.chunks.first() else {
            continue;
        };
        let info = h.info().expect("info").to_vec();
        let ack = packet(
            t.iut_tag,
            vec![Chunk::HeartbeatAck(
                brisk_proto::wire::chunk::HeartbeatAck {
                    params: vec![Param::HeartbeatInfo(info.into())],
                },
            )],
        );
        let now = t.now;
        t.iut.handle_datagram(now, other, &ack);
        confirmed = true;
        break;
    }
    assert!(confirmed, "the IUT probes the listed address");
    let paths = t.assoc().paths();
    assert!(
        paths.iter().all(|p| p.confirmed),
        "both addresses confirmed: {paths:?}"
    );
    let d = t.iut_sends(1000);
    assert_eq!(d.to, t.me);
    let again = t.wait_for(types::DATA, secs(2));
    assert_eq!(again.tsns(), d.tsns());
    assert_eq!(again.to, other);
}

/// RFC 9260 6.3.3 E3, 7.2.3: when T3 expires, one packet's worth of the
/// earliest outstanding DATA is retransmitted (cwnd is one MTU); the rest
/// waits for an acknowledgement.
#[test]
fn a_t3_expiry_retransmits_one_packet_of_the_earliest_data() {
    let mut t = Tester::server_with(Config {
        heartbeats: false,
        ..fast_rto()
    });
    t.establish();
    let max = Config::rfc9260().max_data_payload();
    let tsn = t.iut_tsn;
    for _ in 0..3 {
        t.app_send(0, max);
    }
    let mut first = Vec::new();
    while let Some(o) = t.poll() {
        first.extend(o.tsns());
    }
    assert_eq!(first, vec![tsn, tsn + 1, tsn + 2]);
    let outs = t.advance(ms(150));
    let rtx: Vec<Vec<u32>> = outs.iter().map(Out::tsns).collect();
    assert_eq!(rtx, vec![vec![tsn]], "one packet, the earliest TSN");
    t.ack_up_to(tsn);
    let next = t.expect(types::DATA);
    assert_eq!(next.tsns(), vec![tsn + 1]);
}

/// RFC 9260 6.3.1 C2: the first RTT measurement R sets SRTT = R, RTTVAR =
/// R/2 and RTO = SRTT + 4 RTTVAR, so T3 for the next DATA runs 3R.
#[test]
fn the_first_rtt_measurement_sets_the_rto() {
    let mut t = Tester::server_with(Config {
        rto_initial: ms(800),
        rto_min: ms(100),
        rto_max: secs(2),
        heartbeats: false,
        ..Config::rfc9260()
    });
    t.establish();
    let d = t.iut_sends(100);
    t.advance(ms(100));
    t.ack_up_to(d.tsns()[0]);
    let d2 = t.iut_sends(100);
    let again = t.wait_for(types::DATA, secs(2));
    assert_eq!(again.tsns(), d2.tsns());
    assert_eq!(again.at - d2.at, ms(300));
}
