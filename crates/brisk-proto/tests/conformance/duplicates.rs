//! Duplicate and unexpected handshake and shutdown chunks: ETSI TS 102 369
//! group DM (nplab `sctp-dm-tests`), RFC 9260 5.2, 8.4, 8.5.1, 9.2.
//!
//! Covered: DM/4/1, 4/2/1, 4/2/2, 4/3, 4/4, 4/5, 4/6/1, 4/6/2, 4/6/3,
//! 4/7/1, 4/7/2, 4/7/3, 4/8, 4/9, 4/10.
//!
//! Not applicable: none.

use brisk_proto::State;
use brisk_proto::wire::Chunk;
use brisk_proto::wire::chunk::{CookieAck, types};

use crate::tester::*;

/// The IUT (client) has sent its INIT and waits in COOKIE-WAIT.
fn cookie_wait() -> Tester {
    let mut t = Tester::client();
    t.connect(brisk_proto::Config::rfc9260());
    let init = t.expect(types::INIT);
    t.learn_init(&init);
    t
}

/// ETSI DM/4/1 (sctp-dm-o-4-1): an INIT in COOKIE-WAIT gets an INIT ACK with
/// our original Initiate Tag, tagged with the new INIT's tag. RFC 9260 5.2.1.
#[test]
fn an_init_in_cookie_wait_is_answered_with_our_original_tag() {
    let mut t = cookie_wait();
    t.send_tagged(0, vec![Chunk::Init(init(TESTER_TAG))]);
    let ack = t.expect(types::INIT_ACK);
    assert_eq!(ack.tag(), TESTER_TAG);
    assert_eq!(ack.init_fields().0, t.iut_tag);
    assert_eq!(ack.init_fields().4, t.iut_tsn);
}

/// ETSI DM/4/2/1 (sctp-dm-o-4-2-1): a repeated INIT in ESTABLISHED gets an
/// INIT ACK and the association carries on. RFC 9260 5.2.2.
#[test]
fn a_repeated_init_in_established_gets_an_init_ack_and_changes_nothing() {
    let mut t = Tester::server();
    t.establish();
    t.advance(ms(100));
    t.send_tagged(0, vec![Chunk::Init(init(TESTER_TAG))]);
    let ack = t.expect(types::INIT_ACK);
    assert_eq!(ack.tag(), TESTER_TAG);
    assert_eq!(t.state(), State::Established);
    t.send(vec![heartbeat()]);
    assert_eq!(t.expect(types::HEARTBEAT_ACK).tag(), TESTER_TAG);
    t.tester_shuts_down();
}

/// ETSI DM/4/2/2 (sctp-dm-o-4-2-2): an INIT in SHUTDOWN-ACK-SENT is
/// discarded and SHUTDOWN ACK sent again. RFC 9260 9.2.
#[test]
fn an_init_in_shutdown_ack_sent_gets_the_shutdown_ack_again() {
    let mut t = Tester::server();
    t.establish();
    t.send(vec![shutdown(t.iut_tsn.wrapping_sub(1))]);
    t.expect(types::SHUTDOWN_ACK);
    t.send_tagged(0, vec![Chunk::Init(init(TESTER_TAG))]);
    let again = t.expect(types::SHUTDOWN_ACK);
    assert_eq!(again.tag(), TESTER_TAG);
    t.send(vec![shutdown_complete(false)]);
    assert_eq!(t.state(), State::Closed);
}

/// ETSI DM/4/3 (sctp-dm-o-4-3): an INIT ACK in COOKIE-ECHOED is discarded.
/// RFC 9260 5.2.3.
#[test]
fn an_init_ack_in_cookie_echoed_is_discarded() {
    let mut t = cookie_wait();
    t.send(vec![Chunk::InitAck(init_ack(TESTER_TAG))]);
    t.expect(types::COOKIE_ECHO);
    t.send(vec![Chunk::InitAck(init_ack(TESTER_TAG))]);
    assert_eq!(t.state(), State::CookieEchoed);
    if let Some(out) = t.poll() {
        assert_first(&out, types::COOKIE_ECHO);
    }
    t.send(vec![Chunk::CookieAck(CookieAck)]);
    assert_eq!(t.state(), State::Established);
}

