//! I-DATA (RFC 8260): the front messages of several streams in progress at
//! once, the scheduler picking a stream for each fragment, bounded by the
//! peer's receive buffer.

use super::expiry::is_timed;
use super::{PendingFragment, SendQueue};
use crate::serial::Ssn;
use crate::tx::stream_scheduler::StreamScheduler;
use crate::wire::chunk::DataFlags;

/// I-DATA: the front message of a stream, part of which was handed out.
#[derive(Debug, Clone, Copy)]
pub(super) struct Started {
    pub(super) mid: u32,
    pub(super) next_fsn: u32,
    /// What the whole message takes of the peer's receive buffer.
    pub(super) charge: usize,
}

impl SendQueue {
    /// I-DATA (RFC 8260): the next fragment of the stream in turn, whose
    /// front message may already be part-sent; the scheduler picks a stream
    /// for each fragment.
    pub(super) fn next_interleaved(&mut self, max_payload: usize) -> Option<PendingFragment> {
        let (slot, bypass) = self.interleaved_slot(max_payload)?;
        self.next_interleaved_of(slot, bypass, max_payload)
    }

    /// I-DATA: the next fragment of stream `slot`'s front message, served in
    /// its turn or (`bypass`) out of it.
    pub(super) fn next_interleaved_of(
        &mut self,
        slot: u32,
        bypass: bool,
        max_payload: usize,
    ) -> Option<PendingFragment> {
        self.unit = max_payload;
        let charge = self.streams[slot as usize]
            .messages
            .front()
            .map_or(0, |m| charge_of(m.payload.len(), max_payload));
        let stream = &mut self.streams[slot as usize];
        let msg = stream.messages.front_mut()?;
        let beginning = stream.started.is_none();
        let (mid, fsn, charge) = match stream.started {
            Some(s) => (s.mid, s.next_fsn, s.charge),
            None => {
                self.open_charge += charge;
                self.timed -= usize::from(is_timed(msg.reliability));
                // RFC 8260 2.1: ordered and unordered messages take MIDs
                // from separate sequences, +1 per message, wrapping at 2^32.
                let seq = if msg.unordered {
                    &mut stream.next_unordered_mid
                } else {
                    &mut stream.next_mid
                };
                let mid = *seq;
                *seq = mid.wrapping_add(1);
                (mid, 0, charge)
            }
        };
        let ending = msg.payload.len() <= max_payload;
        let payload = if ending {
            std::mem::take(&mut msg.payload)
        } else {
            msg.payload.split_to(max_payload)
        };
        let fragment = PendingFragment {
            msg: msg.id,
            stream_id: stream.id,
            ssn: Ssn(0),
            ppid: msg.ppid,
            flags: DataFlags {
                immediate: ending && msg.immediate_sack,
                unordered: msg.unordered,
                beginning,
                ending,
            },
            payload,
            queued_at: msg.queued_at,
            reliability: msg.reliability,
            idata: true,
            mid,
            // RFC 8260 2.1: the FSN of the first fragment is 0, +1 per fragment.
            fsn,
        };
        self.buffered -= fragment.payload.len();
        if ending {
            stream.started = None;
            stream.messages.pop_front();
            self.len -= 1;
            self.open_charge = self.open_charge.saturating_sub(charge);
        } else {
            stream.started = Some(Started {
                mid,
                next_fsn: fsn.wrapping_add(1),
                charge,
            });
        }
        let next = self.head_len(slot);
        match (bypass, ending) {
            // Served out of turn: the scheduler keeps the stream's turn
            // (FCFS: the message's arrival), unless it has nothing left.
            (true, true) => self.sched.on_finish_out_of_turn(slot, next),
            (true, false) => {}
            (false, true) => self.sched.on_start(slot, next),
            (false, false) => self.sched.on_fragment(slot, next.unwrap_or(0)),
        }
        self.pass_blocked_turns(max_payload);
        Some(fragment)
    }

    /// I-DATA: the first stream with a started message.
    pub(super) fn started_slot(&self) -> Option<u32> {
        // At most 65535 streams: a slot fits in a u32.
        self.streams
            .iter()
            .position(|s| s.started.is_some())
            .map(|i| i as u32)
    }

    /// Interleaving: a stream whose turn comes while its front message
    /// cannot start (see [`Self::interleaved_slot`]) passes its turn, so
    /// that the streams behind it (a small message, say) go first; at most
    /// one pass per stream.
    pub(super) fn pass_blocked_turns(&mut self, max_payload: usize) {
        if self.sched.kind() == StreamScheduler::Fcfs {
            // One message at a time: nothing ever waits for room.
            return;
        }
        for _ in 0..self.streams.len() {
            let Some(slot) = self.sched.peek() else {
                return;
            };
            if !self.blocked(slot, max_payload) {
                return;
            }
            let head = self.head_len(slot).unwrap_or(0);
            self.sched.on_fragment(slot, head);
        }
    }

    /// Interleaving: whether the front message of stream `slot` is not
    /// started and would not fit in the peer's buffer beside the messages
    /// in progress (`set_peer_buffer`; one alone always fits).
    pub(super) fn blocked(&self, slot: u32, max_payload: usize) -> bool {
        let stream = &self.streams[slot as usize];
        let Some(front) = stream.messages.front() else {
            return false;
        };
        stream.started.is_none()
            && self.open_charge > 0
            && self
                .open_charge
                .saturating_add(charge_of(front.payload.len(), max_payload))
                > self.peer_buffer
    }

    /// Interleaving: the stream whose fragment goes next, and whether it is
    /// served out of the scheduler's turn. The stream in turn goes, unless
    /// it is [blocked](Self::blocked) (the streams behind it were blocked
    /// too); then a message in progress continues instead (the first
    /// stream's that has one), so that the peer can finish it and make room.
    pub(super) fn interleaved_slot(&self, max_payload: usize) -> Option<(u32, bool)> {
        let slot = self.sched.peek()?;
        if !self.blocked(slot, max_payload) {
            return Some((slot, false));
        }
        // A message waits only while another is in progress; should none
        // be, the stream in turn goes after all rather than nothing at all.
        // At most 65535 streams: a slot fits in a u32.
        Some(
            self.streams
                .iter()
                .position(|s| s.started.is_some())
                .map_or((slot, false), |other| (other as u32, true)),
        )
    }
}

/// What a message of `len` bytes, cut into fragments of `max_payload`,
/// takes of the peer's receive buffer while it is held there whole: its
/// bytes and each chunk's bookkeeping (`tx::outstanding::PEER_CHUNK_OVERHEAD`).
pub(super) fn charge_of(len: usize, max_payload: usize) -> usize {
    let chunks = len.div_ceil(max_payload.max(1));
    len.saturating_add(chunks.saturating_mul(crate::tx::outstanding::PEER_CHUNK_OVERHEAD as usize))
}

/// Interleaving: the scheduler's unit until a fragment size is known.
pub(super) const DEFAULT_UNIT: usize = 1200;
