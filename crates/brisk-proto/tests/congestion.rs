//! Congestion control under random loss (issue 28): an application-limited
//! stream (1 KiB every 16 ms, 512 kbit/s) over 100 ms RTT with Bernoulli
//! loss on the data direction, with RFC 9260 7.2, CUBIC (RFC 9438) and
//! RFC 7661 congestion window validation; and a bulk transfer with CUBIC.

mod harness;

use brisk_proto::{Config, CongestionAlgorithm, OutgoingMessage};
use harness::{Dir, Fate, Pair, ms};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// What one run of the stream measured.
#[derive(Debug)]
struct Run {
    /// Once a second: (cwnd, messages sent but not yet delivered).
    trace: Vec<(u32, u64)>,
    /// One-way message latencies, ms, sorted.
    latencies: Vec<u64>,
    sent: u64,
}

impl Run {
    fn percentile(&self, p: f64) -> u64 {
        let i = ((self.latencies.len() as f64 - 1.0) * p).round() as usize;
        self.latencies[i]
    }

    /// The backlog at the end, and its largest value over the first half.
    fn backlog_end_and_first_half_max(&self) -> (u64, u64) {
        let half = self.trace.len() / 2;
        let first = self.trace[..half].iter().map(|t| t.1).max().unwrap_or(0);
        (self.trace.last().map_or(0, |t| t.1), first)
    }

    fn mean_cwnd(&self) -> u64 {
        self.trace.iter().map(|t| u64::from(t.0)).sum::<u64>() / self.trace.len().max(1) as u64
    }
}

/// A sends a 1 KiB message every 16 ms for `secs` seconds over 50 ms one
/// way, each packet carrying DATA from A to B lost with probability `loss`
/// (seeded). B runs RFC 9260's defaults (delayed SACK).
fn stream(cfg: Config, loss: f64, secs: u64, seed: u64) -> Run {
    let mut p = Pair::new(ms(50), Config::rfc9260());
    p.connect(cfg);
    p.warm_up();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    p.rule(move |s| {
        (s.dir == Dir::AtoB && s.has_data() && rng.random_bool(loss)).then_some(Fate::Drop)
    });
    let a = p.a_id.expect("connected");
    let mut run = Run {
        trace: Vec::new(),
        latencies: Vec::new(),
        sent: 0,
    };
    let mut delivered = 0u64;
    let per_sec = 1000 / 16;
    for i in 0..secs * per_sec {
        let mut payload = vec![0u8; 1024];
        payload[..8].copy_from_slice(&p.now.as_micros().to_be_bytes());
        p.a_send(OutgoingMessage::new(0, payload));
        run.sent += 1;
        p.run_for(ms(16));
        for m in p.b_recv_all() {
            let sent = u64::from_be_bytes(m.payload[..8].try_into().unwrap());
            run.latencies.push((p.now.as_micros() - sent) / 1000);
            delivered += 1;
        }
        if (i + 1) % per_sec == 0 {
            let cwnd = p.a.association(a).unwrap().stats().cwnd;
            run.trace.push((cwnd, run.sent - delivered));
        }
    }
    run.latencies.sort_unstable();
    run
}

fn cfg(cc: CongestionAlgorithm, cwv: bool) -> Config {
    Config {
        congestion_control: cc,
        cwnd_validation: cwv,
        ..Config::rfc9260()
    }
}

fn report(name: &str, r: &Run) {
    let cwnds: Vec<u32> = r.trace.iter().map(|t| t.0).collect();
    let backlog: Vec<u64> = r.trace.iter().map(|t| t.1).collect();
    eprintln!(
        "{name}: p50 {} ms, p99 {} ms, mean cwnd {} B\n  cwnd/s {cwnds:?}\n  backlog/s {backlog:?}",
        r.percentile(0.5),
        r.percentile(0.99),
        r.mean_cwnd()
    );
}

