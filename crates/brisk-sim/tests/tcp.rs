//! The TCP model in the simulator: the same hosts, links, impairments and
//! captures as SCTP. A client connects and sends messages; the server reads
//! them; the link drops chosen segments; tshark reads the capture as TCP
//! over IPv4 with good checksums.
//!
//! tshark is required: without it the capture test fails (it never skips).

use std::cell::RefCell;
use std::io::Write;
use std::net::SocketAddr;
use std::process::Command;
use std::rc::Rc;
use std::time::Duration;

use brisk_proto::Time;
use brisk_sim::transport::TcpMessages;
use brisk_sim::transport::TcpMessagesEvent;
use brisk_sim::{
    App, AppCtx, Happening, HostId, Impairment, LinkParams, Messages, Sim, point_to_point,
};
use brisk_tcp::{ConnId, TcpConfig};

const CLIENT: &str = "10.0.0.1:9899";
const SERVER: &str = "10.0.0.2:9899";

/// Connects, then writes `messages` messages of 200 bytes, each in its own
/// callback once connected; records when it connected and its
/// retransmissions.
#[derive(Default)]
struct Client {
    messages: u64,
    conn: Option<ConnId>,
    connected_at: Option<Time>,
    retransmissions: Vec<(u32, &'static str)>,
    /// (handle, first sent, acknowledged at) of each message.
    acked: Vec<(u64, Time, Time)>,
}

impl App<TcpMessages> for Client {
    fn start(&mut self, ctx: &mut AppCtx<'_, TcpMessages>) {
        let now = ctx.now();
        self.conn = ctx.transport().open(now, SERVER.parse().unwrap(), &());
    }
    fn on_event(&mut self, ctx: &mut AppCtx<'_, TcpMessages>, _: ConnId, e: &TcpMessagesEvent) {
        match TcpMessages::happening(e) {
            Happening::Connected => {
                self.connected_at = Some(ctx.now());
                for i in 0..self.messages {
                    ctx.set_timer(ctx.now(), i);
                }
            }
            Happening::Retransmission(r) => self.retransmissions.push((r.unit, r.cause)),
            Happening::Acked {
                message,
                first_sent_at,
            } => self.acked.push((message, first_sent_at, ctx.now())),
            _ => {}
        }
    }
    fn on_timer(&mut self, ctx: &mut AppCtx<'_, TcpMessages>, i: u64) {
        let now = ctx.now();
        let mut message = i.to_be_bytes().to_vec();
        message.resize(200, 0x42);
        let conn = self.conn.unwrap();
        ctx.transport().send_message(now, conn, message).unwrap();
    }
}

/// Reads every message as it becomes whole.
#[derive(Default)]
struct Server {
    connected_at: Option<Time>,
    read: Vec<(u64, usize, Time)>,
}

impl App<TcpMessages> for Server {
    fn start(&mut self, _: &mut AppCtx<'_, TcpMessages>) {}
    fn on_event(&mut self, ctx: &mut AppCtx<'_, TcpMessages>, conn: ConnId, e: &TcpMessagesEvent) {
        match TcpMessages::happening(e) {
            Happening::Connected => self.connected_at = Some(ctx.now()),
            Happening::MessageReady => {
                let now = ctx.now();
                while let Some(m) = ctx.transport().recv_message(conn) {
                    let n = u64::from_be_bytes(m[..8].try_into().unwrap());
                    self.read.push((n, m.len(), now));
                }
            }
            _ => {}
        }
    }
    fn on_timer(&mut self, _: &mut AppCtx<'_, TcpMessages>, _: u64) {}
}

fn tcp_host(sim: &mut Sim, addr: &str, listen: bool, app: Box<dyn App<TcpMessages>>) -> HostId {
    let addr: SocketAddr = addr.parse().unwrap();
    let config = TcpConfig::preset("linux").unwrap();
    sim.add_host_with(
        addr,
        |seed| TcpMessages::new(addr, config, listen, seed),
        app,
    )
}

/// A client and a server over `forward` and `back`, run for 10 s.
fn run(messages: u64, forward: LinkParams, back: LinkParams, capture: Option<SharedBuf>) -> Sim {
    let mut sim = Sim::new(7);
    let c = tcp_host(
        &mut sim,
        CLIENT,
        false,
        Box::new(Client {
            messages,
            ..Client::default()
        }),
    );
    let s = tcp_host(&mut sim, SERVER, true, Box::new(Server::default()));
    point_to_point(&mut sim, c, s, forward, back);
    if let Some(buf) = capture {
        sim.capture_pcapng(Box::new(buf));
    }
    sim.run(Time::from_secs(10));
    sim.finish_captures().unwrap();
    sim
}

#[derive(Clone, Default)]
struct SharedBuf(Rc<RefCell<Vec<u8>>>);

impl Write for SharedBuf {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn client(sim: &Sim) -> &Client {
    sim.app::<Client>(HostId::new(0)).unwrap()
}

fn server(sim: &Sim) -> &Server {
    sim.app::<Server>(HostId::new(1)).unwrap()
}

#[test]
fn the_handshake_takes_one_round_trip_for_the_client_and_one_and_a_half_for_the_server() {
    // Infinite bandwidth: only the 10 ms each way.
    let link = LinkParams::new(0, Duration::from_millis(10));
    let sim = run(1, link.clone(), link, None);
    assert_eq!(client(&sim).connected_at, Some(Time::from_millis(20)));
    assert_eq!(server(&sim).connected_at, Some(Time::from_millis(30)));
    // The message written at 20 ms is read 10 ms later, after the handshake's ACK.
    assert_eq!(server(&sim).read, [(0, 200, Time::from_millis(30))]);
    // It left at once (handle 0) and its ACK, sent at once (quick-ack at
    // the start of the connection), is back at 40 ms.
    assert_eq!(
        client(&sim).acked,
        [(0, Time::from_millis(20), Time::from_millis(40))]
    );
}

#[test]
fn every_message_arrives_whole_and_in_order_after_a_lost_segment_is_fast_retransmitted() {
    let link = LinkParams::new(10_000_000, Duration::from_millis(10));
    // The 3rd new data segment is dropped; 20 messages follow it.
    let forward = link
        .clone()
        .with_impairments([Impairment::DropNewChunks { chunks: vec![3] }]);
    let sim = run(40, forward, link, None);
    let read: Vec<u64> = server(&sim).read.iter().map(|r| r.0).collect();
    assert_eq!(read, (0..40).collect::<Vec<_>>());
    // Every message acknowledged once, in order, after it was first sent.
    let acked = &client(&sim).acked;
    assert_eq!(
        acked.iter().map(|a| a.0).collect::<Vec<_>>(),
        (0..40).collect::<Vec<_>>()
    );
    assert!(acked.iter().all(|a| a.1 < a.2));
    assert!(server(&sim).read.iter().all(|r| r.1 == 200));
    let dropped = &sim.stats().links[0].dropped_new_chunks;
    assert_eq!(dropped.len(), 1);
    // Exactly one retransmission, of the dropped segment, by a loss
    // detection that is not the RTO.
    let rtx = &client(&sim).retransmissions;
    assert_eq!(rtx.len(), 1, "{rtx:?}");
    assert_eq!(rtx[0].0, dropped[0].tsn);
    assert_ne!(rtx[0].1, "rto");
}

#[test]
fn the_arrival_log_gives_each_segment_its_one_way_delay() {
    // 1 Mbit/s, 10 ms, no queue: a segment of B bytes takes 10 ms plus its
    // serialization, its IP header standing for 20 of the 28 overhead bytes.
    let link = LinkParams::new(1_000_000, Duration::from_millis(10));
    let mut sim = Sim::new(7);
    let c = tcp_host(
        &mut sim,
        CLIENT,
        false,
        Box::new(Client {
            messages: 1,
            ..Client::default()
        }),
    );
    let s = tcp_host(&mut sim, SERVER, true, Box::new(Server::default()));
    point_to_point(&mut sim, c, s, link.clone(), link);
    sim.log_arrivals(s);
    sim.run(Time::from_secs(2));
    let log = sim.arrivals(s);
    let data: Vec<_> = log.iter().filter(|a| a.data).collect();
    assert_eq!(data.len(), 1);
    let a = data[0];
    // 200 bytes of message, 4 of length, 20 of TCP header.
    assert_eq!(a.size, 224);
    // It leaves at the instant the handshake's ACK (a bare 20-byte header)
    // does, right behind it: it waits for that ACK's serialization, then
    // takes its own, then the 10 ms.
    let ack_us = (20 + 28) as u64 * 8;
    let own_us = (224 + 28) as u64 * 8;
    assert_eq!(
        a.arrived.as_micros() - a.sent.as_micros(),
        10_000 + ack_us + own_us
    );
    assert!(
        log.iter().any(|a| !a.data),
        "the handshake's ACK arrived too"
    );
}

#[test]
fn tshark_reads_a_simulated_tcp_run_as_tcp_over_ipv4_with_good_checksums() {
    let link = LinkParams::new(10_000_000, Duration::from_millis(10));
    let forward = link
        .clone()
        .with_impairments([Impairment::DropNewChunks { chunks: vec![3] }]);
    let buf = SharedBuf::default();
    let sim = run(10, forward, link, Some(buf.clone()));
    let path = std::env::temp_dir().join(format!("brisk-sim-tcp-{}.pcapng", std::process::id()));
    std::fs::write(&path, &*buf.0.borrow()).unwrap();
    let out = Command::new("tshark")
        .arg("-r")
        .arg(&path)
        .args([
            "-n",
            "-o",
            "tcp.check_checksum:TRUE",
            "-o",
            "ip.check_checksum:TRUE",
            "-T",
            "fields",
            "-e",
            "ip.proto",
            "-e",
            "tcp.checksum.status",
            "-e",
            "ip.checksum.status",
            "-e",
            "tcp.len",
            "-e",
            "ip.id",
        ])
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "running tshark ({e}): this test needs it to read the capture independently. \
                 Install it: apt-get install tshark (or run scripts/test, which installs it)"
            )
        });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    let sent: u64 = sim.stats().links.iter().map(|l| l.sent).sum();
    assert_eq!(rows.len() as u64, sent, "every packet on both directions");
    // Wireshark's checksum status: 1 is good (0 bad, 2 unverified).
    for r in &rows {
        assert_eq!(r[0], "6", "TCP over IPv4: {r:?}");
        assert_eq!(r[1], "1", "TCP checksum good: {r:?}");
        assert_eq!(r[2], "1", "IPv4 header checksum good: {r:?}");
    }
    // Data segments carry the framed messages; the sim numbers every packet.
    let data = rows.iter().filter(|r| r[3] != "0").count();
    assert!(data >= 2, "{text}");
    let ids: std::collections::BTreeSet<&str> = rows.iter().map(|r| r[4]).collect();
    assert!(ids.len() > 1);
    std::fs::remove_file(&path).ok();
}
