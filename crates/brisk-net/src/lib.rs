//! Brisk's link model, protocol-neutral and clock-neutral: what happens to a
//! packet between two hosts. The simulator (`brisk-sim`) runs it on virtual
//! time with bare SCTP packets; the emulator (`brisk-emu`) runs the same code
//! on the wall clock with IP packets from TUN devices, so real stacks meet
//! exactly the patterns the simulator uses.
//!
//! - [`Link`]: one direction of a link: an impairment chain ([`Impairment`],
//!   loadable from a [pattern file](pattern)), a drop-tail queue
//!   ([`QueueLimit`]), serialization at a bandwidth and propagation delay. It
//!   is computed, not stepped: a packet entering at a time gets its fate and
//!   arrival time at once.
//! - [`Classify`]: what a link needs to know about a packet: its size,
//!   whether it carries data, and its data units' sequence numbers, for
//!   [`SctpPacket`]s and for [`IpPacket`]s carrying SCTP (over UDP or IP) or
//!   TCP.
//! - [`pcap`] and [`pcapng`]: captures Wireshark opens; pcapng packets carry
//!   a comment naming what the link did to them.
//!
//! Every random draw comes from a ChaCha8 stream derived from a seed and the
//! stream's name ([`rng`]): the same seed and inputs give the same fates.

pub mod classify;
mod ids;
mod impair;
mod link;
pub mod pattern;
pub mod pcap;
pub mod pcapng;
pub mod rng;

pub use classify::{
    Class, Classify, IpPacket, NewChunk, SctpPacket, Unit, carries_data, data_tsns,
};
pub use ids::HostId;
pub use impair::{Chain, Impairment, Verdict, corrupt, micros};
pub use link::{
    DEFAULT_OVERHEAD, Entered, Fate, Link, LinkParams, LinkStats, Outcome, PacketRecord, QueueLimit,
};
pub use pattern::{PatternError, parse_pattern};
