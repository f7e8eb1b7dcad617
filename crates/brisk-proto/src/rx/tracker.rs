//! Which TSNs arrived, and when to acknowledge them.
//!
//! [`TsnTracker`] keeps the Cumulative TSN Ack point and the TSNs received above
//! it, and builds SACK chunks from them (RFC 9260 3.3.4, 6.2, 6.7).
//! [`SackDecision`] decides when a SACK must go out: at once, or after the
//! delayed-acknowledgement timer (RFC 9260 6.2, RFC 5681 4.2).

use std::time::Duration;

use crate::serial::{Tsn, Unwrapper, wrap};
use crate::time::Time;
use crate::wire::chunk::{GapBlock, Sack};

/// Most duplicate TSNs reported in one SACK; further duplicates seen before the
/// SACK goes out are not listed.
pub const MAX_DUPLICATES_PER_SACK: usize = 32;

/// Largest distance above the Cumulative TSN Ack that a gap ack block can report
/// (its offsets are 16 bits, RFC 9260 3.3.4).
pub const MAX_GAP_OFFSET: u32 = u16::MAX as u32;

/// Most separate runs of TSNs held above the Cumulative TSN Ack. A TSN that
/// would open one more is not accepted: it bounds the tracker's memory and
/// the cost of each insertion whatever gaps a peer leaves, and is far more
/// than one SACK can report (about 360 gap ack blocks in a 1500-byte packet).
pub const MAX_GAP_RANGES: usize = 1024;

/// What [`TsnTracker::record`] made of a TSN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Received {
    /// First arrival: the chunk is to be processed.
    New,
    /// At or below the cumulative TSN, or already held: the chunk is to be
    /// dropped and the TSN reported as a duplicate (RFC 9260 6.2).
    Duplicate,
    /// Too far above the cumulative TSN to be reported in a gap ack block; not
    /// recorded, the chunk is to be dropped.
    OutOfWindow,
    /// It would open one more run of held TSNs than [`MAX_GAP_RANGES`]; not
    /// recorded, the chunk is to be dropped.
    TooManyGaps,
}

/// The received TSNs of one association.
///
/// TSNs are unwrapped onto a 64-bit line (RFC 9260 1.6 serial arithmetic) so
/// ranges sort correctly across the 32-bit wrap. Above the cumulative point the
/// tracker holds a sorted list of disjoint, non-adjacent inclusive ranges; each
/// starts at least two above the cumulative point (a range touching it is
/// absorbed into it at once).
#[derive(Debug, Clone)]
pub struct TsnTracker {
    /// Unwraps TSNs nearest to the cumulative point; kept in step with `cum`.
    unwrapper: Unwrapper,
    /// The Cumulative TSN Ack point, unwrapped.
    cum: u64,
    /// Received TSNs above `cum + 1`, as sorted, disjoint, non-adjacent inclusive ranges.
    ranges: Vec<(u64, u64)>,
    /// Duplicates seen since the last [`TsnTracker::take_duplicates`].
    duplicates: Vec<u32>,
}

impl TsnTracker {
    /// A tracker for a peer whose first TSN is `peer_initial_tsn` (the Initial TSN
    /// of its INIT or INIT ACK): the cumulative TSN ack starts one below it
    /// (RFC 9260 3.3.4, 14.2 'Last Rcvd TSN').
    pub fn new(peer_initial_tsn: Tsn) -> Self {
        let mut unwrapper = Unwrapper::new(peer_initial_tsn.0);
        // Unwraps to 1 << 32 | initial, so the point below it stays positive.
        let cum = unwrapper.unwrap(peer_initial_tsn.0) - 1;
        unwrapper.unwrap(wrap(cum));
        Self {
            unwrapper,
            cum,
            ranges: Vec::new(),
            duplicates: Vec::new(),
        }
    }

    /// Records the arrival of a DATA chunk's TSN and classifies it.
    pub fn record(&mut self, tsn: Tsn) -> Received {
        let class = self.classify(tsn);
        match class {
            Received::New => self.insert(self.unwrapper.peek(tsn.0)),
            // RFC 9260 6.2: duplicates are reported in the next SACK.
            Received::Duplicate if self.duplicates.len() < MAX_DUPLICATES_PER_SACK => {
                self.duplicates.push(tsn.0);
            }
            _ => {}
        }
        class
    }

