//! The heap a peer can make us hold through DCEP (RFC 8832): it opens
//! channels with the longest labels and protocols RFC 8832 allows while the
//! application accepts every one. Counted with a counting allocator (as
//! brisk-proto's memory bench does), over the whole process: both ends of
//! the association, on loopback.

use std::alloc::System;
use std::time::Duration;

use brisk::datachannel::{DataChannelConfig, DataChannels, Role};
use brisk::{Config, SendOptions};
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[path = "common/endpoints.rs"]
mod endpoints;
use endpoints::{associate, client_endpoint, server_endpoint, within};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Bytes allocated and not freed (stats_alloc counts a realloc's growth in
/// `bytes_allocated` already).
fn live_heap() -> i64 {
    let s = GLOBAL.stats();
    s.bytes_allocated as i64 - s.bytes_deallocated as i64
}

fn config() -> Config {
    Config {
        rto_initial: Duration::from_millis(50),
        rto_min: Duration::from_millis(50),
        rto_max: Duration::from_millis(200),
        stream_reconfig: true,
        outbound_streams: 4096,
        max_inbound_streams: 4096,
        ..Config::rfc9260()
    }
}

/// A DATA_CHANNEL_OPEN, reliable and ordered (RFC 8832 5.1).
fn open_bytes(label: &str, protocol: &str) -> Vec<u8> {
    let mut b = vec![0x03, 0x00, 0x01, 0x00, 0, 0, 0, 0];
    b.extend_from_slice(&(label.len() as u16).to_be_bytes());
    b.extend_from_slice(&(protocol.len() as u16).to_be_bytes());
    b.extend_from_slice(label.as_bytes());
    b.extend_from_slice(protocol.as_bytes());
    b
}

/// 1,100 OPENs with a 65,535-byte label and protocol each (the flood that
/// took a server from 3.7 MB to 268 MB): the heap held afterwards stays
/// within the metadata budget plus a bounded cost per channel of the table.
#[tokio::test]
async fn a_dcep_open_flood_holds_bounded_heap() {
    let server = server_endpoint(config()).await;
    let client = client_endpoint().await;
    let (a, raw) = associate(&client, &server, config()).await;
    let victim = DataChannels::new(a, Role::Client);
    let acceptor = tokio::spawn({
        let victim = victim.clone();
        async move {
            let mut held = Vec::new();
            while let Ok(ch) = victim.accept().await {
                held.push(ch);
            }
            held.len()
        }
    });
    let (label, protocol) = ("l".repeat(65_535), "p".repeat(65_535));
    let dcep = SendOptions {
        ppid: 50,
        ..SendOptions::default()
    };
    // Warm up: one channel, so the first allocations of the table and the
    // driver are in the baseline.
    raw.send(4001, open_bytes("warm", ""), dcep).await.unwrap();
    within(async {
        while victim.stats().opens_received < 1 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    let before = live_heap();
    let n = 1100u16;
    for i in 0..n {
        raw.send(2 * i + 1, open_bytes(&label, &protocol), dcep)
            .await
            .unwrap();
    }
    tokio::time::timeout(Duration::from_secs(60), async {
        while victim.stats().opens_received < u64::from(n) + 1 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the flood is handled");
    within(raw.flush()).await.unwrap();
    // Let the acceptor take what was accepted, and the answers settle.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let grown = live_heap() - before;
    let cfg = DataChannelConfig::default();
    let st = victim.stats();
    assert_eq!(st.opens_refused_metadata, u64::from(n), "{st:?}");
    eprintln!("DCEP OPEN flood: {n} OPENs of 2 x 65,535 bytes, heap grew {grown} bytes; {st:?}");
    // The metadata budget, and 2 KiB for each OPEN: what both ends keep
    // of each stream used and reset (bounded by the streams configured, in
    // brisk-proto), not of its label. Before the bounds the heap grew by
    // 270 MB here: 1,024 channels kept 2 x 128 KiB each.
    let bound = cfg.metadata_budget_bytes + usize::from(n) * 2048;
    assert!(
        grown < bound as i64,
        "heap grew {grown} bytes, bound {bound}"
    );
    drop(victim);
    raw.abort("done");
    let _ = within(acceptor).await;
}
