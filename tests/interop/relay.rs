//! A deterministic lossy UDP relay for interop tests: included with `#[path]`
//! by `crates/brisk/tests/interop.rs`, like `build_peer.rs`.
//!
//! It sits between two SCTP-over-UDP peers (RFC 6951) on 127.0.0.1, on one
//! UDP socket of its own: a datagram from side A's address goes to side B's,
//! one from B's goes to A's, anything else is ignored. Both peers are told the
//! relay's address as the other's. It drops packets by a [`Rule`] written in
//! terms of the DATA chunks one side sends: "the packets carrying the k-th,
//! m-th... new TSN sent by side X" (0-based ordinals, counted over the TSNs
//! the side sends for the first time, never over retransmissions): their
//! first transmission, their first few, or every one. What it dropped is
//! recorded ([`Relay::dropped`]) so that tests assert against the wire, not
//! against an assumption.
//!
//! Classification (the [`Counter`]) is pure and unit-tested below; the relay
//! thread only moves datagrams. A TSN is new when it is beyond (RFC 1982
//! serial arithmetic, RFC 9260 1.6) every TSN the side sent before; anything
//! else is a retransmission.

use std::collections::BTreeSet;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// One of the two peers the relay joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

/// Which packets to drop: those carrying the chosen new TSNs of one side.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Whose DATA is dropped.
    pub side: Side,
    /// 0-based ordinals of that side's new TSNs.
    pub ordinals: BTreeSet<u64>,
    /// How many transmissions of each chosen TSN to drop, the first one
    /// included: 1 drops the first only, `u32::MAX` every one (so the
    /// message can only be abandoned).
    pub transmissions: u32,
    /// Also drop the first `.1` packets of the side carrying a chunk of type
    /// `.0` (e.g. FORWARD TSN, 192).
    pub chunk_drops: Option<(u8, u32)>,
}

impl Rule {
    /// Drops the first transmission of the chosen new TSNs of `side`.
    pub fn first_transmission(side: Side, ordinals: &[u64]) -> Rule {
        Rule::transmissions(side, ordinals, 1)
    }

    /// Drops every transmission of the chosen new TSNs of `side`.
    pub fn every_transmission(side: Side, ordinals: &[u64]) -> Rule {
        Rule::transmissions(side, ordinals, u32::MAX)
    }

    /// Drops the first `k` transmissions of the chosen new TSNs of `side`.
    pub fn transmissions(side: Side, ordinals: &[u64], k: u32) -> Rule {
        Rule {
            side,
            ordinals: ordinals.iter().copied().collect(),
            transmissions: k,
            chunk_drops: None,
        }
    }

    /// Also drops the first `count` packets carrying a chunk of type `typ`.
    pub fn and_chunks(self, typ: u8, count: u32) -> Rule {
        Rule {
            chunk_drops: Some((typ, count)),
            ..self
        }
    }
}

/// A DATA chunk the relay dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct DroppedChunk {
    /// The ordinal of its TSN among the side's new TSNs.
    pub ordinal: u64,
    pub tsn: u32,
    /// Whether the dropped packet carried it for the first time.
    pub first: bool,
}

/// The TSNs of the DATA and I-DATA chunks of one SCTP packet (brisk-net's
/// bounds-checked walker: garbage is "no data").
fn packet_tsns(sctp: &[u8]) -> Vec<u32> {
    brisk_net::classify::data_tsns(sctp)
}

/// Whether an SCTP packet carries a chunk of type `typ` (bounds-checked
/// walk of the chunk headers: garbage is "no").
fn carries_chunk(sctp: &[u8], typ: u8) -> bool {
    use brisk_proto::wire::{CommonHeader, RawChunks};
    sctp.get(CommonHeader::LEN..).is_some_and(|area| {
        RawChunks::new(area)
            .map_while(Result::ok)
            .any(|c| c.typ == typ)
    })
}

/// `a` is beyond `b` in serial arithmetic (RFC 1982 with SERIAL_BITS 32).
fn serial_gt(a: u32, b: u32) -> bool {
    a != b && a.wrapping_sub(b) < 1 << 31
}

