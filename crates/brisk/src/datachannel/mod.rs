//! WebRTC data channels (RFC 8831) opened with the Data Channel
//! Establishment Protocol (RFC 8832) over any Brisk association.
//!
//! There is no DTLS here: the DTLS role that RFC 8832 6 uses to split the
//! stream ids (the client opens even ids, the server odd ones) is a [`Role`]
//! the application chooses, opposite on the two ends.
//!
//! ```no_run
//! # async fn demo(assoc: brisk::Association) -> Result<(), brisk::datachannel::Error> {
//! use brisk::datachannel::{ChannelOptions, DataChannels, Message, Role};
//!
//! let channels = DataChannels::new(assoc, Role::Client);
//! let chat = channels.open("chat", ChannelOptions::default()).await?;
//! chat.send_text("hello").await?;
//! if let Message::Text(reply) = chat.recv().await? {
//!     println!("{reply}");
//! }
//! # Ok(())
//! # }
//! ```
//!
//! **Receiving and backpressure.** One task reads the association and
//! routes each message to its channel's queue, bounded by
//! [`DataChannelConfig::receive_queue_messages`] and
//! [`receive_queue_bytes`](DataChannelConfig::receive_queue_bytes). When a
//! queue is full the task waits until the application reads from that channel
//! (or drops it): nothing is discarded, and the association's receive window
//! closes, which slows the peer. The price is head-of-line blocking across
//! channels: while one channel's queue is full, no channel of the association
//! receives. A channel whose handle was dropped discards what arrives.
//!
//! **Closing** (RFC 8831 6.7) resets the channel's stream, so it needs
//! stream reconfiguration (RFC 6525, `Config::stream_reconfig`) on both
//! ends. Without it channels open and carry messages but cannot be closed
//! (`close` fails with [`Error::StreamResetNotNegotiated`]); OPENs that RFC
//! 8832 6 says to refuse then get no ACK and nothing more. A close is
//! bounded by [`DataChannelConfig::close_timeout`]: a peer that does not
//! reset its side is asked to (RFC 6525 5.1.3), then `close` gives up with
//! [`Error::CloseTimedOut`]; the stream id is reused only once both
//! directions are reset.
//!
//! **Metadata.** RFC 8832 lets a peer send a 65,535-byte label and protocol
//! with each OPEN. Each is bounded
//! ([`max_label_bytes`](DataChannelConfig::max_label_bytes),
//! [`max_protocol_bytes`](DataChannelConfig::max_protocol_bytes)), and all
//! channels' together by
//! [`metadata_budget_bytes`](DataChannelConfig::metadata_budget_bytes): an
//! OPEN over a bound is refused (RFC 8832 6) and counted.

mod channel;
mod closing;
pub mod dcep;
mod demux;
mod message;
mod options;
mod registry;
mod shared;

use std::sync::Arc;
use std::time::Duration;

use crate::association::Association;

pub use channel::DataChannel;
pub use message::{
    Message, PPID_BINARY, PPID_BINARY_EMPTY, PPID_BINARY_PARTIAL, PPID_STRING, PPID_STRING_EMPTY,
    PPID_STRING_PARTIAL,
};
pub use options::{ChannelOptions, PRIORITY_NORMAL};

use shared::{Guard, Shared};

/// Which half of the stream ids this end opens channels on (RFC 8832 6):
/// what its DTLS role would be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The DTLS client: even stream ids.
    Client,
    /// The DTLS server: odd stream ids.
    Server,
}

