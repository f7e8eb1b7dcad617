//! RE-CONFIG chunk (type 130), RFC 6525 3.1, and its request and response
//! parameters (RFC 6525 4.1 to 4.6).
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! | Type = 130    |  Chunk Flags  |      Chunk Length             |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! \                  Re-configuration Parameter                   \
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! \          Re-configuration Parameter (optional)                \
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! Parameter layouts (each after the 4-byte parameter header):
//!
//! ```text
//! 13 Outgoing SSN Reset Request: request seq, response seq, sender's last
//!    assigned TSN, then zero or more 16-bit stream numbers
//! 14 Incoming SSN Reset Request: request seq, then stream numbers
//! 15 SSN/TSN Reset Request:      request seq
//! 16 Re-configuration Response:  response seq, result, optionally the sender's
//!    next TSN and the receiver's next TSN
//! 17 Add Outgoing Streams Request: request seq, number of new streams (16), reserved (16)
//! 18 Add Incoming Streams Request: same as 17
//! ```

use std::borrow::Cow;

use super::{ChunkCodec, types};
use crate::wire::WireError;
use crate::wire::buf::{Reader, put_u16, put_u32};
use crate::wire::tlv::{Tlv, decode_list, encode_list, list_len};

/// The result field of a Re-configuration Response (RFC 6525 4.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReconfigResult {
    SuccessNothingToDo,
    SuccessPerformed,
    Denied,
    ErrorWrongSsn,
    ErrorRequestAlreadyInProgress,
    ErrorBadSequenceNumber,
    InProgress,
    /// A result code RFC 6525 does not define.
    Other(u32),
}

impl ReconfigResult {
    pub const fn from_code(code: u32) -> Self {
        match code {
            0 => Self::SuccessNothingToDo,
            1 => Self::SuccessPerformed,
            2 => Self::Denied,
            3 => Self::ErrorWrongSsn,
            4 => Self::ErrorRequestAlreadyInProgress,
            5 => Self::ErrorBadSequenceNumber,
            6 => Self::InProgress,
            other => Self::Other(other),
        }
    }

    pub const fn code(self) -> u32 {
        match self {
            Self::SuccessNothingToDo => 0,
            Self::SuccessPerformed => 1,
            Self::Denied => 2,
            Self::ErrorWrongSsn => 3,
            Self::ErrorRequestAlreadyInProgress => 4,
            Self::ErrorBadSequenceNumber => 5,
            Self::InProgress => 6,
            Self::Other(code) => code,
        }
    }
}

/// A parameter of a RE-CONFIG chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReconfigParam<'a> {
    /// 13, RFC 6525 4.1. An empty `streams` means all streams.
    OutgoingSsnReset {
        request_seq: u32,
        response_seq: u32,
        last_tsn: u32,
        streams: Vec<u16>,
    },
    /// 14, RFC 6525 4.2. An empty `streams` means all streams.
    IncomingSsnReset { request_seq: u32, streams: Vec<u16> },
    /// 15, RFC 6525 4.3.
    SsnTsnReset { request_seq: u32 },
    /// 16, RFC 6525 4.4. `next_tsns` is (sender's next TSN, receiver's next TSN),
    /// present only in answer to an SSN/TSN Reset Request.
    Response {
        response_seq: u32,
        result: ReconfigResult,
        next_tsns: Option<(u32, u32)>,
    },
    /// 17, RFC 6525 4.5.
    AddOutgoingStreams { request_seq: u32, new_streams: u16 },
    /// 18, RFC 6525 4.6.
    AddIncomingStreams { request_seq: u32, new_streams: u16 },
    /// Any other parameter type, kept whole.
    Unknown { typ: u16, value: Cow<'a, [u8]> },
}

impl ReconfigParam<'_> {
    pub const OUTGOING_SSN_RESET: u16 = 13;
    pub const INCOMING_SSN_RESET: u16 = 14;
    pub const SSN_TSN_RESET: u16 = 15;
    pub const RESPONSE: u16 = 16;
    pub const ADD_OUTGOING_STREAMS: u16 = 17;
    pub const ADD_INCOMING_STREAMS: u16 = 18;

    /// Whether `typ` is one this codec decodes into a typed variant.
    pub const fn is_known_type(typ: u16) -> bool {
        matches!(typ, 13..=18)
    }
}

fn streams(r: &mut Reader<'_>, what: &'static str, total: usize) -> Result<Vec<u16>, WireError> {
    if r.remaining() % 2 != 0 {
        return Err(WireError::InvalidLength {
            what,
            len: total,
            expected: "the fixed fields plus 2 bytes per stream number",
        });
    }
    let mut out = Vec::with_capacity(r.remaining() / 2);
    while !r.is_empty() {
        out.push(r.u16()?);
    }
    Ok(out)
}

