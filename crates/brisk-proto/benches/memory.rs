//! Heap bytes per idle, established association, measured with 10,000
//! associations in one endpoint. Target: at most 4 KiB each.
//!
//! `cargo bench -p brisk-proto --bench memory`

use std::alloc::System;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use brisk_proto::{Config, Endpoint, EndpointConfig, Event, Time};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const ASSOCIATIONS: u32 = 10_000;

fn addr(net: u8, i: u32) -> SocketAddr {
    let ip = Ipv4Addr::new(10, net, (i >> 8) as u8, i as u8);
    SocketAddr::new(IpAddr::V4(ip), 9899)
}

fn main() {
    let cfg = Config::rfc9260();
    // One client endpoint connects to 10,000 addresses; the wire delivers each
    // to the one server endpoint as if from 10,000 different clients.
    let mut client = Endpoint::new(
        EndpointConfig {
            accept: false,
            max_associations: 20_000,
            ..EndpointConfig::default()
        },
        [1; 32],
    );
    let region = Region::new(GLOBAL);
    let mut server = Endpoint::new(
        EndpointConfig {
            accept_config: cfg.clone(),
            max_associations: 20_000,
            ..EndpointConfig::default()
        },
        [2; 32],
    );
    let now = Time::ZERO;
    for i in 0..ASSOCIATIONS {
        client.connect(now, addr(1, i), cfg.clone()).unwrap();
    }
    let to_client = |a: SocketAddr| -> u32 {
        let o = match a.ip() {
            IpAddr::V4(v4) => v4.octets(),
            IpAddr::V6(_) => unreachable!(),
        };
        (u32::from(o[2]) << 8) | u32::from(o[3])
    };
    let mut buf = Vec::new();
    loop {
        let mut moved = false;
        while let Some(t) = client.poll_transmit(now, &mut buf) {
            let i = to_client(t.destination);
            server.handle_datagram(now, addr(2, i), &buf);
            buf.clear();
            moved = true;
        }
        while let Some(t) = server.poll_transmit(now, &mut buf) {
            let i = to_client(t.destination);
            client.handle_datagram(now, addr(1, i), &buf);
            buf.clear();
            moved = true;
        }
        if !moved {
            break;
        }
    }
    let mut up = 0;
    while let Some((_, e)) = server.poll_event() {
        up += usize::from(e == Event::Connected);
    }
    while client.poll_event().is_some() {}
    assert_eq!(up, ASSOCIATIONS as usize);
    assert_eq!(server.association_count(), ASSOCIATIONS as usize);
    // The server's heap: the region started before it was created; the client
    // endpoint allocated before the region too, but its growth counts: drop it.
    drop(client);
    let change = region.change();
    // stats_alloc counts a realloc's growth in bytes_allocated (and its
    // shrinking in bytes_deallocated) as well as in bytes_reallocated: the
    // live heap is the first minus the second. (Adding bytes_reallocated, as
    // this bench did until 2026-11-27, counted every regrown buffer twice.)
    let live = change.bytes_allocated as i64 - change.bytes_deallocated as i64;
    let per = live as f64 / f64::from(ASSOCIATIONS);
    println!(
        "memory: {ASSOCIATIONS} idle established associations in one endpoint: \
         {live} heap bytes, {per:.0} bytes per association (target <= 4096)"
    );
    println!(
        "memory: size_of::<Association>() = {} bytes",
        std::mem::size_of::<brisk_proto::Association>()
    );
    drop(server);
}
