//! The association: its state machine (RFC 9260 4) and the dispatch of received
//! chunks to the rules that handle them.
//!
//! Each concern has its own file: `handshake.rs` (5.1, 5.2), `receive.rs`
//! (DATA in, SACK out: 6.2, 6.5, 6.9), `sack.rs` (SACK in: 6.2.1, 6.3, 7.2),
//! `transmit.rs` (packets out: 6.1, 6.10), `shutdown.rs` (9), `heartbeat.rs`
//! (8.3), `multihoming.rs` (paths, failure detection and failover: 6.4, 8.2;
//! RFC 7829), `reconfig/` (stream reconfiguration, RFC 6525) and `timers.rs`
//! (what happens when each timer fires).

mod handshake;
mod heartbeat;
mod multihoming;
mod receive;
mod reconfig;
mod sack;
mod shutdown;
mod timers;
mod transmit;

use std::collections::VecDeque;
use std::net::SocketAddr;

use rand::RngCore;

use crate::cc::CongestionController;
use crate::config::Config;
use crate::cookie::CookieSealer;
use crate::events::{CloseReason, Event, Stats};
use crate::message::{IncomingMessage, MessageId, OutgoingMessage};
use crate::path::{Path, PathId, Paths};
use crate::recovery::failover::FailoverCause;
use crate::recovery::pktdrop;
use crate::rx::{Delivery, IReassembly, MidOrdering, Reassembly, SackDecision, TsnTracker};
use crate::time::Time;
use crate::timer::{TimerTable, earliest};
use crate::tx::retransmission_queue::{RetransmissionQueue, TxEnv};
use crate::tx::send_queue::SendQueue;
use crate::tx::stream_scheduler::StreamScheduler;
use crate::wire::CommonHeader;
use crate::wire::cause::ErrorCause;
use crate::wire::chunk::{Abort, Chunk, OperationError};

pub use crate::tx::send_queue::SendError;
pub use crate::tx::stream_scheduler::SchedulingError;
pub use multihoming::{PathError, PathInfo};
pub use reconfig::{MAX_REQUEST_RETRANSMITS, NO_ANSWER, ReconfigError};
pub use transmit::Transmit;

use handshake::Handshake;
use heartbeat::Heartbeats;

/// ERROR chunks an association sends per second at most, in bursts of as many.
const ERRORS_PER_SECOND: u32 = 10;

/// Identifies an association within its endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AssocId(pub u64);

/// The states of RFC 9260 4 (CLOSED is the association's absence, or `Closed`
/// once it has ended and its last events are being drained).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    CookieWait,
    CookieEchoed,
    Established,
    ShutdownPending,
    ShutdownSent,
    ShutdownReceived,
    ShutdownAckSent,
    Closed,
}

/// A control chunk waiting to be sent, with the verification tag its packet
/// must carry when that is not the peer's tag.
#[derive(Debug, Clone)]
pub(crate) struct Control {
    pub chunk: Chunk<'static>,
    pub vtag: Option<u32>,
    /// Send in a packet of its own.
    pub alone: bool,
    /// The destination it must go to (a heartbeat's, a reply's: 6.4); any
    /// packet may carry it otherwise.
    pub to: Option<PathId>,
}

impl Control {
    pub fn new(chunk: Chunk<'static>) -> Self {
        Self {
            chunk,
            vtag: None,
            alone: false,
            to: None,
        }
    }

    /// The same chunk, bound for destination `id`.
    pub fn to(self, id: PathId) -> Self {
        Self {
            to: Some(id),
            ..self
        }
    }

    /// A chunk whose packet carries `tag` and nothing else.
    pub fn with_tag(chunk: Chunk<'static>, tag: u32) -> Self {
        Self {
            chunk,
            vtag: Some(tag),
            alone: true,
            to: None,
        }
    }

    /// A chunk sent in a packet of its own, with the peer's tag.
    pub fn alone(chunk: Chunk<'static>) -> Self {
        Self {
            chunk,
            vtag: None,
            alone: true,
            to: None,
        }
    }

    /// Whether the chunk must not share its packet.
    pub fn is_alone(&self) -> bool {
        self.alone || self.chunk.must_be_alone()
    }
}

/// What the endpoint lends an association while it handles input.
pub(crate) struct Ctx<'a> {
    pub sealer: &'a CookieSealer,
    pub rng: &'a mut dyn RngCore,
    /// Whether another association of the endpoint has this tag, so that a
    /// new one is drawn (5.2.2).
    pub tag_in_use: &'a dyn Fn(u32) -> bool,
    /// The endpoint's own IP addresses, for an INIT ACK (5.1.2).
    pub addresses: &'a [std::net::IpAddr],
}

/// One SCTP association.
#[derive(Debug)]
pub struct Association {
    id: AssocId,
    cfg: Config,
    state: State,
    local_port: u16,
    peer_port: u16,
    local_tag: u32,
    peer_tag: u32,
    /// Tie-tags (RFC 9260 5.2.2), set when an unexpected INIT is answered.
    local_tie_tag: u32,
    peer_tie_tag: u32,
    /// The peer's destination addresses: where data, retransmissions and
    /// replies go (RFC 9260 6.4), and each one's state.
    paths: Paths,
    /// Peer addresses confirmed since the endpoint last asked, for its
    /// lookup (an unconfirmed one never enters it, RFC 9260 5.4).
    new_remotes: Vec<SocketAddr>,

