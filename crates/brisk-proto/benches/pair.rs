//! Throughput of the protocol core: a pair of endpoints in memory, no loss, no
//! latency. Reports messages per second (criterion's "elements"); Mbit/s is
//! that times the message size.
//!
//! `cargo bench -p brisk-proto --bench pair`

mod common;

use std::time::Duration;

use brisk_proto::{Config, Event, OutgoingMessage};
use bytes::Bytes;
use common::FastPair;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Sends `n` messages of `size` bytes from A to B and reads them all.
fn transfer(p: &mut FastPair, n: u64, size: usize) {
    let payload = Bytes::from(vec![0x5a; size]);
    let (mut sent, mut received) = (0u64, 0u64);
    while received < n {
        if let Some(a) = p.a.association(p.a_id) {
            while sent < n && a.queued_messages() < 512 {
                if a.send(p.now, OutgoingMessage::new(0, payload.clone()))
                    .is_err()
                {
                    break;
                }
                sent += 1;
            }
        }
        let moved = p.pump();
        if let Some(b) = p.b.association(p.b_id) {
            while b.recv().is_some() {
                received += 1;
            }
        }
        while p.a.poll_event().is_some() {}
        while let Some((_, e)) = p.b.poll_event() {
            assert!(!matches!(e, Event::Closed(_)), "association closed: {e:?}");
        }
        if moved == 0 {
            // Only a delayed SACK can be outstanding: let its timer fire.
            p.tick(Duration::from_millis(1));
        }
    }
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("pair");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    for (size, n) in [(100usize, 200_000u64), (1200, 50_000)] {
        group.throughput(Throughput::Elements(n));
        group.bench_function(format!("{size}-byte messages"), |b| {
            b.iter_batched(
                || {
                    FastPair::connected(Config {
                        events: false,
                        ..Config::rfc9260()
                    })
                },
                |mut p| transfer(&mut p, n, size),
                criterion::BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
