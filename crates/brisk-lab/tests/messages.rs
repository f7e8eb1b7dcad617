//! What a user reads: where the report goes, `brisk knobs`, and the words of
//! the errors a bad experiment file or a bad knob gets.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use brisk_lab::experiment::Experiment;

fn brisk(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_brisk"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run the brisk binary")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("brisk-messages-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A small loss-position experiment: 2 bursts of 2 messages, 2 variants.
const TINY: &str = r#"name = "tiny"
title = "Tiny"
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
bursts = 2
warmup_bursts = 1
burst_size = 2
gap = "200ms"
message_size = 200

[[variants]]
name = "standard"
preset = "signaling-lksctp"
set = { sack_delay = "40ms" }
"#;

fn parse_err(text: &str) -> String {
    Experiment::parse(Path::new("exp.toml"), text)
        .unwrap_err()
        .to_string()
}

#[test]
fn run_and_reproduce_write_brisk_report_in_the_working_directory_and_print_its_full_path() {
    let dir = temp_dir("out");
    std::fs::create_dir_all(dir.join("experiments")).unwrap();
    std::fs::write(dir.join("experiments/tiny.toml"), TINY).unwrap();
    let expected = std::fs::canonicalize(&dir).unwrap().join("brisk-report");
    for args in [&["run", "experiments/tiny.toml"][..], &["reproduce"][..]] {
        let _ = std::fs::remove_dir_all(dir.join("brisk-report"));
        let output = brisk(args, &dir);
        assert_eq!(output.status.code(), Some(0), "brisk {args:?}: {output:?}");
        assert!(
            expected.join("index.html").is_file(),
            "brisk {args:?} wrote no ./brisk-report/index.html"
        );
        let stdout = text(&output.stdout);
        assert_eq!(
            stdout.lines().last(),
            Some(format!("report: {}", expected.join("index.html").display()).as_str()),
            "brisk {args:?}: {stdout}"
        );
    }
    // --out, relative to the working directory, is printed in full too.
    let output = brisk(
        &["run", "experiments/tiny.toml", "--out", "elsewhere"],
        &dir,
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let elsewhere = std::fs::canonicalize(dir.join("elsewhere")).unwrap();
    assert!(
        text(&output.stdout).ends_with(&format!(
            "report: {}\n",
            elsewhere.join("index.html").display()
        )),
        "{output:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_toml_syntax_error_names_the_file_and_keeps_its_line_and_caret() {
    let dir = temp_dir("syntax");
    let bad = TINY.replace("delay = \"15ms\"", "delay = \"15ms");
    std::fs::write(dir.join("broken.toml"), bad).unwrap();
    let output = brisk(&["run", "broken.toml"], &dir);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = text(&output.stderr);
    assert!(
        stderr.starts_with("broken.toml: TOML parse error at line 11, column 14\n"),
        "{stderr}"
    );
    assert!(
        stderr.contains("\n11 | delay = \"15ms\n   |              ^\n"),
        "{stderr}"
    );
    // An unknown field shows its line and caret as well.
    let e = parse_err(&TINY.replace("figure =", "colour = \"red\"\nfigure ="));
    assert!(
        e.starts_with("exp.toml: TOML parse error at line 6, column 1\n"),
        "{e}"
    );
    assert!(
        e.contains("6 | colour = \"red\"\n  | ^^^^^^\nunknown field `colour`"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unknown_knob_suggests_the_closest_and_points_to_brisk_knobs() {
    let e = parse_err(&TINY.replace("sack_delay =", "sack_dely ="));
    assert_eq!(
        e,
        "exp.toml: key `variants[0].set.sack_dely`: unknown config knob `sack_dely` \
         (did you mean `sack_delay`?); `brisk knobs` lists every knob"
    );
    let output = brisk(
        &["send", "--to", "127.0.0.1:9", "--set", "rto-min=200ms"],
        Path::new("."),
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(
        text(&output.stderr),
        "unknown config knob `rto-min` (did you mean `rto_min`?); `brisk knobs` lists every knob\n"
    );
    // A bad value names what the knob takes, and a value out of range the field.
    let e = parse_err(&TINY.replace("\"40ms\"", "\"soon\""));
    assert_eq!(
        e,
        "exp.toml: key `variants[0].set.sack_delay`: expected a duration such as 200ms or 1s, \
         found `soon`"
    );
    let e = parse_err(&TINY.replace("\"40ms\"", "\"600ms\""));
    assert_eq!(
        e,
        "exp.toml: key `variants[0].set.sack_delay`: expected sack_delay at most 500 ms \
         (RFC 9260 6.2), found `600ms`"
    );
}

#[test]
fn errors_show_values_as_the_file_writes_them_not_debug_output() {
    let e = parse_err(&TINY.replace("burst_size = 2", "burst_size = 0"));
    assert_eq!(
        e,
        "exp.toml: key `traffic.burst_size`: expected a count of at least 1, or \
         { uniform = [low, high] } with 1 <= low <= high, found `0`"
    );
    let e = parse_err(&TINY.replace("burst_size = 2", "burst_size = { uniform = [3, 1] }"));
    assert!(e.ends_with("found `{ uniform = [3, 1] }`"), "{e}");
    let bulk = TINY.replace(
        "kind = \"bursts\"\nbursts = 2\nwarmup_bursts = 1\nburst_size = 2\ngap = \"200ms\"",
        "kind = \"bulk\"\nduration = \"5s\"\nwarmup = \"10s\"",
    );
    assert_eq!(
        parse_err(&bulk),
        "exp.toml: key `traffic.warmup`: expected less than traffic.duration, \
         found `10s` (duration `5s`)"
    );
    let e = parse_err(&format!(
        "{TINY}\n[[models]]\nname = \"m\"\nequation = \"eq7\"\nloss = 1.5\n"
    ));
    assert_eq!(
        e,
        "exp.toml: key `models[0].loss`: expected a probability above 0 and at most 1, found 1.5"
    );
    let e = parse_err(&format!(
        "{TINY}\n[sweep]\ndelay = [\"5ms\"]\naxis = \"message_size\"\n"
    ));
    assert_eq!(
        e,
        "exp.toml: key `sweep.axis`: expected a dimension the sweep lists, found `message_size`"
    );
}

#[test]
fn an_impairment_error_names_the_file_the_entry_and_its_line() {
    let with =
        |impairments: &str| TINY.replace("[topology]", &format!("{impairments}\n[topology]"));
    // Line 10 of the file; the pattern's own line (line 1 of the entry) is not it.
    let e = parse_err(&with(
        "impairments = [\n  \"drop 3\",\n  \"bernoulli 1.5\",\n]",
    ));
    assert_eq!(
        e,
        "exp.toml:10: key `impairments[1]`: bernoulli: expected a probability from 0 to 1, \
         found `1.5`, in `bernoulli 1.5`"
    );
    // Two entries on one line; a multi-line entry names the line within it.
    let e = parse_err(&with("impairments = [\"drop 3\", \"lose 5\"]"));
    assert!(
        e.starts_with("exp.toml:8: key `impairments[1]`: unknown impairment `lose`"),
        "{e}"
    );
    let e = parse_err(&with(
        "impairments = [\"drop 1\", \"\"\"\ndrop 2\n# a comment\nwindow 2s\n\"\"\"]",
    ));
    assert_eq!(
        e,
        "exp.toml:11: key `impairments[1]`: window: expected 2 arguments (FROM TO, \
         e.g. `window 1.5s 2s`), found 1, in `window 2s`"
    );
    // The CLI prints the same, naming the file it was given.
    let dir = temp_dir("pattern");
    std::fs::write(
        dir.join("lossy.toml"),
        with("impairments = [\n  \"drop 3\",\n  \"bernoulli 1.5\",\n]"),
    )
    .unwrap();
    let output = brisk(&["run", "lossy.toml"], &dir);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(
        text(&output.stderr),
        "lossy.toml:10: key `impairments[1]`: bernoulli: expected a probability from 0 to 1, \
         found `1.5`, in `bernoulli 1.5`\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_access_impairment_error_names_the_flow_the_entry_and_its_line() {
    let dumbbell = TINY.replace(
        "kind = \"point-to-point\"",
        "kind = \"dumbbell\"\nflows = 2\naccess_impairments = [\n  [],\n  [\"corrupt 0.01\", \"corrupt 2\"],\n]",
    );
    let e = parse_err(&dumbbell);
    assert_eq!(
        e,
        "exp.toml:13: key `topology.access_impairments[1][1]`: corrupt: expected a probability \
         from 0 to 1, found `2`, in `corrupt 2`"
    );
}

#[test]
fn knobs_lists_every_knob_with_unit_presets_values_and_doc() {
    let output = brisk(&["knobs"], Path::new("."));
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = text(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    let words = |line: &str| {
        line.split_whitespace()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        words(lines[0]),
        [
            "KNOB",
            "UNIT",
            "rfc9260",
            "lksctp-2.6.15",
            "signaling",
            "thin-stream",
            "low-latency",
            "signaling-lksctp",
            "WHAT",
            "IT",
            "DOES"
        ]
    );
    let row = |name: &str| {
        lines
            .iter()
            .find(|l| l.split_whitespace().next() == Some(name))
            .map(|l| words(l))
            .unwrap_or_else(|| panic!("no row for {name}: {stdout}"))
    };
    assert_eq!(
        row("rto_min").join(" "),
        "rto_min duration 1s 1s 100ms 1s 200ms 100ms Lower bound of RTO (RFC 9260 6.3.1 C6)."
    );
    assert_eq!(
        row("early_retransmit")[..8].join(" "),
        "early_retransmit off|bytes|packets off off packets off packets off"
    );
    assert_eq!(
        row("thin_rto_min")[..8].join(" "),
        "thin_rto_min duration|none none none none 200ms 200ms none"
    );
    assert_eq!(
        row("fast_retransmit_threshold")[..8].join(" "),
        "fast_retransmit_threshold count 3 4 3 3 3 4"
    );
    // One row per knob, in declaration order, each value readable by `set`.
    for (i, knob) in brisk_proto::KNOBS.iter().enumerate() {
        let row = words(lines[i + 1]);
        assert_eq!(row[0], *knob);
        for value in &row[2..8] {
            let mut c = brisk_proto::Config::rfc9260();
            assert!(c.set(knob, value).is_ok(), "{knob} = {value}");
        }
    }
    assert_eq!(lines[brisk_proto::KNOBS.len() + 1], "");
    // Then each preset: what it is, and the knobs it changes from their defaults.
    let preset = |name: &str| {
        let at = lines
            .iter()
            .position(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no preset {name}: {stdout}"));
        (lines[at].trim().to_owned(), lines[at + 1].trim().to_owned())
    };
    assert!(stdout.contains("\nPresets: rfc9260 holds every knob's default;"));
    assert_eq!(preset("rfc9260").1, "every knob at its default");
    let (lksctp, changes) = preset("lksctp-2.6.15");
    assert!(lksctp.ends_with("otherwise RFC 9260."), "{lksctp}");
    assert_eq!(changes, "changes honor_i_bit, fast_retransmit_threshold");
    assert_eq!(
        preset("signaling-lksctp").1,
        "changes rto_initial, rto_min, rto_max, sack_delay, honor_i_bit, fast_retransmit_threshold"
    );
    for name in brisk_lab::experiment::LAB_PRESETS {
        assert!(preset(name).1.starts_with("changes") || *name == "rfc9260");
    }
}

#[test]
fn knobs_tcp_lists_the_tcp_models_knobs_with_its_presets_each_value_readable() {
    let output = brisk(&["knobs", "--tcp"], Path::new("."));
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = text(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    let words = |line: &str| {
        line.split_whitespace()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        words(lines[0]),
        [
            "KNOB",
            "UNIT",
            "rfc",
            "ns2-sack1",
            "linux",
            "linux-thin",
            "WHAT",
            "IT",
            "DOES"
        ]
    );
    let row = |name: &str| {
        lines
            .iter()
            .find(|l| l.split_whitespace().next() == Some(name))
            .map(|l| words(l))
            .unwrap_or_else(|| panic!("no row for {name}: {stdout}"))
    };
    assert_eq!(
        row("rto_min")[..6].join(" "),
        "rto_min duration 1s 1s 200ms 200ms"
    );
    assert_eq!(
        row("thin_dupack")[..6].join(" "),
        "thin_dupack true|false false false false true"
    );
    assert_eq!(
        row("cwnd_in_packets")[..6].join(" "),
        "cwnd_in_packets true|false false true true true"
    );
    for (i, knob) in brisk_tcp::KNOBS.iter().enumerate() {
        let row = words(lines[i + 1]);
        assert_eq!(row[0], *knob);
        for value in &row[2..6] {
            let mut c = brisk_tcp::TcpConfig::default();
            assert!(c.set(knob, value).is_ok(), "{knob} = {value}");
        }
    }
    assert_eq!(lines[brisk_tcp::KNOBS.len() + 1], "");
}

#[test]
fn the_pcap_message_names_the_run_in_words() {
    let dir = temp_dir("pcap");
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();
    let output = brisk(
        &["run", "tiny.toml", "--out", "out", "--pcap", "first.pcapng"],
        &dir,
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    // The first burst is warm-up, so the first run drops message 3.
    assert_eq!(
        text(&output.stderr),
        "pcap of the run (variant standard, 2000kbit/s, 15ms, replication 0, loss position 3) \
         written to first.pcapng (pcapng: one interface per link direction; dropped and \
         corrupted packets carry a comment)\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A reader that stops early (`brisk knobs | head -1`) gets no panic: the
/// output is cut, the exit status stays 0.
#[test]
fn a_closed_stdout_is_not_a_panic() {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_brisk"))
        .arg("knobs")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the brisk binary");
    // Close the read end before brisk writes.
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(status.code(), Some(0), "{err}");
}
