//! SHUTDOWN ACK chunk (type 8), RFC 9260 3.3.9.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |   Type = 8    |  Chunk Flags  |          Length = 4           |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```

use super::{ChunkCodec, expect_empty, types};
use crate::wire::WireError;

/// A SHUTDOWN ACK chunk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShutdownAck;

impl<'a> ChunkCodec<'a> for ShutdownAck {
    const TYPE: u8 = types::SHUTDOWN_ACK;
    const NAME: &'static str = "SHUTDOWN ACK";

    fn decode(_flags: u8, value: &'a [u8]) -> Result<Self, WireError> {
        expect_empty(Self::NAME, value)?;
        Ok(ShutdownAck)
    }

    fn value_len(&self) -> usize {
        0
    }

    fn encode_value(&self, _out: &mut Vec<u8>) -> Result<(), WireError> {
        Ok(())
    }
}
