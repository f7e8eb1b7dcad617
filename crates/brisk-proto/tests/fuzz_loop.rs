//! Stateful fuzzing of brisk-proto on stable Rust, bounded to run in `cargo test`.
//!
//! Each case is a seed: a ChaCha RNG seeded with it feeds the step interpreter
//! of `tests/fuzzing/` (two endpoints, a virtual clock, a lossy reordering
//! wire, application sends and reads, and injected packets of every chunk
//! type, mutated from captures or generated), which checks its invariants
//! after every step. The same seed gives the same run, byte for byte.
//!
//! The loop runs cases until about 25 s of wall time have passed, on every
//! core, then prints how many cases and steps it ran.
//!
//! One case in four is a squatter world (`fuzzing/squat.rs`): B is
//! multi-homed, and a third host lists A's address and third-party ones in
//! its INIT before A connects (RFC 9260 5.4, 5.2.2).
//!
//! Environment:
//! - `BRISK_FUZZ_SECS=<seconds>` (default 25): the wall-time budget; raise it
//!   for a deep run, e.g. `BRISK_FUZZ_SECS=3600 cargo test --release -p
//!   brisk-proto --test fuzz_loop -- --nocapture`.
//! - `BRISK_FUZZ_CASES=<n>`: stop after `n` cases as well.
//! - `BRISK_FUZZ_START=<n>`: the first seed (default 0), to explore other seeds.
//! - `BRISK_FUZZ_SEED=<n>`: run only that seed (decimal or 0x hex), with a
//!   trace of every step on stderr: how to reproduce a failure.
//! - `BRISK_FUZZ_TRACE=1`: trace every world (corpus replays too).
//! - `BRISK_FUZZ_RECONFIG=1`: every case is a reset world (below), not
//!   only one seed in four.
//!
//! Reset worlds: one seed in four (those equal to 1 modulo 4) negotiates
//! stream reconfiguration (RFC 6525) and partial reliability (RFC 3758) at
//! both ends, message interleaving (RFC 8260) at both ends or neither, and
//! a random stream scheduler; the applications send with random lifetimes
//! and retransmission limits and reset streams, add streams and reset
//! SSNs/TSNs mid-traffic (`fuzzing::Plan::reset_world`). They share the
//! default budget with the other worlds.
//!
//! A failing case panics with its seed and step. Seeds that once found a bug
//! go in [`REGRESSION_SEEDS`] and run first, every time.
//!
//! `tests/corpus/packet/*.bin` are raw SCTP packets replayed into an
//! established association (the cargo-fuzz `packet` target's input format);
//! `tests/corpus/stateful/*.bin` are decision byte streams (the `stateful`
//! target's format). Both are checked here and seed the cargo-fuzz runs.
//! `cargo test -p brisk-proto --test fuzz_loop -- --ignored write_corpus`
//! writes them again.

mod fuzzing;

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use fuzzing::source::Recorder;
use fuzzing::{SliceSource, Source, Tally};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Seeds that found bugs; they run before the timed loop. See
/// `tests/fuzz_findings.rs` for each bug reduced to a small test.
const REGRESSION_SEEDS: &[u64] = &[
    // A lossless path, and still PeerUnreachable: a message larger than the
    // receiver's buffer never completes, and window probes count as errors.
    0x0, 0x23, // send_held() > send_buffer: send-time and held charges round differently.
    0x1e,
    // Squatter world: after a Stale Cookie error, T1-init sent INIT to an
    // unconfirmed address (multihoming.rs reduces it).
    0xd60,
    // Squatter world with resets: a FORWARD TSN (no destination of its own)
    // rode on a HEARTBEAT to an unconfirmed address (RFC 9260 5.4).
    0xa0d, 0xa1d,
    // A world that carries 230 bytes a second (128-byte MTU, Max.Burst 1, a
    // 388 ms SACK delay) was still delivering when the drain's 30 minutes
    // ran out: slow, not stuck, and no longer judged.
    0x1eaa87,
];

