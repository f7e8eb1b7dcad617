//! Message interleaving (RFC 8260): nplab packetdrill script `sctp_i_data`
//! (tests/bsd/sctp), and the rule that DATA is not used once I-DATA is.
//!
//! Covered: I-DATA negotiated by Supported Extensions; the IUT sends I-DATA
//! (MID from 0, PPID in the first fragment); I-DATA received is delivered
//! and acknowledged; DATA on an I-DATA association is answered with ABORT.
//!
//! Not applicable: none.

use brisk_proto::wire::chunk::{DataFlags, IData, PpidOrFsn, types};
use brisk_proto::wire::{Chunk, ErrorCause, Param};
use brisk_proto::{Config, State};

use crate::tester::*;

fn interleaving() -> Config {
    Config {
        message_interleaving: true,
        outbound_streams: 2,
        max_inbound_streams: 2,
        ..Config::rfc9260()
    }
}

/// The IUT (server, interleaving on) set up with an INIT listing I-DATA.
fn idata_server() -> (Tester, Out) {
    let mut t = Tester::server_with(interleaving());
    let mut i = init(TESTER_TAG);
    i.outbound_streams = 2;
    i.inbound_streams = 2;
    i.params = vec![Param::SupportedExtensions(vec![types::IDATA])];
    let ack = t.establish_with(i);
    (t, ack)
}

fn idata(tsn: u32, stream_id: u16, mid: u32, len: usize) -> Chunk<'static> {
    Chunk::IData(IData {
        flags: DataFlags::UNFRAGMENTED,
        tsn,
        stream_id,
        mid,
        ppid_or_fsn: PpidOrFsn::Ppid(1234),
        payload: vec![3; len].into(),
    })
}

/// nplab sctp_i_data: I-DATA is negotiated, and the IUT's user data goes
/// as I-DATA with MID 0. RFC 8260 2.1, 2.2.
#[test]
fn user_data_goes_as_i_data_once_negotiated() {
    let (mut t, ack) = idata_server();
    let listed = ack.init_params().into_iter().any(|p| match p {
        Param::SupportedExtensions(l) => l.contains(&types::IDATA),
        _ => false,
    });
    assert!(listed, "the INIT ACK lists I-DATA");
    assert!(t.assoc().message_interleaving());
    t.app_send(0, 100);
    let out = t.expect(types::IDATA);
    let p = out.packet();
    let Some(Chunk::IData(d)) = p.chunks.first() else {
        unreachable!()
    };
    assert_eq!((d.tsn, d.stream_id, d.mid), (t.iut_tsn, 0, 0));
    assert_eq!(d.flags, DataFlags::UNFRAGMENTED);
    assert_eq!(d.payload.len(), 100);
    t.ack_up_to(t.iut_tsn);
}

/// nplab sctp_i_data: I-DATA received is delivered and acknowledged. RFC 8260 2.1.
#[test]
fn i_data_received_is_delivered_and_acknowledged() {
    let (mut t, _) = idata_server();
    t.send(vec![idata(TESTER_TSN, 1, 0, 4)]);
    assert_eq!(t.app_recv(), vec![(1, 4)]);
    let s = t.wait_for(types::SACK, ms(200));
    assert_eq!(s.sack().expect("SACK").cum_tsn_ack, TESTER_TSN);
    t.tsn = TESTER_TSN + 1;
    t.tester_shuts_down();
}

/// RFC 8260 2.2: once I-DATA is negotiated, a DATA chunk is a protocol
/// violation, answered with ABORT.
#[test]
fn data_on_an_i_data_association_is_aborted() {
    let (mut t, _) = idata_server();
    t.send(vec![data(TESTER_TSN, 0, 0, 100)]);
    let abort = t.expect(types::ABORT);
    assert!(
        abort
            .cause_codes()
            .contains(&ErrorCause::PROTOCOL_VIOLATION)
    );
    assert_eq!(t.state(), State::Closed);
}

/// RFC 8260 2.2: without I-DATA in the peer's INIT, user data goes as DATA.
#[test]
fn user_data_goes_as_data_when_the_peer_does_not_list_i_data() {
    let mut t = Tester::server_with(interleaving());
    t.establish();
    assert!(!t.assoc().message_interleaving());
    t.app_send(0, 100);
    t.expect(types::DATA);
}

/// RFC 8260 2.1: I-DATA on an association that did not negotiate it is a
/// protocol violation, answered with ABORT.
#[test]
fn i_data_without_negotiation_is_aborted() {
    let mut t = Tester::server();
    t.establish();
    t.send(vec![idata(TESTER_TSN, 0, 0, 100)]);
    let abort = t.expect(types::ABORT);
    assert!(
        abort
            .cause_codes()
            .contains(&ErrorCause::PROTOCOL_VIOLATION)
    );
    assert_eq!(t.state(), State::Closed);
}
