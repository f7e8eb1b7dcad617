//! The emulator with real namespaces, devices and the kernel's stacks. These
//! need root, as CI runs them; without it they fail and say so.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use brisk_emu::{Emulation, EmulationConfig, host_addr, netns};
use brisk_net::{Fate, Impairment, LinkParams};

/// The tests that time packets run one at a time.
static TIMED: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn start(cfg: EmulationConfig) -> Emulation {
    match Emulation::start(cfg) {
        Ok(e) => e,
        Err(e) => panic!("the emulator tests need root and iproute2: {e}"),
    }
}

fn delay(ms: u64) -> LinkParams {
    LinkParams::new(0, Duration::from_millis(ms)).with_overhead(0)
}

/// A UDP socket bound in host `i`'s namespace, on `port`.
fn socket_in(emu: &Emulation, i: usize, port: u16) -> UdpSocket {
    std::thread::scope(|s| {
        s.spawn(|| {
            emu.enter(i).unwrap();
            let s = UdpSocket::bind(SocketAddr::from((host_addr(i), port))).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            s
        })
        .join()
        .unwrap()
    })
}

#[test]
fn udp_crosses_the_emulated_link_after_its_delay_each_way() {
    let _one_at_a_time = TIMED.lock().unwrap_or_else(|p| p.into_inner());
    let emu = start(EmulationConfig::two_hosts(delay(10), delay(5)));
    let a = socket_in(&emu, 0, 4000);
    let b = socket_in(&emu, 1, 4000);
    let mut rtts = Vec::new();
    for i in 0..10u8 {
        let sent = Instant::now();
        a.send_to(&[i; 32], (host_addr(1), 4000)).unwrap();
        let mut buf = [0u8; 64];
        let (n, from) = b.recv_from(&mut buf).unwrap();
        let one_way = sent.elapsed();
        assert_eq!((n, buf[0]), (32, i));
        assert!(one_way >= Duration::from_millis(10), "{one_way:?}");
        b.send_to(&buf[..n], from).unwrap();
        a.recv_from(&mut buf).unwrap();
        rtts.push(sent.elapsed());
    }
    let fwd = emu.finish().unwrap();
    for rtt in &rtts {
        // 15 ms of emulated delay; the rest is the emulator's and the
        // kernel's own time, which the accuracy measurement publishes.
        assert!(*rtt >= Duration::from_millis(15), "{rtt:?}");
        assert!(*rtt < Duration::from_millis(25), "{rtt:?}");
    }
    assert_eq!(fwd.link_stats(0, 1).unwrap().delivered, 10);
    assert_eq!(fwd.link_stats(1, 0).unwrap().delivered, 10);
}

#[test]
fn a_drop_ordinal_hits_exactly_the_intended_packet() {
    let fwd_link = delay(1).with_impairments([Impairment::DropOrdinals {
        ordinals: vec![4, 7],
        data_only: false,
    }]);
    let emu = start(EmulationConfig::two_hosts(fwd_link, delay(1)));
    let a = socket_in(&emu, 0, 4001);
    let b = socket_in(&emu, 1, 4001);
    b.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut got = Vec::new();
    for i in 1..=10u8 {
        a.send_to(&[i; 8], (host_addr(1), 4001)).unwrap();
        let mut buf = [0u8; 16];
        if let Ok((_, _)) = b.recv_from(&mut buf) {
            got.push(buf[0]);
        }
    }
    let fwd = emu.finish().unwrap();
    assert_eq!(got, vec![1, 2, 3, 5, 6, 8, 9, 10]);
    let trace = fwd.trace(0, 1);
    let dropped: Vec<u64> = trace
        .iter()
        .filter(|r| r.fate == Fate::ImpairmentDrop)
        .map(|r| r.ordinal)
        .collect();
    assert_eq!(dropped, vec![4, 7]);
}

#[test]
fn the_namespaces_are_gone_after_finish_and_after_drop() {
    let emu = start(EmulationConfig::two_hosts(delay(1), delay(1)));
    let names: Vec<String> = (0..2).map(|i| emu.namespace(i).name().to_owned()).collect();
    let listed = netns::ours().unwrap();
    assert!(names.iter().all(|n| listed.contains(n)), "{listed:?}");
    emu.finish().unwrap();
    let listed = netns::ours().unwrap();
    assert!(names.iter().all(|n| !listed.contains(n)), "{listed:?}");

    let emu = start(EmulationConfig::two_hosts(delay(1), delay(1)));
    let names: Vec<String> = (0..2).map(|i| emu.namespace(i).name().to_owned()).collect();
    drop(emu);
    let listed = netns::ours().unwrap();
    assert!(names.iter().all(|n| !listed.contains(n)), "{listed:?}");
}

#[test]
fn a_namespace_left_by_a_dead_run_is_removed_by_the_next() {
    // PID 1 is alive but not ours; a PID above pid_max never is.
    let stale = format!("{}4999999-0-a", netns::PREFIX);
    let out = std::process::Command::new("ip")
        .args(["netns", "add", &stale])
        .output()
        .expect("iproute2's ip");
    assert!(out.status.success(), "{out:?}");
    let emu = start(EmulationConfig::two_hosts(delay(1), delay(1)));
    assert!(!netns::ours().unwrap().contains(&stale));
    emu.finish().unwrap();
}

