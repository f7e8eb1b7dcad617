//! The network commands, run as the real binary on loopback.

use std::net::{SocketAddr, UdpSocket};
use std::process::{Child, Output};
use std::time::Duration;

mod process;

use process::{brisk, finish, start};

/// The standard output of a command that must have succeeded.
fn succeeded(out: &Output) -> String {
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

/// Starts `brisk echo --once` on a free loopback port; returns it and its address.
fn start_echo() -> (Child, String) {
    let listen = format!("127.0.0.1:{}", free_port());
    let echo = start(brisk().args(["echo", "--listen", &listen, "--once"]));
    std::thread::sleep(Duration::from_millis(300));
    (echo, listen)
}

/// The p50 round-trip time (ms) of a bench report.
fn p50_ms(report: &str) -> f64 {
    let rest = report
        .split_once("latency (round trip): p50 ")
        .unwrap_or_else(|| panic!("no p50 in {report}"))
        .1;
    rest.split_once(" ms").unwrap().0.parse().unwrap()
}

#[test]
fn bench_against_echo_reports_throughput_and_round_trip_latency() {
    let (echo, listen) = start_echo();
    let bench = start(
        brisk()
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
            ]),
    );
    let stdout = succeeded(&finish(bench, "bench", Duration::from_secs(20)));
    assert!(
        stdout.contains("bench: 2000 messages of 300 bytes"),
        "{stdout}"
    );
    assert!(stdout.contains("throughput: "), "{stdout}");
    assert!(stdout.contains("latency (round trip): p50 "), "{stdout}");
    assert!(!stdout.contains("rejected"), "{stdout}");
    let echo = finish(echo, "echo", Duration::from_secs(5));
    assert!(echo.status.success());
    assert_eq!(
        String::from_utf8_lossy(&echo.stdout).trim(),
        "echoed 2000 messages; association shut down gracefully"
    );
}

/// Paced at 1000 msgs/s with the default window of 256, each round trip on
/// loopback takes well under a millisecond. Reading echoes only once the
/// window was full measured each message from its send to the moment the
/// window filled: a p50 of about 255 ms (100 ms and more over 400 messages).
#[test]
fn paced_bench_times_each_message_from_its_own_send() {
    let (echo, listen) = start_echo();
    let bench = start(brisk().args(["bench", "--to", &listen, "--count", "400", "--rate", "1000"]));
    let stdout = succeeded(&finish(bench, "bench", Duration::from_secs(20)));
    assert!(
        stdout.contains("bench: 400 messages of 100 bytes"),
        "{stdout}"
    );
    let p50 = p50_ms(&stdout);
    assert!(p50 < 20.0, "p50 {p50} ms on loopback: {stdout}");
    let echo = finish(echo, "echo", Duration::from_secs(5));
    assert_eq!(
        String::from_utf8_lossy(&echo.stdout).trim(),
        "echoed 400 messages; association shut down gracefully"
    );
}

/// A peer that echoes message `i` (its PPID) back wrongly by `i mod 4`:
/// 0 as sent, 1 twice, 2 with a PPID never sent, 3 with the payload of `i+1`.
fn start_bad_echo() -> SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let ep = brisk::Endpoint::bind(
                "127.0.0.1:0".parse().unwrap(),
                brisk::EndpointConfig::default(),
            )
            .await
            .unwrap();
            tx.send(ep.local_addr()).unwrap();
            let assoc = ep.accept().await.unwrap();
            while let Ok(m) = assoc.recv().await {
                let opts = |ppid| brisk::SendOptions {
                    ppid,
                    ..Default::default()
                };
                let mut copies = vec![(m.ppid, m.payload.clone())];
                match m.ppid % 4 {
                    0 => {}
                    1 => copies.push((m.ppid, m.payload.clone())),
                    2 => copies[0].0 = m.ppid + 1_000_000,
                    _ => {
                        let mut p = m.payload.to_vec();
                        p[7] = p[7].wrapping_add(1);
                        copies[0].1 = p.into();
                    }
                }
                for (ppid, payload) in copies {
                    // The bench shuts down once it has its count of echoes.
                    let _ = assoc.send(m.stream_id, payload, opts(ppid)).await;
                }
            }
        });
    });
    rx.recv_timeout(Duration::from_secs(5)).unwrap()
}

