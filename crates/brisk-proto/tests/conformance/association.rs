//! Association setup: ETSI TS 102 369 group AS (nplab `sctp-as-tests`),
//! RFC 9260 5.1 to 5.2.
//!
//! Covered: AS/1/1/1, 1/1/2, 1/2/1, 1/2/2, 1/3/1, 1/3/2, 1/4, 1/5/1, 1/5/2,
//! 1/6/1, 1/6/2, 1/7/1, 1/7/2, 1/7/3, 1/7/4, 1/7/5, 1/8/1 to 1/8/4, 1/9/1,
//! 1/9/2, 1/10/1, 1/10/2, 1/11/1, 1/11/2, 1/12/1, 1/12/2, 1/13/1, 1/13/2,
//! 1/14/1, 1/14/2, 1/15.
//!
//! Not applicable: none. (1/4, the association limit, maps to
//! `EndpointConfig::max_associations`; 1/5/x, random tags, are checked on the
//! seeded RNG: distinct and non-zero.)

use std::net::SocketAddr;

use brisk_proto::wire::chunk::types;
use brisk_proto::wire::{Chunk, ErrorCause, Param};
use brisk_proto::{CloseReason, Config, Endpoint, EndpointConfig, State, Time};

use crate::tester::*;

/// The ABORT answering an INIT: no T bit, the INIT's Initiate Tag (RFC 9260 8.4 rule 3, 5.1).
fn assert_abort_answers_init(out: &Out, init_tag: u32, cause: u16) {
    assert_first(out, types::ABORT);
    assert!(!out.t_bit(), "no TCB: the T bit is clear");
    assert_eq!(out.tag(), init_tag);
    assert!(
        out.cause_codes().contains(&cause),
        "cause {cause} in {:?}",
        out.cause_codes()
    );
}

/// ETSI AS/1/1/1 (sctp-as-v-1-1-1): active setup and teardown. RFC 9260 5.1, 9.2.
#[test]
fn an_active_setup_runs_the_four_way_handshake_and_a_graceful_close() {
    let mut t = Tester::client();
    let init = t.establish_as_client();
    assert_eq!(init.tag(), 0, "RFC 9260 8.5.1 A: INIT carries tag 0");
    assert_ne!(
        init.init_fields().0,
        0,
        "RFC 9260 3.3.2: Initiate Tag non-zero"
    );
    assert_eq!(init.to, t.me);
    t.iut_shuts_down();
    assert_eq!(t.closed(), Some(CloseReason::Shutdown));
}

/// ETSI AS/1/1/2 (sctp-as-v-1-1-2): passive setup and teardown by the peer. RFC 9260 5.1, 9.2.
#[test]
fn a_passive_setup_answers_init_and_cookie_echo_and_a_peer_shutdown() {
    let mut t = Tester::server();
    let ack = t.establish();
    assert_eq!(ack.to, t.me);
    assert_ne!(t.iut_tag, 0);
    t.tester_shuts_down();
}

/// ETSI AS/1/2/1 (sctp-as-i-1-2-1): a lost INIT is sent again after RTO.Initial. RFC 9260 5.1 C, 6.3.3.
#[test]
fn an_unanswered_init_is_retransmitted_after_rto_initial() {
    let mut t = Tester::client();
    t.connect(fast_rto());
    let first = t.expect(types::INIT);
    let again = t.wait_for(types::INIT, secs(1));
    assert_eq!(again.at, Time::from_millis(100));
    assert_eq!(again.init_fields(), first.init_fields());
    t.learn_init(&again);
    t.send(vec![Chunk::InitAck(init_ack(TESTER_TAG))]);
    t.expect(types::COOKIE_ECHO);
    t.send(vec![Chunk::CookieAck(brisk_proto::wire::chunk::CookieAck)]);
    assert_eq!(t.state(), State::Established);
}

/// ETSI AS/1/2/2 (sctp-as-i-1-2-2): a lost COOKIE ECHO is sent again after RTO.Initial. RFC 9260 5.1 C, 6.3.3.
#[test]
fn an_unanswered_cookie_echo_is_retransmitted_after_rto_initial() {
    let mut t = Tester::client();
    t.connect(fast_rto());
    let init = t.expect(types::INIT);
    t.learn_init(&init);
    t.send(vec![Chunk::InitAck(init_ack(TESTER_TAG))]);
    let first = t.expect(types::COOKIE_ECHO);
    let again = t.wait_for(types::COOKIE_ECHO, secs(1));
    assert_eq!(again.at, Time::from_millis(100));
    assert_eq!(again.bytes, first.bytes);
}

