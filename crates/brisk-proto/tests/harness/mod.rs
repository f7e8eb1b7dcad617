//! A deterministic in-memory pair: two endpoints, a virtual clock, a latency
//! per direction, and scripted impairments (drop, duplicate, delay) decided per
//! packet from what the packet carries.

#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::SocketAddr;
use std::time::Duration;

use brisk_proto::wire::{Chunk, Packet};
use brisk_proto::{AssocId, Config, Endpoint, EndpointConfig, Event, Time};

/// Direction of a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dir {
    AtoB,
    BtoA,
}

/// What a packet carried, as seen on the simulated wire.
#[derive(Debug, Clone)]
pub struct Seen {
    pub dir: Dir,
    pub sent_at: Time,
    /// 1-based count of packets in this direction.
    pub ordinal: u64,
    /// 1-based count of DATA-carrying packets in this direction.
    pub data_ordinal: Option<u64>,
    pub chunk_types: Vec<u8>,
    /// TSNs of the DATA (and I-DATA) chunks.
    pub tsns: Vec<u32>,
    /// Cumulative TSN ack and gap blocks of a SACK, if any.
    pub sack: Option<(u32, Vec<(u16, u16)>)>,
    pub bytes: Vec<u8>,
}

impl Seen {
    pub fn has_data(&self) -> bool {
        !self.tsns.is_empty()
    }
    pub fn has_sack(&self) -> bool {
        self.sack.is_some()
    }
    pub fn has(&self, chunk_type: u8) -> bool {
        self.chunk_types.contains(&chunk_type)
    }
}

/// What the wire does with a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    Deliver,
    Drop,
    /// Deliver twice.
    Duplicate,
    /// Deliver after this much extra delay (reordering).
    Delay(Duration),
    /// Flip a byte so the checksum fails.
    Corrupt,
}

type Rule = Box<dyn FnMut(&Seen) -> Option<Fate>>;

/// A packet on the wire: arrival time, order of sending, direction, bytes.
type InFlight = (Time, u64, Dir, Vec<u8>);

/// A delivered-or-dropped packet, for assertions.
#[derive(Debug, Clone)]
pub struct Logged {
    pub seen: Seen,
    pub fate: Fate,
}

pub struct Pair {
    pub now: Time,
    pub a: Endpoint,
    pub b: Endpoint,
    pub a_addr: SocketAddr,
    pub b_addr: SocketAddr,
    pub latency_ab: Duration,
    pub latency_ba: Duration,
    rules: Vec<Rule>,
    wire: BinaryHeap<Reverse<InFlight>>,
    seq: u64,
    ordinals: [u64; 2],
    data_ordinals: [u64; 2],
    pub log: Vec<Logged>,
    pub a_events: Vec<(Time, AssocId, Event)>,
    pub b_events: Vec<(Time, AssocId, Event)>,
    pub a_id: Option<AssocId>,
    pub b_id: Option<AssocId>,
    steps: u64,
}

impl Pair {
    /// Two endpoints on port 5000 with `latency` one way in each direction;
    /// B accepts associations with `b_cfg`.
    pub fn new(latency: Duration, b_cfg: Config) -> Self {
        let a = Endpoint::new(
            EndpointConfig {
                port: 5000,
                accept: false,
                ..EndpointConfig::default()
            },
            [1; 32],
        );
        let b = Endpoint::new(
            EndpointConfig {
                port: 5000,
                accept: true,
                accept_config: b_cfg,
                ..EndpointConfig::default()
            },
            [2; 32],
        );
        Pair {
            now: Time::ZERO,
            a,
            b,
            a_addr: "10.0.0.1:9899".parse().unwrap(),
            b_addr: "10.0.0.2:9899".parse().unwrap(),
            latency_ab: latency,
            latency_ba: latency,
            rules: Vec::new(),
            wire: BinaryHeap::new(),
            seq: 0,
            ordinals: [0; 2],
            data_ordinals: [0; 2],
            log: Vec::new(),
            a_events: Vec::new(),
            b_events: Vec::new(),
            a_id: None,
            b_id: None,
            steps: 0,
        }
    }

