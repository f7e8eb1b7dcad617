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
//! - RFC 5681 congestion control in bytes or, as ns-2, in packets, with
//!   optional appropriate byte counting (RFC 3465; Linux counts acknowledged
//!   segments the same way);
//! - fast retransmit and NewReno (RFC 6582) without SACK, RFC 6675 recovery
//!   with it; Limited Transmit (RFC 3042); the RTO of RFC 6298 with Karn's
//!   rule and back-off;
//! - Early Retransmit (RFC 5827), RACK-TLP (RFC 8985), Linux's
//!   thin-stream linear timeouts and fast retransmit on the first dupack,
//!   and Linux's autocorking of short writes.
//!
//! Not modelled: timestamps (RFC 7323 3), ECN, D-SACK, simultaneous open,
//! urgent data, the restart window after idle (RFC 5681 4.1), congestion
//! window validation (RFC 7661: cwnd grows while application-limited), CUBIC
//! (the `linux` preset uses Reno), PRR (RFC 6937), RFC 6675's rescue
//! retransmission (NextSeg rule 4).
//!
//! Choices where the RFCs leave room, and deviations:
//!
//! - The scoreboard is kept per segment as sent: a segment is SACKed when
//!   one block covers it whole (RFC 6675 tracks octets). It holds only
//!   segments sent, so it is bounded by the send buffer.
//! - On a retransmission timeout SACK information is kept (RFC 6675 5.1),
//!   unless the first outstanding segment shows SACKed (a renege, RFC 2018
//!   8), and everything not SACKed is resent in order under slow start.
//! - ssthresh on loss is RFC 5681 eq. 4 (half the flight) also when cwnd is
//!   counted in packets; ns-2 and Linux's Reno halve cwnd instead.
//! - With RACK-TLP in use, the DupThresh rules are off (as in Linux); RACK
//!   needs SACK, so without it the DupThresh rules stay. Without D-SACK, a
//!   retransmitted tail loss probe that is acknowledged is taken to have
//!   repaired a loss, and cwnd is reduced once (RFC 8985 7.4 would wait for
//!   a D-SACK to rule that out).
//! - `thin_dupack` follows the plain rule (fewer than four segments
//!   outstanding); Linux also wanted SACK, no unsent data, and not the
//!   initial slow start.
//! - A zero-window probe is one byte of new data beyond the window; while
//!   the peer's window stays closed its timeouts neither count towards
//!   `max_retransmissions` nor reduce cwnd (RFC 1122 4.2.2.17).
//! - Delayed ACK: "every second full-sized segment" is taken as two MSS of
//!   unacknowledged in-order bytes. Each segment that calls for an
//!   immediate ACK gets its own, even when several arrive between polls
//!   (up to 64 are held; then they are coalesced).
//! - RFC 6298 5.7 applies: after a retransmitted SYN or SYN-ACK, data
//!   starts with an RTO of 3 s. SYN retransmissions are counted in
//!   `rto_expirations` but raise no `Retransmission` event.
//! - RST and SYN in synchronized states follow RFC 5961 (exact sequence
//!   number, else a challenge ACK).
//! - Autocorking: the host's transmit queue is not modelled; a data segment
//!   (new or resent) is taken to stay in it for `autocork` after it is sent,
//!   while data is unacknowledged. A new segment short of the MSS waits
//!   until then, whatever made it due (Linux corks only at the end of a
//!   write, not when an ACK releases data); full segments, retransmissions,
//!   tail loss probes, window probes and data a close pushes out with its
//!   FIN go at once.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cc;
pub mod config;
pub mod conn;
pub mod cubic;
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
