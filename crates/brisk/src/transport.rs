//! The datagram transport under an endpoint: UDP (RFC 6951) by default, or
//! anything that carries whole datagrams, such as a DTLS connection (RFC 8261).

use std::future::Future;
use std::io;
use std::net::SocketAddr;

use tokio::net::UdpSocket;

/// What carries an endpoint's SCTP packets: each call moves one whole
/// datagram, one SCTP packet, to or from a peer named by a [`SocketAddr`].
///
/// [`Endpoint::bind`](crate::Endpoint::bind) uses a UDP socket;
/// [`Endpoint::with_transport`](crate::Endpoint::with_transport) takes any
/// implementation, for instance a DTLS connection (RFC 8261: SCTP over DTLS,
/// as WebRTC data channels run). The address only names a peer: a transport
/// with one peer (a DTLS connection) may report every datagram as coming from
/// a fixed pseudo-address and ignore the destination of those it sends; a
/// transport with many peers maps each address to its connection.
///
/// **Receiving.** [`recv_from`](Self::recv_from) waits for a datagram. It
/// must be cancel safe: the endpoint drops the future when it has other work,
/// and a datagram the future had taken must not be lost with it. An error
/// means the transport can carry nothing more (the DTLS connection closed or
/// failed): the endpoint stops, and every waiting and later call on it and on
/// its associations fails with [`Error::TransportFailed`](crate::Error::TransportFailed)
/// naming the error. A record that fails to decrypt or authenticate is not
/// such an error: drop it (and count it) and wait for the next.
///
/// **Sending.** A datagram that [`send_to`](Self::send_to) cannot send is a
/// loss, which SCTP recovers from by retransmission; the transport ending is
/// reported by `recv_from`.
///
/// **Size.** A datagram is one SCTP packet of at most `Config::mtu` bytes;
/// the receive buffer holds 65,536. A transport that wraps each packet in a
/// record needs `Config::mtu` lowered by its per-record overhead, so the
/// record still fits the path (for DTLS 1.2 with AES-GCM, 13 bytes of header
/// and 24 of explicit nonce and tag: 37 bytes over UDP's).
///
/// The `try_` methods are fast paths that the endpoint takes first, to read
/// a batch of datagrams per wake-up and send without awaiting; their default
/// says "nothing now" (`WouldBlock`), so a transport that only implements the
/// waiting methods works, one datagram per wake-up.
pub trait DatagramTransport: Send + Sync + 'static {
    /// Waits for the next datagram, copies it into `buf` and returns its length
    /// (at most `buf.len()`; more is taken as `buf.len()`) and its sender.
    /// Cancel safe; an error ends the endpoint.
    fn recv_from(
        &self,
        buf: &mut [u8],
    ) -> impl Future<Output = io::Result<(usize, SocketAddr)>> + Send;

    /// A datagram already received, without waiting; `WouldBlock` if none.
    /// Errors here are not fatal: the endpoint then waits in `recv_from`.
    fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let _ = buf;
        Err(io::ErrorKind::WouldBlock.into())
    }

    /// Sends `datagram` to `dest`, waiting for room if need be.
    fn send_to(
        &self,
        datagram: &[u8],
        dest: SocketAddr,
    ) -> impl Future<Output = io::Result<()>> + Send;

    /// Sends `datagram` to `dest` if that needs no waiting; `WouldBlock`
    /// otherwise, and the endpoint then calls `send_to`.
    fn try_send_to(&self, datagram: &[u8], dest: SocketAddr) -> io::Result<()> {
        let _ = (datagram, dest);
        Err(io::ErrorKind::WouldBlock.into())
    }

    /// The address this end is known by ([`Endpoint::local_addr`](crate::Endpoint::local_addr)).
    fn local_addr(&self) -> io::Result<SocketAddr>;
}

/// How the driver treats an error from `recv_from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RecvErrors {
    /// UDP: a late ICMP report on the socket; SCTP recovers from the loss
    /// by itself, so the endpoint reads on.
    Transient,
    /// A user's transport: it has ended.
    Fatal,
}

