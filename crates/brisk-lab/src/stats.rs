//! Descriptive statistics for replicated runs: median (the seed 000 static
//! patterns), mean with a Student-t 95% confidence interval (its random
//! patterns), and a [`Summary`] of both.
//!
//! **NaN handling:** every function here ignores NaN inputs, as if they were not
//! in the slice; a run that produced no value (say, a message that was never
//! delivered) can be passed as NaN without skewing the result. `n` counts only
//! the values that remain. Infinities are values and are kept. A slice that holds
//! nothing but NaN is treated as empty.

/// The values of `values` that are not NaN, in their original order.
fn non_nan(values: &[f64]) -> impl Iterator<Item = f64> + '_ {
    values.iter().copied().filter(|v| !v.is_nan())
}

/// The values that are not NaN, sorted ascending.
fn sorted(values: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = non_nan(values).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// The median: the middle value, or the mean of the two middle values for an
/// even count. `None` when there is no (non-NaN) value.
pub fn median(values: &[f64]) -> Option<f64> {
    median_of_sorted(&sorted(values))
}

fn median_of_sorted(v: &[f64]) -> Option<f64> {
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// The arithmetic mean. `None` when there is no (non-NaN) value.
pub fn mean(values: &[f64]) -> Option<f64> {
    let (sum, n) = non_nan(values).fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// The sample standard deviation (divisor n − 1). `None` for fewer than two
/// (non-NaN) values.
pub fn sample_std_dev(values: &[f64]) -> Option<f64> {
    let m = mean(values)?;
    let (squares, n) =
        non_nan(values).fold((0.0, 0usize), |(s, n), v| (s + (v - m) * (v - m), n + 1));
    (n >= 2).then(|| (squares / (n - 1) as f64).sqrt())
}

/// Two-sided 95% critical values of Student's t (the 0.975 quantile) for
/// 1 to 30 degrees of freedom, to five decimals.
const T_975: [f64; 30] = [
    12.70620, 4.30265, 3.18245, 2.77645, 2.57058, 2.44691, 2.36462, 2.30600, 2.26216, 2.22814,
    2.20099, 2.17881, 2.16037, 2.14479, 2.13145, 2.11991, 2.10982, 2.10092, 2.09302, 2.08596,
    2.07961, 2.07387, 2.06866, 2.06390, 2.05954, 2.05553, 2.05183, 2.04841, 2.04523, 2.04227,
];

/// Anchors beyond the exact table, (df, t), between which
/// [`student_t_975`] interpolates linearly in 1/df.
const T_975_ANCHORS: [(usize, f64); 10] = [
    (30, 2.04227),
    (40, 2.02108),
    (50, 2.00856),
    (60, 2.00030),
    (80, 1.99006),
    (100, 1.98397),
    (120, 1.97993),
    (200, 1.97190),
    (500, 1.96472),
    (1000, 1.96234),
];

/// The normal limit: the 0.975 quantile of the standard normal distribution.
const Z_975: f64 = 1.959_964;

/// The two-sided 95% critical value of Student's t with `df` degrees of
/// freedom (the 0.975 quantile): exact (to five decimals) for 1 to 30, then
/// linear interpolation in 1/df between tabulated anchors (40, 50, 60, 80,
/// 100, 120, 200, 500, 1000), reaching the normal limit 1.96 as df grows;
/// the interpolation is within 0.0001 of the true quantile.
///
/// `df = 0` has no finite value: it returns `f64::INFINITY`.
pub fn student_t_975(df: usize) -> f64 {
    match df {
        0 => f64::INFINITY,
        1..=30 => T_975[df - 1],
        _ => {
            let inv = 1.0 / df as f64;
            for pair in T_975_ANCHORS.windows(2) {
                let ((d0, t0), (d1, t1)) = (pair[0], pair[1]);
                if df <= d1 {
                    let (i0, i1) = (1.0 / d0 as f64, 1.0 / d1 as f64);
                    return t0 + (t1 - t0) * (i0 - inv) / (i0 - i1);
                }
            }
            let (d_last, t_last) = T_975_ANCHORS[T_975_ANCHORS.len() - 1];
            // Between the last anchor and infinity (1/df = 0).
            Z_975 + (t_last - Z_975) * inv * d_last as f64
        }
    }
}

/// The 95% confidence interval of the mean, `(low, high)` = mean ∓ t·s/√n with
/// t = [`student_t_975`]`(n − 1)` and s the sample standard deviation.
/// `None` for fewer than two (non-NaN) values.
pub fn ci95_mean(values: &[f64]) -> Option<(f64, f64)> {
    let n = non_nan(values).count();
    let m = mean(values)?;
    let s = sample_std_dev(values)?;
    let half = student_t_975(n - 1) * s / (n as f64).sqrt();
    Some((m - half, m + half))
}

/// Descriptive statistics of one set of replications. NaN inputs are ignored
/// (see the module documentation), so `n` counts the non-NaN values; every
/// statistic is `None` when `n` is 0, and `std_dev` and `ci95` also when `n`
/// is 1.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Summary {
    /// How many (non-NaN) values.
    pub n: usize,
    pub mean: Option<f64>,
    pub median: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// Sample standard deviation (divisor n − 1).
    pub std_dev: Option<f64>,
    /// 95% confidence interval of the mean, `(low, high)`: see [`ci95_mean`].
    pub ci95: Option<(f64, f64)>,
}

/// Summarizes `values`.
pub fn summarize(values: &[f64]) -> Summary {
    let v = sorted(values);
    Summary {
        n: v.len(),
        mean: mean(&v),
        median: median_of_sorted(&v),
        min: v.first().copied(),
        max: v.last().copied(),
        std_dev: sample_std_dev(&v),
        ci95: ci95_mean(&v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asserts `a` equals `b` to within `tol`.
    fn close(a: f64, b: f64, tol: f64) {
        assert!((a - b).abs() <= tol, "{a} is not within {tol} of {b}");
    }

    #[test]
    fn median_of_odd_count_is_the_middle_value() {
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[7.0]), Some(7.0));
    }

    #[test]
    fn median_of_even_count_is_the_mean_of_the_two_middle_values() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[1.0, 2.0]), Some(1.5));
    }

    #[test]
    fn empty_input_has_no_statistics() {
        assert_eq!(median(&[]), None);
        assert_eq!(mean(&[]), None);
        assert_eq!(sample_std_dev(&[]), None);
        assert_eq!(ci95_mean(&[]), None);
        assert_eq!(summarize(&[]), Summary::default());
        assert_eq!(summarize(&[]).n, 0);
    }

    #[test]
    fn mean_is_the_arithmetic_mean() {
        assert_eq!(mean(&[1.0, 2.0, 3.0, 4.0]), Some(2.5));
        assert_eq!(mean(&[-2.0, 2.0]), Some(0.0));
    }

    #[test]
    fn sample_std_dev_divides_by_n_minus_one() {
        // Squared deviations from 5: 9 1 1 1 0 0 4 16 = 32; 32 / 7.
        let v = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        close(sample_std_dev(&v).unwrap(), (32.0f64 / 7.0).sqrt(), 1e-12);
        assert_eq!(sample_std_dev(&[1.0, 3.0]), Some(2.0f64.sqrt()));
        assert_eq!(sample_std_dev(&[4.0, 4.0, 4.0]), Some(0.0));
    }

    #[test]
    fn a_single_value_has_no_spread_and_no_interval() {
        assert_eq!(sample_std_dev(&[3.0]), None);
        assert_eq!(ci95_mean(&[3.0]), None);
    }

    #[test]
    fn student_t_matches_published_critical_values() {
        for (df, t) in [
            (1, 12.706),
            (2, 4.303),
            (3, 3.182),
            (5, 2.571),
            (9, 2.262),
            (10, 2.228),
            (19, 2.093),
            (29, 2.045),
            (30, 2.042),
            (39, 2.023),
            (40, 2.021),
            (60, 2.000),
            (120, 1.980),
        ] {
            assert!(
                (student_t_975(df) - t).abs() < 5e-4,
                "df {df}: {} is not {t}",
                student_t_975(df)
            );
        }
    }

    #[test]
    fn student_t_interpolates_within_a_ten_thousandth_between_anchors() {
        // True 0.975 quantiles (to 5 decimals) off the anchors.
        for (df, t) in [
            (35, 2.03011),
            (45, 2.01410),
            (70, 1.99444),
            (90, 1.98667),
            (150, 1.97591),
            (300, 1.96790),
            (2000, 1.96115),
        ] {
            close(student_t_975(df), t, 1e-4);
        }
    }

    #[test]
    fn student_t_decreases_towards_the_normal_limit() {
        let mut prev = student_t_975(1);
        for df in 2..5000 {
            let t = student_t_975(df);
            assert!(
                t < prev,
                "t({df}) = {t} is not below t({}) = {prev}",
                df - 1
            );
            assert!(t > Z_975);
            prev = t;
        }
        close(student_t_975(1_000_000), 1.96, 1e-3);
        close(student_t_975(usize::MAX), Z_975, 1e-9);
        assert_eq!(student_t_975(0), f64::INFINITY);
    }

    #[test]
    fn ci95_is_mean_plus_minus_t_s_over_root_n() {
        // n = 2: mean 2, s = sqrt(2), half width = 12.7062 * sqrt(2) / sqrt(2).
        let (lo, hi) = ci95_mean(&[1.0, 3.0]).unwrap();
        close(lo, 2.0 - 12.70620, 1e-9);
        close(hi, 2.0 + 12.70620, 1e-9);
        // n = 10, values 1..=10: mean 5.5, s = sqrt(55/6), t(9) = 2.26216.
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        let half = 2.26216 * (55.0f64 / 6.0).sqrt() / 10.0f64.sqrt();
        let (lo, hi) = ci95_mean(&v).unwrap();
        close(lo, 5.5 - half, 1e-9);
        close(hi, 5.5 + half, 1e-9);
        close(hi - lo, 2.0 * 2.165853, 1e-5);
    }

    #[test]
    fn nan_inputs_are_ignored() {
        let v = [f64::NAN, 1.0, 3.0, f64::NAN, 2.0];
        assert_eq!(median(&v), Some(2.0));
        assert_eq!(mean(&v), Some(2.0));
        assert_eq!(sample_std_dev(&v), Some(1.0));
        assert_eq!(ci95_mean(&v), ci95_mean(&[1.0, 3.0, 2.0]));
        let s = summarize(&v);
        assert_eq!(s.n, 3);
        assert_eq!((s.min, s.max), (Some(1.0), Some(3.0)));
        assert_eq!(median(&[f64::NAN]), None);
        assert_eq!(summarize(&[f64::NAN, f64::NAN]), Summary::default());
    }

    #[test]
    fn summarize_reports_every_statistic() {
        let s = summarize(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!(s.n, 4);
        assert_eq!(s.mean, Some(2.5));
        assert_eq!(s.median, Some(2.5));
        assert_eq!(s.min, Some(1.0));
        assert_eq!(s.max, Some(4.0));
        // Squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5; 5 / 3.
        close(s.std_dev.unwrap(), (5.0f64 / 3.0).sqrt(), 1e-12);
        let half = 3.18245 * (5.0f64 / 3.0).sqrt() / 2.0;
        let (lo, hi) = s.ci95.unwrap();
        close(lo, 2.5 - half, 1e-9);
        close(hi, 2.5 + half, 1e-9);
    }

    #[test]
    fn summary_of_one_value_has_no_spread() {
        assert_eq!(
            summarize(&[7.5]),
            Summary {
                n: 1,
                mean: Some(7.5),
                median: Some(7.5),
                min: Some(7.5),
                max: Some(7.5),
                std_dev: None,
                ci95: None
            }
        );
    }
}
