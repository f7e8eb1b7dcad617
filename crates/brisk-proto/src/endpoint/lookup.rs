//! The endpoint's association tables (RFC 9260 8.4, RFC 6951 5.4): by the
//! peer's transport address and SCTP port, and by our verification tag, each
//! an O(1) hash lookup, so a packet from nowhere costs the same with one
//! association as with a hundred thousand.
//!
//! The hash is SipHash-1-3 keyed from the endpoint's seeded RNG: an attacker
//! who picks source ports and tags cannot aim collisions at it, and a seeded
//! run stays reproducible.
//!
//! Which addresses name an association (RFC 9260 5.4, 11.2.4.1): a peer's
//! INIT or INIT ACK may list addresses it does not own. Only confirmed
//! addresses enter the peer table: the one the association was set up with
//! (5.4 rules 1 and 2), those the application gave to `connect`, and a
//! listed one once a HEARTBEAT ACK carrying our nonce came back from it.
//! An unconfirmed address reaches its association only by the association's
//! own verification tag (a HEARTBEAT ACK); an INIT or COOKIE ECHO from it is
//! out of the blue and may start a new association, answered at its source
//! (5.1 B), so a peer listing someone else's address can neither take that
//! address's packets nor have the owner's handshake restart its association.
//! An address that already names an association keeps it: another
//! association's confirmation never takes the entry over (`add_peer`).

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::net::SocketAddr;

use siphasher::sip::SipHasher13;

use crate::assoc::AssocId;

/// Builds keyed SipHash-1-3 hashers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeyedHash {
    k0: u64,
    k1: u64,
}

impl BuildHasher for KeyedHash {
    type Hasher = SipHasher13;

    fn build_hasher(&self) -> SipHasher13 {
        SipHasher13::new_with_keys(self.k0, self.k1)
    }
}

/// The peer's transport address and SCTP port.
pub(crate) type PeerKey = (SocketAddr, u16);

/// Which association a packet belongs to.
#[derive(Debug)]
pub(crate) struct Lookup {
    by_peer: HashMap<PeerKey, AssocId, KeyedHash>,
    by_tag: HashMap<u32, AssocId, KeyedHash>,
}

impl Lookup {
    pub fn new(k0: u64, k1: u64) -> Self {
        let keys = KeyedHash { k0, k1 };
        Self {
            by_peer: HashMap::with_hasher(keys),
            by_tag: HashMap::with_hasher(KeyedHash {
                k0: k1.rotate_left(17) ^ k0,
                k1: k0.rotate_left(29) ^ k1,
            }),
        }
    }

    /// The association with this peer.
    pub fn by_peer(&self, key: &PeerKey) -> Option<AssocId> {
        self.by_peer.get(key).copied()
    }

    /// The association whose own verification tag is `tag`.
    pub fn by_tag(&self, tag: u32) -> Option<AssocId> {
        self.by_tag.get(&tag).copied()
    }

    /// Whether a tag is already one of ours (a new one must differ).
    pub fn tag_in_use(&self, tag: u32) -> bool {
        self.by_tag.contains_key(&tag)
    }

    pub fn insert(&mut self, id: AssocId, peer: PeerKey, tag: u32) {
        self.by_peer.insert(peer, id);
        self.by_tag.insert(tag, id);
    }

    /// The peer of `id` moved from `old` to `new` (RFC 6951 5.4).
    pub fn move_peer(&mut self, id: AssocId, old: PeerKey, new: PeerKey) {
        if self.by_peer.get(&old) == Some(&id) {
            self.by_peer.remove(&old);
        }
        self.by_peer.insert(new, id);
    }

    /// The association's own tag changed (a restart, RFC 9260 5.2.4 A).
    pub fn retag(&mut self, id: AssocId, old: u32, new: u32) {
        if old == new {
            return;
        }
        if self.by_tag.get(&old) == Some(&id) {
            self.by_tag.remove(&old);
        }
        self.by_tag.insert(new, id);
    }

    /// Another confirmed address of the peer of `id` (RFC 9260 5.1.2, 5.4),
    /// unless the address already names an association: a peer's address
    /// list never takes another association's packets.
    pub fn add_peer(&mut self, id: AssocId, peer: PeerKey) {
        self.by_peer.entry(peer).or_insert(id);
    }

    /// Forgets one address of the peer of `id`.
    pub fn remove_peer(&mut self, id: AssocId, peer: PeerKey) {
        if self.by_peer.get(&peer) == Some(&id) {
            self.by_peer.remove(&peer);
        }
    }

    /// Forgets the tag of `id`.
    pub fn remove_tag(&mut self, id: AssocId, tag: u32) {
        if self.by_tag.get(&tag) == Some(&id) {
            self.by_tag.remove(&tag);
        }
    }

    pub fn contains_peer(&self, key: &PeerKey) -> bool {
        self.by_peer.contains_key(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_by_peer_and_by_tag_and_forgets_both() {
        let mut l = Lookup::new(1, 2);
        let peer: PeerKey = ("127.0.0.1:9899".parse().unwrap(), 5000);
        l.insert(AssocId(7), peer, 0xabcd);
        assert_eq!(l.by_peer(&peer), Some(AssocId(7)));
        assert_eq!(l.by_tag(0xabcd), Some(AssocId(7)));
        let moved: PeerKey = ("127.0.0.1:9900".parse().unwrap(), 5000);
        l.move_peer(AssocId(7), peer, moved);
        assert_eq!(l.by_peer(&peer), None);
        assert_eq!(l.by_peer(&moved), Some(AssocId(7)));
        l.retag(AssocId(7), 0xabcd, 0x1234);
        assert!(!l.tag_in_use(0xabcd));
        assert_eq!(l.by_tag(0x1234), Some(AssocId(7)));
        l.remove_peer(AssocId(7), moved);
        l.remove_tag(AssocId(7), 0x1234);
        assert_eq!(l.by_peer(&moved), None);
        assert_eq!(l.by_tag(0x1234), None);
    }

    #[test]
    fn a_removal_never_forgets_another_associations_entry() {
        let mut l = Lookup::new(1, 2);
        let peer: PeerKey = ("127.0.0.1:1".parse().unwrap(), 1);
        l.insert(AssocId(1), peer, 10);
        l.insert(AssocId(2), peer, 20);
        l.remove_peer(AssocId(1), peer);
        l.remove_tag(AssocId(1), 10);
        assert_eq!(l.by_peer(&peer), Some(AssocId(2)));
        assert_eq!(l.by_tag(20), Some(AssocId(2)));
    }

    #[test]
    fn a_listed_address_never_takes_another_associations_entry() {
        let mut l = Lookup::new(1, 2);
        let a: PeerKey = ("10.0.0.1:9899".parse().unwrap(), 1);
        let b: PeerKey = ("10.1.0.1:9899".parse().unwrap(), 1);
        l.insert(AssocId(1), a, 10);
        l.insert(AssocId(2), b, 20);
        // Association 2's peer lists association 1's peer address.
        l.add_peer(AssocId(2), a);
        assert_eq!(l.by_peer(&a), Some(AssocId(1)));
        l.remove_peer(AssocId(2), a);
        assert_eq!(l.by_peer(&a), Some(AssocId(1)));
        let c: PeerKey = ("10.2.0.1:9899".parse().unwrap(), 1);
        l.add_peer(AssocId(2), c);
        assert_eq!(l.by_peer(&c), Some(AssocId(2)));
        l.remove_peer(AssocId(2), c);
        assert_eq!(l.by_peer(&c), None);
    }
}
