//! Robustness: whatever the bytes, decoding returns a value or a typed error and
//! never panics; and whatever it accepts re-encodes and decodes to the same value.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{Index, select};

use super::config;
use crate::wire::chunk::{Chunk, types};
use crate::wire::{
    ChecksumPolicy, Packet, WireError, compute_checksum, padded, seal, strategies, verify_checksum,
};

/// Checks the invariant every accepted packet must satisfy: it re-encodes, and
/// the re-encoding decodes (checksum verified) to the same chunks and header.
fn assert_reencodes(packet: &Packet<'_>) {
    let bytes = packet.to_bytes().expect("a decoded packet re-encodes");
    assert_eq!(bytes.len(), packet.encoded_len());
    let again = Packet::decode(&bytes).expect("a re-encoded packet decodes");
    assert_eq!(again.chunks, packet.chunks);
    assert_eq!(again.header.src_port, packet.header.src_port);
    assert_eq!(again.header.dst_port, packet.header.dst_port);
    assert_eq!(
        again.header.verification_tag,
        packet.header.verification_tag
    );
    assert_eq!(
        again.to_bytes().expect("re-encodes"),
        bytes,
        "encoding is a fixpoint"
    );
}

/// Checks the invariant every accepted chunk must satisfy.
fn assert_chunk_reencodes(chunk: &Chunk<'_>, typ: u8) {
    assert_eq!(chunk.chunk_type(), typ);
    let mut bytes = Vec::new();
    chunk
        .encode(&mut bytes)
        .expect("a decoded chunk re-encodes");
    assert_eq!(bytes.len(), chunk.encoded_len());
    let len = usize::from(u16::from_be_bytes([bytes[2], bytes[3]]));
    let again = Chunk::decode(bytes[0], bytes[1], &bytes[4..len]).expect("re-decodes");
    assert_eq!(&again, chunk);
    let mut twice = Vec::new();
    again.encode(&mut twice).expect("re-encodes");
    assert_eq!(twice, bytes, "encoding is a fixpoint");
}

/// TLV types worth hitting: every parameter, cause and RE-CONFIG type the codec
/// knows, plus a few unknown ones of each action.
fn tlv_type() -> impl Strategy<Value = u16> {
    let known: Vec<u16> = (1..=18)
        .chain([
            0x0105, 0x8001, 0x8008, 0xc000, 0x0042, 0x4042, 0x8042, 0xc042,
        ])
        .collect();
    // Heartbeat Info (1) is what HEARTBEAT needs to be accepted.
    prop_oneof![1 => Just(1), 3 => select(known), 1 => any::<u16>()]
}

/// A chunk value that often parses: an optional fixed part (16 bytes fits INIT,
/// 12 fits DATA, SACK and PKTDROP), then TLVs of interesting types with mostly
/// truthful lengths, padding sometimes left out.
fn tlvish_value() -> impl Strategy<Value = Vec<u8>> {
    let tlv = (
        tlv_type(),
        // Fixed-size parameters and causes take 0, 4 or 16 bytes.
        prop_oneof![select(vec![0usize, 4, 16]), 0usize..24].prop_flat_map(|n| vec(any::<u8>(), n)),
        prop_oneof![4 => Just(None), 1 => any::<u16>().prop_map(Some)],
        prop::bool::weighted(0.8),
    );
    (
        prop_oneof![Just(0usize), Just(12), Just(16), 0usize..20],
        any::<[u8; 20]>(),
        vec(tlv, 0..5),
    )
        .prop_map(|(fixed, head, tlvs)| {
            let mut out = head[..fixed].to_vec();
            for (typ, value, lying_len, pad) in tlvs {
                let len = lying_len.unwrap_or(4 + value.len() as u16);
                out.extend_from_slice(&typ.to_be_bytes());
                out.extend_from_slice(&len.to_be_bytes());
                out.extend_from_slice(&value);
                if pad {
                    out.resize(padded(out.len()), 0);
                }
            }
            out
        })
}

/// A SACK-shaped value: 8 fixed bytes, two small counts, then about as many
/// 4-byte entries as they announce.
fn counted_value() -> impl Strategy<Value = Vec<u8>> {
    (any::<[u8; 8]>(), 0u16..4, 0u16..4, -1i32..=1, any::<u8>()).prop_map(
        |(fixed, gaps, dups, off_by, fill)| {
            let mut out = fixed.to_vec();
            out.extend_from_slice(&gaps.to_be_bytes());
            out.extend_from_slice(&dups.to_be_bytes());
            let entries = (i32::from(gaps) + i32::from(dups) + off_by).max(0);
            out.extend(std::iter::repeat_n(fill, 4 * entries as usize));
            out
        },
    )
}