/// Limits that bound what a peer can make us hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataChannelConfig {
    /// Channels open at once, ours and the peer's. A DATA_CHANNEL_OPEN beyond
    /// it is refused (no ACK, RFC 8832 6); `open` fails.
    pub max_channels: usize,
    /// Channels the peer opened that wait for `accept`. An OPEN beyond it is
    /// refused.
    pub max_pending_accepts: usize,
    /// Messages a channel's receive queue holds.
    pub receive_queue_messages: usize,
    /// Bytes a channel's receive queue holds (one larger message is still
    /// taken into an empty queue).
    pub receive_queue_bytes: usize,
    /// Bytes of a channel's label at most. RFC 8832 5.1 allows 65535; an
    /// OPEN with a longer label is refused, `open` fails.
    pub max_label_bytes: usize,
    /// Bytes of a channel's sub-protocol at most, as `max_label_bytes`.
    pub max_protocol_bytes: usize,
    /// Bytes of labels and protocols held for the association's channels,
    /// all together: an OPEN that would exceed it is refused.
    pub metadata_budget_bytes: usize,
    /// How long `close` waits for both directions of the channel's stream
    /// to be reset. Half way, it asks the peer to reset its outgoing stream
    /// (RFC 6525 5.1.3); at the end it gives up ([`Error::CloseTimedOut`]).
    pub close_timeout: Duration,
}

impl Default for DataChannelConfig {
    fn default() -> Self {
        Self {
            max_channels: 1024,
            max_pending_accepts: 64,
            receive_queue_messages: 1024,
            receive_queue_bytes: 1 << 20,
            max_label_bytes: 1024,
            max_protocol_bytes: 1024,
            metadata_budget_bytes: 128 << 10,
            close_timeout: Duration::from_secs(10),
        }
    }
}

/// What the peer sent that was not delivered, and DCEP counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DataChannelStats {
    /// DATA_CHANNEL_OPEN messages received (and unreadable DCEP messages on
    /// unused streams, which count as failed OPENs).
    pub opens_received: u64,
    /// OPENs refused (RFC 8832 6): wrong parity, used stream, bad message,
    /// or over a limit.
    pub opens_refused: u64,
    /// DCEP messages that did not parse.
    pub dcep_malformed: u64,
    /// DATA_CHANNEL_ACKs for no channel of ours awaiting one.
    pub unexpected_acks: u64,
    /// User messages on a stream with no channel.
    pub data_on_unopened_stream: u64,
    /// User messages on a channel not delivered: a PPID that is not a data
    /// channel's (or a deprecated one), text that is not UTF-8, or a
    /// channel whose handle was dropped or that was closed.
    pub messages_discarded: u64,
    /// Of `opens_refused`: OPENs whose label or protocol was over its limit,
    /// or would have exceeded the metadata budget.
    pub opens_refused_metadata: u64,
    /// Bytes of labels and protocols held now, within
    /// [`DataChannelConfig::metadata_budget_bytes`].
    pub metadata_bytes: usize,
    /// Requests to the peer to reset its outgoing stream of a channel we
    /// close, when its reset did not come (RFC 6525 5.1.3).
    pub incoming_resets_requested: u64,
    /// Closes given up after [`DataChannelConfig::close_timeout`]: their
    /// stream ids stay out of use until both directions are reset.
    pub closes_timed_out: u64,
}

/// Why a channel is closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CloseReason {
    /// This end closed it (or dropped its handle).
    Local,
    /// The peer closed it: it reset its outgoing stream (RFC 8831 6.7).
    PeerClosed,
    /// The peer reset the stream before its DATA_CHANNEL_ACK arrived: it
    /// refused the channel (RFC 8832 6).
    Refused,
    /// Our stream reset was refused or failed; the channel cannot be used.
    ResetFailed,
    /// The peer violated RFC 8832 on the channel's stream.
    ProtocolViolation(&'static str),
    /// The association ended.
    AssociationEnded(String),
}

impl std::fmt::Display for CloseReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CloseReason::Local => write!(f, "closed by this end"),
            CloseReason::PeerClosed => write!(f, "closed by the peer"),
            CloseReason::Refused => write!(f, "the peer refused the channel"),
            CloseReason::ResetFailed => write!(f, "the stream reset failed"),
            CloseReason::ProtocolViolation(what) => write!(f, "peer violated RFC 8832: {what}"),
            CloseReason::AssociationEnded(why) => write!(f, "association ended: {why}"),
        }
    }
}

