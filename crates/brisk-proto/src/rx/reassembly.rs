//! DATA fragments to whole user messages (RFC 9260 6.9).
//!
//! Fragments are keyed by unwrapped TSN. Besides the fragments, the queue keeps
//! *segments*: maximal runs of consecutive TSNs that belong to one message
//! (joined where the lower fragment has no E bit and the upper no B bit). A
//! message is complete when its segment starts with a B fragment and ends with
//! an E fragment, so each insertion is checked in O(log n), whatever the order
//! in which a message's fragments arrive, and its size is known at once.

use std::collections::BTreeMap;

use bytes::{Bytes, BytesMut};

use crate::serial::{Unwrapper, wrap};
use crate::wire::chunk::DataFlags;

/// One DATA chunk's user data, as taken off the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fragment {
    pub tsn: u32,
    pub stream_id: u16,
    pub ssn: u16,
    pub ppid: u32,
    pub flags: DataFlags,
    pub payload: Bytes,
}

/// A whole user message, not yet ordered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reassembled {
    pub stream_id: u16,
    pub ssn: u16,
    /// The PPID of the first fragment.
    pub ppid: u32,
    pub unordered: bool,
    /// TSN of the first (B) fragment.
    pub first_tsn: u32,
    pub payload: Bytes,
}

/// Why a fragment could not be taken; the association aborts on either.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReassemblyError {
    /// A message (or the part of it received so far) exceeds the limit.
    #[error("message on stream {stream_id} is {size} bytes, more than the {max} allowed")]
    MessageTooLarge {
        stream_id: u16,
        size: usize,
        max: usize,
    },
    /// The fragment contradicts a neighbouring TSN: fragments of one message
    /// have consecutive TSNs, the same stream, the same U flag and (if
    /// ordered) the same SSN, and a message starts (B) right after the previous
    /// one ends (E) (RFC 9260 6.9).
    #[error("DATA chunk with TSN {tsn} contradicts its neighbours: {reason}")]
    InconsistentFragment { tsn: u32, reason: &'static str },
}

/// A run of consecutive held TSNs belonging to one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Segment {
    /// Last unwrapped TSN of the run (inclusive).
    end: u64,
    /// Payload bytes in the run.
    bytes: usize,
}

/// The reassembly queue of one association (DATA only; not I-DATA).
#[derive(Debug, Clone)]
pub struct Reassembly {
    unwrapper: Unwrapper,
    max_message_size: usize,
    /// Held fragments by unwrapped TSN.
    fragments: BTreeMap<u64, Fragment>,
    /// Runs of held fragments of one message, by unwrapped first TSN.
    segments: BTreeMap<u64, Segment>,
    /// Payload bytes held.
    buffered: usize,
}

impl Reassembly {
    /// An empty queue for a peer whose first TSN is `peer_initial_tsn`; messages
    /// larger than `max_message_size` bytes are refused.
    pub fn new(peer_initial_tsn: u32, max_message_size: usize) -> Self {
        Self {
            unwrapper: Unwrapper::new(peer_initial_tsn),
            max_message_size,
            fragments: BTreeMap::new(),
            segments: BTreeMap::new(),
            buffered: 0,
        }
    }

