//! Redundancy within a byte budget for streams that are not thin
//! (`redundancy_budget`, Linux RDB with its DPIFL trigger), through the pair
//! harness: issue 28's application case (small messages every 16 ms over a
//! 100 ms RTT with random loss), a bulk transfer, and adversaries.

mod harness;

use std::time::Duration;

use brisk_proto::{Config, OutgoingMessage, RetransmitCause, Time};
use harness::{Dir, Fate, Pair, Seen, ms};

/// IPv6 and UDP below each SCTP packet: the bytes the bottleneck sees.
const IP_UDP: u64 = 48;

/// A deterministic random number generator for the loss pattern.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// What one run of a periodic stream measured.
struct Run {
    /// Latency of each message, queued to deliverable, sorted.
    latencies: Vec<Duration>,
    /// Bytes A sent towards B on the wire, IPv6 and UDP included.
    wire_bytes: u64,
    /// Of those, what the budget counts as the stream without copies: each
    /// packet that carried new data (its SCTP common header, IPv6 and UDP)
    /// and its new chunks.
    base_bytes: u64,
    /// Bytes of chunks that A sent again as `Bundled` copies.
    copy_bytes: u64,
    /// Copies sent (cause `Bundled`).
    copies: usize,
    bundled_at: Vec<(Time, u32)>,
    /// Packets from A lost on the wire.
    lost: usize,
    messages: usize,
}

impl Run {
    fn p99(&self) -> Duration {
        let i = (self.latencies.len() * 99).div_ceil(100) - 1;
        self.latencies[i]
    }
}

/// Bytes of a DATA chunk carrying `payload` bytes, padding included.
fn chunk_size(payload: usize) -> u64 {
    (16 + payload).div_ceil(4) as u64 * 4
}

/// `n` messages of `size` bytes every `gap` from A to B, 50 ms one way,
/// `loss` per mille of A's packets dropped at random (after the warm-up), B
/// with the RFC 9260 defaults (delayed SACK, every second packet).
fn periodic(cfg: Config, size: usize, gap: Duration, n: usize, loss: u64, seed: u64) -> Run {
    let mut rng = XorShift(seed);
    let run = stream(cfg, size, gap, n, move |s| {
        (s.dir == Dir::AtoB && rng.next() % 1000 < loss).then_some(Fate::Drop)
    });
    assert_eq!(run.latencies.len(), n, "every message arrives");
    run
}

/// As [`periodic`], with `rule` deciding each packet's fate after the
/// warm-up; the latencies are those of the messages that arrived.
fn stream(
    cfg: Config,
    size: usize,
    gap: Duration,
    n: usize,
    rule: impl FnMut(&Seen) -> Option<Fate> + 'static,
) -> Run {
    let mut p = Pair::new(ms(50), Config::rfc9260());
    p.connect(cfg);
    p.warm_up();
    p.rule(rule);
    let mut sent_at = Vec::new();
    let mut delivered = Vec::new();
    for _ in 0..n {
        sent_at.push(p.now);
        p.a_send(OutgoingMessage::new(0, vec![7; size]));
        p.run_for(gap);
        delivered.extend(p.b_recv_all());
    }
    p.run_for(ms(20_000));
    delivered.extend(p.b_recv_all());
    // The warm-up message took SSN 0.
    let mut latencies: Vec<Duration> = delivered
        .iter()
        .map(|m| {
            let i = usize::from(m.ssn) - 1;
            Duration::from_micros(m.deliverable_at.as_micros() - sent_at[i].as_micros())
        })
        .collect();
    latencies.sort();
    let mut seen = std::collections::HashSet::new();
    // The warm-up message's packet (7 bytes) earned its share too.
    let (mut wire_bytes, mut base_bytes, mut lost) = (0, IP_UDP + 12 + chunk_size(7), 0);
    for l in p.log.iter().filter(|l| l.seen.dir == Dir::AtoB) {
        wire_bytes += l.seen.bytes.len() as u64 + IP_UDP;
        lost += usize::from(l.fate == Fate::Drop);
        let new = l.seen.tsns.iter().filter(|t| seen.insert(**t)).count() as u64;
        if new > 0 {
            base_bytes += IP_UDP + 12 + new * chunk_size(size);
        }
    }
    let copies = p
        .a_retransmissions()
        .iter()
        .filter(|r| r.2 == RetransmitCause::Bundled)
        .count();
    let bundled_at = p
        .a_retransmissions()
        .iter()
        .filter(|r| r.2 == RetransmitCause::Bundled)
        .map(|r| (r.0, r.1))
        .collect();
    Run {
        bundled_at,
        latencies,
        wire_bytes,
        base_bytes,
        copy_bytes: copies as u64 * chunk_size(size),
        copies,
        lost,
        messages: n,
    }
}

