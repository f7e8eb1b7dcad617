//! Stateful fuzzing of brisk-proto: a driver shared by `tests/fuzz_loop.rs`
//! (a seeded loop on stable Rust) and the cargo-fuzz targets in `fuzz/`.
//!
//! A [`World`] holds two endpoints, A and B, on a virtual clock, and a wire
//! between them. A step interpreter ([`World::step`]) reads every decision
//! from a byte [`Source`]: application sends and reads, clock moves, loss,
//! reordering and duplication of real packets, replays of old packets, and
//! injected packets, both mutations of captured ones ([`mutate`]) and
//! generated ones ([`generate`]) of every chunk type.
//!
//! After every step the invariants are checked, and a violation panics with the
//! case's label and the step number:
//! - no panic in brisk-proto;
//! - every message received is byte-identical to one the peer sent, never
//!   received twice, and ordered messages of a stream arrive in send order
//!   (messages that hold injected bytes, [`generate::INJECTED`], are exempt
//!   from the first rule only);
//! - `receive_held() <= receive_buffer + NEXT_TSN_ALLOWANCE` and
//!   `send_held() <= send_buffer` for every association;
//! - after `handle_timeout(now)` and draining transmits and events,
//!   `poll_timeout()` is `None` or later than `now`;
//! - a message gets at most one of `MessageAcked` and `SendFailed`;
//! - in a case without injection nor application abort or shutdown:
//!   - with little loss, the first handshake completes;
//!   - with no loss, no association ever closes;
//!   - once the wire is calm, every message sent is delivered and
//!     acknowledged (when both associations are up), unless it was
//!     abandoned (partial reliability); a message acknowledged
//!     (`MessageAcked`) is delivered, abandoned or not.
//!
//! A reset world ([`Plan::reset_world`]) negotiates stream reconfiguration
//! (RFC 6525) and partial reliability (RFC 3758) at both ends, message
//! interleaving (RFC 8260) at both ends or at neither, and a random stream
//! scheduler; its applications send with random lifetimes and retransmission
//! limits (RFC 7496) and reset streams, add streams and reset SSNs/TSNs
//! mid-traffic.
//!
//! In a peer-restart world ([`Plan::restart`]) a step may crash one side and
//! bring it back as a fresh endpoint on the same address and port that
//! connects again (RFC 9260 5.2.4 A at the other side). There, without
//! injection nor application abort or shutdown:
//!   - when an association restarts, each message it had was acknowledged,
//!     failed (`SendFailed`) or delivered;
//!   - every message acknowledged is delivered;
//!   - once calm with both up, every message is delivered unless it failed
//!     or its sender crashed before it arrived.
//!
//! Duplicates and order are judged per receiving association life (id and
//! restarts): a new association made from a replayed, still valid COOKIE ECHO
//! (RFC 9260 5.1.5) may legitimately take old packets again.
//!
//! About a third of the worlds run CUBIC (RFC 9438), and half RFC 7661
//! congestion window validation ([`config`]).
//!
//! In one case in four ([`offpath`]), an off-path stranger who knows the
//! addresses and ports but no tag, cookie or nonce sends packets of every
//! chunk type as the peer: the endpoint that gets one emits no event for it
//! (no restart, reset, stream change, close, message or path change).
//!
//! In one case in four ([`squat`]), B is multi-homed and a squatter lists A's
//! address and third-party ones in its INIT before A connects; nothing but
//! paced, bounded HEARTBEATs may go to those addresses, and the squatter's
//! association never restarts.

#![allow(dead_code)]

pub mod generate;
pub mod mutate;
pub mod offpath;
pub mod source;
pub mod squat;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, VecDeque};
use std::net::SocketAddr;
use std::time::Duration;

use brisk_proto::rx::window::NEXT_TSN_ALLOWANCE;
use brisk_proto::wire::chunk::{Abort, ShutdownComplete};
use brisk_proto::wire::{Chunk, Packet, RawChunks};
use brisk_proto::{
    AssocId, Config, CongestionAlgorithm, EarlyRetransmit, Endpoint, EndpointConfig, Event,
    IncomingMessage, MessageId, Nagle, OutgoingMessage, State, Time,
};

pub use source::{Dice, SliceSource, Source, XorShift};

pub const A: usize = 0;
pub const B: usize = 1;
const PORT: u16 = 5000;
const NAMES: [&str; 2] = ["A", "B"];

/// Captured packets kept per direction for mutation and replay.
const POOL: usize = 48;

/// How a case treats its network and its inputs.
#[derive(Debug, Clone)]
pub struct Plan {
    /// One-way latency.
    pub latency: Duration,
    /// Probabilities, per 256, that a real packet is dropped, duplicated, or
    /// delayed by up to three latencies (reordering).
    pub loss: u16,
    pub dup: u16,
    pub reorder: u16,
    /// Injected packets (mutated and generated) take part.
    pub inject: bool,
    /// The application may shut down or abort.
    pub chaos: bool,
    /// Each side reads everything after every step; otherwise only when a
    /// step says so, which lets the receive buffers fill.
    pub eager_read: [bool; 2],
    /// The squatter world ([`squat`]).
    pub squat: bool,
    /// A side may crash and come back, a fresh endpoint that connects again
    /// (RFC 9260 5.2.4 A): [`World::restart_peer`].
    pub restart: bool,
    /// An off-path stranger sends packets too ([`offpath`]).
    pub offpath: bool,
    /// A reset world (see the module docs).
    pub reset_world: bool,
}

/// A packet in flight: arrival, order of sending, receiving side, bytes.
type InFlight = (Time, u64, usize, Vec<u8>);

/// One life of a receiving association: side, id, restarts. A peer's
/// messages are unique and in order within one; a new association made from a
/// replayed COOKIE ECHO (RFC 9260 5.1.5) may receive old packets again.
type Instance = (usize, AssocId, u32);

/// A message an application sent.
#[derive(Debug, Clone, Copy)]
struct Sent {
    epoch: u32,
    stream: u16,
    unordered: bool,
}

/// What a side knows from the packets it sent, for aiming injections.
#[derive(Debug, Clone, Default)]
struct Seen {
    /// The tag on this side's packets (the peer's own tag).
    tag: Option<u32>,
    /// The next TSN of this side's DATA.
    next_tsn: u32,
    /// The cumulative TSN ack of this side's last SACK.
    cum_ack: u32,
    cookie: Option<Vec<u8>>,
    hb_info: Option<Vec<u8>>,
    last_data_packet: Option<Vec<u8>>,
    /// The most recent packets this side sent.
    pool: VecDeque<Vec<u8>>,
    /// The first packet of each leading chunk type this side sent.
    firsts: BTreeMap<u8, Vec<u8>>,
}

/// Counters for the loop's report.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    pub steps: u64,
    pub packets: u64,
    pub injected: u64,
    /// Cases whose final drain ran out of time while data still moved.
    pub drains_unfinished: u64,
    pub delivered: u64,
    pub tainted: u64,
    pub closes: u64,
    pub liveness_checked: u64,
    /// Sides that crashed and came back (peer-restart worlds).
    pub peer_restarts: u64,
}

