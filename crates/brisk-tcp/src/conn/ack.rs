//! The sender's side of an arriving ACK (RFC 9293 3.10.7.4, fifth step):
//! window update, SACK scoreboard, cumulative acknowledgement, RTT and
//! loss detection, which enters fast recovery by the first rule that fires:
//!
//! 1. DupThresh duplicate ACKs (RFC 5681 3.2) or, with SACK, IsLost(HighACK
//!    + 1) (RFC 6675 5 step 2); both off while RACK-TLP is in use;
//! 2. `thin_dupack`: one duplicate ACK on a thin stream;
//! 3. `early_retransmit`: oseg - 1 duplicate ACKs or SACKed segments (RFC 5827);
//! 4. RACK (RFC 8985 6.2) marking a segment lost.

use super::{Connection, Recovery, State};
use crate::Time;
use crate::events::{CloseReason, RetransmitCause};
use crate::recovery::early_retransmit::{self, Outstanding};
use crate::recovery::newreno::{self, AckKind};
use crate::recovery::scoreboard::Sent;
use crate::recovery::{thin, tlp};
use crate::seq;
use crate::wire::{SackBlocks, Segment, flags};

impl Connection {
    /// Processes the ACK field of an acceptable segment whose sequence
    /// offset is `off`. Returns false when the segment must be dropped (it
    /// acknowledges data never sent).
    pub(super) fn process_ack(&mut self, now: Time, seg: &Segment<'_>, off: Option<u64>) -> bool {
        let h = &seg.header;
        let Some(ack) = seq::unwrap(self.iss, self.snd_una, h.ack) else {
            return true;
        };
        if ack > self.snd_nxt {
            // RFC 9293 3.10.7.4: an ACK for data not yet sent: send an ACK,
            // drop the segment.
            self.stats.acks_for_unsent += 1;
            self.rcv.ack_now = true;
            return false;
        }
        if ack < self.snd_una {
            // RFC 9293 3.10.7.4: an old duplicate ACK is ignored.
            return true;
        }
        let wnd = u64::from(h.window) << self.snd_shift;
        let window_changed = wnd != self.snd_wnd;
        let wl = off.unwrap_or(self.snd_wl1);
        // RFC 9293 3.10.7.4: update the window from newer segments only.
        if self.snd_wl1 < wl || (self.snd_wl1 == wl && self.snd_wl2 <= ack) {
            self.snd_wnd = wnd;
            self.snd_wl1 = wl;
            self.snd_wl2 = ack;
            self.max_snd_wnd = self.max_snd_wnd.max(wnd);
            if wnd > 0 {
                self.persist_backoff = 0;
            }
        }
        let advanced = ack > self.snd_una;
        // RFC 5681 2: the definition of a duplicate acknowledgment.
        let classic_dup = !advanced
            && seg.payload.is_empty()
            && !h.has(flags::SYN | flags::FIN)
            && !self.board.is_empty()
            && !window_changed;
        if classic_dup {
            self.stats.duplicate_acks_received += 1;
        }
        let sacked = if self.sack_ok {
            self.apply_sack(&h.options.sack)
        } else {
            Vec::new()
        };
        let acked = if advanced {
            self.on_new_ack(now, ack)
        } else {
            Vec::new()
        };
        if self.state == State::Closed {
            return false;
        }
        if self.rack_active() {
            // RFC 8985 6.2 steps 1-3, for every segment newly delivered.
            for s in acked.iter().chain(&sacked) {
                self.rack.on_delivered(now, s);
            }
        }
        // RFC 6675 2: with SACK, an ACK that SACKs new data is a duplicate
        // (even if it also advances the cumulative ACK); without, RFC 5681's.
        let dup = if self.sack_ok {
            !sacked.is_empty()
        } else {
            classic_dup
        };
        if dup {
            self.dupacks += 1;
        }
        self.detect_loss(now, dup);
        if advanced {
            self.tlp_on_ack();
            self.arm_pto(now);
        }
        true
    }

    /// Applies the SACK blocks that are valid: within SND.UNA..SND.NXT
    /// (RFC 2018 3; RFC 6675 5 uses only such blocks). Returns the segments
    /// newly SACKed.
    fn apply_sack(&mut self, blocks: &SackBlocks) -> Vec<Sent> {
        let mut newly = Vec::new();
        for &(l, r) in blocks.as_slice() {
            let left = seq::unwrap(self.iss, self.snd_una, l);
            let right = seq::unwrap(self.iss, self.snd_una, r);
            match (left, right) {
                (Some(left), Some(right))
                    if self.snd_una < left && left < right && right <= self.snd_nxt =>
                {
                    newly.extend(self.board.apply_sack(left, right));
                }
                _ => self.stats.invalid_sack_blocks += 1,
            }
        }
        newly
    }

