//! Impairments: what a link direction does to the packets entering it, in the
//! spirit of KauNet patterns (packet-driven and time-driven loss, bit errors,
//! delay and bandwidth changes, reordering, duplication).
//!
//! Each impairment of each link direction draws from its own random stream, so
//! adding or changing one leaves every other's draws as they were.

use std::time::Duration;

use brisk_proto::Time;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::classify::NewChunk;
use crate::rng::{Stream, stream};

/// One impairment of a link direction. Ordinals are 1-based and count the
/// packets entering the direction (before any impairment acts); with
/// `data_only` they count only packets carrying a DATA or I-DATA chunk.
#[derive(Debug, Clone, PartialEq)]
pub enum Impairment {
    /// Drop the listed 1-based ordinals of packets on this link direction;
    /// with `data_only`, count only packets carrying a DATA or I-DATA chunk
    /// (KauNet-style packet-driven loss: retransmissions and redundant copies
    /// count too).
    DropOrdinals { ordinals: Vec<u64>, data_only: bool },
    /// Drop the packet that carries the first transmission of the k-th new
    /// DATA chunk, for each listed 1-based k: chunks are numbered by TSN from
    /// the first one the link sees, and only a TSN above all seen before is
    /// new, so retransmissions and redundant copies never shift the count.
    /// This is what a loss-position study means (seed 000).
    DropNewChunks { chunks: Vec<u64> },
    /// Drop the TCP segment that carries the first transmission of stream
    /// byte k, for each listed 1-based k, counted per connection and
    /// direction from the first payload byte the link sees. A message
    /// stream's k-th message starts at a known byte, so this loses exactly
    /// that message's first transmission however the sender packs its
    /// segments (Linux coalesces messages that queue behind a full window).
    /// SCTP packets carry no stream bytes and are never dropped by it.
    DropNewBytes { bytes: Vec<u64> },
    /// Drop every packet entering at a time `t` with `from <= t < to`.
    DropWindow { from: Duration, to: Duration },
    /// Drop each packet with probability `p`.
    Bernoulli { p: f64 },
    /// Two-state Gilbert-Elliott: per packet, move good->bad with `p`,
    /// bad->good with `r`, then lose the packet with the new state's
    /// probability. Starts in the good state.
    GilbertElliott {
        p: f64,
        r: f64,
        loss_good: f64,
        loss_bad: f64,
    },
    /// Corrupt the listed ordinals (counted as for `DropOrdinals`).
    CorruptOrdinals { ordinals: Vec<u64>, data_only: bool },
    /// Corrupt each packet with probability `p` (a packet error rate).
    Corrupt { p: f64 },
    /// Packets starting transmission at or after `at` see propagation delay `delay`.
    DelayChange { at: Duration, delay: Duration },
    /// Packets starting transmission at or after `at` are serialized at
    /// `bandwidth_bps` (0: no serialization delay).
    BandwidthChange { at: Duration, bandwidth_bps: u64 },
    /// With probability `p`, the packet arrives `extra` later than it would
    /// (so later packets may overtake it).
    Reorder { p: f64, extra: Duration },
    /// With probability `p`, the packet is delivered twice (the copy arrives
    /// with the original and takes no extra link time).
    Duplicate { p: f64 },
    /// Each packet is delayed by a uniform extra amount from 0 to `max`, but
    /// never arrives before the packet in front of it: jitter without
    /// reordering (a queue that varies, not a path that splits).
    Jitter { max: Duration },
    /// Packets leave the link only on ticks of `period` (arrivals round up
    /// to the next multiple): Dummynet's clock at 1 ms (HZ 1000).
    Tick { period: Duration },
}

