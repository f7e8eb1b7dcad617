//! Invalid messages, verification tags and out-of-the-blue packets: ETSI TS
//! 102 369 groups IMH (nplab `sctp-imh-tests`) and FH/5/3 (`sctp-fh-o-5-3-*`),
//! RFC 9260 8.4, 8.5, 8.5.1, 5.1.5, 6.8.
//!
//! Covered: IMH/3/1 to 3/10, FH/5/3/1 to 5/3/5.
//!
//! Not applicable: none. (FH/5/3/5, a non-unicast source, is played with a
//! multicast source address handed to `handle_datagram`.)

use std::net::SocketAddr;

use brisk_proto::State;
use brisk_proto::wire::chunk::types;
use brisk_proto::wire::{Chunk, ErrorCause};

use crate::tester::*;

/// ETSI IMH/3/1 (sctp-imh-i-3-1): an INIT chunk too short for its fields is
/// discarded without an ABORT; a good INIT is then answered. RFC 9260 3.3.2, 6.8.
#[test]
fn a_too_short_init_is_discarded_silently() {
    let mut t = Tester::server();
    t.send_bytes(&raw_packet(0, &[1, 0, 0, 8, 1, 2, 3, 4]));
    t.silent();
    assert_eq!(t.iut.association_count(), 0);
    t.send_tagged(0, vec![Chunk::Init(init(TESTER_TAG))]);
    t.expect(types::INIT_ACK);
}

/// ETSI IMH/3/2 (sctp-imh-i-3-2): an INIT ACK too short for its fields does
/// not move COOKIE-WAIT on (discarded, or answered with ABORT). RFC 9260 3.3.3.
#[test]
fn a_too_short_init_ack_does_not_establish() {
    let mut t = Tester::client();
    t.connect(fast_rto());
    let init = t.expect(types::INIT);
    t.learn_init(&init);
    let tag = t.iut_tag;
    t.send_bytes(&raw_packet(tag, &[2, 0, 0, 8, 1, 2, 3, 4]));
    if let Some(out) = t.poll() {
        assert_first(&out, types::ABORT);
        assert_eq!(t.state(), State::Closed);
    } else {
        assert_eq!(t.state(), State::CookieWait);
        t.wait_for(types::INIT, secs(1));
    }
}

/// ETSI IMH/3/3 (sctp-imh-i-3-3): a COOKIE ECHO with a wrong verification tag
/// is discarded; the right one then establishes. RFC 9260 8.5.
#[test]
fn a_cookie_echo_with_a_wrong_tag_is_discarded() {
    let mut t = Tester::server();
    t.send_tagged(0, vec![Chunk::Init(init(TESTER_TAG))]);
    let ack = t.expect(types::INIT_ACK);
    t.iut_tag = ack.init_fields().0;
    t.send_tagged(t.iut_tag ^ 0x5555, vec![cookie_echo(ack.cookie())]);
    t.silent();
    assert_eq!(t.iut.association_count(), 0);
    t.send(vec![cookie_echo(ack.cookie())]);
    t.expect(types::COOKIE_ACK);
}

/// ETSI IMH/3/4 (sctp-imh-i-3-4): an INIT with a bad checksum is discarded.
/// RFC 9260 6.8.
#[test]
fn an_init_with_a_bad_checksum_is_discarded() {
    let mut t = Tester::server();
    let mut bytes = packet(0, vec![Chunk::Init(init(TESTER_TAG))]);
    bytes[8] ^= 0xff;
    t.send_bytes(&bytes);
    t.silent();
    t.send_tagged(0, vec![Chunk::Init(init(TESTER_TAG))]);
    t.expect(types::INIT_ACK);
}

