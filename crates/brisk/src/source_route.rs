//! The source address of a multi-homed endpoint's datagram, chosen as the
//! kernel's routing table would choose it.
//!
//! The protocol picks a datagram's destination (a path); over UDP (RFC 6951)
//! the driver picks the local address it leaves from, by sending it on the
//! socket bound to that address. A peer address that has written to us lately
//! is answered from the address it wrote to, as a kernel SCTP stack answers
//! (an INIT ACK leaves from the address the INIT was sent to): the peer knows
//! that address for it. Otherwise the kernel knows which of our addresses
//! reaches a destination: a UDP socket connected to it (no packet is sent)
//! reports the source the route gives as its local address. Each answer is
//! kept for [`ROUTE_TTL`], so a route that changes (a link taken down, a
//! route added) is followed within that time, and at most [`ROUTES_KEPT`]
//! destinations are remembered: peers list addresses on the wire, and a
//! list that lies must not grow the cache without bound.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a route lookup is believed.
pub(crate) const ROUTE_TTL: Duration = Duration::from_secs(1);

/// Destinations remembered at most; the cache is emptied when full.
pub(crate) const ROUTES_KEPT: usize = 1024;

/// How long the address a peer wrote to stays its answer's source.
pub(crate) const ARRIVAL_TTL: Duration = Duration::from_secs(30);

/// Chooses, for each destination, the index of the local address (socket)
/// a datagram to it leaves from.
#[derive(Debug)]
pub(crate) struct SourceRoutes {
    /// Our addresses, one per socket, in the sockets' order.
    locals: Vec<IpAddr>,
    cache: Mutex<HashMap<IpAddr, (usize, Instant)>>,
    /// Per peer transport address: the socket its last datagram came in on,
    /// and when (at most [`ROUTES_KEPT`]; emptied when full, since sources
    /// can be spoofed).
    arrivals: Mutex<HashMap<SocketAddr, (usize, Instant)>>,
}

impl SourceRoutes {
    pub fn new(locals: Vec<IpAddr>) -> Self {
        Self {
            locals,
            cache: Mutex::new(HashMap::new()),
            arrivals: Mutex::new(HashMap::new()),
        }
    }

    /// A datagram from `from` came in on socket `index`.
    pub fn note_arrival(&self, from: SocketAddr, index: usize, now: Instant) {
        if self.locals.len() < 2 {
            return;
        }
        let mut arrivals = self.arrivals.lock().unwrap_or_else(|p| p.into_inner());
        if arrivals.len() >= ROUTES_KEPT && !arrivals.contains_key(&from) {
            arrivals.clear();
        }
        arrivals.insert(from, (index, now));
    }

    /// The socket for a datagram to `dest`: the one `dest` last wrote to
    /// (within [`ARRIVAL_TTL`]); otherwise the one bound to the source the
    /// kernel's route to `dest` names; otherwise the first of `dest`'s
    /// address family; otherwise the first.
    pub fn pick(&self, dest: SocketAddr, now: Instant) -> usize {
        if self.locals.len() < 2 {
            return 0;
        }
        if let Some(&(index, at)) = self
            .arrivals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&dest)
            && now.saturating_duration_since(at) < ARRIVAL_TTL
        {
            return index;
        }
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&(index, at)) = cache.get(&dest.ip())
            && now.saturating_duration_since(at) < ROUTE_TTL
        {
            return index;
        }
        let index = self.resolve(dest);
        if cache.len() >= ROUTES_KEPT {
            cache.clear();
        }
        cache.insert(dest.ip(), (index, now));
        index
    }

    /// Asks the routing table, without the cache.
    fn resolve(&self, dest: SocketAddr) -> usize {
        route_source(dest)
            .and_then(|src| self.locals.iter().position(|l| *l == src))
            .or_else(|| {
                self.locals
                    .iter()
                    .position(|l| l.is_ipv4() == dest.ip().is_ipv4())
            })
            .unwrap_or(0)
    }

    /// Destinations in the caches (for tests of their bound).
    #[cfg(test)]
    fn cached(&self) -> (usize, usize) {
        (
            self.cache.lock().unwrap().len(),
            self.arrivals.lock().unwrap().len(),
        )
    }
}

