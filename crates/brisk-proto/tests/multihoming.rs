//! Multi-homing (RFC 9260 5.1.2, 5.4, 6.4, 8.2) and SCTP-PF quick failover
//! (RFC 7829) between two dual-homed endpoints joined by two disjoint links.

mod harness;

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use brisk_proto::wire::{Chunk, Packet, Param};
use brisk_proto::{
    CloseReason, Config, Endpoint, EndpointConfig, Event, FailoverCause, PathState,
    RetransmitCause, Time,
};
use harness::ms;
use harness::multi::{Dual, Side, addr};

const HEARTBEAT: u8 = 4;
const HEARTBEAT_ACK: u8 = 5;

/// RFC 9260 timers, small enough for short tests: RTO 100 ms to 1.6 s.
fn rfc(pmr: u32) -> Config {
    let mut c = Config::rfc9260();
    c.rto_initial = ms(100);
    c.rto_min = ms(100);
    c.rto_max = ms(1600);
    c.path_max_retrans = pmr;
    c.assoc_max_retrans = 20;
    // A SACK delay under RTO.Min, so that no timeout is spurious.
    c.sack_delay = ms(40);
    c
}

/// The same with SCTP-PF.
fn pf(pfmr: u32) -> Config {
    let mut c = rfc(5);
    c.potentially_failed = true;
    c.pf_max_retrans = pfmr;
    c
}

/// A connected dual-homed pair whose alternate path is confirmed.
fn connected(cfg: Config) -> Dual {
    let mut d = Dual::new(ms(10), cfg.clone());
    d.connect(cfg);
    assert!(
        d.run_until(
            |d| d.a_events.iter().any(|(_, _, e)| matches!(
                e,
                Event::PathStateChanged {
                    confirmed: true,
                    ..
                }
            )),
            Duration::from_secs(5)
        ),
        "the alternate was never confirmed"
    );
    // What follows is about failover, not confirmation.
    d.a_events.clear();
    d.b_events.clear();
    d
}

fn data_path_changes(
    events: &[(Time, brisk_proto::AssocId, Event)],
) -> Vec<(Time, SocketAddr, FailoverCause)> {
    events
        .iter()
        .filter_map(|(_, _, e)| match e {
            Event::DataPathChanged { to, cause, at, .. } => Some((*at, *to, *cause)),
            _ => None,
        })
        .collect()
}

fn path_states(
    events: &[(Time, brisk_proto::AssocId, Event)],
) -> Vec<(Time, SocketAddr, PathState)> {
    events
        .iter()
        .filter_map(|(_, _, e)| match e {
            Event::PathStateChanged {
                remote, state, at, ..
            } => Some((*at, *remote, *state)),
            _ => None,
        })
        .collect()
}

fn listed(p: &Packet<'_>) -> Vec<IpAddr> {
    let params = match &p.chunks[0] {
        Chunk::Init(i) => &i.params,
        Chunk::InitAck(a) => &a.params,
        _ => return Vec::new(),
    };
    params
        .iter()
        .filter_map(|p| match p {
            Param::Ipv4Address(v4) => Some(IpAddr::V4(*v4)),
            Param::Ipv6Address(v6) => Some(IpAddr::V6(*v6)),
            _ => None,
        })
        .collect()
}

/// The INIT an endpoint with `addresses` sends.
fn first_init(addresses: Vec<IpAddr>) -> Vec<u8> {
    let mut ep = Endpoint::new(
        EndpointConfig {
            port: 5000,
            accept: false,
            addresses,
            ..EndpointConfig::default()
        },
        [1; 32],
    );
    ep.connect(Time::ZERO, addr("10.0.0.2:9899"), Config::rfc9260())
        .unwrap();
    let mut buf = Vec::new();
    ep.poll_transmit(Time::ZERO, &mut buf).unwrap();
    buf
}

