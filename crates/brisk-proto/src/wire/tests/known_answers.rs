//! Known answers: the CRC32c test vectors of RFC 3720 B.4, and chunks written
//! byte by byte from the layouts of RFC 9260 3.3, RFC 3758, RFC 8260 and
//! RFC 6525. Each is checked both ways: the bytes decode to the expected value,
//! and the expected value encodes to exactly those bytes.

use std::borrow::Cow;
use std::net::{Ipv4Addr, Ipv6Addr};

use super::sealed_packet;
use crate::wire::chunk::{
    Abort, Chunk, CookieAck, CookieEcho, Data, DataFlags, ForwardTsn, ForwardTsnStream, GapBlock,
    Heartbeat, HeartbeatAck, IData, IForwardTsn, IForwardTsnStream, Init, InitAck, OperationError,
    PktDrop, PktDropFlags, ReConfig, ReconfigParam, ReconfigResult, Sack, Shutdown, ShutdownAck,
    ShutdownComplete, idata::PpidOrFsn,
};
use crate::wire::{
    ChecksumPolicy, CommonHeader, ErrorCause, Packet, Param, RawChunks, compute_checksum, seal,
    verify_checksum,
};

/// Checks hand-written chunk bytes against the chunks they must decode to:
/// encoding gives the bytes, decoding gives the chunks, alone and in a packet.
fn check_known_chunks(bytes: &[u8], expected: &[Chunk<'_>]) {
    let mut encoded = Vec::new();
    for chunk in expected {
        chunk
            .encode(&mut encoded)
            .expect("the expected chunk encodes");
    }
    assert_eq!(encoded, bytes, "encoding the expected chunks");

    let decoded: Vec<Chunk<'_>> = RawChunks::new(bytes)
        .map(|raw| raw.and_then(|raw| raw.decode()))
        .collect::<Result<_, _>>()
        .expect("the hand-written chunks decode");
    assert_eq!(decoded, expected, "decoding the hand-written bytes");

    let packet_bytes = sealed_packet(bytes);
    let packet = Packet::decode(&packet_bytes).expect("the packet decodes");
    assert_eq!(packet.chunks, expected);
    let rebuilt = Packet {
        header: packet.header,
        chunks: expected.to_vec(),
    };
    assert_eq!(rebuilt.to_bytes().expect("encodes"), packet_bytes);
}

// RFC 3720 B.4 lists each CRC as the bytes sent, least significant first:
// "CRC: aa 36 91 8a" for 32 zero bytes is the value 0x8a9136aa.

#[test]
fn crc32c_matches_rfc3720_vector_of_32_zero_bytes() {
    assert_eq!(crc32c::crc32c(&[0x00; 32]), 0x8a91_36aa);
}

#[test]
fn crc32c_matches_rfc3720_vector_of_32_ff_bytes() {
    assert_eq!(crc32c::crc32c(&[0xff; 32]), 0x62a8_ab43);
}

#[test]
fn crc32c_matches_rfc3720_vector_of_32_incrementing_bytes() {
    let bytes: Vec<u8> = (0..32).collect();
    assert_eq!(crc32c::crc32c(&bytes), 0x46dd_794e);
}

#[test]
fn crc32c_matches_rfc3720_vector_of_32_decrementing_bytes() {
    let bytes: Vec<u8> = (0..32).rev().collect();
    assert_eq!(crc32c::crc32c(&bytes), 0x113f_db5c);
}

#[test]
fn crc32c_matches_rfc3720_vector_of_an_iscsi_read_command_pdu() {
    #[rustfmt::skip]
    let pdu = [
        0x01, 0xc0, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00,
        0x14, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x04, 0x00,
        0x00, 0x00, 0x00, 0x14,
        0x00, 0x00, 0x00, 0x18,
        0x28, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00,
        0x02, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00,
    ];
    assert_eq!(crc32c::crc32c(&pdu), 0xd996_3a56);
}

#[test]
fn checksum_is_crc32c_with_a_zero_field_stored_little_endian() {
    let mut packet = sealed_packet(&[0x0b, 0x00, 0x00, 0x04]);
    let mut zeroed = packet.clone();
    zeroed[8..12].fill(0);
    let crc = crc32c::crc32c(&zeroed);
    assert_eq!(packet[8..12], crc.to_le_bytes());
    assert_ne!(
        crc.to_le_bytes(),
        crc.to_be_bytes(),
        "the test must tell them apart"
    );
    // Whatever the field holds, the checksum is computed as if it were zero.
    packet[8..12].copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
    assert_eq!(compute_checksum(&packet), Ok(crc));
    seal(&mut packet).expect("has a header");
    assert_eq!(packet[8..12], crc.to_le_bytes());
    assert_eq!(CommonHeader::decode(&packet).map(|h| h.checksum), Ok(crc));
}

#[test]
fn data_packet_matches_the_rfc_layout_with_its_checksum() {
    // A whole packet, checksum included: CRC32c 0x2c75d64c, computed once with
    // the crc32c crate and cross-checked with an independent bitwise CRC32c.
    #[rustfmt::skip]
    let packet_bytes = [
        // Common header (RFC 9260 3.1)
        0x13, 0x88,             // source port 5000
        0x13, 0x89,             // destination port 5001
        0xde, 0xad, 0xbe, 0xef, // verification tag
        0x4c, 0xd6, 0x75, 0x2c, // checksum 0x2c75d64c, least significant byte first
        // DATA (RFC 9260 3.3.1)
        0x00, 0x03, 0x00, 0x15, // type 0, flags B|E, length 21
        0x00, 0x00, 0x00, 0x2a, // TSN 42
        0x00, 0x01, 0x00, 0x07, // stream 1, SSN 7
        0x00, 0x00, 0x00, 0x33, // PPID 51 (WebRTC String)
        0x68, 0x65, 0x6c, 0x6c, // "hell"
        0x6f, 0x00, 0x00, 0x00, // "o", 3 bytes of padding
    ];
    let expected = Packet {
        header: CommonHeader {
            src_port: 5000,
            dst_port: 5001,
            verification_tag: 0xdead_beef,
            checksum: 0x2c75_d64c,
        },
        chunks: vec![Chunk::Data(Data {
            flags: DataFlags::UNFRAGMENTED,
            tsn: 42,
            stream_id: 1,
            ssn: 7,
            ppid: 51,
            payload: Cow::Borrowed(b"hello"),
        })],
    };
    assert_eq!(compute_checksum(&packet_bytes), Ok(0x2c75_d64c));
    assert_eq!(
        verify_checksum(&packet_bytes, ChecksumPolicy::Verify),
        Ok(())
    );
    assert_eq!(Packet::decode(&packet_bytes), Ok(expected.clone()));
    assert_eq!(expected.to_bytes(), Ok(packet_bytes.to_vec()));
}

#[test]
fn data_flags_match_the_rfc_bits() {
    #[rustfmt::skip]
    let bytes = [
        0x00, 0x0d, 0x00, 0x10, // type 0, flags I|U|E (0x08|0x04|0x01), length 16
        0xff, 0xff, 0xff, 0xff, // TSN 2^32 - 1
        0xff, 0xfe, 0x00, 0x00, // stream 65534, SSN 0
        0x00, 0x00, 0x00, 0x00, // PPID 0; no user data
    ];
    check_known_chunks(
        &bytes,
        &[Chunk::Data(Data {
            flags: DataFlags {
                immediate: true,
                unordered: true,
                beginning: false,
                ending: true,
            },
            tsn: u32::MAX,
            stream_id: 65534,
            ssn: 0,
            ppid: 0,
            payload: Cow::Borrowed(b""),
        })],
    );
}

#[test]
fn init_matches_the_rfc_layout() {
    #[rustfmt::skip]
    let bytes = [
        0x01, 0x00, 0x00, 0x41, // type 1, flags 0, length 65
        0x0a, 0x0b, 0x0c, 0x0d, // Initiate Tag
        0x00, 0x02, 0x00, 0x00, // a_rwnd 131072
        0x00, 0x0a, 0xff, 0xff, // 10 outbound streams, 65535 inbound streams
        0x00, 0x00, 0x03, 0xe8, // Initial TSN 1000
        0x00, 0x05, 0x00, 0x08, // IPv4 Address, length 8
        0xc0, 0x00, 0x02, 0x01, //   192.0.2.1
        0x00, 0x09, 0x00, 0x08, // Cookie Preservative, length 8
        0x00, 0x00, 0x27, 0x10, //   10000 ms
        0x00, 0x0c, 0x00, 0x08, // Supported Address Types, length 8
        0x00, 0x05, 0x00, 0x06, //   IPv4, IPv6
        0xc0, 0x00, 0x00, 0x04, // Forward-TSN-Supported, length 4
        0x80, 0x01, 0x00, 0x08, // Zero Checksum Acceptable, length 8
        0x00, 0x00, 0x00, 0x01, //   EDMID 1
        0x80, 0x08, 0x00, 0x09, // Supported Extensions, length 9
        0x40, 0xc2, 0x82, 0xc0, //   I-DATA, I-FORWARD-TSN, RE-CONFIG, FORWARD TSN
        0x81, 0x00, 0x00, 0x00, //   PKTDROP; 3 bytes of padding, not in the length
    ];
    check_known_chunks(
        &bytes,
        &[Chunk::Init(Init {
            initiate_tag: 0x0a0b_0c0d,
            a_rwnd: 131_072,
            outbound_streams: 10,
            inbound_streams: 65535,
            initial_tsn: 1000,
            params: vec![
                Param::Ipv4Address(Ipv4Addr::new(192, 0, 2, 1)),
                Param::CookiePreservative {
                    increment_ms: 10_000,
                },
                Param::SupportedAddressTypes(vec![5, 6]),
                Param::ForwardTsnSupported,
                Param::ZeroChecksumAcceptable { edmid: 1 },
                Param::SupportedExtensions(vec![0x40, 0xc2, 0x82, 0xc0, 0x81]),
            ],
        })],
    );
}

#[test]
fn init_ack_with_a_state_cookie_matches_the_rfc_layout() {
    #[rustfmt::skip]
    let bytes = [
        0x02, 0x00, 0x00, 0x3f, // type 2, flags 0, length 63
        0x11, 0x22, 0x33, 0x44, // Initiate Tag
        0x00, 0x01, 0x00, 0x00, // a_rwnd 65536
        0xff, 0xff, 0x00, 0x0a, // 65535 outbound streams, 10 inbound streams
        0x7f, 0xff, 0xff, 0xff, // Initial TSN 2^31 - 1
        0x00, 0x06, 0x00, 0x14, // IPv6 Address, length 20
        0x20, 0x01, 0x0d, 0xb8, //   2001:db8::1
        0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x01,
        0x00, 0x08, 0x00, 0x08, // Unrecognized Parameter, length 8
        0x80, 0x0a, 0x00, 0x04, //   the INIT's parameter: type 0x800a, length 4
        0x00, 0x07, 0x00, 0x0f, // State Cookie, length 15
        0x43, 0x4f, 0x4f, 0x4b, //   "COOK"
        0x49, 0x45, 0x2d, 0x31, //   "IE-1"
        0x32, 0x33, 0x34, 0x00, //   "234"; 1 byte of padding, not in the length
    ];
    let expected = InitAck {
        initiate_tag: 0x1122_3344,
        a_rwnd: 65536,
        outbound_streams: 65535,
        inbound_streams: 10,
        initial_tsn: 0x7fff_ffff,
        params: vec![
            Param::Ipv6Address(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1)),
            Param::UnrecognizedParameter(Cow::Borrowed(&[0x80, 0x0a, 0x00, 0x04])),
            Param::StateCookie(Cow::Borrowed(b"COOKIE-1234")),
        ],
    };
    assert_eq!(expected.state_cookie(), Some(&b"COOKIE-1234"[..]));
    check_known_chunks(&bytes, &[Chunk::InitAck(expected)]);
}

