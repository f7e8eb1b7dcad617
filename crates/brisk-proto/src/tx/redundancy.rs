//! Redundancy within a byte budget, for streams that are not thin: Linux's
//! redundant data bundling (RDB; Opstad et al., "Latency and fairness
//! trade-off for thin streams using redundant data bundling in TCP", LCN
//! 2015) for SCTP. Seed 001 4.4's redundant bundling works only while fewer
//! than 4 packets are outstanding; a stream of small messages every 16 ms over
//! a 100 ms RTT keeps 6 to 8 out and never qualifies. Here a new packet with
//! room carries unacknowledged chunks in front of its new ones while:
//!
//! - **the trigger** holds (RDB's DPIFL, "dynamic packets in flight limit"):
//!   packets in flight < min RTT / `redundancy_min_itt`, i.e. the stream sends
//!   less often than one packet per minimum ITT; and the stream's
//!   inter-transmission time (ITT) of new-data packets, the smaller of the
//!   smoothed one and the latest, is at least that ITT.
//!   The caller adds that the sender is application-limited (the send queue
//!   drains into this packet, RFC 7661's notion): a bulk sender, back-to-back
//!   and cwnd-limited, never qualifies;
//! - **the budget** allows: a token bucket in bytes. Each packet of new data
//!   earns `budget - 100` percent of its SCTP bytes (its new chunks plus
//!   [`PACKET_OVERHEAD`]); each copy spends its chunk's bytes (it rides in a
//!   packet that leaves anyway: no header of its own). So the copies of the
//!   whole life of the association never exceed `budget - 100` percent of the
//!   bytes it would have sent without them. The bucket holds at most one full
//!   packet of copies, so an idle period, or a stretch of traffic that did
//!   not qualify, banks no credit for a burst of copies later;
//! - **the loss rate** asks for it (`redundancy_residual_loss`,
//!   [`LossRate`]): the share earned is what keeps a chunk's chance of losing
//!   every copy below that residual at the loss rate the sender measures, and
//!   is nothing on a path that has lost nothing, so a clean path pays no
//!   bytes and no latency for copies it does not need. Ordered delivery is
//!   why one copy is not always enough: a chunk lost with its copy holds back
//!   every message behind it until it is repaired, about a round trip.
//!
//! A chunk too large to share a packet with another as large (1 KiB at a
//! 1452-byte MTU) can ride in no later packet of the stream; with
//! `redundancy_copy_probe` it gets a **copy probe**: a copy in a packet of its
//! own half an ITT after it, under the same trigger while the send queue is
//! empty, if no packet carried a copy of it since, paid from the same budget
//! with its packet's headers (`assoc::transmit`, timer `CopyProbe`).
//!
//! Every copy is a retransmission with cause `Bundled`. It stays out of the
//! flight size and the congestion controller (the chunk counts once), out
//! of PR-SCTP's retransmission count (`SentChunk::copies`), restarts no
//! timer, and leaves the RTT probe alone (Karn: a copy within an ITT of the
//! original can only lengthen the sample). Its price beyond the budget: the
//! receiver reports the duplicates and answers them at once (RFC 9260 6.2),
//! so the reverse path carries more SACKs.
//!
//! Which chunks ([`pick`]): those in flight (never one acknowledged by gap, or
//! marked, or in this packet), fewest copies first, then most recent first,
//! and only those that fit. Fewest copies first spreads the protection: every
//! message gets its first copy before any gets a second, so one loss is
//! repaired one ITT later for as many messages as the budget pays for. Most
//! recent first because the newest chunk has no later packet to reveal its
//! loss, while an older one's loss is already being revealed by the SACKs of
//! the packets that followed it (fast retransmit repairs it). The scan looks
//! at the [`SCAN`] most recent chunks only: bounded work per packet whatever
//! the peer acknowledges.

use std::time::Duration;

use crate::config::Config;
use crate::serial::Tsn;
use crate::time::Time;
use crate::tx::loss_rate::LossRate;
use crate::tx::outstanding::{ChunkState, Outstanding};

/// Bytes each packet costs beside its chunks: SCTP's common header (RFC
/// 9260 3.1). The headers below it (IP, and UDP with RFC 6951) are not
/// counted: the core does not know them, and leaving them out of both sides
/// keeps the copies' share of the bytes at the bottleneck below the budget
/// (there, every packet's IP and UDP headers add to what the stream sends
/// without copies, and a copy that rides in a packet of new data adds none).
pub const PACKET_OVERHEAD: u32 = 12;