/// ETSI IMH/3/5 (sctp-imh-i-3-5): a COOKIE ECHO with a forged cookie is
/// discarded; the real one then establishes. RFC 9260 5.1.5.
#[test]
fn a_cookie_echo_with_a_forged_cookie_is_discarded() {
    let mut t = Tester::server();
    t.send_tagged(0, vec![Chunk::Init(init(TESTER_TAG))]);
    let ack = t.expect(types::INIT_ACK);
    t.iut_tag = ack.init_fields().0;
    t.send(vec![cookie_echo([1, 2, 3, 4].repeat(4))]);
    t.silent();
    assert_eq!(t.iut.association_count(), 0);
    t.send(vec![cookie_echo(ack.cookie())]);
    t.expect(types::COOKIE_ACK);
}

/// ETSI IMH/3/6 (sctp-imh-i-3-6): a COOKIE ECHO past the cookie's life gets
/// an ERROR (Stale Cookie). RFC 9260 5.1.5 (3), 3.3.10.3.
#[test]
fn an_expired_cookie_gets_a_stale_cookie_error() {
    let mut t = Tester::server();
    t.send_tagged(0, vec![Chunk::Init(init(TESTER_TAG))]);
    let ack = t.expect(types::INIT_ACK);
    t.iut_tag = ack.init_fields().0;
    t.advance(secs(65));
    t.send(vec![cookie_echo(ack.cookie())]);
    let err = t.expect(types::ERROR);
    assert_eq!(err.tag(), TESTER_TAG);
    assert_eq!(err.cause_codes(), vec![ErrorCause::STALE_COOKIE]);
    assert_eq!(t.iut.association_count(), 0);
}

/// ETSI IMH/3/7 (sctp-imh-i-3-7): an ABORT with a wrong verification tag is
/// discarded. RFC 9260 8.5.1 B.
#[test]
fn an_abort_with_a_wrong_tag_is_discarded() {
    let mut t = Tester::server();
    t.establish();
    t.send_tagged(t.iut_tag ^ 0x5555, vec![abort(false)]);
    assert_eq!(t.state(), State::Established);
    t.tester_shuts_down();
}

/// ETSI IMH/3/8 (sctp-imh-i-3-8): a chunk whose length runs past the packet
/// is discarded; the endpoint still answers an OOTB SHUTDOWN ACK. RFC 9260 6.8, 8.4.
#[test]
fn a_chunk_longer_than_its_packet_is_discarded() {
    let mut t = Tester::server();
    t.send_bytes(&raw_packet(0, &[1, 0, 0, 0x60]));
    t.silent();
    t.send_tagged(1, vec![shutdown_ack()]);
    let c = t.expect(types::SHUTDOWN_COMPLETE);
    assert!(c.t_bit());
}

/// ETSI IMH/3/9 (sctp-imh-i-3-9): a SHUTDOWN ACK with a wrong tag in
/// SHUTDOWN-SENT is discarded; SHUTDOWN is retransmitted. RFC 9260 8.5.
#[test]
fn a_shutdown_ack_with_a_wrong_tag_is_discarded() {
    let mut t = Tester::server_with(fast_rto());
    t.establish();
    t.app_shutdown();
    t.expect(types::SHUTDOWN);
    t.send_tagged(t.iut_tag ^ 0x5555, vec![shutdown_ack()]);
    t.silent();
    assert_eq!(t.state(), State::ShutdownSent);
    t.wait_for(types::SHUTDOWN, secs(1));
    t.send(vec![shutdown_ack()]);
    t.expect(types::SHUTDOWN_COMPLETE);
}

/// ETSI IMH/3/10 (sctp-imh-i-3-10): a SHUTDOWN COMPLETE with a wrong tag in
/// SHUTDOWN-ACK-SENT is discarded; SHUTDOWN ACK is retransmitted. RFC 9260 8.5.1 C.
#[test]
fn a_shutdown_complete_with_a_wrong_tag_is_discarded() {
    let mut t = Tester::server_with(fast_rto());
    t.establish();
    t.send(vec![shutdown(t.iut_tsn.wrapping_sub(1))]);
    t.expect(types::SHUTDOWN_ACK);
    t.send_tagged(t.iut_tag ^ 0x5555, vec![shutdown_complete(false)]);
    assert_eq!(t.state(), State::ShutdownAckSent);
    t.wait_for(types::SHUTDOWN_ACK, secs(1));
    t.send(vec![shutdown_complete(false)]);
    assert_eq!(t.state(), State::Closed);
}

