//! The receive side of I-DATA (RFC 8260 2.1): reassembly keyed by message,
//! and ordered delivery by Message Identifier.
//!
//! With I-DATA the fragments of one message no longer take consecutive TSNs:
//! a stream's fragments interleave with other streams'. [`IReassembly`] keys
//! each unfinished message by (stream, U flag, MID) and orders its fragments
//! by Fragment Sequence Number (FSN): the first fragment (B) has FSN 0 and
//! carries the PPID, the last (E) names the message's last FSN, and the
//! message is whole when every FSN from 0 to the last one is held.
//! [`MidOrdering`] then holds ordered messages until their MID is the
//! stream's next (32-bit serial arithmetic, RFC 1982), as [`super::Delivery`]
//! does by SSN for DATA; unordered messages are delivered when whole.
//!
//! Every held fragment and waiting message is counted in the association's
//! receive window (see [`super::window`]), so a peer that opens many
//! messages, on many streams, with huge FSNs or MIDs far ahead, holds at most
//! the receive buffer: the fragments it sends beyond it are dropped before
//! they reach these structures. Each structure has one entry per held
//! fragment or message, never one per FSN or MID skipped.

use std::collections::BTreeMap;

use bytes::{Bytes, BytesMut};

use crate::message::IncomingMessage;
use crate::serial::{Unwrapper, lt32};
use crate::time::Time;
use crate::wire::chunk::DataFlags;

use super::Delivery;
use super::fsn_map::FsnMap;
use super::reassembly::ReassemblyError;

/// One I-DATA chunk's user data, as taken off the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IFragment {
    pub tsn: u32,
    pub stream_id: u16,
    pub mid: u32,
    /// 0 on the first fragment (B), which carries the PPID instead.
    pub fsn: u32,
    /// The PPID, on the first fragment only.
    pub ppid: u32,
    pub flags: DataFlags,
    pub payload: Bytes,
}

/// A message is known by its stream, its U flag and its MID (RFC 8260 2.1:
/// ordered and unordered messages number their MIDs separately).
pub type MessageKey = (u16, bool, u32);

/// A whole I-DATA message, not yet ordered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IReassembled {
    pub stream_id: u16,
    pub unordered: bool,
    pub mid: u32,
    pub ppid: u32,
    /// TSN of the first (B) fragment.
    pub first_tsn: u32,
    pub payload: Bytes,
}

/// The fragments held of one unfinished message.
#[derive(Debug, Clone, Default)]
struct Partial {
    /// Payload by FSN, with the fragment's unwrapped TSN.
    fragments: FsnMap,
    /// From the first fragment (FSN 0), once held.
    ppid: Option<u32>,
    first_tsn: u32,
    /// The FSN of the last fragment (E), once held.
    last_fsn: Option<u32>,
    bytes: usize,
}

/// The I-DATA reassembly queue of one association; see the [module docs](self).
#[derive(Debug, Clone)]
pub struct IReassembly {
    unwrapper: Unwrapper,
    max_message_size: usize,
    partials: BTreeMap<MessageKey, Partial>,
    /// Every held fragment by unwrapped TSN: its message and FSN.
    by_tsn: BTreeMap<u64, (MessageKey, u32)>,
    buffered: usize,
}

impl IReassembly {
    /// An empty queue for a peer whose first TSN is `peer_initial_tsn`;
    /// messages larger than `max_message_size` bytes are refused.
    pub fn new(peer_initial_tsn: u32, max_message_size: usize) -> Self {
        Self {
            unwrapper: Unwrapper::new(peer_initial_tsn),
            max_message_size,
            partials: BTreeMap::new(),
            by_tsn: BTreeMap::new(),
            buffered: 0,
        }
    }

