//! The wire format checked by an independent dissector: Wireshark's, through
//! `tshark`.
//!
//! Hand-built packets covering every chunk type, parameter, error cause and
//! RE-CONFIG parameter the codec knows are encoded with `Packet::to_bytes`
//! (real CRC32c), wrapped in UDP (RFC 6951, port 9899 on both sides) and written
//! to a pcap file. `tshark` dissects the file, and for every packet the test
//! compares the dissected fields with values taken from the codec's own structs,
//! so a codec bug shows up as a mismatch. It also checks that every checksum is
//! good, that no packet is malformed or raises an expert warning or error, and
//! that a packet with a corrupted checksum is rejected by both sides.
//!
//! A second test does the same for 200 packets from `wire::strategies` (2000
//! with `BRISK_DEEP=1`), after rewriting the opaque and unknown parts that
//! Wireshark 4.0 interprets by rules of its own (see [`wireshark_view`]).
//!
//! tshark runs with CRC32c checking, absolute TSNs, and reassembly, TSN
//! analysis and upper-layer dissection off, so that each packet is dissected
//! on its own.
//!
//! tshark is required: without it the test fails (it never skips silently).
//! On failure the pcap is kept and its path is printed.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddrV4};
use std::path::{Path, PathBuf};
use std::process::Command;

use brisk_proto::wire::chunk::idata::PpidOrFsn;
use brisk_proto::wire::chunk::{
    Abort, ChunkCodec, CookieAck, CookieEcho, Data, DataFlags, ForwardTsn, ForwardTsnStream,
    GapBlock, Heartbeat, HeartbeatAck, IData, IForwardTsn, IForwardTsnStream, Init, InitAck,
    OperationError, PktDrop, PktDropFlags, ReConfig, ReconfigParam, ReconfigResult, Sack, Shutdown,
    ShutdownAck, ShutdownComplete, UnknownChunk, types,
};
use brisk_proto::wire::{
    ChecksumPolicy, Chunk, CommonHeader, ErrorCause, Packet, Param, Tlv, WireError, padded,
    strategies,
};
use brisk_sim::pcap::PcapWriter;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;

/// RFC 6951: the UDP port of SCTP over UDP, on both sides.
const UDP_PORT: u16 = 9899;

// ---------------------------------------------------------------------------
// The packets
// ---------------------------------------------------------------------------

fn header(verification_tag: u32) -> CommonHeader {
    CommonHeader {
        src_port: 5000,
        dst_port: 5001,
        verification_tag,
        checksum: 0,
    }
}

fn packet(verification_tag: u32, chunks: Vec<Chunk<'static>>) -> Packet<'static> {
    Packet {
        header: header(verification_tag),
        chunks,
    }
}

fn owned(b: &[u8]) -> Cow<'static, [u8]> {
    Cow::Owned(b.to_vec())
}

/// 0, 1, 2, ... `len` bytes.
fn counting(len: usize) -> Cow<'static, [u8]> {
    Cow::Owned((0..len).map(|i| i as u8).collect())
}

/// A parameter as it sits on the wire (type, length, value), unpadded.
fn param_bytes(p: &Param<'_>) -> Vec<u8> {
    let mut v = Vec::new();
    p.encode(&mut v).unwrap();
    v
}

fn data(flags: u8, tsn: u32, stream_id: u16, ssn: u16, ppid: u32, len: usize) -> Chunk<'static> {
    Chunk::Data(Data {
        flags: DataFlags::from_bits(flags),
        tsn,
        stream_id,
        ssn,
        ppid,
        payload: counting(len),
    })
}

fn idata(
    flags: u8,
    tsn: u32,
    stream_id: u16,
    mid: u32,
    word: PpidOrFsn,
    payload: &[u8],
) -> Chunk<'static> {
    Chunk::IData(IData {
        flags: DataFlags::from_bits(flags),
        tsn,
        stream_id,
        mid,
        ppid_or_fsn: word,
        payload: owned(payload),
    })
}

