//! The Data Channel Establishment Protocol's two messages (RFC 8832 5),
//! sans-IO: bytes in, typed messages out, and back. Every length on the wire
//! may lie; parsing checks each one and never panics.

use std::fmt;

/// The SCTP Payload Protocol Identifier of DCEP messages (RFC 8832 8.1).
pub const PPID_DCEP: u32 = 50;

/// DATA_CHANNEL_ACK (RFC 8832 5.2).
const MSG_ACK: u8 = 0x02;
/// DATA_CHANNEL_OPEN (RFC 8832 5.1).
const MSG_OPEN: u8 = 0x03;
/// Message type, channel type, priority, reliability parameter, label
/// length, protocol length (RFC 8832 5.1).
const OPEN_HEADER: usize = 12;

/// The channel types of RFC 8832 5.1 (IANA "DCEP Channel Types"). The high
/// bit says unordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelType {
    /// 0x00: DATA_CHANNEL_RELIABLE.
    Reliable,
    /// 0x80: DATA_CHANNEL_RELIABLE_UNORDERED.
    ReliableUnordered,
    /// 0x01: DATA_CHANNEL_PARTIAL_RELIABLE_REXMIT.
    PartialReliableRexmit,
    /// 0x81: DATA_CHANNEL_PARTIAL_RELIABLE_REXMIT_UNORDERED.
    PartialReliableRexmitUnordered,
    /// 0x02: DATA_CHANNEL_PARTIAL_RELIABLE_TIMED.
    PartialReliableTimed,
    /// 0x82: DATA_CHANNEL_PARTIAL_RELIABLE_TIMED_UNORDERED.
    PartialReliableTimedUnordered,
}

impl ChannelType {
    pub fn to_byte(self) -> u8 {
        match self {
            ChannelType::Reliable => 0x00,
            ChannelType::ReliableUnordered => 0x80,
            ChannelType::PartialReliableRexmit => 0x01,
            ChannelType::PartialReliableRexmitUnordered => 0x81,
            ChannelType::PartialReliableTimed => 0x02,
            ChannelType::PartialReliableTimedUnordered => 0x82,
        }
    }

    pub fn from_byte(b: u8) -> Option<Self> {
        Some(match b {
            0x00 => ChannelType::Reliable,
            0x80 => ChannelType::ReliableUnordered,
            0x01 => ChannelType::PartialReliableRexmit,
            0x81 => ChannelType::PartialReliableRexmitUnordered,
            0x02 => ChannelType::PartialReliableTimed,
            0x82 => ChannelType::PartialReliableTimedUnordered,
            _ => return None,
        })
    }

    /// Whether messages are delivered without regard to order.
    pub fn unordered(self) -> bool {
        self.to_byte() & 0x80 != 0
    }
}

/// DATA_CHANNEL_OPEN (RFC 8832 5.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Open {
    pub channel_type: ChannelType,
    /// RFC 8832 5.1: 0 to 65535; RFC 8831 6.4 names 128/256/512/1024.
    pub priority: u16,
    /// Retransmissions (REXMIT types) or milliseconds (TIMED types); ignored
    /// for the reliable types.
    pub reliability: u32,
    pub label: String,
    pub protocol: String,
}

/// A DCEP message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    Open(Open),
    Ack,
}

/// Why bytes are not a DCEP message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// No message type byte.
    Empty,
    /// A message type other than OPEN (0x03) or ACK (0x02).
    UnknownMessageType(u8),
    /// Fewer than the 12 bytes of an OPEN's fixed part.
    TruncatedHeader {
        len: usize,
    },
    /// The label and protocol lengths claim more bytes than there are.
    LengthsExceedMessage {
        claimed: usize,
        available: usize,
    },
    /// Bytes after the label and protocol.
    TrailingBytes {
        extra: usize,
    },
    UnknownChannelType(u8),
    /// RFC 8832 5.1: the label is a UTF-8 string.
    LabelNotUtf8,
    /// RFC 8832 5.1: the protocol is a UTF-8 string.
    ProtocolNotUtf8,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Empty => write!(f, "empty DCEP message"),
            ParseError::UnknownMessageType(t) => write!(f, "unknown DCEP message type {t:#04x}"),
            ParseError::TruncatedHeader { len } => {
                write!(
                    f,
                    "DATA_CHANNEL_OPEN of {len} bytes, shorter than its 12-byte header"
                )
            }
            ParseError::LengthsExceedMessage { claimed, available } => write!(
                f,
                "DATA_CHANNEL_OPEN label and protocol claim {claimed} bytes, {available} present"
            ),
            ParseError::TrailingBytes { extra } => {
                write!(f, "DATA_CHANNEL_OPEN has {extra} bytes after its protocol")
            }
            ParseError::UnknownChannelType(t) => write!(f, "unknown channel type {t:#04x}"),
            ParseError::LabelNotUtf8 => write!(f, "DATA_CHANNEL_OPEN label is not UTF-8"),
            ParseError::ProtocolNotUtf8 => write!(f, "DATA_CHANNEL_OPEN protocol is not UTF-8"),
        }
    }
}

