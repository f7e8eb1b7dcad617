//! Hosts with several addresses: routing by destination address (a bound
//! address is reached over its own interface), source address selection by
//! the first hop, and associations over either of two disjoint paths.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use brisk_proto::{EndpointConfig, Time};
use brisk_sim::{HostId, LinkId, LinkParams, Sim, dual_homed};
use common::*;

const LIMIT: Time = Time::from_secs(60);
const A1: &str = "10.0.1.1:9899";
const A2: &str = "10.0.3.1:9899";
const B1: &str = "10.0.2.1:9899";
const B2: &str = "10.0.4.1:9899";

/// Host a (A1, A2) and host b (B1, B2) joined by a one-router primary path
/// (a - r1 - b) and a two-router secondary path (a - r2 - r3 - b); each
/// host's first address bound to the primary, its second to the secondary.
/// Keeps the link directions the tests look at.
struct Routed {
    sim: Sim,
    a: HostId,
    b: HostId,
    a_r1: LinkId,
    a_r2: LinkId,
    r2_a: LinkId,
    r1_b: LinkId,
    r3_b: LinkId,
    b_r1: LinkId,
    b_r3: LinkId,
}

fn routed(bind: bool, client: Option<Client>) -> Routed {
    let mut sim = Sim::new(7);
    let a = match client {
        Some(c) => sim.add_multihomed_host(
            &[addr(A1), addr(A2)],
            EndpointConfig::default(),
            Box::new(c),
        ),
        None => sim.add_multihomed_host(
            &[addr(A1), addr(A2)],
            EndpointConfig::default(),
            Box::new(Server::default()),
        ),
    };
    let b = sim.add_multihomed_host(
        &[addr(B1), addr(B2)],
        EndpointConfig::default(),
        Box::new(Server::default()),
    );
    let (r1, r2, r3) = (sim.add_router(), sim.add_router(), sim.add_router());
    let (na, nb) = (sim.node(a), sim.node(b));
    let (a_r1, _) = sim.link(na, r1, link(), link());
    let (r1_b, b_r1) = sim.link(r1, nb, link(), link());
    let (a_r2, r2_a) = sim.link(na, r2, link(), link());
    sim.link(r2, r3, link(), link());
    let (r3_b, b_r3) = sim.link(r3, nb, link(), link());
    if bind {
        sim.bind_address(addr(A1), a_r1);
        sim.bind_address(addr(B1), b_r1);
        sim.bind_address(addr(A2), a_r2);
        // Either direction names the interface.
        sim.bind_address(addr(B2), r3_b);
    }
    for l in sim.links().collect::<Vec<_>>() {
        sim.trace(l);
    }
    sim.log_arrivals(a);
    sim.log_arrivals(b);
    Routed {
        sim,
        a,
        b,
        a_r1,
        a_r2,
        r2_a,
        r1_b,
        r3_b,
        b_r1,
        b_r3,
    }
}

/// (link it came over, source, destination) of each packet that reached `h`.
fn arrived(sim: &Sim, h: HostId) -> Vec<(LinkId, SocketAddr, SocketAddr)> {
    sim.arrivals(h)
        .iter()
        .map(|a| (a.link, a.source, a.to))
        .collect()
}

#[test]
fn the_destination_address_picks_the_path_and_the_first_hop_picks_the_source() {
    let mut r = routed(true, None);
    assert_eq!(r.sim.addresses(r.a), [addr(A1), addr(A2)]);
    assert_eq!(r.sim.host_of(addr(B2)), Some(r.b));
    assert_eq!(r.sim.address_on(r.b, r.b_r3), Some(addr(B2)));
    r.sim.inject(r.a, addr(B1), vec![0; 50]);
    r.sim.inject(r.a, addr(B2), vec![0; 50]);
    r.sim.inject(r.b, addr(A2), vec![0; 50]);
    r.sim.run(LIMIT);
    assert_eq!(
        arrived(&r.sim, r.b),
        [(r.r1_b, addr(A1), addr(B1)), (r.r3_b, addr(A2), addr(B2)),],
        "B2 over the longer path, from a's address on it"
    );
    assert_eq!(arrived(&r.sim, r.a).len(), 1);
    assert_eq!(arrived(&r.sim, r.a)[0].1, addr(B2));
    assert_eq!(arrived(&r.sim, r.a)[0].2, addr(A2));
    assert_eq!(r.sim.link_stats(r.a_r1).sent, 1);
    assert_eq!(r.sim.link_stats(r.a_r2).sent, 1);
    assert_eq!(r.sim.link_stats(r.b_r3).sent, 1);
    assert_eq!(r.sim.link_stats(r.b_r1).sent, 0);
    assert_eq!(r.sim.stats().unroutable, 0);
}

