//! What connections and endpoints report: events for the application and the
//! lab, and counters. Experiments measure these; they never reach into
//! private state.

use std::time::Duration;

use crate::Time;

/// Why a segment was sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RetransmitCause {
    /// The retransmission timer expired (RFC 6298 5.4).
    Rto,
    /// Duplicate ACKs or SACKs (RFC 5681 3.2, RFC 6582, RFC 6675), also on a
    /// thin stream's first duplicate ACK (`thin_dupack`).
    FastRetransmit,
    /// Early Retransmit (RFC 5827).
    EarlyRetransmit,
    /// RACK's time-based loss detection (RFC 8985 6).
    Rack,
    /// A tail loss probe (RFC 8985 7).
    TailLossProbe,
}

impl RetransmitCause {
    /// Every cause, in the order of [`RetransmitCause::name`]'s table.
    pub const ALL: [RetransmitCause; 5] = [
        RetransmitCause::Rto,
        RetransmitCause::FastRetransmit,
        RetransmitCause::EarlyRetransmit,
        RetransmitCause::Rack,
        RetransmitCause::TailLossProbe,
    ];

    const fn index(self) -> usize {
        self as usize
    }

    /// The cause as the lab writes it.
    pub const fn name(self) -> &'static str {
        match self {
            RetransmitCause::Rto => "rto",
            RetransmitCause::FastRetransmit => "fast-retransmit",
            RetransmitCause::EarlyRetransmit => "early-retransmit",
            RetransmitCause::Rack => "rack",
            RetransmitCause::TailLossProbe => "tail-loss-probe",
        }
    }
}

/// Why a connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CloseReason {
    /// Both FINs were sent and acknowledged (RFC 9293 3.6).
    Normal,
    /// The peer reset the connection.
    Reset,
    /// The peer answered our SYN with a reset (RFC 9293 3.10.7.3).
    Refused,
    /// Too many consecutive retransmission timeouts (`max_retransmissions`,
    /// or `max_syn_retransmissions` during the handshake).
    Timeout,
    /// The application aborted the connection (a reset was sent).
    Aborted,
}

/// Something the application or the lab should know about a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TcpEvent {
    /// The handshake completed: on the client when the SYN-ACK arrives, on
    /// the server when the ACK of its SYN-ACK arrives.
    Connected,
    /// New in-order bytes can be read. Not repeated while a previous
    /// `Readable` of the connection is still queued.
    Readable,
    /// The peer sent FIN: no more bytes will arrive after those readable.
    PeerClosed,
    /// A segment was retransmitted.
    Retransmission {
        /// Wire sequence number of its first byte.
        seq: u32,
        /// Payload bytes (a FIN alone counts 0).
        len: u32,
        /// Why.
        cause: RetransmitCause,
        /// When it left.
        at: Time,
        /// When its range was first sent.
        first_sent_at: Time,
        /// How many times the range has now been sent (2 for the first
        /// retransmission).
        transmissions: u32,
    },
    /// cwnd or ssthresh changed (only with `TcpConfig::trace`); values
    /// after the change, in bytes. At most one per call into the endpoint
    /// per connection, with the values at its end.
    Trace {
        /// When.
        at: Time,
        /// Congestion window, bytes.
        cwnd: u32,
        /// Slow-start threshold, bytes (`u32::MAX`: infinite).
        ssthresh: u32,
        /// Bytes in flight as [`TcpStats::flight_size`].
        flight_size: u32,
    },
    /// The connection ended; see [`crate::TcpEndpoint::poll_event`] for how
    /// long it stays readable.
    Closed(CloseReason),
}

