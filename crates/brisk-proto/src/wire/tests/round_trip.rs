//! Round trips: every valid parameter, cause, RE-CONFIG parameter, chunk and
//! packet encodes, decodes back to itself and re-encodes to the same bytes, with
//! the lengths and padding RFC 9260 3.2 prescribes.

use proptest::prelude::*;

use super::{cause_len, chunk_len, config, param_len, reconfig_param_len};
use crate::wire::chunk::{Chunk, ReconfigParam};
use crate::wire::strategies;
use crate::wire::{
    ChecksumPolicy, CommonHeader, ErrorCause, Packet, PacketWriter, Param, RawChunks, Tlv,
    compute_checksum, padded, verify_checksum,
};

/// Bytes written before each value, so that a miscount of padding relative to
/// the buffer instead of the value's own start shows up.
const PREFIX: &[u8] = &[0xee, 0xee, 0xee];

/// Checks one TLV of type `$ty`: its header, its length, its decoding and its
/// re-encoding. A macro rather than a function so that the decoded value may
/// borrow the local buffer.
macro_rules! check_tlv {
    ($ty:ty, $item:expr, $expected_len:expr) => {{
        let item: &$ty = $item;
        let expected_len: usize = $expected_len;
        let mut out = PREFIX.to_vec();
        item.encode(&mut out).expect("a valid TLV encodes");
        let bytes = &out[PREFIX.len()..];
        // Tlv::encode writes no padding: the list or the chunk adds it.
        assert_eq!(bytes.len(), expected_len, "bytes written");
        assert_eq!(bytes.len(), 4 + item.value_len(), "4 + value_len()");
        assert_eq!(u16::from_be_bytes([bytes[0], bytes[1]]), item.tlv_type());
        assert_eq!(
            usize::from(u16::from_be_bytes([bytes[2], bytes[3]])),
            expected_len,
            "length field"
        );
        let decoded = <$ty>::decode(item.tlv_type(), &bytes[4..]).expect("a valid TLV decodes");
        assert_eq!(&decoded, item);
        let mut again = Vec::new();
        decoded
            .encode(&mut again)
            .expect("a decoded TLV re-encodes");
        assert_eq!(again, bytes);
    }};
}

/// Checks one chunk: its length field, its padding, its decoding (directly and
/// through the packet walker) and its re-encoding.
fn check_chunk(chunk: &Chunk<'_>) {
    let mut out = PREFIX.to_vec();
    chunk.encode(&mut out).expect("a valid chunk encodes");
    let bytes = &out[PREFIX.len()..];

    assert_eq!(
        bytes.len(),
        chunk.encoded_len(),
        "encoded_len() vs bytes written"
    );
    assert_eq!(bytes.len() % 4, 0, "a chunk is padded to 4 bytes");
    assert_eq!(bytes[0], chunk.chunk_type());
    assert_eq!(bytes[1], chunk.flags());
    let len = usize::from(u16::from_be_bytes([bytes[2], bytes[3]]));
    // RFC 9260 3.2: the Chunk Length counts everything but the final padding.
    assert_eq!(len, chunk_len(chunk), "Chunk Length field");
    assert_eq!(bytes.len(), padded(len));
    assert!(
        bytes[len..].iter().all(|&b| b == 0),
        "padding must be zero: {:?}",
        &bytes[len..]
    );

    let decoded = Chunk::decode(bytes[0], bytes[1], &bytes[4..len]).expect("a valid chunk decodes");
    assert_eq!(&decoded, chunk);

    let raw: Vec<_> = RawChunks::new(bytes)
        .collect::<Result<_, _>>()
        .expect("the chunk walks");
    assert_eq!(raw.len(), 1);
    assert_eq!(raw[0].bytes, &bytes[..len]);
    assert_eq!(&raw[0].decode().expect("the raw chunk decodes"), chunk);

    let mut again = Vec::new();
    decoded
        .encode(&mut again)
        .expect("a decoded chunk re-encodes");
    assert_eq!(again, bytes, "re-encoding gives the same bytes");
}

