//! HEARTBEAT chunk (type 4), RFC 9260 3.3.5; HEARTBEAT ACK (type 5, 3.3.6)
//! shares the layout.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |   Type = 4    |  Chunk Flags  |       Heartbeat Length        |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! \            Heartbeat Information TLV (Variable-Length)        \
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! The Heartbeat Info parameter (type 1) is mandatory; its value is opaque to
//! the receiver, which echoes it back unchanged in HEARTBEAT ACK.

use std::borrow::Cow;

use super::{ChunkCodec, types};
use crate::wire::WireError;
use crate::wire::param::Param;
use crate::wire::tlv::{decode_list, encode_list, list_len};

/// HEARTBEAT (`ACK = false`) or HEARTBEAT ACK (`ACK = true`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatChunk<'a, const ACK: bool> {
    /// The parameters; the first Heartbeat Info among them is the one that counts.
    pub params: Vec<Param<'a>>,
}

/// A HEARTBEAT chunk.
pub type Heartbeat<'a> = HeartbeatChunk<'a, false>;

impl<'a, const ACK: bool> HeartbeatChunk<'a, ACK> {
    /// A chunk carrying one Heartbeat Info parameter.
    pub fn new(info: impl Into<Cow<'a, [u8]>>) -> Self {
        Self {
            params: vec![Param::HeartbeatInfo(info.into())],
        }
    }

    /// The Heartbeat Info value.
    pub fn info(&self) -> Option<&[u8]> {
        self.params.iter().find_map(|p| match p {
            Param::HeartbeatInfo(i) => Some(&i[..]),
            _ => None,
        })
    }
}

impl<'a, const ACK: bool> ChunkCodec<'a> for HeartbeatChunk<'a, ACK> {
    const TYPE: u8 = if ACK {
        types::HEARTBEAT_ACK
    } else {
        types::HEARTBEAT
    };
    const NAME: &'static str = if ACK { "HEARTBEAT ACK" } else { "HEARTBEAT" };

    fn decode(_flags: u8, value: &'a [u8]) -> Result<Self, WireError> {
        let chunk = Self {
            params: decode_list(value, Self::NAME)?,
        };
        if chunk.info().is_none() {
            return Err(WireError::MissingParameter {
                what: Self::NAME,
                missing: "Heartbeat Info parameter",
            });
        }
        Ok(chunk)
    }

    fn value_len(&self) -> usize {
        list_len(&self.params)
    }

    fn encode_value(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        encode_list(&self.params, out)
    }
}
