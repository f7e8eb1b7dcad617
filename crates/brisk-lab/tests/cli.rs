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

#[test]
fn run_writes_a_pcap_of_the_first_run_that_tshark_opens() {
    let dir = temp_dir("run-pcap");
    let pcap = dir.join("fig02.pcap");
    let output = brisk(
        &[
            "run",
            "experiments/seed000-fig02.toml",
            "--out",
            dir.join("out").to_str().unwrap(),
            "--pcap",
            pcap.to_str().unwrap(),
        ],
        &workspace_root(),
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(stdout(&output).contains("seed000-fig02"));
    let tshark = Command::new("tshark")
        .arg("-r")
        .arg(&pcap)
        .args(["-o", "sctp.checksum:CRC 32c", "-d", "udp.port==9899,sctp"])
        .args([
            "-T",
            "fields",
            "-e",
            "sctp.chunk_type",
            "-e",
            "sctp.checksum.status",
        ])
        .output()
        .expect("tshark is needed: apt-get install tshark");
    let text = String::from_utf8_lossy(&tshark.stdout);
    let lines: Vec<&str> = text.lines().collect();
    // The forward direction: the sender's INIT ACK and COOKIE ACK, and 48 DATA
    // packets (the first run is the no-loss variant); every checksum good.
    assert_eq!(lines.len(), 50, "{text}");
    assert!(lines.iter().all(|l| l.ends_with("\t1")), "{text}");
    assert_eq!(lines.iter().filter(|l| l.starts_with("0\t")).count(), 48);
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