/// Counts one side's new TSNs and tells retransmissions apart.
#[derive(Debug, Default)]
pub struct Counter {
    highest: Option<u32>,
    /// New TSNs seen so far: the next new TSN's ordinal.
    next_ordinal: u64,
    /// The TSNs chosen by the rule, once seen, with the number of their
    /// transmissions dropped so far.
    chosen: Vec<(u32, u32)>,
    /// Packets dropped for `Rule::chunk_drops`.
    chunk_drops: u32,
}

/// What the relay decides for one packet of the ruled side.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// (ordinal, TSN) of each chunk carried for the first time.
    pub new: Vec<(u64, u32)>,
    /// TSNs carried again.
    pub retransmitted: Vec<u32>,
    pub drop: bool,
    /// Dropped for `Rule::chunk_drops`.
    pub chunk_drop: bool,
}

impl Counter {
    /// Classifies one SCTP packet of the side under `rule` (the side check
    /// is the caller's); `rule` may be `None` to only count.
    pub fn classify(&mut self, sctp: &[u8], rule: Option<&Rule>) -> Verdict {
        let mut v = Verdict::default();
        if let Some((typ, count)) = rule.and_then(|r| r.chunk_drops)
            && self.chunk_drops < count
            && carries_chunk(sctp, typ)
        {
            self.chunk_drops += 1;
            v.drop = true;
            v.chunk_drop = true;
        }
        for tsn in packet_tsns(sctp) {
            if self.highest.is_none_or(|h| serial_gt(tsn, h)) {
                // Gaps in a side's own TSNs do not happen (RFC 9260 6.1):
                // its first transmissions come in TSN order.
                self.highest = Some(tsn);
                let ordinal = self.next_ordinal;
                self.next_ordinal += 1;
                if let Some(r) = rule
                    && r.ordinals.contains(&ordinal)
                    && r.transmissions > 0
                {
                    v.drop = true;
                    self.chosen.push((tsn, 1));
                }
                v.new.push((ordinal, tsn));
            } else {
                if let Some(r) = rule
                    && let Some((_, dropped)) = self.chosen.iter_mut().find(|(t, _)| *t == tsn)
                    && *dropped < r.transmissions
                {
                    *dropped += 1;
                    v.drop = true;
                }
                v.retransmitted.push(tsn);
            }
        }
        v
    }

    /// The ordinal of a TSN seen before (new or chosen), if known.
    fn ordinal_of(&self, tsn: u32) -> Option<u64> {
        let (h, next) = (self.highest?, self.next_ordinal);
        // Ordinals are consecutive with TSNs: the side sends no gaps.
        let back = u64::from(h.wrapping_sub(tsn));
        (back < next).then(|| next - 1 - back)
    }
}

/// What the relay has seen and done.
#[derive(Debug, Default)]
struct Log {
    dropped: Vec<DroppedChunk>,
    dropped_packets: u64,
    /// Of which dropped for `Rule::chunk_drops`.
    chunk_drops: u64,
    /// Retransmitted TSNs the ruled side sent, forwarded or not.
    retransmitted: Vec<u32>,
    new_tsns: u64,
    highest: Option<u32>,
}

