//! Two endpoints wired back to back in memory, with no latency: the cost of
//! the protocol code alone.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::time::Duration;

use brisk_proto::{AssocId, Config, Endpoint, EndpointConfig, Event, Time};

pub struct FastPair {
    pub now: Time,
    pub a: Endpoint,
    pub b: Endpoint,
    pub a_addr: SocketAddr,
    pub b_addr: SocketAddr,
    pub a_id: AssocId,
    pub b_id: AssocId,
    buf: Vec<u8>,
}

impl FastPair {
    pub fn connected(cfg: Config) -> Self {
        let a = Endpoint::new(
            EndpointConfig {
                accept: false,
                ..EndpointConfig::default()
            },
            [1; 32],
        );
        let b = Endpoint::new(
            EndpointConfig {
                accept_config: cfg.clone(),
                ..EndpointConfig::default()
            },
            [2; 32],
        );
        let mut p = FastPair {
            now: Time::ZERO,
            a,
            b,
            a_addr: "10.0.0.1:9899".parse().unwrap(),
            b_addr: "10.0.0.2:9899".parse().unwrap(),
            a_id: AssocId(0),
            b_id: AssocId(0),
            buf: Vec::with_capacity(2048),
        };
        p.a_id = p.a.connect(p.now, p.b_addr, cfg).unwrap();
        loop {
            p.pump();
            let mut up = false;
            while let Some((id, e)) = p.b.poll_event() {
                if e == Event::Connected {
                    p.b_id = id;
                    up = true;
                }
            }
            while p.a.poll_event().is_some() {}
            if up {
                p.pump();
                return p;
            }
        }
    }

    /// Moves packets both ways until neither side has anything to send.
    /// Returns the number of packets moved.
    pub fn pump(&mut self) -> usize {
        let mut moved = 0;
        loop {
            let mut any = false;
            self.buf.clear();
            while self.a.poll_transmit(self.now, &mut self.buf).is_some() {
                self.b.handle_datagram(self.now, self.a_addr, &self.buf);
                self.buf.clear();
                moved += 1;
                any = true;
            }
            while self.b.poll_transmit(self.now, &mut self.buf).is_some() {
                self.a.handle_datagram(self.now, self.b_addr, &self.buf);
                self.buf.clear();
                moved += 1;
                any = true;
            }
            if !any {
                return moved;
            }
        }
    }

    /// Advances the clock and fires due timers.
    pub fn tick(&mut self, d: Duration) {
        self.now = self.now + d;
        self.a.handle_timeout(self.now);
        self.b.handle_timeout(self.now);
    }
}
