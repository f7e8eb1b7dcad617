//! RACK, time-based loss detection (RFC 8985 6), adapted to SCTP: a chunk is
//! lost when a chunk sent after it was delivered and a reordering window has
//! passed since. It finds losses the miss-indication count cannot: of the
//! tail (with the probe, `tail_probe`), of retransmissions, and of chunks too
//! few SACKs follow.
//!
//! SCTP has no timestamps (RFC 8985 6.2 step 2 relies on them to tell which
//! copy of a retransmitted segment an ACK is for): here a retransmitted chunk
//! acknowledged sooner than `min_rtt` after its latest transmission is
//! ambiguous and gives no sample. The DSACK of RFC 8985 6.2 step 4 is a
//! SACK's Duplicate TSNs (RFC 9260 3.3.4) for a chunk retransmitted as lost.

use std::collections::VecDeque;
use std::time::Duration;

use crate::serial::Tsn;
use crate::time::Time;

/// A chunk that a SACK acknowledged for the first time (cumulatively or by
/// a gap block), as its latest transmission left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivered {
    pub tsn: Tsn,
    /// When its latest transmission left (RFC 8985 `Segment.xmit_ts`).
    pub sent: Time,
    /// It was sent more than once (`Segment.retransmitted`).
    pub retransmitted: bool,
    /// Its latest transmission carried the I bit (RFC 7053).
    pub immediate: bool,
}

/// RFC 8985 6.2 step 4: the reordering window grows by min_RTT/4 per
/// round trip that saw a DSACK, and falls back after this many recoveries
/// without one.
const REO_WND_PERSIST: u32 = 16;

/// Spurious retransmissions are recognised among the latest this many
/// chunks retransmitted as lost.
const RECENT_LOST: usize = 16;

/// The RACK state of an association (RFC 8985 5.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rack {
    /// `RACK.xmit_ts`, `RACK.end_seq`: the latest transmission delivered.
    latest: Option<(Time, Tsn)>,
    /// `RACK.rtt`: the round trip of that transmission.
    rtt: Duration,
    /// `RACK.min_RTT`: the least round trip of chunks sent once.
    min_rtt: Option<Duration>,
    /// `RACK.fack`: the highest TSN delivered.
    fack: Option<Tsn>,
    /// `RACK.reordering_seen`.
    reordering_seen: bool,
    reo_wnd_mult: u32,
    reo_wnd_persist: u32,
    /// `RACK.dsack_round`: the window grows at most once per round trip.
    dsack_round: Option<Tsn>,
    /// The latest chunks retransmitted as lost, to recognise a duplicate
    /// report of one (our DSACK).
    recent_lost: VecDeque<Tsn>,
}

impl Default for Rack {
    fn default() -> Self {
        Self {
            latest: None,
            rtt: Duration::ZERO,
            min_rtt: None,
            fack: None,
            reordering_seen: false,
            reo_wnd_mult: 1,
            reo_wnd_persist: 0,
            dsack_round: None,
            recent_lost: VecDeque::new(),
        }
    }
}

/// RFC 8985 6.2: whether a transmission at (`t1`, `seq1`) left after one
/// at (`t2`, `seq2`): later, or at the same time with a higher TSN.
pub fn sent_after(t1: Time, seq1: Tsn, t2: Time, seq2: Tsn) -> bool {
    t1 > t2 || (t1 == t2 && seq2.is_before(seq1))
}

/// What loss detection found (RFC 8985 6.2 step 5).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Detection {
    /// Chunks lost now.
    pub lost: Vec<Tsn>,
    /// When the reordering timer must look again (RFC 8985 6.3): chunks sent
    /// before the latest delivered are not due yet.
    pub timeout: Option<Duration>,
}

impl Rack {
    /// `RACK.min_RTT`, once a chunk sent once was acknowledged.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    /// `RACK.reordering_seen`.
    pub fn reordering_seen(&self) -> bool {
        self.reordering_seen
    }

    /// RFC 8985 6.2 step 2, ambiguity adapted: whether a SACK at `now`
    /// acknowledging `d` measures its latest transmission. A retransmitted
    /// chunk acknowledged sooner than min_RTT after it was resent was
    /// acknowledged for an earlier copy.
    pub fn unambiguous(&self, now: Time, d: &Delivered) -> bool {
        !d.retransmitted || self.min_rtt.is_some_and(|min| now.since(d.sent) >= min)
    }

    /// RFC 8985 6.2 steps 2 and 3: the chunks a SACK at `now` newly
    /// acknowledged update min_RTT, RACK.rtt, RACK.xmit_ts/end_seq (the
    /// latest transmission delivered, ambiguous ones left out), RACK.fack and
    /// the sign of reordering (a chunk sent once delivered below RACK.fack).
    pub fn on_delivered(&mut self, now: Time, delivered: &[Delivered]) {
        let fack_before = self.fack;
        for d in delivered {
            if !d.retransmitted {
                let rtt = now.since(d.sent);
                self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
            }
        }
        for d in delivered {
            // Step 3: a chunk sent once arriving below the highest delivered.
            if !d.retransmitted && fack_before.is_some_and(|f| d.tsn.is_before(f)) {
                self.reordering_seen = true;
            }
            if self.fack.is_none_or(|f| f.is_before(d.tsn)) {
                self.fack = Some(d.tsn);
            }
            if !self.unambiguous(now, d) {
                continue;
            }
            if self
                .latest
                .is_none_or(|(t, seq)| sent_after(d.sent, d.tsn, t, seq))
            {
                self.latest = Some((d.sent, d.tsn));
                self.rtt = now.since(d.sent);
            }
        }
    }