#[test]
fn sack_with_gap_blocks_and_duplicates_matches_the_rfc_layout() {
    #[rustfmt::skip]
    let bytes = [
        0x03, 0x00, 0x00, 0x20, // type 3, flags 0, length 32
        0x00, 0x00, 0x01, 0x00, // Cumulative TSN Ack 256
        0x00, 0x00, 0xff, 0x00, // a_rwnd 65280
        0x00, 0x02, 0x00, 0x02, // 2 gap ack blocks, 2 duplicate TSNs
        0x00, 0x02, 0x00, 0x03, // gap block 1: TSNs 258 to 259
        0x00, 0x05, 0x00, 0x05, // gap block 2: TSN 261
        0x00, 0x00, 0x00, 0xf8, // duplicate TSN 248
        0x00, 0x00, 0x00, 0xfa, // duplicate TSN 250
    ];
    check_known_chunks(
        &bytes,
        &[Chunk::Sack(Sack {
            cum_tsn_ack: 256,
            a_rwnd: 65280,
            gap_blocks: vec![GapBlock { start: 2, end: 3 }, GapBlock { start: 5, end: 5 }],
            dup_tsns: vec![248, 250],
        })],
    );
}

#[test]
fn heartbeat_and_heartbeat_ack_match_the_rfc_layout() {
    #[rustfmt::skip]
    let bytes = [
        0x04, 0x00, 0x00, 0x15, // HEARTBEAT: type 4, flags 0, length 21
        0x00, 0x01, 0x00, 0x11, // Heartbeat Info, length 17
        0x70, 0x61, 0x74, 0x68, //   "path"
        0x2d, 0x30, 0x20, 0x74, //   "-0 t"
        0x3d, 0x31, 0x32, 0x33, //   "=123"
        0x34, 0x00, 0x00, 0x00, //   "4"; 3 bytes of padding, not in the length
        0x05, 0x00, 0x00, 0x15, // HEARTBEAT ACK: type 5, flags 0, length 21
        0x00, 0x01, 0x00, 0x11, // the same Heartbeat Info, echoed
        0x70, 0x61, 0x74, 0x68,
        0x2d, 0x30, 0x20, 0x74,
        0x3d, 0x31, 0x32, 0x33,
        0x34, 0x00, 0x00, 0x00,
    ];
    let heartbeat = Heartbeat::new(&b"path-0 t=1234"[..]);
    let ack = HeartbeatAck::new(&b"path-0 t=1234"[..]);
    assert_eq!(ack.info(), heartbeat.info());
    check_known_chunks(&bytes, &[heartbeat.into(), ack.into()]);
}

