//! Error causes carried by ERROR and ABORT chunks (RFC 9260 3.3.10), plus the
//! RFC 4895 one. RFC 6525 defines no error causes: stream reconfiguration reports
//! its outcome as a [`ReconfigResult`](super::chunk::reconfig::ReconfigResult).
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |           Cause Code          |         Cause Length          |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! \                    Cause-Specific Information                 \
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```

use std::borrow::Cow;

use super::WireError;
use super::buf::{Reader, put_u16, put_u32};
use super::tlv::Tlv;

/// One error cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorCause<'a> {
    /// 1, RFC 9260 3.3.10.1: DATA for a stream that does not exist.
    InvalidStreamIdentifier { stream_id: u16 },
    /// 2, RFC 9260 3.3.10.2: the INIT or INIT ACK lacks these parameter types.
    MissingMandatoryParameter { types: Vec<u16> },
    /// 3, RFC 9260 3.3.10.3: a cookie arrived this many microseconds after it expired.
    StaleCookie { staleness_us: u32 },
    /// 4, RFC 9260 3.3.10.4.
    OutOfResource,
    /// 5, RFC 9260 3.3.10.5: the address parameter (type, length, value) that failed.
    UnresolvableAddress(Cow<'a, [u8]>),
    /// 6, RFC 9260 3.3.10.6: the unrecognized chunk (type, flags, length, value).
    UnrecognizedChunkType(Cow<'a, [u8]>),
    /// 7, RFC 9260 3.3.10.7.
    InvalidMandatoryParameter,
    /// 8, RFC 9260 3.3.10.8: the unrecognized parameters, whole.
    UnrecognizedParameters(Cow<'a, [u8]>),
    /// 9, RFC 9260 3.3.10.9: a DATA chunk with no user data.
    NoUserData { tsn: u32 },
    /// 10, RFC 9260 3.3.10.10.
    CookieReceivedWhileShuttingDown,
    /// 11, RFC 9260 3.3.10.11: the new addresses, as address parameters.
    RestartWithNewAddresses(Cow<'a, [u8]>),
    /// 12, RFC 9260 3.3.10.12: the upper layer's reason.
    UserInitiatedAbort(Cow<'a, [u8]>),
    /// 13, RFC 9260 3.3.10.13: additional information about the violation.
    ProtocolViolation(Cow<'a, [u8]>),
    /// 0x0105, RFC 4895 4.1: the peer asked for an HMAC we do not support.
    UnsupportedHmacIdentifier { hmac_id: u16 },
    /// Any other cause, kept whole.
    Unknown { code: u16, value: Cow<'a, [u8]> },
}

impl ErrorCause<'_> {
    pub const INVALID_STREAM_IDENTIFIER: u16 = 1;
    pub const MISSING_MANDATORY_PARAMETER: u16 = 2;
    pub const STALE_COOKIE: u16 = 3;
    pub const OUT_OF_RESOURCE: u16 = 4;
    pub const UNRESOLVABLE_ADDRESS: u16 = 5;
    pub const UNRECOGNIZED_CHUNK_TYPE: u16 = 6;
    pub const INVALID_MANDATORY_PARAMETER: u16 = 7;
    pub const UNRECOGNIZED_PARAMETERS: u16 = 8;
    pub const NO_USER_DATA: u16 = 9;
    pub const COOKIE_RECEIVED_WHILE_SHUTTING_DOWN: u16 = 10;
    pub const RESTART_WITH_NEW_ADDRESSES: u16 = 11;
    pub const USER_INITIATED_ABORT: u16 = 12;
    pub const PROTOCOL_VIOLATION: u16 = 13;
    pub const UNSUPPORTED_HMAC_IDENTIFIER: u16 = 0x0105;

    /// Whether `code` is one this codec decodes into a typed variant.
    pub const fn is_known_code(code: u16) -> bool {
        matches!(code, 1..=13 | 0x0105)
    }

    /// The cause code.
    pub fn code(&self) -> u16 {
        self.tlv_type()
    }
}

fn fixed<'a>(
    what: &'static str,
    value: &'a [u8],
    len: usize,
    expected: &'static str,
) -> Result<Reader<'a>, WireError> {
    if value.len() == len {
        Ok(Reader::new(value, what))
    } else {
        Err(WireError::InvalidLength {
            what,
            len: value.len() + 4,
            expected,
        })
    }
}

impl<'a> Tlv<'a> for ErrorCause<'a> {
    const WHAT: &'static str = "error cause";

    fn tlv_type(&self) -> u16 {
        match self {
            ErrorCause::InvalidStreamIdentifier { .. } => Self::INVALID_STREAM_IDENTIFIER,
            ErrorCause::MissingMandatoryParameter { .. } => Self::MISSING_MANDATORY_PARAMETER,
            ErrorCause::StaleCookie { .. } => Self::STALE_COOKIE,
            ErrorCause::OutOfResource => Self::OUT_OF_RESOURCE,
            ErrorCause::UnresolvableAddress(_) => Self::UNRESOLVABLE_ADDRESS,
            ErrorCause::UnrecognizedChunkType(_) => Self::UNRECOGNIZED_CHUNK_TYPE,
            ErrorCause::InvalidMandatoryParameter => Self::INVALID_MANDATORY_PARAMETER,
            ErrorCause::UnrecognizedParameters(_) => Self::UNRECOGNIZED_PARAMETERS,
            ErrorCause::NoUserData { .. } => Self::NO_USER_DATA,
            ErrorCause::CookieReceivedWhileShuttingDown => {
                Self::COOKIE_RECEIVED_WHILE_SHUTTING_DOWN
            }
            ErrorCause::RestartWithNewAddresses(_) => Self::RESTART_WITH_NEW_ADDRESSES,
            ErrorCause::UserInitiatedAbort(_) => Self::USER_INITIATED_ABORT,
            ErrorCause::ProtocolViolation(_) => Self::PROTOCOL_VIOLATION,
            ErrorCause::UnsupportedHmacIdentifier { .. } => Self::UNSUPPORTED_HMAC_IDENTIFIER,
            ErrorCause::Unknown { code, .. } => *code,
        }
    }

    fn value_len(&self) -> usize {
        match self {
            ErrorCause::InvalidStreamIdentifier { .. }
            | ErrorCause::StaleCookie { .. }
            | ErrorCause::NoUserData { .. } => 4,
            ErrorCause::MissingMandatoryParameter { types } => 4 + 2 * types.len(),
            ErrorCause::OutOfResource
            | ErrorCause::InvalidMandatoryParameter
            | ErrorCause::CookieReceivedWhileShuttingDown => 0,
            ErrorCause::UnresolvableAddress(v)
            | ErrorCause::UnrecognizedChunkType(v)
            | ErrorCause::UnrecognizedParameters(v)
            | ErrorCause::RestartWithNewAddresses(v)
            | ErrorCause::UserInitiatedAbort(v)
            | ErrorCause::ProtocolViolation(v)
            | ErrorCause::Unknown { value: v, .. } => v.len(),
            ErrorCause::UnsupportedHmacIdentifier { .. } => 2,
        }
    }

    fn encode_value(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        match self {
            ErrorCause::InvalidStreamIdentifier { stream_id } => {
                put_u16(out, *stream_id);
                put_u16(out, 0); // reserved
            }
            ErrorCause::MissingMandatoryParameter { types } => {
                let count = u32::try_from(types.len()).map_err(|_| WireError::TooLong {
                    what: "Missing Mandatory Parameter cause",
                    len: types.len(),
                })?;
                put_u32(out, count);
                types.iter().for_each(|t| put_u16(out, *t));
            }
            ErrorCause::StaleCookie { staleness_us: v } | ErrorCause::NoUserData { tsn: v } => {
                put_u32(out, *v)
            }
            ErrorCause::OutOfResource
            | ErrorCause::InvalidMandatoryParameter
            | ErrorCause::CookieReceivedWhileShuttingDown => {}
            ErrorCause::UnresolvableAddress(v)
            | ErrorCause::UnrecognizedChunkType(v)
            | ErrorCause::UnrecognizedParameters(v)
            | ErrorCause::RestartWithNewAddresses(v)
            | ErrorCause::UserInitiatedAbort(v)
            | ErrorCause::ProtocolViolation(v)
            | ErrorCause::Unknown { value: v, .. } => out.extend_from_slice(v),
            ErrorCause::UnsupportedHmacIdentifier { hmac_id } => put_u16(out, *hmac_id),
        }
        Ok(())
    }

    fn decode(code: u16, value: &'a [u8]) -> Result<Self, WireError> {
        Ok(match code {
            Self::INVALID_STREAM_IDENTIFIER => ErrorCause::InvalidStreamIdentifier {
                stream_id: fixed("Invalid Stream Identifier cause", value, 4, "exactly 8")?
                    .u16()?,
            },
            Self::MISSING_MANDATORY_PARAMETER => {
                let what = "Missing Mandatory Parameter cause";
                let mut r = Reader::new(value, what);
                let count = r.u32()?;
                let rest = r.rest();
                if u64::try_from(rest.len() / 2).ok() != Some(u64::from(count))
                    || rest.len() % 2 != 0
                {
                    return Err(WireError::InvalidValue {
                        what,
                        value: u64::from(count),
                        expected: "a count equal to the number of 2-byte types that follow",
                    });
                }
                ErrorCause::MissingMandatoryParameter {
                    types: rest
                        .chunks_exact(2)
                        .map(|t| u16::from_be_bytes([t[0], t[1]]))
                        .collect(),
                }
            }
            Self::STALE_COOKIE => ErrorCause::StaleCookie {
                staleness_us: fixed("Stale Cookie cause", value, 4, "exactly 8")?.u32()?,
            },
            Self::OUT_OF_RESOURCE => {
                fixed("Out of Resource cause", value, 0, "exactly 4")?;
                ErrorCause::OutOfResource
            }
            Self::UNRESOLVABLE_ADDRESS => ErrorCause::UnresolvableAddress(Cow::Borrowed(value)),
            Self::UNRECOGNIZED_CHUNK_TYPE => {
                ErrorCause::UnrecognizedChunkType(Cow::Borrowed(value))
            }
            Self::INVALID_MANDATORY_PARAMETER => {
                fixed("Invalid Mandatory Parameter cause", value, 0, "exactly 4")?;
                ErrorCause::InvalidMandatoryParameter
            }
            Self::UNRECOGNIZED_PARAMETERS => {
                ErrorCause::UnrecognizedParameters(Cow::Borrowed(value))
            }
            Self::NO_USER_DATA => ErrorCause::NoUserData {
                tsn: fixed("No User Data cause", value, 4, "exactly 8")?.u32()?,
            },
            Self::COOKIE_RECEIVED_WHILE_SHUTTING_DOWN => {
                fixed(
                    "Cookie Received While Shutting Down cause",
                    value,
                    0,
                    "exactly 4",
                )?;
                ErrorCause::CookieReceivedWhileShuttingDown
            }
            Self::RESTART_WITH_NEW_ADDRESSES => {
                ErrorCause::RestartWithNewAddresses(Cow::Borrowed(value))
            }
            Self::USER_INITIATED_ABORT => ErrorCause::UserInitiatedAbort(Cow::Borrowed(value)),
            Self::PROTOCOL_VIOLATION => ErrorCause::ProtocolViolation(Cow::Borrowed(value)),
            Self::UNSUPPORTED_HMAC_IDENTIFIER => ErrorCause::UnsupportedHmacIdentifier {
                hmac_id: fixed("Unsupported HMAC Identifier cause", value, 2, "exactly 6")?
                    .u16()?,
            },
            code => ErrorCause::Unknown {
                code,
                value: Cow::Borrowed(value),
            },
        })
    }
}
