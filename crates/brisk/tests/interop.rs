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
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Child;
use std::time::{Duration, Instant};

use brisk::{Association, Config, Endpoint, Error, Reliability, SendOptions};
use bytes::Bytes;

const COUNT: u64 = 1000;
const SEED: u64 = 7;

#[path = "../../../tests/interop/build_peer.rs"]
mod build_peer;
use build_peer::build_peer;
#[path = "common/capture.rs"]
mod capture;
use capture::Capture;
#[path = "common/peer.rs"]
mod peer;
use peer::{
    accept, bind_endpoint, connect, free_port, local, peer_command, peer_output, role_args, spawn,
    spawn_server, start,
};

#[path = "../../../tests/interop/relay.rs"]
mod relay;

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
    bind_endpoint(port, accept, config()).await
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

/// Brisk as the server of PROTOCOL.md: echoes until the association ends
/// (within 60 s); returns (messages echoed, how it ended).
async fn brisk_server(assoc: Association) -> (u64, Result<(), Error>) {
    tokio::time::timeout(Duration::from_secs(60), echo_until_end(assoc))
        .await
        .expect("the association ends")
}

async fn echo_until_end(assoc: Association) -> (u64, Result<(), Error>) {
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

/// The GEN client role of PROTOCOL.md, on `peer_port`, for Brisk on `our_port`.
fn gen_client_args(peer_port: u16, our_port: u16) -> Vec<String> {
    let mut args = role_args("client", peer_port);
    args.extend([
        "--connect".into(),
        local(our_port),
        "--count".into(),
        COUNT.to_string(),
        "--seed".into(),
        SEED.to_string(),
    ]);
    args
}

/// Brisk's GEN client verifies all COUNT echoes and shuts down; the peer's
/// server reports `echoed` messages echoed.
async fn gen_to_peer_server(assoc: &Association, server: Child, what: &str, echoed: u64) {
    let verified = brisk_client(assoc, None).await.unwrap();
    assert_eq!(verified, COUNT);
    assoc.close().await.expect("graceful close");
    let line = peer_output(server, what);
    assert_eq!(line, format!("CLOSED shutdown echoed={echoed}"));
}

/// The peer's GEN client verified all COUNT echoes of Brisk's server and
/// shut down.
async fn gen_from_peer_client(assoc: Association, client: Child, what: &str) {
    let (echoed, how) = brisk_server(assoc).await;
    let line = peer_output(client, what);
    assert_eq!(line, format!("OK verified={COUNT}"));
    assert!(how.is_ok(), "{how:?}");
    assert_eq!(echoed, COUNT);
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
    let server = spawn_server(peer_command(&bin, &role_args("server", peer_port)));
    let remote: SocketAddr = local(peer_port).parse().unwrap();
    let ep = endpoint(our_port, false).await;
    let assoc = connect(&ep, remote, cfg.clone()).await;
    assert_eq!(
        assoc.partial_reliability(),
        cfg.partial_reliability,
        "{peer} answers Forward-TSN-Supported"
    );
    let started = Instant::now();
    match end {
        "shutdown" => {
            gen_to_peer_server(&assoc, server, &format!("{peer} server"), COUNT).await;
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
    let ep = bind_endpoint(our_port, true, cfg.clone()).await;
    let mut args = gen_client_args(peer_port, our_port);
    args.extend(["--end".into(), end.into()]);
    if end == "abort" {
        args.extend(["--abort-after".into(), (COUNT / 2).to_string()]);
    }
    let client = spawn(&bin, &args);
    let assoc = accept(&ep).await;
    assert_eq!(
        assoc.partial_reliability(),
        cfg.partial_reliability,
        "{peer}'s INIT offers Forward-TSN-Supported"
    );
    let what = format!("{peer} client");
    match end {
        "shutdown" => gen_from_peer_client(assoc, client, &what).await,
        _ => {
            let (_, how) = brisk_server(assoc).await;
            let line = peer_output(client, &what);
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

/// One test per line: `name: f(peer, arg);` runs `f(peer, arg)`.
macro_rules! matrix {
    ($($name:ident: $f:ident($peer:literal, $arg:expr);)*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                $f($peer, $arg).await;
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

// ---------------------------------------------------------------------------
// Partial reliability under loss (RFC 3758, RFC 7496): the `pr-send` and
// `pr-recv` roles of PROTOCOL.md through a lossy relay (tests/interop/relay.rs)
// that drops chosen DATA packets of one side (and, if asked, its first
// FORWARD TSNs). Message i is PRGEN(i), in `fragments` DATA chunks, so the
// side's new TSNs i*fragments .. (i+1)*fragments-1 carry message i.
//
// Every run is tshark-checked like the others, and also for FORWARD TSNs from
// the sender (those listing stream 0 when ordered) and for the receiver's
// cumulative TSN ack reaching the sender's last TSN.
//
// The `idata` cases run the same with message interleaving negotiated (RFC
// 8260; Brisk's `message_interleaving`, usrsctp's `--interleave`, pion's
// default): the sender's user data must all be I-DATA (type 64) and its
// forward TSNs all I-FORWARD-TSN (type 194, never 192), listing stream 0 with
// the U bit of the skipped messages (ordered and unordered alike).
// ---------------------------------------------------------------------------

use std::collections::BTreeSet;

use relay::{Relay, Rule, Side};

/// FORWARD TSN (RFC 3758 3.2).
const FORWARD_TSN: u8 = 192;
/// I-FORWARD-TSN (RFC 8260 2.3.1): replaces FORWARD TSN once I-DATA is
/// negotiated.
const IFORWARD_TSN: u8 = 194;
/// DATA (RFC 9260 3.3.1) and I-DATA (RFC 8260 2.1).
const DATA: u8 = 0;
const IDATA: u8 = 64;

/// A tshark filter: packets from `port` carrying a chunk of type `typ`.
fn chunks_from(typ: u8, port: u16) -> String {
    format!("sctp.chunk_type == {typ} && udp.srcport == {port}")
}

/// A tshark filter: SACK or SHUTDOWN chunks from `port` acknowledging
/// `tsn` cumulatively.
fn acked_by(tsn: u32, port: u16) -> String {
    format!(
        "(sctp.sack_cumulative_tsn_ack == {tsn} || sctp.shutdown_cumulative_tsn_ack == {tsn}) \
         && udp.srcport == {port}"
    )
}

/// `--order` of pr-send and pr-recv.
fn order_arg(ordered: bool) -> &'static str {
    if ordered { "ordered" } else { "unordered" }
}

/// PRGEN(i) of PROTOCOL.md: stream 0, PPID 1000 + i, `size` bytes.
fn pr_payload(i: u64, size: usize) -> Vec<u8> {
    (0..size as u64)
        .map(|j| ((i * 131 + j * 7) % 256) as u8)
        .collect()
}

/// One partial-reliability run under loss.
#[derive(Clone, Copy, Debug)]
struct Pr {
    case: PrCase,
    ordered: bool,
    /// PRGEN's size: 100 bytes fit one DATA chunk; 2000 bytes take two
    /// with any of the three stacks' path MTU on loopback over UDP.
    size: usize,
    /// DATA chunks per message (asserted from the relay's count).
    fragments: u64,
    n: u64,
    every_ms: u64,
    /// Ordinals of the sender's new TSNs whose packets are dropped.
    drops: &'static [u64],
    /// The sender's first FORWARD TSNs dropped too: it must send another.
    lost_forward_tsns: u32,
    /// Message interleaving (RFC 8260) on both sides: I-DATA, and
    /// I-FORWARD-TSN instead of FORWARD TSN.
    interleave: bool,
}

/// Messages dropped, from the relay's TSN ordinals.
struct DroppedMessages {
    /// Chosen by the rule.
    chosen: BTreeSet<u64>,
    /// The first transmission of some fragment was dropped.
    first: BTreeSet<u64>,
    /// Some transmission of some fragment was dropped.
    any: BTreeSet<u64>,
}

impl Pr {
    fn lose_forward_tsns(&self, rule: Rule) -> Rule {
        match self.lost_forward_tsns {
            0 => rule,
            k => rule.and_chunks(self.forward_tsn(), k),
        }
    }

    /// The chunk that skips abandoned messages: FORWARD TSN, or
    /// I-FORWARD-TSN with I-DATA (RFC 8260 2.3).
    fn forward_tsn(&self) -> u8 {
        if self.interleave {
            IFORWARD_TSN
        } else {
            FORWARD_TSN
        }
    }

    /// The chunk that carries user data.
    fn data(&self) -> u8 {
        if self.interleave { IDATA } else { DATA }
    }

    fn config(&self) -> Config {
        Config {
            message_interleaving: self.interleave,
            ..pr_config()
        }
    }

    /// The peer's options beyond PROTOCOL.md's: its RTO, and for usrsctp
    /// `--interleave` (pion's pr roles offer I-DATA by default).
    fn peer_args(&self, peer: &str) -> Vec<String> {
        let mut args = peer_rto(peer);
        if self.interleave && peer == "usrsctp" {
            args.push("--interleave".into());
        }
        args
    }

    /// The arguments of `peer`'s pr-send or pr-recv `role` on `peer_port`
    /// for this run: PRGEN's count, order and size, and `peer_args`.
    fn role_args(&self, peer: &str, role: &str, peer_port: u16) -> Vec<String> {
        let mut args = role_args(role, peer_port);
        args.extend([
            "--count".into(),
            self.n.to_string(),
            "--order".into(),
            order_arg(self.ordered).into(),
            "--size".into(),
            self.size.to_string(),
        ]);
        args.extend(self.peer_args(peer));
        args
    }

    /// Stops the capture of a run where `sender` sent through the relay to
    /// `receiver`, checks it has more packets than twice the sender's new
    /// TSNs, and returns the matches of `wire_filters` and the sender's
    /// highest TSN.
    fn finish_capture(
        &self,
        capture: Capture,
        relay: &Relay,
        sender: u16,
        receiver: u16,
    ) -> (Vec<Vec<f64>>, u32) {
        let last = relay.highest_tsn().expect("the sender sent DATA");
        let first_dropped = relay.dropped()[0].tsn;
        let (packets, counts) =
            capture.finish_matching(&self.wire_filters(sender, receiver, last, first_dropped));
        assert!(packets > 2 * relay.new_tsns() as usize, "{packets} packets");
        (counts, last)
    }

    /// The forward TSNs `sender` put on the wire (see `check_wire` and
    /// `check_forward_tsns`), and `receiver`'s cumulative TSN ack reaching
    /// the sender's `last` TSN, past every hole they skipped.
    fn check_forward_wire(
        &self,
        relay: &Relay,
        counts: &[Vec<f64>],
        last: u32,
        sender: &str,
        receiver: &str,
    ) {
        self.check_wire(counts, sender);
        self.check_forward_tsns(relay, &counts[0], sender);
        // Skipped ordered messages are listed by stream and SSN (RFC 3758
        // 3.2); with I-DATA by stream and MID, unordered ones too, with the
        // U bit (RFC 8260 2.3.1).
        assert!(
            !(self.ordered || self.interleave) || !counts[2].is_empty(),
            "no forward TSN from {sender} lists stream 0 (U bit {})",
            !self.ordered
        );
        // tshark shows absolute TSNs by default.
        assert!(
            !counts[1].is_empty(),
            "tshark sees no SACK or SHUTDOWN from {receiver} acknowledging TSN {last} cumulatively"
        );
    }

    /// tshark filters for the capture of a run where `sender` sent `last`
    /// as its highest TSN and `first_dropped` was its first TSN dropped
    /// (see `check_wire` for their order).
    fn wire_filters(
        &self,
        sender: u16,
        receiver: u16,
        last: u32,
        first_dropped: u32,
    ) -> Vec<String> {
        let (fwd, other_fwd) = if self.interleave {
            (IFORWARD_TSN, FORWARD_TSN)
        } else {
            (FORWARD_TSN, IFORWARD_TSN)
        };
        let (data, other_data) = (self.data(), IDATA - self.data());
        // Skipped messages are listed by stream and SSN (RFC 3758 3.2), or
        // by stream, U bit and MID (RFC 8260 2.3.1).
        let lists_stream_0 = if self.interleave {
            format!(
                "sctp.i_forward_tsn_sid == 0 && sctp.i_forward_tsn_u_bit == {}",
                u8::from(!self.ordered)
            )
        } else {
            "sctp.forward_tsn_sid == 0".into()
        };
        vec![
            chunks_from(fwd, sender),
            acked_by(last, receiver),
            format!("{} && {lists_stream_0}", chunks_from(fwd, sender)),
            chunks_from(other_fwd, sender),
            chunks_from(other_data, sender),
            chunks_from(data, sender),
            format!(
                "{} && sctp.data_tsn_raw == {first_dropped}",
                chunks_from(data, sender)
            ),
        ]
    }

    /// The capture against `wire_filters`: only the negotiated kinds of
    /// user data and forward TSN chunks came from the sender.
    fn check_chunk_kinds(&self, counts: &[Vec<f64>], who: &str) {
        let (fwd, data) = (self.forward_tsn(), self.data());
        assert!(
            !counts[5].is_empty(),
            "tshark sees no chunk of type {data} from {who}"
        );
        assert_eq!(
            counts[4].len(),
            0,
            "{who} sent user data chunks other than type {data} (I-DATA: {})",
            self.interleave
        );
        assert_eq!(
            counts[3].len(),
            0,
            "{who} sent forward TSN chunks other than type {fwd}"
        );
    }

    /// `check_chunk_kinds`, and forward TSNs were sent: returns the delay
    /// from the first dropped DATA to the first forward TSN (s).
    fn check_wire(&self, counts: &[Vec<f64>], who: &str) -> f64 {
        let fwd = self.forward_tsn();
        self.check_chunk_kinds(counts, who);
        assert!(
            !counts[0].is_empty(),
            "tshark sees no chunk of type {fwd} from {who}"
        );
        let dropped_at = *counts[6]
            .first()
            .expect("the first dropped DATA was captured");
        let delay = counts[0][0] - dropped_at;
        eprintln!(
            "{who}: first chunk of type {fwd} {:.1} ms after the first dropped DATA, {} in all",
            delay * 1e3,
            counts[0].len()
        );
        delay
    }

    /// The sender's FORWARD TSNs (capture times): the lost ones were sent
    /// again. Brisk sends the first one again on the next SACK that shows
    /// it lost (RFC 3758 3.5 C3), well before T3 (RTO.Min 200 ms here).
    fn check_forward_tsns(&self, relay: &Relay, sent: &[f64], who: &str) {
        let lost = self.lost_forward_tsns as usize;
        let fwd = self.forward_tsn();
        assert_eq!(
            relay.chunk_drops(),
            lost as u64,
            "chunks of type {fwd} dropped"
        );
        assert!(
            sent.len() > lost,
            "{who} sent {} chunks of type {fwd}, {lost} of them lost",
            sent.len()
        );
        if lost > 0 {
            let again = sent[1] - sent[0];
            eprintln!(
                "{who} sent the lost chunk of type {fwd} again {:.1} ms later",
                again * 1e3
            );
            if who == "Brisk" {
                assert!(again < 0.1, "{again} s: not before T3");
            }
        }
    }

    fn dropped_messages(&self, relay: &Relay) -> DroppedMessages {
        assert_eq!(
            relay.new_tsns(),
            self.n * self.fragments,
            "{} DATA chunk(s) per message",
            self.fragments
        );
        let chosen_ordinals: BTreeSet<u64> = self.drops.iter().copied().collect();
        assert!(
            chosen_ordinals.is_subset(&relay.dropped_first()),
            "{chosen_ordinals:?} all dropped"
        );
        let msg = |o: u64| o / self.fragments;
        DroppedMessages {
            chosen: self.drops.iter().map(|&o| msg(o)).collect(),
            first: relay.dropped_first().into_iter().map(msg).collect(),
            any: relay.dropped().iter().map(|d| msg(d.ordinal)).collect(),
        }
    }
}

fn pr_config() -> Config {
    Config {
        partial_reliability: true,
        ..config()
    }
}

/// The ids of a peer's `RECEIVED count=<n> ids=<list>` or `abandoned=<list>` field.
fn id_list(line: &str, field: &str) -> BTreeSet<u64> {
    let list = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix(field))
        .unwrap_or_else(|| panic!("no {field} in {line:?}"));
    if list == "-" {
        return BTreeSet::new();
    }
    list.split(',')
        .map(|i| i.parse().unwrap_or_else(|_| panic!("bad id in {line:?}")))
        .collect()
}

fn all(n: u64) -> BTreeSet<u64> {
    (0..n).collect()
}

/// The usrsctp peer's RTO: 200 ms .. 2 s rather than 1 s .. 60 s, so that
/// tail losses are found in a fraction of a second.
fn peer_rto(peer: &str) -> Vec<String> {
    match peer {
        "usrsctp" => [
            "--rto-min",
            "200",
            "--rto-initial",
            "500",
            "--rto-max",
            "2000",
        ]
        .map(String::from)
        .to_vec(),
        _ => Vec::new(),
    }
}

/// How the chosen messages are lost, and under which policy.
#[derive(Clone, Copy, Debug)]
enum PrCase {
    /// `MaxRetransmits(0)` / `rtx:0`: the first transmission of the chosen
    /// messages is dropped; they are never retransmitted, only abandoned.
    Rtx0,
    /// `Lifetime(ms)` / `ttl:MS`: every transmission of the chosen messages
    /// is dropped until they expire and are abandoned.
    Ttl(u64),
}

impl PrCase {
    fn rule(self, side: Side, chosen: &[u64]) -> Rule {
        match self {
            PrCase::Rtx0 => Rule::first_transmission(side, chosen),
            PrCase::Ttl(_) => Rule::every_transmission(side, chosen),
        }
    }

    /// For a peer that never abandons (pion's timed policy): the first two
    /// transmissions only, so that the association can finish.
    fn bounded_rule(self, side: Side, chosen: &[u64]) -> Rule {
        match self {
            PrCase::Rtx0 => self.rule(side, chosen),
            PrCase::Ttl(_) => Rule::transmissions(side, chosen, 2),
        }
    }

    fn peer_arg(self) -> String {
        match self {
            PrCase::Rtx0 => "rtx:0".into(),
            PrCase::Ttl(ms) => format!("ttl:{ms}"),
        }
    }

    fn reliability(self) -> Reliability {
        match self {
            PrCase::Rtx0 => Reliability::MaxRetransmits(0),
            PrCase::Ttl(ms) => Reliability::Lifetime(Duration::from_millis(ms)),
        }
    }
}

/// A PR run with `peer` in `role`: its binary, the peer's and Brisk's
/// ports, the lossy relay between them (Brisk side A, the peer side B)
/// dropping by `rule`, and the capture of all three ports.
fn pr_setup(peer: &str, role: &str, rule: Rule) -> (PathBuf, u16, u16, Relay, Capture) {
    let bin = build_peer(peer, &[]);
    let (peer_port, our_port) = (free_port(), free_port());
    let relay = Relay::start_at(
        free_port(),
        local(our_port).parse().unwrap(),
        local(peer_port).parse().unwrap(),
        rule,
    );
    let capture = Capture::start(
        &format!("{peer}-{role}"),
        &[peer_port, relay.addr().port(), our_port],
    );
    (bin, peer_port, our_port, relay, capture)
}

/// (a), (c): Brisk sends `n` PRGEN messages, one every `every_ms`, through
/// the relay dropping the chosen ones; the peer (`pr-recv`) reports what
/// arrived.
async fn brisk_sends_pr(peer: &str, pr: Pr) {
    let Pr {
        case,
        ordered,
        size,
        n,
        every_ms,
        drops: chosen,
        ..
    } = pr;
    let rule = pr.lose_forward_tsns(case.rule(Side::A, chosen));
    let (bin, peer_port, our_port, relay, capture) = pr_setup(peer, "pr-recv", rule);
    let args = pr.role_args(peer, "pr-recv", peer_port);
    let receiver = spawn_server(peer_command(&bin, &args));
    let ep = endpoint(our_port, false).await;
    let assoc = connect(&ep, relay.addr(), pr.config()).await;
    assert!(assoc.partial_reliability(), "{peer} agrees to PR-SCTP");
    assert_eq!(
        assoc.message_interleaving(),
        pr.interleave,
        "{peer} and I-DATA"
    );

    let mut ids = Vec::new();
    for i in 0..n {
        let opts = SendOptions {
            ppid: 1000 + i as u32,
            unordered: !ordered,
            immediate_sack: false,
            reliability: case.reliability(),
        };
        ids.push(
            assoc
                .send(0, Bytes::from(pr_payload(i, size)), opts)
                .await
                .expect("send"),
        );
        tokio::time::sleep(Duration::from_millis(every_ms)).await;
    }
    // Everything acknowledged, or abandoned and skipped by FORWARD TSN: no stall.
    tokio::time::timeout(Duration::from_secs(30), assoc.flush())
        .await
        .expect("every message acknowledged or abandoned within 30 s")
        .expect("flush");
    let stats = assoc.stats().expect("stats");
    let abandoned: BTreeSet<u64> = assoc
        .take_abandoned()
        .iter()
        .map(|id| ids.iter().position(|x| x == id).expect("an id we sent") as u64)
        .collect();
    assert_eq!(assoc.abandoned_messages(), abandoned.len() as u64);
    assoc.close().await.expect("graceful close");
    let line = peer_output(receiver, &format!("{peer} pr-recv"));
    let received = id_list(&line, "ids=");

    let DroppedMessages {
        chosen,
        first: dropped_first,
        any: dropped_any,
    } = pr.dropped_messages(&relay);
    eprintln!(
        "brisk -> {peer} {pr:?}: dropped {:?}, abandoned {abandoned:?}, received {} of {n}, \
         {} FORWARD TSN sent",
        relay.dropped(),
        received.len(),
        stats.forward_tsns_sent
    );
    // Abandoned yet delivered: a message still unacknowledged when T3
    // expires for a lost tail is marked for retransmission with it (RFC 9260
    // 6.3.3 E3) and so abandoned (RFC 3758 3.5 A1) even if its SACK was only
    // delayed (pion delays it up to 200 ms). Legitimate, reported here.
    let spurious: BTreeSet<u64> = abandoned.intersection(&received).copied().collect();
    if !spurious.is_empty() {
        eprintln!("abandoned, and delivered all the same: {spurious:?}");
    }
    match case {
        PrCase::Rtx0 => {
            // Never retransmitted: every dropped message is abandoned, and
            // every other one arrives.
            assert_eq!(relay.retransmitted(), Vec::<u32>::new());
            assert!(dropped_first.is_subset(&abandoned), "{abandoned:?}");
            assert_eq!(
                received,
                all(n).difference(&dropped_first).copied().collect(),
                "{line}"
            );
        }
        PrCase::Ttl(_) => {
            // The chosen ones can only expire; a message dropped with them
            // (bundled) may have been retransmitted in time.
            assert!(chosen.is_subset(&abandoned), "{abandoned:?}");
            assert!(received.is_disjoint(&chosen), "{line}");
            let never_dropped = all(n).difference(&dropped_any).copied().collect();
            assert!(received.is_superset(&never_dropped), "{line}");
        }
    }
    // Every message arrived exactly once (the peer fails on a duplicate) or
    // was reported abandoned: messages after the holes too, so no stall.
    assert_eq!(
        received
            .union(&abandoned)
            .copied()
            .collect::<BTreeSet<u64>>(),
        all(n),
        "{line}"
    );
    assert_eq!(stats.messages_abandoned, abandoned.len() as u64);
    assert!(stats.forward_tsns_sent > 0, "{stats:?}");
    let (counts, last) = pr.finish_capture(capture, &relay, our_port, peer_port);
    pr.check_forward_wire(&relay, &counts, last, "Brisk", peer);
}

/// (b), (c): the peer (`pr-send`) sends `n` PRGEN messages, one every
/// `every_ms`, through the relay dropping the chosen ones; Brisk receives.
async fn peer_sends_pr(peer: &str, pr: Pr) {
    let Pr {
        case,
        ordered,
        size,
        n,
        every_ms,
        drops: chosen,
        ..
    } = pr;
    let rule = pr.lose_forward_tsns(match peer {
        "pion" => case.bounded_rule(Side::B, chosen),
        _ => case.rule(Side::B, chosen),
    });
    let (bin, peer_port, our_port, relay, capture) = pr_setup(peer, "pr-send", rule);
    let ep = bind_endpoint(our_port, true, pr.config()).await;
    let mut args = pr.role_args(peer, "pr-send", peer_port);
    args.extend([
        "--connect".into(),
        relay.addr().to_string(),
        "--pr".into(),
        case.peer_arg(),
        "--every".into(),
        every_ms.to_string(),
    ]);
    let sender = spawn(&bin, &args);
    // pion v1.11.3 never abandons a timed message once sent: its lifetime is
    // measured from `since`, which every (re)transmission sets to now just
    // before checkPartialReliabilityStatus (association.go). So no FORWARD
    // TSN comes (nor, with I-DATA, an I-FORWARD-TSN); what it does instead
    // is asserted below.
    let pion_timed = peer == "pion" && matches!(case, PrCase::Ttl(_));
    let assoc = accept(&ep).await;
    assert!(assoc.partial_reliability(), "{peer} offers PR-SCTP");
    assert_eq!(
        assoc.message_interleaving(),
        pr.interleave,
        "{peer} and I-DATA"
    );

    let mut received = BTreeSet::new();
    let take = |received: &mut BTreeSet<u64>, m: brisk::IncomingMessage| {
        let i = u64::from(m.ppid.wrapping_sub(1000));
        assert!(i < n, "PPID {}", m.ppid);
        assert_eq!((m.stream_id, &m.payload[..]), (0, &pr_payload(i, size)[..]));
        assert_eq!(m.unordered, !ordered, "message {i}");
        // Ordered: skipped messages leave gaps, never reorderings.
        if ordered && let Some(&last) = received.last() {
            assert!(i > last, "message {i} after {last} on an ordered stream");
        }
        assert!(received.insert(i), "message {i} delivered twice");
    };
    // Until every message has arrived or was dropped (and not delivered
    // since), and a FORWARD TSN has come: then the holes are skipped.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(Ok(m)) = tokio::time::timeout(Duration::from_millis(50), assoc.recv()).await {
            take(&mut received, m);
            continue;
        }
        let dropped: BTreeSet<u64> = relay
            .dropped()
            .iter()
            .map(|d| d.ordinal / pr.fragments)
            .collect();
        let accounted = received.union(&dropped).count() as u64;
        let fwd = assoc.stats().map_or(0, |s| s.forward_tsns_received);
        if (pion_timed && received.len() as u64 == n) || (accounted == n && fwd > 0) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "stalled: received {received:?}, dropped {:?}, {fwd} FORWARD TSN",
            relay.dropped()
        );
    }
    let stats = assoc.stats().expect("stats");
    // A graceful close completes only once the peer's outstanding DATA is
    // all acknowledged (RFC 9260 9.2): the holes were skipped for good.
    assoc.close().await.expect("graceful close");
    while let Ok(m) = assoc.recv().await {
        take(&mut received, m);
    }
    let line = peer_output(sender, &format!("{peer} pr-send"));
    assert!(line.starts_with(&format!("SENT count={n}")), "{line}");

    let DroppedMessages {
        chosen,
        first: dropped_first,
        any: dropped_any,
    } = pr.dropped_messages(&relay);
    eprintln!(
        "{peer} -> brisk {pr:?}: dropped {:?}, received {} of {n}, {} FORWARD TSN received; {line}",
        relay.dropped(),
        received.len(),
        stats.forward_tsns_received
    );
    let lost: BTreeSet<u64> = all(n).difference(&received).copied().collect();
    if pion_timed {
        // pion's limitation (above): the chosen messages were sent again
        // past their lifetime and delivered; no FORWARD TSN at all.
        assert!(
            relay.dropped().iter().any(|d| !d.first),
            "retransmissions were dropped too"
        );
        assert_eq!(lost, BTreeSet::new(), "pion delivers every timed message");
        assert_eq!(stats.forward_tsns_received, 0, "{stats:?}");
        let (counts, last) = pr.finish_capture(capture, &relay, peer_port, our_port);
        pr.check_chunk_kinds(&counts, peer);
        assert_eq!(counts[0].len(), 0, "tshark sees a forward TSN from pion");
        assert!(
            !counts[1].is_empty(),
            "no SACK or SHUTDOWN from Brisk acks TSN {last}"
        );
        return;
    }
    match case {
        PrCase::Rtx0 => assert_eq!(lost, dropped_first, "exactly the dropped ones are missing"),
        PrCase::Ttl(_) => {
            assert!(chosen.is_subset(&lost), "{received:?}");
            assert!(lost.is_subset(&dropped_any), "{received:?}");
        }
    }
    if peer == "usrsctp" {
        // usrsctp reports abandoned messages (SCTP_SEND_FAILED_EVENT):
        // every one Brisk did not receive (and maybe one whose SACK was
        // late, see brisk_sends_pr).
        let abandoned = id_list(&line, "abandoned=");
        assert!(lost.is_subset(&abandoned), "{line}");
    }
    assert!(stats.forward_tsns_received > 0, "{stats:?}");
    let (counts, last) = pr.finish_capture(capture, &relay, peer_port, our_port);
    pr.check_forward_wire(&relay, &counts, last, peer, "Brisk");
}

/// Chosen losses: two adjacent, one alone, and the last message (found only
/// by the retransmission timer).
const PR_DROPS: &[u64] = &[3, 4, 17, 39];
/// Two fragments a message: the second of message 3, the first of 10, both
/// of 11, and the first of the last (its second arrives: a partial message
/// the receiver must discard on FORWARD TSN).
const FRAG_DROPS: &[u64] = &[7, 20, 22, 23, 78];
/// Timed: a message every 20 ms, 200 ms lifetime.
const TTL_DROPS: &[u64] = &[5, 18, 29];

const RTX0: Pr = Pr {
    case: PrCase::Rtx0,
    ordered: false,
    size: 100,
    fragments: 1,
    n: 40,
    every_ms: 10,
    drops: PR_DROPS,
    lost_forward_tsns: 0,
    interleave: false,
};
/// The first FORWARD TSN lost as well (RFC 3758 3.5 C, F: another goes on
/// the next SACK or T3 expiry), unordered and ordered.
const RTX0_FORWARD_TSN_LOST: Pr = Pr {
    lost_forward_tsns: 1,
    ..RTX0
};
const RTX0_ORDERED_FORWARD_TSN_LOST: Pr = Pr {
    lost_forward_tsns: 1,
    ordered: true,
    ..RTX0
};
/// Unordered (the brief's case) and ordered: then the FORWARD TSN must also
/// carry the stream's skipped SSN (RFC 3758 3.2), or the stream stalls.
const RTX0_ORDERED: Pr = Pr {
    ordered: true,
    ..RTX0
};
const RTX0_FRAGMENTED: Pr = Pr {
    size: 2000,
    fragments: 2,
    drops: FRAG_DROPS,
    ..RTX0
};
const RTX0_FRAGMENTED_ORDERED: Pr = Pr {
    ordered: true,
    ..RTX0_FRAGMENTED
};
const TTL: Pr = Pr {
    case: PrCase::Ttl(200),
    n: 30,
    every_ms: 20,
    drops: TTL_DROPS,
    ..RTX0
};
const TTL_ORDERED: Pr = Pr {
    ordered: true,
    ..TTL
};
/// With message interleaving negotiated (RFC 8260): I-DATA, and abandoned
/// messages skipped by I-FORWARD-TSN, listing (stream, U bit, MID).
const IDATA_RTX0: Pr = Pr {
    interleave: true,
    ..RTX0
};
const IDATA_RTX0_ORDERED: Pr = Pr {
    ordered: true,
    ..IDATA_RTX0
};
/// Two I-DATA fragments a message (FRAG_DROPS: a partial message the
/// receiver must discard), ordered, and the first I-FORWARD-TSN lost too.
const IDATA_RTX0_FRAGMENTED_ORDERED_FORWARD_TSN_LOST: Pr = Pr {
    interleave: true,
    lost_forward_tsns: 1,
    ..RTX0_FRAGMENTED_ORDERED
};
/// Timed, ordered.
const IDATA_TTL_ORDERED: Pr = Pr {
    interleave: true,
    ..TTL_ORDERED
};

matrix! {
    brisk_pr_rtx0_to_usrsctp_under_loss: brisk_sends_pr("usrsctp", RTX0);
    usrsctp_pr_rtx0_to_brisk_under_loss: peer_sends_pr("usrsctp", RTX0);
    brisk_pr_rtx0_to_pion_under_loss: brisk_sends_pr("pion", RTX0);
    pion_pr_rtx0_to_brisk_under_loss: peer_sends_pr("pion", RTX0);
    brisk_pr_ttl_to_usrsctp_under_loss: brisk_sends_pr("usrsctp", TTL);
    usrsctp_pr_ttl_to_brisk_under_loss: peer_sends_pr("usrsctp", TTL);
    brisk_pr_ttl_to_pion_under_loss: brisk_sends_pr("pion", TTL);
    pion_pr_ttl_to_brisk_under_loss: peer_sends_pr("pion", TTL);
    brisk_pr_rtx0_ordered_to_usrsctp_under_loss: brisk_sends_pr("usrsctp", RTX0_ORDERED);
    usrsctp_pr_rtx0_ordered_to_brisk_under_loss: peer_sends_pr("usrsctp", RTX0_ORDERED);
    brisk_pr_rtx0_ordered_to_pion_under_loss: brisk_sends_pr("pion", RTX0_ORDERED);
    pion_pr_rtx0_ordered_to_brisk_under_loss: peer_sends_pr("pion", RTX0_ORDERED);
    brisk_pr_rtx0_fragmented_to_usrsctp_under_loss: brisk_sends_pr("usrsctp", RTX0_FRAGMENTED);
    usrsctp_pr_rtx0_fragmented_to_brisk_under_loss: peer_sends_pr("usrsctp", RTX0_FRAGMENTED);
    brisk_pr_rtx0_fragmented_to_pion_under_loss: brisk_sends_pr("pion", RTX0_FRAGMENTED);
    pion_pr_rtx0_fragmented_to_brisk_under_loss: peer_sends_pr("pion", RTX0_FRAGMENTED);
    brisk_pr_rtx0_fragmented_ordered_to_usrsctp_under_loss: brisk_sends_pr("usrsctp", RTX0_FRAGMENTED_ORDERED);
    usrsctp_pr_rtx0_fragmented_ordered_to_brisk_under_loss: peer_sends_pr("usrsctp", RTX0_FRAGMENTED_ORDERED);
    brisk_pr_rtx0_fragmented_ordered_to_pion_under_loss: brisk_sends_pr("pion", RTX0_FRAGMENTED_ORDERED);
    pion_pr_rtx0_fragmented_ordered_to_brisk_under_loss: peer_sends_pr("pion", RTX0_FRAGMENTED_ORDERED);
    brisk_pr_ttl_ordered_to_usrsctp_under_loss: brisk_sends_pr("usrsctp", TTL_ORDERED);
    usrsctp_pr_ttl_ordered_to_brisk_under_loss: peer_sends_pr("usrsctp", TTL_ORDERED);
    brisk_pr_ttl_ordered_to_pion_under_loss: brisk_sends_pr("pion", TTL_ORDERED);
    pion_pr_ttl_ordered_to_brisk_under_loss: peer_sends_pr("pion", TTL_ORDERED);
    brisk_pr_forward_tsn_lost_to_usrsctp: brisk_sends_pr("usrsctp", RTX0_FORWARD_TSN_LOST);
    usrsctp_pr_forward_tsn_lost_to_brisk: peer_sends_pr("usrsctp", RTX0_FORWARD_TSN_LOST);
    brisk_pr_forward_tsn_lost_to_pion: brisk_sends_pr("pion", RTX0_FORWARD_TSN_LOST);
    pion_pr_forward_tsn_lost_to_brisk: peer_sends_pr("pion", RTX0_FORWARD_TSN_LOST);
    brisk_pr_ordered_forward_tsn_lost_to_usrsctp: brisk_sends_pr("usrsctp", RTX0_ORDERED_FORWARD_TSN_LOST);
    usrsctp_pr_ordered_forward_tsn_lost_to_brisk: peer_sends_pr("usrsctp", RTX0_ORDERED_FORWARD_TSN_LOST);
    brisk_pr_ordered_forward_tsn_lost_to_pion: brisk_sends_pr("pion", RTX0_ORDERED_FORWARD_TSN_LOST);
    pion_pr_ordered_forward_tsn_lost_to_brisk: peer_sends_pr("pion", RTX0_ORDERED_FORWARD_TSN_LOST);
    brisk_pr_idata_rtx0_to_usrsctp_under_loss: brisk_sends_pr("usrsctp", IDATA_RTX0);
    usrsctp_pr_idata_rtx0_to_brisk_under_loss: peer_sends_pr("usrsctp", IDATA_RTX0);
    brisk_pr_idata_rtx0_to_pion_under_loss: brisk_sends_pr("pion", IDATA_RTX0);
    pion_pr_idata_rtx0_to_brisk_under_loss: peer_sends_pr("pion", IDATA_RTX0);
    brisk_pr_idata_rtx0_ordered_to_usrsctp_under_loss: brisk_sends_pr("usrsctp", IDATA_RTX0_ORDERED);
    usrsctp_pr_idata_rtx0_ordered_to_brisk_under_loss: peer_sends_pr("usrsctp", IDATA_RTX0_ORDERED);
    brisk_pr_idata_rtx0_ordered_to_pion_under_loss: brisk_sends_pr("pion", IDATA_RTX0_ORDERED);
    pion_pr_idata_rtx0_ordered_to_brisk_under_loss: peer_sends_pr("pion", IDATA_RTX0_ORDERED);
    brisk_pr_idata_fragmented_iforward_tsn_lost_to_usrsctp: brisk_sends_pr("usrsctp", IDATA_RTX0_FRAGMENTED_ORDERED_FORWARD_TSN_LOST);
    usrsctp_pr_idata_fragmented_iforward_tsn_lost_to_brisk: peer_sends_pr("usrsctp", IDATA_RTX0_FRAGMENTED_ORDERED_FORWARD_TSN_LOST);
    brisk_pr_idata_fragmented_iforward_tsn_lost_to_pion: brisk_sends_pr("pion", IDATA_RTX0_FRAGMENTED_ORDERED_FORWARD_TSN_LOST);
    pion_pr_idata_fragmented_iforward_tsn_lost_to_brisk: peer_sends_pr("pion", IDATA_RTX0_FRAGMENTED_ORDERED_FORWARD_TSN_LOST);
    brisk_pr_idata_ttl_ordered_to_usrsctp_under_loss: brisk_sends_pr("usrsctp", IDATA_TTL_ORDERED);
    usrsctp_pr_idata_ttl_ordered_to_brisk_under_loss: peer_sends_pr("usrsctp", IDATA_TTL_ORDERED);
    brisk_pr_idata_ttl_ordered_to_pion_under_loss: brisk_sends_pr("pion", IDATA_TTL_ORDERED);
    pion_pr_idata_ttl_ordered_to_brisk_under_loss: peer_sends_pr("pion", IDATA_TTL_ORDERED);
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
        let server = spawn_server(peer_command(&bin, &role_args("reconfig-server", peer_port)));
        let remote: SocketAddr = local(peer_port).parse().unwrap();
        let ep = endpoint(our_port, false).await;
        let assoc = connect(&ep, remote, reconfig_config()).await;
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
        let ep = bind_endpoint(our_port, true, reconfig_config()).await;
        let mut args = role_args("reconfig-client", peer_port);
        args.extend([
            "--connect".into(),
            local(our_port),
            "--count".into(),
            K.to_string(),
        ]);
        let add = if peer == "usrsctp" { 2 } else { 0 };
        if add > 0 {
            args.extend(["--add".into(), add.to_string()]);
        }
        let client = spawn(&bin, &args);
        let assoc = accept(&ep).await;
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

// --- Message interleaving (RFC 8260, I-DATA) ---

use capture::WireChunk;

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
    let mut server = peer_command(&bin, &role_args("server", peer_port));
    server.arg("--interleave");
    let server = spawn_server(server);
    let remote: SocketAddr = local(peer_port).parse().unwrap();
    let ep = endpoint(our_port, false).await;
    let assoc = connect(&ep, remote, interleaving_config()).await;
    assert!(assoc.message_interleaving(), "usrsctp lists I-DATA");
    let order = large_and_small(&assoc).await;
    // The small messages overtook the large one end to end.
    assert_ne!(
        order[0], LARGE,
        "the first echo is a small message: {order:?}"
    );
    gen_to_peer_server(&assoc, server, "usrsctp server", COUNT + 41).await;
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
    let ep = bind_endpoint(our_port, true, interleaving_config()).await;
    let mut args = gen_client_args(peer_port, our_port);
    args.push("--interleave".into());
    let client = spawn(&bin, &args);
    let assoc = accept(&ep).await;
    assert!(assoc.message_interleaving(), "usrsctp's INIT lists I-DATA");
    gen_from_peer_client(assoc, client, "usrsctp client").await;
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
    let peer_command_for = |args: Vec<String>| {
        let mut cmd = peer_command(&bin, &args);
        if peer == "usrsctp" && peer_idata {
            cmd.arg("--interleave");
        }
        if peer == "pion" && !peer_idata {
            cmd.env("PION_PEER_IDATA", "0");
        }
        cmd
    };
    if brisk_is_client {
        let server = spawn_server(peer_command_for(role_args("server", peer_port)));
        let remote: SocketAddr = local(peer_port).parse().unwrap();
        let ep = endpoint(our_port, false).await;
        let assoc = connect(&ep, remote, cfg.clone()).await;
        assert_eq!(
            assoc.message_interleaving(),
            peer_idata,
            "{peer} and I-DATA"
        );
        assert_eq!(assoc.partial_reliability(), cfg.partial_reliability);
        gen_to_peer_server(&assoc, server, &format!("{peer} server"), COUNT).await;
    } else {
        let ep = bind_endpoint(our_port, true, cfg.clone()).await;
        let client = start(peer_command_for(gen_client_args(peer_port, our_port)));
        let assoc = accept(&ep).await;
        assert_eq!(
            assoc.message_interleaving(),
            peer_idata,
            "{peer}'s INIT and I-DATA"
        );
        assert_eq!(assoc.partial_reliability(), cfg.partial_reliability);
        gen_from_peer_client(assoc, client, &format!("{peer} client")).await;
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
