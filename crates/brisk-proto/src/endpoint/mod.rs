//! The endpoint: it owns the associations of one SCTP port, demultiplexes
//! packets to them, answers INIT without keeping state (the cookie carries it),
//! and applies the out-of-the-blue rules (RFC 9260 8.4).

mod lookup;

pub(crate) use lookup::Lookup;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, VecDeque};
use std::net::{IpAddr, SocketAddr};

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::assoc::{AssocId, Association, Ctx, Transmit};
use crate::config::{Config, ConfigError};
use crate::cookie::{CookieError, CookieSealer};
use crate::events::Event;
use crate::init::{self, InitAckInputs, build_init_ack, new_tag};
use crate::time::Time;
use crate::wire::cause::ErrorCause;
use crate::wire::chunk::{Abort, Chunk, OperationError, ShutdownComplete};
use crate::wire::{ChecksumPolicy, CommonHeader, Packet, PacketWriter, WireError, verify_checksum};

/// Configuration of an endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointConfig {
    /// Our SCTP port (in the SCTP common header).
    pub port: u16,
    /// Accept associations that peers start (answer INIT).
    pub accept: bool,
    /// Configuration of the associations we accept.
    pub accept_config: Config,
    /// Associations at most; further COOKIE ECHOs are answered with ABORT.
    pub max_associations: usize,
    /// Our IP addresses (RFC 9260 5.1.2), for a multi-homed endpoint: with two
    /// or more, INIT and INIT ACK list them all as address parameters and the
    /// peer may reach us at any of them. With none or one, no address
    /// parameter is sent (the peer uses the packet's source address), which
    /// keeps the single-homed handshake as it was.
    pub addresses: Vec<IpAddr>,
}

impl Default for EndpointConfig {
    fn default() -> Self {
        Self {
            port: 5000,
            accept: true,
            accept_config: Config::rfc9260(),
            max_associations: 100_000,
            addresses: Vec::new(),
        }
    }
}

/// Why `connect` failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectError {
    #[error(transparent)]
    InvalidConfig(#[from] ConfigError),
    #[error("an association with {remote} (SCTP port {port}) already exists")]
    AlreadyConnected { remote: SocketAddr, port: u16 },
    #[error("the endpoint already holds its maximum of {max} associations")]
    TooManyAssociations { max: usize },
    #[error("no address to connect to")]
    NoAddress,
}

/// What the endpoint saw and did with packets no association took.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointStats {
    pub packets_received: u64,
    /// Dropped: CRC32c mismatch (RFC 9260 6.8).
    pub bad_checksum: u64,
    /// Dropped: the packet did not decode (lengths, padding, bundling rules).
    pub malformed: u64,
    /// Dropped: the destination port is not ours.
    pub wrong_port: u64,
    /// Packets matching no association (RFC 9260 8.4).
    pub out_of_the_blue: u64,
    /// Of those, from a multicast, broadcast or unspecified source: dropped
    /// unanswered (RFC 9260 8.4 rule 1).
    pub non_unicast: u64,
    pub inits_received: u64,
    pub init_acks_sent: u64,
    pub aborts_sent: u64,
    pub cookies_accepted: u64,
    /// COOKIE ECHOs whose MAC, size, tag, ports or peer address did not
    /// verify: silently dropped.
    pub cookies_rejected: u64,
    pub stale_cookies: u64,
    /// Associations closed and forgotten.
    pub associations_closed: u64,
}

