//! What to send next. In order: a reset; the SYN or SYN-ACK; a forced
//! retransmission (fast retransmit, RTO, tail loss probe); segments deemed
//! lost (RFC 6675 NextSeg rule 1); new data (rule 2, with Nagle, the
//! peer's window, cwnd, Limited Transmit and autocorking); a FIN; RFC 6675
//! rule 3; a zero-window probe; a pure ACK.

use std::time::Duration;

use super::send::{self, NewData};
use super::{Connection, Recovery, State};
use crate::Time;
use crate::events::{RetransmitCause, TcpEvent};
use crate::recovery::scoreboard::Sent;
use crate::seq;
use crate::wire::{self, Header, Options, flags};

impl Connection {
    /// Writes the next segment into `buf` (cleared first); false if
    /// nothing is to be sent now.
    pub(crate) fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> bool {
        buf.clear();
        let sent = self.send_reset(buf)
            || match self.state {
                State::Closed => false,
                State::SynSent | State::SynReceived => self.send_syn(now, buf),
                _ => self.send_queued_ack(buf) || self.send_data(now, buf) || self.send_ack(buf),
            };
        if sent {
            self.refresh(now);
        }
        sent
    }

    /// Writes a segment; false (and `buf` empty) if it could not be encoded.
    fn emit(&self, h: &Header, payload: &[u8], buf: &mut Vec<u8>) -> bool {
        if wire::write(h, payload, *self.local.ip(), *self.remote.ip(), buf).is_err() {
            buf.clear();
            return false;
        }
        true
    }

    fn base_header(&self, seq_off: u64, flag_bits: u8) -> Header {
        Header {
            src_port: self.local.port(),
            dst_port: self.remote.port(),
            seq: seq::to_wire(self.iss, seq_off),
            ack: 0,
            flags: flag_bits,
            window: 0,
            urgent: 0,
            options: Options::default(),
        }
    }

    /// A header with ACK, window and SACK blocks (every segment after the SYN).
    fn ack_header(&mut self, seq_off: u64, extra: u8) -> Header {
        let mut h = self.base_header(seq_off, flags::ACK | extra);
        h.ack = seq::to_wire(self.irs, self.rcv.rcv_nxt());
        let wnd = self.rcv.advertise(u64::from(self.smss)) >> self.rcv_shift;
        h.window = u16::try_from(wnd).unwrap_or(u16::MAX);
        if self.sack_ok {
            h.options.sack = self.rcv.sack_blocks(self.irs);
        }
        h
    }

    fn send_reset(&mut self, buf: &mut Vec<u8>) -> bool {
        let Some((seq_no, ack)) = self.pending_rst.take() else {
            return false;
        };
        let mut h = self.base_header(0, flags::RST);
        h.seq = seq_no;
        if let Some(a) = ack {
            h.ack = a;
            h.flags |= flags::ACK;
        }
        let ok = self.emit(&h, &[], buf);
        if ok {
            self.stats.segments_sent += 1;
        }
        ok
    }

    /// The SYN (RFC 9293 3.5) or SYN-ACK with our options: MSS, window
    /// scale (RFC 7323 2.2; in a SYN-ACK only if the SYN had it) and
    /// SACK-Permitted (RFC 2018 2).
    fn send_syn(&mut self, now: Time, buf: &mut Vec<u8>) -> bool {
        if !self.syn_pending {
            return false;
        }
        let active = self.state == State::SynSent;
        let mut h = if active {
            self.base_header(0, flags::SYN)
        } else {
            let mut h = self.base_header(0, flags::SYN | flags::ACK);
            h.ack = seq::to_wire(self.irs, 1);
            h
        };
        // RFC 7323 2.2: the window of a SYN is not scaled.
        h.window = u16::try_from(self.cfg.receive_window).unwrap_or(u16::MAX);
        h.options.mss = Some(u16::try_from(self.cfg.mss).unwrap_or(u16::MAX));
        h.options.window_scale = if active || self.window_scaling {
            Some(self.cfg.window_shift())
        } else {
            None
        };
        h.options.sack_permitted = if active { self.cfg.sack } else { self.sack_ok };
        if !self.emit(&h, &[], buf) {
            return false;
        }
        self.syn_pending = false;
        self.syn_transmissions += 1;
        if self.syn_transmissions == 1 {
            self.syn_first_sent = now;
        }
        self.stats.segments_sent += 1;
        // RFC 6298 5.1.
        self.rtx_timer.start_if_stopped(now, self.rto.rto());
        true
    }