/// A random chunk value: raw bytes, TLV-shaped or SACK-shaped.
fn chunk_value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![vec(any::<u8>(), 0..64), tlvish_value(), counted_value()]
}

/// A packet of random chunks with correct framing: each chunk has a true
/// length and padding, so the decoder reaches every chunk type's own parser.
fn framed_random_chunks() -> impl Strategy<Value = Vec<u8>> {
    let typ = prop_oneof![
        3 => select(vec![0u8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14, 64, 129, 130, 192, 194]),
        1 => any::<u8>(),
    ];
    (
        any::<[u8; 8]>(),
        vec((typ, any::<u8>(), chunk_value()), 1..6),
    )
        .prop_map(|(head, chunks)| {
            let mut out = head.to_vec();
            out.extend_from_slice(&[0; 4]);
            for (typ, flags, value) in chunks {
                out.extend_from_slice(&super::chunk_bytes(typ, flags, &value));
            }
            if let Err(e) = seal(&mut out) {
                unreachable!("a 12-byte header can be sealed: {e}");
            }
            out
        })
}

/// How a length field is changed.
#[derive(Debug, Clone)]
enum NewLength {
    Set(u16),
    Add(i16),
}

impl NewLength {
    fn apply(&self, old: u16) -> u16 {
        match *self {
            NewLength::Set(v) => v,
            NewLength::Add(d) => old.wrapping_add_signed(d),
        }
    }
}

fn new_length() -> impl Strategy<Value = NewLength> {
    prop_oneof![
        (0u16..=24).prop_map(NewLength::Set),
        any::<u16>().prop_map(NewLength::Set),
        (-8i16..=8).prop_map(NewLength::Add),
    ]
}

/// One change to an encoded packet.
#[derive(Debug, Clone)]
enum Mutation {
    /// XOR one byte with a nonzero value.
    Flip { at: Index, xor: u8 },
    /// Cut the packet short.
    Truncate { at: Index },
    /// Rewrite the Chunk Length of one chunk.
    ChunkLength { chunk: Index, len: NewLength },
    /// Rewrite the 16-bit field at offset 2 of a 4-byte word of the chunk area:
    /// where chunk, parameter and cause lengths live.
    WordLength { word: Index, len: NewLength },
    /// Insert a copy of one chunk right after it.
    DuplicateChunk { chunk: Index },
    /// Insert a few bytes.
    Insert { at: Index, bytes: Vec<u8> },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<Index>(), 1u8..=255).prop_map(|(at, xor)| Mutation::Flip { at, xor }),
        any::<Index>().prop_map(|at| Mutation::Truncate { at }),
        (any::<Index>(), new_length())
            .prop_map(|(chunk, len)| Mutation::ChunkLength { chunk, len }),
        (any::<Index>(), new_length()).prop_map(|(word, len)| Mutation::WordLength { word, len }),
        any::<Index>().prop_map(|chunk| Mutation::DuplicateChunk { chunk }),
        (any::<Index>(), vec(any::<u8>(), 1..8))
            .prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
    ]
}

/// Where the chunks of `packet` start, walking the length fields as far as they
/// make sense.
fn chunk_offsets(packet: &[u8]) -> Vec<usize> {
    let mut offsets = Vec::new();
    let mut off = 12;
    while off + 4 <= packet.len() {
        let len = usize::from(u16::from_be_bytes([packet[off + 2], packet[off + 3]]));
        if len < 4 {
            break;
        }
        offsets.push(off);
        off += padded(len);
    }
    offsets
}

fn set_u16(buf: &mut [u8], at: usize, v: u16) {
    if let Some(field) = buf.get_mut(at..at + 2) {
        field.copy_from_slice(&v.to_be_bytes());
    }
}

fn get_u16(buf: &[u8], at: usize) -> u16 {
    buf.get(at..at + 2)
        .map_or(0, |f| u16::from_be_bytes([f[0], f[1]]))
}