/// The SCTP endpoint of one port.
pub struct Endpoint {
    cfg: EndpointConfig,
    rng: ChaCha8Rng,
    sealer: CookieSealer,
    /// Boxed: a B-tree node then holds pointers, not 1.5 KB structs, so half
    /// empty nodes cost little (measured by `benches/memory.rs`).
    assocs: BTreeMap<AssocId, Box<Association>>,
    /// By peer address and port, and by our tag: O(1) demultiplexing.
    lookup: Lookup,
    next_id: u64,
    /// Deadlines by time; an entry is stale when `scheduled` disagrees.
    timers: BinaryHeap<Reverse<(Time, AssocId)>>,
    scheduled: BTreeMap<AssocId, Time>,
    /// Associations that may have a packet or an event to give.
    dirty: VecDeque<AssocId>,
    dirty_set: BTreeSet<AssocId>,
    /// Stateless answers: INIT ACK, ABORT, SHUTDOWN COMPLETE, ERROR.
    responses: VecDeque<(SocketAddr, Vec<u8>)>,
    events: VecDeque<(AssocId, Event)>,
    stats: EndpointStats,
    /// Whether peers' addresses are UDP addresses (RFC 6951) whose port may
    /// change under an association (5.4). See [`Endpoint::set_peer_port_learning`].
    learn_peer_ports: bool,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("port", &self.cfg.port)
            .field("associations", &self.assocs.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// An endpoint whose randomness (tags, initial TSNs, the cookie secret,
    /// heartbeat jitter) all comes from `seed`: the same seed, the same bytes.
    pub fn new(cfg: EndpointConfig, seed: [u8; 32]) -> Self {
        let mut rng = ChaCha8Rng::from_seed(seed);
        let mut key = [0u8; 32];
        rng.fill_bytes(&mut key);
        // The lookup tables' hash keys come from the secret by a stream of
        // their own, so the protocol's draws (tags, TSNs, jitter) stay as they were.
        let mut derive = ChaCha8Rng::from_seed(key);
        derive.set_stream(1);
        let lookup = Lookup::new(derive.next_u64(), derive.next_u64());
        Self {
            cfg,
            rng,
            sealer: CookieSealer::new(key),
            assocs: BTreeMap::new(),
            lookup,
            next_id: 1,
            timers: BinaryHeap::new(),
            scheduled: BTreeMap::new(),
            dirty: VecDeque::new(),
            dirty_set: BTreeSet::new(),
            responses: VecDeque::new(),
            events: VecDeque::new(),
            stats: EndpointStats::default(),
            learn_peer_ports: true,
        }
    }

    /// Whether a packet from a peer's IP address with a new port and an
    /// association's own tag moves that association to the new port (RFC
    /// 6951 5.4, on by default). It belongs to UDP encapsulation: a driver
    /// whose datagrams travel another way (DTLS, an in-memory pipe), where a
    /// peer's address is a key naming one connection, turns it off, so a
    /// packet arriving on another connection never takes an association over.
    pub fn set_peer_port_learning(&mut self, learn: bool) {
        self.learn_peer_ports = learn;
    }

    pub fn config(&self) -> &EndpointConfig {
        &self.cfg
    }

    pub fn stats(&self) -> &EndpointStats {
        &self.stats
    }

    /// Associations currently held.
    pub fn association_count(&self) -> usize {
        self.assocs.len()
    }

    /// Ids of the associations currently held.
    pub fn association_ids(&self) -> impl Iterator<Item = AssocId> + '_ {
        self.assocs.keys().copied()
    }

    /// Association `id`, to read (unlike [`Endpoint::association`], this
    /// schedules nothing).
    pub fn association_ref(&self, id: AssocId) -> Option<&Association> {
        self.assocs.get(&id).map(|a| &**a)
    }

    /// Starts an association with the peer at `remote` whose SCTP port equals ours.
    pub fn connect(
        &mut self,
        now: Time,
        remote: SocketAddr,
        cfg: Config,
    ) -> Result<AssocId, ConnectError> {
        let port = self.cfg.port;
        self.connect_to_port(now, remote, port, cfg)
    }

    /// Starts an association with the SCTP port `peer_port` at `remote`.
    pub fn connect_to_port(
        &mut self,
        now: Time,
        remote: SocketAddr,
        peer_port: u16,
        cfg: Config,
    ) -> Result<AssocId, ConnectError> {
        self.connect_to_addresses(now, &[remote], peer_port, cfg)
    }

