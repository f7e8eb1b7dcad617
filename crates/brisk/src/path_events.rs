//! Path events of a multi-homed association (RFC 9260 8.2; RFC 7829) for
//! the application, and the bounded queue that holds them until it reads
//! them.

use std::collections::VecDeque;
use std::net::SocketAddr;

use brisk_proto::{Event, FailoverCause, PathState, Time};

/// Path events an association keeps for the application at most. When the
/// application does not read them, the oldest is dropped and counted
/// ([`Association::path_events_dropped`](crate::Association::path_events_dropped)).
pub const PATH_EVENT_QUEUE: usize = 1024;

/// What happened to the peer's destinations, read with
/// [`Association::path_event`](crate::Association::path_event).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathEvent {
    /// A destination became active, potentially failed or inactive, or was
    /// confirmed by a heartbeat.
    State {
        remote: SocketAddr,
        state: PathState,
        confirmed: bool,
        at: Time,
    },
    /// New data goes to another destination: a failover, or a switchback
    /// to the primary, with its cause.
    DataPath {
        from: SocketAddr,
        to: SocketAddr,
        cause: FailoverCause,
        at: Time,
    },
}

impl PathEvent {
    /// The application's view of a protocol event, if it is one of these.
    pub(crate) fn from_event(event: &Event) -> Option<Self> {
        Some(match *event {
            Event::PathStateChanged {
                remote,
                state,
                confirmed,
                at,
            } => PathEvent::State {
                remote,
                state,
                confirmed,
                at,
            },
            Event::DataPathChanged {
                from,
                to,
                cause,
                at,
            } => PathEvent::DataPath {
                from,
                to,
                cause,
                at,
            },
            _ => return None,
        })
    }
}

/// The path events not yet read, oldest first, at most [`PATH_EVENT_QUEUE`].
#[derive(Debug, Default)]
pub(crate) struct PathEvents {
    queue: VecDeque<PathEvent>,
    pub dropped: u64,
}

impl PathEvents {
    pub fn push(&mut self, event: PathEvent) {
        if self.queue.len() >= PATH_EVENT_QUEUE {
            self.queue.pop_front();
            self.dropped += 1;
        }
        self.queue.push_back(event);
    }

    pub fn pop(&mut self) -> Option<PathEvent> {
        self.queue.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_drops_the_oldest_and_counts_it() {
        let mut q = PathEvents::default();
        let remote: SocketAddr = "10.0.0.1:9899".parse().unwrap();
        for i in 0..=PATH_EVENT_QUEUE as u64 {
            q.push(PathEvent::State {
                remote,
                state: PathState::Active,
                confirmed: true,
                at: Time::from_micros(i),
            });
        }
        assert_eq!(q.dropped, 1);
        assert_eq!(
            q.pop(),
            Some(PathEvent::State {
                remote,
                state: PathState::Active,
                confirmed: true,
                at: Time::from_micros(1),
            })
        );
    }
}
