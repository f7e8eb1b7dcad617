//! Chunks of a type this codec does not know (RFC 9260 3.2).
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |AB  Chunk Type |  Chunk Flags  |        Chunk Length           |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! \                          Chunk Value                          \
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! The two high bits AB of the type say what the receiver must do; see
//! [`UnrecognizedAction`].

use std::borrow::Cow;

use crate::wire::WireError;
use crate::wire::buf::{len16, pad_from, padded, put_u16};
use crate::wire::unrecognized::UnrecognizedAction;

/// An unknown chunk, kept as raw bytes so it can be reported or forwarded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownChunk<'a> {
    pub typ: u8,
    pub flags: u8,
    pub value: Cow<'a, [u8]>,
}

impl<'a> UnknownChunk<'a> {
    pub const NAME: &'static str = "unknown chunk";

    pub fn new(typ: u8, flags: u8, value: impl Into<Cow<'a, [u8]>>) -> Self {
        Self {
            typ,
            flags,
            value: value.into(),
        }
    }

    /// RFC 9260 3.2: what the receiver must do with this chunk.
    pub fn action(&self) -> UnrecognizedAction {
        UnrecognizedAction::for_chunk_type(self.typ)
    }

    /// The bytes the chunk takes in a packet, padding included.
    pub fn encoded_len(&self) -> usize {
        padded(4 + self.value.len())
    }

    /// Appends the chunk, header and padding included. The same bytes, unpadded,
    /// are what an Unrecognized Chunk Type error cause carries.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        let start = out.len();
        out.push(self.typ);
        out.push(self.flags);
        put_u16(out, len16(Self::NAME, 4 + self.value.len())?);
        out.extend_from_slice(&self.value);
        pad_from(out, start);
        Ok(())
    }
}
