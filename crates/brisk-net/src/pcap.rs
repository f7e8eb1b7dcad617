//! A small writer for classic libpcap capture files, so simulated traffic can be
//! opened in Wireshark or checked with `tshark`.
//!
//! The file is the classic format (not pcapng): a 24-byte file header with magic
//! `0xa1b2c3d4` written little-endian, microsecond timestamps, snaplen 65535 and
//! link type 101 (`LINKTYPE_RAW`: each record starts with an IPv4 header, no
//! link-layer header). Records are 16 bytes of header followed by the packet.
//!
//! SCTP travels over UDP (RFC 6951), so [`PcapWriter::write_udp`] wraps a
//! payload in IPv4 (RFC 791) and UDP (RFC 768) headers with real checksums.
//! Nothing is sent anywhere: this only produces bytes.
//!
//! ```
//! use std::net::{Ipv4Addr, SocketAddrV4};
//! use brisk_net::pcap::PcapWriter;
//!
//! let mut pcap = PcapWriter::new(Vec::new()).unwrap();
//! let a = SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 1), 9899);
//! let b = SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 2), 9899);
//! pcap.write_udp(1_500_000, a, b, b"payload").unwrap();
//! let bytes = pcap.into_inner();
//! assert_eq!(bytes.len(), 24 + 16 + 20 + 8 + 7);
//! ```

use std::io::{self, Write};
use std::net::{Ipv4Addr, SocketAddrV4};

/// Magic number of a classic pcap file with microsecond timestamps.
pub const PCAP_MAGIC: u32 = 0xa1b2_c3d4;
/// The largest packet a record holds; longer packets are cut (`incl_len < orig_len`).
pub const SNAPLEN: u32 = 65_535;
/// `LINKTYPE_RAW`: the packet begins with an IPv4 or IPv6 header.
pub const LINKTYPE_RAW: u32 = 101;
/// Bytes of the pcap file header.
pub const FILE_HEADER_LEN: usize = 24;
/// Bytes of each record's header.
pub const RECORD_HEADER_LEN: usize = 16;
/// Bytes of the IPv4 header written here (no options).
pub const IPV4_HEADER_LEN: usize = 20;
/// Bytes of the UDP header.
pub const UDP_HEADER_LEN: usize = 8;
/// IP protocol number of UDP.
pub const IPPROTO_UDP: u8 = 17;
/// IP protocol number of TCP.
pub const IPPROTO_TCP: u8 = 6;
/// The TTL of every IPv4 header written here.
pub const TTL: u8 = 64;

/// Writes a pcap file, one IPv4 packet per record.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    out: W,
    /// The Identification field of the next IPv4 header built by `write_udp`.
    next_ip_id: u16,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the file header to `out`.
    pub fn new(mut out: W) -> io::Result<Self> {
        let mut header = [0u8; FILE_HEADER_LEN];
        header[0..4].copy_from_slice(&PCAP_MAGIC.to_le_bytes());
        header[4..6].copy_from_slice(&2u16.to_le_bytes()); // version major
        header[6..8].copy_from_slice(&4u16.to_le_bytes()); // version minor
        // thiszone (8..12) and sigfigs (12..16) stay zero.
        header[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
        header[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
        out.write_all(&header)?;
        Ok(Self { out, next_ip_id: 1 })
    }

    /// Writes one record holding `packet`, which must start with an IPv4
    /// header. `time_us` is microseconds since the Unix epoch (a simulator's
    /// clock starting at zero shows as 1970). Packets longer than [`SNAPLEN`]
    /// are cut, with their original length kept in the record header.
    pub fn write_raw_ipv4(&mut self, time_us: u64, packet: &[u8]) -> io::Result<()> {
        let seconds = u32::try_from(time_us / 1_000_000).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("timestamp {time_us} us does not fit the 32-bit seconds field of pcap"),
            )
        })?;
        let micros = (time_us % 1_000_000) as u32; // < 1_000_000, always fits
        let orig_len = u32::try_from(packet.len()).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("packet of {} bytes is too long for pcap", packet.len()),
            )
        })?;
        let incl_len = orig_len.min(SNAPLEN);
        let mut header = [0u8; RECORD_HEADER_LEN];
        header[0..4].copy_from_slice(&seconds.to_le_bytes());
        header[4..8].copy_from_slice(&micros.to_le_bytes());
        header[8..12].copy_from_slice(&incl_len.to_le_bytes());
        header[12..16].copy_from_slice(&orig_len.to_le_bytes());
        self.out.write_all(&header)?;
        self.out.write_all(&packet[..incl_len as usize])
    }

    /// Writes one UDP datagram from `src` to `dst` carrying `payload`, inside an
    /// IPv4 header (TTL 64, Don't Fragment, an Identification that increases by
    /// one per datagram) with correct IPv4 and UDP checksums.
    pub fn write_udp(
        &mut self,
        time_us: u64,
        src: SocketAddrV4,
        dst: SocketAddrV4,
        payload: &[u8],
    ) -> io::Result<()> {
        let packet = ipv4_udp_packet(self.next_ip_id, src, dst, payload)?;
        self.next_ip_id = self.next_ip_id.wrapping_add(1);
        self.write_raw_ipv4(time_us, &packet)
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
}

