//! Packet classification: what a link needs to know about a packet it carries,
//! whatever the transport. The simulator's links carry bare SCTP packets
//! ([`SctpPacket`]); the emulator's carry IP packets read from TUN devices
//! ([`IpPacket`]): SCTP over UDP (RFC 6951) or directly over IP, and TCP.
//!
//! A link asks three things of a packet: how many bytes it occupies on the
//! wire, whether it carries application data (what `drop-data` ordinals
//! count), and which data units it carries, each with a sequence number, so
//! that the first transmission of the k-th new unit can be found
//! (`drop-new-chunk`): an SCTP DATA or I-DATA chunk by its TSN, a TCP segment
//! with payload by its sequence range. Every parser here walks headers with
//! bounds checks and never panics: garbage is simply "no data".

use std::collections::HashMap;
use std::fmt::Debug;

use brisk_proto::wire::chunk::types;
use brisk_proto::wire::{ChecksumPolicy, CommonHeader, RawChunks};

/// One packet as a link sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Class {
    /// Bytes serialized on the link, before the link's `overhead_bytes`.
    pub size: usize,
    /// Carries application data: an SCTP DATA or I-DATA chunk, or a TCP
    /// segment with payload.
    pub data: bool,
    /// The first byte bit errors may touch: past the addresses, ports and
    /// tags, so a corrupted packet still reaches its receiver, whose checksum
    /// then fails.
    pub corrupt_from: usize,
}

/// A unit of application data in a packet, as its sequence number space
/// counts it: an SCTP chunk's TSN, or a TCP segment's byte range in one
/// connection (`flow` names the connection and direction).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Tsn(u32),
    Bytes { flow: u64, seq: u32, len: u32 },
}

impl Unit {
    /// The number a capture or trace shows: the TSN, or the first sequence
    /// number of the segment.
    pub fn key(self) -> u32 {
        match self {
            Unit::Tsn(t) => t,
            Unit::Bytes { seq, .. } => seq,
        }
    }
}

/// Classifies the packets of one link direction.
pub trait Classify: Debug + Send {
    /// Cheap, for every packet.
    fn classify(&self, packet: &[u8]) -> Class;
    /// The data units the packet carries, in packet order: asked only when
    /// an impairment or a trace needs them.
    fn units(&self, packet: &[u8]) -> Vec<Unit>;
}

/// A bare SCTP packet (common header and chunks): the simulator's links.
#[derive(Debug, Clone, Copy, Default)]
pub struct SctpPacket;

impl Classify for SctpPacket {
    fn classify(&self, packet: &[u8]) -> Class {
        Class {
            size: packet.len(),
            data: carries_data(packet),
            corrupt_from: sctp_corrupt_from(packet.len()),
        }
    }

    fn units(&self, packet: &[u8]) -> Vec<Unit> {
        data_tsns(packet).into_iter().map(Unit::Tsn).collect()
    }
}

/// Past the common header's ports and tag when the packet has more than
/// them, so the CRC32c check fails and the packet still reaches its
/// association.
fn sctp_corrupt_from(len: usize) -> usize {
    match len {
        n if n > CommonHeader::LEN => CommonHeader::LEN,
        n if n > 8 => 8,
        _ => 0,
    }
}

/// Whether an SCTP packet carries a DATA or I-DATA chunk. Walks the chunk
/// headers only; garbage is simply "no".
pub fn carries_data(packet: &[u8]) -> bool {
    let Some(area) = packet.get(CommonHeader::LEN..) else {
        return false;
    };
    RawChunks::new(area)
        .map_while(Result::ok)
        .any(|c| c.typ == types::DATA || c.typ == types::IDATA)
}

/// The TSNs of the DATA and I-DATA chunks an SCTP packet carries, in the
/// order they appear. Walks the chunk headers only and never panics: a
/// truncated or garbled chunk area simply ends the list.
pub fn data_tsns(packet: &[u8]) -> Vec<u32> {
    let Some(area) = packet.get(CommonHeader::LEN..) else {
        return Vec::new();
    };
    RawChunks::new(area)
        .map_while(Result::ok)
        .filter(|c| c.typ == types::DATA || c.typ == types::IDATA)
        .filter_map(|c| {
            let tsn: [u8; 4] = c.value.get(..4)?.try_into().ok()?;
            Some(u32::from_be_bytes(tsn))
        })
        .collect()
}