#[test]
fn a_host_has_no_route_out_of_the_emulated_network() {
    let emu = start(EmulationConfig::two_hosts(delay(1), delay(1)));
    let out = emu
        .command(0, "ip")
        .args(["route", "show"])
        .output()
        .unwrap();
    let routes = String::from_utf8_lossy(&out.stdout).to_string();
    emu.finish().unwrap();
    assert!(!routes.contains("default"), "{routes}");
    assert!(routes.contains("10.77.0.0/24"), "{routes}");
}

#[test]
fn the_accuracy_probes_measure_delay_rate_and_exact_ordinals() {
    let _one_at_a_time = TIMED.lock().unwrap_or_else(|p| p.into_inner());
    use brisk_emu::accuracy::{Plan, measure};
    let plan = Plan {
        delay: Duration::from_millis(5),
        packet_rates: vec![200],
        duration: Duration::from_millis(400),
        bandwidths: vec![2_000_000],
        ordinals: vec![1, 3, 50, 200],
        ordinal_packets: 200,
    };
    let acc = measure(&plan).unwrap_or_else(|e| panic!("needs root: {e}"));
    let d = &acc.delays[0];
    assert_eq!(d.received, d.sent, "no loss was configured");
    // Never early: the stamp is taken before the send, the link holds each
    // datagram at least its delay.
    assert!(d.min_us >= 0.0, "{d:?}");
    let r = &acc.rates[0];
    // A link cannot deliver faster than its rate (1% for the measurement's
    // own edges).
    assert!(r.ratio() <= 1.01 && r.ratio() > 0.5, "{r:?}");
    assert!(acc.ordinals.exact(), "{:?}", acc.ordinals);
    assert_eq!(acc.ordinals.missing, vec![1, 3, 50, 200]);
    let text = acc.to_string();
    assert!(text.contains("| 200 |") && text.contains("exact"), "{text}");
}

#[test]
fn linux_tcp_delivers_every_byte_through_loss_and_the_first_transmission_drop() {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};

    // The 3rd new TCP segment's first transmission is dropped (found by
    // sequence number, so the retransmission passes), and the one that
    // first sends the stream's 500,001st byte, plus 1% random loss.
    let fwd = LinkParams::new(10_000_000, Duration::from_millis(5))
        .with_overhead(0)
        .with_impairments([
            Impairment::DropNewChunks { chunks: vec![3] },
            Impairment::DropNewBytes {
                bytes: vec![500_001],
            },
            Impairment::Bernoulli { p: 0.01 },
        ]);
    let emu = start(EmulationConfig::two_hosts(fwd, delay(5)));
    let listener = std::thread::scope(|s| {
        s.spawn(|| {
            emu.enter(1).unwrap();
            TcpListener::bind((host_addr(1), 7000)).unwrap()
        })
        .join()
        .unwrap()
    });
    let data: Vec<u8> = (0..1_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let receiver = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut got = Vec::new();
        conn.read_to_end(&mut got).unwrap();
        got
    });
    let mut client = std::thread::scope(|s| {
        s.spawn(|| {
            emu.enter(0).unwrap();
            TcpStream::connect((host_addr(1), 7000)).unwrap()
        })
        .join()
        .unwrap()
    });
    client.write_all(&data).unwrap();
    client.shutdown(std::net::Shutdown::Write).unwrap();
    let got = receiver.join().unwrap();
    drop(client);
    let fwd = emu.finish().unwrap();
    assert_eq!(got.len(), data.len());
    assert!(got == data, "every byte, in order");
    let stats = fwd.link_stats(0, 1).unwrap();
    assert_eq!(
        stats.dropped_new_chunks.len(),
        2,
        "{:?}",
        stats.dropped_new_chunks
    );
    assert_eq!(stats.dropped_new_chunks[0].number, 3);
    assert!(
        stats.dropped_new_chunks[1].carries_byte(500_001),
        "{:?}",
        stats.dropped_new_chunks[1]
    );
    // Stream byte numbers follow sequence numbers: byte 1 is the ISN + 1.
    let third = stats.dropped_new_chunks[0];
    let byte_seq = stats.dropped_new_chunks[1].tsn;
    let offset = byte_seq.wrapping_sub(third.tsn);
    assert_eq!(
        u64::from(offset),
        stats.dropped_new_chunks[1].first_byte - third.first_byte
    );
    // The dropped segment's bytes came again: a later packet starts at its
    // sequence number.
    let seq = stats.dropped_new_chunks[0].tsn;
    let trace = fwd.trace(0, 1);
    let first = trace
        .iter()
        .position(|r| r.data_tsns.contains(&seq))
        .unwrap();
    assert_eq!(trace[first].fate, Fate::ImpairmentDrop);
    assert!(
        trace[first + 1..]
            .iter()
            .any(|r| r.data_tsns.contains(&seq) && !r.lost()),
        "the segment was retransmitted"
    );
}
