//! A small writer and reader for pcapng capture files, the format Wireshark
//! writes by default: one file holds several interfaces (here, one per link
//! direction) and every packet can carry a comment (here, what the link did
//! to it: dropped, corrupted, duplicated, held back).
//!
//! The file is one little-endian section (pcapng, IETF draft
//! `draft-ietf-opsawg-pcapng`): a Section Header Block naming the writing
//! application, then Interface Description Blocks (link type 101,
//! `LINKTYPE_RAW`: each packet starts with an IPv4 header; snaplen 65535;
//! microsecond timestamps; `if_name` and `if_description` options), and one
//! Enhanced Packet Block per packet with an optional `opt_comment`. Blocks and
//! option values are padded to 32 bits. Wireshark shows a packet's comment as
//! `frame.comment` (`tshark -T fields -e frame.comment`) and its interface as
//! `frame.interface_name`.
//!
//! ```
//! use std::net::{Ipv4Addr, SocketAddrV4};
//! use brisk_net::pcapng::{Block, PcapngWriter, read_blocks};
//!
//! let mut w = PcapngWriter::new(Vec::new(), "example").unwrap();
//! let link = w.add_interface("link 0: 10.0.0.1 -> 10.0.0.2", "").unwrap();
//! let a = SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 1), 9899);
//! let b = SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 2), 9899);
//! w.write_udp(link, 1_500_000, 1, a, b, b"payload", Some("dropped")).unwrap();
//! let blocks = read_blocks(&w.into_inner()).unwrap();
//! assert!(matches!(&blocks[2], Block::Packet(p) if p.comments == ["dropped"]));
//! ```

use std::io::{self, Write};
use std::net::SocketAddrV4;

use crate::pcap::{LINKTYPE_RAW, SNAPLEN, ipv4_udp_packet};

/// Block type of a Section Header Block.
pub const SHB_TYPE: u32 = 0x0a0d_0d0a;
/// Block type of an Interface Description Block.
pub const IDB_TYPE: u32 = 0x0000_0001;
/// Block type of an Enhanced Packet Block.
pub const EPB_TYPE: u32 = 0x0000_0006;
/// The byte-order magic of a Section Header Block.
pub const BYTE_ORDER_MAGIC: u32 = 0x1a2b_3c4d;

/// Option codes used here.
pub const OPT_ENDOFOPT: u16 = 0;
pub const OPT_COMMENT: u16 = 1;
pub const SHB_USERAPPL: u16 = 4;
pub const IF_NAME: u16 = 2;
pub const IF_DESCRIPTION: u16 = 3;
pub const IF_TSRESOL: u16 = 9;

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// Appends options (code, value), each padded to 32 bits, and the end of
/// options; nothing at all when `options` is empty.
fn put_options(body: &mut Vec<u8>, options: &[(u16, &[u8])]) -> io::Result<()> {
    if options.is_empty() {
        return Ok(());
    }
    for &(code, value) in options {
        let len = u16::try_from(value.len()).map_err(|_| {
            invalid(format!(
                "pcapng option {code} of {} bytes is longer than 65535",
                value.len()
            ))
        })?;
        body.extend_from_slice(&code.to_le_bytes());
        body.extend_from_slice(&len.to_le_bytes());
        body.extend_from_slice(value);
        pad(body);
    }
    body.extend_from_slice(&OPT_ENDOFOPT.to_le_bytes());
    body.extend_from_slice(&0u16.to_le_bytes());
    Ok(())
}

fn pad(body: &mut Vec<u8>) {
    body.resize(body.len().next_multiple_of(4), 0);
}

/// Writes a pcapng file: one section, interfaces added as they come, packets
/// on any interface added so far.
#[derive(Debug)]
pub struct PcapngWriter<W: Write> {
    out: W,
    interfaces: u32,
}