/// ETSI DM/4/4 (sctp-dm-o-4-4): a COOKIE ACK in ESTABLISHED is discarded.
/// RFC 9260 5.2.5.
#[test]
fn a_cookie_ack_in_established_is_discarded() {
    let mut t = Tester::fast_client();
    t.send(vec![Chunk::CookieAck(CookieAck)]);
    t.silent();
    assert_eq!(t.state(), State::Established);
    let d = t.iut_sends(1000);
    t.ack_up_to(d.tsns()[0]);
    t.iut_shuts_down();
}

/// ETSI DM/4/5 and DM/4/6/3 (sctp-dm-o-4-5, sctp-dm-o-4-6-3): a SHUTDOWN in
/// SHUTDOWN-SENT is answered with SHUTDOWN ACK at once, and T2 restarts for
/// it. RFC 9260 9.2.
#[test]
fn a_shutdown_in_shutdown_sent_is_answered_with_shutdown_ack_and_t2_restarts() {
    let mut t = Tester::fast_client();
    t.app_shutdown();
    t.expect(types::SHUTDOWN);
    t.advance(ms(50));
    t.send(vec![shutdown(t.iut_tsn.wrapping_sub(1))]);
    let ack = t.expect(types::SHUTDOWN_ACK);
    assert_eq!(t.state(), State::ShutdownAckSent);
    let again = t.wait_for(types::SHUTDOWN_ACK, secs(1));
    assert_eq!(
        again.at - ack.at,
        ms(100),
        "T2 restarted at the SHUTDOWN ACK"
    );
    t.send(vec![shutdown_complete(false)]);
    assert_eq!(t.state(), State::Closed);
}

/// ETSI DM/4/6/1 (sctp-dm-o-4-6-1): a SHUTDOWN in COOKIE-WAIT is discarded;
/// the INIT is retransmitted and setup completes. RFC 9260 8.5.1, 5.1.
#[test]
fn a_shutdown_in_cookie_wait_is_discarded() {
    let mut t = cookie_wait();
    t.send(vec![shutdown(0)]);
    t.silent();
    assert_eq!(t.state(), State::CookieWait);
    t.wait_for(types::INIT, secs(2));
    t.send(vec![Chunk::InitAck(init_ack(TESTER_TAG))]);
    t.expect(types::COOKIE_ECHO);
    t.send(vec![Chunk::CookieAck(CookieAck)]);
    assert_eq!(t.state(), State::Established);
}

/// ETSI DM/4/6/2 (sctp-dm-o-4-6-2): an out-of-the-blue SHUTDOWN gets ABORT
/// with the T bit and the received tag. RFC 9260 8.4 rule 8.
#[test]
fn an_out_of_the_blue_shutdown_gets_an_abort_with_the_t_bit() {
    let mut t = Tester::server();
    t.send_tagged(1, vec![shutdown(0)]);
    let abort = t.expect(types::ABORT);
    assert!(abort.t_bit());
    assert_eq!(abort.tag(), 1);
}

/// ETSI DM/4/7/1 (sctp-dm-o-4-7-1): a SHUTDOWN ACK in COOKIE-WAIT is
/// answered with SHUTDOWN COMPLETE, T bit set. RFC 9260 8.5.1 E, 8.4 rule 5.
#[test]
fn a_shutdown_ack_in_cookie_wait_gets_shutdown_complete_with_the_t_bit() {
    let mut t = cookie_wait();
    t.send(vec![shutdown_ack()]);
    let c = t.expect(types::SHUTDOWN_COMPLETE);
    assert!(c.t_bit());
    assert_eq!(c.tag(), t.iut_tag);
}

/// ETSI DM/4/7/2 (sctp-dm-o-4-7-2): a SHUTDOWN ACK in ESTABLISHED is
/// discarded; the association carries on. RFC 9260 9.2.
#[test]
fn a_shutdown_ack_in_established_is_discarded() {
    let mut t = Tester::fast_client();
    t.send(vec![shutdown_ack()]);
    assert_eq!(t.state(), State::Established);
    t.advance(secs(1));
    t.send(vec![heartbeat()]);
    t.expect(types::HEARTBEAT_ACK);
    t.iut_shuts_down();
}

