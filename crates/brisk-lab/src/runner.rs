//! Runs an experiment: expands the sweep, the variants, the replications and
//! (for loss-position experiments) the loss positions into simulator runs,
//! runs them in parallel with seeded randomness, and collects one record per
//! measured value.

use std::net::SocketAddr;
use std::time::Duration;

use brisk_proto::{EndpointConfig, RetransmitCause, Time};
use brisk_sim::{Impairment, LinkParams, QueueLimit, Sim};
use indicatif::ProgressBar;
use rayon::prelude::*;

use crate::experiment::{Experiment, Method};
use crate::traffic::{Planned, Receiver, Sender, plan};

/// One simulator run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunKey {
    pub bandwidth: usize,
    pub delay: usize,
    pub variant: usize,
    pub replication: u32,
    /// For loss-position runs: the 1-based DATA packet dropped.
    pub position: Option<u64>,
}

/// One measured value.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Record {
    pub experiment: String,
    pub variant: String,
    pub bandwidth_kbps: u64,
    pub delay_ms: f64,
    pub replication: u32,
    /// The DATA packet dropped (loss-position runs).
    pub position: Option<u64>,
    /// The flow (sender/receiver pair) measured; 0 on a point-to-point link.
    pub flow: u32,
    /// The message measured, numbered from 1 like seed 000's TSN axis.
    pub tsn: Option<u64>,
    pub metric: String,
    pub value: f64,
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

fn seed_for(exp: &Experiment, key: &RunKey) -> (u64, u64) {
    // The traffic plan depends on the sweep point and replication only, so
    // variants and loss positions are compared on the same traffic.
    let mix = |parts: &[u64]| {
        parts.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
            (h ^ x).wrapping_mul(0x0100_0000_01b3).rotate_left(17)
        })
    };
    let traffic = mix(&[
        exp.seed,
        key.bandwidth as u64,
        key.delay as u64,
        u64::from(key.replication),
    ]);
    let sim = mix(&[traffic, key.variant as u64, key.position.unwrap_or(0)]);
    (traffic, sim)
}

/// The runs an experiment consists of, in a fixed order.
pub fn expand(exp: &Experiment) -> Vec<RunKey> {
    let mut keys = Vec::new();
    for bandwidth in 0..exp.bandwidths.len() {
        for delay in 0..exp.delays.len() {
            for replication in 0..exp.replications {
                // Loss positions are those of measured messages, which depend on
                // the replication's traffic plan.
                let traffic_seed = seed_for(
                    exp,
                    &RunKey {
                        bandwidth,
                        delay,
                        variant: 0,
                        replication,
                        position: None,
                    },
                )
                .0;
                let planned = plan(&exp.traffic, traffic_seed);
                for (variant, v) in exp.variants.iter().enumerate() {
                    if exp.method == Method::LossPosition && !v.no_loss {
                        for (i, m) in planned.iter().enumerate() {
                            if m.measured {
                                keys.push(RunKey {
                                    bandwidth,
                                    delay,
                                    variant,
                                    replication,
                                    position: Some(i as u64 + 1),
                                });
                            }
                        }
                    } else {
                        keys.push(RunKey {
                            bandwidth,
                            delay,
                            variant,
                            replication,
                            position: None,
                        });
                    }
                }
            }
        }
    }
    keys
}

/// What one run produced.
struct Outcome {
    records: Vec<Record>,
    events: u64,
    virtual_time: Duration,
    complete: bool,
}

