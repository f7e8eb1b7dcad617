//! SCTP over a datagram transport of your own, such as a DTLS connection
//! (RFC 8261, as WebRTC data channels run), with data channels on top.
//!
//! `toy_dtls` below stands in for a DTLS library: a connected pair whose
//! `send` and `recv` move whole records over an in-memory pipe, each record a
//! header and the bytes XORed. It is not cryptography. What a real
//! application writes is the rest: `DtlsTransport` and `main`.
//!
//! ```text
//! cargo run -p brisk --example custom_transport
//! ```

use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

use brisk::datachannel::{ChannelOptions, DataChannels, Message, Role};
use brisk::{Config, DatagramTransport, Endpoint, EndpointConfig};

/// The one peer of a DTLS connection, as Brisk names it: any fixed address.
const PEER: SocketAddr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(192, 0, 2, 1), 5000));

/// A DTLS connection carries SCTP packets (RFC 8261).
struct DtlsTransport(toy_dtls::Conn);

impl DatagramTransport for DtlsTransport {
    // Must be cancel safe (the DTLS library's `recv` is); an error ends the
    // endpoint, so a record that fails to authenticate is dropped inside.
    async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let n = self.0.recv(buf).await?;
        Ok((n, PEER))
    }

    async fn send_to(&self, packet: &[u8], _to: SocketAddr) -> io::Result<()> {
        self.0.send(packet).await.map(drop)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(PEER)
    }
}

/// SCTP packets must fit in a record that fits the path: lower the MTU by
/// the record overhead (37 bytes for DTLS 1.2 with AES-GCM).
fn config() -> Config {
    Config {
        mtu: 1200 - toy_dtls::OVERHEAD,
        stream_reconfig: true, // to close channels (RFC 8831 6.7)
        ..Config::rfc9260()
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (client_conn, server_conn) = toy_dtls::pair(); // the DTLS handshake, done
    let endpoint_config = |accept| EndpointConfig {
        accept,
        accept_config: config(),
        ..EndpointConfig::default()
    };
    let client = Endpoint::with_transport(DtlsTransport(client_conn), endpoint_config(false))?;
    let server = Endpoint::with_transport(DtlsTransport(server_conn), endpoint_config(true))?;

    let (assoc, accepted) = tokio::join!(client.connect(PEER, config()), server.accept());
    // The DTLS client opens even stream ids, the server odd ones (RFC 8832 6).
    let client_channels = DataChannels::new(assoc?, Role::Client);
    let server_channels = DataChannels::new(accepted?, Role::Server);

    let (chat, incoming) = tokio::join!(
        client_channels.open("chat", ChannelOptions::default()),
        server_channels.accept()
    );
    let (chat, incoming) = (chat?, incoming?);
    chat.send_text("hello over DTLS").await?;
    chat.send_binary(vec![7u8; 10_000]).await?; // fragmented into records
    if let Message::Text(text) = incoming.recv().await? {
        println!("server got {text:?} on channel {:?}", incoming.label());
    }
    if let Message::Binary(bytes) = incoming.recv().await? {
        println!("server got {} bytes", bytes.len());
    }
    chat.close().await?;
    println!(
        "records, both ways: {} sealed, {} opened",
        toy_dtls::sealed(),
        toy_dtls::opened()
    );
    Ok(())
}

/// A stand-in for a DTLS library: a connected pair moving records over an
/// in-memory pipe. NOT cryptography: a header and XOR.
mod toy_dtls {
    use std::io;
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

    use tokio::sync::{Mutex, mpsc};

    const HEADER: [u8; 4] = *b"TOY\x01";
    /// Bytes a record adds to the packet it carries.
    pub const OVERHEAD: usize = HEADER.len();

    static SEALED: AtomicU64 = AtomicU64::new(0);
    static OPENED: AtomicU64 = AtomicU64::new(0);

    pub fn sealed() -> u64 {
        SEALED.load(Relaxed)
    }
    pub fn opened() -> u64 {
        OPENED.load(Relaxed)
    }

    pub struct Conn {
        tx: mpsc::Sender<Vec<u8>>,
        rx: Mutex<mpsc::Receiver<Vec<u8>>>,
    }

    pub fn pair() -> (Conn, Conn) {
        let (a_tx, b_rx) = mpsc::channel(1024);
        let (b_tx, a_rx) = mpsc::channel(1024);
        let conn = |tx, rx| Conn {
            tx,
            rx: Mutex::new(rx),
        };
        (conn(a_tx, a_rx), conn(b_tx, b_rx))
    }

    impl Conn {
        /// Sends one record; its plaintext length.
        pub async fn send(&self, data: &[u8]) -> io::Result<usize> {
            let mut record = HEADER.to_vec();
            record.extend(data.iter().map(|b| b ^ 0x5a));
            SEALED.fetch_add(1, Relaxed);
            self.tx
                .send(record)
                .await
                .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))?;
            Ok(data.len())
        }

        /// The next record's plaintext; an error once the peer is gone.
        /// Cancel safe. Records that do not open are dropped.
        pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
            let mut rx = self.rx.lock().await;
            loop {
                let record = rx
                    .recv()
                    .await
                    .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "close_notify"))?;
                let Some(body) = record.strip_prefix(&HEADER) else {
                    continue;
                };
                let n = body.len().min(buf.len());
                for (out, b) in buf.iter_mut().zip(&body[..n]) {
                    *out = b ^ 0x5a;
                }
                OPENED.fetch_add(1, Relaxed);
                return Ok(n);
            }
        }
    }
}