/// ETSI DM/4/7/3 (sctp-dm-o-4-7-3): a SHUTDOWN ACK in SHUTDOWN-ACK-SENT is
/// answered with SHUTDOWN COMPLETE and ends the association. RFC 9260 9.2.
#[test]
fn a_shutdown_ack_in_shutdown_ack_sent_completes_the_close() {
    let mut t = Tester::server();
    t.establish();
    t.send(vec![shutdown(t.iut_tsn.wrapping_sub(1))]);
    t.expect(types::SHUTDOWN_ACK);
    t.send(vec![shutdown_ack()]);
    let c = t.expect(types::SHUTDOWN_COMPLETE);
    assert!(!c.t_bit());
    assert_eq!(c.tag(), TESTER_TAG);
    assert_eq!(t.state(), State::Closed);
}

/// ETSI DM/4/8 (sctp-dm-o-4-8): a COOKIE ECHO with a bad MAC in ESTABLISHED
/// is discarded. RFC 9260 5.1.5.
#[test]
fn a_cookie_echo_with_a_bad_mac_in_established_is_discarded() {
    let mut t = Tester::fast_client();
    t.send(vec![cookie_echo(vec![
        1, 2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
    ])]);
    t.silent();
    assert_eq!(t.state(), State::Established);
    t.send(vec![heartbeat()]);
    t.expect(types::HEARTBEAT_ACK);
    t.iut_shuts_down();
}

/// ETSI DM/4/9 (sctp-dm-o-4-9): a SHUTDOWN COMPLETE in COOKIE-WAIT is
/// discarded; INIT is retransmitted. RFC 9260 8.5.1 C.
#[test]
fn a_shutdown_complete_in_cookie_wait_is_discarded() {
    let mut t = cookie_wait();
    t.send(vec![shutdown_complete(false)]);
    t.silent();
    assert_eq!(t.state(), State::CookieWait);
    t.wait_for(types::INIT, secs(2));
}

/// ETSI DM/4/10 (sctp-dm-o-4-10): DATA in SHUTDOWN-ACK-SENT is not
/// acknowledged; the SHUTDOWN ACK is repeated and the close completes. RFC 9260 9.2.
#[test]
fn data_in_shutdown_ack_sent_does_not_stop_the_close() {
    let mut t = Tester::server();
    t.establish();
    t.send(vec![shutdown(t.iut_tsn.wrapping_sub(1))]);
    t.expect(types::SHUTDOWN_ACK);
    t.advance(ms(200));
    let c = t.next_data(1000);
    t.send(vec![c]);
    let next = t.next_packet(secs(5)).expect("SHUTDOWN ACK again");
    assert!(next.has(types::SHUTDOWN_ACK), "{:?}", names(&next.types()));
    t.send(vec![shutdown_complete(false)]);
    assert_eq!(t.state(), State::Closed);
}

/// ETSI DM/4/2/1 from the peer's second address: the INIT ACK answering an
/// INIT in ESTABLISHED goes to the INIT's source, not to the primary path.
/// RFC 9260 5.2.2 (and 8.4: a reply goes to the packet's source).
#[test]
fn an_init_ack_in_established_goes_to_the_inits_source_address() {
    let mut t = Tester::server();
    let mut i = init(TESTER_TAG);
    i.params = vec![
        brisk_proto::wire::Param::Ipv4Address("192.0.2.1".parse().expect("v4")),
        brisk_proto::wire::Param::Ipv4Address("192.0.2.2".parse().expect("v4")),
    ];
    t.establish_with(i.clone());
    let other: std::net::SocketAddr = "192.0.2.2:9899".parse().expect("address");
    let now = t.now;
    t.iut
        .handle_datagram(now, other, &packet(0, vec![Chunk::Init(i)]));
    let ack = t.expect(types::INIT_ACK);
    assert_eq!(ack.to, other);
    assert_eq!(ack.tag(), TESTER_TAG);
}

