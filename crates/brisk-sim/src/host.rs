//! Hosts: one transport (SCTP's `Endpoint`, the TCP model, any
//! [`Transport`]) and one application each.
//!
//! A host is generic over its transport, so the protocol is called without
//! indirection; the simulator holds hosts of any transport through the
//! [`Hosted`] object trait. A host never touches the network: what it sends
//! and the timers its application sets come back as [`Action`]s, in the
//! order they happened, for the simulator to carry out.

use std::any::Any;
use std::net::SocketAddr;

use brisk_proto::{Endpoint, Time};
use rand_chacha::ChaCha8Rng;

use brisk_net::HostId;

use crate::ids::NodeId;
use crate::transport::{Congestion, Transport};

/// An application running on a simulated host over transport `T`. Each
/// callback is its own instant: the packets it causes leave before the next
/// callback runs.
pub trait App<T: Transport = Endpoint>: Any {
    /// Called once, at the time the host was added (normally zero).
    fn start(&mut self, ctx: &mut AppCtx<'_, T>);
    /// Every event of this host's transport, in order.
    fn on_event(&mut self, ctx: &mut AppCtx<'_, T>, conn: T::Conn, event: &T::Event);
    /// A timer set with [`AppCtx::set_timer`] fired.
    fn on_timer(&mut self, ctx: &mut AppCtx<'_, T>, token: u64);
}

/// What an application can reach during a callback.
pub struct AppCtx<'a, T: Transport = Endpoint> {
    now: Time,
    host: HostId,
    transport: &'a mut T,
    rng: &'a mut ChaCha8Rng,
    addrs: &'a [SocketAddr],
    timers: &'a mut Vec<(Time, u64)>,
}

impl<T: Transport> AppCtx<'_, T> {
    /// The simulated time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// This host's transport.
    pub fn transport(&mut self) -> &mut T {
        self.transport
    }

    /// Calls `on_timer(token)` at `at` (now, if `at` is past). Timers at the
    /// same time fire in the order they were set.
    pub fn set_timer(&mut self, at: Time, token: u64) {
        self.timers.push((at.max(self.now), token));
    }

    /// This host.
    pub fn host(&self) -> HostId {
        self.host
    }

    /// The address of a host.
    ///
    /// # Panics
    /// If `host` is not a host of this simulation.
    pub fn addr_of(&self, host: HostId) -> SocketAddr {
        self.addrs[host.index()]
    }

    /// The application's own random stream, derived from the simulation seed
    /// and the host: the same seed, the same draws.
    pub fn rng(&mut self) -> &mut ChaCha8Rng {
        self.rng
    }
}

impl AppCtx<'_, Endpoint> {
    /// This host's SCTP endpoint.
    pub fn endpoint(&mut self) -> &mut Endpoint {
        self.transport
    }
}

/// What a host asks of the network, in the order it happened.
#[derive(Debug)]
pub(crate) enum Action {
    /// A datagram leaves for `to`.
    Send { to: SocketAddr, bytes: Vec<u8> },
    /// The application set a timer.
    AppTimer(Time, u64),
}

/// An input to a host.
pub(crate) enum Input<'a> {
    Start,
    AppTimer(u64),
    /// An endpoint timer event fired (it may be stale).
    Timeout,
    Datagram {
        from: SocketAddr,
        data: &'a [u8],
    },
    /// Its transport was used from outside: send what it has.
    Touched,
}

/// The world a host sees during one input.
pub(crate) struct Io<'a> {
    pub now: Time,
    pub addrs: &'a [SocketAddr],
    pub actions: &'a mut Vec<Action>,
    /// Timers that fired and stayed put (see [`crate::SimStats`]).
    pub stalled_timers: &'a mut u64,
}

/// A host of any transport, as the simulator holds it.
pub(crate) trait Hosted {
    /// Takes one input, sends what it causes (as actions) and returns the
    /// time for which a new endpoint timer event must be scheduled, if any.
    fn input(&mut self, io: &mut Io<'_>, input: Input<'_>) -> Option<Time>;
    fn node(&self) -> NodeId;
    /// Starts recording the transport's congestion state after every input.
    fn trace_congestion(&mut self);
    /// The congestion states recorded, each when it changed.
    fn congestion_log(&self) -> &[(Time, Congestion)];
    fn app_any(&self) -> &dyn Any;
    fn app_any_mut(&mut self) -> &mut dyn Any;
    fn transport_any(&self) -> &dyn Any;
    fn transport_any_mut(&mut self) -> &mut dyn Any;
}