#[test]
fn abort_with_causes_and_the_t_bit_matches_the_rfc_layout() {
    #[rustfmt::skip]
    let bytes = [
        0x06, 0x01, 0x00, 0x13, // type 6, flags T, length 19
        0x00, 0x01, 0x00, 0x08, // Invalid Stream Identifier, length 8
        0x00, 0x09, 0x00, 0x00, //   stream 9, reserved
        0x00, 0x0c, 0x00, 0x07, // User-Initiated Abort, length 7
        0x62, 0x79, 0x65, 0x00, //   "bye"; 1 byte of padding, not in the length
    ];
    check_known_chunks(
        &bytes,
        &[Chunk::Abort(Abort {
            reflected_tag: true,
            causes: vec![
                ErrorCause::InvalidStreamIdentifier { stream_id: 9 },
                ErrorCause::UserInitiatedAbort(Cow::Borrowed(b"bye")),
            ],
        })],
    );
}

#[test]
fn shutdown_family_matches_the_rfc_layout() {
    #[rustfmt::skip]
    let bytes = [
        0x07, 0x00, 0x00, 0x08, // SHUTDOWN: type 7, flags 0, length 8
        0x00, 0x00, 0x10, 0x00, //   Cumulative TSN Ack 4096
        0x08, 0x00, 0x00, 0x04, // SHUTDOWN ACK: type 8, flags 0, length 4
    ];
    check_known_chunks(
        &bytes,
        &[
            Chunk::Shutdown(Shutdown { cum_tsn_ack: 4096 }),
            Chunk::ShutdownAck(ShutdownAck),
        ],
    );
}

