//! COOKIE ACK chunk (type 11), RFC 9260 3.3.12.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |   Type = 11   |  Chunk Flags  |          Length = 4           |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```

use super::{ChunkCodec, expect_empty, types};
use crate::wire::WireError;

/// A COOKIE ACK chunk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CookieAck;

impl<'a> ChunkCodec<'a> for CookieAck {
    const TYPE: u8 = types::COOKIE_ACK;
    const NAME: &'static str = "COOKIE ACK";

    fn decode(_flags: u8, value: &'a [u8]) -> Result<Self, WireError> {
        expect_empty(Self::NAME, value)?;
        Ok(CookieAck)
    }

    fn value_len(&self) -> usize {
        0
    }

    fn encode_value(&self, _out: &mut Vec<u8>) -> Result<(), WireError> {
        Ok(())
    }
}
