//! PKTDROP chunk (type 0x81), draft-stewart-sctp-pktdrprep: reports a packet
//! dropped for a bad checksum or by a middlebox, so the sender can retransmit at
//! once without treating the loss as congestion.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |  Type = 0x81  |  Flags=00000TBM |          Chunk Length       |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                         Link Bandwidth                        |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                          Queue Size                           |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |        Truncated Length       |            Reserved           |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! \                 Data Field (the dropped packet,               \
//! /                 from its SCTP common header)                  /
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! An end host puts its receive buffer size in Link Bandwidth and the bytes in
//! use in Queue Size. When the dropped packet is cut to fit, T is set and
//! Truncated Length holds its original length.

use std::borrow::Cow;

use super::{ChunkCodec, types};
use crate::wire::WireError;
use crate::wire::buf::{Reader, put_u16, put_u32};

/// The M, B and T flags of PKTDROP.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct PktDropFlags {
    /// M: sent by a middlebox, not the peer end host.
    pub middlebox: bool,
    /// B: the packet was dropped for a bad checksum.
    pub bad_checksum: bool,
    /// T: the embedded packet was truncated.
    pub truncated: bool,
}

impl PktDropFlags {
    pub const M: u8 = 0x01;
    pub const B: u8 = 0x02;
    pub const T: u8 = 0x04;

    pub const fn from_bits(bits: u8) -> Self {
        Self {
            middlebox: bits & Self::M != 0,
            bad_checksum: bits & Self::B != 0,
            truncated: bits & Self::T != 0,
        }
    }

    pub const fn bits(self) -> u8 {
        (self.middlebox as u8 * Self::M)
            | (self.bad_checksum as u8 * Self::B)
            | (self.truncated as u8 * Self::T)
    }
}

/// A PKTDROP chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PktDrop<'a> {
    pub flags: PktDropFlags,
    pub bandwidth: u32,
    pub queue_size: u32,
    pub truncated_len: u16,
    /// The dropped packet from its common header on, possibly truncated.
    pub dropped: Cow<'a, [u8]>,
}

impl<'a> ChunkCodec<'a> for PktDrop<'a> {
    const TYPE: u8 = types::PKTDROP;
    const NAME: &'static str = "PKTDROP";

    fn decode(flags: u8, value: &'a [u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(value, Self::NAME);
        if r.remaining() < 12 {
            return Err(WireError::InvalidLength {
                what: Self::NAME,
                len: 4 + value.len(),
                expected: "at least 16",
            });
        }
        let bandwidth = r.u32()?;
        let queue_size = r.u32()?;
        let truncated_len = r.u16()?;
        let _reserved = r.u16()?;
        Ok(PktDrop {
            flags: PktDropFlags::from_bits(flags),
            bandwidth,
            queue_size,
            truncated_len,
            dropped: Cow::Borrowed(r.rest()),
        })
    }

    fn flags(&self) -> u8 {
        self.flags.bits()
    }

    fn value_len(&self) -> usize {
        12 + self.dropped.len()
    }

    fn encode_value(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        put_u32(out, self.bandwidth);
        put_u32(out, self.queue_size);
        put_u16(out, self.truncated_len);
        put_u16(out, 0);
        out.extend_from_slice(&self.dropped);
        Ok(())
    }
}
