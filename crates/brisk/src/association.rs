//! The association handle: send, receive, close.

use std::net::SocketAddr;
use std::sync::Arc;

use brisk_proto::{
    AssocId, IncomingMessage, MessageId, OutgoingMessage, Reliability, SendError, Stats,
};
use bytes::Bytes;
use tokio::sync::Notify;

use crate::error::Error;
use crate::path_events::PathEvent;
use crate::shared::{Handle, State};
use crate::stream_events::StreamEvent;

/// How to send one message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SendOptions {
    /// Payload Protocol Identifier, passed to the peer unchanged.
    pub ppid: u32,
    /// Deliver without regard to order on the stream.
    pub unordered: bool,
    /// Ask the peer to acknowledge at once (the I bit, RFC 9260 3.3.1).
    pub immediate_sack: bool,
    /// Partial reliability (RFC 3758, RFC 7496): a lifetime or a limit on
    /// retransmissions, honoured when both ends set
    /// `Config::partial_reliability`. An abandoned message is counted in
    /// [`Association::abandoned_messages`].
    pub reliability: Reliability,
}

/// One association. Cloning gives another handle to the same association.
#[derive(Clone)]
pub struct Association {
    inner: Arc<Handle>,
    id: AssocId,
    notify: Arc<Notify>,
    remote: SocketAddr,
}

impl std::fmt::Debug for Association {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Association")
            .field("id", &self.id)
            .field("remote", &self.remote)
            .finish()
    }
}

impl Association {
    pub(crate) fn new(
        inner: Arc<Handle>,
        id: AssocId,
        notify: Arc<Notify>,
        remote: SocketAddr,
    ) -> Self {
        Self {
            inner,
            id,
            notify,
            remote,
        }
    }

    pub fn id(&self) -> AssocId {
        self.id
    }

    /// The peer's address: its UDP address, or the key its transport names it by.
    pub fn remote(&self) -> SocketAddr {
        self.remote
    }

