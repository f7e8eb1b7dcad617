//! Association termination: ETSI TS 102 369 group AT (nplab `sctp-at-tests`),
//! RFC 9260 9.1 and 9.2.
//!
//! Covered: AT/2/2, 2/3, 2/4, 2/5, 2/6, 2/7/1 to 2/7/4, 2/8, 2/9, 2/10,
//! 2/11, 2/12, 2/13, 2/14. (2/9 checks the SHUTDOWN ACK after outstanding
//! data is acknowledged; what to do with DATA after SHUTDOWN is unspecified,
//! as nplab notes, and is not asserted.)
//!
//! Not applicable: none.

use brisk_proto::wire::chunk::types;
use brisk_proto::wire::{Chunk, ErrorCause};
use brisk_proto::{CloseReason, Config, State};

use crate::tester::*;

fn shutdown_cum(out: &Out) -> u32 {
    out.packet()
        .chunks
        .iter()
        .find_map(|c| match c {
            Chunk::Shutdown(s) => Some(s.cum_tsn_ack),
            _ => None,
        })
        .expect("a SHUTDOWN")
}

/// ETSI AT/2/2 (sctp-at-v-2-2): an ABORT in ESTABLISHED ends the association.
/// RFC 9260 9.1.
#[test]
fn an_abort_in_established_ends_the_association() {
    let mut t = Tester::fast_client();
    t.send(vec![abort(false)]);
    assert!(matches!(t.closed(), Some(CloseReason::PeerAbort { .. })));
    t.assert_gone();
}

/// ETSI AT/2/3 (sctp-at-i-2-3): SHUTDOWN waits for outstanding data to be
/// acknowledged. RFC 9260 9.2.
#[test]
fn shutdown_is_sent_only_once_outstanding_data_is_acknowledged() {
    let mut t = Tester::fast_client();
    let d = t.iut_sends(1000);
    t.app_shutdown();
    assert_eq!(t.state(), State::ShutdownPending);
    t.silent();
    t.ack_up_to(d.tsns()[0]);
    let s = t.expect(types::SHUTDOWN);
    assert_eq!(shutdown_cum(&s), TESTER_TSN.wrapping_sub(1));
    t.send(vec![shutdown_ack()]);
    assert!(!t.expect(types::SHUTDOWN_COMPLETE).t_bit());
}

/// ETSI AT/2/4 (sctp-at-i-2-4): an unanswered SHUTDOWN is sent again when
/// T2-shutdown expires, after RTO. RFC 9260 9.2.
#[test]
fn an_unanswered_shutdown_is_retransmitted_after_rto() {
    let mut t = Tester::fast_client();
    t.app_shutdown();
    let s = t.expect(types::SHUTDOWN);
    let again = t.wait_for(types::SHUTDOWN, secs(1));
    assert_eq!(again.at - s.at, ms(100));
}

/// The ABORT sent when a retransmission limit is reached: no Protocol
/// Violation cause (RFC 9260 3.3.10.13 is for protocol violations).
fn assert_limit_abort(out: &Out) {
    assert_first(out, types::ABORT);
    assert!(
        !out.cause_codes().contains(&ErrorCause::PROTOCOL_VIOLATION),
        "causes {:?}",
        out.cause_codes()
    );
}

fn limited(max_retrans: u32) -> Config {
    Config {
        rto_initial: ms(500),
        rto_min: ms(500),
        rto_max: ms(1000),
        assoc_max_retrans: max_retrans,
        path_max_retrans: max_retrans,
        heartbeats: false,
        ..Config::rfc9260()
    }
}

