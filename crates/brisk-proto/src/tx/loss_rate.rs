//! The loss rate the path shows the sender, for a redundancy budget that
//! follows it (`redundancy_residual_loss`): copies cost bytes on every path, but
//! pay only where packets are lost.
//!
//! Redundancy hides the losses it repairs: a lost chunk whose copy arrives
//! is acknowledged like any other, and no SACK reports it missing. So the
//! estimate counts two kinds of evidence, over the first transmissions of
//! chunks:
//!
//! - **a chunk never copied** is lost when the sender marks it for
//!   retransmission (miss indications, RACK, Early Retransmit; a T3 expiry
//!   counts one loss, not every chunk it marks);
//! - **a copied chunk** has its fate told by the peer's Duplicate TSN
//!   reports (RFC 9260 6.2: a receiver reports each duplicate in its next
//!   SACK, and sends that SACK at once). When the chunk sent next after the
//!   copy is acknowledged, the copy has had time to arrive: a duplicate
//!   reported by then means the first transmission had arrived before it;
//!   none means it had not. A copy in a packet with new data is known to
//!   have arrived (its packet's new chunk did), so no duplicate is one loss.
//!   A copy alone in a packet (the copy probe) may itself be the one lost,
//!   and both cases look alike: it counts half a loss, which is what it
//!   weighs on average (either of the two transmissions lost, alike
//!   likely).
//!
//! A peer that never reports duplicates makes every copy look like a
//! repaired loss: the budget then stays whole, as without this knob.
//!
//! The counts decay by half every [`WINDOW`] chunks, so the estimate
//! follows a path whose loss changes; the copies awaiting their verdict are
//! at most [`PENDING`] (bounded work and memory whatever the peer reports).

use std::collections::VecDeque;

use crate::serial::Tsn;

/// First transmissions after which the counts halve.
pub const WINDOW: u64 = 512;

/// Copies awaiting their verdict, at most; the oldest goes unjudged.
pub const PENDING: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PendingCopy {
    tsn: Tsn,
    /// The first chunk sent after the copy: acknowledged, it closes the wait.
    judged_after: Tsn,
    /// The copy rode with new data, so it arrived if that did.
    with_new_data: bool,
    duplicated: bool,
}

/// Losses among first transmissions, as the sender sees them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LossRate {
    /// First transmissions, in the current window (decayed).
    sent: u64,
    /// Losses among them, in half losses.
    lost_halves: u64,
    /// The sender's count of losses already counted ([`Self::sync_lost`]).
    lost_seen: u64,
    pending: VecDeque<PendingCopy>,
}

impl LossRate {
    /// A chunk went out for the first time.
    pub fn on_sent(&mut self) {
        self.sent += 1;
        if self.sent >= WINDOW {
            self.sent /= 2;
            self.lost_halves /= 2;
        }
    }

    /// A chunk never copied was found lost.
    pub fn on_lost(&mut self) {
        self.lost_halves += 2;
    }

    /// The sender's count of chunks never copied found lost, since the
    /// association began (`Outstanding::originals_lost`): what is new in it
    /// counts.
    pub fn sync_lost(&mut self, total: u64) {
        let new = total.saturating_sub(self.lost_seen);
        self.lost_halves = self.lost_halves.saturating_add(new.saturating_mul(2));
        self.lost_seen = self.lost_seen.max(total);
    }

    /// The first copy of `tsn` went out; `next_tsn` is the TSN the next new
    /// chunk gets (in the same packet if `with_new_data`).
    pub fn on_first_copy(&mut self, tsn: Tsn, next_tsn: Tsn, with_new_data: bool) {
        if self.pending.len() == PENDING {
            self.pending.pop_front();
        }
        self.pending.push_back(PendingCopy {
            tsn,
            judged_after: next_tsn,
            with_new_data,
            duplicated: false,
        });
    }

    /// A SACK reported `dup_tsns`; `acked` says whether a TSN is now
    /// acknowledged (cumulatively or by a gap block).
    pub fn on_sack(&mut self, dup_tsns: &[u32], acked: impl Fn(Tsn) -> bool) {
        for copy in &mut self.pending {
            copy.duplicated |= dup_tsns.contains(&copy.tsn.0);
        }
        let mut lost_halves = 0;
        self.pending.retain(|copy| {
            if !acked(copy.judged_after) {
                return true;
            }
            if !copy.duplicated {
                lost_halves += if copy.with_new_data { 2 } else { 1 };
            }
            false
        });
        self.lost_halves += lost_halves;
    }

