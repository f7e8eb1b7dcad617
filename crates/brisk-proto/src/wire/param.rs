//! Parameters of INIT, INIT ACK, HEARTBEAT and HEARTBEAT ACK (RFC 9260 3.3.2.1,
//! 3.3.3.1, 3.3.5), and the extension parameters Brisk negotiates.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |        Parameter Type         |       Parameter Length        |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! \                        Parameter Value                        \
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! RE-CONFIG's request and response parameters live with their chunk in
//! [`chunk::reconfig`](super::chunk::reconfig).

use std::borrow::Cow;
use std::net::{Ipv4Addr, Ipv6Addr};

use super::buf::{Reader, put_u16, put_u32};
use super::tlv::Tlv;
use super::{UnrecognizedAction, WireError};

/// A parameter of an INIT-family or HEARTBEAT-family chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Param<'a> {
    /// Heartbeat Info (1, RFC 9260 3.3.5): opaque to the receiver, echoed back.
    HeartbeatInfo(Cow<'a, [u8]>),
    /// IPv4 Address (5, RFC 9260 3.3.2.1).
    Ipv4Address(Ipv4Addr),
    /// IPv6 Address (6, RFC 9260 3.3.2.1).
    Ipv6Address(Ipv6Addr),
    /// State Cookie (7, RFC 9260 3.3.3.1): opaque to the receiver of INIT ACK.
    StateCookie(Cow<'a, [u8]>),
    /// Unrecognized Parameter (8, RFC 9260 3.3.3.1): the whole parameter
    /// (type, length, value) that the sender of INIT ACK did not understand.
    UnrecognizedParameter(Cow<'a, [u8]>),
    /// Cookie Preservative (9, RFC 9260 3.3.2.1): suggested cookie life-span increment.
    CookiePreservative { increment_ms: u32 },
    /// Host Name Address (11, RFC 9260 3.3.2.1): deprecated; a receiver aborts
    /// with Unresolvable Address. Kept as the raw, NUL-terminated name.
    HostNameAddress(Cow<'a, [u8]>),
    /// Supported Address Types (12, RFC 9260 3.3.2.1): 5 = IPv4, 6 = IPv6, 11 = host name.
    SupportedAddressTypes(Vec<u16>),
    /// Zero Checksum Acceptable (0x8001, RFC 9653 3): the sender accepts packets
    /// with a zero checksum when the named error detection method is in use.
    ZeroChecksumAcceptable { edmid: u32 },
    /// Supported Extensions (0x8008, RFC 5061 4.2.7): the chunk types the sender supports.
    SupportedExtensions(Vec<u8>),
    /// Forward-TSN-Supported (0xC000, RFC 3758 3.1).
    ForwardTsnSupported,
    /// Any other parameter, kept whole; [`Param::action`] says what to do with it.
    Unknown { typ: u16, value: Cow<'a, [u8]> },
}

impl Param<'_> {
    pub const HEARTBEAT_INFO: u16 = 1;
    pub const IPV4_ADDRESS: u16 = 5;
    pub const IPV6_ADDRESS: u16 = 6;
    pub const STATE_COOKIE: u16 = 7;
    pub const UNRECOGNIZED_PARAMETER: u16 = 8;
    pub const COOKIE_PRESERVATIVE: u16 = 9;
    pub const HOST_NAME_ADDRESS: u16 = 11;
    pub const SUPPORTED_ADDRESS_TYPES: u16 = 12;
    pub const ZERO_CHECKSUM_ACCEPTABLE: u16 = 0x8001;
    pub const SUPPORTED_EXTENSIONS: u16 = 0x8008;
    pub const FORWARD_TSN_SUPPORTED: u16 = 0xc000;

    /// Whether `typ` is one this codec decodes into a typed variant.
    pub const fn is_known_type(typ: u16) -> bool {
        matches!(typ, 1 | 5..=9 | 11 | 12 | 0x8001 | 0x8008 | 0xc000)
    }

    /// The same parameter owning its bytes.
    pub fn into_owned(self) -> Param<'static> {
        let own = |v: Cow<'_, [u8]>| Cow::Owned(v.into_owned());
        match self {
            Param::HeartbeatInfo(v) => Param::HeartbeatInfo(own(v)),
            Param::StateCookie(v) => Param::StateCookie(own(v)),
            Param::UnrecognizedParameter(v) => Param::UnrecognizedParameter(own(v)),
            Param::HostNameAddress(v) => Param::HostNameAddress(own(v)),
            Param::Unknown { typ, value } => Param::Unknown {
                typ,
                value: own(value),
            },
            Param::Ipv4Address(a) => Param::Ipv4Address(a),
            Param::Ipv6Address(a) => Param::Ipv6Address(a),
            Param::CookiePreservative { increment_ms } => {
                Param::CookiePreservative { increment_ms }
            }
            Param::SupportedAddressTypes(t) => Param::SupportedAddressTypes(t),
            Param::ZeroChecksumAcceptable { edmid } => Param::ZeroChecksumAcceptable { edmid },
            Param::SupportedExtensions(t) => Param::SupportedExtensions(t),
            Param::ForwardTsnSupported => Param::ForwardTsnSupported,
        }
    }

    /// RFC 9260 3.2.1: for an unknown parameter, what the receiver must do.
    /// `None` for parameters this codec understands.
    pub fn action(&self) -> Option<UnrecognizedAction> {
        match self {
            Param::Unknown { typ, .. } => Some(UnrecognizedAction::for_param_type(*typ)),
            _ => None,
        }
    }
}

fn exact<'a>(what: &'static str, value: &'a [u8], len: usize) -> Result<Reader<'a>, WireError> {
    if value.len() == len {
        Ok(Reader::new(value, what))
    } else {
        Err(WireError::InvalidLength {
            what,
            len: value.len() + 4,
            expected: match len {
                0 => "exactly 4",
                4 => "exactly 8",
                16 => "exactly 20",
                _ => "the fixed size of this parameter",
            },
        })
    }
}

impl<'a> Tlv<'a> for Param<'a> {
    const WHAT: &'static str = "parameter";

    fn tlv_type(&self) -> u16 {
        match self {
            Param::HeartbeatInfo(_) => Self::HEARTBEAT_INFO,
            Param::Ipv4Address(_) => Self::IPV4_ADDRESS,
            Param::Ipv6Address(_) => Self::IPV6_ADDRESS,
            Param::StateCookie(_) => Self::STATE_COOKIE,
            Param::UnrecognizedParameter(_) => Self::UNRECOGNIZED_PARAMETER,
            Param::CookiePreservative { .. } => Self::COOKIE_PRESERVATIVE,
            Param::HostNameAddress(_) => Self::HOST_NAME_ADDRESS,
            Param::SupportedAddressTypes(_) => Self::SUPPORTED_ADDRESS_TYPES,
            Param::ZeroChecksumAcceptable { .. } => Self::ZERO_CHECKSUM_ACCEPTABLE,
            Param::SupportedExtensions(_) => Self::SUPPORTED_EXTENSIONS,
            Param::ForwardTsnSupported => Self::FORWARD_TSN_SUPPORTED,
            Param::Unknown { typ, .. } => *typ,
        }
    }

    fn value_len(&self) -> usize {
        match self {
            Param::HeartbeatInfo(v)
            | Param::StateCookie(v)
            | Param::UnrecognizedParameter(v)
            | Param::HostNameAddress(v)
            | Param::Unknown { value: v, .. } => v.len(),
            Param::Ipv4Address(_) => 4,
            Param::Ipv6Address(_) => 16,
            Param::CookiePreservative { .. } | Param::ZeroChecksumAcceptable { .. } => 4,
            Param::SupportedAddressTypes(types) => 2 * types.len(),
            Param::SupportedExtensions(types) => types.len(),
            Param::ForwardTsnSupported => 0,
        }
    }

    fn encode_value(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        match self {
            Param::HeartbeatInfo(v)
            | Param::StateCookie(v)
            | Param::UnrecognizedParameter(v)
            | Param::HostNameAddress(v)
            | Param::Unknown { value: v, .. } => out.extend_from_slice(v),
            Param::Ipv4Address(a) => out.extend_from_slice(&a.octets()),
            Param::Ipv6Address(a) => out.extend_from_slice(&a.octets()),
            Param::CookiePreservative { increment_ms: v }
            | Param::ZeroChecksumAcceptable { edmid: v } => put_u32(out, *v),
            Param::SupportedAddressTypes(types) => types.iter().for_each(|t| put_u16(out, *t)),
            Param::SupportedExtensions(types) => out.extend_from_slice(types),
            Param::ForwardTsnSupported => {}
        }
        Ok(())
    }

    fn decode(typ: u16, value: &'a [u8]) -> Result<Self, WireError> {
        Ok(match typ {
            Self::HEARTBEAT_INFO => Param::HeartbeatInfo(Cow::Borrowed(value)),
            Self::IPV4_ADDRESS => Param::Ipv4Address(
                exact("IPv4 Address parameter", value, 4)?
                    .array::<4>()?
                    .into(),
            ),
            Self::IPV6_ADDRESS => Param::Ipv6Address(
                exact("IPv6 Address parameter", value, 16)?
                    .array::<16>()?
                    .into(),
            ),
            Self::STATE_COOKIE => Param::StateCookie(Cow::Borrowed(value)),
            Self::UNRECOGNIZED_PARAMETER => Param::UnrecognizedParameter(Cow::Borrowed(value)),
            Self::COOKIE_PRESERVATIVE => Param::CookiePreservative {
                increment_ms: exact("Cookie Preservative parameter", value, 4)?.u32()?,
            },
            Self::HOST_NAME_ADDRESS => Param::HostNameAddress(Cow::Borrowed(value)),
            Self::SUPPORTED_ADDRESS_TYPES => {
                if value.len() % 2 != 0 {
                    return Err(WireError::InvalidLength {
                        what: "Supported Address Types parameter",
                        len: value.len() + 4,
                        expected: "4 plus 2 bytes per address type",
                    });
                }
                Param::SupportedAddressTypes(
                    value
                        .chunks_exact(2)
                        .map(|t| u16::from_be_bytes([t[0], t[1]]))
                        .collect(),
                )
            }
            Self::ZERO_CHECKSUM_ACCEPTABLE => Param::ZeroChecksumAcceptable {
                edmid: exact("Zero Checksum Acceptable parameter", value, 4)?.u32()?,
            },
            Self::SUPPORTED_EXTENSIONS => Param::SupportedExtensions(value.to_vec()),
            Self::FORWARD_TSN_SUPPORTED => {
                exact("Forward-TSN-Supported parameter", value, 0)?;
                Param::ForwardTsnSupported
            }
            typ => Param::Unknown {
                typ,
                value: Cow::Borrowed(value),
            },
        })
    }
}
