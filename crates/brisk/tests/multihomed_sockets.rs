//! A multi-homed endpoint's sockets on loopback: one UDP socket per local
//! address on one port, receiving on each, answering from the address the
//! kernel's route picks. (Two real links, where the route decides between
//! two subnets, are in `netns.rs`.)

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use brisk::{Endpoint, EndpointConfig, Error, SendOptions};

#[path = "attack_kit/mod.rs"]
mod attack_kit;
use attack_kit::{fast, init_chunk, packet};
#[path = "common/endpoints.rs"]
mod endpoints;
use endpoints::{client_endpoint, within};

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

async fn two_homed(accept: bool) -> Endpoint {
    Endpoint::bind_multihomed(
        &[addr("127.0.0.1:0"), addr("127.0.0.2:0")],
        EndpointConfig {
            accept,
            accept_config: fast(),
            ..EndpointConfig::default()
        },
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn one_socket_per_address_on_one_port() {
    let ep = two_homed(true).await;
    let addrs = ep.local_addrs();
    assert_eq!(addrs.len(), 2);
    assert_eq!(addrs[0].ip(), "127.0.0.1".parse::<IpAddr>().unwrap());
    assert_eq!(addrs[1].ip(), "127.0.0.2".parse::<IpAddr>().unwrap());
    assert_ne!(addrs[0].port(), 0);
    assert_eq!(addrs[0].port(), addrs[1].port());
    assert_eq!(ep.local_addr(), addrs[0]);
    // Both ports are really held.
    for a in addrs {
        let e = std::net::UdpSocket::bind(a).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AddrInUse, "{a}");
    }
}

#[tokio::test]
async fn a_single_address_binds_as_before() {
    let ep = Endpoint::bind_multihomed(&[addr("127.0.0.1:0")], EndpointConfig::default())
        .await
        .unwrap();
    assert_eq!(ep.local_addrs(), vec![ep.local_addr()]);
}

#[tokio::test]
async fn lists_that_cannot_be_one_endpoint_are_refused() {
    let cases: &[(&[&str], &str)] = &[
        (&[], "no address"),
        (&["0.0.0.0:0", "127.0.0.1:0"], "unspecified"),
        (&["127.0.0.1:0", "127.0.0.1:0"], "twice"),
        (&["127.0.0.1:4000", "127.0.0.2:4001"], "same port"),
        (&["127.0.0.1:0", "127.0.0.2:4001"], "first address"),
    ];
    for (list, why) in cases {
        let addrs: Vec<SocketAddr> = list.iter().map(|s| addr(s)).collect();
        match Endpoint::bind_multihomed(&addrs, EndpointConfig::default()).await {
            Err(Error::Io(e)) => {
                assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{list:?}");
                assert!(e.to_string().contains(why), "{list:?}: {e}");
            }
            other => panic!("{list:?}: {other:?}"),
        }
    }
}

/// A peer that reaches the endpoint at either address gets an association.
#[tokio::test]
async fn associations_come_up_through_either_address() {
    let server = two_homed(true).await;
    for dest in server.local_addrs() {
        let client = client_endpoint().await;
        let a = within(client.connect(dest, fast())).await.unwrap();
        let b = within(server.accept()).await.unwrap();
        a.send(1, &b"ping"[..], SendOptions::default())
            .await
            .unwrap();
        assert_eq!(&within(b.recv()).await.unwrap().payload[..], b"ping");
        b.send(1, &b"pong"[..], SendOptions::default())
            .await
            .unwrap();
        assert_eq!(&within(a.recv()).await.unwrap().payload[..], b"pong");
        within(a.close()).await.unwrap();
    }
    assert_eq!(server.stalled_wakeups(), 0);
}

/// An INIT sent to the second address is answered from that address,
/// though the route to the sender names the first (on loopback every route
/// into 127/8 leaves from 127.0.0.1).
#[tokio::test]
async fn the_answer_leaves_from_the_address_the_peer_wrote_to() {
    let server = two_homed(true).await;
    let port = server.local_addr().port();
    let raw = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let init = packet(5000, 5000, 0, &[init_chunk(0x1234_5678, 1, 65_536, 4, 4)]);
    raw.send_to(&init, SocketAddr::new("127.0.0.2".parse().unwrap(), port))
        .await
        .unwrap();
    let mut buf = [0u8; 2048];
    let (n, from) = tokio::time::timeout(Duration::from_secs(5), raw.recv_from(&mut buf))
        .await
        .expect("an INIT ACK")
        .unwrap();
    assert_eq!(from, SocketAddr::new("127.0.0.2".parse().unwrap(), port));
    // The INIT ACK (chunk type 2) carries our tag.
    assert!(n > 16);
    assert_eq!(buf[12], 2, "chunk type");
    assert_eq!(&buf[4..8], &0x1234_5678u32.to_be_bytes());
}
