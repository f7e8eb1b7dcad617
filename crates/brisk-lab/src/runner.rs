//! Runs an experiment: expands the sweep, the variants, the replications and
//! (for loss-position experiments) the loss positions into simulator runs,
//! runs them in parallel with seeded randomness, and collects one record per
//! measured value.

use std::net::SocketAddr;
use std::time::Duration;

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};

use brisk_proto::Time;
use brisk_proto::serial::lt32;
use brisk_sim::{HostId, Impairment, LinkId, LinkParams, QueueLimit, Sim};
use indicatif::ProgressBar;
use rayon::prelude::*;

use crate::experiment::{
    Dim, DualHomed, Experiment, Figure, Method, PathSpec, Point, PointIdx, Traffic, Window,
};
use crate::hosts::{FlowHosts, FlowRecord, FlowSetup, add_sctp_flow, add_tcp_flow};
use crate::traffic::{Planned, Retransmitted, Saturation, plan};
use brisk_sim::transport::TCP_MESSAGE_PREFIX;

/// One simulator run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunKey {
    /// The sweep point (indices into each dimension's values).
    pub point: PointIdx,
    pub variant: usize,
    pub replication: u32,
    /// For loss-position runs: the 1-based DATA packet dropped.
    pub position: Option<u64>,
}

/// One measured value.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub experiment: String,
    pub variant: String,
    pub bandwidth_kbps: u64,
    pub delay_ms: f64,
    pub replication: u32,
    /// The loss position: the message whose first transmission the run
    /// dropped (loss-position runs).
    pub position: Option<u64>,
    /// The flow (sender/receiver pair) measured; 0 on a point-to-point link.
    pub flow: u32,
    /// The message measured, numbered from 1 like seed 000's TSN axis.
    pub tsn: Option<u64>,
    pub metric: String,
    pub value: f64,
    /// The values of the sweep dimensions beyond bandwidth and delay, for
    /// experiments that sweep them or draw flow figures; `None` otherwise
    /// (seed 000's millions of records stay small).
    pub sweep: Option<Box<SweepValues>>,
}

/// The values of a run's sweep point beyond bandwidth and delay.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SweepValues {
    /// The size of every message of the run, when they are all alike.
    pub message_size: Option<usize>,
    /// The Bernoulli loss rate, packet error rate, message rate (messages
    /// per second) and IP MTU of the point, when swept.
    pub loss: Option<f64>,
    pub corrupt: Option<f64>,
    pub rate: Option<f64>,
    pub mtu: Option<usize>,
}

impl Record {
    /// A record of run `key` at sweep point `point` with `traffic`, its
    /// variant, message, metric and value still to be filled in.
    pub(crate) fn base(exp: &Experiment, key: &RunKey, point: &Point, traffic: &Traffic) -> Record {
        Record {
            experiment: exp.name.clone(),
            variant: String::new(),
            bandwidth_kbps: point.bandwidth_bps / 1000,
            delay_ms: point.delay.as_secs_f64() * 1000.0,
            replication: key.replication,
            position: key.position,
            flow: 0,
            tsn: None,
            metric: String::new(),
            value: 0.0,
            sweep: exp.records_sweep_values().then(|| {
                Box::new(SweepValues {
                    message_size: traffic.message_size(),
                    loss: point.loss,
                    corrupt: point.corrupt,
                    rate: point.rate,
                    mtu: point.mtu,
                })
            }),
        }
    }

    pub fn message_size(&self) -> Option<usize> {
        self.sweep.as_ref().and_then(|s| s.message_size)
    }
    pub fn loss(&self) -> Option<f64> {
        self.sweep.as_ref().and_then(|s| s.loss)
    }
    pub fn corrupt(&self) -> Option<f64> {
        self.sweep.as_ref().and_then(|s| s.corrupt)
    }
    pub fn rate(&self) -> Option<f64> {
        self.sweep.as_ref().and_then(|s| s.rate)
    }
    pub fn mtu(&self) -> Option<usize> {
        self.sweep.as_ref().and_then(|s| s.mtu)
    }
}

/// One CSV row: the record's fields, then the sweep values (empty when none).
impl serde::Serialize for Record {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Record", 15)?;
        s.serialize_field("experiment", &self.experiment)?;
        s.serialize_field("variant", &self.variant)?;
        s.serialize_field("bandwidth_kbps", &self.bandwidth_kbps)?;
        s.serialize_field("delay_ms", &self.delay_ms)?;
        s.serialize_field("replication", &self.replication)?;
        s.serialize_field("position", &self.position)?;
        s.serialize_field("flow", &self.flow)?;
        s.serialize_field("tsn", &self.tsn)?;
        s.serialize_field("metric", &self.metric)?;
        s.serialize_field("value", &self.value)?;
        s.serialize_field("message_size", &self.message_size())?;
        s.serialize_field("loss", &self.loss())?;
        s.serialize_field("corrupt", &self.corrupt())?;
        s.serialize_field("rate", &self.rate())?;
        s.serialize_field("mtu", &self.mtu())?;
        s.end()
    }
}

/// Counters of a whole experiment run, for the report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunTotals {
    pub runs: u64,
    pub sim_events: u64,
    pub virtual_time: Duration,
    /// Runs in which some message never arrived before the time limit.
    pub incomplete: u64,
}

/// Time the receiver has to associate before the first message (it starts
/// the association, as in seed 000).
const LEAD: Duration = Duration::from_millis(500);
/// Extra virtual time after the last write for recovery to finish.
const TAIL: Duration = Duration::from_secs(30);

/// The (traffic, simulation) seeds of a run: the emulator's runs use the
/// same, so their traffic plan and impairments' draws match the simulator's.
pub(crate) fn seeds(exp: &Experiment, key: &RunKey) -> (u64, u64) {
    seed_for(exp, key)
}

fn seed_for(exp: &Experiment, key: &RunKey) -> (u64, u64) {
    // The traffic plan depends on the sweep point and replication only, so
    // variants and loss positions are compared on the same traffic.
    let mix = |parts: &[u64]| {
        parts.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
            (h ^ x).wrapping_mul(0x0100_0000_01b3).rotate_left(17)
        })
    };
    let p = &key.point;
    let mut traffic = mix(&[
        exp.seed,
        p.get(Dim::Bandwidth) as u64,
        p.get(Dim::Delay) as u64,
        u64::from(key.replication),
    ]);
    // The later dimensions enter only where they are off their first value,
    // so a file that sweeps bandwidth and delay alone keeps its seeds.
    let extra: Vec<u64> = Dim::ALL
        .into_iter()
        .filter(|d| !d.is_link())
        .map(|d| p.get(d) as u64)
        .collect();
    if extra.iter().any(|&i| i > 0) {
        let mut parts = vec![traffic];
        parts.extend(extra);
        traffic = mix(&parts);
    }
    let sim = mix(&[traffic, key.variant as u64, key.position.unwrap_or(0)]);
    (traffic, sim)
}

/// The runs an experiment consists of, in a fixed order.
pub fn expand(exp: &Experiment) -> Vec<RunKey> {
    let mut keys = Vec::new();
    for point in exp.points() {
        let values = exp.point(&point);
        for replication in 0..exp.replications {
            // Loss positions are those of measured messages, which depend on
            // the replication's traffic plan.
            let traffic_seed = seed_for(
                exp,
                &RunKey {
                    point,
                    variant: 0,
                    replication,
                    position: None,
                },
            )
            .0;
            let planned = plan(
                &exp.traffic.at(values.message_size, values.rate),
                traffic_seed,
            );
            // Flows with variants of their own (seed 004's SCTP against TCP)
            // run each point once, under the first variant's number.
            let fixed = exp
                .topology
                .dumbbell
                .as_ref()
                .is_some_and(|d| d.flow_variants.is_some());
            let runs = if fixed { 1 } else { exp.variants.len() };
            // The competing flow's variant has no run of its own.
            let competing = exp.competing.as_ref().and_then(|c| c.variant);
            for (variant, v) in exp.variants.iter().enumerate().take(runs) {
                if Some(variant) == competing {
                    continue;
                }
                if exp.method == Method::LossPosition && !v.no_loss {
                    for (i, m) in planned.iter().enumerate() {
                        if m.measured {
                            keys.push(RunKey {
                                point,
                                variant,
                                replication,
                                position: Some(i as u64 + 1),
                            });
                        }
                    }
                } else {
                    keys.push(RunKey {
                        point,
                        variant,
                        replication,
                        position: None,
                    });
                }
            }
        }
    }
    keys
}

