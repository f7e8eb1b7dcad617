//! The endpoint handle: one UDP socket (or another datagram transport), one
//! SCTP port, many associations.

use std::net::SocketAddr;
use std::sync::Arc;

use brisk_proto::{Config, EndpointConfig, EndpointStats};
use tokio::net::UdpSocket;

use crate::association::Association;
use crate::error::Error;
use crate::shared::{Handle, Shared, Slot};
use crate::transport::{DatagramTransport, MultiUdp, RecvErrors, Udp};

/// RFC 6951: the registered UDP port for SCTP encapsulation.
pub const DEFAULT_UDP_PORT: u16 = 9899;

/// IPv4 (20) and UDP (8) headers: subtract from the path MTU to get the
/// largest SCTP packet (`Config::mtu`) over UDP (RFC 6951 5.6).
pub const UDP_IPV4_OVERHEAD: usize = 28;
/// IPv6 (40) and UDP (8) headers.
pub const UDP_IPV6_OVERHEAD: usize = 48;

/// An SCTP endpoint over UDP, or over a [`DatagramTransport`] of the
/// application's. Cloning it gives another handle to the same endpoint.
#[derive(Clone)]
pub struct Endpoint {
    pub(crate) inner: Arc<Handle>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("local_addrs", &self.inner.shared.local_addrs)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// Binds a UDP socket to `addr` and starts the endpoint on the current tokio
    /// runtime, with randomness from the operating system.
    pub async fn bind(addr: SocketAddr, cfg: EndpointConfig) -> Result<Self, Error> {
        Self::bind_with_seed(addr, cfg, rand::random()).await
    }

    /// As [`bind`](Self::bind), with the protocol's randomness (tags, initial
    /// TSNs, cookie secret) from `seed`.
    pub async fn bind_with_seed(
        addr: SocketAddr,
        cfg: EndpointConfig,
        seed: [u8; 32],
    ) -> Result<Self, Error> {
        Self::bind_multihomed_with_seed(&[addr], cfg, seed).await
    }