fn reconfig(params: Vec<ReconfigParam<'static>>) -> Chunk<'static> {
    Chunk::ReConfig(ReConfig { params })
}

/// A packet a PKTDROP chunk reports.
fn dropped_packet() -> Vec<u8> {
    packet(
        0x0bad_cafe,
        vec![
            data(DataFlags::B | DataFlags::E, 77, 2, 5, 46, 9),
            Chunk::Sack(Sack {
                cum_tsn_ack: 76,
                a_rwnd: 4096,
                gap_blocks: vec![GapBlock { start: 2, end: 4 }],
                dup_tsns: vec![],
            }),
        ],
    )
    .to_bytes()
    .unwrap()
}

/// Every chunk type, parameter, error cause and RE-CONFIG parameter the codec
/// knows, with a name for each packet.
fn packets() -> Vec<(&'static str, Packet<'static>)> {
    use DataFlags as F;
    let tag = 0x1a2b_3c4d;
    let unknown_param = Param::Unknown {
        typ: 0xc123,
        value: owned(b"xyz"),
    };
    let dropped = dropped_packet();
    vec![
        (
            "DATA, every U/B/E combination, I clear",
            packet(
                tag,
                (0..8u8)
                    .map(|f| {
                        let n = u32::from(f);
                        data(
                            f,
                            1000 + n,
                            u16::from(f),
                            10 + u16::from(f),
                            0x1234_5600 + n,
                            usize::from(f) + 1,
                        )
                    })
                    .collect(),
            ),
        ),
        (
            "DATA, every U/B/E combination, I set, TSNs near wrap",
            packet(
                tag,
                (8..16u8)
                    .map(|f| {
                        let n = u32::from(f);
                        data(f, 0xffff_fff0 + n, 0xfff0 + u16::from(f), 0xfffe, n, 13)
                    })
                    .collect(),
            ),
        ),
        (
            "INIT with every INIT parameter",
            packet(
                0,
                vec![Chunk::Init(Init {
                    initiate_tag: 0xdead_beef,
                    a_rwnd: 65536,
                    outbound_streams: 10,
                    inbound_streams: 65535,
                    initial_tsn: 42,
                    params: vec![
                        Param::Ipv4Address(Ipv4Addr::new(192, 0, 2, 1)),
                        Param::Ipv6Address("2001:db8::1".parse().unwrap()),
                        Param::CookiePreservative { increment_ms: 1000 },
                        Param::HostNameAddress(owned(b"example.org\0")),
                        Param::SupportedAddressTypes(vec![5, 6, 11]),
                        Param::SupportedExtensions(vec![64, 130, 192, 194, 129]),
                        Param::ForwardTsnSupported,
                        Param::ZeroChecksumAcceptable { edmid: 1 },
                        unknown_param.clone(),
                    ],
                })],
            ),
        ),
        (
            "INIT ACK with State Cookie and Unrecognized Parameter",
            packet(
                0xdead_beef,
                vec![Chunk::InitAck(InitAck {
                    initiate_tag: 0x0102_0304,
                    a_rwnd: 131_072,
                    outbound_streams: 5,
                    inbound_streams: 7,
                    initial_tsn: 0xffff_ffff,
                    params: vec![
                        Param::StateCookie(counting(37)),
                        Param::Ipv4Address(Ipv4Addr::new(198, 51, 100, 7)),
                        Param::UnrecognizedParameter(Cow::Owned(param_bytes(&unknown_param))),
                        Param::SupportedExtensions(vec![64]),
                        Param::ForwardTsnSupported,
                    ],
                })],
            ),
        ),
        (
            "SACK with gap blocks and duplicate TSNs",
            packet(
                tag,
                vec![Chunk::Sack(Sack {
                    cum_tsn_ack: 100,
                    a_rwnd: 1000,
                    gap_blocks: vec![
                        GapBlock { start: 2, end: 3 },
                        GapBlock { start: 5, end: 9 },
                        GapBlock { start: 12, end: 12 },
                    ],
                    dup_tsns: vec![99, 98, 97],
                })],
            ),
        ),
        (
            "bare SACK bundled with DATA",
            packet(
                tag,
                vec![
                    Chunk::Sack(Sack {
                        cum_tsn_ack: 0xffff_fffe,
                        a_rwnd: 0x10000,
                        gap_blocks: vec![],
                        dup_tsns: vec![],
                    }),
                    data(F::B | F::E, 5, 0, 0, 0, 1),
                ],
            ),
        ),
        (
            "HEARTBEAT",
            packet(
                tag,
                vec![Chunk::Heartbeat(Heartbeat::new(owned(b"heartbeat-13!")))],
            ),
        ),
        (
            "HEARTBEAT ACK",
            packet(
                tag,
                vec![Chunk::HeartbeatAck(HeartbeatAck::new(owned(&[7; 16])))],
            ),
        ),
        (
            "ABORT with T bit and causes",
            packet(
                tag,
                vec![Chunk::Abort(Abort {
                    reflected_tag: true,
                    causes: vec![
                        ErrorCause::UserInitiatedAbort(owned(b"bye")),
                        ErrorCause::ProtocolViolation(owned(b"oops!")),
                        ErrorCause::NoUserData { tsn: 31 },
                    ],
                })],
            ),
        ),
        (
            "bare ABORT",
            packet(
                tag,
                vec![Chunk::Abort(Abort {
                    reflected_tag: false,
                    causes: vec![],
                })],
            ),
        ),
        (
            "SHUTDOWN",
            packet(
                tag,
                vec![Chunk::Shutdown(Shutdown {
                    cum_tsn_ack: 4_000_000_000,
                })],
            ),
        ),
        (
            "SHUTDOWN ACK",
            packet(tag, vec![Chunk::ShutdownAck(ShutdownAck)]),
        ),
        (
            "two ERRORs, causes 1 to 9",
            packet(
                tag,
                vec![
                    Chunk::Error(OperationError {
                        causes: vec![
                            ErrorCause::InvalidStreamIdentifier { stream_id: 4 },
                            ErrorCause::MissingMandatoryParameter {
                                types: vec![7, 9, 0x8008],
                            },
                            ErrorCause::StaleCookie {
                                staleness_us: 123_456,
                            },
                            ErrorCause::OutOfResource,
                            ErrorCause::UnresolvableAddress(Cow::Owned(param_bytes(
                                &Param::HostNameAddress(owned(b"a.example\0")),
                            ))),
                        ],
                    }),
                    Chunk::Error(OperationError {
                        causes: vec![
                            ErrorCause::UnrecognizedChunkType(owned(&[
                                0x45, 0x11, 0x00, 0x07, 1, 2, 3,
                            ])),
                            ErrorCause::InvalidMandatoryParameter,
                            ErrorCause::UnrecognizedParameters(Cow::Owned(
                                [
                                    param_bytes(&Param::ZeroChecksumAcceptable { edmid: 1 }),
                                    param_bytes(&unknown_param),
                                ]
                                .concat(),
                            )),
                            ErrorCause::NoUserData { tsn: 0xabcd_ef01 },
                        ],
                    }),
                ],
            ),
        ),
        (
            "ERROR, causes 10 to 13, 0x0105 and an unknown one",
            packet(
                tag,
                vec![Chunk::Error(OperationError {
                    causes: vec![
                        ErrorCause::CookieReceivedWhileShuttingDown,
                        ErrorCause::RestartWithNewAddresses(Cow::Owned(
                            [
                                param_bytes(&Param::Ipv4Address(Ipv4Addr::new(203, 0, 113, 9))),
                                param_bytes(&Param::Ipv6Address(Ipv6Addr::LOCALHOST)),
                            ]
                            .concat(),
                        )),
                        ErrorCause::UserInitiatedAbort(owned(b"user said so")),
                        ErrorCause::ProtocolViolation(owned(b"x")),
                        ErrorCause::UnsupportedHmacIdentifier { hmac_id: 3 },
                        ErrorCause::Unknown {
                            code: 0x00ff,
                            value: owned(b"??"),
                        },
                    ],
                })],
            ),
        ),
        (
            "COOKIE ECHO bundled with DATA",
            packet(
                tag,
                vec![
                    Chunk::CookieEcho(CookieEcho {
                        cookie: counting(37),
                    }),
                    data(F::B | F::E, 0xffff_ffff, 1, 0, 51, 5),
                ],
            ),
        ),
        (
            "COOKIE ACK bundled with DATA",
            packet(
                tag,
                vec![
                    Chunk::CookieAck(CookieAck),
                    data(F::B | F::E, 300, 1, 0, 51, 2),
                ],
            ),
        ),
        (
            "SHUTDOWN COMPLETE with T bit",
            packet(
                tag,
                vec![Chunk::ShutdownComplete(ShutdownComplete {
                    reflected_tag: true,
                })],
            ),
        ),
        (
            "I-DATA fragments and an unordered whole message",
            packet(
                tag,
                vec![
                    idata(F::B, 7, 1, 9, PpidOrFsn::Ppid(51), b"first"),
                    idata(0, 8, 1, 9, PpidOrFsn::Fsn(1), b"middle"),
                    idata(F::E | F::I, 9, 1, 9, PpidOrFsn::Fsn(2), b"last!!!!"),
                    idata(
                        F::U | F::B | F::E,
                        10,
                        0xffff,
                        0xffff_ffff,
                        PpidOrFsn::Ppid(0xdead_beef),
                        b"u",
                    ),
                ],
            ),
        ),
        (
            "two FORWARD TSNs",
            packet(
                tag,
                vec![
                    Chunk::ForwardTsn(ForwardTsn {
                        new_cum_tsn: 500,
                        streams: vec![
                            ForwardTsnStream {
                                stream_id: 1,
                                ssn: 2,
                            },
                            ForwardTsnStream {
                                stream_id: 65535,
                                ssn: 65535,
                            },
                        ],
                    }),
                    Chunk::ForwardTsn(ForwardTsn {
                        new_cum_tsn: 501,
                        streams: vec![],
                    }),
                ],
            ),
        ),
        (
            "I-FORWARD-TSN",
            packet(
                tag,
                vec![Chunk::IForwardTsn(IForwardTsn {
                    new_cum_tsn: 600,
                    streams: vec![
                        IForwardTsnStream {
                            stream_id: 3,
                            unordered: true,
                            mid: 70,
                        },
                        IForwardTsnStream {
                            stream_id: 4,
                            unordered: false,
                            mid: 0xffff_fff0,
                        },
                    ],
                })],
            ),
        ),
        (
            "RE-CONFIG: outgoing and incoming SSN reset requests",
            packet(
                tag,
                vec![reconfig(vec![
                    ReconfigParam::OutgoingSsnReset {
                        request_seq: 10,
                        response_seq: 20,
                        last_tsn: 30,
                        streams: vec![1, 2, 3],
                    },
                    ReconfigParam::IncomingSsnReset {
                        request_seq: 11,
                        streams: vec![4],
                    },
                ])],
            ),
        ),
        (
            "RE-CONFIG: all-streams reset, then SSN/TSN reset",
            packet(
                tag,
                vec![
                    reconfig(vec![ReconfigParam::OutgoingSsnReset {
                        request_seq: 12,
                        response_seq: 21,
                        last_tsn: 31,
                        streams: vec![],
                    }]),
                    reconfig(vec![
                        ReconfigParam::SsnTsnReset { request_seq: 13 },
                        ReconfigParam::IncomingSsnReset {
                            request_seq: 14,
                            streams: vec![],
                        },
                    ]),
                ],
            ),
        ),
        (
            "RE-CONFIG: responses, with and without next TSNs",
            packet(
                tag,
                vec![
                    reconfig(vec![ReconfigParam::Response {
                        response_seq: 13,
                        result: ReconfigResult::SuccessPerformed,
                        next_tsns: Some((1000, 2000)),
                    }]),
                    reconfig(vec![
                        ReconfigParam::Response {
                            response_seq: 10,
                            result: ReconfigResult::Denied,
                            next_tsns: None,
                        },
                        ReconfigParam::Response {
                            response_seq: 11,
                            result: ReconfigResult::InProgress,
                            next_tsns: None,
                        },
                    ]),
                    reconfig(vec![ReconfigParam::Response {
                        response_seq: 12,
                        result: ReconfigResult::ErrorBadSequenceNumber,
                        next_tsns: None,
                    }]),
                ],
            ),
        ),
        (
            "RE-CONFIG: add outgoing and incoming streams",
            packet(
                tag,
                vec![reconfig(vec![
                    ReconfigParam::AddOutgoingStreams {
                        request_seq: 15,
                        new_streams: 5,
                    },
                    ReconfigParam::AddIncomingStreams {
                        request_seq: 16,
                        new_streams: 0xffff,
                    },
                ])],
            ),
        ),
        (
            "PKTDROP, B flag, whole packet",
            packet(
                tag,
                vec![Chunk::PktDrop(PktDrop {
                    flags: PktDropFlags::from_bits(PktDropFlags::B),
                    bandwidth: 100_000,
                    queue_size: 2_000,
                    truncated_len: 0,
                    dropped: Cow::Owned(dropped.clone()),
                })],
            ),
        ),
        (
            "PKTDROP, M and T flags, truncated packet",
            packet(
                tag,
                vec![Chunk::PktDrop(PktDrop {
                    flags: PktDropFlags::from_bits(PktDropFlags::M | PktDropFlags::T),
                    bandwidth: 1,
                    queue_size: 0xffff_ffff,
                    truncated_len: dropped.len() as u16,
                    dropped: owned(&dropped[..30]),
                })],
            ),
        ),
        (
            "DATA and two unknown chunk types",
            packet(
                tag,
                vec![
                    data(F::B | F::E, 900, 0, 0, 0, 3),
                    Chunk::Unknown(UnknownChunk::new(0xc5, 0x5a, owned(b"abcde"))),
                    Chunk::Unknown(UnknownChunk::new(0x45, 0, owned(b""))),
                ],
            ),
        ),
        // Edge cases: empty and minimal fields.
        (
            "COOKIE ECHO with an empty cookie",
            packet(
                tag,
                vec![Chunk::CookieEcho(CookieEcho { cookie: owned(b"") })],
            ),
        ),
        (
            "INIT ACK ending with an Unrecognized Parameter, copied with its padding",
            packet(
                1,
                vec![Chunk::InitAck(InitAck {
                    initiate_tag: 4,
                    a_rwnd: 1500,
                    outbound_streams: 1,
                    inbound_streams: 1,
                    initial_tsn: 9,
                    params: vec![
                        Param::StateCookie(counting(8)),
                        Param::UnrecognizedParameter(Cow::Owned(
                            [param_bytes(&unknown_param), vec![0]].concat(),
                        )),
                    ],
                })],
            ),
        ),
        (
            "DATA without user data",
            packet(tag, vec![data(F::B | F::E, 1, 0, 0, 0, 0)]),
        ),
        (
            "I-DATA without user data, I and U set, FSN 0",
            packet(
                tag,
                vec![idata(F::I | F::U, 5, 2, 3, PpidOrFsn::Fsn(0), b"")],
            ),
        ),
        (
            "ERROR without causes",
            packet(tag, vec![Chunk::Error(OperationError { causes: vec![] })]),
        ),
        (
            "ERROR with empty cause lists and values",
            packet(
                tag,
                vec![Chunk::Error(OperationError {
                    causes: vec![
                        ErrorCause::MissingMandatoryParameter { types: vec![] },
                        ErrorCause::Unknown {
                            code: 0x7777,
                            value: owned(b""),
                        },
                        ErrorCause::UserInitiatedAbort(owned(b"")),
                    ],
                })],
            ),
        ),
        (
            "ABORT reporting an unrecognized chunk with no value",
            packet(
                tag,
                vec![Chunk::Abort(Abort {
                    reflected_tag: false,
                    causes: vec![ErrorCause::UnrecognizedChunkType(owned(&[
                        0xff, 0xff, 0x00, 0x04,
                    ]))],
                })],
            ),
        ),
        (
            "INIT without parameters",
            packet(
                0,
                vec![Chunk::Init(Init {
                    initiate_tag: 1,
                    a_rwnd: 0,
                    outbound_streams: 1,
                    inbound_streams: 1,
                    initial_tsn: 0,
                    params: vec![],
                })],
            ),
        ),
        (
            "INIT with empty and odd-length parameters",
            packet(
                0,
                vec![Chunk::Init(Init {
                    initiate_tag: 2,
                    a_rwnd: 1,
                    outbound_streams: 1,
                    inbound_streams: 1,
                    initial_tsn: 0,
                    params: vec![
                        Param::Unknown {
                            typ: 0x8123,
                            value: owned(b""),
                        },
                        Param::SupportedAddressTypes(vec![5]),
                        Param::SupportedExtensions(vec![]),
                        Param::SupportedAddressTypes(vec![]),
                    ],
                })],
            ),
        ),
        (
            "INIT ACK with special IPv6 addresses",
            packet(
                1,
                vec![Chunk::InitAck(InitAck {
                    initiate_tag: 3,
                    a_rwnd: 0,
                    outbound_streams: 1,
                    inbound_streams: 1,
                    initial_tsn: 0,
                    params: vec![
                        Param::StateCookie(owned(b"c")),
                        Param::Ipv6Address("::ffff:1.2.3.4".parse().unwrap()),
                        Param::Ipv6Address(Ipv6Addr::UNSPECIFIED),
                        Param::Ipv6Address("fe80::1:0:0:1".parse().unwrap()),
                    ],
                })],
            ),
        ),
        (
            "HEARTBEAT with empty info",
            packet(tag, vec![Chunk::Heartbeat(Heartbeat::new(owned(b"")))]),
        ),
        (
            "I-FORWARD-TSN without streams",
            packet(
                tag,
                vec![Chunk::IForwardTsn(IForwardTsn {
                    new_cum_tsn: 1,
                    streams: vec![],
                })],
            ),
        ),
        (
            "PKTDROP without a packet",
            packet(
                tag,
                vec![Chunk::PktDrop(PktDrop {
                    flags: PktDropFlags::from_bits(0),
                    bandwidth: 0,
                    queue_size: 0,
                    truncated_len: 0,
                    dropped: owned(b""),
                })],
            ),
        ),
        (
            "RE-CONFIG: unknown parameter, undefined result",
            packet(
                tag,
                vec![reconfig(vec![
                    ReconfigParam::Unknown {
                        typ: 0x0020,
                        value: owned(b"abcdef"),
                    },
                    ReconfigParam::Response {
                        response_seq: 1,
                        result: ReconfigResult::Other(77),
                        next_tsns: None,
                    },
                ])],
            ),
        ),
        (
            "SACK with an extreme gap block",
            packet(
                tag,
                vec![Chunk::Sack(Sack {
                    cum_tsn_ack: 5,
                    a_rwnd: 1,
                    gap_blocks: vec![GapBlock {
                        start: 0xffff,
                        end: 0xffff,
                    }],
                    dup_tsns: vec![1],
                })],
            ),
        ),
    ]
}

// ---------------------------------------------------------------------------
// What tshark should show, computed from the codec's structs
// ---------------------------------------------------------------------------

/// Every field compared, for every packet: a field absent from both tshark's
/// output and the expectation compares equal (two empty lists).
const FIELDS: &[&str] = &[
    // common header
    "sctp.srcport",
    "sctp.dstport",
    "sctp.verification_tag",
    "sctp.checksum",
    "sctp.checksum.status",
    // every chunk
    "sctp.chunk_type",
    "sctp.chunk_flags",
    "sctp.chunk_length",
    "sctp.chunk_value",
    // DATA and I-DATA
    "sctp.data_tsn_raw",
    "sctp.data_sid",
    "sctp.data_ssn",
    "sctp.data_reserved",
    "sctp.data_mid",
    "sctp.data_fsn",
    "sctp.data_payload_proto_id",
    "sctp.data_e_bit",
    "sctp.data_b_bit",
    "sctp.data_u_bit",
    "sctp.data_i_bit",
    // INIT, INIT ACK
    "sctp.init_initiate_tag",
    "sctp.init_credit",
    "sctp.init_nr_out_streams",
    "sctp.init_nr_in_streams",
    "sctp.init_initial_tsn",
    "sctp.initack_initiate_tag",
    "sctp.initack_credit",
    "sctp.initack_nr_out_streams",
    "sctp.initack_nr_in_streams",
    "sctp.initack_initial_tsn",
    // SACK
    "sctp.sack_cumulative_tsn_ack_raw",
    "sctp.sack_a_rwnd",
    "sctp.sack_number_of_gap_blocks",
    "sctp.sack_number_of_duplicated_tsns",
    "sctp.sack_gap_block_start",
    "sctp.sack_gap_block_end",
    "sctp.sack_gap_block_start_tsn",
    "sctp.sack_gap_block_end_tsn",
    "sctp.sack_duplicate_tsn",
    // SHUTDOWN, ABORT, SHUTDOWN COMPLETE, COOKIE ECHO
    "sctp.shutdown_cumulative_tsn_ack",
    "sctp.abort_t_bit",
    "sctp.shutdown_complete_t_bit",
    "sctp.cookie",
    // FORWARD TSN, I-FORWARD-TSN
    "sctp.forward_tsn_tsn",
    "sctp.forward_tsn_sid",
    "sctp.forward_tsn_ssn",
    "sctp.i_forward_tsn_tsn",
    "sctp.i_forward_tsn_sid",
    "sctp.i_forward_tsn_u_bit",
    "sctp.forward_tsn_mid",
    // parameters
    "sctp.parameter_type",
    "sctp.parameter_length",
    "sctp.parameter_value",
    "sctp.parameter_ipv4_address",
    "sctp.parameter_ipv6_address",
    "sctp.parameter_heartbeat_information",
    "sctp.parameter_state_cookie",
    "sctp.parameter_cookie_preservative_incr",
    "sctp.parameter_hostname",
    "sctp.parameter_supported_address_type",
    "sctp.supported_chunk_type",
    // RE-CONFIG parameters
    "sctp.parameter_reconfig_request_sequence_number",
    "sctp.parameter_reconfig_response_sequence_number",
    "sctp.parameter_senders_last_assigned_tsn",
    "sctp.parameter_senders_next_tsn",
    "sctp.parameter_receivers_next_tsn",
    "sctp.parameter_reconfig_response_result",
    "sctp.parameter_reconfig_sid",
    "sctp.parameter_add_outgoing_streams_number",
    "sctp.parameter_add_outgoing_streams_reserved",
    "sctp.parameter_add_incoming_streams_number",
    "sctp.parameter_add_incoming_streams_reserved",
    // error causes
    "sctp.cause_code",
    "sctp.cause_length",
    "sctp.cause_information",
    "sctp.cause_stream_identifier",
    "sctp.cause_reserved",
    "sctp.cause_nr_of_missing_parameters",
    "sctp.cause_missing_parameter_type",
    "sctp.cause_measure_of_staleness",
    "sctp.cause_tsn",
    "sctp.hmac_id",
    // PKTDROP
    "sctp.pckdrop_m_bit",
    "sctp.pckdrop_b_bit",
    "sctp.pckdrop_t_bit",
    "sctp.pktdrop_bandwidth",
    "sctp.pktdrop_queuesize",
    "sctp.pktdrop_truncated_length",
    "sctp.pktdrop_reserved",
    "sctp.pktdrop_datafield",
];

/// Fields outside the comparison that the checks below read.
const EXTRA_FIELDS: &[&str] = &[
    "frame.number",
    "ip.checksum.status",
    "udp.checksum.status",
    "_ws.malformed",
    "_ws.expert.severity",
    "_ws.expert.message",
];

/// Wireshark's checksum status values (`proto_checksum_enum_e`).
const CHECKSUM_BAD: &str = "0";
const CHECKSUM_GOOD: &str = "1";
/// Expert severities (`PI_WARN`, `PI_ERROR`); anything at or above `PI_WARN` fails.
const PI_WARN: u64 = 0x0060_0000;

/// Field values in the order tshark lists them, as tshark prints them.
#[derive(Debug, Default, Clone, PartialEq)]
struct Fields(BTreeMap<&'static str, Vec<String>>);

impl Fields {
    fn dec(&mut self, field: &'static str, v: impl Into<u64>) {
        self.push(field, v.into().to_string());
    }
    /// BASE_HEX: `0x` and two hex digits per byte of the field.
    fn hex(&mut self, field: &'static str, v: impl Into<u64>, bytes: usize) {
        self.push(field, format!("{:#0w$x}", v.into(), w = 2 + 2 * bytes));
    }
    fn flag(&mut self, field: &'static str, set: bool) {
        self.push(field, u8::from(set).to_string());
    }
    fn bytes(&mut self, field: &'static str, b: &[u8]) {
        // tshark leaves an empty byte field out of the tree.
        if !b.is_empty() {
            self.push(field, b.iter().map(|x| format!("{x:02x}")).collect());
        }
    }
    fn push(&mut self, field: &'static str, v: String) {
        self.0.entry(field).or_default().push(v);
    }
}

/// The fields of a whole packet: common header, then each chunk in order.
/// `bytes` is the packet as encoded, for the checksum as carried.
fn expect_packet(e: &mut Fields, p: &Packet<'_>, bytes: &[u8], checksum_status: &str) {
    e.dec("sctp.srcport", p.header.src_port);
    e.dec("sctp.dstport", p.header.dst_port);
    e.hex("sctp.verification_tag", p.header.verification_tag, 4);
    // Wireshark shows the four checksum bytes as a big-endian number.
    let carried = u32::from_be_bytes(bytes[8..12].try_into().unwrap());
    e.hex("sctp.checksum", carried, 4);
    e.push("sctp.checksum.status", checksum_status.to_string());
    for chunk in &p.chunks {
        expect_chunk(e, chunk);
    }
}

/// The Chunk Length field the codec writes: header and value, no final padding.
fn chunk_length(chunk: &Chunk<'_>) -> usize {
    match chunk {
        Chunk::Data(c) => c.chunk_len(),
        Chunk::Init(c) => c.chunk_len(),
        Chunk::InitAck(c) => c.chunk_len(),
        Chunk::Sack(c) => ChunkCodec::chunk_len(c),
        Chunk::Heartbeat(c) => c.chunk_len(),
        Chunk::HeartbeatAck(c) => c.chunk_len(),
        Chunk::Abort(c) => c.chunk_len(),
        Chunk::Shutdown(c) => ChunkCodec::chunk_len(c),
        Chunk::ShutdownAck(c) => ChunkCodec::chunk_len(c),
        Chunk::Error(c) => c.chunk_len(),
        Chunk::CookieEcho(c) => c.chunk_len(),
        Chunk::CookieAck(c) => ChunkCodec::chunk_len(c),
        Chunk::ShutdownComplete(c) => ChunkCodec::chunk_len(c),
        Chunk::IData(c) => c.chunk_len(),
        Chunk::ForwardTsn(c) => ChunkCodec::chunk_len(c),
        Chunk::IForwardTsn(c) => ChunkCodec::chunk_len(c),
        Chunk::ReConfig(c) => c.chunk_len(),
        Chunk::PktDrop(c) => c.chunk_len(),
        Chunk::Unknown(u) => 4 + u.value.len(),
    }
}

fn expect_data_flags(e: &mut Fields, f: DataFlags) {
    e.flag("sctp.data_i_bit", f.immediate);
    e.flag("sctp.data_u_bit", f.unordered);
    e.flag("sctp.data_b_bit", f.beginning);
    e.flag("sctp.data_e_bit", f.ending);
}

fn expect_chunk(e: &mut Fields, chunk: &Chunk<'_>) {
    e.dec("sctp.chunk_type", chunk.chunk_type());
    e.hex("sctp.chunk_flags", chunk.flags(), 1);
    e.dec("sctp.chunk_length", chunk_length(chunk) as u64);
    match chunk {
        Chunk::Data(d) => {
            expect_data_flags(e, d.flags);
            e.dec("sctp.data_tsn_raw", d.tsn);
            e.hex("sctp.data_sid", d.stream_id, 2);
            e.dec("sctp.data_ssn", d.ssn);
            e.dec("sctp.data_payload_proto_id", d.ppid);
        }
        Chunk::IData(d) => {
            expect_data_flags(e, d.flags);
            e.dec("sctp.data_tsn_raw", d.tsn);
            e.hex("sctp.data_sid", d.stream_id, 2);
            e.dec("sctp.data_reserved", 0u16);
            e.dec("sctp.data_mid", d.mid);
            match d.ppid_or_fsn {
                PpidOrFsn::Ppid(ppid) => e.dec("sctp.data_payload_proto_id", ppid),
                PpidOrFsn::Fsn(fsn) => e.dec("sctp.data_fsn", fsn),
            }
        }
        Chunk::Init(c) => {
            e.hex("sctp.init_initiate_tag", c.initiate_tag, 4);
            e.dec("sctp.init_credit", c.a_rwnd);
            e.dec("sctp.init_nr_out_streams", c.outbound_streams);
            e.dec("sctp.init_nr_in_streams", c.inbound_streams);
            e.dec("sctp.init_initial_tsn", c.initial_tsn);
            expect_params(e, &c.params);
        }
        Chunk::InitAck(c) => {
            e.hex("sctp.initack_initiate_tag", c.initiate_tag, 4);
            e.dec("sctp.initack_credit", c.a_rwnd);
            e.dec("sctp.initack_nr_out_streams", c.outbound_streams);
            e.dec("sctp.initack_nr_in_streams", c.inbound_streams);
            e.dec("sctp.initack_initial_tsn", c.initial_tsn);
            expect_params(e, &c.params);
        }
        Chunk::Sack(s) => {
            e.dec("sctp.sack_cumulative_tsn_ack_raw", s.cum_tsn_ack);
            e.dec("sctp.sack_a_rwnd", s.a_rwnd);
            e.dec("sctp.sack_number_of_gap_blocks", s.gap_blocks.len() as u64);
            e.dec(
                "sctp.sack_number_of_duplicated_tsns",
                s.dup_tsns.len() as u64,
            );
            for b in &s.gap_blocks {
                e.dec("sctp.sack_gap_block_start", b.start);
                e.dec(
                    "sctp.sack_gap_block_start_tsn",
                    s.cum_tsn_ack.wrapping_add(u32::from(b.start)),
                );
                e.dec("sctp.sack_gap_block_end", b.end);
                e.dec(
                    "sctp.sack_gap_block_end_tsn",
                    s.cum_tsn_ack.wrapping_add(u32::from(b.end)),
                );
            }
            for t in &s.dup_tsns {
                e.dec("sctp.sack_duplicate_tsn", *t);
            }
        }
        Chunk::Heartbeat(h) => expect_params(e, &h.params),
        Chunk::HeartbeatAck(h) => expect_params(e, &h.params),
        Chunk::Abort(a) => {
            e.flag("sctp.abort_t_bit", a.reflected_tag);
            expect_causes(e, &a.causes);
        }
        Chunk::Shutdown(s) => e.dec("sctp.shutdown_cumulative_tsn_ack", s.cum_tsn_ack),
        Chunk::ShutdownAck(_) | Chunk::CookieAck(_) => {}
        Chunk::Error(err) => expect_causes(e, &err.causes),
        // tshark shows an empty cookie as "<MISSING>" rather than leaving it out.
        Chunk::CookieEcho(c) if c.cookie.is_empty() => e.push("sctp.cookie", "<MISSING>".into()),
        Chunk::CookieEcho(c) => e.bytes("sctp.cookie", &c.cookie),
        Chunk::ShutdownComplete(s) => e.flag("sctp.shutdown_complete_t_bit", s.reflected_tag),
        Chunk::ForwardTsn(f) => {
            e.dec("sctp.forward_tsn_tsn", f.new_cum_tsn);
            for s in &f.streams {
                e.dec("sctp.forward_tsn_sid", s.stream_id);
                e.dec("sctp.forward_tsn_ssn", s.ssn);
            }
        }
        Chunk::IForwardTsn(f) => {
            e.dec("sctp.i_forward_tsn_tsn", f.new_cum_tsn);
            for s in &f.streams {
                e.dec("sctp.i_forward_tsn_sid", s.stream_id);
                e.flag("sctp.i_forward_tsn_u_bit", s.unordered);
                e.dec("sctp.forward_tsn_mid", s.mid);
            }
        }
        Chunk::ReConfig(r) => {
            for p in &r.params {
                expect_reconfig_param(e, p);
            }
        }
        Chunk::PktDrop(p) => {
            e.flag("sctp.pckdrop_m_bit", p.flags.middlebox);
            e.flag("sctp.pckdrop_b_bit", p.flags.bad_checksum);
            e.flag("sctp.pckdrop_t_bit", p.flags.truncated);
            e.dec("sctp.pktdrop_bandwidth", p.bandwidth);
            e.dec("sctp.pktdrop_queuesize", p.queue_size);
            e.dec("sctp.pktdrop_truncated_length", p.truncated_len);
            e.dec("sctp.pktdrop_reserved", 0u16);
            if p.flags.truncated {
                // Wireshark shows a truncated packet as bytes...
                e.bytes("sctp.pktdrop_datafield", &p.dropped);
            } else if !p.dropped.is_empty() {
                // ...and dissects a whole one as an SCTP packet.
                let inner = Packet::decode_with(&p.dropped, ChecksumPolicy::Ignore)
                    .expect("the packet a PKTDROP reports decodes");
                let status =
                    match brisk_proto::wire::verify_checksum(&p.dropped, ChecksumPolicy::Verify) {
                        Ok(()) => CHECKSUM_GOOD,
                        Err(_) => CHECKSUM_BAD,
                    };
                expect_packet(e, &inner, &p.dropped, status);
            }
        }
        Chunk::Unknown(u) => e.bytes("sctp.chunk_value", &u.value),
    }
}

/// Walks back-to-back TLVs (type, length, value, padding) in `buf`.
fn tlvs(buf: &[u8]) -> Vec<(u16, &[u8])> {
    let mut out = Vec::new();
    let mut rest = buf;
    while rest.len() >= 4 {
        let typ = u16::from_be_bytes([rest[0], rest[1]]);
        let len = usize::from(u16::from_be_bytes([rest[2], rest[3]]));
        assert!(
            (4..=rest.len()).contains(&len),
            "bad TLV in test data: {buf:02x?}"
        );
        out.push((typ, &rest[4..len]));
        rest = &rest[padded(len).min(rest.len())..];
    }
    assert!(
        rest.is_empty(),
        "stray bytes after TLVs in test data: {buf:02x?}"
    );
    out
}

/// Parameters carried inside another TLV (Unrecognized Parameter, some causes),
/// decoded with the codec; Wireshark dissects them as nested parameters.
fn expect_nested_params(e: &mut Fields, buf: &[u8]) {
    let params: Vec<Param<'_>> = tlvs(buf)
        .into_iter()
        .map(|(typ, value)| {
            <Param<'_> as Tlv<'_>>::decode(typ, value).expect("nested parameter decodes")
        })
        .collect();
    expect_params(e, &params);
}

fn expect_params(e: &mut Fields, params: &[Param<'_>]) {
    for p in params {
        e.hex("sctp.parameter_type", p.tlv_type(), 2);
        e.dec("sctp.parameter_length", 4 + p.value_len() as u64);
        match p {
            Param::HeartbeatInfo(v) => e.bytes("sctp.parameter_heartbeat_information", v),
            Param::Ipv4Address(a) => e.push("sctp.parameter_ipv4_address", a.to_string()),
            Param::Ipv6Address(a) => e.push("sctp.parameter_ipv6_address", a.to_string()),
            Param::StateCookie(v) => e.bytes("sctp.parameter_state_cookie", v),
            Param::UnrecognizedParameter(v) => expect_nested_params(e, v),
            Param::CookiePreservative { increment_ms } => {
                e.dec("sctp.parameter_cookie_preservative_incr", *increment_ms)
            }
            Param::HostNameAddress(v) => {
                let name = v.split(|b| *b == 0).next().unwrap_or_default();
                e.push(
                    "sctp.parameter_hostname",
                    String::from_utf8_lossy(name).into_owned(),
                );
            }
            Param::SupportedAddressTypes(types) => {
                for t in types {
                    e.dec("sctp.parameter_supported_address_type", *t);
                }
            }
            // Wireshark 4.0 predates RFC 9653 and shows this one as unknown.
            Param::ZeroChecksumAcceptable { edmid } => {
                e.bytes("sctp.parameter_value", &edmid.to_be_bytes())
            }
            Param::SupportedExtensions(types) => {
                for t in types {
                    e.dec("sctp.supported_chunk_type", *t);
                }
            }
            Param::ForwardTsnSupported => {}
            Param::Unknown { value, .. } => e.bytes("sctp.parameter_value", value),
        }
    }
}

fn expect_causes(e: &mut Fields, causes: &[ErrorCause<'_>]) {
    for c in causes {
        e.hex("sctp.cause_code", c.code(), 2);
        e.dec("sctp.cause_length", 4 + c.value_len() as u64);
        match c {
            ErrorCause::InvalidStreamIdentifier { stream_id } => {
                e.dec("sctp.cause_stream_identifier", *stream_id);
                e.dec("sctp.cause_reserved", 0u16);
            }
            ErrorCause::MissingMandatoryParameter { types } => {
                e.dec("sctp.cause_nr_of_missing_parameters", types.len() as u64);
                for t in types {
                    e.hex("sctp.cause_missing_parameter_type", *t, 2);
                }
            }
            ErrorCause::StaleCookie { staleness_us } => {
                e.dec("sctp.cause_measure_of_staleness", *staleness_us)
            }
            ErrorCause::OutOfResource
            | ErrorCause::InvalidMandatoryParameter
            | ErrorCause::CookieReceivedWhileShuttingDown => {}
            ErrorCause::UnresolvableAddress(v)
            | ErrorCause::UnrecognizedParameters(v)
            | ErrorCause::RestartWithNewAddresses(v) => expect_nested_params(e, v),
            ErrorCause::UnrecognizedChunkType(v) => {
                // Wireshark dissects the reported chunk as a chunk.
                let len = usize::from(u16::from_be_bytes([v[2], v[3]]));
                let chunk = Chunk::decode(v[0], v[1], &v[4..len]).expect("reported chunk decodes");
                expect_chunk(e, &chunk);
            }
            ErrorCause::NoUserData { tsn } => e.dec("sctp.cause_tsn", *tsn),
            ErrorCause::UserInitiatedAbort(v)
            | ErrorCause::ProtocolViolation(v)
            | ErrorCause::Unknown { value: v, .. } => e.bytes("sctp.cause_information", v),
            ErrorCause::UnsupportedHmacIdentifier { hmac_id } => e.dec("sctp.hmac_id", *hmac_id),
        }
    }
}

fn expect_reconfig_param(e: &mut Fields, p: &ReconfigParam<'_>) {
    e.hex("sctp.parameter_type", p.tlv_type(), 2);
    e.dec("sctp.parameter_length", 4 + p.value_len() as u64);
    match p {
        ReconfigParam::OutgoingSsnReset {
            request_seq,
            response_seq,
            last_tsn,
            streams,
        } => {
            e.dec(
                "sctp.parameter_reconfig_request_sequence_number",
                *request_seq,
            );
            e.dec(
                "sctp.parameter_reconfig_response_sequence_number",
                *response_seq,
            );
            e.dec("sctp.parameter_senders_last_assigned_tsn", *last_tsn);
            for s in streams {
                e.dec("sctp.parameter_reconfig_sid", *s);
            }
        }
        ReconfigParam::IncomingSsnReset {
            request_seq,
            streams,
        } => {
            e.dec(
                "sctp.parameter_reconfig_request_sequence_number",
                *request_seq,
            );
            for s in streams {
                e.dec("sctp.parameter_reconfig_sid", *s);
            }
        }
        ReconfigParam::SsnTsnReset { request_seq } => e.dec(
            "sctp.parameter_reconfig_request_sequence_number",
            *request_seq,
        ),
        ReconfigParam::Response {
            response_seq,
            result,
            next_tsns,
        } => {
            e.dec(
                "sctp.parameter_reconfig_response_sequence_number",
                *response_seq,
            );
            e.dec("sctp.parameter_reconfig_response_result", result.code());
            if let Some((sender, receiver)) = next_tsns {
                e.dec("sctp.parameter_senders_next_tsn", *sender);
                e.dec("sctp.parameter_receivers_next_tsn", *receiver);
            }
        }
        ReconfigParam::AddOutgoingStreams {
            request_seq,
            new_streams,
        } => {
            e.dec(
                "sctp.parameter_reconfig_request_sequence_number",
                *request_seq,
            );
            e.dec("sctp.parameter_add_outgoing_streams_number", *new_streams);
            e.dec("sctp.parameter_add_outgoing_streams_reserved", 0u16);
        }
        ReconfigParam::AddIncomingStreams {
            request_seq,
            new_streams,
        } => {
            e.dec(
                "sctp.parameter_reconfig_request_sequence_number",
                *request_seq,
            );
            e.dec("sctp.parameter_add_incoming_streams_number", *new_streams);
            e.dec("sctp.parameter_add_incoming_streams_reserved", 0u16);
        }
        ReconfigParam::Unknown { value, .. } => e.bytes("sctp.parameter_value", value),
    }
}

// ---------------------------------------------------------------------------
// Running tshark
// ---------------------------------------------------------------------------

/// A pcap path in the temp dir, unique to this process and test.
fn pcap_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("brisk-tshark-{name}-{}.pcap", std::process::id()))
}

/// Writes each datagram as UDP 127.0.0.1:9899 -> 127.0.0.2:9899, 1 ms apart.
fn write_pcap(path: &Path, datagrams: &[Vec<u8>]) {
    let src = SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 1), UDP_PORT);
    let dst = SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 2), UDP_PORT);
    let file =
        std::fs::File::create(path).unwrap_or_else(|e| panic!("create {}: {e}", path.display()));
    let mut w = PcapWriter::new(std::io::BufWriter::new(file)).unwrap();
    for (i, d) in datagrams.iter().enumerate() {
        w.write_udp(1_000_000 + 1_000 * i as u64, src, dst, d)
            .unwrap();
    }
    w.flush().unwrap();
}