/// The number (1-based, in TSN order) of each planned message's first chunk,
/// when messages go out in plan order cut into chunks of `payload` bytes.
fn first_chunk_numbers(plan: &[Planned], payload: usize) -> Vec<u64> {
    let mut next = 1u64;
    plan.iter()
        .map(|m| {
            let first = next;
            next += m.size.div_ceil(payload.max(1)).max(1) as u64;
            first
        })
        .collect()
}

/// The planned messages (0-based) that the dropped chunks belong to.
fn lost_messages(dropped: &[u64], first_chunks: &[u64]) -> Vec<usize> {
    let mut out: Vec<usize> = dropped
        .iter()
        .filter_map(|&c| first_chunks.partition_point(|&f| f <= c).checked_sub(1))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// What one run produced.
struct Outcome {
    records: Vec<Record>,
    events: u64,
    virtual_time: Duration,
    complete: bool,
}

/// Impairments a sweep point adds to the forward bottleneck.
fn point_impairments(p: &Point) -> Vec<Impairment> {
    let mut out = Vec::new();
    if let Some(p) = p.loss.filter(|p| *p > 0.0) {
        out.push(Impairment::Bernoulli { p });
    }
    if let Some(p) = p.corrupt.filter(|p| *p > 0.0) {
        out.push(Impairment::Corrupt { p });
    }
    out
}

/// One flow's hosts, traffic and the link directions its data crosses.
struct Flow {
    hosts: FlowHosts,
    sender: HostId,
    /// The most payload one packet carries: cwnd in packets is cwnd / this.
    segment: usize,
    plan: Vec<Planned>,
    variant: String,
    /// Forward path, first hop first (dual-homed: the primary and the
    /// secondary path's forward link).
    path: Vec<LinkId>,
    /// The link directions the sender's packets enter first: the path's
    /// first hop, or both paths' of a dual-homed topology.
    first_hops: Vec<LinkId>,
    /// Records the share of messages delivered and abandoned: the variant
    /// sends unordered or partially reliable messages, or offers partial
    /// reliability (other flows deliver every message, and keep their rows).
    delivery: bool,
    /// A competing bulk flow's sender that always has data, and its warm-up.
    saturated: Option<(Saturation, Duration)>,
}

/// What a traced run keeps of its first flow's sender, for sequence and
/// cwnd figures: its congestion state over time, and every packet it sent
/// onto its first hop with that packet's fate.
#[derive(Debug, Clone, Default)]
pub struct RunTrace {
    pub congestion: Vec<(Time, brisk_sim::Congestion)>,
    pub packets: Vec<brisk_sim::PacketRecord>,
    /// The most payload one packet of the sender carries.
    pub segment: usize,
}

/// Runs run `key` of `exp` (simulated) again with its first flow traced.
pub fn trace_run(exp: &Experiment, key: &RunKey) -> Result<RunTrace, String> {
    let mut trace = RunTrace::default();
    run_one(exp, key, None, Some(&mut trace))?;
    Ok(trace)
}

fn run_one(
    exp: &Experiment,
    key: &RunKey,
    capture: Option<&std::path::Path>,
    trace: Option<&mut RunTrace>,
) -> Result<Outcome, String> {
    let run = RunPlan::new(exp, key);
    let mut net = build(exp, key, &run);
    watch(exp, &mut net, trace.is_some());
    if let Some(path) = capture {
        let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        // Every link direction, both ways, each packet with its fate.
        net.sim
            .capture_pcapng(Box::new(std::io::BufWriter::new(file)));
    }
    play(&mut net, &run);
    if capture.is_some() {
        net.sim
            .finish_captures()
            .map_err(|e| format!("writing the capture: {e}"))?;
    }
    if let Some(t) = trace {
        keep_trace(&net, t);
    }
    Ok(measure(exp, key, &run, &mut net))
}

/// What run `key` plays: its sweep point, its traffic and flow 0's plan.
struct RunPlan {
    traffic_seed: u64,
    sim_seed: u64,
    point: Point,
    traffic: Traffic,
    planned: Vec<Planned>,
    /// Saturated traffic: the sender's job, and the warm-up before goodput
    /// is measured.
    saturated: Option<(Saturation, Duration)>,
    /// A dual-homed topology's outage windows in this run: (primary,
    /// secondary), random starts drawn per sweep point and replication.
    outages: Option<(Vec<Window>, Vec<Window>)>,
}

/// Salt of the random stream that draws a dual-homed run's outage starts
/// from its traffic seed (the same for every variant).
const OUTAGE_STREAM: u64 = 0x6f75_7461_6765_7331;

impl RunPlan {
    /// When the primary path's first outage starts in this run.
    fn outage_start(&self) -> Option<Time> {
        let (primary, _) = self.outages.as_ref()?;
        let from = primary.iter().map(|w| w.0).min()?;
        Some(Time::from_micros(
            u64::try_from(from.as_micros()).unwrap_or(u64::MAX),
        ))
    }
}

impl RunPlan {
    fn new(exp: &Experiment, key: &RunKey) -> RunPlan {
        let (traffic_seed, sim_seed) = seed_for(exp, key);
        let point = exp.point(&key.point);
        let traffic = exp.traffic.at(point.message_size, point.rate);
        let planned = plan(&traffic, traffic_seed);
        let saturated = match traffic {
            Traffic::Saturated {
                duration,
                warmup,
                message_size,
                packing,
            } => Some((
                Saturation {
                    message_size,
                    duration,
                    packing,
                },
                warmup,
            )),
            _ => None,
        };
        let outages = exp.topology.dual_homed.as_ref().map(|d| {
            use rand::SeedableRng;
            d.windows(&mut rand_chacha::ChaCha8Rng::seed_from_u64(
                traffic_seed ^ OUTAGE_STREAM,
            ))
        });
        RunPlan {
            traffic_seed,
            sim_seed,
            point,
            traffic,
            planned,
            saturated,
            outages,
        }
    }
}

/// A run's network, built: the simulator, its flows and its bottleneck, and
/// how the loss-position method finds flow 0's messages on the wire.
struct Net {
    sim: Sim,
    flows: Vec<Flow>,
    bottleneck: LinkId,
    /// Flow 0 runs TCP: loss positions count stream bytes, not chunks.
    tcp0: bool,
    /// The number of flow 0's planned messages' first chunks.
    first_chunks: Vec<u64>,
    /// TCP: each message is its length prefix and its body on the stream.
    frame: u64,
    /// A dual-homed topology's paths.
    dual: Option<brisk_sim::DualHomedLinks>,
    /// The link directions whose sender bytes count as the cost: the
    /// bottleneck, or both paths' forward links of a dual-homed topology.
    cost_links: Vec<LinkId>,
}

/// The variant flow `f` runs: its own in a dumbbell with `flow_variants`,
/// the competing one's for the last flow of an experiment with
/// `[competing]`, else the run's.
fn flow_variant(exp: &Experiment, key: &RunKey, f: u32) -> usize {
    if let Some(c) = competing_flow(exp, f) {
        return c;
    }
    exp.topology
        .dumbbell
        .as_ref()
        .and_then(|d| d.flow_variants.as_ref())
        .and_then(|v| v.get(f as usize).copied())
        .unwrap_or(key.variant)
}

/// The competing variant, if flow `f` is the competing flow: the last of
/// the dumbbell.
fn competing_flow(exp: &Experiment, f: u32) -> Option<usize> {
    let flows = exp.topology.dumbbell.as_ref()?.flows;
    let c = exp.competing.as_ref()?.variant?;
    (f + 1 == flows).then_some(c)
}

/// The simulator of run `key`: every flow's hosts, then the links with the
/// forward bottleneck's impairments.
fn build(exp: &Experiment, key: &RunKey, run: &RunPlan) -> Net {
    let mut sim = Sim::new(run.sim_seed);
    let flows = exp.topology.dumbbell.as_ref().map_or(1, |d| d.flows);
    // The largest DATA payload of flow 0's sender: how its messages are cut
    // into chunks, which the loss-position method numbers.
    let mut chunk_payload = 1;
    let mut pairs = Vec::new();
    for f in 0..flows {
        let (flow, payload) = add_flow(&mut sim, exp, key, run, f);
        if let (0, Some(p)) = (f, payload) {
            chunk_payload = p;
        }
        pairs.push(flow);
    }
    let tcp0 = exp.variants[flow_variant(exp, key, 0)].tcp.is_some();
    // Loss-position runs drop the first transmission of message k's first
    // chunk, found by TSN: retransmissions and redundant copies sent before
    // it do not move the loss onto another message.
    let first_chunks = first_chunk_numbers(&run.planned, chunk_payload);
    let frame = run.traffic.message_size().unwrap_or(0) as u64 + TCP_MESSAGE_PREFIX as u64;
    let mut forward = position_drop(key, tcp0, &first_chunks, frame);
    for line in &exp.impairments {
        forward.extend(brisk_sim::parse_pattern(line).unwrap_or_default());
    }
    forward.extend(point_impairments(&run.point));
    let (bottleneck, dual) = match &exp.topology.dual_homed {
        Some(d) => {
            let links = add_dual_homed_links(&mut sim, exp, d, run, &mut pairs[0], forward);
            (links.primary.0, Some(links))
        }
        None => (
            add_links(&mut sim, exp, &run.point, &mut pairs, forward),
            None,
        ),
    };
    let cost_links = match dual {
        Some(d) => vec![d.primary.0, d.secondary.0],
        None => vec![bottleneck],
    };
    Net {
        sim,
        flows: pairs,
        bottleneck,
        tcp0,
        first_chunks,
        frame,
        dual,
        cost_links,
    }
}

/// Flow `f`'s sender and receiver, with its variant's configs at the run's
/// point; for SCTP also its sender's largest DATA payload.
fn add_flow(
    sim: &mut Sim,
    exp: &Experiment,
    key: &RunKey,
    run: &RunPlan,
    f: u32,
) -> (Flow, Option<usize>) {
    let v = &exp.variants[flow_variant(exp, key, f)];
    let n = (f + 1) as u8;
    // A competing flow: bulk for as long as flow 0's messages are written.
    let competing = competing_flow(exp, f).and(exp.competing.as_ref());
    let saturated = match competing {
        Some(c) => Some((
            Saturation {
                message_size: c.message_size,
                duration: run.planned.last().map(|m| m.offset).unwrap_or_default()
                    + Duration::from_secs(1),
                packing: Default::default(),
            },
            c.warmup,
        )),
        None => run.saturated,
    };
    // Each flow gets its own traffic draw, the same for every variant.
    let flow_plan = if f == 0 {
        run.planned.clone()
    } else if competing.is_some() {
        Vec::new()
    } else {
        plan(&run.traffic, run.traffic_seed ^ (u64::from(f) << 32))
    };
    // A dual-homed flow's second addresses, on the secondary path.
    let (sender_more, receiver_more) = match exp.topology.dual_homed {
        Some(_) => (
            vec![SocketAddr::from(([10, 0, 3, n], 9899))],
            vec![SocketAddr::from(([10, 0, 4, n], 9899))],
        ),
        None => (Vec::new(), Vec::new()),
    };
    let setup = FlowSetup {
        sender_addr: SocketAddr::from(([10, 0, 1, n], 9899)),
        receiver_addr: SocketAddr::from(([10, 0, 2, n], 9899)),
        sender_more,
        receiver_more,
        plan: flow_plan,
        lead: LEAD,
        saturated,
        // Loss-position runs measure the lost message's MTT alone.
        first_sent: exp.method != Method::LossPosition,
        options: v.send,
    };
    let mtu = run.point.mtu;
    let mut delivery = !v.send.is_default();
    let (hosts, segment, payload) = match &v.tcp {
        Some(tcp) => {
            let (mut sender, mut receiver) = (tcp.sender.clone(), tcp.receiver.clone());
            if let Some(mtu) = mtu {
                // IPv4 and TCP headers, no options on data segments.
                sender.mss = u32::try_from(mtu.saturating_sub(40).max(1)).unwrap_or(u32::MAX);
                receiver.mss = sender.mss;
            }
            let segment = sender.mss as usize;
            (add_tcp_flow(sim, &setup, sender, receiver), segment, None)
        }
        None => {
            let (mut sender, mut receiver) = v.configs(f as usize);
            if let Some(mtu) = mtu {
                let sctp = mtu.saturating_sub(exp.topology.overhead_bytes);
                sender.mtu = sctp;
                receiver.mtu = sctp;
            }
            let segment = sender.max_data_payload();
            delivery |= sender.partial_reliability;
            let hosts = add_sctp_flow(sim, &setup, sender, receiver);
            (hosts, segment, Some(segment))
        }
    };
    let flow = Flow {
        hosts,
        sender: hosts.sender,
        segment,
        plan: setup.plan,
        // The competing flow's records carry the run's variant.
        variant: match competing {
            Some(_) => exp.variants[key.variant].name.clone(),
            None => v.name.clone(),
        },
        path: Vec::new(),
        first_hops: Vec::new(),
        delivery,
        saturated,
    };
    (flow, payload)
}

/// The drop a loss-position run makes on the forward bottleneck.
fn position_drop(key: &RunKey, tcp0: bool, first_chunks: &[u64], frame: u64) -> Vec<Impairment> {
    match key.position {
        // The segment that first sends message k's first byte, however the
        // sender packs messages into segments.
        Some(k) if tcp0 => vec![Impairment::DropNewBytes {
            bytes: vec![(k - 1) * frame + 1],
        }],
        Some(k) => first_chunks
            .get((k - 1) as usize)
            .map(|&chunk| Impairment::DropNewChunks {
                chunks: vec![chunk],
            })
            .into_iter()
            .collect(),
        None => Vec::new(),
    }
}

/// The links: one between the two hosts, or a dumbbell with an access link
/// per host; sets each flow's forward path and returns the bottleneck's
/// forward direction.
fn add_links(
    sim: &mut Sim,
    exp: &Experiment,
    point: &Point,
    pairs: &mut [Flow],
    forward: Vec<Impairment>,
) -> LinkId {
    let link = |impairments: Vec<Impairment>| LinkParams {
        bandwidth_bps: point.bandwidth_bps,
        delay: point.delay,
        queue: QueueLimit::Packets(exp.topology.queue_packets),
        overhead_bytes: exp.topology.overhead_bytes,
        impairments,
    };
    let Some(d) = &exp.topology.dumbbell else {
        let (sn, rn) = (sim.node(pairs[0].sender), sim.node(pairs[0].hosts.receiver));
        let fwd = sim.link(sn, rn, link(forward), link(Vec::new())).0;
        pairs[0].path = vec![fwd];
        pairs[0].first_hops = vec![fwd];
        return fwd;
    };
    let senders: Vec<_> = pairs.iter().map(|p| p.sender).collect();
    let receivers: Vec<_> = pairs.iter().map(|p| p.hosts.receiver).collect();
    let access = LinkParams {
        bandwidth_bps: d.access_bandwidth_bps,
        delay: d.access_delay,
        queue: QueueLimit::Packets(exp.topology.queue_packets),
        overhead_bytes: exp.topology.overhead_bytes,
        impairments: Vec::new(),
    };
    let sender_access: Vec<LinkParams> = (0..senders.len())
        .map(|f| {
            let lines = d.access_impairments.get(f).map_or(&[][..], Vec::as_slice);
            let mut a = access.clone();
            for line in lines {
                a.impairments
                    .extend(brisk_sim::parse_pattern(line).unwrap_or_default());
            }
            a
        })
        .collect();
    let links = brisk_sim::dumbbell_per_flow(
        sim,
        &senders,
        &receivers,
        &sender_access,
        access,
        link(forward),
        link(Vec::new()),
    );
    for (f, pair) in pairs.iter_mut().enumerate() {
        pair.path = vec![
            links.sender_access[f].0,
            links.bottleneck.0,
            links.receiver_access[f].0,
        ];
        pair.first_hops = vec![links.sender_access[f].0];
    }
    links.bottleneck.0
}

/// A dual-homed topology's two paths between the flow's hosts, each a
/// duplex link: the primary's forward direction takes `forward` (the
/// bottleneck's impairments) before its own; each direction of a path
/// drops everything in the path's outage windows of this run.
fn add_dual_homed_links(
    sim: &mut Sim,
    exp: &Experiment,
    d: &DualHomed,
    run: &RunPlan,
    flow: &mut Flow,
    forward: Vec<Impairment>,
) -> brisk_sim::DualHomedLinks {
    let (primary_windows, secondary_windows) = run.outages.clone().unwrap_or_default();
    let point = &run.point;
    let link = |spec: &PathSpec,
                mut impairments: Vec<Impairment>,
                lines: &[String],
                windows: &[Window]| {
        for line in lines {
            impairments.extend(brisk_sim::parse_pattern(line).unwrap_or_default());
        }
        impairments.extend(
            windows
                .iter()
                .map(|&(from, to)| Impairment::DropWindow { from, to }),
        );
        LinkParams {
            bandwidth_bps: spec.bandwidth_bps.unwrap_or(point.bandwidth_bps),
            delay: spec.delay.unwrap_or(point.delay),
            queue: QueueLimit::Packets(spec.queue_packets.unwrap_or(exp.topology.queue_packets)),
            overhead_bytes: exp.topology.overhead_bytes,
            impairments,
        }
    };
    let (p, s) = (&d.primary, &d.secondary);
    let links = brisk_sim::dual_homed(
        sim,
        flow.sender,
        flow.hosts.receiver,
        (
            link(p, forward, &p.impairments, &primary_windows),
            link(p, Vec::new(), &p.reverse_impairments, &primary_windows),
        ),
        (
            link(s, Vec::new(), &s.impairments, &secondary_windows),
            link(s, Vec::new(), &s.reverse_impairments, &secondary_windows),
        ),
    );
    flow.path = vec![links.primary.0, links.secondary.0];
    flow.first_hops = flow.path.clone();
    links
}

/// What the simulator records for the measurements: arrivals and cwnd for
/// seed 004's delay table, flow 0's first hop and cwnd for a traced run,
/// and every packet on every path of a flow run.
fn watch(exp: &Experiment, net: &mut Net, traced: bool) {
    let (sim, flows) = (&mut net.sim, &net.flows);
    // Seed 004's delay: every packet that reaches a receiver, with the time
    // it was sent.
    if exp.figure == Figure::DelayTable {
        for p in flows {
            sim.log_arrivals(p.hosts.receiver);
            sim.trace_congestion(p.sender);
        }
    }
    // Failover: which path delivered each datagram to the receiver, and
    // what the sender put on each path.
    if net.dual.is_some() {
        for p in flows {
            sim.log_arrivals(p.hosts.receiver);
            for &l in &p.first_hops {
                sim.trace(l);
            }
        }
    }
    if traced {
        sim.trace_congestion(flows[0].sender);
        if let Some(&first) = flows[0].path.first() {
            sim.trace(first);
        }
    }
    // Flow runs record every packet: which chunks were really lost, and how
    // many packets each sender sent.
    if exp.method == Method::Flow {
        for p in flows {
            for &l in &p.path {
                sim.trace(l);
            }
        }
    }
}

/// Runs the simulator to the end of the run: the measurement window of
/// saturated traffic, else until every message has been read (or the time
/// limit).
fn play(net: &mut Net, run: &RunPlan) {
    let last = net
        .flows
        .iter()
        .filter_map(|p| p.plan.last())
        .map(|m| m.offset)
        .max()
        .unwrap_or(Duration::ZERO);
    let limit = match run.saturated {
        // A saturated run ends when its measurement window does.
        Some((s, _)) => Time::ZERO + LEAD + s.duration + Duration::from_secs(1),
        None => Time::ZERO + LEAD + last + TAIL + Duration::from_secs(5),
    };
    // Advance in steps, stopping as soon as every message has been read.
    let mut t = Time::ZERO;
    loop {
        t = t + Duration::from_millis(500);
        net.sim.run_until(t.min(limit));
        // A competing flow (saturated alone) is done when its time is up.
        let done = run.saturated.is_none()
            && net.flows.iter().all(|p| match p.saturated {
                Some((s, _)) => t >= Time::ZERO + LEAD + s.duration,
                None => p.hosts.complete(&net.sim),
            });
        if done || t >= limit {
            break;
        }
    }
}

/// A traced run's first flow: its sender's cwnd over time and the packets
/// it sent onto its first hop.
fn keep_trace(net: &Net, t: &mut RunTrace) {
    let first_flow = &net.flows[0];
    t.congestion = net.sim.congestion_log(first_flow.sender).to_vec();
    t.segment = first_flow.segment;
    if let Some(&first) = first_flow.path.first() {
        t.packets = net
            .sim
            .packet_log(first)
            .iter()
            .filter(|p| p.src == first_flow.sender)
            .cloned()
            .collect();
    }
}

/// The records of a played run: each flow's measurements, then the flows'
/// shares.
fn measure(exp: &Experiment, key: &RunKey, run: &RunPlan, net: &mut Net) -> Outcome {
    let events = net.sim.stats().events;
    let virtual_time = Duration::from_micros(net.sim.now().as_micros());
    let stats = net.sim.link_stats(net.bottleneck);
    let bottleneck = Bottleneck {
        bytes: stats.bytes,
        packets: stats.sent,
        dropped: stats.dropped_new_chunks.clone(),
    };
    let flow_records: Vec<Option<FlowRecord>> = net
        .flows
        .iter()
        .map(|flow| flow.hosts.take(&mut net.sim))
        .collect();
    let net = &*net;
    let base = Record::base(exp, key, &run.point, &run.traffic);
    let mut records = Vec::new();
    let mut complete = true;
    let mut goodputs = Vec::new();
    for (f, flow) in net.flows.iter().enumerate() {
        let Some(r) = &flow_records[f] else {
            complete = false;
            continue;
        };
        complete &= flow.saturated.is_some() || r.complete();
        let mut m = FlowMeter {
            exp,
            key,
            run,
            net,
            f,
            flow,
            r,
            bottleneck: &bottleneck,
            base: &base,
            records: &mut records,
        };
        if let Some(goodput) = m.measure(virtual_time) {
            goodputs.push((f, goodput));
        }
    }
    // Seed 004, eq. 1, as the paper defines lambda: the payload bytes each
    // source sent, retransmissions excluded.
    let sent: Vec<(usize, f64)> = flow_records
        .iter()
        .enumerate()
        .filter_map(|(f, r)| Some((f, r.as_ref()?.new_payload_bytes as f64)))
        .collect();
    if exp.topology.dumbbell.is_some() {
        records.extend(shares(&sent, "share_sent_pct", &net.flows, &base));
    }
    // The same share by receiver goodput.
    records.extend(shares(&goodputs, "share_pct", &net.flows, &base));
    Outcome {
        records,
        events,
        virtual_time,
        complete,
    }
}

/// What crossed the forward bottleneck in a run.
struct Bottleneck {
    bytes: u64,
    packets: u64,
    /// The new chunks (or bytes) it dropped.
    dropped: Vec<brisk_sim::NewChunk>,
}

/// Measures flow `f` of a played run into `records`.
struct FlowMeter<'a> {
    exp: &'a Experiment,
    key: &'a RunKey,
    run: &'a RunPlan,
    net: &'a Net,
    f: usize,
    flow: &'a Flow,
    r: &'a FlowRecord,
    bottleneck: &'a Bottleneck,
    base: &'a Record,
    records: &'a mut Vec<Record>,
}