fn budget(percent: u32) -> Config {
    Config {
        redundancy_budget: percent,
        ..Config::rfc9260()
    }
}

#[test]
fn small_messages_every_16_ms_over_100_ms_rtt_with_10_percent_loss_arrive_one_itt_later() {
    let (size, gap, n) = (64, ms(16), 1500);
    let without = periodic(budget(0), size, gap, n, 100, 0x5eed);
    let pct = |r: &Run, q: usize| r.latencies[r.latencies.len() * q / 100];
    for percent in [200u32, 300] {
        let with = periodic(budget(percent), size, gap, n, 100, 0x5eed);
        let ratio = with.wire_bytes as f64 / without.wire_bytes as f64;
        eprintln!(
            "64 B / 16 ms / 10% loss, {percent}%: p90 {:?} p95 {:?} p99 {:?} with, p99 {:?} without; \
             bytes {} / {} = {ratio:.3}; {} copies, {} and {} packets lost",
            pct(&with, 90),
            pct(&with, 95),
            with.p99(),
            without.p99(),
            with.wire_bytes,
            without.wire_bytes,
            with.copies,
            without.lost,
            with.lost,
        );
        assert_eq!(without.copies, 0);
        assert!(with.lost * 100 >= with.messages * 8, "the loss happened");
        // Without copies a loss waits for fast retransmit (three miss
        // indications and a round trip): the p99 is beyond 2 RTTs.
        assert!(without.p99() > ms(200), "{:?}", without.p99());
        // With them, a lost message rides in the next packet, 16 ms later:
        // at 10% loss, 90% of the messages arrive within one way and one ITT
        // with about one copy each (200%), 95% with two (300).
        let within = if percent == 200 { 90 } else { 95 };
        let p = pct(&with, within);
        assert!(p <= ms(50 + 16 + 1), "{percent}%: p{within} {p:?}");
        // What is left of the p99: a message whose copies were lost too
        // and those behind it on its ordered stream, for a round trip.
        assert!(with.p99() <= ms(200), "{:?}", with.p99());
        assert!(with.p99() * 4 < without.p99());
        // The budget: copies within its share of the stream's own bytes,
        // and what the bottleneck sees (IP and UDP headers too) within it.
        let share = u64::from(percent - 100);
        assert!(
            with.copy_bytes * 100 <= with.base_bytes * share,
            "{} > {}",
            with.copy_bytes,
            with.base_bytes
        );
        assert!(ratio <= f64::from(percent) / 100.0, "{ratio}");
    }
}

#[test]
fn a_bulk_transfer_with_the_budget_on_sends_no_copies() {
    // Back-to-back and cwnd-limited: 2 MB in 1000-byte messages, and 300 kB
    // in 100-byte ones (packets of many chunks), with and without loss.
    for (size, count, loss) in [(1000, 2000, 0), (1000, 2000, 20), (100, 3000, 20)] {
        let mut p = Pair::new(ms(50), Config::rfc9260());
        p.connect(budget(200));
        p.warm_up();
        let mut rng = XorShift(7);
        p.rule(move |s| (s.dir == Dir::AtoB && rng.next() % 1000 < loss).then_some(Fate::Drop));
        for _ in 0..count {
            p.a_send(OutgoingMessage::new(0, vec![1; size]));
        }
        let mut received = 0;
        for _ in 0..1200 {
            p.run_for(ms(100));
            received += p.b_recv_all().len();
        }
        assert_eq!(received, count, "{size} B, {loss}‰");
        let bundled: Vec<_> = p
            .a_retransmissions()
            .into_iter()
            .filter(|r| r.2 == RetransmitCause::Bundled)
            .collect();
        assert_eq!(bundled, vec![], "{size} B, {loss}‰");
    }
}

