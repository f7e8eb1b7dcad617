//! Mutations of captured packets: bit flips, byte changes, Chunk Length
//! edits, truncation, chunk splicing, and edits of the fields that carry
//! state (TSNs, tags, SACK gap blocks), then most of the time a correct
//! CRC32c so the packet gets past the checksum.
//!
//! Before mutating, every DATA and I-DATA payload is overwritten with
//! [`INJECTED`] bytes, and after mutating, the first payload byte of every
//! DATA and I-DATA chunk the decoder will see is set to it again ([`mark_data`]):
//! no injected packet can carry a genuine message's bytes, so any message the
//! application receives that holds no such byte must be one the peer sent.

use brisk_proto::wire::chunk::types;
use brisk_proto::wire::{RawChunks, seal};

use super::generate::INJECTED;
use super::source::Dice;

const HEADER: usize = 12;

/// Where the chunks of a packet are, as far as the Chunk Length fields can be
/// followed: (offset from the packet start, Chunk Length).
pub fn chunk_spans(pkt: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut off = HEADER;
    while off + 4 <= pkt.len() && out.len() < 4096 {
        let len = usize::from(u16::from_be_bytes([pkt[off + 2], pkt[off + 3]]));
        out.push((off, len));
        if len < 4 {
            break;
        }
        off += (len + 3) & !3;
    }
    out
}

/// Bytes of a DATA-like chunk's header before its payload, for `typ`.
fn data_header(typ: u8) -> Option<usize> {
    match typ {
        types::DATA => Some(16),
        types::IDATA => Some(20),
        _ => None,
    }
}

/// Overwrites the payload of every DATA and I-DATA chunk with [`INJECTED`].
pub fn blank_data(pkt: &mut [u8]) {
    for (off, len) in chunk_spans(pkt) {
        let Some(h) = data_header(pkt[off]) else {
            continue;
        };
        let end = (off + len).min(pkt.len());
        if off + h < end {
            pkt[off + h..end].fill(INJECTED);
        }
    }
}

/// Sets the first payload byte of every DATA and I-DATA chunk the decoder
/// will see to [`INJECTED`].
pub fn mark_data(pkt: &mut [u8]) {
    if pkt.len() < HEADER {
        return;
    }
    let marks: Vec<usize> = RawChunks::new(&pkt[HEADER..])
        .map_while(Result::ok)
        .filter_map(|c| {
            let h = data_header(c.typ)? - 4;
            (c.value.len() > h).then_some(HEADER + c.offset + 4 + h)
        })
        .collect();
    for at in marks {
        pkt[at] = INJECTED;
    }
}

/// Writes the CRC32c into the packet's header.
pub fn fix_crc(pkt: &mut [u8]) {
    if pkt.len() >= HEADER {
        seal(pkt).expect("a packet with a header seals");
    }
}

fn put_u16(pkt: &mut [u8], at: usize, v: u16) {
    if let Some(s) = pkt.get_mut(at..at + 2) {
        s.copy_from_slice(&v.to_be_bytes());
    }
}

fn put_u32(pkt: &mut [u8], at: usize, v: u32) {
    if let Some(s) = pkt.get_mut(at..at + 4) {
        s.copy_from_slice(&v.to_be_bytes());
    }
}

fn get_u16(pkt: &[u8], at: usize) -> u16 {
    pkt.get(at..at + 2)
        .map_or(0, |s| u16::from_be_bytes([s[0], s[1]]))
}

fn get_u32(pkt: &[u8], at: usize) -> u32 {
    pkt.get(at..at + 4)
        .map_or(0, |s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

/// A whole chunk, padding included, taken from a packet.
fn chunk_bytes(pkt: &[u8], span: (usize, usize)) -> Vec<u8> {
    let (off, len) = span;
    let end = (off + ((len.max(4) + 3) & !3)).min(pkt.len());
    pkt[off..end].to_vec()
}

/// Interesting values of a numeric field.
const INTERESTING: &[u32] = &[
    0,
    1,
    2,
    3,
    4,
    0x7f,
    0x80,
    0xff,
    0x100,
    0x7fff,
    0x8000,
    0xffff,
    0x1_0000,
    0x7fff_ffff,
    0x8000_0000,
    u32::MAX,
];

/// What the mutator may use besides the packet itself.
pub struct Material<'a> {
    /// Other captured packets, for splicing.
    pub others: &'a [&'a [u8]],
    /// Verification tags seen on the wire.
    pub tags: &'a [u32],
}