    /// A chunk was retransmitted as lost (by RACK or by miss indications):
    /// a duplicate report of it will show the retransmission spurious.
    pub fn on_retransmitted_as_lost(&mut self, tsn: Tsn) {
        if self.recent_lost.len() == RECENT_LOST {
            self.recent_lost.pop_front();
        }
        self.recent_lost.push_back(tsn);
    }

    /// RFC 8985 6.2 step 4, DSACK adaptation: a SACK with cumulative ack
    /// `cum` reports `dups` duplicate TSNs; `next_tsn` is SND.NXT. A
    /// duplicate of a chunk retransmitted as lost shows the retransmission
    /// spurious: the window grows by one step, at most once per round trip,
    /// and persists for 16 recoveries. Returns whether it was such a report.
    pub fn on_duplicates(&mut self, dups: &[u32], cum: Tsn, next_tsn: Tsn) -> bool {
        // SND.UNA >= dsack_round.
        if self
            .dsack_round
            .is_some_and(|r| r.is_at_or_before(cum.next()))
        {
            self.dsack_round = None;
        }
        let spurious = dups.iter().any(|&d| self.recent_lost.contains(&Tsn(d)));
        if spurious {
            // A spurious retransmission: the original was reordered, not lost.
            self.reordering_seen = true;
            if self.dsack_round.is_none() {
                self.dsack_round = Some(next_tsn);
                self.reo_wnd_mult = self.reo_wnd_mult.saturating_add(1);
                self.reo_wnd_persist = REO_WND_PERSIST;
            }
        }
        spurious
    }

    /// RFC 8985 6.2 step 4: a recovery ended; after 16 without a DSACK the
    /// window is back to one step.
    pub fn on_recovery_exit(&mut self) {
        self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
        if self.reo_wnd_persist == 0 {
            self.reo_wnd_mult = 1;
        }
    }

    /// RFC 8985 6.2 step 4, `RACK.reo_wnd`: zero while no reordering was
    /// seen and the sender is in recovery or `sacked` (gap-acked chunks)
    /// reached `dupthresh`; otherwise min(reo_wnd_mult * min_RTT / 4, SRTT).
    pub fn reo_wnd(
        &self,
        in_recovery: bool,
        sacked: u32,
        dupthresh: u32,
        srtt: Option<Duration>,
    ) -> Duration {
        if !self.reordering_seen && (in_recovery || sacked >= dupthresh) {
            return Duration::ZERO;
        }
        let Some(min_rtt) = self.min_rtt else {
            return Duration::ZERO;
        };
        let wnd = (min_rtt / 4).saturating_mul(self.reo_wnd_mult);
        srtt.map_or(wnd, |s| wnd.min(s))
    }

