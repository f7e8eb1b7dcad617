//! `brisk msg-send` and `brisk msg-recv` (tests/interop/WORKLOAD.md), run as
//! the real binary on loopback, over SCTP (Brisk over UDP) and TCP.
//!
//! Every receiver binds port 0 and the tests read the address it got from its
//! `listening on` line, so tests running in parallel never share a port and
//! the sender starts only once the receiver is ready.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Output};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

mod process;

use process::{brisk, finish, start};

const MS: u64 = 1_000_000;

/// One row of the records.
#[derive(Debug, Clone, Copy)]
struct Row {
    seq: u64,
    written_ns: u64,
    read_ns: u64,
    size: u64,
}

impl Row {
    fn mtt_ns(&self) -> i128 {
        i128::from(self.read_ns) - i128::from(self.written_ns)
    }
}

/// A running `msg-recv`: its address, and its stderr lines as they come.
struct Receiver {
    child: Child,
    addr: String,
    stderr: JoinHandle<Vec<String>>,
}

/// Starts `msg-recv` on 127.0.0.1:0 and waits for its `listening on` line.
fn start_receiver(transport: &str, records: Option<&PathBuf>) -> Receiver {
    let mut cmd = brisk();
    cmd.args([
        "msg-recv",
        "--transport",
        transport,
        "--bind",
        "127.0.0.1:0",
    ]);
    if let Some(path) = records {
        cmd.arg("--records").arg(path);
    }
    let mut child = start(&mut cmd);
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let stderr = std::thread::spawn(move || {
        let mut lines = Vec::new();
        for line in BufReader::new(stderr).lines() {
            let line = line.unwrap();
            let _ = tx.send(line.clone());
            lines.push(line);
        }
        lines
    });
    let line = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("msg-recv printed no line within 10 s");
    let addr = line
        .split_once("listening on ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("not a listening line: {line}"))
        .to_owned();
    Receiver {
        child,
        addr,
        stderr,
    }
}

impl Receiver {
    /// Waits for the receiver to exit: its output and all its stderr lines.
    fn finish(self) -> (Output, Vec<String>) {
        let out = finish(self.child, "msg-recv", Duration::from_secs(20));
        (out, self.stderr.join().unwrap())
    }
}

/// Runs `msg-send` over `transport` to `to` with `schedule`; its output.
fn send(transport: &str, to: &str, schedule: &[&str]) -> Output {
    let sender = start(
        brisk()
            .args(["msg-send", "--transport", transport])
            .args(["--bind", "127.0.0.1:0", "--connect", to])
            .args(["--size", "200", "--start-delay", "100"])
            .args(schedule),
    );
    finish(sender, "msg-send", Duration::from_secs(30))
}

/// The rows of the records, after checking the header.
fn parse_records(text: &str) -> Vec<Row> {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("seq,written_ns,read_ns,size"), "{text}");
    lines
        .map(|line| {
            let f: Vec<u64> = line
                .split(',')
                .map(|x| x.parse().unwrap_or_else(|_| panic!("bad row: {line}")))
                .collect();
            assert_eq!(f.len(), 4, "bad row: {line}");
            Row {
                seq: f[0],
                written_ns: f[1],
                read_ns: f[2],
                size: f[3],
            }
        })
        .collect()
}

/// A fresh path for a records file.
fn records_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("workload-{name}-{}.csv", std::process::id()))
}