/// One dissected packet: field name to its values, in tree order.
type Layers = BTreeMap<String, Vec<String>>;

/// Runs tshark on `path`, asking for `fields`, and returns one map per packet.
fn tshark(path: &Path, fields: &[&str]) -> Vec<Layers> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(path).args([
        "-n",
        "-d",
        "udp.port==9899,sctp",
        "-o",
        "sctp.checksum:CRC 32c",
        "-o",
        "sctp.relative_tsns:FALSE",
        "-o",
        "sctp.reassembly:FALSE",
        "-o",
        "sctp.tsn_analysis:FALSE",
        "-o",
        "sctp.ulp_dissection:FALSE",
        "-o",
        "ip.check_checksum:TRUE",
        "-o",
        "udp.check_checksum:TRUE",
        "-T",
        "json",
    ]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = match cmd.output() {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "tshark is not installed, and this test needs it to check the SCTP wire format \
             independently (BRISK_REQUIRE_TSHARK={}). Install it: apt-get install tshark",
            std::env::var("BRISK_REQUIRE_TSHARK").unwrap_or_default()
        ),
        Err(e) => panic!("running tshark: {e}"),
    };
    assert!(
        out.status.success(),
        "tshark failed ({}) on {}:\n{}",
        out.status,
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("tshark output on {} is not JSON: {e}", path.display()));
    json.as_array()
        .expect("tshark -T json prints an array")
        .iter()
        .map(|pkt| {
            let layers = pkt["_source"]["layers"].as_object().expect("layers object");
            layers
                .iter()
                .map(|(k, v)| {
                    let values = v
                        .as_array()
                        .expect("field values are an array")
                        .iter()
                        .map(|s| s.as_str().expect("field value is a string").to_owned())
                        .collect();
                    (k.clone(), values)
                })
                .collect()
        })
        .collect()
}