#[test]
fn unbound_addresses_take_the_shortest_path_from_the_first_address() {
    let mut r = routed(false, None);
    r.sim.inject(r.a, addr(B2), vec![0; 50]);
    r.sim.inject(r.b, addr(A2), vec![0; 50]);
    r.sim.run(LIMIT);
    assert_eq!(arrived(&r.sim, r.b), [(r.r1_b, addr(A1), addr(B2))]);
    assert_eq!(arrived(&r.sim, r.a)[0].1, addr(B1));
    assert_eq!(r.sim.link_stats(r.a_r2).sent, 0);
}

/// Arrivals at `h` that carried DATA, as (link, source, destination).
fn data_arrived(sim: &Sim, h: HostId) -> Vec<(LinkId, SocketAddr, SocketAddr)> {
    sim.arrivals(h)
        .iter()
        .filter(|a| a.data)
        .map(|a| (a.link, a.source, a.to))
        .collect()
}

#[test]
fn an_association_to_the_secondary_address_carries_its_data_over_the_secondary_path() {
    let mut r = routed(true, Some(Client::new(addr(B2), 10)));
    r.sim.run(LIMIT);
    let server = r.sim.app::<Server>(r.b).unwrap();
    assert_eq!(server.received.len(), 10);
    let data = data_arrived(&r.sim, r.b);
    assert!(data.len() >= 10);
    for d in data {
        assert_eq!(d, (r.r3_b, addr(A2), addr(B2)));
    }
    // Both ends are multi-homed: the other path carries what confirms it
    // (heartbeats, RFC 9260 5.4), from and to the addresses bound to it.
    for (l, from, to) in arrived(&r.sim, r.b) {
        if l != r.r3_b {
            assert_eq!((l, from, to), (r.r1_b, addr(A1), addr(B1)));
        }
    }
    assert!(
        r.sim
            .arrivals(r.b)
            .iter()
            .any(|a| a.link == r.r1_b && !a.data)
    );
    assert!(r.sim.link_stats(r.a_r2).sent > 10);
    // The SACKs come back on the secondary path (RFC 9260 6.4).
    let sacks = arrived(&r.sim, r.a)
        .into_iter()
        .filter(|x| *x == (r.r2_a, addr(B2), addr(A2)))
        .count();
    assert!(sacks >= 5, "{sacks}");
}

/// A client on host a of a direct dual-homed pair, to `server`; returns the
/// sim, the links and host b.
fn direct(server: &str, primary_back: LinkParams) -> (Sim, brisk_sim::DualHomedLinks, HostId) {
    let mut sim = Sim::new(3);
    let a = sim.add_multihomed_host(
        &[addr(A1), addr(A2)],
        EndpointConfig::default(),
        Box::new(Client::new(addr(server), 5)),
    );
    let b = sim.add_multihomed_host(
        &[addr(B1), addr(B2)],
        EndpointConfig::default(),
        Box::new(Server::default()),
    );
    let fast = LinkParams::new(1_000_000, Duration::from_millis(5));
    let links = dual_homed(&mut sim, a, b, (link(), primary_back), (fast.clone(), fast));
    sim.log_arrivals(b);
    (sim, links, b)
}

#[test]
fn a_dual_homed_pair_keeps_each_association_on_the_path_of_its_addresses() {
    for (server, on_primary) in [(B1, true), (B2, false)] {
        let (mut sim, links, b) = direct(server, link());
        sim.run(LIMIT);
        assert_eq!(sim.app::<Server>(b).unwrap().received.len(), 5, "{server}");
        let (used, idle) = if on_primary {
            (links.primary, links.secondary)
        } else {
            (links.secondary, links.primary)
        };
        assert!(sim.link_stats(used.0).sent >= 5 && sim.link_stats(used.1).sent >= 5);
        // The other path only carries the heartbeats that confirm it.
        assert!(sim.arrivals(b).iter().all(|x| x.link == used.0 || !x.data));
        assert!(sim.link_stats(idle.0).sent + sim.link_stats(idle.1).sent <= 4);
    }
}

