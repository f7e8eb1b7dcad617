//! `[[never_worse]]`: issue 28's "never worse" rule, that at every point of an
//! experiment one variant's 99th percentile message latency is at most each
//! of some others' (`low-latency` against `signaling` and `rfc9260`).
//!
//! A table expands at load into one `[[reference]]` check per variant in
//! `than`, of the quantity `never-worse:BETTER:THAN[:TOLERANCE]` with
//! `max = 1`; `tails.rs` computes it. At each sweep point it is the evidence
//! that BETTER is slower: with two or more replications the lower bound of
//! the 95% bootstrap interval of p99(BETTER) / p99(THAN) (the check fails
//! only where BETTER is significantly slower); with one run, the raw ratio
//! over `1 + tolerance` (default 0.1, the ±10% a p99 is to be known within).
//! The quantity is the largest over the points, and the report names that
//! point.

use serde::Deserialize;

use crate::experiment::{Cx, ExperimentError, Reference, Variant};

/// The tolerance on a single run's raw ratio when a file gives none.
pub const DEFAULT_TOLERANCE: f64 = 0.1;

/// A `[[never_worse]]` table as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawNeverWorse {
    better: String,
    than: Vec<String>,
    #[serde(default)]
    tolerance: Option<f64>,
    #[serde(default)]
    awaits: Option<String>,
    /// Demand the interval: at least two replications.
    #[serde(default)]
    ci: bool,
}

/// The `[[reference]]` checks of the file's `[[never_worse]]` tables.
pub(crate) fn expand(
    cx: &Cx,
    tables: &[RawNeverWorse],
    variants: &[Variant],
    replications: u32,
) -> Result<Vec<Reference>, ExperimentError> {
    let names = || crate::experiment::variant_names_expected(variants);
    let known = |n: &str| variants.iter().any(|v| v.name == n);
    let mut out = Vec::new();
    for (i, t) in tables.iter().enumerate() {
        let key = |k: &str| format!("never_worse[{i}].{k}");
        if !known(&t.better) {
            return Err(cx.invalid(&key("better"), &names(), format!("`{}`", t.better)));
        }
        if t.than.is_empty() {
            return Err(cx.invalid(&key("than"), "at least one variant", "[]".into()));
        }
        if let Some(bad) = t.than.iter().find(|n| !known(n) || **n == t.better) {
            return Err(cx.invalid(
                &key("than"),
                &format!("{} other than `better`", names()),
                format!("`{bad}`"),
            ));
        }
        let tolerance = t.tolerance.unwrap_or(DEFAULT_TOLERANCE);
        if !(tolerance.is_finite() && tolerance >= 0.0) {
            return Err(cx.invalid(
                &key("tolerance"),
                "a finite number, 0 or more",
                format!("{tolerance}"),
            ));
        }
        if t.ci && replications < 2 {
            return Err(cx.invalid(
                &key("ci"),
                "at least 2 replications (a 95% interval is bootstrapped over runs)",
                format!("replications = {replications}"),
            ));
        }
        for than in &t.than {
            out.push(Reference {
                label: format!(
                    "Never worse: {}'s 99th percentile at most {than}'s at every point \
                     (the largest, over the points, of the ratio's 95% interval's lower \
                     bound; with one run, of the ratio over {})",
                    t.better,
                    1.0 + tolerance
                ),
                value: "(goal: 1 or less)".into(),
                ours: Some(match t.tolerance {
                    Some(tol) => format!("never-worse:{}:{than}:{tol}", t.better),
                    None => format!("never-worse:{}:{than}", t.better),
                }),
                min: None,
                max: Some(1.0),
                awaits: t.awaits.clone(),
                gap: None,
                ci: t.ci,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::experiment::Experiment;

    fn twin() -> String {
        std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/webrtc-app.toml"),
        )
        .unwrap()
    }

    fn parse(text: &str) -> Result<Experiment, String> {
        Experiment::parse(Path::new("twin.toml"), text).map_err(|e| e.to_string())
    }

    const TABLE: &str = r#"better = "brisk-low-latency"
than = ["brisk-rfc9260"]"#;

    #[test]
    fn a_table_becomes_one_check_per_variant_it_is_compared_with() {
        let exp = parse(&twin()).unwrap();
        let specs: Vec<&str> = exp
            .reference
            .iter()
            .filter_map(|r| r.ours.as_deref())
            .filter(|s| s.starts_with("never-worse:"))
            .collect();
        assert_eq!(
            specs,
            [
                "never-worse:brisk-low-latency:brisk-rfc9260",
                "never-worse:brisk-low-latency:brisk-signaling"
            ]
        );
        let r = exp
            .reference
            .iter()
            .find(|r| r.ours.as_deref() == Some(specs[0]));
        assert_eq!(r.and_then(|r| r.max), Some(1.0));
    }

    #[test]
    fn an_unknown_variant_is_refused_naming_file_key_and_expectation() {
        let text = twin().replace(TABLE, "better = \"brisk-fast\"\nthan = [\"brisk-rfc9260\"]");
        let e = parse(&text).unwrap_err();
        assert!(e.contains("twin.toml"), "{e}");
        assert!(e.contains("never_worse[0].better"), "{e}");
        assert!(e.contains("names of [[variants]]"), "{e}");
        assert!(e.contains("brisk-fast"), "{e}");
        let text = twin().replace(
            TABLE,
            "better = \"brisk-low-latency\"\nthan = [\"usrsctp\"]",
        );
        assert!(parse(&text).unwrap_err().contains("never_worse[0].than"));
        let text = twin().replace(TABLE, "better = \"brisk-low-latency\"\nthan = []");
        assert!(parse(&text).unwrap_err().contains("at least one variant"));
        let text = twin().replace(
            TABLE,
            "better = \"brisk-low-latency\"\nthan = [\"brisk-low-latency\"]",
        );
        assert!(parse(&text).unwrap_err().contains("other than `better`"));
        let text = twin().replace(TABLE, &format!("{TABLE}\ntolerance = -0.1"));
        assert!(
            parse(&text)
                .unwrap_err()
                .contains("never_worse[0].tolerance")
        );
    }

    #[test]
    fn a_check_that_demands_an_interval_needs_two_replications() {
        let one = twin().replace("replications = 40", "replications = 1");
        let e = parse(&one).unwrap_err();
        assert!(e.contains("never_worse[0].ci"), "{e}");
        assert!(e.contains("at least 2 replications"), "{e}");
        // Without the table's `ci`, the goal checks' own `ci = true` refuse it.
        let e = parse(&one.replace("]\nci = true\n", "]\n")).unwrap_err();
        assert!(e.contains("reference[0].ci"), "{e}");
        // And `ci` only on a quantity that has an interval.
        let e = parse(&twin().replace(
            "ours = \"bytes-ratio:brisk-low-latency:tcp-linux\"",
            "ours = \"metric:brisk-low-latency:mtt_ms\"",
        ))
        .unwrap_err();
        assert!(e.contains("reference[4].ci"), "{e}");
        assert!(e.contains("p99-ratio, bytes-ratio, never-worse"), "{e}");
    }
}