impl Mutation {
    fn apply(&self, buf: &mut Vec<u8>) {
        match self {
            Mutation::Flip { at, xor } => {
                if !buf.is_empty() {
                    let i = at.index(buf.len());
                    buf[i] ^= xor;
                }
            }
            Mutation::Truncate { at } => buf.truncate(at.index(buf.len() + 1)),
            Mutation::ChunkLength { chunk, len } => {
                let offsets = chunk_offsets(buf);
                if !offsets.is_empty() {
                    let at = offsets[chunk.index(offsets.len())] + 2;
                    let new = len.apply(get_u16(buf, at));
                    set_u16(buf, at, new);
                }
            }
            Mutation::WordLength { word, len } => {
                if buf.len() >= 16 {
                    let at = 12 + 4 * word.index((buf.len() - 12) / 4) + 2;
                    let new = len.apply(get_u16(buf, at));
                    set_u16(buf, at, new);
                }
            }
            Mutation::DuplicateChunk { chunk } => {
                let offsets = chunk_offsets(buf);
                if !offsets.is_empty() {
                    let start = offsets[chunk.index(offsets.len())];
                    let len = usize::from(get_u16(buf, start + 2));
                    let end = (start + padded(len)).min(buf.len());
                    let copy = buf[start..end].to_vec();
                    buf.splice(end..end, copy);
                }
            }
            Mutation::Insert { at, bytes } => {
                let i = at.index(buf.len() + 1);
                buf.splice(i..i, bytes.iter().copied());
            }
        }
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_bytes_never_panic_the_packet_decoder(bytes in vec(any::<u8>(), 0..600)) {
        let ignored = Packet::decode_with(&bytes, ChecksumPolicy::Ignore);
        if bytes.len() < 12 {
            prop_assert_eq!(&ignored, &Err(WireError::ShortPacket { len: bytes.len() }));
        }
        if let Ok(p) = &ignored {
            assert_reencodes(p);
        }
        match Packet::decode(&bytes) {
            Ok(p) => {
                prop_assert!(verify_checksum(&bytes, ChecksumPolicy::Verify).is_ok());
                prop_assert_eq!(Ok(p), ignored);
            }
            Err(WireError::BadChecksum { received, computed }) => {
                prop_assert_ne!(received, computed);
                prop_assert_eq!(Ok(computed), compute_checksum(&bytes));
            }
            Err(e) => prop_assert_eq!(Err(e), ignored),
        }
    }

    #[test]
    fn sealed_random_bytes_get_past_the_checksum_and_never_panic(
        mut bytes in vec(any::<u8>(), 12..600)
    ) {
        seal(&mut bytes).expect("at least a header");
        let verified = Packet::decode(&bytes);
        prop_assert_eq!(&verified, &Packet::decode_with(&bytes, ChecksumPolicy::Ignore));
        let bad_checksum = matches!(verified, Err(WireError::BadChecksum { .. }));
        prop_assert!(!bad_checksum, "the packet was sealed");
        if let Ok(p) = &verified {
            assert_reencodes(p);
        }
    }

    #[test]
    fn framed_random_chunks_never_panic_and_reencode_when_accepted(
        bytes in framed_random_chunks()
    ) {
        let decoded = Packet::decode(&bytes);
        prop_assert!(!matches!(
            decoded,
            Err(WireError::BadChecksum { .. }
                | WireError::ShortPacket { .. }
                | WireError::NoChunks
                | WireError::TrailingBytes { .. }
                | WireError::MissingPadding { .. })
        ), "framing is correct, yet {:?}", decoded);
        if let Ok(p) = &decoded {
            assert_reencodes(p);
        }
    }

    #[test]
    fn every_chunk_type_decodes_random_values_without_panicking(
        flags in any::<u8>(),
        value in chunk_value(),
    ) {
        for typ in 0..=u8::MAX {
            match Chunk::decode(typ, flags, &value) {
                Ok(chunk) => {
                    assert_chunk_reencodes(&chunk, typ);
                    if types::name(typ) == "unknown chunk" {
                        prop_assert!(chunk.action().is_some());
                    }
                }
                Err(e) => {
                    // Unknown types are kept, never rejected.
                    prop_assert_ne!(types::name(typ), "unknown chunk", "{:?}", e);
                }
            }
        }
    }

    #[test]
    fn mutated_packets_never_panic_and_reencode_when_accepted(
        packet in strategies::packet(),
        mutations in vec(mutation(), 1..4),
    ) {
        let original = packet.to_bytes().expect("a valid packet encodes");
        let mut bytes = original.clone();
        for m in &mutations {
            m.apply(&mut bytes);
        }
        if bytes.len() >= 12 {
            seal(&mut bytes).expect("at least a header");
        }
        let verified = Packet::decode(&bytes);
        prop_assert_eq!(&verified, &Packet::decode_with(&bytes, ChecksumPolicy::Ignore));
        match &verified {
            Ok(p) => assert_reencodes(p),
            Err(WireError::ShortPacket { len }) => prop_assert!(*len < 12),
            Err(WireError::BadChecksum { .. }) => prop_assert!(false, "the packet was sealed"),
            Err(_) => {}
        }
    }

    #[test]
    fn crc32c_detects_every_mutation_of_a_valid_packet(
        packet in strategies::packet(),
        mutations in vec(mutation(), 1..4),
    ) {
        let original = packet.to_bytes().expect("a valid packet encodes");
        let mut bytes = original.clone();
        for m in &mutations {
            m.apply(&mut bytes);
        }
        if bytes.len() >= 12 && bytes != original {
            prop_assert!(
                matches!(Packet::decode(&bytes), Err(WireError::BadChecksum { .. })),
                "a changed packet kept a matching CRC32c"
            );
        }
    }
}
