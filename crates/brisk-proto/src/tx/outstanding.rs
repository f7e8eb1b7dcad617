//! DATA chunks sent and not yet cumulatively acknowledged, and the packet
//! records that the latency mechanisms reason about.
//!
//! Chunks are kept in TSN order in a ring indexed by `tsn - (cum_ack_point + 1)`:
//! TSNs are assigned consecutively and leave only through the cumulative ack.
//! Each transmission of DATA forms a **packet record** (which chunks left in
//! which packet, when). A record is outstanding while one of its chunks is
//! still in flight in it; a retransmission moves the chunk into a new record.

use std::collections::VecDeque;
use std::time::Duration;

use crate::events::RetransmitCause;
use crate::message::MessageId;
use crate::message::Reliability;
use crate::path::{MAX_PATHS, PathId};
use crate::recovery::rack::Delivered;
use crate::serial::{Ssn, StreamId, Tsn};
use crate::time::Time;
use crate::tx::send_queue::PendingFragment;
use crate::wire::chunk::{Chunk, Data, IData, PpidOrFsn, Sack};
use crate::wire::padded;

/// Where a sent chunk stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkState {
    /// Sent and not acknowledged: counts in the flight size.
    InFlight,
    /// Reported in a gap ack block; may still be reneged.
    GapAcked,
    /// Marked for retransmission; out of the flight until sent again.
    Marked(RetransmitCause),
    /// Abandoned (RFC 3758 3.5): never sent again; out of the flight until
    /// the peer's cumulative ack passes it after a FORWARD TSN.
    Abandoned,
}

/// A DATA chunk that has been sent at least once.
#[derive(Debug, Clone)]
pub struct SentChunk {
    pub tsn: Tsn,
    /// What the send queue cut from the message: stream, SSN, PPID, flags,
    /// payload and when the application queued it.
    pub frag: PendingFragment,
    /// When the message's first fragment was first sent.
    pub msg_first_sent: Time,
    pub first_sent: Time,
    pub last_sent: Time,
    pub transmissions: u32,
    /// Of those, the copies sent for redundancy or as a probe, not to
    /// recover a loss (`Bundled`, `TailLossProbe`): they do not count
    /// against a message's retransmission limit (RFC 7496 4).
    pub copies: u32,
    pub state: ChunkState,
    /// Miss indications since the chunk was last sent (RFC 9260 7.2.4).
    pub misses: u32,
    /// Already fast-retransmitted once: not eligible again (7.2.4).
    pub fast_retransmitted: bool,
    /// Its latest transmission carried the I bit (RFC 7053).
    pub immediate: bool,
    /// Its message was abandoned (RFC 3758): should the peer renege on it
    /// after a gap ack, it is abandoned, not sent again.
    pub message_abandoned: bool,
    /// Sequence number of the packet record of its latest transmission as
    /// new or retransmitted data (a redundant copy does not move it).
    packet: u64,
    /// The destination of its latest transmission (RFC 9260 6.4).
    pub path: PathId,
    /// Every destination it was sent to, a bit each: its acknowledgement
    /// proves a destination only if that one carried every copy (8.2).
    sent_on: u32,
}

impl SentChunk {
    /// Bytes the chunk occupies on the wire: header, payload and padding.
    pub fn size(&self) -> u32 {
        self.frag.chunk_size()
    }

    /// RFC 3758 3.5 C: whether the Advanced.Peer.Ack.Point may pass the
    /// chunk: abandoned, or of an abandoned message and gap-acked since (the
    /// peer has it; were it a stop, the point would move back).
    pub fn skipped_by_forward_tsn(&self) -> bool {
        self.state == ChunkState::Abandoned
            || (self.state == ChunkState::GapAcked && self.message_abandoned)
    }

    /// The transmissions that count against a retransmission limit (RFC
    /// 7496 4, RFC 3758 3.5 A): the first and those made to recover a loss.
    pub fn counted_transmissions(&self) -> u32 {
        self.transmissions.saturating_sub(self.copies)
    }

    /// The chunk as it goes on the wire, DATA or I-DATA, with the I bit
    /// also set if `immediate`.
    pub fn to_chunk(&self, immediate: bool) -> Chunk<'_> {
        self.frag.to_chunk(self.tsn, immediate)
    }
}

impl PendingFragment {
    /// Bytes its chunk occupies on the wire: header, payload and padding.
    pub fn chunk_size(&self) -> u32 {
        chunk_size_for(self.payload.len(), self.idata)
    }

    /// The chunk that carries it with `tsn`: DATA (RFC 9260 3.3.1) or I-DATA
    /// (RFC 8260 2.1), with the I bit also set if `immediate`.
    pub fn to_chunk(&self, tsn: Tsn, immediate: bool) -> Chunk<'_> {
        let mut flags = self.flags;
        flags.immediate |= immediate;
        if self.idata {
            Chunk::IData(IData {
                flags,
                tsn: tsn.0,
                stream_id: self.stream_id.0,
                mid: self.mid,
                // RFC 8260 2.1: the first fragment carries the PPID, the
                // others their FSN.
                ppid_or_fsn: if flags.beginning {
                    PpidOrFsn::Ppid(self.ppid)
                } else {
                    PpidOrFsn::Fsn(self.fsn)
                },
                payload: self.payload[..].into(),
            })
        } else {
            Chunk::Data(Data {
                flags,
                tsn: tsn.0,
                stream_id: self.stream_id.0,
                ssn: self.ssn.0,
                ppid: self.ppid,
                payload: self.payload[..].into(),
            })
        }
    }
}

/// What each DATA chunk in flight takes of the peer's receive window beyond its
/// bytes: receivers charge bookkeeping per held chunk (Brisk's `rx::window`
/// and usrsctp charge 256 bytes, and usrsctp's sender counts the same), so a
/// sender that counted bytes alone would overrun a window full of small chunks.
pub const PEER_CHUNK_OVERHEAD: u32 = 256;

/// What a chunk of `size` bytes takes of the peer's window.
pub fn window_cost(size: u32) -> u32 {
    size.saturating_add(PEER_CHUNK_OVERHEAD)
}

/// Bytes of a DATA chunk with `payload` bytes of user data, padding included.
pub fn chunk_size(payload: usize) -> u32 {
    chunk_size_for(payload, false)
}

/// Bytes of a DATA (or, if `idata`, I-DATA: RFC 8260 2.1, a 20-byte header)
/// chunk with `payload` bytes of user data, padding included.
pub fn chunk_size_for(payload: usize, idata: bool) -> u32 {
    let header = if idata {
        IData::HEADER_LEN
    } else {
        Data::HEADER_LEN
    };
    u32::try_from(padded(header + payload)).unwrap_or(u32::MAX)
}

