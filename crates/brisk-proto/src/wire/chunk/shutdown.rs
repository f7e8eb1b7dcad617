//! SHUTDOWN chunk (type 7), RFC 9260 3.3.8.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |   Type = 7    |  Chunk Flags  |          Length = 8           |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                      Cumulative TSN Ack                       |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```

use super::{ChunkCodec, types};
use crate::wire::WireError;
use crate::wire::buf::{Reader, put_u32};

/// A SHUTDOWN chunk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shutdown {
    pub cum_tsn_ack: u32,
}

impl<'a> ChunkCodec<'a> for Shutdown {
    const TYPE: u8 = types::SHUTDOWN;
    const NAME: &'static str = "SHUTDOWN";

    fn decode(_flags: u8, value: &'a [u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(value, Self::NAME);
        let cum_tsn_ack = r.u32()?;
        r.finish(4 + value.len(), "exactly 8")?;
        Ok(Shutdown { cum_tsn_ack })
    }

    fn value_len(&self) -> usize {
        4
    }

    fn encode_value(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        put_u32(out, self.cum_tsn_ack);
        Ok(())
    }
}
