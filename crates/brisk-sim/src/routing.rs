//! Static routing: the next hop from every node to every host. A leaf: it
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