#[test]
fn init_and_init_ack_list_both_addresses_and_each_side_gets_two_paths() {
    let mut d = Dual::new(ms(10), rfc(5));
    d.connect(rfc(5));
    let init = d.log.iter().find(|s| s.has(1)).unwrap();
    assert_eq!((init.link, init.src), (Some(0), d.a_addrs[0]));
    // Each side learned the other's second address from its INIT or INIT ACK.
    let a_paths = d.a_assoc().paths();
    let b_paths = d.b_assoc().paths();
    assert_eq!(
        a_paths.iter().map(|p| p.remote).collect::<Vec<_>>(),
        d.b_addrs.to_vec()
    );
    assert_eq!(
        b_paths.iter().map(|p| p.remote).collect::<Vec<_>>(),
        d.a_addrs.to_vec()
    );
    // 5.4: the address connected to (A) and the INIT's source (B) are
    // confirmed; the other listed one is not, until a heartbeat answers.
    assert!(a_paths[0].confirmed && !a_paths[1].confirmed);
    assert!(b_paths[0].confirmed && !b_paths[1].confirmed);
    assert!(a_paths[0].primary && a_paths[0].data);
}

#[test]
fn address_parameters_are_listed_only_for_two_or_more_local_addresses() {
    let none = first_init(vec![]);
    let one = first_init(vec!["10.0.0.1".parse().unwrap()]);
    // Single-homed: the INIT is the very same bytes as without addresses.
    assert_eq!(none, one);
    assert!(listed(&Packet::decode(&one).unwrap()).is_empty());
    let two = first_init(vec![
        "10.0.0.1".parse().unwrap(),
        "10.1.0.1".parse().unwrap(),
    ]);
    assert_eq!(
        listed(&Packet::decode(&two).unwrap()),
        vec![
            "10.0.0.1".parse::<IpAddr>().unwrap(),
            "10.1.0.1".parse().unwrap()
        ]
    );
}

#[test]
fn heartbeats_confirm_the_unconfirmed_address_on_its_own_link() {
    let mut d = connected(rfc(5));
    let hb = d
        .log
        .iter()
        .find(|s| s.from == Side::A && s.has(HEARTBEAT))
        .unwrap();
    assert_eq!((hb.link, hb.dst), (Some(1), d.b_addrs[1]));
    // The HEARTBEAT ACK goes back to where the HEARTBEAT came from (6.4).
    let ack = d
        .log
        .iter()
        .find(|s| s.from == Side::B && s.has(HEARTBEAT_ACK) && s.dst == d.a_addrs[1])
        .unwrap();
    assert_eq!(ack.link, Some(1));
    let paths = d.a_assoc().paths();
    assert!(paths[1].confirmed && paths[1].srtt.is_some());
    assert_eq!(paths[1].state, PathState::Active);
    // Confirmation moves no data: the primary still takes it.
    assert_eq!(d.a_assoc().data_path(), d.b_addrs[0]);
    assert!(data_path_changes(&d.a_events).is_empty());
}

#[test]
fn data_never_goes_to_an_address_no_heartbeat_confirmed() {
    // Link 1 is dead from the start: B's second address stays unconfirmed.
    let mut d = Dual::new(ms(10), rfc(1));
    d.cut(1);
    d.connect(rfc(1));
    d.cut(0);
    d.a_send(b"stuck");
    d.run_for(Duration::from_secs(4));
    assert!(
        d.a_data().iter().all(|s| s.link == Some(0)),
        "DATA went to an unconfirmed address"
    );
    assert!(!d.a_assoc().paths()[1].confirmed);
}

#[test]
fn a_timed_out_chunk_is_retransmitted_to_the_alternate_path() {
    let mut d = connected(rfc(5));
    d.cut(0);
    d.a_send(b"hello");
    d.run_until(Dual::b_has_message, Duration::from_secs(3));
    let data = d.a_data();
    assert_eq!(data[0].link, Some(0), "first transmission on the primary");
    assert_eq!(data[1].link, Some(1), "the retransmission on the alternate");
    assert_eq!(data[0].tsns, data[1].tsns);
    let rtx: Vec<RetransmitCause> = d
        .a_events
        .iter()
        .filter_map(|(_, _, e)| match e {
            Event::Retransmission { cause, .. } => Some(*cause),
            _ => None,
        })
        .collect();
    assert_eq!(rtx, vec![RetransmitCause::T3Timeout]);
    // Without PF, one timeout moves no data: the primary stays the data path.
    assert_eq!(d.a_assoc().data_path(), d.b_addrs[0]);
    assert_eq!(d.b_recv_all(), vec![b"hello".to_vec()]);
}

