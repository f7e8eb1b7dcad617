//! The SCTP packet codec: RFC 9260 chunks, parameters and error causes, plus
//! I-DATA and I-FORWARD-TSN (RFC 8260), FORWARD TSN (RFC 3758), RE-CONFIG
//! (RFC 6525), PKTDROP (draft-stewart-sctp-pktdrprep) and Zero Checksum
//! Acceptable (RFC 9653).
//!
//! Decoding never panics: every length is checked and every failure is a
//! [`WireError`]. Decoded chunks borrow their byte fields from the input.
//! Encoding appends to a caller's `Vec<u8>` and pads to 4 bytes.
//!
//! ```
//! use brisk_proto::wire::{Chunk, CommonHeader, Packet, chunk::{Data, DataFlags}};
//!
//! let packet = Packet {
//!     header: CommonHeader { src_port: 5000, dst_port: 5001, verification_tag: 7, checksum: 0 },
//!     chunks: vec![Chunk::Data(Data {
//!         flags: DataFlags::UNFRAGMENTED,
//!         tsn: 1,
//!         stream_id: 0,
//!         ssn: 0,
//!         ppid: 51,
//!         payload: b"hello"[..].into(),
//!     })],
//! };
//! let bytes = packet.to_bytes().unwrap();
//! let back = Packet::decode(&bytes).unwrap();
//! assert_eq!(back.chunks, packet.chunks);
//! ```

mod buf;
pub mod cause;
pub mod chunk;
mod error;
pub mod packet;
pub mod param;
#[cfg(any(test, feature = "strategies"))]
pub mod strategies;
#[cfg(test)]
mod tests;
mod tlv;
mod unrecognized;

pub use buf::padded;
pub use cause::ErrorCause;
pub use chunk::{Chunk, ChunkCodec};
pub use error::WireError;
pub use packet::{
    ChecksumPolicy, CommonHeader, Packet, PacketWriter, RawChunk, RawChunks, compute_checksum,
    seal, verify_checksum,
};
pub use param::Param;
pub use tlv::Tlv;
pub use unrecognized::UnrecognizedAction;

/// The most chunks one packet may carry before decoding stops with
/// [`WireError::TooManyChunks`]. A 9000-byte jumbo packet holds at most about
/// 450 DATA chunks of one byte each, so real traffic stays far below.
pub const MAX_CHUNKS_PER_PACKET: usize = 1024;

/// The most parameters or error causes one chunk may carry before decoding
/// stops with [`WireError::TooManyTlvs`].
pub const MAX_TLVS_PER_CHUNK: usize = 256;
