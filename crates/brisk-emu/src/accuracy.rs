//! The emulator's own error, measured end to end: probes in the hosts'
//! namespaces send stamped UDP datagrams through emulated links, and what
//! arrives is compared with what the links were told to do.
//!
//! - **Delay**: at a packet rate, each datagram's one-way delay (its receive
//!   time less the `CLOCK_MONOTONIC` stamp it carries, the same clock in
//!   every namespace) less the configured delay and serialization. Kernel,
//!   TUN and forwarding time all count against the emulator.
//! - **Rate**: a sender above the configured bandwidth, the delivered IP
//!   bytes over the time between the first and the last arrival.
//! - **Ordinals**: a drop pattern's ordinals against the sequence numbers
//!   that never arrived, which must be exactly those.

use std::fmt;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use brisk_net::{Impairment, LinkParams, QueueLimit};
use nix::time::{ClockId, clock_gettime};

use crate::{EmuError, Emulation, EmulationConfig, host_addr};

/// `CLOCK_MONOTONIC` in nanoseconds: one clock for every namespace.
pub fn monotonic_ns() -> u64 {
    clock_gettime(ClockId::CLOCK_MONOTONIC)
        .map(|t| {
            u64::try_from(t.tv_sec()).unwrap_or(0) * 1_000_000_000
                + u64::try_from(t.tv_nsec()).unwrap_or(0)
        })
        .unwrap_or(0)
}

/// Sleeps until `CLOCK_MONOTONIC` reaches `at_ns`.
fn sleep_until(at_ns: u64) {
    let now = monotonic_ns();
    if at_ns > now {
        std::thread::sleep(Duration::from_nanos(at_ns - now));
    }
}

/// The delay error at one packet rate, in microseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct DelayRow {
    pub packets_per_second: u32,
    pub sent: usize,
    pub received: usize,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    /// The smallest error seen: below 0 would mean a packet came early.
    pub min_us: f64,
}

/// The achieved rate at one configured bandwidth.
#[derive(Debug, Clone, PartialEq)]
pub struct RateRow {
    pub configured_bps: u64,
    pub achieved_bps: f64,
}

impl RateRow {
    pub fn ratio(&self) -> f64 {
        self.achieved_bps / self.configured_bps as f64
    }
}

/// The ordinals a pattern dropped against the ones it was told to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrdinalRow {
    pub sent: u64,
    pub expected: Vec<u64>,
    pub missing: Vec<u64>,
}

impl OrdinalRow {
    pub fn exact(&self) -> bool {
        self.expected == self.missing
    }
}

/// Every measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct Accuracy {
    /// The configured one-way delay of the delay probes.
    pub delay: Duration,
    pub delays: Vec<DelayRow>,
    pub rates: Vec<RateRow>,
    pub ordinals: OrdinalRow,
}

/// How long and how hard to measure.
#[derive(Debug, Clone)]
pub struct Plan {
    pub delay: Duration,
    /// Packet rates of the delay probes.
    pub packet_rates: Vec<u32>,
    /// How long each delay and rate probe sends.
    pub duration: Duration,
    pub bandwidths: Vec<u64>,
    pub ordinals: Vec<u64>,
    pub ordinal_packets: u64,
}

impl Default for Plan {
    /// The published measurement: 100, 1,000 and 10,000 packets/s over
    /// 10 ms; 1, 10 and 100 Mbit/s; five ordinals of 1,000 packets.
    fn default() -> Self {
        Self {
            delay: Duration::from_millis(10),
            packet_rates: vec![100, 1_000, 10_000],
            duration: Duration::from_secs(3),
            bandwidths: vec![1_000_000, 10_000_000, 100_000_000],
            ordinals: vec![1, 5, 17, 100, 101, 500, 1000],
            ordinal_packets: 1_000,
        }
    }
}

const PORT: u16 = 4700;

/// A UDP socket bound in host `i`'s namespace.
fn socket_in(emu: &Emulation, i: usize, port: u16) -> Result<UdpSocket, EmuError> {
    let io = |what: &str, e: std::io::Error| EmuError::Io {
        what: what.to_owned(),
        source: e,
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            emu.enter(i)?;
            let sock = UdpSocket::bind(SocketAddr::from((host_addr(i), port)))
                .map_err(|e| io("binding a probe socket", e))?;
            sock.set_read_timeout(Some(Duration::from_millis(500)))
                .map_err(|e| io("setting a probe timeout", e))?;
            // Enough for a burst at 100 Mbit/s.
            Ok(sock)
        })
        .join()
        .unwrap_or_else(|_| Err(EmuError::Config("a probe thread panicked".into())))
    })
}