/// Two endpoints, a wire and a clock, driven by a byte source.
pub struct World<'s> {
    pub d: Dice<'s>,
    /// Names the case in failure messages (e.g. its seed).
    pub label: String,
    pub trace: bool,
    pub now: Time,
    pub eps: [Endpoint; 2],
    pub addrs: [SocketAddr; 2],
    pub cfgs: [Config; 2],
    pub plan: Plan,
    /// The association each side sends on.
    pub current: [Option<AssocId>; 2],
    /// Bumped whenever a side's sending association changes or restarts.
    epoch: [u32; 2],
    next_seq: [u64; 2],
    sent: BTreeMap<(usize, u64), Sent>,
    /// Messages received: (receiving instance, sender, seq).
    delivered: BTreeSet<(Instance, usize, u64)>,
    /// Every message received by any instance, for the full-delivery check.
    received: BTreeSet<(usize, u64)>,
    /// Last ordered seq per receiving instance, sender, sender epoch, stream.
    last_ordered: BTreeMap<(Instance, usize, u32, u16), u64>,
    /// Restarts of each association.
    restarts: BTreeMap<(usize, AssocId), u32>,
    msg_ids: BTreeMap<(usize, AssocId, MessageId), u64>,
    /// Messages with MessageAcked (true) or SendFailed (false).
    terminal: BTreeMap<(usize, AssocId, MessageId), bool>,
    /// Messages with MessageAbandoned (partial reliability).
    abandoned: BTreeSet<(usize, AssocId, MessageId)>,
    /// Packets in flight: arrival, order of sending, receiving side, bytes.
    wire: BinaryHeap<Reverse<InFlight>>,
    wire_seq: u64,
    /// Packets the loss dice dropped. Under `cargo fuzz` the input chooses
    /// which, so "little loss" is judged by this count, not by the plan.
    dropped: u32,
    seen: [Seen; 2],
    /// No loss, duplication or reordering (the final drain).
    calm: bool,
    /// The application aborted or shut down, or a packet was injected.
    disturbed: bool,
    closed_any: bool,
    /// Peer-restart worlds: messages whose delivery is not owed (they
    /// failed, or their sender crashed before they arrived).
    exempt: BTreeSet<(usize, u64)>,
    /// FNV-1a of every datagram sent, for determinism checks.
    pub wire_hash: u64,
    pub tally: Tally,
    squatter: Option<squat::Squatter>,
}

fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A configuration drawn from the presets, with knobs turned so that
/// fragmentation, full buffers and every latency mechanism come up.
pub fn config(d: &mut Dice<'_>) -> Config {
    config_for(d, reconfig_mode())
}

/// [`config`], for a reset world if `reset_world` (see the module docs).
pub fn config_for(d: &mut Dice<'_>, reset_world: bool) -> Config {
    let mut c = match d.below(5) {
        0 => Config::rfc9260(),
        1 => Config::signaling(),
        2 => Config::thin_stream(),
        3 => Config::low_latency(),
        _ => Config::lksctp_2_6_15(),
    };
    c.events = true;
    if d.chance(128) {
        c.mtu = *d.pick(&[128, 200, 300, 576, 1200, 1452, 9000]);
    }
    if d.chance(128) {
        c.receive_buffer = *d.pick(&[1500, 3000, 8192, 16384, 65536, 1 << 20]);
    }
    if d.chance(96) {
        c.send_buffer = *d.pick(&[2048, 8192, 32768, 262_144, 4 << 20]);
    }
    c.max_message_size = c.max_message_size.min(c.send_buffer);
    if d.chance(64) {
        c.max_message_size = c.max_message_size.min(*d.pick(&[1000, 5000, 20000]));
    }
    if d.chance(96) {
        c.sack_freq = d.range(1, 4);
        c.sack_delay = Duration::from_millis(u64::from(d.range(1, 500)));
    }
    c.outbound_streams = d.range(1, 20) as u16;
    c.max_inbound_streams = d.range(1, 20) as u16;
    // Stream reconfiguration (RFC 6525) on in half the worlds, drawn from
    // the stream count so that no seed's later dice move.
    c.stream_reconfig = c.max_inbound_streams % 2 == 0;
    // CUBIC (RFC 9438) in about a third of the worlds and RFC 7661 window
    // validation in half, drawn from the stream count too (issue 28).
    if c.outbound_streams % 3 == 0 {
        c.congestion_control = CongestionAlgorithm::Cubic;
    }
    c.cwnd_validation = (c.outbound_streams / 2) % 2 == 1;
    // The BBR-like controller (cc/bbr.rs) in one world in three, drawn from
    // the stream counts for the same reason.
    if (c.outbound_streams + c.max_inbound_streams) % 3 == 0 {
        c.congestion_control = CongestionAlgorithm::Bbr;
    }
    // RACK-TLP (RFC 8985) in a third of the worlds, drawn from the stream
    // count for the same reason.
    c.rack = c.outbound_streams % 3 == 1;
    if d.chance(64) {
        c.nagle = *d.pick(&[Nagle::Off, Nagle::Classic, Nagle::Minshall]);
    }
    if d.chance(64) {
        c.early_retransmit = *d.pick(&[
            EarlyRetransmit::Off,
            EarlyRetransmit::Bytes,
            EarlyRetransmit::Packets,
        ]);
        c.early_retransmit_delay = d.bool();
    }
    if d.chance(64) {
        c.max_burst = d.range(0, 6);
    }
    if d.chance(64) {
        c.pktdrop = d.bool();
        c.tail_loss_probe = d.bool();
        c.rto_restart = d.bool();
    }
    if d.chance(64) {
        c.hb_interval = Duration::from_millis(*d.pick(&[200u64, 1000, 5000, 30000]));
        c.heartbeats = d.chance(200);
    }
    if d.chance(48) {
        c.rto_min = Duration::from_millis(*d.pick(&[10u64, 50, 100]));
        c.rto_initial = c.rto_min * 2;
        c.rto_max = Duration::from_millis(*d.pick(&[400u64, 2000, 60000]));
    }
    if d.chance(24) {
        c.assoc_max_retrans = d.range(1, 10);
        c.path_max_retrans = d.range(1, 5);
        c.max_init_retransmits = d.range(1, 8);
    }
    // Drawn last, so that the draws above keep their meaning for the corpus:
    // message interleaving (RFC 8260) at one end in three, with partial
    // reliability at times.
    c.message_interleaving = d.chance(96);
    if d.chance(64) {
        c.partial_reliability = d.bool();
    }
    if reset_world {
        reset_world_config(d, &mut c);
    }
    // Redundancy within a byte budget (issue 28) in one world in three,
    // drawn from the stream counts so that no seed's later dice move.
    if c.outbound_streams % 3 == 0 {
        c.redundancy_budget = [150, 200, 400][usize::from(c.max_inbound_streams % 3)];
        c.redundancy_min_itt =
            Duration::from_millis([1, 10, 50][usize::from(c.outbound_streams / 3 % 3)]);
        // The loss-triggered budget (its loss rate told by Duplicate TSN
        // reports the generated peer may fake) and the copy probe.
        c.redundancy_residual_loss = [0, 300, 20_000][usize::from(c.max_inbound_streams / 3 % 3)];
        c.redundancy_copy_probe = c.max_inbound_streams / 9 % 2 == 0;
    }
    if c.validate().is_err() {
        Config::rfc9260()
    } else {
        c
    }
}

/// A reset world's extensions (after every other draw: the other worlds
/// keep theirs): stream reconfiguration and partial reliability, I-DATA at
/// both ends or neither (drawn here; [`World::new_world`] gives B A's), and
/// a random stream scheduler (RFC 8260 3).
fn reset_world_config(d: &mut Dice<'_>, c: &mut Config) {
    use brisk_proto::StreamScheduler as S;
    c.stream_reconfig = true;
    c.partial_reliability = true;
    c.message_interleaving = d.u32() % 2 == 0;
    c.stream_scheduler = *d.pick(&[
        S::Fcfs,
        S::RoundRobin,
        S::RoundRobinPacket,
        S::Priority,
        S::Wfq,
    ]);
}

