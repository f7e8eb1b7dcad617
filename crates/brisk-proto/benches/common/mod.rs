//! Two endpoints wired back to back in memory, with no latency: the cost of
//! the protocol code alone.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::time::Duration;

use brisk_proto::wire::chunk::{CookieEcho, Init};
use brisk_proto::wire::{Chunk, CommonHeader, Packet};
use brisk_proto::{AssocId, Config, Endpoint, EndpointConfig, Event, Time};

/// An SCTP packet from port 5000 to port 5000 with `tag` and `chunks`.
pub fn packet(tag: u32, chunks: Vec<Chunk<'static>>) -> Vec<u8> {
    Packet {
        header: CommonHeader {
            src_port: 5000,
            dst_port: 5000,
            verification_tag: tag,
            checksum: 0,
        },
        chunks,
    }
    .to_bytes()
    .expect("encodes")
}

/// Plays a peer's side of the handshake by hand from `peer` (its tag
/// `peer_tag`, its first TSN `peer_tsn`, a huge window) and drains what `ep`
/// sends. Returns `ep`'s tag and initial TSN.
pub fn handshake_by_hand(
    ep: &mut Endpoint,
    peer: SocketAddr,
    peer_tag: u32,
    peer_tsn: u32,
) -> (u32, u32) {
    let init = Chunk::Init(Init {
        initiate_tag: peer_tag,
        a_rwnd: 1 << 30,
        outbound_streams: 4,
        inbound_streams: 4,
        initial_tsn: peer_tsn,
        params: vec![],
    });
    ep.handle_datagram(Time::ZERO, peer, &packet(0, vec![init]));
    let mut buf = Vec::new();
    ep.poll_transmit(Time::ZERO, &mut buf).expect("INIT ACK");
    let decoded = Packet::decode(&buf).expect("decodes");
    let Chunk::InitAck(ack) = &decoded.chunks[0] else {
        panic!("expected INIT ACK");
    };
    let (tag, tsn) = (ack.initiate_tag, ack.initial_tsn);
    let echo = Chunk::CookieEcho(CookieEcho {
        cookie: ack.state_cookie().expect("cookie").to_vec().into(),
    });
    ep.handle_datagram(Time::ZERO, peer, &packet(tag, vec![echo]));
    while ep.poll_transmit(Time::ZERO, &mut buf).is_some() {
        buf.clear();
    }
    while ep.poll_event().is_some() {}
    (tag, tsn)
}

pub struct FastPair {
    pub now: Time,
    pub a: Endpoint,
    pub b: Endpoint,
    pub a_addr: SocketAddr,
    pub b_addr: SocketAddr,
    pub a_id: AssocId,
    pub b_id: AssocId,
    buf: Vec<u8>,
}

impl FastPair {
    pub fn connected(cfg: Config) -> Self {
        let a = Endpoint::new(
            EndpointConfig {
                accept: false,
                ..EndpointConfig::default()
            },
            [1; 32],
        );
        let b = Endpoint::new(
            EndpointConfig {
                accept_config: cfg.clone(),
                ..EndpointConfig::default()
            },
            [2; 32],
        );
        let mut p = FastPair {
            now: Time::ZERO,
            a,
            b,
            a_addr: "10.0.0.1:9899".parse().unwrap(),
            b_addr: "10.0.0.2:9899".parse().unwrap(),
            a_id: AssocId(0),
            b_id: AssocId(0),
            buf: Vec::with_capacity(2048),
        };
        p.a_id = p.a.connect(p.now, p.b_addr, cfg).unwrap();
        loop {
            p.pump();
            let mut up = false;
            while let Some((id, e)) = p.b.poll_event() {
                if e == Event::Connected {
                    p.b_id = id;
                    up = true;
                }
            }
            while p.a.poll_event().is_some() {}
            if up {
                p.pump();
                return p;
            }
        }
    }

    /// Moves packets both ways until neither side has anything to send.
    /// Returns the number of packets moved.
    pub fn pump(&mut self) -> usize {
        let mut moved = 0;
        loop {
            let mut any = false;
            self.buf.clear();
            while self.a.poll_transmit(self.now, &mut self.buf).is_some() {
                self.b.handle_datagram(self.now, self.a_addr, &self.buf);
                self.buf.clear();
                moved += 1;
                any = true;
            }
            while self.b.poll_transmit(self.now, &mut self.buf).is_some() {
                self.a.handle_datagram(self.now, self.b_addr, &self.buf);
                self.buf.clear();
                moved += 1;
                any = true;
            }
            if !any {
                return moved;
            }
        }
    }

    /// Advances the clock and fires due timers.
    pub fn tick(&mut self, d: Duration) {
        self.now = self.now + d;
        self.a.handle_timeout(self.now);
        self.b.handle_timeout(self.now);
    }
}