impl<W: Write> PcapngWriter<W> {
    /// Writes the Section Header Block, naming `application` (`shb_userappl`).
    pub fn new(out: W, application: &str) -> io::Result<Self> {
        let mut w = Self { out, interfaces: 0 };
        let mut body = Vec::new();
        body.extend_from_slice(&BYTE_ORDER_MAGIC.to_le_bytes());
        body.extend_from_slice(&1u16.to_le_bytes()); // major version
        body.extend_from_slice(&0u16.to_le_bytes()); // minor version
        body.extend_from_slice(&(-1i64).to_le_bytes()); // section length: not given
        let opts: Vec<(u16, &[u8])> = if application.is_empty() {
            Vec::new()
        } else {
            vec![(SHB_USERAPPL, application.as_bytes())]
        };
        put_options(&mut body, &opts)?;
        w.block(SHB_TYPE, &body)?;
        Ok(w)
    }

    /// Writes an Interface Description Block (raw IPv4, snaplen 65535,
    /// microsecond timestamps) and returns its interface number, counting
    /// from 0 in the order interfaces were added. Empty `name` or
    /// `description` are left out.
    pub fn add_interface(&mut self, name: &str, description: &str) -> io::Result<u32> {
        let mut body = Vec::new();
        body.extend_from_slice(&(LINKTYPE_RAW as u16).to_le_bytes());
        body.extend_from_slice(&0u16.to_le_bytes()); // reserved
        body.extend_from_slice(&SNAPLEN.to_le_bytes());
        let mut opts: Vec<(u16, &[u8])> = Vec::new();
        if !name.is_empty() {
            opts.push((IF_NAME, name.as_bytes()));
        }
        if !description.is_empty() {
            opts.push((IF_DESCRIPTION, description.as_bytes()));
        }
        opts.push((IF_TSRESOL, &[6])); // 10^-6 s
        put_options(&mut body, &opts)?;
        self.block(IDB_TYPE, &body)?;
        let id = self.interfaces;
        self.interfaces += 1;
        Ok(id)
    }

    /// How many interfaces have been added.
    pub fn interfaces(&self) -> u32 {
        self.interfaces
    }

    /// Writes an Enhanced Packet Block holding `packet` (which starts with an
    /// IPv4 header) on `interface`, stamped `time_us` microseconds since the
    /// Unix epoch, with `comment` as its `opt_comment`. Packets longer than
    /// [`SNAPLEN`] are cut, their original length kept.
    pub fn write_raw_ipv4(
        &mut self,
        interface: u32,
        time_us: u64,
        packet: &[u8],
        comment: Option<&str>,
    ) -> io::Result<()> {
        if interface >= self.interfaces {
            return Err(invalid(format!(
                "pcapng packet on interface {interface}, but only {} interfaces were added",
                self.interfaces
            )));
        }
        let orig_len = u32::try_from(packet.len()).map_err(|_| {
            invalid(format!(
                "packet of {} bytes is too long for pcapng",
                packet.len()
            ))
        })?;
        let incl_len = orig_len.min(SNAPLEN);
        let mut body = Vec::with_capacity(20 + packet.len() + 8);
        body.extend_from_slice(&interface.to_le_bytes());
        body.extend_from_slice(&((time_us >> 32) as u32).to_le_bytes());
        body.extend_from_slice(&(time_us as u32).to_le_bytes());
        body.extend_from_slice(&incl_len.to_le_bytes());
        body.extend_from_slice(&orig_len.to_le_bytes());
        body.extend_from_slice(&packet[..incl_len as usize]);
        pad(&mut body);
        let opts: Vec<(u16, &[u8])> = match comment {
            Some(c) if !c.is_empty() => vec![(OPT_COMMENT, c.as_bytes())],
            _ => Vec::new(),
        };
        put_options(&mut body, &opts)?;
        self.block(EPB_TYPE, &body)
    }

