//! Partial reliability (RFC 3758, RFC 7496): messages abandoned before or
//! while they are sent.

use bytes::Bytes;

use super::stream::Queued;
use super::{PendingFragment, SendQueue};
use crate::message::Reliability;
use crate::serial::Ssn;
use crate::wire::chunk::DataFlags;
use crate::{MessageId, Time};

impl SendQueue {
    /// RFC 7496 3.1: removes the messages not yet started whose lifetime
    /// ran out by `now` (they never took a TSN) and returns their ids.
    pub fn abandon_expired(&mut self, now: Time) -> Vec<MessageId> {
        if self.timed == 0 {
            return Vec::new();
        }
        let mut gone = Vec::new();
        for stream in &mut self.streams {
            // I-DATA: a started front message took TSNs; it is abandoned
            // with its chunks, not here.
            let mut keep_front = stream.started.is_some();
            let mut keep = |m: &Queued| {
                let expired =
                    is_timed(m.reliability) && m.reliability.abandons(m.queued_at, 0, now);
                if expired {
                    gone.push((m.id, m.payload.len()));
                }
                !expired
            };
            stream
                .messages
                .retain(|m| std::mem::take(&mut keep_front) || keep(m));
            for held in &mut stream.held {
                held.retain(&mut keep);
            }
        }
        if gone.is_empty() {
            return Vec::new();
        }
        // The scheduler learns the queue anew, in send order (a rare event).
        self.set_scheduler(self.sched.kind());
        for &(_, len) in &gone {
            self.buffered -= len;
            self.len -= 1;
            self.timed -= 1;
        }
        gone.into_iter().map(|(id, _)| id).collect()
    }

    /// RFC 3758 3.5: the message `id`, part of which was sent, is abandoned:
    /// its fragments not handed out yet are dropped. If it was the message
    /// being fragmented, returns its end as a fragment without payload, for
    /// the retransmission queue to give a TSN that FORWARD TSN skips, so that
    /// the receiver learns the message's stream and SSN (as dcSCTP does).
    ///
    /// With I-DATA the message is the started front of its stream, and its
    /// end carries its MID, which the I-FORWARD-TSN names (RFC 8260 2.3).
    pub fn abandon_current(&mut self, id: MessageId) -> Option<PendingFragment> {
        if self.interleave {
            return self.abandon_started(id);
        }
        if self.current.as_ref().is_none_or(|cur| cur.msg.id != id) {
            return None;
        }
        let cur = self.current.take()?;
        self.buffered -= cur.msg.payload.len();
        self.len -= 1;
        Some(PendingFragment {
            msg: cur.msg.id,
            stream_id: cur.stream_id,
            ssn: cur.ssn,
            ppid: cur.msg.ppid,
            flags: DataFlags {
                immediate: false,
                unordered: cur.msg.unordered,
                beginning: false,
                ending: true,
            },
            payload: Bytes::new(),
            queued_at: cur.msg.queued_at,
            reliability: cur.msg.reliability,
            idata: false,
            mid: 0,
            fsn: 0,
        })
    }

    /// I-DATA: drops the started front message `id` of its stream, if any,
    /// and returns its end as a fragment without payload.
    pub(super) fn abandon_started(&mut self, id: MessageId) -> Option<PendingFragment> {
        let stream = self
            .streams
            .iter_mut()
            .find(|s| s.started.is_some() && s.messages.front().is_some_and(|m| m.id == id))?;
        let started = stream.started.take()?;
        self.open_charge = self.open_charge.saturating_sub(started.charge);
        let m = stream.messages.pop_front()?;
        let end = PendingFragment {
            msg: m.id,
            stream_id: stream.id,
            ssn: Ssn(0),
            ppid: m.ppid,
            flags: DataFlags {
                immediate: false,
                unordered: m.unordered,
                beginning: false,
                ending: true,
            },
            payload: Bytes::new(),
            queued_at: m.queued_at,
            reliability: m.reliability,
            idata: true,
            mid: started.mid,
            fsn: started.next_fsn,
        };
        self.buffered -= m.payload.len();
        self.len -= 1;
        // The scheduler learns the queue anew (a rare event).
        self.set_scheduler(self.sched.kind());
        Some(end)
    }
}

/// Whether a message has a lifetime (RFC 7496 3.1).
pub(super) fn is_timed(r: Reliability) -> bool {
    matches!(r, Reliability::Lifetime(_))
}