impl Impairment {
    /// A number for each kind, naming its random stream.
    fn kind(&self) -> u64 {
        match self {
            Impairment::DropOrdinals { .. } => 1,
            Impairment::DropWindow { .. } => 2,
            Impairment::Bernoulli { .. } => 3,
            Impairment::GilbertElliott { .. } => 4,
            Impairment::CorruptOrdinals { .. } => 5,
            Impairment::Corrupt { .. } => 6,
            Impairment::DelayChange { .. } => 7,
            Impairment::BandwidthChange { .. } => 8,
            Impairment::Reorder { .. } => 9,
            Impairment::Duplicate { .. } => 10,
            Impairment::DropNewChunks { .. } => 11,
            Impairment::Jitter { .. } => 12,
            Impairment::Tick { .. } => 13,
            Impairment::DropNewBytes { .. } => 14,
        }
    }
}

/// What the impairment chain decided for one packet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    pub drop: bool,
    /// A random word choosing the corrupted byte and its bit mask.
    pub corrupt: Option<u64>,
    pub duplicate: bool,
    /// Extra delay from reordering.
    pub extra: Duration,
    /// Extra delay from jitter (never reorders).
    pub jitter: Duration,
    /// Arrivals round up to multiples of this (zero: no tick).
    pub tick: Duration,
    /// DropNewChunks dropped the packet: the new chunks it carried.
    pub dropped_new_chunks: Vec<NewChunk>,
}

/// One impairment with its random stream and state.
#[derive(Debug, Clone)]
struct Stage {
    imp: Impairment,
    rng: ChaCha8Rng,
    /// Gilbert-Elliott: in the bad state.
    bad: bool,
}

/// The impairments of one link direction, applied in order.
#[derive(Debug, Clone)]
pub struct Chain {
    stages: Vec<Stage>,
}

/// The ordinal an ordinal list refers to, if this packet has one.
fn counted(data_only: bool, ordinal: u64, data_ordinal: Option<u64>) -> Option<u64> {
    if data_only {
        data_ordinal
    } else {
        Some(ordinal)
    }
}

/// `rng` says yes with probability `p` (never panics: NaN is never, >1 always).
fn chance(rng: &mut ChaCha8Rng, p: f64) -> bool {
    rng.random::<f64>() < p
}

impl Chain {
    /// The chain for link direction `link` under simulation seed `seed`. An
    /// impairment's stream is named by its kind and how many of that kind come
    /// before it, so inserting an impairment of another kind keeps its draws.
    pub fn new(impairments: &[Impairment], seed: u64, link: u64) -> Self {
        let stages = impairments
            .iter()
            .enumerate()
            .map(|(i, imp)| {
                let kind = imp.kind();
                let nth = impairments[..i].iter().filter(|o| o.kind() == kind).count() as u64;
                let mut imp = imp.clone();
                if let Impairment::DropOrdinals { ordinals, .. }
                | Impairment::CorruptOrdinals { ordinals, .. }
                | Impairment::DropNewChunks { chunks: ordinals }
                | Impairment::DropNewBytes { bytes: ordinals } = &mut imp
                {
                    ordinals.sort_unstable();
                    ordinals.dedup();
                }
                Stage {
                    imp,
                    rng: stream(seed, Stream::Impairment, link, (kind << 32) | nth),
                    bad: false,
                }
            })
            .collect();
        Self { stages }
    }

    /// Whether some impairment needs to know which first transmissions of
    /// data units each packet carries.
    pub fn needs_new_data(&self) -> bool {
        self.stages.iter().any(|s| {
            matches!(
                s.imp,
                Impairment::DropNewChunks { .. } | Impairment::DropNewBytes { .. }
            )
        })
    }