    /// Starts an association with a multi-homed peer known by several
    /// addresses (RFC 9260 5.1, 5.4 rule 1; the sockets API's `connectx`):
    /// the first is the primary, every one is a confirmed destination, and
    /// an INIT that goes unanswered is sent again to the next address.
    pub fn connect_to_addresses(
        &mut self,
        now: Time,
        remotes: &[SocketAddr],
        peer_port: u16,
        cfg: Config,
    ) -> Result<AssocId, ConnectError> {
        cfg.validate()?;
        let Some(&remote) = remotes.first() else {
            return Err(ConnectError::NoAddress);
        };
        if let Some(&taken) = remotes
            .iter()
            .find(|r| self.lookup.contains_peer(&(**r, peer_port)))
        {
            return Err(ConnectError::AlreadyConnected {
                remote: taken,
                port: peer_port,
            });
        }
        if self.assocs.len() >= self.cfg.max_associations {
            return Err(ConnectError::TooManyAssociations {
                max: self.cfg.max_associations,
            });
        }
        let id = self.allocate_id();
        let lookup = &self.lookup;
        let local_tag = new_tag(&mut self.rng, &|t| lookup.tag_in_use(t));
        let mut assoc = Association::connect(
            id,
            cfg,
            now,
            remote,
            self.cfg.port,
            peer_port,
            local_tag,
            &self.cfg.addresses,
            &mut self.rng,
        );
        assoc.add_given_addresses(remotes.get(1..).unwrap_or_default());
        self.insert(assoc, (remote, peer_port));
        // The other addresses find the association too.
        self.collect(id);
        Ok(id)
    }

    fn allocate_id(&mut self) -> AssocId {
        let id = AssocId(self.next_id);
        self.next_id += 1;
        id
    }

    fn insert(&mut self, assoc: Association, key: (SocketAddr, u16)) {
        let id = assoc.id();
        self.lookup.insert(id, key, assoc.local_tag());
        self.assocs.insert(id, Box::new(assoc));
        self.touch(id);
    }

    /// The association `id`, to send, receive, or read its stats. Anything done
    /// through it is picked up by the next `poll_transmit` and `poll_timeout`.
    pub fn association(&mut self, id: AssocId) -> Option<&mut Association> {
        if self.assocs.contains_key(&id) {
            self.mark_dirty(id);
        }
        self.assocs.get_mut(&id).map(|a| &mut **a)
    }

    fn mark_dirty(&mut self, id: AssocId) {
        if self.dirty_set.insert(id) {
            self.dirty.push_back(id);
        }
    }

    /// After an association changed: schedule its timer, collect its events.
    fn touch(&mut self, id: AssocId) {
        self.mark_dirty(id);
        self.reschedule(id);
    }

    fn reschedule(&mut self, id: AssocId) {
        let deadline = self.assocs.get(&id).and_then(|a| a.poll_timeout());
        match deadline {
            Some(t) if self.scheduled.get(&id) != Some(&t) => {
                self.scheduled.insert(id, t);
                self.timers.push(Reverse((t, id)));
                self.compact_timers();
            }
            Some(_) => {}
            None => {
                self.scheduled.remove(&id);
            }
        }
        self.drop_stale_top();
    }

    /// Pops heap entries whose deadline moved, so that the top is always a
    /// live deadline and `poll_timeout` is exact: a driver never wakes for a
    /// deadline that no longer exists.
    fn drop_stale_top(&mut self) {
        while let Some(&Reverse((t, id))) = self.timers.peek() {
            if self.scheduled.get(&id) == Some(&t) {
                break;
            }
            self.timers.pop();
        }
    }

    /// Entries of a moved deadline stay in the heap until they come due; a
    /// peer that moves a deadline with every packet would grow it without
    /// bound. Once stale entries outnumber live ones, rebuild it from
    /// `scheduled` (amortised O(1) per push).
    fn compact_timers(&mut self) {
        if self.timers.len() > 2 * self.scheduled.len() + 64 {
            self.timers = self
                .scheduled
                .iter()
                .map(|(&id, &t)| Reverse((t, id)))
                .collect();
        }
    }

