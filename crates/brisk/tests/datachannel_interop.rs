//! Data channels against pion: Brisk's `datachannel` module and
//! github.com/pion/datachannel v1.6.3 over pion/sctp v1.11.3, SCTP over UDP on
//! loopback, no DTLS. The script is in `tests/interop/pion/datachannel.go`:
//! each side opens a reliable ordered channel and an unordered channel with
//! maxRetransmits 0, sends text, binary and empty messages, and verifies the
//! other side's echoes (bytes and type). Both SCTP directions; every packet
//! checked by tshark, DCEP included (tshark's `rtcdc` dissector).
//!
//! Needs: go, tshark, and root for the loopback capture; a missing one fails
//! the test with its name.

use std::collections::HashMap;
use std::process::Child;
use std::time::Duration;

use brisk::datachannel::{
    ChannelOptions, CloseReason, DataChannel, DataChannels, Error as DcError, Message, Role,
};
use brisk::{Association, Config, Endpoint, Reliability};
use bytes::Bytes;

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
    spawn_server,
};

const COUNT: usize = 100;
const T: Duration = Duration::from_secs(30);

/// dcMessage(i) of datachannel.go.
fn message(i: usize) -> Message {
    match i % 4 {
        0 => Message::Text(format!("m{i}-{}", "é".repeat(i % 7))),
        1 => Message::Binary(Bytes::from(
            (0..(i * 37) % 1500 + 1)
                .map(|j| ((i + j * 13) % 256) as u8)
                .collect::<Vec<u8>>(),
        )),
        2 => Message::Text(String::new()),
        _ => Message::Binary(Bytes::new()),
    }
}

fn config() -> Config {
    Config {
        partial_reliability: true,
        stream_reconfig: true,
        outbound_streams: 64,
        max_inbound_streams: 64,
        rto_min: Duration::from_millis(200),
        rto_initial: Duration::from_millis(500),
        ..Config::rfc9260()
    }
}

async fn endpoint(port: u16, accept: bool) -> Endpoint {
    bind_endpoint(port, accept, config()).await
}

/// Sends the script on one of our channels and verifies pion's echoes: in
/// order on an ordered channel, as a multiset otherwise.
async fn send_and_verify(ch: &DataChannel) -> Result<(), String> {
    let label = ch.label().to_owned();
    for i in 0..COUNT {
        ch.send(message(i))
            .await
            .map_err(|e| format!("{label}: send {i}: {e}"))?;
    }
    let mut want: HashMap<Message, usize> = HashMap::new();
    for i in 0..COUNT {
        *want.entry(message(i)).or_default() += 1;
    }
    for i in 0..COUNT {
        let m = tokio::time::timeout(T, ch.recv())
            .await
            .map_err(|_| format!("{label}: no echo {i}"))?
            .map_err(|e| format!("{label}: echo {i}: {e}"))?;
        if ch.options().ordered {
            if m != message(i) {
                return Err(format!("{label}: echo {i} differs: {m:?}"));
            }
        } else {
            match want.get_mut(&m) {
                Some(n) if *n > 0 => *n -= 1,
                _ => return Err(format!("{label}: unexpected echo {m:?}")),
            }
        }
    }
    Ok(())
}

/// Echoes a channel pion opened until pion says DONE (returns true) or the
/// channel closes (false); returns the messages echoed.
async fn echo(ch: DataChannel) -> Result<(usize, bool, DataChannel), String> {
    let mut echoed = 0;
    loop {
        match ch.recv().await {
            Ok(Message::Text(t)) if t == "DONE" => return Ok((echoed, true, ch)),
            Ok(m) => {
                ch.send(m)
                    .await
                    .map_err(|e| format!("{}: echo: {e}", ch.label()))?;
                echoed += 1;
            }
            Err(DcError::Closed(_)) => return Ok((echoed, false, ch)),
            Err(e) => return Err(format!("{}: {e}", ch.label())),
        }
    }
}