/// Millionths, the unit of the budget's share.
const MICRO: u64 = 1_000_000;

/// A share (millionths of a percent) rounded up to whole copies.
fn whole_copies(share: u64) -> u32 {
    u32::try_from(share.div_ceil(100 * MICRO)).unwrap_or(u32::MAX)
}

/// The most recent outstanding chunks a packet's bundling looks at.
pub const SCAN: usize = 16;

/// The state of redundancy within a byte budget: the bucket, the stream's
/// inter-transmission time and the minimum RTT the trigger needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Redundancy {
    /// Credit, in byte-percent (bytes times 100), so that every percentage
    /// counts exactly.
    credit: u64,
    /// Smoothed interval between packets of new data.
    itt: Option<Duration>,
    /// The latest interval.
    last_gap: Option<Duration>,
    last_new_packet: Option<Time>,
    /// The smallest RTT measured (RFC 9260 6.3.1 samples).
    min_rtt: Option<Duration>,
    /// Bytes of new data (chunks and [`PACKET_OVERHEAD`]) and
    /// of redundant copies, since the association began: the ratio the
    /// budget bounds.
    base_bytes: u64,
    copy_bytes: u64,
    /// The chunk the armed copy probe would copy (`redundancy_copy_probe`).
    probe: Option<Tsn>,
    /// The copy probe fired: the chunk to copy in a packet of its own.
    probe_due: Option<Tsn>,
    /// The loss rate that the budget follows (`redundancy_residual_loss`).
    loss: LossRate,
}

impl Redundancy {
    /// An RTT measurement (RFC 9260 6.3.1 C5).
    pub fn on_rtt(&mut self, rtt: Duration) {
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
    }

    /// A packet of new data leaves at `now`: the interval since the last one
    /// is an ITT sample (smoothed with RFC 6298's gain of 1/8; a gap counted
    /// at most one min RTT so that an idle period does not make a bulk
    /// sender look sparse for long).
    pub fn on_new_packet(&mut self, now: Time) {
        if let Some(last) = self.last_new_packet {
            let cap = self.min_rtt.unwrap_or(Duration::from_secs(1));
            let gap = now.since(last).min(cap);
            self.itt = Some(self.itt.map_or(gap, |itt| itt * 7 / 8 + gap / 8));
            self.last_gap = Some(gap);
        }
        self.last_new_packet = Some(now);
    }

    /// `bytes` of new data went out (the packet's [`PACKET_OVERHEAD`]
    /// included once): they earn credit for copies, up to one full packet
    /// (`mtu`) of copies for each copy a chunk should get, so that the copy
    /// probes of a chunk as large as a packet can be paid for.
    pub fn earn(&mut self, cfg: &Config, bytes: u32) {
        let share = self.share(cfg);
        let full_packet = u64::try_from(cfg.mtu).unwrap_or(u64::MAX);
        self.base_bytes = self.base_bytes.saturating_add(u64::from(bytes));
        self.credit = self
            .credit
            .saturating_add(u64::from(bytes).saturating_mul(share) / MICRO)
            .min(
                full_packet
                    .saturating_mul(100)
                    .saturating_mul(u64::from(whole_copies(share).max(1))),
            );
    }

    /// The share of the bytes sent that copies may add, in millionths of a
    /// percent: the budget's `budget - 100` percent, or, with
    /// `redundancy_residual_loss`, what the loss rate measured calls for, if
    /// less. A chunk sent `n` times in all is lost for good only if all `n`
    /// are (Bernoulli loss at rate `p`: `p^n`), so keeping that below the
    /// residual loss `e` takes `ln e / ln p` transmissions: that less one
    /// copies a chunk, on average, which is the share of the bytes (a copy
    /// is about the size of its chunk's packet). Nothing on a path that has
    /// lost nothing, or less than `e`.
    fn share(&self, cfg: &Config) -> u64 {
        let budget = u64::from(cfg.redundancy_budget.saturating_sub(100)) * MICRO;
        if cfg.redundancy_residual_loss == 0 || budget == 0 {
            return budget;
        }
        let (p, e) = (self.loss.ppm(), u64::from(cfg.redundancy_residual_loss));
        if p <= e {
            return 0;
        }
        if p >= 1_000_000 {
            return budget;
        }
        let (p, e) = (p as f64 / 1e6, e as f64 / 1e6);
        let copies = e.ln() / p.ln() - 1.0;
        let share = (copies * 100.0 * MICRO as f64).max(0.0);
        budget.min(share as u64)
    }