impl FlowMeter<'_> {
    /// Adds a record of `metric` (of message `tsn`, if any).
    fn push(&mut self, tsn: Option<u64>, metric: &str, value: f64) {
        self.records.push(Record {
            variant: self.flow.variant.clone(),
            flow: self.f as u32,
            tsn,
            metric: metric.to_owned(),
            value,
            ..self.base.clone()
        });
    }

    /// Loss-position runs measure one message each; hundreds of thousands of
    /// them (seed 000) keep only that and their retransmissions, which keeps
    /// runs.csv and memory small.
    fn lean(&self) -> bool {
        self.exp.method == Method::LossPosition
    }

    /// Every measurement of the flow, in the order of `runs.csv`; its
    /// goodput, if measured.
    fn measure(&mut self, virtual_time: Duration) -> Option<f64> {
        self.mtts();
        if self.flow.delivery && self.exp.method == Method::Flow && self.run.saturated.is_none() {
            self.delivery();
        }
        if self.exp.figure == Figure::DelayTable {
            self.packet_delays();
        }
        self.one_way_delay();
        let goodput = self.goodput();
        if self.key.position.is_some() && self.f == 0 {
            self.loss_position_cost();
        }
        self.retransmissions();
        if self.exp.method == Method::Flow {
            self.path_records();
        }
        if self.net.dual.is_some() {
            self.failover();
        }
        if self.f == 0 && !self.lean() {
            let secs = virtual_time.as_secs_f64().max(1e-9);
            let kbps = self.bottleneck.bytes as f64 * 8.0 / secs / 1000.0;
            self.push(None, "link_throughput_kbps", kbps);
        }
        goodput
    }

    /// The MTT of the messages measured: in a loss-position run those whose
    /// first transmission the link actually dropped (its record, not an
    /// assumption); else every measured message, where the figure or
    /// method wants them.
    fn mtts(&mut self) {
        let per_message = self.exp.method == Method::LossPosition
            || matches!(self.exp.figure, Figure::MttPerTsn | Figure::LatencyTable);
        let messages: Vec<usize> = match self.key.position {
            Some(_) if self.f == 0 => self.lost_messages(),
            _ if per_message => (0..self.flow.plan.len())
                .filter(|&i| self.flow.plan[i].measured)
                .collect(),
            _ => Vec::new(),
        };
        for i in messages {
            if let Some(v) = self.r.mtt_ms(i) {
                self.push(Some(i as u64 + 1), "mtt_ms", v);
            }
        }
    }

    /// The share of the measured messages written that the receiver read
    /// (`delivered_pct`, as the emulator records it) and that the sender
    /// reported abandoned (`abandoned_pct`), percent.
    fn delivery(&mut self) {
        let r = self.r;
        let written: Vec<usize> = (0..self.flow.plan.len())
            .filter(|&i| {
                self.flow.plan[i].measured && r.written.get(i).is_some_and(Option::is_some)
            })
            .collect();
        if written.is_empty() {
            return;
        }
        let n = written.len() as f64;
        let read = written
            .iter()
            .filter(|&&i| r.read.get(i).is_some_and(Option::is_some));
        let delivered = read.count() as f64 * 100.0 / n;
        let abandoned = written
            .iter()
            .filter(|&&i| r.abandoned.get(i).copied().unwrap_or(false))
            .count() as f64
            * 100.0
            / n;
        self.push(None, "delivered_pct", delivered);
        self.push(None, "abandoned_pct", abandoned);
    }

    /// Flow 0's messages whose first transmission the bottleneck dropped.
    fn lost_messages(&self) -> Vec<usize> {
        let dropped = &self.bottleneck.dropped;
        if self.net.tcp0 {
            crate::emu_runner::lost_messages(dropped, true, self.net.frame)
                .into_iter()
                .map(|i| i as usize)
                .collect()
        } else {
            let numbers: Vec<u64> = dropped.iter().map(|c| c.number).collect();
            lost_messages(&numbers, &self.net.first_chunks)
        }
    }

    /// Seed 004's one-way delay of every data packet, and the mean cwnd.
    fn packet_delays(&mut self) {
        use crate::packet_delay::{CWND, MEAN, MEAN_SQUARE, PACKETS, VARIANCE};
        // Saturated traffic: packets sent in the measurement window
        // (which starts about a handshake's time after this).
        let window = match self.run.saturated {
            Some((s, warmup)) => (Time::ZERO + LEAD + warmup, Time::ZERO + LEAD + s.duration),
            None => (Time::ZERO, Time::from_micros(u64::MAX)),
        };
        let sim = &self.net.sim;
        let (sender, receiver) = (self.flow.sender, self.flow.hosts.receiver);
        let arrivals = sim.arrivals(receiver);
        if let Some(d) = crate::packet_delay::packet_delay(arrivals, sender, window) {
            self.push(None, PACKETS, d.packets as f64);
            self.push(None, MEAN, d.mean_ms);
            self.push(None, VARIANCE, d.variance_ms2);
            self.push(None, MEAN_SQUARE, d.mean_square_ms2);
        }
        let log = sim.congestion_log(sender);
        if let Some(cwnd) = crate::packet_delay::mean_cwnd(log, window, sim.now()) {
            self.push(None, CWND, cwnd / self.flow.segment.max(1) as f64);
        }
    }

    /// One-way delay over the run (mean and variance of the MTTs), and the
    /// sender's share of it: write to first transmission.
    fn one_way_delay(&mut self) {
        if self.lean() {
            return;
        }
        let measured = || (0..self.flow.plan.len()).filter(|&i| self.flow.plan[i].measured);
        let all: Vec<f64> = measured().filter_map(|i| self.r.mtt_ms(i)).collect();
        let waits: Vec<f64> = measured().filter_map(|i| self.r.send_wait_ms(i)).collect();
        if let Some(mean) = crate::stats::mean(&waits) {
            self.push(None, "send_wait_mean_ms", mean);
        }
        if let Some(mean) = crate::stats::mean(&all) {
            self.push(None, "owd_mean_ms", mean);
            if let Some(sd) = crate::stats::sample_std_dev(&all) {
                self.push(None, "owd_variance_ms2", sd * sd);
            }
        }
    }

    /// Goodput, kbit/s: saturated, the payload read in the measurement
    /// window; else the payload read between the first write and the last
    /// read.
    fn goodput(&mut self) -> Option<f64> {
        let r = self.r;
        let goodput = match self.flow.saturated {
            Some((sat, warmup)) => {
                let secs = (sat.duration - warmup).as_secs_f64();
                Some(r.window_bytes as f64 * 8.0 / secs / 1000.0)
            }
            None if self.lean() => None,
            None => {
                let first = r.written.iter().flatten().min().copied();
                let last_read = r.read.iter().flatten().max().copied();
                match (first, last_read) {
                    (Some(a), Some(b)) if b > a => {
                        let secs = (b.as_micros() - a.as_micros()) as f64 / 1e6;
                        Some(r.bytes as f64 * 8.0 / secs / 1000.0)
                    }
                    _ => None,
                }
            }
        };
        if let Some(g) = goodput {
            self.push(None, "goodput_kbps", g);
        }
        goodput
    }

    /// Per message delivered, the bytes and packets that crossed the
    /// bottleneck (`bytes`, `packets`).
    fn per_message_cost(&mut self, bytes: u64, packets: u64) {
        let delivered = self.r.read.iter().flatten().count();
        if delivered > 0 {
            let n = delivered as f64;
            self.push(None, "bottleneck_bytes_per_message", bytes as f64 / n);
            self.push(None, "bottleneck_packets_per_message", packets as f64 / n);
        }
    }

    /// The retransmissions that were not needed: all but one of each of the
    /// `lost` data units.
    fn spurious(&mut self, lost: impl Iterator<Item = u32>) {
        let rtx = &self.r.retransmissions;
        let needed = lost.filter(|t| rtx.iter().any(|x| x.unit == *t)).count();
        let spurious = rtx.len().saturating_sub(needed);
        self.push(None, "spurious_retransmissions", spurious as f64);
    }

    /// The cost beside the latency in a loss-position run: what crossed the
    /// bottleneck per message delivered, and the retransmissions that were
    /// not needed (exactly one packet is lost, so every retransmission but
    /// the first of each dropped chunk is spurious).
    fn loss_position_cost(&mut self) {
        let dropped = &self.bottleneck.dropped;
        self.per_message_cost(self.bottleneck.bytes, self.bottleneck.packets);
        self.spurious(dropped.iter().map(|c| c.tsn));
        // By cause: every retransmission of a chunk the link never
        // dropped, and every one beyond the first of a chunk it did.
        for &cause in self.r.causes {
            let mut first_of_dropped = HashSet::new();
            let n = self
                .r
                .retransmissions
                .iter()
                .filter(|x| {
                    let was_dropped = dropped.iter().any(|c| c.tsn == x.unit);
                    let needed = was_dropped && first_of_dropped.insert(x.unit);
                    x.cause == cause && !needed
                })
                .count();
            if n > 0 {
                self.push(None, &format!("spurious_retransmissions_{cause}"), n as f64);
            }
        }
    }

    /// Timeouts undone, retransmissions by cause, and the delay of each
    /// first retransmission.
    fn retransmissions(&mut self) {
        let r = self.r;
        if r.spurious_timeouts_undone > 0 {
            let undone = r.spurious_timeouts_undone as f64;
            self.push(None, "spurious_timeouts_undone", undone);
        }
        for &cause in r.causes {
            let n = r
                .retransmissions
                .iter()
                .filter(|x| x.cause == cause)
                .count();
            if self.lean() && n == 0 {
                continue;
            }
            self.push(None, &format!("retransmissions_{cause}"), n as f64);
        }
        let lean = self.lean();
        for x in r
            .retransmissions
            .iter()
            .filter(|x| x.transmissions == 2 && !lean)
        {
            let d = (x.at.as_micros() as f64 - x.first_sent_at.as_micros() as f64) / 1000.0;
            self.push(None, &format!("first_rtx_delay_ms_{}", x.cause), d);
        }
    }

    /// A flow run's measurements off the packet logs of the flow's path:
    /// the chunks really lost and their repair, the packets sent, and the
    /// cost beside the benefit.
    fn path_records(&mut self) {
        let (sim, flow, r) = (&self.net.sim, self.flow, self.r);
        let logs: Vec<&[brisk_sim::PacketRecord]> =
            flow.path.iter().map(|&l| sim.packet_log(l)).collect();
        let lost = lost_tsns(&logs, flow.sender);
        self.push(None, "lost_chunks", lost.len() as f64);
        for (cause, lost_chunk, d) in first_retransmissions(&r.retransmissions, &lost) {
            let kind = if lost_chunk { "lost" } else { "spurious" };
            self.push(None, &format!("{kind}_first_rtx_ms_{cause}"), d);
        }
        // The same delays read off the wire, whatever the cause, as the
        // emulator measures a real stack's: off every first hop, in the
        // order the packets entered them.
        let first_hop = first_hop_log(sim, flow);
        if !flow.first_hops.is_empty() {
            for d in repair_delays(&first_hop, flow.sender, &lost) {
                self.push(None, REPAIR, d);
            }
        }
        // Packets the sender sent: each enters a first hop once.
        let mine = first_hop.iter().filter(|p| p.src == flow.sender);
        let (packets, data_packets) = mine.fold((0u64, 0u64), |(a, d), p| {
            (a + 1, d + u64::from(!p.data_tsns.is_empty()))
        });
        self.push(None, "packets_sent", packets as f64);
        self.push(None, "data_packets", data_packets as f64);
        self.path_cost(&lost, data_packets);
    }

    /// A dual-homed run's failover (see [`crate::failover`]): when the
    /// primary path's outage started, the failover time (NaN, with a
    /// `no_failover_*` record naming the reason, when there was none) and
    /// the MTT of each message written during it; messages lost and
    /// duplicated; retransmissions not needed, as the wire shows them; the
    /// sender's bytes on each path.
    fn failover(&mut self) {
        use crate::failover::{
            NoFailover, caught, failover, failover_end, lost, needless_copies, switch,
        };
        let (net, flow, r) = (self.net, self.flow, self.r);
        let Some(dual) = net.dual else {
            return;
        };
        let outage = self.run.outage_start();
        if let Some(o) = outage {
            self.push(None, "outage_start_ms", o.as_micros() as f64 / 1000.0);
        }
        let arrivals = net.sim.arrivals(flow.hosts.receiver);
        let end = net.sim.now();
        // When the sender moved new data off the primary (NaN if it never did).
        let moved = outage.and_then(|o| switch(o, &r.data_path_changes));
        if let Some(o) = outage.filter(|o| *o <= end) {
            let ms = moved.map_or(f64::NAN, |t| {
                t.as_micros().saturating_sub(o.as_micros()) as f64 / 1000.0
            });
            self.push(None, "switch_ms", ms);
        }
        match failover(outage, end, &r.read, arrivals, dual.secondary.0) {
            Ok(f) => {
                self.push(None, "failed_over", 1.0);
                self.push(None, "failover_ms", f.ms);
                let last_write = r.written.iter().flatten().copied().max().unwrap_or(f.at);
                let until = failover_end(f.at, moved, last_write);
                let during = caught(f.outage, until, &r.written);
                self.push(None, "failover_messages", during.len() as f64);
                for i in during {
                    if let Some(v) = r.mtt_ms(i) {
                        self.push(Some(i as u64 + 1), "failover_mtt_ms", v);
                    }
                }
            }
            Err(NoFailover::NoOutage) => self.push(None, NoFailover::NoOutage.metric(), 1.0),
            Err(why) => {
                self.push(None, "failed_over", 0.0);
                self.push(None, "failover_ms", f64::NAN);
                self.push(None, why.metric(), 1.0);
            }
        }
        let lost = lost(&r.written, &r.read, &r.abandoned);
        self.push(None, "messages_lost", lost as f64);
        self.push(None, "messages_duplicated", r.duplicates as f64);
        let needless = needless_copies(&first_hop_log(&net.sim, flow), flow.sender);
        self.push(None, "needless_retransmissions", needless as f64);
        for (name, l) in [("primary", dual.primary.0), ("secondary", dual.secondary.0)] {
            let bytes: u64 = net
                .sim
                .packet_log(l)
                .iter()
                .filter(|p| p.src == flow.sender)
                .map(|p| p.size as u64)
                .sum();
            self.push(None, &format!("bytes_sent_{name}"), bytes as f64);
        }
    }

    /// The cost beside the benefit: this sender's packets and bytes on the
    /// bottleneck per message (or payload byte) delivered, the
    /// retransmissions that were not needed (every one of a chunk the path
    /// never lost, every one beyond the first of a lost chunk), and DATA
    /// packets per message written.
    fn path_cost(&mut self, lost: &HashSet<u32>, data_packets: u64) {
        let (sim, flow, r) = (&self.net.sim, self.flow, self.r);
        let (b_packets, b_bytes) = self
            .net
            .cost_links
            .iter()
            .flat_map(|&l| sim.packet_log(l))
            .filter(|p| p.src == flow.sender)
            .fold((0u64, 0u64), |(n, b), p| (n + 1, b + p.size as u64));
        self.per_message_cost(b_bytes, b_packets);
        if r.bytes > 0 {
            let per_byte = b_bytes as f64 / r.bytes as f64;
            self.push(None, "bottleneck_bytes_per_payload_byte", per_byte);
        }
        self.spurious(lost.iter().copied());
        let messages = if self.run.saturated.is_some() {
            r.saturated_written
        } else {
            r.written.iter().flatten().count() as u64
        };
        if messages > 0 {
            let per_message = data_packets as f64 / messages as f64;
            self.push(None, "data_packets_per_message", per_message);
        }
    }
}

