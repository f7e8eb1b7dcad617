//! Whole simulations: real associations over simulated links, impairments
//! acting on them, routing, determinism.

mod common;

use std::time::Duration;

use brisk_proto::{EndpointConfig, RetransmitCause, Time};
use brisk_sim::{
    Fate, HostId, Impairment, LinkParams, QueueLimit, Sim, dumbbell, parse_pattern, point_to_point,
};
use common::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const LIMIT: Time = Time::from_secs(120);

/// A pair whose client sends `n` messages, one packet each, through `forward`.
fn run_pair(seed: u64, n: u32, forward: LinkParams, back: LinkParams) -> Pair {
    let mut p = pair(seed, Client::new(addr(SERVER_ADDR), n), forward, back);
    p.sim.trace(p.forward);
    p.sim.run(LIMIT);
    p
}

fn drop_data(ordinals: Vec<u64>) -> Impairment {
    Impairment::DropOrdinals {
        ordinals,
        data_only: true,
    }
}

#[test]
fn an_association_over_a_point_to_point_link_delivers_every_message_and_closes() {
    let p = run_pair(1, 20, link(), link());
    assert_eq!(p.numbers(), (0..20).collect::<Vec<_>>());
    assert!(p.client().retransmissions.is_empty());
    assert_eq!(p.client().acked, 20);
    assert_eq!(
        p.client().closed,
        Some(brisk_proto::CloseReason::Shutdown),
        "the client shut down once all was acknowledged"
    );
    // With the association gone no timer is left: the run ended by itself.
    assert!(p.sim.now() < LIMIT, "stopped at {}", p.sim.now());
    // Handshake: INIT, INIT ACK, COOKIE ECHO, COOKIE ACK, each 10 ms plus its
    // serialization; the client is up after about 40 ms.
    let up = p.client().connected_at.unwrap();
    assert!(
        up > Time::from_millis(40) && up < Time::from_millis(50),
        "{up}"
    );
    let stats = p.sim.stats();
    let fwd = stats.link(p.forward);
    assert_eq!(fwd.data_packets, 20, "one packet per message");
    assert_eq!(fwd.sent, fwd.delivered);
    assert_eq!(fwd.impairment_drops + fwd.queue_drops, 0);
}

#[test]
fn messages_from_separate_callbacks_leave_in_separate_packets_and_one_callback_bundles() {
    let mut bundled = Client::new(addr(SERVER_ADDR), 4);
    bundled.one_per_callback = false;
    let mut p = pair(1, bundled, link(), link());
    p.sim.run(LIMIT);
    assert_eq!(p.numbers(), [0, 1, 2, 3]);
    assert_eq!(p.sim.link_stats(p.forward).data_packets, 1);

    let p = run_pair(1, 4, link(), link());
    assert_eq!(p.numbers(), [0, 1, 2, 3]);
    assert_eq!(p.sim.link_stats(p.forward).data_packets, 4);
}

#[test]
fn each_event_callback_is_its_own_instant() {
    // Four messages leave in one packet; one SACK acknowledges all four, and
    // the client answers each of the four MessageAcked events with a message:
    // four more packets.
    let mut client = Client::new(addr(SERVER_ADDR), 4);
    client.one_per_callback = false;
    client.follow_ups = 4;
    let mut p = pair(1, client, link(), link());
    p.sim.run(LIMIT);
    assert_eq!(p.numbers(), (0..8).collect::<Vec<_>>());
    assert_eq!(p.sim.link_stats(p.forward).data_packets, 5);
}

#[test]
fn dropping_the_third_data_packet_causes_exactly_one_retransmission_of_it() {
    let lossy = link().with_impairments([drop_data(vec![3])]);
    let p = run_pair(1, 20, lossy, link());
    assert_eq!(p.numbers(), (0..20).collect::<Vec<_>>());
    // Handshake packets are not counted: the third DATA packet carried message 2.
    let third = p.server().received[2].first_tsn;
    assert_eq!(
        p.client().retransmissions,
        [(third, RetransmitCause::FastRetransmit)]
    );
    let log = p.sim.packet_log(p.forward);
    let dropped: Vec<_> = log
        .iter()
        .filter(|r| r.fate == Fate::ImpairmentDrop)
        .collect();
    assert_eq!(dropped.len(), 1);
    assert_eq!(dropped[0].data_ordinal, Some(3));
    assert_eq!(dropped[0].ordinal, 5, "INIT and COOKIE ECHO came first");
    assert_eq!(p.sim.link_stats(p.forward).impairment_drops, 1);
    // The record names the chunk it lost, and the retransmission carries it again.
    assert_eq!(dropped[0].data_tsns, vec![third]);
    assert!(dropped[0].lost());
    let carried: Vec<_> = log
        .iter()
        .filter(|r| r.data_tsns.contains(&third))
        .map(|r| r.lost())
        .collect();
    assert_eq!(carried, [true, false]);
    // Each record names its ends; packets without DATA carry no TSNs.
    assert!(log.iter().all(|r| (r.src, r.dst) == (p.client, p.server)));
    assert!(
        log.iter()
            .filter(|r| r.data_ordinal.is_none())
            .all(|r| r.data_tsns.is_empty())
    );
    // DATA TSNs run on, one a packet.
    let tsns: Vec<u32> = log.iter().flat_map(|r| r.data_tsns.clone()).collect();
    assert_eq!(tsns.len(), 21);
}

