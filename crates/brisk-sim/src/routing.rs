//! Static routing: the next hop from every node to every address. A leaf: it
//! knows link directions only by their endpoints, so the simulator uses it
//! without the topology helpers that build on the simulator.

use std::collections::VecDeque;

use crate::ids::LinkId;

/// One link direction, as routing sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Edge {
    pub from: usize,
    pub to: usize,
}

/// A destination address, as routing sees it: the node of its host, and the
/// link direction (into that node) of the interface it is bound to, if any.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dest {
    pub node: usize,
    pub last_hop: Option<usize>,
}

/// Next hops: `table[node][dest]` is the link direction a packet for
/// destination `dest` takes from `node`. Shortest paths by hop count; of
/// equal paths, the one through the earliest-created link wins. A
/// destination bound to an interface is reached only over that interface:
/// the shortest path whose last hop is its `last_hop` (so two disjoint paths
/// between the same two hosts are chosen by address). Packets pass through
/// routers only, never through other hosts.
pub(crate) fn routes(
    edges: &[Edge],
    is_router: &[bool],
    dests: &[Dest],
) -> Vec<Vec<Option<LinkId>>> {
    let nodes = is_router.len();
    let mut incoming = vec![Vec::new(); nodes];
    for (i, e) in edges.iter().enumerate() {
        incoming[e.to].push(i);
    }
    let mut table = vec![vec![None; dests.len()]; nodes];
    for (d, dest) in dests.iter().enumerate() {
        let dst = dest.node;
        let mut seen = vec![false; nodes];
        seen[dst] = true;
        let mut queue = VecDeque::new();
        // The search walks backwards from the destination: over the bound
        // interface's link only, or over every link into the host.
        let mut reach = |l: usize, seen: &mut Vec<bool>, queue: &mut VecDeque<usize>| {
            let from = edges[l].from;
            if !seen[from] {
                seen[from] = true;
                table[from][d] = Some(LinkId(l));
                queue.push_back(from);
            }
        };
        match dest.last_hop {
            Some(l) => reach(l, &mut seen, &mut queue),
            None => queue.push_back(dst),
        }
        while let Some(n) = queue.pop_front() {
            if n != dst && !is_router[n] {
                continue;
            }
            for &l in &incoming[n] {
                reach(l, &mut seen, &mut queue);
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

    fn hosts(nodes: &[usize]) -> Vec<Dest> {
        nodes
            .iter()
            .map(|&node| Dest {
                node,
                last_hop: None,
            })
            .collect()
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
        let t = routes(&edges, &[false, false, true, true], &hosts(&[0, 1]));
        assert_eq!(t[0][1], Some(LinkId(0)), "the earlier of two equal paths");
        assert_eq!(t[2][1], Some(LinkId(2)));
        assert_eq!(t[3][1], Some(LinkId(6)));
        assert_eq!(t[1][0], Some(LinkId(3)));
        duplex(&mut edges, 0, 1); // 8, 9
        let t = routes(&edges, &[false, false, true, true], &hosts(&[0, 1]));
        assert_eq!(t[0][1], Some(LinkId(8)));
        // Host 1 is no transit: a router behind it does not reach host 0.
        duplex(&mut edges, 1, 4);
        let t = routes(&edges, &[false, false, true, true, true], &hosts(&[0, 1]));
        assert_eq!(t[4][0], None);
        assert_eq!(t[4][1], Some(LinkId(11)));
    }

    #[test]
    fn an_address_bound_to_an_interface_is_reached_over_that_interface_only() {
        // Host 0 - router 2 - host 1 (links 0-3), and host 0 - router 3 -
        // router 4 - host 1 (links 4-9): the second path is longer.
        let mut edges = Vec::new();
        duplex(&mut edges, 0, 2); // 0, 1
        duplex(&mut edges, 2, 1); // 2, 3
        duplex(&mut edges, 0, 3); // 4, 5
        duplex(&mut edges, 3, 4); // 6, 7
        duplex(&mut edges, 4, 1); // 8, 9
        let routers = [false, false, true, true, true];
        let dests = [
            // Host 1's address on the short path, on the long one, and unbound.
            Dest {
                node: 1,
                last_hop: Some(2),
            },
            Dest {
                node: 1,
                last_hop: Some(8),
            },
            Dest {
                node: 1,
                last_hop: None,
            },
            // Host 0's address on the long path.
            Dest {
                node: 0,
                last_hop: Some(5),
            },
        ];
        let t = routes(&edges, &routers, &dests);
        assert_eq!(t[0][0], Some(LinkId(0)));
        assert_eq!(t[0][1], Some(LinkId(4)), "the long way, to its interface");
        assert_eq!(t[3][1], Some(LinkId(6)));
        assert_eq!(t[4][1], Some(LinkId(8)));
        assert_eq!(t[0][2], Some(LinkId(0)), "unbound: the shortest path");
        assert_eq!(t[1][3], Some(LinkId(9)));
        // Router 2 reaches the long-path address only back through a host:
        // no route.
        assert_eq!(t[2][1], None);
        // Nobody routes to an address from its own host.
        assert_eq!(t[1][0], None);
        assert_eq!(t[1][1], None);
    }
}