/// One mutation of `pkt`.
fn mutate_once(d: &mut Dice<'_>, pkt: &mut Vec<u8>, m: &Material<'_>) {
    let spans = chunk_spans(pkt);
    let pick_span = |d: &mut Dice<'_>| -> Option<(usize, usize)> {
        (!spans.is_empty()).then(|| spans[d.index(spans.len())])
    };
    match d.below(15) {
        // Bit flip, mostly in the chunks.
        0 | 1 => {
            if !pkt.is_empty() {
                let at = if pkt.len() > HEADER && d.chance(220) {
                    d.range_usize(HEADER, pkt.len() - 1)
                } else {
                    d.index(pkt.len())
                };
                pkt[at] ^= 1 << d.below(8);
            }
        }
        // A byte set to an interesting or random value.
        2 => {
            if !pkt.is_empty() {
                let at = d.index(pkt.len());
                pkt[at] = if d.bool() {
                    *d.pick(&[0, 1, 0x7f, 0x80, 0xff, 0x40, 0xc0])
                } else {
                    d.byte()
                };
            }
        }
        // Chunk Length edit.
        3 | 4 => {
            if let Some((off, len)) = pick_span(d) {
                let rest = pkt.len().saturating_sub(off);
                let new = match d.below(10) {
                    0 => 0,
                    1 => d.range_usize(1, 3),
                    2 => 4,
                    3 => len.saturating_sub(1),
                    4 => len + 1,
                    5 => len.saturating_sub(4),
                    6 => len + 4,
                    7 => rest,
                    8 => rest + d.range_usize(1, 8),
                    _ => usize::from(d.u16()),
                };
                put_u16(
                    pkt,
                    off + 2,
                    u16::try_from(new.min(0xffff)).unwrap_or(u16::MAX),
                );
            }
        }
        // Truncation.
        5 => {
            if !pkt.is_empty() {
                let keep = if d.chance(200) && pkt.len() > HEADER {
                    d.range_usize(HEADER, pkt.len() - 1)
                } else {
                    d.index(pkt.len())
                };
                pkt.truncate(keep);
            }
        }
        // Splicing: a chunk of another packet appended or inserted.
        6 | 7 => {
            if let Some(other) = (!m.others.is_empty()).then(|| m.others[d.index(m.others.len())]) {
                let ospans = chunk_spans(other);
                if !ospans.is_empty() {
                    let c = chunk_bytes(other, ospans[d.index(ospans.len())]);
                    let at = match pick_span(d) {
                        Some((off, _)) if d.bool() => off,
                        _ => pkt.len(),
                    };
                    let at = at.min(pkt.len());
                    pkt.splice(at..at, c);
                }
            }
        }
        // A chunk removed, or repeated.
        8 => {
            if let Some(span) = pick_span(d) {
                let c = chunk_bytes(pkt, span);
                let end = span.0 + c.len();
                if d.bool() && spans.len() > 1 {
                    pkt.drain(span.0..end);
                } else {
                    let times = if d.chance(32) {
                        d.range_usize(10, 300)
                    } else {
                        1
                    };
                    for _ in 0..times {
                        pkt.splice(end..end, c.iter().copied());
                    }
                }
            }
        }
        // Two chunks swapped.
        9 => {
            if spans.len() >= 2 {
                let (i, j) = (d.index(spans.len()), d.index(spans.len()));
                let (i, j) = (i.min(j), i.max(j));
                if i != j {
                    let ci = chunk_bytes(pkt, spans[i]);
                    let cj = chunk_bytes(pkt, spans[j]);
                    let (oi, oj) = (spans[i].0, spans[j].0);
                    let mut out = pkt[..oi].to_vec();
                    out.extend_from_slice(&cj);
                    out.extend_from_slice(&pkt[oi + ci.len()..oj]);
                    out.extend_from_slice(&ci);
                    out.extend_from_slice(pkt.get(oj + cj.len()..).unwrap_or(&[]));
                    *pkt = out;
                }
            }
        }
        // State fields: TSNs, stream and sequence numbers, SACK internals.
        10 | 11 => {
            let span = pick_span(d);
            edit_state(d, pkt, span);
        }
        // Verification tag.
        12 => {
            let tag = match d.below(5) {
                0 => 0,
                1 => d.u32(),
                2 => get_u32(pkt, 4) ^ (1 << d.below(32)),
                _ if !m.tags.is_empty() => m.tags[d.index(m.tags.len())],
                _ => d.u32(),
            };
            put_u32(pkt, 4, tag);
        }
        // Chunk type or flags.
        13 => {
            if let Some((off, _)) = pick_span(d) {
                if d.bool() {
                    pkt[off] = *d.pick(&[
                        types::DATA,
                        types::INIT,
                        types::INIT_ACK,
                        types::SACK,
                        types::HEARTBEAT,
                        types::HEARTBEAT_ACK,
                        types::ABORT,
                        types::SHUTDOWN,
                        types::SHUTDOWN_ACK,
                        types::ERROR,
                        types::COOKIE_ECHO,
                        types::COOKIE_ACK,
                        types::SHUTDOWN_COMPLETE,
                        types::IDATA,
                        types::PKTDROP,
                        types::RECONFIG,
                        types::FORWARD_TSN,
                        types::IFORWARD_TSN,
                        0x3f,
                        0x7f,
                        0xbf,
                        0xff,
                    ]);
                } else {
                    pkt[off + 1] = d.byte();
                }
            }
        }
        // Random bytes appended.
        _ => {
            let n = d.range_usize(1, 32);
            let extra = d.bytes(n);
            pkt.extend_from_slice(&extra);
        }
    }
}