fn values<'l>(layers: &'l Layers, field: &str) -> &'l [String] {
    layers.get(field).map_or(&[], Vec::as_slice)
}

/// Expert messages at warning or error severity, except those starting with
/// one of `allowed`.
fn serious_experts(layers: &Layers, allowed: &[&str]) -> Vec<String> {
    let severities = values(layers, "_ws.expert.severity");
    let messages = values(layers, "_ws.expert.message");
    severities
        .iter()
        .zip(messages)
        .filter(|(s, _)| s.parse::<u64>().unwrap_or(u64::MAX) >= PI_WARN)
        .filter(|(_, m)| !allowed.iter().any(|a| m.starts_with(a)))
        .map(|(s, m)| format!("[{s}] {m}"))
        .collect()
}

fn all_fields() -> Vec<&'static str> {
    FIELDS.iter().chain(EXTRA_FIELDS).copied().collect()
}

/// Compares one packet's dissection with the expectation; returns the problems.
fn compare(layers: &Layers, expected: &Fields, allowed_experts: &[&str]) -> Vec<String> {
    let mut problems = Vec::new();
    for field in expected.0.keys() {
        assert!(
            FIELDS.contains(field),
            "test bug: {field} is expected but not requested from tshark"
        );
    }
    for field in FIELDS {
        let want = expected.0.get(field).map_or(&[][..], Vec::as_slice);
        let got = values(layers, field);
        if want != got {
            problems.push(format!("{field}: codec {want:?}, tshark {got:?}"));
        }
    }
    for (field, want) in [
        ("ip.checksum.status", CHECKSUM_GOOD),
        ("udp.checksum.status", CHECKSUM_GOOD),
    ] {
        if values(layers, field) != [want] {
            problems.push(format!(
                "{field}: want [{want}], tshark {:?}",
                values(layers, field)
            ));
        }
    }
    if !values(layers, "_ws.malformed").is_empty() {
        problems.push("tshark marks the packet malformed".into());
    }
    let experts = serious_experts(layers, allowed_experts);
    if !experts.is_empty() {
        problems.push(format!("expert warnings/errors: {experts:?}"));
    }
    problems
}

