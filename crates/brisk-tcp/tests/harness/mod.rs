//! A deterministic in-memory pair: two TCP endpoints, a virtual clock, a
//! one-way delay per direction, and scripted impairments decided per segment
//! from what it carries. Time advances exactly to the next arrival or timer
//! deadline (`poll_timeout`).

#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::net::SocketAddr;
use std::time::Duration;

use brisk_tcp::wire::{self, Header, flags};
use brisk_tcp::{
    ConnId, Connection, RetransmitCause, TcpConfig, TcpEndpoint, TcpEvent, TcpStats, Time,
};

/// Direction of a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dir {
    AtoB,
    BtoA,
}

/// What a segment carried, as seen on the simulated wire.
#[derive(Debug, Clone)]
pub struct Seen {
    pub dir: Dir,
    pub sent_at: Time,
    /// 1-based count of segments in this direction.
    pub ordinal: u64,
    /// 1-based count of payload-carrying segments in this direction.
    pub data_ordinal: Option<u64>,
    pub header: Header,
    /// Stream offset of the first payload byte (0 = first byte written),
    /// once the direction's ISN is known.
    pub offset: Option<u64>,
    pub len: usize,
    /// How many times a segment with this offset has been seen (1 = first).
    pub transmission: u32,
    pub bytes: Vec<u8>,
}

impl Seen {
    pub fn has(&self, flag: u8) -> bool {
        self.header.has(flag)
    }
    pub fn is_data(&self) -> bool {
        self.len > 0
    }
    /// A pure ACK: no payload, SYN, FIN or RST.
    pub fn is_pure_ack(&self) -> bool {
        self.len == 0 && self.header.flags & (flags::SYN | flags::FIN | flags::RST) == 0
    }
    pub fn sack(&self) -> Vec<(u32, u32)> {
        self.header.options.sack.as_slice().to_vec()
    }
}

/// What the wire does with a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    Deliver,
    Drop,
    /// Deliver twice.
    Duplicate,
    /// Deliver after this much extra delay (reordering).
    Delay(Duration),
    /// Flip a bit so the checksum fails.
    Corrupt,
}

type Rule = Box<dyn FnMut(&Seen) -> Option<Fate>>;

/// A segment on the wire: arrival, order of sending, direction, bytes.
type InFlight = (Time, u64, Dir, Vec<u8>);

#[derive(Debug, Clone)]
pub struct Logged {
    pub seen: Seen,
    pub fate: Fate,
}

pub struct Pair {
    pub now: Time,
    pub a: TcpEndpoint,
    pub b: TcpEndpoint,
    pub a_addr: SocketAddr,
    pub b_addr: SocketAddr,
    pub latency_ab: Duration,
    pub latency_ba: Duration,
    rules: Vec<Rule>,
    wire: BinaryHeap<Reverse<InFlight>>,
    seq: u64,
    ordinals: [u64; 2],
    data_ordinals: [u64; 2],
    isn: [Option<u32>; 2],
    transmissions: HashMap<(Dir, u64), u32>,
    pub log: Vec<Logged>,
    pub a_events: Vec<(Time, ConnId, TcpEvent)>,
    pub b_events: Vec<(Time, ConnId, TcpEvent)>,
    pub a_id: Option<ConnId>,
    pub b_id: Option<ConnId>,
    /// Read everything readable after each step (an application that reads at once).
    pub auto_read: bool,
    pub a_received: Vec<u8>,
    pub b_received: Vec<u8>,
    steps: u64,
}

pub fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

impl Pair {
    /// A at 10.0.0.1:40000 (seed 1) and B listening at 10.0.0.2:80 (seed 2),
    /// `latency` one way each direction.
    pub fn new(latency: Duration, a_cfg: TcpConfig, b_cfg: TcpConfig) -> Self {
        Self::with_seeds(latency, a_cfg, b_cfg, 1, 2)
    }

