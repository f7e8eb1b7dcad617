//! Topology helpers and static routing.

use std::collections::VecDeque;

use brisk_net::{HostId, LinkParams};

use crate::sim::{LinkId, Sim};

/// A duplex link between two hosts; returns the a->b and b->a directions.
pub fn point_to_point(
    sim: &mut Sim,
    a: HostId,
    b: HostId,
    ab: LinkParams,
    ba: LinkParams,
) -> (LinkId, LinkId) {
    let (na, nb) = (sim.node(a), sim.node(b));
    sim.link(na, nb, ab, ba)
}

/// `senders[i] -access-> router1 -bottleneck-> router2 -access-> receivers[i]`.
/// Every access link gets `access` both ways. Returns the bottleneck's
/// forward (router1 -> router2) and reverse directions.
pub fn dumbbell(
    sim: &mut Sim,
    senders: &[HostId],
    receivers: &[HostId],
    access: LinkParams,
    bottleneck_fwd: LinkParams,
    bottleneck_rev: LinkParams,
) -> (LinkId, LinkId) {
    let sender_access = vec![access.clone(); senders.len()];
    dumbbell_per_flow(
        sim,
        senders,
        receivers,
        &sender_access,
        access,
        bottleneck_fwd,
        bottleneck_rev,
    )
    .bottleneck
}

/// The link directions of a dumbbell, each as (forward, reverse): forward
/// runs from the senders' side toward the receivers'.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumbbellLinks {
    pub bottleneck: (LinkId, LinkId),
    /// Per sender: its host -> router1 and router1 -> host directions.
    pub sender_access: Vec<(LinkId, LinkId)>,
    /// Per receiver: router2 -> its host and host -> router2.
    pub receiver_access: Vec<(LinkId, LinkId)>,
}

/// A dumbbell whose senders' access links differ: `sender_access[i]` is the
/// link direction from sender `i` to router1 (e.g. with impairments of its
/// own); the direction back, and both directions of every receiver's access
/// link, get `access`. A sender without an entry in `sender_access` gets
/// `access` too.
pub fn dumbbell_per_flow(
    sim: &mut Sim,
    senders: &[HostId],
    receivers: &[HostId],
    sender_access: &[LinkParams],
    access: LinkParams,
    bottleneck_fwd: LinkParams,
    bottleneck_rev: LinkParams,
) -> DumbbellLinks {
    let left = sim.add_router();
    let right = sim.add_router();
    let mut links = DumbbellLinks {
        bottleneck: (LinkId(0), LinkId(0)),
        sender_access: Vec::new(),
        receiver_access: Vec::new(),
    };
    for (i, &s) in senders.iter().enumerate() {
        let n = sim.node(s);
        let up = sender_access.get(i).unwrap_or(&access).clone();
        links
            .sender_access
            .push(sim.link(n, left, up, access.clone()));
    }
    links.bottleneck = sim.link(left, right, bottleneck_fwd, bottleneck_rev);
    for &r in receivers {
        let n = sim.node(r);
        links
            .receiver_access
            .push(sim.link(right, n, access.clone(), access.clone()));
    }
    links
}

/// One link direction, as routing sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Edge {
    pub from: usize,
    pub to: usize,
}

/// Next hops: `table[node][host]` is the link direction a packet for `host`
/// takes from `node`. Shortest paths by hop count; of equal paths, the one
/// through the earliest-created link wins. Packets pass through routers only,
/// never through other hosts.
pub(crate) fn routes(
    edges: &[Edge],
    is_router: &[bool],
    host_nodes: &[usize],
) -> Vec<Vec<Option<LinkId>>> {
    let nodes = is_router.len();
    let mut incoming = vec![Vec::new(); nodes];
    for (i, e) in edges.iter().enumerate() {
        incoming[e.to].push(i);
    }
    let mut table = vec![vec![None; host_nodes.len()]; nodes];
    for (host, &dst) in host_nodes.iter().enumerate() {
        let mut seen = vec![false; nodes];
        seen[dst] = true;
        let mut queue = VecDeque::from([dst]);
        while let Some(n) = queue.pop_front() {
            if n != dst && !is_router[n] {
                continue;
            }
            for &l in &incoming[n] {
                let from = edges[l].from;
                if !seen[from] {
                    seen[from] = true;
                    table[from][host] = Some(LinkId(l));
                    queue.push_back(from);
                }
            }
        }
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    fn duplex(edges: &mut Vec<Edge>, a: usize, b: usize) {
        edges.push(Edge { from: a, to: b });
        edges.push(Edge { from: b, to: a });
    }

    #[test]
    fn routes_follow_the_fewest_hops_and_avoid_transit_through_hosts() {
        // Nodes: 0 and 1 are hosts, 2 and 3 routers; 0-2-1 and 0-3-1, and a
        // direct 0-1 link: host 0 reaches host 1 directly.
        let mut edges = Vec::new();
        duplex(&mut edges, 0, 2); // links 0, 1
        duplex(&mut edges, 2, 1); // 2, 3
        duplex(&mut edges, 0, 3); // 4, 5
        duplex(&mut edges, 3, 1); // 6, 7
        let t = routes(&edges, &[false, false, true, true], &[0, 1]);
        assert_eq!(t[0][1], Some(LinkId(0)), "the earlier of two equal paths");
        assert_eq!(t[2][1], Some(LinkId(2)));
        assert_eq!(t[3][1], Some(LinkId(6)));
        assert_eq!(t[1][0], Some(LinkId(3)));
        duplex(&mut edges, 0, 1); // 8, 9
        let t = routes(&edges, &[false, false, true, true], &[0, 1]);
        assert_eq!(t[0][1], Some(LinkId(8)));
        // Host 1 is no transit: a router behind it does not reach host 0.
        duplex(&mut edges, 1, 4);
        let t = routes(&edges, &[false, false, true, true, true], &[0, 1]);
        assert_eq!(t[4][0], None);
        assert_eq!(t[4][1], Some(LinkId(11)));
    }
}
