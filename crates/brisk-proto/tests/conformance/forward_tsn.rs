//! Partial reliability (RFC 3758): nplab packetdrill scripts
//! `sctp_forward-tsn-supported-parameter` and `sctp_forward_tsn`
//! (tests/bsd/sctp), and the receiver's side of FORWARD TSN.
//!
//! Covered: the Forward-TSN-Supported parameter both ways, FORWARD TSN sent
//! for abandoned messages (with the stream and SSN skipped, alone or last in
//! its packet), FORWARD TSN received (cumulative TSN moves, SACK at once).
//!
//! Not applicable: none.

use brisk_proto::wire::chunk::{ForwardTsn, ForwardTsnStream, types};
use brisk_proto::wire::{Chunk, Param};
use brisk_proto::{Config, OutgoingMessage};

use crate::tester::*;

fn pr() -> Config {
    Config {
        partial_reliability: true,
        heartbeats: false,
        ..fast_rto()
    }
}

fn offers_forward_tsn(params: &[Param<'_>]) -> bool {
    params
        .iter()
        .any(|p| matches!(p, Param::ForwardTsnSupported))
}

/// nplab sctp_forward-tsn-supported-parameter: an INIT offering
/// Forward-TSN-Supported gets it back in the INIT ACK. RFC 3758 3.1.
#[test]
fn an_init_ack_answers_forward_tsn_supported_when_partial_reliability_is_on() {
    let mut t = Tester::server_with(pr());
    let mut i = init(TESTER_TAG);
    i.params = vec![Param::ForwardTsnSupported];
    let ack = t.establish_with(i);
    assert!(offers_forward_tsn(&ack.init_params()));
    assert!(t.assoc().partial_reliability());
    t.tester_shuts_down();
}

/// RFC 3758 3.1: without partial reliability configured, the INIT ACK does
/// not offer it, and the association does not use it.
#[test]
fn an_init_ack_does_not_offer_forward_tsn_when_partial_reliability_is_off() {
    let mut t = Tester::server();
    let mut i = init(TESTER_TAG);
    i.params = vec![Param::ForwardTsnSupported];
    let ack = t.establish_with(i);
    assert!(!offers_forward_tsn(&ack.init_params()));
    assert!(!t.assoc().partial_reliability());
}

/// A client with partial reliability, the tester offering it too.
fn pr_client() -> Tester {
    let mut t = Tester::client();
    let mut ack = init_ack(TESTER_TAG);
    ack.outbound_streams = 16;
    ack.inbound_streams = 16;
    ack.params.push(Param::ForwardTsnSupported);
    let init = t.establish_as_client_with(pr(), ack);
    assert!(offers_forward_tsn(&init.init_params()));
    t
}

/// The first FORWARD TSN the IUT sends within 2 s, and its packet.
fn next_forward_tsn(t: &mut Tester) -> (Out, ForwardTsn) {
    while let Some(out) = t.next_packet(secs(2)) {
        let p = out.packet();
        let found = p.chunks.iter().find_map(|c| match c {
            Chunk::ForwardTsn(f) => Some(f.clone()),
            _ => None,
        });
        if let Some(f) = found {
            return (out, f);
        }
    }
    panic!("no FORWARD TSN");
}

/// nplab sctp_forward_tsn: an abandoned message is skipped with a FORWARD
/// TSN naming its stream and SSN; the FORWARD TSN goes last in its packet.
/// RFC 3758 3.5 A2/C1, 3.2.
#[test]
fn an_abandoned_message_is_skipped_with_forward_tsn() {
    let mut t = pr_client();
    for ssn in 0..2u16 {
        let msg = OutgoingMessage::new(1, vec![7; 1000])
            .with_ppid(1234)
            .with_lifetime(ms(10));
        t.app_send_msg(msg);
        let d = t.expect(types::DATA);
        let tsn = d.tsns()[0];
        assert_eq!(d.data()[0].2, 1);
        assert_eq!(d.data()[0].3, ssn);
        let (out, f) = next_forward_tsn(&mut t);
        assert_eq!(f.new_cum_tsn, tsn);
        assert_eq!(f.streams, vec![ForwardTsnStream { stream_id: 1, ssn }]);
        assert_eq!(
            out.types().last(),
            Some(&types::FORWARD_TSN),
            "FORWARD TSN last in {:?}",
            names(&out.types())
        );
        t.ack_up_to(tsn);
    }
}

/// RFC 3758 3.6: a FORWARD TSN moves the receiver's cumulative TSN past a
/// gap; the data after it is delivered, and a SACK says so at once.
#[test]
fn a_forward_tsn_moves_the_cumulative_tsn_past_a_gap() {
    let mut t = pr_client();
    t.send(vec![data(TESTER_TSN + 1, 1, 1, 100)]);
    t.advance(ms(300));
    t.send(vec![Chunk::ForwardTsn(ForwardTsn {
        new_cum_tsn: TESTER_TSN,
        streams: vec![ForwardTsnStream {
            stream_id: 1,
            ssn: 0,
        }],
    })]);
    let s = t.expect(types::SACK);
    assert_eq!(s.sack().expect("SACK").cum_tsn_ack, TESTER_TSN + 1);
    assert_eq!(t.app_recv(), vec![(1, 100)]);
}

/// nplab sctp_forward_tsn (end): a FORWARD TSN for TSNs already received
/// changes nothing. RFC 3758 3.6.
#[test]
fn an_outdated_forward_tsn_is_ignored() {
    let mut t = pr_client();
    t.send(vec![data(TESTER_TSN, 1, 0, 100)]);
    assert_eq!(t.app_recv(), vec![(1, 100)]);
    t.advance(secs(2));
    t.send(vec![Chunk::ForwardTsn(ForwardTsn {
        new_cum_tsn: TESTER_TSN,
        streams: vec![ForwardTsnStream {
            stream_id: 1,
            ssn: 0,
        }],
    })]);
    if let Some(out) = t.poll() {
        assert_eq!(out.sack().expect("a SACK").cum_tsn_ack, TESTER_TSN);
    }
    assert!(t.app_recv().is_empty());
    t.tsn = TESTER_TSN + 1;
    t.iut_shuts_down();
}

/// RFC 3758 3.2 (and being conservative in what we send): a FORWARD TSN
/// goes last in its packet, so that a receiver that stops at it loses
/// nothing, and never after DATA, which usrsctp takes for a protocol
/// violation: the DATA ready with it goes in the next packet.
#[test]
fn a_forward_tsn_goes_last_and_never_shares_a_packet_with_data() {
    let mut t = pr_client();
    let msg = OutgoingMessage::new(1, vec![7; 100]).with_lifetime(ms(10));
    t.app_send_msg(msg);
    let first = t.expect(types::DATA);
    t.advance(ms(50));
    t.app_send_msg(OutgoingMessage::new(1, vec![8; 100]));
    t.expect(types::DATA);
    let (out, f) = next_forward_tsn(&mut t);
    assert_eq!(f.new_cum_tsn, first.tsns()[0]);
    assert!(!out.has(types::DATA), "bundled: {:?}", names(&out.types()));
    assert_eq!(
        out.types().last(),
        Some(&types::FORWARD_TSN),
        "FORWARD TSN last in {:?}",
        names(&out.types())
    );
}

/// RFC 3758 3.1, 3.6: without partial reliability negotiated, a FORWARD TSN
/// moves nothing: the gap stays, and the SACK still reports it.
#[test]
fn a_forward_tsn_without_partial_reliability_is_ignored() {
    let mut t = Tester::client();
    t.establish_as_client();
    t.send(vec![data(TESTER_TSN + 1, 1, 1, 100)]);
    t.advance(ms(300));
    t.send(vec![Chunk::ForwardTsn(ForwardTsn {
        new_cum_tsn: TESTER_TSN,
        streams: vec![ForwardTsnStream {
            stream_id: 1,
            ssn: 0,
        }],
    })]);
    t.send(vec![data(TESTER_TSN + 2, 1, 2, 100)]);
    let s = t.wait_for(types::SACK, ms(300));
    let sack = s.sack().expect("SACK");
    assert_eq!(sack.cum_tsn_ack, TESTER_TSN.wrapping_sub(1));
    assert!(t.app_recv().is_empty());
}