#[test]
fn a_path_fails_when_its_timeouts_exceed_path_max_retrans() {
    // PMR 2: the third consecutive timeout marks the primary inactive (8.2).
    let mut d = connected(rfc(2));
    d.cut(0);
    let mut sent = 0;
    while path_states(&d.a_events).is_empty() && sent < 10 {
        d.a_send(format!("m{sent}").as_bytes());
        sent += 1;
        d.run_for(Duration::from_millis(1500));
    }
    let states = path_states(&d.a_events);
    assert_eq!(states[0].1, d.b_addrs[0]);
    assert_eq!(states[0].2, PathState::Inactive);
    let stats = d.a_assoc().stats();
    assert_eq!(
        stats.t3_expirations, 3,
        "exactly Path.Max.Retrans + 1 timeouts"
    );
    assert_eq!(stats.paths_failed, 1);
    let changes = data_path_changes(&d.a_events);
    assert_eq!(changes.len(), 1);
    assert_eq!(
        (changes[0].1, changes[0].2),
        (d.b_addrs[1], FailoverCause::PathFailed)
    );
    assert_eq!(stats.data_path_changes(FailoverCause::PathFailed), 1);
    assert_eq!(stats.failovers(), 1);
    // New data now goes to the alternate at once.
    let before = d.a_data().len();
    d.a_send(b"after");
    d.run_for(ms(50));
    assert_eq!(d.a_data()[before].link, Some(1));
}

#[test]
fn with_pf_and_pfmr_0_data_moves_after_the_first_timeout() {
    let mut d = connected(pf(0));
    d.cut(0);
    let outage = d.now;
    d.a_send(b"first");
    assert!(d.run_until(
        |d| !data_path_changes(&d.a_events).is_empty(),
        Duration::from_secs(2)
    ));
    let changes = data_path_changes(&d.a_events);
    assert_eq!(changes[0].2, FailoverCause::PotentiallyFailed);
    assert_eq!(changes[0].1, d.b_addrs[1]);
    assert_eq!(d.a_assoc().stats().t3_expirations, 1);
    assert_eq!(
        path_states(&d.a_events)
            .iter()
            .map(|s| (s.1, s.2))
            .collect::<Vec<_>>(),
        vec![(d.b_addrs[0], PathState::PotentiallyFailed)]
    );
    // The failover came one RTO (100 ms) after the outage.
    assert!(
        changes[0].0.since(outage) <= ms(120),
        "{:?}",
        changes[0].0.since(outage)
    );
    let before = d.a_data().len();
    d.a_send(b"second");
    d.run_for(ms(100));
    assert_eq!(
        d.a_data()[before].link,
        Some(1),
        "new data avoids the PF path"
    );
    let got = d.b_recv_all();
    assert_eq!(got, vec![b"first".to_vec(), b"second".to_vec()]);
}

#[test]
fn with_pfmr_1_data_moves_after_the_second_timeout() {
    let mut d = connected(pf(1));
    d.cut(0);
    d.a_send(b"one");
    d.run_for(ms(250));
    assert!(
        data_path_changes(&d.a_events).is_empty(),
        "not after one timeout"
    );
    d.a_send(b"two");
    assert!(d.run_until(
        |d| !data_path_changes(&d.a_events).is_empty(),
        Duration::from_secs(3)
    ));
    assert_eq!(d.a_assoc().stats().t3_expirations, 2);
    assert_eq!(
        data_path_changes(&d.a_events)[0].2,
        FailoverCause::PotentiallyFailed
    );
}