#[test]
fn one_byte_messages_cannot_push_copies_beyond_the_budget() {
    // An application of 1-byte messages: each copy (a 20-byte chunk) costs
    // less than its packet (32 bytes of SCTP), so more than one copy a
    // packet fits at 200%; the budget still holds them to 50% (150) and 100%
    // (200) of the stream's own bytes, and the bottleneck sees at most 1.5x
    // and 2x.
    for percent in [150u64, 200] {
        let without = periodic(budget(0), 1, ms(11), 1000, 20, 3);
        let with = periodic(budget(percent as u32), 1, ms(11), 1000, 20, 3);
        assert!(
            with.copies as u64 * 20 * 100 > 1000 * 32 * (percent - 100) * 9 / 10,
            "{percent}: copies are made: {}",
            with.copies
        );
        assert!(
            with.copy_bytes * 100 <= with.base_bytes * (percent - 100),
            "{percent}: {} copy bytes for {}",
            with.copy_bytes,
            with.base_bytes
        );
        let ratio = with.wire_bytes as f64 / without.wire_bytes as f64;
        assert!(ratio <= percent as f64 / 100.0, "{percent}: {ratio}");
    }
}

#[test]
fn a_budget_of_100_percent_or_less_makes_no_copies() {
    for percent in [0, 100] {
        let run = periodic(budget(percent), 64, ms(16), 200, 50, 9);
        assert_eq!(run.copies, 0, "{percent}");
    }
}

#[test]
fn a_stream_sending_more_often_than_the_minimum_itt_gets_no_copies() {
    // 64 B every 5 ms over 100 ms: about 20 packets in flight, above DPIFL's
    // 100 ms / 10 ms, and an ITT below 10 ms.
    let run = periodic(budget(200), 64, ms(5), 500, 0, 1);
    assert_eq!(run.copies, 0, "first: {:?}", run.bundled_at.first());
    // With a minimum ITT of 4 ms the trigger holds (25 packets allowed).
    let run = periodic(
        Config {
            redundancy_min_itt: ms(4),
            ..budget(200)
        },
        64,
        ms(5),
        500,
        0,
        1,
    );
    assert!(run.copies > 400, "{}", run.copies);
}

#[test]
fn a_peer_that_never_sacks_gets_copies_only_within_the_budget() {
    // Every SACK is lost after the warm-up: the trigger sees packets in
    // flight pile up, the budget holds, T3 stays the backstop.
    let run = stream(budget(200), 64, ms(16), 300, |s| {
        (s.dir == Dir::BtoA).then_some(Fate::Drop)
    });
    assert!(
        run.copy_bytes <= run.base_bytes,
        "{} > {}",
        run.copy_bytes,
        run.base_bytes
    );
    // DPIFL: no copies once 10 packets (100 ms / 10 ms) are in flight.
    assert!(run.copies < 20, "{}", run.copies);
}

#[test]
fn a_peer_that_sacks_only_some_tsns_gets_copies_only_within_the_budget() {
    // Every packet carrying the 20th message's TSN is lost for 5 s, and
    // two SACKs in three: the cumulative ack stands still while gap
    // reports come and go, and the outstanding chunks pile up behind it.
    let mut stuck = None;
    let mut sacks = 0u64;
    let run = stream(budget(400), 64, ms(16), 600, move |s| {
        if s.dir == Dir::BtoA {
            sacks += 1;
            return (sacks % 3 != 0).then_some(Fate::Drop);
        }
        if s.data_ordinal == Some(20) {
            stuck = s.tsns.first().copied();
        }
        let hit = stuck.is_some_and(|t| s.tsns.contains(&t));
        (hit && s.sent_at < Time::from_millis(5000)).then_some(Fate::Drop)
    });
    assert_eq!(run.latencies.len(), 600, "every message arrives in the end");
    assert!(run.copies > 0);
    assert!(
        run.copy_bytes <= 3 * run.base_bytes,
        "{} > 3 x {}",
        run.copy_bytes,
        run.base_bytes
    );
}

/// As [`periodic`], dropping the first transmission of `loss` per mille
/// of the messages at random, never a copy or a retransmission (a
/// loss-position study's pattern): no message is lost twice.
fn first_transmissions_lost(cfg: Config, size: usize, n: usize, loss: u64, seed: u64) -> Run {
    let mut rng = XorShift(seed);
    let mut seen = std::collections::HashSet::new();
    let run = stream(cfg, size, ms(16), n, move |s| {
        let first = s.dir == Dir::AtoB && s.has_data() && s.tsns.iter().all(|t| seen.insert(*t));
        (first && rng.next() % 1000 < loss).then_some(Fate::Drop)
    });
    assert_eq!(run.latencies.len(), n, "every message arrives");
    run
}

