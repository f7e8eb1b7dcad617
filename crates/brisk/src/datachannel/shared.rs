//! What the demux task and the handles share: the association, the channel
//! table behind one lock, and the task's lifetime (it ends when the last
//! handle goes).

use std::sync::{Arc, Mutex, MutexGuard};

use brisk_proto::Reliability;
use tokio::sync::Notify;
use tokio::task::AbortHandle;

use crate::association::{Association, SendOptions};

use super::channel::DataChannel;
use super::dcep::{self, PPID_DCEP};
use super::options::ChannelOptions;
use super::registry::Registry;
use super::{CloseReason, DataChannelConfig, Error, Role};

pub(crate) struct Shared {
    pub assoc: Association,
    pub role: Role,
    state: Mutex<Registry>,
    /// Wakes `accept`.
    pub accept: Notify,
}

impl Shared {
    pub fn new(assoc: Association, role: Role, config: DataChannelConfig) -> Self {
        Self {
            assoc,
            role,
            state: Mutex::new(Registry::new(role, config)),
            accept: Notify::new(),
        }
    }

    /// Locks the table; a panic elsewhere does not poison it for the rest.
    pub fn lock(&self) -> MutexGuard<'_, Registry> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until `ready` gives a value, re-checking whenever `notify` fires.
    pub async fn wait<T>(
        &self,
        notify: &Notify,
        mut ready: impl FnMut(&mut Registry) -> Option<T>,
    ) -> T {
        loop {
            let notified = notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(v) = ready(&mut self.lock()) {
                return v;
            }
            notified.await;
        }
    }

    /// The association ended: every channel and `accept` learn it.
    pub fn end(&self, why: String) {
        self.lock().end(why);
        self.accept.notify_waiters();
    }

    /// The association's outbound stream count, or why there is none.
    pub fn streams(&self) -> Result<u16, Error> {
        self.assoc.outbound_streams().ok_or_else(|| {
            Error::Closed(CloseReason::AssociationEnded("association is gone".into()))
        })
    }

    /// Resets our outgoing `streams` (RFC 6525), when stream reconfiguration
    /// was negotiated. A request that cannot be made (not negotiated, a
    /// stream we cannot send on, the association ending) fails the close of
    /// the channels on those streams.
    pub fn reset(&self, streams: &[u16]) {
        if !self.assoc.stream_reconfig() || self.assoc.reset_streams(streams).is_err() {
            self.lock().on_reset_failed(streams);
        }
    }

    /// Waits, at most `DataChannelConfig::close_timeout`, for the close of
    /// a channel to complete: both directions of its stream reset (RFC 8831
    /// 6.7). Half way, if the peer has not reset its outgoing stream in
    /// answer to ours, asks it to (RFC 6525 5.1.3); at the end gives up.
    pub async fn finish_close(
        &self,
        stream: u16,
        generation: u64,
        notify: &Notify,
    ) -> Result<(), Error> {
        let bound = self.lock().config.close_timeout;
        let first = bound / 2;
        let outcome = |reg: &mut Registry| reg.close_outcome(stream, generation);
        if let Ok(done) = tokio::time::timeout(first, self.wait(notify, outcome)).await {
            return done.map_err(Error::Closed);
        }
        // A request that cannot be made (the association ending) changes
        // nothing: the end, or the bound, completes the close.
        if self.lock().begin_incoming_request(stream, generation) {
            let _ = self.assoc.request_incoming_reset(&[stream]);
        }
        if let Ok(done) = tokio::time::timeout(bound - first, self.wait(notify, outcome)).await {
            return done.map_err(Error::Closed);
        }
        self.lock().close_timed_out(stream, generation);
        Err(Error::CloseTimedOut {
            stream,
            after: bound,
        })
    }

    /// The close of a dropped channel: as `finish_close`, without a waiter.
    /// If the peer has not reset its side half way through the bound, it is
    /// asked to (RFC 6525 5.1.3). The task holds the table weakly, so it does
    /// not keep the association alive.
    pub fn ask_incoming_later(self: &Arc<Self>, stream: u16, generation: u64) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let after = self.lock().config.close_timeout / 2;
        let weak = Arc::downgrade(self);
        rt.spawn(async move {
            tokio::time::sleep(after).await;
            let Some(sh) = weak.upgrade() else {
                return;
            };
            if sh.lock().begin_incoming_request(stream, generation) {
                let _ = sh.assoc.request_incoming_reset(&[stream]);
            }
        });
    }

    /// Sends one DCEP message on `stream`: ordered and reliable (RFC 8832 6).
    pub async fn send_dcep(&self, stream: u16, msg: &dcep::Message) -> Result<(), Error> {
        let bytes = msg.encode()?;
        let opts = SendOptions {
            ppid: PPID_DCEP,
            unordered: false,
            immediate_sack: false,
            reliability: Reliability::Reliable,
        };
        self.assoc.send(stream, bytes, opts).await?;
        Ok(())
    }
}

/// Held by every handle; the demux task stops when the last one goes, so the
/// association (and its endpoint) is not kept alive by the task alone.
pub(crate) struct Guard {
    pub shared: Arc<Shared>,
    task: AbortHandle,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Guard {
    pub fn start(shared: Shared) -> Arc<Guard> {
        let shared = Arc::new(shared);
        let task = tokio::spawn(super::demux::run(shared.clone())).abort_handle();
        Arc::new(Guard { shared, task })
    }

    pub async fn open(
        self: &Arc<Self>,
        label: &str,
        options: ChannelOptions,
    ) -> Result<DataChannel, Error> {
        let sh = &self.shared;
        if options.reliability != Reliability::Reliable && !sh.assoc.partial_reliability() {
            return Err(Error::PartialReliabilityNotNegotiated);
        }
        let open = options
            .negotiated
            .is_none()
            .then(|| dcep::Message::Open(options.to_open(label)));
        if let Some(open) = &open {
            open.encode()?;
        }
        let streams = sh.streams()?;
        let (stream, generation, meta) = {
            let mut reg = sh.lock();
            let stream = match options.negotiated {
                Some(id) => id,
                None => reg.allocate(streams)?,
            };
            let generation = reg.add_local(stream, streams, label, options)?;
            let meta = reg.get(stream, generation).map(|c| c.meta.clone());
            (stream, generation, meta)
        };
        if let Some(open) = &open
            && let Err(e) = sh.send_dcep(stream, open).await
        {
            sh.lock().remove(stream, generation);
            return Err(e);
        }
        let meta = meta.ok_or(Error::Closed(CloseReason::Local))?;
        Ok(DataChannel::new(self.clone(), stream, generation, meta))
    }

    pub async fn accept(self: &Arc<Self>) -> Result<DataChannel, Error> {
        let sh = &self.shared;
        sh.wait(&sh.accept, |reg| {
            while let Some(stream) = reg.incoming.pop_front() {
                if let Some(ch) = reg.channels.get(&stream) {
                    return Some(Ok(DataChannel::new(
                        self.clone(),
                        stream,
                        ch.generation,
                        ch.meta.clone(),
                    )));
                }
            }
            reg.ended
                .clone()
                .map(|why| Err(Error::Closed(CloseReason::AssociationEnded(why))))
        })
        .await
    }
}
