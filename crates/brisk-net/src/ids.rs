//! Names of the hosts a network joins: a leaf, used by the links' traces, the
//! simulator and the emulator alike.

/// A host: numbered from 0 in the order it was added to its network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HostId(usize);

impl HostId {
    pub const fn new(index: usize) -> Self {
        Self(index)
    }

    /// Hosts are numbered from 0 in the order they were added.
    pub const fn index(self) -> usize {
        self.0
    }
}
