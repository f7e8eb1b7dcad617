//! What an association reports: events for the application and the lab, and
//! counters in [`Stats`]. Experiments measure these; they never reach into
//! private state.

use std::net::SocketAddr;
use std::time::Duration;

use crate::message::MessageId;
pub use crate::path::PathState;
pub use crate::recovery::failover::FailoverCause;
use crate::time::Time;
use crate::wire::chunk::ReconfigResult;

/// Which way a stream reset went (RFC 6525).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResetDirection {
    /// Our request was performed: our outgoing streams number their
    /// messages from SSN 0 again.
    Outgoing,
    /// The peer reset its outgoing streams, our incoming ones: the next
    /// message on each has SSN 0.
    Incoming,
}

/// Why a DATA chunk was sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RetransmitCause {
    /// The T3-rtx timer expired (RFC 9260 6.3.3).
    T3Timeout,
    /// Miss indications reached the threshold (RFC 9260 7.2.4).
    FastRetransmit,
    /// Early retransmit (RFC 5827; seed 000).
    EarlyRetransmit,
    /// A tail loss probe (RFC 8985 7).
    TailLossProbe,
    /// The peer reported the packet dropped (PKTDROP).
    PacketDrop,
    /// Bundled into a packet that had room (seed 001, 4.4).
    Bundled,
}

impl RetransmitCause {
    pub const ALL: [RetransmitCause; 6] = [
        RetransmitCause::T3Timeout,
        RetransmitCause::FastRetransmit,
        RetransmitCause::EarlyRetransmit,
        RetransmitCause::TailLossProbe,
        RetransmitCause::PacketDrop,
        RetransmitCause::Bundled,
    ];

    const fn index(self) -> usize {
        self as usize
    }

    pub const fn name(self) -> &'static str {
        match self {
            RetransmitCause::T3Timeout => "t3-timeout",
            RetransmitCause::FastRetransmit => "fast-retransmit",
            RetransmitCause::EarlyRetransmit => "early-retransmit",
            RetransmitCause::TailLossProbe => "tail-loss-probe",
            RetransmitCause::PacketDrop => "packet-drop",
            RetransmitCause::Bundled => "bundled",
        }
    }
}

/// Why an association ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CloseReason {
    /// SHUTDOWN sequence completed (RFC 9260 9.2).
    Shutdown,
    /// We aborted, by the application's request or by a protocol rule.
    LocalAbort { reason: String },
    /// The peer sent ABORT; its error causes, described.
    PeerAbort { causes: String },
    /// INIT or COOKIE ECHO went unanswered `attempts` times (RFC 9260 5.1).
    HandshakeTimeout { attempts: u32 },
    /// Association.Max.Retrans consecutive errors (RFC 9260 8.1).
    PeerUnreachable { errors: u32 },
}

/// Something the application or the lab should know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The handshake completed (COMMUNICATION UP, RFC 9260 11.2.5).
    Connected,
    /// The peer restarted the association (RFC 9260 5.2.4 action A): messages
    /// not yet acknowledged failed (`SendFailed`), and the association goes on
    /// under the same id with fresh sequence numbers.
    Restarted,
    /// A message is ready for `recv`.
    MessageReady,
    /// The peer acknowledged every fragment of a message. Only with `Config::events`.
    MessageAcked {
        id: MessageId,
        queued_at: Time,
        first_sent_at: Time,
        acked_at: Time,
    },
    /// A message the application sent will never be delivered (the association
    /// ended first). Every sent message ends in `MessageAcked` (or its counter),
    /// in `MessageAbandoned`, or in this.
    SendFailed { id: MessageId },
    /// A message was abandoned under its partial-reliability policy (RFC
    /// 3758, RFC 7496): it will not be delivered, in whole or in part.
    MessageAbandoned { id: MessageId },
    /// A DATA chunk was retransmitted. Only with `Config::events`.
    Retransmission {
        tsn: u32,
        cause: RetransmitCause,
        at: Time,
        first_sent_at: Time,
        /// How many times the chunk has now been sent.
        transmissions: u32,
    },
    /// The peer started a graceful shutdown: no more messages will arrive
    /// after the ones already queued (SHUTDOWN received, RFC 9260 9.2).
    PeerShutdown,
    /// Streams were reset (RFC 6525 5.1.2, 5.2.2): every message sent on
    /// them before the reset was delivered (or abandoned) first.
    StreamsReset {
        direction: ResetDirection,
        streams: Vec<u16>,
    },
    /// The peer refused, or could not perform, our request to reset these
    /// streams (our outgoing ones, or for an incoming reset request its
    /// outgoing ones); outgoing streams resume with their SSNs unchanged.
    StreamResetFailed {
        streams: Vec<u16>,
        result: ReconfigResult,
    },
    /// Streams were added, by either side (RFC 6525 5.1.5, 5.2.5): the new
    /// numbers of outgoing and incoming streams.
    StreamsAdded { outgoing: u16, incoming: u16 },
    /// The peer refused our request to add streams (`outgoing` and
    /// `incoming` are the numbers we asked to add).
    StreamsAddFailed {
        outgoing: u16,
        incoming: u16,
        result: ReconfigResult,
    },
    /// An SSN/TSN reset was performed (RFC 6525 5.1.4, 5.2.4): every stream
    /// both ways numbers from SSN 0 again, and TSNs start afresh.
    AssociationReset,
    /// The peer refused our SSN/TSN reset request.
    AssociationResetFailed { result: ReconfigResult },
    /// A destination of the peer changed state (RFC 9260 8.2; RFC 7829 3.2:
    /// potentially failed), or was confirmed by a heartbeat (5.4).
    PathStateChanged {
        remote: SocketAddr,
        state: PathState,
        confirmed: bool,
        at: Time,
    },
    /// New data goes to another destination from now on: a failover away
    /// from `from`, or a switchback to the primary, with its cause.
    DataPathChanged {
        from: SocketAddr,
        to: SocketAddr,
        cause: FailoverCause,
        at: Time,
    },
    /// The association ended; its id is no longer valid after this event.
    Closed(CloseReason),
}