#[test]
fn bench_rejects_echoes_it_did_not_send_and_fails() {
    let peer = start_bad_echo();
    // Echoes in order on stream 0: 0, 1, 1 again, a PPID never sent, 3 altered,
    // 4, 5, 5 again: the count of 8 is reached, 4 of them accepted.
    let bench = start(brisk().args([
        "bench",
        "--to",
        &peer.to_string(),
        "--count",
        "8",
        "--size",
        "100",
    ]));
    let out = finish(bench, "bench", Duration::from_secs(20));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(
            "rejected echoes: 4 (1 never sent, 2 already echoed, \
             1 altered (stream or payload not as sent))"
        ),
        "{stdout}"
    );
    assert!(
        stderr.contains(
            "the peer sent back 4 echo(es) that match no message sent \
             (1 never sent, 2 already echoed, 1 altered (stream or payload not as sent)); \
             the round-trip times cover only the 4 echoes that matched"
        ),
        "{stderr}"
    );
}

#[test]
fn send_to_recv_delivers_the_count_and_closes() {
    let listen = format!("127.0.0.1:{}", free_port());
    let recv = start(brisk().args(["recv", "--listen", &listen]));
    std::thread::sleep(Duration::from_millis(300));
    let send = start(
        brisk()
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
            .args(["--unordered", "--rate", "3000"]),
    );
    let stdout = succeeded(&finish(send, "send", Duration::from_secs(20)));
    assert!(
        stdout.starts_with("sent 300 messages of 5000 bytes"),
        "{stdout}"
    );
    assert!(
        stdout
            .trim_end()
            .ends_with("all acknowledged; association shut down gracefully"),
        "{stdout}"
    );
    let recv = finish(recv, "recv", Duration::from_secs(5));
    let got = String::from_utf8_lossy(&recv.stdout);
    assert!(
        got.starts_with("received 300 messages, 1500000 bytes"),
        "{got}"
    );
    assert!(got.contains("shut down gracefully"), "{got}");
}

/// `recv --count N` shuts the association down itself once it has N messages;
/// it used to exit without a word, leaving the sender retransmitting its
/// SHUTDOWN for minutes.
#[test]
fn recv_with_a_count_ends_the_association_gracefully() {
    let listen = format!("127.0.0.1:{}", free_port());
    let recv = start(brisk().args(["recv", "--listen", &listen, "--count", "50"]));
    std::thread::sleep(Duration::from_millis(300));
    let send = start(brisk().args(["send", "--to", &listen, "--count", "50"]));
    let sent = succeeded(&finish(send, "send", Duration::from_secs(15)));
    assert!(
        sent.starts_with("sent 50 messages of 100 bytes")
            && sent
                .trim_end()
                .ends_with("all acknowledged; association shut down gracefully"),
        "{sent}"
    );
    let got = succeeded(&finish(recv, "recv", Duration::from_secs(5)));
    assert!(got.starts_with("received 50 messages, 5000 bytes"), "{got}");
    assert!(
        got.trim_end()
            .ends_with("(count reached; association shut down gracefully)"),
        "{got}"
    );
}

/// Without `--bind`, the sending side binds the unspecified address of the
/// peer's family: an IPv6 peer just works.
#[test]
fn send_over_ipv6_binds_an_ipv6_address() {
    // Never skipped: a machine without the IPv6 loopback fails here, saying so.
    let probe = UdpSocket::bind("[::1]:0")
        .expect("this test needs the IPv6 loopback [::1] (enable IPv6 on lo)");
    let listen = probe.local_addr().unwrap().to_string();
    drop(probe);
    let recv = start(brisk().args(["recv", "--listen", &listen]));
    std::thread::sleep(Duration::from_millis(300));
    let send = start(brisk().args(["send", "--to", &listen, "--count", "20"]));
    let sent = succeeded(&finish(send, "send", Duration::from_secs(15)));
    assert!(sent.starts_with("sent 20 messages"), "{sent}");
    let got = succeeded(&finish(recv, "recv", Duration::from_secs(5)));
    assert!(got.starts_with("received 20 messages"), "{got}");
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
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid value 'fastest' for '--config <PRESET>'"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "[possible values: {}]",
            brisk_proto::PRESETS.join(", ")
        )),
        "{err}"
    );
}