    /// Whether the budget pays for anything now: on, and (with
    /// `redundancy_residual_loss`) a loss measured above the residual.
    pub fn active(&self, cfg: &Config) -> bool {
        self.share(cfg) > 0
    }

    /// The loss rate the budget follows.
    pub fn loss(&self) -> &LossRate {
        &self.loss
    }

    pub fn loss_mut(&mut self) -> &mut LossRate {
        &mut self.loss
    }

    /// Whether a copy of `bytes` fits the budget now.
    pub fn affords(&self, bytes: u32) -> bool {
        u64::from(bytes) * 100 <= self.credit
    }

    /// A copy of `bytes` went out.
    pub fn spend(&mut self, bytes: u32) {
        self.credit = self.credit.saturating_sub(u64::from(bytes) * 100);
        self.copy_bytes = self.copy_bytes.saturating_add(u64::from(bytes));
    }

    /// DPIFL and ITT: whether the stream is time-critical, with
    /// `packets_in_flight` outstanding packet records (copies do not open
    /// records, so they never make the stream look thinner than it is). The
    /// ITT is the smaller of the smoothed one and the latest interval: one
    /// packet sent hard on the heels of another stops copies at once, and
    /// the smoothed ITT keeps one long pause from starting them.
    pub fn triggered(&self, cfg: &Config, packets_in_flight: u32) -> bool {
        let (Some(min_rtt), Some(smoothed), Some(last)) = (self.min_rtt, self.itt, self.last_gap)
        else {
            return false;
        };
        let itt = smoothed.min(last);
        let min_itt = cfg.redundancy_min_itt.max(Duration::from_micros(1));
        // RDB's DPIFL: packets in flight < min RTT / minimum ITT.
        let limit = min_rtt.as_micros() / min_itt.as_micros();
        u128::from(packets_in_flight) < limit && itt >= min_itt
    }

    /// The copy probe: arms it for `tsn` (the newest chunk, too large to
    /// share a packet), or disarms it (`None`: a newer packet qualified not).
    pub fn arm_probe(&mut self, tsn: Option<Tsn>) {
        self.probe = tsn;
        self.probe_due = None;
    }

    /// The copy probe's timer fired.
    pub fn on_copy_probe_timer(&mut self) {
        self.probe_due = self.probe.take();
    }

    /// The chunk the copy probe copies now, if it fired.
    pub fn probe_due(&self) -> Option<Tsn> {
        self.probe_due
    }

    /// Takes the due copy probe: it goes once.
    pub fn take_probe_due(&mut self) -> Option<Tsn> {
        self.probe_due.take()
    }

    /// When the copy probe of a packet sent now fires, and again after each
    /// copy while more are wanted: the smoothed ITT split evenly among the
    /// copies the chunk should get ([`Self::copies_wanted`]), so that they
    /// all leave before the stream's next packet and none right after
    /// another (a loss burst takes back-to-back packets together).
    pub fn probe_delay(&self, cfg: &Config) -> Option<Duration> {
        let copies = self.copies_wanted(cfg).max(1);
        self.itt.map(|itt| itt / (copies + 1))
    }

    /// How many copies a chunk should get now: the budget's share rounded
    /// up to whole copies (a share of 107% wants 2 copies of some chunks).
    pub fn copies_wanted(&self, cfg: &Config) -> u32 {
        whole_copies(self.share(cfg))
    }

    /// The smoothed inter-transmission time of new data, once measured.
    pub fn itt(&self) -> Option<Duration> {
        self.itt
    }

    /// Bytes of new data (headers included) and of redundant copies sent.
    pub fn bytes(&self) -> (u64, u64) {
        (self.base_bytes, self.copy_bytes)
    }
}

