//! Multi-homing over real links: two network namespaces joined by two veth
//! links (`common/netns.rs`), with paths killed by nftables drop rules or by
//! taking a link down.
//!
//! - The bed itself: both links carry UDP; each way of killing a path kills
//!   that path only, and restoring it brings it back.
//! - Brisk's multi-homed driver: each datagram leaves from the address the
//!   kernel's route to its destination names.
//! - usrsctp to usrsctp over UDP encapsulation (RFC 6951), two paths: the
//!   primary is killed mid-stream and every message still arrives once, the
//!   rest by the second path.
//! - Brisk (two sockets) with usrsctp, both ways.
//! - Brisk multi-homed (the core's paths) with usrsctp across a dropped
//!   primary, both ways, with and without quick failover (RFC 7829).
//!
//! Needs root, iproute2, nftables, cc and libusrsctp-dev: `scripts/test`
//! installs them; a missing one fails the test with its name.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use brisk::{Config, Endpoint, EndpointConfig};

#[path = "../../../tests/interop/build_peer.rs"]
mod build_peer;
use build_peer::build_peer;
#[path = "common/mh_peer.rs"]
mod mh_peer;
use mh_peer::{
    First, Peer, SCTP_PORT, brisk_recv, brisk_send, brisk_with_usrsctp, recv_args, send_args,
};
#[path = "common/netns.rs"]
mod netns;
use netns::{Bed, Cut, Side, addr, addrs, sock};

/// The UDP port of every endpoint in the bed (each namespace has its own).
const UDP: u16 = 9899;

#[test]
fn the_bed_has_two_links_that_die_and_come_back_one_at_a_time() {
    let bed = Bed::new();
    for link in 0..2 {
        assert!(bed.udp_reaches(Side::A, link), "link {link} from A");
        assert!(bed.udp_reaches(Side::B, link), "link {link} from B");
    }
    for how in [Cut::Drop, Cut::Down] {
        for side in [Side::A, Side::B] {
            bed.cut(side, 0, how);
            assert!(
                !bed.udp_reaches(Side::A, 0),
                "{how:?} in {side:?}: link 0 dead"
            );
            assert!(
                !bed.udp_reaches(Side::B, 0),
                "{how:?} in {side:?}: link 0 dead"
            );
            assert!(
                bed.udp_reaches(Side::A, 1),
                "{how:?} in {side:?}: link 1 alive"
            );
            bed.restore(side, 0, how);
            // A link taken up again needs its carrier back first.
            let back = (0..20).any(|_| {
                bed.udp_reaches(Side::A, 0) || {
                    std::thread::sleep(Duration::from_millis(100));
                    false
                }
            });
            assert!(back, "{how:?} in {side:?}: link 0 restored");
        }
    }
}

/// A tool the bed needs that is missing fails the test, naming the tool
/// and its package.
#[test]
#[should_panic(expected = "`brisk-no-such-tool` is missing")]
fn a_missing_tool_fails_naming_it() {
    netns::require("brisk-no-such-tool", "brisk-no-such-package");
}

/// A bed's namespaces go with it, and a new bed removes those of a run
/// that crashed (named after a process that no longer exists).
#[test]
fn beds_are_removed_when_dropped_and_after_a_crashed_run() {
    // A PID above the kernel's limit (4194304) is never alive.
    let leftover = format!("{}4194305-bed0-a", brisk_emu::netns::PREFIX);
    let out = std::process::Command::new("ip")
        .args(["netns", "add", &leftover])
        .output()
        .expect("ip netns add");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bed = Bed::new();
    let names = bed.names();
    let listed = netns::namespaces();
    assert!(!listed.contains(&leftover), "{listed:?}");
    assert!(names.iter().all(|n| listed.contains(n)), "{listed:?}");
    drop(bed);
    let listed = netns::namespaces();
    assert!(names.iter().all(|n| !listed.contains(n)), "{listed:?}");
}

