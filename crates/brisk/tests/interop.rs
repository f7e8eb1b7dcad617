//! Interoperability with real SCTP stacks over UDP on loopback: usrsctp (C,
//! Debian's libusrsctp-dev) and pion/sctp (Go, v1.11.3). Each peer speaks the
//! protocol of `tests/interop/PROTOCOL.md`; Brisk plays the other role, in both
//! directions, ending with a graceful shutdown or an abort. Every run is
//! captured with tshark, and every packet must have a good CRC32c and dissect
//! without error. Message interleaving (RFC 8260, I-DATA) is negotiated with
//! both (usrsctp with its peer's `--interleave`; pion v1.11.3 offers it by
//! default) and refused where the peer does not offer it; the captures'
//! DATA and I-DATA chunks are read to check which crossed the wire.
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
        self.stop();
        self.check()
    }

    /// Stops tshark, leaving the capture file.
    fn stop(&mut self) {
        std::thread::sleep(Duration::from_millis(300));
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }

    /// Checks every SCTP packet of the stopped capture, then removes it;
    /// returns the count.
    fn check(self) -> usize {
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

// --- Message interleaving (RFC 8260, I-DATA) ---

/// One chunk of user data as tshark dissects it.
#[derive(Debug, Clone, Copy)]
struct WireChunk {
    /// Sent from this UDP port.
    from: u16,
    /// I-DATA (with a MID), or DATA (with an SSN).
    idata: bool,
    tsn: u32,
    stream: u16,
}

impl Capture {
    /// Stops the capture and returns every DATA and I-DATA chunk in it,
    /// after the checks of `finish`; also the SCTP packet count.
    fn finish_with_chunks(mut self) -> (usize, Vec<WireChunk>) {
        self.stop();
        let mut cmd = Command::new("tshark");
        cmd.arg("-r")
            .arg(&self.file)
            .args(["-o", "sctp.checksum:CRC 32c"]);
        for p in &self.ports {
            cmd.args(["-d", &format!("udp.port=={p},sctp")]);
        }
        // Per frame: the TSN and stream of each DATA/I-DATA chunk, and
        // which of them carry a MID (I-DATA) or an SSN (DATA).
        let out = cmd
            .args([
                "-Y",
                "sctp.data_tsn_raw",
                "-T",
                "fields",
                "-E",
                "aggregator=,",
            ])
            .args([
                "-e",
                "udp.srcport",
                "-e",
                "sctp.data_tsn_raw",
                "-e",
                "sctp.data_sid",
            ])
            .args(["-e", "sctp.data_mid", "-e", "sctp.data_ssn"])
            .output()
            .expect("tshark");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut chunks = Vec::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let f: Vec<&str> = line.split('\t').collect();
            let list = |i: usize| -> Vec<&str> {
                f.get(i)
                    .map(|v| v.split(',').filter(|x| !x.is_empty()).collect())
                    .unwrap_or_default()
            };
            let (tsns, sids) = (list(1), list(2));
            let (mids, ssns) = (list(3).len(), list(4).len());
            assert_eq!(tsns.len(), sids.len(), "frame `{line}`");
            assert!(
                mids == 0 || ssns == 0,
                "DATA and I-DATA in one packet: `{line}`"
            );
            let from = f[0].parse().unwrap_or(0);
            for (t, s) in tsns.iter().zip(&sids) {
                chunks.push(WireChunk {
                    from,
                    idata: mids > 0,
                    tsn: t.parse().unwrap(),
                    // tshark prints the stream identifier in hex.
                    stream: u16::from_str_radix(s.trim_start_matches("0x"), 16).unwrap(),
                });
            }
        }
        (self.check(), chunks)
    }
}

/// Whether the chunks sent from `port`, in TSN order (first transmissions),
/// interleave: a message's stream has chunks of another stream between two
/// of its own (RFC 8260's point), for a stream in `large`.
fn interleaved(chunks: &[WireChunk], port: u16, large: &[u16]) -> bool {
    let mut by_tsn: Vec<(u32, u16)> = chunks
        .iter()
        .filter(|c| c.from == port)
        .map(|c| (c.tsn, c.stream))
        .collect();
    by_tsn.sort_unstable();
    by_tsn.dedup();
    let streams: Vec<u16> = by_tsn.iter().map(|c| c.1).collect();
    streams
        .windows(3)
        .any(|w| large.contains(&w[0]) && w[1] != w[0] && w[2] == w[0])
}

