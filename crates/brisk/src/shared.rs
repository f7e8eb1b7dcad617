//! State shared by the driver task and the handles.
//!
//! A leaf: the driver, the endpoint handle and the association handles all
//! use it, and it uses none of them.

use std::collections::{HashMap, HashSet, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use brisk_proto::{AssocId, CloseReason, MessageId, Time};
use tokio::net::UdpSocket;
use tokio::sync::Notify;

/// What the handles know about one association beyond the protocol state.
#[derive(Debug)]
pub(crate) struct Slot {
    pub connected: bool,
    pub closed: Option<CloseReason>,
    /// Woken on every change a waiter may care about.
    pub notify: Arc<Notify>,
    /// Messages that the association reported it could not deliver.
    pub failed_sends: u64,
    /// Messages abandoned under partial reliability.
    pub abandoned: u64,
    /// Stream reconfiguration events not yet read (bounded).
    pub stream_events: crate::stream_events::StreamEvents,
    pub path_events: crate::path_events::PathEvents,
    /// The latest abandoned messages not yet taken by the application, at
    /// most [`ABANDONED_IDS_KEPT`] (older ones are only counted).
    pub abandoned_ids: VecDeque<MessageId>,
}

/// How many abandoned message ids a slot keeps for `take_abandoned`.
pub(crate) const ABANDONED_IDS_KEPT: usize = 4096;

impl Slot {
    pub fn new() -> Self {
        Self {
            connected: false,
            closed: None,
            notify: Arc::new(Notify::new()),
            failed_sends: 0,
            abandoned: 0,
            stream_events: Default::default(),
            path_events: Default::default(),
            abandoned_ids: VecDeque::new(),
        }
    }

    /// A message was abandoned: counted, and its id kept for
    /// `take_abandoned` (the oldest forgotten past [`ABANDONED_IDS_KEPT`]).
    pub fn note_abandoned(&mut self, id: MessageId) {
        self.abandoned += 1;
        if self.abandoned_ids.len() == ABANDONED_IDS_KEPT {
            self.abandoned_ids.pop_front();
        }
        self.abandoned_ids.push_back(id);
    }
}

pub(crate) struct State {
    pub proto: brisk_proto::Endpoint,
    pub slots: HashMap<AssocId, Slot>,
    /// Accepted associations not yet handed to `accept`.
    pub accepted: VecDeque<AssocId>,
    /// Associations whose `send` waits for room in the send buffer.
    pub blocked_senders: HashSet<AssocId>,
    /// The endpoint was closed, or the driver stopped.
    pub stopped: Option<String>,
    /// The driver stopped because the datagram transport failed or ended
    /// (it is then also `stopped`): why, for every waiting call.
    pub transport_failed: Option<String>,
    /// Wake-ups on a deadline already past that handling the timeout did not
    /// move: the protocol promised work and had none. Each would be a busy
    /// loop; the driver waits a millisecond instead, and tests check this is 0.
    pub stalled_wakeups: u64,
}

impl State {
    /// The error for a call on a stopped endpoint.
    pub fn stop_error(&self) -> crate::Error {
        match &self.transport_failed {
            Some(why) => crate::Error::TransportFailed(why.clone()),
            None => crate::Error::EndpointClosed,
        }
    }
}

pub(crate) struct Shared {
    pub state: Mutex<State>,
    /// Wakes the driver: there may be packets to send or timers to re-arm.
    pub wake: Notify,
    /// Wakes `accept`.
    pub accept: Notify,
    /// The UDP sockets under an endpoint that [`bind`](crate::Endpoint::bind)
    /// opened, one per local address, for sizing their receive buffers; none
    /// over a user's transport.
    pub udp: Vec<Arc<UdpSocket>>,
    /// The local addresses: the sockets', or the transport's.
    pub local_addrs: Vec<SocketAddr>,
    epoch: Instant,
}

impl Shared {
    pub fn new(
        proto: brisk_proto::Endpoint,
        udp: Vec<Arc<UdpSocket>>,
        local_addrs: Vec<SocketAddr>,
    ) -> Self {
        Self {
            state: Mutex::new(State {
                proto,
                slots: HashMap::new(),
                accepted: VecDeque::new(),
                blocked_senders: HashSet::new(),
                stopped: None,
                transport_failed: None,
                stalled_wakeups: 0,
            }),
            wake: Notify::new(),
            accept: Notify::new(),
            udp,
            local_addrs,
            epoch: Instant::now(),
        }
    }

    /// The protocol's clock: microseconds since the endpoint was bound.
    pub fn now(&self) -> Time {
        Time::from_micros(u64::try_from(self.epoch.elapsed().as_micros()).unwrap_or(u64::MAX))
    }

    /// The wall-clock instant of a protocol time.
    pub fn instant(&self, t: Time) -> Instant {
        self.epoch + std::time::Duration::from_micros(t.as_micros())
    }

    /// Locks the state; a panic elsewhere while holding the lock does not
    /// poison the endpoint for everyone else.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// What every handle, endpoint or association, holds: the shared state. It
/// keeps the driver running while any handle exists and stops it when the
/// last goes.
pub(crate) struct Handle {
    pub shared: Arc<Shared>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.shared.lock().stopped = Some("endpoint dropped".into());
        self.shared.wake.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abandoned_ids_are_bounded_and_the_latest_kept() {
        let mut slot = Slot::new();
        let n = ABANDONED_IDS_KEPT as u64 + 1000;
        for i in 0..n {
            slot.note_abandoned(MessageId(i));
        }
        assert_eq!(slot.abandoned, n);
        assert_eq!(slot.abandoned_ids.len(), ABANDONED_IDS_KEPT);
        assert_eq!(slot.abandoned_ids.front(), Some(&MessageId(1000)));
        assert_eq!(slot.abandoned_ids.back(), Some(&MessageId(n - 1)));
    }
}