#[test]
fn a_pf_path_is_probed_every_rto_and_data_switches_back_after_its_heartbeat_ack() {
    let mut d = connected(pf(0));
    d.cut(0);
    d.a_send(b"x");
    assert!(d.run_until(
        |d| !data_path_changes(&d.a_events).is_empty(),
        Duration::from_secs(2)
    ));
    let pf_at = d.now;
    d.run_for(ms(600));
    // RFC 7829 3.2 rule 4: heartbeats to the PF path at RTO intervals
    // (backed off while unanswered), not HB.interval (30 s).
    let probes: Vec<Time> = d
        .log
        .iter()
        .filter(|s| s.from == Side::A && s.has(HEARTBEAT) && s.dst == d.b_addrs[0] && s.at >= pf_at)
        .map(|s| s.at)
        .collect();
    assert!(probes.len() >= 2, "{probes:?}");
    d.restore(0);
    assert!(d.run_until(
        |d| data_path_changes(&d.a_events).len() == 2,
        Duration::from_secs(3)
    ));
    let back = data_path_changes(&d.a_events)[1];
    assert_eq!(
        (back.1, back.2),
        (d.b_addrs[0], FailoverCause::PrimaryRecovered)
    );
    let stats = d.a_assoc().stats();
    assert_eq!((stats.failovers(), stats.switchbacks()), (1, 1));
    assert_eq!(stats.paths_recovered, 1);
    let before = d.a_data().len();
    d.a_send(b"home");
    d.run_for(ms(50));
    assert_eq!(
        d.a_data()[before].link,
        Some(0),
        "data is back on the primary"
    );
}

#[test]
fn primary_switchover_keeps_data_on_the_new_path_when_the_old_primary_recovers() {
    let mut cfg = pf(0);
    cfg.primary_switchover = Some(0);
    let mut d = connected(cfg);
    d.cut(0);
    d.a_send(b"x");
    assert!(d.run_until(
        |d| !data_path_changes(&d.a_events).is_empty(),
        Duration::from_secs(2)
    ));
    d.restore(0);
    d.run_for(Duration::from_secs(2));
    assert_eq!(data_path_changes(&d.a_events).len(), 1, "no switchback");
    let paths = d.a_assoc().paths();
    assert!(paths[1].primary && paths[1].data);
    assert_eq!(
        paths[0].state,
        PathState::Active,
        "the old primary recovered"
    );
}

#[test]
fn the_application_can_set_the_primary() {
    let mut d = connected(rfc(5));
    let now = d.now;
    let to = d.b_addrs[1];
    d.a_assoc().set_primary(now, to).unwrap();
    d.run_for(ms(1));
    let changes = data_path_changes(&d.a_events);
    assert_eq!(
        (changes[0].1, changes[0].2),
        (to, FailoverCause::PrimarySet)
    );
    let before = d.a_data().len();
    d.a_send(b"there");
    d.run_for(ms(50));
    assert_eq!(d.a_data()[before].link, Some(1));
    assert!(d.a_assoc().set_primary(now, addr("10.9.9.9:9899")).is_err());
}

#[test]
fn sacks_go_back_to_where_the_data_came_from() {
    let mut d = connected(pf(0));
    d.cut(0);
    d.a_send(b"x");
    d.run_until(
        |d| !data_path_changes(&d.a_events).is_empty(),
        Duration::from_secs(2),
    );
    // Past B's delayed SACK (200 ms).
    d.run_for(ms(300));
    let sack_links: Vec<Option<usize>> = d
        .log
        .iter()
        .filter(|s| s.from == Side::B && s.has(3) && !s.dropped)
        .map(|s| s.link)
        .collect();
    assert!(sack_links.contains(&Some(1)), "{sack_links:?}");
    assert_eq!(d.b_recv_all(), vec![b"x".to_vec()]);
}

