//! DATA (not I-DATA): whole messages, one at a time, cut into fragments
//! that take consecutive TSNs (RFC 9260 6.9).

use super::expiry::is_timed;
use super::stream::Queued;
use super::{PendingFragment, SendQueue};
use crate::serial::{Ssn, StreamId};
use crate::wire::chunk::DataFlags;

/// A message whose first fragment has been handed out and whose last has not.
#[derive(Debug)]
pub(super) struct InProgress {
    pub(super) msg: Queued,
    pub(super) stream_id: StreamId,
    pub(super) ssn: Ssn,
}

impl SendQueue {
    /// Hands out the next fragment to send, of at most `max_payload` payload bytes.
    ///
    /// Returns `None` if nothing is queued, or if `max_payload` is 0 (no fragment
    /// fits). The caller must give the fragments consecutive TSNs in the order this
    /// returns them.
    pub fn next_fragment(&mut self, max_payload: usize) -> Option<PendingFragment> {
        if max_payload == 0 {
            return None;
        }
        if self.interleave {
            return self.next_interleaved(max_payload);
        }
        // RFC 9260 6.9: the fragments of a message take consecutive TSNs, so a
        // started message finishes before the next one begins.
        let beginning = self.current.is_none();
        if beginning {
            self.start_next_message()?;
        }
        let cur = self.current.as_mut()?;
        let ending = cur.msg.payload.len() <= max_payload;
        let payload = if ending {
            std::mem::take(&mut cur.msg.payload)
        } else {
            cur.msg.payload.split_to(max_payload)
        };
        // RFC 9260 6.9: B/E = 10 on the first fragment, 00 in the middle, 01 on the
        // last, 11 when unfragmented; U on every fragment of an unordered message.
        // RFC 9260 3.3.1 (RFC 7053): I on the message's last fragment.
        let fragment = PendingFragment {
            msg: cur.msg.id,
            stream_id: cur.stream_id,
            ssn: cur.ssn,
            ppid: cur.msg.ppid,
            flags: DataFlags {
                immediate: ending && cur.msg.immediate_sack,
                unordered: cur.msg.unordered,
                beginning,
                ending,
            },
            payload,
            queued_at: cur.msg.queued_at,
            reliability: cur.msg.reliability,
            idata: false,
            mid: 0,
            fsn: 0,
        };
        self.buffered -= fragment.payload.len();
        if ending {
            self.current = None;
            self.len -= 1;
        }
        Some(fragment)
    }

    /// Takes the next message in turn out of its stream, gives it its SSN and makes
    /// it `current`. `None` if no stream has a message.
    pub(super) fn start_next_message(&mut self) -> Option<()> {
        let slot = self.sched.peek()?;
        let stream = &mut self.streams[slot as usize];
        let msg = stream.messages.pop_front()?;
        self.timed -= usize::from(is_timed(msg.reliability));
        self.sched
            .on_start(slot, stream.messages.front().map(|m| m.payload.len()));
        let ssn = if msg.unordered {
            // RFC 9260 6.5: unordered messages do not change the SSN; RFC 9260
            // 3.3.1: the receiver ignores it.
            Ssn(0)
        } else {
            // RFC 9260 6.5: +1 per ordered message, 65535 wraps to 0.
            let ssn = stream.next_ssn;
            stream.next_ssn = ssn.next();
            ssn
        };
        self.current = Some(InProgress {
            msg,
            stream_id: stream.id,
            ssn,
        });
        Some(())
    }
}
