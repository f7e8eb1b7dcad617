//! TCP: the lab's TCP model (`brisk_tcp::TcpEndpoint`) as a simulator
//! transport. Its segments travel as whole IPv4 packets, which links classify
//! and captures write exactly as the emulator's, and Wireshark reads as TCP
//! over IP. Messages ride the byte stream as the emulator's workload frames
//! them: a 4-byte big-endian length, then the message.

use std::collections::{BTreeMap, VecDeque};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use brisk_net::pcap::{IPPROTO_TCP, IPV4_HEADER_LEN, ipv4_packet};
use brisk_proto::Time;
use brisk_tcp::{ConnId, TcpConfig, TcpEndpoint, TcpEvent};
use bytes::Bytes;

use super::{Congestion, Happening, Messages, Refused, Retransmission, SendState, Transport, Wire};

/// Bytes of the length before each message on the stream.
pub const TCP_MESSAGE_PREFIX: usize = 4;

/// The largest message a [`TcpMessages`] receiver accepts: a peer that
/// announces a longer one gets its connection's input discarded, so no
/// length on the wire makes the receiver buffer without bound.
pub const MAX_TCP_MESSAGE: usize = 16 << 20;

/// What a [`TcpMessages`] host reports: the TCP model's events, and the
/// messages acknowledged in full.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TcpMessagesEvent {
    Tcp(TcpEvent),
    /// Message `message` (its handle) is acknowledged; its first byte first
    /// left at `first_sent_at`.
    Acked {
        message: u64,
        first_sent_at: Time,
    },
}

/// A TCP endpoint that carries whole messages.
#[derive(Debug)]
pub struct TcpMessages {
    tcp: TcpEndpoint,
    local: Ipv4Addr,
    send_buffer: usize,
    conns: BTreeMap<ConnId, Framing>,
    /// Messages acknowledged in full, not yet polled (bounded by the
    /// messages in the send buffers).
    acked: VecDeque<(ConnId, u64, Time)>,
    /// Segments that were not IPv4 TCP to this host, or too short.
    pub malformed: u64,
    /// Messages announced longer than [`MAX_TCP_MESSAGE`].
    pub oversized: u64,
}

/// A message written and not yet acknowledged in full.
#[derive(Debug, Clone, Copy)]
struct Pending {
    handle: u64,
    /// Its stream bytes, prefix included: `[start, end)`.
    start: u64,
    end: u64,
    first_sent: Option<Time>,
}

/// One connection's message boundaries.
#[derive(Debug, Default)]
struct Framing {
    /// Stream bytes written so far, and the messages not yet acknowledged in
    /// full (bounded by the send buffer: a message takes at least the
    /// prefix's 4 bytes of it).
    written: u64,
    pending: VecDeque<Pending>,
    /// How many of `pending`, from the front, have had their first byte sent.
    sent: usize,
    next_handle: u64,
    /// Bytes read off the stream that do not yet make a whole message
    /// (bounded by [`MAX_TCP_MESSAGE`] and the prefix).
    inbox: Vec<u8>,
    /// The peer announced an oversized message: its input is discarded.
    poisoned: bool,
}

impl TcpMessages {
    /// A TCP host at `local` (IPv4) with `config`; it accepts connections if
    /// `listen`.
    ///
    /// # Panics
    /// If `local` is not an IPv4 address.
    pub fn new(local: SocketAddr, config: TcpConfig, listen: bool, seed: [u8; 32]) -> Self {
        let IpAddr::V4(ip) = local.ip() else {
            panic!("the TCP model runs on IPv4 hosts only, not {local}");
        };
        let mut short = [0u8; 8];
        short.copy_from_slice(&seed[..8]);
        let send_buffer = config.send_buffer;
        Self {
            tcp: TcpEndpoint::new(local, config, listen, u64::from_le_bytes(short)),
            local: ip,
            send_buffer,
            conns: BTreeMap::new(),
            acked: VecDeque::new(),
            malformed: 0,
            oversized: 0,
        }
    }

