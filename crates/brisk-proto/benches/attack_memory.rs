//! Memory bounds under attack, as numbers (issue 9): per association, the
//! most a hostile peer made the server hold, in bytes charged against the
//! configured buffer and in heap bytes actually allocated, next to the buffer.
//!
//! `cargo bench -p brisk-proto --bench attack_memory`

use std::alloc::System;
use std::net::SocketAddr;

use std::net::Ipv4Addr;

use brisk_proto::wire::chunk::{
    CookieEcho, Data, DataFlags, GapBlock, IData, Init, PpidOrFsn, ReConfig, ReconfigParam, Sack,
    types,
};
use brisk_proto::wire::param::Param;
use brisk_proto::wire::{Chunk, Packet};
use brisk_proto::{AssocId, Config, Endpoint, EndpointConfig, OutgoingMessage, Time};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

mod common;
use common::{handshake_by_hand, packet};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const PEER_TSN: u32 = 1;

/// A server and a hand-played peer: (server, association, server's tag,
/// server's initial TSN).
fn established(cfg: Config) -> (Endpoint, AssocId, u32, u32) {
    let mut ep = Endpoint::new(
        EndpointConfig {
            accept_config: cfg,
            ..EndpointConfig::default()
        },
        [5; 32],
    );
    let (tag, tsn) = handshake_by_hand(&mut ep, peer(), 0xfeed, PEER_TSN);
    let id = ep.association_ids().next().expect("an association");
    (ep, id, tag, tsn)
}

fn peer() -> SocketAddr {
    "192.0.2.9:9899".parse().expect("address")
}

/// Sends what the server has to send; returns the TSNs of its DATA chunks.
fn drain(ep: &mut Endpoint, now: Time) -> Vec<u32> {
    let mut tsns = Vec::new();
    let mut buf = Vec::new();
    while ep.poll_transmit(now, &mut buf).is_some() {
        if let Ok(p) = Packet::decode(&buf) {
            tsns.extend(p.chunks.iter().filter_map(|c| match c {
                Chunk::Data(d) => Some(d.tsn),
                _ => None,
            }));
        }
        buf.clear();
    }
    while ep.poll_event().is_some() {}
    tsns
}

fn heap(region: &Region<System>) -> usize {
    let s = region.change();
    s.bytes_allocated.saturating_sub(s.bytes_deallocated)
}

struct Row {
    attack: String,
    buffer: usize,
    charged: usize,
    heap: usize,
}

/// Lower TSNs under one at the top of the gap window, fragments that never end.
fn reassembly_flood(buffer: u32, size: usize) -> Row {
    let cfg = Config {
        receive_buffer: buffer,
        ..Config::rfc9260()
    };
    let (mut ep, id, tag, _) = established(cfg);
    let region = Region::new(GLOBAL);
    let (mut charged, mut peak) = (0, 0);
    let first = DataFlags {
        immediate: false,
        unordered: false,
        beginning: true,
        ending: false,
    };
    let mut tsns = vec![PEER_TSN + 65_000];
    tsns.extend((0..32_000u32).map(|k| PEER_TSN + 64_998 - 2 * k));
    for (i, tsn) in tsns.into_iter().enumerate() {
        let chunk = Chunk::Data(Data {
            flags: first,
            tsn,
            stream_id: 0,
            ssn: 0,
            ppid: 0,
            payload: vec![7; size].into(),
        });
        let now = Time::from_micros(i as u64);
        ep.handle_datagram(now, peer(), &packet(tag, vec![chunk]));
        drain(&mut ep, now);
        let a = ep.association(id).expect("still established");
        charged = charged.max(a.receive_held());
        peak = peak.max(heap(&region));
    }
    Row {
        attack: format!("reassembly flood, {size}-byte fragments"),
        buffer: buffer as usize,
        charged,
        heap: peak,
    }
}

