//! Failover, as the lab measures it on a dual-homed topology: from what the
//! simulator saw (which link delivered each datagram to the receiver) and
//! what the applications recorded (when each message was written and read),
//! never from the protocol's private state.
//!
//! The failover time is the time from the primary path's outage start to
//! the first message read by the receiving application whose data arrived
//! over the secondary path. A message counts as arriving over the secondary
//! path when a datagram carrying data reached the receiver over the
//! secondary path's link at the instant the message was read: the
//! simulator hands the application every message a datagram completes in
//! the same instant the datagram arrives.

use std::collections::BTreeMap;

use brisk_proto::Time;
use brisk_sim::{Arrival, LinkId};

use crate::experiment::Experiment;
use crate::report::Table;
use crate::runner::Record;

/// Why a run has no failover time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoFailover {
    /// The primary path has no outage.
    NoOutage,
    /// The outage starts after the run ended.
    OutageAfterRun,
    /// No message was read after the outage whose data came over the
    /// secondary path: the sender never failed over (or nothing was sent).
    NothingOverSecondary,
}

impl NoFailover {
    /// The metric that records the reason (value 1) in `runs.csv`.
    pub fn metric(self) -> &'static str {
        match self {
            NoFailover::NoOutage => "no_failover_no_outage",
            NoFailover::OutageAfterRun => "no_failover_outage_after_run",
            NoFailover::NothingOverSecondary => "no_failover_nothing_over_secondary",
        }
    }
}

impl std::fmt::Display for NoFailover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NoFailover::NoOutage => "the primary path has no outage",
            NoFailover::OutageAfterRun => "the outage starts after the run ended",
            NoFailover::NothingOverSecondary => {
                "no message was delivered over the secondary path after the outage"
            }
        })
    }
}

/// A failover: the first message read after the outage whose data came
/// over the secondary path.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Failover {
    /// When the primary path's outage started.
    pub outage: Time,
    /// The message (0-based plan number) and when it was read.
    pub message: usize,
    pub at: Time,
    /// From the outage start, ms.
    pub ms: f64,
}

/// The failover of a run whose primary path's outage started at `outage`
/// (`None`: no outage) and that ended at `end`: `read` holds when each
/// message was read, `arrivals` the datagrams that reached the receiver,
/// `secondary` the secondary path's link direction into the receiver.
pub fn failover(
    outage: Option<Time>,
    end: Time,
    read: &[Option<Time>],
    arrivals: &[Arrival],
    secondary: LinkId,
) -> Result<Failover, NoFailover> {
    let outage = outage.ok_or(NoFailover::NoOutage)?;
    if outage > end {
        return Err(NoFailover::OutageAfterRun);
    }
    let over_secondary = |t: Time| {
        arrivals
            .iter()
            .any(|a| a.arrived == t && a.data && a.link == secondary)
    };
    read.iter()
        .enumerate()
        .filter_map(|(i, r)| Some((i, (*r)?)))
        .filter(|&(_, t)| t >= outage && over_secondary(t))
        .min_by_key(|&(i, t)| (t, i))
        .map(|(message, at)| Failover {
            outage,
            message,
            at,
            ms: ms_between(outage, at),
        })
        .ok_or(NoFailover::NothingOverSecondary)
}

/// When the sender moved new data off the failed path: its first data path
/// change at or after the outage (a multi-homed SCTP sender reports each,
/// `Event::DataPathChanged`), if any.
pub fn switch(outage: Time, changes: &[Time]) -> Option<Time> {
    changes.iter().copied().find(|&t| t >= outage)
}

/// The end of the failover: the later of the first delivery over the
/// secondary path and the data path's switch; without a switch, every
/// message written after the outage still went to the failed path first,
/// so the failover lasts as long as the writing (`last_write`).
pub fn failover_end(failover: Time, switch: Option<Time>, last_write: Time) -> Time {
    match switch {
        Some(s) => s.max(failover),
        None => last_write.max(failover),
    }
}

/// The messages written during the failover: from the outage start to the
/// failover's end (`failover_end`), both included.
pub fn caught(outage: Time, failover: Time, written: &[Option<Time>]) -> Vec<usize> {
    written
        .iter()
        .enumerate()
        .filter(|(_, w)| w.is_some_and(|w| w >= outage && w <= failover))
        .map(|(i, _)| i)
        .collect()
}

/// Messages written and never read nor abandoned.
pub fn lost(written: &[Option<Time>], read: &[Option<Time>], abandoned: &[bool]) -> usize {
    written
        .iter()
        .enumerate()
        .filter(|&(i, w)| {
            w.is_some()
                && read.get(i).is_none_or(Option::is_none)
                && !abandoned.get(i).copied().unwrap_or(false)
        })
        .count()
}

