//! Interoperability with real SCTP stacks over UDP on loopback: usrsctp (C,
//! Debian's libusrsctp-dev) and pion/sctp (Go, v1.11.3). Each peer speaks the
//! protocol of `tests/interop/PROTOCOL.md`; Brisk plays the other role, in both
//! directions, ending with a graceful shutdown or an abort. Every run is
//! captured with tshark, and every packet must have a good CRC32c and dissect
//! without error.
//!
//! Needs: cc and libusrsctp-dev, go, tshark, and root for the loopback capture.
//! `scripts/test` installs them; a missing one fails the test with its name.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use brisk::{Association, Config, Endpoint, EndpointConfig, Error, Reliability, SendOptions};
use bytes::Bytes;

const COUNT: u64 = 1000;
const SEED: u64 = 7;

#[path = "../../../tests/interop/build_peer.rs"]
mod build_peer;
use build_peer::build_peer;

fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// GEN(i, S) of PROTOCOL.md.
struct Gen;

impl Gen {
    const SIZES: [usize; 12] = [1, 2, 3, 4, 100, 1000, 1199, 1200, 1452, 4096, 16384, 65536];

    fn stream(i: u64) -> u16 {
        (i % 8) as u16
    }

    fn unordered(stream: u16) -> bool {
        stream >= 6
    }

    fn payload(i: u64, seed: u64) -> Vec<u8> {
        let size = Self::SIZES[(i % 12) as usize];
        (0..size as u64)
            .map(|j| ((i * 131 + j * 7 + seed) % 256) as u8)
            .collect()
    }
}

/// The configuration Brisk uses against foreign peers.
fn config() -> Config {
    Config {
        max_message_size: 256 << 10,
        rto_min: Duration::from_millis(200),
        rto_initial: Duration::from_millis(500),
        ..Config::rfc9260()
    }
}

async fn endpoint(port: u16, accept: bool) -> Endpoint {
    endpoint_with(port, accept, config()).await
}

async fn endpoint_with(port: u16, accept: bool, accept_config: Config) -> Endpoint {
    Endpoint::bind(
        format!("127.0.0.1:{port}").parse().unwrap(),
        EndpointConfig {
            port: 5000,
            accept,
            accept_config,
            ..EndpointConfig::default()
        },
    )
    .await
    .unwrap()
}

/// Brisk as the client of PROTOCOL.md: sends GEN messages with a window,
/// verifies the echoes, then shuts down or aborts. Returns the messages verified.
async fn brisk_client(assoc: &Association, abort_after: Option<u64>) -> Result<u64, String> {
    let window = 32;
    let (mut sent, mut verified) = (0u64, 0u64);
    let mut last_on_stream: HashMap<u16, u64> = HashMap::new();
    let target = abort_after.unwrap_or(COUNT);
    let pr = assoc.partial_reliability();
    while verified < target {
        while sent < COUNT && sent - verified < window {
            let stream = Gen::stream(sent);
            // With partial reliability, the unordered streams' messages carry
            // a policy (RFC 7496); with no loss, each still arrives.
            let reliability = match (pr && Gen::unordered(stream), sent % 2) {
                (false, _) => Reliability::Reliable,
                (true, 0) => Reliability::MaxRetransmits(3),
                (true, _) => Reliability::Lifetime(Duration::from_secs(30)),
            };
            let opts = SendOptions {
                ppid: 1000 + sent as u32,
                unordered: Gen::unordered(stream),
                immediate_sack: false,
                reliability,
            };
            assoc
                .send(stream, Bytes::from(Gen::payload(sent, SEED)), opts)
                .await
                .map_err(|e| format!("send {sent}: {e}"))?;
            sent += 1;
        }
        let m = tokio::time::timeout(Duration::from_secs(30), assoc.recv())
            .await
            .map_err(|_| format!("no echo after {verified} verified"))?
            .map_err(|e| format!("recv after {verified} verified: {e}"))?;
        let i = u64::from(m.ppid.wrapping_sub(1000));
        if i >= sent {
            return Err(format!("echo with PPID {} was never sent", m.ppid));
        }
        if m.stream_id != Gen::stream(i) || m.payload[..] != Gen::payload(i, SEED)[..] {
            return Err(format!(
                "echo of message {i} differs (stream {})",
                m.stream_id
            ));
        }
        if !Gen::unordered(m.stream_id) {
            if let Some(&prev) = last_on_stream.get(&m.stream_id)
                && prev > i
            {
                return Err(format!(
                    "stream {} out of order: {i} after {prev}",
                    m.stream_id
                ));
            }
            last_on_stream.insert(m.stream_id, i);
        }
        verified += 1;
    }
    Ok(verified)
}