/// Runs a receiver and a sender with `schedule`; checks both ended as the
/// protocol says and returns the records.
fn run(transport: &str, schedule: &[&str], to_file: bool) -> Vec<Row> {
    let path = to_file.then(|| records_path(&format!("{transport}-{}", schedule[0])));
    let receiver = start_receiver(transport, path.as_ref());
    let sent = send(transport, &receiver.addr, schedule);
    let (received, stderr) = receiver.finish();
    let sender_stdout = String::from_utf8_lossy(&sent.stdout);
    assert!(
        sent.status.success(),
        "{sender_stdout}\n{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    assert!(received.status.success(), "{stderr:?}");
    let n = schedule_len(schedule);
    assert_eq!(sender_stdout.trim(), format!("SENT count={n}"));
    assert_eq!(
        stderr.last().map(String::as_str),
        Some(format!("CLOSED received={n}").as_str()),
        "{stderr:?}"
    );
    let text = match path {
        Some(p) => {
            assert!(received.stdout.is_empty(), "records go to the file");
            std::fs::read_to_string(&p).unwrap()
        }
        None => String::from_utf8(received.stdout).unwrap(),
    };
    let rows = parse_records(&text);
    check_rows(&rows, n);
    let mtts = rows.iter().map(|r| r.mtt_ns() as f64 / 1e6);
    let (lo, hi) = mtts.fold((f64::MAX, 0.0f64), |(lo, hi), x| (lo.min(x), hi.max(x)));
    eprintln!("{transport} {schedule:?}: MTT {lo:.3} to {hi:.3} ms");
    rows
}

fn schedule_len(schedule: &[&str]) -> u64 {
    let value = |name: &str| -> Option<u64> {
        let i = schedule.iter().position(|a| *a == name)?;
        schedule[i + 1].parse().ok()
    };
    match value("--count") {
        Some(n) => n,
        None => value("--bursts").unwrap() * value("--burst-size").unwrap(),
    }
}

/// Every message once, 200 bytes, each MTT positive and under 50 ms.
fn check_rows(rows: &[Row], n: u64) {
    let mut seqs: Vec<u64> = rows.iter().map(|r| r.seq).collect();
    seqs.sort_unstable();
    assert_eq!(seqs, (0..n).collect::<Vec<_>>(), "{rows:?}");
    for r in rows {
        assert_eq!(r.size, 200, "{r:?}");
        assert!(r.mtt_ns() > 0 && r.mtt_ns() < 50 * MS as i128, "{r:?}");
    }
}

/// The rows by seq.
fn by_seq(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort_by_key(|r| r.seq);
    rows
}

/// Nanoseconds from `a` to `b`, signed.
fn since(a: &Row, b: &Row) -> i128 {
    i128::from(b.written_ns) - i128::from(a.written_ns)
}

/// 3 bursts of 4 messages 50 ms apart: each burst's messages written within
/// a few ms of each other, each burst 50 ms after the one before.
fn check_bursts(rows: Vec<Row>) {
    let rows = by_seq(rows);
    for burst in rows.chunks(4) {
        let spread = since(&burst[0], &burst[3]);
        assert!((0..3 * MS as i128).contains(&spread), "{burst:?}");
    }
    for b in 1..3 {
        let apart = since(&rows[0], &rows[4 * b]);
        let due = (50 * b) as i128 * MS as i128;
        assert!((apart - due).abs() < 10 * MS as i128, "burst {b}: {rows:?}");
    }
}

/// 20 messages 10 ms apart.
fn check_periodic(rows: Vec<Row>) {
    let rows = by_seq(rows);
    for (i, r) in rows.iter().enumerate() {
        let due = (10 * i) as i128 * MS as i128;
        assert!(
            (since(&rows[0], r) - due).abs() < 8 * MS as i128,
            "{rows:?}"
        );
    }
}

const BURSTS: [&str; 6] = ["--bursts", "3", "--burst-size", "4", "--gap", "50"];
const PERIODIC: [&str; 4] = ["--every", "10", "--count", "20"];

#[test]
fn sctp_bursts_arrive_complete_and_on_schedule() {
    check_bursts(run("sctp", &BURSTS, false));
}

#[test]
fn tcp_bursts_arrive_complete_and_on_schedule() {
    check_bursts(run("tcp", &BURSTS, true));
}

#[test]
fn sctp_periodic_messages_arrive_complete_and_on_schedule() {
    check_periodic(run("sctp", &PERIODIC, true));
}

#[test]
fn tcp_periodic_messages_arrive_complete_and_on_schedule() {
    check_periodic(run("tcp", &PERIODIC, false));
}

/// Runs `msg-send` with `args` after the common ones; it must fail at once.
fn send_fails(args: &[&str]) -> Output {
    let out = finish(
        start(
            brisk()
                .args(["msg-send", "--bind", "127.0.0.1:0"])
                .args(["--connect", "127.0.0.1:9"])
                .args(args),
        ),
        "msg-send",
        Duration::from_secs(10),
    );
    assert!(!out.status.success());
    out
}

/// The single `FAIL` line of a sender that must fail with status 1.
fn fail_line(args: &[&str]) -> String {
    let out = send_fails(args);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.starts_with("FAIL ") && stdout.lines().count() == 1,
        "{stdout}"
    );
    stdout
}