/// The packets that entered `flow`'s first hops, in the order they entered
/// (one first hop: its log as it is).
fn first_hop_log<'a>(sim: &'a Sim, flow: &Flow) -> Cow<'a, [brisk_sim::PacketRecord]> {
    match flow.first_hops[..] {
        [] => Cow::Borrowed(&[]),
        [l] => Cow::Borrowed(sim.packet_log(l)),
        _ => {
            let mut log: Vec<brisk_sim::PacketRecord> = flow
                .first_hops
                .iter()
                .flat_map(|&l| sim.packet_log(l).iter().cloned())
                .collect();
            // Stable: packets entering at one instant keep their link's order.
            log.sort_by_key(|p| p.entered);
            Cow::Owned(log)
        }
    }
}

/// Each flow's share (%) of the total of `values` (flow, value), as records
/// of `metric`; none for fewer than two flows or a zero total.
fn shares(values: &[(usize, f64)], metric: &str, pairs: &[Flow], base: &Record) -> Vec<Record> {
    let total: f64 = values.iter().map(|v| v.1).sum();
    if values.len() < 2 || total <= 0.0 {
        return Vec::new();
    }
    values
        .iter()
        .map(|&(f, v)| Record {
            variant: pairs[f].variant.clone(),
            flow: f as u32,
            metric: metric.into(),
            value: v / total * 100.0,
            ..base.clone()
        })
        .collect()
}