    /// Records a TSN that [`TsnTracker::classify`] just found `New` (the
    /// receiver then decided to keep the chunk).
    pub fn accept(&mut self, tsn: Tsn) {
        debug_assert_eq!(self.classify(tsn), Received::New);
        self.insert(self.unwrapper.peek(tsn.0));
    }

    /// What [`TsnTracker::record`] would make of `tsn`, changing nothing.
    pub fn classify(&self, tsn: Tsn) -> Received {
        let v = self.unwrapper.peek(tsn.0);
        if v <= self.cum || self.holds(v) {
            return Received::Duplicate;
        }
        if v - self.cum > u64::from(MAX_GAP_OFFSET) {
            // RFC 9260 3.3.4: a gap ack block offset is 16 bits; a TSN this far
            // ahead could never be acknowledged, so it is not accepted.
            return Received::OutOfWindow;
        }
        if self.ranges.len() >= MAX_GAP_RANGES && self.opens_range(v) {
            return Received::TooManyGaps;
        }
        Received::New
    }

    /// Whether `tsn` is the next one the cumulative point waits for.
    pub fn is_next(&self, tsn: Tsn) -> bool {
        self.unwrapper.peek(tsn.0) == self.cum + 1
    }

    /// Takes back a TSN held above the cumulative point (the receiver reneges
    /// on it, RFC 9260 6.2: it was dropped to make room for a lower one). The
    /// next SACK no longer reports it. Ignored for a TSN not held above it.
    pub fn forget(&mut self, tsn: Tsn) {
        let v = self.unwrapper.peek(tsn.0);
        if v <= self.cum + 1 {
            return;
        }
        let i = self.ranges.partition_point(|r| r.1 < v);
        let Some(&(start, end)) = self.ranges.get(i) else {
            return;
        };
        if start > v {
            return;
        }
        match (start == v, end == v) {
            (true, true) => {
                self.ranges.remove(i);
            }
            (true, false) => self.ranges[i].0 = v + 1,
            (false, true) => self.ranges[i].1 = v - 1,
            (false, false) => {
                self.ranges[i].1 = v - 1;
                self.ranges.insert(i + 1, (v + 1, end));
            }
        }
    }

    /// Whether inserting the unwrapped TSN `v` would add a range.
    fn opens_range(&self, v: u64) -> bool {
        if v == self.cum + 1 {
            return false;
        }
        let i = self.ranges.partition_point(|r| r.1 < v);
        let joins_prev = i > 0 && self.ranges[i - 1].1 + 1 == v;
        let joins_next = self.ranges.get(i).is_some_and(|r| r.0 == v + 1);
        !joins_prev && !joins_next
    }

    /// The Cumulative TSN Ack: every TSN up to it has been received.
    pub fn cum_tsn(&self) -> Tsn {
        Tsn(wrap(self.cum))
    }

    /// The highest TSN accepted so far (the cumulative TSN when there are no gaps).
    pub fn highest_received(&self) -> Tsn {
        Tsn(wrap(self.ranges.last().map_or(self.cum, |r| r.1)))
    }

    /// Whether TSNs are missing below the highest one received.
    pub fn has_gaps(&self) -> bool {
        !self.ranges.is_empty()
    }

    /// Gap ack blocks, offsets relative to the cumulative TSN, lowest first, at
    /// most `max` of them (RFC 9260 6.7: report from the lowest TSN up and leave
    /// the highest unacknowledged when they do not all fit).
    pub fn gap_blocks(&self, max: usize) -> Vec<GapBlock> {
        self.ranges
            .iter()
            .take(max)
            .map_while(|&(start, end)| {
                Some(GapBlock {
                    start: u16::try_from(start.checked_sub(self.cum)?).ok()?,
                    end: u16::try_from(end.checked_sub(self.cum)?).ok()?,
                })
            })
            .collect()
    }

