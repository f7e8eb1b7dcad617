//! The fragments held of one unfinished I-DATA message, by Fragment Sequence
//! Number (RFC 8260 2.1), with the unwrapped TSN each came with.
//!
//! Most unfinished messages hold a few fragments, and a peer that opens many
//! messages at once (one first fragment each) makes the per-message cost what
//! bounds its memory: a B-tree's first node is about 500 bytes whatever it
//! holds. So a message keeps its first [`FEW`] fragments in a vector sorted by
//! FSN (48 bytes each), and moves them to a B-tree beyond that, where a peer
//! that sends a long message's fragments in reverse order still costs
//! O(log n) per fragment (`benches/attack_memory.rs` measures both).

use std::collections::BTreeMap;

use bytes::Bytes;

/// Fragments kept in a sorted vector up to this many.
pub(crate) const FEW: usize = 16;

/// A fragment's unwrapped TSN and payload.
pub(crate) type Held = (u64, Bytes);

#[derive(Debug, Clone)]
pub(crate) enum FsnMap {
    /// Sorted by FSN, at most [`FEW`] entries.
    Few(Vec<(u32, Held)>),
    Many(BTreeMap<u32, Held>),
}

impl Default for FsnMap {
    fn default() -> Self {
        FsnMap::Few(Vec::new())
    }
}

impl FsnMap {
    pub fn len(&self) -> usize {
        match self {
            FsnMap::Few(v) => v.len(),
            FsnMap::Many(m) => m.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, fsn: u32) -> Option<&Held> {
        match self {
            FsnMap::Few(v) => v
                .binary_search_by_key(&fsn, |e| e.0)
                .ok()
                .and_then(|i| v.get(i))
                .map(|e| &e.1),
            FsnMap::Many(m) => m.get(&fsn),
        }
    }

    pub fn contains(&self, fsn: u32) -> bool {
        self.get(fsn).is_some()
    }

    /// The highest FSN held.
    pub fn last_fsn(&self) -> Option<u32> {
        match self {
            FsnMap::Few(v) => v.last().map(|e| e.0),
            FsnMap::Many(m) => m.keys().next_back().copied(),
        }
    }

    /// How many fragments are held below FSN `fsn`.
    pub fn count_below(&self, fsn: u32) -> usize {
        match self {
            FsnMap::Few(v) => v.partition_point(|e| e.0 < fsn),
            FsnMap::Many(m) => m.range(..fsn).count(),
        }
    }

    /// Holds `held` as fragment `fsn`, replacing any fragment with that FSN.
    pub fn insert(&mut self, fsn: u32, held: Held) {
        match self {
            FsnMap::Few(v) => match v.binary_search_by_key(&fsn, |e| e.0) {
                Ok(i) => {
                    if let Some(e) = v.get_mut(i) {
                        e.1 = held;
                    }
                }
                Err(i) if v.len() < FEW => v.insert(i, (fsn, held)),
                Err(_) => {
                    let mut m: BTreeMap<u32, Held> = std::mem::take(v).into_iter().collect();
                    m.insert(fsn, held);
                    *self = FsnMap::Many(m);
                }
            },
            FsnMap::Many(m) => {
                m.insert(fsn, held);
            }
        }
    }

    pub fn remove(&mut self, fsn: u32) -> Option<Held> {
        match self {
            FsnMap::Few(v) => v
                .binary_search_by_key(&fsn, |e| e.0)
                .ok()
                .map(|i| v.remove(i).1),
            FsnMap::Many(m) => m.remove(&fsn),
        }
    }

    /// The fragments in FSN order.
    pub fn values(&self) -> impl Iterator<Item = &Held> {
        let (few, many) = match self {
            FsnMap::Few(v) => (Some(v.iter().map(|e| &e.1)), None),
            FsnMap::Many(m) => (None, Some(m.values())),
        };
        few.into_iter().flatten().chain(many.into_iter().flatten())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Whatever the order of inserts and removes, it holds what a B-tree
        /// would, in the same order.
        #[test]
        fn behaves_as_a_btree_map(ops in proptest::collection::vec((any::<bool>(), 0u32..40), 0..200)) {
            let mut ours = FsnMap::default();
            let mut model = BTreeMap::new();
            for (i, (insert, fsn)) in ops.into_iter().enumerate() {
                let held = (i as u64, Bytes::from(vec![i as u8]));
                if insert {
                    ours.insert(fsn, held.clone());
                    model.insert(fsn, held);
                } else {
                    prop_assert_eq!(ours.remove(fsn), model.remove(&fsn));
                }
                prop_assert_eq!(ours.len(), model.len());
                prop_assert_eq!(ours.last_fsn(), model.keys().next_back().copied());
                prop_assert_eq!(ours.get(fsn), model.get(&fsn));
                prop_assert_eq!(ours.count_below(fsn), model.range(..fsn).count());
                let a: Vec<&Held> = ours.values().collect();
                let b: Vec<&Held> = model.values().collect();
                prop_assert_eq!(a, b);
            }
        }
    }

    #[test]
    fn a_message_of_few_fragments_stays_in_a_vector_and_many_move_to_a_tree() {
        let mut m = FsnMap::default();
        for fsn in (0..FEW as u32).rev() {
            m.insert(fsn, (u64::from(fsn), Bytes::new()));
        }
        assert!(matches!(m, FsnMap::Few(_)));
        m.insert(FEW as u32, (0, Bytes::new()));
        assert!(matches!(m, FsnMap::Many(_)));
        assert_eq!(m.len(), FEW + 1);
    }
}
