//! SHUTDOWN COMPLETE chunk (type 14), RFC 9260 3.3.13.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |   Type = 14   |  Reserved   |T|          Length = 4           |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! T set: the verification tag is reflected (RFC 9260 8.5.1).

use super::{ChunkCodec, expect_empty, types};
use crate::wire::WireError;

/// A SHUTDOWN COMPLETE chunk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShutdownComplete {
    /// The T bit.
    pub reflected_tag: bool,
}

impl ShutdownComplete {
    pub const T: u8 = 0x01;
}

impl<'a> ChunkCodec<'a> for ShutdownComplete {
    const TYPE: u8 = types::SHUTDOWN_COMPLETE;
    const NAME: &'static str = "SHUTDOWN COMPLETE";

    fn decode(flags: u8, value: &'a [u8]) -> Result<Self, WireError> {
        expect_empty(Self::NAME, value)?;
        Ok(ShutdownComplete {
            reflected_tag: flags & Self::T != 0,
        })
    }

    fn flags(&self) -> u8 {
        if self.reflected_tag { Self::T } else { 0 }
    }

    fn value_len(&self) -> usize {
        0
    }

    fn encode_value(&self, _out: &mut Vec<u8>) -> Result<(), WireError> {
        Ok(())
    }
}
