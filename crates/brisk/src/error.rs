//! Errors that say what happened.

use brisk_proto::{CloseReason, ConfigError, ConnectError, PathError, ReconfigError, SendError};

/// Why an operation on an endpoint or an association failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The UDP socket or the datagram transport failed to open.
    #[error("socket: {0}")]
    Io(#[from] std::io::Error),
    /// The datagram transport under the endpoint failed or ended
    /// ([`DatagramTransport::recv_from`](crate::DatagramTransport::recv_from)
    /// returned this error): the endpoint and its associations have stopped.
    #[error("the datagram transport failed: {0}")]
    TransportFailed(String),
    /// A configuration value is out of range.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `connect` was refused before anything was sent.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// INIT or COOKIE ECHO went unanswered.
    #[error("handshake timed out after {attempts} tries")]
    HandshakeTimeout { attempts: u32 },
    /// The peer sent ABORT.
    #[error("peer aborted the association: {cause}")]
    PeerAborted { cause: String },
    /// Association.Max.Retrans consecutive retransmissions or heartbeats went unanswered.
    #[error("peer unreachable: {errors} consecutive retransmissions or heartbeats unanswered")]
    PeerUnreachable { errors: u32 },
    /// A message larger than the configured maximum.
    #[error("message of {size} bytes is larger than the maximum of {max} bytes")]
    MessageTooLarge { size: usize, max: usize },
    /// The message could not be queued (stream, empty message, shutting down).
    #[error(transparent)]
    Send(SendError),
    /// The association has ended (gracefully, or by our own abort).
    #[error("association closed: {0}")]
    Closed(String),
    /// A stream reconfiguration request was refused before anything was sent.
    #[error(transparent)]
    Reconfig(#[from] ReconfigError),
    /// A destination the peer does not have (`set_primary`).
    #[error(transparent)]
    Path(#[from] PathError),
    /// The endpoint's driver has stopped.
    #[error("the endpoint has been closed")]
    EndpointClosed,
}

impl From<SendError> for Error {
    fn from(e: SendError) -> Self {
        match e {
            SendError::MessageTooLarge { size, max } => Error::MessageTooLarge { size, max },
            other => Error::Send(other),
        }
    }
}

impl Error {
    /// The error that tells the application why its association ended.
    pub fn from_close(reason: &CloseReason) -> Self {
        match reason {
            CloseReason::HandshakeTimeout { attempts } => Error::HandshakeTimeout {
                attempts: *attempts,
            },
            CloseReason::PeerAbort { causes } => Error::PeerAborted {
                cause: causes.clone(),
            },
            CloseReason::PeerUnreachable { errors } => Error::PeerUnreachable { errors: *errors },
            CloseReason::Shutdown => Error::Closed("shut down gracefully".into()),
            CloseReason::LocalAbort { reason } => Error::Closed(format!("aborted: {reason}")),
        }
    }
}
