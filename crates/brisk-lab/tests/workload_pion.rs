//! pion/sctp's sender and receiver of the message workload
//! (`tests/interop/WORKLOAD.md`): `pion-peer msg-send` and `pion-peer
//! msg-recv` over UDP on loopback, on a burst schedule and a periodic one.
//! The records must hold every message exactly once, with its size, a
//! transfer time (MTT) that loopback makes small, and write stamps that follow
//! the schedule. A third run pairs pion's sender with Brisk's receiver
//! (`brisk msg-recv --transport sctp`).
//!
//! Needs go (>= 1.24, or GOTOOLCHAIN=auto fetching it) and the Go module proxy
//! for `tests/interop/pion/build.sh`; `scripts/test` installs go.

mod peers;
mod process;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use peers::{MS, Record, build_peer, check_ok, check_records, parse, text, two_ports};
use process::{brisk, finish, start};

const LIMIT: Duration = Duration::from_secs(90);

/// The pion peer, built once per test run.
fn pion_peer() -> PathBuf {
    build_peer("pion", &[("GOTOOLCHAIN", "auto")])
}

/// The receiver's command for `pion-peer msg-recv` on `port`.
fn pion_recv(port: u16, records: Option<&Path>) -> Command {
    let mut cmd = Command::new(pion_peer());
    cmd.args(["msg-recv", "--bind", &format!("127.0.0.1:{port}")]);
    if let Some(r) = records {
        cmd.arg("--records").arg(r);
    }
    cmd
}

/// Runs `receiver` (listening on `recv_port`) and `pion-peer msg-send` with
/// `schedule` from `send_port`; checks both result lines and returns the
/// records, read from `records` or else the receiver's stdout.
fn run(
    mut receiver: Command,
    recv_port: u16,
    send_port: u16,
    schedule: &[&str],
    records: Option<&Path>,
) -> Vec<Record> {
    let recv = start(&mut receiver);
    // pion retries its INIT only after 1 s: give the receiver a moment.
    std::thread::sleep(Duration::from_millis(200));
    let send = start(
        Command::new(pion_peer())
            .args(["msg-send", "--bind", &format!("127.0.0.1:{send_port}")])
            .args(["--connect", &format!("127.0.0.1:{recv_port}")])
            .args(schedule),
    );
    let sent = finish(send, "pion-peer msg-send", LIMIT);
    let got = finish(recv, "msg-recv", LIMIT);
    let n = if let Some(i) = schedule.iter().position(|&a| a == "--count") {
        schedule[i + 1].parse::<usize>().unwrap()
    } else {
        let arg = |name: &str| -> usize {
            let i = schedule.iter().position(|&a| a == name).unwrap();
            schedule[i + 1].parse().unwrap()
        };
        arg("--bursts") * arg("--burst-size")
    };
    check_ok(&sent, "msg-send", &sent.stdout, &format!("SENT count={n}"));
    check_ok(
        &got,
        "msg-recv",
        &got.stderr,
        &format!("CLOSED received={n}"),
    );
    let csv = match records {
        Some(r) => std::fs::read_to_string(r).unwrap(),
        None => text(&got.stdout),
    };
    let recs = parse(&csv);
    assert_eq!(recs.len(), n, "{csv}");
    recs
}

/// Every seq in 0..n exactly once, each of `size` bytes, with an MTT in
/// (0, 50 ms); returns the write stamps by seq.
fn temp_file(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("brisk-workload-pion-{}-{name}", std::process::id()))
}

#[test]
fn pion_bursts() {
    let (recv_port, send_port) = two_ports();
    let records = temp_file("bursts.csv");
    let schedule = [
        "--bursts",
        "3",
        "--burst-size",
        "4",
        "--gap",
        "50",
        "--size",
        "200",
        "--start-delay",
        "100",
    ];
    let recs = run(
        pion_recv(recv_port, Some(&records)),
        recv_port,
        send_port,
        &schedule,
        Some(&records),
    );
    let _ = std::fs::remove_file(&records);
    let written = check_records(&recs, 12, 200);
    for b in 0..3 {
        let burst = &written[b * 4..b * 4 + 4];
        assert!(
            burst.windows(2).all(|w| w[1] >= w[0]) && burst[3] - burst[0] < 10 * MS,
            "burst {b} not back to back: {burst:?}"
        );
        if b > 0 {
            let gap = burst[0] as i64 - written[(b - 1) * 4] as i64;
            assert!(
                (gap - 50 * MS as i64).abs() < 10 * MS as i64,
                "burst {b} starts {:.3} ms after burst {}",
                gap as f64 / 1e6,
                b - 1
            );
        }
    }
}

#[test]
fn pion_periodic() {
    let (recv_port, send_port) = two_ports();
    let schedule = [
        "--every",
        "10",
        "--count",
        "20",
        "--size",
        "200",
        "--start-delay",
        "100",
    ];
    // Records on stdout this time.
    let recs = run(
        pion_recv(recv_port, None),
        recv_port,
        send_port,
        &schedule,
        None,
    );
    let written = check_records(&recs, 20, 200);
    for (seq, w) in written.iter().enumerate() {
        let offset = *w as i64 - written[0] as i64;
        assert!(
            (offset - (seq as u64 * 10 * MS) as i64).abs() < 5 * MS as i64,
            "message {seq} written {:.3} ms after message 0",
            offset as f64 / 1e6
        );
    }
}

/// pion's sender, Brisk's receiver (`brisk msg-recv --transport sctp`): the
/// same records from a different stack.
#[test]
fn pion_to_brisk_bursts() {
    let (recv_port, send_port) = two_ports();
    let mut receiver = brisk();
    receiver.args([
        "msg-recv",
        "--bind",
        &format!("127.0.0.1:{recv_port}"),
        "--transport",
        "sctp",
    ]);
    let schedule = [
        "--bursts",
        "3",
        "--burst-size",
        "4",
        "--gap",
        "50",
        "--size",
        "200",
        "--start-delay",
        "100",
    ];
    let recs = run(receiver, recv_port, send_port, &schedule, None);
    let written = check_records(&recs, 12, 200);
    for b in 1..3 {
        let gap = written[b * 4] as i64 - written[(b - 1) * 4] as i64;
        assert!(
            (gap - 50 * MS as i64).abs() < 10 * MS as i64,
            "burst {b} starts {:.3} ms after burst {}",
            gap as f64 / 1e6,
            b - 1
        );
    }
}