/// SCTP over UDP (RFC 6951): the socket [`Endpoint::bind`](crate::Endpoint::bind)
/// opens. Shared with the endpoint, which sizes its receive buffer.
pub(crate) struct Udp(pub std::sync::Arc<UdpSocket>);

impl DatagramTransport for Udp {
    async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.0.recv_from(buf).await
    }

    fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.0.try_recv_from(buf)
    }

    async fn send_to(&self, datagram: &[u8], dest: SocketAddr) -> io::Result<()> {
        self.0.send_to(datagram, dest).await.map(drop)
    }

    fn try_send_to(&self, datagram: &[u8], dest: SocketAddr) -> io::Result<()> {
        self.0.try_send_to(datagram, dest).map(drop)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }
}

/// SCTP over UDP for a multi-homed endpoint: one socket per local address,
/// all on the same port. It receives on every socket and sends each
/// datagram from the socket the destination last wrote to, or else the one
/// whose address the kernel's route to the destination names as the source
/// ([`SourceRoutes`](crate::source_route::SourceRoutes)).
pub(crate) struct MultiUdp {
    sockets: Vec<std::sync::Arc<UdpSocket>>,
    routes: crate::source_route::SourceRoutes,
    /// The socket `recv_from` polls first, turned on each wake-up so that a
    /// busy socket does not starve the others.
    next: std::sync::atomic::AtomicUsize,
}

impl MultiUdp {
    /// Over `sockets`, which are bound to distinct addresses (at least one).
    pub fn new(sockets: Vec<std::sync::Arc<UdpSocket>>) -> io::Result<Self> {
        let locals = sockets
            .iter()
            .map(|s| s.local_addr().map(|a| a.ip()))
            .collect::<io::Result<Vec<_>>>()?;
        Ok(Self {
            sockets,
            routes: crate::source_route::SourceRoutes::new(locals),
            next: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    fn first(&self) -> usize {
        use std::sync::atomic::Ordering::Relaxed;
        self.next.fetch_add(1, Relaxed) % self.sockets.len()
    }

    fn arrived(&self, from: SocketAddr, index: usize) {
        self.routes
            .note_arrival(from, index, std::time::Instant::now());
    }

    fn for_dest(&self, dest: SocketAddr) -> &UdpSocket {
        let i = self.routes.pick(dest, std::time::Instant::now());
        &self.sockets[i.min(self.sockets.len() - 1)]
    }
}

impl DatagramTransport for MultiUdp {
    async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let first = self.first();
        let n = self.sockets.len();
        // Cancel safe: poll_recv_from takes a datagram only when it returns
        // Ready, and then this future completes with it.
        std::future::poll_fn(|cx| {
            for k in 0..n {
                let socket = &self.sockets[(first + k) % n];
                let mut rb = tokio::io::ReadBuf::new(buf);
                if let std::task::Poll::Ready(r) = socket.poll_recv_from(cx, &mut rb) {
                    let r = r.map(|from| (rb.filled().len(), from));
                    if let Ok((_, from)) = r {
                        self.arrived(from, (first + k) % n);
                    }
                    return std::task::Poll::Ready(r);
                }
            }
            std::task::Poll::Pending
        })
        .await
    }

    fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let first = self.first();
        let n = self.sockets.len();
        let mut last = Err(io::ErrorKind::WouldBlock.into());
        for k in 0..n {
            match self.sockets[(first + k) % n].try_recv_from(buf) {
                Ok(got) => {
                    self.arrived(got.1, (first + k) % n);
                    return Ok(got);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // A late ICMP error on one socket: try the others first.
                Err(e) => last = Err(e),
            }
        }
        last
    }

    async fn send_to(&self, datagram: &[u8], dest: SocketAddr) -> io::Result<()> {
        self.for_dest(dest).send_to(datagram, dest).await.map(drop)
    }

    fn try_send_to(&self, datagram: &[u8], dest: SocketAddr) -> io::Result<()> {
        self.for_dest(dest).try_send_to(datagram, dest).map(drop)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.sockets[0].local_addr()
    }
}
