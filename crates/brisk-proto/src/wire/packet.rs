//! The SCTP packet: common header, CRC32c checksum and the chunks after it
//! (RFC 9260 3 and 3.1, Appendix A).
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |     Source Port Number        |     Destination Port Number   |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                      Verification Tag                         |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                           Checksum                            |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                     Chunk #1 ... Chunk #n                     |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! The checksum is CRC32c over the whole packet with the checksum field set to
//! zero, stored least significant byte first (RFC 9260 Appendix A, as every
//! deployed stack does).

use super::buf::{padded, put_u16, put_u32};
use super::chunk::{Chunk, ChunkCodec, types};
use super::{MAX_CHUNKS_PER_PACKET, WireError};

/// The 12-byte common header.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CommonHeader {
    pub src_port: u16,
    pub dst_port: u16,
    pub verification_tag: u32,
    /// The checksum as carried on the wire (CRC32c, or 0 under RFC 9653).
    pub checksum: u32,
}

impl CommonHeader {
    pub const LEN: usize = 12;

    /// Reads the common header; fails only if `packet` is shorter than 12 bytes.
    pub fn decode(packet: &[u8]) -> Result<Self, WireError> {
        let Some(h) = packet.first_chunk::<12>() else {
            return Err(WireError::ShortPacket { len: packet.len() });
        };
        Ok(Self {
            src_port: u16::from_be_bytes([h[0], h[1]]),
            dst_port: u16::from_be_bytes([h[2], h[3]]),
            verification_tag: u32::from_be_bytes([h[4], h[5], h[6], h[7]]),
            checksum: u32::from_le_bytes([h[8], h[9], h[10], h[11]]),
        })
    }

    /// Appends the header with a zero checksum; [`seal`] fills it in.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_u16(out, self.src_port);
        put_u16(out, self.dst_port);
        put_u32(out, self.verification_tag);
        put_u32(out, 0);
    }
}

/// How a receiver treats the checksum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChecksumPolicy {
    /// RFC 9260 6.8: drop a packet whose CRC32c does not match.
    #[default]
    Verify,
    /// RFC 9653 5.3: also accept a zero checksum, once the peer and we agreed on
    /// an alternate error detection method.
    AcceptZero,
    /// Do not check: for dissecting a packet already known to be corrupt
    /// (PKTDROP, diagnostics).
    Ignore,
}

/// CRC32c of `packet` with its checksum field taken as zero (RFC 9260 Appendix A).
/// `packet` must hold at least the common header.
pub fn compute_checksum(packet: &[u8]) -> Result<u32, WireError> {
    if packet.len() < CommonHeader::LEN {
        return Err(WireError::ShortPacket { len: packet.len() });
    }
    let crc = crc32c::crc32c(&packet[..8]);
    let crc = crc32c::crc32c_append(crc, &[0; 4]);
    Ok(crc32c::crc32c_append(crc, &packet[12..]))
}

/// Checks the checksum of `packet` under `policy`.
pub fn verify_checksum(packet: &[u8], policy: ChecksumPolicy) -> Result<(), WireError> {
    let header = CommonHeader::decode(packet)?;
    match policy {
        ChecksumPolicy::Ignore => return Ok(()),
        ChecksumPolicy::AcceptZero if header.checksum == 0 => return Ok(()),
        _ => {}
    }
    let computed = compute_checksum(packet)?;
    if computed == header.checksum {
        Ok(())
    } else {
        Err(WireError::BadChecksum {
            received: header.checksum,
            computed,
        })
    }
}

/// Writes the CRC32c of `packet` into its checksum field.
pub fn seal(packet: &mut [u8]) -> Result<(), WireError> {
    let crc = compute_checksum(packet)?;
    packet[8..12].copy_from_slice(&crc.to_le_bytes());
    Ok(())
}

/// One chunk as it sits in the packet, before its value is interpreted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawChunk<'a> {
    pub typ: u8,
    pub flags: u8,
    /// The value: the bytes after the 4-byte header, up to Chunk Length.
    pub value: &'a [u8],
    /// Header and value, without padding: what an Unrecognized Chunk Type error
    /// cause carries (RFC 9260 3.3.10.6).
    pub bytes: &'a [u8],
    /// Offset of the chunk from the start of the chunk area.
    pub offset: usize,
}

impl<'a> RawChunk<'a> {
    /// Interprets the value.
    pub fn decode(&self) -> Result<Chunk<'a>, WireError> {
        Chunk::decode(self.typ, self.flags, self.value)
    }
}

/// Walks the chunks of a packet's chunk area (everything after the common
/// header), checking each length and its padding, and stops at the first error.
#[derive(Debug, Clone)]
pub struct RawChunks<'a> {
    area: &'a [u8],
    offset: usize,
    count: usize,
    failed: bool,
}

impl<'a> RawChunks<'a> {
    pub fn new(area: &'a [u8]) -> Self {
        Self {
            area,
            offset: 0,
            count: 0,
            failed: false,
        }
    }

