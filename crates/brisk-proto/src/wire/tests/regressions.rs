//! Hand-made malformed and borderline input, each case with the exact error the
//! decoder must return (or the value it must accept).

use std::borrow::Cow;

use super::{TEST_HEADER, chunk_bytes, sealed_packet, tlv_bytes};
use crate::wire::chunk::{
    Chunk, CookieAck, Data, DataFlags, Heartbeat, IData, Init, ReconfigParam, UnknownChunk,
    idata::PpidOrFsn, types,
};
use crate::wire::{
    ChecksumPolicy, ErrorCause, MAX_CHUNKS_PER_PACKET, MAX_TLVS_PER_CHUNK, Packet, Param, Tlv,
    UnrecognizedAction, WireError, compute_checksum, seal,
};

/// The 16 fixed bytes of an INIT or INIT ACK value: tag 1, a_rwnd 0x10000,
/// 10 outbound and 10 inbound streams, initial TSN 100.
const INIT_FIXED: [u8; 16] = [0, 0, 0, 1, 0, 1, 0, 0, 0, 10, 0, 10, 0, 0, 0, 100];

/// An INIT chunk whose value is [`INIT_FIXED`] followed by `params`, with a
/// Chunk Length of 20 + `params.len()`, padded.
fn init_with_params(params: &[u8]) -> Vec<u8> {
    let mut value = INIT_FIXED.to_vec();
    value.extend_from_slice(params);
    chunk_bytes(types::INIT, 0, &value)
}

/// Decodes a sealed packet holding `chunks`; on success, the number of chunks.
fn decode(chunks: &[u8]) -> Result<usize, WireError> {
    Packet::decode(&sealed_packet(chunks)).map(|p| p.chunks.len())
}

fn cookie_ack() -> Vec<u8> {
    chunk_bytes(types::COOKIE_ACK, 0, &[])
}

fn data_chunk(payload: &[u8]) -> Vec<u8> {
    let mut value = vec![0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0];
    value.extend_from_slice(payload);
    chunk_bytes(types::DATA, DataFlags::UNFRAGMENTED.bits(), &value)
}

#[test]
fn packets_shorter_than_the_common_header_are_rejected() {
    for len in 0..12 {
        let bytes = vec![0u8; len];
        for policy in [
            ChecksumPolicy::Verify,
            ChecksumPolicy::AcceptZero,
            ChecksumPolicy::Ignore,
        ] {
            assert_eq!(
                Packet::decode_with(&bytes, policy),
                Err(WireError::ShortPacket { len })
            );
        }
    }
}

#[test]
fn header_only_packet_is_rejected_for_carrying_no_chunks() {
    assert_eq!(decode(&[]), Err(WireError::NoChunks));
}

#[test]
fn chunk_length_shorter_than_the_chunk_header_is_rejected() {
    for len in [0u8, 1, 3] {
        let err = decode(&[types::COOKIE_ACK, 0, 0, len]).unwrap_err();
        assert!(
            matches!(err, WireError::InvalidLength { what: "COOKIE ACK", len: l, .. } if l == usize::from(len)),
            "length {len}: {err:?}"
        );
    }
}

#[test]
fn chunk_length_beyond_the_packet_is_truncated() {
    // A DATA chunk claiming 100 bytes in a 20-byte chunk area.
    let mut chunk = data_chunk(b"abcd");
    chunk[2..4].copy_from_slice(&100u16.to_be_bytes());
    assert_eq!(
        decode(&chunk),
        Err(WireError::Truncated {
            what: "DATA",
            needed: 100,
            available: 20
        })
    );
}