/// Interleaving on, with the configuration Brisk uses against foreign peers.
fn interleaving_config() -> Config {
    Config {
        message_interleaving: true,
        ..config()
    }
}

/// PPIDs of `large_and_small`: unregistered values, so that tshark does not
/// dissect the payloads as some protocol's; the large message's is `LARGE`.
const LARGE: u32 = 5000;

/// A 256 KiB message on stream 1, then small messages on streams 2 to 5,
/// all at once; each echo is verified. Returns the PPIDs in the order the
/// echoes came back (the large message's is `LARGE`, the small ones' above).
async fn large_and_small(assoc: &Association) -> Vec<u32> {
    const SMALL: u32 = 40;
    let payload = |ppid: u32, size: usize| -> Vec<u8> {
        (0..size)
            .map(|j| (ppid as usize * 131 + j * 7) as u8)
            .collect()
    };
    let mut expected = HashMap::new();
    for ppid in LARGE..=LARGE + SMALL {
        let (stream, size) = if ppid == LARGE {
            (1, 256 << 10)
        } else {
            (2 + (ppid % 4) as u16, 100)
        };
        let opts = SendOptions {
            ppid,
            ..Default::default()
        };
        assoc
            .send(stream, Bytes::from(payload(ppid, size)), opts)
            .await
            .expect("send");
        expected.insert(ppid, (stream, payload(ppid, size)));
    }
    let mut order = Vec::new();
    while !expected.is_empty() {
        let m = tokio::time::timeout(Duration::from_secs(30), assoc.recv())
            .await
            .expect("an echo within 30 s")
            .expect("recv");
        let (stream, bytes) = expected.remove(&m.ppid).expect("an echo of a message sent");
        assert_eq!(m.stream_id, stream, "PPID {}", m.ppid);
        assert!(
            m.payload[..] == bytes[..],
            "echo of PPID {} differs",
            m.ppid
        );
        order.push(m.ppid);
    }
    order
}

/// Brisk (interleaving on) connects to usrsctp's server (`--interleave`):
/// I-DATA is negotiated, a 256 KiB message and small ones on other streams
/// are interleaved on the wire both ways and all verified, then the GEN
/// workload; never a DATA chunk.
async fn brisk_idata_as_client_usrsctp() {
    let bin = build_peer("usrsctp", &[]);
    let (peer_port, our_port) = (free_port(), free_port());
    let capture = Capture::start("usrsctp-server-idata", &[peer_port, our_port]);
    let server = spawn(
        &bin,
        &[
            "server".into(),
            "--bind".into(),
            format!("127.0.0.1:{peer_port}"),
            "--interleave".into(),
        ],
    );
    std::thread::sleep(Duration::from_millis(300));
    let ep = endpoint(our_port, false).await;
    let remote: SocketAddr = format!("127.0.0.1:{peer_port}").parse().unwrap();
    let assoc = ep
        .connect_to_port(remote, 5000, interleaving_config())
        .await
        .expect("handshake");
    assert!(assoc.message_interleaving(), "usrsctp lists I-DATA");
    let order = large_and_small(&assoc).await;
    // The small messages overtook the large one end to end.
    assert_ne!(
        order[0], LARGE,
        "the first echo is a small message: {order:?}"
    );
    let verified = brisk_client(&assoc, None).await.unwrap();
    assert_eq!(verified, COUNT);
    assoc.close().await.expect("graceful close");
    let line = peer_output(server, "usrsctp server");
    assert_eq!(line, format!("CLOSED shutdown echoed={}", COUNT + 41));
    let (packets, chunks) = capture.finish_with_chunks();
    assert!(packets > 100, "{packets} packets");
    assert_user_data_is_idata(&chunks, peer_port, our_port);
    assert!(
        interleaved(&chunks, our_port, &[1]),
        "Brisk interleaves the 256 KiB message with the small ones"
    );
    assert!(
        interleaved(&chunks, peer_port, &[1, 2, 3]),
        "usrsctp interleaves its echoes too"
    );
}