/// Seeds that found bugs in reset worlds (`BRISK_FUZZ_RECONFIG=1`); they
/// run first, as reset worlds, every time.
const RESET_REGRESSION_SEEDS: &[u64] = &[
    // MessageAcked for a message abandoned before (once the cumulative ack
    // passed it after the FORWARD TSN): `an_abandoned_message_is_never_reported_acknowledged`.
    0x3, 0xa,
    // A stream reset before an SSN/TSN reset left its old TSN behind, and
    // FORWARD TSNs left out the stream's entry: the receiver waited forever
    // (`after_an_ssn_tsn_reset_a_forward_tsn_still_names_a_stream_reset_before`).
    0x14d,
    // An I-FORWARD-TSN past a lost fragment left its unfinished message
    // filling the buffer a deferred reset needed: abort
    // (`an_iforward_tsn_past_a_missing_fragment_drops_its_unfinished_message`).
    0x208b4,
    // A request answered "In progress" every few milliseconds used up the
    // final drain's step budget before a backed-off T3 fired.
    0x97d8a,
    // The association ended (PeerUnreachable) while our SSN/TSN Reset
    // Request waited for its answer: the acknowledged messages held for it
    // were lost (`messages_held_for_an_unanswered_ssn_tsn_reset_are_delivered_when_the_association_ends`).
    0x2dd1e8,
    // Our outgoing reset of a stream failed after a FORWARD TSN had left out
    // the stream's entry for an abandoned message of the old numbering: the
    // peer waited for that SSN for good (`filter_forward_tsn` now keeps an
    // ordered entry while the FORWARD TSN does not pass the request's TSN).
    0x2df0b9,
];

/// Whether the case of `seed` is a reset world (see the module docs).
fn is_reset_world(seed: u64) -> bool {
    fuzzing::reconfig_mode() || reset_by_default(seed)
}

/// One seed in four is a reset world without `BRISK_FUZZ_RECONFIG`.
fn reset_by_default(seed: u64) -> bool {
    seed % 4 == 1
}

/// Steps per case at most (a case draws its own count up to this).
const MAX_STEPS: u64 = 600;

/// Decision bytes from a seeded ChaCha RNG.
struct RngSource {
    rng: ChaCha8Rng,
    buf: [u8; 8],
    left: usize,
}

impl RngSource {
    fn new(seed: u64) -> Self {
        Self {
            rng: ChaCha8Rng::seed_from_u64(seed),
            buf: [0; 8],
            left: 0,
        }
    }
}

impl Source for RngSource {
    fn byte(&mut self) -> u8 {
        if self.left == 0 {
            self.buf = self.rng.next_u64().to_le_bytes();
            self.left = 8;
        }
        self.left -= 1;
        self.buf[self.left]
    }
}

/// The number of steps of the case with `seed`.
fn steps_for(seed: u64) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xa5a5_5a5a_0f0f_f0f0);
    50 + rng.next_u64() % (MAX_STEPS - 50)
}

/// Runs one seeded case; a panic comes back as an error naming the seed and step.
fn run_seed(seed: u64, trace: bool) -> Result<Tally, String> {
    run_seed_in(seed, trace, is_reset_world(seed))
}

/// [`run_seed`], a reset world if `reset_world`.
fn run_seed_in(seed: u64, trace: bool, reset_world: bool) -> Result<Tally, String> {
    let progress = Cell::new(0);
    let label = format!(
        "seed {seed:#x}{}",
        if reset_world { " (reset world)" } else { "" }
    );
    let result = catch_unwind(AssertUnwindSafe(|| {
        fuzzing::run_case_in(
            Box::new(RngSource::new(seed)),
            label.clone(),
            steps_for(seed),
            trace,
            &progress,
            reset_world,
        )
    }));
    result.map_err(|e| {
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "non-string panic".into());
        format!(
            "fuzz_loop: seed {seed:#x} failed at step {}: {msg}\n  reproduce: \
             {}BRISK_FUZZ_SEED={seed:#x} cargo test -p brisk-proto --test fuzz_loop -- \
             --nocapture fuzz_loop",
            progress.get(),
            if reset_world && !reset_by_default(seed) {
                "BRISK_FUZZ_RECONFIG=1 "
            } else {
                ""
            }
        )
    })
}

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

/// CPU time of this process, from /proc (Linux); `None` elsewhere.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    // utime and stime are fields 14 and 15 of the whole line, in clock ticks
    // (100 per second on Linux).
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