/// Counters and the current state of the loss-recovery variables.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// By cause, in [`RetransmitCause::ALL`] order.
    pub(crate) retransmissions: [u64; 6],
    /// T3-rtx expirations.
    pub t3_expirations: u64,
    /// Fast recovery periods entered.
    pub fast_recoveries: u64,
    /// T3 expiry episodes later found spurious and undone
    /// (`recovery::spurious`).
    pub spurious_timeouts_undone: u64,
    /// Chunks RACK found lost by time (RFC 8985 6.2) before the miss
    /// indications did; their retransmissions count as `FastRetransmit`.
    pub rack_losses: u64,

    /// Congestion window, bytes.
    pub cwnd: u32,
    /// Slow-start threshold, bytes.
    pub ssthresh: u32,
    /// Current RTO, back-off included.
    pub rto: Duration,
    /// Smoothed RTT, once measured.
    pub srtt: Option<Duration>,
    /// Bytes of DATA in flight.
    pub flight_size: u32,
    /// Packets with DATA not yet fully acknowledged.
    pub packets_outstanding: u32,
    /// The peer's receive window as we model it.
    pub peer_rwnd: u32,

    pub packets_sent: u64,
    pub packets_received: u64,
    pub data_chunks_sent: u64,
    pub data_chunks_received: u64,
    pub duplicate_tsns_received: u64,
    pub sacks_sent: u64,
    pub sacks_received: u64,
    pub messages_sent: u64,
    pub messages_acked: u64,
    pub messages_received: u64,
    /// Messages abandoned under their partial-reliability policy (RFC 3758).
    pub messages_abandoned: u64,
    /// FORWARD TSN chunks sent and received (RFC 3758).
    pub forward_tsns_sent: u64,
    pub forward_tsns_received: u64,
    pub payload_bytes_sent: u64,
    pub payload_bytes_received: u64,
    /// Chunks that were malformed or broke a protocol rule, and were answered
    /// or dropped as RFC 9260 prescribes.
    pub malformed_chunks: u64,
    /// DATA chunks dropped because our receive window was full, or because
    /// they lay beyond what the receiver tracks (RFC 9260 6.2).
    pub data_dropped_window_full: u64,
    /// ERROR chunks not sent: one per received packet at most, and at most
    /// ten a second.
    pub errors_suppressed: u64,
    /// Chunks held for reassembly that we gave up to make room for a lower
    /// TSN (reneging, RFC 9260 6.2).
    pub data_reneged: u64,
    /// Bytes charged against the receive buffer now (see
    /// `Association::receive_held`).
    pub receive_held: usize,
    /// Bytes charged against the send buffer now (see `Association::send_held`).
    pub send_held: usize,
    /// PKTDROP reports sent for corrupted packets, and received.
    pub pktdrops_sent: u64,
    pub pktdrops_received: u64,
    /// RE-CONFIG requests sent (RFC 6525), retransmissions not counted.
    pub reconfig_requests_sent: u64,
    /// RE-CONFIG requests received, repeats and refused ones included.
    pub reconfig_requests_received: u64,
    /// RE-CONFIG requests retransmitted after the RE-CONFIG timer expired.
    pub reconfig_retransmissions: u64,
    /// Streams reset, either way (outgoing and incoming, each counted).
    pub streams_reset: u64,
    /// Changes of the data path by cause, in [`FailoverCause::ALL`] order.
    pub(crate) data_path_changes: [u64; FailoverCause::ALL.len()],
    /// Destinations marked inactive (RFC 9260 8.2).
    pub paths_failed: u64,
    /// Destinations marked potentially failed (RFC 7829 3.2).
    pub paths_potentially_failed: u64,
    /// Destinations active again after being potentially failed or inactive.
    pub paths_recovered: u64,
    /// HEARTBEAT chunks sent, to every destination.
    pub heartbeats_sent: u64,
}

impl Stats {
    /// Retransmissions with this cause.
    pub fn retransmissions(&self, cause: RetransmitCause) -> u64 {
        self.retransmissions[cause.index()]
    }

    /// Retransmissions of every cause.
    pub fn total_retransmissions(&self) -> u64 {
        self.retransmissions.iter().sum()
    }

    /// Data path changes with this cause.
    pub fn data_path_changes(&self, cause: FailoverCause) -> u64 {
        self.data_path_changes[cause.index()]
    }

    /// Failovers: data moved away from a destination (every cause but a
    /// switchback to the primary).
    pub fn failovers(&self) -> u64 {
        FailoverCause::ALL
            .iter()
            .filter(|c| !c.is_switchback())
            .map(|c| self.data_path_changes(*c))
            .sum()
    }

    /// Switchbacks to the primary once it answered again.
    pub fn switchbacks(&self) -> u64 {
        self.data_path_changes(FailoverCause::PrimaryRecovered)
    }
}
