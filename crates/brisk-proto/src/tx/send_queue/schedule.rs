//! Scheduler plumbing (RFC 8260 3): the stream scheduler in use, its
//! priorities and weights, and what it weighs a stream's turn by.

use super::SendQueue;
use crate::MessageId;
use crate::tx::stream_scheduler::{SchedulingError, StreamScheduler};

impl SendQueue {
    /// The packet of new data being assembled is complete. The packet
    /// assembly calls this after each packet's new data: under round robin
    /// per packet the next packet may belong to another stream (RFC 8260
    /// 3.3); the other schedulers ignore it.
    pub fn on_packet_end(&mut self) {
        self.sched.on_packet_end();
    }

    /// The stream scheduler in use (RFC 8260 3).
    pub fn scheduler(&self) -> StreamScheduler {
        self.sched.kind()
    }

    /// Changes the stream scheduler (RFC 8260 3). Queued messages keep their
    /// order within their streams, and the new scheduler sees them as if
    /// they had been pushed in the order of their ids; a message already
    /// started still finishes first (RFC 9260 6.9). Priorities and weights
    /// are kept.
    pub fn set_scheduler(&mut self, scheduler: StreamScheduler) {
        self.sched = self.sched.switched_to(scheduler);
        let mut queued: Vec<(MessageId, u32)> = Vec::with_capacity(self.len);
        for (slot, stream) in self.streams.iter().enumerate() {
            // At most 65535 streams: the slot fits in a u32.
            queued.extend(stream.messages.iter().map(|m| (m.id, slot as u32)));
        }
        queued.sort_unstable();
        let mut seen = vec![false; self.streams.len()];
        for (_, slot) in queued {
            let was_idle = !std::mem::replace(&mut seen[slot as usize], true);
            let head_len = self.head_len(slot).unwrap_or(0);
            self.sched.on_push(slot, was_idle, head_len);
        }
    }

    /// RFC 8260 3.4: sets the priority of `stream_id`; lower values go first.
    pub fn set_priority(&mut self, stream_id: u16, priority: u16) -> Result<(), SchedulingError> {
        let slot = self.slot_for_setting(stream_id)?;
        let head_len = self.head_len(slot);
        self.sched.set_priority(slot, priority, head_len);
        Ok(())
    }

    /// RFC 8260 3.6: sets the weight of `stream_id`, at least 1.
    pub fn set_weight(&mut self, stream_id: u16, weight: u16) -> Result<(), SchedulingError> {
        if weight == 0 {
            return Err(SchedulingError::ZeroWeight);
        }
        let slot = self.slot_for_setting(stream_id)?;
        let head_len = self.head_len(slot);
        self.sched.set_weight(slot, weight, head_len);
        Ok(())
    }

    /// The priority of `stream_id` (RFC 8260 3.4), `None` for an unknown stream.
    pub fn priority(&self, stream_id: u16) -> Option<u16> {
        self.known_slot(stream_id).map_or(
            (stream_id < self.outbound_streams)
                .then_some(crate::tx::stream_scheduler::DEFAULT_PRIORITY),
            |slot| Some(self.sched.priority(slot)),
        )
    }

    /// The weight of `stream_id` (RFC 8260 3.6), `None` for an unknown stream.
    pub fn weight(&self, stream_id: u16) -> Option<u16> {
        self.known_slot(stream_id).map_or(
            (stream_id < self.outbound_streams)
                .then_some(crate::tx::stream_scheduler::DEFAULT_WEIGHT),
            |slot| Some(self.sched.weight(slot)),
        )
    }

    /// The slot of an existing stream, for a scheduling parameter.
    pub(super) fn slot_for_setting(&mut self, stream_id: u16) -> Result<u32, SchedulingError> {
        if stream_id >= self.outbound_streams {
            return Err(SchedulingError::InvalidStream {
                stream_id,
                outbound_streams: self.outbound_streams,
            });
        }
        Ok(self.slot(stream_id))
    }

    /// The length of the front message of stream `slot`, if it has one:
    /// what the scheduler weighs its turn by. With I-DATA a turn is one
    /// fragment, at most the unit.
    pub(super) fn head_len(&self, slot: u32) -> Option<usize> {
        let len = self.streams[slot as usize].messages.front()?.payload.len();
        Some(if self.interleave {
            len.min(self.unit)
        } else {
            len
        })
    }
}