    /// RFC 8985 6.2 step 5: of the chunks in flight (`(tsn, latest send)`),
    /// those sent before the latest delivered transmission are lost once
    /// `RACK.rtt + reo_wnd` has passed since they left; the rest of them are
    /// due when the reordering timer fires.
    pub fn detect_loss(
        &self,
        now: Time,
        reo_wnd: Duration,
        in_flight: impl IntoIterator<Item = (Tsn, Time)>,
    ) -> Detection {
        let mut out = Detection::default();
        let Some((xmit_ts, end_seq)) = self.latest else {
            return out;
        };
        for (tsn, sent) in in_flight {
            if !sent_after(xmit_ts, end_seq, sent, tsn) {
                continue;
            }
            let due = sent + self.rtt + reo_wnd;
            if due <= now {
                out.lost.push(tsn);
            } else {
                let remaining = due.since(now);
                out.timeout = Some(out.timeout.map_or(remaining, |t| t.max(remaining)));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn at(v: u64) -> Time {
        Time::from_millis(v)
    }

    fn once(tsn: u32, sent: u64) -> Delivered {
        Delivered {
            tsn: Tsn(tsn),
            sent: at(sent),
            retransmitted: false,
            immediate: false,
        }
    }

    #[test]
    fn a_chunk_sent_before_the_latest_delivered_is_lost_after_rtt_plus_reo_wnd() {
        let mut r = Rack::default();
        // Chunks 1 and 2 sent at 0 and 1 ms; 2 acknowledged at 21 ms.
        r.on_delivered(at(21), &[once(2, 1)]);
        assert_eq!(r.min_rtt(), Some(ms(20)));
        let wnd = r.reo_wnd(false, 1, 3, Some(ms(20)));
        assert_eq!(wnd, ms(5), "min_RTT / 4");
        // 1 is due at 0 + 20 + 5 = 25 ms: not yet, the timer looks at 25.
        let d = r.detect_loss(at(21), wnd, [(Tsn(1), at(0))]);
        assert!(d.lost.is_empty());
        assert_eq!(d.timeout, Some(ms(4)));
        let d = r.detect_loss(at(25), wnd, [(Tsn(1), at(0))]);
        assert_eq!(d.lost, vec![Tsn(1)]);
        assert_eq!(d.timeout, None);
    }

    #[test]
    fn a_chunk_sent_after_the_latest_delivered_is_never_lost_by_rack() {
        let mut r = Rack::default();
        r.on_delivered(at(21), &[once(2, 1)]);
        let d = r.detect_loss(at(500), Duration::ZERO, [(Tsn(3), at(2))]);
        assert_eq!(d, Detection::default());
        // The same send time: the TSN orders them (RFC 8985 6.2).
        let d = r.detect_loss(at(500), Duration::ZERO, [(Tsn(1), at(1)), (Tsn(3), at(1))]);
        assert_eq!(d.lost, vec![Tsn(1)]);
    }

    #[test]
    fn reo_wnd_is_zero_without_reordering_in_recovery_or_at_dupthresh() {
        let mut r = Rack::default();
        r.on_delivered(at(40), &[once(1, 0)]);
        assert_eq!(r.reo_wnd(true, 0, 3, Some(ms(40))), Duration::ZERO);
        assert_eq!(r.reo_wnd(false, 3, 3, Some(ms(40))), Duration::ZERO);
        assert_eq!(r.reo_wnd(false, 2, 3, Some(ms(40))), ms(10));
        // Once reordering was seen, the window holds in recovery too.
        r.on_delivered(at(80), &[once(5, 40)]);
        r.on_delivered(at(81), &[once(4, 40)]);
        assert!(r.reordering_seen());
        assert_eq!(r.reo_wnd(true, 5, 3, Some(ms(40))), ms(10));
        // And never exceeds SRTT.
        assert_eq!(r.reo_wnd(true, 5, 3, Some(ms(8))), ms(8));
    }

    #[test]
    fn a_retransmission_acked_sooner_than_min_rtt_gives_no_sample() {
        let mut r = Rack::default();
        r.on_delivered(at(20), &[once(1, 0)]);
        // Chunk 2 sent at 5, resent at 30, acknowledged at 35: the SACK was
        // for the first copy (5 ms < min_RTT 20 ms).
        let resent = Delivered {
            tsn: Tsn(2),
            sent: at(30),
            retransmitted: true,
            immediate: false,
        };
        r.on_delivered(at(35), &[resent]);
        // Chunk 3, sent at 10, is not judged against the ambiguous copy.
        let d = r.detect_loss(at(35), Duration::ZERO, [(Tsn(3), at(10))]);
        assert!(d.lost.is_empty(), "{d:?}");
        // Acknowledged a round trip after the resend, it counts.
        r.on_delivered(
            at(50),
            &[Delivered {
                sent: at(30),
                ..resent
            }],
        );
        let d = r.detect_loss(at(50), Duration::ZERO, [(Tsn(3), at(10))]);
        assert_eq!(d.lost, vec![Tsn(3)]);
    }

    #[test]
    fn a_lost_retransmission_is_found_by_time() {
        let mut r = Rack::default();
        r.on_delivered(at(20), &[once(1, 0)]);
        // Chunk 2 resent at 30 and lost again; chunk 3 sent at 31 arrives.
        r.on_delivered(at(51), &[once(3, 31)]);
        let d = r.detect_loss(at(56), ms(5), [(Tsn(2), at(30))]);
        assert_eq!(d.lost, vec![Tsn(2)]);
    }

    #[test]
    fn duplicates_of_a_chunk_retransmitted_as_lost_grow_the_window_once_per_round() {
        let mut r = Rack::default();
        r.on_delivered(at(40), &[once(1, 0)]);
        r.on_retransmitted_as_lost(Tsn(2));
        r.on_retransmitted_as_lost(Tsn(3));
        assert!(
            !r.on_duplicates(&[9], Tsn(1), Tsn(10)),
            "not one resent as lost"
        );
        assert!(r.on_duplicates(&[2], Tsn(3), Tsn(10)));
        assert!(r.reordering_seen());
        assert_eq!(r.reo_wnd(false, 0, 3, Some(ms(100))), ms(20), "2 * 40 / 4");
        // The same round: no further growth.
        assert!(r.on_duplicates(&[3], Tsn(3), Tsn(12)));
        assert_eq!(r.reo_wnd(false, 0, 3, Some(ms(100))), ms(20));
        // The round is over once SND.UNA reaches 10.
        assert!(r.on_duplicates(&[3], Tsn(9), Tsn(14)));
        assert_eq!(r.reo_wnd(false, 0, 3, Some(ms(100))), ms(30));
        // 16 recoveries without a DSACK bring it back to one step.
        for _ in 0..15 {
            r.on_recovery_exit();
        }
        assert_eq!(r.reo_wnd(false, 0, 3, Some(ms(100))), ms(30));
        r.on_recovery_exit();
        assert_eq!(r.reo_wnd(false, 0, 3, Some(ms(100))), ms(10));
    }
}