/// RFC 9260 5.2.4 (case D, the COOKIE ACK was lost): a repeated COOKIE ECHO
/// in ESTABLISHED gets a COOKIE ACK again; nothing else changes.
#[test]
fn a_repeated_cookie_echo_in_established_gets_a_cookie_ack_again() {
    let mut t = Tester::server();
    t.send_tagged(0, vec![Chunk::Init(init(TESTER_TAG))]);
    let ack = t.expect(types::INIT_ACK);
    t.iut_tag = ack.init_fields().0;
    t.iut_tsn = ack.init_fields().4;
    t.send(vec![cookie_echo(ack.cookie())]);
    t.expect(types::COOKIE_ACK);
    t.advance(ms(100));
    t.send(vec![cookie_echo(ack.cookie())]);
    let again = t.expect(types::COOKIE_ACK);
    assert_eq!(again.tag(), TESTER_TAG);
    assert_eq!(t.state(), State::Established);
    assert!(!t.saw(|e| *e == brisk_proto::Event::Restarted));
}

/// RFC 9260 8.5.1 B, 5.1: an ABORT answering our INIT (our Initiate Tag, T
/// bit clear) ends COOKIE-WAIT.
#[test]
fn an_abort_answering_our_init_ends_cookie_wait() {
    let mut t = cookie_wait();
    t.send(vec![abort(false)]);
    assert_eq!(t.state(), State::Closed);
    t.silent_for(secs(5));
}

/// RFC 9260 5.2.4 A: the peer restarted (a new INIT and COOKIE ECHO with a
/// new tag, same address): the INIT ACK carries a new Initiate Tag, the
/// COOKIE ECHO is answered with COOKIE ACK, and the restart is reported.
#[test]
fn a_peer_restart_is_answered_and_reported() {
    let mut t = Tester::server();
    t.establish();
    let old_tag = t.iut_tag;
    t.advance(ms(100));
    let new_peer_tag = TESTER_TAG + 1;
    t.send_tagged(0, vec![Chunk::Init(init(new_peer_tag))]);
    let ack = t.expect(types::INIT_ACK);
    assert_eq!(ack.tag(), new_peer_tag);
    let (tag, ..) = ack.init_fields();
    assert_ne!(tag, old_tag, "RFC 9260 5.2.2: a new Initiate Tag");
    t.iut_tag = tag;
    t.send(vec![cookie_echo(ack.cookie())]);
    let cack = t.expect(types::COOKIE_ACK);
    assert_eq!(cack.tag(), new_peer_tag);
    assert!(t.saw(|e| *e == brisk_proto::Event::Restarted));
    assert_eq!(t.state(), State::Established);
}

/// RFC 9260 5.2.1, 5.2.4 D: crossed INITs. The IUT in COOKIE-WAIT answers
/// the tester's INIT with its original tag; the tester's COOKIE ECHO, whose
/// tags both match, sets up the association, answered with COOKIE ACK; the
/// IUT's own COOKIE ECHO then gets its COOKIE ACK. One association.
#[test]
fn crossed_inits_end_in_one_association() {
    let mut t = cookie_wait();
    t.send_tagged(0, vec![Chunk::Init(init(TESTER_TAG))]);
    let ack = t.expect(types::INIT_ACK);
    assert_eq!(ack.init_fields().0, t.iut_tag);
    t.send(vec![Chunk::InitAck(init_ack(TESTER_TAG))]);
    t.expect(types::COOKIE_ECHO);
    t.send(vec![cookie_echo(ack.cookie())]);
    let cack = t.expect(types::COOKIE_ACK);
    assert_eq!(cack.tag(), TESTER_TAG);
    assert_eq!(t.state(), State::Established);
    t.send(vec![Chunk::CookieAck(CookieAck)]);
    assert_eq!(t.state(), State::Established);
    assert_eq!(t.iut.association_count(), 1);
    t.app_send(0, 100);
    assert_eq!(t.expect(types::DATA).tag(), TESTER_TAG);
}