    /// The duplicate TSNs seen since the last call (at most
    /// [`MAX_DUPLICATES_PER_SACK`]), in arrival order; clears the list
    /// (RFC 9260 3.3.4: the list restarts after each SACK).
    pub fn take_duplicates(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.duplicates)
    }

    /// FORWARD TSN (RFC 3758 3.6): treats every TSN up to `new_cum` as received
    /// and stops reporting gaps below it. Ignored unless `new_cum` is ahead of
    /// the cumulative TSN (an out-of-date FORWARD TSN).
    pub fn skip_to(&mut self, new_cum: Tsn) {
        let v = self.unwrapper.peek(new_cum.0);
        if v <= self.cum {
            return;
        }
        let covered = self.ranges.partition_point(|r| r.1 <= v);
        self.ranges.drain(..covered);
        self.set_cum(v);
        self.absorb_first_range();
    }

    /// Builds a SACK (RFC 9260 3.3.4, 6.2): the cumulative TSN, `a_rwnd`, up to
    /// `max_gap_blocks` gap ack blocks, and the duplicates seen since the last
    /// SACK (which it takes).
    pub fn sack(&mut self, a_rwnd: u32, max_gap_blocks: usize) -> Sack {
        Sack {
            cum_tsn_ack: self.cum_tsn().0,
            a_rwnd,
            gap_blocks: self.gap_blocks(max_gap_blocks),
            dup_tsns: self.take_duplicates(),
        }
    }

    /// Whether the unwrapped TSN `v` (above `cum`) is held in a range.
    fn holds(&self, v: u64) -> bool {
        let i = self.ranges.partition_point(|r| r.1 < v);
        self.ranges.get(i).is_some_and(|r| r.0 <= v)
    }

    /// Adds the unwrapped TSN `v`, above `cum` and not held.
    fn insert(&mut self, v: u64) {
        if v == self.cum + 1 {
            self.set_cum(v);
            self.absorb_first_range();
            return;
        }
        let i = self.ranges.partition_point(|r| r.1 < v);
        let joins_prev = i > 0 && self.ranges[i - 1].1 + 1 == v;
        let joins_next = self.ranges.get(i).is_some_and(|r| r.0 == v + 1);
        match (joins_prev, joins_next) {
            (true, true) => {
                self.ranges[i - 1].1 = self.ranges[i].1;
                self.ranges.remove(i);
            }
            (true, false) => self.ranges[i - 1].1 = v,
            (false, true) => self.ranges[i].0 = v,
            (false, false) => self.ranges.insert(i, (v, v)),
        }
    }

    /// Moves the cumulative point over the first range if it touches or
    /// overlaps it.
    fn absorb_first_range(&mut self) {
        if let Some(&(start, end)) = self.ranges.first()
            && start <= self.cum + 1
        {
            self.ranges.remove(0);
            if end > self.cum {
                self.set_cum(end);
            }
        }
    }

    fn set_cum(&mut self, v: u64) {
        self.cum = v;
        // Keep the unwrapper centred on the cumulative point; it moves by less
        // than 2^31 at a time, so this unwraps to exactly `v`.
        self.unwrapper.unwrap(wrap(v));
    }
}

/// Longest delay allowed for a delayed SACK (RFC 9260 6.2: 'SACK.Delay' MUST NOT
/// exceed 500 ms).
pub const MAX_SACK_DELAY: Duration = Duration::from_millis(500);

/// The delayed-SACK decision (RFC 9260 6.2 and 6.7, RFC 5681 4.2).
///
/// The association reports each packet that carried DATA; the decision says
/// whether a SACK is due at once, or arms the delayed-SACK timer, which the
/// association keeps in its timer table (`TimerKind::DelayedSack`). A SACK
/// sent for any reason (alone, or bundled with DATA) is reported with
/// [`SackDecision::on_sack_sent`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SackDecision {
    /// Packets carrying DATA per SACK (at least 1).
    sack_freq: u32,
    sack_delay: Duration,
    /// Packets carrying DATA since the last SACK.
    packets: u32,
    /// When a packet required an immediate SACK, if one did since the last SACK.
    due_since: Option<Time>,
    /// Whether any new DATA arrived in this association yet.
    data_seen: bool,
}

impl SackDecision {
    /// `sack_freq` is the number of packets carrying DATA per SACK (2 by default;
    /// 1 acknowledges every packet, i.e. no delayed SACK; 0 is taken as 1).
    /// `sack_delay` is clamped to [`MAX_SACK_DELAY`].
    pub fn new(sack_freq: u32, sack_delay: Duration) -> Self {
        Self {
            sack_freq: sack_freq.max(1),
            sack_delay: sack_delay.min(MAX_SACK_DELAY),
            packets: 0,
            due_since: None,
            data_seen: false,
        }
    }

