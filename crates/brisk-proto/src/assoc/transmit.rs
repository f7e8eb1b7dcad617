//! Packets out (RFC 9260 6.1, 6.10): control chunks first, then a SACK when one
//! is due or can ride along, then DATA marked for retransmission, then new DATA,
//! within cwnd (rule B), the peer's window (rule A) and Max.Burst. Each packet
//! has one destination (6.4): a control chunk's own, else the SACK's (where
//! DATA came from), else the retransmissions', else the data path; it carries
//! only what may go there.

use std::net::SocketAddr;

use super::{Association, Control, State, receive};
use crate::cc::CongestionController;
use crate::events::{Event, RetransmitCause};
use crate::path::PathId;
use crate::serial::Tsn;
use crate::time::Time;
use crate::timer::TimerKind;
use crate::tx::nagle;
use crate::tx::outstanding::{ChunkState, chunk_size_for};
use crate::tx::packetizer::PacketBuilder;
use crate::tx::redundancy::{self, PACKET_OVERHEAD};
use crate::tx::retransmission_queue::Resent;
use crate::wire::CommonHeader;
use crate::wire::chunk::{Chunk, Data, DataFlags, IData};

/// A packet written into the caller's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transmit {
    pub destination: SocketAddr,
    /// Bytes of the packet, at the end of the buffer.
    pub size: usize,
}

impl Association {
    /// Writes the next packet to `buf` (appending), if there is one to send.
    pub(crate) fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<Transmit> {
        let start = buf.len();
        let to = self.next_destination(now);
        let size = self.build_packet(now, buf, to);
        match size {
            Some(size) if size > 0 => {
                self.counters.packets_sent += 1;
                Some(Transmit {
                    destination: self.paths.get(to).remote,
                    size,
                })
            }
            _ => {
                buf.truncate(start);
                None
            }
        }
    }

    fn header(&self, tag: u32) -> CommonHeader {
        CommonHeader {
            src_port: self.local_port,
            dst_port: self.peer_port,
            verification_tag: tag,
            checksum: 0,
        }
    }

    /// Where the next packet goes (6.4): the first control chunk's
    /// destination, or where a due SACK goes (the source of the DATA it
    /// acknowledges), or where the first chunk marked for retransmission
    /// goes, or the data path.
    fn next_destination(&self, now: Time) -> PathId {
        if let Some(to) = self.control.front().and_then(|c| c.to) {
            return to;
        }
        let receiving = !matches!(
            self.state,
            State::CookieWait | State::CookieEchoed | State::Closed
        );
        if receiving && receive::sack_due(self, now) {
            return self.paths.reply_id();
        }
        if let Some(chunk) = self.rtx.next_marked() {
            return self.resend_destination(chunk.path, chunk.state);
        }
        self.paths.data_id()
    }

    /// 6.4: a chunk that timed out goes to another usable destination when
    /// there is one; a fast retransmission (and every other) to the one it
    /// went to, unless data has left that one (RFC 7829 3.2 rule 3).
    fn resend_destination(&self, last: PathId, state: ChunkState) -> PathId {
        match state {
            ChunkState::Marked(RetransmitCause::T3Timeout) => self.paths.retransmit_to(last),
            _ if self.paths.get(last).usable() => last,
            _ => self.paths.data_id(),
        }
    }