/// Brisk as the server of PROTOCOL.md: echoes until the association ends;
/// returns (messages echoed, how it ended).
async fn brisk_server(assoc: Association) -> (u64, Result<(), Error>) {
    let mut echoed = 0;
    loop {
        match assoc.recv().await {
            Ok(m) => {
                let opts = SendOptions {
                    ppid: m.ppid,
                    unordered: Gen::unordered(m.stream_id),
                    immediate_sack: false,
                    ..Default::default()
                };
                if let Err(e) = assoc.send(m.stream_id, m.payload, opts).await {
                    return (echoed, Err(e));
                }
                echoed += 1;
            }
            Err(Error::Closed(_)) => return (echoed, Ok(())),
            Err(e) => return (echoed, Err(e)),
        }
    }
}

/// A tshark capture of loopback UDP on some ports.
struct Capture {
    child: Child,
    file: PathBuf,
    /// The peer's port, then Brisk's.
    ports: Vec<u16>,
}

impl Capture {
    fn start(name: &str, ports: &[u16]) -> Capture {
        let uid = Command::new("id")
            .arg("-u")
            .output()
            .map(|o| o.stdout)
            .unwrap_or_default();
        assert_eq!(
            String::from_utf8_lossy(&uid).trim(),
            "0",
            "capturing on loopback needs root (CI and scripts/test run as root)"
        );
        let file = std::env::temp_dir().join(format!(
            "brisk-interop-{name}-{}.pcapng",
            std::process::id()
        ));
        let filter = ports
            .iter()
            .map(|p| format!("udp port {p}"))
            .collect::<Vec<_>>()
            .join(" or ");
        let mut child = Command::new("tshark")
            .args(["-i", "lo", "-q", "-f", &filter, "-w"])
            .arg(&file)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("tshark is needed for the interop captures: apt-get install tshark");
        // Wait until tshark says it is capturing.
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains("Capturing on") {
                    let _ = tx.send(());
                }
            }
        });
        rx.recv_timeout(Duration::from_secs(20))
            .expect("tshark did not start capturing on lo within 20 s");
        std::thread::sleep(Duration::from_millis(200));
        Capture {
            child,
            file,
            ports: ports.to_vec(),
        }
    }

    /// Stops the capture and checks every SCTP packet in it; returns the count.
    fn finish(mut self) -> usize {
        std::thread::sleep(Duration::from_millis(300));
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
        let mut cmd = Command::new("tshark");
        cmd.arg("-r")
            .arg(&self.file)
            .args(["-o", "sctp.checksum:CRC 32c"]);
        for p in &self.ports {
            cmd.args(["-d", &format!("udp.port=={p},sctp")]);
        }
        let out = cmd
            .args([
                "-T",
                "fields",
                "-e",
                "frame.number",
                "-e",
                "udp.srcport",
                "-e",
                "sctp.checksum.status",
                "-e",
                "_ws.malformed",
                "-e",
                "_ws.expert.severity",
            ])
            .output()
            .expect("tshark");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let ours = self.ports.last().map(u16::to_string).unwrap_or_default();
        let mut sctp = 0;
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            let status = f.get(2).copied().unwrap_or("");
            if status.is_empty() {
                continue;
            }
            sctp += 1;
            assert_eq!(
                status,
                "1",
                "frame {} has a bad checksum in {}",
                f[0],
                self.file.display()
            );
            let malformed = f.get(3).is_some_and(|m| !m.is_empty());
            // Ours is the last port; the peer's own quirks (pion v1.11.3
            // now and then sends a HEARTBEAT without its Heartbeat Info
            // parameter) are reported, not failed: Brisk must only survive them.
            if malformed && f[1] == ours {
                panic!(
                    "frame {} (sent by Brisk) is malformed in {}",
                    f[0],
                    self.file.display()
                );
            } else if malformed {
                eprintln!(
                    "note: frame {} (sent by the peer) is malformed in {}",
                    f[0],
                    self.file.display()
                );
            }
        }
        assert!(
            sctp > 0,
            "no SCTP packets captured in {}",
            self.file.display()
        );
        let _ = std::fs::remove_file(&self.file);
        sctp
    }
}