    /// A packet carrying DATA was processed. Returns the delay to arm the
    /// delayed-SACK timer with, if it is not running, when no SACK is due at
    /// once.
    ///
    /// - `any_new`, `any_duplicate`: whether [`TsnTracker::record`] returned
    ///   `New` / `Duplicate` for any DATA chunk in it;
    /// - `immediate`: the sender set the I bit on any DATA chunk in it;
    /// - `gaps_before`, `gaps_after`: [`TsnTracker::has_gaps`] before and after
    ///   the packet.
    pub fn on_data_packet(
        &mut self,
        now: Time,
        any_new: bool,
        any_duplicate: bool,
        immediate: bool,
        gaps_before: bool,
        gaps_after: bool,
    ) -> Option<Duration> {
        self.packets = self.packets.saturating_add(1);
        let first = any_new && !self.data_seen;
        self.data_seen |= any_new;
        let at_once =
            // RFC 9260 5.1: the first DATA chunk of an association MUST be
            // acknowledged immediately.
            first
            // RFC 9260 6.2: the I bit asks for a SACK without delay (RFC 7053).
            || immediate
            // RFC 9260 6.2: duplicates and no new DATA: MUST SACK at once; with
            // new DATA: MAY, and we do. Nothing accepted at all (every chunk
            // dropped, e.g. out of window) also calls for an immediate SACK.
            || any_duplicate
            || !any_new
            // RFC 9260 6.7, 7.2.4: SACK every packet while a hole is open,
            // including the one that fills it.
            || gaps_before
            || gaps_after
            // RFC 9260 6.2, RFC 5681 4.2: at least every second packet.
            || self.packets >= self.sack_freq;
        if at_once {
            self.due_since.get_or_insert(now);
            None
        } else {
            // RFC 9260 6.2: within SACK.Delay of the first unacknowledged DATA;
            // an armed timer is never pushed later.
            Some(self.sack_delay)
        }
    }

    /// Whether a SACK must go out at `now`, the delayed-SACK timer's deadline
    /// being `delayed`.
    pub fn sack_due(&self, now: Time, delayed: Option<Time>) -> bool {
        self.deadline(delayed).is_some_and(|d| d <= now)
    }