/// Counters and the current loss-recovery variables of one connection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TcpStats {
    retransmissions: [u64; 5],
    /// Congestion window, bytes (a whole number of segments with `cwnd_in_packets`).
    pub cwnd: u32,
    /// Slow-start threshold, bytes (`u32::MAX`: infinite).
    pub ssthresh: u32,
    /// Bytes in flight: RFC 6675's pipe when SACK was negotiated, else
    /// RFC 5681's FlightSize (SND.NXT - SND.UNA).
    pub flight_size: u32,
    /// Segments sent and not yet cumulatively acknowledged.
    pub segments_outstanding: u32,
    /// Smoothed RTT, once measured.
    pub srtt: Option<Duration>,
    /// Current RTO, back-off included.
    pub rto: Duration,
    /// The peer's receive window as last advertised, bytes.
    pub peer_window: u32,

    /// Segments sent, every kind.
    pub segments_sent: u64,
    /// Segments sent carrying payload, retransmissions included.
    pub data_segments_sent: u64,
    /// Payload bytes sent for the first time.
    pub bytes_sent_new: u64,
    /// Payload bytes sent again.
    pub bytes_retransmitted: u64,
    /// Pure ACKs sent (no payload, SYN or FIN).
    pub acks_sent: u64,
    /// Segments received for this connection (valid checksum).
    pub segments_received: u64,
    /// New payload bytes received (in order or out of order, counted once).
    pub bytes_received: u64,
    /// Duplicate ACKs received in RFC 5681's sense (ACK = SND.UNA with data
    /// outstanding, no payload, SYN or FIN, window unchanged).
    pub duplicate_acks_received: u64,
    /// Retransmission timer expirations (handshake included).
    pub rto_expirations: u64,
    /// Fast recovery periods entered (each one cwnd reduction).
    pub fast_recoveries: u64,
    /// Tail loss probes sent.
    pub tail_loss_probes: u64,
    /// Segments sent by the persist timer: zero-window probes, and
    /// segments shorter than sender SWS avoidance would wait for.
    pub window_probes: u64,
    /// Segments (or parts) dropped because they lay beyond our receive window.
    pub out_of_window_dropped: u64,
    /// Segments with only data we already had (answered with an ACK).
    pub duplicate_segments_received: u64,
    /// Segments dropped because the out-of-order queue held `max_ooo_ranges` ranges.
    pub ooo_ranges_dropped: u64,
    /// ACKs for data we never sent (RFC 9293 3.10.7.4: ignored, answered with an ACK).
    pub acks_for_unsent: u64,
    /// SACK blocks ignored: outside SND.UNA..SND.NXT or not matching whole
    /// segments we sent (RFC 2018 3, RFC 6675 5 "valid" blocks).
    pub invalid_sack_blocks: u64,
    /// RST or SYN in a synchronized state answered with a challenge ACK (RFC 5961).
    pub challenge_acks: u64,
}

impl TcpStats {
    /// Retransmissions with this cause.
    pub fn retransmissions(&self, cause: RetransmitCause) -> u64 {
        self.retransmissions
            .get(cause.index())
            .copied()
            .unwrap_or(0)
    }

    /// Retransmissions of every cause.
    pub fn total_retransmissions(&self) -> u64 {
        self.retransmissions.iter().sum()
    }

    pub(crate) fn count_retransmission(&mut self, cause: RetransmitCause) {
        if let Some(n) = self.retransmissions.get_mut(cause.index()) {
            *n += 1;
        }
    }
}

/// What an endpoint saw and did with segments no connection took.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointStats {
    /// Segments handed to `handle_segment`.
    pub segments_received: u64,
    /// Dropped: bad checksum.
    pub bad_checksum: u64,
    /// Dropped: malformed header or options.
    pub malformed: u64,
    /// Dropped: from or to an address that is not IPv4.
    pub not_ipv4: u64,
    /// Dropped: destination port not ours, or source port not the sender's.
    pub wrong_port: u64,
    /// SYNs ignored because the endpoint held `max_connections` connections.
    pub syns_refused: u64,
    /// Segments for no connection (answered with a reset unless they were one).
    pub no_connection: u64,
    /// Resets sent for segments to no connection.
    pub resets_sent: u64,
    /// Resets not sent because too many were already waiting.
    pub resets_suppressed: u64,
    /// Connections accepted (SYN received).
    pub connections_accepted: u64,
    /// Half-open connections dropped (SYN-ACK never acknowledged).
    pub embryonic_dropped: u64,
    /// Events dropped because `MAX_QUEUED_EVENTS` were waiting unpolled.
    pub events_dropped: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_have_distinct_names_and_counters() {
        let mut s = TcpStats::default();
        for (i, c) in RetransmitCause::ALL.iter().enumerate() {
            for _ in 0..=i {
                s.count_retransmission(*c);
            }
        }
        let names: Vec<_> = RetransmitCause::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(
            names,
            [
                "rto",
                "fast-retransmit",
                "early-retransmit",
                "rack",
                "tail-loss-probe"
            ]
        );
        assert_eq!(s.retransmissions(RetransmitCause::TailLossProbe), 5);
        assert_eq!(s.total_retransmissions(), 15);
    }
}
