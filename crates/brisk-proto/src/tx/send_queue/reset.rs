//! Stream resets (RFC 6525): streams paused while their reset is owed, the
//! messages held meanwhile, and numbering from 0 again once it is done.

use std::collections::VecDeque;

use super::{PendingFragment, SendQueue};

impl SendQueue {
    /// RFC 6525 5.1.2 A1: pauses `stream_id` for a reset: the messages
    /// queued on it now still go first; those sent from now on wait,
    /// without an SSN, until [`resume`](Self::resume). A stream already
    /// paused with messages held owes one more reset after the first (they
    /// go between the two); without messages held the two resets are one.
    /// Ignored for a stream that does not exist.
    pub fn pause(&mut self, stream_id: u16) {
        if stream_id >= self.outbound_streams {
            return;
        }
        let slot = self.slot(stream_id);
        let stream = &mut self.streams[slot as usize];
        if stream.held.back().is_none_or(|last| !last.is_empty()) {
            stream.held.push_back(VecDeque::new());
        }
    }

    /// The outbound streams used so far (with state), in no particular
    /// order; the others still number from SSN 0 and hold nothing.
    pub fn used_streams(&self) -> impl Iterator<Item = u16> + '_ {
        self.streams
            .iter()
            .map(|s| s.id.0)
            .filter(|&id| id < self.outbound_streams)
    }

    /// Whether `stream_id` waits for a reset (5.1.2 A1).
    pub fn is_paused(&self, stream_id: u16) -> bool {
        self.known_slot(stream_id)
            .is_some_and(|slot| !self.streams[slot as usize].held.is_empty())
    }

    /// Whether `stream_id` is paused and has handed out every message
    /// queued before the pause (its reset request may go: RFC 6525 5.1.2
    /// A3, every TSN of the stream's old numbering is assigned).
    pub fn is_drained(&self, stream_id: u16) -> bool {
        let Some(slot) = self.known_slot(stream_id) else {
            return false;
        };
        let stream = &self.streams[slot as usize];
        !stream.held.is_empty()
            && stream.messages.is_empty()
            && self
                .current
                .as_ref()
                .is_none_or(|cur| cur.stream_id.0 != stream_id)
    }

    /// Ends the pause of `stream_id` for one reset: with `reset_ssn` (RFC
    /// 6525 5.1.2: the reset was performed) its next SSN is 0; the messages
    /// held for that reset are scheduled in order. If another reset is owed
    /// the stream stays paused for it.
    pub fn resume(&mut self, stream_id: u16, reset_ssn: bool) {
        let Some(slot) = self.known_slot(stream_id) else {
            return;
        };
        let stream = &mut self.streams[slot as usize];
        if reset_ssn {
            stream.reset_numbering();
        }
        let Some(held) = stream.held.pop_front() else {
            return;
        };
        for m in held {
            let stream = &mut self.streams[slot as usize];
            let was_idle = stream.messages.is_empty();
            let len = m.payload.len();
            stream.messages.push_back(m);
            let head_len = self.head_len(slot).unwrap_or(len);
            self.sched.on_push(slot, was_idle, head_len);
        }
    }

    /// RFC 6525 5.1.4 (SSN/TSN reset): every stream numbers its ordered
    /// messages from 0 again.
    pub fn reset_all_ssns(&mut self) {
        for stream in &mut self.streams {
            stream.reset_numbering();
        }
    }

    /// The next fragment of a message already started, never the first of
    /// a new one: while an SSN/TSN reset waits (RFC 6525 5.1.4) the started
    /// messages finish with their numbering and nothing new begins.
    pub fn next_started_fragment(&mut self, max_payload: usize) -> Option<PendingFragment> {
        if max_payload == 0 {
            return None;
        }
        if !self.interleave {
            self.current.as_ref()?;
            return self.next_fragment(max_payload);
        }
        let slot = self.started_slot()?;
        self.next_interleaved_of(slot, true, max_payload)
    }

    /// The payload length [`next_started_fragment`](Self::next_started_fragment)
    /// would hand out, without taking it.
    pub fn peek_started_len(&self, max_payload: usize) -> Option<usize> {
        if max_payload == 0 {
            return None;
        }
        let remaining = if self.interleave {
            let slot = self.started_slot()?;
            self.streams[slot as usize].messages.front()?.payload.len()
        } else {
            self.current.as_ref()?.msg.payload.len()
        };
        Some(remaining.min(max_payload))
    }
}
