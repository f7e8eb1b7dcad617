//! A deterministic dual-homed pair: two endpoints with two addresses each,
//! joined by two disjoint links (10.0.0.0/24 and 10.1.0.0/24). A packet takes
//! the link of its destination's subnet and leaves from the sender's address
//! on that link, as IP routing would. Each link has a one-way delay, can be
//! cut (both directions, from now on) and restored, and can lose packets at
//! random from a seeded RNG; everything sent is logged with its link.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use brisk_proto::wire::{Chunk, Packet};
use brisk_proto::{AssocId, Config, Endpoint, EndpointConfig, Event, OutgoingMessage, Time};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Which side sent a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Side {
    A,
    B,
}

/// A packet as it left its sender.
#[derive(Debug, Clone)]
pub struct Sent {
    pub at: Time,
    pub from: Side,
    /// The link it took (0 or 1), `None` if no link leads to its destination.
    pub link: Option<usize>,
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub chunk_types: Vec<u8>,
    pub tsns: Vec<u32>,
    pub vtag: u32,
    /// Dropped by a cut link or random loss.
    pub dropped: bool,
}

impl Sent {
    pub fn has(&self, chunk_type: u8) -> bool {
        self.chunk_types.contains(&chunk_type)
    }
}

type InFlight = (Time, u64, Side, SocketAddr, Vec<u8>);

pub struct Dual {
    pub now: Time,
    pub a: Endpoint,
    pub b: Endpoint,
    pub a_addrs: [SocketAddr; 2],
    pub b_addrs: [SocketAddr; 2],
    pub delay: [Duration; 2],
    cut: [bool; 2],
    /// Probability that a packet on a link is lost.
    pub loss: [f64; 2],
    rng: ChaCha8Rng,
    wire: BinaryHeap<Reverse<InFlight>>,
    seq: u64,
    pub log: Vec<Sent>,
    pub a_events: Vec<(Time, AssocId, Event)>,
    pub b_events: Vec<(Time, AssocId, Event)>,
    pub a_id: Option<AssocId>,
    pub b_id: Option<AssocId>,
    steps: u64,
}

pub fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn ips(addrs: &[SocketAddr; 2]) -> Vec<IpAddr> {
    addrs.iter().map(SocketAddr::ip).collect()
}

impl Dual {
    /// A (10.0.0.1, 10.1.0.1) and B (10.0.0.2, 10.1.0.2), both multi-homed,
    /// `delay` one way on each link; B accepts with `b_cfg`.
    pub fn new(delay: Duration, b_cfg: Config) -> Self {
        let a_addrs = [addr("10.0.0.1:9899"), addr("10.1.0.1:9899")];
        let b_addrs = [addr("10.0.0.2:9899"), addr("10.1.0.2:9899")];
        Self::with_addresses(delay, b_cfg, ips(&a_addrs), ips(&b_addrs))
    }

    /// The same network with the endpoints listing `a_ips` and `b_ips`.
    pub fn with_addresses(
        delay: Duration,
        b_cfg: Config,
        a_ips: Vec<IpAddr>,
        b_ips: Vec<IpAddr>,
    ) -> Self {
        let a = Endpoint::new(
            EndpointConfig {
                port: 5000,
                accept: false,
                addresses: a_ips,
                ..EndpointConfig::default()
            },
            [1; 32],
        );
        let b = Endpoint::new(
            EndpointConfig {
                port: 5000,
                accept: true,
                accept_config: b_cfg,
                addresses: b_ips,
                ..EndpointConfig::default()
            },
            [2; 32],
        );
        Dual {
            now: Time::ZERO,
            a,
            b,
            a_addrs: [addr("10.0.0.1:9899"), addr("10.1.0.1:9899")],
            b_addrs: [addr("10.0.0.2:9899"), addr("10.1.0.2:9899")],
            delay: [delay, delay],
            cut: [false; 2],
            loss: [0.0; 2],
            rng: ChaCha8Rng::seed_from_u64(7),
            wire: BinaryHeap::new(),
            seq: 0,
            log: Vec::new(),
            a_events: Vec::new(),
            b_events: Vec::new(),
            a_id: None,
            b_id: None,
            steps: 0,
        }
    }