fn run_one(
    exp: &Experiment,
    key: &RunKey,
    capture: Option<&std::path::Path>,
) -> Result<Outcome, String> {
    let (traffic_seed, sim_seed) = seed_for(exp, key);
    let planned: Vec<Planned> = plan(&exp.traffic, traffic_seed);
    let bandwidth = exp.bandwidths[key.bandwidth];
    let delay = exp.delays[key.delay];
    let flows = exp.topology.dumbbell.as_ref().map_or(1, |d| d.flows);
    let variant_of = |f: u32| {
        exp.topology
            .dumbbell
            .as_ref()
            .and_then(|d| d.flow_variants.as_ref())
            .and_then(|v| v.get(f as usize).copied())
            .unwrap_or(key.variant)
    };

    let mut sim = Sim::new(sim_seed);
    let mut pairs = Vec::new();
    for f in 0..flows {
        let v = &exp.variants[variant_of(f)];
        let n = (f + 1) as u8;
        let sender_addr = SocketAddr::from(([10, 0, 1, n], 9899));
        let receiver_addr = SocketAddr::from(([10, 0, 2, n], 9899));
        // Each flow gets its own traffic draw, the same for every variant.
        let flow_plan = if f == 0 {
            planned.clone()
        } else {
            plan(&exp.traffic, traffic_seed ^ (u64::from(f) << 32))
        };
        let sender = sim.add_host(
            sender_addr,
            EndpointConfig {
                port: 5000,
                accept: true,
                accept_config: v.config.clone(),
                ..EndpointConfig::default()
            },
            Box::new(Sender::new(flow_plan.clone(), LEAD)),
        );
        let receiver = sim.add_host(
            receiver_addr,
            EndpointConfig {
                port: 5000,
                accept: false,
                ..EndpointConfig::default()
            },
            Box::new(Receiver::new(
                sender_addr,
                v.config.clone(),
                flow_plan.len(),
            )),
        );
        pairs.push((sender, receiver, flow_plan, v.name.clone()));
    }
    let link = |impairments: Vec<Impairment>| LinkParams {
        bandwidth_bps: bandwidth,
        delay,
        queue: QueueLimit::Packets(exp.topology.queue_packets),
        overhead_bytes: exp.topology.overhead_bytes,
        impairments,
    };
    let mut forward: Vec<Impairment> = Vec::new();
    if let Some(k) = key.position {
        forward.push(Impairment::DropOrdinals {
            ordinals: vec![k],
            data_only: true,
        });
    }
    for line in &exp.impairments {
        forward.extend(brisk_sim::parse_pattern(line).unwrap_or_default());
    }
    let bottleneck = match &exp.topology.dumbbell {
        None => {
            let (sn, rn) = (sim.node(pairs[0].0), sim.node(pairs[0].1));
            sim.link(sn, rn, link(forward), link(Vec::new())).0
        }
        Some(d) => {
            let senders: Vec<_> = pairs.iter().map(|p| p.0).collect();
            let receivers: Vec<_> = pairs.iter().map(|p| p.1).collect();
            let access = LinkParams {
                bandwidth_bps: d.access_bandwidth_bps,
                delay: d.access_delay,
                queue: QueueLimit::Packets(exp.topology.queue_packets),
                overhead_bytes: exp.topology.overhead_bytes,
                impairments: Vec::new(),
            };
            brisk_sim::dumbbell(
                &mut sim,
                &senders,
                &receivers,
                access,
                link(forward),
                link(Vec::new()),
            )
            .0
        }
    };

    if let Some(path) = capture {
        let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        sim.capture(bottleneck, Box::new(std::io::BufWriter::new(file)));
    }
    let last = pairs
        .iter()
        .filter_map(|p| p.2.last())
        .map(|m| m.offset)
        .max()
        .unwrap_or(Duration::ZERO);
    let limit = Time::ZERO + LEAD + last + TAIL + Duration::from_secs(5);
    // Advance in steps, stopping as soon as every message has been read.
    let mut t = Time::ZERO;
    loop {
        t = t + Duration::from_millis(500);
        sim.run_until(t.min(limit));
        let done = pairs
            .iter()
            .all(|p| sim.app::<Receiver>(p.1).is_some_and(Receiver::complete));
        if done || t >= limit {
            break;
        }
    }
    if capture.is_some() {
        sim.finish_captures()
            .map_err(|e| format!("writing the capture: {e}"))?;
    }
    let events = sim.stats().events;
    let virtual_time = Duration::from_micros(sim.now().as_micros());
    let link_bytes = sim.link_stats(bottleneck).bytes;

    let mut records = Vec::new();
    let mut complete = true;
    let mut goodputs = Vec::new();
    for (f, (sender, receiver, flow_plan, variant)) in pairs.iter().enumerate() {
        let (Some(s), Some(r)) = (sim.app::<Sender>(*sender), sim.app::<Receiver>(*receiver))
        else {
            complete = false;
            continue;
        };
        complete &= r.complete();
        let record = |tsn: Option<u64>, metric: &str, value: f64| Record {
            experiment: exp.name.clone(),
            variant: variant.clone(),
            bandwidth_kbps: bandwidth / 1000,
            delay_ms: delay.as_secs_f64() * 1000.0,
            replication: key.replication,
            position: key.position,
            flow: f as u32,
            tsn,
            metric: metric.to_owned(),
            value,
        };
        let mtt = |i: usize| -> Option<f64> {
            let w = s.written.get(i).copied().flatten()?;
            let rd = r.read.get(i).copied().flatten()?;
            Some((rd.as_micros() as f64 - w.as_micros() as f64) / 1000.0)
        };
        let per_message = exp.method == Method::LossPosition
            || matches!(exp.figure, crate::experiment::Figure::MttPerTsn);
        match key.position {
            // Loss-position runs measure the message in the dropped packet.
            Some(k) if f == 0 => {
                if let Some(v) = mtt((k - 1) as usize) {
                    records.push(record(Some(k), "mtt_ms", v));
                }
            }
            _ if per_message => {
                for (i, m) in flow_plan.iter().enumerate() {
                    if m.measured
                        && let Some(v) = mtt(i)
                    {
                        records.push(record(Some(i as u64 + 1), "mtt_ms", v));
                    }
                }
            }
            _ => {}
        }
        // One-way delay over the run: mean and variance of the MTTs.
        let all: Vec<f64> = (0..flow_plan.len())
            .filter(|&i| flow_plan[i].measured)
            .filter_map(mtt)
            .collect();
        if let Some(mean) = crate::stats::mean(&all) {
            records.push(record(None, "owd_mean_ms", mean));
            if let Some(sd) = crate::stats::sample_std_dev(&all) {
                records.push(record(None, "owd_variance_ms2", sd * sd));
            }
        }
        // Goodput: payload read between the first write and the last read.
        let first = s.written.iter().flatten().min().copied();
        let last_read = r.read.iter().flatten().max().copied();
        if let (Some(a), Some(b)) = (first, last_read)
            && b > a
        {
            let secs = (b.as_micros() - a.as_micros()) as f64 / 1e6;
            let goodput = r.bytes as f64 * 8.0 / secs / 1000.0;
            records.push(record(None, "goodput_kbps", goodput));
            goodputs.push((f, goodput));
        }
        // Retransmissions by cause, and the delay of each first retransmission.
        for cause in RetransmitCause::ALL {
            let n = s
                .retransmissions
                .iter()
                .filter(|x| x.cause == cause)
                .count();
            records.push(record(
                None,
                &format!("retransmissions_{}", cause.name()),
                n as f64,
            ));
        }
        for x in s.retransmissions.iter().filter(|x| x.transmissions == 2) {
            let d = (x.at.as_micros() as f64 - x.first_sent_at.as_micros() as f64) / 1000.0;
            records.push(record(
                None,
                &format!("first_rtx_delay_ms_{}", x.cause.name()),
                d,
            ));
        }
        if f == 0 {
            let secs = virtual_time.as_secs_f64().max(1e-9);
            records.push(record(
                None,
                "link_throughput_kbps",
                link_bytes as f64 * 8.0 / secs / 1000.0,
            ));
        }
    }
    // Seed 004, eq. 1: each flow's share of the total throughput.
    let total: f64 = goodputs.iter().map(|g| g.1).sum();
    if goodputs.len() > 1 && total > 0.0 {
        for (f, g) in goodputs {
            let variant = pairs[f].3.clone();
            records.push(Record {
                experiment: exp.name.clone(),
                variant,
                bandwidth_kbps: bandwidth / 1000,
                delay_ms: delay.as_secs_f64() * 1000.0,
                replication: key.replication,
                position: key.position,
                flow: f as u32,
                tsn: None,
                metric: "share_pct".into(),
                value: g / total * 100.0,
            });
        }
    }
    Ok(Outcome {
        records,
        events,
        virtual_time,
        complete,
    })
}