#[test]
fn a_size_below_12_is_rejected_naming_the_minimum() {
    let line = fail_line(&["--size", "8", "--every", "10", "--count", "2"]);
    assert!(
        line.contains("--size 8") && line.contains("12 bytes"),
        "{line}"
    );
}

#[test]
fn exactly_one_schedule_must_be_given() {
    let none = fail_line(&["--size", "100"]);
    assert!(
        none.contains("--every") && none.contains("--bursts"),
        "{none}"
    );
    let both = fail_line(&[
        "--size", "100", "--every", "10", "--count", "2", "--gap", "5",
    ]);
    assert!(both.contains("two schedules"), "{both}");
    let half = fail_line(&["--size", "100", "--bursts", "2", "--gap", "5"]);
    assert!(half.contains("--burst-size is missing"), "{half}");
    let empty = fail_line(&["--size", "100", "--every", "10", "--count", "0"]);
    assert!(empty.contains("--count 0"), "{empty}");
}

#[test]
fn durations_are_milliseconds_not_below_zero() {
    let out = send_fails(&["--size", "100", "--every", "-1", "--count", "2"]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("invalid value '-1' for '--every <MS>': expected milliseconds"),
        "{stderr}"
    );
}

#[test]
fn a_tcp_sender_without_a_receiver_fails() {
    // A port nothing listens on any more.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let to = format!("127.0.0.1:{port}");
    let out = finish(
        start(brisk().args(["msg-send", "--transport", "tcp"]).args([
            "--bind",
            "127.0.0.1:0",
            "--connect",
            &to,
            "--size",
            "100",
            "--every",
            "1",
            "--count",
            "1",
        ])),
        "msg-send",
        Duration::from_secs(10),
    );
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.starts_with(&format!("FAIL connecting to TCP {to}")),
        "{stdout}"
    );
}

/// A TCP sender whose message's filler is wrong: the receiver says so and
/// fails, keeping the rows it read before.
#[test]
fn the_receiver_checks_the_filler() {
    let receiver = start_receiver("tcp", None);
    let mut peer = std::net::TcpStream::connect(&receiver.addr).unwrap();
    let good = message(0, 20);
    let mut bad = message(1, 20);
    bad[15] ^= 0xff;
    for m in [good, bad] {
        peer.write_all(&20u32.to_be_bytes()).unwrap();
        peer.write_all(&m).unwrap();
    }
    drop(peer);
    let (out, stderr) = receiver.finish();
    assert_eq!(out.status.code(), Some(1), "{stderr:?}");
    let last = stderr.last().unwrap();
    assert!(
        last.starts_with("FAIL message seq 1: byte 15 is"),
        "{stderr:?}"
    );
    let rows = parse_records(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].seq, rows[0].written_ns, rows[0].size), (0, 7, 20));
}

/// A TCP connection that ends inside a message is a failure, not an end.
#[test]
fn a_truncated_tcp_message_fails() {
    let receiver = start_receiver("tcp", None);
    let mut peer = std::net::TcpStream::connect(&receiver.addr).unwrap();
    peer.write_all(&20u32.to_be_bytes()).unwrap();
    peer.write_all(&message(0, 20)[..10]).unwrap();
    drop(peer);
    let (out, stderr) = receiver.finish();
    assert_eq!(out.status.code(), Some(1), "{stderr:?}");
    assert!(
        stderr.last().unwrap().contains("ended inside a message"),
        "{stderr:?}"
    );
}

/// Message `seq` of `size` bytes as WORKLOAD.md defines it, stamped 7.
fn message(seq: u32, size: usize) -> Vec<u8> {
    let mut m = Vec::with_capacity(size);
    m.extend_from_slice(&seq.to_be_bytes());
    m.extend_from_slice(&7u64.to_be_bytes());
    for j in 12..size {
        m.push(((u64::from(seq) * 131 + j as u64 * 7) % 256) as u8);
    }
    m
}
