//! The forwarding core, sans-IO: packets in from a host at a time, packets
//! out to a host when they are due. It owns one [`Link`] per ordered pair of
//! hosts, the same link code the simulator runs, and is driven by the
//! engine's wall clock or by a test's virtual clock alike.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, Write};
use std::net::Ipv4Addr;

use brisk_net::pcapng::PcapngWriter;
use brisk_net::{HostId, IpPacket, Link, LinkParams, LinkStats, Outcome, PacketRecord};
use brisk_proto::Time;

/// One packet waiting for its arrival time.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Due {
    at: Time,
    /// Insertion order: of equal times, the first scheduled leaves first.
    seq: u64,
    from: usize,
    to: usize,
    packet: Vec<u8>,
}

/// Counters of the forwarder itself (each link keeps its own).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForwardStats {
    /// Packets whose destination is no host of the network (IPv6, broadcast,
    /// a wrong address): dropped before any link.
    pub unroutable: u64,
    /// Packets a host sent to itself: never happens over a TUN device, and
    /// dropped if it does.
    pub to_self: u64,
    /// Packets a link sent on that found [`MAX_IN_FLIGHT_BYTES`] already in
    /// flight: dropped, so that a link with no queue limit and a command that
    /// sends without end cannot take the machine's memory.
    pub overflow: u64,
}

/// The most bytes the forwarder holds between their links and their arrival.
pub const MAX_IN_FLIGHT_BYTES: usize = 64 << 20;

/// Every link direction of the network and the packets in flight on them.
#[derive(Debug)]
pub struct Forwarder {
    addrs: Vec<Ipv4Addr>,
    /// `links[from][to]`, `None` on the diagonal.
    links: Vec<Vec<Option<Link>>>,
    in_flight: BinaryHeap<Reverse<Due>>,
    in_flight_bytes: usize,
    seq: u64,
    stats: ForwardStats,
    capture: Option<Capture>,
}

/// The pcapng of every link direction: one interface each, every packet as
/// it entered, with a comment where the link dropped, corrupted, duplicated
/// or held it back. The first write error is kept and reported at the end.
struct Capture {
    out: PcapngWriter<Box<dyn Write + Send>>,
    /// Interface number of `links[from][to]`.
    interface: Vec<Vec<u32>>,
    /// The Unix time of the emulator's time zero, in microseconds.
    epoch_us: u64,
    error: Option<io::Error>,
}

impl std::fmt::Debug for Capture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capture")
            .field("interfaces", &self.out.interfaces())
            .finish()
    }
}

/// The name of host `i` in captures and reports: a, b, c, ...
pub fn host_label(i: usize) -> String {
    match u8::try_from(i) {
        Ok(n) if n < 26 => char::from(b'a' + n).to_string(),
        _ => format!("h{i}"),
    }
}

impl Forwarder {
    /// A network of hosts with these addresses, host `i` being `addrs[i]`;
    /// `params(from, to)` gives each link direction, `classifier` how its
    /// packets are read. Link directions draw their random streams from
    /// `seed`, numbered `from * hosts + to`.
    pub fn new(
        addrs: &[Ipv4Addr],
        seed: u64,
        classifier: IpPacket,
        mut params: impl FnMut(usize, usize) -> LinkParams,
    ) -> Self {
        let n = addrs.len();
        let links = (0..n)
            .map(|from| {
                (0..n)
                    .map(|to| {
                        (from != to).then(|| {
                            let mut link = Link::with_classifier(
                                &params(from, to),
                                seed,
                                (from * n + to) as u64,
                                Box::new(classifier),
                            );
                            link.trace = Some(Vec::new());
                            link
                        })
                    })
                    .collect()
            })
            .collect();
        Self {
            addrs: addrs.to_vec(),
            links,
            in_flight: BinaryHeap::new(),
            in_flight_bytes: 0,
            seq: 0,
            stats: ForwardStats::default(),
            capture: None,
        }
    }

