//! The one owner of the sending side once a chunk has left: outstanding
//! chunks and their packet records ([`Outstanding`]), T3-rtx, fast recovery,
//! every latency mechanism as a named step, and the peer's receive window.
//!
//! The association decides what to do with a SACK or an expiry and asks this
//! queue; the queue changes its own state, the path's congestion control and
//! RTO, and its timers in the association's [`TimerTable`], and answers with
//! what the association must act on (errors to clear, messages acknowledged,
//! an abort). Packet assembly asks it for the chunks to resend and hands it
//! every chunk sent.

use std::time::Duration;

use crate::cc::{AckSample, CongestionController};
use crate::config::{Config, EarlyRetransmit, Nagle};
use crate::events::RetransmitCause;
use crate::message::{MessageId, Reliability};
use crate::path::{Path, PathId, Paths};
use crate::recovery::fast_retransmit::FastRecovery;
use crate::recovery::rack::Rack;
use crate::recovery::spurious::{self, SpuriousTimeouts};
use crate::recovery::tail_probe::{self, IBitWatch, ProbeEpisode, ProbeVerdict, TailProbe};
use crate::recovery::{ack_reach, early_retransmit, pktdrop, rto_restart, t3, thin};
use crate::serial::Tsn;
use crate::time::Time;
use crate::timer::{TimerKind, TimerTable};
use crate::tx::outstanding::{
    AckedMessage, ChunkState, Outstanding, SackOutcome, SackRejected, SentChunk, window_cost,
};
use crate::tx::redundancy::Redundancy;
use crate::tx::send_queue::PendingFragment;
use crate::wire::chunk::{
    ForwardTsn, ForwardTsnStream, IForwardTsn, IForwardTsnStream, PktDrop, Sack,
};

/// What the queue borrows from the association for one call: the knobs, the
/// destinations (their congestion control and RTO), the one this call is
/// about (`to`: where a packet goes, else where new data goes) and the timers.
pub struct TxEnv<'a> {
    pub cfg: &'a Config,
    pub paths: &'a mut Paths,
    pub to: PathId,
    pub timers: &'a mut TimerTable,
}

impl TxEnv<'_> {
    /// The destination this call is about.
    pub fn path(&self) -> &Path {
        self.paths.get(self.to)
    }

    pub fn path_mut(&mut self) -> &mut Path {
        self.paths.get_mut(self.to)
    }
}

/// The counters of the sending side, kept where the events happen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TxCounters {
    /// Retransmissions by cause, in [`RetransmitCause::ALL`] order.
    pub retransmissions: [u64; RetransmitCause::ALL.len()],
    pub t3_expirations: u64,
    pub fast_recoveries: u64,
    pub spurious_timeouts_undone: u64,
    /// Chunks RACK found lost (RFC 8985 6.2) that the miss-indication count
    /// had not: each also counts as a fast retransmission when it goes.
    pub rack_losses: u64,
    /// DATA chunks sent, first transmissions and retransmissions alike.
    pub data_chunks_sent: u64,
    /// User data sent for the first time.
    pub payload_bytes_sent: u64,
}

/// The peer's receive window as the sender models it (RFC 9260 6.2.1). The
/// window usable for new data is derived from it when asked
/// ([`RetransmissionQueue::window_allows`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct PeerWindow {
    rwnd: u32,
}

impl PeerWindow {
    /// 6.2.1 D ii: a_rwnd less what is still outstanding.
    fn on_sack(&mut self, a_rwnd: u32, window_flight: u32) {
        self.rwnd = a_rwnd.saturating_sub(window_flight);
    }

    /// 6.2.1 B: a chunk was sent or resent.
    fn on_sent(&mut self, cost: u32) {
        self.rwnd = self.rwnd.saturating_sub(cost);
    }

    /// 6.2.1 C: chunks marked for retransmission go back into the window.
    fn on_returned(&mut self, cost: u32) {
        self.rwnd = self.rwnd.saturating_add(cost);
    }
}

/// What a SACK asks of the association.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SackResult {
    /// The SACK proves the peer reachable: it acknowledged new data (8.3), or
    /// answered a zero window probe (6.1 A). The error counters clear.
    pub peer_alive: bool,
    /// Messages whose every fragment is now cumulatively acknowledged.
    pub acked_messages: Vec<AckedMessage>,
    /// The destinations newly acknowledged chunks were last sent to, a bit
    /// each: they answered (RFC 9260 8.2).
    pub acked_paths: u32,
}

/// What a T3 expiry is, before it acts (6.3.3, 8.1, 8.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum T3Expiry {
    /// Nothing is outstanding: nothing to do.
    Idle,
    /// A real expiry; unless it only probed a closed window that the peer
    /// keeps answering (6.1 A), it counts as an error of the association.
    Expired {
        counts_as_error: bool,
        /// The destination the earliest outstanding chunk went to: the one
        /// whose timer this is (6.3.3, 8.2).
        path: PathId,
    },
}

/// A chunk just sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resent {
    pub cause: RetransmitCause,
    pub first_sent: Time,
    /// Transmissions of the chunk, this one included.
    pub transmissions: u32,
}

/// The sending side of one association after the send queue.
#[derive(Debug, Clone)]
pub struct RetransmissionQueue {
    outstanding: Outstanding,
    /// After an SSN/TSN reset (RFC 6525 5.1.4): the next TSN of the
    /// numbering left behind, to know a late SACK of it.
    retired_before: Option<Tsn>,
    fast_recovery: FastRecovery,
    /// 7.2.4: the next packet of marked chunks goes out whatever cwnd says.
    /// Fast retransmit sets it; so do Early Retransmit, the tail loss probe
    /// and PKTDROP, whose retransmissions are no sign of congestion either.
    bypass_cwnd_once: bool,
    /// Early Retransmit waiting out its reordering delay (RFC 5827 6): the
    /// chunks it would retransmit.
    early_retransmit_pending: Vec<Tsn>,
    tail_probe: TailProbe,
    /// RACK (RFC 8985 6), with `Config::rack`.
    rack: Rack,
    /// Whether the peer answers the I bit at once (RACK-TLP's PTO).
    i_bit: IBitWatch,
    /// The probe timer fired with new data to send: the packet that carries
    /// it is the probe, and sets the I bit.
    probe_new_data: bool,
    /// Minshall's Nagle: the highest TSN of the last less-than-full packet
    /// sent, while it is unacknowledged.
    small_unacked: Option<Tsn>,
    peer_window: PeerWindow,
    /// When the last SACK arrived, and the a_rwnd it advertised.
    last_sack: Option<(Time, u32)>,
    /// When T3 last expired, and the destination it expired on.
    last_t3_expiry: Option<Time>,
    t3_path: PathId,
    /// T3 expiries that may yet prove spurious (RFC 5682, RFC 3708).
    spurious: SpuriousTimeouts,
    /// RFC 3758 3.5: the New Cumulative TSN of the last FORWARD TSN queued,
    /// and when; another is due when the Advanced.Peer.Ack.Point moves past
    /// it, or a SACK shows it did not arrive (`repeat_lost_forward_tsn`).
    forwarded_to: Option<Tsn>,
    forwarded_at: Time,
    /// The first TSN sent after that FORWARD TSN.
    forwarded_before: Tsn,
    /// Redundancy within a byte budget (Linux RDB's DPIFL trigger).
    redundancy: Redundancy,
    counters: TxCounters,
}

