//! I-DATA chunk (type 64), RFC 8260 2.1: DATA with a message identifier and a
//! fragment sequence number, so that large messages do not block a stream.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |   Type = 64   |  Res  |I|U|B|E|       Length = Variable       |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                              TSN                              |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |        Stream Identifier      |           Reserved            |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                      Message Identifier                       |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |    Payload Protocol Identifier / Fragment Sequence Number     |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! \                           User Data                           \
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! The fifth word is the PPID when B is set (the first fragment, whose FSN is
//! implicitly 0) and the FSN otherwise.

use std::borrow::Cow;

use super::{ChunkCodec, DataFlags, types};
use crate::wire::WireError;
use crate::wire::buf::{Reader, put_u16, put_u32};

/// The word after the message identifier: a PPID on a first fragment, an FSN after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PpidOrFsn {
    /// B set: the payload protocol identifier; the FSN is 0.
    Ppid(u32),
    /// B clear: the fragment sequence number.
    Fsn(u32),
}

/// An I-DATA chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IData<'a> {
    pub flags: DataFlags,
    pub tsn: u32,
    pub stream_id: u16,
    pub mid: u32,
    pub ppid_or_fsn: PpidOrFsn,
    pub payload: Cow<'a, [u8]>,
}

impl IData<'_> {
    /// Bytes of an I-DATA chunk before the user data.
    pub const HEADER_LEN: usize = 20;

    /// The fragment sequence number: 0 on the first fragment.
    pub fn fsn(&self) -> u32 {
        match self.ppid_or_fsn {
            PpidOrFsn::Ppid(_) => 0,
            PpidOrFsn::Fsn(fsn) => fsn,
        }
    }
}

impl<'a> ChunkCodec<'a> for IData<'a> {
    const TYPE: u8 = types::IDATA;
    const NAME: &'static str = "I-DATA";

    fn decode(flags: u8, value: &'a [u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(value, Self::NAME);
        if r.remaining() < 16 {
            return Err(WireError::InvalidLength {
                what: Self::NAME,
                len: 4 + value.len(),
                expected: "at least 20",
            });
        }
        let flags = DataFlags::from_bits(flags);
        let tsn = r.u32()?;
        let stream_id = r.u16()?;
        let _reserved = r.u16()?; // RFC 8260 2.1: ignored on receipt
        let mid = r.u32()?;
        let word = r.u32()?;
        Ok(IData {
            flags,
            tsn,
            stream_id,
            mid,
            ppid_or_fsn: if flags.beginning {
                PpidOrFsn::Ppid(word)
            } else {
                PpidOrFsn::Fsn(word)
            },
            payload: Cow::Borrowed(r.rest()),
        })
    }

    fn flags(&self) -> u8 {
        self.flags.bits()
    }

    fn value_len(&self) -> usize {
        16 + self.payload.len()
    }

    fn encode_value(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        let word = match (self.flags.beginning, self.ppid_or_fsn) {
            (true, PpidOrFsn::Ppid(v)) | (false, PpidOrFsn::Fsn(v)) => v,
            _ => {
                return Err(WireError::InvalidValue {
                    what: Self::NAME,
                    value: u64::from(self.flags.bits()),
                    expected: "a PPID exactly when the B flag is set, an FSN otherwise",
                });
            }
        };
        put_u32(out, self.tsn);
        put_u16(out, self.stream_id);
        put_u16(out, 0);
        put_u32(out, self.mid);
        put_u32(out, word);
        out.extend_from_slice(&self.payload);
        Ok(())
    }
}