    /// Records every packet entering every link direction to `out` as
    /// pcapng, stamped `epoch_us` plus the emulator's time.
    pub fn capture_to(&mut self, out: Box<dyn Write + Send>, epoch_us: u64) -> io::Result<()> {
        let mut w = PcapngWriter::new(out, concat!("brisk-emu ", env!("CARGO_PKG_VERSION")))?;
        let n = self.addrs.len();
        let mut interface = vec![vec![u32::MAX; n]; n];
        for (from, row) in interface.iter_mut().enumerate() {
            for (to, slot) in row.iter_mut().enumerate() {
                if from != to {
                    *slot = w.add_interface(
                        &format!("{}->{}", host_label(from), host_label(to)),
                        &format!(
                            "emulated link from {} ({}) to {} ({})",
                            host_label(from),
                            self.addrs[from],
                            host_label(to),
                            self.addrs[to]
                        ),
                    )?;
                }
            }
        }
        self.capture = Some(Capture {
            out: w,
            interface,
            epoch_us,
            error: None,
        });
        Ok(())
    }

    /// The host a packet is for, by its IPv4 destination.
    fn route(&self, packet: &[u8]) -> Option<usize> {
        let version = packet.first()? >> 4;
        if version != 4 {
            return None;
        }
        let dst: [u8; 4] = packet.get(16..20)?.try_into().ok()?;
        let dst = Ipv4Addr::from(dst);
        self.addrs.iter().position(|a| *a == dst)
    }

    /// Host `from` sent `packet` at `now`: it enters the link toward its
    /// destination.
    pub fn packet(&mut self, now: Time, from: usize, mut packet: Vec<u8>) {
        let Some(to) = self.route(&packet) else {
            self.stats.unroutable += 1;
            return;
        };
        let Some(link) = self.links.get_mut(from).and_then(|r| r[to].as_mut()) else {
            self.stats.to_self += 1;
            return;
        };
        let ends = (HostId::new(from), HostId::new(to));
        let entered = link.transmit_from(now, &mut packet, ends);
        if let Some(cap) = &mut self.capture {
            let label = format!("{}->{}", host_label(from), host_label(to));
            let comment = link.explain(now, &entered, &label);
            cap.write(from, to, now, &packet, comment.as_deref());
        }
        if let Outcome::Sent { arrival, duplicate } = entered.outcome {
            if duplicate {
                self.schedule(arrival, from, to, packet.clone());
            }
            self.schedule(arrival, from, to, packet);
        }
    }

    fn schedule(&mut self, at: Time, from: usize, to: usize, packet: Vec<u8>) {
        if self.in_flight_bytes + packet.len() > MAX_IN_FLIGHT_BYTES {
            self.stats.overflow += 1;
            return;
        }
        self.in_flight_bytes += packet.len();
        self.seq += 1;
        self.in_flight.push(Reverse(Due {
            at,
            seq: self.seq,
            from,
            to,
            packet,
        }));
    }

    /// When the next packet is due, if any is in flight.
    pub fn next_arrival(&self) -> Option<Time> {
        self.in_flight.peek().map(|d| d.0.at)
    }

    /// The next packet due at or before `now`: the host it is for, and the
    /// packet.
    pub fn poll_arrival(&mut self, now: Time) -> Option<(usize, Vec<u8>)> {
        if self.next_arrival()? > now {
            return None;
        }
        let Reverse(due) = self.in_flight.pop()?;
        self.in_flight_bytes -= due.packet.len();
        if let Some(link) = self.links[due.from][due.to].as_mut() {
            link.stats.delivered += 1;
        }
        Some((due.to, due.packet))
    }

    pub fn stats(&self) -> &ForwardStats {
        &self.stats
    }

    /// The counters of link direction `from -> to`.
    pub fn link_stats(&self, from: usize, to: usize) -> Option<&LinkStats> {
        self.links.get(from)?.get(to)?.as_ref().map(|l| &l.stats)
    }

    /// Every packet that entered link direction `from -> to`, with its fate.
    pub fn trace(&self, from: usize, to: usize) -> &[PacketRecord] {
        self.links
            .get(from)
            .and_then(|r| r.get(to))
            .and_then(|l| l.as_ref())
            .and_then(|l| l.trace.as_deref())
            .unwrap_or(&[])
    }

