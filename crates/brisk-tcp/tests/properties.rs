//! Fuzzing of `handle_segment` (random bytes, random headers on a live
//! connection: never a panic, bounds kept) and determinism.

mod harness;

use std::time::Duration;

use brisk_tcp::wire::{self, flags};
use brisk_tcp::{TcpConfig, TcpEndpoint, Time};
use harness::{Dir, Fate, Pair, ipv4, ms, pattern};
use proptest::prelude::*;

/// Fixes ports (when there is room) and the checksum so that the bytes get
/// past the checksum and to the parser and the connection.
fn from_a_to_b(p: &Pair, mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.len() >= 4 {
        bytes[0..2].copy_from_slice(&p.a_addr.port().to_be_bytes());
        bytes[2..4].copy_from_slice(&p.b_addr.port().to_be_bytes());
    }
    if bytes.len() >= 18 {
        bytes[16] = 0;
        bytes[17] = 0;
        let sum = wire::checksum(ipv4(p.a_addr), ipv4(p.b_addr), &bytes);
        bytes[16..18].copy_from_slice(&sum.to_be_bytes());
    }
    bytes
}

fn connected() -> Pair {
    let b = TcpConfig {
        receive_window: 30_000,
        max_ooo_ranges: 8,
        ..TcpConfig::rfc()
    };
    let mut p = Pair::new(ms(10), TcpConfig::rfc(), b);
    p.connect();
    p.run_to(Time::from_secs(1));
    p.auto_read = false;
    p
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes_never_panic(segments in proptest::collection::vec(
        proptest::collection::vec(any::<u8>(), 0..120), 1..8))
    {
        let mut p = connected();
        let mut listener = TcpEndpoint::new(p.b_addr, TcpConfig::rfc(), true, 9);
        for raw in segments {
            let bytes = from_a_to_b(&p, raw.clone());
            let now = p.now;
            p.b.handle_segment(now, p.a_addr, &bytes);
            listener.handle_segment(now, p.a_addr, &bytes);
            listener.handle_segment(now, p.a_addr, &raw);
            p.run_for(ms(5));
            let mut buf = Vec::new();
            while listener.poll_transmit(now, &mut buf).is_some() {}
        }
        p.run_for(Duration::from_secs(5));
        let st = p.b.stats();
        prop_assert!(st.malformed + st.bad_checksum + st.wrong_port <= st.segments_received);
    }
}

/// A header for B's connection with every field drawn at random, around
/// the live sequence numbers or anywhere.
fn arb_segment() -> impl Strategy<Value = (i64, i64, u8, u16, Vec<(i64, i64)>, usize)> {
    (
        prop_oneof![-70_000i64..70_000, any::<u32>().prop_map(i64::from)],
        prop_oneof![-5_000i64..10_000, any::<u32>().prop_map(i64::from)],
        any::<u8>(),
        any::<u16>(),
        proptest::collection::vec((-3_000i64..60_000, -3_000i64..60_000), 0..5),
        0usize..3000,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn random_headers_on_a_live_connection_keep_every_bound(
        segs in proptest::collection::vec(arb_segment(), 1..25),
        to_a in proptest::collection::vec(any::<bool>(), 25),
    ) {
        let mut p = connected();
        p.a_write(&pattern(20_000));
        p.b_write(&pattern(20_000));
        p.run_for(ms(3));
        for (i, (seq, ack, fl, window, sack, len)) in segs.into_iter().enumerate() {
            let dir = if to_a[i] { Dir::BtoA } else { Dir::AtoB };
            let mut h = p.header(dir, 0, 0);
            h.seq = h.seq.wrapping_add(seq as u32);
            h.ack = h.ack.wrapping_add(ack as u32);
            h.flags = fl;
            h.window = window;
            let base = p.isn(if dir == Dir::AtoB { Dir::BtoA } else { Dir::AtoB }).wrapping_add(1);
            for (l, r) in sack.into_iter().take(4) {
                h.options.sack.push(base.wrapping_add(l as u32), base.wrapping_add(r as u32));
            }
            if h.has(flags::SYN) {
                h.options.mss = Some(window);
                h.options.window_scale = Some(fl);
                h.options.sack = Default::default();
            }
            p.inject(dir, &h, &vec![0x5a; len]);
            p.run_for(ms(7));
            let c = p.b.connection_ref(p.b_id.unwrap());
            if let Some(c) = c {
                prop_assert!(c.readable() + c.out_of_order_bytes() <= 30_000);
                prop_assert!(c.out_of_order_ranges() <= 8);
                prop_assert!(c.send_queued() <= TcpConfig::rfc().send_buffer);
            }
        }
        p.auto_read = true;
        p.run_for(Duration::from_secs(30));
    }
}

/// A lossy exchange both ways; every segment's bytes.
fn lossy_run(a_seed: u64, b_seed: u64) -> Vec<Vec<u8>> {
    let mut p = Pair::with_seeds(ms(10), TcpConfig::rfc(), TcpConfig::linux(), a_seed, b_seed);
    p.rule(|s| (s.ordinal % 7 == 3).then_some(Fate::Drop));
    p.rule(|s| (s.ordinal % 11 == 5).then_some(Fate::Delay(ms(15))));
    p.connect();
    p.a_write(&pattern(50_000));
    p.b_write(&pattern(30_000));
    p.run_for(Duration::from_secs(30));
    assert_eq!(p.b_received, pattern(50_000));
    assert_eq!(p.a_received, pattern(30_000));
    p.log.iter().map(|l| l.seen.bytes.clone()).collect()
}

#[test]
fn the_same_seeds_give_the_same_bytes() {
    let first = lossy_run(1, 2);
    assert_eq!(first, lossy_run(1, 2));
    let other = lossy_run(3, 2);
    assert_ne!(first[0], other[0], "another ISN");
    assert_eq!(first.len(), other.len(), "the same exchange otherwise");
}