/// One received probe: its sequence number, send stamp, receive time, size.
type Arrival = (u64, u64, u64, usize);

/// Sends `count` datagrams of `size` bytes, `gap_ns` apart (0: as fast as
/// possible), from host a to host b, and returns what arrived.
fn probe(emu: &Emulation, count: u64, size: usize, gap_ns: u64) -> Result<Vec<Arrival>, EmuError> {
    let tx = socket_in(emu, 0, PORT)?;
    let rx = socket_in(emu, 1, PORT)?;
    let to = SocketAddr::from((host_addr(1), PORT));
    // The probes are instruments: real-time like the forwarding thread, so
    // what they measure is the emulator's error, not their own wake-ups.
    let receiver = std::thread::spawn(move || {
        let _ = nix::sys::prctl::set_timerslack(1);
        crate::emulation::realtime();
        let mut got = Vec::new();
        let mut buf = vec![0u8; 65_536];
        while let Ok(n) = rx.recv(&mut buf) {
            let at = monotonic_ns();
            if n >= 16 {
                let seq = u64::from_be_bytes(buf[..8].try_into().unwrap_or_default());
                let sent = u64::from_be_bytes(buf[8..16].try_into().unwrap_or_default());
                got.push((seq, sent, at, n));
            }
        }
        got
    });
    let sender = std::thread::spawn(move || {
        let _ = nix::sys::prctl::set_timerslack(1);
        crate::emulation::realtime();
        send(&tx, to, count, size, gap_ns);
    });
    sender
        .join()
        .map_err(|_| EmuError::Config("the probe sender panicked".into()))?;
    receiver
        .join()
        .map_err(|_| EmuError::Config("the probe receiver panicked".into()))
}

