//! Packet captures of link directions, whatever the transport (bare SCTP
//! packets are written as UDP/IPv4 on port 9899, IP packets as they are): one classic pcap file per link
//! direction ([`Capture`]), or one pcapng file of every link direction with
//! each packet's fate as a comment ([`LinkCapture`]).

use std::io::{self, Write};
use std::net::{SocketAddr, SocketAddrV4};

use brisk_proto::Time;

use brisk_net::pcap::PcapWriter;
use brisk_net::pcapng::PcapngWriter;

use crate::transport::Wire;

/// The UDP port of SCTP over UDP (RFC 6951), on both sides of every record.
pub const CAPTURE_UDP_PORT: u16 = 9899;

/// A capture file's writer: flushes what it buffered.
pub(crate) trait CaptureWriter {
    fn flush(&mut self) -> io::Result<()>;
}

impl<W: Write> CaptureWriter for PcapWriter<W> {
    fn flush(&mut self) -> io::Result<()> {
        PcapWriter::flush(self)
    }
}

impl<W: Write> CaptureWriter for PcapngWriter<W> {
    fn flush(&mut self) -> io::Result<()> {
        PcapngWriter::flush(self)
    }
}

/// A writer that remembers its first error and then stops writing: a
/// capture must never stop the simulation, only report at the end.
pub(crate) struct Sticky<W> {
    writer: Option<W>,
    error: Option<io::Error>,
}

impl<W: CaptureWriter> Sticky<W> {
    fn new(opened: io::Result<W>) -> Self {
        match opened {
            Ok(w) => Self {
                writer: Some(w),
                error: None,
            },
            Err(e) => Self {
                writer: None,
                error: Some(e),
            },
        }
    }

    /// Runs `f` on the writer unless an error stopped it; keeps `f`'s error.
    fn with(&mut self, f: impl FnOnce(&mut W) -> io::Result<()>) {
        if let Some(w) = &mut self.writer
            && let Err(e) = f(w)
        {
            self.writer = None;
            self.error.get_or_insert(e);
        }
    }

    /// Flushes, and reports the first error this capture met (once).
    pub fn finish(&mut self) -> io::Result<()> {
        self.with(|w| w.flush());
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// One link direction as classic pcap.
pub(crate) type Capture = Sticky<PcapWriter<Box<dyn Write>>>;

impl Capture {
    pub fn create(out: Box<dyn Write>) -> Self {
        Sticky::new(PcapWriter::new(out))
    }

    /// Records `packet` from `src` to `dst`: a bare SCTP packet as
    /// UDP/IPv4 on port 9899, an IPv4 packet as it is.
    pub fn write(
        &mut self,
        now: Time,
        wire: Wire,
        src: SocketAddr,
        dst: SocketAddr,
        packet: &[u8],
    ) {
        self.with(|w| match (wire, src, dst) {
            (Wire::Ipv4, ..) => w.write_raw_ipv4(now.as_micros(), packet),
            (Wire::Sctp, SocketAddr::V4(s), SocketAddr::V4(d)) => w.write_udp(
                now.as_micros(),
                SocketAddrV4::new(*s.ip(), CAPTURE_UDP_PORT),
                SocketAddrV4::new(*d.ip(), CAPTURE_UDP_PORT),
                packet,
            ),
            _ => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("pcap capture writes IPv4 only; packet from {src} to {dst}"),
            )),
        });
    }
}

/// Every link direction as one pcapng file (one interface each, numbered as
/// the link directions are).
pub(crate) type LinkCapture = Sticky<PcapngWriter<Box<dyn Write>>>;

impl LinkCapture {
    pub fn create(out: Box<dyn Write>) -> Self {
        Sticky::new(PcapngWriter::new(
            out,
            concat!("brisk-sim ", env!("CARGO_PKG_VERSION")),
        ))
    }

    /// Adds the interface of the next link direction.
    pub fn add_link(&mut self, name: &str, description: &str) {
        self.with(|w| w.add_interface(name, description).map(|_| ()));
    }

    /// Records `packet` from `src` to `dst` entering link direction `link`:
    /// a bare SCTP packet as UDP/IPv4 on port 9899 with IPv4 Identification
    /// `ip_id`, an IPv4 packet (which carries its own) as it is.
    #[allow(clippy::too_many_arguments)]
    pub fn write(
        &mut self,
        link: usize,
        now: Time,
        (wire, ip_id): (Wire, u16),
        src: SocketAddr,
        dst: SocketAddr,
        packet: &[u8],
        comment: Option<&str>,
    ) {
        self.with(|w| match (wire, src, dst, u32::try_from(link)) {
            (_, _, _, Err(_)) => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("link direction {link} has no pcapng interface number"),
            )),
            (Wire::Ipv4, _, _, Ok(interface)) => {
                w.write_raw_ipv4(interface, now.as_micros(), packet, comment)
            }
            (Wire::Sctp, SocketAddr::V4(s), SocketAddr::V4(d), Ok(interface)) => w.write_udp(
                interface,
                now.as_micros(),
                ip_id,
                SocketAddrV4::new(*s.ip(), CAPTURE_UDP_PORT),
                SocketAddrV4::new(*d.ip(), CAPTURE_UDP_PORT),
                packet,
                comment,
            ),
            _ => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("pcapng capture writes IPv4 only; packet from {src} to {dst}"),
            )),
        });
    }
}