    fn build_packet(&mut self, now: Time, buf: &mut Vec<u8>, to: PathId) -> Option<usize> {
        if self.pr_sctp
            && matches!(
                self.state,
                State::Established | State::ShutdownPending | State::ShutdownReceived
            )
        {
            self.abandon_and_forward(now);
        }
        // RFC 6525 5.1.1: the next stream reconfiguration request, if due.
        super::reconfig::poll_request(self, now);
        let mtu = self.paths.get(to).mtu;
        // A chunk with its own verification tag, or one that must be alone
        // (INIT, INIT ACK, SHUTDOWN COMPLETE: 6.10), goes in a packet of its own.
        // So does a control chunk larger than the MTU (a COOKIE ECHO on a tiny
        // MTU): it goes out oversized, for IP to fragment, rather than never.
        if let Some(front) = self.control.front()
            && (front.is_alone() || front.chunk.encoded_len() + 12 > mtu)
        {
            let control = self.control.pop_front()?;
            let tag = control.vtag.unwrap_or(self.peer_tag);
            let mut p = PacketBuilder::new(
                buf,
                &self.header(tag),
                mtu.max(control.chunk.encoded_len() + 12),
            );
            p.push(&control.chunk).ok()?;
            return p.finish().ok();
        }
        let mut p = PacketBuilder::new(buf, &self.header(self.peer_tag), mtu);
        // 5.1: COOKIE ECHO and COOKIE ACK lead their packet.
        if self
            .control
            .front()
            .is_some_and(|c| !c.is_alone() && c.chunk.must_lead())
        {
            self.push_control(&mut p);
        }
        if self.state == State::Closed {
            self.push_controls(&mut p, to);
            return if p.is_empty() { None } else { p.finish().ok() };
        }
        // RFC 9260 5.4: an unconfirmed address gets its HEARTBEATs alone,
        // nothing addressed to whichever destination (a FORWARD TSN, an ERROR).
        let confirmed = self.paths.get(to).confirmed;
        // Be conservative in what you send: a FORWARD TSN goes last in a
        // packet without DATA. Some receivers drop a packet with any chunk
        // after a FORWARD TSN (a Rust WebRTC stack); usrsctp aborts an
        // association whose packet has any control chunk after DATA
        // ("DATA chunk followed by chunk of type c0"). The DATA goes in the
        // next packet.
        let forward = if confirmed {
            self.take_forward_tsn()
        } else {
            None
        };
        let forward_len = forward.as_ref().map_or(0, |c| c.chunk.encoded_len());
        let reserved = forward.is_some() && p.reserve(forward_len);
        let data_allowed = forward.is_none()
            && matches!(
                self.state,
                State::Established | State::ShutdownPending | State::ShutdownReceived
            );
        let data_ready = data_allowed && self.has_data_to_send(to);
        // A SACK is owed in every state after the handshake, SHUTDOWN-RECEIVED
        // and SHUTDOWN-ACK-SENT included (9.2: DATA that came before the
        // SHUTDOWN is still acknowledged).
        let receiving = !matches!(self.state, State::CookieWait | State::CookieEchoed);
        if receiving
            && to == self.paths.reply_id()
            && (receive::sack_due(self, now) || (data_ready && receive::sack_pending(self)))
        {
            // Right after the leading chunks, so it always fits: a due SACK is
            // never dropped (6.2), and an ERROR bundled with it follows it (6.5).
            let sack = Chunk::Sack(receive::make_sack(self, p.room()));
            if p.push(&sack).is_err() {
                self.counters.malformed_chunks += 1;
            }
        }
        self.push_controls(&mut p, to);
        if data_ready {
            self.add_data(now, &mut p, to);
        }
        if let Some(forward) = forward {
            p.release(forward_len);
            self.push_forward_tsn_last(&mut p, forward, reserved);
        }
        if p.is_empty() {
            return None;
        }
        p.finish().ok()
    }

    /// Takes the FORWARD TSN or I-FORWARD-TSN waiting among the control
    /// chunks (there is at most one), for [`Self::push_forward_tsn_last`].
    fn take_forward_tsn(&mut self) -> Option<Control> {
        let at = self
            .control
            .iter()
            .position(|c| matches!(c.chunk, Chunk::ForwardTsn(_) | Chunk::IForwardTsn(_)))?;
        self.control.remove(at)
    }

    /// Ends the packet with the FORWARD TSN if room was kept for it;
    /// otherwise it leads the next packet's controls, where it goes last again.
    fn push_forward_tsn_last(&mut self, p: &mut PacketBuilder<'_>, forward: Control, fits: bool) {
        if fits && p.push(&forward.chunk).is_ok() {
            self.counters.forward_tsns_sent += 1;
        } else {
            self.control.push_front(forward);
        }
    }

    /// Moves control chunks into the packet while they fit, up to one that
    /// needs a packet of its own, must lead one (5.1, 6.10), or goes to
    /// another destination than `to` (6.4).
    fn push_controls(&mut self, p: &mut PacketBuilder<'_>, to: PathId) {
        let confirmed = self.paths.get(to).confirmed;
        while self.control.front().is_some_and(|c| {
            !c.is_alone()
                && (p.is_empty() || !c.chunk.must_lead())
                && match c.to {
                    Some(t) => t == to,
                    // RFC 9260 5.4: only what is addressed to it goes to an
                    // unconfirmed destination.
                    None => confirmed,
                }
        }) {
            if !self.push_control(p) {
                break;
            }
        }
    }