    /// An ACK is owed for the segments so far and another data segment
    /// arrived before it went out: build it now, as it would have been.
    pub(super) fn snapshot_owed_ack(&mut self) {
        if self.rcv.ack_now && self.queued_acks.len() < super::MAX_QUEUED_ACKS {
            let h = self.ack_header(self.snd_nxt, 0);
            self.queued_acks.push_back(h);
            self.rcv.on_ack_sent();
        }
    }

    fn send_queued_ack(&mut self, buf: &mut Vec<u8>) -> bool {
        let Some(h) = self.queued_acks.pop_front() else {
            return false;
        };
        if !self.emit(&h, &[], buf) {
            return false;
        }
        self.stats.segments_sent += 1;
        self.stats.acks_sent += 1;
        true
    }

    fn send_ack(&mut self, buf: &mut Vec<u8>) -> bool {
        if !self.rcv.ack_now {
            return false;
        }
        let h = self.ack_header(self.snd_nxt, 0);
        if !self.emit(&h, &[], buf) {
            return false;
        }
        self.rcv.on_ack_sent();
        self.stats.segments_sent += 1;
        self.stats.acks_sent += 1;
        true
    }

    /// Data, a FIN or a probe, if one may go now.
    fn send_data(&mut self, now: Time, buf: &mut Vec<u8>) -> bool {
        if let Some((start, cause)) = self.forced.take() {
            if let Some(i) = self.board.find(start) {
                if self.board.get(i).is_some_and(|s| !s.sacked) {
                    return self.retransmit(now, i, cause, buf);
                }
            }
        }
        let (fb, fs) = self.send_flight();
        // RFC 6675 NextSeg rule 1 (and the in-order resend after an RTO).
        if let Some(i) = self.board.next_lost() {
            let Some(seg) = self.board.get(i) else {
                return false;
            };
            if !self.cc.allows(fb, fs, seg.seq_len(), 0) {
                return false;
            }
            let cause = seg.cause;
            return self.retransmit(now, i, cause, buf);
        }
        // Rule 2: new data.
        if self.can_send_new_data() {
            if let Some(len) = self.next_new_len() {
                let extra = self.limited_transmit_allowance();
                if self.probe_new || self.cc.allows(fb, fs, len, extra) {
                    match self.autocork_until(now, len) {
                        Some(until) => self.autocork_timer.start(until, Duration::ZERO),
                        None => return self.send_new(now, len, buf),
                    }
                }
            } else if self.fin_queued && self.fin_seq.is_none() && self.unsent_bytes() == 0 {
                return self.send_new(now, 0, buf);
            }
        }
        // Rule 3: in SACK recovery, resend what is not SACKed below the
        // highest SACK even if not yet deemed lost.
        if self.sack_ok && matches!(self.recovery, Recovery::Fast { .. }) {
            if let Some(i) = self.board.next_rule3() {
                let len = self.board.get(i).map_or(0, Sent::seq_len);
                if self.cc.allows(fb, fs, len, 0) {
                    return self.retransmit(now, i, RetransmitCause::FastRetransmit, buf);
                }
            }
        }
        // The persist timer expired: what the window allows even if short of
        // a segment (RFC 9293 3.8.6.2.1 (4)), or one byte beyond a zero
        // window (RFC 9293 3.8.6.1).
        if self.window_probe {
            self.window_probe = false;
            if self.can_send_new_data() && self.unsent_bytes() > 0 {
                self.stats.window_probes += 1;
                let len = self
                    .unsent_bytes()
                    .min(u64::from(self.smss))
                    .min(self.usable_window())
                    .max(1);
                return self.send_new(now, len, buf);
            }
        }
        false
    }

    /// The length of the next new segment by the peer's window, sender SWS
    /// avoidance and Nagle, ignoring cwnd.
    pub(super) fn next_new_len(&self) -> Option<u64> {
        send::next_len(&NewData {
            unsent: self.unsent_bytes(),
            mss: u64::from(self.smss),
            usable_window: self.usable_window(),
            max_window: self.max_snd_wnd,
            nagle: self.cfg.nagle,
            unacked: self.snd_nxt > self.snd_una,
        })
    }

