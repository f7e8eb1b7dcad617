//! # brisk-proto
//!
//! The sans-IO core of Brisk, a user-space SCTP stack built for the timely
//! delivery of small messages. This crate never touches sockets, clocks or
//! threads: the caller passes time and randomness in, and moves the datagrams.
//!
//! - [`Endpoint`] owns the associations of one SCTP port; feed it datagrams
//!   and timeouts, and poll it for datagrams, deadlines and [`Event`]s.
//! - [`Association`] carries messages reliably: [`Association::send`],
//!   [`Association::recv`], [`Association::shutdown`], [`Association::abort`].
//! - [`wire`] is the complete packet codec.

#![forbid(unsafe_code)]

pub mod assoc;
pub mod cc;
pub mod config;
pub mod cookie;
pub mod endpoint;
pub mod events;
pub(crate) mod init;
pub mod message;
pub mod path;
pub mod rate;
pub mod recovery;
pub mod rx;
pub mod serial;
pub mod time;
pub mod timer;
pub mod tx;
pub mod wire;

pub use assoc::{
    AssocId, Association, PathError, PathInfo, ReconfigError, SchedulingError, SendError, State,
    Transmit,
};
pub use config::{
    Config, ConfigError, CongestionAlgorithm, EarlyRetransmit, KNOBS, Nagle, PRESETS,
    StreamScheduler,
};
pub use endpoint::{ConnectError, Endpoint, EndpointConfig, EndpointStats};
pub use events::{
    CloseReason, Event, FailoverCause, PathState, ResetDirection, RetransmitCause, Stats,
};
pub use message::{IncomingMessage, MessageId, OutgoingMessage, Reliability};
pub use time::Time;