    /// Two endpoints that both accept associations (for INIT collisions).
    pub fn symmetric(latency: Duration, cfg: Config) -> Self {
        let mut p = Pair::new(latency, cfg.clone());
        p.a = Endpoint::new(
            EndpointConfig {
                port: 5000,
                accept: true,
                accept_config: cfg,
                ..EndpointConfig::default()
            },
            [1; 32],
        );
        p
    }

    /// The verification tags on the wire once established: (A to B, B to A).
    pub fn tags(&self) -> (u32, u32) {
        let last = |dir: Dir| {
            self.log
                .iter()
                .rev()
                .find(|l| l.seen.dir == dir && !l.seen.has(1))
                .map(|l| {
                    brisk_proto::wire::CommonHeader::decode(&l.seen.bytes)
                        .unwrap()
                        .verification_tag
                })
                .unwrap_or(0)
        };
        (last(Dir::AtoB), last(Dir::BtoA))
    }

    /// The TSN of A's next new DATA chunk, from what crossed the wire.
    pub fn a_next_tsn(&self) -> u32 {
        let last_data = self
            .log
            .iter()
            .rev()
            .find(|l| l.seen.dir == Dir::AtoB && l.seen.has_data())
            .and_then(|l| l.seen.tsns.iter().max().copied());
        match last_data {
            Some(t) => t.wrapping_add(1),
            None => self
                .log
                .iter()
                .find(|l| l.seen.dir == Dir::AtoB && l.seen.has(1))
                .and_then(|l| {
                    match &brisk_proto::wire::Packet::decode(&l.seen.bytes)
                        .ok()?
                        .chunks[0]
                    {
                        Chunk::Init(i) => Some(i.initial_tsn),
                        _ => None,
                    }
                })
                .unwrap_or(0),
        }
    }

    /// Hands B a packet as if A had sent it.
    pub fn inject_to_b(&mut self, chunks: Vec<Chunk<'static>>) {
        let (tag, _) = self.tags();
        let bytes = packet(tag, chunks);
        let now = self.now;
        self.b.handle_datagram(now, self.a_addr, &bytes);
        self.flush();
    }

    /// A impairment rule; the first rule that returns a fate decides.
    pub fn rule(&mut self, f: impl FnMut(&Seen) -> Option<Fate> + 'static) {
        self.rules.push(Box::new(f));
    }

    /// Drops the `n`-th (1-based) DATA-carrying packet in `dir`.
    pub fn drop_data_packet(&mut self, dir: Dir, n: u64) {
        self.rule(move |s| (s.dir == dir && s.data_ordinal == Some(n)).then_some(Fate::Drop));
    }

    /// A connects to B; runs until both report Connected.
    pub fn connect(&mut self, a_cfg: Config) -> (AssocId, AssocId) {
        let id = self
            .a
            .connect(self.now, self.b_addr, a_cfg)
            .expect("connect");
        self.a_id = Some(id);
        self.run_until(
            |p| p.b_id.is_some() && p.a_connected(),
            Duration::from_secs(120),
        );
        (id, self.b_id.expect("B accepted"))
    }

    /// A sends one message and B acknowledges it at once (RFC 9260 5.1: the
    /// first DATA chunk of an association is SACKed immediately), so that
    /// B's SACKs follow 6.2 from here on. The message is read, and the log
    /// and the packet counts start afresh.
    pub fn warm_up(&mut self) {
        let id = self.a_id.expect("connected");
        self.a_send(brisk_proto::OutgoingMessage::new(0, &b"warm-up"[..]));
        self.run_until(
            |p| p.a.association_ref(id).is_some_and(|a| a.all_acked()),
            Duration::from_secs(10),
        );
        assert_eq!(self.b_recv_all().len(), 1, "the warm-up message");
        self.log.clear();
        self.ordinals = [0; 2];
        self.data_ordinals = [0; 2];
    }

    pub fn a_connected(&self) -> bool {
        self.a_events.iter().any(|(_, _, e)| *e == Event::Connected)
    }

    fn index(dir: Dir) -> usize {
        match dir {
            Dir::AtoB => 0,
            Dir::BtoA => 1,
        }
    }

