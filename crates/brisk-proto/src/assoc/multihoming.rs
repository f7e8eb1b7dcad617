//! Multi-homing (RFC 9260 5.1.2, 5.4, 6.4, 8.2) and quick failover (RFC
//! 7829): the peer's listed addresses become destinations, each with its
//! error counter and state; a destination's timeouts make it potentially
//! failed or inactive, an answer makes it active again, and new data follows
//! to the destination `Paths::choose_data` picks, each move reported with
//! its cause.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use super::{Association, heartbeat};
use crate::cc::CongestionController;
use crate::events::Event;
use crate::path::{Path, PathId, PathState};
use crate::recovery::failover::{self, FailoverCause, Thresholds};
use crate::time::Time;

/// One destination of the peer, as the application sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathInfo {
    pub remote: SocketAddr,
    pub state: PathState,
    /// A heartbeat confirmed the address (RFC 9260 5.4); data goes only to
    /// confirmed destinations.
    pub confirmed: bool,
    /// The application's preferred destination (6.4).
    pub primary: bool,
    /// Where new data goes now.
    pub data: bool,
    /// Consecutive timeouts (8.2).
    pub errors: u32,
    pub rto: Duration,
    pub srtt: Option<Duration>,
    pub cwnd: u32,
    /// Bytes of DATA in flight to this destination.
    pub flight_size: u32,
    pub mtu: usize,
}

/// Why a destination could not be made primary.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("{0} is not an address of the peer")]
    UnknownAddress(SocketAddr),
}

impl Association {
    /// Every destination of the peer, the first one first.
    pub fn paths(&self) -> Vec<PathInfo> {
        self.paths
            .iter()
            .map(|(id, p)| PathInfo {
                remote: p.remote,
                state: p.state,
                confirmed: p.confirmed,
                primary: id == self.paths.primary(),
                data: id == self.paths.data_id(),
                errors: p.errors,
                rto: p.rto.rto(),
                srtt: p.rto.srtt(),
                cwnd: p.cc.cwnd(),
                flight_size: self.rtx.outstanding().flight_on(id),
                mtu: p.mtu,
            })
            .collect()
    }

    /// The destination new data goes to now.
    pub fn data_path(&self) -> SocketAddr {
        self.paths.data().remote
    }

    /// Makes `remote` the primary destination (RFC 9260 6.4, SET PRIMARY):
    /// new data goes there as soon as it is confirmed and active.
    pub fn set_primary(&mut self, now: Time, remote: SocketAddr) -> Result<(), PathError> {
        let id = self
            .paths
            .find(remote)
            .ok_or(PathError::UnknownAddress(remote))?;
        self.paths.set_primary(id);
        self.reselect_data_path(now, Some(FailoverCause::PrimarySet));
        Ok(())
    }

    /// RFC 9260 5.1.2: the addresses the peer listed in INIT or INIT ACK
    /// become destinations, at the UDP port its packets come from (RFC 6951
    /// 5.4), unconfirmed until a heartbeat comes back (5.4). Addresses of
    /// another family or scope than the first destination's (a loopback
    /// association takes only loopback addresses, and only it takes them),
    /// unspecified, multicast or broadcast ones are ignored; so is all
    /// beyond `MAX_PATHS`.
    pub(super) fn add_peer_addresses(&mut self, now: Time, ips: &[IpAddr]) {
        let first = self.paths.get(PathId::FIRST).remote;
        let rwnd = self.rtx.peer_rwnd().max(1);
        for ip in ips {
            let ip = ip.to_canonical();
            if !usable_peer_address(ip, first.ip().to_canonical()) {
                continue;
            }
            let path = Path::unconfirmed(SocketAddr::new(ip, first.port()), &self.cfg, rwnd);
            // Not in the endpoint's lookup until confirmed (5.4).
            if let Some(id) = self.paths.add(path) {
                heartbeat::on_path_added(self, now, id);
            }
        }
    }

    /// Whether `ip`, listed by the peer, would be a destination but is not
    /// one (RFC 9260 5.2.2): a restart must not change the peer's addresses.
    /// Addresses we would ignore (another family or scope) are not new.
    pub(super) fn is_new_peer_address(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        let first = self.paths.get(PathId::FIRST).remote.ip().to_canonical();
        usable_peer_address(ip, first)
            && !self
                .paths
                .iter()
                .any(|(_, p)| p.remote.ip().to_canonical() == ip)
    }

    /// The addresses the application gave to `connect` besides the first
    /// (5.1): destinations confirmed from the start (5.4 rule 1), which an
    /// unanswered INIT turns to in turn.
    pub(crate) fn add_given_addresses(&mut self, remotes: &[SocketAddr]) {
        let rwnd = self.cfg.receive_buffer;
        for &remote in remotes {
            if let Some(id) = self.paths.add(Path::new(remote, &self.cfg, rwnd)) {
                self.new_remotes.push(self.paths.get(id).remote);
            }
        }
    }