#[test]
fn last_chunk_without_its_padding_is_rejected() {
    // COOKIE ACK, then DATA of length 17 with none of its 3 padding bytes.
    let mut chunks = cookie_ack();
    let data = data_chunk(b"x");
    assert_eq!(data.len(), 20);
    chunks.extend_from_slice(&data[..17]);
    assert_eq!(
        decode(&chunks),
        Err(WireError::MissingPadding {
            what: "DATA",
            offset: 4
        })
    );
    // Part of the padding is not enough either.
    let mut chunks = cookie_ack();
    chunks.extend_from_slice(&data[..19]);
    assert_eq!(
        decode(&chunks),
        Err(WireError::MissingPadding {
            what: "DATA",
            offset: 4
        })
    );
}

#[test]
fn stray_bytes_after_the_last_chunk_are_rejected() {
    for count in 1..=3 {
        let mut chunks = data_chunk(b"abcd");
        chunks.extend(std::iter::repeat_n(0, count));
        assert_eq!(decode(&chunks), Err(WireError::TrailingBytes { count }));
    }
}

#[test]
fn more_than_1024_chunks_in_a_packet_are_rejected() {
    let many = sealed_packet(&cookie_ack().repeat(MAX_CHUNKS_PER_PACKET));
    let packet = Packet::decode(&many).expect("1024 chunks are allowed");
    assert_eq!(packet.chunks.len(), MAX_CHUNKS_PER_PACKET);
    assert!(
        packet
            .chunks
            .iter()
            .all(|c| *c == Chunk::CookieAck(CookieAck))
    );

    let too_many = cookie_ack().repeat(MAX_CHUNKS_PER_PACKET + 1);
    assert_eq!(
        decode(&too_many),
        Err(WireError::TooManyChunks {
            limit: MAX_CHUNKS_PER_PACKET
        })
    );
}

#[test]
fn init_bundled_with_data_is_rejected() {
    let init = init_with_params(&[]);
    let data = data_chunk(b"hello");
    for chunks in [
        [&init[..], &data[..]].concat(),
        [&data[..], &init[..]].concat(),
    ] {
        assert_eq!(
            decode(&chunks),
            Err(WireError::MustBeAlone {
                what: "INIT",
                count: 2
            })
        );
    }
}

#[test]
fn init_ack_and_shutdown_complete_bundled_with_others_are_rejected() {
    let mut init_ack = init_with_params(&tlv_bytes(Param::STATE_COOKIE, b"cookie"));
    init_ack[0] = types::INIT_ACK;
    let complete = chunk_bytes(types::SHUTDOWN_COMPLETE, 0, &[]);
    assert_eq!(
        decode(&[&init_ack[..], &cookie_ack()[..]].concat()),
        Err(WireError::MustBeAlone {
            what: "INIT ACK",
            count: 2
        })
    );
    assert_eq!(
        decode(&complete.repeat(3)),
        Err(WireError::MustBeAlone {
            what: "SHUTDOWN COMPLETE",
            count: 3
        })
    );
    // Alone, each is fine.
    assert_eq!(decode(&init_ack), Ok(1));
    assert_eq!(decode(&complete), Ok(1));
}

#[test]
fn init_parameter_shorter_than_its_header_is_rejected() {
    for len in 0u16..4 {
        let mut param = vec![0, 5]; // IPv4 Address
        param.extend_from_slice(&len.to_be_bytes());
        let err = decode(&init_with_params(&param)).unwrap_err();
        assert!(
            matches!(err, WireError::InvalidLength { what: "INIT", len: l, .. } if l == usize::from(len)),
            "parameter length {len}: {err:?}"
        );
    }
}

#[test]
fn init_parameter_running_past_the_chunk_end_is_truncated() {
    // Supported Address Types claiming 12 bytes where the chunk has 8 left.
    let params = [0, 12, 0, 12, 0, 5, 0, 6];
    assert_eq!(
        decode(&init_with_params(&params)),
        Err(WireError::Truncated {
            what: "INIT",
            needed: 12,
            available: 8
        })
    );
}