    /// Adds a new (not duplicate: [`super::TsnTracker::record`] said `New`)
    /// fragment and returns the message it completes, if any. A TSN already held
    /// is ignored. On error nothing is stored.
    pub fn push(&mut self, frag: Fragment) -> Result<Option<Reassembled>, ReassemblyError> {
        let key = self.unwrapper.unwrap(frag.tsn);
        if self.fragments.contains_key(&key) {
            return Ok(None);
        }
        let prev = key.checked_sub(1).and_then(|k| self.fragments.get(&k));
        let next = key.checked_add(1).and_then(|k| self.fragments.get(&k));
        // RFC 9260 6.9: B follows E; within a message, one stream and SSN.
        let joins_prev = match prev {
            Some(p) => joins(p, &frag)?,
            None => false,
        };
        let joins_next = match next {
            Some(n) => joins(&frag, n)?,
            None => false,
        };

        // RFC 9260 6.9: B and E both set: the whole message in one chunk.
        if frag.flags.beginning && frag.flags.ending {
            self.check_size(frag.stream_id, frag.payload.len())?;
            return Ok(Some(Reassembled {
                stream_id: frag.stream_id,
                ssn: frag.ssn,
                ppid: frag.ppid,
                unordered: frag.flags.unordered,
                first_tsn: frag.tsn,
                payload: frag.payload,
            }));
        }

        // The segments this fragment joins; both exist by the segment invariant,
        // but a missing one is treated as no join rather than trusted.
        let below = if joins_prev {
            self.segments
                .range(..key)
                .next_back()
                .filter(|(_, s)| s.end + 1 == key)
                .map(|(&start, &s)| (start, s))
        } else {
            None
        };
        let above = if joins_next {
            key.checked_add(1)
                .and_then(|k| self.segments.get(&k).map(|&s| (k, s)))
        } else {
            None
        };
        let start = below.map_or(key, |(s, _)| s);
        let end = above.map_or(key, |(_, s)| s.end);
        let bytes = frag.payload.len()
            + below.map_or(0, |(_, s)| s.bytes)
            + above.map_or(0, |(_, s)| s.bytes);
        // A segment is part of one message, so it must fit on its own.
        self.check_size(frag.stream_id, bytes)?;

        if let Some((s, _)) = below {
            self.segments.remove(&s);
        }
        if let Some((s, _)) = above {
            self.segments.remove(&s);
        }
        self.buffered += frag.payload.len();
        self.fragments.insert(key, frag);
        self.segments.insert(start, Segment { end, bytes });

        let complete = self
            .fragments
            .get(&start)
            .is_some_and(|f| f.flags.beginning)
            && self.fragments.get(&end).is_some_and(|f| f.flags.ending);
        Ok(complete.then(|| self.take_message(start, end, bytes)))
    }

    /// Payload bytes held in incomplete messages.
    pub fn buffered_bytes(&self) -> usize {
        self.buffered
    }

    /// Fragments held.
    pub fn fragment_count(&self) -> usize {
        self.fragments.len()
    }

    /// The run of fragments of one unfinished message that the fragment with
    /// `tsn` would continue (the held fragment at `tsn - 1` has no E bit):
    /// its payload bytes and fragment count.
    pub fn partial_before(&self, tsn: u32) -> Option<(usize, usize)> {
        let key = self.unwrapper.peek(tsn).checked_sub(1)?;
        if self.fragments.get(&key)?.flags.ending {
            return None;
        }
        let (&start, seg) = self.segments.range(..=key).next_back()?;
        (seg.end == key).then(|| {
            (
                seg.bytes,
                usize::try_from(key - start + 1).unwrap_or(usize::MAX),
            )
        })
    }

    /// Whether the fragments held above `above` (serial arithmetic), taken
    /// from the highest down, amount to `need` once each is weighed by
    /// `charge` (its payload size in, its charge out).
    pub fn can_free_above(&self, above: u32, need: usize, charge: impl Fn(usize) -> usize) -> bool {
        let floor = self.unwrapper.peek(above);
        let mut freed = 0usize;
        for (_, f) in self.fragments.range(floor.saturating_add(1)..).rev() {
            freed = freed.saturating_add(charge(f.payload.len()));
            if freed >= need {
                return true;
            }
        }
        need == 0
    }

    /// Drops the held fragment with the highest TSN if that TSN is above
    /// `above` (serial arithmetic), to make room for a lower one (RFC 9260
    /// 6.2). Returns its TSN and payload size; the caller reneges on the TSN.
    pub fn evict_highest_above(&mut self, above: u32) -> Option<(u32, usize)> {
        let floor = self.unwrapper.peek(above);
        let (&key, _) = self.fragments.last_key_value()?;
        if key <= floor {
            return None;
        }
        let frag = self.fragments.remove(&key)?;
        let len = frag.payload.len();
        // The highest fragment ends the highest segment.
        if let Some((&start, seg)) = self.segments.range_mut(..=key).next_back() {
            if start == key {
                self.segments.remove(&start);
            } else {
                seg.end = key - 1;
                seg.bytes = seg.bytes.saturating_sub(len);
            }
        }
        self.buffered = self.buffered.saturating_sub(len);
        Some((frag.tsn, len))
    }