    /// Every timer of the association.
    timers: TimerTable,

    // Sending.
    send_queue: SendQueue,
    /// Everything sent and not yet cumulatively acknowledged, and the rules
    /// that resend it.
    rtx: RetransmissionQueue,
    /// PKTDROP was negotiated: we and the peer both offered it.
    pktdrop: bool,
    /// Partial reliability was negotiated (RFC 3758 3.1): both offered it.
    pr_sctp: bool,
    /// Stream reconfiguration (RFC 6525): negotiation, requests both ways.
    reconfig: reconfig::Reconfig,
    /// I-DATA was negotiated (RFC 8260 2.2): both listed it.
    idata: bool,
    /// New-data packets left in this transmission opportunity (Max.Burst, 6.1).
    burst_budget: u32,
    /// When the latest input came (a packet, a timer, an abort): the time
    /// a close stamps on the messages it hands over.
    last_input: Time,
    next_message_id: u64,
    /// Streams negotiated each way.
    outbound_streams: u16,

    // Receiving.
    tracker: TsnTracker,
    sack_decision: SackDecision,
    reassembly: Reassembly,
    /// I-DATA (RFC 8260): reassembly by message and ordering by MID.
    ireassembly: IReassembly,
    mid_ordering: MidOrdering,
    delivery: Delivery,
    /// a_rwnd of the last SACK we sent, for window updates.
    advertised_rwnd: u32,
    /// Send a SACK in the next packet even if not otherwise due.
    sack_requested: bool,
    /// Where the DATA of the packet being handled came from, if a known path.
    packet_from: Option<PathId>,

    handshake: Handshake,
    heartbeats: Heartbeats,
    /// Consecutive errors of the association (8.1).
    errors: u32,

    /// Control chunks waiting for the next packet.
    control: VecDeque<Control>,
    /// ERROR chunks we may still send, and whether the packet being handled
    /// already drew one.
    error_limiter: crate::rate::TokenBucket,
    error_sent_for_packet: bool,
    events: VecDeque<Event>,
    /// What the association itself counts; `stats()` adds the sending side's
    /// counters and the live values.
    counters: Counters,
}

/// The counters the association keeps itself, each where its event happens.
#[derive(Debug, Clone, Default)]
struct Counters {
    packets_sent: u64,
    packets_received: u64,
    data_chunks_received: u64,
    duplicate_tsns_received: u64,
    sacks_sent: u64,
    sacks_received: u64,
    messages_sent: u64,
    messages_acked: u64,
    messages_received: u64,
    payload_bytes_received: u64,
    malformed_chunks: u64,
    data_dropped_window_full: u64,
    errors_suppressed: u64,
    data_reneged: u64,
    pktdrops_sent: u64,
    pktdrops_received: u64,
    messages_abandoned: u64,
    forward_tsns_sent: u64,
    forward_tsns_received: u64,
    reconfig_requests_sent: u64,
    reconfig_requests_received: u64,
    reconfig_retransmissions: u64,
    streams_reset: u64,
    /// Data path changes by cause, in [`FailoverCause::ALL`] order.
    data_path_changes: [u64; FailoverCause::ALL.len()],
    paths_failed: u64,
    paths_potentially_failed: u64,
    paths_recovered: u64,
    heartbeats_sent: u64,
}

impl Association {
    /// A new association in a given state, with no peer information yet.
    #[allow(clippy::too_many_arguments)]
    fn new(
        id: AssocId,
        cfg: Config,
        state: State,
        remote: SocketAddr,
        local_port: u16,
        peer_port: u16,
        local_tag: u32,
        local_initial_tsn: u32,
    ) -> Self {
        let paths = Paths::new(Path::new(remote, &cfg, cfg.receive_buffer));
        let send_queue = SendQueue::with_scheduler(
            cfg.outbound_streams,
            cfg.max_message_size,
            cfg.send_buffer,
            cfg.stream_scheduler,
        );
        Self {
            id,
            state,
            local_port,
            peer_port,
            local_tag,
            peer_tag: 0,
            local_tie_tag: 0,
            peer_tie_tag: 0,
            paths,
            new_remotes: Vec::new(),
            timers: TimerTable::default(),
            send_queue,
            rtx: RetransmissionQueue::new(crate::serial::Tsn(local_initial_tsn)),
            pktdrop: false,
            pr_sctp: false,
            reconfig: reconfig::Reconfig::new(local_initial_tsn),
            idata: false,
            burst_budget: 0,
            last_input: Time::ZERO,
            next_message_id: 0,
            outbound_streams: cfg.outbound_streams,
            tracker: TsnTracker::new(crate::serial::Tsn(0)),
            sack_decision: SackDecision::new(cfg.sack_freq, cfg.sack_delay),
            reassembly: Reassembly::new(0, cfg.largest_message_received()),
            ireassembly: IReassembly::new(0, cfg.largest_message_received()),
            mid_ordering: MidOrdering::new(0),
            delivery: Delivery::new(cfg.max_inbound_streams),
            advertised_rwnd: cfg.receive_buffer,
            sack_requested: false,
            packet_from: None,
            handshake: Handshake::default(),
            heartbeats: Heartbeats::default(),
            errors: 0,
            control: VecDeque::new(),
            error_limiter: crate::rate::TokenBucket::new(
                ERRORS_PER_SECOND,
                std::time::Duration::from_secs(1),
            ),
            error_sent_for_packet: false,
            events: VecDeque::new(),
            counters: Counters::default(),
            cfg,
        }
    }

