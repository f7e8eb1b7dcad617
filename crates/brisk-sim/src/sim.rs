//! The simulator core: nodes, the event queue, and the host step.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::net::SocketAddr;

use brisk_proto::{Endpoint, EndpointConfig, Time};

use brisk_net::rng::{Stream, seed_for, stream};
use brisk_net::{HostId, Link, LinkParams, LinkStats, Outcome, PacketRecord, QueueLimit};

use crate::capture::{Capture, LinkCapture};
use crate::host::{Action, App, Host, Hosted, Input, Io};
use crate::ids::{LinkId, NodeId};
use crate::queue::EventQueue;
use crate::routing::{Dest, Edge, routes};
use crate::transport::{Congestion, Transport, Wire};

/// Counters of a whole run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimStats {
    /// Events taken off the queue.
    pub events: u64,
    /// Packets dropped because no route led to their destination address
    /// (or it belongs to no host).
    pub unroutable: u64,
    /// Endpoint timers that fired and left their deadline where it was (the
    /// protocol promised work and had none): each waits a microsecond instead
    /// of spinning. A healthy run keeps this at 0.
    pub stalled_timers: u64,
    /// Per link direction, indexed by [`LinkId::index`].
    pub links: Vec<LinkStats>,
}

impl SimStats {
    pub fn link(&self, l: LinkId) -> &LinkStats {
        &self.links[l.0]
    }
}

/// A packet in the network.
#[derive(Debug, Clone)]
struct Packet {
    src: HostId,
    dst: HostId,
    /// Its source address (the sender's address on the interface it left
    /// by) and destination address, and the destination's number in
    /// [`Sim::addresses`]' order, by which it is routed.
    from: SocketAddr,
    to: SocketAddr,
    dst_addr: usize,
    /// The IPv4 Identification a pcapng capture gives it on every link it
    /// crosses (counts packets sent, from 1, wrapping).
    ip_id: u16,
    /// How the packet travels: a bare SCTP packet, or a whole IPv4 packet.
    wire: Wire,
    /// When its host sent it.
    sent: Time,
    bytes: Vec<u8>,
}

/// A packet that reached its host, as [`Sim::log_arrivals`] records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    pub from: HostId,
    /// When its host sent it, and when it arrived.
    pub sent: Time,
    pub arrived: Time,
    /// Its bytes, as the links count them (without an IP header).
    pub size: usize,
    /// It carried application data (an SCTP DATA or I-DATA chunk, a TCP
    /// segment with payload).
    pub data: bool,
    /// The link direction it arrived over (its last hop).
    pub link: LinkId,
    /// The address it was sent to (one of the host's, see
    /// [`Sim::add_address`]), and the one it came from.
    pub to: SocketAddr,
    pub source: SocketAddr,
}

/// One address of a host.
#[derive(Debug, Clone, Copy)]
struct Address {
    addr: SocketAddr,
    host: HostId,
    /// The interface it is bound to ([`Sim::bind_address`]): the link
    /// direction into its host and the one out of it. Unbound, it is
    /// reached over any link into the host.
    inbound: Option<LinkId>,
    outbound: Option<LinkId>,
}

#[derive(Debug)]
enum What {
    AppStart(HostId),
    AppTimer(HostId, u64),
    EndpointTimer(HostId),
    /// The packet reaches the far end of a link direction.
    Arrive(LinkId, Packet),
}

enum Node {
    Host(HostId),
    Router,
}

struct LinkSlot {
    edge: Edge,
    /// The other direction of the same link.
    reverse: LinkId,
    /// As created: for the capture's interface descriptions.
    params: LinkParams,
    link: Link,
    capture: Option<Capture>,
}

/// A deterministic discrete-event network of hosts, routers and links.
pub struct Sim {
    seed: u64,
    now: Time,
    queue: EventQueue<What>,
    nodes: Vec<Node>,
    hosts: Vec<Box<dyn Hosted>>,
    /// Each host's wire, by host index (read for every packet it sends).
    wires: Vec<Wire>,
    /// Each host's first address, by host index.
    addrs: Vec<SocketAddr>,
    /// Every address of every host, in the order added; by address, its
    /// number; by host, the numbers of its addresses (its first first).
    addresses: Vec<Address>,
    by_addr: BTreeMap<SocketAddr, usize>,
    host_addresses: Vec<Vec<usize>>,
    links: Vec<LinkSlot>,
    /// The pcapng capture of every link direction, if any.
    pcapng: Option<LinkCapture>,
    /// Packets sent by hosts (injected ones included).
    packets_sent: u64,
    /// `routes[node][address]`; rebuilt before running when the topology
    /// or an address changed.
    routes: Vec<Vec<Option<LinkId>>>,
    routes_stale: bool,
    /// Hosts whose transport was used from outside: they flush before the run goes on.
    touched: Vec<HostId>,
    /// Whether each host is in `touched`.
    is_touched: Vec<bool>,
    /// Reused for every host input.
    actions: Vec<Action>,
    /// Per host, the packets it received, when asked for.
    arrivals: Vec<Option<Vec<Arrival>>>,
    events: u64,
    unroutable: u64,
    stalled_timers: u64,
}