/// ETSI AT/2/5 (sctp-at-i-2-5): SHUTDOWN retransmissions back off to
/// RTO.Max, and the T5-shutdown-guard timer (5 x RTO.Max) ends the shutdown
/// with an ABORT. RFC 9260 9.2, 8.1.
#[test]
fn shutdown_retransmissions_stop_at_association_max_retrans_with_an_abort() {
    let mut t = Tester::client();
    t.establish_as_client_with(limited(5), init_ack(TESTER_TAG));
    t.app_shutdown();
    t.expect(types::SHUTDOWN);
    let outs = t.advance(secs(10));
    let times: Vec<u64> = outs
        .iter()
        .filter(|o| o.has(types::SHUTDOWN))
        .map(|o| o.at.as_micros() / 1000)
        .collect();
    assert_eq!(times, vec![500, 1500, 2500, 3500, 4500]);
    let last = outs.last().expect("an ABORT at the end");
    assert_limit_abort(last);
    assert_eq!(last.at.as_micros() / 1000, 5000, "T5 = 5 x RTO.Max");
    t.assert_gone();
}

/// ETSI AT/2/6 (sctp-at-v-2-6): SHUTDOWN ACK in SHUTDOWN-SENT is answered
/// with SHUTDOWN COMPLETE and ends the association. RFC 9260 9.2.
#[test]
fn a_shutdown_ack_in_shutdown_sent_completes_the_close() {
    let mut t = Tester::fast_client();
    t.iut_shuts_down();
    t.assert_gone();
}

fn assert_rejected(t: &mut Tester) {
    let r = t.try_send(0, 1000);
    assert!(r.is_err(), "RFC 9260 9.2: no new data after shutdown");
}

/// ETSI AT/2/7/1 (sctp-at-i-2-7-1): user data is refused in SHUTDOWN-SENT. RFC 9260 9.2.
#[test]
fn sending_in_shutdown_sent_is_refused() {
    let mut t = Tester::fast_client();
    t.app_shutdown();
    t.expect(types::SHUTDOWN);
    assert_eq!(t.state(), State::ShutdownSent);
    assert_rejected(&mut t);
    let again = t.wait_for(types::SHUTDOWN, secs(1));
    assert!(!again.has(types::DATA));
    t.send(vec![shutdown_ack()]);
    t.expect(types::SHUTDOWN_COMPLETE);
}

/// ETSI AT/2/7/2 (sctp-at-i-2-7-2): user data is refused in SHUTDOWN-RECEIVED. RFC 9260 9.2.
#[test]
fn sending_in_shutdown_received_is_refused() {
    let mut t = Tester::fast_client();
    let d = t.iut_sends(1000);
    t.send(vec![shutdown(d.tsns()[0].wrapping_sub(1))]);
    assert_eq!(t.state(), State::ShutdownReceived);
    assert!(t.saw(|e| *e == brisk_proto::Event::PeerShutdown));
    assert_rejected(&mut t);
    t.send(vec![shutdown(d.tsns()[0])]);
    t.expect(types::SHUTDOWN_ACK);
    t.send(vec![shutdown_complete(false)]);
    assert_eq!(t.state(), State::Closed);
}

/// ETSI AT/2/7/3 (sctp-at-i-2-7-3): user data is refused in SHUTDOWN-PENDING. RFC 9260 9.2.
#[test]
fn sending_in_shutdown_pending_is_refused() {
    let mut t = Tester::fast_client();
    let d = t.iut_sends(1000);
    t.app_shutdown();
    assert_eq!(t.state(), State::ShutdownPending);
    assert_rejected(&mut t);
    t.ack_up_to(d.tsns()[0]);
    t.expect(types::SHUTDOWN);
    t.send(vec![shutdown_ack()]);
    t.expect(types::SHUTDOWN_COMPLETE);
}

/// ETSI AT/2/7/4 (sctp-at-i-2-7-4): user data is refused in SHUTDOWN-ACK-SENT. RFC 9260 9.2.
#[test]
fn sending_in_shutdown_ack_sent_is_refused() {
    let mut t = Tester::fast_client();
    t.send(vec![shutdown(t.iut_tsn.wrapping_sub(1))]);
    t.expect(types::SHUTDOWN_ACK);
    assert_eq!(t.state(), State::ShutdownAckSent);
    assert_rejected(&mut t);
    let again = t.wait_for(types::SHUTDOWN_ACK, secs(1));
    assert!(!again.has(types::DATA));
    t.send(vec![shutdown_complete(false)]);
    assert_eq!(t.state(), State::Closed);
}

