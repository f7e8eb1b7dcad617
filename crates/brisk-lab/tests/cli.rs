//! Runs the `brisk` binary as a user would.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn brisk(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_brisk"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run the brisk binary")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `brisk run FILE --out OUT --pcap PCAP [--pcap-run RUN]` from the workspace root.
fn run_with_pcap(file: &Path, out: &Path, pcap: &Path, run: Option<&str>) -> Output {
    let mut args = vec![
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--pcap",
        pcap.to_str().unwrap(),
    ];
    if let Some(run) = run {
        args.extend(["--pcap-run", run]);
    }
    brisk(&args, &workspace_root())
}

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("brisk-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn reproduce_writes_csv_json_plots_and_the_report() {
    let out = temp_dir("report");
    let output = brisk(
        &[
            "reproduce",
            "--only",
            "fig02",
            "--out",
            out.to_str().unwrap(),
        ],
        &workspace_root(),
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = stdout(&output);
    // Every check of the file agrees (however many it declares).
    assert!(
        text.contains("seed000-fig02")
            && text.contains(" agree")
            && text.contains(", 0 differ or not available")
            && !text.contains("FAILED"),
        "{text}"
    );
    for f in [
        "runs.csv",
        "summary.csv",
        "summary.json",
        "index.html",
        "seed000-fig02-mtt.svg",
        "seed000-fig02-mtt.png",
    ] {
        let len = std::fs::metadata(out.join(f)).map(|m| m.len()).unwrap_or(0);
        assert!(len > 0, "{f} missing or empty");
    }
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains("110 to 200"),
        "the paper's numbers are in the report"
    );
    let runs = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    assert!(runs.starts_with(
        "experiment,variant,bandwidth_kbps,delay_ms,replication,position,flow,tsn,metric,value"
    ));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_retransmission_table_shows_ours_beside_the_papers_rows() {
    let out = temp_dir("table3");
    let output = brisk(
        &[
            "reproduce",
            "--only",
            "seed001-table3",
            "--out",
            out.to_str().unwrap(),
        ],
        &workspace_root(),
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    for text in [
        "First retransmission of each lost chunk, by cause",
        "paper: mean",
        "626.7",
        "thin-sender",
        "spurious (original arrived)",
        "all lost chunks",
    ] {
        assert!(html.contains(text), "{text} missing from the report");
    }
    assert!(std::fs::metadata(out.join("seed001-table3-first-rtx.png")).is_ok());
    let runs = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    assert!(
        runs.lines()
            .next()
            .unwrap()
            .ends_with("message_size,loss,corrupt,rate,mtu")
    );
    assert!(runs.contains("lost_first_rtx_ms_t3-timeout"));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn the_same_seed_gives_byte_identical_csv() {
    let (a, b) = (temp_dir("det-a"), temp_dir("det-b"));
    for (dir, jobs) in [(&a, "1"), (&b, "2")] {
        let output = brisk(
            &[
                "reproduce",
                "--only",
                "fig06",
                "--out",
                dir.to_str().unwrap(),
                "--jobs",
                jobs,
            ],
            &workspace_root(),
        );
        assert_eq!(output.status.code(), Some(0), "{output:?}");
    }
    for f in ["runs.csv", "summary.csv", "summary.json"] {
        let x = std::fs::read(a.join(f)).unwrap();
        let y = std::fs::read(b.join(f)).unwrap();
        assert!(!x.is_empty());
        assert!(x == y, "{f} differs between two runs with the same seed");
    }
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}

#[test]
fn a_bad_experiment_file_stops_reproduce_naming_file_key_and_expectation() {
    let dir = temp_dir("bad");
    std::fs::create_dir_all(dir.join("experiments")).unwrap();
    let good =
        std::fs::read_to_string(workspace_root().join("experiments/seed000-fig02.toml")).unwrap();
    let bad = good.replace("delay = \"15ms\"", "delay = \"-15ms\"");
    assert_ne!(good, bad);
    std::fs::write(dir.join("experiments/broken.toml"), bad).unwrap();
    let output = brisk(
        &["reproduce", "--out", dir.join("out").to_str().unwrap()],
        &dir,
    );
    assert_ne!(output.status.code(), Some(0));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("broken.toml"), "{err}");
    assert!(
        err.contains("key `topology.delay`: expected a non-negative duration such as 15ms or 1.5s, found `-15ms`"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn reproduce_rejects_zero_jobs() {
    let output = brisk(&["reproduce", "--jobs", "0"], &workspace_root());
    assert_ne!(output.status.code(), Some(0), "{output:?}");
}

#[test]
fn help_lists_reproduce() {
    let output = brisk(&["--help"], &workspace_root());
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(stdout(&output).contains("reproduce"), "{}", stdout(&output));
}

#[test]
fn version_prints_the_package_version() {
    let output = brisk(&["--version"], &workspace_root());
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        stdout(&output).trim(),
        format!("brisk {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn reproduce_rejects_an_only_filter_that_matches_nothing() {
    let output = brisk(
        &["reproduce", "--only", "no-such-figure"],
        &workspace_root(),
    );
    assert_ne!(output.status.code(), Some(0));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("matches `no-such-figure`"), "{err}");
}

/// Runs tshark on a capture with SCTP over UDP port 9899 decoded, asking for
/// `fields`; one line per packet, fields separated by tabs. Panics with a
/// clear message when tshark is missing: these tests need it.
fn tshark_fields(pcap: &Path, fields: &[&str]) -> Vec<String> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r")
        .arg(pcap)
        .args([
            "-n",
            "-o",
            "sctp.checksum:CRC 32c",
            "-d",
            "udp.port==9899,sctp",
        ])
        .args(["-T", "fields"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = match cmd.output() {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "tshark is not installed, and this test needs it to read the capture \
             independently (BRISK_REQUIRE_TSHARK={}). Install it: apt-get install tshark",
            std::env::var("BRISK_REQUIRE_TSHARK").unwrap_or_default()
        ),
        Err(e) => panic!("running tshark: {e}"),
    };
    assert!(
        out.status.success(),
        "tshark failed ({}) on {}:\n{}",
        out.status,
        pcap.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn run_writes_a_pcap_of_the_first_run_that_tshark_opens() {
    let dir = temp_dir("run-pcap");
    let pcap = dir.join("fig02.pcap");
    let output = run_with_pcap(
        Path::new("experiments/seed000-fig02.toml"),
        &dir.join("out"),
        &pcap,
        None,
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(stdout(&output).contains("seed000-fig02"));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        err.contains("pcap of the run (variant no-loss, 2000kbit/s, 15ms, replication 0, no loss position) written to"),
        "{err}"
    );
    let lines = tshark_fields(
        &pcap,
        &[
            "frame.interface_id",
            "sctp.chunk_type",
            "sctp.checksum.status",
            "frame.comment",
        ],
    );
    let text = lines.join("\n");
    // Every checksum good, and nothing marked: the first run is the no-loss
    // variant.
    assert!(lines.iter().all(|l| l.ends_with("\t1\t")), "{text}");
    // The sender's direction (interface 0): INIT ACK, COOKIE ACK and 48 DATA
    // packets; the receiver's (interface 1): INIT, COOKIE ECHO and SACKs.
    let on = |iface: &str| -> Vec<&str> {
        lines
            .iter()
            .filter_map(|l| l.strip_prefix(iface)?.split('\t').next())
            .collect()
    };
    let forward = on("0\t");
    assert_eq!(forward.len(), 50, "{text}");
    assert_eq!(forward.iter().filter(|t| **t == "0").count(), 48, "{text}");
    let back = on("1\t");
    assert_eq!(back[..2], ["1", "10"], "INIT, COOKIE ECHO: {text}");
    assert!(back[2..].iter().all(|t| *t == "3"), "SACKs: {text}");
    assert!(back.len() > 10, "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A small loss-position experiment: two bursts of four 200-byte messages,
/// no warm-up, so positions 1 to 8 are all measured.
const SMALL_LOSS_POSITIONS: &str = r#"
name = "pcap-loss-positions"
title = "Loss positions, captured"
source = "cli test"
paper = "none"
method = "loss-position"
seed = 2
replications = 2
statistic = "median"
figure = "mtt-per-tsn"

[topology]
kind = "point-to-point"
bandwidth = "2000kbit"
delay = "15ms"
queue_packets = 50
overhead_bytes = 20

[traffic]
kind = "bursts"
bursts = 2
warmup_bursts = 0
burst_size = 4
gap = "200ms"
message_size = 200

[[variants]]
name = "no-loss"
preset = "signaling-lksctp"
no_loss = true

[[variants]]
name = "standard"
preset = "signaling-lksctp"
"#;

#[test]
fn pcap_run_captures_the_chosen_run_both_ways_with_the_dropped_packet_marked() {
    let dir = temp_dir("pcap-run");
    let file = dir.join("small.toml");
    std::fs::write(&file, SMALL_LOSS_POSITIONS).unwrap();
    let pcap = dir.join("run.pcapng");
    let output = run_with_pcap(&file, &dir.join("out"), &pcap, Some("position=3"));
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let err = String::from_utf8_lossy(&output.stderr);
    // The no-loss variant has no position 3: the first run that matches is
    // the standard variant's.
    assert!(
        err.contains("pcap of the run (variant standard, 2000kbit/s, 15ms, replication 0, loss position 3) written to"),
        "{err}"
    );

    // The file itself: pcapng, one interface per link direction.
    let bytes = std::fs::read(&pcap).unwrap();
    let blocks = brisk_sim::pcapng::read_blocks(&bytes).expect("a well-formed pcapng file");
    let interfaces: Vec<Option<String>> = blocks
        .iter()
        .filter_map(|b| match b {
            brisk_sim::pcapng::Block::Interface(i) => Some(i.name.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        interfaces,
        [
            Some("link 0: 10.0.1.1 -> 10.0.2.1".to_owned()),
            Some("link 1: 10.0.2.1 -> 10.0.1.1".to_owned())
        ]
    );

    // Read independently: both directions, every checksum good, exactly one
    // packet marked, the first transmission of message 3 (relative TSN 2).
    let lines = tshark_fields(
        &pcap,
        &[
            "frame.interface_name",
            "ip.src",
            "sctp.chunk_type",
            "sctp.checksum.status",
            "sctp.data_tsn",
            "frame.comment",
        ],
    );
    let text = lines.join("\n");
    let rows: Vec<Vec<&str>> = lines.iter().map(|l| l.split('\t').collect()).collect();
    assert!(rows.iter().all(|r| r.len() == 6 && r[3] == "1"), "{text}");
    let data = rows
        .iter()
        .filter(|r| r[0] == "link 0: 10.0.1.1 -> 10.0.2.1" && r[1] == "10.0.1.1" && r[2] == "0")
        .count();
    let sacks = rows
        .iter()
        .filter(|r| r[0] == "link 1: 10.0.2.1 -> 10.0.1.1" && r[1] == "10.0.2.1" && r[2] == "3")
        .count();
    // Eight messages, one sent twice (the drop and its retransmission).
    assert_eq!(data, 9, "{text}");
    assert!(sacks >= 2, "{text}");
    let marked: Vec<&Vec<&str>> = rows.iter().filter(|r| !r[5].is_empty()).collect();
    assert_eq!(marked.len(), 1, "{text}");
    let m = marked[0];
    assert_eq!(
        (m[0], m[2], m[4]),
        ("link 0: 10.0.1.1 -> 10.0.2.1", "0", "2"),
        "{text}"
    );
    assert!(
        m[5].starts_with(
            "dropped by link 0 (10.0.1.1 -> 10.0.2.1): drop-new-chunk pattern \
             (first transmission of chunk 3, TSN "
        ),
        "{text}"
    );
    // The retransmission of the same TSN goes through unmarked.
    assert_eq!(
        rows.iter().filter(|r| r[2] == "0" && r[4] == "2").count(),
        2,
        "{text}"
    );

    // The same run again gives the same bytes.
    let again = dir.join("again.pcapng");
    let output = run_with_pcap(
        &file,
        &dir.join("out2"),
        &again,
        Some("variant=standard,bandwidth=2000kbit,delay=15ms,position=3,replication=0"),
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        std::fs::read(&again).unwrap() == bytes,
        "same run, same bytes"
    );
    // Capturing changed no result.
    let runs = |d: &str| std::fs::read(dir.join(d).join("runs.csv")).unwrap();
    let plain = dir.join("plain");
    let output = brisk(
        &[
            "run",
            file.to_str().unwrap(),
            "--out",
            plain.to_str().unwrap(),
        ],
        &workspace_root(),
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        runs("out") == runs("plain"),
        "runs.csv differs with a capture"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_pcap_run_is_a_clear_error_naming_the_key_and_what_is_valid() {
    let dir = temp_dir("pcap-run-bad");
    let file = dir.join("small.toml");
    std::fs::write(&file, SMALL_LOSS_POSITIONS).unwrap();
    let pcap = dir.join("never.pcapng");
    let run = |spec: &str| {
        let output = run_with_pcap(&file, &dir.join("out"), &pcap, Some(spec));
        assert_eq!(output.status.code(), Some(1), "{spec}: {output:?}");
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let err = run("colour=red");
    assert!(
        err.contains("--pcap-run: unknown key `colour`")
            && err.contains(
                "variant, bandwidth, delay, message-size, loss, corrupt, rate, mtu, replication, position"
            ),
        "{err}"
    );
    let err = run("variant=fast");
    assert!(
        err.contains("variant=fast matches no run of pcap-loss-positions")
            && err.contains("variant no-loss, standard"),
        "{err}"
    );
    let err = run("position=9");
    assert!(
        err.contains("position=9 matches no run") && err.contains("position none, 1-8"),
        "{err}"
    );
    let err = run("bandwidth=lots");
    assert!(
        err.contains("bandwidth: expected a rate such as 2000kbit or 2Mbit, found `lots`"),
        "{err}"
    );
    let err = run("replication=2");
    assert!(
        err.contains("replication 0-1") || err.contains("replication 0, 1"),
        "{err}"
    );
    let err = run("variant=no-loss,position=3");
    assert!(
        err.contains("no run of pcap-loss-positions matches `variant=no-loss,position=3`")
            && err.contains("variant standard; position none"),
        "{err}"
    );
    let err = run("position");
    assert!(
        err.contains("expected KEY=VALUE, found `position`"),
        "{err}"
    );
    // Nothing ran and nothing was written.
    assert!(!pcap.exists() && !dir.join("out").exists());
    // --pcap-run needs --pcap.
    let output = brisk(
        &["run", file.to_str().unwrap(), "--pcap-run", "position=1"],
        &workspace_root(),
    );
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("--pcap <FILE>"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_exits_non_zero_and_names_the_checks_that_differ() {
    // Fig. 2 with Early Retransmit switched off in its Early Retransmit variant.
    let dir = temp_dir("differs");
    let text = std::fs::read_to_string(workspace_root().join("experiments/seed000-fig02.toml"))
        .unwrap()
        .replace(
            r#"set = { early_retransmit = "packets" }"#,
            r#"set = { early_retransmit = "off" }"#,
        );
    let file = dir.join("fig02-no-er.toml");
    std::fs::write(&file, text).unwrap();
    let output = brisk(
        &[
            "run",
            file.to_str().unwrap(),
            "--out",
            dir.join("out").to_str().unwrap(),
        ],
        &workspace_root(),
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    assert!(
        text.contains("FAILED: ")
            && text.contains("seed000-fig02: Early Retransmit: mean reduction [differs]"),
        "{text}"
    );
    let html = std::fs::read_to_string(dir.join("out/index.html")).unwrap();
    assert!(html.contains(r#"<td class="differs">differs (expected"#));
    assert!(!html.contains(r#"<span class="badge reproduced">"#));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `brisk run FILE --shard K/N --out DIR` for every K, from the workspace root.
fn run_shards(file: &Path, n: u32, dir: &Path) -> Vec<String> {
    (1..=n)
        .map(|k| {
            let out = dir.join(format!("shard{k}"));
            let output = brisk(
                &[
                    "run",
                    file.to_str().unwrap(),
                    "--shard",
                    &format!("{k}/{n}"),
                    "--jobs",
                    "1",
                    "--out",
                    out.to_str().unwrap(),
                ],
                &workspace_root(),
            );
            assert_eq!(output.status.code(), Some(0), "{output:?}");
            assert!(
                stdout(&output).contains(&format!("shard {k}/{n}: ")),
                "{output:?}"
            );
            out.to_str().unwrap().to_owned()
        })
        .collect()
}

#[test]
fn run_shard_and_merge_write_the_report_of_one_run_byte_for_byte() {
    let dir = temp_dir("shards");
    let file = Path::new("experiments/seed000-fig02.toml");
    let whole = dir.join("whole");
    let output = brisk(
        &[
            "run",
            file.to_str().unwrap(),
            "--out",
            whole.to_str().unwrap(),
        ],
        &workspace_root(),
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let shards = run_shards(file, 3, &dir);
    let merged = dir.join("merged");
    // From another directory: the manifest names the experiment file in full.
    let mut args = vec!["merge"];
    args.extend(shards.iter().map(String::as_str));
    args.extend(["--out", merged.to_str().unwrap()]);
    let output = brisk(&args, &dir);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(stdout(&output).contains("seed000-fig02"), "{output:?}");
    for f in ["runs.csv", "summary.csv", "summary.json"] {
        let a = std::fs::read(whole.join(f)).unwrap();
        let b = std::fs::read(merged.join(f)).unwrap();
        assert!(a == b, "merged {f} differs from the unsharded run's");
    }
    for f in [
        "index.html",
        "seed000-fig02-mtt.svg",
        "seed000-fig02-mtt.png",
    ] {
        assert!(merged.join(f).is_file(), "{f} missing");
    }
    // Without shard 2, merge names it and fails.
    let output = brisk(&["merge", &shards[0], &shards[2]], &dir);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("missing shard 2 of 3"),
        "{output:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn merge_exits_non_zero_when_a_check_differs_as_run_does() {
    let dir = temp_dir("shards-differ");
    let text = std::fs::read_to_string(workspace_root().join("experiments/seed000-fig02.toml"))
        .unwrap()
        .replace(
            r#"set = { early_retransmit = "packets" }"#,
            r#"set = { early_retransmit = "off" }"#,
        )
        .replace("replications = 3", "replications = 1");
    let file = dir.join("fig02-no-er.toml");
    std::fs::write(&file, text).unwrap();
    let shards = run_shards(&file, 2, &dir);
    let output = brisk(
        &[
            "merge",
            &shards[1],
            &shards[0],
            "--out",
            dir.join("out").to_str().unwrap(),
        ],
        &workspace_root(),
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(
        stdout(&output).contains("seed000-fig02: Early Retransmit: mean reduction [differs]"),
        "{output:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_shard_spec_is_refused_with_what_was_expected() {
    for (spec, why) in [
        ("3/2", "--shard 3/2: K must be from 1 to N = 2"),
        ("0/4", "--shard 0/4: K must be from 1 to N = 4"),
        ("1/0", "--shard 1/0: N must be at least 1"),
        ("two", "--shard two: expected K/N, e.g. 2/7"),
    ] {
        let output = brisk(
            &["run", "experiments/seed000-fig02.toml", "--shard", spec],
            &workspace_root(),
        );
        assert_eq!(output.status.code(), Some(2), "{spec}: {output:?}");
        let err = String::from_utf8_lossy(&output.stderr);
        assert!(err.contains(why), "{spec}: {err}");
    }
    // Merge needs at least one directory, and a shard directory.
    let output = brisk(&["merge"], &workspace_root());
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let output = brisk(&["merge", "experiments"], &workspace_root());
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        err.contains("experiments/manifest.json: missing: not a shard directory"),
        "{err}"
    );
}
