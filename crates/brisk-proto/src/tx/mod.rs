//! The sending side: user messages on their way from the application to the wire.
//!
//! - [`send_queue`]: messages not yet sent for the first time; streams, stream
//!   sequence numbers, fragmentation and scheduling between streams.

pub mod nagle;
pub mod outstanding;
pub mod packetizer;
pub mod send_queue;
