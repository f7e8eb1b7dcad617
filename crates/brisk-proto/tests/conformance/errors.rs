//! Error handling: ETSI TS 102 369 groups E (nplab `sctp-e-tests`) and M,
//! unknown chunk types (`sctp-m-tests`), RFC 9260 3.2, 3.2.1, 3.3.10, 5.2.6, 6.5.
//!
//! Covered: E/6/1 to 6/6, M/10/1 to 10/4.
//!
//! Not applicable: none.

use brisk_proto::wire::chunk::{CookieAck, OperationError, types};
use brisk_proto::wire::{Chunk, ErrorCause, Param};
use brisk_proto::{Config, State};

use crate::tester::*;

fn stale_cookie() -> Chunk<'static> {
    Chunk::Error(OperationError {
        causes: vec![ErrorCause::StaleCookie {
            staleness_us: 1_000_000,
        }],
    })
}

/// ETSI E/6/1 (sctp-e-o-6-1): a Stale Cookie ERROR in COOKIE-ECHOED makes the
/// IUT start again with a new INIT. RFC 9260 5.2.6.
#[test]
fn a_stale_cookie_error_in_cookie_echoed_restarts_with_init() {
    let mut t = Tester::client();
    t.connect(Config::rfc9260());
    let init = t.expect(types::INIT);
    t.learn_init(&init);
    t.advance(ms(500));
    t.send(vec![Chunk::InitAck(init_ack(TESTER_TAG))]);
    t.expect(types::COOKIE_ECHO);
    t.advance(ms(500));
    t.send(vec![stale_cookie()]);
    let again = t.expect(types::INIT);
    assert_eq!(again.tag(), 0);
    assert_eq!(t.state(), State::CookieWait);
}

/// ETSI E/6/2 (sctp-e-o-6-2): a Stale Cookie ERROR outside COOKIE-ECHOED is
/// ignored; data still flows. RFC 9260 5.2.6.
#[test]
fn a_stale_cookie_error_in_established_is_ignored() {
    let mut t = Tester::client();
    t.establish_as_client();
    t.send(vec![stale_cookie()]);
    assert_eq!(t.state(), State::Established);
    t.advance(ms(100));
    let c = t.next_data(1000);
    t.send(vec![c]);
    let s = t.wait_for(types::SACK, ms(500));
    assert_eq!(s.sack().expect("SACK").cum_tsn_ack, TESTER_TSN);
    assert_eq!(t.app_recv(), vec![(0, 1000)]);
}

/// ETSI E/6/3 (sctp-e-i-6-3): DATA on a stream that does not exist gets an
/// ERROR (Invalid Stream Identifier) and its TSN is acknowledged. RFC 9260 6.5.
#[test]
fn data_on_a_missing_stream_gets_an_invalid_stream_error() {
    let mut t = Tester::client();
    let cfg = Config {
        outbound_streams: 1,
        max_inbound_streams: 1,
        ..Config::rfc9260()
    };
    t.establish_as_client_with(cfg, init_ack(TESTER_TAG));
    t.advance(ms(100));
    t.send(vec![data(TESTER_TSN, 1, 0, 1000)]);
    t.tsn += 1;
    let mut reported = false;
    while let Some(out) = t.next_packet(ms(500)) {
        let p = out.packet();
        if let Some(Chunk::Error(e)) = p.chunks.iter().find(|c| c.chunk_type() == types::ERROR) {
            assert_eq!(
                e.causes,
                vec![ErrorCause::InvalidStreamIdentifier { stream_id: 1 }]
            );
            reported = true;
            break;
        }
    }
    assert!(reported, "an ERROR chunk");
    assert!(t.app_recv().is_empty());
    t.iut_shuts_down();
}

/// ETSI E/6/4 (sctp-e-i-6-4): an INIT ACK without a State Cookie gets ABORT
/// (Missing Mandatory Parameter: State Cookie). RFC 9260 3.3.3, 3.3.10.2.
#[test]
fn an_init_ack_without_a_cookie_is_aborted_as_missing_a_mandatory_parameter() {
    let mut t = Tester::client();
    t.answer_init(|ack| {
        ack.params.clear();
    });
    let abort = t.expect(types::ABORT);
    let p = abort.packet();
    let Some(Chunk::Abort(a)) = p.chunks.first() else {
        unreachable!()
    };
    assert_eq!(
        a.causes,
        vec![ErrorCause::MissingMandatoryParameter {
            types: vec![Param::STATE_COOKIE]
        }]
    );
    assert_eq!(t.state(), State::Closed);
}