#[test]
fn init_with_257_parameters_is_rejected() {
    let one = tlv_bytes(Param::FORWARD_TSN_SUPPORTED, &[]);
    let bytes = sealed_packet(&init_with_params(&one.repeat(MAX_TLVS_PER_CHUNK)));
    let packet = Packet::decode(&bytes).expect("256 parameters are allowed");
    let Chunk::Init(init) = &packet.chunks[0] else {
        panic!("expected INIT, got {:?}", packet.chunks[0]);
    };
    assert_eq!(init.params.len(), MAX_TLVS_PER_CHUNK);

    assert_eq!(
        decode(&init_with_params(&one.repeat(MAX_TLVS_PER_CHUNK + 1))),
        Err(WireError::TooManyTlvs {
            what: "INIT",
            limit: MAX_TLVS_PER_CHUNK
        })
    );
}

/// A SACK value: cum TSN 10, a_rwnd 1000, the given counts, then `blocks`.
fn sack_value(gaps: u16, dups: u16, blocks: &[u8]) -> Vec<u8> {
    let mut v = vec![0, 0, 0, 10, 0, 0, 0x03, 0xe8];
    v.extend_from_slice(&gaps.to_be_bytes());
    v.extend_from_slice(&dups.to_be_bytes());
    v.extend_from_slice(blocks);
    v
}

#[test]
fn sack_with_lying_gap_count_is_rejected() {
    // One gap block present, two announced.
    let chunk = chunk_bytes(types::SACK, 0, &sack_value(2, 0, &[0, 2, 0, 3]));
    assert!(matches!(
        decode(&chunk),
        Err(WireError::InvalidLength {
            what: "SACK",
            len: 20,
            ..
        })
    ));
}

#[test]
fn sack_with_lying_duplicate_count_is_rejected() {
    // One gap block and one duplicate present; no duplicates announced.
    let chunk = chunk_bytes(types::SACK, 0, &sack_value(1, 0, &[0, 2, 0, 3, 0, 0, 0, 9]));
    assert!(matches!(
        decode(&chunk),
        Err(WireError::InvalidLength {
            what: "SACK",
            len: 24,
            ..
        })
    ));
    // And the truthful one decodes.
    let chunk = chunk_bytes(types::SACK, 0, &sack_value(1, 1, &[0, 2, 0, 3, 0, 0, 0, 9]));
    assert_eq!(decode(&chunk), Ok(1));
}

#[test]
fn sack_shorter_than_16_bytes_is_truncated() {
    let chunk = chunk_bytes(types::SACK, 0, &sack_value(0, 0, &[])[..10]);
    assert!(matches!(
        decode(&chunk),
        Err(WireError::Truncated { what: "SACK", .. })
    ));
}

#[test]
fn data_shorter_than_16_bytes_is_rejected() {
    for len in 4..16 {
        let chunk = chunk_bytes(types::DATA, 3, &[0; 12][..len - 4]);
        let err = decode(&chunk).unwrap_err();
        assert!(
            matches!(err, WireError::InvalidLength { what: "DATA", len: l, .. } if l == len),
            "length {len}: {err:?}"
        );
    }
    // 16 bytes is a DATA chunk with no user data: the codec accepts it, the
    // association answers with a No User Data cause (RFC 9260 6.2).
    let bytes = sealed_packet(&chunk_bytes(types::DATA, 3, &[0; 12]));
    let packet = Packet::decode(&bytes).expect("decodes");
    assert!(matches!(&packet.chunks[0], Chunk::Data(d) if d.payload.is_empty()));
}

#[test]
fn shutdown_of_length_12_is_rejected() {
    let chunk = chunk_bytes(types::SHUTDOWN, 0, &[0, 0, 0, 7, 0, 0, 0, 0]);
    assert!(matches!(
        decode(&chunk),
        Err(WireError::InvalidLength {
            what: "SHUTDOWN",
            len: 12,
            ..
        })
    ));
    let short = chunk_bytes(types::SHUTDOWN, 0, &[]);
    assert!(matches!(
        decode(&short),
        Err(WireError::Truncated {
            what: "SHUTDOWN",
            ..
        })
    ));
}

