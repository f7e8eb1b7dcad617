//! The receive task: reads the association and routes each message, DCEP to
//! the channel table's rules (RFC 8832 6), user messages to their channel's
//! bounded queue (waiting while it is full: backpressure, not loss).

use std::sync::Arc;

use brisk_proto::{IncomingMessage, ResetDirection};

use crate::StreamEvent;

use super::dcep::{self, PPID_DCEP};
use super::message::Message;
use super::registry::{OpenVerdict, Route};
use super::shared::Shared;

pub(crate) async fn run(shared: Arc<Shared>) {
    let mut events = true;
    loop {
        tokio::select! {
            // Stream events first: a peer that reuses a stream id sends its
            // OPEN after answering our reset, and the reset must be seen
            // first for the id to be free.
            biased;
            ev = shared.assoc.stream_event(), if events => match ev {
                Ok(ev) => on_stream_event(&shared, ev).await,
                // The association ended; its messages may still be queued.
                Err(_) => events = false,
            },
            m = shared.assoc.recv() => match m {
                Ok(m) => on_message(&shared, m).await,
                Err(e) => {
                    shared.end(e.to_string());
                    return;
                }
            },
        }
    }
}

/// Stream resets (RFC 6525) close channels (RFC 8831 6.7).
async fn on_stream_event(shared: &Shared, ev: StreamEvent) {
    match ev {
        StreamEvent::Reset {
            direction: ResetDirection::Incoming,
            streams,
        } => {
            // The peer performed the reset only after every message it sent
            // before had arrived (RFC 6525 5.2.2): deliver those first.
            while let Some(m) = shared.assoc.try_recv() {
                on_message(shared, m).await;
            }
            let ours = shared.lock().on_incoming_reset(&streams);
            if !ours.is_empty() {
                shared.reset(&ours);
            }
        }
        StreamEvent::Reset {
            direction: ResetDirection::Outgoing,
            streams,
        } => shared.lock().on_outgoing_reset(&streams),
        StreamEvent::ResetFailed { streams, .. } => shared.lock().on_reset_failed(&streams),
        StreamEvent::Added { .. }
        | StreamEvent::AddFailed { .. }
        | StreamEvent::AssociationReset
        | StreamEvent::AssociationResetFailed { .. } => {}
    }
}

async fn on_message(shared: &Shared, m: IncomingMessage) {
    let stream = m.stream_id;
    if m.ppid == PPID_DCEP {
        return on_dcep(shared, stream, &m.payload).await;
    }
    let msg = Message::from_wire(m.ppid, m.payload).ok();
    let Some(notify) = shared
        .lock()
        .channels
        .get(&stream)
        .map(|c| c.notify.clone())
    else {
        shared.lock().on_data(stream, msg.as_ref());
        return;
    };
    shared
        .wait(&notify, |reg| match reg.on_data(stream, msg.as_ref()) {
            Route::Full => None,
            Route::Queued | Route::Discarded => Some(()),
        })
        .await;
}

async fn on_dcep(shared: &Shared, stream: u16, payload: &[u8]) {
    let streams = shared.assoc.outbound_streams().unwrap_or(0);
    let verdict = {
        let mut reg = shared.lock();
        match dcep::Message::parse(payload) {
            Ok(dcep::Message::Open(open)) => Some(reg.on_open(stream, streams, Ok(open))),
            Ok(dcep::Message::Ack) => {
                reg.on_ack(stream);
                None
            }
            Err(_) => reg.on_bad_dcep(stream, streams),
        }
    };
    match verdict {
        Some(OpenVerdict::Ack) => {
            // RFC 8832 6: the ACK goes on the stream the OPEN came on. If it
            // cannot be sent, the association is ending and `run` sees it.
            let _ = shared.send_dcep(stream, &dcep::Message::Ack).await;
            shared.accept.notify_waiters();
        }
        Some(OpenVerdict::Refuse { existing }) => {
            // RFC 8832 6: no ACK, and the channel is closed by resetting the
            // stream (RFC 8831 6.7).
            let reset = if existing {
                let mut reg = shared.lock();
                let generation = reg.channels.get(&stream).map(|c| c.generation);
                generation.is_some_and(|g| reg.begin_close(stream, g))
            } else {
                true
            };
            if reset {
                shared.reset(&[stream]);
            }
        }
        None => {}
    }
}
