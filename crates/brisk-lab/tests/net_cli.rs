//! The network commands, run as the real binary on loopback.

use std::net::UdpSocket;
use std::process::{Command, Stdio};
use std::time::Duration;

fn brisk() -> Command {
    Command::new(env!("CARGO_BIN_EXE_brisk"))
}

/// The standard output of a command that must have succeeded.
fn succeeded(out: &std::process::Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A free UDP port on loopback (bound and released).
fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn bench_against_echo_reports_throughput_and_round_trip_latency() {
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let echo = brisk()
        .args(["echo", "--listen", &listen, "--once"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let out = brisk()
        .args([
            "bench",
            "--to",
            &listen,
            "--bind",
            "127.0.0.1:0",
            "--size",
            "300",
            "--count",
            "2000",
        ])
        .args([
            "--config",
            "lksctp-2.6.15",
            "--set",
            "sack_delay=40ms",
            "--streams",
            "3",
        ])
        .output()
        .unwrap();
    let stdout = succeeded(&out);
    assert!(
        stdout.contains("bench: 2000 messages of 300 bytes"),
        "{stdout}"
    );
    assert!(stdout.contains("throughput: "), "{stdout}");
    assert!(stdout.contains("latency (round trip): p50 "), "{stdout}");
    let echo = echo.wait_with_output().unwrap();
    assert!(echo.status.success());
    assert_eq!(
        String::from_utf8_lossy(&echo.stdout).trim(),
        "echoed 2000 messages; association shut down gracefully"
    );
}

#[test]
fn send_to_recv_delivers_the_count_and_closes() {
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let recv = brisk()
        .args(["recv", "--listen", &listen])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let out = brisk()
        .args([
            "send",
            "--to",
            &listen,
            "--bind",
            "127.0.0.1:0",
            "--size",
            "5000",
            "--count",
            "300",
        ])
        .args(["--unordered", "--rate", "3000"])
        .output()
        .unwrap();
    let stdout = succeeded(&out);
    assert!(
        stdout.starts_with("sent 300 messages of 5000 bytes"),
        "{stdout}"
    );
    let recv = recv.wait_with_output().unwrap();
    let got = String::from_utf8_lossy(&recv.stdout);
    assert!(
        got.starts_with("received 300 messages, 1500000 bytes"),
        "{got}"
    );
    assert!(got.contains("shut down gracefully"), "{got}");
}

#[test]
fn a_bad_knob_or_preset_is_named_in_the_error() {
    let out = brisk()
        .args(["send", "--to", "127.0.0.1:9", "--set", "rto_min=quick"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("config knob `rto_min`: `quick` is not a duration"),
        "{err}"
    );
    let out = brisk()
        .args(["recv", "--config", "fastest"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown config preset `fastest`"), "{err}");
}