    pub fn with_seeds(
        latency: Duration,
        a_cfg: TcpConfig,
        b_cfg: TcpConfig,
        a_seed: u64,
        b_seed: u64,
    ) -> Self {
        let a_addr: SocketAddr = "10.0.0.1:40000".parse().unwrap();
        let b_addr: SocketAddr = "10.0.0.2:80".parse().unwrap();
        Pair {
            now: Time::ZERO,
            a: TcpEndpoint::try_new(a_addr, a_cfg, false, a_seed).unwrap(),
            b: TcpEndpoint::try_new(b_addr, b_cfg, true, b_seed).unwrap(),
            a_addr,
            b_addr,
            latency_ab: latency,
            latency_ba: latency,
            rules: Vec::new(),
            wire: BinaryHeap::new(),
            seq: 0,
            ordinals: [0; 2],
            data_ordinals: [0; 2],
            isn: [None; 2],
            transmissions: HashMap::new(),
            log: Vec::new(),
            a_events: Vec::new(),
            b_events: Vec::new(),
            a_id: None,
            b_id: None,
            auto_read: true,
            a_received: Vec::new(),
            b_received: Vec::new(),
            steps: 0,
        }
    }

    /// A pair with both ends configured alike, connected at time 0; returns
    /// once both report Connected.
    pub fn connected(latency: Duration, cfg: TcpConfig) -> Self {
        let mut p = Pair::new(latency, cfg.clone(), cfg);
        p.connect();
        p
    }

    /// An impairment rule; the first rule that returns a fate decides.
    pub fn rule(&mut self, f: impl FnMut(&Seen) -> Option<Fate> + 'static) {
        self.rules.push(Box::new(f));
    }

    /// Drops the `n`-th (1-based) payload-carrying segment in `dir`.
    pub fn drop_data(&mut self, dir: Dir, n: u64) {
        self.rule(move |s| (s.dir == dir && s.data_ordinal == Some(n)).then_some(Fate::Drop));
    }

    /// Drops transmission `k` (1 = the first) of the segment that starts
    /// at stream offset `offset` in `dir`.
    pub fn drop_transmission(&mut self, dir: Dir, offset: u64, k: u32) {
        self.rule(move |s| {
            (s.dir == dir && s.is_data() && s.offset == Some(offset) && s.transmission == k)
                .then_some(Fate::Drop)
        });
    }

    /// A connects to B; runs until both report Connected.
    pub fn connect(&mut self) -> (ConnId, ConnId) {
        let id = self.a.connect(self.now, self.b_addr).expect("connect");
        self.a_id = Some(id);
        assert!(self.run_until(
            |p| p.b_id.is_some() && p.a_connected(),
            Duration::from_secs(300)
        ));
        (id, self.b_id.unwrap())
    }

    pub fn a_connected(&self) -> bool {
        self.a_events
            .iter()
            .any(|(_, _, e)| *e == TcpEvent::Connected)
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
        let seg = wire::parse_unchecked(&bytes).expect("the endpoints send valid segments");
        let header = seg.header;
        let len = seg.payload.len();
        if header.has(flags::SYN) {
            self.isn[i] = Some(header.seq);
        }
        let offset = self.isn[i].map(|isn| u64::from(header.seq.wrapping_sub(isn).wrapping_sub(1)));
        let mut data_ordinal = None;
        let mut transmission = 0;
        if len > 0 {
            self.data_ordinals[i] += 1;
            data_ordinal = Some(self.data_ordinals[i]);
            let n = self
                .transmissions
                .entry((dir, offset.unwrap_or(0)))
                .or_insert(0);
            *n += 1;
            transmission = *n;
        }
        Seen {
            dir,
            sent_at: self.now,
            ordinal: self.ordinals[i],
            data_ordinal,
            header,
            offset,
            len,
            transmission,
            bytes,
        }
    }

