//! Multi-homing through the async API: two endpoints with two addresses
//! each, over an in-memory transport with two links that a test can cut.
//! The application sees its destinations (`Association::paths`), their
//! events (`path_event`), fails over with SCTP-PF, and sets the primary.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Duration;

use brisk::{
    Association, Config, DatagramTransport, Endpoint, EndpointConfig, FailoverCause, PathEvent,
    PathState, SendOptions,
};
use bytes::Bytes;
use tokio::sync::{Mutex, mpsc};

const A: [&str; 2] = ["10.0.0.1:9899", "10.1.0.1:9899"];
const B: [&str; 2] = ["10.0.0.2:9899", "10.1.0.2:9899"];

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

/// The link of an address: 10.0.x.x is link 0, 10.1.x.x link 1.
fn link_of(a: SocketAddr) -> Option<usize> {
    match a.ip() {
        IpAddr::V4(v4) if v4.octets()[0] == 10 && v4.octets()[1] < 2 => {
            Some(usize::from(v4.octets()[1]))
        }
        _ => None,
    }
}

/// One end of the two-link network: it sends from its address on the link
/// of the destination, as IP routing would, and loses what a cut link takes.
struct End {
    own: [SocketAddr; 2],
    tx: mpsc::UnboundedSender<(Vec<u8>, SocketAddr)>,
    rx: Mutex<mpsc::UnboundedReceiver<(Vec<u8>, SocketAddr)>>,
    cut: Arc<[AtomicBool; 2]>,
}

impl End {
    fn carry(&self, datagram: &[u8], dest: SocketAddr) {
        let Some(l) = link_of(dest) else { return };
        if !self.cut[l].load(Relaxed) {
            let _ = self.tx.send((datagram.to_vec(), self.own[l]));
        }
    }
}

impl DatagramTransport for End {
    async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let (d, from) = self
            .rx
            .lock()
            .await
            .recv()
            .await
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        let n = d.len().min(buf.len());
        buf[..n].copy_from_slice(&d[..n]);
        Ok((n, from))
    }

    async fn send_to(&self, datagram: &[u8], dest: SocketAddr) -> io::Result<()> {
        self.carry(datagram, dest);
        Ok(())
    }

    fn try_send_to(&self, datagram: &[u8], dest: SocketAddr) -> io::Result<()> {
        self.carry(datagram, dest);
        Ok(())
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.own[0])
    }
}

fn config() -> Config {
    Config {
        rto_initial: Duration::from_millis(50),
        rto_min: Duration::from_millis(50),
        rto_max: Duration::from_millis(400),
        sack_delay: Duration::from_millis(20),
        potentially_failed: true,
        pf_max_retrans: 0,
        ..Config::rfc9260()
    }
}

struct Net {
    a: Endpoint,
    b: Endpoint,
    cut: Arc<[AtomicBool; 2]>,
}

fn net() -> Net {
    let (to_a, from_b) = mpsc::unbounded_channel();
    let (to_b, from_a) = mpsc::unbounded_channel();
    let cut: Arc<[AtomicBool; 2]> = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
    let end = |own: [&str; 2], tx, rx| End {
        own: [addr(own[0]), addr(own[1])],
        tx,
        rx: Mutex::new(rx),
        cut: cut.clone(),
    };
    let ips = |own: [&str; 2]| own.iter().map(|a| addr(a).ip()).collect::<Vec<_>>();
    let a = Endpoint::with_transport_and_seed(
        end(A, to_b, from_b),
        EndpointConfig {
            accept: false,
            accept_config: config(),
            addresses: ips(A),
            ..EndpointConfig::default()
        },
        [1; 32],
    )
    .unwrap();
    let b = Endpoint::with_transport_and_seed(
        end(B, to_a, from_a),
        EndpointConfig {
            accept_config: config(),
            addresses: ips(B),
            ..EndpointConfig::default()
        },
        [2; 32],
    )
    .unwrap();
    Net { a, b, cut }
}

async fn within<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), f)
        .await
        .expect("timed out")
}

async fn associate(n: &Net) -> (Association, Association) {
    let (a, b) =
        within(async { tokio::join!(n.a.connect(addr(B[0]), config()), n.b.accept()) }).await;
    (a.unwrap(), b.unwrap())
}

/// Waits for the path event `want` picks, skipping others.
async fn wait_for(a: &Association, mut want: impl FnMut(&PathEvent) -> bool) -> PathEvent {
    within(async {
        loop {
            let e = a.path_event().await.unwrap();
            if want(&e) {
                return e;
            }
        }
    })
    .await
}

