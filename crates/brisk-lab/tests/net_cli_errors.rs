//! The network commands refuse what cannot work, at once and in plain words.

use std::net::UdpSocket;
use std::process::Output;
use std::time::{Duration, Instant};

mod process;

use process::{brisk, finish, start};

/// Runs `brisk ARGS`, killing it and failing the test past `limit`.
fn run(args: &[&str], limit: Duration) -> Output {
    finish(start(brisk().args(args)), &format!("brisk {args:?}"), limit)
}

/// Runs `brisk ARGS`, which must fail with exit code `code`; returns its stderr.
fn fails(args: &[&str], code: i32) -> String {
    let out = run(args, Duration::from_secs(5));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "brisk {args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "brisk {args:?} printed a result");
    stderr
}

/// A loopback UDP port nobody listens on (bound and released).
fn silent_port() -> String {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.local_addr().unwrap().to_string()
}

#[test]
fn a_rate_of_zero_and_a_window_of_zero_are_argument_errors() {
    // `--rate 0` used to panic (a gap of 1/0 s), `--window 0` to hang.
    for (cmd, rate) in [
        ("send", "0"),
        ("bench", "0"),
        ("send", "-2"),
        ("send", "inf"),
        ("bench", "NaN"),
    ] {
        let err = fails(&[cmd, "--to", "127.0.0.1:9", &format!("--rate={rate}")], 2);
        assert!(
            err.contains(&format!(
                "invalid value '{rate}' for '--rate <RATE>': expected messages per second, \
                 a number greater than 0 (such as 1000 or 0.5)"
            )),
            "{err}"
        );
    }
    let err = fails(&["bench", "--to", "127.0.0.1:9", "--window", "0"], 2);
    assert!(
        err.contains(
            "invalid value '0' for '--window <W>': expected a whole number of at least 1 \
             (messages sent but not yet echoed)"
        ),
        "{err}"
    );
    let err = fails(&["send", "--to", "127.0.0.1:9", "--size", "0"], 2);
    assert!(
        err.contains("invalid value '0' for '--size <SIZE>'"),
        "{err}"
    );
    let err = fails(&["bench", "--to", "127.0.0.1:9", "--streams", "0"], 2);
    assert!(
        err.contains("invalid value '0' for '--streams <STREAMS>'"),
        "{err}"
    );
}

#[test]
fn the_handshake_gives_up_after_the_connect_timeout() {
    for cmd in ["send", "bench"] {
        let to = silent_port();
        let start = Instant::now();
        // Without the timeout, INIT would be retried for about 4 minutes.
        let err = fails(&[cmd, "--to", &to, "--connect-timeout", "300ms"], 1);
        assert!(start.elapsed() < Duration::from_secs(4), "{cmd}");
        assert_eq!(
            err.trim_end(),
            format!(
                "no association with {to} (SCTP port 5000): the handshake did not complete \
                 within the connect timeout of 300 ms (--connect-timeout)"
            )
        );
    }
    let err = fails(
        &["send", "--to", "127.0.0.1:9", "--connect-timeout", "10"],
        2,
    );
    assert!(
        err.contains("invalid value '10' for '--connect-timeout <DURATION>': expected a duration"),
        "{err}"
    );
    let help = run(&["send", "--help"], Duration::from_secs(5));
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.lines()
            .any(|l| l.contains("--connect-timeout <DURATION>") && l.ends_with("[default: 10s]")),
        "{help}"
    );
}

#[test]
fn an_address_family_mismatch_fails_at_once() {
    let err = fails(&["send", "--to", "[::1]:9", "--bind", "127.0.0.1:0"], 1);
    assert_eq!(
        err.trim_end(),
        "--to [::1]:9 is an IPv6 address but --bind 127.0.0.1:0 is an IPv4 address: \
         bind an IPv6 address (such as [::]:0) or leave --bind out"
    );
    let err = fails(&["bench", "--to", "127.0.0.1:9", "--bind", "[::]:0"], 1);
    assert_eq!(
        err.trim_end(),
        "--to 127.0.0.1:9 is an IPv4 address but --bind [::]:0 is an IPv6 address: \
         bind an IPv4 address (such as 0.0.0.0:0) or leave --bind out"
    );
}

#[test]
fn config_help_lists_every_preset() {
    for cmd in ["echo", "recv", "send", "bench"] {
        let out = run(&[cmd, "--help"], Duration::from_secs(5));
        let help = String::from_utf8_lossy(&out.stdout);
        let line = help
            .lines()
            .find(|l| l.contains("--config <PRESET>"))
            .unwrap_or_else(|| panic!("{help}"));
        assert!(
            line.ends_with(&format!(
                "[possible values: {}]",
                brisk_proto::PRESETS.join(", ")
            )),
            "{cmd}: {line}"
        );
    }
}
