//! Seed 004, Figs. 4 to 6: how one protocol and another recover a loss in a
//! bulk transfer, drawn from one run per variant traced again: the sender's
//! data packets over time, numbered in the order they were first sent
//! (dropped ones marked), and its cwnd in packets.

use std::collections::HashMap;

use brisk_proto::Time;

use crate::experiment::Experiment;
use crate::figfmt::Figures;
use crate::plot::{Chart, Point, Series, SeriesStyle};
use crate::report::Table;
use crate::runner::{RunTrace, expand, trace_run};

/// Time before the first drop and after the last that the charts show.
const BEFORE: f64 = 0.25;
const AFTER: f64 = 1.0;

/// One data packet the sender sent, as the figures place it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sent {
    pub at_s: f64,
    /// 1-based, in the order its data was first sent.
    pub number: u64,
    pub retransmission: bool,
    pub lost: bool,
    /// Dropped by one of the link's impairments (the experiment's chosen
    /// losses), not by its queue.
    pub chosen: bool,
}

/// The sender's data packets, numbered by their first unit (an SCTP TSN, a
/// TCP segment's first sequence number) in the order units were first sent.
pub fn numbered(trace: &RunTrace) -> Vec<Sent> {
    let mut numbers: HashMap<u32, u64> = HashMap::new();
    let mut out = Vec::new();
    for p in &trace.packets {
        let Some(&unit) = p.data_tsns.first() else {
            continue;
        };
        let next = numbers.len() as u64 + 1;
        let (number, retransmission) = match numbers.get(&unit) {
            Some(&n) => (n, true),
            None => {
                numbers.insert(unit, next);
                (next, false)
            }
        };
        // Every further unit of a bundle gets its number too.
        for &u in &p.data_tsns[1..] {
            let next = numbers.len() as u64 + 1;
            numbers.entry(u).or_insert(next);
        }
        out.push(Sent {
            at_s: secs(p.entered),
            number,
            retransmission,
            lost: p.lost(),
            chosen: p.fate == brisk_net::Fate::ImpairmentDrop,
        });
    }
    out
}

fn secs(t: Time) -> f64 {
    t.as_micros() as f64 / 1e6
}

/// The cwnd (packets) in force at `at_s`.
fn cwnd_at(trace: &RunTrace, at_s: f64) -> Option<f64> {
    let seg = trace.segment.max(1) as f64;
    trace
        .congestion
        .iter()
        .take_while(|(t, _)| secs(*t) <= at_s)
        .last()
        .map(|(_, c)| f64::from(c.cwnd) / seg)
}

