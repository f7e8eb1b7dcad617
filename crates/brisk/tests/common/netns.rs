//! A two-path test bed in network namespaces: shared by the tests that need
//! real multi-homing (`netns.rs`) through `#[path]`.
//!
//! Two namespaces, A and B, made by the test, joined by two veth links on
//! two subnets, so each side has two addresses:
//!
//! ```text
//!   A  10.91.1.1 --- l1 --- 10.91.1.2  B
//!      10.91.2.1 --- l2 --- 10.91.2.2
//! ```
//!
//! A path is killed with a drop rule in one namespace (nftables: a table of
//! its own per link that drops what enters or leaves by it) or by taking the
//! link down there, and restored by removing the table or taking the link up.
//! The namespaces are brisk-emu's ([`brisk_emu::netns`]): named
//! `brisk-emu-PID-bedN-a|b`, removed when the bed is dropped, and removed by
//! the next run when a crashed run left them (their PID is gone).
//!
//! Programs run in a namespace through [`Bed::command`] (`ip netns exec`).
//! Brisk runs in one in-process, through [`Bed::run_brisk`]: a thread enters
//! the namespace (`setns`) and drives a current-thread tokio runtime there,
//! so the endpoint's sockets and its route lookups (the multi-homed driver
//! probes the routing table from the driver task) all happen in the
//! namespace. The test keeps Brisk's API at hand (associations, events,
//! paths), where a separate binary would need a protocol of its own.
//!
//! Needs root, `ip` (iproute2) and, for drop rules, `nft` (nftables):
//! `scripts/test` installs them; a missing one fails the test with its name.
// Each test file uses its own subset.
#![allow(dead_code)]

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use brisk_emu::netns::{self, Namespace};

/// One side of the bed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

impl Side {
    fn host(self) -> u8 {
        match self {
            Side::A => 1,
            Side::B => 2,
        }
    }

    pub fn other(self) -> Side {
        match self {
            Side::A => Side::B,
            Side::B => Side::A,
        }
    }
}

/// How a path is killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// nftables rules in the namespace drop every packet that enters or
    /// leaves by the link (the link stays up: a black hole).
    Drop,
    /// The link is taken down in the namespace (`ip link set LINK down`):
    /// its routes go, and sends over it fail.
    Down,
}

/// The links: index 0 is `l1` (10.91.1.0/24), 1 is `l2` (10.91.2.0/24).
pub const LINKS: [&str; 2] = ["l1", "l2"];

/// `side`'s address on link `link` (0 or 1): 10.91.(link+1).(1 for A, 2 for B).
pub fn addr(side: Side, link: usize) -> Ipv4Addr {
    assert!(link < LINKS.len(), "no link {link}");
    Ipv4Addr::new(10, 91, link as u8 + 1, side.host())
}

/// `side`'s two addresses, link 0's first.
pub fn addrs(side: Side) -> [Ipv4Addr; 2] {
    [addr(side, 0), addr(side, 1)]
}

/// `side`'s address on `link` with `port`.
pub fn sock(side: Side, link: usize, port: u16) -> SocketAddr {
    SocketAddr::new(addr(side, link).into(), port)
}

/// Runs `program ARGS`, failing the test with its output; a missing program
/// fails naming the Debian package that has it.
fn run(program: &str, package: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "running `{program}`: {e} (the command `{program}` of the Debian package \
                 {package} is needed; scripts/test installs it)"
            )
        });
    assert!(
        out.status.success(),
        "`{program} {}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    );
}

/// Fails the test unless `program` runs (`program --version`).
pub fn require(program: &str, package: &str) {
    match Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(_) => {}
        Err(e) => panic!(
            "`{program}` is missing ({e}): the test bed needs the Debian package {package} \
             (scripts/test installs it)"
        ),
    }
}

fn ip(args: &[&str]) {
    run("ip", "iproute2", args);
}

/// The two namespaces and their two links; removed when dropped.
pub struct Bed {
    a: Namespace,
    b: Namespace,
}

impl Bed {
    /// Makes the bed (after removing beds and emulations that crashed runs
    /// left behind). Fails the test, saying why, without root or `ip`.
    pub fn new() -> Bed {
        static RUN: AtomicU32 = AtomicU32::new(0);
        // One cleanup at a time: two would delete the same leftover.
        static CLEANING: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let uid = nix::unistd::Uid::effective();
        assert!(
            uid.is_root(),
            "the namespace test bed needs root (CI and scripts/test run as root)"
        );
        require("ip", "iproute2");
        {
            let _one = CLEANING.lock().unwrap_or_else(|p| p.into_inner());
            if let Err(e) = netns::remove_leftovers() {
                panic!("removing namespaces left by crashed runs: {e}");
            }
        }
        let n = RUN.fetch_add(1, Ordering::Relaxed);
        let name = |s: &str| format!("{}{}-bed{n}-{s}", netns::PREFIX, std::process::id());
        let a = Namespace::create(&name("a")).unwrap_or_else(|e| panic!("namespace A: {e}"));
        let b = Namespace::create(&name("b")).unwrap_or_else(|e| panic!("namespace B: {e}"));
        let bed = Bed { a, b };
        for (link, dev) in LINKS.iter().enumerate() {
            // Each end is made in its namespace, so the names need not be
            // unique on the host.
            ip(&[
                "link",
                "add",
                dev,
                "netns",
                bed.a.name(),
                "type",
                "veth",
                "peer",
                "name",
                dev,
                "netns",
                bed.b.name(),
            ]);
            for side in [Side::A, Side::B] {
                let cidr = format!("{}/24", addr(side, link));
                let ns = bed.ns(side).name();
                ip(&["-n", ns, "addr", "add", &cidr, "dev", dev]);
                ip(&["-n", ns, "link", "set", dev, "up"]);
            }
        }
        bed
    }