/// A numeric field of a chunk edited: a step, an interesting value, anything.
fn edit_number(d: &mut Dice<'_>, old: u32) -> u32 {
    match d.below(6) {
        0 | 1 => old.wrapping_add(d.range(1, 16)),
        2 => old.wrapping_sub(d.range(1, 16)),
        3 => *d.pick(INTERESTING),
        4 => old.wrapping_add(1 << 31),
        _ => d.u32(),
    }
}

fn edit_state(d: &mut Dice<'_>, pkt: &mut [u8], span: Option<(usize, usize)>) {
    let Some((off, len)) = span else {
        return;
    };
    let end = (off + len).min(pkt.len());
    // Field offsets (from the chunk start) and widths worth editing.
    let fields: Vec<(usize, usize)> = match pkt[off] {
        // TSN, stream, SSN, PPID.
        types::DATA => vec![(4, 4), (4, 4), (8, 2), (10, 2), (12, 4)],
        // TSN, stream, MID, PPID/FSN.
        types::IDATA => vec![(4, 4), (8, 2), (12, 4), (16, 4)],
        types::SACK => {
            // Cumulative TSN ack, a_rwnd, block counts, then the blocks and dups.
            let mut f = vec![(4, 4), (4, 4), (8, 4), (12, 2), (14, 2)];
            let mut at = 16;
            while off + at + 4 <= end && f.len() < 64 {
                f.push((at, 2));
                f.push((at + 2, 2));
                at += 4;
            }
            f
        }
        types::SHUTDOWN => vec![(4, 4)],
        types::FORWARD_TSN | types::IFORWARD_TSN => {
            let mut f = vec![(4, 4), (4, 4)];
            let mut at = 8;
            while off + at + 4 <= end && f.len() < 32 {
                f.push((at, 2));
                f.push((at + 2, 2));
                at += 4;
            }
            f
        }
        // Initiate tag, a_rwnd, streams, initial TSN.
        types::INIT | types::INIT_ACK => vec![(4, 4), (8, 4), (12, 2), (14, 2), (16, 4)],
        _ => Vec::new(),
    };
    let (at, width) = if fields.is_empty() || d.chance(32) {
        // Any aligned word of the chunk.
        let words = len.saturating_sub(4) / 2;
        if words == 0 {
            return;
        }
        (4 + 2 * d.index(words), if d.bool() { 2 } else { 4 })
    } else {
        fields[d.index(fields.len())]
    };
    let at = off + at;
    if width == 2 {
        let old = u32::from(get_u16(pkt, at));
        let new = edit_number(d, old);
        put_u16(pkt, at, (new & 0xffff) as u16);
    } else {
        let old = get_u32(pkt, at);
        let new = edit_number(d, old);
        put_u32(pkt, at, new);
    }
}

/// A mutant of `base`: its DATA payloads blanked, 1 to 4 mutations, its DATA
/// marked as injected, and a correct CRC32c most of the time.
pub fn mutant(d: &mut Dice<'_>, base: &[u8], m: &Material<'_>) -> Vec<u8> {
    let mut pkt = base.to_vec();
    blank_data(&mut pkt);
    let n = match d.below(8) {
        0..=3 => 1,
        4 | 5 => 2,
        6 => 3,
        _ => d.range(4, 8),
    };
    for _ in 0..n {
        mutate_once(d, &mut pkt, m);
    }
    pkt.truncate(64 * 1024);
    mark_data(&mut pkt);
    if d.chance(232) {
        fix_crc(&mut pkt);
    }
    pkt
}