    /// Moves an association's events to the endpoint queue, and forgets the
    /// association once it is closed and has nothing left to send or say.
    fn collect(&mut self, id: AssocId) {
        let Some(a) = self.assocs.get_mut(&id) else {
            return;
        };
        while let Some(e) = a.poll_event() {
            self.events.push_back((id, e));
        }
        let port = a.peer_port();
        // 5.1.2: packets from each of the peer's addresses belong here.
        for remote in a.take_new_remotes() {
            self.lookup.add_peer(id, (remote, port));
        }
        if a.is_drained() {
            let tag = a.local_tag();
            let remotes: Vec<SocketAddr> = a.remotes().collect();
            self.assocs.remove(&id);
            for remote in remotes {
                self.lookup.remove_peer(id, (remote, port));
            }
            self.lookup.remove_tag(id, tag);
            self.scheduled.remove(&id);
            self.drop_stale_top();
            self.stats.associations_closed += 1;
        }
    }

    /// Handles one received datagram: an SCTP packet from `from`.
    pub fn handle_datagram(&mut self, now: Time, from: SocketAddr, data: &[u8]) {
        self.stats.packets_received += 1;
        let header = match CommonHeader::decode(data) {
            Ok(h) => h,
            Err(_) => {
                self.stats.malformed += 1;
                return;
            }
        };
        // RFC 9260 6.8: a packet with a bad checksum is discarded; with
        // PKTDROP, its association reports it.
        if let Err(WireError::BadChecksum { .. }) = verify_checksum(data, ChecksumPolicy::Verify) {
            self.stats.bad_checksum += 1;
            self.report_corrupted(from, &header, data);
            return;
        }
        if header.dst_port != self.cfg.port {
            self.stats.wrong_port += 1;
            return;
        }
        let packet = match Packet::decode_with(data, ChecksumPolicy::Ignore) {
            Ok(p) => p,
            Err(_) => {
                self.stats.malformed += 1;
                return;
            }
        };
        let key = (from, header.src_port);
        let known = self
            .lookup
            .by_peer(&key)
            .or_else(|| self.by_tag_from_destination(from, &header, packet.chunks.first()));
        if let Some(id) = known {
            if let Some(a) = self.assocs.get_mut(&id) {
                let tag = a.local_tag();
                let mut ctx = Ctx {
                    sealer: &self.sealer,
                    rng: &mut self.rng,
                    tag_in_use: &|t| self.lookup.tag_in_use(t),
                    addresses: &self.cfg.addresses,
                };
                a.handle_packet(now, &mut ctx, &header, &packet.chunks, from);
                // A restart (5.2.4 A) gives the association a new tag.
                let new_tag = a.local_tag();
                self.lookup.retag(id, tag, new_tag);
            }
            self.touch(id);
            self.collect(id);
            return;
        }
        self.out_of_the_blue(now, from, &header, &packet.chunks);
    }

    /// PKTDROP: a corrupted packet whose ports, source and verification tag
    /// still name an association is reported by it.
    fn report_corrupted(&mut self, from: SocketAddr, header: &CommonHeader, data: &[u8]) {
        if header.dst_port != self.cfg.port {
            return;
        }
        let Some(id) = self.lookup.by_peer(&(from, header.src_port)) else {
            return;
        };
        let reported = self
            .assocs
            .get_mut(&id)
            .is_some_and(|a| a.local_tag() == header.verification_tag && a.on_corrupted(data));
        if reported {
            self.touch(id);
        }
    }

    /// A packet from an address the lookup does not hold, carrying an
    /// association's own verification tag (8.5), belongs to that association
    /// when it comes from one of its destinations: an unconfirmed one (5.4:
    /// its HEARTBEAT ACK confirms it), or a known IP address whose UDP port
    /// moved (RFC 6951 5.4). An INIT or a COOKIE ECHO never takes this way:
    /// from an address that is not a confirmed destination, it starts a new
    /// association (see [`Lookup`]).
    fn by_tag_from_destination(
        &mut self,
        from: SocketAddr,
        header: &CommonHeader,
        first: Option<&Chunk<'_>>,
    ) -> Option<AssocId> {
        if header.verification_tag == 0
            || matches!(first, Some(Chunk::Init(_) | Chunk::CookieEcho(_)))
        {
            return None;
        }
        let id = self.lookup.by_tag(header.verification_tag)?;
        let a = self.assocs.get(&id)?;
        if a.peer_port() != header.src_port {
            return None;
        }
        if a.destination_confirmed(from).is_some() {
            return Some(id);
        }
        self.moved_peer(id, from)
    }

