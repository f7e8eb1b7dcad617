//! Bootstrap confidence intervals over replications (Efron's percentile
//! bootstrap), deterministic: every interval draws from a ChaCha stream
//! seeded from the experiment's seed and what is estimated, so the same
//! records give the same interval on every machine and in every shard merge.
//!
//! **What is resampled: runs, not messages.** The messages of one run are not
//! independent (a loss burst or a backlog delays many in a row), so the unit
//! that is exchangeable is the run. A resample draws as many runs as there
//! are, with replacement, and **pools** their messages; the statistic (the
//! 99th percentile) is taken over the pool. Pooling, not the p99 of each run
//! averaged, because the pooled p99 is the estimator the tables print (every
//! message of every run) and it uses every tail message: with 1,000 messages
//! a run has only 10 above its own p99, so a per-run p99 is itself noisy and
//! biased towards the body, where the pool of R runs has 10·R.
//!
//! A ratio of two variants' statistics resamples each variant's runs
//! independently (their runs share no randomness that pairs them) and takes
//! the ratio in every resample.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Resamples per interval: enough that the 2.5% and 97.5% percentiles of the
/// resampled statistic move by well under 1% between seeds.
pub const RESAMPLES: usize = 2000;

/// The coverage of every interval: 95%, two-sided.
const ALPHA: f64 = 0.05;

/// A stable seed for the interval of `what` (a text naming the statistic,
/// variants and point) in an experiment seeded `seed`: FNV-1a over the text,
/// mixed with the seed. Not `DefaultHasher`, whose output may change between
/// Rust releases.
pub fn seed_for(seed: u64, what: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed.rotate_left(17);
    for b in what.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The `q` quantile (0 to 1) of sorted values, nearest rank: the same rule
/// as the latency tables.
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    Some(sorted[((last as f64) * q).round() as usize])
}

/// The nearest-rank `q` quantile of the pool in which run `i` (its values
/// sorted ascending in `runs[i]`) appears `counts[i]` times, without building
/// the pool: a merge from the nearer end that stops at the rank. For the
/// 99th percentile it walks about 1% of the pool. (Negating the values of a
/// walk from the bottom turns -0.0 into 0.0; MTTs are never negative zero.)
pub fn pooled_quantile(runs: &[Vec<f64>], counts: &[u32], q: f64) -> Option<f64> {
    let total: u64 = runs
        .iter()
        .zip(counts)
        .map(|(r, &c)| r.len() as u64 * u64::from(c))
        .sum();
    let last = total.checked_sub(1)?;
    let rank = ((last as f64) * q).round() as u64;
    let from_top = rank * 2 > last;
    // How many pooled values lie beyond the wanted one, on the side we walk.
    let skip = if from_top { last - rank } else { rank };
    // The next unread value of each drawn run, nearest the walked end
    // first: a max-heap on the value (negated when walking up from the
    // bottom), so each step costs log(runs).
    let at = |i: usize, k: usize| {
        let r = &runs[i];
        (k < r.len()).then(|| if from_top { r[r.len() - 1 - k] } else { r[k] })
    };
    let key = |x: f64| Next(if from_top { x } else { -x });
    let mut heap: BinaryHeap<(Next, Reverse<usize>, usize)> = (0..runs.len())
        .filter(|&i| counts[i] > 0)
        .filter_map(|i| Some((key(at(i, 0)?), Reverse(i), 0)))
        .collect();
    let mut passed = 0u64;
    while let Some((Next(k), Reverse(i), taken)) = heap.pop() {
        passed += u64::from(counts[i]);
        if passed > skip {
            return Some(if from_top { k } else { -k });
        }
        if let Some(x) = at(i, taken + 1) {
            heap.push((key(x), Reverse(i), taken + 1));
        }
    }
    None
}

/// A value ordered by `f64::total_cmp`, for the heap.
#[derive(Debug, Clone, Copy)]
struct Next(f64);

impl PartialEq for Next {
    fn eq(&self, other: &Self) -> bool {
        self.0.total_cmp(&other.0).is_eq()
    }
}

impl Eq for Next {}

