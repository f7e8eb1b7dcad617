//! DATA chunk (type 0), RFC 9260 3.3.1.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |   Type = 0    |  Res  |I|U|B|E|            Length             |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                              TSN                              |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |      Stream Identifier S      |   Stream Sequence Number n    |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                  Payload Protocol Identifier                  |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! \                 User Data (seq n of Stream S)                 \
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! A DATA chunk with no user data decodes; the receiver answers it with an
//! ABORT carrying a No User Data cause (RFC 9260 6.2).

use std::borrow::Cow;

use super::{ChunkCodec, types};
use crate::wire::WireError;
use crate::wire::buf::{Reader, put_u16, put_u32};

/// The I, U, B and E flags shared by DATA and I-DATA (RFC 9260 3.3.1, RFC 8260 2.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct DataFlags {
    /// I: the sender asks for an immediate SACK (RFC 9260 3.3.1, RFC 7053).
    pub immediate: bool,
    /// U: unordered; the stream sequence number is ignored.
    pub unordered: bool,
    /// B: the first fragment of a user message.
    pub beginning: bool,
    /// E: the last fragment of a user message.
    pub ending: bool,
}

impl DataFlags {
    pub const E: u8 = 0x01;
    pub const B: u8 = 0x02;
    pub const U: u8 = 0x04;
    pub const I: u8 = 0x08;

    /// A whole, unfragmented, ordered message.
    pub const UNFRAGMENTED: Self = Self {
        immediate: false,
        unordered: false,
        beginning: true,
        ending: true,
    };

    /// Reads the flags; the reserved bits are ignored on receipt.
    pub const fn from_bits(bits: u8) -> Self {
        Self {
            immediate: bits & Self::I != 0,
            unordered: bits & Self::U != 0,
            beginning: bits & Self::B != 0,
            ending: bits & Self::E != 0,
        }
    }

    pub const fn bits(self) -> u8 {
        (self.immediate as u8 * Self::I)
            | (self.unordered as u8 * Self::U)
            | (self.beginning as u8 * Self::B)
            | (self.ending as u8 * Self::E)
    }
}

/// A DATA chunk: one fragment (or all) of a user message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Data<'a> {
    pub flags: DataFlags,
    pub tsn: u32,
    pub stream_id: u16,
    pub ssn: u16,
    pub ppid: u32,
    pub payload: Cow<'a, [u8]>,
}

impl Data<'_> {
    /// Bytes of a DATA chunk before the user data.
    pub const HEADER_LEN: usize = 16;
}

impl<'a> ChunkCodec<'a> for Data<'a> {
    const TYPE: u8 = types::DATA;
    const NAME: &'static str = "DATA";

    fn decode(flags: u8, value: &'a [u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(value, Self::NAME);
        if r.remaining() < 12 {
            return Err(WireError::InvalidLength {
                what: Self::NAME,
                len: 4 + value.len(),
                expected: "at least 16",
            });
        }
        Ok(Data {
            flags: DataFlags::from_bits(flags),
            tsn: r.u32()?,
            stream_id: r.u16()?,
            ssn: r.u16()?,
            ppid: r.u32()?,
            payload: Cow::Borrowed(r.rest()),
        })
    }

    fn flags(&self) -> u8 {
        self.flags.bits()
    }

    fn value_len(&self) -> usize {
        12 + self.payload.len()
    }

    fn encode_value(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        put_u32(out, self.tsn);
        put_u16(out, self.stream_id);
        put_u16(out, self.ssn);
        put_u32(out, self.ppid);
        out.extend_from_slice(&self.payload);
        Ok(())
    }
}