    /// A destination timed out (a T3 expiry or an unanswered heartbeat):
    /// its error counter grows (8.2), and past the thresholds it becomes
    /// potentially failed (RFC 7829 3.2) or inactive (8.2); data moves if it
    /// must. Single-homed, the association's counter alone decides (8.1).
    pub(super) fn on_path_timeout(&mut self, now: Time, id: PathId) {
        if !self.paths.multi_homed() {
            return;
        }
        let mut thresholds = Thresholds::of(&self.cfg);
        let path = self.paths.get_mut(id);
        if !path.confirmed {
            // Potentially failed is a state of a destination data may use:
            // an unconfirmed one goes from probing to inactive (5.4).
            thresholds.pfmr = None;
        }
        if path.state == PathState::Inactive {
            // 8.3: probes go on, the counter stops.
            return;
        }
        path.errors = path.errors.saturating_add(1);
        let errors = path.errors;
        let state = failover::state_after_timeouts(errors, thresholds);
        if state != path.state {
            path.state = state;
            match state {
                PathState::Inactive => self.counters.paths_failed += 1,
                PathState::PotentiallyFailed => self.counters.paths_potentially_failed += 1,
                PathState::Active => {}
            }
            self.report_path(now, id);
            heartbeat::on_path_failing(self, now, id);
        }
        self.reselect_data_path(now, None);
        // RFC 7829 5: past PSMR the primary is replaced for good.
        if id == self.paths.primary()
            && self.paths.data_id() != id
            && failover::switches_primary(errors, self.cfg.primary_switchover)
        {
            self.paths.set_primary(self.paths.data_id());
        }
    }

    /// A destination answered: DATA sent to it was acknowledged, or a
    /// HEARTBEAT ACK came back from it (`confirm`: which also confirms it,
    /// 5.4). Its errors clear and it is active again (8.2, 8.3; RFC 7829
    /// 3.2 rule 6); data moves back if it should.
    pub(super) fn on_path_reachable(&mut self, now: Time, id: PathId, confirm: bool) {
        let path = self.paths.get_mut(id);
        path.errors = 0;
        let confirmed_now = confirm && !path.confirmed;
        let changed = path.state != PathState::Active || confirmed_now;
        if path.state != PathState::Active {
            self.counters.paths_recovered += 1;
        }
        path.state = PathState::Active;
        path.confirmed |= confirm;
        if confirmed_now {
            // 5.4: packets from it now find the association.
            let remote = path.remote;
            self.new_remotes.push(remote);
        }
        if changed && self.paths.multi_homed() {
            self.report_path(now, id);
        }
        self.reselect_data_path(now, None);
    }

    /// Chunks last sent to the destinations in `mask` (a bit each) were
    /// acknowledged: each of them answered (8.2).
    pub(super) fn on_paths_acked(&mut self, now: Time, mask: u32) {
        // On every SACK: no allocation, and nothing to do for a destination
        // that is active without errors.
        for i in (0..self.paths.len()).filter(|i| mask & (1 << i) != 0) {
            let id = PathId::from_index(i);
            let p = self.paths.get(id);
            if p.errors > 0 || p.state != PathState::Active {
                self.on_path_reachable(now, id, false);
            }
        }
    }

    /// Moves new data to the destination it should go to now, reporting
    /// the move and its cause (`forced` when the application caused it).
    pub(super) fn reselect_data_path(&mut self, now: Time, forced: Option<FailoverCause>) {
        let old = self.paths.data_id();
        let new = self.paths.choose_data();
        if new == old {
            return;
        }
        let cause = forced.unwrap_or_else(|| {
            if new == self.paths.primary() {
                FailoverCause::PrimaryRecovered
            } else {
                match self.paths.get(old).state {
                    PathState::PotentiallyFailed => FailoverCause::PotentiallyFailed,
                    PathState::Inactive => FailoverCause::PathFailed,
                    PathState::Active => FailoverCause::PathRecovered,
                }
            }
        });
        self.paths.set_data(new);
        self.counters.data_path_changes[cause.index()] += 1;
        let (from, to) = (self.paths.get(old).remote, self.paths.get(new).remote);
        self.emit(Event::DataPathChanged {
            from,
            to,
            cause,
            at: now,
        });
    }

    fn report_path(&mut self, now: Time, id: PathId) {
        let p = self.paths.get(id);
        let event = Event::PathStateChanged {
            remote: p.remote,
            state: p.state,
            confirmed: p.confirmed,
            at: now,
        };
        self.emit(event);
    }
}

/// Whether a listed address may become a destination (RFC 9260 5.1.2): of
/// the first destination's family, unicast, and of its scope, as kernels
/// scope addresses: loopback addresses only over loopback, and a loopback
/// association takes no other (a peer on loopback lists its interfaces
/// too); link-local ones only with a link-local first destination.
fn usable_peer_address(ip: IpAddr, first: IpAddr) -> bool {
    if ip.is_ipv4() != first.is_ipv4() || ip.is_unspecified() || ip.is_multicast() {
        return false;
    }
    if let IpAddr::V4(v4) = ip
        && v4.is_broadcast()
    {
        return false;
    }
    ip.is_loopback() == first.is_loopback() && link_local(ip) == link_local(first)
}

/// An IPv6 unicast link-local address (fe80::/10), or IPv4's 169.254/16.
fn link_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(ip: &str, first: &str) -> bool {
        usable_peer_address(ip.parse().unwrap(), first.parse().unwrap())
    }

    #[test]
    fn listed_addresses_must_share_the_first_destinations_family_and_scope() {
        assert!(ok("10.1.0.2", "10.0.0.2"));
        assert!(ok("192.0.2.9", "10.0.0.2"));
        // A peer on loopback listing its other interfaces: not our paths.
        assert!(!ok("10.1.0.2", "127.0.0.1"));
        assert!(ok("127.0.0.2", "127.0.0.1"));
        assert!(!ok("127.0.0.1", "10.0.0.2"));
        assert!(!ok("2001:db8::1", "10.0.0.2"));
        assert!(!ok("fe80::1", "2001:db8::2"));
        assert!(ok("fe80::1", "fe80::2"));
        for bad in ["0.0.0.0", "224.0.0.1", "255.255.255.255"] {
            assert!(!ok(bad, "10.0.0.2"), "{bad}");
        }
    }
}