    /// SND.UNA advances to `ack`: buffers, RTT, congestion control,
    /// recovery exit and the retransmission timer. Returns the segments
    /// acknowledged.
    fn on_new_ack(&mut self, now: Time, ack: u64) -> Vec<Sent> {
        let newly = ack - self.snd_una;
        let acked = self.board.ack_to(ack);
        self.snd_una = ack;
        self.sndbuf.release_to(ack);
        self.dupacks = 0;
        self.consecutive_rtos = 0;
        // RFC 6298 3 (Karn): no sample if any segment acknowledged was
        // retransmitted; else the newest one acknowledged gives it.
        if let Some(last) = acked.last() {
            if acked.iter().all(|s| s.transmissions == 1) {
                self.rto.on_sample(now.since(last.first_sent));
                self.tlp.rtt_sampled = true;
            }
        }
        if self.forced.is_some_and(|(start, _)| start < ack) {
            self.forced = None;
        }
        let srtt = self.rto.srtt().unwrap_or_default();
        match self.recovery {
            Recovery::Fast { point } if !self.sack_ok => match newreno::classify(ack, point) {
                AckKind::Full => {
                    newreno::on_full_ack(&mut self.cc);
                    self.recovery = Recovery::Open;
                }
                AckKind::Partial => {
                    newreno::on_partial_ack(&mut self.cc, newly, acked.len() as u64);
                    // RFC 6582 3.2 step 5: retransmit the first unacknowledged segment.
                    self.retransmit_first(RetransmitCause::FastRetransmit);
                }
            },
            Recovery::Fast { point } => {
                // RFC 6675 5 (A): recovery ends once RecoveryPoint is acknowledged;
                // cwnd is not grown during recovery.
                if ack >= point {
                    self.recovery = Recovery::Open;
                }
            }
            Recovery::Timeout { point } => {
                // RFC 5681 3.1: slow start after the timeout.
                self.cc.on_ack(newly, acked.len() as u64, now, srtt);
                if ack >= point {
                    self.recovery = Recovery::Open;
                }
            }
            Recovery::Open => self.cc.on_ack(newly, acked.len() as u64, now, srtt),
        }
        // RFC 6298 5.2 and 5.3.
        if self.board.is_empty() {
            self.rtx_timer.stop();
        } else {
            self.rtx_timer.start(now, self.rto.rto());
        }
        if self.fin_seq.is_some_and(|f| ack > f) {
            match self.state {
                State::FinWait1 => self.state = State::FinWait2,
                State::Closing => self.enter_time_wait(now),
                State::LastAck => self.close_with(CloseReason::Normal),
                _ => {}
            }
        }
        acked
    }

    /// Marks the first segment not SACKed lost for `cause` and sends it at
    /// the next poll whatever cwnd says.
    fn retransmit_first(&mut self, cause: RetransmitCause) {
        if let Some(seg) = self
            .board
            .first_unsacked()
            .and_then(|i| self.board.get_mut(i))
        {
            seg.mark_lost(cause);
            self.forced = Some((seg.start, cause));
        }
    }

    /// Loss detection after an ACK was applied (`dup`: it was a duplicate).
    fn detect_loss(&mut self, now: Time, dup: bool) {
        match self.recovery {
            Recovery::Fast { .. } => {
                if !self.sack_ok {
                    if dup {
                        // RFC 5681 3.2 step 4: inflate by one segment.
                        self.cc.inflate(1);
                    }
                } else if !self.rack_active() {
                    // RFC 6675 5 (B): Update(), then IsLost() through NextSeg().
                    self.board.mark_lost_rfc6675(self.cfg.dupthresh, self.smss);
                }
            }
            Recovery::Timeout { .. } => {}
            Recovery::Open => {
                // RFC 6582 3.2 step 1, RFC 6675 5.1: not before the last
                // recovery's data is acknowledged. A segment still deemed
                // lost when the last recovery ended is a new loss event.
                if self.snd_una >= self.recover {
                    let cause = if dup { self.entry_cause() } else { None }.or_else(|| {
                        self.board
                            .next_lost()
                            .and_then(|i| self.board.get(i))
                            .map(|s| s.cause)
                    });
                    if let Some(cause) = cause {
                        self.enter_fast_recovery(cause);
                    }
                }
            }
        }
        if self.rack_active() {
            self.rack_detect(now);
        }
    }