/// Brisk bound to A's two addresses, the second first (so "the first
/// socket" is the wrong answer for link 0): its INIT to each of B's
/// addresses leaves from A's address on the same link.
#[test]
fn a_multihomed_endpoint_sends_from_the_address_the_route_names() {
    let bed = Bed::new();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let listeners = bed.in_namespace(Side::B, move || {
        let sockets: Vec<_> = (0..2)
            .map(|link| {
                let s = std::net::UdpSocket::bind(sock(Side::B, link, UDP)).unwrap();
                s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                s
            })
            .collect();
        ready_tx.send(()).unwrap();
        sockets
            .iter()
            .map(|s| {
                let mut buf = [0u8; 2048];
                let (n, from) = s.recv_from(&mut buf).expect("an INIT");
                assert!(n >= 16 && buf[12] == 1, "an INIT chunk");
                from
            })
            .collect::<Vec<SocketAddr>>()
    });
    ready_rx.recv().unwrap();
    let brisk = bed.run_brisk(Side::A, || async {
        let ep = Endpoint::bind_multihomed(
            &[sock(Side::A, 1, UDP), sock(Side::A, 0, UDP)],
            EndpointConfig {
                accept: false,
                ..EndpointConfig::default()
            },
        )
        .await
        .unwrap();
        for link in 0..2 {
            // The handshake cannot complete: only the INIT matters.
            let _ = tokio::time::timeout(
                Duration::from_millis(300),
                ep.connect(sock(Side::B, link, UDP), Config::rfc9260()),
            )
            .await;
        }
    });
    let from = listeners.join().unwrap();
    brisk.join().unwrap();
    assert_eq!(from, vec![sock(Side::A, 0, UDP), sock(Side::A, 1, UDP)]);
}

fn usrsctp() -> std::path::PathBuf {
    build_peer("usrsctp", &[])
}

fn sorted(mut v: Vec<std::net::Ipv4Addr>) -> Vec<std::net::Ipv4Addr> {
    v.sort();
    v
}

/// usrsctp multi-homed over UDP on both sides: 400 messages from `from` to
/// the other side, one every 10 ms, on the primary path (link 0); 1.2 s in,
/// link 0 is cut `how` in `cut_in`'s namespace. Every message arrives
/// exactly once and in order; those after the cut by link 1. Without PF
/// (`pf_threshold` None: usrsctp's default, off) the sender reports the
/// primary unreachable: it sends new data there until Path.Max.Retrans (5)
/// T3 expiries, about 1.8 s with an RTO of 200-400 ms, well before its last
/// message. With PF, data moves at the first timeout (RFC 7829), and the
/// primary may not be declared failed before the end.
fn usrsctp_fails_over(from: Side, how: Cut, cut_in: Side, pf_threshold: Option<u16>) {
    const COUNT: u64 = 400;
    let bed = Bed::new();
    let bin = usrsctp();
    let binds = |side| [sock(side, 0, UDP), sock(side, 1, UDP)];
    let to = from.other();
    let pf: Vec<String> = pf_threshold
        .map(|k| vec!["--pf-threshold".into(), k.to_string()])
        .unwrap_or_default();
    let mut cmd = bed.command(to, &bin);
    cmd.args(recv_args(&binds(to), COUNT)).args(&pf);
    let mut receiver = Peer::start(cmd, "usrsctp mh-recv");
    std::thread::sleep(Duration::from_millis(300));
    let mut cmd = bed.command(from, &bin);
    cmd.args(send_args(&binds(from), &binds(to), COUNT, 10))
        .args(&pf);
    let mut sender = Peer::start(cmd, "usrsctp mh-send");
    sender.wait_line("PRIMARY", Duration::from_secs(15));
    receiver.wait_line("LOCALS", Duration::from_secs(5));
    std::thread::sleep(Duration::from_millis(1200));
    bed.cut(cut_in, 0, how);
    let sent = sender.finish(Duration::from_secs(60));
    let got = receiver.finish(Duration::from_secs(10));

    // RFC 9260 5.1.2: INIT and INIT ACK listed both addresses.
    assert_eq!(sorted(sent.peers.clone()), addrs(to).to_vec(), "{sent:?}");
    assert_eq!(sorted(got.peers.clone()), addrs(from).to_vec(), "{got:?}");
    assert_eq!(sent.primary, Some(addr(to, 0)));
    assert_eq!(sent.sent.map(|s| s.0), Some(COUNT));
    let r = got.received.clone().expect("a RECEIVED line");
    assert_eq!(
        (r.count, r.unique, r.duplicates, r.missing, r.reordered),
        (COUNT, COUNT, 0, 0, 0),
        "{got:?}"
    );
    let before = got.from.iter().find(|f| f.addr == addr(from, 0));
    let after = got.from.iter().find(|f| f.addr == addr(from, 1));
    let (before, after) = match (before, after) {
        (Some(b), Some(a)) => (b, a),
        _ => panic!("messages came by both paths: {got:?}"),
    };
    assert_eq!(before.count + after.count, COUNT);
    assert!(
        before.count >= 50,
        "the primary carried the first ~120: {got:?}"
    );
    assert!(
        after.count >= 50,
        "the second path carried the rest: {got:?}"
    );
    assert!(before.last < after.first, "{got:?}");
    let unreachable = sent
        .paths
        .iter()
        .any(|p| p.addr == addr(to, 0) && p.state == "ADDR_UNREACHABLE");
    assert!(
        unreachable || pf_threshold.is_some(),
        "the sender reports the primary unreachable: {sent:?}"
    );
    eprintln!(
        "usrsctp failover ({from:?} to {to:?}, {how:?} in {cut_in:?}, PF threshold \
         {pf_threshold:?}): primary carried {}, second path {}, max latency {} ms, \
         sender rtx {:?}, paths {:?}",
        before.count, after.count, r.max_latency_ms, sent.sent, sent.paths
    );
}