/// The case, all four controllers at 2, 5 and 10% loss, printed
/// (`--nocapture`) for the lab's record. At 10% none keeps up: a
/// loss-driven window averages about 1.2/sqrt(p) segments per RTT (Mathis),
/// under 4 of them where the stream needs about 7 per RTT, so the window
/// sits at RFC 9260's floor of 4*PMDCS; CUBIC's 0.7 and RFC 7661 change
/// the depth of each cut, not that. RFC 9260's backlog grows all the run.
#[test]
fn at_ten_percent_loss_a_loss_based_window_falls_behind_the_stream() {
    let mut rfc9260_at_10 = None;
    for (name, c) in [
        ("rfc9260", cfg(CongestionAlgorithm::Rfc9260, false)),
        ("rfc9260+cwv", cfg(CongestionAlgorithm::Rfc9260, true)),
        ("cubic", cfg(CongestionAlgorithm::Cubic, false)),
        ("cubic+cwv", cfg(CongestionAlgorithm::Cubic, true)),
    ] {
        for loss in [0.02, 0.05, 0.10] {
            let r = stream(c.clone(), loss, 60, 28);
            report(&format!("{name} {loss}"), &r);
            if name == "rfc9260" && loss == 0.10 {
                rfc9260_at_10 = Some(r);
            }
        }
    }
    let r = rfc9260_at_10.unwrap();
    let (end, first_half) = r.backlog_end_and_first_half_max();
    assert!(
        end > first_half && end > r.sent / 10,
        "the backlog grows: {first_half} then {end} of {} messages",
        r.sent
    );
}

/// RFC 7661: the stream uses about half its window or more (validated),
/// so the window may grow past what it uses between losses, where RFC
/// 9260 7.2.1/7.2.2 and RFC 9438 5.8 hold it at the flight; the headroom is
/// what the next cut takes. Bounded: pipeACK >= cwnd/2 caps it near twice
/// the flight (8 chunks of 1040 bytes within one RTT at most, here).
#[test]
fn with_rfc_7661_a_rate_limited_stream_keeps_headroom_above_its_flight_between_losses() {
    for cc in [CongestionAlgorithm::Rfc9260, CongestionAlgorithm::Cubic] {
        let off = stream(cfg(cc, false), 0.02, 60, 28);
        let on = stream(cfg(cc, true), 0.02, 60, 28);
        report(&format!("{cc:?} 0.02"), &off);
        report(&format!("{cc:?}+cwv 0.02"), &on);
        assert!(
            on.mean_cwnd() * 4 >= off.mean_cwnd() * 5,
            "{cc:?}: mean cwnd {} with RFC 7661, {} without",
            on.mean_cwnd(),
            off.mean_cwnd()
        );
        let max = on.trace.iter().map(|t| t.0).max().unwrap();
        assert!(max <= 2 * 8 * 1040 + 1440, "{cc:?}: cwnd {max}");
        // The stream keeps up either way at 2%.
        assert!(on.percentile(0.99) < 500 && off.percentile(0.99) < 500);
    }
}

/// A bulk sender with CUBIC (always 200 messages of 1 KiB queued) over
/// 50 ms one way; the `drop_at`-th DATA packet is lost. Returns cwnd every
/// millisecond and when the fast retransmit happened (index into the trace).
fn bulk_with_one_loss(cc: CongestionAlgorithm, drop_at: u64, secs: u64) -> (Vec<u32>, usize) {
    // No Max.Burst: the harness has no bottleneck to pace the flow, and a
    // burst limit would leave the window short of full (not cwnd-limited).
    let cfg = Config {
        congestion_control: cc,
        max_burst: 0,
        ..Config::rfc9260()
    };
    let mut p = Pair::new(ms(50), Config::rfc9260());
    p.connect(cfg);
    p.warm_up();
    p.drop_data_packet(Dir::AtoB, drop_at);
    let a = p.a_id.expect("connected");
    let mut trace = Vec::new();
    let mut loss_at = None;
    for i in 0..secs * 1000 {
        let assoc = p.a.association(a).unwrap();
        while assoc.queued_messages() < 200 {
            let now = p.now;
            if assoc
                .send(now, OutgoingMessage::new(0, vec![7u8; 1024]))
                .is_err()
            {
                break;
            }
        }
        p.run_for(ms(1));
        p.b_recv_all();
        let stats = p.a.association(a).unwrap().stats();
        if loss_at.is_none() && stats.fast_recoveries > 0 {
            loss_at = Some(i as usize);
        }
        trace.push(stats.cwnd);
    }
    (
        trace,
        loss_at.expect("the loss was repaired by fast retransmit"),
    )
}