    pub fn id(&self) -> AssocId {
        self.id
    }

    pub fn state(&self) -> State {
        self.state
    }

    /// The peer's primary transport address (RFC 9260 6.4).
    pub fn remote(&self) -> SocketAddr {
        self.paths.get(self.paths.primary()).remote
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Streams we may send on (negotiated; RFC 9260 5.1.1).
    pub fn outbound_streams(&self) -> u16 {
        self.outbound_streams
    }

    /// Streams the peer may send on.
    pub fn inbound_streams(&self) -> u16 {
        self.delivery.inbound_streams()
    }

    /// Whether partial reliability was negotiated (RFC 3758 3.1): both ends
    /// offered it. Without it every message is sent reliably.
    pub fn partial_reliability(&self) -> bool {
        self.pr_sctp
    }

    /// Whether message interleaving was negotiated (RFC 8260 2.2): both ends
    /// listed I-DATA, so all user data goes as I-DATA (and partial
    /// reliability skips with I-FORWARD-TSN).
    pub fn message_interleaving(&self) -> bool {
        self.idata
    }

    pub(crate) fn interleaving(&self) -> bool {
        self.idata
    }

    /// RFC 8260 2.2: the handshake settled whether I-DATA is used; the
    /// peer's receive buffer is `peer_rwnd`.
    pub(crate) fn set_interleaving(&mut self, on: bool, peer_rwnd: u32) {
        self.idata = on;
        self.send_queue.set_interleaving(on);
        self.send_queue.set_peer_buffer(peer_rwnd);
    }

    /// Queues a message. It goes out as soon as the association is established
    /// and the windows allow. Fails, queuing nothing, if the association is
    /// shutting down or closed, the stream does not exist, the message is empty
    /// or too large, or the send buffer is full.
    pub fn send(&mut self, now: Time, msg: OutgoingMessage) -> Result<MessageId, SendError> {
        match self.state {
            State::CookieWait | State::CookieEchoed | State::Established => {}
            State::Closed => return Err(SendError::Closed),
            _ => return Err(SendError::ShuttingDown),
        }
        // The send buffer holds queued and unacknowledged data alike.
        let held = self.send_held();
        let limit = self.cfg.send_buffer;
        let with_it = self.send_charge(
            self.send_queue.buffered_bytes() + msg.payload.len(),
            self.send_queue.len() + 1,
        );
        if with_it > limit
            && !msg.payload.is_empty()
            && msg.payload.len() <= self.cfg.max_message_size
        {
            return Err(SendError::BufferFull {
                buffered: held,
                limit,
            });
        }
        let id = MessageId(self.next_message_id);
        self.send_queue.push(id, msg, now)?;
        self.next_message_id += 1;
        self.counters.messages_sent += 1;
        self.new_transmission_opportunity();
        Ok(id)
    }

    /// The stream scheduler in use (RFC 8260 3; `Config::stream_scheduler`).
    pub fn stream_scheduler(&self) -> StreamScheduler {
        self.send_queue.scheduler()
    }

    /// Changes the stream scheduler (RFC 8260 3). Queued messages stay
    /// queued, in order within their streams; a message partly sent
    /// finishes first (RFC 9260 6.9). Priorities and weights are kept.
    pub fn set_stream_scheduler(&mut self, scheduler: StreamScheduler) {
        self.send_queue.set_scheduler(scheduler);
        self.cfg.stream_scheduler = scheduler;
    }

    /// Sets the priority of an outbound stream for the priority scheduler
    /// (RFC 8260 3.4): lower values go first, equal values take turns.
    /// Every stream starts at priority 0. Fails for a stream that does not
    /// exist.
    pub fn set_stream_priority(
        &mut self,
        stream: u16,
        priority: u16,
    ) -> Result<(), SchedulingError> {
        self.send_queue.set_priority(stream, priority)
    }

    /// Sets the weight of an outbound stream for weighted fair queueing
    /// (RFC 8260 3.6): streams share the bytes sent in proportion to their
    /// weights. Every stream starts at weight 1. Fails for a stream that
    /// does not exist or a weight of 0.
    pub fn set_stream_weight(&mut self, stream: u16, weight: u16) -> Result<(), SchedulingError> {
        self.send_queue.set_weight(stream, weight)
    }

    /// The priority of an outbound stream (RFC 8260 3.4); `None` if the
    /// stream does not exist.
    pub fn stream_priority(&self, stream: u16) -> Option<u16> {
        self.send_queue.priority(stream)
    }

    /// The weight of an outbound stream (RFC 8260 3.6); `None` if the
    /// stream does not exist.
    pub fn stream_weight(&self, stream: u16) -> Option<u16> {
        self.send_queue.weight(stream)
    }

    /// The next message received, in order within its stream.
    pub fn recv(&mut self) -> Option<IncomingMessage> {
        let msg = self.delivery.pop()?;
        self.counters.messages_received += 1;
        // 6.2: advertise a reopened window once it grew by a quarter of the buffer.
        let rwnd = self.our_rwnd();
        if rwnd.saturating_sub(self.advertised_rwnd) >= self.cfg.receive_buffer / 4 {
            self.sack_requested = true;
        }
        Some(msg)
    }

    /// Starts a graceful shutdown (RFC 9260 9.2): queued and outstanding data is
    /// still delivered, then SHUTDOWN closes the association.
    pub fn shutdown(&mut self, now: Time) {
        shutdown::start(self, now);
    }

    /// Aborts at once (RFC 9260 9.1): sends ABORT with a User-Initiated Abort
    /// cause carrying `reason`, and fails every message not yet acknowledged.
    pub fn abort(&mut self, now: Time, reason: &str) {
        if self.state == State::Closed {
            return;
        }
        self.last_input = now;
        if self.peer_tag != 0 {
            self.control.clear();
            self.control.push_back(Control::new(Chunk::Abort(Abort {
                reflected_tag: false,
                causes: vec![ErrorCause::UserInitiatedAbort(
                    reason.as_bytes().to_vec().into(),
                )],
            })));
        }
        self.close(CloseReason::LocalAbort {
            reason: reason.to_owned(),
        });
    }

    /// Counters and the current loss-recovery variables, as they are now:
    /// each counter is kept once, where its event happens, and the live
    /// values are read from their owners.
    pub fn stats(&self) -> Stats {
        let c = &self.counters;
        let tx = self.rtx.counters();
        Stats {
            retransmissions: tx.retransmissions,
            t3_expirations: tx.t3_expirations,
            fast_recoveries: tx.fast_recoveries,
            spurious_timeouts_undone: tx.spurious_timeouts_undone,
            rack_losses: tx.rack_losses,
            cwnd: self.paths.data().cc.cwnd(),
            ssthresh: self.paths.data().cc.ssthresh(),
            rto: self.data_rto(),
            srtt: self.paths.data().rto.srtt(),
            flight_size: self.flight_size(),
            packets_outstanding: self.packets_outstanding(),
            peer_rwnd: self.rtx.peer_rwnd(),
            packets_sent: c.packets_sent,
            packets_received: c.packets_received,
            data_chunks_sent: tx.data_chunks_sent,
            data_chunks_received: c.data_chunks_received,
            duplicate_tsns_received: c.duplicate_tsns_received,
            sacks_sent: c.sacks_sent,
            sacks_received: c.sacks_received,
            messages_sent: c.messages_sent,
            messages_acked: c.messages_acked,
            messages_received: c.messages_received,
            payload_bytes_sent: tx.payload_bytes_sent,
            payload_bytes_received: c.payload_bytes_received,
            malformed_chunks: c.malformed_chunks,
            data_dropped_window_full: c.data_dropped_window_full,
            errors_suppressed: c.errors_suppressed,
            data_reneged: c.data_reneged,
            receive_held: self.receive_held(),
            send_held: self.send_held(),
            pktdrops_sent: c.pktdrops_sent,
            pktdrops_received: c.pktdrops_received,
            messages_abandoned: c.messages_abandoned,
            forward_tsns_sent: c.forward_tsns_sent,
            forward_tsns_received: c.forward_tsns_received,
            reconfig_requests_sent: c.reconfig_requests_sent,
            reconfig_requests_received: c.reconfig_requests_received,
            reconfig_retransmissions: c.reconfig_retransmissions,
            streams_reset: c.streams_reset,
            data_path_changes: c.data_path_changes,
            paths_failed: c.paths_failed,
            paths_potentially_failed: c.paths_potentially_failed,
            paths_recovered: c.paths_recovered,
            heartbeats_sent: c.heartbeats_sent,
        }
    }

    /// Packets with DATA not yet fully acknowledged (see `tx::outstanding`).
    #[inline]
    pub fn packets_outstanding(&self) -> u32 {
        self.rtx.outstanding().packets_outstanding()
    }

    /// Bytes of DATA in flight.
    #[inline]
    pub fn flight_size(&self) -> u32 {
        self.rtx.outstanding().flight_size()
    }

    /// Messages queued and not yet sent in full.
    pub fn queued_messages(&self) -> usize {
        self.send_queue.len()
    }

    /// Whether every message sent has been acknowledged.
    pub fn all_acked(&self) -> bool {
        self.send_queue.is_empty() && self.rtx.outstanding().is_empty()
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// The earliest timer deadline.
    pub fn poll_timeout(&self) -> Option<Time> {
        if self.state == State::Closed {
            return None;
        }
        // Timers fire on the clock's ticks (Config::timer_granularity); a
        // SACK due at once is not a timer.
        earliest([
            self.timers.earliest(self.cfg.timer_granularity),
            self.sack_decision.immediate_since(),
        ])
    }

    /// Whether the association has ended (its final events may remain).
    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }

    /// Whether the association has nothing left to say: closed, no packet, no
    /// event and no received message pending. The endpoint forgets it then, so
    /// messages that arrived before the close stay readable until read.
    pub(crate) fn is_drained(&self) -> bool {
        self.state == State::Closed
            && self.control.is_empty()
            && self.events.is_empty()
            && !self.delivery.has_ready()
    }

    pub(crate) fn peer_port(&self) -> u16 {
        self.peer_port
    }

    pub(crate) fn local_tag(&self) -> u32 {
        self.local_tag
    }

    /// The peer's UDP address `old` changed to `new` (RFC 6951 5.4): send
    /// there from now on.
    pub(crate) fn set_remote(&mut self, old: SocketAddr, new: SocketAddr) {
        if let Some(id) = self.paths.find(old) {
            self.paths.get_mut(id).remote = new;
        }
    }

    /// Every transport address of the peer (its paths).
    pub(crate) fn remotes(&self) -> impl Iterator<Item = SocketAddr> + '_ {
        self.paths.iter().map(|(_, p)| p.remote)
    }

