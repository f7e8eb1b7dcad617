//! Segments sent and not yet cumulatively acknowledged: the retransmission
//! queue and the RFC 6675 scoreboard in one.
//!
//! Each entry is one segment as first sent (retransmissions resend the same
//! range), in sequence order and contiguous from SND.UNA to SND.NXT, so the
//! queue's length is bounded by what the send buffer and windows let out.
//! SACK information is kept per segment: a segment counts as SACKed only when
//! one valid block covers it whole (a conservative reading of RFC 6675 3,
//! which tracks octets; our own peers never SACK part of a segment).

use std::collections::VecDeque;

use crate::Time;
use crate::events::RetransmitCause;

/// One segment sent and not cumulatively acknowledged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    /// First sequence offset (moves up if a cumulative ACK ends inside it).
    pub start: u64,
    /// One past the last sequence offset, FIN included.
    pub end: u64,
    /// Carries our FIN (its last sequence unit).
    pub fin: bool,
    /// When the range was first sent.
    pub first_sent: Time,
    /// When it was last sent (RACK's xmit_ts, RFC 8985 6.1).
    pub last_sent: Time,
    /// Times sent.
    pub transmissions: u32,
    /// Covered by a valid SACK block.
    pub sacked: bool,
    /// Deemed lost (RFC 6675 IsLost, RACK, NewReno or RTO) and so not in the
    /// pipe unless retransmitted.
    pub lost: bool,
    /// Retransmitted in the current recovery and not known to have arrived
    /// (RFC 6675's octets at or below HighRxt).
    pub rtx_out: bool,
    /// Why it was deemed lost: the cause its retransmission reports.
    pub cause: RetransmitCause,
}

impl Sent {
    /// Sequence space it occupies (payload plus FIN).
    pub fn seq_len(&self) -> u64 {
        self.end - self.start
    }

    /// Payload bytes.
    pub fn data_len(&self) -> u64 {
        self.seq_len() - u64::from(self.fin)
    }

    /// Marks it lost for `cause`, to be retransmitted.
    pub fn mark_lost(&mut self, cause: RetransmitCause) {
        self.lost = true;
        self.rtx_out = false;
        self.cause = cause;
    }
}

/// The outstanding segments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scoreboard {
    segs: VecDeque<Sent>,
    /// End of the highest SACKed segment (RFC 6675's highest octet SACKed), 0 if none.
    high_sacked: u64,
    /// Segments SACKed.
    sacked: usize,
}

impl Scoreboard {
    /// Adds a segment just sent for the first time (above every other).
    pub fn push(&mut self, seg: Sent) {
        self.segs.push_back(seg);
    }

    /// Segments outstanding.
    pub fn len(&self) -> usize {
        self.segs.len()
    }

    /// Nothing outstanding.
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    /// The segments, lowest first.
    pub fn iter(&self) -> impl Iterator<Item = &Sent> {
        self.segs.iter()
    }

    /// The `i`-th segment.
    pub fn get(&self, i: usize) -> Option<&Sent> {
        self.segs.get(i)
    }

