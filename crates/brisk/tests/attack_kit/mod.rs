//! Tools for the attack suite (`tests/attacks.rs`): hand-built SCTP packets
//! over plain UDP sockets on loopback, and a hand-made peer that does the
//! four-way handshake itself so that it knows every tag and TSN.
//!
//! Every wait here is bounded in time and every loop in count.

#![allow(dead_code)]

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use brisk::{Association, Config, Endpoint, EndpointConfig, Stats};
use brisk_proto::wire::cause::ErrorCause;
use brisk_proto::wire::chunk::{
    CookieEcho, Data, DataFlags, GapBlock, Heartbeat, Init, Sack, Shutdown,
};
use brisk_proto::wire::{Chunk, CommonHeader, Packet, PacketWriter, seal};
use tokio::net::UdpSocket;
use tokio::time::{Instant, sleep, timeout};

/// The server's SCTP port (`EndpointConfig::default().port`).
pub const SERVER_PORT: u16 = 5000;
/// The SCTP port the hand-made peer uses.
pub const PEER_PORT: u16 = 5000;
/// The longest any single step waits for the server.
pub const STEP: Duration = Duration::from_secs(5);

/// A server association config with short timers, so tests stay quick.
pub fn fast() -> Config {
    Config {
        rto_initial: Duration::from_millis(50),
        rto_min: Duration::from_millis(50),
        rto_max: Duration::from_millis(200),
        ..Config::rfc9260()
    }
}

pub fn any_loopback() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

/// A server endpoint on loopback accepting associations configured by `accept_config`.
pub async fn server(accept_config: Config, seed: u8) -> Endpoint {
    server_with(
        EndpointConfig {
            accept_config,
            ..EndpointConfig::default()
        },
        seed,
    )
    .await
}

pub async fn server_with(cfg: EndpointConfig, seed: u8) -> Endpoint {
    Endpoint::bind_with_seed(any_loopback(), cfg, [seed; 32])
        .await
        .expect("server binds on loopback")
}

/// A brisk endpoint that only connects out.
pub async fn client(seed: u8) -> Endpoint {
    server_with(
        EndpointConfig {
            accept: false,
            ..EndpointConfig::default()
        },
        seed,
    )
    .await
}

/// The next association the server accepts, or `None` within `wait`.
pub async fn accept_within(server: &Endpoint, wait: Duration) -> Option<Association> {
    match timeout(wait, server.accept()).await {
        Ok(Ok(a)) => Some(a),
        Ok(Err(e)) => panic!("accept failed: {e}"),
        Err(_) => None,
    }
}

/// Polls `cond` every 2 ms until it holds or `wait` passes; returns whether it held.
pub async fn eventually(wait: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + wait;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        sleep(Duration::from_millis(2)).await;
    }
}

/// Waits until the server-side association has taken `n` packets in all (or
/// is gone). Fails the test if it does not happen within [`STEP`].
pub async fn await_assoc_packets(assoc: &Association, n: u64) {
    let ok = eventually(STEP, || {
        assoc.stats().is_none_or(|s| s.packets_received >= n)
    })
    .await;
    assert!(
        ok,
        "the server association did not receive {n} packets in {STEP:?} (got {:?}): lost on loopback?",
        assoc.stats().map(|s| s.packets_received)
    );
}

/// Waits until the server endpoint has seen `n` datagrams in all.
pub async fn await_endpoint_packets(server: &Endpoint, n: u64) {
    let ok = eventually(STEP, || server.stats().packets_received >= n).await;
    assert!(
        ok,
        "the server did not receive {n} datagrams in {STEP:?} (got {}): lost on loopback?",
        server.stats().packets_received
    );
}

/// The server association's stats; fails the test if it is gone.
pub fn live_stats(assoc: &Association, what: &str) -> Stats {
    assoc
        .stats()
        .unwrap_or_else(|| panic!("{what}: the server association is gone"))
}

// ---------------------------------------------------------------------------
// Packets

pub fn header(src_port: u16, dst_port: u16, vtag: u32) -> CommonHeader {
    CommonHeader {
        src_port,
        dst_port,
        verification_tag: vtag,
        checksum: 0,
    }
}

