//! The send queue: messages the application sent whose DATA chunks have not been
//! sent for the first time yet.
//!
//! The queue owns three decisions:
//!
//! - **Stream sequence numbers.** Each outbound stream numbers its ordered
//!   messages 0, 1, 2, ... wrapping after 65535 (RFC 9260 6.5). A message takes its
//!   SSN when its first fragment leaves the queue, so messages that wait (or are
//!   drained without being sent) never leave a gap. Unordered messages carry
//!   SSN 0, which the receiver ignores (RFC 9260 3.3.1), and do not advance it.
//! - **Fragmentation.** A message larger than the room the caller offers is cut
//!   into fragments flagged B, (none), ..., E (RFC 9260 6.9). The fragments are
//!   zero-copy slices of the message's [`Bytes`]. With DATA (not I-DATA) the
//!   fragments of one message need consecutive TSNs, so once a message has started,
//!   [`SendQueue::next_fragment`] returns its fragments until the E fragment,
//!   before anything else.
//! - **Scheduling.** Which stream's message starts next is the stream
//!   scheduler's choice (RFC 8260 3, [`stream_scheduler`](super::stream_scheduler)):
//!   first come first served, round robin per message (the default) or per
//!   packet, strict priority, or weighted fair queueing. Whole messages are
//!   scheduled; messages leave a stream in the order they were pushed.
//! - **Interleaving (I-DATA, RFC 8260).** Once the association negotiated
//!   I-DATA ([`SendQueue::set_interleaving`]), each stream may have its front
//!   message part-sent, and the scheduler picks a stream for every fragment:
//!   a small message on one stream no longer waits for a large one on another
//!   to finish. Each stream numbers its ordered messages with a 32-bit Message
//!   Identifier (MID) and its unordered messages with a MID sequence of their
//!   own (RFC 8260 2.1); each fragment carries its Fragment Sequence Number
//!   (FSN), 0 on the first. Messages of one stream still leave in order, one
//!   at a time.
//!
//! With round robin and first come first served every operation is O(1)
//! apart from [`SendQueue::drain`], [`SendQueue::limit_streams`] and
//! [`SendQueue::set_scheduler`]; priority and weighted fair queueing cost
//! O(log streams) per message. Per-stream state is created the first time a
//! stream is used (or given a priority or weight), not for every stream the
//! association negotiated.
//!
//! One concern a file: this file holds the queue, its public surface and its
//! accounting; `stream.rs` the per-stream state and numbering, `fragment.rs`
//! DATA's whole-message fragmentation, `interleave.rs` I-DATA's fragment
//! scheduling, `expiry.rs` partial-reliability abandonment, `reset.rs` the
//! pauses of RFC 6525 stream resets, and `schedule.rs` the stream scheduler's
//! plumbing.

mod expiry;
mod fragment;
mod interleave;
mod reset;
mod schedule;
mod stream;

use bytes::Bytes;
use thiserror::Error;

use crate::message::Reliability;
use crate::serial::{Ssn, StreamId};
use crate::tx::stream_scheduler::{Scheduler, StreamScheduler};
use crate::wire::chunk::DataFlags;
use crate::{MessageId, OutgoingMessage, Time};

use expiry::is_timed;
use fragment::InProgress;
use interleave::DEFAULT_UNIT;
use stream::{Queued, Stream};

/// One DATA chunk's worth of a message, ready for a TSN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingFragment {
    pub msg: MessageId,
    pub stream_id: StreamId,
    /// Stream sequence number; 0 for unordered messages.
    pub ssn: Ssn,
    pub ppid: u32,
    /// B on the first fragment, E on the last, U on every fragment of an unordered
    /// message, I on the last fragment of a message that asked for an immediate SACK.
    pub flags: DataFlags,
    /// A zero-copy slice of the message payload; never empty.
    pub payload: Bytes,
    /// When the application handed the message in.
    pub queued_at: Time,
    /// The message's partial-reliability policy (RFC 3758, RFC 7496).
    pub reliability: Reliability,
    /// Sent as I-DATA (RFC 8260 2.1) rather than DATA.
    pub idata: bool,
    /// I-DATA: the Message Identifier, per stream and per ordered/unordered
    /// sequence; 0 for DATA.
    pub mid: u32,
    /// I-DATA: the Fragment Sequence Number, 0 on the first fragment; 0 for DATA.
    pub fsn: u32,
}

/// Why a message was not queued. The message is dropped, never sent in part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum SendError {
    /// The stream does not exist on this association (RFC 9260 6.5).
    #[error(
        "stream {stream_id} does not exist: the association has {outbound_streams} \
         outbound streams, numbered from 0"
    )]
    InvalidStream {
        stream_id: u16,
        outbound_streams: u16,
    },
    /// SCTP carries no empty messages: a DATA chunk must hold user data (RFC 9260 6.2).
    #[error("cannot send an empty message: SCTP DATA chunks must carry at least one byte")]
    EmptyMessage,
    /// The message is larger than the configured maximum message size.
    #[error("message of {size} bytes exceeds the maximum message size of {max} bytes")]
    MessageTooLarge { size: usize, max: usize },
    /// Queuing the message would exceed the send buffer, which holds queued
    /// messages and sent data until the peer acknowledges it cumulatively;
    /// retry once data has left.
    #[error(
        "send buffer full: {buffered} bytes are queued or unacknowledged (bookkeeping \
         included) and the limit is {limit} bytes"
    )]
    BufferFull { buffered: usize, limit: usize },
    /// The association is shutting down: no new messages (RFC 9260 9.2).
    #[error("the association is shutting down and accepts no new messages")]
    ShuttingDown,
    /// The association has ended.
    #[error("the association is closed")]
    Closed,
}

/// Messages waiting to be sent for the first time; see the [module docs](self).
#[derive(Debug)]
pub struct SendQueue {
    outbound_streams: u16,
    max_message_size: usize,
    buffer_limit: usize,
    /// Stream id to index in `streams`; grows up to the highest stream used.
    slot_of: Vec<u32>,
    /// State of every stream used so far. Never shrinks, so SSNs survive idle spells.
    streams: Vec<Stream>,
    /// Picks the stream whose message starts next (RFC 8260 3).
    sched: Scheduler,
    /// The message being fragmented, which must finish before any other starts.
    current: Option<InProgress>,
    buffered: usize,
    len: usize,
    /// Messages not yet started with a lifetime (RFC 7496 3.1): while none
    /// is queued, nothing can expire and nothing is searched.
    timed: usize,
    /// I-DATA was negotiated: fragments of different streams interleave.
    interleave: bool,
    /// Interleaving: the largest fragment last asked for, the unit the
    /// scheduler weighs a stream's turn by (WFQ).
    unit: usize,
    /// Interleaving: the peer's receive buffer (its a_rwnd at the
    /// handshake), and what the messages started and not finished take of it.
    peer_buffer: usize,
    open_charge: usize,
}

impl SendQueue {
    /// A queue for an association with `outbound_streams` streams, refusing messages
    /// above `max_message_size` bytes and holding at most `buffer_limit` unsent
    /// bytes, scheduling streams round robin (RFC 8260 3.2).
    pub fn new(outbound_streams: u16, max_message_size: usize, buffer_limit: usize) -> Self {
        Self::with_scheduler(
            outbound_streams,
            max_message_size,
            buffer_limit,
            StreamScheduler::RoundRobin,
        )
    }