    /// Moves the next control chunk into the packet if it fits. A chunk too
    /// large for any packet is dropped and counted. Returns false when the
    /// packet is full.
    fn push_control(&mut self, p: &mut PacketBuilder<'_>) -> bool {
        let Some(front) = self.control.front() else {
            return false;
        };
        if !p.fits(front.chunk.encoded_len()) {
            if p.is_empty() {
                // Larger than the MTU on its own: it cannot be sent.
                self.control.pop_front();
                self.counters.malformed_chunks += 1;
                return true;
            }
            return false;
        }
        if let Some(control) = self.control.pop_front() {
            if p.push(&control.chunk).is_err() {
                self.counters.malformed_chunks += 1;
            } else if matches!(control.chunk, Chunk::ForwardTsn(_) | Chunk::IForwardTsn(_)) {
                self.counters.forward_tsns_sent += 1;
            }
        }
        true
    }

    /// Whether DATA could go out now to `to` (retransmissions or new data).
    fn has_data_to_send(&self, to: PathId) -> bool {
        let cwnd_open = self.cwnd_open(to);
        let retransmit = self.rtx.next_marked().is_some_and(|c| {
            self.resend_destination(c.path, c.state) == to
                && (self.rtx.may_bypass_cwnd() || cwnd_open)
        });
        let new = to == self.paths.data_id()
            && !self.send_queue.is_empty()
            && !self.new_data_held()
            && cwnd_open
            && self.burst_budget > 0
            && self
                .rtx
                .window_allows(self.peek_new(self.max_payload()).unwrap_or(0));
        let copy_probe = to == self.paths.data_id() && self.rtx.redundancy().probe_due().is_some();
        retransmit || new || copy_probe
    }

    /// RFC 6525 5.1.4: an SSN/TSN reset holds new messages back (a message
    /// already started finishes: with I-DATA, every one started).
    fn new_data_held(&self) -> bool {
        self.reconfig.holds_new_data() && !self.send_queue.has_started_message()
    }

    /// The payload length of the next fragment of new data that may go:
    /// while an SSN/TSN reset holds new messages, only of a started one.
    fn peek_new(&self, max_payload: usize) -> Option<usize> {
        if self.reconfig.holds_new_data() {
            self.send_queue.peek_started_len(max_payload)
        } else {
            self.send_queue.peek_len(max_payload)
        }
    }

    /// Takes the fragment [`Self::peek_new`] measured.
    fn take_new(&mut self, max_payload: usize) -> Option<crate::tx::send_queue::PendingFragment> {
        if self.reconfig.holds_new_data() {
            self.send_queue.next_started_fragment(max_payload)
        } else {
            self.send_queue.next_fragment(max_payload)
        }
    }

    /// Whether destination `to`'s cwnd lets more DATA go (7.2, per
    /// destination: 6.4).
    fn cwnd_open(&self, to: PathId) -> bool {
        self.paths
            .get(to)
            .cc
            .allows_new_data(self.rtx.outstanding().flight_on(to))
    }

    pub(super) fn max_payload(&self) -> usize {
        self.paths
            .data()
            .mtu
            .saturating_sub(12 + self.data_header_len())
            .max(1)
    }

    /// Bytes of the header of each chunk of user data: DATA's 16, or
    /// I-DATA's 20 once interleaving was negotiated (RFC 8260 2.1).
    fn data_header_len(&self) -> usize {
        if self.send_queue.interleaving() {
            IData::HEADER_LEN
        } else {
            Data::HEADER_LEN
        }
    }

    /// Bytes of the chunk that carries `payload` bytes of new user data.
    fn new_chunk_size(&self, payload: usize) -> usize {
        chunk_size_for(payload, self.send_queue.interleaving()) as usize
    }

