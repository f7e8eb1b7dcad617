//! One direction of a link: impairments, a drop-tail queue, serialization at
//! a bandwidth, then propagation delay.
//!
//! The link is computed, not stepped: a packet entering at `now` starts
//! transmission when the previous one has finished (`busy_until`), takes
//! `(size + overhead) * 8 / bandwidth` to serialize, and arrives one
//! propagation delay after its last bit left. Times inside the link are kept
//! in nanoseconds so fast links do not accumulate rounding; arrivals are
//! rounded up to the microsecond clock of `brisk_proto::Time`.

use std::collections::VecDeque;
use std::time::Duration;

use brisk_proto::Time;

use crate::classify::{Class, Classify, IpPacket, NewChunk, NewData, SctpPacket};
use crate::ids::HostId;
use crate::impair::{Chain, Impairment, Verdict, corrupt, micros};

/// Bytes added to an SCTP packet on the wire by default: IPv4 (20) + UDP (8).
pub const DEFAULT_OVERHEAD: usize = 28;

/// The drop-tail queue in front of a link direction. It holds packets waiting
/// for the transmitter; the packet being serialized is not in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueLimit {
    #[default]
    Unlimited,
    /// At most this many packets wait.
    Packets(usize),
    /// At most this many bytes wait (packet plus overhead bytes each).
    Bytes(usize),
}

/// One direction of a link.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkParams {
    /// Bits per second; 0 is infinitely fast (no serialization delay).
    pub bandwidth_bps: u64,
    /// Propagation delay.
    pub delay: Duration,
    /// The drop-tail queue before the link.
    pub queue: QueueLimit,
    /// Added to each packet's size for serialization: by default 28 (IPv4 +
    /// UDP), for the simulator's bare SCTP packets; 0 for the emulator's IP
    /// packets, which carry their headers.
    pub overhead_bytes: usize,
    /// Applied in order to packets entering this link direction.
    pub impairments: Vec<Impairment>,
}

impl Default for LinkParams {
    /// Infinitely fast, no delay, no queue limit, no impairment.
    fn default() -> Self {
        Self {
            bandwidth_bps: 0,
            delay: Duration::ZERO,
            queue: QueueLimit::Unlimited,
            overhead_bytes: DEFAULT_OVERHEAD,
            impairments: Vec::new(),
        }
    }
}

impl LinkParams {
    /// A link of `bandwidth_bps` (0: infinite) and propagation `delay`, with an
    /// unlimited queue, 28 bytes of overhead and no impairment.
    pub fn new(bandwidth_bps: u64, delay: Duration) -> Self {
        Self {
            bandwidth_bps,
            delay,
            ..Self::default()
        }
    }

    pub fn with_queue(mut self, queue: QueueLimit) -> Self {
        self.queue = queue;
        self
    }

    pub fn with_overhead(mut self, bytes: usize) -> Self {
        self.overhead_bytes = bytes;
        self
    }

    /// Appends impairments to the chain.
    pub fn with_impairments(mut self, imps: impl IntoIterator<Item = Impairment>) -> Self {
        self.impairments.extend(imps);
        self
    }
}

/// Counters of one link direction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Packets that entered the direction.
    pub sent: u64,
    /// Packets handed to the far end (duplicates included).
    pub delivered: u64,
    /// Dropped because the queue was full.
    pub queue_drops: u64,
    /// Dropped by an impairment.
    pub impairment_drops: u64,
    pub corrupted: u64,
    /// Extra copies made by `Duplicate`.
    pub duplicated: u64,
    /// Packets delayed by `Reorder`.
    pub reordered: u64,
    /// Packets that carried a DATA or I-DATA chunk.
    pub data_packets: u64,
    /// Bytes of the packets that entered the direction, as captured (the
    /// simulator's bare SCTP packets, the emulator's IP packets; overhead not
    /// included).
    pub bytes: u64,
    /// The new chunks (numbered from the first TSN seen, 1-based) in the
    /// packets that `DropNewChunks` dropped: which first transmissions were
    /// lost, for the loss-position method to measure their messages.
    pub dropped_new_chunks: Vec<NewChunk>,
}

/// What became of one packet, as recorded by [`crate::Sim::trace`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    ImpairmentDrop,
    QueueDrop,
    Sent {
        /// Transmission started (rounded down to the microsecond).
        start: Time,
        /// Arrival at the far end.
        arrival: Time,
        corrupted: bool,
        duplicated: bool,
        reordered: bool,
    },
}

