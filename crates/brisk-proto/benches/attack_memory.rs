//! Memory bounds under attack, as numbers (issue 9): per association, the
//! most a hostile peer made the server hold, in bytes charged against the
//! configured buffer and in heap bytes actually allocated, next to the buffer.
//!
//! `cargo bench -p brisk-proto --bench attack_memory`

use std::alloc::System;
use std::net::SocketAddr;

use brisk_proto::wire::chunk::{Data, DataFlags, GapBlock, Sack};
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

fn main() {
    let rows = [
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