/// Runs a peer process; returns its result line.
fn peer_output(child: Child, what: &str) -> String {
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        out.status.success(),
        "{what} failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn spawn(bin: &Path, args: &[String]) -> Child {
    Command::new(bin)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", bin.display()))
}

/// Brisk connects to the peer's server, echoes are verified, then Brisk ends.
async fn brisk_as_client(peer: &str, end: &str) {
    brisk_as_client_with(peer, end, config()).await;
}

/// Brisk's low-latency preset (I bit, bundling, early retransmit, tail loss
/// probe, PKTDROP offered) must interoperate as well as the standard one.
async fn brisk_low_latency_as_client(peer: &str, end: &str) {
    let cfg = brisk::Config {
        max_message_size: 256 << 10,
        ..brisk::Config::low_latency()
    };
    brisk_as_client_with(peer, end, cfg).await;
}

/// Partial reliability offered (Forward-TSN-Supported and Supported
/// Extensions in INIT): the real stacks accept the INIT and agree, and with no
/// loss every message, sent with a retransmission limit or a lifetime, arrives.
async fn brisk_partial_reliability_as_client(peer: &str, end: &str) {
    let cfg = brisk::Config {
        partial_reliability: true,
        ..config()
    };
    brisk_as_client_with(peer, end, cfg).await;
}

async fn brisk_as_client_with(peer: &str, end: &str, cfg: Config) {
    let bin = build_peer(peer, &[]);
    let (peer_port, our_port) = (free_port(), free_port());
    let capture = Capture::start(&format!("{peer}-server-{end}"), &[peer_port, our_port]);
    let server = spawn(
        &bin,
        &[
            "server".into(),
            "--bind".into(),
            format!("127.0.0.1:{peer_port}"),
        ],
    );
    std::thread::sleep(Duration::from_millis(300));
    let ep = endpoint(our_port, false).await;
    let remote: SocketAddr = format!("127.0.0.1:{peer_port}").parse().unwrap();
    let assoc = ep
        .connect_to_port(remote, 5000, cfg.clone())
        .await
        .expect("handshake");
    assert_eq!(
        assoc.partial_reliability(),
        cfg.partial_reliability,
        "{peer} answers Forward-TSN-Supported"
    );
    let started = Instant::now();
    match end {
        "shutdown" => {
            let verified = brisk_client(&assoc, None).await.unwrap();
            assert_eq!(verified, COUNT);
            assoc.close().await.expect("graceful close");
            let line = peer_output(server, &format!("{peer} server"));
            assert_eq!(line, format!("CLOSED shutdown echoed={COUNT}"));
        }
        _ => {
            let verified = brisk_client(&assoc, Some(COUNT / 2)).await.unwrap();
            assoc.abort("interop abort");
            let line = peer_output(server, &format!("{peer} server"));
            assert!(
                line.starts_with("CLOSED abort echoed="),
                "{line} (verified {verified})"
            );
        }
    }
    eprintln!(
        "brisk client -> {peer} server ({end}): {:?}",
        started.elapsed()
    );
    let packets = capture.finish();
    assert!(packets > 100, "{packets} packets");
}

