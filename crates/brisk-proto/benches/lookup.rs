//! What a packet from nowhere costs the server (issue 9, finding 5): an
//! out-of-the-blue DATA packet with a non-zero tag from an unknown address,
//! with 1, 1,000 and 100,000 associations established. The lookup by address
//! and by tag is O(1), so the three should cost the same.
//!
//! `cargo bench -p brisk-proto --bench lookup`

use std::hint::black_box;
use std::net::{Ipv4Addr, SocketAddr};

use brisk_proto::wire::Chunk;
use brisk_proto::wire::chunk::{Data, DataFlags};
use brisk_proto::{Endpoint, EndpointConfig, Time};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

mod common;
use common::{handshake_by_hand, packet};

fn peer(i: u32) -> SocketAddr {
    SocketAddr::new(Ipv4Addr::from(0x0a00_0000 + i).into(), 9899)
}

/// A server with `n` associations, each set up by a hand-played handshake
/// from its own address.
fn server_with(n: u32) -> Endpoint {
    let mut ep = Endpoint::new(
        EndpointConfig {
            max_associations: 200_000,
            ..EndpointConfig::default()
        },
        [3; 32],
    );
    for i in 0..n {
        handshake_by_hand(&mut ep, peer(i), i + 1, 1);
    }
    assert_eq!(ep.association_count(), n as usize);
    ep
}

fn out_of_the_blue(c: &mut Criterion) {
    let stranger: SocketAddr = "192.0.2.77:40000".parse().expect("address");
    let data = packet(
        0x1234_5678,
        vec![Chunk::Data(Data {
            flags: DataFlags::UNFRAGMENTED,
            tsn: 1,
            stream_id: 0,
            ssn: 0,
            ppid: 0,
            payload: vec![0; 32].into(),
        })],
    );
    let mut group = c.benchmark_group("out_of_the_blue_packet");
    group.sample_size(30);
    let mut buf = Vec::with_capacity(2048);
    for n in [1u32, 1_000, 100_000] {
        let mut ep = server_with(n);
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                ep.handle_datagram(Time::ZERO, stranger, black_box(&data));
                buf.clear();
                // The ABORT it answers with (RFC 9260 8.4 rule 8).
                black_box(ep.poll_transmit(Time::ZERO, &mut buf));
            })
        });
        assert_eq!(ep.association_count(), n as usize);
    }
    group.finish();
}

criterion_group!(benches, out_of_the_blue);
criterion_main!(benches);