    fn put_on_wire(&mut self, dir: Dir, bytes: Vec<u8>) {
        let seen = self.inspect(dir, bytes);
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
        let mut push = |at: Time, b: Vec<u8>| {
            self.seq += 1;
            self.wire.push(Reverse((at, self.seq, dir, b)));
        };
        match fate {
            Fate::Deliver => push(arrive, seen.bytes.clone()),
            Fate::Drop => {}
            Fate::Duplicate => {
                push(arrive, seen.bytes.clone());
                push(arrive, seen.bytes.clone());
            }
            Fate::Delay(d) => push(arrive + d, seen.bytes.clone()),
            Fate::Corrupt => {
                let mut b = seen.bytes.clone();
                let last = b.len() - 1;
                b[last] ^= 0x40;
                push(arrive, b);
            }
        }
        self.log.push(Logged { seen, fate });
    }

    /// Moves every segment the endpoints want to send onto the wire (and
    /// lets the applications read, which may open windows).
    pub fn flush(&mut self) {
        loop {
            let mut moved = false;
            for dir in [Dir::AtoB, Dir::BtoA] {
                loop {
                    let mut buf = Vec::new();
                    let (ep, to) = match dir {
                        Dir::AtoB => (&mut self.a, self.b_addr),
                        Dir::BtoA => (&mut self.b, self.a_addr),
                    };
                    let Some(dest) = ep.poll_transmit(self.now, &mut buf) else {
                        break;
                    };
                    assert_eq!(dest, to);
                    self.put_on_wire(dir, buf);
                    moved = true;
                }
            }
            let read = self.collect_events();
            if !moved && !read {
                break;
            }
        }
    }

    /// Takes both endpoints' events; reads if `auto_read`. True if it read.
    fn collect_events(&mut self) -> bool {
        while let Some((id, e)) = self.a.poll_event() {
            self.a_events.push((self.now, id, e));
        }
        while let Some((id, e)) = self.b.poll_event() {
            if e == TcpEvent::Connected && self.b_id.is_none() {
                self.b_id = Some(id);
            }
            self.b_events.push((self.now, id, e));
        }
        let mut read = 0;
        if self.auto_read {
            if let Some(c) = self.a_id.and_then(|id| self.a.connection(id)) {
                read += c.read(&mut self.a_received, usize::MAX);
            }
            if let Some(c) = self.b_id.and_then(|id| self.b.connection(id)) {
                read += c.read(&mut self.b_received, usize::MAX);
            }
        }
        read > 0
    }

