//! TCP segments on the wire (RFC 9293 3.1): the 20-byte header, options and
//! payload, without the IP header, and the checksum over the IPv4
//! pseudo-header (RFC 9293 3.1, "Checksum").
//!
//! Parsing never panics: every length is checked against the bytes given, and
//! each failure is a [`WireError`]. The options we read are MSS (kind 2),
//! Window Scale (kind 3, RFC 7323 2), SACK-Permitted (kind 4) and SACK (kind 5,
//! RFC 2018); others are skipped by their length.

use std::net::Ipv4Addr;

/// Length of the fixed header.
pub const HEADER_LEN: usize = 20;
/// Longest header: data offset 15 words (RFC 9293 3.1).
pub const MAX_HEADER_LEN: usize = 60;
/// SACK blocks that fit the option space without timestamps (RFC 2018 3).
pub const MAX_SACK_BLOCKS: usize = 4;
/// IP protocol number of TCP, for the pseudo-header.
pub const PROTOCOL_TCP: u8 = 6;
/// RFC 7323 2.3: a shift above 14 is treated as 14.
pub const MAX_WINDOW_SCALE: u8 = 14;

/// Control bits (RFC 9293 3.1).
pub mod flags {
    /// No more data from sender.
    pub const FIN: u8 = 0x01;
    /// Synchronize sequence numbers.
    pub const SYN: u8 = 0x02;
    /// Reset the connection.
    pub const RST: u8 = 0x04;
    /// Push function.
    pub const PSH: u8 = 0x08;
    /// Acknowledgment field is significant.
    pub const ACK: u8 = 0x10;
    /// Urgent pointer field is significant.
    pub const URG: u8 = 0x20;
}

/// Why a segment could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Fewer than 20 bytes.
    #[error("segment of {len} bytes is shorter than the 20-byte header")]
    TooShort {
        /// Bytes given.
        len: usize,
    },
    /// Longer than the 16-bit TCP length of the pseudo-header allows.
    #[error("segment of {len} bytes is longer than 65535")]
    TooLong {
        /// Bytes given.
        len: usize,
    },
    /// Data offset below 5 words or beyond the segment.
    #[error("data offset {offset} words does not fit a {len}-byte segment")]
    BadDataOffset {
        /// The data offset field, in 32-bit words.
        offset: u8,
        /// Bytes given.
        len: usize,
    },
    /// An option's length is below 2, runs past the header, or is wrong for
    /// its kind.
    #[error("option kind {kind} has a bad length")]
    BadOption {
        /// The option kind.
        kind: u8,
    },
    /// The checksum does not match the pseudo-header and segment.
    #[error("bad checksum")]
    BadChecksum,
    /// Too many SACK blocks or options to fit the 40 bytes of option space.
    #[error("options do not fit 40 bytes")]
    OptionsTooLong,
}

/// Up to four SACK blocks, each `[left, right)` as on the wire (RFC 2018 3).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SackBlocks {
    blocks: [(u32, u32); MAX_SACK_BLOCKS],
    len: u8,
}

impl SackBlocks {
    /// Adds a block; false when all four are taken.
    pub fn push(&mut self, left: u32, right: u32) -> bool {
        let i = usize::from(self.len);
        match self.blocks.get_mut(i) {
            Some(slot) => {
                *slot = (left, right);
                self.len += 1;
                true
            }
            None => false,
        }
    }

