//! Segment arrival (RFC 9293 3.10.7): the handshake, the acceptability test,
//! RST and SYN in synchronized states (RFC 5961), data and FIN.

use std::net::SocketAddrV4;

use super::{Connection, DEFAULT_MSS, State};
use crate::Time;
use crate::config::{MAX_MSS, MIN_MSS, TcpConfig};
use crate::events::{CloseReason, TcpEvent};
use crate::seq;
use crate::wire::{Header, Segment, flags};

impl Connection {
    /// A passive open: the endpoint received `syn` on a listening port
    /// (RFC 9293 3.10.7.2); a SYN-ACK goes out at the next poll.
    pub(crate) fn accept(
        now: Time,
        cfg: TcpConfig,
        local: SocketAddrV4,
        remote: SocketAddrV4,
        syn: &Header,
        iss: u32,
    ) -> Self {
        let mut c = Self::new(cfg, local, remote, iss);
        c.state = State::SynReceived;
        c.irs = syn.seq;
        c.rcv.on_syn();
        c.negotiate(syn, syn.options.window_scale.is_some());
        // RFC 7323 2.2: the window of a SYN is never scaled.
        c.snd_wnd = u64::from(syn.window);
        c.max_snd_wnd = c.snd_wnd;
        c.snd_nxt = 1;
        c.syn_pending = true;
        c.stats.segments_received = 1;
        c.refresh(now);
        c
    }

    /// Applies the options of the peer's SYN or SYN-ACK.
    fn negotiate(&mut self, h: &Header, scaling: bool) {
        let o = &h.options;
        // RFC 9293 3.7.1: 536 without an MSS option; bounded to what we can use.
        self.peer_mss = o.mss.map_or(DEFAULT_MSS, u32::from).clamp(MIN_MSS, MAX_MSS);
        self.smss = self.cfg.mss.min(self.peer_mss);
        // RFC 7323 2.2: scaling only if both sides sent the option.
        self.window_scaling = scaling;
        if let (true, Some(shift)) = (scaling, o.window_scale) {
            self.snd_shift = shift;
            self.rcv_shift = self.cfg.window_shift();
        }
        // RFC 2018 2: SACK only if both offered it.
        self.sack_ok = self.cfg.sack && o.sack_permitted;
        self.cc = crate::cc::CongestionControl::new(&self.cfg, self.smss);
    }

    /// A segment for this connection, checksum verified.
    pub(crate) fn on_segment(&mut self, now: Time, seg: &Segment<'_>) {
        self.stats.segments_received += 1;
        match self.state {
            State::Closed => {}
            State::SynSent => self.on_segment_syn_sent(now, seg),
            _ => self.on_segment_synchronized(now, seg),
        }
        self.refresh(now);
    }

    /// RFC 9293 3.10.7.3, SYN-SENT.
    fn on_segment_syn_sent(&mut self, now: Time, seg: &Segment<'_>) {
        let h = &seg.header;
        if h.has(flags::ACK) && seq::unwrap(self.iss, 0, h.ack) != Some(1) {
            // SEG.ACK =< ISS or SEG.ACK > SND.NXT: reset unless it is one.
            if !h.has(flags::RST) {
                self.pending_rst = Some((h.ack, None));
            }
            return;
        }
        if h.has(flags::RST) {
            if h.has(flags::ACK) {
                self.close_with(CloseReason::Refused);
            }
            return;
        }
        // A SYN without ACK would be a simultaneous open, which we do not support.
        if !h.has(flags::SYN) || !h.has(flags::ACK) {
            return;
        }
        self.irs = h.seq;
        self.rcv.on_syn();
        self.negotiate(h, h.options.window_scale.is_some());
        self.snd_una = 1;
        self.snd_wnd = u64::from(h.window);
        self.max_snd_wnd = self.snd_wnd;
        self.snd_wl1 = 0;
        self.snd_wl2 = 1;
        self.established(now);
        // RFC 9293 3.10.7.3: acknowledge the SYN-ACK at once.
        self.rcv.ack_now = true;
    }

    /// The handshake completed: RTT from the SYN exchange unless it was
    /// retransmitted (RFC 6298 3, Karn), else RFC 6298 5.7's 3 s.
    fn established(&mut self, now: Time) {
        self.state = State::Established;
        self.rtx_timer.stop();
        if self.syn_transmissions == 1 {
            self.rto.on_sample(now.since(self.syn_first_sent));
        } else {
            self.rto.fall_back();
        }
        self.recover = 1;
        self.visible = true;
        self.events.push_back(TcpEvent::Connected);
    }

