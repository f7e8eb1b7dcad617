//! Per-stream state: the messages queued on a stream and its numbering
//! (SSNs, and with I-DATA, MIDs), created the first time a stream is used.

use std::collections::VecDeque;

use bytes::Bytes;

use super::SendQueue;
use super::interleave::Started;
use crate::message::Reliability;
use crate::serial::{Ssn, StreamId};
use crate::{MessageId, Time};

/// A message waiting in its stream's queue.
#[derive(Debug)]
pub(super) struct Queued {
    pub(super) id: MessageId,
    pub(super) ppid: u32,
    pub(super) unordered: bool,
    pub(super) immediate_sack: bool,
    /// The part not handed out yet.
    pub(super) payload: Bytes,
    pub(super) queued_at: Time,
    pub(super) reliability: Reliability,
}

/// Per-stream state, created the first time a stream is used.
#[derive(Debug)]
pub(super) struct Stream {
    pub(super) id: StreamId,
    /// SSN of the next ordered message (RFC 9260 6.5).
    pub(super) next_ssn: Ssn,
    /// I-DATA: MID of the next ordered message (RFC 8260 2.1).
    pub(super) next_mid: u32,
    /// I-DATA: MID of the next unordered message, a sequence of its own.
    pub(super) next_unordered_mid: u32,
    /// I-DATA: the front message was started (its first fragment handed out).
    pub(super) started: Option<Started>,
    /// Messages not finished, oldest first; without I-DATA nothing of them
    /// was handed out (the started one is `SendQueue::current`).
    pub(super) messages: VecDeque<Queued>,
    /// RFC 6525 5.1.2 A1: while the stream's reset is requested, messages
    /// sent after the request wait here, unscheduled and without an SSN,
    /// until the reset ends. One segment per reset owed: a reset asked for
    /// again after messages were held ends the segment, and those messages
    /// go (with the numbering the first reset gives) before the second
    /// reset. Empty: not paused.
    pub(super) held: VecDeque<VecDeque<Queued>>,
}

impl Stream {
    /// RFC 6525 5.1.2 (and 5.1.4): after a reset the stream numbers its
    /// ordered messages from SSN 0 again; with I-DATA, RFC 8260 2.3 resets
    /// both MID counters, ordered and unordered, to 0.
    pub(super) fn reset_numbering(&mut self) {
        self.next_ssn = Ssn(0);
        self.next_mid = 0;
        self.next_unordered_mid = 0;
    }
}

/// `slot_of` entry of a stream that has no state yet.
pub(super) const NO_SLOT: u32 = u32::MAX;

impl SendQueue {
    /// The slot of `stream_id`, creating its state on first use.
    pub(super) fn slot(&mut self, stream_id: u16) -> u32 {
        let i = usize::from(stream_id);
        if i >= self.slot_of.len() {
            self.slot_of.resize(i + 1, NO_SLOT);
        }
        if self.slot_of[i] == NO_SLOT {
            // At most 65535 streams, so the slot index fits in a u32 below NO_SLOT.
            self.slot_of[i] = self.streams.len() as u32;
            self.streams.push(Stream {
                id: StreamId(stream_id),
                next_ssn: Ssn(0),
                next_mid: 0,
                next_unordered_mid: 0,
                started: None,
                messages: VecDeque::new(),
                held: VecDeque::new(),
            });
            self.sched.add_stream();
        }
        self.slot_of[i]
    }

    /// The slot of a stream below the outbound count that has state.
    pub(super) fn known_slot(&self, stream_id: u16) -> Option<u32> {
        if stream_id >= self.outbound_streams {
            return None;
        }
        let slot = *self.slot_of.get(usize::from(stream_id))?;
        (slot != NO_SLOT).then_some(slot)
    }
}