/// Builds an IPv4 packet (RFC 791, 20-byte header without options) holding a
/// UDP datagram (RFC 768) with its checksum over the pseudo-header.
pub fn ipv4_udp_packet(
    ip_id: u16,
    src: SocketAddrV4,
    dst: SocketAddrV4,
    payload: &[u8],
) -> io::Result<Vec<u8>> {
    let mut datagram = Vec::with_capacity(UDP_HEADER_LEN + payload.len());
    let Ok(udp_len) = u16::try_from(IPV4_HEADER_LEN + UDP_HEADER_LEN + payload.len()) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "UDP payload of {} bytes does not fit an IPv4 packet",
                payload.len()
            ),
        ));
    };
    let udp_len = udp_len - IPV4_HEADER_LEN as u16;
    datagram.extend_from_slice(&src.port().to_be_bytes());
    datagram.extend_from_slice(&dst.port().to_be_bytes());
    datagram.extend_from_slice(&udp_len.to_be_bytes());
    datagram.extend_from_slice(&[0, 0]); // checksum, filled below
    datagram.extend_from_slice(payload);
    let udp_sum = udp_checksum(*src.ip(), *dst.ip(), &datagram);
    datagram[6..8].copy_from_slice(&udp_sum.to_be_bytes());
    ipv4_packet(ip_id, *src.ip(), *dst.ip(), IPPROTO_UDP, &datagram)
}

/// Builds an IPv4 packet (RFC 791, 20-byte header without options: TTL 64,
/// Don't Fragment) from `src` to `dst` holding `payload` of IP protocol
/// `protocol`, whose own checksum the caller has filled in.
pub fn ipv4_packet(
    ip_id: u16,
    src: Ipv4Addr,
    dst: Ipv4Addr,
    protocol: u8,
    payload: &[u8],
) -> io::Result<Vec<u8>> {
    let total_len = IPV4_HEADER_LEN + payload.len();
    let Ok(total_len16) = u16::try_from(total_len) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "payload of {} bytes does not fit an IPv4 packet",
                payload.len()
            ),
        ));
    };
    let mut p = Vec::with_capacity(total_len);
    p.push(0x45); // version 4, IHL 5 words
    p.push(0); // DSCP / ECN
    p.extend_from_slice(&total_len16.to_be_bytes());
    p.extend_from_slice(&ip_id.to_be_bytes());
    p.extend_from_slice(&0x4000u16.to_be_bytes()); // DF, fragment offset 0
    p.push(TTL);
    p.push(protocol);
    p.extend_from_slice(&[0, 0]); // header checksum, filled below
    p.extend_from_slice(&src.octets());
    p.extend_from_slice(&dst.octets());
    let ip_sum = internet_checksum(&[&p[..IPV4_HEADER_LEN]]);
    p[10..12].copy_from_slice(&ip_sum.to_be_bytes());
    p.extend_from_slice(payload);
    Ok(p)
}

/// Sets the Identification of the IPv4 packet `packet` to `ip_id` and
/// recomputes its header checksum; leaves anything that is not an IPv4
/// packet with a whole header alone.
pub fn set_ipv4_id(packet: &mut [u8], ip_id: u16) {
    let header_len = match packet.first() {
        Some(&b) if b >> 4 == 4 => usize::from(b & 0x0f) * 4,
        _ => return,
    };
    if header_len < IPV4_HEADER_LEN || packet.len() < header_len {
        return;
    }
    packet[4..6].copy_from_slice(&ip_id.to_be_bytes());
    packet[10..12].copy_from_slice(&[0, 0]);
    let sum = internet_checksum(&[&packet[..header_len]]);
    packet[10..12].copy_from_slice(&sum.to_be_bytes());
}