/// IP protocol numbers.
const TCP: u8 = 6;
const UDP: u8 = 17;
const SCTP: u8 = 132;

/// Where a packet's transport header starts, and which transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ip {
    /// Offset of the transport header.
    transport: usize,
    protocol: u8,
    /// Source and destination addresses, folded (for TCP flow keys).
    addrs: u64,
    /// Where the packet ends (the IP total length, within the buffer).
    end: usize,
}

/// Parses an IPv4 or IPv6 header (IPv6 without extension headers: the
/// stacks the emulator runs send none). `None` for anything else, and for
/// IPv4 fragments other than the first.
fn ip(packet: &[u8]) -> Option<Ip> {
    let version = packet.first()? >> 4;
    match version {
        4 => {
            let ihl = usize::from(packet.first()? & 0x0f) * 4;
            let total = usize::from(u16::from_be_bytes([*packet.get(2)?, *packet.get(3)?]));
            let frag = u16::from_be_bytes([*packet.get(6)?, *packet.get(7)?]) & 0x1fff;
            if ihl < 20 || frag != 0 || total < ihl {
                return None;
            }
            let addrs = packet.get(12..20)?;
            Some(Ip {
                transport: ihl,
                protocol: *packet.get(9)?,
                addrs: fold(addrs),
                end: total.min(packet.len()),
            })
        }
        6 => {
            let payload = usize::from(u16::from_be_bytes([*packet.get(4)?, *packet.get(5)?]));
            let addrs = packet.get(8..40)?;
            Some(Ip {
                transport: 40,
                protocol: *packet.get(6)?,
                addrs: fold(addrs),
                end: (40 + payload).min(packet.len()),
            })
        }
        _ => None,
    }
}

/// FNV-1a over some bytes: a flow key, not a secret.
fn fold(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// What an IP packet carries, as far as the link cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Carried {
    /// An SCTP packet from this offset to `end`; `udp` when encapsulated.
    Sctp { at: usize, end: usize, udp: bool },
    /// A TCP segment: its header at `at`, payload from `payload` to `end`.
    Tcp {
        at: usize,
        payload: usize,
        end: usize,
        seq: u32,
        flow: u64,
    },
    /// Anything else: its transport header at `at`.
    Other { at: usize },
}

fn carried(packet: &[u8]) -> Option<Carried> {
    let ip = ip(packet)?;
    let t = ip.transport;
    let body = packet.get(t..ip.end)?;
    Some(match ip.protocol {
        SCTP if body.len() >= CommonHeader::LEN => Carried::Sctp {
            at: t,
            end: ip.end,
            udp: false,
        },
        UDP if body.len() >= 8 + CommonHeader::LEN && is_sctp(&body[8..]) => Carried::Sctp {
            at: t + 8,
            end: ip.end,
            udp: true,
        },
        TCP if body.len() >= 20 => {
            let offset = usize::from(body[12] >> 4) * 4;
            let seq = u32::from_be_bytes([body[4], body[5], body[6], body[7]]);
            // Ports and addresses name the connection and its direction.
            let flow = fold(&[&ip.addrs.to_be_bytes()[..], &body[..4]].concat());
            if offset < 20 || offset > body.len() {
                Carried::Other { at: t }
            } else {
                Carried::Tcp {
                    at: t,
                    payload: t + offset,
                    end: ip.end,
                    seq,
                    flow,
                }
            }
        }
        _ => Carried::Other { at: t },
    })
}

/// Whether a UDP payload is an SCTP packet: its CRC32c checks out (RFC 9260
/// Appendix A), or is zero as RFC 9653 lets peers agree. Any other UDP
/// traffic (a test's own datagrams, say) is not SCTP, whatever its port.
fn is_sctp(payload: &[u8]) -> bool {
    brisk_proto::wire::verify_checksum(payload, ChecksumPolicy::AcceptZero).is_ok()
}

/// IP packets, as the emulator reads them from its TUN devices.
#[derive(Debug, Clone, Copy)]
pub struct IpPacket {
    /// Serialize SCTP packets carried in UDP as if SCTP ran directly over IP
    /// (the UDP header's 8 bytes not charged): the simulator's convention
    /// for the research it reproduces, where lksctp ran over IP.
    pub charge_udp_encapsulation: bool,
}