    /// The DATA of the packet: retransmissions first (6.1 C), thin-stream
    /// bundling (seed 001 4.4), then new data within cwnd (rule B), the
    /// peer's window (rule A), Max.Burst and Nagle.
    fn add_data(&mut self, now: Time, p: &mut PacketBuilder<'_>, to: PathId) {
        let thin = self.rtx.is_thin(&self.cfg);
        // Thin streams ask a standard receiver for an immediate SACK (I bit),
        // and so does every chunk sent in SHUTDOWN-PENDING (RFC 9260 3.3.1, as
        // usrsctp and Linux do): the SHUTDOWN waits for the SACK of the last
        // chunk, which a delayed SACK would hold back up to SACK.Delay.
        // RACK-TLP: so does a packet after which the sender goes idle
        // (RFC 7053 4.1), and a tail loss probe, new data or not (RFC 8985
        // 7.3): their SACKs must not wait out the peer's delayed SACK.
        let idle_after = self.cfg.rack && self.send_queue.is_empty();
        let immediate = (thin && self.cfg.thin_immediate_sack)
            || self.state == State::ShutdownPending
            || idle_after;
        let mut dp = DataPacket {
            record: None,
            tsns: Vec::new(),
            immediate,
            probe: self.cfg.rack && self.rtx.take_probe_i_bit(),
            to,
        };
        let fast = self.add_retransmissions(now, p, &mut dp);
        // Seed 001 4.4: a thin stream's fast retransmission fills its packet
        // with the earliest outstanding chunks.
        if fast && thin && self.cfg.thin_aggressive_bundling {
            let room = p.room();
            self.bundle_in_flight(now, p, &mut dp, room);
        }
        self.decay_idle_cwnd(now, to);
        if to == self.paths.data_id() {
            self.add_copy_probe(now, p, &mut dp);
            self.add_new_data(now, p, &mut dp, thin);
        }
        if dp.record.is_some() {
            self.rtx.end_packet();
            self.paths.get_mut(to).last_data_sent = Some(now);
        }
    }

    /// 6.1 C: chunks marked for retransmission go first, within cwnd unless
    /// one packet may ignore it (7.2.4). Returns whether a fast or early
    /// retransmission went.
    fn add_retransmissions(
        &mut self,
        now: Time,
        p: &mut PacketBuilder<'_>,
        dp: &mut DataPacket,
    ) -> bool {
        let (mut retransmitted, mut fast) = (false, false);
        let mtu = self.paths.get(dp.to).mtu;
        while let Some(chunk) = self.rtx.next_marked() {
            if self.resend_destination(chunk.path, chunk.state) != dp.to {
                break;
            }
            if !(self.rtx.may_bypass_cwnd() || self.cwnd_open(dp.to)) {
                break;
            }
            let probe =
                self.cfg.rack && chunk.state == ChunkState::Marked(RetransmitCause::TailLossProbe);
            let data = chunk.to_chunk(dp.immediate || probe);
            if !p.fits(data.encoded_len().min(mtu)) || p.push(&data).is_err() {
                break;
            }
            let (tsn, i_bit) = (chunk.tsn, data.flags() & DataFlags::I != 0);
            let seq = *dp.record.get_or_insert_with(|| self.rtx.begin_packet(now));
            let (rtx, mut env) = self.tx_to(dp.to);
            let Some(resent) = rtx.resend(tsn, now, seq, i_bit, &mut env) else {
                continue;
            };
            retransmitted = true;
            dp.tsns.push(tsn);
            fast |= matches!(
                resent.cause,
                RetransmitCause::FastRetransmit | RetransmitCause::EarlyRetransmit
            );
            self.note_retransmission(tsn, resent, now);
        }
        if retransmitted {
            self.rtx.on_retransmissions_sent();
        }
        fast
    }

    /// 7.2.1: a path that sent nothing for RTOs decays its cwnd first.
    fn decay_idle_cwnd(&mut self, now: Time, to: PathId) {
        if self.rtx.outstanding().flight_on(to) == 0
            && self.rtx.outstanding().is_empty()
            && let Some(last) = self.paths.get(to).last_data_sent
        {
            let path = self.paths.get_mut(to);
            let rto = path.rto.rto().as_micros().max(1);
            let idle = u32::try_from(now.since(last).as_micros() / rto).unwrap_or(u32::MAX);
            if idle > 0 && !self.send_queue.is_empty() {
                path.cc.on_idle(idle);
            }
        }
    }

