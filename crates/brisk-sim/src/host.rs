//! Hosts: one `brisk_proto::Endpoint` and one application each.

use std::any::Any;
use std::net::SocketAddr;

use brisk_proto::{AssocId, Endpoint, Event, Time};
use rand_chacha::ChaCha8Rng;

use brisk_net::HostId;

use crate::ids::NodeId;

/// An application running on a simulated host. Each callback is its own
/// instant: the packets it causes leave before the next callback runs.
pub trait App: Any {
    /// Called once, at the time the host was added (normally zero).
    fn start(&mut self, ctx: &mut AppCtx<'_>);
    /// Every `brisk_proto::Event` of this host's endpoint, in order.
    fn on_event(&mut self, ctx: &mut AppCtx<'_>, assoc: AssocId, event: &Event);
    /// A timer set with [`AppCtx::set_timer`] fired.
    fn on_timer(&mut self, ctx: &mut AppCtx<'_>, token: u64);
}

/// What an application can reach during a callback.
pub struct AppCtx<'a> {
    pub(crate) now: Time,
    pub(crate) host: HostId,
    pub(crate) endpoint: &'a mut Endpoint,
    pub(crate) rng: &'a mut ChaCha8Rng,
    pub(crate) addrs: &'a [SocketAddr],
    pub(crate) timers: &'a mut Vec<(Time, u64)>,
}

impl AppCtx<'_> {
    /// The simulated time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// This host's endpoint.
    pub fn endpoint(&mut self) -> &mut Endpoint {
        self.endpoint
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

/// A host's state in the simulator.
pub(crate) struct Host {
    pub node: NodeId,
    pub endpoint: Endpoint,
    pub app: Box<dyn App>,
    pub rng: ChaCha8Rng,
    /// The earliest endpoint timer event in the queue that is still current.
    pub timer_at: Option<Time>,
    /// When `handle_timeout` last ran.
    pub fired_at: Option<Time>,
    /// Its endpoint was used from outside since the last run.
    pub touched: bool,
}

impl Host {
    pub fn app_any(&self) -> &dyn Any {
        &*self.app
    }

    pub fn app_any_mut(&mut self) -> &mut dyn Any {
        &mut *self.app
    }
}