#[test]
fn usrsctp_fails_over_to_the_second_path_when_the_receiver_drops_the_primary() {
    usrsctp_fails_over(Side::A, Cut::Drop, Side::B, None);
}

#[test]
fn usrsctp_fails_over_to_the_second_path_when_the_sender_drops_the_primary() {
    usrsctp_fails_over(Side::B, Cut::Drop, Side::B, None);
}

#[test]
fn usrsctp_fails_over_to_the_second_path_when_the_primary_link_goes_down() {
    usrsctp_fails_over(Side::A, Cut::Down, Side::B, None);
}

/// RFC 7829 in usrsctp (its sysctl `sctp_path_pf_threshold`, 0: PF at the
/// first timeout): the same outage, the same guarantees.
#[test]
fn usrsctp_with_pf_fails_over_to_the_second_path_when_the_primary_is_dropped() {
    usrsctp_fails_over(Side::A, Cut::Drop, Side::B, Some(0));
}

/// Brisk's endpoint in A on both addresses (the second first), SCTP port
/// 5000, accepting with `cfg`.
async fn brisk_endpoint(accept: bool) -> Endpoint {
    Endpoint::bind_multihomed(
        &[sock(Side::A, 1, UDP), sock(Side::A, 0, UDP)],
        EndpointConfig {
            port: SCTP_PORT,
            accept,
            accept_config: config(),
            ..EndpointConfig::default()
        },
    )
    .await
    .unwrap()
}

fn config() -> Config {
    Config {
        rto_min: Duration::from_millis(100),
        rto_initial: Duration::from_millis(200),
        rto_max: Duration::from_millis(400),
        ..Config::rfc9260()
    }
}

/// Brisk in A sends 200 messages to usrsctp's mh-recv in B (bound to both
/// of B's addresses) at B's address on link `link`: all arrive once, in
/// order, from A's address on that link.
fn brisk_to_usrsctp(link: usize) {
    const COUNT: u64 = 200;
    let bed = Bed::new();
    let args = recv_args(&[sock(Side::B, 0, UDP), sock(Side::B, 1, UDP)], COUNT);
    let (stalled, got) =
        brisk_with_usrsctp(&bed, Side::B, &args, First::Peer, move |_, _| async move {
            let ep = brisk_endpoint(false).await;
            let assoc = ep
                .connect_to_port(sock(Side::B, link, UDP), SCTP_PORT, config())
                .await
                .expect("handshake with usrsctp");
            brisk_send(&assoc, COUNT as u32, Duration::from_millis(5)).await;
            ep.stalled_wakeups()
        });
    let r = got.received.clone().expect("a RECEIVED line");
    assert_eq!(
        (r.count, r.unique, r.duplicates, r.missing, r.reordered),
        (COUNT, COUNT, 0, 0, 0),
        "{got:?}"
    );
    assert_eq!(got.count_from(addr(Side::A, link)), COUNT, "{got:?}");
    assert_eq!(stalled, 0);
}

