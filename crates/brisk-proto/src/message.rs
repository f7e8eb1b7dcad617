//! User messages as the application hands them in and gets them out.

use std::time::Duration;

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
    /// How hard to try (RFC 3758 with RFC 7496's policies); partial
    /// reliability applies only where both ends negotiated it.
    pub reliability: Reliability,
    pub payload: Bytes,
}

/// How hard the association tries to deliver a message. Partial reliability
/// (RFC 3758) applies only when both ends offered it
/// (`Config::partial_reliability`); with a peer that did not, every message
/// is reliable. An abandoned message is reported with
/// `Event::MessageAbandoned` and never delivered in part.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Reliability {
    /// Retransmitted until acknowledged, or the association fails.
    #[default]
    Reliable,
    /// RFC 7496 3.1 (timed reliability): abandoned once this long has passed
    /// since `send`, if not acknowledged by then.
    Lifetime(Duration),
    /// RFC 7496 3.2 (limited retransmissions): abandoned rather than sent
    /// again more than this many times (0: never retransmitted).
    MaxRetransmits(u32),
}

impl Reliability {
    /// Whether a message queued at `queued_at`, whose chunk has been sent
    /// `transmissions` times, is to be abandoned rather than sent again at
    /// `now` (RFC 3758 3.5 A).
    pub fn abandons(self, queued_at: Time, transmissions: u32, now: Time) -> bool {
        match self {
            Reliability::Reliable => false,
            Reliability::Lifetime(life) => now.since(queued_at) >= life,
            Reliability::MaxRetransmits(max) => transmissions > max,
        }
    }
}

impl OutgoingMessage {
    /// An ordered message on `stream_id` with PPID 0.
    pub fn new(stream_id: u16, payload: impl Into<Bytes>) -> Self {
        Self {
            stream_id,
            ppid: 0,
            unordered: false,
            immediate_sack: false,
            reliability: Reliability::Reliable,
            payload: payload.into(),
        }
    }

    /// RFC 7496 3.1: abandon the message once `lifetime` has passed since `send`.
    pub fn with_lifetime(mut self, lifetime: Duration) -> Self {
        self.reliability = Reliability::Lifetime(lifetime);
        self
    }

    /// RFC 7496 3.2: retransmit the message at most `max` times (0: never).
    pub fn with_max_retransmits(mut self, max: u32) -> Self {
        self.reliability = Reliability::MaxRetransmits(max);
        self
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
