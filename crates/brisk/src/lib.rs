//! # brisk
//!
//! Brisk over real networks: a tokio driver around one
//! [`brisk_proto::Endpoint`] and its UDP sockets (one, or one per local
//! address for a multi-homed endpoint: [`Endpoint::bind_multihomed`]),
//! speaking SCTP over UDP (RFC 6951), with an async API. Under the endpoint, a
//! [`DatagramTransport`] of the application's may take the socket's place:
//! a DTLS connection, for SCTP over DTLS (RFC 8261), as WebRTC data channels
//! ([`datachannel`]) run ([`Endpoint::with_transport`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), brisk::Error> {
//! use brisk::{Config, Endpoint, EndpointConfig, SendOptions};
//!
//! let server = Endpoint::bind("127.0.0.1:9899".parse().unwrap(), EndpointConfig::default()).await?;
//! let client = Endpoint::bind(
//!     "127.0.0.1:0".parse().unwrap(),
//!     EndpointConfig { accept: false, ..EndpointConfig::default() },
//! )
//! .await?;
//! let assoc = client.connect(server.local_addr(), Config::rfc9260()).await?;
//! let peer = server.accept().await?;
//! assoc.send(0, &b"hello"[..], SendOptions { ppid: 51, ..SendOptions::default() }).await?;
//! let msg = peer.recv().await?;
//! assert_eq!(&msg.payload[..], b"hello");
//! assoc.close().await?;
//! # Ok(())
//! # }
//! ```

mod association;
pub mod datachannel;
mod driver;
mod endpoint;
mod error;
mod path_events;
mod shared;
mod socket_buffer;
mod source_route;
mod stream_events;
mod timer;
mod transport;

pub use association::{Association, SendOptions};
pub use brisk_proto::assoc::NO_ANSWER as RECONFIG_NO_ANSWER;
pub use brisk_proto::wire::chunk::ReconfigResult;
pub use brisk_proto::{
    CloseReason, Config, EndpointConfig, EndpointStats, FailoverCause, IncomingMessage, MessageId,
    PathError, PathInfo, PathState, ReconfigError, Reliability, ResetDirection, Stats,
};
pub use endpoint::{DEFAULT_UDP_PORT, Endpoint, UDP_IPV4_OVERHEAD, UDP_IPV6_OVERHEAD};
pub use error::Error;
pub use path_events::{PATH_EVENT_QUEUE, PathEvent};
pub use stream_events::{STREAM_EVENT_QUEUE, STREAM_EVENT_STREAMS, StreamEvent};
pub use transport::DatagramTransport;
