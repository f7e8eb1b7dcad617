//! The send side's data: the send buffer (bytes written and not yet
//! acknowledged, bounded by `send_buffer`) and the rule for how long the next
//! new segment may be (segmentation at the MSS, sender silly window
//! avoidance and Nagle's algorithm).

use std::collections::VecDeque;

/// Bytes the application wrote and the peer has not acknowledged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SendBuffer {
    data: VecDeque<u8>,
    /// Sequence offset of `data[0]` (1: the byte after the SYN).
    start: u64,
    capacity: usize,
}

impl SendBuffer {
    /// An empty buffer for `capacity` bytes, starting after the SYN.
    pub fn new(capacity: usize) -> Self {
        Self {
            data: VecDeque::new(),
            start: 1,
            capacity,
        }
    }

    /// Queues as much of `bytes` as fits; returns how many.
    pub fn write(&mut self, bytes: &[u8]) -> usize {
        let n = bytes
            .len()
            .min(self.capacity.saturating_sub(self.data.len()));
        self.data.extend(bytes.iter().take(n));
        n
    }

    /// Bytes held (written and not acknowledged).
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Nothing held.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Sequence offset one past the last byte written.
    pub fn end(&self) -> u64 {
        self.start + self.data.len() as u64
    }

    /// Drops the bytes below `una` (acknowledged).
    pub fn release_to(&mut self, una: u64) {
        if una > self.start {
            let n = usize::try_from(una - self.start)
                .unwrap_or(usize::MAX)
                .min(self.data.len());
            self.data.drain(..n);
            self.start += n as u64;
        }
    }

    /// Appends to `out` the `len` bytes from offset `from` (as many as are held).
    pub fn copy(&self, from: u64, len: u64, out: &mut Vec<u8>) {
        let skip = usize::try_from(from.saturating_sub(self.start)).unwrap_or(usize::MAX);
        let take = usize::try_from(len).unwrap_or(usize::MAX);
        out.extend(self.data.iter().skip(skip).take(take));
    }
}

/// What the sender knows when it considers a new segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewData {
    /// Bytes written and never sent.
    pub unsent: u64,
    /// The sender MSS.
    pub mss: u64,
    /// What the peer's window leaves: SND.UNA + SND.WND - SND.NXT.
    pub usable_window: u64,
    /// The largest window the peer has offered (RFC 9293's Max(SND.WND)).
    pub max_window: u64,
    /// Nagle's algorithm is on.
    pub nagle: bool,
    /// Data is sent and unacknowledged (SND.NXT > SND.UNA).
    pub unacked: bool,
}

/// The length of the next new segment, or `None` if it should wait.
pub fn next_len(d: &NewData) -> Option<u64> {
    if d.unsent == 0 {
        return None;
    }
    let full = d.unsent.min(d.mss);
    let len = full.min(d.usable_window);
    if len == 0 {
        return None;
    }
    // RFC 9293 3.8.6.2.1 (sender SWS avoidance): send a full segment, all
    // that is queued (every write is pushed), or at least half the largest
    // window the peer has offered.
    if len < full && len < d.max_window / 2 {
        return None;
    }
    // RFC 9293 3.7.4 (Nagle): with data unacknowledged, hold a segment
    // shorter than the MSS.
    if d.nagle && d.unacked && len < d.mss {
        return None;
    }
    Some(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_buffer_is_bounded_and_released_by_acks() {
        let mut b = SendBuffer::new(10);
        assert_eq!(b.write(b"hello"), 5);
        assert_eq!(b.write(b"world!!"), 5);
        assert_eq!((b.len(), b.end()), (10, 11));
        let mut out = Vec::new();
        b.copy(3, 4, &mut out);
        assert_eq!(out, b"llow");
        b.release_to(6);
        assert_eq!((b.len(), b.end()), (5, 11));
        out.clear();
        b.copy(6, 100, &mut out);
        assert_eq!(out, b"world");
        b.release_to(12);
        assert!(b.is_empty());
    }

    #[test]
    fn nagle_holds_small_segments_only_while_data_is_unacknowledged() {
        let d = NewData {
            unsent: 100,
            mss: 1460,
            usable_window: 65_535,
            max_window: 65_535,
            nagle: true,
            unacked: true,
        };
        assert_eq!(next_len(&d), None);
        assert_eq!(
            next_len(&NewData {
                unacked: false,
                ..d
            }),
            Some(100)
        );
        assert_eq!(next_len(&NewData { nagle: false, ..d }), Some(100));
        assert_eq!(next_len(&NewData { unsent: 5000, ..d }), Some(1460));
        // Window-limited: a runt only if at least half the largest window.
        let w = NewData {
            unsent: 5000,
            usable_window: 1000,
            max_window: 4000,
            nagle: false,
            ..d
        };
        assert_eq!(next_len(&w), None);
        assert_eq!(
            next_len(&NewData {
                max_window: 2000,
                ..w
            }),
            Some(1000)
        );
        assert_eq!(
            next_len(&NewData {
                usable_window: 0,
                ..w
            }),
            None
        );
    }
}