#[test]
fn shutdown_complete_matches_the_rfc_layout() {
    // Alone in its packet (RFC 9260 6.10): one chunk per check.
    check_known_chunks(
        &[0x0e, 0x00, 0x00, 0x04], // type 14, flags 0, length 4
        &[Chunk::ShutdownComplete(ShutdownComplete {
            reflected_tag: false,
        })],
    );
    check_known_chunks(
        &[0x0e, 0x01, 0x00, 0x04], // type 14, flags T, length 4
        &[Chunk::ShutdownComplete(ShutdownComplete {
            reflected_tag: true,
        })],
    );
}

#[test]
fn error_chunk_matches_the_rfc_layout() {
    #[rustfmt::skip]
    let bytes = [
        0x09, 0x00, 0x00, 0x2a, // type 9, flags 0, length 42
        0x00, 0x03, 0x00, 0x08, // Stale Cookie, length 8
        0x00, 0x16, 0xe3, 0x60, //   staleness 1500000 µs
        0x00, 0x06, 0x00, 0x0a, // Unrecognized Chunk Type, length 10
        0xc7, 0x00, 0x00, 0x06, //   the chunk: type 0xc7, flags 0, length 6,
        0xab, 0xcd, 0x00, 0x00, //   value ab cd; 2 bytes of padding
        0x00, 0x02, 0x00, 0x0c, // Missing Mandatory Parameter, length 12
        0x00, 0x00, 0x00, 0x02, //   2 missing:
        0x00, 0x07, 0x00, 0x09, //   State Cookie, Cookie Preservative
        0x01, 0x05, 0x00, 0x06, // Unsupported HMAC Identifier, length 6
        0x00, 0x03, 0x00, 0x00, //   HMAC 3; 2 bytes of padding, not in the length
    ];
    check_known_chunks(
        &bytes,
        &[Chunk::Error(OperationError {
            causes: vec![
                ErrorCause::StaleCookie {
                    staleness_us: 1_500_000,
                },
                ErrorCause::UnrecognizedChunkType(Cow::Borrowed(&[0xc7, 0, 0, 6, 0xab, 0xcd])),
                ErrorCause::MissingMandatoryParameter { types: vec![7, 9] },
                ErrorCause::UnsupportedHmacIdentifier { hmac_id: 3 },
            ],
        })],
    );
}