    /// Writes one UDP datagram from `src` to `dst` carrying `payload` inside
    /// an IPv4 header with Identification `ip_id` (see
    /// [`crate::pcap::ipv4_udp_packet`]), as [`PcapngWriter::write_raw_ipv4`].
    #[allow(clippy::too_many_arguments)]
    pub fn write_udp(
        &mut self,
        interface: u32,
        time_us: u64,
        ip_id: u16,
        src: SocketAddrV4,
        dst: SocketAddrV4,
        payload: &[u8],
        comment: Option<&str>,
    ) -> io::Result<()> {
        let packet = ipv4_udp_packet(ip_id, src, dst, payload)?;
        self.write_raw_ipv4(interface, time_us, &packet, comment)
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// The underlying writer.
    pub fn get_ref(&self) -> &W {
        &self.out
    }

    /// Gives back the underlying writer, without flushing it.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// Writes a block: type, total length, `body` (a multiple of 4 bytes),
    /// total length again.
    fn block(&mut self, typ: u32, body: &[u8]) -> io::Result<()> {
        let total = u32::try_from(body.len() + 12)
            .map_err(|_| invalid(format!("pcapng block of {} bytes", body.len())))?;
        self.out.write_all(&typ.to_le_bytes())?;
        self.out.write_all(&total.to_le_bytes())?;
        self.out.write_all(body)?;
        self.out.write_all(&total.to_le_bytes())
    }
}

/// One block read back by [`read_blocks`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    Section {
        /// `shb_userappl`.
        application: Option<String>,
    },
    Interface(Interface),
    Packet(Packet),
    /// A block of another type, skipped.
    Other {
        block_type: u32,
    },
}

/// An Interface Description Block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    pub link_type: u16,
    pub snaplen: u32,
    pub name: Option<String>,
    pub description: Option<String>,
    /// `if_tsresol` as written (6 means microseconds; absent means 6 too).
    pub tsresol: Option<u8>,
}

/// An Enhanced Packet Block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    pub interface: u32,
    /// In the interface's time unit (microseconds for files written here).
    pub timestamp: u64,
    pub original_len: u32,
    pub data: Vec<u8>,
    /// Every `opt_comment`, in order.
    pub comments: Vec<String>,
}

fn bad(offset: usize, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("pcapng at byte {offset}: {what}"),
    )
}

fn le16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Reads the options of a block body from `at`: (code, value) pairs, up to
/// the end of options or of the body.
fn options(body: &[u8], mut at: usize, base: usize) -> io::Result<Vec<(u16, Vec<u8>)>> {
    let mut out = Vec::new();
    while at < body.len() {
        let (Some(code), Some(len)) = (le16(body, at), le16(body, at + 2)) else {
            return Err(bad(base + at, "truncated option header"));
        };
        if code == OPT_ENDOFOPT {
            break;
        }
        let start = at + 4;
        let end = start + usize::from(len);
        let value = body
            .get(start..end)
            .ok_or_else(|| bad(base + at, "option runs past its block"))?;
        out.push((code, value.to_vec()));
        at = end.next_multiple_of(4);
    }
    Ok(out)
}

fn text(value: &[u8]) -> String {
    String::from_utf8_lossy(value).into_owned()
}