    /// RFC 9293 3.10.7.4: every state after SYN-SENT.
    fn on_segment_synchronized(&mut self, now: Time, seg: &Segment<'_>) {
        let h = &seg.header;
        // The peer's SYN again: our SYN-ACK was lost.
        if self.state == State::SynReceived
            && h.has(flags::SYN)
            && !h.has(flags::ACK)
            && !h.has(flags::RST)
            && h.seq == self.irs
        {
            self.syn_pending = true;
            return;
        }
        let off = seq::unwrap(self.irs, self.rcv.rcv_nxt(), h.seq);
        // First: the sequence number (RFC 9293 3.10.7.4).
        if !off.is_some_and(|s| self.rcv.acceptable(s, seg.seq_len())) {
            if h.has(flags::RST) {
                return;
            }
            let old = off.is_some_and(|s| s + seg.seq_len() <= self.rcv.rcv_nxt());
            if old && seg.seq_len() > 0 {
                self.stats.duplicate_segments_received += 1;
            } else {
                self.stats.out_of_window_dropped += 1;
            }
            self.rcv.ack_now = true;
            // "Special allowance ... to accept valid ACKs" with a zero window.
            if self.rcv.window_now() == 0
                && h.has(flags::ACK)
                && !h.has(flags::SYN)
                && self.state != State::SynReceived
            {
                self.process_ack(now, seg, off);
            }
            return;
        }
        // Second: RST (RFC 5961 3.2: only the exact RCV.NXT resets).
        if h.has(flags::RST) {
            if off == Some(self.rcv.rcv_nxt()) {
                self.close_with(CloseReason::Reset);
            } else {
                self.stats.challenge_acks += 1;
                self.rcv.ack_now = true;
            }
            return;
        }
        // Fourth: a SYN in a synchronized state gets a challenge ACK (RFC 5961 4.2).
        if h.has(flags::SYN) {
            self.stats.challenge_acks += 1;
            self.rcv.ack_now = true;
            return;
        }
        // Fifth: no ACK, no processing.
        if !h.has(flags::ACK) {
            return;
        }
        if self.state == State::SynReceived {
            if seq::unwrap(self.iss, 0, h.ack) != Some(1) {
                // Not the ACK of our SYN: reset (RFC 9293 3.10.7.4, SYN-RECEIVED).
                self.pending_rst = Some((h.ack, None));
                return;
            }
            self.snd_una = 1;
            self.snd_wnd = u64::from(h.window) << self.snd_shift;
            self.max_snd_wnd = self.snd_wnd;
            self.snd_wl1 = off.unwrap_or(1);
            self.snd_wl2 = 1;
            self.established(now);
        }
        if !self.process_ack(now, seg, off) || self.state == State::Closed {
            return;
        }
        // Seventh and eighth: data and FIN.
        let receiving = matches!(
            self.state,
            State::Established | State::FinWait1 | State::FinWait2
        );
        let fin = h.has(flags::FIN);
        if receiving && (!seg.payload.is_empty() || fin) {
            if let Some(s) = off {
                self.on_data(now, s, seg.payload, fin);
            }
        }
    }

    fn on_data(&mut self, now: Time, at: u64, payload: &[u8], fin: bool) {
        self.snapshot_owed_ack();
        let a = self.rcv.accept(at, payload, fin);
        self.stats.bytes_received += a.new_bytes;
        if a.beyond_window {
            self.stats.out_of_window_dropped += 1;
        }
        if a.duplicate {
            self.stats.duplicate_segments_received += 1;
        }
        if a.range_limit {
            self.stats.ooo_ranges_dropped += 1;
        }
        if a.in_order > 0 && self.readable_armed {
            self.readable_armed = false;
            self.events.push_back(TcpEvent::Readable);
        }
        self.rcv.schedule_ack(
            now,
            self.cfg.delayed_ack,
            self.cfg.quickack_segments,
            u64::from(self.smss),
            &a,
        );
        if a.fin {
            self.on_peer_fin(now);
        }
    }

    /// RFC 9293 3.10.7.4, eighth: the peer's FIN is in order.
    fn on_peer_fin(&mut self, now: Time) {
        self.events.push_back(TcpEvent::PeerClosed);
        self.rcv.ack_now = true;
        match self.state {
            State::Established => self.state = State::CloseWait,
            State::FinWait1 => self.state = State::Closing,
            State::FinWait2 => self.enter_time_wait(now),
            _ => {}
        }
    }

    /// RFC 9293 3.6: wait 2 MSL, then close.
    pub(super) fn enter_time_wait(&mut self, now: Time) {
        self.state = State::TimeWait;
        self.rtx_timer.stop();
        self.tlp.timer.stop();
        self.rack.timer.stop();
        self.time_wait_timer.start(now, self.cfg.time_wait);
    }
}