    /// The next time anything happens.
    pub fn next_time(&self) -> Option<Time> {
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
    pub fn step(&mut self) -> bool {
        self.steps += 1;
        assert!(self.steps < 2_000_000, "livelock at {}", self.now);
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
                Dir::AtoB => self.b.handle_segment(self.now, self.a_addr, &bytes),
                Dir::BtoA => self.a.handle_segment(self.now, self.b_addr, &bytes),
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

    /// Runs until time `t`.
    pub fn run_to(&mut self, t: Time) {
        let d = t.since(self.now);
        self.run_for(d);
    }

    pub fn a_conn(&mut self) -> &mut Connection {
        let id = self.a_id.expect("connected");
        self.a.connection(id).expect("connection")
    }

    pub fn b_conn(&mut self) -> &mut Connection {
        let id = self.b_id.expect("accepted");
        self.b.connection(id).expect("connection")
    }

    pub fn a_stats(&self) -> TcpStats {
        self.a
            .connection_ref(self.a_id.unwrap())
            .unwrap()
            .stats()
            .clone()
    }

    pub fn b_stats(&self) -> TcpStats {
        self.b
            .connection_ref(self.b_id.unwrap())
            .unwrap()
            .stats()
            .clone()
    }

    /// A writes `data` now and sends what may go; returns bytes accepted.
    pub fn a_write(&mut self, data: &[u8]) -> usize {
        let now = self.now;
        let n = self.a_conn().write(now, data);
        self.flush();
        n
    }

    /// B writes `data` now.
    pub fn b_write(&mut self, data: &[u8]) -> usize {
        let now = self.now;
        let n = self.b_conn().write(now, data);
        self.flush();
        n
    }

    /// Segments logged in `dir` that carried payload.
    pub fn data_segments(&self, dir: Dir) -> Vec<&Seen> {
        self.log
            .iter()
            .filter(|l| l.seen.dir == dir && l.seen.is_data())
            .map(|l| &l.seen)
            .collect()
    }

    /// Every segment logged in `dir`.
    pub fn segments(&self, dir: Dir) -> Vec<&Seen> {
        self.log
            .iter()
            .filter(|l| l.seen.dir == dir)
            .map(|l| &l.seen)
            .collect()
    }

    /// Retransmission events on A: (at, stream offset, cause, transmissions).
    pub fn a_retransmissions(&self) -> Vec<(Time, u64, RetransmitCause, u32)> {
        let isn = self.isn[0].unwrap_or(0);
        self.a_events
            .iter()
            .filter_map(|(_, _, e)| match e {
                TcpEvent::Retransmission {
                    seq,
                    cause,
                    at,
                    transmissions,
                    ..
                } => Some((
                    *at,
                    u64::from(seq.wrapping_sub(isn).wrapping_sub(1)),
                    *cause,
                    *transmissions,
                )),
                _ => None,
            })
            .collect()
    }

    /// The time of A's or B's first event matching `f`.
    pub fn event_time(
        events: &[(Time, ConnId, TcpEvent)],
        f: impl Fn(&TcpEvent) -> bool,
    ) -> Option<Time> {
        events.iter().find(|(_, _, e)| f(e)).map(|(t, ..)| *t)
    }

    /// A bare ACK header in `dir` with sequence and acknowledgment numbers
    /// at the given stream offsets (0 = the first data byte).
    pub fn header(&self, dir: Dir, seq_off: u64, ack_off: u64) -> Header {
        let (other, src, dst) = match dir {
            Dir::AtoB => (Dir::BtoA, self.a_addr, self.b_addr),
            Dir::BtoA => (Dir::AtoB, self.b_addr, self.a_addr),
        };
        Header {
            src_port: src.port(),
            dst_port: dst.port(),
            seq: self.isn(dir).wrapping_add(1).wrapping_add(seq_off as u32),
            ack: self.isn(other).wrapping_add(1).wrapping_add(ack_off as u32),
            flags: flags::ACK,
            window: 65535,
            urgent: 0,
            options: Default::default(),
        }
    }

    /// Hands `h` and `payload` to the endpoint `h` is addressed to, with a
    /// valid checksum, now; then flushes.
    pub fn inject(&mut self, dir: Dir, h: &Header, payload: &[u8]) {
        let (src, dst) = match dir {
            Dir::AtoB => (self.a_addr, self.b_addr),
            Dir::BtoA => (self.b_addr, self.a_addr),
        };
        let mut buf = Vec::new();
        wire::write(h, payload, ipv4(src), ipv4(dst), &mut buf).unwrap();
        let now = self.now;
        match dir {
            Dir::AtoB => self.b.handle_segment(now, src, &buf),
            Dir::BtoA => self.a.handle_segment(now, src, &buf),
        }
        self.flush();
    }

    /// The wire ISN of `dir`.
    pub fn isn(&self, dir: Dir) -> u32 {
        self.isn[Self::index(dir)].expect("SYN seen")
    }
}

pub fn ipv4(a: SocketAddr) -> std::net::Ipv4Addr {
    match a {
        SocketAddr::V4(v) => *v.ip(),
        SocketAddr::V6(_) => panic!("IPv4 only"),
    }
}

/// `rfc` with every segment acknowledged at once: losses then give exact
/// duplicate-ACK counts.
pub fn rfc_no_delack() -> TcpConfig {
    TcpConfig {
        delayed_ack: None,
        ..TcpConfig::rfc()
    }
}

/// `n` bytes of a recognisable pattern.
pub fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}
