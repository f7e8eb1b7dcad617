//! Per-stream ordering of whole messages (RFC 9260 6.6).
//!
//! Unordered messages are ready as soon as they are whole. Ordered messages
//! are ready when their SSN is the stream's next expected one; later ones wait
//! and are released, in SSN order, by the one they wait for. SSNs compare in
//! 16-bit serial arithmetic (RFC 9260 1.6), so a message counts as ahead of the
//! stream when it is less than 2^15 SSNs ahead and as stale (already delivered)
//! otherwise.

use std::collections::{BTreeMap, VecDeque};

use crate::message::IncomingMessage;
use crate::serial::lt16;
use crate::time::Time;

use super::reassembly::Reassembled;

/// An ordered message held for an earlier one on its stream.
#[derive(Debug, Clone)]
struct Waiting {
    msg: Reassembled,
    completed_at: Time,
}

/// The ordering stage of one association's inbound streams.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// Next expected SSN of each inbound stream (RFC 9260 6.5: starts at 0).
    next_ssn: Vec<u16>,
    /// Ordered messages ahead of their stream, by (stream, SSN).
    waiting: BTreeMap<(u16, u16), Waiting>,
    waiting_bytes: usize,
    /// Deliverable messages, in the order they became deliverable.
    ready: VecDeque<IncomingMessage>,
    ready_bytes: usize,
}

impl Delivery {
    /// Ordering state for `inbound_streams` streams, each expecting SSN 0.
    pub fn new(inbound_streams: u16) -> Self {
        Self {
            next_ssn: vec![0; usize::from(inbound_streams)],
            waiting: BTreeMap::new(),
            waiting_bytes: 0,
            ready: VecDeque::new(),
            ready_bytes: 0,
        }
    }

    /// A new association takes over (RFC 9260 5.2.4 A): `inbound_streams`
    /// streams, each expecting SSN 0 (6.5). Messages ready for the
    /// application stay; ordered ones waiting for a predecessor of the old
    /// association never get it and are dropped.
    pub fn restart(&mut self, inbound_streams: u16) {
        let ready = std::mem::take(&mut self.ready);
        let ready_bytes = self.ready_bytes;
        *self = Self::new(inbound_streams);
        self.ready = ready;
        self.ready_bytes = ready_bytes;
    }

    /// Number of inbound streams.
    pub fn inbound_streams(&self) -> u16 {
        u16::try_from(self.next_ssn.len()).unwrap_or(u16::MAX)
    }

    /// The next SSN expected on an ordered stream, `None` for an unknown stream.
    pub fn next_ssn(&self, stream_id: u16) -> Option<u16> {
        self.next_ssn.get(usize::from(stream_id)).copied()
    }

    /// Takes a reassembled message, completed at `now`.
    ///
    /// The stream id must already be validated (`< inbound_streams`, RFC 9260
    /// 6.5); a message for an unknown stream is dropped. An ordered message whose
    /// SSN was already delivered (stale), or whose SSN is already waiting, is
    /// dropped.
    pub fn push(&mut self, msg: Reassembled, now: Time) {
        let stream = msg.stream_id;
        let Some(&next) = self.next_ssn.get(usize::from(stream)) else {
            return;
        };
        if msg.unordered {
            // RFC 9260 6.6: the U flag bypasses the ordering mechanism.
            self.make_ready(msg, now, now);
        } else if msg.ssn == next {
            // RFC 9260 6.6: in SSN order; this one releases those behind it.
            self.make_ready(msg, now, now);
            self.advance(stream, next.wrapping_add(1), now);
        } else if lt16(msg.ssn, next) {
            // Already delivered: a stale SSN is not stored.
        } else {
            // RFC 9260 6.6: hold until the earlier SSNs are delivered.
            let bytes = msg.payload.len();
            if let std::collections::btree_map::Entry::Vacant(e) =
                self.waiting.entry((stream, msg.ssn))
            {
                e.insert(Waiting {
                    msg,
                    completed_at: now,
                });
                self.waiting_bytes += bytes;
            }
        }
    }