/// The relay: a thread forwarding between A and B until dropped.
pub struct Relay {
    addr: SocketAddr,
    log: Arc<Mutex<Log>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Relay {
    /// Starts relaying between `a` and `b` (both on 127.0.0.1), dropping by `rule`.
    #[allow(dead_code)] // the relay's own tests
    pub fn start(a: SocketAddr, b: SocketAddr, rule: Rule) -> Relay {
        Self::start_at(0, a, b, rule)
    }

    /// As [`start`](Self::start), on UDP port `port` of 127.0.0.1: a port
    /// handed out beside `a`'s and `b`'s, so that binding port 0 cannot take
    /// one of theirs before they are bound.
    pub fn start_at(port: u16, a: SocketAddr, b: SocketAddr, rule: Rule) -> Relay {
        let socket = UdpSocket::bind(("127.0.0.1", port)).expect("relay socket");
        socket
            .set_read_timeout(Some(Duration::from_millis(20)))
            .expect("relay read timeout");
        let addr = socket.local_addr().expect("relay address");
        let log = Arc::new(Mutex::new(Log::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (log, stop) = (log.clone(), stop.clone());
            std::thread::spawn(move || relay(socket, a, b, rule, &log, &stop))
        };
        Relay {
            addr,
            log,
            stop,
            thread: Some(thread),
        }
    }

    /// Where both peers send.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The DATA chunks dropped so far, in the order dropped.
    pub fn dropped(&self) -> Vec<DroppedChunk> {
        self.lock().dropped.clone()
    }

    /// Ordinals of the new TSNs whose first transmission was dropped.
    pub fn dropped_first(&self) -> BTreeSet<u64> {
        self.lock()
            .dropped
            .iter()
            .filter(|d| d.first)
            .map(|d| d.ordinal)
            .collect()
    }

    /// Packets dropped so far.
    pub fn dropped_packets(&self) -> u64 {
        self.lock().dropped_packets
    }

    /// Packets dropped for `Rule::chunk_drops` so far.
    pub fn chunk_drops(&self) -> u64 {
        self.lock().chunk_drops
    }

    /// TSNs the ruled side sent more than once (each retransmission).
    pub fn retransmitted(&self) -> Vec<u32> {
        self.lock().retransmitted.clone()
    }

    /// New TSNs the ruled side sent.
    pub fn new_tsns(&self) -> u64 {
        self.lock().new_tsns
    }

    /// The highest TSN the ruled side sent, once it sent DATA.
    pub fn highest_tsn(&self) -> Option<u32> {
        self.lock().highest
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn relay(
    socket: UdpSocket,
    a: SocketAddr,
    b: SocketAddr,
    rule: Rule,
    log: &Mutex<Log>,
    stop: &AtomicBool,
) {
    let mut counter = Counter::default();
    let mut buf = vec![0u8; 65536];
    while !stop.load(Ordering::Relaxed) {
        let (n, from) = match socket.recv_from(&mut buf) {
            Ok(x) => x,
            Err(_) => continue, // timeout (or an ICMP report): look at `stop`
        };
        let (side, to) = match from {
            f if f == a => (Side::A, b),
            f if f == b => (Side::B, a),
            _ => continue,
        };
        let packet = &buf[..n];
        if side == rule.side {
            let v = counter.classify(packet, Some(&rule));
            let mut l = log.lock().unwrap_or_else(|p| p.into_inner());
            l.new_tsns += v.new.len() as u64;
            l.highest = counter.highest;
            l.retransmitted.extend(&v.retransmitted);
            if v.drop {
                l.dropped_packets += 1;
                l.chunk_drops += u64::from(v.chunk_drop);
                for &(ordinal, tsn) in &v.new {
                    l.dropped.push(DroppedChunk {
                        ordinal,
                        tsn,
                        first: true,
                    });
                }
                for &tsn in &v.retransmitted {
                    if let Some(ordinal) = counter.ordinal_of(tsn) {
                        l.dropped.push(DroppedChunk {
                            ordinal,
                            tsn,
                            first: false,
                        });
                    }
                }
                continue;
            }
        }
        // A send error (the peer gone) is the peer's business: keep relaying.
        let _ = socket.send_to(packet, to);
    }
}

#[cfg(test)]
mod relay_tests {
    use super::*;

    /// An SCTP packet (common header, then the chunks) with DATA chunks of
    /// these TSNs, and a SACK chunk in front when `sack`.
    fn packet(tsns: &[u32], sack: bool) -> Vec<u8> {
        let mut p = vec![0x13, 0x88, 0x13, 0x88, 0, 0, 0, 1, 0, 0, 0, 0];
        if sack {
            // SACK: cum TSN, a_rwnd, no gap blocks, no dups.
            p.extend([3, 0, 0, 16]);
            p.extend([0u8; 12]);
        }
        for &tsn in tsns {
            // DATA, B and E bits, 16 + 3 bytes of payload, padded.
            p.extend([0, 3, 0, 19]);
            p.extend(tsn.to_be_bytes());
            p.extend([0, 0, 0, 0, 0, 0, 0, 0]);
            p.extend([1, 2, 3, 0]);
        }
        p
    }

    #[test]
    fn counts_new_tsns_and_tells_retransmissions_apart() {
        let mut c = Counter::default();
        assert_eq!(c.classify(&packet(&[100], false), None).new, vec![(0, 100)]);
        let v = c.classify(&packet(&[101, 102], true), None);
        assert_eq!(v.new, vec![(1, 101), (2, 102)]);
        // 101 again, bundled with a new one: one retransmission, one new.
        let v = c.classify(&packet(&[101, 103], false), None);
        assert_eq!((v.new, v.retransmitted), (vec![(3, 103)], vec![101]));
        // A packet without DATA (a SACK alone) is neither.
        assert_eq!(c.classify(&packet(&[], true), None), Verdict::default());
        assert_eq!(c.ordinal_of(101), Some(1));
        assert_eq!(c.ordinal_of(104), None);
    }

    /// An SCTP packet with I-DATA chunks (RFC 8260 2.1) of these TSNs.
    fn idata_packet(tsns: &[u32]) -> Vec<u8> {
        let mut p = vec![0x13, 0x88, 0x13, 0x88, 0, 0, 0, 1, 0, 0, 0, 0];
        for &tsn in tsns {
            // I-DATA, B and E bits, 20 + 3 bytes: TSN, stream 0, reserved,
            // MID, PPID, payload, padded.
            p.extend([64, 3, 0, 23]);
            p.extend(tsn.to_be_bytes());
            p.extend([0, 0, 0, 0]);
            p.extend(tsn.wrapping_mul(3).to_be_bytes());
            p.extend([0, 0, 0, 0]);
            p.extend([1, 2, 3, 0]);
        }
        p
    }

    /// With I-DATA negotiated the side's TSNs are counted and dropped the
    /// same way (brisk-net's classifier reads both chunk types).
    #[test]
    fn counts_and_drops_idata_like_data() {
        let rule = Rule::first_transmission(Side::A, &[1]);
        let mut c = Counter::default();
        assert_eq!(
            c.classify(&idata_packet(&[40]), Some(&rule)).new,
            vec![(0, 40)]
        );
        let v = c.classify(&idata_packet(&[41, 42]), Some(&rule));
        assert_eq!((v.new, v.drop), (vec![(1, 41), (2, 42)], true));
        let v = c.classify(&idata_packet(&[41]), Some(&rule));
        assert_eq!((v.retransmitted, v.drop), (vec![41], false));
        // An I-FORWARD-TSN (type 194) alone carries no TSN of user data,
        // and is dropped when asked.
        let mut fwd = idata_packet(&[]);
        fwd.extend([194, 0, 0, 8, 0, 0, 0, 42]);
        let rule = rule.and_chunks(194, 1);
        assert_eq!(
            c.classify(&fwd, Some(&rule)),
            Verdict {
                drop: true,
                chunk_drop: true,
                ..Verdict::default()
            }
        );
        assert!(!c.classify(&fwd, Some(&rule)).drop);
    }

    #[test]
    fn counts_across_tsn_wrap_around() {
        let mut c = Counter::default();
        c.classify(&packet(&[u32::MAX - 1, u32::MAX], false), None);
        let v = c.classify(&packet(&[0, 1], false), None);
        assert_eq!(v.new, vec![(2, 0), (3, 1)]);
        let v = c.classify(&packet(&[u32::MAX], false), None);
        assert_eq!(v.retransmitted, vec![u32::MAX]);
        assert_eq!(c.ordinal_of(u32::MAX), Some(1));
    }

    #[test]
    fn drops_the_first_transmission_of_the_chosen_ordinals_only() {
        let rule = Rule::first_transmission(Side::A, &[1, 3]);
        let mut c = Counter::default();
        let drops: Vec<bool> = [&[10][..], &[11], &[12], &[11], &[13], &[13, 14]]
            .iter()
            .map(|t| c.classify(&packet(t, false), Some(&rule)).drop)
            .collect();
        assert_eq!(drops, [false, true, false, false, true, false]);
    }

    #[test]
    fn drops_every_transmission_when_asked() {
        let rule = Rule::every_transmission(Side::B, &[0]);
        let mut c = Counter::default();
        assert!(c.classify(&packet(&[7], false), Some(&rule)).drop);
        assert!(!c.classify(&packet(&[8], false), Some(&rule)).drop);
        assert!(c.classify(&packet(&[7], true), Some(&rule)).drop);
        assert!(!c.classify(&packet(&[8], false), Some(&rule)).drop);
    }

    #[test]
    fn drops_the_first_k_transmissions() {
        let rule = Rule::transmissions(Side::A, &[1], 3);
        let mut c = Counter::default();
        let drops: Vec<bool> = [&[1][..], &[2], &[2], &[3], &[2], &[2], &[2]]
            .iter()
            .map(|t| c.classify(&packet(t, false), Some(&rule)).drop)
            .collect();
        assert_eq!(drops, [false, true, true, false, true, false, false]);
    }

    #[test]
    fn drops_the_first_packets_with_a_chunk_type() {
        // Chunk type 3 (SACK): the first two packets carrying one.
        let rule = Rule::first_transmission(Side::A, &[]).and_chunks(3, 2);
        let mut c = Counter::default();
        let drops: Vec<bool> = [(&[1][..], true), (&[2], false), (&[], true), (&[3], true)]
            .iter()
            .map(|&(t, sack)| c.classify(&packet(t, sack), Some(&rule)).drop)
            .collect();
        assert_eq!(drops, [true, false, true, false]);
        // The DATA in a dropped packet is still counted (and recorded).
        assert_eq!(c.classify(&packet(&[4], false), None).new, vec![(3, 4)]);
    }

    #[test]
    fn garbage_is_no_data() {
        let mut c = Counter::default();
        for junk in [&[][..], &[1, 2, 3], &[0; 12], &[0xff; 40]] {
            let v = c.classify(junk, Some(&Rule::every_transmission(Side::A, &[0])));
            assert!(v.new.is_empty() && !v.drop, "{junk:?}");
        }
        // A DATA chunk whose length runs past the packet: not counted.
        let mut p = packet(&[5], false);
        p[12 + 3] = 200;
        assert!(c.classify(&p, None).new.is_empty());
    }

    #[test]
    fn relays_both_ways_and_drops_by_the_rule() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        for s in [&a, &b] {
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        }
        let relay = Relay::start(
            a.local_addr().unwrap(),
            b.local_addr().unwrap(),
            Rule::first_transmission(Side::A, &[1]),
        );
        let mut buf = [0u8; 2048];
        for tsn in [50, 51, 52] {
            a.send_to(&packet(&[tsn], false), relay.addr()).unwrap();
        }
        b.send_to(&packet(&[900], false), relay.addr()).unwrap();
        let mut got = Vec::new();
        for _ in 0..2 {
            let (n, from) = b.recv_from(&mut buf).unwrap();
            assert_eq!(from, relay.addr());
            got.extend(packet_tsns(&buf[..n]));
        }
        assert_eq!(got, [50, 52]);
        let (n, _) = a.recv_from(&mut buf).unwrap();
        assert_eq!(packet_tsns(&buf[..n]), [900]);
        // The retransmission of 51 goes through.
        a.send_to(&packet(&[51], false), relay.addr()).unwrap();
        let (n, _) = b.recv_from(&mut buf).unwrap();
        assert_eq!(packet_tsns(&buf[..n]), [51]);
        assert_eq!(
            relay.dropped(),
            [DroppedChunk {
                ordinal: 1,
                tsn: 51,
                first: true
            }]
        );
        assert_eq!(relay.retransmitted(), [51]);
        assert_eq!(relay.new_tsns(), 3);
        assert_eq!(relay.highest_tsn(), Some(52));
        assert_eq!(relay.dropped_packets(), 1);
    }
}
