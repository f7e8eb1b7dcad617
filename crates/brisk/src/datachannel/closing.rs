//! Closing a channel (RFC 8831 6.7): each end resets its outgoing stream;
//! when the peer resets its outgoing stream we reset ours too; the channel is
//! closed, and its stream id free for a new channel, once both are reset.
//! Pure state on the channel table; the demux task and the handles call
//! `Association::reset_streams` when these methods say so.

use super::CloseReason;
use super::registry::Registry;

impl Registry {
    /// This end closes the channel (or drops it, or refuses it). Returns true
    /// when our outgoing stream is to be reset now (not asked before).
    pub fn begin_close(&mut self, stream: u16, generation: u64) -> bool {
        let Some(ch) = self.get(stream, generation) else {
            return false;
        };
        if ch.reset.requested || ch.reset.outgoing {
            return false;
        }
        ch.reset.requested = true;
        ch.notify.notify_waiters();
        true
    }

    /// The peer reset its outgoing streams (our incoming ones). Returns the
    /// streams whose outgoing half we must reset in turn (RFC 8831 6.7).
    pub fn on_incoming_reset(&mut self, streams: &[u16]) -> Vec<u16> {
        let mut ours = Vec::new();
        for &s in streams {
            let Some(ch) = self.channels.get_mut(&s) else {
                continue;
            };
            ch.reset.incoming = true;
            // Messages already queued are still delivered; then recv fails.
            let why = if ch.reset.requested {
                CloseReason::Local
            } else if ch.opener && !ch.acked {
                // RFC 8832 6: a reset before the ACK means the OPEN failed.
                CloseReason::Refused
            } else {
                CloseReason::PeerClosed
            };
            ch.closed.get_or_insert(why);
            if !ch.reset.requested && !ch.reset.outgoing {
                ch.reset.requested = true;
                ours.push(s);
            }
            ch.notify.notify_waiters();
            self.retire_if_done(s);
        }
        ours
    }

    /// Our request to reset these outgoing streams was performed.
    pub fn on_outgoing_reset(&mut self, streams: &[u16]) {
        for &s in streams {
            if let Some(ch) = self.channels.get_mut(&s) {
                ch.reset.outgoing = true;
                ch.notify.notify_waiters();
                self.retire_if_done(s);
            }
        }
    }

    /// Half of the close's bound passed and the peer has not reset its
    /// outgoing stream (RFC 8831 6.7 says it should, in answer to ours).
    /// Returns true when we are to ask it to (RFC 6525 5.1.3 Incoming SSN
    /// Reset Request): once a channel, and only while that half is missing.
    pub fn begin_incoming_request(&mut self, stream: u16, generation: u64) -> bool {
        let Some(ch) = self.get(stream, generation) else {
            return false;
        };
        let r = &mut ch.reset;
        if r.incoming || r.failed || r.incoming_requested {
            return false;
        }
        r.incoming_requested = true;
        self.stats.incoming_resets_requested += 1;
        true
    }

    /// The close did not complete within its bound: counted, and the channel
    /// is closed for the application. It stays in the table, its stream id
    /// out of use, until both directions are reset.
    pub fn close_timed_out(&mut self, stream: u16, generation: u64) {
        if let Some(ch) = self.get(stream, generation) {
            ch.closed.get_or_insert(CloseReason::Local);
            ch.notify.notify_waiters();
        }
        self.stats.closes_timed_out += 1;
    }

    /// The peer refused or failed our reset of these streams: the channels
    /// cannot be closed as RFC 8831 6.7 says, nor used.
    pub fn on_reset_failed(&mut self, streams: &[u16]) {
        for &s in streams {
            if let Some(ch) = self.channels.get_mut(&s) {
                ch.reset.failed = true;
                ch.closed.get_or_insert(CloseReason::ResetFailed);
                ch.notify.notify_waiters();
            }
        }
    }

    /// Whether the close of a channel has completed (both directions reset),
    /// failed, or can no longer complete; `None` while it is under way.
    pub fn close_outcome(
        &mut self,
        stream: u16,
        generation: u64,
    ) -> Option<Result<(), CloseReason>> {
        let ended = self.ended.clone();
        let Some(ch) = self.get(stream, generation) else {
            return Some(Ok(()));
        };
        if ch.reset.outgoing && ch.reset.incoming {
            return Some(Ok(()));
        }
        if ch.reset.failed {
            return Some(Err(CloseReason::ResetFailed));
        }
        ended.map(|why| Err(CloseReason::AssociationEnded(why)))
    }

