//! Typed errors for decoding and encoding SCTP packets.

use thiserror::Error;

/// Why a packet, chunk, parameter or error cause could not be decoded (or encoded).
///
/// `what` names the structure being read, e.g. `"SACK"` or `"IPv4 Address parameter"`,
/// so a counter or a log line can say exactly what was wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum WireError {
    /// Fewer bytes than the 12-byte common header (RFC 9260 3.1).
    #[error("packet of {len} bytes is shorter than the 12-byte SCTP common header")]
    ShortPacket { len: usize },
    /// The CRC32c in the common header does not match the packet (RFC 9260 6.8).
    #[error("bad checksum: packet carries {received:#010x}, computed {computed:#010x}")]
    BadChecksum { received: u32, computed: u32 },
    /// A packet with a common header and no chunks.
    #[error("packet carries no chunks")]
    NoChunks,
    /// A length field points past the end of the data that holds it.
    #[error("{what} is truncated: needs {needed} bytes, {available} available")]
    Truncated {
        what: &'static str,
        needed: usize,
        available: usize,
    },
    /// A length field is impossible for its structure.
    #[error("{what} has invalid length {len}: {expected}")]
    InvalidLength {
        what: &'static str,
        len: usize,
        expected: &'static str,
    },
    /// A chunk is not followed by its padding to a multiple of 4 bytes (RFC 9260 3.2).
    #[error("{what} at offset {offset} is missing its padding to 4 bytes")]
    MissingPadding { what: &'static str, offset: usize },
    /// Bytes after the last chunk that cannot form a chunk.
    #[error("{count} stray bytes after the last chunk")]
    TrailingBytes { count: usize },
    /// More chunks in one packet than [`MAX_CHUNKS_PER_PACKET`](crate::wire::MAX_CHUNKS_PER_PACKET).
    #[error("more than {limit} chunks in one packet")]
    TooManyChunks { limit: usize },
    /// More TLVs in one chunk than [`MAX_TLVS_PER_CHUNK`](crate::wire::MAX_TLVS_PER_CHUNK).
    #[error("more than {limit} parameters or error causes in one {what}")]
    TooManyTlvs { what: &'static str, limit: usize },
    /// INIT, INIT ACK and SHUTDOWN COMPLETE must be alone in their packet (RFC 9260 6.10).
    #[error("{what} must be the only chunk in its packet, found {count} chunks")]
    MustBeAlone { what: &'static str, count: usize },
    /// A chunk lacks a parameter its definition requires.
    #[error("{what} lacks the mandatory {missing}")]
    MissingParameter {
        what: &'static str,
        missing: &'static str,
    },
    /// A field holds a value its definition forbids.
    #[error("{what} has invalid value {value}: {expected}")]
    InvalidValue {
        what: &'static str,
        value: u64,
        expected: &'static str,
    },
    /// Encoding: a chunk, parameter or cause would exceed the 16-bit length field.
    #[error("{what} of {len} bytes does not fit a 16-bit length field")]
    TooLong { what: &'static str, len: usize },
}