    /// Whether `addr` is a destination of the peer, and if so whether it is
    /// confirmed (RFC 9260 5.4).
    pub(crate) fn destination_confirmed(&self, addr: SocketAddr) -> Option<bool> {
        self.paths.find(addr).map(|id| self.paths.get(id).confirmed)
    }

    /// Peer addresses that became confirmed destinations since the last
    /// call, for the endpoint's lookup (RFC 9260 5.4).
    pub(crate) fn take_new_remotes(&mut self) -> Vec<SocketAddr> {
        std::mem::take(&mut self.new_remotes)
    }

    /// Bytes charged against the send buffer: messages queued and chunks sent
    /// but not cumulatively acknowledged (gap-acknowledged ones too: the peer
    /// may renege), each with its bookkeeping overhead (`tx::CHUNK_OVERHEAD`).
    /// `send` refuses a message that would take it past `Config::send_buffer`.
    pub fn send_held(&self) -> usize {
        self.send_charge(self.send_queue.buffered_bytes(), self.send_queue.len())
    }

    /// The send buffer's charge with `queued` bytes in `messages` messages
    /// waiting. A queued message becomes one chunk per fragment: each is
    /// counted as at most one more chunk than its bytes fill, so that sending
    /// it never raises the charge.
    fn send_charge(&self, queued: usize, messages: usize) -> usize {
        // The fragment size with the larger chunk header that this
        // association may come to use (I-DATA's, RFC 8260 2.1, when the knob
        // is on), so that a message queued before the handshake settled is
        // never charged less than after.
        let header = if self.cfg.message_interleaving {
            crate::wire::chunk::IData::HEADER_LEN
        } else {
            crate::wire::chunk::Data::HEADER_LEN
        };
        let fragment = self.paths.data().mtu.saturating_sub(12 + header).max(1);
        let fragments = messages + queued / fragment;
        crate::tx::held(
            queued + self.rtx.outstanding().payload_bytes(),
            fragments + self.rtx.outstanding().len(),
        )
    }