    fn inspect(&mut self, dir: Dir, bytes: Vec<u8>) -> Seen {
        let i = Self::index(dir);
        self.ordinals[i] += 1;
        let mut seen = Seen {
            dir,
            sent_at: self.now,
            ordinal: self.ordinals[i],
            data_ordinal: None,
            chunk_types: Vec::new(),
            tsns: Vec::new(),
            sack: None,
            bytes: Vec::new(),
        };
        if let Ok(p) = Packet::decode(&bytes) {
            for c in &p.chunks {
                seen.chunk_types.push(c.chunk_type());
                match c {
                    Chunk::Data(d) => seen.tsns.push(d.tsn),
                    Chunk::IData(d) => seen.tsns.push(d.tsn),
                    Chunk::Sack(s) => {
                        seen.sack = Some((
                            s.cum_tsn_ack,
                            s.gap_blocks.iter().map(|g| (g.start, g.end)).collect(),
                        ))
                    }
                    _ => {}
                }
            }
        }
        if seen.has_data() {
            self.data_ordinals[i] += 1;
            seen.data_ordinal = Some(self.data_ordinals[i]);
        }
        seen.bytes = bytes;
        seen
    }

    /// Moves every packet the endpoints want to send onto the wire.
    fn flush(&mut self) {
        for dir in [Dir::AtoB, Dir::BtoA] {
            loop {
                let mut buf = Vec::new();
                let ep = match dir {
                    Dir::AtoB => &mut self.a,
                    Dir::BtoA => &mut self.b,
                };
                let Some(t) = ep.poll_transmit(self.now, &mut buf) else {
                    break;
                };
                assert_eq!(t.size, buf.len());
                let seen = self.inspect(dir, buf);
                let fate = self
                    .rules
                    .iter_mut()
                    .find_map(|r| r(&seen))
                    .unwrap_or(Fate::Deliver);
                let latency = match dir {
                    Dir::AtoB => self.latency_ab,
                    Dir::BtoA => self.latency_ba,
                };
                let arrive = self.now + latency;
                let push = |at: Time, bytes: Vec<u8>, wire: &mut BinaryHeap<_>, seq: &mut u64| {
                    *seq += 1;
                    wire.push(Reverse((at, *seq, dir, bytes)));
                };
                match fate {
                    Fate::Deliver => {
                        push(arrive, seen.bytes.clone(), &mut self.wire, &mut self.seq)
                    }
                    Fate::Drop => {}
                    Fate::Duplicate => {
                        push(arrive, seen.bytes.clone(), &mut self.wire, &mut self.seq);
                        push(arrive, seen.bytes.clone(), &mut self.wire, &mut self.seq);
                    }
                    Fate::Delay(d) => push(
                        arrive + d,
                        seen.bytes.clone(),
                        &mut self.wire,
                        &mut self.seq,
                    ),
                    Fate::Corrupt => {
                        let mut b = seen.bytes.clone();
                        let last = b.len() - 1;
                        b[last] ^= 0x40;
                        push(arrive, b, &mut self.wire, &mut self.seq);
                    }
                }
                self.log.push(Logged { seen, fate });
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

    /// The next time anything happens.
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

    /// Advances to the next event and processes everything due then.
    /// Returns false when nothing is left to happen.
    pub fn step(&mut self) -> bool {
        self.steps += 1;
        assert!(
            self.steps < 5_000_000,
            "livelock at {}: a={:?} b={:?} next={:?}",
            self.now,
            self.a.poll_timeout(),
            self.b.poll_timeout(),
            self.wire.peek().map(|r| (r.0).0)
        );
        self.flush();
        let Some(t) = self.next_time() else {
            return false;
        };
        self.now = self.now.max(t);
        while let Some(Reverse((at, ..))) = self.wire.peek() {
            if *at > self.now {
                break;
            }
            let Some(Reverse((_, _, dir, bytes))) = self.wire.pop() else {
                break;
            };
            match dir {
                Dir::AtoB => self.b.handle_datagram(self.now, self.a_addr, &bytes),
                Dir::BtoA => self.a.handle_datagram(self.now, self.b_addr, &bytes),
            }
        }
        self.a.handle_timeout(self.now);
        self.b.handle_timeout(self.now);
        self.flush();
        true
    }

    /// Runs until `done` holds, at most `limit` of virtual time from now.
    pub fn run_until(&mut self, mut done: impl FnMut(&Pair) -> bool, limit: Duration) -> bool {
        let end = self.now + limit;
        loop {
            self.flush();
            if done(self) {
                return true;
            }
            if self.next_time().is_none_or(|t| t > end) || !self.step() {
                self.now = self.now.max(end.min(self.now));
                return done(self);
            }
        }
    }

    /// Runs for `d` of virtual time.
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

    /// Sends from A on its association.
    pub fn a_send(&mut self, msg: brisk_proto::OutgoingMessage) -> brisk_proto::MessageId {
        let id = self.a_id.expect("connected");
        let now = self.now;
        self.a
            .association(id)
            .expect("association")
            .send(now, msg)
            .expect("send")
    }

    /// Sends from B on its association.
    pub fn b_send(&mut self, msg: brisk_proto::OutgoingMessage) -> brisk_proto::MessageId {
        let id = self.b_id.expect("accepted");
        let now = self.now;
        self.b
            .association(id)
            .expect("association")
            .send(now, msg)
            .expect("send")
    }

    /// Every message B can read now.
    pub fn b_recv_all(&mut self) -> Vec<brisk_proto::IncomingMessage> {
        recv_all(&mut self.b, self.b_id)
    }

    /// Every message A can read now (from a closed association too).
    pub fn a_recv_all(&mut self) -> Vec<brisk_proto::IncomingMessage> {
        recv_all(&mut self.a, self.a_id)
    }

    /// Packets logged in `dir` that carried DATA.
    pub fn data_packets(&self, dir: Dir) -> Vec<&Logged> {
        self.log
            .iter()
            .filter(|l| l.seen.dir == dir && l.seen.has_data())
            .collect()
    }

    /// The messages A reported abandoned (partial reliability), in order.
    pub fn a_abandoned(&self) -> Vec<brisk_proto::MessageId> {
        self.a_events
            .iter()
            .filter_map(|(_, _, e)| match e {
                Event::MessageAbandoned { id } => Some(*id),
                _ => None,
            })
            .collect()
    }

    /// Retransmission events on A.
    pub fn a_retransmissions(&self) -> Vec<(Time, u32, brisk_proto::RetransmitCause)> {
        self.a_events
            .iter()
            .filter_map(|(_, _, e)| match e {
                Event::Retransmission { tsn, cause, at, .. } => Some((*at, *tsn, *cause)),
                _ => None,
            })
            .collect()
    }
}

/// An SCTP packet from port 5000 to port 5000 with `tag` and `chunks`.
fn recv_all(ep: &mut Endpoint, id: Option<AssocId>) -> Vec<brisk_proto::IncomingMessage> {
    let mut out = Vec::new();
    if let Some(assoc) = id.and_then(|id| ep.association(id)) {
        while let Some(m) = assoc.recv() {
            out.push(m);
        }
    }
    out
}

pub fn packet(tag: u32, chunks: Vec<Chunk<'static>>) -> Vec<u8> {
    Packet {
        header: brisk_proto::wire::CommonHeader {
            src_port: 5000,
            dst_port: 5000,
            verification_tag: tag,
            checksum: 0,
        },
        chunks,
    }
    .to_bytes()
    .unwrap()
}

/// Sends `ep` an INIT (Initiate Tag 77, initial TSN 1) from `peer` at `now`
/// and returns its INIT ACK's tag and state cookie.
pub fn init_ack_for(ep: &mut Endpoint, now: Time, peer: SocketAddr) -> (u32, Vec<u8>) {
    let init = Chunk::Init(brisk_proto::wire::chunk::Init {
        initiate_tag: 77,
        a_rwnd: 65536,
        outbound_streams: 10,
        inbound_streams: 10,
        initial_tsn: 1,
        params: vec![],
    });
    ep.handle_datagram(now, peer, &packet(0, vec![init]));
    let mut buf = Vec::new();
    ep.poll_transmit(now, &mut buf).unwrap();
    let p = Packet::decode(&buf).unwrap();
    let Chunk::InitAck(ack) = &p.chunks[0] else {
        panic!("expected INIT ACK")
    };
    (ack.initiate_tag, ack.state_cookie().unwrap().to_vec())
}

pub fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}
pub mod multi;
