//! I-FORWARD-TSN chunk (type 194), RFC 8260 2.3: FORWARD TSN for I-DATA.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |  Type = 194   | Flags = 0x00  |      Length = Variable        |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                       New Cumulative TSN                      |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |       Stream Identifier       |          Reserved           |U|
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                       Message Identifier                      |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! /                              ...                              /
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```

use super::{ChunkCodec, types};
use crate::wire::WireError;
use crate::wire::buf::{Reader, put_u16, put_u32};

/// The largest message identifier skipped on one stream, ordered or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IForwardTsnStream {
    pub stream_id: u16,
    /// U: the skipped messages were unordered.
    pub unordered: bool,
    pub mid: u32,
}

/// An I-FORWARD-TSN chunk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IForwardTsn {
    pub new_cum_tsn: u32,
    pub streams: Vec<IForwardTsnStream>,
}

impl<'a> ChunkCodec<'a> for IForwardTsn {
    const TYPE: u8 = types::IFORWARD_TSN;
    const NAME: &'static str = "I-FORWARD-TSN";

    fn decode(_flags: u8, value: &'a [u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(value, Self::NAME);
        let new_cum_tsn = r.u32()?;
        if r.remaining() % 8 != 0 {
            return Err(WireError::InvalidLength {
                what: Self::NAME,
                len: 4 + value.len(),
                expected: "8 plus 8 bytes per stream",
            });
        }
        let mut streams = Vec::with_capacity(r.remaining() / 8);
        while !r.is_empty() {
            let stream_id = r.u16()?;
            let reserved_u = r.u16()?; // RFC 8260 2.3: reserved bits ignored on receipt
            streams.push(IForwardTsnStream {
                stream_id,
                unordered: reserved_u & 0x0001 != 0,
                mid: r.u32()?,
            });
        }
        Ok(IForwardTsn {
            new_cum_tsn,
            streams,
        })
    }

    fn value_len(&self) -> usize {
        4 + 8 * self.streams.len()
    }

    fn encode_value(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        put_u32(out, self.new_cum_tsn);
        for s in &self.streams {
            put_u16(out, s.stream_id);
            put_u16(out, u16::from(s.unordered));
            put_u32(out, s.mid);
        }
        Ok(())
    }
}
