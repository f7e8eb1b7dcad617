//! Brisk over a datagram transport of the application's
//! ([`Endpoint::with_transport`]): two endpoints joined by an in-memory pipe
//! (tokio channels) under a toy "record layer" that wraps every datagram in a
//! header and XORs its bytes. The layer stands in for DTLS (RFC 8261); it is
//! not cryptography. The tests check that every datagram goes through the
//! layer, that SCTP's checksum still guards what the layer hands up, that
//! data channels run over it, and that a transport that fails or ends stops
//! the endpoint with an error that says so.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use brisk::datachannel::{
    ChannelOptions, CloseReason, DataChannels, Error as DcError, Message, Role,
};
use brisk::{Association, Config, DatagramTransport, Endpoint, EndpointConfig, Error, SendOptions};
use bytes::Bytes;
use tokio::sync::{Mutex, mpsc};

#[path = "common/endpoints.rs"]
mod endpoints;
use endpoints::{open_accepted, within};

/// The largest record the "path" carries: SCTP packets are made smaller by
/// the record overhead (`Config::mtu`).
const PATH_MTU: usize = 1200;

/// The toy record header: a magic and a version, as a DTLS record starts
/// with a content type and a version.
const MAGIC: [u8; 4] = *b"TOY\x01";
const KEY: u8 = 0x5a;

/// The pseudo-addresses the two ends know each other by.
fn addr_a() -> SocketAddr {
    "192.0.2.1:5000".parse().unwrap()
}
fn addr_b() -> SocketAddr {
    "192.0.2.2:5000".parse().unwrap()
}

/// What goes down one direction of the pipe: a datagram, or (injected by a
/// test) a failure of the connection.
enum Item {
    Datagram(Vec<u8>),
    Fail(String),
}

/// What a pipe end saw.
#[derive(Default)]
struct PipeCounters {
    /// Datagrams it delivered to its end.
    carried: AtomicU64,
    /// Of those, datagrams that did not start with the record header: a
    /// packet that bypassed the record layer.
    unwrapped: AtomicU64,
    /// Calls of `recv_from` that found nothing waiting (each a wait).
    recv_calls: AtomicU64,
    /// Datagrams sent to an address that is not the peer's.
    misaddressed: AtomicU64,
}

/// One end of an in-memory datagram pipe with one peer.
struct PipeEnd {
    local: SocketAddr,
    peer: SocketAddr,
    tx: mpsc::Sender<Item>,
    rx: Mutex<mpsc::Receiver<Item>>,
    counters: Arc<PipeCounters>,
}

impl PipeEnd {
    fn deliver(&self, item: Option<Item>, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        match item {
            Some(Item::Datagram(d)) => {
                self.counters.carried.fetch_add(1, Relaxed);
                if !d.starts_with(&MAGIC) {
                    self.counters.unwrapped.fetch_add(1, Relaxed);
                }
                let n = d.len().min(buf.len());
                buf[..n].copy_from_slice(&d[..n]);
                Ok((n, self.peer))
            }
            Some(Item::Fail(why)) => Err(io::Error::other(why)),
            None => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the peer closed the connection",
            )),
        }
    }

    fn check_dest(&self, dest: SocketAddr) {
        if dest != self.peer {
            self.counters.misaddressed.fetch_add(1, Relaxed);
        }
    }
}

impl DatagramTransport for PipeEnd {
    async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.counters.recv_calls.fetch_add(1, Relaxed);
        // Cancel safe: tokio's `recv` loses nothing when dropped.
        let item = self.rx.lock().await.recv().await;
        self.deliver(item, buf)
    }

    fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let mut rx = self
            .rx
            .try_lock()
            .map_err(|_| io::Error::from(io::ErrorKind::WouldBlock))?;
        match rx.try_recv() {
            Ok(item) => self.deliver(Some(item), buf),
            // Errors and the end are reported by the waiting receive.
            Err(_) => Err(io::ErrorKind::WouldBlock.into()),
        }
    }

    async fn send_to(&self, datagram: &[u8], dest: SocketAddr) -> io::Result<()> {
        self.check_dest(dest);
        self.tx
            .send(Item::Datagram(datagram.to_vec()))
            .await
            .map_err(|_| io::ErrorKind::BrokenPipe.into())
    }

    fn try_send_to(&self, datagram: &[u8], dest: SocketAddr) -> io::Result<()> {
        self.check_dest(dest);
        self.tx
            .try_send(Item::Datagram(datagram.to_vec()))
            .map_err(|_| io::ErrorKind::WouldBlock.into())
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.local)
    }
}