/// ETSI FH/5/3/1 (sctp-fh-o-5-3-1): out-of-the-blue DATA gets ABORT with the
/// T bit and the packet's tag. RFC 9260 8.4 rule 8.
#[test]
fn out_of_the_blue_data_gets_an_abort_with_the_t_bit() {
    let mut t = Tester::server();
    t.send_tagged(1, vec![data(1, 0, 1, 1000)]);
    let abort = t.expect(types::ABORT);
    assert!(abort.t_bit());
    assert_eq!(abort.tag(), 1);
}

/// ETSI FH/5/3/2 (sctp-fh-o-5-3-2): an out-of-the-blue ABORT is not
/// answered. RFC 9260 8.4 rule 2.
#[test]
fn an_out_of_the_blue_abort_is_not_answered() {
    let mut t = Tester::server();
    t.send_tagged(1, vec![abort(false)]);
    t.silent();
    t.send_tagged(1, vec![shutdown_ack()]);
    assert!(t.expect(types::SHUTDOWN_COMPLETE).t_bit());
}

/// ETSI FH/5/3/3 (sctp-fh-o-5-3-3): an out-of-the-blue SHUTDOWN ACK gets
/// SHUTDOWN COMPLETE with the T bit and the packet's tag. RFC 9260 8.4 rule 5.
#[test]
fn an_out_of_the_blue_shutdown_ack_gets_shutdown_complete_with_the_t_bit() {
    let mut t = Tester::server();
    t.send_tagged(1, vec![shutdown_ack()]);
    let c = t.expect(types::SHUTDOWN_COMPLETE);
    assert!(c.t_bit());
    assert_eq!(c.tag(), 1);
}

/// ETSI FH/5/3/4 (sctp-fh-o-5-3-4): an out-of-the-blue SHUTDOWN COMPLETE is
/// not answered. RFC 9260 8.4 rule 6.
#[test]
fn an_out_of_the_blue_shutdown_complete_is_not_answered() {
    let mut t = Tester::server();
    t.send_tagged(1, vec![shutdown_complete(false)]);
    t.silent();
    t.send_tagged(2, vec![shutdown_ack()]);
    assert_eq!(t.expect(types::SHUTDOWN_COMPLETE).tag(), 2);
}

/// ETSI FH/5/3/5 (sctp-fh-o-5-3-5): a COOKIE ECHO from a non-unicast source
/// is discarded. RFC 9260 8.4 rule 1.
#[test]
fn a_cookie_echo_from_a_multicast_source_is_discarded() {
    let mut t = Tester::server();
    t.send_tagged(0, vec![Chunk::Init(init(TESTER_TAG))]);
    let ack = t.expect(types::INIT_ACK);
    let multicast: SocketAddr = "224.0.0.1:9899".parse().expect("address");
    let bytes = packet(ack.init_fields().0, vec![cookie_echo(ack.cookie())]);
    let now = t.now;
    t.iut.handle_datagram(now, multicast, &bytes);
    t.silent();
    assert_eq!(t.iut.association_count(), 0);
}

/// RFC 9260 8.5: DATA with a wrong verification tag is discarded: not
/// delivered, not acknowledged.
#[test]
fn data_with_a_wrong_tag_is_discarded() {
    let mut t = Tester::server();
    t.establish();
    t.send_tagged(t.iut_tag ^ 0x5555, vec![data(TESTER_TSN, 0, 0, 100)]);
    t.silent_for(secs(1));
    assert!(t.app_recv().is_empty());
}

/// RFC 9260 8.5.1 B: an ABORT with the T bit is accepted when it carries
/// the peer's own tag (the one the IUT puts on its packets).
#[test]
fn an_abort_with_the_t_bit_and_the_peers_tag_is_accepted() {
    let mut t = Tester::server();
    t.establish();
    t.send_tagged(TESTER_TAG, vec![abort(true)]);
    assert_eq!(t.state(), State::Closed);
}

