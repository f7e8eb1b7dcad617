//! Test applications and helpers shared by the scenario tests.

#![allow(dead_code)]

use std::cell::RefCell;
use std::io::{self, Write};
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

use brisk_proto::{
    AssocId, CloseReason, Config, EndpointConfig, Event, OutgoingMessage, RetransmitCause, Time,
};
use brisk_sim::{App, AppCtx, HostId, LinkId, LinkParams, Sim, point_to_point};

pub const CLIENT_ADDR: &str = "10.0.0.1:9899";
pub const SERVER_ADDR: &str = "10.0.0.2:9899";

pub fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

/// Connects to `server`, then sends `messages` messages of `size` bytes
/// (each numbered in its first 4 bytes) once the association is up; shuts
/// down once all are acknowledged.
pub struct Client {
    pub server: SocketAddr,
    pub messages: u32,
    pub size: usize,
    /// One message per timer callback (so one packet each), else all in one callback.
    pub one_per_callback: bool,
    pub shutdown_when_acked: bool,
    /// Sends this many more messages, one per `MessageAcked` callback.
    pub follow_ups: u32,
    pub assoc: Option<AssocId>,
    pub connected_at: Option<Time>,
    pub acked: u32,
    pub retransmissions: Vec<(u32, RetransmitCause)>,
    pub closed: Option<CloseReason>,
}

impl Client {
    pub fn new(server: SocketAddr, messages: u32) -> Self {
        Self {
            server,
            messages,
            size: 100,
            one_per_callback: true,
            shutdown_when_acked: true,
            follow_ups: 0,
            assoc: None,
            connected_at: None,
            acked: 0,
            retransmissions: Vec::new(),
            closed: None,
        }
    }

    fn send(&mut self, ctx: &mut AppCtx<'_>, i: u32) {
        let (Some(assoc), now) = (self.assoc, ctx.now()) else {
            return;
        };
        let mut payload = i.to_be_bytes().to_vec();
        payload.resize(self.size.max(4), 0xa5);
        if let Some(a) = ctx.endpoint().association(assoc) {
            a.send(now, OutgoingMessage::new(0, payload)).unwrap();
        }
    }
}

impl App for Client {
    fn start(&mut self, ctx: &mut AppCtx<'_>) {
        let now = ctx.now();
        let server = self.server;
        self.assoc = Some(
            ctx.endpoint()
                .connect(now, server, Config::rfc9260())
                .unwrap(),
        );
    }

    fn on_event(&mut self, ctx: &mut AppCtx<'_>, _assoc: AssocId, event: &Event) {
        match event {
            Event::Connected => {
                self.connected_at = Some(ctx.now());
                for i in 0..self.messages {
                    if self.one_per_callback {
                        ctx.set_timer(ctx.now(), u64::from(i));
                    } else {
                        self.send(ctx, i);
                    }
                }
            }
            Event::MessageAcked { .. } => {
                self.acked += 1;
                if self.acked <= self.follow_ups {
                    self.send(ctx, self.messages + self.acked - 1);
                }
                if self.acked == self.messages + self.follow_ups && self.shutdown_when_acked {
                    let now = ctx.now();
                    if let Some(a) = self.assoc.and_then(|id| ctx.endpoint().association(id)) {
                        a.shutdown(now);
                    }
                }
            }
            Event::Retransmission { tsn, cause, .. } => self.retransmissions.push((*tsn, *cause)),
            Event::Closed(reason) => self.closed = Some(reason.clone()),
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut AppCtx<'_>, token: u64) {
        self.send(ctx, token as u32);
    }
}

/// One message as the server read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    pub number: u32,
    pub first_tsn: u32,
    pub at: Time,
}

/// Accepts associations and reads every message as soon as it is ready.
#[derive(Default)]
pub struct Server {
    pub received: Vec<Received>,
    pub closed: Option<CloseReason>,
}

impl App for Server {
    fn start(&mut self, _ctx: &mut AppCtx<'_>) {}

    fn on_event(&mut self, ctx: &mut AppCtx<'_>, assoc: AssocId, event: &Event) {
        match event {
            Event::MessageReady => {
                let now = ctx.now();
                let Some(a) = ctx.endpoint().association(assoc) else {
                    return;
                };
                while let Some(m) = a.recv() {
                    let number = u32::from_be_bytes(m.payload[..4].try_into().unwrap());
                    self.received.push(Received {
                        number,
                        first_tsn: m.first_tsn,
                        at: now,
                    });
                }
            }
            Event::Closed(reason) => self.closed = Some(reason.clone()),
            _ => {}
        }
    }

    fn on_timer(&mut self, _ctx: &mut AppCtx<'_>, _token: u64) {}
}

/// A client and a server joined by one link whose client->server direction
/// is `forward` and server->client is `back`.
pub struct Pair {
    pub sim: Sim,
    pub client: HostId,
    pub server: HostId,
    pub forward: LinkId,
    pub back: LinkId,
}

pub fn pair(seed: u64, client: Client, forward: LinkParams, back: LinkParams) -> Pair {
    let mut sim = Sim::new(seed);
    let c = sim.add_host(
        addr(CLIENT_ADDR),
        EndpointConfig::default(),
        Box::new(client),
    );
    let s = sim.add_host(
        addr(SERVER_ADDR),
        EndpointConfig::default(),
        Box::new(Server::default()),
    );
    let (forward, back) = point_to_point(&mut sim, c, s, forward, back);
    Pair {
        sim,
        client: c,
        server: s,
        forward,
        back,
    }
}

/// 1 Mbit/s, 10 ms one way.
pub fn link() -> LinkParams {
    LinkParams::new(1_000_000, Duration::from_millis(10))
}

impl Pair {
    pub fn client(&self) -> &Client {
        self.sim.app::<Client>(self.client).unwrap()
    }

    pub fn server(&self) -> &Server {
        self.sim.app::<Server>(self.server).unwrap()
    }

    /// The message numbers the server read, in order.
    pub fn numbers(&self) -> Vec<u32> {
        self.server().received.iter().map(|r| r.number).collect()
    }
}

/// An in-memory sink for a capture that the test can read afterwards.
#[derive(Clone, Default)]
pub struct SharedBuf(pub Rc<RefCell<Vec<u8>>>);

impl SharedBuf {
    pub fn bytes(&self) -> Vec<u8> {
        self.0.borrow().clone()
    }
}

impl Write for SharedBuf {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