/// The peer connects to Brisk's server, which echoes; the peer verifies and ends.
async fn brisk_as_server(peer: &str, end: &str) {
    brisk_as_server_with(peer, end, config()).await;
}

/// Brisk's server offers partial reliability: the real stacks' INIT offers it
/// too, and both agree.
async fn brisk_partial_reliability_as_server(peer: &str, end: &str) {
    let cfg = Config {
        partial_reliability: true,
        ..config()
    };
    brisk_as_server_with(peer, end, cfg).await;
}

async fn brisk_as_server_with(peer: &str, end: &str, cfg: Config) {
    let bin = build_peer(peer, &[]);
    let (our_port, peer_port) = (free_port(), free_port());
    let capture = Capture::start(&format!("{peer}-client-{end}"), &[peer_port, our_port]);
    let ep = endpoint_with(our_port, true, cfg.clone()).await;
    let mut args = vec![
        "client".to_string(),
        "--bind".into(),
        format!("127.0.0.1:{peer_port}"),
        "--connect".into(),
        format!("127.0.0.1:{our_port}"),
        "--count".into(),
        COUNT.to_string(),
        "--seed".into(),
        SEED.to_string(),
        "--end".into(),
        end.into(),
    ];
    if end == "abort" {
        args.extend(["--abort-after".into(), (COUNT / 2).to_string()]);
    }
    let client = spawn(&bin, &args);
    let assoc = tokio::time::timeout(Duration::from_secs(30), ep.accept())
        .await
        .expect("the peer's INIT")
        .expect("accept");
    assert_eq!(
        assoc.partial_reliability(),
        cfg.partial_reliability,
        "{peer}'s INIT offers Forward-TSN-Supported"
    );
    let (echoed, how) = tokio::time::timeout(Duration::from_secs(60), brisk_server(assoc))
        .await
        .expect("the association ends");
    let line = peer_output(client, &format!("{peer} client"));
    match end {
        "shutdown" => {
            assert_eq!(line, format!("OK verified={COUNT}"));
            assert!(how.is_ok(), "{how:?}");
            assert_eq!(echoed, COUNT);
        }
        _ => {
            assert_eq!(line, format!("ABORTED verified={}", COUNT / 2));
            match how {
                Err(Error::PeerAborted { cause }) => {
                    assert!(cause.contains("interop abort"), "{cause}")
                }
                other => panic!("expected PeerAborted, got {other:?}"),
            }
        }
    }
    let packets = capture.finish();
    assert!(packets > 100, "{packets} packets");
}

macro_rules! matrix {
    ($($name:ident: $f:ident($peer:literal, $end:literal);)*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                $f($peer, $end).await;
            }
        )*
    };
}

matrix! {
    brisk_client_usrsctp_server_shutdown: brisk_as_client("usrsctp", "shutdown");
    brisk_client_usrsctp_server_abort: brisk_as_client("usrsctp", "abort");
    usrsctp_client_brisk_server_shutdown: brisk_as_server("usrsctp", "shutdown");
    usrsctp_client_brisk_server_abort: brisk_as_server("usrsctp", "abort");
    brisk_client_pion_server_shutdown: brisk_as_client("pion", "shutdown");
    brisk_client_pion_server_abort: brisk_as_client("pion", "abort");
    pion_client_brisk_server_shutdown: brisk_as_server("pion", "shutdown");
    pion_client_brisk_server_abort: brisk_as_server("pion", "abort");
    brisk_low_latency_client_usrsctp_server: brisk_low_latency_as_client("usrsctp", "shutdown");
    brisk_low_latency_client_pion_server: brisk_low_latency_as_client("pion", "shutdown");
    brisk_pr_client_usrsctp_server: brisk_partial_reliability_as_client("usrsctp", "shutdown");
    brisk_pr_client_pion_server: brisk_partial_reliability_as_client("pion", "shutdown");
    usrsctp_client_brisk_pr_server: brisk_partial_reliability_as_server("usrsctp", "shutdown");
    pion_client_brisk_pr_server: brisk_partial_reliability_as_server("pion", "shutdown");
}