/// The chunks to copy into a packet, in the order to send them: among the
/// [`SCAN`] most recent chunks, those in flight and not in `taken`, fewest
/// copies first, then most recent first; each only if it fits the `room`
/// left and the budget, `afford` saying whether the budget takes `bytes`
/// more. Those that do not fit are passed over (a smaller one may).
pub fn pick(
    outstanding: &Outstanding,
    taken: &[Tsn],
    mut room: usize,
    mut afford: impl FnMut(u32) -> bool,
) -> Vec<Tsn> {
    let mut candidates: Vec<(u32, Tsn, u32)> = outstanding
        .chunks_newest_first()
        .take(SCAN)
        .filter(|c| c.state == ChunkState::InFlight && !taken.contains(&c.tsn))
        .map(|c| (c.copies, c.tsn, c.size()))
        .collect();
    // Stable: equal copies keep the most recent first.
    candidates.sort_by_key(|&(copies, ..)| copies);
    let mut picked = Vec::new();
    let mut spent = 0u32;
    for (_, tsn, size) in candidates {
        let fits = usize::try_from(size).is_ok_and(|s| s <= room);
        if fits && afford(spent.saturating_add(size)) {
            room -= size as usize;
            spent = spent.saturating_add(size);
            picked.push(tsn);
        }
    }
    picked
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::MessageId;
    use crate::path::PathId;
    use crate::tx::send_queue::PendingFragment;

    fn cfg(budget: u32) -> Config {
        Config {
            redundancy_budget: budget,
            ..Config::rfc9260()
        }
    }

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn copies_never_exceed_the_budget_share_of_the_bytes_sent_without_them() {
        // 200%: copies up to as many bytes as the stream sends without them.
        let c = cfg(200);
        let mut r = Redundancy::default();
        for _ in 0..1000 {
            // A 64-byte message: an 80-byte chunk in a 92-byte packet.
            r.earn(&c, 80 + PACKET_OVERHEAD);
            while r.affords(80) {
                r.spend(80);
            }
        }
        let (base, copies) = r.bytes();
        assert_eq!(base, 92_000);
        assert!(copies <= base, "{copies} > {base}");
        assert!(copies >= base - 80, "the budget is used: {copies}");
        // 150%: half.
        let c = cfg(150);
        let mut r = Redundancy::default();
        for _ in 0..1000 {
            r.earn(&c, 140);
            while r.affords(20) {
                r.spend(20);
            }
        }
        let (base, copies) = r.bytes();
        assert!(copies * 2 <= base && copies * 2 >= base - 40, "{copies}");
    }

    #[test]
    fn a_budget_at_or_below_100_percent_or_off_pays_for_nothing() {
        for budget in [0, 50, 100] {
            let mut r = Redundancy::default();
            r.earn(&cfg(budget), 1500);
            assert!(!r.affords(1), "{budget}");
        }
    }

    #[test]
    fn the_share_keeps_the_residual_loss_and_is_none_without_loss() {
        // Residual 0.03%, at most two copies a chunk (300%).
        let c = Config {
            redundancy_residual_loss: 300,
            ..cfg(300)
        };
        let copies_at = |lost: u32| {
            let mut r = Redundancy::default();
            for i in 0..500 {
                r.loss_mut().on_sent();
                if i < lost {
                    r.loss_mut().on_lost();
                }
            }
            for _ in 0..1000 {
                r.earn(&c, 100);
                while r.affords(10) {
                    r.spend(10);
                }
            }
            // Copies per 100 bytes sent.
            r.bytes().1 / 1000
        };
        assert_eq!(copies_at(0), 0, "a path that lost nothing");
        // ln(0.0003) / ln(p) - 1 copies: 0.76 at 1%, 1.07 at 2%, 1.71 at
        // 5%; 2.52 at 10%, held to the budget's 2.
        assert_eq!(copies_at(5), 76);
        assert_eq!(copies_at(10), 107);
        assert_eq!(copies_at(25), 170);
        assert_eq!(copies_at(50), 200);
        // Without a residual: the whole budget, loss or not.
        let whole = Config {
            redundancy_residual_loss: 0,
            ..cfg(200)
        };
        let mut r = Redundancy::default();
        r.earn(&whole, 100);
        assert!(r.active(&whole) && r.affords(100) && !r.affords(101));
        assert!(!Redundancy::default().active(&c));
    }

    #[test]
    fn idle_time_or_a_long_stream_banks_at_most_one_full_packets_credit() {
        let c = cfg(200);
        let mut r = Redundancy::default();
        // 10,000 packets that did not qualify for copies.
        for _ in 0..10_000 {
            r.earn(&c, 1500);
        }
        let full = 1452;
        assert!(r.affords(full) && !r.affords(full + 1));
    }

    #[test]
    fn the_trigger_is_dpifl_and_the_itt_of_new_data() {
        let c = Config {
            redundancy_min_itt: ms(10),
            ..cfg(200)
        };
        let mut r = Redundancy::default();
        assert!(!r.triggered(&c, 1), "no RTT and no ITT yet");
        r.on_rtt(ms(120));
        r.on_rtt(ms(100));
        r.on_rtt(ms(130));
        let mut now = Time::from_millis(1000);
        for _ in 0..40 {
            now = now + ms(16);
            r.on_new_packet(now);
        }
        assert_eq!(r.itt(), Some(ms(16)));
        // min RTT 100 ms / 10 ms: fewer than 10 packets in flight.
        assert!(r.triggered(&c, 7) && r.triggered(&c, 9));
        assert!(!r.triggered(&c, 10));
        // One packet right after another stops copies at once.
        r.on_new_packet(now + ms(2));
        assert!(!r.triggered(&c, 1));
        now = now + ms(2 + 16);
        r.on_new_packet(now);
        assert!(r.triggered(&c, 1));
        // Back-to-back packets: the smoothed ITT falls below 10 ms, and one
        // long pause does not start copies again.
        for _ in 0..20 {
            r.on_new_packet(now);
        }
        assert!(r.itt().unwrap() < ms(10));
        assert!(!r.triggered(&c, 1));
        r.on_new_packet(now + ms(50));
        assert!(!r.triggered(&c, 1));
    }

    #[test]
    fn an_idle_gap_counts_at_most_one_min_rtt_in_the_itt() {
        let mut r = Redundancy::default();
        r.on_rtt(ms(100));
        r.on_new_packet(Time::from_millis(0));
        r.on_new_packet(Time::from_millis(60_000));
        assert_eq!(r.itt(), Some(ms(100)));
    }

    fn frag(len: usize) -> PendingFragment {
        PendingFragment {
            msg: MessageId(0),
            stream_id: crate::serial::StreamId(0),
            ssn: crate::serial::Ssn(0),
            ppid: 0,
            flags: crate::wire::chunk::DataFlags::UNFRAGMENTED,
            payload: bytes::Bytes::from(vec![0u8; len]),
            queued_at: Time::ZERO,
            reliability: crate::message::Reliability::Reliable,
            idata: false,
            mid: 0,
            fsn: 0,
        }
    }

    #[test]
    fn picks_fewest_copies_then_most_recent_and_only_what_fits() {
        let mut o = Outstanding::new(Tsn(1));
        let now = Time::from_millis(1);
        for len in [100, 100, 100, 400] {
            let p = o.begin_packet(now);
            o.send_new(frag(len), now, p, PathId::FIRST);
        }
        // TSN 3 already has a copy.
        let p = o.begin_packet(now);
        assert!(o.rebundle(Tsn(3), now, p, true));
        // Chunks: 1, 2, 3 of 116 bytes, 4 of 416.
        let all = pick(&o, &[], 10_000, |_| true);
        assert_eq!(all, vec![Tsn(4), Tsn(2), Tsn(1), Tsn(3)]);
        // 300 bytes of room: 4 does not fit, 2 and 1 do.
        assert_eq!(pick(&o, &[], 300, |_| true), vec![Tsn(2), Tsn(1)]);
        // The budget takes 200 bytes: 2, and then no other 116-byte chunk.
        assert_eq!(pick(&o, &[], 10_000, |b| b <= 200), vec![Tsn(2)]);
        // Never one in this packet already, nor one acknowledged.
        assert_eq!(pick(&o, &[Tsn(4)], 300, |_| true), vec![Tsn(2), Tsn(1)]);
    }

    #[test]
    fn the_scan_is_bounded_to_the_most_recent_chunks() {
        let mut o = Outstanding::new(Tsn(1));
        let now = Time::from_millis(1);
        for _ in 0..1000 {
            let p = o.begin_packet(now);
            o.send_new(frag(1), now, p, PathId::FIRST);
        }
        let picked = pick(&o, &[], usize::MAX, |_| true);
        assert_eq!(picked.len(), SCAN);
        assert_eq!(picked[0], Tsn(1000));
    }
}