/// One SCTP packet that carried DATA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketRecord {
    pub seq: u64,
    pub sent_at: Time,
    /// Chunks of this packet still in flight in it.
    pub in_flight: u32,
    /// Highest TSN the packet carried.
    pub highest_tsn: Tsn,
}

/// A message whose every fragment is now cumulatively acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckedMessage {
    pub id: MessageId,
    pub queued_at: Time,
    pub first_sent_at: Time,
}

/// What one SACK did to the outstanding data.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SackOutcome {
    /// The cumulative TSN ack point moved forward.
    pub cum_advanced: bool,
    /// Bytes of chunks acknowledged for the first time (cumulatively or by gap).
    pub bytes_acked: u32,
    /// Highest TSN newly acknowledged (RFC 9260 7.2.4 HTNA).
    pub htna: Option<Tsn>,
    /// When the HTNA chunk was last sent: only chunks sent before it can be
    /// reported missing by this SACK.
    pub htna_sent: Option<Time>,
    /// The HTNA chunk was sent exactly once, so `htna_sent` is the send time
    /// of the copy that drew this SACK (Karn's ambiguity, RFC 6298 3: with
    /// several copies, an earlier one may have).
    pub htna_sent_once: bool,
    /// The earliest outstanding TSN was acknowledged (6.3.2 R3).
    pub earliest_acked: bool,
    /// A chunk previously gap-acked is missing from this SACK (reneging).
    pub reneged: bool,
    /// An RTT measurement taken from this SACK (6.3.1 C4, C5), and the
    /// destination it measures.
    pub rtt: Option<Duration>,
    pub rtt_path: PathId,
    /// The destinations that carried every copy of a newly acknowledged
    /// chunk, a bit each: their error counters clear (RFC 9260 8.2).
    pub acked_paths: u32,
    /// Messages now fully acknowledged.
    pub acked_messages: Vec<AckedMessage>,
    /// Every chunk acknowledged for the first time, as its latest
    /// transmission left (RACK, RFC 8985 6.2).
    pub delivered: Vec<Delivered>,
}

/// Why a SACK was not applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SackRejected {
    /// Cumulative TSN Ack below the ack point: an old SACK arriving late (6.2.1).
    Stale,
    /// Cumulative TSN Ack or a gap block beyond anything sent: a protocol
    /// violation (RFC 9260 15: the association is aborted).
    AcksUnsentTsn,
}

/// What is in flight: bytes and chunks in all, and bytes per destination.
#[derive(Debug, Clone, Default)]
struct Flight {
    bytes: u32,
    chunks: u32,
    by_path: [u32; MAX_PATHS],
}

impl Flight {
    fn add(&mut self, path: PathId, size: u32) {
        self.bytes += size;
        self.chunks += 1;
        if let Some(b) = self.by_path.get_mut(path.index()) {
            *b += size;
        }
    }

    fn sub(&mut self, path: PathId, size: u32) {
        self.bytes -= size;
        self.chunks -= 1;
        if let Some(b) = self.by_path.get_mut(path.index()) {
            *b -= size;
        }
    }

    fn on(&self, path: PathId) -> u32 {
        self.by_path.get(path.index()).copied().unwrap_or(0)
    }
}

/// The sent-but-not-cumulatively-acked DATA of an association.
#[derive(Debug, Clone)]
pub struct Outstanding {
    chunks: VecDeque<SentChunk>,
    cum_ack_point: Tsn,
    next_tsn: Tsn,
    /// Bytes and chunks in flight, in all and per destination.
    flight: Flight,
    /// Payload bytes of every chunk held, acknowledged by gap or not.
    payload_bytes: usize,
    marked: usize,
    gap_acked: usize,
    abandoned: usize,
    /// Chunks held under a partial-reliability policy (RFC 7496): while
    /// none is, nothing can be abandoned and nothing is searched.
    policed: usize,
    packets: VecDeque<PacketRecord>,
    packets_outstanding: u32,
    next_packet_seq: u64,
    /// The chunk timed for an RTT measurement: one per round trip (C5), never
    /// a retransmitted one (Karn, C5).
    rtt_probe: Option<(Tsn, Time, PathId)>,
    /// Chunks sent once and never copied that were marked lost, since the
    /// association began (`tx::loss_rate`); a T3 expiry counts one.
    originals_lost: u64,
}

impl Outstanding {
    /// `initial_tsn` is the TSN our first DATA chunk will carry.
    pub fn new(initial_tsn: Tsn) -> Self {
        Self {
            chunks: VecDeque::new(),
            cum_ack_point: initial_tsn.prev(),
            next_tsn: initial_tsn,
            flight: Flight::default(),
            payload_bytes: 0,
            marked: 0,
            gap_acked: 0,
            abandoned: 0,
            policed: 0,
            packets: VecDeque::new(),
            packets_outstanding: 0,
            next_packet_seq: 0,
            rtt_probe: None,
            originals_lost: 0,
        }
    }

    /// Chunks sent once and never copied that were marked lost, a T3 expiry
    /// counting one (`tx::loss_rate`).
    pub fn originals_lost(&self) -> u64 {
        self.originals_lost
    }

    pub fn cum_ack_point(&self) -> Tsn {
        self.cum_ack_point
    }

    pub fn next_tsn(&self) -> Tsn {
        self.next_tsn
    }

    /// Bytes of DATA in flight.
    pub fn flight_size(&self) -> u32 {
        self.flight.bytes
    }

    /// Bytes of DATA in flight to one destination (RFC 9260 6.4: each
    /// destination's outstanding count, against its own cwnd).
    pub fn flight_on(&self, path: PathId) -> u32 {
        self.flight.on(path)
    }

    /// What the chunks in flight take of the peer's window: their bytes plus
    /// [`PEER_CHUNK_OVERHEAD`] each (6.2.1 with the receiver's bookkeeping).
    pub fn window_flight(&self) -> u32 {
        self.flight
            .bytes
            .saturating_add(self.flight.chunks.saturating_mul(PEER_CHUNK_OVERHEAD))
    }

    /// Chunks sent and not cumulatively acknowledged.
    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// Chunks marked for retransmission and not yet resent.
    pub fn marked(&self) -> usize {
        self.marked
    }

    /// Packet records with a chunk still in flight.
    pub fn packets_outstanding(&self) -> u32 {
        self.packets_outstanding
    }

    /// Outstanding packet records, oldest first.
    pub fn packet_records(&self) -> impl Iterator<Item = &PacketRecord> {
        self.packets.iter().filter(|p| p.in_flight > 0)
    }

    pub fn chunks(&self) -> impl Iterator<Item = &SentChunk> {
        self.chunks.iter()
    }

    /// The chunks, highest TSN first (bounded scans of the most recent).
    pub fn chunks_newest_first(&self) -> impl Iterator<Item = &SentChunk> {
        self.chunks.iter().rev()
    }

    pub fn get(&self, tsn: Tsn) -> Option<&SentChunk> {
        self.index(tsn).and_then(|i| self.chunks.get(i))
    }