#[test]
fn data_tsns_reads_every_data_chunk_and_never_panics_on_garbage() {
    use brisk_proto::wire::chunk::data::{Data, DataFlags};
    use brisk_proto::wire::{Chunk, CommonHeader, Packet};
    let data = |tsn: u32| {
        Chunk::Data(Data {
            flags: DataFlags {
                immediate: false,
                unordered: false,
                beginning: true,
                ending: true,
            },
            tsn,
            stream_id: 0,
            ssn: 0,
            ppid: 0,
            payload: vec![1u8; 5].into(),
        })
    };
    let packet = Packet {
        header: CommonHeader {
            src_port: 1,
            dst_port: 2,
            verification_tag: 3,
            checksum: 0,
        },
        chunks: vec![data(7), data(9)],
    };
    let bytes = packet.to_bytes().unwrap();
    assert_eq!(brisk_sim::data_tsns(&bytes), vec![7, 9]);
    for cut in 0..bytes.len() {
        let tsns = brisk_sim::data_tsns(&bytes[..cut]);
        assert!(tsns.len() <= 2);
    }
    assert!(brisk_sim::data_tsns(&[0xff; 40]).is_empty());
}

#[test]
fn counting_every_packet_drops_the_handshake_instead() {
    // Ordinal 1 in all packets is the INIT: lost, then resent after T1-init.
    let lossy = link().with_impairments([Impairment::DropOrdinals {
        ordinals: vec![1],
        data_only: false,
    }]);
    let p = run_pair(1, 3, lossy, link());
    assert_eq!(p.numbers(), [0, 1, 2]);
    assert!(p.client().retransmissions.is_empty(), "no DATA was lost");
    let up = p.client().connected_at.unwrap();
    assert!(up > Time::from_secs(1), "waited for T1-init: {up}");
}

#[test]
fn a_corrupted_data_packet_counts_as_bad_checksum_and_is_recovered() {
    let noisy = link().with_impairments([Impairment::CorruptOrdinals {
        ordinals: vec![2],
        data_only: true,
    }]);
    let p = run_pair(1, 10, noisy, link());
    assert_eq!(p.numbers(), (0..10).collect::<Vec<_>>());
    assert_eq!(p.sim.endpoint_ref(p.server).stats().bad_checksum, 1);
    assert_eq!(p.sim.endpoint_ref(p.client).stats().bad_checksum, 0);
    let second = p.server().received[1].first_tsn;
    assert_eq!(p.client().retransmissions.len(), 1);
    assert_eq!(p.client().retransmissions[0].0, second);
    let stats = p.sim.link_stats(p.forward);
    assert_eq!(stats.corrupted, 1);
    assert_eq!(
        stats.sent, stats.delivered,
        "a corrupted packet is still delivered"
    );
}

#[test]
fn duplicated_packets_are_delivered_twice_and_messages_once() {
    let dup = link().with_impairments([Impairment::Duplicate { p: 1.0 }]);
    let p = run_pair(1, 5, dup, link());
    assert_eq!(p.numbers(), [0, 1, 2, 3, 4]);
    let stats = p.sim.link_stats(p.forward).clone();
    assert_eq!(stats.duplicated, stats.sent);
    assert_eq!(stats.delivered, 2 * stats.sent);
    assert!(p.sim.endpoint_ref(p.server).stats().packets_received >= 2 * stats.sent);
}