    /// [`new`](Self::new) with the stream scheduler `scheduler` (RFC 8260 3).
    pub fn with_scheduler(
        outbound_streams: u16,
        max_message_size: usize,
        buffer_limit: usize,
        scheduler: StreamScheduler,
    ) -> Self {
        Self {
            outbound_streams,
            max_message_size,
            buffer_limit,
            slot_of: Vec::new(),
            streams: Vec::new(),
            sched: Scheduler::new(scheduler),
            current: None,
            buffered: 0,
            len: 0,
            timed: 0,
            interleave: false,
            unit: DEFAULT_UNIT,
            peer_buffer: usize::MAX,
            open_charge: 0,
        }
    }

    /// RFC 8260 2.2: I-DATA was negotiated (or not). With it, every message
    /// goes as I-DATA and the scheduler picks a stream for each fragment.
    /// Called when the handshake ends, before any fragment was handed out.
    pub fn set_interleaving(&mut self, on: bool) {
        if self.interleave != on && self.current.is_none() {
            self.interleave = on;
            // The scheduler weighs the queued streams anew by the new unit.
            self.set_scheduler(self.sched.kind());
        }
    }

    /// Whether fragments interleave (I-DATA negotiated).
    pub fn interleaving(&self) -> bool {
        self.interleave
    }

    /// Interleaving: the peer's receive buffer, `bytes` (its a_rwnd at the
    /// handshake). The receiver holds every message it has part of until the
    /// message is whole, so the messages in progress at once must fit in it
    /// together, or none could ever finish: a message that would not fit
    /// beside those in progress waits until they finish (one alone always
    /// starts, as with DATA).
    pub fn set_peer_buffer(&mut self, bytes: u32) {
        self.peer_buffer = usize::try_from(bytes).unwrap_or(usize::MAX);
    }

    /// Queues a message at the back of its stream. On error nothing is queued.
    pub fn push(
        &mut self,
        id: MessageId,
        msg: OutgoingMessage,
        now: Time,
    ) -> Result<(), SendError> {
        let size = msg.payload.len();
        if msg.stream_id >= self.outbound_streams {
            return Err(SendError::InvalidStream {
                stream_id: msg.stream_id,
                outbound_streams: self.outbound_streams,
            });
        }
        // RFC 9260 6.2: an endpoint SHOULD NOT send a DATA chunk with no user data.
        if size == 0 {
            return Err(SendError::EmptyMessage);
        }
        if size > self.max_message_size {
            return Err(SendError::MessageTooLarge {
                size,
                max: self.max_message_size,
            });
        }
        if self.buffered.saturating_add(size) > self.buffer_limit {
            return Err(SendError::BufferFull {
                buffered: self.buffered,
                limit: self.buffer_limit,
            });
        }

        let slot = self.slot(msg.stream_id);
        let stream = &mut self.streams[slot as usize];
        let was_idle = stream.messages.is_empty();
        let queued = Queued {
            id,
            ppid: msg.ppid,
            unordered: msg.unordered,
            immediate_sack: msg.immediate_sack,
            payload: msg.payload,
            queued_at: now,
            reliability: msg.reliability,
        };
        if let Some(held) = stream.held.back_mut() {
            // RFC 6525 5.1.2 A1: queued until the stream's reset ends.
            held.push_back(queued);
        } else {
            stream.messages.push_back(queued);
            let head_len = self.head_len(slot).unwrap_or(size);
            self.sched.on_push(slot, was_idle, head_len);
        }
        self.buffered += size;
        self.len += 1;
        self.timed += usize::from(is_timed(msg.reliability));
        Ok(())
    }

    /// The payload length the next call to [`next_fragment`](Self::next_fragment)
    /// with the same `max_payload` would hand out, without taking it.
    pub fn peek_len(&self, max_payload: usize) -> Option<usize> {
        if max_payload == 0 {
            return None;
        }
        let remaining = match &self.current {
            _ if self.interleave => {
                let (slot, _) = self.interleaved_slot(max_payload)?;
                self.streams[slot as usize].messages.front()?.payload.len()
            }
            Some(cur) => cur.msg.payload.len(),
            None => {
                let slot = self.sched.peek()?;
                self.streams[slot as usize].messages.front()?.payload.len()
            }
        };
        Some(remaining.min(max_payload))
    }

    /// True if a message is waiting to be started or finished.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Payload bytes not handed out yet.
    pub fn buffered_bytes(&self) -> usize {
        self.buffered
    }

    /// Messages not fully handed out (including one cut short mid-way).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether any message was started (its first fragment handed out) and
    /// not finished: with I-DATA on any stream, not only the one in turn.
    pub fn has_started_message(&self) -> bool {
        self.current.is_some() || self.streams.iter().any(|s| s.started.is_some())
    }

    /// True if the next fragment continues a message whose first fragment has
    /// already been handed out; it must then go out before any other new data.
    pub fn is_mid_message(&self) -> bool {
        if self.interleave {
            // RFC 8260: the stream in turn continues its started message.
            return self
                .sched
                .peek()
                .is_some_and(|slot| self.streams[slot as usize].started.is_some());
        }
        self.current.is_some()
    }

    /// Removes every message (the association closed or aborted) and returns their
    /// ids in ascending order, each with `true` if part of it was already handed out.
    ///
    /// Stream sequence numbers are kept: a partly sent message keeps the SSN it took.
    pub fn drain(&mut self) -> Vec<(MessageId, bool)> {
        let mut ids = Vec::with_capacity(self.len);
        if let Some(cur) = self.current.take() {
            ids.push((cur.msg.id, true));
        }
        for stream in &mut self.streams {
            let started = stream.started.take().is_some();
            ids.extend(
                stream
                    .messages
                    .drain(..)
                    .enumerate()
                    .map(|(i, m)| (m.id, started && i == 0)),
            );
            for held in stream.held.drain(..) {
                ids.extend(held.into_iter().map(|m| (m.id, false)));
            }
        }
        self.sched.clear();
        ids.sort_unstable_by_key(|&(id, _)| id);
        self.open_charge = 0;
        self.buffered = 0;
        self.len = 0;
        self.timed = 0;
        ids
    }

    /// Narrows the streams to the number negotiated in the handshake (RFC 9260
    /// 5.1.1). Messages queued on streams that no longer exist are removed and
    /// returned, so that the application learns they will not be sent.
    pub fn limit_streams(&mut self, outbound_streams: u16) -> Vec<MessageId> {
        let mut removed = Vec::new();
        if outbound_streams < self.outbound_streams {
            for (slot, stream) in self.streams.iter_mut().enumerate() {
                if stream.id.0 >= outbound_streams {
                    let held: Vec<Queued> = stream.held.drain(..).flatten().collect();
                    if stream.messages.is_empty() && held.is_empty() {
                        continue;
                    }
                    let started = stream.started.take();
                    if let Some(s) = started {
                        self.open_charge = self.open_charge.saturating_sub(s.charge);
                    }
                    let started = started.is_some();
                    for (i, m) in stream.messages.drain(..).chain(held).enumerate() {
                        let counted_timed = !(started && i == 0);
                        self.buffered -= m.payload.len();
                        self.len -= 1;
                        self.timed -= usize::from(counted_timed && is_timed(m.reliability));
                        removed.push(m.id);
                    }
                    // At most 65535 streams: the slot fits in a u32.
                    self.sched.remove(slot as u32);
                }
            }
        }
        self.outbound_streams = outbound_streams;
        removed.sort_unstable();
        removed
    }