impl std::error::Error for ParseError {}

/// Why a message cannot be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EncodeError {
    /// The label or protocol is longer than a 16-bit length can say.
    TooLong { field: &'static str, len: usize },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::TooLong { field, len } => {
                write!(f, "the {field} of {len} bytes exceeds 65535 bytes")
            }
        }
    }
}

impl std::error::Error for EncodeError {}

impl Message {
    /// Parses one DCEP message (one SCTP user message with PPID 50).
    pub fn parse(b: &[u8]) -> Result<Message, ParseError> {
        match *b.first().ok_or(ParseError::Empty)? {
            // RFC 8832 5.2: the ACK is the type byte alone. pion pads it to
            // 4 bytes; what follows the type carries nothing and is ignored.
            MSG_ACK => Ok(Message::Ack),
            MSG_OPEN => parse_open(b).map(Message::Open),
            t => Err(ParseError::UnknownMessageType(t)),
        }
    }

    /// The message's bytes.
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        match self {
            Message::Ack => Ok(vec![MSG_ACK]),
            Message::Open(o) => encode_open(o),
        }
    }
}

fn parse_open(b: &[u8]) -> Result<Open, ParseError> {
    let header: &[u8; OPEN_HEADER] = b
        .get(..OPEN_HEADER)
        .and_then(|h| h.try_into().ok())
        .ok_or(ParseError::TruncatedHeader { len: b.len() })?;
    let channel_type =
        ChannelType::from_byte(header[1]).ok_or(ParseError::UnknownChannelType(header[1]))?;
    let priority = u16::from_be_bytes([header[2], header[3]]);
    let reliability = u32::from_be_bytes([header[4], header[5], header[6], header[7]]);
    let label_len = usize::from(u16::from_be_bytes([header[8], header[9]]));
    let protocol_len = usize::from(u16::from_be_bytes([header[10], header[11]]));
    let body = &b[OPEN_HEADER..];
    let claimed = label_len + protocol_len;
    if claimed > body.len() {
        return Err(ParseError::LengthsExceedMessage {
            claimed,
            available: body.len(),
        });
    }
    if claimed < body.len() {
        return Err(ParseError::TrailingBytes {
            extra: body.len() - claimed,
        });
    }
    let (label, protocol) = body.split_at(label_len);
    let label = std::str::from_utf8(label).map_err(|_| ParseError::LabelNotUtf8)?;
    let protocol = std::str::from_utf8(protocol).map_err(|_| ParseError::ProtocolNotUtf8)?;
    Ok(Open {
        channel_type,
        priority,
        reliability,
        label: label.to_owned(),
        protocol: protocol.to_owned(),
    })
}

