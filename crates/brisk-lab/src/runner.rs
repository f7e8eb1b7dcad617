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

fn run_one(exp: &Experiment, key: &RunKey) -> Outcome {
    let (traffic_seed, sim_seed) = seed_for(exp, key);
    let planned: Vec<Planned> = plan(&exp.traffic, traffic_seed);
    let variant = &exp.variants[key.variant];
    let bandwidth = exp.bandwidths[key.bandwidth];
    let delay = exp.delays[key.delay];

    let sender_addr: SocketAddr = "10.0.0.1:9899".parse().unwrap_or_else(|_| unreachable!());
    let receiver_addr: SocketAddr = "10.0.0.2:9899".parse().unwrap_or_else(|_| unreachable!());
    let mut sim = Sim::new(sim_seed);
    let sender = sim.add_host(
        sender_addr,
        EndpointConfig {
            port: 5000,
            accept: true,
            accept_config: variant.config.clone(),
            ..EndpointConfig::default()
        },
        Box::new(Sender::new(planned.clone(), LEAD)),
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
            variant.config.clone(),
            planned.len(),
        )),
    );
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
    let (sn, rn) = (sim.node(sender), sim.node(receiver));
    sim.link(sn, rn, link(forward), link(Vec::new()));

    let last = planned.last().map_or(Duration::ZERO, |m| m.offset);
    let limit = Time::ZERO + LEAD + last + TAIL + Duration::from_secs(5);
    // Advance in steps, stopping as soon as every message has been read.
    let mut t = Time::ZERO;
    loop {
        t = t + Duration::from_millis(500);
        sim.run_until(t.min(limit));
        let done = sim
            .app::<Receiver>(receiver)
            .is_some_and(Receiver::complete);
        if done || t >= limit {
            break;
        }
    }
    let events = sim.stats().events;
    let virtual_time = Duration::from_micros(sim.now().as_micros());
    let (Some(s), Some(r)) = (sim.app::<Sender>(sender), sim.app::<Receiver>(receiver)) else {
        return Outcome {
            records: Vec::new(),
            events,
            virtual_time,
            complete: false,
        };
    };
    let mut records = Vec::new();
    let record = |tsn: Option<u64>, metric: &str, value: f64| Record {
        experiment: exp.name.clone(),
        variant: variant.name.clone(),
        bandwidth_kbps: bandwidth / 1000,
        delay_ms: delay.as_secs_f64() * 1000.0,
        replication: key.replication,
        position: key.position,
        tsn,
        metric: metric.to_owned(),
        value,
    };
    let mtt = |i: usize| -> Option<f64> {
        let w = s.written.get(i).copied().flatten()?;
        let rd = r.read.get(i).copied().flatten()?;
        Some((rd.as_micros() as f64 - w.as_micros() as f64) / 1000.0)
    };
    match key.position {
        // Loss-position runs measure the message in the dropped packet.
        Some(k) => {
            let i = (k - 1) as usize;
            if let Some(v) = mtt(i) {
                records.push(record(Some(k), "mtt_ms", v));
            }
        }
        None => {
            for (i, m) in planned.iter().enumerate() {
                if m.measured
                    && let Some(v) = mtt(i)
                {
                    records.push(record(Some(i as u64 + 1), "mtt_ms", v));
                }
            }
        }
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
    Outcome {
        records,
        events,
        virtual_time,
        complete: r.complete(),
    }
}

/// Runs every run of `exp` on up to `jobs` threads; records come back sorted by
/// run key, so the same seed gives the same output whatever the parallelism.
pub fn run(exp: &Experiment, jobs: usize, progress: &ProgressBar) -> (Vec<Record>, RunTotals) {
    let keys = expand(exp);
    progress.set_length(progress.length().unwrap_or(0) + keys.len() as u64);
    let work = || {
        keys.par_iter()
            .map(|key| {
                let o = run_one(exp, key);
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