/// The TSNs `sender` sent whose original transmission was lost: on some link
/// direction of the path, the first packet that carried the TSN was dropped
/// or corrupted. (A retransmission is never the first carrier on a link the
/// original crossed, so a spurious retransmission never counts.)
pub fn lost_tsns(logs: &[&[brisk_sim::PacketRecord]], sender: HostId) -> HashSet<u32> {
    let mut lost = HashSet::new();
    for log in logs {
        let mut seen = HashSet::new();
        for p in log.iter().filter(|p| p.src == sender) {
            for &tsn in &p.data_tsns {
                if seen.insert(tsn) && p.lost() {
                    lost.insert(tsn);
                }
            }
        }
    }
    lost
}

/// The metric of [`repair_delays`].
pub const REPAIR: &str = "lost_first_rtx_ms";

/// For each data unit in `lost` that `sender` sent again, the time from its
/// first copy entering link `log` to its second, ms: the first
/// retransmission's delay as the wire shows it, whatever its cause.
pub fn repair_delays(
    log: &[brisk_sim::PacketRecord],
    sender: HostId,
    lost: &HashSet<u32>,
) -> Vec<f64> {
    let mut first: std::collections::HashMap<u32, (Time, bool)> = Default::default();
    let mut out = Vec::new();
    for p in log.iter().filter(|p| p.src == sender) {
        for &unit in &p.data_tsns {
            match first.get_mut(&unit) {
                None => {
                    first.insert(unit, (p.entered, false));
                }
                Some((at, done)) if !*done && lost.contains(&unit) => {
                    *done = true;
                    out.push((p.entered.as_micros() - at.as_micros()) as f64 / 1000.0);
                }
                Some(_) => {}
            }
        }
    }
    out
}

