//! The endpoint handle: one UDP socket, one SCTP port, many associations.

use std::net::SocketAddr;
use std::sync::Arc;

use brisk_proto::{Config, EndpointConfig, EndpointStats};
use tokio::net::UdpSocket;

use crate::association::Association;
use crate::error::Error;
use crate::shared::{Handle, Shared, Slot};

/// RFC 6951: the registered UDP port for SCTP encapsulation.
pub const DEFAULT_UDP_PORT: u16 = 9899;

/// IPv4 (20) and UDP (8) headers: subtract from the path MTU to get the
/// largest SCTP packet (`Config::mtu`) over UDP (RFC 6951 5.6).
pub const UDP_IPV4_OVERHEAD: usize = 28;
/// IPv6 (40) and UDP (8) headers.
pub const UDP_IPV6_OVERHEAD: usize = 48;

/// An SCTP endpoint over UDP. Cloning it gives another handle to the same endpoint.
#[derive(Clone)]
pub struct Endpoint {
    pub(crate) inner: Arc<Handle>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("local_addr", &self.inner.shared.local_addr)
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
        cfg.accept_config.validate()?;
        let socket = UdpSocket::bind(addr).await?;
        crate::socket_buffer::raise(&socket, cfg.accept_config.receive_buffer as usize);
        let local_addr = socket.local_addr()?;
        let proto = brisk_proto::Endpoint::new(cfg, seed);
        let shared = Arc::new(Shared::new(proto, socket, local_addr));
        tokio::spawn(crate::driver::run(shared.clone()));
        Ok(Endpoint {
            inner: Arc::new(Handle { shared }),
        })
    }

    /// The local UDP address.
    pub fn local_addr(&self) -> SocketAddr {
        self.inner.shared.local_addr
    }

    /// The UDP socket's receive buffer as the kernel accounts it (about
    /// twice the datagram bytes it holds): sized at bind and at each connect
    /// for the window advertised, within what the kernel allows (`rmem_max`, or
    /// any size with CAP_NET_ADMIN).
    pub fn socket_receive_buffer(&self) -> usize {
        crate::socket_buffer::current(&self.inner.shared.socket)
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

    /// Associates with the peer at the UDP address `remote`, whose SCTP port is
    /// the same as ours. Resolves once the handshake completes.
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
        let shared = &self.inner.shared;
        // A window larger than the accepted associations' needs room too.
        crate::socket_buffer::raise(&shared.socket, cfg.receive_buffer as usize);
        let (id, notify) = {
            let mut st = shared.lock();
            if let Some(why) = &st.stopped {
                return Err(Error::Closed(why.clone()));
            }
            let now = shared.now();
            let id = st.proto.connect_to_port(now, remote, port, cfg)?;
            let slot = Slot::new();
            let notify = slot.notify.clone();
            st.slots.insert(id, slot);
            (id, notify)
        };
        shared.wake.notify_one();
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
                    return Err(Error::EndpointClosed);
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