/// Both ends of a pipe, and a handle that injects datagrams or a failure
/// into B's receive queue.
struct Pipe {
    a: PipeEnd,
    b: PipeEnd,
    inject_b: mpsc::Sender<Item>,
}

fn pipe() -> Pipe {
    let (to_a, from_b) = mpsc::channel(4096);
    let (to_b, from_a) = mpsc::channel(4096);
    Pipe {
        a: PipeEnd {
            local: addr_a(),
            peer: addr_b(),
            tx: to_b.clone(),
            rx: Mutex::new(from_b),
            counters: Default::default(),
        },
        b: PipeEnd {
            local: addr_b(),
            peer: addr_a(),
            tx: to_a,
            rx: Mutex::new(from_a),
            counters: Default::default(),
        },
        inject_b: to_b,
    }
}

/// What a record layer did.
#[derive(Default)]
struct RecordCounters {
    sealed: AtomicU64,
    opened: AtomicU64,
    /// Records dropped for a bad header (as DTLS drops records that fail to
    /// authenticate).
    rejected: AtomicU64,
    /// The largest record sealed.
    largest: AtomicUsize,
    /// Flip a bit in the last byte of the next record's SCTP packet (a
    /// mutation the record layer does not detect, so SCTP's CRC32c must).
    corrupt_next: AtomicBool,
    /// Report the next record's length as `usize::MAX` (a bug in the
    /// transport, which the endpoint must survive).
    misreport_next: AtomicBool,
}

/// The toy record layer over a transport: every datagram becomes MAGIC then
/// the packet XOR KEY. A stand-in for DTLS, not cryptography.
struct ToyRecords<T> {
    inner: T,
    counters: Arc<RecordCounters>,
}

impl<T: DatagramTransport> ToyRecords<T> {
    fn seal(&self, packet: &[u8]) -> Vec<u8> {
        let mut record = Vec::with_capacity(MAGIC.len() + packet.len());
        record.extend_from_slice(&MAGIC);
        record.extend(packet.iter().map(|b| b ^ KEY));
        if self.counters.corrupt_next.swap(false, Relaxed) {
            if let Some(last) = record.last_mut() {
                *last ^= 0x01;
            }
        }
        self.counters.sealed.fetch_add(1, Relaxed);
        self.counters.largest.fetch_max(record.len(), Relaxed);
        record
    }

    /// The length to report for a packet of `len` bytes.
    fn reported(&self, len: usize) -> usize {
        if self.counters.misreport_next.swap(false, Relaxed) {
            usize::MAX
        } else {
            len
        }
    }

    /// Opens the record of `n` bytes in `buf` in place; its packet's length.
    fn open(&self, buf: &mut [u8], n: usize) -> Option<usize> {
        if n < MAGIC.len() || buf[..MAGIC.len()] != MAGIC {
            self.counters.rejected.fetch_add(1, Relaxed);
            return None;
        }
        buf.copy_within(MAGIC.len()..n, 0);
        let len = n - MAGIC.len();
        buf[..len].iter_mut().for_each(|b| *b ^= KEY);
        self.counters.opened.fetch_add(1, Relaxed);
        Some(len)
    }
}

impl<T: DatagramTransport> DatagramTransport for ToyRecords<T> {
    async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        loop {
            let (n, from) = self.inner.recv_from(buf).await?;
            if let Some(len) = self.open(buf, n) {
                return Ok((self.reported(len), from));
            }
        }
    }

    fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        loop {
            let (n, from) = self.inner.try_recv_from(buf)?;
            if let Some(len) = self.open(buf, n) {
                return Ok((self.reported(len), from));
            }
        }
    }

    async fn send_to(&self, datagram: &[u8], dest: SocketAddr) -> io::Result<()> {
        let record = self.seal(datagram);
        self.inner.send_to(&record, dest).await
    }

    fn try_send_to(&self, datagram: &[u8], dest: SocketAddr) -> io::Result<()> {
        // Seals only what goes out now, so no record is counted twice.
        let record = self.seal(datagram);
        match self.inner.try_send_to(&record, dest) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.counters.sealed.fetch_sub(1, Relaxed);
                Err(e)
            }
            other => other,
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// Both endpoints' counters, to look at while they run.
struct Taps {
    pipe_a: Arc<PipeCounters>,
    pipe_b: Arc<PipeCounters>,
    records_a: Arc<RecordCounters>,
    records_b: Arc<RecordCounters>,
    inject_b: mpsc::Sender<Item>,
}

