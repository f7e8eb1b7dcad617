//! The sending side: user messages on their way from the application to the wire.
//!
//! - [`send_queue`]: messages not yet sent for the first time; streams, stream
//!   sequence numbers, fragmentation and scheduling between streams.
//! - [`stream_scheduler`]: the stream schedulers of RFC 8260 3, which pick the
//!   stream whose message the send queue starts next.
//! - [`outstanding`]: chunks sent and not cumulatively acknowledged, and the
//!   packet records that carried them.
//! - [`retransmission_queue`]: the one owner of the sending side once a chunk
//!   has left: [`outstanding`], T3, fast recovery, the latency mechanisms and
//!   the peer's window.
//! - [`packetizer`] and [`nagle`]: packets of chunks, and when to hold one.
//! - [`redundancy`]: redundant copies within a byte budget for streams that
//!   are not thin (Linux RDB's DPIFL trigger), and [`loss_rate`], the loss
//!   rate that budget follows.
//!
//! The send buffer bounds both together: a peer that acknowledges only by gap
//! blocks, or never, cannot make the sender hold more (RFC 9260 6.2.1: the peer
//! may renege, so gap-acknowledged chunks stay until the cumulative ack).

pub mod loss_rate;
pub mod nagle;
pub mod outstanding;
pub mod packetizer;
pub mod redundancy;
pub mod retransmission_queue;
pub mod send_queue;
pub mod stream_scheduler;

/// Bookkeeping bytes charged against the send buffer for each queued message
/// and each chunk sent and not cumulatively acknowledged, beside its payload:
/// an application of one-byte messages cannot hold more memory than the
/// buffer says (a sent chunk's record is about this size).
pub const CHUNK_OVERHEAD: usize = 256;

/// The charge of `items` messages or chunks holding `payload` bytes in all.
pub fn held(payload: usize, items: usize) -> usize {
    payload.saturating_add(items.saturating_mul(CHUNK_OVERHEAD))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_overhead_covers_a_sent_chunk_record() {
        assert!(std::mem::size_of::<super::outstanding::SentChunk>() <= super::CHUNK_OVERHEAD);
    }
}