#[test]
fn cookie_echo_and_cookie_ack_match_the_rfc_layout() {
    #[rustfmt::skip]
    let bytes = [
        0x0a, 0x00, 0x00, 0x0f, // COOKIE ECHO: type 10, flags 0, length 15
        0x43, 0x4f, 0x4f, 0x4b, //   "COOK"
        0x49, 0x45, 0x2d, 0x31, //   "IE-1"
        0x32, 0x33, 0x34, 0x00, //   "234"; 1 byte of padding
        0x0b, 0x00, 0x00, 0x04, // COOKIE ACK: type 11, flags 0, length 4
    ];
    check_known_chunks(
        &bytes,
        &[
            Chunk::CookieEcho(CookieEcho {
                cookie: Cow::Borrowed(b"COOKIE-1234"),
            }),
            Chunk::CookieAck(CookieAck),
        ],
    );
}

#[test]
fn forward_tsn_matches_the_rfc3758_layout() {
    #[rustfmt::skip]
    let bytes = [
        0xc0, 0x00, 0x00, 0x10, // type 192, flags 0, length 16
        0x00, 0x00, 0x01, 0x2c, // New Cumulative TSN 300
        0x00, 0x01, 0x00, 0x05, // stream 1, SSN 5
        0x00, 0x03, 0xff, 0xff, // stream 3, SSN 65535
    ];
    check_known_chunks(
        &bytes,
        &[Chunk::ForwardTsn(ForwardTsn {
            new_cum_tsn: 300,
            streams: vec![
                ForwardTsnStream {
                    stream_id: 1,
                    ssn: 5,
                },
                ForwardTsnStream {
                    stream_id: 3,
                    ssn: 65535,
                },
            ],
        })],
    );
}

