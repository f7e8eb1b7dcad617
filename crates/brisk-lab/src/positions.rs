//! The loss-position method's answer by position in the burst: for bursts of
//! a fixed size, the mean MTT of the lost message when it was the 1st, 2nd,
//! ... message of its burst, per variant and sweep point, with the no-loss
//! variants' MTT at the same positions beside them (seed 000, Fig. 2's
//! question asked of any stack).

use std::collections::BTreeMap;

use crate::experiment::{Count, Experiment, Method, Traffic};
use crate::report::Table;
use crate::runner::Record;

/// The table, for loss-position experiments whose bursts all have the same
/// size; `None` otherwise or without data.
pub fn burst_position_table(exp: &Experiment, records: &[Record]) -> Option<Table> {
    let Traffic::Bursts {
        size: Count::Fixed(k),
        ..
    } = exp.traffic
    else {
        return None;
    };
    if exp.method != Method::LossPosition || k == 0 {
        return None;
    }
    let k = u64::from(k);
    let several_points = exp.points().len() > 1;
    // (variant index, bandwidth, delay in µs) -> position -> MTTs.
    type Key = (usize, u64, u64);
    let mut by: BTreeMap<Key, BTreeMap<u64, Vec<f64>>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.metric == "mtt_ms") {
        let (Some(tsn), Some(vi)) = (r.tsn, exp.variants.iter().position(|v| v.name == r.variant))
        else {
            continue;
        };
        let key = (vi, r.bandwidth_kbps, (r.delay_ms * 1000.0).round() as u64);
        by.entry(key)
            .or_default()
            .entry((tsn - 1) % k + 1)
            .or_default()
            .push(r.value);
    }
    let mean =
        |v: &[f64]| crate::stats::mean(v).map_or_else(|| "no data".into(), |m| format!("{m:.1}"));
    let rows: Vec<Vec<String>> = by
        .iter()
        .map(|(&(vi, bw, delay_us), positions)| {
            let v = &exp.variants[vi];
            let mut name = v.name.clone();
            if v.no_loss {
                name.push_str(" (no loss)");
            }
            if several_points {
                name.push_str(&format!(", {bw} kbit/s, {} ms", delay_us as f64 / 1000.0));
            }
            let mut row = vec![name];
            let mut all = Vec::new();
            for p in 1..=k {
                let values = positions.get(&p).map_or(&[][..], Vec::as_slice);
                row.push(mean(values));
                all.extend_from_slice(values);
            }
            row.push(mean(&all));
            row
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut headers = vec!["variant".to_owned()];
    headers.extend((1..=k).map(|p| format!("position {p} (ms)")));
    headers.push("all positions (ms)".to_owned());
    Some(Table { headers, rows })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::Experiment;
    use crate::figures::tests::record;
    use std::path::Path;

    fn exp() -> Experiment {
        let text = r#"
name = "t"
title = "T"
source = "test"
method = "loss-position"
statistic = "median"
figure = "mtt-per-tsn"
[topology]
kind = "point-to-point"
bandwidth = "2000kbit"
delay = "15ms"
[traffic]
kind = "bursts"
bursts = 4
warmup_bursts = 2
burst_size = 4
gap = "200ms"
message_size = 200
[[variants]]
name = "std"
preset = "rfc9260"
[[variants]]
name = "none"
preset = "rfc9260"
no_loss = true
"#;
        Experiment::parse(Path::new("t.toml"), text).unwrap()
    }

    #[test]
    fn messages_are_grouped_by_their_place_in_the_burst() {
        let records = vec![
            record("std", 9, 100.0),
            record("std", 13, 120.0),
            record("std", 12, 300.0),
            record("none", 9, 16.0),
            record("none", 10, 17.0),
        ];
        let t = burst_position_table(&exp(), &records).unwrap();
        assert_eq!(t.headers.len(), 1 + 4 + 1);
        assert_eq!(
            t.rows[0],
            ["std", "110.0", "no data", "no data", "300.0", "173.3"]
        );
        assert_eq!(
            t.rows[1],
            [
                "none (no loss)",
                "16.0",
                "17.0",
                "no data",
                "no data",
                "16.5"
            ]
        );
    }
}