#[test]
fn cookie_ack_with_a_value_is_rejected() {
    for (typ, what) in [
        (types::COOKIE_ACK, "COOKIE ACK"),
        (types::SHUTDOWN_ACK, "SHUTDOWN ACK"),
        (types::SHUTDOWN_COMPLETE, "SHUTDOWN COMPLETE"),
    ] {
        let chunk = chunk_bytes(typ, 0, &[1, 2, 3, 4]);
        let err = decode(&chunk).unwrap_err();
        assert!(
            matches!(err, WireError::InvalidLength { what: w, len: 8, .. } if w == what),
            "{what}: {err:?}"
        );
    }
}

#[test]
fn heartbeat_without_heartbeat_info_is_rejected() {
    let other_param = tlv_bytes(Param::IPV4_ADDRESS, &[192, 0, 2, 1]);
    for (typ, what) in [
        (types::HEARTBEAT, "HEARTBEAT"),
        (types::HEARTBEAT_ACK, "HEARTBEAT ACK"),
    ] {
        for value in [&[][..], &other_param[..]] {
            let err = decode(&chunk_bytes(typ, 0, value)).unwrap_err();
            assert!(
                matches!(err, WireError::MissingParameter { what: w, .. } if w == what),
                "{what}: {err:?}"
            );
        }
    }
}

#[test]
fn reconfig_with_zero_or_three_parameters_is_rejected() {
    let request = tlv_bytes(ReconfigParam::SSN_TSN_RESET, &[0, 0, 0, 1]);
    for count in [0usize, 3] {
        let chunk = chunk_bytes(types::RECONFIG, 0, &request.repeat(count));
        let err = decode(&chunk).unwrap_err();
        assert!(
            matches!(err, WireError::InvalidValue { what: "RE-CONFIG", value, .. } if value == count as u64),
            "{count} parameters: {err:?}"
        );
    }
    for count in [1, 2] {
        let chunk = chunk_bytes(types::RECONFIG, 0, &request.repeat(count));
        assert_eq!(decode(&chunk), Ok(1), "{count} parameters are allowed");
    }
}