    /// Applies the chain to a packet entering at `now` that carries the
    /// first transmissions `new` (given when [`Chain::needs_new_data`]).
    /// Stops at the first impairment that drops it.
    pub fn apply(
        &mut self,
        now: Time,
        ordinal: u64,
        data_ordinal: Option<u64>,
        new: &[NewChunk],
    ) -> Verdict {
        let mut v = Verdict::default();
        let at = now.as_micros();
        for s in &mut self.stages {
            match &s.imp {
                Impairment::DropNewChunks { chunks } => {
                    v.drop = new.iter().any(|c| chunks.binary_search(&c.number).is_ok());
                    if v.drop {
                        v.dropped_new_chunks = new.to_vec();
                    }
                }
                Impairment::DropNewBytes { bytes } => {
                    v.drop = new.iter().any(|c| {
                        // The first listed byte at or after the segment's
                        // first new byte.
                        let i = bytes.partition_point(|&b| b < c.first_byte);
                        bytes.get(i).is_some_and(|&b| c.carries_byte(b))
                    });
                    if v.drop {
                        v.dropped_new_chunks = new.to_vec();
                    }
                }
                Impairment::DropOrdinals {
                    ordinals,
                    data_only,
                } => {
                    v.drop = counted(*data_only, ordinal, data_ordinal)
                        .is_some_and(|n| ordinals.binary_search(&n).is_ok());
                }
                Impairment::DropWindow { from, to } => {
                    v.drop = micros(*from) <= at && at < micros(*to);
                }
                Impairment::Bernoulli { p } => v.drop = chance(&mut s.rng, *p),
                Impairment::GilbertElliott {
                    p,
                    r,
                    loss_good,
                    loss_bad,
                } => {
                    let switch = if s.bad { *r } else { *p };
                    if chance(&mut s.rng, switch) {
                        s.bad = !s.bad;
                    }
                    let loss = if s.bad { *loss_bad } else { *loss_good };
                    v.drop = chance(&mut s.rng, loss);
                }
                Impairment::CorruptOrdinals {
                    ordinals,
                    data_only,
                } => {
                    let hit = counted(*data_only, ordinal, data_ordinal)
                        .is_some_and(|n| ordinals.binary_search(&n).is_ok());
                    if hit {
                        v.corrupt = Some(s.rng.random());
                    }
                }
                Impairment::Corrupt { p } => {
                    if chance(&mut s.rng, *p) {
                        v.corrupt = Some(s.rng.random());
                    }
                }
                Impairment::Reorder { p, extra } => {
                    if chance(&mut s.rng, *p) {
                        v.extra += *extra;
                    }
                }
                Impairment::Duplicate { p } => {
                    if chance(&mut s.rng, *p) {
                        v.duplicate = true;
                    }
                }
                Impairment::Jitter { max } => {
                    let max = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
                    if max > 0 {
                        v.jitter += Duration::from_nanos(s.rng.random_range(0..=max));
                    }
                }
                Impairment::Tick { period } => v.tick = v.tick.max(*period),
                // Applied by the link at the start of transmission.
                Impairment::DelayChange { .. } | Impairment::BandwidthChange { .. } => {}
            }
            if v.drop {
                return Verdict {
                    drop: true,
                    dropped_new_chunks: std::mem::take(&mut v.dropped_new_chunks),
                    ..Verdict::default()
                };
            }
        }
        v
    }
}

