//! What the receiver holds, and what it admits when it is full (RFC 9260 6.2).
//!
//! Every held DATA chunk is charged its payload plus [`CHUNK_OVERHEAD`] for the
//! bookkeeping that keeps it (usrsctp charges a buffer header per chunk the same
//! way), so a peer that sends one-byte chunks cannot hold more memory than one
//! that sends full ones. The advertised window is the receive buffer less the
//! charge of everything held: fragments waiting for reassembly, whole messages
//! waiting for their turn on an ordered stream, and messages the application
//! has not read.
//!
//! The policy when a new chunk does not fit:
//! - a chunk above the highest TSN received is dropped (RFC 9260 6.2 MUST);
//! - a chunk below it may take the place of the highest fragments waiting for
//!   reassembly, which the receiver reneges on (RFC 9260 6.2: "SHOULD drop the
//!   largest TSN held for reordering"): the highest TSNs are kept last;
//! - the chunk the cumulative point waits for, when later TSNs arrived or when
//!   it continues the unfinished message held, gets [`NEXT_TSN_ALLOWANCE`]
//!   beyond the buffer, so a full buffer of later data can never block the one
//!   chunk that lets delivery move on;
//! - an empty receiver takes any one chunk;
//! - a message whose fragments alone would exceed the buffer plus the
//!   allowance can never be reassembled: the association aborts and says so
//!   (`Reassembly::partial_before` tells the association its size).
//!
//! So an association never holds more than its receive buffer plus
//! [`NEXT_TSN_ALLOWANCE`] in charged bytes, whatever a peer sends.

/// Bookkeeping bytes charged for each held chunk or message beside its payload.
pub const CHUNK_OVERHEAD: usize = 256;

/// How far the chunk that the cumulative TSN waits for may exceed the buffer:
/// one DATA chunk of the largest size a UDP datagram can carry.
pub const NEXT_TSN_ALLOWANCE: usize = 65_536 + CHUNK_OVERHEAD;

/// What to do with a new DATA chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// It fits: take it.
    Accept,
    /// It fits once this many charged bytes of higher TSNs are given up.
    MakeRoom { need: usize },
    /// No room: drop it, and SACK at once (RFC 9260 6.2).
    Drop,
}

/// The charge of a chunk or message with `payload` bytes.
pub fn charge(payload: usize) -> usize {
    payload.saturating_add(CHUNK_OVERHEAD)
}

/// The charge of `items` chunks or messages holding `payload` bytes in all.
pub fn held(payload: usize, items: usize) -> usize {
    payload.saturating_add(items.saturating_mul(CHUNK_OVERHEAD))
}

/// Where a new chunk's TSN stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Next {
    /// The cumulative TSN waits for it.
    pub is_next: bool,
    /// It is above every TSN received.
    pub above_highest: bool,
    /// It continues an unfinished message held for reassembly.
    pub continues_message: bool,
}

/// Decides on a new chunk of charge `charge`, given what is `held` and the
/// `buffer`, and where its TSN stands.
pub fn admit(held: usize, charge: usize, buffer: usize, next: Next) -> Admission {
    if held == 0 {
        // An empty receiver takes any one chunk, however small its buffer: it
        // is all the peer may send into a closed window (RFC 9260 6.1 A).
        return Admission::Accept;
    }
    let (is_next, above_highest) = (next.is_next, next.above_highest);
    // The allowance is for the chunk the cumulative point waits for: one that
    // fills the first hole, or that continues the unfinished message it
    // holds. A new chunk above everything received (a zero window probe of a
    // new message) gets none (RFC 9260 6.2).
    let limit = if is_next && (!above_highest || next.continues_message) {
        buffer.saturating_add(NEXT_TSN_ALLOWANCE)
    } else {
        buffer
    };
    let total = held.saturating_add(charge);
    if total <= limit {
        Admission::Accept
    } else if above_highest {
        // RFC 9260 6.2: MUST drop a chunk above the largest TSN received.
        Admission::Drop
    } else {
        Admission::MakeRoom {
            need: total - limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunk above every TSN received, and one below the highest.
    const NEW: Next = Next {
        is_next: false,
        above_highest: true,
        continues_message: false,
    };
    const BELOW: Next = Next {
        is_next: false,
        above_highest: false,
        continues_message: false,
    };

    #[test]
    fn a_chunk_that_fits_is_accepted() {
        assert_eq!(admit(10, charge(1000), 2000, NEW), Admission::Accept);
        assert_eq!(
            admit(1000 - CHUNK_OVERHEAD, charge(1000), 2000, BELOW),
            Admission::Accept
        );
    }

    #[test]
    fn a_full_buffer_drops_chunks_above_the_highest_tsn() {
        assert_eq!(admit(2000, charge(1), 2000, NEW), Admission::Drop);
    }

    #[test]
    fn a_full_buffer_makes_room_for_a_lower_tsn() {
        assert_eq!(
            admit(2000, charge(10), 2000, BELOW),
            Admission::MakeRoom { need: charge(10) }
        );
    }

    #[test]
    fn the_next_tsn_may_exceed_the_buffer_by_one_chunk_only() {
        let fills_hole = Next {
            is_next: true,
            ..BELOW
        };
        assert_eq!(
            admit(2000, charge(1400), 2000, fills_hole),
            Admission::Accept
        );
        // A zero window probe is above everything received: no allowance...
        let probe = Next {
            is_next: true,
            ..NEW
        };
        assert_eq!(admit(2000, charge(1400), 2000, probe), Admission::Drop);
        // ...unless it continues the message held.
        let continues = Next {
            continues_message: true,
            ..probe
        };
        assert_eq!(
            admit(2000, charge(1400), 2000, continues),
            Admission::Accept
        );
        let at_limit = 2000 + NEXT_TSN_ALLOWANCE;
        assert_eq!(
            admit(at_limit, charge(1), 2000, fills_hole),
            Admission::MakeRoom { need: charge(1) }
        );
    }

    #[test]
    fn an_empty_receiver_takes_any_one_chunk() {
        assert_eq!(admit(0, charge(60_000), 1500, NEW), Admission::Accept);
    }
}
