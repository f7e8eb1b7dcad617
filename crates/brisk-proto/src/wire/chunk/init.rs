//! INIT chunk (type 1), RFC 9260 3.3.2; INIT ACK (type 2, 3.3.3) shares the layout.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |   Type = 1    |  Chunk Flags  |      Chunk Length             |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                         Initiate Tag                          |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |           Advertised Receiver Window Credit (a_rwnd)          |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |  Number of Outbound Streams   |   Number of Inbound Streams   |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                          Initial TSN                          |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! \              Optional/Variable-Length Parameters              \
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! The codec checks the layout only. Semantic rules (a zero Initiate Tag, zero
//! streams, a missing State Cookie in INIT ACK) are the association's to answer,
//! because RFC 9260 5.1 prescribes a response for each.

use super::{ChunkCodec, types};
use crate::wire::WireError;
use crate::wire::buf::{Reader, put_u16, put_u32};
use crate::wire::param::Param;
use crate::wire::tlv::{decode_list, encode_list, list_len};

/// INIT (`ACK = false`) or INIT ACK (`ACK = true`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitChunk<'a, const ACK: bool> {
    pub initiate_tag: u32,
    pub a_rwnd: u32,
    pub outbound_streams: u16,
    pub inbound_streams: u16,
    pub initial_tsn: u32,
    pub params: Vec<Param<'a>>,
}

/// An INIT chunk.
pub type Init<'a> = InitChunk<'a, false>;

impl<const ACK: bool> InitChunk<'_, ACK> {
    /// The State Cookie parameter's value, if present.
    pub fn state_cookie(&self) -> Option<&[u8]> {
        self.params.iter().find_map(|p| match p {
            Param::StateCookie(c) => Some(&c[..]),
            _ => None,
        })
    }

    /// The chunk types listed in a Supported Extensions parameter (RFC 5061 4.2.7).
    pub fn supported_extensions(&self) -> &[u8] {
        self.params
            .iter()
            .find_map(|p| match p {
                Param::SupportedExtensions(t) => Some(&t[..]),
                _ => None,
            })
            .unwrap_or(&[])
    }

    /// Whether the sender supports chunk type `typ`, by Supported Extensions.
    pub fn supports(&self, typ: u8) -> bool {
        self.supported_extensions().contains(&typ)
    }
}

impl<'a, const ACK: bool> ChunkCodec<'a> for InitChunk<'a, ACK> {
    const TYPE: u8 = if ACK { types::INIT_ACK } else { types::INIT };
    const NAME: &'static str = if ACK { "INIT ACK" } else { "INIT" };

    fn decode(_flags: u8, value: &'a [u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(value, Self::NAME);
        if r.remaining() < 16 {
            return Err(WireError::InvalidLength {
                what: Self::NAME,
                len: 4 + value.len(),
                expected: "at least 20",
            });
        }
        Ok(InitChunk {
            initiate_tag: r.u32()?,
            a_rwnd: r.u32()?,
            outbound_streams: r.u16()?,
            inbound_streams: r.u16()?,
            initial_tsn: r.u32()?,
            params: decode_list(r.rest(), Self::NAME)?,
        })
    }

    fn value_len(&self) -> usize {
        16 + list_len(&self.params)
    }

    fn encode_value(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        put_u32(out, self.initiate_tag);
        put_u32(out, self.a_rwnd);
        put_u16(out, self.outbound_streams);
        put_u16(out, self.inbound_streams);
        put_u32(out, self.initial_tsn);
        encode_list(&self.params, out)
    }
}