    fn index(&self, tsn: Tsn) -> Option<usize> {
        let offset = tsn.since(self.cum_ack_point.next());
        let i = usize::try_from(offset).ok()?;
        (i < self.chunks.len()).then_some(i)
    }

    /// The earliest chunk not yet acknowledged in any way.
    pub fn earliest_unacked(&self) -> Option<&SentChunk> {
        self.chunks.iter().find(|c| c.state != ChunkState::GapAcked)
    }

    /// Opens a packet record for DATA leaving now; pass its sequence number to
    /// [`send_new`](Self::send_new) and [`resend`](Self::resend).
    pub fn begin_packet(&mut self, now: Time) -> u64 {
        let seq = self.next_packet_seq;
        self.next_packet_seq += 1;
        self.packets.push_back(PacketRecord {
            seq,
            sent_at: now,
            in_flight: 0,
            highest_tsn: self.cum_ack_point,
        });
        seq
    }

    /// Drops empty records at the front once a packet is complete.
    pub fn end_packet(&mut self) {
        self.trim_packets();
    }

    fn record_mut(&mut self, seq: u64) -> Option<&mut PacketRecord> {
        let base = self.packets.front()?.seq;
        let i = usize::try_from(seq.checked_sub(base)?).ok()?;
        self.packets.get_mut(i)
    }

    fn join_packet(&mut self, seq: u64, tsn: Tsn) {
        let Some(rec) = self.record_mut(seq) else {
            return;
        };
        let opened = rec.in_flight == 0;
        rec.in_flight += 1;
        if rec.highest_tsn.is_before(tsn) {
            rec.highest_tsn = tsn;
        }
        if opened {
            self.packets_outstanding += 1;
        }
    }

    fn leave_packet(&mut self, seq: u64) {
        let Some(rec) = self.record_mut(seq) else {
            return;
        };
        if rec.in_flight == 0 {
            return;
        }
        rec.in_flight -= 1;
        if rec.in_flight == 0 {
            self.packets_outstanding -= 1;
        }
    }

    fn trim_packets(&mut self) {
        while self.packets.front().is_some_and(|p| p.in_flight == 0) {
            self.packets.pop_front();
        }
    }

    /// Assigns the next TSN to a fragment sent for the first time.
    pub fn send_new(&mut self, frag: PendingFragment, now: Time, packet: u64, path: PathId) -> Tsn {
        let tsn = self.next_tsn;
        self.next_tsn = tsn.next();
        let msg_first_sent = if frag.flags.beginning {
            now
        } else {
            // Fragments of one message have consecutive TSNs (RFC 9260 6.9);
            // with I-DATA they interleave with other streams' (RFC 8260).
            let mut earlier = self.chunks.iter().rev();
            let prev = if frag.idata {
                earlier.find(|prev| prev.frag.msg == frag.msg)
            } else {
                earlier.next().filter(|prev| prev.frag.msg == frag.msg)
            };
            prev.map_or(now, |prev| prev.msg_first_sent)
        };
        let immediate = frag.flags.immediate;
        let chunk = SentChunk {
            tsn,
            frag,
            msg_first_sent,
            first_sent: now,
            last_sent: now,
            transmissions: 1,
            copies: 0,
            state: ChunkState::InFlight,
            misses: 0,
            fast_retransmitted: false,
            immediate,
            message_abandoned: false,
            packet,
            path,
            sent_on: 1 << path.index(),
        };
        self.flight.add(path, chunk.size());
        self.payload_bytes += chunk.frag.payload.len();
        self.policed += usize::from(is_policed(&chunk));
        self.chunks.push_back(chunk);
        self.join_packet(packet, tsn);
        if self.rtt_probe.is_none() {
            self.rtt_probe = Some((tsn, now, path));
        }
        tsn
    }

    /// Records whether the chunk's latest transmission carried the I bit.
    pub fn note_i_bit(&mut self, tsn: Tsn, immediate: bool) {
        if let Some(i) = self.index(tsn) {
            self.chunks[i].immediate = immediate;
        }
    }

    /// The lowest TSN marked for retransmission.
    pub fn next_marked(&self) -> Option<&SentChunk> {
        if self.marked == 0 {
            return None;
        }
        self.chunks
            .iter()
            .find(|c| matches!(c.state, ChunkState::Marked(_)))
    }

    /// Sends a marked chunk again; returns its cause. Karn: a TSN at or below
    /// the RTT probe being retransmitted spoils the probe (6.3.1 C5).
    pub fn resend(
        &mut self,
        tsn: Tsn,
        now: Time,
        packet: u64,
        path: PathId,
    ) -> Option<RetransmitCause> {
        let i = self.index(tsn)?;
        let chunk = &mut self.chunks[i];
        let ChunkState::Marked(cause) = chunk.state else {
            return None;
        };
        chunk.state = ChunkState::InFlight;
        chunk.transmissions += 1;
        chunk.copies += u32::from(cause == RetransmitCause::TailLossProbe);
        chunk.last_sent = now;
        chunk.misses = 0;
        chunk.packet = packet;
        // 6.4: resent to another destination, it counts against that one.
        chunk.path = path;
        chunk.sent_on |= 1 << path.index();
        let size = chunk.size();
        self.marked -= 1;
        self.flight.add(path, size);
        self.join_packet(packet, tsn);
        if self
            .rtt_probe
            .is_some_and(|(probe, _, _)| tsn.is_at_or_before(probe))
        {
            self.rtt_probe = None;
        }
        Some(cause)
    }

    /// Sends a chunk that is still in flight again, in packet `packet` (thin
    /// streams' redundant and aggressive bundling, seed 001 4.4). Its flight
    /// bytes stay counted once, and it stays in the record of the packet that
    /// last carried it on its own: the earlier packet is still in the network,
    /// so a copy does not make the stream look thinner than it is.
    ///
    /// `spoils_probe`: Karn (6.3.1 C5) for a copy of a chunk at or before the
    /// RTT probe. A budgeted redundant copy (`tx::redundancy`) passes false:
    /// it leaves while the original is still in flight, so the probe's sample,
    /// timed from the original, can only be too long by the copy's lag,
    /// never too short; spoiled, a stream that copies every chunk within an
    /// ITT would never measure its RTT again.
    pub fn rebundle(&mut self, tsn: Tsn, now: Time, packet: u64, spoils_probe: bool) -> bool {
        let Some(i) = self.index(tsn) else {
            return false;
        };
        let chunk = &mut self.chunks[i];
        if chunk.state != ChunkState::InFlight || chunk.packet == packet {
            return false;
        }
        chunk.transmissions += 1;
        chunk.copies += 1;
        chunk.last_sent = now;
        // Karn: an ambiguous chunk spoils the RTT probe.
        if spoils_probe
            && self
                .rtt_probe
                .is_some_and(|(probe, _, _)| tsn.is_at_or_before(probe))
        {
            self.rtt_probe = None;
        }
        true
    }