/// RFC 9260 8.5.1 B: an ABORT with the T bit and the IUT's own tag is
/// discarded.
#[test]
fn an_abort_with_the_t_bit_and_the_iuts_tag_is_discarded() {
    let mut t = Tester::server();
    t.establish();
    t.send(vec![abort(true)]);
    assert_eq!(t.state(), State::Established);
}

/// RFC 9260 8.5.1 C: a SHUTDOWN COMPLETE with the T bit and the peer's tag
/// ends SHUTDOWN-ACK-SENT.
#[test]
fn a_shutdown_complete_with_the_t_bit_and_the_peers_tag_is_accepted() {
    let mut t = Tester::server();
    t.establish();
    t.send(vec![shutdown(t.iut_tsn.wrapping_sub(1))]);
    t.expect(types::SHUTDOWN_ACK);
    t.send_tagged(TESTER_TAG, vec![shutdown_complete(true)]);
    assert_eq!(t.state(), State::Closed);
}

/// RFC 9260 8.4 rule 7: an out-of-the-blue COOKIE ACK is discarded.
#[test]
fn an_out_of_the_blue_cookie_ack_is_discarded() {
    let mut t = Tester::server();
    t.send_tagged(
        1,
        vec![Chunk::CookieAck(brisk_proto::wire::chunk::CookieAck)],
    );
    t.silent();
}

/// RFC 9260 8.4 rule 7: an out-of-the-blue Stale Cookie ERROR is discarded.
#[test]
fn an_out_of_the_blue_stale_cookie_error_is_discarded() {
    let mut t = Tester::server();
    let err = Chunk::Error(brisk_proto::wire::chunk::OperationError {
        causes: vec![ErrorCause::StaleCookie { staleness_us: 1000 }],
    });
    t.send_tagged(1, vec![err]);
    t.silent();
}

/// RFC 9260 8.4 rule 8: any other out-of-the-blue chunk (here SACK and INIT
/// ACK) gets ABORT with the T bit and the packet's tag.
#[test]
fn other_out_of_the_blue_chunks_get_an_abort_with_the_t_bit() {
    for chunk in [sack(5, 1500), Chunk::InitAck(init_ack(9))] {
        let mut t = Tester::server();
        t.send_tagged(7, vec![chunk]);
        let abort = t.expect(types::ABORT);
        assert!(abort.t_bit());
        assert_eq!(abort.tag(), 7);
    }
}

/// RFC 9260 8.4 rule 1 (and the flooding advice of its Security
/// Considerations): out-of-the-blue INIT or DATA from a multicast or
/// broadcast source is discarded, not answered.
#[test]
fn out_of_the_blue_packets_from_non_unicast_sources_are_not_answered() {
    for source in ["224.0.0.1:9899", "255.255.255.255:9899", "[ff02::1]:9899"] {
        let from: SocketAddr = source.parse().expect("address");
        for (tag, chunk) in [
            (0, Chunk::Init(init(TESTER_TAG))),
            (1, data(TESTER_TSN, 0, 0, 100)),
        ] {
            let mut t = Tester::server();
            let bytes = packet(tag, vec![chunk]);
            let now = t.now;
            t.iut.handle_datagram(now, from, &bytes);
            if let Some(out) = t.poll() {
                panic!("answered {source} with {:?}", names(&out.types()));
            }
        }
    }
}

/// RFC 9260 8.5.1 A: a packet with tag 0 must carry only an INIT; a SACK
/// with tag 0 in ESTABLISHED is discarded.
#[test]
fn a_non_init_packet_with_tag_zero_is_discarded() {
    let mut t = Tester::server();
    t.establish();
    t.send_tagged(0, vec![data(TESTER_TSN, 0, 0, 100)]);
    t.silent_for(secs(1));
    assert!(t.app_recv().is_empty());
}
