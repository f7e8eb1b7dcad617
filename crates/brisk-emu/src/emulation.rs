//! One running emulation: a namespace per host, each with a TUN device whose
//! other end is this process, and a forwarding thread that moves packets
//! between the devices through [`Forwarder`]'s links on the wall clock.
//!
//! Host `i` lives in namespace `brisk-emu-PID-RUN-X` (X = a, b, ...), its device
//! `emu0` has address 10.77.0.(i+1)/24, and nothing else: no default route,
//! so nothing a command in it sends can leave the emulated network.

use std::fs::File;
use std::io::{self, Write};
use std::net::Ipv4Addr;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use brisk_net::{IpPacket, LinkParams};
use brisk_proto::Time;
use nix::poll::{PollFd, PollFlags, ppoll};
use nix::sys::time::TimeSpec;
use tun_rs::{DeviceBuilder, SyncDevice};

use crate::EmuError;
use crate::forward::{Forwarder, host_label};
use crate::netns::{self, Namespace};

/// Numbers the emulations of this process.
static NEXT_RUN: AtomicUsize = AtomicUsize::new(0);

/// The device name inside every host's namespace.
pub const DEVICE: &str = "emu0";

/// The longest the forwarding loop sleeps before it looks at its stop flag.
const IDLE_POLL: Duration = Duration::from_millis(20);

/// What to emulate.
#[derive(Debug, Clone)]
pub struct EmulationConfig {
    /// At least two.
    pub hosts: usize,
    /// `links[from][to]`: each direction between two hosts (the diagonal is
    /// not used). [`EmulationConfig::two_hosts`] builds the common case.
    pub links: Vec<Vec<LinkParams>>,
    /// Seeds the impairments' random streams.
    pub seed: u64,
    pub classifier: IpPacket,
    /// Write a pcapng of every link direction here.
    pub capture: Option<PathBuf>,
}

impl EmulationConfig {
    /// Hosts a (10.77.0.1) and b (10.77.0.2), `forward` from a to b and
    /// `back` from b to a.
    pub fn two_hosts(forward: LinkParams, back: LinkParams) -> Self {
        let unused = LinkParams::default();
        Self {
            hosts: 2,
            links: vec![vec![unused.clone(), forward], vec![back, unused]],
            seed: 1,
            classifier: IpPacket::default(),
            capture: None,
        }
    }
}

/// The address of host `i`.
pub fn host_addr(i: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, 77, 0, u8::try_from(i + 1).unwrap_or(u8::MAX))
}

/// A running emulation. Dropping it stops forwarding and removes its
/// namespaces; [`Emulation::finish`] does the same and returns what the
/// links did.
pub struct Emulation {
    namespaces: Vec<Namespace>,
    stop: Arc<AtomicBool>,
    engine: Option<JoinHandle<Result<Forwarder, EmuError>>>,
    started: Instant,
}

impl std::fmt::Debug for Emulation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Emulation")
            .field("namespaces", &self.namespaces)
            .finish()
    }
}

/// Fails unless this process may make namespaces and devices.
fn check_privileges() -> Result<(), EmuError> {
    if nix::unistd::geteuid().is_root() {
        return Ok(());
    }
    // Not root: CAP_NET_ADMIN and CAP_SYS_ADMIN would do, but an
    // unprivileged `ip netns add` is the plain test.
    Err(EmuError::NotRoot)
}