/// `BRISK_FUZZ_RECONFIG=1`: every world is a reset world (see the module
/// docs), not only those the loop picks. Off, the draws of the other worlds
/// are those of the corpus and the regression seeds.
pub fn reconfig_mode() -> bool {
    std::env::var_os("BRISK_FUZZ_RECONFIG").is_some_and(|v| v == "1")
}

/// The payload of a genuine message: an ASCII header naming it, then filler,
/// never an [`generate::INJECTED`] byte.
fn genuine_payload(
    side: usize,
    epoch: u32,
    seq: u64,
    stream: u16,
    unordered: bool,
    len: usize,
) -> Vec<u8> {
    let mut p = format!(
        "M{side}.{epoch}.{seq}.{stream}.{}.{len};",
        u8::from(unordered)
    )
    .into_bytes();
    let mut x = seq.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    while p.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p.push((x % 255) as u8);
    }
    p
}

/// Parses a genuine header: (side, epoch, seq, stream, unordered, len).
fn parse_genuine(p: &[u8]) -> Option<(usize, u32, u64, u16, bool, usize)> {
    let end = p.iter().take(64).position(|&b| b == b';')?;
    let head = std::str::from_utf8(p.get(1..end)?).ok()?;
    if p.first() != Some(&b'M') {
        return None;
    }
    let f: Vec<&str> = head.split('.').collect();
    if f.len() != 6 {
        return None;
    }
    Some((
        f[0].parse().ok()?,
        f[1].parse().ok()?,
        f[2].parse().ok()?,
        f[3].parse().ok()?,
        f[4] == "1",
        f[5].parse().ok()?,
    ))
}

impl<'s> World<'s> {
    /// A world whose endpoints, configurations and network come from `d`:
    /// a reset world with `BRISK_FUZZ_RECONFIG=1`.
    pub fn new(d: Dice<'s>, label: String) -> Self {
        Self::new_world(d, label, reconfig_mode())
    }

    /// [`new`](Self::new), a reset world if `reset_world` (module docs).
    pub fn new_world(mut d: Dice<'s>, label: String, reset_world: bool) -> Self {
        let seeds = [d.u32(), d.u32()];
        let mut cfgs = [
            config_for(&mut d, reset_world),
            config_for(&mut d, reset_world),
        ];
        if reset_world {
            // RFC 8260 2.2: I-DATA at both ends or at neither.
            cfgs[B].message_interleaving = cfgs[A].message_interleaving;
        }
        let plan = Plan {
            latency: Duration::from_micros(u64::from(d.range(100, 60_000))),
            loss: if d.chance(64) {
                0
            } else {
                d.range(0, 60) as u16
            },
            dup: d.range(0, 20) as u16,
            reorder: d.range(0, 40) as u16,
            inject: d.chance(200),
            chaos: d.chance(64),
            eager_read: [d.chance(200), d.chance(200)],
            squat: squat::enabled(seeds[A]),
            // Drawn from what was drawn already, so that no seed's world moves.
            restart: seeds[A] % 4 == 1,
            offpath: offpath::enabled(seeds[B]),
            reset_world,
        };
        let endpoint = |side: usize, cfg: &Config| {
            let mut seed = [side as u8 + 1; 32];
            seed[..4].copy_from_slice(&seeds[side].to_le_bytes());
            Endpoint::new(
                EndpointConfig {
                    port: PORT,
                    accept: true,
                    accept_config: cfg.clone(),
                    addresses: if plan.squat && side == B {
                        squat::b_addresses()
                    } else {
                        Vec::new()
                    },
                    ..EndpointConfig::default()
                },
                seed,
            )
        };
        let eps = [endpoint(A, &cfgs[A]), endpoint(B, &cfgs[B])];
        World {
            d,
            label,
            trace: std::env::var_os("BRISK_FUZZ_TRACE").is_some(),
            now: Time::from_secs(1),
            eps,
            addrs: [
                "10.0.0.1:9899".parse().expect("address"),
                "10.0.0.2:9899".parse().expect("address"),
            ],
            cfgs,
            plan,
            current: [None, None],
            epoch: [0, 0],
            next_seq: [0, 0],
            sent: BTreeMap::new(),
            delivered: BTreeSet::new(),
            received: BTreeSet::new(),
            last_ordered: BTreeMap::new(),
            restarts: BTreeMap::new(),
            msg_ids: BTreeMap::new(),
            terminal: BTreeMap::new(),
            abandoned: BTreeSet::new(),
            wire: BinaryHeap::new(),
            wire_seq: 0,
            dropped: 0,
            seen: [Seen::default(), Seen::default()],
            calm: false,
            disturbed: false,
            closed_any: false,
            exempt: BTreeSet::new(),
            wire_hash: 0xcbf2_9ce4_8422_2325,
            tally: Tally::default(),
            squatter: None,
        }
    }

    /// Fails the case, naming it, the step and the time.
    #[track_caller]
    fn fail(&self, what: String) -> ! {
        panic!(
            "{}: step {} at {}: {what}\nplan: {:?}\nconfig A: {:?}\nconfig B: {:?}",
            self.label, self.tally.steps, self.now, self.plan, self.cfgs[A], self.cfgs[B]
        );
    }

    fn log(&self, what: impl FnOnce() -> String) {
        if self.trace {
            eprintln!("[{} {}] {}", self.tally.steps, self.now, what());
        }
    }

    // ----- the wire -----

    fn capture(&mut self, side: usize, bytes: &[u8]) {
        self.tally.packets += 1;
        self.wire_hash = fnv(self.wire_hash, bytes);
        let mut peer_cum_ack = None;
        let seen = &mut self.seen[side];
        if let Ok(p) = Packet::decode(bytes) {
            let first = p.chunks.first();
            let reflected = matches!(
                first,
                Some(Chunk::Abort(Abort {
                    reflected_tag: true,
                    ..
                })) | Some(Chunk::ShutdownComplete(ShutdownComplete {
                    reflected_tag: true
                }))
            );
            if !reflected && !matches!(first, Some(Chunk::Init(_))) {
                seen.tag = Some(p.header.verification_tag);
            }
            for c in &p.chunks {
                match c {
                    Chunk::Init(i) => {
                        seen.next_tsn = i.initial_tsn;
                        peer_cum_ack = Some(i.initial_tsn.wrapping_sub(1));
                    }
                    Chunk::InitAck(i) => {
                        seen.next_tsn = i.initial_tsn;
                        seen.cookie = i.state_cookie().map(<[u8]>::to_vec);
                        peer_cum_ack = Some(i.initial_tsn.wrapping_sub(1));
                    }
                    Chunk::CookieEcho(e) => seen.cookie = Some(e.cookie.to_vec()),
                    Chunk::Data(data) => {
                        if data.tsn.wrapping_sub(seen.next_tsn) < (1 << 31) {
                            seen.next_tsn = data.tsn.wrapping_add(1);
                        }
                        seen.last_data_packet = Some(bytes.to_vec());
                    }
                    Chunk::Sack(s) => seen.cum_ack = s.cum_tsn_ack,
                    Chunk::Heartbeat(h) => seen.hb_info = h.info().map(<[u8]>::to_vec),
                    _ => {}
                }
            }
            if let Some(c) = first {
                seen.firsts
                    .entry(c.chunk_type())
                    .or_insert_with(|| bytes.to_vec());
            }
        }
        if seen.pool.len() == POOL {
            seen.pool.pop_front();
        }
        seen.pool.push_back(bytes.to_vec());
        // Until the peer SACKs, its cumulative ack is our initial TSN - 1.
        if let Some(ack) = peer_cum_ack {
            self.seen[1 - side].cum_ack = ack;
        }
    }