#[test]
fn a_loss_window_stalls_the_association_until_it_ends() {
    // Everything from the client is lost between 0 and 3 s: the INIT and its
    // retransmissions at 1 s and 3 s (T1-init doubling), so the handshake
    // completes only after the third INIT, sent at 3 s... which is at the end
    // of the window and therefore passes.
    let lossy = link().with_impairments(parse_pattern("window 0s 3s").unwrap());
    let p = run_pair(1, 2, lossy, link());
    assert_eq!(p.numbers(), [0, 1]);
    let up = p.client().connected_at.unwrap();
    assert!(
        up > Time::from_secs(3) && up < Time::from_millis(3100),
        "{up}"
    );
    assert_eq!(p.sim.link_stats(p.forward).impairment_drops, 2);
}

/// Sends 1000-byte garbage packets from host 0 to host 1 at time zero and
/// returns the sim and the a->b link.
fn raw_link(params: LinkParams, packets: usize) -> (Sim, brisk_sim::HostId, brisk_sim::LinkId) {
    let mut sim = Sim::new(3);
    let a = sim.add_host(
        addr(CLIENT_ADDR),
        EndpointConfig::default(),
        Box::new(Server::default()),
    );
    let b = sim.add_host(
        addr(SERVER_ADDR),
        EndpointConfig::default(),
        Box::new(Server::default()),
    );
    let (ab, _) = point_to_point(&mut sim, a, b, params, LinkParams::default());
    sim.trace(ab);
    for _ in 0..packets {
        sim.inject(a, addr(SERVER_ADDR), vec![0u8; 1000]);
    }
    (sim, b, ab)
}