impl RetransmissionQueue {
    /// `initial_tsn` is the TSN our first DATA chunk will carry.
    pub fn new(initial_tsn: Tsn) -> Self {
        Self {
            outstanding: Outstanding::new(initial_tsn),
            retired_before: None,
            fast_recovery: FastRecovery::default(),
            bypass_cwnd_once: false,
            early_retransmit_pending: Vec::new(),
            tail_probe: TailProbe::default(),
            rack: Rack::default(),
            i_bit: IBitWatch::default(),
            probe_new_data: false,
            small_unacked: None,
            peer_window: PeerWindow::default(),
            last_sack: None,
            last_t3_expiry: None,
            t3_path: PathId::FIRST,
            spurious: SpuriousTimeouts::default(),
            forwarded_to: None,
            forwarded_at: Time::ZERO,
            forwarded_before: initial_tsn,
            redundancy: Redundancy::default(),
            counters: TxCounters::default(),
        }
    }

    /// 5.2.4 A: the peer restarted. Everything outstanding is forgotten (the
    /// caller drained it first) and sending starts again at `initial_tsn`;
    /// the counters go on.
    pub fn restart(&mut self, initial_tsn: Tsn, timers: &mut TimerTable) {
        let counters = std::mem::take(&mut self.counters);
        *self = Self {
            counters,
            ..Self::new(initial_tsn)
        };
        for kind in [
            TimerKind::T3Rtx,
            TimerKind::EarlyRetransmit,
            TimerKind::RackReorder,
            TimerKind::TailLossProbe,
        ] {
            timers.stop(kind);
        }
    }

    /// RFC 6525 5.1.4: our SSN/TSN reset was performed: sending starts
    /// again at `initial_tsn` (nothing is outstanding), and a SACK of the
    /// TSNs used before that arrives late (a duplicate, say) is stale, not
    /// one that acknowledges TSNs never sent.
    pub fn reset_tsns(&mut self, initial_tsn: Tsn, timers: &mut TimerTable) {
        let retired = self.outstanding.next_tsn();
        self.restart(initial_tsn, timers);
        self.retired_before = Some(retired);
    }

    /// A Cumulative TSN Ack among the (at most 2^30) TSNs used before an
    /// SSN/TSN reset, and not among the current ones.
    fn acks_retired_tsns(&self, cum: Tsn) -> bool {
        const RETIRED_SPAN: u32 = 1 << 30;
        let Some(old_next) = self.retired_before else {
            return false;
        };
        let o = &self.outstanding;
        let current = !cum.is_before(o.cum_ack_point()) && cum.is_before(o.next_tsn());
        !current && cum.is_before(old_next) && old_next.since(cum) <= RETIRED_SPAN
    }

    /// 6.2.1 A: the window the peer gave in its INIT or INIT ACK.
    pub fn on_peer_window(&mut self, a_rwnd: u32) {
        self.peer_window.rwnd = a_rwnd;
    }

    // --- What the association reads ---

    #[inline]
    pub fn outstanding(&self) -> &Outstanding {
        &self.outstanding
    }

    pub fn counters(&self) -> &TxCounters {
        &self.counters
    }

    /// The peer's receive window as we model it (6.2.1).
    pub fn peer_rwnd(&self) -> u32 {
        self.peer_window.rwnd
    }

    /// A less-than-full packet is unacknowledged (Minshall's Nagle).
    pub fn small_packet_unacked(&self) -> bool {
        self.small_unacked.is_some()
    }

    /// RACK-TLP: the next packet of new data is a tail loss probe and sets
    /// the I bit (RFC 8985 7.3, RFC 7053). Asking clears it.
    pub fn take_probe_i_bit(&mut self) -> bool {
        std::mem::take(&mut self.probe_new_data)
    }

    /// Whether marked chunks may go out now whatever cwnd says (7.2.4).
    #[inline]
    pub fn may_bypass_cwnd(&self) -> bool {
        self.bypass_cwnd_once
    }

    /// Whether the stream is thin (seed 001): fewer than `thin_threshold`
    /// packets outstanding.
    #[inline]
    pub fn is_thin(&self, cfg: &Config) -> bool {
        thin::is_thin(cfg, self.outstanding.packets_outstanding())
    }

    /// The RTO for T3: a thin stream's own RTO.Min applies while thin.
    #[inline]
    pub fn rto(&self, cfg: &Config, path: &Path) -> Duration {
        thin::rto(cfg, self.is_thin(cfg), &path.rto)
    }

    /// Rule A (6.1): new DATA of `payload` bytes needs room in the peer's
    /// window, except for a zero window probe when nothing is outstanding.
    #[inline]
    pub fn window_allows(&self, payload: usize) -> bool {
        usize::try_from(self.peer_window.rwnd).unwrap_or(usize::MAX) >= payload
            || self.outstanding.is_empty()
    }

    /// Whether new data is queued (`queued`: the next chunk's payload) and
    /// the peer's window would take it (RFC 5827 and RFC 7765 apply only when
    /// it is not).
    #[inline]
    fn new_data_ready(&self, queued: Option<usize>) -> bool {
        queued
            .is_some_and(|len| usize::try_from(self.peer_window.rwnd).unwrap_or(usize::MAX) >= len)
    }

    // --- Sending ---

    /// Opens a packet record for DATA leaving now.
    #[inline]
    pub fn begin_packet(&mut self, now: Time) -> u64 {
        self.outstanding.begin_packet(now)
    }

    /// The packet is complete.
    #[inline]
    pub fn end_packet(&mut self) {
        self.outstanding.end_packet();
    }

    /// The lowest TSN marked for retransmission (6.1 C: these go first).
    #[inline]
    pub fn next_marked(&self) -> Option<&SentChunk> {
        self.outstanding.next_marked()
    }

    /// Sends a marked chunk again in packet `packet`, its I bit as given.
    pub fn resend(
        &mut self,
        tsn: Tsn,
        now: Time,
        packet: u64,
        immediate: bool,
        env: &mut TxEnv<'_>,
    ) -> Option<Resent> {
        let earliest = self.outstanding.earliest_unacked().map(|c| c.tsn) == Some(tsn);
        let cause = self.outstanding.resend(tsn, now, packet, env.to)?;
        self.outstanding.note_i_bit(tsn, immediate);
        self.spurious.on_sent(tsn);
        let (resent, size) = self.resent(tsn, cause)?;
        // 6.2.1 B.
        self.peer_window.on_sent(window_cost(size));
        self.count_retransmission(cause);
        self.on_data_sent(now, earliest, env);
        let flight = self.outstanding.flight_size();
        env.path_mut().cc.on_sent(now, size, flight);
        Some(resent)
    }

    /// The marked chunks of this transmission opportunity went out: 7.2.4,
    /// only one packet may ignore cwnd.
    pub fn on_retransmissions_sent(&mut self) {
        self.bypass_cwnd_once = false;
    }

    /// Seed 001 4.4: sends a chunk still in flight again in packet `packet`
    /// (redundant or aggressive bundling; cause `Bundled`). Returns whether it
    /// went, with the chunk's first send time and transmissions.
    pub fn bundle(
        &mut self,
        tsn: Tsn,
        now: Time,
        packet: u64,
        immediate: bool,
        env: &mut TxEnv<'_>,
    ) -> Option<Resent> {
        let earliest = self.outstanding.earliest_unacked().map(|c| c.tsn) == Some(tsn);
        if !self.outstanding.rebundle(tsn, now, packet, true) {
            return None;
        }
        self.outstanding.note_i_bit(tsn, immediate);
        self.spurious.on_sent(tsn);
        if earliest {
            // 6.3.2: a copy of the earliest outstanding chunk is a
            // retransmission of it, and restarts T3: its SACK cannot be back
            // sooner than a round trip from now.
            self.on_data_sent(now, true, env);
        }
        self.count_retransmission(RetransmitCause::Bundled);
        self.resent(tsn, RetransmitCause::Bundled)
            .map(|(resent, _)| resent)
    }