/// The cause name of a first retransmission in the lab's tables: the
/// protocol's, except that the chunks a T3 expiry sends behind the one it
/// expired for are `t3-bundled` (seed 001's "reported lost and bundled").
pub const T3_BUNDLED: &str = "t3-bundled";

/// The cause name of SCTP's retransmission timeout.
const T3_TIMEOUT: &str = brisk_proto::RetransmitCause::T3Timeout.name();

/// Every first retransmission (a chunk's second transmission): its cause
/// (see [`T3_BUNDLED`]), whether the chunk's original was lost, and its delay
/// from the original transmission, ms; in the order they were made.
pub fn first_retransmissions(
    rtx: &[Retransmitted],
    lost: &HashSet<u32>,
) -> Vec<(&'static str, bool, f64)> {
    // The chunk a T3 expiry is for: the lowest TSN it retransmits at that instant.
    let mut heads: BTreeMap<u64, u32> = BTreeMap::new();
    for x in rtx.iter().filter(|x| x.cause == T3_TIMEOUT) {
        let at = x.at.as_micros();
        let head = heads.entry(at).or_insert(x.unit);
        // RFC 9260 1.6: TSNs compare in serial arithmetic (RFC 1982).
        if lt32(x.unit, *head) {
            *head = x.unit;
        }
    }
    rtx.iter()
        .filter(|x| x.transmissions == 2)
        .map(|x| {
            let cause = match x.cause {
                T3_TIMEOUT if heads.get(&x.at.as_micros()) != Some(&x.unit) => T3_BUNDLED,
                c => c,
            };
            let d = (x.at.as_micros() as f64 - x.first_sent_at.as_micros() as f64) / 1000.0;
            (cause, lost.contains(&x.unit), d)
        })
        .collect()
}