fn encode_open(o: &Open) -> Result<Vec<u8>, EncodeError> {
    let len16 = |field: &'static str, s: &str| {
        u16::try_from(s.len()).map_err(|_| EncodeError::TooLong {
            field,
            len: s.len(),
        })
    };
    let label_len = len16("label", &o.label)?;
    let protocol_len = len16("protocol", &o.protocol)?;
    let mut b = Vec::with_capacity(OPEN_HEADER + o.label.len() + o.protocol.len());
    b.push(MSG_OPEN);
    b.push(o.channel_type.to_byte());
    b.extend_from_slice(&o.priority.to_be_bytes());
    b.extend_from_slice(&o.reliability.to_be_bytes());
    b.extend_from_slice(&label_len.to_be_bytes());
    b.extend_from_slice(&protocol_len.to_be_bytes());
    b.extend_from_slice(o.label.as_bytes());
    b.extend_from_slice(o.protocol.as_bytes());
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn open() -> Open {
        Open {
            channel_type: ChannelType::PartialReliableRexmitUnordered,
            priority: 256,
            reliability: 3,
            label: "chat".into(),
            protocol: "x".into(),
        }
    }

    #[test]
    fn open_encodes_to_the_rfc_8832_layout() {
        let b = Message::Open(open()).encode().unwrap();
        assert_eq!(
            b,
            [
                0x03, // Message Type: DATA_CHANNEL_OPEN
                0x81, // Channel Type: PARTIAL_RELIABLE_REXMIT_UNORDERED
                0x01, 0x00, // Priority 256
                0x00, 0x00, 0x00, 0x03, // Reliability Parameter 3
                0x00, 0x04, // Label Length
                0x00, 0x01, // Protocol Length
                b'c', b'h', b'a', b't', b'x',
            ]
        );
        assert_eq!(Message::parse(&b), Ok(Message::Open(open())));
    }

    #[test]
    fn ack_is_one_byte_and_pions_padded_ack_parses() {
        assert_eq!(Message::Ack.encode().unwrap(), [0x02]);
        assert_eq!(Message::parse(&[0x02]), Ok(Message::Ack));
        assert_eq!(Message::parse(&[0x02, 0, 0, 0]), Ok(Message::Ack));
    }

    #[test]
    fn every_channel_type_round_trips_and_others_are_refused() {
        for b in 0..=255u8 {
            match ChannelType::from_byte(b) {
                Some(t) => {
                    assert_eq!(t.to_byte(), b);
                    assert_eq!(t.unordered(), b & 0x80 != 0);
                }
                None => {
                    let mut m = Message::Open(open()).encode().unwrap();
                    m[1] = b;
                    assert_eq!(Message::parse(&m), Err(ParseError::UnknownChannelType(b)));
                }
            }
        }
        let known = (0..=255u8).filter_map(ChannelType::from_byte).count();
        assert_eq!(known, 6);
    }

    #[test]
    fn lying_lengths_are_refused() {
        let good = Message::Open(open()).encode().unwrap();
        assert_eq!(
            Message::parse(&good[..good.len() - 1]),
            Err(ParseError::LengthsExceedMessage {
                claimed: 5,
                available: 4
            })
        );
        let mut long = good.clone();
        long.push(0);
        assert_eq!(
            Message::parse(&long),
            Err(ParseError::TrailingBytes { extra: 1 })
        );
        let mut huge = good.clone();
        huge[8..12].copy_from_slice(&[0xff, 0xff, 0xff, 0xff]);
        assert_eq!(
            Message::parse(&huge),
            Err(ParseError::LengthsExceedMessage {
                claimed: 131_070,
                available: 5
            })
        );
        assert_eq!(
            Message::parse(&good[..11]),
            Err(ParseError::TruncatedHeader { len: 11 })
        );
        assert_eq!(Message::parse(&[]), Err(ParseError::Empty));
        assert_eq!(
            Message::parse(&[0x04]),
            Err(ParseError::UnknownMessageType(0x04))
        );
    }

    #[test]
    fn label_and_protocol_must_be_utf8() {
        let mut m = Message::Open(open()).encode().unwrap();
        m[12] = 0xff;
        assert_eq!(Message::parse(&m), Err(ParseError::LabelNotUtf8));
        let mut m = Message::Open(open()).encode().unwrap();
        m[16] = 0xc3; // a lone lead byte
        assert_eq!(Message::parse(&m), Err(ParseError::ProtocolNotUtf8));
    }

    #[test]
    fn a_label_over_65535_bytes_is_not_encoded() {
        let o = Open {
            label: "a".repeat(65_536),
            ..open()
        };
        assert_eq!(
            Message::Open(o).encode(),
            Err(EncodeError::TooLong {
                field: "label",
                len: 65_536
            })
        );
    }

    #[test]
    fn random_bytes_never_panic_and_what_parses_round_trips() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(8832);
        let mut parsed = 0;
        for _ in 0..200_000 {
            let len = rng.random_range(0..40);
            let mut b: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            // Steer half the inputs to an OPEN with small lengths, so the
            // deeper checks are reached too.
            if rng.random_bool(0.5) && b.len() >= OPEN_HEADER {
                b[0] = MSG_OPEN;
                b[8] = 0;
                b[10] = 0;
                b[9] %= 16;
                b[11] %= 16;
            }
            if let Ok(m) = Message::parse(&b) {
                parsed += 1;
                if let Message::Open(_) = m {
                    assert_eq!(m.encode().unwrap(), b);
                }
            }
        }
        assert!(parsed > 100, "{parsed} random inputs parsed");
    }
}