    /// Adds a new fragment (its TSN is new: the tracker said so) and returns
    /// the message it completes, if any. On error nothing is stored; the
    /// association aborts (the fragments contradict each other).
    pub fn push(&mut self, f: IFragment) -> Result<Option<IReassembled>, ReassemblyError> {
        let tsn = self.unwrapper.unwrap(f.tsn);
        if self.by_tsn.contains_key(&tsn) {
            return Ok(None);
        }
        let key: MessageKey = (f.stream_id, f.flags.unordered, f.mid);
        let violation = |reason| ReassemblyError::InconsistentFragment { tsn: f.tsn, reason };
        let len = f.payload.len();
        if f.flags.beginning && f.flags.ending {
            if self.partials.contains_key(&key) {
                return Err(violation(
                    "a whole message reuses the MID of an unfinished one",
                ));
            }
            self.check_size(f.stream_id, len)?;
            return Ok(Some(IReassembled {
                stream_id: f.stream_id,
                unordered: f.flags.unordered,
                mid: f.mid,
                ppid: f.ppid,
                first_tsn: f.tsn,
                payload: f.payload,
            }));
        }
        if !f.flags.beginning && f.fsn == 0 {
            // RFC 8260 2.1: FSN 0 is the first fragment's, which has B set.
            return Err(violation("a fragment with FSN 0 but without the B flag"));
        }
        if let Some(p) = self.partials.get(&key) {
            if p.fragments.contains(f.fsn) {
                return Err(violation("two fragments of one message with the same FSN"));
            }
            if f.flags.ending && p.last_fsn.is_some() {
                return Err(violation("two last fragments of one message"));
            }
            // RFC 8260 2.1: no fragment follows the last one.
            let last = if f.flags.ending {
                Some(f.fsn)
            } else {
                p.last_fsn
            };
            let top = p.fragments.last_fsn().unwrap_or(0).max(f.fsn);
            if last.is_some_and(|last| top > last) {
                return Err(violation("a fragment beyond the message's last one"));
            }
            self.check_size(f.stream_id, p.bytes.saturating_add(len))?;
        } else {
            self.check_size(f.stream_id, len)?;
        }

        let p = self.partials.entry(key).or_default();
        if f.flags.beginning {
            p.ppid = Some(f.ppid);
            p.first_tsn = f.tsn;
        }
        if f.flags.ending {
            p.last_fsn = Some(f.fsn);
        }
        p.bytes += len;
        p.fragments.insert(f.fsn, (tsn, f.payload));
        self.by_tsn.insert(tsn, (key, f.fsn));
        self.buffered += len;

        // Whole when the FSNs held are exactly 0..=last: distinct FSNs, none
        // above the last, as many as last + 1.
        let whole = p.last_fsn.is_some_and(|last| {
            p.ppid.is_some() && p.fragments.len() as u64 == u64::from(last) + 1
        });
        Ok(whole.then(|| self.take(key)).flatten())
    }

    /// Payload bytes held in unfinished messages.
    pub fn buffered_bytes(&self) -> usize {
        self.buffered
    }

    /// Fragments held.
    pub fn fragment_count(&self) -> usize {
        self.by_tsn.len()
    }

    /// Unfinished messages held.
    pub fn message_count(&self) -> usize {
        self.partials.len()
    }

    /// The payload bytes and fragment count held of the unfinished message
    /// `key`, if any: what a fragment of it continues.
    pub fn partial(&self, key: MessageKey) -> Option<(usize, usize)> {
        self.partials
            .get(&key)
            .map(|p| (p.bytes, p.fragments.len()))
    }

    /// Whether the fragments held above TSN `above` (serial arithmetic),
    /// taken from the highest down, amount to `need` once each is weighed by
    /// `charge`.
    pub fn can_free_above(&self, above: u32, need: usize, charge: impl Fn(usize) -> usize) -> bool {
        let floor = self.unwrapper.peek(above);
        let mut freed = 0usize;
        for (_, &(key, fsn)) in self.by_tsn.range(floor.saturating_add(1)..).rev() {
            let len = self
                .partials
                .get(&key)
                .and_then(|p| p.fragments.get(fsn))
                .map_or(0, |(_, b)| b.len());
            freed = freed.saturating_add(charge(len));
            if freed >= need {
                return true;
            }
        }
        need == 0
    }

    /// Drops the held fragment with the highest TSN if that TSN is above
    /// `above`, to make room for a lower one (RFC 9260 6.2). Returns its TSN
    /// and payload size; the caller reneges on the TSN.
    pub fn evict_highest_above(&mut self, above: u32) -> Option<(u32, usize)> {
        let floor = self.unwrapper.peek(above);
        let (&tsn, &(key, fsn)) = self.by_tsn.last_key_value()?;
        if tsn <= floor {
            return None;
        }
        self.by_tsn.remove(&tsn);
        let mut len = 0;
        if let Some(p) = self.partials.get_mut(&key) {
            if let Some((_, b)) = p.fragments.remove(fsn) {
                len = b.len();
            }
            p.bytes = p.bytes.saturating_sub(len);
            if fsn == 0 {
                p.ppid = None;
            }
            if p.last_fsn == Some(fsn) {
                p.last_fsn = None;
            }
            if p.fragments.is_empty() {
                self.partials.remove(&key);
            }
        }
        self.buffered = self.buffered.saturating_sub(len);
        Some((crate::serial::wrap(tsn), len))
    }

