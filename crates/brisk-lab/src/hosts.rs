//! A flow's two hosts, on whichever transport its variant runs, and the
//! protocol-neutral record the lab's metrics read once the run is over.
//!
//! The runner lays out flows, links and impairments the same way for every
//! transport; only here does it matter which protocol a host speaks. A flow
//! is a [`Sender`] on one host and a [`Receiver`] on another, generic over
//! the transport; [`FlowHosts`] remembers which, so the runner can ask
//! whether the flow is complete and take its [`FlowRecord`] without knowing.

use std::net::SocketAddr;
use std::time::Duration;

use brisk_proto::{Config, Endpoint, EndpointConfig, Time};
use brisk_sim::transport::TcpMessages;
use brisk_sim::{HostId, Messages, Retransmission, SendOptions, Sim};
use brisk_tcp::TcpConfig;

use crate::traffic::{Planned, Receiver, Saturation, Sender};

/// What the lab keeps of one flow: the per-message record (when each
/// message was written, first sent and read) and every retransmission with
/// its cause and data unit.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowRecord {
    /// When each planned message was written, by message number.
    pub written: Vec<Option<Time>>,
    /// When each planned message was first sent, by message number (once
    /// acknowledged: its first chunk or byte's first transmission).
    pub first_sent: Vec<Option<Time>>,
    /// When each planned message was read, by message number.
    pub read: Vec<Option<Time>>,
    /// The sender's retransmissions, in the order made.
    pub retransmissions: Vec<Retransmission>,
    /// The transport's retransmission causes, in its fixed order.
    pub causes: &'static [&'static str],
    /// Saturated traffic: messages written.
    pub saturated_written: u64,
    /// Payload bytes read, and those read within the measurement window.
    pub bytes: u64,
    pub window_bytes: u64,
    /// Retransmission timeouts the sender found spurious and undid.
    pub spurious_timeouts_undone: u64,
    /// Payload bytes the sender sent for the first time (seed 004's
    /// lambda: retransmissions excluded).
    pub new_payload_bytes: u64,
    /// Which planned messages the sender reported abandoned (partial
    /// reliability), by message number.
    pub abandoned: Vec<bool>,
    /// Messages the receiver read again after their first reading.
    pub duplicates: u64,
    /// When the sender moved new data to another of the peer's addresses.
    pub data_path_changes: Vec<Time>,
}

impl FlowRecord {
    /// Whether every planned message was read, or abandoned by the
    /// sender (partial reliability: it is never to be read).
    pub fn complete(&self) -> bool {
        self.read
            .iter()
            .enumerate()
            .all(|(i, r)| r.is_some() || self.abandoned.get(i).copied().unwrap_or(false))
    }

    /// How long message `i` waited in the sender before its first
    /// transmission, ms (send buffer, Nagle, cwnd, the peer's window).
    pub fn send_wait_ms(&self, i: usize) -> Option<f64> {
        let w = self.written.get(i).copied().flatten()?;
        let s = self.first_sent.get(i).copied().flatten()?;
        Some((s.as_micros() as f64 - w.as_micros() as f64) / 1000.0)
    }

    /// Message `i`'s transfer time, ms: from its write to its read.
    pub fn mtt_ms(&self, i: usize) -> Option<f64> {
        let w = self.written.get(i).copied().flatten()?;
        let r = self.read.get(i).copied().flatten()?;
        Some((r.as_micros() as f64 - w.as_micros() as f64) / 1000.0)
    }
}

/// A flow's hosts, and how to read its applications.
#[derive(Debug, Clone, Copy)]
pub struct FlowHosts {
    pub sender: HostId,
    pub receiver: HostId,
    complete: fn(&Sim, HostId) -> bool,
    take: fn(&mut Sim, HostId, HostId) -> Option<FlowRecord>,
}

impl FlowHosts {
    /// Whether the receiver has read every planned message.
    pub fn complete(&self, sim: &Sim) -> bool {
        (self.complete)(sim, self.receiver)
    }

    /// Takes the flow's record out of its applications (once).
    pub fn take(&self, sim: &mut Sim) -> Option<FlowRecord> {
        (self.take)(sim, self.sender, self.receiver)
    }
}

/// What both ends of a flow are given.
#[derive(Debug, Clone)]
pub struct FlowSetup {
    pub sender_addr: SocketAddr,
    pub receiver_addr: SocketAddr,
    /// Each host's further addresses (a multi-homed flow); the receiver
    /// associates to `sender_addr`.
    pub sender_more: Vec<SocketAddr>,
    pub receiver_more: Vec<SocketAddr>,
    pub plan: Vec<Planned>,
    /// Time from the connection coming up to the first message.
    pub lead: Duration,
    /// Saturated traffic, and its warm-up.
    pub saturated: Option<(Saturation, Duration)>,
    /// Record when each message was first sent (and which were abandoned).
    pub first_sent: bool,
    /// How the sender sends each message.
    pub options: SendOptions,
}

