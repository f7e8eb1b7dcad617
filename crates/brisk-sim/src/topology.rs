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

/// The link directions of a [`dual_homed`] topology, each as (a->b, b->a).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DualHomedLinks {
    pub primary: (LinkId, LinkId),
    pub secondary: (LinkId, LinkId),
}

/// Two disjoint paths between hosts `a` and `b`, each a duplex link of its
/// own: `primary` joins (and binds) each host's first address, `secondary`
/// each host's second, so the destination address picks the path and the
/// path picks the source address. Each path's parameters are (a->b, b->a).
///
/// # Panics
/// If `a` or `b` has fewer than two addresses ([`Sim::add_address`]).
pub fn dual_homed(
    sim: &mut Sim,
    a: HostId,
    b: HostId,
    primary: (LinkParams, LinkParams),
    secondary: (LinkParams, LinkParams),
) -> DualHomedLinks {
    let (aa, ba) = (sim.addresses(a), sim.addresses(b));
    assert!(
        aa.len() >= 2 && ba.len() >= 2,
        "a dual-homed topology joins two hosts of two addresses each"
    );
    let (na, nb) = (sim.node(a), sim.node(b));
    let p = sim.link(na, nb, primary.0, primary.1);
    let s = sim.link(na, nb, secondary.0, secondary.1);
    for (i, l) in [(0, p.0), (1, s.0)] {
        sim.bind_address(aa[i], l);
        sim.bind_address(ba[i], l);
    }
    DualHomedLinks {
        primary: p,
        secondary: s,
    }
}