    /// I-FORWARD-TSN (RFC 8260 2.3.1): the sender abandoned the message
    /// `(stream, U, mid)`, and for an ordered stream every earlier one too.
    /// Drops the unfinished messages that covers; returns the bytes dropped.
    ///
    /// Only the messages dropped are visited, so a peer that names the same
    /// stream again and again costs nothing for the messages it keeps.
    pub fn forget(&mut self, stream_id: u16, unordered: bool, mid: u32) -> usize {
        // The MIDs at or before `mid` in serial arithmetic (RFC 1982): the
        // 2^31 values up to it.
        let first = if unordered {
            mid
        } else {
            mid.wrapping_sub((1 << 31) - 1)
        };
        let doomed: Vec<MessageKey> = serial_span(first, mid)
            .flat_map(|span| {
                let (lo, hi) = span.into_inner();
                self.partials
                    .range((stream_id, unordered, lo)..=(stream_id, unordered, hi))
                    .map(|(&k, _)| k)
            })
            .collect();
        self.drop_partials(doomed)
    }

    /// RFC 3758 3.6 with RFC 8260: the cumulative TSN moved to `cum_tsn`
    /// (an I-FORWARD-TSN), and a TSN it passed that did not arrive never
    /// will. A message's fragments take increasing TSNs in FSN order (RFC
    /// 8260 2.1): an unfinished message missing an FSN below one held at or
    /// before `cum_tsn` can never finish, named by the I-FORWARD-TSN or not,
    /// and is dropped. Returns the bytes dropped. Visits only the fragments
    /// at or before `cum_tsn`.
    pub fn forget_stranded(&mut self, cum_tsn: u32) -> usize {
        let cum = self.unwrapper.peek(cum_tsn);
        let mut doomed: Vec<MessageKey> = self
            .by_tsn
            .range(..=cum)
            .filter(|(_, (key, fsn))| {
                self.partials.get(key).is_some_and(|p| {
                    // FSNs below `fsn` held: all of 0..fsn if none is missing.
                    p.fragments.count_below(*fsn) as u64 != u64::from(*fsn)
                })
            })
            .map(|(_, &(key, _))| key)
            .collect();
        doomed.sort_unstable();
        doomed.dedup();
        self.drop_partials(doomed)
    }

    /// RFC 6525 5.2.2 with RFC 8260: the peer reset `stream_id` once every
    /// TSN up to `last_tsn` (the request's Sender's Last Assigned TSN) was
    /// received or skipped. Its unfinished messages of the old numbering,
    /// those holding a fragment at or before `last_tsn`, can never finish
    /// (their missing fragments were abandoned) and their MIDs, ordered and
    /// unordered, are reused by the new numbering from 0: they are dropped.
    /// Messages wholly after `last_tsn` are of the new numbering and stay.
    /// Returns the bytes dropped.
    pub fn forget_old_numbering(&mut self, stream_id: u16, last_tsn: u32) -> usize {
        self.forget_holding_through(
            (stream_id, false, 0)..=(stream_id, true, u32::MAX),
            last_tsn,
        )
    }

    /// RFC 6525 5.2.4 G5 for the requester of an SSN/TSN reset whose peer
    /// went on sending with TSNs from `last_tsn + 1`: as
    /// [`forget_old_numbering`](Self::forget_old_numbering) on every stream.
    pub fn forget_every_old_numbering(&mut self, last_tsn: u32) -> usize {
        self.forget_holding_through((0, false, 0)..=(u16::MAX, true, u32::MAX), last_tsn)
    }

    /// Drops the unfinished messages in `keys` that hold a fragment at or
    /// before `last_tsn`; returns the bytes dropped.
    fn forget_holding_through(
        &mut self,
        keys: std::ops::RangeInclusive<MessageKey>,
        last_tsn: u32,
    ) -> usize {
        let last = self.unwrapper.peek(last_tsn);
        let doomed: Vec<MessageKey> = self
            .partials
            .range(keys)
            .filter(|(_, p)| p.fragments.values().any(|&(tsn, _)| tsn <= last))
            .map(|(&k, _)| k)
            .collect();
        self.drop_partials(doomed)
    }

    /// Drops the unfinished messages `keys` and their fragments; returns the
    /// bytes dropped.
    fn drop_partials(&mut self, keys: Vec<MessageKey>) -> usize {
        let mut dropped = 0;
        for key in keys {
            if let Some(p) = self.partials.remove(&key) {
                for (tsn, _) in p.fragments.values() {
                    self.by_tsn.remove(tsn);
                }
                dropped += p.bytes;
            }
        }
        self.buffered = self.buffered.saturating_sub(dropped);
        dropped
    }