#[test]
fn idata_fragments_match_the_rfc8260_layout() {
    #[rustfmt::skip]
    let bytes = [
        0x40, 0x06, 0x00, 0x17, // I-DATA: type 64, flags U|B, length 23
        0x00, 0x00, 0x00, 0x64, //   TSN 100
        0x00, 0x04, 0x00, 0x00, //   stream 4, reserved
        0x00, 0x00, 0x00, 0x09, //   MID 9
        0x00, 0x00, 0x00, 0x35, //   PPID 53 (B set)
        0x61, 0x62, 0x63, 0x00, //   "abc"; 1 byte of padding
        0x40, 0x05, 0x00, 0x16, // I-DATA: type 64, flags U|E, length 22
        0x00, 0x00, 0x00, 0x65, //   TSN 101
        0x00, 0x04, 0x00, 0x00, //   stream 4, reserved
        0x00, 0x00, 0x00, 0x09, //   MID 9
        0x00, 0x00, 0x00, 0x01, //   FSN 1 (B clear)
        0x64, 0x65, 0x00, 0x00, //   "de"; 2 bytes of padding
    ];
    let unordered = |beginning, ending| DataFlags {
        immediate: false,
        unordered: true,
        beginning,
        ending,
    };
    let first = IData {
        flags: unordered(true, false),
        tsn: 100,
        stream_id: 4,
        mid: 9,
        ppid_or_fsn: PpidOrFsn::Ppid(53),
        payload: Cow::Borrowed(b"abc"),
    };
    let last = IData {
        flags: unordered(false, true),
        tsn: 101,
        stream_id: 4,
        mid: 9,
        ppid_or_fsn: PpidOrFsn::Fsn(1),
        payload: Cow::Borrowed(b"de"),
    };
    assert_eq!((first.fsn(), last.fsn()), (0, 1));
    check_known_chunks(&bytes, &[first.into(), last.into()]);
}

#[test]
fn iforward_tsn_matches_the_rfc8260_layout() {
    #[rustfmt::skip]
    let bytes = [
        0xc2, 0x00, 0x00, 0x18, // type 194, flags 0, length 24
        0x00, 0x00, 0x00, 0x66, // New Cumulative TSN 102
        0x00, 0x04, 0x00, 0x01, // stream 4, reserved, U set
        0x00, 0x00, 0x00, 0x09, //   MID 9
        0x00, 0x05, 0x00, 0x00, // stream 5, reserved, U clear
        0x00, 0x00, 0x00, 0x02, //   MID 2
    ];
    check_known_chunks(
        &bytes,
        &[Chunk::IForwardTsn(IForwardTsn {
            new_cum_tsn: 102,
            streams: vec![
                IForwardTsnStream {
                    stream_id: 4,
                    unordered: true,
                    mid: 9,
                },
                IForwardTsnStream {
                    stream_id: 5,
                    unordered: false,
                    mid: 2,
                },
            ],
        })],
    );
}

