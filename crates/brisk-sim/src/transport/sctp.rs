//! SCTP: `brisk_proto::Endpoint` as a simulator transport. Its packets are
//! bare SCTP packets; a message is an SCTP user message on stream 0.

use std::net::SocketAddr;

use brisk_proto::{
    AssocId, Config, Endpoint, EndpointConfig, Event, OutgoingMessage, SendError, Time,
};
use bytes::Bytes;

use super::{
    Congestion, Happening, Messages, Refused, Retransmission, SendOptions, SendState, Transport,
    Wire,
};

/// The endpoint config of a host with addresses `addrs`: with two or more,
/// [`EndpointConfig::addresses`] lists their IP addresses in order (RFC 9260
/// 5.1.2: INIT and INIT ACK carry them, and the peer may reach the host at
/// any); with one, `cfg` as it is, so a single-homed host's handshake stays
/// byte for byte what it was.
pub fn multihomed(mut cfg: EndpointConfig, addrs: &[SocketAddr]) -> EndpointConfig {
    if addrs.len() >= 2 {
        cfg.addresses = addrs.iter().map(SocketAddr::ip).collect();
    }
    cfg
}

impl Transport for Endpoint {
    type Conn = AssocId;
    type Event = Event;
    const WIRE: Wire = Wire::Sctp;

    fn handle_datagram(&mut self, now: Time, from: SocketAddr, data: &[u8]) {
        Endpoint::handle_datagram(self, now, from, data);
    }

    fn handle_timeout(&mut self, now: Time) {
        Endpoint::handle_timeout(self, now);
    }

    fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<SocketAddr> {
        let t = Endpoint::poll_transmit(self, now, buf)?;
        // The packet is the last `size` bytes the endpoint appended.
        if t.size < buf.len() {
            buf.drain(..buf.len() - t.size);
        }
        Some(t.destination)
    }

    fn poll_timeout(&self) -> Option<Time> {
        Endpoint::poll_timeout(self)
    }

    fn poll_event(&mut self) -> Option<(AssocId, Event)> {
        Endpoint::poll_event(self)
    }

    fn congestion(&self) -> Option<Congestion> {
        let first = self.association_ids().next()?;
        let stats = self.association_ref(first)?.stats();
        Some(Congestion {
            cwnd: stats.cwnd,
            ssthresh: stats.ssthresh,
            flight_size: stats.flight_size,
        })
    }
}

impl Messages for Endpoint {
    type Config = Config;
    const CAUSES: &'static [&'static str] = &[
        "t3-timeout",
        "fast-retransmit",
        "early-retransmit",
        "tail-loss-probe",
        "packet-drop",
        "bundled",
    ];

    fn open(&mut self, now: Time, remote: SocketAddr, config: &Config) -> Option<AssocId> {
        self.connect(now, remote, config.clone()).ok()
    }

    fn send_message(&mut self, now: Time, conn: AssocId, message: Vec<u8>) -> Result<u64, Refused> {
        self.send_message_with(now, conn, message, SendOptions::default())
    }

    fn send_message_with(
        &mut self,
        now: Time,
        conn: AssocId,
        message: Vec<u8>,
        options: SendOptions,
    ) -> Result<u64, Refused> {
        let Some(a) = self.association(conn) else {
            return Err(Refused::Failed(format!("no association {conn:?}")));
        };
        let mut m = OutgoingMessage::new(options.stream, message).unordered(options.unordered);
        m.reliability = options.reliability;
        match a.send(now, m) {
            Ok(id) => Ok(id.0),
            Err(SendError::BufferFull { .. }) => Err(Refused::Full),
            Err(e) => Err(Refused::Failed(e.to_string())),
        }
    }

    fn recv_message(&mut self, conn: AssocId) -> Option<Bytes> {
        self.association(conn)?.recv().map(|m| m.payload)
    }

    fn drain_messages(&mut self, conn: AssocId, each: &mut dyn FnMut(Bytes)) {
        // One lookup for all of them.
        if let Some(a) = self.association(conn) {
            while let Some(m) = a.recv() {
                each(m.payload);
            }
        }
    }

    fn happening(event: &Event) -> Happening {
        match *event {
            Event::Connected => Happening::Connected,
            Event::MessageReady => Happening::MessageReady,
            Event::Retransmission {
                tsn,
                cause,
                at,
                first_sent_at,
                transmissions,
            } => Happening::Retransmission(Retransmission {
                unit: tsn,
                cause: cause.name(),
                at,
                first_sent_at,
                transmissions,
            }),
            Event::MessageAcked {
                id, first_sent_at, ..
            } => Happening::Acked {
                message: id.0,
                first_sent_at,
            },
            Event::MessageAbandoned { id } => Happening::Abandoned { message: id.0 },
            Event::DataPathChanged { at, .. } => Happening::DataPathChanged { at },
            Event::Closed(_) => Happening::Closed,
            _ => Happening::Other,
        }
    }

    fn send_state(&mut self, conn: AssocId) -> Option<SendState> {
        let a = self.association(conn)?;
        let queued_messages = a.queued_messages();
        let stats = a.stats();
        Some(SendState {
            queued_messages,
            flight_size: stats.flight_size,
            cwnd: stats.cwnd,
            spurious_timeouts_undone: stats.spurious_timeouts_undone,
            new_payload_bytes: stats.payload_bytes_sent,
        })
    }
}

#[cfg(test)]
mod tests {
    use brisk_proto::RetransmitCause;

    use super::*;

    #[test]
    fn a_host_with_two_addresses_lists_both_and_a_single_homed_one_none() {
        let a: SocketAddr = "10.0.1.1:9899".parse().unwrap();
        let b: SocketAddr = "10.0.3.1:9899".parse().unwrap();
        let cfg = multihomed(EndpointConfig::default(), &[a, b]);
        assert_eq!(cfg.addresses, vec![a.ip(), b.ip()]);
        let cfg = multihomed(EndpointConfig::default(), &[a]);
        assert!(cfg.addresses.is_empty());
    }

    #[test]
    fn the_cause_names_are_the_protocols_own_in_its_order() {
        let names: Vec<&str> = RetransmitCause::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names, <Endpoint as Messages>::CAUSES);
    }
}