#[test]
fn reconfig_response_of_length_16_is_rejected() {
    // Response sequence, result, and half of the optional next-TSN pair.
    let response = tlv_bytes(
        ReconfigParam::RESPONSE,
        &[0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 9],
    );
    assert_eq!(response.len(), 16);
    let err = decode(&chunk_bytes(types::RECONFIG, 0, &response)).unwrap_err();
    assert!(
        matches!(
            err,
            WireError::InvalidLength {
                what: "Re-configuration Response parameter",
                len: 16,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn missing_mandatory_parameter_cause_with_lying_count_is_rejected() {
    // Count 3, but only two parameter types follow.
    let cause = tlv_bytes(
        ErrorCause::MISSING_MANDATORY_PARAMETER,
        &[0, 0, 0, 3, 0, 7, 0, 9],
    );
    let err = decode(&chunk_bytes(types::ABORT, 0, &cause)).unwrap_err();
    assert!(
        matches!(
            err,
            WireError::InvalidValue {
                what: "Missing Mandatory Parameter cause",
                value: 3,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        ErrorCause::decode(
            ErrorCause::MISSING_MANDATORY_PARAMETER,
            &[0, 0, 0, 2, 0, 7, 0, 9]
        ),
        Ok(ErrorCause::MissingMandatoryParameter { types: vec![7, 9] })
    );
}

#[test]
fn ipv4_address_parameter_of_length_12_is_rejected() {
    let param = tlv_bytes(Param::IPV4_ADDRESS, &[192, 0, 2, 1, 0, 0, 0, 0]);
    let err = decode(&init_with_params(&param)).unwrap_err();
    assert!(
        matches!(
            err,
            WireError::InvalidLength {
                what: "IPv4 Address parameter",
                len: 12,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn bad_checksum_reports_the_received_and_the_computed_values() {
    let mut bytes = sealed_packet(&cookie_ack());
    let good = compute_checksum(&bytes).expect("has a header");
    // The checksum is CRC32c over the packet with a zero checksum field.
    let mut zeroed = bytes.clone();
    zeroed[8..12].fill(0);
    assert_eq!(good, crc32c::crc32c(&zeroed));

    bytes[8] ^= 0x01;
    assert_eq!(
        Packet::decode(&bytes),
        Err(WireError::BadChecksum {
            received: good ^ 0x01,
            computed: good
        })
    );
    // A flipped bit elsewhere: the computed value changes, the received one stays.
    let mut bytes = sealed_packet(&cookie_ack());
    bytes[13] ^= 0x80;
    let computed = compute_checksum(&bytes).expect("has a header");
    assert_ne!(computed, good);
    assert_eq!(
        Packet::decode(&bytes),
        Err(WireError::BadChecksum {
            received: good,
            computed
        })
    );
    assert!(Packet::decode_with(&bytes, ChecksumPolicy::Ignore).is_ok());
}

#[test]
fn zero_checksum_is_accepted_only_under_accept_zero() {
    let mut bytes = TEST_HEADER.to_vec();
    bytes.extend_from_slice(&cookie_ack());
    let computed = compute_checksum(&bytes).expect("has a header");
    assert_ne!(computed, 0);
    assert_eq!(
        Packet::decode(&bytes),
        Err(WireError::BadChecksum {
            received: 0,
            computed
        })
    );
    let packet = Packet::decode_with(&bytes, ChecksumPolicy::AcceptZero).expect("RFC 9653");
    assert_eq!(packet.chunks, vec![Chunk::CookieAck(CookieAck)]);
    assert_eq!(packet.header.checksum, 0);

    // AcceptZero still rejects a wrong nonzero checksum, and accepts a right one.
    bytes[8..12].copy_from_slice(&1u32.to_le_bytes());
    assert_eq!(
        Packet::decode_with(&bytes, ChecksumPolicy::AcceptZero),
        Err(WireError::BadChecksum {
            received: 1,
            computed
        })
    );
    seal(&mut bytes).expect("has a header");
    assert!(Packet::decode_with(&bytes, ChecksumPolicy::AcceptZero).is_ok());
}

#[test]
fn init_whose_length_counts_the_final_parameter_padding_still_decodes() {
    // RFC 9260 3.2: the receiver accepts a chunk whether or not the final
    // padding is counted in the Chunk Length. Here the last parameter (Supported
    // Extensions, length 7) has its padding byte counted: Chunk Length 32.
    #[rustfmt::skip]
    let chunk = [
        0x01, 0x00, 0x00, 0x20, // INIT, flags 0, Chunk Length 32 (padding included)
        0x00, 0x00, 0x00, 0x01, // Initiate Tag 1
        0x00, 0x01, 0x00, 0x00, // a_rwnd 65536
        0x00, 0x0a, 0x00, 0x0a, // 10 outbound, 10 inbound streams
        0x00, 0x00, 0x00, 0x64, // Initial TSN 100
        0x80, 0x08, 0x00, 0x07, // Supported Extensions, length 7
        0x40, 0xc0, 0x82, 0x00, // I-DATA, FORWARD TSN, RE-CONFIG; padding
        0xc0, 0x00, 0x00, 0x04, // Forward-TSN-Supported
    ];
    let mut chunks = chunk.to_vec();
    // The same INIT with the last parameter first, so that the padded one is last.
    chunks.truncate(20);
    chunks.extend_from_slice(&chunk[28..32]);
    chunks.extend_from_slice(&chunk[20..28]);
    assert_eq!(chunks.len(), 32);

    let expected = Init {
        initiate_tag: 1,
        a_rwnd: 0x10000,
        outbound_streams: 10,
        inbound_streams: 10,
        initial_tsn: 100,
        params: vec![
            Param::ForwardTsnSupported,
            Param::SupportedExtensions(vec![0x40, 0xc0, 0x82]),
        ],
    };
    let bytes = sealed_packet(&chunks);
    let packet = Packet::decode(&bytes).expect("padding counted in the length is accepted");
    assert_eq!(packet.chunks, vec![Chunk::Init(expected.clone())]);

    // We send the canonical form, final padding not counted: Chunk Length 31.
    let mut canonical = Vec::new();
    Chunk::Init(expected)
        .encode(&mut canonical)
        .expect("encodes");
    assert_eq!(canonical[2..4], [0x00, 0x1f]);
    assert_eq!(canonical[4..], chunks[4..]);
}

#[test]
fn heartbeat_and_abort_whose_length_counts_the_final_padding_still_decode() {
    // HEARTBEAT with a 5-byte Heartbeat Info (length 9), Chunk Length 16.
    let mut hb = chunk_bytes(
        types::HEARTBEAT,
        0,
        &tlv_bytes(Param::HEARTBEAT_INFO, b"12345"),
    );
    assert_eq!(hb[2..4], [0, 16]);
    assert_eq!(hb.len(), 16);
    let expected = vec![Chunk::Heartbeat(Heartbeat::new(&b"12345"[..]))];
    let bytes = sealed_packet(&hb);
    assert_eq!(
        Packet::decode(&bytes).map(|p| p.chunks),
        Ok(expected.clone())
    );
    // The canonical length, 13, decodes to the same.
    hb[3] = 13;
    let bytes = sealed_packet(&hb);
    assert_eq!(Packet::decode(&bytes).map(|p| p.chunks), Ok(expected));

    // ABORT with a 3-byte User-Initiated Abort reason (length 7), Chunk Length 12.
    let abort = chunk_bytes(
        types::ABORT,
        1,
        &tlv_bytes(ErrorCause::USER_INITIATED_ABORT, b"bye"),
    );
    assert_eq!(abort[2..4], [0, 12]);
    let bytes = sealed_packet(&abort);
    let packet = Packet::decode(&bytes).expect("decodes");
    let Chunk::Abort(a) = &packet.chunks[0] else {
        panic!("expected ABORT, got {:?}", packet.chunks[0]);
    };
    assert!(a.reflected_tag);
    assert_eq!(
        a.causes,
        vec![ErrorCause::UserInitiatedAbort(Cow::Borrowed(b"bye"))]
    );
}

#[test]
fn unknown_chunk_types_report_their_action_and_round_trip_raw() {
    for (typ, action) in [
        (0x3f, UnrecognizedAction::Stop),
        (0x7f, UnrecognizedAction::StopAndReport),
        (0xbf, UnrecognizedAction::Skip),
        (0xff, UnrecognizedAction::SkipAndReport),
    ] {
        assert_eq!(types::name(typ), "unknown chunk");
        let chunk = chunk_bytes(typ, 0xa5, b"raw value");
        let bytes = sealed_packet(&chunk);
        let packet = Packet::decode(&bytes).expect("unknown chunks are kept");
        let expected = Chunk::Unknown(UnknownChunk::new(typ, 0xa5, &b"raw value"[..]));
        assert_eq!(packet.chunks, vec![expected]);
        assert_eq!(packet.chunks[0].action(), Some(action));
        assert_eq!(packet.chunks[0].name(), "unknown chunk");
        assert_eq!(packet.to_bytes().expect("re-encodes"), bytes);
    }
}

#[test]
fn unknown_parameters_report_their_action_and_round_trip_raw() {
    for (typ, action) in [
        (0x0042, UnrecognizedAction::Stop),
        (0x4042, UnrecognizedAction::StopAndReport),
        (0x8042, UnrecognizedAction::Skip),
        (0xc042, UnrecognizedAction::SkipAndReport),
    ] {
        assert!(!Param::is_known_type(typ));
        let params = [
            tlv_bytes(typ, b"opaque"),
            tlv_bytes(Param::FORWARD_TSN_SUPPORTED, &[]),
        ]
        .concat();
        let bytes = sealed_packet(&init_with_params(&params));
        let packet = Packet::decode(&bytes).expect("unknown parameters are kept");
        let Chunk::Init(init) = &packet.chunks[0] else {
            panic!("expected INIT, got {:?}", packet.chunks[0]);
        };
        assert_eq!(
            init.params,
            vec![
                Param::Unknown {
                    typ,
                    value: Cow::Borrowed(b"opaque")
                },
                Param::ForwardTsnSupported,
            ]
        );
        assert_eq!(init.params[0].action(), Some(action));
        assert_eq!(init.params[1].action(), None);
        assert_eq!(packet.to_bytes().expect("re-encodes"), bytes);
    }
}

#[test]
fn unknown_error_causes_and_reconfig_parameters_round_trip_raw() {
    assert!(!ErrorCause::is_known_code(0x0200));
    let cause = ErrorCause::decode(0x0200, b"why").expect("kept");
    assert_eq!(
        cause,
        ErrorCause::Unknown {
            code: 0x0200,
            value: Cow::Borrowed(b"why")
        }
    );
    let mut out = Vec::new();
    cause.encode(&mut out).expect("encodes");
    assert_eq!(out, [0x02, 0x00, 0x00, 0x07, b'w', b'h', b'y']);

    assert!(!ReconfigParam::is_known_type(19));
    let param = ReconfigParam::decode(19, &[1, 2, 3, 4]).expect("kept");
    let mut out = Vec::new();
    param.encode(&mut out).expect("encodes");
    assert_eq!(out, [0x00, 0x13, 0x00, 0x08, 1, 2, 3, 4]);
}

#[test]
fn idata_whose_ppid_or_fsn_disagrees_with_the_b_flag_fails_to_encode() {
    let mut chunk = IData {
        flags: DataFlags::UNFRAGMENTED,
        tsn: 1,
        stream_id: 0,
        mid: 0,
        ppid_or_fsn: PpidOrFsn::Fsn(3),
        payload: Cow::Borrowed(b"x"),
    };
    let mut out = Vec::new();
    assert!(matches!(
        Chunk::IData(chunk.clone()).encode(&mut out),
        Err(WireError::InvalidValue { what: "I-DATA", .. })
    ));
    chunk.flags.beginning = false;
    assert!(Chunk::IData(chunk).encode(&mut out).is_ok());
}

#[test]
fn chunk_too_long_for_its_length_field_fails_to_encode() {
    let data = Data {
        flags: DataFlags::UNFRAGMENTED,
        tsn: 1,
        stream_id: 0,
        ssn: 0,
        ppid: 0,
        payload: Cow::Owned(vec![0; 65_536 - 16]),
    };
    let mut out = Vec::new();
    assert_eq!(
        Chunk::Data(data.clone()).encode(&mut out),
        Err(WireError::TooLong {
            what: "DATA",
            len: 65_536
        })
    );
    // One byte less fits exactly.
    let fits = Data {
        payload: Cow::Owned(vec![0; 65_535 - 16]),
        ..data
    };
    out.clear();
    Chunk::Data(fits).encode(&mut out).expect("65535 bytes fit");
    assert_eq!(out[2..4], [0xff, 0xff]);
    assert_eq!(out.len(), 65_536);
}

#[test]
fn a_chunk_that_fails_to_encode_leaves_nothing_in_the_packet() {
    use crate::wire::{CommonHeader, PacketWriter};
    let too_long = Data {
        flags: DataFlags::UNFRAGMENTED,
        tsn: 1,
        stream_id: 0,
        ssn: 0,
        ppid: 0,
        payload: Cow::Owned(vec![0; 70_000]),
    };
    let mut out = Vec::new();
    let mut w = PacketWriter::new(&mut out, &CommonHeader::default());
    assert!(w.push(&Chunk::Data(too_long.clone())).is_err());
    assert!(w.push_chunk(&too_long).is_err());
    assert_eq!(w.len(), 12, "only the common header");
}