    /// The `i`-th segment, to change.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut Sent> {
        self.segs.get_mut(i)
    }

    /// Index of the segment starting at `start`.
    pub fn find(&self, start: u64) -> Option<usize> {
        self.segs.binary_search_by_key(&start, |s| s.start).ok()
    }

    /// The first segment not SACKed: RFC 6675's HighACK + 1.
    pub fn first_unsacked(&self) -> Option<usize> {
        self.segs.iter().position(|s| !s.sacked)
    }

    /// The highest segment not SACKed (what a tail loss probe resends).
    pub fn last_unsacked(&self) -> Option<usize> {
        self.segs.iter().rposition(|s| !s.sacked)
    }

    /// Removes every segment below `una` (a cumulative ACK) and trims one
    /// that `una` cuts; returns those removed.
    pub fn ack_to(&mut self, una: u64) -> Vec<Sent> {
        let mut acked = Vec::new();
        while let Some(first) = self.segs.front_mut() {
            if first.end <= una {
                if let Some(s) = self.segs.pop_front() {
                    self.sacked -= usize::from(s.sacked);
                    acked.push(s);
                }
            } else {
                if first.start < una {
                    first.start = una;
                }
                break;
            }
        }
        if self.sacked == 0 {
            self.high_sacked = 0;
        }
        acked
    }

    /// Applies one SACK block `[left, right)` already checked to lie within
    /// SND.UNA..SND.NXT; returns copies of the segments it newly SACKs.
    pub fn apply_sack(&mut self, left: u64, right: u64) -> Vec<Sent> {
        let mut newly = Vec::new();
        let from = self.segs.partition_point(|s| s.end <= left);
        for seg in self.segs.range_mut(from..) {
            if seg.start >= right {
                break;
            }
            if !seg.sacked && left <= seg.start && seg.end <= right {
                seg.sacked = true;
                seg.rtx_out = false;
                self.sacked += 1;
                self.high_sacked = self.high_sacked.max(seg.end);
                newly.push(seg.clone());
            }
        }
        newly
    }

    /// Forgets all SACK information (a suspected renege, RFC 2018 8).
    pub fn clear_sacks(&mut self) {
        for s in &mut self.segs {
            s.sacked = false;
        }
        self.high_sacked = 0;
        self.sacked = 0;
    }

    /// End of the highest SACKed segment, 0 if none.
    pub fn high_sacked(&self) -> u64 {
        self.high_sacked
    }

    /// Segments SACKed.
    pub fn sacked_count(&self) -> usize {
        self.sacked
    }

    /// RFC 6675 4 IsLost(SeqNum) for segment `i`: DupThresh SACKed segments
    /// above it, or more than (DupThresh - 1) * SMSS SACKed bytes above it.
    pub fn is_lost(&self, i: usize, dupthresh: u32, smss: u32) -> bool {
        let (mut segs, mut bytes) = (0u64, 0u64);
        for s in self.segs.range(i.saturating_add(1).min(self.segs.len())..) {
            if s.sacked {
                segs += 1;
                bytes += s.seq_len();
            }
        }
        lost_by(segs, bytes, dupthresh, smss)
    }

    /// Marks lost every segment below a SACKed one that IsLost declares lost
    /// (RFC 6675 4, 5); returns how many were newly marked.
    pub fn mark_lost_rfc6675(&mut self, dupthresh: u32, smss: u32) -> usize {
        let (mut segs, mut bytes, mut marked) = (0u64, 0u64, 0usize);
        for s in self.segs.iter_mut().rev() {
            if s.sacked {
                segs += 1;
                bytes += s.seq_len();
            } else if !s.lost && !s.rtx_out && lost_by(segs, bytes, dupthresh, smss) {
                s.mark_lost(RetransmitCause::FastRetransmit);
                marked += 1;
            }
        }
        marked
    }

    /// RFC 6675 5.1 and RFC 6298 5.4: after a timeout every segment not
    /// SACKed is to be sent again.
    pub fn mark_all_lost(&mut self, cause: RetransmitCause) {
        for s in self.segs.iter_mut().filter(|s| !s.sacked) {
            s.mark_lost(cause);
        }
    }

    /// RFC 6675 4 SetPipe(): octets not SACKed and not lost, plus octets
    /// retransmitted; as (bytes, segments).
    pub fn pipe(&self) -> (u64, u64) {
        let (mut bytes, mut segs) = (0, 0);
        for s in self.segs.iter().filter(|s| !s.sacked) {
            if !s.lost {
                bytes += s.seq_len();
                segs += 1;
            }
            if s.rtx_out {
                bytes += s.seq_len();
                segs += 1;
            }
        }
        (bytes, segs)
    }

    /// RFC 5681 FlightSize (SND.NXT - SND.UNA), as (bytes, segments).
    pub fn flight(&self) -> (u64, u64) {
        let bytes = match (self.segs.front(), self.segs.back()) {
            (Some(first), Some(last)) => last.end - first.start,
            _ => 0,
        };
        (bytes, self.segs.len() as u64)
    }

    /// RFC 6675 NextSeg() rule 1: the first segment deemed lost and not yet
    /// retransmitted.
    pub fn next_lost(&self) -> Option<usize> {
        self.segs
            .iter()
            .position(|s| s.lost && !s.rtx_out && !s.sacked)
    }

    /// RFC 6675 NextSeg() rule 3: the first segment not SACKed, not
    /// retransmitted, below the highest SACKed octet.
    pub fn next_rule3(&self) -> Option<usize> {
        self.segs
            .iter()
            .take_while(|s| s.end <= self.high_sacked)
            .position(|s| !s.sacked && !s.rtx_out && !s.lost)
    }
}