    /// Linux's autocorking (tcp_should_autocork): a new segment of `len`
    /// bytes, short of the MSS, waits while the last data segment is taken
    /// to be still in the host's transmit queue (sent less than `autocork`
    /// ago) and data is unacknowledged; returns when it may go. A tail loss
    /// probe is not held, nor data a close has asked to push out with its
    /// FIN (Linux pushes with Nagle off on close).
    fn autocork_until(&self, now: Time, len: u64) -> Option<Time> {
        let hold = self.cfg.autocork?;
        let last = self.last_data_sent?;
        let until = last + hold;
        let held = len < u64::from(self.smss)
            && now < until
            && self.snd_nxt > self.snd_una
            && !self.probe_new
            && !self.fin_queued;
        held.then_some(until)
    }

    /// RFC 3042: on the first and second duplicate ACKs, one new segment
    /// each beyond cwnd.
    fn limited_transmit_allowance(&self) -> u32 {
        if self.cfg.limited_transmit
            && self.recovery == Recovery::Open
            && self.dupacks < self.cfg.dupthresh
        {
            self.dupacks.min(2)
        } else {
            0
        }
    }

    /// Sends `len` new bytes from SND.NXT, with our FIN if they are the last
    /// and a close was asked for.
    fn send_new(&mut self, now: Time, len: u64, buf: &mut Vec<u8>) -> bool {
        let start = self.snd_nxt;
        let fin = self.fin_queued && self.sndbuf.end() == start + len;
        let mut payload = Vec::new();
        self.sndbuf.copy(start, len, &mut payload);
        let mut extra = if fin { flags::FIN } else { 0 };
        if len > 0 && self.sndbuf.end() == start + len {
            extra |= flags::PSH;
        }
        let h = self.ack_header(start, extra);
        if !self.emit(&h, &payload, buf) {
            return false;
        }
        let end = start + len + u64::from(fin);
        self.board.push(Sent {
            start,
            end,
            fin,
            first_sent: now,
            last_sent: now,
            transmissions: 1,
            sacked: false,
            lost: false,
            rtx_out: false,
            cause: RetransmitCause::Rto,
        });
        self.snd_nxt = end;
        if fin {
            self.fin_seq = Some(start + len);
            self.state = match self.state {
                State::CloseWait => State::LastAck,
                _ => State::FinWait1,
            };
        }
        self.stats.segments_sent += 1;
        if len > 0 {
            self.stats.data_segments_sent += 1;
            self.stats.bytes_sent_new += len;
            self.last_data_sent = Some(now);
        }
        self.rcv.on_ack_sent();
        // RFC 6298 5.1.
        self.rtx_timer.start_if_stopped(now, self.rto.rto());
        if self.probe_new {
            // RFC 8985 7.3: the probe's episode ends when SND.NXT is acked.
            self.probe_new = false;
            self.tlp.end_seq = Some(self.snd_nxt);
            self.tlp.is_retrans = false;
        } else {
            // RFC 8985 7.2: (re)arm the PTO after new data.
            self.arm_pto(now);
        }
        true
    }

    /// Resends segment `i` and reports it.
    fn retransmit(
        &mut self,
        now: Time,
        i: usize,
        cause: RetransmitCause,
        buf: &mut Vec<u8>,
    ) -> bool {
        let Some(seg) = self.board.get(i).cloned() else {
            return false;
        };
        let mut payload = Vec::new();
        self.sndbuf.copy(seg.start, seg.data_len(), &mut payload);
        let h = self.ack_header(seg.start, if seg.fin { flags::FIN } else { 0 });
        if !self.emit(&h, &payload, buf) {
            return false;
        }
        let transmissions = seg.transmissions + 1;
        if let Some(s) = self.board.get_mut(i) {
            s.transmissions = transmissions;
            s.last_sent = now;
            // A probe is not a recovery retransmission: it stays out of the pipe.
            if cause != RetransmitCause::TailLossProbe {
                s.rtx_out = true;
            }
        }
        let len = seg.data_len();
        self.stats.segments_sent += 1;
        if len > 0 {
            self.stats.data_segments_sent += 1;
            self.last_data_sent = Some(now);
        }
        self.stats.bytes_retransmitted += len;
        self.stats.count_retransmission(cause);
        self.events.push_back(TcpEvent::Retransmission {
            seq: seq::to_wire(self.iss, seg.start),
            len: u32::try_from(len).unwrap_or(u32::MAX),
            cause,
            at: now,
            first_sent_at: seg.first_sent,
            transmissions,
        });
        self.rcv.on_ack_sent();
        // RFC 6298 5.1.
        self.rtx_timer.start_if_stopped(now, self.rto.rto());
        if cause == RetransmitCause::TailLossProbe {
            self.tlp.end_seq = Some(self.snd_nxt);
            self.tlp.is_retrans = true;
        }
        true
    }
}
