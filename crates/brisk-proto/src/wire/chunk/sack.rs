//! SACK chunk (type 3), RFC 9260 3.3.4.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |   Type = 3    |  Chunk Flags  |         Chunk Length          |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                      Cumulative TSN Ack                       |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |          Advertised Receiver Window Credit (a_rwnd)           |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! | Number of Gap Ack Blocks = N  |  Number of Duplicate TSNs = M |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |    Gap Ack Block #1 Start     |     Gap Ack Block #1 End      |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! /                              ...                              /
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                        Duplicate TSN 1                        |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! /                              ...                              /
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! Gap ack block offsets are relative to the Cumulative TSN Ack.

use super::{ChunkCodec, types};
use crate::wire::WireError;
use crate::wire::buf::{Reader, put_u16, put_u32};

/// One gap ack block: TSNs `cum_tsn_ack + start ..= cum_tsn_ack + end` were received.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GapBlock {
    pub start: u16,
    pub end: u16,
}

/// A SACK chunk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sack {
    pub cum_tsn_ack: u32,
    pub a_rwnd: u32,
    pub gap_blocks: Vec<GapBlock>,
    pub dup_tsns: Vec<u32>,
}

impl<'a> ChunkCodec<'a> for Sack {
    const TYPE: u8 = types::SACK;
    const NAME: &'static str = "SACK";

    fn decode(_flags: u8, value: &'a [u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(value, Self::NAME);
        let cum_tsn_ack = r.u32()?;
        let a_rwnd = r.u32()?;
        let gaps = usize::from(r.u16()?);
        let dups = usize::from(r.u16()?);
        if r.remaining() != 4 * (gaps + dups) {
            return Err(WireError::InvalidLength {
                what: Self::NAME,
                len: 4 + value.len(),
                expected: "16 plus 4 bytes per gap ack block and per duplicate TSN",
            });
        }
        let gap_blocks = (0..gaps)
            .map(|_| {
                Ok(GapBlock {
                    start: r.u16()?,
                    end: r.u16()?,
                })
            })
            .collect::<Result<_, WireError>>()?;
        let dup_tsns = (0..dups).map(|_| r.u32()).collect::<Result<_, _>>()?;
        Ok(Sack {
            cum_tsn_ack,
            a_rwnd,
            gap_blocks,
            dup_tsns,
        })
    }

    fn value_len(&self) -> usize {
        12 + 4 * (self.gap_blocks.len() + self.dup_tsns.len())
    }

    fn encode_value(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        let count = |n: usize| {
            u16::try_from(n).map_err(|_| WireError::TooLong {
                what: Self::NAME,
                len: n,
            })
        };
        put_u32(out, self.cum_tsn_ack);
        put_u32(out, self.a_rwnd);
        put_u16(out, count(self.gap_blocks.len())?);
        put_u16(out, count(self.dup_tsns.len())?);
        for b in &self.gap_blocks {
            put_u16(out, b.start);
            put_u16(out, b.end);
        }
        for t in &self.dup_tsns {
            put_u32(out, *t);
        }
        Ok(())
    }
}