    /// Every fragment held, in TSN order, as it arrived: to hand them to
    /// another queue (a deferred reset's new numbering joins the
    /// association's once the reset is performed).
    pub fn into_fragments(self) -> Vec<IFragment> {
        let Self {
            partials, by_tsn, ..
        } = self;
        by_tsn
            .values()
            .filter_map(|&(key, fsn)| {
                let p = partials.get(&key)?;
                let (tsn, payload) = p.fragments.get(fsn)?;
                let beginning = fsn == 0;
                Some(IFragment {
                    tsn: crate::serial::wrap(*tsn),
                    stream_id: key.0,
                    mid: key.2,
                    fsn,
                    ppid: if beginning { p.ppid.unwrap_or(0) } else { 0 },
                    flags: DataFlags {
                        immediate: false,
                        unordered: key.1,
                        beginning,
                        ending: p.last_fsn == Some(fsn),
                    },
                    payload: payload.clone(),
                })
            })
            .collect()
    }

    fn check_size(&self, stream_id: u16, size: usize) -> Result<(), ReassemblyError> {
        if size > self.max_message_size {
            return Err(ReassemblyError::MessageTooLarge {
                stream_id,
                size,
                max: self.max_message_size,
            });
        }
        Ok(())
    }

    /// Removes the whole message `key` and joins its payload in FSN order.
    fn take(&mut self, key: MessageKey) -> Option<IReassembled> {
        let p = self.partials.remove(&key)?;
        let mut payload = BytesMut::with_capacity(p.bytes);
        for (tsn, bytes) in p.fragments.values() {
            self.by_tsn.remove(tsn);
            payload.extend_from_slice(bytes);
        }
        self.buffered = self.buffered.saturating_sub(p.bytes);
        Some(IReassembled {
            stream_id: key.0,
            unordered: key.1,
            mid: key.2,
            ppid: p.ppid.unwrap_or(0),
            first_tsn: p.first_tsn,
            payload: payload.freeze(),
        })
    }
}

/// An ordered message held for an earlier MID on its stream.
#[derive(Debug, Clone)]
struct Waiting {
    msg: IReassembled,
    completed_at: Time,
}

/// Per-stream ordering of whole I-DATA messages by MID (RFC 8260 2.1, as RFC
/// 9260 6.6 orders DATA by SSN). Deliverable messages go to the
/// association's [`Delivery`], which hands them to the application.
#[derive(Debug, Clone)]
pub struct MidOrdering {
    /// Next expected ordered MID of each inbound stream (starts at 0).
    next_mid: Vec<u32>,
    /// Ordered messages ahead of their stream, by (stream, MID).
    waiting: BTreeMap<(u16, u32), Waiting>,
    waiting_bytes: usize,
}

impl MidOrdering {
    /// Ordering state for `inbound_streams` streams, each expecting MID 0.
    pub fn new(inbound_streams: u16) -> Self {
        Self {
            next_mid: vec![0; usize::from(inbound_streams)],
            waiting: BTreeMap::new(),
            waiting_bytes: 0,
        }
    }

    /// The next ordered MID expected on a stream, `None` for an unknown one.
    pub fn next_mid(&self, stream_id: u16) -> Option<u32> {
        self.next_mid.get(usize::from(stream_id)).copied()
    }

    /// Takes a whole message completed at `now`: unordered ones and the
    /// stream's next MID become deliverable (releasing those behind it);
    /// later MIDs wait; a stale MID (already delivered or skipped), a MID
    /// already waiting or an unknown stream is dropped.
    pub fn push(&mut self, msg: IReassembled, now: Time, out: &mut Delivery) {
        let stream = msg.stream_id;
        let Some(&next) = self.next_mid.get(usize::from(stream)) else {
            return;
        };
        if msg.unordered {
            // RFC 8260 2.1: unordered messages bypass the ordering.
            deliver(out, msg, now, now);
        } else if msg.mid == next {
            deliver(out, msg, now, now);
            self.advance(stream, next.wrapping_add(1), now, out);
        } else if lt32(msg.mid, next) {
            // Already delivered or skipped: not stored.
        } else if let std::collections::btree_map::Entry::Vacant(e) =
            self.waiting.entry((stream, msg.mid))
        {
            self.waiting_bytes += msg.payload.len();
            e.insert(Waiting {
                msg,
                completed_at: now,
            });
        }
    }