// ---------------------------------------------------------------------------
// Random packets, in the form Wireshark 4.0 dissects predictably
// ---------------------------------------------------------------------------

/// Chunk types Wireshark 4.0 dissects that the codec keeps as unknown chunks
/// (ECNE, CWR, AUTH, NR-SACK, ASCONF-ACK, PAD, ASCONF, IETF extension).
const WIRESHARK_ONLY_CHUNK_TYPES: &[u8] = &[12, 13, 15, 16, 0x80, 0x84, 0xc1, 0xff];
/// Parameter types Wireshark 4.0 dissects (`tshark -G values`): in any chunk that
/// carries parameters, including RE-CONFIG, it dissects each by these types.
const WIRESHARK_PARAM_TYPES: &[u16] = &[
    1, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 0x8000, 0x8002, 0x8003, 0x8004, 0x8008,
    0xc000, 0xc001, 0xc002, 0xc003, 0xc004, 0xc005, 0xc006,
];
/// Cause codes Wireshark 4.0 dissects that the codec keeps as unknown (RFC 5061).
const WIRESHARK_ONLY_CAUSE_CODES: &[u16] = &[0xa0, 0xa1, 0xa2, 0xa3, 0xa4];

/// The next chunk type, from `t` on, that neither the codec nor Wireshark knows.
fn free_chunk_type(mut t: u8) -> u8 {
    while types::name(t) != UnknownChunk::NAME || WIRESHARK_ONLY_CHUNK_TYPES.contains(&t) {
        t = t.wrapping_add(1);
    }
    t
}