/// Copies of a data chunk `sender` put on a path after an earlier copy of
/// it that was not lost: retransmissions that were not needed, as the wire
/// shows them. `log` holds the packets that entered the sender's first hops,
/// in the order they entered (on a dual-homed topology each path is one
/// link, so its first hop is the whole path). Unlike the runner's
/// `spurious_retransmissions` (every copy beyond the first of a lost chunk
/// counts), a retransmission into a black hole after a lost one is needed.
pub fn needless_copies(log: &[brisk_sim::PacketRecord], sender: brisk_sim::HostId) -> usize {
    let mut through = std::collections::HashSet::new();
    let mut needless = 0;
    for p in log.iter().filter(|p| p.src == sender) {
        for &tsn in &p.data_tsns {
            if through.contains(&tsn) {
                needless += 1;
            } else if !p.lost() {
                through.insert(tsn);
            }
        }
    }
    needless
}

/// The report's failover table of a dual-homed experiment: per variant and
/// link (bandwidth and delay), the runs that failed over, the failover time,
/// the MTT of the messages written during it, and the cost (messages lost
/// and duplicated, bytes on each path, retransmissions not needed: see
/// [`needless_copies`]), each a mean per run. `None` when no run recorded an outage or a failover.
pub fn table(exp: &Experiment, records: &[Record]) -> Option<Table> {
    type Key = (usize, u64, u64);
    // (variant, bandwidth, delay) -> metric -> values.
    let mut groups: BTreeMap<Key, BTreeMap<&str, Vec<f64>>> = BTreeMap::new();
    for r in records {
        let Some(v) = exp.variants.iter().position(|v| v.name == r.variant) else {
            continue;
        };
        let key = (v, r.bandwidth_kbps, (r.delay_ms * 1000.0).round() as u64);
        groups
            .entry(key)
            .or_default()
            .entry(r.metric.as_str())
            .or_default()
            .push(r.value);
    }
    let mut rows = Vec::new();
    for ((v, kbps, delay_us), metrics) in &groups {
        let get = |m: &str| metrics.get(m).map_or(&[][..], Vec::as_slice);
        let failed_over = get("failed_over");
        if failed_over.is_empty() {
            continue;
        }
        let mean = |m: &str| crate::stats::mean(get(m));
        let max = |m: &str| crate::stats::summarize(get(m)).max;
        let cell = |x: Option<f64>, digits: usize| {
            x.map_or_else(|| "none".to_owned(), |x| format!("{x:.digits$}"))
        };
        let count = failed_over.iter().filter(|&&x| x > 0.0).count();
        rows.push(vec![
            exp.variants[*v].name.clone(),
            format!(
                "{kbps} kbit/s, {} ms",
                crate::figfmt::trim_number(*delay_us as f64 / 1000.0)
            ),
            format!("{count} of {}", failed_over.len()),
            cell(mean("failover_ms"), 1),
            cell(max("failover_ms"), 1),
            cell(mean("failover_mtt_ms"), 1),
            cell(max("failover_mtt_ms"), 1),
            cell(mean("messages_lost"), 2),
            cell(mean("messages_duplicated"), 2),
            cell(mean("bytes_sent_primary"), 0),
            cell(mean("bytes_sent_secondary"), 0),
            cell(mean("needless_retransmissions"), 2),
        ]);
    }
    (!rows.is_empty()).then(|| Table {
        headers: [
            "variant",
            "link",
            "runs that failed over",
            "failover time (ms, mean)",
            "failover time (ms, max)",
            "MTT of messages written during the failover (ms, mean)",
            "the same (ms, max)",
            "messages lost per run",
            "messages duplicated per run",
            "bytes on the primary path per run",
            "bytes on the secondary path per run",
            "needless retransmissions per run",
        ]
        .map(str::to_owned)
        .to_vec(),
        rows,
    })
}

