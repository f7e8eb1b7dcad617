//! The sweep: its dimensions, declared once ([`Dim`] and [`Value`]), the
//! values an experiment gives each, and how they combine into sweep points.
//! Adding a dimension is a [`Dim`] and a [`Value`] here, its `[sweep]` key
//! and check (`RawSweep` and `dim_values` in `experiment.rs`), and its
//! effect (a [`Point`] field, and what the runner does with it).

use std::time::Duration;

use serde::Deserialize;

/// A sweep dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dim {
    Bandwidth,
    Delay,
    MessageSize,
    Loss,
    Corrupt,
    Rate,
    Mtu,
}

impl Dim {
    /// Every sweep dimension, in the order sweep points are laid out:
    /// bandwidth outermost, then delay, message size, loss, corruption, rate
    /// and MTU.
    pub const ALL: [Dim; 7] = [
        Dim::Bandwidth,
        Dim::Delay,
        Dim::MessageSize,
        Dim::Loss,
        Dim::Corrupt,
        Dim::Rate,
        Dim::Mtu,
    ];

    /// The dimension as the file writes it (`[sweep]` keys, `axis`).
    pub fn name(self) -> &'static str {
        match self {
            Dim::Bandwidth => "bandwidth",
            Dim::Delay => "delay",
            Dim::MessageSize => "message_size",
            Dim::Loss => "loss",
            Dim::Corrupt => "corrupt",
            Dim::Rate => "rate",
            Dim::Mtu => "mtu",
        }
    }

    /// Bandwidth and delay: the link's own, which every point has (the
    /// topology's when not swept) and every run's record and seed name.
    pub fn is_link(self) -> bool {
        matches!(self, Dim::Bandwidth | Dim::Delay)
    }

    /// Its place in [`Dim::ALL`] (declared in the same order).
    fn index(self) -> usize {
        self as usize
    }
}

/// One value of a sweep dimension; `None`: not set (the traffic's or the
/// topology's own).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// Bits per second.
    Bandwidth(u64),
    /// One way.
    Delay(Duration),
    /// Bytes.
    MessageSize(Option<usize>),
    /// Bernoulli loss added to the forward bottleneck.
    Loss(Option<f64>),
    /// Packet error rate added to the forward bottleneck.
    Corrupt(Option<f64>),
    /// Messages per second (periodic traffic).
    Rate(Option<f64>),
    /// IP MTU.
    Mtu(Option<usize>),
}

impl Value {
    /// Whether the value is set (bandwidth and delay always are).
    pub fn is_set(self) -> bool {
        match self {
            Value::Bandwidth(_) | Value::Delay(_) => true,
            Value::MessageSize(v) | Value::Mtu(v) => v.is_some(),
            Value::Loss(v) | Value::Corrupt(v) | Value::Rate(v) => v.is_some(),
        }
    }

    /// Its effect: the point with this value.
    fn apply(self, p: &mut Point) {
        match self {
            Value::Bandwidth(v) => p.bandwidth_bps = v,
            Value::Delay(v) => p.delay = v,
            Value::MessageSize(v) => p.message_size = v,
            Value::Loss(v) => p.loss = v,
            Value::Corrupt(v) => p.corrupt = v,
            Value::Rate(v) => p.rate = v,
            Value::Mtu(v) => p.mtu = v,
        }
    }
}

/// The values of one sweep point, by index into each dimension's values,
/// ordered as [`Dim::ALL`] (so points and runs sort bandwidth first).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PointIdx([usize; Dim::ALL.len()]);

impl PointIdx {
    /// The index of dimension `d`'s value.
    pub fn get(&self, d: Dim) -> usize {
        self.0[d.index()]
    }

    /// Sets the index of dimension `d`'s value.
    pub fn set(&mut self, d: Dim, i: usize) {
        self.0[d.index()] = i;
    }

    /// This point with dimension `d` at value `i`.
    pub fn with(mut self, d: Dim, i: usize) -> PointIdx {
        self.set(d, i);
        self
    }
}

/// The values of one sweep point.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Point {
    pub bandwidth_bps: u64,
    /// One way.
    pub delay: Duration,
    /// `None`: the traffic's own.
    pub message_size: Option<usize>,
    /// Bernoulli loss added to the forward bottleneck.
    pub loss: Option<f64>,
    /// Packet error rate (corruption) added to the forward bottleneck.
    pub corrupt: Option<f64>,
    /// Messages per second (periodic traffic).
    pub rate: Option<f64>,
    /// IP MTU: both endpoints' `mtu` is this less the topology's overhead bytes.
    pub mtu: Option<usize>,
}