    /// Redundancy within a byte budget (`tx::redundancy`): sends a chunk still
    /// in flight again in packet `packet`, cause `Bundled`, and spends its
    /// bytes from the budget. Unlike [`Self::bundle`] it restarts no timer
    /// (the original is still in flight and its SACK may be back sooner: T3
    /// stays the backstop against a peer that never acknowledges it) and it
    /// leaves the RTT probe alone (see `Outstanding::rebundle`). Like every
    /// copy it stays out of the flight size and the congestion controller
    /// (it opens no flight: RFC 9260 6.1 B counts each chunk once) and out of
    /// PR-SCTP's retransmission count (`SentChunk::copies`).
    ///
    /// `with_new_data`: the packet carries new data too (a copy probe does
    /// not), which tells the loss rate how much the copy's fate says.
    pub fn copy(
        &mut self,
        tsn: Tsn,
        now: Time,
        packet: u64,
        immediate: bool,
        with_new_data: bool,
    ) -> Option<Resent> {
        let first = self
            .outstanding
            .get(tsn)
            .is_some_and(|c| c.transmissions == 1);
        if !self.outstanding.rebundle(tsn, now, packet, false) {
            return None;
        }
        if first {
            let next = self.outstanding.next_tsn();
            self.redundancy
                .loss_mut()
                .on_first_copy(tsn, next, with_new_data);
        }
        self.outstanding.note_i_bit(tsn, immediate);
        self.spurious.on_sent(tsn);
        self.count_retransmission(RetransmitCause::Bundled);
        let (resent, size) = self.resent(tsn, RetransmitCause::Bundled)?;
        self.redundancy.spend(size);
        Some(resent)
    }

    /// The budget and trigger of redundancy for streams that are not thin.
    pub fn redundancy(&self) -> &Redundancy {
        &self.redundancy
    }

    pub fn redundancy_mut(&mut self) -> &mut Redundancy {
        &mut self.redundancy
    }

    /// `bytes` of new data earn credit for copies (`tx::redundancy`), at the
    /// share the loss rate measured so far allows.
    pub fn earn_redundancy(&mut self, cfg: &Config, bytes: u32) {
        let lost = self.outstanding.originals_lost();
        self.redundancy.loss_mut().sync_lost(lost);
        self.redundancy.earn(cfg, bytes);
    }

    /// What the lab hears of a chunk just sent again, and its size.
    fn resent(&self, tsn: Tsn, cause: RetransmitCause) -> Option<(Resent, u32)> {
        let chunk = self.outstanding.get(tsn)?;
        let resent = Resent {
            cause,
            first_sent: chunk.first_sent,
            transmissions: chunk.transmissions,
        };
        Some((resent, chunk.size()))
    }

    /// Sends a fragment for the first time in packet `packet`; returns its TSN.
    #[inline]
    pub fn send_new(
        &mut self,
        frag: PendingFragment,
        now: Time,
        packet: u64,
        env: &mut TxEnv<'_>,
    ) -> Tsn {
        let payload_len = frag.payload.len() as u64;
        let size = frag.chunk_size();
        let tsn = self.outstanding.send_new(frag, now, packet, env.to);
        self.redundancy.loss_mut().on_sent();
        // 6.2.1 B.
        self.peer_window.on_sent(window_cost(size));
        self.counters.data_chunks_sent += 1;
        self.counters.payload_bytes_sent += payload_len;
        self.on_data_sent(now, false, env);
        let flight = self.outstanding.flight_size();
        env.path_mut().cc.on_sent(now, size, flight);
        tsn
    }

    /// A packet of new data ending with `last_tsn` went out; `full` when it
    /// had no room for the next chunk.
    #[inline]
    pub fn on_new_data_packet(
        &mut self,
        now: Time,
        last_tsn: Tsn,
        full: bool,
        env: &mut TxEnv<'_>,
    ) {
        // Minshall: remember a less-than-full packet until it is acknowledged.
        if !full && env.cfg.nagle == Nagle::Minshall {
            self.small_unacked = Some(last_tsn);
        }
        self.arm_tail_probe(now, env);
    }

    /// 6.3.2 R1: DATA went out; `earliest_resent` when it was the earliest
    /// outstanding chunk sent again.
    #[inline]
    fn on_data_sent(&self, now: Time, earliest_resent: bool, env: &mut TxEnv<'_>) {
        let rto = self.rto(env.cfg, env.path());
        match t3::on_send(earliest_resent) {
            t3::OnSend::Restart => env.timers.start(TimerKind::T3Rtx, now, rto),
            t3::OnSend::StartIfStopped => env.timers.start_if_stopped(TimerKind::T3Rtx, now, rto),
        }
    }

    fn count_retransmission(&mut self, cause: RetransmitCause) {
        self.counters.retransmissions[cause as usize] += 1;
        self.counters.data_chunks_sent += 1;
    }

    /// Every chunk outstanding, to fail its message (the association ended).
    pub fn drain(&mut self) -> Vec<SentChunk> {
        self.outstanding.drain()
    }

    // --- SACKs ---

    /// A SACK arrived (6.2.1). `queued` is the payload of the next chunk the
    /// send queue would cut, if any.
    pub fn on_sack(
        &mut self,
        now: Time,
        sack: &Sack,
        queued: Option<usize>,
        env: &mut TxEnv<'_>,
    ) -> Result<SackResult, SackRejected> {
        if self.acks_retired_tsns(Tsn(sack.cum_tsn_ack)) {
            return Err(SackRejected::Stale);
        }
        self.last_sack = Some((now, sack.a_rwnd));
        let result = self.apply(now, sack, queued, env)?;
        self.repeat_lost_forward_tsn(now, sack, env.path().rto.srtt());
        Ok(result)
    }

    /// RFC 3758 3.5 C3: a SACK whose Cumulative TSN Ack is still short of
    /// the Advanced.Peer.Ack.Point calls for a FORWARD TSN, also when one
    /// with that point was already sent, if that one was lost: the SACK
    /// reports DATA sent after it, or (the note to C3) a full RTT has passed
    /// since it left. Not on every such SACK: those the peer sent before the
    /// FORWARD TSN reached it do not repeat it.
    fn repeat_lost_forward_tsn(&mut self, now: Time, sack: &Sack, srtt: Option<Duration>) {
        let Some(point) = self.forwarded_to else {
            return;
        };
        let cum = Tsn(sack.cum_tsn_ack);
        if !cum.is_before(point) {
            return;
        }
        let highest = sack
            .gap_blocks
            .iter()
            .map(|g| cum.plus(u32::from(g.end)))
            .fold(cum, |h, t| if h.is_before(t) { t } else { h });
        let overtaken = !highest.is_before(self.forwarded_before);
        let waited = srtt.is_some_and(|rtt| now.since(self.forwarded_at) >= rtt);
        if overtaken || waited {
            self.forwarded_to = None;
        }
    }

    /// 9.2: the Cumulative TSN Ack of a SHUTDOWN acknowledges like a SACK
    /// that leaves the peer's window as it was.
    pub fn on_shutdown_cum_ack(
        &mut self,
        now: Time,
        cum_tsn_ack: Tsn,
        queued: Option<usize>,
        env: &mut TxEnv<'_>,
    ) -> Result<SackResult, SackRejected> {
        if self.acks_retired_tsns(cum_tsn_ack) {
            return Err(SackRejected::Stale);
        }
        let as_sack = Sack {
            cum_tsn_ack: cum_tsn_ack.0,
            a_rwnd: self
                .peer_window
                .rwnd
                .saturating_add(self.outstanding.window_flight()),
            gap_blocks: Vec::new(),
            dup_tsns: Vec::new(),
        };
        self.apply(now, &as_sack, queued, env)
    }