    /// The TCP endpoint underneath.
    pub fn tcp(&self) -> &TcpEndpoint {
        &self.tcp
    }

    pub fn tcp_mut(&mut self) -> &mut TcpEndpoint {
        &mut self.tcp
    }

    /// Marks the messages whose first byte has now left, at `now`.
    fn note_sent(&mut self, now: Time) {
        for (id, framing) in &mut self.conns {
            if let Some(c) = self.tcp.connection_ref(*id) {
                let sent = framing.written.saturating_sub(c.unsent() as u64);
                framing.mark_sent(sent, now);
            }
        }
    }

    /// Queues an `Acked` for every message now acknowledged in full.
    fn note_acked(&mut self, now: Time) {
        for (id, framing) in &mut self.conns {
            if let Some(c) = self.tcp.connection_ref(*id) {
                let acked = framing.written.saturating_sub(c.send_queued() as u64);
                for (handle, first_sent) in framing.take_acked(acked, now) {
                    self.acked.push_back((*id, handle, first_sent));
                }
            }
        }
    }
}

impl Transport for TcpMessages {
    type Conn = ConnId;
    type Event = TcpMessagesEvent;
    const WIRE: Wire = Wire::Ipv4;

    fn handle_datagram(&mut self, now: Time, from: SocketAddr, data: &[u8]) {
        // An IPv4 packet without options carrying TCP to this host.
        let to_us = data.get(16..20) == Some(&self.local.octets()[..]);
        let tcp = data.first() == Some(&0x45) && data.get(9) == Some(&IPPROTO_TCP);
        let (Some(segment), true, true) = (data.get(IPV4_HEADER_LEN..), to_us, tcp) else {
            self.malformed += 1;
            return;
        };
        // The source port: the TCP model names peers by address and port.
        let (Some(&hi), Some(&lo)) = (segment.first(), segment.get(1)) else {
            self.malformed += 1;
            return;
        };
        let from = SocketAddr::new(from.ip(), u16::from_be_bytes([hi, lo]));
        self.tcp.handle_segment(now, from, segment);
        self.note_acked(now);
    }

    fn handle_timeout(&mut self, now: Time) {
        self.tcp.handle_timeout(now);
    }

    fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<SocketAddr> {
        let mut segment = Vec::new();
        loop {
            let to = self.tcp.poll_transmit(now, &mut segment)?;
            let IpAddr::V4(dst) = to.ip() else {
                self.malformed += 1;
                continue;
            };
            // The simulator sets the Identification as the packet leaves.
            match ipv4_packet(0, self.local, dst, IPPROTO_TCP, &segment) {
                Ok(packet) => {
                    *buf = packet;
                    self.note_sent(now);
                    return Some(to);
                }
                Err(_) => self.malformed += 1,
            }
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.tcp.poll_timeout()
    }

    fn poll_event(&mut self) -> Option<(ConnId, TcpMessagesEvent)> {
        if let Some((id, message, first_sent_at)) = self.acked.pop_front() {
            return Some((
                id,
                TcpMessagesEvent::Acked {
                    message,
                    first_sent_at,
                },
            ));
        }
        let (id, e) = self.tcp.poll_event()?;
        Some((id, TcpMessagesEvent::Tcp(e)))
    }

    fn congestion(&self) -> Option<Congestion> {
        let id = *self.conns.keys().next()?;
        let stats = self.tcp.connection_ref(id)?.stats();
        Some(Congestion {
            cwnd: stats.cwnd,
            ssthresh: stats.ssthresh,
            flight_size: stats.flight_size,
        })
    }
}

impl Messages for TcpMessages {
    /// The connection takes the endpoint's own configuration.
    type Config = ();
    const CAUSES: &'static [&'static str] = &[
        "rto",
        "fast-retransmit",
        "early-retransmit",
        "rack",
        "tail-loss-probe",
    ];

    fn open(&mut self, now: Time, remote: SocketAddr, _: &()) -> Option<ConnId> {
        let id = self.tcp.connect(now, remote).ok()?;
        self.conns.insert(id, Framing::default());
        Some(id)
    }

