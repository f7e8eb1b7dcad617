//! Topology helpers: links and routers laid out on a `Sim`.

use brisk_net::{HostId, LinkParams};

use crate::ids::LinkId;
use crate::sim::Sim;

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