    /// The blocks, first as sent.
    pub fn as_slice(&self) -> &[(u32, u32)] {
        self.blocks.get(..usize::from(self.len)).unwrap_or(&[])
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// No blocks.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The options we understand.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Maximum segment size (kind 2; SYN only).
    pub mss: Option<u16>,
    /// Window scale shift (kind 3, RFC 7323 2; SYN only), clamped to 14.
    pub window_scale: Option<u8>,
    /// SACK-Permitted (kind 4, RFC 2018 2; SYN only).
    pub sack_permitted: bool,
    /// SACK blocks (kind 5, RFC 2018 3).
    pub sack: SackBlocks,
}

impl Options {
    /// Bytes the options take when written, padded to 32 bits.
    pub fn encoded_len(&self) -> usize {
        let mut n = 0;
        if self.mss.is_some() {
            n += 4;
        }
        if self.window_scale.is_some() {
            n += 4; // NOP + 3
        }
        if self.sack_permitted {
            n += 4; // NOP NOP + 2
        }
        if !self.sack.is_empty() {
            n += 4 + 8 * self.sack.len(); // NOP NOP + 2 + 8n
        }
        n
    }
}

/// The header fields of a segment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Header {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number (significant with ACK).
    pub ack: u32,
    /// Control bits ([`flags`]).
    pub flags: u8,
    /// Window field, unscaled as on the wire.
    pub window: u16,
    /// Urgent pointer (unused by us, read for completeness).
    pub urgent: u16,
    /// Options.
    pub options: Options,
}

impl Header {
    /// Whether a control bit is set.
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

/// A parsed segment borrowing its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment<'a> {
    /// Header and options.
    pub header: Header,
    /// Bytes after the header.
    pub payload: &'a [u8],
}

impl Segment<'_> {
    /// Sequence space the segment occupies: payload plus SYN and FIN (RFC 9293 3.4).
    pub fn seq_len(&self) -> u64 {
        self.payload.len() as u64
            + u64::from(self.header.has(flags::SYN))
            + u64::from(self.header.has(flags::FIN))
    }
}

/// Adds 16-bit big-endian words of `data` to `acc` (odd tail padded with zero).
fn sum_words(data: &[u8], mut acc: u64) -> u64 {
    let mut chunks = data.chunks_exact(2);
    for w in &mut chunks {
        if let [hi, lo] = w {
            acc += u64::from(u16::from_be_bytes([*hi, *lo]));
        }
    }
    if let [last] = chunks.remainder() {
        acc += u64::from(u16::from_be_bytes([*last, 0]));
    }
    acc
}

/// The Internet checksum of `segment` with the IPv4 pseudo-header
/// (RFC 9293 3.1): source, destination, zero, protocol 6, TCP length. Over a
/// segment that holds a correct checksum the result is zero.
pub fn checksum(src: Ipv4Addr, dst: Ipv4Addr, segment: &[u8]) -> u16 {
    let mut acc = sum_words(&src.octets(), 0);
    acc = sum_words(&dst.octets(), acc);
    acc += u64::from(PROTOCOL_TCP);
    acc += segment.len() as u64;
    acc = sum_words(segment, acc);
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    // The fold above leaves 16 bits.
    !(acc as u16)
}

fn be16(bytes: &[u8], at: usize) -> u16 {
    match bytes.get(at..at + 2) {
        Some([a, b]) => u16::from_be_bytes([*a, *b]),
        _ => 0,
    }
}

fn be32(bytes: &[u8], at: usize) -> u32 {
    match bytes.get(at..at + 4) {
        Some([a, b, c, d]) => u32::from_be_bytes([*a, *b, *c, *d]),
        _ => 0,
    }
}

/// Reads the options area (RFC 9293 3.1 "Options"; 3.2 for lengths).
fn parse_options(mut area: &[u8]) -> Result<Options, WireError> {
    let mut o = Options::default();
    while let Some((&kind, rest)) = area.split_first() {
        match kind {
            // End of option list.
            0 => break,
            // No-operation.
            1 => {
                area = rest;
                continue;
            }
            _ => {}
        }
        // RFC 9293 3.1: every other option has a length byte counting kind and length.
        let Some(&len) = rest.first() else {
            return Err(WireError::BadOption { kind });
        };
        let len = usize::from(len);
        let Some(body) = area.get(2..len).filter(|_| len >= 2) else {
            return Err(WireError::BadOption { kind });
        };
        match kind {
            2 => {
                if len != 4 {
                    return Err(WireError::BadOption { kind });
                }
                o.mss = Some(be16(body, 0));
            }
            3 => {
                let [shift] = body else {
                    return Err(WireError::BadOption { kind });
                };
                // RFC 7323 2.3: a shift above 14 is used as 14.
                o.window_scale = Some((*shift).min(MAX_WINDOW_SCALE));
            }
            4 => {
                if len != 2 {
                    return Err(WireError::BadOption { kind });
                }
                o.sack_permitted = true;
            }
            5 => {
                // RFC 2018 3: length 2 + 8n.
                if body.is_empty() || body.len() % 8 != 0 {
                    return Err(WireError::BadOption { kind });
                }
                for block in body.chunks_exact(8) {
                    // More than four cannot fit 40 bytes; keep the first four.
                    o.sack.push(be32(block, 0), be32(block, 4));
                }
            }
            _ => {}
        }
        area = area.get(len..).unwrap_or(&[]);
    }
    Ok(o)
}