    fn send_message(&mut self, now: Time, conn: ConnId, message: Vec<u8>) -> Result<u64, Refused> {
        let framed = TCP_MESSAGE_PREFIX + message.len();
        let Ok(len) = u32::try_from(message.len()) else {
            return Err(Refused::Failed(format!(
                "a message of {} bytes is too long for the 4-byte length",
                message.len()
            )));
        };
        let send_buffer = self.send_buffer;
        let Some(c) = self.tcp.connection(conn) else {
            return Err(Refused::Failed(format!("no connection {conn:?}")));
        };
        if framed > send_buffer {
            return Err(Refused::Failed(format!(
                "a message of {} bytes does not fit the {send_buffer}-byte send buffer",
                message.len()
            )));
        }
        // All or nothing: a message is never half written.
        if send_buffer - c.send_queued().min(send_buffer) < framed {
            return Err(Refused::Full);
        }
        let mut bytes = Vec::with_capacity(framed);
        bytes.extend_from_slice(&len.to_be_bytes());
        bytes.extend_from_slice(&message);
        let taken = c.write(now, &bytes);
        let framing = self.conns.entry(conn).or_default();
        let handle = framing.next_handle;
        framing.next_handle += 1;
        framing.pending.push_back(Pending {
            handle,
            start: framing.written,
            end: framing.written + taken as u64,
            first_sent: None,
        });
        framing.written += taken as u64;
        if taken < framed {
            return Err(Refused::Failed(format!(
                "the connection took {taken} of the message's {framed} bytes"
            )));
        }
        Ok(handle)
    }

    fn recv_message(&mut self, conn: ConnId) -> Option<Bytes> {
        let c = self.tcp.connection(conn)?;
        let framing = self.conns.entry(conn).or_default();
        if framing.poisoned {
            let mut sink = Vec::new();
            c.read(&mut sink, usize::MAX);
            return None;
        }
        loop {
            if let Some(message) = framing.next_message() {
                return Some(message);
            }
            if framing.poisoned {
                self.oversized += 1;
                return None;
            }
            // Read just enough for the next prefix or the message it announces.
            let want = framing.wanted();
            if c.read(&mut framing.inbox, want) == 0 {
                return None;
            }
        }
    }

    fn happening(event: &TcpMessagesEvent) -> Happening {
        let event = match *event {
            TcpMessagesEvent::Acked {
                message,
                first_sent_at,
            } => {
                return Happening::Acked {
                    message,
                    first_sent_at,
                };
            }
            TcpMessagesEvent::Tcp(ref e) => e,
        };
        match *event {
            TcpEvent::Connected => Happening::Connected,
            TcpEvent::Readable => Happening::MessageReady,
            TcpEvent::Retransmission {
                seq,
                cause,
                at,
                first_sent_at,
                transmissions,
                ..
            } => Happening::Retransmission(Retransmission {
                unit: seq,
                cause: cause.name(),
                at,
                first_sent_at,
                transmissions,
            }),
            TcpEvent::Closed(_) => Happening::Closed,
            _ => Happening::Other,
        }
    }

    fn send_state(&mut self, conn: ConnId) -> Option<SendState> {
        let c = self.tcp.connection_ref(conn)?;
        let framing = self.conns.entry(conn).or_default();
        // Messages whose last byte has not left yet.
        let sent = framing.written.saturating_sub(c.unsent() as u64);
        let queued = framing.pending.iter().filter(|p| p.end > sent).count();
        let stats = c.stats();
        Some(SendState {
            queued_messages: queued,
            flight_size: stats.flight_size,
            cwnd: stats.cwnd,
            spurious_timeouts_undone: 0,
            new_payload_bytes: stats.bytes_sent_new,
        })
    }
}

impl Framing {
    /// The stream's first `sent` bytes have left at least once: the
    /// messages whose first byte is among them were first sent by `now`.
    fn mark_sent(&mut self, sent: u64, now: Time) {
        while let Some(p) = self.pending.get_mut(self.sent) {
            if p.start >= sent {
                break;
            }
            p.first_sent = Some(now);
            self.sent += 1;
        }
    }