    /// Applies a SACK in the order 7.2.4 requires: acknowledgement and RTT
    /// (6.2.1, 6.3.1), the T3 episode's verdict, cwnd for the new acks
    /// (7.2.1, 7.2.2) before any fast-retransmit reduction (7.2.3), the peer's
    /// window, Early Retransmit, then T3 (6.3.2) and the tail loss probe.
    fn apply(
        &mut self,
        now: Time,
        sack: &Sack,
        queued: Option<usize>,
        env: &mut TxEnv<'_>,
    ) -> Result<SackResult, SackRejected> {
        let flight_before = self.outstanding.flight_size();
        let packets_before = self.outstanding.packets_outstanding();
        let er = env.cfg.early_retransmit != EarlyRetransmit::Off;
        let bytes_before = if er {
            self.outstanding.unacked_total_bytes()
        } else {
            0
        };
        // The chunk a T3 episode watches, as it stood before this SACK.
        let watched = self
            .spurious
            .watched()
            .map(|tsn| (tsn, self.outstanding.get(tsn).map(|c| c.state)));
        let outcome = self.outstanding.on_sack(sack, now)?;
        if let Some(rtt) = outcome.rtt {
            // 6.3.1: the measurement is of the destination the chunk went to.
            env.paths.get_mut(outcome.rtt_path).rto.on_measurement(rtt);
            self.redundancy.on_rtt(rtt);
        }
        if let Some((tsn, before)) = watched {
            let expired = env.paths.get_mut(self.t3_path);
            self.judge_t3_episode(sack, tsn, before, expired);
        }
        let outstanding = &self.outstanding;
        self.redundancy
            .loss_mut()
            .on_sack(&sack.dup_tsns, |tsn| outstanding.is_acked(tsn));
        let peer_alive = self.peer_alive(sack, &outcome);
        self.release_minshall();
        // 7.2.1, 7.2.2 before 7.2.3 (note at the end of 7.2.4).
        env.path_mut().cc.on_ack(&AckSample {
            now,
            bytes_acked: outcome.bytes_acked,
            flight_before,
            in_fast_recovery: self.fast_recovery.in_recovery(),
            rtt: outcome.rtt,
            newest_acked_sent_at: outcome.htna_sent,
            app_limited: queued.is_none() && self.outstanding.marked() == 0,
        });
        let was_in_recovery = self.fast_recovery.in_recovery();
        self.fast_recovery.on_cum_ack(Tsn(sack.cum_tsn_ack));
        if was_in_recovery && !self.fast_recovery.in_recovery() && env.cfg.rack {
            self.rack.on_recovery_exit();
        }
        let packets_acked = packets_before.saturating_sub(self.outstanding.packets_outstanding());
        if let Some(sent) = outcome.htna_sent {
            env.path_mut().ack_spacing.on_sack(now, packets_acked, sent);
        }
        let window = early_retransmit::Window {
            packets_before,
            packets_after: self.outstanding.packets_outstanding(),
            bytes_before,
            bytes_after: if er {
                self.outstanding.unacked_bytes()
            } else {
                0
            },
        };
        let flight_unmarked = self.outstanding.flight_size();
        let (mut entered, mut marked) = self.fast_retransmit(sack, &outcome, packets_before, env);
        if env.cfg.rack {
            self.judge_probe(now, sack, &outcome, packets_acked, env);
            let (rack_entered, rack_marked) = self.rack_on_sack(now, sack, &outcome, env);
            entered |= rack_entered;
            marked |= rack_marked;
        }
        // 6.2.1 D ii.
        self.peer_window
            .on_sack(sack.a_rwnd, self.outstanding.window_flight());
        if !marked && !self.fast_recovery.in_recovery() {
            let (er_entered, er_marked) =
                self.early_retransmit(now, &outcome, &window, queued, env);
            entered |= er_entered;
            marked = er_marked;
        }
        if entered {
            env.path_mut().cc.on_fast_retransmit(now);
            self.counters.fast_recoveries += 1;
        }
        if marked {
            self.bypass_cwnd_once = true;
            let lost = flight_unmarked.saturating_sub(self.outstanding.flight_size());
            env.path_mut().cc.on_lost(now, lost);
        }
        self.restart_t3(now, &outcome, queued, env);
        self.arm_tail_probe(now, env);
        if self.outstanding.is_empty() {
            env.path_mut().cc.on_all_acked();
        }
        Ok(SackResult {
            peer_alive,
            acked_messages: outcome.acked_messages,
            acked_paths: outcome.acked_paths,
        })
    }

    /// 8.3: acknowledged DATA proves the peer reachable; RFC 9260 6.1 A:
    /// SACKs that keep answering a zero window probe show it alive too, and
    /// the unanswered probes are not errors.
    fn peer_alive(&mut self, sack: &Sack, outcome: &SackOutcome) -> bool {
        if outcome.bytes_acked > 0 {
            self.tail_probe.on_new_ack();
            return true;
        }
        self.outstanding
            .earliest_unacked()
            .is_some_and(|c| sack.a_rwnd < window_cost(c.size()))
    }

    /// Minshall's Nagle: the small packet is acknowledged.
    fn release_minshall(&mut self) {
        if self.small_unacked.is_some_and(|t| {
            self.outstanding
                .get(t)
                .is_none_or(|c| c.state == ChunkState::GapAcked)
        }) {
            self.small_unacked = None;
        }
    }

    /// 7.2.4: miss indications, with seed 001 4.3's threshold of one for a
    /// thin stream and lost retransmission detection (RFC 8985 6.2, ours).
    /// Returns whether fast recovery began and whether chunks were marked.
    fn fast_retransmit(
        &mut self,
        sack: &Sack,
        outcome: &SackOutcome,
        packets_before: u32,
        env: &TxEnv<'_>,
    ) -> (bool, bool) {
        if sack.gap_blocks.is_empty() && !outcome.reneged {
            // No TSN is reported missing.
            return (false, false);
        }
        let outstanding = &self.outstanding;
        let Some(limit) = self
            .fast_recovery
            .miss_limit(outcome.cum_advanced, outcome.htna, || {
                outstanding.highest_gap_acked()
            })
        else {
            return (false, false);
        };
        // Seed 001 4.3: a thin stream fast-retransmits on the first miss indication.
        let thin = thin::is_thin(env.cfg, packets_before);
        // A lost retransmission is judged only on evidence whose send time is
        // certain: the HTNA chunk sent once (a SACK drawn by an earlier copy
        // of a chunk resent since would report a retransmission missing that
        // has not had time to arrive).
        let again = env.cfg.lost_retransmission_detection && outcome.htna_sent_once;
        let marked = self.outstanding.count_misses(
            limit,
            thin::dupthresh(env.cfg, thin),
            outcome.htna_sent,
            again,
        );
        if marked.is_empty() {
            return (false, false);
        }
        if env.cfg.rack {
            for &tsn in &marked {
                self.rack.on_retransmitted_as_lost(tsn);
            }
        }
        // Enter fast recovery; the exit point is the highest outstanding TSN.
        let entered = self.fast_recovery.enter(self.outstanding.next_tsn().prev());
        (entered, true)
    }

    /// RACK-TLP, on a SACK: RFC 8985 6.2 steps 2 to 5 (the chunks it newly
    /// acknowledged, its Duplicate TSNs as DSACK, then loss detection) and
    /// 6.3 (the reordering timer). Returns whether fast recovery began and
    /// whether chunks were marked.
    fn rack_on_sack(
        &mut self,
        now: Time,
        sack: &Sack,
        outcome: &SackOutcome,
        env: &mut TxEnv<'_>,
    ) -> (bool, bool) {
        self.rack.on_delivered(now, &outcome.delivered);
        self.rack.on_duplicates(
            &sack.dup_tsns,
            Tsn(sack.cum_tsn_ack),
            self.outstanding.next_tsn(),
        );
        self.rack_detect(now, env)
    }