/// The figures: sequence and cwnd charts around the drops, and a table of
/// what each variant did.
pub(crate) fn figure(exp: &Experiment) -> Figures {
    let keys = expand(exp);
    let mut seq_series = Vec::new();
    let mut cwnd_series = Vec::new();
    let mut rows = Vec::new();
    for (vi, v) in exp.variants.iter().enumerate() {
        let Some(key) = keys.iter().find(|k| k.variant == vi) else {
            continue;
        };
        let Ok(trace) = trace_run(exp, key) else {
            continue;
        };
        let sent = numbered(&trace);
        // The window: around the losses the impairments chose (a queue
        // overflow elsewhere in the run does not widen it).
        let chosen: Vec<&Sent> = sent.iter().filter(|s| s.chosen).collect();
        let (Some(first), Some(last)) = (chosen.first(), chosen.last()) else {
            rows.push(vec![v.name.clone(), "no packet lost".into()]);
            continue;
        };
        let (lo, hi) = (first.at_s - BEFORE, last.at_s + AFTER);
        let inside = |t: f64| t >= lo && t <= hi;
        let points = |f: &dyn Fn(&Sent) -> bool| -> Vec<Point> {
            sent.iter()
                .filter(|s| inside(s.at_s) && f(s))
                .map(|s| Point::new(s.at_s, s.number as f64))
                .collect()
        };
        seq_series.push(
            Series::new(
                format!("{}: sent", v.name),
                points(&|s| !s.lost && !s.retransmission),
                SeriesStyle::Markers,
            )
            .with_color(vi)
            .with_marker(0),
        );
        seq_series.push(
            Series::new(
                format!("{}: dropped", v.name),
                points(&|s| s.lost),
                SeriesStyle::Markers,
            )
            .with_color(vi)
            .with_marker(2),
        );
        seq_series.push(
            Series::new(
                format!("{}: retransmitted", v.name),
                points(&|s| s.retransmission && !s.lost),
                SeriesStyle::Markers,
            )
            .with_color(vi)
            .with_marker(1),
        );
        let seg = trace.segment.max(1) as f64;
        let mut cwnd: Vec<Point> = Vec::new();
        for (t, c) in &trace.congestion {
            let t = secs(*t);
            let y = f64::from(c.cwnd) / seg;
            if t < lo {
                cwnd.clear();
                cwnd.push(Point::new(lo, y));
            } else if t <= hi {
                // Steps: the old value until the change.
                if let Some(prev) = cwnd.last().map(|p| p.y) {
                    cwnd.push(Point::new(t, prev));
                }
                cwnd.push(Point::new(t, y));
            }
        }
        cwnd_series.push(Series::new(v.name.clone(), cwnd, SeriesStyle::Line).with_color(vi));
        // The table: the drops, the first retransmission of each, the cwnd
        // before and after, and what the sender sent in the second after.
        let numbers: Vec<String> = sent
            .iter()
            .filter(|s| s.lost && inside(s.at_s))
            .map(|d| d.number.to_string())
            .collect();
        let first_rtx = sent
            .iter()
            .find(|s| s.retransmission && s.number == first.number)
            .map(|s| s.at_s);
        // The cwnd the loss was detected at: its highest before the
        // first retransmission.
        let before = trace
            .congestion
            .iter()
            .filter(|(t, _)| secs(*t) <= first_rtx.unwrap_or(first.at_s))
            .filter(|(t, _)| secs(*t) >= first.at_s)
            .map(|(_, c)| f64::from(c.cwnd) / seg)
            .fold(cwnd_at(&trace, first.at_s).unwrap_or(0.0), f64::max);
        let min_cwnd = trace
            .congestion
            .iter()
            .filter(|(t, _)| secs(*t) >= first.at_s && secs(*t) <= hi)
            .map(|(_, c)| f64::from(c.cwnd) / seg)
            .fold(f64::INFINITY, f64::min);
        let new_after = sent
            .iter()
            .filter(|s| !s.retransmission && s.at_s > first.at_s && s.at_s <= first.at_s + AFTER)
            .count();
        let cell = |x: Option<f64>| x.map_or("-".to_owned(), |x| format!("{x:.2}"));
        rows.push(vec![
            v.name.clone(),
            numbers.join(", "),
            format!("{:.4}", first.at_s),
            cell(cwnd_at(&trace, first.at_s)),
            format!("{before:.2}"),
            first_rtx.map_or("none".to_owned(), |t| {
                format!("{:.4} (+{:.1} ms)", t, (t - first.at_s) * 1000.0)
            }),
            cell(min_cwnd.is_finite().then_some(min_cwnd)),
            new_after.to_string(),
        ]);
    }
    let chart = |title: &str, y: &str, series: Vec<Series>| Chart {
        title: format!("{}: {title}", exp.title),
        x_label: "time (s)".into(),
        y_label: y.into(),
        series,
        x_range: None,
        y_range: None,
        x_categories: Vec::new(),
    };
    let table = Table {
        headers: [
            "variant",
            "packets lost in the window (number in order first sent)",
            "first drop at (s)",
            "cwnd then (packets)",
            "highest cwnd before its retransmission (packets)",
            "its first retransmission at (s)",
            "lowest cwnd after (packets)",
            "new packets in the second after the drop",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect(),
        rows,
    };
    (
        vec![
            (
                format!("{}-sequence", exp.name),
                chart(
                    "data packets sent",
                    "packet (in the order first sent)",
                    seq_series,
                ),
            ),
            (
                format!("{}-cwnd", exp.name),
                chart("congestion window", "cwnd (packets)", cwnd_series),
            ),
        ],
        vec![(
            "The recovery of each variant, from one run traced again (the same run as in runs.csv)"
                .to_owned(),
            table,
        )],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use brisk_net::{Fate, HostId, PacketRecord};

    fn packet(ms: u64, units: &[u32], dropped: bool) -> PacketRecord {
        let at = Time::from_millis(ms);
        PacketRecord {
            entered: at,
            src: HostId::new(0),
            dst: HostId::new(1),
            ordinal: 0,
            data_ordinal: None,
            size: 100,
            data_tsns: units.to_vec(),
            fate: if dropped {
                Fate::ImpairmentDrop
            } else {
                Fate::Sent {
                    start: at,
                    arrival: at,
                    corrupted: false,
                    duplicated: false,
                    reordered: false,
                }
            },
        }
    }

    #[test]
    fn packets_are_numbered_by_first_sending_and_retransmissions_keep_their_number() {
        let trace = RunTrace {
            packets: vec![
                packet(0, &[1000], false),
                packet(1, &[], false), // no data: not drawn
                packet(2, &[2460], true),
                packet(3, &[3920, 5380], false),
                packet(4, &[6840], false),
                packet(9, &[2460], false),
            ],
            ..RunTrace::default()
        };
        let got: Vec<(u64, bool, bool)> = numbered(&trace)
            .iter()
            .map(|s| (s.number, s.retransmission, s.lost))
            .collect();
        assert_eq!(
            got,
            [
                (1, false, false),
                (2, false, true),
                (3, false, false),
                (5, false, false),
                (2, true, false),
            ]
        );
    }
}