#[test]
fn the_association_fails_at_association_max_retrans_counted_across_paths() {
    let mut cfg = pf(0);
    cfg.assoc_max_retrans = 4;
    cfg.path_max_retrans = 2;
    let mut d = connected(cfg);
    d.cut(0);
    d.cut(1);
    d.a_send(b"lost");
    d.run_for(Duration::from_secs(30));
    let closed = d.a_events.iter().find_map(|(_, _, e)| match e {
        Event::Closed(r) => Some(r.clone()),
        _ => None,
    });
    assert_eq!(closed, Some(CloseReason::PeerUnreachable { errors: 5 }));
    // Both destinations took timeouts on the way.
    let failed: Vec<SocketAddr> = path_states(&d.a_events).iter().map(|s| s.1).collect();
    assert!(
        failed.contains(&d.b_addrs[0]) && failed.contains(&d.b_addrs[1]),
        "{failed:?}"
    );
}

#[test]
fn a_packet_from_an_unlisted_address_is_not_taken_as_a_path() {
    let mut d = connected(rfc(5));
    let a_tag = d.a_tag();
    // A HEARTBEAT with A's own tag (as B would send), from an address B never listed.
    let hb = Chunk::Heartbeat(brisk_proto::wire::chunk::Heartbeat::new(vec![1; 16]));
    let bytes = harness::packet(a_tag, vec![hb]);
    let stranger = addr("10.0.0.77:9899");
    let before = d.a.stats().out_of_the_blue;
    d.a.handle_datagram(d.now, stranger, &bytes);
    assert_eq!(d.a.stats().out_of_the_blue, before + 1);
    let mut buf = Vec::new();
    // Answered as 8.4 says (ABORT with the T bit, to the stranger), never as
    // the association's heartbeat.
    if let Some(t) = d.a.poll_transmit(d.now, &mut buf) {
        assert_eq!(t.destination, stranger);
        let p = Packet::decode(&buf).unwrap();
        assert!(matches!(p.chunks[0], Chunk::Abort(_)));
    }
    assert_eq!(d.a_assoc().paths().len(), 2);
    assert!(!d.a_assoc().is_closed());
}

#[test]
fn a_peer_listing_many_addresses_gets_at_most_max_paths_and_bounded_probes() {
    // 40 addresses nobody answers at (a peer aiming our probes at others),
    // then its real one.
    let many: Vec<IpAddr> = (0..40u8)
        .map(|i| IpAddr::V4(std::net::Ipv4Addr::new(10, 5, i, 1)))
        .chain(["10.0.0.1".parse().unwrap()])
        .collect();
    let b_ips = vec!["10.0.0.2".parse().unwrap(), "10.1.0.2".parse().unwrap()];
    let mut d = Dual::with_addresses(ms(10), rfc(5), many, b_ips);
    d.connect(rfc(5));
    assert_eq!(d.b_assoc().paths().len(), brisk_proto::path::MAX_PATHS);
    // Each unconfirmed destination is probed every RTO (backed off), one
    // probe in flight at a time across them (HB.Max.Burst), until its errors
    // exceed Path.Max.Retrans (5), then no more: 6 probes each.
    d.run_for(Duration::from_secs(60));
    let probes = d
        .log
        .iter()
        .filter(|s| s.from == Side::B && s.has(HEARTBEAT) && s.link.is_none())
        .count();
    assert!(
        probes <= 7 * 6,
        "{probes} heartbeats to unreachable addresses"
    );
    assert!(probes >= 7, "every listed address was probed");
    let paths = d.b_assoc().paths();
    assert!(
        paths[1..]
            .iter()
            .all(|p| !p.confirmed && p.state == PathState::Inactive),
        "{paths:?}"
    );
    // Never any data to them, and the association is fine.
    assert!(d.log.iter().all(|s| s.tsns.is_empty() || s.link.is_some()));
    assert!(!d.b_assoc().is_closed());
}