    /// Seeds the random loss.
    pub fn seed(&mut self, seed: u64) {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
    }

    /// Cuts link `l`, both ways, from now on: packets on it are lost,
    /// those already on the wire too.
    pub fn cut(&mut self, l: usize) {
        self.cut[l] = true;
        let wire = std::mem::take(&mut self.wire);
        self.wire = wire
            .into_iter()
            .filter(|Reverse((_, _, _, to, _))| link_of(*to).is_none_or(|k| k != l))
            .collect();
    }

    /// Restores link `l`.
    pub fn restore(&mut self, l: usize) {
        self.cut[l] = false;
    }

    /// A connects to B's first address with `a_cfg`, and the handshake runs.
    pub fn connect(&mut self, a_cfg: Config) -> (AssocId, AssocId) {
        let id = self
            .a
            .connect_to_port(self.now, self.b_addrs[0], 5000, a_cfg)
            .unwrap();
        self.a_id = Some(id);
        assert!(
            self.run_until(
                |d| d.b_id.is_some() && d.a_connected(),
                Duration::from_secs(30)
            ),
            "handshake did not complete"
        );
        (id, self.b_id.unwrap())
    }

    pub fn a_connected(&self) -> bool {
        self.a_events.iter().any(|(_, _, e)| *e == Event::Connected)
    }

    fn inspect(&self, from: Side, src: SocketAddr, dst: SocketAddr, bytes: &[u8]) -> Sent {
        let mut s = Sent {
            at: self.now,
            from,
            link: link_of(dst),
            src,
            dst,
            chunk_types: Vec::new(),
            tsns: Vec::new(),
            vtag: 0,
            dropped: false,
        };
        if let Ok(p) = Packet::decode(bytes) {
            s.vtag = p.header.verification_tag;
            for c in &p.chunks {
                s.chunk_types.push(c.chunk_type());
                match c {
                    Chunk::Data(d) => s.tsns.push(d.tsn),
                    Chunk::IData(d) => s.tsns.push(d.tsn),
                    _ => {}
                }
            }
        }
        s
    }

    fn flush(&mut self) {
        for side in [Side::A, Side::B] {
            loop {
                let mut buf = Vec::new();
                let ep = match side {
                    Side::A => &mut self.a,
                    Side::B => &mut self.b,
                };
                let Some(t) = ep.poll_transmit(self.now, &mut buf) else {
                    break;
                };
                let own = match side {
                    Side::A => self.a_addrs,
                    Side::B => self.b_addrs,
                };
                let link = link_of(t.destination);
                // The source address: ours on the link the packet takes.
                let src = link.map_or(own[0], |l| own[l]);
                let mut sent = self.inspect(side, src, t.destination, &buf);
                let lost = match link {
                    None => true,
                    Some(l) => {
                        self.cut[l] || (self.loss[l] > 0.0 && self.rng.random_bool(self.loss[l]))
                    }
                };
                sent.dropped = lost;
                if let (false, Some(l)) = (lost, link) {
                    self.seq += 1;
                    self.wire.push(Reverse((
                        self.now + self.delay[l],
                        self.seq,
                        side,
                        t.destination,
                        buf,
                    )));
                }
                self.log.push(sent);
            }
        }
        self.collect_events();
    }

    fn collect_events(&mut self) {
        while let Some((id, e)) = self.a.poll_event() {
            self.a_events.push((self.now, id, e));
        }
        while let Some((id, e)) = self.b.poll_event() {
            if e == Event::Connected && self.b_id.is_none() {
                self.b_id = Some(id);
            }
            self.b_events.push((self.now, id, e));
        }
    }