    /// RFC 6951 5.4: the peer's UDP source port may change (a NAT rebinding, a
    /// restarted encapsulation socket). A packet from the IP address of a
    /// destination of `id`, with its SCTP port and tag, belongs to it; the
    /// association learns the new UDP port, and the lookup with it once the
    /// destination is confirmed (5.4).
    fn moved_peer(&mut self, id: AssocId, from: SocketAddr) -> Option<AssocId> {
        if !self.learn_peer_ports {
            return None;
        }
        let a = self.assocs.get_mut(&id)?;
        // The destination with the packet's IP address, if any (5.1.2).
        let remote = a.remotes().find(|r| r.ip() == from.ip())?;
        let confirmed = a.destination_confirmed(remote) == Some(true);
        let port = a.peer_port();
        a.set_remote(remote, from);
        if confirmed {
            self.lookup.move_peer(id, (remote, port), (from, port));
        }
        Some(id)
    }

    /// RFC 9260 8.4: a packet no association claims.
    fn out_of_the_blue(
        &mut self,
        now: Time,
        from: SocketAddr,
        header: &CommonHeader,
        chunks: &[Chunk<'_>],
    ) {
        self.stats.out_of_the_blue += 1;
        // 8.4 rule 1, 11.2.4.1 (Flooding): never answer a packet from a
        // non-unicast address, nor let it start an association.
        if !is_unicast(from.ip()) {
            self.stats.non_unicast += 1;
            return;
        }
        // 8.4 rule 2: never answer a packet that carries an ABORT.
        if chunks.iter().any(|c| matches!(c, Chunk::Abort(_))) {
            return;
        }
        match chunks.first() {
            Some(Chunk::Init(init)) if header.verification_tag == 0 => {
                self.on_init(now, from, header, init);
            }
            Some(Chunk::CookieEcho(echo)) => {
                self.on_cookie_echo(now, from, header, &echo.cookie, chunks);
            }
            // 8.4 rule 5: SHUTDOWN ACK gets SHUTDOWN COMPLETE with the T bit.
            Some(Chunk::ShutdownAck(_)) => {
                let sc = Chunk::ShutdownComplete(ShutdownComplete {
                    reflected_tag: true,
                });
                self.respond(from, header, header.verification_tag, &sc);
            }
            // 8.4 rules 6, 7: discard.
            Some(Chunk::ShutdownComplete(_) | Chunk::CookieAck(_)) => {}
            Some(Chunk::Error(e))
                if e.causes
                    .iter()
                    .any(|c| matches!(c, ErrorCause::StaleCookie { .. })) => {}
            // 8.4 rule 8: ABORT with the T bit.
            _ => {
                let abort = Chunk::Abort(Abort {
                    reflected_tag: true,
                    causes: Vec::new(),
                });
                self.respond(from, header, header.verification_tag, &abort);
                self.stats.aborts_sent += 1;
            }
        }
    }

    /// Queues a one-chunk packet back to the sender of `header`.
    fn respond(&mut self, to: SocketAddr, header: &CommonHeader, tag: u32, chunk: &Chunk<'_>) {
        let reply = CommonHeader {
            src_port: header.dst_port,
            dst_port: header.src_port,
            verification_tag: tag,
            checksum: 0,
        };
        let mut buf = Vec::with_capacity(12 + chunk.encoded_len());
        let mut w = PacketWriter::new(&mut buf, &reply);
        if w.push(chunk).is_ok() && w.finish().is_ok() {
            self.responses.push_back((to, buf));
        }
    }

    /// 5.1 B: answer an INIT with an INIT ACK, keeping no state.
    fn on_init(
        &mut self,
        now: Time,
        from: SocketAddr,
        header: &CommonHeader,
        init: &crate::wire::chunk::Init<'_>,
    ) {
        self.stats.inits_received += 1;
        if !self.cfg.accept {
            // 8.4 rule 3: the ABORT carries the INIT's Initiate Tag, T clear.
            let abort = Chunk::Abort(Abort {
                reflected_tag: false,
                causes: Vec::new(),
            });
            self.respond(from, header, init.initiate_tag, &abort);
            self.stats.aborts_sent += 1;
            return;
        }
        match init::refusal(init) {
            Ok(()) => {}
            Err(None) => return,
            Err(Some(abort)) => {
                self.respond(from, header, init.initiate_tag, &abort);
                self.stats.aborts_sent += 1;
                return;
            }
        }
        let lookup = &self.lookup;
        let local_tag = new_tag(&mut self.rng, &|t| lookup.tag_in_use(t));
        let local_initial_tsn = self.rng.next_u32();
        let ack = build_init_ack(
            &self.sealer,
            now,
            &InitAckInputs {
                cfg: &self.cfg.accept_config,
                addresses: &self.cfg.addresses,
                init,
                from,
                local_port: header.dst_port,
                peer_port: header.src_port,
                local_tag,
                local_initial_tsn,
                local_tie_tag: 0,
                peer_tie_tag: 0,
            },
        );
        self.respond(from, header, init.initiate_tag, &Chunk::InitAck(ack));
        self.stats.init_acks_sent += 1;
    }

    /// 5.1.5: a COOKIE ECHO with no association: verify it and create one.
    fn on_cookie_echo(
        &mut self,
        now: Time,
        from: SocketAddr,
        header: &CommonHeader,
        cookie: &[u8],
        chunks: &[Chunk<'_>],
    ) {
        let c = match self.sealer.open(cookie, now) {
            Ok(c) => c,
            Err(CookieError::Stale {
                staleness,
                contents,
            }) => {
                // No error to an address the cookie was not issued to.
                if !contents.addressed_to(header, from) {
                    self.stats.cookies_rejected += 1;
                    return;
                }
                self.stats.stale_cookies += 1;
                let staleness_us = u32::try_from(staleness.as_micros()).unwrap_or(u32::MAX);
                let error = Chunk::Error(OperationError {
                    causes: vec![ErrorCause::StaleCookie { staleness_us }],
                });
                self.respond(from, header, contents.peer_tag, &error);
                return;
            }
            Err(CookieError::BadMac | CookieError::Malformed) => {
                self.stats.cookies_rejected += 1;
                return;
            }
        };
        // 5.1.5 step 3: tags and ports must match the cookie, and the packet
        // must come from the address the INIT ACK went to.
        if !c.addressed_to(header, from) {
            self.stats.cookies_rejected += 1;
            return;
        }
        // 5.2.4: a cookie that already established an association creates no
        // second one. (Its association normally takes it first: by address,
        // or by tag when the peer's UDP port moved.)
        if self.lookup.tag_in_use(c.local_tag) {
            self.stats.cookies_rejected += 1;
            return;
        }
        if self.assocs.len() >= self.cfg.max_associations {
            let abort = Chunk::Abort(Abort {
                reflected_tag: false,
                causes: vec![ErrorCause::OutOfResource],
            });
            self.respond(from, header, c.peer_tag, &abort);
            self.stats.aborts_sent += 1;
            return;
        }
        self.stats.cookies_accepted += 1;
        let id = self.allocate_id();
        let mut assoc = Association::from_cookie(id, self.cfg.accept_config.clone(), now, &c);
        // DATA may ride with the COOKIE ECHO (5.1 D), under the new tags (8.5).
        if let Some(rest) = chunks.get(1..) {
            let mut ctx = Ctx {
                sealer: &self.sealer,
                rng: &mut self.rng,
                tag_in_use: &|t| self.lookup.tag_in_use(t),
                addresses: &self.cfg.addresses,
            };
            assoc.handle_chunks(now, &mut ctx, header, rest, from);
        }
        self.insert(assoc, (from, header.src_port));
        self.collect(id);
    }

    /// Fires every timer due at `now`.
    pub fn handle_timeout(&mut self, now: Time) {
        let mut due = Vec::new();
        while let Some(Reverse((t, id))) = self.timers.peek().copied() {
            if t > now {
                break;
            }
            self.timers.pop();
            if self.scheduled.get(&id) == Some(&t) {
                self.scheduled.remove(&id);
                due.push(id);
            }
        }
        for id in due {
            if let Some(a) = self.assocs.get_mut(&id) {
                let tag = a.local_tag();
                let mut ctx = Ctx {
                    sealer: &self.sealer,
                    rng: &mut self.rng,
                    tag_in_use: &|t| self.lookup.tag_in_use(t),
                    addresses: &self.cfg.addresses,
                };
                a.handle_timeout(now, &mut ctx);
                let new_tag = a.local_tag();
                self.lookup.retag(id, tag, new_tag);
            }
            self.touch(id);
            self.collect(id);
        }
    }

    /// The earliest time `handle_timeout` has work to do: never late, and
    /// never a deadline that has moved (stale entries leave the heap at once).
    pub fn poll_timeout(&self) -> Option<Time> {
        let dirty = self
            .dirty
            .iter()
            .filter_map(|id| self.assocs.get(id))
            .filter_map(|a| a.poll_timeout());
        self.timers
            .peek()
            .map(|Reverse((t, _))| *t)
            .into_iter()
            .chain(dirty)
            .min()
    }

    /// Writes the next packet to send into `buf` (appending after its current
    /// contents) and says where it goes.
    pub fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<Transmit> {
        if let Some((destination, bytes)) = self.responses.pop_front() {
            buf.extend_from_slice(&bytes);
            return Some(Transmit {
                destination,
                size: bytes.len(),
            });
        }
        while let Some(&id) = self.dirty.front() {
            let transmit = self
                .assocs
                .get_mut(&id)
                .and_then(|a| a.poll_transmit(now, buf));
            if let Some(t) = transmit {
                self.reschedule(id);
                return Some(t);
            }
            self.dirty.pop_front();
            self.dirty_set.remove(&id);
            self.reschedule(id);
            self.collect(id);
        }
        None
    }

    /// The next event of any association.
    pub fn poll_event(&mut self) -> Option<(AssocId, Event)> {
        if self.events.is_empty() {
            let dirty: Vec<AssocId> = self.dirty.iter().copied().collect();
            for id in dirty {
                self.collect(id);
            }
        }
        self.events.pop_front()
    }
}

/// Whether `ip` can be a peer's own address: not multicast, not the limited
/// broadcast, not unspecified. (A subnet's broadcast address cannot be told
/// from a host's without the subnet mask, which the sans-IO core never sees.)
fn is_unicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => !(v4.is_multicast() || v4.is_broadcast() || v4.is_unspecified()),
        IpAddr::V6(v6) => !(v6.is_multicast() || v6.is_unspecified()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multicast_broadcast_and_unspecified_sources_are_not_unicast() {
        for ip in [
            "224.0.0.1",
            "239.1.2.3",
            "255.255.255.255",
            "0.0.0.0",
            "ff02::1",
            "::",
        ] {
            assert!(!is_unicast(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "10.0.0.1",
            "127.0.0.1",
            "192.0.2.9",
            "::1",
            "2001:db8::1",
            "fe80::1",
        ] {
            assert!(is_unicast(ip.parse().unwrap()), "{ip}");
        }
    }

    /// A peer that moves an association's deadline with every packet leaves a
    /// stale heap entry each time: the heap stays within twice the live
    /// entries (plus a constant), and its top is always a live deadline.
    #[test]
    fn moved_deadlines_never_grow_the_timer_heap_without_bound() {
        let mut ep = Endpoint::new(EndpointConfig::default(), [4; 32]);
        let id = ep
            .connect(
                Time::ZERO,
                "192.0.2.1:9899".parse().unwrap(),
                Config::rfc9260(),
            )
            .unwrap();
        for t in 1..=100_000u64 {
            ep.scheduled.insert(id, Time(t));
            ep.timers.push(Reverse((Time(t), id)));
            ep.compact_timers();
            ep.drop_stale_top();
            assert!(ep.timers.len() <= 2 * ep.scheduled.len() + 65, "at {t}");
        }
        // Back to the association's real deadline: exact, not a stale one.
        ep.reschedule(id);
        let real = ep.assocs.get(&id).and_then(|a| a.poll_timeout());
        assert_eq!(ep.timers.peek().map(|Reverse((t, _))| *t), real);
    }
}