/// Checks one packet: encoding, checksum, decoding and re-encoding.
fn check_packet(packet: &Packet<'_>) {
    let bytes = packet.to_bytes().expect("a valid packet encodes");
    assert_eq!(bytes.len(), packet.encoded_len());
    assert!(bytes.len() < 65_535, "packets stay below 64 KiB");
    verify_checksum(&bytes, ChecksumPolicy::Verify).expect("the checksum verifies");
    let crc = compute_checksum(&bytes).expect("a packet has a header");
    assert_eq!(bytes[8..12], crc.to_le_bytes());

    let decoded = Packet::decode(&bytes).expect("a valid packet decodes");
    assert_eq!(&decoded, packet);
    assert_eq!(decoded.header.checksum, crc);
    assert_eq!(decoded.to_bytes().expect("re-encodes"), bytes);

    // Building the packet chunk by chunk gives the same bytes.
    let mut built = vec![0x55];
    let mut w = PacketWriter::new(&mut built, &packet.header);
    for chunk in &packet.chunks {
        w.push(chunk).expect("a valid chunk encodes");
    }
    assert_eq!(w.len(), bytes.len());
    w.finish().expect("the writer seals");
    assert_eq!(built[1..], bytes[..]);
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn params_round_trip(p in strategies::param()) {
        check_tlv!(Param<'_>, &p, param_len(&p));
    }

    #[test]
    fn error_causes_round_trip(c in strategies::error_cause()) {
        check_tlv!(ErrorCause<'_>, &c, cause_len(&c));
    }

    #[test]
    fn reconfig_params_round_trip(p in strategies::reconfig_param()) {
        check_tlv!(ReconfigParam<'_>, &p, reconfig_param_len(&p));
    }

    #[test]
    fn data_chunks_round_trip(c in strategies::data()) {
        check_chunk(&c.into());
    }

    #[test]
    fn init_chunks_round_trip(c in strategies::init()) {
        check_chunk(&c.into());
    }

    #[test]
    fn init_ack_chunks_round_trip(c in strategies::init_ack()) {
        prop_assert!(c.state_cookie().is_some());
        check_chunk(&c.into());
    }

    #[test]
    fn sack_chunks_round_trip(c in strategies::sack()) {
        check_chunk(&c.into());
    }

    #[test]
    fn heartbeat_chunks_round_trip(c in strategies::heartbeat()) {
        prop_assert!(c.info().is_some());
        check_chunk(&c.into());
    }

    #[test]
    fn heartbeat_ack_chunks_round_trip(c in strategies::heartbeat_ack()) {
        prop_assert!(c.info().is_some());
        check_chunk(&c.into());
    }

    #[test]
    fn abort_chunks_round_trip(c in strategies::abort()) {
        check_chunk(&c.into());
    }

    #[test]
    fn shutdown_chunks_round_trip(c in strategies::shutdown()) {
        check_chunk(&c.into());
    }

    #[test]
    fn shutdown_ack_chunks_round_trip(c in strategies::shutdown_ack()) {
        check_chunk(&c.into());
    }

    #[test]
    fn error_chunks_round_trip(c in strategies::error_chunk()) {
        prop_assert!(!c.causes.is_empty());
        check_chunk(&c.into());
    }

    #[test]
    fn cookie_echo_chunks_round_trip(c in strategies::cookie_echo()) {
        check_chunk(&c.into());
    }

    #[test]
    fn cookie_ack_chunks_round_trip(c in strategies::cookie_ack()) {
        check_chunk(&c.into());
    }

    #[test]
    fn shutdown_complete_chunks_round_trip(c in strategies::shutdown_complete()) {
        check_chunk(&c.into());
    }

    #[test]
    fn idata_chunks_round_trip(c in strategies::idata()) {
        check_chunk(&c.into());
    }

    #[test]
    fn forward_tsn_chunks_round_trip(c in strategies::forward_tsn()) {
        check_chunk(&c.into());
    }

    #[test]
    fn iforward_tsn_chunks_round_trip(c in strategies::iforward_tsn()) {
        check_chunk(&c.into());
    }

    #[test]
    fn reconfig_chunks_round_trip(c in strategies::reconfig()) {
        prop_assert!((1..=2).contains(&c.params.len()));
        check_chunk(&c.into());
    }

    #[test]
    fn pktdrop_chunks_round_trip(c in strategies::pktdrop()) {
        check_chunk(&c.into());
    }

    #[test]
    fn unknown_chunks_round_trip(c in strategies::unknown_chunk()) {
        let chunk = Chunk::from(c.clone());
        prop_assert_eq!(chunk.action(), Some(c.action()));
        check_chunk(&chunk);
    }

    #[test]
    fn any_chunk_round_trips(c in strategies::chunk()) {
        check_chunk(&c);
    }

    #[test]
    fn packets_round_trip(p in strategies::packet()) {
        prop_assert!(!p.chunks.is_empty());
        prop_assert!(p.chunks.len() == 1 || p.chunks.iter().all(|c| !c.must_be_alone()));
        check_packet(&p);
    }

    #[test]
    fn packets_with_zero_checksum_decode_only_under_accept_zero(p in strategies::packet()) {
        let mut bytes = Vec::new();
        let mut w = PacketWriter::new(&mut bytes, &p.header);
        for chunk in &p.chunks {
            w.push(chunk).expect("a valid chunk encodes");
        }
        w.finish_zero_checksum();
        prop_assert_eq!(CommonHeader::decode(&bytes).expect("has a header").checksum, 0);
        let decoded = Packet::decode_with(&bytes, ChecksumPolicy::AcceptZero)
            .expect("RFC 9653: a zero checksum is accepted");
        prop_assert_eq!(&decoded.chunks, &p.chunks);
        let computed = compute_checksum(&bytes).expect("has a header");
        if computed != 0 {
            prop_assert_eq!(
                Packet::decode(&bytes),
                Err(crate::wire::WireError::BadChecksum { received: 0, computed })
            );
        }
    }
}
