//! The receive side: reassembly into the receive buffer, the window we
//! advertise, the SACK blocks we report and when we acknowledge.
//!
//! Everything held, read or not, in order or not, lies below RCV.NXT plus the
//! free space of `receive_window`: a segment beyond is trimmed or dropped,
//! so the receiver never holds more than `receive_window` bytes, in at most
//! `max_ooo_ranges` out-of-order ranges.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use brisk_proto::timer::Timer;

use crate::Time;
use crate::seq;
use crate::wire::SackBlocks;

/// What one segment's data did to the receiver.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Accepted {
    /// New bytes now in order (readable), from this segment or the
    /// out-of-order ranges it joined.
    pub in_order: u64,
    /// New bytes that arrived, counted once.
    pub new_bytes: u64,
    /// The segment landed above RCV.NXT.
    pub out_of_order: bool,
    /// The segment filled all or part of a gap (out-of-order data was held).
    pub filled_hole: bool,
    /// Nothing new: every byte was already held.
    pub duplicate: bool,
    /// Bytes beyond the window were cut off or the segment lay wholly beyond it.
    pub beyond_window: bool,
    /// Dropped: it would have opened a range beyond `max_ooo_ranges`.
    pub range_limit: bool,
    /// The peer's FIN is now in order.
    pub fin: bool,
}

/// Reassembly, window and acknowledgement state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receiver {
    /// RCV.NXT as an offset from the peer's ISN (0 before its SYN).
    rcv_nxt: u64,
    unread: VecDeque<u8>,
    /// Out-of-order ranges by start offset, disjoint and not adjacent.
    ooo: BTreeMap<u64, Vec<u8>>,
    /// The latest ranges SACKed, most recent first (RFC 2018 4).
    recent: Vec<(u64, u64)>,
    fin_at: Option<u64>,
    fin_received: bool,
    capacity: u64,
    /// The right edge of the window last advertised.
    adv_edge: u64,
    max_ranges: usize,
    /// Send an ACK at the next opportunity.
    pub ack_now: bool,
    /// The delayed-ACK timer.
    pub delack: Timer,
    /// In-order bytes since our last ACK.
    unacked_bytes: u64,
    /// Data segments received (for quick-ack).
    data_segments: u64,
}

impl Receiver {
    /// A receiver with `capacity` bytes of buffer.
    pub fn new(capacity: u32, max_ranges: u32) -> Self {
        Self {
            rcv_nxt: 0,
            unread: VecDeque::new(),
            ooo: BTreeMap::new(),
            recent: Vec::new(),
            fin_at: None,
            fin_received: false,
            capacity: u64::from(capacity),
            adv_edge: u64::from(capacity),
            max_ranges: usize::try_from(max_ranges).unwrap_or(usize::MAX),
            ack_now: false,
            delack: Timer::default(),
            unacked_bytes: 0,
            data_segments: 0,
        }
    }

    /// The peer's SYN arrived: RCV.NXT is the byte after it.
    pub fn on_syn(&mut self) {
        self.rcv_nxt = 1;
        self.adv_edge = 1 + self.capacity;
    }

    /// RCV.NXT as an offset.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// In-order bytes waiting to be read.
    pub fn readable(&self) -> usize {
        self.unread.len()
    }

    /// Bytes held out of order.
    pub fn ooo_bytes(&self) -> usize {
        self.ooo.values().map(Vec::len).sum()
    }

    /// Out-of-order ranges held.
    pub fn ooo_ranges(&self) -> usize {
        self.ooo.len()
    }

    /// The peer's FIN has been received in order.
    pub fn fin_received(&self) -> bool {
        self.fin_received
    }

    /// One past the highest offset we can hold: RCV.NXT + buffer space not
    /// taken by unread bytes. Never moves left.
    fn limit(&self) -> u64 {
        self.rcv_nxt + self.capacity.saturating_sub(self.unread.len() as u64)
    }

