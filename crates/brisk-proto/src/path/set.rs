//! The paths of one association: the one owner of which destination is
//! primary, where new data goes, and where replies go (RFC 9260 6.4, 6.4.1,
//! 8.2; RFC 7829 3.2 and 4).

use std::net::SocketAddr;

use super::{Path, PathId, PathState};

/// Destinations an association keeps at most: its first one and what the
/// peer lists in INIT or INIT ACK (further addresses are ignored), which
/// bounds what a peer's address list makes us keep and probe.
pub const MAX_PATHS: usize = 8;

/// The destination transport addresses of the peer.
#[derive(Debug, Clone)]
pub struct Paths {
    paths: Vec<Path>,
    /// The destination the application prefers (RFC 9260 6.4).
    primary: PathId,
    /// Where new data goes now: the primary, or an alternate while the
    /// primary cannot take it (6.4.1; RFC 7829 3.2 rule 3).
    data: PathId,
    /// Where the last DATA came from: SACKs go back there (6.4).
    reply: PathId,
}

impl Paths {
    /// The paths of a new association: its first destination, primary.
    pub fn new(first: Path) -> Self {
        Self {
            paths: vec![first],
            primary: PathId::FIRST,
            data: PathId::FIRST,
            reply: PathId::FIRST,
        }
    }

    pub fn len(&self) -> usize {
        self.paths.len()
    }

    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// Whether the peer is multi-homed (more than one destination).
    pub fn multi_homed(&self) -> bool {
        self.paths.len() > 1
    }

    pub fn iter(&self) -> impl Iterator<Item = (PathId, &Path)> + '_ {
        self.paths
            .iter()
            .enumerate()
            .map(|(i, p)| (PathId::from_index(i), p))
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (PathId, &mut Path)> + '_ {
        self.paths
            .iter_mut()
            .enumerate()
            .map(|(i, p)| (PathId::from_index(i), p))
    }

    /// The path `id`: the first path for an id out of range (ids come from
    /// this set, so that does not happen).
    pub fn get(&self, id: PathId) -> &Path {
        &self.paths[self.slot(id)]
    }

    pub fn get_mut(&mut self, id: PathId) -> &mut Path {
        let i = self.slot(id);
        &mut self.paths[i]
    }

    /// Where `id` is held: its index, or the first path's if out of range.
    fn slot(&self, id: PathId) -> usize {
        if id.index() < self.paths.len() {
            id.index()
        } else {
            0
        }
    }

    /// The path of a transport address (an IPv4 address and its
    /// IPv4-mapped IPv6 form being the same).
    pub fn find(&self, addr: SocketAddr) -> Option<PathId> {
        self.paths
            .iter()
            .position(|p| same_address(p.remote, addr))
            .map(PathId::from_index)
    }

    /// Adds a destination the peer listed, unless it is known already or the
    /// set is full. Returns its id when added.
    pub fn add(&mut self, path: Path) -> Option<PathId> {
        if self.paths.len() >= MAX_PATHS || self.find(path.remote).is_some() {
            return None;
        }
        self.paths.push(path);
        Some(PathId::from_index(self.paths.len() - 1))
    }

    /// Replaces every path's congestion state after the handshake, keeping
    /// the paths themselves (their addresses and confirmation).
    pub fn reset_each(&mut self, mut f: impl FnMut(&Path) -> Path) {
        for p in &mut self.paths {
            *p = f(p);
        }
    }

    pub fn primary(&self) -> PathId {
        self.primary
    }

    pub fn set_primary(&mut self, id: PathId) {
        if id.index() < self.paths.len() {
            self.primary = id;
        }
    }

    /// Where new data goes.
    pub fn data_id(&self) -> PathId {
        self.data
    }

    pub fn data(&self) -> &Path {
        self.get(self.data)
    }

    pub fn data_mut(&mut self) -> &mut Path {
        let id = self.data;
        self.get_mut(id)
    }

    /// Makes `id` the data path; returns the one it replaces if it changed.
    pub fn set_data(&mut self, id: PathId) -> Option<PathId> {
        (id != self.data && id.index() < self.paths.len())
            .then(|| std::mem::replace(&mut self.data, id))
    }

    /// Where SACKs go: the source of the last DATA received (6.4).
    pub fn reply_id(&self) -> PathId {
        self.reply
    }

    pub fn set_reply(&mut self, id: PathId) {
        if id.index() < self.paths.len() {
            self.reply = id;
        }
    }

    /// Where new data should go now (RFC 9260 6.4, 6.4.1, 8.2; RFC 7829
    /// 3.2 rule 3, 4): the primary when it is usable; else the data path
    /// if it still is (one alternate at a time, 8.2), else the first usable
    /// alternate; with none usable, the confirmed Potentially Failed path
    /// with the fewest errors, the current data path winning a tie (RFC 7829
    /// 3.2 rule 3); and with none of those, the data path stays (RFC 7829 4:
    /// dormant, data keeps going to the most recently used destination).
    pub fn choose_data(&self) -> PathId {
        if self.get(self.primary).usable() {
            return self.primary;
        }
        if self.data().usable() {
            return self.data;
        }
        if let Some((id, _)) = self.iter().find(|(_, p)| p.usable()) {
            return id;
        }
        self.iter()
            .filter(|(_, p)| p.confirmed && p.state == PathState::PotentiallyFailed)
            .min_by_key(|(id, p)| (p.errors, *id != self.data, *id))
            .map_or(self.data, |(id, _)| id)
    }

    /// 6.4: a chunk that timed out on `last` goes to another usable
    /// destination when there is one: the data path if it differs, else the
    /// next usable path after `last` (the "most divergent" choice is ours to
    /// make, 6.4.1); otherwise to `last` again.
    pub fn retransmit_to(&self, last: PathId) -> PathId {
        if self.data != last && self.data().usable() {
            return self.data;
        }
        let n = self.paths.len();
        (1..n)
            .map(|k| PathId::from_index((last.index() + k) % n))
            .find(|id| self.get(*id).usable())
            .unwrap_or(last)
    }
}

