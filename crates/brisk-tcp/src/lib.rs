//! # brisk-tcp
//!
//! A sans-IO TCP model for the Brisk lab's discrete-event simulator: no
//! sockets, clocks or threads. The caller passes time in ([`Time`]), hands
//! segments to [`TcpEndpoint::handle_segment`], runs timers with
//! [`TcpEndpoint::handle_timeout`] at [`TcpEndpoint::poll_timeout`], and
//! takes segments from [`TcpEndpoint::poll_transmit`] and events from
//! [`TcpEndpoint::poll_event`]. Initial sequence numbers come from a seed,
//! so the same seed and inputs give the same bytes.
//!
//! Segments are real TCP (RFC 9293): a 20-byte header, options (MSS,
//! window scale, SACK-Permitted, SACK) and payload, without the IP header,
//! with the checksum over the IPv4 pseudo-header, so that a capture opens
//! cleanly in Wireshark.
//!
//! What it models, each a knob of [`TcpConfig`] where it is optional:
//!
//! - the three-way handshake with SYN retransmission, MSS and window scale
//!   negotiation, a graceful FIN exchange ([`Connection::close`]) with
//!   TIME-WAIT, and resets ([`Connection::abort`]; RFC 5961 checks);
//! - segmentation at the MSS, Nagle (RFC 9293 3.7.4), silly window
//!   avoidance on both sides, zero-window probes;
//! - cumulative ACKs, delayed ACKs (RFC 5681 4.2), Linux-like quick-ack,
//!   SACK (RFC 2018);
//! - RFC 5681 congestion control in bytes or, as ns-2, in packets;
//! - fast retransmit and NewReno (RFC 6582) without SACK, RFC 6675 recovery
//!   with it; Limited Transmit (RFC 3042); the RTO of RFC 6298 with Karn's
//!   rule and back-off;
//! - Early Retransmit (RFC 5827), RACK-TLP (RFC 8985), and Linux's
//!   thin-stream linear timeouts and fast retransmit on the first dupack.
//!
//! Not modelled: timestamps (RFC 7323 3), ECN, D-SACK, simultaneous open,
//! urgent data, the restart window after idle (RFC 5681 4.1), CUBIC (the
//! `linux` preset uses Reno), PRR (RFC 6937).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cc;
pub mod config;
pub mod conn;
pub mod endpoint;
pub mod events;
pub mod recovery;
pub mod seq;
pub mod wire;

pub use brisk_proto::Time;
pub use config::{ConfigError, KNOB_TABLE, KNOBS, Knob, PRESETS, TcpConfig};
pub use conn::{Connection, State};
pub use endpoint::{ConnId, ConnectError, TcpEndpoint};
pub use events::{CloseReason, EndpointStats, RetransmitCause, TcpEvent, TcpStats};