    /// The window we are prepared to receive in now (RCV.WND).
    pub fn window_now(&self) -> u64 {
        self.limit() - self.rcv_nxt
    }

    /// RFC 9293 3.10.7.4: whether a segment of `len` sequence units at
    /// offset `seq` is acceptable.
    pub fn acceptable(&self, seq: u64, len: u64) -> bool {
        let (nxt, limit) = (self.rcv_nxt, self.limit());
        let in_window = |s: u64| nxt <= s && s < limit;
        match (len, limit == nxt) {
            (0, true) => seq == nxt,
            (0, false) => in_window(seq),
            (_, true) => false,
            (_, false) => in_window(seq) || in_window(seq + len - 1),
        }
    }

    /// Takes a segment's payload at offset `seq` (and its FIN), already
    /// found acceptable: trims it to the window, appends what is in order,
    /// keeps what is not.
    pub fn accept(&mut self, seq: u64, payload: &[u8], fin: bool) -> Accepted {
        let mut out = Accepted::default();
        let end = seq + payload.len() as u64;
        let limit = self.limit();
        let lo = seq.max(self.rcv_nxt);
        let hi = end.min(limit);
        if end > limit {
            out.beyond_window = true;
        }
        // RFC 9293 3.10.7.4: the FIN counts only if the segment was not trimmed.
        if fin && end <= limit && self.fin_at.is_none() && !self.fin_received {
            self.fin_at = Some(end);
        }
        if lo < hi {
            let from = usize::try_from(lo - seq).unwrap_or(usize::MAX);
            let to = usize::try_from(hi - seq).unwrap_or(usize::MAX);
            let data = payload.get(from..to).unwrap_or(&[]);
            if lo == self.rcv_nxt {
                self.append_in_order(data, &mut out);
            } else {
                self.insert_out_of_order(lo, data, &mut out);
            }
        } else if !payload.is_empty() && end <= self.rcv_nxt {
            out.duplicate = true;
        }
        if self.fin_at == Some(self.rcv_nxt) && !self.fin_received {
            self.rcv_nxt += 1;
            self.fin_received = true;
            out.fin = true;
        }
        out
    }

    fn append_in_order(&mut self, data: &[u8], out: &mut Accepted) {
        out.filled_hole = !self.ooo.is_empty();
        let hi = self.rcv_nxt + data.len() as u64;
        self.unread.extend(data);
        self.rcv_nxt = hi;
        let mut new = data.len() as u64;
        // Pull in the out-of-order ranges that are now contiguous.
        while let Some(entry) = self.ooo.first_entry() {
            let start = *entry.key();
            if start > self.rcv_nxt {
                break;
            }
            let range = entry.remove();
            let end = start + range.len() as u64;
            // Bytes of the range this segment also carried were counted when
            // the range arrived.
            new -= hi.min(end).saturating_sub(start).min(new);
            if end > self.rcv_nxt {
                let skip = usize::try_from(self.rcv_nxt - start).unwrap_or(usize::MAX);
                self.unread.extend(range.iter().skip(skip));
                self.rcv_nxt = end;
            }
        }
        out.in_order = self.rcv_nxt - (hi - data.len() as u64);
        out.new_bytes = new;
        self.unacked_bytes += out.in_order;
        let nxt = self.rcv_nxt;
        self.recent.retain(|&(_, right)| right > nxt);
    }

