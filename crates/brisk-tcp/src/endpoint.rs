//! One host's TCP: the connection table, demultiplexing by the peer's
//! address, listening, and what happens to segments no connection takes.

use std::collections::{BTreeMap, VecDeque};
use std::net::{SocketAddr, SocketAddrV4};

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::Time;
use crate::config::{ConfigError, TcpConfig};
use crate::conn::{Connection, State};
use crate::events::{EndpointStats, TcpEvent};
use crate::wire::{self, Header, Options, WireError, flags};

/// Resets waiting to be sent at most; more are counted and not sent.
pub const MAX_PENDING_RESETS: usize = 64;

/// Events waiting for `poll_event` at most. Beyond this, `Readable`,
/// `Retransmission` and `Trace` events are dropped and counted
/// (`EndpointStats::events_dropped`); `Connected`, `PeerClosed` and
/// `Closed` are always kept (at most a few per connection).
pub const MAX_QUEUED_EVENTS: usize = 1 << 16;

/// A connection's handle within its endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnId(pub u32);

/// Why `connect` failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectError {
    /// The model speaks IPv4 only.
    #[error("TCP model is IPv4 only: local {local}, remote {remote}")]
    NotIpv4 {
        /// Our address.
        local: SocketAddr,
        /// The peer's address.
        remote: SocketAddr,
    },
    /// A connection to this peer address exists already.
    #[error("a connection to {remote} already exists")]
    AlreadyConnected {
        /// The peer's address.
        remote: SocketAddr,
    },
    /// The endpoint holds `max_connections` connections.
    #[error("the endpoint already holds its maximum of {max} connections")]
    TooManyConnections {
        /// `max_connections`.
        max: u32,
    },
}

/// One host's TCP at one IPv4 address and port.
#[derive(Debug, Clone)]
pub struct TcpEndpoint {
    local: SocketAddr,
    local4: Option<SocketAddrV4>,
    config: TcpConfig,
    listen: bool,
    rng: ChaCha8Rng,
    conns: BTreeMap<ConnId, Connection>,
    by_remote: BTreeMap<SocketAddrV4, ConnId>,
    next_id: u32,
    /// Where the next `poll_transmit` starts looking (round robin).
    cursor: u32,
    events: VecDeque<(ConnId, TcpEvent)>,
    resets: VecDeque<(SocketAddrV4, Header)>,
    /// Closed connections whose `Closed` event was taken: removed at the
    /// next `handle_segment`, `handle_timeout` or `connect`.
    reap: Vec<ConnId>,
    stats: EndpointStats,
}

impl TcpEndpoint {
    /// One host's TCP at `local` (an IPv4 SocketAddr). If `listen` is true it
    /// accepts SYNs to `local` with `config`. Initial sequence numbers come
    /// from `seed`. Out-of-range config values are moved into range
    /// ([`TcpConfig::sanitized`]); an IPv6 `local` makes an endpoint that
    /// drops everything and refuses to connect.
    pub fn new(local: SocketAddr, config: TcpConfig, listen: bool, seed: u64) -> Self {
        let local4 = match local {
            SocketAddr::V4(a) => Some(a),
            SocketAddr::V6(_) => None,
        };
        Self {
            local,
            local4,
            config: config.sanitized(),
            listen,
            rng: ChaCha8Rng::seed_from_u64(seed),
            conns: BTreeMap::new(),
            by_remote: BTreeMap::new(),
            next_id: 1,
            cursor: 0,
            events: VecDeque::new(),
            resets: VecDeque::new(),
            reap: Vec::new(),
            stats: EndpointStats::default(),
        }
    }

