//! `brisk emulate` end to end, as root (CI runs as root; without it these
//! fail and say so): Brisk's own sender and receiver through an emulated
//! link with one scripted drop, the errors a user meets, and Ctrl-C.

mod process;

use std::path::PathBuf;
use std::time::Duration;

use process::{brisk, finish, start};

/// Emulations measured against a timeline run one at a time, so that the
/// other tests' processes do not share their cores.
static TIMED: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("brisk-emulate-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The namespaces of `brisk emulate` processes that are gone.
fn namespaces_of(pid: u32) -> Vec<String> {
    let out = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("iproute2's ip");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with(&format!("brisk-emu-{pid}-")))
        .map(str::to_owned)
        .collect()
}

/// Whether process `pid`'s two namespaces appear within 5 s.
fn namespaces_appear(pid: u32) -> bool {
    for _ in 0..200 {
        if namespaces_of(pid).len() == 2 {
            return true;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    false
}

/// Seed 000 Fig. 2's setting: the Standard with the paper's timers.
const STANDARD: [&str; 10] = [
    "--config",
    "lksctp-2.6.15",
    "--set",
    "rto_min=100ms",
    "--set",
    "rto_initial=200ms",
    "--set",
    "rto_max=400ms",
    "--set",
    "sack_delay=40ms",
];

#[test]
fn a_scripted_drop_is_recovered_by_t3_at_the_simulators_time() {
    let _one_at_a_time = TIMED.lock().unwrap_or_else(|p| p.into_inner());
    let pattern = tmp("drop9.txt");
    // The 9th new DATA chunk: the 1st message of the 3rd burst.
    std::fs::write(&pattern, "# one first transmission\ndrop-new-chunk 9\n").unwrap();
    let records = tmp("records.csv");
    let pcap = tmp("run.pcapng");
    let mut cmd = brisk();
    cmd.args([
        "emulate",
        "--link",
        "2mbit,15ms,50pkt",
        "--sctp-over-ip-sizes",
    ])
    .arg("--pattern")
    .arg(&pattern)
    .arg("--pcap")
    .arg(&pcap)
    .args([
        "--",
        env!("CARGO_BIN_EXE_brisk"),
        "msg-recv",
        "--bind",
        "{server}:9899",
    ])
    .arg("--records")
    .arg(&records)
    .args(STANDARD)
    .args(["--", env!("CARGO_BIN_EXE_brisk"), "msg-send"])
    .args(["--bind", "{client}:9899", "--connect", "{server}:9899"])
    .args([
        "--size",
        "200",
        "--bursts",
        "3",
        "--burst-size",
        "4",
        "--gap",
        "200",
    ])
    .args(STANDARD);
    let child = start(&mut cmd);
    let pid = child.id();
    let out = finish(child, "brisk emulate", Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "brisk emulate needs root: {stderr}\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(stderr.contains("1 dropped"), "{stderr}");
    let text = std::fs::read_to_string(&records).unwrap();
    let mtt = |seq: u64| -> f64 {
        let row = text
            .lines()
            .skip(1)
            .find(|l| l.starts_with(&format!("{seq},")))
            .unwrap_or_else(|| panic!("message {seq} not in\n{text}"));
        let f: Vec<f64> = row.split(',').map(|x| x.parse().unwrap()).collect();
        (f[2] - f[1]) / 1e6
    };
    // Every message arrived.
    assert_eq!(text.lines().count(), 1 + 12, "{text}");
    // The timeline: no SACK acknowledges the lost first message of its
    // burst, so T3 runs from its own send: RTO.Min 100 ms, then 15 ms and
    // one 248-byte packet at 2 Mbit/s, 115.992 ms. The emulator adds its own
    // small error (under a millisecond at the median), never subtracts.
    let lost = mtt(8);
    assert!(
        (115.99..118.0).contains(&lost),
        "message 9: {lost} ms, against the timeline's 115.992"
    );
    // The burst before was not touched: one trip, 15.992 ms, and the
    // emulator's small error. (The messages behind the lost one wait for it:
    // ordered delivery.)
    let before = mtt(4);
    assert!((15.99..18.0).contains(&before), "message 5: {before} ms");
    let behind = mtt(9);
    assert!(
        behind >= lost - 1.0,
        "message 10 is delivered after 9: {behind} ms"
    );
    // The capture shows the drop, commented.
    let cap = std::fs::read(&pcap).unwrap();
    let needle = b"drop-new-chunk pattern (first transmission of chunk 9";
    assert!(
        cap.windows(needle.len()).any(|w| w == needle),
        "the pcapng comments the drop"
    );
    assert!(namespaces_of(pid).is_empty(), "{:?}", namespaces_of(pid));
}

#[test]
fn linux_tcp_runs_through_the_emulator_and_delivers_every_message() {
    let _one_at_a_time = TIMED.lock().unwrap_or_else(|p| p.into_inner());
    let records = tmp("tcp.csv");
    let mut cmd = brisk();
    cmd.args(["emulate", "--link", "10mbit,10ms"])
        .args([
            "--",
            env!("CARGO_BIN_EXE_brisk"),
            "msg-recv",
            "--transport",
            "tcp",
        ])
        .args(["--bind", "{server}:7000", "--records"])
        .arg(&records)
        .args([
            "--",
            env!("CARGO_BIN_EXE_brisk"),
            "msg-send",
            "--transport",
            "tcp",
        ])
        .args(["--bind", "{client}:0", "--connect", "{server}:7000"])
        .args([
            "--size",
            "1000",
            "--every",
            "2",
            "--count",
            "200",
            "--start-delay",
            "50",
        ]);
    let out = finish(start(&mut cmd), "brisk emulate", Duration::from_secs(60));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&records).unwrap();
    let seqs: Vec<u64> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(seqs, (0..200).collect::<Vec<_>>());
}

#[test]
fn bad_arguments_are_clear_errors() {
    let run = |args: &[&str]| {
        let out = finish(
            start(brisk().args(args)),
            "brisk emulate",
            Duration::from_secs(20),
        );
        assert!(!out.status.success(), "{args:?} should fail");
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let e = run(&["emulate", "--", "true"]);
    assert!(e.contains("needs two commands"), "{e}");
    let e = run(&["emulate", "--link", "fast,1ms", "--", "true", "--", "true"]);
    assert!(e.contains("rate `fast`"), "{e}");
    let bad = tmp("bad-pattern.txt");
    std::fs::write(&bad, "drop 1\nbernoulli lots\n").unwrap();
    let e = run(&[
        "emulate",
        "--pattern",
        bad.to_str().unwrap(),
        "--",
        "true",
        "--",
        "true",
    ]);
    assert!(
        e.contains("bad-pattern.txt") && e.contains("line 2"),
        "the error names the file and the line: {e}"
    );
    let e = run(&[
        "emulate",
        "--pattern",
        "/nonexistent/p.txt",
        "--",
        "true",
        "--",
        "true",
    ]);
    assert!(e.contains("/nonexistent/p.txt"), "{e}");
    let e = run(&["emulate", "--", "/nonexistent/server", "--", "true"]);
    assert!(
        e.contains("exited before the client started") || e.contains("nonexistent"),
        "{e}"
    );
}

#[test]
fn ctrl_c_stops_the_commands_and_removes_the_namespaces() {
    let _one_at_a_time = TIMED.lock().unwrap_or_else(|p| p.into_inner());
    let child = start(brisk().args(["emulate", "--", "sleep", "30", "--", "sleep", "30"]));
    let pid = child.id();
    // Wait until the namespaces exist, then interrupt.
    assert!(
        namespaces_appear(pid),
        "brisk emulate (root) made no namespaces"
    );
    std::thread::sleep(Duration::from_millis(500));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = finish(child, "interrupted brisk emulate", Duration::from_secs(15));
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    assert!(namespaces_of(pid).is_empty(), "{:?}", namespaces_of(pid));
}

#[test]
fn ctrl_c_stops_an_emulated_experiment_and_removes_its_namespaces() {
    let _one_at_a_time = TIMED.lock().unwrap_or_else(|p| p.into_inner());
    let file = tmp("ctrl-c.toml");
    std::fs::write(
        &file,
        r#"
name = "ctrl-c"
title = "T"
source = "test"
method = "flow"
statistic = "median"
figure = "latency-table"
[topology]
kind = "point-to-point"
bandwidth = "10mbit"
delay = "5ms"
[traffic]
kind = "periodic"
interval = "10ms"
messages = 3000
message_size = 100
[[stacks]]
name = "sleepers"
server = ["sleep", "60"]
client = ["sleep", "60"]
[[variants]]
name = "a"
stack = "sleepers"
[[variants]]
name = "b"
stack = "sleepers"
"#,
    )
    .unwrap();
    let out_dir = tmp("ctrl-c-report");
    let child = start(brisk().arg("run").arg(&file).arg("--out").arg(&out_dir));
    let pid = child.id();
    assert!(
        namespaces_appear(pid),
        "brisk run of an emulated experiment (root) made no namespaces"
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = finish(child, "interrupted brisk run", Duration::from_secs(15));
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("interrupted"), "{stderr}");
    // Interrupted while it measured the emulator's accuracy (the first
    // thing an emulated experiment does): no run started, nothing is left.
    assert!(!out_dir.join("runs.csv").exists());
    assert!(namespaces_of(pid).is_empty(), "{:?}", namespaces_of(pid));
}