/// How the dimensions of `[sweep]` combine into sweep points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Combine {
    /// Every combination of every dimension's values.
    #[default]
    Product,
    /// The first value of every dimension is the base; each other value is
    /// tried with every other dimension at its base (the paper's "one
    /// parameter at a time"). The `axis` dimension, if any, is crossed with
    /// all of them.
    OneAtATime,
    /// The i-th values of every swept dimension together (every list of
    /// more than one value has the same length): chosen points of a grid,
    /// such as its corners. The `axis` dimension, if any, is crossed with
    /// all of them.
    Zip,
}

/// An experiment's sweep: every dimension with its values (a single value
/// each when not swept), in [`Dim::ALL`] order, and how they combine.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    pub dims: Vec<(Dim, Vec<Value>)>,
    pub combine: Combine,
    pub axis: Option<Dim>,
}

impl Sweep {
    /// The values of dimension `d`.
    pub fn values(&self, d: Dim) -> &[Value] {
        self.dims
            .iter()
            .find(|(e, _)| *e == d)
            .map_or(&[][..], |(_, v)| v.as_slice())
    }

    /// How many values dimension `d` has.
    pub fn len(&self, d: Dim) -> usize {
        self.values(d).len()
    }

    /// The bandwidths swept, bits per second.
    pub fn bandwidths(&self) -> Vec<u64> {
        self.values(Dim::Bandwidth)
            .iter()
            .filter_map(|v| match v {
                Value::Bandwidth(b) => Some(*b),
                _ => None,
            })
            .collect()
    }

    /// Whether any dimension beyond the link's (bandwidth and delay) is set.
    pub fn sets_beyond_link(&self) -> bool {
        self.dims
            .iter()
            .filter(|(d, _)| !d.is_link())
            .any(|(_, values)| values.iter().any(|v| v.is_set()))
    }

    /// The values of the sweep point `p`.
    pub fn point(&self, p: &PointIdx) -> Point {
        let mut point = Point::default();
        for (d, values) in &self.dims {
            values[p.get(*d)].apply(&mut point);
        }
        point
    }

    /// The sweep points, in a fixed order: bandwidth outermost, then delay,
    /// message size, loss, corruption, rate and MTU.
    pub fn points(&self) -> Vec<PointIdx> {
        match self.combine {
            Combine::Zip => self.zipped_points(),
            Combine::Product | Combine::OneAtATime => self.crossed_points(),
        }
    }

    /// A zipped dimension: swept with more than one value, and not the axis.
    fn zipped(&self, d: Dim) -> bool {
        self.axis != Some(d) && self.len(d) > 1
    }

    /// `combine = "zip"`: the i-th values together, each crossed with the axis.
    fn zipped_points(&self) -> Vec<PointIdx> {
        let n = Dim::ALL
            .iter()
            .filter(|&&d| self.zipped(d))
            .map(|&d| self.len(d))
            .max()
            .unwrap_or(1);
        let axis_len = self.axis.map_or(1, |a| self.len(a));
        let mut out = Vec::new();
        for i in 0..n {
            for j in 0..axis_len {
                let mut p = PointIdx::default();
                for d in Dim::ALL {
                    if self.zipped(d) {
                        p.set(d, i);
                    } else if self.axis == Some(d) {
                        p.set(d, j);
                    }
                }
                out.push(p);
            }
        }
        out
    }

    /// Every combination, or one at a time around the base.
    fn crossed_points(&self) -> Vec<PointIdx> {
        let mut out = vec![PointIdx::default()];
        for d in Dim::ALL {
            let n = self.len(d);
            let crossed = self.combine == Combine::Product || self.axis == Some(d);
            let mut next = Vec::new();
            for p in &out {
                for i in 0..n {
                    // One at a time: a non-axis dimension leaves its base only
                    // where every other non-axis dimension is at its base.
                    if !crossed && i > 0 && !self.at_base_except(p, d) {
                        continue;
                    }
                    next.push(p.with(d, i));
                }
            }
            out = next;
        }
        out
    }

    /// Whether every non-axis dimension of `p` other than `d` is at its base.
    fn at_base_except(&self, p: &PointIdx, d: Dim) -> bool {
        Dim::ALL
            .iter()
            .all(|&e| e == d || self.axis == Some(e) || p.get(e) == 0)
    }

    /// `combine = "zip"`: the first zipped dimension whose length differs
    /// from the first one's, as (first, other).
    pub fn unequal_zip(&self) -> Option<(Dim, Dim)> {
        if self.combine != Combine::Zip {
            return None;
        }
        let mut zipped = Dim::ALL.into_iter().filter(|&d| self.zipped(d));
        let first = zipped.next()?;
        let other = zipped.find(|&d| self.len(d) != self.len(first))?;
        Some((first, other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dimension_sits_at_its_index_in_all() {
        for (i, d) in Dim::ALL.into_iter().enumerate() {
            assert_eq!(d.index(), i, "{}", d.name());
        }
    }
}