/// One packet that entered a traced link direction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketRecord {
    pub entered: Time,
    /// The host that sent the packet and the one it is addressed to.
    pub src: HostId,
    pub dst: HostId,
    /// 1-based among all packets of the direction.
    pub ordinal: u64,
    /// 1-based among the DATA-carrying packets, for those that carry DATA.
    pub data_ordinal: Option<u64>,
    /// Bytes of the packet as it entered (see [`LinkStats::bytes`]).
    pub size: usize,
    /// The TSNs of the DATA and I-DATA chunks the packet carried as it entered
    /// (before any corruption), in packet order, or a TCP segment's first
    /// sequence number; empty for other packets.
    pub data_tsns: Vec<u32>,
    pub fate: Fate,
}

impl PacketRecord {
    /// Whether the packet never reached the far end intact: dropped by an
    /// impairment or the queue, or corrupted (its receiver discards it).
    pub fn lost(&self) -> bool {
        match self.fate {
            Fate::ImpairmentDrop | Fate::QueueDrop => true,
            Fate::Sent { corrupted, .. } => corrupted,
        }
    }
}

/// What the link did with one packet that entered it: what the simulator
/// schedules, what a trace records, and what a capture needs to explain it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entered {
    pub outcome: Outcome,
    pub fate: Fate,
    /// 1-based among all packets of the direction.
    pub ordinal: u64,
    /// 1-based among the DATA-carrying packets, for those that carry DATA.
    pub data_ordinal: Option<u64>,
    /// The new chunks a `DropNewChunks` impairment dropped with the packet.
    pub dropped_new_chunks: Vec<NewChunk>,
}

/// What the link does with a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Dropped,
    /// Arrives at the far end at `arrival`, twice if `duplicate`.
    Sent {
        arrival: Time,
        duplicate: bool,
    },
}

/// A change of delay or bandwidth from a time on, in nanoseconds.
type Schedule = Vec<(u64, u64)>;