#[test]
fn brisk_sends_to_usrsctp_across_the_bed_by_link_0() {
    brisk_to_usrsctp(0);
}

#[test]
fn brisk_sends_to_usrsctp_across_the_bed_by_link_1() {
    brisk_to_usrsctp(1);
}

/// usrsctp's mh-send in B (bound to both of B's addresses) associates with
/// Brisk at A's address on link 1 and sends 200 messages: Brisk receives
/// each once, in order.
#[test]
fn usrsctp_sends_to_brisk_across_the_bed() {
    const COUNT: u64 = 200;
    let bed = Bed::new();
    let args = send_args(
        &[sock(Side::B, 0, UDP), sock(Side::B, 1, UDP)],
        &[sock(Side::A, 1, UDP)],
        COUNT,
        5,
    );
    let ((remote, got, stalled), sender) =
        brisk_with_usrsctp(&bed, Side::B, &args, First::Brisk, |ready, _| async move {
            let ep = brisk_endpoint(true).await;
            ready.now();
            let assoc = tokio::time::timeout(Duration::from_secs(30), ep.accept())
                .await
                .expect("usrsctp's INIT")
                .expect("accept");
            let remote: IpAddr = assoc.remote().ip();
            let got = brisk_recv(&assoc, COUNT, Duration::from_secs(30)).await;
            (remote, got, ep.stalled_wakeups())
        });
    assert_eq!(sent_count(&sender), COUNT);
    assert_eq!(remote, IpAddr::from(addr(Side::B, 1)));
    assert_eq!(
        (
            got.count,
            got.unique,
            got.duplicates,
            got.missing,
            got.reordered
        ),
        (COUNT, COUNT, 0, 0, 0)
    );
    assert_eq!(stalled, 0);
}

fn sent_count(r: &mh_peer::Report) -> u64 {
    r.sent
        .map(|s| s.0)
        .unwrap_or_else(|| panic!("no SENT line: {r:?}"))
}

// --- Brisk multi-homed (the core's paths) with usrsctp, across a failure ---

/// Brisk's timers for the failover runs: those of the usrsctp peer
/// (`USRSCTP_TUNING`), with quick failover (RFC 7829, PFMR 0) when `pf`.
fn failover_config(pf: bool) -> Config {
    Config {
        hb_interval: Duration::from_millis(500),
        potentially_failed: pf,
        pf_max_retrans: 0,
        ..config()
    }
}

/// How a Brisk-to-usrsctp failover run goes.
#[derive(Debug, Clone, Copy)]
struct Outage {
    /// Quick failover (RFC 7829, PFMR 0).
    pf: bool,
    how: Cut,
    /// The namespace whose link 0 is cut.
    cut_in: Side,
    /// Restore the path this long after the cut.
    restore_after: Option<Duration>,
}