/// The times of every packet of type `typ` within `limit`.
fn retransmission_times(t: &mut Tester, typ: u8, limit: std::time::Duration) -> Vec<u64> {
    t.advance(limit)
        .iter()
        .filter(|o| o.has(typ))
        .map(|o| o.at.as_micros() / 1000)
        .collect()
}

/// ETSI AS/1/3/1 (sctp-as-i-1-3-1): INIT backs off to RTO.Max and gives up after
/// Max.Init.Retransmits. RFC 9260 5.1 C, 6.3.3 E2.
#[test]
fn init_retransmissions_back_off_and_stop_after_max_init_retransmits() {
    let mut t = Tester::client();
    t.connect(fast_rto());
    t.expect(types::INIT);
    let times = retransmission_times(&mut t, types::INIT, secs(10));
    assert_eq!(times, vec![100, 300, 700, 1500, 2300, 3100, 3900, 4700]);
    assert_eq!(t.state(), State::Closed);
    assert_eq!(
        t.closed(),
        Some(CloseReason::HandshakeTimeout { attempts: 9 })
    );
}

/// ETSI AS/1/3/2 (sctp-as-i-1-3-2): COOKIE ECHO backs off and gives up after
/// Max.Init.Retransmits. RFC 9260 5.1 C, 6.3.3 E2.
#[test]
fn cookie_echo_retransmissions_back_off_and_stop_after_max_init_retransmits() {
    let mut t = Tester::client();
    t.connect(fast_rto());
    let init = t.expect(types::INIT);
    t.learn_init(&init);
    t.send(vec![Chunk::InitAck(init_ack(TESTER_TAG))]);
    t.expect(types::COOKIE_ECHO);
    let times = retransmission_times(&mut t, types::COOKIE_ECHO, secs(10));
    assert_eq!(times, vec![100, 300, 700, 1500, 2300, 3100, 3900, 4700]);
    assert_eq!(t.state(), State::Closed);
}

/// ETSI AS/1/4 (sctp-as-i-1-4, not in nplab: no socket option): an INIT
/// allocates nothing, and at the association limit a COOKIE ECHO gets ABORT.
/// RFC 9260 5.1.3, 5.1 (Out of Resource).
#[test]
fn an_init_allocates_nothing_and_cookie_echo_past_the_limit_is_aborted() {
    let mut t = Tester::server();
    t.iut = Endpoint::new(
        EndpointConfig {
            max_associations: 0,
            ..EndpointConfig::default()
        },
        [3; 32],
    );
    t.send_tagged(0, vec![Chunk::Init(init(TESTER_TAG))]);
    let ack = t.expect(types::INIT_ACK);
    assert_eq!(
        t.iut.association_count(),
        0,
        "RFC 9260 5.1.3: no TCB on INIT"
    );
    t.iut_tag = ack.init_fields().0;
    t.send(vec![cookie_echo(ack.cookie())]);
    let abort = t.expect(types::ABORT);
    assert_eq!(abort.tag(), TESTER_TAG);
    assert_eq!(t.iut.association_count(), 0);
}

/// ETSI AS/1/5/1 (sctp-as-v-1-5-1, not in nplab): INIT's Initiate Tags are
/// random and non-zero. RFC 9260 5.3.1.
#[test]
fn init_initiate_tags_differ_between_associations() {
    let mut tags = Vec::new();
    for seed in 1..=8u8 {
        let mut ep = Endpoint::new(
            EndpointConfig {
                accept: false,
                ..EndpointConfig::default()
            },
            [seed; 32],
        );
        let peer: SocketAddr = "192.0.2.1:9899".parse().expect("address");
        ep.connect(Time::ZERO, peer, Config::rfc9260())
            .expect("connect");
        let mut buf = Vec::new();
        ep.poll_transmit(Time::ZERO, &mut buf).expect("INIT");
        let out = Out {
            at: Time::ZERO,
            to: peer,
            bytes: buf,
        };
        tags.push(out.init_fields().0);
    }
    assert!(tags.iter().all(|t| *t != 0));
    let mut unique = tags.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), tags.len());
}