impl std::fmt::Debug for Sim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sim")
            .field("seed", &self.seed)
            .field("now", &self.now)
            .field("nodes", &self.nodes.len())
            .field("hosts", &self.addrs)
            .field("links", &self.links.len())
            .field("pending", &self.queue.len())
            .finish_non_exhaustive()
    }
}

impl Sim {
    /// An empty network at time zero. Every random draw derives from `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            seed,
            now: Time::ZERO,
            queue: EventQueue::default(),
            nodes: Vec::new(),
            hosts: Vec::new(),
            wires: Vec::new(),
            addrs: Vec::new(),
            addresses: Vec::new(),
            by_addr: BTreeMap::new(),
            host_addresses: Vec::new(),
            links: Vec::new(),
            pcapng: None,
            packets_sent: 0,
            routes: Vec::new(),
            routes_stale: true,
            touched: Vec::new(),
            is_touched: Vec::new(),
            actions: Vec::new(),
            arrivals: Vec::new(),
            events: 0,
            unroutable: 0,
            stalled_timers: 0,
        }
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// A host running one SCTP endpoint (seeded from the simulation seed and
    /// the host's number) and one application, whose `start` runs at the
    /// current time once the simulation runs.
    ///
    /// # Panics
    /// If another host already has `addr`.
    pub fn add_host(&mut self, addr: SocketAddr, cfg: EndpointConfig, app: Box<dyn App>) -> HostId {
        self.add_host_with(addr, |seed| Endpoint::new(cfg, seed), app)
    }

    /// A host running the transport `make` builds from its seed (derived
    /// from the simulation seed and the host's number) and one application,
    /// whose `start` runs at the current time once the simulation runs.
    ///
    /// # Panics
    /// If another host already has `addr`.
    pub fn add_host_with<T: Transport>(
        &mut self,
        addr: SocketAddr,
        make: impl FnOnce([u8; 32]) -> T,
        app: Box<dyn App<T>>,
    ) -> HostId {
        let id = HostId::new(self.hosts.len());
        self.claim(addr, id);
        let node = self.new_node(Node::Host(id));
        let n = id.index() as u64;
        let transport = make(seed_for(self.seed, Stream::Endpoint, n, 0));
        let rng = stream(self.seed, Stream::App, n, 0);
        self.hosts
            .push(Box::new(Host::new(id, node, transport, app, rng)));
        self.wires.push(T::WIRE);
        self.is_touched.push(false);
        self.arrivals.push(None);
        self.addrs.push(addr);
        self.schedule(self.now, What::AppStart(id));
        id
    }

    /// A multi-homed SCTP host: [`Sim::add_host`] at the first of `addrs`,
    /// then [`Sim::add_address`] for each other one. With two or more, the
    /// endpoint's [`EndpointConfig::addresses`] lists their IP addresses
    /// (see [`crate::multihomed`]), so INIT and INIT ACK carry them. Bind
    /// each address to its interface with [`Sim::bind_address`] once the
    /// links exist.
    ///
    /// # Panics
    /// If `addrs` is empty or another host already has one of them.
    pub fn add_multihomed_host(
        &mut self,
        addrs: &[SocketAddr],
        cfg: EndpointConfig,
        app: Box<dyn App>,
    ) -> HostId {
        let cfg = crate::transport::multihomed(cfg, addrs);
        self.add_host_with_addresses(addrs, |seed| Endpoint::new(cfg, seed), app)
    }

    /// [`Sim::add_host_with`] at the first of `addrs`, then
    /// [`Sim::add_address`] for each other one.
    ///
    /// # Panics
    /// If `addrs` is empty or another host already has one of them.
    pub fn add_host_with_addresses<T: Transport>(
        &mut self,
        addrs: &[SocketAddr],
        make: impl FnOnce([u8; 32]) -> T,
        app: Box<dyn App<T>>,
    ) -> HostId {
        let (&first, rest) = addrs.split_first().expect("a host has an address");
        let h = self.add_host_with(first, make, app);
        for &a in rest {
            self.add_address(h, a);
        }
        h
    }

    /// Gives host `h` one more address. Packets for it reach `h` by the
    /// shortest path, over any link into `h`, until
    /// [`Sim::bind_address`] binds it to an interface.
    ///
    /// # Panics
    /// If `h` is not a host or another host already has `addr`.
    pub fn add_address(&mut self, h: HostId, addr: SocketAddr) {
        assert!(h.index() < self.hosts.len(), "no such host");
        self.claim(addr, h);
    }

    /// Records `addr` as host `h`'s.
    fn claim(&mut self, addr: SocketAddr, h: HostId) {
        let n = self.addresses.len();
        if let Some(other) = self.by_addr.insert(addr, n) {
            let owner = self.addresses[other].host;
            panic!("address {addr} already belongs to host {}", owner.index());
        }
        self.addresses.push(Address {
            addr,
            host: h,
            inbound: None,
            outbound: None,
        });
        if self.host_addresses.len() <= h.index() {
            self.host_addresses.resize_with(h.index() + 1, Vec::new);
        }
        self.host_addresses[h.index()].push(n);
        self.routes_stale = true;
    }

    /// Binds `addr` to the interface of its host that link direction `l`
    /// (either direction of a link with the host at one end) belongs to.
    /// Packets for `addr` then take the shortest path whose last hop is that
    /// link's direction into the host; and a packet its host sends leaves
    /// from `addr` when its first hop is that link's direction out of the
    /// host. An address of a host that has one is thus chosen by routing,
    /// as a multi-homed stack's source address is.
    ///
    /// # Panics
    /// If `addr` belongs to no host, or `l` does not start or end at its host.
    pub fn bind_address(&mut self, addr: SocketAddr, l: LinkId) {
        let &n = self
            .by_addr
            .get(&addr)
            .unwrap_or_else(|| panic!("address {addr} belongs to no host"));
        let node = self.node(self.addresses[n].host).0;
        let e = self.links[l.0].edge;
        let (inbound, outbound) = if e.to == node {
            (l, self.links[l.0].reverse)
        } else if e.from == node {
            (self.links[l.0].reverse, l)
        } else {
            panic!("link {} does not reach the host of {addr}", l.0);
        };
        self.addresses[n].inbound = Some(inbound);
        self.addresses[n].outbound = Some(outbound);
        self.routes_stale = true;
    }

    /// Every address of host `h`, its first first.
    pub fn addresses(&self, h: HostId) -> Vec<SocketAddr> {
        self.host_addresses
            .get(h.index())
            .map(|v| v.iter().map(|&n| self.addresses[n].addr).collect())
            .unwrap_or_default()
    }

    /// The host that has address `addr`, if any.
    pub fn host_of(&self, addr: SocketAddr) -> Option<HostId> {
        self.by_addr.get(&addr).map(|&n| self.addresses[n].host)
    }

    /// The address of `h` bound to the interface that link direction `l`
    /// belongs to, if any.
    pub fn address_on(&self, h: HostId, l: LinkId) -> Option<SocketAddr> {
        self.host_addresses.get(h.index())?.iter().find_map(|&n| {
            let a = &self.addresses[n];
            (a.inbound == Some(l) || a.outbound == Some(l)).then_some(a.addr)
        })
    }

    /// A router: it forwards packets by destination address.
    pub fn add_router(&mut self) -> NodeId {
        self.new_node(Node::Router)
    }

    fn new_node(&mut self, n: Node) -> NodeId {
        self.nodes.push(n);
        self.routes_stale = true;
        NodeId(self.nodes.len() - 1)
    }

    /// The node of host `h`.
    pub fn node(&self, h: HostId) -> NodeId {
        self.hosts[h.index()].node()
    }

    /// The (first) address of host `h`.
    pub fn addr(&self, h: HostId) -> SocketAddr {
        self.addrs[h.index()]
    }

    /// The hosts, in the order they were added.
    pub fn hosts(&self) -> impl Iterator<Item = HostId> + '_ {
        (0..self.hosts.len()).map(HostId::new)
    }

    /// A duplex link: `ab` for the direction a->b, `ba` for b->a.
    ///
    /// # Panics
    /// If `a == b` or either node does not exist.
    pub fn link(
        &mut self,
        a: NodeId,
        b: NodeId,
        ab: LinkParams,
        ba: LinkParams,
    ) -> (LinkId, LinkId) {
        assert!(a != b, "a link joins two different nodes");
        assert!(
            a.index() < self.nodes.len() && b.index() < self.nodes.len(),
            "no such node"
        );
        let forward = self.add_direction(a, b, &ab);
        let back = self.add_direction(b, a, &ba);
        self.links[forward.0].reverse = back;
        self.links[back.0].reverse = forward;
        (forward, back)
    }

    fn add_direction(&mut self, from: NodeId, to: NodeId, params: &LinkParams) -> LinkId {
        let id = LinkId(self.links.len());
        self.links.push(LinkSlot {
            edge: Edge {
                from: from.index(),
                to: to.index(),
            },
            reverse: id,
            params: params.clone(),
            link: Link::new(params, self.seed, id.index() as u64),
            capture: None,
        });
        self.routes_stale = true;
        if self.pcapng.is_some() {
            let (name, description) = self.interface_words(id, params);
            if let Some(c) = &mut self.pcapng {
                c.add_link(&name, &description);
            }
        }
        id
    }

    /// An end of link direction `l` in words: a host by its IP address (the
    /// one bound to the link's interface, else its first), a router by its
    /// number.
    fn node_words(&self, node: usize, l: LinkId) -> String {
        match self.nodes.get(node) {
            Some(&Node::Host(h)) => self
                .address_on(h, l)
                .unwrap_or(self.addrs[h.index()])
                .ip()
                .to_string(),
            _ => format!("router {node}"),
        }
    }

    /// How captures name link direction `l`: `link 0 (10.0.1.1 -> 10.0.2.1)`.
    fn link_label(&self, l: LinkId) -> String {
        let e = self.links[l.0].edge;
        format!(
            "link {} ({} -> {})",
            l.0,
            self.node_words(e.from, l),
            self.node_words(e.to, l)
        )
    }

    /// The pcapng interface name and description of link direction `l`.
    fn interface_words(&self, l: LinkId, params: &LinkParams) -> (String, String) {
        let e = self.links[l.0].edge;
        let name = format!(
            "link {}: {} -> {}",
            l.0,
            self.node_words(e.from, l),
            self.node_words(e.to, l)
        );
        let bandwidth = match params.bandwidth_bps {
            0 => "infinite bandwidth".to_owned(),
            bps if bps % 1000 == 0 => format!("{} kbit/s", bps / 1000),
            bps => format!("{bps} bit/s"),
        };
        let queue = match params.queue {
            QueueLimit::Unlimited => "unlimited queue".to_owned(),
            QueueLimit::Packets(n) => format!("{n}-packet queue"),
            QueueLimit::Bytes(n) => format!("{n}-byte queue"),
        };
        let description = format!(
            "brisk-sim link direction {} from node {} to node {}: {bandwidth}, {} delay, {queue}, {} impairments",
            l.0,
            e.from,
            e.to,
            brisk_proto::config::format_duration(params.delay),
            params.impairments.len()
        );
        (name, description)
    }

    /// The nodes a link direction leads from and to.
    pub fn link_ends(&self, l: LinkId) -> (NodeId, NodeId) {
        let e = self.links[l.0].edge;
        (NodeId(e.from), NodeId(e.to))
    }

    /// Writes every packet entering link direction `l` to `out` as a pcap
    /// file: UDP/IPv4 on port 9899 between the hosts' IP addresses, stamped
    /// with the time it entered. Records are written once the impairments
    /// have acted: dropped packets are included, a corrupted packet shows its
    /// corrupted bytes, a duplicated one appears once. IPv4 hosts only; errors
    /// stop the capture and are reported by [`Sim::finish_captures`].
    pub fn capture(&mut self, l: LinkId, out: Box<dyn Write>) {
        self.links[l.0].capture = Some(Capture::create(out));
    }

    /// Writes every packet entering any link direction (those that exist now
    /// and those made later) to `out` as one pcapng file: one interface per
    /// link direction, numbered as [`LinkId::index`] and named `link 0:
    /// 10.0.1.1 -> 10.0.2.1` (a router shows as `router N`, its node number);
    /// each packet as UDP/IPv4 on port 9899 between the hosts' IP addresses,
    /// stamped with the time it entered, its IPv4 Identification the same on
    /// every link it crosses. A packet is recorded as it enters, once the
    /// impairments have acted, and a comment tells its fate when the link did
    /// anything to it: `dropped by link 0 (10.0.1.1 -> 10.0.2.1):
    /// drop-new-chunk pattern (...)`, `... queue overflow (...)`, `corrupted
    /// by ...` (its corrupted bytes are what is written), `duplicated by ...`,
    /// `held back by ...`. Packets the link passed untouched have no comment.
    /// Recording changes nothing in the run. IPv4 hosts only; errors stop the
    /// capture and are reported by [`Sim::finish_captures`].
    pub fn capture_pcapng(&mut self, out: Box<dyn Write>) {
        let mut capture = LinkCapture::create(out);
        for l in self.links() {
            let (name, description) = self.interface_words(l, &self.links[l.0].params);
            capture.add_link(&name, &description);
        }
        self.pcapng = Some(capture);
    }

    /// Flushes every capture and returns the first error any of them met.
    pub fn finish_captures(&mut self) -> io::Result<()> {
        let mut first = match &mut self.pcapng {
            Some(c) => c.finish(),
            None => Ok(()),
        };
        for slot in &mut self.links {
            if let Some(c) = &mut slot.capture
                && let Err(e) = c.finish()
                && first.is_ok()
            {
                first = Err(e);
            }
        }
        first
    }

    /// Records every packet entering link direction `l` from now on; read
    /// the records with [`Sim::packet_log`].
    pub fn trace(&mut self, l: LinkId) {
        self.links[l.0].link.trace.get_or_insert_with(Vec::new);
    }

    /// Records every packet entering any link direction that exists now
    /// (see [`Sim::trace`]).
    pub fn trace_all(&mut self) {
        for i in 0..self.links.len() {
            self.trace(LinkId(i));
        }
    }

    /// Records every packet that reaches host `h` from now on, with the time
    /// its sender sent it: one-way delays, per packet. Read the records with
    /// [`Sim::arrivals`].
    pub fn log_arrivals(&mut self, h: HostId) {
        self.arrivals[h.index()].get_or_insert_with(Vec::new);
    }

    /// The packets that reached `h` since [`Sim::log_arrivals`] (empty if
    /// not logged), in the order they arrived.
    pub fn arrivals(&self, h: HostId) -> &[Arrival] {
        self.arrivals[h.index()].as_deref().unwrap_or(&[])
    }

    /// Records host `h`'s congestion state (its transport's first
    /// connection: cwnd, ssthresh, bytes in flight) after every input that
    /// changed it, from now on; read with [`Sim::congestion_log`].
    pub fn trace_congestion(&mut self, h: HostId) {
        self.hosts[h.index()].trace_congestion();
    }

    /// Host `h`'s congestion states since [`Sim::trace_congestion`], each
    /// with the time it began.
    pub fn congestion_log(&self, h: HostId) -> &[(Time, Congestion)] {
        self.hosts[h.index()].congestion_log()
    }

    /// Every link direction, in the order they were created.
    pub fn links(&self) -> impl Iterator<Item = LinkId> + '_ {
        (0..self.links.len()).map(LinkId)
    }

    /// The packets recorded on `l` since [`Sim::trace`] (empty if untraced).
    pub fn packet_log(&self, l: LinkId) -> &[PacketRecord] {
        self.links[l.0].link.trace.as_deref().unwrap_or(&[])
    }

    /// Sends `bytes` from host `from` to `to` now, as if its endpoint had
    /// sent them: for crafted or garbage packets.
    pub fn inject(&mut self, from: HostId, to: SocketAddr, bytes: Vec<u8>) {
        self.refresh_routes();
        let wire = self.wires[from.index()];
        self.send(from, wire, to, bytes);
    }

    pub fn now(&self) -> Time {
        self.now
    }

    /// Events waiting in the queue (stale timer events included).
    pub fn pending_events(&self) -> usize {
        self.queue.len()
    }

    /// Runs every event at or before `t`; the clock then reads `t`.
    pub fn run_until(&mut self, t: Time) {
        self.advance(t);
        self.now = self.now.max(t);
    }

    /// Runs until no event is left or the next one lies beyond `limit`;
    /// returns the time it stopped: the last event's time if the queue ran
    /// dry, else `limit`.
    pub fn run(&mut self, limit: Time) -> Time {
        self.advance(limit);
        if !self.queue.is_empty() {
            self.now = self.now.max(limit);
        }
        self.now
    }

    /// The application of host `h`, if it is an `A`.
    pub fn app<A: 'static>(&self, h: HostId) -> Option<&A> {
        self.hosts.get(h.index())?.app_any().downcast_ref()
    }

    pub fn app_mut<A: 'static>(&mut self, h: HostId) -> Option<&mut A> {
        self.hosts.get_mut(h.index())?.app_any_mut().downcast_mut()
    }

    /// Host `h`'s transport, if it is a `T`. What is done through it (a
    /// connect, a send) goes out when the simulation next runs, at the then
    /// current time.
    pub fn transport<T: Transport>(&mut self, h: HostId) -> Option<&mut T> {
        let touched = self.is_touched.get_mut(h.index())?;
        if !*touched {
            *touched = true;
            self.touched.push(h);
        }
        self.hosts[h.index()].transport_any_mut().downcast_mut()
    }

    /// Host `h`'s transport, if it is a `T`, to read.
    pub fn transport_ref<T: Transport>(&self, h: HostId) -> Option<&T> {
        self.hosts.get(h.index())?.transport_any().downcast_ref()
    }

    /// Host `h`'s SCTP endpoint (see [`Sim::transport`]).
    ///
    /// # Panics
    /// If host `h` does not run SCTP.
    pub fn endpoint(&mut self, h: HostId) -> &mut Endpoint {
        self.transport(h)
            .unwrap_or_else(|| panic!("host {} does not run SCTP", h.index()))
    }

    /// Host `h`'s SCTP endpoint, to read (its stats, its associations' count).
    ///
    /// # Panics
    /// If host `h` does not run SCTP.
    pub fn endpoint_ref(&self, h: HostId) -> &Endpoint {
        self.transport_ref(h)
            .unwrap_or_else(|| panic!("host {} does not run SCTP", h.index()))
    }

    pub fn stats(&self) -> SimStats {
        SimStats {
            events: self.events,
            unroutable: self.unroutable,
            stalled_timers: self.stalled_timers,
            links: self.links.iter().map(|s| s.link.stats.clone()).collect(),
        }
    }

    /// The counters of one link direction.
    pub fn link_stats(&self, l: LinkId) -> &LinkStats {
        &self.links[l.0].link.stats
    }

    fn schedule(&mut self, at: Time, what: What) {
        self.queue.push(at, what);
    }

    fn refresh_routes(&mut self) {
        if !self.routes_stale {
            return;
        }
        let edges: Vec<Edge> = self.links.iter().map(|s| s.edge).collect();
        let is_router: Vec<bool> = self
            .nodes
            .iter()
            .map(|n| matches!(n, Node::Router))
            .collect();
        let dests: Vec<Dest> = self
            .addresses
            .iter()
            .map(|a| Dest {
                node: self.hosts[a.host.index()].node().0,
                last_hop: a.inbound.map(|l| l.0),
            })
            .collect();
        self.routes = routes(&edges, &is_router, &dests);
        self.routes_stale = false;
    }

    fn advance(&mut self, limit: Time) {
        self.refresh_routes();
        for h in std::mem::take(&mut self.touched) {
            self.is_touched[h.index()] = false;
            self.input(h, Input::Touched);
        }
        while let Some((at, what)) = self.queue.pop_due(limit) {
            self.now = at;
            self.events += 1;
            self.dispatch(what);
        }
    }

    fn dispatch(&mut self, what: What) {
        match what {
            What::AppStart(h) => self.input(h, Input::Start),
            What::AppTimer(h, token) => self.input(h, Input::AppTimer(token)),
            What::EndpointTimer(h) => self.input(h, Input::Timeout),
            What::Arrive(l, packet) => self.arrive(l, packet),
        }
    }

    /// A packet reaches the far end of `l`: its host takes it, a router forwards it.
    fn arrive(&mut self, l: LinkId, packet: Packet) {
        let slot = &mut self.links[l.0];
        slot.link.stats.delivered += 1;
        let to = slot.edge.to;
        match self.nodes[to] {
            Node::Host(h) if h == packet.dst => {
                if let Some(log) = &mut self.arrivals[h.index()] {
                    log.push(Arrival {
                        from: packet.src,
                        sent: packet.sent,
                        arrived: self.now,
                        size: wire_size(packet.wire, &packet.bytes),
                        data: carries_data(packet.wire, &packet.bytes),
                        link: l,
                        to: packet.to,
                        source: packet.from,
                    });
                }
                let from = packet.from;
                self.input(
                    h,
                    Input::Datagram {
                        from,
                        data: &packet.bytes,
                    },
                );
            }
            Node::Host(_) => self.unroutable += 1,
            Node::Router => self.forward(to, packet),
        }
    }

    /// Gives host `h` one input, then carries out what it asked, in order:
    /// its datagrams leave, its application's timers are queued, and its
    /// endpoint timer is re-armed.
    fn input(&mut self, h: HostId, input: Input<'_>) {
        let mut actions = std::mem::take(&mut self.actions);
        let mut io = Io {
            now: self.now,
            addrs: &self.addrs,
            actions: &mut actions,
            stalled_timers: &mut self.stalled_timers,
        };
        let rearm = self.hosts[h.index()].input(&mut io, input);
        let wire = self.wires[h.index()];
        for action in actions.drain(..) {
            match action {
                Action::Send { to, bytes } => self.send(h, wire, to, bytes),
                Action::AppTimer(at, token) => self.schedule(at, What::AppTimer(h, token)),
            }
        }
        self.actions = actions;
        if let Some(at) = rearm {
            self.schedule(at, What::EndpointTimer(h));
        }
    }

    fn send(&mut self, from: HostId, wire: Wire, to: SocketAddr, mut bytes: Vec<u8>) {
        let Some(&dst_addr) = self.by_addr.get(&to) else {
            self.unroutable += 1;
            return;
        };
        let dst = self.addresses[dst_addr].host;
        let node = self.hosts[from.index()].node().0;
        let source = self.source_address(from, node, dst_addr);
        self.packets_sent += 1;
        let ip_id = self.packets_sent as u16;
        if wire == Wire::Ipv4 {
            // The simulator numbers every packet, whatever carries it.
            brisk_net::pcap::set_ipv4_id(&mut bytes, ip_id);
        }
        self.forward(
            node,
            Packet {
                src: from,
                dst,
                from: source,
                to,
                dst_addr,
                ip_id,
                wire,
                sent: self.now,
                bytes,
            },
        );
    }

    /// The next hop from `node` toward address number `dst_addr`.
    fn next_hop(&self, node: usize, dst_addr: usize) -> Option<LinkId> {
        self.routes.get(node)?.get(dst_addr).copied().flatten()
    }

    /// The source address of a packet host `h` (at `node`) sends to address
    /// number `dst_addr`: its address on the interface of the first hop, or
    /// its first address.
    fn source_address(&self, h: HostId, node: usize, dst_addr: usize) -> SocketAddr {
        self.next_hop(node, dst_addr)
            .and_then(|l| {
                self.host_addresses[h.index()].iter().find_map(|&n| {
                    let a = &self.addresses[n];
                    (a.outbound == Some(l)).then_some(a.addr)
                })
            })
            .unwrap_or(self.addrs[h.index()])
    }

    /// Puts `packet` on the link from `node` toward its destination.
    fn forward(&mut self, node: usize, mut packet: Packet) {
        let Some(l) = self.next_hop(node, packet.dst_addr) else {
            self.unroutable += 1;
            return;
        };
        let slot = &mut self.links[l.0];
        let ends = (packet.src, packet.dst);
        let entered = match packet.wire {
            Wire::Sctp => slot.link.transmit_from(self.now, &mut packet.bytes, ends),
            Wire::Ipv4 => slot
                .link
                .transmit_ip_from(self.now, &mut packet.bytes, ends),
        };
        if let Some(c) = &mut slot.capture {
            c.write(self.now, packet.wire, packet.from, packet.to, &packet.bytes);
        }
        if self.pcapng.is_some() {
            let label = self.link_label(l);
            let comment = self.links[l.0].link.explain(self.now, &entered, &label);
            let (src, dst) = (packet.from, packet.to);
            if let Some(c) = &mut self.pcapng {
                c.write(
                    l.0,
                    self.now,
                    (packet.wire, packet.ip_id),
                    src,
                    dst,
                    &packet.bytes,
                    comment.as_deref(),
                );
            }
        }
        if let Outcome::Sent { arrival, duplicate } = entered.outcome {
            if duplicate {
                self.schedule(arrival, What::Arrive(l, packet.clone()));
            }
            self.schedule(arrival, What::Arrive(l, packet));
        }
    }
}