    /// The names of the bed's namespaces.
    pub fn names(&self) -> [String; 2] {
        [self.a.name().to_owned(), self.b.name().to_owned()]
    }

    pub fn ns(&self, side: Side) -> &Namespace {
        match side {
            Side::A => &self.a,
            Side::B => &self.b,
        }
    }

    /// `program` to be run in `side`'s namespace.
    pub fn command(&self, side: Side, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", self.ns(side).name()]).arg(program);
        c
    }

    /// A handle that cuts and restores the bed's paths from any thread (a
    /// Brisk side running in a namespace, say), for as long as the bed lives.
    pub fn links(&self) -> Links {
        Links {
            a: self.a.name().to_owned(),
            b: self.b.name().to_owned(),
        }
    }

    /// Kills the path over `link` in `side`'s namespace.
    pub fn cut(&self, side: Side, link: usize, how: Cut) {
        self.links().cut(side, link, how);
    }

    /// Restores the path over `link` that [`cut`](Self::cut) killed.
    pub fn restore(&self, side: Side, link: usize, how: Cut) {
        self.links().restore(side, link, how);
    }

    /// Runs `f` on a thread inside `side`'s namespace.
    pub fn in_namespace<T: Send + 'static>(
        &self,
        side: Side,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> JoinHandle<T> {
        let path = format!("/var/run/netns/{}", self.ns(side).name());
        std::thread::spawn(move || {
            let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            nix::sched::setns(file, nix::sched::CloneFlags::CLONE_NEWNET)
                .unwrap_or_else(|e| panic!("entering {path}: {e}"));
            f()
        })
    }

    /// Runs the future `f` makes on a current-thread tokio runtime, on a
    /// thread inside `side`'s namespace: Brisk endpoints made there bind,
    /// route and send in the namespace.
    pub fn run_brisk<F, Fut>(&self, side: Side, f: F) -> JoinHandle<Fut::Output>
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: std::future::Future,
        Fut::Output: Send + 'static,
    {
        self.in_namespace(side, move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a tokio runtime")
                .block_on(f())
        })
    }

    /// Whether a UDP datagram from `from`'s address on `link` reaches the
    /// other side's address on it and is answered (within 300 ms).
    pub fn udp_reaches(&self, from: Side, link: usize) -> bool {
        let to = from.other();
        let server = sock(to, link, 7);
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let echo = self.in_namespace(to, move || {
            let s = UdpSocket::bind(server).expect("echo socket");
            s.set_read_timeout(Some(Duration::from_millis(500)))
                .unwrap();
            ready_tx.send(()).unwrap();
            let mut buf = [0u8; 64];
            if let Ok((n, peer)) = s.recv_from(&mut buf) {
                let _ = s.send_to(&buf[..n], peer);
            }
        });
        ready_rx.recv().expect("echo ready");
        let reached = self
            .in_namespace(from, move || {
                let s = UdpSocket::bind(sock(from, link, 0)).expect("probe socket");
                s.set_read_timeout(Some(Duration::from_millis(300)))
                    .unwrap();
                // A send on a link that is down fails: not reached.
                if s.send_to(b"probe", server).is_err() {
                    return false;
                }
                let mut buf = [0u8; 64];
                matches!(s.recv_from(&mut buf), Ok((5, p)) if p == server)
            })
            .join()
            .unwrap();
        echo.join().unwrap();
        reached
    }
}

/// The bed's links, by namespace name: cuts and restores paths.
#[derive(Debug, Clone)]
pub struct Links {
    a: String,
    b: String,
}

impl Links {
    fn ns(&self, side: Side) -> &str {
        match side {
            Side::A => &self.a,
            Side::B => &self.b,
        }
    }

    /// The nftables table that cuts `link`.
    fn table(link: usize) -> String {
        format!("brisk_cut_{}", LINKS[link])
    }

    /// Kills the path over `link` in `side`'s namespace.
    pub fn cut(&self, side: Side, link: usize, how: Cut) {
        let ns = self.ns(side);
        let dev = LINKS[link];
        match how {
            Cut::Drop => {
                require("nft", "nftables");
                let table = Self::table(link);
                let rules = format!(
                    "table inet {table} {{\n\
                     \tchain input {{ type filter hook input priority -300; policy accept; iifname \"{dev}\" drop; }}\n\
                     \tchain output {{ type filter hook output priority -300; policy accept; oifname \"{dev}\" drop; }}\n\
                     }}\n"
                );
                nft(ns, &rules);
            }
            Cut::Down => ip(&["-n", ns, "link", "set", dev, "down"]),
        }
    }

    /// Restores the path over `link` that [`cut`](Self::cut) killed.
    pub fn restore(&self, side: Side, link: usize, how: Cut) {
        let ns = self.ns(side);
        match how {
            Cut::Drop => run(
                "ip",
                "iproute2",
                &[
                    "netns",
                    "exec",
                    ns,
                    "nft",
                    "delete",
                    "table",
                    "inet",
                    &Self::table(link),
                ],
            ),
            Cut::Down => ip(&["-n", ns, "link", "set", LINKS[link], "up"]),
        }
    }
}

/// The namespaces `ip netns list` shows.
pub fn namespaces() -> Vec<String> {
    let out = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip netns list");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

/// Loads nftables `rules` in namespace `ns`.
fn nft(ns: &str, rules: &str) {
    use std::io::Write;
    let mut child = Command::new("ip")
        .args(["netns", "exec", ns, "nft", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("running ip netns exec {ns} nft: {e}"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(rules.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "nft -f in {ns} failed: {}\n{rules}",
        String::from_utf8_lossy(&out.stderr).trim()
    );
}
