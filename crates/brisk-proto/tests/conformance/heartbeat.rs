//! Heartbeats: ETSI TS 102 369 FH/5/2 (nplab `sctp-fh-v-5-2`), RFC 9260 8.3.
//!
//! Covered: FH/5/2, and the IUT's own heartbeat on an idle path (RFC 9260
//! 8.3: every RTO + HB.interval, jittered by ±50% of RTO).
//!
//! Not applicable: none.

use brisk_proto::Config;
use brisk_proto::wire::chunk::{Heartbeat, HeartbeatAck, types};
use brisk_proto::wire::{Chunk, Param};

use crate::tester::*;

/// ETSI FH/5/2 (sctp-fh-v-5-2): a HEARTBEAT is answered with a HEARTBEAT ACK
/// carrying the same Heartbeat Info. RFC 9260 8.3.
#[test]
fn a_heartbeat_is_answered_with_its_info_echoed() {
    let mut t = Tester::server();
    t.establish();
    t.send(vec![Chunk::Heartbeat(Heartbeat::new(vec![1, 2, 3, 4]))]);
    let ack = t.expect(types::HEARTBEAT_ACK);
    assert_eq!(ack.tag(), TESTER_TAG);
    let p = ack.packet();
    let Some(Chunk::HeartbeatAck(h)) = p.chunks.first() else {
        unreachable!()
    };
    assert_eq!(h.info(), Some(&[1u8, 2, 3, 4][..]));
    t.tester_shuts_down();
}

/// RFC 9260 8.3: an idle, confirmed path is probed with a HEARTBEAT within
/// RTO ± 50% + HB.interval; its HEARTBEAT ACK keeps the association up.
#[test]
fn an_idle_path_is_probed_within_rto_plus_hb_interval() {
    let mut t = Tester::server_with(Config {
        hb_interval: secs(30),
        ..Config::rfc9260()
    });
    t.establish();
    let start = t.now;
    let hb = t.wait_for(types::HEARTBEAT, secs(40));
    let waited = hb.at - start;
    assert!(
        waited >= ms(30_500) && waited <= ms(31_500),
        "waited {waited:?}: RTO 1 s ± 50% + 30 s"
    );
    let p = hb.packet();
    let Some(Chunk::Heartbeat(h)) = p.chunks.first() else {
        unreachable!()
    };
    let info = h.info().expect("Heartbeat Info").to_vec();
    t.send(vec![Chunk::HeartbeatAck(HeartbeatAck {
        params: vec![brisk_proto::wire::Param::HeartbeatInfo(info.into())],
    })]);
    assert_eq!(t.state(), brisk_proto::State::Established);
}

/// RFC 9260 5.4, 8.3: a HEARTBEAT ACK whose info the IUT did not send does
/// not confirm the address; the echoed info does.
#[test]
fn only_the_echoed_heartbeat_info_confirms_an_address() {
    let mut t = Tester::server_with(Config {
        heartbeats: false,
        ..Config::rfc9260()
    });
    let other: std::net::SocketAddr = "192.0.2.2:9899".parse().expect("address");
    let mut i = init(TESTER_TAG);
    i.params = vec![
        Param::Ipv4Address("192.0.2.1".parse().expect("v4")),
        Param::Ipv4Address("192.0.2.2".parse().expect("v4")),
    ];
    t.establish_with(i);
    let hb = t.wait_for(types::HEARTBEAT, secs(1));
    assert_eq!(
        hb.to, other,
        "RFC 9260 5.4: the unconfirmed address is probed"
    );
    let p = hb.packet();
    let Some(Chunk::Heartbeat(h)) = p.chunks.first() else {
        unreachable!()
    };
    let info = h.info().expect("info").to_vec();
    let ack = |info: Vec<u8>| {
        Chunk::HeartbeatAck(HeartbeatAck {
            params: vec![Param::HeartbeatInfo(info.into())],
        })
    };
    let forged: Vec<u8> = info.iter().map(|b| b ^ 0xff).collect();
    let now = t.now;
    t.iut
        .handle_datagram(now, other, &packet(t.iut_tag, vec![ack(forged)]));
    let confirmed = |t: &mut Tester| {
        t.assoc()
            .paths()
            .iter()
            .find(|p| p.remote == other)
            .map(|p| p.confirmed)
    };
    assert_eq!(confirmed(&mut t), Some(false));
    t.iut
        .handle_datagram(now, other, &packet(t.iut_tag, vec![ack(info)]));
    assert_eq!(confirmed(&mut t), Some(true));
}

/// RFC 9260 8.3, 6.4: a HEARTBEAT from the peer's second address is
/// answered there.
#[test]
fn a_heartbeat_ack_goes_to_the_heartbeats_source() {
    let mut t = Tester::server_with(Config {
        heartbeats: false,
        ..Config::rfc9260()
    });
    let other: std::net::SocketAddr = "192.0.2.2:9899".parse().expect("address");
    let mut i = init(TESTER_TAG);
    i.params = vec![
        Param::Ipv4Address("192.0.2.1".parse().expect("v4")),
        Param::Ipv4Address("192.0.2.2".parse().expect("v4")),
    ];
    t.establish_with(i);
    let now = t.now;
    let hb = Chunk::Heartbeat(Heartbeat::new(vec![9; 8]));
    t.iut
        .handle_datagram(now, other, &packet(t.iut_tag, vec![hb]));
    let ack = t.expect(types::HEARTBEAT_ACK);
    assert_eq!(ack.to, other);
}

/// RFC 9260 8.3, 8.1: each unanswered HEARTBEAT counts an error; past
/// Association.Max.Retrans the peer is unreachable and the association ends.
#[test]
fn unanswered_heartbeats_end_the_association_past_association_max_retrans() {
    let mut t = Tester::server_with(Config {
        hb_interval: secs(1),
        assoc_max_retrans: 2,
        path_max_retrans: 2,
        ..Config::rfc9260()
    });
    t.establish();
    let outs = t.advance(secs(60));
    let beats = outs.iter().filter(|o| o.has(types::HEARTBEAT)).count();
    assert_eq!(beats, 3, "Association.Max.Retrans + 1 heartbeats");
    assert_eq!(t.state(), brisk_proto::State::Closed);
    assert!(matches!(
        t.closed(),
        Some(brisk_proto::CloseReason::PeerUnreachable { .. })
    ));
}