#[test]
fn a_bulk_cubic_flow_keeps_0_7_of_its_window_on_a_loss_and_regrows_along_the_cubic_curve() {
    let (trace, loss) = bulk_with_one_loss(CongestionAlgorithm::Cubic, 2000, 12);
    let after = trace[loss];
    // RFC 9438 4.6: cwnd * 0.7 (RFC 9260 would keep half), of the window
    // the SACK that found the loss had just grown by up to one PMDCS
    // (RFC 9260 7.2.4: 7.2.1 before 7.2.3).
    let w_max = f64::from(after) / 0.7;
    let before = f64::from(trace[loss - 1]);
    assert!(
        (before..=before + 1440.0).contains(&w_max),
        "{after} / 0.7 against {before}"
    );
    let w_max = w_max as u32;
    // 4.2: back at W_max after K = cbrt(W_max (1 - 0.7) / 0.4) seconds
    // (segments of one PMDCS, 1440 bytes), concave before, convex after.
    let k = (f64::from(w_max) / 1440.0 * 0.3 / 0.4).cbrt();
    let at = |secs: f64| trace[loss + (secs * 1000.0) as usize];
    eprintln!(
        "W_max {w_max} after {after} K {k:.2} s; cwnd per 0.5 s: {:?}",
        trace[loss..].iter().step_by(500).collect::<Vec<_>>()
    );
    // Along W_cubic(t), t from the loss (the epoch starts about an RTT
    // later, the target is W_cubic one RTT ahead), within 3%.
    let mut t = 0.5;
    while t < k {
        let curve = f64::from(w_max) + 0.4 * 1440.0 * (t - k).powi(3);
        let off = f64::from(at(t)) / curve - 1.0;
        assert!(off.abs() < 0.03, "at {t} s: {} against {curve:.0}", at(t));
        t += 0.5;
    }
    // The plateau: close to W_max just before K.
    let near_k = f64::from(at(k - 0.3)) / f64::from(w_max);
    assert!(
        (0.98..=1.0).contains(&near_k),
        "cwnd before K = {near_k} W_max"
    );
    let early = at(k / 2.0) - at(0.2);
    let late = at(k - 0.2) - at(k / 2.0);
    assert!(early > late, "concave below W_max: {early} then {late}");
    // Past W_max at this window (56 segments at 100 ms) the Reno-friendly
    // W_est leads (RFC 9438 4.3, alpha 1 once W_est >= cwnd_prior): about
    // one PMDCS per RTT.
    let per_sec = at(k + 1.5) - at(k + 0.5);
    assert!(
        (7 * 1440..=11 * 1440).contains(&per_sec),
        "{per_sec} bytes in a second past K"
    );
    // RFC 9260 halves and regrows by one PMDCS per RTT: far slower.
    let (reno, reno_loss) = bulk_with_one_loss(CongestionAlgorithm::Rfc9260, 400, 8);
    let halved = f64::from(reno[reno_loss]) * 2.0;
    let before = f64::from(reno[reno_loss - 1]);
    assert!(
        (before..=before + 1440.0).contains(&halved),
        "{halved} {before}"
    );
}

/// RFC 7661 4.3: a window kept through an idle spell (within the five
/// minute NVP), where RFC 9260 7.2.1 halves it per RTO down to 4*PMDCS.
/// Counts the DATA packets a burst after 10 s of silence sends before the
/// first SACK can come back.
#[test]
fn with_rfc_7661_the_window_survives_an_idle_spell() {
    let first_flight = |cc: CongestionAlgorithm, cwv: bool| {
        let cfg = Config {
            max_burst: 0,
            ..cfg(cc, cwv)
        };
        let mut p = Pair::new(ms(50), Config::rfc9260());
        p.connect(cfg);
        p.warm_up();
        let a = p.a_id.expect("connected");
        // Grow the window: 300 messages as fast as it allows.
        for _ in 0..300 {
            p.a_send(OutgoingMessage::new(0, vec![1u8; 1024]));
        }
        p.run_for(ms(3000));
        assert_eq!(p.b_recv_all().len(), 300);
        let grown = p.a.association(a).unwrap().stats().cwnd;
        p.run_for(ms(10_000));
        p.log.clear();
        for _ in 0..100 {
            p.a_send(OutgoingMessage::new(0, vec![2u8; 1024]));
        }
        p.run_for(ms(90));
        (grown, p.data_packets(Dir::AtoB).len())
    };
    for cc in [CongestionAlgorithm::Rfc9260, CongestionAlgorithm::Cubic] {
        let (grown, decayed) = first_flight(cc, false);
        let (_, kept) = first_flight(cc, true);
        eprintln!(
            "{cc:?}: cwnd {grown} before the spell; {decayed} packets after it, {kept} with RFC 7661"
        );
        // 4*PMDCS = 5760 bytes: six 1040-byte chunks.
        assert_eq!(decayed, 6, "{cc:?}");
        assert!(
            kept as u32 * 1040 >= grown,
            "{cc:?}: {kept} packets for a cwnd of {grown}"
        );
    }
}
