//! Operation Error (ERROR) chunk (type 9), RFC 9260 3.3.10.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |   Type = 9    |  Chunk Flags  |            Length             |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! \                    one or more Error Causes                   \
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```

use super::{ChunkCodec, types};
use crate::wire::WireError;
use crate::wire::cause::ErrorCause;
use crate::wire::tlv::{decode_list, encode_list, list_len};

/// An ERROR chunk: conditions that do not end the association.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OperationError<'a> {
    pub causes: Vec<ErrorCause<'a>>,
}

impl<'a> ChunkCodec<'a> for OperationError<'a> {
    const TYPE: u8 = types::ERROR;
    const NAME: &'static str = "ERROR";

    fn decode(_flags: u8, value: &'a [u8]) -> Result<Self, WireError> {
        Ok(OperationError {
            causes: decode_list(value, Self::NAME)?,
        })
    }

    fn value_len(&self) -> usize {
        list_len(&self.causes)
    }

    fn encode_value(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        encode_list(&self.causes, out)
    }
}