/// ETSI AT/2/8 (sctp-at-i-2-8): DATA in SHUTDOWN-SENT is answered at once
/// with a SHUTDOWN carrying the new cumulative TSN, and delivered. RFC 9260 9.2.
#[test]
fn data_in_shutdown_sent_is_answered_with_shutdown_at_once() {
    let mut t = Tester::fast_client();
    t.app_shutdown();
    t.expect(types::SHUTDOWN);
    let c = t.next_data(1000);
    t.send(vec![c]);
    let s = t.poll().expect("an immediate answer");
    assert!(s.has(types::SHUTDOWN), "{:?}", names(&s.types()));
    assert_eq!(shutdown_cum(&s), TESTER_TSN);
    assert_eq!(t.app_recv(), vec![(0, 1000)]);
    let c = t.next_data(1000);
    t.send(vec![c]);
    let s = t.poll().expect("an immediate answer");
    assert!(s.has(types::SHUTDOWN), "{:?}", names(&s.types()));
    assert_eq!(shutdown_cum(&s), TESTER_TSN + 1);
    t.send(vec![shutdown_ack()]);
    t.expect(types::SHUTDOWN_COMPLETE);
}

/// ETSI AT/2/9 (sctp-at-i-2-9): in SHUTDOWN-RECEIVED, SHUTDOWN ACK waits for
/// the outstanding data to be acknowledged. RFC 9260 9.2.
#[test]
fn shutdown_ack_waits_for_outstanding_data_in_shutdown_received() {
    let mut t = Tester::client();
    t.establish_as_client_with(limited(10), init_ack(TESTER_TAG));
    let d = t.iut_sends(1000);
    t.send(vec![shutdown(d.tsns()[0].wrapping_sub(1))]);
    t.silent();
    t.advance(ms(200));
    t.ack_up_to(d.tsns()[0]);
    t.expect(types::SHUTDOWN_ACK);
    t.send(vec![shutdown_complete(false)]);
    assert_eq!(t.state(), State::Closed);
}

/// ETSI AT/2/10 (sctp-at-i-2-10): after SHUTDOWN, outstanding data is still
/// retransmitted, and SHUTDOWN ACK follows its acknowledgement. RFC 9260 9.2.
#[test]
fn outstanding_data_is_retransmitted_after_a_shutdown_arrives() {
    let mut t = Tester::fast_client();
    let d = t.iut_sends(1000);
    let tsn = d.tsns()[0];
    t.send(vec![shutdown(tsn.wrapping_sub(1))]);
    let again = t.wait_for(types::DATA, secs(1));
    assert_eq!(again.tsns(), vec![tsn]);
    assert_eq!(again.at - d.at, ms(100));
    t.send(vec![shutdown(tsn.wrapping_sub(1))]);
    t.ack_up_to(tsn);
    t.expect(types::SHUTDOWN_ACK);
    t.send(vec![shutdown_complete(false)]);
    assert_eq!(t.state(), State::Closed);
}

/// ETSI AT/2/11 (sctp-at-i-2-11): an unanswered SHUTDOWN ACK is sent again
/// after RTO. RFC 9260 9.2.
#[test]
fn an_unanswered_shutdown_ack_is_retransmitted_after_rto() {
    let mut t = Tester::fast_client();
    t.send(vec![shutdown(t.iut_tsn.wrapping_sub(1))]);
    let first = t.expect(types::SHUTDOWN_ACK);
    let again = t.wait_for(types::SHUTDOWN_ACK, secs(1));
    assert_eq!(again.at - first.at, ms(100));
    t.send(vec![shutdown_complete(false)]);
    assert_eq!(t.state(), State::Closed);
}