fn config() -> Config {
    Config {
        // The record layer's bytes come out of the path's.
        mtu: PATH_MTU - MAGIC.len(),
        rto_initial: Duration::from_millis(50),
        rto_min: Duration::from_millis(50),
        rto_max: Duration::from_millis(200),
        stream_reconfig: true,
        ..Config::rfc9260()
    }
}

/// Endpoint A (connects) and endpoint B (accepts) over the record layer and
/// the pipe.
fn endpoints() -> (Endpoint, Endpoint, Taps) {
    let Pipe { a, b, inject_b } = pipe();
    let taps = Taps {
        pipe_a: a.counters.clone(),
        pipe_b: b.counters.clone(),
        records_a: Default::default(),
        records_b: Default::default(),
        inject_b,
    };
    let ea = Endpoint::with_transport_and_seed(
        ToyRecords {
            inner: a,
            counters: taps.records_a.clone(),
        },
        EndpointConfig {
            accept: false,
            accept_config: config(),
            ..EndpointConfig::default()
        },
        [1; 32],
    )
    .unwrap();
    let eb = Endpoint::with_transport_and_seed(
        ToyRecords {
            inner: b,
            counters: taps.records_b.clone(),
        },
        EndpointConfig {
            accept_config: config(),
            ..EndpointConfig::default()
        },
        [2; 32],
    )
    .unwrap();
    (ea, eb, taps)
}

/// Associates A with B by B's pseudo-address.
async fn associate(ea: &Endpoint, eb: &Endpoint) -> (Association, Association) {
    let (a, b) = within(async { tokio::join!(ea.connect(addr_b(), config()), eb.accept()) }).await;
    (a.unwrap(), b.unwrap())
}

