//! The multi-homing roles of the usrsctp peer (`mh-send`, `mh-recv`; see the
//! top of their block in `tests/interop/usrsctp/peer.c`) and Brisk's side of
//! the same exchange: shared by `netns.rs` through `#[path]`.
//!
//! A message is WORKLOAD.md's: its sequence number (4 bytes), the sender's
//! CLOCK_MONOTONIC stamp in nanoseconds (8 bytes) and filler
//! `(seq * 131 + j * 7) mod 256` for byte j; stream 0, ordered.
// Each test file uses its own subset.
#![allow(dead_code)]

use std::net::{Ipv4Addr, SocketAddr};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use brisk::{Association, Error, SendOptions};

/// The usrsctp peer's SCTP port (PROTOCOL.md), which Brisk uses too.
pub const SCTP_PORT: u16 = 5000;

/// The usrsctp timers of these tests: short, so a failover takes seconds.
pub const USRSCTP_TUNING: &[&str] = &[
    "--rto-min",
    "100",
    "--rto-initial",
    "200",
    "--rto-max",
    "400",
    "--hb-interval",
    "500",
];

/// `mh-recv` bound to `binds` (IP:UDP), expecting `count` messages.
pub fn recv_args(binds: &[SocketAddr], count: u64) -> Vec<String> {
    let mut a = vec!["mh-recv".to_string()];
    for b in binds {
        a.extend(["--bind".into(), b.to_string()]);
    }
    a.extend(["--count".into(), count.to_string()]);
    a.extend(USRSCTP_TUNING.iter().map(|s| s.to_string()));
    a
}

/// `mh-send` bound to `binds`, associating with `connects`, `count` messages
/// one every `every_ms`.
pub fn send_args(
    binds: &[SocketAddr],
    connects: &[SocketAddr],
    count: u64,
    every_ms: u64,
) -> Vec<String> {
    let mut a = vec!["mh-send".to_string()];
    for b in binds {
        a.extend(["--bind".into(), b.to_string()]);
    }
    for c in connects {
        a.extend(["--connect".into(), c.to_string()]);
    }
    a.extend([
        "--count".into(),
        count.to_string(),
        "--every".into(),
        every_ms.to_string(),
    ]);
    a.extend(USRSCTP_TUNING.iter().map(|s| s.to_string()));
    a
}

/// A peer-address change the usrsctp peer reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathEvent {
    pub t_ms: u64,
    pub addr: Ipv4Addr,
    pub state: String,
}

/// Messages that came from one source address (`FROM`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FromLine {
    pub addr: Ipv4Addr,
    pub count: u64,
    pub first: u64,
    pub last: u64,
}

/// What the receiver counted (`RECEIVED`, or Brisk's own count).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Received {
    pub count: u64,
    pub unique: u64,
    pub duplicates: u64,
    pub reordered: u64,
    pub missing: u64,
    pub max_latency_ms: f64,
}

/// Everything a usrsctp mh role printed.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub peers: Vec<Ipv4Addr>,
    pub locals: Vec<Ipv4Addr>,
    pub primary: Option<Ipv4Addr>,
    pub paths: Vec<PathEvent>,
    pub from: Vec<FromLine>,
    pub received: Option<Received>,
    /// `SENT count=N rtx=R t3=T`.
    pub sent: Option<(u64, u64, u64)>,
    pub stdout: String,
    pub stderr: String,
}

impl Report {
    /// The messages that came from `addr` (0 if none).
    pub fn count_from(&self, addr: Ipv4Addr) -> u64 {
        self.from
            .iter()
            .find(|f| f.addr == addr)
            .map_or(0, |f| f.count)
    }
}

fn kv<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
}

fn num<T: std::str::FromStr>(line: &str, key: &str) -> T {
    kv(line, key)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key}= in `{line}`"))
}

fn ips(list: &str) -> Vec<Ipv4Addr> {
    list.split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap_or_else(|_| panic!("address `{s}`")))
        .collect()
}