    /// Waits until `ready` returns a result, re-checking whenever the driver
    /// reports a change for this association.
    async fn wait<T>(
        &self,
        mut ready: impl FnMut(&mut State) -> Option<Result<T, Error>>,
    ) -> Result<T, Error> {
        let shared = &self.inner.shared;
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut st = shared.lock();
                if let Some(result) = ready(&mut st) {
                    return result;
                }
                if st.stopped.is_some() {
                    return Err(st.stop_error());
                }
            }
            notified.await;
        }
    }

    /// The error for an association that has ended, if it has.
    fn closed_error(&self, st: &State) -> Option<Error> {
        st.slots
            .get(&self.id)
            .and_then(|s| s.closed.as_ref())
            .map(Error::from_close)
    }

    pub(crate) async fn wait_connected(&self) -> Result<(), Error> {
        self.wait(|st| {
            if let Some(e) = self.closed_error(st) {
                return Some(Err(e));
            }
            st.slots
                .get(&self.id)
                .is_some_and(|s| s.connected)
                .then_some(Ok(()))
        })
        .await
    }

    /// Sends one message on `stream`. Waits while the send buffer is full.
    /// Returns once the message is queued, not once it is acknowledged (see
    /// [`flush`](Self::flush)).
    pub async fn send(
        &self,
        stream: u16,
        data: impl Into<Bytes>,
        opts: SendOptions,
    ) -> Result<MessageId, Error> {
        let msg = OutgoingMessage {
            stream_id: stream,
            ppid: opts.ppid,
            unordered: opts.unordered,
            immediate_sack: opts.immediate_sack,
            reliability: opts.reliability,
            payload: data.into(),
        };
        let shared = self.inner.shared.clone();
        let result = self
            .wait(|st| {
                if let Some(e) = self.closed_error(st) {
                    return Some(Err(e));
                }
                if st.stopped.is_some() {
                    // Nothing would carry it: the driver has stopped.
                    return Some(Err(st.stop_error()));
                }
                let now = shared.now();
                let assoc = match st.proto.association(self.id) {
                    Some(a) => a,
                    None => return Some(Err(Error::Closed("association is gone".into()))),
                };
                match assoc.send(now, msg.clone()) {
                    Ok(id) => Some(Ok(id)),
                    Err(SendError::BufferFull { .. }) => {
                        // The driver wakes blocked senders after each of its
                        // passes; waking it from here as well made the two
                        // tasks wake each other in a loop while the buffer
                        // stayed full, starving the socket (`biased` select).
                        st.blocked_senders.insert(self.id);
                        None
                    }
                    Err(e) => Some(Err(e.into())),
                }
            })
            .await;
        self.inner.shared.wake.notify_one();
        result
    }

    /// The next message, in order within its stream. Fails once the association
    /// has ended and every message received before has been read.
    pub async fn recv(&self) -> Result<IncomingMessage, Error> {
        let result = self
            .wait(|st| {
                if let Some(m) = st.proto.association(self.id).and_then(|a| a.recv()) {
                    return Some(Ok(m));
                }
                self.closed_error(st).map(Err)
            })
            .await;
        // Reading may open the receive window: the driver may owe a SACK.
        self.inner.shared.wake.notify_one();
        result
    }

    /// A message if one is ready, without waiting.
    pub fn try_recv(&self) -> Option<IncomingMessage> {
        let m = self.inner.shared.lock().proto.association(self.id)?.recv();
        if m.is_some() {
            self.inner.shared.wake.notify_one();
        }
        m
    }

    /// Waits until every message sent so far is acknowledged by the peer.
    pub async fn flush(&self) -> Result<(), Error> {
        self.wait(|st| {
            if let Some(e) = self.closed_error(st) {
                return Some(Err(e));
            }
            let assoc = st.proto.association(self.id)?;
            if assoc.all_acked() {
                Some(Ok(()))
            } else {
                st.blocked_senders.insert(self.id);
                None
            }
        })
        .await
    }

    /// Shuts down gracefully (RFC 9260 9.2): queued and outstanding messages are
    /// delivered first. Resolves when the association has closed.
    pub async fn close(&self) -> Result<(), Error> {
        {
            let shared = &self.inner.shared;
            let mut st = shared.lock();
            let now = shared.now();
            if let Some(a) = st.proto.association(self.id) {
                a.shutdown(now);
            }
        }
        self.inner.shared.wake.notify_one();
        self.wait(|st| {
            let slot = st.slots.get(&self.id)?;
            match &slot.closed {
                Some(brisk_proto::CloseReason::Shutdown) => Some(Ok(())),
                Some(other) => Some(Err(Error::from_close(other))),
                None => None,
            }
        })
        .await
    }

    /// Aborts at once (RFC 9260 9.1), telling the peer `reason`. Messages not yet
    /// acknowledged are lost.
    pub fn abort(&self, reason: &str) {
        let shared = &self.inner.shared;
        {
            let mut st = shared.lock();
            let now = shared.now();
            if let Some(a) = st.proto.association(self.id) {
                a.abort(now, reason);
            }
        }
        shared.wake.notify_one();
    }

    /// Whether partial reliability was negotiated with the peer (RFC 3758
    /// 3.1); without it, `SendOptions::reliability` is not applied.
    pub fn partial_reliability(&self) -> bool {
        let mut st = self.inner.shared.lock();
        st.proto
            .association(self.id)
            .is_some_and(|a| a.partial_reliability())
    }

    /// Streams we may send on (negotiated, RFC 9260 5.1.1; more once streams
    /// are added, RFC 6525), while the association exists.
    pub fn outbound_streams(&self) -> Option<u16> {
        let mut st = self.inner.shared.lock();
        st.proto.association(self.id).map(|a| a.outbound_streams())
    }

    /// Whether stream reconfiguration (RFC 6525) was negotiated: both ends
    /// set `Config::stream_reconfig`.
    pub fn stream_reconfig(&self) -> bool {
        let mut st = self.inner.shared.lock();
        st.proto
            .association(self.id)
            .is_some_and(|a| a.stream_reconfig())
    }

    /// Runs `f` on the protocol association, then wakes the driver.
    fn reconfigure<E: Into<Error>>(
        &self,
        f: impl FnOnce(&mut brisk_proto::Association, brisk_proto::Time) -> Result<(), E>,
    ) -> Result<(), Error> {
        let shared = &self.inner.shared;
        {
            let mut st = shared.lock();
            if let Some(e) = self.closed_error(&st) {
                return Err(e);
            }
            let now = shared.now();
            let assoc = st
                .proto
                .association(self.id)
                .ok_or_else(|| Error::Closed("association is gone".into()))?;
            f(assoc, now).map_err(Into::into)?;
        }
        shared.wake.notify_one();
        Ok(())
    }

    /// Resets outgoing streams (RFC 6525 Outgoing SSN Reset Request).
    /// Returns once the request is queued; messages sent on the streams
    /// before this call are delivered first, messages sent after it wait
    /// and go with SSNs from 0 once the peer performed the reset. The
    /// outcome is a [`StreamEvent`]: `Reset { direction: Outgoing, .. }`
    /// or `ResetFailed`.
    pub fn reset_streams(&self, streams: &[u16]) -> Result<(), Error> {
        self.reconfigure(|a, now| a.reset_streams(now, streams))
    }

    /// Adds `outgoing` and `incoming` streams (RFC 6525 Add Outgoing and
    /// Add Incoming Streams Requests). Returns once the request is queued;
    /// the outcome is a [`StreamEvent`]: `Added` with the new numbers, or
    /// `AddFailed`.
    pub fn add_streams(&self, outgoing: u16, incoming: u16) -> Result<(), Error> {
        self.reconfigure(|a, now| a.add_streams(now, outgoing, incoming))
    }

    /// Asks the peer to reset its outgoing streams that are our incoming
    /// `streams` (RFC 6525 Incoming SSN Reset Request).
    pub fn request_incoming_reset(&self, streams: &[u16]) -> Result<(), Error> {
        self.reconfigure(|a, now| a.request_incoming_reset(now, streams))
    }

    /// Resets every stream's SSN both ways and the TSNs (RFC 6525 SSN/TSN
    /// Reset Request); `StreamEvent::AssociationReset` reports it.
    pub fn reset_ssn_tsn(&self) -> Result<(), Error> {
        self.reconfigure(|a, now| a.reset_ssn_tsn(now))
    }

    /// The next stream reconfiguration event. Waits for one; fails once
    /// the association has ended and every event was read. Events wait in
    /// a queue of [`STREAM_EVENT_QUEUE`](crate::STREAM_EVENT_QUEUE) events
    /// listing [`STREAM_EVENT_STREAMS`](crate::STREAM_EVENT_STREAMS) stream
    /// numbers at most: if the application never reads them, the oldest
    /// are dropped ([`stream_events_dropped`](Self::stream_events_dropped)
    /// counts them).
    pub async fn stream_event(&self) -> Result<StreamEvent, Error> {
        self.wait(|st| {
            if let Some(e) = st
                .slots
                .get_mut(&self.id)
                .and_then(|s| s.stream_events.pop())
            {
                return Some(Ok(e));
            }
            self.closed_error(st).map(Err)
        })
        .await
    }

    /// The next stream reconfiguration event, if one is waiting.
    pub fn try_stream_event(&self) -> Option<StreamEvent> {
        self.inner
            .shared
            .lock()
            .slots
            .get_mut(&self.id)?
            .stream_events
            .pop()
    }

    /// Stream reconfiguration events dropped because the queue was full.
    pub fn stream_events_dropped(&self) -> u64 {
        self.inner
            .shared
            .lock()
            .slots
            .get(&self.id)
            .map_or(0, |s| s.stream_events.dropped)
    }

    /// The peer's destinations (RFC 9260 6.4): each one's state, RTO and
    /// cwnd, which is primary and which takes new data; `None` once the
    /// association is gone.
    pub fn paths(&self) -> Option<Vec<brisk_proto::PathInfo>> {
        let mut st = self.inner.shared.lock();
        st.proto.association(self.id).map(|a| a.paths())
    }

    /// Makes `remote`, one of the peer's addresses, the primary destination
    /// (RFC 9260 6.4): new data goes there once it is confirmed and active.
    pub fn set_primary(&self, remote: SocketAddr) -> Result<(), Error> {
        self.reconfigure(|a, now| a.set_primary(now, remote))
    }

    /// The next path event (a destination's state changed, or new data
    /// moved to another destination). Waits for one; fails once the
    /// association has ended and every event was read. At most
    /// [`PATH_EVENT_QUEUE`](crate::PATH_EVENT_QUEUE) wait; if the
    /// application never reads them, the oldest are dropped
    /// ([`path_events_dropped`](Self::path_events_dropped) counts them).
    pub async fn path_event(&self) -> Result<PathEvent, Error> {
        self.wait(|st| {
            if let Some(e) = st.slots.get_mut(&self.id).and_then(|s| s.path_events.pop()) {
                return Some(Ok(e));
            }
            self.closed_error(st).map(Err)
        })
        .await
    }

    /// The next path event, if one is waiting.
    pub fn try_path_event(&self) -> Option<PathEvent> {
        self.inner
            .shared
            .lock()
            .slots
            .get_mut(&self.id)?
            .path_events
            .pop()
    }

    /// Path events dropped because the queue was full.
    pub fn path_events_dropped(&self) -> u64 {
        self.inner
            .shared
            .lock()
            .slots
            .get(&self.id)
            .map_or(0, |s| s.path_events.dropped)
    }

    /// Whether message interleaving was negotiated with the peer (RFC 8260
    /// 2.2): both ends listed I-DATA, so all user data goes as I-DATA and
    /// fragments of different streams interleave.
    pub fn message_interleaving(&self) -> bool {
        let mut st = self.inner.shared.lock();
        st.proto
            .association(self.id)
            .is_some_and(|a| a.message_interleaving())
    }

    /// Counters and loss-recovery state, while the association exists.
    pub fn stats(&self) -> Option<Stats> {
        let mut st = self.inner.shared.lock();
        st.proto.association(self.id).map(|a| a.stats())
    }

    /// Messages abandoned under their partial-reliability policy (RFC 3758).
    pub fn abandoned_messages(&self) -> u64 {
        self.inner
            .shared
            .lock()
            .slots
            .get(&self.id)
            .map_or(0, |s| s.abandoned)
    }

    /// The messages (as `send` returned their ids) abandoned since the last
    /// call, oldest first. The latest 4096 are kept; older ones are only
    /// counted in [`abandoned_messages`](Self::abandoned_messages).
    pub fn take_abandoned(&self) -> Vec<MessageId> {
        self.inner
            .shared
            .lock()
            .slots
            .get_mut(&self.id)
            .map_or_else(Vec::new, |s| s.abandoned_ids.drain(..).collect())
    }

    /// Messages the association reported it could not deliver (it ended first).
    pub fn failed_sends(&self) -> u64 {
        self.inner
            .shared
            .lock()
            .slots
            .get(&self.id)
            .map_or(0, |s| s.failed_sends)
    }
}