async fn run(assoc: Association, role: Role, close: bool) {
    assert!(assoc.partial_reliability(), "pion agrees to FORWARD TSN");
    assert!(assoc.stream_reconfig(), "pion agrees to RE-CONFIG");
    let channels = DataChannels::new(assoc.clone(), role);
    let rel_opts = ChannelOptions {
        protocol: "interop".into(),
        priority: 512,
        ..ChannelOptions::default()
    };
    let unrel_opts = ChannelOptions {
        ordered: false,
        reliability: Reliability::MaxRetransmits(0),
        ..rel_opts.clone()
    };
    let rel = tokio::time::timeout(T, channels.open("brisk-reliable", rel_opts))
        .await
        .expect("pion's ACK")
        .unwrap();
    let unrel = tokio::time::timeout(T, channels.open("brisk-unreliable", unrel_opts))
        .await
        .expect("pion's ACK")
        .unwrap();
    let first = match role {
        Role::Client => 0,
        Role::Server => 1,
    };
    assert_eq!((rel.stream_id(), unrel.stream_id()), (first, first + 2));

    // pion's two channels, echoed until pion is done.
    let mut echoes: HashMap<String, Echo> = HashMap::new();
    for _ in 0..2 {
        let ch = tokio::time::timeout(T, channels.accept())
            .await
            .expect("pion's OPEN")
            .unwrap();
        let (ordered, reliability) = match ch.label() {
            "pion-reliable" => (true, Reliability::Reliable),
            "pion-unreliable" => (false, Reliability::MaxRetransmits(0)),
            other => panic!("unexpected channel {other}"),
        };
        assert_eq!(
            (ch.options().ordered, ch.options().reliability),
            (ordered, reliability)
        );
        assert_eq!(
            ch.stream_id() % 2,
            1 - first % 2,
            "pion uses the other parity"
        );
        echoes.insert(ch.label().to_owned(), tokio::spawn(echo(ch)));
    }
    let (a, b) = tokio::join!(send_and_verify(&rel), send_and_verify(&unrel));
    a.unwrap();
    b.unwrap();
    if close {
        // RFC 8831 6.7: pion, reading, sees our reset and resets its own.
        tokio::time::timeout(T, rel.close())
            .await
            .expect("pion resets its stream in turn")
            .unwrap();
        assert!(matches!(
            rel.recv().await,
            Err(DcError::Closed(CloseReason::Local))
        ));
    }
    // pion sends DONE once it has verified every echo.
    let (n_rel, done, rel_pion) = wait_echo(echoes.remove("pion-reliable").unwrap()).await;
    assert!(done, "DONE arrives on pion-reliable");
    let unrel_echo = echoes.remove("pion-unreliable").unwrap();
    let n_unrel = if close {
        // pion closed it by resetting its stream (RFC 8831 6.7) before DONE.
        let (n, done, ch) = wait_echo(unrel_echo).await;
        assert!(!done);
        assert!(matches!(
            ch.recv().await,
            Err(DcError::Closed(CloseReason::PeerClosed))
        ));
        n
    } else {
        tokio::time::timeout(T, assoc.close())
            .await
            .expect("shutdown completes")
            .unwrap();
        // The association's end closes the channel.
        let (n, done, _) = wait_echo(unrel_echo).await;
        assert!(!done);
        n
    };
    assert_eq!((n_rel, n_unrel), (COUNT, COUNT));
    drop(rel_pion);
    if close {
        tokio::time::timeout(T, assoc.close())
            .await
            .expect("shutdown completes")
            .unwrap();
    }
}

type Echo = tokio::task::JoinHandle<Result<(usize, bool, DataChannel), String>>;

async fn wait_echo(e: Echo) -> (usize, bool, DataChannel) {
    tokio::time::timeout(T, e)
        .await
        .expect("the echo ends")
        .unwrap()
        .unwrap()
}

/// pion's `dc` role on `peer_port`, connecting to Brisk on `connect` if given.
fn pion_args(peer_port: u16, connect: Option<u16>, dtls_role: &str, close: bool) -> Vec<String> {
    let mut args = role_args("dc", peer_port);
    if let Some(port) = connect {
        args.extend(["--connect".into(), local(port)]);
    }
    args.extend(["--dtls-role".into(), dtls_role.into()]);
    args.extend(["--count".into(), COUNT.to_string()]);
    if close {
        args.push("--close".into());
    }
    args
}