/// Sends the probes `gap_ns` apart, each stamped just before its send.
fn send(tx: &UdpSocket, to: SocketAddr, count: u64, size: usize, gap_ns: u64) {
    let mut payload = vec![0u8; size.max(16)];
    let start = monotonic_ns() + 20_000_000;
    for seq in 0..count {
        sleep_until(start + seq * gap_ns);
        payload[..8].copy_from_slice(&seq.to_be_bytes());
        payload[8..16].copy_from_slice(&monotonic_ns().to_be_bytes());
        // A full socket buffer loses the probe, which the rate counts.
        let _ = tx.send_to(&payload, to);
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn delay_row(plan: &Plan, pps: u32) -> Result<DelayRow, EmuError> {
    let link = LinkParams::new(0, plan.delay).with_overhead(0);
    let emu = Emulation::start(EmulationConfig::two_hosts(link.clone(), link))?;
    let count = (plan.duration.as_secs_f64() * f64::from(pps)).ceil() as u64;
    let got = probe(&emu, count, 64, 1_000_000_000 / u64::from(pps.max(1)));
    emu.finish()?;
    let got = got?;
    let target = u64::try_from(plan.delay.as_nanos()).unwrap_or(u64::MAX);
    let mut errors: Vec<f64> = got
        .iter()
        .map(|&(_, sent, at, _)| (at as f64 - sent as f64 - target as f64) / 1_000.0)
        .collect();
    errors.sort_by(f64::total_cmp);
    Ok(DelayRow {
        packets_per_second: pps,
        sent: count as usize,
        received: got.len(),
        p50_us: percentile(&errors, 0.5),
        p99_us: percentile(&errors, 0.99),
        max_us: errors.last().copied().unwrap_or(f64::NAN),
        min_us: errors.first().copied().unwrap_or(f64::NAN),
    })
}

fn rate_row(plan: &Plan, bps: u64) -> Result<RateRow, EmuError> {
    let link = LinkParams::new(bps, Duration::from_millis(1))
        .with_overhead(0)
        .with_queue(QueueLimit::Packets(100));
    let emu = Emulation::start(EmulationConfig::two_hosts(link.clone(), link))?;
    // 1,400-byte datagrams (1,428 on the wire) at 1.25 times the rate.
    let wire_bits = 1_428.0 * 8.0;
    let pps = bps as f64 / wire_bits * 1.25;
    let count = (plan.duration.as_secs_f64() * pps).ceil() as u64;
    let got = probe(&emu, count, 1_400, (1e9 / pps) as u64);
    emu.finish()?;
    let got = got?;
    let (first, last) = match (got.first(), got.last()) {
        (Some(f), Some(l)) if got.len() > 1 => (f.2, l.2),
        _ => {
            return Ok(RateRow {
                configured_bps: bps,
                achieved_bps: 0.0,
            });
        }
    };
    // The first packet's bits arrived before `first`: count the rest.
    let bits: f64 = got[1..].iter().map(|a| (a.3 + 28) as f64 * 8.0).sum();
    Ok(RateRow {
        configured_bps: bps,
        achieved_bps: bits / ((last - first) as f64 / 1e9),
    })
}

fn ordinal_row(plan: &Plan) -> Result<OrdinalRow, EmuError> {
    let fwd = LinkParams::new(0, Duration::from_millis(1))
        .with_overhead(0)
        .with_impairments([Impairment::DropOrdinals {
            ordinals: plan.ordinals.clone(),
            data_only: false,
        }]);
    let emu = Emulation::start(EmulationConfig::two_hosts(fwd, LinkParams::default()))?;
    let got = probe(&emu, plan.ordinal_packets, 32, 1_000_000);
    emu.finish()?;
    let got = got?;
    let mut seen = vec![false; plan.ordinal_packets as usize];
    for &(seq, ..) in &got {
        if let Some(s) = seen.get_mut(seq as usize) {
            *s = true;
        }
    }
    // Ordinals count from 1; sequence numbers from 0.
    let missing = (0..plan.ordinal_packets)
        .filter(|&s| !seen[s as usize])
        .map(|s| s + 1)
        .collect();
    let mut expected: Vec<u64> = plan
        .ordinals
        .iter()
        .copied()
        .filter(|&o| o >= 1 && o <= plan.ordinal_packets)
        .collect();
    expected.sort_unstable();
    expected.dedup();
    Ok(OrdinalRow {
        sent: plan.ordinal_packets,
        expected,
        missing,
    })
}

/// Runs every measurement of `plan`, one emulation each.
pub fn measure(plan: &Plan) -> Result<Accuracy, EmuError> {
    measure_until(plan, &|| false)
}

/// [`measure`], asking `stop` before each probe: when it says yes, the
/// measurement ends with [`EmuError::Interrupted`] (each probe's emulation,
/// and its namespaces, are gone by then).
pub fn measure_until(plan: &Plan, stop: &dyn Fn() -> bool) -> Result<Accuracy, EmuError> {
    let go = || {
        if stop() {
            Err(EmuError::Interrupted)
        } else {
            Ok(())
        }
    };
    let mut delays = Vec::new();
    for &pps in &plan.packet_rates {
        go()?;
        delays.push(delay_row(plan, pps)?);
    }
    let mut rates = Vec::new();
    for &bps in &plan.bandwidths {
        go()?;
        rates.push(rate_row(plan, bps)?);
    }
    go()?;
    let ordinals = ordinal_row(plan)?;
    Ok(Accuracy {
        delay: plan.delay,
        delays,
        rates,
        ordinals,
    })
}

impl fmt::Display for Accuracy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "Delay error (one-way delay less the configured {} ms, end to end through the kernel, TUN and the emulator):\n",
            self.delay.as_secs_f64() * 1e3
        )?;
        writeln!(f, "| packets/s | sent | received | p50 | p99 | max | min |")?;
        writeln!(f, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")?;
        for r in &self.delays {
            writeln!(
                f,
                "| {} | {} | {} | {:.3} ms | {:.3} ms | {:.3} ms | {:.3} ms |",
                r.packets_per_second,
                r.sent,
                r.received,
                r.p50_us / 1e3,
                r.p99_us / 1e3,
                r.max_us / 1e3,
                r.min_us / 1e3
            )?;
        }
        writeln!(
            f,
            "\nRate (1,428-byte IP packets offered at 1.25 times the rate):\n"
        )?;
        writeln!(f, "| configured | achieved | ratio |")?;
        writeln!(f, "| ---: | ---: | ---: |")?;
        for r in &self.rates {
            writeln!(
                f,
                "| {} Mbit/s | {:.3} Mbit/s | {:.4} |",
                r.configured_bps as f64 / 1e6,
                r.achieved_bps / 1e6,
                r.ratio()
            )?;
        }
        let o = &self.ordinals;
        writeln!(
            f,
            "\nDrop ordinals: told {:?} of {} packets, missing {:?}: {}",
            o.expected,
            o.sent,
            o.missing,
            if o.exact() { "exact" } else { "NOT EXACT" }
        )
    }
}