#[test]
fn a_black_hole_on_the_secondary_path_leaves_a_primary_association_alone() {
    let hole = |p: LinkParams| {
        p.with_impairments([brisk_sim::Impairment::DropWindow {
            from: Duration::ZERO,
            to: Duration::MAX,
        }])
    };
    // Secondary dead: nothing changes for an association on the primary.
    let mut sim = Sim::new(3);
    let a = sim.add_multihomed_host(
        &[addr(A1), addr(A2)],
        EndpointConfig::default(),
        Box::new(Client::new(addr(B1), 5)),
    );
    let b = sim.add_multihomed_host(
        &[addr(B1), addr(B2)],
        EndpointConfig::default(),
        Box::new(Server::default()),
    );
    dual_homed(
        &mut sim,
        a,
        b,
        (link(), link()),
        (hole(link()), hole(link())),
    );
    sim.run(LIMIT);
    let (mut plain, _, pb) = direct(B1, link());
    plain.run(LIMIT);
    let at = |s: &Sim, h| -> Vec<Time> {
        s.app::<Server>(h)
            .unwrap()
            .received
            .iter()
            .map(|r| r.at)
            .collect()
    };
    assert_eq!(at(&sim, b).len(), 5);
    assert_eq!(at(&sim, b), at(&plain, pb));
}

#[test]
#[should_panic(expected = "does not reach the host of 10.0.3.1:9899")]
fn binding_an_address_to_another_hosts_link_panics() {
    let mut r = routed(false, None);
    r.sim.bind_address(addr(A2), r.r3_b);
}

#[test]
#[should_panic(expected = "already belongs to host 0")]
fn an_address_belongs_to_one_host() {
    let mut r = routed(false, None);
    r.sim.add_address(r.b, addr(A2));
}

#[test]
fn a_capture_names_each_paths_links_by_the_addresses_bound_to_them() {
    use brisk_net::pcapng::{Block, read_blocks};
    let (mut sim, _, _) = direct(B2, link());
    let buf = SharedBuf::default();
    sim.capture_pcapng(Box::new(buf.clone()));
    sim.run(LIMIT);
    sim.finish_captures().unwrap();
    let bytes = buf.0.borrow().clone();
    let names: Vec<String> = read_blocks(&bytes)
        .unwrap()
        .into_iter()
        .filter_map(|b| match b {
            Block::Interface(i) => i.name,
            _ => None,
        })
        .collect();
    assert_eq!(
        names,
        [
            "link 0: 10.0.1.1 -> 10.0.2.1",
            "link 1: 10.0.2.1 -> 10.0.1.1",
            "link 2: 10.0.3.1 -> 10.0.4.1",
            "link 3: 10.0.4.1 -> 10.0.3.1",
        ]
    );
    // Every packet is written on the interfaces of the path it took,
    // between that path's addresses; the association to B2 sends its DATA
    // on the secondary (the primary carries heartbeats only).
    let packets: Vec<_> = read_blocks(&bytes)
        .unwrap()
        .into_iter()
        .filter_map(|b| match b {
            Block::Packet(p) => Some(p),
            _ => None,
        })
        .collect();
    assert!(packets.len() > 10);
    for p in &packets {
        // IPv4 source and destination.
        let (src, dst) = (&p.data[12..16], &p.data[16..20]);
        let pair = match p.interface {
            0 => ([10, 0, 1, 1], [10, 0, 2, 1]),
            1 => ([10, 0, 2, 1], [10, 0, 1, 1]),
            2 => ([10, 0, 3, 1], [10, 0, 4, 1]),
            _ => ([10, 0, 4, 1], [10, 0, 3, 1]),
        };
        assert_eq!((src, dst), (&pair.0[..], &pair.1[..]));
        // The first chunk's type, after the IPv4 header, the UDP header if
        // any, and the SCTP common header: DATA (0) only on the secondary.
        let sctp = 20 + if p.data[9] == 17 { 8 } else { 0 };
        if p.data[sctp + 12] == 0 {
            assert!(p.interface >= 2, "DATA on interface {}", p.interface);
        }
    }
    assert!(packets.iter().filter(|p| p.interface >= 2).count() > 10);
}