    /// Nagle for messages: hold a less-than-full packet of new data (classic,
    /// or Minshall's rule).
    fn nagle_holds(&self, p: &PacketBuilder<'_>) -> bool {
        let would_fill = self.send_queue.buffered_bytes()
            + (self.data_header_len() + 3) * self.send_queue.len()
            >= p.room();
        self.state == State::Established
            && !self.send_queue.is_mid_message()
            && nagle::hold(
                self.cfg.nagle,
                would_fill,
                !self.rtx.outstanding().is_empty(),
                self.rtx.small_packet_unacked(),
            )
    }

    /// New DATA, within cwnd, the peer's window and Max.Burst, with seed 001
    /// 4.4's redundant bundling in front of it.
    fn add_new_data(
        &mut self,
        now: Time,
        p: &mut PacketBuilder<'_>,
        dp: &mut DataPacket,
        thin: bool,
    ) {
        let max_payload = self.max_payload();
        let to = dp.to;
        let cwnd_open = |a: &Self| a.cwnd_open(to);
        let next_new = self.peek_new(max_payload).filter(|len| {
            !self.new_data_held()
                && self.burst_budget > 0
                && cwnd_open(self)
                && self.rtx.window_allows(*len)
                && p.fits(self.new_chunk_size(*len))
        });
        let held = self.nagle_holds(p);
        // Seed 001 4.4: redundant bundling: unacknowledged chunks ride in
        // front of the new data when the packet has room for them.
        if let Some(len) = next_new
            && !held
            && thin
            && self.cfg.thin_redundant_bundling
        {
            let room = p.room().saturating_sub(self.new_chunk_size(len));
            self.bundle_in_flight(now, p, dp, room);
        }
        // Redundancy within a byte budget (`tx::redundancy`, Linux RDB) for
        // the streams the thin rule above does not cover. The packet's
        // header and first new chunk earn their share before the copies.
        let budgeted = next_new.filter(|_| !held && self.cfg.redundancy_budget > 100);
        let mut earned = 0;
        if let Some(len) = budgeted {
            earned = PACKET_OVERHEAD + self.new_chunk_size(len) as u32;
            self.rtx.redundancy_mut().on_new_packet(now);
            self.rtx.earn_redundancy(&self.cfg, earned);
            if !(thin && self.cfg.thin_redundant_bundling) {
                self.copy_within_budget(now, p, dp);
            }
        }
        let mut sent_new = None;
        let mut new_bytes = 0u32;
        while next_new.is_some() && !held && self.burst_budget > 0 && cwnd_open(self) {
            let Some(len) = self.peek_new(max_payload) else {
                break;
            };
            if !p.fits(self.new_chunk_size(len)) || !self.rtx.window_allows(len) {
                break;
            }
            let Some(mut frag) = self.take_new(max_payload) else {
                break;
            };
            // RACK-TLP: the last chunk before the queue runs dry asks for
            // an immediate SACK (RFC 7053 4.1), as does a probe's.
            frag.flags.immediate |=
                dp.immediate || dp.probe || (self.cfg.rack && self.send_queue.is_empty());
            let data = frag.to_chunk(self.rtx.outstanding().next_tsn(), false);
            if p.push(&data).is_err() {
                self.counters.malformed_chunks += 1;
                break;
            }
            let seq = *dp.record.get_or_insert_with(|| self.rtx.begin_packet(now));
            new_bytes = new_bytes.saturating_add(frag.chunk_size());
            let (rtx, mut env) = self.tx_to(dp.to);
            sent_new = Some(rtx.send_new(frag, now, seq, &mut env));
        }
        if budgeted.is_some()
            && let Some(last_tsn) = sent_new
        {
            // The rest of the packet's new data earns its share too.
            let rest = (new_bytes + PACKET_OVERHEAD).saturating_sub(earned);
            self.rtx.earn_redundancy(&self.cfg, rest);
            if self.cfg.redundancy_copy_probe {
                self.arm_copy_probe(now, last_tsn, to);
            }
        }
        if let Some(last_tsn) = sent_new {
            self.burst_budget = self.burst_budget.saturating_sub(1);
            // Full: no room for even a 1-byte chunk, or the next chunk does not fit.
            let full = !p.fits(self.new_chunk_size(1))
                || self
                    .peek_new(max_payload)
                    .is_some_and(|len| !p.fits(self.new_chunk_size(len)));
            let (rtx, mut env) = self.tx_to(dp.to);
            rtx.on_new_data_packet(now, last_tsn, full, &mut env);
        }
        // RFC 8260 3.3: the packet's new data is complete; round robin per
        // packet may turn to another stream in the next (a no-op otherwise).
        self.send_queue.on_packet_end();
    }

