//! The async API over real UDP sockets on loopback.

use std::time::Duration;

use brisk::{Config, Endpoint, Error, SendOptions};

#[path = "common/endpoints.rs"]
mod endpoints;
use endpoints::{associate, client_endpoint, server_endpoint};

fn fast() -> Config {
    Config {
        rto_initial: Duration::from_millis(50),
        rto_min: Duration::from_millis(50),
        rto_max: Duration::from_millis(200),
        ..Config::rfc9260()
    }
}

async fn pair() -> (Endpoint, Endpoint) {
    (server_endpoint(fast()).await, client_endpoint().await)
}

#[tokio::test]
async fn messages_cross_loopback_in_order_and_close_gracefully() {
    let (server, client) = pair().await;
    let (a, b) = associate(&client, &server, fast()).await;
    assert_eq!(b.remote(), client.local_addr());
    for i in 0..100u32 {
        let body = vec![i as u8; (i as usize * 97) % 5000 + 1];
        a.send(
            (i % 4) as u16,
            body,
            SendOptions {
                ppid: i,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    }
    let mut got = Vec::new();
    for _ in 0..100 {
        got.push(
            tokio::time::timeout(Duration::from_secs(10), b.recv())
                .await
                .unwrap()
                .unwrap(),
        );
    }
    for stream in 0..4u16 {
        let ppids: Vec<u32> = got
            .iter()
            .filter(|m| m.stream_id == stream)
            .map(|m| m.ppid)
            .collect();
        let expected: Vec<u32> = (0..100).filter(|i| i % 4 == u32::from(stream)).collect();
        assert_eq!(ppids, expected);
    }
    assert!(
        got.iter()
            .all(|m| m.payload.len() == (m.ppid as usize * 97) % 5000 + 1)
    );
    a.flush().await.unwrap();
    a.close().await.unwrap();
    let end = tokio::time::timeout(Duration::from_secs(5), b.recv())
        .await
        .unwrap();
    assert!(matches!(end, Err(Error::Closed(_))), "{end:?}");
}

#[tokio::test]
async fn a_message_larger_than_the_maximum_is_refused_with_its_size() {
    let (server, client) = pair().await;
    let cfg = Config {
        max_message_size: 1000,
        ..fast()
    };
    let a = client.connect(server.local_addr(), cfg).await.unwrap();
    let err = a
        .send(0, vec![0u8; 1001], SendOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::MessageTooLarge {
                size: 1001,
                max: 1000
            }
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "message of 1001 bytes is larger than the maximum of 1000 bytes"
    );
}

#[tokio::test]
async fn connecting_to_nobody_times_out_after_the_configured_tries() {
    let (_server, client) = pair().await;
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let cfg = Config {
        max_init_retransmits: 2,
        ..fast()
    };
    let err = client
        .connect(silent.local_addr().unwrap(), cfg)
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::HandshakeTimeout { attempts: 3 }),
        "{err}"
    );
    assert_eq!(err.to_string(), "handshake timed out after 3 tries");
}

#[tokio::test]
async fn an_abort_reaches_the_peer_with_its_reason() {
    let (server, client) = pair().await;
    let (a, b) = associate(&client, &server, fast()).await;
    a.abort("going away");
    let err = tokio::time::timeout(Duration::from_secs(5), b.recv())
        .await
        .unwrap()
        .unwrap_err();
    match err {
        Error::PeerAborted { cause } => assert_eq!(cause, "user-initiated abort: going away"),
        other => panic!("expected PeerAborted, got {other}"),
    }
}

#[tokio::test]
async fn garbage_datagrams_are_counted_and_the_association_carries_on() {
    let (server, client) = pair().await;
    let (a, b) = associate(&client, &server, fast()).await;
    let junk = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    for n in [0usize, 3, 12, 100, 1500] {
        junk.send_to(&vec![0xa5; n], server.local_addr()).unwrap();
    }
    a.send(0, &b"still here"[..], SendOptions::default())
        .await
        .unwrap();
    let m = tokio::time::timeout(Duration::from_secs(5), b.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&m.payload[..], b"still here");
    let stats = server.stats();
    assert_eq!(stats.malformed + stats.bad_checksum, 5, "{stats:?}");
}

/// CPU time the calling thread has used (Linux: utime + stime of
/// /proc/thread-self/stat, in USER_HZ = 100 ticks per second).
fn thread_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").expect("/proc/thread-self/stat");
    let rest = stat.rsplit_once(')').expect("stat format").1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

#[tokio::test]
async fn a_send_blocked_on_a_full_buffer_waits_without_spinning() {
    // The peer never reads: its window closes and our send buffer stays full.
    // (A current-thread runtime: the driver and this task share the thread.)
    let server = server_endpoint(Config {
        receive_buffer: 4096,
        ..fast()
    })
    .await;
    let client = client_endpoint().await;
    let cfg = Config {
        send_buffer: 8192,
        max_message_size: 1024,
        ..fast()
    };
    let (a, _b) = associate(&client, &server, cfg).await;
    let send = || a.send(0, vec![0u8; 1000], SendOptions::default());
    let mut queued = 0;
    while let Ok(r) = tokio::time::timeout(Duration::from_millis(100), send()).await {
        r.unwrap();
        queued += 1;
        assert!(queued < 100, "the send buffer never filled");
    }
    let before = thread_cpu();
    let blocked = tokio::time::timeout(Duration::from_millis(500), send()).await;
    let used = thread_cpu() - before;
    assert!(blocked.is_err(), "the buffer stays full");
    assert!(
        used < Duration::from_millis(100),
        "a send blocked for 500 ms used {used:?} of CPU"
    );
}

/// The kernel's UDP buffer holds the window we advertise, so a sender that
/// fills the window is not cut short by kernel drops (as root, as CI runs,
/// SO_RCVBUFFORCE passes `rmem_max`; elsewhere the kernel's cap stands).
#[tokio::test]
async fn the_socket_buffer_holds_the_advertised_window() {
    let (server, _client) = pair().await;
    let window = Config::rfc9260().receive_buffer as usize;
    let rmem_max: usize = std::fs::read_to_string("/proc/sys/net/core/rmem_max")
        .expect("/proc/sys/net/core/rmem_max")
        .trim()
        .parse()
        .unwrap();
    let root = nix::unistd::geteuid().is_root();
    let got = server.socket_receive_buffer();
    // The kernel reports twice what was set (its bookkeeping).
    if root || rmem_max >= 2 * window {
        assert!(got >= 2 * window, "{got} < {}", 2 * window);
    } else {
        assert!(got >= 2 * rmem_max.min(2 * window), "{got}");
    }
    // A connect with a larger window raises it again.
    let client = client_endpoint().await;
    let big = Config {
        receive_buffer: 4 << 20,
        ..fast()
    };
    let _ = tokio::time::timeout(
        Duration::from_secs(2),
        client.connect(server.local_addr(), big),
    )
    .await;
    if root {
        assert!(client.socket_receive_buffer() >= 8 << 20);
    }
}