/// A packet's bytes as links count them: without an IP header.
fn wire_size(wire: Wire, bytes: &[u8]) -> usize {
    match wire {
        Wire::Sctp => bytes.len(),
        Wire::Ipv4 => bytes.len().saturating_sub(brisk_net::pcap::IPV4_HEADER_LEN),
    }
}

/// Whether a packet carries application data.
fn carries_data(wire: Wire, bytes: &[u8]) -> bool {
    use brisk_net::Classify;
    match wire {
        Wire::Sctp => brisk_net::carries_data(bytes),
        Wire::Ipv4 => brisk_net::IpPacket::default().classify(bytes).data,
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::time::Duration;

    use brisk_proto::{AssocId, Config, Event, OutgoingMessage};

    use super::*;
    use crate::host::AppCtx;
    use crate::topology::point_to_point;
    use brisk_net::Impairment;
    use brisk_net::pcapng::{Block, read_blocks};

    /// Connects, then sends five messages, one per callback.
    #[derive(Default)]
    struct Client {
        assoc: Option<AssocId>,
    }

    impl App for Client {
        fn start(&mut self, ctx: &mut AppCtx<'_>) {
            let now = ctx.now();
            let server = "10.0.0.2:9899".parse().unwrap();
            self.assoc = ctx.endpoint().connect(now, server, Config::rfc9260()).ok();
        }
        fn on_event(&mut self, ctx: &mut AppCtx<'_>, _: AssocId, e: &Event) {
            if *e == Event::Connected {
                for i in 0..5 {
                    ctx.set_timer(ctx.now(), i);
                }
            }
        }
        fn on_timer(&mut self, ctx: &mut AppCtx<'_>, _: u64) {
            let now = ctx.now();
            if let Some(a) = self.assoc.and_then(|id| ctx.endpoint().association(id)) {
                a.send(now, OutgoingMessage::new(0, vec![7u8; 100]))
                    .unwrap();
            }
        }
    }

    /// Reads everything that arrives.
    #[derive(Default)]
    struct Server {
        read: usize,
    }

    impl App for Server {
        fn start(&mut self, _: &mut AppCtx<'_>) {}
        fn on_event(&mut self, ctx: &mut AppCtx<'_>, assoc: AssocId, e: &Event) {
            if *e == Event::MessageReady
                && let Some(a) = ctx.endpoint().association(assoc)
            {
                while a.recv().is_some() {
                    self.read += 1;
                }
            }
        }
        fn on_timer(&mut self, _: &mut AppCtx<'_>, _: u64) {}
    }

    #[derive(Clone, Default)]
    struct SharedBuf(Rc<RefCell<Vec<u8>>>);

    impl Write for SharedBuf {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A run whose forward direction drops its 2nd DATA packet and whose
    /// back direction corrupts its 3rd packet; the pcapng bytes if captured.
    fn run(capture: bool) -> (Option<Vec<u8>>, SimStats, Time, usize) {
        let mut sim = Sim::new(5);
        let c = sim.add_host(
            "10.0.0.1:9899".parse().unwrap(),
            EndpointConfig::default(),
            Box::new(Client::default()),
        );
        let s = sim.add_host(
            "10.0.0.2:9899".parse().unwrap(),
            EndpointConfig::default(),
            Box::new(Server::default()),
        );
        let link = LinkParams::new(1_000_000, Duration::from_millis(10));
        let forward = link.clone().with_impairments([Impairment::DropOrdinals {
            ordinals: vec![2],
            data_only: true,
        }]);
        let back = link.with_impairments([Impairment::CorruptOrdinals {
            ordinals: vec![3],
            data_only: false,
        }]);
        point_to_point(&mut sim, c, s, forward, back);
        let buf = SharedBuf::default();
        if capture {
            sim.capture_pcapng(Box::new(buf.clone()));
        }
        let end = sim.run(Time::from_secs(60));
        sim.finish_captures().unwrap();
        let read = sim.app::<Server>(s).unwrap().read;
        let bytes = capture.then(|| buf.0.borrow().clone());
        (bytes, sim.stats(), end, read)
    }

    #[test]
    fn a_pcapng_capture_holds_both_directions_and_comments_the_dropped_and_corrupted_packets() {
        let (bytes, stats, end, read) = run(true);
        let bytes = bytes.unwrap();
        assert_eq!(read, 5, "every message arrived after recovery");
        let blocks = read_blocks(&bytes).unwrap();
        assert!(matches!(
            &blocks[0],
            Block::Section { application: Some(a) } if a.starts_with("brisk-sim")
        ));
        let names: Vec<Option<&str>> = blocks
            .iter()
            .filter_map(|b| match b {
                Block::Interface(i) => Some(i.name.as_deref()),
                _ => None,
            })
            .collect();
        assert_eq!(
            names,
            [
                Some("link 0: 10.0.0.1 -> 10.0.0.2"),
                Some("link 1: 10.0.0.2 -> 10.0.0.1")
            ]
        );
        let packets: Vec<_> = blocks
            .iter()
            .filter_map(|b| match b {
                Block::Packet(p) => Some(p),
                _ => None,
            })
            .collect();
        // Every packet that entered either direction, once, in time order.
        for (l, link) in stats.links.iter().enumerate() {
            let on = packets.iter().filter(|p| p.interface as usize == l).count();
            assert_eq!(on as u64, link.sent, "link {l}");
            assert!(on > 3);
        }
        assert!(packets.windows(2).all(|w| w[0].timestamp <= w[1].timestamp));
        let commented: Vec<(u32, &str)> = packets
            .iter()
            .flat_map(|p| p.comments.iter().map(|c| (p.interface, c.as_str())))
            .collect();
        assert_eq!(
            commented,
            [
                (
                    0,
                    "dropped by link 0 (10.0.0.1 -> 10.0.0.2): drop-data pattern (DATA packet 2)"
                ),
                (
                    1,
                    "corrupted by link 1 (10.0.0.2 -> 10.0.0.1): corrupt-at pattern (packet 3) \
                     (the receiver's checksum fails)"
                ),
            ]
        );
        // The dropped packet carries DATA: its chunk type follows the UDP and
        // SCTP common headers.
        let dropped = packets
            .iter()
            .find(|p| p.interface == 0 && !p.comments.is_empty());
        assert_eq!(dropped.map(|p| p.data[20 + 8 + 12]), Some(0), "DATA");
        // The same seed gives the same bytes; capturing changes nothing.
        let (again, ..) = run(true);
        assert_eq!(again.as_deref(), Some(&bytes[..]));
        let (none, plain_stats, plain_end, plain_read) = run(false);
        assert!(none.is_none());
        assert_eq!((plain_stats, plain_end, plain_read), (stats, end, read));
    }
}