impl Default for IpPacket {
    fn default() -> Self {
        Self {
            charge_udp_encapsulation: true,
        }
    }
}

impl Classify for IpPacket {
    fn classify(&self, packet: &[u8]) -> Class {
        let whole = Class {
            size: packet.len(),
            data: false,
            corrupt_from: packet.len().min(20),
        };
        match carried(packet) {
            None => whole,
            Some(Carried::Sctp { at, end, udp }) => {
                let sctp = &packet[at..end];
                let uncharged = if udp && !self.charge_udp_encapsulation {
                    8
                } else {
                    0
                };
                Class {
                    size: packet.len() - uncharged,
                    data: carries_data(sctp),
                    corrupt_from: at + sctp_corrupt_from(sctp.len()),
                }
            }
            Some(Carried::Tcp {
                at, payload, end, ..
            }) => Class {
                size: packet.len(),
                data: end > payload,
                // Past the ports, sequence and acknowledgement numbers.
                corrupt_from: (at + 12).min(packet.len().saturating_sub(1)),
            },
            Some(Carried::Other { at }) => Class {
                corrupt_from: (at + 8).min(packet.len().saturating_sub(1)),
                ..whole
            },
        }
    }

    fn units(&self, packet: &[u8]) -> Vec<Unit> {
        match carried(packet) {
            Some(Carried::Sctp { at, end, .. }) => data_tsns(&packet[at..end])
                .into_iter()
                .map(Unit::Tsn)
                .collect(),
            Some(Carried::Tcp {
                payload,
                end,
                seq,
                flow,
                ..
            }) if end > payload => vec![Unit::Bytes {
                flow,
                seq,
                len: u32::try_from(end - payload).unwrap_or(u32::MAX),
            }],
            _ => Vec::new(),
        }
    }
}

/// A data unit's first transmission: its number (1-based, in the order first
/// transmissions entered the link direction) and its [`Unit::key`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewChunk {
    pub number: u64,
    /// The TSN of an SCTP chunk, or the first sequence number of a TCP segment.
    pub tsn: u32,
    /// TCP: the stream byte number (1-based, counted from the first payload
    /// byte of this connection and direction) of the first byte this segment
    /// sends for the first time; 0 for SCTP.
    pub first_byte: u64,
    /// TCP: how many bytes from `first_byte` on are sent for the first time;
    /// 0 for SCTP.
    pub new_bytes: u64,
}

impl NewChunk {
    /// Whether this first transmission carries stream byte `byte` (1-based)
    /// for the first time: only TCP units carry bytes.
    pub fn carries_byte(&self, byte: u64) -> bool {
        self.first_byte <= byte && byte < self.first_byte + self.new_bytes
    }
}

/// The TCP connections (per direction) one link direction numbers at most:
/// a command in an emulated host that opens connection after connection
/// cannot grow the table without bound.
pub const MAX_TCP_FLOWS: usize = 65_536;

/// Where a TCP connection's stream has got to in one direction: the
/// sequence number just past the highest byte seen, and how many bytes that
/// is from the first one.
#[derive(Debug, Clone, Copy)]
struct StreamEnd {
    seq: u32,
    bytes: u64,
}

/// Numbers first transmissions, so that retransmissions and redundant copies
/// never shift the count. SCTP chunks are numbered by TSN from the first one
/// seen (a TSN above all seen before is new); TCP segments in the order new
/// bytes appear, per connection (a segment is new when it ends beyond every
/// byte of its connection seen before).
#[derive(Debug, Clone, Default)]
pub struct NewData {
    first_tsn: Option<u32>,
    highest_chunk: u64,
    /// Per TCP connection and direction: the end of the bytes seen.
    tcp_end: HashMap<u64, StreamEnd>,
    tcp_segments: u64,
}