    /// Bytes charged against the receive buffer: every chunk held for
    /// reassembly and every message held for ordering or for the application,
    /// each with its bookkeeping overhead (`rx::window`). Never more than the
    /// receive buffer plus `rx::window::NEXT_TSN_ALLOWANCE`.
    pub fn receive_held(&self) -> usize {
        let (reset_bytes, reset_messages) = self.reconfig.held();
        crate::rx::window::held(
            self.delivery.buffered_bytes()
                + self.reassembly.buffered_bytes()
                + self.ireassembly.buffered_bytes()
                + self.mid_ordering.buffered_bytes()
                + reset_bytes,
            self.delivery.message_count()
                + self.reassembly.fragment_count()
                + self.ireassembly.fragment_count()
                + self.mid_ordering.message_count()
                + reset_messages,
        )
    }

    /// Our advertised receive window: the buffer less what is held (6.2).
    fn our_rwnd(&self) -> u32 {
        let held = self.receive_held();
        self.cfg
            .receive_buffer
            .saturating_sub(u32::try_from(held).unwrap_or(u32::MAX))
    }

    /// The RTO for T3: a thin stream's own RTO.Min applies while thin.
    #[inline]
    fn data_rto(&self) -> std::time::Duration {
        self.rtx.rto(&self.cfg, self.paths.data())
    }

    /// The payload of the next chunk the send queue would cut, if any.
    #[inline]
    fn queued_chunk(&self) -> Option<usize> {
        self.send_queue.peek_len(self.cfg.max_data_payload())
    }

    /// The retransmission queue with what it borrows for one call about
    /// the data path.
    #[inline]
    fn tx(&mut self) -> (&mut RetransmissionQueue, TxEnv<'_>) {
        let to = self.paths.data_id();
        self.tx_to(to)
    }

    /// The retransmission queue with what it borrows for one call about
    /// destination `to`.
    #[inline]
    fn tx_to(&mut self, to: PathId) -> (&mut RetransmissionQueue, TxEnv<'_>) {
        let env = TxEnv {
            cfg: &self.cfg,
            paths: &mut self.paths,
            to,
            timers: &mut self.timers,
        };
        (&mut self.rtx, env)
    }

    /// A new chance to send: an input arrived or a timer fired (Max.Burst, 6.1).
    fn new_transmission_opportunity(&mut self) {
        self.burst_budget = if self.cfg.max_burst == 0 {
            u32::MAX
        } else {
            self.cfg.max_burst
        };
    }

    fn emit(&mut self, event: Event) {
        self.events.push_back(event);
    }