/// Why a data channel operation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The channel is closed; every message received before was delivered.
    #[error("data channel closed: {0}")]
    Closed(CloseReason),
    /// The association refused the message or has ended.
    #[error(transparent)]
    Association(#[from] crate::Error),
    /// Every stream id of our parity below the association's outbound stream
    /// count carries a channel.
    #[error("no free stream id of our parity among {streams} outbound streams")]
    NoFreeStream { streams: u16 },
    /// A negotiated channel's id is taken.
    #[error("stream {0} already carries a channel")]
    StreamInUse(u16),
    #[error("stream {stream} is beyond the association's {streams} outbound streams")]
    StreamOutOfRange { stream: u16, streams: u16 },
    #[error("{max} channels are open, the configured maximum")]
    TooManyChannels { max: usize },
    /// A partially reliable channel needs `Config::partial_reliability` on
    /// both ends; it was not negotiated.
    #[error("partial reliability was not negotiated on this association")]
    PartialReliabilityNotNegotiated,
    /// Closing a channel resets its stream (RFC 8831 6.7): both ends must
    /// set `Config::stream_reconfig`.
    #[error("stream reconfiguration (RFC 6525) was not negotiated: channels cannot be closed")]
    StreamResetNotNegotiated,
    /// The label or protocol is over its configured limit, or the channel
    /// would exceed the association's metadata budget.
    #[error("the channel's {what} of {len} bytes exceeds the limit of {max}")]
    MetadataTooLarge {
        what: &'static str,
        len: usize,
        max: usize,
    },
    /// The close did not complete within
    /// [`DataChannelConfig::close_timeout`]: the peer did not reset its
    /// side. The channel is closed; its stream id stays out of use until
    /// both directions are reset.
    #[error("the close of stream {stream} did not complete in {after:?}")]
    CloseTimedOut { stream: u16, after: Duration },
    /// The label or protocol is too long for DATA_CHANNEL_OPEN.
    #[error(transparent)]
    Encode(#[from] dcep::EncodeError),
}

/// The data channels of one association.
#[derive(Clone)]
pub struct DataChannels {
    guard: Arc<Guard>,
}

impl std::fmt::Debug for DataChannels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataChannels")
            .field("assoc", &self.guard.shared.assoc)
            .field("role", &self.guard.shared.role)
            .finish_non_exhaustive()
    }
}

impl DataChannels {
    /// Takes over the association's receiving: its `recv` and
    /// `stream_event` must not be called elsewhere. Starts the task that
    /// routes messages to channels, on the current tokio runtime; it stops
    /// when this value and every channel handle are dropped.
    pub fn new(assoc: Association, role: Role) -> Self {
        Self::with_config(assoc, role, DataChannelConfig::default())
    }

    pub fn with_config(assoc: Association, role: Role, config: DataChannelConfig) -> Self {
        Self {
            guard: Guard::start(Shared::new(assoc, role, config)),
        }
    }

    /// Opens a channel. With DCEP, sends DATA_CHANNEL_OPEN and resolves when
    /// the DATA_CHANNEL_ACK arrives; a negotiated channel opens at once.
    pub async fn open(&self, label: &str, options: ChannelOptions) -> Result<DataChannel, Error> {
        let ch = self.open_unacked(label, options).await?;
        ch.wait_acked().await?;
        Ok(ch)
    }

    /// Opens a channel without waiting for the DATA_CHANNEL_ACK: messages can
    /// be sent at once (RFC 8832 6), and go ordered until the ACK arrives.
    pub async fn open_unacked(
        &self,
        label: &str,
        options: ChannelOptions,
    ) -> Result<DataChannel, Error> {
        self.guard.open(label, options).await
    }

    /// The next channel the peer opened.
    pub async fn accept(&self) -> Result<DataChannel, Error> {
        self.guard.accept().await
    }

    /// Counters of what the peer sent.
    pub fn stats(&self) -> DataChannelStats {
        self.guard.shared.lock().stats()
    }

    /// The role this end plays.
    pub fn role(&self) -> Role {
        self.guard.shared.role
    }

    /// The association the channels run over.
    pub fn association(&self) -> &Association {
        &self.guard.shared.assoc
    }
}