/// ETSI AS/1/5/2 (sctp-as-v-1-5-2, not in nplab): INIT ACK's Initiate Tags
/// are random and non-zero. RFC 9260 5.3.1.
#[test]
fn init_ack_initiate_tags_differ_between_inits() {
    let mut t = Tester::server();
    let mut tags = Vec::new();
    for i in 1..=8u32 {
        t.send_tagged(0, vec![Chunk::Init(init(i))]);
        tags.push(t.expect(types::INIT_ACK).init_fields().0);
    }
    assert!(tags.iter().all(|t| *t != 0));
    let mut unique = tags.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), tags.len());
}

/// ETSI AS/1/6/1 (sctp-as-v-1-6-1): an INIT with Cookie Preservative,
/// Supported Address Types and address parameters sets up the association,
/// and the INIT ACK goes to the INIT's source. RFC 9260 3.3.2, 5.1.2.
#[test]
fn an_init_with_optional_parameters_sets_up_the_association() {
    let mut t = Tester::server();
    let mut i = init(TESTER_TAG);
    i.params = vec![
        Param::CookiePreservative {
            increment_ms: 12345,
        },
        Param::SupportedAddressTypes(vec![5, 6]),
        Param::Ipv6Address("fe80::250:56ff:fe24:9e6".parse().expect("v6")),
        Param::Ipv4Address("192.0.2.1".parse().expect("v4")),
    ];
    let ack = t.establish_with(i);
    assert_eq!(ack.to, t.me);
    t.tester_shuts_down();
}

/// ETSI AS/1/6/2 (sctp-as-v-1-6-2): an INIT ACK with address parameters sets
/// up the association. RFC 9260 3.3.3, 5.1.2.
#[test]
fn an_init_ack_with_address_parameters_sets_up_the_association() {
    let mut t = Tester::client();
    let mut ack = init_ack(TESTER_TAG);
    ack.params.push(Param::Ipv6Address(
        "fe80::250:56ff:fe24:9e6".parse().expect("v6"),
    ));
    ack.params
        .push(Param::Ipv4Address("192.0.2.1".parse().expect("v4")));
    t.establish_as_client_with(Config::rfc9260(), ack);
    t.iut_shuts_down();
}

/// ETSI AS/1/7/1 (sctp-as-v-1-7-1): the INIT ACK's OS is at most the INIT's
/// MIS. RFC 9260 3.3.3 (Number of Outbound Streams), 5.1.1.
#[test]
fn an_init_ack_offers_no_more_outbound_streams_than_the_init_accepts() {
    let mut t = Tester::server_with(Config {
        outbound_streams: 2,
        ..Config::rfc9260()
    });
    let mut i = init(TESTER_TAG);
    i.outbound_streams = 100;
    i.inbound_streams = 1;
    let ack = t.establish_with(i);
    assert_eq!(ack.init_fields().2, 1, "INIT ACK OS");
    assert_eq!(t.assoc().outbound_streams(), 1);
}

/// ETSI AS/1/7/2 (sctp-as-i-1-7-2): an INIT with OS 0 is answered with ABORT
/// (Invalid Mandatory Parameter). RFC 9260 3.3.2.
#[test]
fn an_init_with_zero_outbound_streams_is_aborted() {
    let mut t = Tester::server();
    let mut i = init(TESTER_TAG);
    i.outbound_streams = 0;
    t.send_tagged(0, vec![Chunk::Init(i)]);
    let abort = t.expect(types::ABORT);
    assert_abort_answers_init(&abort, TESTER_TAG, ErrorCause::INVALID_MANDATORY_PARAMETER);
    assert_eq!(t.iut.association_count(), 0);
}