    /// I-FORWARD-TSN (RFC 8260 2.3.1, RFC 3758 3.6): the sender abandoned
    /// the ordered messages of `stream_id` up to and including `mid`. Those
    /// waiting are delivered in MID order, the stream then expects `mid + 1`,
    /// and the messages waiting behind it are released. Ignored for an
    /// unknown stream or a MID already passed.
    pub fn skip_through(&mut self, stream_id: u16, mid: u32, now: Time, out: &mut Delivery) {
        let Some(&next) = self.next_mid.get(usize::from(stream_id)) else {
            return;
        };
        if lt32(mid, next) {
            return;
        }
        // The MIDs from `next` to `mid`, in serial order; only those waiting
        // are visited.
        let stranded: Vec<u32> = serial_span(next, mid)
            .flat_map(|span| {
                let (lo, hi) = span.into_inner();
                self.waiting
                    .range((stream_id, lo)..=(stream_id, hi))
                    .map(|(&(_, m), _)| m)
            })
            .collect();
        for m in stranded {
            if let Some(w) = self.waiting.remove(&(stream_id, m)) {
                self.waiting_bytes = self.waiting_bytes.saturating_sub(w.msg.payload.len());
                deliver(out, w.msg, w.completed_at, now);
            }
        }
        self.advance(stream_id, mid.wrapping_add(1), now, out);
    }

    /// RFC 6525 5.2.2 E3 with RFC 8260: the peer reset its outgoing
    /// `stream_id`: its next ordered MID is 0. Whole messages of the old
    /// numbering still waiting (their predecessors were abandoned without
    /// notice) are delivered first, in MID order from the one expected.
    /// Ignored for an unknown stream.
    pub fn reset_stream(&mut self, stream_id: u16, now: Time, out: &mut Delivery) {
        let Some(&next) = self.next_mid.get(usize::from(stream_id)) else {
            return;
        };
        let mut stranded: Vec<(u32, u32)> = self
            .waiting
            .range((stream_id, 0)..=(stream_id, u32::MAX))
            .map(|(&(_, m), _)| (m.wrapping_sub(next), m))
            .collect();
        stranded.sort_unstable();
        for (_, m) in stranded {
            if let Some(w) = self.waiting.remove(&(stream_id, m)) {
                self.waiting_bytes = self.waiting_bytes.saturating_sub(w.msg.payload.len());
                deliver(out, w.msg, w.completed_at, now);
            }
        }
        if let Some(slot) = self.next_mid.get_mut(usize::from(stream_id)) {
            *slot = 0;
        }
    }

    /// RFC 6525 5.2.5: the peer added `added` outgoing streams, our inbound
    /// ones; they expect MID 0. The caller checks the limit first.
    pub fn add_streams(&mut self, added: u16) {
        let total = self.next_mid.len().saturating_add(usize::from(added));
        self.next_mid.resize(total.min(usize::from(u16::MAX)), 0);
    }

    /// Payload bytes of the ordered messages waiting.
    pub fn buffered_bytes(&self) -> usize {
        self.waiting_bytes
    }

    /// Ordered messages waiting.
    pub fn message_count(&self) -> usize {
        self.waiting.len()
    }

    /// Sets the stream's next MID to `next` and releases the waiting
    /// messages that follow in sequence.
    fn advance(&mut self, stream: u16, mut next: u32, now: Time, out: &mut Delivery) {
        while let Some(w) = self.waiting.remove(&(stream, next)) {
            self.waiting_bytes = self.waiting_bytes.saturating_sub(w.msg.payload.len());
            deliver(out, w.msg, w.completed_at, now);
            next = next.wrapping_add(1);
        }
        if let Some(slot) = self.next_mid.get_mut(usize::from(stream)) {
            *slot = next;
        }
    }
}

/// The u32 values from `lo` up to `hi` inclusive, wrapping past `u32::MAX`,
/// as at most two ascending ranges, in serial order.
fn serial_span(lo: u32, hi: u32) -> impl Iterator<Item = std::ops::RangeInclusive<u32>> {
    let (a, b) = if lo <= hi {
        (lo..=hi, None)
    } else {
        (lo..=u32::MAX, Some(0..=hi))
    };
    std::iter::once(a).chain(b)
}