    /// Adds chunks still in flight (earliest first, not already in this packet)
    /// while they fit in `room` bytes: thin-stream bundling, cause `Bundled`.
    fn bundle_in_flight(
        &mut self,
        now: Time,
        p: &mut PacketBuilder<'_>,
        dp: &mut DataPacket,
        mut room: usize,
    ) {
        let candidates: Vec<Tsn> = self
            .rtx
            .outstanding()
            .chunks()
            .filter(|c| c.state == ChunkState::InFlight && !dp.tsns.contains(&c.tsn))
            .map(|c| c.tsn)
            .collect();
        for tsn in candidates {
            let Some(chunk) = self.rtx.outstanding().get(tsn) else {
                continue;
            };
            let size = chunk.size() as usize;
            if size > room {
                break;
            }
            let data = chunk.to_chunk(dp.immediate);
            let i_bit = data.flags() & DataFlags::I != 0;
            if p.push(&data).is_err() {
                break;
            }
            let seq = *dp.record.get_or_insert_with(|| self.rtx.begin_packet(now));
            let (rtx, mut env) = self.tx_to(dp.to);
            if let Some(resent) = rtx.bundle(tsn, now, seq, i_bit, &mut env) {
                room -= size;
                dp.tsns.push(tsn);
                self.note_retransmission(tsn, resent, now);
            }
        }
    }

    /// Redundancy within a byte budget (`tx::redundancy`): while the trigger
    /// holds (RDB's DPIFL and the stream's ITT) and the sender is
    /// application-limited (all it has queued goes in this packet, within
    /// cwnd: RFC 7661's notion; a bulk sender never is), copies of chunks in
    /// flight go in front of the new data, in the room the new data leaves,
    /// as far as the budget pays, cause `Bundled`.
    fn copy_within_budget(&mut self, now: Time, p: &mut PacketBuilder<'_>, dp: &mut DataPacket) {
        let queued =
            self.send_queue.buffered_bytes() + (self.data_header_len() + 3) * self.send_queue.len();
        let to = dp.to;
        let flight = self.rtx.outstanding().flight_on(to) as usize;
        let cwnd_takes_all = self
            .paths
            .get(to)
            .cc
            .allows_new_data(u32::try_from(flight + queued).unwrap_or(u32::MAX));
        let app_limited = queued <= p.room() && cwnd_takes_all;
        let packets = self.rtx.outstanding().packets_outstanding();
        if !app_limited || !self.rtx.redundancy().triggered(&self.cfg, packets) {
            return;
        }
        let room = p.room() - queued;
        let redundancy = self.rtx.redundancy();
        let picked = redundancy::pick(self.rtx.outstanding(), &dp.tsns, room, |bytes| {
            redundancy.affords(bytes)
        });
        for tsn in picked {
            let Some(chunk) = self.rtx.outstanding().get(tsn) else {
                continue;
            };
            let data = chunk.to_chunk(dp.immediate);
            let i_bit = data.flags() & DataFlags::I != 0;
            if !p.fits(data.encoded_len()) || p.push(&data).is_err() {
                break;
            }
            let seq = *dp.record.get_or_insert_with(|| self.rtx.begin_packet(now));
            if let Some(resent) = self.rtx.copy(tsn, now, seq, i_bit, true) {
                dp.tsns.push(tsn);
                self.note_retransmission(tsn, resent, now);
            }
        }
    }