/// usrsctp's client (`--interleave`) runs GEN against Brisk's server
/// (interleaving on): I-DATA negotiated, every echo verified, Brisk's echoes
/// of the 64 KiB messages interleaved with other streams'.
async fn usrsctp_idata_client_brisk_server() {
    let bin = build_peer("usrsctp", &[]);
    let (our_port, peer_port) = (free_port(), free_port());
    let capture = Capture::start("usrsctp-client-idata", &[peer_port, our_port]);
    let ep = endpoint_with(our_port, true, interleaving_config()).await;
    let client = spawn(
        &bin,
        &[
            "client".into(),
            "--bind".into(),
            format!("127.0.0.1:{peer_port}"),
            "--connect".into(),
            format!("127.0.0.1:{our_port}"),
            "--count".into(),
            COUNT.to_string(),
            "--seed".into(),
            SEED.to_string(),
            "--interleave".into(),
        ],
    );
    let assoc = tokio::time::timeout(Duration::from_secs(30), ep.accept())
        .await
        .expect("the peer's INIT")
        .expect("accept");
    assert!(assoc.message_interleaving(), "usrsctp's INIT lists I-DATA");
    let (echoed, how) = tokio::time::timeout(Duration::from_secs(60), brisk_server(assoc))
        .await
        .expect("the association ends");
    let line = peer_output(client, "usrsctp client");
    assert_eq!(line, format!("OK verified={COUNT}"));
    assert!(how.is_ok(), "{how:?}");
    assert_eq!(echoed, COUNT);
    let (packets, chunks) = capture.finish_with_chunks();
    assert!(packets > 100, "{packets} packets");
    assert_user_data_is_idata(&chunks, peer_port, our_port);
    // GEN's 16 KiB and 64 KiB messages are on streams 2 and 3 (i mod 12 =
    // 10, 11; stream i mod 8).
    assert!(
        interleaved(&chunks, our_port, &[2, 3]),
        "Brisk's echoes interleave the large messages with other streams'"
    );
    assert!(
        interleaved(&chunks, peer_port, &[2, 3]),
        "usrsctp's client interleaves too"
    );
}

/// Both directions carried user data, all of it as I-DATA.
fn assert_user_data_is_idata(chunks: &[WireChunk], peer_port: u16, our_port: u16) {
    for port in [peer_port, our_port] {
        let sent: Vec<&WireChunk> = chunks.iter().filter(|c| c.from == port).collect();
        assert!(!sent.is_empty(), "user data from port {port}");
        assert!(
            sent.iter().all(|c| c.idata),
            "port {port} sent a DATA chunk although I-DATA was negotiated"
        );
    }
}

/// Brisk (interleaving on) against a peer that runs GEN in the other role:
/// pion (v1.11.3 offers I-DATA unless `PION_PEER_IDATA=0`), or usrsctp
/// (which offers it only with `--interleave`). `peer_idata`: whether the
/// peer offers it. Asserts what was negotiated, every message verified,
/// and that only the negotiated kind of user data chunk crossed the wire.
async fn brisk_idata_against(peer: &str, brisk_is_client: bool, peer_idata: bool) {
    brisk_idata_against_with(peer, brisk_is_client, peer_idata, interleaving_config()).await;
}

/// Interleaving and partial reliability on at Brisk: with a peer that offers
/// both, I-DATA and I-FORWARD-TSN are agreed (Brisk's INIT lists I-FORWARD-TSN
/// too), and GEN's unordered messages carry PR policies (RFC 7496).
async fn brisk_idata_pr_against(peer: &str, brisk_is_client: bool) {
    let cfg = Config {
        partial_reliability: true,
        ..interleaving_config()
    };
    brisk_idata_against_with(peer, brisk_is_client, true, cfg).await;
}