/// The next parameter type, from `t` on, that neither the codec nor Wireshark knows.
fn free_param_type(mut t: u16) -> u16 {
    while Param::is_known_type(t)
        || ReconfigParam::is_known_type(t)
        || WIRESHARK_PARAM_TYPES.contains(&t)
    {
        t = t.wrapping_add(1);
    }
    t
}

/// The next cause code, from `c` on, that neither the codec nor Wireshark knows.
fn free_cause_code(mut c: u16) -> u16 {
    while ErrorCause::is_known_code(c) || WIRESHARK_ONLY_CAUSE_CODES.contains(&c) {
        c = c.wrapping_add(1);
    }
    c
}

/// A well-formed parameter holding `blob`, for fields that carry parameters.
///
/// Wireshark 4.0 wants the copy padded inside an Unrecognized Parameter
/// (without it, it reports "Parameter length is not padded to a multiple of 4
/// bytes" as an error when that parameter ends its chunk), and unpadded inside
/// an error cause (with it, it notes "The padding of this final parameter should
/// be the padding of the chunk" and marks the packet malformed).
fn param_holding(blob: &[u8], pad: bool) -> Cow<'static, [u8]> {
    let mut p = param_bytes(&Param::HeartbeatInfo(Cow::Borrowed(blob)));
    if pad {
        p.resize(padded(p.len()), 0);
    }
    Cow::Owned(p)
}