// ---- Stream reconfiguration (RFC 6525) --------------------------------------
//
// The peers' `reconfig-server` / `reconfig-client` roles (the usrsctp peer's
// reconfig block, pion's reconfig.go): the initiator sends messages on
// stream 1, resets its outgoing stream 1 with them in flight, and sends more
// on it, which must arrive numbered from SSN 0 again; then streams are added
// (and, with usrsctp, SSNs and TSNs reset, and usrsctp asked to reset its
// own stream) where the peer can (usrsctp both ways; pion cannot parse Add Streams
// or Incoming SSN Reset Requests and drops them, which Brisk reports as never
// answered). PPIDs
// 1001, 1002, 1003 and 1009 mark the phases (PPIDs tshark does not dissect).

mod reconfig {
    use super::*;
    use brisk::{RECONFIG_NO_ANSWER, ResetDirection, StreamEvent};

    const K: u64 = 50;

    fn reconfig_config() -> Config {
        Config {
            stream_reconfig: true,
            max_inbound_streams: 32,
            // A request pion drops is given up after 6 sends: within seconds.
            rto_max: Duration::from_secs(1),
            ..config()
        }
    }

    fn opts(ppid: u32) -> SendOptions {
        SendOptions {
            ppid,
            ..Default::default()
        }
    }

    /// Waits for stream events until `done` holds for those seen so far.
    async fn events_until(
        assoc: &Association,
        seen: &mut Vec<StreamEvent>,
        done: impl Fn(&[StreamEvent]) -> bool,
    ) {
        while !done(seen) {
            let e = tokio::time::timeout(Duration::from_secs(30), assoc.stream_event())
                .await
                .unwrap_or_else(|_| panic!("no stream event in 30 s; seen {seen:?}"))
                .expect("association open");
            eprintln!(
                "stream event: {e:?} ({:?} since the start)",
                started().elapsed()
            );
            seen.push(e);
        }
    }

    /// When the first reconfiguration test of this process started.
    fn started() -> Instant {
        static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        *START.get_or_init(Instant::now)
    }

    fn has(seen: &[StreamEvent], want: &StreamEvent) -> bool {
        seen.contains(want)
    }

    fn reset(direction: ResetDirection) -> StreamEvent {
        StreamEvent::Reset {
            direction,
            streams: vec![1],
        }
    }

