//! The seam between the simulator and a transport protocol: a small sans-IO
//! trait that SCTP (`brisk_proto::Endpoint`) and the TCP model
//! (`brisk_tcp::TcpEndpoint`) implement, so hosts, links, traffic, metrics
//! and captures are the same for both.
//!
//! [`Transport`] is what the simulator drives: datagrams in and out, a
//! deadline, events. [`Messages`] is what a protocol-neutral application
//! (the lab's traffic generators) uses: open a connection, send and receive
//! whole messages, see events in one vocabulary.

use std::fmt::Debug;
use std::net::SocketAddr;

use brisk_proto::{Reliability, Time};
use bytes::Bytes;

mod sctp;
mod tcp;

pub use sctp::multihomed;
pub use tcp::{MAX_TCP_MESSAGE, TCP_MESSAGE_PREFIX, TcpMessages, TcpMessagesEvent};

/// How a transport's packets travel, which decides how links classify them
/// and how captures write them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// A bare SCTP packet (common header and chunks): links charge it the
    /// link's `overhead_bytes`; captures write it as UDP/IPv4 on port 9899
    /// (RFC 6951).
    Sctp,
    /// A complete IPv4 packet (the TCP model's segments): links classify it
    /// as the emulator does and charge it what `overhead_bytes` adds beyond
    /// its own 20-byte IP header; captures write it as it is.
    Ipv4,
}

/// A transport protocol as the simulator drives it: sans-IO, time passed in.
pub trait Transport: 'static {
    /// A connection: an SCTP association, a TCP connection.
    type Conn: Copy + Eq + Debug + 'static;
    /// What the protocol reports to its application.
    type Event: Debug + 'static;
    /// How its packets travel.
    const WIRE: Wire;

    /// A datagram (as [`Transport::WIRE`] says) arrived from `from`.
    fn handle_datagram(&mut self, now: Time, from: SocketAddr, data: &[u8]);
    /// The deadline [`Transport::poll_timeout`] gave has come.
    fn handle_timeout(&mut self, now: Time);
    /// The next datagram to send, written to `buf` (empty on entry): its
    /// destination, or `None` when nothing is to be sent now.
    fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<SocketAddr>;
    /// When [`Transport::handle_timeout`] must next run.
    fn poll_timeout(&self) -> Option<Time>;
    /// The next event for the application.
    fn poll_event(&mut self) -> Option<(Self::Conn, Self::Event)>;

    /// The congestion state of its first connection, for traces: asked
    /// after every input while [`crate::Sim::trace_congestion`] is on.
    fn congestion(&self) -> Option<Congestion> {
        None
    }
}

/// A sender's congestion state at one instant, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Congestion {
    pub cwnd: u32,
    pub ssthresh: u32,
    pub flight_size: u32,
}

/// Why a message was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// The send buffer is full: try again later.
    Full,
    /// Anything else (no such connection, message too large, closed).
    Failed(String),
}

/// A retransmission, in every protocol's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retransmission {
    /// The data unit retransmitted: an SCTP chunk's TSN, or the first
    /// sequence number of a TCP segment (what a link's `NewChunk::tsn` holds
    /// for the same unit).
    pub unit: u32,
    /// Its cause, one of [`Messages::CAUSES`].
    pub cause: &'static str,
    pub at: Time,
    pub first_sent_at: Time,
    /// How many times the unit has now been sent (2 for its first
    /// retransmission).
    pub transmissions: u32,
}

/// An event, as a protocol-neutral application sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Happening {
    /// The connection is up.
    Connected,
    /// A message can be read.
    MessageReady,
    /// The sender retransmitted.
    Retransmission(Retransmission),
    /// A message the application sent ([`Messages::send_message`]'s handle)
    /// is acknowledged in full; its first byte or chunk first left at
    /// `first_sent_at`.
    Acked { message: u64, first_sent_at: Time },
    /// A message the application sent was abandoned under its
    /// [`SendOptions::reliability`] (SCTP's partial reliability): it is
    /// never delivered, nor acknowledged.
    Abandoned { message: u64 },
    /// New data goes to another of the peer's addresses from now on (an
    /// SCTP failover or switchback, RFC 9260 6.4 / RFC 7829).
    DataPathChanged { at: Time },
    /// The connection closed or failed.
    Closed,
    /// Anything else the protocol reports.
    Other,
}

/// How a message is to be sent, beyond its bytes: SCTP's unordered
/// delivery and partial-reliability policy (RFC 3758, RFC 7496). The
/// default is an ordered, reliable message, which every transport sends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SendOptions {
    /// Deliver without regard to order on the stream (SCTP's U bit).
    pub unordered: bool,
    /// How hard to try; applies only where the connection negotiated
    /// partial reliability.
    pub reliability: Reliability,
    /// The SCTP stream (0 by default); a transport without streams refuses
    /// any other.
    pub stream: u16,
}

impl SendOptions {
    /// Whether these are the defaults: ordered and reliable.
    pub fn is_default(&self) -> bool {
        *self == SendOptions::default()
    }
}

/// A connection's sending state, as a saturating sender paces itself by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SendState {
    /// Messages written and not yet sent in full.
    pub queued_messages: usize,
    /// Bytes in flight and the congestion window, bytes.
    pub flight_size: u32,
    pub cwnd: u32,
    /// Retransmission timeouts found spurious and undone (SCTP).
    pub spurious_timeouts_undone: u64,
    /// Payload bytes sent for the first time: retransmissions excluded
    /// (seed 004's lambda, eq. 1).
    pub new_payload_bytes: u64,
}

/// A transport that carries whole messages: the application side that the
/// lab's traffic generators use, the same for every protocol.
pub trait Messages: Transport {
    /// What opening a connection takes besides the address.
    type Config: Clone + Debug + 'static;
    /// The names of its retransmission causes, in a fixed order.
    const CAUSES: &'static [&'static str];

    /// Opens a connection to `remote`.
    fn open(&mut self, now: Time, remote: SocketAddr, config: &Self::Config) -> Option<Self::Conn>;
    /// Sends one message on `conn`; returns its handle, which
    /// [`Happening::Acked`] names.
    fn send_message(
        &mut self,
        now: Time,
        conn: Self::Conn,
        message: Vec<u8>,
    ) -> Result<u64, Refused>;
    /// Sends one message on `conn` as `options` say. A transport that
    /// cannot honour them refuses the message (the default does, for
    /// anything but ordered and reliable).
    fn send_message_with(
        &mut self,
        now: Time,
        conn: Self::Conn,
        message: Vec<u8>,
        options: SendOptions,
    ) -> Result<u64, Refused> {
        if options.is_default() {
            self.send_message(now, conn, message)
        } else {
            Err(Refused::Failed(format!(
                "this transport sends every message ordered and reliably, not as {options:?}"
            )))
        }
    }
    /// The next whole message received on `conn`.
    fn recv_message(&mut self, conn: Self::Conn) -> Option<Bytes>;
    /// Every whole message received on `conn`, in order, handed to `each`.
    fn drain_messages(&mut self, conn: Self::Conn, each: &mut dyn FnMut(Bytes)) {
        while let Some(m) = self.recv_message(conn) {
            each(m);
        }
    }
    /// The event in the neutral vocabulary.
    fn happening(event: &Self::Event) -> Happening;
    /// The sending state of `conn`, if it exists.
    fn send_state(&mut self, conn: Self::Conn) -> Option<SendState>;
}