fn ms_between(from: Time, to: Time) -> f64 {
    (to.as_micros() as f64 - from.as_micros() as f64) / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_failover_lasts_until_data_moved_or_else_as_long_as_the_writing() {
        let t = Time::from_millis;
        assert_eq!(switch(t(1000), &[t(500), t(1100), t(1200)]), Some(t(1100)));
        assert_eq!(switch(t(1000), &[t(500)]), None);
        // PF: data moved at 1100, the first message over the secondary read at 1120.
        assert_eq!(failover_end(t(1120), Some(t(1100)), t(9000)), t(1120));
        // RFC 9260: delivered over the secondary by a retransmission at
        // 2100, data moved only at 64000.
        assert_eq!(failover_end(t(2100), Some(t(64000)), t(90000)), t(64000));
        // Never moved: every message written after the outage is caught.
        assert_eq!(failover_end(t(2100), None, t(90000)), t(90000));
    }
    use brisk_sim::HostId;

    fn arrival(ms: u64, link: usize, data: bool) -> Arrival {
        Arrival {
            from: HostId::new(0),
            sent: Time::from_millis(ms.saturating_sub(10)),
            arrived: Time::from_millis(ms),
            size: 100,
            data,
            link: LinkId::new(link),
            to: "10.0.4.1:9899".parse().unwrap(),
            source: "10.0.3.1:9899".parse().unwrap(),
        }
    }

    const SECONDARY: LinkId = LinkId::new(2);

    fn t(ms: u64) -> Option<Time> {
        Some(Time::from_millis(ms))
    }

    #[test]
    fn the_failover_is_the_first_message_read_after_the_outage_from_the_secondary() {
        // Message 0 read over the primary before the outage, 1 over the
        // primary after it (in flight), 2 and 3 over the secondary; 4 never.
        let read = [t(100), t(1010), t(1500), t(1400), None];
        let arrivals = [
            arrival(100, 0, true),
            arrival(1010, 0, true),
            arrival(1200, 2, false), // no data: a heartbeat, say
            arrival(1400, 2, true),
            arrival(1500, 2, true),
        ];
        let f = failover(t(1000), Time::from_secs(9), &read, &arrivals, SECONDARY).unwrap();
        assert_eq!(f.message, 3);
        assert_eq!(f.at, Time::from_millis(1400));
        assert_eq!(f.ms, 400.0);
        let written = [t(50), t(990), t(1000), t(1300), t(1400), t(1401)];
        assert_eq!(caught(Time::from_secs(1), f.at, &written), [2, 3, 4]);
    }

    #[test]
    fn without_a_delivery_over_the_secondary_there_is_no_failover_and_a_reason() {
        let read = [t(100), t(1010), None];
        let arrivals = [arrival(100, 0, true), arrival(1010, 0, true)];
        let end = Time::from_secs(9);
        assert_eq!(
            failover(t(1000), end, &read, &arrivals, SECONDARY),
            Err(NoFailover::NothingOverSecondary)
        );
        assert_eq!(
            failover(None, end, &read, &arrivals, SECONDARY),
            Err(NoFailover::NoOutage)
        );
        assert_eq!(
            failover(t(10_000), end, &read, &arrivals, SECONDARY),
            Err(NoFailover::OutageAfterRun)
        );
        // A secondary delivery before the outage is no failover.
        let arrivals = [arrival(100, 2, true)];
        assert_eq!(
            failover(t(1000), end, &read, &arrivals, SECONDARY),
            Err(NoFailover::NothingOverSecondary)
        );
        assert_eq!(
            NoFailover::NothingOverSecondary.metric(),
            "no_failover_nothing_over_secondary"
        );
    }

    #[test]
    fn the_table_counts_the_runs_that_failed_over_and_names_a_missing_value() {
        let exp = Experiment::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/dual-homed.toml"),
        )
        .unwrap();
        let record = |variant: &str, metric: &str, value: f64| Record {
            experiment: exp.name.clone(),
            variant: variant.into(),
            bandwidth_kbps: 2000,
            delay_ms: 15.0,
            replication: 0,
            position: None,
            flow: 0,
            tsn: None,
            metric: metric.into(),
            value,
            sweep: None,
        };
        let records = [
            record("standard", "failed_over", 1.0),
            record("standard", "failover_ms", 300.0),
            record("standard", "failed_over", 0.0),
            record("standard", "failover_ms", f64::NAN),
            record("standard", "messages_lost", 3.0),
            record("signaling", "failed_over", 0.0),
            record("signaling", "failover_ms", f64::NAN),
        ];
        let t = table(&exp, &records).unwrap();
        assert_eq!(t.rows.len(), 2);
        assert_eq!(
            t.rows[0][..5],
            ["standard", "2000 kbit/s, 15 ms", "1 of 2", "300.0", "300.0"]
        );
        assert_eq!(t.rows[0][7], "3.00");
        assert_eq!(
            t.rows[1][..4],
            ["signaling", "2000 kbit/s, 15 ms", "0 of 1", "none"]
        );
        assert!(table(&exp, &records[4..5]).is_none());
    }

    #[test]
    fn a_copy_after_one_that_got_through_is_needless_and_one_after_a_lost_copy_is_not() {
        use brisk_sim::{Fate, PacketRecord};
        let packet = |tsns: Vec<u32>, lost: bool, src: usize| PacketRecord {
            entered: Time::ZERO,
            src: HostId::new(src),
            dst: HostId::new(1),
            ordinal: 1,
            data_ordinal: Some(1),
            size: 100,
            data_tsns: tsns,
            fate: if lost {
                Fate::ImpairmentDrop
            } else {
                Fate::Sent {
                    start: Time::ZERO,
                    arrival: Time::from_millis(10),
                    corrupted: false,
                    duplicated: false,
                    reordered: false,
                }
            },
        };
        let log = [
            packet(vec![1, 2], true, 0), // both lost (a black hole)
            packet(vec![1, 2], true, 0), // lost again: needed
            packet(vec![1], false, 0),   // through
            packet(vec![2, 3], false, 0),
            packet(vec![1, 3], false, 0), // both needless
            packet(vec![3], true, 0),     // needless, though lost
            packet(vec![4], false, 1),    // another host's
            packet(vec![4], false, 1),
        ];
        assert_eq!(needless_copies(&log, HostId::new(0)), 3);
    }

    #[test]
    fn lost_messages_are_written_and_neither_read_nor_abandoned() {
        let written = [t(1), t(2), t(3), None];
        let read = [t(5), None, None, None];
        assert_eq!(lost(&written, &read, &[false, false, true, false]), 1);
        assert_eq!(lost(&written, &read, &[]), 2);
    }
}