/// A duration in whole microseconds, saturating.
pub fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Flips bits of one byte at or after `from` (when the packet is longer), so
/// the receiver's checksum fails: CRC32c, and the Internet checksum of TCP and
/// UDP, catch every error confined to one byte. `word` chooses the byte and a
/// non-zero mask. Returns false for an empty packet.
pub fn corrupt(packet: &mut [u8], from: usize, word: u64) -> bool {
    let start = if from < packet.len() { from } else { 0 };
    let span = match packet.len() - start {
        0 => return false,
        n => n as u64,
    };
    let index = start + (word % span) as usize;
    let mask = ((word >> 32) % 255 + 1) as u8;
    if let Some(b) = packet.get_mut(index) {
        *b ^= mask;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::{NewData, Unit, carries_data};
    use brisk_proto::wire::chunk::types;

    /// A raw SCTP packet: a zero common header and chunks of these types
    /// (each 4 bytes, value-less; enough for `RawChunks`).
    fn raw(types: &[u8]) -> Vec<u8> {
        let mut p = vec![0u8; 12];
        for &t in types {
            p.extend_from_slice(&[t, 0, 0, 4]);
        }
        p
    }

    /// Runs `n` packets through `imps` and lists the 1-based ordinals of
    /// those dropped; `data` says which ordinals carry DATA.
    fn dropped(imps: &[Impairment], n: u64, data: impl Fn(u64) -> bool) -> Vec<u64> {
        let mut chain = Chain::new(imps, 1, 0);
        let mut data_count = 0;
        (1..=n)
            .filter(|&i| {
                let d = data(i).then(|| {
                    data_count += 1;
                    data_count
                });
                chain.apply(Time::ZERO, i, d, &[]).drop
            })
            .collect()
    }

    #[test]
    fn data_is_recognised_by_chunk_type_without_decoding() {
        assert!(carries_data(&raw(&[types::DATA])));
        assert!(carries_data(&raw(&[types::SACK, types::IDATA])));
        assert!(!carries_data(&raw(&[types::INIT])));
        assert!(!carries_data(&raw(&[types::COOKIE_ECHO, types::SACK])));
        assert!(!carries_data(&[0u8; 5]), "shorter than a header");
        // A lying length stops the walk before the DATA chunk; no panic.
        let mut bad = raw(&[types::SACK]);
        bad[14..16].copy_from_slice(&400u16.to_be_bytes());
        bad.extend_from_slice(&[0, 0, 0, 4]);
        assert!(!carries_data(&bad));
    }

    #[test]
    fn drop_ordinals_drop_exactly_the_listed_packets() {
        let imp = Impairment::DropOrdinals {
            ordinals: vec![12, 5, 6, 5],
            data_only: false,
        };
        assert_eq!(dropped(&[imp], 20, |_| false), [5, 6, 12]);
    }

    #[test]
    fn data_only_ordinals_skip_packets_without_data() {
        // Packets 1..=3 are a handshake; DATA starts at packet 4.
        let imp = Impairment::DropOrdinals {
            ordinals: vec![1, 3],
            data_only: true,
        };
        assert_eq!(dropped(&[imp], 10, |i| i >= 4), [4, 6]);
    }

    #[test]
    fn a_drop_window_drops_packets_entering_inside_it() {
        let mut chain = Chain::new(
            &[Impairment::DropWindow {
                from: Duration::from_millis(1500),
                to: Duration::from_secs(2),
            }],
            1,
            0,
        );
        let mut at = |ms| chain.apply(Time::from_millis(ms), 1, None, &[]).drop;
        assert!(!at(1499));
        assert!(at(1500));
        assert!(at(1999));
        assert!(!at(2000));
    }

    #[test]
    fn bernoulli_loses_about_p_of_the_packets() {
        let lost = dropped(&[Impairment::Bernoulli { p: 0.1 }], 100_000, |_| false).len();
        assert!((9_500..=10_500).contains(&lost), "lost {lost}");
        assert!(dropped(&[Impairment::Bernoulli { p: 0.0 }], 1000, |_| false).is_empty());
        assert_eq!(
            dropped(&[Impairment::Bernoulli { p: 1.0 }], 1000, |_| false).len(),
            1000
        );
    }

    #[test]
    fn gilbert_elliott_long_run_loss_and_burst_length_match_the_model() {
        let (p, r) = (0.01, 0.3);
        let imp = Impairment::GilbertElliott {
            p,
            r,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        let lost = dropped(&[imp], 100_000, |_| false);
        // Stationary share of the bad state: p / (p + r) = 3.23 %.
        let rate = lost.len() as f64 / 100_000.0;
        let expected = p / (p + r);
        assert!(
            (rate - expected).abs() < 0.15 * expected,
            "loss rate {rate}, expected {expected}"
        );
        // Bursts: mean length 1 / r = 3.33 packets.
        let bursts = 1 + lost.windows(2).filter(|w| w[1] != w[0] + 1).count();
        let mean = lost.len() as f64 / bursts as f64;
        assert!((mean - 1.0 / r).abs() < 0.5, "mean burst {mean}");
    }

    #[test]
    fn corrupt_ordinals_mark_the_listed_packets_only() {
        let mut chain = Chain::new(
            &[Impairment::CorruptOrdinals {
                ordinals: vec![2],
                data_only: true,
            }],
            1,
            0,
        );
        let marks: Vec<bool> = [None, Some(1), Some(2), None, Some(3)]
            .into_iter()
            .enumerate()
            .map(|(i, d)| {
                chain
                    .apply(Time::ZERO, i as u64 + 1, d, &[])
                    .corrupt
                    .is_some()
            })
            .collect();
        assert_eq!(marks, [false, false, true, false, false]);
    }

    #[test]
    fn corruption_breaks_the_crc32c_and_stays_past_the_ports_and_tag() {
        use brisk_proto::wire::{ChecksumPolicy, WireError, seal, verify_checksum};
        let mut rng = stream(3, Stream::App, 0, 0);
        for len in [13usize, 16, 40, 1200] {
            let mut p = raw(&[types::DATA]);
            p.resize(len, 0x33);
            seal(&mut p).unwrap();
            for _ in 0..200 {
                let mut q = p.clone();
                assert!(corrupt(&mut q, 12, rng.random()));
                assert_eq!(q[..12], p[..12], "header untouched when a body exists");
                assert!(matches!(
                    verify_checksum(&q, ChecksumPolicy::Verify),
                    Err(WireError::BadChecksum { .. })
                ));
            }
        }
        let mut tiny = vec![1u8; 10];
        assert!(corrupt(&mut tiny, 8, 5));
        assert_eq!(tiny[..8], [1u8; 8]);
        assert!(!corrupt(&mut [], 0, 5));
    }

    #[test]
    fn corrupt_reorder_and_duplicate_fire_at_about_their_rates() {
        let mut chain = Chain::new(
            &[
                Impairment::Corrupt { p: 0.05 },
                Impairment::Reorder {
                    p: 0.1,
                    extra: Duration::from_millis(20),
                },
                Impairment::Duplicate { p: 0.2 },
            ],
            9,
            0,
        );
        let (mut c, mut r, mut d) = (0, 0, 0);
        for i in 1..=20_000 {
            let v = chain.apply(Time::ZERO, i, None, &[]);
            assert!(!v.drop);
            c += u32::from(v.corrupt.is_some());
            d += u32::from(v.duplicate);
            if v.extra > Duration::ZERO {
                assert_eq!(v.extra, Duration::from_millis(20));
                r += 1;
            }
        }
        assert!((800..1200).contains(&c), "corrupted {c}");
        assert!((1700..2300).contains(&r), "reordered {r}");
        assert!((3600..4400).contains(&d), "duplicated {d}");
    }

    #[test]
    fn a_dropped_packet_is_not_also_corrupted_or_duplicated() {
        let mut chain = Chain::new(
            &[
                Impairment::Duplicate { p: 1.0 },
                Impairment::DropOrdinals {
                    ordinals: vec![2],
                    data_only: false,
                },
            ],
            1,
            0,
        );
        assert!(chain.apply(Time::ZERO, 1, None, &[]).duplicate);
        assert_eq!(
            chain.apply(Time::ZERO, 2, None, &[]),
            Verdict {
                drop: true,
                ..Verdict::default()
            }
        );
    }

    #[test]
    fn an_impairments_draws_do_not_depend_on_impairments_of_other_kinds() {
        let pattern = |before: Vec<Impairment>, after: Vec<Impairment>| {
            let mut imps = before;
            imps.push(Impairment::Bernoulli { p: 0.3 });
            imps.extend(after);
            let mut chain = Chain::new(&imps, 4, 2);
            (1..=500)
                .map(|i| chain.apply(Time::ZERO, i, None, &[]).drop)
                .collect::<Vec<_>>()
        };
        let alone = pattern(vec![], vec![]);
        let others = vec![
            Impairment::Corrupt { p: 0.5 },
            Impairment::Duplicate { p: 0.5 },
        ];
        assert_eq!(alone, pattern(vec![], others.clone()));
        assert_eq!(alone, pattern(others, vec![]));
        // Another link direction draws differently.
        let mut other_link = Chain::new(&[Impairment::Bernoulli { p: 0.3 }], 4, 3);
        let other: Vec<bool> = (1..=500)
            .map(|i| other_link.apply(Time::ZERO, i, None, &[]).drop)
            .collect();
        assert_ne!(alone, other);
    }

    #[test]
    fn drop_new_chunks_counts_first_transmissions_by_tsn_only() {
        let mut chain = Chain::new(&[Impairment::DropNewChunks { chunks: vec![3] }], 1, 0);
        let mut numbering = NewData::default();
        let first = u32::MAX - 1; // across the wrap
        let t = |k: u32| first.wrapping_add(k - 1);
        let mut apply = |tsns: &[u32]| {
            let units: Vec<Unit> = tsns.iter().map(|&t| Unit::Tsn(t)).collect();
            let new = numbering.first_transmissions(&units);
            chain.apply(Time::ZERO, 1, Some(1), &new)
        };
        assert!(!apply(&[t(1)]).drop);
        assert!(!apply(&[t(2)]).drop);
        // A retransmission of chunk 1 (a redundant copy, say) is not new.
        assert!(!apply(&[t(1)]).drop);
        // The third new chunk, bundled after a copy of the second.
        let v = apply(&[t(2), t(3), t(4)]);
        assert!(v.drop);
        let numbers: Vec<u64> = v.dropped_new_chunks.iter().map(|c| c.number).collect();
        assert_eq!(numbers, vec![3, 4]);
        assert_eq!(v.dropped_new_chunks[0].tsn, t(3));
        // Its retransmission passes.
        assert!(!apply(&[t(3)]).drop);
        assert!(!apply(&[t(5)]).drop);
    }

    #[test]
    fn drop_new_bytes_loses_the_segment_that_first_sends_the_byte_however_packed() {
        // Messages of 204 bytes (a 4-byte prefix and 200): the 4th starts at
        // byte 613. The sender packs the 3rd and 4th into one segment.
        let mut chain = Chain::new(&[Impairment::DropNewBytes { bytes: vec![613] }], 1, 0);
        let mut numbering = NewData::default();
        let isn = u32::MAX - 300; // across the wrap
        let mut apply = |seq_offset: u32, len: u32| {
            let unit = Unit::Bytes {
                flow: 7,
                seq: isn.wrapping_add(seq_offset),
                len,
            };
            let new = numbering.first_transmissions(&[unit]);
            chain.apply(Time::ZERO, 1, Some(1), &new)
        };
        assert!(!apply(0, 204).drop);
        assert!(!apply(204, 204).drop);
        let v = apply(408, 408);
        assert!(v.drop);
        assert_eq!(v.dropped_new_chunks.len(), 1);
        let c = v.dropped_new_chunks[0];
        assert_eq!((c.first_byte, c.new_bytes), (409, 408));
        // The retransmission, however repacketized, passes.
        assert!(!apply(408, 408).drop);
        assert!(!apply(612, 204).drop);
        // A segment that overlaps old bytes counts only its new ones.
        let v = apply(816, 204);
        assert!(!v.drop);
        // A partial retransmission that also sends new bytes.
        let mut chain = Chain::new(&[Impairment::DropNewBytes { bytes: vec![21] }], 1, 0);
        let mut numbering = NewData::default();
        let mut apply = |seq: u32, len: u32| {
            let new = numbering.first_transmissions(&[Unit::Bytes { flow: 1, seq, len }]);
            (chain.apply(Time::ZERO, 1, Some(1), &new).drop, new)
        };
        assert!(!apply(100, 10).0);
        let (drop, new) = apply(105, 20); // bytes 6..=25, of which 11..=25 new
        assert!(drop);
        assert_eq!((new[0].first_byte, new[0].new_bytes), (11, 15));
        // SCTP chunks carry no stream bytes and are never dropped by it.
        let mut chain = Chain::new(&[Impairment::DropNewBytes { bytes: vec![1] }], 1, 0);
        let new = NewData::default().first_transmissions(&[Unit::Tsn(1)]);
        assert!(!chain.apply(Time::ZERO, 1, Some(1), &new).drop);
    }
}