    /// The number of outbound streams; valid stream ids are below it.
    pub fn outbound_streams(&self) -> u16 {
        self.outbound_streams
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;
    use crate::tx::stream_scheduler::SchedulingError;

    const BIG: usize = 1 << 30;

    #[test]
    fn only_started_messages_continue_while_new_ones_are_held_with_interleaving() {
        // RFC 6525 5.1.4 with RFC 8260: an SSN/TSN reset waits until every
        // started message is finished, on every stream, and lets no new
        // one begin meanwhile.
        let mut q = queue();
        q.set_interleaving(true);
        for (id, stream) in [(1, 1), (2, 2), (3, 3)] {
            q.push(
                MessageId(id),
                OutgoingMessage::new(stream, vec![id as u8; 250]),
                Time::ZERO,
            )
            .unwrap();
        }
        // Two fragments: streams 1 and 2 start their messages.
        let first: Vec<u16> = (0..2)
            .map(|_| q.next_fragment(100).unwrap().stream_id.0)
            .collect();
        assert_eq!(first, [1, 2]);
        // Stream 3 is in turn and not started; the others are.
        assert!(!q.is_mid_message());
        assert!(q.has_started_message());
        let mut rest = Vec::new();
        while let Some(len) = q.peek_started_len(100) {
            let f = q.next_started_fragment(100).unwrap();
            assert_eq!(f.payload.len(), len);
            assert!(!f.flags.beginning);
            rest.push((f.stream_id.0, f.mid, f.fsn, f.flags.ending));
        }
        assert_eq!(
            rest,
            [
                (1, 0, 1, false),
                (1, 0, 2, true),
                (2, 0, 1, false),
                (2, 0, 2, true)
            ]
        );
        assert!(!q.has_started_message());
        assert_eq!(q.next_started_fragment(100), None);
        // Stream 3's message is still whole, for later.
        assert_eq!(q.len(), 1);
        let f = q.next_fragment(300).unwrap();
        assert_eq!(
            (f.stream_id.0, f.flags.beginning, f.flags.ending),
            (3, true, true)
        );
    }

    fn queue() -> SendQueue {
        SendQueue::new(16, BIG, BIG)
    }

    fn msg(stream: u16, len: usize) -> OutgoingMessage {
        OutgoingMessage::new(stream, (0..len).map(|i| i as u8).collect::<Vec<u8>>())
    }

    fn push(q: &mut SendQueue, id: u64, m: OutgoingMessage) {
        q.push(MessageId(id), m, Time::ZERO).unwrap();
    }

    fn flags(b: bool, e: bool) -> DataFlags {
        DataFlags {
            beginning: b,
            ending: e,
            ..DataFlags::default()
        }
    }

    /// Everything the queue reports, to check that a failed push changed nothing.
    fn snapshot(q: &SendQueue) -> (usize, usize, bool, Option<usize>) {
        (q.len(), q.buffered_bytes(), q.is_empty(), q.peek_len(BIG))
    }

    #[test]
    fn a_paused_stream_sends_what_was_queued_then_holds_until_each_reset() {
        let mut q = queue();
        push(&mut q, 1, msg(2, 10));
        q.pause(2);
        push(&mut q, 2, msg(2, 10));
        assert!(!q.is_drained(2));
        assert_eq!(q.next_fragment(100).unwrap().msg, MessageId(1));
        assert!(q.is_drained(2) && q.next_fragment(100).is_none());
        // Reset asked again with message 2 held: message 3 waits for a second reset.
        q.pause(2);
        push(&mut q, 3, msg(2, 10));
        q.resume(2, true);
        assert!(q.is_paused(2) && !q.is_drained(2));
        let f = q.next_fragment(100).unwrap();
        assert_eq!((f.msg, f.ssn.0), (MessageId(2), 0));
        assert!(q.is_drained(2) && q.next_fragment(100).is_none());
        // Refused: the old numbering goes on.
        q.resume(2, false);
        assert!(!q.is_paused(2));
        let f = q.next_fragment(100).unwrap();
        assert_eq!((f.msg, f.ssn.0), (MessageId(3), 1));
        // Asked twice with nothing held in between: one reset.
        q.pause(2);
        q.pause(2);
        q.resume(2, true);
        assert!(!q.is_paused(2));
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn unfragmented_ordered_messages_get_b_e_and_consecutive_ssns() {
        let mut q = queue();
        push(&mut q, 1, msg(3, 10).with_ppid(51));
        push(&mut q, 2, msg(3, 20));
        let a = q.next_fragment(1000).unwrap();
        assert_eq!(a.msg, MessageId(1));
        assert_eq!(a.stream_id.0, 3);
        assert_eq!(a.ppid, 51);
        assert_eq!(a.flags, DataFlags::UNFRAGMENTED);
        assert_eq!(a.ssn.0, 0);
        assert_eq!(a.payload.len(), 10);
        let b = q.next_fragment(1000).unwrap();
        assert_eq!(b.msg, MessageId(2));
        assert_eq!(b.flags, DataFlags::UNFRAGMENTED);
        assert_eq!(b.ssn.0, 1);
        assert!(q.next_fragment(1000).is_none());
    }

    #[test]
    fn unordered_message_gets_u_and_ssn_zero_without_consuming_an_ssn() {
        let mut q = queue();
        push(&mut q, 1, msg(0, 5));
        push(&mut q, 2, msg(0, 5).unordered(true));
        push(&mut q, 3, msg(0, 5));
        let a = q.next_fragment(100).unwrap();
        let u = q.next_fragment(100).unwrap();
        let b = q.next_fragment(100).unwrap();
        assert_eq!(
            (a.msg, a.ssn.0, a.flags.unordered),
            (MessageId(1), 0, false)
        );
        assert_eq!((u.msg, u.ssn.0), (MessageId(2), 0));
        assert_eq!(
            u.flags,
            DataFlags {
                unordered: true,
                ..DataFlags::UNFRAGMENTED
            }
        );
        assert_eq!(
            (b.msg, b.ssn.0, b.flags.unordered),
            (MessageId(3), 1, false)
        );
    }

    #[test]
    fn message_of_2500_bytes_at_1000_is_cut_into_1000_1000_500_with_b_none_e() {
        let mut q = queue();
        let m = msg(2, 2500);
        let original = m.payload.clone();
        push(&mut q, 7, msg(2, 1)); // takes SSN 0
        q.next_fragment(1000).unwrap();
        push(&mut q, 8, m);
        let frags: Vec<_> = std::iter::from_fn(|| q.next_fragment(1000)).collect();
        let lens: Vec<_> = frags.iter().map(|f| f.payload.len()).collect();
        assert_eq!(lens, [1000, 1000, 500]);
        assert_eq!(
            frags.iter().map(|f| f.flags).collect::<Vec<_>>(),
            [flags(true, false), flags(false, false), flags(false, true)]
        );
        assert!(frags.iter().all(|f| f.ssn.0 == 1 && f.stream_id.0 == 2));
        assert!(frags.iter().all(|f| f.msg == MessageId(8)));
        let joined: Vec<u8> = frags
            .iter()
            .flat_map(|f| f.payload.iter().copied())
            .collect();
        assert_eq!(joined, original);
    }

    #[test]
    fn fragments_are_zero_copy_slices_of_the_message_payload() {
        let mut q = queue();
        let m = msg(0, 2500);
        let base = m.payload.as_ptr() as usize;
        push(&mut q, 1, m);
        let offsets: Vec<_> = std::iter::from_fn(|| q.next_fragment(1000))
            .map(|f| f.payload.as_ptr() as usize - base)
            .collect();
        assert_eq!(offsets, [0, 1000, 2000]);
    }

    #[test]
    fn immediate_sack_sets_i_only_on_the_last_fragment() {
        let mut q = queue();
        push(&mut q, 1, msg(0, 2500).immediate_sack(true));
        push(&mut q, 2, msg(0, 10).immediate_sack(true));
        push(&mut q, 3, msg(0, 10));
        let immediate: Vec<_> = std::iter::from_fn(|| q.next_fragment(1000))
            .map(|f| (f.msg.0, f.flags.immediate))
            .collect();
        assert_eq!(
            immediate,
            [(1, false), (1, false), (1, true), (2, true), (3, false)]
        );
    }

    #[test]
    fn fragmented_message_on_stream_0_finishes_before_stream_1_starts() {
        let mut q = queue();
        push(&mut q, 1, msg(0, 3000));
        push(&mut q, 2, msg(1, 10));
        push(&mut q, 3, msg(0, 10));
        let order: Vec<_> = std::iter::from_fn(|| q.next_fragment(1000))
            .map(|f| f.msg.0)
            .collect();
        assert_eq!(order, [1, 1, 1, 2, 3]);
    }

    #[test]
    fn streams_take_turns_one_message_each() {
        let mut q = queue();
        push(&mut q, 10, msg(0, 10)); // a0
        push(&mut q, 11, msg(0, 10)); // a1
        push(&mut q, 12, msg(0, 10)); // a2
        push(&mut q, 20, msg(1, 10)); // b0
        let order: Vec<_> = std::iter::from_fn(|| q.next_fragment(1000))
            .map(|f| (f.msg.0, f.stream_id.0, f.ssn.0))
            .collect();
        assert_eq!(order, [(10, 0, 0), (20, 1, 0), (11, 0, 1), (12, 0, 2)]);
    }

    #[test]
    fn stream_that_becomes_busy_again_joins_the_back_of_the_line() {
        let mut q = queue();
        push(&mut q, 1, msg(0, 10));
        push(&mut q, 2, msg(1, 10));
        push(&mut q, 3, msg(2, 10));
        assert_eq!(q.next_fragment(100).unwrap().msg, MessageId(1));
        push(&mut q, 4, msg(0, 10)); // stream 0 was idle: goes behind 1 and 2
        let order: Vec<_> = std::iter::from_fn(|| q.next_fragment(100))
            .map(|f| f.msg.0)
            .collect();
        assert_eq!(order, [2, 3, 4]);
    }

    #[test]
    fn ssn_wraps_from_65535_to_0() {
        let mut q = queue();
        for i in 0..=65535u64 {
            push(&mut q, i, msg(5, 1));
            assert_eq!(q.next_fragment(10).unwrap().ssn.0, i as u16);
        }
        push(&mut q, 65536, msg(5, 1));
        push(&mut q, 65537, msg(5, 1));
        assert_eq!(q.next_fragment(10).unwrap().ssn.0, 0);
        assert_eq!(q.next_fragment(10).unwrap().ssn.0, 1);
    }

    #[test]
    fn ssn_is_taken_when_the_first_fragment_leaves_not_when_queued() {
        let mut q = queue();
        push(&mut q, 1, msg(0, 10));
        push(&mut q, 2, msg(0, 10));
        assert_eq!(q.drain(), [(MessageId(1), false), (MessageId(2), false)]);
        push(&mut q, 3, msg(0, 10));
        assert_eq!(q.next_fragment(100).unwrap().ssn.0, 0);
    }

    #[test]
    fn stream_at_or_above_outbound_streams_is_rejected_and_queue_unchanged() {
        let mut q = SendQueue::new(4, BIG, BIG);
        push(&mut q, 1, msg(3, 10));
        let before = snapshot(&q);
        assert_eq!(
            q.push(MessageId(2), msg(4, 10), Time::ZERO),
            Err(SendError::InvalidStream {
                stream_id: 4,
                outbound_streams: 4
            })
        );
        assert_eq!(snapshot(&q), before);
    }

    #[test]
    fn empty_message_is_rejected_and_queue_unchanged() {
        let mut q = queue();
        push(&mut q, 1, msg(0, 10));
        let before = snapshot(&q);
        assert_eq!(
            q.push(MessageId(2), msg(0, 0), Time::ZERO),
            Err(SendError::EmptyMessage)
        );
        assert_eq!(snapshot(&q), before);
    }

    #[test]
    fn message_above_max_size_is_rejected_and_queue_unchanged() {
        let mut q = SendQueue::new(1, 100, BIG);
        push(&mut q, 1, msg(0, 100)); // exactly the maximum is fine
        let before = snapshot(&q);
        assert_eq!(
            q.push(MessageId(2), msg(0, 101), Time::ZERO),
            Err(SendError::MessageTooLarge {
                size: 101,
                max: 100
            })
        );
        assert_eq!(snapshot(&q), before);
    }

    #[test]
    fn message_that_overflows_the_buffer_is_rejected_and_queue_unchanged() {
        let mut q = SendQueue::new(1, BIG, 100);
        push(&mut q, 1, msg(0, 60));
        push(&mut q, 2, msg(0, 40)); // fills the buffer exactly
        let before = snapshot(&q);
        assert_eq!(
            q.push(MessageId(3), msg(0, 1), Time::ZERO),
            Err(SendError::BufferFull {
                buffered: 100,
                limit: 100
            })
        );
        assert_eq!(snapshot(&q), before);
        // Room frees up as fragments leave.
        q.next_fragment(30).unwrap();
        push(&mut q, 3, msg(0, 30));
        assert_eq!(q.buffered_bytes(), 100);
    }

    #[test]
    fn errors_say_what_happened() {
        let e = SendError::InvalidStream {
            stream_id: 9,
            outbound_streams: 4,
        };
        assert!(e.to_string().contains("stream 9") && e.to_string().contains("4 outbound"));
        let e = SendError::MessageTooLarge { size: 70, max: 64 };
        assert!(e.to_string().contains("70 bytes") && e.to_string().contains("64 bytes"));
        let e = SendError::BufferFull {
            buffered: 5,
            limit: 8,
        };
        assert!(e.to_string().contains("5 bytes") && e.to_string().contains("8 bytes"));
        assert!(SendError::EmptyMessage.to_string().contains("empty"));
    }

    #[test]
    fn buffered_bytes_and_len_count_what_has_not_been_handed_out() {
        let mut q = queue();
        assert!(q.is_empty());
        assert_eq!((q.len(), q.buffered_bytes()), (0, 0));
        push(&mut q, 1, msg(0, 2500));
        push(&mut q, 2, msg(1, 10));
        assert_eq!((q.len(), q.buffered_bytes()), (2, 2510));
        q.next_fragment(1000).unwrap();
        assert_eq!((q.len(), q.buffered_bytes()), (2, 1510));
        assert!(q.is_mid_message());
        q.next_fragment(1000).unwrap();
        q.next_fragment(1000).unwrap();
        assert_eq!((q.len(), q.buffered_bytes()), (1, 10));
        assert!(!q.is_mid_message());
        q.next_fragment(1000).unwrap();
        assert_eq!((q.len(), q.buffered_bytes()), (0, 0));
        assert!(q.is_empty());
    }

    #[test]
    fn peek_len_matches_what_next_fragment_hands_out() {
        let mut q = queue();
        push(&mut q, 1, msg(0, 2500));
        push(&mut q, 2, msg(1, 300));
        for max in [1000, 700, 2000, 100, 5000] {
            let peeked = q.peek_len(max);
            assert_eq!(peeked, q.peek_len(max), "peek must not take anything");
            assert_eq!(peeked, q.next_fragment(max).map(|f| f.payload.len()));
        }
        assert_eq!(q.peek_len(1000), None);
    }

    #[test]
    fn zero_max_payload_hands_out_nothing() {
        let mut q = queue();
        push(&mut q, 1, msg(0, 10));
        assert_eq!(q.peek_len(0), None);
        assert_eq!(q.next_fragment(0), None);
        assert_eq!((q.len(), q.buffered_bytes()), (1, 10));
        assert_eq!(q.next_fragment(10).unwrap().flags, DataFlags::UNFRAGMENTED);
    }

    #[test]
    fn every_fragment_carries_its_message_queue_time() {
        let mut q = queue();
        q.push(MessageId(1), msg(0, 2500), Time::from_millis(3))
            .unwrap();
        q.push(MessageId(2), msg(1, 10), Time::from_millis(4))
            .unwrap();
        let times: Vec<_> = std::iter::from_fn(|| q.next_fragment(1000))
            .map(|f| f.queued_at)
            .collect();
        let (t3, t4) = (Time::from_millis(3), Time::from_millis(4));
        assert_eq!(times, [t3, t3, t3, t4]);
    }

    #[test]
    fn drain_reports_partly_sent_message_and_empties_the_queue() {
        let mut q = queue();
        push(&mut q, 1, msg(0, 2500));
        push(&mut q, 2, msg(1, 10));
        push(&mut q, 3, msg(0, 10));
        q.next_fragment(1000).unwrap();
        assert_eq!(
            q.drain(),
            [
                (MessageId(1), true),
                (MessageId(2), false),
                (MessageId(3), false)
            ]
        );
        assert!(q.is_empty());
        assert_eq!((q.len(), q.buffered_bytes()), (0, 0));
        assert_eq!(q.next_fragment(1000), None);
        assert!(q.drain().is_empty());
        // The partly sent message kept SSN 0; the next ordered message takes 1.
        push(&mut q, 4, msg(0, 10));
        let f = q.next_fragment(1000).unwrap();
        assert_eq!(
            (f.msg, f.ssn.0, f.flags),
            (MessageId(4), 1, DataFlags::UNFRAGMENTED)
        );
    }

    #[derive(Debug, Clone)]
    enum Op {
        Push {
            stream: u16,
            len: usize,
            unordered: bool,
            immediate: bool,
        },
        Pop(usize),
        /// The packet of new data ends (RFC 8260 3.3).
        PacketEnd,
        /// Sets a stream's priority and weight (RFC 8260 3.4, 3.6).
        Tune {
            stream: u16,
            priority: u16,
            weight: u16,
        },
    }

    fn scheduler() -> impl Strategy<Value = StreamScheduler> {
        prop_oneof![
            Just(StreamScheduler::Fcfs),
            Just(StreamScheduler::RoundRobin),
            Just(StreamScheduler::RoundRobinPacket),
            Just(StreamScheduler::Priority),
            Just(StreamScheduler::Wfq),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u16..5, 1usize..3000, any::<bool>(), any::<bool>()).prop_map(
                |(stream, len, unordered, immediate)| Op::Push {
                    stream,
                    len,
                    unordered,
                    immediate
                }
            ),
            (1usize..1500).prop_map(Op::Pop),
            Just(Op::PacketEnd),
            (0u16..5, 0u16..3, 1u16..4).prop_map(|(stream, priority, weight)| Op::Tune {
                stream,
                priority,
                weight
            }),
        ]
    }

    proptest! {
        #[test]
        fn fragments_reassemble_every_message_once_in_stream_order(
            ops in proptest::collection::vec(op(), 1..200),
            tail_max in 1usize..1500,
            kind in scheduler(),
        ) {
            let mut q = SendQueue::with_scheduler(5, BIG, BIG, kind);
            let mut sent: HashMap<u64, OutgoingMessage> = HashMap::new();
            let mut pushed_per_stream: HashMap<u16, Vec<u64>> = HashMap::new();
            let mut started_per_stream: HashMap<u16, Vec<u64>> = HashMap::new();
            let mut got: HashMap<u64, Vec<u8>> = HashMap::new();
            let mut completed: Vec<u64> = Vec::new();
            let mut next_ssn: HashMap<u16, u16> = HashMap::new();
            // (id, stream, ssn) of the message whose E fragment is still due.
            let mut open: Option<(u64, u16, u16)> = None;
            let mut next_id = 0u64;
            let mut buffered = 0usize;

            // Enough pops at the end to hand out everything still queued.
            let tail: usize = ops
                .iter()
                .map(|o| match o {
                    // One more for a packet whose stream ran dry (RR-P).
                    Op::Push { len, .. } => len.div_ceil(tail_max) + 1,
                    _ => 0,
                })
                .sum();
            let all = ops.into_iter().chain(std::iter::repeat_n(Op::Pop(tail_max), tail + 1));
            for o in all {
                match o {
                    Op::Push { stream, len, unordered, immediate } => {
                        let payload: Vec<u8> =
                            (0..len).map(|i| (next_id as usize * 31 + i) as u8).collect();
                        let m = OutgoingMessage::new(stream, payload)
                            .unordered(unordered)
                            .immediate_sack(immediate)
                            .with_ppid(next_id as u32);
                        q.push(MessageId(next_id), m.clone(), Time::ZERO).unwrap();
                        sent.insert(next_id, m);
                        pushed_per_stream.entry(stream).or_default().push(next_id);
                        buffered += len;
                        next_id += 1;
                    }
                    Op::PacketEnd => q.on_packet_end(),
                    Op::Tune { stream, priority, weight } => {
                        q.set_priority(stream, priority).unwrap();
                        q.set_weight(stream, weight).unwrap();
                        prop_assert_eq!(q.priority(stream), Some(priority));
                        prop_assert_eq!(q.weight(stream), Some(weight));
                    }
                    Op::Pop(max) => {
                        let peeked = q.peek_len(max);
                        let Some(f) = q.next_fragment(max) else {
                            prop_assert_eq!(peeked, None);
                            prop_assert!(open.is_none());
                            if !q.is_empty() {
                                // RFC 8260 3.3: the packet's stream ran dry.
                                prop_assert_eq!(kind, StreamScheduler::RoundRobinPacket);
                                q.on_packet_end();
                            }
                            continue;
                        };
                        prop_assert_eq!(peeked, Some(f.payload.len()));
                        prop_assert!(!f.payload.is_empty() && f.payload.len() <= max);
                        buffered -= f.payload.len();
                        prop_assert_eq!(q.buffered_bytes(), buffered);
                        let m = &sent[&f.msg.0];
                        prop_assert_eq!(f.stream_id.0, m.stream_id);
                        prop_assert_eq!(f.ppid, m.ppid);
                        prop_assert_eq!(f.flags.unordered, m.unordered);
                        prop_assert_eq!(f.flags.immediate, f.flags.ending && m.immediate_sack);
                        match open {
                            // No interleaving: a started message continues.
                            Some((id, stream, ssn)) => {
                                prop_assert!(!f.flags.beginning);
                                prop_assert_eq!((f.msg.0, f.stream_id.0, f.ssn.0), (id, stream, ssn));
                            }
                            None => {
                                prop_assert!(f.flags.beginning);
                                started_per_stream.entry(f.stream_id.0).or_default().push(f.msg.0);
                                if m.unordered {
                                    prop_assert_eq!(f.ssn.0, 0);
                                } else {
                                    let n = next_ssn.entry(f.stream_id.0).or_insert(0);
                                    prop_assert_eq!(f.ssn.0, *n);
                                    *n = n.wrapping_add(1);
                                }
                            }
                        }
                        got.entry(f.msg.0).or_default().extend_from_slice(&f.payload);
                        if f.flags.ending {
                            open = None;
                            completed.push(f.msg.0);
                        } else {
                            open = Some((f.msg.0, f.stream_id.0, f.ssn.0));
                        }
                    }
                }
                prop_assert_eq!(q.len(), sent.len() - completed.len());
            }

            prop_assert!(q.is_empty());
            prop_assert_eq!(completed.len(), sent.len());
            for (id, m) in &sent {
                prop_assert_eq!(&got[id][..], &m.payload[..], "message {}", id);
            }
            // FIFO within each stream.
            prop_assert_eq!(started_per_stream, pushed_per_stream);
        }
    }

    proptest! {
        /// RFC 8260 2.1 with every scheduler: fragments of different streams
        /// interleave, each stream's messages still start in push order, one
        /// at a time, each message's FSNs run 0, 1, 2, ... and its bytes come
        /// out whole; ordered and unordered messages take MIDs 0, 1, 2, ...
        /// from separate sequences per stream.
        #[test]
        fn interleaved_fragments_carry_mids_and_fsns_and_reassemble_every_message(
            ops in proptest::collection::vec(op(), 1..200),
            tail_max in 1usize..1500,
            kind in scheduler(),
            peer_buffer in prop_oneof![Just(u32::MAX), 1000u32..20_000],
        ) {
            let mut q = SendQueue::with_scheduler(5, BIG, BIG, kind);
            q.set_interleaving(true);
            q.set_peer_buffer(peer_buffer);
            let mut sent: HashMap<u64, OutgoingMessage> = HashMap::new();
            let mut pushed_per_stream: HashMap<u16, Vec<u64>> = HashMap::new();
            let mut started_per_stream: HashMap<u16, Vec<u64>> = HashMap::new();
            let mut got: HashMap<u64, Vec<u8>> = HashMap::new();
            // Per stream: the message open and its next FSN and MID.
            let mut open: HashMap<u16, (u64, u32, u32)> = HashMap::new();
            let mut next_mid: HashMap<(u16, bool), u32> = HashMap::new();
            let mut completed = 0usize;
            let mut next_id = 0u64;
            let tail: usize = ops
                .iter()
                .map(|o| match o {
                    Op::Push { len, .. } => len.div_ceil(tail_max) + 1,
                    _ => 0,
                })
                .sum();
            let all = ops.into_iter().chain(std::iter::repeat_n(Op::Pop(tail_max), tail + 1));
            for o in all {
                match o {
                    Op::Push { stream, len, unordered, immediate } => {
                        let payload: Vec<u8> =
                            (0..len).map(|i| (next_id as usize * 31 + i) as u8).collect();
                        let m = OutgoingMessage::new(stream, payload)
                            .unordered(unordered)
                            .immediate_sack(immediate)
                            .with_ppid(next_id as u32);
                        q.push(MessageId(next_id), m.clone(), Time::ZERO).unwrap();
                        sent.insert(next_id, m);
                        pushed_per_stream.entry(stream).or_default().push(next_id);
                        next_id += 1;
                    }
                    Op::PacketEnd => q.on_packet_end(),
                    Op::Tune { stream, priority, weight } => {
                        q.set_priority(stream, priority).unwrap();
                        q.set_weight(stream, weight).unwrap();
                    }
                    Op::Pop(max) => {
                        let peeked = q.peek_len(max);
                        let Some(f) = q.next_fragment(max) else {
                            prop_assert_eq!(peeked, None);
                            if !q.is_empty() {
                                prop_assert_eq!(kind, StreamScheduler::RoundRobinPacket);
                                q.on_packet_end();
                            }
                            continue;
                        };
                        prop_assert_eq!(peeked, Some(f.payload.len()));
                        prop_assert!(f.idata && !f.payload.is_empty() && f.payload.len() <= max);
                        let m = &sent[&f.msg.0];
                        let stream = f.stream_id.0;
                        prop_assert_eq!(stream, m.stream_id);
                        prop_assert_eq!(f.ppid, m.ppid);
                        prop_assert_eq!(f.flags.unordered, m.unordered);
                        match open.get(&stream).copied() {
                            Some((id, fsn, mid)) => {
                                // One message at a time per stream.
                                prop_assert!(!f.flags.beginning);
                                prop_assert_eq!((f.msg.0, f.fsn, f.mid), (id, fsn, mid));
                            }
                            None => {
                                prop_assert!(f.flags.beginning);
                                prop_assert_eq!(f.fsn, 0);
                                started_per_stream.entry(stream).or_default().push(f.msg.0);
                                let n = next_mid.entry((stream, m.unordered)).or_insert(0);
                                prop_assert_eq!(f.mid, *n);
                                *n += 1;
                            }
                        }
                        got.entry(f.msg.0).or_default().extend_from_slice(&f.payload);
                        if f.flags.ending {
                            open.remove(&stream);
                            completed += 1;
                        } else {
                            open.insert(stream, (f.msg.0, f.fsn + 1, f.mid));
                        }
                    }
                }
                prop_assert_eq!(q.len(), sent.len() - completed);
            }
            prop_assert!(q.is_empty());
            for (id, m) in &sent {
                prop_assert_eq!(&got[id][..], &m.payload[..], "message {}", id);
            }
            prop_assert_eq!(started_per_stream, pushed_per_stream);
        }
    }

    /// (stream, MID, FSN, B, E) of each fragment handed out at `max`.
    fn interleaved(q: &mut SendQueue, max: usize) -> Vec<(u16, u32, u32, bool, bool)> {
        std::iter::from_fn(|| q.next_fragment(max))
            .map(|f| {
                (
                    f.stream_id.0,
                    f.mid,
                    f.fsn,
                    f.flags.beginning,
                    f.flags.ending,
                )
            })
            .collect()
    }

    #[test]
    fn with_interleaving_round_robin_turns_to_another_stream_between_fragments() {
        let mut q = queue();
        push(&mut q, 1, msg(1, 3000));
        push(&mut q, 2, msg(2, 10));
        push(&mut q, 3, msg(2, 10));
        q.set_interleaving(true);
        assert!(q.interleaving());
        assert_eq!(
            interleaved(&mut q, 1000),
            [
                (1, 0, 0, true, false),
                (2, 0, 0, true, true),
                (1, 0, 1, false, false),
                (2, 1, 0, true, true),
                (1, 0, 2, false, true),
            ]
        );
    }

    #[test]
    fn with_interleaving_a_message_that_would_overflow_the_peer_waits_for_those_in_progress() {
        let mut q = queue();
        q.set_interleaving(true);
        // Two 3000-byte messages (3 fragments of 1000: 3768 bytes of the
        // peer's buffer each) do not fit in 6000 bytes together.
        q.set_peer_buffer(6000);
        push(&mut q, 1, msg(1, 3000));
        push(&mut q, 2, msg(2, 3000));
        push(&mut q, 3, msg(3, 10));
        assert_eq!(
            interleaved(&mut q, 1000),
            [
                (1, 0, 0, true, false),
                // Stream 2 passes its turn: its message waits for room.
                (3, 0, 0, true, true),
                (1, 0, 1, false, false),
                (1, 0, 2, false, true),
                (2, 0, 0, true, false),
                (2, 0, 1, false, false),
                (2, 0, 2, false, true),
            ]
        );
        // With room for both, they interleave.
        let mut q = queue();
        q.set_interleaving(true);
        q.set_peer_buffer(8000);
        push(&mut q, 1, msg(1, 3000));
        push(&mut q, 2, msg(2, 3000));
        let streams: Vec<u16> = interleaved(&mut q, 1000).iter().map(|f| f.0).collect();
        assert_eq!(streams, [1, 2, 1, 2, 1, 2]);
    }

    #[test]
    fn with_interleaving_wfq_shares_fragments_by_weight_and_priority_serves_the_urgent_stream() {
        // WFQ: a weight-3 stream gets three fragments per fragment of weight 1.
        let mut q = SendQueue::with_scheduler(16, BIG, BIG, StreamScheduler::Wfq);
        q.set_interleaving(true);
        q.set_weight(1, 3).unwrap();
        push(&mut q, 1, msg(0, 30_000));
        push(&mut q, 2, msg(1, 30_000));
        let first: Vec<u16> = (0..16)
            .map(|_| q.next_fragment(1000).unwrap().stream_id.0)
            .collect();
        assert_eq!(first.iter().filter(|&&s| s == 1).count(), 12, "{first:?}");
        // Priority: a message on a more urgent stream takes the next
        // fragment, even while a large one is part-sent.
        let mut q = SendQueue::with_scheduler(16, BIG, BIG, StreamScheduler::Priority);
        q.set_interleaving(true);
        q.set_priority(0, 5).unwrap();
        q.set_priority(1, 1).unwrap();
        push(&mut q, 1, msg(0, 5000));
        assert_eq!(q.next_fragment(1000).unwrap().stream_id.0, 0);
        push(&mut q, 2, msg(1, 1500));
        let order: Vec<u16> = interleaved(&mut q, 1000).iter().map(|f| f.0).collect();
        assert_eq!(order, [1, 1, 0, 0, 0, 0]);
    }

    #[test]
    fn with_interleaving_round_robin_per_packet_keeps_a_packet_to_one_stream() {
        let mut q = SendQueue::with_scheduler(16, BIG, BIG, StreamScheduler::RoundRobinPacket);
        q.set_interleaving(true);
        push(&mut q, 1, msg(0, 3000));
        push(&mut q, 2, msg(1, 3000));
        // Two fragments fill a packet: each packet is one stream's.
        assert_eq!(
            packets(&mut q, 1000, 2),
            [vec![1, 1], vec![2, 2], vec![1], vec![2]]
        );
    }

    #[test]
    fn with_interleaving_fcfs_finishes_the_oldest_message_before_the_next() {
        let mut q = SendQueue::with_scheduler(16, BIG, BIG, StreamScheduler::Fcfs);
        q.set_interleaving(true);
        push(&mut q, 1, msg(1, 2500));
        push(&mut q, 2, msg(2, 10));
        let streams: Vec<u16> = interleaved(&mut q, 1000).iter().map(|f| f.0).collect();
        assert_eq!(streams, [1, 1, 1, 2]);
    }

    #[test]
    fn with_interleaving_unordered_messages_take_mids_of_their_own() {
        let mut q = queue();
        q.set_interleaving(true);
        push(&mut q, 1, msg(0, 5));
        push(&mut q, 2, msg(0, 5).unordered(true));
        push(&mut q, 3, msg(0, 5));
        push(&mut q, 4, msg(0, 5).unordered(true));
        let mids: Vec<(u32, bool)> = std::iter::from_fn(|| q.next_fragment(100))
            .map(|f| (f.mid, f.flags.unordered))
            .collect();
        assert_eq!(mids, [(0, false), (0, true), (1, false), (1, true)]);
    }

    #[test]
    fn with_interleaving_an_abandoned_started_message_ends_with_its_mid_and_frees_its_stream() {
        let mut q = queue();
        q.set_interleaving(true);
        push(&mut q, 1, msg(1, 3000));
        push(&mut q, 2, msg(1, 10));
        push(&mut q, 3, msg(2, 10));
        let first = q.next_fragment(1000).unwrap();
        assert_eq!((first.msg, first.mid), (MessageId(1), 0));
        let end = q.abandon_current(MessageId(1)).expect("its end");
        assert_eq!(
            (
                end.idata,
                end.mid,
                end.fsn,
                end.flags.ending,
                end.payload.len()
            ),
            (true, 0, 1, true, 0)
        );
        assert_eq!((q.len(), q.buffered_bytes()), (2, 20));
        // A message not started, or unknown: nothing.
        assert_eq!(q.abandon_current(MessageId(2)), None);
        let rest = interleaved(&mut q, 1000);
        assert_eq!(rest.len(), 2);
        assert!(rest.contains(&(1, 1, 0, true, true)) && rest.contains(&(2, 0, 0, true, true)));
    }

    #[test]
    fn with_interleaving_fragments_are_i_data_and_cost_a_20_byte_header() {
        let mut q = queue();
        q.set_interleaving(true);
        push(&mut q, 1, msg(0, 100));
        let f = q.next_fragment(1000).unwrap();
        assert_eq!(f.chunk_size(), 120);
        let mut q = queue();
        push(&mut q, 1, msg(0, 100));
        assert_eq!(q.next_fragment(1000).unwrap().chunk_size(), 116);
    }

    #[test]
    fn limit_streams_removes_messages_on_streams_that_were_not_negotiated() {
        let mut q = SendQueue::new(8, 10_000, 100_000);
        for (id, stream) in [(0u64, 0u16), (1, 5), (2, 1), (3, 7)] {
            q.push(
                MessageId(id),
                OutgoingMessage::new(stream, vec![1u8; 10]),
                Time::ZERO,
            )
            .unwrap();
        }
        assert_eq!(q.limit_streams(2), vec![MessageId(1), MessageId(3)]);
        assert_eq!(
            (q.len(), q.buffered_bytes(), q.outbound_streams()),
            (2, 20, 2)
        );
        let ids: Vec<_> = std::iter::from_fn(|| q.next_fragment(100))
            .map(|f| f.msg)
            .collect();
        assert_eq!(ids, vec![MessageId(0), MessageId(2)]);
        assert!(matches!(
            q.push(MessageId(9), OutgoingMessage::new(5, vec![1]), Time::ZERO),
            Err(SendError::InvalidStream {
                stream_id: 5,
                outbound_streams: 2
            })
        ));
    }

    /// Stream 0: 1, 2, 5; stream 1: 3, 6; stream 2: 4 (ids in push order),
    /// 10 bytes each.
    fn fixed_queue(kind: StreamScheduler) -> SendQueue {
        let mut q = SendQueue::with_scheduler(16, BIG, BIG, kind);
        for (id, stream) in [(1, 0), (2, 0), (3, 1), (4, 2), (5, 0), (6, 1)] {
            push(&mut q, id, msg(stream, 10));
        }
        q
    }

    /// Message ids in the order the queue hands out their first fragments.
    fn start_order(q: &mut SendQueue) -> Vec<u64> {
        std::iter::from_fn(|| q.next_fragment(1000))
            .filter(|f| f.flags.beginning)
            .map(|f| f.msg.0)
            .collect()
    }

    /// Message ids per packet: a packet ends when the queue has nothing more
    /// for it (RFC 8260 3.3) or after `per_packet` fragments.
    fn packets(q: &mut SendQueue, max_payload: usize, per_packet: usize) -> Vec<Vec<u64>> {
        let mut out = Vec::new();
        while !q.is_empty() {
            let packet: Vec<u64> = std::iter::from_fn(|| q.next_fragment(max_payload))
                .take(per_packet)
                .map(|f| f.msg.0)
                .collect();
            q.on_packet_end();
            out.push(packet);
        }
        out
    }

    #[test]
    fn fcfs_sends_messages_in_the_order_the_application_sent_them_across_streams() {
        let mut q = fixed_queue(StreamScheduler::Fcfs);
        assert_eq!(start_order(&mut q), [1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn round_robin_takes_one_message_per_stream_in_turn() {
        let mut q = fixed_queue(StreamScheduler::RoundRobin);
        assert_eq!(start_order(&mut q), [1, 3, 4, 2, 6, 5]);
        // The default.
        let mut q = SendQueue::new(16, BIG, BIG);
        assert_eq!(q.scheduler(), StreamScheduler::RoundRobin);
        for (id, stream) in [(1, 0), (2, 0), (3, 1), (4, 2), (5, 0), (6, 1)] {
            push(&mut q, id, msg(stream, 10));
        }
        assert_eq!(start_order(&mut q), [1, 3, 4, 2, 6, 5]);
    }

    #[test]
    fn round_robin_per_packet_keeps_a_stream_within_a_packet_and_turns_between_packets() {
        let mut q = fixed_queue(StreamScheduler::RoundRobinPacket);
        assert_eq!(
            packets(&mut q, 1000, 100),
            [vec![1, 2, 5], vec![3, 6], vec![4]]
        );
    }

    #[test]
    fn round_robin_per_packet_gives_a_stream_with_more_than_a_packet_one_packet_per_turn() {
        let mut q = fixed_queue(StreamScheduler::RoundRobinPacket);
        // Two messages fill a packet.
        assert_eq!(
            packets(&mut q, 1000, 2),
            [vec![1, 2], vec![3, 6], vec![4], vec![5]]
        );
    }

    #[test]
    fn round_robin_per_packet_finishes_a_started_message_then_turns_to_the_next_stream() {
        let mut q = SendQueue::with_scheduler(16, BIG, BIG, StreamScheduler::RoundRobinPacket);
        push(&mut q, 1, msg(0, 1500)); // two fragments of 1000
        push(&mut q, 2, msg(0, 10));
        push(&mut q, 3, msg(1, 10));
        push(&mut q, 4, msg(1, 10));
        let mut next = || q.next_fragment(1000).map(|f| f.msg.0);
        // The first packet is full with message 1's first fragment.
        assert_eq!(next(), Some(1));
        q.on_packet_end();
        // RFC 9260 6.9: message 1's last fragment leads the second packet;
        // then it is stream 1's turn, until stream 1 runs dry.
        let mut next = || q.next_fragment(1000).map(|f| f.msg.0);
        assert_eq!(
            [next(), next(), next(), next()],
            [Some(1), Some(3), Some(4), None]
        );
        q.on_packet_end();
        assert_eq!(start_order(&mut q), [2]);
    }

    #[test]
    fn priority_serves_the_lowest_value_first() {
        let mut q = fixed_queue(StreamScheduler::Priority);
        q.set_priority(0, 2).unwrap();
        q.set_priority(1, 1).unwrap();
        q.set_priority(2, 1).unwrap();
        assert_eq!(start_order(&mut q), [3, 4, 6, 1, 2, 5]);
    }

    #[test]
    fn priority_with_equal_priorities_round_robins() {
        let mut q = fixed_queue(StreamScheduler::Priority);
        assert_eq!(q.priority(0), Some(0));
        for stream in 0..3 {
            q.set_priority(stream, 7).unwrap();
        }
        assert_eq!(start_order(&mut q), [1, 3, 4, 2, 6, 5]);
    }

    #[test]
    fn priority_changed_while_queued_takes_effect_for_the_next_message() {
        let mut q = fixed_queue(StreamScheduler::Priority);
        assert_eq!(q.next_fragment(1000).unwrap().msg.0, 1);
        q.set_priority(2, 0).unwrap();
        q.set_priority(0, 1).unwrap();
        q.set_priority(1, 1).unwrap();
        // A stream given a new priority joins the back of its level.
        assert_eq!(start_order(&mut q), [4, 2, 3, 5, 6]);
    }

    #[test]
    fn wfq_serves_a_weight_3_stream_three_messages_per_message_of_weight_1() {
        let mut q = SendQueue::with_scheduler(16, BIG, BIG, StreamScheduler::Wfq);
        assert_eq!(q.weight(1), Some(1));
        q.set_weight(1, 3).unwrap();
        for id in 1..=3 {
            push(&mut q, id, msg(0, 100));
        }
        for id in 11..=19 {
            push(&mut q, id, msg(1, 100));
        }
        assert_eq!(
            start_order(&mut q),
            [11, 12, 13, 1, 14, 15, 16, 2, 17, 18, 19, 3]
        );
    }

    #[test]
    fn wfq_shares_bytes_not_messages() {
        // Equal weights; stream 0 sends 300-byte messages, stream 1 100-byte ones.
        let mut q = SendQueue::with_scheduler(16, BIG, BIG, StreamScheduler::Wfq);
        for id in 0..100 {
            push(&mut q, id, msg(0, 300));
            push(&mut q, 1000 + id, msg(1, 100));
        }
        let mut bytes = [0usize; 2];
        for _ in 0..80 {
            let f = q.next_fragment(1000).unwrap();
            bytes[usize::from(f.stream_id.0)] += f.payload.len();
        }
        assert_eq!(bytes, [6000, 6000]);
    }

    #[test]
    fn scheduling_parameters_of_an_unknown_stream_or_a_zero_weight_are_refused() {
        let mut q = SendQueue::new(4, BIG, BIG);
        let unknown = SchedulingError::InvalidStream {
            stream_id: 4,
            outbound_streams: 4,
        };
        assert_eq!(q.set_priority(4, 1), Err(unknown));
        assert_eq!(q.set_weight(4, 1), Err(unknown));
        assert_eq!(q.set_weight(3, 0), Err(SchedulingError::ZeroWeight));
        assert_eq!((q.priority(4), q.weight(4)), (None, None));
        assert_eq!((q.priority(3), q.weight(3)), (Some(0), Some(1)));
        assert!(unknown.to_string().contains("stream 4"));
    }

    #[test]
    fn switching_scheduler_keeps_queued_messages_and_finishes_the_started_one() {
        let mut q = fixed_queue(StreamScheduler::RoundRobin);
        q.push(MessageId(7), msg(2, 2500), Time::ZERO).unwrap();
        assert_eq!(start_order(&mut q)[..2], [1, 3]);
        let mut q = fixed_queue(StreamScheduler::RoundRobin);
        assert_eq!(q.next_fragment(1000).unwrap().msg.0, 1);
        q.push(MessageId(7), msg(1, 2500), Time::ZERO).unwrap();
        assert_eq!(q.next_fragment(1000).unwrap().msg.0, 3);
        q.set_scheduler(StreamScheduler::Fcfs);
        assert_eq!(q.scheduler(), StreamScheduler::Fcfs);
        assert_eq!(start_order(&mut q), [2, 4, 5, 6, 7]);
    }

    #[test]
    fn limit_streams_removes_the_messages_of_dropped_streams_from_every_scheduler() {
        for kind in [
            StreamScheduler::Fcfs,
            StreamScheduler::RoundRobin,
            StreamScheduler::RoundRobinPacket,
            StreamScheduler::Priority,
            StreamScheduler::Wfq,
        ] {
            let mut q = fixed_queue(kind);
            assert_eq!(q.limit_streams(2), [MessageId(4)], "{kind:?}");
            let mut ids: Vec<u64> = packets(&mut q, 1000, 100).concat();
            ids.sort_unstable();
            assert_eq!(ids, [1, 2, 3, 5, 6], "{kind:?}");
        }
    }
}