/// Runs the first run of `exp` again, capturing it as [`capture_run`] does.
pub fn capture_first_run(exp: &Experiment, path: &std::path::Path) -> Result<RunKey, String> {
    let key = *expand(exp).first().ok_or("the experiment has no runs")?;
    capture_run(exp, &key, path)?;
    Ok(key)
}

/// Runs run `key` of `exp` again, writing every packet that enters any link
/// direction (the sender's DATA and the receiver's SACKs, on every hop) to a
/// pcapng file at `path`: one interface per link direction, UDP port 9899,
/// and a comment on each packet a link dropped, corrupted, duplicated or
/// held back (see [`brisk_sim::Sim::capture_pcapng`]). The run's results are
/// those of the same run without a capture.
pub fn capture_run(exp: &Experiment, key: &RunKey, path: &std::path::Path) -> Result<(), String> {
    let v = &exp.variants[key.variant];
    match &v.stack {
        // An emulated run is captured by the emulator, as it runs.
        Some(stack) => {
            let workdir =
                std::env::temp_dir().join(format!("brisk-emu-pcap-{}", std::process::id()));
            std::fs::create_dir_all(&workdir).map_err(|e| e.to_string())?;
            let r =
                crate::emu_runner::run_one(exp, key, v, stack, &workdir, Some(path)).map(|_| ());
            let _ = std::fs::remove_dir_all(&workdir);
            r
        }
        None => run_one(exp, key, Some(path), None).map(|_| ()),
    }
}