    fn insert_out_of_order(&mut self, lo: u64, data: &[u8], out: &mut Accepted) {
        out.out_of_order = true;
        let hi = lo + data.len() as u64;
        // The held ranges this one overlaps or touches: disjoint ranges
        // sorted by start are sorted by end too.
        let touching: Vec<u64> = self
            .ooo
            .range(..=hi)
            .rev()
            .take_while(|(start, range)| **start + range.len() as u64 >= lo)
            .map(|(start, _)| *start)
            .collect();
        if touching.is_empty() && self.ooo.len() >= self.max_ranges {
            out.range_limit = true;
            return;
        }
        let mut start = lo;
        let mut end = hi;
        let mut held = Vec::with_capacity(touching.len());
        for k in touching {
            if let Some(range) = self.ooo.remove(&k) {
                start = start.min(k);
                end = end.max(k + range.len() as u64);
                held.push((k, range));
            }
        }
        let mut merged = vec![0u8; usize::try_from(end - start).unwrap_or(0)];
        let mut put = |at: u64, bytes: &[u8]| {
            let from = usize::try_from(at - start).unwrap_or(0);
            if let Some(dst) = merged.get_mut(from..from + bytes.len()) {
                dst.copy_from_slice(bytes);
            }
        };
        put(lo, data);
        let mut old = 0u64;
        for (k, range) in &held {
            put(*k, range);
            old += range.len() as u64;
        }
        out.new_bytes = (end - start) - old;
        out.duplicate = out.new_bytes == 0;
        self.ooo.insert(start, merged);
        // RFC 2018 4: the block holding the latest segment goes first.
        self.recent.retain(|&(l, r)| r < start || l > end);
        self.recent.insert(0, (start, end));
        self.recent.truncate(crate::wire::MAX_SACK_BLOCKS);
    }

    /// Moves up to `max` in-order bytes into `out`; returns how many.
    pub fn read(&mut self, out: &mut Vec<u8>, max: usize) -> usize {
        let n = max.min(self.unread.len());
        out.extend(self.unread.drain(..n));
        n
    }

    /// After a read: RFC 9293 3.8.6.2.2 (receiver SWS avoidance) with
    /// Linux's rule for when the opened window is worth an ACK of its own:
    /// the advertised window was at most half the buffer and would at least
    /// double.
    pub fn after_read(&mut self, mss: u64) {
        let now = self.adv_edge.saturating_sub(self.rcv_nxt);
        let could = self.window_now();
        if now <= self.capacity / 2 && could >= 2 * now && could >= now + self.sws(mss) {
            self.ack_now = true;
        }
    }

    fn sws(&self, mss: u64) -> u64 {
        (self.capacity / 2).min(mss).max(1)
    }

    /// The window to advertise in bytes, moving the right edge only by at
    /// least min(buffer / 2, MSS) (RFC 9293 3.8.6.2.2) and never left.
    pub fn advertise(&mut self, mss: u64) -> u64 {
        let candidate = self.limit();
        if candidate >= self.adv_edge + self.sws(mss) || self.adv_edge < self.rcv_nxt {
            self.adv_edge = self.adv_edge.max(candidate);
        }
        self.adv_edge.saturating_sub(self.rcv_nxt)
    }

    /// The SACK blocks to send (RFC 2018 4): the range holding the latest
    /// segment first, then the others most recent first, then any others
    /// held, at most four, in wire numbers of the peer's space `irs`.
    pub fn sack_blocks(&self, irs: u32) -> SackBlocks {
        let mut blocks = SackBlocks::default();
        let mut used: Vec<u64> = Vec::new();
        let held = |at: u64| {
            self.ooo
                .range(..=at)
                .next_back()
                .filter(|(k, r)| **k + r.len() as u64 > at)
                .map(|(k, r)| (*k, *k + r.len() as u64))
        };
        let candidates = self.recent.iter().filter_map(|(l, _)| held(*l)).chain(
            self.ooo
                .iter()
                .rev()
                .map(|(k, r)| (*k, *k + r.len() as u64)),
        );
        for (l, r) in candidates {
            if blocks.len() == crate::wire::MAX_SACK_BLOCKS {
                break;
            }
            if l > self.rcv_nxt && !used.contains(&l) {
                used.push(l);
                blocks.push(seq::to_wire(irs, l), seq::to_wire(irs, r));
            }
        }
        blocks
    }