#[test]
#[allow(
    clippy::disallowed_types,
    reason = "the loop's own wall-clock budget, not protocol time"
)]
fn fuzz_loop() {
    if let Some(seed) = env_u64("BRISK_FUZZ_SEED") {
        match run_seed(seed, true) {
            Ok(t) => println!("fuzz_loop: seed {seed:#x} passed: {t:?}"),
            Err(e) => panic!("{e}"),
        }
        return;
    }
    let secs = std::env::var("BRISK_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(25.0);
    let budget = Duration::from_secs_f64(secs);
    let max_cases = env_u64("BRISK_FUZZ_CASES").unwrap_or(u64::MAX);
    let start_seed = env_u64("BRISK_FUZZ_START").unwrap_or(0);
    let cpu0 = cpu_time();
    let started = std::time::Instant::now();

    let mut failures: Vec<String> = Vec::new();
    let mut total = Tally::default();
    let add = |total: &mut Tally, t: &Tally| {
        total.steps += t.steps;
        total.packets += t.packets;
        total.injected += t.injected;
        total.delivered += t.delivered;
        total.tainted += t.tainted;
        total.closes += t.closes;
        total.liveness_checked += t.liveness_checked;
        total.peer_restarts += t.peer_restarts;
        total.drains_unfinished += t.drains_unfinished;
    };
    for &seed in REGRESSION_SEEDS {
        match run_seed(seed, false) {
            Ok(t) => add(&mut total, &t),
            Err(e) => failures.push(e),
        }
    }
    for &seed in RESET_REGRESSION_SEEDS {
        match run_seed_in(seed, false, true) {
            Ok(t) => add(&mut total, &t),
            Err(e) => failures.push(e),
        }
    }
    let mut cases = (REGRESSION_SEEDS.len() + RESET_REGRESSION_SEEDS.len()) as u64;

    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(!failures.is_empty());
    let shared = Mutex::new((cases, total, failures));
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) && started.elapsed() < budget {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= max_cases {
                        break;
                    }
                    let result = run_seed(start_seed.wrapping_add(i), false);
                    let mut g = shared.lock().expect("no thread panics holding the lock");
                    g.0 += 1;
                    match result {
                        Ok(t) => add(&mut g.1, &t),
                        Err(e) => {
                            g.2.push(e);
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
    });
    let (n, total, failures) = shared.into_inner().expect("lock");
    cases = n;
    let wall = started.elapsed();
    let cpu = match (cpu0, cpu_time()) {
        (Some(a), Some(b)) => format!("{:.1} s CPU", (b - a).as_secs_f64()),
        _ => "CPU time unknown".into(),
    };
    println!(
        "fuzz_loop: {cases} cases, {} steps, {:.1} s wall, {cpu}, {threads} threads \
         ({} packets sent, {} injected, {} messages received of which {} carried injected \
         data, {} associations closed, {} cases checked for full delivery, {} still moving data \
         when the drain ran out, {} peer restarts)",
        total.steps,
        wall.as_secs_f64(),
        total.packets,
        total.injected,
        total.delivered,
        total.tainted,
        total.closes,
        total.liveness_checked,
        total.drains_unfinished,
        total.peer_restarts,
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(cases > 0 && total.steps > 0, "the loop ran no case");
    assert!(total.injected > 0, "no packet was injected");
    assert!(
        total.liveness_checked > 0,
        "no case reached the full-delivery check"
    );
    assert!(total.peer_restarts > 0, "no peer crashed and restarted");
}

#[test]
fn same_seed_same_bytes() {
    let run = |seed: u64| {
        let progress = Cell::new(0);
        let mut w = fuzzing::World::new(
            fuzzing::Dice::new(Box::new(RngSource::new(seed))),
            format!("seed {seed}"),
        );
        w.handshake();
        while w.tally.steps < 300 {
            progress.set(w.tally.steps);
            w.step();
        }
        w.finish();
        (w.wire_hash, w.tally.packets)
    };
    let a = run(7);
    assert_eq!(a, run(7), "the same seed gave different wire bytes");
    assert!(a.1 > 10, "the case sent almost nothing");
    assert_ne!(a, run(8), "two seeds gave the same run");
}

#[test]
fn recorded_decisions_replay_the_seeded_run() {
    // The bytes a seeded case consumed, fed back as a fuzz input, give the same run.
    let seed = 11;
    let rec = Recorder::new(RngSource::new(seed));
    let bytes = rec.bytes.clone();
    fn run(src: Box<dyn Source + '_>) -> (u64, u64) {
        let mut w = fuzzing::World::new(fuzzing::Dice::new(src), "replay".into());
        w.handshake();
        while w.tally.steps < 200 && !w.d.exhausted() {
            w.step();
        }
        (w.wire_hash, w.tally.steps)
    }
    let first = run(Box::new(rec));
    let recorded = bytes.borrow().clone();
    assert!(recorded.len() > 100);
    let second = run(Box::new(SliceSource::new(&recorded)));
    assert_eq!(first, second, "a recorded run replayed differently");
}

fn corpus_dir(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(kind)
}

fn corpus(kind: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir(kind))
        .unwrap_or_else(|e| panic!("tests/corpus/{kind}: {e}"))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let b = std::fs::read(&p).expect("read corpus file");
            (p, b)
        })
        .collect()
}