#[test]
fn probes_to_unconfirmed_addresses_are_paced_by_hb_max_burst_and_end() {
    // An INIT listing seven third-party addresses (nobody answers there).
    let listed: Vec<IpAddr> = (0..7u8)
        .map(|i| IpAddr::V4(std::net::Ipv4Addr::new(10, 5, i, 1)))
        .chain(["10.0.0.1".parse().unwrap()])
        .collect();
    let b_ips = vec!["10.0.0.2".parse().unwrap(), "10.1.0.2".parse().unwrap()];
    let cfg = rfc(5);
    assert_eq!(cfg.hb_max_burst, 1);
    let mut d = Dual::with_addresses(ms(10), cfg.clone(), listed, b_ips);
    d.connect(cfg.clone());
    d.run_for(Duration::from_secs(600));
    let probes: Vec<Time> = d
        .log
        .iter()
        .filter(|s| s.from == Side::B && s.has(HEARTBEAT) && s.link.is_none())
        .map(|s| s.at)
        .collect();
    // RFC 9260 5.4: at most HB.Max.Burst probes per RTO (never under
    // RTO.Min) across all unconfirmed addresses...
    for w in probes.windows(2) {
        assert!(w[1].since(w[0]) >= cfg.rto_min, "{probes:?}");
    }
    // ... and Path.Max.Retrans + 1 to each, then none: a bounded total.
    assert_eq!(probes.len(), 7 * 6, "{probes:?}");
    assert!(!d.b_assoc().is_closed());
}

#[test]
fn signaling_with_pf_delivers_messages_sent_in_an_outage_within_two_rto_min_plus_rtt() {
    // The goal, at 15 ms one way: 2 x RTO.Min (100 ms) + RTT (30 ms).
    let cfg = Config::signaling();
    let mut d = Dual::new(ms(15), cfg.clone());
    d.connect(cfg.clone());
    d.run_for(Duration::from_secs(2));
    d.cut(0);
    let outage = d.now;
    let budget = 2 * cfg.rto_min + ms(30);
    let mut sent = Vec::new();
    let mut arrived = [None; 10];
    while d.now < outage + Duration::from_secs(2) {
        if sent.len() < 10 && d.now >= outage + ms(20) * sent.len() as u32 {
            d.a_send(&[sent.len() as u8]);
            sent.push(d.now);
        }
        d.step();
        for m in d.b_recv_all() {
            assert!(
                arrived[usize::from(m[0])].replace(d.now).is_none(),
                "duplicate"
            );
        }
    }
    for (i, at) in arrived.iter().enumerate() {
        let at = at.unwrap_or_else(|| panic!("message {i} never arrived"));
        assert!(
            at.since(sent[i]) <= budget,
            "message {i} sent {:?} into the outage took {:?}",
            sent[i].since(outage),
            at.since(sent[i])
        );
    }
}