    /// A multi-homed endpoint (RFC 9260 6.4): binds one UDP socket to each of
    /// `addrs`, all on one UDP port, and starts the endpoint on the current
    /// tokio runtime, with randomness from the operating system.
    ///
    /// The port is the first address's; where it is 0, the port the kernel
    /// gives the first socket is used for all. Every socket receives. A
    /// datagram to a peer address leaves from the address that peer address
    /// last wrote to (within 30 s), as a kernel stack answers; otherwise from
    /// the socket bound to the address the kernel's routing table picks as
    /// the source for its destination (re-read every second), or from the
    /// first socket of the destination's address family when the route names
    /// none of ours. With two addresses or more,
    /// `cfg.addresses` becomes their IP addresses, which INIT and INIT ACK
    /// list to the peer; with one, this is [`bind`](Self::bind).
    ///
    /// Fails with [`Error::Io`] (`InvalidInput`) for an empty list, an
    /// unspecified address (`0.0.0.0`, `::`) among several, an IP address
    /// given twice, or two different non-zero ports.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), brisk::Error> {
    /// use brisk::{Endpoint, EndpointConfig};
    ///
    /// let ep = Endpoint::bind_multihomed(
    ///     &["10.91.1.1:9899".parse().unwrap(), "10.91.2.1:9899".parse().unwrap()],
    ///     EndpointConfig::default(),
    /// )
    /// .await?;
    /// assert_eq!(ep.local_addrs().len(), 2);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn bind_multihomed(addrs: &[SocketAddr], cfg: EndpointConfig) -> Result<Self, Error> {
        Self::bind_multihomed_with_seed(addrs, cfg, rand::random()).await
    }

    /// As [`bind_multihomed`](Self::bind_multihomed), with the protocol's
    /// randomness from `seed`.
    pub async fn bind_multihomed_with_seed(
        addrs: &[SocketAddr],
        mut cfg: EndpointConfig,
        seed: [u8; 32],
    ) -> Result<Self, Error> {
        check_bind_list(addrs)?;
        cfg.accept_config.validate()?;
        let first = Arc::new(UdpSocket::bind(addrs[0]).await?);
        let port = first.local_addr()?.port();
        let mut sockets = vec![first];
        for addr in &addrs[1..] {
            sockets.push(Arc::new(
                UdpSocket::bind(SocketAddr::new(addr.ip(), port)).await?,
            ));
        }
        let mut local_addrs = Vec::with_capacity(sockets.len());
        for socket in &sockets {
            crate::socket_buffer::raise(&**socket, cfg.accept_config.receive_buffer as usize);
            local_addrs.push(socket.local_addr()?);
        }
        if local_addrs.len() >= 2 {
            // RFC 9260 5.1.2: the peer learns every address from INIT / INIT ACK.
            cfg.addresses = local_addrs.iter().map(SocketAddr::ip).collect();
        }
        // UDP: a peer's port may change under an association, and the
        // protocol endpoint follows it (RFC 6951 5.4, on by default).
        let proto = brisk_proto::Endpoint::new(cfg, seed);
        let shared = Arc::new(Shared::new(proto, sockets.clone(), local_addrs));
        if sockets.len() == 1 {
            tokio::spawn(crate::driver::run(
                shared.clone(),
                Udp(sockets.remove(0)),
                RecvErrors::Transient,
            ));
        } else {
            tokio::spawn(crate::driver::run(
                shared.clone(),
                MultiUdp::new(sockets)?,
                RecvErrors::Transient,
            ));
        }
        Ok(Self::from_shared(shared))
    }

    /// Starts an endpoint over the application's datagram transport (a DTLS
    /// connection, say, for SCTP over DTLS as in RFC 8261) on the current
    /// tokio runtime, with randomness from the operating system.
    ///
    /// A peer is the address `transport` names it by: [`connect`](Self::connect)
    /// to that address. Nothing of UDP's applies: a packet with an
    /// association's tag from another address does not move the association
    /// there (RFC 6951 5.4 is off), and no socket buffer is sized. Lower `Config::mtu` (and `EndpointConfig::accept_config.mtu`)
    /// by the transport's per-datagram overhead. When `transport` fails or
    /// ends, the endpoint stops and its calls fail with
    /// [`Error::TransportFailed`].
    ///
    /// Panics outside a tokio runtime (the endpoint's driver is a task).
    ///
    /// ```
    /// # async fn demo(transport: impl brisk::DatagramTransport) -> Result<(), brisk::Error> {
    /// use brisk::{Config, Endpoint, EndpointConfig};
    ///
    /// // DTLS 1.2 with AES-GCM adds 37 bytes to each packet.
    /// let cfg = Config { mtu: 1200 - 37, ..Config::rfc9260() };
    /// let endpoint = Endpoint::with_transport(
    ///     transport,
    ///     EndpointConfig { accept_config: cfg.clone(), ..EndpointConfig::default() },
    /// )?;
    /// // The peer: whatever address the transport names it by.
    /// let peer = "192.0.2.1:5000".parse().unwrap();
    /// let assoc = endpoint.connect(peer, cfg).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_transport(
        transport: impl DatagramTransport,
        cfg: EndpointConfig,
    ) -> Result<Self, Error> {
        Self::with_transport_and_seed(transport, cfg, rand::random())
    }

    /// As [`with_transport`](Self::with_transport), with the protocol's
    /// randomness from `seed`.
    pub fn with_transport_and_seed(
        transport: impl DatagramTransport,
        cfg: EndpointConfig,
        seed: [u8; 32],
    ) -> Result<Self, Error> {
        cfg.accept_config.validate()?;
        let local_addr = transport.local_addr()?;
        let mut proto = brisk_proto::Endpoint::new(cfg, seed);
        // A peer's address is the transport's key for one connection.
        proto.set_peer_port_learning(false);
        let shared = Arc::new(Shared::new(proto, Vec::new(), vec![local_addr]));
        tokio::spawn(crate::driver::run(
            shared.clone(),
            transport,
            RecvErrors::Fatal,
        ));
        Ok(Self::from_shared(shared))
    }

    fn from_shared(shared: Arc<Shared>) -> Self {
        Endpoint {
            inner: Arc::new(Handle { shared }),
        }
    }

    /// The local address: the (first) UDP socket's, or what the transport
    /// reports.
    pub fn local_addr(&self) -> SocketAddr {
        self.inner.shared.local_addrs[0]
    }

    /// Every local address, one per UDP socket, in the order bound (one over
    /// the application's transport).
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.inner.shared.local_addrs.clone()
    }

    /// The UDP socket's receive buffer as the kernel accounts it (about
    /// twice the datagram bytes it holds): sized at bind and at each connect
    /// for the window advertised, within what the kernel allows (`rmem_max`, or
    /// any size with CAP_NET_ADMIN). 0 over a transport of the application's.
    pub fn socket_receive_buffer(&self) -> usize {
        self.inner
            .shared
            .udp
            .first()
            .map_or(0, |s| crate::socket_buffer::current(&**s))
    }

    /// Times the driver woke for a protocol deadline already past that
    /// handling it did not move (it then waits instead of spinning). A healthy
    /// endpoint keeps this at 0.
    pub fn stalled_wakeups(&self) -> u64 {
        self.inner.shared.lock().stalled_wakeups
    }

    /// Counters of the endpoint: garbage datagrams, bad checksums, out-of-the-blue
    /// packets, handshakes answered.
    pub fn stats(&self) -> EndpointStats {
        self.inner.shared.lock().proto.stats().clone()
    }

    /// Associates with the peer at the UDP address (or transport address)
    /// `remote`, whose SCTP port is the same as ours. Resolves once the
    /// handshake completes.
    pub async fn connect(&self, remote: SocketAddr, cfg: Config) -> Result<Association, Error> {
        let port = self.inner.shared.lock().proto.config().port;
        self.connect_to_port(remote, port, cfg).await
    }

    /// Associates with SCTP port `port` at the UDP address `remote`.
    pub async fn connect_to_port(
        &self,
        remote: SocketAddr,
        port: u16,
        cfg: Config,
    ) -> Result<Association, Error> {
        self.connect_to_addresses(&[remote], port, cfg).await
    }

    /// Associates with a multi-homed peer known by several UDP addresses
    /// (the sockets API's `connectx`, RFC 9260 5.1): the first is the
    /// primary, every one a confirmed destination, and an INIT that goes
    /// unanswered is sent again to the next. The SCTP port is this
    /// endpoint's own, as with [`connect`](Self::connect).
    pub async fn connect_multihomed(
        &self,
        remotes: &[SocketAddr],
        cfg: Config,
    ) -> Result<Association, Error> {
        let port = self.inner.shared.lock().proto.config().port;
        self.connect_to_addresses(remotes, port, cfg).await
    }

    async fn connect_to_addresses(
        &self,
        remotes: &[SocketAddr],
        port: u16,
        cfg: Config,
    ) -> Result<Association, Error> {
        let shared = &self.inner.shared;
        // A window larger than the accepted associations' needs room too.
        for socket in &shared.udp {
            crate::socket_buffer::raise(&**socket, cfg.receive_buffer as usize);
        }
        let (id, notify) = {
            let mut st = shared.lock();
            if let Some(why) = &st.stopped {
                return Err(match st.transport_failed {
                    Some(_) => st.stop_error(),
                    None => Error::Closed(why.clone()),
                });
            }
            let now = shared.now();
            let id = st.proto.connect_to_addresses(now, remotes, port, cfg)?;
            let slot = Slot::new();
            let notify = slot.notify.clone();
            st.slots.insert(id, slot);
            (id, notify)
        };
        shared.wake.notify_one();
        let remote = remotes
            .first()
            .copied()
            .ok_or(brisk_proto::ConnectError::NoAddress)?;
        let assoc = Association::new(self.inner.clone(), id, notify, remote);
        assoc.wait_connected().await?;
        Ok(assoc)
    }

    /// The next association a peer started.
    pub async fn accept(&self) -> Result<Association, Error> {
        let shared = &self.inner.shared;
        loop {
            let notified = shared.accept.notified();
            {
                let mut st = shared.lock();
                if let Some(id) = st.accepted.pop_front() {
                    let notify = st.slots.get(&id).map(|s| s.notify.clone());
                    let remote = st.proto.association(id).map(|a| a.remote());
                    if let (Some(notify), Some(remote)) = (notify, remote) {
                        return Ok(Association::new(self.inner.clone(), id, notify, remote));
                    }
                    continue;
                }
                if st.stopped.is_some() {
                    return Err(st.stop_error());
                }
            }
            notified.await;
        }
    }

    /// Stops the endpoint: the driver ends and every association with it
    /// (without SHUTDOWN: close associations first for a graceful end).
    pub fn close(&self) {
        self.inner.shared.lock().stopped = Some("endpoint closed".into());
        self.inner.shared.wake.notify_one();
        self.inner.shared.accept.notify_waiters();
    }
}

/// Refuses a bind list that cannot be one endpoint's addresses.
fn check_bind_list(addrs: &[SocketAddr]) -> Result<(), Error> {
    let invalid =
        |why: String| Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, why).into());
    let Some(first) = addrs.first() else {
        return invalid("no address to bind".into());
    };
    if addrs.len() == 1 {
        return Ok(());
    }
    for (i, a) in addrs.iter().enumerate() {
        if a.ip().is_unspecified() {
            return invalid(format!(
                "{a}: a multi-homed endpoint binds specific addresses, not the unspecified one"
            ));
        }
        if addrs[..i].iter().any(|b| b.ip() == a.ip()) {
            return invalid(format!("{} is given twice", a.ip()));
        }
        if a.port() != 0 && first.port() != 0 && a.port() != first.port() {
            return invalid(format!(
                "{a}: every address of an endpoint has the same port ({})",
                first.port()
            ));
        }
        if a.port() != 0 && first.port() == 0 {
            return invalid(format!(
                "{a}: give the port on the first address (the others take it)"
            ));
        }
    }
    Ok(())
}