/// ETSI AS/1/7/3 (sctp-as-v-1-7-3): with an INIT ACK whose MIS is below our
/// OS, the IUT uses MIS outbound streams. RFC 9260 5.1.1.
#[test]
fn an_init_ack_with_fewer_inbound_streams_limits_our_outbound_streams() {
    let mut t = Tester::client();
    let cfg = Config {
        outbound_streams: 2,
        max_inbound_streams: 1,
        ..Config::rfc9260()
    };
    let mut ack = init_ack(TESTER_TAG);
    ack.outbound_streams = 1;
    ack.inbound_streams = 1;
    let init = t.establish_as_client_with(cfg, ack);
    let (_, _, os, mis, _) = init.init_fields();
    assert_eq!((os, mis), (2, 1));
    assert_eq!(t.assoc().outbound_streams(), 1);
}

/// ETSI AS/1/7/4 (sctp-as-i-1-7-4): an INIT ACK with OS 0 is answered with
/// ABORT (Invalid Mandatory Parameter). RFC 9260 3.3.3.
#[test]
fn an_init_ack_with_zero_outbound_streams_is_aborted() {
    let mut t = Tester::client();
    t.answer_init(|ack| {
        ack.outbound_streams = 0;
    });
    let abort = t.expect(types::ABORT);
    assert!(
        abort
            .cause_codes()
            .contains(&ErrorCause::INVALID_MANDATORY_PARAMETER)
    );
    assert_eq!(t.state(), State::Closed);
}

/// ETSI AS/1/7/5 (sctp-as-v-1-7-5): two streams each way are supported. RFC 9260 5.1.1.
#[test]
fn two_streams_each_way_are_negotiated() {
    let mut t = Tester::server_with(Config {
        outbound_streams: 2,
        max_inbound_streams: 2,
        ..Config::rfc9260()
    });
    let mut i = init(TESTER_TAG);
    i.outbound_streams = 2;
    i.inbound_streams = 2;
    let ack = t.establish_with(i);
    let (_, _, os, mis, _) = ack.init_fields();
    assert_eq!((os, mis), (2, 2));
    assert_eq!(t.assoc().outbound_streams(), 2);
    assert_eq!(t.assoc().inbound_streams(), 2);
    t.tester_shuts_down();
}

fn unknown(typ: u16, fill: u8) -> Param<'static> {
    Param::Unknown {
        typ,
        value: vec![fill; 4].into(),
    }
}

/// The whole encoded parameter: type, length 8, four value bytes.
fn encoded(typ: u16, fill: u8) -> Vec<u8> {
    let mut v = typ.to_be_bytes().to_vec();
    v.extend_from_slice(&8u16.to_be_bytes());
    v.extend_from_slice(&[fill; 4]);
    v
}

/// The IUT's INIT ACK for an INIT carrying `params`: the unrecognized
/// parameters it reports, concatenated; then the association is set up.
fn reported_unrecognized(params: Vec<Param<'static>>) -> Vec<u8> {
    let mut t = Tester::server();
    let mut i = init(TESTER_TAG);
    i.params = params;
    let ack = t.establish_with(i);
    t.tester_shuts_down();
    ack.init_params()
        .into_iter()
        .filter_map(|p| match p {
            Param::UnrecognizedParameter(raw) => Some(raw.into_owned()),
            _ => None,
        })
        .flatten()
        .collect()
}

/// ETSI AS/1/8/1 (sctp-as-i-1-8-1): unknown parameters with high bits 11 are
/// skipped and reported. RFC 9260 3.2.1.
#[test]
fn unknown_init_parameters_with_high_bits_11_are_skipped_and_reported() {
    let got = reported_unrecognized(vec![
        unknown(0xc0cc, 1),
        unknown(0xc0cc, 2),
        unknown(0xc0cc, 3),
    ]);
    let want = [encoded(0xc0cc, 1), encoded(0xc0cc, 2), encoded(0xc0cc, 3)].concat();
    assert_eq!(got, want);
}

/// ETSI AS/1/8/2 (sctp-as-i-1-8-2): an unknown parameter with high bits 00
/// stops processing of the rest, unreported. RFC 9260 3.2.1.
#[test]
fn an_unknown_init_parameter_with_high_bits_00_stops_processing_silently() {
    let got = reported_unrecognized(vec![
        unknown(0xc0cc, 1),
        unknown(0x00cc, 2),
        unknown(0xc0cc, 3),
    ]);
    assert_eq!(got, encoded(0xc0cc, 1));
}