#[test]
fn a_packet_arrives_exactly_after_serialization_and_propagation() {
    let (mut sim, b, ab) = raw_link(link(), 2);
    sim.run_until(Time::from_micros(18_223));
    assert_eq!(sim.endpoint_ref(b).stats().packets_received, 0);
    sim.run_until(Time::from_micros(18_224));
    assert_eq!(sim.endpoint_ref(b).stats().packets_received, 1);
    sim.run_until(Time::from_micros(26_447));
    assert_eq!(sim.endpoint_ref(b).stats().packets_received, 1);
    sim.run_until(Time::from_micros(26_448));
    assert_eq!(sim.endpoint_ref(b).stats().packets_received, 2);
    let arrivals: Vec<_> = sim
        .packet_log(ab)
        .iter()
        .map(|r| match r.fate {
            Fate::Sent { arrival, .. } => arrival,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        arrivals,
        [Time::from_micros(18_224), Time::from_micros(26_448)]
    );
}

#[test]
fn a_full_queue_drops_the_fourth_of_four_simultaneous_packets() {
    let (mut sim, b, ab) = raw_link(link().with_queue(QueueLimit::Packets(2)), 4);
    sim.run(LIMIT);
    let fates: Vec<bool> = sim
        .packet_log(ab)
        .iter()
        .map(|r| r.fate == Fate::QueueDrop)
        .collect();
    assert_eq!(fates, [false, false, false, true]);
    assert_eq!(sim.link_stats(ab).queue_drops, 1);
    assert_eq!(sim.endpoint_ref(b).stats().packets_received, 3);
}

#[test]
fn garbage_through_every_impairment_never_panics() {
    let imps = parse_pattern(
        "drop-data 1-50\ncorrupt-data-at 3\ncorrupt 0.3\nreorder 0.2 5ms\nduplicate 0.2\nbernoulli 0.1",
    )
    .unwrap();
    let (mut sim, b, ab) = raw_link(link().with_impairments(imps), 0);
    let a = sim.hosts().next().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for i in 0..2000 {
        let len = rng.random_range(0..80);
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        if i % 3 == 0 && len > 16 {
            bytes[12] = [0u8, 64][i % 2]; // looks like DATA / I-DATA
        }
        sim.inject(a, addr(SERVER_ADDR), bytes);
        sim.run_until(sim.now() + Duration::from_micros(100));
    }
    sim.run(LIMIT);
    let stats = sim.link_stats(ab);
    assert_eq!(stats.sent, 2000);
    let received = sim.endpoint_ref(b).stats().packets_received;
    assert_eq!(received, stats.delivered);
}

#[test]
fn packets_for_unknown_addresses_are_dropped_and_counted() {
    let (mut sim, _, _) = raw_link(link(), 0);
    let a = sim.hosts().next().unwrap();
    sim.inject(a, addr("10.9.9.9:9899"), vec![1, 2, 3]);
    sim.run(LIMIT);
    assert_eq!(sim.stats().unroutable, 1);
}

/// `n` senders 10.0.0.k, each sending 10 messages to its receiver 10.0.1.k.
fn flows(sim: &mut Sim, n: u8) -> (Vec<HostId>, Vec<HostId>) {
    let receivers = (1..=n)
        .map(|k| {
            sim.add_host(
                addr(&format!("10.0.1.{k}:9899")),
                EndpointConfig::default(),
                Box::new(Server::default()),
            )
        })
        .collect();
    let senders = (1..=n)
        .map(|k| {
            sim.add_host(
                addr(&format!("10.0.0.{k}:9899")),
                EndpointConfig::default(),
                Box::new(Client::new(addr(&format!("10.0.1.{k}:9899")), 10)),
            )
        })
        .collect();
    (senders, receivers)
}

#[test]
fn a_dumbbell_routes_every_pair_over_the_bottleneck() {
    let mut sim = Sim::new(11);
    let (senders, receivers) = flows(&mut sim, 3);
    let access = LinkParams::new(100_000_000, Duration::from_millis(1));
    let neck = LinkParams::new(1_000_000, Duration::from_millis(20));
    let (fwd, rev) = dumbbell(&mut sim, &senders, &receivers, access, neck.clone(), neck);
    let end = sim.run(LIMIT);
    assert!(end < LIMIT);
    for &r in &receivers {
        let got: Vec<u32> = sim
            .app::<Server>(r)
            .unwrap()
            .received
            .iter()
            .map(|m| m.number)
            .collect();
        assert_eq!(got, (0..10).collect::<Vec<_>>());
    }
    let stats = sim.stats();
    assert_eq!(stats.link(fwd).data_packets, 30);
    assert!(stats.link(rev).sent > 0);
    assert_eq!(stats.unroutable, 0);
    assert_eq!(stats.stalled_timers, 0, "no timer spun in place");
    let (from, to) = sim.link_ends(fwd);
    assert_ne!(from, to);
}

#[test]
fn a_per_flow_dumbbell_impairs_only_the_access_link_it_was_given() {
    let mut sim = Sim::new(12);
    let (senders, receivers) = flows(&mut sim, 2);
    let access = LinkParams::new(100_000_000, Duration::from_millis(1));
    let lossy = access.clone().with_impairments([drop_data(vec![2])]);
    let neck = LinkParams::new(1_000_000, Duration::from_millis(20));
    let links = brisk_sim::dumbbell_per_flow(
        &mut sim,
        &senders,
        &receivers,
        &[access.clone(), lossy],
        access,
        neck.clone(),
        neck,
    );
    sim.trace_all();
    assert_eq!(sim.links().count(), 10);
    sim.run(LIMIT);
    for &r in &receivers {
        assert_eq!(sim.app::<Server>(r).unwrap().received.len(), 10);
    }
    let stats = sim.stats();
    assert_eq!(stats.link(links.sender_access[0].0).impairment_drops, 0);
    assert_eq!(stats.link(links.sender_access[1].0).impairment_drops, 1);
    let lost: Vec<_> = sim
        .packet_log(links.sender_access[1].0)
        .iter()
        .filter(|r| r.lost())
        .map(|r| (r.src, r.dst, r.data_tsns.len()))
        .collect();
    assert_eq!(lost, [(senders[1], receivers[1], 1)]);
    // The bottleneck carries both flows, each record naming its sender.
    let log = sim.packet_log(links.bottleneck.0);
    assert!(log.iter().any(|r| r.src == senders[0]) && log.iter().any(|r| r.src == senders[1]));
}

/// A full run under Bernoulli loss both ways, captured both ways.
fn captured_run(seed: u64) -> (Vec<u8>, Vec<u8>, brisk_sim::SimStats, Vec<u32>) {
    let lossy = || link().with_impairments([Impairment::Bernoulli { p: 0.1 }]);
    let mut p = pair(seed, Client::new(addr(SERVER_ADDR), 40), lossy(), lossy());
    let (fwd, back) = (SharedBuf::default(), SharedBuf::default());
    p.sim.capture(p.forward, Box::new(fwd.clone()));
    p.sim.capture(p.back, Box::new(back.clone()));
    p.sim.run(LIMIT);
    p.sim.finish_captures().unwrap();
    assert_eq!(p.numbers(), (0..40).collect::<Vec<_>>(), "seed {seed}");
    (fwd.bytes(), back.bytes(), p.sim.stats(), p.numbers())
}

#[test]
fn the_same_seed_gives_byte_identical_captures_and_stats() {
    let (f1, b1, s1, _) = captured_run(7);
    let (f2, b2, s2, _) = captured_run(7);
    assert!(f1.len() > 24 && b1.len() > 24);
    assert_eq!(f1, f2);
    assert_eq!(b1, b2);
    assert_eq!(s1, s2);
    let drops: u64 = s1.links.iter().map(|l| l.impairment_drops).sum();
    assert!(drops > 0, "Bernoulli loss acted");
}

#[test]
fn a_different_seed_with_bernoulli_loss_differs() {
    let (f1, _, s1, _) = captured_run(7);
    let (f2, _, s2, _) = captured_run(8);
    assert_ne!(f1, f2);
    assert_ne!(s1, s2);
}

#[test]
fn changing_one_links_impairments_leaves_another_links_draws_alone() {
    // Two hosts with a lossy a->b direction; the b->a direction's loss
    // changes. a->b drops the same packets either way.
    let fates = |back_loss: f64| {
        let mut sim = Sim::new(21);
        let a = sim.add_host(
            addr(CLIENT_ADDR),
            EndpointConfig::default(),
            Box::new(Server::default()),
        );
        let b = sim.add_host(
            addr(SERVER_ADDR),
            EndpointConfig::default(),
            Box::new(Server::default()),
        );
        let lossy = |p| link().with_impairments([Impairment::Bernoulli { p }]);
        let (ab, _) = point_to_point(&mut sim, a, b, lossy(0.3), lossy(back_loss));
        sim.trace(ab);
        for i in 0..300u32 {
            sim.inject(a, addr(SERVER_ADDR), i.to_be_bytes().to_vec());
            sim.inject(b, addr(CLIENT_ADDR), i.to_be_bytes().to_vec());
            sim.run_until(sim.now() + Duration::from_millis(1));
        }
        sim.run(LIMIT);
        sim.packet_log(ab)
            .iter()
            .map(|r| r.fate == Fate::ImpairmentDrop)
            .collect::<Vec<_>>()
    };
    let base = fates(0.0);
    assert!(base.iter().any(|&d| d));
    assert_eq!(base, fates(0.5));
}

/// Sets timers at start and records when each fired.
#[derive(Default)]
struct Timers {
    fired: Vec<(Time, u64)>,
}

impl brisk_sim::App for Timers {
    fn start(&mut self, ctx: &mut brisk_sim::AppCtx<'_>) {
        let now = ctx.now();
        ctx.set_timer(now + Duration::from_millis(5), 2);
        ctx.set_timer(now + Duration::from_millis(1), 1);
        ctx.set_timer(now + Duration::from_millis(5), 3);
    }

    fn on_event(
        &mut self,
        _: &mut brisk_sim::AppCtx<'_>,
        _: brisk_proto::AssocId,
        _: &brisk_proto::Event,
    ) {
    }

    fn on_timer(&mut self, ctx: &mut brisk_sim::AppCtx<'_>, token: u64) {
        self.fired.push((ctx.now(), token));
        if token == 3 {
            // A time in the past means now.
            ctx.set_timer(Time::ZERO, 4);
        }
    }
}

#[test]
fn app_timers_fire_at_their_times_in_the_order_set() {
    let mut sim = Sim::new(1);
    let h = sim.add_host(
        addr(CLIENT_ADDR),
        EndpointConfig::default(),
        Box::new(Timers::default()),
    );
    assert!(sim.app::<Server>(h).is_none(), "downcast to the wrong type");
    let end = sim.run(LIMIT);
    assert_eq!(end, Time::from_millis(5), "stopped at the last timer");
    let ms = Time::from_millis;
    assert_eq!(
        sim.app::<Timers>(h).unwrap().fired,
        [(ms(1), 1), (ms(5), 2), (ms(5), 3), (ms(5), 4)]
    );
    sim.app_mut::<Timers>(h).unwrap().fired.clear();
    assert!(sim.app::<Timers>(h).unwrap().fired.is_empty());
}

#[test]
fn what_is_done_through_the_endpoint_from_outside_goes_out_on_the_next_run() {
    // Two passive hosts; the test connects one from outside the simulation.
    let (mut sim, b, ab) = raw_link(link(), 0);
    let a = sim.hosts().next().unwrap();
    sim.run_until(Time::from_secs(1));
    let cfg = brisk_proto::Config::rfc9260();
    sim.endpoint(a)
        .connect(Time::from_secs(1), addr(SERVER_ADDR), cfg)
        .unwrap();
    assert_eq!(sim.link_stats(ab).sent, 0, "nothing left before the run");
    sim.run_until(Time::from_secs(2));
    assert_eq!(sim.endpoint_ref(a).association_count(), 1);
    assert_eq!(sim.endpoint_ref(b).association_count(), 1);
    let init = sim.packet_log(ab)[0].clone();
    assert_eq!(init.entered, Time::from_secs(1));
}