/// IsLost's test on the SACKed segments and bytes above a sequence number.
fn lost_by(segs: u64, bytes: u64, dupthresh: u32, smss: u32) -> bool {
    segs >= u64::from(dupthresh) || bytes > u64::from(dupthresh.saturating_sub(1)) * u64::from(smss)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ten 100-byte segments from offset 1.
    fn board() -> Scoreboard {
        let mut b = Scoreboard::default();
        for i in 0..10u64 {
            b.push(Sent {
                start: 1 + i * 100,
                end: 101 + i * 100,
                fin: false,
                first_sent: Time::ZERO,
                last_sent: Time::ZERO,
                transmissions: 1,
                sacked: false,
                lost: false,
                rtx_out: false,
                cause: RetransmitCause::Rto,
            });
        }
        b
    }

    #[test]
    fn sack_marks_whole_segments_and_is_lost_needs_dupthresh_above() {
        let mut b = board();
        assert_eq!(b.apply_sack(101, 301).len(), 2);
        assert_eq!(b.apply_sack(101, 301).len(), 0, "already SACKed");
        assert_eq!(b.apply_sack(350, 401).len(), 0, "only part of a segment");
        assert!(!b.is_lost(0, 3, 100));
        assert_eq!(b.apply_sack(301, 401).len(), 1);
        assert!(b.is_lost(0, 3, 100));
        assert_eq!((b.high_sacked(), b.sacked_count()), (401, 3));
        assert_eq!(b.mark_lost_rfc6675(3, 100), 1);
        assert_eq!(b.next_lost(), Some(0));
        // Pipe: 10 segments, 3 SACKed, 1 lost: 6 in the network.
        assert_eq!(b.pipe(), (600, 6));
        assert_eq!(b.flight(), (1000, 10));
        if let Some(s) = b.get_mut(0) {
            s.rtx_out = true;
        }
        assert_eq!(b.pipe(), (700, 7));
        assert_eq!(b.next_lost(), None);
        assert_eq!(b.next_rule3(), None);
    }

    #[test]
    fn bytes_rule_of_is_lost_counts_more_than_dupthresh_minus_one_smss() {
        let mut b = board();
        b.apply_sack(101, 301);
        assert!(!b.is_lost(0, 3, 100), "200 bytes is not more than 200");
        assert!(b.is_lost(0, 3, 99));
    }

    #[test]
    fn cumulative_ack_removes_and_trims() {
        let mut b = board();
        b.apply_sack(201, 301);
        let acked = b.ack_to(150);
        assert_eq!(acked.len(), 1);
        assert_eq!(b.get(0).map(|s| (s.start, s.data_len())), Some((150, 51)));
        b.ack_to(301);
        assert_eq!(b.high_sacked(), 0);
        assert_eq!(b.len(), 7);
        b.mark_all_lost(RetransmitCause::Rto);
        assert_eq!(b.pipe(), (0, 0));
        assert_eq!(b.find(401), Some(1));
    }
}
