//! HEARTBEAT ACK chunk (type 5), RFC 9260 3.3.6.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |   Type = 5    |  Chunk Flags  |    Heartbeat Ack Length       |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! \            Heartbeat Information TLV (Variable-Length)        \
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! The Heartbeat Info is copied from the HEARTBEAT being acknowledged.

use super::HeartbeatChunk;

/// A HEARTBEAT ACK chunk.
pub type HeartbeatAck<'a> = HeartbeatChunk<'a, true>;
