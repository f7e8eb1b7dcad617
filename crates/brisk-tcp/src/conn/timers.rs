//! The connection's timers: retransmission (RFC 6298 5, also for the SYN),
//! delayed ACK (RFC 5681 4.2), persist (RFC 9293 3.8.6.1), RACK's
//! reordering timer (RFC 8985 6.3), the tail loss probe (RFC 8985 7.3),
//! Linux's autocorking and TIME-WAIT (RFC 9293 3.6).

use brisk_proto::timer::earliest;

use super::{Connection, Recovery, State};
use crate::Time;
use crate::events::{CloseReason, RetransmitCause};
use crate::recovery::thin;

impl Connection {
    /// The earliest deadline of any running timer.
    pub(crate) fn poll_timeout(&self) -> Option<Time> {
        earliest([
            self.rtx_timer.deadline(),
            self.rcv.delack.deadline(),
            self.persist_timer.deadline(),
            self.rack.timer.deadline(),
            self.tlp.timer.deadline(),
            self.autocork_timer.deadline(),
            self.time_wait_timer.deadline(),
        ])
    }

    /// Runs every timer that has expired by `now`.
    pub(crate) fn on_timeout(&mut self, now: Time) {
        if self.time_wait_timer.poll_expired(now) {
            self.close_with(CloseReason::Normal);
            return;
        }
        if self.rcv.delack.poll_expired(now) {
            self.rcv.ack_now = true;
        }
        if self.rack.timer.poll_expired(now) && self.rack_active() {
            self.rack_detect(now);
        }
        // A PTO due with the RTO goes first (RFC 8985 7.2 caps it at the RTO).
        if self.tlp.timer.poll_expired(now) {
            self.on_pto(now);
        }
        if self.rtx_timer.poll_expired(now) {
            match self.state {
                State::SynSent | State::SynReceived => self.on_syn_timeout(now),
                _ => self.on_rto(now),
            }
        }
        if self.persist_timer.poll_expired(now) {
            self.window_probe = true;
            self.persist_backoff += 1;
        }
        // The held segment goes at the next poll: the segment that held it
        // has left the transmit queue by now.
        self.autocork_timer.poll_expired(now);
        self.refresh(now);
    }

    /// The SYN or SYN-ACK went unanswered: resend it with a doubled RTO
    /// (RFC 6298 5.5), or give up after `max_syn_retransmissions`.
    fn on_syn_timeout(&mut self, now: Time) {
        self.stats.rto_expirations += 1;
        if self.syn_transmissions > self.cfg.max_syn_retransmissions {
            self.close_with(CloseReason::Timeout);
            return;
        }
        self.rto.back_off();
        self.syn_pending = true;
        self.rtx_timer.start(now, self.rto.rto());
    }

    /// RFC 6298 5.4 to 5.6 with RFC 5681 3.1 and RFC 6675 5.1: the
    /// retransmission timer expired with data outstanding.
    fn on_rto(&mut self, now: Time) {
        if self.board.is_empty() {
            return;
        }
        if self.snd_wnd == 0 {
            // The peer's window is closed and what is out is a window probe:
            // probe again, backed off, without a congestion response, for as
            // long as the peer answers (RFC 1122 4.2.2.17).
            if let Some(seg) = self.board.get_mut(0) {
                seg.mark_lost(RetransmitCause::Rto);
                self.forced = Some((seg.start, RetransmitCause::Rto));
            }
            self.stats.window_probes += 1;
            self.rto.back_off();
            self.rtx_timer.start(now, self.rto.rto());
            return;
        }
        self.stats.rto_expirations += 1;
        self.consecutive_rtos += 1;
        if self.consecutive_rtos > self.cfg.max_retransmissions {
            self.close_with(CloseReason::Timeout);
            return;
        }
        let oseg = self.board.len() as u64;
        let (bytes, segs) = self.board.flight();
        // RFC 5681 3.1 eq. 4, the first time the segment times out; cwnd = LW.
        if self.consecutive_rtos == 1 {
            self.cc.reduce_ssthresh(bytes, segs);
        }
        self.cc.on_rto();
        // RFC 6675 5.1: SACK information is kept, unless the first segment
        // shows SACKed: then the receiver reneged (RFC 2018 8) and all of
        // it is forgotten.
        if self.board.get(0).is_some_and(|s| s.sacked) {
            self.board.clear_sacks();
        }
        // RFC 6675 5.1: everything not SACKed goes again, in order, under
        // slow start; no new recovery until RecoveryPoint is acknowledged.
        self.board.mark_all_lost(RetransmitCause::Rto);
        self.recovery = Recovery::Timeout {
            point: self.snd_nxt,
        };
        self.recover = self.snd_nxt;
        self.dupacks = 0;
        self.forced = None;
        self.probe_new = false;
        self.tlp.end_seq = None;
        self.tlp.timer.stop();
        self.rack.timer.stop();
        // RFC 6298 5.5, unless a thin stream's timeouts are linear.
        if thin::backs_off(&self.cfg, oseg, self.consecutive_rtos) {
            self.rto.back_off();
        }
        // RFC 6298 5.6.
        self.rtx_timer.start(now, self.rto.rto());
    }

    /// RFC 8985 7.3: the PTO expired. Send new data if any may go, else
    /// resend the last segment; at most one probe outstanding, and only
    /// after an RTT sample since the last. Then re-arm the RTO.
    fn on_pto(&mut self, now: Time) {
        let eligible = self.rack_active()
            && self.recovery == Recovery::Open
            && self.tlp.end_seq.is_none()
            && self.tlp.rtt_sampled
            && self.board.sacked_count() == 0
            && !self.board.is_empty();
        if eligible {
            let flight = self.board.flight();
            if self.can_send_new_ignoring_cwnd() {
                self.probe_new = true;
            } else if let Some(seg) = self.board.last_unsacked().and_then(|i| self.board.get(i)) {
                self.forced = Some((seg.start, RetransmitCause::TailLossProbe));
            }
            if self.probe_new || self.forced.is_some() {
                self.tlp.flight_at_probe = flight;
                self.tlp.rtt_sampled = false;
                self.stats.tail_loss_probes += 1;
            }
        }
        if !self.board.is_empty() {
            self.rtx_timer.start(now, self.rto.rto());
        }
    }
}