/// Runs the first run of `exp` again, writing every packet that enters the
/// bottleneck (forward direction) to a pcap at `path` (UDP port 9899).
pub fn capture_first_run(exp: &Experiment, path: &std::path::Path) -> Result<RunKey, String> {
    let key = *expand(exp).first().ok_or("the experiment has no runs")?;
    run_one(exp, &key, Some(path))?;
    Ok(key)
}

/// Runs every run of `exp` on up to `jobs` threads; records come back sorted by
/// run key, so the same seed gives the same output whatever the parallelism.
pub fn run(exp: &Experiment, jobs: usize, progress: &ProgressBar) -> (Vec<Record>, RunTotals) {
    let keys = expand(exp);
    progress.set_length(progress.length().unwrap_or(0) + keys.len() as u64);
    let work = || {
        keys.par_iter()
            .map(|key| {
                // Without a capture, a run cannot fail.
                let o = run_one(exp, key, None).unwrap_or(Outcome {
                    records: Vec::new(),
                    events: 0,
                    virtual_time: Duration::ZERO,
                    complete: false,
                });
                progress.inc(1);
                (*key, o)
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
    outcomes.sort_by_key(|(k, _)| *k);
    let mut totals = RunTotals::default();
    let mut records = Vec::new();
    for (_, o) in outcomes {
        totals.runs += 1;
        totals.sim_events += o.events;
        totals.virtual_time += o.virtual_time;
        totals.incomplete += u64::from(!o.complete);
        records.extend(o.records);
    }
    (records, totals)
}