impl NewData {
    /// The new units among `units`, numbered.
    pub fn first_transmissions(&mut self, units: &[Unit]) -> Vec<NewChunk> {
        let mut new = Vec::new();
        for &unit in units {
            match unit {
                Unit::Tsn(tsn) => {
                    let first = *self.first_tsn.get_or_insert(tsn);
                    // Chunk numbers from the first TSN, 1-based; TSNs below
                    // it (serial arithmetic) are not new.
                    let offset = tsn.wrapping_sub(first);
                    if offset >= 1 << 31 {
                        continue;
                    }
                    let chunk = u64::from(offset) + 1;
                    if chunk > self.highest_chunk {
                        self.highest_chunk = chunk;
                        new.push(NewChunk {
                            number: chunk,
                            tsn,
                            first_byte: 0,
                            new_bytes: 0,
                        });
                    }
                }
                Unit::Bytes { flow, seq, len } => {
                    let end = seq.wrapping_add(len);
                    if self.tcp_end.len() >= MAX_TCP_FLOWS && !self.tcp_end.contains_key(&flow) {
                        // A link direction follows this many connections at
                        // most; segments of any more are never numbered.
                        continue;
                    }
                    let seen = self
                        .tcp_end
                        .entry(flow)
                        .or_insert(StreamEnd { seq, bytes: 0 });
                    // RFC 9293 sequence arithmetic: new when it ends beyond
                    // every byte seen in this direction.
                    let beyond = end.wrapping_sub(seen.seq);
                    if beyond != 0 && beyond < 1 << 31 {
                        let fresh = u64::from(beyond.min(len));
                        let first_byte = seen.bytes + 1 + u64::from(beyond) - fresh;
                        seen.seq = end;
                        seen.bytes += u64::from(beyond);
                        self.tcp_segments += 1;
                        new.push(NewChunk {
                            number: self.tcp_segments,
                            tsn: seq,
                            first_byte,
                            new_bytes: fresh,
                        });
                    }
                }
            }
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipv4(protocol: u8, body: &[u8]) -> Vec<u8> {
        let total = (20 + body.len()) as u16;
        let mut p = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, protocol, 0, 0];
        p[2..4].copy_from_slice(&total.to_be_bytes());
        p.extend_from_slice(&[10, 77, 0, 1, 10, 77, 0, 2]);
        p.extend_from_slice(body);
        p
    }

    fn tcp(seq: u32, payload: &[u8]) -> Vec<u8> {
        let mut h = vec![0u8; 20];
        h[0..2].copy_from_slice(&40000u16.to_be_bytes());
        h[2..4].copy_from_slice(&7u16.to_be_bytes());
        h[4..8].copy_from_slice(&seq.to_be_bytes());
        h[12] = 5 << 4;
        h.extend_from_slice(payload);
        ipv4(TCP, &h)
    }

    /// An SCTP packet with one DATA chunk of TSN `tsn`, checksummed.
    fn sctp_data(tsn: u32) -> Vec<u8> {
        let mut p = vec![0u8; 12];
        p[0..2].copy_from_slice(&9899u16.to_be_bytes());
        p[2..4].copy_from_slice(&9899u16.to_be_bytes());
        // DATA: type 0, flags 3 (B, E), length 16 + 4 bytes of payload.
        p.extend_from_slice(&[0, 3, 0, 20]);
        p.extend_from_slice(&tsn.to_be_bytes());
        p.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
        p.extend_from_slice(b"ping");
        brisk_proto::wire::seal(&mut p).unwrap();
        p
    }

    fn udp(payload: &[u8]) -> Vec<u8> {
        let mut h = vec![0u8; 8];
        h[0..2].copy_from_slice(&9899u16.to_be_bytes());
        h[2..4].copy_from_slice(&9899u16.to_be_bytes());
        h[4..6].copy_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
        h.extend_from_slice(payload);
        ipv4(UDP, &h)
    }

    #[test]
    fn sctp_over_udp_is_data_with_its_tsns_and_can_be_charged_as_over_ip() {
        let p = udp(&sctp_data(77));
        let c = IpPacket::default().classify(&p);
        assert!(c.data);
        assert_eq!(c.size, p.len());
        assert_eq!(c.corrupt_from, 20 + 8 + 12);
        let bare = IpPacket {
            charge_udp_encapsulation: false,
        };
        assert_eq!(bare.classify(&p).size, p.len() - 8);
        assert_eq!(IpPacket::default().units(&p), vec![Unit::Tsn(77)]);
    }

    #[test]
    fn udp_that_is_not_sctp_is_not_data_whatever_its_port() {
        let mut fake = sctp_data(5);
        fake[20] ^= 1; // the checksum no longer holds
        let p = udp(&fake);
        assert!(!IpPacket::default().classify(&p).data);
        assert!(IpPacket::default().units(&p).is_empty());
    }

    #[test]
    fn sctp_directly_over_ip_is_recognised() {
        let p = ipv4(SCTP, &sctp_data(9));
        assert!(IpPacket::default().classify(&p).data);
        assert_eq!(IpPacket::default().units(&p), vec![Unit::Tsn(9)]);
    }

    #[test]
    fn tcp_with_payload_is_data_and_a_bare_ack_is_not() {
        let c = IpPacket::default();
        assert!(c.classify(&tcp(1000, b"hello")).data);
        assert!(!c.classify(&tcp(1000, b"")).data);
        assert!(c.units(&tcp(1000, b"")).is_empty());
    }

    #[test]
    fn tcp_retransmissions_are_not_new_and_never_shift_the_count() {
        let c = IpPacket::default();
        let mut n = NewData::default();
        let mut numbers = |p: Vec<u8>| -> Vec<u64> {
            n.first_transmissions(&c.units(&p))
                .iter()
                .map(|x| x.number)
                .collect()
        };
        assert_eq!(numbers(tcp(1000, &[0; 100])), vec![1]);
        assert_eq!(numbers(tcp(1100, &[0; 100])), vec![2]);
        // A retransmission of the first segment, and a repacketized one.
        assert!(numbers(tcp(1000, &[0; 100])).is_empty());
        assert!(numbers(tcp(1000, &[0; 200])).is_empty());
        assert_eq!(numbers(tcp(1200, &[0; 100])), vec![3]);
        // Across the 2^32 wrap.
        let mut w = NewData::default();
        let near = u32::MAX - 49;
        assert_eq!(
            w.first_transmissions(&c.units(&tcp(near, &[0; 100]))).len(),
            1
        );
        assert_eq!(
            w.first_transmissions(&c.units(&tcp(50, &[0; 100]))).len(),
            1
        );
        assert!(
            w.first_transmissions(&c.units(&tcp(near, &[0; 100])))
                .is_empty()
        );
    }

    #[test]
    fn the_connections_followed_are_bounded() {
        let mut n = NewData::default();
        let unit = |flow: u64| Unit::Bytes {
            flow,
            seq: 1,
            len: 10,
        };
        for flow in 0..(MAX_TCP_FLOWS as u64 + 10_000) {
            n.first_transmissions(&[unit(flow)]);
        }
        assert_eq!(n.tcp_end.len(), MAX_TCP_FLOWS);
        // A connection followed before goes on being numbered; a new one is not.
        let known = n.first_transmissions(&[Unit::Bytes {
            flow: 5,
            seq: 11,
            len: 10,
        }]);
        assert_eq!(known.len(), 1);
        assert_eq!(known[0].first_byte, 11);
        assert!(n.first_transmissions(&[unit(u64::MAX)]).is_empty());
    }

    #[test]
    fn sctp_chunks_are_numbered_by_tsn_from_the_first_seen() {
        let mut n = NewData::default();
        let got = n.first_transmissions(&[Unit::Tsn(10), Unit::Tsn(11)]);
        let numbered: Vec<(u64, u32, u64)> =
            got.iter().map(|c| (c.number, c.tsn, c.new_bytes)).collect();
        assert_eq!(numbered, vec![(1, 10, 0), (2, 11, 0)]);
        assert!(n.first_transmissions(&[Unit::Tsn(10)]).is_empty());
        assert_eq!(n.first_transmissions(&[Unit::Tsn(13)])[0].number, 4);
    }

    #[test]
    fn garbage_never_panics_and_is_not_data() {
        let c = IpPacket::default();
        for len in 0..80 {
            for fill in [0u8, 0x45, 0x60, 0xff] {
                let mut p = vec![fill; len];
                if let Some(b) = p.first_mut() {
                    *b = if fill == 0x60 { 0x60 } else { 0x45 };
                }
                let _ = c.classify(&p);
                let _ = c.units(&p);
            }
        }
        // A header claiming more than the buffer holds.
        let mut p = tcp(1, b"abc");
        p[2..4].copy_from_slice(&60000u16.to_be_bytes());
        assert!(c.classify(&p).data);
    }
}
