//! The BBR-like controller through the pair harness (issue 28): a stream
//! that random loss must not slow below its own rate, and a bulk transfer
//! through a bottleneck that must fill it without an unbounded flight.

mod harness;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use brisk_proto::{Config, CongestionAlgorithm, OutgoingMessage, Time};
use harness::{Dir, Fate, Pair, ms};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn with_cc(mut cfg: Config, cc: CongestionAlgorithm) -> Config {
    cfg.congestion_control = cc;
    cfg
}

/// What a periodic stream saw: each message's latency, in send order
/// (`None`: never delivered).
struct StreamRun {
    latencies: Vec<Option<Duration>>,
}

impl StreamRun {
    fn delivered(&self) -> Vec<Duration> {
        let mut v: Vec<Duration> = self.latencies.iter().flatten().copied().collect();
        v.sort();
        v
    }

    fn percentile(&self, p: usize) -> Duration {
        let v = self.delivered();
        let all = self.latencies.len();
        // Undelivered messages count as infinitely late.
        let i = (all * p / 100).min(all - 1);
        v.get(i).copied().unwrap_or(Duration::MAX)
    }

    /// The mean latency of the last tenth of the messages.
    fn tail_mean(&self) -> Duration {
        let n = self.latencies.len() / 10;
        let tail = &self.latencies[self.latencies.len() - n..];
        // Undelivered: as if a minute late.
        let sum: Duration = tail
            .iter()
            .map(|l| l.unwrap_or(Duration::from_secs(60)))
            .sum();
        sum / n as u32
    }
}

/// The application case: `count` messages of `size` bytes (1 KiB:
/// 512 kbit/s), one every 16 ms, over 50 ms each way with `loss` Bernoulli loss of every
/// packet from A to B; the run ends 10 s after the last send.
fn periodic_stream(cfg: Config, size: usize, loss: f64, count: usize, seed: u64) -> StreamRun {
    let mut p = Pair::new(ms(50), cfg.clone());
    p.connect(cfg);
    p.warm_up();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    p.rule(move |s| (s.dir == Dir::AtoB && rng.random_bool(loss)).then_some(Fate::Drop));
    let mut sent_at = Vec::with_capacity(count);
    let mut latencies = vec![None; count];
    let start = p.now;
    let end = start + ms(16) * count as u32 + Duration::from_secs(10);
    while p.now < end {
        let due = start + ms(16) * sent_at.len() as u32;
        if sent_at.len() < count && p.now >= due {
            let i = sent_at.len() as u32;
            let mut body = vec![0u8; size.max(4)];
            body[..4].copy_from_slice(&i.to_be_bytes());
            p.a_send(OutgoingMessage::new(0, body));
            sent_at.push(p.now);
        }
        p.run_for(ms(1));
        for m in p.b_recv_all() {
            let i = u32::from_be_bytes(m.payload[..4].try_into().unwrap()) as usize;
            latencies[i] = Some(p.now.since(sent_at[i]));
        }
    }
    StreamRun { latencies }
}

#[test]
fn bbr_keeps_a_lossy_periodic_stream_at_its_rate_where_rfc9260_falls_behind() {
    // The case with the `low-latency` preset: 60 s of the stream at
    // 10% loss on the data direction, with each controller. Without copies:
    // a copy that repairs a loss hides it from either controller.
    let count = 3750;
    let no_copies = Config {
        redundancy_budget: 0,
        ..Config::low_latency()
    };
    let run = |cc| periodic_stream(with_cc(no_copies.clone(), cc), 1024, 0.10, count, 7);
    let (bbr, rfc) = (
        run(CongestionAlgorithm::Bbr),
        run(CongestionAlgorithm::Rfc9260),
    );
    let (b50, b99) = (bbr.percentile(50), bbr.percentile(99));
    let (r50, r99) = (rfc.percentile(50), rfc.percentile(99));
    eprintln!(
        "bbr p50 {b50:?} p99 {b99:?} tail {:?}; rfc9260 p50 {r50:?} p99 {r99:?} tail {:?}",
        bbr.tail_mean(),
        rfc.tail_mean()
    );
    // BBR keeps up: every message arrives, about one RTT late at the
    // median, and the last ones are no later than the rest (no backlog).
    assert_eq!(bbr.delivered().len(), count, "every message arrives");
    assert!(b50 < ms(150), "bbr p50 {b50:?}");
    assert!(b99 < ms(600), "bbr p99 {b99:?}");
    assert!(bbr.tail_mean() < ms(250), "bbr tail {:?}", bbr.tail_mean());
    // RFC 9260 7.2.3 halves cwnd on every loss: the stream falls behind its
    // own rate and the backlog grows for the whole run.
    assert!(r50 > ms(1000), "rfc9260 p50 {r50:?}");
    assert!(r99 > b99 * 5, "rfc9260 p99 {r99:?} vs bbr {b99:?}");
    assert!(
        rfc.tail_mean() > ms(2000),
        "rfc9260 tail {:?}",
        rfc.tail_mean()
    );
}