/// An SCTP packet of `chunks`, with its CRC32c.
pub fn packet(src_port: u16, dst_port: u16, vtag: u32, chunks: &[Chunk<'_>]) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut w = PacketWriter::new(&mut buf, &header(src_port, dst_port, vtag));
    for c in chunks {
        w.push(c).expect("chunk encodes");
    }
    w.finish().expect("packet seals");
    buf
}

/// An SCTP packet whose chunk area is given as raw bytes, with its CRC32c.
pub fn raw_packet(src_port: u16, dst_port: u16, vtag: u32, chunk_area: &[u8]) -> Vec<u8> {
    let mut buf = Vec::with_capacity(12 + chunk_area.len());
    header(src_port, dst_port, vtag).encode(&mut buf);
    buf.extend_from_slice(chunk_area);
    seal(&mut buf).expect("packet seals");
    buf
}

/// Bytes from a hex string; whitespace is ignored.
pub fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    digits
        .chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).expect("ascii"), 16).expect("hex"))
        .collect()
}

pub fn init_chunk(tag: u32, initial_tsn: u32, a_rwnd: u32, os: u16, mis: u16) -> Chunk<'static> {
    Chunk::Init(Init {
        initiate_tag: tag,
        a_rwnd,
        outbound_streams: os,
        inbound_streams: mis,
        initial_tsn,
        params: vec![],
    })
}

pub fn data_chunk(
    tsn: u32,
    stream_id: u16,
    ssn: u16,
    flags: DataFlags,
    payload: impl Into<Vec<u8>>,
) -> Chunk<'static> {
    Chunk::Data(Data {
        flags,
        tsn,
        stream_id,
        ssn,
        ppid: 0,
        payload: Cow::Owned(payload.into()),
    })
}

/// A middle fragment: neither B nor E.
pub const MIDDLE: DataFlags = DataFlags {
    immediate: false,
    unordered: false,
    beginning: false,
    ending: false,
};

/// A first fragment: B without E.
pub const FIRST: DataFlags = DataFlags {
    immediate: false,
    unordered: false,
    beginning: true,
    ending: false,
};

pub fn sack_chunk(cum_tsn_ack: u32, a_rwnd: u32, gaps: &[(u16, u16)]) -> Chunk<'static> {
    Chunk::Sack(Sack {
        cum_tsn_ack,
        a_rwnd,
        gap_blocks: gaps
            .iter()
            .map(|&(start, end)| GapBlock { start, end })
            .collect(),
        dup_tsns: vec![],
    })
}

pub fn cookie_echo_chunk(cookie: &[u8]) -> Chunk<'static> {
    Chunk::CookieEcho(CookieEcho {
        cookie: Cow::Owned(cookie.to_vec()),
    })
}

pub fn heartbeat_chunk(info: &[u8]) -> Chunk<'static> {
    Chunk::Heartbeat(Heartbeat::new(info.to_vec()))
}

pub fn shutdown_chunk(cum_tsn_ack: u32) -> Chunk<'static> {
    Chunk::Shutdown(Shutdown { cum_tsn_ack })
}

/// Gap ack blocks (offsets from `cum`) covering every TSN in `received`.
pub fn gap_blocks(cum: u32, received: &BTreeSet<u32>) -> Vec<(u16, u16)> {
    let mut offsets: Vec<u32> = received
        .iter()
        .map(|t| t.wrapping_sub(cum))
        .filter(|&o| (1..=u32::from(u16::MAX)).contains(&o))
        .collect();
    offsets.sort_unstable();
    let mut blocks: Vec<(u16, u16)> = Vec::new();
    for o in offsets {
        let o = u16::try_from(o).expect("offset fits");
        match blocks.last_mut() {
            Some((_, end)) if u32::from(*end) + 1 == u32::from(o) => *end = o,
            _ => blocks.push((o, o)),
        }
    }
    blocks
}

/// Whether serial number `a` is at or above `b` (RFC 9260 1.6).
pub fn serial_ge(a: u32, b: u32) -> bool {
    a == b || a.wrapping_sub(b) < (1 << 31)
}

// ---------------------------------------------------------------------------
// Received datagrams

/// One datagram the attacker received.
#[derive(Debug, Clone)]
pub struct Datagram {
    pub from: SocketAddr,
    pub bytes: Vec<u8>,
}