/// Seeded random scenarios on two paths: loss on each link, outages of
/// either link (or both) starting and ending at random, RFC 9260 or PF
/// settings. Every message sent arrives exactly once and in order, or the
/// association failed and A was told which messages may not have arrived.
/// `BRISK_DEEP=1` runs ten times as many; `BRISK_MH_SEED=N` replays one.
#[test]
fn random_outages_and_loss_on_two_paths_deliver_every_message_exactly_once() {
    use rand::{Rng, SeedableRng};
    if let Some(seed) = std::env::var("BRISK_MH_SEED")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        if let Err(e) = scenario(seed) {
            panic!("seed {seed}: {e}");
        }
        return;
    }
    let n = if std::env::var("BRISK_DEEP").is_ok_and(|v| v == "1") {
        10_000
    } else {
        1_000
    };
    let (mut failures, mut failovers, mut closed) = (Vec::new(), 0, 0);
    for seed in 0..n {
        match scenario(seed) {
            Ok((f, c)) => {
                failovers += f;
                closed += u64::from(c);
            }
            Err(e) => failures.push(format!("seed {seed}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The scenarios exercise what they claim: data moved between paths.
    assert!(
        failovers > n / 4,
        "only {failovers} failovers in {n} scenarios"
    );
    assert!(closed < n / 10, "{closed} of {n} associations failed");

    fn scenario(seed: u64) -> Result<(u64, bool), String> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut cfg = match rng.random_range(0..4) {
            0 => rfc(rng.random_range(1..=5)),
            1 => pf(0),
            2 => pf(1),
            _ => {
                let mut c = Config::signaling();
                c.assoc_max_retrans = 20;
                c
            }
        };
        cfg.hb_interval = ms(rng.random_range(200..3000));
        let mut d = Dual::new(ms(rng.random_range(5..40)), cfg.clone());
        d.delay[1] = ms(rng.random_range(5..60));
        d.seed(seed);
        d.connect(cfg);
        d.loss = [rng.random_range(0.0..0.15), rng.random_range(0.0..0.15)];
        // Outage windows: (link, start, end).
        let mut outages = Vec::new();
        for _ in 0..rng.random_range(1..4) {
            let start = d.now + ms(rng.random_range(0..6000));
            outages.push((
                rng.random_range(0..2usize),
                start,
                start + ms(rng.random_range(100..4000)),
            ));
        }
        let mut next_send = d.now;
        let total = 30u32;
        let mut sent = 0u32;
        let mut received: Vec<u32> = Vec::new();
        let end = d.now + Duration::from_secs(180);
        while d.now < end {
            for l in 0..2 {
                let down = outages
                    .iter()
                    .any(|&(k, s, e)| k == l && s <= d.now && d.now < e);
                if down {
                    d.cut(l);
                } else {
                    d.restore(l);
                }
            }
            if sent < total && d.now >= next_send && !d.a_assoc_closed() {
                let len = rng.random_range(1..3000usize);
                let mut payload = sent.to_be_bytes().to_vec();
                payload.resize(len.max(4), 0xab);
                d.a_send(&payload);
                sent += 1;
                next_send = d.now + ms(rng.random_range(0..300));
            }
            d.run_for(ms(10));
            for m in d.b_recv_all() {
                received.push(u32::from_be_bytes(m[..4].try_into().unwrap()));
            }
            let a_closed = d.a_assoc_closed();
            if sent == total && (a_closed || d.a_assoc().all_acked()) {
                break;
            }
        }
        let expected: Vec<u32> = (0..received.len() as u32).collect();
        if received != expected {
            return Err(format!("delivered out of order or twice: {received:?}"));
        }
        let failed = d
            .a_events
            .iter()
            .filter(|(_, _, e)| matches!(e, Event::SendFailed { .. }))
            .count() as u32;
        let closed = d.a_assoc_closed();
        if !closed && received.len() as u32 != total {
            return Err(format!(
                "{} of {total} delivered after 180 s with the association up",
                received.len()
            ));
        }
        if closed && (received.len() as u32) + failed < sent {
            return Err(format!(
                "association failed: {} delivered, {failed} reported failed, of {sent} sent",
                received.len()
            ));
        }
        let failovers = d
            .a_events
            .iter()
            .filter(|(_, _, e)| matches!(e, Event::DataPathChanged { .. }))
            .count() as u64;
        Ok((failovers, closed))
    }
}

#[test]
fn the_tag_rules_hold_on_every_path() {
    let mut d = connected(rfc(5));
    let a_tag = d.a_tag();
    let hb = || Chunk::Heartbeat(brisk_proto::wire::chunk::Heartbeat::new(vec![7; 16]));
    let second = d.b_addrs[1];
    // From B's listed second address, with a wrong tag: silently dropped (8.5).
    let malformed = d.a_assoc().stats().malformed_chunks;
    d.a.handle_datagram(d.now, second, &harness::packet(a_tag ^ 1, vec![hb()]));
    assert_eq!(d.a_assoc().stats().malformed_chunks, malformed + 1);
    let mut buf = Vec::new();
    assert!(d.a.poll_transmit(d.now, &mut buf).is_none(), "no answer");
    // With the right tag it is the association's, answered on that path.
    d.a.handle_datagram(d.now, second, &harness::packet(a_tag, vec![hb()]));
    let t = d.a.poll_transmit(d.now, &mut buf).unwrap();
    assert_eq!(t.destination, second);
    assert!(matches!(
        Packet::decode(&buf).unwrap().chunks[0],
        Chunk::HeartbeatAck(_)
    ));
}

#[test]
fn an_init_sent_again_after_a_stale_cookie_never_goes_to_an_unconfirmed_address() {
    // Every cookie of B's is stale on arrival: A's COOKIE ECHO gets a Stale
    // Cookie error, and A sends INIT again (RFC 9260 5.2.6), now knowing
    // B's second address from the INIT ACK, unconfirmed.
    let mut b_cfg = rfc(5);
    b_cfg.valid_cookie_life = Duration::ZERO;
    let mut d = Dual::new(ms(10), b_cfg);
    d.a_id = Some(
        d.a.connect_to_port(d.now, d.b_addrs[0], 5000, rfc(5))
            .unwrap(),
    );
    let inits = |d: &Dual| {
        d.log
            .iter()
            .filter(|s| s.from == Side::A && s.has(1))
            .map(|s| s.dst)
            .collect::<Vec<_>>()
    };
    assert!(d.run_until(|d| inits(d).len() >= 2, Duration::from_secs(5)));
    // That INIT is lost, and so is every one after it on link 0.
    d.cut(0);
    d.run_for(Duration::from_secs(20));
    // 5.4: no chunk but HEARTBEAT to an unconfirmed address; T1-init
    // turns only to the addresses the application gave (5.1).
    let to = inits(&d);
    assert!(to.len() > 2, "{to:?}");
    assert!(to.iter().all(|dst| *dst == d.b_addrs[0]), "{to:?}");
}

#[test]
fn an_unanswered_init_goes_to_the_next_address_the_application_gave() {
    // The primary's link is down before the association starts: `connectx`
    // with both of B's addresses still sets it up, over the second.
    let cfg = pf(0);
    let mut d = Dual::new(ms(10), cfg.clone());
    d.cut(0);
    let id =
        d.a.connect_to_addresses(d.now, &d.b_addrs.clone(), 5000, cfg)
            .unwrap();
    d.a_id = Some(id);
    assert!(d.run_until(
        |d| d.b_id.is_some() && d.a_connected(),
        Duration::from_secs(10)
    ));
    let inits: Vec<Option<usize>> = d
        .log
        .iter()
        .filter(|s| s.from == Side::A && s.has(1))
        .map(|s| s.link)
        .collect();
    assert_eq!(
        inits,
        [Some(0), Some(1)],
        "the retransmission takes the next address"
    );
    let echo = d
        .log
        .iter()
        .find(|s| s.from == Side::A && s.has(10))
        .unwrap();
    assert_eq!(
        echo.link,
        Some(1),
        "the COOKIE ECHO goes where the INIT ACK came from"
    );
    // Both addresses given are confirmed from the start (RFC 9260 5.4).
    let paths = d.a_assoc().paths();
    assert_eq!(
        paths
            .iter()
            .map(|p| (p.remote, p.confirmed))
            .collect::<Vec<_>>(),
        [(d.b_addrs[0], true), (d.b_addrs[1], true)]
    );
    assert!(paths[0].primary);
    // Data gets through: the first timeout moves it off the dead primary.
    d.a_send(b"hello");
    assert!(d.run_until(Dual::b_has_message, Duration::from_secs(3)));
    assert_eq!(d.b_recv_all(), vec![b"hello".to_vec()]);
    assert_eq!(d.a_assoc().data_path(), d.b_addrs[1]);
    // A list with no address, or one already in use, is refused.
    assert!(d.a.connect_to_addresses(d.now, &[], 5000, pf(0)).is_err());
    assert!(matches!(
        d.a.connect_to_addresses(d.now, &[addr("10.0.9.9:9899"), d.b_addrs[1]], 5000, pf(0)),
        Err(brisk_proto::ConnectError::AlreadyConnected { .. })
    ));
}