    /// Flushes the capture, and reports its first write error.
    pub fn finish_capture(&mut self) -> io::Result<()> {
        match self.capture.as_mut() {
            None => Ok(()),
            Some(cap) => {
                if let Some(e) = cap.error.take() {
                    return Err(e);
                }
                cap.out.flush()
            }
        }
    }
}

impl Capture {
    fn write(&mut self, from: usize, to: usize, now: Time, packet: &[u8], comment: Option<&str>) {
        if self.error.is_some() {
            return;
        }
        let interface = self.interface[from][to];
        let at = self.epoch_us.saturating_add(now.as_micros());
        if let Err(e) = self.out.write_raw_ipv4(interface, at, packet, comment) {
            self.error = Some(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brisk_net::{Fate, Impairment};
    use std::time::Duration;

    const A: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 1);
    const B: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 2);

    /// An IPv4/UDP packet from `src` to `dst` of `len` bytes in all.
    fn udp(src: Ipv4Addr, dst: Ipv4Addr, len: usize) -> Vec<u8> {
        let mut p = vec![0u8; len.max(28)];
        p[0] = 0x45;
        let total = p.len() as u16;
        p[2..4].copy_from_slice(&total.to_be_bytes());
        p[9] = 17;
        p[12..16].copy_from_slice(&src.octets());
        p[16..20].copy_from_slice(&dst.octets());
        p
    }

    fn two_hosts(fwd: LinkParams, back: LinkParams) -> Forwarder {
        Forwarder::new(&[A, B], 1, IpPacket::default(), |from, _| {
            if from == 0 { fwd.clone() } else { back.clone() }
        })
    }

    #[test]
    fn a_packet_arrives_after_serialization_and_delay_at_the_right_host() {
        // 1000 bytes at 1 Mbit/s: 8 ms, plus 10 ms; no overhead on IP packets.
        let link = LinkParams::new(1_000_000, Duration::from_millis(10)).with_overhead(0);
        let mut f = two_hosts(link.clone(), link);
        f.packet(Time::from_millis(5), 0, udp(A, B, 1000));
        assert_eq!(f.next_arrival(), Some(Time::from_millis(23)));
        assert_eq!(f.poll_arrival(Time::from_micros(22_999)), None);
        let (to, p) = f.poll_arrival(Time::from_millis(23)).unwrap();
        assert_eq!((to, p.len()), (1, 1000));
        f.packet(Time::from_millis(30), 1, udp(B, A, 500));
        assert_eq!(f.poll_arrival(Time::from_secs(1)).unwrap().0, 0);
    }

    #[test]
    fn packets_for_no_host_are_counted_and_dropped() {
        let mut f = two_hosts(LinkParams::default(), LinkParams::default());
        f.packet(Time::ZERO, 0, udp(A, Ipv4Addr::new(10, 77, 0, 9), 100));
        f.packet(Time::ZERO, 0, vec![0x60; 60]); // IPv6
        f.packet(Time::ZERO, 0, Vec::new());
        f.packet(Time::ZERO, 0, udp(A, A, 100));
        assert_eq!(f.stats().unroutable, 3);
        assert_eq!(f.stats().to_self, 1);
        assert_eq!(f.next_arrival(), None);
    }

    #[test]
    fn a_drop_ordinal_drops_exactly_that_packet_of_its_direction() {
        let fwd = LinkParams::new(0, Duration::from_millis(1))
            .with_overhead(0)
            .with_impairments([Impairment::DropOrdinals {
                ordinals: vec![3],
                data_only: false,
            }]);
        let mut f = two_hosts(fwd, LinkParams::default());
        for i in 0..5u8 {
            let mut p = udp(A, B, 40);
            p[39] = i;
            f.packet(Time::from_millis(u64::from(i)), 0, p);
            // The other direction does not count toward this one's ordinals.
            f.packet(Time::from_millis(u64::from(i)), 1, udp(B, A, 40));
        }
        let mut got = Vec::new();
        while let Some((to, p)) = f.poll_arrival(Time::from_secs(1)) {
            if to == 1 {
                got.push(p[39]);
            }
        }
        assert_eq!(got, vec![0, 1, 3, 4]);
        let trace = f.trace(0, 1);
        assert_eq!(trace[2].fate, Fate::ImpairmentDrop);
        assert_eq!(f.link_stats(0, 1).unwrap().impairment_drops, 1);
        assert_eq!(f.link_stats(1, 0).unwrap().impairment_drops, 0);
    }

    #[test]
    fn a_sender_without_end_on_an_unlimited_link_cannot_take_unbounded_memory() {
        // 1 kbit/s and no queue limit: nothing leaves for hours.
        let slow = LinkParams::new(1_000, Duration::ZERO).with_overhead(0);
        let mut f = two_hosts(slow, LinkParams::default());
        let n = 2 * MAX_IN_FLIGHT_BYTES / 60_000;
        for _ in 0..n {
            f.packet(Time::ZERO, 0, udp(A, B, 60_000));
        }
        assert!(f.in_flight_bytes <= MAX_IN_FLIGHT_BYTES);
        assert!(f.stats().overflow as usize >= n / 2 - 1, "{:?}", f.stats());
        // What is held still leaves, in order, and frees its room.
        let (to, _) = f.poll_arrival(Time::from_secs(1_000_000)).unwrap();
        assert_eq!(to, 1);
        assert!(f.in_flight_bytes <= MAX_IN_FLIGHT_BYTES - 60_000);
    }

    #[test]
    fn equal_arrival_times_keep_their_order() {
        let mut f = two_hosts(LinkParams::default(), LinkParams::default());
        for i in 0..10u8 {
            let mut p = udp(A, B, 40);
            p[39] = i;
            f.packet(Time::ZERO, 0, p);
        }
        let order: Vec<u8> = std::iter::from_fn(|| f.poll_arrival(Time::ZERO))
            .map(|(_, p)| p[39])
            .collect();
        assert_eq!(order, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn the_capture_has_an_interface_per_direction_and_comments_drops() {
        use brisk_net::pcapng::{Block, read_blocks};
        use std::sync::{Arc, Mutex};

        #[derive(Clone, Default)]
        struct Shared(Arc<Mutex<Vec<u8>>>);
        impl Write for Shared {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let fwd = LinkParams::default().with_impairments([Impairment::DropOrdinals {
            ordinals: vec![2],
            data_only: false,
        }]);
        let mut f = two_hosts(fwd, LinkParams::default());
        let out = Shared::default();
        f.capture_to(Box::new(out.clone()), 1_000_000).unwrap();
        f.packet(Time::ZERO, 0, udp(A, B, 40));
        f.packet(Time::from_millis(1), 0, udp(A, B, 40));
        f.packet(Time::from_millis(2), 1, udp(B, A, 40));
        f.finish_capture().unwrap();
        let bytes = out.0.lock().unwrap().clone();
        let blocks = read_blocks(&bytes).unwrap();
        let interfaces: Vec<String> = blocks
            .iter()
            .filter_map(|b| match b {
                Block::Interface(i) => i.name.clone(),
                _ => None,
            })
            .collect();
        assert_eq!(interfaces, ["a->b", "b->a"]);
        let packets: Vec<(u32, u64, Option<String>)> = blocks
            .iter()
            .filter_map(|b| match b {
                Block::Packet(p) => Some((p.interface, p.timestamp, p.comments.first().cloned())),
                _ => None,
            })
            .collect();
        assert_eq!(packets.len(), 3);
        assert_eq!(packets[0], (0, 1_000_000, None));
        assert_eq!(packets[1].1, 1_001_000);
        assert!(
            packets[1]
                .2
                .as_deref()
                .is_some_and(|c| c.contains("dropped by a->b") && c.contains("packet 2")),
            "{packets:?}"
        );
        assert_eq!(packets[2].0, 1);
    }
}