/// Parses a little-endian pcapng file (as [`PcapngWriter`] writes) into its
/// blocks, checking each block's lengths. Never panics on bad input: a
/// truncated or inconsistent file is an `InvalidData` error naming the byte
/// offset.
pub fn read_blocks(bytes: &[u8]) -> io::Result<Vec<Block>> {
    let mut blocks = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let (Some(typ), Some(total)) = (le32(bytes, at), le32(bytes, at + 4)) else {
            return Err(bad(at, "truncated block header"));
        };
        let total = total as usize;
        if total < 12 || total % 4 != 0 {
            return Err(bad(at, "block length not a multiple of 4 of at least 12"));
        }
        let Some(block) = bytes.get(at..at + total) else {
            return Err(bad(at, "block runs past the end of the file"));
        };
        if le32(block, total - 4) != Some(total as u32) {
            return Err(bad(
                at,
                "trailing block length differs from the leading one",
            ));
        }
        let body = &block[8..total - 4];
        let base = at + 8;
        let parsed = match typ {
            SHB_TYPE => {
                if le32(body, 0) != Some(BYTE_ORDER_MAGIC) {
                    return Err(bad(base, "not a little-endian section (byte-order magic)"));
                }
                if body.len() < 16 {
                    return Err(bad(base, "section header too short"));
                }
                let application = options(body, 16, base)?
                    .into_iter()
                    .find(|(c, _)| *c == SHB_USERAPPL)
                    .map(|(_, v)| text(&v));
                Block::Section { application }
            }
            IDB_TYPE => {
                let (Some(link_type), Some(snaplen)) = (le16(body, 0), le32(body, 4)) else {
                    return Err(bad(base, "interface description too short"));
                };
                let mut iface = Interface {
                    link_type,
                    snaplen,
                    name: None,
                    description: None,
                    tsresol: None,
                };
                for (code, value) in options(body, 8, base)? {
                    match code {
                        IF_NAME => iface.name = Some(text(&value)),
                        IF_DESCRIPTION => iface.description = Some(text(&value)),
                        IF_TSRESOL => iface.tsresol = value.first().copied(),
                        _ => {}
                    }
                }
                Block::Interface(iface)
            }
            EPB_TYPE => {
                let fields = (0..5)
                    .map(|i| le32(body, 4 * i))
                    .collect::<Option<Vec<u32>>>();
                let Some(&[interface, high, low, incl_len, original_len]) = fields.as_deref()
                else {
                    return Err(bad(base, "enhanced packet block too short"));
                };
                let data_end = 20 + incl_len as usize;
                let data = body
                    .get(20..data_end)
                    .ok_or_else(|| bad(base, "packet data runs past its block"))?
                    .to_vec();
                let comments = options(body, data_end.next_multiple_of(4), base)?
                    .into_iter()
                    .filter(|(c, _)| *c == OPT_COMMENT)
                    .map(|(_, v)| text(&v))
                    .collect();
                Block::Packet(Packet {
                    interface,
                    timestamp: (u64::from(high) << 32) | u64::from(low),
                    original_len,
                    data,
                    comments,
                })
            }
            other => Block::Other { block_type: other },
        };
        blocks.push(parsed);
        at += total;
    }
    Ok(blocks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn addr(last: u8) -> SocketAddrV4 {
        SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, last), 9899)
    }

    fn u32_at(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }

    /// Walks the raw bytes block by block: (type, total length, offset).
    fn raw_blocks(bytes: &[u8]) -> Vec<(u32, usize, usize)> {
        let mut out = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            let total = u32_at(bytes, at + 4) as usize;
            assert_eq!(total % 4, 0, "block at {at} is padded to 32 bits");
            assert_eq!(
                u32_at(bytes, at + total - 4) as usize,
                total,
                "trailing length of the block at {at}"
            );
            out.push((u32_at(bytes, at), total, at));
            at += total;
        }
        assert_eq!(at, bytes.len());
        out
    }

    #[test]
    fn a_capture_with_a_dropped_packet_reads_back_with_its_comment() {
        let mut w = PcapngWriter::new(Vec::new(), "brisk-sim").unwrap();
        let fwd = w
            .add_interface("link 0: 10.0.0.1 -> 10.0.0.2", "forward")
            .unwrap();
        let back = w.add_interface("link 1: 10.0.0.2 -> 10.0.0.1", "").unwrap();
        assert_eq!((fwd, back), (0, 1));
        w.write_udp(fwd, 1_000_000, 1, addr(1), addr(2), b"sent", None)
            .unwrap();
        let comment = "dropped by link 0 (10.0.0.1 -> 10.0.0.2): drop-data pattern (DATA packet 2)";
        w.write_udp(fwd, 1_000_500, 2, addr(1), addr(2), b"lost!", Some(comment))
            .unwrap();
        w.write_udp(back, (1u64 << 32) + 7, 3, addr(2), addr(1), b"sack", None)
            .unwrap();
        let bytes = w.into_inner();

        // The raw structure: SHB, two IDBs, three EPBs, every length right.
        let raw = raw_blocks(&bytes);
        let types: Vec<u32> = raw.iter().map(|b| b.0).collect();
        assert_eq!(
            types,
            [SHB_TYPE, IDB_TYPE, IDB_TYPE, EPB_TYPE, EPB_TYPE, EPB_TYPE]
        );
        assert_eq!(&bytes[0..4], &[0x0a, 0x0d, 0x0d, 0x0a]);
        assert_eq!(u32_at(&bytes, 8), BYTE_ORDER_MAGIC);
        assert_eq!(&bytes[12..16], &[1, 0, 0, 0], "version 1.0");
        assert_eq!(&bytes[16..24], &[0xff; 8], "section length unknown");
        let (_, _, idb) = raw[1];
        assert_eq!(&bytes[idb + 8..idb + 12], &[101, 0, 0, 0], "LINKTYPE_RAW");
        assert_eq!(u32_at(&bytes, idb + 12), 65_535);
        // The dropped packet's block: interface 0, time, lengths, the
        // padded IPv4/UDP packet, then the comment option and the end.
        let (_, total, epb) = raw[4];
        assert_eq!(u32_at(&bytes, epb + 8), 0, "interface");
        assert_eq!(u32_at(&bytes, epb + 12), 0, "timestamp high");
        assert_eq!(u32_at(&bytes, epb + 16), 1_000_500, "timestamp low");
        let len = 20 + 8 + 5;
        assert_eq!(u32_at(&bytes, epb + 20) as usize, len, "captured length");
        assert_eq!(u32_at(&bytes, epb + 24) as usize, len, "original length");
        let opt = epb + 28 + len.next_multiple_of(4);
        assert_eq!(&bytes[opt..opt + 2], &OPT_COMMENT.to_le_bytes());
        assert_eq!(
            u16::from_le_bytes([bytes[opt + 2], bytes[opt + 3]]) as usize,
            comment.len()
        );
        assert_eq!(&bytes[opt + 4..opt + 4 + comment.len()], comment.as_bytes());
        let end = opt + 4 + comment.len().next_multiple_of(4);
        assert_eq!(&bytes[end..end + 4], &[0, 0, 0, 0], "opt_endofopt");
        assert_eq!(end + 8, epb + total);
        // A packet without a comment has no options at all.
        let (_, total, epb) = raw[3];
        assert_eq!(total, 12 + 20 + (20 + 8 + 4));
        assert_eq!(u32_at(&bytes, epb + 8), 0);

        // The reader agrees.
        let blocks = read_blocks(&bytes).unwrap();
        assert_eq!(
            blocks[0],
            Block::Section {
                application: Some("brisk-sim".into())
            }
        );
        let Block::Interface(i) = &blocks[1] else {
            panic!("{blocks:?}")
        };
        assert_eq!(i.name.as_deref(), Some("link 0: 10.0.0.1 -> 10.0.0.2"));
        assert_eq!(i.description.as_deref(), Some("forward"));
        assert_eq!((i.link_type, i.snaplen, i.tsresol), (101, 65_535, Some(6)));
        let packets: Vec<&Packet> = blocks
            .iter()
            .filter_map(|b| match b {
                Block::Packet(p) => Some(p),
                _ => None,
            })
            .collect();
        assert_eq!(packets.len(), 3);
        assert!(packets[0].comments.is_empty());
        assert_eq!(packets[1].comments, [comment]);
        assert_eq!(&packets[1].data[28..], b"lost!");
        assert_eq!(packets[1].data[5], 2, "IPv4 identification");
        assert_eq!(
            (packets[2].interface, packets[2].timestamp),
            (1, (1 << 32) + 7)
        );
    }

    #[test]
    fn a_packet_on_an_unknown_interface_is_refused() {
        let mut w = PcapngWriter::new(Vec::new(), "").unwrap();
        let err = w
            .write_udp(0, 0, 1, addr(1), addr(2), b"x", None)
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn long_packets_are_cut_to_snaplen() {
        let mut w = PcapngWriter::new(Vec::new(), "").unwrap();
        w.add_interface("", "").unwrap();
        let big = vec![0x45u8; SNAPLEN as usize + 3];
        w.write_raw_ipv4(0, 0, &big, Some("big")).unwrap();
        let blocks = read_blocks(&w.into_inner()).unwrap();
        let Block::Packet(p) = &blocks[2] else {
            panic!()
        };
        assert_eq!(p.data.len(), SNAPLEN as usize);
        assert_eq!(p.original_len, SNAPLEN + 3);
        assert_eq!(p.comments, ["big"]);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let mut w = PcapngWriter::new(Vec::new(), "x").unwrap();
        w.add_interface("a", "b").unwrap();
        w.write_udp(0, 5, 1, addr(1), addr(2), b"abc", Some("c"))
            .unwrap();
        let good = w.into_inner();
        for cut in 1..good.len() {
            if let Err(e) = read_blocks(&good[..cut]) {
                assert_eq!(e.kind(), io::ErrorKind::InvalidData);
            }
        }
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0xff;
            let _ = read_blocks(&bad);
        }
        assert!(read_blocks(&[0; 12]).is_err());
    }
}