/// Parses the usrsctp mh role's stdout.
pub fn parse(stdout: &str, stderr: &str) -> Report {
    let mut r = Report {
        stdout: stdout.into(),
        stderr: stderr.into(),
        ..Report::default()
    };
    for line in stdout.lines() {
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        match word {
            "PEERS" => r.peers = ips(rest),
            "LOCALS" => r.locals = ips(rest),
            "PRIMARY" => r.primary = rest.trim().parse().ok(),
            "PATH" => r.paths.push(PathEvent {
                t_ms: num(line, "t_ms"),
                addr: num(line, "addr"),
                state: kv(line, "state").unwrap_or("").into(),
            }),
            "FROM" => r.from.push(FromLine {
                addr: num(line, "addr"),
                count: num(line, "count"),
                first: num(line, "first"),
                last: num(line, "last"),
            }),
            "RECEIVED" => {
                r.received = Some(Received {
                    count: num(line, "count"),
                    unique: num(line, "unique"),
                    duplicates: num(line, "duplicates"),
                    reordered: num(line, "reordered"),
                    missing: num(line, "missing"),
                    max_latency_ms: num(line, "max_latency_ms"),
                })
            }
            "SENT" => r.sent = Some((num(line, "count"), num(line, "rtx"), num(line, "t3"))),
            _ => {}
        }
    }
    r
}

/// A running usrsctp mh role whose stdout lines are read as they come.
pub struct Peer {
    what: String,
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
    stdout: Vec<String>,
    stderr: std::thread::JoinHandle<String>,
}

impl Peer {
    /// Starts `cmd` (a usrsctp mh role), called `what` in failures.
    pub fn start(mut cmd: Command, what: &str) -> Peer {
        use std::io::{BufRead, Read};
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("starting {what} ({:?}): {e}", cmd.get_program()));
        let out = child.stdout.take().unwrap();
        let mut err = child.stderr.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        Peer {
            what: what.into(),
            child,
            lines,
            stdout: Vec::new(),
            stderr,
        }
    }

    /// Waits (at most `limit`) for a stdout line starting with `prefix`.
    pub fn wait_line(&mut self, prefix: &str, limit: Duration) -> String {
        let deadline = std::time::Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.stdout.push(line.clone());
                    if line.starts_with(prefix) {
                        return line;
                    }
                }
                Err(_) => {
                    let _ = self.child.kill();
                    panic!(
                        "{}: no `{prefix}` line within {limit:?}; stdout so far:\n{}",
                        self.what,
                        self.stdout.join("\n")
                    );
                }
            }
        }
    }

    /// Waits for the peer to end (at most `limit`, then kills it); asserts
    /// it succeeded and returns its report.
    pub fn finish(mut self, limit: Duration) -> Report {
        let deadline = std::time::Instant::now() + limit;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break Some(status);
            }
            if std::time::Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        // The reader thread ends with the pipe.
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.stdout.push(line);
        }
        let stdout = self.stdout.join("\n");
        let stderr = self.stderr.join().unwrap_or_default();
        match status {
            None => panic!(
                "{} still running after {limit:?}:\n{stdout}\n{stderr}",
                self.what
            ),
            Some(s) => assert!(
                s.success(),
                "{} failed ({s}):\n{stdout}\n{stderr}",
                self.what
            ),
        }
        parse(&stdout, &stderr)
    }
}

/// CLOCK_MONOTONIC in nanoseconds (the peer's clock: one host).
pub fn mono_ns() -> u64 {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).unwrap();
    t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
}

/// Message `seq` of `size` bytes (at least 12), stamped now.
pub fn message(seq: u32, size: usize) -> Vec<u8> {
    let mut m = Vec::with_capacity(size);
    m.extend_from_slice(&seq.to_be_bytes());
    m.extend_from_slice(&mono_ns().to_be_bytes());
    m.extend((12..size).map(|j| (u64::from(seq) * 131 + j as u64 * 7) as u8));
    m
}

/// Brisk as mh-send: `count` messages of 100 bytes, one every `every`,
/// then a graceful close once all are acknowledged.
pub async fn brisk_send(assoc: &Association, count: u32, every: Duration) {
    let mut tick = tokio::time::interval(every);
    for seq in 0..count {
        tick.tick().await;
        assoc
            .send(0, message(seq, 100), SendOptions::default())
            .await
            .unwrap_or_else(|e| panic!("send {seq}: {e}"));
    }
    tokio::time::timeout(Duration::from_secs(60), assoc.close())
        .await
        .expect("close within 60 s")
        .expect("graceful close");
}