/// ETSI AS/1/8/3 (sctp-as-i-1-8-3): an unknown parameter with high bits 01
/// stops processing of the rest, and is reported. RFC 9260 3.2.1.
#[test]
fn an_unknown_init_parameter_with_high_bits_01_stops_processing_and_is_reported() {
    let got = reported_unrecognized(vec![
        unknown(0xc0cc, 1),
        unknown(0x40cc, 2),
        unknown(0xc0cc, 3),
    ]);
    assert_eq!(got, [encoded(0xc0cc, 1), encoded(0x40cc, 2)].concat());
}

/// ETSI AS/1/8/4 (sctp-as-i-1-8-4): an unknown parameter with high bits 10
/// is skipped, unreported. RFC 9260 3.2.1.
#[test]
fn an_unknown_init_parameter_with_high_bits_10_is_skipped_silently() {
    let got = reported_unrecognized(vec![
        unknown(0xc0cc, 1),
        unknown(0x80cc, 2),
        unknown(0xc0cc, 3),
    ]);
    assert_eq!(got, [encoded(0xc0cc, 1), encoded(0xc0cc, 3)].concat());
}

/// ETSI AS/1/9/1 (sctp-as-o-1-9-1): an INIT from the peer's address in
/// ESTABLISHED gets an INIT ACK tagged with its Initiate Tag. RFC 9260 5.2.2.
#[test]
fn an_init_in_established_from_a_known_address_gets_an_init_ack() {
    let mut t = Tester::server();
    t.establish();
    t.advance(ms(200));
    t.send_tagged(0, vec![Chunk::Init(init(3))]);
    let ack = t.expect(types::INIT_ACK);
    assert_eq!(ack.tag(), 3);
    assert_eq!(t.state(), State::Established);
}

/// ETSI AS/1/9/2 (sctp-as-o-1-9-2): an INIT in ESTABLISHED that adds a new
/// address is answered with ABORT. RFC 9260 5.2.2.
#[test]
fn an_init_in_established_adding_a_new_address_is_aborted() {
    let mut t = Tester::server();
    t.establish();
    t.advance(ms(200));
    let mut i = init(3);
    i.params = vec![Param::Ipv4Address("1.1.1.1".parse().expect("v4"))];
    t.send_tagged(0, vec![Chunk::Init(i)]);
    let abort = t.expect(types::ABORT);
    assert_eq!(abort.tag(), 3);
}

/// ETSI AS/1/10/1 (sctp-as-v-1-10-1): an INIT without address parameters:
/// the source address is the peer. RFC 9260 5.1.2 (b).
#[test]
fn an_init_without_addresses_makes_its_source_the_peer() {
    let mut t = Tester::server();
    t.establish();
    assert_eq!(t.assoc().remote(), t.me);
    t.tester_shuts_down();
}

/// ETSI AS/1/10/2 (sctp-as-v-1-10-2): an INIT ACK without address
/// parameters: the source address is the peer. RFC 9260 5.1.2 (b).
#[test]
fn an_init_ack_without_addresses_makes_its_source_the_peer() {
    let mut t = Tester::client();
    t.establish_as_client();
    assert_eq!(t.assoc().remote(), t.me);
    t.iut_shuts_down();
}

/// Sends one message and checks it goes to the tester's (source) address,
/// then acknowledges it.
fn data_goes_to_the_source_address(t: &mut Tester) {
    t.app_send(0, 1000);
    let d = t.expect(types::DATA);
    assert_eq!(d.to, t.me);
    assert_eq!(d.tsns(), vec![t.iut_tsn]);
    t.send(vec![sack(t.iut_tsn, TESTER_RWND)]);
    t.iut_tsn = t.iut_tsn.wrapping_add(1);
}

/// ETSI AS/1/11/1 (sctp-as-v-1-11-1): an INIT listing addresses: the
/// source address stays the primary path. RFC 9260 5.1.2 (c).
#[test]
fn an_init_listing_addresses_keeps_the_source_as_primary() {
    let mut t = Tester::server_with(fast_rto());
    let mut i = init(TESTER_TAG);
    i.params = vec![
        Param::Ipv4Address("1.1.1.1".parse().expect("v4")),
        Param::Ipv4Address("2.2.2.2".parse().expect("v4")),
    ];
    let ack = t.establish_with(i);
    assert_eq!(ack.to, t.me, "the INIT ACK goes to the INIT's source");
    data_goes_to_the_source_address(&mut t);
    t.tester_shuts_down();
}