impl Emulation {
    /// Makes the namespaces and devices, removes any left behind by a crashed
    /// run, and starts forwarding.
    pub fn start(cfg: EmulationConfig) -> Result<Self, EmuError> {
        if cfg.hosts < 2 || cfg.links.len() != cfg.hosts {
            return Err(EmuError::Config(format!(
                "an emulation needs at least two hosts and a link for each direction; got {} hosts and {} rows of links",
                cfg.hosts,
                cfg.links.len()
            )));
        }
        check_privileges()?;
        netns::remove_leftovers()?;
        let pid = std::process::id();
        // Emulations of one process (tests run in parallel) are numbered.
        let run = NEXT_RUN.fetch_add(1, Ordering::Relaxed);
        let mut namespaces = Vec::new();
        let mut devices = Vec::new();
        for i in 0..cfg.hosts {
            let label = host_label(i);
            let ns = Namespace::create(&format!("{}{pid}-{run}-{label}", netns::PREFIX))?;
            // At most 15 bytes: "bk", 7 digits of PID, the run, the host.
            let outside = format!("bk{pid}.{}{label}", run % 100);
            let dev = DeviceBuilder::new()
                .name(&outside)
                .build_sync()
                .map_err(|e| EmuError::Io {
                    what: format!("creating TUN device {outside}"),
                    source: e,
                })?;
            // Moved into its namespace, the device keeps its file descriptor
            // here: the far end of host i's only interface.
            netns::ip(&["link", "set", &outside, "netns", ns.name()])?;
            netns::ip(&["-n", ns.name(), "link", "set", &outside, "name", DEVICE])?;
            let addr = format!("{}/24", host_addr(i));
            netns::ip(&["-n", ns.name(), "addr", "add", &addr, "dev", DEVICE])?;
            netns::ip(&["-n", ns.name(), "link", "set", DEVICE, "up"])?;
            dev.set_nonblocking(true).map_err(|e| EmuError::Io {
                what: format!("making {outside} non-blocking"),
                source: e,
            })?;
            namespaces.push(ns);
            devices.push(dev);
        }
        let started = Instant::now();
        let epoch_us = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
            .unwrap_or(0);
        let addrs: Vec<Ipv4Addr> = (0..cfg.hosts).map(host_addr).collect();
        let mut fwd = Forwarder::new(&addrs, cfg.seed, cfg.classifier, |from, to| {
            cfg.links[from][to].clone()
        });
        if let Some(path) = &cfg.capture {
            let file = File::create(path).map_err(|e| EmuError::Io {
                what: format!("creating {}", path.display()),
                source: e,
            })?;
            let out: Box<dyn Write + Send> = Box::new(io::BufWriter::new(file));
            fwd.capture_to(out, epoch_us).map_err(|e| EmuError::Io {
                what: format!("writing {}", path.display()),
                source: e,
            })?;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let engine = std::thread::Builder::new()
            .name("brisk-emu".into())
            .spawn(move || forward(fwd, devices, started, &flag))
            .map_err(|e| EmuError::Io {
                what: "starting the forwarding thread".into(),
                source: e,
            })?;
        Ok(Self {
            namespaces,
            stop,
            engine: Some(engine),
            started,
        })
    }

    /// How many hosts.
    pub fn hosts(&self) -> usize {
        self.namespaces.len()
    }

    /// The namespace of host `i`.
    pub fn namespace(&self, i: usize) -> &Namespace {
        &self.namespaces[i]
    }

    /// A command that runs `program` in host `i`'s namespace.
    pub fn command(&self, i: usize, program: &str) -> Command {
        self.namespaces[i].command(program)
    }

    /// Moves the calling thread into host `i`'s namespace.
    pub fn enter(&self, i: usize) -> Result<(), EmuError> {
        self.namespaces[i].enter()
    }

    /// Sets a sysctl of host `i`'s network namespace (`net.ipv4.tcp_sack`,
    /// say: the `net.` tree is per namespace).
    pub fn sysctl(&self, i: usize, key: &str, value: &str) -> Result<(), EmuError> {
        if !key.starts_with("net.") || key.contains("..") || key.contains('/') {
            return Err(EmuError::Config(format!(
                "sysctl `{key}`: only keys under net. are per namespace"
            )));
        }
        let path = Path::new("/proc/sys").join(key.replace('.', "/"));
        let ns = &self.namespaces[i];
        let value = value.to_owned();
        // A thread of our own enters the namespace, so /proc/sys/net is its.
        std::thread::scope(|s| {
            s.spawn(|| -> Result<(), EmuError> {
                ns.enter()?;
                std::fs::write(&path, format!("{value}\n")).map_err(|e| EmuError::Io {
                    what: format!("setting {key} = {value} in {}", ns.name()),
                    source: e,
                })
            })
            .join()
            .unwrap_or_else(|_| Err(EmuError::Config("the sysctl thread panicked".into())))
        })
    }

    /// The emulator's clock: time since forwarding started, as the links
    /// and the capture count it.
    pub fn now(&self) -> Time {
        Time::from_micros(u64::try_from(self.started.elapsed().as_micros()).unwrap_or(u64::MAX))
    }

    /// When forwarding started.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Stops forwarding, writes out the capture, removes the namespaces, and
    /// returns the forwarder with every link's counters and trace.
    pub fn finish(mut self) -> Result<Forwarder, EmuError> {
        let fwd = self.stop_engine();
        let mut first_err = None;
        for ns in self.namespaces.drain(..) {
            if let Err(e) = ns.remove() {
                first_err.get_or_insert(e);
            }
        }
        let mut fwd = fwd?;
        fwd.finish_capture().map_err(|e| EmuError::Io {
            what: "writing the capture".into(),
            source: e,
        })?;
        match first_err {
            Some(e) => Err(e),
            None => Ok(fwd),
        }
    }

    fn stop_engine(&mut self) -> Result<Forwarder, EmuError> {
        self.stop.store(true, Ordering::Relaxed);
        match self.engine.take() {
            None => Err(EmuError::Config("the emulation was already stopped".into())),
            Some(h) => h
                .join()
                .unwrap_or_else(|_| Err(EmuError::Config("the forwarding thread panicked".into()))),
        }
    }
}

impl Drop for Emulation {
    fn drop(&mut self) {
        if self.engine.is_some() {
            let _ = self.stop_engine();
        }
        // Each namespace removes itself when dropped.
        self.namespaces.clear();
    }
}

/// Asks for SCHED_FIFO at a middling priority: the loop sleeps in `ppoll`
/// between packets, so it never starves the cores, but a compiler or a
/// stack under test no longer delays its wake-ups. Without the privilege it
/// stays a normal thread; the accuracy measurement shows the difference.
pub(crate) fn realtime() {
    use thread_priority::unix::{
        RealtimeThreadSchedulePolicy, ThreadSchedulePolicy, set_thread_priority_and_policy,
        thread_native_id,
    };
    if let Ok(p) = thread_priority::ThreadPriorityValue::try_from(50u8) {
        let _ = set_thread_priority_and_policy(
            thread_native_id(),
            thread_priority::ThreadPriority::Crossplatform(p),
            ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo),
        );
    }
}