    fn step(&mut self) -> Result<RawChunk<'a>, WireError> {
        let rest = &self.area[self.offset..];
        if self.count == MAX_CHUNKS_PER_PACKET {
            return Err(WireError::TooManyChunks {
                limit: MAX_CHUNKS_PER_PACKET,
            });
        }
        let [typ, flags, l0, l1, ..] = *rest else {
            return Err(WireError::TrailingBytes { count: rest.len() });
        };
        let what = types::name(typ);
        let len = usize::from(u16::from_be_bytes([l0, l1]));
        if len < 4 {
            return Err(WireError::InvalidLength {
                what,
                len,
                expected: "at least 4, the chunk header",
            });
        }
        let Some(bytes) = rest.get(..len) else {
            return Err(WireError::Truncated {
                what,
                needed: len,
                available: rest.len(),
            });
        };
        // RFC 9260 3.2: every chunk is padded to a multiple of 4 bytes.
        if padded(len) > rest.len() {
            return Err(WireError::MissingPadding {
                what,
                offset: self.offset,
            });
        }
        let chunk = RawChunk {
            typ,
            flags,
            value: &bytes[4..],
            bytes,
            offset: self.offset,
        };
        self.offset += padded(len);
        self.count += 1;
        Ok(chunk)
    }
}

impl<'a> Iterator for RawChunks<'a> {
    type Item = Result<RawChunk<'a>, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.offset >= self.area.len() {
            return None;
        }
        let item = self.step();
        self.failed = item.is_err();
        Some(item)
    }
}

/// A whole decoded packet. Byte fields of its chunks borrow from the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<'a> {
    pub header: CommonHeader,
    pub chunks: Vec<Chunk<'a>>,
}

impl<'a> Packet<'a> {
    /// Decodes `data`, verifying its CRC32c (RFC 9260 6.8).
    pub fn decode(data: &'a [u8]) -> Result<Self, WireError> {
        Self::decode_with(data, ChecksumPolicy::Verify)
    }

    /// Decodes `data` under a checksum policy. Checks the checksum, every chunk's
    /// length and padding, each chunk's layout, the chunk count limit, and that
    /// INIT, INIT ACK and SHUTDOWN COMPLETE stand alone (RFC 9260 6.10).
    pub fn decode_with(data: &'a [u8], policy: ChecksumPolicy) -> Result<Self, WireError> {
        verify_checksum(data, policy)?;
        let header = CommonHeader::decode(data)?;
        let chunks = RawChunks::new(&data[CommonHeader::LEN..])
            .map(|raw| raw.and_then(|raw| raw.decode()))
            .collect::<Result<Vec<_>, _>>()?;
        if chunks.is_empty() {
            return Err(WireError::NoChunks);
        }
        if chunks.len() > 1
            && let Some(alone) = chunks.iter().find(|c| c.must_be_alone())
        {
            return Err(WireError::MustBeAlone {
                what: alone.name(),
                count: chunks.len(),
            });
        }
        Ok(Packet { header, chunks })
    }

    /// Appends the packet with its CRC32c. The header's `checksum` field is ignored.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), WireError> {
        let mut w = PacketWriter::new(out, &self.header);
        for chunk in &self.chunks {
            w.push(chunk)?;
        }
        w.finish()
    }

    /// The encoded packet in a new buffer.
    pub fn to_bytes(&self) -> Result<Vec<u8>, WireError> {
        let mut out = Vec::with_capacity(self.encoded_len());
        self.encode(&mut out)?;
        Ok(out)
    }

    /// Bytes the encoded packet takes.
    pub fn encoded_len(&self) -> usize {
        CommonHeader::LEN + self.chunks.iter().map(Chunk::encoded_len).sum::<usize>()
    }
}

/// Builds a packet chunk by chunk in a caller's buffer, then seals its checksum.
#[derive(Debug)]
pub struct PacketWriter<'b> {
    out: &'b mut Vec<u8>,
    start: usize,
}

impl<'b> PacketWriter<'b> {
    /// Appends the common header to `out`.
    pub fn new(out: &'b mut Vec<u8>, header: &CommonHeader) -> Self {
        let start = out.len();
        header.encode(out);
        Self { out, start }
    }

    /// Appends one chunk. On error nothing is appended.
    pub fn push(&mut self, chunk: &Chunk<'_>) -> Result<(), WireError> {
        let len = self.out.len();
        chunk
            .encode(self.out)
            .inspect_err(|_| self.out.truncate(len))
    }

    /// Appends one chunk given as its own type. On error nothing is appended.
    pub fn push_chunk<'c, C: ChunkCodec<'c>>(&mut self, chunk: &C) -> Result<(), WireError> {
        let len = self.out.len();
        chunk
            .encode(self.out)
            .inspect_err(|_| self.out.truncate(len))
    }

    /// Bytes written so far, header included.
    pub fn len(&self) -> usize {
        self.out.len() - self.start
    }

    /// Whether only the header has been written.
    pub fn is_empty(&self) -> bool {
        self.len() == CommonHeader::LEN
    }

    /// Writes the CRC32c into the header.
    pub fn finish(self) -> Result<(), WireError> {
        seal(&mut self.out[self.start..])
    }

    /// Leaves the checksum zero, for a peer that accepts it (RFC 9653).
    pub fn finish_zero_checksum(self) {}
}