    /// FORWARD TSN (RFC 3758 3.6): the sender abandoned the messages of
    /// `stream_id` up to and including `ssn`. Messages up to `ssn` that are
    /// waiting (whole, but held for an abandoned one) are delivered in SSN order,
    /// the stream then expects `ssn + 1`, and the messages waiting behind it are
    /// released. Ignored for an unknown stream or an SSN already passed.
    pub fn skip_through(&mut self, stream_id: u16, ssn: u16, now: Time) {
        let Some(&next) = self.next_ssn.get(usize::from(stream_id)) else {
            return;
        };
        if lt16(ssn, next) {
            return;
        }
        let span = ssn.wrapping_sub(next);
        let mut stranded: Vec<(u16, u16)> = self
            .waiting
            .range((stream_id, 0)..=(stream_id, u16::MAX))
            .map(|(&(_, s), _)| (s.wrapping_sub(next), s))
            .filter(|&(offset, _)| offset <= span)
            .collect();
        stranded.sort_unstable();
        for (_, s) in stranded {
            if let Some(w) = self.waiting.remove(&(stream_id, s)) {
                self.waiting_bytes = self.waiting_bytes.saturating_sub(w.msg.payload.len());
                self.make_ready(w.msg, w.completed_at, now);
            }
        }
        self.advance(stream_id, ssn.wrapping_add(1), now);
    }

    /// RFC 6525 5.2.2 E3: the peer reset its outgoing `stream_id`: the
    /// next expected SSN is 0. Whole messages of the old numbering still
    /// waiting (their predecessors were abandoned without notice) are
    /// delivered first, in SSN order. Ignored for an unknown stream.
    pub fn reset_stream(&mut self, stream_id: u16, now: Time) {
        let Some(&next) = self.next_ssn.get(usize::from(stream_id)) else {
            return;
        };
        let mut stranded: Vec<(u16, u16)> = self
            .waiting
            .range((stream_id, 0)..=(stream_id, u16::MAX))
            .map(|(&(_, s), _)| (s.wrapping_sub(next), s))
            .collect();
        stranded.sort_unstable();
        for (_, s) in stranded {
            if let Some(w) = self.waiting.remove(&(stream_id, s)) {
                self.waiting_bytes = self.waiting_bytes.saturating_sub(w.msg.payload.len());
                self.make_ready(w.msg, w.completed_at, now);
            }
        }
        if let Some(slot) = self.next_ssn.get_mut(usize::from(stream_id)) {
            *slot = 0;
        }
    }

    /// RFC 6525 5.2.5: the peer added `added` outgoing streams; they expect
    /// SSN 0. Returns the new number of inbound streams; the caller checks
    /// the limit first.
    pub fn add_streams(&mut self, added: u16) -> u16 {
        let total = self.inbound_streams().saturating_add(added);
        self.next_ssn.resize(usize::from(total), 0);
        total
    }

    /// Queues a message that is deliverable now: I-DATA's ordering by MID
    /// (`rx::interleaved`) decided it.
    pub fn push_ready(&mut self, msg: IncomingMessage) {
        self.ready_bytes += msg.payload.len();
        self.ready.push_back(msg);
    }

    /// The next deliverable message, in the order messages became deliverable.
    pub fn pop(&mut self) -> Option<IncomingMessage> {
        let msg = self.ready.pop_front()?;
        self.ready_bytes = self.ready_bytes.saturating_sub(msg.payload.len());
        Some(msg)
    }

    /// Whether a message is ready for the application.
    pub fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// Payload bytes held: ready messages and ordered messages waiting.
    pub fn buffered_bytes(&self) -> usize {
        self.ready_bytes + self.waiting_bytes
    }

    /// Messages held: ready and waiting.
    pub fn message_count(&self) -> usize {
        self.ready.len() + self.waiting.len()
    }

    /// Sets the stream's next SSN to `next` and releases the waiting messages
    /// that follow in sequence, all deliverable at `now`.
    fn advance(&mut self, stream: u16, mut next: u16, now: Time) {
        while let Some(w) = self.waiting.remove(&(stream, next)) {
            self.waiting_bytes = self.waiting_bytes.saturating_sub(w.msg.payload.len());
            self.make_ready(w.msg, w.completed_at, now);
            next = next.wrapping_add(1);
        }
        if let Some(slot) = self.next_ssn.get_mut(usize::from(stream)) {
            *slot = next;
        }
    }