    fn put_on_wire(&mut self, at: Time, to: usize, bytes: Vec<u8>) {
        self.wire_seq += 1;
        self.wire.push(Reverse((at, self.wire_seq, to, bytes)));
    }

    /// Moves every packet the endpoints want to send onto the wire, deciding
    /// each one's fate, then collects the events.
    fn flush(&mut self) {
        for side in [A, B] {
            for n in 0.. {
                if n > 200_000 {
                    self.fail(format!("{} never stops transmitting", NAMES[side]));
                }
                let mut buf = Vec::new();
                let Some(t) = self.eps[side].poll_transmit(self.now, &mut buf) else {
                    break;
                };
                if t.size != buf.len() {
                    self.fail(format!(
                        "Transmit::size {} but {} bytes written",
                        t.size,
                        buf.len()
                    ));
                }
                if self.squat_watch(side, t.destination, &buf) {
                    continue;
                }
                self.capture(side, &buf);
                self.log(|| {
                    format!(
                        "{} sends {} ({} bytes)",
                        NAMES[side],
                        describe(&buf),
                        buf.len()
                    )
                });
                let other = 1 - side;
                if t.destination != self.addrs[other] {
                    // Sent where nobody listens (a spoofed source answered).
                    continue;
                }
                let arrive = self.now + self.plan.latency;
                if self.calm {
                    self.put_on_wire(arrive, other, buf);
                    continue;
                }
                if self.d.chance(self.plan.loss) {
                    self.dropped += 1;
                    continue;
                }
                let extra = if self.d.chance(self.plan.reorder) {
                    self.plan.latency * self.d.range(1, 300) / 100
                } else {
                    Duration::ZERO
                };
                if self.d.chance(self.plan.dup) {
                    let later = self.plan.latency * self.d.range(0, 300) / 100;
                    self.put_on_wire(arrive + later, other, buf.clone());
                }
                self.put_on_wire(arrive + extra, other, buf);
            }
        }
        self.drain_events();
    }

    fn drain_events(&mut self) {
        for side in [A, B] {
            while let Some((id, e)) = self.eps[side].poll_event() {
                self.on_event(side, id, e);
            }
        }
    }

    fn on_event(&mut self, side: usize, id: AssocId, e: Event) {
        self.log(|| format!("{} {id:?} event {e:?}", NAMES[side]));
        if self.squat_event(side, id, &e) {
            return;
        }
        match e {
            Event::Connected if self.current[side] != Some(id) => {
                self.current[side] = Some(id);
                self.epoch[side] += 1;
            }
            Event::Restarted => {
                self.check_restart(side, id);
                *self.restarts.entry((side, id)).or_default() += 1;
                if self.current[side] == Some(id) {
                    self.epoch[side] += 1;
                }
            }
            Event::Closed(ref r) => {
                // A crashed peer's endpoint may abort the other side's
                // association (8.4 rule 8) before its INIT restarts it.
                if !self.plan.inject
                    && !self.plan.chaos
                    && !self.plan.restart
                    && self.plan.loss == 0
                    && self
                        .cfgs
                        .iter()
                        // An INIT tried once or twice, with an RTO below the
                        // round trip, may time out on a lossless path.
                        .all(|c| c.assoc_max_retrans >= 5 && c.max_init_retransmits >= 5)
                {
                    self.fail(format!(
                        "no injection, no abort, no loss: {} {id:?} closed: {r:?}",
                        NAMES[side]
                    ));
                }
                self.tally.closes += 1;
                self.closed_any = true;
                if self.current[side] == Some(id) {
                    self.current[side] = None;
                }
            }
            Event::MessageAbandoned { id: mid } => {
                self.abandoned.insert((side, id, mid));
            }
            Event::MessageAcked { id: mid, .. } | Event::SendFailed { id: mid } => {
                let acked = matches!(e, Event::MessageAcked { .. });
                if !self.msg_ids.contains_key(&(side, id, mid)) {
                    self.fail(format!(
                        "{} {id:?}: {e:?} for a message never sent",
                        NAMES[side]
                    ));
                }
                if !acked
                    && self.plan.restart
                    && let Some(&seq) = self.msg_ids.get(&(side, id, mid))
                {
                    self.exempt.insert((side, seq));
                }
                if let Some(before) = self.terminal.insert((side, id, mid), acked) {
                    self.fail(format!(
                        "{} {id:?}: {e:?} after {} for the same message",
                        NAMES[side],
                        if before { "MessageAcked" } else { "SendFailed" }
                    ));
                }
            }
            _ => {}
        }
    }

