//! Seed 004's delay: the one-way delay of every data packet, from the moment
//! its sender sent it to its arrival at the receiver, queueing included;
//! not the application's message transfer time. Tables 1 to 3 give its mean
//! and a "variance" whose values match the mean of the squared delay (in
//! s², times 1000) far better than a variance: at 5 Mbit/s and no loss the
//! paper has 62.88 ms and 3.94, and 0.06288² × 1000 = 3.95. The table shows
//! our variance and our mean square both.

use std::collections::{BTreeMap, BTreeSet};

use brisk_proto::Time;
use brisk_sim::{Arrival, HostId};

use crate::experiment::Experiment;
use crate::figfmt::Figures;
use crate::output::PointKey;
use crate::plot::{Chart, Point, Series, SeriesStyle};
use crate::report::Table;
use crate::runner::Record;
use crate::stats;

/// Delay statistics of the data packets of one flow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PacketDelay {
    pub packets: usize,
    pub mean_ms: f64,
    /// The sample variance, ms² (0 for a single packet).
    pub variance_ms2: f64,
    /// The mean of the squared delays, ms².
    pub mean_square_ms2: f64,
}

/// The delay statistics of the data packets from `sender` among `arrivals`
/// that were sent within `[from, until)`; `None` if there are none.
pub fn packet_delay(
    arrivals: &[Arrival],
    sender: HostId,
    (from, until): (Time, Time),
) -> Option<PacketDelay> {
    let delays: Vec<f64> = arrivals
        .iter()
        .filter(|a| a.data && a.from == sender && a.sent >= from && a.sent < until)
        .map(|a| (a.arrived.as_micros() - a.sent.as_micros()) as f64 / 1000.0)
        .collect();
    let mean_ms = stats::mean(&delays)?;
    let variance_ms2 = stats::sample_std_dev(&delays).map_or(0.0, |sd| sd * sd);
    let mean_square_ms2 = delays.iter().map(|d| d * d).sum::<f64>() / delays.len() as f64;
    Some(PacketDelay {
        packets: delays.len(),
        mean_ms,
        variance_ms2,
        mean_square_ms2,
    })
}

/// The time-weighted mean cwnd (bytes) over `[from, until)` of a
/// congestion log (each state from its time to the next's), the last state
/// lasting until `end`.
pub fn mean_cwnd(
    log: &[(Time, brisk_sim::Congestion)],
    (from, until): (Time, Time),
    end: Time,
) -> Option<f64> {
    let (lo, hi) = (from.as_micros(), until.min(end).as_micros());
    let mut weighted = 0.0;
    let mut total = 0u64;
    for (i, (t, c)) in log.iter().enumerate() {
        let next = log.get(i + 1).map_or(end, |n| n.0).as_micros();
        let (a, b) = (t.as_micros().max(lo), next.min(hi));
        if b > a {
            weighted += f64::from(c.cwnd) * (b - a) as f64;
            total += b - a;
        }
    }
    (total > 0).then(|| weighted / total as f64)
}

/// The metric names a run records.
pub const MEAN: &str = "packet_owd_mean_ms";
pub const VARIANCE: &str = "packet_owd_variance_ms2";
pub const MEAN_SQUARE: &str = "packet_owd_mean_square_ms2";
pub const PACKETS: &str = "packet_owd_packets";
/// The sender's time-weighted mean cwnd, in packets of its largest payload.
pub const CWND: &str = "cwnd_mean_packets";

