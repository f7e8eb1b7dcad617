//! The report section of the emulator's own error, beside the emulated
//! experiments it qualifies.

/// The report section of the emulator's own accuracy, against the targets:
/// p99 delay error under 0.5 ms at 1,000 packets/s, rates within 2%, drop
/// ordinals exact.
pub fn accuracy_section(acc: &brisk_emu::accuracy::Accuracy) -> crate::report::Section {
    use crate::report::{Section, Status, Table};
    let ms = |us: f64| format!("{:.3}", us / 1e3);
    let delay = Table {
        headers: [
            "packets/s",
            "sent",
            "received",
            "p50 (ms)",
            "p99 (ms)",
            "max (ms)",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect(),
        rows: acc
            .delays
            .iter()
            .map(|r| {
                vec![
                    r.packets_per_second.to_string(),
                    r.sent.to_string(),
                    r.received.to_string(),
                    ms(r.p50_us),
                    ms(r.p99_us),
                    ms(r.max_us),
                ]
            })
            .collect(),
    };
    let rate = Table {
        headers: ["configured (Mbit/s)", "achieved (Mbit/s)", "ratio"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
        rows: acc
            .rates
            .iter()
            .map(|r| {
                vec![
                    format!("{}", r.configured_bps as f64 / 1e6),
                    format!("{:.3}", r.achieved_bps / 1e6),
                    format!("{:.4}", r.ratio()),
                ]
            })
            .collect(),
    };
    let p99_at_1000 = acc
        .delays
        .iter()
        .find(|r| r.packets_per_second == 1_000)
        .map(|r| r.p99_us);
    let mut misses = Vec::new();
    if p99_at_1000.is_none_or(|p| p >= 500.0) {
        misses.push("the p99 delay error at 1,000 packets/s is not under 0.5 ms".to_owned());
    }
    if acc.rates.iter().any(|r| (r.ratio() - 1.0).abs() > 0.02) {
        misses.push("a rate is off by more than 2%".to_owned());
    }
    if !acc.ordinals.exact() {
        misses.push("the drop ordinals were not exact".to_owned());
    }
    let o = &acc.ordinals;
    let comparison = Table {
        headers: ["quantity", "target", "measured"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
        rows: vec![
            vec![
                "p99 delay error at 1,000 packets/s".into(),
                "under 0.5 ms".into(),
                p99_at_1000.map_or("-".into(), |p| format!("{} ms", ms(p))),
            ],
            vec![
                "achieved rate against configured".into(),
                "within 2%".into(),
                acc.rates
                    .iter()
                    .map(|r| format!("{:.4}", r.ratio()))
                    .collect::<Vec<_>>()
                    .join(", "),
            ],
            vec![
                "drop ordinals".into(),
                "exact".into(),
                format!(
                    "{} of {} told, {} missing: {}",
                    o.expected.len(),
                    o.sent,
                    o.missing.len(),
                    if o.exact() { "exact" } else { "not exact" }
                ),
            ],
        ],
    };
    Section {
        id: "emu-accuracy".into(),
        title: "The emulator's own error".into(),
        source:
            "brisk-emu, measured end to end in this run (brisk emulate-accuracy measures the same)"
                .into(),
        paper_claim: format!(
            "Stamped UDP probes between two namespaces: one-way delay less the configured {} ms (kernel, TUN devices and the emulator all count against it); 1,428-byte packets offered at 1.25 times the link rate; a drop pattern's ordinals against the sequence numbers that never arrived.",
            acc.delay.as_secs_f64() * 1e3
        ),
        charts: Vec::new(),
        comparison,
        tables: vec![("Delay error".into(), delay), ("Rate".into(), rate)],
        notes: Vec::new(),
        status: if misses.is_empty() {
            Status::Reproduced
        } else {
            Status::Partial(misses.join("; "))
        },
    }
}