    /// FORWARD TSN (RFC 3758 3.6): drops every partial message that has a
    /// fragment at or below `new_cum` (its missing parts were abandoned by the
    /// sender), and a partial message just above it that lacks its beginning.
    /// Returns the payload bytes dropped.
    pub fn forget_through(&mut self, new_cum: u32) -> usize {
        let cut = self.unwrapper.peek(new_cum);
        let doomed: Vec<(u64, u64)> = self
            .segments
            .range(..=cut.saturating_add(1))
            .filter(|&(&start, _)| {
                start <= cut
                    || !self
                        .fragments
                        .get(&start)
                        .is_some_and(|f| f.flags.beginning)
            })
            .map(|(&start, s)| (start, s.end))
            .collect();
        let mut dropped = 0;
        for (start, end) in doomed {
            if let Some(s) = self.segments.remove(&start) {
                dropped += s.bytes;
            }
            for key in start..=end {
                self.fragments.remove(&key);
            }
        }
        self.buffered = self.buffered.saturating_sub(dropped);
        dropped
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

    /// Removes the complete segment `start..=end` and joins its payload (one
    /// allocation).
    fn take_message(&mut self, start: u64, end: u64, bytes: usize) -> Reassembled {
        self.segments.remove(&start);
        self.buffered = self.buffered.saturating_sub(bytes);
        let mut payload = BytesMut::with_capacity(bytes);
        let mut first: Option<Fragment> = None;
        for key in start..=end {
            if let Some(f) = self.fragments.remove(&key) {
                payload.extend_from_slice(&f.payload);
                if first.is_none() {
                    first = Some(f);
                }
            }
        }
        let (stream_id, ssn, ppid, unordered, first_tsn) = first
            .map_or((0, 0, 0, false, wrap(start)), |f| {
                (f.stream_id, f.ssn, f.ppid, f.flags.unordered, f.tsn)
            });
        Reassembled {
            stream_id,
            ssn,
            ppid,
            unordered,
            first_tsn,
            payload: payload.freeze(),
        }
    }
}

/// Whether `upper`, at the TSN right after `lower`, continues the same message;
/// an error if the two contradict each other (RFC 9260 6.9).
fn joins(lower: &Fragment, upper: &Fragment) -> Result<bool, ReassemblyError> {
    let violation = |reason| ReassemblyError::InconsistentFragment {
        tsn: upper.tsn,
        reason,
    };
    match (lower.flags.ending, upper.flags.beginning) {
        (true, true) => Ok(false),
        (true, false) => Err(violation(
            "a middle or last fragment follows a last fragment",
        )),
        (false, true) => Err(violation(
            "a first fragment follows a first or middle fragment",
        )),
        (false, false) => {
            if lower.stream_id != upper.stream_id {
                Err(violation("fragments of one message on different streams"))
            } else if lower.flags.unordered != upper.flags.unordered {
                Err(violation("fragments of one message differ in the U flag"))
            } else if !lower.flags.unordered && lower.ssn != upper.ssn {
                Err(violation("fragments of one ordered message differ in SSN"))
            } else {
                Ok(true)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(b: bool, e: bool, unordered: bool) -> DataFlags {
        DataFlags {
            immediate: false,
            unordered,
            beginning: b,
            ending: e,
        }
    }

    fn frag(tsn: u32, stream_id: u16, ssn: u16, b: bool, e: bool, payload: &[u8]) -> Fragment {
        Fragment {
            tsn,
            stream_id,
            ssn,
            ppid: 51,
            flags: flags(b, e, false),
            payload: Bytes::copy_from_slice(payload),
        }
    }

    fn unordered(mut f: Fragment) -> Fragment {
        f.flags.unordered = true;
        f
    }

    /// A message split into fragments of `tsn..`, one per payload piece.
    fn split(tsn: u32, stream_id: u16, ssn: u16, pieces: &[&[u8]]) -> Vec<Fragment> {
        let last = pieces.len() - 1;
        pieces
            .iter()
            .enumerate()
            .map(|(i, p)| {
                frag(
                    tsn.wrapping_add(i as u32),
                    stream_id,
                    ssn,
                    i == 0,
                    i == last,
                    p,
                )
            })
            .collect()
    }

    #[test]
    fn the_highest_fragments_above_a_tsn_are_evicted_first() {
        let mut r = Reassembly::new(10, 1000);
        // A three-fragment run 12..=14 (no end yet) and a first fragment at 20.
        for f in [
            frag(12, 0, 0, true, false, b"aa"),
            frag(13, 0, 0, false, false, b"bbb"),
            frag(14, 0, 0, false, false, b"c"),
            frag(20, 1, 0, true, false, b"dddd"),
        ] {
            assert_eq!(r.push(f), Ok(None));
        }
        assert_eq!((r.fragment_count(), r.buffered_bytes()), (4, 10));
        let by_len = |n: usize| n;
        assert!(r.can_free_above(13, 5, by_len));
        assert!(!r.can_free_above(13, 6, by_len));
        assert!(!r.can_free_above(20, 1, by_len));
        assert_eq!(r.evict_highest_above(13), Some((20, 4)));
        assert_eq!(r.evict_highest_above(13), Some((14, 1)));
        assert_eq!(r.evict_highest_above(13), None);
        assert_eq!((r.fragment_count(), r.buffered_bytes()), (2, 5));
        // The shortened run still completes when its end arrives.
        let m = r.push(frag(14, 0, 0, false, true, b"z")).unwrap().unwrap();
        assert_eq!(&m.payload[..], b"aabbbz");
        assert_eq!(r.buffered_bytes(), 0);
    }

    #[test]
    fn unfragmented_message_passes_through_without_buffering() {
        let mut r = Reassembly::new(10, 1000);
        let m = r
            .push(frag(10, 3, 7, true, true, b"hello"))
            .unwrap()
            .unwrap();
        assert_eq!(
            m,
            Reassembled {
                stream_id: 3,
                ssn: 7,
                ppid: 51,
                unordered: false,
                first_tsn: 10,
                payload: Bytes::from_static(b"hello"),
            }
        );
        assert_eq!(r.buffered_bytes(), 0);
    }

    #[test]
    fn fragments_out_of_order_complete_once_with_joined_payload() {
        let mut r = Reassembly::new(100, 1000);
        let f = split(100, 1, 0, &[b"ab", b"cd", b"ef"]);
        assert_eq!(r.push(f[2].clone()).unwrap(), None);
        assert_eq!(r.push(f[0].clone()).unwrap(), None);
        assert_eq!(r.buffered_bytes(), 4);
        let m = r.push(f[1].clone()).unwrap().unwrap();
        assert_eq!(&m.payload[..], b"abcdef");
        assert_eq!(m.first_tsn, 100);
        assert_eq!((m.stream_id, m.ssn, m.unordered), (1, 0, false));
        assert_eq!(r.buffered_bytes(), 0);
        assert!(r.fragments.is_empty() && r.segments.is_empty());
    }

    #[test]
    fn fragments_in_order_complete_on_the_last() {
        let mut r = Reassembly::new(0, 1000);
        let f = split(0, 0, 0, &[b"a", b"b", b"c", b"d"]);
        for x in &f[..3] {
            assert_eq!(r.push(x.clone()).unwrap(), None);
        }
        let m = r.push(f[3].clone()).unwrap().unwrap();
        assert_eq!(&m.payload[..], b"abcd");
    }

    #[test]
    fn two_unordered_messages_with_disjoint_tsn_runs_complete_independently() {
        let mut r = Reassembly::new(1, 1000);
        let a: Vec<_> = split(1, 4, 0, &[b"A1", b"A2"])
            .into_iter()
            .map(unordered)
            .collect();
        let b: Vec<_> = split(3, 9, 0, &[b"B1", b"B2", b"B3"])
            .into_iter()
            .map(unordered)
            .collect();
        assert_eq!(r.push(b[0].clone()).unwrap(), None);
        assert_eq!(r.push(a[1].clone()).unwrap(), None);
        assert_eq!(r.push(b[2].clone()).unwrap(), None);
        let mb = r.push(b[1].clone()).unwrap().unwrap();
        assert_eq!(
            (&mb.payload[..], mb.stream_id, mb.first_tsn),
            (&b"B1B2B3"[..], 9, 3)
        );
        assert!(mb.unordered);
        assert_eq!(r.buffered_bytes(), 2); // A2 still waits for A1
        let ma = r.push(a[0].clone()).unwrap().unwrap();
        assert_eq!(
            (&ma.payload[..], ma.stream_id, ma.first_tsn),
            (&b"A1A2"[..], 4, 1)
        );
        assert_eq!(r.buffered_bytes(), 0);
    }

    #[test]
    fn adjacent_messages_are_not_merged() {
        let mut r = Reassembly::new(1, 1000);
        let a = split(1, 0, 0, &[b"a1", b"a2"]);
        let b = split(3, 0, 1, &[b"b1", b"b2"]);
        // a2 (E) and b1 (B) are adjacent but belong to different messages.
        assert_eq!(r.push(a[1].clone()).unwrap(), None);
        assert_eq!(r.push(b[0].clone()).unwrap(), None);
        let mb = r.push(b[1].clone()).unwrap().unwrap();
        assert_eq!((&mb.payload[..], mb.ssn), (&b"b1b2"[..], 1));
        let ma = r.push(a[0].clone()).unwrap().unwrap();
        assert_eq!((&ma.payload[..], ma.ssn), (&b"a1a2"[..], 0));
    }

    #[test]
    fn fragments_spanning_tsn_wraparound_reassemble() {
        let mut r = Reassembly::new(u32::MAX - 1, 1000);
        let f = split(u32::MAX - 1, 2, 5, &[b"x", b"y", b"z", b"w"]);
        assert_eq!(f[2].tsn, 0);
        for i in [3, 1, 0] {
            assert_eq!(r.push(f[i].clone()).unwrap(), None);
        }
        let m = r.push(f[2].clone()).unwrap().unwrap();
        assert_eq!(&m.payload[..], b"xyzw");
        assert_eq!(m.first_tsn, u32::MAX - 1);
    }

    #[test]
    fn message_larger_than_limit_is_rejected_and_not_stored() {
        let mut r = Reassembly::new(1, 5);
        let f = split(1, 7, 0, &[b"abc", b"def", b"g"]);
        assert_eq!(r.push(f[0].clone()).unwrap(), None);
        assert_eq!(
            r.push(f[1].clone()),
            Err(ReassemblyError::MessageTooLarge {
                stream_id: 7,
                size: 6,
                max: 5
            })
        );
        assert_eq!(r.buffered_bytes(), 3);
        // A single chunk larger than the limit too.
        assert!(matches!(
            r.push(frag(10, 0, 0, true, true, b"123456")),
            Err(ReassemblyError::MessageTooLarge { size: 6, .. })
        ));
        // Exactly the limit is fine.
        let mut r = Reassembly::new(1, 6);
        r.push(f[0].clone()).unwrap();
        let m = r.push(f[1].clone()).unwrap();
        assert_eq!(m, None);
        assert_eq!(r.buffered_bytes(), 6);
    }

    #[test]
    fn oversized_tail_without_beginning_is_rejected() {
        let mut r = Reassembly::new(1, 4);
        let f = split(1, 0, 0, &[b"ab", b"cd", b"ef", b"gh"]);
        r.push(f[3].clone()).unwrap();
        r.push(f[2].clone()).unwrap();
        assert!(matches!(
            r.push(f[1].clone()),
            Err(ReassemblyError::MessageTooLarge { size: 6, .. })
        ));
    }

    #[test]
    fn many_fragments_in_reverse_order_reassemble() {
        let n: u32 = 60_000;
        let start = u32::MAX - 1000;
        let mut r = Reassembly::new(start, usize::MAX);
        for i in (1..n).rev() {
            let f = frag(start.wrapping_add(i), 0, 0, false, i == n - 1, &[i as u8]);
            assert_eq!(r.push(f).unwrap(), None);
        }
        assert_eq!(r.buffered_bytes(), n as usize - 1);
        let m = r
            .push(frag(start, 0, 0, true, false, &[0]))
            .unwrap()
            .unwrap();
        assert_eq!(m.payload.len(), n as usize);
        assert!(m.payload.iter().enumerate().all(|(i, &b)| b == i as u8));
        assert_eq!(r.buffered_bytes(), 0);
    }

    #[test]
    fn buffered_bytes_track_held_fragments() {
        let mut r = Reassembly::new(1, 1000);
        let a = split(1, 0, 0, &[b"aaaa", b"bb", b"c"]);
        let b = split(10, 1, 0, &[b"xyz", b"q"]);
        r.push(a[0].clone()).unwrap();
        r.push(b[1].clone()).unwrap();
        r.push(a[2].clone()).unwrap();
        assert_eq!(r.buffered_bytes(), 4 + 1 + 1);
        r.push(a[1].clone()).unwrap().unwrap();
        assert_eq!(r.buffered_bytes(), 1);
        r.push(b[0].clone()).unwrap().unwrap();
        assert_eq!(r.buffered_bytes(), 0);
    }

    #[test]
    fn duplicate_tsn_is_ignored() {
        let mut r = Reassembly::new(1, 1000);
        let f = split(1, 0, 0, &[b"ab", b"cd"]);
        r.push(f[0].clone()).unwrap();
        assert_eq!(r.push(f[0].clone()).unwrap(), None);
        assert_eq!(r.buffered_bytes(), 2);
        assert_eq!(&r.push(f[1].clone()).unwrap().unwrap().payload[..], b"abcd");
    }

    #[test]
    fn contradicting_neighbours_are_rejected_without_storing() {
        let mut r = Reassembly::new(1, 1000);
        r.push(frag(1, 0, 0, true, false, b"a")).unwrap();
        // Same message would continue at 2, but on another stream.
        let err = r.push(frag(2, 1, 0, false, true, b"b")).unwrap_err();
        assert!(matches!(
            err,
            ReassemblyError::InconsistentFragment { tsn: 2, .. }
        ));
        // A different SSN for an ordered message.
        assert!(r.push(frag(2, 0, 9, false, true, b"b")).is_err());
        // A B right after a B.
        assert!(r.push(frag(2, 0, 0, true, false, b"b")).is_err());
        // A middle fragment right after an E.
        r.push(frag(11, 0, 1, false, true, b"z")).unwrap();
        assert!(r.push(frag(12, 0, 1, false, false, b"m")).is_err());
        // The upper neighbour is checked too: a whole message at 10 cannot be
        // followed by a fragment without B at 11.
        assert!(r.push(frag(10, 0, 1, true, true, b"w")).is_err());
        assert_eq!(r.buffered_bytes(), 2);
        // The consistent fragment still completes.
        let m = r.push(frag(2, 0, 0, false, true, b"b")).unwrap().unwrap();
        assert_eq!(&m.payload[..], b"ab");
    }

    #[test]
    fn forget_through_drops_abandoned_partial_messages() {
        let mut r = Reassembly::new(1, 1000);
        let a = split(1, 0, 0, &[b"a1", b"a2", b"a3"]); // TSN 1..=3
        let b = split(4, 0, 1, &[b"b1", b"b2", b"b3"]); // TSN 4..=6
        let c = split(7, 0, 2, &[b"c1", b"c2"]); // TSN 7..=8
        r.push(a[0].clone()).unwrap(); // 1
        r.push(a[2].clone()).unwrap(); // 3
        r.push(b[1].clone()).unwrap(); // 5
        r.push(c[0].clone()).unwrap(); // 7
        assert_eq!(r.buffered_bytes(), 8);
        // The sender abandoned message a (FORWARD TSN to 2): TSN 1 is at or
        // below the point, TSN 3 continues a message that started below it.
        // b's TSN 5 may still be completed by 4 and 6.
        assert_eq!(r.forget_through(2), 4);
        assert_eq!(r.buffered_bytes(), 4);
        assert_eq!(r.push(b[0].clone()).unwrap(), None);
        let m = r.push(b[2].clone()).unwrap().unwrap();
        assert_eq!(&m.payload[..], b"b1b2b3");
        let m = r.push(c[1].clone()).unwrap().unwrap();
        assert_eq!(&m.payload[..], b"c1c2");
        assert_eq!(r.buffered_bytes(), 0);
        assert_eq!(r.forget_through(2), 0);
    }
}