#[tokio::test]
async fn the_application_sees_both_destinations_and_a_failover_with_its_cause() {
    let n = net();
    let (a, b) = associate(&n).await;
    // The second destination is confirmed by a heartbeat.
    let confirmed = wait_for(&a, |e| {
        matches!(
            e,
            PathEvent::State {
                confirmed: true,
                ..
            }
        )
    })
    .await;
    assert!(
        matches!(confirmed, PathEvent::State { remote, state: PathState::Active, .. } if remote == addr(B[1]))
    );
    let paths = a.paths().unwrap();
    assert_eq!(
        paths.iter().map(|p| p.remote).collect::<Vec<_>>(),
        vec![addr(B[0]), addr(B[1])]
    );
    assert!(paths[0].primary && paths[0].data && paths[1].confirmed);

    // The primary link dies: the first timeout moves data (PF, PFMR 0).
    n.cut[0].store(true, Relaxed);
    a.send(
        0,
        Bytes::from_static(b"through the outage"),
        SendOptions::default(),
    )
    .await
    .unwrap();
    let moved = wait_for(&a, |e| matches!(e, PathEvent::DataPath { .. })).await;
    assert!(
        matches!(moved, PathEvent::DataPath { from, to, cause: FailoverCause::PotentiallyFailed, .. }
            if from == addr(B[0]) && to == addr(B[1])),
        "{moved:?}"
    );
    let got = within(b.recv()).await.unwrap();
    assert_eq!(&got.payload[..], b"through the outage");
    let stats = a.stats().unwrap();
    assert_eq!(stats.data_path_changes(FailoverCause::PotentiallyFailed), 1);
    assert_eq!(stats.paths_potentially_failed, 1);

    // Back up: a heartbeat finds the primary, and data switches back.
    n.cut[0].store(false, Relaxed);
    let back = wait_for(&a, |e| matches!(e, PathEvent::DataPath { .. })).await;
    assert!(
        matches!(back, PathEvent::DataPath { to, cause: FailoverCause::PrimaryRecovered, .. } if to == addr(B[0])),
        "{back:?}"
    );
    assert_eq!(a.path_events_dropped(), 0);
}

#[tokio::test]
async fn the_application_sets_the_primary() {
    let n = net();
    let (a, b) = associate(&n).await;
    wait_for(&a, |e| {
        matches!(
            e,
            PathEvent::State {
                confirmed: true,
                ..
            }
        )
    })
    .await;
    a.set_primary(addr(B[1])).unwrap();
    let moved = wait_for(&a, |e| matches!(e, PathEvent::DataPath { .. })).await;
    assert!(matches!(
        moved,
        PathEvent::DataPath {
            cause: FailoverCause::PrimarySet,
            ..
        }
    ));
    // With the first link cut, data still flows: it goes to the new primary.
    n.cut[0].store(true, Relaxed);
    a.send(0, Bytes::from_static(b"second"), SendOptions::default())
        .await
        .unwrap();
    assert_eq!(&within(b.recv()).await.unwrap().payload[..], b"second");
    assert_eq!(
        a.stats().unwrap().t3_expirations,
        0,
        "no timeout was needed"
    );
    assert!(matches!(
        a.set_primary(addr("10.9.9.9:9899")),
        Err(brisk::Error::Path(_))
    ));
}

#[tokio::test]
async fn connect_multihomed_sets_up_over_the_second_address_when_the_first_is_dead() {
    let n = net();
    n.cut[0].store(true, Relaxed);
    let both = [addr(B[0]), addr(B[1])];
    let (a, b) =
        within(async { tokio::join!(n.a.connect_multihomed(&both, config()), n.b.accept()) }).await;
    let (a, b) = (a.unwrap(), b.unwrap());
    let paths = a.paths().unwrap();
    assert_eq!(
        paths
            .iter()
            .map(|p| (p.remote, p.confirmed))
            .collect::<Vec<_>>(),
        vec![(addr(B[0]), true), (addr(B[1]), true)]
    );
    a.send(
        0,
        Bytes::from_static(b"over the second"),
        SendOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        &within(b.recv()).await.unwrap().payload[..],
        b"over the second"
    );
    assert!(matches!(
        n.a.connect_multihomed(&[], config()).await,
        Err(brisk::Error::Connect(_))
    ));
}