    /// The messages the stream's first `acked` bytes acknowledge in full,
    /// with when each was first sent; they are forgotten.
    fn take_acked(&mut self, acked: u64, now: Time) -> Vec<(u64, Time)> {
        let mut out = Vec::new();
        while let Some(p) = self.pending.front().copied() {
            if p.end > acked {
                break;
            }
            self.pending.pop_front();
            self.sent = self.sent.saturating_sub(1);
            // Acknowledged data was sent, and marked as it left; `now` only
            // if it somehow was not.
            out.push((p.handle, p.first_sent.unwrap_or(now)));
        }
        out
    }

    /// How many more bytes the next message needs: its prefix, or its body.
    fn wanted(&self) -> usize {
        match self.announced() {
            None => TCP_MESSAGE_PREFIX - self.inbox.len(),
            Some(len) => TCP_MESSAGE_PREFIX + len - self.inbox.len(),
        }
    }

    /// The length the prefix in the inbox announces.
    fn announced(&self) -> Option<usize> {
        let prefix = <[u8; 4]>::try_from(self.inbox.get(..TCP_MESSAGE_PREFIX)?).ok()?;
        Some(u32::from_be_bytes(prefix) as usize)
    }

    /// The next whole message, if the inbox holds one.
    fn next_message(&mut self) -> Option<Bytes> {
        let len = self.announced()?;
        if len > MAX_TCP_MESSAGE {
            self.poisoned = true;
            self.inbox = Vec::new();
            return None;
        }
        if self.inbox.len() < TCP_MESSAGE_PREFIX + len {
            return None;
        }
        let rest = self.inbox.split_off(TCP_MESSAGE_PREFIX + len);
        let whole = std::mem::replace(&mut self.inbox, rest);
        Some(Bytes::from(whole).slice(TCP_MESSAGE_PREFIX..))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brisk_tcp::RetransmitCause;

    #[test]
    fn the_cause_names_are_the_models_own_in_its_order() {
        let names: Vec<&str> = RetransmitCause::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names, <TcpMessages as Messages>::CAUSES);
    }

    #[test]
    fn unordered_or_partially_reliable_messages_are_refused_with_a_reason() {
        let local = SocketAddr::from(([10, 0, 0, 1], 9899));
        let mut t = TcpMessages::new(local, TcpConfig::default(), false, [0; 32]);
        let now = Time::ZERO;
        let conn = t
            .open(now, SocketAddr::from(([10, 0, 0, 2], 9899)), &())
            .unwrap();
        let options = crate::SendOptions {
            unordered: true,
            ..Default::default()
        };
        let Err(Refused::Failed(why)) = t.send_message_with(now, conn, vec![0; 8], options) else {
            panic!("accepted");
        };
        assert!(why.contains("ordered and reliably"), "{why}");
        // The defaults go through as any message does.
        let default = crate::SendOptions::default();
        assert!(t.send_message_with(now, conn, vec![0; 8], default).is_ok());
    }

    #[test]
    fn a_frame_comes_out_whole_only_when_all_of_it_arrived() {
        let mut f = Framing::default();
        assert_eq!(f.wanted(), 4);
        f.inbox.extend_from_slice(&3u32.to_be_bytes());
        assert_eq!(f.wanted(), 3);
        f.inbox.extend_from_slice(b"ab");
        assert_eq!(f.next_message(), None);
        f.inbox.extend_from_slice(b"c");
        assert_eq!(f.next_message().as_deref(), Some(&b"abc"[..]));
        assert!(f.inbox.is_empty());
    }

    #[test]
    fn an_announced_length_beyond_the_bound_poisons_the_connection_without_buffering() {
        let mut f = Framing::default();
        f.inbox
            .extend_from_slice(&((MAX_TCP_MESSAGE + 1) as u32).to_be_bytes());
        assert_eq!(f.next_message(), None);
        assert!(f.poisoned);
        assert_eq!(f.inbox.capacity(), 0);
    }
}