/// ETSI E/6/5 (sctp-e-i-6-5): an unknown INIT ACK parameter with high bits
/// 11 is reported in an ERROR bundled with the COOKIE ECHO. RFC 9260 3.2.1.
#[test]
fn an_unknown_init_ack_parameter_is_reported_with_the_cookie_echo() {
    let mut t = Tester::client();
    t.connect(Config::rfc9260());
    let init = t.expect(types::INIT);
    t.learn_init(&init);
    let mut ack = init_ack(TESTER_TAG);
    ack.params.insert(
        0,
        Param::Unknown {
            typ: 0xc00c,
            value: vec![1].into(),
        },
    );
    t.send(vec![Chunk::InitAck(ack)]);
    let echo = t.expect(types::COOKIE_ECHO);
    assert_eq!(echo.types(), vec![types::COOKIE_ECHO, types::ERROR]);
    let p = echo.packet();
    let Some(Chunk::Error(e)) = p.chunks.get(1) else {
        unreachable!()
    };
    let Some(ErrorCause::UnrecognizedParameters(raw)) = e.causes.first() else {
        panic!("Unrecognized Parameters, got {:?}", e.causes);
    };
    assert_eq!(&raw[..5], &[0xc0, 0x0c, 0, 5, 1]);
    t.send(vec![Chunk::CookieAck(CookieAck)]);
    assert_eq!(t.state(), State::Established);
}

/// ETSI E/6/6 (sctp-e-i-6-6): a COOKIE ECHO bundled with an ERROR
/// (Unrecognized Parameters) sets up the association. RFC 9260 5.1 (D), 6.10.
#[test]
fn a_cookie_echo_bundled_with_an_error_sets_up_the_association() {
    let mut t = Tester::server();
    t.send_tagged(0, vec![Chunk::Init(init(TESTER_TAG))]);
    let ack = t.expect(types::INIT_ACK);
    t.iut_tag = ack.init_fields().0;
    t.iut_tsn = ack.init_fields().4;
    let err = Chunk::Error(OperationError {
        causes: vec![ErrorCause::UnrecognizedParameters(
            vec![0xc0, 0x00, 0x00, 0x04].into(),
        )],
    });
    t.send(vec![cookie_echo(ack.cookie()), err]);
    t.expect(types::COOKIE_ACK);
    assert_eq!(t.state(), State::Established);
    t.advance(secs(1));
    t.tester_shuts_down();
}

/// Sends DATA bundled after an unknown chunk of type `typ` (value one byte).
fn unknown_then_data(typ: u8) -> Tester {
    let mut t = Tester::client();
    t.establish_as_client();
    t.advance(ms(100));
    let unknown = Chunk::Unknown(brisk_proto::wire::chunk::UnknownChunk::new(typ, 0, vec![1]));
    let c = t.next_data(1000);
    t.send(vec![unknown, c]);
    t
}

/// The Unrecognized Chunk Type causes of `out`, as the chunk types they quote.
fn unrecognized_chunks(out: &Out) -> Vec<u8> {
    let p = out.packet();
    p.chunks
        .iter()
        .flat_map(|c| match c {
            Chunk::Error(e) => e
                .causes
                .iter()
                .filter_map(|c| match c {
                    ErrorCause::UnrecognizedChunkType(raw) => raw.first().copied(),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// ETSI M/10/1 (sctp-m-i-10-1): an unknown chunk with high bits 11 is
/// skipped and reported; the bundled DATA is processed. RFC 9260 3.2.
#[test]
fn an_unknown_chunk_with_high_bits_11_is_reported_and_the_data_processed() {
    let mut t = unknown_then_data(0xef);
    let out = t.poll().expect("an ERROR at once");
    assert_eq!(unrecognized_chunks(&out), vec![0xef]);
    assert_eq!(t.app_recv(), vec![(0, 1000)]);
    let acked = out
        .sack()
        .or_else(|| t.wait_for(types::SACK, ms(200)).sack());
    assert_eq!(acked.expect("SACK").cum_tsn_ack, TESTER_TSN);
}

/// ETSI M/10/2 (sctp-m-i-10-2): an unknown chunk with high bits 00 stops
/// processing of the packet, unreported. RFC 9260 3.2.
#[test]
fn an_unknown_chunk_with_high_bits_00_discards_the_packet_silently() {
    let mut t = unknown_then_data(0x2f);
    t.silent_for(secs(1));
    assert!(t.app_recv().is_empty());
    t.tsn = TESTER_TSN;
    t.iut_shuts_down();
}

/// ETSI M/10/3 (sctp-m-i-10-3): an unknown chunk with high bits 01 stops
/// processing of the packet, and is reported. RFC 9260 3.2.
#[test]
fn an_unknown_chunk_with_high_bits_01_discards_the_packet_and_is_reported() {
    let mut t = unknown_then_data(0x6f);
    let out = t.expect(types::ERROR);
    assert_eq!(unrecognized_chunks(&out), vec![0x6f]);
    assert!(!out.has(types::SACK));
    assert!(t.app_recv().is_empty());
    t.tsn = TESTER_TSN;
    t.iut_shuts_down();
}

/// ETSI M/10/4 (sctp-m-i-10-4): an unknown chunk with high bits 10 is
/// skipped, unreported; the bundled DATA is processed. RFC 9260 3.2.
#[test]
fn an_unknown_chunk_with_high_bits_10_is_skipped_silently() {
    let mut t = unknown_then_data(0xaf);
    let s = t.wait_for(types::SACK, ms(200));
    assert!(!s.has(types::ERROR));
    assert_eq!(s.sack().expect("SACK").cum_tsn_ack, TESTER_TSN);
    assert_eq!(t.app_recv(), vec![(0, 1000)]);
    t.iut_shuts_down();
}