impl<'a> Tlv<'a> for ReconfigParam<'a> {
    const WHAT: &'static str = "re-configuration parameter";

    fn tlv_type(&self) -> u16 {
        match self {
            Self::OutgoingSsnReset { .. } => Self::OUTGOING_SSN_RESET,
            Self::IncomingSsnReset { .. } => Self::INCOMING_SSN_RESET,
            Self::SsnTsnReset { .. } => Self::SSN_TSN_RESET,
            Self::Response { .. } => Self::RESPONSE,
            Self::AddOutgoingStreams { .. } => Self::ADD_OUTGOING_STREAMS,
            Self::AddIncomingStreams { .. } => Self::ADD_INCOMING_STREAMS,
            Self::Unknown { typ, .. } => *typ,
        }
    }

    fn value_len(&self) -> usize {
        match self {
            Self::OutgoingSsnReset { streams, .. } => 12 + 2 * streams.len(),
            Self::IncomingSsnReset { streams, .. } => 4 + 2 * streams.len(),
            Self::SsnTsnReset { .. } => 4,
            Self::Response { next_tsns, .. } => 8 + if next_tsns.is_some() { 8 } else { 0 },
            Self::AddOutgoingStreams { .. } | Self::AddIncomingStreams { .. } => 8,
            Self::Unknown { value, .. } => value.len(),
        }
    }

    fn encode_value(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        match self {
            Self::OutgoingSsnReset {
                request_seq,
                response_seq,
                last_tsn,
                streams,
            } => {
                put_u32(out, *request_seq);
                put_u32(out, *response_seq);
                put_u32(out, *last_tsn);
                streams.iter().for_each(|s| put_u16(out, *s));
            }
            Self::IncomingSsnReset {
                request_seq,
                streams,
            } => {
                put_u32(out, *request_seq);
                streams.iter().for_each(|s| put_u16(out, *s));
            }
            Self::SsnTsnReset { request_seq } => put_u32(out, *request_seq),
            Self::Response {
                response_seq,
                result,
                next_tsns,
            } => {
                put_u32(out, *response_seq);
                put_u32(out, result.code());
                if let Some((sender, receiver)) = next_tsns {
                    put_u32(out, *sender);
                    put_u32(out, *receiver);
                }
            }
            Self::AddOutgoingStreams {
                request_seq,
                new_streams,
            }
            | Self::AddIncomingStreams {
                request_seq,
                new_streams,
            } => {
                put_u32(out, *request_seq);
                put_u16(out, *new_streams);
                put_u16(out, 0);
            }
            Self::Unknown { value, .. } => out.extend_from_slice(value),
        }
        Ok(())
    }

    fn decode(typ: u16, value: &'a [u8]) -> Result<Self, WireError> {
        let total = 4 + value.len();
        Ok(match typ {
            Self::OUTGOING_SSN_RESET => {
                let what = "Outgoing SSN Reset Request parameter";
                let mut r = Reader::new(value, what);
                Self::OutgoingSsnReset {
                    request_seq: r.u32()?,
                    response_seq: r.u32()?,
                    last_tsn: r.u32()?,
                    streams: streams(&mut r, what, total)?,
                }
            }
            Self::INCOMING_SSN_RESET => {
                let what = "Incoming SSN Reset Request parameter";
                let mut r = Reader::new(value, what);
                Self::IncomingSsnReset {
                    request_seq: r.u32()?,
                    streams: streams(&mut r, what, total)?,
                }
            }
            Self::SSN_TSN_RESET => {
                let mut r = Reader::new(value, "SSN/TSN Reset Request parameter");
                let request_seq = r.u32()?;
                r.finish(total, "exactly 8")?;
                Self::SsnTsnReset { request_seq }
            }
            Self::RESPONSE => {
                let mut r = Reader::new(value, "Re-configuration Response parameter");
                let response_seq = r.u32()?;
                let result = ReconfigResult::from_code(r.u32()?);
                let next_tsns = match r.remaining() {
                    0 => None,
                    8 => Some((r.u32()?, r.u32()?)),
                    _ => {
                        return Err(WireError::InvalidLength {
                            what: "Re-configuration Response parameter",
                            len: total,
                            expected: "12, or 20 with both next TSNs",
                        });
                    }
                };
                Self::Response {
                    response_seq,
                    result,
                    next_tsns,
                }
            }
            Self::ADD_OUTGOING_STREAMS | Self::ADD_INCOMING_STREAMS => {
                let mut r = Reader::new(value, "Add Streams Request parameter");
                let request_seq = r.u32()?;
                let new_streams = r.u16()?;
                let _reserved = r.u16()?;
                r.finish(total, "exactly 12")?;
                if typ == Self::ADD_OUTGOING_STREAMS {
                    Self::AddOutgoingStreams {
                        request_seq,
                        new_streams,
                    }
                } else {
                    Self::AddIncomingStreams {
                        request_seq,
                        new_streams,
                    }
                }
            }
            typ => Self::Unknown {
                typ,
                value: Cow::Borrowed(value),
            },
        })
    }
}

/// A RE-CONFIG chunk: one request or response, or two of them (RFC 6525 3.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReConfig<'a> {
    pub params: Vec<ReconfigParam<'a>>,
}

impl<'a> ChunkCodec<'a> for ReConfig<'a> {
    const TYPE: u8 = types::RECONFIG;
    const NAME: &'static str = "RE-CONFIG";

    fn decode(_flags: u8, value: &'a [u8]) -> Result<Self, WireError> {
        let params: Vec<ReconfigParam<'a>> = decode_list(value, Self::NAME)?;
        if !(1..=2).contains(&params.len()) {
            return Err(WireError::InvalidValue {
                what: Self::NAME,
                value: params.len() as u64,
                expected: "one or two re-configuration parameters",
            });
        }
        Ok(ReConfig { params })
    }

    fn value_len(&self) -> usize {
        list_len(&self.params)
    }

    fn encode_value(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        encode_list(&self.params, out)
    }
}