    /// As [`TcpEndpoint::new`], but an invalid config is an error.
    pub fn try_new(
        local: SocketAddr,
        config: TcpConfig,
        listen: bool,
        seed: u64,
    ) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(Self::new(local, config, listen, seed))
    }

    /// Our address.
    pub fn local(&self) -> SocketAddr {
        self.local
    }

    /// The configuration connections are made with.
    pub fn config(&self) -> &TcpConfig {
        &self.config
    }

    /// Active open to `remote` with the endpoint's config: the SYN goes out
    /// at the next `poll_transmit`.
    pub fn connect(&mut self, now: Time, remote: SocketAddr) -> Result<ConnId, ConnectError> {
        self.reap_closed();
        let (Some(local), SocketAddr::V4(remote4)) = (self.local4, remote) else {
            return Err(ConnectError::NotIpv4 {
                local: self.local,
                remote,
            });
        };
        if self.by_remote.contains_key(&remote4) {
            return Err(ConnectError::AlreadyConnected { remote });
        }
        let Some(id) = self.allocate_id() else {
            return Err(ConnectError::TooManyConnections {
                max: self.config.max_connections,
            });
        };
        let iss = self.rng.next_u32();
        let conn = Connection::connect(now, self.config.clone(), local, remote4, iss);
        self.conns.insert(id, conn);
        self.by_remote.insert(remote4, id);
        Ok(id)
    }

    /// A new id, if the table has room.
    fn allocate_id(&mut self) -> Option<ConnId> {
        let max = usize::try_from(self.config.max_connections).unwrap_or(usize::MAX);
        if self.conns.len() >= max {
            return None;
        }
        let id = ConnId(self.next_id);
        self.next_id = self.next_id.checked_add(1)?;
        Some(id)
    }

    /// A received TCP segment (header, options and payload, no IP header)
    /// from `from`. A segment that fails the checksum or is malformed is
    /// dropped and counted.
    pub fn handle_segment(&mut self, now: Time, from: SocketAddr, segment: &[u8]) {
        self.reap_closed();
        self.stats.segments_received += 1;
        let (Some(local), SocketAddr::V4(from4)) = (self.local4, from) else {
            self.stats.not_ipv4 += 1;
            return;
        };
        let seg = match wire::parse(segment, *from4.ip(), *local.ip()) {
            Ok(seg) => seg,
            Err(WireError::BadChecksum) => {
                self.stats.bad_checksum += 1;
                return;
            }
            Err(_) => {
                self.stats.malformed += 1;
                return;
            }
        };
        let h = seg.header;
        if h.dst_port != local.port() || h.src_port != from4.port() {
            self.stats.wrong_port += 1;
            return;
        }
        if let Some(&id) = self.by_remote.get(&from4) {
            if let Some(conn) = self.conns.get_mut(&id) {
                conn.on_segment(now, &seg);
                self.collect(id);
                return;
            }
        }
        if h.has(flags::RST) {
            self.stats.no_connection += 1;
            return;
        }
        if self.listen && h.has(flags::SYN) && !h.has(flags::ACK) {
            // RFC 9293 3.10.7.2, LISTEN: a SYN opens a connection, if the table has room.
            let Some(id) = self.allocate_id() else {
                self.stats.syns_refused += 1;
                return;
            };
            let iss = self.rng.next_u32();
            let conn = Connection::accept(now, self.config.clone(), local, from4, &h, iss);
            self.conns.insert(id, conn);
            self.by_remote.insert(from4, id);
            self.stats.connections_accepted += 1;
            self.collect(id);
            return;
        }
        self.stats.no_connection += 1;
        self.queue_reset(from4, &h, seg.seq_len());
    }

    /// RFC 9293 3.10.7.1: a reset for a segment that reached no connection.
    fn queue_reset(&mut self, to: SocketAddrV4, h: &Header, seq_len: u64) {
        if self.resets.len() >= MAX_PENDING_RESETS {
            self.stats.resets_suppressed += 1;
            return;
        }
        let (seq, ack, bits) = if h.has(flags::ACK) {
            (h.ack, 0, flags::RST)
        } else {
            // seq_len < 2^32 (a segment is at most 65535 bytes).
            (
                0,
                h.seq.wrapping_add(seq_len as u32),
                flags::RST | flags::ACK,
            )
        };
        self.resets.push_back((
            to,
            Header {
                src_port: h.dst_port,
                dst_port: h.src_port,
                seq,
                ack,
                flags: bits,
                window: 0,
                urgent: 0,
                options: Options::default(),
            },
        ));
    }

    /// Runs every timer due by `now`.
    pub fn handle_timeout(&mut self, now: Time) {
        self.reap_closed();
        let due: Vec<ConnId> = self
            .conns
            .iter()
            .filter(|(_, c)| c.poll_timeout().is_some_and(|t| t <= now))
            .map(|(id, _)| *id)
            .collect();
        for id in due {
            if let Some(conn) = self.conns.get_mut(&id) {
                conn.on_timeout(now);
            }
            self.collect(id);
        }
    }

    /// The earliest deadline of any timer of any connection.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.conns
            .values()
            .filter_map(Connection::poll_timeout)
            .min()
    }

    /// Writes the next segment to send into `buf` (clears it first) and
    /// returns its destination; `None` when nothing is to be sent now.
    /// Connections take turns, one segment each.
    pub fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<SocketAddr> {
        buf.clear();
        let order: Vec<ConnId> = self
            .conns
            .range(ConnId(self.cursor)..)
            .chain(self.conns.range(..ConnId(self.cursor)))
            .map(|(id, _)| *id)
            .collect();
        for id in order {
            let Some(conn) = self.conns.get_mut(&id) else {
                continue;
            };
            if conn.poll_transmit(now, buf) {
                let to = conn.remote();
                self.cursor = id.0.wrapping_add(1);
                self.collect(id);
                return Some(SocketAddr::V4(to));
            }
        }
        let local = self.local4?;
        while let Some((to, h)) = self.resets.pop_front() {
            if wire::write(&h, &[], *local.ip(), *to.ip(), buf).is_ok() {
                self.stats.resets_sent += 1;
                return Some(SocketAddr::V4(to));
            }
        }
        buf.clear();
        None
    }

    /// The next event of any connection. After `Closed(_)` for a connection,
    /// it can still be looked at with [`TcpEndpoint::connection_ref`] until
    /// the next `handle_segment`, `handle_timeout` or `connect`.
    pub fn poll_event(&mut self) -> Option<(ConnId, TcpEvent)> {
        let ids: Vec<ConnId> = self.conns.keys().copied().collect();
        for id in ids {
            self.collect(id);
        }
        let (id, event) = self.events.pop_front()?;
        if matches!(event, TcpEvent::Closed(_)) {
            self.reap.push(id);
        }
        Some((id, event))
    }

    /// A connection, to write, read or close.
    pub fn connection(&mut self, id: ConnId) -> Option<&mut Connection> {
        self.conns.get_mut(&id)
    }

    /// A connection, to look at.
    pub fn connection_ref(&self, id: ConnId) -> Option<&Connection> {
        self.conns.get(&id)
    }

    /// The ids of the connections held, in order.
    pub fn connection_ids(&self) -> Vec<ConnId> {
        self.conns.keys().copied().collect()
    }

    /// What the endpoint saw and did outside its connections.
    pub fn stats(&self) -> &EndpointStats {
        &self.stats
    }

    /// Moves a connection's events to the endpoint's queue, and takes a
    /// closed connection out of the address table (and out of the
    /// connection table at once if the application never knew of it).
    fn collect(&mut self, id: ConnId) {
        let Some(conn) = self.conns.get_mut(&id) else {
            return;
        };
        for e in conn.drain_events() {
            let droppable = matches!(
                e,
                TcpEvent::Readable | TcpEvent::Retransmission { .. } | TcpEvent::Trace { .. }
            );
            if droppable && self.events.len() >= MAX_QUEUED_EVENTS {
                self.stats.events_dropped += 1;
            } else {
                self.events.push_back((id, e));
            }
        }
        if conn.state() == State::Closed {
            let remote = conn.remote();
            let visible = conn.visible;
            if self.by_remote.get(&remote) == Some(&id) {
                self.by_remote.remove(&remote);
            }
            if !visible {
                self.conns.remove(&id);
                self.stats.embryonic_dropped += 1;
            }
        }
    }

    fn reap_closed(&mut self) {
        for id in std::mem::take(&mut self.reap) {
            self.conns.remove(&id);
        }
    }
}