#[test]
fn reconfig_requests_and_response_match_the_rfc6525_layout() {
    #[rustfmt::skip]
    let bytes = [
        0x82, 0x00, 0x00, 0x26, // RE-CONFIG: type 130, flags 0, length 38
        0x00, 0x0d, 0x00, 0x16, //   Outgoing SSN Reset Request, length 22
        0x00, 0x00, 0x00, 0x01, //     request sequence 1
        0x00, 0x00, 0x00, 0x00, //     response sequence 0
        0x00, 0x00, 0x00, 0x63, //     sender's last assigned TSN 99
        0x00, 0x01, 0x00, 0x02, //     streams 1, 2
        0x00, 0x03, 0x00, 0x00, //     stream 3; 2 bytes of padding
        0x00, 0x0e, 0x00, 0x0a, //   Incoming SSN Reset Request, length 10
        0x00, 0x00, 0x00, 0x02, //     request sequence 2
        0x00, 0x04, 0x00, 0x00, //     stream 4; 2 bytes of padding, not in the length
        0x82, 0x00, 0x00, 0x18, // RE-CONFIG: type 130, flags 0, length 24
        0x00, 0x10, 0x00, 0x14, //   Re-configuration Response, length 20
        0x00, 0x00, 0x00, 0x01, //     response sequence 1
        0x00, 0x00, 0x00, 0x01, //     result 1: Success - Performed
        0x00, 0x00, 0x10, 0x00, //     sender's next TSN 4096
        0x00, 0x00, 0x20, 0x00, //     receiver's next TSN 8192
        0x82, 0x00, 0x00, 0x10, // RE-CONFIG: type 130, flags 0, length 16
        0x00, 0x11, 0x00, 0x0c, //   Add Outgoing Streams Request, length 12
        0x00, 0x00, 0x00, 0x03, //     request sequence 3
        0x00, 0x10, 0x00, 0x00, //     16 new streams, reserved
    ];
    check_known_chunks(
        &bytes,
        &[
            Chunk::ReConfig(ReConfig {
                params: vec![
                    ReconfigParam::OutgoingSsnReset {
                        request_seq: 1,
                        response_seq: 0,
                        last_tsn: 99,
                        streams: vec![1, 2, 3],
                    },
                    ReconfigParam::IncomingSsnReset {
                        request_seq: 2,
                        streams: vec![4],
                    },
                ],
            }),
            Chunk::ReConfig(ReConfig {
                params: vec![ReconfigParam::Response {
                    response_seq: 1,
                    result: ReconfigResult::SuccessPerformed,
                    next_tsns: Some((4096, 8192)),
                }],
            }),
            Chunk::ReConfig(ReConfig {
                params: vec![ReconfigParam::AddOutgoingStreams {
                    request_seq: 3,
                    new_streams: 16,
                }],
            }),
        ],
    );
}

#[test]
fn pktdrop_matches_the_draft_layout() {
    #[rustfmt::skip]
    let bytes = [
        0x81, 0x02, 0x00, 0x20, // type 0x81, flags B (bad checksum), length 32
        0x00, 0x01, 0x00, 0x00, // Link Bandwidth 65536
        0x00, 0x00, 0x04, 0x00, // Queue Size 1024
        0x00, 0x00, 0x00, 0x00, // Truncated Length 0, reserved
        0x13, 0x88, 0x13, 0x89, // the dropped packet: ports 5000 -> 5001,
        0x00, 0x00, 0x00, 0x01, //   tag 1,
        0x12, 0x34, 0x56, 0x78, //   a bad checksum,
        0x0b, 0x00, 0x00, 0x04, //   COOKIE ACK
    ];
    check_known_chunks(
        &bytes,
        &[Chunk::PktDrop(PktDrop {
            flags: PktDropFlags {
                middlebox: false,
                bad_checksum: true,
                truncated: false,
            },
            bandwidth: 65536,
            queue_size: 1024,
            truncated_len: 0,
            dropped: Cow::Borrowed(&bytes[16..]),
        })],
    );
}
