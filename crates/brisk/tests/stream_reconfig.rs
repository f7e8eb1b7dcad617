//! Stream reconfiguration (RFC 6525) through the async API over loopback.

use std::time::Duration;

use brisk::{Config, Endpoint, Error, ReconfigError, ResetDirection, SendOptions, StreamEvent};

#[path = "common/endpoints.rs"]
mod endpoints;
use endpoints::{associate, client_endpoint, server_endpoint};

fn cfg(stream_reconfig: bool) -> Config {
    Config {
        rto_initial: Duration::from_millis(50),
        rto_min: Duration::from_millis(50),
        rto_max: Duration::from_millis(200),
        stream_reconfig,
        ..Config::rfc9260()
    }
}

async fn pair(server_reconfig: bool) -> (Endpoint, Endpoint) {
    let server = server_endpoint(Config {
        max_inbound_streams: 32,
        ..cfg(server_reconfig)
    })
    .await;
    (server, client_endpoint().await)
}

async fn event(a: &brisk::Association) -> StreamEvent {
    tokio::time::timeout(Duration::from_secs(10), a.stream_event())
        .await
        .expect("a stream event within 10 s")
        .expect("association open")
}

#[tokio::test]
async fn reset_and_add_streams_reach_both_sides_as_stream_events() {
    let (server, client) = pair(true).await;
    let (a, b) = associate(&client, &server, cfg(true)).await;
    assert!(a.stream_reconfig() && b.stream_reconfig());
    for i in 0..3u8 {
        a.send(2, vec![i; 10], SendOptions::default())
            .await
            .unwrap();
    }
    a.reset_streams(&[2]).unwrap();
    a.send(2, vec![9; 10], SendOptions::default())
        .await
        .unwrap();
    assert_eq!(
        event(&a).await,
        StreamEvent::Reset {
            direction: ResetDirection::Outgoing,
            streams: vec![2]
        }
    );
    assert_eq!(
        event(&b).await,
        StreamEvent::Reset {
            direction: ResetDirection::Incoming,
            streams: vec![2]
        }
    );
    let mut got = Vec::new();
    for _ in 0..4 {
        let m = tokio::time::timeout(Duration::from_secs(10), b.recv())
            .await
            .unwrap()
            .unwrap();
        got.push((m.ssn, m.payload[0]));
    }
    assert_eq!(got, vec![(0, 0), (1, 1), (2, 2), (0, 9)]);

    // 16 streams each way, and B accepts 32 inbound: 20 more are denied,
    // 4 more are added, and both learn 20/16 and 16/20.
    a.add_streams(20, 0).unwrap();
    assert_eq!(
        event(&a).await,
        StreamEvent::AddFailed {
            outgoing: 20,
            incoming: 0,
            result: brisk::ReconfigResult::Denied
        }
    );
    a.add_streams(4, 0).unwrap();
    assert_eq!(
        event(&a).await,
        StreamEvent::Added {
            outgoing: 20,
            incoming: 16
        }
    );
    assert_eq!(
        event(&b).await,
        StreamEvent::Added {
            outgoing: 16,
            incoming: 20
        }
    );
    a.send(19, b"new stream".to_vec(), SendOptions::default())
        .await
        .unwrap();
    let m = tokio::time::timeout(Duration::from_secs(10), b.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!((m.stream_id, &m.payload[..]), (19, &b"new stream"[..]));
    assert!(a.try_stream_event().is_none());
    assert_eq!(a.stream_events_dropped(), 0);
    a.close().await.unwrap();
    assert!(matches!(
        tokio::time::timeout(Duration::from_secs(10), a.stream_event())
            .await
            .unwrap(),
        Err(Error::Closed(_))
    ));
}

#[tokio::test]
async fn without_negotiation_requests_fail_at_once() {
    let (server, client) = pair(false).await;
    let (a, _b) = associate(&client, &server, cfg(true)).await;
    assert!(!a.stream_reconfig());
    assert!(matches!(
        a.reset_streams(&[0]),
        Err(Error::Reconfig(ReconfigError::NotNegotiated))
    ));
    assert!(matches!(
        a.add_streams(1, 1),
        Err(Error::Reconfig(ReconfigError::NotNegotiated))
    ));
}