    /// The loss rate in parts per million; 0 before anything was sent.
    pub fn ppm(&self) -> u64 {
        if self.sent == 0 {
            return 0;
        }
        (self.lost_halves * 500_000 / self.sent).min(1_000_000)
    }

    /// Copies awaiting their verdict.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn losses_of_chunks_never_copied_count_against_first_transmissions() {
        let mut l = LossRate::default();
        assert_eq!(l.ppm(), 0);
        for _ in 0..100 {
            l.on_sent();
        }
        l.on_lost();
        l.on_lost();
        assert_eq!(l.ppm(), 20_000, "2 of 100");
    }

    #[test]
    fn a_copy_with_new_data_and_no_duplicate_reported_is_one_repaired_loss() {
        let mut l = LossRate::default();
        for _ in 0..10 {
            l.on_sent();
        }
        // Copies of 3 and 4 ride with 5 and 6.
        l.on_first_copy(Tsn(3), Tsn(5), true);
        l.on_first_copy(Tsn(4), Tsn(6), true);
        // 5 acknowledged with 3 reported twice: 3's first copy arrived.
        l.on_sack(&[3], |t| t.0 <= 5);
        assert_eq!((l.ppm(), l.pending()), (0, 1));
        // 6 acknowledged, no duplicate of 4: its first transmission was lost.
        l.on_sack(&[], |t| t.0 <= 6);
        assert_eq!((l.ppm(), l.pending()), (100_000, 0));
    }

    #[test]
    fn a_duplicate_reported_before_the_wait_closes_still_counts() {
        let mut l = LossRate::default();
        l.on_sent();
        l.on_sent();
        l.on_first_copy(Tsn(1), Tsn(2), true);
        l.on_sack(&[1], |_| false);
        l.on_sack(&[], |t| t.0 <= 2);
        assert_eq!(l.ppm(), 0);
    }

    #[test]
    fn a_copy_alone_in_its_packet_counts_half_a_loss() {
        let mut l = LossRate::default();
        for _ in 0..4 {
            l.on_sent();
        }
        l.on_first_copy(Tsn(1), Tsn(2), false);
        l.on_sack(&[], |t| t.0 <= 2);
        assert_eq!(l.ppm(), 125_000, "half of one in 4");
    }

    #[test]
    fn the_counts_decay_so_the_estimate_follows_the_path() {
        let mut l = LossRate::default();
        for _ in 0..100 {
            l.on_sent();
            l.on_lost();
        }
        assert_eq!(l.ppm(), 1_000_000);
        for _ in 0..4 * WINDOW {
            l.on_sent();
        }
        assert!(l.ppm() < 100_000, "{}", l.ppm());
    }

    #[test]
    fn a_peer_that_lies_about_duplicates_moves_only_the_copies_verdicts() {
        // Reporting every TSN as a duplicate: copies look needless, so the
        // budget shrinks (the liar only slows its own repairs); the losses
        // of chunks never copied still count.
        let mut l = LossRate::default();
        for t in 0..100u32 {
            l.on_sent();
            l.on_first_copy(Tsn(t), Tsn(t + 1), true);
            l.on_sack(&[t], |x| x.0 <= t + 1);
        }
        assert_eq!(l.ppm(), 0);
        l.sync_lost(3);
        assert_eq!(l.ppm(), 30_000);
        // Never reporting one: every copy looks like a repaired loss, and
        // the rate is at most 100% (the budget bounds what it buys).
        let mut l = LossRate::default();
        for t in 0..100u32 {
            l.on_sent();
            l.on_first_copy(Tsn(t), Tsn(t + 1), true);
            l.on_first_copy(Tsn(t), Tsn(t + 1), true);
            l.on_sack(&[], |x| x.0 <= t + 1);
        }
        assert_eq!(l.ppm(), 1_000_000);
        // A total that goes backwards counts nothing.
        l.sync_lost(0);
        assert_eq!(l.ppm(), 1_000_000);
    }

    #[test]
    fn a_peer_that_never_acknowledges_leaves_at_most_pending_copies_waiting() {
        let mut l = LossRate::default();
        for t in 0..10_000u32 {
            l.on_first_copy(Tsn(t), Tsn(t + 1), true);
            l.on_sack(&[t, t + 1, t + 2], |_| false);
        }
        assert_eq!(l.pending(), PENDING);
    }
}