/// Rewrites a generated packet where Wireshark 4.0 interprets content by rules
/// of its own, so that its dissection is predictable from the codec's structs.
/// Only opaque or unknown parts change; every field the codec defines stays.
///
/// - Unknown chunk, parameter and cause types are moved off the types
///   Wireshark knows and the codec does not (ASCONF, AUTH, ECN, ...).
/// - Byte fields that Wireshark dissects as parameters (Unrecognized Parameter,
///   Unresolvable Address, Unrecognized Parameters, Restart with New Addresses),
///   as a chunk (Unrecognized Chunk Type) or as a packet (PKTDROP without T)
///   hold well-formed ones built around the generated bytes.
/// - Host names are printable and NUL-terminated.
/// - HEARTBEAT and HEARTBEAT ACK carry only their Heartbeat Info: Wireshark
///   dissects one parameter and shows the rest as its padding.
fn wireshark_view(p: Packet<'static>) -> Packet<'static> {
    Packet {
        header: p.header,
        chunks: p.chunks.into_iter().map(view_chunk).collect(),
    }
}

fn view_chunk(c: Chunk<'static>) -> Chunk<'static> {
    match c {
        Chunk::Init(mut i) => {
            i.params = i.params.into_iter().map(view_param).collect();
            Chunk::Init(i)
        }
        Chunk::InitAck(mut i) => {
            i.params = i.params.into_iter().map(view_param).collect();
            Chunk::InitAck(i)
        }
        Chunk::Heartbeat(h) => {
            Chunk::Heartbeat(Heartbeat::new(h.info().unwrap_or_default().to_vec()))
        }
        Chunk::HeartbeatAck(h) => {
            Chunk::HeartbeatAck(HeartbeatAck::new(h.info().unwrap_or_default().to_vec()))
        }
        Chunk::Abort(mut a) => {
            a.causes = a.causes.into_iter().map(view_cause).collect();
            Chunk::Abort(a)
        }
        Chunk::Error(mut e) => {
            e.causes = e.causes.into_iter().map(view_cause).collect();
            Chunk::Error(e)
        }
        Chunk::ReConfig(mut r) => {
            r.params = r
                .params
                .into_iter()
                .map(|p| match p {
                    ReconfigParam::Unknown { typ, value } => ReconfigParam::Unknown {
                        typ: free_param_type(typ),
                        value,
                    },
                    p => p,
                })
                .collect();
            Chunk::ReConfig(r)
        }
        Chunk::PktDrop(mut d) if !d.flags.truncated && !d.dropped.is_empty() => {
            let payload = std::mem::take(d.dropped.to_mut());
            d.dropped = Cow::Owned(
                packet(
                    7,
                    vec![Chunk::Data(Data {
                        flags: DataFlags::UNFRAGMENTED,
                        tsn: 1,
                        stream_id: 2,
                        ssn: 3,
                        ppid: 4,
                        payload: Cow::Owned(payload),
                    })],
                )
                .to_bytes()
                .unwrap(),
            );
            Chunk::PktDrop(d)
        }
        Chunk::Unknown(u) => {
            Chunk::Unknown(UnknownChunk::new(free_chunk_type(u.typ), u.flags, u.value))
        }
        c => c,
    }
}

fn view_param(p: Param<'static>) -> Param<'static> {
    match p {
        Param::UnrecognizedParameter(v) => Param::UnrecognizedParameter(param_holding(&v, true)),
        Param::HostNameAddress(v) => {
            let mut name: Vec<u8> = v.iter().map(|b| b'a' + b % 26).collect();
            name.push(0);
            Param::HostNameAddress(Cow::Owned(name))
        }
        Param::Unknown { typ, value } => Param::Unknown {
            typ: free_param_type(typ),
            value,
        },
        p => p,
    }
}

fn view_cause(c: ErrorCause<'static>) -> ErrorCause<'static> {
    match c {
        ErrorCause::UnresolvableAddress(v) => {
            ErrorCause::UnresolvableAddress(param_holding(&v, false))
        }
        ErrorCause::UnrecognizedParameters(v) => {
            ErrorCause::UnrecognizedParameters(param_holding(&v, false))
        }
        ErrorCause::RestartWithNewAddresses(v) => {
            ErrorCause::RestartWithNewAddresses(param_holding(&v, false))
        }
        ErrorCause::UnrecognizedChunkType(v) => {
            let typ = free_chunk_type(v.first().copied().unwrap_or(0));
            let mut chunk = vec![typ, 0];
            chunk.extend_from_slice(&(4 + v.len() as u16).to_be_bytes());
            chunk.extend_from_slice(&v);
            ErrorCause::UnrecognizedChunkType(Cow::Owned(chunk))
        }
        ErrorCause::Unknown { code, value } => ErrorCause::Unknown {
            code: free_cause_code(code),
            value,
        },
        c => c,
    }
}

// ---------------------------------------------------------------------------
// The checks
// ---------------------------------------------------------------------------

/// One packet to write and what tshark should show for it.
struct Case {
    name: String,
    bytes: Vec<u8>,
    expected: Fields,
    /// The checksum was corrupted on purpose: tshark must say Bad, with the bad
    /// checksum as the only serious expert.
    corrupted: bool,
    /// Expert messages (prefixes) that are not failures for this packet.
    allowed_experts: &'static [&'static str],
}

impl Case {
    /// Encodes `p`, checks that the codec reads it back, and computes the expectation.
    fn new(name: impl Into<String>, p: &Packet<'_>) -> Self {
        let name = name.into();
        let bytes = p
            .to_bytes()
            .unwrap_or_else(|e| panic!("{name}: encode: {e}"));
        let back = Packet::decode(&bytes).unwrap_or_else(|e| panic!("{name}: decode: {e}"));
        assert_eq!(
            back.chunks, p.chunks,
            "{name}: round trip through the codec"
        );
        let mut expected = Fields::default();
        expect_packet(&mut expected, p, &bytes, CHECKSUM_GOOD);
        Case {
            name,
            bytes,
            expected,
            corrupted: false,
            allowed_experts: &[],
        }
    }
}

/// Writes the cases to a pcap, dissects it with tshark and compares every
/// packet. Panics with every disagreement, keeping the pcap; removes it on
/// success and returns how many field values were compared.
fn check_with_tshark(label: &str, cases: &[Case]) -> usize {
    let path = pcap_path(label);
    let datagrams: Vec<Vec<u8>> = cases.iter().map(|c| c.bytes.clone()).collect();
    write_pcap(&path, &datagrams);
    let dissected = tshark(&path, &all_fields());
    assert_eq!(
        dissected.len(),
        cases.len(),
        "tshark read {} packets from {}, {} were written",
        dissected.len(),
        path.display(),
        cases.len()
    );

    let mut failures = Vec::new();
    for (i, (case, layers)) in cases.iter().zip(&dissected).enumerate() {
        let frame = values(layers, "frame.number");
        assert_eq!(
            frame,
            [(i + 1).to_string()],
            "tshark's packets are out of order"
        );
        let mut problems = compare(layers, &case.expected, case.allowed_experts);
        if case.corrupted {
            problems.retain(|p| !p.starts_with("expert"));
            let experts = serious_experts(layers, &[]);
            if experts.len() != 1 || !experts[0].contains("Bad SCTP checksum") {
                problems.push(format!(
                    "want exactly one serious expert, the bad checksum; got {experts:?}"
                ));
            }
        }
        if !problems.is_empty() {
            failures.push(format!(
                "frame {} ({}):\n    {}",
                i + 1,
                case.name,
                problems.join("\n    ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "tshark disagrees with the codec on {} of {} packets (pcap kept at {path}; \
         inspect it with: tshark -r {path} -o 'sctp.checksum:CRC 32c' \
         -o sctp.relative_tsns:FALSE -d udp.port==9899,sctp -V):\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n"),
        path = path.display(),
    );
    std::fs::remove_file(&path).ok();
    cases
        .iter()
        .map(|c| c.expected.0.values().map(Vec::len).sum::<usize>())
        .sum()
}

// ---------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------

#[test]
fn tshark_dissects_every_chunk_type_as_encoded() {
    let packets = packets();

    // Every chunk type the codec knows appears, and two it does not.
    let types: Vec<u8> = packets
        .iter()
        .flat_map(|(_, p)| p.chunks.iter().map(Chunk::chunk_type))
        .collect();
    for t in [
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14, 64, 129, 130, 192, 194, 0x45, 0xc5,
    ] {
        assert!(
            types.contains(&t),
            "no chunk of type {t} in the test packets"
        );
    }

    let mut cases: Vec<Case> = packets
        .iter()
        .map(|(name, p)| Case::new(*name, p))
        .collect();

    // One packet with a corrupted checksum: our parser rejects it, tshark flags it.
    let (name, p) = &packets[0];
    let mut bytes = p.to_bytes().unwrap();
    let good = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
    bytes[9] ^= 0x40;
    let bad = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
    assert_eq!(
        Packet::decode(&bytes),
        Err(WireError::BadChecksum {
            received: bad,
            computed: good
        }),
        "the codec must reject a corrupted checksum"
    );
    let mut expected = Fields::default();
    expect_packet(&mut expected, p, &bytes, CHECKSUM_BAD);
    cases.push(Case {
        name: format!("{name}, checksum corrupted"),
        bytes,
        expected,
        corrupted: true,
        allowed_experts: &[],
    });

    let compared = check_with_tshark("wire", &cases);
    let chunks: usize = packets.iter().map(|(_, p)| p.chunks.len()).sum();
    eprintln!(
        "tshark agrees with the codec on {} packets ({chunks} chunks, {compared} field values) \
         and flags the one with a corrupted checksum",
        packets.len()
    );
}

/// Wireshark's sanity checks on SACK contents. Random gap blocks trip them;
/// they judge the numbers, not their encoding, which the fields check.
const SACK_CONTENT_EXPERTS: &[&str] = &[
    "Malformed gap block.",
    "Gap blocks not in strict order.",
    "More than 100 TSNs were gap-acknowledged",
];

/// How many random packets [`tshark_agrees_on_random_packets`] checks;
/// `BRISK_DEEP=1` checks ten times as many.
fn random_packets() -> usize {
    if std::env::var("BRISK_DEEP").is_ok_and(|v| v == "1") {
        2000
    } else {
        200
    }
}

#[test]
fn tshark_agrees_on_random_packets() {
    // A fixed seed: the same packets on every run.
    let mut runner = TestRunner::deterministic();
    let strategy = strategies::packet();
    let packets: Vec<Packet<'static>> = (0..random_packets())
        .map(|_| wireshark_view(strategy.new_tree(&mut runner).unwrap().current()))
        .collect();
    let cases: Vec<Case> = packets
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let names: Vec<&str> = p.chunks.iter().map(Chunk::name).collect();
            let mut case = Case::new(format!("random #{i}: {}", names.join(", ")), p);
            case.allowed_experts = SACK_CONTENT_EXPERTS;
            case
        })
        .collect();
    let compared = check_with_tshark("random", &cases);
    let chunks: usize = packets.iter().map(|p| p.chunks.len()).sum();
    eprintln!(
        "tshark agrees with the codec on {} random packets ({chunks} chunks, {compared} field values)",
        packets.len()
    );
}