async fn brisk_idata_against_with(
    peer: &str,
    brisk_is_client: bool,
    peer_idata: bool,
    cfg: Config,
) {
    let bin = build_peer(peer, &[]);
    let (peer_port, our_port) = (free_port(), free_port());
    let role = if brisk_is_client { "server" } else { "client" };
    let capture = Capture::start(
        &format!("{peer}-{role}-idata-{peer_idata}"),
        &[peer_port, our_port],
    );
    let spawn_peer = |args: Vec<String>| {
        let mut cmd = Command::new(&bin);
        cmd.args(&args);
        if peer == "usrsctp" && peer_idata {
            cmd.arg("--interleave");
        }
        if peer == "pion" && !peer_idata {
            cmd.env("PION_PEER_IDATA", "0");
        }
        cmd.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", bin.display()))
    };
    if brisk_is_client {
        let server = spawn_peer(vec![
            "server".into(),
            "--bind".into(),
            format!("127.0.0.1:{peer_port}"),
        ]);
        std::thread::sleep(Duration::from_millis(300));
        let ep = endpoint(our_port, false).await;
        let remote: SocketAddr = format!("127.0.0.1:{peer_port}").parse().unwrap();
        let assoc = ep
            .connect_to_port(remote, 5000, cfg.clone())
            .await
            .expect("handshake");
        assert_eq!(
            assoc.message_interleaving(),
            peer_idata,
            "{peer} and I-DATA"
        );
        assert_eq!(assoc.partial_reliability(), cfg.partial_reliability);
        let verified = brisk_client(&assoc, None).await.unwrap();
        assert_eq!(verified, COUNT);
        assoc.close().await.expect("graceful close");
        let line = peer_output(server, &format!("{peer} server"));
        assert_eq!(line, format!("CLOSED shutdown echoed={COUNT}"));
    } else {
        let ep = endpoint_with(our_port, true, cfg.clone()).await;
        let client = spawn_peer(vec![
            "client".into(),
            "--bind".into(),
            format!("127.0.0.1:{peer_port}"),
            "--connect".into(),
            format!("127.0.0.1:{our_port}"),
            "--count".into(),
            COUNT.to_string(),
            "--seed".into(),
            SEED.to_string(),
        ]);
        let assoc = tokio::time::timeout(Duration::from_secs(30), ep.accept())
            .await
            .expect("the peer's INIT")
            .expect("accept");
        assert_eq!(
            assoc.message_interleaving(),
            peer_idata,
            "{peer}'s INIT and I-DATA"
        );
        assert_eq!(assoc.partial_reliability(), cfg.partial_reliability);
        let (echoed, how) = tokio::time::timeout(Duration::from_secs(60), brisk_server(assoc))
            .await
            .expect("the association ends");
        let line = peer_output(client, &format!("{peer} client"));
        assert_eq!(line, format!("OK verified={COUNT}"));
        assert!(how.is_ok(), "{how:?}");
        assert_eq!(echoed, COUNT);
    }
    let (packets, chunks) = capture.finish_with_chunks();
    assert!(packets > 100, "{packets} packets");
    if peer_idata {
        assert_user_data_is_idata(&chunks, peer_port, our_port);
        // GEN's 16 KiB and 64 KiB messages are on streams 2 and 3.
        assert!(
            interleaved(&chunks, our_port, &[2, 3]),
            "Brisk interleaves the large messages with other streams'"
        );
    } else {
        for port in [peer_port, our_port] {
            assert!(
                chunks.iter().any(|c| c.from == port),
                "user data from {port}"
            );
        }
        assert!(
            chunks.iter().all(|c| !c.idata),
            "an I-DATA chunk with a peer that did not list I-DATA"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn brisk_idata_client_usrsctp_server() {
    brisk_idata_as_client_usrsctp().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usrsctp_idata_client_brisk_idata_server() {
    usrsctp_idata_client_brisk_server().await;
}

macro_rules! idata_matrix {
    ($($name:ident: $peer:literal, brisk_is_client = $client:literal, peer_idata = $idata:literal;)*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                brisk_idata_against($peer, $client, $idata).await;
            }
        )*
    };
}

idata_matrix! {
    brisk_idata_client_pion_server: "pion", brisk_is_client = true, peer_idata = true;
    pion_client_brisk_idata_server: "pion", brisk_is_client = false, peer_idata = true;
    brisk_idata_client_pion_server_without_idata_falls_back_to_data:
        "pion", brisk_is_client = true, peer_idata = false;
    pion_client_without_idata_brisk_idata_server_falls_back_to_data:
        "pion", brisk_is_client = false, peer_idata = false;
    brisk_idata_client_usrsctp_server_without_idata_falls_back_to_data:
        "usrsctp", brisk_is_client = true, peer_idata = false;
    usrsctp_client_without_idata_brisk_idata_server_falls_back_to_data:
        "usrsctp", brisk_is_client = false, peer_idata = false;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn brisk_idata_pr_client_usrsctp_server() {
    brisk_idata_pr_against("usrsctp", true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn brisk_idata_pr_client_pion_server() {
    brisk_idata_pr_against("pion", true).await;
}