#[test]
fn a_message_too_large_to_share_a_packet_gets_a_copy_probe_half_an_itt_later() {
    // 1 KiB every 16 ms: two 1040-byte chunks never share a 1452-byte packet,
    // so bundling alone copies nothing; the copy probe sends each message
    // again in a packet of its own 8 ms later, within the budget. One first
    // transmission in ten is lost.
    // The stream starts with room in its cwnd for the 7 packets it keeps in
    // flight: the copy probe goes only while the send queue is empty.
    let (size, n) = (1024, 1500);
    let open = |c: Config| Config {
        initial_cwnd: Some(20_000),
        ..c
    };
    let without = first_transmissions_lost(open(budget(0)), size, n, 100, 0xface);
    let bundling = first_transmissions_lost(open(budget(200)), size, n, 100, 0xface);
    let probe = open(Config {
        redundancy_copy_probe: true,
        ..budget(200)
    });
    let with = first_transmissions_lost(probe, size, n, 100, 0xface);
    let ratio = with.wire_bytes as f64 / without.wire_bytes as f64;
    eprintln!(
        "1 KiB / 16 ms / 10% of first transmissions lost: p99 {:?} without, {:?} bundling \
         only, {:?} with the copy probe; bytes {} / {} = {ratio:.3}; {} copies",
        without.p99(),
        bundling.p99(),
        with.p99(),
        with.wire_bytes,
        without.wire_bytes,
        with.copies,
    );
    assert_eq!(bundling.copies, 0, "nothing fits beside a 1 KiB chunk");
    assert!(with.copies > n / 2, "{}", with.copies);
    // Each copy in its own packet costs its headers too: within 100%.
    let copy_bytes = with.copy_bytes + with.copies as u64 * (IP_UDP + 12);
    assert!(
        copy_bytes <= with.base_bytes,
        "{copy_bytes} > {}",
        with.base_bytes
    );
    assert!(ratio <= 2.0, "{ratio}");
    // A lost message arrives with its copy, half an ITT later.
    assert!(with.p99() <= ms(50 + 8 + 2), "{:?}", with.p99());
    assert!(with.p99() * 4 < without.p99());
}

#[test]
fn copies_leave_the_flight_size_cwnd_and_rtt_measurement_as_they_were() {
    // No loss. With copies every chunk still counts once in the flight size
    // (one 80-byte chunk per outstanding packet, at every moment), cwnd is
    // what it is without them, nothing is taken for a loss (the peer's
    // duplicate reports are none: no recovery, no T3), and the RTT is still
    // measured (copies leave the RTT probe alone).
    let observe = |cfg: Config| {
        let mut p = Pair::new(ms(50), Config::rfc9260());
        let a = p.connect(cfg).0;
        p.warm_up();
        let mut miscounted = 0;
        for i in 0..300 {
            if i == 150 {
                // The path lengthens to 80 ms one way: the RTT estimate follows.
                (p.latency_ab, p.latency_ba) = (ms(80), ms(80));
            }
            p.a_send(OutgoingMessage::new(0, vec![7; 64]));
            for _ in 0..16 {
                p.run_for(ms(1));
                let s = p.a.association(a).unwrap().stats().clone();
                miscounted += usize::from(s.flight_size != 80 * s.packets_outstanding);
            }
            p.b_recv_all();
        }
        let stats = p.a.association(a).unwrap().stats().clone();
        let bundled = p
            .a_retransmissions()
            .iter()
            .filter(|r| r.2 == RetransmitCause::Bundled)
            .count();
        (miscounted, stats, bundled)
    };
    let (_, plain, none) = observe(budget(0));
    let (miscounted, stats, bundled) = observe(budget(200));
    assert_eq!(none, 0);
    assert!(bundled > 300, "{bundled}");
    assert_eq!(miscounted, 0, "moments when the flight size counted a copy");
    assert_eq!((stats.t3_expirations, stats.fast_recoveries), (0, 0));
    assert_eq!(stats.cwnd, plain.cwnd);
    let srtt = stats.srtt.unwrap();
    assert!(srtt >= ms(140) && srtt <= ms(180), "{srtt:?}");
}