/// Brisk in A, bound to both addresses, associates with usrsctp's mh-recv
/// in B at B's address on link 0 and sends 400 messages, one every 10 ms;
/// 1.2 s in, link 0 is cut as `outage` says (and maybe restored). usrsctp
/// receives every message once and in order, some from A's address on
/// link 1, and Brisk reports its data path moving from B's link-0 address
/// to B's link-1 one. Returns Brisk's path events and usrsctp's report.
fn brisk_fails_over_to_usrsctp(outage: Outage) -> (Vec<brisk::PathEvent>, mh_peer::Report) {
    const COUNT: u64 = 400;
    let bed = Bed::new();
    let args = recv_args(&[sock(Side::B, 0, UDP), sock(Side::B, 1, UDP)], COUNT);
    let ((events, paths), got) = brisk_with_usrsctp(
        &bed,
        Side::B,
        &args,
        First::Peer,
        move |_, links| async move {
            let ep = brisk_endpoint(false).await;
            let assoc = ep
                .connect_to_port(sock(Side::B, 0, UDP), SCTP_PORT, failover_config(outage.pf))
                .await
                .expect("handshake with usrsctp");
            let sender = async {
                brisk_send(&assoc, COUNT as u32, Duration::from_millis(10)).await;
            };
            let cutter = async {
                tokio::time::sleep(Duration::from_millis(1200)).await;
                // A blocking command on the runtime's only thread: the
                // association waits ~10 ms, which a failover outlasts.
                links.cut(outage.cut_in, 0, outage.how);
                if let Some(after) = outage.restore_after {
                    tokio::time::sleep(after).await;
                    links.restore(outage.cut_in, 0, outage.how);
                }
            };
            let paths = assoc.paths();
            tokio::join!(sender, cutter);
            let mut events = Vec::new();
            while let Some(e) = assoc.try_path_event() {
                events.push(e);
            }
            (events, paths)
        },
    );
    let r = got.received.clone().expect("a RECEIVED line");
    eprintln!(
        "Brisk -> usrsctp failover ({outage:?}): {r:?}, from {:?}, Brisk's path events {events:?}",
        got.from
    );
    assert_eq!(
        sorted(got.peers.clone()),
        addrs(Side::A).to_vec(),
        "Brisk's INIT lists both addresses: {got:?}"
    );
    let paths = paths.expect("paths while the association is up");
    assert_eq!(paths.len(), 2, "{paths:?}");
    assert_eq!(
        (r.count, r.unique, r.duplicates, r.missing, r.reordered),
        (COUNT, COUNT, 0, 0, 0),
        "{got:?}"
    );
    assert!(
        got.count_from(addr(Side::A, 0)) >= 50 && got.count_from(addr(Side::A, 1)) >= 50,
        "{got:?}"
    );
    assert!(
        events.iter().any(|e| matches!(e,
            brisk::PathEvent::DataPath { from, to, .. }
                if *from == sock(Side::B, 0, UDP) && *to == sock(Side::B, 1, UDP))),
        "{events:?}"
    );
    (events, got)
}

#[test]
fn brisk_fails_over_to_usrsctp_when_the_primary_is_dropped() {
    brisk_fails_over_to_usrsctp(Outage {
        pf: false,
        how: Cut::Drop,
        cut_in: Side::B,
        restore_after: None,
    });
}

#[test]
fn brisk_with_pf_fails_over_to_usrsctp_when_the_primary_is_dropped() {
    brisk_fails_over_to_usrsctp(Outage {
        pf: true,
        how: Cut::Drop,
        cut_in: Side::B,
        restore_after: None,
    });
}

/// Brisk's own link goes down: its sends to the primary fail at the socket
/// (no route), and it fails over all the same.
#[test]
fn brisk_with_pf_fails_over_to_usrsctp_when_its_primary_link_goes_down() {
    brisk_fails_over_to_usrsctp(Outage {
        pf: true,
        how: Cut::Down,
        cut_in: Side::A,
        restore_after: None,
    });
}

/// RFC 7829 with switchback (Primary.Switchover.Max.Retrans none): the
/// primary comes back 1 s after the cut; a heartbeat finds it, data moves
/// back to it, and the last messages arrive by link 0 again.
#[test]
fn brisk_with_pf_switches_back_to_the_primary_when_it_returns() {
    let (events, got) = brisk_fails_over_to_usrsctp(Outage {
        pf: true,
        how: Cut::Drop,
        cut_in: Side::B,
        restore_after: Some(Duration::from_secs(1)),
    });
    assert!(
        events.iter().any(|e| matches!(e,
            brisk::PathEvent::DataPath { from, to, .. }
                if *from == sock(Side::B, 1, UDP) && *to == sock(Side::B, 0, UDP))),
        "{events:?}"
    );
    let via_link_0 = got
        .from
        .iter()
        .find(|f| f.addr == addr(Side::A, 0))
        .expect("messages by link 0");
    assert_eq!(
        via_link_0.last, 399,
        "the last message came by link 0: {got:?}"
    );
}