    /// The next time anything is due: a packet arrives or a timer fires.
    fn next_time(&self) -> Option<Time> {
        [
            self.wire.peek().map(|Reverse((t, ..))| *t),
            self.eps[A].poll_timeout(),
            self.eps[B].poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Fires the timers due now, sends what follows, and checks that no
    /// deadline is left at or before now.
    fn settle(&mut self) {
        for side in [A, B] {
            self.eps[side].handle_timeout(self.now);
        }
        self.flush();
        for side in [A, B] {
            if let Some(t) = self.eps[side].poll_timeout()
                && t <= self.now
            {
                self.fail(format!(
                    "{}: poll_timeout() = {t} is not after now = {} once handle_timeout(now) ran \
                     and transmits and events were drained",
                    NAMES[side], self.now
                ));
            }
        }
        self.check_memory();
        self.read(false);
        self.flush();
    }

    /// Delivers every packet due by `now`.
    fn deliver_due(&mut self) {
        while let Some(Reverse((at, ..))) = self.wire.peek() {
            if *at > self.now {
                break;
            }
            let Some(Reverse((_, _, to, bytes))) = self.wire.pop() else {
                break;
            };
            let from = self.addrs[1 - to];
            self.log(|| format!("{} gets {}", NAMES[to], describe(&bytes)));
            self.eps[to].handle_datagram(self.now, from, &bytes);
        }
    }

    /// Moves the clock to `target`, handling every arrival and timer on the way.
    fn advance_to(&mut self, target: Time) {
        for _ in 0..5_000 {
            match self.next_time() {
                Some(t) if t <= target => {
                    self.now = self.now.max(t);
                    self.deliver_due();
                    self.settle();
                }
                _ => break,
            }
        }
        self.now = self.now.max(target);
        self.settle();
    }

    /// Moves to the next arrival or deadline.
    fn advance_next(&mut self) {
        let t = self
            .next_time()
            .unwrap_or(self.now + Duration::from_millis(100));
        self.now = self.now.max(t);
        self.deliver_due();
        self.settle();
    }

    // ----- invariants -----

    fn check_memory(&mut self) {
        for side in [A, B] {
            let ids: Vec<AssocId> = self.eps[side].association_ids().collect();
            for id in ids {
                let Some(a) = self.eps[side].association(id) else {
                    continue;
                };
                let (rh, sh) = (a.receive_held(), a.send_held());
                let (rb, sb) = (a.config().receive_buffer as usize, a.config().send_buffer);
                if rh > rb + NEXT_TSN_ALLOWANCE {
                    self.fail(format!(
                        "{} {id:?}: receive_held() = {rh} > receive_buffer {rb} + \
                         NEXT_TSN_ALLOWANCE {NEXT_TSN_ALLOWANCE}",
                        NAMES[side]
                    ));
                }
                if sh > sb {
                    self.fail(format!(
                        "{} {id:?}: send_held() = {sh} > send_buffer {sb}",
                        NAMES[side]
                    ));
                }
            }
        }
    }

    /// Reads what the application may read: everything on an eager side, or
    /// everything when `all`.
    fn read(&mut self, all: bool) {
        for side in [A, B] {
            if !all && !self.plan.eager_read[side] {
                continue;
            }
            self.read_side(side, usize::MAX);
        }
    }

    fn read_side(&mut self, side: usize, max: usize) {
        let ids: Vec<AssocId> = self.eps[side].association_ids().collect();
        let mut n = 0;
        for id in ids {
            while n < max {
                let Some(m) = self.eps[side].association(id).and_then(|a| a.recv()) else {
                    break;
                };
                n += 1;
                self.check_delivery(side, id, &m);
            }
        }
    }

    /// A message `side` received: genuine and new, in order, or injected.
    fn check_delivery(&mut self, side: usize, id: AssocId, m: &IncomingMessage) {
        self.tally.delivered += 1;
        self.log(|| {
            format!(
                "{} {id:?} reads {} bytes on stream {} ssn {}{}",
                NAMES[side],
                m.payload.len(),
                m.stream_id,
                m.ssn,
                if m.unordered { " unordered" } else { "" }
            )
        });
        let p = &m.payload[..];
        if p.contains(&generate::INJECTED) {
            self.tally.tainted += 1;
            return;
        }
        let show = || String::from_utf8_lossy(&p[..p.len().min(48)]).into_owned();
        let Some((from, epoch, seq, stream, unordered, len)) = parse_genuine(p) else {
            self.fail(format!(
                "{} {id:?} received {} bytes the peer never sent: {:?}",
                NAMES[side],
                p.len(),
                show()
            ));
        };
        let expected = genuine_payload(from, epoch, seq, stream, unordered, len);
        let sent = self.sent.get(&(from, seq)).copied();
        let ok = from == 1 - side
            && p == &expected[..]
            && sent.is_some_and(|s| s.epoch == epoch && s.stream == stream)
            && m.stream_id == stream
            && m.unordered == unordered;
        if !ok {
            self.fail(format!(
                "{} {id:?} received a message that differs from what was sent: \
                 stream {} unordered {} len {} header {:?}; sent: {sent:?}",
                NAMES[side],
                m.stream_id,
                m.unordered,
                p.len(),
                show()
            ));
        }
        let instance = (
            side,
            id,
            self.restarts.get(&(side, id)).copied().unwrap_or(0),
        );
        self.received.insert((from, seq));
        if !self.delivered.insert((instance, from, seq)) {
            self.fail(format!(
                "{} {id:?} received message {} (seq {seq}) twice",
                NAMES[side],
                show()
            ));
        }
        if !unordered {
            let key = (instance, from, epoch, stream);
            if let Some(&last) = self.last_ordered.get(&key)
                && last > seq
            {
                self.fail(format!(
                    "{} {id:?} received ordered message seq {seq} after seq {last} on stream \
                     {stream}",
                    NAMES[side]
                ));
            }
            self.last_ordered.insert(key, seq);
        }
    }

    // ----- the application -----

    fn send(&mut self, side: usize) {
        let Some(id) = self.current[side] else {
            return;
        };
        let Some(streams) = self.eps[side].association(id).map(|a| a.outbound_streams()) else {
            return;
        };
        let stream = if self.d.chance(12) {
            self.d.below(u32::from(streams) + 3) as u16
        } else {
            self.d.below(u32::from(streams.min(6))) as u16
        };
        let unordered = self.d.chance(64);
        // A message larger than the peer's limit makes it abort: only in
        // chaos cases, now and then.
        let mut max = self.cfgs[side].max_message_size;
        if !(self.plan.chaos && self.d.chance(8)) {
            // What the peer's buffer can hold whole, cut at the smaller MTU.
            let peer = Config {
                mtu: self.cfgs[0].mtu.min(self.cfgs[1].mtu),
                ..self.cfgs[1 - side].clone()
            };
            max = max.min(peer.largest_message_received());
        }
        let len = match self.d.below(16) {
            0..=7 => self.d.range_usize(1, 64),
            8..=11 => self.d.range_usize(64, 600),
            12..=14 => self.d.range_usize(600, 3000),
            _ => self.d.range_usize(3000, 40_000),
        }
        .min(max);
        let (epoch, seq) = (self.epoch[side], self.next_seq[side]);
        let payload = genuine_payload(side, epoch, seq, stream, unordered, len);
        let msg = OutgoingMessage {
            stream_id: stream,
            ppid: seq as u32,
            unordered,
            immediate_sack: self.d.chance(32),
            reliability: self.reliability(),
            payload: payload.into(),
        };
        let now = self.now;
        let Some(assoc) = self.eps[side].association(id) else {
            return;
        };
        let result = assoc.send(now, msg);
        self.log(|| {
            format!(
                "{} send seq {seq} stream {stream} len {len}: {result:?}",
                NAMES[side]
            )
        });
        if let Ok(mid) = result {
            self.next_seq[side] += 1;
            self.sent.insert(
                (side, seq),
                Sent {
                    epoch,
                    stream,
                    unordered,
                },
            );
            self.msg_ids.insert((side, id, mid), seq);
        }
    }

    /// A message's partial reliability policy (RFC 7496): in a reset world
    /// a random lifetime or retransmission limit at times, otherwise none.
    fn reliability(&mut self) -> brisk_proto::Reliability {
        use brisk_proto::Reliability as R;
        if !self.plan.reset_world {
            return R::Reliable;
        }
        match self.d.below(4) {
            0 => R::Lifetime(Duration::from_millis(u64::from(self.d.range(1, 3000)))),
            1 => R::MaxRetransmits(self.d.below(4)),
            _ => R::Reliable,
        }
    }

    /// A connects (again) when it has no association.
    fn reconnect(&mut self) {
        if self.current[A].is_some() {
            return;
        }
        let cfg = self.cfgs[A].clone();
        if let Ok(id) = self.eps[A].connect(self.now, self.addrs[B], cfg) {
            self.log(|| format!("A connects: {id:?}"));
            self.current[A] = Some(id);
            self.epoch[A] += 1;
        }
    }

    // ----- injection -----

    /// What B would be aimed at with a packet that pretends to come from A
    /// (for `to` = B), or the other way round.
    fn aim(&self, to: usize) -> generate::Aim {
        let peer = &self.seen[1 - to];
        let own = &self.seen[to];
        generate::Aim {
            tag: peer.tag.unwrap_or(0),
            peer_tag: own.tag.unwrap_or(0),
            peer_next_tsn: peer.next_tsn,
            own_next_tsn: own.next_tsn,
            cum_ack: peer.cum_ack,
            streams: self.cfgs[A]
                .outbound_streams
                .max(self.cfgs[B].outbound_streams),
            cookie: peer.cookie.clone().or_else(|| own.cookie.clone()),
            hb_info: own.hb_info.clone(),
            own_packet: own
                .last_data_packet
                .clone()
                .or_else(|| own.pool.back().cloned()),
            src_port: PORT,
            dst_port: PORT,
        }
    }

    /// Where an injected packet claims to come from: mostly the real peer.
    fn spoofed_from(&mut self, to: usize) -> SocketAddr {
        let peer = self.addrs[1 - to];
        match self.d.below(32) {
            0 => SocketAddr::new(peer.ip(), self.d.u16()),
            1 => "10.0.0.9:9899".parse().expect("address"),
            _ => peer,
        }
    }

    fn inject(&mut self, to: usize, bytes: &[u8]) {
        self.disturbed = true;
        self.tally.injected += 1;
        let from = self.spoofed_from(to);
        self.log(|| {
            format!(
                "inject to {} from {from}: {:02x?}",
                NAMES[to],
                &bytes[..bytes.len().min(64)]
            )
        });
        self.eps[to].handle_datagram(self.now, from, bytes);
        self.settle();
    }

    fn inject_mutant(&mut self, to: usize) {
        let from = 1 - to;
        // Mostly a packet of the direction it is injected in.
        let dir = if self.d.chance(224) { from } else { to };
        let seen = &self.seen[dir];
        let firsts: Vec<&Vec<u8>> = seen.firsts.values().collect();
        let total = seen.pool.len() + firsts.len();
        if total == 0 {
            return;
        }
        let i = self.d.index(total);
        let base = if i < seen.pool.len() {
            seen.pool[i].clone()
        } else {
            firsts[i - seen.pool.len()].clone()
        };
        let others: Vec<&[u8]> = self.seen[A]
            .pool
            .iter()
            .chain(self.seen[B].pool.iter())
            .map(Vec::as_slice)
            .collect();
        let tags: Vec<u32> = self.seen.iter().filter_map(|s| s.tag).collect();
        let material = mutate::Material {
            others: &others,
            tags: &tags,
        };
        let pkt = mutate::mutant(&mut self.d, &base, &material);
        self.inject(to, &pkt);
    }

    fn inject_generated(&mut self, to: usize) {
        let aim = self.aim(to);
        let mut pkt = generate::packet(&mut self.d, &aim);
        if self.d.chance(24) {
            // And mutated on top.
            let tags = [aim.tag, aim.peer_tag];
            let material = mutate::Material {
                others: &[],
                tags: &tags,
            };
            pkt = mutate::mutant(&mut self.d, &pkt, &material);
        }
        self.inject(to, &pkt);
    }

    /// An old real packet delivered again, unchanged, as a network may.
    fn replay(&mut self, to: usize) {
        let seen = &self.seen[1 - to];
        if seen.pool.is_empty() {
            return;
        }
        let pkt = seen.pool[self.d.index(seen.pool.len())].clone();
        self.log(|| format!("replay an old packet to {}", NAMES[to]));
        let from = self.addrs[1 - to];
        self.eps[to].handle_datagram(self.now, from, &pkt);
        self.settle();
    }

    // ----- the interpreter -----

    /// A connects to B and the world runs until both are up (or the
    /// handshake gives up).
    pub fn handshake(&mut self) {
        self.squat_first();
        self.reconnect();
        self.settle();
        for _ in 0..2_000 {
            if self.current[A].is_none() {
                break;
            }
            let up = |w: &Self, side: usize| {
                w.current[side].is_some_and(|id| w.eps[side].association_ids().any(|x| x == id))
            };
            if up(self, B)
                && self.seen[B].tag.is_some()
                && self.seen[A].tag.is_some()
                && self.a_state() == Some(State::Established)
            {
                break;
            }
            if self.next_time().is_none() {
                break;
            }
            self.advance_next();
        }
    }

    fn a_state(&mut self) -> Option<State> {
        let id = self.current[A]?;
        self.eps[A].association(id).map(|a| a.state())
    }

    /// One step, its kind read from the source.
    pub fn step(&mut self) {
        self.tally.steps += 1;
        let inject = self.plan.inject;
        let chaos = self.plan.chaos;
        let weights = [
            30,                                             // 0 send from A
            12,                                             // 1 send from B
            4,                                              // 2 a burst of sends
            30,                                             // 3 to the next event
            10,                                             // 4 a short while
            3,                                              // 5 a long while
            6,                                              // 6 the application reads
            if inject { 14 } else { 0 },                    // 7 mutated captured packet
            if inject { 14 } else { 0 },                    // 8 generated packet
            3,                                              // 9 an old packet replayed
            if chaos { 1 } else { 0 },                      // 10 shutdown or abort
            if self.current[A].is_none() { 12 } else { 1 }, // 11 reconnect if down
            if self.plan.reset_world { 4 } else { 0 },      // 12 reconfigure streams
            if self.plan.squat { 2 } else { 0 },            // 13 the squatter world
            if self.plan.restart { 2 } else { 0 },          // 14 a side crashes, restarts
            if self.plan.offpath { 4 } else { 0 },          // 15 an off-path stranger
        ];
        match self.d.weighted(&weights) {
            0 => self.send(A),
            1 => self.send(B),
            2 => {
                let side = if self.d.chance(180) { A } else { B };
                for _ in 0..self.d.range(2, 24) {
                    self.send(side);
                }
            }
            3 => self.advance_next(),
            4 => {
                let t = self.now + Duration::from_micros(u64::from(self.d.range(0, 50_000)));
                self.advance_to(t);
            }
            5 => {
                let ms = *self.d.pick(&[200, 1000, 3000, 10_000, 31_000, 65_000]);
                let t = self.now + Duration::from_millis(ms);
                self.advance_to(t);
            }
            6 => {
                let side = if self.d.bool() { A } else { B };
                let max = self.d.range_usize(1, 64);
                self.read_side(side, max);
            }
            7 => {
                let to = if self.d.bool() { A } else { B };
                self.inject_mutant(to);
            }
            8 => {
                let to = if self.d.bool() { A } else { B };
                self.inject_generated(to);
            }
            9 => {
                let to = if self.d.bool() { A } else { B };
                self.replay(to);
            }
            10 => {
                let side = if self.d.bool() { A } else { B };
                if let Some(id) = self.current[side] {
                    self.disturbed = true;
                    let now = self.now;
                    let abort = self.d.chance(96);
                    self.log(|| {
                        format!(
                            "{} {}",
                            NAMES[side],
                            if abort { "aborts" } else { "shuts down" }
                        )
                    });
                    if let Some(a) = self.eps[side].association(id) {
                        if abort {
                            a.abort(now, "fuzz");
                        } else {
                            a.shutdown(now);
                        }
                    }
                }
            }
            11 => self.reconnect(),
            12 => self.reconfigure(),
            13 => self.squat_step(),
            14 => self.restart_peer(),
            _ => {
                let to = if self.d.bool() { A } else { B };
                self.inject_offpath(to);
            }
        }
        self.settle();
    }

    /// A side crashes and comes back: its application read what was ready,
    /// then a fresh endpoint (a new seed, the same address, port and
    /// configuration) takes its place and connects again, which the other
    /// side sees as a restart (RFC 9260 5.2.2, 5.2.4 A). What the old
    /// endpoint held is gone: its messages not yet received are not owed.
    fn restart_peer(&mut self) {
        let side = if self.d.bool() { A } else { B };
        let seed = self.d.u32();
        self.read_side(side, usize::MAX);
        // Lost with the crash: what this side sent and the peer has not
        // received, and what the peer sent that this side has not handed to
        // its application, acknowledged or not (an ordered message may wait
        // behind a hole, or for a FORWARD TSN, after its own TSNs were
        // acknowledged: RFC 9260 6.6; an acknowledgement is not a delivery).
        let lost: Vec<(usize, u64)> = self
            .sent
            .keys()
            .filter(|&&k| !self.received.contains(&k))
            .copied()
            .collect();
        self.exempt.extend(lost);
        // The new endpoint numbers its associations and messages afresh.
        self.msg_ids.retain(|&(s, ..), _| s != side);
        self.terminal.retain(|&(s, ..), _| s != side);
        self.restarts.retain(|&(s, _), _| s != side);
        self.delivered.retain(|&((s, ..), ..)| s != side);
        self.last_ordered.retain(|&((s, ..), ..), _| s != side);
        let mut key = [side as u8 + 0x41; 32];
        key[..4].copy_from_slice(&seed.to_le_bytes());
        // The same addresses (a multi-homed side stays multi-homed).
        let config = self.eps[side].config().clone();
        self.eps[side] = Endpoint::new(config, key);
        self.squat_side_restarted(side);
        self.seen[side] = Seen::default();
        self.tally.peer_restarts += 1;
        let cfg = self.cfgs[side].clone();
        let result = self.eps[side].connect(self.now, self.addrs[1 - side], cfg);
        self.log(|| format!("{} crashes and connects again: {result:?}", NAMES[side]));
        self.current[side] = result.ok();
        self.epoch[side] += 1;
    }

    /// RFC 9260 5.2.4 A: the association `id` of `side` restarted; each
    /// message of its old life was acknowledged, failed, abandoned (partial
    /// reliability) or delivered.
    fn check_restart(&mut self, side: usize, id: AssocId) {
        if !self.plan.restart || self.plan.inject || self.plan.chaos {
            return;
        }
        for (&(s, i, mid), &seq) in &self.msg_ids {
            if s == side
                && i == id
                && !self.terminal.contains_key(&(s, i, mid))
                && !self.abandoned.contains(&(s, i, mid))
                && !self.received.contains(&(s, seq))
            {
                self.fail(format!(
                    "{} {id:?} restarted: message seq {seq} ({mid:?}) of its old life was \
                     neither acknowledged, failed nor delivered",
                    NAMES[side]
                ));
            }
        }
    }

    /// New DATA chunks the current associations received, both sides.
    fn new_chunks_received(&self) -> u64 {
        [A, B]
            .iter()
            .filter_map(|&s| {
                let id = self.current[s]?;
                let st = self.eps[s].association_ref(id)?.stats();
                Some(
                    st.data_chunks_received
                        .saturating_sub(st.duplicate_tsns_received),
                )
            })
            .sum()
    }

    /// Peer-restart worlds without injection nor abort: every message
    /// acknowledged was delivered, unless its receiver crashed before it
    /// could hand it over (a crashed side read what it had first).
    fn check_acked_delivered(&self) {
        if !self.plan.restart || self.disturbed {
            return;
        }
        for (&(side, id, mid), &seq) in &self.msg_ids {
            if self.terminal.get(&(side, id, mid)) == Some(&true)
                && !self.received.contains(&(side, seq))
                && !self.exempt.contains(&(side, seq))
            {
                self.fail(format!(
                    "{} {id:?}: message seq {seq} ({mid:?}) was acknowledged and never delivered",
                    NAMES[side]
                ));
            }
        }
    }

    /// The application of one side reconfigures its streams (RFC 6525):
    /// resets outgoing or incoming streams, adds streams, or resets SSNs
    /// and TSNs. Delivery is checked as ever: exactly once, in order per
    /// ordered stream.
    fn reconfigure(&mut self) {
        let side = if self.d.bool() { A } else { B };
        let Some(id) = self.current[side] else {
            return;
        };
        let what = self.d.below(8);
        let streams: Vec<u16> = (0..self.d.range(1, 3))
            .map(|_| self.d.below(6) as u16)
            .collect();
        let (out, inc) = (self.d.below(3) as u16, self.d.below(3) as u16);
        let now = self.now;
        let Some(a) = self.eps[side].association(id) else {
            return;
        };
        let result = match what {
            0..=3 => {
                let n = a.outbound_streams();
                let s: Vec<u16> = streams.iter().map(|s| s % n.max(1)).collect();
                a.reset_streams(now, &s).map(|()| format!("reset {s:?}"))
            }
            4 | 5 => a
                .request_incoming_reset(now, &streams)
                .map(|()| format!("incoming reset {streams:?}")),
            6 => a
                .add_streams(now, out, inc)
                .map(|()| format!("add {out} out, {inc} in")),
            _ => a.reset_ssn_tsn(now).map(|()| "SSN/TSN reset".to_owned()),
        };
        self.log(|| format!("{} reconfigures: {result:?}", NAMES[side]));
    }

    /// With no injection, little loss and the default number of INIT and
    /// COOKIE ECHO attempts, the first handshake must complete.
    pub fn check_handshake(&mut self) {
        // Fewer drops than INIT or COOKIE ECHO attempts cannot stop it.
        let easy = !self.plan.inject
            && !self.plan.chaos
            && self.plan.loss <= 26
            && self.cfgs.iter().all(|c| c.max_init_retransmits >= 8)
            && self.dropped < 8;
        let state = self.a_state();
        if easy && state != Some(State::Established) {
            self.fail(format!(
                "no injection, {}/256 loss: the association did not come up (A: {state:?})",
                self.plan.loss,
            ));
        }
    }

    /// The end of a case: the network turns calm and the clock runs until
    /// everything is acknowledged; a case without injection nor abort must
    /// then have delivered every message.
    pub fn finish(&mut self) {
        self.calm = true;
        let limit = self.now + Duration::from_secs(1800);
        // Bounded by virtual time above all: a request answered "In
        // progress" goes again every RTO (RFC 6525 5.2.7), which on a short
        // path takes many steps while a backed-off T3 (up to RTO.Max) waits.
        let mut quiet = false;
        let (mut progress, mut progressed_at) = (self.new_chunks_received(), self.now);
        for _ in 0..200_000 {
            self.read(true);
            quiet = self.wire.is_empty()
                && [A, B].iter().all(|&s| {
                    self.current[s].is_none_or(|id| {
                        self.eps[s]
                            .association(id)
                            .is_none_or(|a| a.all_acked() && !a.reconfig_in_progress())
                    })
                });
            if quiet || self.now > limit {
                break;
            }
            self.advance_next();
            let now_progress = self.new_chunks_received();
            if now_progress != progress {
                (progress, progressed_at) = (now_progress, self.now);
            }
        }
        self.read(true);
        self.check_memory();
        // A world that still moves data at the end of the drain is slow, not
        // stuck (a 128-byte MTU with Max.Burst 1 and a 388 ms SACK delay
        // carries 230 bytes a second: seed 0x1eaa87); it is not judged.
        if !quiet && self.now.since(progressed_at) < Duration::from_secs(60) {
            self.tally.drains_unfinished += 1;
            return;
        }
        self.check_acked_delivered();
        if self.disturbed || self.closed_any {
            return;
        }
        let established = |w: &mut Self, s: usize| {
            w.current[s].and_then(|id| w.eps[s].association(id).map(|a| a.state()))
                == Some(State::Established)
        };
        if !(established(self, A) && established(self, B)) {
            return;
        }
        self.tally.liveness_checked += 1;
        // Partial reliability: an abandoned message may be lost, unless it
        // was acknowledged (an acknowledged message is delivered).
        let abandoned: BTreeSet<(usize, u64)> = self
            .msg_ids
            .iter()
            .filter(|&(k, _)| self.abandoned.contains(k) && self.terminal.get(k) != Some(&true))
            .map(|(&(side, ..), &seq)| (side, seq))
            .collect();
        for (&(side, seq), s) in &self.sent {
            if !self.received.contains(&(side, seq))
                && !self.exempt.contains(&(side, seq))
                && !abandoned.contains(&(side, seq))
            {
                let acked = self
                    .msg_ids
                    .iter()
                    .any(|(k, &q)| k.0 == side && q == seq && self.terminal.get(k) == Some(&true));
                self.fail(format!(
                    "no injection, no abort, calm network: message seq {seq} from {} \
                     (stream {}, unordered {}, MessageAcked {acked}) was never delivered",
                    NAMES[side], s.stream, s.unordered
                ));
            }
        }
        for (&(side, id, mid), &seq) in &self.msg_ids {
            let terminal = self.terminal.get(&(side, id, mid));
            if terminal != Some(&true)
                && !(self.plan.restart && terminal == Some(&false))
                && !abandoned.contains(&(side, seq))
            {
                self.fail(format!(
                    "calm network, both associations up: {} message seq {seq} ({mid:?}) \
                     delivered but never MessageAcked",
                    NAMES[side]
                ));
            }
        }
    }
}

/// Runs one case: set up, handshake, up to `max_steps` steps (fewer if the
/// source runs dry), finish. `progress` holds the step number, for a panic's
/// report.
pub fn run_case(
    src: Box<dyn Source + '_>,
    label: String,
    max_steps: u64,
    trace: bool,
    progress: &std::cell::Cell<u64>,
) -> Tally {
    run_case_in(src, label, max_steps, trace, progress, reconfig_mode())
}

/// [`run_case`] in a reset world if `reset_world` (see the module docs).
pub fn run_case_in(
    src: Box<dyn Source + '_>,
    label: String,
    max_steps: u64,
    trace: bool,
    progress: &std::cell::Cell<u64>,
    reset_world: bool,
) -> Tally {
    let mut w = World::new_world(Dice::new(src), label, reset_world);
    w.trace = trace;
    w.log(|| {
        format!(
            "plan {:?}\nconfig A: {:?}\nconfig B: {:?}",
            w.plan, w.cfgs[A], w.cfgs[B]
        )
    });
    w.handshake();
    w.check_handshake();
    while w.tally.steps < max_steps && !w.d.exhausted() {
        progress.set(w.tally.steps + 1);
        w.step();
    }
    w.finish();
    w.tally.clone()
}

/// The cargo-fuzz `stateful` target: the input drives a whole case.
pub fn stateful_case(data: &[u8]) {
    let progress = std::cell::Cell::new(0);
    run_case(
        Box::new(SliceSource::new(data)),
        "fuzz input".into(),
        20_000,
        false,
        &progress,
    );
}

/// A fixed world with an established association and data in flight both
/// ways, for replaying single packets. Deterministic: the same packets every time.
pub fn established() -> World<'static> {
    let mut w = World::new(
        Dice::new(Box::new(XorShift(0x5eed_f00d_cafe_b0b5))),
        "established".into(),
    );
    w.cfgs = [Config::low_latency(), Config::rfc9260()];
    w.cfgs[A].mtu = 300;
    w.plan = Plan {
        latency: Duration::from_millis(10),
        loss: 0,
        dup: 0,
        reorder: 0,
        inject: true,
        chaos: false,
        eager_read: [true, true],
        squat: false,
        restart: false,
        offpath: false,
        reset_world: false,
    };
    w.calm = true;
    for side in [A, B] {
        w.eps[side] = Endpoint::new(
            EndpointConfig {
                port: PORT,
                accept: true,
                accept_config: w.cfgs[side].clone(),
                ..EndpointConfig::default()
            },
            [side as u8 + 7; 32],
        );
    }
    w.handshake();
    for _ in 0..4 {
        w.send(A);
        w.send(B);
    }
    w.advance_to(w.now + Duration::from_millis(15));
    for _ in 0..3 {
        w.send(A);
        w.send(B);
    }
    w.flush();
    w
}

/// Rewrites a packet's verification tag and seals it.
pub fn with_tag(pkt: &[u8], tag: u32) -> Vec<u8> {
    let mut p = pkt.to_vec();
    if p.len() >= 12 {
        p[4..8].copy_from_slice(&tag.to_be_bytes());
    }
    p
}

/// The cargo-fuzz `packet` target: the input, as a packet, into an
/// established association: to B as it is, then to B and to A with the live
/// verification tag, each with a correct CRC32c and with any DATA in it marked
/// as injected. Then the clock runs, checking every invariant.
pub fn packet_case(data: &[u8]) {
    let mut w = established();
    w.disturbed = true;
    let tags = [w.seen[B].tag.unwrap_or(0), w.seen[A].tag.unwrap_or(0)];
    let prepare = |p: &[u8]| {
        let mut p = p.to_vec();
        mutate::mark_data(&mut p);
        mutate::fix_crc(&mut p);
        p
    };
    let as_is = prepare(data);
    let to_b = prepare(&with_tag(data, tags[B]));
    let to_a = prepare(&with_tag(data, tags[A]));
    let from = [w.addrs[A], w.addrs[B]];
    w.eps[B].handle_datagram(w.now, from[A], &as_is);
    w.settle();
    w.eps[B].handle_datagram(w.now, from[A], &to_b);
    w.settle();
    w.eps[A].handle_datagram(w.now, from[B], &to_a);
    w.settle();
    for _ in 0..40 {
        w.advance_next();
    }
    w.advance_to(w.now + Duration::from_secs(5));
}

/// A packet's chunks, briefly, for traces.
pub fn describe(pkt: &[u8]) -> String {
    let Ok(p) = Packet::decode(pkt) else {
        return format!("undecodable {:?}", chunk_types(pkt));
    };
    let parts: Vec<String> = p
        .chunks
        .iter()
        .map(|c| match c {
            Chunk::Data(d) => format!(
                "DATA(tsn {} s{} ssn {} {}{}{} {}B)",
                d.tsn,
                d.stream_id,
                d.ssn,
                if d.flags.beginning { "B" } else { "" },
                if d.flags.ending { "E" } else { "" },
                if d.flags.unordered { "U" } else { "" },
                d.payload.len()
            ),
            Chunk::Sack(s) => format!(
                "SACK(cum {} rwnd {} gaps {:?} dups {})",
                s.cum_tsn_ack,
                s.a_rwnd,
                s.gap_blocks
                    .iter()
                    .map(|g| (g.start, g.end))
                    .collect::<Vec<_>>(),
                s.dup_tsns.len()
            ),
            Chunk::ForwardTsn(f) => format!(
                "FORWARD-TSN(cum {} {:?})",
                f.new_cum_tsn,
                f.streams
                    .iter()
                    .map(|s| (s.stream_id, s.ssn))
                    .collect::<Vec<_>>()
            ),
            other => other.name().to_owned(),
        })
        .collect();
    parts.join(" ")
}

/// Every chunk type in a packet, in order, as far as they can be walked.
pub fn chunk_types(pkt: &[u8]) -> Vec<u8> {
    pkt.get(12..)
        .map(|area| {
            RawChunks::new(area)
                .map_while(Result::ok)
                .map(|c| c.typ)
                .collect()
        })
        .unwrap_or_default()
}

/// The packets of the fixed [`established`] world's handshake and data
/// exchange, and of a shutdown, for a corpus.
pub fn sample_packets() -> Vec<Vec<u8>> {
    let mut w = established();
    for _ in 0..20 {
        w.advance_next();
    }
    let mut out: Vec<Vec<u8>> = Vec::new();
    for side in [A, B] {
        out.extend(w.seen[side].firsts.values().cloned());
        out.extend(w.seen[side].pool.iter().cloned());
    }
    out
}
