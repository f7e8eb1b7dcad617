//! Heartbeats: ETSI TS 102 369 FH/5/2 (nplab `sctp-fh-v-5-2`), RFC 9260 8.3.
//!
//! Covered: FH/5/2, and the IUT's own heartbeat on an idle path (RFC 9260
//! 8.3: every RTO + HB.interval, jittered by ±50% of RTO).
//!
//! Not applicable: none.

use brisk_proto::Config;
use brisk_proto::wire::Chunk;
use brisk_proto::wire::chunk::{Heartbeat, HeartbeatAck, types};

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