/// The server sends as fast as it may; the peer acknowledges everything by
/// gap blocks (`gap_only`) or nothing at all, and the cumulative ack never moves.
fn unacked_sender(buffer: usize, size: usize, gap_only: bool) -> Row {
    let cfg = Config {
        send_buffer: buffer,
        ..Config::rfc9260()
    };
    let (mut ep, id, tag, server_tsn) = established(cfg);
    let region = Region::new(GLOBAL);
    let (mut charged, mut peak) = (0, 0);
    let mut highest = server_tsn.wrapping_sub(1);
    for round in 0..2_000u64 {
        let now = Time::from_millis(round);
        if let Some(a) = ep.association(id) {
            while a.send(now, OutgoingMessage::new(0, vec![1; size])).is_ok() {}
        }
        for tsn in drain(&mut ep, now) {
            highest = highest.max(tsn);
        }
        let span = highest.wrapping_sub(server_tsn).wrapping_add(1);
        if gap_only && span >= 2 {
            let sack = Sack {
                cum_tsn_ack: server_tsn.wrapping_sub(1),
                a_rwnd: 1 << 30,
                gap_blocks: vec![GapBlock {
                    start: 2,
                    end: span.min(65_535) as u16,
                }],
                dup_tsns: vec![],
            };
            ep.handle_datagram(now, peer(), &packet(tag, vec![Chunk::Sack(sack)]));
        }
        ep.handle_timeout(now);
        let Some(a) = ep.association(id) else { break };
        charged = charged.max(a.send_held());
        peak = peak.max(heap(&region));
    }
    let how = if gap_only {
        "acknowledges only by gap blocks"
    } else {
        "never acknowledges"
    };
    Row {
        attack: format!("peer {how}, {size}-byte messages"),
        buffer,
        charged,
        heap: peak,
    }
}

/// A server and a hand-played peer whose INIT carries `params` (extensions
/// offered, addresses listed): (server, association, server's tag).
fn established_with(cfg: Config, params: Vec<Param<'static>>) -> (Endpoint, AssocId, u32) {
    let mut ep = Endpoint::new(
        EndpointConfig {
            accept_config: cfg,
            ..EndpointConfig::default()
        },
        [5; 32],
    );
    let init = Chunk::Init(Init {
        initiate_tag: 0xfeed,
        a_rwnd: 1 << 30,
        outbound_streams: 1024,
        inbound_streams: 1024,
        initial_tsn: PEER_TSN,
        params,
    });
    ep.handle_datagram(Time::ZERO, peer(), &packet(0, vec![init]));
    let mut buf = Vec::new();
    ep.poll_transmit(Time::ZERO, &mut buf).expect("INIT ACK");
    let decoded = Packet::decode(&buf).expect("decodes");
    let Some(Chunk::InitAck(ack)) = decoded.chunks.first() else {
        panic!("expected INIT ACK");
    };
    let tag = ack.initiate_tag;
    let echo = Chunk::CookieEcho(CookieEcho {
        cookie: ack.state_cookie().expect("cookie").to_vec().into(),
    });
    ep.handle_datagram(Time::ZERO, peer(), &packet(tag, vec![echo]));
    drain(&mut ep, Time::ZERO);
    let id = ep.association_ids().next().expect("an association");
    (ep, id, tag)
}

/// The extensions a data-channel peer offers: PR-SCTP, RE-CONFIG, I-DATA.
fn extensions() -> Vec<Param<'static>> {
    vec![
        Param::ForwardTsnSupported,
        Param::SupportedExtensions(vec![
            types::FORWARD_TSN,
            types::RECONFIG,
            types::IDATA,
            types::IFORWARD_TSN,
        ]),
    ]
}

fn with_extensions() -> Config {
    Config {
        partial_reliability: true,
        stream_reconfig: true,
        message_interleaving: true,
        ..Config::rfc9260()
    }
}

/// An INIT listing `listed` addresses the peer does not own, then an hour of
/// the server's heartbeats to them, which nobody answers.
fn address_list(listed: u8) -> Row {
    let region = Region::new(GLOBAL);
    let params = (0..listed)
        .map(|i| Param::Ipv4Address(Ipv4Addr::new(198, 51, 100, i)))
        .collect();
    let (mut ep, _, _) = established_with(Config::rfc9260(), params);
    let mut peak = heap(&region);
    let mut probes = 0;
    let mut now = Time::ZERO;
    while now < Time::from_millis(3_600_000) {
        ep.handle_timeout(now);
        let mut buf = Vec::new();
        while let Some(t) = ep.poll_transmit(now, &mut buf) {
            probes += usize::from(t.destination != peer());
            buf.clear();
        }
        while ep.poll_event().is_some() {}
        peak = peak.max(heap(&region));
        now = ep
            .poll_timeout()
            .unwrap_or(Time::from_millis(3_600_000))
            .max(now + std::time::Duration::from_millis(1));
    }
    Row {
        attack: format!(
            "INIT lists {listed} addresses it does not own, then an hour of probes ({probes} packets to them)"
        ),
        buffer: 0,
        charged: 0,
        heap: peak,
    }
}

