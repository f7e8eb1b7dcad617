//! usrsctp's sender and receiver of the message workload
//! (`tests/interop/WORKLOAD.md`): `usrsctp-peer msg-send` and `usrsctp-peer
//! msg-recv` over UDP on loopback, on a burst schedule and a periodic one, with
//! the RTO options, and usrsctp's sender against Brisk's receiver. The records
//! must hold every message exactly once, with its size, a transfer time (MTT)
//! that loopback makes small, and write stamps that follow the schedule.
//!
//! Needs cc and libusrsctp-dev for `tests/interop/usrsctp/build.sh`;
//! `scripts/test` installs them.

mod peers;
mod process;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use peers::{MS, Record, build_peer, check_ok, check_records, parse, text, two_ports};
use process::{brisk, finish, start};

const LIMIT: Duration = Duration::from_secs(90);

/// The usrsctp peer, built once per test run.
fn usrsctp_peer() -> PathBuf {
    build_peer("usrsctp", &[])
}

/// Whether a UDP socket is bound to `port` (read from /proc/net/udp and
/// udp6, so that looking does not take the port from the receiver).
fn udp_bound(port: u16) -> bool {
    let local = format!(":{port:04X}");
    ["/proc/net/udp", "/proc/net/udp6"].iter().any(|table| {
        std::fs::read_to_string(table)
            .unwrap_or_default()
            .lines()
            .skip(1)
            .any(|line| {
                line.split_whitespace()
                    .nth(1)
                    .is_some_and(|addr| addr.ends_with(&local))
            })
    })
}

/// Waits until the receiver has bound its UDP port (so that the sender's
/// INIT finds it listening, not answered with an ABORT), then a little more
/// for it to reach listen().
fn wait_bound(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !udp_bound(port) {
        assert!(
            Instant::now() < deadline,
            "the receiver did not bind UDP port {port} within 10 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(100));
}

/// The receiver's command for `usrsctp-peer msg-recv` on `port`.
fn usrsctp_recv(port: u16, records: Option<&Path>, extra: &[&str]) -> Command {
    let mut cmd = Command::new(usrsctp_peer());
    cmd.args(["msg-recv", "--bind", &format!("127.0.0.1:{port}")]);
    if let Some(r) = records {
        cmd.arg("--records").arg(r);
    }
    cmd.args(extra);
    cmd
}

/// What a run produced: the records and both processes' outputs.
struct Run {
    records: Vec<Record>,
    sent: Output,
    got: Output,
}

/// Runs `receiver` (listening on `recv_port`) and `usrsctp-peer msg-send`
/// with `args` (schedule, size, options) from `send_port`; checks both
/// result lines and returns the records, read from `records` or else the
/// receiver's stdout.
fn run(
    mut receiver: Command,
    recv_port: u16,
    send_port: u16,
    args: &[&str],
    records: Option<&Path>,
) -> Run {
    let recv = start(&mut receiver);
    wait_bound(recv_port);
    let send = start(
        Command::new(usrsctp_peer())
            .args(["msg-send", "--bind", &format!("127.0.0.1:{send_port}")])
            .args(["--connect", &format!("127.0.0.1:{recv_port}")])
            .args(args),
    );
    let sent = finish(send, "usrsctp-peer msg-send", LIMIT);
    let got = finish(recv, "msg-recv", LIMIT);
    let arg = |name: &str| -> Option<usize> {
        let i = args.iter().position(|&a| a == name)?;
        Some(args[i + 1].parse().unwrap())
    };
    let n =
        arg("--count").unwrap_or_else(|| arg("--bursts").unwrap() * arg("--burst-size").unwrap());
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
    Run {
        records: recs,
        sent,
        got,
    }
}

/// The sender's `STATS rtx=<R>` line, which must follow `SENT`.
fn rtx(sent: &Output) -> u64 {
    let out = text(&sent.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "want SENT and STATS lines: {out}");
    assert!(lines[0].starts_with("SENT count="), "{out}");
    lines[1]
        .strip_prefix("STATS rtx=")
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("no STATS rtx=<n> line: {out}"))
}

/// Every seq in 0..n exactly once, each of `size` bytes, with an MTT in
/// (0, 50 ms); returns the write stamps by seq.
/// Three bursts of four, 50 ms apart: each burst back to back.
fn check_bursts(written: &[u64]) {
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

/// Message `seq` written `seq * 10 ms` after message 0.
fn check_periodic(written: &[u64]) {
    for (seq, w) in written.iter().enumerate() {
        let offset = *w as i64 - written[0] as i64;
        assert!(
            (offset - (seq as u64 * 10 * MS) as i64).abs() < 5 * MS as i64,
            "message {seq} written {:.3} ms after message 0",
            offset as f64 / 1e6
        );
    }
}

fn temp_file(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "brisk-workload-usrsctp-{}-{name}",
        std::process::id()
    ))
}