    /// RFC 8985 6.2 step 5 and 6.3: marks the chunks RACK finds lost as
    /// fast retransmissions, in one recovery episode with one cwnd reduction
    /// (RFC 8985 9.3, RFC 9260 7.2.4), and (re)arms the reordering timer for
    /// those not due yet. Chunks the miss-indication count marked are no
    /// longer in flight, so no loss is counted twice. Returns whether fast
    /// recovery began and whether chunks were marked.
    fn rack_detect(&mut self, now: Time, env: &mut TxEnv<'_>) -> (bool, bool) {
        let thin = self.is_thin(env.cfg);
        let reo_wnd = self.rack.reo_wnd(
            self.fast_recovery.in_recovery(),
            self.outstanding.gap_acked_chunks(),
            thin::dupthresh(env.cfg, thin),
            env.path().rto.srtt(),
        );
        let found = self
            .rack
            .detect_loss(now, reo_wnd, self.outstanding.in_flight_sent());
        match found.timeout {
            // RFC 8985 6.3; the probe waits while the timer runs (RFC 8985 8).
            Some(after) => {
                env.timers.start(TimerKind::RackReorder, now, after);
                env.timers.stop(TimerKind::TailLossProbe);
            }
            None => env.timers.stop(TimerKind::RackReorder),
        }
        let flight_before = self.outstanding.window_flight();
        let mut marked = false;
        for tsn in found.lost {
            if self.outstanding.mark_lost(tsn) {
                self.rack.on_retransmitted_as_lost(tsn);
                self.counters.rack_losses += 1;
                marked = true;
            }
        }
        // 6.2.1 C.
        self.peer_window
            .on_returned(flight_before - self.outstanding.window_flight());
        let entered = marked && self.fast_recovery.enter(self.outstanding.next_tsn().prev());
        (entered, marked)
    }

    /// RACK's reordering timer fired (RFC 8985 6.3): the chunks it waited
    /// for are lost if still unacknowledged.
    pub fn on_rack_timer(&mut self, now: Time, env: &mut TxEnv<'_>) {
        if !env.cfg.rack {
            return;
        }
        let flight_unmarked = self.outstanding.flight_size();
        let (entered, marked) = self.rack_detect(now, env);
        if marked {
            // The controller hears of every loss, however found (cc/bbr.rs's
            // loss-rate ceiling counts them).
            let lost = flight_unmarked.saturating_sub(self.outstanding.flight_size());
            env.path_mut().cc.on_lost(now, lost);
        }
        if entered {
            env.path_mut().cc.on_fast_retransmit(now);
            self.counters.fast_recoveries += 1;
        }
        if marked {
            self.bypass_cwnd_once = true;
            env.timers.stop(TimerKind::TailLossProbe);
        } else {
            // Nothing was lost after all: the probe guards the tail again.
            self.arm_tail_probe(now, env);
        }
    }

    /// RACK-TLP, on a SACK: what it says of an unanswered probe (RFC 8985
    /// 7.4), and of whether the peer answers the I bit at once.
    fn judge_probe(
        &mut self,
        now: Time,
        sack: &Sack,
        outcome: &SackOutcome,
        packets_acked: u32,
        env: &mut TxEnv<'_>,
    ) {
        let min_rtt = self.rack.min_rtt().unwrap_or(Duration::ZERO);
        let peer_delay = env.cfg.assumed_peer_sack_delay();
        // Only a SACK that nothing but the I bit made immediate: one
        // packet newly acknowledged, no gap, no duplicate.
        if packets_acked == 1 && sack.gap_blocks.is_empty() && sack.dup_tsns.is_empty() {
            let newest = outcome
                .delivered
                .iter()
                .filter(|d| !d.retransmitted)
                .max_by_key(|d| d.sent);
            if let Some(d) = newest
                && d.immediate
            {
                self.i_bit.on_sample(now.since(d.sent), min_rtt, peer_delay);
            }
        }
        let Some(mut episode) = self.tail_probe.episode.take() else {
            return;
        };
        let newly_acked = outcome.delivered.iter().any(|d| d.tsn == episode.tsn);
        match episode.on_sack(now, &sack.dup_tsns, newly_acked, min_rtt) {
            ProbeVerdict::Open => self.tail_probe.episode = Some(episode),
            ProbeVerdict::Needless => self.i_bit.on_late(),
            // RFC 8985 7.4: the probe repaired a loss, which calls for the
            // congestion response of a fast recovery (once per episode).
            // A loss this SACK reveals besides joins the same episode.
            ProbeVerdict::RepairedLoss => {
                let new_episode = if self.outstanding.is_empty() {
                    !self.fast_recovery.in_recovery()
                } else {
                    self.fast_recovery.enter(self.outstanding.next_tsn().prev())
                };
                if new_episode {
                    env.path_mut().cc.on_fast_retransmit(now);
                    self.counters.fast_recoveries += 1;
                }
            }
            ProbeVerdict::Closed => {}
        }
    }

    /// RFC 5827 (seed 000 2.3 for the packet-based form): too little is
    /// outstanding for the threshold ever to be reached; the chunks below the
    /// HTNA go now, or after the reordering delay (RFC 5827 6). Returns
    /// whether fast recovery began and whether chunks were marked.
    fn early_retransmit(
        &mut self,
        now: Time,
        outcome: &SackOutcome,
        window: &early_retransmit::Window,
        queued: Option<usize>,
        env: &mut TxEnv<'_>,
    ) -> (bool, bool) {
        let Some(htna) = outcome.htna else {
            return (false, false);
        };
        if !early_retransmit::fires(
            env.cfg.early_retransmit,
            window,
            env.path().cc.pmdcs(),
            self.new_data_ready(queued),
        ) {
            return (false, false);
        }
        if env.cfg.early_retransmit_delay {
            // RFC 5827 6: wait a little in case the packet was only reordered.
            self.early_retransmit_pending = self
                .outstanding
                .chunks()
                .filter(|c| c.state == ChunkState::InFlight && c.tsn.is_before(htna))
                .map(|c| c.tsn)
                .collect();
            let wait = early_retransmit::delay(env.path().rto.srtt());
            env.timers.start(TimerKind::EarlyRetransmit, now, wait);
            return (false, false);
        }
        let marked = self.mark_early_retransmit(htna);
        let entered = marked && self.fast_recovery.enter(self.outstanding.next_tsn().prev());
        (entered, marked)
    }

    /// Early Retransmit fires: the chunks in flight below `limit` (the one
    /// packet left) go out as fast retransmissions (RFC 5827 3.2). Returns
    /// whether any was marked.
    fn mark_early_retransmit(&mut self, limit: Tsn) -> bool {
        let flight_before = self.outstanding.window_flight();
        let marked = self
            .outstanding
            .mark_missing_below(limit, RetransmitCause::EarlyRetransmit);
        self.peer_window
            .on_returned(flight_before - self.outstanding.window_flight());
        !marked.is_empty()
    }