/// A host's state in the simulator.
pub(crate) struct Host<T: Transport> {
    pub id: HostId,
    pub node: NodeId,
    pub transport: T,
    pub app: Box<dyn App<T>>,
    pub rng: ChaCha8Rng,
    /// The earliest endpoint timer event in the queue that is still current.
    pub timer_at: Option<Time>,
    /// When `handle_timeout` last ran.
    pub fired_at: Option<Time>,
    /// Reused for every callback's timers.
    timers: Vec<(Time, u64)>,
    /// The congestion state after each input that changed it, when traced.
    congestion: Option<Vec<(Time, Congestion)>>,
}

impl<T: Transport> Host<T> {
    pub fn new(
        id: HostId,
        node: NodeId,
        transport: T,
        app: Box<dyn App<T>>,
        rng: ChaCha8Rng,
    ) -> Self {
        Self {
            id,
            node,
            transport,
            app,
            rng,
            timer_at: None,
            fired_at: None,
            timers: Vec::new(),
            congestion: None,
        }
    }

    /// Calls the application with a context, then records its timers.
    fn call_app(&mut self, io: &mut Io<'_>, f: impl FnOnce(&mut dyn App<T>, &mut AppCtx<'_, T>)) {
        let mut ctx = AppCtx {
            now: io.now,
            host: self.id,
            transport: &mut self.transport,
            rng: &mut self.rng,
            addrs: io.addrs,
            timers: &mut self.timers,
        };
        f(&mut *self.app, &mut ctx);
        io.actions.extend(
            self.timers
                .drain(..)
                .map(|(at, token)| Action::AppTimer(at, token)),
        );
    }

    /// After any input: send what the transport has, hand every event to
    /// the app (sending after each callback), re-arm the timer.
    fn settle(&mut self, io: &mut Io<'_>) -> Option<Time> {
        self.flush(io);
        while let Some((conn, event)) = self.transport.poll_event() {
            self.call_app(io, |app, ctx| app.on_event(ctx, conn, &event));
            self.flush(io);
        }
        self.rearm(io)
    }

    fn flush(&mut self, io: &mut Io<'_>) {
        loop {
            let mut bytes = Vec::new();
            let Some(to) = self.transport.poll_transmit(io.now, &mut bytes) else {
                break;
            };
            io.actions.push(Action::Send { to, bytes });
        }
    }

    fn rearm(&mut self, io: &mut Io<'_>) -> Option<Time> {
        let now = io.now;
        let deadline = self.transport.poll_timeout()?;
        // A deadline that did not move after firing at `now` waits a tick,
        // so a timer can never spin at one instant.
        let at = match deadline {
            d if d > now => d,
            _ if self.fired_at == Some(now) => {
                *io.stalled_timers += 1;
                Time::from_micros(now.as_micros() + 1)
            }
            _ => now,
        };
        if self.timer_at.is_none_or(|t| at < t) {
            self.timer_at = Some(at);
            return Some(at);
        }
        None
    }
}

impl<T: Transport> Hosted for Host<T> {
    fn input(&mut self, io: &mut Io<'_>, input: Input<'_>) -> Option<Time> {
        match input {
            Input::Start => self.call_app(io, |app, ctx| app.start(ctx)),
            Input::AppTimer(token) => self.call_app(io, |app, ctx| app.on_timer(ctx, token)),
            Input::Timeout => {
                // Stale: a timer for another time is current.
                if self.timer_at != Some(io.now) {
                    return None;
                }
                self.timer_at = None;
                self.fired_at = Some(io.now);
                self.transport.handle_timeout(io.now);
            }
            Input::Datagram { from, data } => self.transport.handle_datagram(io.now, from, data),
            Input::Touched => {}
        }
        let rearm = self.settle(io);
        if let Some(log) = &mut self.congestion
            && let Some(c) = self.transport.congestion()
            && log.last().is_none_or(|last| last.1 != c)
        {
            log.push((io.now, c));
        }
        rearm
    }

    fn node(&self) -> NodeId {
        self.node
    }

    fn trace_congestion(&mut self) {
        self.congestion.get_or_insert_with(Vec::new);
    }

    fn congestion_log(&self) -> &[(Time, Congestion)] {
        self.congestion.as_deref().unwrap_or(&[])
    }

    fn app_any(&self) -> &dyn Any {
        &*self.app
    }

    fn app_any_mut(&mut self) -> &mut dyn Any {
        &mut *self.app
    }

    fn transport_any(&self) -> &dyn Any {
        &self.transport
    }

    fn transport_any_mut(&mut self) -> &mut dyn Any {
        &mut self.transport
    }
}