/// ETSI AT/2/12 (sctp-at-i-2-12): SHUTDOWN ACK retransmissions stop at
/// Association.Max.Retrans with an ABORT. RFC 9260 9.2, 8.1.
#[test]
fn shutdown_ack_retransmissions_stop_at_association_max_retrans_with_an_abort() {
    let mut t = Tester::client();
    t.establish_as_client_with(limited(5), init_ack(TESTER_TAG));
    t.send(vec![shutdown(t.iut_tsn.wrapping_sub(1))]);
    t.expect(types::SHUTDOWN_ACK);
    let outs = t.advance(secs(10));
    let n = outs.iter().filter(|o| o.has(types::SHUTDOWN_ACK)).count();
    assert_eq!(n, 5);
    assert_limit_abort(outs.last().expect("an ABORT at the end"));
    t.assert_gone();
}

/// ETSI AT/2/13 (sctp-at-i-2-13): SHUTDOWN COMPLETE in SHUTDOWN-ACK-SENT
/// ends the association. RFC 9260 9.2.
#[test]
fn a_shutdown_complete_in_shutdown_ack_sent_ends_the_association() {
    let mut t = Tester::fast_client();
    t.send(vec![shutdown(t.iut_tsn.wrapping_sub(1))]);
    t.expect(types::SHUTDOWN_ACK);
    t.send(vec![shutdown_complete(false)]);
    assert_eq!(t.closed(), Some(CloseReason::Shutdown));
    t.assert_gone();
}

/// ETSI AT/2/14 (sctp-at-v-2-14): a SHUTDOWN acknowledging all outstanding
/// data is answered with SHUTDOWN ACK at once. RFC 9260 9.2.
#[test]
fn a_shutdown_acknowledging_everything_is_answered_at_once() {
    let mut t = Tester::fast_client();
    let d = t.iut_sends(1000);
    t.send(vec![shutdown(d.tsns()[0])]);
    t.expect(types::SHUTDOWN_ACK);
    t.send(vec![shutdown_complete(false)]);
    assert_eq!(t.state(), State::Closed);
}

/// RFC 9260 9.1, 3.3.10.12: the application's abort sends ABORT with the
/// peer's tag, no T bit, and a User-Initiated Abort cause carrying the reason.
#[test]
fn an_application_abort_sends_abort_with_the_reason() {
    let mut t = Tester::fast_client();
    let now = t.now;
    t.assoc().abort(now, "bye");
    let out = t.expect(types::ABORT);
    assert_eq!(out.tag(), TESTER_TAG);
    assert!(!out.t_bit());
    let p = out.packet();
    let Some(Chunk::Abort(a)) = p.chunks.first() else {
        unreachable!()
    };
    assert_eq!(
        a.causes,
        vec![ErrorCause::UserInitiatedAbort(b"bye"[..].into())]
    );
    assert_eq!(t.state(), State::Closed);
    t.assert_gone();
}

/// RFC 9260 9.2: in SHUTDOWN-PENDING, queued data still goes out (within
/// cwnd, as SACKs arrive) and SHUTDOWN follows only once all of it is
/// acknowledged.
#[test]
fn queued_data_is_sent_and_acknowledged_before_shutdown() {
    let mut t = Tester::fast_client();
    let max = Config::rfc9260().max_data_payload();
    for _ in 0..8 {
        t.app_send(0, max);
    }
    t.app_shutdown();
    let mut sent = Vec::new();
    let mut shutdown_at = None;
    for _ in 0..20 {
        while let Some(out) = t.poll() {
            if out.has(types::SHUTDOWN) {
                shutdown_at = Some(sent.len());
            }
            sent.extend(out.tsns());
        }
        if shutdown_at.is_some() {
            break;
        }
        if let Some(&last) = sent.last() {
            t.ack_up_to(last);
        }
    }
    let first = t.iut_tsn;
    assert_eq!(sent, (first..first + 8).collect::<Vec<_>>());
    assert_eq!(shutdown_at, Some(8), "SHUTDOWN after all 8 TSNs");
}