    /// 6.3.2 R2 to R4, with RTO restart (RFC 7765) and the ack-reach floor.
    fn restart_t3(
        &mut self,
        now: Time,
        outcome: &SackOutcome,
        queued: Option<usize>,
        env: &mut TxEnv<'_>,
    ) {
        let restart = rto_restart::applies(
            env.cfg.rto_restart,
            self.outstanding.packets_outstanding(),
            self.new_data_ready(queued),
        );
        let earliest = self.outstanding.earliest_unacked();
        // T3 watches the earliest chunk, with its destination's RTO (6.3.2).
        let rto = self.rto(env.cfg, env.paths.get(earliest.map_or(env.to, |c| c.path)));
        match t3::on_sack(earliest.is_some(), outcome.earliest_acked, outcome.reneged) {
            t3::OnSack::Stop => env.timers.stop(TimerKind::T3Rtx),
            t3::OnSack::Restart => {
                let Some(earliest) = earliest else { return };
                let mut timeout = t3::restart_timeout(rto, restart, now.since(earliest.last_sent));
                if let Some(peer_sack_delay) = Self::ack_reach_floor(env.cfg) {
                    timeout = ack_reach::apply(
                        timeout,
                        &ack_reach::AckReach {
                            now,
                            htna_sent: outcome.htna_sent.unwrap_or(now),
                            earliest_sent: earliest.last_sent,
                            immediate: earliest.immediate,
                            peer_sack_delay,
                            rttvar: env.path().rto.rttvar(),
                            packets_outstanding: self.outstanding.packets_outstanding(),
                            spacing: env.path().ack_spacing.per_packet(),
                            rto,
                        },
                    );
                }
                env.timers.start(TimerKind::T3Rtx, now, timeout);
            }
            t3::OnSack::StartIfStopped => env.timers.start_if_stopped(TimerKind::T3Rtx, now, rto),
            t3::OnSack::Keep => {}
        }
    }

    /// The ack-reach floor guards Brisk's shorter timers: RTO restart and a
    /// thin RTO.Min (`recovery::ack_reach`); standard timers are left exactly
    /// as RFC 9260 has them. The peer's SACK delay it assumes, when it applies.
    fn ack_reach_floor(cfg: &Config) -> Option<Duration> {
        (cfg.ack_reach_floor && (cfg.rto_restart || cfg.thin_rto_min.is_some()))
            .then(|| cfg.assumed_peer_sack_delay())
    }

    /// F-RTO's question for SCTP, and RFC 3708 (`recovery::spurious`): does
    /// this SACK show that the chunk earliest at a T3 expiry had arrived?
    /// Then undo the expiry.
    fn judge_t3_episode(
        &mut self,
        sack: &Sack,
        tsn: Tsn,
        before: Option<ChunkState>,
        path: &mut Path,
    ) {
        let Some(state) = before else {
            // Acknowledged already, or abandoned: nothing left to judge by.
            self.spurious.close();
            return;
        };
        let acked_now = self
            .outstanding
            .get(tsn)
            .is_none_or(|c| c.state == ChunkState::GapAcked);
        let evidence = spurious::Evidence {
            duplicate: sack.dup_tsns.contains(&tsn.0),
            acked: acked_now && state != ChunkState::GapAcked,
        };
        if let spurious::Verdict::Spurious(b) = self.spurious.on_sack(evidence) {
            path.cc.undo(b.cwnd, b.ssthresh);
            path.rto.undo_back_off(b.backoff);
            self.counters.spurious_timeouts_undone += 1;
        }
    }

    /// RFC 8985 7.2: (re)arm the tail loss probe after new data went out or
    /// a SACK acknowledged new data; disarm it when nothing is outstanding.
    fn arm_tail_probe(&mut self, now: Time, env: &mut TxEnv<'_>) {
        if !env.cfg.tail_loss_probe && !env.cfg.rack {
            return;
        }
        // RFC 8985 8: while RACK's reordering timer runs, it decides first.
        if self.outstanding.earliest_unacked().is_none()
            || self.fast_recovery.in_recovery()
            || env.timers.is_running(TimerKind::RackReorder)
        {
            env.timers.stop(TimerKind::TailLossProbe);
            return;
        }
        let srtt = env.path().rto.srtt();
        let packets = self.outstanding.packets_outstanding();
        let pto = if env.cfg.rack {
            let delay = self
                .i_bit
                .ignored()
                .then(|| env.cfg.assumed_peer_sack_delay());
            tail_probe::rack_pto(srtt, packets, delay)
        } else {
            tail_probe::pto(srtt, packets, env.cfg.sack_delay)
        };
        let at = match self.outstanding.latest_packet_sent() {
            Some(latest) if env.cfg.rack => {
                tail_probe::rack_probe_at(now, latest, pto, tail_probe::rack_pto_margin(srtt))
            }
            _ => now + pto,
        };
        let t3 = env.timers.deadline(TimerKind::T3Rtx);
        match self.tail_probe.deadline_at(at, t3) {
            Some(at) => env
                .timers
                .start(TimerKind::TailLossProbe, now, at.since(now)),
            None => env.timers.stop(TimerKind::TailLossProbe),
        }
    }

    // --- Partial reliability (RFC 3758) ---

    /// RFC 3758 3.5 A: before chunks marked for retransmission go out again,
    /// those whose message's policy (RFC 7496) says so are abandoned, whole
    /// messages at a time. Returns the messages abandoned.
    pub fn abandon_due(&mut self, now: Time) -> Vec<MessageId> {
        if self.outstanding.marked() == 0 || self.outstanding.policed() == 0 {
            return Vec::new();
        }
        let mut due: Vec<MessageId> = self
            .outstanding
            .chunks()
            .filter(|c| {
                // A tail-loss probe is a copy, not a recovery: it goes
                // whatever the limit (RFC 8985 7.3; RFC 7496 4).
                let probe = c.state == ChunkState::Marked(RetransmitCause::TailLossProbe);
                matches!(c.state, ChunkState::Marked(_))
                    && !(probe && matches!(c.frag.reliability, Reliability::MaxRetransmits(_)))
                    && c.frag
                        .reliability
                        .abandons(c.frag.queued_at, c.counted_transmissions(), now)
            })
            .map(|c| c.frag.msg)
            .collect();
        // With I-DATA a message's chunks need not be adjacent (RFC 8260).
        due.sort_unstable();
        due.dedup();
        for &msg in &due {
            self.abandon(msg);
        }
        due
    }

    /// Abandons every chunk of `msg` not yet acknowledged (RFC 3758 3.5),
    /// its window returned (6.2.1 C).
    pub fn abandon(&mut self, msg: MessageId) {
        let flight_before = self.outstanding.window_flight();
        self.outstanding.abandon_message(msg);
        self.peer_window
            .on_returned(flight_before - self.outstanding.window_flight());
    }

    /// The never-sent end of an abandoned message takes a TSN, abandoned
    /// (RFC 3758 3.5; see `Outstanding::push_abandoned_end`).
    pub fn abandon_unsent_end(&mut self, end: PendingFragment, now: Time) {
        self.outstanding.push_abandoned_end(end, now);
    }

    /// The FORWARD TSN to send now, if one is due (RFC 3758 3.5 C, E, F):
    /// the Advanced.Peer.Ack.Point moved past the cumulative ack and past
    /// what the last FORWARD TSN said, or T3 expired since. At most
    /// `max_streams` stream entries.
    pub fn take_forward_tsn(&mut self, now: Time, max_streams: usize) -> Option<ForwardTsn> {
        if self.outstanding.abandoned() == 0 {
            return None;
        }
        let (point, streams) = self.outstanding.forward_tsn_point(max_streams);
        if !self.forward_due(now, point) {
            return None;
        }
        Some(ForwardTsn {
            new_cum_tsn: point.0,
            streams: streams
                .into_iter()
                .map(|(stream, ssn)| ForwardTsnStream {
                    stream_id: stream.0,
                    ssn: ssn.0,
                })
                .collect(),
        })
    }

    /// Whether a FORWARD TSN (or I-FORWARD-TSN) to `point` is due: it moves
    /// the peer past its cumulative ack, and says more than the last one
    /// (or that one was lost). If so it leaves now, remembered so that it is
    /// not repeated until lost (`repeat_lost_forward_tsn`).
    fn forward_due(&mut self, now: Time, point: Tsn) -> bool {
        if point == self.outstanding.cum_ack_point() || self.forwarded_to == Some(point) {
            return false;
        }
        self.forwarded_to = Some(point);
        self.forwarded_at = now;
        self.forwarded_before = self.outstanding.next_tsn();
        true
    }

