//! User messages and their PPIDs (RFC 8831 6.6, RFC 8832 8.1): text or
//! binary, and the empty message, which SCTP cannot carry, sent as one zero
//! byte under its own PPID.

use bytes::Bytes;

/// WebRTC String (RFC 8831 8).
pub const PPID_STRING: u32 = 51;
/// WebRTC Binary Partial (deprecated, RFC 8831 6.6: MUST NOT be used).
pub const PPID_BINARY_PARTIAL: u32 = 52;
/// WebRTC Binary.
pub const PPID_BINARY: u32 = 53;
/// WebRTC String Partial (deprecated).
pub const PPID_STRING_PARTIAL: u32 = 54;
/// WebRTC String Empty.
pub const PPID_STRING_EMPTY: u32 = 56;
/// WebRTC Binary Empty.
pub const PPID_BINARY_EMPTY: u32 = 57;

/// One message on a data channel.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Message {
    Text(String),
    Binary(Bytes),
}

impl Message {
    /// The bytes this message takes in a receive queue.
    pub fn len(&self) -> usize {
        match self {
            Message::Text(s) => s.len(),
            Message::Binary(b) => b.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The PPID and SCTP payload that carry this message (RFC 8831 6.6: an
    /// empty message is one zero byte with the Empty PPID).
    pub fn to_wire(&self) -> (u32, Bytes) {
        match self {
            Message::Text(s) if s.is_empty() => (PPID_STRING_EMPTY, Bytes::from_static(&[0])),
            Message::Text(s) => (PPID_STRING, Bytes::copy_from_slice(s.as_bytes())),
            Message::Binary(b) if b.is_empty() => (PPID_BINARY_EMPTY, Bytes::from_static(&[0])),
            Message::Binary(b) => (PPID_BINARY, b.clone()),
        }
    }

    /// The message an SCTP user message carries.
    pub fn from_wire(ppid: u32, payload: Bytes) -> Result<Message, WireError> {
        match ppid {
            PPID_STRING => String::from_utf8(payload.to_vec())
                .map(Message::Text)
                .map_err(|_| WireError::TextNotUtf8),
            PPID_BINARY => Ok(Message::Binary(payload)),
            // RFC 8831 6.6: the receiver MUST ignore the user message's byte
            // and process it as an empty message.
            PPID_STRING_EMPTY => Ok(Message::Text(String::new())),
            PPID_BINARY_EMPTY => Ok(Message::Binary(Bytes::new())),
            PPID_BINARY_PARTIAL | PPID_STRING_PARTIAL => Err(WireError::DeprecatedPpid(ppid)),
            other => Err(WireError::UnknownPpid(other)),
        }
    }
}

/// Why a user message on a channel is not delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireError {
    /// A WebRTC String (PPID 51) that is not UTF-8.
    TextNotUtf8,
    /// PPID 52 or 54, which RFC 8831 6.6 deprecates (partial delivery).
    DeprecatedPpid(u32),
    /// A PPID that is not a data channel's.
    UnknownPpid(u32),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_take_the_rfc_8831_ppids() {
        let cases = [
            (Message::Text("hé".into()), 51, &b"h\xc3\xa9"[..]),
            (
                Message::Binary(Bytes::from_static(b"\x00\x01")),
                53,
                &[0, 1],
            ),
            (Message::Text(String::new()), 56, &[0]),
            (Message::Binary(Bytes::new()), 57, &[0]),
        ];
        for (m, ppid, bytes) in cases {
            let (p, b) = m.to_wire();
            assert_eq!((p, &b[..]), (ppid, bytes), "{m:?}");
            assert_eq!(Message::from_wire(p, b), Ok(m));
        }
    }

    #[test]
    fn empty_ppids_ignore_their_payload() {
        let junk = Bytes::from_static(b"ignored");
        assert_eq!(
            Message::from_wire(56, junk.clone()),
            Ok(Message::Text(String::new()))
        );
        assert_eq!(
            Message::from_wire(57, junk),
            Ok(Message::Binary(Bytes::new()))
        );
    }

    #[test]
    fn bad_text_and_foreign_ppids_are_refused() {
        assert_eq!(
            Message::from_wire(51, Bytes::from_static(&[0xff])),
            Err(WireError::TextNotUtf8)
        );
        assert_eq!(
            Message::from_wire(52, Bytes::from_static(&[1])),
            Err(WireError::DeprecatedPpid(52))
        );
        assert_eq!(
            Message::from_wire(50, Bytes::from_static(&[2])),
            Err(WireError::UnknownPpid(50))
        );
    }
}