    /// Brisk resets its outgoing stream 1 with messages in flight, then adds
    /// streams; the peer's server checks what arrives.
    pub async fn brisk_resets_and_adds_streams(peer: &str) {
        let bin = build_peer(peer, &[]);
        let (peer_port, our_port) = (free_port(), free_port());
        let capture = Capture::start(&format!("{peer}-reconfig-server"), &[peer_port, our_port]);
        let server = spawn(
            &bin,
            &[
                "reconfig-server".into(),
                "--bind".into(),
                format!("127.0.0.1:{peer_port}"),
            ],
        );
        std::thread::sleep(Duration::from_millis(300));
        let ep = endpoint(our_port, false).await;
        let remote: SocketAddr = format!("127.0.0.1:{peer_port}").parse().unwrap();
        let assoc = ep
            .connect_to_port(remote, 5000, reconfig_config())
            .await
            .expect("handshake");
        assert!(assoc.stream_reconfig(), "{peer} lists RE-CONFIG");
        for i in 0..K {
            assoc
                .send(1, format!("before-{i}").into_bytes(), opts(1001))
                .await
                .unwrap();
        }
        assoc.reset_streams(&[1]).unwrap();
        for i in 0..K {
            assoc
                .send(1, format!("after-{i}").into_bytes(), opts(1002))
                .await
                .unwrap();
        }
        let mut seen = Vec::new();
        events_until(&assoc, &mut seen, |s| {
            has(s, &reset(ResetDirection::Outgoing))
        })
        .await;
        if peer == "usrsctp" {
            assoc.add_streams(2, 2).unwrap();
            events_until(&assoc, &mut seen, |s| {
                s.iter().any(|e| {
                    matches!(
                        e,
                        StreamEvent::Added {
                            outgoing: 18,
                            incoming: 18
                        }
                    )
                })
            })
            .await;
            assoc.send(17, b"added".to_vec(), opts(1009)).await.unwrap();
            let m = tokio::time::timeout(Duration::from_secs(30), assoc.recv())
                .await
                .expect("the server's answer on its added stream")
                .unwrap();
            assert_eq!(
                (m.stream_id, m.ppid, &m.payload[..]),
                (17, 1009, &b"added"[..])
            );
            // RFC 6525 5.1.4: an SSN/TSN reset; the next messages on
            // stream 1 are numbered from 0 under the new TSNs.
            assoc.reset_ssn_tsn().unwrap();
            for i in 0..5 {
                assoc
                    .send(1, format!("assoc-{i}").into_bytes(), opts(1003))
                    .await
                    .unwrap();
            }
            events_until(&assoc, &mut seen, |s| {
                has(s, &StreamEvent::AssociationReset)
            })
            .await;
            // RFC 6525 5.1.3: usrsctp resets its outgoing stream 1 for us.
            assoc.request_incoming_reset(&[1]).unwrap();
            events_until(&assoc, &mut seen, |s| {
                has(s, &reset(ResetDirection::Incoming))
            })
            .await;
        } else {
            // pion cannot parse an Add Streams Request: it drops the packet
            // without a word, and Brisk gives up and says so.
            assoc.add_streams(2, 0).unwrap();
            events_until(&assoc, &mut seen, |s| {
                s.iter().any(|e| matches!(e, StreamEvent::AddFailed { .. }))
            })
            .await;
            assert!(
                has(
                    &seen,
                    &StreamEvent::AddFailed {
                        outgoing: 2,
                        incoming: 0,
                        result: RECONFIG_NO_ANSWER
                    }
                ),
                "{seen:?}"
            );
            // Nor an Incoming SSN Reset Request (pion resets its streams
            // only when it closes them).
            assoc.request_incoming_reset(&[2]).unwrap();
            events_until(&assoc, &mut seen, |s| {
                s.iter()
                    .any(|e| matches!(e, StreamEvent::ResetFailed { .. }))
            })
            .await;
            assert!(
                has(
                    &seen,
                    &StreamEvent::ResetFailed {
                        streams: vec![2],
                        result: RECONFIG_NO_ANSWER
                    }
                ),
                "{seen:?}"
            );
        }
        assoc.flush().await.unwrap();
        assoc.close().await.expect("graceful close");
        let line = peer_output(server, &format!("{peer} reconfig-server"));
        let expected = if peer == "usrsctp" {
            format!(
                "RECONFIG before={K} reset=1 after={K} ssn=ok instreams=18 outstreams=18 added=1 \
                 assoc=5 out_reset=1"
            )
        } else {
            format!("RECONFIG before={K} reset=1 after={K} ssn=na added=0")
        };
        assert_eq!(line, expected);
        let packets = capture.finish();
        assert!(packets > 10, "{packets} packets");
    }