/// The forwarding loop: read every device until it would block, hand each
/// packet to the forwarder stamped with the wall clock, write out every
/// packet that is due, and sleep in `ppoll` until the next is due or a
/// device has a packet.
fn forward(
    mut fwd: Forwarder,
    devices: Vec<SyncDevice>,
    started: Instant,
    stop: &AtomicBool,
) -> Result<Forwarder, EmuError> {
    // Timers may fire up to the slack late: the default 50 us would be most
    // of the error budget.
    let _ = nix::sys::prctl::set_timerslack(1);
    realtime();
    let now =
        || Time::from_micros(u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX));
    let mut buf = vec![0u8; 65_536];
    while !stop.load(Ordering::Relaxed) {
        let t = now();
        while let Some((to, packet)) = fwd.poll_arrival(t) {
            // A full device queue drops the packet, as a real interface would.
            let _ = devices[to].send(&packet);
        }
        let wait = fwd
            .next_arrival()
            .map(|at| at.since(now()).min(IDLE_POLL))
            .unwrap_or(IDLE_POLL);
        let mut fds: Vec<PollFd> = devices
            .iter()
            .map(|d| PollFd::new(d.as_fd(), PollFlags::POLLIN))
            .collect();
        match ppoll(&mut fds, Some(TimeSpec::from_duration(wait)), None) {
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(e) => {
                return Err(EmuError::Io {
                    what: "waiting for packets".into(),
                    source: e.into(),
                });
            }
        }
        let ready: Vec<bool> = fds
            .iter()
            .map(|f| f.revents().is_some_and(|r| r.contains(PollFlags::POLLIN)))
            .collect();
        for (i, dev) in devices.iter().enumerate() {
            if !ready[i] {
                continue;
            }
            loop {
                match dev.recv(&mut buf) {
                    Ok(n) => fwd.packet(now(), i, buf[..n].to_vec()),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        return Err(EmuError::Io {
                            what: format!("reading host {}'s device", host_label(i)),
                            source: e,
                        });
                    }
                }
            }
        }
    }
    Ok(fwd)
}