/// Two transport addresses are the same destination: same port, and the
/// same IP address once IPv4-mapped IPv6 is taken as IPv4.
pub fn same_address(a: SocketAddr, b: SocketAddr) -> bool {
    a.port() == b.port() && a.ip().to_canonical() == b.ip().to_canonical()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn path(addr: &str) -> Path {
        Path::new(addr.parse().unwrap(), &Config::rfc9260(), 100_000)
    }

    fn two() -> Paths {
        let mut ps = Paths::new(path("10.0.0.2:9899"));
        ps.add(path("10.1.0.2:9899"));
        ps
    }

    #[test]
    fn the_primary_takes_data_while_usable() {
        let ps = two();
        assert_eq!(ps.choose_data(), PathId(0));
    }

    #[test]
    fn an_inactive_or_pf_primary_hands_data_to_a_usable_alternate() {
        for state in [PathState::Inactive, PathState::PotentiallyFailed] {
            let mut ps = two();
            ps.get_mut(PathId(0)).state = state;
            assert_eq!(ps.choose_data(), PathId(1), "{state:?}");
        }
    }

    #[test]
    fn an_unconfirmed_alternate_never_takes_data() {
        let mut ps = Paths::new(path("10.0.0.2:9899"));
        ps.add(Path::unconfirmed(
            "10.1.0.2:9899".parse().unwrap(),
            &Config::rfc9260(),
            100_000,
        ));
        ps.get_mut(PathId(0)).state = PathState::Inactive;
        assert_eq!(ps.choose_data(), PathId(0), "dormant: stays");
        assert_eq!(ps.retransmit_to(PathId(0)), PathId(0));
    }

    #[test]
    fn with_every_path_pf_the_one_with_fewest_errors_takes_data() {
        // RFC 7829 3.2 rule 3.
        let mut ps = two();
        for (id, errors) in [(0, 3), (1, 1)] {
            let p = ps.get_mut(PathId(id));
            p.state = PathState::PotentiallyFailed;
            p.errors = errors;
        }
        assert_eq!(ps.choose_data(), PathId(1));
        ps.get_mut(PathId(0)).errors = 1;
        assert_eq!(ps.choose_data(), PathId(0), "a tie keeps the data path");
    }

    #[test]
    fn a_timed_out_chunk_goes_to_another_usable_path() {
        let ps = two();
        assert_eq!(ps.retransmit_to(PathId(0)), PathId(1));
        assert_eq!(ps.retransmit_to(PathId(1)), PathId(0));
    }

    #[test]
    fn listed_addresses_are_bounded_and_deduplicated() {
        let mut ps = Paths::new(path("10.0.0.2:9899"));
        assert_eq!(ps.add(path("10.0.0.2:9899")), None);
        // The IPv4-mapped form of a known address is the same destination.
        assert_eq!(ps.add(path("[::ffff:10.0.0.2]:9899")), None);
        for i in 1..20 {
            ps.add(path(&format!("10.0.{i}.2:9899")));
        }
        assert_eq!(ps.len(), MAX_PATHS);
    }
}