#[test]
fn corpus_packets_replay_into_an_established_association() {
    let files = corpus("packet");
    assert!(
        files.len() >= 20,
        "tests/corpus/packet holds {} files",
        files.len()
    );
    let mut kinds = std::collections::BTreeSet::new();
    for (path, bytes) in &files {
        kinds.extend(fuzzing::chunk_types(bytes));
        let r = catch_unwind(|| fuzzing::packet_case(bytes));
        assert!(r.is_ok(), "{} failed", path.display());
    }
    // The corpus covers the chunk types of a whole association's life.
    for t in [
        0u8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14, 64, 129, 130, 192,
    ] {
        assert!(
            kinds.contains(&t),
            "no corpus packet carries chunk type {t}"
        );
    }
}

#[test]
fn corpus_stateful_inputs_replay() {
    let files = corpus("stateful");
    assert!(
        files.len() >= 4,
        "tests/corpus/stateful holds {} files",
        files.len()
    );
    for (path, bytes) in &files {
        let r = catch_unwind(|| fuzzing::stateful_case(bytes));
        assert!(r.is_ok(), "{} failed", path.display());
    }
}

/// Writes the corpus again: real packets of the fixed established world, one
/// generated packet of each chunk type, and a few mutants, for `packet`; the
/// decision bytes of a few seeded cases, for `stateful`.
#[test]
#[ignore = "writes tests/corpus; run by hand"]
fn write_corpus() {
    use fuzzing::generate;
    let dir = corpus_dir("packet");
    std::fs::create_dir_all(&dir).unwrap();
    let mut packets: Vec<(String, Vec<u8>)> = Vec::new();
    for p in fuzzing::sample_packets() {
        let types = fuzzing::chunk_types(&p);
        let name = types
            .iter()
            .map(|t| format!("{t}"))
            .collect::<Vec<_>>()
            .join("-");
        packets.push((format!("real-{name}"), p));
    }
    // Generated: one of each kind (tags are set when the packet is replayed).
    let aim = generate::Aim {
        streams: 4,
        src_port: 5000,
        dst_port: 5000,
        own_packet: packets
            .iter()
            .find(|(_, p)| fuzzing::chunk_types(p).first() == Some(&0))
            .map(|(_, p)| p.clone()),
        ..generate::Aim::default()
    };
    let mut dice = fuzzing::Dice::new(Box::new(fuzzing::XorShift(99)));
    for typ in [
        0u8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14, 64, 129, 130, 192, 194, 0xFE,
    ] {
        for k in 0..2 {
            let c = generate::chunk_of(&mut dice, &aim, typ);
            let mut out = Vec::new();
            let header = brisk_proto::wire::CommonHeader {
                src_port: 5000,
                dst_port: 5000,
                verification_tag: 0,
                checksum: 0,
            };
            let mut wr = brisk_proto::wire::PacketWriter::new(&mut out, &header);
            if wr.push(&c).is_err() {
                continue;
            }
            wr.finish().unwrap();
            packets.push((format!("gen-{typ}-{k}"), out));
        }
    }
    // Mutants of the real packets.
    let reals: Vec<Vec<u8>> = packets
        .iter()
        .filter(|(n, _)| n.starts_with("real"))
        .map(|(_, p)| p.clone())
        .collect();
    let refs: Vec<&[u8]> = reals.iter().map(Vec::as_slice).collect();
    let material = fuzzing::mutate::Material {
        others: &refs,
        tags: &[],
    };
    for (i, base) in reals.iter().enumerate().take(16) {
        let m = fuzzing::mutate::mutant(&mut dice, base, &material);
        packets.push((format!("mut-{i}"), m));
    }
    let mut seen = std::collections::BTreeSet::new();
    for (name, bytes) in packets {
        if seen.insert(bytes.clone()) {
            std::fs::write(dir.join(format!("{name}-{}.bin", seen.len())), bytes).unwrap();
        }
    }
    let dir = corpus_dir("stateful");
    std::fs::create_dir_all(&dir).unwrap();
    for seed in [1u64, 2, 3, 4, 5, 6] {
        let rec = Recorder::new(RngSource::new(seed));
        let bytes = rec.bytes.clone();
        let mut w = fuzzing::World::new(fuzzing::Dice::new(Box::new(rec)), "record".into());
        w.handshake();
        while w.tally.steps < 120 {
            w.step();
        }
        drop(w);
        let b = bytes.borrow().clone();
        std::fs::write(dir.join(format!("seed-{seed}.bin")), b).unwrap();
    }
}