/// The delay table (every variant at every sweep point, each the mean over
/// replications) and the mean delay against the bottleneck bandwidth.
pub(crate) fn figure(exp: &Experiment, records: &[Record]) -> Figures {
    // (point, variant, metric) -> values over replications.
    let mut values: BTreeMap<(PointKey, usize, &str), Vec<f64>> = BTreeMap::new();
    for r in records {
        let Some(vi) = exp.variants.iter().position(|v| v.name == r.variant) else {
            continue;
        };
        let metric = match r.metric.as_str() {
            MEAN => MEAN,
            VARIANCE => VARIANCE,
            MEAN_SQUARE => MEAN_SQUARE,
            PACKETS => PACKETS,
            CWND => CWND,
            "goodput_kbps" => "goodput_kbps",
            "share_sent_pct" => "share_sent_pct",
            "share_pct" => "share_pct",
            _ => continue,
        };
        values
            .entry((PointKey::of(r), vi, metric))
            .or_default()
            .push(r.value);
    }
    let mean =
        |p: &PointKey, vi: usize, m: &str| values.get(&(*p, vi, m)).and_then(|v| stats::mean(v));
    let points: BTreeSet<PointKey> = values.keys().map(|k| k.0).collect();
    let mut rows = Vec::new();
    for p in &points {
        for (vi, v) in exp.variants.iter().enumerate() {
            let Some(m) = mean(p, vi, MEAN) else {
                continue;
            };
            let cell = |x: Option<f64>, digits: usize| {
                x.map_or("-".to_owned(), |x| format!("{x:.digits$}"))
            };
            rows.push(vec![
                format!("{} kbit/s", p.bandwidth_kbps),
                p.loss_ppb.map_or("0".to_owned(), |l| {
                    crate::figfmt::trim_number(l as f64 / 1e9)
                }),
                v.name.clone(),
                cell(mean(p, vi, PACKETS), 0),
                format!("{m:.2}"),
                cell(mean(p, vi, VARIANCE), 2),
                cell(mean(p, vi, MEAN_SQUARE).map(|x| x / 1000.0), 2),
                cell(mean(p, vi, "goodput_kbps"), 1),
                cell(mean(p, vi, CWND), 2),
                cell(mean(p, vi, "share_sent_pct"), 2),
                cell(mean(p, vi, "share_pct"), 2),
            ]);
        }
    }
    let table = Table {
        headers: [
            "bottleneck",
            "loss",
            "variant",
            "data packets",
            "mean one-way delay (ms)",
            "variance (ms²)",
            "mean square (s² × 1000; the paper's \"variance\")",
            "goodput (kbit/s)",
            "mean cwnd (packets)",
            "share of bytes sent (%, eq. 1)",
            "share of goodput (%)",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect(),
        rows,
    };
    // Mean delay against bandwidth: one series per variant and loss rate.
    let mut curves: BTreeMap<(usize, Option<u64>), Vec<Point>> = BTreeMap::new();
    for p in &points {
        for vi in 0..exp.variants.len() {
            if let Some(y) = mean(p, vi, MEAN) {
                curves.entry((vi, p.loss_ppb)).or_default().push(Point {
                    x: p.bandwidth_kbps as f64 / 1000.0,
                    y,
                    ci: None,
                });
            }
        }
    }
    let losses: Vec<Option<u64>> = curves
        .keys()
        .map(|k| k.1)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let series = curves
        .into_iter()
        .map(|((vi, loss), points)| {
            let li = losses.iter().position(|l| *l == loss).unwrap_or(0);
            let loss = loss.map_or(0.0, |l| l as f64 / 1e9);
            let name = format!(
                "{}, loss {}",
                exp.variants[vi].name,
                crate::figfmt::trim_number(loss)
            );
            Series::new(name, points, SeriesStyle::LineAndMarkers)
                .with_color(vi)
                .with_marker(li)
        })
        .collect();
    let chart = Chart {
        title: format!("{}: mean one-way packet delay", exp.title),
        x_label: "bottleneck (Mbit/s)".into(),
        y_label: "mean one-way delay (ms)".into(),
        series,
        x_range: None,
        y_range: None,
        x_categories: Vec::new(),
    };
    (
        vec![(format!("{}-delay", exp.name), chart)],
        vec![(
            "One-way delay of every data packet (mean over replications)".to_owned(),
            table,
        )],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrival(from: usize, sent_ms: u64, arrived_ms: u64, data: bool) -> Arrival {
        Arrival {
            from: HostId::new(from),
            sent: Time::from_millis(sent_ms),
            arrived: Time::from_millis(arrived_ms),
            size: 1500,
            data,
            link: brisk_sim::LinkId::new(0),
            to: "10.0.2.1:9899".parse().unwrap(),
            source: "10.0.1.1:9899".parse().unwrap(),
        }
    }

    #[test]
    fn the_mean_cwnd_weighs_each_state_by_how_long_it_held_inside_the_window() {
        let c = |cwnd| brisk_sim::Congestion {
            cwnd,
            ssthresh: 0,
            flight_size: 0,
        };
        let log = [
            (Time::from_secs(0), c(1000)),
            (Time::from_secs(2), c(4000)),
            (Time::from_secs(3), c(2000)),
        ];
        // [1 s, 5 s): 1 s of 1000, 1 s of 4000, 2 s of 2000.
        let window = (Time::from_secs(1), Time::from_secs(9));
        assert_eq!(mean_cwnd(&log, window, Time::from_secs(5)), Some(2250.0));
        assert_eq!(mean_cwnd(&[], window, Time::from_secs(5)), None);
    }

    #[test]
    fn only_the_senders_data_packets_inside_the_window_count() {
        let log = [
            arrival(0, 10, 60, true),   // 50 ms
            arrival(0, 20, 90, true),   // 70 ms
            arrival(0, 30, 70, false),  // an ACK-like packet: not data
            arrival(1, 40, 45, true),   // another host
            arrival(0, 5, 500, true),   // sent before the window
            arrival(0, 100, 999, true), // sent at its end
        ];
        let d = packet_delay(
            &log,
            HostId::new(0),
            (Time::from_millis(10), Time::from_millis(100)),
        )
        .unwrap();
        assert_eq!(d.packets, 2);
        assert_eq!(d.mean_ms, 60.0);
        assert!((d.variance_ms2 - 200.0).abs() < 1e-9, "{}", d.variance_ms2);
        assert_eq!(d.mean_square_ms2, (2500.0 + 4900.0) / 2.0);
        assert_eq!(
            packet_delay(&log, HostId::new(2), (Time::ZERO, Time::from_secs(1))),
            None
        );
    }
}