    fn make_ready(&mut self, msg: Reassembled, completed_at: Time, deliverable_at: Time) {
        self.ready_bytes += msg.payload.len();
        self.ready.push_back(IncomingMessage {
            stream_id: msg.stream_id,
            ppid: msg.ppid,
            unordered: msg.unordered,
            ssn: msg.ssn,
            first_tsn: msg.first_tsn,
            payload: msg.payload,
            completed_at,
            deliverable_at,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn msg(stream_id: u16, ssn: u16, payload: &'static [u8]) -> Reassembled {
        Reassembled {
            stream_id,
            ssn,
            ppid: 0,
            unordered: false,
            first_tsn: u32::from(ssn),
            payload: Bytes::from_static(payload),
        }
    }

    fn unordered(stream_id: u16, payload: &'static [u8]) -> Reassembled {
        Reassembled {
            unordered: true,
            ..msg(stream_id, 999, payload)
        }
    }

    fn drain(d: &mut Delivery) -> Vec<(u16, u16)> {
        std::iter::from_fn(|| d.pop())
            .map(|m| (m.stream_id, m.ssn))
            .collect()
    }

    #[test]
    fn ordered_messages_wait_for_earlier_ssns_then_release_in_order() {
        let mut d = Delivery::new(1);
        d.push(msg(0, 2, b"c"), Time(1));
        d.push(msg(0, 1, b"b"), Time(2));
        assert!(!d.has_ready());
        assert_eq!(d.buffered_bytes(), 2);
        d.push(msg(0, 0, b"a"), Time(3));
        assert!(d.has_ready());
        assert_eq!(d.buffered_bytes(), 3);
        assert_eq!(drain(&mut d), vec![(0, 0), (0, 1), (0, 2)]);
        assert_eq!(d.next_ssn(0), Some(3));
        assert_eq!(d.buffered_bytes(), 0);
    }

    #[test]
    fn a_gap_stops_the_release() {
        let mut d = Delivery::new(1);
        d.push(msg(0, 1, b"b"), Time(1));
        d.push(msg(0, 3, b"d"), Time(1));
        d.push(msg(0, 0, b"a"), Time(2));
        assert_eq!(drain(&mut d), vec![(0, 0), (0, 1)]);
        assert_eq!(d.next_ssn(0), Some(2));
        assert_eq!(d.buffered_bytes(), 1);
        d.push(msg(0, 2, b"c"), Time(3));
        assert_eq!(drain(&mut d), vec![(0, 2), (0, 3)]);
    }

    #[test]
    fn unordered_messages_are_ready_at_once() {
        let mut d = Delivery::new(2);
        d.push(msg(1, 5, b"late"), Time(1)); // ordered, waits for SSN 0..=4
        d.push(unordered(1, b"now"), Time(2));
        let m = d.pop().unwrap();
        assert!(m.unordered);
        assert_eq!(&m.payload[..], b"now");
        assert_eq!(d.next_ssn(1), Some(0)); // unordered does not move the SSN
        assert!(d.pop().is_none());
    }

    #[test]
    fn ssn_wraps_from_65535_to_0() {
        let mut d = Delivery::new(1);
        for ssn in 0..=u16::MAX {
            d.push(msg(0, ssn, b""), Time(0));
        }
        assert_eq!(d.next_ssn(0), Some(0));
        assert_eq!(std::iter::from_fn(|| d.pop()).count(), 65_536);
        // 1 arrives before 0 after the wrap; 65535 is stale.
        d.push(msg(0, 1, b"b"), Time(1));
        d.push(msg(0, u16::MAX, b"old"), Time(1));
        assert!(!d.has_ready());
        d.push(msg(0, 0, b"a"), Time(2));
        assert_eq!(drain(&mut d), vec![(0, 0), (0, 1)]);
        assert_eq!(d.buffered_bytes(), 0);
    }

    #[test]
    fn waiting_across_the_wrap_releases_in_serial_order() {
        let mut d = Delivery::new(1);
        d.next_ssn[0] = u16::MAX - 1;
        d.push(msg(0, 1, b"d"), Time(1));
        d.push(msg(0, 0, b"c"), Time(1));
        d.push(msg(0, u16::MAX, b"b"), Time(1));
        d.push(msg(0, u16::MAX - 1, b"a"), Time(2));
        assert_eq!(
            drain(&mut d),
            vec![(0, u16::MAX - 1), (0, u16::MAX), (0, 0), (0, 1)]
        );
        assert_eq!(d.next_ssn(0), Some(2));
    }

    #[test]
    fn streams_are_ordered_independently() {
        let mut d = Delivery::new(3);
        d.push(msg(0, 1, b"x"), Time(1)); // waits for 0 on stream 0
        d.push(msg(2, 0, b"y"), Time(1)); // stream 2 is not held up
        assert_eq!(drain(&mut d), vec![(2, 0)]);
        d.push(msg(1, 0, b"z"), Time(2));
        d.push(msg(0, 0, b"w"), Time(3));
        assert_eq!(drain(&mut d), vec![(1, 0), (0, 0), (0, 1)]);
    }

    #[test]
    fn stale_ssn_is_dropped_not_stored() {
        let mut d = Delivery::new(1);
        d.push(msg(0, 0, b"a"), Time(1));
        d.pop().unwrap();
        d.push(msg(0, 0, b"again"), Time(2));
        assert!(!d.has_ready());
        assert_eq!(d.buffered_bytes(), 0);
        assert!(d.waiting.is_empty());
    }

    #[test]
    fn unknown_stream_is_dropped() {
        let mut d = Delivery::new(2);
        d.push(msg(2, 0, b"a"), Time(1));
        d.push(unordered(7, b"b"), Time(1));
        assert!(!d.has_ready());
        assert_eq!(d.buffered_bytes(), 0);
        assert_eq!(d.inbound_streams(), 2);
        assert_eq!(Delivery::new(u16::MAX).inbound_streams(), u16::MAX);
    }

    #[test]
    fn second_message_with_a_waiting_ssn_is_dropped() {
        let mut d = Delivery::new(1);
        d.push(msg(0, 1, b"first"), Time(1));
        d.push(msg(0, 1, b"second"), Time(2));
        assert_eq!(d.buffered_bytes(), 5);
        d.push(msg(0, 0, b""), Time(3));
        d.pop().unwrap();
        assert_eq!(&d.pop().unwrap().payload[..], b"first");
    }

    #[test]
    fn timestamps_record_completion_and_release() {
        let mut d = Delivery::new(1);
        d.push(msg(0, 1, b"b"), Time(10));
        d.push(msg(0, 0, b"a"), Time(25));
        d.push(unordered(0, b"u"), Time(30));
        let a = d.pop().unwrap();
        assert_eq!((a.completed_at, a.deliverable_at), (Time(25), Time(25)));
        let b = d.pop().unwrap();
        assert_eq!((b.completed_at, b.deliverable_at), (Time(10), Time(25)));
        let u = d.pop().unwrap();
        assert_eq!((u.completed_at, u.deliverable_at), (Time(30), Time(30)));
    }

    #[test]
    fn reset_stream_delivers_stranded_messages_then_expects_ssn_zero() {
        let mut d = Delivery::new(2);
        d.push(msg(0, 0, b"a"), Time(1));
        d.push(msg(0, 3, b"d"), Time(1));
        d.push(msg(0, 2, b"c"), Time(1));
        d.push(msg(1, 4, b"other"), Time(1));
        assert_eq!(drain(&mut d), vec![(0, 0)]);
        d.reset_stream(0, Time(5));
        assert_eq!(drain(&mut d), vec![(0, 2), (0, 3)]);
        assert_eq!(d.next_ssn(0), Some(0));
        assert_eq!(d.next_ssn(1), Some(0)); // untouched, still waiting for 0..=3
        assert_eq!(d.buffered_bytes(), 5);
        d.push(msg(0, 0, b"new"), Time(6));
        assert_eq!(drain(&mut d), vec![(0, 0)]);
        assert_eq!(d.add_streams(3), 5);
        assert_eq!(d.next_ssn(4), Some(0));
        d.reset_stream(9, Time(7)); // unknown: ignored
    }

    #[test]
    fn skip_through_delivers_stranded_messages_and_moves_the_stream_on() {
        let mut d = Delivery::new(2);
        d.push(msg(0, 2, b"c"), Time(1));
        d.push(msg(0, 4, b"e"), Time(1));
        d.push(msg(0, 5, b"f"), Time(1));
        d.push(msg(1, 1, b"other"), Time(1));
        // SSNs 0..=3 abandoned: 2 was whole and goes out, then 4 and 5 follow.
        d.skip_through(0, 3, Time(7));
        assert_eq!(drain(&mut d), vec![(0, 2), (0, 4), (0, 5)]);
        assert_eq!(d.next_ssn(0), Some(6));
        assert_eq!(d.buffered_bytes(), 5); // stream 1 untouched
        // Out of date, or unknown stream: ignored.
        d.skip_through(0, 1, Time(8));
        d.skip_through(9, 1, Time(8));
        assert_eq!(d.next_ssn(0), Some(6));
        assert!(!d.has_ready());
    }
}