/// The checksum TCP (RFC 9293 3.1) or UDP (RFC 768) puts in its header:
/// the Internet checksum of `segment` (its checksum field zero) over the IPv4
/// pseudo-header of protocol `protocol`.
pub fn transport_checksum(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, segment: &[u8]) -> u16 {
    let len = u16::try_from(segment.len()).unwrap_or(u16::MAX);
    let mut pseudo = [0u8; 12];
    pseudo[0..4].copy_from_slice(&src.octets());
    pseudo[4..8].copy_from_slice(&dst.octets());
    pseudo[9] = protocol;
    pseudo[10..12].copy_from_slice(&len.to_be_bytes());
    internet_checksum(&[&pseudo, segment])
}

/// The UDP checksum of `datagram` (header with a zero checksum field, then the
/// payload) over the IPv4 pseudo-header (RFC 768). A computed zero is sent as
/// `0xffff`, since zero means "no checksum".
fn udp_checksum(src: Ipv4Addr, dst: Ipv4Addr, datagram: &[u8]) -> u16 {
    match transport_checksum(src, dst, IPPROTO_UDP, datagram) {
        0 => 0xffff,
        sum => sum,
    }
}

/// The Internet checksum (RFC 1071): the ones' complement of the ones'
/// complement sum of 16-bit big-endian words, over `parts` taken as one byte
/// string (an odd final byte is padded with zero).
fn internet_checksum(parts: &[&[u8]]) -> u16 {
    let mut sum: u64 = 0;
    let mut odd: Option<u8> = None;
    for part in parts {
        for &byte in *part {
            match odd.take() {
                Some(hi) => sum += u64::from(u16::from_be_bytes([hi, byte])),
                None => odd = Some(byte),
            }
        }
    }
    if let Some(hi) = odd {
        sum += u64::from(u16::from_be_bytes([hi, 0]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(last: u8, port: u16) -> SocketAddrV4 {
        SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, last), port)
    }

    /// Ones' complement sum of big-endian 16-bit words, folded, written
    /// independently of `internet_checksum`: a header whose checksum is right
    /// sums to 0xffff.
    fn ones_sum(bytes: &[u8]) -> u16 {
        let mut padded = bytes.to_vec();
        if padded.len() % 2 == 1 {
            padded.push(0);
        }
        let mut sum: u32 = padded
            .chunks(2)
            .map(|w| (u32::from(w[0]) << 8) | u32::from(w[1]))
            .sum();
        while sum >> 16 != 0 {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        sum as u16
    }

    fn le32(b: &[u8]) -> u32 {
        u32::from_le_bytes(b.try_into().unwrap())
    }

    #[test]
    fn file_header_is_classic_pcap_raw_ipv4() {
        let w = PcapWriter::new(Vec::new()).unwrap();
        let bytes = w.into_inner();
        assert_eq!(
            bytes,
            [
                0xd4, 0xc3, 0xb2, 0xa1, // magic, little-endian
                2, 0, 4, 0, // version 2.4
                0, 0, 0, 0, // thiszone
                0, 0, 0, 0, // sigfigs
                0xff, 0xff, 0, 0, // snaplen 65535
                101, 0, 0, 0, // LINKTYPE_RAW
            ]
        );
    }

    #[test]
    fn record_header_holds_time_and_lengths() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        let payload = [0xabu8; 13];
        w.write_udp(3_000_042, addr(1, 9899), addr(2, 9899), &payload)
            .unwrap();
        w.write_raw_ipv4(7, &[0x45; 20]).unwrap();
        let bytes = w.into_inner();
        let rec = &bytes[FILE_HEADER_LEN..];
        assert_eq!(le32(&rec[0..4]), 3, "seconds");
        assert_eq!(le32(&rec[4..8]), 42, "microseconds");
        let len = (20 + 8 + payload.len()) as u32;
        assert_eq!(le32(&rec[8..12]), len, "incl_len");
        assert_eq!(le32(&rec[12..16]), len, "orig_len");
        let second = &rec[16 + len as usize..];
        assert_eq!(le32(&second[0..4]), 0);
        assert_eq!(le32(&second[4..8]), 7);
        assert_eq!(le32(&second[8..12]), 20);
        assert_eq!(le32(&second[12..16]), 20);
        assert_eq!(&second[16..], &[0x45; 20]);
    }

    #[test]
    fn long_packets_are_cut_to_snaplen() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        let big = vec![0u8; SNAPLEN as usize + 100];
        w.write_raw_ipv4(0, &big).unwrap();
        let bytes = w.into_inner();
        let rec = &bytes[FILE_HEADER_LEN..];
        assert_eq!(le32(&rec[8..12]), SNAPLEN);
        assert_eq!(le32(&rec[12..16]), SNAPLEN + 100);
        assert_eq!(rec.len(), RECORD_HEADER_LEN + SNAPLEN as usize);
    }

    #[test]
    fn timestamps_beyond_32_bit_seconds_are_refused() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        let err = w
            .write_raw_ipv4((u64::from(u32::MAX) + 1) * 1_000_000, &[0x45; 20])
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn ipv4_header_is_well_formed_and_its_checksum_verifies() {
        let payload = b"an odd-length payload";
        let p = ipv4_udp_packet(0x1234, addr(1, 9899), addr(2, 5000), payload).unwrap();
        let ip = &p[..20];
        assert_eq!(ip[0], 0x45);
        assert_eq!(
            u16::from_be_bytes([ip[2], ip[3]]) as usize,
            20 + 8 + payload.len()
        );
        assert_eq!(u16::from_be_bytes([ip[4], ip[5]]), 0x1234);
        assert_eq!(ip[8], 64, "TTL");
        assert_eq!(ip[9], 17, "protocol UDP");
        assert_eq!(&ip[12..16], &[127, 0, 0, 1]);
        assert_eq!(&ip[16..20], &[127, 0, 0, 2]);
        assert_ne!(u16::from_be_bytes([ip[10], ip[11]]), 0);
        assert_eq!(ones_sum(ip), 0xffff, "IPv4 header checksum");
    }

    #[test]
    fn udp_header_and_checksum_verify() {
        for payload in [&b""[..], b"x", b"even", b"\xff\xff\xff\xff\xff"] {
            let p = ipv4_udp_packet(1, addr(1, 9899), addr(2, 5000), payload).unwrap();
            let udp = &p[20..];
            assert_eq!(u16::from_be_bytes([udp[0], udp[1]]), 9899);
            assert_eq!(u16::from_be_bytes([udp[2], udp[3]]), 5000);
            assert_eq!(
                u16::from_be_bytes([udp[4], udp[5]]) as usize,
                8 + payload.len()
            );
            assert_eq!(&udp[8..], payload);
            assert_ne!(u16::from_be_bytes([udp[6], udp[7]]), 0, "checksum present");
            // Pseudo-header: source, destination, zero, protocol, UDP length.
            let mut check = Vec::new();
            check.extend_from_slice(&p[12..20]);
            check.extend_from_slice(&[0, 17]);
            check.extend_from_slice(&udp[4..6]);
            check.extend_from_slice(udp);
            assert_eq!(ones_sum(&check), 0xffff, "UDP checksum of {payload:?}");
        }
    }

    #[test]
    fn ip_identification_increments_per_datagram() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        for _ in 0..3 {
            w.write_udp(0, addr(1, 1), addr(2, 2), b"abc").unwrap();
        }
        let bytes = w.into_inner();
        let rec_len = RECORD_HEADER_LEN + 20 + 8 + 3;
        let ids: Vec<u16> = (0..3)
            .map(|i| {
                let ip = &bytes[FILE_HEADER_LEN + i * rec_len + RECORD_HEADER_LEN..];
                u16::from_be_bytes([ip[4], ip[5]])
            })
            .collect();
        assert_eq!(ids, [1, 2, 3]);
    }

    #[test]
    fn oversized_udp_payload_is_refused() {
        let payload = vec![0u8; 65_535 - 28 + 1];
        let err = ipv4_udp_packet(1, addr(1, 1), addr(2, 2), &payload).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(ipv4_udp_packet(1, addr(1, 1), addr(2, 2), &payload[1..]).is_ok());
    }

    #[test]
    fn a_computed_zero_udp_checksum_is_sent_as_all_ones() {
        // Find a payload whose checksum folds to zero: make the sum 0xffff.
        let src = Ipv4Addr::new(127, 0, 0, 1);
        let dst = Ipv4Addr::new(127, 0, 0, 2);
        let mut datagram = vec![0, 1, 0, 2, 0, 10, 0, 0, 0, 0];
        let partial = {
            let mut pseudo = vec![127, 0, 0, 1, 127, 0, 0, 2, 0, 17, 0, 10];
            pseudo.extend_from_slice(&datagram);
            ones_sum(&pseudo)
        };
        let fill = 0xffff - partial;
        datagram[8..10].copy_from_slice(&fill.to_be_bytes());
        assert_eq!(udp_checksum(src, dst, &datagram), 0xffff);
    }
}