    /// When a SACK is due: the delayed-SACK deadline, or the time of the packet
    /// that required an immediate SACK (already past) if one is pending.
    /// `None` when nothing awaits acknowledgement.
    pub fn deadline(&self, delayed: Option<Time>) -> Option<Time> {
        match (self.due_since, delayed) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// When a packet required an immediate SACK, if one did since the last
    /// SACK (it is due at once, not on a timer).
    pub fn immediate_since(&self) -> Option<Time> {
        self.due_since
    }

    /// A SACK went out: resets the packet count (the caller disarms the
    /// delayed-SACK timer).
    pub fn on_sack_sent(&mut self) {
        self.packets = 0;
        self.due_since = None;
    }

    /// Packets carrying DATA per SACK.
    pub fn sack_freq(&self) -> u32 {
        self.sack_freq
    }

    /// The delayed-SACK delay (after clamping).
    pub fn sack_delay(&self) -> Duration {
        self.sack_delay
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn blocks(pairs: &[(u16, u16)]) -> Vec<GapBlock> {
        pairs
            .iter()
            .map(|&(start, end)| GapBlock { start, end })
            .collect()
    }

    #[test]
    fn starts_with_cum_one_below_initial_tsn() {
        let t = TsnTracker::new(Tsn(1000));
        assert_eq!(t.cum_tsn().0, 999);
        assert_eq!(t.highest_received().0, 999);
        assert!(!t.has_gaps());
        let t = TsnTracker::new(Tsn(0));
        assert_eq!(t.cum_tsn().0, u32::MAX);
    }

    #[test]
    fn in_order_tsns_advance_cum() {
        let mut t = TsnTracker::new(Tsn(10));
        for tsn in 10..20 {
            assert_eq!(t.record(Tsn(tsn)), Received::New);
            assert_eq!(t.cum_tsn().0, tsn);
            assert!(!t.has_gaps());
        }
        assert_eq!(t.highest_received().0, 19);
        assert!(t.gap_blocks(16).is_empty());
    }

    #[test]
    fn gap_blocks_have_exact_offsets_from_cum() {
        let mut t = TsnTracker::new(Tsn(1));
        for tsn in [1, 2, 4, 5, 7] {
            assert_eq!(t.record(Tsn(tsn)), Received::New);
        }
        assert_eq!(t.cum_tsn().0, 2);
        assert_eq!(t.highest_received().0, 7);
        assert!(t.has_gaps());
        assert_eq!(t.gap_blocks(16), blocks(&[(2, 3), (5, 5)]));
    }

    #[test]
    fn gap_blocks_are_capped_lowest_first() {
        let mut t = TsnTracker::new(Tsn(1));
        for tsn in [3, 5, 7, 9] {
            t.record(Tsn(tsn));
        }
        assert_eq!(t.gap_blocks(2), blocks(&[(3, 3), (5, 5)]));
        assert!(t.gap_blocks(0).is_empty());
    }

    #[test]
    fn filling_holes_merges_ranges_and_advances_cum() {
        let mut t = TsnTracker::new(Tsn(1));
        for tsn in [3, 7, 5] {
            t.record(Tsn(tsn));
        }
        assert_eq!(t.gap_blocks(16), blocks(&[(3, 3), (5, 5), (7, 7)]));
        t.record(Tsn(6)); // joins 5 and 7
        assert_eq!(t.gap_blocks(16), blocks(&[(3, 3), (5, 7)]));
        t.record(Tsn(4)); // joins 3 and 5..=7
        assert_eq!(t.gap_blocks(16), blocks(&[(3, 7)]));
        t.record(Tsn(2)); // extends the range downwards
        assert_eq!(t.gap_blocks(16), blocks(&[(2, 7)]));
        t.record(Tsn(1)); // fills the hole
        assert_eq!(t.cum_tsn().0, 7);
        assert!(!t.has_gaps());
    }

    #[test]
    fn duplicates_are_reported_once_then_cleared() {
        let mut t = TsnTracker::new(Tsn(1));
        for tsn in [1, 2, 4] {
            t.record(Tsn(tsn));
        }
        assert_eq!(t.record(Tsn(2)), Received::Duplicate); // below cum
        assert_eq!(t.record(Tsn(4)), Received::Duplicate); // held above cum
        assert_eq!(t.record(Tsn(2)), Received::Duplicate); // each arrival counts
        assert_eq!(t.take_duplicates(), vec![2, 4, 2]);
        assert!(t.take_duplicates().is_empty());
        assert_eq!(t.cum_tsn().0, 2);
        assert_eq!(t.gap_blocks(4), blocks(&[(2, 2)]));
    }

    #[test]
    fn duplicate_list_is_capped_per_sack() {
        let mut t = TsnTracker::new(Tsn(1));
        t.record(Tsn(1));
        for _ in 0..100 {
            assert_eq!(t.record(Tsn(1)), Received::Duplicate);
        }
        assert_eq!(t.take_duplicates().len(), MAX_DUPLICATES_PER_SACK);
        t.record(Tsn(1));
        assert_eq!(t.take_duplicates(), vec![1]);
    }

    #[test]
    fn tracking_works_across_u32_wraparound() {
        let mut t = TsnTracker::new(Tsn(u32::MAX - 2));
        assert_eq!(t.record(Tsn(u32::MAX - 2)), Received::New);
        assert_eq!(t.record(Tsn(u32::MAX)), Received::New);
        assert_eq!(t.record(Tsn(1)), Received::New);
        assert_eq!(t.cum_tsn().0, u32::MAX - 2);
        assert_eq!(t.highest_received().0, 1);
        // u32::MAX is cum + 2; 1 is cum + 4.
        assert_eq!(t.gap_blocks(4), blocks(&[(2, 2), (4, 4)]));
        assert_eq!(t.record(Tsn(u32::MAX - 1)), Received::New);
        assert_eq!(t.cum_tsn().0, u32::MAX);
        assert_eq!(t.record(Tsn(0)), Received::New);
        assert_eq!(t.cum_tsn().0, 1);
        assert!(!t.has_gaps());
        assert_eq!(t.record(Tsn(u32::MAX)), Received::Duplicate);
        assert_eq!(t.take_duplicates(), vec![u32::MAX]);
    }

    #[test]
    fn tsn_beyond_16_bit_gap_offset_is_out_of_window_and_not_recorded() {
        let mut t = TsnTracker::new(Tsn(100));
        // cum = 99; 99 + 65535 is the farthest reportable TSN.
        assert_eq!(t.record(Tsn(99 + 65_536)), Received::OutOfWindow);
        assert!(!t.has_gaps());
        assert_eq!(t.highest_received().0, 99);
        assert_eq!(t.record(Tsn(99 + 65_535)), Received::New);
        assert_eq!(t.gap_blocks(1), blocks(&[(65_535, 65_535)]));
        // Still out of window, not a duplicate, and never reported.
        assert_eq!(t.record(Tsn(99 + 65_536)), Received::OutOfWindow);
        assert!(t.take_duplicates().is_empty());
    }

    #[test]
    fn a_forgotten_tsn_is_no_longer_reported() {
        let mut t = TsnTracker::new(Tsn(1));
        for tsn in [3, 4, 5, 7] {
            t.record(Tsn(tsn));
        }
        t.forget(Tsn(4)); // splits 3..=5
        assert_eq!(t.gap_blocks(8), blocks(&[(3, 3), (5, 5), (7, 7)]));
        t.forget(Tsn(7));
        t.forget(Tsn(3));
        t.forget(Tsn(1)); // not held: ignored
        assert_eq!(t.gap_blocks(8), blocks(&[(5, 5)]));
        assert_eq!(t.highest_received().0, 5);
        assert_eq!(t.record(Tsn(4)), Received::New);
    }

    #[test]
    fn gap_ranges_are_capped_but_runs_and_the_next_tsn_still_come_in() {
        let mut t = TsnTracker::new(Tsn(0));
        for k in 1..=MAX_GAP_RANGES as u32 {
            assert_eq!(t.record(Tsn(2 * k)), Received::New);
        }
        let far = 2 * MAX_GAP_RANGES as u32 + 10;
        assert_eq!(t.record(Tsn(far)), Received::TooManyGaps);
        // Joining a run or filling the first hole opens no range.
        assert_eq!(t.record(Tsn(2 * MAX_GAP_RANGES as u32 + 1)), Received::New);
        assert_eq!(t.record(Tsn(0)), Received::New);
        assert_eq!(t.record(Tsn(1)), Received::New);
        assert_eq!(t.cum_tsn().0, 2);
    }

    #[test]
    fn absurd_tsns_do_not_panic_or_corrupt_state() {
        let mut t = TsnTracker::new(Tsn(5));
        t.record(Tsn(5));
        // Half the serial space away in either direction.
        assert_eq!(
            t.record(Tsn(5u32.wrapping_add(1 << 31))),
            Received::Duplicate
        );
        assert_eq!(
            t.record(Tsn(5u32.wrapping_add((1 << 31) - 1))),
            Received::OutOfWindow
        );
        assert_eq!(
            t.record(Tsn(5u32.wrapping_sub(1 << 30))),
            Received::Duplicate
        );
        assert_eq!(t.cum_tsn().0, 5);
        assert!(!t.has_gaps());
        t.skip_to(Tsn(5u32.wrapping_add(1 << 31))); // behind in serial terms: ignored
        assert_eq!(t.cum_tsn().0, 5);
    }

    #[test]
    fn skip_to_advances_cum_and_absorbs_ranges() {
        let mut t = TsnTracker::new(Tsn(1));
        for tsn in [1, 4, 5, 8, 9, 12] {
            t.record(Tsn(tsn));
        }
        // Swallows 4..=5; 8..=9 touches the new point 7 and is absorbed.
        t.skip_to(Tsn(7));
        assert_eq!(t.cum_tsn().0, 9);
        assert_eq!(t.gap_blocks(4), blocks(&[(3, 3)]));
        // Into the middle of a range: the rest of it is absorbed.
        let mut t = TsnTracker::new(Tsn(1));
        for tsn in [5, 6, 7] {
            t.record(Tsn(tsn));
        }
        t.skip_to(Tsn(6));
        assert_eq!(t.cum_tsn().0, 7);
        assert!(!t.has_gaps());
        // Beyond everything received.
        t.skip_to(Tsn(100));
        assert_eq!(t.cum_tsn().0, 100);
        assert_eq!(t.record(Tsn(50)), Received::Duplicate);
        assert_eq!(t.record(Tsn(101)), Received::New);
        assert_eq!(t.cum_tsn().0, 101);
    }

    #[test]
    fn skip_to_ignores_a_point_not_ahead() {
        let mut t = TsnTracker::new(Tsn(1));
        for tsn in [1, 2, 3, 5] {
            t.record(Tsn(tsn));
        }
        t.skip_to(Tsn(2));
        t.skip_to(Tsn(3));
        assert_eq!(t.cum_tsn().0, 3);
        assert_eq!(t.gap_blocks(4), blocks(&[(2, 2)]));
    }

    #[test]
    fn sack_carries_cum_window_gaps_and_takes_duplicates() {
        let mut t = TsnTracker::new(Tsn(1));
        for tsn in [1, 2, 4, 5, 7, 4] {
            t.record(Tsn(tsn));
        }
        let sack = t.sack(12_345, 1);
        assert_eq!(
            sack,
            Sack {
                cum_tsn_ack: 2,
                a_rwnd: 12_345,
                gap_blocks: blocks(&[(2, 3)]),
                dup_tsns: vec![4],
            }
        );
        assert!(t.sack(1, 8).dup_tsns.is_empty());
    }

    proptest! {
        #[test]
        fn tracker_matches_a_set_model(
            initial in any::<u32>(),
            offsets in proptest::collection::vec(0u32..300, 0..200),
        ) {
            let mut t = TsnTracker::new(Tsn(initial));
            let mut seen = BTreeSet::new();
            for off in offsets {
                let got = t.record(Tsn(initial.wrapping_add(off)));
                prop_assert_eq!(got == Received::New, seen.insert(off));
            }
            // Model: cum is the end of the run starting at offset 0.
            let mut cum_off: i64 = -1;
            while seen.contains(&((cum_off + 1) as u32)) {
                cum_off += 1;
            }
            let expected_cum = initial.wrapping_add_signed(cum_off as i32);
            prop_assert_eq!(t.cum_tsn().0, expected_cum);
            // Model gap blocks from the set.
            let mut expected = Vec::new();
            for &off in seen.iter().filter(|&&o| i64::from(o) > cum_off) {
                let rel = (i64::from(off) - cum_off) as u16;
                match expected.last_mut() {
                    Some(GapBlock { end, .. }) if *end + 1 == rel => *end = rel,
                    _ => expected.push(GapBlock { start: rel, end: rel }),
                }
            }
            prop_assert_eq!(t.has_gaps(), !expected.is_empty());
            prop_assert_eq!(t.gap_blocks(usize::MAX), expected);
            let highest = seen.last().map_or(expected_cum, |&o| initial.wrapping_add(o));
            prop_assert_eq!(t.highest_received().0, highest);
        }
    }

    fn ms(n: u64) -> Time {
        Time::from_millis(n)
    }

    /// The decision with the delayed-SACK timer the association keeps for it.
    struct SackTimer {
        decision: SackDecision,
        delayed: Option<Time>,
    }

    impl SackTimer {
        /// A decision past the association's first DATA (acknowledged at
        /// once, RFC 9260 5.1), so that 6.2's rules apply.
        fn new(sack_freq: u32, sack_delay: Duration) -> Self {
            let mut s = Self::fresh(sack_freq, sack_delay);
            s.on_data_packet(Time::ZERO, true, false, false, false, false);
            s.on_sack_sent();
            s
        }

        /// A decision for an association that has received no DATA yet.
        fn fresh(sack_freq: u32, sack_delay: Duration) -> Self {
            Self {
                decision: SackDecision::new(sack_freq, sack_delay),
                delayed: None,
            }
        }

        fn on_data_packet(&mut self, now: Time, new: bool, dup: bool, i: bool, gb: bool, ga: bool) {
            if let Some(delay) = self.decision.on_data_packet(now, new, dup, i, gb, ga) {
                self.delayed.get_or_insert(now + delay);
            }
        }

        fn sack_due(&self, now: Time) -> bool {
            self.decision.sack_due(now, self.delayed)
        }

        fn deadline(&self) -> Option<Time> {
            self.decision.deadline(self.delayed)
        }

        fn on_sack_sent(&mut self) {
            self.decision.on_sack_sent();
            self.delayed = None;
        }

        fn sack_freq(&self) -> u32 {
            self.decision.sack_freq()
        }

        fn sack_delay(&self) -> Duration {
            self.decision.sack_delay()
        }
    }

    #[test]
    fn every_second_packet_is_acked_at_once() {
        let mut s = SackTimer::new(2, Duration::from_millis(200));
        s.on_data_packet(ms(0), true, false, false, false, false);
        assert!(!s.sack_due(ms(0)));
        s.on_data_packet(ms(10), true, false, false, false, false);
        assert!(s.sack_due(ms(10)));
        s.on_sack_sent();
        assert!(!s.sack_due(ms(10)));
        assert_eq!(s.deadline(), None);
        s.on_data_packet(ms(20), true, false, false, false, false);
        assert!(!s.sack_due(ms(20)));
    }

    #[test]
    fn the_first_data_of_an_association_is_acked_at_once_and_only_the_first() {
        let mut s = SackTimer::fresh(2, Duration::from_millis(200));
        s.on_data_packet(ms(0), true, false, false, false, false);
        assert!(s.sack_due(ms(0)));
        s.on_sack_sent();
        s.on_data_packet(ms(10), true, false, false, false, false);
        assert!(!s.sack_due(ms(10)));
        assert_eq!(s.deadline(), Some(ms(210)));
    }

    #[test]
    fn first_packet_arms_delayed_sack_at_now_plus_delay() {
        let mut s = SackTimer::new(2, Duration::from_millis(200));
        s.on_data_packet(ms(1000), true, false, false, false, false);
        assert_eq!(s.deadline(), Some(ms(1200)));
        assert!(!s.sack_due(ms(1199)));
        assert!(s.sack_due(ms(1200)));
    }

    #[test]
    fn armed_deadline_is_never_pushed_later() {
        let mut s = SackTimer::new(3, Duration::from_millis(200));
        s.on_data_packet(ms(0), true, false, false, false, false);
        s.on_data_packet(ms(150), true, false, false, false, false);
        assert_eq!(s.deadline(), Some(ms(200)));
        assert!(!s.sack_due(ms(150)));
    }

    #[test]
    fn i_bit_triggers_an_immediate_sack() {
        let mut s = SackTimer::new(2, Duration::from_millis(200));
        s.on_data_packet(ms(5), true, false, true, false, false);
        assert!(s.sack_due(ms(5)));
        assert_eq!(s.deadline(), Some(ms(5)));
    }

    #[test]
    fn duplicates_trigger_an_immediate_sack_with_or_without_new_data() {
        let mut s = SackTimer::new(2, Duration::from_millis(200));
        s.on_data_packet(ms(5), false, true, false, false, false);
        assert!(s.sack_due(ms(5)));
        s.on_sack_sent();
        s.on_data_packet(ms(6), true, true, false, false, false);
        assert!(s.sack_due(ms(6)));
    }

    #[test]
    fn packet_with_nothing_accepted_triggers_an_immediate_sack() {
        let mut s = SackTimer::new(2, Duration::from_millis(200));
        s.on_data_packet(ms(5), false, false, false, false, false);
        assert!(s.sack_due(ms(5)));
    }

    #[test]
    fn new_gap_triggers_an_immediate_sack() {
        let mut s = SackTimer::new(2, Duration::from_millis(200));
        s.on_data_packet(ms(5), true, false, false, false, true);
        assert!(s.sack_due(ms(5)));
    }

    #[test]
    fn every_packet_is_acked_until_the_gap_is_filled() {
        let mut s = SackTimer::new(4, Duration::from_millis(200));
        // Hole still open.
        s.on_data_packet(ms(5), true, false, false, true, true);
        assert!(s.sack_due(ms(5)));
        s.on_sack_sent();
        // The packet that fills the hole.
        s.on_data_packet(ms(6), true, false, false, true, false);
        assert!(s.sack_due(ms(6)));
        s.on_sack_sent();
        // Back to delayed acknowledgement.
        s.on_data_packet(ms(7), true, false, false, false, false);
        assert!(!s.sack_due(ms(7)));
        assert_eq!(s.deadline(), Some(ms(207)));
    }

    #[test]
    fn sack_freq_one_acks_every_packet() {
        let mut s = SackTimer::new(1, Duration::from_millis(200));
        for t in 0..3 {
            s.on_data_packet(ms(t), true, false, false, false, false);
            assert!(s.sack_due(ms(t)));
            s.on_sack_sent();
        }
        assert_eq!(SackTimer::new(0, Duration::ZERO).sack_freq(), 1);
    }

    #[test]
    fn sack_delay_is_clamped_to_500ms() {
        let mut s = SackTimer::new(2, Duration::from_secs(3));
        assert_eq!(s.sack_delay(), MAX_SACK_DELAY);
        s.on_data_packet(ms(0), true, false, false, false, false);
        assert_eq!(s.deadline(), Some(ms(500)));
    }

    #[test]
    fn immediate_sack_keeps_the_earliest_due_time() {
        let mut s = SackTimer::new(2, Duration::from_millis(200));
        s.on_data_packet(ms(0), true, false, false, false, false);
        s.on_data_packet(ms(50), true, false, false, false, false);
        s.on_data_packet(ms(60), true, true, false, false, false);
        assert_eq!(s.deadline(), Some(ms(50)));
        assert!(s.sack_due(ms(50)));
    }
}