/// ETSI AS/1/11/2 (sctp-as-v-1-11-2): an INIT ACK listing addresses: the
/// source address stays the primary path. RFC 9260 5.1.2 (c).
#[test]
fn an_init_ack_listing_addresses_keeps_the_source_as_primary() {
    let mut t = Tester::client();
    let mut ack = init_ack(TESTER_TAG);
    ack.params
        .push(Param::Ipv4Address("1.1.1.1".parse().expect("v4")));
    ack.params
        .push(Param::Ipv4Address("2.2.2.2".parse().expect("v4")));
    t.establish_as_client_with(fast_rto(), ack);
    data_goes_to_the_source_address(&mut t);
}

fn host_name() -> Param<'static> {
    Param::HostNameAddress(b"a.b\0".to_vec().into())
}

/// ETSI AS/1/12/1 (sctp-as-v-1-12-1): an INIT with a Host Name Address is
/// answered with ABORT (Unresolvable Address). RFC 9260 3.3.2.1, 5.1.2.
#[test]
fn an_init_with_a_host_name_address_is_aborted_as_unresolvable() {
    let mut t = Tester::server();
    let mut i = init(TESTER_TAG);
    i.params = vec![host_name()];
    t.send_tagged(0, vec![Chunk::Init(i)]);
    let abort = t.expect(types::ABORT);
    assert_abort_answers_init(&abort, TESTER_TAG, ErrorCause::UNRESOLVABLE_ADDRESS);
    assert_eq!(t.iut.association_count(), 0);
}

/// ETSI AS/1/12/2 (sctp-as-i-1-12-2): an INIT ACK with a Host Name Address is
/// answered with ABORT (Unresolvable Address). RFC 9260 3.3.3, 5.1.2.
#[test]
fn an_init_ack_with_a_host_name_address_is_aborted_as_unresolvable() {
    let mut t = Tester::client();
    t.answer_init(|ack| {
        ack.params.push(host_name());
    });
    let abort = t.expect(types::ABORT);
    assert!(
        abort
            .cause_codes()
            .contains(&ErrorCause::UNRESOLVABLE_ADDRESS)
    );
    assert_eq!(t.state(), State::Closed);
}

/// ETSI AS/1/13/1 (sctp-as-v-1-13-1): an INIT listing IPv4 and IPv6 as
/// supported address types sets up the association. RFC 9260 5.1.2.
#[test]
fn an_init_with_supported_address_types_sets_up_the_association() {
    let mut t = Tester::server();
    let mut i = init(TESTER_TAG);
    i.params = vec![Param::SupportedAddressTypes(vec![5, 6])];
    t.establish_with(i);
    t.tester_shuts_down();
}

/// ETSI AS/1/13/2 (sctp-as-i-1-13-2): an INIT from IPv4 listing only IPv6
/// still gets an INIT ACK (the source's family is usable). RFC 9260 5.1.2
/// (implementation note).
#[test]
fn an_init_listing_only_another_address_family_is_still_answered() {
    let mut t = Tester::server();
    let mut i = init(TESTER_TAG);
    i.params = vec![Param::SupportedAddressTypes(vec![6])];
    t.send_tagged(0, vec![Chunk::Init(i)]);
    let ack = t.expect(types::INIT_ACK);
    assert_eq!(ack.tag(), TESTER_TAG);
}

/// ETSI AS/1/14/1 (sctp-as-i-1-14-1): an INIT with Initiate Tag 0 is
/// discarded; a good INIT afterwards is answered. RFC 9260 3.3.2.
#[test]
fn an_init_with_initiate_tag_zero_is_discarded() {
    let mut t = Tester::server();
    t.send_tagged(0, vec![Chunk::Init(init(0))]);
    t.silent();
    t.advance(secs(1));
    t.send_tagged(0, vec![Chunk::Init(init(1))]);
    assert_eq!(t.expect(types::INIT_ACK).tag(), 1);
}

