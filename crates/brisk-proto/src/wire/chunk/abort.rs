//! ABORT chunk (type 6), RFC 9260 3.3.7.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |   Type = 6    |  Reserved   |T|            Length             |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! \                   zero or more Error Causes                   \
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! T set: the verification tag is the receiver's own (reflected), because the
//! sender had no TCB (RFC 9260 8.5.1).

use super::{ChunkCodec, types};
use crate::wire::WireError;
use crate::wire::cause::ErrorCause;
use crate::wire::tlv::{decode_list, encode_list, list_len};

/// An ABORT chunk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Abort<'a> {
    /// The T bit.
    pub reflected_tag: bool,
    pub causes: Vec<ErrorCause<'a>>,
}

impl Abort<'_> {
    pub const T: u8 = 0x01;
}

impl<'a> ChunkCodec<'a> for Abort<'a> {
    const TYPE: u8 = types::ABORT;
    const NAME: &'static str = "ABORT";

    fn decode(flags: u8, value: &'a [u8]) -> Result<Self, WireError> {
        Ok(Abort {
            reflected_tag: flags & Self::T != 0,
            causes: decode_list(value, Self::NAME)?,
        })
    }

    fn flags(&self) -> u8 {
        if self.reflected_tag { Self::T } else { 0 }
    }

    fn value_len(&self) -> usize {
        list_len(&self.causes)
    }

    fn encode_value(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        encode_list(&self.causes, out)
    }
}