    /// RFC 8260 2.3.1: [`take_forward_tsn`](Self::take_forward_tsn) for an
    /// association that sends I-DATA: the I-FORWARD-TSN to send now, if due,
    /// with at most `max_entries` (stream, U, MID) entries.
    pub fn take_iforward_tsn(&mut self, now: Time, max_entries: usize) -> Option<IForwardTsn> {
        if self.outstanding.abandoned() == 0 {
            return None;
        }
        let (point, entries) = self.outstanding.iforward_tsn_point(max_entries);
        if !self.forward_due(now, point) {
            return None;
        }
        Some(IForwardTsn {
            new_cum_tsn: point.0,
            streams: entries
                .into_iter()
                .map(|(stream, unordered, mid)| IForwardTsnStream {
                    stream_id: stream.0,
                    unordered,
                    mid,
                })
                .collect(),
        })
    }

    // --- Timers ---

    /// T3-rtx expired (6.3.3): what kind of expiry it is. The association
    /// counts the error (8.1, 8.2), then calls [`Self::retransmit_after_t3`].
    pub fn on_t3_expiry(&mut self, now: Time) -> T3Expiry {
        let Some(earliest) = self.outstanding.earliest_unacked() else {
            return T3Expiry::Idle;
        };
        self.counters.t3_expirations += 1;
        // RFC 9260 6.1 A: while the sender probes a closed window and keeps
        // receiving SACKs (one since the last expiry, its window still
        // closed), the expiry is no sign of an unreachable peer.
        let since = self.last_t3_expiry.replace(now);
        let cost = window_cost(earliest.size());
        let answered_probe = self
            .last_sack
            .is_some_and(|(at, rwnd)| since.is_none_or(|t| at > t) && rwnd < cost);
        T3Expiry::Expired {
            counts_as_error: !answered_probe,
            path: earliest.path,
        }
    }

    /// 6.3.3 E1 (collapse cwnd), E2 (back off, unless a thin stream's
    /// timeouts stay linear, seed 001 4.2.2) and E3 (mark every chunk in
    /// flight; the earliest go first, the rest as cwnd allows). Every other
    /// recovery in progress ends. `env.to` is the destination that timed out.
    pub fn retransmit_after_t3(&mut self, now: Time, env: &mut TxEnv<'_>) {
        self.t3_path = env.to;
        if env.cfg.spurious_timeout_undo
            && let Some(earliest) = self.outstanding.earliest_unacked()
        {
            let before = spurious::Before {
                cwnd: env.path().cc.cwnd(),
                ssthresh: env.path().cc.ssthresh(),
                backoff: env.path().rto.backoff(),
            };
            self.spurious.on_expiry(earliest.tsn, before);
        }
        // E1, and E2 unless a thin stream's timeouts stay linear.
        env.path_mut().cc.on_t3_expiry(now);
        if thin::backs_off(env.cfg, self.is_thin(env.cfg)) {
            env.path_mut().rto.back_off();
        }
        env.timers.stop(TimerKind::EarlyRetransmit);
        self.early_retransmit_pending.clear();
        env.timers.stop(TimerKind::TailLossProbe);
        env.timers.stop(TimerKind::RackReorder);
        self.tail_probe.probing = false;
        self.tail_probe.episode = None;
        self.probe_new_data = false;
        self.fast_recovery.reset();
        self.bypass_cwnd_once = false;
        // RFC 3758 3.5 E: a FORWARD TSN that is still needed goes again.
        self.forwarded_to = None;
        let flight_before = self.outstanding.window_flight();
        self.outstanding
            .mark_all_in_flight(RetransmitCause::T3Timeout);
        // 6.2.1 C. The retransmission itself restarts T3 (R1) when it goes out.
        self.peer_window
            .on_returned(flight_before - self.outstanding.window_flight());
    }

    /// The Early Retransmit delay ran out (RFC 5827 6): retransmit the chunks
    /// that are still missing; a SACK in the meantime may have resolved them.
    pub fn on_early_retransmit_timer(&mut self, now: Time, env: &mut TxEnv<'_>) {
        let pending = std::mem::take(&mut self.early_retransmit_pending);
        let Some(&last) = pending.last() else { return };
        let still_missing = pending.iter().any(|tsn| {
            self.outstanding
                .get(*tsn)
                .is_some_and(|c| c.state == ChunkState::InFlight && !c.fast_retransmitted)
        });
        if !still_missing || self.fast_recovery.in_recovery() {
            return;
        }
        let flight_unmarked = self.outstanding.flight_size();
        if self.mark_early_retransmit(last.next()) {
            let lost = flight_unmarked.saturating_sub(self.outstanding.flight_size());
            env.path_mut().cc.on_lost(now, lost);
            if self.fast_recovery.enter(self.outstanding.next_tsn().prev()) {
                env.path_mut().cc.on_fast_retransmit(now);
                self.counters.fast_recoveries += 1;
            }
            self.bypass_cwnd_once = true;
        }
    }

    /// RFC 8985 7.3: the probe timer fired. New data goes if the windows
    /// allow (its SACK does the probing); otherwise the highest outstanding
    /// chunk again, one packet whatever cwnd says. No cwnd reduction.
    pub fn on_tail_probe_timer(&mut self, now: Time, queued: Option<usize>, env: &mut TxEnv<'_>) {
        if self.outstanding.earliest_unacked().is_none() || self.fast_recovery.in_recovery() {
            return;
        }
        self.tail_probe.probing = true;
        let cwnd_open = env
            .path_mut()
            .cc
            .allows_new_data(self.outstanding.flight_size());
        if self.new_data_ready(queued) && cwnd_open {
            // RACK-TLP: the new data is the probe, and sets the I bit.
            self.probe_new_data = env.cfg.rack;
            return;
        }
        if let Some(tsn) = self.outstanding.highest_in_flight()
            && self.mark_returning(tsn, RetransmitCause::TailLossProbe)
        {
            self.bypass_cwnd_once = true;
            if env.cfg.rack {
                // RFC 8985 7.4: TLP.end_seq, TLP.is_retrans. Sent at once:
                // the packet goes whatever cwnd says.
                self.tail_probe.episode = Some(ProbeEpisode {
                    tsn,
                    sent: now,
                    acked_early: false,
                });
            }
        }
    }

    /// PKTDROP, sending side: every DATA chunk the report identifies that is
    /// still in flight goes again at once; no cwnd or ssthresh reduction, no
    /// RTT sample from it. Returns whether any was marked.
    pub fn on_pktdrop(&mut self, pd: &PktDrop<'_>) -> bool {
        let mut marked = false;
        for (tsn, prefix) in pktdrop::embedded_data(&pd.dropped) {
            let tsn = Tsn(tsn);
            let Some(chunk) = self.outstanding.get(tsn) else {
                continue;
            };
            if chunk.state != ChunkState::InFlight
                || !pktdrop::matches(&chunk.frag.payload, &prefix)
            {
                continue;
            }
            marked |= self.mark_returning(tsn, RetransmitCause::PacketDrop);
        }
        if marked {
            // At once, whatever cwnd says: the loss was not congestion.
            self.bypass_cwnd_once = true;
        }
        marked
    }

    /// Marks one chunk in flight, its window returned (6.2.1 C).
    fn mark_returning(&mut self, tsn: Tsn, cause: RetransmitCause) -> bool {
        let flight_before = self.outstanding.window_flight();
        let marked = self.outstanding.mark(tsn, cause);
        self.peer_window
            .on_returned(flight_before - self.outstanding.window_flight());
        marked
    }
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use bytes::Bytes;

    use super::*;
    use crate::message::MessageId;
    use crate::wire::chunk::DataFlags;

    const INITIAL: Tsn = Tsn(1000);

    struct Fixture {
        cfg: Config,
        paths: Paths,
        timers: TimerTable,
        rq: RetransmissionQueue,
    }

