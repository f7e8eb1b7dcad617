//! Two Brisk endpoints on ephemeral loopback ports, associated with each
//! other, and data channels between them: shared by the loopback tests (`loopback.rs`, `datachannel.rs`,
//! `stream_reconfig.rs`, `custom_transport.rs`) through `#[path]`.
// Each test file uses its own subset.
#![allow(dead_code)]

use std::time::Duration;

use brisk::datachannel::{ChannelOptions, DataChannel, DataChannels};
use brisk::{Association, Config, Endpoint, EndpointConfig};

/// An endpoint that only connects out.
pub async fn client_endpoint() -> Endpoint {
    Endpoint::bind(
        "127.0.0.1:0".parse().unwrap(),
        EndpointConfig {
            accept: false,
            ..EndpointConfig::default()
        },
    )
    .await
    .unwrap()
}

/// An endpoint that accepts associations with `accept_config`.
pub async fn server_endpoint(accept_config: Config) -> Endpoint {
    Endpoint::bind(
        "127.0.0.1:0".parse().unwrap(),
        EndpointConfig {
            accept_config,
            ..EndpointConfig::default()
        },
    )
    .await
    .unwrap()
}

/// `client` connects to `server` with `cfg`: (client's association,
/// server's association).
pub async fn associate(
    client: &Endpoint,
    server: &Endpoint,
    cfg: Config,
) -> (Association, Association) {
    let a = client.connect(server.local_addr(), cfg).await.unwrap();
    let b = server.accept().await.unwrap();
    (a, b)
}

/// `f`, which must complete within 10 s.
pub async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(10), f)
        .await
        .expect("timed out")
}

/// `opener` opens channel `label` with `options`, which `acceptor` accepts:
/// (the opener's end, the acceptor's end).
pub async fn open_accepted(
    opener: &DataChannels,
    acceptor: &DataChannels,
    label: &str,
    options: ChannelOptions,
) -> (DataChannel, DataChannel) {
    let (mine, theirs) = tokio::join!(opener.open(label, options), acceptor.accept());
    (mine.unwrap(), theirs.unwrap())
}
