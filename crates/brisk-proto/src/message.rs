//! User messages as the application hands them in and gets them out.

use bytes::Bytes;

use crate::time::Time;

/// Identifies a message the application sent, for the lifetime of its association.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MessageId(pub u64);

/// A message to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingMessage {
    pub stream_id: u16,
    /// Payload Protocol Identifier, passed through to the peer unchanged.
    pub ppid: u32,
    /// Deliver without regard to order on the stream (the U bit).
    pub unordered: bool,
    /// Ask the peer to SACK the last fragment at once (the I bit, RFC 9260 3.3.1).
    pub immediate_sack: bool,
    pub payload: Bytes,
}

impl OutgoingMessage {
    /// An ordered message on `stream_id` with PPID 0.
    pub fn new(stream_id: u16, payload: impl Into<Bytes>) -> Self {
        Self {
            stream_id,
            ppid: 0,
            unordered: false,
            immediate_sack: false,
            payload: payload.into(),
        }
    }

    pub fn with_ppid(mut self, ppid: u32) -> Self {
        self.ppid = ppid;
        self
    }

    pub fn unordered(mut self, unordered: bool) -> Self {
        self.unordered = unordered;
        self
    }

    pub fn immediate_sack(mut self, immediate: bool) -> Self {
        self.immediate_sack = immediate;
        self
    }
}

/// A message received from the peer, whole and in order (for ordered streams).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncomingMessage {
    pub stream_id: u16,
    pub ppid: u32,
    pub unordered: bool,
    /// The stream sequence number (meaningless for unordered messages).
    pub ssn: u16,
    /// TSN of the first fragment.
    pub first_tsn: u32,
    pub payload: Bytes,
    /// When the last missing fragment arrived.
    pub completed_at: Time,
    /// When the message became deliverable to the application (after any wait
    /// for earlier messages on its ordered stream).
    pub deliverable_at: Time,
}