/// Brisk as mh-recv: reads until the association ends (within `limit`),
/// checking every message's filler; counts as mh-recv does.
pub async fn brisk_recv(assoc: &Association, count: u64, limit: Duration) -> Received {
    let mut seen = vec![false; count as usize];
    let mut r = Received::default();
    let mut highest: Option<u32> = None;
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let m = match tokio::time::timeout_at(deadline, assoc.recv()).await {
            Err(_) => panic!("the association did not end within {limit:?}: {r:?}"),
            Ok(Ok(m)) => m,
            Ok(Err(Error::Closed(_))) => break,
            Ok(Err(e)) => panic!("recv after {} messages: {e}", r.count),
        };
        let p = &m.payload[..];
        assert!(p.len() >= 12, "message of {} bytes", p.len());
        let seq = u32::from_be_bytes(p[..4].try_into().unwrap());
        let stamp = u64::from_be_bytes(p[4..12].try_into().unwrap());
        for (j, &b) in p.iter().enumerate().skip(12) {
            assert_eq!(
                b,
                (u64::from(seq) * 131 + j as u64 * 7) as u8,
                "byte {j} of {seq}"
            );
        }
        assert!(u64::from(seq) < count, "seq {seq} beyond {count}");
        r.count += 1;
        if std::mem::replace(&mut seen[seq as usize], true) {
            r.duplicates += 1;
        } else {
            r.unique += 1;
        }
        match highest {
            Some(h) if seq < h => r.reordered += 1,
            _ => highest = Some(seq),
        }
        let lat = mono_ns().saturating_sub(stamp) as f64 / 1e6;
        r.max_latency_ms = r.max_latency_ms.max(lat);
    }
    r.missing = count - r.unique;
    r
}

/// Which side of an exchange starts first: the one that listens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum First {
    /// The peer listens (`mh-recv`); Brisk starts 300 ms later and connects.
    Peer,
    /// Brisk listens and calls [`Ready::now`] once bound; then the peer
    /// (`mh-send`) starts.
    Brisk,
}

/// Brisk's word that it is bound and listening.
pub struct Ready(std::sync::mpsc::Sender<()>);

impl Ready {
    pub fn now(&self) {
        let _ = self.0.send(());
    }
}

/// One exchange across the bed (`netns.rs`'s `Bed`, which a test file
/// including this one includes as `netns`): the usrsctp peer's mh role
/// `args` runs in `peer_side`'s namespace, `brisk` in the other's (on a
/// current-thread runtime there), started in the order `first` says.
/// `brisk` gets its [`Ready`] and the bed's [`Links`](super::netns::Links),
/// to kill and restore paths while it runs. Returns what `brisk` returned
/// and the peer's report (the peer must succeed within 60 s).
pub fn brisk_with_usrsctp<F, Fut>(
    bed: &super::netns::Bed,
    peer_side: super::netns::Side,
    args: &[String],
    first: First,
    brisk: F,
) -> (Fut::Output, Report)
where
    F: FnOnce(Ready, super::netns::Links) -> Fut + Send + 'static,
    Fut: std::future::Future,
    Fut::Output: Send + 'static,
{
    let bin = super::build_peer::build_peer("usrsctp", &[]);
    let start_peer = || {
        let mut cmd = bed.command(peer_side, &bin);
        cmd.args(args);
        Peer::start(cmd, &format!("usrsctp {}", args[0]))
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let links = bed.links();
    let (peer, brisk) = match first {
        First::Peer => {
            let peer = start_peer();
            std::thread::sleep(Duration::from_millis(300));
            let brisk = bed.run_brisk(peer_side.other(), move || brisk(Ready(tx), links));
            (peer, brisk)
        }
        First::Brisk => {
            let brisk = bed.run_brisk(peer_side.other(), move || brisk(Ready(tx), links));
            rx.recv_timeout(Duration::from_secs(10))
                .expect("Brisk did not say it was ready (Ready::now) within 10 s");
            (start_peer(), brisk)
        }
    };
    let report = peer.finish(Duration::from_secs(60));
    let out = brisk
        .join()
        .unwrap_or_else(|_| panic!("Brisk's side panicked; the peer said:\n{}", report.stdout));
    (out, report)
}