impl Datagram {
    /// The packet, decoded with its checksum verified; fails the test if the
    /// server sent something that does not decode.
    pub fn packet(&self) -> Packet<'_> {
        Packet::decode(&self.bytes)
            .unwrap_or_else(|e| panic!("the server sent an undecodable packet: {e}"))
    }

    pub fn vtag(&self) -> u32 {
        self.packet().header.verification_tag
    }

    pub fn chunks(&self) -> Vec<Chunk<'_>> {
        self.packet().chunks
    }

    pub fn any(&self, f: impl Fn(&Chunk<'_>) -> bool) -> bool {
        self.chunks().iter().any(f)
    }

    pub fn count(&self, f: impl Fn(&Chunk<'_>) -> bool) -> usize {
        self.chunks().iter().filter(|c| f(c)).count()
    }

    /// The SACK chunks in the packet.
    pub fn sacks(&self) -> Vec<Sack> {
        self.chunks()
            .into_iter()
            .filter_map(|c| match c {
                Chunk::Sack(s) => Some(s),
                _ => None,
            })
            .collect()
    }

    /// (TSN, payload) of each DATA chunk in the packet.
    pub fn data(&self) -> Vec<(u32, Vec<u8>)> {
        self.chunks()
            .into_iter()
            .filter_map(|c| match c {
                Chunk::Data(d) => Some((d.tsn, d.payload.into_owned())),
                _ => None,
            })
            .collect()
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.chunks().iter().map(Chunk::name).collect()
    }
}

pub fn is_abort(c: &Chunk<'_>) -> bool {
    matches!(c, Chunk::Abort(_))
}

pub fn is_sack(c: &Chunk<'_>) -> bool {
    matches!(c, Chunk::Sack(_))
}

/// An ERROR chunk carrying a Stale Cookie cause.
pub fn is_stale_cookie_error(c: &Chunk<'_>) -> bool {
    matches!(c, Chunk::Error(e) if e.causes.iter().any(|c| matches!(c, ErrorCause::StaleCookie { .. })))
}

/// Invalid Stream Identifier causes in an ERROR chunk (0 for other chunks).
pub fn invalid_stream_causes(c: &Chunk<'_>) -> usize {
    match c {
        Chunk::Error(e) => e
            .causes
            .iter()
            .filter(|c| matches!(c, ErrorCause::InvalidStreamIdentifier { .. }))
            .count(),
        _ => 0,
    }
}

// ---------------------------------------------------------------------------
// The attacker's socket

/// A plain UDP socket on loopback that speaks SCTP by hand to one server.
#[derive(Debug)]
pub struct Attacker {
    pub sock: UdpSocket,
    pub server: SocketAddr,
    /// The SCTP source port of the packets it sends.
    pub sctp_port: u16,
}

/// What an INIT ACK told us.
#[derive(Debug, Clone)]
pub struct InitAckInfo {
    /// The server's Initiate Tag: the verification tag our packets carry.
    pub server_tag: u32,
    pub server_initial_tsn: u32,
    pub a_rwnd: u32,
    pub outbound_streams: u16,
    pub inbound_streams: u16,
    pub cookie: Vec<u8>,
    /// The verification tag of the INIT ACK packet (our Initiate Tag).
    pub packet_tag: u32,
}

impl Attacker {
    pub async fn bind(server: SocketAddr, sctp_port: u16) -> Self {
        let sock = UdpSocket::bind(any_loopback())
            .await
            .expect("attacker binds on loopback");
        Self {
            sock,
            server,
            sctp_port,
        }
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.sock.local_addr().expect("local address")
    }

    pub async fn send(&self, bytes: &[u8]) {
        self.sock
            .send_to(bytes, self.server)
            .await
            .expect("send on loopback");
    }

    /// Sends `chunks` in one packet with verification tag `vtag`.
    pub async fn send_chunks(&self, vtag: u32, chunks: &[Chunk<'_>]) {
        self.send(&packet(self.sctp_port, SERVER_PORT, vtag, chunks))
            .await;
    }

    /// The next datagram within `wait`.
    pub async fn recv(&self, wait: Duration) -> Option<Datagram> {
        let mut buf = vec![0u8; 65_536];
        match timeout(wait, self.sock.recv_from(&mut buf)).await {
            Ok(Ok((n, from))) => {
                buf.truncate(n);
                Some(Datagram { from, bytes: buf })
            }
            Ok(Err(e)) => panic!("recv on loopback failed: {e}"),
            Err(_) => None,
        }
    }

    /// Every datagram already waiting, without blocking (at most 10,000).
    pub fn drain(&self) -> Vec<Datagram> {
        let mut out = Vec::new();
        let mut buf = vec![0u8; 65_536];
        for _ in 0..10_000 {
            match self.sock.try_recv_from(&mut buf) {
                Ok((n, from)) => out.push(Datagram {
                    from,
                    bytes: buf[..n].to_vec(),
                }),
                Err(_) => break,
            }
        }
        out
    }

    /// Datagrams until none arrives for `quiet`, or `total` has passed (at most 10,000).
    pub async fn collect(&self, quiet: Duration, total: Duration) -> Vec<Datagram> {
        let end = Instant::now() + total;
        let mut out = Vec::new();
        while out.len() < 10_000 {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match self.recv(quiet.min(left)).await {
                Some(d) => out.push(d),
                None => break,
            }
        }
        out
    }

    /// Datagrams until one satisfies `done` (included) or `total` passes (at most 10,000).
    pub async fn collect_until(
        &self,
        total: Duration,
        mut done: impl FnMut(&Datagram) -> bool,
    ) -> (Vec<Datagram>, bool) {
        let end = Instant::now() + total;
        let mut out = Vec::new();
        while out.len() < 10_000 {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            let Some(d) = self.recv(left).await else {
                break;
            };
            let hit = done(&d);
            out.push(d);
            if hit {
                return (out, true);
            }
        }
        (out, false)
    }

    /// Sends INIT (retransmitting a few times) and returns the INIT ACK.
    pub async fn init(
        &self,
        tag: u32,
        initial_tsn: u32,
        a_rwnd: u32,
        os: u16,
        mis: u16,
    ) -> InitAckInfo {
        let init = packet(
            self.sctp_port,
            SERVER_PORT,
            0,
            &[init_chunk(tag, initial_tsn, a_rwnd, os, mis)],
        );
        let d = self
            .send_until(&init, "INIT", |c| matches!(c, Chunk::InitAck(_)))
            .await;
        let p = d.packet();
        let Some(Chunk::InitAck(ack)) = p.chunks.first() else {
            panic!("INIT ACK must stand alone: {:?}", d.names());
        };
        InitAckInfo {
            server_tag: ack.initiate_tag,
            server_initial_tsn: ack.initial_tsn,
            a_rwnd: ack.a_rwnd,
            outbound_streams: ack.outbound_streams,
            inbound_streams: ack.inbound_streams,
            cookie: ack
                .state_cookie()
                .expect("INIT ACK carries a state cookie")
                .to_vec(),
            packet_tag: p.header.verification_tag,
        }
    }

    /// Sends `packet` until a reply carries a chunk `wanted` says yes to (5
    /// tries, 500 ms each, as a retransmitting peer would); returns that reply.
    pub async fn send_until(
        &self,
        packet: &[u8],
        what: &str,
        wanted: impl Fn(&Chunk<'_>) -> bool + Copy,
    ) -> Datagram {
        for _ in 0..5 {
            self.send(packet).await;
            let (mut got, ok) = self
                .collect_until(Duration::from_millis(500), |d| d.any(wanted))
                .await;
            if ok && let Some(d) = got.pop() {
                return d;
            }
        }
        panic!("no answer after 5 tries of {what}");
    }
}

// ---------------------------------------------------------------------------
// The hand-made peer

/// What the hand-made peer offers in its INIT.
#[derive(Debug, Clone, Copy)]
pub struct PeerParams {
    pub a_rwnd: u32,
    pub outbound_streams: u16,
    pub inbound_streams: u16,
}

impl Default for PeerParams {
    fn default() -> Self {
        Self {
            a_rwnd: 1 << 20,
            outbound_streams: 16,
            inbound_streams: 16,
        }
    }
}

/// An association with the server that the test drives chunk by chunk.
#[derive(Debug)]
pub struct Peer {
    pub att: Attacker,
    /// Our Initiate Tag: the server's packets to us carry it.
    pub my_tag: u32,
    /// The server's Initiate Tag: our packets must carry it.
    pub server_tag: u32,
    pub my_initial_tsn: u32,
    /// The TSN our next DATA chunk takes.
    pub next_tsn: u32,
    pub server_initial_tsn: u32,
    pub cookie: Vec<u8>,
    pub server_a_rwnd: u32,
    next_ssn: [u16; 16],
}

impl Peer {
    pub async fn connect(server: SocketAddr) -> Self {
        Self::connect_with(server, PeerParams::default()).await
    }

    /// The four-way handshake, by hand: INIT, INIT ACK, COOKIE ECHO, COOKIE ACK.
    pub async fn connect_with(server: SocketAddr, params: PeerParams) -> Self {
        let att = Attacker::bind(server, PEER_PORT).await;
        let my_tag = rand::random::<u32>() | 1;
        let my_initial_tsn = rand::random::<u32>();
        let info = att
            .init(
                my_tag,
                my_initial_tsn,
                params.a_rwnd,
                params.outbound_streams,
                params.inbound_streams,
            )
            .await;
        assert_eq!(info.packet_tag, my_tag, "INIT ACK carries our initiate tag");
        let echo = packet(
            PEER_PORT,
            SERVER_PORT,
            info.server_tag,
            &[cookie_echo_chunk(&info.cookie)],
        );
        att.send_until(&echo, "COOKIE ECHO", |c| matches!(c, Chunk::CookieAck(_)))
            .await;
        Self {
            att,
            my_tag,
            server_tag: info.server_tag,
            my_initial_tsn,
            next_tsn: my_initial_tsn,
            server_initial_tsn: info.server_initial_tsn,
            cookie: info.cookie,
            server_a_rwnd: info.a_rwnd,
            next_ssn: [0; 16],
        }
    }

    /// Sends `chunks` in one packet with the right verification tag.
    pub async fn send(&self, chunks: &[Chunk<'_>]) {
        self.att.send_chunks(self.server_tag, chunks).await;
    }

    /// Sends `chunks` in one packet with verification tag `vtag`.
    pub async fn send_tagged(&self, vtag: u32, chunks: &[Chunk<'_>]) {
        self.att.send_chunks(vtag, chunks).await;
    }

    /// A whole ordered message on `stream` (below 16), taking the next TSN and SSN.
    pub fn message(&mut self, stream: u16, payload: impl Into<Vec<u8>>) -> Chunk<'static> {
        let tsn = self.next_tsn;
        self.next_tsn = tsn.wrapping_add(1);
        let slot = &mut self.next_ssn[usize::from(stream)];
        let ssn = *slot;
        *slot = ssn.wrapping_add(1);
        data_chunk(tsn, stream, ssn, DataFlags::UNFRAGMENTED, payload)
    }

    /// The cumulative TSN ack that acknowledges nothing the server sent.
    pub fn server_cum_none(&self) -> u32 {
        self.server_initial_tsn.wrapping_sub(1)
    }

    pub async fn recv(&self, wait: Duration) -> Option<Datagram> {
        self.att.recv(wait).await
    }

    pub fn drain(&self) -> Vec<Datagram> {
        self.att.drain()
    }

    pub async fn collect(&self, quiet: Duration, total: Duration) -> Vec<Datagram> {
        self.att.collect(quiet, total).await
    }

    pub async fn collect_until(
        &self,
        total: Duration,
        done: impl FnMut(&Datagram) -> bool,
    ) -> (Vec<Datagram>, bool) {
        self.att.collect_until(total, done).await
    }
}

/// A hand-made peer and the server's side of its association.
pub async fn peer_and_assoc(server: &Endpoint, params: PeerParams) -> (Peer, Association) {
    let peer = Peer::connect_with(server.local_addr(), params).await;
    let assoc = accept_within(server, STEP)
        .await
        .expect("the server accepts the hand-made peer");
    assert_eq!(assoc.remote(), peer.att.local_addr());
    (peer, assoc)
}

/// Runs `fut` with a bound on its time; fails the test if it takes longer.
pub async fn bounded<T>(what: &str, wait: Duration, fut: impl Future<Output = T>) -> T {
    timeout(wait, fut)
        .await
        .unwrap_or_else(|_| panic!("{what}: did not finish within {wait:?}"))
}
