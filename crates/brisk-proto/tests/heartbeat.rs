//! Heartbeats on idle paths and failure detection (RFC 9260 8.1, 8.3).

mod harness;

use brisk_proto::wire::chunk::types;
use brisk_proto::{CloseReason, Config, Event};
use harness::{Dir, Fate, Pair, ms};

#[test]
fn an_idle_path_is_probed_and_the_heartbeat_measures_rtt() {
    let cfg = Config {
        hb_interval: ms(5000),
        ..Config::rfc9260()
    };
    let mut p = Pair::new(ms(10), cfg.clone());
    let (a, _) = p.connect(cfg);
    let up = p.now;
    p.run_for(ms(20_000));
    let hbs: Vec<_> = p
        .log
        .iter()
        .filter(|l| l.seen.dir == Dir::AtoB && l.seen.has(types::HEARTBEAT))
        .map(|l| l.seen.sent_at)
        .collect();
    assert!(!hbs.is_empty());
    // First probe after HB.interval + RTO (1 s): 6 s after the association came up.
    assert_eq!(hbs[0], up + ms(6000));
    assert!(
        p.log
            .iter()
            .any(|l| l.seen.dir == Dir::BtoA && l.seen.has(types::HEARTBEAT_ACK))
    );
    let srtt = p.a.association(a).unwrap().stats().srtt;
    assert_eq!(srtt, Some(ms(20)));
}

#[test]
fn unanswered_heartbeats_fail_the_association_after_max_retrans() {
    let cfg = Config {
        hb_interval: ms(1000),
        assoc_max_retrans: 3,
        ..Config::rfc9260()
    };
    let mut p = Pair::new(ms(10), cfg.clone());
    p.connect(cfg);
    p.rule(|s| (s.dir == Dir::BtoA).then_some(Fate::Drop));
    p.run_for(ms(120_000));
    let closed = p.a_events.iter().find_map(|(_, _, e)| match e {
        Event::Closed(r) => Some(r.clone()),
        _ => None,
    });
    assert_eq!(closed, Some(CloseReason::PeerUnreachable { errors: 4 }));
    let hbs = p
        .log
        .iter()
        .filter(|l| l.seen.dir == Dir::AtoB && l.seen.has(types::HEARTBEAT))
        .count();
    assert_eq!(hbs, 4);
}