/// usrsctp's mh-send in B associates with Brisk in A (bound to both
/// addresses) at both of A's addresses and sends 400 messages, one every
/// 10 ms; 1.2 s in, A drops everything on link 0. Brisk receives every
/// message once and in order; usrsctp reports A's link-0 address unreachable.
#[test]
fn usrsctp_fails_over_to_brisk_when_the_primary_is_dropped() {
    const COUNT: u64 = 400;
    let bed = Bed::new();
    let args = send_args(
        &[sock(Side::B, 0, UDP), sock(Side::B, 1, UDP)],
        &[sock(Side::A, 0, UDP), sock(Side::A, 1, UDP)],
        COUNT,
        10,
    );
    let (got, sent) = brisk_with_usrsctp(
        &bed,
        Side::B,
        &args,
        First::Brisk,
        |ready, links| async move {
            let ep = Endpoint::bind_multihomed(
                &[sock(Side::A, 0, UDP), sock(Side::A, 1, UDP)],
                EndpointConfig {
                    port: SCTP_PORT,
                    accept_config: failover_config(false),
                    ..EndpointConfig::default()
                },
            )
            .await
            .unwrap();
            ready.now();
            let assoc = tokio::time::timeout(Duration::from_secs(30), ep.accept())
                .await
                .expect("usrsctp's INIT")
                .expect("accept");
            let receiver = brisk_recv(&assoc, COUNT, Duration::from_secs(60));
            let cutter = async {
                // usrsctp waits until both paths are confirmed, then sends.
                tokio::time::sleep(Duration::from_millis(1500)).await;
                links.cut(Side::A, 0, Cut::Drop);
            };
            let (got, ()) = tokio::join!(receiver, cutter);
            got
        },
    );
    eprintln!(
        "usrsctp -> Brisk failover: {got:?}, usrsctp's paths {:?}",
        sent.paths
    );
    assert_eq!(sent_count(&sent), COUNT);
    assert_eq!(
        sorted(sent.peers.clone()),
        addrs(Side::A).to_vec(),
        "{sent:?}"
    );
    assert_eq!(
        (
            got.count,
            got.unique,
            got.duplicates,
            got.missing,
            got.reordered
        ),
        (COUNT, COUNT, 0, 0, 0)
    );
    assert!(
        sent.paths
            .iter()
            .any(|p| p.addr == addr(Side::A, 0) && p.state == "ADDR_UNREACHABLE"),
        "{sent:?}"
    );
}

/// `connect_multihomed` (connectx) with both of usrsctp's addresses while
/// its first one is already unreachable: the INIT that goes unanswered is
/// sent to the second, the association comes up there, and every message
/// arrives once and in order, all over link 1.
#[test]
fn brisk_connects_to_usrsctp_at_its_second_address_when_the_first_is_dead() {
    const COUNT: u64 = 50;
    let bed = Bed::new();
    let args = recv_args(&[sock(Side::B, 0, UDP), sock(Side::B, 1, UDP)], COUNT);
    let (paths, got) = brisk_with_usrsctp(
        &bed,
        Side::B,
        &args,
        First::Peer,
        move |_, links| async move {
            links.cut(Side::B, 0, Cut::Drop);
            let ep = brisk_endpoint(false).await;
            let assoc = ep
                .connect_multihomed(
                    &[sock(Side::B, 0, UDP), sock(Side::B, 1, UDP)],
                    failover_config(true),
                )
                .await
                .expect("handshake over the second address");
            let paths = assoc.paths();
            brisk_send(&assoc, COUNT as u32, Duration::from_millis(10)).await;
            paths
        },
    );
    let r = got.received.clone().expect("a RECEIVED line");
    assert_eq!(
        (r.count, r.unique, r.duplicates, r.missing, r.reordered),
        (COUNT, COUNT, 0, 0, 0),
        "{got:?}"
    );
    assert_eq!(got.count_from(addr(Side::A, 1)), COUNT, "{got:?}");
    let paths = paths.expect("paths while the association is up");
    assert!(paths.iter().all(|p| p.confirmed), "{paths:?}");
}