    /// Decides when to acknowledge the data just accepted (RFC 5681 4.2):
    /// at once without delayed ACKs, for the first `quickack` segments, for
    /// anything out of order, duplicate or filling a hole, for a FIN, and
    /// once two full-sized segments' worth is unacknowledged; otherwise
    /// within `delay`.
    pub fn schedule_ack(
        &mut self,
        now: Time,
        delay: Option<Duration>,
        quickack: u32,
        mss: u64,
        a: &Accepted,
    ) {
        self.data_segments += 1;
        let immediate = match delay {
            None => true,
            Some(_) if self.data_segments <= u64::from(quickack) => true,
            Some(_) => {
                a.out_of_order
                    || a.filled_hole
                    || a.duplicate
                    || a.beyond_window
                    || a.range_limit
                    || a.fin
                    || self.unacked_bytes >= 2 * mss
            }
        };
        match delay {
            Some(d) if !immediate => self.delack.start_if_stopped(now, d),
            _ => self.ack_now = true,
        }
    }

    /// An ACK is going out: nothing is owed any more.
    pub fn on_ack_sent(&mut self) {
        self.ack_now = false;
        self.delack.stop();
        self.unacked_bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rx() -> Receiver {
        let mut r = Receiver::new(1000, 2);
        r.on_syn();
        r
    }

    #[test]
    fn out_of_order_data_is_held_and_joined_when_the_hole_fills() {
        let mut r = rx();
        let a = r.accept(11, &[2; 10], false);
        assert!(a.out_of_order && a.new_bytes == 10 && a.in_order == 0);
        let a = r.accept(31, &[4; 10], false);
        assert_eq!(a.new_bytes, 10);
        assert_eq!(r.sack_blocks(0).as_slice(), &[(31, 41), (11, 21)]);
        // A third range would exceed max_ooo_ranges = 2.
        assert!(r.accept(51, &[6; 5], false).range_limit);
        // Touching a held range is fine.
        let a = r.accept(21, &[3; 10], false);
        assert_eq!((a.new_bytes, r.ooo_ranges()), (10, 1));
        assert_eq!(r.sack_blocks(0).as_slice(), &[(11, 41)]);
        let a = r.accept(1, &[1; 15], false);
        assert!(a.filled_hole);
        assert_eq!((a.in_order, a.new_bytes), (40, 10));
        assert_eq!(r.rcv_nxt(), 41);
        let mut out = Vec::new();
        assert_eq!(r.read(&mut out, 100), 40);
        assert_eq!(&out[..10], &[1; 10]);
        assert_eq!(&out[30..], &[4; 10]);
        assert!(r.sack_blocks(0).is_empty());
    }

    #[test]
    fn the_window_bounds_what_is_held() {
        let mut r = rx();
        assert_eq!(r.advertise(100), 1000);
        assert!(!r.acceptable(1001, 10));
        assert!(r.acceptable(995, 10));
        let a = r.accept(995, &[9; 10], false);
        assert!(a.beyond_window && a.new_bytes == 6);
        let a = r.accept(1, &[1; 994], false);
        assert_eq!(a.in_order, 1000);
        assert_eq!(r.advertise(100), 0);
        assert!(!r.acceptable(1001, 1) && r.acceptable(1001, 0));
        let mut out = Vec::new();
        r.read(&mut out, 50);
        assert_eq!(
            r.advertise(100),
            0,
            "SWS avoidance: less than min(500, 100) opened"
        );
        r.read(&mut out, 50);
        r.after_read(100);
        assert!(r.ack_now, "the window opened from 0 to 100");
        assert_eq!(r.advertise(100), 100);
    }

    #[test]
    fn a_fin_counts_in_order_only() {
        let mut r = rx();
        assert!(!r.accept(6, &[2; 5], true).fin);
        let a = r.accept(1, &[1; 5], false);
        assert!(a.fin && r.fin_received());
        assert_eq!(r.rcv_nxt(), 12);
    }
}