    impl Fixture {
        fn new(cfg: Config) -> Self {
            let remote: SocketAddr = "192.0.2.1:9899".parse().unwrap();
            let mut rq = RetransmissionQueue::new(INITIAL);
            rq.on_peer_window(100_000);
            Self {
                paths: Paths::new(Path::new(remote, &cfg, 100_000)),
                cfg,
                timers: TimerTable::default(),
                rq,
            }
        }

        fn env(&mut self) -> (&mut RetransmissionQueue, TxEnv<'_>) {
            let env = TxEnv {
                cfg: &self.cfg,
                paths: &mut self.paths,
                to: PathId::FIRST,
                timers: &mut self.timers,
            };
            (&mut self.rq, env)
        }

        /// Sends one 100-byte chunk in a packet of its own at `ms`.
        fn send(&mut self, ms: u64) -> Tsn {
            let now = Time::from_millis(ms);
            let (rq, mut env) = self.env();
            let p = rq.begin_packet(now);
            let frag = PendingFragment {
                msg: MessageId(ms),
                stream_id: crate::serial::StreamId(0),
                ssn: crate::serial::Ssn(0),
                ppid: 0,
                flags: DataFlags::UNFRAGMENTED,
                payload: Bytes::from(vec![0u8; 100]),
                queued_at: now,
                reliability: crate::message::Reliability::Reliable,
                idata: false,
                mid: 0,
                fsn: 0,
            };
            let tsn = rq.send_new(frag, now, p, &mut env);
            rq.end_packet();
            tsn
        }

        fn sack(&mut self, ms: u64, cum: Tsn, gaps: &[(u16, u16)]) -> SackResult {
            let sack = Sack {
                cum_tsn_ack: cum.0,
                a_rwnd: 100_000,
                gap_blocks: gaps
                    .iter()
                    .map(|&(start, end)| crate::wire::chunk::GapBlock { start, end })
                    .collect(),
                dup_tsns: vec![],
            };
            let (rq, mut env) = self.env();
            rq.on_sack(Time::from_millis(ms), &sack, None, &mut env)
                .unwrap()
        }
    }

    /// What a 100-byte chunk takes of the peer's window: 116 bytes on the
    /// wire plus the receiver's bookkeeping.
    const COST: u32 = 116 + PEER_CHUNK_OVERHEAD;
    use crate::tx::outstanding::PEER_CHUNK_OVERHEAD;

    #[test]
    fn the_peer_window_follows_rfc_9260_6_2_1_b_c_and_d() {
        let mut f = Fixture::new(Config::rfc9260());
        f.send(0);
        f.send(0);
        // B: each chunk sent takes its cost.
        assert_eq!(f.rq.peer_rwnd(), 100_000 - 2 * COST);
        // C: T3 marks both for retransmission and returns them.
        assert_eq!(
            f.rq.on_t3_expiry(Time::from_millis(1000)),
            T3Expiry::Expired {
                counts_as_error: true,
                path: PathId::FIRST,
            }
        );
        let (rq, mut env) = f.env();
        rq.retransmit_after_t3(Time::from_millis(1000), &mut env);
        assert_eq!(f.rq.peer_rwnd(), 100_000);
        assert_eq!(f.rq.outstanding().marked(), 2);
        // D ii: a SACK sets it to a_rwnd less what is outstanding.
        let result = f.sack(1100, INITIAL, &[]);
        assert!(result.peer_alive);
        assert_eq!(f.rq.peer_rwnd(), 100_000);
        assert_eq!(f.rq.counters().t3_expirations, 1);
    }

    #[test]
    fn a_fast_retransmit_halves_cwnd_under_rfc9260_and_leaves_it_under_bbr() {
        use crate::config::CongestionAlgorithm;
        for (cc, after) in [
            (CongestionAlgorithm::Rfc9260, 20_000),
            (CongestionAlgorithm::Bbr, 40_000),
        ] {
            let mut cfg = Config::rfc9260();
            cfg.initial_cwnd = Some(40_000);
            cfg.congestion_control = cc;
            let mut f = Fixture::new(cfg);
            for ms in 0..5 {
                f.send(ms);
            }
            // The first chunk is missing from three SACKs (7.2.4).
            let before = INITIAL.prev();
            f.sack(100, before, &[(2, 2)]);
            f.sack(101, before, &[(2, 3)]);
            f.sack(102, before, &[(2, 4)]);
            assert_eq!(f.rq.counters().fast_recoveries, 1, "{cc:?}");
            let cwnd = f.paths.get(PathId::FIRST).cc.cwnd();
            assert!(cwnd >= after && cwnd < after + 1_000, "{cc:?}: cwnd {cwnd}");
        }
    }

    #[test]
    fn sending_arms_t3_and_a_sack_of_everything_stops_it() {
        let mut f = Fixture::new(Config::rfc9260());
        let first = f.send(0);
        assert_eq!(
            f.timers.deadline(TimerKind::T3Rtx),
            Some(Time::from_secs(1)),
            "R1: RTO.Initial"
        );
        f.send(10);
        assert_eq!(
            f.timers.deadline(TimerKind::T3Rtx),
            Some(Time::from_secs(1))
        );
        let result = f.sack(50, first, &[]);
        assert_eq!(result.acked_messages.len(), 1);
        // R3: the earliest was acknowledged: restart with the RTO (C2: 3 * 50 ms
        // = 150 ms is below RTO.Min, so 1 s).
        assert_eq!(
            f.timers.deadline(TimerKind::T3Rtx),
            Some(Time::from_millis(1050))
        );
        f.sack(60, first.next(), &[]);
        assert_eq!(f.timers.deadline(TimerKind::T3Rtx), None, "R2");
        assert!(f.rq.outstanding().is_empty());
    }

    #[test]
    fn a_thin_stream_fast_retransmits_on_one_miss_and_may_bypass_cwnd_once() {
        let mut f = Fixture::new(Config::thin_stream());
        let lost = f.send(0);
        f.send(0);
        // One SACK reports the first chunk missing: seed 001 4.3.
        f.sack(30, lost.prev(), &[(2, 2)]);
        assert_eq!(f.rq.next_marked().map(|c| c.tsn), Some(lost));
        assert!(f.rq.may_bypass_cwnd());
        assert_eq!(f.rq.counters().fast_recoveries, 1);
        let (rq, mut env) = f.env();
        let p = rq.begin_packet(Time::from_millis(31));
        let resent = rq
            .resend(lost, Time::from_millis(31), p, true, &mut env)
            .unwrap();
        rq.on_retransmissions_sent();
        assert_eq!(resent.cause, RetransmitCause::FastRetransmit);
        assert_eq!(resent.transmissions, 2);
        assert!(!f.rq.may_bypass_cwnd(), "7.2.4: one packet only");
        assert_eq!(
            f.rq.counters().retransmissions[RetransmitCause::FastRetransmit as usize],
            1
        );
    }

    #[test]
    fn a_t3_expiry_probing_a_window_the_peer_keeps_closed_is_no_error() {
        let mut f = Fixture::new(Config::rfc9260());
        let first = f.send(0);
        // The peer answers with a closed window and acknowledges nothing.
        let sack = Sack {
            cum_tsn_ack: first.prev().0,
            a_rwnd: 0,
            gap_blocks: vec![],
            dup_tsns: vec![],
        };
        let (rq, mut env) = f.env();
        let result = rq
            .on_sack(Time::from_millis(500), &sack, None, &mut env)
            .unwrap();
        assert!(result.peer_alive, "6.1 A: a SACK answering the probe");
        assert_eq!(
            f.rq.on_t3_expiry(Time::from_secs(1)),
            T3Expiry::Expired {
                counts_as_error: false,
                path: PathId::FIRST,
            }
        );
    }
}