    /// The copy probe (`redundancy_copy_probe`), armed by a packet of new
    /// data whose newest chunk is too large to share a packet with another
    /// as large, so that no later packet of the stream can carry its copy:
    /// while the trigger holds and the send queue is empty (the next message
    /// has not come), a copy goes in a packet of its own, as many as the
    /// loss rate wants, spread evenly over the ITT. Any other packet of new
    /// data disarms it.
    fn arm_copy_probe(&mut self, now: Time, last_tsn: Tsn, to: PathId) {
        let mtu = self.paths.get(to).mtu;
        let large = self
            .rtx
            .outstanding()
            .get(last_tsn)
            .is_some_and(|c| 12 + 2 * c.size() as usize > mtu);
        self.arm_copy_probe_for(now, large.then_some(last_tsn));
    }

    /// Arms the copy probe for `tsn` if the trigger holds and the send queue
    /// is empty; disarms it otherwise.
    fn arm_copy_probe_for(&mut self, now: Time, tsn: Option<Tsn>) {
        let packets = self.rtx.outstanding().packets_outstanding();
        let redundancy = self.rtx.redundancy();
        let arm = tsn.is_some()
            && self.send_queue.is_empty()
            && redundancy.active(&self.cfg)
            && redundancy.triggered(&self.cfg, packets);
        let delay = redundancy.probe_delay(&self.cfg).filter(|_| arm);
        match (delay, tsn) {
            (Some(delay), Some(tsn)) => {
                self.rtx.redundancy_mut().arm_probe(Some(tsn));
                self.timers.start(TimerKind::CopyProbe, now, delay);
            }
            _ => {
                self.rtx.redundancy_mut().arm_probe(None);
                self.timers.stop(TimerKind::CopyProbe);
            }
        }
    }

    /// The copy probe fired: its chunk goes again in this packet (cause
    /// `Bundled`) if it is still in flight, has fewer copies than the loss
    /// rate wants, and the budget pays for the chunk and a packet's headers;
    /// then the probe is armed for the next copy. Like every copy it stays
    /// out of the flight size: RFC 9260 6.1 B counts the chunk once, and the
    /// budget bounds what the copies add.
    fn add_copy_probe(&mut self, now: Time, p: &mut PacketBuilder<'_>, dp: &mut DataPacket) {
        let Some(tsn) = self.rtx.redundancy_mut().take_probe_due() else {
            return;
        };
        let Some(chunk) = self.rtx.outstanding().get(tsn) else {
            return;
        };
        let size = chunk.size();
        let wanted = self.rtx.redundancy().copies_wanted(&self.cfg);
        let eligible = chunk.state == ChunkState::InFlight
            && chunk.copies < wanted
            && !dp.tsns.contains(&tsn)
            && self.rtx.redundancy().affords(size + PACKET_OVERHEAD);
        let data = chunk.to_chunk(dp.immediate);
        let i_bit = data.flags() & DataFlags::I != 0;
        if !eligible || !p.fits(data.encoded_len()) || p.push(&data).is_err() {
            return;
        }
        let seq = *dp.record.get_or_insert_with(|| self.rtx.begin_packet(now));
        if let Some(resent) = self.rtx.copy(tsn, now, seq, i_bit, false) {
            // Its own packet's headers are part of its cost.
            self.rtx.redundancy_mut().spend(PACKET_OVERHEAD);
            dp.tsns.push(tsn);
            self.note_retransmission(tsn, resent, now);
            let more = self
                .rtx
                .outstanding()
                .get(tsn)
                .is_some_and(|c| c.copies < wanted);
            self.arm_copy_probe_for(now, more.then_some(tsn));
        }
    }

    /// Reports a retransmission to the lab (the queue counted it).
    fn note_retransmission(&mut self, tsn: Tsn, resent: Resent, now: Time) {
        if self.cfg.events {
            self.emit(Event::Retransmission {
                tsn: tsn.0,
                cause: resent.cause,
                at: now,
                first_sent_at: resent.first_sent,
                transmissions: resent.transmissions,
            });
        }
    }
}

/// The DATA of the packet being assembled.
struct DataPacket {
    /// Its packet record, opened by its first DATA chunk.
    record: Option<u64>,
    /// The TSNs it carries already.
    tsns: Vec<Tsn>,
    /// Its chunks carry the I bit.
    immediate: bool,
    /// It is a tail loss probe of new data (RACK-TLP): its new chunks carry
    /// the I bit.
    probe: bool,
    /// Its destination.
    to: PathId,
}
