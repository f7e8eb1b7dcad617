//! Stream reconfiguration events (RFC 6525) for the application, and the
//! bounded queue that holds them until it reads them.

use std::collections::VecDeque;

use brisk_proto::wire::chunk::ReconfigResult;
use brisk_proto::{Event, ResetDirection};

/// Reconfiguration events an association keeps for the application at
/// most. When the application does not read them, the oldest is dropped
/// and counted ([`Association::stream_events_dropped`](crate::Association::stream_events_dropped)).
pub const STREAM_EVENT_QUEUE: usize = 1024;

/// Stream numbers the queued events hold at most, all events together (a
/// reset of every stream lists up to 65535): older events are dropped, and
/// counted, to make room.
pub const STREAM_EVENT_STREAMS: usize = 1 << 16;

/// What happened to the association's streams (RFC 6525), read with
/// [`Association::stream_event`](crate::Association::stream_event).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// Streams were reset: `Outgoing`, our request was performed and our
    /// messages on them number from SSN 0 again (every message sent before
    /// was delivered or abandoned first); `Incoming`, the peer reset its
    /// outgoing streams, our incoming ones.
    Reset {
        direction: ResetDirection,
        streams: Vec<u16>,
    },
    /// The peer refused (or could not perform) a reset of these streams.
    ResetFailed {
        streams: Vec<u16>,
        result: ReconfigResult,
    },
    /// Streams were added, by either side: the new numbers of outgoing and
    /// incoming streams.
    Added { outgoing: u16, incoming: u16 },
    /// The peer refused to add the streams we asked for (the numbers we
    /// asked to add).
    AddFailed {
        outgoing: u16,
        incoming: u16,
        result: ReconfigResult,
    },
    /// An SSN/TSN reset was performed: every stream numbers from 0 again.
    AssociationReset,
    /// The peer refused an SSN/TSN reset.
    AssociationResetFailed { result: ReconfigResult },
}

impl StreamEvent {
    /// The application's view of a protocol event, if it is one of these.
    pub(crate) fn from_event(event: &Event) -> Option<Self> {
        Some(match event {
            Event::StreamsReset { direction, streams } => StreamEvent::Reset {
                direction: *direction,
                streams: streams.clone(),
            },
            Event::StreamResetFailed { streams, result } => StreamEvent::ResetFailed {
                streams: streams.clone(),
                result: *result,
            },
            Event::StreamsAdded { outgoing, incoming } => StreamEvent::Added {
                outgoing: *outgoing,
                incoming: *incoming,
            },
            Event::StreamsAddFailed {
                outgoing,
                incoming,
                result,
            } => StreamEvent::AddFailed {
                outgoing: *outgoing,
                incoming: *incoming,
                result: *result,
            },
            Event::AssociationReset => StreamEvent::AssociationReset,
            Event::AssociationResetFailed { result } => {
                StreamEvent::AssociationResetFailed { result: *result }
            }
            _ => return None,
        })
    }
}

/// The events not yet read, oldest first, at most [`STREAM_EVENT_QUEUE`].
#[derive(Debug, Default)]
pub(crate) struct StreamEvents {
    queue: VecDeque<StreamEvent>,
    /// Stream numbers the queued events list.
    streams: usize,
    pub dropped: u64,
}

impl StreamEvent {
    /// How many stream numbers the event lists.
    fn streams(&self) -> usize {
        match self {
            StreamEvent::Reset { streams, .. } | StreamEvent::ResetFailed { streams, .. } => {
                streams.len()
            }
            _ => 0,
        }
    }
}

impl StreamEvents {
    pub fn push(&mut self, event: StreamEvent) {
        let more = event.streams();
        while !self.queue.is_empty()
            && (self.queue.len() >= STREAM_EVENT_QUEUE
                || self.streams + more > STREAM_EVENT_STREAMS)
        {
            if let Some(old) = self.queue.pop_front() {
                self.streams -= old.streams();
            }
            self.dropped += 1;
        }
        self.streams += more;
        self.queue.push_back(event);
    }

    pub fn pop(&mut self) -> Option<StreamEvent> {
        let e = self.queue.pop_front()?;
        self.streams -= e.streams();
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_drops_the_oldest_and_counts_it() {
        let mut q = StreamEvents::default();
        for n in 0..=STREAM_EVENT_QUEUE as u16 {
            q.push(StreamEvent::Added {
                outgoing: n,
                incoming: 0,
            });
        }
        assert_eq!(q.dropped, 1);
        assert_eq!(
            q.pop(),
            Some(StreamEvent::Added {
                outgoing: 1,
                incoming: 0
            })
        );
    }

    #[test]
    fn the_queue_holds_at_most_65536_stream_numbers() {
        let mut q = StreamEvents::default();
        let all = |n: u16| StreamEvent::Reset {
            direction: brisk_proto::ResetDirection::Incoming,
            streams: (0..n).collect(),
        };
        q.push(all(40_000));
        q.push(all(20_000));
        assert_eq!((q.dropped, q.streams), (0, 60_000));
        q.push(all(10_000));
        assert_eq!((q.dropped, q.streams), (1, 30_000));
        assert_eq!(q.pop(), Some(all(20_000)));
        assert_eq!(q.streams, 10_000);
    }
}