    /// Takes an in-flight chunk out of the flight and marks it (6.3.3 E3, 7.2.4).
    fn mark_at(&mut self, i: usize, cause: RetransmitCause) -> bool {
        let chunk = &mut self.chunks[i];
        if chunk.state != ChunkState::InFlight {
            return false;
        }
        chunk.state = ChunkState::Marked(cause);
        if chunk.transmissions == 1 && cause != RetransmitCause::T3Timeout {
            self.originals_lost += 1;
        }
        let (size, packet, path) = (chunk.size(), chunk.packet, chunk.path);
        self.flight.sub(path, size);
        self.marked += 1;
        self.leave_packet(packet);
        true
    }

    /// RACK (RFC 8985 6.2 step 5) found an in-flight chunk lost: it goes
    /// as a fast retransmission (RFC 8985 9.3), and the miss-indication count
    /// leaves it to RACK from now on. Returns whether it was marked.
    pub fn mark_lost(&mut self, tsn: Tsn) -> bool {
        let Some(i) = self.index(tsn) else {
            return false;
        };
        if !self.mark_at(i, RetransmitCause::FastRetransmit) {
            return false;
        }
        self.chunks[i].fast_retransmitted = true;
        self.trim_packets();
        true
    }

    /// Chunks in flight with the time their latest transmission left.
    pub fn in_flight_sent(&self) -> impl Iterator<Item = (Tsn, Time)> + '_ {
        self.chunks
            .iter()
            .filter(|c| c.state == ChunkState::InFlight)
            .map(|c| (c.tsn, c.last_sent))
    }

    /// When the latest packet record still in flight left.
    pub fn latest_packet_sent(&self) -> Option<Time> {
        self.packets
            .iter()
            .rev()
            .find(|p| p.in_flight > 0)
            .map(|p| p.sent_at)
    }

    /// Chunks acknowledged by gap blocks and not cumulatively.
    pub fn gap_acked_chunks(&self) -> u32 {
        u32::try_from(self.gap_acked).unwrap_or(u32::MAX)
    }

    /// Marks one in-flight chunk for retransmission.
    pub fn mark(&mut self, tsn: Tsn, cause: RetransmitCause) -> bool {
        self.index(tsn).is_some_and(|i| self.mark_at(i, cause))
    }

    /// 6.3.3 E3: a T3 expiry marks every chunk in flight for retransmission.
    pub fn mark_all_in_flight(&mut self, cause: RetransmitCause) -> usize {
        let mut n = 0;
        let mut original = false;
        for i in 0..self.chunks.len() {
            let once = self.chunks[i].transmissions == 1;
            let marked = self.mark_at(i, cause);
            original |= marked && once;
            n += usize::from(marked);
        }
        // One expiry is one loss for the estimate, not every chunk it marks.
        if original && cause == RetransmitCause::T3Timeout {
            self.originals_lost += 1;
        }
        self.trim_packets();
        n
    }

    /// 7.2.4: counts one miss indication for every chunk still in flight below
    /// `limit`, and marks for fast retransmit those that reach `threshold` and
    /// were not fast-retransmitted before (or, with `again`, were: their
    /// misses count only evidence sent after the latest copy, so reaching the
    /// threshold means that copy was lost too; without `again` a chunk
    /// fast-retransmitted before counts nothing). Returns the TSNs marked.
    ///
    /// A chunk sent again after `sent_before` (the send time of the chunk that
    /// reported it) is not missing: its new copy left after the evidence. Without
    /// this, a chunk retransmitted by T3, PKTDROP or a probe would be counted
    /// missing by SACKs for data sent before it, and fast-retransmitted again.
    pub fn count_misses(
        &mut self,
        limit: Tsn,
        threshold: u32,
        sent_before: Option<Time>,
        again: bool,
    ) -> Vec<Tsn> {
        let mut fired = Vec::new();
        for i in 0..self.chunks.len() {
            let chunk = &mut self.chunks[i];
            if !chunk.tsn.is_before(limit) {
                break;
            }
            if chunk.state != ChunkState::InFlight
                || sent_before.is_some_and(|t| chunk.last_sent > t)
                || (chunk.fast_retransmitted && !again)
            {
                continue;
            }
            chunk.misses += 1;
            // A chunk fast-retransmitted before reaches here only with `again`.
            if chunk.misses >= threshold {
                chunk.fast_retransmitted = true;
                let tsn = chunk.tsn;
                self.mark_at(i, RetransmitCause::FastRetransmit);
                fired.push(tsn);
            }
        }
        self.trim_packets();
        fired
    }

    /// Payload bytes of the chunks held: sent and not cumulatively
    /// acknowledged, gap-acknowledged ones included (the peer may renege).
    pub fn payload_bytes(&self) -> usize {
        self.payload_bytes
    }

    /// Bytes sent and not cumulatively acknowledged (RFC 5827's ownd).
    pub fn unacked_total_bytes(&self) -> u32 {
        self.chunks.iter().map(SentChunk::size).sum()
    }

    /// Bytes not acknowledged in any way (neither cumulatively nor by gap).
    pub fn unacked_bytes(&self) -> u32 {
        self.chunks
            .iter()
            .filter(|c| c.state != ChunkState::GapAcked)
            .map(SentChunk::size)
            .sum()
    }

    /// Marks every chunk in flight below `limit` that was not fast-retransmitted
    /// before, as a fast retransmission with `cause` (Early Retransmit: the
    /// chunks "are treated as having reached the miss-indication threshold").
    pub fn mark_missing_below(&mut self, limit: Tsn, cause: RetransmitCause) -> Vec<Tsn> {
        let mut marked = Vec::new();
        for i in 0..self.chunks.len() {
            let c = &mut self.chunks[i];
            if !c.tsn.is_before(limit) {
                break;
            }
            if c.state == ChunkState::InFlight && !c.fast_retransmitted {
                c.fast_retransmitted = true;
                let tsn = c.tsn;
                self.mark_at(i, cause);
                marked.push(tsn);
            }
        }
        self.trim_packets();
        marked
    }

    /// The highest TSN in flight.
    pub fn highest_in_flight(&self) -> Option<Tsn> {
        self.chunks
            .iter()
            .rev()
            .find(|c| c.state == ChunkState::InFlight)
            .map(|c| c.tsn)
    }

    /// Highest TSN acknowledged by a gap block, if any chunk is gap-acked.
    pub fn highest_gap_acked(&self) -> Option<Tsn> {
        if self.gap_acked == 0 {
            return None;
        }
        self.chunks
            .iter()
            .rev()
            .find(|c| c.state == ChunkState::GapAcked)
            .map(|c| c.tsn)
    }

    /// Applies a SACK's cumulative ack and gap blocks (RFC 9260 6.2.1).
    pub fn on_sack(&mut self, sack: &Sack, now: Time) -> Result<SackOutcome, SackRejected> {
        let cum = Tsn(sack.cum_tsn_ack);
        if cum.is_before(self.cum_ack_point) {
            return Err(SackRejected::Stale);
        }
        if !cum.is_before(self.next_tsn) {
            return Err(SackRejected::AcksUnsentTsn);
        }
        // A gap block past the highest TSN sent acknowledges one never sent.
        let sent_above_cum = self.next_tsn.since(cum).wrapping_sub(1);
        if sack
            .gap_blocks
            .iter()
            .any(|b| u32::from(b.end.max(b.start)) > sent_above_cum)
        {
            return Err(SackRejected::AcksUnsentTsn);
        }
        let mut out = SackOutcome::default();
        let earliest_before = self.earliest_unacked().map(|c| c.tsn);
        let probe = self.rtt_probe;

        // The cumulative ack: everything up to `cum` leaves.
        while let Some(front) = self.chunks.front() {
            if !front.tsn.is_at_or_before(cum) {
                break;
            }
            let Some(chunk) = self.chunks.pop_front() else {
                break;
            };
            self.payload_bytes -= chunk.frag.payload.len();
            self.policed -= usize::from(is_policed(&chunk));
            self.retire(&chunk, &mut out);
            // RFC 3758 3.5: an abandoned message that the cumulative ack
            // passes (after the FORWARD TSN) stays abandoned, not acknowledged.
            if chunk.frag.flags.ending && !chunk.message_abandoned {
                out.acked_messages.push(AckedMessage {
                    id: chunk.frag.msg,
                    queued_at: chunk.frag.queued_at,
                    first_sent_at: chunk.msg_first_sent,
                });
            }
        }
        out.cum_advanced = cum != self.cum_ack_point;
        self.cum_ack_point = cum;

        // Gap ack blocks, merged so that hostile overlaps cost nothing.
        if !sack.gap_blocks.is_empty() || self.gap_acked > 0 {
            self.apply_gap_blocks(sack, &mut out);
        }

        if let (Some(earliest), Some(htna)) = (earliest_before, out.htna) {
            out.earliest_acked = earliest.is_at_or_before(htna)
                && self.earliest_unacked().is_none_or(|c| c.tsn != earliest);
        }
        // C4/C5: one measurement per round trip, from the timed chunk.
        if let Some((tsn, sent_at, path)) = probe
            && self.is_acked(tsn)
        {
            out.rtt = Some(now.since(sent_at));
            out.rtt_path = path;
            self.rtt_probe = None;
        }
        self.trim_packets();
        Ok(out)
    }

    /// Whether `tsn` is acknowledged, cumulatively or by a gap block.
    pub fn is_acked(&self, tsn: Tsn) -> bool {
        tsn.is_at_or_before(self.cum_ack_point)
            || self
                .get(tsn)
                .is_some_and(|c| c.state == ChunkState::GapAcked)
    }

    /// Bookkeeping for a chunk leaving the flight by acknowledgement.
    #[inline]
    fn retire(&mut self, chunk: &SentChunk, out: &mut SackOutcome) {
        match chunk.state {
            ChunkState::GapAcked => {
                self.gap_acked -= 1;
                return;
            }
            ChunkState::InFlight => {
                self.flight.sub(chunk.path, chunk.size());
                self.leave_packet(chunk.packet);
            }
            ChunkState::Marked(_) => self.marked -= 1,
            ChunkState::Abandoned => {
                // Not acknowledged data: no cwnd credit, no HTNA.
                self.abandoned -= 1;
                return;
            }
        }
        out.bytes_acked += chunk.size();
        out.delivered.push(Delivered {
            tsn: chunk.tsn,
            sent: chunk.last_sent,
            retransmitted: chunk.transmissions > 1,
            immediate: chunk.immediate,
        });
        // 8.2: the acknowledgement clears the error counter of the
        // destination the chunk went to; of a chunk sent to several, which
        // copy arrived is unknown, and no counter clears (8.2's ambiguity).
        if chunk.sent_on.is_power_of_two() {
            out.acked_paths |= chunk.sent_on;
        }
        if out.htna.is_none_or(|h| h.is_before(chunk.tsn)) {
            out.htna = Some(chunk.tsn);
            // Sent once but for redundant copies (`Bundled`, a probe): the
            // SACK answers one of them, none sent before the first, so the
            // evidence is timed from the first for certain (Karn). Counted
            // from the copy, a retransmission sent between them would be
            // judged lost on evidence drawn by the original.
            let copies_only = chunk.counted_transmissions() == 1;
            out.htna_sent = Some(if copies_only {
                chunk.first_sent
            } else {
                chunk.last_sent
            });
            out.htna_sent_once = copies_only;
        }
    }

    fn apply_gap_blocks(&mut self, sack: &Sack, out: &mut SackOutcome) {
        let len = self.chunks.len();
        // Offsets are relative to the cumulative ack: offset k is index k-1.
        let mut ranges: Vec<(usize, usize)> = sack
            .gap_blocks
            .iter()
            .filter(|b| b.start >= 1 && b.start <= b.end)
            .map(|b| (usize::from(b.start) - 1, usize::from(b.end) - 1))
            .filter(|&(s, _)| s < len)
            .map(|(s, e)| (s, e.min(len - 1)))
            .collect();
        ranges.sort_unstable();
        let mut covered = ranges.into_iter().peekable();
        let mut current: Option<(usize, usize)> = None;
        for i in 0..len {
            while current.is_none_or(|(_, e)| e < i) {
                match covered.next() {
                    Some(r) => current = Some(r),
                    None => {
                        current = None;
                        break;
                    }
                }
            }
            let in_block = current.is_some_and(|(s, e)| s <= i && i <= e);
            let state = self.chunks[i].state;
            if in_block && state != ChunkState::GapAcked {
                let chunk = self.chunks[i].clone();
                self.retire(&chunk, out);
                self.chunks[i].state = ChunkState::GapAcked;
                self.gap_acked += 1;
            } else if !in_block && state == ChunkState::GapAcked {
                // 6.2.1: reneged; the chunk is in flight again and missing,
                // or abandoned with its message (RFC 3758).
                let chunk = &mut self.chunks[i];
                if chunk.message_abandoned {
                    chunk.state = ChunkState::Abandoned;
                    self.abandoned += 1;
                } else {
                    chunk.state = ChunkState::InFlight;
                    let (path, size) = (chunk.path, chunk.size());
                    self.flight.add(path, size);
                }
                self.gap_acked -= 1;
                out.reneged = true;
            }
            if current.is_none() && self.gap_acked == 0 {
                break;
            }
        }
    }

    /// RFC 3758 3.5: abandons every chunk of message `msg` not acknowledged
    /// yet (a message is delivered whole or not at all). Returns whether any
    /// chunk changed.
    pub fn abandon_message(&mut self, msg: MessageId) -> bool {
        let Some(first) = self.chunks.iter().position(|c| c.frag.msg == msg) else {
            return false;
        };
        let mut changed = false;
        // Fragments of one message have consecutive TSNs (RFC 9260 6.9);
        // with I-DATA other streams' fragments lie between them (RFC 8260).
        for i in first..self.chunks.len() {
            let chunk = &mut self.chunks[i];
            if chunk.frag.msg != msg {
                if chunk.frag.idata {
                    continue;
                }
                break;
            }
            chunk.message_abandoned = true;
            // The message's last chunk: nothing of it follows.
            let last = chunk.frag.flags.ending;
            match chunk.state {
                ChunkState::InFlight => {
                    let (size, packet, path) = (chunk.size(), chunk.packet, chunk.path);
                    chunk.state = ChunkState::Abandoned;
                    self.flight.sub(path, size);
                    self.leave_packet(packet);
                    self.abandoned += 1;
                    changed = true;
                }
                ChunkState::Marked(_) => {
                    chunk.state = ChunkState::Abandoned;
                    self.marked -= 1;
                    self.abandoned += 1;
                    changed = true;
                }
                ChunkState::GapAcked | ChunkState::Abandoned => {}
            }
            if last {
                break;
            }
        }
        self.trim_packets();
        changed
    }

    /// RFC 3758 3.5: the end of an abandoned message that was never sent
    /// takes the next TSN, abandoned at once: the FORWARD TSN that skips it
    /// tells the receiver the message's stream and SSN even when every
    /// fragment it sent has arrived.
    pub fn push_abandoned_end(&mut self, end: PendingFragment, now: Time) -> Tsn {
        let tsn = self.next_tsn;
        self.next_tsn = tsn.next();
        self.policed += usize::from(end.reliability != Reliability::Reliable);
        self.chunks.push_back(SentChunk {
            tsn,
            frag: end,
            msg_first_sent: now,
            first_sent: now,
            last_sent: now,
            transmissions: 0,
            copies: 0,
            state: ChunkState::Abandoned,
            misses: 0,
            fast_retransmitted: false,
            immediate: false,
            message_abandoned: true,
            packet: u64::MAX,
            path: PathId::FIRST,
            sent_on: 0,
        });
        self.abandoned += 1;
        tsn
    }

    /// Chunks held under a partial-reliability policy.
    pub fn policed(&self) -> usize {
        self.policed
    }

    /// Chunks abandoned and not yet passed by the cumulative ack.
    pub fn abandoned(&self) -> usize {
        self.abandoned
    }

    /// RFC 3758 3.5 C and F: the Advanced.Peer.Ack.Point (the cumulative ack
    /// point moved on over the abandoned chunks that follow it) and, for each
    /// ordered stream whose messages that skips, the stream and its highest
    /// SSN skipped. At most `max_streams` streams: the point stops before a
    /// chunk that would need one more, so that the FORWARD TSN fits a packet.
    pub fn forward_tsn_point(&self, max_streams: usize) -> (Tsn, Vec<(StreamId, Ssn)>) {
        let mut point = self.cum_ack_point;
        let mut skipped: Vec<(StreamId, Ssn)> = Vec::new();
        for c in self
            .chunks
            .iter()
            .take_while(|c| c.skipped_by_forward_tsn())
        {
            if !c.frag.flags.unordered {
                // TSN order is SSN order within a stream: the later one wins.
                let full = skipped.len() >= max_streams;
                match skipped.iter_mut().find(|(s, _)| *s == c.frag.stream_id) {
                    Some(entry) => entry.1 = c.frag.ssn,
                    None if !full => skipped.push((c.frag.stream_id, c.frag.ssn)),
                    None => break,
                }
            }
            point = c.tsn;
        }
        (point, skipped)
    }

    /// RFC 8260 2.3.1: [`forward_tsn_point`](Self::forward_tsn_point) for
    /// I-FORWARD-TSN: the point, and the (stream, U, MID) entries of the
    /// messages it skips: per stream the highest ordered MID skipped, and
    /// each unordered message skipped. At most `max_entries`.
    pub fn iforward_tsn_point(&self, max_entries: usize) -> (Tsn, Vec<(StreamId, bool, u32)>) {
        let mut point = self.cum_ack_point;
        let mut skipped: Vec<(StreamId, bool, u32)> = Vec::new();
        for c in self
            .chunks
            .iter()
            .take_while(|c| c.skipped_by_forward_tsn())
        {
            let (stream, unordered, mid) = (c.frag.stream_id, c.frag.flags.unordered, c.frag.mid);
            // TSN order is MID order within a stream's ordered messages.
            let full = skipped.len() >= max_entries;
            let entry = skipped
                .iter_mut()
                .find(|(s, u, m)| *s == stream && *u == unordered && (!unordered || *m == mid));
            match entry {
                Some(e) => e.2 = mid,
                None if !full => skipped.push((stream, unordered, mid)),
                None => break,
            }
            point = c.tsn;
        }
        (point, skipped)
    }

    /// Removes everything (the association ended); returns the chunks.
    pub fn drain(&mut self) -> Vec<SentChunk> {
        self.flight = Flight::default();
        self.payload_bytes = 0;
        self.marked = 0;
        self.gap_acked = 0;
        self.abandoned = 0;
        self.policed = 0;
        self.packets.clear();
        self.packets_outstanding = 0;
        self.rtt_probe = None;
        self.chunks.drain(..).collect()
    }
}