impl FlowSetup {
    /// The sender's addresses, its first first.
    pub fn sender_addrs(&self) -> Vec<SocketAddr> {
        std::iter::once(self.sender_addr)
            .chain(self.sender_more.iter().copied())
            .collect()
    }

    /// The receiver's addresses, its first first.
    pub fn receiver_addrs(&self) -> Vec<SocketAddr> {
        std::iter::once(self.receiver_addr)
            .chain(self.receiver_more.iter().copied())
            .collect()
    }
}

/// An SCTP flow: the sender's endpoint accepts the association the
/// receiver opens (as in seed 000), each with its config; a host with
/// several addresses lists them all (RFC 9260 5.1.2, see
/// [`brisk_sim::multihomed`]).
pub fn add_sctp_flow(
    sim: &mut Sim,
    setup: &FlowSetup,
    sender: Config,
    receiver: Config,
) -> FlowHosts {
    let sender_host = EndpointConfig {
        port: 5000,
        accept: true,
        accept_config: sender,
        ..EndpointConfig::default()
    };
    let sender_host = brisk_sim::multihomed(sender_host, &setup.sender_addrs());
    let receiver_host = EndpointConfig {
        port: 5000,
        accept: false,
        ..EndpointConfig::default()
    };
    let receiver_host = brisk_sim::multihomed(receiver_host, &setup.receiver_addrs());
    add_flow::<Endpoint>(
        sim,
        setup,
        |seed| Endpoint::new(sender_host, seed),
        |seed| Endpoint::new(receiver_host, seed),
        receiver,
    )
}

/// A TCP flow: the sender's TCP model listens, the receiver's connects
/// (as the SCTP flows associate), each with its config.
pub fn add_tcp_flow(
    sim: &mut Sim,
    setup: &FlowSetup,
    sender: TcpConfig,
    receiver: TcpConfig,
) -> FlowHosts {
    let (s, r) = (setup.sender_addr, setup.receiver_addr);
    add_flow::<TcpMessages>(
        sim,
        setup,
        |seed| TcpMessages::new(s, sender, true, seed),
        |seed| TcpMessages::new(r, receiver, false, seed),
        (),
    )
}

/// A flow over transport `T`: the sender's host from `sender`, the
/// receiver's from `receiver`; the receiver opens the connection with
/// `open`.
pub fn add_flow<T: Messages>(
    sim: &mut Sim,
    setup: &FlowSetup,
    sender: impl FnOnce([u8; 32]) -> T,
    receiver: impl FnOnce([u8; 32]) -> T,
    open: T::Config,
) -> FlowHosts {
    let app = match setup.saturated {
        Some((s, _)) => Sender::<T>::saturated(s, setup.lead),
        None if setup.first_sent => Sender::<T>::new(setup.plan.clone(), setup.lead),
        None => Sender::<T>::new(setup.plan.clone(), setup.lead).without_first_sent(),
    };
    let app = app.with_options(setup.options);
    let sender = sim.add_host_with_addresses(&setup.sender_addrs(), sender, Box::new(app));
    let mut receiver_app = Receiver::<T>::new(setup.sender_addr, open, setup.plan.len());
    if let Some((s, warmup)) = setup.saturated {
        receiver_app = receiver_app.with_window(setup.lead, warmup, s.duration);
    }
    let receiver =
        sim.add_host_with_addresses(&setup.receiver_addrs(), receiver, Box::new(receiver_app));
    FlowHosts {
        sender,
        receiver,
        complete: complete::<T>,
        take: take::<T>,
    }
}

fn complete<T: Messages>(sim: &Sim, receiver: HostId) -> bool {
    sim.app::<Receiver<T>>(receiver)
        .is_some_and(Receiver::complete)
}

fn take<T: Messages>(sim: &mut Sim, sender: HostId, receiver: HostId) -> Option<FlowRecord> {
    let conn = sim.app::<Sender<T>>(sender)?.assoc();
    let state = conn
        .and_then(|c| sim.transport::<T>(sender)?.send_state(c))
        .unwrap_or_default();
    let s = sim.app_mut::<Sender<T>>(sender)?;
    let mut record = FlowRecord {
        written: std::mem::take(&mut s.written),
        first_sent: std::mem::take(&mut s.first_sent),
        abandoned: std::mem::take(&mut s.abandoned),
        retransmissions: std::mem::take(&mut s.retransmissions),
        data_path_changes: std::mem::take(&mut s.data_path_changes),
        causes: T::CAUSES,
        saturated_written: s.saturated_written,
        spurious_timeouts_undone: state.spurious_timeouts_undone,
        new_payload_bytes: state.new_payload_bytes,
        ..FlowRecord::default()
    };
    let r = sim.app_mut::<Receiver<T>>(receiver)?;
    record.read = std::mem::take(&mut r.read);
    record.bytes = r.bytes;
    record.window_bytes = r.window_bytes;
    record.duplicates = r.duplicates;
    Some(record)
}