const BURSTS: [&str; 10] = [
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

const PERIODIC: [&str; 8] = [
    "--every",
    "10",
    "--count",
    "20",
    "--size",
    "200",
    "--start-delay",
    "100",
];

#[test]
fn usrsctp_bursts() {
    let (recv_port, send_port) = two_ports();
    let records = temp_file("bursts.csv");
    let run = run(
        usrsctp_recv(recv_port, Some(&records), &[]),
        recv_port,
        send_port,
        &BURSTS,
        Some(&records),
    );
    let _ = std::fs::remove_file(&records);
    // With --records, stdout stays empty.
    assert!(run.got.stdout.is_empty(), "{}", text(&run.got.stdout));
    let written = check_records(&run.records, 12, 200);
    check_bursts(&written);
    rtx(&run.sent);
}

#[test]
fn usrsctp_periodic() {
    let (recv_port, send_port) = two_ports();
    // Records on stdout this time.
    let run = run(
        usrsctp_recv(recv_port, None, &[]),
        recv_port,
        send_port,
        &PERIODIC,
        None,
    );
    let written = check_records(&run.records, 20, 200);
    check_periodic(&written);
    rtx(&run.sent);
}

/// "usrsctp with RTO.Min at 100 ms": the RTO options are accepted by both
/// roles and are what the association runs with (each peer logs the
/// association's SCTP_RTOINFO and SCTP_DELAYED_SACK on stderr).
#[test]
fn usrsctp_rto_options() {
    let (recv_port, send_port) = two_ports();
    let rto = [
        "--rto-min",
        "100",
        "--rto-initial",
        "200",
        "--rto-max",
        "400",
    ];
    let recv_extra: Vec<&str> = rto.iter().copied().chain(["--sack-delay", "0"]).collect();
    let send_args: Vec<&str> = BURSTS
        .iter()
        .copied()
        .chain(rto)
        .chain(["--sack-delay", "20"])
        .collect();
    let run = run(
        usrsctp_recv(recv_port, None, &recv_extra),
        recv_port,
        send_port,
        &send_args,
        None,
    );
    let written = check_records(&run.records, 12, 200);
    check_bursts(&written);
    for (out, sack) in [(&run.sent, "sack delay 20 ms freq 2"), (&run.got, "freq 1")] {
        let err = text(&out.stderr);
        assert!(
            err.contains("rto min 100 initial 200 max 400 ms") && err.contains(sack),
            "RTO / SACK options not in effect:\n{err}"
        );
    }
}

/// Bad command lines fail with `FAIL usage: ...` and exit 1, before any
/// association: an incomplete or mixed schedule, a message under 12 bytes,
/// an option of the other role, RTO values out of order, a fractional RTO.
#[test]
fn usrsctp_usage_errors() {
    let base = [
        "msg-send",
        "--bind",
        "127.0.0.1:9",
        "--connect",
        "127.0.0.1:10",
    ];
    let cases: [&[&str]; 7] = [
        &["--size", "200", "--every", "10"],
        &[
            "--size", "200", "--every", "10", "--count", "2", "--gap", "5",
        ],
        &["--size", "11", "--every", "10", "--count", "2"],
        &["--size", "200", "--bursts", "2", "--burst-size", "2"],
        &[
            "--size",
            "200",
            "--every",
            "10",
            "--count",
            "2",
            "--records",
            "x",
        ],
        &[
            "--size",
            "200",
            "--every",
            "1",
            "--count",
            "2",
            "--rto-min",
            "300",
            "--rto-max",
            "200",
        ],
        &[
            "--size",
            "200",
            "--every",
            "1",
            "--count",
            "2",
            "--rto-min",
            "0.5",
        ],
    ];
    for case in cases {
        let out = finish(
            start(Command::new(usrsctp_peer()).args(base).args(case)),
            "usrsctp-peer msg-send",
            LIMIT,
        );
        assert!(
            out.status.code() == Some(1) && text(&out.stdout).starts_with("FAIL usage:"),
            "{case:?}: {:?}\n{}{}",
            out.status,
            text(&out.stdout),
            text(&out.stderr)
        );
    }
    let out = finish(
        start(Command::new(usrsctp_peer()).args([
            "msg-recv",
            "--bind",
            "127.0.0.1:9",
            "--connect",
            "127.0.0.1:10",
        ])),
        "usrsctp-peer msg-recv",
        LIMIT,
    );
    assert!(
        out.status.code() == Some(1) && text(&out.stdout).starts_with("FAIL usage:"),
        "msg-recv --connect: {:?}\n{}",
        out.status,
        text(&out.stdout)
    );
}

/// usrsctp's sender, Brisk's receiver (`brisk msg-recv --transport sctp`):
/// the two stacks' message workloads interoperate.
#[test]
fn usrsctp_send_brisk_recv() {
    let (recv_port, send_port) = two_ports();
    let mut receiver = brisk();
    receiver.args([
        "msg-recv",
        "--bind",
        &format!("127.0.0.1:{recv_port}"),
        "--transport",
        "sctp",
    ]);
    let run = run(receiver, recv_port, send_port, &BURSTS, None);
    let written = check_records(&run.records, 12, 200);
    check_bursts(&written);
}