    /// The peer resets its outgoing stream 1 with messages in flight (and
    /// usrsctp adds streams); Brisk checks the numbering and, as a data
    /// channel does (RFC 8831 6.7), resets its own stream 1 in turn.
    pub async fn peer_resets_and_adds_streams(peer: &str) {
        let bin = build_peer(peer, &[]);
        let (our_port, peer_port) = (free_port(), free_port());
        let capture = Capture::start(&format!("{peer}-reconfig-client"), &[peer_port, our_port]);
        let ep = endpoint_with(our_port, true, reconfig_config()).await;
        let mut args = vec![
            "reconfig-client".to_string(),
            "--bind".into(),
            format!("127.0.0.1:{peer_port}"),
            "--connect".into(),
            format!("127.0.0.1:{our_port}"),
            "--count".into(),
            K.to_string(),
        ];
        let add = if peer == "usrsctp" { 2 } else { 0 };
        if add > 0 {
            args.extend(["--add".into(), add.to_string()]);
        }
        let client = spawn(&bin, &args);
        let assoc = tokio::time::timeout(Duration::from_secs(30), ep.accept())
            .await
            .expect("the peer's INIT")
            .expect("accept");
        assert!(assoc.stream_reconfig(), "{peer} lists RE-CONFIG");
        let mut msgs: Vec<(u16, u32, u16, String)> = Vec::new();
        let mut seen: Vec<StreamEvent> = Vec::new();
        let (mut events_open, mut answered) = (true, false);
        let end = Instant::now() + Duration::from_secs(60);
        loop {
            tokio::select! {
                m = assoc.recv() => match m {
                    Ok(m) => msgs.push((
                        m.stream_id,
                        m.ppid,
                        m.ssn,
                        String::from_utf8_lossy(&m.payload).into_owned(),
                    )),
                    Err(Error::Closed(_)) => break,
                    Err(e) => panic!("recv: {e}"),
                },
                e = assoc.stream_event(), if events_open => match e {
                    Ok(e) => {
                        eprintln!("stream event: {e:?}");
                        if e == reset(ResetDirection::Incoming) {
                            assoc.reset_streams(&[1]).unwrap();
                        }
                        if let StreamEvent::Added { outgoing, .. } = e
                            && outgoing > 16
                            && !answered
                        {
                            answered = true;
                            assoc.send(outgoing - 1, b"added".to_vec(), opts(1009)).await.unwrap();
                        }
                        seen.push(e);
                    }
                    Err(_) => events_open = false,
                },
                _ = tokio::time::sleep_until(end.into()) => panic!("no end after 60 s: {msgs:?} {seen:?}"),
            }
        }
        let line = peer_output(client, &format!("{peer} reconfig-client"));
        assert_eq!(
            line,
            format!("OK reconfig before={K} after={K} added={add}")
        );
        // Stream 1: before-0.. with SSNs 0.., then after-0.. with SSNs 0.. again.
        let on_1: Vec<(u32, u16, String)> = msgs
            .iter()
            .filter(|m| m.0 == 1)
            .map(|m| (m.1, m.2, m.3.clone()))
            .collect();
        let expected: Vec<(u32, u16, String)> = (0..K)
            .map(|i| (1001, i as u16, format!("before-{i}")))
            .chain((0..K).map(|i| (1002, i as u16, format!("after-{i}"))))
            .collect();
        assert_eq!(on_1, expected);
        assert!(has(&seen, &reset(ResetDirection::Incoming)), "{seen:?}");
        assert!(has(&seen, &reset(ResetDirection::Outgoing)), "{seen:?}");
        if add > 0 {
            for e in [
                StreamEvent::Added {
                    outgoing: 16,
                    incoming: 18,
                },
                StreamEvent::Added {
                    outgoing: 18,
                    incoming: 18,
                },
            ] {
                assert!(has(&seen, &e), "{seen:?}");
            }
            assert!(
                msgs.iter()
                    .any(|m| (m.0, m.1, m.3.as_str()) == (17, 1009, "added")),
                "{msgs:?}"
            );
        }
        let packets = capture.finish();
        assert!(packets > 10, "{packets} packets");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn brisk_resets_and_adds_streams_usrsctp() {
    reconfig::brisk_resets_and_adds_streams("usrsctp").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn brisk_resets_streams_pion() {
    reconfig::brisk_resets_and_adds_streams("pion").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usrsctp_resets_and_adds_streams_brisk() {
    reconfig::peer_resets_and_adds_streams("usrsctp").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pion_resets_streams_brisk() {
    reconfig::peer_resets_and_adds_streams("pion").await;
}