/// Whether a chunk's message has a partial-reliability policy (RFC 7496).
fn is_policed(chunk: &SentChunk) -> bool {
    chunk.frag.reliability != Reliability::Reliable
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::chunk::{DataFlags, GapBlock};
    use bytes::Bytes;

    fn frag(msg: u64, len: usize) -> PendingFragment {
        PendingFragment {
            msg: MessageId(msg),
            stream_id: crate::serial::StreamId(0),
            ssn: crate::serial::Ssn(msg as u16),
            ppid: 0,
            flags: DataFlags::UNFRAGMENTED,
            payload: Bytes::from(vec![0u8; len]),
            queued_at: Time::ZERO,
            reliability: crate::message::Reliability::Reliable,
            idata: false,
            mid: 0,
            fsn: 0,
        }
    }

    /// Sends `n` single-chunk packets of 100 bytes each at t = 0.
    fn sent(n: u64) -> Outstanding {
        let mut o = Outstanding::new(Tsn(1000));
        for m in 0..n {
            let p = o.begin_packet(Time::ZERO);
            o.send_new(frag(m, 100), Time::ZERO, p, PathId::FIRST);
            o.end_packet();
        }
        o
    }

    fn sack(cum: u32, gaps: &[(u16, u16)]) -> Sack {
        Sack {
            cum_tsn_ack: cum,
            a_rwnd: 100_000,
            gap_blocks: gaps
                .iter()
                .map(|&(start, end)| GapBlock { start, end })
                .collect(),
            dup_tsns: vec![],
        }
    }

    #[test]
    fn cumulative_ack_retires_chunks_packets_and_messages() {
        let mut o = sent(4);
        assert_eq!(o.flight_size(), 4 * 116);
        assert_eq!(o.packets_outstanding(), 4);
        let out = o.on_sack(&sack(1001, &[]), Time::from_millis(50)).unwrap();
        assert!(out.cum_advanced && out.earliest_acked);
        assert_eq!(out.bytes_acked, 2 * 116);
        assert_eq!(out.htna, Some(Tsn(1001)));
        assert_eq!(out.rtt, Some(Duration::from_millis(50)));
        assert_eq!(out.acked_messages.len(), 2);
        assert_eq!(
            (o.len(), o.flight_size(), o.packets_outstanding()),
            (2, 232, 2)
        );
    }

    #[test]
    fn a_redundant_copy_keeps_its_first_packet_outstanding() {
        // Three packets of one chunk each; the fourth carries copies of all
        // three in front of a new chunk (seed 001 4.4).
        let mut o = sent(3);
        let p = o.begin_packet(Time::from_millis(5));
        for tsn in 1000..1003 {
            assert!(o.rebundle(Tsn(tsn), Time::from_millis(5), p, true));
        }
        o.send_new(frag(3, 100), Time::from_millis(5), p, PathId::FIRST);
        o.end_packet();
        // Four packets are in the network: the copies do not thin the stream.
        assert_eq!(o.packets_outstanding(), 4);
        assert_eq!(o.flight_size(), 4 * 116, "copies count once");
        assert_eq!(o.get(Tsn(1000)).map(|c| c.transmissions), Some(2));
        o.on_sack(&sack(1003, &[]), Time::from_millis(50)).unwrap();
        assert_eq!((o.packets_outstanding(), o.flight_size()), (0, 0));
    }

    #[test]
    fn stale_and_impossible_sacks_are_rejected() {
        let mut o = sent(2);
        o.on_sack(&sack(1000, &[]), Time::ZERO).unwrap();
        assert_eq!(
            o.on_sack(&sack(999, &[]), Time::ZERO),
            Err(SackRejected::Stale)
        );
        assert_eq!(
            o.on_sack(&sack(1002, &[]), Time::ZERO),
            Err(SackRejected::AcksUnsentTsn)
        );
    }

    #[test]
    fn gap_blocks_ack_out_of_order_and_htna_drives_misses() {
        // 1000..=1006 sent; 1001 lost; SACK cum 1000, gap 2..=3 (1002, 1003).
        let mut o = sent(7);
        let out = o.on_sack(&sack(1000, &[(2, 3)]), Time::ZERO).unwrap();
        assert_eq!(out.htna, Some(Tsn(1003)));
        assert_eq!(out.bytes_acked, 3 * 116);
        assert_eq!(o.packets_outstanding(), 4, "1001, 1004, 1005, 1006 remain");
        // Only 1001 is below HTNA and missing.
        assert!(o.count_misses(Tsn(1003), 3, None, false).is_empty());
        assert_eq!(o.get(Tsn(1001)).unwrap().misses, 1);
        assert_eq!(o.get(Tsn(1004)).unwrap().misses, 0);
    }

    #[test]
    fn third_miss_marks_once_for_fast_retransmit() {
        let mut o = sent(5);
        for (i, end) in [(0, 2u16), (1, 3), (2, 4)] {
            let out = o.on_sack(&sack(1000, &[(2, end)]), Time::ZERO).unwrap();
            let fired = o.count_misses(out.htna.unwrap(), 3, None, false);
            assert_eq!(fired.is_empty(), i < 2);
        }
        let c = o.get(Tsn(1001)).unwrap();
        assert_eq!(c.state, ChunkState::Marked(RetransmitCause::FastRetransmit));
        assert!(c.fast_retransmitted);
        assert_eq!(
            o.flight_size(),
            0,
            "everything else gap-acked, 1001 out of flight"
        );
        // Sent again, it never fast-retransmits a second time.
        let p = o.begin_packet(Time::from_millis(5));
        assert_eq!(
            o.resend(Tsn(1001), Time::from_millis(5), p, PathId::FIRST),
            Some(RetransmitCause::FastRetransmit)
        );
        for _ in 0..5 {
            assert!(o.count_misses(Tsn(1005), 3, None, false).is_empty());
        }
    }

    #[test]
    fn a_lost_fast_retransmission_is_sent_again_on_evidence_sent_after_it() {
        let mut o = sent(5);
        for end in [2u16, 3, 4] {
            let out = o.on_sack(&sack(1000, &[(2, end)]), Time::ZERO).unwrap();
            o.count_misses(out.htna.unwrap(), 3, out.htna_sent, true);
        }
        let p = o.begin_packet(Time::from_millis(5));
        o.resend(Tsn(1001), Time::from_millis(5), p, PathId::FIRST);
        o.end_packet();
        // SACKs for data sent before the retransmission say nothing of it.
        for _ in 0..5 {
            assert!(
                o.count_misses(Tsn(1005), 3, Some(Time::from_millis(4)), true)
                    .is_empty()
            );
        }
        assert_eq!(o.get(Tsn(1001)).unwrap().misses, 0);
        // Three reports by data sent after it: the retransmission was lost.
        let after = Some(Time::from_millis(6));
        assert!(o.count_misses(Tsn(1005), 3, after, true).is_empty());
        assert!(o.count_misses(Tsn(1005), 3, after, true).is_empty());
        assert_eq!(o.count_misses(Tsn(1005), 3, after, true), vec![Tsn(1001)]);
        assert_eq!(
            o.get(Tsn(1001)).unwrap().state,
            ChunkState::Marked(RetransmitCause::FastRetransmit)
        );
        // Without the option, the same evidence leaves it to T3 (7.2.4).
        let p = o.begin_packet(Time::from_millis(7));
        o.resend(Tsn(1001), Time::from_millis(7), p, PathId::FIRST);
        o.end_packet();
        for _ in 0..5 {
            assert!(
                o.count_misses(Tsn(1005), 3, Some(Time::from_millis(8)), false)
                    .is_empty()
            );
        }
    }

    #[test]
    fn t3_marks_everything_in_flight_and_retransmission_forms_a_new_record() {
        let mut o = sent(3);
        o.on_sack(&sack(999, &[(2, 2)]), Time::ZERO).unwrap(); // 1001 gap-acked
        assert_eq!(o.mark_all_in_flight(RetransmitCause::T3Timeout), 2);
        assert_eq!(
            (o.flight_size(), o.packets_outstanding(), o.marked()),
            (0, 0, 2)
        );
        let p = o.begin_packet(Time::from_secs(1));
        let first = o.next_marked().unwrap().tsn;
        assert_eq!(first, Tsn(1000));
        o.resend(first, Time::from_secs(1), p, PathId::FIRST);
        o.resend(Tsn(1002), Time::from_secs(1), p, PathId::FIRST);
        o.end_packet();
        assert_eq!(o.packets_outstanding(), 1, "both in one new packet");
        assert_eq!(o.get(Tsn(1000)).unwrap().transmissions, 2);
    }

    #[test]
    fn karn_no_rtt_sample_from_a_retransmitted_chunk() {
        let mut o = sent(1);
        o.mark_all_in_flight(RetransmitCause::T3Timeout);
        let p = o.begin_packet(Time::from_secs(1));
        o.resend(Tsn(1000), Time::from_secs(1), p, PathId::FIRST);
        let out = o
            .on_sack(&sack(1000, &[]), Time::from_millis(1100))
            .unwrap();
        assert_eq!(out.rtt, None);
    }

    #[test]
    fn reneged_gap_ack_returns_to_flight() {
        let mut o = sent(3);
        o.on_sack(&sack(999, &[(2, 3)]), Time::ZERO).unwrap();
        assert_eq!(o.flight_size(), 116);
        let out = o.on_sack(&sack(999, &[(3, 3)]), Time::ZERO).unwrap();
        assert!(out.reneged);
        assert_eq!(o.flight_size(), 2 * 116);
        assert_eq!(o.get(Tsn(1001)).unwrap().state, ChunkState::InFlight);
    }

    #[test]
    fn hostile_gap_blocks_cost_nothing_and_break_nothing() {
        let mut o = sent(3);
        let mut s = sack(999, &[(0, 0), (3, 2), (1, 3), (2, 3)]);
        s.gap_blocks
            .extend((0..5000).map(|_| GapBlock { start: 1, end: 3 }));
        let out = o.on_sack(&s, Time::ZERO).unwrap();
        assert_eq!(out.bytes_acked, 3 * 116);
        assert_eq!(o.flight_size(), 0);
        // A block past the last TSN sent acknowledges one never sent.
        for blocks in [&[(1, 65535)][..], &[(60000, 65535)], &[(4, 4)], &[(5, 2)]] {
            let mut o = sent(3);
            assert_eq!(
                o.on_sack(&sack(999, blocks), Time::ZERO).unwrap_err(),
                SackRejected::AcksUnsentTsn,
                "{blocks:?}"
            );
            assert_eq!(o.flight_size(), 3 * 116);
        }
    }

    #[test]
    fn fragments_report_the_message_once_with_its_first_send_time() {
        let mut o = Outstanding::new(Tsn(1));
        let mut b = frag(7, 10);
        b.flags = DataFlags {
            ending: false,
            ..DataFlags::UNFRAGMENTED
        };
        let mut e = frag(7, 10);
        e.flags = DataFlags {
            beginning: false,
            ..DataFlags::UNFRAGMENTED
        };
        let p = o.begin_packet(Time::from_millis(1));
        o.send_new(b, Time::from_millis(1), p, PathId::FIRST);
        let p = o.begin_packet(Time::from_millis(2));
        o.send_new(e, Time::from_millis(2), p, PathId::FIRST);
        let out = o.on_sack(&sack(2, &[]), Time::from_millis(9)).unwrap();
        assert_eq!(
            out.acked_messages,
            vec![AckedMessage {
                id: MessageId(7),
                queued_at: Time::ZERO,
                first_sent_at: Time::from_millis(1)
            }]
        );
    }

    #[test]
    fn a_chunk_sent_again_after_the_reporting_chunk_is_not_counted_missing() {
        let mut o = sent(3); // 1000..=1002 sent at t = 0
        // 1000 is re-sent at t = 5 ms (say after a PKTDROP report).
        o.mark(Tsn(1000), RetransmitCause::PacketDrop);
        let p = o.begin_packet(Time::from_millis(5));
        o.resend(Tsn(1000), Time::from_millis(5), p, PathId::FIRST);
        // A SACK for 1001 (sent at t = 0) says nothing about the new copy.
        let out = o
            .on_sack(&sack(999, &[(2, 2)]), Time::from_millis(10))
            .unwrap();
        assert_eq!(out.htna_sent, Some(Time::ZERO));
        assert!(
            o.count_misses(out.htna.unwrap(), 1, out.htna_sent, false)
                .is_empty()
        );
        assert_eq!(o.get(Tsn(1000)).unwrap().misses, 0);
        // A SACK for 1002 re-sent later would count it.
        o.mark(Tsn(1002), RetransmitCause::T3Timeout);
        let p = o.begin_packet(Time::from_millis(7));
        o.resend(Tsn(1002), Time::from_millis(7), p, PathId::FIRST);
        let out = o
            .on_sack(&sack(999, &[(2, 3)]), Time::from_millis(20))
            .unwrap();
        assert_eq!(
            o.count_misses(out.htna.unwrap(), 1, out.htna_sent, false),
            vec![Tsn(1000)]
        );
    }

    #[test]
    fn an_abandoned_message_whose_sent_part_arrived_is_still_skipped_by_its_ssn() {
        // Message 7's first fragment (TSN 1000) arrived and is acknowledged;
        // its other fragments were never sent when it was abandoned.
        let mut o = Outstanding::new(Tsn(1000));
        let p = o.begin_packet(Time::ZERO);
        let mut first = frag(7, 100);
        first.flags = DataFlags {
            ending: false,
            ..DataFlags::UNFRAGMENTED
        };
        o.send_new(first.clone(), Time::ZERO, p, PathId::FIRST);
        o.end_packet();
        o.on_sack(&sack(1000, &[]), Time::from_millis(10)).unwrap();
        assert_eq!(
            o.forward_tsn_point(16),
            (Tsn(1000), vec![]),
            "nothing to skip"
        );
        // RFC 3758 3.5: its end takes TSN 1001, abandoned, so that the
        // FORWARD TSN names stream 0, SSN 7.
        let end = PendingFragment {
            flags: DataFlags {
                beginning: false,
                ending: true,
                ..DataFlags::UNFRAGMENTED
            },
            payload: Bytes::new(),
            ..first
        };
        assert_eq!(o.push_abandoned_end(end, Time::from_millis(20)), Tsn(1001));
        assert_eq!(o.next_tsn(), Tsn(1002));
        assert_eq!(o.flight_size(), 0);
        assert_eq!(
            o.forward_tsn_point(16),
            (
                Tsn(1001),
                vec![(crate::serial::StreamId(0), crate::serial::Ssn(7))]
            )
        );
        // The peer's SACK after the FORWARD TSN retires it.
        o.on_sack(&sack(1001, &[]), Time::from_millis(40)).unwrap();
        assert!(o.is_empty() && o.abandoned() == 0);
    }
}