    /// Which rule, if any, starts fast recovery now.
    fn entry_cause(&self) -> Option<RetransmitCause> {
        let oseg = self.board.len() as u64;
        if !self.rack_active() {
            // RFC 5681 3.2 step 2 / RFC 6675 5 step 1.
            if self.dupacks >= self.cfg.dupthresh {
                return Some(RetransmitCause::FastRetransmit);
            }
            // RFC 6675 5 step 2: IsLost(HighACK + 1).
            if self.sack_ok && self.board.is_lost(0, self.cfg.dupthresh, self.smss) {
                return Some(RetransmitCause::FastRetransmit);
            }
        }
        if thin::dupack_fires(&self.cfg, oseg, self.dupacks) {
            return Some(RetransmitCause::FastRetransmit);
        }
        let er = Outstanding {
            segments: oseg,
            sacked: self.board.sacked_count() as u64,
            dupacks: self.dupacks,
            sack: self.sack_ok,
            can_send_new: self.can_send_new_ignoring_cwnd(),
        };
        if self.cfg.early_retransmit && early_retransmit::fires(&er) {
            return Some(RetransmitCause::EarlyRetransmit);
        }
        None
    }

    /// Whether a new segment could go now if cwnd allowed (RFC 5827 3.2 (2),
    /// RFC 8985 7.3).
    pub(super) fn can_send_new_ignoring_cwnd(&self) -> bool {
        self.can_send_new_data() && self.next_new_len().is_some()
    }

    /// RFC 6675 5 step 4 (with SACK) or RFC 6582 3.2 step 2 (without):
    /// ssthresh per RFC 5681 eq. 4, cwnd, and the first retransmission.
    pub(super) fn enter_fast_recovery(&mut self, cause: RetransmitCause) {
        self.stats.fast_recoveries += 1;
        let (bytes, segs) = self.board.flight();
        self.cc.reduce_ssthresh(bytes, segs);
        self.recovery = Recovery::Fast {
            point: self.snd_nxt,
        };
        self.recover = self.snd_nxt;
        if self.sack_ok {
            // RFC 6675 5 step 4.2: cwnd = ssthresh.
            self.cc.cwnd_to_ssthresh();
            if !self.rack_active() {
                self.board.mark_lost_rfc6675(self.cfg.dupthresh, self.smss);
            }
        } else {
            newreno::enter(&mut self.cc, self.dupacks.max(1));
        }
        // RFC 6675 5 step 4.3, RFC 5681 3.2 step 2: retransmit the first
        // segment presumed lost: the first marked (by IsLost or RACK), else
        // the first not SACKed, which then reports `cause`.
        match self.board.next_lost().and_then(|i| self.board.get_mut(i)) {
            Some(seg) => {
                if seg.start == self.snd_una && cause != RetransmitCause::Rack {
                    seg.cause = cause;
                }
                self.forced = Some((seg.start, seg.cause));
            }
            None => self.retransmit_first(cause),
        }
        // Recovery takes over from a pending tail loss probe.
        self.tlp.timer.stop();
        self.tlp.end_seq = None;
        self.probe_new = false;
    }

    /// RFC 8985 6.2 step 5 and 6.3: mark by time, arm the reordering timer,
    /// and enter recovery if something was found lost.
    pub(super) fn rack_detect(&mut self, now: Time) {
        let in_recovery = self.recovery != Recovery::Open;
        let reo = self.rack.reo_wnd(
            &self.cfg,
            in_recovery,
            self.board.sacked_count(),
            self.rto.srtt(),
        );
        let (marked, timeout) = self.rack.detect_loss(now, &mut self.board, reo);
        match timeout {
            Some(t) => self.rack.timer.start(now, t),
            None => self.rack.timer.stop(),
        }
        if marked > 0 && self.recovery == Recovery::Open && self.snd_una >= self.recover {
            self.enter_fast_recovery(RetransmitCause::Rack);
        }
    }

    /// RFC 8985 7.4: the probe's episode ends once SND.UNA passes it. A
    /// retransmitted probe then repaired a loss as far as we can tell (we
    /// have no DSACK to say the original arrived): reduce cwnd once.
    fn tlp_on_ack(&mut self) {
        if let Some(end) = self.tlp.end_seq {
            if self.snd_una >= end {
                self.tlp.end_seq = None;
                if self.tlp.is_retrans && self.recovery == Recovery::Open {
                    let (bytes, segs) = self.tlp.flight_at_probe;
                    self.cc.reduce_ssthresh(bytes, segs);
                    self.cc.cwnd_to_ssthresh();
                }
            }
        }
    }

    /// RFC 8985 7.2: (re)arm the PTO when new data went out or an ACK
    /// advanced, outside recovery, with nothing SACKed and no probe out.
    pub(super) fn arm_pto(&mut self, now: Time) {
        let eligible = self.rack_active()
            && self.recovery == Recovery::Open
            && self.tlp.end_seq.is_none()
            && !self.board.is_empty()
            && self.board.sacked_count() == 0;
        if eligible {
            let at = tlp::pto(
                now,
                self.rto.srtt(),
                self.board.len() as u64,
                self.cfg.tlp_max_ack_delay,
                self.rtx_timer.deadline(),
            );
            self.tlp.timer.start(now, at.since(now));
        } else {
            self.tlp.timer.stop();
        }
    }
}