/// A payload of `len` bytes that differs for each `seed`.
fn payload(len: usize, seed: u8) -> Bytes {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// Waits until `cond` holds (counters settle once the last datagram is
/// handled), failing after a while.
async fn settle(what: &str, mut cond: impl FnMut() -> bool) {
    for _ in 0..200 {
        if cond() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("never held: {what}");
}

const SIZES: [usize; 7] = [1, 100, 1000, 1196, 1197, 5000, 100_000];

#[tokio::test]
async fn messages_of_every_size_cross_the_record_layer_both_ways() {
    let (ea, eb, taps) = endpoints();
    assert_eq!(ea.local_addr(), addr_a());
    // Not a UDP socket: there is no kernel buffer to size.
    assert_eq!(ea.socket_receive_buffer(), 0);
    let (a, b) = associate(&ea, &eb).await;
    assert_eq!((a.remote(), b.remote()), (addr_b(), addr_a()));
    let opts = SendOptions {
        ppid: 53,
        ..SendOptions::default()
    };
    for (i, &len) in SIZES.iter().enumerate() {
        a.send(0, payload(len, i as u8), opts).await.unwrap();
        b.send(1, payload(len, 100 + i as u8), opts).await.unwrap();
    }
    for (i, &len) in SIZES.iter().enumerate() {
        let at_b = within(b.recv()).await.unwrap();
        assert_eq!((at_b.stream_id, at_b.ppid), (0, 53));
        assert_eq!(at_b.payload, payload(len, i as u8), "{len} bytes A to B");
        let at_a = within(a.recv()).await.unwrap();
        assert_eq!(at_a.stream_id, 1);
        assert_eq!(
            at_a.payload,
            payload(len, 100 + i as u8),
            "{len} bytes B to A"
        );
    }
    within(a.close()).await.unwrap();
    assert!(within(b.recv()).await.is_err());

    // Every datagram went through the record layer, one record each, none
    // larger than the path, and the endpoints handled exactly those.
    let (ra, rb) = (&taps.records_a, &taps.records_b);
    settle("every record A sealed reached B's endpoint", || {
        ra.sealed.load(Relaxed) == rb.opened.load(Relaxed)
            && eb.stats().packets_received == rb.opened.load(Relaxed)
    })
    .await;
    settle("every record B sealed reached A's endpoint", || {
        rb.sealed.load(Relaxed) == ra.opened.load(Relaxed)
            && ea.stats().packets_received == ra.opened.load(Relaxed)
    })
    .await;
    // 100 kB needs at least 85 packets of 1196 bytes less headers.
    assert!(ra.sealed.load(Relaxed) > 100, "{}", ra.sealed.load(Relaxed));
    assert_eq!(taps.pipe_b.carried.load(Relaxed), ra.sealed.load(Relaxed));
    assert_eq!(taps.pipe_a.carried.load(Relaxed), rb.sealed.load(Relaxed));
    for (pipe, records) in [(&taps.pipe_a, ra), (&taps.pipe_b, rb)] {
        assert_eq!(pipe.unwrapped.load(Relaxed), 0);
        assert_eq!(pipe.misaddressed.load(Relaxed), 0);
        assert_eq!(records.rejected.load(Relaxed), 0);
        assert_eq!(records.largest.load(Relaxed), PATH_MTU);
    }
    // No garbage; B saw the handshake's INIT and COOKIE ECHO before the
    // association existed (RFC 9260 8.4), and nothing else unclaimed.
    for (ep, ootb) in [(&ea, 0), (&eb, 2)] {
        let s = ep.stats();
        assert_eq!(
            (s.bad_checksum, s.malformed, s.out_of_the_blue),
            (0, 0, ootb)
        );
        assert_eq!(ep.stalled_wakeups(), 0);
    }
}

#[tokio::test]
async fn a_record_corrupted_under_the_layer_is_dropped_by_the_checksum_and_resent() {
    let (ea, eb, taps) = endpoints();
    let (a, b) = associate(&ea, &eb).await;
    let opts = SendOptions::default();
    // The next record A seals (the DATA) has a flipped bit the toy layer
    // does not notice: SCTP's CRC32c drops the packet (RFC 9260 6.8) and
    // retransmission delivers the message anyway.
    taps.records_a.corrupt_next.store(true, Relaxed);
    a.send(0, payload(500, 7), opts).await.unwrap();
    assert_eq!(within(b.recv()).await.unwrap().payload, payload(500, 7));
    assert_eq!(eb.stats().bad_checksum, 1);
    assert_eq!(a.stats().unwrap().t3_expirations, 1);
    // A record whose header is damaged never reaches the endpoint: the
    // layer drops it, as DTLS drops a record that fails to authenticate.
    let before = eb.stats().packets_received;
    taps.inject_b
        .send(Item::Datagram(b"XXX\x01garbage".to_vec()))
        .await
        .unwrap();
    settle("the damaged record was rejected", || {
        taps.records_b.rejected.load(Relaxed) == 1
    })
    .await;
    assert_eq!(eb.stats().packets_received, before);
    // A well-formed record with garbage inside: the endpoint drops it.
    let mut record = MAGIC.to_vec();
    record.extend(b"not an SCTP packet at all".iter().map(|b| b ^ KEY));
    taps.inject_b.send(Item::Datagram(record)).await.unwrap();
    settle("the garbage packet was counted", || {
        let s = eb.stats();
        s.packets_received == before + 1 && s.bad_checksum + s.malformed == 2
    })
    .await;
    // A transport that misreports a datagram's length does not crash the
    // endpoint: the length is cut to the buffer, and the bytes are garbage.
    let mut record = MAGIC.to_vec();
    record.extend(b"misreported".iter().map(|b| b ^ KEY));
    taps.records_b.misreport_next.store(true, Relaxed);
    taps.inject_b.send(Item::Datagram(record)).await.unwrap();
    settle("the overlong datagram was counted", || {
        let s = eb.stats();
        s.packets_received == before + 2 && s.bad_checksum + s.malformed == 3
    })
    .await;
    // The association carries on.
    a.send(0, payload(10, 8), opts).await.unwrap();
    assert_eq!(within(b.recv()).await.unwrap().payload, payload(10, 8));
}

#[tokio::test]
async fn data_channels_run_over_the_record_layer() {
    let (ea, eb, taps) = endpoints();
    let (a, b) = associate(&ea, &eb).await;
    let client = DataChannels::new(a, Role::Client);
    let server = DataChannels::new(b, Role::Server);
    // One channel each way.
    let (up, up_peer) = within(open_accepted(
        &client,
        &server,
        "up",
        ChannelOptions::default(),
    ))
    .await;
    let (down, down_peer) = within(open_accepted(
        &server,
        &client,
        "down",
        ChannelOptions::default(),
    ))
    .await;
    assert_eq!((up_peer.label(), down_peer.label()), ("up", "down"));
    assert_eq!(up.stream_id() % 2, 0, "the client opens even ids");
    assert_eq!(down.stream_id() % 2, 1, "the server opens odd ids");

    let big = payload(20_000, 3);
    up.send_text("hello from the client").await.unwrap();
    up.send_binary(big.clone()).await.unwrap();
    down.send_text("hello from the server").await.unwrap();
    down.send_binary(&b"\x00\x01\x02"[..]).await.unwrap();
    assert_eq!(
        within(up_peer.recv()).await.unwrap(),
        Message::Text("hello from the client".into())
    );
    assert_eq!(within(up_peer.recv()).await.unwrap(), Message::Binary(big));
    assert_eq!(
        within(down_peer.recv()).await.unwrap(),
        Message::Text("hello from the server".into())
    );
    assert_eq!(
        within(down_peer.recv()).await.unwrap(),
        Message::Binary(Bytes::from_static(b"\x00\x01\x02"))
    );
    // Closing resets the streams (RFC 8831 6.7), through the layer too.
    within(up.close()).await.unwrap();
    assert!(matches!(
        within(up_peer.recv()).await,
        Err(DcError::Closed(CloseReason::PeerClosed))
    ));
    within(down.close()).await.unwrap();
    assert!(matches!(
        within(down_peer.recv()).await,
        Err(DcError::Closed(CloseReason::PeerClosed))
    ));
    assert!(taps.records_a.sealed.load(Relaxed) > 0);
    assert_eq!(taps.pipe_a.unwrapped.load(Relaxed), 0);
    assert_eq!(taps.pipe_b.unwrapped.load(Relaxed), 0);
    assert_eq!(ea.stats().bad_checksum + eb.stats().bad_checksum, 0);
}

#[tokio::test]
async fn a_transport_error_stops_the_endpoint_and_says_why() {
    let (ea, eb, taps) = endpoints();
    let (a, b) = associate(&ea, &eb).await;
    a.send(0, &b"before"[..], SendOptions::default())
        .await
        .unwrap();
    // B waits for a message when its connection fails.
    let waiting = tokio::spawn({
        let b = b.clone();
        async move {
            let first = b.recv().await;
            (first, b.recv().await)
        }
    });
    let accepting = tokio::spawn({
        let eb = eb.clone();
        async move { eb.accept().await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    taps.inject_b
        .send(Item::Fail("fatal alert: bad_record_mac".into()))
        .await
        .unwrap();
    let (first, second) = within(waiting).await.unwrap();
    assert_eq!(&first.unwrap().payload[..], b"before");
    let is_ours = |e: &Error| {
        matches!(e, Error::TransportFailed(why) if why.contains("bad_record_mac"))
            && e.to_string() == "the datagram transport failed: fatal alert: bad_record_mac"
    };
    let e = second.unwrap_err();
    assert!(is_ours(&e), "{e}");
    let e = within(accepting).await.unwrap().unwrap_err();
    assert!(is_ours(&e), "{e}");
    let e = b
        .send(0, &b"after"[..], SendOptions::default())
        .await
        .unwrap_err();
    assert!(is_ours(&e), "{e}");
    let e = eb.connect(addr_a(), config()).await.unwrap_err();
    assert!(is_ours(&e), "{e}");
    // The driver stopped reading, with no loop on the failed transport, and
    // let the transport go (B's receiving half is dropped).
    let calls = taps.pipe_b.recv_calls.load(Relaxed);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(taps.pipe_b.recv_calls.load(Relaxed), calls);
    assert!(taps.inject_b.is_closed());
    assert_eq!(eb.stalled_wakeups(), 0);
    // A's end is untouched by B's failure.
    assert!(a.stats().is_some());
}

#[tokio::test]
async fn a_transport_whose_peer_goes_away_ends_the_endpoint() {
    let (ea, eb, taps) = endpoints();
    let (a, b) = associate(&ea, &eb).await;
    // A waits to receive while its endpoint is closed: it is told, not left
    // waiting.
    let a_waiting = tokio::spawn({
        let a = a.clone();
        async move { a.recv().await }
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    ea.close();
    assert!(matches!(
        within(a_waiting).await.unwrap(),
        Err(Error::EndpointClosed)
    ));
    // A's driver has dropped its transport; with the test's sender gone as
    // well, B's connection has ended.
    let Taps {
        inject_b, pipe_b, ..
    } = taps;
    drop(inject_b);
    let e = within(b.recv()).await.unwrap_err();
    assert!(
        matches!(&e, Error::TransportFailed(why) if why == "the peer closed the connection"),
        "{e}"
    );
    let calls = pipe_b.recv_calls.load(Relaxed);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(pipe_b.recv_calls.load(Relaxed), calls);
    assert_eq!(eb.stalled_wakeups(), 0);
}