/// Reads a segment without verifying its checksum (for tools and tests).
pub fn parse_unchecked(bytes: &[u8]) -> Result<Segment<'_>, WireError> {
    if bytes.len() < HEADER_LEN {
        return Err(WireError::TooShort { len: bytes.len() });
    }
    if bytes.len() > usize::from(u16::MAX) {
        return Err(WireError::TooLong { len: bytes.len() });
    }
    let offset = bytes.get(12).copied().unwrap_or(0) >> 4;
    let hlen = usize::from(offset) * 4;
    if hlen < HEADER_LEN || hlen > bytes.len() {
        return Err(WireError::BadDataOffset {
            offset,
            len: bytes.len(),
        });
    }
    let options = parse_options(bytes.get(HEADER_LEN..hlen).unwrap_or(&[]))?;
    let header = Header {
        src_port: be16(bytes, 0),
        dst_port: be16(bytes, 2),
        seq: be32(bytes, 4),
        ack: be32(bytes, 8),
        flags: bytes.get(13).copied().unwrap_or(0),
        window: be16(bytes, 14),
        urgent: be16(bytes, 18),
        options,
    };
    Ok(Segment {
        header,
        payload: bytes.get(hlen..).unwrap_or(&[]),
    })
}

/// Reads a segment sent from `src` to `dst`, verifying its checksum first.
pub fn parse(bytes: &[u8], src: Ipv4Addr, dst: Ipv4Addr) -> Result<Segment<'_>, WireError> {
    if bytes.len() < HEADER_LEN {
        return Err(WireError::TooShort { len: bytes.len() });
    }
    if bytes.len() > usize::from(u16::MAX) {
        return Err(WireError::TooLong { len: bytes.len() });
    }
    if checksum(src, dst, bytes) != 0 {
        return Err(WireError::BadChecksum);
    }
    parse_unchecked(bytes)
}

