//! One data channel's handle: send, receive, and its identity.

use std::sync::Arc;

use bytes::Bytes;
use tokio::sync::Notify;

use super::message::Message;
use super::options::ChannelOptions;
use super::registry::Meta;
use super::shared::Guard;
use super::{CloseReason, Error};

/// A data channel (RFC 8831): a pair of SCTP streams with the same id.
pub struct DataChannel {
    guard: Arc<Guard>,
    stream: u16,
    generation: u64,
    /// The label and options, shared with the channel table.
    meta: Arc<Meta>,
}

impl std::fmt::Debug for DataChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataChannel")
            .field("stream", &self.stream)
            .field("label", &self.meta.label)
            .field("options", &self.meta.options)
            .finish()
    }
}

impl DataChannel {
    pub(crate) fn new(guard: Arc<Guard>, stream: u16, generation: u64, meta: Arc<Meta>) -> Self {
        Self {
            guard,
            stream,
            generation,
            meta,
        }
    }

    pub fn label(&self) -> &str {
        &self.meta.label
    }

    /// The SCTP stream id, the same in both directions.
    pub fn stream_id(&self) -> u16 {
        self.stream
    }

    pub fn options(&self) -> &ChannelOptions {
        &self.meta.options
    }

    /// The sub-protocol (RFC 8832 5.1).
    pub fn protocol(&self) -> &str {
        &self.meta.options.protocol
    }

    /// Whether the DATA_CHANNEL_ACK has arrived (always, for channels the
    /// peer opened and negotiated ones).
    pub fn is_acked(&self) -> bool {
        let mut reg = self.guard.shared.lock();
        reg.get(self.stream, self.generation)
            .is_some_and(|c| c.acked)
    }

    fn notify(&self) -> Option<Arc<Notify>> {
        let mut reg = self.guard.shared.lock();
        reg.get(self.stream, self.generation)
            .map(|c| c.notify.clone())
    }

    /// Resolves when the DATA_CHANNEL_ACK has arrived (RFC 8832 6).
    pub async fn wait_acked(&self) -> Result<(), Error> {
        let notify = self.notify().ok_or(Error::Closed(CloseReason::Local))?;
        self.guard
            .shared
            .wait(&notify, |reg| {
                let ended = reg.ended.clone();
                let Some(ch) = reg.get(self.stream, self.generation) else {
                    return Some(Err(Error::Closed(CloseReason::Local)));
                };
                if ch.acked {
                    return Some(Ok(()));
                }
                if let Some(why) = &ch.closed {
                    return Some(Err(Error::Closed(why.clone())));
                }
                ended.map(|why| Err(Error::Closed(CloseReason::AssociationEnded(why))))
            })
            .await
    }

    /// Sends a text message (PPID 51, or 56 when empty).
    pub async fn send_text(&self, text: &str) -> Result<(), Error> {
        self.send(Message::Text(text.to_owned())).await
    }

    /// Sends a binary message (PPID 53, or 57 when empty).
    pub async fn send_binary(&self, data: impl Into<Bytes>) -> Result<(), Error> {
        self.send(Message::Binary(data.into())).await
    }

    /// Sends one message under the channel's ordering and reliability. Waits
    /// while the association's send buffer is full.
    pub async fn send(&self, msg: Message) -> Result<(), Error> {
        let acked = {
            let mut reg = self.guard.shared.lock();
            let ended = reg.ended.clone();
            let ch = reg
                .get(self.stream, self.generation)
                .ok_or(Error::Closed(CloseReason::Local))?;
            if let Some(why) = &ch.closed {
                return Err(Error::Closed(why.clone()));
            }
            if ch.reset.requested {
                return Err(Error::Closed(CloseReason::Local));
            }
            if let Some(why) = ended {
                return Err(Error::Closed(CloseReason::AssociationEnded(why)));
            }
            ch.acked
        };
        let (ppid, payload) = msg.to_wire();
        let opts = self.meta.options.send_options(ppid, acked);
        self.guard
            .shared
            .assoc
            .send(self.stream, payload, opts)
            .await?;
        Ok(())
    }

    /// The next message. Once the channel is closed, every message received
    /// before is delivered, then this fails with [`Error::Closed`].
    pub async fn recv(&self) -> Result<Message, Error> {
        let notify = self.notify().ok_or(Error::Closed(CloseReason::Local))?;
        self.guard
            .shared
            .wait(&notify, |reg| reg.pop(self.stream, self.generation))
            .await
    }

    /// Messages and bytes received and not yet read.
    pub fn queued(&self) -> (usize, usize) {
        let mut reg = self.guard.shared.lock();
        reg.get(self.stream, self.generation)
            .map_or((0, 0), |c| (c.queue.len(), c.queued_bytes))
    }

    /// Closes the channel (RFC 8831 6.7): resets our outgoing stream, after
    /// every message sent before has been delivered or abandoned; the peer
    /// resets its own in turn. Resolves once both are reset: the stream id
    /// is then free for a new channel. Messages the peer sent before its
    /// reset can still be read with `recv`. Needs `Config::stream_reconfig`
    /// on both ends.
    ///
    /// The wait is bounded by `DataChannelConfig::close_timeout`: half way,
    /// if the peer has not reset its side, we ask it to (RFC 6525 5.1.3
    /// Incoming SSN Reset Request); at the end `close` fails with
    /// [`Error::CloseTimedOut`] (counted in `DataChannelStats`). The
    /// channel is closed either way, and its stream id is not given to a
    /// new channel until both directions are reset.
    pub async fn close(&self) -> Result<(), Error> {
        let sh = &self.guard.shared;
        if !sh.assoc.stream_reconfig() {
            return Err(Error::StreamResetNotNegotiated);
        }
        let notify = self.notify().ok_or(Error::Closed(CloseReason::Local))?;
        if sh.lock().begin_close(self.stream, self.generation) {
            sh.reset(&[self.stream]);
        }
        sh.finish_close(self.stream, self.generation, &notify).await
    }

    /// A message if one is queued, without waiting.
    pub fn try_recv(&self) -> Option<Result<Message, Error>> {
        self.guard.shared.lock().pop(self.stream, self.generation)
    }
}

/// Dropping a channel closes it (as `close`, without waiting: half way
/// through `DataChannelConfig::close_timeout` the peer is asked to reset its
/// side if it has not) and discards what arrives on it from then on. Its
/// stream id is free again once both directions are reset. Without stream
/// reconfiguration it cannot be closed: its stream id then stays taken for
/// the association's life.
impl Drop for DataChannel {
    fn drop(&mut self) {
        let sh = &self.guard.shared;
        let reset = {
            let mut reg = sh.lock();
            reg.detach(self.stream, self.generation);
            let open = reg.ended.is_none()
                && reg
                    .get(self.stream, self.generation)
                    .is_some_and(|c| c.closed.is_none());
            open && reg.begin_close(self.stream, self.generation)
        };
        if reset && sh.assoc.stream_reconfig() {
            let _ = sh.assoc.reset_streams(&[self.stream]);
            sh.ask_incoming_later(self.stream, self.generation);
        }
    }
}
