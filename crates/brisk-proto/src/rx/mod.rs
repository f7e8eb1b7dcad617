//! The receive side of an association: from DATA chunks to messages for the
//! application, and the acknowledgements that go back.
//!
//! Three stages, each owned by the association and fed in this order for every
//! DATA chunk of a packet:
//!
//! 1. [`TsnTracker::record`] classifies the TSN (new, duplicate, out of window)
//!    and keeps what a SACK reports (RFC 9260 6.2, 6.7); [`SackDecision`] decides
//!    when that SACK goes out (delayed SACK, RFC 9260 6.2, RFC 5681 4.2).
//! 2. [`Reassembly::push`] turns new fragments into whole messages (RFC 9260 6.9).
//! 3. [`Delivery::push`] orders whole messages per stream and queues them for
//!    the application (RFC 9260 6.6); [`Delivery::pop`] hands them out.
//!
//! The receive window the association advertises is its buffer minus the
//! charge ([`window`]) of what [`Reassembly`] and [`Delivery`] hold; [`window`]
//! also decides what a full receiver still admits, which bounds its memory.
//!
//! With I-DATA (RFC 8260) stage 2 is [`IReassembly`] (by stream, U flag
//! and MID, ordered by FSN) and the ordering of stage 3 is [`MidOrdering`]
//! (by MID), which hands deliverable messages to the same [`Delivery`] queue.
//!
//! Nothing here reads a clock or panics on wire input: TSNs and SSNs are
//! compared with serial arithmetic ([`crate::serial`]) and absurd values are
//! classified, not trusted.

pub mod delivery;
mod fsn_map;
pub mod interleaved;
pub mod reassembly;
pub mod tracker;
pub mod window;

pub use delivery::Delivery;
pub use interleaved::{IFragment, IReassembled, IReassembly, MidOrdering};
pub use reassembly::{Fragment, Reassembled, Reassembly, ReassemblyError};
pub use tracker::{
    MAX_DUPLICATES_PER_SACK, MAX_GAP_OFFSET, MAX_GAP_RANGES, MAX_SACK_DELAY, Received,
    SackDecision, TsnTracker,
};

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, VecDeque};

    use bytes::Bytes;
    use proptest::prelude::*;

    use super::*;
    use crate::serial::Tsn;
    use crate::time::Time;
    use crate::wire::chunk::DataFlags;

    /// (stream, unordered, size) of each message, in send order.
    fn messages() -> impl Strategy<Value = Vec<(u16, bool, usize)>> {
        proptest::collection::vec((0u16..4, any::<bool>(), 0usize..200), 1..40)
    }

    /// Fragments a sender would produce for `msgs`, TSNs from `initial`, SSNs
    /// per stream from 0; payload bytes identify the message and offset.
    fn fragment(
        msgs: &[(u16, bool, usize)],
        initial: u32,
        max_frag: usize,
    ) -> (Vec<Fragment>, Vec<Vec<u8>>, Vec<u16>) {
        let mut tsn = initial;
        let mut next_ssn = [0u16; 4];
        let mut frags = Vec::new();
        let mut payloads = Vec::new();
        let mut ssns = Vec::new();
        for (i, &(stream, unordered, size)) in msgs.iter().enumerate() {
            let payload: Vec<u8> = (0..size).map(|j| (i * 31 + j) as u8).collect();
            let ssn = if unordered {
                0
            } else {
                let s = next_ssn[usize::from(stream)];
                next_ssn[usize::from(stream)] = s.wrapping_add(1);
                s
            };
            let pieces: Vec<&[u8]> = if payload.is_empty() {
                vec![&[]]
            } else {
                payload.chunks(max_frag).collect()
            };
            let last = pieces.len() - 1;
            for (k, piece) in pieces.into_iter().enumerate() {
                frags.push(Fragment {
                    tsn,
                    stream_id: stream,
                    ssn,
                    ppid: i as u32,
                    flags: DataFlags {
                        immediate: false,
                        unordered,
                        beginning: k == 0,
                        ending: k == last,
                    },
                    payload: Bytes::copy_from_slice(piece),
                });
                tsn = tsn.wrapping_add(1);
            }
            payloads.push(payload);
            ssns.push(ssn);
        }
        (frags, payloads, ssns)
    }

    proptest! {
        #[test]
        fn every_message_comes_out_once_whole_and_in_stream_order(
            msgs in messages(),
            initial in prop_oneof![any::<u32>(), Just(u32::MAX - 20)],
            max_frag in 1usize..64,
            seed in any::<u64>(),
        ) {
            let (mut frags, payloads, ssns) = fragment(&msgs, initial, max_frag);
            let total_frags = frags.len();
            // A random permutation, from the seed.
            let mut state = seed | 1;
            for i in (1..frags.len()).rev() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                frags.swap(i, (state % (i as u64 + 1)) as usize);
            }

            let mut tracker = TsnTracker::new(Tsn(initial));
            let mut reassembly = Reassembly::new(initial, usize::MAX);
            let mut delivery = Delivery::new(4);
            let mut out = Vec::new();
            // A TSN that would open more gap ranges than the tracker keeps is
            // refused, as a receiver drops it; it comes again later, as the
            // sender's retransmission would, once holes below it filled.
            let mut pending: VecDeque<Fragment> = frags.into();
            let mut step = 0u64;
            let mut refused_in_a_row = 0;
            while let Some(f) = pending.pop_front() {
                match tracker.record(Tsn(f.tsn)) {
                    Received::New => refused_in_a_row = 0,
                    Received::TooManyGaps => {
                        refused_in_a_row += 1;
                        prop_assert!(refused_in_a_row <= pending.len() + 1, "no progress");
                        pending.push_back(f);
                        continue;
                    }
                    other => prop_assert!(false, "TSN {} was {:?}", f.tsn, other),
                }
                step += 1;
                if let Some(m) = reassembly.push(f).unwrap() {
                    delivery.push(m, Time(step));
                }
                out.extend(std::iter::from_fn(|| delivery.pop()));
            }

            prop_assert_eq!(tracker.cum_tsn().0, initial.wrapping_add(total_frags as u32).wrapping_sub(1));
            prop_assert!(!tracker.has_gaps());
            prop_assert_eq!(reassembly.buffered_bytes(), 0);
            prop_assert_eq!(delivery.buffered_bytes(), 0);
            prop_assert_eq!(out.len(), msgs.len());

            // Each message exactly once, whole (the PPID carries its index).
            let mut seen = vec![false; msgs.len()];
            let mut last_ssn: BTreeMap<u16, u16> = BTreeMap::new();
            for m in &out {
                let i = m.ppid as usize;
                prop_assert!(!seen[i], "message {} delivered twice", i);
                seen[i] = true;
                prop_assert_eq!(&m.payload[..], &payloads[i][..]);
                prop_assert_eq!(m.stream_id, msgs[i].0);
                prop_assert_eq!(m.unordered, msgs[i].1);
                prop_assert!(m.completed_at <= m.deliverable_at);
                if !m.unordered {
                    // Ordered streams come out in SSN order, without holes.
                    prop_assert_eq!(m.ssn, ssns[i]);
                    let expected = last_ssn.get(&m.stream_id).map_or(0, |s| s.wrapping_add(1));
                    prop_assert_eq!(m.ssn, expected);
                    last_ssn.insert(m.stream_id, m.ssn);
                }
            }
        }
    }
}