/// The table of the report: p99 and bytes with and without copies, 64 B and
/// 1 KiB every 16 ms over 100 ms RTT at 2, 5 and 10% random loss, from the
/// RFC 9260 baseline and from `low-latency`. Run by hand:
/// `cargo test -p brisk-proto --test redundancy measure -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement, printed; run by hand"]
fn measure_the_application_case() {
    for (name, base) in [
        ("rfc9260", Config::rfc9260()),
        ("low-latency", Config::low_latency()),
    ] {
        for size in [64, 1024] {
            for loss in [20, 50, 100] {
                let on = Config {
                    redundancy_budget: 200,
                    redundancy_copy_probe: true,
                    ..base.clone()
                };
                let run = |cfg: Config| {
                    let mut rng = XorShift(0xabc);
                    stream(cfg, size, ms(16), 2000, move |s| {
                        (s.dir == Dir::AtoB && rng.next() % 1000 < loss).then_some(Fate::Drop)
                    })
                };
                let (off, with) = (run(base.clone()), run(on));
                println!(
                    "{name:12} {size:5} B {:4.1}%: p99 {:8.1} ms -> {:8.1} ms, bytes x{:.3}, \
                     {} copies, {} and {} of 2000 delivered",
                    loss as f64 / 10.0,
                    off.p99().as_secs_f64() * 1000.0,
                    with.p99().as_secs_f64() * 1000.0,
                    with.wire_bytes as f64 / off.wire_bytes as f64,
                    with.copies,
                    off.latencies.len(),
                    with.latencies.len(),
                );
            }
        }
    }
}

#[test]
fn a_lost_fast_retransmission_of_a_copied_chunk_is_detected_without_waiting_for_t3() {
    // Every packet that carries the 50th message in its first 300 ms is
    // lost: the original, its copies and its fast retransmission (about
    // 180 ms on). The SACKs that follow are drawn by chunks that were copied
    // too; timed from their first transmission they still prove the
    // retransmission lost (RFC 8985 6.2's question), and it goes again at
    // once instead of after T3's 1 s.
    let cfg = Config {
        lost_retransmission_detection: true,
        ..budget(200)
    };
    let mut lost: Option<(u32, Time)> = None;
    let run = stream(cfg, 64, ms(16), 200, move |s| {
        if s.dir != Dir::AtoB {
            return None;
        }
        if s.data_ordinal == Some(50) {
            lost = s.tsns.last().map(|&t| (t, s.sent_at));
        }
        let hit = lost.is_some_and(|(t, at)| s.tsns.contains(&t) && s.sent_at < at + ms(300));
        hit.then_some(Fate::Drop)
    });
    assert_eq!(run.latencies.len(), 200);
    let worst = *run.latencies.last().unwrap();
    assert!(worst < ms(500), "{worst:?}");
}

#[test]
fn copies_do_not_count_against_a_messages_retransmission_limit() {
    // RFC 7496 4 / RFC 3758 3.5 A: messages that may be retransmitted once.
    // The 40th loses its original and every copy (all that carry it in its
    // first 100 ms); its one retransmission is still allowed, goes, and
    // delivers it: the copies did not use up its limit.
    let cfg = Config {
        partial_reliability: true,
        ..budget(200)
    };
    let b_cfg = Config {
        partial_reliability: true,
        ..Config::rfc9260()
    };
    let mut p = Pair::new(ms(50), b_cfg);
    p.connect(cfg);
    p.warm_up();
    let mut lost: Option<(u32, Time)> = None;
    p.rule(move |s| {
        if s.dir != Dir::AtoB {
            return None;
        }
        if s.data_ordinal == Some(40) {
            lost = s.tsns.last().map(|&t| (t, s.sent_at));
        }
        let hit = lost.is_some_and(|(t, at)| s.tsns.contains(&t) && s.sent_at < at + ms(100));
        hit.then_some(Fate::Drop)
    });
    let mut received = 0;
    for _ in 0..100 {
        p.a_send(OutgoingMessage::new(0, vec![3; 64]).with_max_retransmits(1));
        p.run_for(ms(16));
        received += p.b_recv_all().len();
    }
    p.run_for(ms(3000));
    received += p.b_recv_all().len();
    let causes: Vec<RetransmitCause> = p.a_retransmissions().iter().map(|r| r.2).collect();
    assert!(
        causes
            .iter()
            .filter(|c| **c == RetransmitCause::Bundled)
            .count()
            > 100
    );
    assert!(causes.contains(&RetransmitCause::FastRetransmit));
    assert_eq!(p.a_abandoned(), vec![]);
    assert_eq!(received, 100);
}