/// The source address the kernel's routing table gives for `dest`: the
/// local address of a UDP socket connected to it. `None` without a route.
pub(crate) fn route_source(dest: SocketAddr) -> Option<IpAddr> {
    let any: SocketAddr = match dest {
        SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
        SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let probe = UdpSocket::bind(any).ok()?;
    // connect() on UDP only looks the route up and fixes the source; a
    // port of 0 is refused, and the port does not change the route.
    let port = if dest.port() == 0 { 9 } else { dest.port() };
    probe.connect(SocketAddr::new(dest.ip(), port)).ok()?;
    let src = probe.local_addr().ok()?.ip();
    (!src.is_unspecified()).then_some(src)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn the_route_to_loopback_leaves_from_loopback() {
        assert_eq!(
            route_source("127.0.0.1:9899".parse().unwrap()),
            Some(v4("127.0.0.1"))
        );
    }

    #[test]
    fn the_socket_of_the_routes_source_is_chosen() {
        // 127.0.0.1 is the source of every route into 127/8.
        let routes = SourceRoutes::new(vec![v4("127.0.0.2"), v4("127.0.0.1")]);
        let now = Instant::now();
        assert_eq!(routes.pick("127.0.0.5:1".parse().unwrap(), now), 1);
        assert_eq!(routes.pick("127.0.0.1:1".parse().unwrap(), now), 1);
    }

    #[test]
    fn without_a_matching_source_the_first_of_the_family_is_chosen() {
        let routes = SourceRoutes::new(vec![
            "::2".parse().unwrap(),
            v4("192.0.2.1"),
            v4("192.0.2.2"),
        ]);
        let now = Instant::now();
        // The route to loopback leaves from 127.0.0.1, which is none of ours.
        assert_eq!(routes.pick("127.0.0.1:1".parse().unwrap(), now), 1);
    }

    #[test]
    fn a_lookup_is_cached_until_its_ttl_passes() {
        let routes = SourceRoutes::new(vec![v4("192.0.2.1"), v4("127.0.0.1")]);
        let t0 = Instant::now();
        let dest: SocketAddr = "127.0.0.1:1".parse().unwrap();
        assert_eq!(routes.pick(dest, t0), 1);
        // A stale answer stands within the TTL ...
        routes.cache.lock().unwrap().insert(dest.ip(), (0, t0));
        assert_eq!(routes.pick(dest, t0 + ROUTE_TTL / 2), 0);
        // ... and is looked up again after it.
        assert_eq!(routes.pick(dest, t0 + ROUTE_TTL), 1);
    }

    #[test]
    fn destinations_from_the_wire_cannot_grow_the_cache_without_bound() {
        let routes = SourceRoutes::new(vec![v4("127.0.0.1"), v4("127.0.0.2")]);
        let now = Instant::now();
        for i in 0..(ROUTES_KEPT as u32 * 3) {
            let ip = Ipv4Addr::from(0x7f00_0000 | i);
            routes.note_arrival(SocketAddr::new(ip.into(), 2), 1, now);
            routes.pick(SocketAddr::new(ip.into(), 1), now);
            let (cache, arrivals) = routes.cached();
            assert!(cache <= ROUTES_KEPT && arrivals <= ROUTES_KEPT);
        }
    }

    #[test]
    fn a_peer_is_answered_from_the_address_it_wrote_to_until_it_stops() {
        let routes = SourceRoutes::new(vec![v4("127.0.0.1"), v4("127.0.0.2")]);
        let t0 = Instant::now();
        let peer: SocketAddr = "127.0.0.9:5000".parse().unwrap();
        // The route would say 127.0.0.1.
        assert_eq!(routes.pick(peer, t0), 0);
        routes.note_arrival(peer, 1, t0);
        assert_eq!(routes.pick(peer, t0 + ARRIVAL_TTL / 2), 1);
        // Another port of the same host is another peer address.
        assert_eq!(routes.pick("127.0.0.9:5001".parse().unwrap(), t0), 0);
        assert_eq!(routes.pick(peer, t0 + ARRIVAL_TTL), 0);
    }
}
