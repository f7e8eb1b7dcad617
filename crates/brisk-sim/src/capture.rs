//! Packet captures of link directions: one classic pcap file per link
//! direction ([`Capture`]), or one pcapng file of every link direction with
//! each packet's fate as a comment ([`LinkCapture`]).

use std::io::{self, Write};
use std::net::{SocketAddr, SocketAddrV4};

use brisk_proto::Time;

use crate::pcap::PcapWriter;
use crate::pcapng::PcapngWriter;

/// The UDP port of SCTP over UDP (RFC 6951), on both sides of every record.
pub const CAPTURE_UDP_PORT: u16 = 9899;

/// A pcap writer that remembers its first error and then stops writing.
pub(crate) struct Capture {
    writer: Option<PcapWriter<Box<dyn Write>>>,
    error: Option<io::Error>,
}

impl Capture {
    pub fn new(out: Box<dyn Write>) -> Self {
        match PcapWriter::new(out) {
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

    /// Records `packet` from `src` to `dst` as UDP/IPv4 on port 9899.
    pub fn write(&mut self, now: Time, src: SocketAddr, dst: SocketAddr, packet: &[u8]) {
        let Some(w) = &mut self.writer else {
            return;
        };
        let result = match (src, dst) {
            (SocketAddr::V4(s), SocketAddr::V4(d)) => w.write_udp(
                now.as_micros(),
                SocketAddrV4::new(*s.ip(), CAPTURE_UDP_PORT),
                SocketAddrV4::new(*d.ip(), CAPTURE_UDP_PORT),
                packet,
            ),
            _ => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("pcap capture writes IPv4 only; packet from {src} to {dst}"),
            )),
        };
        if let Err(e) = result {
            self.fail(e);
        }
    }

    /// Flushes, and reports the first error this capture met (once).
    pub fn finish(&mut self) -> io::Result<()> {
        if let Some(w) = &mut self.writer
            && let Err(e) = w.flush()
        {
            self.fail(e);
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn fail(&mut self, e: io::Error) {
        self.writer = None;
        self.error.get_or_insert(e);
    }
}

/// A pcapng writer of every link direction (one interface each, numbered as
/// the link directions are), that remembers its first error and then stops.
pub(crate) struct LinkCapture {
    writer: Option<PcapngWriter<Box<dyn Write>>>,
    error: Option<io::Error>,
}

impl LinkCapture {
    pub fn new(out: Box<dyn Write>) -> Self {
        match PcapngWriter::new(out, concat!("brisk-sim ", env!("CARGO_PKG_VERSION"))) {
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

    /// Adds the interface of the next link direction.
    pub fn add_link(&mut self, name: &str, description: &str) {
        let Some(w) = &mut self.writer else {
            return;
        };
        if let Err(e) = w.add_interface(name, description) {
            self.fail(e);
        }
    }

    /// Records `packet` from `src` to `dst` entering link direction `link`
    /// as UDP/IPv4 on port 9899, with IPv4 Identification `ip_id`.
    #[allow(clippy::too_many_arguments)]
    pub fn write(
        &mut self,
        link: usize,
        now: Time,
        ip_id: u16,
        src: SocketAddr,
        dst: SocketAddr,
        packet: &[u8],
        comment: Option<&str>,
    ) {
        let Some(w) = &mut self.writer else {
            return;
        };
        let result = match (src, dst, u32::try_from(link)) {
            (SocketAddr::V4(s), SocketAddr::V4(d), Ok(interface)) => w.write_udp(
                interface,
                now.as_micros(),
                ip_id,
                SocketAddrV4::new(*s.ip(), CAPTURE_UDP_PORT),
                SocketAddrV4::new(*d.ip(), CAPTURE_UDP_PORT),
                packet,
                comment,
            ),
            (SocketAddr::V4(_), SocketAddr::V4(_), Err(_)) => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("link direction {link} has no pcapng interface number"),
            )),
            _ => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("pcapng capture writes IPv4 only; packet from {src} to {dst}"),
            )),
        };
        if let Err(e) = result {
            self.fail(e);
        }
    }

    /// Flushes, and reports the first error this capture met (once).
    pub fn finish(&mut self) -> io::Result<()> {
        if let Some(w) = &mut self.writer
            && let Err(e) = w.flush()
        {
            self.fail(e);
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn fail(&mut self, e: io::Error) {
        self.writer = None;
        self.error.get_or_insert(e);
    }
}
