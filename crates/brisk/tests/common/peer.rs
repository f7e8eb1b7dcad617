//! Running an interop peer process and meeting it with a Brisk endpoint on
//! loopback: shared by the interop tests (`interop.rs`,
//! `datachannel_interop.rs`) through `#[path]`.
// Each test file uses its own subset.
#![allow(dead_code)]

use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use brisk::{Association, Config, Endpoint, EndpointConfig};

/// A UDP port free on loopback right now.
///
/// The port is free when this returns, and is bound later by Brisk or a peer:
/// the kernel may hand a port just freed to the next bind to port 0, so a
/// port is never handed out twice in one test process (tests run at once
/// took each other's ports: `AddrInUse`).
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        let port = UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

/// `127.0.0.1:port`.
pub fn local(port: u16) -> String {
    format!("127.0.0.1:{port}")
}

/// The arguments of a peer role bound to `port`: `role --bind 127.0.0.1:port`.
pub fn role_args(role: &str, port: u16) -> Vec<String> {
    vec![role.into(), "--bind".into(), local(port)]
}

/// A peer process with `args`, its output piped.
pub fn peer_command(bin: &Path, args: &[String]) -> Command {
    let mut cmd = Command::new(bin);
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd
}

pub fn start(mut cmd: Command) -> Child {
    cmd.spawn()
        .unwrap_or_else(|e| panic!("starting {:?}: {e}", cmd.get_program()))
}

pub fn spawn(bin: &Path, args: &[String]) -> Child {
    start(peer_command(bin, args))
}

/// Starts a peer's server role and gives it a moment to bind.
pub fn spawn_server(cmd: Command) -> Child {
    let child = start(cmd);
    std::thread::sleep(Duration::from_millis(300));
    child
}

/// Waits for a peer process; asserts it succeeded and returns its result line.
pub fn peer_output(child: Child, what: &str) -> String {
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        out.status.success(),
        "{what} failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Brisk's endpoint on loopback `port`, SCTP port 5000.
pub async fn bind_endpoint(port: u16, accept: bool, accept_config: Config) -> Endpoint {
    Endpoint::bind(
        local(port).parse().unwrap(),
        EndpointConfig {
            port: 5000,
            accept,
            accept_config,
            ..EndpointConfig::default()
        },
    )
    .await
    .unwrap()
}

/// Brisk associates with the peer at `remote` (SCTP port 5000).
pub async fn connect(ep: &Endpoint, remote: SocketAddr, cfg: Config) -> Association {
    ep.connect_to_port(remote, 5000, cfg)
        .await
        .expect("handshake")
}

/// The association a peer starts with Brisk's listening endpoint (30 s).
pub async fn accept(ep: &Endpoint) -> Association {
    tokio::time::timeout(Duration::from_secs(30), ep.accept())
        .await
        .expect("the peer's INIT")
        .expect("accept")
}