/// Hands a whole message to the application's queue. The SSN field carries
/// the low 16 bits of the MID.
fn deliver(out: &mut Delivery, msg: IReassembled, completed_at: Time, deliverable_at: Time) {
    out.push_ready(IncomingMessage {
        stream_id: msg.stream_id,
        ppid: msg.ppid,
        unordered: msg.unordered,
        ssn: msg.mid as u16,
        first_tsn: msg.first_tsn,
        payload: msg.payload,
        completed_at,
        deliverable_at,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frag(tsn: u32, stream: u16, mid: u32, fsn: u32, b: bool, e: bool, data: &[u8]) -> IFragment {
        IFragment {
            tsn,
            stream_id: stream,
            mid,
            fsn,
            ppid: if b { 42 } else { 0 },
            flags: DataFlags {
                immediate: false,
                unordered: false,
                beginning: b,
                ending: e,
            },
            payload: Bytes::copy_from_slice(data),
        }
    }

    #[test]
    fn interleaved_fragments_of_two_messages_reassemble_by_fsn_in_any_order() {
        let mut r = IReassembly::new(1, 1 << 20);
        // Stream 1 MID 0: "abc" in three fragments; stream 2 MID 0: "xy".
        assert_eq!(r.push(frag(3, 1, 0, 2, false, true, b"c")).unwrap(), None);
        assert_eq!(r.push(frag(2, 2, 0, 0, true, false, b"x")).unwrap(), None);
        assert_eq!(r.push(frag(1, 1, 0, 0, true, false, b"a")).unwrap(), None);
        let y = r
            .push(frag(5, 2, 0, 1, false, true, b"y"))
            .unwrap()
            .unwrap();
        assert_eq!(
            (&y.payload[..], y.stream_id, y.ppid, y.first_tsn),
            (&b"xy"[..], 2, 42, 2)
        );
        assert_eq!((r.buffered_bytes(), r.fragment_count()), (2, 2));
        let m = r
            .push(frag(4, 1, 0, 1, false, false, b"b"))
            .unwrap()
            .unwrap();
        assert_eq!((&m.payload[..], m.stream_id, m.mid), (&b"abc"[..], 1, 0));
        assert_eq!(
            (r.buffered_bytes(), r.fragment_count(), r.message_count()),
            (0, 0, 0)
        );
    }

    #[test]
    fn contradicting_fragments_are_refused_and_change_nothing() {
        let mut r = IReassembly::new(1, 1 << 20);
        r.push(frag(1, 0, 7, 0, true, false, b"a")).unwrap();
        r.push(frag(2, 0, 7, 3, false, true, b"d")).unwrap();
        for bad in [
            frag(3, 0, 7, 3, false, false, b"x"), // same FSN twice
            frag(4, 0, 7, 5, false, false, b"x"), // beyond the last
            frag(5, 0, 7, 2, false, true, b"x"),  // second last fragment
            frag(6, 0, 7, 0, true, true, b"x"),   // whole message on an open MID
        ] {
            assert!(matches!(
                r.push(bad),
                Err(ReassemblyError::InconsistentFragment { .. })
            ));
        }
        assert_eq!((r.buffered_bytes(), r.fragment_count()), (2, 2));
    }

    #[test]
    fn a_message_above_the_limit_is_refused() {
        let mut r = IReassembly::new(1, 4);
        r.push(frag(1, 0, 0, 0, true, false, b"abc")).unwrap();
        assert!(matches!(
            r.push(frag(2, 0, 0, 1, false, false, b"de")),
            Err(ReassemblyError::MessageTooLarge {
                size: 5,
                max: 4,
                ..
            })
        ));
    }

    #[test]
    fn eviction_takes_the_highest_tsn_and_the_message_can_still_complete() {
        let mut r = IReassembly::new(10, 1 << 20);
        r.push(frag(10, 0, 0, 0, true, false, b"a")).unwrap();
        r.push(frag(12, 0, 0, 2, false, true, b"c")).unwrap();
        assert!(r.can_free_above(10, 1, |n| n));
        assert!(!r.can_free_above(12, 1, |n| n));
        assert_eq!(r.evict_highest_above(10), Some((12, 1)));
        assert_eq!(r.evict_highest_above(10), None);
        r.push(frag(11, 0, 0, 1, false, false, b"b")).unwrap();
        let m = r
            .push(frag(12, 0, 0, 2, false, true, b"c"))
            .unwrap()
            .unwrap();
        assert_eq!(&m.payload[..], b"abc");
    }

    #[test]
    fn forget_drops_an_ordered_stream_through_the_mid_and_only_the_named_unordered_one() {
        let mut r = IReassembly::new(1, 1 << 20);
        r.push(frag(1, 3, 4, 0, true, false, b"a")).unwrap();
        r.push(frag(2, 3, 5, 0, true, false, b"b")).unwrap();
        r.push(frag(3, 3, 6, 0, true, false, b"c")).unwrap();
        let mut u = frag(4, 3, 5, 0, true, false, b"u");
        u.flags.unordered = true;
        r.push(u.clone()).unwrap();
        u.tsn = 5;
        u.mid = 9;
        r.push(u).unwrap();
        assert_eq!(r.forget(3, false, 5), 2);
        assert_eq!(r.forget(3, true, 9), 1);
        assert_eq!(r.partial((3, false, 6)), Some((1, 1)));
        assert_eq!(r.partial((3, true, 5)), Some((1, 1)));
        assert_eq!((r.buffered_bytes(), r.fragment_count()), (2, 2));
    }

    #[test]
    fn forget_and_skip_compare_mids_serially_across_the_wrap() {
        let mut r = IReassembly::new(1, 1 << 20);
        for (tsn, mid) in [(1, u32::MAX), (2, 0), (3, 1), (4, 2), (5, 1 << 31)] {
            r.push(frag(tsn, 0, mid, 0, true, false, b"x")).unwrap();
        }
        // MID 1 covers u32::MAX, 0 and 1 (before it), not 2 (after) nor
        // 2^31 (more than 2^31 - 1 before it is after it).
        assert_eq!(r.forget(0, false, 1), 3);
        assert_eq!(r.partial((0, false, 2)), Some((1, 1)));
        assert_eq!(r.partial((0, false, 1 << 31)), Some((1, 1)));

        let mut d = Delivery::new(1);
        let mut o = MidOrdering::new(1);
        o.next_mid[0] = u32::MAX - 1;
        for mid in [u32::MAX, 1, 5] {
            o.push(whole(0, mid), Time(1), &mut d);
        }
        o.skip_through(0, 0, Time(2), &mut d);
        assert_eq!(drain(&mut d), [(0, u32::MAX), (0, 1)]);
        assert_eq!((o.next_mid(0), o.message_count()), (Some(2), 1));
    }

    fn whole(stream: u16, mid: u32) -> IReassembled {
        IReassembled {
            stream_id: stream,
            unordered: false,
            mid,
            ppid: mid,
            first_tsn: 0,
            payload: Bytes::from_static(b"m"),
        }
    }

    fn drain(d: &mut Delivery) -> Vec<(u16, u32)> {
        std::iter::from_fn(|| d.pop())
            .map(|m| (m.stream_id, m.ppid))
            .collect()
    }

    #[test]
    fn ordered_messages_wait_for_earlier_mids_across_the_32_bit_wrap() {
        let mut d = Delivery::new(2);
        let mut o = MidOrdering::new(2);
        o.next_mid[0] = u32::MAX;
        o.push(whole(0, 0), Time(1), &mut d);
        o.push(whole(0, 1), Time(1), &mut d);
        assert_eq!((o.message_count(), o.buffered_bytes()), (2, 2));
        assert!(drain(&mut d).is_empty());
        o.push(whole(0, u32::MAX), Time(2), &mut d);
        assert_eq!(drain(&mut d), [(0, u32::MAX), (0, 0), (0, 1)]);
        assert_eq!(o.next_mid(0), Some(2));
        // Stale and unknown-stream messages are dropped.
        o.push(whole(0, 1), Time(3), &mut d);
        o.push(whole(9, 0), Time(3), &mut d);
        assert!(drain(&mut d).is_empty());
        assert_eq!(o.message_count(), 0);
    }

    #[test]
    fn skipping_releases_what_waited_and_ignores_lies() {
        let mut d = Delivery::new(1);
        let mut o = MidOrdering::new(1);
        o.push(whole(0, 2), Time(1), &mut d);
        o.push(whole(0, 4), Time(1), &mut d);
        o.skip_through(0, 1, Time(2), &mut d);
        assert_eq!(drain(&mut d), [(0, 2)]);
        assert_eq!(o.next_mid(0), Some(3));
        // A MID behind the stream, or an unknown stream: nothing happens.
        o.skip_through(0, 0, Time(3), &mut d);
        o.skip_through(5, 100, Time(3), &mut d);
        assert_eq!(o.next_mid(0), Some(3));
        o.skip_through(0, 3, Time(3), &mut d);
        assert_eq!(drain(&mut d), [(0, 4)]);
        assert_eq!(o.next_mid(0), Some(5));
    }

    #[test]
    fn a_reset_stream_delivers_what_waited_in_mid_order_and_expects_mid_0() {
        let mut d = Delivery::new(2);
        let mut o = MidOrdering::new(2);
        o.next_mid[1] = u32::MAX - 1;
        // MID u32::MAX - 1 was abandoned unseen; these wait behind it, and
        // stream 0's message is not touched.
        for mid in [1, u32::MAX, 0] {
            o.push(whole(1, mid), Time(1), &mut d);
        }
        o.push(whole(0, 3), Time(1), &mut d);
        assert!(drain(&mut d).is_empty());
        o.reset_stream(1, Time(2), &mut d);
        assert_eq!(drain(&mut d), [(1, u32::MAX), (1, 0), (1, 1)]);
        assert_eq!((o.next_mid(1), o.next_mid(0)), (Some(0), Some(0)));
        assert_eq!((o.message_count(), o.buffered_bytes()), (1, 1));
        // The new numbering starts at MID 0 and is delivered at once.
        o.push(whole(1, 0), Time(3), &mut d);
        assert_eq!(drain(&mut d), [(1, 0)]);
        assert_eq!(o.next_mid(1), Some(1));
        // An unknown stream: nothing happens.
        o.reset_stream(7, Time(3), &mut d);
        assert_eq!(o.message_count(), 1);
    }

    #[test]
    fn added_streams_expect_mid_0_and_take_messages() {
        let mut d = Delivery::new(3);
        let mut o = MidOrdering::new(1);
        o.push(whole(2, 0), Time(1), &mut d);
        assert!(drain(&mut d).is_empty());
        o.add_streams(2);
        assert_eq!((o.next_mid(2), o.next_mid(3)), (Some(0), None));
        o.push(whole(2, 1), Time(1), &mut d);
        o.push(whole(2, 0), Time(1), &mut d);
        assert_eq!(drain(&mut d), [(2, 0), (2, 1)]);
    }

    #[test]
    fn a_reset_drops_the_old_numbering_partials_of_the_stream_only() {
        let mut r = IReassembly::new(1, 1 << 20);
        // Stream 1: old ordered MID 0 and old unordered MID 0 (fragments at
        // TSN 1, 2), a new ordered MID 0 wholly after the reset's TSN 5.
        r.push(frag(1, 1, 0, 0, true, false, b"a")).unwrap();
        let mut u = frag(2, 1, 0, 0, true, false, b"u");
        u.flags.unordered = true;
        r.push(u).unwrap();
        r.push(frag(3, 2, 0, 0, true, false, b"other")).unwrap();
        r.push(frag(7, 1, 1, 1, false, false, b"n")).unwrap();
        assert_eq!(r.forget_old_numbering(1, 5), 2);
        assert_eq!(r.partial((1, false, 0)), None);
        assert_eq!(r.partial((1, true, 0)), None);
        assert_eq!(r.partial((1, false, 1)), Some((1, 1)));
        assert_eq!(r.partial((2, false, 0)), Some((5, 1)));
        assert_eq!((r.buffered_bytes(), r.fragment_count()), (6, 2));
        // The new numbering's MID 0 no longer meets an old fragment.
        let m = r.push(frag(8, 1, 0, 0, true, true, b"z")).unwrap().unwrap();
        assert_eq!((m.stream_id, m.mid, &m.payload[..]), (1, 0, &b"z"[..]));
    }

    #[test]
    fn fragments_handed_to_another_queue_complete_their_messages_there() {
        let mut held = IReassembly::new(10, 1 << 20);
        held.push(frag(12, 1, 0, 2, false, true, b"c")).unwrap();
        held.push(frag(10, 1, 0, 0, true, false, b"a")).unwrap();
        let mut u = frag(11, 1, 4, 0, true, false, b"u");
        u.flags.unordered = true;
        held.push(u.clone()).unwrap();
        let moved = held.into_fragments();
        assert_eq!(
            moved.iter().map(|f| (f.tsn, f.fsn)).collect::<Vec<_>>(),
            [(10, 0), (11, 0), (12, 2)]
        );
        assert_eq!(moved[1], u);
        assert_eq!((moved[0].ppid, moved[2].flags.ending), (42, true));
        let mut r = IReassembly::new(1, 1 << 20);
        for f in moved {
            assert_eq!(r.push(f).unwrap(), None);
        }
        let m = r
            .push(frag(13, 1, 0, 1, false, false, b"b"))
            .unwrap()
            .unwrap();
        assert_eq!((&m.payload[..], m.ppid, m.first_tsn), (&b"abc"[..], 42, 10));
    }
}