#[test]
fn bbr_never_holds_a_clean_app_limited_stream_back() {
    // No loss: every message takes the one-way delay with either controller;
    // PROBE_RTT (4 PMDCS, below this stream's flight) must not hold an
    // app-limited sender back every 10 s.
    let count = 3750;
    let run = |cc| periodic_stream(with_cc(Config::low_latency(), cc), 1024, 0.0, count, 7);
    let (bbr, rfc) = (
        run(CongestionAlgorithm::Bbr),
        run(CongestionAlgorithm::Rfc9260),
    );
    assert_eq!(rfc.percentile(99), ms(50));
    assert_eq!(bbr.percentile(99), ms(50), "max {:?}", bbr.percentile(100));
}

/// A one-way bottleneck from A to B: `rate` bytes/s with a drop-tail queue
/// of `queue` bytes; every packet from A waits for the link.
#[derive(Default)]
struct Bottleneck {
    free_at: Option<Time>,
    dropped: u64,
}

fn bottleneck(p: &mut Pair, rate: u64, queue: u64) -> Rc<RefCell<Bottleneck>> {
    let link = Rc::new(RefCell::new(Bottleneck::default()));
    let state = link.clone();
    p.rule(move |s| {
        if s.dir != Dir::AtoB {
            return None;
        }
        let mut l = state.borrow_mut();
        let now = s.sent_at;
        let busy_until = l.free_at.unwrap_or(now).max(now);
        let backlog = u128::from(rate) * busy_until.since(now).as_micros() / 1_000_000;
        let len = s.bytes.len() as u64 + 28;
        if backlog as u64 + len > queue {
            l.dropped += 1;
            return Some(Fate::Drop);
        }
        let done = busy_until + Duration::from_micros(len * 1_000_000 / rate);
        l.free_at = Some(done);
        Some(Fate::Delay(done.since(now)))
    });
    link
}

/// What a bulk transfer through a bottleneck did after its first 2 s.
struct BulkRun {
    goodput: u64,
    median_flight: u64,
    max_flight: u64,
    /// Percent of A's DATA packets the queue dropped.
    drop_percent: u64,
}

/// 8 s of bulk transfer with `cfg` through `rate` bytes/s, 20 ms each way
/// (BDP `rate` x 40 ms), and a drop-tail queue of `queue` bytes.
fn bulk(cfg: Config, rate: u64, queue: u64) -> BulkRun {
    let mut p = Pair::new(ms(20), cfg.clone());
    let (a_id, _) = p.connect(cfg);
    p.warm_up();
    let link = bottleneck(&mut p, rate, queue);
    let start = p.now;
    let (mut received, mut received_at_2s) = (0u64, 0u64);
    let mut flights = Vec::new();
    while p.now < start + Duration::from_secs(8) {
        let now = p.now;
        let assoc = p.a.association(a_id).expect("association");
        // Always more queued than any window: the sender is never app-limited.
        while assoc.stats().messages_sent < assoc.stats().messages_acked + 256 {
            if assoc
                .send(now, OutgoingMessage::new(0, vec![7u8; 1200]))
                .is_err()
            {
                break;
            }
        }
        p.run_for(ms(1));
        received += p
            .b_recv_all()
            .iter()
            .map(|m| m.payload.len() as u64)
            .sum::<u64>();
        if p.now.since(start) <= Duration::from_secs(2) {
            received_at_2s = received;
        } else {
            let assoc = p.a.association_ref(a_id).expect("association");
            flights.push(u64::from(assoc.flight_size()));
        }
    }
    flights.sort();
    let sent = p.data_packets(Dir::AtoB).len() as u64;
    let run = BulkRun {
        goodput: (received - received_at_2s) / 6,
        median_flight: flights[flights.len() / 2],
        max_flight: flights.last().copied().unwrap_or(0),
        drop_percent: link.borrow().dropped * 100 / sent.max(1),
    };
    eprintln!(
        "queue {queue}: goodput {} of {rate} B/s, flight median {} max {}, {}% dropped",
        run.goodput, run.median_flight, run.max_flight, run.drop_percent
    );
    run
}

#[test]
fn bbr_fills_a_bottleneck_with_a_flight_near_its_bdp() {
    // 500 kB/s (4 Mbit/s), 20 ms each way: BDP 20 kB; a queue of 10 BDP,
    // so that the link does not bound the flight, the controller does.
    let (rate, bdp) = (500_000, 20_000);
    let run = bulk(
        with_cc(Config::rfc9260(), CongestionAlgorithm::Bbr),
        rate,
        10 * bdp,
    );
    // Most of the link: user data over wire bytes is 1200/1260 at best.
    assert!(run.goodput > rate * 8 / 10, "goodput {}", run.goodput);
    // The flight follows the model, about one BDP (unpaced, the gain
    // cycle's flight), not the queue.
    assert!(
        run.median_flight < bdp * 3 / 2,
        "median {}",
        run.median_flight
    );
    assert!(run.max_flight < 2 * bdp, "max {}", run.max_flight);
}

#[test]
fn bbr_fills_a_shallow_bottleneck_without_overflowing_it() {
    // A queue of half a BDP: a standing flight of 2 BDP (BBR v1's cwnd_gain
    // without a pacer) would overflow it all the time.
    let (rate, bdp) = (500_000, 20_000);
    let run = bulk(
        with_cc(Config::rfc9260(), CongestionAlgorithm::Bbr),
        rate,
        bdp / 2,
    );
    assert!(run.goodput > rate * 7 / 10, "goodput {}", run.goodput);
    assert!(run.drop_percent < 8, "{}% dropped", run.drop_percent);
}