    /// Ends the association: stops every timer, fails every message not yet
    /// acknowledged, and reports why.
    fn close(&mut self, reason: CloseReason) {
        if self.state == State::Closed {
            return;
        }
        self.state = State::Closed;
        self.timers.stop_all();
        self.heartbeats.stop();
        self.sack_decision = SackDecision::new(self.cfg.sack_freq, self.cfg.sack_delay);
        let mut failed: Vec<MessageId> = self
            .rtx
            .drain()
            .into_iter()
            .filter(|c| c.frag.flags.ending)
            .map(|c| c.frag.msg)
            .collect();
        failed.extend(self.send_queue.drain().into_iter().map(|(id, _)| id));
        failed.sort_unstable();
        failed.dedup();
        for id in failed {
            self.emit(Event::SendFailed { id });
        }
        reconfig::release_held_at_close(self, self.last_input);
        self.emit(Event::Closed(reason));
    }

    /// RFC 3758 3.5: before each packet, abandons what the messages'
    /// policies give up on (unsent timed messages in the send queue, chunks
    /// about to be retransmitted) and queues the FORWARD TSN that skips it.
    fn abandon_and_forward(&mut self, now: Time) {
        for id in self.send_queue.abandon_expired(now) {
            self.report_abandoned(id);
        }
        for id in self.rtx.abandon_due(now) {
            // Its fragments not sent yet go with it: delivered whole or not at all.
            if let Some(end) = self.send_queue.abandon_current(id) {
                self.rtx.abandon_unsent_end(end, now);
            }
            self.report_abandoned(id);
        }
        let forward = if self.idata {
            // RFC 8260 2.3: with I-DATA, I-FORWARD-TSN (8 bytes an entry).
            let max_entries = self.paths.data().mtu.saturating_sub(12 + 8) / 8;
            self.rtx
                .take_iforward_tsn(now, max_entries)
                .map(Chunk::IForwardTsn)
        } else {
            // As many stream entries as fit a packet with the FORWARD TSN alone.
            let max_streams = self.paths.data().mtu.saturating_sub(12 + 8) / 4;
            self.rtx
                .take_forward_tsn(now, max_streams)
                .map(Chunk::ForwardTsn)
        };
        let Some(mut forward) = forward else {
            return;
        };
        // RFC 6525: no entry that could skip a reset stream's new numbering.
        reconfig::filter_forward_tsn(self, &mut forward);
        self.control
            .retain(|c| !matches!(c.chunk, Chunk::ForwardTsn(_) | Chunk::IForwardTsn(_)));
        self.control.push_back(Control::new(forward));
        // RFC 3758 3.5 E: T3 guards the FORWARD TSN as it guards DATA.
        let rto = self.data_rto();
        self.timers
            .start_if_stopped(crate::timer::TimerKind::T3Rtx, now, rto);
    }

    fn report_abandoned(&mut self, id: MessageId) {
        self.counters.messages_abandoned += 1;
        self.emit(Event::MessageAbandoned { id });
    }

    /// Sends an ABORT with one cause and closes (a protocol rule demands it).
    fn abort_with(&mut self, cause: ErrorCause<'static>, reason: &str) {
        self.control.clear();
        if self.peer_tag != 0 {
            self.control.push_back(Control::new(Chunk::Abort(Abort {
                reflected_tag: false,
                causes: vec![cause],
            })));
        }
        self.close(CloseReason::LocalAbort {
            reason: reason.to_owned(),
        });
    }

    /// Aborts on a decision of our own, a limit run out (8.1, 9.2): the
    /// ABORT says why with User-Initiated Abort (3.3.10.12), since Protocol
    /// Violation is for what the peer did wrong (3.3.10.13).
    fn give_up(&mut self, reason: &str) {
        self.abort_with(
            ErrorCause::UserInitiatedAbort(reason.as_bytes().to_vec().into()),
            reason,
        );
    }

    /// Queues an ERROR chunk, unless this packet already drew one or the
    /// rate limit is spent: a peer cannot make us answer each of its chunks
    /// with an ERROR (RFC 9260 leaves the rate to the implementation).
    fn report_error(&mut self, now: Time, cause: ErrorCause<'static>) {
        if self.error_sent_for_packet || !self.error_limiter.take(now) {
            self.counters.errors_suppressed += 1;
            return;
        }
        self.error_sent_for_packet = true;
        self.control
            .push_back(Control::new(Chunk::Error(OperationError {
                causes: vec![cause],
            })));
    }