/// Writes `header` and `payload` from `src` to `dst` into `out` (cleared
/// first), with the checksum filled in.
pub fn write(
    header: &Header,
    payload: &[u8],
    src: Ipv4Addr,
    dst: Ipv4Addr,
    out: &mut Vec<u8>,
) -> Result<(), WireError> {
    out.clear();
    let opt_len = header.options.encoded_len();
    if opt_len > MAX_HEADER_LEN - HEADER_LEN {
        return Err(WireError::OptionsTooLong);
    }
    let hlen = HEADER_LEN + opt_len;
    let total = hlen + payload.len();
    if total > usize::from(u16::MAX) {
        return Err(WireError::TooLong { len: total });
    }
    out.reserve(total);
    out.extend_from_slice(&header.src_port.to_be_bytes());
    out.extend_from_slice(&header.dst_port.to_be_bytes());
    out.extend_from_slice(&header.seq.to_be_bytes());
    out.extend_from_slice(&header.ack.to_be_bytes());
    // hlen <= 60, so the offset fits its 4 bits.
    out.push(((hlen / 4) as u8) << 4);
    out.push(header.flags);
    out.extend_from_slice(&header.window.to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&header.urgent.to_be_bytes());
    let o = &header.options;
    if let Some(mss) = o.mss {
        out.extend_from_slice(&[2, 4]);
        out.extend_from_slice(&mss.to_be_bytes());
    }
    if let Some(shift) = o.window_scale {
        out.extend_from_slice(&[1, 3, 3, shift]);
    }
    if o.sack_permitted {
        out.extend_from_slice(&[1, 1, 4, 2]);
    }
    if !o.sack.is_empty() {
        // 2 + 8 * 4 = 34 at most.
        out.extend_from_slice(&[1, 1, 5, (2 + 8 * o.sack.len()) as u8]);
        for (left, right) in o.sack.as_slice() {
            out.extend_from_slice(&left.to_be_bytes());
            out.extend_from_slice(&right.to_be_bytes());
        }
    }
    out.extend_from_slice(payload);
    let sum = checksum(src, dst, out);
    if let Some(field) = out.get_mut(16..18) {
        field.copy_from_slice(&sum.to_be_bytes());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
    const B: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);

    fn syn() -> Header {
        Header {
            src_port: 1234,
            dst_port: 80,
            seq: 0xdead_beef,
            ack: 0,
            flags: flags::SYN,
            window: 65535,
            urgent: 0,
            options: Options {
                mss: Some(1460),
                window_scale: Some(7),
                sack_permitted: true,
                sack: SackBlocks::default(),
            },
        }
    }

    #[test]
    fn a_written_segment_reads_back_with_its_options_and_checksum() {
        let mut h = syn();
        let mut out = Vec::new();
        write(&h, b"hello", A, B, &mut out).unwrap();
        assert_eq!(out.len(), 20 + 12 + 5);
        assert_eq!(checksum(A, B, &out), 0);
        let s = parse(&out, A, B).unwrap();
        assert_eq!(s.header, h);
        assert_eq!(s.payload, b"hello");
        assert_eq!(s.seq_len(), 6);
        // The pseudo-header counts: the wrong destination fails.
        assert_eq!(parse(&out, A, A), Err(WireError::BadChecksum));
        h.options = Options::default();
        assert!(h.options.sack.push(1, 2) && h.options.sack.push(3, 4));
        h.flags = flags::ACK;
        write(&h, &[], A, B, &mut out).unwrap();
        assert_eq!(out.len(), 20 + 4 + 16);
        assert_eq!(
            parse(&out, A, B).unwrap().header.options.sack.as_slice(),
            &[(1, 2), (3, 4)]
        );
    }

    #[test]
    fn a_known_checksum_matches_the_rfc_1071_sum() {
        // A bare 20-byte ACK from 10.0.0.1:1 to 10.0.0.2:2, every field zero
        // but ports, offset and flags: the one's complement sum by hand.
        let h = Header {
            src_port: 1,
            dst_port: 2,
            flags: flags::ACK,
            ..Header::default()
        };
        let mut out = Vec::new();
        write(&h, &[], A, B, &mut out).unwrap();
        // 0x0a00 + 0x0001 + 0x0a00 + 0x0002 + 6 + 20 + 1 + 2 + 0x5010 = 0x6430
        assert_eq!(be16(&out, 16), !0x6430u16);
    }

    #[test]
    fn malformed_headers_are_errors() {
        assert_eq!(
            parse_unchecked(&[0; 19]),
            Err(WireError::TooShort { len: 19 })
        );
        let mut b = vec![0u8; 20];
        b[12] = 4 << 4;
        assert!(matches!(
            parse_unchecked(&b),
            Err(WireError::BadDataOffset { .. })
        ));
        b[12] = 6 << 4;
        assert!(matches!(
            parse_unchecked(&b),
            Err(WireError::BadDataOffset { .. })
        ));
        b.extend_from_slice(&[2, 9, 0, 0]);
        assert_eq!(parse_unchecked(&b), Err(WireError::BadOption { kind: 2 }));
        b[20..24].copy_from_slice(&[5, 0, 0, 0]);
        assert_eq!(parse_unchecked(&b), Err(WireError::BadOption { kind: 5 }));
        b[20..24].copy_from_slice(&[1, 1, 1, 0]);
        assert!(parse_unchecked(&b).is_ok());
        b[20..24].copy_from_slice(&[1, 1, 1, 77]);
        assert_eq!(parse_unchecked(&b), Err(WireError::BadOption { kind: 77 }));
        b[20..24].copy_from_slice(&[3, 3, 200, 0]);
        assert_eq!(
            parse_unchecked(&b).unwrap().header.options.window_scale,
            Some(14)
        );
    }
}