/// RE-CONFIG requests as fast as the peer may send them: outgoing resets of
/// every stream while data is held back (so each is "in progress"), incoming
/// reset requests, SSN/TSN resets and requests to add 65,535 streams, each
/// with a fresh request sequence number.
fn reconfig_flood() -> Row {
    let cfg = with_extensions();
    let buffer = cfg.receive_buffer as usize;
    let region = Region::new(GLOBAL);
    let (mut ep, id, tag) = established_with(cfg, extensions());
    let (mut charged, mut peak) = (0, 0);
    // Every stream the peer may use (16 negotiated): a request naming others
    // is denied at once and costs nothing.
    let streams: Vec<u16> = (0..16).collect();
    for seq in 0..20_000u32 {
        let request_seq = PEER_TSN.wrapping_add(seq);
        let param = match seq % 4 {
            // The last TSN is far ahead: the reset waits ("in progress").
            0 => ReconfigParam::OutgoingSsnReset {
                request_seq,
                response_seq: 0,
                last_tsn: PEER_TSN.wrapping_add(1_000_000),
                streams: streams.clone(),
            },
            1 => ReconfigParam::IncomingSsnReset {
                request_seq,
                streams: streams.clone(),
            },
            2 => ReconfigParam::AddOutgoingStreams {
                request_seq,
                new_streams: u16::MAX,
            },
            _ => ReconfigParam::SsnTsnReset { request_seq },
        };
        let chunk = Chunk::ReConfig(ReConfig {
            params: vec![param],
        });
        let now = Time::from_micros(u64::from(seq));
        ep.handle_datagram(now, peer(), &packet(tag, vec![chunk]));
        drain(&mut ep, now);
        ep.handle_timeout(now);
        let Some(a) = ep.association(id) else { break };
        charged = charged.max(a.receive_held());
        peak = peak.max(heap(&region));
    }
    Row {
        attack: "RE-CONFIG flood (20,000 requests: resets of all 16 streams, add 65,535 streams, SSN/TSN resets)".into(),
        buffer,
        charged,
        heap: peak,
    }
}

/// I-DATA: first fragments of messages that never end, one per stream and
/// message identifier, on every stream the peer may use.
fn idata_flood(size: usize) -> Row {
    let cfg = with_extensions();
    let buffer = cfg.receive_buffer as usize;
    let region = Region::new(GLOBAL);
    let (mut ep, id, tag) = established_with(cfg, extensions());
    let (mut charged, mut peak) = (0, 0);
    let first = DataFlags {
        immediate: false,
        unordered: false,
        beginning: true,
        ending: false,
    };
    for i in 0..200_000u32 {
        let chunk = Chunk::IData(IData {
            flags: DataFlags {
                unordered: i % 2 == 1,
                ..first
            },
            tsn: PEER_TSN.wrapping_add(i),
            stream_id: (i % 16) as u16,
            mid: i / 16,
            ppid_or_fsn: PpidOrFsn::Ppid(0),
            payload: vec![7; size].into(),
        });
        let now = Time::from_micros(u64::from(i));
        ep.handle_datagram(now, peer(), &packet(tag, vec![chunk]));
        drain(&mut ep, now);
        let Some(a) = ep.association(id) else { break };
        charged = charged.max(a.receive_held());
        peak = peak.max(heap(&region));
    }
    Row {
        attack: format!(
            "I-DATA reassembly flood: first fragments that never end, {size} bytes, 16 streams, ordered and unordered"
        ),
        buffer,
        charged,
        heap: peak,
    }
}

fn main() {
    let rows = [
        address_list(0),
        address_list(7),
        address_list(40),
        reconfig_flood(),
        idata_flood(1000),
        idata_flood(1),
        reassembly_flood(64 << 10, 1000),
        reassembly_flood(64 << 10, 1),
        reassembly_flood(1 << 20, 1000),
        reassembly_flood(1 << 20, 1),
        unacked_sender(256 << 10, 1000, true),
        unacked_sender(256 << 10, 1, true),
        unacked_sender(4 << 20, 1000, true),
        unacked_sender(256 << 10, 1000, false),
    ];
    println!("| attack | configured buffer | most charged | most heap bytes |");
    println!("| --- | ---: | ---: | ---: |");
    for r in rows {
        println!(
            "| {} | {} | {} | {} |",
            r.attack, r.buffer, r.charged, r.heap
        );
    }
}
