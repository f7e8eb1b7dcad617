//! A deterministic discrete-event network simulator for Brisk.
//!
//! Hosts run a [`Transport`] (SCTP's `brisk_proto::Endpoint`, the TCP
//! model, any sans-IO protocol) and an [`App`]; routers forward by
//! destination address over static shortest-path routes (a host may have
//! several addresses, each bound to an interface: [`Sim::bind_address`],
//! [`dual_homed`]; the source address of a packet is its sender's address
//! on the interface it leaves by); each link direction
//! has impairments ([`Impairment`], loadable from a [pattern file](pattern)),
//! a drop-tail queue, a bandwidth and a propagation delay. Every packet can be
//! written to a pcap file (UDP-encapsulated SCTP) that Wireshark opens: one
//! classic pcap per link direction ([`Sim::capture`]), or one pcapng of every
//! link direction with dropped and corrupted packets commented
//! ([`Sim::capture_pcapng`]).
//!
//! Events are ordered by (time, insertion sequence), and every random draw
//! comes from a ChaCha8 stream derived from the simulation seed (one per host
//! endpoint, per app, per impairment of each link direction): the same seed
//! and inputs give the same bytes.
//!
//! After any input to a host (a datagram, a timer, an app callback) the
//! simulator sends everything the endpoint has, hands each event to the app
//! and sends again after each callback, then re-arms the endpoint's timer. So
//! each callback is its own instant: an app that sends one message per
//! callback sends one packet per message.
//!
//! ```
//! use std::time::Duration;
//! use brisk_proto::{AssocId, Config, EndpointConfig, Event, Time};
//! use brisk_sim::{App, AppCtx, LinkParams, Sim, point_to_point};
//!
//! #[derive(Default)]
//! struct Client { up: bool }
//! impl App for Client {
//!     fn start(&mut self, ctx: &mut AppCtx<'_>) {
//!         let (now, server) = (ctx.now(), "10.0.0.2:9899".parse().unwrap());
//!         ctx.endpoint().connect(now, server, Config::rfc9260()).unwrap();
//!     }
//!     fn on_event(&mut self, _: &mut AppCtx<'_>, _: AssocId, e: &Event) {
//!         self.up |= *e == Event::Connected;
//!     }
//!     fn on_timer(&mut self, _: &mut AppCtx<'_>, _: u64) {}
//! }
//!
//! let mut sim = Sim::new(1);
//! let a = sim.add_host("10.0.0.1:9899".parse().unwrap(), EndpointConfig::default(), Box::new(Client::default()));
//! let b = sim.add_host("10.0.0.2:9899".parse().unwrap(), EndpointConfig::default(), Box::new(Client::default()));
//! let link = LinkParams::new(1_000_000, Duration::from_millis(10));
//! point_to_point(&mut sim, a, b, link.clone(), link);
//! sim.run_until(Time::from_secs(1));
//! assert!(sim.app::<Client>(a).unwrap().up);
//! ```

mod capture;
mod host;
mod ids;
mod queue;
mod routing;
mod sim;
mod topology;
pub mod transport;

// The link model lives in `brisk-net`, shared with the emulator.
pub use brisk_net::{
    DEFAULT_OVERHEAD, Fate, HostId, Impairment, LinkParams, LinkStats, NewChunk, PacketRecord,
    PatternError, QueueLimit, carries_data, data_tsns, parse_pattern, pattern, pcap, pcapng,
};
pub use capture::CAPTURE_UDP_PORT;
pub use host::{App, AppCtx};
pub use ids::{LinkId, NodeId};
pub use sim::{Arrival, Sim, SimStats};
pub use topology::{
    DualHomedLinks, DumbbellLinks, dual_homed, dumbbell, dumbbell_per_flow, point_to_point,
};
pub use transport::{
    Congestion, Happening, Messages, Refused, Retransmission, SendOptions, SendState, Transport,
    Wire, multihomed,
};