/// The reason a first-transmission drop (`keyword`) gives for a packet:
/// the units it named that the packet carried, if any. Only the impairment
/// that dropped the packet names them, so the random ones before it did not.
fn first_transmission_drop(
    keyword: &str,
    hit: impl Iterator<Item = String>,
    maybe: &mut Vec<String>,
) -> Option<String> {
    let hit: Vec<String> = hit.collect();
    if hit.is_empty() {
        return None;
    }
    maybe.clear();
    Some(format!(
        "{keyword} pattern (first transmission of {})",
        hit.join("; ")
    ))
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The value in force at `t`: the last change at or before it, else `base`.
fn value_at(base: u64, changes: &Schedule, t: u64) -> u64 {
    match changes.partition_point(|&(at, _)| at <= t) {
        0 => base,
        i => changes[i - 1].1,
    }
}

/// The state of one link direction: computed, not stepped, so the same code
/// serves the simulator's virtual clock and the emulator's wall clock.
#[derive(Debug)]
pub struct Link {
    bandwidth_bps: u64,
    delay_ns: u64,
    queue: QueueLimit,
    overhead: usize,
    delay_changes: Schedule,
    bandwidth_changes: Schedule,
    chain: Chain,
    classifier: Box<dyn Classify>,
    /// Numbers the first transmissions, for `DropNewChunks`.
    new_data: NewData,
    /// When the transmitter is free, ns.
    busy_until: u64,
    /// Arrival (ns) of the last packet that jitter delayed: the next may not
    /// arrive before it.
    last_jittered_arrival: u64,
    /// Packets waiting for the transmitter: (start of transmission ns, wire bytes).
    waiting: VecDeque<(u64, usize)>,
    waiting_bytes: usize,
    ordinal: u64,
    data_ordinal: u64,
    /// The impairments that drop or corrupt packets, in chain order: what
    /// [`Link::explain`] names as the cause.
    lossy: Vec<Impairment>,
    pub stats: LinkStats,
    pub trace: Option<Vec<PacketRecord>>,
}

impl Link {
    /// Link direction number `index` (its random streams) under `seed`,
    /// carrying bare SCTP packets (the simulator's).
    pub fn new(params: &LinkParams, seed: u64, index: u64) -> Self {
        Self::with_classifier(params, seed, index, Box::new(SctpPacket))
    }

    /// [`Link::new`] for packets that `classifier` understands.
    pub fn with_classifier(
        params: &LinkParams,
        seed: u64,
        index: u64,
        classifier: Box<dyn Classify>,
    ) -> Self {
        let mut delay_changes = Schedule::new();
        let mut bandwidth_changes = Schedule::new();
        for imp in &params.impairments {
            match *imp {
                Impairment::DelayChange { at, delay } => {
                    delay_changes.push((nanos(at), nanos(delay)));
                }
                Impairment::BandwidthChange { at, bandwidth_bps } => {
                    bandwidth_changes.push((nanos(at), bandwidth_bps));
                }
                _ => {}
            }
        }
        // Stable: of two changes at the same time, the later-listed wins.
        delay_changes.sort_by_key(|c| c.0);
        bandwidth_changes.sort_by_key(|c| c.0);
        let chain = Chain::new(&params.impairments, seed, index);
        let lossy = params
            .impairments
            .iter()
            .filter(|imp| {
                matches!(
                    imp,
                    Impairment::DropOrdinals { .. }
                        | Impairment::DropNewChunks { .. }
                        | Impairment::DropNewBytes { .. }
                        | Impairment::DropWindow { .. }
                        | Impairment::Bernoulli { .. }
                        | Impairment::GilbertElliott { .. }
                        | Impairment::CorruptOrdinals { .. }
                        | Impairment::Corrupt { .. }
                )
            })
            .cloned()
            .collect();
        Self {
            bandwidth_bps: params.bandwidth_bps,
            delay_ns: nanos(params.delay),
            queue: params.queue,
            overhead: params.overhead_bytes,
            delay_changes,
            bandwidth_changes,
            chain,
            classifier,
            new_data: NewData::default(),
            busy_until: 0,
            last_jittered_arrival: 0,
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            ordinal: 0,
            data_ordinal: 0,
            lossy,
            stats: LinkStats::default(),
            trace: None,
        }
    }

    /// A packet enters at `now`: impairments (which may corrupt `packet` in
    /// place), the queue, serialization and propagation.
    pub fn transmit(&mut self, now: Time, packet: &mut [u8]) -> Outcome {
        self.transmit_from(now, packet, (HostId::new(0), HostId::new(0)))
            .outcome
    }

    /// [`Link::transmit`] for a packet from `ends.0` to `ends.1` (for the trace).
    pub fn transmit_from(
        &mut self,
        now: Time,
        packet: &mut [u8],
        ends: (HostId, HostId),
    ) -> Entered {
        self.enter(now, packet, ends, false)
    }

    /// [`Link::transmit_from`] for a whole IPv4 packet on a link whose
    /// classifier expects something else (the simulator's links, which carry
    /// bare SCTP packets and the TCP model's IP packets alike): classified as
    /// the emulator classifies, and charged as the emulator charges it, its
    /// IP header standing for 20 of the link's `overhead_bytes`.
    pub fn transmit_ip_from(
        &mut self,
        now: Time,
        packet: &mut [u8],
        ends: (HostId, HostId),
    ) -> Entered {
        self.enter(now, packet, ends, true)
    }

    fn enter(&mut self, now: Time, packet: &mut [u8], ends: (HostId, HostId), ip: bool) -> Entered {
        self.ordinal += 1;
        self.stats.sent += 1;
        let class = if ip {
            // Counted as the simulator counts a bare SCTP packet: without
            // the IP header, which the overhead stands for.
            let c = IpPacket::default().classify(packet);
            let size = c.size.saturating_sub(crate::pcap::IPV4_HEADER_LEN);
            self.stats.bytes += size as u64;
            Class { size, ..c }
        } else {
            self.stats.bytes += packet.len() as u64;
            self.classifier.classify(packet)
        };
        let data_ordinal = class.data.then(|| {
            self.data_ordinal += 1;
            self.stats.data_packets += 1;
            self.data_ordinal
        });
        // Read before the impairments act: corruption may garble them.
        let needs_new = self.chain.needs_new_data();
        let units = if class.data && (self.trace.is_some() || needs_new) {
            if ip {
                IpPacket::default().units(packet)
            } else {
                self.classifier.units(packet)
            }
        } else {
            Vec::new()
        };
        let new = if needs_new {
            self.new_data.first_transmissions(&units)
        } else {
            Vec::new()
        };
        let verdict = self.chain.apply(now, self.ordinal, data_ordinal, &new);
        self.stats
            .dropped_new_chunks
            .extend_from_slice(&verdict.dropped_new_chunks);
        let dropped_new_chunks = verdict.dropped_new_chunks.clone();
        let (outcome, fate) = if verdict.drop {
            self.stats.impairment_drops += 1;
            (Outcome::Dropped, Fate::ImpairmentDrop)
        } else {
            self.serialize(now, packet, class, verdict)
        };
        if let Some(trace) = &mut self.trace {
            trace.push(PacketRecord {
                entered: now,
                src: ends.0,
                dst: ends.1,
                ordinal: self.ordinal,
                data_ordinal,
                size: packet.len(),
                data_tsns: units.iter().map(|u| u.key()).collect(),
                fate,
            });
        }
        Entered {
            outcome,
            fate,
            ordinal: self.ordinal,
            data_ordinal,
            dropped_new_chunks,
        }
    }

    /// What the link did to a packet that entered at `now`, in words for a
    /// capture comment, or `None` when it passed untouched: `dropped by
    /// LABEL: CAUSE`, `corrupted by LABEL: CAUSE`, `duplicated by LABEL`,
    /// `held back by LABEL`, joined by `; `. The cause names the impairment
    /// as a pattern line would (`drop-new-chunk 3`, `bernoulli 0.01`) or
    /// the full queue. A random impairment's draw is not kept, so where one
    /// came before the one that matched, both are named (`A or B`).
    pub fn explain(&self, now: Time, entered: &Entered, label: &str) -> Option<String> {
        match entered.fate {
            Fate::QueueDrop => {
                let queue = match self.queue {
                    QueueLimit::Packets(n) => format!("{n} packets"),
                    QueueLimit::Bytes(n) => format!("{n} bytes"),
                    QueueLimit::Unlimited => "unlimited".to_owned(),
                };
                Some(format!(
                    "dropped by {label}: queue overflow (drop-tail queue of {queue} full)"
                ))
            }
            Fate::ImpairmentDrop => Some(format!(
                "dropped by {label}: {}",
                self.cause(now, entered, true)
            )),
            Fate::Sent {
                corrupted,
                duplicated,
                reordered,
                ..
            } => {
                let mut words = Vec::new();
                if corrupted {
                    words.push(format!(
                        "corrupted by {label}: {} (the receiver's checksum fails)",
                        self.cause(now, entered, false)
                    ));
                }
                if duplicated {
                    words.push(format!("duplicated by {label}: delivered twice"));
                }
                if reordered {
                    words.push(format!("held back by {label}: reorder"));
                }
                (!words.is_empty()).then(|| words.join("; "))
            }
        }
    }

    /// The impairment that dropped (`drop`) or corrupted the packet.
    fn cause(&self, now: Time, entered: &Entered, drop: bool) -> String {
        let counted = |data_only: bool| {
            if data_only {
                entered.data_ordinal
            } else {
                Some(entered.ordinal)
            }
        };
        let ordinal_words = |data_only: bool, n: u64| {
            if data_only {
                format!("DATA packet {n}")
            } else {
                format!("packet {n}")
            }
        };
        let at = now.as_micros();
        // Random impairments that may have acted, then the certain one.
        let mut maybe = Vec::new();
        for imp in &self.lossy {
            let certain = match (drop, imp) {
                (
                    true,
                    Impairment::DropOrdinals {
                        ordinals,
                        data_only,
                    },
                )
                | (
                    false,
                    Impairment::CorruptOrdinals {
                        ordinals,
                        data_only,
                    },
                ) => counted(*data_only)
                    .filter(|n| ordinals.contains(n))
                    .map(|n| {
                        let keyword = match (drop, *data_only) {
                            (true, false) => "drop",
                            (true, true) => "drop-data",
                            (false, false) => "corrupt-at",
                            (false, true) => "corrupt-data-at",
                        };
                        format!("{keyword} pattern ({})", ordinal_words(*data_only, n))
                    }),
                (true, Impairment::DropNewChunks { chunks }) => {
                    let hit = entered
                        .dropped_new_chunks
                        .iter()
                        .filter(|c| chunks.contains(&c.number))
                        .map(|c| format!("chunk {}, TSN {}", c.number, c.tsn));
                    first_transmission_drop("drop-new-chunk", hit, &mut maybe)
                }
                (true, Impairment::DropNewBytes { bytes }) => {
                    let hit = entered.dropped_new_chunks.iter().flat_map(|c| {
                        bytes
                            .iter()
                            .filter(|&&b| c.carries_byte(b))
                            .map(move |b| format!("byte {b}, segment at seq {}", c.tsn))
                    });
                    first_transmission_drop("drop-new-byte", hit, &mut maybe)
                }
                (true, Impairment::DropWindow { from, to }) => {
                    (micros(*from) <= at && at < micros(*to)).then(|| {
                        format!(
                            "loss window {} to {}",
                            brisk_proto::config::format_duration(*from),
                            brisk_proto::config::format_duration(*to)
                        )
                    })
                }
                (true, Impairment::Bernoulli { p }) => {
                    maybe.push(format!("bernoulli {p} (random loss)"));
                    None
                }
                (true, Impairment::GilbertElliott { p, r, .. }) => {
                    maybe.push(format!("gilbert {p} {r} (Gilbert-Elliott loss)"));
                    None
                }
                (false, Impairment::Corrupt { p }) => {
                    maybe.push(format!("corrupt {p} (random bit errors)"));
                    None
                }
                _ => None,
            };
            if let Some(c) = certain {
                maybe.push(c);
                break;
            }
        }
        match maybe.len() {
            0 => "an impairment".to_owned(),
            _ => maybe.join(" or "),
        }
    }

    fn serialize(
        &mut self,
        now: Time,
        packet: &mut [u8],
        class: Class,
        verdict: Verdict,
    ) -> (Outcome, Fate) {
        let now_ns = now.as_micros().saturating_mul(1000);
        // Packets whose transmission has started have left the queue.
        while let Some(&(start, bytes)) = self.waiting.front() {
            if start > now_ns {
                break;
            }
            self.waiting.pop_front();
            self.waiting_bytes -= bytes;
        }
        let wire = class.size + self.overhead;
        let start = self.busy_until.max(now_ns);
        if start > now_ns {
            let full = match self.queue {
                QueueLimit::Unlimited => false,
                QueueLimit::Packets(n) => self.waiting.len() >= n,
                QueueLimit::Bytes(n) => self.waiting_bytes + wire > n,
            };
            if full {
                self.stats.queue_drops += 1;
                return (Outcome::Dropped, Fate::QueueDrop);
            }
            self.waiting.push_back((start, wire));
            self.waiting_bytes += wire;
        }
        let bandwidth = value_at(self.bandwidth_bps, &self.bandwidth_changes, start);
        let serialization = match bandwidth {
            0 => 0,
            bps => {
                let bits = wire as u128 * 8;
                u64::try_from((bits * 1_000_000_000).div_ceil(u128::from(bps))).unwrap_or(u64::MAX)
            }
        };
        let finish = start.saturating_add(serialization);
        self.busy_until = finish;
        let delay = value_at(self.delay_ns, &self.delay_changes, start);
        let extra = nanos(verdict.extra);
        let mut arrival_ns = finish.saturating_add(delay).saturating_add(extra);
        if !verdict.jitter.is_zero() {
            // Jitter never lets a packet overtake the one in front of it.
            arrival_ns = arrival_ns
                .saturating_add(nanos(verdict.jitter))
                .max(self.last_jittered_arrival);
            self.last_jittered_arrival = arrival_ns;
        }
        let tick = nanos(verdict.tick);
        if tick > 0 {
            arrival_ns = arrival_ns.div_ceil(tick).saturating_mul(tick);
        }
        let arrival = Time::from_micros(arrival_ns.div_ceil(1000));
        let corrupted = verdict
            .corrupt
            .is_some_and(|w| corrupt(packet, class.corrupt_from, w));
        self.stats.corrupted += u64::from(corrupted);
        self.stats.duplicated += u64::from(verdict.duplicate);
        self.stats.reordered += u64::from(extra > 0);
        let fate = Fate::Sent {
            start: Time::from_micros(start / 1000),
            arrival,
            corrupted,
            duplicated: verdict.duplicate,
            reordered: extra > 0,
        };
        let outcome = Outcome::Sent {
            arrival,
            duplicate: verdict.duplicate,
        };
        (outcome, fate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn arrival(o: Outcome) -> Time {
        match o {
            Outcome::Sent { arrival, .. } => arrival,
            Outcome::Dropped => panic!("dropped"),
        }
    }

    #[test]
    fn a_1000_byte_packet_over_1_mbit_with_10_ms_arrives_after_serialization_and_delay() {
        let mut link = Link::new(&LinkParams::new(1_000_000, ms(10)), 1, 0);
        // (1000 + 28) * 8 bits at 1 Mbit/s = 8.224 ms.
        let a = arrival(link.transmit(Time::ZERO, &mut [0u8; 1000]));
        assert_eq!(a, Time::from_micros(18_224));
    }

    #[test]
    fn jitter_delays_each_packet_by_up_to_its_maximum_and_never_reorders() {
        let params = LinkParams::new(100_000_000, ms(10))
            .with_impairments(vec![Impairment::Jitter { max: ms(5) }]);
        let mut link = Link::new(&params, 7, 0);
        // Packets 100 us apart: a delayed one holds back those behind it.
        let mut last = Time::ZERO;
        for i in 0..200u64 {
            let sent = Time::from_micros(i * 100);
            let a = arrival(link.transmit(sent, &mut [0u8; 100]));
            assert!(a >= last, "packet {i} overtook the one before");
            assert!(a >= sent + ms(10), "packet {i}");
            last = a;
        }
        // Packets 20 ms apart: each gets its own uniform extra delay.
        let mut spread = Vec::new();
        for i in 0..200u64 {
            let sent = Time::from_millis(100 + i * 20);
            let a = arrival(link.transmit(sent, &mut [0u8; 100]));
            // 128 bytes at 100 Mbit/s take 10.24 us.
            spread.push(a.since(sent + ms(10)));
        }
        let max = spread.iter().max().copied().unwrap_or_default();
        assert!(
            max > ms(4) && max <= ms(5) + ms(1),
            "extra delays up to {max:?}"
        );
        assert!(
            spread.iter().any(|d| *d < ms(1)),
            "some packets get little extra"
        );
    }

    #[test]
    fn a_tick_releases_packets_only_on_its_multiples() {
        let params = LinkParams::new(0, Duration::from_micros(10_300))
            .with_impairments(vec![Impairment::Tick { period: ms(1) }]);
        let mut link = Link::new(&params, 1, 0);
        let a = arrival(link.transmit(Time::from_micros(250), &mut [0u8; 100]));
        assert_eq!(a, Time::from_millis(11));
        let b = arrival(link.transmit(Time::from_millis(2), &mut [0u8; 100]));
        assert_eq!(b, Time::from_millis(13));
    }

    #[test]
    fn back_to_back_packets_queue_behind_each_other() {
        let mut link = Link::new(&LinkParams::new(1_000_000, ms(10)), 1, 0);
        let first = arrival(link.transmit(Time::ZERO, &mut [0u8; 1000]));
        let second = arrival(link.transmit(Time::ZERO, &mut [0u8; 1000]));
        assert_eq!(second - first, Duration::from_micros(8_224));
        // A packet entering after the link went idle does not wait.
        let later = arrival(link.transmit(Time::from_millis(100), &mut [0u8; 1000]));
        assert_eq!(later, Time::from_micros(118_224));
    }

    #[test]
    fn a_two_packet_queue_drops_the_fourth_of_four_simultaneous_packets() {
        let params = LinkParams::new(1_000_000, ms(10)).with_queue(QueueLimit::Packets(2));
        let mut link = Link::new(&params, 1, 0);
        let outcomes: Vec<bool> = (0..4)
            .map(|_| link.transmit(Time::ZERO, &mut [0u8; 100]) != Outcome::Dropped)
            .collect();
        assert_eq!(outcomes, [true, true, true, false]);
        assert_eq!(link.stats.queue_drops, 1);
        // Once the first has left and the second is on the wire, one slot is free.
        let t = Time::from_micros(1_024); // 128 * 8 bits at 1 Mbit/s
        assert_ne!(link.transmit(t, &mut [0u8; 100]), Outcome::Dropped);
        assert_eq!(link.transmit(t, &mut [0u8; 100]), Outcome::Dropped);
    }

    #[test]
    fn a_byte_limited_queue_counts_packet_and_overhead_bytes() {
        // Room for two waiting packets of 100 + 28 bytes, not three.
        let params = LinkParams::new(1_000_000, ms(1)).with_queue(QueueLimit::Bytes(300));
        let mut link = Link::new(&params, 1, 0);
        let kept = (0..5)
            .filter(|_| link.transmit(Time::ZERO, &mut [0u8; 100]) != Outcome::Dropped)
            .count();
        assert_eq!(kept, 3, "one on the wire, two waiting");
    }

    #[test]
    fn zero_bandwidth_means_no_serialization_and_no_queueing() {
        let params = LinkParams::new(0, ms(5)).with_queue(QueueLimit::Packets(0));
        let mut link = Link::new(&params, 1, 0);
        for _ in 0..10 {
            let a = arrival(link.transmit(Time::ZERO, &mut [0u8; 1500]));
            assert_eq!(a, Time::from_millis(5));
        }
    }

    #[test]
    fn fast_links_do_not_accumulate_rounding() {
        // 100 + 28 bytes at 1 Gbit/s: 1.024 us each; 1000 of them take 1.024 ms.
        let mut link = Link::new(&LinkParams::new(1_000_000_000, Duration::ZERO), 1, 0);
        let mut last = Time::ZERO;
        for _ in 0..1000 {
            last = arrival(link.transmit(Time::ZERO, &mut [0u8; 100]));
        }
        assert_eq!(last, Time::from_micros(1_024));
    }

    #[test]
    fn delay_and_bandwidth_changes_apply_from_their_time_on() {
        let params = LinkParams::new(1_000_000, ms(10)).with_impairments([
            Impairment::DelayChange {
                at: Duration::from_secs(1),
                delay: ms(50),
            },
            Impairment::BandwidthChange {
                at: Duration::from_secs(2),
                bandwidth_bps: 2_000_000,
            },
        ]);
        let mut link = Link::new(&params, 1, 0);
        let at = |link: &mut Link, t: Time| arrival(link.transmit(t, &mut [0u8; 1000])) - t;
        assert_eq!(
            at(&mut link, Time::from_millis(900)),
            Duration::from_micros(18_224)
        );
        assert_eq!(
            at(&mut link, Time::from_secs(1)),
            Duration::from_micros(58_224)
        );
        assert_eq!(
            at(&mut link, Time::from_secs(2)),
            Duration::from_micros(54_112)
        );
        // A packet queued before the change but starting after it sees the new values.
        let mut link = Link::new(&params, 1, 0);
        let t = Time::from_micros(995_000);
        link.transmit(t, &mut [0u8; 1000]);
        let second = arrival(link.transmit(t, &mut [0u8; 1000]));
        // Starts at 1.003224 s, after the delay change.
        assert_eq!(second, Time::from_micros(995_000 + 2 * 8_224 + 50_000));
    }

    #[test]
    fn a_reordered_packet_arrives_extra_late_and_is_overtaken() {
        let params = LinkParams::new(0, ms(10)).with_impairments([Impairment::Reorder {
            p: 1.0,
            extra: ms(20),
        }]);
        let mut link = Link::new(&params, 1, 0);
        assert_eq!(
            arrival(link.transmit(Time::ZERO, &mut [0u8; 10])),
            Time::from_millis(30)
        );
        assert_eq!(link.stats.reordered, 1);
    }

    #[test]
    fn corrupted_packets_still_take_their_link_time() {
        let params =
            LinkParams::new(1_000_000, ms(10)).with_impairments([Impairment::CorruptOrdinals {
                ordinals: vec![1],
                data_only: false,
            }]);
        let mut link = Link::new(&params, 1, 0);
        let mut p = [7u8; 1000];
        let first = arrival(link.transmit(Time::ZERO, &mut p));
        assert_ne!(p, [7u8; 1000]);
        assert_eq!(first, Time::from_micros(18_224));
        let second = arrival(link.transmit(Time::ZERO, &mut [0u8; 1000]));
        assert_eq!(second, Time::from_micros(18_224 + 8_224));
        assert_eq!(link.stats.corrupted, 1);
    }

    #[test]
    fn impairment_drops_take_no_link_time_and_are_counted() {
        let params =
            LinkParams::new(1_000_000, ms(10)).with_impairments([Impairment::DropOrdinals {
                ordinals: vec![1],
                data_only: false,
            }]);
        let mut link = Link::new(&params, 1, 0);
        assert_eq!(
            link.transmit(Time::ZERO, &mut [0u8; 1000]),
            Outcome::Dropped
        );
        let second = arrival(link.transmit(Time::ZERO, &mut [0u8; 1000]));
        assert_eq!(second, Time::from_micros(18_224));
        assert_eq!(link.stats.impairment_drops, 1);
        assert_eq!(link.stats.sent, 2);
    }
}