    /// Both halves reset: the stream id is free. A handle still held keeps
    /// the channel (retired) to drain its queue and learn why it closed.
    fn retire_if_done(&mut self, stream: u16) {
        let done = self
            .channels
            .get(&stream)
            .is_some_and(|c| c.reset.outgoing && c.reset.incoming);
        if !done {
            return;
        }
        match self.channels.remove(&stream) {
            Some(ch) if !ch.detached => {
                self.retired.insert(ch.generation, ch);
            }
            Some(ch) => self.forget(&ch),
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datachannel::message::Message;
    use crate::datachannel::options::ChannelOptions;
    use crate::datachannel::registry::Route;
    use crate::datachannel::{DataChannelConfig, Error, Role};

    fn reg_with_channel() -> (Registry, u64) {
        let mut r = Registry::new(Role::Client, DataChannelConfig::default());
        let g = r.add_local(0, 16, "a", ChannelOptions::default()).unwrap();
        r.on_ack(0);
        (r, g)
    }

    #[test]
    fn a_local_close_completes_when_both_directions_are_reset() {
        let (mut r, g) = reg_with_channel();
        assert!(r.begin_close(0, g));
        assert!(!r.begin_close(0, g), "asked once");
        assert_eq!(r.close_outcome(0, g), None);
        r.on_outgoing_reset(&[0]);
        assert_eq!(r.close_outcome(0, g), None);
        assert!(matches!(r.allocate(16), Ok(2)), "not free yet");
        // The peer answers by resetting its own: nothing more for us to do.
        assert_eq!(r.on_incoming_reset(&[0]), Vec::<u16>::new());
        assert_eq!(r.close_outcome(0, g), Some(Ok(())));
        assert!(matches!(r.allocate(16), Ok(0)), "the id is free again");
        assert!(matches!(
            r.pop(0, g),
            Some(Err(Error::Closed(CloseReason::Local)))
        ));
        r.detach(0, g);
        assert!(r.retired.is_empty());
    }

    #[test]
    fn a_peer_close_is_answered_and_queued_messages_drain_first() {
        let (mut r, g) = reg_with_channel();
        let m = Message::Text("last".into());
        assert!(matches!(r.on_data(0, Some(&m)), Route::Queued));
        assert_eq!(r.on_incoming_reset(&[0]), [0], "we reset ours in turn");
        assert!(matches!(r.pop(0, g), Some(Ok(x)) if x == m));
        assert!(matches!(
            r.pop(0, g),
            Some(Err(Error::Closed(CloseReason::PeerClosed)))
        ));
        r.on_outgoing_reset(&[0]);
        assert!(r.channels.is_empty());
        assert_eq!(r.retired.len(), 1, "kept for the live handle");
        // A new channel on the same id is a different channel.
        let g2 = r.add_local(0, 16, "b", ChannelOptions::default()).unwrap();
        assert_ne!(g, g2);
        assert!(matches!(
            r.pop(0, g),
            Some(Err(Error::Closed(CloseReason::PeerClosed)))
        ));
        assert!(r.pop(0, g2).is_none());
    }

    #[test]
    fn a_reset_before_the_ack_is_a_refusal() {
        let mut r = Registry::new(Role::Client, DataChannelConfig::default());
        let g = r.add_local(0, 16, "a", ChannelOptions::default()).unwrap();
        assert_eq!(r.on_incoming_reset(&[0]), [0]);
        assert_eq!(r.get(0, g).unwrap().closed, Some(CloseReason::Refused));
    }

    #[test]
    fn a_failed_reset_fails_the_close() {
        let (mut r, g) = reg_with_channel();
        r.begin_close(0, g);
        r.on_reset_failed(&[0]);
        assert_eq!(r.close_outcome(0, g), Some(Err(CloseReason::ResetFailed)));
    }

    #[test]
    fn resets_of_streams_without_channels_are_ignored() {
        let (mut r, _) = reg_with_channel();
        assert!(r.on_incoming_reset(&[5, 9]).is_empty());
        r.on_outgoing_reset(&[5]);
        r.on_reset_failed(&[7]);
        assert_eq!(r.channels.len(), 1);
    }

    #[test]
    fn the_incoming_reset_is_asked_for_once_and_only_while_missing() {
        let (mut r, g) = reg_with_channel();
        r.begin_close(0, g);
        assert!(r.begin_incoming_request(0, g));
        assert!(!r.begin_incoming_request(0, g), "asked once");
        assert_eq!(r.stats().incoming_resets_requested, 1);
        r.on_outgoing_reset(&[0]);
        r.on_incoming_reset(&[0]);
        assert_eq!(r.close_outcome(0, g), Some(Ok(())));

        let g2 = r.add_local(0, 16, "b", ChannelOptions::default()).unwrap();
        r.begin_close(0, g2);
        r.on_incoming_reset(&[0]);
        assert!(!r.begin_incoming_request(0, g2), "already reset");
    }

    #[test]
    fn a_timed_out_close_keeps_the_stream_id_until_both_directions_are_reset() {
        let (mut r, g) = reg_with_channel();
        r.begin_close(0, g);
        r.on_outgoing_reset(&[0]);
        r.close_timed_out(0, g);
        assert_eq!(r.stats().closes_timed_out, 1);
        assert!(matches!(
            r.pop(0, g),
            Some(Err(Error::Closed(CloseReason::Local)))
        ));
        assert!(matches!(r.allocate(16), Ok(2)), "stream 0 is not clean");
        r.on_incoming_reset(&[0]);
        assert!(matches!(r.allocate(16), Ok(0)), "both directions reset");
    }
}