/// Runs the emulated runs one after another. A run that cannot start (not
/// root, a missing program) prints its reason on stderr and records nothing,
/// so the report shows the hole ("no data", a check not available) instead
/// of a number; a run whose commands failed records `incomplete`.
fn emulate(exp: &Experiment, keys: &[RunKey], progress: &ProgressBar) -> Vec<(RunKey, Outcome)> {
    if keys.is_empty() {
        return Vec::new();
    }
    let workdir = std::env::temp_dir().join(format!("brisk-emu-runs-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&workdir);
    let mut out = Vec::new();
    for key in keys {
        let v = &exp.variants[key.variant];
        let Some(stack) = &v.stack else { continue };
        if crate::emu_runner::interrupted() {
            let _ = std::fs::remove_dir_all(&workdir);
            crate::emu_runner::exit_interrupted(progress);
        }
        let started = std::time::Instant::now();
        let records = crate::emu_runner::run_one(exp, key, v, stack, &workdir, None)
            .unwrap_or_else(|e| {
                progress.suspend(|| eprintln!("{}: {} (emulated): {e}", exp.name, v.name));
                Vec::new()
            });
        let complete = !records.is_empty() && !records.iter().any(|r| r.metric == "incomplete");
        progress.inc(1);
        out.push((
            *key,
            Outcome {
                records,
                events: 0,
                virtual_time: started.elapsed(),
                complete,
            },
        ));
    }
    let _ = std::fs::remove_dir_all(&workdir);
    out
}

/// Runs every run of `exp` on up to `jobs` threads; records come back sorted by
/// run key, so the same seed gives the same output whatever the parallelism.
pub fn run(exp: &Experiment, jobs: usize, progress: &ProgressBar) -> (Vec<Record>, RunTotals) {
    let keys = expand(exp).into_iter().enumerate().collect();
    let mut totals = RunTotals::default();
    let mut records = Vec::new();
    for (_, _, o) in run_keys(exp, keys, jobs, progress) {
        totals.runs += 1;
        totals.sim_events += o.events;
        totals.virtual_time += o.virtual_time;
        totals.incomplete += u64::from(!o.complete);
        records.extend(o.records);
    }
    (records, totals)
}

/// Runs only the runs of shard `shard` (see [`crate::shard`]): its slice of
/// [`expand`]'s runs, with each run's counters beside its records, so that
/// [`crate::shard::merge`] can put the shards together into exactly what
/// [`run`] returns.
pub fn run_shard(
    exp: &Experiment,
    shard: crate::shard::Shard,
    jobs: usize,
    progress: &ProgressBar,
) -> crate::shard::ShardOutput {
    let all = expand(exp);
    let total = all.len();
    let keys = all
        .into_iter()
        .enumerate()
        .filter(|(i, _)| shard.owns(*i))
        .collect();
    let mut runs = Vec::new();
    let mut records = Vec::new();
    for (index, key, o) in run_keys(exp, keys, jobs, progress) {
        runs.push(crate::shard::ShardRun {
            index,
            variant: key.variant,
            replication: key.replication,
            position: key.position,
            records: o.records.len(),
            sim_events: o.events,
            virtual_time_ns: o.virtual_time.as_nanos() as u64,
            complete: o.complete,
        });
        records.extend(o.records);
    }
    crate::shard::ShardOutput::new(exp, shard, total, runs, records)
}

/// Runs the given runs (numbered by their place in [`expand`]'s list) on up
/// to `jobs` threads, the emulated ones after, one at a time; the outcomes
/// come back sorted by run key.
fn run_keys(
    exp: &Experiment,
    keys: Vec<(usize, RunKey)>,
    jobs: usize,
    progress: &ProgressBar,
) -> Vec<(usize, RunKey, Outcome)> {
    type Numbered = Vec<(usize, RunKey)>;
    let (emulated, keys): (Numbered, Numbered) = keys
        .into_iter()
        .partition(|(_, k)| exp.variants[k.variant].stack.is_some());
    progress.set_length(progress.length().unwrap_or(0) + (keys.len() + emulated.len()) as u64);
    let work = || {
        keys.par_iter()
            .map(|(i, key)| {
                // Without a capture, a run cannot fail.
                let o = run_one(exp, key, None, None).unwrap_or(Outcome {
                    records: Vec::new(),
                    events: 0,
                    virtual_time: Duration::ZERO,
                    complete: false,
                });
                progress.inc(1);
                (*i, *key, o)
            })
            .collect::<Vec<_>>()
    };
    let mut outcomes = match rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
    {
        Ok(pool) => pool.install(work),
        Err(_) => work(),
    };
    // Emulated runs take the wall clock and the cores: one at a time.
    let emulated_keys: Vec<RunKey> = emulated.iter().map(|(_, k)| *k).collect();
    let index: BTreeMap<RunKey, usize> = emulated.iter().map(|(i, k)| (*k, *i)).collect();
    outcomes.extend(
        emulate(exp, &emulated_keys, progress)
            .into_iter()
            .map(|(k, o)| (index[&k], k, o)),
    );
    outcomes.sort_by_key(|(_, k, _)| *k);
    outcomes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_competing_bulk_flow_runs_beside_each_variant_and_records_its_goodput_as_flow_1() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../experiments/fairness.toml"),
        )
        .unwrap()
        .replace("messages = 1000", "messages = 500")
        .replace("message_size = [64, 1024]", "message_size = [64]")
        .replace("replications = 2", "replications = 1");
        let exp = Experiment::parse(std::path::Path::new("fairness.toml"), &text).unwrap();
        // The competing variant has no run of its own.
        let keys = expand(&exp);
        assert_eq!(keys.len(), 3, "{keys:?}");
        let (records, _) = run(&exp, 1, &ProgressBar::hidden());
        for v in ["rfc9260", "signaling", "low-latency"] {
            let goodput = |flow: u32| {
                records
                    .iter()
                    .find(|r| r.variant == v && r.flow == flow && r.metric == "goodput_kbps")
                    .map(|r| r.value)
            };
            // The bulk flow (CUBIC) fills most of the 10 Mbit/s after its
            // warm-up, and no more than the link carries of payload (1448 of
            // every 1488 bytes: 9,731 kbit/s); the stream of 64-byte messages
            // every 16 ms stays thin.
            let bulk = goodput(1).expect("the competing flow's goodput");
            assert!(bulk > 8_500.0 && bulk < 9_731.0, "{v}: {bulk}");
            let thin = goodput(0).expect("the stream's goodput");
            assert!(thin < 100.0, "{v}: {thin}");
            assert!(
                records
                    .iter()
                    .any(|r| r.variant == v && r.flow == 0 && r.metric == "mtt_ms")
            );
        }
        assert!(!records.iter().any(|r| r.variant == "tcp-cubic-bulk"));
    }

    fn fixture() -> Experiment {
        Experiment::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/dual-homed.toml"),
        )
        .unwrap()
    }

    #[test]
    fn a_dual_homed_run_binds_each_path_to_its_addresses_and_the_metric_to_its_link() {
        let exp = fixture();
        let key = expand(&exp)[0];
        let run = RunPlan::new(&exp, &key);
        let mut net = build(&exp, &key, &run);
        let dual = net.dual.unwrap();
        let (s, r) = (net.flows[0].sender, net.flows[0].hosts.receiver);
        let addr = |a: &str| a.parse::<SocketAddr>().unwrap();
        assert_eq!(
            net.sim.addresses(s),
            [addr("10.0.1.1:9899"), addr("10.0.3.1:9899")]
        );
        assert_eq!(
            net.sim.addresses(r),
            [addr("10.0.2.1:9899"), addr("10.0.4.1:9899")]
        );
        for (l, sender, receiver) in [
            (dual.primary.0, "10.0.1.1:9899", "10.0.2.1:9899"),
            (dual.secondary.0, "10.0.3.1:9899", "10.0.4.1:9899"),
        ] {
            assert_eq!(net.sim.link_ends(l), (net.sim.node(s), net.sim.node(r)));
            assert_eq!(net.sim.address_on(s, l), Some(addr(sender)));
            assert_eq!(net.sim.address_on(r, l), Some(addr(receiver)));
        }
        assert_eq!(net.bottleneck, dual.primary.0);
        assert_eq!(net.flows[0].first_hops, [dual.primary.0, dual.secondary.0]);
        // A packet for the receiver's secondary address arrives over the
        // link the failover metric reads.
        watch(&exp, &mut net, false);
        net.sim.inject(s, addr("10.0.4.1:9899"), vec![0; 40]);
        net.sim.run_until(Time::from_millis(300));
        let over: Vec<(LinkId, SocketAddr)> = net
            .sim
            .arrivals(r)
            .iter()
            .filter(|a| a.to == addr("10.0.4.1:9899"))
            .map(|a| (a.link, a.source))
            .collect();
        // The injected packet, and the heartbeats that confirm the address.
        assert!(!over.is_empty());
        assert!(
            over.iter()
                .all(|x| *x == (dual.secondary.0, addr("10.0.3.1:9899"))),
            "{over:?}"
        );
    }

    #[test]
    fn outage_starts_are_drawn_per_replication_within_the_range_and_shared_by_variants() {
        let exp = fixture();
        let keys = expand(&exp);
        let start = |k: &RunKey| RunPlan::new(&exp, k).outage_start().unwrap();
        let mut by_replication = BTreeMap::new();
        for k in &keys {
            let t = start(k);
            assert!(
                (Time::from_secs(2)..=Time::from_secs(3)).contains(&t),
                "{t:?}"
            );
            assert_eq!(*by_replication.entry(k.replication).or_insert(t), t);
        }
        assert_eq!(by_replication.len(), 2);
        assert_ne!(by_replication[&0], by_replication[&1]);
        // The secondary path's fixed outage window, drawn after the primary's.
        let run = RunPlan::new(&exp, &keys[0]);
        let (_, secondary) = run.outages.unwrap();
        assert_eq!(
            secondary,
            [(Duration::from_secs(1), Duration::from_millis(1200))]
        );
    }
}