/// ETSI AS/1/14/2 (sctp-as-i-1-14-2): an INIT ACK with Initiate Tag 0 is
/// answered with ABORT, T bit set (no peer tag to use), Invalid Mandatory
/// Parameter. RFC 9260 3.3.3, 8.5.1.
#[test]
fn an_init_ack_with_initiate_tag_zero_is_aborted_with_the_t_bit() {
    let mut t = Tester::client();
    t.connect(Config::rfc9260());
    let init = t.expect(types::INIT);
    t.learn_init(&init);
    t.send(vec![Chunk::InitAck(init_ack(0))]);
    let abort = t.expect(types::ABORT);
    assert!(abort.t_bit(), "T bit: the tag is the IUT's own");
    assert_eq!(abort.tag(), t.iut_tag);
    assert!(
        abort
            .cause_codes()
            .contains(&ErrorCause::INVALID_MANDATORY_PARAMETER)
    );
    assert_eq!(t.state(), State::Closed);
}

/// ETSI AS/1/15 (sctp-as-i-1-15): INIT retransmissions go to the peer's
/// other addresses. RFC 9260 5.1 (connect to several addresses), 6.4.
#[test]
fn init_retransmissions_use_every_peer_address() {
    let mut t = Tester::client();
    let other: SocketAddr = "192.0.2.2:9899".parse().expect("address");
    let me = t.me;
    let now = t.now;
    let id = t
        .iut
        .connect_to_addresses(now, &[me, other], PORT, fast_rto())
        .expect("connect");
    t.id = Some(id);
    let first = t.expect(types::INIT);
    let second = t.wait_for(types::INIT, secs(1));
    assert_eq!(first.to, me);
    assert_eq!(second.to, other);
}

/// RFC 9260 3.3.2 (a_rwnd, not an ETSI test purpose): an INIT advertising
/// less than 1500 bytes of receiver window is not accepted: no INIT ACK
/// (discarded, or answered with ABORT).
#[test]
fn an_init_with_a_receiver_window_below_1500_is_not_accepted() {
    let mut t = Tester::server();
    let mut i = init(TESTER_TAG);
    i.a_rwnd = 1499;
    t.send_tagged(0, vec![Chunk::Init(i)]);
    if let Some(out) = t.poll() {
        assert_first(&out, types::ABORT);
        assert!(!out.t_bit());
        assert_eq!(out.tag(), TESTER_TAG);
    }
    assert_eq!(t.iut.association_count(), 0);
}

/// RFC 9260 3.3.2 (Number of Inbound Streams): an INIT with MIS 0 is
/// answered with ABORT (Invalid Mandatory Parameter).
#[test]
fn an_init_with_zero_inbound_streams_is_aborted() {
    let mut t = Tester::server();
    let mut i = init(TESTER_TAG);
    i.inbound_streams = 0;
    t.send_tagged(0, vec![Chunk::Init(i)]);
    let abort = t.expect(types::ABORT);
    assert_abort_answers_init(&abort, TESTER_TAG, ErrorCause::INVALID_MANDATORY_PARAMETER);
    assert_eq!(t.iut.association_count(), 0);
}

/// RFC 9260 3.3.3 (Number of Inbound Streams): an INIT ACK with MIS 0 is
/// answered with ABORT (Invalid Mandatory Parameter).
#[test]
fn an_init_ack_with_zero_inbound_streams_is_aborted() {
    let mut t = Tester::client();
    t.answer_init(|ack| {
        ack.inbound_streams = 0;
    });
    let abort = t.expect(types::ABORT);
    assert!(
        abort
            .cause_codes()
            .contains(&ErrorCause::INVALID_MANDATORY_PARAMETER)
    );
    assert_eq!(t.state(), State::Closed);
}

/// RFC 9260 3.3.3 (a_rwnd): an INIT ACK advertising less than 1500 bytes is
/// discarded (and SHOULD be answered with ABORT): no COOKIE ECHO follows.
#[test]
fn an_init_ack_with_a_receiver_window_below_1500_is_not_accepted() {
    let mut t = Tester::client();
    t.answer_init(|ack| {
        ack.a_rwnd = 1499;
    });
    if let Some(out) = t.poll() {
        assert_first(&out, types::ABORT);
    }
    assert_ne!(t.state(), State::CookieEchoed);
    assert_ne!(t.state(), State::Established);
}
