//! FORWARD TSN chunk (type 192), RFC 3758 3.2 (partial reliability).
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |   Type = 192  |  Flags = 0x00 |        Length = Variable      |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                      New Cumulative TSN                       |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |         Stream-1              |       Stream Sequence-1       |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! /                              ...                              /
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```

use super::{ChunkCodec, types};
use crate::wire::WireError;
use crate::wire::buf::{Reader, put_u16, put_u32};

/// The largest SSN skipped on one ordered stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ForwardTsnStream {
    pub stream_id: u16,
    pub ssn: u16,
}

/// A FORWARD TSN chunk: the receiver moves its cumulative TSN to `new_cum_tsn`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForwardTsn {
    pub new_cum_tsn: u32,
    pub streams: Vec<ForwardTsnStream>,
}

impl<'a> ChunkCodec<'a> for ForwardTsn {
    const TYPE: u8 = types::FORWARD_TSN;
    const NAME: &'static str = "FORWARD TSN";

    fn decode(_flags: u8, value: &'a [u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(value, Self::NAME);
        let new_cum_tsn = r.u32()?;
        if r.remaining() % 4 != 0 {
            return Err(WireError::InvalidLength {
                what: Self::NAME,
                len: 4 + value.len(),
                expected: "8 plus 4 bytes per stream",
            });
        }
        let mut streams = Vec::with_capacity(r.remaining() / 4);
        while !r.is_empty() {
            streams.push(ForwardTsnStream {
                stream_id: r.u16()?,
                ssn: r.u16()?,
            });
        }
        Ok(ForwardTsn {
            new_cum_tsn,
            streams,
        })
    }

    fn value_len(&self) -> usize {
        4 + 4 * self.streams.len()
    }

    fn encode_value(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        put_u32(out, self.new_cum_tsn);
        for s in &self.streams {
            put_u16(out, s.stream_id);
            put_u16(out, s.ssn);
        }
        Ok(())
    }
}