    /// Handles one received packet that the endpoint mapped to this association.
    /// The common header's ports already matched.
    pub(crate) fn handle_packet(
        &mut self,
        now: Time,
        ctx: &mut Ctx<'_>,
        header: &CommonHeader,
        chunks: &[Chunk<'_>],
        from: SocketAddr,
    ) {
        self.last_input = now;
        self.counters.packets_received += 1;
        let rest = match chunks.split_first() {
            // RFC 9260 8.5.1 D, 5.2.4: a COOKIE ECHO is checked against the
            // cookie itself. What is bundled after it is processed only if the
            // cookie verified and established or matched this association,
            // and then only under the tag rules for the resulting tags.
            Some((Chunk::CookieEcho(echo), rest)) => {
                if !handshake::on_cookie_echo(self, now, ctx, echo, header, from) {
                    self.counters.malformed_chunks += 1;
                    return;
                }
                rest
            }
            _ => chunks,
        };
        self.handle_chunks(now, ctx, header, rest, from);
    }

    /// Handles the chunks of a packet that follow a COOKIE ECHO the cookie
    /// of which verified (for the association the endpoint just created from
    /// it, 5.1 D), or all of a packet without one: they must pass the tag
    /// rules for the association's tags (8.5, 8.5.1).
    pub(crate) fn handle_chunks(
        &mut self,
        now: Time,
        ctx: &mut Ctx<'_>,
        header: &CommonHeader,
        chunks: &[Chunk<'_>],
        from: SocketAddr,
    ) {
        self.last_input = now;
        if shutdown::out_of_the_blue_shutdown_ack(self, header, chunks) {
            return;
        }
        if !chunks.is_empty() && !self.verification_tag_ok(header, chunks) {
            // 8.5: silently discarded.
            self.counters.malformed_chunks += 1;
        } else {
            self.dispatch(now, ctx, header, chunks, from);
        }
    }

    /// Hands each chunk of a packet whose tag verified to the rule for it.
    fn dispatch(
        &mut self,
        now: Time,
        ctx: &mut Ctx<'_>,
        header: &CommonHeader,
        chunks: &[Chunk<'_>],
        from: SocketAddr,
    ) {
        self.new_transmission_opportunity();
        self.error_sent_for_packet = false;
        self.packet_from = self.paths.find(from);
        let mut data_seen = receive::PacketData::default();
        for chunk in chunks {
            if self.state == State::Closed {
                break;
            }
            match chunk {
                // RFC 8260 2.1: DATA only without I-DATA, I-DATA only with it.
                Chunk::Data(_) if self.idata => receive::on_wrong_data_kind(self, "DATA"),
                Chunk::Data(d) => receive::on_data(self, now, d, &mut data_seen),
                Chunk::IData(d) if self.idata => receive::on_idata(self, now, d, &mut data_seen),
                Chunk::IData(_) => receive::on_wrong_data_kind(self, "I-DATA"),
                Chunk::Sack(s) => {
                    if sack::on_sack(self, now, s) {
                        shutdown::progress(self, now);
                    }
                }
                Chunk::Init(init) => handshake::on_init(self, now, ctx, init, header, from),
                Chunk::InitAck(ack) => handshake::on_init_ack(self, now, ack),
                // RFC 9260 5.1: a COOKIE ECHO is the first chunk of its packet;
                // one bundled later is not processed.
                Chunk::CookieEcho(_) => self.counters.malformed_chunks += 1,
                Chunk::CookieAck(_) => handshake::on_cookie_ack(self, now),
                Chunk::Heartbeat(hb) => heartbeat::on_heartbeat(self, hb, from),
                Chunk::HeartbeatAck(ack) => heartbeat::on_heartbeat_ack(self, now, ack),
                Chunk::Abort(a) => {
                    // 8.5.1 B: the T bit says which tag the packet must carry.
                    if self.reflected_tag_ok(header, a.reflected_tag) {
                        self.on_abort(a);
                    } else {
                        self.counters.malformed_chunks += 1;
                    }
                }
                Chunk::Error(e) => self.on_error(now, e),
                Chunk::Shutdown(s) => shutdown::on_shutdown(self, now, s),
                Chunk::ShutdownAck(_) => shutdown::on_shutdown_ack(self, now),
                Chunk::ShutdownComplete(sc) => {
                    // 8.5.1 C.
                    if self.reflected_tag_ok(header, sc.reflected_tag) {
                        shutdown::on_shutdown_complete(self);
                    } else {
                        self.counters.malformed_chunks += 1;
                    }
                }
                Chunk::PktDrop(pd) => self.on_pktdrop(pd),
                // RFC 8260 2.3: with I-DATA, I-FORWARD-TSN replaces FORWARD TSN.
                Chunk::ForwardTsn(f) if self.pr_sctp && !self.idata => {
                    receive::on_forward_tsn(self, now, f, &mut data_seen);
                }
                Chunk::IForwardTsn(f) if self.pr_sctp && self.idata => {
                    receive::on_iforward_tsn(self, now, f, &mut data_seen);
                }
                Chunk::ReConfig(r) => reconfig::on_reconfig(self, now, r),
                Chunk::Unknown(u) => {
                    let action = u.action();
                    if action.reports() {
                        let mut raw = Vec::with_capacity(u.encoded_len());
                        if u.encode(&mut raw).is_ok() {
                            raw.truncate(4 + u.value.len());
                            self.report_error(now, ErrorCause::UnrecognizedChunkType(raw.into()));
                        }
                    }
                    if !action.continues() {
                        // RFC 9260 3.2: stop processing this packet.
                        break;
                    }
                }
                // Extensions not negotiated by Brisk (yet): RFC 9260 3.2 treats
                // them as unrecognized; their types say "skip and report".
                other => {
                    let _ = other;
                    self.counters.malformed_chunks += 1;
                }
            }
        }
        // RFC 6525 5.2.2: a deferred reset waits for the cumulative TSN.
        reconfig::after_packet(self, now);
        if data_seen.any {
            // 6.4: SACKs go back to where the DATA came from.
            if let Some(id) = self.packet_from {
                self.paths.set_reply(id);
            }
            receive::after_data_packet(self, now, &data_seen);
            // 9.2: in SHUTDOWN-SENT, every packet with DATA is answered by SHUTDOWN.
            if self.state == State::ShutdownSent {
                shutdown::resend_shutdown(self, now);
            }
        }
    }

    /// RFC 9260 8.5 and 8.5.1, for a packet whose first chunk is not a COOKIE
    /// ECHO (or the chunks after one that verified).
    fn verification_tag_ok(&self, header: &CommonHeader, chunks: &[Chunk<'_>]) -> bool {
        let tag = header.verification_tag;
        match chunks.first() {
            // 8.5.1 A: INIT carries tag 0.
            Some(Chunk::Init(_)) => tag == 0,
            // 8.5.1 B, C: ABORT and SHUTDOWN COMPLETE may reflect the peer's tag.
            Some(Chunk::Abort(Abort { reflected_tag, .. })) => {
                self.reflected_tag_ok(header, *reflected_tag)
            }
            Some(Chunk::ShutdownComplete(sc)) => self.reflected_tag_ok(header, sc.reflected_tag),
            _ => tag == self.local_tag,
        }
    }

    /// 8.5.1 B, C: with the T bit the packet carries the peer's tag, without
    /// it our own.
    fn reflected_tag_ok(&self, header: &CommonHeader, reflected: bool) -> bool {
        let tag = header.verification_tag;
        if reflected {
            tag == self.peer_tag && self.peer_tag != 0
        } else {
            tag == self.local_tag
        }
    }

    fn on_abort(&mut self, abort: &Abort<'_>) {
        let causes = abort
            .causes
            .iter()
            .map(describe_cause)
            .collect::<Vec<_>>()
            .join("; ");
        // 9.1: no reply to an ABORT.
        self.control.clear();
        self.close(CloseReason::PeerAbort { causes });
    }

    fn on_error(&mut self, now: Time, error: &OperationError<'_>) {
        for cause in &error.causes {
            if let ErrorCause::StaleCookie { .. } = cause {
                handshake::on_stale_cookie(self, now);
            }
        }
    }

    /// PKTDROP, receiving side: a packet with a bad checksum that maps to this
    /// association. Reports it if PKTDROP was negotiated and the packet is not
    /// an ABORT, PKTDROP or INIT ACK. Returns whether a report was queued.
    pub(crate) fn on_corrupted(&mut self, packet: &[u8]) -> bool {
        if !self.pktdrop || self.peer_tag == 0 || !pktdrop::may_report(packet) {
            return false;
        }
        let held = self.delivery.buffered_bytes() + self.reassembly.buffered_bytes();
        let report = pktdrop::report(
            packet,
            self.paths.data().mtu,
            self.cfg.receive_buffer,
            u32::try_from(held).unwrap_or(u32::MAX),
        );
        self.control.push_back(Control::new(Chunk::PktDrop(report)));
        self.counters.pktdrops_sent += 1;
        true
    }

    /// PKTDROP, sending side: retransmit at once every DATA chunk the report
    /// identifies (`RetransmissionQueue::on_pktdrop`).
    fn on_pktdrop(&mut self, pd: &crate::wire::chunk::PktDrop<'_>) {
        if !self.pktdrop {
            // Not negotiated: an unexpected chunk.
            self.counters.malformed_chunks += 1;
            return;
        }
        self.counters.pktdrops_received += 1;
        self.rtx.on_pktdrop(pd);
    }

    /// Handles timer expiries due at `now`.
    pub(crate) fn handle_timeout(&mut self, now: Time, ctx: &mut Ctx<'_>) {
        if self.state == State::Closed {
            return;
        }
        self.last_input = now;
        timers::on_timeout(self, now, ctx);
    }

    /// Counts one unanswered retransmission or heartbeat (8.1, 8.2); fails the
    /// association past Association.Max.Retrans. Returns false if it failed.
    fn count_error(&mut self) -> bool {
        self.errors += 1;
        if self.errors > self.cfg.assoc_max_retrans {
            let errors = self.errors;
            self.give_up("peer unreachable");
            // The reason the application sees is the failure, not the ABORT.
            if let Some(Event::Closed(reason)) = self.events.back_mut() {
                *reason = CloseReason::PeerUnreachable { errors };
            }
            return false;
        }
        true
    }

    /// 8.3: an acknowledgement proves the peer reachable.
    fn clear_errors(&mut self) {
        self.errors = 0;
    }
}

/// A human-readable description of an error cause, for `CloseReason::PeerAbort`.
fn describe_cause(cause: &ErrorCause<'_>) -> String {
    match cause {
        ErrorCause::UserInitiatedAbort(reason) => {
            format!("user-initiated abort: {}", String::from_utf8_lossy(reason))
        }
        ErrorCause::ProtocolViolation(info) => {
            format!("protocol violation: {}", String::from_utf8_lossy(info))
        }
        ErrorCause::NoUserData { tsn } => format!("no user data in TSN {tsn}"),
        ErrorCause::InvalidStreamIdentifier { stream_id } => {
            format!("invalid stream identifier {stream_id}")
        }
        ErrorCause::MissingMandatoryParameter { types } => {
            format!("missing mandatory parameters {types:?}")
        }
        ErrorCause::StaleCookie { staleness_us } => format!("stale cookie ({staleness_us} us)"),
        other => format!("cause {}", other.code()),
    }
}
