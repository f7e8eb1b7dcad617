//! Bundling DATA with control chunks: ETSI TS 102 369 group BDC (nplab
//! `sctp-bdc-tests`), RFC 9260 6.10, 5.1, 9.2.
//!
//! Covered: BDC/7/1 to 7/8.
//!
//! Not applicable: none.

use brisk_proto::State;
use brisk_proto::wire::Chunk;
use brisk_proto::wire::chunk::{CookieAck, types};

use crate::tester::*;

/// ETSI BDC/7/1 (sctp-bdc-i-7-1): an INIT bundled with DATA is discarded (INIT
/// must be alone); a lone INIT is then answered. RFC 9260 6.10.
#[test]
fn an_init_bundled_with_data_is_discarded() {
    let mut t = Tester::server();
    t.send_tagged(
        0,
        vec![Chunk::Init(init(TESTER_TAG)), data(TESTER_TSN, 0, 0, 100)],
    );
    t.silent();
    assert_eq!(t.iut.association_count(), 0);
    t.advance(secs(1));
    t.send_tagged(0, vec![Chunk::Init(init(TESTER_TAG))]);
    t.expect(types::INIT_ACK);
}

/// ETSI BDC/7/2 (sctp-bdc-i-7-2): an INIT ACK bundled with DATA does not
/// complete the handshake (discarded, or answered with ABORT). RFC 9260 6.10.
#[test]
fn an_init_ack_bundled_with_data_does_not_proceed() {
    let mut t = Tester::client();
    t.connect(fast_rto());
    let i = t.expect(types::INIT);
    t.learn_init(&i);
    t.send(vec![
        Chunk::InitAck(init_ack(TESTER_TAG)),
        data(TESTER_TSN, 0, 0, 100),
    ]);
    match t.poll() {
        Some(out) => {
            assert_first(&out, types::ABORT);
            assert_eq!(t.state(), State::Closed);
        }
        None => assert_eq!(t.state(), State::CookieWait),
    }
}

/// ETSI BDC/7/3 (sctp-bdc-i-7-3): a SHUTDOWN COMPLETE bundled with DATA is
/// not taken as DATA; a lone SHUTDOWN COMPLETE then closes. RFC 9260 6.10.
#[test]
fn a_shutdown_complete_bundled_with_data_is_not_taken_as_data() {
    let mut t = Tester::server_with(fast_rto());
    t.establish();
    t.send(vec![shutdown(t.iut_tsn.wrapping_sub(1))]);
    t.expect(types::SHUTDOWN_ACK);
    t.send(vec![shutdown_complete(false), data(TESTER_TSN, 0, 0, 100)]);
    if let Some(out) = t.poll() {
        assert!(!out.has(types::SACK), "the DATA is not acknowledged");
    }
    if t.state() != State::Closed {
        t.send(vec![shutdown_complete(false)]);
    }
    assert_eq!(t.state(), State::Closed);
}

/// ETSI BDC/7/4 (sctp-bdc-v-7-4): a COOKIE ECHO bundled with DATA sets up the
/// association and delivers the DATA. RFC 9260 5.1 D, 6.10.
#[test]
fn a_cookie_echo_bundled_with_data_establishes_and_delivers() {
    let mut t = Tester::server();
    t.send_tagged(0, vec![Chunk::Init(init(TESTER_TAG))]);
    let ack = t.expect(types::INIT_ACK);
    t.iut_tag = ack.init_fields().0;
    t.iut_tsn = ack.init_fields().4;
    let c = t.next_data(100);
    t.send(vec![cookie_echo(ack.cookie()), c]);
    let cack = t.expect(types::COOKIE_ACK);
    assert_eq!(t.state(), State::Established);
    let acked = cack
        .sack()
        .or_else(|| t.wait_for(types::SACK, ms(200)).sack());
    assert_eq!(acked.expect("SACK").cum_tsn_ack, TESTER_TSN);
    assert_eq!(t.app_recv(), vec![(0, 100)]);
    t.tester_shuts_down();
}

/// ETSI BDC/7/5 (sctp-bdc-v-7-5): a COOKIE ACK bundled with DATA establishes
/// and delivers the DATA. RFC 9260 5.1 E, 6.10.
#[test]
fn a_cookie_ack_bundled_with_data_establishes_and_delivers() {
    let mut t = Tester::client();
    t.connect(brisk_proto::Config::rfc9260());
    let i = t.expect(types::INIT);
    t.learn_init(&i);
    t.send(vec![Chunk::InitAck(init_ack(TESTER_TAG))]);
    t.expect(types::COOKIE_ECHO);
    let c = t.next_data(100);
    t.send(vec![Chunk::CookieAck(CookieAck), c]);
    assert_eq!(t.state(), State::Established);
    assert_eq!(t.app_recv(), vec![(0, 100)]);
    let s = t.wait_for(types::SACK, ms(200));
    assert_eq!(s.sack().expect("SACK").cum_tsn_ack, TESTER_TSN);
}

/// ETSI BDC/7/6 (sctp-bdc-v-7-6): a SHUTDOWN bundled with a SACK is answered
/// with SHUTDOWN ACK. RFC 9260 6.10, 9.2.
#[test]
fn a_shutdown_bundled_with_a_sack_is_answered() {
    let mut t = Tester::server();
    t.establish();
    let cum = t.iut_tsn.wrapping_sub(1);
    t.send(vec![shutdown(cum), sack(cum, TESTER_RWND)]);
    t.expect(types::SHUTDOWN_ACK);
    t.send(vec![shutdown_complete(false)]);
    assert_eq!(t.state(), State::Closed);
}

/// ETSI BDC/7/7 (sctp-bdc-v-7-7): DATA bundled after a SACK is delivered and
/// acknowledged. RFC 9260 6.10.
#[test]
fn data_bundled_after_a_sack_is_delivered() {
    let mut t = Tester::server();
    t.establish();
    let cum = t.iut_tsn.wrapping_sub(1);
    let c = t.next_data(100);
    t.send(vec![sack(cum, TESTER_RWND), c]);
    assert_eq!(t.app_recv(), vec![(0, 100)]);
    let s = t.wait_for(types::SACK, ms(200));
    assert_eq!(s.sack().expect("SACK").cum_tsn_ack, TESTER_TSN);
    t.tester_shuts_down();
}

/// ETSI BDC/7/8 (sctp-bdc-v-7-8): a SHUTDOWN ACK bundled with DATA in
/// SHUTDOWN-SENT completes the close. RFC 9260 9.2.
#[test]
fn a_shutdown_ack_bundled_with_data_completes_the_close() {
    let mut t = Tester::fast_client();
    t.app_shutdown();
    t.expect(types::SHUTDOWN);
    t.send(vec![shutdown_ack(), data(TESTER_TSN, 0, 0, 100)]);
    let c = t.expect(types::SHUTDOWN_COMPLETE);
    assert!(!c.t_bit());
    assert_eq!(t.state(), State::Closed);
}