/// tshark dissects the DCEP messages (PPID 50 as `rtcdc`): two OPENs with
/// their labels and two ACKs from each side.
fn check_dcep(capture: &mut Capture) {
    let ours = capture.ours();
    let (mut brisk, mut pion) = ((Vec::new(), Vec::new()), (Vec::new(), Vec::new()));
    for (port, (types, labels)) in capture.dcep_messages() {
        let side = if port == ours { &mut brisk } else { &mut pion };
        side.0.extend(types);
        side.1.extend(labels);
    }
    for (side, name) in [(&mut brisk, "brisk"), (&mut pion, "pion")] {
        let count = |t: u8| side.0.iter().filter(|x| **x == t).count();
        assert_eq!(
            (count(3), count(2)),
            (2, 2),
            "{name}'s OPENs and ACKs: {:?}",
            side.0
        );
        side.1.sort();
        assert_eq!(
            side.1,
            [format!("{name}-reliable"), format!("{name}-unreliable")]
        );
    }
}

/// With closing, each side sent RE-CONFIG chunks (type 130: its request and
/// its response to the other's); without, none.
fn check_reconfig(capture: &mut Capture, close: bool) {
    let ours = capture.ours();
    let reconfig = capture.chunks(130);
    let brisk = reconfig.get(&ours).copied().unwrap_or(0);
    let pion: usize = reconfig
        .iter()
        .filter(|(p, _)| **p != ours)
        .map(|(_, n)| n)
        .sum();
    if close {
        assert!(brisk >= 2 && pion >= 2, "RE-CONFIG chunks: {reconfig:?}");
    } else {
        assert_eq!((brisk, pion), (0, 0), "RE-CONFIG chunks: {reconfig:?}");
    }
}

/// Brisk starts the association (DTLS-client role: even ids); pion waits.
async fn brisk_connects(close: bool) {
    let bin = build_peer("pion", &[]);
    let (peer_port, our_port) = (free_port(), free_port());
    let capture = Capture::start("dc-pion-server", &[peer_port, our_port]);
    let pion = spawn_server(peer_command(
        &bin,
        &pion_args(peer_port, None, "server", close),
    ));
    let ep = endpoint(our_port, false).await;
    let assoc = connect(&ep, local(peer_port).parse().unwrap(), config()).await;
    run(assoc, Role::Client, close).await;
    check_pion_and_wire(pion, capture, close);
}

/// pion's result line: every message verified and echoed both ways, and
/// with `close` Brisk's reliable channel closed; then the capture's checks.
fn check_pion_and_wire(pion: Child, mut capture: Capture, close: bool) {
    let line = peer_output(pion, "pion dc");
    let closed = if close { "brisk-reliable" } else { "" };
    assert_eq!(
        line,
        format!(
            "OK verified={} echoed={} peer_closed={closed}",
            2 * COUNT,
            2 * COUNT
        )
    );
    check_dcep(&mut capture);
    check_reconfig(&mut capture, close);
    assert!(capture.finish() > 50);
}

/// pion starts the association (DTLS-client role: even ids); Brisk accepts.
async fn pion_connects(close: bool) {
    let bin = build_peer("pion", &[]);
    let (peer_port, our_port) = (free_port(), free_port());
    let capture = Capture::start("dc-pion-client", &[peer_port, our_port]);
    let ep = endpoint(our_port, true).await;
    let pion = spawn(&bin, &pion_args(peer_port, Some(our_port), "client", close));
    let assoc = accept(&ep).await;
    run(assoc, Role::Server, close).await;
    check_pion_and_wire(pion, capture, close);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn brisk_opens_and_accepts_channels_with_pion_as_sctp_server() {
    brisk_connects(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn brisk_opens_and_accepts_channels_with_pion_as_sctp_client() {
    pion_connects(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn channels_close_both_ways_with_pion_as_sctp_server() {
    brisk_connects(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn channels_close_both_ways_with_pion_as_sctp_client() {
    pion_connects(true).await;
}
