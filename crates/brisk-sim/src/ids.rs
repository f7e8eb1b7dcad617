//! The simulator's names for nodes and link directions: a leaf module, so
//! hosts, routing and topology helpers name them without depending on the
//! simulator core.

/// A node: a host or a router.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub(crate) usize);

/// One direction of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(pub(crate) usize);

impl NodeId {
    /// Nodes are numbered from 0 in the order they were added.
    pub fn index(self) -> usize {
        self.0
    }
}

impl LinkId {
    /// Link directions are numbered from 0 in the order they were created.
    pub fn index(self) -> usize {
        self.0
    }

    /// The link direction numbered `index` (for records built by hand).
    pub const fn new(index: usize) -> Self {
        LinkId(index)
    }
}
