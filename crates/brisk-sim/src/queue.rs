//! The event queue: earliest time first, and of equal times the one scheduled
//! first. Events live in a slab; the heap orders small keys only.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use brisk_proto::Time;

#[derive(Debug)]
pub(crate) struct EventQueue<T> {
    /// (time, insertion sequence, slab slot).
    heap: BinaryHeap<Reverse<(Time, u64, u32)>>,
    slots: Vec<Option<T>>,
    free: Vec<u32>,
    seq: u64,
}

impl<T> Default for EventQueue<T> {
    fn default() -> Self {
        Self {
            heap: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            seq: 0,
        }
    }
}

impl<T> EventQueue<T> {
    pub fn push(&mut self, at: Time, item: T) {
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some(item);
                s
            }
            None => {
                self.slots.push(Some(item));
                u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 pending events")
            }
        };
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, slot)));
    }

    /// The earliest event, if it is due at or before `limit`.
    pub fn pop_due(&mut self, limit: Time) -> Option<(Time, T)> {
        let &Reverse((at, _, _)) = self.heap.peek()?;
        if at > limit {
            return None;
        }
        let Reverse((at, _, slot)) = self.heap.pop()?;
        let item = self.slots[slot as usize].take()?;
        self.free.push(slot);
        Some((at, item))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_come_out_by_time_then_by_insertion_order() {
        let mut q = EventQueue::default();
        q.push(Time(5), "b");
        q.push(Time(3), "a");
        q.push(Time(5), "c");
        q.push(Time(9), "d");
        assert_eq!(q.pop_due(Time(5)), Some((Time(3), "a")));
        q.push(Time(5), "e");
        let rest: Vec<_> = std::iter::from_fn(|| q.pop_due(Time(5))).collect();
        assert_eq!(rest, [(Time(5), "b"), (Time(5), "c"), (Time(5), "e")]);
        assert_eq!(q.len(), 1);
        assert_eq!(q.pop_due(Time(100)), Some((Time(9), "d")));
        assert!(q.is_empty());
    }
}