impl PartialOrd for Next {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Next {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// How many times each of `n` runs is drawn in one resample of `n` draws.
fn resample(rng: &mut ChaCha8Rng, n: usize) -> Vec<u32> {
    let mut counts = vec![0u32; n];
    for _ in 0..n {
        counts[rng.random_range(0..n)] += 1;
    }
    counts
}

/// The percentile interval of sorted resampled statistics.
fn percentile_interval(mut stats: Vec<f64>) -> Option<(f64, f64)> {
    stats.retain(|x| x.is_finite());
    stats.sort_by(f64::total_cmp);
    Some((
        quantile(&stats, ALPHA / 2.0)?,
        quantile(&stats, 1.0 - ALPHA / 2.0)?,
    ))
}

/// The 95% percentile-bootstrap interval of `stat` over `n` runs: `stat`
/// receives how many times each run was drawn. `None` with fewer than two
/// runs (a single run has no spread to resample).
pub fn interval(seed: u64, n: usize, stat: impl Fn(&[u32]) -> Option<f64>) -> Option<(f64, f64)> {
    if n < 2 {
        return None;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let stats = (0..RESAMPLES)
        .filter_map(|_| stat(&resample(&mut rng, n)))
        .collect();
    percentile_interval(stats)
}

/// The 95% percentile-bootstrap interval of `stat_a / stat_b`, the runs of
/// A (`n_a`) and of B (`n_b`) resampled independently. `None` unless both
/// have at least two runs.
pub fn ratio_interval(
    seed: u64,
    n_a: usize,
    stat_a: impl Fn(&[u32]) -> Option<f64>,
    n_b: usize,
    stat_b: impl Fn(&[u32]) -> Option<f64>,
) -> Option<(f64, f64)> {
    if n_a < 2 || n_b < 2 {
        return None;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let stats = (0..RESAMPLES)
        .filter_map(|_| {
            let a = stat_a(&resample(&mut rng, n_a))?;
            let b = stat_b(&resample(&mut rng, n_b))?;
            Some(a / b)
        })
        .collect();
    percentile_interval(stats)
}

/// The mean of per-run values weighted by how often each run was drawn.
pub fn weighted_mean(values: &[f64], counts: &[u32]) -> Option<f64> {
    let (sum, n) = values
        .iter()
        .zip(counts)
        .fold((0.0, 0u64), |(s, n), (&x, &c)| {
            (s + x * f64::from(c), n + u64::from(c))
        });
    (n > 0).then(|| sum / n as f64)
}

/// The half-width of `(lo, hi)` in percent of `center`.
pub fn half_width_pct(center: f64, (lo, hi): (f64, f64)) -> f64 {
    (hi - lo) / 2.0 / center.abs() * 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator for test data.
    fn data(seed: u64, runs: usize, len: usize) -> Vec<Vec<f64>> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..runs)
            .map(|_| {
                let mut v: Vec<f64> = (0..len)
                    .map(|_| f64::from(rng.random_range(0..500u32)))
                    .collect();
                v.sort_by(f64::total_cmp);
                v
            })
            .collect()
    }

    #[test]
    fn pooled_quantile_equals_the_quantile_of_the_built_pool() {
        for seed in 0..40 {
            let runs = data(seed, 1 + seed as usize % 6, 1 + (seed as usize * 7) % 300);
            let mut rng = ChaCha8Rng::seed_from_u64(seed + 1000);
            let counts: Vec<u32> = runs.iter().map(|_| rng.random_range(0..4)).collect();
            let mut pool = Vec::new();
            for (r, &c) in runs.iter().zip(&counts) {
                for _ in 0..c {
                    pool.extend_from_slice(r);
                }
            }
            pool.sort_by(f64::total_cmp);
            for q in [0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 1.0] {
                assert_eq!(
                    pooled_quantile(&runs, &counts, q),
                    quantile(&pool, q),
                    "seed {seed}, q {q}, counts {counts:?}"
                );
            }
        }
    }

    #[test]
    fn an_empty_pool_has_no_quantile() {
        assert_eq!(pooled_quantile(&[vec![1.0]], &[0], 0.99), None);
        assert_eq!(pooled_quantile(&[], &[], 0.99), None);
    }

    #[test]
    fn one_run_has_no_interval() {
        assert_eq!(interval(1, 1, |_| Some(1.0)), None);
        assert_eq!(ratio_interval(1, 3, |_| Some(1.0), 1, |_| Some(1.0)), None);
    }

    #[test]
    fn intervals_are_deterministic_and_depend_on_the_seed() {
        let runs = data(7, 5, 1000);
        let p99 = |c: &[u32]| pooled_quantile(&runs, c, 0.99);
        let a = interval(42, runs.len(), p99);
        assert_eq!(a, interval(42, runs.len(), p99));
        let runs_b = data(8, 5, 1000);
        let p99_b = |c: &[u32]| pooled_quantile(&runs_b, c, 0.99);
        let r = ratio_interval(3, 5, p99, 5, p99_b);
        assert_eq!(r, ratio_interval(3, 5, p99, 5, p99_b));
        assert_ne!(seed_for(1, "a"), seed_for(2, "a"));
        assert_ne!(seed_for(1, "a"), seed_for(1, "b"));
    }

    #[test]
    fn the_interval_holds_the_estimate_and_narrows_with_more_runs() {
        // Identical runs: no spread at all.
        let same = vec![(1..=100).map(f64::from).collect::<Vec<_>>(); 4];
        let p = |c: &[u32]| pooled_quantile(&same, c, 0.99);
        assert_eq!(interval(1, 4, p), Some((99.0, 99.0)));
        // Runs whose tails differ: the interval spans them, and 40 runs give
        // a narrower interval than 4 drawn from the same distribution.
        let few = data(11, 4, 200);
        let many = data(11, 40, 200);
        let width = |runs: &Vec<Vec<f64>>| {
            let (lo, hi) = interval(5, runs.len(), |c| pooled_quantile(runs, c, 0.99)).unwrap();
            let all = pooled_quantile(runs, &vec![1; runs.len()], 0.99).unwrap();
            assert!(lo <= all && all <= hi, "{lo} {all} {hi}");
            hi - lo
        };
        assert!(width(&many) < width(&few));
    }

    #[test]
    fn a_ratio_interval_lies_around_the_ratio_of_the_estimates() {
        let a: Vec<f64> = vec![10.0, 12.0, 11.0, 13.0];
        let b: Vec<f64> = vec![5.0, 5.5, 6.0, 5.0];
        let (lo, hi) =
            ratio_interval(9, 4, |c| weighted_mean(&a, c), 4, |c| weighted_mean(&b, c)).unwrap();
        let r = 11.5 / 5.375;
        assert!(lo < r && r < hi, "{lo} {r} {hi}");
        assert!(lo > 1.5 && hi < 2.7, "{lo} {hi}");
    }

    #[test]
    fn half_width_is_in_percent_of_the_center() {
        assert!((half_width_pct(100.0, (90.0, 110.0)) - 10.0).abs() < 1e-12);
    }
}