    fn next_time(&self) -> Option<Time> {
        [
            self.wire.peek().map(|Reverse((t, ..))| *t),
            self.a.poll_timeout(),
            self.b.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    pub fn step(&mut self) -> bool {
        self.steps += 1;
        assert!(self.steps < 5_000_000, "livelock at {:?}", self.now);
        self.flush();
        let Some(t) = self.next_time() else {
            return false;
        };
        self.now = self.now.max(t);
        while let Some(Reverse((at, ..))) = self.wire.peek() {
            if *at > self.now {
                break;
            }
            let Some(Reverse((_, _, side, to, bytes))) = self.wire.pop() else {
                break;
            };
            let Some(l) = link_of(to) else { continue };
            match side {
                Side::A => self.b.handle_datagram(self.now, self.a_addrs[l], &bytes),
                Side::B => self.a.handle_datagram(self.now, self.b_addrs[l], &bytes),
            }
        }
        self.a.handle_timeout(self.now);
        self.b.handle_timeout(self.now);
        self.flush();
        true
    }

    pub fn run_until(&mut self, mut done: impl FnMut(&Dual) -> bool, limit: Duration) -> bool {
        let end = self.now + limit;
        loop {
            self.flush();
            if done(self) {
                return true;
            }
            if self.next_time().is_none_or(|t| t > end) || !self.step() {
                return done(self);
            }
        }
    }

    pub fn run_for(&mut self, d: Duration) {
        let end = self.now + d;
        loop {
            self.flush();
            if self.next_time().is_none_or(|t| t > end) {
                break;
            }
            self.step();
        }
        self.now = end;
        self.flush();
    }

    /// Sends a message from A.
    pub fn a_send(&mut self, payload: &[u8]) -> brisk_proto::MessageId {
        let id = self.a_id.expect("connected");
        let now = self.now;
        self.a
            .association(id)
            .expect("association")
            .send(now, OutgoingMessage::new(0, payload.to_vec()))
            .expect("send")
    }

    /// Whether A's association ended (or is gone).
    pub fn a_assoc_closed(&mut self) -> bool {
        let id = self.a_id.expect("connected");
        self.a.association(id).is_none_or(|a| a.is_closed())
    }

    pub fn a_assoc(&mut self) -> &mut brisk_proto::Association {
        let id = self.a_id.expect("connected");
        self.a.association(id).expect("association")
    }

    pub fn b_assoc(&mut self) -> &mut brisk_proto::Association {
        let id = self.b_id.expect("connected");
        self.b.association(id).expect("association")
    }

    /// Every message B can read now, with when.
    pub fn b_recv_all(&mut self) -> Vec<Vec<u8>> {
        let Some(id) = self.b_id else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if let Some(assoc) = self.b.association(id) {
            while let Some(m) = assoc.recv() {
                out.push(m.payload.to_vec());
            }
        }
        out
    }

    /// A's verification tag, as B's packets carry it.
    pub fn a_tag(&self) -> u32 {
        self.log
            .iter()
            .find(|s| s.from == Side::B)
            .map_or(0, |s| s.vtag)
    }

    /// Whether B has a message ready to read.
    pub fn b_has_message(&self) -> bool {
        self.b_events
            .iter()
            .any(|(_, _, e)| *e == Event::MessageReady)
    }

    /// Packets A sent with DATA, in order.
    pub fn a_data(&self) -> Vec<&Sent> {
        self.log
            .iter()
            .filter(|s| s.from == Side::A && !s.tsns.is_empty())
            .collect()
    }
}

/// The link of an address: 10.0.x.x is link 0, 10.1.x.x link 1.
pub fn link_of(a: SocketAddr) -> Option<usize> {
    match a.ip() {
        IpAddr::V4(v4) if v4.octets()[0] == 10 && v4.octets()[1] < 2 => {
            Some(usize::from(v4.octets()[1]))
        }
        _ => None,
    }
}
