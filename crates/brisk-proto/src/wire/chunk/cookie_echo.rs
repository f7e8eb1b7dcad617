//! COOKIE ECHO chunk (type 10), RFC 9260 3.3.11.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |   Type = 10   |  Chunk Flags  |            Length             |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! /                            Cookie                             /
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! The cookie is the State Cookie value of the INIT ACK, echoed unchanged.

use std::borrow::Cow;

use super::{ChunkCodec, types};
use crate::wire::WireError;

/// A COOKIE ECHO chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CookieEcho<'a> {
    pub cookie: Cow<'a, [u8]>,
}

impl<'a> ChunkCodec<'a> for CookieEcho<'a> {
    const TYPE: u8 = types::COOKIE_ECHO;
    const NAME: &'static str = "COOKIE ECHO";

    fn decode(_flags: u8, value: &'a [u8]) -> Result<Self, WireError> {
        Ok(CookieEcho {
            cookie: Cow::Borrowed(value),
        })
    }

    fn value_len(&self) -> usize {
        self.cookie.len()
    }

    fn encode_value(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        out.extend_from_slice(&self.cookie);
        Ok(())
    }
}
